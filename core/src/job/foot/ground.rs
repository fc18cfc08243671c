//! The ground the feet are placed on: the caller's answer to "how high is the ground under this
//! point, and which way does it face".

use crate::math::Vec3;
use crate::real::Real;

/// The ground under a point: its world height and its world normal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroundHit<R> {
    /// World height (Y) of the ground under the point.
    pub height: R,
    /// The ground's normal there, world space, pointing up out of the ground. Need not be unit
    /// length, but must not be zero.
    pub normal: Vec3<R>,
}

/// The ground query of [`FootPlacementJob`](super::FootPlacementJob), answered by the caller
/// from its own terrain or physics.
///
/// Implemented for [`GroundPlane`] and for closures `FnMut(usize, Vec3<R>) ->
/// Option<GroundHit<R>>`.
pub trait Ground<R: Real> {
    /// The ground under world point `at` for leg `leg` (its index in the job's `legs`): its
    /// height at `at`'s X and Z, and its normal. `None` when there is no ground there (the leg
    /// then follows the animation).
    ///
    /// The job asks once per leg with `at` over where its ankle goes, and, for a leg with a
    /// toe, once more over where the toe goes.
    fn ground(&mut self, leg: usize, at: Vec3<R>) -> Option<GroundHit<R>>;
}

impl<R: Real, F: FnMut(usize, Vec3<R>) -> Option<GroundHit<R>>> Ground<R> for F {
    fn ground(&mut self, leg: usize, at: Vec3<R>) -> Option<GroundHit<R>> {
        self(leg, at)
    }
}

/// An infinite plane: the ground through the world point `(0, height, 0)` with normal
/// `normal`, the same for every leg.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroundPlane<R> {
    /// World height of the plane at X = Z = 0.
    pub height: R,
    /// The plane's normal, world space (need not be unit length). A plane whose normal has no
    /// upward part (a wall) has no height: its queries answer `None`.
    pub normal: Vec3<R>,
}

impl<R: Real> GroundPlane<R> {
    /// A horizontal plane at world height `height`.
    #[must_use]
    pub const fn flat(height: R) -> Self {
        GroundPlane { height, normal: Vec3::Y }
    }

    /// The plane's height at `at`'s X and Z: `height − (n.x·x + n.z·z) / n.y`, `None` when
    /// `n.y` is not above 0. A non-finite plane gives a non-finite hit (which the job refuses).
    #[must_use]
    pub fn height_at(&self, at: Vec3<R>) -> Option<R> {
        let n = self.normal;
        if n.y > R::ZERO || !n.y.is_finite() {
            Some(self.height - (n.x * at.x + n.z * at.z) / n.y)
        } else {
            None
        }
    }
}

impl<R: Real> Ground<R> for GroundPlane<R> {
    fn ground(&mut self, _leg: usize, at: Vec3<R>) -> Option<GroundHit<R>> {
        Some(GroundHit { height: self.height_at(at)?, normal: self.normal })
    }
}
