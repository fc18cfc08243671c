//! The demo's state ([`App`]): the built-in scene or a viewed model with their GPU buffers,
//! the camera, the scene time, the HUD's state and the frame statistics, and loading models
//! into the viewer.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::draw::ground_drag;
use super::gl::{GpuModel, PartMode, Renderer};
use super::hud::{Mouse, Ui};
use super::options::{DemoError, DemoOptions};
use super::viewer::Viewer;
use crate::playback::{load_viewer, PlaybackOptions};
use crate::scene::{default_camera, Camera, Scene};
use sinew_offline::model::Skinning;

/// What a mouse drag does: to the camera, or to the viewed model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Drag {
    /// Turns the camera about its target.
    Orbit,
    /// Moves the camera's target in the view plane.
    Pan,
    /// Moves the viewed model on the ground plane (its springs swing).
    Model,
}

/// Frame times: running means for the HUD, totals for the report. The first frame (shader
/// compilation, buffer uploads) is drawn but not measured.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Stats {
    pub(super) drawn: u64,
    measured: u64,
    pub(super) frame_ms: f64,
    pub(super) cpu_ms: f64,
    total_frame_ms: f64,
    total_cpu_ms: f64,
}

impl Stats {
    pub(super) fn add(&mut self, frame_ms: f64, cpu_ms: f64) {
        self.drawn += 1;
        if self.drawn == 1 {
            return;
        }
        let a = if self.measured == 0 { 1.0 } else { 0.1 };
        self.frame_ms += (frame_ms - self.frame_ms) * a;
        self.cpu_ms += (cpu_ms - self.cpu_ms) * a;
        self.measured += 1;
        self.total_frame_ms += frame_ms;
        self.total_cpu_ms += cpu_ms;
    }

    pub(super) fn mean_frame_ms(&self) -> f64 {
        self.total_frame_ms / self.measured.max(1) as f64
    }

    pub(super) fn mean_cpu_ms(&self) -> f64 {
        self.total_cpu_ms / self.measured.max(1) as f64
    }
}

/// A message shown on the HUD for a while.
pub(super) struct Message {
    pub(super) text: String,
    pub(super) error: bool,
    pub(super) at: Instant,
}

/// The demo's state: the scene or a viewed model, camera, time, HUD.
pub(super) struct App {
    pub(super) scene: Scene,
    pub(super) scene_gpu: Vec<GpuModel>,
    pub(super) viewer: Option<(Viewer, GpuModel)>,
    pub(super) camera: Camera,
    /// The camera is the scene's default for the viewport's aspect (until the user moves it).
    pub(super) camera_auto: bool,
    pub(super) time: f32,
    pub(super) paused: bool,
    pub(super) help: bool,
    pub(super) hud: bool,
    pub(super) message: Option<Message>,
    pub(super) ui: Ui,
    pub(super) mouse: Mouse,
    pub(super) drag: Option<Drag>,
    pub(super) stats: Stats,
    /// F12 was pressed: save the next frame.
    pub(super) snapshot: bool,
    /// The mouse cursor in the window, in pixels (`None` outside): the character looks at it.
    pub(super) cursor: Option<(f32, f32)>,
    /// What drives every model loaded (a graph file, or a retarget source), as the command line
    /// asked; its model and clip are the first model's.
    pub(super) playback: PlaybackOptions,
    /// The retarget source's GPU buffers, while the viewer has one.
    pub(super) source_gpu: Option<GpuModel>,
    /// A shift key is held (a left drag then moves the viewed model).
    pub(super) shift: bool,
    /// The size of the last frame drawn, in pixels (for mouse drags on the ground).
    pub(super) viewport: (f32, f32),
    /// Draw the spring colliders of every model loaded from the start.
    colliders: bool,
    /// The crowd of the viewed model, in crowd mode.
    pub(super) crowd: Option<super::crowd::CrowdView>,
}

fn is_ext(path: &Path, ext: &str) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

impl App {
    /// The built-in scene uploaded to `r`, with the camera, HUD and skinning of `opts`.
    pub(super) fn new(r: &Renderer, opts: &DemoOptions) -> Result<App, DemoError> {
        let mut scene = Scene::new(Some(r.palette_size)).map_err(DemoError::Scene)?;
        scene.params.skinning = opts.skinning;
        scene.params.show_bones = opts.bones;
        let scene_gpu = scene.models().iter().map(|m| r.upload(m)).collect::<Result<Vec<_>, _>>()?;
        Ok(App {
            scene,
            scene_gpu,
            viewer: None,
            camera: default_camera(opts.width as f32 / opts.height.max(1) as f32),
            camera_auto: true,
            time: 0.0,
            paused: false,
            help: true,
            hud: opts.hud,
            message: None,
            ui: Ui::default(),
            mouse: Mouse::default(),
            drag: None,
            stats: Stats::default(),
            snapshot: false,
            cursor: None,
            playback: opts.playback.clone(),
            source_gpu: None,
            shift: false,
            viewport: (opts.width as f32, opts.height as f32),
            colliders: opts.colliders,
            crowd: None,
        })
    }

    /// Shows `text` on the HUD for a while (as an error or not) and logs it.
    pub(super) fn say(&mut self, text: String, error: bool) {
        eprintln!("sinew demo: {text}");
        self.message = Some(Message { text, error, at: Instant::now() });
    }

    /// Loads the model of `opts` into the viewer, driven and playing as `opts` says (see
    /// [`load_viewer`]); on failure (or without a model) the current view stays and the error is
    /// shown.
    pub(super) fn load(&mut self, r: &Renderer, opts: &PlaybackOptions) -> Result<(), String> {
        let fail = |app: &mut App, msg: String| {
            app.say(msg.clone(), true);
            Err(msg)
        };
        let mut v = match load_viewer(opts, r.palette_sizes()) {
            Ok(Some(v)) => v,
            Ok(None) => return fail(self, "no model to load".into()),
            Err(e) => return fail(self, e.to_string()),
        };
        let path = v.path.clone();
        let source_gpu = match v.retarget.as_ref().map(|d| (r.upload(&d.source), &d.path)) {
            Some((Ok(g), _)) => Some(g),
            Some((Err(e), p)) => return fail(self, format!("cannot upload {}: {e}", p.display())),
            None => None,
        };
        let gpu = match r.upload(&v.model) {
            Ok(g) => g,
            Err(e) => {
                if let Some(g) = source_gpu {
                    r.free(g);
                }
                return fail(self, format!("cannot upload {}: {e}", path.display()));
            }
        };
        let modes = gpu.modes();
        let parts: usize = modes.iter().map(Vec::len).sum();
        let cpu: Vec<String> = modes
            .iter()
            .flatten()
            .filter_map(|m| if let PartMode::Cpu(why) = m { Some(why.clone()) } else { None })
            .collect();
        let mut text = format!(
            "loaded {} ({} joints, {} clips, {parts} mesh parts)",
            path.display(),
            v.model.skeleton().num_joints(),
            v.num_clips()
        );
        if let Some(why) = cpu.first() {
            text.push_str(&format!("; {} parts skinned on the CPU: {why}", cpu.len()));
        }
        if let Some(d) = &v.retarget {
            text.push_str(&format!("; playing the clips of {} retargeted", d.path.display()));
        }
        match v.setup_springs() {
            Ok(true) => text.push_str(&format!(
                "; {} spring joints, {} colliders (K springs, O colliders)",
                v.spring_joints(),
                v.spring_colliders()
            )),
            Ok(false) => {}
            Err(e) => text.push_str(&format!("; springs refused: {e}")),
        }
        v.show_colliders = self.colliders;
        self.camera = Camera::framing(v.center, v.radius);
        self.camera_auto = false;
        // A model or retarget source without meshes (motion capture) shows its bones.
        if v.meshless() {
            self.scene.params.show_bones = true;
        }
        // The crowd drew with the old model's textures: it ends with it.
        self.stop_crowd(r);
        if let Some((_, old)) = self.viewer.replace((v, gpu)) {
            r.free(old);
        }
        if let Some(old) = std::mem::replace(&mut self.source_gpu, source_gpu) {
            r.free(old);
        }
        self.say(text, false);
        Ok(())
    }

    /// Goes back from a viewed model to the built-in scene.
    pub(super) fn close_model(&mut self, r: &Renderer) {
        self.stop_crowd(r);
        if let Some((_, gpu)) = self.viewer.take() {
            r.free(gpu);
            self.camera_auto = true;
        }
        if let Some(gpu) = self.source_gpu.take() {
            r.free(gpu);
        }
    }

    /// Opens a file dropped on the window: a model, or an `.md5anim` for the viewed `.md5mesh`.
    pub(super) fn drop_file(&mut self, r: &Renderer, path: PathBuf) {
        if is_ext(&path, "md5anim") {
            let md5 = self.viewer.as_ref().map(|(v, _)| v.path.clone()).filter(|p| is_ext(p, "md5mesh"));
            match md5 {
                Some(mesh) => {
                    let opts = self.playback.with_model(&mesh, Some(&path));
                    let _ = self.load(r, &opts);
                }
                None => self.say(format!("{}: drop the .md5mesh first, then its .md5anim", path.display()), true),
            }
        } else {
            let opts = self.playback.with_model(&path, None);
            let _ = self.load(r, &opts);
        }
    }

    /// The skinning method of every skinned mesh but the candy wrappers.
    pub(super) fn skinning(&self) -> Skinning {
        self.scene.params.skinning
    }

    /// Switches between LBS and DQS.
    pub(super) fn toggle_skinning(&mut self) {
        self.scene.params.skinning = match self.scene.params.skinning {
            Skinning::Lbs => Skinning::Dqs,
            Skinning::Dqs => Skinning::Lbs,
        };
    }

    /// Puts the viewed model back at the origin (its springs at rest) and frames it again, or
    /// goes back to the scene's default camera.
    pub(super) fn reset_camera(&mut self) {
        if let Some(c) = &self.crowd {
            self.camera = c.camera();
            return;
        }
        match self.viewer.as_mut() {
            Some((v, _)) => {
                v.reset_placement();
                self.camera = Camera::framing(v.center, v.radius);
            }
            None => self.camera_auto = true,
        }
    }

    /// Moves the viewed model along the ground (the plane of its lowest point) by as much as
    /// the mouse moved from pixel `from` to pixel `to` over it; nothing without a model or
    /// where the rays miss the ground.
    pub(super) fn drag_model(&mut self, from: (f32, f32), to: (f32, f32)) {
        let aspect = self.viewport.0 / self.viewport.1.max(1.0);
        let view_proj = self.camera.view_proj(aspect);
        if let Some((v, _)) = self.viewer.as_mut() {
            let height = v.floor + v.placement().y;
            if let Some(delta) = ground_drag(&view_proj, from, to, self.viewport, height) {
                v.move_by(delta);
            }
        }
    }

    /// Advances time by `dt` seconds of wall time.
    pub(super) fn advance(&mut self, dt: f32) {
        if self.advance_crowd(dt) {
            return;
        }
        match self.viewer.as_mut() {
            Some((v, _)) => {
                if let Err(e) = v.advance(dt) {
                    // Not expected once the graph loaded: the model goes back to its clips.
                    v.graph = None;
                    self.say(format!("graph stopped: {e}"), true);
                }
            }
            None if !self.paused => self.time += dt,
            None => {}
        }
    }
}
