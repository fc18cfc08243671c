//! `sinew demo`: an SDL2 window with an OpenGL ES 2.0 context (desktop OpenGL 2.1 where ES is
//! unavailable) whose GLSL ES 1.00 vertex shaders skin the meshes (LBS or DQS).
//!
//! Without a model it shows the built-in [`scene`](crate::scene): the tentacle with its speed
//! and amplitude sliders, the humanoid driven by the core's controller (walking its path,
//! running, waving, looking at the mouse cursor), and the candy-wrapper twist in LBS beside DQS.
//! With a model file (on the command line, or dropped on the window) it is a viewer: clip list,
//! play/pause, scrub, speed, loop mode, crossfade, blend weight, bones, orbit camera; a model
//! with spring bones (VRM's) swings them (a key switches them, another draws their
//! [colliders](sinew_host::character::colliders)), and a shift-drag moves it on the ground so
//! that they swing. With `--graph FILE` the viewed model is driven by an animation graph
//! ([`graph_drive`]) whose parameters the keys change.
//!
//! With `--crowd N` it shows N instances of the model, one instanced draw call per mesh part
//! ([`CrowdOptions`], `crowd`).
//!
//! With `--frames N` (or `--screenshot`) it runs headless: a hidden window, N frames into an
//! offscreen target, a GL error check after each, and the last frame written as a PNG.
//! [`Headless`] offers the same to tests: the default scene at a time, as RGBA pixels.
//!
//! The demo is laid out as: its options and errors (`options`), its state (`app`), input
//! handling (`input`), drawing a frame (`draw`) and its HUD (`hud_layout`), the run itself
//! (`run`) and offscreen rendering (`headless`); below them the GL renderer ([`gl`]) with its
//! shaders ([`shaders`]), the HUD's batching and widgets ([`hud`]) over the bitmap [`font`],
//! the model [`viewer`] and the SDL [`window`].

pub mod font;
pub mod gl;
pub mod graph_drive;
pub mod hud;
pub mod shaders;
pub mod viewer;
pub mod window;

mod app;
mod crowd;
mod draw;
mod headless;
mod hud_layout;
mod input;
mod options;
mod run;

pub use crowd::CrowdOptions;
pub use draw::{cursor_ray, ground_drag, Layers};
pub use gl::{GlError, GlInfo, GpuModel, Renderer};
pub use headless::{render_scene_rgba, Headless};
pub use options::{DemoError, DemoOptions, DemoReport};
pub use run::run;
pub use window::{GlRequest, GlWindow};
