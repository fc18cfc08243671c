//! The character's animation graph and what drives it: [`CHARACTER_GRAPH`] (idle, and a
//! locomotion blend space over walk and run driven by the `speed` parameter; the wave on an
//! upper-body layer masked by [`WAVE_MASK`]), and the schedule that sets the parameters and
//! fades the wave layer, repeating every [`SCHEDULE_PERIOD`].

use sinew::capacity::OneLayer;
use sinew::controller::LayerMode;
use sinew::graph::{
    BlendPoint, Condition, FadeCurve, Graph, GraphError, GraphLayer, LayerError, LayeredGraph, LayeredScratch,
    LayeredStateMachine, Parameter, ParameterKind, Span, State, StateKind, StateMachine, Test, Transition,
    TransitionBlend,
};
use sinew::root_motion::RootMotionSettings;
use sinew_offline::builtin::{humanoid, smoothstep, RUN_SPEED, WALK_SPEED};

/// The character's simulation step, in seconds: [`Scene::character`] replays the graph from
/// t = 0 in steps of this length (cached), then one partial step to the asked time.
///
/// [`Scene::character`]: crate::scene::Scene::character
pub const CHARACTER_STEP: f32 = 1.0 / 60.0;
/// Simulation steps per second (1 / [`CHARACTER_STEP`]).
pub(super) const STEPS_PER_SECOND: f64 = 60.0;

/// Length of the character's repeating schedule, in seconds.
pub const SCHEDULE_PERIOD: f32 = 20.0;

/// Index of `idle` in the character's clip list: [`CharacterFrame::slots`] is indexed by
/// these; `idle`, `walk` and `run` play in the base graph, `wave` on the upper-body layer.
///
/// [`CharacterFrame::slots`]: super::CharacterFrame::slots
pub const IDLE: usize = 0;
/// Index of `walk` (see [`IDLE`]).
pub const WALK: usize = 1;
/// Index of `run` (see [`IDLE`]).
pub const RUN: usize = 2;
/// Index of `wave` (see [`IDLE`]).
pub const WAVE: usize = 3;

/// Names of the character's clips, by index.
pub const SLOT_CLIPS: [&str; 4] = ["idle", "walk", "run", "wave"];

/// The upper-body layer's mask: the subtree of the right clavicle (the right shoulder, arm and
/// hand) with a fade-in of one level, so the clavicle takes half of `wave` and the arm from
/// the shoulder joint down all of it. The legs, spine, head and left arm keep the graph's
/// locomotion.
pub const WAVE_MASK: sinew::job::mask::Channel = sinew::job::mask::Channel::subtree(humanoid::R_CLAVICLE, 1);

/// The graph's `speed` parameter (index 0): the speed the character is asked to move at, in
/// meters per second.
pub const SPEED: usize = 0;
/// The graph's `waving` parameter (index 1): the wave layer plays the wave (else it rests,
/// at weight 0).
pub const WAVING: usize = 1;
/// Below this speed (m/s) the character stands idle.
pub const MOVING: f32 = 0.1;
/// The wave layer's index in [`CHARACTER_GRAPH`].
pub const WAVE_LAYER: usize = 1;

/// The character's animation graph. The base:
///
/// - `idle` plays the idle clip;
/// - `locomotion` is a phase-synced 1D blend space over `speed` with walk at its root speed
///   ([`WALK_SPEED`]) and run at its own ([`RUN_SPEED`]), so the root motion it extracts moves
///   the character at the asked speed;
/// - `idle` → `locomotion` when `speed > 0.1`, inertialized over 0.4 s: the walk starts at
///   once from its first step (a crossfade would blend a standing and a stepping pose, feet
///   sliding) while the pose offset from standing decays;
/// - `locomotion` → `idle` when `speed ≤ 0.1`, crossfaded over 0.8 s (smoothstep): the root
///   slows down with the blend instead of stopping dead.
///
/// Layer 1, `wave`, overrides the right arm ([`WAVE_MASK`]) at a weight the schedule fades:
/// `rest` (no part in the blend at weight 0) goes to `wave` at once when `waving` is set,
/// restarting the clip, and back when it is cleared.
pub const CHARACTER_GRAPH: LayeredGraph<'static, f32> = LayeredGraph { base: BASE_GRAPH, layers: &[WAVE_LAYER_GRAPH] };

/// The base graph of [`CHARACTER_GRAPH`].
const BASE_GRAPH: Graph<'static, f32> = Graph {
    parameters: &[
        Parameter { name: "speed", kind: ParameterKind::Float(WALK_SPEED) },
        Parameter { name: "waving", kind: ParameterKind::Bool(false) },
    ],
    states: &[
        State { name: "idle", kind: StateKind::Clip(IDLE), looping: true },
        State {
            name: "locomotion",
            kind: StateKind::Blend1d { parameter: SPEED, points: Span::new(0, 2), sync: true },
            looping: true,
        },
    ],
    transitions: &there_and_back(
        (0.4, TransitionBlend::Inertialize),
        (0.8, TransitionBlend::Crossfade { curve: FadeCurve::SmoothStep, sync: false }),
    ),
    points: &[
        BlendPoint { clip: WALK, position: [WALK_SPEED, 0.0] },
        BlendPoint { clip: RUN, position: [RUN_SPEED, 0.0] },
    ],
    conditions: &[
        Condition { parameter: SPEED, test: Test::Greater(MOVING) },
        Condition { parameter: SPEED, test: Test::AtMost(MOVING) },
    ],
    initial: 1,
};

/// The wave layer of [`CHARACTER_GRAPH`].
const WAVE_LAYER_GRAPH: GraphLayer<'static, f32> = GraphLayer {
    name: "wave",
    mode: LayerMode::Override,
    weight: 0.0,
    mask: &[WAVE_MASK],
    states: &[
        State { name: "rest", kind: StateKind::Clip(IDLE), looping: true },
        State { name: "wave", kind: StateKind::Clip(WAVE), looping: true },
    ],
    transitions: &there_and_back(
        (0.0, TransitionBlend::Crossfade { curve: FadeCurve::Linear, sync: false }),
        (0.0, TransitionBlend::Crossfade { curve: FadeCurve::Linear, sync: false }),
    ),
    points: &[],
    conditions: &[
        Condition { parameter: WAVING, test: Test::True },
        Condition { parameter: WAVING, test: Test::False },
    ],
    initial: 0,
};

/// The transitions of a two-state graph or layer, neither with an exit time: state 0 → 1 when
/// condition 0 holds, then 1 → 0 when condition 1 holds, each with its duration (seconds) and
/// blend.
const fn there_and_back(there: (f32, TransitionBlend), back: (f32, TransitionBlend)) -> [Transition<f32>; 2] {
    [
        Transition {
            from: Some(0),
            to: 1,
            conditions: Span::new(0, 1),
            exit_time: None,
            duration: there.0,
            blend: there.1,
        },
        Transition {
            from: Some(1),
            to: 0,
            conditions: Span::new(1, 1),
            exit_time: None,
            duration: back.0,
            blend: back.1,
        },
    ]
}

sinew::capacity! {
    /// The character's capacities: the humanoid's 22 joints; per layer two states of up to two
    /// clips (4 slots), cursors for any clip; two layers; two parameters.
    pub(super) struct Character { joints: humanoid::COUNT, slots: 4, layers: 2, params: 2 }
}

/// The character's layered state machine.
pub(super) type CharacterMachine = LayeredStateMachine<'static, f32, Character>;

/// One layer's state machine in [`CharacterMachine`].
pub(super) type LayerMachine = StateMachine<'static, f32, OneLayer<Character>>;

/// The working memory of the character's updates.
pub(super) type CharacterScratch = LayeredScratch<f32, Character>;

/// What the schedule does.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Action {
    /// Move `speed` to `to` m/s over `seconds` (smoothstep; 0: at once).
    Speed { to: f32, seconds: f32 },
    /// Fade the wave layer to a weight (smoothstep).
    Wave { weight: f32, seconds: f32 },
    /// Set or clear `waving` (setting it restarts the wave clip).
    Waving(bool),
}

/// The schedule, repeated every [`SCHEDULE_PERIOD`]: walk, speed up to a run and back (the
/// blend space keeps the feet in phase), wave while walking, stop (idle), wave while standing,
/// walk again.
const SCHEDULE: [(f32, Action); 12] = [
    (6.0, Action::Speed { to: RUN_SPEED, seconds: 0.6 }),
    (10.0, Action::Speed { to: WALK_SPEED, seconds: 0.6 }),
    (11.5, Action::Waving(true)),
    (11.5, Action::Wave { weight: 1.0, seconds: 0.5 }),
    (14.5, Action::Wave { weight: 0.0, seconds: 0.5 }),
    (15.0, Action::Waving(false)),
    (16.0, Action::Speed { to: 0.0, seconds: 0.0 }),
    (16.8, Action::Waving(true)),
    (16.8, Action::Wave { weight: 1.0, seconds: 0.5 }),
    (18.7, Action::Wave { weight: 0.0, seconds: 0.5 }),
    (19.2, Action::Waving(false)),
    (19.2, Action::Speed { to: WALK_SPEED, seconds: 0.0 }),
];

/// The whole simulation step of schedule time `seconds`.
fn step_of(seconds: f32) -> u64 {
    (f64::from(seconds) * STEPS_PER_SECOND).round() as u64
}

/// The speed the schedule asks for at step `k` of its period: the last speed change's target,
/// on its smoothstep while it runs.
fn scheduled_speed(k: u64) -> f32 {
    let mut speed = WALK_SPEED;
    for (at, action) in SCHEDULE {
        let Action::Speed { to, seconds } = action else { continue };
        let Some(elapsed) = k.checked_sub(step_of(at)) else { break };
        let u = if seconds > 0.0 { (elapsed as f32 / (seconds * STEPS_PER_SECOND as f32)).min(1.0) } else { 1.0 };
        speed += (to - speed) * smoothstep(u);
    }
    speed
}

/// The character's state machine on `clips` (`idle`, `walk`, `run`, `wave`), root motion
/// extracted from the humanoid's root, walking.
pub(super) fn new_machine(
    clips: &[sinew::controller::ClipEntry<'_, f32>],
) -> Result<Box<CharacterMachine>, LayerError> {
    let mut m = Box::new(CharacterMachine::new(CHARACTER_GRAPH, clips)?);
    m.set_root_motion(Some(RootMotionSettings { joint: humanoid::ROOT, ..RootMotionSettings::default() }))
        .map_err(|error| LayerError { layer: 0, error })?;
    Ok(m)
}

/// Sets the graph's parameters for whole simulation step `step` and starts the wave layer's
/// fades due then.
pub(super) fn apply_schedule(m: &mut CharacterMachine, step: u64) -> Result<(), GraphError> {
    let k = step % step_of(SCHEDULE_PERIOD);
    m.set_float(SPEED, scheduled_speed(k))?;
    for (time, action) in SCHEDULE {
        if step_of(time) != k {
            continue;
        }
        match action {
            Action::Wave { weight, seconds } => m.fade_layer(WAVE_LAYER, weight, seconds, FadeCurve::SmoothStep)?,
            Action::Waving(on) => m.set_bool(WAVING, on)?,
            Action::Speed { .. } => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_walks_runs_stops_and_walks_again() {
        let at = |t: f32| scheduled_speed(step_of(t));
        assert_eq!(at(0.0), WALK_SPEED);
        assert_eq!(scheduled_speed(359), WALK_SPEED);
        assert!((at(6.3) - (WALK_SPEED + RUN_SPEED) * 0.5).abs() < 1e-6);
        assert_eq!(at(7.0), RUN_SPEED);
        assert_eq!(at(10.6), WALK_SPEED);
        assert_eq!(at(16.0), 0.0);
        assert_eq!(scheduled_speed(step_of(19.2) - 1), 0.0);
        assert_eq!(at(19.2), WALK_SPEED);
        assert!(CHARACTER_GRAPH.validate(4).is_ok());
    }
}
