//! # sinew
//!
//! A `no_std`, allocation-free skeletal-animation runtime. It links into a Cortex-M firmware as
//! easily as into a desktop game: no heap, no I/O, no `unsafe`, fixed capacities named in
//! [`limits`], and every scalar path generic over [`Real`] so an FPU-less microcontroller runs
//! the same code in Q16.16 fixed point ([`Q16`]).
//!
//! ## Layers
//!
//! Bottom to top; a module uses only modules below it (`core/tests/module_graph.rs` checks
//! that no two modules use each other, and `core/ARCHITECTURE.md` draws the graph).
//!
//! - **[`limits`]**: every fixed capacity. **`platform`** (internal): the host/microcontroller
//!   split by name — which kernels this build compiles (see `core/ARCHITECTURE.md`).
//! - **[`real`]**: the scalar trait and its four-lane form, implemented for `f32` (lanes in one
//!   SIMD register where the target has one) and [`Q16`]. ([`lanes`] re-exports the lane
//!   types.)
//! - **[`math`]**: vectors, quaternions, matrices, dual quaternions, and their
//!   structure-of-arrays forms (four joints per [`math::SoaTransform`]). Transcendental
//!   functions are written once in [`math::ops`] and measured against `f64`.
//! - **[`skeleton`]**: a validated, parents-first joint hierarchy with its rest pose and names.
//! - **[`format`]**: the `.sinew` byte layout — constants, key codecs, little-endian reading
//!   and writing, CRC-32, [`format::ParseError`].
//! - **[`clip`]**: clips read in place — STEP / LINEAR / CUBICSPLINE tracks, lossless or
//!   quantized keys, key cursors and sampling caches.
//! - **[`asset`]**: [`asset::Asset::parse`] validates a whole file once (every section kind,
//!   clips included) and hands out zero-copy views.
//! - **[`job`]**: the per-frame work as ozz-style jobs — structs of borrowed inputs and
//!   outputs with `validate()` and `run()`; `run` validates first and writes nothing on error.
//!   [`job::LocalToModelJob`] walks the hierarchy, [`job::SkinMatrixJob`] and
//!   [`job::SkinDualQuatJob`] build skin palettes, [`job::SkinningJob`] skins vertices (linear
//!   blend or dual quaternion), [`job::SamplingJob`] evaluates clips, [`job::BlendingJob`]
//!   mixes poses.
//! - **[`mask`], [`player`], [`ik`], [`root_motion`], then [`controller`]**: the animation
//!   system a game drives each frame — partial-skeleton channels with fade-in, drift-free
//!   playback with events, two-bone and aim IK, root-motion extraction and path following, and
//!   a fixed-memory controller with crossfades and layers.
//! - **[`raster`]** (beside the animation modules, on [`math`]): a software rasterizer for
//!   devices without a GPU — fixed-point edges with a top-left fill rule, near-plane clipping,
//!   depth, Lambert shading, XRGB8888 / RGB565 targets, and band rendering for displays without
//!   a full framebuffer in RAM.
//!
//! The caller owns every buffer; errors are small `Copy` enums with `Display` and
//! `core::error::Error`.

#![no_std]
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]
#![forbid(unsafe_code)]
// Index loops over lanes, rows and columns read like the math they implement.
#![allow(clippy::needless_range_loop)]

pub mod asset;
pub mod clip;
pub mod controller;
pub mod format;
pub mod ik;
pub mod job;
pub mod lanes;
pub mod limits;
pub mod mask;
pub mod math;
mod platform;
pub mod player;
pub mod raster;
pub mod real;
pub mod root_motion;
pub mod skeleton;
#[cfg(test)]
pub(crate) mod test_support;

pub use real::{Real, Q16};
