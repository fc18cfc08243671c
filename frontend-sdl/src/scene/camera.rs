//! The camera and the light both renderers use, so their images can be compared: an orbit
//! [`Camera`], the scene's [`default_camera`] for any aspect, and the directional
//! [`SceneLight`].

use sinew::math::{Mat4, Vec3};

/// An orbit camera: it looks at `target` from `distance` away, turned `yaw` about +Y (0 looks
/// from +Z towards −Z) and raised `pitch` above the horizon.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// Point looked at.
    pub target: Vec3<f32>,
    /// Turn about +Y, in radians.
    pub yaw: f32,
    /// Elevation above the horizon, in radians (kept within ±1.5).
    pub pitch: f32,
    /// Distance from the target.
    pub distance: f32,
    /// Vertical field of view, in radians.
    pub fov_y: f32,
}

impl Camera {
    /// The eye position.
    #[must_use]
    pub fn eye(&self) -> Vec3<f32> {
        let (sp, cp) = self.pitch.sin_cos();
        let (sy, cy) = self.yaw.sin_cos();
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
        (self.distance * 0.02, self.distance * 20.0)
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
    /// Turns the camera by `dyaw`, `dpitch` (radians), keeping the pitch within ±1.5.
    pub fn orbit(&mut self, dyaw: f32, dpitch: f32) {
        self.yaw += dyaw;
        self.pitch = (self.pitch + dpitch).clamp(-1.5, 1.5);
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
        let fov_y = 40f32.to_radians();
        let radius = if radius.is_finite() && radius > 0.0 { radius } else { 1.0 };
        Camera { target: center, yaw: 0.35, pitch: 0.3, distance: radius * 1.1 / (fov_y * 0.5).sin(), fov_y }
    }
}

/// The default scene's camera for a viewport `aspect` (width / height) wide: the tentacle on
/// the left, the character's path in the middle and the two candy wrappers on the right. At
/// 16:9 and wider the scene fills the width; narrower viewports move the camera back so the
/// whole scene stays in view.
#[must_use]
pub fn default_camera(aspect: f32) -> Camera {
    let wide = 16.0 / 9.0;
    let aspect = if aspect.is_finite() && aspect > 0.0 { aspect } else { wide };
    Camera {
        target: Vec3::new(-0.25, 0.7, -0.5),
        yaw: 0.0,
        pitch: 0.3,
        distance: 6.0 * (wide / aspect).max(1.0),
        fov_y: 45f32.to_radians(),
    }
}

/// The directional light both renderers use: a surface with unit normal `n̂` gets the level
/// `ambient + diffuse · max(0, n̂ · l̂)` (clamped to 1) times its color.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SceneLight {
    /// World-space direction from surfaces towards the light (any non-zero length).
    pub direction: Vec3<f32>,
    /// Level of surfaces facing away from the light.
    pub ambient: f32,
    /// Extra level of surfaces facing the light head-on.
    pub diffuse: f32,
}

impl SceneLight {
    /// From the viewer's upper left, `(−1, 1, 1)`; ambient 0.25, diffuse 0.75 (the software
    /// rasterizer's default light).
    pub const DEFAULT: SceneLight =
        SceneLight { direction: Vec3 { x: -1.0, y: 1.0, z: 1.0 }, ambient: 0.25, diffuse: 0.75 };
}

impl Default for SceneLight {
    fn default() -> Self {
        Self::DEFAULT
    }
}
