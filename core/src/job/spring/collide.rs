//! The spring stage's geometry: collider shapes (three-vrm's `calculateCollision`), lengths and
//! directions that keep their precision in fixed point, three.js's `setFromUnitVectors`, and
//! the inverses of a matrix's upper 3×3 through its cofactors.

use super::{affine, ColliderShape};
use crate::math::{Mat4, Quat, Vec3};
use crate::real::Real;

/// `|v|`: the correctly rounded root of `v·v` in `f32` (three.js's `length`). In fixed point
/// `v` is first divided by its largest component, so that a short vector keeps the precision
/// its square would lose.
#[cfg_attr(sinew_simd_lanes, inline(always))]
pub(super) fn length<R: Real>(v: Vec3<R>) -> R {
    if R::FIXED_POINT {
        let m = v.max_abs();
        if m <= R::ZERO {
            return R::ZERO;
        }
        m * div(v, m).length()
    } else {
        v.dot(v).sqrt_ieee()
    }
}

/// `v × (1 / |v|)`, or zero for a zero or non-finite `v` (three.js's `normalize`).
#[cfg_attr(sinew_simd_lanes, inline(always))]
pub(super) fn dir<R: Real>(v: Vec3<R>) -> Vec3<R> {
    if R::FIXED_POINT {
        let m = v.max_abs();
        if m <= R::ZERO {
            return Vec3::ZERO;
        }
        let u = div(v, m);
        div(u, u.length())
    } else {
        let l2 = v.dot(v);
        if l2 > R::ZERO && l2.is_finite() {
            v * l2.sqrt_ieee().recip()
        } else {
            Vec3::ZERO
        }
    }
}

/// `q × (1 / |q|)` (three.js's `Quaternion.normalize`), the identity for a zero or non-finite
/// `q`; [`Quat::normalize`] in fixed point.
#[cfg_attr(sinew_simd_lanes, inline(always))]
pub(super) fn unit<R: Real>(q: Quat<R>) -> Quat<R> {
    if R::FIXED_POINT {
        return q.normalize();
    }
    let l2 = q.length_squared();
    if l2 > R::ZERO && l2.is_finite() {
        q * l2.sqrt_ieee().recip()
    } else {
        Quat::IDENTITY
    }
}

/// `v × (to / l)`: `v`, of length `l > 0`, scaled to length `to`.
pub(super) fn scale_to<R: Real>(v: Vec3<R>, l: R, to: R) -> Vec3<R> {
    v * (to / l)
}

/// `v / s`, component by component.
fn div<R: Real>(v: Vec3<R>, s: R) -> Vec3<R> {
    Vec3::new(v.x / s, v.y / s, v.z / s)
}

/// The rotation taking the unit vector `from` onto the direction of `v` (any length): [`arc`]
/// of `from` and `v / |v|` without the division, `(from × v, |v| + from·v)` normalized (the
/// same quaternion up to rounding; opposite when `|v| + from·v < 1e-8 × |v|`). `None` when `v`
/// is zero or not finite. Used in `f32`; fixed point takes [`dir`] then [`arc`].
#[cfg_attr(sinew_simd_lanes, inline(always))]
pub(super) fn arc_toward<R: Real>(from: Vec3<R>, v: Vec3<R>) -> Option<Quat<R>> {
    let l2 = v.dot(v);
    if !(l2 > R::ZERO && l2.is_finite()) {
        return None;
    }
    let l = l2.sqrt_ieee();
    let r = from.dot(v) + l;
    if r < R::ratio(1, 100_000_000) * l || r <= R::ZERO {
        return Some(half_turn(from));
    }
    let c = from.cross(v);
    Some(unit(Quat::new(c.x, c.y, c.z, r)))
}

/// A half turn about an axis perpendicular to the unit vector `from` (three.js's choice in
/// `setFromUnitVectors` for opposite vectors).
fn half_turn<R: Real>(from: Vec3<R>) -> Quat<R> {
    let q = if from.x.abs() > from.z.abs() {
        Quat::new(-from.y, from.x, R::ZERO, R::ZERO)
    } else {
        Quat::new(R::ZERO, -from.z, from.y, R::ZERO)
    };
    unit(q)
}

/// The rotation taking the unit vector `from` onto the unit vector `to`, as three.js's
/// `Quaternion.setFromUnitVectors` computes it: `(from × to, 1 + from·to)` normalized, and for
/// opposite vectors (`1 + from·to < 1e-8`) a half turn about an axis perpendicular to `from`.
#[cfg_attr(sinew_simd_lanes, inline(always))]
pub(super) fn arc<R: Real>(from: Vec3<R>, to: Vec3<R>) -> Quat<R> {
    let r = from.dot(to) + R::ONE;
    if r < R::ratio(1, 100_000_000) || r <= R::ZERO {
        return half_turn(from);
    }
    let c = from.cross(to);
    unit(Quat::new(c.x, c.y, c.z, r))
}

/// The cofactor columns of `m`'s upper 3×3 (columns `a`, `b`, `c`): `b × c`, `c × a`, `a × b`,
/// and its determinant. `m₃⁻¹ v = (bc·v, ca·v, ab·v) / det`, `m₃⁻ᵀ n = (bc·n.x + ca·n.y +
/// ab·n.z) / det`.
fn cofactors<R: Real>(m: &Mat4<R>) -> ([Vec3<R>; 3], R) {
    let col = |i: usize| Vec3::new(m.cols[i][0], m.cols[i][1], m.cols[i][2]);
    let (a, b, c) = (col(0), col(1), col(2));
    let bc = b.cross(c);
    (([bc, c.cross(a), a.cross(b)]), a.dot(bc))
}

/// `m⁻¹ × p` for an affine `m`, or `None` when its 3×3 is singular.
pub(super) fn inverse_point<R: Real>(m: &Mat4<R>, p: Vec3<R>) -> Option<Vec3<R>> {
    let ([bc, ca, ab], det) = cofactors(m);
    if det == R::ZERO || !det.is_finite() {
        return None;
    }
    let w = p - m.translation();
    Some(Vec3::new(bc.dot(w) / det, ca.dot(w) / det, ab.dot(w) / det))
}

/// A map from `v` to a positive multiple of `m₃⁻¹ × v` (its direction): the rows of `m₃`'s
/// adjugate, negated when its determinant is negative.
#[derive(Clone, Copy, Debug)]
pub(super) struct InverseDirection<R> {
    rows: [Vec3<R>; 3],
}

impl<R: Real> InverseDirection<R> {
    /// The map of `m`, or `None` when `m₃` is singular.
    #[cfg_attr(sinew_simd_lanes, inline(always))]
    pub(super) fn of(m: &Mat4<R>) -> Option<Self> {
        let (rows, det) = cofactors(m);
        if det == R::ZERO || !det.is_finite() {
            return None;
        }
        Some(InverseDirection { rows: if det < R::ZERO { rows.map(|r| -r) } else { rows } })
    }

    /// A positive multiple of `m₃⁻¹ × v`.
    #[cfg_attr(sinew_simd_lanes, inline(always))]
    pub(super) fn apply(&self, v: Vec3<R>) -> Vec3<R> {
        let [bc, ca, ab] = self.rows;
        Vec3::new(bc.dot(v), ca.dot(v), ab.dot(v))
    }
}

/// The unit normal `n` through `m`'s normal matrix (`m₃⁻ᵀ n`, normalized), or `None` when `m₃`
/// is singular or the result is zero.
fn normal_through<R: Real>(m: &Mat4<R>, n: Vec3<R>) -> Option<Vec3<R>> {
    let ([bc, ca, ab], det) = cofactors(m);
    if det == R::ZERO || !det.is_finite() {
        return None;
    }
    let d = bc * n.x + ca * n.y + ab * n.z;
    let u = dir(if det < R::ZERO { -d } else { d });
    (u != Vec3::ZERO).then_some(u)
}

/// What a collider test found.
pub(super) enum Contact<R> {
    /// The tail sphere is clear of the collider (distance ≥ 0).
    Clear,
    /// The tail sphere is inside by `depth > 0`; push it by `normal × depth`. The normal is
    /// `None` where three-vrm's would be undefined (the tail on a sphere's centre).
    Inside {
        /// `−distance`.
        depth: R,
        /// The direction to push in, unit length.
        normal: Option<Vec3<R>>,
    },
}

/// A collider's shape in the world: what a test needs of it, computed once for every tail
/// tested against it while its joint's matrix stays the same.
#[derive(Clone, Copy, Debug)]
pub(super) enum Placed<R> {
    /// A sphere: its centre `c` in the world.
    Sphere {
        /// The centre.
        c: Vec3<R>,
        /// Radius.
        radius: R,
        /// Keeps the tail inside.
        inside: bool,
    },
    /// A capsule: its first cap's centre `c` and the segment to the second, `seg`.
    Capsule {
        /// The first cap's centre.
        c: Vec3<R>,
        /// From the first cap's centre to the second's.
        seg: Vec3<R>,
        /// Radius.
        radius: R,
        /// Keeps the tail inside.
        inside: bool,
    },
    /// A plane: a point `c` and the unit normal (`None`: never met).
    Plane {
        /// A point of the plane.
        c: Vec3<R>,
        /// The unit normal through the normal matrix.
        n: Option<Vec3<R>>,
    },
}

/// `shape` on a joint whose model matrix is `model`, placed by `world` (three-vrm's
/// `updateColliderMatrix`: `world × model` with its translation moved to `world × model ×
/// offset`). Points and directions go through `model`, then `world`; a plane's normal through
/// their product's normal matrix.
#[cfg_attr(sinew_simd_lanes, inline(always))]
pub(super) fn place<R: Real>(shape: &ColliderShape<R>, world: &Mat4<R>, model: &Mat4<R>) -> Placed<R> {
    let point = |v: Vec3<R>| affine::point(world, affine::point(model, v));
    match *shape {
        ColliderShape::Sphere { offset, radius, inside } => Placed::Sphere { c: point(offset), radius, inside },
        ColliderShape::Capsule { offset, tail, radius, inside } => {
            let seg = affine::vector(world, affine::vector(model, tail - offset));
            Placed::Capsule { c: point(offset), seg, radius, inside }
        }
        ColliderShape::Plane { offset, normal } => {
            let n = normal_through(&affine::product(world, model), normal);
            Placed::Plane { c: point(offset), n }
        }
    }
}

/// Tests the tail sphere (`p`, radius `hit`) against a placed collider (three-vrm's
/// `calculateCollision`).
#[cfg_attr(sinew_simd_lanes, inline(always))]
pub(super) fn collide<R: Real>(placed: &Placed<R>, p: Vec3<R>, hit: R) -> Contact<R> {
    match *placed {
        Placed::Sphere { c, radius, inside } => round(p - c, radius, hit, inside),
        Placed::Capsule { c, seg, radius, inside } => {
            let from = p - c;
            round(from - closest_on_segment(seg, from), radius, hit, inside)
        }
        Placed::Plane { c, n } => {
            let Some(n) = n else { return Contact::Clear };
            let distance = (p - c).dot(n) - hit;
            if distance < R::ZERO {
                Contact::Inside { depth: -distance, normal: Some(n) }
            } else {
                Contact::Clear
            }
        }
    }
}

/// The point of the segment `0 … seg` closest to `v` (three-vrm's capsule test: the start
/// when `seg·v ≤ 0`, the end when `|seg|² ≤ seg·v`, else `seg × (seg·v / |seg|²)`).
#[cfg_attr(sinew_simd_lanes, inline(always))]
fn closest_on_segment<R: Real>(seg: Vec3<R>, v: Vec3<R>) -> Vec3<R> {
    if R::FIXED_POINT {
        // The same tests on seg / m, whose squares keep their precision.
        let m = seg.max_abs();
        if m <= R::ZERO {
            return Vec3::ZERO;
        }
        let s = div(seg, m);
        let (dot, sq) = (s.dot(v), s.dot(s));
        if dot <= R::ZERO {
            Vec3::ZERO
        } else if m * sq <= dot {
            seg
        } else {
            s * (dot / sq)
        }
    } else {
        let (dot, sq) = (seg.dot(v), seg.dot(seg));
        if dot <= R::ZERO {
            Vec3::ZERO
        } else if sq <= dot {
            seg
        } else {
            seg * (dot / sq)
        }
    }
}

/// A sphere's (or a capsule's, from its closest point) test on `v`, the tail's offset from the
/// centre: `|v| − hit − radius`, or inside `radius − hit − |v|`.
#[cfg_attr(sinew_simd_lanes, inline(always))]
fn round<R: Real>(v: Vec3<R>, radius: R, hit: R, inside: bool) -> Contact<R> {
    let l = length(v);
    let distance = if inside { radius - hit - l } else { l - hit - radius };
    if distance >= R::ZERO {
        return Contact::Clear;
    }
    let normal = (l > R::ZERO).then(|| {
        let u = if R::FIXED_POINT { dir(v) } else { v * l.recip() };
        if inside {
            -u
        } else {
            u
        }
    });
    Contact::Inside { depth: -distance, normal }
}
