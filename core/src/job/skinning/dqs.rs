// Dual-quaternion skinning ([`Palette::DualQuats`](super::Palette)): each vertex's influences
// blended with aligned signs, normalized, and turned into the rigid matrix they represent,
// which moves the vertex (cheaper than applying the dual quaternion twice).

use core::ops::{Add, Mul, Sub};

use super::blended::{affine_linear, affine_point, Blended, V};
use super::vertex::{directions, map_vertex};
use super::SkinningJob;
use crate::math::{DualQuat, Vec3, Vec4};
use crate::platform::dispatch::{call, Here};
use crate::platform::HOST_KERNELS;
use crate::real::{Lanes, Real};

/// A vertex's blended dual quaternion before normalization: its real and dual parts (x, y, z,
/// w).
pub(crate) type Sums<R> = ([R; 4], [R; 4]);

/// A column-major 4×4 matrix as arrays.
type Columns<R> = [[R; 4]; 4];

/// Dual-quaternion skinning: blend, normalize, then transform through the equivalent
/// rigid matrix.
///
/// In floating point on hosts, four vertices at a time share the normalization and the
/// matrix's construction, one vertex per lane: the same operations on each vertex as one at
/// a time, so the same bits, but the four inverse square roots (a seed and three dependent
/// Newton steps) run side by side instead of ending each vertex's dependency chain.
#[inline(always)]
pub(crate) fn dqs<R: Real>(job: &mut SkinningJob<'_, R>, palette: &[DualQuat<R>]) {
    call::<_, V3>(Dqs { job, palette });
}

/// [`dqs`](dqs), in its caller's function.
#[cfg_attr(sinew_host_kernels, inline(always))]
fn dqs_here<R: Real>(job: &mut SkinningJob<'_, R>, palette: &[DualQuat<R>]) {
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
    for (g, (i, w)) in idx4.chunks_exact(4 * k).zip(w4.chunks_exact(4 * k)).enumerate() {
        let mut sums = [([R::ZERO; 4], [R::ZERO; 4]); 4];
        for (s, (i, w)) in sums.iter_mut().zip(i.chunks_exact(k).zip(w.chunks_exact(k))) {
            *s = blend_sums(palette, i, w);
        }
        let m = Rigid4::new(sums);
        let at = g * 4;
        map4(Some(positions), Some(&mut *out_p), at, vector, |_, v| v, |p| m.point(p));
        map4(normals, out_n.as_deref_mut(), at, vector, |_, v| v, |d| m.direction(d));
        map4(tangents, out_t.as_deref_mut(), at, tangent, |t, v| v.extend(t.w), |d| m.direction(d));
    }
    for (v, (i, w)) in idx1.chunks_exact(k).zip(w1.chunks_exact(k)).enumerate() {
        let v = grouped + v;
        let m = Blended::columns(&blend_dual_quats(palette, i, w));
        map_vertex(Some(positions), Some(&mut *out_p), v, |p| m.point(p));
        directions(v, (normals, out_n.as_deref_mut()), (tangents, out_t.as_deref_mut()), |d| m.direction(d));
    }
}

/// [`dqs`]'s loop as a kernel called out of line.
struct Dqs<'j, 'a, 'p, R: Real> {
    job: &'j mut SkinningJob<'a, R>,
    palette: &'p [DualQuat<R>],
}

impl<R: Real> Here for Dqs<'_, '_, '_, R> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        dqs_here(self.job, self.palette);
    }
}

/// The normalized, sign-aligned weighted sum of the influences' dual quaternions, as the
/// rigid matrix it represents (identity when the weights cancel).
#[inline(always)]
pub(crate) fn blend_dual_quats<R: Real>(palette: &[DualQuat<R>], idx: &[u16], w: &[R]) -> Columns<R> {
    matrix(blend_sums(palette, idx, w))
}

/// The sign-aligned weighted sum of the influences' dual quaternions, not normalized.
#[inline(always)]
pub(crate) fn blend_sums<R: Real>(palette: &[DualQuat<R>], idx: &[u16], w: &[R]) -> Sums<R> {
    blend_sums_with(palette, idx, w, |_, _| {})
}

/// [`blend_sums`], calling `each(j, w)` for every influence it adds, in order (a weight that is
/// not zero, an index in the palette): a second blend over the same influences shares the loop.
#[inline(always)]
pub(crate) fn blend_sums_with<R: Real>(
    palette: &[DualQuat<R>],
    idx: &[u16],
    w: &[R],
    mut each: impl FnMut(usize, R),
) -> Sums<R> {
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
        each(usize::from(j), wj);
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
    let ([c0, c1, c2], [tx, ty, tz]) = rigid(r, d, inv, (R::ONE, R::TWO));
    let col = |[a, b, c]: [R; 3]| [a, b, c, R::ZERO];
    [col(c0), col(c1), col(c2), [tx, ty, tz, R::ONE]]
}

/// The rotation columns and the translation of the unit dual quaternion `(r, d) · inv`, with
/// `one` and `two` the constants: one set of operations for a scalar and for lanes (one vertex
/// per lane), so the two give the same bits.
#[inline(always)]
fn rigid<T: Copy + Add<Output = T> + Sub<Output = T> + Mul<Output = T>>(
    r: [T; 4],
    d: [T; 4],
    inv: T,
    (one, two): (T, T),
) -> ([[T; 3]; 3], [T; 3]) {
    // Element by element rather than `map`, which the compiler does not always inline.
    let [x, y, z, qw] = [r[0] * inv, r[1] * inv, r[2] * inv, r[3] * inv];
    let [dx, dy, dz, dw] = [d[0] * inv, d[1] * inv, d[2] * inv, d[3] * inv];
    // Translation 2·(w·d⃗ − d_w·r⃗ + r⃗ × d⃗).
    let tx = two * (qw * dx - dw * x + (y * dz - z * dy));
    let ty = two * (qw * dy - dw * y + (z * dx - x * dz));
    let tz = two * (qw * dz - dw * z + (x * dy - y * dx));
    let (x2, y2, z2) = (x + x, y + y, z + z);
    let (xx, yy, zz) = (x * x2, y * y2, z * z2);
    let (xy, xz, yz) = (x * y2, x * z2, y * z2);
    let (wx, wy, wz) = (qw * x2, qw * y2, qw * z2);
    (
        [[one - (yy + zz), xy + wz, xz - wy], [xy - wz, one - (xx + zz), yz + wx], [xz + wy, yz - wx, one - (xx + yy)]],
        [tx, ty, tz],
    )
}

/// A position or normal as the vector [`map4`] maps.
#[inline(always)]
pub(crate) fn vector<R: Real>(v: &Vec3<R>) -> Vec3<R> {
    *v
}

/// A tangent's xyz, the vector [`map4`] maps (its w is kept).
#[inline(always)]
pub(crate) fn tangent<R: Real>(t: &Vec4<R>) -> Vec3<R> {
    t.truncate()
}

/// Four vertices' values of one component, one vertex per lane.
#[inline(always)]
pub(crate) fn lanes<T, R: Real>(v: &[T], f: impl Fn(&T) -> R) -> V<R> {
    let l = |i: usize| v.get(i).map_or(R::ZERO, &f);
    V::<R>::load(&[l(0), l(1), l(2), l(3)])
}

/// `out[at + l] = put(src[at + l], f(get(src[at + l])))` for the four vertices from `at`, with
/// the vectors `get` reads from the four in lanes (`x`, `y`, `z`), where the job has the stream.
#[inline(always)]
pub(crate) fn map4<R: Real, T: Copy>(
    src: Option<&[T]>,
    out: Option<&mut [T]>,
    at: usize,
    get: impl Fn(&T) -> Vec3<R>,
    put: impl Fn(&T, Vec3<R>) -> T,
    f: impl FnOnce([V<R>; 3]) -> [V<R>; 3],
) {
    let (Some(src), Some(out)) = (src.and_then(|s| s.get(at..at + 4)), out.and_then(|o| o.get_mut(at..at + 4))) else {
        return;
    };
    let [x, y, z] = f([lanes(src, |v| get(v).x), lanes(src, |v| get(v).y), lanes(src, |v| get(v).z)]);
    let (x, y, z) = (x.to_array(), y.to_array(), z.to_array());
    for (((o, s), x), (y, z)) in out.iter_mut().zip(src).zip(x).zip(y.into_iter().zip(z)) {
        *o = put(s, Vec3::new(x, y, z));
    }
}

/// The rigid matrices of four vertices, one per lane: `cols[c][r]` is row `r` of column `c`
/// (rows 0 to 2), `t` the translation.
pub(crate) struct Rigid4<R: Real> {
    cols: [[V<R>; 3]; 3],
    t: [V<R>; 3],
}

impl<R: Real> Rigid4<R> {
    /// [`matrix`] of four vertices at once, in floating point: the same operations in the same
    /// order on each lane (the lanes' inverse square root is the scalar one's seed and Newton
    /// steps), so the same bits; a lane whose squared length is zero or not finite takes the
    /// identity.
    #[inline(always)]
    pub(crate) fn new(sums: [Sums<R>; 4]) -> Self {
        let real = |c: usize| lanes(&sums, |s| s.0.get(c).copied().unwrap_or(R::ZERO));
        let dual = |c: usize| lanes(&sums, |s| s.1.get(c).copied().unwrap_or(R::ZERO));
        Self::from_lanes([real(0), real(1), real(2), real(3)], [dual(0), dual(1), dual(2), dual(3)])
    }

    /// [`new`](Self::new) from the sums' components in lanes: `r[c]` and `d[c]` hold
    /// component `c` (x, y, z, w) of the four vertices' real and dual sums.
    #[inline(always)]
    pub(crate) fn from_lanes(r: [V<R>; 4], d: [V<R>; 4]) -> Self {
        let l2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3];
        let s = V::<R>::splat;
        let (one, zero) = (s(R::ONE), s(R::ZERO));
        let (cols, t) = rigid(r, d, l2.inv_sqrt_positive(), (one, s(R::TWO)));
        let valid = |e: V<R>, identity: V<R>| l2.select_positive_finite(e, identity);
        let diagonal = |c: usize, r: usize| if c == r { one } else { zero };
        let mut cols = cols;
        for (c, col) in cols.iter_mut().enumerate() {
            for (r, e) in col.iter_mut().enumerate() {
                *e = valid(*e, diagonal(c, r));
            }
        }
        Rigid4 { cols, t: [valid(t[0], zero), valid(t[1], zero), valid(t[2], zero)] }
    }

    /// [`Blended::point`] of each lane's matrix and point: the same operations.
    #[inline(always)]
    pub(crate) fn point(&self, v: [V<R>; 3]) -> [V<R>; 3] {
        let [t0, t1, t2] = self.t;
        [
            affine_point::<R>(self.row(0), t0, v),
            affine_point::<R>(self.row(1), t1, v),
            affine_point::<R>(self.row(2), t2, v),
        ]
    }

    /// [`Blended::direction`] of each lane's matrix and vector: the same operations.
    #[inline(always)]
    pub(crate) fn direction(&self, v: [V<R>; 3]) -> [V<R>; 3] {
        [affine_linear::<R>(self.row(0), v), affine_linear::<R>(self.row(1), v), affine_linear::<R>(self.row(2), v)]
    }

    /// Row `r` of the four matrices: its entries in columns 0 to 2.
    #[inline(always)]
    fn row(&self, r: usize) -> [V<R>; 3] {
        let [c0, c1, c2] = &self.cols;
        [c0[r % 3], c1[r % 3], c2[r % 3]]
    }
}
