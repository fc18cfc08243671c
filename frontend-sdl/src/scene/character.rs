//! The character: the humanoid driven by the core's animation system. A layered state machine
//! runs its animation graph (the wave on a masked layer over the right arm), whose parameters
//! a schedule sets ([`schedule`]), its root motion moves it along a closed path ([`path`]),
//! its planted feet are locked with two-bone IK ([`feet`]) and its head turns towards a target
//! ([`look`]). [`Character`] replays all of it from t = 0 to any time, with a cache.

mod feet;
mod look;
mod path;
mod schedule;

use std::cell::RefCell;

use sinew::controller::ClipEntry;
use sinew::job::JobError;
use sinew::math::{Mat4, SoaTransform, Vec3};
use sinew::root_motion::{Motion, PathEnd, PathFollower, Segment};
use sinew_offline::builtin::{humanoid, ry};
use sinew_offline::model::Model;

use crate::scene::error::SceneError;
use feet::{foot_planted, plant_foot, FootLock};
use look::look_at;
use schedule::{apply_schedule, new_machine, CharacterMachine, CharacterScratch, LayerMachine, STEPS_PER_SECOND};

// The eyes' position in the head joint's space, also for the scene's tests.
pub(super) use look::EYES;
pub use look::{scripted_look_target, LookRay, LOOK_PLANE_DISTANCE};
pub use path::{character_path, path_length, HEADING_LOOK_AHEAD, PATH_CENTER, PATH_STRAIGHT, PATH_TURN_RADIUS};
pub use schedule::{
    CHARACTER_GRAPH, CHARACTER_STEP, IDLE, MOVING, RUN, SCHEDULE_PERIOD, SLOT_CLIPS, SPEED, WALK, WAVE, WAVE_LAYER,
    WAVE_MASK, WAVING,
};

/// The character at one moment: its pose, where it stands, and what drives it.
#[derive(Debug, Clone)]
pub struct CharacterFrame {
    /// Local pose (SoA): the graph's (the wave layer over the base), then the foot locking and the look-at;
    /// the root in place (its motion moved the character along the path instead).
    pub pose: Vec<SoaTransform<f32>>,
    /// Model-space joint matrices of `pose`.
    pub model: Vec<Mat4<f32>>,
    /// Character to world: its place on the path, turned to its heading.
    pub world: Mat4<f32>,
    /// The clips, by [`SLOT_CLIPS`] index: `idle`, `walk` and `run` as the base graph plays
    /// them (weight 0 when not playing), `wave` on the upper layer masked by [`WAVE_MASK`]
    /// (its weight: the layer's while it plays the wave).
    pub slots: [SlotInfo; 4],
    /// The base graph's current state ([`CHARACTER_GRAPH`]'s names).
    pub state: &'static str,
    /// The base graph's transition in progress: source, destination, progress from 0 to 1.
    pub transition: Option<(&'static str, &'static str, f32)>,
    /// The wave layer's current state (`rest` or `wave`).
    pub wave_state: &'static str,
    /// The graph's `speed` parameter: the speed the schedule asks for, in meters per second.
    pub speed_parameter: f32,
    /// Distance moved along the path since t = 0: the sum of the root-motion displacements'
    /// lengths, in meters.
    pub distance: f64,
    /// The graph's root motion accumulated since t = 0.
    pub root_motion: Motion<f32>,
    /// Speed over the last whole simulation step, in meters per second.
    pub speed: f32,
    /// Position on the path (on the ground).
    pub position: Vec3<f32>,
    /// Heading about +Y, radians (0 faces +Z).
    pub heading: f32,
    /// Whether the left and right feet are planted: held where they touched down by
    /// [`IkTwoBoneJob`] (a lifted foot's target then returns to the animation over 0.15 s).
    ///
    /// [`IkTwoBoneJob`]: sinew::job::ik::IkTwoBoneJob
    pub feet_locked: [bool; 2],
    /// What the head looks at, in world space.
    pub look_target: Vec3<f32>,
    /// Weight of the look-at: 1 for targets within 90° of the character's facing
    /// (horizontally), fading smoothly to 0 at 130° and beyond.
    pub look_weight: f32,
}

/// One of the character's clips at a moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlotInfo {
    /// Its weight in the graph's blend or in its layer, 0 to 1.
    pub weight: f32,
    /// Its player's clip time, in seconds.
    pub time: f32,
    /// Its player's position in the cycle, 0 to 1.
    pub phase: f32,
}

/// The character's animation state at a whole simulation step.
#[derive(Debug, Clone)]
struct Sim {
    step: u64,
    machine: Box<CharacterMachine>,
    follower: PathFollower<f32>,
    /// Left and right foot locks.
    feet: [FootLock; 2],
    distance: f64,
    speed: f32,
}

/// The heaviest slot of a layer's controller playing clip `clip`.
fn clip_slot(m: &LayerMachine, clip: usize) -> Option<usize> {
    let c = m.controller();
    (0..4)
        .filter(|&i| c.clip_of(i) == Some(clip))
        .max_by(|&a, &b| c.weight(a).unwrap_or(0.0).total_cmp(&c.weight(b).unwrap_or(0.0)))
}

/// Clip `clip`'s weight, time and phase in a layer (zeros when it does not play).
fn clip_info(m: &LayerMachine, clip: usize) -> SlotInfo {
    let c = m.controller();
    match clip_slot(m, clip) {
        Some(i) => SlotInfo {
            weight: c.weight(i).unwrap_or(0.0),
            time: c.player(i).map_or(0.0, |p| p.time()),
            phase: c.player(i).map_or(0.0, |p| p.normalized()),
        },
        None => SlotInfo { weight: 0.0, time: 0.0, phase: 0.0 },
    }
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
pub(super) struct Character {
    /// Model clip indices of `idle`, `walk`, `run`, `wave`: the graph's clip list.
    clips: [usize; 4],
    path: Vec<Segment<f32>>,
    start: Sim,
    cache: RefCell<SimCache>,
    /// Shared by every controller update.
    scratch: RefCell<Box<CharacterScratch>>,
}

/// Clip `clip` of `model`, the character's clip `k` (see [`SLOT_CLIPS`]).
fn asset_clip(model: &Model, clip: usize, k: usize) -> Result<sinew::clip::Clip<'_>, SceneError> {
    model.asset().clip(clip).ok_or(SceneError::MissingClip(SLOT_CLIPS.get(k).copied().unwrap_or("?")))
}

impl Character {
    /// The character of the baked humanoid `model`, at t = 0.
    pub(super) fn new(model: &Model) -> Result<Character, SceneError> {
        let find = |name: &'static str| model.find_clip(name).ok_or(SceneError::MissingClip(name));
        let clips = [find("idle")?, find("walk")?, find("run")?, find("wave")?];
        let points = character_path();
        let mut path = vec![Segment::new(Vec3::ZERO, Vec3::ZERO); points.len() - 1];
        Segment::polyline(&points, &mut path).map_err(SceneError::Job)?;
        let entries = Self::entries(model, &clips)?;
        let start = Sim {
            step: 0,
            machine: new_machine(&entries).map_err(SceneError::Layer)?,
            follower: PathFollower::new(PathEnd::Loop),
            feet: [FootLock::Free; 2],
            distance: 0.0,
            speed: 0.0,
        };
        let cache = RefCell::new(SimCache { current: start.clone(), checkpoints: Vec::new() });
        Ok(Character { clips, path, start, cache, scratch: RefCell::new(Box::new(CharacterScratch::new())) })
    }

    /// The model's clips `clips` as the graph's clip list.
    fn entries<'m>(model: &'m Model, clips: &[usize; 4]) -> Result<Vec<ClipEntry<'m, f32>>, SceneError> {
        (0..4).map(|k| asset_clip(model, clips[k], k).map(ClipEntry::new)).collect()
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

    /// Applies the schedule's actions at the state's step, advances the graph by `dt` into
    /// `pose`, moves along the path by the root motion and updates the foot locks.
    fn advance(
        &self,
        sim: &mut Sim,
        model: &Model,
        dt: f32,
        pose: &mut [SoaTransform<f32>],
    ) -> Result<Placement, SceneError> {
        let c = &mut sim.machine;
        apply_schedule(c, sim.step).map_err(SceneError::Animation)?;
        let entries = Self::entries(model, &self.clips)?;
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
    pub(super) fn at(&self, model: &Model, t: f32, look: Option<LookRay>) -> Result<CharacterFrame, SceneError> {
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
        let c = &sim.machine;
        let base = c.machine(0).ok_or(SceneError::Animation(sinew::graph::GraphError::UnknownLayer))?;
        let mut wave =
            c.machine(WAVE_LAYER).map_or(SlotInfo { weight: 0.0, time: 0.0, phase: 0.0 }, |m| clip_info(m, WAVE));
        wave.weight = if wave.weight > 0.0 { c.layer_weight(WAVE_LAYER).unwrap_or(0.0) } else { 0.0 };
        let name = |s: usize| CHARACTER_GRAPH.base.states.get(s).map_or("?", |s| s.name);
        Ok(CharacterFrame {
            pose,
            model: joints,
            world,
            slots: [clip_info(base, IDLE), clip_info(base, WALK), clip_info(base, RUN), wave],
            state: name(base.current_state()),
            transition: base.transition().map(|t| (name(t.from), name(t.to), t.progress)),
            wave_state: c
                .machine(WAVE_LAYER)
                .and_then(|m| m.graph().states.get(m.current_state()))
                .map_or("?", |s| s.name),
            speed_parameter: c.value(SPEED).unwrap_or(0.0),
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
