//! The orbit camera every viewer frames a model with ([`Camera`]): the desktop viewers, the
//! browser viewer and the three.js page show a model's bind-pose bounds from the same place.
//! The trigonometry is the core's, so each front end computes the same matrices.

use sinew::math::ops::sin_cos;
use sinew::math::{Mat4, Vec3};

/// An orbit camera: it looks at `target` from `distance` away, turned `yaw` about +Y (0 looks
/// from +Z towards −Z) and raised `pitch` above the horizon.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// Point looked at.
    pub target: Vec3<f32>,
    /// Turn about +Y, in radians.
    pub yaw: f32,
    /// Elevation above the horizon, in radians (kept within ±[`Camera::MAX_PITCH`] by
    /// [`Camera::orbit`]).
    pub pitch: f32,
    /// Distance from the target.
    pub distance: f32,
    /// Vertical field of view, in radians.
    pub fov_y: f32,
}

impl Camera {
    /// The largest elevation [`Camera::orbit`] reaches, in radians.
    pub const MAX_PITCH: f32 = 1.5;
    /// The near plane's distance from the eye, per unit of [`Camera::distance`].
    pub const NEAR_PER_DISTANCE: f32 = 0.02;
    /// The far plane's distance from the eye, per unit of [`Camera::distance`].
    pub const FAR_PER_DISTANCE: f32 = 20.0;
    /// [`Camera::framing`]'s turn about +Y, in radians.
    pub const FRAMING_YAW: f32 = 0.35;
    /// [`Camera::framing`]'s elevation, in radians.
    pub const FRAMING_PITCH: f32 = 0.3;
    /// [`Camera::framing`]'s vertical field of view: 40°, in radians.
    pub const FRAMING_FOV_Y: f32 = 0.698_131_7;
    /// [`Camera::framing`]'s distance per unit of radius: `1.1 / sin(20°)`, the sphere
    /// filling the field of view with a tenth to spare.
    pub const FRAMING_DISTANCE_PER_RADIUS: f32 = 3.216_184_8;

    /// The eye position.
    #[must_use]
    pub fn eye(&self) -> Vec3<f32> {
        let (sp, cp) = sin_cos(self.pitch);
        let (sy, cy) = sin_cos(self.yaw);
        self.target + Vec3::new(cp * sy, sp, cp * cy) * self.distance
    }

    /// The view matrix (world to eye).
    #[must_use]
    pub fn view(&self) -> Mat4<f32> {
        Mat4::look_at_rh(self.eye(), self.target, Vec3::Y)
    }

    /// The near and far planes: proportional to the distance, so any framing keeps depth
    /// precision.
    #[must_use]
    pub fn clip_planes(&self) -> (f32, f32) {
        (self.distance * Self::NEAR_PER_DISTANCE, self.distance * Self::FAR_PER_DISTANCE)
    }

    /// The projection for a viewport `aspect` (width / height) wide, OpenGL clip conventions.
    #[must_use]
    pub fn projection(&self, aspect: f32) -> Mat4<f32> {
        let (near, far) = self.clip_planes();
        let aspect = if aspect.is_finite() && aspect > 0.0 { aspect } else { 1.0 };
        Mat4::perspective_rh_gl(self.fov_y, aspect, near, far)
    }

    /// Projection × view.
    #[must_use]
    pub fn view_proj(&self, aspect: f32) -> Mat4<f32> {
        self.projection(aspect) * self.view()
    }

    /// Turns the camera by `dyaw`, `dpitch` (radians), keeping the pitch within
    /// ±[`Camera::MAX_PITCH`].
    pub fn orbit(&mut self, dyaw: f32, dpitch: f32) {
        self.yaw += dyaw;
        self.pitch = (self.pitch + dpitch).clamp(-Self::MAX_PITCH, Self::MAX_PITCH);
    }

    /// Multiplies the distance by `factor` (clamped to stay positive and finite).
    pub fn zoom(&mut self, factor: f32) {
        if factor.is_finite() && factor > 0.0 {
            self.distance = (self.distance * factor).clamp(1.0e-3, 1.0e6);
        }
    }

    /// A camera that shows a sphere (`center`, `radius`) whole from a slightly raised front
    /// view, in any viewport at least as wide as tall.
    #[must_use]
    pub fn framing(center: Vec3<f32>, radius: f32) -> Camera {
        let radius = if radius.is_finite() && radius > 0.0 { radius } else { 1.0 };
        Camera {
            target: center,
            yaw: Self::FRAMING_YAW,
            pitch: Self::FRAMING_PITCH,
            distance: radius * Self::FRAMING_DISTANCE_PER_RADIUS,
            fov_y: Self::FRAMING_FOV_Y,
        }
    }
}

/// A round spacing for the floor grid under a model of `radius`: 1, 2 or 5 times a power of
/// ten, about a fifth of the radius.
#[must_use]
pub fn grid_step(radius: f32) -> f32 {
    let target = if radius.is_finite() { (radius / 5.0).max(1.0e-4) } else { 1.0 };
    let mut p = 1.0f32;
    while p > target && p > 1.0e-6 {
        p /= 10.0;
    }
    while p * 10.0 <= target && p < 1.0e30 {
        p *= 10.0;
    }
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * p).find(|&s| s >= target).unwrap_or(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_framing_shows_the_sphere_and_orbit_and_zoom_stay_in_range() {
        let mut c = Camera::framing(Vec3::new(1.0, 2.0, 3.0), 2.0);
        assert!((Camera::FRAMING_FOV_Y - 40f32.to_radians()).abs() < 1e-7);
        let (sin_half, _) = sin_cos(c.fov_y * 0.5);
        // The sphere fits the vertical field of view with a tenth to spare.
        assert!((2.0 / c.distance - sin_half / 1.1).abs() < 1e-6);
        assert!((Camera::FRAMING_DISTANCE_PER_RADIUS * sin_half - 1.1).abs() < 1e-6);
        assert!(((c.eye() - c.target).length() - c.distance).abs() < 1e-4);
        c.orbit(0.5, 10.0);
        assert_eq!(c.pitch, Camera::MAX_PITCH);
        c.zoom(f32::NAN);
        c.zoom(1e-12);
        assert_eq!(c.distance, 1.0e-3);
        assert_eq!(Camera::framing(Vec3::ZERO, f32::NAN).distance, Camera::framing(Vec3::ZERO, 1.0).distance);
        // The target projects to the middle of the viewport.
        let p = c.view_proj(1.5).transform_point3(c.target);
        assert!(p.x.abs() < 1e-4 && p.y.abs() < 1e-4, "{p:?}");
    }

    #[test]
    fn grid_steps_are_round() {
        assert_eq!(grid_step(5.0), 1.0);
        assert_eq!(grid_step(6.0), 2.0);
        assert!((grid_step(0.9) - 0.2).abs() < 1e-6);
        assert!((grid_step(40.0) - 10.0).abs() < 1e-4);
        assert!((grid_step(0.003) - 0.001).abs() < 1e-7);
        assert_eq!(grid_step(f32::INFINITY), 1.0);
    }
}
