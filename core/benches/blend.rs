//! Blending benchmarks on a synthetic 64-joint character: the [`BlendingJob`] on each of its
//! paths (two uniform layers, three uniform layers, per-joint weights, rest-pose fill with an
//! additive layer) and a whole [`Controller::update`] (two slots blended in the base layer, a
//! masked override layer, an additive layer).
//!
//! `cargo bench -p sinew -- blend` measures; `cargo bench -p sinew -- --test` runs each once.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sinew::asset::format::*;
use sinew::asset::writer::Writer;
use sinew::asset::Asset;
use sinew::controller::{
    AdditiveReference, ClipEntry, ClipId, Controller, ControllerScratch, LayerId, LayerMode, SlotId,
};
use sinew::job::mask::Channel;
use sinew::job::{BlendingJob, Layer};
use sinew::math::{Quat, SoaTransform, Transform, Vec3};
use sinew::skeleton::Skeleton;

sinew::capacity! {
    /// The synthetic character: 64 joints, 4 slots, 3 layers, and as tracks the most a clip of
    /// [`build_asset`] has (a rotation per joint and a root translation).
    pub struct Synthetic { joints: 64, slots: 4, layers: 3, tracks: 64 + 1 }
}

const JOINTS: usize = Synthetic::JOINTS;
const SOA: usize = Synthetic::SOA;
const KEYS: usize = 60;

/// A 64-joint binary tree with four 2 s clips of LINEAR `f32` rotation tracks: clip 0 and 1
/// animate every joint and the root translation, clip 2 the joints from 16 up, clip 3 only
/// joints 8 to 15.
fn build_asset() -> Vec<u8> {
    let clips: [(usize, usize, f32, bool); 4] =
        [(0, JOINTS, 0.21, true), (0, JOINTS, 0.37, true), (16, JOINTS, 0.13, false), (8, 16, 0.5, false)];
    let emit = |w: &mut Writer| {
        let table = w.begin_file(1 + clips.len() as u32);
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
        for (c, &(first, end, rate, root)) in clips.iter().enumerate() {
            let s1 = w.len();
            w.str("clip");
            w.f32(0.0);
            w.f32(2.0);
            let tracks = end - first + usize::from(root);
            w.u16(tracks as u16);
            let dir = w.len();
            for _ in 0..tracks {
                w.bytes(&[0; TRACK_ENTRY_LEN]);
            }
            let time = |k: usize| 2.0 * k as f32 / (KEYS - 1) as f32;
            let entry = |w: &mut Writer, i: usize, joint: usize, target: u8, off: usize| {
                let mut e = [0u8; TRACK_ENTRY_LEN];
                e[..2].copy_from_slice(&(joint as u16).to_le_bytes());
                e[2] = target;
                e[3] = INTERP_LINEAR;
                e[4] = FORMAT_F32;
                e[6..8].copy_from_slice(&(KEYS as u16).to_le_bytes());
                e[8..12].copy_from_slice(&(off as u32).to_le_bytes());
                w.patch_bytes(dir + i * TRACK_ENTRY_LEN, &e);
            };
            for (i, j) in (first..end).enumerate() {
                let off = w.len() - s1;
                for k in 0..KEYS {
                    w.f32(time(k));
                }
                for k in 0..KEYS {
                    let a = (k as f32 * rate + j as f32).sin() * 0.6;
                    for v in Quat::from_axis_angle(Vec3::new(0.6, 0.0, 0.8), a).to_array() {
                        w.f32(v);
                    }
                }
                entry(w, i, j, TARGET_ROTATION, off);
            }
            if root {
                let off = w.len() - s1;
                for k in 0..KEYS {
                    w.f32(time(k));
                }
                for k in 0..KEYS {
                    for v in [0.0, 1.0, k as f32 * 0.05] {
                        w.f32(v);
                    }
                }
                entry(w, tracks - 1, 0, TARGET_TRANSLATION, off);
            }
            w.section(table, 1 + c, KIND_CLIP, s1);
        }
        w.finish();
    };
    let mut w = Writer::new(&mut []);
    emit(&mut w);
    let mut buf = vec![0u8; w.len()];
    emit(&mut Writer::new(&mut buf));
    buf
}

/// A pose whose joint `j` is rotated by `a + j / 10` about a tilted axis and moved along X.
fn pose(a: f32) -> Vec<SoaTransform<f32>> {
    (0..SOA)
        .map(|e| {
            SoaTransform::from_transforms(core::array::from_fn(|l| {
                let j = (4 * e + l) as f32;
                Transform {
                    translation: Vec3::new(a + j * 0.01, 0.1, 0.0),
                    rotation: Quat::from_axis_angle(Vec3::new(0.6, 0.0, 0.8), a + j * 0.1),
                    scale: Vec3::ONE,
                }
            }))
        })
        .collect()
}

fn blend(c: &mut Criterion) {
    let rest = pose(0.0);
    let (a, b, d) = (pose(0.3), pose(-0.4), pose(0.8));
    // Per-joint weights: an upper-body-like mask with a soft edge.
    let mask: Vec<[f32; 4]> =
        (0..SOA).map(|e| core::array::from_fn(|l| ((4 * e + l) as f32 / 40.0).min(1.0))).collect();
    let mut out = vec![SoaTransform::IDENTITY; SOA];

    let mut g = c.benchmark_group("blend");
    g.throughput(Throughput::Elements(JOINTS as u64));
    let mut job = |name: &str, layers: &[Layer<f32>], additive: &[Layer<f32>], threshold: f32| {
        g.bench_function(name, |bench| {
            bench.iter(|| {
                BlendingJob { layers, additive, rest_pose: &rest, threshold, output: &mut out }
                    .run()
                    .expect("valid job");
                black_box(&out);
            })
        });
    };
    job("two_uniform", &[Layer::new(&a, 0.3), Layer::new(&b, 0.7)], &[], 0.1);
    job("three_uniform", &[Layer::new(&a, 0.3), Layer::new(&b, 0.5), Layer::new(&d, 0.2)], &[], 0.1);
    let masked = Layer { transform: &d, weight: 1.0, joint_weights: Some(&mask) };
    job("per_joint", &[Layer::new(&a, 0.6), masked], &[], 0.1);
    job("rest_fill_additive", &[Layer::new(&a, 0.5)], &[Layer::new(&d, 0.5)], 1.0);

    // A controller: two slots in the base layer, a masked override layer, an additive layer.
    let bytes = build_asset();
    let asset = Asset::parse(&bytes).expect("the synthetic asset is valid");
    let skel: Box<Skeleton<f32, SOA>> = Box::new(asset.skeleton().expect("skeleton").to_skeleton().expect("valid"));
    let clips: Vec<ClipEntry<f32>> = (0..4).map(|i| ClipEntry::new(asset.clip(i).expect("clip"))).collect();
    let mut ctl: Box<Controller<f32, Synthetic>> = Box::new(Controller::new());
    let mut scratch: Box<ControllerScratch<f32, Synthetic>> = Box::new(ControllerScratch::new());
    for (slot, layer) in [(0, 0), (1, 0), (2, 1), (3, 2)] {
        ctl.assign(SlotId(slot), LayerId(layer), ClipId(slot), &clips).expect("slot");
    }
    ctl.set_layer_mask(1, skel.view(), &[Channel::subtree(2, 2)], false).expect("mask");
    ctl.set_layer(1, LayerMode::Override, 0.8).expect("layer");
    ctl.set_layer(2, LayerMode::Additive(AdditiveReference::RestPose), 0.5).expect("layer");
    // The base layer halfway through a crossfade (weights set directly so that they stay).
    for (slot, weight) in [(0, 0.6), (1, 0.4), (2, 1.0), (3, 1.0)] {
        ctl.set_weight(slot, weight).expect("weight");
    }
    g.bench_function("controller_update", |bench| {
        bench.iter(|| {
            ctl.update(1.0 / 60.0, &clips, skel.view(), &mut scratch, &mut out, |_| {}).expect("update");
            black_box(&out);
        })
    });
    g.finish();
}

criterion_group!(benches, blend);
criterion_main!(benches);
