//! Per-job benchmarks on a synthetic 64-joint character: sampling (cursor and cache),
//! local-to-model, skin palette, and skinning (LBS and DQS, 4 influences, positions + normals).
//!
//! `cargo bench -p sinew` measures; `cargo bench -p sinew -- --test` runs each once (CI smoke).

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use sinew::asset::format::*;
use sinew::asset::writer::Writer;
use sinew::asset::Asset;
use sinew::clip::{Clip, RotationInterpolation, SoaTrackCache, TrackCache};
use sinew::job::sampling::TrackState;
use sinew::job::{LocalToModelJob, Palette, SamplingJob, SkinDualQuatJob, SkinMatrixJob, SkinningJob};
use sinew::math::{DualQuat, Mat4, Quat, SoaTransform, Vec3};
use sinew::skeleton::Skeleton;

const JOINTS: usize = 64;
const SOA: usize = JOINTS / 4;
const KEYS: usize = 120;
const VERTICES: usize = 4096;

/// A 64-joint tree (each joint's parent is (i − 1) / 2 ... as a binary tree) with one 4 s clip:
/// a quantized linear rotation track per joint (120 keys), a root translation track and
/// constant scale tracks.
fn build_asset() -> Vec<u8> {
    let emit = |w: &mut Writer| {
        let table = w.begin_file(2);
        let s0 = w.len();
        w.u16(JOINTS as u16);
        for i in 0..JOINTS {
            w.i16(if i == 0 { -1 } else { ((i - 1) / 2) as i16 });
        }
        for _ in 0..JOINTS {
            for v in [0.0, 0.1, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0] {
                w.f32(v);
            }
        }
        for i in 0..JOINTS {
            w.str(&format!("j{i}"));
        }
        w.section(table, 0, KIND_SKELETON, s0);
        let s1 = w.len();
        w.str("clip");
        w.f32(0.0);
        w.f32(4.0);
        let tracks = 2 * JOINTS + 1;
        w.u16(tracks as u16);
        let dir = w.len();
        for _ in 0..tracks {
            w.bytes(&[0; TRACK_ENTRY_LEN]);
        }
        let entry = |w: &mut Writer, i: usize, joint: usize, target: u8, format: u8, keys: usize, off: usize| {
            let mut e = [0u8; TRACK_ENTRY_LEN];
            e[..2].copy_from_slice(&(joint as u16).to_le_bytes());
            e[2] = target;
            e[3] = INTERP_LINEAR;
            e[4] = format;
            e[6..8].copy_from_slice(&(keys as u16).to_le_bytes());
            e[8..12].copy_from_slice(&(off as u32).to_le_bytes());
            w.patch_bytes(dir + i * TRACK_ENTRY_LEN, &e);
        };
        for j in 0..JOINTS {
            let off = w.len() - s1;
            for k in 0..KEYS {
                w.u16(quantize_time(4.0 * k as f32 / (KEYS - 1) as f32, 0.0, 4.0));
            }
            for k in 0..KEYS {
                let a = (k as f32 * 0.21 + j as f32).sin() * 0.6;
                let q = Quat::from_axis_angle(Vec3::new(0.6, 0.0, 0.8), a);
                w.bytes(&pack_rotation(q.to_array()));
            }
            entry(w, j, j, TARGET_ROTATION, FORMAT_QUANTIZED, KEYS, off);
        }
        for j in 0..JOINTS {
            let off = w.len() - s1;
            w.f32(0.0);
            for v in [1.0f32, 1.0, 1.0] {
                w.f32(v);
            }
            entry(w, JOINTS + j, j, TARGET_SCALE, FORMAT_F32, 1, off);
        }
        let off = w.len() - s1;
        for k in 0..KEYS {
            w.f32(4.0 * k as f32 / (KEYS - 1) as f32);
        }
        for k in 0..KEYS {
            for v in [k as f32 * 0.01, 1.0, 0.0] {
                w.f32(v);
            }
        }
        entry(w, 2 * JOINTS, 0, TARGET_TRANSLATION, FORMAT_F32, KEYS, off);
        w.section(table, 1, KIND_CLIP, s1);
        w.finish();
    };
    let mut w = Writer::new(&mut []);
    emit(&mut w);
    let mut buf = vec![0u8; w.len()];
    emit(&mut Writer::new(&mut buf));
    buf
}

/// Times sampling `clip` into `pose` with the persistent sampling state `state`, the time
/// advancing by 1/60 s per call and wrapping at the clip's 4 s.
fn bench_sampling<C: TrackState<f32>>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    clip: Clip<'_>,
    rest: &[SoaTransform<f32>],
    rotation: RotationInterpolation,
    state: &mut [C],
    pose: &mut [SoaTransform<f32>],
) {
    let mut t = 0.0f32;
    g.bench_function(name, |b| {
        b.iter(|| {
            t = (t + 1.0 / 60.0) % 4.0;
            SamplingJob { clip, time: t, rotation, rest_pose: rest, cursor: &mut *state, output: &mut *pose }
                .run()
                .expect("valid job");
            black_box(&*pose);
        })
    });
}

fn jobs(c: &mut Criterion) {
    let bytes = build_asset();
    let asset = Asset::parse(&bytes).expect("the synthetic asset is valid");
    let clip = asset.clip(0).expect("one clip");
    let skel: Box<Skeleton<f32, SOA>> = Box::new(asset.skeleton().expect("skeleton").to_skeleton().expect("valid"));
    let tracks = clip.num_tracks();
    let mut pose = vec![SoaTransform::IDENTITY; SOA];

    let mut g = c.benchmark_group("sample");
    g.throughput(Throughput::Elements(JOINTS as u64));
    let rest = skel.rest_pose();
    let nlerp = RotationInterpolation::NlerpCorrected;
    bench_sampling(&mut g, "cursor_nlerp", clip, rest, nlerp, &mut vec![0u16; tracks], &mut pose);
    bench_sampling(
        &mut g,
        "cursor_slerp",
        clip,
        rest,
        RotationInterpolation::Slerp,
        &mut vec![0u16; tracks],
        &mut pose,
    );
    bench_sampling(&mut g, "cache_nlerp", clip, rest, nlerp, &mut vec![TrackCache::EMPTY; tracks], &mut pose);
    bench_sampling(
        &mut g,
        "soa_cache_nlerp",
        clip,
        rest,
        nlerp,
        &mut vec![SoaTrackCache::EMPTY; rest.len()],
        &mut pose,
    );
    g.finish();

    let mut model = vec![Mat4::IDENTITY; JOINTS];
    let mut g = c.benchmark_group("local_to_model");
    g.throughput(Throughput::Elements(JOINTS as u64));
    g.bench_function("full", |b| {
        b.iter(|| {
            LocalToModelJob {
                skeleton: skel.view(),
                root: None,
                input: &pose,
                output: &mut model,
                from: None,
                to: None,
            }
            .run()
            .expect("valid job");
            black_box(&model);
        })
    });
    g.finish();

    let ib: Vec<Mat4<f32>> = model.iter().map(|m| m.inverse().unwrap_or(Mat4::IDENTITY)).collect();
    let mut palette = vec![Mat4::IDENTITY; JOINTS];
    let mut dq = vec![DualQuat::IDENTITY; JOINTS];
    let mut g = c.benchmark_group("palette");
    g.throughput(Throughput::Elements(JOINTS as u64));
    g.bench_function("matrices", |b| {
        b.iter(|| {
            SkinMatrixJob { model: &model, inverse_bind: &ib, joints: None, output: &mut palette }
                .run()
                .expect("valid job");
            black_box(&palette);
        })
    });
    g.bench_function("dual_quats", |b| {
        b.iter(|| {
            SkinDualQuatJob::new(&model, &ib, &mut dq).run().expect("valid job");
            black_box(&dq);
        })
    });
    g.finish();

    let positions: Vec<Vec3<f32>> =
        (0..VERTICES).map(|v| Vec3::new((v % 64) as f32 * 0.01, (v / 64) as f32 * 0.01, 0.1)).collect();
    let normals = vec![Vec3::Z; VERTICES];
    let joints: Vec<u16> = (0..VERTICES * 4).map(|i| ((i * 7 + i / 4) % JOINTS) as u16).collect();
    let weights: Vec<f32> = (0..VERTICES * 4).map(|i| [0.4, 0.3, 0.2, 0.1][i % 4]).collect();
    let mut out_p = vec![Vec3::ZERO; VERTICES];
    let mut out_n = vec![Vec3::ZERO; VERTICES];
    let mut g = c.benchmark_group("skinning");
    g.throughput(Throughput::Elements(VERTICES as u64));
    for (name, pal) in [("lbs_4", Palette::Matrices(&palette)), ("dqs_4", Palette::DualQuats(&dq))] {
        g.bench_function(name, |b| {
            b.iter(|| {
                SkinningJob {
                    palette: pal,
                    influences: 4,
                    joint_indices: &joints,
                    joint_weights: &weights,
                    positions: &positions,
                    normals: Some(&normals),
                    tangents: None,
                    out_positions: &mut out_p,
                    out_normals: Some(&mut out_n),
                    out_tangents: None,
                }
                .run()
                .expect("valid job");
                black_box(&out_p);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, jobs);
criterion_main!(benches);
