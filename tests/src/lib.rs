//! Test support for sinew: an independent `f64` reference implementation and the helpers that
//! cross-crate tests share.
//!
//! - [`reference`](mod@reference): plain double-precision math and jobs (hierarchy walk, skin
//!   palettes, linear-blend and dual-quaternion skinning), independent of sinew's code.
//! - [`convert`]: moving values between sinew's types and the reference's, exactly.
//! - [`random`]: seeded generators of rotations, directions and magnitudes.
//!
//! The tests themselves live in `tests/tests/`: `differential.rs` runs sinew's jobs on random
//! skeletons and meshes against the reference (in `f32` and Q16.16), `rotation_accuracy.rs`
//! measures slerp, nlerp and normalization against `f64`.

// Index loops over rows and columns read like the math they implement.
#![allow(clippy::needless_range_loop)]

pub mod convert;
pub mod random;
pub mod reference;
