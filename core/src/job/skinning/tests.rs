//! Tests of the skinning job: validity, LBS against direct matrix sums, every influence count
//! and kernel (direct, packed palette, narrow) agreeing bit for bit, and DQS keeping volume.

use super::build::lbs::{blend_matrices, blend_packed, lbs_with, pack, FromPacked, PackedJoint, PACKED_JOINTS};
use super::*;
use crate::math::Quat;

const S: Vec3<f32> = Vec3 { x: 99.0, y: 99.0, z: 99.0 };
const S4: Vec4<f32> = Vec4 { x: 99.0, y: 99.0, z: 99.0, w: 99.0 };

fn palette() -> [Mat4<f32>; 2] {
    [
        Mat4::from_trs(Vec3::new(1.0, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE),
        Mat4::from_trs(Vec3::ZERO, Quat::from_axis_angle(Vec3::Z, core::f32::consts::FRAC_PI_2), Vec3::ONE),
    ]
}

#[test]
fn validity() {
    let pal = palette();
    let pos = [Vec3::new(1.0, 0.0, 0.0); 2];
    let nrm = [Vec3::Y; 2];
    let idx = [0u16, 1, 0, 1];
    let w = [0.5f32; 4];
    macro_rules! check {
        ($err:expr, $infl:expr, $idx:expr, $w:expr, $nrm:expr, $op:expr, $on:expr) => {{
            let mut op = [S; 3];
            let mut on = [S; 3];
            let olen: usize = $op;
            let onl: Option<usize> = $on;
            let mut job = SkinningJob {
                palette: Palette::Matrices(&pal),
                influences: $infl,
                joint_indices: $idx,
                joint_weights: $w,
                positions: &pos,
                normals: $nrm,
                tangents: None,
                out_positions: &mut op[..olen],
                out_normals: onl.map(|l| &mut on[..l]),
                out_tangents: None,
            };
            assert_eq!(job.validate(), Err($err));
            assert_eq!(job.run(), Err($err));
            assert!(op.iter().all(|v| *v == S));
            assert!(on.iter().all(|v| *v == S));
        }};
    }
    // Influence count 0 and above the limit.
    check!(JobError::InvalidInfluenceCount, 0, &idx, &w, None, 2, None);
    check!(JobError::InvalidInfluenceCount, MAX_INFLUENCES + 1, &idx, &w, None, 2, None);
    // Too few indices or weights.
    check!(JobError::InputTooSmall, 2, &idx[..3], &w, None, 2, None);
    check!(JobError::InputTooSmall, 2, &idx, &w[..3], None, 2, None);
    // Normals without output, output without normals, short normals.
    check!(JobError::MismatchedStreams, 2, &idx, &w, Some(&nrm), 2, None);
    check!(JobError::MismatchedStreams, 2, &idx, &w, None, 2, Some(2));
    check!(JobError::InputTooSmall, 2, &idx, &w, Some(&nrm[..1]), 2, Some(2));
    // Outputs too small.
    check!(JobError::OutputTooSmall, 2, &idx, &w, None, 1, None);
    check!(JobError::OutputTooSmall, 2, &idx, &w, Some(&nrm), 2, Some(1));
    // Joint index past the palette.
    check!(JobError::JointIndexOutOfRange, 2, &[0, 1, 2, 0], &w, None, 2, None);
    // Tangents without output (and the DQS path shares validation).
    let tan = [Vec4::new(1.0, 0.0, 0.0, -1.0); 2];
    let dq = [DualQuat::IDENTITY; 2];
    let mut op = [S; 2];
    let mut ot = [S4; 2];
    let mut job = SkinningJob {
        palette: Palette::DualQuats(&dq),
        influences: 2,
        joint_indices: &idx,
        joint_weights: &w,
        positions: &pos,
        normals: None,
        tangents: Some(&tan),
        out_positions: &mut op,
        out_normals: None,
        out_tangents: None,
    };
    assert_eq!(job.run(), Err(JobError::MismatchedStreams));
    let mut job = SkinningJob {
        palette: Palette::DualQuats(&dq),
        influences: 2,
        joint_indices: &idx,
        joint_weights: &w,
        positions: &pos,
        normals: None,
        tangents: Some(&tan),
        out_positions: &mut op,
        out_normals: None,
        out_tangents: Some(&mut ot[..1]),
    };
    assert_eq!(job.run(), Err(JobError::OutputTooSmall));
    assert!(op.iter().all(|v| *v == S));
    assert!(ot.iter().all(|v| *v == S4));
}

#[test]
fn lbs_blends_matrices() {
    let pal = palette();
    let pos = [Vec3::new(1.0f32, 0.0, 0.0), Vec3::new(0.0, 2.0, 0.0)];
    let nrm = [Vec3::Y, Vec3::X];
    let tan = [Vec4::new(1.0, 0.0, 0.0, -1.0); 2];
    let idx = [0u16, 1, 1, 0];
    let w = [0.5f32, 0.5, 1.0, 0.0];
    let mut op = [S; 3];
    let mut on = [S; 2];
    let mut ot = [S4; 2];
    SkinningJob {
        palette: Palette::Matrices(&pal),
        influences: 2,
        joint_indices: &idx,
        joint_weights: &w,
        positions: &pos,
        normals: Some(&nrm),
        tangents: Some(&tan),
        out_positions: &mut op,
        out_normals: Some(&mut on),
        out_tangents: Some(&mut ot),
    }
    .run()
    .unwrap();
    // Vertex 0: half of (2,0,0) and half of (0,1,0).
    assert!((op[0] - Vec3::new(1.0, 0.5, 0.0)).max_abs() < 1.0e-6);
    // Vertex 1: fully rotated by 90° about Z.
    assert!((op[1] - Vec3::new(-2.0, 0.0, 0.0)).max_abs() < 1.0e-6);
    assert!((on[1] - Vec3::Y).max_abs() < 1.0e-6);
    assert!((ot[1].truncate() - Vec3::Y).max_abs() < 1.0e-6);
    assert_eq!(ot[1].w, -1.0);
    assert_eq!(op[2], S);
}

#[test]
fn every_influence_count_agrees_with_the_general_path() {
    let pal: [Mat4<f32>; 4] = core::array::from_fn(|i| {
        Mat4::from_trs(
            Vec3::new(i as f32, 1.0, -(i as f32)),
            Quat::from_axis_angle(Vec3::new(0.0, 0.6, 0.8), 0.3 * i as f32),
            Vec3::new(1.0, 1.0 + i as f32 * 0.2, 1.0),
        )
    });
    let pos = [Vec3::new(0.3f32, -0.2, 1.0)];
    for k in 1..=MAX_INFLUENCES {
        let idx: [u16; MAX_INFLUENCES] = core::array::from_fn(|i| (i % 4) as u16);
        let w: [f32; MAX_INFLUENCES] = core::array::from_fn(|i| if i < k { 1.0 / k as f32 } else { 0.0 });
        let mut op = [Vec3::ZERO; 1];
        SkinningJob {
            palette: Palette::Matrices(&pal),
            influences: k,
            joint_indices: &idx[..k],
            joint_weights: &w[..k],
            positions: &pos,
            normals: None,
            tangents: None,
            out_positions: &mut op,
            out_normals: None,
            out_tangents: None,
        }
        .run()
        .unwrap();
        let mut e = Vec3::ZERO;
        for i in 0..k {
            e += pal[idx[i] as usize].transform_point3(pos[0]) * w[i];
        }
        assert!((op[0] - e).max_abs() < 1.0e-5, "k = {k}");
    }
}

/// Vertices of the packed-palette test: enough for the packed loops, and three past a multiple
/// of four (positions and normals go four vertices at a time, the last three one by one).
const N: usize = 303;

/// Skins `N` vertices of a pseudo-random mesh on `J` pseudo-random (not affine) matrices,
/// whole and one vertex per job, and asserts the same bits: large jobs take the
/// packed-palette loops on hosts, single vertices the direct ones.
fn check_packed_matches_direct<const J: usize>() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    };
    let pal: [Mat4<f32>; J] =
        core::array::from_fn(|_| Mat4 { cols: core::array::from_fn(|_| core::array::from_fn(|_| rnd() * 3.0)) });
    let pos: [Vec3<f32>; N] = core::array::from_fn(|_| Vec3::new(rnd(), rnd(), rnd()) * 10.0);
    let nrm: [Vec3<f32>; N] = core::array::from_fn(|_| Vec3::new(rnd(), rnd(), -0.0));
    let tan: [Vec4<f32>; N] = core::array::from_fn(|_| Vec4::new(rnd(), rnd(), rnd(), 1.0));
    let idx: [u16; N * MAX_INFLUENCES] = core::array::from_fn(|_| ((rnd() + 1.0) * 0.5 * J as f32) as u16 % J as u16);
    // Some zero weights of either sign: they still add their products.
    let w: [f32; N * MAX_INFLUENCES] = core::array::from_fn(|i| {
        if i % 5 == 1 {
            0.0
        } else if i % 7 == 2 {
            -0.0
        } else {
            rnd()
        }
    });
    // Miri (slow) covers two influence counts with normals only.
    for k in (1..=MAX_INFLUENCES).filter(|&k| !cfg!(miri) || k == 1 || k == 4) {
        for streams in (0..3).filter(|&s| !cfg!(miri) || s == 1) {
            let skin = |from: usize, to: usize, op: &mut [Vec3<f32>], on: &mut [Vec3<f32>], ot: &mut [Vec4<f32>]| {
                SkinningJob {
                    palette: Palette::Matrices(&pal),
                    influences: k,
                    joint_indices: &idx[from * k..to * k],
                    joint_weights: &w[from * k..to * k],
                    positions: &pos[from..to],
                    normals: (streams > 0).then(|| &nrm[from..to]),
                    tangents: (streams > 1).then(|| &tan[from..to]),
                    out_positions: &mut op[from..to],
                    out_normals: (streams > 0).then_some(&mut on[from..to]),
                    out_tangents: (streams > 1).then_some(&mut ot[from..to]),
                }
                .run()
                .unwrap();
            };
            let (mut op, mut on, mut ot) = ([S; N], [S; N], [S4; N]);
            skin(0, N, &mut op, &mut on, &mut ot);
            let (mut ep, mut en, mut et) = ([S; N], [S; N], [S4; N]);
            for v in 0..N {
                skin(v, v + 1, &mut ep, &mut en, &mut et);
            }
            for v in 0..N {
                let bits3 = |a: Vec3<f32>| [a.x.to_bits(), a.y.to_bits(), a.z.to_bits()];
                let bits4 = |a: Vec4<f32>| [a.x.to_bits(), a.y.to_bits(), a.z.to_bits(), a.w.to_bits()];
                assert_eq!(bits3(op[v]), bits3(ep[v]), "position {v}, k = {k}, streams {streams}");
                assert_eq!(bits3(on[v]), bits3(en[v]), "normal {v}, k = {k}, streams {streams}");
                assert_eq!(bits4(ot[v]), bits4(et[v]), "tangent {v}, k = {k}, streams {streams}");
            }
        }
    }
}

/// Skins 16 vertices with `k` influences through one kernel: 0 the narrow one (the general
/// loop over the palette), 1 the host loop for `K` influences, 2 that loop over the packed
/// palette in its four-lane layout, 3 in its wide layout; with tangents (the loop of every stream) or without (the loop of positions and
/// normals). Returns the output bits.
fn skin_with_kernel<const K: usize>(pal: &[Mat4<f32>], kernel: u8, tangents: bool) -> [[u32; 10]; 16] {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ K as u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    };
    let pos: [Vec3<f32>; 16] = core::array::from_fn(|_| Vec3::new(rnd(), rnd(), rnd()) * 4.0);
    let nrm: [Vec3<f32>; 16] = core::array::from_fn(|_| Vec3::new(rnd(), rnd(), rnd()));
    let tan: [Vec4<f32>; 16] = core::array::from_fn(|_| Vec4::new(rnd(), rnd(), rnd(), -1.0));
    let idx: [u16; 16 * 4] = core::array::from_fn(|_| ((rnd() + 1.0) * 8.0) as u16 % pal.len() as u16);
    let w: [f32; 16 * 4] = core::array::from_fn(|i| if i % 6 == 5 { -0.0 } else { rnd() });
    let (mut op, mut on, mut ot) = ([S; 16], [S; 16], [S4; 16]);
    let mut job = SkinningJob {
        palette: Palette::Matrices(pal),
        influences: K,
        joint_indices: &idx[..16 * K],
        joint_weights: &w[..16 * K],
        positions: &pos,
        normals: Some(&nrm),
        tangents: tangents.then_some(&tan[..]),
        out_positions: &mut op,
        out_normals: Some(&mut on),
        out_tangents: tangents.then_some(&mut ot[..]),
    };
    job.validate().unwrap();
    let ji = job.joint_indices;
    match kernel {
        0 => lbs_with::<f32, 0, true, _>(&mut job, ji, |i: &[u16], w: &[f32]| blend_matrices::<f32, 0>(pal, i, w)),
        1 => lbs_with::<f32, K, true, _>(&mut job, ji, |i: &[u16], w: &[f32]| blend_matrices::<f32, K>(pal, i, w)),
        2 => {
            let mut table = [PackedJoint([[0.0; 4]; 4]); PACKED_JOINTS];
            pack::<f32, false>(&mut table, pal);
            let bytes = bytemuck::cast_slice::<u16, [u8; 2]>(ji);
            lbs_with::<f32, K, true, _>(&mut job, bytes, |i: &[[u8; 2]], w: &[f32]| {
                blend_packed::<f32, K, false>(&table, i, w)
            });
        }
        _ => {
            let mut table = [PackedJoint([[0.0; 4]; 4]); PACKED_JOINTS];
            pack::<f32, true>(&mut table, pal);
            let bytes = bytemuck::cast_slice::<u16, [u8; 2]>(ji);
            lbs_with::<f32, K, true, _>(&mut job, bytes, FromPacked::<f32, K>(&table));
        }
    }
    core::array::from_fn(|v| {
        let (p, n, t) = (op[v], on[v], ot[v]);
        [p.x, p.y, p.z, n.x, n.y, n.z, t.x, t.y, t.z, t.w].map(f32::to_bits)
    })
}

/// The host kernels and the narrow one, called directly (whichever this build's `run`
/// uses): the same bits for every influence count the host specialises.
#[test]
fn host_and_narrow_kernels_give_the_same_bits() {
    let pal: [Mat4<f32>; 9] = core::array::from_fn(|i| {
        let f = i as f32;
        Mat4::from_trs(
            Vec3::new(f, 0.5 - f, 2.0),
            Quat::from_axis_angle(Vec3::new(0.0, 0.6, 0.8), 0.4 * f),
            Vec3::new(1.0, 1.0 + f * 0.1, 0.9),
        )
    });
    for (kernel, t) in [(1, false), (2, false), (3, false), (1, true), (2, true), (3, true)] {
        let s1 = skin_with_kernel::<1>;
        let (s2, s3, s4) = (skin_with_kernel::<2>, skin_with_kernel::<3>, skin_with_kernel::<4>);
        assert_eq!(s1(&pal, kernel, t), s1(&pal, 0, t), "kernel {kernel}, k = 1, tangents {t}");
        assert_eq!(s2(&pal, kernel, t), s2(&pal, 0, t), "kernel {kernel}, k = 2, tangents {t}");
        assert_eq!(s3(&pal, kernel, t), s3(&pal, 0, t), "kernel {kernel}, k = 3, tangents {t}");
        assert_eq!(s4(&pal, kernel, t), s4(&pal, 0, t), "kernel {kernel}, k = 4, tangents {t}");
    }
    // The loop of positions and normals (four-lane stores over the next vertex) and the loop of
    // every stream write the same positions and normals.
    for kernel in [0, 1, 2, 3] {
        let (a, b) = (skin_with_kernel::<4>(&pal, kernel, false), skin_with_kernel::<4>(&pal, kernel, true));
        for v in 0..16 {
            assert_eq!(a[v][..6], b[v][..6], "kernel {kernel}, vertex {v}");
        }
    }
}

/// Every vertex count from 1 to 20, whole (the loop of positions and normals: two vertices an
/// iteration, then the one or two before the last, then the last) against one vertex per job:
/// the same bits, and nothing written past the outputs.
#[test]
fn every_vertex_count_gives_the_same_bits() {
    let pal = palette();
    const M: usize = 20;
    let pos: [Vec3<f32>; M] = core::array::from_fn(|v| Vec3::new(v as f32, 1.0 - v as f32 * 0.3, 0.25));
    let nrm: [Vec3<f32>; M] = core::array::from_fn(|v| Vec3::new(0.5, v as f32 * 0.1, -1.0));
    let idx: [u16; M * 2] = core::array::from_fn(|i| (i % 3 % 2) as u16);
    let w: [f32; M * 2] = core::array::from_fn(|i| if i % 2 == 0 { 0.25 + (i % 7) as f32 * 0.1 } else { 0.5 });
    let skin = |range: core::ops::Range<usize>, op: &mut [Vec3<f32>], on: &mut [Vec3<f32>]| {
        SkinningJob::new(
            Palette::Matrices(&pal),
            2,
            &idx[range.start * 2..range.end * 2],
            &w[range.start * 2..range.end * 2],
            &pos[range.clone()],
            &mut op[range.clone()],
        )
        .with_normals(&nrm[range.clone()], &mut on[range])
        .run_unnormalized()
        .unwrap();
    };
    for n in 1..=M {
        let (mut op, mut on) = ([S; M], [S; M]);
        skin(0..n, &mut op, &mut on);
        let (mut ep, mut en) = ([S; M], [S; M]);
        for v in 0..n {
            skin(v..v + 1, &mut ep, &mut en);
        }
        let bits = |v: Vec3<f32>| [v.x, v.y, v.z].map(f32::to_bits);
        for v in 0..n {
            assert_eq!(bits(op[v]), bits(ep[v]), "position {v} of {n}");
            assert_eq!(bits(on[v]), bits(en[v]), "normal {v} of {n}");
        }
        assert!(op[n..].iter().chain(&on[n..]).all(|&v| v == S), "{n} vertices: written past the end");
    }
}

/// Dual-quaternion skinning of every vertex count from 1 to 11, whole (four vertices at a time
/// in lanes on hosts, then the rest one at a time) against one vertex per job: the same bits for
/// positions, normals and tangents, with an antipodal quaternion, zero weights, and a vertex
/// without weight (the identity); in each kernel set this build and CPU have.
#[test]
fn dqs_every_vertex_count_gives_the_same_bits() {
    use crate::platform::dispatch::{with_kernels, Kernels};
    for kernels in [Kernels::Build, Kernels::X86_64V3] {
        with_kernels(kernels, dqs_vertex_counts);
    }
}

/// [`dqs_every_vertex_count_gives_the_same_bits`] in the kernels the thread's jobs run.
fn dqs_vertex_counts() {
    let dq: [DualQuat<f32>; 3] = core::array::from_fn(|i| {
        let f = i as f32;
        let q = Quat::from_axis_angle(Vec3::new(0.6, 0.0, 0.8), 0.7 + 0.9 * f);
        let d = DualQuat::from_rotation_translation(q, Vec3::new(f, -0.5 * f, 0.25));
        if i == 2 {
            DualQuat { real: -d.real, dual: -d.dual }
        } else {
            d
        }
    });
    const M: usize = 11;
    const K: usize = 3;
    let pos: [Vec3<f32>; M] = core::array::from_fn(|v| Vec3::new(v as f32, 1.0 - v as f32 * 0.3, 0.25));
    let nrm: [Vec3<f32>; M] = core::array::from_fn(|v| Vec3::new(0.5, v as f32 * 0.1, -1.0));
    let tan: [Vec4<f32>; M] = core::array::from_fn(|v| Vec4::new(1.0, 0.0, v as f32 * 0.2, -1.0));
    let idx: [u16; M * K] = core::array::from_fn(|i| ((i * 5 + i / 4) % 3) as u16);
    let w: [f32; M * K] = core::array::from_fn(|i| match (i / K, i % K) {
        (6, _) => 0.0,
        (v, 0) => 0.3 + (v % 4) as f32 * 0.1,
        (v, 1) if v % 3 == 0 => 0.0,
        (_, 1) => 0.2,
        _ => 0.1,
    });
    let skin = |r: core::ops::Range<usize>, op: &mut [Vec3<f32>], on: &mut [Vec3<f32>], ot: &mut [Vec4<f32>]| {
        SkinningJob::new(
            Palette::DualQuats(&dq),
            K,
            &idx[r.start * K..r.end * K],
            &w[r.start * K..r.end * K],
            &pos[r.clone()],
            &mut op[r.clone()],
        )
        .with_normals(&nrm[r.clone()], &mut on[r.clone()])
        .with_tangents(&tan[r.clone()], &mut ot[r])
        .run()
        .unwrap();
    };
    for n in 1..=M {
        let (mut op, mut on, mut ot) = ([S; M], [S; M], [S4; M]);
        skin(0..n, &mut op, &mut on, &mut ot);
        let (mut ep, mut en, mut et) = ([S; M], [S; M], [S4; M]);
        for v in 0..n {
            skin(v..v + 1, &mut ep, &mut en, &mut et);
        }
        let bits = |v: Vec3<f32>| [v.x, v.y, v.z].map(f32::to_bits);
        for v in 0..n {
            assert_eq!(bits(op[v]), bits(ep[v]), "position {v} of {n}");
            assert_eq!(bits(on[v]), bits(en[v]), "normal {v} of {n}");
            assert_eq!(ot[v].to_array().map(f32::to_bits), et[v].to_array().map(f32::to_bits), "tangent {v} of {n}");
        }
        if n > 6 {
            assert_eq!(bits(op[6]), bits(pos[6]), "a vertex without weight stays where it is");
        }
        assert!(op[n..].iter().chain(&on[n..]).all(|&v| v == S), "{n} vertices: written past the end");
        assert!(ot[n..].iter().all(|&v| v == S4), "{n} vertices: tangents written past the end");
    }
}

/// The loop of positions, normals and tangents against the loops without it: its positions and
/// normals are the loop of positions and normals' bits, its tangents the general loop's (a job
/// with tangents and no normals), renormalized or not, on the packed palette (263 vertices) and
/// the direct one (13).
#[test]
fn tangents_loop_matches_the_other_loops() {
    check_tangents_loop::<13>();
    if !cfg!(miri) {
        check_tangents_loop::<263>();
    }
}

fn check_tangents_loop<const N: usize>() {
    let pal = palette();
    let pos: [Vec3<f32>; N] = core::array::from_fn(|i| Vec3::new(i as f32 * 0.01, 1.0 - i as f32 * 0.02, 0.5));
    let nrm: [Vec3<f32>; N] = core::array::from_fn(|i| Vec3::new(0.3, i as f32 * 0.1, -1.0));
    let tan: [Vec4<f32>; N] = core::array::from_fn(|i| Vec4::new(1.0, -0.5, i as f32 * 0.05, -1.0));
    let idx: [[u16; 2]; N] = core::array::from_fn(|i| [(i % 2) as u16, ((i + 1) % 2) as u16]);
    let w: [[f32; 2]; N] = core::array::from_fn(|i| [0.2 + (i % 7) as f32 * 0.1, 0.4]);
    let (idx, w) = (idx.as_flattened(), w.as_flattened());
    for unit in [false, true] {
        let run = |with_n: bool, with_t: bool| {
            let (mut op, mut on, mut ot) = ([S; N], [S; N], [S4; N]);
            let mut job = SkinningJob {
                palette: Palette::Matrices(&pal),
                influences: 2,
                joint_indices: idx,
                joint_weights: w,
                positions: &pos,
                normals: with_n.then_some(&nrm[..]),
                tangents: with_t.then_some(&tan[..]),
                out_positions: &mut op,
                out_normals: with_n.then_some(&mut on[..]),
                out_tangents: with_t.then_some(&mut ot[..]),
            };
            if unit { job.run() } else { job.run_unnormalized() }.unwrap();
            let bits = |v: [Vec3<f32>; N]| v.map(|v| [v.x, v.y, v.z].map(f32::to_bits));
            (bits(op), bits(on), ot.map(|t| t.to_array().map(f32::to_bits)))
        };
        let all = run(true, true);
        assert_eq!(all.0, run(true, false).0, "{N} vertices, unit {unit}: positions");
        assert_eq!(all.1, run(true, false).1, "{N} vertices, unit {unit}: normals");
        assert_eq!(all.2, run(false, true).2, "{N} vertices, unit {unit}: tangents");
    }
}

/// `run_unnormalized`: positions as `run` gives them, bit for bit; normals and tangents the
/// blended 3×3 part times the bind-pose vector, not renormalized (their length differs from 1
/// under these blends), which `run` renormalizes.
#[test]
fn unnormalized_directions_are_the_blended_matrix_times_the_vector() {
    let pal: [Mat4<f32>; 3] = core::array::from_fn(|i| {
        let f = i as f32;
        Mat4::from_trs(
            Vec3::new(f, -f, 0.5),
            Quat::from_axis_angle(Vec3::new(0.6, 0.0, 0.8), 0.9 * f),
            Vec3::new(1.0 + 0.3 * f, 1.0, 1.0 - 0.2 * f),
        )
    });
    // Enough vertices for the grouped and packed loops, and a tail.
    const V: usize = if cfg!(miri) { 9 } else { 263 };
    let pos: [Vec3<f32>; V] = core::array::from_fn(|v| Vec3::new(v as f32 * 0.01, 1.0, -0.5));
    let nrm: [Vec3<f32>; V] = core::array::from_fn(|v| Vec3::new(1.0, v as f32 * 0.1, 0.5).normalize_or_zero());
    let tan: [Vec4<f32>; V] = core::array::from_fn(|v| Vec4::new(0.0, 1.0, v as f32 * -0.05, -1.0));
    let idx: [u16; V * 2] = core::array::from_fn(|i| ((i * 7 + i / 3) % 3) as u16);
    let w: [f32; V * 2] = core::array::from_fn(|i| if i % 2 == 0 { 0.3 + (i % 5) as f32 * 0.1 } else { 0.0 });
    let w: [f32; V * 2] = core::array::from_fn(|i| if i % 2 == 0 { w[i] } else { 1.0 - w[i - 1] });
    for tangents in [false, true] {
        let skin = |unit: bool, op: &mut [Vec3<f32>], on: &mut [Vec3<f32>], ot: &mut [Vec4<f32>]| {
            let mut job = SkinningJob {
                palette: Palette::Matrices(&pal),
                influences: 2,
                joint_indices: &idx,
                joint_weights: &w,
                positions: &pos,
                normals: Some(&nrm),
                tangents: tangents.then_some(&tan[..]),
                out_positions: op,
                out_normals: Some(on),
                out_tangents: tangents.then_some(ot),
            };
            if unit {
                job.run().unwrap();
            } else {
                job.run_unnormalized().unwrap();
            }
        };
        let (mut up, mut un, mut ut) = ([S; V], [S; V], [S4; V]);
        let (mut rp, mut rn, mut rt) = ([S; V], [S; V], [S4; V]);
        skin(true, &mut up, &mut un, &mut ut);
        skin(false, &mut rp, &mut rn, &mut rt);
        let mut longest = 0.0f32;
        for v in 0..V {
            assert_eq!(up[v], rp[v], "position {v}");
            let m = |d: Vec3<f32>| {
                let (a, b) = (pal[idx[2 * v] as usize], pal[idx[2 * v + 1] as usize]);
                a.transform_vector3(d) * w[2 * v] + b.transform_vector3(d) * w[2 * v + 1]
            };
            let e = m(nrm[v]);
            assert!((rn[v] - e).max_abs() < 1e-5, "normal {v}: {:?} against {e:?}", rn[v]);
            assert!((un[v] - e.normalize_or_zero()).max_abs() < 1e-5, "unit normal {v}");
            longest = longest.max((rn[v].length() - 1.0).abs());
            if tangents {
                let e = m(tan[v].truncate());
                assert!((rt[v].truncate() - e).max_abs() < 1e-5, "tangent {v}");
                assert!((ut[v].truncate() - e.normalize_or_zero()).max_abs() < 1e-5, "unit tangent {v}");
                assert_eq!((rt[v].w, ut[v].w), (-1.0, -1.0));
            } else {
                assert_eq!(rt[v], S4);
            }
        }
        assert!(longest > 0.01, "the blends change the normals' length ({longest})");
    }
}

#[test]
fn packed_palette_gives_the_same_bits() {
    check_packed_matches_direct::<67>();
    // Palettes longer than the packed table take the direct loops.
    if !cfg!(miri) {
        check_packed_matches_direct::<300>();
    }
}

#[test]
fn dqs_keeps_volume_where_lbs_collapses() {
    // Two joints twisted ±90° about X; a vertex bound half to each.
    let a = Quat::from_axis_angle(Vec3::X, core::f32::consts::FRAC_PI_2);
    let b = Quat::from_axis_angle(Vec3::X, -core::f32::consts::FRAC_PI_2);
    let mats = [Mat4::from_trs(Vec3::ZERO, a, Vec3::ONE), Mat4::from_trs(Vec3::ZERO, b, Vec3::ONE)];
    let dqs = [DualQuat::from_mat4_rigid(&mats[0]), DualQuat::from_mat4_rigid(&mats[1])];
    let pos = [Vec3::new(0.0f32, 1.0, 0.0)];
    let (idx, w) = ([0u16, 1], [0.5f32, 0.5]);
    let run = |palette| {
        let mut op = [Vec3::ZERO; 1];
        SkinningJob {
            palette,
            influences: 2,
            joint_indices: &idx,
            joint_weights: &w,
            positions: &pos,
            normals: None,
            tangents: None,
            out_positions: &mut op,
            out_normals: None,
            out_tangents: None,
        }
        .run()
        .unwrap();
        op[0]
    };
    let l = run(Palette::Matrices(&mats));
    let d = run(Palette::DualQuats(&dqs));
    assert!(l.length() < 1.0e-6, "LBS collapses to the axis: {l:?}");
    assert!((d.length() - 1.0).abs() < 1.0e-5, "DQS keeps the radius: {d:?}");
    // Antipodal input: negating one palette entry changes nothing.
    let flipped = [dqs[0], DualQuat { real: -dqs[1].real, dual: -dqs[1].dual }];
    let f = run(Palette::DualQuats(&flipped));
    assert!((f - d).max_abs() < 1.0e-6);
}

/// LBS in every kernel path against the rule (`skinning/rule.rs`), on random meshes, in each
/// kernel set this build and CPU have: every influence count from 1 to [`MAX_INFLUENCES`],
/// positions alone, with normals, and with normals and tangents, `run` and `run_unnormalized`,
/// 13 vertices (the direct palette) and 263 (the packed one on hosts; under miri only with
/// every stream, `run` and [`MAX_INFLUENCES`] influences), in `f32` and Q16. Kernels that do not fuse multiply-adds give the rule's bits; fused ones stay within 2⁻¹⁶ of
/// them, relative to values above 1 (joints turned by at most 1 rad from one another, so no
/// blended direction nears zero).
#[test]
fn lbs_kernels_follow_the_rule() {
    extern crate std;
    use crate::platform::dispatch::{with_kernels, Kernels};
    use crate::real::Q16;
    use std::vec::Vec;

    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32
    };
    fn same<R: Real>(a: R, b: R, exact: bool) -> bool {
        let (x, y) = (a.to_f32(), b.to_f32());
        if R::FIXED_POINT {
            a == b
        } else if exact {
            x.to_bits() == y.to_bits()
        } else {
            (x - y).abs() <= x.abs().max(1.0) / 65_536.0
        }
    }
    fn check<R: Real>(mesh: &Mesh, k: usize, streams: usize, unit: bool) {
        let c = |v: f32| R::from_f32(v);
        let pal: Vec<Mat4<R>> = mesh.palette.iter().map(|m| Mat4 { cols: m.cols.map(|col| col.map(c)) }).collect();
        let n = mesh.positions.len();
        let idx = &mesh.idx[..n * k];
        let w: Vec<R> = mesh.w[..n * k].iter().map(|&x| c(x)).collect();
        let pos: Vec<Vec3<R>> = mesh.positions.iter().map(|p| Vec3::new(c(p.x), c(p.y), c(p.z))).collect();
        let nrm: Vec<Vec3<R>> = mesh.normals.iter().map(|p| Vec3::new(c(p.x), c(p.y), c(p.z))).collect();
        let tan: Vec<Vec4<R>> = mesh.tangents.iter().map(|t| Vec4::new(c(t.x), c(t.y), c(t.z), c(t.w))).collect();
        let (nrm, tan) = ((streams >= 1).then_some(&nrm[..]), (streams >= 2).then_some(&tan[..]));
        let outputs = || {
            let z3 = Vec3::new(R::ZERO, R::ZERO, R::ZERO);
            let z4 = Vec4::new(R::ZERO, R::ZERO, R::ZERO, R::ZERO);
            (std::vec![z3; n], nrm.map(|_| std::vec![z3; n]), tan.map(|_| std::vec![z4; n]))
        };
        let (mut rp, mut rn, mut rt) = outputs();
        super::rule::lbs(&pal, k, idx, &w, &pos, nrm, tan, unit, &mut rp, rn.as_deref_mut(), rt.as_deref_mut());
        for kernels in [Kernels::Build, Kernels::X86_64V3] {
            let Some((exact, (jp, jn, jt))) = with_kernels(kernels, || {
                let (mut jp, mut jn, mut jt) = outputs();
                let mut job = SkinningJob {
                    palette: Palette::Matrices(&pal),
                    influences: k,
                    joint_indices: idx,
                    joint_weights: &w,
                    positions: &pos,
                    normals: nrm,
                    tangents: tan,
                    out_positions: &mut jp,
                    out_normals: jn.as_deref_mut(),
                    out_tangents: jt.as_deref_mut(),
                };
                if unit { job.run() } else { job.run_unnormalized() }.unwrap();
                (!crate::platform::jobs_fuse(), (jp, jn, jt))
            }) else {
                continue;
            };
            let what = |s: &str, v: usize| std::format!("{kernels:?} {k} influences, {n} vertices, {s} {v}");
            let v3 = |v: Vec3<R>| [v.x, v.y, v.z];
            for v in 0..n {
                let ok = |a: [R; 3], b: [R; 3]| a.iter().zip(&b).all(|(&x, &y)| same(x, y, exact));
                assert!(ok(v3(jp[v]), v3(rp[v])), "{}", what("position", v));
                if let (Some(j), Some(r)) = (&jn, &rn) {
                    assert!(ok(v3(j[v]), v3(r[v])), "{}", what("normal", v));
                }
                if let (Some(j), Some(r)) = (&jt, &rt) {
                    assert!(ok(v3(j[v].truncate()), v3(r[v].truncate())) && j[v].w == r[v].w, "{}", what("tangent", v));
                }
            }
        }
    }
    struct Mesh {
        palette: Vec<Mat4<f32>>,
        idx: Vec<u16>,
        w: Vec<f32>,
        positions: Vec<Vec3<f32>>,
        normals: Vec<Vec3<f32>>,
        tangents: Vec<Vec4<f32>>,
    }
    for n in [13, 263] {
        let joints = 23;
        let palette: Vec<Mat4<f32>> = (0..joints)
            .map(|_| {
                let mut r = || 2.0 * rnd() - 1.0;
                let axis = Vec3::new(r(), r(), r() + 2.0).normalize_or_zero();
                let (t, s) = (Vec3::new(r(), r(), r()), Vec3::new(1.0 + 0.5 * r(), 1.0 + 0.5 * r(), 1.0 + 0.5 * r()));
                let mut m = Mat4::from_trs(t, Quat::from_axis_angle(axis, 0.5 * r()), s);
                m.cols[0][3] = r();
                m.cols[1][2] += 0.1 * r();
                m
            })
            .collect();
        let count = n * MAX_INFLUENCES;
        let mut r = || 2.0 * rnd() - 1.0;
        let mesh = Mesh {
            idx: (0..count).map(|_| ((r() + 1.0) * 0.5 * joints as f32) as u16 % joints as u16).collect(),
            w: (0..count).map(|i| if i % 5 == 3 { 0.0 } else { (r() + 1.0) * 0.5 }).collect(),
            positions: (0..n).map(|_| Vec3::new(2.0 * r(), 2.0 * r(), 2.0 * r())).collect(),
            normals: (0..n).map(|_| Vec3::new(r(), r(), r() + 2.0).normalize_or_zero()).collect(),
            tangents: (0..n)
                .map(|_| Vec3::new(r() + 2.0, r(), r()).normalize_or_zero().extend(if r() < 0.0 { -1.0 } else { 1.0 }))
                .collect(),
            palette,
        };
        for k in 1..=MAX_INFLUENCES {
            for streams in 0..3 {
                for unit in [false, true] {
                    // Under miri the 263-vertex mesh (the packed palette's path) runs once per
                    // type, with every stream: the 13-vertex mesh covers each combination.
                    if cfg!(miri) && n > 13 && (k != MAX_INFLUENCES || streams != 2 || !unit) {
                        continue;
                    }
                    check::<f32>(&mesh, k, streams, unit);
                    check::<Q16>(&mesh, k, streams, unit);
                }
            }
        }
    }
}
