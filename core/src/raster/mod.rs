//! Software rasterizer: indexed triangle meshes, lines and points into caller-owned pixels.
//!
//! Built for a microcontroller with a small LCD and no GPU, and used unchanged on the host. It
//! owns no memory: the color buffer, the optional depth buffer and a per-vertex scratch buffer
//! all belong to the caller.
//!
//! # Pipeline
//!
//! 1. **Vertex stage** (generic over [`Real`](crate::Real), so `f32` or [`Q16`](crate::Q16)):
//!    every mesh vertex is transformed once by `view_proj × model`, lit (Lambert + ambient, see
//!    [`Shading`]), classified against the clip planes, divided by `w` and mapped to the
//!    viewport. The results go to the caller's [`CachedVertex`] scratch buffer.
//! 2. **Primitive stage**: a triangle whose three vertices are inside is used as cached. One
//!    that crosses the near or far plane, or the guard band around the screen, is clipped in
//!    clip space (Sutherland–Hodgman) into a convex polygon and drawn as a fan, so a triangle
//!    crossing the near plane becomes one or two triangles instead of vanishing. Back faces
//!    (clockwise in normalized device coordinates; counter-clockwise is front, as in glTF and
//!    OpenGL) are culled unless [`Cull::None`] is chosen.
//! 3. **Raster stage** (integers only): screen positions have [`SUBPIXEL_BITS`] fractional bits,
//!    pixel centers are at +0.5, and coverage follows the top-left fill rule, so triangles that
//!    share an edge cover each pixel on it exactly once. Edge functions are evaluated exactly in
//!    `i64`; each row's covered span is found by stepping each edge's quotient and remainder
//!    (no division per row), then the span is shaded with two additions per pixel. Depth is
//!    interpolated linearly in screen space (NDC depth is affine there, so this is the correct
//!    perspective depth) and tested with "less". Shading (a level from 0 to 255) is also
//!    interpolated linearly in screen space (Gouraud, not perspective-corrected) and looked up
//!    in a 256-entry table of packed colors built per mesh.
//!
//! With `R = Q16` no stage touches a floating-point operation, so a Cortex-M0+ draws without
//! soft-float calls.
//!
//! # Bands
//!
//! A small device may not have memory for a whole frame. [`Renderer::render_bands`] renders the
//! frame in horizontal bands of a few rows into a [`BandBuffer`] and hands each band to a
//! callback (to push it to the display). The scene is given once as a list of [`Draw`]
//! commands; vertices are projected once per frame, and each band draws only what touches it.
//! Band output equals the full-frame output pixel for pixel, because every interpolated value
//! is computed from the same integer formula whatever row a band starts on.
//!
//! # Formats
//!
//! [`PixelFormat`] packs an [`Rgb`] color into a buffer element ([`Xrgb8888`] into `u32`,
//! [`Rgb565`] into `u16`); [`DepthFormat`] stores a [`DEPTH_BITS`]-bit depth ([`Depth16`] in
//! `u16`, [`Depth32`] in `u32`). Both traits can be implemented for other layouts.
//!
//! # Example
//!
//! ```ignore
//! let mut color = [0u32; 320 * 240];
//! let mut depth = [0u16; 320 * 240];
//! let mut scratch = [CachedVertex::default(); 1024];
//! let mut target = Target::<Xrgb8888, Depth16>::new(&mut color, Some(&mut depth), 320, 240, 320)?;
//! let renderer = Renderer::new(proj * view);
//! target.clear(Rgb::BLACK);
//! renderer.render(&mut target, &[Draw::Mesh(mesh), Draw::Lines(bones)], &mut scratch)?;
//! ```

mod clip;
mod color;
mod depth;
#[cfg(feature = "embedded-graphics")]
pub mod display;
mod error;
mod fixed;
mod line;
mod mesh;
mod renderer;
mod target;
mod triangle;

#[cfg(test)]
mod tests;

pub use color::{PixelFormat, Rgb, Rgb565, Xrgb8888};
pub use depth::{Depth16, Depth32, DepthFormat, DEPTH_BITS, DEPTH_MAX};
pub use error::RasterError;
pub use line::{Lines, Points};
pub use mesh::{CachedVertex, Indices, Light, Mesh, Shading};
pub use renderer::{Draw, Renderer};
pub use target::{BandBuffer, Target, MAX_DIMENSION};
pub use triangle::{Cull, SUBPIXEL_BITS};
