//! A character ([`Character`]): one instance of a [`Model`] with its own clock and pose, on the
//! core's [`Controller`]. It plays a clip, blends a second one in by a weight, crossfades to
//! it (with the controller's fade curves and phase sync), seeks, changes speed and loop mode,
//! or runs one of the file's graphs ([`GraphRun`]); [`Character::update`] then computes what a
//! renderer reads in place: the joints' model matrices, each skin's palette, and per draw part
//! the shader's uniform rows ([`crate::rows`]) and morphed vertices.
//!
//! The clips play in two slots of the controller's base layer: the primary clip's and the
//! second clip's. A crossfade fades the second slot in and the primary out; when it ends the
//! second slot becomes the primary and the other is emptied.
//!
//! A frame runs these stages, each on the previous one's output: the clips (or the graph) give
//! the local pose; a retargeted source ([`Character::retarget_from`]) maps another model's pose
//! onto it; local-to-model gives the joints' model matrices; foot placement, when set up
//! (`Character::set_feet`, with the `feet` feature), stands the legs on the caller's ground,
//! and chain IK
//! ([`Character::set_chain_ik`]) turns chains of joints towards the caller's targets, each
//! recomputing the matrices it changed; the skins' palettes, the shader rows and the morphs
//! follow. A stage that changes the local pose alone goes between the retargeting and
//! local-to-model; one that reads the model matrices, as foot placement and chain IK do, after
//! local-to-model, on a copy of the pose (the sampled pose stays as sampled for the next
//! update).

use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use sinew::capacity::Capacity;
use sinew::controller::{
    ClipId, Controller, ControllerError, ControllerScratch, FadeCurve, LayerId, SlotId, SoaCaches,
};
use sinew::job::morph::{MorphJob, MorphWeightsJob};
use sinew::job::{JobError, RetargetJob, RetargetJoint, RetargetRoot, SkinDualQuatJob, SkinMatrixJob};
use sinew::math::{DualQuat, Mat4, Quat, SoaTransform, SymMat3, Vec3};
use sinew::player::LoopMode;

use crate::graph::{GraphError, GraphRun, Scratch};
use crate::model::{Bounds, Model};
use crate::parts::FLOATS_PER_VERTEX;
use crate::rows;

mod chain;
#[cfg(feature = "feet")]
mod feet;
#[cfg(feature = "springs")]
mod springs;
mod stages;

pub use chain::IkChain;
#[cfg(feature = "feet")]
pub use feet::Legs;
#[cfg(feature = "springs")]
pub use springs::colliders;
#[cfg(feature = "springs")]
pub use springs::{SpringFrame, SpringSet, SpringSettings};

/// What [`Character::update`] computes besides the pose and the model matrices.
pub mod outputs {
    /// Each skin's palette (model × inverse bind matrices).
    pub const PALETTES: u32 = 1;
    /// Each draw part's linear-blend rows (`u_jointMat`).
    pub const LBS_ROWS: u32 = 2;
    /// Each draw part's dual-quaternion rows (`u_jointDQ`).
    pub const DQS_ROWS: u32 = 4;
    /// Morph weights and each morphed draw part's vertices.
    pub const MORPHS: u32 = 8;
}

/// Why a character refused a call or an update; what it held before is unchanged.
#[derive(Debug, Clone, PartialEq)]
pub enum CharacterError {
    /// The model has more joints than the character's capacity.
    TooManyJoints {
        /// The model's joints.
        joints: usize,
        /// The capacity's.
        capacity: usize,
    },
    /// No such clip.
    NoClip {
        /// The clip asked for.
        clip: usize,
        /// The model's clip count.
        clips: usize,
    },
    /// A blend weight outside 0 to 1.
    Weight,
    /// A crossfade duration that is not a positive number of seconds.
    Duration,
    /// No graph is running.
    NoGraph,
    /// Foot placement is not set up (or the crate was built without the `feet` feature).
    NoFeet,
    /// Spring bones are not set up.
    NoSprings,
    /// The controller's refusal.
    Controller(ControllerError),
    /// A job's refusal (not expected: the model's parts are checked at load).
    Job(JobError),
    /// The graph's refusal.
    Graph(GraphError),
}

impl fmt::Display for CharacterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CharacterError::TooManyJoints { joints, capacity } => {
                write!(f, "{joints} joints exceed the skeleton capacity of {capacity}")
            }
            CharacterError::NoClip { clip, clips } => write!(f, "no clip {clip} (the file has {clips})"),
            CharacterError::Weight => f.write_str("a blend weight is from 0 to 1"),
            CharacterError::Duration => f.write_str("a crossfade lasts a positive number of seconds"),
            CharacterError::NoGraph => f.write_str("no graph is running"),
            CharacterError::NoFeet => f.write_str("foot placement is not set up"),
            CharacterError::NoSprings => f.write_str("spring bones are not set up"),
            CharacterError::Controller(e) => write!(f, "{e}"),
            CharacterError::Job(e) => write!(f, "{e}"),
            CharacterError::Graph(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for CharacterError {}

impl From<ControllerError> for CharacterError {
    fn from(e: ControllerError) -> Self {
        CharacterError::Controller(e)
    }
}

impl From<JobError> for CharacterError {
    fn from(e: JobError) -> Self {
        CharacterError::Job(e)
    }
}

impl From<GraphError> for CharacterError {
    fn from(e: GraphError) -> Self {
        CharacterError::Graph(e)
    }
}

/// Buffers a character's update works in and leaves nothing in: the controller's and the
/// graph's scratch. One serves every character of capacity `C` updated in turn.
pub struct Work<C: Capacity> {
    controller: Option<Box<ControllerScratch<f32, C>>>,
    graph: Option<Box<Scratch>>,
}

impl<C: Capacity> fmt::Debug for Work<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Work").finish_non_exhaustive()
    }
}

impl<C: Capacity> Default for Work<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Capacity> Work<C> {
    /// Empty buffers, allocated by the first update that needs them.
    #[must_use]
    pub const fn new() -> Work<C> {
        Work { controller: None, graph: None }
    }

    fn controller(&mut self) -> &mut ControllerScratch<f32, C> {
        self.controller.get_or_insert_with(boxed_scratch)
    }

    fn graph(&mut self) -> &mut Scratch {
        self.graph.get_or_insert_with(|| Box::new(Scratch::new()))
    }
}

/// A fresh controller on the heap. In a wasm module a constant controller (its slots' key
/// caches included) would sit in the module's initial data, so it is built at run time there,
/// where the stack has room for a browser capacity's; elsewhere the constant is copied, since a
/// desktop capacity's controller is larger than a thread's stack takes in building it.
fn boxed_controller<C: Capacity>() -> Box<Controller<f32, C, SoaCaches>> {
    #[cfg(target_family = "wasm")]
    return Box::default();
    #[cfg(not(target_family = "wasm"))]
    Box::new(Controller::new())
}

/// A fresh update scratch on the heap, built as [`boxed_controller`] builds a controller.
fn boxed_scratch<C: Capacity>() -> Box<ControllerScratch<f32, C>> {
    #[cfg(target_family = "wasm")]
    return Box::default();
    #[cfg(not(target_family = "wasm"))]
    Box::new(ControllerScratch::new())
}

/// `to` becomes a copy of `from`: one block copy (`memcpy`, wasm's `memory.copy`) where the
/// lengths already match, as they do from the second update on; `Vec::clone_from` clones the
/// transforms one at a time.
fn copy_pose(to: &mut Vec<SoaTransform<f32>>, from: &[SoaTransform<f32>]) {
    if to.len() == from.len() {
        to.copy_from_slice(from);
    } else {
        to.clear();
        to.extend_from_slice(from);
    }
}

/// One draw part's per-frame data.
#[derive(Debug, Clone, Default)]
struct PartOut {
    /// `u_jointMat` rows: 12 floats per palette joint.
    lbs: Vec<f32>,
    /// `u_jointDQ` rows: 16 floats per palette joint.
    dqs: Vec<f32>,
    /// The part's vertices with the morph targets applied (empty without targets).
    morphed: Vec<f32>,
}

/// Another model whose clips drive a character through the core's [`RetargetJob`], and the
/// buffers it works in.
struct Retargeted {
    /// The model whose clips play.
    source: Rc<Model>,
    /// One entry per joint of the character's model.
    joints: Vec<RetargetJoint<f32>>,
    /// The hips' motion.
    root: RetargetRoot<f32>,
    /// The source's local pose.
    pose: Vec<SoaTransform<f32>>,
    /// The source's model matrices.
    model: Vec<Mat4<f32>>,
    /// The job's work space: the target joints' world rotations.
    world: Vec<Quat<f32>>,
}

/// A character: playback state on a [`Controller`] of capacity `C`, and every buffer its
/// frames are computed into.
pub struct Character<C: Capacity> {
    // The graph borrows nothing of `model` past its own store, but goes first anyway.
    graph: Option<GraphRun>,
    /// The model it animates.
    pub model: Rc<Model>,
    /// The model whose clips play in its place, retargeted.
    retarget: Option<Retargeted>,
    controller: Box<Controller<f32, C, SoaCaches>>,
    /// The primary clip's slot (0 or 1); the other holds the second clip, if any.
    primary: usize,
    /// A crossfade to the second slot runs.
    fading: bool,
    playing: bool,
    speed: f32,
    mode: LoopMode,
    /// The pose was not sampled since the last change of clips, times or weights.
    stale: bool,
    pose: Vec<SoaTransform<f32>>,
    /// Model matrices of the joints.
    pub joints: Vec<Mat4<f32>>,
    /// Palette of each skin.
    pub palettes: Vec<Vec<Mat4<f32>>>,
    dual_quats: Vec<Vec<DualQuat<f32>>>,
    scales: Vec<Vec<SymMat3<f32>>>,
    morph_weights: Vec<Vec<f32>>,
    parts: Vec<Vec<PartOut>>,
    /// The foot placement stage, when set up.
    #[cfg(feature = "feet")]
    feet: Option<feet::Feet>,
    /// The chain IK stage, when set up.
    chains: Option<Box<dyn chain::PoseStage>>,
    /// The spring bones stage, when set up.
    #[cfg(feature = "springs")]
    springs: Option<springs::Springs>,
    /// The local pose the stages after local-to-model edit: a copy of `pose`.
    placed: Vec<SoaTransform<f32>>,
    /// Model space to world space, for foot placement.
    world: Mat4<f32>,
}

impl<C: Capacity> fmt::Debug for Character<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Character").field("time", &self.time()).field("graph", &self.graph).finish_non_exhaustive()
    }
}

impl<C: Capacity> Character<C> {
    /// A character of `model` playing its first clip (the rest pose without clips).
    ///
    /// # Errors
    ///
    /// [`CharacterError::TooManyJoints`] for a model larger than `C`, or the controller's
    /// refusal of its first clip (more tracks than `C::TRACKS`).
    // Out of line: a load-time path, whose inlined copies only grow a wasm module.
    #[inline(never)]
    pub fn new(model: Rc<Model>) -> Result<Character<C>, CharacterError> {
        let joints = model.num_joints();
        if joints > C::JOINTS {
            return Err(CharacterError::TooManyJoints { joints, capacity: C::JOINTS });
        }
        let skins = &model.skins;
        let morph_weights = (0..model.meshes.len())
            .map(|m| model.asset.morph_targets(m).map_or(Vec::new(), |t| vec![0.0; t.num_targets()]))
            .collect();
        let parts = model.meshes.iter().map(|m| vec![PartOut::default(); m.len()]).collect();
        let mut c = Character {
            graph: None,
            retarget: None,
            controller: boxed_controller(),
            primary: 0,
            fading: false,
            playing: true,
            speed: 1.0,
            mode: LoopMode::Loop,
            stale: true,
            // One element per four joints, as the rest pose has.
            pose: model.skeleton().rest_pose().to_vec(),
            joints: vec![Mat4::IDENTITY; joints],
            palettes: skins.iter().map(|s| vec![Mat4::IDENTITY; s.joints.len()]).collect(),
            // Sized by the first update that asks for dual quaternions.
            dual_quats: vec![Vec::new(); skins.len()],
            scales: vec![Vec::new(); skins.len()],
            morph_weights,
            parts,
            #[cfg(feature = "feet")]
            feet: None,
            chains: None,
            #[cfg(feature = "springs")]
            springs: None,
            placed: Vec::new(),
            world: Mat4::IDENTITY,
            model,
        };
        if !c.model.clips.is_empty() {
            c.play(0)?;
        }
        Ok(c)
    }

    fn secondary_slot(&self) -> usize {
        1 - self.primary
    }

    /// The model whose clips play: the retargeted source, else the character's model.
    #[must_use]
    pub fn clip_model(&self) -> &Rc<Model> {
        self.retarget.as_ref().map_or(&self.model, |r| &r.source)
    }

    /// Plays the clips of `source` in place of the model's, each frame's pose mapped onto the
    /// model by the core's [`RetargetJob`] with `joints` (one per joint of the model) and the
    /// hips' motion `root` (what the offline side's joint maps compute). Playback restarts on
    /// the source's first clip; the graph stops.
    ///
    /// # Errors
    ///
    /// [`CharacterError::TooManyJoints`] for a source larger than `C`, [`CharacterError::Job`]
    /// with [`JobError::InputTooSmall`] when `joints` does not have one entry per joint of the
    /// model; nothing changes.
    pub fn retarget_from(
        &mut self,
        source: Rc<Model>,
        joints: Vec<RetargetJoint<f32>>,
        root: RetargetRoot<f32>,
    ) -> Result<(), CharacterError> {
        let n = source.num_joints();
        if n > C::JOINTS {
            return Err(CharacterError::TooManyJoints { joints: n, capacity: C::JOINTS });
        }
        if joints.len() != self.model.num_joints() {
            return Err(CharacterError::Job(JobError::InputTooSmall));
        }
        let pose = source.skeleton().rest_pose().to_vec();
        let target = self.model.num_joints();
        let r = Retargeted {
            joints,
            root,
            pose,
            model: vec![Mat4::IDENTITY; n],
            world: vec![Quat::IDENTITY; target],
            source,
        };
        let clips = r.source.clips.len();
        self.retarget = Some(r);
        self.graph = None;
        self.stale = true;
        if clips > 0 {
            self.play(0)?;
        } else {
            self.controller.clear(self.primary)?;
            self.controller.clear(self.secondary_slot())?;
        }
        Ok(())
    }

    /// Plays the model's own clips again (from its first).
    pub fn stop_retarget(&mut self) {
        if self.retarget.take().is_some() {
            self.stale = true;
            let _empty = self.controller.clear(self.secondary_slot());
            if self.play(0).is_err() {
                let _empty = self.controller.clear(self.primary);
            }
        }
    }

    /// The local pose of the model whose clips play: the retargeted source's, else the pose.
    #[must_use]
    pub fn clip_pose(&self) -> &[SoaTransform<f32>] {
        self.retarget.as_ref().map_or(&self.pose, |r| &r.pose)
    }

    /// The box of the joints' positions in the pose of the last [`update`](Self::update)
    /// (model space): what a model without meshes is framed by, where its bind-pose bounds
    /// ([`Model::bounds`]) are its rest pose's, which motion capture often stands at the origin.
    #[must_use]
    pub fn pose_bounds(&self) -> Bounds {
        Bounds::of_box(self.joints.iter().map(Mat4::translation)).unwrap_or(self.model.bounds)
    }

    /// As [`pose_bounds`](Self::pose_bounds), for the retargeted source's joints (in its own
    /// model space) as of the last update; `None` without a retargeted source.
    #[must_use]
    pub fn source_pose_bounds(&self) -> Option<Bounds> {
        let r = self.retarget.as_ref()?;
        Some(Bounds::of_box(r.model.iter().map(Mat4::translation)).unwrap_or(r.source.bounds))
    }

    /// Puts clip `clip` in slot `slot` with a fresh player at the character's speed and loop
    /// mode, weight 0.
    fn load(&mut self, slot: usize, clip: usize) -> Result<(), CharacterError> {
        let model = Rc::clone(self.clip_model());
        let clips = &model.clips;
        if clip >= clips.len() {
            return Err(CharacterError::NoClip { clip, clips: clips.len() });
        }
        self.controller.assign(SlotId(slot), LayerId(0), ClipId(clip), clips)?;
        if let Some(p) = self.controller.player_mut(slot) {
            p.set_mode(self.mode);
            p.set_speed(self.speed);
        }
        self.stale = true;
        Ok(())
    }

    /// Plays clip `clip` from its start, alone (any blend or crossfade ends, the graph stops).
    ///
    /// # Errors
    ///
    /// [`CharacterError::NoClip`], or the controller's refusal; nothing changes.
    pub fn play(&mut self, clip: usize) -> Result<(), CharacterError> {
        self.load(self.primary, clip)?;
        self.controller.set_weight(self.primary, 1.0)?;
        self.controller.clear(self.secondary_slot())?;
        self.fading = false;
        self.graph = None;
        Ok(())
    }

    /// Blends clip `clip` in at `weight` (0 to 1) over the playing one, both running; a
    /// weight of 0 leaves the second clip out. A second clip already playing `clip` keeps its
    /// time; a crossfade stops where it is.
    ///
    /// # Errors
    ///
    /// [`CharacterError::Weight`], [`CharacterError::NoClip`]; nothing changes.
    pub fn blend(&mut self, clip: usize, weight: f32) -> Result<(), CharacterError> {
        if !(0.0..=1.0).contains(&weight) {
            return Err(CharacterError::Weight);
        }
        let s = self.secondary_slot();
        if self.controller.clip_of(s) != Some(clip) {
            self.load(s, clip)?;
        }
        if self.controller.clip_of(self.primary).is_some() {
            self.controller.set_weight(self.primary, 1.0 - weight)?;
        }
        self.controller.set_weight(s, weight)?;
        self.fading = false;
        self.stale = true;
        Ok(())
    }

    /// Leaves the second clip out: the primary plays alone at full weight.
    pub fn stop_blend(&mut self) {
        let _empty = self.controller.clear(self.secondary_slot());
        let _no_primary = self.controller.set_weight(self.primary, 1.0);
        self.fading = false;
        self.stale = true;
    }

    /// Crossfades from the playing clip to clip `clip` over `seconds` with `curve` (the
    /// second clip starts at its beginning, or at the playing clip's phase with `sync`, and
    /// becomes the only one when the fade ends). A second clip already playing `clip` fades
    /// in from its time and weight.
    ///
    /// # Errors
    ///
    /// [`CharacterError::Duration`], [`CharacterError::NoClip`]; nothing changes.
    pub fn crossfade(&mut self, clip: usize, seconds: f32, curve: FadeCurve, sync: bool) -> Result<(), CharacterError> {
        if !(seconds.is_finite() && seconds > 0.0) {
            return Err(CharacterError::Duration);
        }
        let s = self.secondary_slot();
        if self.controller.clip_of(s) != Some(clip) {
            self.load(s, clip)?;
        }
        self.controller.crossfade(s, seconds, curve, sync)?;
        self.fading = true;
        self.stale = true;
        Ok(())
    }

    /// Plays (`true`) or pauses the clips and the graph. Spring bones swing on while paused
    /// (see [`advance`](Self::advance)).
    pub fn set_playing(&mut self, playing: bool) {
        self.playing = playing;
    }

    /// Whether the clips and the graph play.
    #[must_use]
    pub fn is_playing(&self) -> bool {
        self.playing
    }

    /// Sets the speed factor of both clips (finite values only; negative plays backwards).
    pub fn set_speed(&mut self, speed: f32) {
        if speed.is_finite() {
            self.speed = speed;
            for slot in 0..2 {
                if let Some(p) = self.controller.player_mut(slot) {
                    p.set_speed(speed);
                }
            }
        }
    }

    /// The speed factor.
    #[must_use]
    pub fn speed(&self) -> f32 {
        self.speed
    }

    /// Sets the loop mode of both clips.
    pub fn set_loop_mode(&mut self, mode: LoopMode) {
        self.mode = mode;
        for slot in 0..2 {
            if let Some(p) = self.controller.player_mut(slot) {
                p.set_mode(mode);
            }
        }
        self.stale = true;
    }

    /// The loop mode.
    #[must_use]
    pub fn loop_mode(&self) -> LoopMode {
        self.mode
    }

    /// Moves the playing clip to time `t` (seconds on the clip's timeline, clamped to it).
    ///
    /// A seek is a cut: foot placement's next run is settled (`Character::reset_feet`) and the
    /// spring bones' next run is a reset (`Character::reset_springs`).
    pub fn seek(&mut self, t: f32) {
        if let Some(p) = self.controller.player_mut(self.primary) {
            p.seek(t);
            self.stale = true;
            self.settle();
        }
    }

    /// Moves both clips by `dt` seconds of clip time along their cycle (forward on a
    /// ping-pong's forward pass, backward on its return; `dt < 0` goes the other way),
    /// whatever the speed, without markers' events. A step the player refuses (non-finite, or
    /// millions of loops) is ignored. As a seek, it settles foot placement's next run and
    /// resets the springs.
    pub fn seek_by(&mut self, dt: f32) {
        for slot in 0..2 {
            if self.controller.clip_of(slot).is_none() {
                continue;
            }
            if let Some(p) = self.controller.player_mut(slot) {
                let speed = p.speed();
                p.set_speed(1.0);
                let _ignored = p.advance(dt, &[], |_| {});
                p.set_speed(speed);
            }
        }
        self.stale = true;
        self.settle();
    }

    /// Makes foot placement's next run a settled one and the springs' next run a reset
    /// (nothing for a stage not set up).
    fn settle(&mut self) {
        #[cfg(feature = "feet")]
        self.reset_feet();
        #[cfg(feature = "springs")]
        self.reset_springs();
    }

    /// The playing clip's index and time (`None`: no clip, or a graph runs).
    #[must_use]
    pub fn clip(&self) -> Option<(usize, f32)> {
        if self.graph.is_some() {
            return None;
        }
        let clip = self.controller.clip_of(self.primary)?;
        Some((clip, self.controller.player(self.primary).map_or(0.0, sinew::player::Player::time)))
    }

    /// The second clip's index and time (`None` without one).
    #[must_use]
    pub fn second_clip(&self) -> Option<(usize, f32)> {
        let s = self.secondary_slot();
        let clip = self.controller.clip_of(s)?;
        Some((clip, self.controller.player(s).map_or(0.0, sinew::player::Player::time)))
    }

    /// The playing clip's time (0 without one).
    #[must_use]
    pub fn time(&self) -> f32 {
        self.controller
            .player(self.primary)
            .filter(|_| self.controller.clip_of(self.primary).is_some())
            .map_or(0.0, sinew::player::Player::time)
    }

    /// The second clip's weight (0 without one).
    #[must_use]
    pub fn weight(&self) -> f32 {
        let s = self.secondary_slot();
        if self.controller.clip_of(s).is_some() {
            self.controller.weight(s).unwrap_or(0.0)
        } else {
            0.0
        }
    }

    /// Whether a crossfade runs.
    #[must_use]
    pub fn is_fading(&self) -> bool {
        self.fading
    }

    /// The controller the clips play on (its slots keep decoded-key caches: [`SoaCaches`]).
    #[must_use]
    pub fn controller(&self) -> &Controller<f32, C, SoaCaches> {
        &self.controller
    }

    /// Runs graph `index` of the file from its initial state in place of the clips.
    ///
    /// # Errors
    ///
    /// What [`GraphRun::start`] refuses; the clips keep playing.
    pub fn use_graph(&mut self, index: usize) -> Result<(), CharacterError> {
        self.graph = Some(GraphRun::start(&self.model, index)?);
        Ok(())
    }

    /// Stops the graph; the clips play again.
    pub fn stop_graph(&mut self) {
        self.graph = None;
        self.stale = true;
    }

    /// The running graph.
    #[must_use]
    pub fn graph(&self) -> Option<&GraphRun> {
        self.graph.as_ref()
    }

    /// Sets parameter `p` of the running graph (see [`GraphRun::set`]).
    ///
    /// # Errors
    ///
    /// [`CharacterError::NoGraph`], or the machine's refusal.
    pub fn set_parameter(&mut self, p: usize, value: f32) -> Result<(), CharacterError> {
        Ok(self.graph.as_mut().ok_or(CharacterError::NoGraph)?.set(p, value)?)
    }

    /// Advances time by `dt` seconds: the graph, or the clips and the crossfade, then samples
    /// the pose (none of this while paused), and the spring bones' clock (paused or not: the
    /// springs follow the world, which moves while a clip is paused; their next run steps by
    /// the seconds advanced since the last). Foot placement's next run steps by the seconds
    /// played since its last (none while it is off and ramped out). A `dt` that is not finite
    /// and positive changes nothing.
    ///
    /// # Errors
    ///
    /// What the graph or the controller refuses (they keep their state; the pose is
    /// unchanged).
    pub fn advance(&mut self, dt: f32, work: &mut Work<C>) -> Result<(), CharacterError> {
        if !(dt.is_finite() && dt > 0.0) {
            return Ok(());
        }
        if self.playing {
            match self.graph.as_mut() {
                Some(g) => g.update(&self.model, dt, work.graph(), &mut self.pose)?,
                None => self.sample(dt, work)?,
            }
            #[cfg(feature = "feet")]
            if let Some(f) = self.feet.as_mut().filter(|f| f.active()) {
                f.dt += dt;
            }
        }
        #[cfg(feature = "springs")]
        if let Some(s) = self.springs.as_mut().filter(|s| s.active()) {
            s.dt += dt;
        }
        Ok(())
    }

    /// Runs the controller by `dt` into the pose, and ends a crossfade that finished.
    fn sample(&mut self, dt: f32, work: &mut Work<C>) -> Result<(), CharacterError> {
        // One update call whichever model's clips play (the retargeted source's, else the
        // character's own), then the retargeting into the character's pose.
        let (source, pose) = match self.retarget.as_mut() {
            None => (&*self.model, &mut self.pose),
            Some(r) => (&*r.source, &mut r.pose),
        };
        self.controller.update(dt, &source.clips, source.skeleton(), work.controller(), pose, |_| {})?;
        if let Some(r) = self.retarget.as_mut() {
            let source = &*r.source;
            crate::jobs::local_to_model(source.skeleton(), &r.pose, &mut r.model)?;
            RetargetJob {
                target: self.model.skeleton(),
                joints: &r.joints,
                root: Some(r.root),
                source: &r.model,
                world: &mut r.world,
                output: &mut self.pose,
            }
            .run()?;
        }
        // The controller advances the slots it blends; a second clip at weight 0 runs on too,
        // so that raising its weight finds it where it would be.
        let s = self.secondary_slot();
        if dt > 0.0 && !self.fading && self.controller.weight(s) == Some(0.0) {
            if let Some(p) = self.controller.player_mut(s) {
                let _finite_dt_checked_above = p.advance(dt, &[], |_| {});
            }
        }
        self.stale = false;
        if self.fading && !self.controller.is_fading(self.secondary_slot()) {
            let old = self.primary;
            self.primary = self.secondary_slot();
            self.controller.clear(old)?;
            self.fading = false;
        }
        Ok(())
    }

    /// Whether an update runs the pose stages (foot placement, chain IK, spring bones) on a
    /// copy of the sampled pose: one of them is set up and running.
    fn stages_run(&self) -> bool {
        #[cfg(feature = "feet")]
        let placing = self.feet.as_ref().is_some_and(feet::Feet::active);
        #[cfg(not(feature = "feet"))]
        let placing = false;
        #[cfg(feature = "springs")]
        let swinging = self.springs.as_ref().is_some_and(springs::Springs::active);
        #[cfg(not(feature = "springs"))]
        let swinging = false;
        placing || self.chains.is_some() || swinging
    }

    /// Computes the pose at the current time (sampled again only after a change since the
    /// last advance), the joints' model matrices (with the feet placed and the IK chains
    /// solved, when set up), and the `outputs` asked for (an or of [`outputs`] flags).
    ///
    /// # Errors
    ///
    /// The controller's or a job's refusal (not expected: the model's parts were checked at
    /// load).
    pub fn update(&mut self, outputs: u32, work: &mut Work<C>) -> Result<(), CharacterError> {
        self.update_only::<{ u32::MAX }>(outputs, work)
    }

    /// As [`update`](Self::update), computing only the outputs among `KEEP`'s flags (those
    /// asked for outside it stay as they were): a build that never asks for an output leaves
    /// the code that computes it out (the browser's smallest module has no morph targets or
    /// dual-quaternion rows).
    ///
    /// # Errors
    ///
    /// As [`update`](Self::update).
    pub fn update_only<const KEEP: u32>(&mut self, outputs: u32, work: &mut Work<C>) -> Result<(), CharacterError> {
        let outputs = outputs & KEEP;
        if self.graph.is_none() && self.stale {
            self.sample(0.0, work)?;
        }
        let model = Rc::clone(&self.model);
        if self.stages_run() {
            copy_pose(&mut self.placed, &self.pose);
            // The spring joints start from the rotations their last step left: the one
            // local-to-model below computes the matrices under them too.
            #[cfg(feature = "springs")]
            if let Some(s) = self.springs.as_ref().filter(|s| s.active()) {
                s.keep_rotations(&mut self.placed);
            }
            crate::jobs::local_to_model(model.skeleton(), &self.placed, &mut self.joints)?;
            #[cfg(feature = "feet")]
            if let Some(f) = self.feet.as_mut().filter(|f| f.active()) {
                f.run(model.skeleton(), &mut self.placed, &mut self.joints, self.world)?;
            }
            if let Some(c) = self.chains.as_mut() {
                c.run(model.skeleton(), &mut self.placed, &mut self.joints)?;
            }
            #[cfg(feature = "springs")]
            if let Some(s) = self.springs.as_mut().filter(|s| s.active()) {
                s.run(model.skeleton(), &mut self.placed, &mut self.joints, self.world)?;
            }
        } else {
            crate::jobs::local_to_model(model.skeleton(), &self.pose, &mut self.joints)?;
        }
        let dqs = outputs & outputs::DQS_ROWS != 0;
        for (s, skin) in model.skins.iter().enumerate() {
            let (Some(out), Some(dq), Some(scales)) =
                (self.palettes.get_mut(s), self.dual_quats.get_mut(s), self.scales.get_mut(s))
            else {
                continue;
            };
            if outputs & (outputs::PALETTES | outputs::LBS_ROWS) != 0 {
                SkinMatrixJob::new(&self.joints, &skin.inverse_bind, out).with_joints(&skin.joints).run()?;
            }
            if dqs {
                dq.resize(skin.joints.len(), DualQuat::IDENTITY);
                scales.resize(skin.joints.len(), SymMat3::IDENTITY);
                SkinDualQuatJob::new(&self.joints, &skin.inverse_bind, dq)
                    .with_joints(&skin.joints)
                    .with_scales(scales)
                    .run()?;
            }
        }
        if outputs & (outputs::LBS_ROWS | outputs::DQS_ROWS) != 0 {
            self.rows::<KEEP>(&model, outputs);
        }
        if outputs & outputs::MORPHS != 0 {
            self.morphs(&model)?;
        }
        Ok(())
    }

    /// Each draw part's shader rows: its palette's joints (or its mesh node for a rigid part)
    /// as three matrix rows, and as dual quaternion and scale factor.
    fn rows<const KEEP: u32>(&mut self, model: &Model, outputs: u32) {
        let outputs = outputs & KEEP;
        for (mi, parts) in model.meshes.iter().enumerate() {
            let mesh = model.asset.mesh(mi);
            let skin = mesh.and_then(|m| m.skin()).unwrap_or(0);
            let node = mesh.and_then(|m| m.node()).and_then(|n| self.joints.get(n)).copied().unwrap_or(Mat4::IDENTITY);
            let Some(outs) = self.parts.get_mut(mi) else { continue };
            let palette = self.palettes.get(skin).map_or(&[][..], Vec::as_slice);
            let dq = self.dual_quats.get(skin).map_or(&[][..], Vec::as_slice);
            let scales = self.scales.get(skin).map_or(&[][..], Vec::as_slice);
            for (part, out) in parts.iter().zip(outs.iter_mut()) {
                if outputs & outputs::LBS_ROWS != 0 {
                    out.lbs.clear();
                    if part.is_rigid() {
                        rows::push_matrix(&mut out.lbs, &node);
                    }
                    for &j in &part.map {
                        rows::push_matrix(&mut out.lbs, palette.get(j as usize).unwrap_or(&Mat4::IDENTITY));
                    }
                }
                if outputs & outputs::DQS_ROWS != 0 {
                    out.dqs.clear();
                    for &j in &part.map {
                        let d = dq.get(j as usize).copied().unwrap_or(DualQuat::IDENTITY);
                        let s = scales.get(j as usize).copied().unwrap_or(SymMat3::IDENTITY);
                        rows::push_dual_quat(&mut out.dqs, &d, Some(&s));
                    }
                }
            }
        }
    }

    /// Morph weights from the playing clips (the second blended in), and the morphed vertices
    /// of every draw part of a mesh with targets.
    // Out of line: a rarely used path, whose inlined copies only grow a wasm module.
    #[inline(never)]
    fn morphs(&mut self, model: &Model) -> Result<(), JobError> {
        let (first, second, weight) = if self.graph.is_some() || self.retarget.is_some() {
            (None, None, 0.0)
        } else {
            let w = self.weight();
            (self.clip(), self.second_clip().filter(|_| w > 0.0), w)
        };
        for (mi, weights) in self.morph_weights.iter_mut().enumerate() {
            let Some(targets) = model.asset.morph_targets(mi) else { continue };
            let sample = |at: Option<(usize, f32)>, out: &mut [f32]| {
                let mut cursor = 0u16;
                let tracks = at.and_then(|(c, _)| model.asset.morph_weights(c));
                MorphWeightsJob::new(targets, tracks, at.map_or(0.0, |a| a.1), &mut cursor, out).run()
            };
            sample(first, weights)?;
            if let Some(at) = second {
                let mut other = vec![0.0; weights.len()];
                sample(Some(at), &mut other)?;
                for (a, b) in weights.iter_mut().zip(other) {
                    *a += (b - *a) * weight;
                }
            }
            let (Some(parts), Some(outs)) = (model.meshes.get(mi), self.parts.get_mut(mi)) else { continue };
            for (part, out) in parts.iter().zip(outs.iter_mut()) {
                let Some(morph) = targets.part(part.source) else { continue };
                let Some(src) = model.asset.mesh(mi).and_then(|m| m.parts().nth(part.source)) else { continue };
                let n = src.num_vertices();
                let positions: Vec<Vec3<f32>> = (0..n).map(|v| src.position(v)).collect();
                let normals: Option<Vec<Vec3<f32>>> =
                    src.has_normals().then(|| (0..n).map(|v| src.normal(v)).collect());
                let mut moved = vec![Vec3::ZERO; n];
                let mut moved_normals = vec![Vec3::ZERO; if normals.is_some() { n } else { 0 }];
                let mut job = MorphJob::new(morph, weights, &positions, &mut moved);
                if let Some(nrm) = normals.as_deref() {
                    job = job.with_normals(nrm, &mut moved_normals);
                }
                job.run()?;
                out.morphed.clear();
                out.morphed.extend_from_slice(&part.vertices);
                for (k, &o) in part.origin.iter().enumerate() {
                    let Some(v) = out.morphed.get_mut(k * FLOATS_PER_VERTEX..k * FLOATS_PER_VERTEX + 6) else {
                        continue;
                    };
                    if let Some(p) = moved.get(o as usize) {
                        v[..3].copy_from_slice(&p.to_array());
                    }
                    if let Some(n) = moved_normals.get(o as usize) {
                        v[3..6].copy_from_slice(&n.to_array());
                    }
                }
            }
        }
        Ok(())
    }

    /// Draw part `part` of mesh `mesh`'s outputs: linear-blend rows, dual-quaternion rows,
    /// morphed vertices (each empty until computed).
    #[must_use]
    pub fn part(&self, mesh: usize, part: usize) -> Option<(&[f32], &[f32], &[f32])> {
        self.parts.get(mesh)?.get(part).map(|p| (p.lbs.as_slice(), p.dqs.as_slice(), p.morphed.as_slice()))
    }

    /// The local pose (SoA), as sampled: before foot placement and chain IK, which edit a copy.
    #[must_use]
    pub fn pose(&self) -> &[SoaTransform<f32>] {
        &self.pose
    }

    /// Mesh `mesh`'s morph weights (empty without targets).
    #[must_use]
    pub fn morph_weights(&self, mesh: usize) -> &[f32] {
        self.morph_weights.get(mesh).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests;
