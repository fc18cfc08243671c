//! Tests of dual-quaternion skinning with scale (`Palette::ScaledDualQuats`, `scaled.rs`):
//! the lane loop against one vertex at a time, rigid palettes on the rigid path, agreement
//! with LBS where LBS is exact, volume under scale, and the palette's checks.

extern crate std;

use crate::job::{JobError, Palette, SkinDualQuatJob, SkinMatrixJob, SkinningJob};
use crate::math::{DualQuat, Mat4, Quat, SymMat3, Vec3, Vec4};
use crate::real::{Real, Q16};
use crate::test_support::Rng;

/// Skinned positions, normals and tangents.
type Skinned<R> = (std::vec::Vec<Vec3<R>>, std::vec::Vec<Vec3<R>>, std::vec::Vec<Vec4<R>>);
/// The dual quaternions and scales of a two-joint rig, and its matrices.
type Palettes<R> = ([DualQuat<R>; 2], [SymMat3<R>; 2], [Mat4<R>; 2]);

/// Skins `pos` (two influences per vertex, `idx`/`w`) with `palette`; positions, normals
/// and tangents.
fn skin<R: Real>(palette: Palette<'_, R>, idx: &[u16], w: &[R], pos: &[Vec3<R>]) -> Skinned<R> {
    let n = pos.len();
    let nrm: std::vec::Vec<Vec3<R>> = pos.iter().map(|p| p.normalize_or_zero()).collect();
    let tan: std::vec::Vec<Vec4<R>> =
        nrm.iter().map(|v| Vec3::new(v.y, -v.x, R::ZERO).normalize_or_zero().extend(R::ONE)).collect();
    let (mut op, mut on, mut ot) = (std::vec![Vec3::ZERO; n], std::vec![Vec3::ZERO; n], std::vec![Vec4::ZERO; n]);
    SkinningJob::new(palette, 2, idx, w, pos, &mut op)
        .with_normals(&nrm, &mut on)
        .with_tangents(&tan, &mut ot)
        .run()
        .unwrap();
    (op, on, ot)
}

/// A two-joint rig: joint 1 at (0, 1, 0) bent by `angle` about Z; `scale` on the root
/// that the bind pose does not have (a centimetre mesh under an armature scaled 0.01) and
/// `child_scale` on joint 1 (its own, non-uniform).
fn rig<R: Real>(angle: R, scale: Vec3<R>, child_scale: Vec3<R>) -> ([Mat4<R>; 2], [Mat4<R>; 2]) {
    let root = Mat4::from_trs(Vec3::ZERO, Quat::from_axis_angle(Vec3::Y, R::ratio(3, 10)), scale);
    let local1 = Mat4::from_trs(Vec3::Y, Quat::from_axis_angle(Vec3::Z, angle), child_scale);
    let model = [root, root * local1];
    let bind = [Mat4::IDENTITY, Mat4::from_translation(Vec3::Y)];
    let ib = bind.map(|m| m.inverse().unwrap_or(Mat4::IDENTITY));
    (model, ib)
}

fn vertices<R: Real>() -> ([Vec3<R>; 4], [u16; 8], [R; 8]) {
    let h = R::HALF;
    let pos = [
        Vec3::new(R::ratio(1, 5), R::ratio(1, 2), R::ZERO),
        Vec3::new(R::ZERO, R::ONE, R::ratio(1, 5)),
        Vec3::new(R::ratio(-1, 5), R::ratio(3, 2), R::ZERO),
        Vec3::new(R::ratio(1, 10), R::ratio(11, 10), R::ratio(-1, 5)),
    ];
    (pos, [0, 1, 0, 1, 0, 1, 1, 0], [R::ONE, R::ZERO, h, h, R::ratio(1, 4), R::ratio(3, 4), R::ONE, R::ZERO])
}

/// The scaled palette of `model`/`ib`, and the matrix palette.
fn palettes<R: Real>(model: &[Mat4<R>; 2], ib: &[Mat4<R>; 2]) -> Palettes<R> {
    let (mut dq, mut sc, mut m) = ([DualQuat::IDENTITY; 2], [SymMat3::IDENTITY; 2], [Mat4::IDENTITY; 2]);
    SkinDualQuatJob::new(model, ib, &mut dq).with_scales(&mut sc).run().unwrap();
    SkinMatrixJob::new(model, ib, &mut m).run().unwrap();
    (dq, sc, m)
}

/// A scalar's bits, for exact comparisons (a NaN's sign and payload, a zero's sign).
trait Bits: Real {
    fn bits(self) -> u32;
}
impl Bits for f32 {
    fn bits(self) -> u32 {
        self.to_bits()
    }
}
impl Bits for Q16 {
    fn bits(self) -> u32 {
        self.to_bits() as u32
    }
}

/// A job's positions, normals and tangents.
type Inputs<'a, R> = (&'a [Vec3<R>], &'a [Vec3<R>], &'a [Vec4<R>]);
/// Where they are skinned to.
type Outputs<'a, R> = (&'a mut [Vec3<R>], &'a mut [Vec3<R>], &'a mut [Vec4<R>]);

/// Skins vertices `range` of the streams as one job, positions always, normals and tangents
/// where `streams` says, into the same vertices of the outputs.
fn skin_range<R: Real>(
    palette: Palette<'_, R>,
    k: usize,
    (idx, w): (&[u16], &[R]),
    (pos, nrm, tan): Inputs<'_, R>,
    r: core::ops::Range<usize>,
    streams: (bool, bool),
    (op, on, ot): Outputs<'_, R>,
) {
    let mut job = SkinningJob::new(
        palette,
        k,
        &idx[r.start * k..r.end * k],
        &w[r.start * k..r.end * k],
        &pos[r.clone()],
        &mut op[r.clone()],
    );
    if streams.0 {
        job = job.with_normals(&nrm[r.clone()], &mut on[r.clone()]);
    }
    if streams.1 {
        job = job.with_tangents(&tan[r.clone()], &mut ot[r]);
    }
    job.run().unwrap();
}

/// A scaled palette of random joints: rigid ones (`P = I`), uniform scales from 0.01 to
/// 100, non-uniform and sheared ones, a mirror (`det P < 0`) and a zero `P`, with one
/// antipodal dual quaternion.
fn random_palette<R: Real>(rng: &mut Rng) -> (std::vec::Vec<DualQuat<R>>, std::vec::Vec<SymMat3<R>>) {
    let mut dq = std::vec::Vec::new();
    let mut sc = std::vec::Vec::new();
    for j in 0..9 {
        let axis = Vec3::new(R::from_f32(rng.next()), R::from_f32(rng.next()), R::ONE).normalize_or_zero();
        let q = Quat::from_axis_angle(axis, R::from_f32(rng.next() * 3.0));
        let scale = match j {
            0 | 1 => Vec3::ONE,
            2 => Vec3::splat(R::ratio(1, 100)),
            3 => Vec3::splat(R::from_i32(100)),
            _ => Vec3::ONE + rng.vec3(0.5),
        };
        let mut m = Mat4::from_trs(rng.vec3(2.0), q, scale);
        if j == 5 {
            // Shear: the x column leans into y.
            m.cols[0][1] += R::HALF;
        }
        let (d, s) = DualQuat::from_mat4_scaled(&m);
        let d = if j == 6 { DualQuat { real: -d.real, dual: -d.dual } } else { d };
        dq.push(d);
        sc.push(match j {
            // A mirror with shear (`det P < 0`), as a palette built by hand may hold.
            4 => SymMat3 { xx: -R::HALF, xz: R::ratio(1, 5), ..SymMat3::uniform(R::ratio(6, 5)) },
            8 => SymMat3::ZERO,
            _ => s,
        });
    }
    assert!(sc[0].is_identity() && sc[1].is_identity(), "{:?}", &sc[..2]);
    assert!(sc[4].determinant() < R::ZERO, "{:?}", sc[4]);
    (dq, sc)
}

/// Every vertex count from 1 to 13 and 61 skinned as one job (four vertices at a time in
/// lanes on hosts, in floating point, then the rest one at a time) against one job per
/// vertex: the same bits for positions, normals and tangents, with positions alone, with
/// normals alone and with all three. Groups mix rigid vertices (influences on rigid joints
/// only) with scaled ones; some weights are zero, some vertices have none. `no_identity`
/// scales the two rigid joints too, so that no scale of the palette is the identity (the
/// loop that skips the per-influence identity test): only weightless vertices stay rigid.
fn lanes_match_one_at_a_time<R: Bits>(no_identity: bool) {
    const K: usize = 3;
    const M: usize = 61;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (dq, mut sc) = random_palette::<R>(&mut rng);
    if no_identity {
        sc[0] = SymMat3::uniform(R::ratio(3, 2));
        sc[1] = SymMat3 { yy: R::ratio(4, 5), xy: R::ratio(1, 10), ..SymMat3::IDENTITY };
        assert!(!sc.iter().any(SymMat3::is_identity));
    }
    let palette = Palette::ScaledDualQuats { dual_quats: &dq, scales: &sc };
    let pos: std::vec::Vec<Vec3<R>> = (0..M).map(|_| rng.vec3(3.0)).collect();
    let nrm: std::vec::Vec<Vec3<R>> = (0..M).map(|_| rng.vec3(1.0)).collect();
    let tan: std::vec::Vec<Vec4<R>> = (0..M).map(|_| rng.vec3(1.0).extend(-R::ONE)).collect();
    let mut idx = std::vec![0u16; M * K];
    let mut w = std::vec![R::ZERO; M * K];
    for v in 0..M {
        // Groups of four vertices: mixed (every third vertex rigid: joints 0 and 1 only, one
        // in seven weightless), all scaled (one with only the zero `P`), all rigid.
        let kind = (v / 4) % 3;
        let rigid = match kind {
            0 => v % 3 == 1,
            1 => false,
            _ => true,
        };
        for i in 0..K {
            let r = (rng.next() + 1.0) * 0.5;
            idx[v * K + i] = match (rigid, v) {
                (true, _) => (r * 2.0) as u16 % 2,
                (false, 29) => 8,
                _ => 2 + (r * 7.0) as u16 % 7,
            };
            w[v * K + i] = match (v % 7, i) {
                (5, _) if kind != 1 => R::ZERO,
                (_, 1) if v % 2 == 0 => R::ZERO,
                _ => R::from_f32(r / K as f32 + 0.01),
            };
        }
    }
    // Which groups have scaled vertices: some all, some none, some mixed.
    let scaled = |v: usize| (0..K).any(|i| w[v * K + i] != R::ZERO && !sc[usize::from(idx[v * K + i])].is_identity());
    let groups: std::vec::Vec<usize> = (0..M / 4).map(|g| (0..4).filter(|l| scaled(g * 4 + l)).count()).collect();
    let mixed = groups.iter().any(|&c| c > 0 && c < 4);
    assert!(groups.contains(&4) && mixed && (no_identity || groups.contains(&0)), "{groups:?}");
    let bits3 = |v: Vec3<R>| v.to_array().map(R::bits);
    let bits4 = |v: Vec4<R>| v.to_array().map(R::bits);
    for streams in [(false, false), (true, false), (true, true)] {
        for n in (1..=13).chain([M]) {
            let z = |_| Vec3::splat(R::from_i32(99));
            let (mut op, mut on, mut ot): Skinned<R> =
                ((0..M).map(z).collect(), (0..M).map(z).collect(), (0..M).map(|i| z(i).extend(R::ONE)).collect());
            let (mut ep, mut en, mut et) = (op.clone(), on.clone(), ot.clone());
            let ins = ((&idx[..], &w[..]), (&pos[..], &nrm[..], &tan[..]));
            skin_range(palette, K, ins.0, ins.1, 0..n, streams, (&mut op, &mut on, &mut ot));
            for v in 0..n {
                skin_range(palette, K, ins.0, ins.1, v..v + 1, streams, (&mut ep, &mut en, &mut et));
            }
            for v in 0..M {
                assert_eq!(bits3(op[v]), bits3(ep[v]), "position {v} of {n}, {streams:?}");
                assert_eq!(bits3(on[v]), bits3(en[v]), "normal {v} of {n}, {streams:?}");
                assert_eq!(bits4(ot[v]), bits4(et[v]), "tangent {v} of {n}, {streams:?}");
            }
            // Scaled vertices did move by their scale: not the rigid palette's result.
            let mut rigid = std::vec![Vec3::ZERO; n];
            SkinningJob::new(Palette::DualQuats(&dq), K, &idx[..n * K], &w[..n * K], &pos[..n], &mut rigid)
                .run()
                .unwrap();
            if n >= 3 {
                assert!((0..n).any(|v| v % 3 != 1 && rigid[v] != op[v]), "{n}: no vertex scaled");
            }
        }
    }
}

/// In each kernel set this build and CPU have.
#[test]
fn scaled_lanes_give_the_bits_of_one_vertex_at_a_time() {
    use crate::platform::dispatch::{with_kernels, Kernels};
    for kernels in [Kernels::Build, Kernels::X86_64V3] {
        with_kernels(kernels, || {
            for no_identity in [false, true] {
                lanes_match_one_at_a_time::<f32>(no_identity);
                lanes_match_one_at_a_time::<Q16>(no_identity);
            }
        });
    }
}

#[test]
fn rigid_palettes_take_the_rigid_path_bit_for_bit() {
    let (model, ib) = rig::<f32>(1.1, Vec3::ONE, Vec3::ONE);
    let (dq, sc, _) = palettes(&model, &ib);
    assert!(sc.iter().all(SymMat3::is_identity));
    let mut plain = [DualQuat::IDENTITY; 2];
    SkinDualQuatJob::new(&model, &ib, &mut plain).run().unwrap();
    assert_eq!(dq, plain);
    let (pos, idx, w) = vertices::<f32>();
    let a = skin(Palette::ScaledDualQuats { dual_quats: &dq, scales: &sc }, &idx, &w, &pos);
    let b = skin(Palette::DualQuats(&plain), &idx, &w, &pos);
    assert_eq!(a, b);
}

/// Uniform armature scales (0.01, 100) and a non-uniform joint scale: where every influence
/// shares one matrix (weight 1, or the rest pose) DQS with scale lands where LBS does; at a
/// bend, as far from LBS as the rigid rig's DQS, scaled by the same factor.
fn matches_lbs<R: Real>(tol: f32) {
    // Measured: at most 0.089 at vertex 2 (the rigid rig's DQS − LBS there is 0.049), from
    // the blended stretch P_b under a 63° bend.
    const NON_UNIFORM_BOUND: f32 = 0.1;
    let (pos, idx, w) = vertices::<R>();
    let s = |v: i32, d: i32| Vec3::splat(R::ratio(v, d));
    for (scale, child) in [
        (s(1, 100), Vec3::ONE),
        (s(100, 1), Vec3::ONE),
        (Vec3::ONE, Vec3::new(R::ratio(3, 2), R::ratio(1, 2), R::ONE)),
        (s(1, 100), Vec3::new(R::ONE, R::TWO, R::ratio(1, 2))),
    ] {
        let unit = scale.x.to_f32() * child.x.to_f32().max(child.y.to_f32()).max(child.z.to_f32());
        // Rest pose (joint 1 unbent): every vertex equals LBS.
        let (model, ib) = rig(R::ZERO, scale, child);
        let (dq, sc, m) = palettes(&model, &ib);
        let scaled = Palette::ScaledDualQuats { dual_quats: &dq, scales: &sc };
        let (dp, dn, dt) = skin(scaled, &idx, &w, &pos);
        let (lp, ln, _) = skin(Palette::Matrices(&m), &idx, &w, &pos);
        for v in 0..pos.len() {
            let e = (dp[v] - lp[v]).max_abs().to_f32() / unit;
            assert!(e < tol, "scale {scale:?} {child:?}, vertex {v}: {e}");
            assert!((dn[v].length().to_f32() - 1.0).abs() < tol * 4.0, "normal {v} {:?}", dn[v]);
            assert!((dt[v].truncate().length().to_f32() - 1.0).abs() < tol * 4.0, "tangent {v} {:?} {scale:?}", dt[v]);
        }
        // Unit normals on the LBS side too.
        assert!(ln.iter().all(|n| (n.length().to_f32() - 1.0).abs() < tol * 4.0), "lbs {ln:?} {scale:?} {child:?}");
        // Bent: weight-1 vertices (0 and 3) equal LBS; the blended ones keep their distance
        // from the bend as the unscaled rig's DQS does, times the scale.
        let (model, ib) = rig(R::ratio(11, 10), scale, child);
        let (dq, sc, m) = palettes(&model, &ib);
        let (dp, _, _) = skin(Palette::ScaledDualQuats { dual_quats: &dq, scales: &sc }, &idx, &w, &pos);
        let (lp, _, _) = skin(Palette::Matrices(&m), &idx, &w, &pos);
        for v in [0, 3] {
            let e = (dp[v] - lp[v]).max_abs().to_f32() / unit;
            assert!(e < tol, "bent, scale {scale:?} {child:?}, vertex {v}: {e}");
        }
        // The blended vertices (1 and 2): under a uniform armature scale, DQS minus LBS is
        // the unscaled rig's difference times the scale; under a non-uniform joint scale,
        // within `NON_UNIFORM_BOUND` (in units of the rig's size) of LBS.
        let (model1, ib1) = rig(R::ratio(11, 10), Vec3::ONE, Vec3::ONE);
        let (dq1, sc1, m1) = palettes(&model1, &ib1);
        let (dp1, _, _) = skin(Palette::ScaledDualQuats { dual_quats: &dq1, scales: &sc1 }, &idx, &w, &pos);
        let (lp1, _, _) = skin(Palette::Matrices(&m1), &idx, &w, &pos);
        for v in [1, 2] {
            let d = (dp[v] - lp[v]).to_array().map(R::to_f32);
            if child == Vec3::ONE {
                let d1 = (dp1[v] - lp1[v]).to_array().map(R::to_f32);
                let e = (0..3).map(|c| (d[c] / unit - d1[c]).abs()).fold(0.0, f32::max);
                assert!(e < tol * 4.0, "bent, scale {scale:?}, vertex {v}: {e}");
            } else {
                let e = d.iter().map(|c| c.abs()).fold(0.0, f32::max) / unit;
                assert!(e < NON_UNIFORM_BOUND, "bent, scale {scale:?} {child:?}, vertex {v}: {e}");
            }
        }
    }
}

#[test]
fn scaled_rigs_match_lbs_where_lbs_is_exact() {
    matches_lbs::<f32>(1.0e-5);
    matches_lbs::<Q16>(4.0e-3);
}

#[test]
fn candy_wrapper_keeps_its_volume_under_scale() {
    // Two joints twisted ±90° about X under a 0.01 armature scale: a vertex bound half to
    // each stays at the radius (0.01), where LBS collapses it onto the axis.
    let s = Vec3::splat(0.01f32);
    let a = Mat4::from_trs(Vec3::ZERO, Quat::from_axis_angle(Vec3::X, core::f32::consts::FRAC_PI_2), s);
    let b = Mat4::from_trs(Vec3::ZERO, Quat::from_axis_angle(Vec3::X, -core::f32::consts::FRAC_PI_2), s);
    let (mut dq, mut sc) = ([DualQuat::IDENTITY; 2], [SymMat3::IDENTITY; 2]);
    SkinDualQuatJob::new(&[a, b], &[Mat4::IDENTITY; 2], &mut dq).with_scales(&mut sc).run().unwrap();
    let pos = [Vec3::Y, Vec3::Y];
    let (p, _, _) = skin(Palette::ScaledDualQuats { dual_quats: &dq, scales: &sc }, &[0, 1, 0, 1], &[0.5; 4], &pos);
    assert!((p[0].length() - 0.01).abs() < 1.0e-7, "{:?}", p[0]);
    let (l, _, _) = skin(Palette::Matrices(&[a, b]), &[0, 1, 0, 1], &[0.5; 4], &pos);
    assert!(l[0].length() < 1.0e-8);
}

#[test]
fn scales_must_match_the_dual_quaternions() {
    let dq = [DualQuat::<f32>::IDENTITY; 2];
    let sc = [SymMat3::uniform(2.0)];
    let mut op = [Vec3::ZERO];
    let palette = Palette::ScaledDualQuats { dual_quats: &dq, scales: &sc };
    let mut job = SkinningJob::new(palette, 1, &[0], &[1.0], &[Vec3::X], &mut op);
    assert_eq!(job.run(), Err(JobError::LengthMismatch));
    assert_eq!(op[0], Vec3::ZERO);
    let mut short = [SymMat3::<f32>::IDENTITY; 1];
    let model = [Mat4::IDENTITY; 2];
    let mut out = [DualQuat::IDENTITY; 2];
    let mut job = SkinDualQuatJob::new(&model, &model, &mut out).with_scales(&mut short);
    assert_eq!(job.run(), Err(JobError::OutputTooSmall));
}
