//! The path follower: [`Segment`]s of a polyline and a [`PathFollower`] that advances along
//! them by distances (each update's root-motion [`Motion::planar_length`](super::Motion::planar_length)).

use crate::job::JobError;
use crate::math::{ops, Vec3};
use crate::real::Real;

/// What a path follower does at the ends of its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum PathEnd {
    /// Continue from the other end (a closed loop when the last point equals the first).
    Loop,
    /// Stop at the end.
    #[default]
    Stop,
}

/// A straight piece of a path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment<R> {
    /// Start point.
    pub start: Vec3<R>,
    /// End point.
    pub end: Vec3<R>,
    /// `|end − start|`, in the points' unit (kept so followers never recompute it).
    pub length: R,
}

impl<R: Real> Segment<R> {
    /// The segment from `start` to `end`.
    #[must_use]
    pub fn new(start: Vec3<R>, end: Vec3<R>) -> Self {
        Segment { start, end, length: (end - start).length() }
    }

    /// Builds the segments of the polyline through `points` into `output` and returns how many
    /// (`points.len() − 1`, or 0 for fewer than two points).
    ///
    /// # Errors
    ///
    /// [`JobError::OutputTooSmall`] when `output` holds fewer than `points.len() − 1`
    /// segments (nothing is written).
    pub fn polyline(points: &[Vec3<R>], output: &mut [Segment<R>]) -> Result<usize, JobError> {
        let n = points.len().saturating_sub(1);
        if output.len() < n {
            return Err(JobError::OutputTooSmall);
        }
        for (o, w) in output.iter_mut().zip(points.windows(2)) {
            *o = Segment::new(w[0], w[1]);
        }
        Ok(n)
    }
}

/// Where a path follower stands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathPose<R> {
    /// Position on the path.
    pub position: Vec3<R>,
    /// Heading about +Y, radians in `[-π, π]` (0 faces +Z, π/2 faces +X): the direction of the
    /// current segment projected on the ground (of the nearest non-empty one for an empty
    /// segment; 0 when the whole path is vertical or empty).
    pub heading: R,
    /// True when a [`PathEnd::Stop`] follower has reached the end it moves towards.
    pub finished: bool,
}

/// Advances along a polyline by distances (typically each update's root-motion
/// [`Motion::planar_length`](super::Motion::planar_length)), looping or stopping at the ends.
///
/// # Examples
///
/// A path 3 m along +Z, then 4 m along +X:
///
/// ```
/// use core::f32::consts::FRAC_PI_2;
/// use sinew::math::Vec3;
/// use sinew::root_motion::{PathEnd, PathFollower, Segment};
///
/// let points = [Vec3::ZERO, Vec3::new(0.0, 0.0, 3.0), Vec3::new(4.0, 0.0, 3.0)];
/// let mut path = [Segment::new(Vec3::ZERO, Vec3::ZERO); 2];
/// let n = Segment::polyline(&points, &mut path)?;
///
/// let mut follower = PathFollower::<f32>::new(PathEnd::Stop);
/// let at = follower.advance(&path[..n], 1.0)?; // e.g. a frame's `root_motion_delta().planar_length()`
/// assert_eq!((at.position, at.heading), (Vec3::new(0.0, 0.0, 1.0), 0.0)); // facing +Z
///
/// let at = follower.advance(&path[..n], 4.0)?; // round the corner
/// assert!((at.position - Vec3::new(2.0, 0.0, 3.0)).length() < 1e-6);
/// assert!((at.heading - FRAC_PI_2).abs() < 1e-6); // facing +X
///
/// let at = follower.advance(&path[..n], 10.0)?;
/// assert!(at.finished && at.position == Vec3::new(4.0, 0.0, 3.0));
/// # Ok::<(), sinew::job::JobError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathFollower<R> {
    /// What happens at the ends.
    pub end: PathEnd,
    segment: usize,
    offset: R,
    finished: bool,
}

impl<R: Real> PathFollower<R> {
    /// A follower at the start of its path.
    #[must_use]
    pub fn new(end: PathEnd) -> Self {
        PathFollower { end, segment: 0, offset: R::ZERO, finished: false }
    }

    /// Current segment index.
    #[must_use]
    pub fn segment(&self) -> usize {
        self.segment
    }
    /// Distance from the current segment's start.
    #[must_use]
    pub fn offset(&self) -> R {
        self.offset
    }

    /// Moves by `distance` along `path` (negative: backwards) and returns the new pose.
    ///
    /// # Errors
    ///
    /// [`JobError::InputTooSmall`] for an empty path, [`JobError::InvalidTransform`] for a
    /// non-finite distance. The follower is unchanged on error.
    pub fn advance(&mut self, path: &[Segment<R>], distance: R) -> Result<PathPose<R>, JobError> {
        if path.is_empty() {
            return Err(JobError::InputTooSmall);
        }
        if !distance.is_finite() {
            return Err(JobError::InvalidTransform);
        }
        let n = path.len();
        self.segment = self.segment.min(n - 1);
        self.offset = self.offset.clamp(R::ZERO, path[self.segment].length);
        let total = path.iter().fold(R::ZERO, |a, s| a + s.length);
        if total <= R::ZERO {
            self.finished = self.end == PathEnd::Stop && distance != R::ZERO;
            return Ok(self.pose(path));
        }
        let mut d = distance;
        if self.end == PathEnd::Loop && d.abs() > total {
            // Whole laps change nothing: keep the remainder (same sign).
            let laps = (d / total).trunc_i32();
            d -= R::from_i32(laps) * total;
        }
        self.finished = false;
        if d >= R::ZERO {
            let mut rest = self.offset + d;
            // Each pass consumes a segment; with the lap reduction the walk is bounded.
            for _ in 0..=2 * n {
                let len = path[self.segment].length;
                if rest <= len {
                    break;
                }
                if self.segment + 1 < n {
                    rest -= len;
                    self.segment += 1;
                } else if self.end == PathEnd::Loop {
                    rest -= len;
                    self.segment = 0;
                } else {
                    rest = len;
                    self.finished = true;
                    break;
                }
            }
            self.offset = rest.min(path[self.segment].length);
        } else {
            let mut rest = self.offset + d;
            for _ in 0..=2 * n {
                if rest >= R::ZERO {
                    break;
                }
                if self.segment > 0 {
                    self.segment -= 1;
                    rest += path[self.segment].length;
                } else if self.end == PathEnd::Loop {
                    self.segment = n - 1;
                    rest += path[self.segment].length;
                } else {
                    rest = R::ZERO;
                    self.finished = true;
                    break;
                }
            }
            self.offset = rest.max(R::ZERO);
        }
        Ok(self.pose(path))
    }

    /// The pose at the current place (the path's first point for an empty path).
    #[must_use]
    pub fn pose(&self, path: &[Segment<R>]) -> PathPose<R> {
        let Some(seg) = path.get(self.segment.min(path.len().saturating_sub(1))) else {
            return PathPose { position: Vec3::ZERO, heading: R::ZERO, finished: self.finished };
        };
        let s = if seg.length > R::ZERO { (self.offset / seg.length).clamp(R::ZERO, R::ONE) } else { R::ZERO };
        let position = seg.start.lerp(seg.end, s);
        // Heading of this segment, else of the nearest one with a horizontal extent.
        let flat = |s: &Segment<R>| {
            let d = s.end - s.start;
            (d.x != R::ZERO || d.z != R::ZERO).then(|| ops::atan2(d.x, d.z))
        };
        let i = self.segment.min(path.len() - 1);
        let heading = flat(seg)
            .or_else(|| path[i..].iter().find_map(flat))
            .or_else(|| path[..i].iter().rev().find_map(flat))
            .unwrap_or(R::ZERO);
        PathPose { position, heading, finished: self.finished }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_follower() {
        // An L: 3 m along +Z, then 4 m along +X.
        let points = [Vec3::new(0.0f32, 0.0, 0.0), Vec3::new(0.0, 0.0, 3.0), Vec3::new(4.0, 0.0, 3.0)];
        let mut segs = [Segment::new(Vec3::ZERO, Vec3::ZERO); 2];
        assert_eq!(Segment::polyline(&points, &mut segs[..1]), Err(JobError::OutputTooSmall));
        assert_eq!(Segment::polyline(&points, &mut segs), Ok(2));
        assert_eq!(segs[1].length, 4.0);
        // Validity: empty path, non-finite distance; the follower is unchanged.
        let mut f = PathFollower::new(PathEnd::Stop);
        assert_eq!(f.advance(&[], 1.0), Err(JobError::InputTooSmall));
        assert_eq!(f.advance(&segs, f32::NAN), Err(JobError::InvalidTransform));
        assert_eq!(f, PathFollower::new(PathEnd::Stop));
        // Stop: walk in uneven steps; the position is the arc-length point.
        let p = f.advance(&segs, 2.0).unwrap();
        assert_eq!((p.position, p.heading, p.finished), (Vec3::new(0.0, 0.0, 2.0), 0.0, false));
        let p = f.advance(&segs, 3.0).unwrap();
        assert_eq!(p.position, Vec3::new(2.0, 0.0, 3.0));
        assert!((p.heading - core::f32::consts::FRAC_PI_2).abs() < 1.0e-6);
        let p = f.advance(&segs, 10.0).unwrap();
        assert_eq!((p.position, p.finished), (Vec3::new(4.0, 0.0, 3.0), true));
        let p = f.advance(&segs, -6.5).unwrap();
        assert_eq!((p.position, p.finished), (Vec3::new(0.0, 0.0, 0.5), false));
        let p = f.advance(&segs, -1.0).unwrap();
        assert_eq!((p.position, p.finished), (Vec3::ZERO, true));
        // Loop: 7 m around; 7 × 3 + 1.5 m lands 1.5 m in, backwards too.
        let mut l = PathFollower::new(PathEnd::Loop);
        assert_eq!(l.advance(&segs, 22.5).unwrap().position, Vec3::new(0.0, 0.0, 1.5));
        assert_eq!(l.advance(&segs, -2.0).unwrap().position, Vec3::new(3.5, 0.0, 3.0));
        // Many small steps add up like one (no sliding: distance in = arc length out).
        let mut a = PathFollower::new(PathEnd::Loop);
        for _ in 0..1000 {
            a.advance(&segs, 0.015625).unwrap();
        }
        let p = a.pose(&segs);
        // 15.625 m = two laps of 7 m + 1.625 m.
        assert!((p.position - Vec3::new(0.0, 0.0, 1.625)).max_abs() < 1.0e-4, "{p:?}");
        // A zero-length segment takes the heading of the next one.
        let z = [Segment::new(Vec3::ZERO, Vec3::ZERO), Segment::new(Vec3::ZERO, Vec3::new(1.0f32, 0.0, 0.0))];
        assert!((PathFollower::new(PathEnd::Stop).pose(&z).heading - core::f32::consts::FRAC_PI_2).abs() < 1.0e-6);
    }
}
