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
//!   file has (`JOINTS_0/1`, `WEIGHTS_0/1`); all animations with their translation, rotation and
//!   scale channels and their interpolation kept as glTF defines it.
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

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use gltf::accessor::{DataType, Dimensions};
use gltf::animation::util::ReadOutputs;
use gltf::animation::Property;
use gltf::json::validation::Validate as _;
use gltf::mesh::{Mode, Semantic};
use sinew::math::{Mat4, Quat, Transform, Vec3};

use crate::rig::{ChannelTarget, Interpolation, Rig, RigChannel, RigClip, RigJoint, RigMesh, RigPrimitive, RigSkin};

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

/// Base color of primitives that have no material.
pub const DEFAULT_COLOR: [f32; 4] = [0.8, 0.8, 0.8, 1.0];

/// Largest relative difference between a `matrix` node and the TRS it is decomposed into that
/// still counts as an exact decomposition (f32 rounding of exported matrices stays far below).
const SHEAR_TOLERANCE: f64 = 1.0e-4;

/// A skin vertex whose weights sum further than this from 1 is renormalized (with a note).
const WEIGHT_SUM_TOLERANCE: f32 = 1.0e-3;

/// Why a glTF file could not be imported.
#[derive(Debug)]
#[non_exhaustive]
pub enum GltfError {
    /// A file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The binary container (GLB header or chunks) is malformed or truncated.
    Container(String),
    /// The JSON text could not be parsed into a glTF document (syntax, wrong value types).
    Json(String),
    /// `asset.version` is not `2.<minor>`, or `asset.minVersion` is above 2.0: the file is for
    /// another major version of glTF (or needs features of a later 2.x).
    UnsupportedVersion {
        /// The version (or minimum version) the file declares.
        version: String,
    },
    /// The document breaks a rule of the glTF schema (a reference to a missing object, an
    /// unknown enum value, an unsupported required extension): the failing JSON paths.
    Schema(String),
    /// A buffer's bytes cannot be found (no BIN chunk, unsupported or unsafe URI, no base
    /// directory for an external file).
    MissingBuffer {
        /// Buffer index.
        buffer: usize,
        /// What is wrong.
        reason: String,
    },
    /// A buffer holds fewer bytes than its `byteLength`.
    BufferTooShort {
        /// Buffer index.
        buffer: usize,
        /// `byteLength` from the JSON.
        declared: usize,
        /// Bytes actually available.
        actual: usize,
    },
    /// An accessor, its buffer view or its sparse storage reaches outside the data.
    AccessorOutOfBounds {
        /// Accessor index.
        accessor: usize,
        /// What exceeds what.
        detail: String,
    },
    /// An accessor's element type does not fit its use (POSITION that is not VEC3 float, ...).
    AccessorType {
        /// Accessor index.
        accessor: usize,
        /// What the accessor is used for.
        usage: String,
        /// The element type it has.
        found: String,
    },
    /// A required attribute is missing (POSITION, or WEIGHTS_n next to JOINTS_n).
    MissingAttribute {
        /// Which primitive and attribute.
        what: String,
    },
    /// An index is out of range (a vertex index, a joint index of a skinned vertex).
    BadIndex {
        /// What the index is.
        what: String,
        /// The index.
        index: usize,
        /// The exclusive limit it must stay below.
        limit: usize,
    },
    /// A value that must be finite (position, transform, key time, key value, ...) is not.
    NonFinite {
        /// Which value.
        what: String,
    },
    /// A skinned vertex has a negative weight (glTF requires weights ≥ 0).
    NegativeWeight {
        /// Mesh index.
        mesh: usize,
        /// Primitive index within the mesh.
        primitive: usize,
        /// Vertex index within the primitive.
        vertex: usize,
    },
    /// A skinned vertex has all its weights zero: it follows no joint (glTF requires weights
    /// that sum to 1; sums off by more than 1e-3 but above 0 are renormalized with a note).
    ZeroWeights {
        /// Mesh index.
        mesh: usize,
        /// Primitive index within the mesh.
        primitive: usize,
        /// Vertex index within the primitive.
        vertex: usize,
    },
    /// An animation channel's key times are not strictly increasing.
    UnsortedKeyTimes {
        /// Animation index.
        animation: usize,
        /// Channel index within the animation.
        channel: usize,
        /// The first key whose time is not greater than the previous one.
        key: usize,
    },
    /// Two element counts that must agree do not (keys and values, attributes and positions,
    /// joints and inverse bind matrices).
    CountMismatch {
        /// What is counted.
        what: String,
        /// The count required.
        expected: usize,
        /// The count found.
        actual: usize,
    },
    /// A node is its own ancestor.
    HierarchyCycle {
        /// A node on the cycle.
        node: usize,
    },
    /// A node is listed as a child more than once (two parents, or twice by one parent).
    MultipleParents {
        /// The node.
        node: usize,
    },
    /// A scene lists a node that has a parent as one of its roots.
    NotARoot {
        /// Scene index.
        scene: usize,
        /// Node index.
        node: usize,
    },
    /// Decoding the file would produce more data than its budget allows: 64 bytes per byte of
    /// input, at least 16 MiB and at most [`MAX_DECODED_BYTES`].
    TooLarge {
        /// The accessor whose data crossed the limit.
        accessor: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// The file has more nodes than [`MAX_NODES`].
    TooManyNodes {
        /// Nodes in the file.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// A skin that a mesh in the scene uses has a joint outside the imported scene.
    SkinJointNotInScene {
        /// Skin index.
        skin: usize,
        /// The joint's node index.
        node: usize,
    },
}

impl fmt::Display for GltfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GltfError::Io { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            GltfError::Container(s) => write!(f, "malformed GLB container: {s}"),
            GltfError::Json(s) => write!(f, "invalid glTF JSON: {s}"),
            GltfError::Schema(s) => write!(f, "glTF schema violation: {s}"),
            GltfError::UnsupportedVersion { version } => {
                write!(f, "glTF version {:?} is not supported (only 2.0)", short(version))
            }
            GltfError::MissingBuffer { buffer, reason } => write!(f, "buffer {buffer}: {reason}"),
            GltfError::BufferTooShort { buffer, declared, actual } => {
                write!(f, "buffer {buffer} has {actual} bytes, its byteLength is {declared}")
            }
            GltfError::AccessorOutOfBounds { accessor, detail } => write!(f, "accessor {accessor}: {detail}"),
            GltfError::AccessorType { accessor, usage, found } => {
                write!(f, "accessor {accessor} used as {usage} has the wrong element type {found}")
            }
            GltfError::MissingAttribute { what } => write!(f, "missing attribute: {what}"),
            GltfError::BadIndex { what, index, limit } => write!(f, "{what}: index {index} is not below {limit}"),
            GltfError::NonFinite { what } => write!(f, "{what} is not finite"),
            GltfError::NegativeWeight { mesh, primitive, vertex } => {
                write!(f, "mesh {mesh} primitive {primitive} vertex {vertex} has a negative weight")
            }
            GltfError::ZeroWeights { mesh, primitive, vertex } => {
                write!(
                    f,
                    "mesh {mesh} primitive {primitive} vertex {vertex} has all weights zero (it follows no joint)"
                )
            }
            GltfError::UnsortedKeyTimes { animation, channel, key } => write!(
                f,
                "animation {animation} channel {channel}: key time {key} is not greater than the previous one"
            ),
            GltfError::CountMismatch { what, expected, actual } => {
                write!(f, "{what}: expected {expected} elements, found {actual}")
            }
            GltfError::HierarchyCycle { node } => write!(f, "node {node} is its own ancestor"),
            GltfError::MultipleParents { node } => write!(f, "node {node} is the child of more than one parent"),
            GltfError::NotARoot { scene, node } => write!(f, "scene {scene} lists node {node}, which has a parent"),
            GltfError::TooLarge { accessor, limit } => {
                write!(f, "accessor {accessor}: the decoded data would exceed {limit} bytes")
            }
            GltfError::TooManyNodes { count, limit } => write!(f, "{count} nodes, at most {limit} are accepted"),
            GltfError::SkinJointNotInScene { skin, node } => {
                write!(f, "skin {skin} uses node {node}, which is not in the imported scene")
            }
        }
    }
}

impl std::error::Error for GltfError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GltfError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

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
/// - [`GltfError::MissingBuffer`], [`GltfError::BufferTooShort`], [`GltfError::Io`]: buffer data
///   is missing, unsafe to fetch (absolute or escaping paths, non-file schemes) or short.
/// - [`GltfError::AccessorOutOfBounds`], [`GltfError::AccessorType`],
///   [`GltfError::CountMismatch`], [`GltfError::MissingAttribute`]: an accessor that is used
///   does not fit its data or its use.
/// - [`GltfError::BadIndex`], [`GltfError::NonFinite`], [`GltfError::NegativeWeight`],
///   [`GltfError::ZeroWeights`], [`GltfError::UnsortedKeyTimes`]: bad values.
/// - [`GltfError::HierarchyCycle`], [`GltfError::MultipleParents`], [`GltfError::NotARoot`],
///   [`GltfError::TooManyNodes`], [`GltfError::SkinJointNotInScene`]: the node graph is not a
///   forest of imported trees.
pub fn load_bytes(bytes: &[u8], base_dir: Option<&Path>, name: &str) -> Result<Rig, GltfError> {
    let mut notes = Vec::new();
    let (doc, blob) = parse_document(bytes, &mut notes)?;
    let buffers = resolve_buffers(&doc, blob, base_dir)?;
    let input = buffers.iter().fold(bytes.len(), |n, b| n.saturating_add(b.len()));
    let budget = input.saturating_mul(DECODED_BYTES_PER_INPUT_BYTE).clamp(MIN_DECODE_BUDGET, MAX_DECODED_BYTES);
    let mut imp = Importer { doc: &doc, buffers: &buffers, notes, decoded: 0, budget };
    let mut rig = imp.build()?;
    rig.name = name.to_owned();
    rig.notes = imp.notes;
    Ok(rig)
}

// ---------------------------------------------------------------------------------------------
// Container, JSON and schema.

/// Parses the container and JSON and validates the schema. Returns the document and the GLB
/// `BIN` chunk, if any.
fn parse_document(bytes: &[u8], notes: &mut Vec<String>) -> Result<(gltf::Document, Option<Vec<u8>>), GltfError> {
    let slice = if bytes.starts_with(b"glTF") {
        check_glb_header(bytes)?
    } else {
        bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
    };
    let gltf = gltf::Gltf::from_slice_without_validation(slice).map_err(|e| match e {
        gltf::Error::Binary(b) => GltfError::Container(b.to_string()),
        other => GltfError::Json(other.to_string()),
    })?;
    let gltf::Gltf { document, blob } = gltf;
    let root = document.as_json();

    // `major.minor`: this importer reads 2.0 and the later 2.x that do not require more.
    let numbers = |v: &str| -> Option<(u32, u32)> {
        let (major, minor) = v.split_once('.')?;
        Some((major.parse().ok()?, minor.parse().ok()?))
    };
    let version = &root.asset.version;
    if numbers(version).is_none_or(|(major, _)| major != 2) {
        return Err(GltfError::UnsupportedVersion { version: version.clone() });
    }
    if let Some(min) = &root.asset.min_version {
        if numbers(min).is_none_or(|v| v > (2, 0)) {
            return Err(GltfError::UnsupportedVersion { version: min.clone() });
        }
    }

    // The schema validation of `gltf-json` indexes the accessor list with the POSITION
    // accessor index before checking it, so attribute references are checked here first.
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            for index in prim.attributes.values() {
                if index.value() >= root.accessors.len() {
                    return Err(GltfError::Schema(format!(
                        "meshes[{m}].primitives[{p}].attributes: accessor {} does not exist",
                        index.value()
                    )));
                }
            }
        }
    }

    // Nor does it check animation channel targets, which the `gltf` crate unwraps.
    for (a, anim) in root.animations.iter().enumerate() {
        for (c, channel) in anim.channels.iter().enumerate() {
            if channel.target.node.value() >= root.nodes.len() {
                return Err(GltfError::Schema(format!(
                    "animations[{a}].channels[{c}].target.node: node {} does not exist",
                    channel.target.node.value()
                )));
            }
            if matches!(channel.target.path, gltf::json::validation::Checked::Invalid) {
                return Err(GltfError::Schema(format!("animations[{a}].channels[{c}].target.path: invalid value")));
            }
        }
    }

    let mut errors = Vec::new();
    let mut unknown_semantics = 0usize;
    root.validate(root, gltf::json::Path::new, &mut |path, error| {
        let path = path();
        // Application-specific attributes (`_NAME`) and unknown semantics are not errors: they
        // are simply not read.
        if matches!(error, gltf::json::validation::Error::Invalid)
            && path.as_str().ends_with("[\"<invalid semantic name>\"]")
        {
            unknown_semantics += 1;
        } else {
            errors.push(format!("{}: {error}", path.as_str()));
        }
    });
    if !errors.is_empty() {
        let total = errors.len();
        errors.truncate(8);
        let mut text = errors.join("; ");
        if total > 8 {
            text.push_str(&format!("; and {} more", total - 8));
        }
        return Err(GltfError::Schema(text));
    }
    if unknown_semantics > 0 {
        notes.push(format!("{unknown_semantics} primitives have attributes with unknown semantics; they were ignored"));
    }
    Ok((document, blob))
}

/// Checks the 12-byte GLB header and returns the bytes it covers.
fn check_glb_header(bytes: &[u8]) -> Result<&[u8], GltfError> {
    let word = |at: usize| -> Option<u32> {
        let b: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
        Some(u32::from_le_bytes(b))
    };
    let (Some(version), Some(length)) = (word(4), word(8)) else {
        return Err(GltfError::Container(format!("{} bytes is shorter than the 12-byte header", bytes.len())));
    };
    if version != 2 {
        return Err(GltfError::Container(format!("version {version}, only 2 is supported")));
    }
    let length = length as usize;
    if length < 20 {
        return Err(GltfError::Container(format!("total length {length} cannot hold a header and a JSON chunk")));
    }
    bytes.get(..length).ok_or_else(|| {
        GltfError::Container(format!("truncated: the header says {length} bytes, there are {}", bytes.len()))
    })
}

// ---------------------------------------------------------------------------------------------
// Buffers.

/// Fetches the bytes of every buffer, each cut to its `byteLength`.
fn resolve_buffers(
    doc: &gltf::Document,
    mut blob: Option<Vec<u8>>,
    base_dir: Option<&Path>,
) -> Result<Vec<Vec<u8>>, GltfError> {
    let mut out = Vec::with_capacity(doc.buffers().len());
    for buffer in doc.buffers() {
        let index = buffer.index();
        let mut data = match buffer.source() {
            gltf::buffer::Source::Bin => {
                if index != 0 {
                    return Err(GltfError::MissingBuffer {
                        buffer: index,
                        reason: "has no URI, and only buffer 0 may refer to the GLB BIN chunk".into(),
                    });
                }
                blob.take().ok_or_else(|| GltfError::MissingBuffer {
                    buffer: index,
                    reason: "has no URI and the file has no GLB BIN chunk".into(),
                })?
            }
            gltf::buffer::Source::Uri(uri) => fetch_uri(index, uri, base_dir)?,
        };
        let declared = buffer.length();
        if data.len() < declared {
            return Err(GltfError::BufferTooShort { buffer: index, declared, actual: data.len() });
        }
        data.truncate(declared);
        out.push(data);
    }
    Ok(out)
}

/// Decodes a `data:` URI or reads a relative file URI.
fn fetch_uri(buffer: usize, uri: &str, base_dir: Option<&Path>) -> Result<Vec<u8>, GltfError> {
    let missing = |reason: String| GltfError::MissingBuffer { buffer, reason };
    if uri.get(..5).is_some_and(|s| s.eq_ignore_ascii_case("data:")) {
        let rest = uri.get(5..).unwrap_or("");
        let (header, payload) = rest.split_once(',').ok_or_else(|| missing("data: URI without a comma".into()))?;
        let media = header.strip_suffix(";base64").ok_or_else(|| missing("data: URI is not base64".into()))?;
        let accepted = ["", "application/octet-stream", "application/gltf-buffer"];
        if !accepted.iter().any(|a| media.eq_ignore_ascii_case(a)) {
            return Err(missing(format!("data: URI media type {media:?} is not a buffer type")));
        }
        let engine = base64::engine::GeneralPurpose::new(
            &base64::alphabet::STANDARD,
            base64::engine::GeneralPurposeConfig::new()
                .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
        );
        return engine.decode(payload).map_err(|e| missing(format!("bad base64 in data: URI: {e}")));
    }
    let rel = relative_file_path(uri).map_err(|r| missing(format!("URI {:?}: {r}", short(uri))))?;
    let dir = base_dir.ok_or_else(|| missing(format!("external file {:?} but no base directory", short(uri))))?;
    let path = dir.join(rel);
    std::fs::read(&path).map_err(|source| GltfError::Io { path, source })
}

/// The first 64 characters of a string, for messages.
fn short(s: &str) -> &str {
    s.char_indices().nth(64).map_or(s, |(i, _)| s.get(..i).unwrap_or(s))
}

/// Turns a URI reference into a relative path that stays inside the base directory.
fn relative_file_path(uri: &str) -> Result<PathBuf, &'static str> {
    if uri.is_empty() {
        return Err("empty URI");
    }
    let first_sep = uri.find(['/', '?', '#']).unwrap_or(uri.len());
    if uri.get(..first_sep).is_some_and(|head| head.contains(':')) {
        return Err("has a scheme or drive letter; only relative file paths are read");
    }
    if uri.contains(['?', '#']) {
        return Err("has a query or fragment; only relative file paths are read");
    }
    let decoded = percent_decode(uri).ok_or("bad percent-escape")?;
    if decoded.starts_with(['/', '\\']) {
        return Err("is an absolute path");
    }
    if decoded.contains('\0') {
        return Err("contains a NUL byte");
    }
    let mut path = PathBuf::new();
    for part in decoded.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => return Err("leaves the base directory"),
            p if p.contains(':') => return Err("has a drive or stream separator"),
            p => path.push(p),
        }
    }
    if path.as_os_str().is_empty() {
        return Err("names no file");
    }
    Ok(path)
}

/// Decodes `%XX` escapes; `None` on a malformed escape or invalid UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

// ---------------------------------------------------------------------------------------------
// The importer proper.

/// Allowed element types of each accessor use.
const VEC3_F32: &[(DataType, Dimensions)] = &[(DataType::F32, Dimensions::Vec3)];
const VEC4_F32: &[(DataType, Dimensions)] = &[(DataType::F32, Dimensions::Vec4)];
const SCALAR_F32: &[(DataType, Dimensions)] = &[(DataType::F32, Dimensions::Scalar)];
const MAT4_F32: &[(DataType, Dimensions)] = &[(DataType::F32, Dimensions::Mat4)];
const INDICES: &[(DataType, Dimensions)] =
    &[(DataType::U8, Dimensions::Scalar), (DataType::U16, Dimensions::Scalar), (DataType::U32, Dimensions::Scalar)];
const JOINTS: &[(DataType, Dimensions)] = &[(DataType::U8, Dimensions::Vec4), (DataType::U16, Dimensions::Vec4)];
const WEIGHTS: &[(DataType, Dimensions)] =
    &[(DataType::F32, Dimensions::Vec4), (DataType::U8, Dimensions::Vec4), (DataType::U16, Dimensions::Vec4)];
const ROTATIONS: &[(DataType, Dimensions)] = &[
    (DataType::F32, Dimensions::Vec4),
    (DataType::I8, Dimensions::Vec4),
    (DataType::U8, Dimensions::Vec4),
    (DataType::I16, Dimensions::Vec4),
    (DataType::U16, Dimensions::Vec4),
];

/// The imported node forest.
struct Hierarchy {
    /// Node index of each joint, parents first.
    order: Vec<usize>,
    /// Joint index of each node, `None` for nodes outside the imported scenes.
    joint_of_node: Vec<Option<usize>>,
    /// Parent node of each node.
    parent: Vec<Option<usize>>,
}

/// Makes names unique by appending `#1`, `#2`, ...
#[derive(Default)]
struct UniqueNames {
    used: HashSet<String>,
    renamed: usize,
}

impl UniqueNames {
    fn make(&mut self, base: String) -> String {
        if self.used.insert(base.clone()) {
            return base;
        }
        self.renamed += 1;
        let mut n = 1usize;
        loop {
            let candidate = format!("{base}#{n}");
            if self.used.insert(candidate.clone()) {
                return candidate;
            }
            n += 1;
        }
    }
}

struct Importer<'a> {
    doc: &'a gltf::Document,
    buffers: &'a [Vec<u8>],
    notes: Vec<String>,
    /// Bytes decoded so far, against `budget`.
    decoded: usize,
    /// Most bytes this import may decode (see [`DECODED_BYTES_PER_INPUT_BYTE`]).
    budget: usize,
}

/// A skin mapped onto the rig: its index in [`Rig::skins`] and its joint count.
#[derive(Clone, Copy)]
struct MappedSkin {
    index: usize,
    joints: usize,
}

impl<'a> Importer<'a> {
    /// The buffer lookup the `gltf` readers call.
    fn data(&self) -> impl Fn(gltf::Buffer<'_>) -> Option<&'a [u8]> + Clone + 'a {
        let buffers = self.buffers;
        move |b: gltf::Buffer<'_>| buffers.get(b.index()).map(Vec::as_slice)
    }

    fn build(&mut self) -> Result<Rig, GltfError> {
        let h = self.hierarchy()?;
        let joints = self.joints(&h)?;
        let (skins, skin_map) = self.skins(&h)?;
        let meshes = self.meshes(&h, &joints, &skin_map)?;
        let clips = self.clips(&h)?;
        Ok(Rig { name: String::new(), joints, skins, meshes, clips, notes: Vec::new(), meters_per_unit: None })
    }

    // ---- hierarchy ----------------------------------------------------------------------

    fn hierarchy(&mut self) -> Result<Hierarchy, GltfError> {
        let n = self.doc.nodes().len();
        if n > MAX_NODES {
            return Err(GltfError::TooManyNodes { count: n, limit: MAX_NODES });
        }
        let mut parent: Vec<Option<usize>> = vec![None; n];
        for node in self.doc.nodes() {
            for child in node.children() {
                let c = child.index();
                if c == node.index() {
                    return Err(GltfError::HierarchyCycle { node: c });
                }
                let slot = parent.get_mut(c).ok_or(GltfError::MultipleParents { node: c })?;
                if slot.is_some() {
                    return Err(GltfError::MultipleParents { node: c });
                }
                *slot = Some(node.index());
            }
        }
        // Every node has at most one parent, so following parents from any node either ends at
        // a root or loops: a loop is found when a walk meets a node of its own chain.
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            OnChain,
            Done,
        }
        let mut mark = vec![Mark::New; n];
        let mut chain = Vec::new();
        for start in 0..n {
            chain.clear();
            let mut cur = start;
            loop {
                match mark.get(cur).copied().unwrap_or(Mark::Done) {
                    Mark::Done => break,
                    Mark::OnChain => return Err(GltfError::HierarchyCycle { node: cur }),
                    Mark::New => {
                        if let Some(m) = mark.get_mut(cur) {
                            *m = Mark::OnChain;
                        }
                        chain.push(cur);
                        match parent.get(cur).copied().flatten() {
                            Some(p) => cur = p,
                            None => break,
                        }
                    }
                }
            }
            for &c in &chain {
                if let Some(m) = mark.get_mut(c) {
                    *m = Mark::Done;
                }
            }
        }

        // Scene roots.
        let mut roots = Vec::new();
        let mut is_root = vec![false; n];
        let scenes: Vec<gltf::Scene<'_>> = match self.doc.default_scene() {
            Some(s) => vec![s],
            None => self.doc.scenes().collect(),
        };
        if self.doc.default_scene().is_none() && scenes.len() > 1 {
            self.notes.push(format!("no default scene: the nodes of all {} scenes were imported", scenes.len()));
        }
        for scene in &scenes {
            for node in scene.nodes() {
                let i = node.index();
                if parent.get(i).copied().flatten().is_some() {
                    return Err(GltfError::NotARoot { scene: scene.index(), node: i });
                }
                if let Some(r) = is_root.get_mut(i) {
                    if !*r {
                        *r = true;
                        roots.push(i);
                    }
                }
            }
        }
        if scenes.is_empty() {
            roots = (0..n).filter(|&i| parent.get(i).copied().flatten().is_none()).collect();
            if n > 0 {
                self.notes.push("no scene: every root node was imported".into());
            }
        }

        // Depth-first, parents first, children in file order.
        let mut order = Vec::with_capacity(n);
        let mut joint_of_node = vec![None; n];
        let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
        while let Some(i) = stack.pop() {
            let Some(slot) = joint_of_node.get_mut(i) else { continue };
            if slot.is_some() {
                continue;
            }
            *slot = Some(order.len());
            order.push(i);
            if let Some(node) = self.doc.nodes().nth(i) {
                let children: Vec<usize> = node.children().map(|c| c.index()).collect();
                stack.extend(children.into_iter().rev());
            }
        }
        let left_out = n - order.len();
        if left_out > 0 {
            self.notes.push(format!("{left_out} nodes are not in the imported scene(s) and were left out"));
        }
        Ok(Hierarchy { order, joint_of_node, parent })
    }

    fn joints(&mut self, h: &Hierarchy) -> Result<Vec<RigJoint>, GltfError> {
        let mut names = UniqueNames::default();
        let mut joints = Vec::with_capacity(h.order.len());
        for &i in &h.order {
            let Some(node) = self.doc.nodes().nth(i) else { continue };
            let base = match node.name() {
                Some(s) if !s.is_empty() => s.to_owned(),
                _ => format!("node{i}"),
            };
            let name = names.make(base);
            let rest = self.node_rest(&node, &name)?;
            let parent = h.parent.get(i).copied().flatten().and_then(|p| h.joint_of_node.get(p).copied().flatten());
            joints.push(RigJoint { name, parent, rest });
        }
        if names.renamed > 0 {
            self.notes.push(format!("{} duplicate node names were made unique with a #n suffix", names.renamed));
        }
        Ok(joints)
    }

    /// A node's local transform as TRS.
    fn node_rest(&mut self, node: &gltf::Node<'_>, name: &str) -> Result<Transform<f32>, GltfError> {
        let i = node.index();
        let non_finite = |what: &str| GltfError::NonFinite { what: format!("node {i} ({name}) {what}") };
        match node.transform() {
            gltf::scene::Transform::Matrix { matrix } => {
                if !matrix.iter().flatten().all(|v| v.is_finite()) {
                    return Err(non_finite("matrix"));
                }
                let d = decompose(&matrix);
                if !d.transform.is_finite() {
                    return Err(non_finite("matrix decomposition"));
                }
                if d.projective {
                    self.notes.push(format!("node {i} ({name}): matrix has a projective row; it was ignored"));
                }
                if d.error > SHEAR_TOLERANCE {
                    self.notes.push(format!(
                        "node {i} ({name}): matrix is not translation-rotation-scale (shear); kept the closest TRS \
                         (relative error {:.3e})",
                        d.error
                    ));
                }
                Ok(d.transform)
            }
            gltf::scene::Transform::Decomposed { translation, rotation, scale } => {
                let t = Vec3::from_array(translation);
                let s = Vec3::from_array(scale);
                let q = Quat::from_array(rotation);
                if !t.is_finite() {
                    return Err(non_finite("translation"));
                }
                if !s.is_finite() {
                    return Err(non_finite("scale"));
                }
                if !q.is_finite() {
                    return Err(non_finite("rotation"));
                }
                let len = q.length_squared().sqrt();
                let q = if len.is_nan() || len <= 1.0e-6 || !len.is_finite() {
                    self.notes.push(format!("node {i} ({name}): zero rotation quaternion replaced by identity"));
                    Quat::IDENTITY
                } else {
                    if (len - 1.0).abs() > 1.0e-3 {
                        self.notes.push(format!("node {i} ({name}): rotation of length {len} was normalized"));
                    }
                    Quat::new(q.x / len, q.y / len, q.z / len, q.w / len)
                };
                Ok(Transform::new(t, q, s))
            }
        }
    }

    // ---- skins --------------------------------------------------------------------------

    fn skins(&mut self, h: &Hierarchy) -> Result<(Vec<RigSkin>, Vec<Option<MappedSkin>>), GltfError> {
        // Skins that an imported mesh node uses.
        let mut used = vec![false; self.doc.skins().len()];
        for &i in &h.order {
            if let Some(node) = self.doc.nodes().nth(i) {
                if let (Some(skin), Some(_)) = (node.skin(), node.mesh()) {
                    if let Some(u) = used.get_mut(skin.index()) {
                        *u = true;
                    }
                }
            }
        }
        let mut names = UniqueNames::default();
        let mut skins = Vec::new();
        let mut map = Vec::with_capacity(used.len());
        for skin in self.doc.skins() {
            let si = skin.index();
            let mut joints = Vec::new();
            let mut outside = None;
            for j in skin.joints() {
                match h.joint_of_node.get(j.index()).copied().flatten() {
                    Some(k) => joints.push(k),
                    None => {
                        outside = Some(j.index());
                        break;
                    }
                }
            }
            if let Some(node) = outside {
                if used.get(si).copied().unwrap_or(false) {
                    return Err(GltfError::SkinJointNotInScene { skin: si, node });
                }
                self.notes.push(format!("skin {si}: joint node {node} is not in the scene; the skin was left out"));
                map.push(None);
                continue;
            }
            let inverse_bind = match skin.inverse_bind_matrices() {
                None => vec![Mat4::<f32>::IDENTITY.to_cols_array(); joints.len()],
                Some(acc) => {
                    let usage = format!("skin {si} inverse bind matrices");
                    let count = self.check_accessor(&acc, &usage, MAT4_F32)?;
                    if count < joints.len() {
                        return Err(GltfError::CountMismatch { what: usage, expected: joints.len(), actual: count });
                    }
                    let reader = skin.reader(self.data());
                    let mats = self.collect(reader.read_inverse_bind_matrices(), acc.index(), count)?;
                    let mut out = Vec::with_capacity(joints.len());
                    for (k, m) in mats.iter().take(joints.len()).enumerate() {
                        let mut a = [0.0f32; 16];
                        for (dst, src) in a.iter_mut().zip(m.iter().flatten()) {
                            *dst = *src;
                        }
                        if !a.iter().all(|v| v.is_finite()) {
                            return Err(GltfError::NonFinite { what: format!("skin {si} inverse bind matrix {k}") });
                        }
                        out.push(a);
                    }
                    out
                }
            };
            let name =
                names.make(skin.name().filter(|s| !s.is_empty()).map_or_else(|| format!("skin{si}"), str::to_owned));
            map.push(Some(MappedSkin { index: skins.len(), joints: joints.len() }));
            skins.push(RigSkin { name, joints, inverse_bind });
        }
        Ok((skins, map))
    }

    // ---- meshes -------------------------------------------------------------------------

    fn meshes(
        &mut self,
        h: &Hierarchy,
        joints: &[RigJoint],
        skin_map: &[Option<MappedSkin>],
    ) -> Result<Vec<RigMesh>, GltfError> {
        let mut instances = vec![0usize; self.doc.meshes().len()];
        for &i in &h.order {
            if let Some(mesh) = self.doc.nodes().nth(i).and_then(|n| n.mesh()) {
                if let Some(c) = instances.get_mut(mesh.index()) {
                    *c += 1;
                }
            }
        }
        let mut meshes = Vec::new();
        for (j, &i) in h.order.iter().enumerate() {
            let Some(node) = self.doc.nodes().nth(i) else { continue };
            let Some(mesh) = node.mesh() else { continue };
            let mi = mesh.index();
            let base = mesh.name().filter(|s| !s.is_empty()).map_or_else(|| format!("mesh{mi}"), str::to_owned);
            let name = if instances.get(mi).copied().unwrap_or(0) > 1 {
                format!("{base}@{}", joints.get(j).map_or("", |jt| jt.name.as_str()))
            } else {
                base
            };
            let skin = match node.skin() {
                Some(s) => Some(
                    skin_map
                        .get(s.index())
                        .copied()
                        .flatten()
                        .ok_or(GltfError::SkinJointNotInScene { skin: s.index(), node: i })?,
                ),
                None => None,
            };
            let mut primitives = Vec::new();
            for prim in mesh.primitives() {
                if let Some(p) = self.primitive(&mesh, &prim, skin.map(|s| s.joints))? {
                    primitives.push(p);
                }
            }
            meshes.push(RigMesh {
                name,
                skin: skin.map(|s| s.index),
                node: if skin.is_some() { None } else { Some(j) },
                primitives,
            });
        }
        Ok(meshes)
    }

    /// Reads one primitive; `None` when it is skipped (not triangles, no vertices).
    /// `skin_joints` is the joint count of the node's skin, `None` for a rigid node.
    fn primitive(
        &mut self,
        mesh: &gltf::Mesh<'_>,
        prim: &gltf::Primitive<'_>,
        skin_joints: Option<usize>,
    ) -> Result<Option<RigPrimitive>, GltfError> {
        let label = format!("mesh {} primitive {}", mesh.index(), prim.index());
        let mode = prim.mode();
        if !matches!(mode, Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan) {
            self.notes.push(format!("{label}: {mode:?} primitive skipped (only triangles are imported)"));
            return Ok(None);
        }
        let reader = prim.reader(self.data());

        let pos_acc = prim
            .get(&Semantic::Positions)
            .ok_or_else(|| GltfError::MissingAttribute { what: format!("{label} POSITION") })?;
        let n = self.check_accessor(&pos_acc, &format!("{label} POSITION"), VEC3_F32)?;
        if n == 0 {
            self.notes.push(format!("{label}: no vertices, skipped"));
            return Ok(None);
        }
        let positions = self.collect(reader.read_positions(), pos_acc.index(), n)?;
        check_finite(positions.iter().flatten(), || format!("{label} POSITION"))?;

        let normals = match prim.get(&Semantic::Normals) {
            None => None,
            Some(acc) => {
                let what = format!("{label} NORMAL");
                self.check_count(self.check_accessor(&acc, &what, VEC3_F32)?, n, &what)?;
                let v = self.collect(reader.read_normals(), acc.index(), n)?;
                check_finite(v.iter().flatten(), || what.clone())?;
                Some(v)
            }
        };
        let tangents = match prim.get(&Semantic::Tangents) {
            None => None,
            Some(acc) => {
                let what = format!("{label} TANGENT");
                self.check_count(self.check_accessor(&acc, &what, VEC4_F32)?, n, &what)?;
                let v = self.collect(reader.read_tangents(), acc.index(), n)?;
                check_finite(v.iter().flatten(), || what.clone())?;
                Some(v)
            }
        };

        // Influences.
        let mut influences = 0;
        let mut joint_indices = Vec::new();
        let mut joint_weights = Vec::new();
        let has_joints = prim.get(&Semantic::Joints(0)).is_some();
        match skin_joints {
            None if has_joints => {
                self.notes.push(format!("{label}: the node has no skin; its joint influences were ignored"));
            }
            Some(_) if !has_joints => {
                self.notes.push(format!("{label}: skinned node but no JOINTS_0; the primitive has no influences"));
            }
            Some(limit) => {
                let mut sets = Vec::new();
                for set in 0..2u32 {
                    let (j, w) = (prim.get(&Semantic::Joints(set)), prim.get(&Semantic::Weights(set)));
                    match (j, w) {
                        (None, None) => break,
                        (Some(_), None) => {
                            return Err(GltfError::MissingAttribute { what: format!("{label} WEIGHTS_{set}") })
                        }
                        (None, Some(_)) => {
                            return Err(GltfError::MissingAttribute { what: format!("{label} JOINTS_{set}") })
                        }
                        (Some(ja), Some(wa)) => {
                            let jw = format!("{label} JOINTS_{set}");
                            let ww = format!("{label} WEIGHTS_{set}");
                            self.check_count(self.check_accessor(&ja, &jw, JOINTS)?, n, &jw)?;
                            self.check_count(self.check_accessor(&wa, &ww, WEIGHTS)?, n, &ww)?;
                            let js = self.collect(reader.read_joints(set).map(|r| r.into_u16()), ja.index(), n)?;
                            let ws = self.collect(reader.read_weights(set).map(|r| r.into_f32()), wa.index(), n)?;
                            sets.push((js, ws));
                        }
                    }
                }
                if prim.get(&Semantic::Joints(2)).is_some() {
                    self.notes.push(format!("{label}: JOINTS_2 and above ignored (at most 8 influences are read)"));
                }
                influences = 4 * sets.len();
                joint_indices.reserve(n * influences);
                joint_weights.reserve(n * influences);
                let (mut dropped, mut renormalized) = (0usize, 0usize);
                for v in 0..n {
                    let start = joint_weights.len();
                    for (js, ws) in &sets {
                        let (Some(jv), Some(wv)) = (js.get(v), ws.get(v)) else {
                            return Err(GltfError::CountMismatch {
                                what: format!("{label} influences"),
                                expected: n,
                                actual: js.len().min(ws.len()),
                            });
                        };
                        for (&jt, &w) in jv.iter().zip(wv.iter()) {
                            if !w.is_finite() {
                                return Err(GltfError::NonFinite { what: format!("{label} vertex {v} weight") });
                            }
                            if w < 0.0 {
                                return Err(GltfError::NegativeWeight {
                                    mesh: mesh.index(),
                                    primitive: prim.index(),
                                    vertex: v,
                                });
                            }
                            let jt = if usize::from(jt) < limit {
                                jt
                            } else if w == 0.0 {
                                dropped += 1;
                                0
                            } else {
                                return Err(GltfError::BadIndex {
                                    what: format!("{label} vertex {v} joint"),
                                    index: usize::from(jt),
                                    limit,
                                });
                            };
                            joint_indices.push(jt);
                            joint_weights.push(w);
                        }
                    }
                    let ws = joint_weights.get_mut(start..).unwrap_or_default();
                    let sum: f32 = ws.iter().sum();
                    if sum == 0.0 {
                        return Err(GltfError::ZeroWeights { mesh: mesh.index(), primitive: prim.index(), vertex: v });
                    } else if (sum - 1.0).abs() > WEIGHT_SUM_TOLERANCE {
                        renormalized += 1;
                        for w in ws.iter_mut() {
                            *w /= sum;
                        }
                    }
                }
                if dropped > 0 {
                    self.notes.push(format!(
                        "{label}: {dropped} zero-weight influences had out-of-range joint indices; set to joint 0"
                    ));
                }
                if renormalized > 0 {
                    self.notes
                        .push(format!("{label}: {renormalized} vertices' weights did not sum to 1; renormalized"));
                }
            }
            None => {}
        }

        // Indices.
        let raw: Vec<u32> = match prim.indices() {
            None => (0..n).map(|v| v as u32).collect(),
            Some(acc) => {
                let what = format!("{label} indices");
                let count = self.check_accessor(&acc, &what, INDICES)?;
                let idx = if count == 0 {
                    Vec::new()
                } else {
                    self.collect(reader.read_indices().map(|r| r.into_u32()), acc.index(), count)?
                };
                if let Some(&bad) = idx.iter().find(|&&i| i as usize >= n) {
                    return Err(GltfError::BadIndex { what, index: bad as usize, limit: n });
                }
                idx
            }
        };
        let indices = match mode {
            Mode::TriangleStrip => (0..raw.len().saturating_sub(2))
                .flat_map(|i| {
                    let (a, b) = if i % 2 == 0 { (i + 1, i + 2) } else { (i + 2, i + 1) };
                    [raw.get(i), raw.get(a), raw.get(b)]
                })
                .flatten()
                .copied()
                .collect(),
            Mode::TriangleFan => (1..raw.len().saturating_sub(1))
                .flat_map(|i| [raw.get(i), raw.get(i + 1), raw.first()])
                .flatten()
                .copied()
                .collect(),
            _ => {
                let mut list = raw;
                if list.len() % 3 != 0 {
                    self.notes.push(format!(
                        "{label}: {} indices is not a multiple of 3; the last {} were dropped",
                        list.len(),
                        list.len() % 3
                    ));
                    list.truncate(list.len() - list.len() % 3);
                }
                list
            }
        };

        let color = if prim.material().index().is_some() {
            let c = prim.material().pbr_metallic_roughness().base_color_factor();
            if !c.iter().all(|v| v.is_finite()) {
                return Err(GltfError::NonFinite { what: format!("{label} material base color") });
            }
            c
        } else {
            DEFAULT_COLOR
        };
        if prim.morph_targets().len() > 0 {
            self.notes.push(format!("{label}: {} morph targets ignored", prim.morph_targets().len()));
        }
        Ok(Some(RigPrimitive {
            positions,
            normals,
            tangents,
            influences,
            joint_indices,
            joint_weights,
            indices,
            color,
        }))
    }

    // ---- animations ---------------------------------------------------------------------

    fn clips(&mut self, h: &Hierarchy) -> Result<Vec<RigClip>, GltfError> {
        let mut names = UniqueNames::default();
        let mut clips = Vec::with_capacity(self.doc.animations().len());
        for anim in self.doc.animations() {
            let ai = anim.index();
            let base = anim.name().filter(|s| !s.is_empty()).map_or_else(|| format!("clip{ai}"), str::to_owned);
            let name = names.make(base);
            let mut seen: HashSet<(usize, ChannelTarget)> = HashSet::new();
            let mut channels = Vec::new();
            for (ci, ch) in anim.channels().enumerate() {
                let label = format!("clip {name:?} channel {ci}");
                let node = ch.target().node().index();
                let target = match ch.target().property() {
                    Property::Translation => ChannelTarget::Translation,
                    Property::Rotation => ChannelTarget::Rotation,
                    Property::Scale => ChannelTarget::Scale,
                    Property::MorphTargetWeights => {
                        self.notes.push(format!("{label}: morph-target weights channel on node {node} skipped"));
                        continue;
                    }
                };
                let Some(joint) = h.joint_of_node.get(node).copied().flatten() else {
                    self.notes.push(format!("{label}: target node {node} is not in the scene; skipped"));
                    continue;
                };
                if !seen.insert((joint, target)) {
                    self.notes
                        .push(format!("{label}: a second {target:?} channel for node {node}; the first one was kept"));
                    continue;
                }
                if let Some(c) = self.channel(ai, ci, &ch, joint, target, &label)? {
                    channels.push(c);
                }
            }
            clips.push(RigClip { name, channels });
        }
        Ok(clips)
    }

    fn channel(
        &mut self,
        ai: usize,
        ci: usize,
        ch: &gltf::animation::Channel<'_>,
        joint: usize,
        target: ChannelTarget,
        label: &str,
    ) -> Result<Option<RigChannel>, GltfError> {
        let sampler = ch.sampler();
        let interpolation = match sampler.interpolation() {
            gltf::animation::Interpolation::Step => Interpolation::Step,
            gltf::animation::Interpolation::Linear => Interpolation::Linear,
            gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
        };
        let reader = ch.reader(self.data());
        let input = sampler.input();
        let count = self.check_accessor(&input, &format!("{label} key times"), SCALAR_F32)?;
        if count == 0 {
            self.notes.push(format!("{label}: no keys; skipped"));
            return Ok(None);
        }
        let times = self.collect(reader.read_inputs(), input.index(), count)?;
        for (k, &t) in times.iter().enumerate() {
            if !t.is_finite() {
                return Err(GltfError::NonFinite { what: format!("animation {ai} channel {ci} key time {k}") });
            }
        }
        if let Some(k) = times.windows(2).position(|w| w[1] <= w[0]) {
            return Err(GltfError::UnsortedKeyTimes { animation: ai, channel: ci, key: k + 1 });
        }

        let output = sampler.output();
        let per_key = if interpolation == Interpolation::CubicSpline { 3 } else { 1 };
        let expected = count * per_key;
        let what = format!("{label} key values");
        let allowed = if target == ChannelTarget::Rotation { ROTATIONS } else { VEC3_F32 };
        let out_count = self.check_accessor(&output, &what, allowed)?;
        if out_count != expected {
            return Err(GltfError::CountMismatch { what, expected, actual: out_count });
        }
        let mut values = Vec::with_capacity(expected * target.components());
        match reader.read_outputs() {
            Some(ReadOutputs::Translations(it)) | Some(ReadOutputs::Scales(it)) => {
                values.extend(self.collect(Some(it), output.index(), expected)?.iter().flatten());
            }
            Some(ReadOutputs::Rotations(r)) => {
                values.extend(self.collect(Some(r.into_f32()), output.index(), expected)?.iter().flatten());
            }
            _ => {
                return Err(GltfError::AccessorOutOfBounds {
                    accessor: output.index(),
                    detail: "its data could not be read".into(),
                })
            }
        }
        if values.len() != expected * target.components() {
            return Err(GltfError::CountMismatch {
                what,
                expected: expected * target.components(),
                actual: values.len(),
            });
        }
        check_finite(values.iter(), || format!("animation {ai} channel {ci} key values"))?;
        if target == ChannelTarget::Rotation {
            // Keys are rotations: normalize them (files carry |q| off by 1e-4 and more), so
            // linear interpolation and the keys themselves stay rotations. Cubic tangents are
            // left alone; only the key values (the middle of each triple) are normalized.
            let (stride, at) = if interpolation == Interpolation::CubicSpline { (12, 4) } else { (4, 0) };
            for key in values.chunks_exact_mut(stride) {
                let q = &mut key[at..at + 4];
                let l = q.iter().map(|v| (*v as f64) * (*v as f64)).sum::<f64>().sqrt();
                if l > 0.0 {
                    q.iter_mut().for_each(|v| *v = (*v as f64 / l) as f32);
                }
            }
        }
        Ok(Some(RigChannel { joint, target, interpolation, times, values }))
    }

    // ---- accessor checks ----------------------------------------------------------------

    /// Collects exactly `count` items from a reader iterator, within the decoding budget.
    fn collect<T>(
        &mut self,
        it: Option<impl Iterator<Item = T>>,
        accessor: usize,
        count: usize,
    ) -> Result<Vec<T>, GltfError> {
        let bytes = count.saturating_mul(std::mem::size_of::<T>());
        self.decoded = self.decoded.saturating_add(bytes);
        if self.decoded > self.budget {
            return Err(GltfError::TooLarge { accessor, limit: self.budget });
        }
        let it =
            it.ok_or_else(|| GltfError::AccessorOutOfBounds { accessor, detail: "its data could not be read".into() })?;
        let v: Vec<T> = it.take(count).collect();
        if v.len() != count {
            return Err(GltfError::CountMismatch {
                what: format!("accessor {accessor}"),
                expected: count,
                actual: v.len(),
            });
        }
        Ok(v)
    }

    fn check_count(&self, count: usize, expected: usize, what: &str) -> Result<(), GltfError> {
        if count == expected {
            Ok(())
        } else {
            Err(GltfError::CountMismatch { what: what.to_owned(), expected, actual: count })
        }
    }

    /// Checks that an accessor has an allowed element type and that every byte it (and its
    /// sparse storage) reads lies inside its buffer view and buffer. Returns its count.
    fn check_accessor(
        &self,
        acc: &gltf::Accessor<'_>,
        usage: &str,
        allowed: &[(DataType, Dimensions)],
    ) -> Result<usize, GltfError> {
        let (dt, dims) = (acc.data_type(), acc.dimensions());
        if !allowed.iter().any(|&(d, m)| d == dt && m == dims) {
            return Err(GltfError::AccessorType {
                accessor: acc.index(),
                usage: usage.to_owned(),
                found: format!("{dims:?} of {dt:?}"),
            });
        }
        let count = acc.count();
        if count == 0 {
            return Ok(0);
        }
        let elem = acc.size();
        match acc.view() {
            Some(view) => self.check_range(acc.index(), "", &view, acc.offset(), count, elem)?,
            None if acc.sparse().is_none() => {
                return Err(GltfError::AccessorOutOfBounds {
                    accessor: acc.index(),
                    detail: "has neither a buffer view nor sparse storage".into(),
                })
            }
            None => {}
        }
        if let Some(sparse) = acc.sparse() {
            let sc = sparse.count();
            if sc == 0 || sc > count {
                return Err(GltfError::AccessorOutOfBounds {
                    accessor: acc.index(),
                    detail: format!("sparse count {sc} is not in 1..={count}"),
                });
            }
            let indices = sparse.indices();
            let isize_ = indices.index_type().size();
            self.check_range(acc.index(), "sparse indices ", &indices.view(), indices.offset(), sc, isize_)?;
            let values = sparse.values();
            self.check_range(acc.index(), "sparse values ", &values.view(), values.offset(), sc, elem)?;
        }
        Ok(count)
    }

    /// Checks that `count` elements of `elem` bytes at `offset` with the view's stride fit the
    /// view, that the stride is at least an element, and that the view fits its buffer.
    fn check_range(
        &self,
        accessor: usize,
        part: &str,
        view: &gltf::buffer::View<'_>,
        offset: usize,
        count: usize,
        elem: usize,
    ) -> Result<(), GltfError> {
        let oob = |detail: String| GltfError::AccessorOutOfBounds { accessor, detail };
        let vi = view.index();
        let buffer = view.buffer().index();
        let buffer_len = self.buffers.get(buffer).map_or(0, Vec::len);
        let view_end = view.offset().checked_add(view.length());
        if view_end.is_none_or(|end| end > buffer_len) {
            return Err(oob(format!(
                "{part}buffer view {vi} (offset {}, length {}) exceeds buffer {buffer} ({buffer_len} bytes)",
                view.offset(),
                view.length()
            )));
        }
        let stride = view.stride().unwrap_or(elem);
        if stride < elem {
            return Err(oob(format!("{part}buffer view {vi} stride {stride} is smaller than the {elem}-byte element")));
        }
        let end = count
            .checked_sub(1)
            .and_then(|c| c.checked_mul(stride))
            .and_then(|b| b.checked_add(elem))
            .and_then(|b| b.checked_add(offset));
        if end.is_none_or(|end| end > view.length()) {
            return Err(oob(format!(
                "{part}{count} elements of {elem} bytes (stride {stride}) from offset {offset} exceed buffer view {vi} \
                 ({} bytes)",
                view.length()
            )));
        }
        Ok(())
    }
}

/// Fails with [`GltfError::NonFinite`] when a value is NaN or infinite.
fn check_finite<'v>(mut values: impl Iterator<Item = &'v f32>, what: impl FnOnce() -> String) -> Result<(), GltfError> {
    if values.all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(GltfError::NonFinite { what: what() })
    }
}

// ---------------------------------------------------------------------------------------------
// Matrix decomposition.

/// A node matrix split into TRS.
struct Decomposed {
    transform: Transform<f32>,
    /// Largest difference between the matrix and the TRS rebuilt from `transform`, relative to
    /// the matrix's largest element (at least 1).
    error: f64,
    /// The bottom row is not `0 0 0 1`.
    projective: bool,
}

type V3 = [f64; 3];

fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
fn scaled(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}
fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// Splits a column-major matrix into translation, rotation and scale. The rotation is the
/// orthogonal polar factor of the upper 3×3 block (its closest rotation), after moving a
/// reflection into the x scale; scales are the block's columns projected on the rotation's.
fn decompose(m: &[[f32; 4]; 4]) -> Decomposed {
    let col = |i: usize| -> V3 {
        let c = m.get(i).copied().unwrap_or([0.0; 4]);
        [f64::from(c[0]), f64::from(c[1]), f64::from(c[2])]
    };
    let c = [col(0), col(1), col(2)];
    let t = col(3);
    let det = dot(c[0], cross(c[1], c[2]));
    let max_len = c.iter().map(|v| dot(*v, *v).sqrt()).fold(0.0f64, f64::max);
    let r: [V3; 3] = if det.is_finite() && det.abs() > 1.0e-9 * max_len.powi(3) && max_len > 0.0 {
        // Polar decomposition by Newton iteration X <- (X + X^-T) / 2 on the block with a
        // positive determinant; the columns of X^-T are the cofactor columns over det.
        let mut x = if det < 0.0 { [scaled(c[0], -1.0), c[1], c[2]] } else { c };
        for _ in 0..64 {
            let d = dot(x[0], cross(x[1], x[2]));
            if d == 0.0 || !d.is_finite() {
                break;
            }
            let inv_t = [
                scaled(cross(x[1], x[2]), 1.0 / d),
                scaled(cross(x[2], x[0]), 1.0 / d),
                scaled(cross(x[0], x[1]), 1.0 / d),
            ];
            let next = [
                scaled([x[0][0] + inv_t[0][0], x[0][1] + inv_t[0][1], x[0][2] + inv_t[0][2]], 0.5),
                scaled([x[1][0] + inv_t[1][0], x[1][1] + inv_t[1][1], x[1][2] + inv_t[1][2]], 0.5),
                scaled([x[2][0] + inv_t[2][0], x[2][1] + inv_t[2][1], x[2][2] + inv_t[2][2]], 0.5),
            ];
            let change = (0..3).map(|k| dot(sub(next[k], x[k]), sub(next[k], x[k]))).fold(0.0f64, f64::max);
            x = next;
            if change < 1.0e-24 {
                break;
            }
        }
        x
    } else {
        degenerate_basis(c)
    };
    let s = [dot(r[0], c[0]), dot(r[1], c[1]), dot(r[2], c[2])];
    let as_vec = |v: V3| Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32);
    let rotation = Quat::from_mat3_cols([as_vec(r[0]), as_vec(r[1]), as_vec(r[2])]);
    let transform = Transform::new(as_vec(t), rotation, as_vec(s));

    let rebuilt = transform.to_mat4();
    let mut scale_ref = 1.0f64;
    let mut err = 0.0f64;
    for k in 0..3 {
        let (orig, new) = (m.get(k).copied().unwrap_or([0.0; 4]), rebuilt.cols.get(k).copied().unwrap_or([0.0; 4]));
        for row in 0..3 {
            scale_ref = scale_ref.max(f64::from(orig[row]).abs());
            err = err.max((f64::from(orig[row]) - f64::from(new[row])).abs());
        }
    }
    let projective = m.iter().take(3).any(|c| c[3] != 0.0) || m.get(3).is_some_and(|c| c[3] != 1.0);
    Decomposed { transform, error: err / scale_ref, projective }
}

/// A right-handed orthonormal basis close to the columns of a singular 3×3 block: Gram-Schmidt
/// on the columns that are not (nearly) zero, completed by cross products.
fn degenerate_basis(c: [V3; 3]) -> [V3; 3] {
    let max_len = c.iter().map(|v| dot(*v, *v).sqrt()).fold(0.0f64, f64::max);
    let eps = 1.0e-6 * max_len.max(f64::MIN_POSITIVE);
    let mut basis: [Option<V3>; 3] = [None; 3];
    for i in 0..3 {
        let mut v = c[i];
        for b in basis.iter().take(i).flatten() {
            v = sub(v, scaled(*b, dot(v, *b)));
        }
        let l = dot(v, v).sqrt();
        if l > eps {
            basis[i] = Some(scaled(v, 1.0 / l));
        }
    }
    let present: Vec<usize> = (0..3).filter(|&i| basis[i].is_some()).collect();
    let mut out = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    match present.as_slice() {
        [i] => {
            let a = basis[*i].unwrap_or(out[*i]);
            // A helper axis far from `a`.
            let k = (0..3).min_by(|&p, &q| a[p].abs().total_cmp(&a[q].abs())).unwrap_or(0);
            let mut h = [0.0; 3];
            h[k] = 1.0;
            let u = sub(h, scaled(a, dot(h, a)));
            let u = scaled(u, 1.0 / dot(u, u).sqrt());
            out[*i] = a;
            out[(*i + 1) % 3] = u;
            out[(*i + 2) % 3] = cross(a, u);
        }
        [_, _] | [_, _, _] => {
            for i in 0..3 {
                if let Some(b) = basis[i] {
                    out[i] = b;
                }
            }
            for i in 0..3 {
                if basis[i].is_none() {
                    out[i] = cross(out[(i + 1) % 3], out[(i + 2) % 3]);
                }
            }
            if dot(out[0], cross(out[1], out[2])) < 0.0 {
                // Put the reflection on the shortest column.
                let k = (0..3).min_by(|&p, &q| dot(c[p], c[p]).total_cmp(&dot(c[q], c[q]))).unwrap_or(0);
                out[k] = scaled(out[k], -1.0);
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::STANDARD;
    use std::collections::HashMap;
    use std::time::Instant;

    // ---- helpers ------------------------------------------------------------------------

    fn asset(rel: &str) -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets/")).join(rel)
    }

    fn sample(model: &str) -> PathBuf {
        let ext = if model == "SimpleSkin" { "gltf" } else { "glb" };
        asset(&format!("gltf/{model}/{model}.{ext}"))
    }

    fn load(model: &str) -> Rig {
        let rig = load_file(&sample(model)).unwrap_or_else(|e| panic!("{model}: {e}"));
        check_invariants(&rig);
        rig
    }

    const MODELS: [&str; 10] = [
        "RiggedSimple",
        "SimpleSkin",
        "RiggedFigure",
        "CesiumMan",
        "Fox",
        "BrainStem",
        "RecursiveSkeletons",
        "InterpolationTest",
        "BoxAnimated",
        "AnimatedMorphCube",
    ];

    /// Everything the importer promises about a rig, whatever the file was.
    fn check_invariants(rig: &Rig) {
        let nj = rig.joints.len();
        let mut names = HashSet::new();
        for (i, j) in rig.joints.iter().enumerate() {
            assert!(j.parent.is_none_or(|p| p < i), "joint {i} parent {:?} is not before it", j.parent);
            assert!(names.insert(j.name.clone()), "duplicate joint name {}", j.name);
            assert!(j.rest.is_finite());
            let q = j.rest.rotation;
            assert!((q.length_squared() - 1.0).abs() < 1.0e-4, "joint {i} rotation not unit");
        }
        for s in &rig.skins {
            assert_eq!(s.joints.len(), s.inverse_bind.len());
            assert!(s.joints.iter().all(|&j| j < nj));
            assert!(s.inverse_bind.iter().flatten().all(|v| v.is_finite()));
        }
        for m in &rig.meshes {
            match (m.skin, m.node) {
                (Some(s), None) => assert!(s < rig.skins.len()),
                (None, Some(n)) => assert!(n < nj),
                other => panic!("mesh {} has skin/node {other:?}", m.name),
            }
            let skin_joints = m.skin.and_then(|s| rig.skins.get(s)).map_or(0, |s| s.joints.len());
            for p in &m.primitives {
                let n = p.positions.len();
                assert!(n > 0);
                assert!(p.positions.iter().flatten().all(|v| v.is_finite()));
                assert!(p.normals.as_ref().is_none_or(|v| v.len() == n && v.iter().flatten().all(|x| x.is_finite())));
                assert!(p.tangents.as_ref().is_none_or(|v| v.len() == n && v.iter().flatten().all(|x| x.is_finite())));
                assert_eq!(p.joint_indices.len(), n * p.influences);
                assert_eq!(p.joint_weights.len(), n * p.influences);
                assert!(p.influences == 0 || m.skin.is_some());
                assert!(p.joint_indices.iter().all(|&j| usize::from(j) < skin_joints));
                assert!(p.joint_weights.iter().all(|&w| w.is_finite() && w >= 0.0));
                assert_eq!(p.indices.len() % 3, 0);
                assert!(p.indices.iter().all(|&i| (i as usize) < n));
                assert!(p.color.iter().all(|c| c.is_finite()));
            }
        }
        let mut clip_names = HashSet::new();
        for c in &rig.clips {
            assert!(clip_names.insert(c.name.clone()), "duplicate clip name {}", c.name);
            let mut seen = HashSet::new();
            for ch in &c.channels {
                assert!(ch.joint < nj);
                assert!(seen.insert((ch.joint, ch.target)), "two {:?} channels on joint {}", ch.target, ch.joint);
                assert!(!ch.times.is_empty());
                assert!(ch.times.iter().all(|t| t.is_finite()));
                assert!(ch.times.windows(2).all(|w| w[0] < w[1]));
                let per_key = if ch.interpolation == Interpolation::CubicSpline { 3 } else { 1 };
                assert_eq!(ch.values.len(), ch.times.len() * per_key * ch.target.components());
                assert!(ch.values.iter().all(|v| v.is_finite()));
            }
        }
    }

    fn world_matrices(rig: &Rig) -> Vec<Mat4<f32>> {
        let mut world: Vec<Mat4<f32>> = Vec::with_capacity(rig.joints.len());
        for j in &rig.joints {
            let local = j.rest.to_mat4();
            let w = match j.parent {
                Some(p) => world[p] * local,
                None => local,
            };
            world.push(w);
        }
        world
    }

    /// `world(joint) × inverse bind(joint)` for each joint of a skin, in the rest pose.
    fn rest_skin_matrices(rig: &Rig, skin: usize) -> Vec<Mat4<f32>> {
        let world = world_matrices(rig);
        let s = &rig.skins[skin];
        s.joints.iter().zip(&s.inverse_bind).map(|(&j, ibm)| world[j] * Mat4::from_cols_array(ibm)).collect()
    }

    fn max_diff(a: &Mat4<f32>, b: &Mat4<f32>) -> f32 {
        let mut err = 0.0f32;
        for c in 0..4 {
            for r in 0..4 {
                err = err.max((a.cols[c][r] - b.cols[c][r]).abs());
            }
        }
        err
    }

    /// Largest element of |world × inverse bind − identity| over a skin's joints in the rest
    /// pose: 0 when the inverse bind matrices invert the rest pose's world matrices.
    fn bind_error(rig: &Rig, skin: usize) -> f32 {
        rest_skin_matrices(rig, skin).iter().map(|m| max_diff(m, &Mat4::IDENTITY)).fold(0.0, f32::max)
    }

    /// Largest element of |world × inverse bind − the same for skin joint 0|: 0 when the rest
    /// pose moves the whole mesh rigidly (the bind pose is the rest pose up to a transform
    /// above the joints, such as an armature root's).
    fn bind_rigidity_error(rig: &Rig, skin: usize) -> f32 {
        let m = rest_skin_matrices(rig, skin);
        m.iter().map(|x| max_diff(x, &m[0])).fold(0.0, f32::max)
    }

    fn primitives(rig: &Rig) -> impl Iterator<Item = &RigPrimitive> {
        rig.meshes.iter().flat_map(|m| m.primitives.iter())
    }

    fn vertex_count(rig: &Rig) -> usize {
        primitives(rig).map(|p| p.positions.len()).sum()
    }

    /// Most influences with a non-zero weight on any vertex.
    fn max_used_influences(rig: &Rig) -> usize {
        primitives(rig)
            .filter(|p| p.influences > 0)
            .flat_map(|p| p.joint_weights.chunks(p.influences).map(|w| w.iter().filter(|&&x| x > 0.0).count()))
            .max()
            .unwrap_or(0)
    }

    /// Largest |sum of weights − 1| over skinned vertices.
    fn max_weight_sum_error(rig: &Rig) -> f32 {
        primitives(rig)
            .filter(|p| p.influences > 0)
            .flat_map(|p| p.joint_weights.chunks(p.influences).map(|w| (w.iter().sum::<f32>() - 1.0).abs()))
            .fold(0.0, f32::max)
    }

    fn channel_count(rig: &Rig) -> usize {
        rig.clips.iter().map(|c| c.channels.len()).sum()
    }

    fn close(a: f32, b: f32, eps: f32) -> bool {
        (a - b).abs() <= eps
    }

    fn has_note(rig: &Rig, needle: &str) -> bool {
        rig.notes.iter().any(|n| n.contains(needle))
    }

    // ---- the sample models --------------------------------------------------------------

    #[test]
    fn rigged_simple() {
        let rig = load("RiggedSimple");
        assert_eq!(rig.name, "RiggedSimple");
        assert_eq!(rig.skins.len(), 1);
        assert_eq!(rig.skins[0].joints.len(), 2);
        assert_eq!(vertex_count(&rig), 160);
        assert_eq!(max_used_influences(&rig), 2);
        assert!(primitives(&rig).all(|p| p.influences == 4));
        assert_eq!(rig.clips.len(), 1);
        assert_eq!(rig.clips[0].name, "clip0");
        let ch = &rig.clips[0].channels;
        assert_eq!(ch.len(), 3);
        assert!(ch.iter().all(|c| c.joint == ch[0].joint && c.interpolation == Interpolation::Linear));
        let targets: HashSet<ChannelTarget> = ch.iter().map(|c| c.target).collect();
        assert_eq!(targets.len(), 3);
        assert!(close(rig.clips[0].time_range().0, 0.0417, 1.0e-3));
        assert!(max_weight_sum_error(&rig) < 2.0e-3);
        assert!(rig.notes.is_empty(), "{:?}", rig.notes);
    }

    #[test]
    fn simple_skin_with_data_uris() {
        let rig = load("SimpleSkin");
        assert_eq!(rig.skins.len(), 1);
        assert_eq!(rig.skins[0].joints.len(), 2);
        assert_eq!(vertex_count(&rig), 10);
        assert_eq!(max_used_influences(&rig), 2);
        assert!(primitives(&rig).all(|p| p.color == DEFAULT_COLOR), "no materials: default color");
        assert_eq!(rig.clips.len(), 1);
        let ch = &rig.clips[0].channels;
        assert_eq!(ch.len(), 1);
        assert_eq!(ch[0].target, ChannelTarget::Rotation);
        assert_eq!(ch[0].interpolation, Interpolation::Linear);
        assert_eq!(ch[0].times.len(), 12);
        let (lo, hi) = rig.clips[0].time_range();
        assert!(close(lo, 0.0, 1.0e-6) && close(hi, 5.5, 1.0e-5), "{lo} {hi}");
        // Same result from the bytes without a base directory: nothing external is needed.
        let bytes = std::fs::read(sample("SimpleSkin")).unwrap();
        let again = load_bytes(&bytes, None, "s").unwrap();
        assert_eq!(again.clips[0].channels[0].values, ch[0].values);
    }

    #[test]
    fn rigged_figure() {
        let rig = load("RiggedFigure");
        assert_eq!(rig.skins.len(), 1);
        assert_eq!(rig.skins[0].joints.len(), 19);
        assert_eq!(vertex_count(&rig), 370);
        assert_eq!(max_used_influences(&rig), 4);
        assert_eq!(rig.clips.len(), 1);
        assert_eq!(rig.clips[0].channels.len(), 57);
        assert!(rig.clips[0].channels.iter().all(|c| c.times.len() == 2));
        let (lo, hi) = rig.clips[0].time_range();
        assert!(close(lo, 0.0, 1.0e-6) && close(hi, 1.25, 1.0e-4), "{lo} {hi}");
        assert!(max_weight_sum_error(&rig) < 2.0e-3);
    }

    #[test]
    fn cesium_man() {
        let rig = load("CesiumMan");
        assert_eq!(rig.skins.len(), 1);
        assert_eq!(rig.skins[0].joints.len(), 19);
        assert_eq!(vertex_count(&rig), 3273);
        assert_eq!(max_used_influences(&rig), 4);
        let clip = &rig.clips[0];
        assert_eq!(clip.channels.len(), 57);
        assert!(clip.channels.iter().all(|c| c.times.len() == 48 && c.interpolation == Interpolation::Linear));
        let (lo, hi) = clip.time_range();
        assert!(close(lo, 0.0417, 1.0e-3) && close(hi, 2.0, 1.0e-4), "{lo} {hi}");
        assert!(max_weight_sum_error(&rig) < 2.0e-3);
    }

    #[test]
    fn fox_has_three_clips() {
        let rig = load("Fox");
        assert_eq!(rig.skins.len(), 1);
        assert_eq!(rig.skins[0].joints.len(), 24);
        assert_eq!(vertex_count(&rig), 1728);
        assert_eq!(max_used_influences(&rig), 4);
        let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Survey", "Walk", "Run"]);
        let mut animated = HashSet::new();
        for (clip, (keys, length)) in rig.clips.iter().zip([(83, 3.417), (18, 0.708), (25, 1.158)]) {
            assert_eq!(clip.channels.len(), 21);
            let rot = clip.channels.iter().filter(|c| c.target == ChannelTarget::Rotation).count();
            let tr = clip.channels.iter().filter(|c| c.target == ChannelTarget::Translation).count();
            assert_eq!((rot, tr), (20, 1), "{}", clip.name);
            assert!(clip.channels.iter().all(|c| c.times.len() == keys), "{}", clip.name);
            let (lo, hi) = clip.time_range();
            assert!(close(hi - lo, length, 1.0e-3), "{}: {lo}..{hi}", clip.name);
            animated.extend(clip.channels.iter().map(|c| c.joint));
        }
        let never = rig.skins[0].joints.iter().filter(|j| !animated.contains(j)).count();
        assert_eq!(never, 4, "joints never animated");
    }

    #[test]
    fn brain_stem() {
        let rig = load("BrainStem");
        assert_eq!(rig.skins.len(), 1);
        assert_eq!(rig.skins[0].joints.len(), 18);
        assert_eq!(primitives(&rig).count(), 59);
        assert_eq!(vertex_count(&rig), 34_159);
        assert_eq!(max_used_influences(&rig), 1);
        let clip = &rig.clips[0];
        assert_eq!(clip.channels.len(), 57);
        assert!(clip.channels.iter().all(|c| c.interpolation == Interpolation::Linear));
        assert_eq!(clip.channels.iter().map(|c| c.times.len()).max(), Some(1309));
        let (lo, hi) = clip.time_range();
        assert!(close(lo, 0.0, 1.0e-6) && close(hi, 34.88, 1.0e-2), "{lo} {hi}");
        // An animated node that is not a joint of the skin.
        let skin: HashSet<usize> = rig.skins[0].joints.iter().copied().collect();
        assert!(clip.channels.iter().any(|c| !skin.contains(&c.joint)));
        assert!(max_weight_sum_error(&rig) < 2.0e-3);
    }

    #[test]
    fn recursive_skeletons() {
        let rig = load("RecursiveSkeletons");
        assert_eq!(rig.joints.len(), 924);
        assert_eq!(rig.skins.len(), 84);
        assert!(rig.skins.iter().all(|s| s.joints.len() == 10));
        // One mesh, used by 84 skinned nodes: one RigMesh per instance.
        assert_eq!(rig.meshes.len(), 84);
        assert!(rig.meshes.iter().all(|m| m.skin.is_some() && vertex_count_of(m) == 40));
        let skins_used: HashSet<usize> = rig.meshes.iter().filter_map(|m| m.skin).collect();
        assert_eq!(skins_used.len(), 84);
        assert_eq!(max_used_influences(&rig), 1);
        assert_eq!(rig.clips.len(), 1);
        assert_eq!(rig.clips[0].name, "Track0");
        assert_eq!(rig.clips[0].channels.len(), 840);
        assert!(rig.clips[0].channels.iter().all(|c| c.target == ChannelTarget::Rotation && c.times.len() == 3));
        let (lo, hi) = rig.clips[0].time_range();
        assert!(close(lo, 0.0, 1.0e-6) && close(hi, 2.0, 1.0e-5));
        // Depth of the hierarchy (edges from a root).
        let mut depth = vec![0usize; rig.joints.len()];
        for (i, j) in rig.joints.iter().enumerate() {
            depth[i] = j.parent.map_or(0, |p| depth[p] + 1);
        }
        assert_eq!(depth.iter().max(), Some(&29));
        // Skeleton roots (skin joint 0) that hang under another skin's joints.
        let owner: HashMap<usize, usize> =
            rig.skins.iter().enumerate().flat_map(|(s, sk)| sk.joints.iter().map(move |&j| (j, s))).collect();
        let nested = rig
            .skins
            .iter()
            .enumerate()
            .filter(|(s, sk)| {
                let mut p = rig.joints[sk.joints[0]].parent;
                while let Some(q) = p {
                    if owner.get(&q).is_some_and(|o| o != s) {
                        return true;
                    }
                    p = rig.joints[q].parent;
                }
                false
            })
            .count();
        assert_eq!(nested, 80);
        assert!(rig.joints.iter().enumerate().all(|(i, j)| j.name.starts_with("node") && i < 924));
    }

    fn vertex_count_of(m: &RigMesh) -> usize {
        m.primitives.iter().map(|p| p.positions.len()).sum()
    }

    #[test]
    fn interpolation_test() {
        let rig = load("InterpolationTest");
        assert!(rig.skins.is_empty());
        assert_eq!(vertex_count(&rig), 220);
        assert!(rig.meshes.iter().all(|m| m.skin.is_none() && m.node.is_some()));
        assert_eq!(rig.clips.len(), 9);
        let mut kinds = HashMap::new();
        for clip in &rig.clips {
            assert_eq!(clip.channels.len(), 1, "{}", clip.name);
            let ch = &clip.channels[0];
            assert_eq!(ch.times.len(), 5, "{}", clip.name);
            let (kind, target) = clip.name.split_once(' ').unwrap();
            let want = match kind {
                "Step" => Interpolation::Step,
                "Linear" => Interpolation::Linear,
                "CubicSpline" => Interpolation::CubicSpline,
                other => panic!("unexpected clip {other}"),
            };
            assert_eq!(ch.interpolation, want, "{}", clip.name);
            let want_target = match target {
                "Translation" => ChannelTarget::Translation,
                "Rotation" => ChannelTarget::Rotation,
                "Scale" => ChannelTarget::Scale,
                other => panic!("unexpected clip {other}"),
            };
            assert_eq!(ch.target, want_target);
            *kinds.entry(ch.interpolation).or_insert(0) += 1;
        }
        assert_eq!(kinds.len(), 3);
        assert!(kinds.values().all(|&k| k == 3));
        assert!(rig.clips.iter().any(|c| close(c.time_range().0, 0.0417, 1.0e-3)));
    }

    #[test]
    fn box_animated() {
        let rig = load("BoxAnimated");
        assert!(rig.skins.is_empty());
        assert_eq!(vertex_count(&rig), 320);
        let clip = &rig.clips[0];
        assert_eq!(clip.channels.len(), 2);
        let mut lens: Vec<usize> = clip.channels.iter().map(|c| c.times.len()).collect();
        lens.sort_unstable();
        assert_eq!(lens, [2, 4]);
        let (lo, hi) = clip.time_range();
        assert!(close(hi - lo, 3.708, 1.0e-3), "{lo} {hi}");
    }

    #[test]
    fn animated_morph_cube_skips_weights() {
        let rig = load("AnimatedMorphCube");
        assert_eq!(vertex_count(&rig), 24);
        assert_eq!(rig.clips.len(), 1);
        assert_eq!(rig.clips[0].name, "Square");
        assert!(rig.clips[0].channels.is_empty());
        assert!(has_note(&rig, "morph-target weights channel"), "{:?}", rig.notes);
        assert!(has_note(&rig, "morph targets ignored"), "{:?}", rig.notes);
    }

    #[test]
    fn pab_crossarms() {
        let rig = load_file(&asset("ozz/pab_crossarms.glb")).unwrap();
        check_invariants(&rig);
        assert_eq!(rig.joints.len(), 68);
        assert_eq!(rig.joints[0].name, "Hips");
        assert_eq!(rig.skins.len(), 1);
        assert_eq!(rig.skins[0].joints.len(), 67);
        assert_eq!(vertex_count(&rig), 3934);
        assert_eq!(primitives(&rig).map(|p| p.indices.len() / 3).sum::<usize>(), 6670);
        assert!(primitives(&rig).all(|p| p.influences == 4 && p.normals.is_some() && p.tangents.is_some()));
        assert!(max_weight_sum_error(&rig) < 1.0e-6);
        let clip = &rig.clips[0];
        assert_eq!(clip.name, "crossarms");
        assert_eq!(clip.channels.len(), 201);
        assert!(clip.channels.iter().all(|c| c.times.len() == 259 && c.interpolation == Interpolation::Linear));
        let (lo, hi) = clip.time_range();
        assert!(close(lo, 0.0, 1.0e-6) && close(hi, 8.6, 1.0e-5));
        // The mesh's bind pose is not the skeleton's rest pose.
        assert!(bind_error(&rig, 0) > 0.1, "{}", bind_error(&rig, 0));
        assert!(rig.notes.is_empty(), "{:?}", rig.notes);
    }

    #[test]
    fn bind_pose_is_rest_pose() {
        // Inverse bind matrices that exactly invert the rest pose's world matrices.
        for model in ["SimpleSkin", "Fox"] {
            let e = bind_error(&load(model), 0);
            assert!(e < 1.0e-4, "{model}: {e}");
        }
        // The rest pose moves the bind-pose mesh rigidly (by the transform of nodes above the
        // skeleton, e.g. a Z-up armature root or a skeleton placed away from the origin): no
        // deformation at rest.
        for model in
            ["RiggedSimple", "SimpleSkin", "RiggedFigure", "CesiumMan", "Fox", "BrainStem", "RecursiveSkeletons"]
        {
            let rig = load(model);
            for s in 0..rig.skins.len() {
                let e = bind_rigidity_error(&rig, s);
                assert!(e < 1.0e-4, "{model} skin {s}: {e}");
            }
        }
        // pab_crossarms: the mesh was bound in another pose than the skeleton's rest pose.
        let rig = load_file(&asset("ozz/pab_crossarms.glb")).unwrap();
        assert!(bind_rigidity_error(&rig, 0) > 0.1, "{}", bind_rigidity_error(&rig, 0));
    }

    #[test]
    fn every_model_is_parents_first_and_consistent() {
        for model in MODELS {
            let rig = load(model);
            // Parents first, and the order is depth-first: a joint's subtree is contiguous.
            let n = rig.joints.len();
            let mut end = vec![0usize; n];
            for i in (0..n).rev() {
                end[i] = end[i].max(i + 1);
                if let Some(p) = rig.joints[i].parent {
                    end[p] = end[p].max(end[i]);
                }
            }
            for (i, j) in rig.joints.iter().enumerate() {
                if let Some(p) = j.parent {
                    assert!(p < i && i < end[p], "{model}: joint {i} outside its parent's subtree");
                }
            }
        }
    }

    #[test]
    fn print_model_figures() {
        // `cargo test -p sinew-frontend gltf::tests::print_model_figures -- --nocapture`
        let mut paths: Vec<(String, PathBuf)> = MODELS.iter().map(|m| (m.to_string(), sample(m))).collect();
        paths.push(("pab_crossarms".into(), asset("ozz/pab_crossarms.glb")));
        for (name, path) in paths {
            let rig = load_file(&path).unwrap();
            let skins: Vec<usize> = rig.skins.iter().map(|s| s.joints.len()).collect();
            let bind: Vec<String> = (0..rig.skins.len().min(2))
                .map(|s| format!("{:.1e}/{:.1e}", bind_error(&rig, s), bind_rigidity_error(&rig, s)))
                .collect();
            let keys: usize = rig.clips.iter().flat_map(|c| c.channels.iter().map(|ch| ch.times.len())).sum();
            println!(
                "{name}: joints {} skins {} (joints {:?}) meshes {} primitives {} vertices {} max-influences {} \
                 clips {} channels {} keys {} bind-error {:?} notes {}",
                rig.joints.len(),
                rig.skins.len(),
                &skins[..skins.len().min(3)],
                rig.meshes.len(),
                primitives(&rig).count(),
                vertex_count(&rig),
                max_used_influences(&rig),
                rig.clips.len(),
                channel_count(&rig),
                keys,
                bind,
                rig.notes.len()
            );
            for n in &rig.notes {
                println!("    note: {n}");
            }
        }
    }

    #[test]
    fn brain_stem_import_time() {
        let bytes = std::fs::read(sample("BrainStem")).unwrap();
        let start = Instant::now();
        let rig = load_bytes(&bytes, None, "BrainStem").unwrap();
        let elapsed = start.elapsed();
        println!("BrainStem ({} bytes) imported in {:.1} ms", bytes.len(), elapsed.as_secs_f64() * 1.0e3);
        assert_eq!(vertex_count(&rig), 34_159);
        // Generous bound so unoptimized builds pass; the release figure is in the report.
        assert!(elapsed.as_secs_f64() < 5.0);
    }

    // ---- a tiny synthetic skinned model -------------------------------------------------

    /// A 3-node, 2-joint skinned triangle with one rotation channel, built in memory.
    #[derive(Clone)]
    struct Tiny {
        positions: Vec<[f32; 3]>,
        joints: Vec<[u8; 4]>,
        weights: Vec<[f32; 4]>,
        indices: Vec<u16>,
        times: Vec<f32>,
        values: Vec<[f32; 4]>,
        interpolation: &'static str,
        nodes: String,
        scenes: String,
        position_offset: usize,
        /// Store JOINTS_0 as u16, WEIGHTS_0 as normalized u8 and rotations as normalized i16.
        integers: bool,
        extra_channels: String,
    }

    impl Tiny {
        fn new() -> Self {
            Tiny {
                positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
                joints: vec![[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]],
                weights: vec![[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]],
                indices: vec![0, 1, 2],
                times: vec![0.0, 0.5, 1.0],
                values: vec![
                    [0.0, 0.0, 0.0, 1.0],
                    [0.0, 0.0, 0.38268343, 0.9238795],
                    [0.0, 0.0, 0.70710677, 0.70710677],
                ],
                interpolation: "LINEAR",
                nodes: r#"[{"name":"root","translation":[0,1,0],"children":[1]},
                           {"name":"bone","translation":[0,1,0]},
                           {"name":"skinned","mesh":0,"skin":0}]"#
                    .into(),
                scenes: r#"[{"nodes":[0,2]}]"#.into(),
                position_offset: 0,
                integers: false,
                extra_channels: String::new(),
            }
        }

        /// The binary buffer and its views (offset, length), 4-byte aligned.
        fn bin(&self) -> (Vec<u8>, Vec<(usize, usize)>) {
            let mut bin = Vec::new();
            let mut views = Vec::new();
            let mut push = |bytes: Vec<u8>| {
                while bin.len() % 4 != 0 {
                    bin.push(0);
                }
                views.push((bin.len(), bytes.len()));
                bin.extend(bytes);
            };
            let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
            let mut pos = vec![0u8; self.position_offset];
            pos.extend(f(&self.positions.concat()));
            push(pos);
            if self.integers {
                push(self.joints.concat().iter().flat_map(|&j| u16::from(j).to_le_bytes()).collect());
                push(self.weights.concat().iter().map(|&w| (w * 255.0).round() as u8).collect());
            } else {
                push(self.joints.concat());
                push(f(&self.weights.concat()));
            }
            push(self.indices.iter().flat_map(|i| i.to_le_bytes()).collect());
            let ibm = [
                Mat4::from_translation(Vec3::new(0.0f32, -1.0, 0.0)).to_cols_array(),
                Mat4::from_translation(Vec3::new(0.0f32, -2.0, 0.0)).to_cols_array(),
            ];
            push(f(&ibm.concat()));
            push(f(&self.times));
            if self.integers {
                let norm = |v: f32| ((v * 32767.0).round() as i16).to_le_bytes();
                push(self.values.concat().iter().flat_map(|&v| norm(v)).collect());
            } else {
                push(f(&self.values.concat()));
            }
            (bin, views)
        }

        fn json(&self, buffer: &str, views: &[(usize, usize)]) -> String {
            let views: Vec<String> =
                views.iter().map(|(o, l)| format!(r#"{{"buffer":0,"byteOffset":{o},"byteLength":{l}}}"#)).collect();
            format!(
                r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":{scenes},"nodes":{nodes},
"skins":[{{"joints":[0,1],"inverseBindMatrices":4}}],
"meshes":[{{"name":"tri","primitives":[{{"attributes":{{"POSITION":0,"JOINTS_0":1,"WEIGHTS_0":2}},"indices":3}}]}}],
"animations":[{{"name":"spin","channels":[{{"sampler":0,"target":{{"node":1,"path":"rotation"}}}}{extra}],
 "samplers":[{{"input":5,"output":6,"interpolation":"{interp}"}}]}}],
"accessors":[
 {{"bufferView":0,"byteOffset":{po},"componentType":5126,"count":{nv},"type":"VEC3","min":[0,0,0],"max":[1,1,0]}},
 {{"bufferView":1,"componentType":{jt},"count":{nj},"type":"VEC4"}},
 {{"bufferView":2,"componentType":{wt},"count":{nw},"type":"VEC4"{wn}}},
 {{"bufferView":3,"componentType":5123,"count":{ni},"type":"SCALAR"}},
 {{"bufferView":4,"componentType":5126,"count":2,"type":"MAT4"}},
 {{"bufferView":5,"componentType":5126,"count":{nt},"type":"SCALAR"}},
 {{"bufferView":6,"componentType":{rt},"count":{nr},"type":"VEC4"{wn}}}],
"bufferViews":[{views}],
"buffers":[{buffer}]}}"#,
                scenes = self.scenes,
                nodes = self.nodes,
                extra = self.extra_channels,
                interp = self.interpolation,
                po = self.position_offset,
                nv = self.positions.len(),
                nj = self.joints.len(),
                nw = self.weights.len(),
                ni = self.indices.len(),
                nt = self.times.len(),
                nr = self.values.len(),
                jt = if self.integers { 5123 } else { 5121 },
                wt = if self.integers { 5121 } else { 5126 },
                rt = if self.integers { 5122 } else { 5126 },
                wn = if self.integers { r#","normalized":true"# } else { "" },
                views = views.join(","),
            )
        }

        /// As `.gltf` text with the buffer in a base64 data: URI.
        fn gltf(&self) -> String {
            let (bin, views) = self.bin();
            let buffer = format!(
                r#"{{"byteLength":{},"uri":"data:application/octet-stream;base64,{}"}}"#,
                bin.len(),
                STANDARD.encode(&bin)
            );
            self.json(&buffer, &views)
        }

        /// As a GLB container.
        fn glb(&self) -> Vec<u8> {
            let (mut bin, views) = self.bin();
            let mut json = self.json(&format!(r#"{{"byteLength":{}}}"#, bin.len()), &views).into_bytes();
            while json.len() % 4 != 0 {
                json.push(b' ');
            }
            while bin.len() % 4 != 0 {
                bin.push(0);
            }
            glb_from_chunks(&json, Some(&bin))
        }

        fn load(&self) -> Result<Rig, GltfError> {
            let r = load_bytes(self.gltf().as_bytes(), None, "tiny");
            if let Ok(rig) = &r {
                check_invariants(rig);
            }
            r
        }
    }

    fn glb_from_chunks(json: &[u8], bin: Option<&[u8]>) -> Vec<u8> {
        let total = 12 + 8 + json.len() + bin.map_or(0, |b| 8 + b.len());
        let mut out = Vec::with_capacity(total);
        out.extend(b"glTF");
        out.extend(2u32.to_le_bytes());
        out.extend((total as u32).to_le_bytes());
        out.extend((json.len() as u32).to_le_bytes());
        out.extend(b"JSON");
        out.extend(json);
        if let Some(b) = bin {
            out.extend((b.len() as u32).to_le_bytes());
            out.extend(b"BIN\0");
            out.extend(b);
        }
        out
    }

    #[test]
    fn tiny_model_imports() {
        let tiny = Tiny::new();
        for rig in [tiny.load().unwrap(), load_bytes(&tiny.glb(), None, "tiny").unwrap()] {
            check_invariants(&rig);
            let names: Vec<&str> = rig.joints.iter().map(|j| j.name.as_str()).collect();
            assert_eq!(names, ["root", "bone", "skinned"]);
            assert_eq!(rig.joints[1].parent, Some(0));
            assert_eq!(rig.joints[2].parent, None);
            assert_eq!(rig.skins[0].joints, [0, 1]);
            assert!(bind_error(&rig, 0) < 1.0e-6);
            let m = &rig.meshes[0];
            assert_eq!((m.name.as_str(), m.skin, m.node), ("tri", Some(0), None));
            let p = &m.primitives[0];
            assert_eq!(p.influences, 4);
            assert_eq!(&p.joint_indices[8..10], &[0, 1]);
            assert_eq!(&p.joint_weights[8..10], &[0.5, 0.5]);
            assert_eq!(p.indices, [0, 1, 2]);
            assert_eq!(p.color, DEFAULT_COLOR);
            let ch = &rig.clips[0].channels[0];
            assert_eq!((rig.clips[0].name.as_str(), ch.joint, ch.target), ("spin", 1, ChannelTarget::Rotation));
            assert_eq!(ch.times, [0.0, 0.5, 1.0]);
            assert_eq!(ch.values.len(), 12);
            assert!(rig.notes.is_empty(), "{:?}", rig.notes);
        }
    }

    #[test]
    fn cubic_spline_keeps_tangents() {
        let mut tiny = Tiny::new();
        tiny.interpolation = "CUBICSPLINE";
        let k = tiny.values.clone();
        tiny.values = k.iter().flat_map(|v| [[0.0, 0.0, 0.1, 0.0], *v, [0.0, 0.0, -0.1, 0.0]]).collect();
        let rig = tiny.load().unwrap();
        let ch = &rig.clips[0].channels[0];
        assert_eq!(ch.interpolation, Interpolation::CubicSpline);
        assert_eq!(ch.values.len(), 3 * 3 * 4);
        assert_eq!(&ch.values[4..8], &k[0]);
        assert_eq!(&ch.values[8..12], &[0.0, 0.0, -0.1, 0.0]);
        // Without tangents the value count is wrong for CUBICSPLINE.
        let mut bad = Tiny::new();
        bad.interpolation = "CUBICSPLINE";
        assert!(matches!(bad.load(), Err(GltfError::CountMismatch { expected: 9, actual: 3, .. })));
    }

    #[test]
    fn normalized_integer_data() {
        let mut tiny = Tiny::new();
        tiny.integers = true;
        let rig = tiny.load().unwrap();
        let p = &rig.meshes[0].primitives[0];
        assert_eq!(&p.joint_indices[8..10], &[0, 1]);
        // u8 weights: 128/255 each, renormalized to 0.5 (their sum 256/255 is off by 4e-3).
        assert!(close(p.joint_weights[8], 0.5, 1.0e-6) && close(p.joint_weights[0], 1.0, 1.0e-6));
        let ch = &rig.clips[0].channels[0];
        let want = Tiny::new().values.concat();
        assert_eq!(ch.values.len(), want.len());
        for (a, b) in ch.values.iter().zip(&want) {
            assert!(close(*a, *b, 1.0 / 32767.0), "{a} {b}");
        }
    }

    #[test]
    fn step_interpolation_and_counts() {
        let mut tiny = Tiny::new();
        tiny.interpolation = "STEP";
        assert_eq!(tiny.load().unwrap().clips[0].channels[0].interpolation, Interpolation::Step);
        tiny.values.pop();
        assert!(matches!(tiny.load(), Err(GltfError::CountMismatch { expected: 3, actual: 2, .. })));
    }

    #[test]
    fn bad_key_times() {
        let mut nan = Tiny::new();
        nan.times[1] = f32::NAN;
        assert!(matches!(nan.load(), Err(GltfError::NonFinite { .. })), "{:?}", nan.load());
        let mut inf = Tiny::new();
        inf.times[2] = f32::INFINITY;
        assert!(matches!(inf.load(), Err(GltfError::NonFinite { .. })));
        let mut equal = Tiny::new();
        equal.times = vec![0.0, 0.5, 0.5];
        assert!(matches!(equal.load(), Err(GltfError::UnsortedKeyTimes { animation: 0, channel: 0, key: 2 })));
        let mut backwards = Tiny::new();
        backwards.times = vec![0.0, 1.0, 0.5];
        assert!(matches!(backwards.load(), Err(GltfError::UnsortedKeyTimes { key: 2, .. })));
        let mut nan_value = Tiny::new();
        nan_value.values[2][0] = f32::NAN;
        assert!(matches!(nan_value.load(), Err(GltfError::NonFinite { .. })));
    }

    #[test]
    fn bad_vertex_data() {
        let mut nan = Tiny::new();
        nan.positions[1][2] = f32::NAN;
        assert!(matches!(nan.load(), Err(GltfError::NonFinite { .. })));
        let mut bad_joint = Tiny::new();
        bad_joint.joints[2] = [0, 2, 0, 0];
        assert!(
            matches!(bad_joint.load(), Err(GltfError::BadIndex { index: 2, limit: 2, .. })),
            "{:?}",
            bad_joint.load()
        );
        // An out-of-range joint with zero weight is harmless: it is set to 0 and noted.
        let mut zero_weight = Tiny::new();
        zero_weight.joints[0] = [0, 9, 0, 0];
        let rig = zero_weight.load().unwrap();
        assert_eq!(&rig.meshes[0].primitives[0].joint_indices[0..4], &[0, 0, 0, 0]);
        assert!(has_note(&rig, "out-of-range joint"));
        let mut negative = Tiny::new();
        negative.weights[0] = [1.5, -0.5, 0.0, 0.0];
        assert!(matches!(negative.load(), Err(GltfError::NegativeWeight { mesh: 0, primitive: 0, vertex: 0 })));
        let mut zero = Tiny::new();
        zero.weights[1] = [0.0; 4];
        assert!(matches!(zero.load(), Err(GltfError::ZeroWeights { mesh: 0, primitive: 0, vertex: 1 })));
        // A triangle that repeats a vertex is kept (the baker drops it).
        let mut degenerate = Tiny::new();
        degenerate.indices = vec![0, 1, 1];
        assert_eq!(degenerate.load().unwrap().meshes[0].primitives[0].indices, [0, 1, 1]);
        let mut unnormalized = Tiny::new();
        unnormalized.weights[2] = [1.0, 1.0, 0.0, 0.0];
        let rig = unnormalized.load().unwrap();
        assert_eq!(&rig.meshes[0].primitives[0].joint_weights[8..10], &[0.5, 0.5]);
        assert!(has_note(&rig, "renormalized"));
        let mut bad_index = Tiny::new();
        bad_index.indices = vec![0, 1, 3];
        assert!(matches!(bad_index.load(), Err(GltfError::BadIndex { index: 3, limit: 3, .. })));
    }

    #[test]
    fn accessor_past_its_buffer() {
        // POSITION starts 8 bytes into a 36-byte view: the last vertex ends past the view.
        let tiny = Tiny::new();
        let text = tiny.gltf().replacen(
            r#""byteOffset":0,"componentType":5126,"count":3"#,
            r#""byteOffset":8,"componentType":5126,"count":3"#,
            1,
        );
        let r = load_bytes(text.as_bytes(), None, "t");
        assert!(matches!(r, Err(GltfError::AccessorOutOfBounds { accessor: 0, .. })), "{r:?}");
        // A count that reaches past the view (a single bit flip: '3' -> '7').
        let text = tiny.gltf().replacen(
            r#""componentType":5126,"count":3,"type":"VEC3""#,
            r#""componentType":5126,"count":7,"type":"VEC3""#,
            1,
        );
        let r = load_bytes(text.as_bytes(), None, "t");
        assert!(matches!(r, Err(GltfError::AccessorOutOfBounds { accessor: 0, .. })), "{r:?}");
        // A view that reaches past its buffer.
        let (bin, mut views) = tiny.bin();
        views[6].1 += 4;
        let buffer = format!(
            r#"{{"byteLength":{},"uri":"data:application/gltf-buffer;base64,{}"}}"#,
            bin.len(),
            STANDARD.encode(&bin)
        );
        let r = load_bytes(tiny.json(&buffer, &views).as_bytes(), None, "t");
        assert!(matches!(r, Err(GltfError::AccessorOutOfBounds { accessor: 6, .. })), "{r:?}");
        // A buffer shorter than its byteLength.
        let (bin, views) = tiny.bin();
        let buffer = format!(r#"{{"byteLength":{},"uri":"data:;base64,{}"}}"#, bin.len() + 1, STANDARD.encode(&bin));
        let r = load_bytes(tiny.json(&buffer, &views).as_bytes(), None, "t");
        assert!(matches!(r, Err(GltfError::BufferTooShort { buffer: 0, .. })), "{r:?}");
        // A stride smaller than the element.
        let (bin, views) = tiny.bin();
        let buffer = format!(r#"{{"byteLength":{},"uri":"data:;base64,{}"}}"#, bin.len(), STANDARD.encode(&bin));
        let text = tiny.json(&buffer, &views).replacen(r#""byteLength":36}"#, r#""byteLength":36,"byteStride":8}"#, 1);
        let r = load_bytes(text.as_bytes(), None, "t");
        assert!(matches!(r, Err(GltfError::AccessorOutOfBounds { accessor: 0, .. })), "{r:?}");
        // A huge count does not overflow.
        let text =
            tiny.gltf().replacen(r#""count":3,"type":"VEC3""#, r#""count":18446744073709551615,"type":"VEC3""#, 1);
        let r = load_bytes(text.as_bytes(), None, "t");
        assert!(matches!(r, Err(GltfError::AccessorOutOfBounds { .. }) | Err(GltfError::Json(_))), "{r:?}");
    }

    #[test]
    fn wrong_accessor_types() {
        let tiny = Tiny::new();
        let text = tiny.gltf().replacen(r#""count":3,"type":"VEC3""#, r#""count":3,"type":"VEC2""#, 1);
        let r = load_bytes(text.as_bytes(), None, "t");
        // gltf-json rejects the VEC2 min/max of POSITION first, or the importer rejects the type.
        assert!(matches!(r, Err(GltfError::AccessorType { accessor: 0, .. }) | Err(GltfError::Schema(_))), "{r:?}");
        let text = tiny.gltf().replacen(
            r#""componentType":5123,"count":3,"type":"SCALAR""#,
            r#""componentType":5126,"count":3,"type":"SCALAR""#,
            1,
        );
        let r = load_bytes(text.as_bytes(), None, "t");
        assert!(matches!(r, Err(GltfError::AccessorType { accessor: 3, .. })), "{r:?}");
        let text = tiny.gltf().replacen(
            r#""componentType":5126,"count":2,"type":"MAT4""#,
            r#""componentType":5126,"count":2,"type":"MAT3""#,
            1,
        );
        let r = load_bytes(text.as_bytes(), None, "t");
        assert!(matches!(r, Err(GltfError::AccessorType { accessor: 4, .. })), "{r:?}");
        let text = tiny.gltf().replacen(
            r#""componentType":5121,"count":3,"type":"VEC4""#,
            r#""componentType":5125,"count":3,"type":"VEC4""#,
            1,
        );
        let r = load_bytes(text.as_bytes(), None, "t");
        assert!(matches!(r, Err(GltfError::AccessorType { accessor: 1, .. })), "{r:?}");
        // Too few inverse bind matrices.
        let text = tiny.gltf().replacen(r#""count":2,"type":"MAT4""#, r#""count":1,"type":"MAT4""#, 1);
        let r = load_bytes(text.as_bytes(), None, "t");
        assert!(matches!(r, Err(GltfError::CountMismatch { expected: 2, actual: 1, .. })), "{r:?}");
        // JOINTS_0 without WEIGHTS_0.
        let text = tiny.gltf().replacen(r#","WEIGHTS_0":2"#, "", 1);
        let r = load_bytes(text.as_bytes(), None, "t");
        assert!(matches!(r, Err(GltfError::MissingAttribute { .. })), "{r:?}");
    }

    #[test]
    fn hierarchy_errors() {
        let mut cycle = Tiny::new();
        cycle.nodes = r#"[{"children":[1]},{"children":[0]},{"mesh":0,"skin":0}]"#.into();
        cycle.scenes = r#"[{"nodes":[2]}]"#.into();
        assert!(matches!(cycle.load(), Err(GltfError::HierarchyCycle { .. })), "{:?}", cycle.load());
        let mut own = Tiny::new();
        own.nodes = r#"[{"children":[0]},{},{"mesh":0,"skin":0}]"#.into();
        assert!(matches!(own.load(), Err(GltfError::HierarchyCycle { node: 0 })));
        let mut two = Tiny::new();
        two.nodes = r#"[{"children":[1]},{},{"mesh":0,"skin":0,"children":[1]}]"#.into();
        assert!(matches!(two.load(), Err(GltfError::MultipleParents { node: 1 })));
        let mut twice = Tiny::new();
        twice.nodes = r#"[{"children":[1,1]},{},{"mesh":0,"skin":0}]"#.into();
        assert!(matches!(twice.load(), Err(GltfError::MultipleParents { node: 1 })));
        let mut not_root = Tiny::new();
        not_root.scenes = r#"[{"nodes":[0,1,2]}]"#.into();
        assert!(matches!(not_root.load(), Err(GltfError::NotARoot { scene: 0, node: 1 })));
        // A skinned mesh in the scene whose skin's joints are not.
        let mut outside = Tiny::new();
        outside.scenes = r#"[{"nodes":[2]}]"#.into();
        assert!(matches!(outside.load(), Err(GltfError::SkinJointNotInScene { skin: 0, node: 0 })));
        // Too many nodes.
        let mut many = Tiny::new();
        let mut nodes = String::from(r#"[{"name":"root","children":[1]},{},{"mesh":0,"skin":0}"#);
        nodes.push_str(&",{}".repeat(MAX_NODES));
        nodes.push(']');
        many.nodes = nodes;
        assert!(
            matches!(many.load(), Err(GltfError::TooManyNodes { count, limit: MAX_NODES }) if count == MAX_NODES + 3)
        );
    }

    #[test]
    fn names_scenes_and_channel_notes() {
        let mut tiny = Tiny::new();
        // Duplicate and missing names; an extra node outside the scene; a second rotation
        // channel for the same node; a channel on a node outside the scene.
        tiny.nodes = r#"[{"name":"a","children":[1]},{"name":"a"},{"mesh":0,"skin":0},{"name":"stray"}]"#.into();
        tiny.extra_channels = r#",{"sampler":0,"target":{"node":1,"path":"rotation"}},
            {"sampler":0,"target":{"node":3,"path":"rotation"}}"#
            .into();
        let rig = tiny.load().unwrap();
        let names: Vec<&str> = rig.joints.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["a", "a#1", "node2"]);
        assert_eq!(rig.clips[0].channels.len(), 1);
        assert!(has_note(&rig, "first one was kept"));
        assert!(has_note(&rig, "not in the scene"));
        assert!(has_note(&rig, "1 nodes are not in the imported scene"));
        // No default scene: all scenes are imported.
        let mut scenes = Tiny::new();
        scenes.scenes = r#"[{"nodes":[0]},{"nodes":[2]}]"#.into();
        let text = scenes.gltf().replacen(r#""scene":0,"#, "", 1);
        let rig = load_bytes(text.as_bytes(), None, "t").unwrap();
        assert_eq!(rig.joints.len(), 3);
        assert!(has_note(&rig, "all 2 scenes"));
    }

    #[test]
    fn strips_fans_and_lines() {
        let mut strip = Tiny::new();
        strip.positions.push([1.0, 1.0, 0.0]);
        strip.joints.push([0; 4]);
        strip.weights.push([1.0, 0.0, 0.0, 0.0]);
        strip.indices = vec![0, 1, 2, 3];
        let with_mode = |t: &Tiny, mode: u32| {
            let text = t.gltf().replacen(r#""indices":3}"#, &format!(r#""indices":3,"mode":{mode}}}"#), 1);
            let r = load_bytes(text.as_bytes(), None, "t").unwrap();
            check_invariants(&r);
            r
        };
        let rig = with_mode(&strip, 5);
        assert_eq!(rig.meshes[0].primitives[0].indices, [0, 1, 2, 1, 3, 2]);
        let rig = with_mode(&strip, 6);
        assert_eq!(rig.meshes[0].primitives[0].indices, [1, 2, 0, 2, 3, 0]);
        let rig = with_mode(&strip, 1);
        assert!(rig.meshes[0].primitives.is_empty());
        assert!(has_note(&rig, "Lines primitive skipped"));
    }

    #[test]
    fn matrix_nodes() {
        let q = Quat::from_axis_angle(Vec3::new(0.0f32, 0.6, 0.8), 0.7);
        let exact = Mat4::from_trs(Vec3::new(1.0, -2.0, 3.0), q, Vec3::new(2.0, 0.5, 1.5));
        let d = decompose(&exact.cols);
        assert!(d.error < 1.0e-6 && !d.projective);
        let back = d.transform.to_mat4();
        for c in 0..4 {
            for r in 0..4 {
                assert!(close(back.cols[c][r], exact.cols[c][r], 1.0e-5));
            }
        }
        // A mirror: the reflection goes into a negative scale and the matrix is reproduced.
        let mut mirror = exact;
        for r in 0..3 {
            mirror.cols[1][r] = -mirror.cols[1][r];
        }
        let d = decompose(&mirror.cols);
        assert!(d.error < 1.0e-6, "{}", d.error);
        assert!(d.transform.scale.x * d.transform.scale.y * d.transform.scale.z < 0.0);
        // A zero scale axis.
        let flat = Mat4::from_trs(Vec3::ZERO, q, Vec3::new(1.0, 0.0, 2.0));
        let d = decompose(&flat.cols);
        assert!(d.error < 1.0e-6, "{}", d.error);
        assert!(d.transform.rotation.is_normalized(1.0e-4));
        // Shear: kept as the closest TRS, with a note from the importer.
        let mut tiny = Tiny::new();
        tiny.nodes = r#"[{"name":"root","matrix":[1,0,0,0, 0.5,1,0,0, 0,0,1,0, 0,1,0,1],"children":[1]},
                        {"name":"bone","translation":[0,1,0]},{"mesh":0,"skin":0}]"#
            .into();
        let rig = tiny.load().unwrap();
        assert!(has_note(&rig, "shear"), "{:?}", rig.notes);
        let root = rig.joints[0].rest;
        assert_eq!(root.translation, Vec3::new(0.0, 1.0, 0.0));
        let d = decompose(&[[1.0, 0.0, 0.0, 0.0], [0.5, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]);
        assert!(d.error > 0.1 && d.error < 0.5, "{}", d.error);
    }

    #[test]
    fn external_buffers() {
        let tiny = Tiny::new();
        let (bin, views) = tiny.bin();
        let dir = std::env::temp_dir().join(format!("sinew-gltf-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/tiny data.bin"), &bin).unwrap();
        let with_uri = |uri: &str| tiny.json(&format!(r#"{{"byteLength":{},"uri":"{uri}"}}"#, bin.len()), &views);
        std::fs::write(dir.join("tiny.gltf"), with_uri("sub/tiny%20data.bin")).unwrap();
        let rig = load_file(&dir.join("tiny.gltf")).unwrap();
        check_invariants(&rig);
        assert_eq!(rig.name, "tiny");
        assert_eq!(rig.meshes[0].primitives[0].positions.len(), 3);
        // The same text without a base directory.
        let r = load_bytes(with_uri("sub/tiny%20data.bin").as_bytes(), None, "t");
        assert!(matches!(r, Err(GltfError::MissingBuffer { buffer: 0, .. })), "{r:?}");
        // Paths that leave the base directory or are not files.
        for uri in [
            "../tiny.bin",
            "sub/../../x.bin",
            "/etc/passwd",
            "http://example.com/a.bin",
            "file:///a.bin",
            "C:/a.bin",
            "%2e%2e/x.bin",
            "a.bin?x",
        ] {
            let r = load_bytes(with_uri(uri).as_bytes(), Some(&dir), "t");
            assert!(matches!(r, Err(GltfError::MissingBuffer { buffer: 0, .. })), "{uri}: {r:?}");
        }
        let r = load_bytes(with_uri("missing.bin").as_bytes(), Some(&dir), "t");
        assert!(matches!(r, Err(GltfError::Io { .. })), "{r:?}");
        // Unsupported data: URIs.
        for uri in [
            "data:text/plain;base64,AAAA",
            "data:application/octet-stream,AAAA",
            "data:application/octet-stream;base64,@@@@",
        ] {
            let r = load_bytes(with_uri(uri).as_bytes(), None, "t");
            assert!(matches!(r, Err(GltfError::MissingBuffer { .. })), "{uri}: {r:?}");
        }
        let r = load_file(&dir.join("nothing.glb"));
        assert!(matches!(r, Err(GltfError::Io { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn glb_container_errors() {
        let tiny = Tiny::new();
        let glb = tiny.glb();
        assert!(load_bytes(&glb, None, "t").is_ok());
        // No BIN chunk for a buffer without URI.
        let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
        let no_bin = glb_from_chunks(&glb[20..20 + json_len], None);
        assert!(matches!(load_bytes(&no_bin, None, "t"), Err(GltfError::MissingBuffer { buffer: 0, .. })));
        // Wrong version, tiny and lying lengths.
        let mut v1 = glb.clone();
        v1[4] = 1;
        assert!(matches!(load_bytes(&v1, None, "t"), Err(GltfError::Container(_))));
        for len in [0u32, 8, 12, 19] {
            let mut short = glb.clone();
            short[8..12].copy_from_slice(&len.to_le_bytes());
            assert!(matches!(load_bytes(&short, None, "t"), Err(GltfError::Container(_))), "length {len}");
        }
        let mut chunk = glb.clone();
        chunk[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(load_bytes(&chunk, None, "t"), Err(GltfError::Container(_))));
        // Trailing bytes after the declared length are ignored.
        let mut longer = glb.clone();
        longer.extend([0u8; 7]);
        assert!(load_bytes(&longer, None, "t").is_ok());
    }

    #[test]
    fn truncated_files() {
        let glb = std::fs::read(sample("RiggedSimple")).unwrap();
        let json_end = 20 + u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
        for cut in [0, 3] {
            // Too short for the magic: not recognized as GLB, so it is (bad) JSON.
            assert!(matches!(load_bytes(&glb[..cut], None, "t"), Err(GltfError::Json(_))));
        }
        for cut in [4, 11, 12, 19, 20, 21, 100, json_end - 1, json_end, json_end + 4, json_end + 8, glb.len() - 1] {
            let r = load_bytes(&glb[..cut], None, "t");
            assert!(matches!(r, Err(GltfError::Container(_))), "cut at {cut}: {r:?}");
        }
        let text = std::fs::read(sample("SimpleSkin")).unwrap();
        for cut in [0, 1, 10, 100, 1000, text.len() / 2, text.len() - 2] {
            let r = load_bytes(&text[..cut], None, "t");
            assert!(matches!(r, Err(GltfError::Json(_))), "cut at {cut}: {r:?}");
        }
    }

    #[test]
    fn bit_flips_never_panic() {
        let mut outcomes = HashMap::new();
        let mut run = |bytes: &[u8]| {
            let kind = match load_bytes(bytes, None, "t") {
                Ok(rig) => {
                    check_invariants(&rig);
                    "ok"
                }
                Err(e) => {
                    assert!(!e.to_string().is_empty());
                    match e {
                        GltfError::Container(_) => "container",
                        GltfError::Json(_) => "json",
                        GltfError::Schema(_) => "schema",
                        _ => "content",
                    }
                }
            };
            *outcomes.entry(kind).or_insert(0usize) += 1;
        };
        // Every byte of a .gltf, one bit each.
        let text = std::fs::read(sample("SimpleSkin")).unwrap();
        for i in 0..text.len() {
            let mut b = text.clone();
            b[i] ^= 1 << (i % 8);
            run(&b);
        }
        // The JSON chunk and header of a .glb byte by byte, its BIN chunk sparsely.
        let glb = std::fs::read(sample("RiggedSimple")).unwrap();
        let json_end = 20 + u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
        for i in (0..json_end).chain((json_end..glb.len()).step_by(7)) {
            let mut b = glb.clone();
            b[i] ^= 1 << (i % 8);
            run(&b);
        }
        // The tiny model, every byte (its binary data is inside base64).
        let tiny = Tiny::new().gltf().into_bytes();
        for i in 0..tiny.len() {
            let mut b = tiny.clone();
            b[i] ^= 1 << (i % 8);
            run(&b);
        }
        println!("bit flip outcomes: {outcomes:?}");
        for kind in ["ok", "container", "json", "schema", "content"] {
            assert!(outcomes.get(kind).copied().unwrap_or(0) > 0, "no {kind} outcome: {outcomes:?}");
        }
        // A flip of the first byte of JSON text is a parse error.
        let mut b = text.clone();
        b[0] ^= 0x01;
        assert!(matches!(load_bytes(&b, None, "t"), Err(GltfError::Json(_))));
    }

    #[test]
    fn sparse_accessors() {
        // POSITION with a sparse override of vertex 1 from the weights view's first 12 bytes.
        let tiny = Tiny::new();
        let text = tiny.gltf().replacen(
            r#""min":[0,0,0],"max":[1,1,0]}"#,
            r#""min":[0,0,0],"max":[1,1,0],"sparse":{"count":1,"indices":{"bufferView":3,"componentType":5123},"values":{"bufferView":2}}}"#,
            1,
        );
        // Sparse index 0 (the first u16 of the index view) takes (1, 0, 0) from the weights view.
        let rig = load_bytes(text.as_bytes(), None, "t").unwrap();
        assert_eq!(rig.meshes[0].primitives[0].positions[0], [1.0, 0.0, 0.0]);
        let zero = text.replacen(r#""sparse":{"count":1"#, r#""sparse":{"count":0"#, 1);
        let r = load_bytes(zero.as_bytes(), None, "t");
        assert!(
            matches!(r, Err(GltfError::AccessorOutOfBounds { accessor: 0, .. }) | Err(GltfError::Schema(_))),
            "{r:?}"
        );
        let many = text.replacen(r#""sparse":{"count":1"#, r#""sparse":{"count":4"#, 1);
        let r = load_bytes(many.as_bytes(), None, "t");
        assert!(matches!(r, Err(GltfError::AccessorOutOfBounds { accessor: 0, .. })), "{r:?}");
        // A sparse accessor without a buffer view and a huge count would decode to 1.2 GB of
        // zeros: refused before anything is allocated.
        let huge = text.replacen(
            r#""bufferView":0,"byteOffset":0,"componentType":5126,"count":3"#,
            r#""componentType":5126,"count":100000000"#,
            1,
        );
        let r = load_bytes(huge.as_bytes(), None, "t");
        assert!(matches!(r, Err(GltfError::TooLarge { accessor: 0, limit: MIN_DECODE_BUDGET })), "{r:?}");
        // The same with a small count decodes zeros plus the sparse value.
        let small = huge.replacen(r#""count":100000000"#, r#""count":3"#, 1);
        let rig = load_bytes(small.as_bytes(), None, "t").unwrap();
        assert_eq!(rig.meshes[0].primitives[0].positions, [[1.0, 0.0, 0.0], [0.0; 3], [0.0; 3]]);
    }
}
