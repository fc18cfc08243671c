//! The demo's OpenGL renderer: skinned meshes skinned in the vertex shader (LBS or DQS),
//! lines, the HUD, and an offscreen target for screenshots. Works on an OpenGL ES 2.0
//! context, or a desktop OpenGL 2.1 context that accepts GLSL ES 1.00.
//!
//! Every mesh part of a model goes to the GPU once ([`Renderer::upload`]). A part is drawn
//! in one of three ways:
//!
//! - **skinned on the GPU**: its palette fits the shaders' `JOINTS` and it has at most 4
//!   influences; each draw uploads the rows of its local palette (the part's joints mapped to
//!   skin joints, see [`lbs_rows`] and [`dq_rows`]);
//! - **rigid**: no influences; drawn with one palette entry, its node's model matrix;
//! - **skinned on the CPU**: a part the shaders cannot take (from a `.sinew` baked with a
//!   larger palette or more influences), or every part when [`Renderer::cpu_skinning`] is
//!   set; its vertices are skinned by [`Model::skin_mesh`](sinew_offline::model::Model::skin_mesh)
//!   every frame and streamed with an identity palette.
//!
//! Each part is drawn with its material: base-color factor × vertex color × base-color texture
//! (GLES2 rules for textures whose size is not a power of two: see `texture`).
//!
//! The renderer is laid out as: the context's description and errors (`context`), the shader
//! programs (`programs`), the interleaved vertex layouts (`vertex`), mesh upload and how each
//! part is drawn (`mesh`), textures (`texture`), palette rows (`palette`), the offscreen target
//! and pixel reads (`target`), and the [`Renderer`] with its draw calls (`renderer`).

mod context;
mod mesh;
mod palette;
mod programs;
mod renderer;
mod target;
mod texture;
mod vertex;

pub use context::{GlError, GlInfo};
pub use mesh::{GpuModel, PartMode};
pub use palette::{dq_rigid_rows, dq_rows, lbs_rows, mat_from_rows, needs_cpu_dqs, part_is_rigid};
pub use programs::check_skin_shaders;
pub use renderer::{gl_version, CrowdGpu, CrowdSupport, DrawStats, Renderer};
