// Dual-quaternion skinning with scale ([`Palette::ScaledDualQuats`](super::Palette)): the
// vertex is scaled and sheared by its blended `P` first, then moved by its blended dual
// quaternion.

use core::ops::{Add, Mul, Sub};

use super::blended::{Blended, V};
use super::dqs::{blend_dual_quats, blend_sums_with, dqs, map4, tangent, vector, Rigid4};
use super::vertex::{directions, map_vertex, unit};
use super::SkinningJob;
use crate::math::{DualQuat, SymMat3, Vec3};
use crate::platform::dispatch::{call, Here};
use crate::platform::HOST_KERNELS;
use crate::real::{Lanes, Real};

/// Today's rigid loop when every scale is the identity, the scaled loop otherwise.
#[inline(always)]
pub(crate) fn dqs_maybe_scaled<R: Real>(job: &mut SkinningJob<'_, R>, palette: &[DualQuat<R>], scales: &[SymMat3<R>]) {
    if scales.iter().all(SymMat3::is_identity) {
        dqs(job, palette);
    } else {
        call::<_, V3>(Scaled { job, palette, scales });
    }
}

/// The scaled loop; on hosts, without the per-influence identity test when no scale is
/// the identity (as under an armature's scale). Out of line on hosts ([`Scaled`]), so that
/// the choice does not grow the job's dispatch, which the other loops share.
#[cfg_attr(sinew_host_kernels, inline(always))]
fn dqs_scaled<R: Real>(job: &mut SkinningJob<'_, R>, palette: &[DualQuat<R>], scales: &[SymMat3<R>]) {
    if HOST_KERNELS && !scales.iter().any(SymMat3::is_identity) {
        dqs_scaled_with::<R, true>(job, palette, scales);
    } else {
        dqs_scaled_with::<R, false>(job, palette, scales);
    }
}

/// Per vertex: `v' = DQ_b(P_b · v)`, `n' = R_b · P_b⁻ᵀ · n` and `t' = R_b · P_b · t`
/// renormalized; vertices whose weighted influences are all rigid skip `P_b`.
///
/// In floating point on hosts, four vertices at a time, one per lane, as the rigid loop
/// does: each vertex's dual quaternion and `P_b` (its entries four to a lane vector) are
/// blended one at a time and transposed into lanes, then the normalizations, the matrices,
/// `P_b`'s products and adjugate and the directions' unit lengths run in lanes, with the
/// same operations on each lane as one vertex at a time, so the same bits. A group's rigid
/// vertices take their lane's unscaled input and output by a lane select, as the
/// one-at-a-time loop skips `P_b` for them; a group without a scaled vertex is the rigid
/// loop's. `NO_IDENTITY`: no scale of the palette is the identity, so every vertex with a
/// weighted influence is scaled, without testing each influence.
#[cfg_attr(sinew_host_kernels, inline(always))]
fn dqs_scaled_with<R: Real, const NO_IDENTITY: bool>(
    job: &mut SkinningJob<'_, R>,
    palette: &[DualQuat<R>],
    scales: &[SymMat3<R>],
) {
    let k = job.influences;
    let n = job.positions.len();
    let idx = &job.joint_indices[..n * k];
    let wts = &job.joint_weights[..n * k];
    let (positions, normals, tangents) = (job.positions, job.normals, job.tangents);
    let out_p = &mut *job.out_positions;
    let mut out_n = job.out_normals.as_deref_mut();
    let mut out_t = job.out_tangents.as_deref_mut();
    let grouped = if HOST_KERNELS && !R::FIXED_POINT { n / 4 * 4 } else { 0 };
    let (idx4, idx1) = idx.split_at(grouped * k);
    let (w4, w1) = wts.split_at(grouped * k);
    // `validate` checked that the palette has one scale per dual quaternion: both cut to
    // one length, so that an index found in the palette needs no second bounds check.
    let joints = palette.len().min(scales.len());
    let group_palette = palette.get(..joints).unwrap_or(palette);
    let group_scales = scales.get(..joints).unwrap_or(scales);
    for (g, (i, w)) in idx4.chunks_exact(4 * k).zip(w4.chunks_exact(4 * k)).enumerate() {
        // Each vertex's sums and `P_b` (`[xx, yy, zz, xy]`, `[xz, yz, 0, 0]`) as lanes, then
        // transposed: lane `l` of each component for vertex `l`.
        let zero = V::<R>::splat(R::ZERO);
        let (mut r, mut d, mut lo, mut hi, mut scaled) = ([zero; 4], [zero; 4], [zero; 4], [zero; 4], 0);
        for (l, (i, w)) in i.chunks_exact(k).zip(w.chunks_exact(k)).enumerate().take(4) {
            // `blend_scales` in the loop of `blend_sums`, each entry's sum in a lane of `p`
            // (`[xx, yy, zz, xy]`, `[xz, yz, 0, 0]`): the same products and additions in the
            // same order.
            let (mut p, mut any) = ([zero; 2], false);
            let (rs, ds) = blend_sums_with(group_palette, i, w, |j, wj| {
                if let Some(s) = group_scales.get(j) {
                    let [lo, hi] = entries(s);
                    any = any || NO_IDENTITY || !is_identity::<R>(lo, hi);
                    p = [p[0] + lo * V::<R>::splat(wj), p[1] + hi * V::<R>::splat(wj)];
                }
            });
            let [p_lo, p_hi] = if any { p } else { entries::<R>(&SymMat3::IDENTITY) };
            for (a, v) in [(&mut r, V::<R>::load(&rs)), (&mut d, V::<R>::load(&ds)), (&mut lo, p_lo), (&mut hi, p_hi)] {
                if let Some(e) = a.get_mut(l) {
                    *e = v;
                }
            }
            scaled |= u32::from(any) << l;
        }
        let m = Rigid4::<R>::from_lanes(V::<R>::transpose(r), V::<R>::transpose(d));
        let p4 = Scale4::<R>::new(V::<R>::transpose(lo), V::<R>::transpose(hi), scaled);
        let at = g * 4;
        if scaled == 0 {
            // The rigid loop's group.
            map4(Some(positions), Some(&mut *out_p), at, vector, |_, v| v, |p| m.point(p));
            map4(normals, out_n.as_deref_mut(), at, vector, |_, v| v, |d| m.direction(d));
            map4(tangents, out_t.as_deref_mut(), at, tangent, |t, v| v.extend(t.w), |d| m.direction(d));
            continue;
        }
        map4(Some(positions), Some(&mut *out_p), at, vector, |_, v| v, |p| m.point(p4.scaled(sym_mul(p4.p, p), p)));
        if normals.is_none() && tangents.is_none() {
            continue;
        }
        let q = p4.unit_scale();
        let scaled_direction = |inner: [V<R>; 3], d: [V<R>; 3]| {
            let out = m.direction(p4.scaled(inner, d));
            p4.scaled(unit4::<R>(out), out)
        };
        map4(
            normals,
            out_n.as_deref_mut(),
            at,
            vector,
            |_, v| v,
            |d| {
                let ([x, y, z], det) = adjugate_mul(q, d);
                let n = [x.negate_where_negative(det), y.negate_where_negative(det), z.negate_where_negative(det)];
                scaled_direction(n, d)
            },
        );
        map4(tangents, out_t.as_deref_mut(), at, tangent, |t, v| v.extend(t.w), |d| scaled_direction(sym_mul(q, d), d));
    }
    for (v, (idx, w)) in idx1.chunks_exact(k).zip(w1.chunks_exact(k)).enumerate() {
        let v = grouped + v;
        let m = Blended::columns(&blend_dual_quats(palette, idx, w));
        let (Some(p), Some(op)) = (positions.get(v), out_p.get_mut(v)) else { continue };
        let Some(pb) = blend_scales(scales, idx, w) else {
            // The rigid loop's operations, for the same bits.
            *op = m.point(*p);
            directions(v, (normals, out_n.as_deref_mut()), (tangents, out_t.as_deref_mut()), |d| m.direction(d));
            continue;
        };
        *op = m.point(mul_vec3(&pb, *p));
        if normals.is_none() && tangents.is_none() {
            continue;
        }
        // Directions only need P_b up to a positive factor: divided by its largest
        // diagonal entry, its entries stay near 1 (Q16 keeps its precision at 0.01 or 100).
        let q = unit_scale(&pb);
        map_vertex(normals, out_n.as_deref_mut(), v, |s| unit(m.direction(inverse_transpose_direction(&q, s))));
        map_vertex(tangents, out_t.as_deref_mut(), v, |s| unit(m.direction(mul_vec3(&q, s.truncate()))).extend(s.w));
    }
}

/// [`dqs_maybe_scaled`]'s scaled loops as a kernel called out of line.
struct Scaled<'j, 'a, 'p, R: Real> {
    job: &'j mut SkinningJob<'a, R>,
    palette: &'p [DualQuat<R>],
    scales: &'p [SymMat3<R>],
}

impl<R: Real> Here for Scaled<'_, '_, '_, R> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        dqs_scaled(self.job, self.palette, self.scales);
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
        any = any || !s.is_identity();
        sum = sum + *s * wj;
    }
    any.then_some(sum)
}

/// `P`'s entries as lanes: `[xx, yy, zz, xy]` and `[xz, yz, 0, 0]`.
#[inline(always)]
fn entries<R: Real>(p: &SymMat3<R>) -> [V<R>; 2] {
    [V::<R>::load(&[p.xx, p.yy, p.zz, p.xy]), V::<R>::load(&[p.xz, p.yz, R::ZERO, R::ZERO])]
}

/// [`SymMat3::is_identity`] of [`entries`]' lanes: every entry equal to the identity's (so
/// −0 counts as 0, and a NaN entry is not the identity's).
#[inline(always)]
fn is_identity<R: Real>(lo: V<R>, hi: V<R>) -> bool {
    let [i_lo, i_hi] = entries::<R>(&SymMat3::IDENTITY);
    let equal = |a: V<R>, b: V<R>| a.mask_ge(b) & b.mask_ge(a);
    equal(lo, i_lo) == 0b1111 && equal(hi, i_hi) & 0b11 == 0b11
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

/// `P · v` through [`sym_mul`], the operations the lanes run.
#[inline(always)]
fn mul_vec3<R: Real>(p: &SymMat3<R>, v: Vec3<R>) -> Vec3<R> {
    let [x, y, z] = sym_mul(p.to_array(), v.to_array());
    Vec3::new(x, y, z)
}

/// The direction of `P⁻ᵀ · n` (`P` symmetric, so `P⁻¹ · n`), unnormalized: the adjugate of `P`
/// (`det P · P⁻¹`) times `n`, negated when `det P < 0`. Zero for a zero `P`.
#[inline(always)]
fn inverse_transpose_direction<R: Real>(p: &SymMat3<R>, n: Vec3<R>) -> Vec3<R> {
    let ([x, y, z], det) = adjugate_mul(p.to_array(), n.to_array());
    let d = Vec3::new(x, y, z);
    if det < R::ZERO {
        -d
    } else {
        d
    }
}

/// `P · v` for `P` as `[xx, yy, zz, xy, xz, yz]`: [`SymMat3::mul_vec3`]'s operations, for a
/// scalar and for lanes (one vertex per lane), so the two give the same bits.
#[inline(always)]
fn sym_mul<T: Copy + Add<Output = T> + Mul<Output = T>>([xx, yy, zz, xy, xz, yz]: [T; 6], [x, y, z]: [T; 3]) -> [T; 3] {
    [xx * x + xy * y + xz * z, xy * x + yy * y + yz * z, xz * x + yz * y + zz * z]
}

/// `adj(P) · n` and `det P` for `P` as `[xx, yy, zz, xy, xz, yz]`: [`SymMat3::adjugate`] and
/// [`SymMat3::determinant`]'s operations, for a scalar and for lanes.
#[inline(always)]
fn adjugate_mul<T: Copy + Add<Output = T> + Sub<Output = T> + Mul<Output = T>>(p: [T; 6], n: [T; 3]) -> ([T; 3], T) {
    let [a, b, c, d, e, f] = p;
    let adj = [b * c - f * f, a * c - e * e, a * b - d * d, e * f - d * c, d * f - b * e, d * e - a * f];
    let [axx, _, _, axy, axz, _] = adj;
    (sym_mul(adj, n), a * axx + d * axy + e * axz)
}

/// Four vertices' blended scale factors `P_b` in lanes, one vertex per lane.
struct Scale4<R: Real> {
    /// `[xx, yy, zz, xy, xz, yz]`, the identity in a rigid vertex's lane.
    p: [V<R>; 6],
    /// 1 in a scaled vertex's lane, 0 in a rigid one's.
    flag: V<R>,
    /// Some lane is a rigid vertex.
    mixed: bool,
}

impl<R: Real> Scale4<R> {
    /// From the lanes of four vertices' entries `xx, yy, zz, xy` and `xz, yz` (the
    /// identity's for a rigid vertex), bit `l` of `scaled` set where vertex `l` is scaled.
    #[inline(always)]
    fn new([xx, yy, zz, xy]: [V<R>; 4], [xz, yz, _, _]: [V<R>; 4], scaled: u32) -> Self {
        let mixed = scaled != 0b1111;
        let f = |l: u32| if scaled & (1 << l) != 0 { R::ONE } else { R::ZERO };
        let flag = if mixed { V::<R>::load(&[f(0), f(1), f(2), f(3)]) } else { V::<R>::splat(R::ONE) };
        Scale4 { p: [xx, yy, zz, xy, xz, yz], flag, mixed }
    }

    /// `scaled` in the scaled vertices' lanes, `rigid` in the others (`scaled` when every lane
    /// is a scaled vertex, without a select).
    #[inline(always)]
    fn scaled(&self, scaled: [V<R>; 3], rigid: [V<R>; 3]) -> [V<R>; 3] {
        if !self.mixed {
            return scaled;
        }
        let [a, b, c] = scaled;
        let [x, y, z] = rigid;
        let s = |a: V<R>, x: V<R>| self.flag.select_positive_finite(a, x);
        [s(a, x), s(b, y), s(c, z)]
    }

    /// [`unit_scale`] of each lane: its largest diagonal magnitude `s`, and the entries times
    /// `1 / s` where `s` is positive and finite, zero elsewhere (a select only when some lane's
    /// `s` is not).
    #[inline(always)]
    fn unit_scale(&self) -> [V<R>; 6] {
        let [xx, yy, zz, xy, xz, yz] = self.p;
        let s = xx.abs().max(yy.abs()).max(zz.abs());
        let r = s.recip();
        let zero = V::<R>::splat(R::ZERO);
        let valid = zero.mask_lt(s) & V::<R>::splat(R::MAX).mask_ge(s);
        let e = |e: V<R>| if valid == 0b1111 { e * r } else { s.select_positive_finite(e * r, zero) };
        [e(xx), e(yy), e(zz), e(xy), e(xz), e(yz)]
    }
}

/// [`unit`] of four floating-point vectors in lanes: the squared length summed as
/// [`Vec3::length_squared`] sums it, the lanes' inverse square root (the scalar one's seed and
/// Newton steps) and three products, so the same bits.
#[inline(always)]
fn unit4<R: Real>([x, y, z]: [V<R>; 3]) -> [V<R>; 3] {
    let s = (x * x + y * y + z * z).inv_sqrt_positive();
    [x * s, y * s, z * s]
}
