//! The runtime every sinew front end stands on: the desktop viewers, the browser runtime and
//! the command line load a model and drive characters through this crate, so each rule of
//! playback is written once. It depends on the core and `alloc` only.
//!
//! - [`model`]: a `.sinew` file parsed in place, its skeleton, skins, clips, meshes as
//!   [`parts::DrawPart`]s for a palette budget, and its bind-pose bounds;
//! - [`character`]: a character on the core's [`Controller`](sinew::controller::Controller):
//!   play, blend, crossfade with fade curves and phase sync, seek, speed, loop modes, graphs;
//!   foot placement on the caller's ground (`character::Legs`, with the `feet` feature); and
//!   each frame's model matrices, palettes, shader rows and morphed vertices;
//! - [`crowd`]: many instances of a model on the core's batch evaluation
//!   ([`sinew::crowd`]): the grid every front end shows, levels of detail from a camera, jobs
//!   for any number of threads, the palette texture and each instance's draw rows;
//! - `ground` (with the `feet` feature): the ground a viewer stands a character's feet on, a
//!   floor with a step and a slope;
//! - [`rows`]: skin palettes as the GLSL ES 1.00 shaders' uniform rows;
//! - [`camera`]: the orbit camera that frames a model, and the floor grid's spacing;
//! - [`gl`]: a material's sampler codes as OpenGL ES 2.0 / WebGL 1 enums;
//! - [`limits`]: the constants every front end shares (the crossfade time, joint capacities,
//!   the vertex layout), which the browser's JavaScript reads from the module.

#![no_std]

extern crate alloc;

pub mod camera;
pub mod character;
pub mod crowd;
pub mod gl;
pub mod graph;
#[cfg(feature = "feet")]
pub mod ground;
mod jobs;
pub mod limits;
pub mod model;
pub mod parts;
pub mod rows;

#[cfg(feature = "feet")]
pub use character::Legs;
pub use character::{Character, CharacterError, Work};
#[cfg(feature = "springs")]
pub use character::{SpringFrame, SpringSet, SpringSettings};
pub use model::{Bounds, LoadError, Model};
