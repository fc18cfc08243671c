//! An independent `f64` reference for sinew's math and jobs.
//!
//! Everything here is plain array-of-structures code in double precision, written for
//! readability rather than speed and without looking at how `sinew` organizes its own
//! arithmetic: rotations go through Hamilton products (`q · v · q*`), matrix products are the
//! textbook triple loop, the inverse is Gauss–Jordan elimination, linear-blend skinning blends the
//! transformed points (not the matrices), and nothing is structure-of-arrays. It does not depend
//! on `sinew` at all; [`crate::convert`] moves values between the two.
//!
//! Conventions match sinew's documented ones:
//!
//! - matrices are column-major, `cols[c][r]` is row `r` of column `c`, points are columns
//!   (`m · p`), and a joint's local matrix is `T · R · S`;
//! - quaternions are `x·i + y·j + z·k + w`; rotations are applied as `q · v · q*`;
//! - a model matrix is `model[parent] · local`, roots use the optional root matrix;
//! - a skin matrix is `model[joint] · inverse_bind`;
//! - linear-blend skinning transforms normals and tangents by the blended 3×3 part, then
//!   renormalizes them (zero stays zero; tangents keep `w`);
//! - dual-quaternion skinning takes the rigid part of each skin matrix (3×3 columns normalized,
//!   then the rotation of the resulting orthonormal matrix; scale dropped), sign-aligns every
//!   influence with the vertex's first one, sums, and divides by the norm of the real part;
//!   [`skin_dual_quat_scaled`] keeps the scale as sinew's scaled palettes do (polar split
//!   `A = R · P`, `P` blended linearly and applied first).
//!
//! Functions that take indices check them and return a [`ReferenceError`] instead of panicking.

use core::fmt;
use core::ops::{Add, Mul, Neg, Sub};

// -------------------------------------------------------------------------------------------------
// Errors
// -------------------------------------------------------------------------------------------------

/// Why a reference computation refused its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferenceError {
    /// `parents[joint]` is neither negative (a root) nor an earlier joint.
    NotParentsFirst {
        /// The joint whose parent is invalid.
        joint: usize,
    },
    /// Two inputs that must have the same length do not.
    LengthMismatch,
    /// A joint or palette index is past the end of its buffer.
    IndexOutOfRange {
        /// The offending index.
        index: usize,
    },
    /// The influence count is 0.
    NoInfluence,
    /// A `from`/`to` range does not name joints in order.
    InvalidRange,
    /// A vertex's blended dual quaternion has a zero real part.
    DegenerateBlend {
        /// The vertex.
        vertex: usize,
    },
}

impl fmt::Display for ReferenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::NotParentsFirst { joint } => write!(f, "joint {joint} has a parent that does not come before it"),
            Self::LengthMismatch => f.write_str("inputs that must have the same length differ"),
            Self::IndexOutOfRange { index } => write!(f, "index {index} is out of range"),
            Self::NoInfluence => f.write_str("the influence count is 0"),
            Self::InvalidRange => f.write_str("the joint range is invalid"),
            Self::DegenerateBlend { vertex } => write!(f, "vertex {vertex} blends to a zero rotation"),
        }
    }
}

impl std::error::Error for ReferenceError {}

// -------------------------------------------------------------------------------------------------
// Vectors
// -------------------------------------------------------------------------------------------------

/// A 3-vector in double precision.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec3d {
    /// X.
    pub x: f64,
    /// Y.
    pub y: f64,
    /// Z.
    pub z: f64,
}

impl Vec3d {
    /// (0, 0, 0).
    pub const ZERO: Self = Vec3d { x: 0.0, y: 0.0, z: 0.0 };
    /// (1, 1, 1).
    pub const ONE: Self = Vec3d { x: 1.0, y: 1.0, z: 1.0 };

    /// A vector from its components.
    #[must_use]
    pub const fn new(x: f64, y: f64, z: f64) -> Self {
        Vec3d { x, y, z }
    }
    /// All components set to `v`.
    #[must_use]
    pub const fn splat(v: f64) -> Self {
        Vec3d { x: v, y: v, z: v }
    }
    /// The components as an array.
    #[must_use]
    pub const fn to_array(self) -> [f64; 3] {
        [self.x, self.y, self.z]
    }
    /// Dot product.
    #[must_use]
    pub fn dot(self, o: Self) -> f64 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
    /// Cross product `self × o`.
    #[must_use]
    pub fn cross(self, o: Self) -> Self {
        Vec3d::new(self.y * o.z - self.z * o.y, self.z * o.x - self.x * o.z, self.x * o.y - self.y * o.x)
    }
    /// Euclidean length.
    #[must_use]
    pub fn length(self) -> f64 {
        self.dot(self).sqrt()
    }
    /// The unit vector in the same direction, or `None` for a zero or non-finite vector.
    #[must_use]
    pub fn normalized(self) -> Option<Self> {
        let l = self.length();
        if l > 0.0 && l.is_finite() {
            Some(self * (1.0 / l))
        } else {
            None
        }
    }
    /// Largest absolute component.
    #[must_use]
    pub fn max_abs(self) -> f64 {
        self.x.abs().max(self.y.abs()).max(self.z.abs())
    }
}

impl Add for Vec3d {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        Vec3d::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
}
impl Sub for Vec3d {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        Vec3d::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
}
impl Mul<f64> for Vec3d {
    type Output = Self;
    fn mul(self, s: f64) -> Self {
        Vec3d::new(self.x * s, self.y * s, self.z * s)
    }
}
impl Neg for Vec3d {
    type Output = Self;
    fn neg(self) -> Self {
        Vec3d::new(-self.x, -self.y, -self.z)
    }
}

/// A 4-vector in double precision (a tangent with its handedness in `w`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec4d {
    /// X.
    pub x: f64,
    /// Y.
    pub y: f64,
    /// Z.
    pub z: f64,
    /// W.
    pub w: f64,
}

impl Vec4d {
    /// A vector from its components.
    #[must_use]
    pub const fn new(x: f64, y: f64, z: f64, w: f64) -> Self {
        Vec4d { x, y, z, w }
    }
    /// The first three components.
    #[must_use]
    pub const fn xyz(self) -> Vec3d {
        Vec3d::new(self.x, self.y, self.z)
    }
}

// -------------------------------------------------------------------------------------------------
// Quaternions
// -------------------------------------------------------------------------------------------------

/// A quaternion `x·i + y·j + z·k + w` in double precision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quatd {
    /// i component.
    pub x: f64,
    /// j component.
    pub y: f64,
    /// k component.
    pub z: f64,
    /// Real component.
    pub w: f64,
}

impl Default for Quatd {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Quatd {
    /// The identity rotation.
    pub const IDENTITY: Self = Quatd { x: 0.0, y: 0.0, z: 0.0, w: 1.0 };
    /// The zero quaternion.
    pub const ZERO: Self = Quatd { x: 0.0, y: 0.0, z: 0.0, w: 0.0 };

    /// A quaternion from its components.
    #[must_use]
    pub const fn new(x: f64, y: f64, z: f64, w: f64) -> Self {
        Quatd { x, y, z, w }
    }
    /// The pure quaternion `(v, 0)`.
    #[must_use]
    pub const fn from_vector(v: Vec3d) -> Self {
        Quatd { x: v.x, y: v.y, z: v.z, w: 0.0 }
    }
    /// The rotation of `angle` radians about `axis` (normalized here; identity for a zero axis).
    #[must_use]
    pub fn from_axis_angle(axis: Vec3d, angle: f64) -> Self {
        match axis.normalized() {
            Some(a) => {
                let (s, c) = (0.5 * angle).sin_cos();
                Quatd::new(a.x * s, a.y * s, a.z * s, c)
            }
            None => Self::IDENTITY,
        }
    }
    /// The vector part.
    #[must_use]
    pub const fn vector(self) -> Vec3d {
        Vec3d::new(self.x, self.y, self.z)
    }
    /// 4D dot product.
    #[must_use]
    pub fn dot(self, o: Self) -> f64 {
        self.x * o.x + self.y * o.y + self.z * o.z + self.w * o.w
    }
    /// Norm.
    #[must_use]
    pub fn length(self) -> f64 {
        self.dot(self).sqrt()
    }
    /// The unit quaternion in the same direction, or `None` for a zero or non-finite one.
    #[must_use]
    pub fn normalized(self) -> Option<Self> {
        let l = self.length();
        if l > 0.0 && l.is_finite() {
            Some(self * (1.0 / l))
        } else {
            None
        }
    }
    /// The conjugate `(-x, -y, -z, w)`.
    #[must_use]
    pub fn conjugate(self) -> Self {
        Quatd::new(-self.x, -self.y, -self.z, self.w)
    }
    /// Rotates `v` by this quaternion as `q · (v, 0) · q*`. Exact for unit quaternions; a
    /// non-unit `q` also scales by `|q|²`.
    #[must_use]
    pub fn rotate(self, v: Vec3d) -> Vec3d {
        (self * Quatd::from_vector(v) * self.conjugate()).vector()
    }
    /// The columns of the 3×3 rotation matrix of the unit quaternion in this direction: the
    /// images of the three basis vectors.
    #[must_use]
    pub fn rotation_columns(self) -> [Vec3d; 3] {
        let q = self.normalized().unwrap_or(Self::IDENTITY);
        [q.rotate(Vec3d::new(1.0, 0.0, 0.0)), q.rotate(Vec3d::new(0.0, 1.0, 0.0)), q.rotate(Vec3d::new(0.0, 0.0, 1.0))]
    }
    /// The unit quaternion (with `w ≥ 0`) of an orthonormal, right-handed 3×3 matrix given by
    /// its columns.
    ///
    /// Each squared component follows from the diagonal (`4w² = 1 + m00 + m11 + m22`,
    /// `4x² = 1 + m00 − m11 − m22`, …); the largest one is taken from its square root and the
    /// other three from the off-diagonal sums and differences divided by it.
    #[must_use]
    pub fn from_rotation_columns(c: [Vec3d; 3]) -> Self {
        // m(r, col) = row r of column col.
        let m = |r: usize, col: usize| c[col].to_array()[r];
        let w2 = 1.0 + m(0, 0) + m(1, 1) + m(2, 2);
        let x2 = 1.0 + m(0, 0) - m(1, 1) - m(2, 2);
        let y2 = 1.0 - m(0, 0) + m(1, 1) - m(2, 2);
        let z2 = 1.0 - m(0, 0) - m(1, 1) + m(2, 2);
        // (m21 − m12) = 4wx, (m02 − m20) = 4wy, (m10 − m01) = 4wz,
        // (m10 + m01) = 4xy, (m02 + m20) = 4xz, (m21 + m12) = 4yz.
        let (wx4, wy4, wz4) = (m(2, 1) - m(1, 2), m(0, 2) - m(2, 0), m(1, 0) - m(0, 1));
        let (xy4, xz4, yz4) = (m(1, 0) + m(0, 1), m(0, 2) + m(2, 0), m(2, 1) + m(1, 2));
        let largest = w2.max(x2).max(y2).max(z2);
        let q = if largest == w2 {
            let w = 0.5 * w2.max(0.0).sqrt();
            Quatd::new(wx4 / (4.0 * w), wy4 / (4.0 * w), wz4 / (4.0 * w), w)
        } else if largest == x2 {
            let x = 0.5 * x2.max(0.0).sqrt();
            Quatd::new(x, xy4 / (4.0 * x), xz4 / (4.0 * x), wx4 / (4.0 * x))
        } else if largest == y2 {
            let y = 0.5 * y2.max(0.0).sqrt();
            Quatd::new(xy4 / (4.0 * y), y, yz4 / (4.0 * y), wy4 / (4.0 * y))
        } else {
            let z = 0.5 * z2.max(0.0).sqrt();
            Quatd::new(xz4 / (4.0 * z), yz4 / (4.0 * z), z, wz4 / (4.0 * z))
        };
        let q = q.normalized().unwrap_or(Self::IDENTITY);
        if q.w < 0.0 {
            -q
        } else {
            q
        }
    }
    /// The angle (radians, in [0, π]) between the 4D directions of `self` and `o`, computed as
    /// `2·atan2(|a − b|, |a + b|)` on the normalized inputs, which stays accurate near 0 and π
    /// where `acos` of the dot product does not. `None` if either is zero.
    #[must_use]
    pub fn angle_4d(self, o: Self) -> Option<f64> {
        let (a, b) = (self.normalized()?, o.normalized()?);
        Some(2.0 * (a - b).length().atan2((a + b).length()))
    }
    /// The rotation angle (radians, in [0, π]) of `self⁻¹ · o`: how far apart the two rotations
    /// are, whatever the signs of the quaternions. `None` if either is zero.
    #[must_use]
    pub fn rotation_angle_to(self, o: Self) -> Option<f64> {
        let o = if self.dot(o) < 0.0 { -o } else { o };
        Some(2.0 * self.angle_4d(o)?)
    }
    /// Exact spherical linear interpolation on the shortest path: [`Quatd::slerp_arc`] from
    /// `self` to `end`, or to `-end` when `self · end < 0`.
    #[must_use]
    pub fn slerp(self, end: Self, t: f64) -> Option<Self> {
        let end = if self.dot(end) < 0.0 { -end } else { end };
        self.slerp_arc(end, t)
    }
    /// Exact spherical linear interpolation along the great arc from `self` to `end` as given
    /// (no hemisphere choice): the unit quaternion at fraction `t` of the arc.
    ///
    /// Both inputs are normalized first. With `θ` the 4D angle between them, the result is
    /// `(sin((1 − t)θ)·a + sin(tθ)·b) / sin θ`; below θ = 1e-9 the arc is a straight segment to
    /// double precision and the normalized linear interpolation is returned. `None` if either
    /// input is zero or they are opposite (no unique arc).
    #[must_use]
    pub fn slerp_arc(self, end: Self, t: f64) -> Option<Self> {
        let a = self.normalized()?;
        let b = end.normalized()?;
        let theta = a.angle_4d(b)?;
        if theta < 1.0e-9 {
            return (a * (1.0 - t) + b * t).normalized();
        }
        let s = theta.sin();
        if s < 1.0e-12 {
            return None;
        }
        (a * (((1.0 - t) * theta).sin() / s) + b * ((t * theta).sin() / s)).normalized()
    }
}

impl Mul for Quatd {
    type Output = Self;
    /// Hamilton product, written with the scalar/vector split:
    /// `(s₁, v₁)(s₂, v₂) = (s₁s₂ − v₁·v₂, s₁v₂ + s₂v₁ + v₁ × v₂)`.
    fn mul(self, o: Self) -> Self {
        let (s1, v1) = (self.w, self.vector());
        let (s2, v2) = (o.w, o.vector());
        let v = v2 * s1 + v1 * s2 + v1.cross(v2);
        Quatd::new(v.x, v.y, v.z, s1 * s2 - v1.dot(v2))
    }
}
impl Mul<f64> for Quatd {
    type Output = Self;
    fn mul(self, s: f64) -> Self {
        Quatd::new(self.x * s, self.y * s, self.z * s, self.w * s)
    }
}
impl Add for Quatd {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        Quatd::new(self.x + o.x, self.y + o.y, self.z + o.z, self.w + o.w)
    }
}
impl Sub for Quatd {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        Quatd::new(self.x - o.x, self.y - o.y, self.z - o.z, self.w - o.w)
    }
}
impl Neg for Quatd {
    type Output = Self;
    fn neg(self) -> Self {
        Quatd::new(-self.x, -self.y, -self.z, -self.w)
    }
}

// -------------------------------------------------------------------------------------------------
// Matrices
// -------------------------------------------------------------------------------------------------

/// A column-major 4×4 matrix in double precision: `cols[c][r]` is row `r` of column `c`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mat4d {
    /// The four columns.
    pub cols: [[f64; 4]; 4],
}

impl Default for Mat4d {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Mat4d {
    /// The identity matrix.
    pub const IDENTITY: Self =
        Mat4d { cols: [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]] };

    /// Row `r` of column `c`.
    #[must_use]
    pub fn at(&self, r: usize, c: usize) -> f64 {
        self.cols[c][r]
    }
    /// Column `c` (0..3) restricted to its first three rows.
    #[must_use]
    pub fn axis(&self, c: usize) -> Vec3d {
        Vec3d::new(self.cols[c][0], self.cols[c][1], self.cols[c][2])
    }
    /// The translation (column 3, first three rows).
    #[must_use]
    pub fn translation(&self) -> Vec3d {
        self.axis(3)
    }
    /// The affine matrix `T · R · S` of a translation, a rotation (normalized here) and a
    /// per-axis scale: column `c < 3` is the rotated basis vector `c` times `scale[c]`.
    #[must_use]
    pub fn from_trs(translation: Vec3d, rotation: Quatd, scale: Vec3d) -> Self {
        let r = rotation.rotation_columns();
        let s = scale.to_array();
        let mut m = Self::IDENTITY;
        for c in 0..3 {
            let axis = r[c] * s[c];
            m.cols[c] = [axis.x, axis.y, axis.z, 0.0];
        }
        m.cols[3] = [translation.x, translation.y, translation.z, 1.0];
        m
    }
    /// Transforms a point (`w = 1`), ignoring the last row.
    #[must_use]
    pub fn transform_point(&self, p: Vec3d) -> Vec3d {
        self.axis(0) * p.x + self.axis(1) * p.y + self.axis(2) * p.z + self.translation()
    }
    /// Transforms a direction (`w = 0`).
    #[must_use]
    pub fn transform_vector(&self, v: Vec3d) -> Vec3d {
        self.axis(0) * v.x + self.axis(1) * v.y + self.axis(2) * v.z
    }
    /// Largest absolute entry.
    #[must_use]
    pub fn max_abs(&self) -> f64 {
        self.cols.iter().flatten().fold(0.0, |m, v| m.max(v.abs()))
    }
    /// The inverse by Gauss–Jordan elimination with partial pivoting, or `None` when a pivot is
    /// zero or the result is not finite.
    #[must_use]
    pub fn inverse(&self) -> Option<Self> {
        // Row-major working copies: a[r][c].
        let mut a = [[0.0f64; 4]; 4];
        let mut inv = [[0.0f64; 4]; 4];
        for r in 0..4 {
            for c in 0..4 {
                a[r][c] = self.cols[c][r];
            }
            inv[r][r] = 1.0;
        }
        for col in 0..4 {
            let pivot = (col..4).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
            if a[pivot][col] == 0.0 {
                return None;
            }
            a.swap(col, pivot);
            inv.swap(col, pivot);
            let p = a[col][col];
            for c in 0..4 {
                a[col][c] /= p;
                inv[col][c] /= p;
            }
            for r in 0..4 {
                if r != col {
                    let f = a[r][col];
                    for c in 0..4 {
                        a[r][c] -= f * a[col][c];
                        inv[r][c] -= f * inv[col][c];
                    }
                }
            }
        }
        let mut o = Self::IDENTITY;
        for r in 0..4 {
            for c in 0..4 {
                o.cols[c][r] = inv[r][c];
            }
        }
        if o.cols.iter().flatten().all(|v| v.is_finite()) {
            Some(o)
        } else {
            None
        }
    }
}

impl Mul for Mat4d {
    type Output = Self;
    /// The matrix product: entry (r, c) is `Σₖ self(r, k) · o(k, c)`.
    fn mul(self, o: Self) -> Self {
        let mut m = Mat4d { cols: [[0.0; 4]; 4] };
        for r in 0..4 {
            for c in 0..4 {
                m.cols[c][r] = (0..4).map(|k| self.at(r, k) * o.at(k, c)).sum();
            }
        }
        m
    }
}

/// A local joint transform in double precision: scale, then rotate, then translate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trsd {
    /// Translation.
    pub translation: Vec3d,
    /// Rotation (normalized when turned into a matrix).
    pub rotation: Quatd,
    /// Per-axis scale.
    pub scale: Vec3d,
}

impl Default for Trsd {
    fn default() -> Self {
        Trsd { translation: Vec3d::ZERO, rotation: Quatd::IDENTITY, scale: Vec3d::ONE }
    }
}

impl Trsd {
    /// The affine matrix `T · R · S`.
    #[must_use]
    pub fn to_matrix(&self) -> Mat4d {
        Mat4d::from_trs(self.translation, self.rotation, self.scale)
    }
}

// -------------------------------------------------------------------------------------------------
// Hierarchy
// -------------------------------------------------------------------------------------------------

/// The parent of joint `joint`, or `None` for a root; an error unless the parent is an earlier
/// joint.
fn parent_of(parents: &[i16], joint: usize) -> Result<Option<usize>, ReferenceError> {
    let p = *parents.get(joint).ok_or(ReferenceError::IndexOutOfRange { index: joint })?;
    if p < 0 {
        Ok(None)
    } else if (p as usize) < joint {
        Ok(Some(p as usize))
    } else {
        Err(ReferenceError::NotParentsFirst { joint })
    }
}

/// Model matrices of a parents-first hierarchy: `model[j] = model[parent(j)] · local[j]`, and
/// `root · local[j]` for roots (a negative parent); `root` defaults to identity.
///
/// # Errors
///
/// [`ReferenceError::LengthMismatch`] when `parents` and `locals` differ in length,
/// [`ReferenceError::NotParentsFirst`] when a parent does not come before its child.
pub fn local_to_model(parents: &[i16], locals: &[Trsd], root: Option<&Mat4d>) -> Result<Vec<Mat4d>, ReferenceError> {
    if parents.len() != locals.len() {
        return Err(ReferenceError::LengthMismatch);
    }
    let root = root.copied().unwrap_or(Mat4d::IDENTITY);
    let mut model: Vec<Mat4d> = Vec::with_capacity(locals.len());
    for (j, local) in locals.iter().enumerate() {
        let parent_matrix = match parent_of(parents, j)? {
            Some(p) => model[p],
            None => root,
        };
        model.push(parent_matrix * local.to_matrix());
    }
    Ok(model)
}

/// True when `joint` is `ancestor` or one of its descendants (walks up the parents).
///
/// # Errors
///
/// [`ReferenceError::NotParentsFirst`] or [`ReferenceError::IndexOutOfRange`] for an invalid
/// hierarchy.
pub fn is_in_subtree(parents: &[i16], joint: usize, ancestor: usize) -> Result<bool, ReferenceError> {
    let mut j = joint;
    loop {
        if j == ancestor {
            return Ok(true);
        }
        match parent_of(parents, j)? {
            Some(p) => j = p,
            None => return Ok(false),
        }
    }
}

/// A partial local-to-model update, as sinew's `LocalToModelJob` with `from`/`to` documents
/// it: recomputes `model[j] = model[parent(j)] · local[j]` for every joint `j ≤ to` that is
/// `from` or one of its descendants (every joint `≤ to` when `from` is `None`), reading
/// parents from `model`; every other entry of `model` is left as it is.
///
/// # Errors
///
/// [`ReferenceError::LengthMismatch`] when `parents`, `locals` and `model` differ in length,
/// [`ReferenceError::InvalidRange`] when `from` or `to` is not a joint or `to < from`,
/// [`ReferenceError::NotParentsFirst`] for an invalid hierarchy.
pub fn local_to_model_range(
    parents: &[i16],
    locals: &[Trsd],
    root: Option<&Mat4d>,
    from: Option<usize>,
    to: Option<usize>,
    model: &mut [Mat4d],
) -> Result<(), ReferenceError> {
    let n = parents.len();
    if locals.len() != n || model.len() != n {
        return Err(ReferenceError::LengthMismatch);
    }
    if n == 0 {
        return Ok(());
    }
    let last = to.unwrap_or(n - 1);
    if last >= n || from.is_some_and(|f| f >= n || f > last) {
        return Err(ReferenceError::InvalidRange);
    }
    let root = root.copied().unwrap_or(Mat4d::IDENTITY);
    for j in 0..=last {
        if let Some(f) = from {
            if !is_in_subtree(parents, j, f)? {
                continue;
            }
        }
        let parent_matrix = match parent_of(parents, j)? {
            Some(p) => model[p],
            None => root,
        };
        model[j] = parent_matrix * locals[j].to_matrix();
    }
    Ok(())
}

// -------------------------------------------------------------------------------------------------
// Skin palettes
// -------------------------------------------------------------------------------------------------

/// The model matrix of skin joint `i`: `model[joints[i]]`, or `model[i]` without a mapping.
fn skin_joint_model<'m>(model: &'m [Mat4d], joints: Option<&[u16]>, i: usize) -> Result<&'m Mat4d, ReferenceError> {
    let j = match joints {
        Some(js) => *js.get(i).ok_or(ReferenceError::LengthMismatch)? as usize,
        None => i,
    };
    model.get(j).ok_or(ReferenceError::IndexOutOfRange { index: j })
}

/// The matrix skin palette: `model[joints[i]] · inverse_bind[i]` for every skin joint `i`
/// (`joints` `None` maps skin joint `i` to joint `i`).
///
/// # Errors
///
/// [`ReferenceError::LengthMismatch`] when `joints` and `inverse_bind` differ in length,
/// [`ReferenceError::IndexOutOfRange`] when a joint is past `model`.
pub fn skin_matrices(
    model: &[Mat4d],
    inverse_bind: &[Mat4d],
    joints: Option<&[u16]>,
) -> Result<Vec<Mat4d>, ReferenceError> {
    if joints.is_some_and(|j| j.len() != inverse_bind.len()) {
        return Err(ReferenceError::LengthMismatch);
    }
    inverse_bind.iter().enumerate().map(|(i, ib)| Ok(*skin_joint_model(model, joints, i)? * *ib)).collect()
}

/// A dual quaternion `real + ε·dual` in double precision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualQuatd {
    /// The rotation part.
    pub real: Quatd,
    /// The translation part, `½ · (t, 0) · real` for a unit dual quaternion.
    pub dual: Quatd,
}

impl DualQuatd {
    /// "Rotate by the unit quaternion `rotation`, then translate by `translation`".
    #[must_use]
    pub fn from_rotation_translation(rotation: Quatd, translation: Vec3d) -> Self {
        DualQuatd { real: rotation, dual: Quatd::from_vector(translation) * rotation * 0.5 }
    }
    /// The rigid part of an affine matrix as sinew's `DualQuat::from_mat4_rigid` documents it:
    /// the three axis columns are normalized (a zero column stays zero), the rotation of the
    /// resulting matrix is taken, and the translation is column 3; scale is dropped. Meaningful
    /// when the normalized columns are orthonormal (rotation times per-axis scale); for a sheared
    /// matrix "its rotation" is not defined and this gives one approximation of it.
    #[must_use]
    pub fn from_rigid_matrix(m: &Mat4d) -> Self {
        let axes = [0, 1, 2].map(|c| m.axis(c).normalized().unwrap_or(Vec3d::ZERO));
        Self::from_rotation_translation(Quatd::from_rotation_columns(axes), m.translation())
    }
    /// The translation, the vector part of `2 · dual · real*` (for a real part of unit norm).
    #[must_use]
    pub fn translation(&self) -> Vec3d {
        (self.dual * 2.0 * self.real.conjugate()).vector()
    }
    /// Applies the transform to a point: rotate by `real` (unit), then add [`Self::translation`].
    #[must_use]
    pub fn transform_point(&self, p: Vec3d) -> Vec3d {
        self.real.rotate(p) + self.translation()
    }
    /// Applies the rotation to a direction.
    #[must_use]
    pub fn transform_vector(&self, v: Vec3d) -> Vec3d {
        self.real.rotate(v)
    }
}

/// The dual-quaternion skin palette: the rigid part ([`DualQuatd::from_rigid_matrix`]) of each
/// skin matrix of [`skin_matrices`].
///
/// # Errors
///
/// As [`skin_matrices`].
pub fn skin_dual_quats(
    model: &[Mat4d],
    inverse_bind: &[Mat4d],
    joints: Option<&[u16]>,
) -> Result<Vec<DualQuatd>, ReferenceError> {
    Ok(skin_matrices(model, inverse_bind, joints)?.iter().map(DualQuatd::from_rigid_matrix).collect())
}

// -------------------------------------------------------------------------------------------------
// Skinning
// -------------------------------------------------------------------------------------------------

/// A skinned mesh's inputs: `influences` (joint, weight) pairs per vertex, stored
/// consecutively (`joints[v * influences + k]`), and the bind-pose vertex streams.
#[derive(Clone, Copy, Debug)]
pub struct SkinInput<'a> {
    /// Influences per vertex (at least 1).
    pub influences: usize,
    /// Palette index of each influence.
    pub joints: &'a [u16],
    /// Weight of each influence (used as given).
    pub weights: &'a [f64],
    /// Bind-pose positions; their count is the vertex count.
    pub positions: &'a [Vec3d],
    /// Bind-pose normals, if any.
    pub normals: Option<&'a [Vec3d]>,
    /// Bind-pose tangents with handedness in `w`, if any.
    pub tangents: Option<&'a [Vec4d]>,
}

/// Skinned vertex streams.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Skinned {
    /// Positions.
    pub positions: Vec<Vec3d>,
    /// Normals, when the input had them.
    pub normals: Option<Vec<Vec3d>>,
    /// Tangents, when the input had them.
    pub tangents: Option<Vec<Vec4d>>,
}

impl SkinInput<'_> {
    /// Checks lengths and indices against a palette of `palette_len` entries.
    fn check(&self, palette_len: usize) -> Result<usize, ReferenceError> {
        let n = self.positions.len();
        if self.influences == 0 {
            return Err(ReferenceError::NoInfluence);
        }
        let nk = n * self.influences;
        if self.joints.len() != nk
            || self.weights.len() != nk
            || self.normals.is_some_and(|s| s.len() != n)
            || self.tangents.is_some_and(|s| s.len() != n)
        {
            return Err(ReferenceError::LengthMismatch);
        }
        if let Some(&j) = self.joints.iter().find(|&&j| j as usize >= palette_len) {
            return Err(ReferenceError::IndexOutOfRange { index: j as usize });
        }
        Ok(n)
    }
    /// The (palette index, weight) pairs of vertex `v` (indices already checked).
    fn influences_of(&self, v: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        let range = v * self.influences..(v + 1) * self.influences;
        self.joints[range.clone()].iter().map(|&j| j as usize).zip(self.weights[range].iter().copied())
    }
}

/// Linear-blend skinning: each output is the weighted sum of the bind-pose value transformed by
/// each influence's skin matrix (points with `w = 1`; normals and tangents with `w = 0`, then
/// renormalized, zero staying zero; tangents keep their `w`).
///
/// # Errors
///
/// [`ReferenceError::NoInfluence`], [`ReferenceError::LengthMismatch`] for streams of the wrong
/// length, [`ReferenceError::IndexOutOfRange`] for a joint index past the palette.
pub fn skin_linear(palette: &[Mat4d], input: &SkinInput<'_>) -> Result<Skinned, ReferenceError> {
    let n = input.check(palette.len())?;
    let blend = |v: usize, f: &dyn Fn(&Mat4d) -> Vec3d| {
        input.influences_of(v).fold(Vec3d::ZERO, |acc, (j, w)| acc + f(&palette[j]) * w)
    };
    let positions = (0..n).map(|v| blend(v, &|m| m.transform_point(input.positions[v]))).collect();
    let unit = |v: Vec3d| v.normalized().unwrap_or(Vec3d::ZERO);
    let normals = input.normals.map(|ns| (0..n).map(|v| unit(blend(v, &|m| m.transform_vector(ns[v])))).collect());
    let tangents = input.tangents.map(|ts| {
        (0..n)
            .map(|v| {
                let t = unit(blend(v, &|m| m.transform_vector(ts[v].xyz())));
                Vec4d::new(t.x, t.y, t.z, ts[v].w)
            })
            .collect()
    });
    Ok(Skinned { positions, normals, tangents })
}

/// The blended, normalized dual quaternion of vertex `v`: `Σ sₖ wₖ dqₖ / |Σ sₖ wₖ realₖ|`,
/// with `sₖ = −1` when `realₖ` lies in the other hemisphere from the first influence's real
/// part (`real₀ · realₖ < 0`) and `+1` otherwise.
///
/// # Errors
///
/// [`ReferenceError::DegenerateBlend`] when the blended real part is zero.
fn blend_dual_quat(palette: &[DualQuatd], input: &SkinInput<'_>, v: usize) -> Result<DualQuatd, ReferenceError> {
    // Signs align with the first influence that has a weight.
    let first = input.influences_of(v).find(|&(_, w)| w != 0.0).map_or(Quatd::IDENTITY, |(j, _)| palette[j].real);
    let mut real = Quatd::ZERO;
    let mut dual = Quatd::ZERO;
    for (j, w) in input.influences_of(v) {
        let d = palette[j];
        let s = if first.dot(d.real) < 0.0 { -w } else { w };
        real = real + d.real * s;
        dual = dual + d.dual * s;
    }
    let len = real.length();
    if len == 0.0 || !len.is_finite() {
        return Err(ReferenceError::DegenerateBlend { vertex: v });
    }
    Ok(DualQuatd { real: real * (1.0 / len), dual: dual * (1.0 / len) })
}

/// Dual-quaternion skinning: each vertex is transformed by its blended dual quaternion
/// (see the module docs); normals and tangents are rotated, tangents keep their `w`.
///
/// # Errors
///
/// As [`skin_linear`], plus [`ReferenceError::DegenerateBlend`] when a vertex's blended rotation
/// is zero.
pub fn skin_dual_quat(palette: &[DualQuatd], input: &SkinInput<'_>) -> Result<Skinned, ReferenceError> {
    let n = input.check(palette.len())?;
    let blended = (0..n).map(|v| blend_dual_quat(palette, input, v)).collect::<Result<Vec<_>, _>>()?;
    let positions = (0..n).map(|v| blended[v].transform_point(input.positions[v])).collect();
    let normals = input.normals.map(|ns| (0..n).map(|v| blended[v].transform_vector(ns[v])).collect());
    let tangents = input.tangents.map(|ts| {
        (0..n)
            .map(|v| {
                let t = blended[v].transform_vector(ts[v].xyz());
                Vec4d::new(t.x, t.y, t.z, ts[v].w)
            })
            .collect()
    });
    Ok(Skinned { positions, normals, tangents })
}

/// A 3×3 matrix as three columns.
type Mat3d = [Vec3d; 3];

fn mat3_of(m: &Mat4d) -> Mat3d {
    [m.axis(0), m.axis(1), m.axis(2)]
}

fn mat3_apply(m: &Mat3d, v: Vec3d) -> Vec3d {
    m[0] * v.x + m[1] * v.y + m[2] * v.z
}

/// The inverse transpose of `m` (its cofactor matrix over the determinant): columns
/// `(c1 × c2, c2 × c0, c0 × c1) / det`. `None` for a singular matrix.
fn mat3_inverse_transpose(m: &Mat3d) -> Option<Mat3d> {
    let cross = |a: Vec3d, b: Vec3d| Vec3d::new(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
    let c = [cross(m[1], m[2]), cross(m[2], m[0]), cross(m[0], m[1])];
    let det = m[0].x * c[0].x + m[0].y * c[0].y + m[0].z * c[0].z;
    (det != 0.0 && det.is_finite()).then(|| c.map(|v| v * (1.0 / det)))
}

/// The polar decomposition `A = R · P` of an invertible 3×3 matrix: `R` a rotation (a mirrored
/// `A` gives `−R` and `−P`), `P = Rᵀ A` symmetric. By the Newton iteration `X ← (X + X⁻ᵀ) / 2`
/// to convergence in f64.
fn polar(a: &Mat3d) -> Option<(Mat3d, Mat3d)> {
    let mut x = *a;
    for _ in 0..100 {
        let it = mat3_inverse_transpose(&x)?;
        let next = [0, 1, 2].map(|c| (x[c] + it[c]) * 0.5);
        let change = (0..3).map(|c| (next[c] - x[c]).max_abs()).fold(0.0, f64::max);
        x = next;
        if change < 1e-15 {
            break;
        }
    }
    let dot = |a: Vec3d, b: Vec3d| a.x * b.x + a.y * b.y + a.z * b.z;
    let c12 = Vec3d::new(
        x[1].y * x[2].z - x[1].z * x[2].y,
        x[1].z * x[2].x - x[1].x * x[2].z,
        x[1].x * x[2].y - x[1].y * x[2].x,
    );
    let r = if dot(x[0], c12) < 0.0 { x.map(|c| c * -1.0) } else { x };
    // P = Rᵀ A: entry (row i, column j) = r_i · a_j.
    let p = [0, 1, 2].map(|j| Vec3d::new(dot(r[0], a[j]), dot(r[1], a[j]), dot(r[2], a[j])));
    Some((r, p))
}

/// Dual-quaternion skinning with scale (the scale/shear extension of Kavan et al.): each skin
/// matrix `[A | t]` splits into `A = R · P` ([`polar`]); per vertex the `P`s are blended
/// linearly and applied first, then the blended dual quaternion of `(R, t)` (as
/// [`skin_dual_quat`]). Normals go through the blended `P`'s inverse transpose and are rotated
/// (not renormalized: with `P = I` this is [`skin_dual_quat`] exactly).
///
/// # Errors
///
/// As [`skin_dual_quat`], plus [`ReferenceError::DegenerateBlend`] for a singular skin matrix.
pub fn skin_dual_quat_scaled(palette: &[Mat4d], input: &SkinInput<'_>) -> Result<Skinned, ReferenceError> {
    let n = input.check(palette.len())?;
    let mut dqs = Vec::with_capacity(palette.len());
    let mut ps = Vec::with_capacity(palette.len());
    for m in palette {
        let (r, p) = polar(&mat3_of(m)).ok_or(ReferenceError::DegenerateBlend { vertex: 0 })?;
        dqs.push(DualQuatd::from_rotation_translation(Quatd::from_rotation_columns(r), m.translation()));
        ps.push(p);
    }
    let blended = (0..n).map(|v| blend_dual_quat(&dqs, input, v)).collect::<Result<Vec<_>, _>>()?;
    let scale = |v: usize| {
        input.influences_of(v).fold([Vec3d::ZERO; 3], |acc, (j, w)| [0, 1, 2].map(|c| acc[c] + ps[j][c] * w))
    };
    let positions = (0..n).map(|v| blended[v].transform_point(mat3_apply(&scale(v), input.positions[v]))).collect();
    let normals = match input.normals {
        None => None,
        Some(ns) => Some(
            (0..n)
                .map(|v| {
                    let it = mat3_inverse_transpose(&scale(v)).ok_or(ReferenceError::DegenerateBlend { vertex: v })?;
                    Ok(blended[v].transform_vector(mat3_apply(&it, ns[v])))
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    Ok(Skinned { positions, normals, tangents: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPS: f64 = 1.0e-12;

    fn close(a: Vec3d, b: Vec3d) -> bool {
        (a - b).max_abs() < EPS
    }

    #[test]
    fn quaternion_rotation_follows_the_right_hand_rule() {
        let q = Quatd::from_axis_angle(Vec3d::new(0.0, 0.0, 1.0), std::f64::consts::FRAC_PI_2);
        assert!(close(q.rotate(Vec3d::new(1.0, 0.0, 0.0)), Vec3d::new(0.0, 1.0, 0.0)));
        let c = q.rotation_columns();
        assert!(close(c[0], Vec3d::new(0.0, 1.0, 0.0)));
        assert!(close(c[1], Vec3d::new(-1.0, 0.0, 0.0)));
        // (a · b) rotates by b first.
        let p = Quatd::from_axis_angle(Vec3d::new(1.0, 0.0, 0.0), 0.7);
        let v = Vec3d::new(0.3, -0.4, 2.0);
        assert!(close((q * p).rotate(v), q.rotate(p.rotate(v))));
    }

    #[test]
    fn rotation_columns_round_trip_in_every_branch() {
        for (axis, angle) in [
            (Vec3d::new(1.0, 0.0, 0.0), 3.0),
            (Vec3d::new(0.0, 1.0, 0.0), 3.1),
            (Vec3d::new(0.0, 0.0, 1.0), 3.13),
            (Vec3d::new(0.2, -0.5, 0.4), 0.5),
            (Vec3d::new(1.0, 1.0, 1.0), std::f64::consts::PI),
        ] {
            let q = Quatd::from_axis_angle(axis, angle);
            let back = Quatd::from_rotation_columns(q.rotation_columns());
            assert!((back.dot(q).abs() - 1.0).abs() < EPS, "{axis:?} {angle}");
        }
    }

    #[test]
    fn slerp_is_exact_on_a_known_arc() {
        let a = Quatd::IDENTITY;
        let b = Quatd::from_axis_angle(Vec3d::new(0.0, 1.0, 0.0), 2.0);
        for t in [0.0, 0.25, 0.5, 1.0] {
            let e = Quatd::from_axis_angle(Vec3d::new(0.0, 1.0, 0.0), 2.0 * t);
            assert!(e.rotation_angle_to(a.slerp(b, t).unwrap()).unwrap() < 1.0e-12, "t = {t}");
            // The other sign of the end gives the same rotation path.
            assert!(e.rotation_angle_to(a.slerp(-b, t).unwrap()).unwrap() < 1.0e-12, "t = {t}");
            // The long arc to -b passes through other rotations.
            let long = a.slerp_arc(-b, t).unwrap();
            let e_long = Quatd::from_axis_angle(Vec3d::new(0.0, 1.0, 0.0), (2.0 - 2.0 * std::f64::consts::PI) * t);
            assert!(e_long.rotation_angle_to(long).unwrap() < 1.0e-12, "t = {t}");
        }
    }

    #[test]
    fn inverse_and_hierarchy() {
        let t = Trsd {
            translation: Vec3d::new(1.0, 2.0, -3.0),
            rotation: Quatd::from_axis_angle(Vec3d::new(0.3, 0.5, 0.1), 1.2),
            scale: Vec3d::new(2.0, 0.5, 1.5),
        };
        let m = t.to_matrix();
        let p = m * m.inverse().unwrap();
        for c in 0..4 {
            for r in 0..4 {
                assert!((p.at(r, c) - f64::from(u8::from(r == c))).abs() < EPS);
            }
        }
        let model = local_to_model(&[-1, 0, 1], &[t; 3], None).unwrap();
        assert_eq!(model[2], m * m * m);
        assert_eq!(local_to_model(&[-1, 1], &[t; 2], None), Err(ReferenceError::NotParentsFirst { joint: 1 }));
        let mut partial = model.clone();
        let moved = Trsd { translation: Vec3d::new(5.0, 0.0, 0.0), ..t };
        local_to_model_range(&[-1, 0, 1], &[t, moved, t], None, Some(1), Some(1), &mut partial).unwrap();
        assert_eq!(partial[0], model[0]);
        assert_eq!(partial[1], m * moved.to_matrix());
        assert_eq!(partial[2], model[2]);
    }

    #[test]
    fn skinning_of_a_single_rigid_influence_is_the_transform() {
        let m = Mat4d::from_trs(
            Vec3d::new(1.0, -2.0, 0.5),
            Quatd::from_axis_angle(Vec3d::new(0.0, 1.0, 1.0), 0.8),
            Vec3d::ONE,
        );
        let dq = DualQuatd::from_rigid_matrix(&m);
        let p = [Vec3d::new(0.4, 0.1, -0.7)];
        let input =
            SkinInput { influences: 1, joints: &[0], weights: &[1.0], positions: &p, normals: None, tangents: None };
        let l = skin_linear(&[m], &input).unwrap();
        let d = skin_dual_quat(&[dq], &input).unwrap();
        assert!(close(l.positions[0], m.transform_point(p[0])));
        assert!(close(d.positions[0], m.transform_point(p[0])));
        assert_eq!(skin_linear(&[], &input), Err(ReferenceError::IndexOutOfRange { index: 0 }));
    }
}
