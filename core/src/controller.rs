//! The animation controller a game drives each frame: clip slots with their players, fades and
//! crossfades (optionally phase-synced), masked override layers, additive layers and root
//! motion, all in fixed memory.
//!
//! # Structure
//!
//! A [`Controller`] has `SLOTS` clip slots and `LAYERS` layers. A slot holds a clip (an index
//! into the clips passed to [`Controller::update`]), its [`Player`], its weight, an optional fade
//! and its own sampling cursor (`TRACKS` entries: the most tracks a clip may have, at most
//! 3 × joints). A layer has a [`LayerMode`], a weight in `[0, 1]` and an optional mask
//! ([`crate::mask`]).
//!
//! Each update: fades progress, active slots advance (reporting markers), are sampled into their
//! own pose of the caller's [`ControllerScratch`], root motion is extracted from them, and everything is blended into the caller's
//! output pose with one [`BlendingJob`]:
//!
//! - **Override layers**, from the last to the first, cover the ones below: a layer of weight `α`,
//!   mask `m(j)` (1 without mask) and active slots whose weights sum to `Σw` takes
//!   `c(j) = α · min(1, Σw) · m(j)` of what the layers above left at joint `j` (`r(j)`, starting
//!   at 1), and leaves `r(j) · (1 − c(j))` to the layers below. Its slots' blend weights at `j`
//!   are `wᵢ · α · m(j) · r(j)` (divided by `Σw` when `Σw > 1`), so they sum to `c(j) · r(j)`:
//!   linear in every weight. An upper-body layer at full weight replaces the base layer's upper
//!   body; an empty or zero-weight layer leaves the ones below untouched.
//! - **Additive layers** apply their slots' poses as deltas on top, with weight
//!   `layer weight × slot weight` and the layer mask as per-joint weights.
//! - The blend threshold defaults to 1: where weights sum to less than 1 (a first clip fading in)
//!   the rest pose fills in smoothly.
//!
//! # Fades
//!
//! [`Controller::fade_to`] moves a slot's weight from its current value to a target over a
//! duration of real time (`dt`, not scaled by the player's speed), linearly or by smoothstep
//! `3s² − 2s³` of the progress `s`. [`Controller::crossfade`] fades one slot in to 1 and the
//! other slots of its layer out to 0 over the same duration and curve, so weights keep summing
//! to one. With `sync`, the incoming slot starts at the normalized phase of the layer's dominant
//! slot, and while two or more synced slots play in a layer they advance together by
//! `ρ · dt` cycles, `ρ = Σ wᵢ · speedᵢ / cycleᵢ / Σ wᵢ` (the weighted mean of their normalized
//! rates): a walk and a run of different lengths keep their feet in phase through the blend.
//! Once one synced slot is left, it plays on at its own rate.
//!
//! # Root motion
//!
//! With [`Controller::set_root_motion`], each active slot of an override layer extracts its root
//! joint's motion ([`crate::root_motion`]) before blending (its pose is made in place), and the
//! update's displacement is the mean of the slots' deltas weighted by their blend weight at the
//! root joint. A seek or a clip change restarts a slot's measure (no jump).
//!
//! # Memory
//!
//! The controller holds what persists between updates: per slot a cursor of `TRACKS` `u16`, a
//! player and root-motion state; per layer a mask of `SOA` `[R; 4]`. What an update only works
//! in — one sampled pose per slot and each layer's per-joint blend weights — is a
//! [`ControllerScratch`] passed to [`Controller::update`]; characters updated in turn share one
//! (one per thread). The caller supplies the clips, the skeleton and the output pose (and the
//! model matrices of the jobs that follow). Measured on x86_64 (`memory_per_character` test,
//! which prints them):
//!
//! | configuration                                                   | controller | scratch  |
//! |-----------------------------------------------------------------|------------|----------|
//! | `Controller<f32, 6, 4, 3, 72>` (24 joints, 4 slots, 3 layers)   | 1 760 B    | 4 128 B  |
//! | `Controller<f32, 17, 4, 3, 201>` (67 joints, 4 slots, 3 layers) | 3 312 B    | 11 696 B |
//!
//! (`Q16` is the same size.) The scratch's poses are most of it: `SLOTS × SOA × 160` bytes for
//! `f32`.

use core::fmt;

use crate::clip::{Clip, RotationInterpolation};
use crate::job::blending::{make_additive, BlendingJob, Layer};
use crate::job::{JobError, SamplingJob};
use crate::limits::MAX_SOA_JOINTS;
use crate::mask::{Channel, MaskJob};
use crate::math::SoaTransform;
use crate::player::{Event, Marker, Player, PlayerError, Step};
use crate::real::Real;
use crate::root_motion::{sample_joint, Motion, MotionBlend, RootMotionSettings, RootMotionTracker};
use crate::skeleton::SkeletonView;

/// A clip the controller can play, with its markers.
#[derive(Debug, Clone, Copy)]
pub struct ClipEntry<'a, R> {
    /// The clip.
    pub clip: Clip<'a>,
    /// Its markers, sorted by time (may be empty).
    pub markers: &'a [Marker<R>],
}

impl<'a, R> ClipEntry<'a, R> {
    /// A clip without markers.
    #[must_use]
    pub fn new(clip: Clip<'a>) -> Self {
        ClipEntry { clip, markers: &[] }
    }
}

/// How a fade's progress maps to weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum FadeCurve {
    /// Proportional to the progress `s`.
    #[default]
    Linear,
    /// `3s² − 2s³`: starts and ends with zero slope.
    SmoothStep,
}

/// Where an additive layer's deltas come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum AdditiveReference {
    /// The clips already hold deltas (baked with [`make_additive`]).
    Baked,
    /// The sampled pose is made a delta from the skeleton's rest pose at each update.
    #[default]
    RestPose,
}

/// How a layer combines with the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LayerMode {
    /// Covers the layers below where its mask and weight say (see the module documentation).
    Override,
    /// Adds its slots' deltas on top of the blend.
    Additive(AdditiveReference),
}

/// Why a controller call was refused. The controller is unchanged (and for
/// [`Controller::update`], the output untouched and no event reported).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ControllerError {
    /// A slot index is not below `SLOTS`.
    SlotOutOfRange,
    /// A layer index is not below `LAYERS`.
    LayerOutOfRange,
    /// The slot has no clip assigned.
    EmptySlot,
    /// A slot's clip index is not below the number of clips given to the update.
    ClipOutOfRange {
        /// The slot.
        slot: usize,
    },
    /// A clip has more tracks than the controller's `TRACKS` cursor capacity.
    TooManyTracks {
        /// Tracks of the clip.
        tracks: usize,
        /// `TRACKS`.
        capacity: usize,
    },
    /// The skeleton has more SoA elements than the controller's `SOA` capacity.
    SkeletonTooLarge,
    /// A layer mask was built for a skeleton with another joint count.
    MaskMismatch {
        /// The layer.
        layer: usize,
    },
    /// A weight or a duration is NaN or infinite, or a duration is negative.
    InvalidParameter,
    /// A job refused its inputs (a short output pose, a clip animating joints past the skeleton,
    /// a root-motion joint past the skeleton, a bad mask channel).
    Job(JobError),
    /// A player refused the step (non-finite `dt`, or too many loops in one step).
    Player(PlayerError),
}

impl fmt::Display for ControllerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::SlotOutOfRange => f.write_str("slot index out of range"),
            Self::LayerOutOfRange => f.write_str("layer index out of range"),
            Self::EmptySlot => f.write_str("the slot has no clip"),
            Self::ClipOutOfRange { slot } => write!(f, "slot {slot} refers to a clip that was not given"),
            Self::TooManyTracks { tracks, capacity } => {
                write!(f, "a clip has {tracks} tracks, more than the cursor capacity of {capacity}")
            }
            Self::SkeletonTooLarge => f.write_str("the skeleton has more joints than the controller's capacity"),
            Self::MaskMismatch { layer } => {
                write!(f, "the mask of layer {layer} was built for a skeleton with another joint count")
            }
            Self::InvalidParameter => f.write_str("a weight or duration is NaN, infinite or negative"),
            Self::Job(e) => write!(f, "job error: {e}"),
            Self::Player(e) => write!(f, "player error: {e}"),
        }
    }
}

impl core::error::Error for ControllerError {}

impl From<JobError> for ControllerError {
    fn from(e: JobError) -> Self {
        Self::Job(e)
    }
}

impl From<PlayerError> for ControllerError {
    fn from(e: PlayerError) -> Self {
        Self::Player(e)
    }
}

/// A marker crossing, with where it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ControllerEvent<R> {
    /// The slot that played it.
    pub slot: usize,
    /// The slot's clip index.
    pub clip: usize,
    /// The slot's weight after this update's fades, in `[0, 1]` (to ignore faint clips'
    /// footsteps; 0 for a slot that finished fading out during the update).
    pub weight: R,
    /// The crossing.
    pub event: Event<R>,
}

#[derive(Debug, Clone, Copy)]
struct Fade<R> {
    from: R,
    to: R,
    duration: R,
    elapsed: R,
    curve: FadeCurve,
}

impl<R: Real> Fade<R> {
    fn weight(&self) -> R {
        let s = if self.duration > R::ZERO { (self.elapsed / self.duration).clamp(R::ZERO, R::ONE) } else { R::ONE };
        let s = match self.curve {
            FadeCurve::Linear => s,
            FadeCurve::SmoothStep => s * s * (R::from_i32(3) - R::TWO * s),
        };
        self.from + (self.to - self.from) * s
    }
}

#[derive(Debug, Clone)]
struct Slot<R, const TRACKS: usize> {
    clip: Option<usize>,
    layer: usize,
    player: Player<R>,
    weight: R,
    fade: Option<Fade<R>>,
    synced: bool,
    cursor: [u16; TRACKS],
    root: Option<RootMotionTracker<R>>,
    /// Player phase and loops after the last update, to notice seeks.
    mark: (u64, i64),
}

impl<R: Real, const TRACKS: usize> Slot<R, TRACKS> {
    fn empty() -> Self {
        Slot {
            clip: None,
            layer: 0,
            player: Player::from_range(0.0, 0.0),
            weight: R::ZERO,
            fade: None,
            synced: false,
            cursor: [0; TRACKS],
            root: None,
            mark: (0, 0),
        }
    }
    /// Sampled, advanced and blended this update.
    fn active(&self) -> bool {
        self.clip.is_some() && (self.weight > R::ZERO || self.fade.is_some_and(|f| f.to > R::ZERO))
    }
}

#[derive(Debug, Clone)]
struct LayerState<R, const SOA: usize> {
    mode: LayerMode,
    weight: R,
    /// Joint count the mask was built for, `None` without mask.
    mask_joints: Option<usize>,
    mask: [[R; 4]; SOA],
}

/// The working memory of [`Controller::update`]: one sampled pose per slot and the per-joint
/// blend weights of each layer.
///
/// Nothing in it survives from one update to the next, so characters updated one after another
/// share one scratch (one per thread): per character only the [`Controller`], its output pose
/// and its matrices stay in memory.
#[derive(Debug, Clone)]
pub struct ControllerScratch<R: Real, const SOA: usize, const SLOTS: usize, const LAYERS: usize> {
    poses: [[SoaTransform<R>; SOA]; SLOTS],
    shares: [[[R; 4]; SOA]; LAYERS],
}

impl<R: Real, const SOA: usize, const SLOTS: usize, const LAYERS: usize> Default
    for ControllerScratch<R, SOA, SLOTS, LAYERS>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<R: Real, const SOA: usize, const SLOTS: usize, const LAYERS: usize> ControllerScratch<R, SOA, SLOTS, LAYERS> {
    /// A scratch for controllers of the same `SOA`, `SLOTS` and `LAYERS`.
    #[must_use]
    pub const fn new() -> Self {
        ControllerScratch { poses: [[SoaTransform::IDENTITY; SOA]; SLOTS], shares: [[[R::ZERO; 4]; SOA]; LAYERS] }
    }

    /// Slot `slot`'s sampled pose in the last update that used this scratch (in place when root
    /// motion is on; a delta in an additive layer with [`AdditiveReference::RestPose`]). A slot
    /// that update did not sample keeps whatever was there before, possibly another
    /// character's pose when the scratch is shared.
    #[must_use]
    pub fn slot_pose(&self, slot: usize) -> Option<&[SoaTransform<R>]> {
        self.poses.get(slot).map(|p| &p[..])
    }
}

/// A character's animation state in fixed memory. See the [module documentation](self).
///
/// - `SOA`: pose capacity in SoA elements (`soa_count(joints)`), at most
///   [`MAX_SOA_JOINTS`].
/// - `SLOTS`: clip slots.
/// - `LAYERS`: layers (at least 1; layer 0 starts as a full-weight override layer, the base).
/// - `TRACKS`: the most tracks a slot's clip may have (3 × joints covers any clip).
#[derive(Debug, Clone)]
pub struct Controller<R: Real, const SOA: usize, const SLOTS: usize, const LAYERS: usize, const TRACKS: usize> {
    slots: [Slot<R, TRACKS>; SLOTS],
    layers: [LayerState<R, SOA>; LAYERS],
    threshold: R,
    rotation: RotationInterpolation,
    root_settings: Option<RootMotionSettings>,
    root_delta: Motion<R>,
    root_total: Motion<R>,
}

impl<R: Real, const SOA: usize, const SLOTS: usize, const LAYERS: usize, const TRACKS: usize> Default
    for Controller<R, SOA, SLOTS, LAYERS, TRACKS>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<R: Real, const SOA: usize, const SLOTS: usize, const LAYERS: usize, const TRACKS: usize>
    Controller<R, SOA, SLOTS, LAYERS, TRACKS>
{
    /// An empty controller: every slot empty, every layer a full-weight override layer without
    /// mask, threshold 1, corrected-nlerp rotations, no root motion.
    #[must_use]
    pub fn new() -> Self {
        const {
            assert!(SOA <= MAX_SOA_JOINTS, "SOA exceeds limits::MAX_SOA_JOINTS");
            assert!(LAYERS >= 1, "a controller needs at least one layer");
        };
        Controller {
            slots: core::array::from_fn(|_| Slot::empty()),
            layers: core::array::from_fn(|_| LayerState {
                mode: LayerMode::Override,
                weight: R::ONE,
                mask_joints: None,
                mask: [[R::ONE; 4]; SOA],
            }),
            threshold: R::ONE,
            rotation: RotationInterpolation::default(),
            root_settings: None,
            root_delta: Motion::IDENTITY,
            root_total: Motion::IDENTITY,
        }
    }

    /// Sets the blend threshold (see [`BlendingJob::threshold`]; default 1).
    ///
    /// # Errors
    ///
    /// [`ControllerError::InvalidParameter`] unless finite and at least `R::EPSILON`.
    pub fn set_threshold(&mut self, threshold: R) -> Result<(), ControllerError> {
        if !(threshold.is_finite() && threshold >= R::EPSILON) {
            return Err(ControllerError::InvalidParameter);
        }
        self.threshold = threshold;
        Ok(())
    }

    /// How LINEAR rotation tracks are sampled.
    pub fn set_rotation_interpolation(&mut self, rotation: RotationInterpolation) {
        self.rotation = rotation;
    }

    /// Configures layer `layer`: its mode and its weight (clamped into `[0, 1]`).
    ///
    /// # Errors
    ///
    /// [`ControllerError::LayerOutOfRange`], or [`ControllerError::InvalidParameter`] for a
    /// non-finite weight.
    pub fn set_layer(&mut self, layer: usize, mode: LayerMode, weight: R) -> Result<(), ControllerError> {
        let l = self.layers.get_mut(layer).ok_or(ControllerError::LayerOutOfRange)?;
        if !weight.is_finite() {
            return Err(ControllerError::InvalidParameter);
        }
        l.mode = mode;
        l.weight = weight.clamp(R::ZERO, R::ONE);
        Ok(())
    }

    /// Sets layer `layer`'s weight (clamped into `[0, 1]`).
    ///
    /// # Errors
    ///
    /// As [`set_layer`](Self::set_layer).
    pub fn set_layer_weight(&mut self, layer: usize, weight: R) -> Result<(), ControllerError> {
        let mode = self.layers.get(layer).ok_or(ControllerError::LayerOutOfRange)?.mode;
        self.set_layer(layer, mode, weight)
    }

    /// Restricts layer `layer` to the joints of `channels` (see [`MaskJob`]).
    ///
    /// # Errors
    ///
    /// [`ControllerError::LayerOutOfRange`], [`ControllerError::SkeletonTooLarge`], or
    /// [`ControllerError::Job`] for a channel out of range.
    pub fn set_layer_mask(
        &mut self,
        layer: usize,
        skeleton: SkeletonView<'_, R>,
        channels: &[Channel],
        invert: bool,
    ) -> Result<(), ControllerError> {
        let l = self.layers.get_mut(layer).ok_or(ControllerError::LayerOutOfRange)?;
        if skeleton.num_soa_joints() > SOA {
            return Err(ControllerError::SkeletonTooLarge);
        }
        MaskJob { skeleton, channels, invert, output: &mut l.mask }.run()?;
        l.mask_joints = Some(skeleton.num_joints());
        Ok(())
    }

    /// Removes layer `layer`'s mask: it covers every joint.
    ///
    /// # Errors
    ///
    /// [`ControllerError::LayerOutOfRange`].
    pub fn clear_layer_mask(&mut self, layer: usize) -> Result<(), ControllerError> {
        let l = self.layers.get_mut(layer).ok_or(ControllerError::LayerOutOfRange)?;
        l.mask_joints = None;
        Ok(())
    }

    /// Puts clip `clip_index` (an index into the clips given to [`update`](Self::update), whose
    /// entry is `clip`) in slot `slot` of layer `layer`, with a fresh player (at the start,
    /// speed 1, looping), weight 0 and no fade.
    ///
    /// # Errors
    ///
    /// [`ControllerError::SlotOutOfRange`], [`ControllerError::LayerOutOfRange`],
    /// [`ControllerError::TooManyTracks`].
    pub fn assign(
        &mut self,
        slot: usize,
        layer: usize,
        clip_index: usize,
        clip: &Clip<'_>,
    ) -> Result<(), ControllerError> {
        if slot >= SLOTS {
            return Err(ControllerError::SlotOutOfRange);
        }
        if layer >= LAYERS {
            return Err(ControllerError::LayerOutOfRange);
        }
        if clip.num_tracks() > TRACKS {
            return Err(ControllerError::TooManyTracks { tracks: clip.num_tracks(), capacity: TRACKS });
        }
        let s = &mut self.slots[slot];
        *s = Slot::empty();
        s.clip = Some(clip_index);
        s.layer = layer;
        s.player = Player::new(clip);
        Ok(())
    }

    /// Empties slot `slot`.
    ///
    /// # Errors
    ///
    /// [`ControllerError::SlotOutOfRange`].
    pub fn clear(&mut self, slot: usize) -> Result<(), ControllerError> {
        *self.slots.get_mut(slot).ok_or(ControllerError::SlotOutOfRange)? = Slot::empty();
        Ok(())
    }

    /// Slot `slot`'s player (`None` for an index out of range).
    #[must_use]
    pub fn player(&self, slot: usize) -> Option<&Player<R>> {
        self.slots.get(slot).map(|s| &s.player)
    }

    /// Slot `slot`'s player, to set its speed, mode, time… (`None` for an index out of range).
    /// A seek restarts the slot's root-motion measure.
    pub fn player_mut(&mut self, slot: usize) -> Option<&mut Player<R>> {
        self.slots.get_mut(slot).map(|s| &mut s.player)
    }

    /// Slot `slot`'s current weight.
    #[must_use]
    pub fn weight(&self, slot: usize) -> Option<R> {
        self.slots.get(slot).map(|s| s.weight)
    }

    /// Slot `slot`'s clip index.
    #[must_use]
    pub fn clip_of(&self, slot: usize) -> Option<usize> {
        self.slots.get(slot).and_then(|s| s.clip)
    }

    /// True while slot `slot` fades.
    #[must_use]
    pub fn is_fading(&self, slot: usize) -> bool {
        self.slots.get(slot).is_some_and(|s| s.fade.is_some())
    }

    /// Sets slot `slot`'s weight at once (clamped into `[0, 1]`), cancelling its fade.
    ///
    /// # Errors
    ///
    /// [`ControllerError::SlotOutOfRange`], [`ControllerError::EmptySlot`],
    /// [`ControllerError::InvalidParameter`] for a non-finite weight.
    pub fn set_weight(&mut self, slot: usize, weight: R) -> Result<(), ControllerError> {
        self.fade_to(slot, weight, R::ZERO, FadeCurve::Linear)
    }

    /// Fades slot `slot`'s weight from its current value to `target` (clamped into `[0, 1]`) over
    /// `duration` seconds of real time (0: at once).
    ///
    /// # Errors
    ///
    /// [`ControllerError::SlotOutOfRange`], [`ControllerError::EmptySlot`],
    /// [`ControllerError::InvalidParameter`] for a non-finite target or duration, or a negative
    /// duration.
    pub fn fade_to(&mut self, slot: usize, target: R, duration: R, curve: FadeCurve) -> Result<(), ControllerError> {
        let s = self.slots.get_mut(slot).ok_or(ControllerError::SlotOutOfRange)?;
        if s.clip.is_none() {
            return Err(ControllerError::EmptySlot);
        }
        if !(target.is_finite() && duration.is_finite() && duration >= R::ZERO) {
            return Err(ControllerError::InvalidParameter);
        }
        let to = target.clamp(R::ZERO, R::ONE);
        Self::start_fade(s, to, duration, curve);
        Ok(())
    }

    fn start_fade(s: &mut Slot<R, TRACKS>, to: R, duration: R, curve: FadeCurve) {
        if duration > R::ZERO {
            s.fade = Some(Fade { from: s.weight, to, duration, elapsed: R::ZERO, curve });
        } else {
            s.weight = to;
            s.fade = None;
            if to == R::ZERO {
                s.synced = false;
            }
        }
    }

    /// Fades slot `to` in to weight 1 and every other slot of its layer out to 0, over `duration`
    /// seconds with `curve`. With `sync`, `to` first jumps to the normalized phase of the layer's
    /// heaviest other active slot, and they advance in phase during the fade (see the module
    /// documentation). The incoming player keeps its state otherwise (call
    /// [`Player::rewind`] through [`player_mut`](Self::player_mut) to restart it).
    ///
    /// # Errors
    ///
    /// As [`fade_to`](Self::fade_to).
    pub fn crossfade(&mut self, to: usize, duration: R, curve: FadeCurve, sync: bool) -> Result<(), ControllerError> {
        let target = self.slots.get(to).ok_or(ControllerError::SlotOutOfRange)?;
        if target.clip.is_none() {
            return Err(ControllerError::EmptySlot);
        }
        if !(duration.is_finite() && duration >= R::ZERO) {
            return Err(ControllerError::InvalidParameter);
        }
        let layer = target.layer;
        if sync {
            let dominant = (0..SLOTS)
                .filter(|&i| i != to && self.slots[i].layer == layer && self.slots[i].active())
                .max_by(|&a, &b| {
                    self.slots[a].weight.partial_cmp(&self.slots[b].weight).unwrap_or(core::cmp::Ordering::Equal)
                });
            if let Some(d) = dominant {
                let phase = self.slots[d].player.normalized();
                self.slots[d].synced = true;
                self.slots[to].player.set_normalized(phase);
                self.slots[to].synced = true;
                self.slots[to].root = None;
            }
        }
        for (i, s) in self.slots.iter_mut().enumerate() {
            if s.layer != layer || s.clip.is_none() {
                continue;
            }
            if i == to {
                Self::start_fade(s, R::ONE, duration, curve);
            } else if s.active() {
                Self::start_fade(s, R::ZERO, duration, curve);
            }
        }
        Ok(())
    }

    /// Turns root-motion extraction on (with its settings) or off. Restarts every slot's measure
    /// and clears the last delta.
    pub fn set_root_motion(&mut self, settings: Option<RootMotionSettings>) {
        self.root_settings = settings;
        self.root_delta = Motion::IDENTITY;
        for s in &mut self.slots {
            s.root = None;
        }
    }

    /// The root displacement of the last update, in the character's frame before it (apply as
    /// `world = world · delta`).
    #[must_use]
    pub fn root_motion_delta(&self) -> Motion<R> {
        self.root_delta
    }

    /// The root displacement accumulated since creation or the last
    /// [`reset_root_motion_total`](Self::reset_root_motion_total).
    #[must_use]
    pub fn root_motion_total(&self) -> Motion<R> {
        self.root_total
    }

    /// Sets the accumulated root displacement back to identity.
    pub fn reset_root_motion_total(&mut self) {
        self.root_total = Motion::IDENTITY;
    }

    /// Advances every active slot by `dt` seconds, samples them into `scratch` and blends them
    /// into `output` (the local pose, at least `skeleton.num_soa_joints()` elements), and reports
    /// marker crossings of active slots to `on_event` (slot order, then crossing order).
    /// `scratch` holds nothing from one update to the next: any scratch of the same shape will
    /// do, and characters updated in turn can share one.
    ///
    /// # Errors
    ///
    /// [`ControllerError::SkeletonTooLarge`], [`ControllerError::ClipOutOfRange`],
    /// [`ControllerError::TooManyTracks`], [`ControllerError::MaskMismatch`],
    /// [`ControllerError::Job`] (output too small, a clip or the root-motion joint past the
    /// skeleton), [`ControllerError::Player`] (non-finite `dt`, too many loops in one step). All
    /// are checked before anything changes: on error the controller and `output` are untouched
    /// and no event is reported.
    pub fn update(
        &mut self,
        dt: R,
        clips: &[ClipEntry<'_, R>],
        skeleton: SkeletonView<'_, R>,
        scratch: &mut ControllerScratch<R, SOA, SLOTS, LAYERS>,
        output: &mut [SoaTransform<R>],
        mut on_event: impl FnMut(ControllerEvent<R>),
    ) -> Result<(), ControllerError> {
        let n = skeleton.num_soa_joints();
        let plan = self.validate(dt, clips, skeleton, output.len())?;

        // Slots playing at the start of the update advance (and report) even if they fade out
        // during it; the blend takes those still playing after it.
        let mut was_active = [false; SLOTS];
        for (a, s) in was_active.iter_mut().zip(&self.slots) {
            *a = s.active();
        }

        // Fades.
        let elapsed = dt.max(R::ZERO);
        for s in &mut self.slots {
            if let Some(f) = &mut s.fade {
                f.elapsed += elapsed;
                s.weight = f.weight();
                if f.elapsed >= f.duration {
                    s.weight = f.to;
                    s.fade = None;
                }
            }
        }

        // Advance, report, sample, extract root motion.
        let rest = skeleton.rest_pose();
        let root_rest = self.root_settings.and_then(|r| skeleton.rest_transform(r.joint));
        let mut motion = MotionBlend::new();
        self.compute_shares(n, &mut scratch.shares);
        for i in 0..SLOTS {
            let slot = &mut self.slots[i];
            let (Some(ci), true) = (slot.clip, was_active[i]) else {
                // Measured afresh when it plays again.
                slot.root = None;
                continue;
            };
            let Some(entry) = clips.get(ci) else { continue };
            // Root-motion measure: (re)started at the pre-update time after a seek, a clip
            // change or a pause in playing.
            let seeked = (slot.player.phase_ticks(), slot.player.loops()) != slot.mark;
            match (self.root_settings, root_rest) {
                (Some(settings), Some(root_rest)) if self.layers[slot.layer].mode == LayerMode::Override => {
                    if seeked || slot.root.is_none_or(|t| t.settings != settings) {
                        let mut t = RootMotionTracker::from_clip(&entry.clip, settings, root_rest, self.rotation);
                        let at =
                            sample_joint(&entry.clip, settings.joint, slot.player.time(), root_rest, self.rotation);
                        t.reset(Motion::extract(&at, &settings));
                        slot.root = Some(t);
                    }
                }
                _ => slot.root = None,
            }
            let weight = slot.weight;
            let report = |event: Event<R>| on_event(ControllerEvent { slot: i, clip: ci, weight, event });
            let step: Step = match plan[i] {
                Plan::Time => slot.player.advance(dt, entry.markers, report)?,
                Plan::Cycles(c) => slot.player.advance_cycles(c, entry.markers, report)?,
            };
            slot.mark = (slot.player.phase_ticks(), slot.player.loops());
            if !slot.active() {
                slot.root = None;
                slot.synced = false;
                continue;
            }
            let pose = &mut scratch.poses[i][..n];
            SamplingJob {
                clip: entry.clip,
                time: slot.player.time(),
                rotation: self.rotation,
                rest_pose: rest,
                cursor: &mut slot.cursor,
                output: pose,
            }
            .run()?;
            match self.layers[slot.layer].mode {
                LayerMode::Additive(AdditiveReference::RestPose) => {
                    for (p, r) in pose.iter_mut().zip(rest) {
                        for l in 0..4 {
                            p.set_lane(l, &make_additive(&p.lane(l), &r.lane(l)));
                        }
                    }
                }
                LayerMode::Additive(AdditiveReference::Baked) => {}
                LayerMode::Override => {
                    if let Some(tracker) = &mut slot.root {
                        let (g, l) = (tracker.settings.joint / 4, tracker.settings.joint % 4);
                        let root = pose[g].lane(l);
                        let delta = tracker.update(Motion::extract(&root, &tracker.settings), step.wraps);
                        pose[g].set_lane(l, &tracker.remove(&root));
                        motion.add(delta, slot.weight * scratch.shares[slot.layer][g][l]);
                    }
                }
            }
        }
        self.release_lone_synced();

        // Blend.
        let mut normal: heapless::Vec<Layer<'_, R>, SLOTS> = heapless::Vec::new();
        let mut additive: heapless::Vec<Layer<'_, R>, SLOTS> = heapless::Vec::new();
        for (i, s) in self.slots.iter().enumerate() {
            if !s.active() || s.weight <= R::ZERO {
                continue;
            }
            let layer = &self.layers[s.layer];
            let transform = &scratch.poses[i][..n];
            // Both vectors hold at most SLOTS layers: pushes cannot fail.
            let _ = match layer.mode {
                LayerMode::Override => normal.push(Layer {
                    transform,
                    weight: s.weight,
                    joint_weights: Some(&scratch.shares[s.layer][..n]),
                }),
                LayerMode::Additive(_) => additive.push(Layer {
                    transform,
                    weight: s.weight * layer.weight,
                    joint_weights: layer.mask_joints.map(|_| &layer.mask[..n]),
                }),
            };
        }
        BlendingJob { layers: &normal, additive: &additive, rest_pose: rest, threshold: self.threshold, output }
            .run()?;
        if self.root_settings.is_some() {
            self.root_delta = motion.finish();
            self.root_total = self.root_total.then(self.root_delta);
        }
        Ok(())
    }

    /// Checks everything `update` needs and plans each slot's step.
    fn validate(
        &self,
        dt: R,
        clips: &[ClipEntry<'_, R>],
        skeleton: SkeletonView<'_, R>,
        output_len: usize,
    ) -> Result<[Plan<R>; SLOTS], ControllerError> {
        if !dt.is_finite() {
            return Err(ControllerError::Player(PlayerError::NonFiniteDelta));
        }
        let n = skeleton.num_soa_joints();
        if n > SOA {
            return Err(ControllerError::SkeletonTooLarge);
        }
        if output_len < n {
            return Err(ControllerError::Job(JobError::OutputTooSmall));
        }
        if self.root_settings.is_some_and(|r| r.joint >= skeleton.num_joints()) {
            return Err(ControllerError::Job(JobError::JointIndexOutOfRange));
        }
        for (i, l) in self.layers.iter().enumerate() {
            if l.mask_joints.is_some_and(|j| j != skeleton.num_joints()) {
                return Err(ControllerError::MaskMismatch { layer: i });
            }
        }
        // Fade weights after this update decide who is active and the sync rates.
        let mut weights = [R::ZERO; SLOTS];
        for (w, s) in weights.iter_mut().zip(&self.slots) {
            *w = match s.fade {
                Some(f) => Fade { elapsed: f.elapsed + dt.max(R::ZERO), ..f }.weight(),
                None => s.weight,
            };
        }
        let mut plan = [Plan::Time; SLOTS];
        for (i, s) in self.slots.iter().enumerate() {
            let Some(ci) = s.clip.filter(|_| s.active()) else { continue };
            let entry = clips.get(ci).ok_or(ControllerError::ClipOutOfRange { slot: i })?;
            let tracks = entry.clip.num_tracks();
            if tracks > TRACKS {
                return Err(ControllerError::TooManyTracks { tracks, capacity: TRACKS });
            }
            if entry.clip.joint_bound() > skeleton.num_joints() {
                return Err(ControllerError::Job(JobError::JointIndexOutOfRange));
            }
            if s.synced {
                plan[i] = Plan::Cycles(self.sync_rate(s.layer, &weights) * dt);
            }
        }
        for (i, s) in self.slots.iter().enumerate() {
            if s.active() {
                match plan[i] {
                    Plan::Time => s.player.check_advance(dt)?,
                    Plan::Cycles(c) => s.player.check_advance_cycles(c)?,
                }
            }
        }
        Ok(plan)
    }

    /// The weighted mean normalized rate (cycles per second) of the synced slots of `layer`.
    fn sync_rate(&self, layer: usize, weights: &[R; SLOTS]) -> R {
        let (mut sum, mut total) = (R::ZERO, R::ZERO);
        for (s, &w) in self.slots.iter().zip(weights) {
            if s.layer == layer && s.synced && s.active() && w > R::ZERO {
                let cycle = s.player.cycle_duration();
                if cycle > R::ZERO {
                    sum += w * s.player.speed() / cycle;
                    total += w;
                }
            }
        }
        if total > R::ZERO {
            sum / total
        } else {
            R::ZERO
        }
    }

    /// A layer with a single synced slot left lets it play on its own.
    fn release_lone_synced(&mut self) {
        for layer in 0..LAYERS {
            let count = self.slots.iter().filter(|s| s.layer == layer && s.synced && s.active()).count();
            if count <= 1 {
                for s in self.slots.iter_mut().filter(|s| s.layer == layer) {
                    s.synced = false;
                }
            }
        }
    }

    /// Each override layer's share of every joint (see the module documentation), from the last
    /// layer down. A slot's blend weight is its weight times its layer's share.
    fn compute_shares(&self, n: usize, shares: &mut [[[R; 4]; SOA]; LAYERS]) {
        // Per layer: coverage α·min(1, Σw), and the factor turning slot weights into blend
        // weights that sum to that coverage (1/Σw when the slots sum to more than 1).
        let mut cover = [R::ZERO; LAYERS];
        let mut factor = [R::ZERO; LAYERS];
        for l in 0..LAYERS {
            let sum = self
                .slots
                .iter()
                .filter(|s| s.layer == l && s.active())
                .fold(R::ZERO, |a, s| a + s.weight.max(R::ZERO));
            let alpha = self.layers[l].weight;
            cover[l] = alpha * sum.min(R::ONE);
            factor[l] = if sum > R::ONE { alpha / sum } else { alpha };
        }
        for e in 0..n {
            let mut remaining = [R::ONE; 4];
            for l in (0..LAYERS).rev() {
                let layer = &self.layers[l];
                if layer.mode != LayerMode::Override {
                    continue;
                }
                for k in 0..4 {
                    let m = if layer.mask_joints.is_some() { layer.mask[e][k] } else { R::ONE };
                    shares[l][e][k] = factor[l] * m * remaining[k];
                    remaining[k] *= R::ONE - cover[l] * m;
                }
            }
        }
    }
}

/// How a slot advances this update.
#[derive(Debug, Clone, Copy)]
enum Plan<R> {
    /// By `dt` times its speed.
    Time,
    /// By this many cycles (synced).
    Cycles(R),
}

#[cfg(test)]
mod tests;
