//! Drawing one frame of the demo: the [`Layers`] a frame gets, the scene's or viewer's meshes,
//! lines and labels through the renderer (the viewer's spring colliders among them), the HUD
//! on top, the mouse cursor's ray ([`cursor_ray`]) the character looks along, and the ground
//! move of a mouse drag ([`ground_drag`]) that moves the viewed model.

use sinew::math::{Mat4, Vec3, Vec4};

use super::app::App;
use super::gl::Renderer;
use super::options::DemoError;
use crate::scene::{default_camera, LookRay, SceneLight};

/// Which overlays a frame gets besides the meshes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layers {
    /// The ground grid.
    pub grid: bool,
    /// Bone lines (when the scene's or viewer's bones are on), and the viewer's spring
    /// colliders (when they are on).
    pub bones: bool,
    /// HUD and labels.
    pub hud: bool,
}

impl Layers {
    /// Everything.
    pub const ALL: Layers = Layers { grid: true, bones: true, hud: true };
    /// The skinned meshes only (for comparing silhouettes with another renderer).
    pub const MESHES: Layers = Layers { grid: false, bones: false, hud: false };
}

/// Color of the ground grid and markers.
pub(super) const CLEAR_LINES: [f32; 4] = [0.42, 0.45, 0.52, 0.55];
/// Color of the bone lines.
const BONE_COLOR: [f32; 4] = [1.0, 0.92, 0.25, 1.0];
/// Color of the spring colliders that keep the tails out.
const COLLIDER_COLOR: [f32; 4] = [0.3, 0.9, 1.0, 0.9];
/// Color of the spring colliders that keep the tails in.
const INSIDE_COLLIDER_COLOR: [f32; 4] = [1.0, 0.45, 0.85, 0.9];

/// The ray from the eye through pixel `(x, y)` (top-left origin) of a `w × h` view drawn with
/// `view_proj`: the mouse cursor's ray for the character's look-at. `None` for a singular
/// matrix.
#[must_use]
pub fn cursor_ray(view_proj: &Mat4<f32>, x: f32, y: f32, w: f32, h: f32) -> Option<LookRay> {
    let inv = view_proj.inverse()?;
    let (nx, ny) = (2.0 * x / w.max(1.0) - 1.0, 1.0 - 2.0 * y / h.max(1.0));
    let unproject = |z: f32| {
        let p = inv.mul_vec4(Vec4::new(nx, ny, z, 1.0));
        (p.w.abs() > 1.0e-12).then(|| Vec3::new(p.x / p.w, p.y / p.w, p.z / p.w))
    };
    let (near, far) = (unproject(-1.0)?, unproject(1.0)?);
    let direction = far - near;
    (near.is_finite() && direction.try_normalize().is_some()).then_some(LookRay { origin: near, direction })
}

/// How far a mouse drag from pixel `from` to pixel `to` (top-left origin) of a `w × h` view
/// drawn with `view_proj` moves a point on the horizontal plane `y = height`: the difference of
/// the points of that plane under the two pixels. `None` when a ray misses the plane (parallel
/// to it, or the plane behind the eye) or the matrix is singular.
#[must_use]
pub fn ground_drag(
    view_proj: &Mat4<f32>,
    from: (f32, f32),
    to: (f32, f32),
    (w, h): (f32, f32),
    height: f32,
) -> Option<Vec3<f32>> {
    let on_ground = |(x, y): (f32, f32)| {
        let ray = cursor_ray(view_proj, x, y, w, h)?;
        let t = (height - ray.origin.y) / ray.direction.y;
        (t.is_finite() && t > 0.0).then(|| ray.origin + ray.direction * t)
    };
    let delta = on_ground(to)? - on_ground(from)?;
    delta.is_finite().then_some(Vec3::new(delta.x, 0.0, delta.z))
}

/// Projects a world point to pixels (top-left origin); `None` behind the camera.
fn project(view_proj: &Mat4<f32>, p: Vec3<f32>, w: f32, h: f32) -> Option<(f32, f32)> {
    let c = view_proj.mul_vec4(Vec4::new(p.x, p.y, p.z, 1.0));
    (c.w > 1.0e-6).then(|| ((c.x / c.w + 1.0) * 0.5 * w, (1.0 - c.y / c.w) * 0.5 * h))
}

impl App {
    /// Draws a frame into the window's back buffer or the offscreen target.
    pub(super) fn draw(
        &mut self,
        r: &mut Renderer,
        w: u32,
        h: u32,
        offscreen: bool,
        layers: Layers,
    ) -> Result<(), DemoError> {
        if self.crowd.is_some() {
            return self.draw_crowd(r, w, h, offscreen, layers);
        }
        r.begin_frame(w, h, offscreen)?;
        let aspect = w as f32 / h.max(1) as f32;
        if self.camera_auto && self.viewer.is_none() {
            self.camera = default_camera(aspect);
        }
        let view_proj = self.camera.view_proj(aspect);
        self.viewport = (w as f32, h as f32);
        // In a window the character looks at the mouse cursor; offscreen frames are a
        // function of time alone.
        self.scene.params.look_ray = match (offscreen, self.cursor) {
            (false, Some((x, y))) => cursor_ray(&view_proj, x, y, w as f32, h as f32),
            _ => None,
        };
        let light = SceneLight::DEFAULT;
        let skinning = self.skinning();
        let bones = self.scene.params.show_bones;
        let mut labels = Vec::new();
        {
            let frame = match &self.viewer {
                Some((v, _)) => v.frame(skinning, bones)?,
                None => self.scene.frame(self.time).map_err(DemoError::Scene)?,
            };
            if layers.grid {
                r.draw_lines(&frame.grid, &view_proj, CLEAR_LINES, false);
            }
            for o in &frame.objects {
                let gpu = match &self.viewer {
                    Some(_) if o.model_index == 1 => self.source_gpu.as_ref(),
                    Some((_, g)) => Some(g),
                    None => self.scene_gpu.get(o.model_index),
                };
                if let Some(g) = gpu {
                    r.draw_object(g, o, &view_proj, &light)?;
                }
            }
            if layers.bones {
                r.draw_lines(&frame.bones, &view_proj, BONE_COLOR, true);
            }
            if let Some((v, _)) = self.viewer.as_ref().filter(|(v, _)| v.show_colliders && layers.bones) {
                let lines = v.collider_lines();
                r.draw_lines(&lines.outside, &view_proj, COLLIDER_COLOR, true);
                r.draw_lines(&lines.inside, &view_proj, INSIDE_COLLIDER_COLOR, true);
            }
            if layers.hud {
                for l in &frame.labels {
                    if let Some(p) = project(&view_proj, l.position, w as f32, h as f32) {
                        labels.push((p, l.text.clone()));
                    }
                }
            }
        }
        if layers.hud && self.hud {
            let info = r.info.clone();
            let palette = r.palette_sizes();
            let hud = self.build_hud(&info, palette, w as f32, h as f32, &labels);
            r.draw_hud(&hud.vertices, w, h);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_ray_passes_through_the_point_under_the_cursor() {
        let (w, h) = (960.0, 540.0);
        let camera = default_camera(w / h);
        let vp = camera.view_proj(w / h);
        let mut worst = 0.0f32;
        for p in [Vec3::new(0.0, 1.5, -1.2), Vec3::new(-2.0, 0.3, 0.5), Vec3::new(1.7, 2.2, -2.5)] {
            let (x, y) = project(&vp, p, w, h).unwrap();
            let ray = cursor_ray(&vp, x, y, w, h).unwrap();
            let d = ray.direction.normalize_or_zero();
            let to = p - ray.origin;
            assert!(to.dot(d) > 0.0);
            worst = worst.max((to - d * to.dot(d)).length());
            // It starts near the eye (on the near plane) and looks away from it.
            assert!((ray.origin - camera.eye()).length() < camera.clip_planes().0 * 1.5);
        }
        assert!(worst < 1e-4, "{worst}");
        // The center pixel looks along the camera's axis.
        let ray = cursor_ray(&vp, w * 0.5, h * 0.5, w, h).unwrap();
        let axis = (camera.target - camera.eye()).normalize_or_zero();
        assert!(ray.direction.normalize_or_zero().dot(axis) > 0.99999);
        assert!(cursor_ray(&Mat4 { cols: [[0.0; 4]; 4] }, 1.0, 1.0, w, h).is_none());
    }
}
