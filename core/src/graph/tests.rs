//! Tests of the state machine: graph validation, conditions, exit times, any-state
//! transitions, triggers, blend-space weights, phase sync, inertialization, events, errors
//! that change nothing, a soak of random parameters, and the memory a character takes.

extern crate std;
use std::vec::Vec;

use super::*;
use crate::asset::Asset;
use crate::controller::{ClipEntry, ControllerError, ControllerScratch};
use crate::job::blending::{BlendingJob, Layer};
use crate::job::{JobError, SamplingJob};
use crate::math::{Quat, SoaTransform, Transform, Vec3};
use crate::player::Marker;
use crate::real::Q16;
use crate::skeleton::Skeleton;
use crate::test_support::*;

mod layers;

const NAMES: [&str; 6] = ["Hips", "LegL", "Spine", "Chest", "Head", "Arm"];
const PARENTS: [i16; 6] = [-1, 0, 0, 2, 3, 3];

fn rest() -> [Transform<f32>; 6] {
    core::array::from_fn(|i| Transform {
        translation: Vec3::new(0.0, if i == 0 { 1.0 } else { 0.3 }, 0.0),
        ..Transform::IDENTITY
    })
}

fn rot(axis: Vec3<f32>, a: f32) -> [f32; 4] {
    Quat::from_axis_angle(axis, a).to_array()
}

/// 0 idle (2 s), 1 walk (1 s), 2 run (0.6 s), 3 jump (0.5 s), 4 strafe (0.8 s).
fn asset_bytes() -> Vec<u8> {
    let clip = |name, end: f32, amp: f32, axis: Vec3<f32>, bob: f32| ClipSpec {
        name,
        start: 0.0,
        end,
        tracks: std::vec![
            translation(0, &[0.0, end / 2.0, end], &[[0.0, 1.0, 0.0], [0.0, 1.0 - bob, 0.0], [0.0, 1.0, 0.0]]),
            rotation(1, &[0.0, end / 2.0, end], &[rot(axis, amp), rot(axis, -amp), rot(axis, amp)]),
            rotation(5, &[0.0, end / 2.0, end], &[rot(Vec3::Z, -amp), rot(Vec3::Z, amp), rot(Vec3::Z, -amp)]),
        ],
    };
    build(
        &PARENTS,
        &rest(),
        &NAMES,
        &[
            clip("idle", 2.0, 0.05, Vec3::X, 0.01),
            clip("walk", 1.0, 0.4, Vec3::X, 0.05),
            clip("run", 0.6, 0.8, Vec3::X, 0.1),
            clip("jump", 0.5, 1.2, Vec3::Z, 0.3),
            clip("strafe", 0.8, 0.5, Vec3::Z, 0.05),
        ],
    )
}

crate::capacity! {
    /// The test skeleton (6 joints in 2 SoA elements), 6 slots, 9 tracks, 4 parameters.
    pub struct Rig { joints: 8, slots: 6, tracks: 9, params: 4 }
}

type Sm<'g> = StateMachine<'g, f32, Rig>;
type Scratch = ControllerScratch<f32, Rig>;

struct Fix<'a> {
    skel: Skeleton<f32, 2>,
    clips: [ClipEntry<'a, f32>; 5],
}

fn fix<'a>(asset: &Asset<'a>, markers: &'a [Marker<f32>]) -> Fix<'a> {
    Fix {
        skel: asset.skeleton().unwrap().to_skeleton().unwrap(),
        clips: core::array::from_fn(|i| ClipEntry { clip: asset.clip(i).unwrap(), markers }),
    }
}

const SPEED: usize = 0;
const GROUNDED: usize = 1;
const JUMP: usize = 2;
const SIDE: usize = 3;

const PARAMETERS: [Parameter<'static, f32>; 4] = [
    Parameter { name: "speed", kind: ParameterKind::Float(0.0) },
    Parameter { name: "grounded", kind: ParameterKind::Bool(true) },
    Parameter { name: "jump", kind: ParameterKind::Trigger },
    Parameter { name: "side", kind: ParameterKind::Float(0.0) },
];

const STATES: [State<'static>; 4] = [
    State { name: "idle", kind: StateKind::Clip(0), looping: true },
    State {
        name: "move",
        kind: StateKind::Blend1d { parameter: SPEED, points: Span::new(0, 2), sync: true },
        looping: true,
    },
    State { name: "jump", kind: StateKind::Clip(3), looping: false },
    State {
        name: "strafe",
        kind: StateKind::Blend2d { x: SIDE, y: SPEED, points: Span::new(2, 3), sync: true },
        looping: true,
    },
];

const POINTS: [BlendPoint<f32>; 5] = [
    BlendPoint { clip: 1, position: [1.0, 0.0] },
    BlendPoint { clip: 2, position: [3.0, 0.0] },
    BlendPoint { clip: 0, position: [0.0, 0.0] },
    BlendPoint { clip: 4, position: [1.0, 0.0] },
    BlendPoint { clip: 1, position: [0.0, 1.0] },
];

const CONDITIONS: [Condition<f32>; 5] = [
    Condition { parameter: SPEED, test: Test::Greater(0.1) },
    Condition { parameter: SPEED, test: Test::AtMost(0.1) },
    Condition { parameter: JUMP, test: Test::Triggered },
    Condition { parameter: GROUNDED, test: Test::True },
    Condition { parameter: GROUNDED, test: Test::False },
];

fn crossfade() -> TransitionBlend {
    TransitionBlend::Crossfade { curve: FadeCurve::Linear, sync: false }
}

/// idle → move (speed > 0.1, inertialized 0.3 s); move → idle (speed ≤ 0.1, crossfade 0.25 s);
/// any → jump (trigger and grounded, crossfade 0.1 s); jump → idle at its end (exit time 1).
fn transitions(blend: TransitionBlend) -> [Transition<f32>; 4] {
    [
        Transition { from: Some(0), to: 1, conditions: Span::new(0, 1), exit_time: None, duration: 0.3, blend },
        Transition {
            from: Some(1),
            to: 0,
            conditions: Span::new(1, 1),
            exit_time: None,
            duration: 0.25,
            blend: crossfade(),
        },
        Transition {
            from: None,
            to: 2,
            conditions: Span::new(2, 2),
            exit_time: None,
            duration: 0.1,
            blend: crossfade(),
        },
        Transition {
            from: Some(2),
            to: 0,
            conditions: Span::new(0, 0),
            exit_time: Some(1.0),
            duration: 0.2,
            blend: crossfade(),
        },
    ]
}

fn graph<'a>(transitions: &'a [Transition<f32>]) -> Graph<'a, f32> {
    Graph {
        parameters: &PARAMETERS,
        states: &STATES,
        transitions,
        points: &POINTS,
        conditions: &CONDITIONS,
        initial: 0,
    }
}

fn sample(f: &Fix, clip: usize, t: f32) -> [SoaTransform<f32>; 2] {
    let mut out = [SoaTransform::IDENTITY; 2];
    let mut cursor = [0u16; 9];
    SamplingJob {
        clip: f.clips[clip].clip,
        time: t,
        rotation: crate::clip::RotationInterpolation::default(),
        rest_pose: f.skel.rest_pose(),
        cursor: &mut cursor,
        output: &mut out,
    }
    .run()
    .unwrap();
    out
}

fn max_diff(a: &[SoaTransform<f32>], b: &[SoaTransform<f32>]) -> f32 {
    (0..6)
        .map(|j| {
            let (x, y) = (a[j / 4].lane(j % 4), b[j / 4].lane(j % 4));
            (x.translation - y.translation)
                .max_abs()
                .max((x.scale - y.scale).max_abs())
                .max(x.rotation.angle_between(y.rotation))
        })
        .fold(0.0, f32::max)
}

fn step(m: &mut Sm, f: &Fix, dt: f32, out: &mut [SoaTransform<f32>; 2]) -> Vec<GraphEvent<f32>> {
    let mut ev = Vec::new();
    m.update(dt, &f.clips, f.skel.view(), &mut Scratch::new(), out, |e| ev.push(e)).unwrap();
    ev
}

#[test]
fn validation_names_what_is_wrong() {
    let t = transitions(crossfade());
    let g = graph(&t);
    assert_eq!(g.validate(5), Ok(()));
    assert_eq!(g.validate(4), Err(GraphError::Clip { state: 3 }));
    assert_eq!(g.parameter("jump"), Some(2));
    assert_eq!(g.state("strafe"), Some(3));
    assert_eq!(g.max_state_clips(), 3);
    let check = |g: Graph<f32>, e: GraphError| assert_eq!(g.validate(5), Err(e));
    check(Graph { initial: 4, ..g }, GraphError::InitialState);
    let dup = [PARAMETERS[0], PARAMETERS[0]];
    check(Graph { parameters: &dup, ..g }, GraphError::DuplicateParameter { parameter: 1 });
    let nan = [Parameter { name: "x", kind: ParameterKind::Float(f32::NAN) }];
    check(Graph { parameters: &nan, ..g }, GraphError::ParameterDefault { parameter: 0 });
    let mut states = STATES;
    states[1].name = "idle";
    check(Graph { states: &states, ..g }, GraphError::DuplicateState { state: 1 });
    let mut states = STATES;
    states[1].kind = StateKind::Blend1d { parameter: GROUNDED, points: Span::new(0, 2), sync: false };
    check(Graph { states: &states, ..g }, GraphError::BlendParameter { state: 1 });
    states[1].kind = StateKind::Blend1d { parameter: SPEED, points: Span::new(4, 2), sync: false };
    check(Graph { states: &states, ..g }, GraphError::Points { state: 1 });
    states[1].kind = StateKind::Blend1d { parameter: SPEED, points: Span::new(0, 0), sync: false };
    check(Graph { states: &states, ..g }, GraphError::Points { state: 1 });
    states[1].kind = StateKind::Blend1d { parameter: SPEED, points: Span::new(2, 2), sync: false };
    assert_eq!(Graph { states: &states, ..g }.validate(5), Ok(())); // 0 then 1 along x: fine
    let mut points = POINTS;
    points[1].position[0] = 1.0;
    check(Graph { points: &points, ..g }, GraphError::Positions { state: 1 });
    let mut points = POINTS;
    points[4].position = [1.0, 0.0];
    check(Graph { points: &points, ..g }, GraphError::Positions { state: 3 });
    let mut bad = t;
    bad[0].to = 9;
    check(Graph { transitions: &bad, ..g }, GraphError::TransitionState { transition: 0 });
    let mut bad = t;
    bad[1].from = Some(0);
    check(Graph { transitions: &bad, ..g }, GraphError::TransitionState { transition: 1 });
    let mut bad = t;
    bad[2].conditions = Span::new(4, 2);
    check(Graph { transitions: &bad, ..g }, GraphError::Conditions { transition: 2 });
    let mut conditions = CONDITIONS;
    conditions[3].test = Test::Greater(0.5);
    check(Graph { conditions: &conditions, ..g }, GraphError::Condition { transition: 2, condition: 3 });
    let mut conditions = CONDITIONS;
    conditions[0].test = Test::Less(f32::INFINITY);
    check(Graph { conditions: &conditions, ..g }, GraphError::Condition { transition: 0, condition: 0 });
    conditions[0] = Condition { parameter: 7, test: Test::True };
    check(Graph { conditions: &conditions, ..g }, GraphError::Condition { transition: 0, condition: 0 });
    let mut bad = t;
    bad[3].exit_time = Some(-1.0);
    check(Graph { transitions: &bad, ..g }, GraphError::Timing { transition: 3 });
    bad[3].exit_time = None;
    bad[3].duration = f32::NAN;
    check(Graph { transitions: &bad, ..g }, GraphError::Timing { transition: 3 });

    // Capacities.
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fix(&asset, &[]);
    crate::capacity! {
        /// One parameter short.
        pub struct ThreeParams { joints: 8, slots: 6, tracks: 9, params: 3 }
    }
    crate::capacity! {
        /// One slot short.
        pub struct ThreeSlots { joints: 8, slots: 3, tracks: 9, params: 4 }
    }
    crate::capacity! {
        /// Just enough slots.
        pub struct FourSlots { joints: 8, slots: 4, tracks: 9, params: 4 }
    }
    crate::capacity! {
        /// Too few tracks.
        pub struct TwoTracks { joints: 8, slots: 6, tracks: 2, params: 4 }
    }
    assert_eq!(
        StateMachine::<f32, ThreeParams>::new(g, &f.clips).err(),
        Some(GraphError::TooManyParameters { count: 4, capacity: 3 })
    );
    // Move's 3 clips and idle's or jump's during a crossfade (the inertialized switch to move
    // plays move alone).
    assert_eq!(
        StateMachine::<f32, ThreeSlots>::new(g, &f.clips).err(),
        Some(GraphError::TooManySlots { needed: 4, capacity: 3 })
    );
    assert!(StateMachine::<f32, FourSlots>::new(g, &f.clips).is_ok());
    assert_eq!(
        StateMachine::<f32, TwoTracks>::new(g, &f.clips).err(),
        Some(GraphError::Controller(ControllerError::TooManyTracks { tracks: 3, capacity: 2 }))
    );
}

#[test]
fn parameters_are_checked_by_kind() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fix(&asset, &[]);
    let t = transitions(crossfade());
    let mut m = Sm::new(graph(&t), &f.clips).unwrap();
    assert_eq!(m.value(GROUNDED), Some(1.0));
    assert_eq!(m.set_float(9, 1.0), Err(GraphError::UnknownParameter));
    assert_eq!(m.set_float(GROUNDED, 1.0), Err(GraphError::ParameterKind { parameter: GROUNDED }));
    assert_eq!(m.set_float(SPEED, f32::NAN), Err(GraphError::NonFiniteValue));
    assert_eq!(m.set_bool(SPEED, true), Err(GraphError::ParameterKind { parameter: SPEED }));
    assert_eq!(m.fire(SPEED, true), Err(GraphError::ParameterKind { parameter: SPEED }));
    assert_eq!(m.value(SPEED), Some(0.0));
    m.set_float(SPEED, 2.5).unwrap();
    m.set_bool(GROUNDED, false).unwrap();
    m.fire(JUMP, true).unwrap();
    assert_eq!((m.value(SPEED), m.value(GROUNDED), m.value(JUMP), m.value(4)), (Some(2.5), Some(0.0), Some(1.0), None));
}

#[test]
fn conditions_any_state_triggers_and_exit_times() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fix(&asset, &[]);
    let t = transitions(crossfade());
    let mut m = Sm::new(graph(&t), &f.clips).unwrap();
    let mut out = [SoaTransform::IDENTITY; 2];
    let dt = 1.0 / 60.0;
    // speed 0.1 is not > 0.1: idle stays.
    m.set_float(SPEED, 0.1).unwrap();
    for _ in 0..10 {
        step(&mut m, &f, dt, &mut out);
    }
    assert_eq!((m.current_state(), m.transition()), (0, None));
    m.set_float(SPEED, 0.2).unwrap();
    step(&mut m, &f, dt, &mut out);
    let s = m.transition().unwrap();
    assert_eq!((m.current_state(), s.transition, s.from, s.to, s.progress), (1, 0, 0, 1, 0.0));
    // A transition runs to its end: speed back to 0 does not interrupt it.
    m.set_float(SPEED, 0.0).unwrap();
    for _ in 0..17 {
        step(&mut m, &f, dt, &mut out);
    }
    assert!((m.transition().unwrap().progress - 17.0 * dt / 0.3).abs() < 1e-5);
    step(&mut m, &f, dt, &mut out);
    assert_eq!(m.transition(), None);
    // Then move → idle (≤ 0.1) fires.
    step(&mut m, &f, dt, &mut out);
    assert_eq!((m.current_state(), m.transition().map(|s| s.transition)), (0, Some(1)));
    for _ in 0..20 {
        step(&mut m, &f, dt, &mut out);
    }
    assert_eq!((m.current_state(), m.transition()), (0, None));

    // The jump trigger needs grounded: set but not consumed while false.
    m.set_bool(GROUNDED, false).unwrap();
    m.fire(JUMP, true).unwrap();
    for _ in 0..5 {
        step(&mut m, &f, dt, &mut out);
    }
    assert_eq!((m.current_state(), m.value(JUMP)), (0, Some(1.0)));
    // Grounded: the any-state transition fires once and consumes the trigger.
    m.set_bool(GROUNDED, true).unwrap();
    step(&mut m, &f, dt, &mut out);
    assert_eq!((m.current_state(), m.value(JUMP)), (2, Some(0.0)));
    // jump is a 0.5 s clip played once; exit time 1 is its end: it stays until then, the
    // trigger being consumed means no jump restarts.
    let mut frames = 1;
    while m.current_state() == 2 {
        step(&mut m, &f, dt, &mut out);
        frames += 1;
        assert!(frames < 100);
    }
    // The jump's clip did not move in the update that fired it (weight 0 at the start of the
    // crossfade), reached its end 30 updates of 1/60 s later, and the exit fired on the next
    // update, crossfading to idle.
    assert_eq!((frames, m.current_state(), m.transition().map(|s| s.transition)), (32, 0, Some(3)));

    // An any-state transition never fires to the state already playing: in jump, a new
    // trigger stays set.
    m.fire(JUMP, true).unwrap();
    for _ in 0..14 {
        step(&mut m, &f, dt, &mut out);
    }
    assert_eq!(m.current_state(), 2);
    assert_eq!(m.value(JUMP), Some(0.0), "consumed by the jump from idle");
}

#[test]
fn priority_is_list_order() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fix(&asset, &[]);
    // Both fire on speed > 0.1: the first listed wins.
    let t = [
        Transition {
            from: None,
            to: 3,
            conditions: Span::new(0, 1),
            exit_time: None,
            duration: 0.0,
            blend: crossfade(),
        },
        Transition {
            from: Some(0),
            to: 1,
            conditions: Span::new(0, 1),
            exit_time: None,
            duration: 0.0,
            blend: crossfade(),
        },
    ];
    let mut m = Sm::new(graph(&t), &f.clips).unwrap();
    m.set_float(SPEED, 1.0).unwrap();
    let mut out = [SoaTransform::IDENTITY; 2];
    step(&mut m, &f, 0.01, &mut out);
    assert_eq!((m.current_state(), m.transition()), (3, None), "duration 0: done at once");
    let t2 = [t[1], t[0]];
    let mut m = Sm::new(graph(&t2), &f.clips).unwrap();
    m.set_float(SPEED, 1.0).unwrap();
    step(&mut m, &f, 0.01, &mut out);
    assert_eq!(m.current_state(), 1);
}

#[test]
fn exit_time_counts_cycles_since_entry() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fix(&asset, &[]);
    // idle (2 s) → move after 1.25 cycles, no condition.
    let t = [Transition {
        from: Some(0),
        to: 1,
        conditions: Span::new(0, 0),
        exit_time: Some(1.25),
        duration: 0.0,
        blend: crossfade(),
    }];
    let mut m = Sm::new(graph(&t), &f.clips).unwrap();
    let mut out = [SoaTransform::IDENTITY; 2];
    let mut frames = 0;
    while m.current_state() == 0 {
        step(&mut m, &f, 0.1, &mut out);
        frames += 1;
        assert!(frames < 100);
    }
    // 2.5 s = 1.25 cycles after 25 updates; the transition fires on the next one.
    assert_eq!(frames, 26);
    assert!(m.state_time() < 0.2);
}

#[test]
fn blend_space_weights_match_hand_computed_ones() {
    let p = &POINTS[..2];
    let mut w = [9.0f32; 2];
    for (v, e) in [
        (0.0, [1.0, 0.0]),
        (1.0, [1.0, 0.0]),
        (1.5, [0.75, 0.25]),
        (2.5, [0.25, 0.75]),
        (3.0, [0.0, 1.0]),
        (7.0, [0.0, 1.0]),
    ] {
        weights_1d(p, v, &mut w);
        assert_eq!(w, e, "{v}");
    }
    weights_1d(p, f32::NAN, &mut w);
    assert_eq!(w, [1.0, 0.0]);
    // Three points: only the two neighbours weigh.
    let three = [POINTS[2], POINTS[0], POINTS[1]];
    let mut w3 = [0.0f32; 3];
    weights_1d(&three, 0.25, &mut w3);
    assert_eq!(w3, [0.75, 0.25, 0.0]);
    // A short output: nothing written.
    let mut short = [5.0f32; 1];
    weights_1d(p, 2.0, &mut short);
    assert_eq!(short, [5.0]);

    // 2D, (0,0) (1,0) (0,1) at (¼, ¼): h = ¾, min(¼, ½), min(¼, ½) → 0.6, 0.2, 0.2.
    let tri = &POINTS[2..5];
    let mut w = [0.0f32; 3];
    weights_2d(tri, [0.25, 0.25], &mut w);
    for (a, b) in w.iter().zip([0.6, 0.2, 0.2]) {
        assert!((a - b).abs() < 1e-6, "{w:?}");
    }
    // At a point: that clip alone; on an edge's midpoint: half and half.
    weights_2d(tri, [1.0, 0.0], &mut w);
    assert_eq!(w, [0.0, 1.0, 0.0]);
    // On the hypotenuse's midpoint every band gives ½: a third each (where barycentric
    // weights would give 0, ½, ½: gradient bands spread wider).
    weights_2d(tri, [0.5, 0.5], &mut w);
    for (a, b) in w.iter().zip([1.0 / 3.0; 3]) {
        assert!((a - b).abs() < 1e-6, "{w:?}");
    }
    // Far outside the hull: the nearest point dominates, weights still sum to 1.
    weights_2d(tri, [5.0, -3.0], &mut w);
    assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-6 && w[1] > 0.9, "{w:?}");
    // Q16 agrees within its step.
    let qtri: Vec<BlendPoint<Q16>> =
        tri.iter().map(|p| BlendPoint { clip: p.clip, position: p.position.map(Q16::from_f32) }).collect();
    let mut q = [Q16::ZERO; 3];
    weights_2d(&qtri, [Q16::ratio(1, 4), Q16::ratio(1, 4)], &mut q);
    for (a, b) in q.iter().zip([0.6, 0.2, 0.2]) {
        assert!((a.to_f32() - b).abs() < 1e-4, "{q:?}");
    }
}

/// A blend of the clips of `samples` (clip, time) with `weights`.
fn blend(f: &Fix, samples: &[(usize, f32)], weights: &[f32]) -> [SoaTransform<f32>; 2] {
    let poses: Vec<_> = samples.iter().map(|&(c, t)| sample(f, c, t)).collect();
    let layers: Vec<_> =
        poses.iter().zip(weights).map(|(p, &w)| Layer { transform: &p[..], weight: w, joint_weights: None }).collect();
    let mut out = [SoaTransform::IDENTITY; 2];
    BlendingJob { layers: &layers, additive: &[], rest_pose: f.skel.rest_pose(), threshold: 1.0, output: &mut out }
        .run()
        .unwrap();
    out
}

#[test]
fn blend_spaces_play_in_phase_with_their_weights() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fix(&asset, &[]);
    let t: [Transition<f32>; 0] = [];
    let g = Graph { initial: 1, ..graph(&t) };
    let mut m = Sm::new(g, &f.clips).unwrap();
    let mut out = [SoaTransform::IDENTITY; 2];
    // speed 2: walk (1 s) and run (0.6 s) half and half, both advancing 0.5/1 + 0.5/0.6 cycles
    // per second.
    m.set_float(SPEED, 2.0).unwrap();
    let dt = 1.0 / 60.0;
    let rate = 0.5 / 1.0 + 0.5 / 0.6;
    for frame in 1..=50 {
        step(&mut m, &f, dt, &mut out);
        let phase = (frame as f32 * dt * rate).fract();
        let expected = blend(&f, &[(1, phase * 1.0), (2, phase * 0.6)], &[0.5, 0.5]);
        assert!(max_diff(&out, &expected) < 2e-4, "frame {frame}: {}", max_diff(&out, &expected));
    }
    // Speed 1: walk alone, run idle at weight 0; back to 2.5: run rejoins at walk's phase.
    m.set_float(SPEED, 1.0).unwrap();
    for _ in 0..13 {
        step(&mut m, &f, dt, &mut out);
    }
    let walk_phase = m.controller().player(0).unwrap().normalized();
    m.set_float(SPEED, 2.5).unwrap();
    step(&mut m, &f, dt, &mut out);
    let (p0, p1) = (m.controller().player(0).unwrap().normalized(), m.controller().player(1).unwrap().normalized());
    assert!((p0 - p1).abs() < 1e-5, "{p0} {p1}");
    let advanced = dt * (0.25 / 1.0 + 0.75 / 0.6);
    assert!((p0 - (walk_phase + advanced).fract()).abs() < 1e-5);
    let expected = blend(&f, &[(1, p0), (2, p1 * 0.6)], &[0.25, 0.75]);
    assert!(max_diff(&out, &expected) < 2e-4);

    // 2D: strafe space at (¼, ¼) → idle 0.6, strafe 0.2, walk 0.2.
    let g = Graph { initial: 3, ..graph(&t) };
    let mut m = Sm::new(g, &f.clips).unwrap();
    m.set_float(SIDE, 0.25).unwrap();
    m.set_float(SPEED, 0.25).unwrap();
    step(&mut m, &f, 0.0, &mut out);
    let expected = blend(&f, &[(0, 0.0), (4, 0.0), (1, 0.0)], &[0.6, 0.2, 0.2]);
    assert!(max_diff(&out, &expected) < 1e-5);
    assert_eq!((0..3).map(|i| m.controller().weight(i).unwrap()).collect::<Vec<_>>(), [0.6, 0.2, 0.2]);
}

#[test]
fn crossfade_weights_the_two_states() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fix(&asset, &[]);
    let t = transitions(crossfade());
    let mut m = Sm::new(graph(&t), &f.clips).unwrap();
    let mut out = [SoaTransform::IDENTITY; 2];
    let dt = 0.025;
    for _ in 0..4 {
        step(&mut m, &f, dt, &mut out); // idle to 0.1 s
    }
    m.set_float(SPEED, 1.0).unwrap();
    step(&mut m, &f, dt, &mut out); // fires: idle alone still (progress 0), idle at 0.125 s
    assert!(max_diff(&out, &sample(&f, 0, 0.125)) < 1e-5);
    step(&mut m, &f, dt, &mut out); // progress 0.025 / 0.3
    let s = dt / 0.3;
    let expected = blend(&f, &[(0, 0.15), (1, 0.025)], &[1.0 - s, s]);
    assert!(max_diff(&out, &expected) < 1e-5, "{}", max_diff(&out, &expected));
}

/// Frame-to-frame change of the output, the largest over joints.
fn run_switch(blend: TransitionBlend, frames: usize, switch_at: usize) -> (Vec<[SoaTransform<f32>; 2]>, Vec<f32>) {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fix(&asset, &[]);
    let t = transitions(blend);
    let mut m = Sm::new(graph(&t), &f.clips).unwrap();
    let mut out = [SoaTransform::IDENTITY; 2];
    let mut poses = Vec::new();
    for frame in 0..frames {
        if frame == switch_at {
            m.set_float(SPEED, 1.0).unwrap();
        }
        step(&mut m, &f, 1.0 / 60.0, &mut out);
        poses.push(out);
    }
    let diffs = poses.windows(2).map(|w| max_diff(&w[0], &w[1])).collect();
    (poses, diffs)
}

#[test]
fn inertialization_is_continuous_and_ends_on_the_destination() {
    let (poses, d) = run_switch(TransitionBlend::Inertialize, 90, 45);
    // The switch fires at frame 45: its output continues the idle's motion one step (the
    // second difference there is the idle's own), and the velocity after stays near the
    // idle's and the walk's instead of jumping.
    let steady = d[..40].iter().copied().fold(0.0, f32::max).max(d[70..].iter().copied().fold(0.0, f32::max));
    let during = d[44..64].iter().copied().fold(0.0, f32::max);
    assert!(during <= 1.5 * steady, "during {during}, steady {steady}");
    // A hard switch (duration 0) pops by much more.
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fix(&asset, &[]);
    let walk_start = sample(&f, 1, 1.0 / 60.0);
    assert!(max_diff(&poses[44], &walk_start) > 5.0 * steady);
    // 0.3 s = 18 frames after the switch the offset is gone: the walk alone, from its start.
    // (The walk advanced one step in the switch's update: at frame 45 + k it is at k + 1.)
    for k in 18..40 {
        let expected = sample(&f, 1, (k + 1) as f32 / 60.0);
        assert!(max_diff(&poses[45 + k], &expected) < 1e-5, "{k}");
    }
    // Second differences (acceleration) stay bounded through the switch: no velocity step.
    let acc: Vec<f32> = poses.windows(3).map(|w| second_diff(&w[0], &w[1], &w[2])).collect();
    let steady_acc = acc[..40].iter().copied().fold(0.0, f32::max).max(acc[70..].iter().copied().fold(0.0, f32::max));
    let switch_acc = acc[43..47].iter().copied().fold(0.0, f32::max);
    assert!(switch_acc < 3.0 * steady_acc, "{switch_acc} vs {steady_acc}");
}

fn second_diff(a: &[SoaTransform<f32>], b: &[SoaTransform<f32>], c: &[SoaTransform<f32>]) -> f32 {
    (0..6)
        .map(|j| {
            let (x, y, z) = (a[j / 4].lane(j % 4), b[j / 4].lane(j % 4), c[j / 4].lane(j % 4));
            let t = (z.translation - y.translation * 2.0 + x.translation).max_abs();
            let r1 = super::inertia::log(y.rotation * x.rotation.conjugate());
            let r2 = super::inertia::log(z.rotation * y.rotation.conjugate());
            t.max((r2 - r1).max_abs())
        })
        .fold(0.0, f32::max)
}

#[test]
fn inertial_curve_starts_at_the_offset_and_its_velocity_and_ends_flat() {
    crate::capacity! {
        /// One SoA element.
        pub struct One { joints: 4, slots: 1 }
    }
    let mut i = super::inertia::Inertia::<f32, One>::new();
    let a = Transform { translation: Vec3::new(0.0, 0.0, 0.0), ..Transform::IDENTITY };
    let b = Transform {
        translation: Vec3::new(0.1, 0.0, 0.0),
        rotation: Quat::from_axis_angle(Vec3::Y, 0.1),
        ..Transform::IDENTITY
    };
    let pose = |t: &Transform<f32>| [SoaTransform::from_transforms([*t; 4])];
    let dt = 0.1;
    i.record(&pose(&a), 1, dt, false);
    i.record(&pose(&b), 1, dt, false);
    let target = Transform { translation: Vec3::new(1.0, 0.0, 0.0), ..Transform::IDENTITY };
    i.capture(&pose(&target), 1, dt);
    // Offset: the extrapolated source (0.2 along x, 0.2 rad about y) minus the target.
    let [t0, r0, _] = i.offset_at(0, 0.0, 1.0);
    assert!((t0 - Vec3::new(-0.8, 0.0, 0.0)).max_abs() < 1e-6, "{t0:?}");
    assert!((r0 - Vec3::new(0.0, 0.2, 0.0)).max_abs() < 1e-5, "{r0:?}");
    // Its velocity at 0 (central difference): the source's, 1 m/s and 1 rad/s.
    let h = 1e-3;
    let [tp, rp, _] = i.offset_at(0, h, 1.0);
    assert!(((tp.x - t0.x) / h - 1.0).abs() < 1e-2 && ((rp.y - r0.y) / h - 1.0).abs() < 1e-2);
    // Zero, with zero slope, at the end; never past the end.
    let [te, re, _] = i.offset_at(0, 1.0 - h, 1.0);
    assert!(te.max_abs() < 1e-9 && re.max_abs() < 1e-9);
    assert_eq!(i.offset_at(0, 1.0, 1.0), [Vec3::ZERO; 3]);
}

#[test]
fn events_come_from_every_playing_clip_with_their_state() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let markers = [Marker { time: 0.25, id: 7 }];
    let f = fix(&asset, &markers);
    let t = transitions(crossfade());
    let mut m = Sm::new(graph(&t), &f.clips).unwrap();
    let mut out = [SoaTransform::IDENTITY; 2];
    let mut seen = Vec::new();
    for frame in 0..60 {
        if frame == 5 {
            m.set_float(SPEED, 2.0).unwrap();
        }
        seen.extend(step(&mut m, &f, 1.0 / 60.0, &mut out).into_iter().map(|e| (frame, e.state, e.clip, e.event.id)));
    }
    // idle's marker at 0.25 s (frame 14, while the crossfade to move still runs: idle plays),
    // then the walk's and the run's.
    assert!(seen.contains(&(14, 0, 0, 7)), "{seen:?}");
    assert!(seen.iter().any(|&(_, s, c, _)| s == 1 && c == 1));
    assert!(seen.iter().any(|&(_, s, c, _)| s == 1 && c == 2));
}

#[test]
fn errors_change_nothing() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fix(&asset, &[]);
    let t = transitions(TransitionBlend::Inertialize);
    let mut m = Sm::new(graph(&t), &f.clips).unwrap();
    let mut out = [SoaTransform::IDENTITY; 2];
    step(&mut m, &f, 0.1, &mut out);
    m.set_float(SPEED, 1.0).unwrap(); // a transition would fire
    let sentinel = SoaTransform { translation: crate::math::SoaVec3::ONE, ..SoaTransform::IDENTITY };
    let tiny: Skeleton<f32, 1> = Skeleton::new(&[-1], &[Transform::IDENTITY], &[""]).unwrap();
    let big: Skeleton<f32, 3> = Skeleton::new(&[-1; 9], &[Transform::IDENTITY; 9], &[""; 9]).unwrap();
    let before = std::format!("{m:?}");
    let cases: [(f32, usize, usize, GraphError); 5] = [
        (f32::NAN, 5, 2, GraphError::Controller(ControllerError::Player(crate::player::PlayerError::NonFiniteDelta))),
        (-0.1, 5, 2, GraphError::NegativeStep),
        (1.0e7, 5, 2, GraphError::Controller(ControllerError::Player(crate::player::PlayerError::TooManyWraps))),
        (0.1, 3, 2, GraphError::Clip { state: 2 }),
        (0.1, 5, 1, GraphError::Controller(ControllerError::Job(JobError::OutputTooSmall))),
    ];
    for (dt, nclips, len, e) in cases {
        let mut o = [sentinel; 2];
        let mut events = 0;
        let r = m.update(dt, &f.clips[..nclips], f.skel.view(), &mut Scratch::new(), &mut o[..len], |_| events += 1);
        assert_eq!(r, Err(e));
        assert_eq!(std::format!("{m:?}"), before, "{e:?}");
        assert!(o.iter().all(|x| *x == sentinel) && events == 0);
    }
    let mut o = [sentinel; 1];
    let r = m.update(0.1, &f.clips, tiny.view(), &mut Scratch::new(), &mut o, |_| {});
    assert_eq!(r, Err(GraphError::Controller(ControllerError::Job(JobError::JointIndexOutOfRange))));
    let mut o = [sentinel; 3];
    let r = m.update(0.1, &f.clips, big.view(), &mut Scratch::new(), &mut o, |_| {});
    assert_eq!(r, Err(GraphError::Controller(ControllerError::SkeletonTooLarge)));
    m.set_root_motion(Some(crate::root_motion::RootMotionSettings { joint: 6, ..Default::default() })).unwrap();
    let before = std::format!("{m:?}");
    let r = m.update(0.1, &f.clips, f.skel.view(), &mut Scratch::new(), &mut out, |_| {});
    assert_eq!(r, Err(GraphError::Controller(ControllerError::Job(JobError::JointIndexOutOfRange))));
    assert_eq!(std::format!("{m:?}"), before);
}

#[test]
fn reset_builds_what_new_builds_in_place() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fix(&asset, &[]);
    let t = transitions(TransitionBlend::Inertialize);
    let fresh = std::format!("{:?}", Sm::new(graph(&t), &f.clips).unwrap());
    // An empty machine (as a static holds it) plays nothing: its output is the rest pose.
    static EMPTY: Sm<'static> = Sm::empty();
    let mut m = EMPTY.clone();
    let sentinel = SoaTransform { translation: crate::math::SoaVec3::ONE, ..SoaTransform::IDENTITY };
    let mut out = [sentinel; 2];
    m.update(0.1, &f.clips, f.skel.view(), &mut Scratch::new(), &mut out, |_| {}).unwrap();
    assert_eq!(max_diff(&out, f.skel.rest_pose()), 0.0);
    m.reset(graph(&t), &f.clips).unwrap();
    assert_eq!(std::format!("{m:?}"), fresh);
    // A machine mid-transition with root motion on, reset, is a new one again.
    m.set_root_motion(Some(crate::root_motion::RootMotionSettings::default())).unwrap();
    step(&mut m, &f, 0.1, &mut out);
    m.set_float(SPEED, 1.0).unwrap();
    step(&mut m, &f, 0.1, &mut out);
    assert!(m.transition().is_some());
    let running = std::format!("{m:?}");
    // A graph that fails its checks changes nothing.
    let bad = Graph { initial: 9, ..graph(&t) };
    assert!(m.reset(bad, &f.clips).is_err());
    assert!(m.reset(graph(&t), &f.clips[..2]).is_err());
    assert_eq!(std::format!("{m:?}"), running);
    m.reset(graph(&t), &f.clips).unwrap();
    assert_eq!(std::format!("{m:?}"), fresh);
}

/// A small deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn soak<R: crate::Real>(frames: usize, seed: u64) -> (usize, f32) {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let skel: Skeleton<R, 2> = asset.skeleton().unwrap().to_skeleton().unwrap();
    let clips: [ClipEntry<R>; 5] = core::array::from_fn(|i| ClipEntry::new(asset.clip(i).unwrap()));
    let params = [
        Parameter { name: "speed", kind: ParameterKind::Float(R::ZERO) },
        Parameter { name: "grounded", kind: ParameterKind::Bool(true) },
        Parameter { name: "jump", kind: ParameterKind::Trigger },
        Parameter { name: "side", kind: ParameterKind::Float(R::ZERO) },
    ];
    let conv = |c: &Condition<f32>| Condition {
        parameter: c.parameter,
        test: match c.test {
            Test::Greater(v) => Test::Greater(R::from_f32(v)),
            Test::AtMost(v) => Test::AtMost(R::from_f32(v)),
            other => match other {
                Test::True => Test::True,
                Test::False => Test::False,
                _ => Test::Triggered,
            },
        },
    };
    let conditions: Vec<Condition<R>> = CONDITIONS.iter().map(conv).collect();
    let points: Vec<BlendPoint<R>> =
        POINTS.iter().map(|p| BlendPoint { clip: p.clip, position: p.position.map(R::from_f32) }).collect();
    let mut t: Vec<Transition<R>> = transitions(TransitionBlend::Inertialize)
        .iter()
        .map(|t| Transition {
            from: t.from,
            to: t.to,
            conditions: t.conditions,
            exit_time: t.exit_time.map(R::from_f32),
            duration: R::from_f32(t.duration),
            blend: t.blend,
        })
        .collect();
    // Into and out of the 2D space too, synced crossfades both ways.
    let sync = TransitionBlend::Crossfade { curve: FadeCurve::SmoothStep, sync: true };
    t.push(Transition {
        from: Some(1),
        to: 3,
        conditions: Span::new(4, 1),
        exit_time: None,
        duration: R::from_f32(0.2),
        blend: sync,
    });
    t.push(Transition {
        from: Some(3),
        to: 1,
        conditions: Span::new(3, 1),
        exit_time: Some(R::HALF),
        duration: R::from_f32(0.2),
        blend: sync,
    });
    let g = Graph {
        parameters: &params,
        states: &STATES,
        transitions: &t,
        points: &points,
        conditions: &conditions,
        initial: 0,
    };
    let mut m = StateMachine::<R, Rig>::new(g, &clips).unwrap();
    let mut scratch = ControllerScratch::<R, Rig>::new();
    let mut out = [SoaTransform::IDENTITY; 2];
    let mut rng = Rng(seed);
    let mut transitions_run = 0;
    let mut worst = 0.0f32;
    for _ in 0..frames {
        match rng.next() % 20 {
            0 => m.set_float(SPEED, R::from_f32(rng.unit() * 4.0)).unwrap(),
            1 => m.set_float(SIDE, R::from_f32(rng.unit() * 2.0 - 0.5)).unwrap(),
            2 => m.set_bool(GROUNDED, rng.next() % 2 == 0).unwrap(),
            3 => m.fire(JUMP, true).unwrap(),
            _ => {}
        }
        let was = m.transition().is_some();
        let dt = R::from_f32([1.0 / 60.0, 1.0 / 30.0, 0.0, 0.1][(rng.next() % 4) as usize]);
        m.update(dt, &clips, skel.view(), &mut scratch, &mut out, |_| {}).unwrap();
        if !was && m.transition().is_some() {
            transitions_run += 1;
        }
        for j in 0..6 {
            let x = out[j / 4].lane(j % 4);
            let ok = x.translation.is_finite() && x.rotation.is_finite() && x.scale.is_finite();
            assert!(ok, "joint {j}");
            // No drift: rotations stay unit, translations within the clips' range.
            worst = worst.max((x.rotation.length_squared().to_f32() - 1.0).abs());
            assert!(x.translation.max_abs().to_f32() < 3.0, "{:?}", x.translation);
        }
    }
    (transitions_run, worst)
}

#[test]
#[cfg_attr(miri, ignore = "25,000 frames: native runs only; the semantics tests run under miri")]
fn soak_random_parameters_f32_and_q16() {
    let (n, worst) = soak::<f32>(20_000, 0x9e37_79b9_7f4a_7c15);
    assert!(n > 200, "{n} transitions");
    assert!(worst < 1e-5, "{worst}");
    let (n, worst) = soak::<Q16>(5_000, 0x1234_5678_9abc_def1);
    assert!(n > 50, "{n} transitions");
    assert!(worst < 1e-3, "{worst}");
}

#[test]
fn memory_per_character() {
    use crate::controller::Controller;
    use core::mem::size_of;
    crate::capacity! {
        /// 24 joints, 4 slots, 4 parameters.
        pub struct Hero24 { joints: 24, slots: 4, params: 4 }
    }
    crate::capacity! {
        /// 67 joints, 6 slots, 8 parameters.
        pub struct Rig67 { joints: 67, slots: 6, params: 8 }
    }
    crate::capacity! {
        /// Hero24 with a base and an upper-body layer.
        pub struct Hero24Layered { joints: 24, slots: 4, layers: 2, params: 4 }
    }
    crate::capacity! {
        /// Rig67 with a base and two more layers.
        pub struct Rig67Layered { joints: 67, slots: 6, layers: 3, params: 8 }
    }
    let m24 = size_of::<StateMachine<f32, Hero24>>();
    let q24 = size_of::<StateMachine<Q16, Hero24>>();
    let c24 = size_of::<Controller<f32, Hero24>>();
    let m67 = size_of::<StateMachine<f32, Rig67>>();
    let c67 = size_of::<Controller<f32, Rig67>>();
    std::println!("StateMachine<f32, Hero24> (24 joints): {m24} bytes (Q16: {q24}), of which controller {c24}");
    std::println!("StateMachine<f32, Rig67> (67 joints): {m67} bytes, of which controller {c67}");
    // Besides the controller: the last output pose (160 bytes per SoA element) and the store
    // holding the pose before it or the offset and its velocity (288), the parameters and the
    // slot owners.
    let extra = |soa: usize, slots: usize, params: usize| soa * (160 + 288) + 4 * params + 24 * slots + 256;
    assert!(m24 <= c24 + extra(6, 4, 4), "{m24}");
    assert!(m67 <= c67 + extra(17, 6, 8), "{m67}");
    assert_eq!(m24, q24);
    // Layered: one state machine per layer, plus a weight and a fade per layer; the scratch
    // (shared) holds a controller scratch and a pose, a mask and shares per layer.
    let l24 = size_of::<LayeredStateMachine<f32, Hero24Layered>>();
    let lq24 = size_of::<LayeredStateMachine<Q16, Hero24Layered>>();
    let s24 = size_of::<LayeredScratch<f32, Hero24Layered>>();
    let l67 = size_of::<LayeredStateMachine<f32, Rig67Layered>>();
    let s67 = size_of::<LayeredScratch<f32, Rig67Layered>>();
    std::println!("LayeredStateMachine<f32, Hero24Layered> (base + 1 layer): {l24} bytes (Q16: {lq24}), scratch {s24}");
    std::println!("LayeredStateMachine<f32, Rig67Layered> (base + 2 layers): {l67} bytes, scratch {s67}");
    // Each layer's machine has one layer whatever the capacity's count.
    assert_eq!(size_of::<StateMachine<f32, crate::capacity::OneLayer<Hero24Layered>>>(), m24);
    let per_layer = 32 + size_of::<crate::controller::FadeCurve>();
    assert!(l24 <= 2 * m24 + 2 * per_layer + 256, "{l24}");
    assert!(l67 <= 3 * m67 + 3 * per_layer + 256, "{l67}");
    assert_eq!(l24, lq24);
    let poses = |soa: usize, slots: usize, layers: usize| (slots + layers) * soa * 160 + 2 * layers * soa * 16;
    assert!(s24 <= poses(6, 4, 2) + 2 * 6 * 16 + 64, "{s24}");
    assert!(s67 <= poses(17, 6, 3) + 17 * 16 + 64, "{s67}");
}
