//! Errors: [`Md5Error`] (what is wrong and where: [`Location`], the file and line, and for a token
//! of the wrong kind its [`TokenKind`]) and [`LoadError`] (a file that cannot be read, or an
//! [`Md5Error`] with the path of the file it is in).

use std::fmt;
use std::path::PathBuf;

use super::limits::MD5_VERSION;

/// Which of the two md5 files an error is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Md5File {
    /// The `.md5mesh`.
    Mesh,
    /// The `.md5anim`.
    Anim,
}

/// Where an error is: the file kind and the 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location {
    /// The file.
    pub file: Md5File,
    /// 1-based line number.
    pub line: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = match self.file {
            Md5File::Mesh => "md5mesh",
            Md5File::Anim => "md5anim",
        };
        write!(f, "{file} line {}", self.line)
    }
}

/// The kind of a token, for [`Md5Error::UnexpectedToken`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// A bare word: a keyword or a number.
    Word,
    /// A double-quoted string.
    QuotedString,
    /// `(`.
    OpenParen,
    /// `)`.
    CloseParen,
    /// `{`.
    OpenBrace,
    /// `}`.
    CloseBrace,
}

impl fmt::Display for TokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TokenKind::Word => "a word",
            TokenKind::QuotedString => "a quoted string",
            TokenKind::OpenParen => "'('",
            TokenKind::CloseParen => "')'",
            TokenKind::OpenBrace => "'{'",
            TokenKind::CloseBrace => "'}'",
        })
    }
}

/// Why an md5 file was rejected. Every variant says where (file and line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Md5Error {
    /// The input ended where `expected` was due (a truncated file).
    UnexpectedEnd {
        /// Where the input ended.
        at: Location,
        /// What was due.
        expected: &'static str,
    },
    /// A token of the wrong kind, or the wrong keyword.
    UnexpectedToken {
        /// Where the token is.
        at: Location,
        /// What was due.
        expected: &'static str,
        /// What was there.
        found: TokenKind,
    },
    /// A `"` with no closing `"` on the same line.
    UnterminatedString {
        /// Where the string starts.
        at: Location,
    },
    /// A word that is not a number (or not an integer where one is due).
    BadNumber {
        /// Where the word is.
        at: Location,
        /// What was due.
        expected: &'static str,
    },
    /// A number that is NaN or infinite (or overflows `f32`).
    NonFinite {
        /// Where the number is.
        at: Location,
    },
    /// `MD5Version` is not 10.
    UnsupportedVersion {
        /// Where the version is.
        at: Location,
        /// The version found.
        version: i64,
    },
    /// The entries that follow a declared count do not match it. `found` counts the entries up
    /// to and including the first surplus one.
    CountMismatch {
        /// Where the mismatch shows (the first surplus entry, or what follows the last one).
        at: Location,
        /// Which count (`"numverts"`, `"joints"`, ...).
        what: &'static str,
        /// The declared count.
        declared: usize,
        /// The entries found.
        found: usize,
    },
    /// An entry's own index (`vert 7`, `frame 3`, ...) is not its position in the list.
    EntryIndex {
        /// Where the entry is.
        at: Location,
        /// Which list.
        what: &'static str,
        /// The position it is at.
        expected: usize,
        /// The index it declares.
        found: i64,
    },
    /// An index that must be below `limit` is not (or is negative).
    IndexOutOfRange {
        /// Where the index is.
        at: Location,
        /// Which index (`"joint parent"`, `"weight joint"`, ...).
        what: &'static str,
        /// The index (for ranges, the last index the range covers).
        index: i64,
        /// The exclusive upper bound.
        limit: usize,
    },
    /// A value that breaks a rule of the format (`what` `requirement`).
    InvalidValue {
        /// Where the value is.
        at: Location,
        /// Which value.
        what: &'static str,
        /// The rule it breaks, as a phrase ("must not be negative").
        requirement: &'static str,
    },
    /// A count above one of this importer's caps.
    TooLarge {
        /// Where the count is.
        at: Location,
        /// Which count.
        what: &'static str,
        /// The count.
        value: u64,
        /// The cap.
        max: u64,
    },
    /// The anim's hierarchy does not match the mesh's joints: joint `joint` differs in name or
    /// parent, or is missing from one of them.
    HierarchyMismatch {
        /// Where in the anim.
        at: Location,
        /// The first joint index that differs.
        joint: usize,
    },
}

impl fmt::Display for Md5Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Md5Error::UnexpectedEnd { at, expected } => write!(f, "{at}: input ends where {expected} is due"),
            Md5Error::UnexpectedToken { at, expected, found } => write!(f, "{at}: expected {expected}, found {found}"),
            Md5Error::UnterminatedString { at } => write!(f, "{at}: string has no closing quote on its line"),
            Md5Error::BadNumber { at, expected } => {
                write!(f, "{at}: expected {expected}, found a word that is not one")
            }
            Md5Error::NonFinite { at } => write!(f, "{at}: number is NaN or infinite"),
            Md5Error::UnsupportedVersion { at, version } => {
                write!(f, "{at}: MD5Version {version} is not supported (only {MD5_VERSION})")
            }
            Md5Error::CountMismatch { at, what, declared, found } => {
                write!(f, "{at}: {what} declares {declared} entries but {found} follow")
            }
            Md5Error::EntryIndex { at, what, expected, found } => {
                write!(f, "{at}: {what} entry {expected} is numbered {found}")
            }
            Md5Error::IndexOutOfRange { at, what, index, limit } => {
                write!(f, "{at}: {what} index {index} is out of range (must be in 0..{limit})")
            }
            Md5Error::InvalidValue { at, what, requirement } => write!(f, "{at}: {what} {requirement}"),
            Md5Error::TooLarge { at, what, value, max } => write!(f, "{at}: {what} is {value}, above the cap {max}"),
            Md5Error::HierarchyMismatch { at, joint } => {
                write!(f, "{at}: anim joint {joint} does not match the mesh's joint {joint} (name, parent or count)")
            }
        }
    }
}

impl Md5Error {
    /// Where the error is.
    #[must_use]
    pub fn location(&self) -> Location {
        match *self {
            Md5Error::UnexpectedEnd { at, .. }
            | Md5Error::UnexpectedToken { at, .. }
            | Md5Error::UnterminatedString { at }
            | Md5Error::BadNumber { at, .. }
            | Md5Error::NonFinite { at }
            | Md5Error::UnsupportedVersion { at, .. }
            | Md5Error::CountMismatch { at, .. }
            | Md5Error::EntryIndex { at, .. }
            | Md5Error::IndexOutOfRange { at, .. }
            | Md5Error::InvalidValue { at, .. }
            | Md5Error::TooLarge { at, .. }
            | Md5Error::HierarchyMismatch { at, .. } => at,
        }
    }
}

impl std::error::Error for Md5Error {}

/// Why [`load_files`](super::load_files) failed: a file could not be read, or its content was
/// rejected.
#[derive(Debug)]
pub enum LoadError {
    /// Reading a file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The content of a file was rejected.
    Md5 {
        /// The file the error is in.
        path: PathBuf,
        /// The parse or conversion error.
        error: Md5Error,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            LoadError::Md5 { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Io { source, .. } => Some(source),
            LoadError::Md5 { error, .. } => Some(error),
        }
    }
}
