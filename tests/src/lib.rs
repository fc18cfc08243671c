//! Test support for sinew: an independent `f64` reference implementation and the helpers that
//! cross-crate tests share.
//!
//! - [`reference`](mod@reference): plain double-precision math and jobs (hierarchy walk, skin
//!   palettes, linear-blend and dual-quaternion skinning), independent of sinew's code.
//! - [`convert`]: moving values between sinew's types and the reference's, exactly.
//! - [`random`]: seeded generators of rotations, directions and magnitudes.
//! - [`gltf_ref`]: an independent `f64` evaluator of glTF 2.0 files (node animation per
//!   Appendix C, world and joint matrices, linear-blend and dual-quaternion skinning).
//! - [`md5_ref`]: the same for Doom 3 md5 models, with its own parser of the text formats.
//! - [`corpus`]: hostile inputs of every format (`.sinew`, glTF, md5), each with the typed error
//!   it must give.
//!
//! The tests themselves live in `tests/tests/`: `differential.rs` runs sinew's jobs on random
//! skeletons and meshes against the reference (in `f32` and Q16.16), `rotation_accuracy.rs`
//! measures slerp, nlerp and normalization against `f64`, `conformance.rs` runs the real models
//! of `../shared/assets` through sinew's importers, baker and `dump` against [`gltf_ref`] and
//! [`md5_ref`], and `bad_input.rs` runs the [`corpus`] through the parser, importers and baker.
//! The tests of the `sinew` command line, on corrupt inputs and the corpus among them, live with
//! the binary in `frontend-sdl/tests/` (`cli.rs`, `cli_bad_input.rs`); this crate never depends
//! on the viewers, so it builds without SDL2.

// Index loops over rows and columns read like the math they implement.
#![allow(clippy::needless_range_loop)]

pub mod convert;
pub mod corpus;
pub mod gltf_ref;
pub mod md5_ref;
pub mod random;
pub mod reference;
