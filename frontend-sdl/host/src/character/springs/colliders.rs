//! Spring colliders as wire lines, the viewers' collider overlay: [`shape_lines`] turns a
//! collider placed in the world
//! ([`SpringSet::world_colliders`](crate::SpringSet::world_colliders)) into line segments, and
//! [`Character::collider_lines`] does so for every collider of a character's spring stage in
//! the pose of its last update.

use alloc::vec::Vec;
use core::f32::consts::{PI, TAU};

use sinew::capacity::Capacity;
use sinew::job::spring::ColliderShape;
use sinew::math::ops::sin_cos;
use sinew::math::Vec3;
use sinew::real::Real;

use super::super::Character;

/// Segments per full circle.
pub const CIRCLE_SEGMENTS: usize = 24;

/// A plane collider's square side per unit of the model's radius ([`ColliderLines::plane_size`]).
pub const PLANE_SIZE_PER_RADIUS: f32 = 0.15;

/// Collider lines in world space: those of colliders that keep the tails out, and those of
/// `inside` colliders (which keep them in), drawn in another color. Each line is two points;
/// [`Vec3`] is `repr(C)`, so a set is 6 floats per line in memory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColliderLines {
    /// Lines of sphere, capsule and plane colliders.
    pub outside: Vec<[Vec3<f32>; 2]>,
    /// Lines of inside-sphere and inside-capsule colliders.
    pub inside: Vec<[Vec3<f32>; 2]>,
}

impl ColliderLines {
    /// Whether there is no line at all.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.outside.is_empty() && self.inside.is_empty()
    }

    /// Empties both sets, keeping their memory.
    pub fn clear(&mut self) {
        self.outside.clear();
        self.inside.clear();
    }

    /// The side of a plane collider's square (see [`shape_lines`]) under a model of `radius`:
    /// [`PLANE_SIZE_PER_RADIUS`] of it, at least 1e-3 (also for a radius that is not a number).
    #[must_use]
    pub fn plane_size(radius: f32) -> f32 {
        (radius * PLANE_SIZE_PER_RADIUS).max(1.0e-3)
    }
}

/// Two unit vectors perpendicular to unit `a` and to each other.
fn perpendiculars(a: Vec3<f32>) -> (Vec3<f32>, Vec3<f32>) {
    let helper = if Real::abs(a.x) < 0.9 { Vec3::X } else { Vec3::Y };
    let u = a.cross(helper).try_normalize().unwrap_or(Vec3::Z);
    (u, a.cross(u))
}

/// The arc `center + radius × (cos θ · u + sin θ · v)` for θ from `from` to `to`, in
/// `segments` segments.
fn arc(
    out: &mut Vec<[Vec3<f32>; 2]>,
    center: Vec3<f32>,
    radius: f32,
    (u, v): (Vec3<f32>, Vec3<f32>),
    (from, to): (f32, f32),
    segments: usize,
) {
    let at = |i: usize| {
        let (sin, cos) = sin_cos(from + (to - from) * i as f32 / segments as f32);
        center + (u * cos + v * sin) * radius
    };
    out.extend((0..segments).map(|i| [at(i), at(i + 1)]));
}

/// Appends the wire lines of `shape` (world space) to `out`:
/// - a sphere: its three great circles along the world axes;
/// - a capsule: a circle about its axis at each end, the four lines joining them, and over
///   each end a half circle in two planes through the axis (a capsule whose ends meet is drawn
///   as a sphere);
/// - a plane: a square of side `size` about its point in the plane, and its normal from the
///   point, `size / 2` long.
///
/// Every point of a sphere's lines is at its radius from its center, and every point of a
/// capsule's at its radius from its segment.
pub fn shape_lines(shape: &ColliderShape<f32>, size: f32, out: &mut ColliderLines) {
    let full = (0.0, TAU);
    match *shape {
        ColliderShape::Sphere { offset, radius, inside } => {
            let lines = if inside { &mut out.inside } else { &mut out.outside };
            for axes in [(Vec3::X, Vec3::Y), (Vec3::Y, Vec3::Z), (Vec3::Z, Vec3::X)] {
                arc(lines, offset, radius, axes, full, CIRCLE_SEGMENTS);
            }
        }
        ColliderShape::Capsule { offset, tail, radius, inside } => {
            let Some(a) = (tail - offset).try_normalize() else {
                return shape_lines(&ColliderShape::Sphere { offset, radius, inside }, size, out);
            };
            let lines = if inside { &mut out.inside } else { &mut out.outside };
            let (u, v) = perpendiculars(a);
            for end in [offset, tail] {
                arc(lines, end, radius, (u, v), full, CIRCLE_SEGMENTS);
            }
            for side in [u, v, -u, -v] {
                lines.push([offset + side * radius, tail + side * radius]);
            }
            // The caps: half circles bulging away from the segment, from +side to -side.
            let half = CIRCLE_SEGMENTS / 2;
            for side in [u, v] {
                arc(lines, tail, radius, (side, a), (0.0, PI), half);
                arc(lines, offset, radius, (side, -a), (0.0, PI), half);
            }
        }
        ColliderShape::Plane { offset, normal } => {
            let Some(n) = normal.try_normalize() else { return };
            let (u, v) = perpendiculars(n);
            let h = size * 0.5;
            let corners = [offset + (u + v) * h, offset + (v - u) * h, offset - (u + v) * h, offset + (u - v) * h];
            let next = corners.iter().cycle().skip(1);
            out.outside.extend(corners.iter().zip(next).map(|(a, b)| [*a, *b]));
            out.outside.push([offset, offset + n * h]);
        }
    }
}

impl<C: Capacity> Character<C> {
    /// The colliders of the spring stage as wire lines in world space ([`shape_lines`], planes
    /// as squares of side `plane_size`, see [`ColliderLines::plane_size`]): placed by the model
    /// matrices of the last [`update`](Self::update) ([`Character::joints`], the staged pose's)
    /// and the [`world`](Self::world) as it is now
    /// ([`SpringSet::world_colliders`](crate::SpringSet::world_colliders)). Empty without
    /// springs set up; drawn whether they are on or off.
    #[must_use]
    pub fn collider_lines(&self, plane_size: f32) -> ColliderLines {
        let mut out = ColliderLines::default();
        self.collider_lines_into(plane_size, &mut out);
        out
    }

    /// [`collider_lines`](Self::collider_lines) into `out`, emptied first (its memory kept).
    pub fn collider_lines_into(&self, plane_size: f32, out: &mut ColliderLines) {
        out.clear();
        let Some(set) = self.spring_set() else { return };
        for shape in set.world_colliders(&self.joints, self.world()) {
            shape_lines(&shape, plane_size, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist_to_segment(p: Vec3<f32>, a: Vec3<f32>, b: Vec3<f32>) -> f32 {
        let ab = b - a;
        let t = ((p - a).dot(ab) / ab.dot(ab)).clamp(0.0, 1.0);
        (p - (a + ab * t)).length()
    }

    #[test]
    fn capsule_lines_lie_at_the_radius_from_the_segment() {
        let (a, b, r) = (Vec3::new(0.3, 1.0, -0.2), Vec3::new(0.5, 1.4, 0.1), 0.07);
        let mut out = ColliderLines::default();
        shape_lines(&ColliderShape::Capsule { offset: a, tail: b, radius: r, inside: true }, 0.1, &mut out);
        assert!(out.outside.is_empty() && out.inside.len() > 4 * CIRCLE_SEGMENTS);
        for p in out.inside.iter().flatten() {
            assert!((dist_to_segment(*p, a, b) - r).abs() < 1e-5, "{p:?}");
        }
        // The caps reach the ends' far points along the axis.
        let axis = (b - a).normalize_or_zero();
        let far = out.inside.iter().flatten().map(|p| (*p - a).dot(axis)).fold(f32::MIN, f32::max);
        assert!((far - ((b - a).length() + r)).abs() < 1e-5, "{far}");
    }

    #[test]
    fn sphere_lines_are_three_closed_great_circles() {
        let (c, r) = (Vec3::new(-0.2, 0.9, 0.4), 0.12);
        let mut out = ColliderLines::default();
        shape_lines(&ColliderShape::Sphere { offset: c, radius: r, inside: false }, 0.1, &mut out);
        assert!(out.inside.is_empty());
        assert_eq!(out.outside.len(), 3 * CIRCLE_SEGMENTS);
        for (k, circle) in out.outside.chunks(CIRCLE_SEGMENTS).enumerate() {
            // Each circle lies in one axis plane through the center, and closes on itself.
            let axis = [2, 0, 1][k];
            let coord = |p: &Vec3<f32>| [p.x, p.y, p.z][axis];
            for p in circle.iter().flatten() {
                assert!(((*p - c).length() - r).abs() < 1e-6, "{p:?}");
                assert!((coord(p) - coord(&c)).abs() < 1e-6, "{p:?}");
            }
            assert!(circle.windows(2).all(|w| w[0][1] == w[1][0]));
            let (first, last) = (circle[0][0], circle[CIRCLE_SEGMENTS - 1][1]);
            assert!((first - last).length() < 1e-6, "{first:?} {last:?}");
        }
    }

    #[test]
    fn plane_lines_lie_in_the_plane_but_the_normal() {
        let (o, n) = (Vec3::new(0.0, 0.5, 1.0), Vec3::new(0.0, 2.0, 0.0));
        let mut out = ColliderLines::default();
        shape_lines(&ColliderShape::Plane { offset: o, normal: n }, 0.4, &mut out);
        let (normal, square) = out.outside.split_last().unwrap();
        assert_eq!(square.len(), 4);
        assert!(square.iter().flatten().all(|p| (p.y - 0.5).abs() < 1e-6 && (*p - o).length() > 0.1));
        assert_eq!(normal[0], o);
        assert!((normal[1] - (o + Vec3::new(0.0, 0.2, 0.0))).length() < 1e-6);
    }

    #[test]
    fn plane_size_follows_the_radius_with_a_floor() {
        assert!((ColliderLines::plane_size(2.0) - 2.0 * PLANE_SIZE_PER_RADIUS).abs() < 1e-7);
        assert_eq!(ColliderLines::plane_size(0.0), 1.0e-3);
        assert_eq!(ColliderLines::plane_size(f32::NAN), 1.0e-3);
    }
}
