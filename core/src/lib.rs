//! # sinew
//!
//! A `no_std`, allocation-free skeletal-animation runtime. It links into a Cortex-M firmware as
//! easily as into a desktop game: no heap, no I/O, no `unsafe` outside one audited module
//! (run-time kernel dispatch, [`kernels`], compiled only for x86-64 hosts with the `dispatch`
//! feature), fixed capacities named in [`limits`], and every scalar path generic over
//! [`Real`] so an FPU-less microcontroller runs the same code in Q16.16 fixed point ([`Q16`]).
//!
//! ## Layers
//!
//! Bottom to top; a module uses only modules below it (`core/tests/module_graph.rs` checks
//! that no two modules use each other, and `core/ARCHITECTURE.md` draws the graph).
//!
//! - **[`limits`]**: every fixed capacity; **[`capacity`](mod@capacity)**: a character's capacities spelled
//!   once ([`capacity!`]), the sizes of its controller and state machines. **`platform`** (internal): the host/microcontroller
//!   split by name — which kernels this build compiles (see `core/ARCHITECTURE.md`).
//! - **[`real`]**: the scalar trait and its four-lane form, implemented for `f32` (lanes in one
//!   SIMD register where the target has one) and [`Q16`]; the Q32.32 time base of players.
//! - **[`math`]**: vectors, quaternions, matrices, dual quaternions, and their
//!   structure-of-arrays forms (four joints per [`math::SoaTransform`]). Transcendental
//!   functions are written once in [`math::ops`] and measured against `f64`.
//! - **[`skeleton`]**: a validated, parents-first joint hierarchy with its rest pose and names.
//! - **[`format`]**: the `.sinew` byte layout — constants, key codecs, little-endian reading
//!   (and writing, with the `writer` feature), CRC-32, [`format::ParseError`].
//! - **[`clip`]**: clips read in place — STEP / LINEAR / CUBICSPLINE tracks, lossless or
//!   quantized keys, key cursors and sampling caches.
//! - **[`morph`]** (beside [`clip`]): morph targets (sparse per-vertex deltas) and
//!   morph-weight tracks read in place.
//! - **[`asset`]**: [`asset::Asset::parse`] validates a whole file once (every section kind,
//!   clips included) and hands out zero-copy views.
//! - **[`job`]**: the per-frame work as ozz-style jobs — structs of borrowed inputs and
//!   outputs with `validate()` and `run()`; `run` validates first and writes nothing on error.
//!   [`job::LocalToModelJob`] walks the hierarchy, [`job::SkinMatrixJob`] and
//!   [`job::SkinDualQuatJob`] build skin palettes, [`job::SkinningJob`] skins vertices (linear
//!   blend or dual quaternion), [`job::SamplingJob`] evaluates clips, [`job::BlendingJob`]
//!   mixes poses ([`job::MakeAdditiveJob`] makes additive deltas), [`job::MaskJob`] weights
//!   partial-skeleton channels with fade-in, [`job::IkTwoBoneJob`] and [`job::IkAimJob`] bend
//!   and aim chains.
//! - **[`player`], [`root_motion`], then [`controller`]**: the animation system a game drives
//!   each frame — drift-free playback with events, root-motion extraction and path following,
//!   and a fixed-memory controller with crossfades and layers.
//! - **[`graph`]**: animation state machines on a controller — float, bool and trigger
//!   parameters, clip and 1D / 2D blend-space states, transitions with conditions and exit
//!   times, crossfaded or inertialized.
//! - **[`raster`]** (beside the animation modules, on [`math`]): a software rasterizer for
//!   devices without a GPU — fixed-point edges with a top-left fill rule, near-plane clipping,
//!   depth, Lambert shading, XRGB8888 / RGB565 targets, and band rendering for displays without
//!   a full framebuffer in RAM.
//!
//! The caller owns every buffer; errors are small `Copy` enums with `Display` and
//! `core::error::Error`.
//!
//! # Example
//!
//! One frame of a baked character: parse the `.sinew` file, build its skeleton, sample a clip
//! into a local pose, turn it into model-space matrices, then build the skin palette (what a
//! GPU takes as uniforms, or [`job::SkinningJob`] on the CPU).
//!
//! ```
//! use sinew::asset::Asset;
//! use sinew::clip::RotationInterpolation;
//! use sinew::job::{LocalToModelJob, SamplingJob, SkinMatrixJob};
//! use sinew::limits::soa_count;
//! use sinew::math::{Mat4, SoaTransform};
//! use sinew::skeleton::Skeleton;
//!
//! // A file written by `sinew bake`, embedded in the program (or read from flash, or a disk).
//! static CHARACTER: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));
//! const JOINTS: usize = 24; // the most joints this program animates
//! const SOA: usize = soa_count(JOINTS); // the same in SoA elements of four joints
//!
//! // Parse and validate once; everything below reads the bytes in place.
//! let asset = Asset::parse(CHARACTER)?;
//! let skeleton: Skeleton<f32, SOA> = asset.skeleton().ok_or("no skeleton")?.to_skeleton()?;
//! let walk = asset.clip_by_name("walk").ok_or("no clip 'walk'")?;
//! let skin = asset.skin(0).ok_or("no skin")?;
//!
//! // The walk half a second in, as a local pose.
//! let mut cursors = [0u16; 3 * JOINTS]; // one key cursor per track, kept from frame to frame
//! let mut local = [SoaTransform::IDENTITY; SOA];
//! SamplingJob {
//!     clip: walk,
//!     time: 0.5,
//!     rotation: RotationInterpolation::default(),
//!     rest_pose: skeleton.rest_pose(),
//!     cursor: &mut cursors,
//!     output: &mut local,
//! }
//! .run()?;
//!
//! // Local to model space: one matrix per joint.
//! let mut model = [Mat4::IDENTITY; JOINTS];
//! LocalToModelJob { skeleton: skeleton.view(), root: None, input: &local, output: &mut model, from: None, to: None }
//!     .run()?;
//!
//! // The skin palette: model × inverse bind matrix of each skin joint.
//! let n = skin.num_joints();
//! let inverse_bind: Vec<Mat4<f32>> = (0..n).map(|i| skin.inverse_bind(i)).collect();
//! let joints: Vec<u16> = (0..n).map(|i| skin.joint(i)).collect();
//! let mut palette = vec![Mat4::IDENTITY; n];
//! SkinMatrixJob { model: &model, inverse_bind: &inverse_bind, joints: Some(&joints), output: &mut palette }.run()?;
//!
//! // Half a second of a 1.2 m/s walk carried the root 0.6 m forward, the head about 1.45 m up.
//! let head = skeleton.view().find("head").ok_or("no head")?;
//! assert!((model[0].translation().z - 0.6).abs() < 1e-3);
//! assert!((model[head].translation().y - 1.45).abs() < 0.01);
//! assert!(palette.iter().all(Mat4::is_finite));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![no_std]
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]
// One module may use `unsafe`: `platform::dispatch`, for the calls into the kernels compiled
// for x86-64-v3, their AVX intrinsics and one empty `asm!` block (see ARCHITECTURE.md,
// "No allocator, one audited `unsafe`, no I/O").
#![deny(unsafe_code)]
// Index loops over lanes, rows and columns read like the math they implement.
#![allow(clippy::needless_range_loop)]

pub mod asset;
pub mod capacity;
pub mod clip;
pub mod controller;
pub mod crowd;
pub mod format;
pub mod graph;
pub mod job;
pub mod limits;
pub mod math;
pub mod morph;
mod platform;
pub use platform::dispatch as kernels;
pub mod partition;
pub mod player;
pub mod raster;
pub mod real;
pub mod root_motion;
pub mod skeleton;
#[cfg(test)]
pub(crate) mod test_support;

pub use real::{Real, Q16};

// The CPU detection of run-time dispatch (`platform::dispatch`).
#[cfg(sinew_dispatch)]
extern crate std;

/// The code of the crate's README, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;
