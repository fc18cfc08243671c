//! The character's path: a closed stadium around [`PATH_CENTER`] ([`character_path`]) that its
//! root motion moves it along, facing [`HEADING_LOOK_AHEAD`] further on, and the points on it by
//! arc length ([`PathPoints`]).

use std::f32::consts::PI;

use sinew::math::Vec3;

/// Center of the character's path.
pub const PATH_CENTER: Vec3<f32> = Vec3 { x: 0.0, y: 0.0, z: -1.2 };
/// Length of each straight side of the character's path, in meters.
pub const PATH_STRAIGHT: f32 = 1.8;
/// Radius of the path's rounded ends, in meters.
pub const PATH_TURN_RADIUS: f32 = 0.7;
/// Segments of each rounded end.
const PATH_TURN_SEGMENTS: usize = 8;
/// How far ahead on the path the character points its heading, in meters: its heading is the
/// direction to that point, so it turns smoothly through the path's corners.
pub const HEADING_LOOK_AHEAD: f32 = 0.5;

/// The character's path: a closed polyline (its last point is its first) around
/// [`PATH_CENTER`], a stadium with two [`PATH_STRAIGHT`] sides along X joined by half
/// circles of [`PATH_TURN_RADIUS`] made of straight segments. The front side (nearer the
/// camera) is walked towards +X.
#[must_use]
pub fn character_path() -> Vec<Vec3<f32>> {
    let (h, r) = (PATH_STRAIGHT * 0.5, PATH_TURN_RADIUS);
    // The front straight's left end, then each half circle (its ends are the straights' ends).
    let first = PATH_CENTER + Vec3::new(-h, 0.0, r);
    let mut points = vec![first];
    for (cx, from) in [(h, 0.0f32), (-h, PI)] {
        for k in 0..=PATH_TURN_SEGMENTS {
            let a = from + PI * k as f32 / PATH_TURN_SEGMENTS as f32;
            points.push(PATH_CENTER + Vec3::new(cx + r * a.sin(), 0.0, r * a.cos()));
        }
    }
    // The last point is the first up to rounding: make it exact.
    if let Some(last) = points.last_mut() {
        *last = first;
    }
    points
}

/// Length of [`character_path`], in meters.
#[must_use]
pub fn path_length() -> f32 {
    character_path().windows(2).map(|w| (w[1] - w[0]).length()).sum()
}

/// A closed polyline with its cumulative lengths, for points by arc length.
#[derive(Debug, Clone)]
pub(super) struct PathPoints {
    points: Vec<Vec3<f32>>,
    /// Arc length at each point (0 at the first).
    at: Vec<f32>,
}

impl PathPoints {
    /// The closed polyline `points` (its last point is its first).
    pub(super) fn new(points: Vec<Vec3<f32>>) -> PathPoints {
        let mut at = Vec::with_capacity(points.len());
        let mut s = 0.0;
        for (i, p) in points.iter().enumerate() {
            if let Some(q) = i.checked_sub(1).and_then(|j| points.get(j)) {
                s += (*p - *q).length();
            }
            at.push(s);
        }
        PathPoints { points, at }
    }

    /// The polyline's length.
    pub(super) fn length(&self) -> f32 {
        self.at.last().copied().unwrap_or(0.0)
    }

    /// The point at arc length `s` around the loop (any `s`, taken modulo the length).
    pub(super) fn point_at(&self, s: f64) -> Vec3<f32> {
        let length = f64::from(self.length());
        if !(length > 0.0 && s.is_finite()) {
            return self.points.first().copied().unwrap_or(Vec3::ZERO);
        }
        let s = s.rem_euclid(length) as f32;
        let i = self.at.partition_point(|&a| a <= s).clamp(1, self.points.len().max(2) - 1);
        match (self.points.get(i - 1), self.points.get(i), self.at.get(i - 1), self.at.get(i)) {
            (Some(&p), Some(&q), Some(&a), Some(&b)) if b > a => p.lerp(q, ((s - a) / (b - a)).clamp(0.0, 1.0)),
            (Some(&p), ..) => p,
            _ => Vec3::ZERO,
        }
    }
}
