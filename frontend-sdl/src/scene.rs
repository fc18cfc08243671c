//! The built-in default scene of `sinew demo`, independent of any renderer.
//!
//! Three rigs are built in code as [`Rig`]s and baked to [`Model`]s (no files):
//!
//! - the **tentacle**: a box strip on a 4-joint chain, its joint angles driven by `sin()` of
//!   time with a speed and an amplitude ([`SceneParams`]);
//! - a procedural **humanoid** (22 joints, capsules along the bones, smooth weights at the
//!   joints) with `idle`, `walk`, `run` and `wave` clips authored as LINEAR keys every 1/30 s,
//!   its feet planted by construction. The core's animation system drives it
//!   ([`Scene::character`]): a [`Controller`] crossfades walk and run in phase, lays `wave`
//!   over the right arm with a masked layer, and extracts the root motion that moves it
//!   around a closed path ([`PathFollower`]); [`IkTwoBoneJob`] holds its planted feet and
//!   [`IkAimJob`] turns its head towards a target;
//! - the **candy wrapper**: a cylinder on 2 joints whose second joint twists up to 180° about
//!   the long axis, drawn twice side by side, with linear blend skinning (which collapses) and
//!   dual-quaternion skinning (which keeps the volume).
//!
//! [`Scene::frame`] gives what to draw at a scene time: for each object its world matrix, the
//! baked mesh with its skin palettes (matrices and dual quaternions) for GPU skinning, or
//! [`DrawObject::skin_cpu`] for the skinned vertex buffers a software renderer needs, plus bone
//! lines, a ground grid and text labels. [`default_camera`] and [`SceneLight`] are the camera
//! and light both renderers use, so their images can be compared.

use std::cell::RefCell;
use std::f32::consts::{PI, TAU};

use sinew::controller::{ClipEntry, Controller, ControllerError, ControllerScratch, FadeCurve};
use sinew::ik::{apply_correction, IkAimJob, IkTwoBoneJob};
use sinew::job::{JobError, LocalToModelJob};
use sinew::math::{DualQuat, Mat4, Quat, SoaTransform, Transform, Vec3};
use sinew::root_motion::{Motion, PathEnd, PathFollower, RootMotionSettings, Segment};

use sinew_pipeline::bake::BakeOptions;
use sinew_pipeline::builtin::*;
use sinew_pipeline::model::{Model, ModelError, SkinnedPart, Skinning};
use sinew_pipeline::rig::Rig;

// ------------------------------------------------------------------------------------------
// Camera and light
// ------------------------------------------------------------------------------------------

/// An orbit camera: it looks at `target` from `distance` away, turned `yaw` about +Y (0 looks
/// from +Z towards −Z) and raised `pitch` above the horizon.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// Point looked at.
    pub target: Vec3<f32>,
    /// Turn about +Y, in radians.
    pub yaw: f32,
    /// Elevation above the horizon, in radians (kept within ±1.5).
    pub pitch: f32,
    /// Distance from the target.
    pub distance: f32,
    /// Vertical field of view, in radians.
    pub fov_y: f32,
}

impl Camera {
    /// The eye position.
    #[must_use]
    pub fn eye(&self) -> Vec3<f32> {
        let (sp, cp) = self.pitch.sin_cos();
        let (sy, cy) = self.yaw.sin_cos();
        self.target + Vec3::new(cp * sy, sp, cp * cy) * self.distance
    }
    /// The view matrix (world to eye).
    #[must_use]
    pub fn view(&self) -> Mat4<f32> {
        Mat4::look_at_rh(self.eye(), self.target, Vec3::Y)
    }
    /// The near and far planes: proportional to the distance, so any framing keeps depth
    /// precision.
    #[must_use]
    pub fn clip_planes(&self) -> (f32, f32) {
        (self.distance * 0.02, self.distance * 20.0)
    }
    /// The projection for a viewport `aspect` (width / height) wide, OpenGL clip conventions.
    #[must_use]
    pub fn projection(&self, aspect: f32) -> Mat4<f32> {
        let (near, far) = self.clip_planes();
        let aspect = if aspect.is_finite() && aspect > 0.0 { aspect } else { 1.0 };
        Mat4::perspective_rh_gl(self.fov_y, aspect, near, far)
    }
    /// Projection × view.
    #[must_use]
    pub fn view_proj(&self, aspect: f32) -> Mat4<f32> {
        self.projection(aspect) * self.view()
    }
    /// Turns the camera by `dyaw`, `dpitch` (radians), keeping the pitch within ±1.5.
    pub fn orbit(&mut self, dyaw: f32, dpitch: f32) {
        self.yaw += dyaw;
        self.pitch = (self.pitch + dpitch).clamp(-1.5, 1.5);
    }
    /// Multiplies the distance by `factor` (clamped to stay positive and finite).
    pub fn zoom(&mut self, factor: f32) {
        if factor.is_finite() && factor > 0.0 {
            self.distance = (self.distance * factor).clamp(1.0e-3, 1.0e6);
        }
    }
    /// A camera that shows a sphere (`center`, `radius`) whole from a slightly raised front
    /// view, in any viewport at least as wide as tall.
    #[must_use]
    pub fn framing(center: Vec3<f32>, radius: f32) -> Camera {
        let fov_y = 40f32.to_radians();
        let radius = if radius.is_finite() && radius > 0.0 { radius } else { 1.0 };
        Camera { target: center, yaw: 0.35, pitch: 0.3, distance: radius * 1.1 / (fov_y * 0.5).sin(), fov_y }
    }
}

/// The default scene's camera for a viewport `aspect` (width / height) wide: the tentacle on
/// the left, the character's path in the middle and the two candy wrappers on the right. At
/// 16:9 and wider the scene fills the width; narrower viewports move the camera back so the
/// whole scene stays in view.
#[must_use]
pub fn default_camera(aspect: f32) -> Camera {
    let wide = 16.0 / 9.0;
    let aspect = if aspect.is_finite() && aspect > 0.0 { aspect } else { wide };
    Camera {
        target: Vec3::new(-0.25, 0.7, -0.5),
        yaw: 0.0,
        pitch: 0.3,
        distance: 6.0 * (wide / aspect).max(1.0),
        fov_y: 45f32.to_radians(),
    }
}

/// The directional light both renderers use: a surface with unit normal `n̂` gets the level
/// `ambient + diffuse · max(0, n̂ · l̂)` (clamped to 1) times its color.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SceneLight {
    /// World-space direction from surfaces towards the light (any non-zero length).
    pub direction: Vec3<f32>,
    /// Level of surfaces facing away from the light.
    pub ambient: f32,
    /// Extra level of surfaces facing the light head-on.
    pub diffuse: f32,
}

impl SceneLight {
    /// From the viewer's upper left, `(−1, 1, 1)`; ambient 0.25, diffuse 0.75 (the software
    /// rasterizer's default light).
    pub const DEFAULT: SceneLight =
        SceneLight { direction: Vec3 { x: -1.0, y: 1.0, z: 1.0 }, ambient: 0.25, diffuse: 0.75 };
}

impl Default for SceneLight {
    fn default() -> Self {
        Self::DEFAULT
    }
}

// ------------------------------------------------------------------------------------------
// The character: controller, path, look-at
// ------------------------------------------------------------------------------------------

/// The character's simulation step, in seconds: [`Scene::character`] replays the controller
/// from t = 0 in steps of this length (cached), then one partial step to the asked time.
pub const CHARACTER_STEP: f32 = 1.0 / 60.0;
const STEPS_PER_SECOND: f64 = 60.0;

/// Length of the character's repeating schedule, in seconds.
pub const SCHEDULE_PERIOD: f32 = 20.0;

/// Controller slot of `idle`: [`CharacterFrame::slots`] is indexed by these; `idle`, `walk`
/// and `run` play on the base layer, `wave` on the upper one.
pub const IDLE: usize = 0;
/// Slot of `walk` (see [`IDLE`]).
pub const WALK: usize = 1;
/// Slot of `run` (see [`IDLE`]).
pub const RUN: usize = 2;
/// Slot of `wave` (see [`IDLE`]).
pub const WAVE: usize = 3;
/// The layer `wave` plays on, masked by [`WAVE_MASK`].
const WAVE_LAYER: usize = 1;

/// The upper-body layer's mask: the subtree of the right clavicle (the right shoulder, arm and
/// hand) with a fade-in of one level, so the clavicle takes half of `wave` and the arm from
/// the shoulder joint down all of it. The legs, spine, head and left arm keep the base layer's
/// locomotion.
pub const WAVE_MASK: sinew::mask::Channel = sinew::mask::Channel::subtree(humanoid::R_CLAVICLE, 1);

/// The character's controller: 22 joints, 4 slots, 2 layers, cursors for any clip.
type CharacterController =
    Controller<f32, { sinew::limits::soa_count(humanoid::COUNT) }, 4, 2, { 3 * humanoid::COUNT }>;

/// The working memory of the character's controller updates.
type CharacterScratch = ControllerScratch<f32, { sinew::limits::soa_count(humanoid::COUNT) }, 4, 2>;

/// What the schedule does to the controller.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Action {
    /// Crossfade the base layer to a slot (smoothstep), keeping the feet in phase with `sync`.
    Crossfade { slot: usize, seconds: f32, sync: bool },
    /// Fade the `wave` slot to a weight (smoothstep); fading in restarts the clip.
    Wave { weight: f32, seconds: f32 },
}

/// The schedule, repeated every [`SCHEDULE_PERIOD`]: walk, crossfade to run (phase-synced),
/// back to walk, wave while walking, slow down to idle, wave while standing, walk again.
const SCHEDULE: [(f32, Action); 8] = [
    (6.0, Action::Crossfade { slot: RUN, seconds: 0.6, sync: true }),
    (10.0, Action::Crossfade { slot: WALK, seconds: 0.6, sync: true }),
    (11.5, Action::Wave { weight: 1.0, seconds: 0.5 }),
    (14.5, Action::Wave { weight: 0.0, seconds: 0.5 }),
    (16.0, Action::Crossfade { slot: IDLE, seconds: 0.8, sync: false }),
    (16.8, Action::Wave { weight: 1.0, seconds: 0.5 }),
    (18.7, Action::Wave { weight: 0.0, seconds: 0.5 }),
    (19.2, Action::Crossfade { slot: WALK, seconds: 0.8, sync: false }),
];

/// Center of the character's path.
pub const PATH_CENTER: Vec3<f32> = Vec3 { x: 0.0, y: 0.0, z: -1.2 };
/// Length of each straight side of the character's path, in meters.
pub const PATH_STRAIGHT: f32 = 1.8;
/// Radius of the path's rounded ends, in meters.
pub const PATH_TURN_RADIUS: f32 = 0.7;
/// Segments of each rounded end.
const PATH_TURN_SEGMENTS: usize = 8;
/// How far ahead on the path the character points its heading, in meters: its heading is the
/// direction to that point, so it turns smoothly through the path's corners.
pub const HEADING_LOOK_AHEAD: f32 = 0.5;

/// The character's path: a closed polyline (its last point is its first) around
/// [`PATH_CENTER`], a stadium with two [`PATH_STRAIGHT`] sides along X joined by half
/// circles of [`PATH_TURN_RADIUS`] made of straight segments. The front side (nearer the
/// camera) is walked towards +X.
#[must_use]
pub fn character_path() -> Vec<Vec3<f32>> {
    let (h, r) = (PATH_STRAIGHT * 0.5, PATH_TURN_RADIUS);
    // The front straight's left end, then each half circle (its ends are the straights' ends).
    let first = PATH_CENTER + Vec3::new(-h, 0.0, r);
    let mut points = vec![first];
    for (cx, from) in [(h, 0.0f32), (-h, PI)] {
        for k in 0..=PATH_TURN_SEGMENTS {
            let a = from + PI * k as f32 / PATH_TURN_SEGMENTS as f32;
            points.push(PATH_CENTER + Vec3::new(cx + r * a.sin(), 0.0, r * a.cos()));
        }
    }
    // The last point is the first up to rounding: make it exact.
    if let Some(last) = points.last_mut() {
        *last = first;
    }
    points
}

/// Length of [`character_path`], in meters.
#[must_use]
pub fn path_length() -> f32 {
    character_path().windows(2).map(|w| (w[1] - w[0]).length()).sum()
}

/// Where the character looks when no [`LookRay`] is given: a point circling inside its path
/// at about head height, a function of the scene time `t`.
#[must_use]
pub fn scripted_look_target(t: f32) -> Vec3<f32> {
    let a = 0.45 * t;
    PATH_CENTER + Vec3::new(0.8 * a.cos(), 1.45 + 0.2 * (1.3 * t).sin(), 0.35 * a.sin())
}

/// A ray in world space (from the camera through the mouse cursor, say) that the character
/// looks along: its target is where the ray crosses the vertical plane facing the ray that
/// passes [`LOOK_PLANE_DISTANCE`] in front of the character's head.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LookRay {
    /// Start of the ray.
    pub origin: Vec3<f32>,
    /// Direction of the ray (any non-zero length).
    pub direction: Vec3<f32>,
}

/// Distance in front of the character's head of the plane a [`LookRay`] is projected on, in
/// meters.
pub const LOOK_PLANE_DISTANCE: f32 = 1.0;

impl LookRay {
    /// The point of the ray on the vertical plane facing it through `anchor` (the closest point
    /// to `anchor` for a vertical ray); `None` when that point is behind the origin or the ray
    /// is degenerate.
    #[must_use]
    pub fn target(&self, anchor: Vec3<f32>) -> Option<Vec3<f32>> {
        let d = self.direction.try_normalize()?;
        let n = Vec3::new(d.x, 0.0, d.z).try_normalize().filter(|n| n.dot(d) > 1.0e-3).unwrap_or(d);
        let s = (anchor - self.origin).dot(n) / d.dot(n);
        let p = self.origin + d * s;
        (s > 0.0 && p.is_finite()).then_some(p)
    }
}

/// Where the eyes are in the head joint's space (it faces +Z with +Y up).
const EYES: Vec3<f32> = Vec3 { x: 0.0, y: 0.11, z: 0.08 };
/// Horizontal angle from the character's facing up to which it looks at a target fully, and
/// beyond which it no longer does (the weight fades out smoothly in between), radians.
const LOOK_FULL: f32 = 90.0 * PI / 180.0;
const LOOK_LIMIT: f32 = 130.0 * PI / 180.0;
/// Share of the look-at turn taken by the neck; the head takes the rest.
const NECK_SHARE: f32 = 0.5;

/// The character at one moment: its pose, where it stands, and what drives it.
#[derive(Debug, Clone)]
pub struct CharacterFrame {
    /// Local pose (SoA): the controller's blend, then the foot locking and the look-at; the
    /// root in place (its motion moved the character along the path instead).
    pub pose: Vec<SoaTransform<f32>>,
    /// Model-space joint matrices of `pose`.
    pub model: Vec<Mat4<f32>>,
    /// Character to world: its place on the path, turned to its heading.
    pub world: Mat4<f32>,
    /// The controller's slots: `idle`, `walk` and `run` on the base layer, `wave` on the
    /// upper layer masked by [`WAVE_MASK`] (see [`SLOT_CLIPS`]).
    pub slots: [SlotInfo; 4],
    /// Distance moved along the path since t = 0: the sum of the root-motion displacements'
    /// lengths, in meters.
    pub distance: f64,
    /// The controller's root motion accumulated since t = 0.
    pub root_motion: Motion<f32>,
    /// Speed over the last whole simulation step, in meters per second.
    pub speed: f32,
    /// Position on the path (on the ground).
    pub position: Vec3<f32>,
    /// Heading about +Y, radians (0 faces +Z).
    pub heading: f32,
    /// Whether the left and right feet are planted: held where they touched down by
    /// [`IkTwoBoneJob`] (a lifted foot's target then returns to the animation over 0.15 s).
    pub feet_locked: [bool; 2],
    /// What the head looks at, in world space.
    pub look_target: Vec3<f32>,
    /// Weight of the look-at: 1 for targets within 90° of the character's facing
    /// (horizontally), fading smoothly to 0 at 130° and beyond.
    pub look_weight: f32,
}

/// Names of the clips in the character's controller slots, by slot.
pub const SLOT_CLIPS: [&str; 4] = ["idle", "walk", "run", "wave"];

/// One of the character's controller slots at a moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlotInfo {
    /// Its weight in its layer, 0 to 1.
    pub weight: f32,
    /// Its player's clip time, in seconds.
    pub time: f32,
    /// Its player's position in the cycle, 0 to 1.
    pub phase: f32,
}

/// Seconds over which a lifted foot's IK target returns from where it was planted to the
/// animation.
const FOOT_RELEASE: f32 = 0.15;
/// Height above its standing height within which an ankle counts as touching the ground, in
/// meters.
const FOOT_CONTACT: f32 = 0.02;
/// Longest hip-to-lock distance a locked foot keeps, as a share of the leg's length.
const FOOT_LOCK_REACH: f32 = 0.995;

/// Foot locking: while a foot is planted, two-bone IK holds its ankle where it touched down.
#[derive(Debug, Clone, Copy, PartialEq)]
enum FootLock {
    /// The foot follows the animation.
    Free,
    /// The foot is planted: its ankle stays at this world position.
    Locked(Vec3<f32>),
    /// The foot lifted off: its target returns to the animation, the world offset between the
    /// lock and the animated ankle at lift-off fading out over [`FOOT_RELEASE`].
    Releasing { offset: Vec3<f32>, elapsed: f32 },
}

impl FootLock {
    /// The ankle's world target given the animated ankle, `None` when free.
    fn target(&self, animated: Vec3<f32>) -> Option<Vec3<f32>> {
        match *self {
            FootLock::Free => None,
            FootLock::Locked(p) => Some(p),
            FootLock::Releasing { offset, elapsed } => {
                Some(animated + offset * (1.0 - smoothstep(elapsed / FOOT_RELEASE)))
            }
        }
    }

    /// The next state after `dt` seconds, with the foot `planted` or not now and its hip joint
    /// at `hip` (world space). A free foot locks only once its animated ankle is within
    /// [`FOOT_CONTACT`] of the ground (so a blend that shortens the swing does not pin a raised
    /// foot); a locked one is released when it lifts, or when the lock gets out of the leg's
    /// reach (the body moved on further than the animation's stride, after a crossfade).
    fn next(self, planted: bool, animated: Vec3<f32>, hip: Vec3<f32>, dt: f32) -> FootLock {
        let touching = animated.y <= ANKLE_HEIGHT + FOOT_CONTACT;
        let reach = FOOT_LOCK_REACH * (THIGH_LENGTH + SHIN_LENGTH);
        match self {
            FootLock::Locked(p) if planted && (p - hip).length() <= reach => FootLock::Locked(p),
            FootLock::Locked(p) => FootLock::Releasing { offset: p - animated, elapsed: 0.0 },
            FootLock::Releasing { offset, elapsed } if elapsed + dt < FOOT_RELEASE => {
                FootLock::Releasing { offset, elapsed: elapsed + dt }
            }
            FootLock::Releasing { .. } => FootLock::Free,
            // Touchdown: lock where the foot is.
            FootLock::Free if planted && touching => FootLock::Locked(animated),
            FootLock::Free => FootLock::Free,
        }
    }
}

/// Whether the foot on `side` (+1 left, −1 right) is on the ground in the controller's blend:
/// only while walk and run alone drive the legs (no idle blended in), by the phase of the
/// heavier one (they are phase-synced while crossfading) and the weighted duty of their gaits.
fn foot_planted(c: &CharacterController, side: f32) -> bool {
    if c.weight(IDLE).unwrap_or(0.0) > 0.0 {
        return false;
    }
    let (mut duty, mut total, mut lead) = (0.0, 0.0, (0.0f32, 0.0f32));
    for (slot, gait) in [(WALK, WALK_GAIT), (RUN, RUN_GAIT)] {
        let w = c.weight(slot).unwrap_or(0.0);
        if w > 0.0 {
            duty += w * gait.duty;
            total += w;
            if w > lead.0 {
                lead = (w, c.player(slot).map_or(0.0, |p| p.normalized()));
            }
        }
    }
    total > 0.0 && (lead.1 + if side > 0.0 { 0.0 } else { 0.5 }).rem_euclid(1.0) < duty / total
}

/// The character's animation state at a whole simulation step.
#[derive(Debug, Clone)]
struct Sim {
    step: u64,
    controller: Box<CharacterController>,
    follower: PathFollower<f32>,
    /// Left and right foot locks.
    feet: [FootLock; 2],
    distance: f64,
    speed: f32,
}

/// Where the character stands after a step, and its pose before IK.
struct Placement {
    world: Mat4<f32>,
    position: Vec3<f32>,
    heading: f32,
    /// Model matrices of the controller's pose.
    joints: Vec<Mat4<f32>>,
}

/// Replayed states kept to seek backwards without replaying from the start.
#[derive(Debug)]
struct SimCache {
    current: Sim,
    checkpoints: Vec<Sim>,
}

/// Steps between two checkpoints (4 s), and the most checkpoints kept.
const CHECKPOINT_STEPS: u64 = 240;
const MAX_CHECKPOINTS: usize = 64;

/// The character's clips, path and simulation cache.
#[derive(Debug)]
struct Character {
    /// Model clip indices of `idle`, `walk`, `run`, `wave`: the controller's clip list.
    clips: [usize; 4],
    path: Vec<Segment<f32>>,
    start: Sim,
    cache: RefCell<SimCache>,
    /// Shared by every controller update.
    scratch: RefCell<Box<CharacterScratch>>,
}

impl Character {
    fn new(model: &Model) -> Result<Character, SceneError> {
        let find = |name: &'static str| model.find_clip(name).ok_or(SceneError::MissingClip(name));
        let clips = [find("idle")?, find("walk")?, find("run")?, find("wave")?];
        let points = character_path();
        let mut path = vec![Segment::new(Vec3::ZERO, Vec3::ZERO); points.len() - 1];
        Segment::polyline(&points, &mut path).map_err(SceneError::Job)?;
        let asset = model.asset();
        let mut c = Box::new(CharacterController::new());
        for (slot, &clip) in clips.iter().enumerate() {
            let layer = if slot == WAVE { WAVE_LAYER } else { 0 };
            let entry = asset.clip(clip).ok_or(SceneError::MissingClip(SLOT_CLIPS[slot]))?;
            c.assign(slot, layer, slot, &entry).map_err(SceneError::Animation)?;
        }
        c.set_layer_mask(WAVE_LAYER, model.skeleton(), &[WAVE_MASK], false).map_err(SceneError::Animation)?;
        c.set_root_motion(Some(RootMotionSettings { joint: humanoid::ROOT, ..RootMotionSettings::default() }));
        c.set_weight(WALK, 1.0).map_err(SceneError::Animation)?;
        let start = Sim {
            step: 0,
            controller: c,
            follower: PathFollower::new(PathEnd::Loop),
            feet: [FootLock::Free; 2],
            distance: 0.0,
            speed: 0.0,
        };
        let cache = RefCell::new(SimCache { current: start.clone(), checkpoints: Vec::new() });
        Ok(Character { clips, path, start, cache, scratch: RefCell::new(Box::new(CharacterScratch::new())) })
    }

    /// The state at whole step `n`, replayed from the nearest cached state before it.
    fn state_at(&self, model: &Model, n: u64) -> Result<Sim, SceneError> {
        let mut cache = self.cache.borrow_mut();
        if cache.current.step > n {
            let restart = cache.checkpoints.iter().rev().find(|s| s.step <= n).cloned();
            cache.current = restart.unwrap_or_else(|| self.start.clone());
        }
        let mut scratch = model.skeleton().rest_pose().to_vec();
        while cache.current.step < n {
            let step = cache.current.step;
            if step % CHECKPOINT_STEPS == 0 {
                if let Err(at) = cache.checkpoints.binary_search_by_key(&step, |s| s.step) {
                    let snapshot = cache.current.clone();
                    cache.checkpoints.insert(at, snapshot);
                    if cache.checkpoints.len() > MAX_CHECKPOINTS {
                        cache.checkpoints.remove(0);
                    }
                }
            }
            self.advance(&mut cache.current, model, CHARACTER_STEP, &mut scratch)?;
            cache.current.step += 1;
        }
        Ok(cache.current.clone())
    }

    /// Applies the schedule's actions at the state's step, advances the controller by `dt` into
    /// `pose`, moves along the path by the root motion and updates the foot locks.
    fn advance(
        &self,
        sim: &mut Sim,
        model: &Model,
        dt: f32,
        pose: &mut [SoaTransform<f32>],
    ) -> Result<Placement, SceneError> {
        let period = (SCHEDULE_PERIOD as f64 * STEPS_PER_SECOND).round() as u64;
        let c = &mut sim.controller;
        for (time, action) in SCHEDULE {
            if (time as f64 * STEPS_PER_SECOND).round() as u64 != sim.step % period {
                continue;
            }
            let r = match action {
                Action::Crossfade { slot, seconds, sync } => c.crossfade(slot, seconds, FadeCurve::SmoothStep, sync),
                Action::Wave { weight, seconds } => {
                    if weight > 0.0 {
                        if let Some(p) = c.player_mut(WAVE) {
                            p.rewind();
                        }
                    }
                    c.fade_to(WAVE, weight, seconds, FadeCurve::SmoothStep)
                }
            };
            r.map_err(SceneError::Animation)?;
        }
        let asset = model.asset();
        let mut entries = Vec::with_capacity(self.clips.len());
        for (slot, &i) in self.clips.iter().enumerate() {
            entries.push(ClipEntry::new(asset.clip(i).ok_or(SceneError::MissingClip(SLOT_CLIPS[slot]))?));
        }
        let mut scratch = self.scratch.borrow_mut();
        c.update(dt, &entries, model.skeleton(), &mut scratch, pose, |_| {}).map_err(SceneError::Animation)?;
        let moved = c.root_motion_delta().planar_length();
        let at = sim.follower.advance(&self.path, moved).map_err(SceneError::Job)?;
        sim.distance += moved as f64;
        if dt >= CHARACTER_STEP {
            sim.speed = moved / dt;
        }
        // Heading: towards the point HEADING_LOOK_AHEAD further on the path.
        let mut ahead = sim.follower;
        let next = ahead.advance(&self.path, HEADING_LOOK_AHEAD).map_err(SceneError::Job)?;
        let d = next.position - at.position;
        let heading = if d.x != 0.0 || d.z != 0.0 { d.x.atan2(d.z) } else { at.heading };
        let world = Mat4::from_trs(at.position, ry(heading), Vec3::ONE);
        let mut joints = Vec::new();
        model.world(pose, &mut joints).map_err(SceneError::Job)?;
        for (k, (side, thigh)) in [(1.0f32, humanoid::L_THIGH), (-1.0, humanoid::R_THIGH)].into_iter().enumerate() {
            let at = |j: usize| world.transform_point3(joints.get(j).copied().unwrap_or(Mat4::IDENTITY).translation());
            sim.feet[k] = sim.feet[k].next(foot_planted(c, side), at(thigh + 2), at(thigh), dt);
        }
        Ok(Placement { world, position: at.position, heading, joints })
    }

    /// The character at scene time `t` (negative or non-finite times read as 0), looking at
    /// `look` (a ray) or at [`scripted_look_target`].
    fn at(&self, model: &Model, t: f32, look: Option<LookRay>) -> Result<CharacterFrame, SceneError> {
        let t = if t.is_finite() { t.max(0.0) as f64 } else { 0.0 };
        let n = (t * STEPS_PER_SECOND).floor() as u64;
        let rest = ((t - n as f64 / STEPS_PER_SECOND) as f32).clamp(0.0, CHARACTER_STEP);
        let mut sim = self.state_at(model, n)?;
        let mut pose = model.skeleton().rest_pose().to_vec();
        let Placement { world, position, heading, mut joints } = self.advance(&mut sim, model, rest, &mut pose)?;

        // Planted feet stay where they touched down.
        let inverse = world.inverse().ok_or(SceneError::Job(JobError::InvalidTransform))?;
        for (k, thigh) in [humanoid::L_THIGH, humanoid::R_THIGH].into_iter().enumerate() {
            let ankle = world.transform_point3(joints.get(thigh + 2).copied().unwrap_or(Mat4::IDENTITY).translation());
            if let Some(target) = sim.feet[k].target(ankle) {
                plant_foot(model, &mut pose, &mut joints, thigh, inverse.transform_point3(target))?;
            }
        }

        let head = joints.get(humanoid::HEAD).copied().unwrap_or(Mat4::IDENTITY);
        let eyes = world.transform_point3(head.transform_point3(EYES));
        let forward = Vec3::new(heading.sin(), 0.0, heading.cos());
        let look_target = look
            .and_then(|r| r.target(eyes + forward * LOOK_PLANE_DISTANCE))
            .unwrap_or_else(|| scripted_look_target(t as f32));
        let look_weight = look_at(model, &mut pose, &mut joints, &world, look_target)?;
        let c = &sim.controller;
        Ok(CharacterFrame {
            pose,
            model: joints,
            world,
            slots: core::array::from_fn(|i| SlotInfo {
                weight: c.weight(i).unwrap_or(0.0),
                time: c.player(i).map_or(0.0, |p| p.time()),
                phase: c.player(i).map_or(0.0, |p| p.normalized()),
            }),
            distance: sim.distance,
            root_motion: c.root_motion_total(),
            speed: sim.speed,
            position,
            heading,
            feet_locked: sim.feet.map(|f| matches!(f, FootLock::Locked(_))),
            look_target,
            look_weight,
        })
    }
}

/// The rotation of a rigid model matrix.
fn rotation_of(m: &Mat4<f32>) -> Quat<f32> {
    let col = |i: usize| Vec3::new(m.cols[i][0], m.cols[i][1], m.cols[i][2]).normalize_or_zero();
    Quat::from_mat3_cols([col(0), col(1), col(2)]).normalize()
}

/// Puts the ankle of the leg starting at `thigh` (thigh, shin, foot) on `target` (model space)
/// with [`IkTwoBoneJob`], the knee kept in its animated plane, and keeps the foot's animated
/// model-space orientation (flat on the ground while planted). Updates `pose` and `joints`.
fn plant_foot(
    model: &Model,
    pose: &mut [SoaTransform<f32>],
    joints: &mut [Mat4<f32>],
    thigh: usize,
    target: Vec3<f32>,
) -> Result<(), SceneError> {
    let (shin, foot) = (thigh + 1, thigh + 2);
    let get = |joints: &[Mat4<f32>], j: usize| joints.get(j).copied().ok_or(SceneError::Job(JobError::OutputTooSmall));
    let (hip_m, knee_m, ankle_m) = (get(joints, thigh)?, get(joints, shin)?, get(joints, foot)?);
    // The knee's direction away from the hip-ankle line, else the character's forward.
    let (hip, knee, ankle) = (hip_m.translation(), knee_m.translation(), ankle_m.translation());
    let axis = (ankle - hip).normalize_or_zero();
    let pole = (knee - hip - axis * (knee - hip).dot(axis)).try_normalize().unwrap_or(Vec3::Z);
    let (mut start, mut mid, mut reached) = (Quat::IDENTITY, Quat::IDENTITY, false);
    IkTwoBoneJob {
        target,
        pole_vector: pole,
        mid_axis: Vec3::X,
        twist_angle: 0.0,
        soften: 1.0,
        weight: 1.0,
        start_joint: &hip_m,
        mid_joint: &knee_m,
        end_joint: &ankle_m,
        start_correction: &mut start,
        mid_correction: &mut mid,
        reached: &mut reached,
    }
    .run()?;
    apply_correction(pose, thigh, start)?;
    apply_correction(pose, shin, mid)?;
    let l2m = |pose: &[SoaTransform<f32>], joints: &mut [Mat4<f32>], from: usize| {
        LocalToModelJob {
            skeleton: model.skeleton(),
            root: None,
            input: pose,
            output: joints,
            from: Some(from),
            to: None,
        }
        .run()
    };
    l2m(pose, joints, thigh)?;
    // The foot's local rotation that gives back its animated model rotation under the new shin.
    let local = (rotation_of(&get(joints, shin)?).conjugate() * rotation_of(&ankle_m)).normalize();
    let soa = pose.get_mut(foot / 4).ok_or(SceneError::Job(JobError::JointIndexOutOfRange))?;
    soa.rotation.set_lane(foot % 4, local);
    l2m(pose, joints, foot)?;
    Ok(())
}

/// Turns the neck and head of the humanoid posed by `pose` (model matrices `joints`, placed by
/// `world`) towards `target` (world space) with [`IkAimJob`]: the neck takes [`NECK_SHARE`]
/// of the turn, the head the rest, so the eyes' forward ray passes through the target. The
/// weight fades out for targets behind the character. Updates `pose` and `joints`; returns
/// the weight.
fn look_at(
    model: &Model,
    pose: &mut [SoaTransform<f32>],
    joints: &mut [Mat4<f32>],
    world: &Mat4<f32>,
    target: Vec3<f32>,
) -> Result<f32, SceneError> {
    use humanoid::{HEAD, NECK};
    let inverse = world.inverse().ok_or(SceneError::Job(JobError::InvalidTransform))?;
    let target = inverse.transform_point3(target);
    let head = *joints.get(HEAD).ok_or(SceneError::Job(JobError::OutputTooSmall))?;
    let to = target - head.translation();
    let angle = to.x.abs().atan2(to.z);
    let weight = 1.0 - smoothstep((angle - LOOK_FULL) / (LOOK_LIMIT - LOOK_FULL));
    if weight <= 0.0 {
        return Ok(0.0);
    }
    for (joint, share) in [(NECK, NECK_SHARE), (HEAD, 1.0)] {
        let head = *joints.get(HEAD).ok_or(SceneError::Job(JobError::OutputTooSmall))?;
        let m = *joints.get(joint).ok_or(SceneError::Job(JobError::OutputTooSmall))?;
        let inv = m.inverse().ok_or(SceneError::Job(JobError::InvalidTransform))?;
        let (mut correction, mut reached) = (Quat::IDENTITY, false);
        IkAimJob {
            target,
            forward: inv.transform_vector3(head.transform_vector3(Vec3::Z)),
            up: inv.transform_vector3(head.transform_vector3(Vec3::Y)),
            offset: inv.transform_point3(head.transform_point3(EYES)),
            pole_vector: Vec3::Y,
            twist_angle: 0.0,
            weight: share * weight,
            joint: &m,
            joint_correction: &mut correction,
            reached: &mut reached,
        }
        .run()
        .map_err(SceneError::Job)?;
        apply_correction(pose, joint, correction).map_err(SceneError::Job)?;
        LocalToModelJob {
            skeleton: model.skeleton(),
            root: None,
            input: pose,
            output: joints,
            from: Some(joint),
            to: None,
        }
        .run()
        .map_err(SceneError::Job)?;
    }
    Ok(weight)
}

// ------------------------------------------------------------------------------------------
// The scene
// ------------------------------------------------------------------------------------------

/// Index of the tentacle in [`Scene::models`].
pub const TENTACLE: usize = 0;
/// Index of the humanoid in [`Scene::models`].
pub const CHARACTER: usize = 1;
/// Index of the candy wrapper in [`Scene::models`].
pub const TWIST: usize = 2;

/// Where the tentacle's base stands.
pub const TENTACLE_POSITION: Vec3<f32> = Vec3 { x: -2.2, y: 0.0, z: 0.0 };
/// Where the linear-blend candy wrapper stands.
pub const TWIST_LBS_POSITION: Vec3<f32> = Vec3 { x: 1.95, y: 0.0, z: 0.3 };
/// Where the dual-quaternion candy wrapper stands.
pub const TWIST_DQS_POSITION: Vec3<f32> = Vec3 { x: 2.75, y: 0.0, z: 0.3 };

/// Range of the tentacle speed slider, in cycles per second.
pub const TENTACLE_SPEED_RANGE: (f32, f32) = (0.0, 2.0);
/// Range of the tentacle amplitude slider, in radians per joint.
pub const TENTACLE_AMPLITUDE_RANGE: (f32, f32) = (0.0, 1.2);

/// The scene's interactive settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SceneParams {
    /// Tentacle wave frequency, in cycles per second.
    pub tentacle_speed: f32,
    /// Tentacle joint swing, in radians.
    pub tentacle_amplitude: f32,
    /// Whether [`Frame::bones`] holds the skeletons.
    pub show_bones: bool,
    /// Skinning of the tentacle and the character (the candy wrappers show both).
    pub skinning: Skinning,
    /// What the character looks at: along this ray (the mouse cursor's), or at
    /// [`scripted_look_target`] when `None`.
    pub look_ray: Option<LookRay>,
}

impl Default for SceneParams {
    fn default() -> Self {
        SceneParams {
            tentacle_speed: 0.5,
            tentacle_amplitude: 0.6,
            show_bones: false,
            skinning: Skinning::Lbs,
            look_ray: None,
        }
    }
}

/// Why the scene could not be built.
#[derive(Debug)]
pub enum SceneError {
    /// A rig failed to bake or load.
    Model(ModelError),
    /// A built-in clip is missing after baking (an internal error).
    MissingClip(&'static str),
    /// The character's controller refused a call (an internal error).
    Animation(ControllerError),
    /// A pose did not fit its skeleton (an internal error).
    Job(JobError),
}

impl std::fmt::Display for SceneError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Model(e) => write!(f, "{e}"),
            Self::MissingClip(c) => write!(f, "built-in clip '{c}' is missing"),
            Self::Animation(e) => write!(f, "character: {e}"),
            Self::Job(e) => write!(f, "pose: {e}"),
        }
    }
}

impl std::error::Error for SceneError {}

impl From<JobError> for SceneError {
    fn from(e: JobError) -> Self {
        Self::Job(e)
    }
}

/// One skinned mesh to draw.
#[derive(Debug, Clone)]
pub struct DrawObject<'a> {
    /// The model.
    pub model: &'a Model,
    /// Index of the model in its owner's list (a key for cached GPU buffers).
    pub model_index: usize,
    /// Mesh index in the model.
    pub mesh: usize,
    /// Object to world.
    pub world: Mat4<f32>,
    /// Model-space joint matrices (rigid meshes follow their node's).
    pub joints: Vec<Mat4<f32>>,
    /// Skin palette (model × inverse bind) of the mesh's skin; empty for rigid meshes.
    pub palette: Vec<Mat4<f32>>,
    /// The same palette as dual quaternions.
    pub dq_palette: Vec<DualQuat<f32>>,
    /// Skinning method.
    pub skinning: Skinning,
    /// Base color, RGBA 0 to 1.
    pub color: [f32; 4],
}

impl DrawObject<'_> {
    /// The skinned vertices of every part of the mesh, in object space (apply
    /// [`DrawObject::world`]), for a renderer that skins on the CPU.
    ///
    /// # Errors
    ///
    /// A [`JobError`] when the palette does not fit the mesh.
    pub fn skin_cpu(&self) -> Result<Vec<SkinnedPart>, JobError> {
        self.model.skin_mesh(self.mesh, &self.joints, &self.palette, &self.dq_palette, self.skinning)
    }
}

/// A text label anchored at a world position.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// Anchor, in world space.
    pub position: Vec3<f32>,
    /// The text.
    pub text: String,
}

/// Everything to draw at one moment.
#[derive(Debug, Clone, Default)]
pub struct Frame<'a> {
    /// Skinned meshes.
    pub objects: Vec<DrawObject<'a>>,
    /// Bone lines (joint to parent) in world space, drawn over everything.
    pub bones: Vec<[Vec3<f32>; 2]>,
    /// Ground grid lines and other markers (the character's look target) in world space,
    /// depth-tested.
    pub grid: Vec<[Vec3<f32>; 2]>,
    /// Labels.
    pub labels: Vec<Label>,
}

/// Appends one [`DrawObject`] per mesh of `model` posed by `pose` (local, SoA) and placed by
/// `world`, and, when `bones` is given, its bone lines in world space.
///
/// `color` overrides the meshes' own colors.
///
/// # Errors
///
/// A [`JobError`] when `pose` does not fit the skeleton.
#[allow(clippy::too_many_arguments)]
pub fn push_model<'a>(
    frame: &mut Frame<'a>,
    model: &'a Model,
    model_index: usize,
    pose: &[SoaTransform<f32>],
    world: Mat4<f32>,
    skinning: Skinning,
    color: Option<[f32; 4]>,
    bones: bool,
) -> Result<(), JobError> {
    let mut joints = Vec::new();
    model.world(pose, &mut joints)?;
    let asset = model.asset();
    for mesh in 0..asset.num_meshes() {
        let Some(m) = asset.mesh(mesh) else { continue };
        let (palette, dq_palette) = match m.skin() {
            Some(s) => (model.palette(&joints, s)?, model.dq_palette(&joints, s)?),
            None => (Vec::new(), Vec::new()),
        };
        let c = m.color();
        frame.objects.push(DrawObject {
            model,
            model_index,
            mesh,
            world,
            joints: joints.clone(),
            palette,
            dq_palette,
            skinning,
            color: color.unwrap_or([c[0], c[1], c[2], c[3]].map(|v| v as f32 / 255.0)),
        });
    }
    if bones {
        let skeleton = model.skeleton();
        for (j, m) in joints.iter().enumerate() {
            if let Some(p) = skeleton.parent(j).and_then(|p| joints.get(p)) {
                frame.bones.push([world.transform_point3(p.translation()), world.transform_point3(m.translation())]);
            }
        }
    }
    Ok(())
}

/// A ground grid on `y = 0`: lines every `step` over `[x0, x1] × [z0, z1]`.
#[must_use]
pub fn ground_grid(x0: f32, x1: f32, z0: f32, z1: f32, step: f32) -> Vec<[Vec3<f32>; 2]> {
    let mut out = Vec::new();
    if !(step > 0.0 && x1 >= x0 && z1 >= z0) {
        return out;
    }
    let nx = ((x1 - x0) / step).round() as i32;
    let nz = ((z1 - z0) / step).round() as i32;
    for i in 0..=nx {
        let x = x0 + i as f32 * step;
        out.push([Vec3::new(x, 0.0, z0), Vec3::new(x, 0.0, z1)]);
    }
    for i in 0..=nz {
        let z = z0 + i as f32 * step;
        out.push([Vec3::new(x0, 0.0, z), Vec3::new(x1, 0.0, z)]);
    }
    out
}

/// The tentacle's local pose at time `t`: joint `i` swings `amplitude · sin(2π·speed·t − 0.9 i)`
/// about Z (half as much at the base) and a third of that, slower, about X.
#[must_use]
pub fn tentacle_pose(model: &Model, t: f32, speed: f32, amplitude: f32) -> Vec<SoaTransform<f32>> {
    let mut pose = model.skeleton().rest_pose().to_vec();
    let w = TAU * speed;
    for i in 0..model.skeleton().num_joints().min(TENTACLE_JOINTS) {
        let Some(rest) = model.skeleton().rest_transform(i) else { continue };
        let k = if i == 0 { 0.5 } else { 1.0 };
        let bend = k * amplitude * (w * t - 0.9 * i as f32).sin();
        let sway = k * amplitude / 3.0 * (0.7 * w * t - 0.7 * i as f32).sin();
        let tr = Transform::new(rest.translation, rz(bend) * rx(sway), rest.scale);
        if let Some(g) = pose.get_mut(i / 4) {
            g.set_lane(i % 4, &tr);
        }
    }
    pose
}

/// The candy wrapper's twist angle at time `t`: 0 → π → 0 over [`TWIST_PERIOD`].
#[must_use]
pub fn twist_angle(t: f32) -> f32 {
    PI * (0.5 - 0.5 * (TAU * t / TWIST_PERIOD).cos())
}

/// The candy wrapper's local pose with its second joint twisted by `angle` about +Y.
#[must_use]
pub fn twist_pose(model: &Model, angle: f32) -> Vec<SoaTransform<f32>> {
    let mut pose = model.skeleton().rest_pose().to_vec();
    if let (Some(rest), Some(g)) = (model.skeleton().rest_transform(1), pose.first_mut()) {
        g.set_lane(1, &Transform::new(rest.translation, ry(angle), rest.scale));
    }
    pose
}

/// Half the size of the look-at target's marker, in meters.
const MARKER_SIZE: f32 = 0.06;

/// The built-in scene: the baked models, the character's animation state and the settings.
#[derive(Debug)]
pub struct Scene {
    models: Vec<Model>,
    character: Character,
    /// Interactive settings.
    pub params: SceneParams,
}

impl Scene {
    /// Builds and bakes the three rigs, splitting meshes into parts of at most `palette`
    /// joints (`None`: no limit) with at most 4 influences per vertex, and sets up the
    /// character's controller.
    ///
    /// # Errors
    ///
    /// [`SceneError::Model`] when baking fails (a `palette` of 1 cannot hold the triangles
    /// that blend two joints).
    pub fn new(palette: Option<usize>) -> Result<Scene, SceneError> {
        let opts = BakeOptions { palette, max_influences: 4, ..BakeOptions::default() };
        let bake = |rig: &Rig| Model::from_rig(rig, &opts).map_err(SceneError::Model);
        let models = vec![bake(&tentacle_rig())?, bake(&humanoid_rig())?, bake(&twist_rig())?];
        let character = Character::new(&models[CHARACTER])?;
        Ok(Scene { models, character, params: SceneParams::default() })
    }

    /// The baked models: [`TENTACLE`], [`CHARACTER`], [`TWIST`].
    #[must_use]
    pub fn models(&self) -> &[Model] {
        &self.models
    }

    /// The character at scene time `t` (seconds; negative or non-finite times read as 0) with
    /// the current [`SceneParams::look_ray`].
    ///
    /// Its [`Controller`] plays `idle`, `walk` and `run` on the base layer and `wave` on an
    /// upper layer masked by [`WAVE_MASK`], following the schedule (period
    /// [`SCHEDULE_PERIOD`]): walk, a phase-synced crossfade to run and back, a wave while
    /// walking, a crossfade to idle, a wave while standing, walk again. The root motion it
    /// extracts from the clips advances a [`PathFollower`] around [`character_path`] (the
    /// character faces the point [`HEADING_LOOK_AHEAD`] further on). While walk and run alone
    /// drive the legs, a foot on the ground is held where it touched down by
    /// [`IkTwoBoneJob`] (the clips plant their feet on straight lines up to key interpolation;
    /// the locks also keep them planted in turns), and [`IkAimJob`] turns the neck and head
    /// towards the look target.
    ///
    /// The state is a function of `t` alone: the controller is replayed from t = 0 in steps of
    /// [`CHARACTER_STEP`] (the states reached are cached, with checkpoints every 4 s for
    /// going backwards), then advanced by the remainder.
    ///
    /// # Errors
    ///
    /// A [`SceneError`] if the controller or a job refuses its inputs (not expected: the
    /// models are built here).
    pub fn character(&self, t: f32) -> Result<CharacterFrame, SceneError> {
        self.character.at(&self.models[CHARACTER], t, self.params.look_ray)
    }

    /// What to draw at scene time `t` (seconds) with the current [`SceneParams`]. The
    /// character's look target is drawn as a small cross among [`Frame::grid`]'s lines.
    ///
    /// # Errors
    ///
    /// As [`Scene::character`].
    pub fn frame(&self, t: f32) -> Result<Frame<'_>, SceneError> {
        let t = if t.is_finite() { t } else { 0.0 };
        let p = &self.params;
        let mut f = Frame { grid: ground_grid(-3.5, 3.5, -3.0, 1.5, 0.5), ..Frame::default() };
        let tentacle = &self.models[TENTACLE];
        let pose = tentacle_pose(tentacle, t, p.tentacle_speed, p.tentacle_amplitude);
        let at = |v: Vec3<f32>| Mat4::from_translation(v);
        push_model(&mut f, tentacle, TENTACLE, &pose, at(TENTACLE_POSITION), p.skinning, None, p.show_bones)?;

        let c = self.character(t)?;
        let character = &self.models[CHARACTER];
        push_model(&mut f, character, CHARACTER, &c.pose, c.world, p.skinning, None, p.show_bones)?;
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            f.grid.push([c.look_target - axis * MARKER_SIZE, c.look_target + axis * MARKER_SIZE]);
        }

        let twist = &self.models[TWIST];
        let pose = twist_pose(twist, twist_angle(t));
        let lbs_color = [0.9, 0.75, 0.3, 1.0];
        let dqs_color = [0.35, 0.8, 0.6, 1.0];
        push_model(&mut f, twist, TWIST, &pose, at(TWIST_LBS_POSITION), Skinning::Lbs, Some(lbs_color), p.show_bones)?;
        push_model(&mut f, twist, TWIST, &pose, at(TWIST_DQS_POSITION), Skinning::Dqs, Some(dqs_color), p.show_bones)?;
        let above = Vec3::new(0.0, TWIST_LENGTH + 0.25, 0.0);
        f.labels.push(Label { position: TWIST_LBS_POSITION + above, text: "LBS".into() });
        f.labels.push(Label { position: TWIST_DQS_POSITION + above, text: "DQS".into() });
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sinew::clip::RotationInterpolation;

    #[test]
    fn rigs_bake_into_parts_that_fit_the_palette() {
        // The rigs themselves are checked in `sinew_pipeline::builtin`'s tests.
        let scene = Scene::new(None).unwrap();
        let parts = |s: &Scene, m: usize| -> Vec<usize> {
            let a = s.models()[m].asset();
            a.mesh(0).unwrap().parts().map(|p| p.palette_len()).collect()
        };
        assert_eq!(parts(&scene, CHARACTER), vec![humanoid::COUNT]);
        // A small palette splits the character's mesh into parts that each fit it.
        let small = Scene::new(Some(6)).unwrap();
        let p = parts(&small, CHARACTER);
        assert!(p.len() > 3 && p.iter().all(|&n| n <= 6), "{p:?}");
        assert!(Scene::new(Some(1)).is_err());
    }

    /// Distance of skinned vertices from the cylinder axis at mid-height.
    fn mid_radius(scene: &Scene, skinning: Skinning, angle: f32) -> (f32, f32) {
        let m = &scene.models()[TWIST];
        let pose = twist_pose(m, angle);
        let mut f = Frame::default();
        push_model(&mut f, m, TWIST, &pose, Mat4::IDENTITY, skinning, None, false).unwrap();
        let parts = f.objects[0].skin_cpu().unwrap();
        let mid = TWIST_LENGTH * 0.5;
        let r: Vec<f32> = parts
            .iter()
            .flat_map(|p| p.positions.iter())
            .filter(|p| (p.y - mid).abs() < 1e-3)
            .map(|p| (p.x * p.x + p.z * p.z).sqrt())
            .filter(|&r| r > 1e-4 || skinning == Skinning::Lbs)
            .collect();
        (r.iter().copied().fold(f32::INFINITY, f32::min), r.iter().copied().fold(0.0, f32::max))
    }

    #[test]
    fn candy_wrapper_collapses_with_lbs_and_keeps_volume_with_dqs() {
        let scene = Scene::new(None).unwrap();
        let (_, lbs_max) = mid_radius(&scene, Skinning::Lbs, PI);
        let (dqs_min, _) = mid_radius(&scene, Skinning::Dqs, PI);
        assert!(lbs_max < 0.05 * TWIST_RADIUS, "LBS mid radius {lbs_max}");
        assert!(dqs_min > 0.99 * TWIST_RADIUS, "DQS mid radius {dqs_min}");
        // Untwisted, both keep the radius.
        assert!(mid_radius(&scene, Skinning::Lbs, 0.0).0 > 0.999 * TWIST_RADIUS);
        assert_eq!(twist_angle(0.0), 0.0);
        assert!((twist_angle(TWIST_PERIOD / 2.0) - PI).abs() < 1e-5);
    }

    /// World position of joint `j` of the character.
    fn joint_world(c: &CharacterFrame, j: usize) -> Vec3<f32> {
        c.world.transform_point3(c.model[j].translation())
    }

    fn horizontal(v: Vec3<f32>) -> f32 {
        Vec3::new(v.x, 0.0, v.z).length()
    }

    /// The point at arc length `s` along a polyline.
    fn point_at(points: &[Vec3<f32>], mut s: f32) -> Vec3<f32> {
        for w in points.windows(2) {
            let len = (w[1] - w[0]).length();
            if s <= len {
                return w[0].lerp(w[1], s / len);
            }
            s -= len;
        }
        *points.last().unwrap()
    }

    #[test]
    fn character_feet_do_not_slide() {
        let scene = Scene::new(None).unwrap();
        // One frame per simulation step over three schedule periods. A foot is planted while
        // walk or run plays alone at full weight and its phase is within the gait's duty (the
        // clips' ground contact, whatever the scene's foot locking does). A stance is whole when
        // it is seen from its touchdown (not entered at the end of a crossfade).
        #[derive(Default, Clone, Copy)]
        struct Stance {
            anchor: Option<Vec3<f32>>,
            gait: usize,
            heading: f32,
            turning: bool,
            whole: bool,
            slide: f32,
        }
        // [walk, run] × [straight, turning]: whole stances and their largest slide; and the
        // largest slide of partial stances.
        let mut count = [[0usize; 2]; 2];
        let mut worst = [[0.0f32; 2]; 2];
        let (mut partial, mut partial_worst) = (0, 0.0f32);
        let mut current = [Stance::default(); 2];
        let mut end = |s: &mut Stance| {
            if s.anchor.take().is_some() {
                if s.whole {
                    let turning = usize::from(s.turning);
                    count[s.gait][turning] += 1;
                    worst[s.gait][turning] = worst[s.gait][turning].max(s.slide);
                } else {
                    partial += 1;
                    partial_worst = partial_worst.max(s.slide);
                }
            }
        };
        for i in 0..=(3.0 * SCHEDULE_PERIOD * 60.0) as usize {
            let c = scene.character(i as f32 / 60.0).unwrap();
            let playing = [(WALK, WALK_GAIT), (RUN, RUN_GAIT)]
                .into_iter()
                .enumerate()
                .find(|(_, (slot, _))| c.slots[*slot].weight == 1.0 && c.slots[IDLE].weight == 0.0);
            for (k, (side, foot)) in [(1.0f32, humanoid::L_FOOT), (-1.0, humanoid::R_FOOT)].into_iter().enumerate() {
                let s = &mut current[k];
                let u = playing.map(|(gait, (slot, g))| {
                    (gait, (c.slots[slot].phase + if side > 0.0 { 0.0 } else { 0.5 }).rem_euclid(1.0), g)
                });
                match u {
                    Some((gait, u, g)) if u < g.duty && s.anchor.is_none_or(|_| s.gait == gait) => {
                        let p = joint_world(&c, foot);
                        if s.anchor.is_none() {
                            // A frame advances the phase by at most 1 / (60 × 0.7).
                            let whole = u < 1.0 / 42.0;
                            *s =
                                Stance { anchor: Some(p), gait, heading: c.heading, turning: false, whole, slide: 0.0 };
                        }
                        s.turning |= (c.heading - s.heading).abs() > 1e-5;
                        s.slide = s.slide.max(horizontal(p - s.anchor.unwrap_or(p)));
                    }
                    _ => end(s),
                }
            }
        }
        for s in &mut current {
            end(s);
        }
        for (g, name) in ["walk", "run"].into_iter().enumerate() {
            eprintln!(
                "{name}: planted ankle slides ≤ {:.2} mm over {} stances on straights, ≤ {:.2} mm over {} in turns",
                worst[g][0] * 1e3,
                count[g][0],
                worst[g][1] * 1e3,
                count[g][1]
            );
        }
        eprintln!("stances begun in a crossfade: {partial}, ankle slides ≤ {:.1} mm", partial_worst * 1e3);
        // The run covers a straight side in about two steps: its stances mostly see the heading
        // turn towards the next corner.
        assert!(count[0][0] >= 10 && count[0][1] >= 10 && count[1][0] + count[1][1] >= 10, "{count:?}");
        // Straight: the lock holds exactly. Turns: the lock holds until the leg cannot reach
        // it at the very end of the stance (the body turns away from the planted foot).
        assert!(worst[0][0] < 1.0e-3 && worst[1][0] < 1.0e-3, "{worst:?}");
        assert!(worst[0][1] < 6.0e-3 && worst[1][1] < 6.0e-3, "{worst:?}");
        // A stance that started under the other gait outlasts the leg's reach and is let go.
        assert!(partial >= 1 && partial_worst < 0.03, "{partial} {partial_worst}");
    }

    #[test]
    fn character_follows_its_path_by_its_root_motion() {
        let scene = Scene::new(None).unwrap();
        let points = character_path();
        let length = path_length();
        // Two straights, and two half circles of 8 chords each.
        assert!((length - (2.0 * PATH_STRAIGHT + 32.0 * PATH_TURN_RADIUS * (PI / 16.0).sin())).abs() < 1e-4);
        assert_eq!(points.first(), points.last());
        let mut worst = (0.0f32, 0.0f64);
        for i in 0..=1500 {
            let t = i as f32 / 50.0;
            let c = scene.character(t).unwrap();
            // On the path, at the arc length walked.
            let expected = point_at(&points, (c.distance as f32).rem_euclid(length));
            worst.0 = worst.0.max((c.position - expected).length());
            // The distance walked is the controller's root motion (it has no yaw: straight ahead).
            worst.1 = worst.1.max((c.root_motion.translation.z as f64 - c.distance).abs());
            assert!(c.root_motion.translation.x.abs() < 1e-6 && c.root_motion.yaw == 0.0);
            assert!((c.world.translation() - c.position).length() < 1e-6);
        }
        eprintln!(
            "path: position off the walked arc length ≤ {:.3} mm, root motion vs distance ≤ {:.3} mm",
            worst.0 * 1e3,
            worst.1 * 1e3
        );
        assert!(worst.0 < 1e-3 && worst.1 < 1e-3, "{worst:?}");
        // Speeds: the clips' root speed while walking, running; standing still while idle.
        let d = |t: f32| scene.character(t).unwrap().distance;
        let walk = (d(5.5) - d(0.5)) / 5.0;
        let run = (d(9.5) - d(7.0)) / 2.5;
        eprintln!("walks at {walk:.5} m/s, runs at {run:.5} m/s");
        assert!((walk - WALK_SPEED as f64).abs() < 1e-4, "{walk}");
        assert!((run - RUN_SPEED as f64).abs() < 1e-4, "{run}");
        assert!((d(18.8) - d(17.0)).abs() < 1e-9);
        let c = scene.character(3.0).unwrap();
        assert!((c.speed - WALK_SPEED).abs() < 1e-3, "{}", c.speed);
    }

    #[test]
    fn walk_run_crossfade_keeps_the_feet_in_phase() {
        let scene = Scene::new(None).unwrap();
        let mut crossfading = 0;
        for i in 0..=120 {
            let t = 5.9 + i as f32 / 120.0;
            let c = scene.character(t).unwrap();
            let (w, r) = (c.slots[WALK], c.slots[RUN]);
            assert!((w.weight + r.weight - 1.0).abs() < 1e-5, "t {t}");
            if w.weight > 0.0 && r.weight > 0.0 {
                crossfading += 1;
                let d = (w.phase - r.phase).abs();
                assert!(d.min(1.0 - d) < 1e-4, "t {t}: walk phase {} vs run phase {}", w.phase, r.phase);
            }
        }
        // 0.6 s of crossfade sampled at 120 Hz.
        assert!(crossfading >= 70, "{crossfading}");
    }

    #[test]
    fn wave_covers_the_right_arm_only() {
        let scene = Scene::new(None).unwrap();
        let m = &scene.models()[CHARACTER];
        let c = scene.character(13.0).unwrap();
        assert_eq!((c.slots[WALK].weight, c.slots[WAVE].weight), (1.0, 1.0));
        let sample = |clip: &str, t: f32| {
            let mut pose = Vec::new();
            let clip = m.find_clip(clip).unwrap();
            m.sample(Some(clip), t, RotationInterpolation::NlerpCorrected, &mut Vec::new(), &mut pose).unwrap();
            pose
        };
        let walk = sample("walk", c.slots[WALK].time);
        let wave = sample("wave", c.slots[WAVE].time);
        let lane = |p: &[SoaTransform<f32>], j: usize| p[j / 4].lane(j % 4);
        let skeleton = m.skeleton();
        let mut checked = [0; 3];
        use humanoid::*;
        for j in 0..COUNT {
            // The root is in place (root motion), the neck and head look at the target, the legs
            // hold the planted foot.
            if [ROOT, NECK, HEAD, L_THIGH, L_SHIN, L_FOOT, R_THIGH, R_SHIN, R_FOOT].contains(&j) {
                continue;
            }
            let got = lane(&c.pose, j).rotation;
            let weight: f32 = WAVE_MASK.weight(skeleton, j);
            let (a, b) = (lane(&walk, j).rotation, lane(&wave, j).rotation);
            let expected = if weight == 0.0 {
                checked[0] += 1;
                a
            } else if weight == 1.0 {
                checked[2] += 1;
                b
            } else {
                checked[1] += 1;
                assert_eq!(j, humanoid::R_CLAVICLE);
                a.nlerp(b, weight)
            };
            assert!(got.angle_between(expected) < 1e-4, "joint {j}: mask weight {weight}");
        }
        assert_eq!(checked, [9, 1, 3]);
        // The wave moves the arm: the hand is raised above the head.
        assert!(joint_world(&c, humanoid::R_HAND).y > joint_world(&c, humanoid::HEAD).y);
    }

    #[test]
    fn character_looks_at_its_target() {
        let mut scene = Scene::new(None).unwrap();
        let ray_miss = |c: &CharacterFrame| {
            let head = c.world * c.model[humanoid::HEAD];
            let eyes = head.transform_point3(EYES);
            let dir = head.transform_vector3(Vec3::Z).normalize_or_zero();
            let to = c.look_target - eyes;
            assert!(to.dot(dir) > 0.0);
            (to - dir * to.dot(dir)).length() / to.length()
        };
        let (mut looked, mut worst) = (0, 0.0f32);
        for i in 0..80 {
            let t = i as f32 * 0.25;
            let c = scene.character(t).unwrap();
            assert!((c.look_target - scripted_look_target(t)).length() < 1e-6);
            if c.look_weight == 1.0 {
                looked += 1;
                worst = worst.max(ray_miss(&c));
            }
        }
        eprintln!("look-at: {looked} of 80 frames at full weight, eyes' ray misses by ≤ {worst:.2e} × distance");
        // The target circles inside the path: beside the character or ahead of it about half the
        // time.
        assert!(looked > 35 && worst < 1e-3, "{looked} {worst}");
        // Along a ray: the target is on the ray, on the vertical plane facing it 1 m in front of
        // the head.
        let c0 = scene.character(2.0).unwrap();
        let eyes = c0.world.transform_point3(c0.model[humanoid::HEAD].transform_point3(EYES));
        let forward = Vec3::new(c0.heading.sin(), 0.0, c0.heading.cos());
        let goal = eyes + forward * 1.0 + Vec3::new(0.0, 0.3, 0.0) + forward.cross(Vec3::Y) * 0.4;
        let origin = Vec3::new(0.5, 2.0, 5.0);
        scene.params.look_ray = Some(LookRay { origin, direction: (goal - origin) * 3.0 });
        let c = scene.character(2.0).unwrap();
        // Depth along the ray's horizontal direction: that of the point 1 m ahead of the eyes
        // (the eyes before the look-at turn, which moves them by several centimeters).
        let n = Vec3::new(goal.x - origin.x, 0.0, goal.z - origin.z).normalize_or_zero();
        assert!((c.look_target - (eyes + forward)).dot(n).abs() < 0.1);
        let on_ray = (c.look_target - origin).cross((goal - origin).normalize_or_zero()).length();
        assert!(on_ray < 1e-4, "{on_ray}");
        assert_eq!(c.look_weight, 1.0);
        assert!(ray_miss(&c) < 1e-3);
        // The same pose apart from the neck and head.
        for j in 0..humanoid::COUNT {
            let (a, b) = (c.pose[j / 4].lane(j % 4), c0.pose[j / 4].lane(j % 4));
            assert_eq!(a == b, ![humanoid::NECK, humanoid::HEAD].contains(&j), "joint {j}");
        }
        // A target behind the character: no look.
        let behind = eyes - forward * 2.0;
        scene.params.look_ray = Some(LookRay { origin: behind + Vec3::new(0.0, 3.0, 0.0), direction: -Vec3::Y });
        let c = scene.character(2.0).unwrap();
        // A vertical ray: the target is its point level with the anchor.
        assert!(horizontal(c.look_target - behind) < 1e-4 && (c.look_target.y - behind.y).abs() < 0.05);
        assert_eq!(c.look_weight, 0.0);
        for j in [humanoid::NECK, humanoid::HEAD] {
            let w = c0.pose[j / 4].lane(j % 4).rotation;
            assert!(c.pose[j / 4].lane(j % 4).rotation.angle_between(w) > 1e-3, "joint {j} turned");
        }
        // A ray pointing away: back to the scripted target.
        scene.params.look_ray = Some(LookRay { origin, direction: origin - goal });
        assert!((scene.character(2.0).unwrap().look_target - scripted_look_target(2.0)).length() < 1e-6);
    }

    #[test]
    fn character_is_a_function_of_time_and_replays_fast() {
        let scene = Scene::new(None).unwrap();
        let start = std::time::Instant::now();
        let late = scene.character(59.9).unwrap();
        let cold = start.elapsed().as_secs_f64() * 1e3;
        let start = std::time::Instant::now();
        let frames = 600;
        for i in 0..frames {
            scene.character(59.9 + i as f32 / 60.0).unwrap();
        }
        let warm = start.elapsed().as_secs_f64() * 1e3 / frames as f64;
        let start = std::time::Instant::now();
        scene.character(41.3).unwrap();
        let back = start.elapsed().as_secs_f64() * 1e3;
        eprintln!("character: {cold:.1} ms to replay 59.9 s, {warm:.3} ms per frame playing on, {back:.1} ms to seek back to 41.3 s");
        assert!(cold < 2000.0 && back < cold, "{cold} {back}");
        // Any order of times gives what a fresh scene gives.
        let fresh = Scene::new(None).unwrap();
        for t in [30.0, 5.0, 59.9, 12.34, 5.0, 0.0, 30.0] {
            let (a, b) = (scene.character(t).unwrap(), fresh.character(t).unwrap());
            assert_eq!(a.pose, b.pose, "t {t}");
            assert_eq!(a.world, b.world, "t {t}");
            assert_eq!(a.distance, b.distance, "t {t}");
        }
        assert_eq!(scene.character(59.9).unwrap().pose, late.pose);
        assert_eq!(scene.character(f32::NAN).unwrap().pose, scene.character(0.0).unwrap().pose);
        assert_eq!(scene.character(-3.0).unwrap().world, scene.character(0.0).unwrap().world);
    }

    fn world_vertices(scene: &Scene, t: f32) -> Vec<Vec3<f32>> {
        let f = scene.frame(t).unwrap();
        let mut out = Vec::new();
        for o in &f.objects {
            for p in o.skin_cpu().unwrap() {
                out.extend(p.positions.iter().map(|&v| o.world.transform_point3(v)));
            }
        }
        out
    }

    #[test]
    fn character_feet_stay_on_the_ground() {
        let scene = Scene::new(None).unwrap();
        let (mut low, mut high) = (f32::INFINITY, f32::NEG_INFINITY);
        for i in 0..80 {
            let t = i as f32 * 0.25;
            let f = scene.frame(t).unwrap();
            let o = &f.objects[1];
            assert_eq!(o.model_index, CHARACTER);
            let lowest = o
                .skin_cpu()
                .unwrap()
                .iter()
                .flat_map(|p| p.positions.iter())
                .map(|&v| o.world.transform_point3(v).y)
                .fold(f32::INFINITY, f32::min);
            (low, high) = (low.min(lowest), high.max(lowest));
        }
        eprintln!("lowest point of the character: {:.1} to {:.1} cm", low * 100.0, high * 100.0);
        // Within 2.5 cm of the ground: blends and the swing's toe pitch dip a little below it,
        // the run's flight lifts both feet a little.
        assert!(low > -0.025 && high < 0.025, "{low} {high}");
    }

    #[test]
    fn default_camera_sees_the_whole_scene() {
        let mut scene = Scene::new(None).unwrap();
        scene.params.tentacle_amplitude = TENTACLE_AMPLITUDE_RANGE.1;
        for aspect in [1.0, 4.0 / 3.0, 16.0 / 9.0, 2.4] {
            let vp = default_camera(aspect).view_proj(aspect);
            for i in 0..40 {
                let t = i as f32 * 0.5;
                for v in world_vertices(&scene, t) {
                    let c = vp.mul_vec4(v.extend(1.0));
                    assert!(c.w > 0.0);
                    let (x, y) = (c.x / c.w, c.y / c.w);
                    assert!(x.abs() < 0.95 && y.abs() < 0.95, "t {t}, aspect {aspect}: {v:?} at ({x}, {y})");
                }
            }
        }
    }

    #[test]
    fn frames_depend_on_time_only() {
        let scene = Scene::new(None).unwrap();
        let (a, b) = (scene.frame(7.3).unwrap(), scene.frame(7.3).unwrap());
        assert_eq!(a.objects.len(), 4);
        for (x, y) in a.objects.iter().zip(&b.objects) {
            assert_eq!(x.palette, y.palette);
            assert_eq!(x.world, y.world);
        }
        let c = scene.frame(7.4).unwrap();
        assert_ne!(a.objects[0].palette, c.objects[0].palette);
        assert_ne!(a.objects[1].world, c.objects[1].world);
        assert!(a.bones.is_empty());
        let mut s2 = Scene::new(None).unwrap();
        s2.params.show_bones = true;
        // Bones: one line per joint with a parent (tentacle 3, humanoid 21, twist 1 + 1).
        assert_eq!(s2.frame(0.0).unwrap().bones.len(), 3 + 21 + 2);
    }
}
