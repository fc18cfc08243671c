//! Errors: [`BvhErrorKind`] (what is wrong with the text) and [`BvhError`] (a file that cannot
//! be read, a text rejected at a line, or options out of range).

use std::fmt;
use std::path::PathBuf;

/// What is wrong with a BVH text. [`BvhError::Text`] says at which line.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum BvhErrorKind {
    /// The input ended where `expected` was due (a truncated file).
    UnexpectedEnd {
        /// What was due.
        expected: &'static str,
    },
    /// A word other than the one due (a keyword, a name, a brace).
    UnexpectedToken {
        /// What was due.
        expected: &'static str,
        /// What was there (cut to 40 characters).
        found: String,
    },
    /// `ROOT`, `JOINT` or `End Site` not followed by `{`.
    MissingOpenBrace {
        /// The joint (`End Site` for an end site).
        joint: String,
    },
    /// `MOTION` or the end of the input while a joint's `{` is still open.
    UnclosedJoint {
        /// The joint.
        joint: String,
        /// The line of its `{`.
        opened: u32,
    },
    /// A word that is not a number, or not a non-negative integer where a count is due.
    BadNumber {
        /// What was due (`"OFFSET value"`, `"frame value"`, `"Frames count"`, ...).
        what: &'static str,
        /// The word (cut to 40 characters).
        found: String,
    },
    /// A number that is NaN or infinite, or that becomes so as `f32` once scaled.
    NonFinite {
        /// Which number.
        what: &'static str,
    },
    /// A word in a `CHANNELS` list that names no channel (`Xposition` … `Zrotation`).
    UnknownChannel {
        /// The word (cut to 40 characters).
        found: String,
    },
    /// `CHANNELS n` followed by another number of channel names.
    ChannelCountMismatch {
        /// The declared count.
        declared: usize,
        /// The channel names that follow.
        found: usize,
    },
    /// A joint (End Sites count) past [`MAX_JOINTS`](super::MAX_JOINTS).
    TooManyJoints {
        /// The cap.
        max: usize,
    },
    /// A count above one of this importer's caps.
    TooLarge {
        /// Which count.
        what: &'static str,
        /// The count.
        value: u64,
        /// The cap.
        max: u64,
    },
    /// A frame line with fewer values than the joints have channels.
    TooFewValues {
        /// The frame (0-based).
        frame: usize,
        /// The values due (the sum of the `CHANNELS` counts).
        expected: usize,
        /// The values found.
        found: usize,
    },
    /// A frame line with more values than the joints have channels.
    TooManyValues {
        /// The frame (0-based).
        frame: usize,
        /// The values due (the sum of the `CHANNELS` counts).
        expected: usize,
        /// The values found.
        found: usize,
    },
    /// `Frames:` declares another number of frames than the lines that follow.
    FrameCountMismatch {
        /// The declared count.
        declared: u64,
        /// The frame lines found (up to and including the first surplus one).
        found: u64,
    },
    /// `Frame Time:` is zero or negative.
    InvalidFrameTime {
        /// The value.
        value: f64,
    },
    /// `Frame Time:` is so small for the number of frames that two key times are the same `f32`.
    FrameTimeTooSmall {
        /// The frame whose key time equals the previous one's.
        frame: usize,
    },
}

/// Cuts `s` to 40 characters for an error message.
pub(super) fn shown(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

impl fmt::Display for BvhErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnexpectedEnd { expected } => write!(f, "the input ends where {expected} is due"),
            Self::UnexpectedToken { expected, found } => write!(f, "expected {expected}, found '{found}'"),
            Self::MissingOpenBrace { joint } => write!(f, "'{{' is missing after {joint}"),
            Self::UnclosedJoint { joint, opened } => {
                write!(f, "joint {joint} (its '{{' on line {opened}) has no closing '}}'")
            }
            Self::BadNumber { what, found } => write!(f, "expected {what}, found '{found}'"),
            Self::NonFinite { what } => write!(f, "{what} is NaN or infinite (as f32 once scaled)"),
            Self::UnknownChannel { found } => {
                write!(f, "'{found}' is no channel (Xposition, Yposition, Zposition, Xrotation, Yrotation, Zrotation)")
            }
            Self::ChannelCountMismatch { declared, found } => {
                write!(f, "CHANNELS declares {declared} channels but {found} channel names follow")
            }
            Self::TooManyJoints { max } => write!(f, "more than {max} joints (End Sites included)"),
            Self::TooLarge { what, value, max } => write!(f, "{what} is {value}, above the cap {max}"),
            Self::TooFewValues { frame, expected, found } => {
                write!(f, "frame {frame} has {found} values, fewer than the {expected} channels")
            }
            Self::TooManyValues { frame, expected, found } => {
                write!(f, "frame {frame} has {found} values, more than the {expected} channels")
            }
            Self::FrameCountMismatch { declared, found } => {
                write!(f, "Frames: declares {declared} frames but {found} frame lines follow")
            }
            Self::InvalidFrameTime { value } => write!(f, "Frame Time {value} is not positive"),
            Self::FrameTimeTooSmall { frame } => {
                write!(f, "Frame Time is too small: frame {frame}'s key time equals the previous frame's as f32")
            }
        }
    }
}

/// Why a BVH file was not imported.
#[derive(Debug)]
#[non_exhaustive]
pub enum BvhError {
    /// The file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The text breaks the format or a cap.
    Text {
        /// The file, when the text came from one ([`load_file`](super::load_file)).
        path: Option<PathBuf>,
        /// 1-based line number.
        line: u32,
        /// What is wrong.
        kind: BvhErrorKind,
    },
    /// [`BvhOptions::scale`](super::BvhOptions::scale) is not a finite positive number.
    InvalidScale {
        /// The scale given.
        scale: f32,
    },
}

impl BvhError {
    /// The line of a [`BvhError::Text`] error.
    #[must_use]
    pub fn line(&self) -> Option<u32> {
        match self {
            Self::Text { line, .. } => Some(*line),
            _ => None,
        }
    }
    /// What is wrong, for a [`BvhError::Text`] error.
    #[must_use]
    pub fn kind(&self) -> Option<&BvhErrorKind> {
        match self {
            Self::Text { kind, .. } => Some(kind),
            _ => None,
        }
    }
}

impl fmt::Display for BvhError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { path, source } => write!(f, "{}: cannot read the file: {source}", path.display()),
            Self::Text { path: Some(path), line, kind } => write!(f, "{}: bvh line {line}: {kind}", path.display()),
            Self::Text { path: None, line, kind } => write!(f, "bvh line {line}: {kind}"),
            Self::InvalidScale { scale } => {
                write!(f, "bvh scale {scale} is not a finite positive number of meters per file unit")
            }
        }
    }
}

impl std::error::Error for BvhError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
