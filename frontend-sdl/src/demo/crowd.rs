//! The demo's crowd mode (`sinew demo MODEL --crowd N`): N instances of the viewed model on
//! the host layer's grid ([`sinew_host::crowd::Crowd`]), each at its own phase, clip, speed and
//! heading, evaluated each frame on every core (the crowd's jobs on `std::thread::scope`
//! threads) with pose sharing and update-rate levels of detail from the camera (off with
//! `--no-lod`), and drawn with one instanced draw call per mesh part, or instance by instance
//! with uniforms where the context lacks instancing, float textures or vertex texture fetch
//! (or with `--no-instancing`), which the demo says once.
//!
//! The camera frames the whole crowd; the floor grid lies under it; the HUD shows
//! `crowd N  evaluated E  shared S  held H  draws D  cpu X.XX ms`, where cpu is the crowd
//! frame's CPU time (planning, evaluation and building the upload data). Pause and speed
//! keys drive the whole crowd; the clip keys change nothing in it.

use std::rc::Rc;
use std::time::Instant;

use sinew::crowd::{CrowdError, CrowdStats};
use sinew::math::{Mat4, Vec3};
use sinew_host::crowd::{Crowd, CrowdJob, CrowdSettings};
use sinew_host::limits::DesktopRig;

use super::app::App;
use super::draw::Layers;
use super::gl::{CrowdGpu, GpuModel, Renderer};
use super::options::DemoError;
use super::viewer::Viewer;
use crate::scene::{ground_grid, Camera, SceneLight};

/// How the crowd is asked for (`--crowd N`, `--no-lod`, `--no-instancing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrowdOptions {
    /// Instances (at least 1).
    pub count: usize,
    /// Pose sharing and update-rate levels of detail.
    pub lod: bool,
    /// Draw instanced where the context can (else instance by instance with uniforms).
    pub instancing: bool,
}

/// The elevation the crowd is seen from, in radians: higher than a single model's framing,
/// so rows behind rows show.
const CROWD_PITCH: f32 = 0.55;

/// The crowd, its GPU side and the last frame's figures.
pub(super) struct CrowdView {
    crowd: Crowd,
    gpu: CrowdGpu,
    /// Model to world (the viewed model's up-axis turn and placement).
    world: Mat4<f32>,
    rows: Vec<f32>,
    threads: usize,
    /// Seconds of crowd time to advance by at the next frame.
    pending: f32,
    /// The crowd's bounding sphere in world space, and its floor height.
    center: Vec3<f32>,
    radius: f32,
    floor: f32,
    /// Draw calls of the last frame.
    pub(super) draws: usize,
    /// CPU time of the last crowd frame, in milliseconds.
    pub(super) cpu_ms: f64,
    /// The last frame's counts.
    pub(super) stats: CrowdStats,
    /// How it is drawn, for the HUD.
    pub(super) how: String,
    /// Mesh parts drawn (each one draw call when instanced).
    pub(super) parts: usize,
}

impl std::fmt::Debug for CrowdView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrowdView")
            .field("instances", &self.crowd.len())
            .field("how", &self.how)
            .finish_non_exhaustive()
    }
}

fn crowd_error(e: CrowdError) -> DemoError {
    DemoError::Load(format!("crowd: {e}"))
}

/// Runs a frame's jobs: on this thread when there is one, else each on its own scoped thread.
fn run_jobs(jobs: Vec<CrowdJob<'_>>) -> Result<(), CrowdError> {
    if jobs.len() <= 1 {
        return jobs.into_iter().try_for_each(CrowdJob::run);
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = jobs.into_iter().map(|j| s.spawn(move || j.run())).collect();
        // A job that panicked reports the rig as unusable.
        handles.into_iter().try_for_each(|h| h.join().unwrap_or(Err(CrowdError::InvalidRig)))
    })
}

impl CrowdView {
    /// A crowd of the viewer's model, its parts uploaded to `r` with the textures of `gpu`
    /// (the viewer's buffers); returns it and the message to say once (how it is drawn, and
    /// why not instanced when it is not).
    fn new(r: &Renderer, v: &Viewer, gpu: &GpuModel, opts: CrowdOptions) -> Result<(CrowdView, String), DemoError> {
        let host = sinew_host::Model::open::<{ DesktopRig::SOA }>(v.model.bytes().into(), Some(r.rigid_palette_size))
            .map_err(|e| DemoError::Load(format!("crowd: {e}")))?;
        if host.skins.is_empty() {
            return Err(DemoError::Load(format!("crowd: {} has no skin (a crowd draws skinned meshes)", v.model.name)));
        }
        if host.clips.is_empty() {
            return Err(DemoError::Load(format!("crowd: {} has no clip to play", v.model.name)));
        }
        let host = Rc::new(host);
        let settings = CrowdSettings { lod: opts.lod, z_up: v.z_up, ..CrowdSettings::new(opts.count.max(1)) };
        let crowd = Crowd::new(host.clone(), settings).map_err(crowd_error)?;
        let layout = *crowd.layout();
        let support = if opts.instancing {
            r.crowd_support(layout.width, layout.height)
        } else {
            Err("--no-instancing".to_string())
        };
        let parts: Vec<(usize, &sinew_host::parts::DrawPart)> =
            host.meshes.iter().enumerate().flat_map(|(m, ps)| ps.iter().map(move |p| (m, p))).collect();
        let rigid = parts.iter().filter(|(_, p)| p.is_rigid()).count();
        let gpu = r.upload_crowd(&parts, gpu, (layout.width, layout.height), support.as_ref().ok().copied())?;
        let skinned = parts.len() - rigid;
        let how = match &support {
            Ok(s) => format!("instanced ({}, {})", s.instancing, s.float_textures),
            Err(why) => format!("instance by instance with uniforms ({why})"),
        };
        let mut say = format!(
            "crowd of {} {}: {skinned} mesh parts, palette texture {} x {} texels, drawn {how}",
            crowd.len(),
            v.model.name,
            layout.width,
            layout.height
        );
        if rigid > 0 {
            say.push_str(&format!("; {rigid} rigid parts left out"));
        }
        // The host's framing of the crowd, carried into the viewer's world (a translation and
        // the up-axis turn: lengths are kept).
        let world = v.world();
        let (center, radius) = crowd.bounds();
        let center = world.transform_point3(center);
        let floor = v.floor;
        let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        let view = CrowdView {
            crowd,
            gpu,
            world,
            rows: Vec::new(),
            threads,
            pending: 0.0,
            center,
            radius,
            floor,
            draws: 0,
            cpu_ms: 0.0,
            stats: CrowdStats::default(),
            how,
            parts: skinned,
        };
        Ok((view, say))
    }

    /// The camera that shows the whole crowd.
    pub(super) fn camera(&self) -> Camera {
        Camera { pitch: CROWD_PITCH, ..Camera::framing(self.center, self.radius) }
    }

    /// Adds `dt` seconds of crowd time to the next frame.
    pub(super) fn queue(&mut self, dt: f32) {
        if dt.is_finite() && dt > 0.0 {
            self.pending += dt;
        }
    }

    /// Instances.
    pub(super) fn len(&self) -> usize {
        self.crowd.len()
    }

    /// The HUD's crowd line.
    pub(super) fn hud_line(&self) -> String {
        format!(
            "crowd {}  evaluated {}  shared {}  held {}  draws {}  cpu {:.2} ms",
            self.crowd.len(),
            self.stats.evaluated,
            self.stats.shared,
            self.stats.held,
            self.draws,
            self.cpu_ms
        )
    }

    /// Runs the crowd's frame seen from `camera` in a viewport `height` pixels tall (levels of
    /// detail), builds the instance rows and uploads what changed.
    fn frame(&mut self, r: &Renderer, camera: &Camera, height: f32) -> Result<(), DemoError> {
        let t0 = Instant::now();
        // The crowd's frame is the model's: the eye goes back through the world matrix.
        let eye = self.world.inverse().map_or(camera.eye(), |inv| inv.transform_point3(camera.eye()));
        let scale = self.world.cols[0][0].hypot(self.world.cols[0][1]).hypot(self.world.cols[0][2]).max(1e-6);
        let focal = height / (2.0 * (camera.fov_y * 0.5).tan()) / scale;
        self.crowd.set_camera(eye, focal);
        let dt = std::mem::take(&mut self.pending);
        self.stats = self.crowd.frame_with(dt, self.threads, run_jobs).map_err(crowd_error)?;
        self.rows.clear();
        self.crowd.instance_rows(&mut self.rows);
        self.cpu_ms = t0.elapsed().as_secs_f64() * 1000.0;
        r.upload_crowd_frame(&mut self.gpu, self.crowd.palette(), self.crowd.written_rows(), &self.rows);
        Ok(())
    }

    /// Deletes its GPU objects.
    pub(super) fn free(self, r: &Renderer) {
        r.free_crowd(self.gpu);
    }
}

impl App {
    /// Starts the crowd mode on the viewed model: `opts.count` instances, the camera framing
    /// them all; says how they are drawn.
    ///
    /// # Errors
    ///
    /// [`DemoError::Options`] without a viewed model, [`DemoError::Load`] for a model the
    /// crowd refuses (no skin or no clip), [`DemoError::Gl`] for GL objects that cannot be made.
    pub(super) fn start_crowd(&mut self, r: &Renderer, opts: CrowdOptions) -> Result<(), DemoError> {
        let Some((v, gpu)) = self.viewer.as_ref() else {
            return Err(DemoError::Options("--crowd needs a model".into()));
        };
        let (view, say) = CrowdView::new(r, v, gpu, opts)?;
        self.camera = view.camera();
        self.camera_auto = false;
        if let Some(old) = self.crowd.replace(view) {
            old.free(r);
        }
        self.say(say, false);
        Ok(())
    }

    /// Ends the crowd mode, if on.
    pub(super) fn stop_crowd(&mut self, r: &Renderer) {
        if let Some(c) = self.crowd.take() {
            c.free(r);
        }
    }

    /// Draws a frame of the crowd: its frame evaluated for this camera, the floor grid, the
    /// crowd, the HUD.
    pub(super) fn draw_crowd(
        &mut self,
        r: &mut Renderer,
        w: u32,
        h: u32,
        offscreen: bool,
        layers: Layers,
    ) -> Result<(), DemoError> {
        r.begin_frame(w, h, offscreen)?;
        let aspect = w as f32 / h.max(1) as f32;
        let view_proj = self.camera.view_proj(aspect);
        self.viewport = (w as f32, h as f32);
        let camera = self.camera;
        let Some(c) = self.crowd.as_mut() else { return Ok(()) };
        c.frame(r, &camera, h as f32)?;
        if layers.grid {
            let step = sinew_host::camera::grid_step(c.radius);
            let half = (c.radius * 1.1 / step).ceil() * step;
            let (cx, cz) = ((c.center.x / step).round() * step, (c.center.z / step).round() * step);
            let grid: Vec<[Vec3<f32>; 2]> = ground_grid(cx - half, cx + half, cz - half, cz + half, step)
                .into_iter()
                .map(|l| l.map(|p| Vec3::new(p.x, c.floor, p.z)))
                .collect();
            r.draw_lines(&grid, &view_proj, super::draw::CLEAR_LINES, false);
        }
        c.draws = r.draw_crowd(&c.gpu, c.crowd.palette(), &c.rows, &c.world, &view_proj, &SceneLight::DEFAULT);
        if layers.hud && self.hud {
            let info = r.info.clone();
            let palette = r.palette_sizes();
            let hud = self.build_hud(&info, palette, w as f32, h as f32, &[]);
            r.draw_hud(&hud.vertices, w, h);
        }
        Ok(())
    }

    /// Advances the crowd by `dt` seconds of wall time, at the viewer's speed unless it is
    /// paused; `false` when there is no crowd.
    pub(super) fn advance_crowd(&mut self, dt: f32) -> bool {
        let (playing, speed) = self.viewer.as_ref().map_or((true, 1.0), |(v, _)| (v.is_playing(), v.speed()));
        match self.crowd.as_mut() {
            Some(c) => {
                if playing {
                    c.queue(dt * speed);
                }
                true
            }
            None => false,
        }
    }
}
