//! [`BakeError`]: why a rig cannot be baked.

use std::fmt;

use sinew::limits::MAX_JOINTS;

/// Why baking failed.
#[derive(Debug, Clone, PartialEq)]
pub enum BakeError {
    /// More joints than `MAX_JOINTS`.
    TooManyJoints(usize),
    /// A channel has more keys than a track holds (65535).
    TooManyKeys {
        /// Clip name.
        clip: String,
    },
    /// A joint's rest transform is not finite.
    NonFiniteRest {
        /// Joint name.
        joint: String,
    },
    /// A triangle needs more joints than the palette holds.
    PaletteTooSmall {
        /// Palette size asked for.
        palette: usize,
        /// Joints one triangle needs.
        needed: usize,
    },
    /// A skinned vertex has a negative weight.
    NegativeWeight {
        /// Mesh name.
        mesh: String,
        /// Primitive index within the mesh.
        primitive: usize,
        /// Vertex index within the primitive.
        vertex: usize,
    },
    /// A skinned vertex has all its weights zero (it would follow no joint).
    ZeroWeights {
        /// Mesh name.
        mesh: String,
        /// Primitive index within the mesh.
        primitive: usize,
        /// Vertex index within the primitive.
        vertex: usize,
    },
    /// An inverse bind matrix is not finite.
    NonFiniteBind {
        /// Skin name.
        skin: String,
        /// Skin joint whose matrix it is.
        joint: usize,
    },
    /// A channel's key values span more than `f32` arithmetic holds: the difference of two of
    /// its keys (the runtime interpolates `a + (b − a)·s`; the encoder's value ranges are
    /// `max − min`) overflows to infinity.
    KeyRange {
        /// Clip name.
        clip: String,
        /// Joint (node) name.
        joint: String,
        /// The animated property: `translation`, `rotation` or `scale`.
        property: &'static str,
        /// Largest magnitude of the channel's key values.
        largest: f32,
    },
    /// A value the runtime computes in `f32` from the rest pose or a clip's pose is NaN or
    /// infinite: a joint's model matrix (the product of its ancestors' transforms) or a skin's
    /// palette entry (model matrix × inverse bind matrix) overflows.
    Overflow {
        /// The clip and the time (seconds) of the pose, or `None` for the rest pose.
        clip: Option<(String, f32)>,
        /// Joint (node) name.
        joint: String,
        /// The value that overflows.
        what: String,
    },
    /// A clip's encoded section does not parse (the encoder wrote a value the format refuses,
    /// such as an infinite value range), with the parser's message.
    ClipEncoding {
        /// Clip name.
        clip: String,
        /// The parser's message.
        detail: String,
    },
    /// The rig's spring bones cannot be stored (an index past the hierarchy or the colliders,
    /// a child not below its joint, a joint swinging twice, a value that is not finite, a
    /// negative radius, more than 65,535 entries in a list), with a description naming the
    /// spring joint or collider.
    Springs(String),
    /// The rig is inconsistent (an index out of range, a NaN vertex), with a description.
    Invalid(String),
    /// The encoded file failed to parse (an internal error), with the parser's message.
    Encoding(String),
}

impl fmt::Display for BakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooManyJoints(n) => write!(f, "{n} joints exceed the limit of {MAX_JOINTS}"),
            Self::TooManyKeys { clip } => write!(f, "clip '{clip}' has a channel with more than 65535 keys"),
            Self::NonFiniteRest { joint } => write!(f, "joint '{joint}' has a non-finite rest transform"),
            Self::PaletteTooSmall { palette, needed } => {
                write!(f, "palette of {palette} joints is too small: a triangle needs {needed}")
            }
            Self::NegativeWeight { mesh, primitive, vertex } => {
                write!(f, "mesh '{mesh}' primitive {primitive} vertex {vertex} has a negative weight")
            }
            Self::ZeroWeights { mesh, primitive, vertex } => {
                write!(f, "mesh '{mesh}' primitive {primitive} vertex {vertex} has all weights zero")
            }
            Self::NonFiniteBind { skin, joint } => {
                write!(f, "skin '{skin}': the inverse bind matrix of joint {joint} is not finite")
            }
            Self::KeyRange { clip, joint, property, largest } => write!(
                f,
                "clip '{clip}', joint '{joint}' {property}: key values beyond what f32 arithmetic can encode \
                 (|v| up to {largest:e}; the difference of two keys overflows)"
            ),
            Self::Overflow { clip, joint, what } => {
                match clip {
                    Some((clip, time)) => write!(f, "clip '{clip}' at {time} s")?,
                    None => write!(f, "rest pose")?,
                }
                write!(f, ", joint '{joint}': its {what} overflows f32")
            }
            Self::ClipEncoding { clip, detail } => {
                write!(f, "clip '{clip}' holds values its encoding cannot carry in f32: {detail}")
            }
            Self::Springs(s) => write!(f, "spring bones: {s}"),
            Self::Invalid(s) => write!(f, "invalid rig: {s}"),
            Self::Encoding(s) => write!(f, "internal encoding error: {s}"),
        }
    }
}

impl std::error::Error for BakeError {}
