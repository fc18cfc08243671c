//! Column-major 4×4 matrices.

use core::ops::Mul;

use super::ops;
use super::quat::Quat;
use super::vec::{Vec3, Vec4};
use crate::real::Real;

/// A column-major 4×4 matrix: `cols[c][r]` is row `r` of column `c` (glTF and OpenGL order).
/// Points are columns: `m * p`. Model and skinning matrices are affine (last row 0, 0, 0, 1).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct Mat4<R> {
    /// The four columns.
    pub cols: [[R; 4]; 4],
}

impl<R: Real> Default for Mat4<R> {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl<R: Real> Mat4<R> {
    /// The identity matrix.
    pub const IDENTITY: Self = Mat4 {
        cols: [
            [R::ONE, R::ZERO, R::ZERO, R::ZERO],
            [R::ZERO, R::ONE, R::ZERO, R::ZERO],
            [R::ZERO, R::ZERO, R::ONE, R::ZERO],
            [R::ZERO, R::ZERO, R::ZERO, R::ONE],
        ],
    };
    /// The zero matrix.
    pub const ZERO: Self = Mat4 { cols: [[R::ZERO; 4]; 4] };

    /// From 16 values in column-major order (as glTF stores them).
    #[inline]
    #[must_use]
    pub fn from_cols_array(a: &[R; 16]) -> Self {
        Mat4 {
            cols: [
                [a[0], a[1], a[2], a[3]],
                [a[4], a[5], a[6], a[7]],
                [a[8], a[9], a[10], a[11]],
                [a[12], a[13], a[14], a[15]],
            ],
        }
    }
    /// The 16 values in column-major order.
    #[inline]
    #[must_use]
    pub fn to_cols_array(&self) -> [R; 16] {
        let c = &self.cols;
        [
            c[0][0], c[0][1], c[0][2], c[0][3], c[1][0], c[1][1], c[1][2], c[1][3], c[2][0], c[2][1], c[2][2], c[2][3],
            c[3][0], c[3][1], c[3][2], c[3][3],
        ]
    }
    /// Column `i` (0..4) as a vector.
    #[inline(always)]
    #[must_use]
    pub fn col(&self, i: usize) -> Vec4<R> {
        Vec4::from_array(self.cols[i & 3])
    }
    /// The translation part (column 3, xyz).
    #[inline(always)]
    #[must_use]
    pub fn translation(&self) -> Vec3<R> {
        Vec3::new(self.cols[3][0], self.cols[3][1], self.cols[3][2])
    }
    /// The affine matrix `T · R · S`: scale first, then rotate, then translate.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::f32::consts::FRAC_PI_2;
    /// use sinew::math::{Mat4, Quat, Vec3};
    ///
    /// let turn = Quat::from_axis_angle(Vec3::Z, FRAC_PI_2); // +X to +Y
    /// let m = Mat4::from_trs(Vec3::new(0.0, 0.0, 5.0), turn, Vec3::splat(2.0));
    /// let p = m.transform_point3(Vec3::X); // scaled to 2, turned to +Y, moved 5 along +Z
    /// assert!((p - Vec3::new(0.0, 2.0, 5.0)).length() < 1e-6);
    ///
    /// // The inverse undoes it (how inverse bind matrices are made from a bind pose).
    /// let back = m.inverse().ok_or("singular")?.transform_point3(p);
    /// assert!((back - Vec3::X).length() < 1e-6);
    /// # Ok::<(), &str>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn from_trs(t: Vec3<R>, r: Quat<R>, s: Vec3<R>) -> Self {
        let [c0, c1, c2] = r.to_mat3_cols();
        Mat4 {
            cols: [
                [c0.x * s.x, c0.y * s.x, c0.z * s.x, R::ZERO],
                [c1.x * s.y, c1.y * s.y, c1.z * s.y, R::ZERO],
                [c2.x * s.z, c2.y * s.z, c2.z * s.z, R::ZERO],
                [t.x, t.y, t.z, R::ONE],
            ],
        }
    }
    /// A translation matrix.
    #[inline]
    #[must_use]
    pub fn from_translation(t: Vec3<R>) -> Self {
        let mut m = Self::IDENTITY;
        m.cols[3] = [t.x, t.y, t.z, R::ONE];
        m
    }
    /// The transpose.
    #[inline]
    #[must_use]
    pub fn transpose(&self) -> Self {
        let c = &self.cols;
        let mut o = Self::ZERO;
        for (i, col) in o.cols.iter_mut().enumerate() {
            for (j, v) in col.iter_mut().enumerate() {
                *v = c[j][i];
            }
        }
        o
    }
    /// Transforms a point (w = 1), ignoring the projective row.
    #[inline(always)]
    #[must_use]
    pub fn transform_point3(&self, p: Vec3<R>) -> Vec3<R> {
        let c = &self.cols;
        Vec3::new(
            c[0][0] * p.x + c[1][0] * p.y + c[2][0] * p.z + c[3][0],
            c[0][1] * p.x + c[1][1] * p.y + c[2][1] * p.z + c[3][1],
            c[0][2] * p.x + c[1][2] * p.y + c[2][2] * p.z + c[3][2],
        )
    }
    /// Transforms a direction (w = 0).
    #[inline(always)]
    #[must_use]
    pub fn transform_vector3(&self, v: Vec3<R>) -> Vec3<R> {
        let c = &self.cols;
        Vec3::new(
            c[0][0] * v.x + c[1][0] * v.y + c[2][0] * v.z,
            c[0][1] * v.x + c[1][1] * v.y + c[2][1] * v.z,
            c[0][2] * v.x + c[1][2] * v.y + c[2][2] * v.z,
        )
    }
    /// Full product with a homogeneous vector.
    #[inline(always)]
    #[must_use]
    pub fn mul_vec4(&self, v: Vec4<R>) -> Vec4<R> {
        let c = &self.cols;
        let mut o = [R::ZERO; 4];
        for (r, out) in o.iter_mut().enumerate() {
            *out = c[0][r] * v.x + c[1][r] * v.y + c[2][r] * v.z + c[3][r] * v.w;
        }
        Vec4::from_array(o)
    }
    /// True when every element is finite.
    #[inline]
    #[must_use]
    pub fn is_finite(&self) -> bool {
        // Every element tested (`&`, no branch per element).
        self.cols.iter().flatten().fold(true, |ok, v| ok & v.is_finite())
    }
    /// The determinant.
    #[must_use]
    pub fn determinant(&self) -> R {
        let m = self.to_cols_array();
        let (s, c) = minors(&m);
        s[0] * c[5] - s[1] * c[4] + s[2] * c[3] + s[3] * c[2] - s[4] * c[1] + s[5] * c[0]
    }
    /// The inverse, or `None` when the matrix is singular (determinant 0) or not finite.
    #[must_use]
    pub fn inverse(&self) -> Option<Self> {
        let m = self.to_cols_array();
        let (s, c) = minors(&m);
        let det = s[0] * c[5] - s[1] * c[4] + s[2] * c[3] + s[3] * c[2] - s[4] * c[1] + s[5] * c[0];
        if det == R::ZERO || !det.is_finite() {
            return None;
        }
        let inv = det.recip();
        // m is column-major: m[col * 4 + row]; name a_rc = row r, column c.
        let a = |r: usize, col: usize| m[col * 4 + r];
        let (a00, a01, a02, a03) = (a(0, 0), a(0, 1), a(0, 2), a(0, 3));
        let (a10, a11, a12, a13) = (a(1, 0), a(1, 1), a(1, 2), a(1, 3));
        let (a20, a21, a22, a23) = (a(2, 0), a(2, 1), a(2, 2), a(2, 3));
        let (a30, a31, a32, a33) = (a(3, 0), a(3, 1), a(3, 2), a(3, 3));
        let b = [
            [
                (a11 * c[5] - a12 * c[4] + a13 * c[3]) * inv,
                (-a10 * c[5] + a12 * c[2] - a13 * c[1]) * inv,
                (a10 * c[4] - a11 * c[2] + a13 * c[0]) * inv,
                (-a10 * c[3] + a11 * c[1] - a12 * c[0]) * inv,
            ],
            [
                (-a01 * c[5] + a02 * c[4] - a03 * c[3]) * inv,
                (a00 * c[5] - a02 * c[2] + a03 * c[1]) * inv,
                (-a00 * c[4] + a01 * c[2] - a03 * c[0]) * inv,
                (a00 * c[3] - a01 * c[1] + a02 * c[0]) * inv,
            ],
            [
                (a31 * s[5] - a32 * s[4] + a33 * s[3]) * inv,
                (-a30 * s[5] + a32 * s[2] - a33 * s[1]) * inv,
                (a30 * s[4] - a31 * s[2] + a33 * s[0]) * inv,
                (-a30 * s[3] + a31 * s[1] - a32 * s[0]) * inv,
            ],
            [
                (-a21 * s[5] + a22 * s[4] - a23 * s[3]) * inv,
                (a20 * s[5] - a22 * s[2] + a23 * s[1]) * inv,
                (-a20 * s[4] + a21 * s[2] - a23 * s[0]) * inv,
                (a20 * s[3] - a21 * s[1] + a22 * s[0]) * inv,
            ],
        ];
        // Each b[k] lists column k of the inverse, rows 0..4.
        let o = Mat4 { cols: b };
        if o.is_finite() {
            Some(o)
        } else {
            None
        }
    }
    /// A right-handed view matrix looking from `eye` at `target` with `up` roughly up.
    #[must_use]
    pub fn look_at_rh(eye: Vec3<R>, target: Vec3<R>, up: Vec3<R>) -> Self {
        let f = (target - eye).normalize_or_zero();
        let s = f.cross(up).normalize_or_zero();
        let u = s.cross(f);
        Mat4 {
            cols: [
                [s.x, u.x, -f.x, R::ZERO],
                [s.y, u.y, -f.y, R::ZERO],
                [s.z, u.z, -f.z, R::ZERO],
                [-s.dot(eye), -u.dot(eye), f.dot(eye), R::ONE],
            ],
        }
    }
    /// A right-handed perspective projection with OpenGL clip depth (-1..1):
    /// vertical field of view `fov_y` (radians), aspect `width / height`, near and far planes > 0.
    #[must_use]
    pub fn perspective_rh_gl(fov_y: R, aspect: R, near: R, far: R) -> Self {
        let (s, c) = ops::sin_cos(fov_y * R::HALF);
        let f = c / s;
        let nf = (near - far).recip();
        Mat4 {
            cols: [
                [f / aspect, R::ZERO, R::ZERO, R::ZERO],
                [R::ZERO, f, R::ZERO, R::ZERO],
                [R::ZERO, R::ZERO, (far + near) * nf, -R::ONE],
                [R::ZERO, R::ZERO, R::TWO * far * near * nf, R::ZERO],
            ],
        }
    }
}

/// The 2×2 minors of the top two rows (`s`) and bottom two rows (`c`), the Laplace expansion
/// used by the determinant and the inverse.
#[inline]
fn minors<R: Real>(m: &[R; 16]) -> ([R; 6], [R; 6]) {
    let a = |r: usize, col: usize| m[col * 4 + r];
    let s = [
        a(0, 0) * a(1, 1) - a(1, 0) * a(0, 1),
        a(0, 0) * a(1, 2) - a(1, 0) * a(0, 2),
        a(0, 0) * a(1, 3) - a(1, 0) * a(0, 3),
        a(0, 1) * a(1, 2) - a(1, 1) * a(0, 2),
        a(0, 1) * a(1, 3) - a(1, 1) * a(0, 3),
        a(0, 2) * a(1, 3) - a(1, 2) * a(0, 3),
    ];
    let c = [
        a(2, 0) * a(3, 1) - a(3, 0) * a(2, 1),
        a(2, 0) * a(3, 2) - a(3, 0) * a(2, 2),
        a(2, 0) * a(3, 3) - a(3, 0) * a(2, 3),
        a(2, 1) * a(3, 2) - a(3, 1) * a(2, 2),
        a(2, 1) * a(3, 3) - a(3, 1) * a(2, 3),
        a(2, 2) * a(3, 3) - a(3, 2) * a(2, 3),
    ];
    (s, c)
}

impl<R: Real> Mul for Mat4<R> {
    type Output = Self;
    #[inline]
    fn mul(self, b: Self) -> Self {
        mul_mat4(&self, &b)
    }
}

/// `a × b` for general 4×4 matrices.
#[inline(always)]
#[must_use]
pub fn mul_mat4<R: Real>(a: &Mat4<R>, b: &Mat4<R>) -> Mat4<R> {
    let mut o = Mat4::ZERO;
    for (oc, bc) in o.cols.iter_mut().zip(b.cols.iter()) {
        for r in 0..4 {
            oc[r] = a.cols[0][r] * bc[0] + a.cols[1][r] * bc[1] + a.cols[2][r] * bc[2] + a.cols[3][r] * bc[3];
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trs_inverse_roundtrip() {
        let q = Quat::from_axis_angle(Vec3::new(0.0f32, 0.6, 0.8), 0.7);
        let m = Mat4::from_trs(Vec3::new(1.0, -2.0, 3.0), q, Vec3::new(2.0, 0.5, 1.5));
        let inv = m.inverse().unwrap_or(Mat4::ZERO);
        let p = m * inv;
        for c in 0..4 {
            for r in 0..4 {
                let e = if c == r { 1.0 } else { 0.0 };
                assert!((p.cols[c][r] - e).abs() < 1.0e-5);
            }
        }
        assert!((m.determinant() - 1.5).abs() < 1.0e-5);
        assert_eq!(Mat4::<f32>::ZERO.inverse(), None);
        let v = Vec3::new(0.5f32, 1.0, -1.0);
        let back = inv.transform_point3(m.transform_point3(v));
        assert!((back - v).max_abs() < 1.0e-5);
    }

    #[test]
    fn transpose_twice_is_identity() {
        let m = Mat4::from_cols_array(&core::array::from_fn(|i| i as f32));
        assert_eq!(m.transpose().transpose(), m);
        assert_eq!(m.transpose().cols[0], [0.0, 4.0, 8.0, 12.0]);
    }
}
