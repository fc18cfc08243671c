//! Crowds: many instances of one skeleton and skin, evaluated into one palette buffer laid out
//! for a GPU texture, with pose sharing and update-rate LOD.
//!
//! Each frame has two steps:
//!
//! 1. [`Crowd::frame`] (one thread) advances every instance's clip times, decides which
//!    instances update this frame (their [level of detail](CrowdInstance::lod) and a stagger
//!    by index), quantizes their times to the crowd's frame rate and gives each a palette
//!    *slot*: instances whose quantized inputs are equal share one slot, and a slot whose
//!    inputs are still those of the last frame is kept without evaluation. It returns the
//!    frame's [`CrowdStats`].
//! 2. [`Crowd::batches`] splits the new slots' evaluations into batches over disjoint parts of
//!    the palette buffer; each [`CrowdBatch::run`] samples, blends, walks the hierarchy and
//!    writes the skin rows of its slots. The batches may run on any threads, each with its own
//!    [`CrowdWork`].
//!
//! The palette buffer is a float RGBA texture's texels ([`CrowdLayout`]): slot `s` holds
//! `3 × joints` texels, three per palette joint (the rows of its affine skin matrix, the
//! translation in `w`), and a texture row holds [`CrowdLayout::per_row`] whole slots, so slot `s`
//! starts at texel `(s mod per_row × 3 × joints, s / per_row)` and at float `s × 12 × joints` of
//! the buffer. A vertex shader reads its instance's slot from an instanced attribute
//! ([`CrowdInstance::slot`]).
//!
//! Everything lives in the caller's buffers (instances, slots, the lookup table, the evaluation
//! list); nothing allocates. Clip times are `f32` seconds whatever the pose's [`Real`](crate::real::Real): they
//! are quantized to frames, so the time base of players (Q32.32) is not needed.
//!
//! ```
//! use sinew::asset::Asset;
//! use sinew::clip::SoaTrackCache;
//! use sinew::crowd::{Crowd, CrowdEval, CrowdInstance, CrowdLayout, CrowdRig, CrowdSlot, CrowdWork};
//! use sinew::math::{Mat4, SoaTransform};
//!
//! static CHARACTER: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));
//! let asset = Asset::parse(CHARACTER)?;
//! let skeleton = asset.skeleton().ok_or("no skeleton")?.to_skeleton::<f32, 6>()?;
//! let clips = [asset.clip_by_name("walk").ok_or("no walk")?];
//! let skin = asset.skin(0).ok_or("no skin")?;
//! let joints: Vec<u16> = (0..skin.num_joints()).map(|i| skin.joint(i)).collect();
//! let inverse_bind: Vec<Mat4<f32>> = (0..skin.num_joints()).map(|i| skin.inverse_bind(i)).collect();
//!
//! // Four instances of the walk; two at the same time share one pose.
//! let mut instances = [0.0, 0.25, 0.25, 0.5].map(|t| CrowdInstance::new(0, t, 1.0));
//! let (mut slots, mut table, mut evals) = ([CrowdSlot::EMPTY; 4], [0u32; 8], [CrowdEval::EMPTY; 4]);
//! let mut crowd = Crowd::new(&mut instances, &mut slots, &mut table, &mut evals, 60.0)?;
//! let stats = crowd.frame(0.0, &clips)?;
//! assert_eq!((stats.evaluated, stats.shared, stats.held), (3, 1, 0));
//! assert_eq!(crowd.instance_slot(1), crowd.instance_slot(2));
//!
//! // The palette buffer, and one thread's work buffers; then the frame's one batch.
//! let rig = CrowdRig::new(skeleton.view(), &joints, &inverse_bind)?;
//! let layout = CrowdLayout::new(joints.len(), 4, 2048)?;
//! let mut palette = vec![0.0f32; layout.floats()];
//! let (c, p, m, s) = CrowdWork::sizes(&rig);
//! let (mut caches, mut poses) = (vec![SoaTrackCache::EMPTY; c], vec![SoaTransform::IDENTITY; p]);
//! let (mut model, mut skin) = (vec![Mat4::IDENTITY; m], vec![Mat4::IDENTITY; s]);
//! let mut work = CrowdWork::new(&mut caches, &mut poses, &mut model, &mut skin);
//! for mut batch in crowd.batches(&mut palette, &layout, 1) {
//!     batch.run(&rig, &clips, crowd.fps(), &mut work)?;
//! }
//! assert!(palette[..layout.slot_floats() * 3].iter().all(|v| v.is_finite()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod eval;
#[cfg(test)]
mod tests;

use core::fmt;

use crate::clip::Clip;
use crate::job::JobError;
pub use crate::limits::MAX_CROWD_LAYERS;

pub use eval::{CrowdBatch, CrowdBatches, CrowdRig, CrowdWork};

/// Floats per palette joint in the buffer: three RGBA texels.
pub const ROW_FLOATS: usize = 12;
/// The clip index of an unused layer.
pub const NO_CLIP: u16 = u16::MAX;
/// The coarsest level of detail: an instance at level `l` updates every `2^l` frames.
pub const MAX_LOD: u8 = 3;
/// The slot of an instance before its first update.
pub const NO_SLOT: u32 = u32::MAX;
const PENDING: u32 = 1 << 31;
const EMPTY_ENTRY: u32 = u32::MAX;

/// What went wrong in a crowd's set-up or frame; nothing has changed when one is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrowdError {
    /// Fewer slots than instances: every instance may need a slot of its own.
    TooFewSlots,
    /// The lookup table's length is not a power of two at least twice the instance count.
    TableSize,
    /// The evaluation list is shorter than the instance count.
    TooFewEvals,
    /// More than 2^31 - 1 instances.
    TooManyInstances,
    /// The frame rate is not finite and above 0.
    InvalidFrameRate,
    /// The time step is NaN or infinite.
    InvalidTimeStep,
    /// An instance's layer names a clip past the list.
    NoSuchClip {
        /// The instance.
        instance: usize,
        /// The clip it names.
        clip: u16,
    },
    /// An instance's layer has a NaN or infinite time, speed or weight, or a negative weight.
    InvalidLayer {
        /// The instance.
        instance: usize,
    },
    /// An instance's level of detail is above [`MAX_LOD`].
    InvalidLod {
        /// The instance.
        instance: usize,
    },
    /// A clip is longer than the quantized frame count can hold at the crowd's rate.
    ClipTooLong {
        /// The clip.
        clip: u16,
    },
    /// A palette slot of the layout is wider than the texture may be.
    TooWide,
    /// The palette buffer is shorter than the slots it must hold.
    PaletteTooSmall,
    /// The skin's joint list and inverse binds differ in length, or a skin joint is past the
    /// skeleton.
    InvalidRig,
    /// A job of the evaluation failed.
    Job(JobError),
}

impl fmt::Display for CrowdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooFewSlots => f.write_str("the crowd has fewer palette slots than instances"),
            Self::TableSize => {
                f.write_str("the lookup table's length is not a power of two at least twice the instances")
            }
            Self::TooFewEvals => f.write_str("the evaluation list is shorter than the instances"),
            Self::TooManyInstances => f.write_str("the crowd has more than 2^31 - 1 instances"),
            Self::InvalidFrameRate => f.write_str("the crowd's frame rate is not finite and above 0"),
            Self::InvalidTimeStep => f.write_str("the time step is not finite"),
            Self::NoSuchClip { instance, clip } => {
                write!(f, "instance {instance} plays clip {clip}, which is not loaded")
            }
            Self::InvalidLayer { instance } => {
                write!(
                    f,
                    "instance {instance} has a layer whose time, speed or weight is not finite (or a weight below 0)"
                )
            }
            Self::InvalidLod { instance } => write!(f, "instance {instance} has a level of detail above {MAX_LOD}"),
            Self::ClipTooLong { clip } => write!(f, "clip {clip} has more frames than a crowd quantizes"),
            Self::TooWide => f.write_str("one palette slot is wider than the texture may be"),
            Self::PaletteTooSmall => f.write_str("the palette buffer is shorter than its slots"),
            Self::InvalidRig => {
                f.write_str("the skin's joints and inverse binds differ in length, or a joint is past the skeleton")
            }
            Self::Job(e) => write!(f, "crowd evaluation: {e}"),
        }
    }
}

impl core::error::Error for CrowdError {}

impl From<JobError> for CrowdError {
    fn from(e: JobError) -> Self {
        Self::Job(e)
    }
}

/// One clip an instance plays: blended with the instance's other layers by weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrowdLayer {
    /// Index into the clip list given to [`Crowd::frame`]; [`NO_CLIP`] leaves the layer unused.
    pub clip: u16,
    /// Seconds from the clip's start; [`Crowd::frame`] advances it and wraps it into the
    /// clip's duration (the crowd's clips loop).
    pub time: f32,
    /// Playback rate: seconds of clip per second of frame time (negative plays backwards).
    pub speed: f32,
    /// Blend weight; a layer of weight 0 is unused, and a lone layer plays at full weight.
    pub weight: f32,
}

impl CrowdLayer {
    /// The unused layer.
    pub const NONE: Self = CrowdLayer { clip: NO_CLIP, time: 0.0, speed: 0.0, weight: 0.0 };

    fn active(&self) -> bool {
        self.clip != NO_CLIP && self.weight != 0.0
    }
}

/// What identifies a pose: per layer, the clip, the quantized frame and the weight's bits.
/// Equal keys give bit-identical palettes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PoseKey {
    layers: [(u16, u32, u32); MAX_CROWD_LAYERS],
}

impl PoseKey {
    const NONE: Self = PoseKey { layers: [(NO_CLIP, 0, 0); MAX_CROWD_LAYERS] };

    /// The active layers as (clip, frame, weight), in layer order.
    pub fn layers(&self) -> impl Iterator<Item = (u16, u32, f32)> + '_ {
        self.layers.iter().filter(|l| l.0 != NO_CLIP).map(|&(c, q, w)| (c, q, f32::from_bits(w)))
    }

    fn hash(&self) -> u32 {
        let mut h: u32 = 0x811c_9dc5;
        for &(c, q, w) in &self.layers {
            for v in [u32::from(c), q, w] {
                h = (h ^ v).wrapping_mul(0x9e37_79b1);
                h ^= h >> 15;
            }
        }
        h
    }
}

/// One member of a crowd: its layers, its level of detail, and (kept by the crowd) its palette
/// slot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrowdInstance {
    /// The clips it plays; unused layers are [`CrowdLayer::NONE`].
    pub layers: [CrowdLayer; MAX_CROWD_LAYERS],
    /// Level of detail, 0 to [`MAX_LOD`]: the instance updates every `2^lod` frames and keeps
    /// its last palette between (see [`CrowdLod`] for one mapping from importance).
    pub lod: u8,
    slot: u32,
    key: PoseKey,
    want: bool,
}

impl CrowdInstance {
    /// An instance playing `clip` from `time` seconds at `speed`, at full detail.
    #[must_use]
    pub const fn new(clip: u16, time: f32, speed: f32) -> Self {
        let mut layers = [CrowdLayer::NONE; MAX_CROWD_LAYERS];
        layers[0] = CrowdLayer { clip, time, speed, weight: 1.0 };
        CrowdInstance { layers, lod: 0, slot: NO_SLOT, key: PoseKey::NONE, want: false }
    }

    /// The palette slot whose rows it draws with ([`NO_SLOT`] before its first update).
    #[must_use]
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// The pose key of its last update.
    #[must_use]
    pub fn key(&self) -> PoseKey {
        self.key
    }

    /// The pose key of the instance's current times at frame rate `fps`, with the clip list
    /// `clips`: what an update this frame would evaluate.
    ///
    /// # Errors
    ///
    /// [`CrowdError::NoSuchClip`], [`CrowdError::ClipTooLong`] (reported as instance 0).
    pub fn current_key(&self, clips: &[Clip<'_>], fps: f32) -> Result<PoseKey, CrowdError> {
        key_of(self, 0, clips, fps)
    }
}

/// Maps an importance (the caller's measure: projected height in pixels, inverse distance) to
/// a level of detail by three falling thresholds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrowdLod {
    /// At or above `thresholds[0]`: every frame; at or above `[1]`: every 2nd; at or above
    /// `[2]`: every 4th; below: every 8th.
    pub thresholds: [f32; 3],
}

impl CrowdLod {
    /// The level of detail of `importance` (NaN is the coarsest).
    #[must_use]
    pub fn level(&self, importance: f32) -> u8 {
        self.thresholds.iter().position(|&t| importance >= t).map_or(MAX_LOD, |i| i as u8)
    }
}

/// A palette slot's state, kept by the crowd between frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrowdSlot {
    key: PoseKey,
    refs: u32,
    remap: u32,
    filled: bool,
}

impl CrowdSlot {
    /// A slot before first use.
    pub const EMPTY: Self = CrowdSlot { key: PoseKey::NONE, refs: 0, remap: 0, filled: false };
}

/// One pose to evaluate this frame: its key and the slot it fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrowdEval {
    key: PoseKey,
    id: u32,
    slot: u32,
}

impl CrowdEval {
    /// An unused entry.
    pub const EMPTY: Self = CrowdEval { key: PoseKey::NONE, id: 0, slot: 0 };

    /// The pose to evaluate.
    #[must_use]
    pub fn key(&self) -> PoseKey {
        self.key
    }

    /// The slot it fills.
    #[must_use]
    pub fn slot(&self) -> u32 {
        self.slot
    }
}

/// One frame's counts: `evaluated + shared + held` is the instance count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CrowdStats {
    /// Poses evaluated this frame (each fills one slot).
    pub evaluated: usize,
    /// Instances updated this frame without an evaluation of their own: their pose was
    /// evaluated for another instance, or is still in their slot.
    pub shared: usize,
    /// Instances not updated this frame (level of detail): they keep their last palette.
    pub held: usize,
}

/// Where the slots lie in a float RGBA texture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrowdLayout {
    /// Palette joints per slot.
    pub joints: usize,
    /// Slots.
    pub slots: usize,
    /// Slots per texture row.
    pub per_row: usize,
    /// Texture width in texels: `per_row × 3 × joints`.
    pub width: usize,
    /// Texture height in texels: enough rows for every slot.
    pub height: usize,
}

impl CrowdLayout {
    /// The layout of `slots` slots of `joints` palette joints in a texture at most `max_width`
    /// texels wide.
    ///
    /// # Errors
    ///
    /// [`CrowdError::TooWide`] when one slot (`3 × joints` texels) is wider than `max_width`,
    /// or `joints` is 0.
    pub fn new(joints: usize, slots: usize, max_width: usize) -> Result<Self, CrowdError> {
        let texels = joints.checked_mul(3).ok_or(CrowdError::TooWide)?;
        if joints == 0 || texels > max_width {
            return Err(CrowdError::TooWide);
        }
        let per_row = max_width / texels;
        let height = slots.div_ceil(per_row).max(1);
        Ok(CrowdLayout { joints, slots, per_row, width: per_row * texels, height })
    }

    /// Floats of the whole texture (`width × height × 4`), the palette buffer's length.
    #[must_use]
    pub fn floats(&self) -> usize {
        self.width * self.height * 4
    }

    /// Floats of one slot (`12 × joints`).
    #[must_use]
    pub fn slot_floats(&self) -> usize {
        self.joints * ROW_FLOATS
    }

    /// The texel where slot `slot` starts: (column, row).
    #[must_use]
    pub fn texel(&self, slot: u32) -> (usize, usize) {
        let s = slot as usize;
        (s % self.per_row * 3 * self.joints, s / self.per_row)
    }
}

/// What a [`Crowd`] keeps besides its buffers ([`Crowd::state`], [`Crowd::resume`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrowdState {
    fps: f32,
    frame: u32,
    pending: usize,
    share: bool,
}

/// A crowd's per-frame planning over the caller's buffers (see the [module](self) docs).
#[derive(Debug)]
pub struct Crowd<'a> {
    instances: &'a mut [CrowdInstance],
    slots: &'a mut [CrowdSlot],
    table: &'a mut [u32],
    evals: &'a mut [CrowdEval],
    fps: f32,
    frame: u32,
    pending: usize,
    share: bool,
}

impl<'a> Crowd<'a> {
    /// A crowd of `instances` quantizing time to `fps` frames per second, with `slots` (at
    /// least one per instance), a lookup `table` (a power of two at least twice the instance
    /// count, any content) and an evaluation list `evals` (at least one per instance). The
    /// instances' slots are reset: every instance updates on the first frame.
    ///
    /// # Errors
    ///
    /// [`CrowdError::TooFewSlots`], [`CrowdError::TableSize`], [`CrowdError::TooFewEvals`],
    /// [`CrowdError::TooManyInstances`], [`CrowdError::InvalidFrameRate`].
    pub fn new(
        instances: &'a mut [CrowdInstance],
        slots: &'a mut [CrowdSlot],
        table: &'a mut [u32],
        evals: &'a mut [CrowdEval],
        fps: f32,
    ) -> Result<Self, CrowdError> {
        Self::check(instances.len(), slots.len(), table.len(), evals.len(), fps)?;
        for i in instances.iter_mut() {
            i.slot = NO_SLOT;
        }
        slots.fill(CrowdSlot::EMPTY);
        Ok(Crowd { instances, slots, table, evals, fps, frame: 0, pending: 0, share: true })
    }

    /// What the crowd keeps besides its buffers: for an owner that keeps the buffers and
    /// builds the borrowing `Crowd` again each frame ([`resume`](Self::resume)).
    #[must_use]
    pub fn state(&self) -> CrowdState {
        CrowdState { fps: self.fps, frame: self.frame, pending: self.pending, share: self.share }
    }

    /// The crowd over the same buffers as the one `state` came from, as it was: slots and
    /// evaluations are kept (a slot index past `slots` is reset, so that instance updates on
    /// the next frame).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn resume(
        instances: &'a mut [CrowdInstance],
        slots: &'a mut [CrowdSlot],
        table: &'a mut [u32],
        evals: &'a mut [CrowdEval],
        state: CrowdState,
    ) -> Result<Self, CrowdError> {
        Self::check(instances.len(), slots.len(), table.len(), evals.len(), state.fps)?;
        for x in instances.iter_mut().filter(|x| x.slot as usize >= slots.len()) {
            x.slot = NO_SLOT;
        }
        let pending = state.pending.min(evals.len());
        Ok(Crowd { instances, slots, table, evals, fps: state.fps, frame: state.frame, pending, share: state.share })
    }

    fn check(n: usize, slots: usize, table: usize, evals: usize, fps: f32) -> Result<(), CrowdError> {
        if n >= PENDING as usize {
            return Err(CrowdError::TooManyInstances);
        }
        if slots < n {
            return Err(CrowdError::TooFewSlots);
        }
        if !table.is_power_of_two() || table < 2 * n {
            return Err(CrowdError::TableSize);
        }
        if evals < n {
            return Err(CrowdError::TooFewEvals);
        }
        if !(fps.is_finite() && fps > 0.0) {
            return Err(CrowdError::InvalidFrameRate);
        }
        Ok(())
    }

    /// The instances (their layers and levels of detail may be changed between frames
    /// through [`instances_mut`](Self::instances_mut)).
    #[must_use]
    pub fn instances(&self) -> &[CrowdInstance] {
        self.instances
    }

    /// The instances, to change their layers and levels of detail; [`frame`](Self::frame)
    /// validates them.
    pub fn instances_mut(&mut self) -> &mut [CrowdInstance] {
        self.instances
    }

    /// Instance `i`'s slot ([`NO_SLOT`] before its first update or past the list).
    #[must_use]
    pub fn instance_slot(&self, i: usize) -> u32 {
        self.instances.get(i).map_or(NO_SLOT, |x| x.slot)
    }

    /// Whether instances with equal pose keys share one evaluation (on by default). Off, every
    /// updated instance is evaluated into a slot of its own, as a crowd of independent
    /// characters would be: the baseline that sharing is measured against.
    pub fn set_sharing(&mut self, on: bool) {
        self.share = on;
    }

    /// Whether pose sharing is on.
    #[must_use]
    pub fn sharing(&self) -> bool {
        self.share
    }

    /// The frame rate times are quantized to.
    #[must_use]
    pub fn fps(&self) -> f32 {
        self.fps
    }

    /// Frames planned so far.
    #[must_use]
    pub fn frames(&self) -> u32 {
        self.frame
    }

    /// The evaluations the last [`frame`](Self::frame) planned, by key, slots ascending.
    #[must_use]
    pub fn evals(&self) -> &[CrowdEval] {
        self.evals.get(..self.pending).unwrap_or(&[])
    }

    /// The slots the last frame's evaluations write, as a range (`None` when none): the part
    /// of the texture to upload.
    #[must_use]
    pub fn written_slots(&self) -> Option<core::ops::Range<u32>> {
        let e = self.evals();
        Some(e.first()?.slot..e.last()?.slot + 1)
    }

    /// Advances every instance by `dt` seconds, then plans the frame: which instances update,
    /// which slot each draws with, and which poses to evaluate ([`batches`](Self::batches)).
    ///
    /// # Errors
    ///
    /// [`CrowdError::InvalidTimeStep`], and for an instance, [`CrowdError::NoSuchClip`],
    /// [`CrowdError::InvalidLayer`], [`CrowdError::InvalidLod`] or
    /// [`CrowdError::ClipTooLong`]: nothing changes.
    pub fn frame(&mut self, dt: f32, clips: &[Clip<'_>]) -> Result<CrowdStats, CrowdError> {
        if !dt.is_finite() {
            return Err(CrowdError::InvalidTimeStep);
        }
        for (i, x) in self.instances.iter().enumerate() {
            if x.lod > MAX_LOD {
                return Err(CrowdError::InvalidLod { instance: i });
            }
            for l in &x.layers {
                if l.clip == NO_CLIP {
                    continue;
                }
                let clip =
                    clips.get(usize::from(l.clip)).ok_or(CrowdError::NoSuchClip { instance: i, clip: l.clip })?;
                let ok = l.time.is_finite() && l.speed.is_finite() && l.weight.is_finite() && l.weight >= 0.0;
                if !ok || !(dt * l.speed).is_finite() {
                    return Err(CrowdError::InvalidLayer { instance: i });
                }
                if too_many_frames(duration(clip) * self.fps) {
                    return Err(CrowdError::ClipTooLong { clip: l.clip });
                }
            }
        }
        for x in self.instances.iter_mut() {
            for l in x.layers.iter_mut().filter(|l| l.clip != NO_CLIP) {
                if let Some(clip) = clips.get(usize::from(l.clip)) {
                    l.time = wrap(l.time + dt * l.speed, duration(clip));
                }
            }
        }
        self.frame = self.frame.wrapping_add(1);
        Ok(self.plan(clips))
    }

    fn plan(&mut self, clips: &[Clip<'_>]) -> CrowdStats {
        let (fps, frame) = (self.fps, self.frame);
        for s in self.slots.iter_mut() {
            s.refs = 0;
        }
        self.table.fill(EMPTY_ENTRY);
        let mut held = 0usize;
        // Pass 1: held instances lock their slots; updated instances whose slot still holds
        // their key keep it, and offer it to the others through the table.
        for (i, x) in self.instances.iter_mut().enumerate() {
            x.want = false;
            let period = 1u32 << x.lod;
            let due = x.slot == NO_SLOT || (frame.wrapping_add(i as u32)) & (period - 1) == 0;
            if !due {
                held += 1;
                if let Some(s) = self.slots.get_mut(x.slot as usize) {
                    s.refs += 1;
                }
                continue;
            }
            // The clips were checked by `frame`.
            let key = key_of(x, i, clips, fps).unwrap_or(PoseKey::NONE);
            let keep = self.share && self.slots.get(x.slot as usize).is_some_and(|s| s.filled && s.key == key);
            if keep {
                if let Some(s) = self.slots.get_mut(x.slot as usize) {
                    s.refs += 1;
                }
                if let Err(at) = lookup(self.table, self.slots, self.evals, &key) {
                    if let Some(e) = self.table.get_mut(at) {
                        *e = x.slot;
                    }
                }
            } else {
                x.key = key;
                x.want = true;
            }
        }
        // Pass 2: the other updated instances find their key among kept slots and new poses,
        // or add a new pose.
        let mut pending = 0usize;
        for x in self.instances.iter_mut().filter(|x| x.want) {
            let key = x.key;
            // Without sharing nothing is looked up and nothing enters the table.
            let found = if self.share { lookup(self.table, self.slots, self.evals, &key) } else { Err(usize::MAX) };
            match found {
                Ok(v) => {
                    if let Some(s) = self.slots.get_mut(v as usize) {
                        s.refs += 1;
                    }
                    x.slot = v;
                }
                Err(at) => {
                    let id = pending as u32;
                    if let Some(e) = self.evals.get_mut(pending) {
                        *e = CrowdEval { key, id, slot: 0 };
                    }
                    if let Some(e) = self.table.get_mut(at) {
                        *e = id | PENDING;
                    }
                    pending += 1;
                    x.slot = id | PENDING;
                }
            }
        }
        // The new poses by key (so sampling moves forward through each clip), given the free
        // slots in ascending order, so that each batch's slots are one range of the buffer.
        // A slot's `remap` is scratch: the slot of pose `id` is kept in `slots[id].remap`.
        let evals = self.evals.get_mut(..pending).unwrap_or(&mut []);
        evals.sort_unstable_by_key(|e| e.key);
        let mut free = 0usize;
        for e in evals.iter_mut() {
            while self.slots.get(free).is_some_and(|s| s.refs != 0) {
                free += 1;
            }
            e.slot = free as u32;
            if let Some(s) = self.slots.get_mut(free) {
                s.key = e.key;
                s.refs = 1;
                s.filled = true;
            }
            if let Some(s) = self.slots.get_mut(e.id as usize) {
                s.remap = free as u32;
            }
            free += 1;
        }
        for x in self.instances.iter_mut() {
            if x.slot != NO_SLOT && x.slot & PENDING != 0 {
                x.slot = self.slots.get((x.slot & !PENDING) as usize).map_or(NO_SLOT, |s| s.remap);
            }
            x.key = self.slots.get(x.slot as usize).map_or(PoseKey::NONE, |s| s.key);
        }
        self.pending = pending;
        CrowdStats { evaluated: pending, shared: self.instances.len() - held - pending, held }
    }

    /// The last frame's evaluations in `parts` batches (fewer when there are fewer poses),
    /// each over its own part of `palette`, the buffer of `layout`. The iterator ends early
    /// when the buffer is too short for the written slots.
    pub fn batches<'p>(&'p self, palette: &'p mut [f32], layout: &CrowdLayout, parts: usize) -> CrowdBatches<'p> {
        CrowdBatches::new(self.evals(), palette, layout.slot_floats(), parts)
    }
}

/// Where `key` is in `table` (open addressing, linear probing): `Ok` with the entry of the kept
/// slot or new pose (`PENDING | id`) that holds it, or `Err` with the empty entry it would take.
/// The table has twice the instances' entries, so it is never full.
fn lookup(table: &[u32], slots: &[CrowdSlot], evals: &[CrowdEval], key: &PoseKey) -> Result<u32, usize> {
    let mask = table.len().wrapping_sub(1);
    let mut at = key.hash() as usize & mask;
    for _ in 0..table.len() {
        let v = table.get(at).copied().unwrap_or(EMPTY_ENTRY);
        if v == EMPTY_ENTRY {
            return Err(at);
        }
        let same = if v & PENDING != 0 {
            evals.get((v & !PENDING) as usize).is_some_and(|e| e.key == *key)
        } else {
            slots.get(v as usize).is_some_and(|s| s.key == *key)
        };
        if same {
            return Ok(v);
        }
        at = (at + 1) & mask;
    }
    Err(usize::MAX)
}

/// A clip's duration in seconds (0 for an empty or reversed one).
fn duration(clip: &Clip<'_>) -> f32 {
    (clip.end() - clip.start()).max(0.0)
}

/// Whether a clip of `frames` frames (NaN included) is past what a key's `u32` holds.
fn too_many_frames(frames: f32) -> bool {
    frames.is_nan() || frames >= 4.0e9
}

/// `t` wrapped into `[0, d)` (0 when `d` is 0).
fn wrap(t: f32, d: f32) -> f32 {
    if d.is_nan() || d <= 0.0 {
        return 0.0;
    }
    if (0.0..d).contains(&t) {
        return t;
    }
    let turns = t / d;
    // Truncation toward zero, then one step down for negative times.
    let mut w = t - d * (turns as i64 as f32);
    if w < 0.0 {
        w += d;
    }
    if (0.0..d).contains(&w) {
        w
    } else {
        0.0
    }
}

/// Instance `x`'s key: per active layer the clip, the frame nearest its time (at most the
/// clip's last whole frame) and the weight (1 for a lone layer).
fn key_of(x: &CrowdInstance, i: usize, clips: &[Clip<'_>], fps: f32) -> Result<PoseKey, CrowdError> {
    let mut key = PoseKey::NONE;
    let mut n = 0;
    for l in x.layers.iter().filter(|l| l.active()) {
        let clip = clips.get(usize::from(l.clip)).ok_or(CrowdError::NoSuchClip { instance: i, clip: l.clip })?;
        let last = duration(clip) * fps;
        if too_many_frames(last) {
            return Err(CrowdError::ClipTooLong { clip: l.clip });
        }
        let q = ((l.time * fps + 0.5).max(0.0) as u32).min(last as u32);
        if let Some(k) = key.layers.get_mut(n) {
            *k = (l.clip, q, (l.weight + 0.0).to_bits());
        }
        n += 1;
    }
    if n == 1 {
        key.layers[0].2 = 1.0f32.to_bits();
    }
    Ok(key)
}
