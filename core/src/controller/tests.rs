//! Tests of the controller: validity, single clips, crossfades (synced or not), masked override
//! and additive layers, events, root motion, and the memory a character takes.

extern crate std;
use std::vec::Vec;

use super::*;
use crate::asset::Asset;
use crate::job::blending::{BlendingJob, Layer};
use crate::job::{JobError, SamplingJob};
use crate::math::{Quat, SoaTransform, Transform, Vec3};
use crate::player::{LoopMode, PlayerError};
use crate::skeleton::Skeleton;
use crate::test_support::*;

/// ```text
/// 0 Hips ─ 1 LegL
///    └─ 2 Spine ─ 3 Chest ─ 4 Head
///                    └─ 5 Arm
/// ```
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

/// walk (1 s, 2 m), run (0.6 s, 2.4 m), wave (2 s, upper body), nod (1 s, head only).
fn asset_bytes() -> Vec<u8> {
    let walk = ClipSpec {
        name: "walk",
        start: 0.0,
        end: 1.0,
        tracks: std::vec![
            translation(0, &[0.0, 0.5, 1.0], &[[0.0, 1.0, 0.0], [0.0, 0.95, 1.0], [0.0, 1.0, 2.0]]),
            rotation(1, &[0.0, 0.5, 1.0], &[rot(Vec3::X, 0.4), rot(Vec3::X, -0.4), rot(Vec3::X, 0.4)]),
            rotation(5, &[0.0, 0.5, 1.0], &[rot(Vec3::X, -0.2), rot(Vec3::X, 0.2), rot(Vec3::X, -0.2)]),
        ],
    };
    let run = ClipSpec {
        name: "run",
        start: 0.0,
        end: 0.6,
        tracks: std::vec![
            translation(0, &[0.0, 0.3, 0.6], &[[0.0, 1.0, 0.0], [0.0, 0.9, 1.2], [0.0, 1.0, 2.4]]),
            rotation(1, &[0.0, 0.3, 0.6], &[rot(Vec3::X, 0.8), rot(Vec3::X, -0.8), rot(Vec3::X, 0.8)]),
            rotation(3, &[0.0, 0.6], &[rot(Vec3::X, 0.2), rot(Vec3::X, 0.2)]),
        ],
    };
    let wave = ClipSpec {
        name: "wave",
        start: 0.0,
        end: 2.0,
        tracks: std::vec![
            rotation(5, &[0.0, 1.0, 2.0], &[rot(Vec3::Z, 1.5), rot(Vec3::Z, 2.5), rot(Vec3::Z, 1.5)]),
            rotation(4, &[0.0, 2.0], &[rot(Vec3::Y, 0.3), rot(Vec3::Y, -0.3)]),
            rotation(2, &[0.0, 2.0], &[rot(Vec3::Z, 0.1), rot(Vec3::Z, 0.1)]),
        ],
    };
    let nod = ClipSpec {
        name: "nod",
        start: 0.0,
        end: 1.0,
        tracks: std::vec![rotation(4, &[0.0, 0.5, 1.0], &[rot(Vec3::X, 0.0), rot(Vec3::X, 0.5), rot(Vec3::X, 0.0)])],
    };
    build(&PARENTS, &rest(), &NAMES, &[walk, run, wave, nod])
}

crate::capacity! {
    /// The test skeleton (6 joints in 2 SoA elements), 4 slots, 3 layers, 9 tracks.
    pub struct Test { joints: 8, slots: 4, layers: 3, tracks: 9 }
}
crate::capacity! {
    /// Too few tracks for the walk.
    pub struct Small { joints: 8, slots: 2, tracks: 2 }
}
crate::capacity! {
    /// The test's sizes without root motion.
    pub struct Grounded { joints: 8, slots: 4, layers: 3, tracks: 9, params: 0, root_motion: false }
}
crate::capacity! {
    /// The test's sizes without additive layers.
    pub struct OverrideOnly { joints: 8, slots: 4, layers: 3, tracks: 9, params: 0, root_motion: true, additive: false }
}

type Ctl = Controller<f32, Test>;
type Scratch = ControllerScratch<f32, Test>;

struct Fixture<'a> {
    skel: Skeleton<f32, 2>,
    clips: [ClipEntry<'a, f32>; 4],
}

fn fixture<'a>(asset: &Asset<'a>, markers: &'a [Marker<f32>]) -> Fixture<'a> {
    Fixture {
        skel: asset.skeleton().unwrap().to_skeleton().unwrap(),
        clips: core::array::from_fn(|i| ClipEntry { clip: asset.clip(i).unwrap(), markers }),
    }
}

fn sample(f: &Fixture, clip: usize, t: f32) -> [SoaTransform<f32>; 2] {
    let mut out = [SoaTransform::IDENTITY; 2];
    let mut cursor = [0u16; 9];
    SamplingJob {
        clip: f.clips[clip].clip,
        time: t,
        rotation: RotationInterpolation::default(),
        rest_pose: f.skel.rest_pose(),
        cursor: &mut cursor,
        output: &mut out,
    }
    .run()
    .unwrap();
    out
}

fn max_diff(a: &[SoaTransform<f32>], b: &[SoaTransform<f32>], joints: usize) -> f32 {
    (0..joints)
        .map(|j| {
            let (x, y) = (a[j / 4].lane(j % 4), b[j / 4].lane(j % 4));
            (x.translation - y.translation)
                .max_abs()
                .max((x.scale - y.scale).max_abs())
                .max(x.rotation.angle_between(y.rotation))
        })
        .fold(0.0, f32::max)
}

fn update(c: &mut Ctl, f: &Fixture, dt: f32, out: &mut [SoaTransform<f32>]) -> Vec<ControllerEvent<f32>> {
    let mut ev = Vec::new();
    c.update(dt, &f.clips, f.skel.view(), &mut Scratch::new(), out, |e| ev.push(e)).unwrap();
    ev
}

#[test]
fn validity() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fixture(&asset, &[]);
    let mut c = Ctl::new();
    // Configuration calls.
    assert_eq!(c.assign(SlotId(4), LayerId(0), ClipId(0), &f.clips), Err(ControllerError::SlotOutOfRange));
    assert_eq!(c.assign(SlotId(0), LayerId(3), ClipId(0), &f.clips), Err(ControllerError::LayerOutOfRange));
    assert_eq!(
        c.assign(SlotId(0), LayerId(0), ClipId(4), &f.clips),
        Err(ControllerError::UnknownClip { clip: ClipId(4), clips: 4 })
    );
    assert_eq!(c.clip_of(0), None);
    let mut small = Controller::<f32, Small>::new();
    assert_eq!(
        small.assign(SlotId(0), LayerId(0), ClipId(0), &f.clips),
        Err(ControllerError::TooManyTracks { tracks: 3, capacity: 2 })
    );
    assert_eq!(c.set_weight(0, 1.0), Err(ControllerError::EmptySlot));
    assert_eq!(c.crossfade(9, 1.0, FadeCurve::Linear, false), Err(ControllerError::SlotOutOfRange));
    c.assign(SlotId(0), LayerId(0), ClipId(0), &f.clips).unwrap();
    assert_eq!(c.set_weight(0, f32::NAN), Err(ControllerError::InvalidParameter));
    assert_eq!(c.fade_to(0, 1.0, -1.0, FadeCurve::Linear), Err(ControllerError::InvalidParameter));
    assert_eq!(c.crossfade(0, f32::INFINITY, FadeCurve::Linear, false), Err(ControllerError::InvalidParameter));
    assert_eq!(c.set_layer(5, LayerMode::Override, 1.0), Err(ControllerError::LayerOutOfRange));
    assert_eq!(c.set_layer_weight(1, f32::NAN), Err(ControllerError::InvalidParameter));
    assert_eq!(c.set_threshold(0.0), Err(ControllerError::InvalidParameter));
    assert_eq!(
        c.set_layer_mask(1, f.skel.view(), &[Channel::subtree(6, 0)], false),
        Err(ControllerError::Job(JobError::JointIndexOutOfRange))
    );
    c.set_weight(0, 1.0).unwrap();

    // Updates: each bad input leaves the output, the players and the events alone.
    let sentinel = SoaTransform { translation: crate::math::SoaVec3::ONE, ..SoaTransform::IDENTITY };
    let other: Skeleton<f32, 3> = Skeleton::new(&[-1; 9], &[Transform::IDENTITY; 9], &[""; 9]).unwrap();
    let tiny: Skeleton<f32, 1> = Skeleton::new(&[-1], &[Transform::IDENTITY], &[""]).unwrap();
    let mut cases: Vec<(Ctl, f32, usize, usize, ControllerError)> = std::vec![
        (c.clone(), f32::NAN, 4, 2, ControllerError::Player(PlayerError::NonFiniteDelta)),
        (c.clone(), 1.0e7, 4, 2, ControllerError::Player(PlayerError::TooManyWraps)),
        (c.clone(), 0.1, 0, 2, ControllerError::ClipOutOfRange { slot: 0 }),
        (c.clone(), 0.1, 4, 1, ControllerError::Job(JobError::OutputTooSmall)),
    ];
    let mut masked = c.clone();
    masked.set_layer_mask(1, tiny.view(), &[Channel::subtree(0, 0)], false).unwrap();
    cases.push((masked, 0.1, 4, 2, ControllerError::MaskMismatch { layer: 1 }));
    let mut rooted = c.clone();
    rooted.set_root_motion(Some(RootMotionSettings { joint: 6, ..Default::default() })).unwrap();
    cases.push((rooted, 0.1, 4, 2, ControllerError::Job(JobError::JointIndexOutOfRange)));
    for (mut ctl, dt, nclips, out_len, e) in cases {
        let before = std::format!("{ctl:?}");
        let mut out = [sentinel; 2];
        let mut events = 0;
        let r = ctl
            .update(dt, &f.clips[..nclips], f.skel.view(), &mut Scratch::new(), &mut out[..out_len], |_| events += 1);
        assert_eq!(r, Err(e));
        assert_eq!(std::format!("{ctl:?}"), before, "{e:?}");
        assert!(out.iter().all(|o| *o == sentinel) && events == 0, "{e:?}");
    }
    // A skeleton larger than SOA, and a clip animating joints past the skeleton.
    let mut out = [sentinel; 3];
    assert_eq!(
        c.update(0.1, &f.clips, other.view(), &mut Scratch::new(), &mut out, |_| {}),
        Err(ControllerError::SkeletonTooLarge)
    );
    let mut out = [sentinel; 1];
    assert_eq!(
        c.update(0.1, &f.clips, tiny.view(), &mut Scratch::new(), &mut out, |_| {}),
        Err(ControllerError::Job(JobError::JointIndexOutOfRange))
    );
    assert_eq!(out[0], sentinel);
    // Nothing active: the rest pose.
    let mut empty = Ctl::new();
    let mut out = [sentinel; 2];
    empty.update(0.1, &f.clips, f.skel.view(), &mut Scratch::new(), &mut out, |_| {}).unwrap();
    assert!(max_diff(&out, f.skel.rest_pose(), 6) < 1.0e-6);
}

#[test]
fn single_clip_equals_its_sample() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fixture(&asset, &[]);
    let mut c = Ctl::new();
    c.assign(SlotId(0), LayerId(0), ClipId(1), &f.clips).unwrap();
    c.set_weight(0, 1.0).unwrap();
    let mut out = [SoaTransform::IDENTITY; 2];
    let mut worst = 0.0f32;
    for _ in 0..if cfg!(miri) { 30 } else { 200 } {
        update(&mut c, &f, 1.0 / 60.0, &mut out);
        let t = c.player(0).unwrap().time();
        worst = worst.max(max_diff(&out, &sample(&f, 1, t), 6));
    }
    assert!(worst < 1.0e-6, "{worst}");
}

#[test]
fn crossfade_weights_and_blend() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fixture(&asset, &[]);
    for curve in [FadeCurve::Linear, FadeCurve::SmoothStep] {
        let mut c = Ctl::new();
        c.assign(SlotId(0), LayerId(0), ClipId(0), &f.clips).unwrap();
        c.assign(SlotId(1), LayerId(0), ClipId(1), &f.clips).unwrap();
        c.set_weight(0, 1.0).unwrap();
        let mut out = [SoaTransform::IDENTITY; 2];
        update(&mut c, &f, 0.25, &mut out);
        c.crossfade(1, 0.5, curve, false).unwrap();
        for k in 1..=6 {
            update(&mut c, &f, 0.1, &mut out);
            let s = (k as f32 * 0.1 / 0.5).min(1.0);
            let e = match curve {
                FadeCurve::Linear => s,
                FadeCurve::SmoothStep => s * s * (3.0 - 2.0 * s),
            };
            let (w0, w1) = (c.weight(0).unwrap(), c.weight(1).unwrap());
            assert!((w1 - e).abs() < 1.0e-6 && (w0 - (1.0 - e)).abs() < 1.0e-6, "{curve:?} {k}: {w0} {w1}");
            assert_eq!(c.is_fading(1), k < 5);
            // The output is the blend of the two samples at those weights.
            let (a, b) = (sample(&f, 0, c.player(0).unwrap().time()), sample(&f, 1, c.player(1).unwrap().time()));
            let mut expected = [SoaTransform::IDENTITY; 2];
            let layers = [Layer::new(&a, w0), Layer::new(&b, w1)];
            let layers: Vec<Layer<f32>> = layers.into_iter().filter(|l| l.weight > 0.0).collect();
            BlendingJob {
                layers: &layers,
                additive: &[],
                rest_pose: f.skel.rest_pose(),
                threshold: 1.0,
                output: &mut expected,
            }
            .run()
            .unwrap();
            assert!(max_diff(&out, &expected, 6) < 1.0e-6, "{curve:?} {k}");
        }
        // Slot 0 faded out: no longer advanced.
        let t0 = c.player(0).unwrap().time();
        update(&mut c, &f, 0.1, &mut out);
        assert_eq!(c.player(0).unwrap().time(), t0);
    }
}

#[test]
fn synced_crossfade_keeps_the_phase() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fixture(&asset, &[]);
    let mut c = Ctl::new();
    c.assign(SlotId(0), LayerId(0), ClipId(0), &f.clips).unwrap();
    c.assign(SlotId(1), LayerId(0), ClipId(1), &f.clips).unwrap();
    c.set_weight(0, 1.0).unwrap();
    let mut out = [SoaTransform::IDENTITY; 2];
    for _ in 0..19 {
        update(&mut c, &f, 1.0 / 60.0, &mut out);
    }
    c.crossfade(1, 0.5, FadeCurve::SmoothStep, true).unwrap();
    let phase = |c: &Ctl, s: usize| c.player(s).unwrap().normalized();
    assert!((phase(&c, 0) - phase(&c, 1)).abs() < 1.0e-6);
    let mut prev = phase(&c, 1);
    for k in 0..30 {
        update(&mut c, &f, 1.0 / 60.0, &mut out);
        let (p0, p1) = (phase(&c, 0), phase(&c, 1));
        assert!((p0 - p1).abs() < 1.0e-5, "frame {k}: {p0} vs {p1}");
        // The shared rate moves from the walk's (1 cycle/s) to the run's (1/0.6).
        let step = (p1 - prev).rem_euclid(1.0) * 60.0;
        assert!((0.999..=1.0 / 0.6 + 1.0e-3).contains(&step), "frame {k}: rate {step}");
        prev = p1;
    }
    // After the fade, the run plays at its own rate: exactly dt per update.
    let t = c.player(1).unwrap().time();
    update(&mut c, &f, 0.125, &mut out);
    let expected = (t + 0.125).rem_euclid(0.6);
    assert!((c.player(1).unwrap().time() - expected).abs() < 1.0e-6);
    // Without sync, the phases drift apart during the same fade.
    let mut d = Ctl::new();
    d.assign(SlotId(0), LayerId(0), ClipId(0), &f.clips).unwrap();
    d.assign(SlotId(1), LayerId(0), ClipId(1), &f.clips).unwrap();
    d.set_weight(0, 1.0).unwrap();
    update(&mut d, &f, 0.3, &mut out);
    let start = phase(&d, 0);
    d.player_mut(1).unwrap().set_normalized(start);
    d.crossfade(1, 0.5, FadeCurve::Linear, false).unwrap();
    update(&mut d, &f, 0.4, &mut out);
    assert!((phase(&d, 0) - phase(&d, 1)).abs() > 0.1);
}

#[test]
fn masked_override_layer_and_fade_in_edge() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fixture(&asset, &[]);
    for fade_in in [0u16, 2] {
        let mut c = Ctl::new();
        c.assign(SlotId(0), LayerId(0), ClipId(0), &f.clips).unwrap();
        c.assign(SlotId(1), LayerId(1), ClipId(2), &f.clips).unwrap();
        let spine = Channel::named(f.skel.view(), "Spine", fade_in).unwrap();
        c.set_layer_mask(1, f.skel.view(), &[spine], false).unwrap();
        c.set_weight(0, 1.0).unwrap();
        c.set_weight(1, 1.0).unwrap();
        let mut out = [SoaTransform::IDENTITY; 2];
        update(&mut c, &f, 0.3, &mut out);
        let walk = sample(&f, 0, c.player(0).unwrap().time());
        let wave = sample(&f, 2, c.player(1).unwrap().time());
        // Mask weights: Spine 1/3, Chest 2/3, deeper 1 (fade 2); all 1 (fade 0).
        let m = |depth: usize| if fade_in == 0 { 1.0 } else { ((depth + 1) as f32 / 3.0).min(1.0) };
        for (j, w) in [(0, 0.0), (1, 0.0), (2, m(0)), (3, m(1)), (4, m(2)), (5, m(2))] {
            let mut one = [SoaTransform::IDENTITY; 2];
            let layers = [Layer::new(&walk, 1.0 - w), Layer::new(&wave, w)];
            let layers: Vec<Layer<f32>> = layers.into_iter().filter(|l| l.weight > 0.0).collect();
            BlendingJob {
                layers: &layers,
                additive: &[],
                rest_pose: f.skel.rest_pose(),
                threshold: 1.0,
                output: &mut one,
            }
            .run()
            .unwrap();
            let (g, l) = (j / 4, j % 4);
            let (a, b) = (out[g].lane(l), one[g].lane(l));
            assert!(a.rotation.angle_between(b.rotation) < 1.0e-6, "fade {fade_in} joint {j}");
            assert!((a.translation - b.translation).max_abs() < 1.0e-6);
        }
        // The upper layer at half weight covers half.
        c.set_layer_weight(1, 0.5).unwrap();
        update(&mut c, &f, 0.0, &mut out);
        let arm = out[1].lane(1).rotation;
        let expected = walk[1].rotation.lane(1).nlerp(wave[1].rotation.lane(1), 0.5);
        assert!(arm.angle_between(expected) < 1.0e-5);
    }
}

#[test]
fn additive_layer_adds_the_nod() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fixture(&asset, &[]);
    let mut c = Ctl::new();
    c.assign(SlotId(0), LayerId(0), ClipId(0), &f.clips).unwrap();
    c.assign(SlotId(1), LayerId(2), ClipId(3), &f.clips).unwrap();
    c.set_layer(2, LayerMode::Additive(AdditiveReference::RestPose), 1.0).unwrap();
    c.set_weight(0, 1.0).unwrap();
    c.set_weight(1, 1.0).unwrap();
    let mut out = [SoaTransform::IDENTITY; 2];
    update(&mut c, &f, 0.5, &mut out);
    // Head (joint 4): the walk leaves it at rest; the nod at 0.5 s adds 0.5 rad about X.
    let head = out[1].lane(0).rotation;
    assert!(head.angle_between(Quat::from_axis_angle(Vec3::X, 0.5)) < 1.0e-5);
    // Other joints are the walk's.
    let walk = sample(&f, 0, 0.5);
    assert!(max_diff(&out[..1], &walk[..1], 4) < 1.0e-6);
    // Half the layer weight: half the nod (nlerp from identity).
    c.set_layer_weight(2, 0.5).unwrap();
    update(&mut c, &f, 0.0, &mut out);
    let half = Quat::IDENTITY.nlerp(Quat::from_axis_angle(Vec3::X, 0.5), 0.5);
    assert!(out[1].lane(0).rotation.angle_between(half) < 1.0e-5);
}

#[test]
fn events_name_their_slot() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let markers = [Marker { time: 0.5f32, id: 7 }];
    let f = fixture(&asset, &markers);
    let mut c = Ctl::new();
    c.assign(SlotId(0), LayerId(0), ClipId(0), &f.clips).unwrap();
    c.assign(SlotId(1), LayerId(0), ClipId(1), &f.clips).unwrap();
    c.assign(SlotId(2), LayerId(0), ClipId(2), &f.clips).unwrap(); // weight 0: silent
    c.set_weight(0, 1.0).unwrap();
    let mut out = [SoaTransform::IDENTITY; 2];
    // 2.2 s of walk: the marker at 0.5 s is crossed at 0.5, 1.5.
    let ev = update(&mut c, &f, 2.2, &mut out);
    assert_eq!(ev.iter().map(|e| (e.slot, e.clip, e.event.id)).collect::<Vec<_>>(), [(0, 0, 7), (0, 0, 7)]);
    c.crossfade(1, 1.0, FadeCurve::Linear, false).unwrap();
    // 1.3 s: walk 2.2 → 3.5 crosses 2.5, 3.5; run 0 → 1.3 (0.6 s loops, marker 0.5) crosses
    // 0.5 and 1.1.
    let ev = update(&mut c, &f, 1.3, &mut out);
    let got: Vec<(usize, u32)> = ev.iter().map(|e| (e.slot, e.event.id)).collect();
    assert_eq!(got, [(0, 7), (0, 7), (1, 7), (1, 7)]);
    assert!(ev.iter().all(|e| e.slot != 1 || e.weight == 1.0));
}

#[test]
fn a_capacity_without_root_motion_refuses_it_and_plays_the_same_pose() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fixture(&asset, &[]);
    let mut grounded = Controller::<f32, Grounded>::new();
    let before = std::format!("{grounded:?}");
    assert_eq!(grounded.set_root_motion(Some(RootMotionSettings::default())), Err(ControllerError::NoRootMotion));
    assert_eq!(std::format!("{grounded:?}"), before);
    assert_eq!(grounded.set_root_motion(None), Ok(()));
    let mut c = Ctl::new();
    for (slot, weight) in [(0, 0.25), (1, 0.75)] {
        c.assign(SlotId(slot), LayerId(0), ClipId(slot), &f.clips).unwrap();
        c.set_weight(slot, weight).unwrap();
        grounded.assign(SlotId(slot), LayerId(0), ClipId(slot), &f.clips).unwrap();
        grounded.set_weight(slot, weight).unwrap();
    }
    let (mut a, mut b) = ([SoaTransform::IDENTITY; 2], [SoaTransform::IDENTITY; 2]);
    for _ in 0..5 {
        update(&mut c, &f, 0.1, &mut a);
        grounded.update(0.1, &f.clips, f.skel.view(), &mut ControllerScratch::new(), &mut b, |_| {}).unwrap();
        assert_eq!(a, b);
    }
    assert_eq!(grounded.root_motion_total(), Motion::IDENTITY);
}

#[test]
fn a_capacity_without_additive_layers_refuses_them_and_blends_the_same_pose() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fixture(&asset, &[]);
    let mut plain = Controller::<f32, OverrideOnly>::new();
    let before = std::format!("{plain:?}");
    for reference in [AdditiveReference::RestPose, AdditiveReference::Baked] {
        assert_eq!(plain.set_layer(1, LayerMode::Additive(reference), 1.0), Err(ControllerError::NoAdditive));
    }
    assert_eq!(std::format!("{plain:?}"), before, "a refused layer changes nothing");
    assert_eq!(plain.set_layer(1, LayerMode::Override, 0.5), Ok(()));
    let mut c = Ctl::new();
    c.set_layer(1, LayerMode::Override, 0.5).unwrap();
    for (slot, layer, weight) in [(0, 0, 0.25), (1, 0, 0.75), (2, 1, 1.0)] {
        c.assign(SlotId(slot), LayerId(layer), ClipId(slot % 2), &f.clips).unwrap();
        c.set_weight(slot, weight).unwrap();
        plain.assign(SlotId(slot), LayerId(layer), ClipId(slot % 2), &f.clips).unwrap();
        plain.set_weight(slot, weight).unwrap();
    }
    let (mut a, mut b) = ([SoaTransform::IDENTITY; 2], [SoaTransform::IDENTITY; 2]);
    for _ in 0..5 {
        update(&mut c, &f, 0.1, &mut a);
        plain.update(0.1, &f.clips, f.skel.view(), &mut ControllerScratch::new(), &mut b, |_| {}).unwrap();
        assert_eq!(a, b);
    }
}

#[test]
fn key_caches_sample_what_key_cursors_sample() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fixture(&asset, &[]);
    let mut cursors = Ctl::new();
    let mut caches = Controller::<f32, Test, SoaCaches>::new();
    for (slot, weight) in [(0, 0.6), (1, 0.4)] {
        cursors.assign(SlotId(slot), LayerId(0), ClipId(slot), &f.clips).unwrap();
        cursors.set_weight(slot, weight).unwrap();
        caches.assign(SlotId(slot), LayerId(0), ClipId(slot), &f.clips).unwrap();
        caches.set_weight(slot, weight).unwrap();
    }
    let (mut a, mut b) = ([SoaTransform::IDENTITY; 2], [SoaTransform::IDENTITY; 2]);
    // Forward, a seek back, then forward again: the caches refill where the cursors move.
    for (step, dt) in [0.1, 0.25, 0.3, -0.45, 0.05, 0.2].into_iter().enumerate() {
        if dt < 0.0 {
            for slot in 0..2 {
                let t = cursors.player(slot).unwrap().time() + dt;
                cursors.player_mut(slot).unwrap().seek(t);
                caches.player_mut(slot).unwrap().seek(t);
            }
        }
        let dt = dt.max(0.0);
        update(&mut cursors, &f, dt, &mut a);
        caches.update(dt, &f.clips, f.skel.view(), &mut ControllerScratch::new(), &mut b, |_| {}).unwrap();
        for j in 0..6 {
            let (x, y) = (a[j / 4].lane(j % 4), b[j / 4].lane(j % 4));
            assert!((x.translation - y.translation).max_abs() < 1e-5, "step {step}, joint {j}");
            assert!(x.rotation.angle_between(y.rotation) < 1e-4, "step {step}, joint {j}");
        }
    }
}

#[test]
fn root_motion_through_the_controller() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fixture(&asset, &[]);
    let mut c = Ctl::new();
    c.set_root_motion(Some(RootMotionSettings::default())).unwrap();
    c.assign(SlotId(0), LayerId(0), ClipId(0), &f.clips).unwrap();
    c.set_weight(0, 1.0).unwrap();
    let mut out = [SoaTransform::IDENTITY; 2];
    // 10 loops of the walk at 64 Hz: 20 m along Z, the hips in place.
    let (steps, dt) = if cfg!(miri) { (40, 0.25) } else { (640, 1.0 / 64.0) };
    for _ in 0..steps {
        update(&mut c, &f, dt, &mut out);
        let hips = out[0].lane(0).translation;
        assert!(hips.x.abs() < 1.0e-6 && hips.z.abs() < 1.0e-6);
    }
    let total = c.root_motion_total();
    assert!((total.translation - Vec3::new(0.0, 0.0, 20.0)).max_abs() < 1.0e-4, "{total:?}");
    // Reverse: back to the start.
    c.player_mut(0).unwrap().set_speed(-1.0);
    for _ in 0..steps {
        update(&mut c, &f, dt, &mut out);
    }
    assert!(c.root_motion_total().translation.max_abs() < 1.0e-4);
    // A seek does not move the character.
    c.player_mut(0).unwrap().seek(0.9);
    update(&mut c, &f, 0.0, &mut out);
    assert_eq!(c.root_motion_delta(), Motion::IDENTITY);
    // Blended: half walk (2 m/s) and half run (4 m/s) move 3 m/s.
    let mut b = Ctl::new();
    b.set_root_motion(Some(RootMotionSettings::default())).unwrap();
    b.assign(SlotId(0), LayerId(0), ClipId(0), &f.clips).unwrap();
    b.assign(SlotId(1), LayerId(0), ClipId(1), &f.clips).unwrap();
    b.set_weight(0, 0.5).unwrap();
    b.set_weight(1, 0.5).unwrap();
    update(&mut b, &f, 0.0, &mut out);
    b.reset_root_motion_total();
    let (steps, dt) = if cfg!(miri) { (30, 0.1) } else { (300, 1.0 / 100.0) };
    for _ in 0..steps {
        update(&mut b, &f, dt, &mut out);
    }
    let z = b.root_motion_total().translation.z;
    assert!((z - 9.0).abs() < 1.0e-3, "{z}");
}

#[test]
fn once_mode_slot_holds_its_last_pose() {
    let bytes = asset_bytes();
    let asset = Asset::parse(&bytes).unwrap();
    let f = fixture(&asset, &[]);
    let mut c = Ctl::new();
    c.assign(SlotId(0), LayerId(0), ClipId(2), &f.clips).unwrap();
    c.set_weight(0, 1.0).unwrap();
    c.player_mut(0).unwrap().set_mode(LoopMode::Once);
    let mut out = [SoaTransform::IDENTITY; 2];
    update(&mut c, &f, 5.0, &mut out);
    assert!(c.player(0).unwrap().finished());
    assert!(max_diff(&out, &sample(&f, 2, 2.0), 6) < 1.0e-6);
}

#[test]
fn memory_per_character() {
    crate::capacity! {
        /// 24 joints, 4 slots, 3 layers.
        pub struct Hero24 { joints: 24, slots: 4, layers: 3 }
    }
    crate::capacity! {
        /// 67 joints, 4 slots, 3 layers.
        pub struct Rig67 { joints: 67, slots: 4, layers: 3 }
    }
    let s24 = core::mem::size_of::<Controller<f32, Hero24>>();
    let s67 = core::mem::size_of::<Controller<f32, Rig67>>();
    let q67 = core::mem::size_of::<Controller<crate::real::Q16, Rig67>>();
    let x24 = core::mem::size_of::<ControllerScratch<f32, Hero24>>();
    let x67 = core::mem::size_of::<ControllerScratch<f32, Rig67>>();
    std::println!("Controller<f32, Hero24> (24 joints, 4 slots, 3 layers): {s24} bytes, scratch {x24}");
    std::println!("Controller<f32, Rig67> (67 joints, 4 slots, 3 layers): {s67} bytes (Q16: {q67}), scratch {x67}");
    // The controller: a mask of LAYERS × SOA × 16 bytes, 2 × TRACKS per slot for cursors,
    // and about 160 bytes of state per slot. The scratch: SLOTS × SOA × 160 bytes of poses
    // and LAYERS × SOA × 16 of shares.
    let bound = |soa: usize, tracks: usize| 3 * soa * 16 + 4 * (2 * tracks + 160) + 256;
    assert!(s24 <= bound(6, 72), "{s24}");
    assert!(s67 <= bound(17, 201), "{s67}");
    assert_eq!(s67, q67);
    assert_eq!(x24, 4 * 6 * 160 + 3 * 6 * 16);
    assert_eq!(x67, 4 * 17 * 160 + 3 * 17 * 16);
    // The sizes of the module documentation's table.
    assert_eq!((s24, x24), (1760, 4128));
    assert_eq!((s67, x67), (3312, 11696));
}

/// The sizes `capacity`'s documentation gives for its ready-made capacities.
#[test]
fn ready_made_capacity_memory() {
    use crate::capacity::{Embedded, Humanoid, LargeRig};
    use crate::graph::StateMachine;
    use core::mem::size_of;
    fn sizes<C: crate::capacity::Capacity>() -> [usize; 3] {
        [size_of::<Controller<f32, C>>(), size_of::<ControllerScratch<f32, C>>(), size_of::<StateMachine<'_, f32, C>>()]
    }
    let (e, h, l) = (sizes::<Embedded>(), sizes::<Humanoid>(), sizes::<LargeRig>());
    std::println!("Embedded {e:?}, Humanoid {h:?}, LargeRig {l:?} (controller, scratch, state machine)");
    assert_eq!(e, [1184, 2976, 4128]);
    assert_eq!(h, [3432, 13440, 12688]);
    assert_eq!(l, [18072, 86016, 47232]);
    fn q16_sizes<C: crate::capacity::Capacity>() -> [usize; 3] {
        use crate::real::Q16;
        [size_of::<Controller<Q16, C>>(), size_of::<ControllerScratch<Q16, C>>(), size_of::<StateMachine<'_, Q16, C>>()]
    }
    assert_eq!((q16_sizes::<Embedded>(), q16_sizes::<Humanoid>(), q16_sizes::<LargeRig>()), (e, h, l));
}
