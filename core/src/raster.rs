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
//!    (no division in a row), then the span is shaded with two additions a pixel. Depth is
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
//! The baked character's mesh in its bind pose, with its bones drawn over it, in a 48 × 64
//! frame with a 16-bit depth buffer:
//!
//! ```
//! use sinew::asset::Asset;
//! use sinew::job::LocalToModelJob;
//! use sinew::math::{Mat4, Vec3};
//! use sinew::raster::{
//!     CachedVertex, Depth16, Draw, Indices, Lines, Mesh, PixelFormat, Renderer, Rgb, Target, Xrgb8888,
//! };
//! use sinew::skeleton::Skeleton;
//!
//! # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));
//! let asset = Asset::parse(bytes)?;
//! // The mesh: positions and triangles (skinned positions, in an animated frame).
//! let part = asset.mesh(0).and_then(|mesh| mesh.parts().next()).ok_or("no mesh")?;
//! let mut positions = vec![Vec3::ZERO; part.num_vertices()];
//! let positions = part.read_positions(&mut positions)?;
//! let triangles: Vec<u32> = (0..part.num_indices()).map(|i| part.index(i)).collect();
//! // The bones: a line from each joint to its parent, at the joints' rest positions.
//! let skeleton: Skeleton<f32, 6> = asset.skeleton().ok_or("no skeleton")?.to_skeleton()?;
//! let mut model = [Mat4::IDENTITY; 24];
//! let (input, output) = (skeleton.rest_pose(), &mut model[..]);
//! LocalToModelJob { skeleton: skeleton.view(), root: None, input, output, from: None, to: None }.run()?;
//! let joints: Vec<Vec3<f32>> = model[..skeleton.num_joints()].iter().map(Mat4::translation).collect();
//! let bones: Vec<u16> = (1..joints.len()).flat_map(|j| [skeleton.parents()[j] as u16, j as u16]).collect();
//!
//! let (width, height) = (48, 64);
//! let mut color = vec![0u32; width * height];
//! let mut depth = vec![0u16; width * height];
//! let mut target =
//!     Target::<Xrgb8888, Depth16>::new(&mut color, Some(&mut depth), width as u32, height as u32, width)?;
//! // A camera 4 m in front of the character (which faces +Z), level with its waist.
//! let proj = Mat4::perspective_rh_gl(0.6, width as f32 / height as f32, 0.1, 20.0);
//! let view = Mat4::look_at_rh(Vec3::new(0.0, 0.9, 4.0), Vec3::new(0.0, 0.9, 0.0), Vec3::Y);
//! let renderer = Renderer::new(proj * view);
//!
//! let body = Mesh::new(positions, None, Indices::U32(&triangles), Rgb::new(90, 140, 220));
//! let overlay = Lines {
//!     positions: &joints,
//!     indices: Indices::U16(&bones),
//!     model: Mat4::IDENTITY,
//!     color: Rgb::WHITE,
//!     depth_test: false, // drawn over the body
//! };
//! let mut scratch = vec![CachedVertex::default(); Renderer::scratch_len(&[Draw::Mesh(body)])];
//! target.clear(Rgb::BLACK);
//! renderer.render(&mut target, &[Draw::Mesh(body), Draw::Lines(overlay)], &mut scratch)?;
//!
//! let count = |c: Rgb| target.pixels().iter().filter(|&&p| p == Xrgb8888::pack(c)).count();
//! let (bone_pixels, background) = (count(Rgb::WHITE), count(Rgb::BLACK));
//! assert!(bone_pixels > 50);
//! assert!(width * height - bone_pixels - background > 100); // the lit body
//! assert_eq!(target.pixel(0, 0), Some(Xrgb8888::pack(Rgb::BLACK)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
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
mod srgb;
mod target;
mod texture;
#[cfg(feature = "texture")]
mod textured;
mod triangle;

#[cfg(test)]
mod tests;

pub use color::{PixelFormat, Rgb, Rgb565, Xrgb8888};
pub use depth::{Depth16, Depth32, DepthFormat, DEPTH_BITS, DEPTH_MAX};
pub use error::RasterError;
pub use line::{Lines, Points};
pub use mesh::{CachedVertex, Indices, Light, Mesh, Shading};
pub use renderer::{Draw, Renderer};
pub use srgb::linear_to_srgb8;
pub use target::{BandBuffer, Target, MAX_DIMENSION};
pub use texture::{Filter, Sampler, TexelFormat, Texture, Wrap, MAX_TEXTURE_DIMENSION};
#[cfg(feature = "texture")]
pub use textured::TexturedMesh;
pub use triangle::{Cull, SUBPIXEL_BITS};
