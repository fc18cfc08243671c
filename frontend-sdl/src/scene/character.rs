//! The character: the humanoid driven by the core's animation system. A layered state machine
//! runs its animation graph (the wave on a masked layer over the right arm), whose parameters
//! a schedule sets ([`schedule`]), its root motion moves it along a closed path ([`path`]) at
//! the terrain's height, the core's foot placement stands its feet on the terrain and locks
//! them where they land ([`feet`]), and its head turns towards a target ([`look`]).
//! [`Character`] replays all of it from t = 0 to any time, with a cache.

mod feet;
mod look;
mod path;
mod schedule;

use std::cell::RefCell;

use sinew::controller::ClipEntry;
use sinew::math::{Mat4, SoaTransform, Vec3};
use sinew::root_motion::{Motion, PathEnd, PathFollower, Segment};
use sinew_offline::builtin::{humanoid, ry};
use sinew_offline::model::Model;

use crate::scene::error::SceneError;
use crate::scene::terrain::Terrain;
use feet::{place_feet, Feet};
use look::look_at;
use path::PathPoints;
use schedule::{apply_schedule, new_machine, CharacterMachine, CharacterScratch, LayerMachine, STEPS_PER_SECOND};

pub use feet::{FootPlacement, FOOT_BLEND};
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
    /// Local pose (SoA): the graph's (the wave layer over the base), then the foot placement and the look-at;
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
    /// Position on the path, at the root's height: the lowest terrain within about half a
    /// step, averaged along the path around the character.
    pub position: Vec3<f32>,
    /// Heading about +Y, radians (0 faces +Z).
    pub heading: f32,
    /// Whether the left and right feet are planted: held where they touched down by the foot
    /// placement's locks ([`FootPlacementJob`]; a lifted foot then returns to the animation over
    /// 0.15 s). Always false while the placement is off and its effect has ramped out.
    ///
    /// [`FootPlacementJob`]: sinew::job::foot::FootPlacementJob
    pub feet_locked: [bool; 2],
    /// The foot placement's weight, 0 (the legs as the graph poses them) to 1 (the feet on
    /// the terrain): it ramps over [`FOOT_BLEND`] after each switch.
    pub foot_placement: f32,
    /// Whether the foot placement is on (its weight ramping to 1) or off (to 0).
    pub foot_placement_on: bool,
    /// How far the foot placement lowers the pelvis (≤ 0), in meters.
    pub pelvis_offset: f32,
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
    /// The foot placement's state.
    feet: Feet,
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

/// Where the character stands after a step, and its pose before the look-at.
struct Placement {
    world: Mat4<f32>,
    position: Vec3<f32>,
    heading: f32,
    /// Model matrices of the controller's pose with the feet placed.
    joints: Vec<Mat4<f32>>,
}

/// Replayed states kept to seek backwards without replaying from the start, and the foot
/// placement's switches they were replayed with.
#[derive(Debug)]
struct SimCache {
    current: Sim,
    checkpoints: Vec<Sim>,
    placement: FootPlacement,
}

/// Steps between two checkpoints (4 s), and the most checkpoints kept.
const CHECKPOINT_STEPS: u64 = 240;
const MAX_CHECKPOINTS: usize = 64;

/// How close to a whole simulation step a time is taken as that step's, in steps.
const SAME_STEP: f64 = 1.0e-3;

/// The first whole simulation step at or after scene time `t` (seconds), a time within
/// [`SAME_STEP`] after a step's being that step's.
fn step_at(t: f64) -> u64 {
    (t * STEPS_PER_SECOND - SAME_STEP).ceil().max(0.0) as u64
}

/// Half the length of path over which the character's root height takes the lowest ground
/// (about half a walking step), in meters.
const ROOT_LOW_REACH: f32 = 0.3;
/// Half the length of path over which the character's root height averages that lowest ground,
/// in meters.
const ROOT_SMOOTH_REACH: f32 = 0.3;
/// Spacing of the terrain's heights along the path that the root height reads, in meters.
const ROOT_SAMPLE: f32 = 0.01;

/// The character's clips, path and simulation cache.
#[derive(Debug)]
pub(super) struct Character {
    /// Model clip indices of `idle`, `walk`, `run`, `wave`: the graph's clip list.
    clips: [usize; 4],
    path: Vec<Segment<f32>>,
    /// The same path by arc length.
    points: PathPoints,
    /// The ground under the path.
    terrain: Terrain,
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
    /// The character of the baked humanoid `model` walking on `terrain`, at t = 0.
    pub(super) fn new(model: &Model, terrain: Terrain) -> Result<Character, SceneError> {
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
            feet: Feet::new(),
            distance: 0.0,
            speed: 0.0,
        };
        let cache = RefCell::new(SimCache {
            current: start.clone(),
            checkpoints: Vec::new(),
            placement: FootPlacement::default(),
        });
        Ok(Character {
            clips,
            path,
            points: PathPoints::new(points),
            terrain,
            start,
            cache,
            scratch: RefCell::new(Box::new(CharacterScratch::new())),
        })
    }

    /// The ground under the path.
    pub(super) fn terrain(&self) -> &Terrain {
        &self.terrain
    }

    /// The character's root height `distance` meters along its path: the lowest ground within
    /// [`ROOT_LOW_REACH`] of path on either side, averaged over [`ROOT_SMOOTH_REACH`] on either
    /// side with a Hann window (the terrain read every [`ROOT_SAMPLE`] of path). The lowest
    /// ground keeps the trailing foot within the legs' reach on the stairs and the slope, the
    /// leading leg bending over the higher ground; the average turns the steps into a smooth
    /// climb.
    fn root_height(&self, distance: f64) -> f32 {
        const LOW: usize = (ROOT_LOW_REACH / ROOT_SAMPLE) as usize;
        const SMOOTH: usize = (ROOT_SMOOTH_REACH / ROOT_SAMPLE) as usize;
        let mut heights = [0.0f32; 2 * (LOW + SMOOTH) + 1];
        for (i, h) in heights.iter_mut().enumerate() {
            let offset = (i as f32 - (LOW + SMOOTH) as f32) * ROOT_SAMPLE;
            let p = self.points.point_at(distance + f64::from(offset));
            *h = self.terrain.height(p.x, p.z);
        }
        let (mut sum, mut total) = (0.0, 0.0);
        for (j, window) in heights.windows(2 * LOW + 1).enumerate() {
            let u = (j as f32 + 1.0) / (2 * SMOOTH + 2) as f32;
            let w = 0.5 - 0.5 * (std::f32::consts::TAU * u).cos();
            sum += w * window.iter().copied().fold(f32::INFINITY, f32::min);
            total += w;
        }
        sum / total
    }

    /// The model's clips `clips` as the graph's clip list.
    fn entries<'m>(model: &'m Model, clips: &[usize; 4]) -> Result<Vec<ClipEntry<'m, f32>>, SceneError> {
        (0..4).map(|k| asset_clip(model, clips[k], k).map(ClipEntry::new)).collect()
    }

    /// The state at whole step `n` with the foot placement switched as `placement` says,
    /// replayed from the nearest cached state before it (states replayed with other switches
    /// are kept up to the first step where the switches differ).
    fn state_at(&self, model: &Model, n: u64, placement: &FootPlacement) -> Result<Sim, SceneError> {
        let mut cache = self.cache.borrow_mut();
        if let Some(t) = cache.placement.first_difference(placement) {
            // The states up to the first step that runs switched stay.
            let keep = step_at(t);
            cache.checkpoints.retain(|s| s.step <= keep);
            if cache.current.step > keep {
                cache.current = cache.checkpoints.last().cloned().unwrap_or_else(|| self.start.clone());
            }
            cache.placement = placement.clone();
        }
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
            self.advance(&mut cache.current, model, CHARACTER_STEP, placement, &mut scratch)?;
            cache.current.step += 1;
        }
        Ok(cache.current.clone())
    }

    /// Applies the schedule's actions at the state's step, advances the graph by `dt` into
    /// `pose`, moves along the path by the root motion (at the terrain's height there), and
    /// places the feet on the terrain (on or off as `placement` says at the step's start).
    fn advance(
        &self,
        sim: &mut Sim,
        model: &Model,
        dt: f32,
        placement: &FootPlacement,
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
        let position = at.position + Vec3::Y * self.root_height(sim.distance);
        let world = Mat4::from_trs(position, ry(heading), Vec3::ONE);
        let mut joints = Vec::new();
        model.world(pose, &mut joints).map_err(SceneError::Job)?;
        // Feet lock while the locomotion or idle plays alone: a graph transition blends poses
        // whose feet stand in different places, and moves them.
        let on = placement.on_at_step(sim.step);
        let lock = c.machine(0).is_some_and(|m| m.transition().is_none());
        place_feet(model, &mut sim.feet, on, lock, world, dt, &self.terrain, pose, &mut joints)?;
        Ok(Placement { world, position, heading, joints })
    }

    /// The character at scene time `t` (negative or non-finite times read as 0), looking at
    /// `look` (a ray) or at [`scripted_look_target`].
    pub(super) fn at(
        &self,
        model: &Model,
        t: f32,
        look: Option<LookRay>,
        placement: &FootPlacement,
    ) -> Result<CharacterFrame, SceneError> {
        let t = if t.is_finite() { t.max(0.0) as f64 } else { 0.0 };
        // The last whole step before `t`, and the rest of the way, at most one step: a whole
        // step's time (up to its rounding in f32) is reached by a whole step from the one before
        // it, as the replay reaches it. The foot placement tells a planted foot by how little it
        // moved over the step, which a step of nearly nothing cannot tell from rounding.
        let n = step_at(t).saturating_sub(1);
        let rest = ((t - n as f64 / STEPS_PER_SECOND) as f32).clamp(0.0, CHARACTER_STEP);
        let mut sim = self.state_at(model, n, placement)?;
        let mut pose = model.skeleton().rest_pose().to_vec();
        let Placement { world, position, heading, mut joints } =
            self.advance(&mut sim, model, rest, placement, &mut pose)?;

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
            feet_locked: sim.feet.locked(),
            foot_placement: sim.feet.weight(),
            foot_placement_on: sim.feet.enabled(),
            pelvis_offset: sim.feet.pelvis_offset(),
            look_target,
            look_weight,
        })
    }
}
