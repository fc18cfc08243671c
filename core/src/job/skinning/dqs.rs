//! Dual-quaternion skinning ([`Palette::DualQuats`](super::Palette)): each vertex's influences
//! blended with aligned signs, normalized, and turned into the rigid matrix they represent,
//! which moves the vertex (cheaper than applying the dual quaternion twice).

use super::{directions, map_vertex, Blended, SkinningJob, V};
use crate::math::DualQuat;
use crate::platform::HOST_KERNELS;
use crate::real::{Lanes, Real};

/// A vertex's blended dual quaternion before normalization: its real and dual parts (x, y, z,
/// w).
pub(super) type Sums<R> = ([R; 4], [R; 4]);

/// A column-major 4×4 matrix as arrays.
type Columns<R> = [[R; 4]; 4];

impl<R: Real> SkinningJob<'_, R> {
    /// Dual-quaternion skinning: blend, normalize, then transform through the equivalent
    /// rigid matrix.
    ///
    /// In floating point on hosts, four vertices at a time share the normalization and the
    /// matrix's construction, one vertex per lane: the same operations on each vertex as one at
    /// a time, so the same bits, but the four inverse square roots (a seed and three dependent
    /// Newton steps) run side by side instead of ending each vertex's dependency chain.
    pub(super) fn dqs(&mut self, palette: &[DualQuat<R>]) {
        let k = self.influences;
        let n = self.positions.len();
        let idx = &self.joint_indices[..n * k];
        let wts = &self.joint_weights[..n * k];
        let (positions, normals, tangents) = (self.positions, self.normals, self.tangents);
        let out_p = &mut *self.out_positions;
        let mut out_n = self.out_normals.as_deref_mut();
        let mut out_t = self.out_tangents.as_deref_mut();
        let mut place = |v: usize, m: &Columns<R>| {
            let m = Blended::columns(m);
            map_vertex(Some(positions), Some(&mut *out_p), v, |p| m.point(p));
            directions(v, (normals, out_n.as_deref_mut()), (tangents, out_t.as_deref_mut()), |d| m.direction(d));
        };
        let grouped = if HOST_KERNELS && !R::FIXED_POINT { n / 4 * 4 } else { 0 };
        let (idx4, idx1) = idx.split_at(grouped * k);
        let (w4, w1) = wts.split_at(grouped * k);
        for (g, (i, w)) in idx4.chunks_exact(4 * k).zip(w4.chunks_exact(4 * k)).enumerate() {
            let mut vertices = i.chunks_exact(k).zip(w.chunks_exact(k));
            let sums = core::array::from_fn(|_| {
                vertices.next().map_or(([R::ZERO; 4], [R::ZERO; 4]), |(i, w)| blend_sums(palette, i, w))
            });
            for (l, m) in matrices4(sums).iter().enumerate() {
                place(g * 4 + l, m);
            }
        }
        for (v, (i, w)) in idx1.chunks_exact(k).zip(w1.chunks_exact(k)).enumerate() {
            place(grouped + v, &blend_dual_quats(palette, i, w));
        }
    }
}

/// The normalized, sign-aligned weighted sum of the influences' dual quaternions, as the
/// rigid matrix it represents (identity when the weights cancel).
#[inline(always)]
pub(super) fn blend_dual_quats<R: Real>(palette: &[DualQuat<R>], idx: &[u16], w: &[R]) -> Columns<R> {
    matrix(blend_sums(palette, idx, w))
}

/// The sign-aligned weighted sum of the influences' dual quaternions, not normalized.
#[inline(always)]
fn blend_sums<R: Real>(palette: &[DualQuat<R>], idx: &[u16], w: &[R]) -> Sums<R> {
    let mut r = [R::ZERO; 4];
    let mut d = [R::ZERO; 4];
    // Signs align with the first influence that has a weight: a zero-weight entry must not
    // change the result.
    let first = idx
        .iter()
        .zip(w.iter())
        .find(|&(_, &wj)| wj != R::ZERO)
        .and_then(|(&j, _)| palette.get(j as usize))
        .map(|q| q.real.to_array())
        .unwrap_or([R::ZERO; 4]);
    for (&j, &wj) in idx.iter().zip(w.iter()) {
        if wj == R::ZERO {
            continue;
        }
        let Some(q) = palette.get(j as usize) else { continue };
        let (qr, qd) = (q.real.to_array(), q.dual.to_array());
        let dot = first[0] * qr[0] + first[1] * qr[1] + first[2] * qr[2] + first[3] * qr[3];
        let s = if dot < R::ZERO { -wj } else { wj };
        for c in 0..4 {
            r[c] += qr[c] * s;
            d[c] += qd[c] * s;
        }
    }
    (r, d)
}

/// The rigid matrix of the blended dual quaternion `(r, d)` once normalized; the identity when
/// `r` is zero or not finite.
#[inline(always)]
fn matrix<R: Real>((r, d): Sums<R>) -> Columns<R> {
    let l2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3];
    if l2 <= R::ZERO || !l2.is_finite() {
        let mut m = [[R::ZERO; 4]; 4];
        for c in 0..4 {
            m[c][c] = R::ONE;
        }
        return m;
    }
    let inv = if R::FIXED_POINT { l2.sqrt().recip() } else { l2.inv_sqrt() };
    let (x, y, z, qw) = (r[0] * inv, r[1] * inv, r[2] * inv, r[3] * inv);
    let (dx, dy, dz, dw) = (d[0] * inv, d[1] * inv, d[2] * inv, d[3] * inv);
    // Translation 2·(w·d⃗ − d_w·r⃗ + r⃗ × d⃗).
    let tx = R::TWO * (qw * dx - dw * x + (y * dz - z * dy));
    let ty = R::TWO * (qw * dy - dw * y + (z * dx - x * dz));
    let tz = R::TWO * (qw * dz - dw * z + (x * dy - y * dx));
    let (x2, y2, z2) = (x + x, y + y, z + z);
    let (xx, yy, zz) = (x * x2, y * y2, z * z2);
    let (xy, xz, yz) = (x * y2, x * z2, y * z2);
    let (wx, wy, wz) = (qw * x2, qw * y2, qw * z2);
    [
        [R::ONE - (yy + zz), xy + wz, xz - wy, R::ZERO],
        [xy - wz, R::ONE - (xx + zz), yz + wx, R::ZERO],
        [xz + wy, yz - wx, R::ONE - (xx + yy), R::ZERO],
        [tx, ty, tz, R::ONE],
    ]
}

/// [`matrix`] of four vertices at once, one per lane, in floating point: the same operations
/// in the same order on each (the lanes' inverse square root is the scalar one's seed and
/// Newton steps), so the same bits; a lane whose squared length is zero or not finite takes the
/// identity.
#[inline(always)]
fn matrices4<R: Real>(sums: [Sums<R>; 4]) -> [Columns<R>; 4] {
    let real = |c: usize| V::<R>::load(&sums.map(|s| s.0.get(c).copied().unwrap_or(R::ZERO)));
    let dual = |c: usize| V::<R>::load(&sums.map(|s| s.1.get(c).copied().unwrap_or(R::ZERO)));
    let (r0, r1, r2, r3) = (real(0), real(1), real(2), real(3));
    let l2 = r0 * r0 + r1 * r1 + r2 * r2 + r3 * r3;
    let inv = l2.inv_sqrt_positive();
    let (x, y, z, qw) = (r0 * inv, r1 * inv, r2 * inv, r3 * inv);
    let (dx, dy, dz, dw) = (dual(0) * inv, dual(1) * inv, dual(2) * inv, dual(3) * inv);
    let s = V::<R>::splat;
    let (one, zero, two) = (s(R::ONE), s(R::ZERO), s(R::TWO));
    let tx = two * (qw * dx - dw * x + (y * dz - z * dy));
    let ty = two * (qw * dy - dw * y + (z * dx - x * dz));
    let tz = two * (qw * dz - dw * z + (x * dy - y * dx));
    let (x2, y2, z2) = (x + x, y + y, z + z);
    let (xx, yy, zz) = (x * x2, y * y2, z * z2);
    let (xy, xz, yz) = (x * y2, x * z2, y * z2);
    let (wx, wy, wz) = (qw * x2, qw * y2, qw * z2);
    let cols = [
        [one - (yy + zz), xy + wz, xz - wy, zero],
        [xy - wz, one - (xx + zz), yz + wx, zero],
        [xz + wy, yz - wx, one - (xx + yy), zero],
        [tx, ty, tz, one],
    ];
    let mut lanes = [[[R::ZERO; 4]; 4]; 4];
    for (c, col) in cols.iter().enumerate() {
        for (r, e) in col.iter().enumerate() {
            let identity = if c == r { one } else { zero };
            let e = l2.select_positive_finite(*e, identity).to_array();
            for (m, x) in lanes.iter_mut().zip(e) {
                if let Some(slot) = m.get_mut(c).and_then(|col| col.get_mut(r)) {
                    *slot = x;
                }
            }
        }
    }
    lanes
}
