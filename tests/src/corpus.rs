//! The bad-input corpus: for every input format sinew reads (`.sinew` through `Asset::parse`,
//! glTF `.glb`/`.gltf` through the importer, md5mesh/md5anim), broken variants of a valid base
//! — a real model from `../shared/assets`, or a small asset written here with the core's
//! `Writer` or in the importers' own formats — each with the one typed error it must give.
//!
//! - [`sinew`](mod@sinew): [`SmallSinew`](sinew::SmallSinew), the real CesiumMan bake and
//!   [`sinew_cases`](sinew::sinew_cases);
//! - [`gltf`](mod@gltf): [`SmallGltf`](gltf::SmallGltf), GLB containers,
//!   [`gltf_cases`](gltf::gltf_cases) and the long animated chains of the baker's work-budget
//!   tests ([`chain_glb`](gltf::chain_glb), [`hostile_chain`](gltf::hostile_chain));
//! - [`meshopt`](mod@meshopt): [`meshopt_glb`](meshopt::meshopt_glb), a meshopt-compressed
//!   model, and [`meshopt_cases`](meshopt::meshopt_cases) (part of [`gltf_cases`](gltf::gltf_cases));
//! - [`draco`](mod@draco): [`draco_glb`](draco::draco_glb), the Draco-compressed models, and
//!   [`draco_cases`](draco::draco_cases) (part of [`gltf_cases`](gltf::gltf_cases));
//! - [`morph`](mod@morph): [`MorphGltf`](morph::MorphGltf), a skinned and morphed model, and
//!   [`morph_cases`](morph::morph_cases) (part of [`gltf_cases`](gltf::gltf_cases));
//! - [`graph`](mod@graph): [`graph_base`](graph::graph_base) and
//!   [`graph_layered_base`](graph::graph_layered_base), the small asset with a baked animation
//!   graph (without and with a layer), and [`graph_cases`](graph::graph_cases) (part of
//!   [`sinew_cases`](sinew::sinew_cases));
//! - [`md5`](mod@md5): [`SMALL_MESH`](md5::SMALL_MESH), [`SMALL_ANIM`](md5::SMALL_ANIM) and
//!   [`md5_cases`](md5::md5_cases);
//! - `sinew_report` (private): the clip-report section's cases (part of
//!   [`sinew_cases`](sinew::sinew_cases));
//! - `sinew_layout` (private): where sections, parts and tracks are in a `.sinew` file;
//! - here: what a [`Case`] is, its [`Category`], and the byte and file helpers the formats share.
//!
//! The categories: truncation (at every section boundary of a real file, at every byte of a
//! small one), wrong magic and version, checksum mismatch, counts that overflow (near
//! `u16::MAX` / `u32::MAX`, and products that wrap a 32-bit `usize`), NaN and infinite keys and
//! matrices, unsorted key times, joint indices at or past the joint count, weights that are
//! negative or sum to 0, cycles in hierarchies, degenerate triangles (importers keep them,
//! the baker drops them, the `.sinew` parser rejects them), images (truncated, corrupt, too
//! large) and compressed streams that do not decode.
//!
//! `tests/tests/bad_input.rs` runs every case in-process; `frontend-sdl/tests/cli_bad_input.rs`
//! runs the first rejected case of each category through the `sinew` binary.

pub mod draco;
pub mod gltf;
pub mod graph;
pub mod md5;
pub mod meshopt;
pub mod morph;
pub mod sinew;
mod sinew_layout;
mod sinew_report;

use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

/// The shared model assets' folder (`../shared/assets` next to the repository, or
/// `$SINEW_ASSETS`), every file of `tests/assets/manifest.tsv` present: [`sinew_assets::dir`].
pub fn assets() -> PathBuf {
    sinew_assets::dir("")
}

/// The shared file `rel` (`ozz/pab_crossarms.glb`): [`sinew_assets::path`].
pub fn asset(rel: &str) -> PathBuf {
    sinew_assets::path(rel)
}

/// The shared `gltf/<model>/<model>.<ext>`.
pub fn gltf_asset(model: &str, ext: &str) -> PathBuf {
    asset(&format!("gltf/{model}/{model}.{ext}"))
}

/// Bob with lamp: its md5mesh and md5anim.
pub fn bob() -> (PathBuf, PathBuf) {
    (asset("md5/boblamp/boblampclean.md5mesh"), asset("md5/boblamp/boblampclean.md5anim"))
}

/// A file's bytes (panics, naming the file, when it cannot be read).
pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------------

/// What a case breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// Cut short, or longer than it says.
    Truncated,
    /// Not the format's magic (another format's file, a changed byte).
    Magic,
    /// A version the reader does not support.
    Version,
    /// A checksum that does not match (`.sinew` only).
    Checksum,
    /// Counts that overflow, or reach past the data.
    Counts,
    /// NaN or infinite values.
    NonFinite,
    /// Key times or frames out of order.
    Unsorted,
    /// Joint (or vertex) indices at or past their count.
    JointIndex,
    /// Weights that are negative or all zero.
    Weights,
    /// Cycles and other broken hierarchies.
    Cycle,
    /// Triangles that repeat a vertex.
    Degenerate,
    /// Images (textures) that are truncated, corrupt, or too large.
    Image,
    /// Compressed data (meshopt and Draco streams, their extension objects, and the accessors
    /// Draco fills) that cannot be decoded.
    Compressed,
}

use Category::*;

/// The categories that apply to every format but `.sinew`'s checksum.
pub const ALL_BUT_CHECKSUM: [Category; 10] =
    [Truncated, Magic, Version, Counts, NonFinite, Unsorted, JointIndex, Weights, Cycle, Degenerate];

/// One bad input: its name, category, bytes (a second file for md5 anims) and the outcome it
/// must have, as a description and a predicate.
pub struct Case<T, E> {
    /// What the case does, unique within its format.
    pub name: String,
    /// What it breaks.
    pub category: Category,
    /// The input (the md5mesh for md5 cases).
    pub bytes: Vec<u8>,
    /// The md5anim read with the mesh, if any.
    pub second: Option<Vec<u8>>,
    /// The outcome it must have, described.
    pub want: String,
    /// The outcome it must have, as a predicate.
    pub check: Check<T, E>,
}

/// A predicate on a case's outcome.
pub type Check<T, E> = Box<dyn Fn(&Result<T, E>) -> bool>;

impl<T, E: PartialEq + std::fmt::Debug + 'static> Case<T, E> {
    /// A case that must fail with exactly `e`.
    pub fn is(category: Category, name: impl Into<String>, bytes: Vec<u8>, e: E) -> Self {
        let want = format!("{e:?}");
        Case {
            name: name.into(),
            category,
            bytes,
            second: None,
            want,
            check: Box::new(move |r| r.as_ref().err() == Some(&e)),
        }
    }
}

impl<T, E> Case<T, E> {
    /// A case whose outcome must satisfy `check` (described by `want`).
    pub fn matching(
        category: Category,
        name: impl Into<String>,
        bytes: Vec<u8>,
        want: impl Into<String>,
        check: impl Fn(&Result<T, E>) -> bool + 'static,
    ) -> Self {
        Case { name: name.into(), category, bytes, second: None, want: want.into(), check: Box::new(check) }
    }
    /// The same case with `second` as its md5anim.
    pub fn with_second(mut self, second: Vec<u8>) -> Self {
        self.second = Some(second);
        self
    }
}

// ---------------------------------------------------------------------------------------------
// Bytes
// ---------------------------------------------------------------------------------------------

/// The little-endian `u16` at `at`.
pub fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// The little-endian `u32` at `at`.
pub fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Writes a little-endian `u16` at `at`.
pub fn put_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

/// Writes a little-endian `u32` at `at`.
pub fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Writes a little-endian `f32` at `at`.
pub fn put_f32(b: &mut [u8], at: usize, v: f32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// The 4 × 4 identity matrix, column-major.
pub const IDENTITY: [f32; 16] = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];

/// `1/√2`: the components of a quarter turn.
pub const H: f32 = std::f32::consts::FRAC_1_SQRT_2;
