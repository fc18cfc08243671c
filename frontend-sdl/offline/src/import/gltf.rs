//! glTF 2.0 importer: `.glb` and `.gltf` files to a [`Rig`].
//!
//! - **Container and buffers.** Both the binary container (`.glb`) and plain JSON (`.gltf`) are
//!   read. Buffers come from the GLB `BIN` chunk, from base64 `data:` URIs
//!   (`application/octet-stream` or `application/gltf-buffer`), or from files named by relative
//!   URIs, resolved against a base directory. Every buffer must hold at least its `byteLength`.
//! - **Hierarchy.** Every node reachable from the default scene (or from all scenes when none is
//!   the default) becomes a [`RigJoint`], parents first (depth-first from the scene roots, children
//!   in file order). Names are made unique. `matrix` nodes are decomposed into translation,
//!   rotation and scale; a matrix with shear keeps its closest TRS and gets a note.
//! - **Skins, meshes, clips.** All skins; one [`RigMesh`] per node instance of a mesh; triangle
//!   lists (strips and fans are converted, points and lines skipped); every joint influence the
//!   file has (`JOINTS_0/1`, `WEIGHTS_0/1`); morph targets (POSITION, NORMAL, TANGENT deltas)
//!   with each instance's default weights; all animations with their translation, rotation,
//!   scale and morph-weight channels and their interpolation kept as glTF defines it.
//! - **Materials.** Each primitive keeps its own material: base-color factor, base-color
//!   texture (its `texCoord` set, its sampler's wrap modes and filters, its image decoded to
//!   RGBA8 from the GLB, a `data:` URI or a relative file), and `COLOR_0` vertex colors.
//! - **Compressed and quantized meshes.** `KHR_mesh_quantization`: positions as 8- or 16-bit
//!   integers (normalized or not), normals and tangents as normalized signed 8- or 16-bit
//!   integers, dequantized as glTF defines. `KHR_meshopt_compression` and its vendor
//!   predecessor `EXT_meshopt_compression`: compressed buffer views (ATTRIBUTES, TRIANGLES and
//!   INDICES, filters OCTAHEDRAL, QUATERNION and EXPONENTIAL, and for KHR version-1 vertex
//!   streams and the COLOR filter) are decoded by the `meshopt` crate into their fallback
//!   buffer before anything reads them; a corrupt stream is a [`GltfError::Meshopt`]. Without
//!   the `meshopt` cargo feature ([`DECODES_MESHOPT`]) nothing is decoded: compressed views are
//!   read from their uncompressed fallback data, and a file without it (or that requires the
//!   extension) is [`GltfError::ExtensionNotInBuild`]. `KHR_draco_mesh_compression`: each
//!   compressed primitive's stream is decoded by the `draco-core` crate (EdgeBreaker, valence
//!   EdgeBreaker and sequential meshes; bitstream 2.2, which the extension names, and the
//!   older versions early exporters wrote) and its attributes (those the
//!   extension maps by Draco attribute id: positions, normals, texture coordinates, colors,
//!   joints, weights, ...) and indices fill the primitive's accessors, which keep their declared
//!   component types and counts (a count that does not match the stream is refused);
//!   quantized positions, normals, texture coordinates and weights come out dequantized.
//!   Attributes the extension does not list and morph targets are read as usual. A corrupt
//!   stream or decoded data that does not fit its accessor is a [`GltfError::Draco`] naming the
//!   mesh and the primitive. Without the `draco` cargo feature ([`DECODES_DRACO`]) a file whose
//!   compressed primitives keep uncompressed fallback data is read from it, and one without
//!   (or that requires the extension) is [`GltfError::ExtensionNotInBuild`].
//! - **Spring bones.** VRM 1.0's `VRMC_springBone` (with `VRMC_springBone_extended_collider`)
//!   or VRM 0.x's `secondaryAnimation`, into [`Rig::springs`]: springs, colliders, collider
//!   groups and the joints resolved for a runtime; spring data that breaks its extension's rules
//!   is a [`GltfError::Springs`]. A file that requires `VRMC_vrm` is read as glTF (its
//!   humanoid and other VRM settings are not read).
//!
//! - **Skin weights** must not be negative, and a skinned vertex must have a weight above zero
//!   ([`GltfError::NegativeWeight`], [`GltfError::ZeroWeights`]: such a vertex follows no joint,
//!   and the spec requires weights summing to 1); sums off 1 by more than 1e-3 are renormalized
//!   with a note. Triangles that repeat a vertex (strip joins, zero-area triangles of real
//!   exports) are kept as they are: the baker drops them.
//!
//! Nothing read from the file is trusted: every accessor, buffer view and sparse block is checked
//! against its buffer before the `gltf` crate's readers touch it, every index is range-checked and
//! every float must be finite. A bad file gives a [`GltfError`] naming the offending item; things
//! that are skipped or repaired are listed in [`Rig::notes`].
//!
//! # Files
//!
//! - `container`: GLB chunks or JSON text, version and schema checks, buffers (`data:` URIs and
//!   external files).
//! - `meshopt`: `KHR_meshopt_compression` / `EXT_meshopt_compression` buffer views, decoded
//!   into place.
//! - `draco`: `KHR_draco_mesh_compression` primitives, decoded into a buffer of their own that
//!   their accessors then read.
//! - `accessors`: the import state ([`Rig`] notes, decoding budget) and checked accessor reads.
//! - `hierarchy`: the node forest and its joints; `matrix`: TRS from node matrices.
//! - `skins`, `meshes`: skins, mesh instances, primitives and their weights; `morph`: morph
//!   targets, default weights and `weights` channels.
//! - `materials`: materials, texture coordinates, vertex colors, and the images (PNG, JPEG, WebP)
//!   their textures read, decoded within [`MAX_IMAGE_DIMENSION`] and the decoding budget.
//! - `animations`: clips, channels, samplers and interpolation.
//! - [`springs`]: VRM spring bones ([`SpringError`]), what is refused and what is noted.
//! - `error`: [`GltfError`].
//!
//! [`RigJoint`]: crate::rig::RigJoint
//! [`RigMesh`]: crate::rig::RigMesh

use std::path::Path;

use crate::rig::Rig;

mod accessors;
mod animations;
mod container;
mod draco;
mod error;
mod hierarchy;
mod materials;
mod matrix;
mod meshes;
mod meshopt;
mod morph;
mod skins;
pub mod springs;

#[cfg(test)]
mod tests;

pub use error::GltfError;
pub use materials::MAX_IMAGE_DIMENSION;
pub use meshes::DEFAULT_COLOR;
pub use springs::{SpringError, SpringErrorKind};

use accessors::Importer;
use container::{parse_document, resolve_buffers};

/// True when this build decodes `KHR_meshopt_compression` and `EXT_meshopt_compression` buffer
/// views (the `meshopt` cargo feature); without it, a file that needs them is refused with
/// [`GltfError::ExtensionNotInBuild`].
pub const DECODES_MESHOPT: bool = cfg!(feature = "meshopt");

/// True when this build decodes `KHR_draco_mesh_compression` primitives (the `draco` cargo
/// feature); without it, a file that needs them is refused with
/// [`GltfError::ExtensionNotInBuild`].
pub const DECODES_DRACO: bool = cfg!(feature = "draco");

/// Most nodes a file may have. Guards against hostile inputs; the baker applies the runtime's
/// own joint limit later.
pub const MAX_NODES: usize = 1 << 16;

/// Most bytes of accessor data an import decodes (meshes instanced by many nodes and accessors
/// shared by many channels count once per use). Guards against files that expand enormously.
pub const MAX_DECODED_BYTES: usize = 1 << 30;

/// Below [`MAX_DECODED_BYTES`], an import decodes at most this many bytes per byte of input
/// (the document plus its buffers), and at least [`MIN_DECODE_BUDGET`]: sparse accessors and
/// accessors without a buffer view decode to zeros of any declared count, so a few hundred bytes
/// of JSON could otherwise demand the whole [`MAX_DECODED_BYTES`].
pub const DECODED_BYTES_PER_INPUT_BYTE: usize = 64;

/// Decoding budget of a small input (see [`DECODED_BYTES_PER_INPUT_BYTE`]).
pub const MIN_DECODE_BUDGET: usize = 16 << 20;

/// Imports a glTF file (`.glb` or `.gltf`). External buffers are resolved next to the file; the
/// rig is named after the file stem.
///
/// # Errors
///
/// [`GltfError::Io`] when the file (or an external buffer) cannot be read, and every error of
/// [`load_bytes`].
pub fn load_file(path: &Path) -> Result<Rig, GltfError> {
    let bytes = std::fs::read(path).map_err(|source| GltfError::Io { path: path.to_path_buf(), source })?;
    let name = path.file_stem().map_or_else(|| "gltf".to_owned(), |s| s.to_string_lossy().into_owned());
    let base = path.parent().unwrap_or_else(|| Path::new("."));
    load_bytes(&bytes, Some(base), &name)
}

/// Imports a glTF asset from memory: a GLB container or glTF JSON text.
///
/// `base_dir` is where buffers with relative file URIs are looked up; `None` refuses them.
/// `name` becomes [`Rig::name`].
///
/// # Errors
///
/// - [`GltfError::Container`], [`GltfError::Json`], [`GltfError::Schema`],
///   [`GltfError::UnsupportedVersion`]: the bytes are not a well-formed glTF 2.0 document.
/// - [`GltfError::UnsupportedExtensions`], [`GltfError::ExtensionNotInBuild`]: the file needs an
///   extension this importer, or this build of it, does not decode.
/// - [`GltfError::MissingBuffer`], [`GltfError::BufferTooShort`], [`GltfError::Io`]: buffer data
///   is missing, unsafe to fetch (absolute or escaping paths, non-file schemes) or short.
/// - [`GltfError::Meshopt`], [`GltfError::Draco`]: compressed data that does not decode.
/// - [`GltfError::AccessorOutOfBounds`], [`GltfError::AccessorType`],
///   [`GltfError::CountMismatch`], [`GltfError::MissingAttribute`]: an accessor that is used
///   does not fit its data or its use.
/// - [`GltfError::BadIndex`], [`GltfError::NonFinite`], [`GltfError::NegativeWeight`],
///   [`GltfError::ZeroWeights`], [`GltfError::UnsortedKeyTimes`]: bad values.
/// - [`GltfError::HierarchyCycle`], [`GltfError::MultipleParents`], [`GltfError::NotARoot`],
///   [`GltfError::TooManyNodes`], [`GltfError::SkinJointNotInScene`]: the node graph is not a
///   forest of imported trees.
/// - [`GltfError::Springs`]: VRM spring bone data that breaks its extension's rules.
pub fn load_bytes(bytes: &[u8], base_dir: Option<&Path>, name: &str) -> Result<Rig, GltfError> {
    let mut notes = Vec::new();
    let parsed = parse_document(bytes, &mut notes)?;
    let doc = parsed.document;
    let mut buffers = resolve_buffers(&doc, parsed.blob, base_dir, &parsed.meshopt.fallback)?;
    let input = buffers.iter().fold(bytes.len(), |n, b| n.saturating_add(b.len()));
    let budget = input.saturating_mul(DECODED_BYTES_PER_INPUT_BYTE).clamp(MIN_DECODE_BUDGET, MAX_DECODED_BYTES);
    let mut decoded = 0;
    meshopt::decode(&doc, &parsed.meshopt, &mut buffers, &mut decoded, budget)?;
    let doc = draco::decode(doc, &parsed.draco, &mut buffers, &mut decoded, budget)?;
    let ignored_channels = parsed.ignored_channels.into_iter().collect();
    let surfaces = materials::Surfaces::new(base_dir);
    let mut imp = Importer { doc: &doc, buffers: &buffers, notes, decoded, budget, ignored_channels, surfaces };
    let mut rig = imp.build()?;
    rig.name = name.to_owned();
    rig.notes = imp.notes;
    rig.materials = std::mem::take(&mut imp.surfaces.materials);
    rig.images = std::mem::take(&mut imp.surfaces.images);
    Ok(rig)
}

impl Importer<'_> {
    /// The rig: the node count checked against [`MAX_NODES`], then the hierarchy, the joints, the
    /// skins, the meshes, the clips and the spring bones (the order in which their errors are
    /// found).
    fn build(&mut self) -> Result<Rig, GltfError> {
        let n = self.doc.nodes().len();
        if n > MAX_NODES {
            return Err(GltfError::TooManyNodes { count: n, limit: MAX_NODES });
        }
        let h = self.hierarchy()?;
        let joints = self.joints(&h)?;
        let (skins, skin_map) = self.skins(&h)?;
        let meshes = self.meshes(&h, &joints, &skin_map)?;
        let clips = self.clips(&h, &meshes)?;
        let springs = self.springs(&h, &joints)?;
        Ok(Rig { joints, skins, meshes, clips, springs, source_nodes: h.order.clone(), ..Rig::default() })
    }
}
