//! [`GltfError`]: why a glTF file could not be imported, one variant per kind of fault, each
//! naming the offending item (buffer, accessor, node, ...).

use std::fmt;
use std::path::PathBuf;

use super::springs::SpringError;

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
    /// The file's `extensionsRequired` lists extensions this importer does not read (such as
    /// `KHR_texture_basisu`): their names, in the file's order.
    UnsupportedExtensions(Vec<String>),
    /// The file needs an extension that sinew reads, but whose decoder this build leaves out: a
    /// `KHR_meshopt_compression` or `EXT_meshopt_compression` file (one that requires the
    /// extension, or whose compressed views have no uncompressed fallback data) when the
    /// `meshopt` cargo feature is off, as in the WebAssembly importer; a
    /// `KHR_draco_mesh_compression` file (one that requires the extension, or whose compressed
    /// primitives have no uncompressed fallback data) when the `draco` feature is off.
    ExtensionNotInBuild {
        /// The extension's name.
        extension: &'static str,
        /// The cargo feature that adds its decoder.
        feature: &'static str,
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
    /// A `KHR_meshopt_compression` or `EXT_meshopt_compression` buffer view cannot be decoded:
    /// a missing or invalid field, a compressed range outside its buffer, or a stream the
    /// decoder rejects (corrupt or truncated).
    Meshopt {
        /// The buffer view.
        view: usize,
        /// The extension the view uses.
        extension: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// A `KHR_draco_mesh_compression` primitive cannot be decoded: a missing or invalid field
    /// of its extension object, a stream outside its buffer or that the decoder rejects
    /// (corrupt, truncated, over the decoding budget), an attribute id the stream does not
    /// hold, or decoded data that does not fit its accessor (count, components, range).
    Draco {
        /// Mesh index.
        mesh: usize,
        /// The mesh's name, if it has one.
        name: Option<String>,
        /// Primitive index within the mesh.
        primitive: usize,
        /// What is wrong.
        detail: String,
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
    /// An animation channel's key times decrease (a time repeated in a row is read as a jump:
    /// see the rig's [`RigChannel::times`](crate::rig::RigChannel::times)).
    UnsortedKeyTimes {
        /// Animation index.
        animation: usize,
        /// Channel index within the animation.
        channel: usize,
        /// The first key whose time is less than the previous one.
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
    /// input, at least 16 MiB and at most [`MAX_DECODED_BYTES`](super::MAX_DECODED_BYTES).
    TooLarge {
        /// The accessor whose data crossed the limit.
        accessor: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// The file has more nodes than [`MAX_NODES`](super::MAX_NODES).
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
    /// An image's bytes cannot be found (no URI nor buffer view, a buffer view past its
    /// buffer, an unsafe or unreadable URI, a `data:` URI that is not PNG, JPEG or WebP).
    ImageUnavailable {
        /// Image index.
        image: usize,
        /// What is wrong.
        reason: String,
    },
    /// An image's media type is not one this importer decodes (PNG, JPEG and WebP).
    UnsupportedImage {
        /// Image index.
        image: usize,
        /// The declared media type.
        mime: String,
    },
    /// An image is truncated or corrupt, or its data is not of its declared type.
    BadImage {
        /// Image index.
        image: usize,
        /// The decoder's message.
        detail: String,
    },
    /// An image is wider or taller than [`MAX_IMAGE_DIMENSION`](super::MAX_IMAGE_DIMENSION)
    /// (or empty).
    ImageTooLarge {
        /// Image index.
        image: usize,
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
        /// The limit on either side.
        limit: u32,
    },
    /// Decoding an image would exceed what is left of the import's decoding budget (see
    /// [`TooLarge`](Self::TooLarge)).
    ImageOverBudget {
        /// Image index.
        image: usize,
        /// Its decoded size in bytes (RGBA8).
        bytes: usize,
        /// What was left of the budget.
        budget: usize,
    },
    /// The primitives of a mesh have different numbers of morph targets (glTF requires the
    /// same number in every primitive).
    MorphTargetCount {
        /// Mesh index.
        mesh: usize,
        /// The first primitive whose count differs from primitive 0's.
        primitive: usize,
        /// Primitive 0's target count.
        expected: usize,
        /// This primitive's.
        found: usize,
    },
    /// A morph-weight array has the wrong length for its mesh's target count: a mesh's or a
    /// node's `weights`, or a `weights` channel's key values (targets per key, × 3 for cubic
    /// splines).
    MorphWeights {
        /// Which array.
        what: String,
        /// The length required.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// The spring bones (`VRMC_springBone`, its extended colliders, or VRM 0.x
    /// `secondaryAnimation`) break a rule of their extension.
    Springs(SpringError),
}

impl fmt::Display for GltfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GltfError::Io { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            GltfError::Container(s) => write!(f, "malformed GLB container: {s}"),
            GltfError::Json(s) => write!(f, "invalid glTF JSON: {s}"),
            GltfError::Schema(s) => write!(f, "glTF schema violation: {s}"),
            GltfError::UnsupportedExtensions(names) => {
                let quoted: Vec<String> = names.iter().map(|n| short(n).into_owned()).collect();
                match quoted.as_slice() {
                    [one] => write!(f, "the file requires the extension {one}, which sinew does not read"),
                    many => {
                        write!(f, "the file requires the extensions {}, which sinew does not read", many.join(", "))
                    }
                }
            }
            GltfError::ExtensionNotInBuild { extension, feature } => write!(
                f,
                "the file requires the extension {extension}, which this build of sinew cannot decode (built without the `{feature}` feature)"
            ),
            GltfError::UnsupportedVersion { version } => {
                write!(f, "glTF version {:?} is not supported (only 2.0)", short(version))
            }
            GltfError::MissingBuffer { buffer, reason } => write!(f, "buffer {buffer}: {reason}"),
            GltfError::Meshopt { view, extension, detail } => {
                write!(f, "buffer view {view}: {extension} data cannot be decoded: {detail}")
            }
            GltfError::Draco { mesh, name, primitive, detail } => {
                write!(f, "mesh {mesh}")?;
                if let Some(name) = name {
                    write!(f, " ({:?})", short(name))?;
                }
                write!(f, " primitive {primitive}: KHR_draco_mesh_compression data cannot be decoded: {detail}")
            }
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
                "animation {animation} channel {channel}: key time {key} is less than the previous one"
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
            GltfError::ImageUnavailable { image, reason } => write!(f, "image {image}: {reason}"),
            GltfError::UnsupportedImage { image, mime } => {
                write!(f, "image {image}: media type {mime:?} is not supported (only PNG, JPEG and WebP)")
            }
            GltfError::BadImage { image, detail } => write!(f, "image {image} is truncated or corrupt: {detail}"),
            GltfError::ImageTooLarge { image, width, height, limit } => {
                write!(f, "image {image} is {width}×{height} pixels; each side must be 1 to {limit}")
            }
            GltfError::ImageOverBudget { image, bytes, budget } => write!(
                f,
                "image {image}: its {bytes} decoded bytes exceed what is left of the decoding budget ({budget} bytes)"
            ),
            GltfError::MorphTargetCount { mesh, primitive, expected, found } => write!(
                f,
                "mesh {mesh} primitive {primitive} has {found} morph targets, primitive 0 has {expected} (they must agree)"
            ),
            GltfError::MorphWeights { what, expected, found } => {
                write!(f, "{what}: {found} morph weights, expected {expected} (the mesh's target count)")
            }
            GltfError::Springs(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for GltfError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GltfError::Io { source, .. } => Some(source),
            GltfError::Springs(e) => Some(e),
            _ => None,
        }
    }
}

/// Characters of a file's string (URI, version) that a message quotes.
pub(super) const QUOTED_CHARS: usize = 64;

/// A string for a message: whole up to [`QUOTED_CHARS`] characters, otherwise its first
/// [`QUOTED_CHARS`] characters and `…` to mark the cut.
pub(super) fn short(s: &str) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(QUOTED_CHARS) {
        None => s.into(),
        Some((i, _)) => format!("{}…", s.get(..i).unwrap_or(s)).into(),
    }
}
