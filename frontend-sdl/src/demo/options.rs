//! What `sinew demo` is asked to do and what it reports: [`DemoOptions`] (from the command
//! line) and their validation, [`DemoError`] and [`DemoReport`].

use std::path::PathBuf;

use sinew::job::JobError;
use sinew_offline::model::Skinning;

use super::gl::GlError;
use super::window::GlRequest;
use crate::playback::PlaybackOptions;
use crate::scene::SceneError;

/// What `sinew demo` should do.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoOptions {
    /// The model to view (default: the built-in scene) and what drives it, as `sinew soft`
    /// takes them.
    pub playback: PlaybackOptions,
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
    /// Show the spring colliders of a model with spring bones from the start.
    pub colliders: bool,
    /// Draw the HUD.
    pub hud: bool,
    /// Which GL context to ask for.
    pub gl: GlRequest,
    /// Show a crowd of the model instead of the model alone.
    pub crowd: Option<super::crowd::CrowdOptions>,
}

impl Default for DemoOptions {
    fn default() -> Self {
        DemoOptions {
            playback: PlaybackOptions::default(),
            frames: None,
            screenshot: None,
            time: None,
            width: crate::DEFAULT_WIDTH,
            height: crate::DEFAULT_HEIGHT,
            palette: None,
            skinning: Skinning::Lbs,
            bones: false,
            colliders: false,
            hud: true,
            gl: GlRequest::Auto,
            crowd: None,
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
    /// The animation graph stopped (a state-machine error).
    Graph(String),
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
            Self::Graph(s) => write!(f, "graph: {s}"),
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
    /// Joints per palette in the skinning shaders for rigs with scale (every program holds
    /// it).
    pub palette: usize,
    /// Joints per palette for rigs without scale (LBS and rigid DQS hold it).
    pub rigid_palette: usize,
    /// Mean wall time per frame, in milliseconds (the first frame excluded). Headless: from
    /// the start of a frame until the GPU finished it; in a window: between buffer swaps.
    pub mean_frame_ms: f64,
    /// Mean time to pose, skin-palette and submit a frame (no GPU wait), in milliseconds.
    pub mean_cpu_ms: f64,
    /// The screenshot written.
    pub screenshot: Option<PathBuf>,
    /// With a graph: its state and parameters after the last frame (`state move (idle -> move
    /// 40%)   speed=2.00`).
    pub graph_state: Option<String>,
}

/// Checks the options a run or a [`Headless`](super::Headless) renderer cannot start with.
pub(super) fn validate(opts: &DemoOptions) -> Result<(), DemoError> {
    if !(1..=8192).contains(&opts.width) || !(1..=8192).contains(&opts.height) {
        return Err(DemoError::Options("--width and --height must be 1 to 8192".into()));
    }
    if opts.palette.is_some_and(|p| p < 4) {
        return Err(DemoError::Options("--palette must be at least 4 (one vertex may need 4 joints)".into()));
    }
    if opts.time.is_some_and(|t| !t.is_finite() || t < 0.0) {
        return Err(DemoError::Options("--time must be a finite number ≥ 0".into()));
    }
    opts.playback.validate().map_err(DemoError::Options)?;
    if opts.crowd.is_some() && opts.playback.model.is_none() {
        return Err(DemoError::Options("--crowd needs a model".into()));
    }
    if opts.frames == Some(0) {
        return Err(DemoError::Options("--frames must be at least 1".into()));
    }
    Ok(())
}
