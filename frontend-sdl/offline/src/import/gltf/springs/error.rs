//! [`SpringError`]: why a file's spring bones break their extension's rules, with the JSON path
//! of the offending value.

use std::fmt;

/// Why the spring bones of a file (`VRMC_springBone`, `VRMC_springBone_extended_collider` or
/// VRM 0.x `secondaryAnimation`) could not be read: the JSON path of the offending value and
/// what is wrong with it. Its one-line [`Display`](fmt::Display) is `path: problem`.
#[derive(Debug, Clone, PartialEq)]
pub struct SpringError {
    /// JSON path of the offending value, such as
    /// `extensions.VRMC_springBone.springs[0].joints[2].node`.
    pub path: String,
    /// What is wrong.
    pub kind: SpringErrorKind,
}

/// What is wrong with a spring bone value (see [`SpringError`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SpringErrorKind {
    /// The value is missing or of the wrong JSON type.
    Type {
        /// What the extension wants there (`"an object"`, `"a node index"`, ...).
        expected: &'static str,
    },
    /// An index names no item of its list (a node, collider or collider group).
    BadIndex {
        /// What the index counts (`"node"`, `"collider"`, `"collider group"`).
        what: &'static str,
        /// The index.
        index: u64,
        /// The length of that list.
        limit: usize,
    },
    /// A node that is not in the imported scene, so not a joint of the rig.
    NotInScene {
        /// The node.
        node: usize,
    },
    /// A number out of the range the extension allows (or not finite as `f32`).
    OutOfRange {
        /// The value.
        value: f64,
        /// The allowed range in words (`"at least 0"`, `"0 to 1"`).
        range: &'static str,
    },
    /// A spring joint that is not a descendant of the joint before it.
    NotDescendant {
        /// The joint's node.
        node: usize,
        /// The previous joint's node.
        previous: usize,
    },
    /// A spring without joints (VRM 1.0 requires at least one).
    NoJoints,
    /// A collider shape with none or several of the shapes it must choose one of.
    Shape {
        /// The shapes it names (empty for none).
        found: Vec<&'static str>,
    },
    /// A plane normal of length zero.
    ZeroNormal,
    /// A spring's center that is neither its first joint nor an ancestor of it, or that is a
    /// joint of another spring or below one (VRMC_springBone 1.0, "Center Space").
    Center {
        /// The center node.
        node: usize,
        /// Why it cannot be the center.
        reason: &'static str,
    },
}

impl fmt::Display for SpringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.path)?;
        match &self.kind {
            SpringErrorKind::Type { expected } => write!(f, "expected {expected}"),
            SpringErrorKind::BadIndex { what, index, limit } => {
                write!(f, "{what} {index} does not exist (the file has {limit})")
            }
            SpringErrorKind::NotInScene { node } => {
                write!(f, "node {node} is not in the imported scene")
            }
            SpringErrorKind::OutOfRange { value, range } => write!(f, "{value} is out of range ({range})"),
            SpringErrorKind::NotDescendant { node, previous } => {
                write!(f, "node {node} is not a descendant of the previous joint, node {previous}")
            }
            SpringErrorKind::NoJoints => write!(f, "the spring has no joints"),
            SpringErrorKind::Shape { found } if found.is_empty() => {
                write!(f, "the shape names no sphere, capsule or plane")
            }
            SpringErrorKind::Shape { found } => write!(f, "the shape names {}; it must name one", found.join(" and ")),
            SpringErrorKind::ZeroNormal => write!(f, "the plane normal has length zero"),
            SpringErrorKind::Center { node, reason } => write!(f, "node {node} cannot be the center: {reason}"),
        }
    }
}

impl std::error::Error for SpringError {}
