//! The three sampling states (`u16` key cursors, per-track `TrackCache`, per-four-joints
//! `SoaTrackCache`) give the same poses on real models, baked (quantized keys, exact-slerp
//! tracks) and lossless (f32 keys, STEP and CUBICSPLINE tracks), in f32 and Q16, over playback
//! that runs forward at 60 Hz, wraps, jumps back, lands on key times and leaves the clip range.
//!
//! The cursor path decodes the surrounding keys at every call and is the reference. The bound
//! is rounding: the caches compute the same formulas from the same keys, except that the SoA
//! cache forms rotations as `a·c0 + b·c1` (one rounding more or less than `a + (b − a)·c`), takes
//! exact slerp's sines from a Taylor series instead of the reduced `ops::sin`, and renormalizes
//! a held key once more.

use std::path::PathBuf;

use sinew::clip::{Clip, RotationInterpolation, SoaTrackCache, TrackCache};
use sinew::job::sampling::TrackState;
use sinew::job::SamplingJob;
use sinew::math::SoaTransform;
use sinew::skeleton::Skeleton;
use sinew::{Real, Q16};
use sinew_offline::bake::BakeOptions;
use sinew_offline::model::Model;

fn asset(rel: &str) -> PathBuf {
    sinew_assets::path(rel)
}

/// Clip times: 60 Hz forward with wraps, every 53rd a jump back, key-like round times, and times
/// before the start and after the end.
fn times(start: f32, end: f32, n: usize) -> Vec<f32> {
    let d = (end - start).max(1e-3);
    let mut t = 0.0f32;
    (0..n)
        .map(|i| {
            t += 1.0 / 60.0;
            if t >= d {
                t -= d;
            }
            match i % 53 {
                7 => start + 0.25 * d,
                19 => start - 1.0,
                31 => end + 1.0,
                41 => end,
                43 => start,
                _ => start + t,
            }
        })
        .collect()
}

fn run<R: Real, C: TrackState<R>>(
    clip: Clip<'_>,
    t: R,
    rot: RotationInterpolation,
    rest: &[SoaTransform<R>],
    state: &mut [C],
    out: &mut [SoaTransform<R>],
) {
    SamplingJob { clip, time: t, rotation: rot, rest_pose: rest, cursor: state, output: out }.run().unwrap();
}

/// Worst differences against the cursor path: (translation and scale, relative to max(1, |v|);
/// rotation angle in radians).
#[derive(Default, Debug, Clone, Copy)]
struct Worst {
    vector: f64,
    angle: f64,
}

fn compare<R: Real>(reference: &[SoaTransform<R>], got: &[SoaTransform<R>], worst: &mut Worst) {
    for (a, b) in reference.iter().zip(got) {
        for l in 0..4 {
            let (x, y) = (a.lane(l), b.lane(l));
            for (p, q) in [(x.translation, y.translation), (x.scale, y.scale)] {
                for (u, v) in [(p.x, q.x), (p.y, q.y), (p.z, q.z)] {
                    let (u, v) = (u.to_f32() as f64, v.to_f32() as f64);
                    worst.vector = worst.vector.max((u - v).abs() / u.abs().max(1.0));
                }
            }
            // The angle of the relative rotation conj(p)·q, as 2·atan2(|v|, |w|): accurate for
            // tiny angles, where acos of the dot product is not.
            let f = |v: R| v.to_f32() as f64;
            let (p, q) = (x.rotation, y.rotation);
            let (pw, px, py, pz) = (f(p.w), -f(p.x), -f(p.y), -f(p.z));
            let (qw, qx, qy, qz) = (f(q.w), f(q.x), f(q.y), f(q.z));
            let rw = pw * qw - px * qx - py * qy - pz * qz;
            let rx = pw * qx + px * qw + py * qz - pz * qy;
            let ry = pw * qy - px * qz + py * qw + pz * qx;
            let rz = pw * qz + px * qy - py * qx + pz * qw;
            let v = (rx * rx + ry * ry + rz * rz).sqrt();
            worst.angle = worst.angle.max(2.0 * v.atan2(rw.abs()));
        }
    }
}

/// Samples every clip of `model` with the three states along [`times`]; returns the worst
/// differences of the per-track and SoA caches against cursors.
fn check_model<R: Real>(model: &Model, rest: &[SoaTransform<R>], calls: usize) -> (Worst, Worst) {
    let asset = model.asset();
    let (mut per_track, mut soa) = (Worst::default(), Worst::default());
    for rot in [RotationInterpolation::NlerpCorrected, RotationInterpolation::Slerp] {
        for c in 0..asset.num_clips() {
            let clip = asset.clip(c).unwrap();
            let mut cursor = vec![0u16; clip.num_tracks()];
            let mut cache = vec![TrackCache::<R>::EMPTY; clip.num_tracks()];
            let mut lanes = vec![SoaTrackCache::<R>::EMPTY; rest.len()];
            let mut out = [vec![SoaTransform::<R>::IDENTITY; rest.len()], vec![], vec![]];
            out[1] = out[0].clone();
            out[2] = out[0].clone();
            for t in times(clip.start(), clip.end(), calls) {
                let t = R::from_f32(t);
                let [o0, o1, o2] = &mut out;
                run(clip, t, rot, rest, &mut cursor, o0);
                run(clip, t, rot, rest, &mut cache, o1);
                run(clip, t, rot, rest, &mut lanes, o2);
                compare(o0, o1, &mut per_track);
                compare(o0, o2, &mut soa);
            }
        }
    }
    (per_track, soa)
}

fn load(rel: &str, lossless: bool) -> Model {
    let opts = BakeOptions { lossless, ..BakeOptions::default() };
    Model::load(&asset(rel), None, &opts).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

const MODELS: [(&str, bool); 7] = [
    ("ozz/pab_crossarms.glb", false),
    ("gltf/CesiumMan/CesiumMan.glb", false),
    ("gltf/Fox/Fox.glb", false),
    ("gltf/BrainStem/BrainStem.glb", false),
    ("gltf/InterpolationTest/InterpolationTest.glb", true),
    ("gltf/RiggedFigure/RiggedFigure.glb", true),
    ("gltf/CesiumMan/CesiumMan.glb", true),
];

#[test]
fn caches_match_cursors_in_f32() {
    for (rel, lossless) in MODELS {
        let model = load(rel, lossless);
        let (per_track, soa) = check_model::<f32>(&model, model.skeleton().rest_pose(), 600);
        println!("f32 {rel} lossless={lossless}: per-track cache {per_track:?}, SoA cache {soa:?}");
        // A few f32 roundings (measured: up to 1.2e-7 relative and 2.8e-7 rad).
        assert!(per_track.vector < 5e-7 && per_track.angle < 1e-6, "{rel}: per-track cache {per_track:?}");
        assert!(soa.vector < 5e-7 && soa.angle < 1e-6, "{rel}: SoA cache {soa:?}");
    }
}

#[test]
fn caches_match_cursors_in_q16() {
    for (rel, lossless) in MODELS {
        let model = load(rel, lossless);
        let skel: Box<Skeleton<Q16, 64>> = Box::new(model.asset().skeleton().unwrap().to_skeleton().unwrap());
        let (per_track, soa) = check_model::<Q16>(&model, skel.rest_pose(), 200);
        println!("Q16 {rel} lossless={lossless}: per-track cache {per_track:?}, SoA cache {soa:?}");
        // A few Q16 steps (2⁻¹⁶ ≈ 1.5e-5) from rounded products and renormalizations
        // (measured: one step on vectors, 9.1e-5 rad).
        assert!(per_track.vector < 4e-5 && per_track.angle < 2e-4, "{rel}: per-track cache {per_track:?}");
        assert!(soa.vector < 4e-5 && soa.angle < 2e-4, "{rel}: SoA cache {soa:?}");
    }
}
