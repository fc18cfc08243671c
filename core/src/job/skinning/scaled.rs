//! Dual-quaternion skinning with scale ([`Palette::ScaledDualQuats`](super::Palette)): the
//! vertex is scaled and sheared by its blended `P` first, then moved by its blended dual
//! quaternion.

use super::blended::Blended;
use super::dqs::blend_dual_quats;
use super::vertex::{directions, map_vertex, unit};
use super::SkinningJob;
use crate::math::{DualQuat, SymMat3, Vec3};
use crate::real::Real;

impl<R: Real> SkinningJob<'_, R> {
    /// Today's rigid loop when every scale is the identity, the scaled loop otherwise.
    pub(super) fn dqs_maybe_scaled(&mut self, palette: &[DualQuat<R>], scales: &[SymMat3<R>]) {
        if scales.iter().all(SymMat3::is_identity) {
            self.dqs(palette);
        } else {
            self.dqs_scaled(palette, scales);
        }
    }

    /// Per vertex: `v' = DQ_b(P_b · v)`, `n' = R_b · P_b⁻ᵀ · n` and `t' = R_b · P_b · t`
    /// renormalized; vertices whose weighted influences are all rigid skip `P_b`.
    fn dqs_scaled(&mut self, palette: &[DualQuat<R>], scales: &[SymMat3<R>]) {
        let k = self.influences;
        let n = self.positions.len();
        let idx = &self.joint_indices[..n * k];
        let wts = &self.joint_weights[..n * k];
        let normals = self.normals;
        let tangents = self.tangents;
        let mut out_n = self.out_normals.as_deref_mut();
        let mut out_t = self.out_tangents.as_deref_mut();
        for (v, ((idx, w), (p, op))) in idx
            .chunks_exact(k)
            .zip(wts.chunks_exact(k))
            .zip(self.positions.iter().zip(self.out_positions.iter_mut()))
            .enumerate()
        {
            let m = Blended::columns(&blend_dual_quats(palette, idx, w));
            let Some(pb) = blend_scales(scales, idx, w) else {
                // The rigid loop's operations, for the same bits.
                *op = m.point(*p);
                directions(v, (normals, out_n.as_deref_mut()), (tangents, out_t.as_deref_mut()), |d| m.direction(d));
                continue;
            };
            *op = m.point(pb.mul_vec3(*p));
            if normals.is_none() && tangents.is_none() {
                continue;
            }
            // Directions only need P_b up to a positive factor: divided by its largest
            // diagonal entry, its entries stay near 1 (Q16 keeps its precision at 0.01 or 100).
            let q = unit_scale(&pb);
            map_vertex(normals, out_n.as_deref_mut(), v, |s| unit(m.direction(inverse_transpose_direction(&q, s))));
            map_vertex(tangents, out_t.as_deref_mut(), v, |s| unit(m.direction(q.mul_vec3(s.truncate()))).extend(s.w));
        }
    }
}

/// `Σ wᵢ·Pᵢ` over the weighted influences, or `None` when all of them are the identity.
#[inline(always)]
fn blend_scales<R: Real>(scales: &[SymMat3<R>], idx: &[u16], w: &[R]) -> Option<SymMat3<R>> {
    let mut any = false;
    let mut sum = SymMat3::ZERO;
    for (&j, &wj) in idx.iter().zip(w.iter()) {
        if wj == R::ZERO {
            continue;
        }
        let Some(s) = scales.get(usize::from(j)) else { continue };
        any |= !s.is_identity();
        sum = sum + *s * wj;
    }
    any.then_some(sum)
}

/// `P / max|Pᵢᵢ|` (zero for a zero or non-finite `P`): the same directions, entries near 1.
#[inline(always)]
fn unit_scale<R: Real>(p: &SymMat3<R>) -> SymMat3<R> {
    let s = p.max_diagonal();
    if s <= R::ZERO || !s.is_finite() {
        return SymMat3::ZERO;
    }
    *p * s.recip()
}

/// The direction of `P⁻ᵀ · n` (`P` symmetric, so `P⁻¹ · n`), unnormalized: the adjugate of `P`
/// (`det P · P⁻¹`), negated when `det P < 0`. Zero for a zero `P`.
#[inline(always)]
fn inverse_transpose_direction<R: Real>(p: &SymMat3<R>, n: Vec3<R>) -> Vec3<R> {
    let adj = p.adjugate();
    let det = p.xx * adj.xx + p.xy * adj.xy + p.xz * adj.xz;
    let d = adj.mul_vec3(n);
    if det < R::ZERO {
        -d
    } else {
        d
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use crate::job::{JobError, Palette, SkinDualQuatJob, SkinMatrixJob, SkinningJob};
    use crate::math::{DualQuat, Mat4, Quat, SymMat3, Vec3, Vec4};
    use crate::real::{Real, Q16};

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
                assert!(
                    (dt[v].truncate().length().to_f32() - 1.0).abs() < tol * 4.0,
                    "tangent {v} {:?} {scale:?}",
                    dt[v]
                );
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
}
