//! sinew in the browser: the runtime compiled to `wasm32-unknown-unknown`, driven by
//! `js/sinew.js` through a plain C ABI ([`abi`]). No JavaScript glue generator is involved:
//! the module imports nothing and exports functions over numbers and linear-memory addresses.
//!
//! - [`model`]: a `.sinew` file handed over as bytes and parsed in place (no copy), its
//!   skeleton, skins, clips, meshes and bind-pose bounds;
//! - [`parts`]: the meshes as WebGL 1 draws them, parts split at load time to fit the page's
//!   uniform budget;
//! - [`character`]: playback (play, blend, crossfade, seek, speed, loop mode) and the frame's
//!   outputs (model matrices, skin palettes, shader rows, morphed vertices), read in place;
//! - [`graph`]: a character driven by one of its file's animation graphs.
//!
//! On wasm32 the heap is talc's (see `heap.rs`), smaller than the standard library's dlmalloc.
//!
//! The same code builds for the host, where the tests run.

pub mod abi;
pub mod character;
pub mod graph;
pub mod json;
pub mod model;
pub mod parts;

#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
mod heap;
