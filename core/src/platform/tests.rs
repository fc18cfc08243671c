//! The split itself, and the results of every kernel that has a host and a narrow form
//! (skinning, blending, local-to-model, sampling, lane square root and clamp), pinned bit for
//! bit: the default build (host kernels on x86-64) and the `narrow-kernels` build must
//! both give these fingerprints, so a divergence between the two forms fails one of them.

extern crate std;

use std::vec::Vec;

use super::dispatch::Kernels;
use super::*;
use crate::clip::{Clip, RotationInterpolation, SoaTrackCache, TrackCache};
use crate::job::sampling::TrackState;
use crate::job::{BlendingJob, Layer, LocalToModelJob, Palette, SamplingJob, SkinningJob};
use crate::math::{DualQuat, Mat4, SoaTransform, Transform, Vec3, Vec4};
use crate::real::{F32x4, Lanes};
use crate::real::{Real, Q16};
use crate::skeleton::Skeleton;
use crate::test_support::Rng;

/// The build script's answers, against the target this test runs on.
#[test]
fn the_split_follows_the_target_and_the_feature() {
    let narrow = cfg!(feature = "narrow-kernels");
    let host = matches!(std::env::consts::ARCH, "x86_64" | "aarch64");
    assert_eq!(HOST_KERNELS, host && !narrow);
    // Every target the tests run on (x86-64, AArch64) has SIMD lanes.
    assert_eq!(SIMD_LANES, host && !narrow);
    assert_eq!(SSE_LANES, std::env::consts::ARCH == "x86_64" && !narrow);
    let x86 = std::env::consts::ARCH == "x86_64" && !narrow;
    assert_eq!(FMA, x86 && cfg!(target_feature = "fma"));
}

/// FNV-1a over 32-bit words, and the values themselves (as `f32`) for comparisons within a
/// bound.
struct Fingerprint(u64, Vec<f32>);

impl Fingerprint {
    fn new() -> Self {
        Fingerprint(0xcbf2_9ce4_8422_2325, Vec::new())
    }
    fn word(&mut self, w: u32) {
        for b in w.to_le_bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// The bits of a scalar, for fingerprints.
trait Bits: Real {
    fn bits(self) -> u32;
}

impl Bits for f32 {
    /// Every NaN counts as one: IEEE 754 leaves a NaN's sign and payload open, and they differ
    /// between targets (`sqrtps` of a negative number is the NaN with the sign bit set; the
    /// integer square root of the narrow lanes gives `f32::NAN`).
    fn bits(self) -> u32 {
        if self.is_nan() {
            f32::NAN.to_bits()
        } else {
            self.to_bits()
        }
    }
}

impl Bits for Q16 {
    fn bits(self) -> u32 {
        self.to_bits() as u32
    }
}

impl Fingerprint {
    fn reals<R: Bits>(&mut self, v: impl IntoIterator<Item = R>) {
        for x in v {
            self.word(x.bits());
            self.1.push(x.to_f32());
        }
    }
    fn mats<R: Bits>(&mut self, m: &[Mat4<R>]) {
        for m in m {
            self.reals(m.cols.iter().flatten().copied());
        }
    }
    fn soa<R: Bits>(&mut self, pose: &[SoaTransform<R>]) {
        for t in pose {
            let (a, q, s) = (&t.translation, &t.rotation, &t.scale);
            for lanes in [&a.x, &a.y, &a.z, &q.x, &q.y, &q.z, &q.w, &s.x, &s.y, &s.z] {
                self.reals(lanes.iter().copied());
            }
        }
    }
}

/// Skinning with 1 to 5 influences (the host kernels specialise 1 to 4 and pack the palette of
/// large meshes), linear and dual-quaternion.
fn skinning<R: Bits>(f: &mut Fingerprint, rng: &mut Rng, full: bool) {
    let palette: Vec<Mat4<R>> = (0..40).map(|_| rng.transform::<R>().to_mat4()).collect();
    let dual: Vec<DualQuat<R>> = (0..40)
        .map(|_| {
            let t = rng.transform::<R>();
            DualQuat::from_rotation_translation(t.rotation, t.translation)
        })
        .collect();
    // 257 vertices: enough for the packed palette (256).
    for n in if full { &[7, 257][..] } else { &[7][..] } {
        let n = *n;
        let positions: Vec<Vec3<R>> = (0..n).map(|_| Vec3::new(rng.real(3.0), rng.real(3.0), rng.real(3.0))).collect();
        let normals: Vec<Vec3<R>> = (0..n).map(|_| Vec3::new(rng.real(1.0), rng.real(1.0), rng.real(1.0))).collect();
        let tangents: Vec<Vec4<R>> =
            (0..n).map(|_| Vec4::new(rng.real(1.0), rng.real(1.0), rng.real(1.0), R::ONE)).collect();
        for k in 1..=5 {
            let idx: Vec<u16> = (0..n * k).map(|_| ((rng.next() + 1.0) * 20.0) as u16 % 40).collect();
            let w: Vec<R> = (0..n * k).map(|_| R::from_f32((rng.next() + 1.0) / (2 * k) as f32)).collect();
            // LBS of a packed palette without tangents too: that loop blends the palette in a
            // layout of its own where the kernels have eight lanes (`job/skinning/lbs.rs`).
            for (dq, with_tangents) in [(false, true), (true, true), (false, false)] {
                if !with_tangents && n < 256 {
                    continue;
                }
                let (mut op, mut on, mut ot) =
                    (std::vec![Vec3::ZERO; n], std::vec![Vec3::ZERO; n], std::vec![Vec4::ZERO; n]);
                SkinningJob {
                    palette: if dq { Palette::DualQuats(&dual) } else { Palette::Matrices(&palette) },
                    influences: k,
                    joint_indices: &idx,
                    joint_weights: &w,
                    positions: &positions,
                    normals: Some(&normals),
                    tangents: with_tangents.then_some(&tangents[..]),
                    out_positions: &mut op,
                    out_normals: Some(&mut on),
                    out_tangents: with_tangents.then_some(&mut ot[..]),
                }
                .run()
                .unwrap();
                for i in 0..n {
                    f.reals([op[i].x, op[i].y, op[i].z, on[i].x, on[i].y, on[i].z]);
                    if with_tangents {
                        f.reals([ot[i].x, ot[i].y, ot[i].z, ot[i].w]);
                    }
                }
            }
        }
    }
}

/// Blending: uniform weights (a fused loop on hosts, with a two-layer form), per-joint weights,
/// a total under the threshold, additive layers.
fn blending<R: Bits>(f: &mut Fingerprint, rng: &mut Rng) {
    let joints = 11;
    let rest = rng.pose::<R>(joints);
    let poses: Vec<Vec<SoaTransform<R>>> = (0..3).map(|_| rng.pose(joints)).collect();
    let deltas: Vec<Vec<SoaTransform<R>>> = (0..2).map(|_| rng.pose(joints)).collect();
    let jw: Vec<[R; 4]> = (0..rest.len()).map(|_| core::array::from_fn(|_| R::from_f32(rng.next() + 0.5))).collect();
    let weights = [R::ratio(3, 4), R::ratio(1, 2), R::ratio(5, 4)];
    for case in 0..6 {
        let layers: Vec<Layer<R>> = poses
            .iter()
            .zip(weights)
            .take(if case == 1 { 2 } else { 3 })
            .map(|(p, w)| Layer {
                transform: p,
                weight: if case == 3 { w * R::ratio(1, 50) } else { w },
                joint_weights: (case == 2).then_some(&jw[..]),
            })
            .collect();
        let additive: Vec<Layer<R>> = match case {
            4 => std::vec![Layer::new(&deltas[0], R::ratio(1, 2))],
            5 => std::vec![
                Layer::new(&deltas[0], -R::ONE),
                Layer { joint_weights: Some(&jw), ..Layer::new(&deltas[1], R::ONE) }
            ],
            _ => Vec::new(),
        };
        let mut out = std::vec![SoaTransform::IDENTITY; rest.len()];
        BlendingJob {
            layers: &layers,
            additive: &additive,
            rest_pose: &rest,
            threshold: R::ratio(1, 10),
            output: &mut out,
        }
        .run()
        .unwrap();
        f.soa(&out);
    }
}

/// Skin palettes: model matrices (affine, and one projective) times inverse bind matrices,
/// through a joint map.
fn skin_palette<R: Bits>(f: &mut Fingerprint, rng: &mut Rng) {
    use crate::job::SkinMatrixJob;
    let mut model: Vec<Mat4<R>> = (0..12).map(|_| rng.transform::<R>().to_mat4()).collect();
    model[5].cols[1][3] = R::ratio(1, 8);
    model[5].cols[3][3] = R::ratio(3, 2);
    let ib: Vec<Mat4<R>> = (0..9).map(|_| rng.transform::<R>().to_mat4()).collect();
    let joints = [11u16, 0, 5, 3, 3, 7, 1, 10, 5];
    let mut out = std::vec![Mat4::ZERO; 9];
    SkinMatrixJob::new(&model, &ib, &mut out).with_joints(&joints).run().unwrap();
    f.mats(&out);
}

/// Local-to-model: the whole hierarchy and subtrees (unrolled walks where lanes are SIMD, the
/// compact walk elsewhere), with an affine and a projective root.
fn local_to_model<R: Bits>(f: &mut Fingerprint, rng: &mut Rng) {
    let parents = [-1i16, 0, 1, 2, 1, 4, 0, 6, 7, 7, 9, 3, 11];
    let rest: Vec<Transform<R>> = parents.iter().map(|_| rng.transform()).collect();
    let names = [""; 13];
    let s = Skeleton::<R, 4>::new(&parents, &rest, &names).unwrap();
    let affine = rng.transform::<R>().to_mat4();
    let mut projective = affine;
    projective.cols[0][3] = R::ratio(1, 4);
    projective.cols[3][3] = R::TWO;
    let pose = rng.pose::<R>(13);
    for root in [None, Some(&affine), Some(&projective)] {
        let mut out = [Mat4::IDENTITY; 13];
        LocalToModelJob { skeleton: s.view(), root, input: s.rest_pose(), output: &mut out, from: None, to: None }
            .run()
            .unwrap();
        f.mats(&out);
        for from in [1, 7] {
            let mut part = out;
            LocalToModelJob { skeleton: s.view(), root, input: &pose, output: &mut part, from: Some(from), to: None }
                .run()
                .unwrap();
            f.mats(&part);
        }
    }
}

/// The lane operations with a SIMD and a scalar form (square root, clamp into [0, 1]).
fn lanes(f: &mut Fingerprint, rng: &mut Rng) {
    let specials = [0.0f32, -0.0, f32::NAN, f32::INFINITY, -1.0, 1.5, 1e-40, f32::MAX];
    for i in 0..64 {
        let a: [f32; 4] =
            core::array::from_fn(
                |l| {
                    if (i + l) % 5 == 0 {
                        specials[(i + l) % specials.len()]
                    } else {
                        rng.next() * 2.0
                    }
                },
            );
        let x = F32x4::load(&a);
        f.reals(x.sqrt_ieee().to_array());
        f.reals(x.clamp01().to_array());
    }
}

/// Sampling with the three track states (a clip reads its track entries whole on hosts, field
/// by field elsewhere).
fn sampling<R: Bits>(f: &mut Fingerprint, full: bool) {
    fn pose<R: Bits, C: TrackState<R>>(f: &mut Fingerprint, clip: Clip<'_>, time: R, states: &mut [C]) {
        let rest = [SoaTransform::<R>::IDENTITY; 2];
        for rotation in [RotationInterpolation::NlerpCorrected, RotationInterpolation::Slerp] {
            let mut out = [SoaTransform::IDENTITY; 2];
            SamplingJob { clip, time, rotation, rest_pose: &rest, cursor: states, output: &mut out }.run().unwrap();
            f.soa(&out);
        }
    }
    let bytes = crate::clip::tests::file(6, 0.0, 2.0, &crate::clip::tests::mixed_clip_tracks());
    let clip = crate::clip::tests::clip_of(&bytes);
    let (mut cursors, mut caches, mut soa) = ([0u16; 8], [TrackCache::EMPTY; 8], [SoaTrackCache::EMPTY; 2]);
    for k in 0..if full { 40 } else { 3 } {
        let time = R::ratio(k * 7 % 45, 20);
        pose(f, clip, time, &mut cursors);
        pose(f, clip, time, &mut caches);
        pose(f, clip, time, &mut soa);
    }
}

/// The fingerprint of every two-form job; `full` adds the packed skinning palette (257
/// vertices) and more sampling times (too slow for miri).
fn fingerprint<R: Bits>(full: bool) -> u64 {
    workload::<R>(full).0
}

/// The jobs' results behind [`fingerprint`].
fn workload<R: Bits>(full: bool) -> Fingerprint {
    let (mut f, mut rng) = (Fingerprint::new(), Rng(0x9E37_79B9_7F4A_7C15));
    skinning::<R>(&mut f, &mut rng, full);
    blending::<R>(&mut f, &mut rng);
    local_to_model::<R>(&mut f, &mut rng);
    sampling::<R>(&mut f, full);
    skin_palette::<R>(&mut f, &mut rng);
    f
}

#[test]
fn host_and_narrow_kernels_give_the_same_bits() {
    let mut f = Fingerprint::new();
    lanes(&mut f, &mut Rng(5));
    if FMA {
        // An x86-64-v3 build: the f32 jobs' lane multiply-adds are fused, so their results
        // differ from the default build's (and the firmware's) by rounding (the jobs' own
        // tests bound the differences); they are pinned here for this build alone. Q16 lanes
        // never fuse, and the lane operations keep their bits.
        // With AVX2 as well, two-layer blends take the eight-lane kernel, which rounds
        // differently again.
        let fused = [fingerprint::<f32>(false), fingerprint::<f32>(true)];
        std::println!("fused: f32 jobs short {:#018x}, full {:#018x}", fused[0], fused[1]);
        let want = if AVX2 { V3_JOBS } else { [0xd8eb_c928_4463_f04f, 0xd6e1_d903_a9f3_bc46] };
        assert_eq!(fused, want, "x86-64-v3 build: f32 jobs, short and full");
        assert_eq!(
            [fingerprint::<Q16>(false), f.0],
            [0x3fb2_802c_113a_0d85, 0x8412_7354_d8fb_99bb],
            "short workload: Q16 jobs, lanes"
        );
        assert_eq!(fingerprint::<Q16>(true), 0xcd7b_5681_713e_63a3, "full workload: Q16 jobs");
        return;
    }
    // The build's own kernels (with run-time dispatch, what the switch's "off" gives on every
    // CPU).
    let short = on(Kernels::Build, || [fingerprint::<f32>(false), fingerprint::<Q16>(false), f.0]);
    std::println!("short: f32 jobs {:#018x}, Q16 jobs {:#018x}, lanes {:#018x}", short[0], short[1], short[2]);
    assert_eq!(
        short,
        [0xd3f6_00b5_7962_8d97, 0x3fb2_802c_113a_0d85, 0x8412_7354_d8fb_99bb],
        "short workload: f32 jobs, Q16 jobs, lanes"
    );
    // Miri runs the short workload only.
    if !cfg!(miri) {
        let full = on(Kernels::Build, || [fingerprint::<f32>(true), fingerprint::<Q16>(true)]);
        std::println!("full: f32 jobs {:#018x}, Q16 jobs {:#018x}", full[0], full[1]);
        assert_eq!(full, [0x3cb1_3c14_1368_5f97, 0xcd7b_5681_713e_63a3], "full workload: f32 jobs, Q16 jobs");
    }
}

/// The f32 jobs' fingerprints (short and full workloads) of an x86-64-v3 build, which the
/// kernels chosen at run time on such CPUs must give too.
const V3_JOBS: [u64; 2] = [0xf8e7_c57d_52ce_c3ab, 0xc705_81c2_b693_621e];

/// `f` with this thread's jobs on `kernels`, which this build and CPU must have.
fn on<T>(kernels: Kernels, f: impl FnOnce() -> T) -> T {
    match dispatch::with_kernels(kernels, f) {
        Some(out) => out,
        None => panic!("no {kernels:?} kernels here"),
    }
}

/// Run-time dispatch: on a CPU with x86-64-v3, the dispatched kernels give an x86-64-v3
/// build's bits (its pinned fingerprints), and the Q16 jobs keep theirs. Elsewhere (or built
/// without dispatch) the jobs run the build's own kernels whatever the switch says.
#[test]
fn dispatched_kernels_give_the_bits_of_an_x86_64_v3_build() {
    if FMA {
        return;
    }
    let Some(v3) = dispatch::with_kernels(Kernels::X86_64V3, || {
        let short = [fingerprint::<f32>(false), fingerprint::<Q16>(false)];
        let full = if cfg!(miri) { V3_JOBS[1] } else { fingerprint::<f32>(true) };
        [short[0], full, short[1]]
    }) else {
        // No v3 kernels here (another target, no dispatch in the build, or a CPU without the
        // whole level): the jobs run the build's own.
        assert_eq!(dispatch::active(), Kernels::Build);
        return;
    };
    std::println!("dispatched: f32 jobs short {:#018x}, full {:#018x}", v3[0], v3[1]);
    assert_eq!(v3, [V3_JOBS[0], V3_JOBS[1], 0x3fb2_802c_113a_0d85], "f32 jobs short and full, Q16 short");
}

/// Every dispatched job (sampling, blending, local-to-model, LBS and DQS skinning, the skin
/// palette) against the build's own kernels on the fingerprints' random inputs: within
/// `4e-6 · max(1, |x|)` of each other (fused multiply-adds round once where the build's
/// kernels round twice; the two-layer blend's eight-lane kernel divides the weights first).
#[test]
fn dispatched_kernels_agree_with_the_build_kernels_within_bounds() {
    let run = |k| dispatch::with_kernels(k, || (workload::<f32>(!cfg!(miri)).1, palettes()));
    let (Some(build), Some(v3)) = (run(Kernels::Build), run(Kernels::X86_64V3)) else { return };
    let (mut worst, mut at) = (0.0f32, 0);
    for (i, (a, b)) in build.0.iter().chain(&build.1).zip(v3.0.iter().chain(&v3.1)).enumerate() {
        if a.is_nan() && b.is_nan() {
            continue;
        }
        // One NaN and one number is the largest difference there is.
        let d = (a - b).abs() / a.abs().max(1.0);
        let d = if d.is_nan() { f32::INFINITY } else { d };
        if d > worst {
            (worst, at) = (d, i);
        }
    }
    std::println!("largest difference {worst:e} (value {at} of {})", build.0.len() + build.1.len());
    assert!(worst <= 4e-6, "value {at}: {worst:e}");
    assert_eq!(build.0.len(), v3.0.len());
}

/// Skin palettes of random model and inverse bind matrices, and scaled DQS skinning with them.
fn palettes() -> Vec<f32> {
    use crate::job::{SkinDualQuatJob, SkinMatrixJob};
    use crate::math::SymMat3;
    let mut rng = Rng(77);
    let model: Vec<Mat4<f32>> = (0..40).map(|_| rng.transform::<f32>().to_mat4()).collect();
    let ib: Vec<Mat4<f32>> = (0..40).map(|_| rng.transform::<f32>().to_mat4()).collect();
    let mut out = std::vec![Mat4::ZERO; 40];
    SkinMatrixJob { model: &model, inverse_bind: &ib, joints: None, output: &mut out }.run().unwrap();
    let mut values: Vec<f32> = out.iter().flat_map(|m| m.to_cols_array()).collect();
    let (mut dq, mut scales) = (std::vec![DualQuat::IDENTITY; 40], std::vec![SymMat3::IDENTITY; 40]);
    SkinDualQuatJob::new(&model, &ib, &mut dq).with_scales(&mut scales).run().unwrap();
    let n = 64;
    let positions: Vec<Vec3<f32>> = (0..n).map(|_| Vec3::new(rng.real(3.0), rng.real(3.0), rng.real(3.0))).collect();
    let normals: Vec<Vec3<f32>> = (0..n).map(|_| Vec3::new(rng.real(1.0), rng.real(1.0), rng.real(1.0))).collect();
    let idx: Vec<u16> = (0..n * 3).map(|_| ((rng.next() + 1.0) * 20.0) as u16 % 40).collect();
    let w: Vec<f32> = (0..n * 3).map(|_| (rng.next() + 1.0) / 6.0).collect();
    let (mut op, mut on) = (std::vec![Vec3::ZERO; n], std::vec![Vec3::ZERO; n]);
    SkinningJob {
        palette: Palette::ScaledDualQuats { dual_quats: &dq, scales: &scales },
        influences: 3,
        joint_indices: &idx,
        joint_weights: &w,
        positions: &positions,
        normals: Some(&normals),
        tangents: None,
        out_positions: &mut op,
        out_normals: Some(&mut on),
        out_tangents: None,
    }
    .run()
    .unwrap();
    values.extend(op.iter().chain(&on).flat_map(|v| [v.x, v.y, v.z]));
    values
}
