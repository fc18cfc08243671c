//! Offscreen rendering of the built-in scene or a viewed model for tests and image
//! comparisons, driven by synthetic window events where asked: [`Headless`] and
//! [`render_scene_rgba`].

use super::app::App;
use super::draw::Layers;
use super::gl::{GpuModel, Renderer};
use super::options::{validate, DemoError, DemoOptions};
use super::window::{GlRequest, GlWindow};
use crate::scene::Scene;

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
        Headless::with_budget(width, height, palette, None, gl)
    }

    /// [`Headless::new`] with the renderer's palettes sized for at most `budget` vertex
    /// uniform vectors (see [`Renderer::with_budget`]; `Some(128)`: an ES 2.0 minimum
    /// context).
    ///
    /// # Errors
    ///
    /// As [`Headless::new`].
    pub fn with_budget(
        width: u32,
        height: u32,
        palette: Option<usize>,
        budget: Option<usize>,
        gl: GlRequest,
    ) -> Result<Headless, DemoError> {
        let opts = DemoOptions { width, height, palette, gl, ..DemoOptions::default() };
        validate(&opts)?;
        let window = GlWindow::open("sinew headless", width, height, false, gl).map_err(DemoError::Window)?;
        let renderer = Renderer::with_budget(window.glow(), palette, budget)?;
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

    /// Loads a model into the viewer (split into parts by [`Renderer::palette_sizes`]), which
    /// [`Headless::render_scene`] then draws instead of the built-in scene.
    ///
    /// # Errors
    ///
    /// The message of a model that cannot be loaded or uploaded.
    pub fn load(&mut self, path: &std::path::Path) -> Result<(), String> {
        let opts = self.app.playback.with_model(path, None);
        self.app.load(&self.renderer, &opts)
    }

    /// The viewer's GPU buffers of its model, once [`Headless::load`] succeeded.
    #[must_use]
    pub fn viewer_gpu(&self) -> Option<&GpuModel> {
        self.app.viewer.as_ref().map(|(_, g)| g)
    }

    /// The viewer, once [`Headless::load`] succeeded.
    #[must_use]
    pub fn viewer(&mut self) -> Option<&mut super::viewer::Viewer> {
        self.app.viewer.as_mut().map(|(v, _)| v)
    }

    /// Handles one window event as the demo's window does (keys, mouse drags, the wheel,
    /// dropped files), for tests that drive the viewer with synthetic events; returns `true`
    /// where the window would close.
    pub fn event(&mut self, e: sdl2::event::Event) -> bool {
        self.app.event(&self.renderer, e)
    }

    /// Advances the viewed model's playback (and its springs), or the scene's time, by `dt`
    /// seconds, as a frame of the window does.
    pub fn advance(&mut self, dt: f32) {
        self.app.advance(dt);
    }

    /// Starts the crowd mode on the loaded model (see [`Headless::load`]): `opts.count`
    /// instances, the camera framing them; [`Headless::render_crowd`] then draws it.
    ///
    /// # Errors
    ///
    /// As the demo's `--crowd`: no model loaded, a model without skin or clip, GL objects that
    /// cannot be made.
    pub fn start_crowd(&mut self, opts: super::CrowdOptions) -> Result<(), DemoError> {
        self.app.start_crowd(&self.renderer, opts)
    }

    /// Advances the crowd by `dt` seconds and renders it with the crowd's camera; returns the
    /// image as RGBA rows, top first, and the draw calls made.
    ///
    /// # Errors
    ///
    /// As [`Headless::render_scene`], and the crowd's errors.
    pub fn render_crowd(&mut self, dt: f32, layers: Layers) -> Result<(Vec<u8>, usize), DemoError> {
        let Some(c) = self.app.crowd.as_mut() else {
            return Err(DemoError::Options("no crowd: call start_crowd first".into()));
        };
        c.queue(dt);
        self.app.camera = c.camera();
        self.app.draw(&mut self.renderer, self.width, self.height, true, layers)?;
        let draws = self.app.crowd.as_ref().map_or(0, |c| c.draws);
        let rgba = self.renderer.read_rgba(self.width, self.height);
        let codes = self.renderer.errors();
        if codes.is_empty() {
            Ok((rgba, draws))
        } else {
            Err(DemoError::GlErrors { frame: 0, codes })
        }
    }

    /// The crowd's HUD line (`crowd N  evaluated E  shared S  held H  draws D  cpu X.XX ms`),
    /// while the crowd mode is on.
    #[must_use]
    pub fn crowd_line(&self) -> Option<String> {
        self.app.crowd.as_ref().map(|c| c.hud_line())
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
