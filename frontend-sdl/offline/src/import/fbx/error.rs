//! [`FbxError`]: why an FBX file could not be imported, each variant one line.

use std::fmt;
use std::path::PathBuf;

/// Why an FBX file could not be imported.
#[derive(Debug)]
#[non_exhaustive]
pub enum FbxError {
    /// The file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// This build of sinew leaves FBX import out: the cargo feature that adds it is off (as in
    /// the WebAssembly importer, where ufbx's C does not build).
    NotInBuild {
        /// The cargo feature that adds FBX import.
        feature: &'static str,
    },
    /// ufbx refused the file (not FBX, truncated, corrupt, over the memory limit, ...), or could
    /// not bake one of its animation stacks.
    Ufbx {
        /// What was being done: `load`, or the animation stack being baked.
        what: String,
        /// ufbx's description of the error, with its detail where it gives one.
        description: String,
    },
    /// The file has more nodes than [`MAX_NODES`](super::MAX_NODES).
    TooManyNodes {
        /// Nodes in the file (ufbx's root and helper nodes included).
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// A skin has more joints than a joint index (16 bits) holds.
    TooManyJoints {
        /// The skin deformer's name.
        skin: String,
        /// Its joints.
        count: usize,
    },
    /// A value the rig needs (position, transform, bind matrix, key, weight) is not finite.
    NonFinite {
        /// Which value.
        what: String,
    },
    /// The file has no skeleton, mesh or animation the rig can hold.
    Nothing,
}

impl fmt::Display for FbxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Self::NotInBuild { feature } => {
                write!(f, "FBX import is not in this build of sinew (cargo feature `{feature}`)")
            }
            Self::Ufbx { what, description } => write!(f, "FBX {what}: {}", one_line(description)),
            Self::TooManyNodes { count, limit } => write!(f, "FBX: {count} nodes, more than the limit of {limit}"),
            Self::TooManyJoints { skin, count } => {
                write!(f, "FBX skin {:?}: {count} joints, more than a joint index holds", one_line(skin))
            }
            Self::NonFinite { what } => write!(f, "FBX: {} is not finite", one_line(what)),
            Self::Nothing => f.write_str("FBX: no skeleton, mesh or animation sinew can use"),
        }
    }
}

impl std::error::Error for FbxError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// `s` on one line: line breaks and other control characters become spaces, runs of spaces
/// one space, and the ends are trimmed.
pub(super) fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let c = if c.is_control() { ' ' } else { c };
        if c == ' ' && (out.is_empty() || out.ends_with(' ')) {
            continue;
        }
        out.push(c);
    }
    out.truncate(out.trim_end().len());
    out
}
