//! `sinew demo`: an SDL2 window with an OpenGL ES 2.0 context (desktop OpenGL 2.1 where ES is
//! unavailable) whose GLSL ES 1.00 vertex shaders skin the meshes (LBS or DQS).
//!
//! Without a model it shows the built-in [`scene`](crate::scene): the tentacle with its speed
//! and amplitude sliders, the humanoid driven by the core's controller (walking its path,
//! running, waving, looking at the mouse cursor), and the candy-wrapper twist in LBS beside DQS.
//! With a model file (on the command line, or dropped on the window) it is a viewer: clip list,
//! play/pause, scrub, speed, loop mode, crossfade, blend weight, bones, orbit camera.
//!
//! With `--frames N` (or `--screenshot`) it runs headless: a hidden window, N frames into an
//! offscreen target, a GL error check after each, and the last frame written as a PNG.
//! [`Headless`] offers the same to tests: the default scene at a time, as RGBA pixels.

pub mod font;
pub mod gl;
pub mod hud;
pub mod shaders;
pub mod viewer;
pub mod window;

use std::path::{Path, PathBuf};
use std::time::Instant;

use sdl2::event::{Event, WindowEvent};
use sdl2::keyboard::{Keycode, Mod};
use sdl2::mouse::MouseButton;
use sinew::job::JobError;
use sinew::math::{Mat4, Vec3, Vec4};

pub use gl::{GlError, GlInfo, GpuModel, Renderer};
pub use window::{GlRequest, GlWindow};

use crate::scene::{
    default_camera, Camera, LookRay, Scene, SceneError, SceneLight, IDLE, RUN, TENTACLE_AMPLITUDE_RANGE,
    TENTACLE_SPEED_RANGE, WALK, WAVE,
};
use hud::{color, Hud, Mouse, Ui};
use sinew_pipeline::model::Skinning;
use viewer::{loop_mode_name, Viewer};

/// What `sinew demo` should do.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoOptions {
    /// A model to view instead of the built-in scene.
    pub model: Option<PathBuf>,
    /// md5 animation for an `.md5mesh` model.
    pub anim: Option<PathBuf>,
    /// The viewer's first clip, by name or index (default: the first).
    pub clip: Option<String>,
    /// Headless: render this many frames, then stop.
    pub frames: Option<u64>,
    /// Headless: write the last frame here (PNG).
    pub screenshot: Option<PathBuf>,
    /// Headless: scene time of the last frame, in seconds (default `frames / 60`).
    pub time: Option<f32>,
    /// Window or image width in pixels.
    pub width: u32,
    /// Window or image height in pixels.
    pub height: u32,
    /// Largest palette for the skinning shaders (default: what the uniform budget allows).
    pub palette: Option<usize>,
    /// Initial skinning method.
    pub skinning: Skinning,
    /// Show bones from the start.
    pub bones: bool,
    /// Draw the HUD.
    pub hud: bool,
    /// Which GL context to ask for.
    pub gl: GlRequest,
}

impl Default for DemoOptions {
    fn default() -> Self {
        DemoOptions {
            model: None,
            anim: None,
            clip: None,
            frames: None,
            screenshot: None,
            time: None,
            width: 1280,
            height: 720,
            palette: None,
            skinning: Skinning::Lbs,
            bones: false,
            hud: true,
            gl: GlRequest::Auto,
        }
    }
}

/// Why the demo stopped.
#[derive(Debug)]
pub enum DemoError {
    /// Invalid options.
    Options(String),
    /// SDL or context creation failed.
    Window(String),
    /// A GL object or shader failed.
    Gl(GlError),
    /// The built-in scene could not be built.
    Scene(SceneError),
    /// A model could not be loaded (headless runs stop on it; the window shows it instead).
    Load(String),
    /// A pose job failed.
    Job(JobError),
    /// GL reported errors after a frame (headless runs stop on them).
    GlErrors {
        /// Frame number, from 0.
        frame: u64,
        /// The error codes.
        codes: Vec<u32>,
    },
    /// Writing the screenshot failed.
    Screenshot(String),
}

impl std::fmt::Display for DemoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Options(s) => write!(f, "{s}"),
            Self::Window(s) => write!(f, "window: {s}"),
            Self::Gl(e) => write!(f, "{e}"),
            Self::Scene(e) => write!(f, "scene: {e}"),
            Self::Load(s) => write!(f, "{s}"),
            Self::Job(e) => write!(f, "pose: {e}"),
            Self::GlErrors { frame, codes } => {
                let list: Vec<String> = codes.iter().map(|c| format!("0x{c:04x}")).collect();
                write!(f, "GL errors after frame {frame}: {}", list.join(", "))
            }
            Self::Screenshot(s) => write!(f, "screenshot: {s}"),
        }
    }
}

impl std::error::Error for DemoError {}

impl From<GlError> for DemoError {
    fn from(e: GlError) -> Self {
        DemoError::Gl(e)
    }
}

impl From<JobError> for DemoError {
    fn from(e: JobError) -> Self {
        DemoError::Job(e)
    }
}

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoReport {
    /// Frames drawn.
    pub frames: u64,
    /// The context: `GL_VERSION`, and whether it is ES.
    pub context: String,
    /// `GL_RENDERER`.
    pub renderer: String,
    /// Joints per palette in the skinning shaders.
    pub palette: usize,
    /// Mean wall time per frame, in milliseconds (the first frame excluded). Headless: from
    /// the start of a frame until the GPU finished it; in a window: between buffer swaps.
    pub mean_frame_ms: f64,
    /// Mean time to pose, skin-palette and submit a frame (no GPU wait), in milliseconds.
    pub mean_cpu_ms: f64,
    /// The screenshot written.
    pub screenshot: Option<PathBuf>,
}

/// Which overlays a frame gets besides the meshes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layers {
    /// The ground grid.
    pub grid: bool,
    /// Bone lines (when the scene's or viewer's bones are on).
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

const CLEAR_LINES: [f32; 4] = [0.42, 0.45, 0.52, 0.55];
const BONE_COLOR: [f32; 4] = [1.0, 0.92, 0.25, 1.0];
const MESSAGE_SECONDS: f32 = 8.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drag {
    Orbit,
    Pan,
}

/// Frame times: running means for the HUD, totals for the report. The first frame (shader
/// compilation, buffer uploads) is drawn but not measured.
#[derive(Debug, Clone, Copy, Default)]
struct Stats {
    drawn: u64,
    measured: u64,
    frame_ms: f64,
    cpu_ms: f64,
    total_frame_ms: f64,
    total_cpu_ms: f64,
}

impl Stats {
    fn add(&mut self, frame_ms: f64, cpu_ms: f64) {
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

    fn mean_frame_ms(&self) -> f64 {
        self.total_frame_ms / self.measured.max(1) as f64
    }

    fn mean_cpu_ms(&self) -> f64 {
        self.total_cpu_ms / self.measured.max(1) as f64
    }
}

struct Message {
    text: String,
    error: bool,
    at: Instant,
}

/// The demo's state: the scene or a viewed model, camera, time, HUD.
struct App {
    scene: Scene,
    scene_gpu: Vec<GpuModel>,
    viewer: Option<(Viewer, GpuModel)>,
    camera: Camera,
    /// The camera is the scene's default for the viewport's aspect (until the user moves it).
    camera_auto: bool,
    time: f32,
    paused: bool,
    help: bool,
    hud: bool,
    message: Option<Message>,
    ui: Ui,
    mouse: Mouse,
    drag: Option<Drag>,
    stats: Stats,
    /// F12 was pressed: save the next frame.
    snapshot: bool,
    /// The mouse cursor in the window, in pixels (`None` outside): the character looks at it.
    cursor: Option<(f32, f32)>,
}

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

/// Projects a world point to pixels (top-left origin); `None` behind the camera.
fn project(view_proj: &Mat4<f32>, p: Vec3<f32>, w: f32, h: f32) -> Option<(f32, f32)> {
    let c = view_proj.mul_vec4(Vec4::new(p.x, p.y, p.z, 1.0));
    (c.w > 1.0e-6).then(|| ((c.x / c.w + 1.0) * 0.5 * w, (1.0 - c.y / c.w) * 0.5 * h))
}

fn is_ext(path: &Path, ext: &str) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

impl App {
    fn new(r: &Renderer, opts: &DemoOptions) -> Result<App, DemoError> {
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
        })
    }

    fn say(&mut self, text: String, error: bool) {
        eprintln!("sinew demo: {text}");
        self.message = Some(Message { text, error, at: Instant::now() });
    }

    /// Loads a model into the viewer; on failure the current view stays and the error is
    /// shown.
    fn load(&mut self, r: &Renderer, path: &Path, anim: Option<&Path>) -> Result<(), String> {
        let v = match Viewer::load(path, anim, r.palette_size) {
            Ok(v) => v,
            Err(e) => {
                let msg = format!("cannot load {}: {e}", path.display());
                self.say(msg.clone(), true);
                return Err(msg);
            }
        };
        let gpu = match r.upload(&v.model) {
            Ok(g) => g,
            Err(e) => {
                let msg = format!("cannot upload {}: {e}", path.display());
                self.say(msg.clone(), true);
                return Err(msg);
            }
        };
        let modes = gpu.modes();
        let parts: usize = modes.iter().map(Vec::len).sum();
        let cpu: Vec<String> = modes
            .iter()
            .flatten()
            .filter_map(|m| if let gl::PartMode::Cpu(why) = m { Some(why.clone()) } else { None })
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
        self.camera = Camera::framing(v.center, v.radius);
        self.camera_auto = false;
        if let Some((_, old)) = self.viewer.replace((v, gpu)) {
            r.free(old);
        }
        self.say(text, false);
        Ok(())
    }

    fn close_model(&mut self, r: &Renderer) {
        if let Some((_, gpu)) = self.viewer.take() {
            r.free(gpu);
            self.camera_auto = true;
        }
    }

    fn drop_file(&mut self, r: &Renderer, path: PathBuf) {
        if is_ext(&path, "md5anim") {
            let md5 = self.viewer.as_ref().map(|(v, _)| v.path.clone()).filter(|p| is_ext(p, "md5mesh"));
            match md5 {
                Some(mesh) => {
                    let _ = self.load(r, &mesh, Some(&path));
                }
                None => self.say(format!("{}: drop the .md5mesh first, then its .md5anim", path.display()), true),
            }
        } else {
            let _ = self.load(r, &path, None);
        }
    }

    fn skinning(&self) -> Skinning {
        self.scene.params.skinning
    }

    fn toggle_skinning(&mut self) {
        self.scene.params.skinning = match self.scene.params.skinning {
            Skinning::Lbs => Skinning::Dqs,
            Skinning::Dqs => Skinning::Lbs,
        };
    }

    fn reset_camera(&mut self) {
        match &self.viewer {
            Some((v, _)) => self.camera = Camera::framing(v.center, v.radius),
            None => self.camera_auto = true,
        }
    }

    /// Handles a key; returns `true` to quit.
    fn key(&mut self, r: &Renderer, key: Keycode, keymod: Mod) -> bool {
        let shift = keymod.intersects(Mod::LSHIFTMOD | Mod::RSHIFTMOD);
        match key {
            Keycode::Escape | Keycode::Q => return true,
            Keycode::D => self.toggle_skinning(),
            Keycode::B => self.scene.params.show_bones = !self.scene.params.show_bones,
            Keycode::H => self.help = !self.help,
            Keycode::R | Keycode::F => self.reset_camera(),
            Keycode::Backspace => self.close_model(r),
            Keycode::F12 => self.snapshot = true,
            _ => {}
        }
        match self.viewer.as_mut() {
            Some((v, _)) => match key {
                Keycode::Space => v.playing = !v.playing,
                Keycode::Left => v.seek_by(if shift { -0.5 } else { -1.0 / 30.0 }),
                Keycode::Right => v.seek_by(if shift { 0.5 } else { 1.0 / 30.0 }),
                Keycode::Up => v.set_speed((v.speed() * 1.25).min(16.0)),
                Keycode::Down => v.set_speed((v.speed() / 1.25).max(1.0 / 16.0)),
                Keycode::LeftBracket | Keycode::PageUp => v.step_clip(-1),
                Keycode::RightBracket | Keycode::PageDown => v.step_clip(1),
                Keycode::C => v.crossfade(),
                Keycode::Tab => v.cycle_secondary(),
                Keycode::Minus | Keycode::KpMinus => v.nudge_weight(-0.1),
                Keycode::Equals | Keycode::Plus | Keycode::KpPlus => v.nudge_weight(0.1),
                Keycode::L => v.cycle_loop_mode(),
                Keycode::Y => {
                    v.z_up = !v.z_up;
                    v.measure_bounds();
                    self.camera = Camera::framing(v.center, v.radius);
                }
                k => {
                    let digit = i32::from(k) - i32::from(Keycode::Num1);
                    if (0..9).contains(&digit) {
                        v.select(digit as usize);
                    }
                }
            },
            None => match key {
                Keycode::Space => self.paused = !self.paused,
                Keycode::Left => self.time = (self.time - if shift { 5.0 } else { 1.0 }).max(0.0),
                Keycode::Right => self.time += if shift { 5.0 } else { 1.0 },
                _ => {}
            },
        }
        false
    }

    /// Handles one event; returns `true` to quit.
    fn event(&mut self, r: &Renderer, e: Event) -> bool {
        match e {
            Event::Quit { .. } => return true,
            Event::KeyDown { keycode: Some(k), keymod, .. } => return self.key(r, k, keymod),
            Event::MouseButtonDown { mouse_btn, x, y, .. } => {
                self.mouse.x = x as f32;
                self.mouse.y = y as f32;
                match mouse_btn {
                    MouseButton::Left => {
                        self.mouse.down = true;
                        if !(self.hud && self.ui.press(x as f32, y as f32)) {
                            self.drag = Some(Drag::Orbit);
                        }
                    }
                    MouseButton::Right | MouseButton::Middle => self.drag = Some(Drag::Pan),
                    _ => {}
                }
            }
            Event::MouseButtonUp { mouse_btn, .. } => {
                if mouse_btn == MouseButton::Left {
                    self.mouse.down = false;
                    self.ui.release();
                }
                self.drag = None;
            }
            Event::MouseMotion { x, y, xrel, yrel, .. } => {
                self.mouse.x = x as f32;
                self.mouse.y = y as f32;
                self.cursor = Some((x as f32, y as f32));
                match self.drag {
                    Some(Drag::Orbit) if !self.ui.captured() => {
                        self.camera_auto = false;
                        self.camera.orbit(-xrel as f32 * 0.008, yrel as f32 * 0.008);
                    }
                    Some(Drag::Pan) => {
                        let view = self.camera.view();
                        let right = Vec3::new(view.cols[0][0], view.cols[1][0], view.cols[2][0]);
                        let up = Vec3::new(view.cols[0][1], view.cols[1][1], view.cols[2][1]);
                        let k = self.camera.distance * 0.0015;
                        self.camera_auto = false;
                        self.camera.target = self.camera.target - right * (xrel as f32 * k) + up * (yrel as f32 * k);
                    }
                    _ => {}
                }
            }
            Event::MouseWheel { precise_y, .. } => {
                self.camera_auto = false;
                self.camera.zoom(0.9f32.powf(precise_y));
            }
            Event::DropFile { filename, .. } => self.drop_file(r, PathBuf::from(filename)),
            Event::Window { win_event: WindowEvent::Leave, .. } => self.cursor = None,
            _ => {}
        }
        false
    }

    /// Advances time by `dt` seconds of wall time.
    fn advance(&mut self, dt: f32) {
        match self.viewer.as_mut() {
            Some((v, _)) => v.advance(dt),
            None if !self.paused => self.time += dt,
            None => {}
        }
    }

    /// Draws a frame into the window's back buffer or the offscreen target.
    fn draw(&mut self, r: &mut Renderer, w: u32, h: u32, offscreen: bool, layers: Layers) -> Result<(), DemoError> {
        r.begin_frame(w, h, offscreen)?;
        let aspect = w as f32 / h.max(1) as f32;
        if self.camera_auto && self.viewer.is_none() {
            self.camera = default_camera(aspect);
        }
        let view_proj = self.camera.view_proj(aspect);
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
            let palette = r.palette_size;
            let hud = self.build_hud(&info, palette, w as f32, h as f32, &labels);
            r.draw_hud(&hud.vertices, w, h);
        }
        Ok(())
    }

    fn build_hud(&mut self, info: &GlInfo, palette: usize, w: f32, h: f32, labels: &[((f32, f32), String)]) -> Hud {
        let mut hud = Hud::new(if h >= 600.0 && w >= 1000.0 { 2.0 } else { 1.0 });
        let lh = hud.line_height();
        let pad = 3.0 * hud.scale;
        let margin = 8.0;
        for ((x, y), text) in labels {
            let tw = hud.text_width(text);
            hud.panel(x - tw * 0.5 - pad, y - lh * 0.5 - pad, text, color::ACCENT, pad);
        }
        let skin_name = match self.skinning() {
            Skinning::Lbs => "LBS",
            Skinning::Dqs => "DQS",
        };
        // Bottom up: frame times and the context, a message, then help.
        let fps = if self.stats.frame_ms > 0.0 { 1000.0 / self.stats.frame_ms } else { 0.0 };
        let status = format!(
            "frame {:.2} ms ({fps:.0} fps)  cpu {:.2} ms  palette {palette} joints\n{} - {}",
            self.stats.frame_ms, self.stats.cpu_ms, info.version, info.renderer
        );
        let mut bottom = h - margin - 2.0 * lh - 2.0 * pad;
        hud.panel(margin, bottom, &status, color::DIM, pad);
        if let Some(m) = &self.message {
            if m.at.elapsed().as_secs_f32() < MESSAGE_SECONDS {
                bottom -= lh + 2.0 * pad + 4.0;
                hud.panel(margin, bottom, &m.text, if m.error { color::ERROR } else { color::ACCENT }, pad);
            }
        }
        let help = match self.viewer {
            None => {
                "Space pause   Left/Right seek   D LBS/DQS   Esc quit\n\
                 B bones   R reset view   H help   F12 screenshot\n\
                 drag orbit   wheel zoom   right-drag pan\n\
                 the character looks at the mouse cursor\n\
                 drop a .glb .gltf .md5mesh .sinew to view it"
            }
            Some(_) => {
                "Space play/pause   Left/Right scrub   Up/Down speed\n\
                 [ ] or 1-9 clip   L loop mode   C crossfade\n\
                 Tab blend clip   -/= blend weight   Y up axis\n\
                 B bones   D LBS/DQS   F frame   H help\n\
                 drag orbit   wheel zoom   right-drag pan\n\
                 Backspace back to the scene   F12 screenshot   Esc quit"
            }
        };
        match &self.viewer {
            None => {
                let mut text = format!(
                    "sinew demo: built-in scene   {skin_name}   t {:.1} s{}\n",
                    self.time,
                    if self.paused { "   [paused]" } else { "" },
                );
                match self.scene.character(self.time) {
                    Ok(c) => text.push_str(&format!(
                        "character  idle {:.2}  walk {:.2}  run {:.2}  wave {:.2}\n\
                         speed {:.1} m/s   distance {:.1} m   looking at the {} ({:.0}%)",
                        c.slots[IDLE].weight,
                        c.slots[WALK].weight,
                        c.slots[RUN].weight,
                        c.slots[WAVE].weight,
                        c.speed,
                        c.distance,
                        if self.scene.params.look_ray.is_some() { "mouse" } else { "marker" },
                        c.look_weight * 100.0
                    )),
                    Err(e) => text.push_str(&format!("character: {e}")),
                }
                hud.panel(margin, margin, &text, color::TEXT, pad);
                // Tentacle controls, top right.
                let pw = 26.0 * font::CELL_WIDTH as f32 * hud.scale;
                let px = w - pw - margin;
                hud.rect(px, margin, pw, lh * 7.4 + 2.0 * pad, color::PANEL);
                let (x0, mut y) = (px + pad, margin + pad);
                let sw = pw - 2.0 * pad;
                let mouse = self.mouse;
                let p = &mut self.scene.params;
                let label = format!("tentacle speed {:.2} Hz", p.tentacle_speed);
                self.ui.slider(&mut hud, &mouse, 1, x0, y, sw, &label, &mut p.tentacle_speed, TENTACLE_SPEED_RANGE);
                y += lh * 2.0;
                let label = format!("amplitude {:.0} deg", p.tentacle_amplitude.to_degrees());
                self.ui.slider(
                    &mut hud,
                    &mouse,
                    2,
                    x0,
                    y,
                    sw,
                    &label,
                    &mut p.tentacle_amplitude,
                    TENTACLE_AMPLITUDE_RANGE,
                );
                y += lh * 2.2;
                self.ui.toggle(&mut hud, 3, x0, y, "show bones (B)", &mut p.show_bones);
                y += lh * 1.2;
                let mut dqs = p.skinning == Skinning::Dqs;
                if self.ui.toggle(&mut hud, 4, x0, y, "dual quaternions (D)", &mut dqs) {
                    p.skinning = if dqs { Skinning::Dqs } else { Skinning::Lbs };
                }
            }
            Some((v, _)) => {
                let m = &v.model;
                let mut text = format!(
                    "{}   {} joints  {} meshes  {skin_name}{}\n",
                    m.name,
                    m.skeleton().num_joints(),
                    m.asset().num_meshes(),
                    if v.z_up { "  Z-up" } else { "" }
                );
                match &v.primary {
                    Some(p) => {
                        let (s, e) = v.clip_range(p.clip);
                        text.push_str(&format!(
                            "clip {}/{} '{}'\n{:.2} / {:.2} s  x{:.2}  {}  {}\n",
                            p.clip + 1,
                            v.num_clips(),
                            v.clip_name(p.clip),
                            p.time() - s,
                            e - s,
                            v.speed(),
                            loop_mode_name(v.loop_mode()),
                            if v.playing { "playing" } else { "paused" }
                        ));
                    }
                    None => text.push_str("no clips: rest pose\n"),
                }
                match &v.secondary {
                    Some(sec) => text.push_str(&format!(
                        "blend '{}' {:.0}%{}",
                        v.clip_name(sec.clip),
                        v.weight * 100.0,
                        if v.fading { "  crossfading" } else { "" }
                    )),
                    None => text.push_str("blend: none"),
                }
                hud.panel(margin, margin, &text, color::TEXT, pad);
                let n = v.num_clips();
                if n > 0 {
                    let shown = n.min(((h * 0.45) / lh).max(1.0) as usize);
                    let first = v.primary.as_ref().map_or(0, |p| p.clip).saturating_sub(shown / 2).min(n - shown);
                    let list: Vec<String> = (first..first + shown)
                        .map(|i| {
                            let mark = if v.primary.as_ref().is_some_and(|p| p.clip == i) {
                                '>'
                            } else if v.secondary.as_ref().is_some_and(|p| p.clip == i) {
                                '+'
                            } else {
                                ' '
                            };
                            let name: String = v.clip_name(i).chars().take(24).collect();
                            format!("{mark}{:>3} {name}", i + 1)
                        })
                        .collect();
                    let list = list.join("\n");
                    let lw = hud.text_width(&list) + 2.0 * pad;
                    hud.panel(w - lw - margin, margin, &list, color::DIM, pad);
                }
                // Timeline: drag to scrub.
                if let Some((clip, time)) = v.primary.as_ref().map(|p| (p.clip, p.time())) {
                    let (s, e) = v.clip_range(clip);
                    let mouse = self.mouse;
                    let mut t = time;
                    let tw = (w - 2.0 * margin).max(10.0);
                    bottom -= 2.0 * lh + 2.0 * pad + 4.0;
                    hud.rect(margin, bottom, tw, 2.0 * lh + 2.0 * pad, color::PANEL);
                    let id = 10;
                    if self.ui.slider(
                        &mut hud,
                        &mouse,
                        id,
                        margin + pad,
                        bottom + pad,
                        tw - 2.0 * pad,
                        "timeline",
                        &mut t,
                        (s, e),
                    ) {
                        if let Some((v, _)) = self.viewer.as_mut() {
                            v.seek_primary(t);
                        }
                    }
                }
            }
        }
        if self.help {
            let hh = help.lines().count() as f32 * lh + 2.0 * pad;
            hud.panel(margin, bottom - hh - 4.0, help, color::DIM, pad);
        }
        self.ui.end_frame();
        hud
    }
}

fn write_png(path: &Path, rgba: &[u8], w: u32, h: u32) -> Result<(), DemoError> {
    let file = std::fs::File::create(path).map_err(|e| DemoError::Screenshot(format!("{}: {e}", path.display())))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(|e| DemoError::Screenshot(e.to_string()))?;
    writer.write_image_data(rgba).map_err(|e| DemoError::Screenshot(e.to_string()))?;
    writer.finish().map_err(|e| DemoError::Screenshot(e.to_string()))
}

fn describe(info: &GlInfo) -> String {
    format!("{} ({})", info.version, if info.es { "OpenGL ES context" } else { "desktop OpenGL context" })
}

fn validate(opts: &DemoOptions) -> Result<(), DemoError> {
    if !(1..=8192).contains(&opts.width) || !(1..=8192).contains(&opts.height) {
        return Err(DemoError::Options("--width and --height must be 1 to 8192".into()));
    }
    if opts.palette.is_some_and(|p| p < 4) {
        return Err(DemoError::Options("--palette must be at least 4 (one vertex may need 4 joints)".into()));
    }
    if opts.time.is_some_and(|t| !t.is_finite() || t < 0.0) {
        return Err(DemoError::Options("--time must be a finite number ≥ 0".into()));
    }
    if opts.frames == Some(0) {
        return Err(DemoError::Options("--frames must be at least 1".into()));
    }
    Ok(())
}

/// Runs the demo: a window until closed, or headless when `frames` or `screenshot` is set.
///
/// # Errors
///
/// [`DemoError`] for invalid options, no window or context, shader failures; headless runs
/// also stop on a model that fails to load, GL errors after a frame, and a screenshot that
/// cannot be written.
pub fn run(opts: &DemoOptions) -> Result<DemoReport, DemoError> {
    validate(opts)?;
    let headless = opts.frames.is_some() || opts.screenshot.is_some();
    let win = GlWindow::open("sinew demo", opts.width, opts.height, !headless, opts.gl).map_err(DemoError::Window)?;
    let mut r = Renderer::new(win.glow(), opts.palette)?;
    eprintln!(
        "sinew demo: SDL video driver {}, {}, GL_RENDERER {}, GLSL {}, {} vertex uniform vectors, palette {} joints",
        win.video.current_video_driver(),
        describe(&r.info),
        r.info.renderer,
        r.info.shading_language,
        r.info.max_vertex_uniform_vectors,
        r.palette_size
    );
    if !headless && win.video.current_video_driver() == "offscreen" {
        return Err(DemoError::Window(
            "no display (SDL fell back to its offscreen driver): set DISPLAY, or run headless with --frames".into(),
        ));
    }
    let mut app = App::new(&r, opts)?;
    if let Some(m) = &opts.model {
        let loaded = app.load(&r, m, opts.anim.as_deref());
        if let (Err(e), true) = (loaded, headless) {
            return Err(DemoError::Load(e));
        }
        if let (Some(key), Some((v, _))) = (&opts.clip, app.viewer.as_mut()) {
            match v.model.find_clip(key) {
                Some(i) => v.select(i),
                None if headless => return Err(DemoError::Options(format!("no clip named or numbered '{key}'"))),
                None => app.say(format!("no clip named or numbered '{key}'"), true),
            }
        }
    }
    let mut events = win.sdl.event_pump().map_err(DemoError::Window)?;
    if headless {
        let n = opts.frames.unwrap_or(1);
        let end = opts.time.unwrap_or(n as f32 / 60.0);
        let (w, h) = (opts.width, opts.height);
        let layers = if opts.hud { Layers::ALL } else { Layers { hud: false, ..Layers::ALL } };
        for i in 0..n {
            let t0 = Instant::now();
            for _ in events.poll_iter() {}
            let t = end * (i + 1) as f32 / n as f32;
            let prev = end * i as f32 / n as f32;
            match app.viewer.as_mut() {
                Some((v, _)) => v.advance(t - prev),
                None => app.time = t,
            }
            app.draw(&mut r, w, h, true, layers)?;
            let cpu = t0.elapsed().as_secs_f64() * 1000.0;
            r.finish();
            app.stats.add(t0.elapsed().as_secs_f64() * 1000.0, cpu);
            let codes = r.errors();
            if !codes.is_empty() {
                return Err(DemoError::GlErrors { frame: i, codes });
            }
        }
        if let Some(path) = &opts.screenshot {
            let rgba = r.read_rgba(w, h);
            write_png(path, &rgba, w, h)?;
        }
        return Ok(DemoReport {
            frames: n,
            context: describe(&r.info),
            renderer: r.info.renderer.clone(),
            palette: r.palette_size,
            mean_frame_ms: app.stats.mean_frame_ms(),
            mean_cpu_ms: app.stats.mean_cpu_ms(),
            screenshot: opts.screenshot.clone(),
        });
    }
    let mut last = Instant::now();
    let mut reported: Vec<u32> = Vec::new();
    'frames: loop {
        for e in events.poll_iter() {
            if app.event(&r, e) {
                break 'frames;
            }
        }
        let now = Instant::now();
        let dt = now.duration_since(last).as_secs_f32().min(0.25);
        let frame_ms = now.duration_since(last).as_secs_f64() * 1000.0;
        last = now;
        app.advance(dt);
        let (w, h) = win.window.drawable_size();
        let t0 = Instant::now();
        app.draw(&mut r, w.max(1), h.max(1), false, Layers::ALL)?;
        let cpu = t0.elapsed().as_secs_f64() * 1000.0;
        if std::mem::take(&mut app.snapshot) {
            let path =
                opts.screenshot.clone().unwrap_or_else(|| PathBuf::from(format!("sinew-{}.png", app.stats.drawn)));
            match write_png(&path, &r.read_rgba(w.max(1), h.max(1)), w.max(1), h.max(1)) {
                Ok(()) => app.say(format!("wrote {}", path.display()), false),
                Err(e) => app.say(e.to_string(), true),
            }
        }
        win.window.gl_swap_window();
        app.stats.add(frame_ms, cpu);
        for c in r.errors() {
            if !reported.contains(&c) {
                reported.push(c);
                eprintln!("sinew demo: GL error 0x{c:04x} after frame {}", app.stats.drawn);
            }
        }
    }
    Ok(DemoReport {
        frames: app.stats.drawn,
        context: describe(&r.info),
        renderer: r.info.renderer.clone(),
        palette: r.palette_size,
        mean_frame_ms: app.stats.mean_frame_ms(),
        mean_cpu_ms: app.stats.mean_cpu_ms(),
        screenshot: None,
    })
}

/// Renders the built-in scene offscreen, for tests and image comparisons: a hidden window,
/// the renderer and the scene, kept between calls.
///
/// SDL may only be used from one thread of a process: make every `Headless` on the same
/// thread.
pub struct Headless {
    app: App,
    renderer: Renderer,
    // Dropped after the renderer: its GL context must outlive every GL call.
    window: GlWindow,
    width: u32,
    height: u32,
}

impl std::fmt::Debug for Headless {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Headless")
            .field("renderer", &self.renderer)
            .field("width", &self.width)
            .field("height", &self.height)
            .finish_non_exhaustive()
    }
}

impl Headless {
    /// Opens a hidden `width × height` window and builds the scene with palettes of at most
    /// `palette` joints (`None`: the uniform budget's).
    ///
    /// # Errors
    ///
    /// [`DemoError`] when no window, context, shader or scene can be made.
    pub fn new(width: u32, height: u32, palette: Option<usize>, gl: GlRequest) -> Result<Headless, DemoError> {
        let opts = DemoOptions { width, height, palette, gl, ..DemoOptions::default() };
        validate(&opts)?;
        let window = GlWindow::open("sinew headless", width, height, false, gl).map_err(DemoError::Window)?;
        let renderer = Renderer::new(window.glow(), palette)?;
        let app = App::new(&renderer, &opts)?;
        Ok(Headless { app, renderer, window, width, height })
    }

    /// The renderer.
    pub fn renderer(&mut self) -> &mut Renderer {
        &mut self.renderer
    }

    /// The scene (its parameters can be changed between renders).
    pub fn scene(&mut self) -> &mut Scene {
        &mut self.app.scene
    }

    /// The GPU buffers of the scene's models, by [`Scene::models`] index.
    #[must_use]
    pub fn scene_gpu(&self) -> &[GpuModel] {
        &self.app.scene_gpu
    }

    /// The window (for its SDL context).
    #[must_use]
    pub fn window(&self) -> &GlWindow {
        &self.window
    }

    /// Renders the scene at time `t` with the default camera and returns the image as RGBA
    /// rows, top first (`width × height × 4` bytes).
    ///
    /// # Errors
    ///
    /// [`DemoError::Gl`] when the offscreen target cannot be made, [`DemoError::GlErrors`]
    /// when GL reports errors.
    pub fn render_scene(&mut self, t: f32, layers: Layers) -> Result<Vec<u8>, DemoError> {
        self.app.time = t;
        self.app.camera_auto = true;
        self.app.draw(&mut self.renderer, self.width, self.height, true, layers)?;
        let rgba = self.renderer.read_rgba(self.width, self.height);
        let codes = self.renderer.errors();
        if codes.is_empty() {
            Ok(rgba)
        } else {
            Err(DemoError::GlErrors { frame: 0, codes })
        }
    }
}

/// Renders the built-in scene at time `t` to `width × height` RGBA (top row first) with the
/// default camera and light: the skinned meshes only (see [`Layers::MESHES`]), for comparison
/// with the software renderer.
///
/// # Errors
///
/// As [`Headless::new`] and [`Headless::render_scene`].
pub fn render_scene_rgba(t: f32, width: u32, height: u32) -> Result<Vec<u8>, DemoError> {
    Headless::new(width, height, None, GlRequest::Auto)?.render_scene(t, Layers::MESHES)
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
