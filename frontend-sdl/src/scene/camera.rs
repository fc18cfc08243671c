//! The camera and the light both renderers use, so their images can be compared: the host
//! layer's orbit [`Camera`] (the browser viewer's too), the scene's [`default_camera`] for any
//! aspect, and the directional [`SceneLight`].

use sinew::math::Vec3;

pub use sinew_host::camera::Camera;

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
