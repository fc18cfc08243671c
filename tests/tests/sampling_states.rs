//! The three sampling states (`u16` key cursors, per-track `TrackCache`, per-four-joints
//! `SoaTrackCache`) give the same poses on real models, baked (quantized keys, exact-slerp
//! tracks) and lossless (f32 keys, STEP and CUBICSPLINE tracks), in f32 and Q16, over playback
//! that runs forward at 60 Hz, wraps, jumps back, lands on key times and leaves the clip range.
//!
//! The caches' results are a function of the clip and the time alone: a cache warmed by any
//! earlier sampling gives the bits of an empty one, which lets a crowd keep its caches warm from
//! one pose to the next (tested here on Fox, whose rotations are slerped exactly).
//!
//! The cursor path decodes the surrounding keys at every call and is the reference. The bound
//! is rounding: the caches compute the same formulas from the same keys, except that the SoA
//! cache forms rotations as `a·c0 + b·c1` (one rounding more or less than `a + (b − a)·c`), takes
//! exact slerp's sines from a Taylor series instead of the reduced `ops::sin`, and renormalizes
//! a held key once more.

use std::path::PathBuf;

use sinew::clip::{Clip, RotationInterpolation, SoaTrackCache, TrackCache};
use sinew::crowd::{Crowd, CrowdEval, CrowdInstance, CrowdLayout, CrowdRig, CrowdSlot, CrowdWork};
use sinew::job::sampling::TrackState;
use sinew::job::SamplingJob;
use sinew::math::Mat4;
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

/// The bits of every value of a pose as `f32` (−0 and 0 told apart; a `Q16` below 256 in
/// magnitude converts exactly).
fn pose_bits<R: Real>(pose: &[SoaTransform<R>]) -> Vec<u32> {
    let mut out = Vec::with_capacity(pose.len() * 40);
    for p in pose {
        let (t, r, sc) = (&p.translation, &p.rotation, &p.scale);
        for a in [&t.x, &t.y, &t.z, &r.x, &r.y, &r.z, &r.w, &sc.x, &sc.y, &sc.z] {
            out.extend(a.iter().map(|v| v.to_f32().to_bits()));
        }
    }
    out
}

/// A small xorshift generator of values in [0, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
    fn below(&mut self, n: usize) -> usize {
        ((self.next() * n as f32) as usize).min(n.saturating_sub(1))
    }
}

/// Samples `model`'s clips at `steps` random times (forward at 30 and 60 Hz, steps back, jumps,
/// the clip's start and end, times outside it, a switch to another clip) through one SoA cache
/// and one per-track cache kept warm, and through empty ones at each time; the bits must agree.
/// Returns the samples compared.
fn check_warm_caches<R: Real>(model: &Model, rest: &[SoaTransform<R>], steps: usize, seed: u64) -> usize {
    let asset = model.asset();
    let clips: Vec<Clip<'_>> = (0..asset.num_clips()).filter_map(|c| asset.clip(c)).collect();
    let tracks = clips.iter().map(|c| c.num_tracks()).max().unwrap_or(0);
    let mut rng = Rng(seed);
    let mut compared = 0;
    for rot in [RotationInterpolation::NlerpCorrected, RotationInterpolation::Slerp] {
        let mut soa = vec![SoaTrackCache::<R>::EMPTY; rest.len()];
        let mut per_track = vec![TrackCache::<R>::EMPTY; tracks];
        let (mut c, mut t) = (0usize, clips[0].start());
        let mut warm = vec![SoaTransform::<R>::IDENTITY; rest.len()];
        let mut cold = warm.clone();
        for _ in 0..steps {
            let clip = clips[c];
            let (start, end) = (clip.start(), clip.end());
            let r = rng.next();
            t = match (r * 16.0) as u32 {
                0..=6 => t + 1.0 / 60.0,
                7 | 8 => t + 1.0 / 30.0,
                9 => t - 1.0 / 60.0,
                10 => start + (end - start) * rng.next(),
                11 => start + (end - start + 1.0) * rng.next() - 0.5,
                12 => start,
                13 => end,
                _ => {
                    c = rng.below(clips.len());
                    let clip = clips[c];
                    clip.start() + (clip.end() - clip.start()) * rng.next()
                }
            };
            if t > clips[c].end() && r < 0.5 {
                t = clips[c].start();
            }
            let clip = clips[c];
            let time = R::from_f32(t);
            run(clip, time, rot, rest, &mut soa, &mut warm);
            run(clip, time, rot, rest, &mut vec![SoaTrackCache::EMPTY; rest.len()], &mut cold);
            assert_eq!(pose_bits(&warm), pose_bits(&cold), "SoA cache: clip {c}, t = {t}, {rot:?}");
            let n = clip.num_tracks();
            run(clip, time, rot, rest, &mut per_track[..n], &mut warm);
            run(clip, time, rot, rest, &mut vec![TrackCache::EMPTY; n], &mut cold);
            assert_eq!(pose_bits(&warm), pose_bits(&cold), "per-track cache: clip {c}, t = {t}, {rot:?}");
            compared += 1;
        }
    }
    compared
}

#[test]
fn warm_caches_give_the_bits_of_empty_ones() {
    for (i, (rel, lossless)) in MODELS.into_iter().enumerate() {
        let model = load(rel, lossless);
        let n = check_warm_caches::<f32>(&model, model.skeleton().rest_pose(), 1500, 0x9E37 + i as u64);
        let skel: Box<Skeleton<Q16, 64>> = Box::new(model.asset().skeleton().unwrap().to_skeleton().unwrap());
        let m = check_warm_caches::<Q16>(&model, skel.rest_pose(), 300, 0x7F4A + i as u64);
        println!("{rel} lossless={lossless}: {n} f32 and {m} Q16 samples, warm = empty");
    }
}

/// A crowd of Fox on one skin: its rig's inputs and its clips.
struct FoxCrowd {
    model: Model,
    joints: Vec<u16>,
    inverse_bind: Vec<Mat4<f32>>,
}

impl FoxCrowd {
    fn load() -> Self {
        let model = load("gltf/Fox/Fox.glb", false);
        let skin = model.asset().skin(0).unwrap();
        let joints = (0..skin.num_joints()).map(|i| skin.joint(i)).collect();
        let inverse_bind = (0..skin.num_joints()).map(|i| skin.inverse_bind(i)).collect();
        FoxCrowd { model, joints, inverse_bind }
    }
    fn clips(&self) -> Vec<Clip<'_>> {
        let asset = self.model.asset();
        (0..asset.num_clips()).filter_map(|c| asset.clip(c)).collect()
    }
    fn rig(&self) -> CrowdRig<'_, f32> {
        CrowdRig::new(self.model.skeleton(), &self.joints, &self.inverse_bind).unwrap()
    }
    /// `n` instances, each on its own clip, phase and speed (golden-ratio sequences).
    fn instances(&self, n: usize) -> Vec<CrowdInstance> {
        let clips = self.clips();
        let frac = |i: usize, a: f32| (i as f32 * a).fract();
        (0..n)
            .map(|i| {
                let c = ((frac(i, 0.754_877_7) * clips.len() as f32) as usize).min(clips.len() - 1);
                let d = clips[c].end() - clips[c].start();
                CrowdInstance::new(c as u16, frac(i, 0.618_034) * d, 0.8 + 0.4 * frac(i, 0.569_840_3))
            })
            .collect()
    }
}

/// One thread's work buffers for a rig.
struct Work {
    caches: Vec<SoaTrackCache<f32>>,
    poses: Vec<SoaTransform<f32>>,
    model: Vec<Mat4<f32>>,
    skin: Vec<Mat4<f32>>,
}

impl Work {
    fn new(rig: &CrowdRig<'_, f32>) -> Self {
        let (c, p, m, s) = CrowdWork::sizes(rig);
        Work {
            caches: vec![SoaTrackCache::EMPTY; c],
            poses: vec![SoaTransform::IDENTITY; p],
            model: vec![Mat4::IDENTITY; m],
            skin: vec![Mat4::IDENTITY; s],
        }
    }
    fn work(&mut self) -> CrowdWork<'_, f32> {
        CrowdWork::new(&mut self.caches, &mut self.poses, &mut self.model, &mut self.skin)
    }
}

/// Runs `frames` frames of `instances` in `parts` batches, one work buffer kept warm across
/// them, with pose sharing or without (every instance evaluated into its own slot each frame);
/// returns the palette, the seconds the evaluations took and the poses evaluated.
fn fox_frames(
    fox: &FoxCrowd,
    instances: &mut [CrowdInstance],
    frames: usize,
    parts: usize,
    sharing: bool,
) -> (Vec<f32>, f64, usize) {
    let n = instances.len();
    let clips = fox.clips();
    let rig = fox.rig();
    let layout = CrowdLayout::new(rig.palette_joints(), n, 2048).unwrap();
    let mut palette = vec![0.0f32; layout.floats()];
    let mut slots = vec![CrowdSlot::EMPTY; n];
    let mut table = vec![0u32; (2 * n).next_power_of_two()];
    let mut evals = vec![CrowdEval::EMPTY; n];
    let mut crowd = Crowd::new(instances, &mut slots, &mut table, &mut evals, 60.0).unwrap();
    crowd.set_sharing(sharing);
    let mut work = Work::new(&rig);
    let (mut seconds, mut evaluated) = (0.0, 0);
    for _ in 0..frames {
        let stats = crowd.frame(1.0 / 60.0, &clips).unwrap();
        evaluated += stats.evaluated as usize;
        let start = std::time::Instant::now();
        for mut batch in crowd.batches(&mut palette, &layout, parts) {
            batch.run(&rig, &clips, 60.0, &mut work.work()).unwrap();
        }
        seconds += start.elapsed().as_secs_f64();
    }
    (palette, seconds, evaluated)
}

/// A crowd frame of Fox evaluated with warm caches (one batch, or seven, each continuing the
/// caches of the one before) gives each instance the palette of its pose evaluated alone from
/// empty caches.
#[test]
fn crowd_palettes_with_warm_caches_equal_lone_evaluations() {
    let fox = FoxCrowd::load();
    let n = 300;
    let mut instances = fox.instances(n);
    let (one, _, _) = fox_frames(&fox, &mut instances.clone(), 3, 1, false);
    let (seven, _, _) = fox_frames(&fox, &mut instances, 3, 7, false);
    assert_eq!(
        one.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        seven.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    let clips = fox.clips();
    let rig = fox.rig();
    let layout = CrowdLayout::new(rig.palette_joints(), n, 2048).unwrap();
    let slot = layout.slot_floats();
    let mut out = vec![0.0f32; slot];
    let mut checked = 0;
    for (i, inst) in instances.iter().enumerate() {
        // A fresh work buffer: empty caches.
        let mut work = Work::new(&rig);
        rig.evaluate(&inst.key(), &clips, 60.0, &mut work.work(), &mut out).unwrap();
        let s = inst.slot() as usize;
        let (x, y) = layout.texel(inst.slot());
        let at = (y * layout.width + x) * 4;
        let got = &one[at..at + rig.palette_joints() * 12];
        let want = &out[..rig.palette_joints() * 12];
        assert_eq!(
            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            "instance {i} (slot {s})"
        );
        checked += 1;
    }
    assert_eq!(checked, n);
}

/// Times crowd frames of 10,000 Fox on one thread, one batch: without sharing (10,000 poses
/// evaluated per frame, many of them equal keys in a row), then with sharing (each distinct
/// key once, consecutive keys a frame apart): `cargo test --release -p sinew-tests --test
/// sampling_states -- --ignored --nocapture crowd_cost`.
#[test]
#[ignore = "timing; run in release"]
fn crowd_cost() {
    let fox = FoxCrowd::load();
    for sharing in [false, true] {
        let mut instances = fox.instances(10_000);
        fox_frames(&fox, &mut instances, 2, 1, sharing);
        for run in 0..5 {
            let (_, seconds, evaluated) = fox_frames(&fox, &mut instances, 20, 1, sharing);
            println!(
                "sharing {sharing}, run {run}: {:.1} ns per pose over {evaluated} poses",
                seconds * 1e9 / evaluated as f64
            );
        }
    }
}
