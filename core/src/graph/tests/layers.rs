//! Tests of layered state machines: a masked override layer equals the hand-made blend of the
//! base's and the layer's poses, an additive layer the hand-made addition (f32 and Q16), a
//! layer at weight 0 leaves the base's bits, weight fades, shared parameters and triggers,
//! events by layer, root motion from the base, validation and errors that change nothing.

use super::*;
use crate::controller::{AdditiveReference, LayerMode};
use crate::job::blending::make_additive;
use crate::job::mask::Channel;
use crate::root_motion::RootMotionSettings;

crate::capacity! {
    /// `Rig` with a base and up to two more layers.
    pub struct Layered { joints: 8, slots: 6, layers: 3, tracks: 9, params: 4 }
}

type Lsm<'g, R> = LayeredStateMachine<'g, R, Layered>;
type LScratch<R> = LayeredScratch<R, Layered>;

/// The shared parameters: `speed` (float) and `jump` (trigger).
fn params<R: crate::Real>() -> [Parameter<'static, R>; 2] {
    [
        Parameter { name: "speed", kind: ParameterKind::Float(R::ZERO) },
        Parameter { name: "jump", kind: ParameterKind::Trigger },
    ]
}

const BASE_STATES: [State<'static>; 2] = [
    State { name: "idle", kind: StateKind::Clip(0), looping: true },
    State { name: "walk", kind: StateKind::Clip(1), looping: true },
];

const LAYER_STATES: [State<'static>; 2] = [
    State { name: "sway", kind: StateKind::Clip(4), looping: true },
    State { name: "pump", kind: StateKind::Clip(2), looping: true },
];

fn conditions<R: crate::Real>() -> [Condition<R>; 2] {
    [Condition { parameter: 0, test: Test::Greater(R::HALF) }, Condition { parameter: 1, test: Test::Triggered }]
}

/// idle → walk when speed > 0.5 (inertialized, 0.2 s); in the layer, sway → pump on `jump`
/// (crossfade, 0.1 s) and in the base idle → walk on `jump` too.
fn base_transitions<R: crate::Real>() -> [Transition<R>; 2] {
    [
        Transition {
            from: Some(0),
            to: 1,
            conditions: Span::new(0, 1),
            exit_time: None,
            duration: R::ratio(1, 5),
            blend: TransitionBlend::Inertialize,
        },
        Transition {
            from: Some(0),
            to: 1,
            conditions: Span::new(1, 1),
            exit_time: None,
            duration: R::ZERO,
            blend: TransitionBlend::Inertialize,
        },
    ]
}

fn layer_transitions<R: crate::Real>() -> [Transition<R>; 1] {
    [Transition {
        from: Some(0),
        to: 1,
        conditions: Span::new(1, 1),
        exit_time: None,
        duration: R::ratio(1, 10),
        blend: TransitionBlend::Crossfade { curve: FadeCurve::Linear, sync: false },
    }]
}

struct Data<R> {
    params: [Parameter<'static, R>; 2],
    conditions: [Condition<R>; 2],
    base_t: [Transition<R>; 2],
    layer_t: [Transition<R>; 1],
}

fn data<R: crate::Real>() -> Data<R> {
    Data { params: params(), conditions: conditions(), base_t: base_transitions(), layer_t: layer_transitions() }
}

impl<R: crate::Real> Data<R> {
    fn base(&self) -> Graph<'_, R> {
        Graph {
            parameters: &self.params,
            states: &BASE_STATES,
            transitions: &self.base_t,
            points: &[],
            conditions: &self.conditions,
            initial: 0,
        }
    }
    fn layer<'a>(&'a self, mode: LayerMode, weight: R, mask: &'a [Channel]) -> GraphLayer<'a, R> {
        GraphLayer {
            name: "upper",
            mode,
            weight,
            mask,
            states: &LAYER_STATES,
            transitions: &self.layer_t,
            points: &[],
            conditions: &self.conditions,
            initial: 0,
        }
    }
}

struct RFix<'a, R: crate::Real> {
    skel: Skeleton<R, 2>,
    clips: [ClipEntry<'a, R>; 5],
}

fn rfix<'a, R: crate::Real>(asset: &Asset<'a>, markers: &'a [Marker<R>]) -> RFix<'a, R> {
    RFix {
        skel: asset.skeleton().unwrap().to_skeleton().unwrap(),
        clips: core::array::from_fn(|i| ClipEntry { clip: asset.clip(i).unwrap(), markers }),
    }
}

/// Runs the layered machine and, alongside, plain state machines of its base and its layer
/// graphs; returns, for each frame, the layered output and the two plain poses.
#[allow(clippy::type_complexity)]
fn run_beside<R: crate::Real>(
    f: &RFix<'_, R>,
    d: &Data<R>,
    layer: GraphLayer<'_, R>,
    frames: usize,
) -> Vec<([SoaTransform<R>; 2], [SoaTransform<R>; 2], [SoaTransform<R>; 2])> {
    let layers = [layer];
    let g = LayeredGraph { base: d.base(), layers: &layers };
    let mut m = Lsm::<R>::new(g, &f.clips).unwrap();
    let mut base = StateMachine::<R, Rig>::new(d.base(), &f.clips).unwrap();
    let mut upper = StateMachine::<R, Rig>::new(layer.graph(&d.params), &f.clips).unwrap();
    let mut scratch = LScratch::new();
    let mut plain = ControllerScratch::<R, Rig>::new();
    let dt = R::ratio(1, 60);
    let mut out = Vec::new();
    for frame in 0..frames {
        if frame == 20 {
            m.set_float(0, R::ONE).unwrap();
            base.set_float(0, R::ONE).unwrap();
            upper.set_float(0, R::ONE).unwrap();
        }
        if frame == 30 {
            m.fire(1, true).unwrap();
            upper.fire(1, true).unwrap();
        }
        let (mut o, mut b, mut u) =
            ([SoaTransform::IDENTITY; 2], [SoaTransform::IDENTITY; 2], [SoaTransform::IDENTITY; 2]);
        m.update(dt, &f.clips, f.skel.view(), &mut scratch, &mut o, |_| {}).unwrap();
        base.update(dt, &f.clips, f.skel.view(), &mut plain, &mut b, |_| {}).unwrap();
        upper.update(dt, &f.clips, f.skel.view(), &mut plain, &mut u, |_| {}).unwrap();
        out.push((o, b, u));
    }
    out
}

/// Joint `j` of poses `a` and `b` within a few units of the last place (f32) or steps (Q16).
fn same_joint<R: crate::Real>(a: &[SoaTransform<R>], b: &[SoaTransform<R>], j: usize) -> bool {
    let (x, y) = (a[j / 4].lane(j % 4), b[j / 4].lane(j % 4));
    let tol = if R::FIXED_POINT { 4.0e-4 } else { 1.0e-6 };
    (x.translation - y.translation).max_abs().to_f32() <= tol && (x.scale - y.scale).max_abs().to_f32() <= tol && {
        let (p, q) = (x.rotation, if x.rotation.dot(y.rotation) < R::ZERO { -y.rotation } else { y.rotation });
        [p.x - q.x, p.y - q.y, p.z - q.z, p.w - q.w].iter().all(|d| d.abs().to_f32() <= tol)
    }
}

/// The mask of `Channel::subtree(Spine, 1)`: Spine ½, Chest, Head and Arm 1, by the formula
/// of `crate::job::mask`.
fn spine_mask<R: crate::Real>() -> [[R; 4]; 2] {
    let (z, h, o) = (R::ZERO, R::HALF, R::ONE);
    [[z, z, h, o], [o, o, z, z]]
}

fn override_equals_hand_blend<R: crate::Real>() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = rfix::<R>(&asset, &[]);
    let d = data::<R>();
    let mask = [Channel::named(f.skel.view(), "Spine", 1).unwrap()];
    let alpha = R::ratio(3, 5);
    let frames = run_beside(&f, &d, d.layer(LayerMode::Override, alpha, &mask), 60);
    let m = spine_mask::<R>();
    let layer_w: [[R; 4]; 2] = core::array::from_fn(|e| core::array::from_fn(|k| alpha * m[e][k]));
    let base_w: [[R; 4]; 2] = core::array::from_fn(|e| core::array::from_fn(|k| R::ONE - alpha * m[e][k]));
    for (i, (o, b, u)) in frames.iter().enumerate() {
        let mut hand = [SoaTransform::IDENTITY; 2];
        BlendingJob {
            layers: &[
                Layer { transform: b, weight: R::ONE, joint_weights: Some(&base_w) },
                Layer { transform: u, weight: R::ONE, joint_weights: Some(&layer_w) },
            ],
            additive: &[],
            rest_pose: f.skel.rest_pose(),
            threshold: R::ONE,
            output: &mut hand,
        }
        .run()
        .unwrap();
        assert_eq!(*o, hand, "frame {i}");
        // The hips and the leg are the base's alone (up to the blend's normalization).
        assert!(same_joint(o, b, 0) && same_joint(o, b, 1), "frame {i}");
        assert!(!same_joint(o, b, 5) || same_joint(b, u, 5), "frame {i}: the arm leaves the base's");
    }
}

#[test]
fn masked_override_layer_equals_the_hand_blend_f32_and_q16() {
    override_equals_hand_blend::<f32>();
    override_equals_hand_blend::<Q16>();
}

fn additive_equals_hand_addition<R: crate::Real>() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = rfix::<R>(&asset, &[]);
    let d = data::<R>();
    let alpha = R::HALF;
    let rest = f.skel.rest_pose();
    // Rest-pose reference, no mask: the layer's pose as a delta from the rest pose, on top.
    let frames = run_beside(&f, &d, d.layer(LayerMode::Additive(AdditiveReference::RestPose), alpha, &[]), 50);
    for (i, (o, b, u)) in frames.iter().enumerate() {
        let mut delta = *u;
        for (p, r) in delta.iter_mut().zip(rest) {
            for k in 0..4 {
                p.set_lane(k, &make_additive(&p.lane(k), &r.lane(k)));
            }
        }
        let mut hand = [SoaTransform::IDENTITY; 2];
        BlendingJob {
            layers: &[Layer::new(b, R::ONE)],
            additive: &[Layer::new(&delta, alpha)],
            rest_pose: rest,
            threshold: R::ONE,
            output: &mut hand,
        }
        .run()
        .unwrap();
        assert_eq!(*o, hand, "frame {i}");
    }
    // Baked reference with a mask: the layer's pose is the delta, weighted per joint.
    let mask = [Channel::named(f.skel.view(), "Spine", 1).unwrap()];
    let frames = run_beside(&f, &d, d.layer(LayerMode::Additive(AdditiveReference::Baked), alpha, &mask), 50);
    let m = spine_mask::<R>();
    for (i, (o, b, u)) in frames.iter().enumerate() {
        let mut hand = [SoaTransform::IDENTITY; 2];
        BlendingJob {
            layers: &[Layer::new(b, R::ONE)],
            additive: &[Layer { transform: u, weight: alpha, joint_weights: Some(&m) }],
            rest_pose: rest,
            threshold: R::ONE,
            output: &mut hand,
        }
        .run()
        .unwrap();
        assert_eq!(*o, hand, "frame {i}");
        assert!(same_joint(o, b, 0), "frame {i}: outside the mask, the base's");
    }
}

#[test]
fn additive_layer_equals_the_hand_addition_f32_and_q16() {
    additive_equals_hand_addition::<f32>();
    additive_equals_hand_addition::<Q16>();
}

fn zero_weight_leaves_the_base<R: crate::Real>() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = rfix::<R>(&asset, &[]);
    let d = data::<R>();
    for mode in [LayerMode::Override, LayerMode::Additive(AdditiveReference::RestPose)] {
        for (i, (o, b, _)) in run_beside(&f, &d, d.layer(mode, R::ZERO, &[]), 45).iter().enumerate() {
            assert_eq!(o, b, "{mode:?} frame {i}");
        }
    }
}

#[test]
fn a_layer_at_weight_zero_leaves_the_base_bits_f32_and_q16() {
    zero_weight_leaves_the_base::<f32>();
    zero_weight_leaves_the_base::<Q16>();
}

#[test]
fn layer_weights_fade_and_a_silent_layer_keeps_running() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = rfix::<f32>(&asset, &[]);
    let d = data::<f32>();
    let layers = [d.layer(LayerMode::Override, 0.0, &[])];
    let mut m = Lsm::new(LayeredGraph { base: d.base(), layers: &layers }, &f.clips).unwrap();
    let mut scratch = LScratch::new();
    let mut out = [SoaTransform::IDENTITY; 2];
    assert_eq!(m.num_layers(), 2);
    assert_eq!((m.layer_weight(0), m.layer_weight(1), m.layer_weight(2)), (Some(1.0), Some(0.0), None));
    m.fire(1, true).unwrap();
    m.fade_layer(1, 1.0, 0.5, FadeCurve::Linear).unwrap();
    for frame in 1..=30 {
        m.update(1.0 / 60.0, &f.clips, f.skel.view(), &mut scratch, &mut out, |_| {}).unwrap();
        if frame == 15 {
            assert!((m.layer_weight(1).unwrap() - 0.5).abs() < 1e-5);
            assert!(m.is_layer_fading(1));
        }
    }
    assert_eq!(m.layer_weight(1), Some(1.0));
    assert!(!m.is_layer_fading(1));
    // The layer ran from the start: its transition fired on the first update, at weight 0.
    assert_eq!(m.machine(1).unwrap().current_state(), 1);
    // A full-weight unmasked override layer is the whole pose.
    let mut upper = StateMachine::<f32, Rig>::new(layers[0].graph(&d.params), &f.clips).unwrap();
    upper.fire(1, true).unwrap();
    let mut u = [SoaTransform::IDENTITY; 2];
    for _ in 0..31 {
        upper.update(1.0 / 60.0, &f.clips, f.skel.view(), &mut Scratch::new(), &mut u, |_| {}).unwrap();
    }
    m.update(1.0 / 60.0, &f.clips, f.skel.view(), &mut scratch, &mut out, |_| {}).unwrap();
    assert!(max_diff(&out, &u) < 1e-6, "{}", max_diff(&out, &u));
    // Setting at once cancels a fade; the base and unknown layers are refused.
    m.fade_layer(1, 0.0, 1.0, FadeCurve::SmoothStep).unwrap();
    m.set_layer_weight(1, 2.0).unwrap();
    assert_eq!((m.layer_weight(1), m.is_layer_fading(1)), (Some(1.0), false));
    assert_eq!(m.set_layer_weight(0, 0.5), Err(GraphError::UnknownLayer));
    assert_eq!(m.set_layer_weight(2, 0.5), Err(GraphError::UnknownLayer));
    assert_eq!(m.fade_layer(1, f32::NAN, 0.1, FadeCurve::Linear), Err(GraphError::NonFiniteValue));
    assert_eq!(m.fade_layer(1, 0.5, -0.1, FadeCurve::Linear), Err(GraphError::NonFiniteValue));
}

#[test]
fn parameters_are_shared_and_a_trigger_fires_every_layer_once() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let markers = [Marker { time: 0.25, id: 3 }];
    let f = rfix::<f32>(&asset, &markers);
    let d = data::<f32>();
    let layers = [d.layer(LayerMode::Override, 1.0, &[])];
    let mut m = Lsm::new(LayeredGraph { base: d.base(), layers: &layers }, &f.clips).unwrap();
    let mut scratch = LScratch::new();
    let mut out = [SoaTransform::IDENTITY; 2];
    m.set_float(0, 0.25).unwrap();
    assert_eq!(m.value(0), Some(0.25));
    assert_eq!(m.machine(1).unwrap().value(0), Some(0.25));
    assert_eq!(m.set_float(1, 1.0), Err(GraphError::ParameterKind { parameter: 1 }));
    assert_eq!(m.set_bool(0, true), Err(GraphError::ParameterKind { parameter: 0 }));
    assert_eq!(m.fire(7, true), Err(GraphError::UnknownParameter));
    // One trigger moves both layers in the same update, then is gone for both.
    m.fire(1, true).unwrap();
    let mut events = Vec::new();
    for _ in 0..20 {
        m.update(1.0 / 60.0, &f.clips, f.skel.view(), &mut scratch, &mut out, |e| events.push(e)).unwrap();
    }
    assert_eq!((m.machine(0).unwrap().current_state(), m.machine(1).unwrap().current_state()), (1, 1));
    assert_eq!((m.value(1), m.machine(1).unwrap().value(1)), (Some(0.0), Some(0.0)));
    // A trigger only the layer tests: consumed there, cleared for the base too.
    let mut m = Lsm::new(LayeredGraph { base: d.base(), layers: &layers }, &f.clips).unwrap();
    m.set_float(0, 1.0).unwrap();
    m.update(1.0 / 60.0, &f.clips, f.skel.view(), &mut scratch, &mut out, |_| {}).unwrap();
    m.fire(1, true).unwrap();
    m.update(1.0 / 60.0, &f.clips, f.skel.view(), &mut scratch, &mut out, |_| {}).unwrap();
    assert_eq!(m.machine(1).unwrap().current_state(), 1);
    assert_eq!((m.value(1), m.machine(0).unwrap().value(1)), (Some(0.0), Some(0.0)));
    // Events of both layers' clips, each with its layer: the base's walk and the layer's
    // run (pump) cross their marker at 0.25 s.
    let from = |layer: usize, clip: usize| events.iter().any(|e| e.layer == layer && e.event.clip == clip);
    assert!(from(0, 1) && from(1, 2), "{events:?}");
    assert!(events.iter().all(|e| e.event.event.id == 3));
}

#[test]
fn root_motion_comes_from_the_base() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = rfix::<f32>(&asset, &[]);
    let d = data::<f32>();
    let layers = [d.layer(LayerMode::Override, 1.0, &[])];
    // The clips bob the hips up and down: that is the motion.
    let settings = Some(RootMotionSettings { joint: 0, translation: [true; 3], yaw: false });
    let mut m = Lsm::new(LayeredGraph { base: d.base(), layers: &layers }, &f.clips).unwrap();
    let mut base = StateMachine::<f32, Rig>::new(d.base(), &f.clips).unwrap();
    m.set_root_motion(settings).unwrap();
    base.set_root_motion(settings).unwrap();
    let (mut scratch, mut out, mut b) = (LScratch::new(), [SoaTransform::IDENTITY; 2], [SoaTransform::IDENTITY; 2]);
    m.set_float(0, 1.0).unwrap();
    base.set_float(0, 1.0).unwrap();
    for _ in 0..40 {
        m.update(1.0 / 60.0, &f.clips, f.skel.view(), &mut scratch, &mut out, |_| {}).unwrap();
        base.update(1.0 / 60.0, &f.clips, f.skel.view(), &mut Scratch::new(), &mut b, |_| {}).unwrap();
        assert_eq!(m.root_motion_delta(), base.root_motion_delta());
    }
    assert_eq!(m.root_motion_total(), base.root_motion_total());
    assert_ne!(m.root_motion_total(), crate::root_motion::Motion::IDENTITY);
}

#[test]
fn validation_names_the_layer() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = rfix::<f32>(&asset, &[]);
    let d = data::<f32>();
    let ok = d.layer(LayerMode::Override, 1.0, &[]);
    let bad_state = [State { name: "x", kind: StateKind::Clip(9), looping: true }];
    let bad_condition = [d.conditions[0], Condition { parameter: 0, test: Test::Triggered }];
    let backwards = [Channel::range(3, 2, 0)];
    let cases: [(Vec<GraphLayer<f32>>, LayerError); 5] = [
        (
            std::vec![ok, GraphLayer { name: "other", states: &bad_state, ..ok }],
            LayerError { layer: 2, error: GraphError::Clip { state: 0 } },
        ),
        (
            std::vec![GraphLayer { conditions: &bad_condition, ..ok }],
            LayerError { layer: 1, error: GraphError::Condition { transition: 0, condition: 1 } },
        ),
        (std::vec![ok, ok], LayerError { layer: 2, error: GraphError::DuplicateLayer }),
        (std::vec![GraphLayer { weight: 1.5, ..ok }], LayerError { layer: 1, error: GraphError::LayerWeight }),
        (
            std::vec![GraphLayer { mask: &backwards, ..ok }],
            LayerError { layer: 1, error: GraphError::LayerMask { layer: 1 } },
        ),
    ];
    for (layers, e) in cases {
        let g = LayeredGraph { base: d.base(), layers: &layers };
        assert_eq!(g.validate(5), Err(e));
        assert_eq!(Lsm::new(g, &f.clips).err(), Some(e));
    }
    let three = [ok, GraphLayer { name: "b", ..ok }, GraphLayer { name: "c", ..ok }];
    let g = LayeredGraph { base: d.base(), layers: &three };
    assert_eq!(g.validate(5), Ok(()));
    assert_eq!(
        Lsm::new(g, &f.clips).err(),
        Some(LayerError { layer: 3, error: GraphError::TooManyLayers { count: 4, capacity: 3 } })
    );
    assert_eq!((g.layer("b"), g.layer("upper"), g.layer("nope")), (Some(2), Some(1), None));
    assert_eq!(g.graph(2).map(|l| l.states.len()), Some(2));
    let bad_base = Graph { initial: 5, ..d.base() };
    assert_eq!(LayeredGraph::new(bad_base).validate(5), Err(LayerError { layer: 0, error: GraphError::InitialState }));
    assert_eq!(
        std::format!("{}", LayerError { layer: 2, error: GraphError::DuplicateLayer }),
        "layer 2: the layer repeats a name"
    );
}

#[test]
fn layered_errors_change_nothing() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let markers = [Marker { time: 0.01, id: 1 }];
    let f = rfix::<f32>(&asset, &markers);
    let d = data::<f32>();
    let past = [Channel::subtree(6, 0)];
    let layers = [
        d.layer(LayerMode::Override, 1.0, &[]),
        GraphLayer { name: "arm", mask: &past, ..d.layer(LayerMode::Override, 0.5, &[]) },
    ];
    let mut m = Lsm::new(LayeredGraph { base: d.base(), layers: &layers }, &f.clips).unwrap();
    m.set_float(0, 1.0).unwrap();
    m.fire(1, true).unwrap();
    let sentinel = SoaTransform { translation: crate::math::SoaVec3::ONE, ..SoaTransform::IDENTITY };
    let before = std::format!("{m:?}");
    let cases: [(f32, usize, usize, GraphError); 4] = [
        (0.1, 5, 2, GraphError::LayerMask { layer: 2 }),
        (-0.1, 5, 2, GraphError::NegativeStep),
        (0.1, 4, 2, GraphError::Clip { state: 0 }),
        (0.1, 5, 1, GraphError::Controller(ControllerError::Job(JobError::OutputTooSmall))),
    ];
    for (dt, nclips, len, e) in cases {
        let mut o = [sentinel; 2];
        let mut events = 0;
        let r = m.update(dt, &f.clips[..nclips], f.skel.view(), &mut LScratch::new(), &mut o[..len], |_| events += 1);
        assert_eq!(r, Err(e));
        assert_eq!(std::format!("{m:?}"), before, "{e:?}");
        assert!(o.iter().all(|x| *x == sentinel) && events == 0);
    }
}
