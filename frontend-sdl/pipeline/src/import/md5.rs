//! Doom 3 md5 (`MD5Version 10`) importer: `.md5mesh` (skeleton and skinned meshes) and `.md5anim`
//! (a sampled clip) to [`Rig`].
//!
//! # The format
//!
//! Both files are whitespace-separated text: words (keywords and numbers), double-quoted strings
//! (no escapes, on one line), parentheses, braces and `//` comments to the end of the line. The
//! parser here is hand-written and strict: sections come in the order Doom 3 writes them, every
//! declared count must match the entries that follow, every entry index must equal its position,
//! every index must be in range and every number finite. It never panics and never allocates from
//! a declared count alone (vectors grow as entries are actually parsed), so it can take hostile
//! input; fixed caps ([`MAX_JOINTS`], [`MAX_WEIGHTS_PER_VERTEX`], [`MAX_JOINT_FRAMES`]) bound what
//! the conversion to a [`Rig`] can allocate.
//!
//! `.md5mesh`: `MD5Version 10`, `commandline "…"`, `numJoints`, `numMeshes`, a `joints { }` block
//! of `"name" parent ( x y z ) ( qx qy qz )` and `numMeshes` `mesh { }` blocks, each with
//! `shader "…"`, `numverts` / `vert i ( u v ) startWeight countWeight`, `numtris` /
//! `tri i a b c` and `numweights` / `weight i joint bias ( x y z )`.
//!
//! `.md5anim`: `MD5Version 10`, `commandline`, `numFrames`, `numJoints`, `frameRate`,
//! `numAnimatedComponents`, `hierarchy { "name" parent flags startIndex }`, `bounds { ( min )
//! ( max ) }` (one per frame), `baseframe { ( x y z ) ( qx qy qz ) }` (one per joint) and
//! `numFrames` `frame i { … }` blocks of `numAnimatedComponents` numbers each.
//!
//! # Conventions
//!
//! - **Axes and units.** md5 is Z-up, right-handed, in Doom units (about an inch). The importer
//!   keeps the file's axes and units unchanged; a viewer that wants Y-up rotates the whole rig.
//! - **Quaternions** store only `x y z`; `w = -sqrt(max(0, 1 - x² - y² - z²))` (the negative
//!   root, as Doom 3 computes it), then the quaternion is normalized. An `x y z` longer than 1
//!   (beyond a 1e-3 rounding tolerance on the squared length) is an error.
//! - **Spaces.** Mesh joints are in model space (the bind pose); anim baseframe and frame values
//!   are local to the parent joint (model space for a root).
//! - **Bind positions** are `Σ bias × (joint_position + joint_rotation.rotate(weight_position))`
//!   over a vertex's weights, with the raw biases of the file (a vertex whose biases do not sum to
//!   1 within 1e-3 is kept as is and reported in [`Rig::notes`]). A negative bias, or a vertex
//!   whose biases are all 0 (it would follow no joint), is an error.
//! - **Triangles** that repeat a vertex are kept (the baker drops them).
//! - **Winding.** Doom 3 lists triangles clockwise when seen from the front; OpenGL and glTF
//!   treat counter-clockwise as front-facing. Each `tri i a b c` becomes the rig triangle
//!   `a c b`, so back-face culling with the default `GL_CCW` front face keeps the outside.
//! - **Normals** (md5 has none) are the area-weighted sum of the adjacent faces' normals
//!   (`(p1 - p0) × (p2 - p0)` of the counter-clockwise triangles), normalized; a vertex with no
//!   non-degenerate face gets `+Z`.
//!
//! # Mapping to the rig
//!
//! - Joint `i` of the mesh is [`Rig::joints`]`[i]`; its rest transform is the local bind
//!   transform `parent_model⁻¹ × model` (translation `parent_rot⁻¹ (pos - parent_pos)`, rotation
//!   `parent_rot⁻¹ × rot`, scale 1). Empty or repeated names are made unique (noted).
//! - One skin over all joints (skin joint `i` = rig joint `i`), inverse bind matrix = inverse of
//!   each joint's model-space bind matrix.
//! - Each md5 `mesh` block becomes one [`RigMesh`] with one [`RigPrimitive`], named after its
//!   shader's file stem (made unique), with its own color from a small palette. Influences per
//!   vertex = the largest `countWeight` in that mesh; shorter vertices are padded with joint 0,
//!   weight 0. Texture coordinates are not kept (the rig has no UV channel; noted).
//! - Each anim becomes one [`RigClip`] with, per joint, a [`Interpolation::Linear`] translation
//!   and rotation channel keyed at `frame / frameRate` seconds. Consecutive rotation keys are kept
//!   in the same hemisphere (a key is negated when its dot product with the previous key is
//!   negative) so interpolation takes the short path. Bounds are not kept.

use std::fmt;
use std::path::{Path, PathBuf};

use sinew::math::{Mat4, Quat, Transform, Vec3};

use crate::rig::{ChannelTarget, Interpolation, Rig, RigChannel, RigClip, RigJoint, RigMesh, RigPrimitive, RigSkin};

/// Most joints an md5 file may declare (rig joint indices are `u16`).
pub const MAX_JOINTS: usize = 1 << 16;

/// Most weights one vertex may reference (`countWeight`); bounds the influence arrays.
pub const MAX_WEIGHTS_PER_VERTEX: usize = 32;

/// Most `numJoints × numFrames` an anim may declare; bounds the keys of the clip it becomes.
pub const MAX_JOINT_FRAMES: usize = 1 << 21;

/// The only `MD5Version` understood.
const MD5_VERSION: i64 = 10;

/// Entries reserved up front at most, whatever count a file declares.
const PREALLOC_CAP: usize = 4096;

/// How far above 1 a quaternion's `x² + y² + z²` may be (rounding of 6-decimal files).
const QUAT_XYZ_TOLERANCE: f32 = 1e-3;

/// How far from 1 a vertex's bias sum may be before it is noted.
const WEIGHT_SUM_TOLERANCE: f32 = 1e-3;

/// Per-mesh colors (linear RGBA), cycled.
const PALETTE: [[f32; 4]; 8] = [
    [0.80, 0.62, 0.45, 1.0],
    [0.35, 0.55, 0.85, 1.0],
    [0.85, 0.35, 0.30, 1.0],
    [0.40, 0.75, 0.40, 1.0],
    [0.85, 0.75, 0.30, 1.0],
    [0.65, 0.45, 0.80, 1.0],
    [0.35, 0.75, 0.75, 1.0],
    [0.75, 0.75, 0.75, 1.0],
];

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

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

/// Why [`load_files`] failed: a file could not be read, or its content was rejected.
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

// ---------------------------------------------------------------------------------------------
// Tokenizer
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok<'a> {
    Word(&'a str),
    Str(&'a str),
    OpenParen,
    CloseParen,
    OpenBrace,
    CloseBrace,
}

impl Tok<'_> {
    fn kind(self) -> TokenKind {
        match self {
            Tok::Word(_) => TokenKind::Word,
            Tok::Str(_) => TokenKind::QuotedString,
            Tok::OpenParen => TokenKind::OpenParen,
            Tok::CloseParen => TokenKind::CloseParen,
            Tok::OpenBrace => TokenKind::OpenBrace,
            Tok::CloseBrace => TokenKind::CloseBrace,
        }
    }
}

/// A cursor over the text; `Copy`, so peeking is a copy and a `next`.
#[derive(Debug, Clone, Copy)]
struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: u32,
    file: Md5File,
}

fn is_delimiter(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b'(' | b')' | b'{' | b'}' | b'"')
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str, file: Md5File) -> Self {
        Lexer { src, pos: 0, line: 1, file }
    }

    fn at(&self, line: u32) -> Location {
        Location { file: self.file, line }
    }

    /// The text between two byte offsets that sit on ASCII delimiters (or the ends), so they are
    /// always char boundaries; an impossible miss yields "".
    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.src.get(start..end).unwrap_or("")
    }

    /// The next token and its line, or `None` at the end of the input.
    fn next(&mut self) -> Result<Option<(Tok<'a>, u32)>, Md5Error> {
        let bytes = self.src.as_bytes();
        loop {
            match bytes.get(self.pos) {
                None => return Ok(None),
                Some(b'\n') => {
                    self.line = self.line.saturating_add(1);
                    self.pos += 1;
                }
                Some(c) if c.is_ascii_whitespace() => self.pos += 1,
                Some(b'/') if bytes.get(self.pos + 1) == Some(&b'/') => {
                    while let Some(&c) = bytes.get(self.pos) {
                        if c == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                Some(_) => break,
            }
        }
        let line = self.line;
        let start = self.pos;
        let Some(&first) = bytes.get(start) else { return Ok(None) };
        let tok = match first {
            b'(' => {
                self.pos += 1;
                Tok::OpenParen
            }
            b')' => {
                self.pos += 1;
                Tok::CloseParen
            }
            b'{' => {
                self.pos += 1;
                Tok::OpenBrace
            }
            b'}' => {
                self.pos += 1;
                Tok::CloseBrace
            }
            b'"' => {
                let body = start + 1;
                let mut end = body;
                loop {
                    match bytes.get(end) {
                        None | Some(b'\n') => return Err(Md5Error::UnterminatedString { at: self.at(line) }),
                        Some(b'"') => break,
                        Some(_) => end += 1,
                    }
                }
                self.pos = end + 1;
                Tok::Str(self.slice(body, end))
            }
            _ => {
                let mut end = start;
                while let Some(&c) = bytes.get(end) {
                    if is_delimiter(c) || (c == b'/' && bytes.get(end + 1) == Some(&b'/')) {
                        break;
                    }
                    end += 1;
                }
                self.pos = end;
                Tok::Word(self.slice(start, end))
            }
        };
        Ok(Some((tok, line)))
    }
}

// ---------------------------------------------------------------------------------------------
// Parser primitives
// ---------------------------------------------------------------------------------------------

struct Parser<'a> {
    lex: Lexer<'a>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, file: Md5File) -> Self {
        Parser { lex: Lexer::new(src, file) }
    }

    fn at(&self, line: u32) -> Location {
        self.lex.at(line)
    }

    fn peek(&self) -> Result<Option<(Tok<'a>, u32)>, Md5Error> {
        let mut copy = self.lex;
        copy.next()
    }

    fn next(&mut self, expected: &'static str) -> Result<(Tok<'a>, u32), Md5Error> {
        match self.lex.next()? {
            Some(t) => Ok(t),
            None => Err(Md5Error::UnexpectedEnd { at: self.at(self.lex.line), expected }),
        }
    }

    fn unexpected(&self, line: u32, expected: &'static str, tok: Tok<'_>) -> Md5Error {
        Md5Error::UnexpectedToken { at: self.at(line), expected, found: tok.kind() }
    }

    fn keyword(&mut self, kw: &'static str) -> Result<u32, Md5Error> {
        match self.next(kw)? {
            (Tok::Word(w), line) if w == kw => Ok(line),
            (tok, line) => Err(self.unexpected(line, kw, tok)),
        }
    }

    fn symbol(&mut self, want: Tok<'static>, expected: &'static str) -> Result<u32, Md5Error> {
        let (tok, line) = self.next(expected)?;
        if tok == want {
            Ok(line)
        } else {
            Err(self.unexpected(line, expected, tok))
        }
    }

    fn string(&mut self, expected: &'static str) -> Result<&'a str, Md5Error> {
        match self.next(expected)? {
            (Tok::Str(s), _) => Ok(s),
            (tok, line) => Err(self.unexpected(line, expected, tok)),
        }
    }

    fn word(&mut self, expected: &'static str) -> Result<(&'a str, u32), Md5Error> {
        match self.next(expected)? {
            (Tok::Word(w), line) => Ok((w, line)),
            (tok, line) => Err(self.unexpected(line, expected, tok)),
        }
    }

    fn int(&mut self, expected: &'static str) -> Result<(i64, u32), Md5Error> {
        let (w, line) = self.word(expected)?;
        match w.parse::<i64>() {
            Ok(v) => Ok((v, line)),
            Err(_) => Err(Md5Error::BadNumber { at: self.at(line), expected }),
        }
    }

    /// A non-negative integer no larger than `max`.
    fn index(&mut self, expected: &'static str, max: usize) -> Result<(usize, u32), Md5Error> {
        let (v, line) = self.int(expected)?;
        if v < 0 {
            return Err(Md5Error::InvalidValue {
                at: self.at(line),
                what: expected,
                requirement: "must not be negative",
            });
        }
        match usize::try_from(v) {
            Ok(u) if u <= max => Ok((u, line)),
            _ => {
                Err(Md5Error::TooLarge { at: self.at(line), what: expected, value: v.unsigned_abs(), max: max as u64 })
            }
        }
    }

    /// `keyword N`: a declared count.
    fn count(&mut self, kw: &'static str, max: usize) -> Result<(usize, u32), Md5Error> {
        self.keyword(kw)?;
        self.index(kw, max)
    }

    fn float(&mut self, expected: &'static str) -> Result<(f32, u32), Md5Error> {
        let (w, line) = self.word(expected)?;
        let v: f32 = w.parse().map_err(|_| Md5Error::BadNumber { at: self.at(line), expected })?;
        if v.is_finite() {
            Ok((v, line))
        } else {
            Err(Md5Error::NonFinite { at: self.at(line) })
        }
    }

    fn vec2(&mut self, expected: &'static str) -> Result<[f32; 2], Md5Error> {
        self.symbol(Tok::OpenParen, "'('")?;
        let (x, _) = self.float(expected)?;
        let (y, _) = self.float(expected)?;
        self.symbol(Tok::CloseParen, "')'")?;
        Ok([x, y])
    }

    fn vec3(&mut self, expected: &'static str) -> Result<(Vec3<f32>, u32), Md5Error> {
        let line = self.symbol(Tok::OpenParen, "'('")?;
        let (x, _) = self.float(expected)?;
        let (y, _) = self.float(expected)?;
        let (z, _) = self.float(expected)?;
        self.symbol(Tok::CloseParen, "')'")?;
        Ok((Vec3::new(x, y, z), line))
    }

    /// `( qx qy qz )` turned into a unit quaternion.
    fn quat(&mut self, what: &'static str) -> Result<Quat<f32>, Md5Error> {
        let (xyz, line) = self.vec3(what)?;
        quat_from_xyz(xyz).ok_or(Md5Error::InvalidValue {
            at: self.at(line),
            what,
            requirement: "has x² + y² + z² above 1",
        })
    }

    fn version(&mut self) -> Result<(), Md5Error> {
        self.keyword("MD5Version")?;
        let (v, line) = self.int("a version number")?;
        if v == MD5_VERSION {
            Ok(())
        } else {
            Err(Md5Error::UnsupportedVersion { at: self.at(line), version: v })
        }
    }

    fn end(&mut self) -> Result<(), Md5Error> {
        match self.lex.next()? {
            None => Ok(()),
            Some((tok, line)) => Err(self.unexpected(line, "the end of the input", tok)),
        }
    }

    /// `{ entry* }` with exactly `declared` entries; `entry` gets the entry's position and line.
    fn braced<T>(
        &mut self,
        what: &'static str,
        declared: usize,
        mut entry: impl FnMut(&mut Self, usize, u32) -> Result<T, Md5Error>,
    ) -> Result<Vec<T>, Md5Error> {
        self.keyword(what)?;
        self.symbol(Tok::OpenBrace, "'{'")?;
        let mut out = Vec::with_capacity(declared.min(PREALLOC_CAP));
        loop {
            let Some((tok, line)) = self.peek()? else {
                return Err(Md5Error::UnexpectedEnd { at: self.at(self.lex.line), expected: "'}'" });
            };
            if tok == Tok::CloseBrace {
                self.next("'}'")?;
                if out.len() != declared {
                    return Err(Md5Error::CountMismatch { at: self.at(line), what, declared, found: out.len() });
                }
                return Ok(out);
            }
            if out.len() == declared {
                return Err(Md5Error::CountMismatch {
                    at: self.at(line),
                    what,
                    declared,
                    found: declared.saturating_add(1),
                });
            }
            let index = out.len();
            out.push(entry(self, index, line)?);
        }
    }

    /// `keyword i …` entries, exactly `declared` of them, each numbered by its position; `entry`
    /// parses what follows the index and gets the entry's line.
    fn keyed<T>(
        &mut self,
        keyword: &'static str,
        declared: usize,
        mut entry: impl FnMut(&mut Self, u32) -> Result<T, Md5Error>,
    ) -> Result<Vec<T>, Md5Error> {
        let mut out = Vec::with_capacity(declared.min(PREALLOC_CAP));
        loop {
            match self.peek()? {
                Some((Tok::Word(w), _)) if w == keyword => {}
                Some((_, line)) => {
                    if out.len() != declared {
                        return Err(Md5Error::CountMismatch {
                            at: self.at(line),
                            what: keyword,
                            declared,
                            found: out.len(),
                        });
                    }
                    return Ok(out);
                }
                None => {
                    if out.len() != declared {
                        return Err(Md5Error::UnexpectedEnd { at: self.at(self.lex.line), expected: keyword });
                    }
                    return Ok(out);
                }
            }
            let line = self.keyword(keyword)?;
            let (index, _) = self.int("an entry index")?;
            if index != out.len() as i64 {
                return Err(Md5Error::EntryIndex {
                    at: self.at(line),
                    what: keyword,
                    expected: out.len(),
                    found: index,
                });
            }
            if out.len() == declared {
                return Err(Md5Error::CountMismatch {
                    at: self.at(line),
                    what: keyword,
                    declared,
                    found: declared.saturating_add(1),
                });
            }
            out.push(entry(self, line)?);
        }
    }
}

/// The unit quaternion with vector part `xyz` and `w = -sqrt(1 - |xyz|²)`, or `None` when
/// `|xyz|² > 1 + QUAT_XYZ_TOLERANCE`.
fn quat_from_xyz(xyz: Vec3<f32>) -> Option<Quat<f32>> {
    let s = xyz.x * xyz.x + xyz.y * xyz.y + xyz.z * xyz.z;
    if s.is_nan() || s > 1.0 + QUAT_XYZ_TOLERANCE {
        return None;
    }
    let w = -(1.0 - s).max(0.0).sqrt();
    Some(normalize_quat(Quat::new(xyz.x, xyz.y, xyz.z, w)))
}

/// `q / |q|` in full `f32` precision (identity for a zero quaternion).
fn normalize_quat(q: Quat<f32>) -> Quat<f32> {
    let l = (q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w).sqrt();
    if l > 0.0 && l.is_finite() {
        Quat::new(q.x / l, q.y / l, q.z / l, q.w / l)
    } else {
        Quat::IDENTITY
    }
}

// ---------------------------------------------------------------------------------------------
// Parsed files
// ---------------------------------------------------------------------------------------------

/// One joint of an `.md5mesh`, in model space (the bind pose).
#[derive(Debug, Clone, PartialEq)]
pub struct Md5Joint {
    /// Name as written.
    pub name: String,
    /// Parent joint index, always below this joint's index; `None` for a root.
    pub parent: Option<usize>,
    /// Model-space position.
    pub position: Vec3<f32>,
    /// Model-space orientation (unit, `w ≤ 0` as reconstructed).
    pub orientation: Quat<f32>,
}

/// One vertex of an md5 mesh.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Md5Vert {
    /// Texture coordinates.
    pub uv: [f32; 2],
    /// First weight (index into [`Md5MeshPart::weights`]).
    pub start_weight: usize,
    /// Number of weights, 1 to [`MAX_WEIGHTS_PER_VERTEX`]; the range lies within the weights.
    pub weight_count: usize,
}

/// One weight of an md5 mesh: a position in a joint's space and its bias.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Md5Weight {
    /// Joint index, below the mesh's joint count.
    pub joint: usize,
    /// Bias (the weight's share of the vertex).
    pub bias: f32,
    /// Position in the joint's bind space.
    pub position: Vec3<f32>,
}

/// One `mesh { }` block.
#[derive(Debug, Clone, PartialEq)]
pub struct Md5MeshPart {
    /// The shader (material) name as written.
    pub shader: String,
    /// Vertices.
    pub verts: Vec<Md5Vert>,
    /// Triangles as the file lists them (clockwise from the front); indices below `verts.len()`.
    pub tris: Vec<[u32; 3]>,
    /// Weights.
    pub weights: Vec<Md5Weight>,
}

/// A parsed and validated `.md5mesh` (see [`parse_mesh`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Md5Mesh {
    commandline: String,
    joints: Vec<Md5Joint>,
    meshes: Vec<Md5MeshPart>,
    num_joints_line: u32,
}

impl Md5Mesh {
    /// The `commandline` string.
    #[must_use]
    pub fn commandline(&self) -> &str {
        &self.commandline
    }
    /// The joints, parents before children.
    #[must_use]
    pub fn joints(&self) -> &[Md5Joint] {
        &self.joints
    }
    /// The mesh blocks in file order.
    #[must_use]
    pub fn meshes(&self) -> &[Md5MeshPart] {
        &self.meshes
    }
}

/// One `hierarchy` entry of an `.md5anim`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Md5AnimJoint {
    /// Name as written.
    pub name: String,
    /// Parent joint index, always below this joint's index; `None` for a root.
    pub parent: Option<usize>,
    /// Which components each frame animates: bits 0..=5 are Tx, Ty, Tz, Qx, Qy, Qz.
    pub flags: u8,
    /// Index of the first animated component in each frame.
    pub start_index: usize,
}

/// A parsed and validated `.md5anim` (see [`parse_anim`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Md5Anim {
    frame_rate: f32,
    animated_components: usize,
    joints: Vec<Md5AnimJoint>,
    bounds: Vec<[Vec3<f32>; 2]>,
    base_frame: Vec<[Vec3<f32>; 2]>,
    /// `frame_count × animated_components` numbers.
    frames: Vec<f32>,
    frame_count: usize,
    num_joints_line: u32,
    hierarchy_lines: Vec<u32>,
}

impl Md5Anim {
    /// Frames per second (finite, positive).
    #[must_use]
    pub fn frame_rate(&self) -> f32 {
        self.frame_rate
    }
    /// Number of frames (at least 1).
    #[must_use]
    pub fn frame_count(&self) -> usize {
        self.frame_count
    }
    /// Numbers per frame.
    #[must_use]
    pub fn animated_components(&self) -> usize {
        self.animated_components
    }
    /// The hierarchy, parents before children.
    #[must_use]
    pub fn joints(&self) -> &[Md5AnimJoint] {
        &self.joints
    }
    /// Per-frame bounding boxes `[min, max]`.
    #[must_use]
    pub fn bounds(&self) -> &[[Vec3<f32>; 2]] {
        &self.bounds
    }
    /// Per-joint base frame `[translation, quaternion xyz]`, parent-relative.
    #[must_use]
    pub fn base_frame(&self) -> &[[Vec3<f32>; 2]] {
        &self.base_frame
    }
    /// The animated components of frame `frame`, or `None` past the last frame.
    #[must_use]
    pub fn frame_components(&self, frame: usize) -> Option<&[f32]> {
        // With no animated components every frame's slice is empty; the count decides.
        if frame >= self.frame_count {
            return None;
        }
        let n = self.animated_components;
        self.frames.get(frame.checked_mul(n)?..frame.checked_add(1)?.checked_mul(n)?)
    }

    /// The local (parent-relative) transforms of every joint at frame `frame`: the base frame
    /// with the frame's animated components substituted by the flag bits, `w` reconstructed.
    /// `None` past the last frame.
    #[must_use]
    pub fn pose(&self, frame: usize) -> Option<Vec<Transform<f32>>> {
        let mut out = Vec::with_capacity(self.joints.len());
        self.pose_into(frame, &mut out).ok()?;
        Some(out)
    }

    /// Fills `out` with the pose of `frame`. `Err(None)` past the last frame, `Err(Some(j))` when
    /// joint `j`'s quaternion has `|xyz| > 1` (rejected by [`parse_anim`]).
    fn pose_into(&self, frame: usize, out: &mut Vec<Transform<f32>>) -> Result<(), Option<usize>> {
        out.clear();
        let comps = self.frame_components(frame).ok_or(None)?;
        for (j, (joint, base)) in self.joints.iter().zip(&self.base_frame).enumerate() {
            let mut v = [base[0].x, base[0].y, base[0].z, base[1].x, base[1].y, base[1].z];
            let mut k = joint.start_index;
            for (bit, slot) in v.iter_mut().enumerate() {
                if joint.flags & (1 << bit) != 0 {
                    *slot = *comps.get(k).ok_or(Some(j))?;
                    k += 1;
                }
            }
            let [tx, ty, tz, qx, qy, qz] = v;
            let rotation = quat_from_xyz(Vec3::new(qx, qy, qz)).ok_or(Some(j))?;
            out.push(Transform::new(Vec3::new(tx, ty, tz), rotation, Vec3::ONE));
        }
        Ok(())
    }
}

fn parent_index(p: &Parser<'_>, parent: i64, line: u32, index: usize) -> Result<Option<usize>, Md5Error> {
    if parent == -1 {
        return Ok(None);
    }
    match usize::try_from(parent) {
        Ok(u) if u < index => Ok(Some(u)),
        _ => Err(Md5Error::IndexOutOfRange { at: p.at(line), what: "joint parent", index: parent, limit: index }),
    }
}

/// Parses and validates an `.md5mesh`.
///
/// # Errors
///
/// [`Md5Error`] (located in [`Md5File::Mesh`]) when the text is not a well-formed `MD5Version 10`
/// mesh: a missing, misplaced or truncated section ([`Md5Error::UnexpectedToken`],
/// [`Md5Error::UnexpectedEnd`], [`Md5Error::UnterminatedString`]), another version, a count that
/// the entries do not match (`numJoints`, `numMeshes`, `numverts`, `numtris`, `numweights`), an
/// entry numbered out of order, a parent not below its joint, a weight joint at or above
/// `numJoints`, a vertex weight range outside the weights, a triangle index at or above
/// `numverts`, `countWeight` of 0, a negative weight bias, a vertex whose biases are all 0, a
/// quaternion with `|xyz| > 1`, a malformed or non-finite
/// number, or a count above [`MAX_JOINTS`] / [`MAX_WEIGHTS_PER_VERTEX`].
pub fn parse_mesh(text: &str) -> Result<Md5Mesh, Md5Error> {
    let mut p = Parser::new(text, Md5File::Mesh);
    p.version()?;
    p.keyword("commandline")?;
    let commandline = p.string("the command line string")?.to_owned();
    let (num_joints, num_joints_line) = p.count("numJoints", MAX_JOINTS)?;
    if num_joints == 0 {
        return Err(Md5Error::InvalidValue {
            at: p.at(num_joints_line),
            what: "numJoints",
            requirement: "must be at least 1",
        });
    }
    let (num_meshes, _) = p.count("numMeshes", usize::MAX)?;
    let mut joint_lines = Vec::with_capacity(num_joints.min(PREALLOC_CAP));
    let joints = p.braced("joints", num_joints, |p, index, line| {
        joint_lines.push(line);
        let name = p.string("a joint name or '}'")?.to_owned();
        let (parent, parent_line) = p.int("a parent index")?;
        let parent = parent_index(p, parent, parent_line, index)?;
        let (position, _) = p.vec3("a joint position")?;
        let orientation = p.quat("joint orientation")?;
        Ok(Md5Joint { name, parent, position, orientation })
    })?;
    for (j, &line) in joints.iter().zip(&joint_lines) {
        let (rest, inverse) = rest_and_inverse_bind(&joints, j);
        if !rest.is_finite() || !inverse.iter().all(|v| v.is_finite()) {
            return Err(Md5Error::InvalidValue {
                at: p.at(line),
                what: "joint",
                requirement: "has a bind transform that overflows f32",
            });
        }
    }
    let mut meshes = Vec::with_capacity(num_meshes.min(PREALLOC_CAP));
    loop {
        match p.peek()? {
            None => break,
            Some((Tok::Word("mesh"), line)) => {
                if meshes.len() == num_meshes {
                    return Err(Md5Error::CountMismatch {
                        at: p.at(line),
                        what: "numMeshes",
                        declared: num_meshes,
                        found: num_meshes.saturating_add(1),
                    });
                }
                meshes.push(parse_mesh_block(&mut p, &joints)?);
            }
            Some((tok, line)) => return Err(p.unexpected(line, "mesh", tok)),
        }
    }
    if meshes.len() != num_meshes {
        return Err(Md5Error::UnexpectedEnd { at: p.at(p.lex.line), expected: "mesh" });
    }
    p.end()?;
    Ok(Md5Mesh { commandline, joints, meshes, num_joints_line })
}

fn parse_mesh_block(p: &mut Parser<'_>, joints: &[Md5Joint]) -> Result<Md5MeshPart, Md5Error> {
    let num_joints = joints.len();
    p.keyword("mesh")?;
    p.symbol(Tok::OpenBrace, "'{'")?;
    p.keyword("shader")?;
    let shader = p.string("a shader name")?.to_owned();

    let (num_verts, _) = p.count("numverts", u32::MAX as usize)?;
    // (vert, line) pairs: weight ranges are checked once the weights are known.
    let verts = p.keyed("vert", num_verts, |p, line| {
        let uv = p.vec2("a texture coordinate")?;
        let (start_weight, _) = p.index("startWeight", usize::MAX)?;
        let (weight_count, count_line) = p.index("countWeight", MAX_WEIGHTS_PER_VERTEX)?;
        if weight_count == 0 {
            return Err(Md5Error::InvalidValue {
                at: p.at(count_line),
                what: "countWeight",
                requirement: "must be at least 1",
            });
        }
        Ok((Md5Vert { uv, start_weight, weight_count }, line))
    })?;

    let (num_tris, _) = p.count("numtris", usize::MAX)?;
    let vert_count = verts.len();
    let tris = p.keyed("tri", num_tris, |p, _| {
        let mut tri = [0u32; 3];
        for slot in &mut tri {
            let (i, line) = p.int("a vertex index")?;
            match usize::try_from(i) {
                Ok(u) if u < vert_count => *slot = u as u32,
                _ => {
                    return Err(Md5Error::IndexOutOfRange {
                        at: p.at(line),
                        what: "triangle vertex",
                        index: i,
                        limit: vert_count,
                    })
                }
            }
        }
        Ok(tri)
    })?;

    let (num_weights, _) = p.count("numweights", usize::MAX)?;
    let weights = p.keyed("weight", num_weights, |p, _| {
        let (j, line) = p.int("a joint index")?;
        let joint = match usize::try_from(j) {
            Ok(u) if u < num_joints => u,
            _ => {
                return Err(Md5Error::IndexOutOfRange {
                    at: p.at(line),
                    what: "weight joint",
                    index: j,
                    limit: num_joints,
                })
            }
        };
        let (bias, bias_line) = p.float("a weight bias")?;
        if bias < 0.0 {
            return Err(Md5Error::InvalidValue {
                at: p.at(bias_line),
                what: "weight bias",
                requirement: "must not be negative",
            });
        }
        let (position, _) = p.vec3("a weight position")?;
        Ok(Md5Weight { joint, bias, position })
    })?;
    p.symbol(Tok::CloseBrace, "'}'")?;

    let mut checked = Vec::with_capacity(verts.len());
    for (v, line) in verts {
        let last = v.start_weight.saturating_add(v.weight_count.saturating_sub(1));
        if last >= weights.len() {
            return Err(Md5Error::IndexOutOfRange {
                at: p.at(line),
                what: "vertex weight range",
                index: i64::try_from(last).unwrap_or(i64::MAX),
                limit: weights.len(),
            });
        }
        let range = weights.get(v.start_weight..=last).unwrap_or(&[]);
        if range.iter().all(|w| w.bias == 0.0) {
            return Err(Md5Error::InvalidValue {
                at: p.at(line),
                what: "vertex",
                requirement: "has weights whose biases are all 0 (it follows no joint)",
            });
        }
        if !bind_position(range, joints).is_some_and(Vec3::is_finite) {
            return Err(Md5Error::InvalidValue {
                at: p.at(line),
                what: "vertex",
                requirement: "has a bind position that overflows f32",
            });
        }
        checked.push(v);
    }
    Ok(Md5MeshPart { shader, verts: checked, tris, weights })
}

/// Parses and validates an `.md5anim`.
///
/// # Errors
///
/// [`Md5Error`] (located in [`Md5File::Anim`]) when the text is not a well-formed `MD5Version 10`
/// anim: missing, misplaced or truncated sections, another version, `numFrames` of 0, a
/// `frameRate` that is not positive, counts that the `hierarchy`, `bounds`, `baseframe`, `frame`
/// entries or a frame's numbers do not match, frames numbered out of order, a parent not below
/// its joint, flags above 63, `startIndex` plus the flagged components beyond
/// `numAnimatedComponents` ([`Md5Error::IndexOutOfRange`]), a quaternion with `|xyz| > 1` in the
/// base frame or any frame, a malformed or non-finite number, or `numJoints` above
/// [`MAX_JOINTS`] or `numJoints × numFrames` above [`MAX_JOINT_FRAMES`] ([`Md5Error::TooLarge`]).
pub fn parse_anim(text: &str) -> Result<Md5Anim, Md5Error> {
    let mut p = Parser::new(text, Md5File::Anim);
    p.version()?;
    p.keyword("commandline")?;
    p.string("the command line string")?;
    let (frame_count, frames_line) = p.count("numFrames", usize::MAX)?;
    if frame_count == 0 {
        return Err(Md5Error::InvalidValue {
            at: p.at(frames_line),
            what: "numFrames",
            requirement: "must be at least 1",
        });
    }
    let (num_joints, num_joints_line) = p.count("numJoints", MAX_JOINTS)?;
    let joint_frames = num_joints.saturating_mul(frame_count);
    if joint_frames > MAX_JOINT_FRAMES {
        return Err(Md5Error::TooLarge {
            at: p.at(num_joints_line),
            what: "numJoints × numFrames",
            value: joint_frames as u64,
            max: MAX_JOINT_FRAMES as u64,
        });
    }
    p.keyword("frameRate")?;
    let (frame_rate, rate_line) = p.float("a frame rate")?;
    if frame_rate <= 0.0 {
        return Err(Md5Error::InvalidValue { at: p.at(rate_line), what: "frameRate", requirement: "must be positive" });
    }
    if !((frame_count - 1) as f32 / frame_rate).is_finite() {
        return Err(Md5Error::InvalidValue {
            at: p.at(rate_line),
            what: "frameRate",
            requirement: "is too small: the last frame's time overflows f32",
        });
    }
    let (animated_components, _) = p.count("numAnimatedComponents", u32::MAX as usize)?;

    let mut hierarchy_lines = Vec::with_capacity(num_joints.min(PREALLOC_CAP));
    let joints = p.braced("hierarchy", num_joints, |p, index, line| {
        let name = p.string("a joint name or '}'")?.to_owned();
        let (parent, parent_line) = p.int("a parent index")?;
        let parent = parent_index(p, parent, parent_line, index)?;
        let (flags, flags_line) = p.int("joint flags")?;
        let flags = match u8::try_from(flags) {
            Ok(f) if f <= 63 => f,
            _ => {
                return Err(Md5Error::InvalidValue {
                    at: p.at(flags_line),
                    what: "joint flags",
                    requirement: "must be in 0..=63",
                })
            }
        };
        let (start_index, start_line) = p.index("startIndex", usize::MAX)?;
        let used = flags.count_ones() as usize;
        if used > 0 {
            let last = start_index.saturating_add(used - 1);
            if last >= animated_components {
                return Err(Md5Error::IndexOutOfRange {
                    at: p.at(start_line),
                    what: "animated component",
                    index: i64::try_from(last).unwrap_or(i64::MAX),
                    limit: animated_components,
                });
            }
        }
        hierarchy_lines.push(line);
        Ok(Md5AnimJoint { name, parent, flags, start_index })
    })?;

    let bounds = p.braced("bounds", frame_count, |p, _, _| {
        let (lo, _) = p.vec3("a bound")?;
        let (hi, _) = p.vec3("a bound")?;
        Ok([lo, hi])
    })?;

    let base_frame = p.braced("baseframe", num_joints, |p, _, _| {
        let (t, _) = p.vec3("a base translation")?;
        let (q, line) = p.vec3("a base orientation")?;
        if quat_from_xyz(q).is_none() {
            return Err(Md5Error::InvalidValue {
                at: p.at(line),
                what: "base orientation",
                requirement: "has x² + y² + z² above 1",
            });
        }
        Ok([t, q])
    })?;

    let mut frames: Vec<f32> = Vec::with_capacity(frame_count.saturating_mul(animated_components).min(PREALLOC_CAP));
    let frame_lines = p.keyed("frame", frame_count, |p, line| {
        p.symbol(Tok::OpenBrace, "'{'")?;
        let mut read = 0usize;
        loop {
            match p.peek()? {
                Some((Tok::CloseBrace, close_line)) => {
                    p.next("'}'")?;
                    if read != animated_components {
                        return Err(Md5Error::CountMismatch {
                            at: p.at(close_line),
                            what: "numAnimatedComponents",
                            declared: animated_components,
                            found: read,
                        });
                    }
                    return Ok(line);
                }
                Some((_, value_line)) if read == animated_components => {
                    return Err(Md5Error::CountMismatch {
                        at: p.at(value_line),
                        what: "numAnimatedComponents",
                        declared: animated_components,
                        found: read + 1,
                    });
                }
                _ => {
                    let (v, _) = p.float("a frame component or '}'")?;
                    frames.push(v);
                    read += 1;
                }
            }
        }
    })?;
    p.end()?;

    let anim = Md5Anim {
        frame_rate,
        animated_components,
        joints,
        bounds,
        base_frame,
        frames,
        frame_count,
        num_joints_line,
        hierarchy_lines,
    };
    let mut pose = Vec::with_capacity(anim.joints.len());
    for (frame, &line) in frame_lines.iter().enumerate() {
        if anim.pose_into(frame, &mut pose).is_err() {
            return Err(Md5Error::InvalidValue {
                at: p.at(line),
                what: "a frame orientation",
                requirement: "has x² + y² + z² above 1",
            });
        }
    }
    Ok(anim)
}

// ---------------------------------------------------------------------------------------------
// Conversion
// ---------------------------------------------------------------------------------------------

/// `name`, or a unique variant of it, recorded in `used`.
fn unique_name(base: &str, fallback: String, index: usize, used: &mut std::collections::HashSet<String>) -> String {
    let base = if base.is_empty() { fallback } else { base.to_owned() };
    if used.insert(base.clone()) {
        return base;
    }
    let mut n = index;
    loop {
        let candidate = format!("{base}#{n}");
        if used.insert(candidate.clone()) {
            return candidate;
        }
        n += 1;
    }
}

/// The file stem of a shader path written with `/` or `\` separators.
fn shader_stem(shader: &str) -> &str {
    let file = shader.rsplit(['/', '\\']).next().unwrap_or(shader);
    match file.rfind('.') {
        Some(dot) if dot > 0 => file.get(..dot).unwrap_or(file),
        _ => file,
    }
}

/// Joint `j`'s local rest transform (`parent_model⁻¹ × model`) and its inverse bind matrix.
fn rest_and_inverse_bind(joints: &[Md5Joint], j: &Md5Joint) -> (Transform<f32>, [f32; 16]) {
    let rest = match j.parent.and_then(|p| joints.get(p)) {
        Some(parent) => {
            let inv = parent.orientation.conjugate();
            Transform::new(inv.rotate(j.position - parent.position), normalize_quat(inv * j.orientation), Vec3::ONE)
        }
        None => Transform::new(j.position, j.orientation, Vec3::ONE),
    };
    let inv = j.orientation.conjugate();
    (rest, Mat4::from_trs(-inv.rotate(j.position), inv, Vec3::ONE).to_cols_array())
}

/// `Σ bias × (joint_position + joint_rotation.rotate(weight_position))`, or `None` when a
/// weight's joint is missing.
fn bind_position(weights: &[Md5Weight], joints: &[Md5Joint]) -> Option<Vec3<f32>> {
    let mut p = Vec3::ZERO;
    for w in weights {
        let joint = joints.get(w.joint)?;
        p += (joint.position + joint.orientation.rotate(w.position)) * w.bias;
    }
    Some(p)
}

fn check_hierarchy(mesh: &Md5Mesh, anim: &Md5Anim) -> Result<(), Md5Error> {
    let at = |line: u32| Location { file: Md5File::Anim, line };
    for (j, (mj, aj)) in mesh.joints.iter().zip(&anim.joints).enumerate() {
        if mj.name != aj.name || mj.parent != aj.parent {
            let line = anim.hierarchy_lines.get(j).copied().unwrap_or(anim.num_joints_line);
            return Err(Md5Error::HierarchyMismatch { at: at(line), joint: j });
        }
    }
    if mesh.joints.len() != anim.joints.len() {
        return Err(Md5Error::HierarchyMismatch {
            at: at(anim.num_joints_line),
            joint: mesh.joints.len().min(anim.joints.len()),
        });
    }
    Ok(())
}

fn build_primitive(
    part: &Md5MeshPart,
    joints: &[Md5Joint],
    color: [f32; 4],
    at: Location,
) -> Result<(RigPrimitive, usize, f32), Md5Error> {
    let influences = part.verts.iter().map(|v| v.weight_count).max().unwrap_or(0);
    let mut positions = Vec::with_capacity(part.verts.len());
    let mut joint_indices = Vec::with_capacity(part.verts.len().saturating_mul(influences));
    let mut joint_weights = Vec::with_capacity(part.verts.len().saturating_mul(influences));
    let mut off_sum = 0usize;
    let mut worst = 0.0f32;
    for v in &part.verts {
        let end = v.start_weight.saturating_add(v.weight_count);
        let weights = part.weights.get(v.start_weight..end).ok_or(Md5Error::IndexOutOfRange {
            at,
            what: "vertex weight range",
            index: i64::try_from(end).unwrap_or(i64::MAX),
            limit: part.weights.len(),
        })?;
        let p = bind_position(weights, joints).ok_or(Md5Error::IndexOutOfRange {
            at,
            what: "weight joint",
            index: i64::try_from(joints.len()).unwrap_or(i64::MAX),
            limit: joints.len(),
        })?;
        let mut sum = 0.0f32;
        for w in weights {
            sum += w.bias;
            let index = u16::try_from(w.joint).map_err(|_| Md5Error::TooLarge {
                at,
                what: "joint index",
                value: w.joint as u64,
                max: u64::from(u16::MAX),
            })?;
            joint_indices.push(index);
            joint_weights.push(w.bias);
        }
        for _ in weights.len()..influences {
            joint_indices.push(0);
            joint_weights.push(0.0);
        }
        let dev = (sum - 1.0).abs();
        if dev.is_nan() || dev > WEIGHT_SUM_TOLERANCE {
            off_sum += 1;
            worst = worst.max(dev);
        }
        positions.push(p.to_array());
    }

    // Doom 3 is clockwise-front; swap the last two corners for counter-clockwise.
    let mut indices = Vec::with_capacity(part.tris.len() * 3);
    let mut normals = vec![Vec3::<f32>::ZERO; positions.len()];
    for &[a, b, c] in &part.tris {
        let tri = [a, c, b];
        indices.extend_from_slice(&tri);
        let corner = |i: u32| positions.get(i as usize).map(|&p| Vec3::from_array(p));
        let (Some(p0), Some(p1), Some(p2)) = (corner(tri[0]), corner(tri[1]), corner(tri[2])) else {
            return Err(Md5Error::IndexOutOfRange {
                at,
                what: "triangle vertex",
                index: i64::from(a.max(b).max(c)),
                limit: positions.len(),
            });
        };
        // Twice the face's area along its normal: summing it weights faces by area.
        let n = (p1 - p0).cross(p2 - p0);
        for i in tri {
            if let Some(slot) = normals.get_mut(i as usize) {
                *slot += n;
            }
        }
    }
    let normals = normals
        .into_iter()
        .map(|n| {
            let l = n.length_squared().sqrt();
            if l > 0.0 && l.is_finite() {
                [n.x / l, n.y / l, n.z / l]
            } else {
                [0.0, 0.0, 1.0]
            }
        })
        .collect();

    let prim = RigPrimitive {
        positions,
        normals: Some(normals),
        tangents: None,
        influences,
        joint_indices,
        joint_weights,
        indices,
        color,
    };
    Ok((prim, off_sum, worst))
}

fn build_clip(name: &str, anim: &Md5Anim) -> RigClip {
    let joints = anim.joints.len();
    let frames = anim.frame_count;
    let times: Vec<f32> = (0..frames).map(|f| f as f32 / anim.frame_rate).collect();
    let mut translations: Vec<Vec<f32>> = (0..joints).map(|_| Vec::with_capacity(frames * 3)).collect();
    let mut rotations: Vec<Vec<f32>> = (0..joints).map(|_| Vec::with_capacity(frames * 4)).collect();
    let mut previous: Vec<Option<Quat<f32>>> = vec![None; joints];
    let mut pose = Vec::with_capacity(joints);
    for frame in 0..frames {
        // Frames were validated by `parse_anim`; a failure leaves the pose empty and no key.
        if anim.pose_into(frame, &mut pose).is_err() {
            pose.clear();
        }
        for (j, t) in pose.iter().enumerate() {
            let mut q = t.rotation;
            if let Some(Some(prev)) = previous.get(j) {
                if prev.dot(q) < 0.0 {
                    q = -q;
                }
            }
            if let Some(slot) = previous.get_mut(j) {
                *slot = Some(q);
            }
            if let Some(values) = translations.get_mut(j) {
                values.extend_from_slice(&t.translation.to_array());
            }
            if let Some(values) = rotations.get_mut(j) {
                values.extend_from_slice(&q.to_array());
            }
        }
    }
    let mut channels = Vec::with_capacity(joints * 2);
    for (j, (tv, rv)) in translations.into_iter().zip(rotations).enumerate() {
        channels.push(RigChannel {
            joint: j,
            target: ChannelTarget::Translation,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: tv,
        });
        channels.push(RigChannel {
            joint: j,
            target: ChannelTarget::Rotation,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: rv,
        });
    }
    RigClip { name: name.to_owned(), channels }
}

/// Builds a [`Rig`] named `name` from a parsed mesh and any number of parsed anims, each with its
/// clip name (see the module docs for the mapping).
///
/// # Errors
///
/// [`Md5Error::HierarchyMismatch`] when an anim's hierarchy differs from the mesh's joints in
/// count, a name or a parent (located at the anim's hierarchy entry or its `numJoints`).
pub fn to_rig(mesh: &Md5Mesh, anims: &[(&str, &Md5Anim)], name: &str) -> Result<Rig, Md5Error> {
    for (_, anim) in anims {
        check_hierarchy(mesh, anim)?;
    }
    let at = Location { file: Md5File::Mesh, line: mesh.num_joints_line };
    let mut notes = Vec::new();

    let mut used = std::collections::HashSet::new();
    let mut joints = Vec::with_capacity(mesh.joints.len());
    let mut inverse_bind = Vec::with_capacity(mesh.joints.len());
    let mut renamed = 0usize;
    for (i, j) in mesh.joints.iter().enumerate() {
        let joint_name = unique_name(&j.name, format!("joint{i}"), i, &mut used);
        if joint_name != j.name {
            renamed += 1;
        }
        let (rest, inverse) = rest_and_inverse_bind(&mesh.joints, j);
        joints.push(RigJoint { name: joint_name, parent: j.parent, rest });
        inverse_bind.push(inverse);
    }
    if renamed > 0 {
        notes.push(format!("md5: {renamed} empty or repeated joint names were made unique"));
    }
    let skins = vec![RigSkin { name: name.to_owned(), joints: (0..mesh.joints.len()).collect(), inverse_bind }];

    let mut meshes = Vec::with_capacity(mesh.meshes.len());
    let mut mesh_names = std::collections::HashSet::new();
    for (i, part) in mesh.meshes.iter().enumerate() {
        let color = PALETTE.get(i % PALETTE.len()).copied().unwrap_or([1.0; 4]);
        let (prim, off_sum, worst) = build_primitive(part, &mesh.joints, color, at)?;
        let mesh_name = unique_name(shader_stem(&part.shader), format!("mesh{i}"), i, &mut mesh_names);
        if off_sum > 0 {
            notes.push(format!(
                "md5: {off_sum} vertices of mesh {mesh_name} have weights whose sum is off 1 by up to {worst}; kept as is"
            ));
        }
        meshes.push(RigMesh { name: mesh_name, skin: Some(0), node: None, primitives: vec![prim] });
    }
    if mesh.meshes.iter().any(|m| !m.verts.is_empty()) {
        notes.push("md5: texture coordinates and shader names are not kept (mesh names come from shaders)".to_owned());
    }

    let mut clips = Vec::with_capacity(anims.len());
    let mut clip_names = std::collections::HashSet::new();
    for (i, (clip_name, anim)) in anims.iter().enumerate() {
        let clip_name = unique_name(clip_name, format!("clip{i}"), i, &mut clip_names);
        clips.push(build_clip(&clip_name, anim));
    }
    if !anims.is_empty() {
        notes.push("md5: anim bounds are not kept".to_owned());
    }

    Ok(Rig { name: name.to_owned(), joints, skins, meshes, clips, notes, meters_per_unit: Some(0.0254) })
}

/// Parses an `.md5mesh` text and optionally an `.md5anim` text into a [`Rig`] named `name`; the
/// anim's clip is named `name` too.
///
/// # Errors
///
/// Whatever [`parse_mesh`], [`parse_anim`] and [`to_rig`] return.
pub fn load(mesh_text: &str, anim_text: Option<&str>, name: &str) -> Result<Rig, Md5Error> {
    let mesh = parse_mesh(mesh_text)?;
    match anim_text {
        Some(text) => {
            let anim = parse_anim(text)?;
            to_rig(&mesh, &[(name, &anim)], name)
        }
        None => to_rig(&mesh, &[], name),
    }
}

fn read_text(path: &Path) -> Result<String, LoadError> {
    let bytes = std::fs::read(path).map_err(|source| LoadError::Io { path: path.to_owned(), source })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn stem(path: &Path, fallback: &str) -> String {
    path.file_stem().map_or_else(|| fallback.to_owned(), |s| s.to_string_lossy().into_owned())
}

/// Reads an `.md5mesh` and, when given, an `.md5anim` into a [`Rig`] named after the mesh's file
/// stem, with the clip named after the anim's file stem. No other file is looked for. Bytes that
/// are not UTF-8 (in names) are replaced, not rejected.
///
/// # Errors
///
/// [`LoadError::Io`] when a file cannot be read; [`LoadError::Md5`] (with the path of the file
/// at fault) for whatever [`parse_mesh`], [`parse_anim`] and [`to_rig`] reject.
pub fn load_files(mesh: &Path, anim: Option<&Path>) -> Result<Rig, LoadError> {
    let mesh_text = read_text(mesh)?;
    let parsed = parse_mesh(&mesh_text).map_err(|error| LoadError::Md5 { path: mesh.to_owned(), error })?;
    let name = stem(mesh, "md5");
    let Some(anim_path) = anim else {
        return to_rig(&parsed, &[], &name).map_err(|error| LoadError::Md5 { path: mesh.to_owned(), error });
    };
    let anim_text = read_text(anim_path)?;
    let parsed_anim = parse_anim(&anim_text).map_err(|error| LoadError::Md5 { path: anim_path.to_owned(), error })?;
    let clip = stem(anim_path, "clip");
    to_rig(&parsed, &[(&clip, &parsed_anim)], &name).map_err(|error| {
        let path = match error.location().file {
            Md5File::Mesh => mesh,
            Md5File::Anim => anim_path,
        };
        LoadError::Md5 { path: path.to_owned(), error }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOB_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets/md5/boblamp/");

    fn bob_paths() -> (PathBuf, PathBuf) {
        let dir = PathBuf::from(BOB_DIR);
        (dir.join("boblampclean.md5mesh"), dir.join("boblampclean.md5anim"))
    }

    fn bob_texts() -> (String, String) {
        let (m, a) = bob_paths();
        (std::fs::read_to_string(m).unwrap(), std::fs::read_to_string(a).unwrap())
    }

    fn bob() -> Rig {
        let (m, a) = bob_paths();
        load_files(&m, Some(&a)).unwrap()
    }

    /// A two-joint, one-triangle mesh. The child joint is rotated -90° about Z (x y z = 0 0
    /// 0.7071068, w negative); its weight puts vertex 2 at (0, 1, 0) like the root's weight does.
    const TINY_MESH: &str = r#"MD5Version 10 // header
commandline "test"

numJoints 2
numMeshes 1

joints {
	"root"	-1 ( 0 0 0 ) ( 0 0 0 )		//
	"child"	0 ( 0 0 1 ) ( 0 0 0.7071068 )		// root
}

mesh {
	shader "models\tiny/skin.tga"
	numverts 3
	vert 0 ( 0 0 ) 0 1
	vert 1 ( 1 0 ) 1 1
	vert 2 ( 0 1 ) 2 2

	numtris 1
	tri 0 0 2 1

	numweights 4
	weight 0 0 1 ( 0 0 0 )
	weight 1 0 1 ( 1 0 0 )
	weight 2 0 0.5 ( 0 1 0 )
	weight 3 1 0.5 ( -1 0 -1 )
}
"#;

    /// Three frames at 10 fps: the root's Tx and the child's Qx Qy Qz are animated.
    const TINY_ANIM: &str = r#"MD5Version 10
commandline ""

numFrames 3
numJoints 2
frameRate 10
numAnimatedComponents 4

hierarchy {
	"root"	-1 1 0	//
	"child"	0 56 1	// root
}

bounds {
	( 0 0 0 ) ( 1 1 1 )
	( 0 0 0 ) ( 1 1 1 )
	( 0 0 0 ) ( 1 1 1 )
}

baseframe {
	( 0 0 0 ) ( 0 0 0 )
	( 0 0 1 ) ( 0 0 0 )
}

frame 0 {
	0 0 0 0
}

frame 1 {
	2 0.9 0 0
}

frame 2 {
	2 -0.9 0 0
}
"#;

    fn mesh_err(text: &str) -> Md5Error {
        let e = parse_mesh(text).unwrap_err();
        assert_eq!(e.location().file, Md5File::Mesh);
        e
    }

    fn anim_err(text: &str) -> Md5Error {
        let e = parse_anim(text).unwrap_err();
        assert_eq!(e.location().file, Md5File::Anim);
        e
    }

    fn replace_once(text: &str, from: &str, to: &str) -> String {
        assert_eq!(text.matches(from).count(), 1, "{from:?} must occur once");
        text.replacen(from, to, 1)
    }

    fn model_matrices(rig: &Rig, locals: &[Transform<f32>]) -> Vec<Mat4<f32>> {
        let mut model: Vec<Mat4<f32>> = Vec::with_capacity(locals.len());
        for (j, t) in rig.joints.iter().zip(locals) {
            let m = t.to_mat4();
            model.push(match j.parent {
                Some(p) => model[p] * m,
                None => m,
            });
        }
        model
    }

    fn max_diff(a: &[f32; 16], b: &[f32; 16]) -> f32 {
        a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
    }

    // ---- Bob ------------------------------------------------------------------------------

    #[test]
    fn bob_counts() {
        let rig = bob();
        assert_rig_invariants(&rig);
        assert_eq!(rig.name, "boblampclean");
        assert_eq!(rig.joints.len(), 33);
        assert_eq!(rig.meshes.len(), 6);
        assert_eq!(rig.skins.len(), 1);
        assert_eq!(rig.skins[0].joints.len(), 33);
        assert_eq!(rig.skins[0].inverse_bind.len(), 33);
        let prims: Vec<&RigPrimitive> = rig.meshes.iter().map(|m| &m.primitives[0]).collect();
        assert!(rig.meshes.iter().all(|m| m.primitives.len() == 1 && m.skin == Some(0)));
        assert_eq!(prims.iter().map(|p| p.positions.len()).sum::<usize>(), 875);
        assert_eq!(prims.iter().map(|p| p.indices.len() / 3).sum::<usize>(), 1027);
        for p in &prims {
            assert_eq!(p.indices.len() % 3, 0);
            assert_eq!(p.joint_indices.len(), p.positions.len() * p.influences);
            assert_eq!(p.joint_weights.len(), p.positions.len() * p.influences);
            assert_eq!(p.normals.as_ref().unwrap().len(), p.positions.len());
            assert!(p.indices.iter().all(|&i| (i as usize) < p.positions.len()));
            assert!(p.joint_indices.iter().all(|&j| (j as usize) < 33));
        }
        let names: Vec<&str> = rig.meshes.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            ["guard1_body", "guard1_face", "guard1_helmet", "iron_grill", "round_grill", "guard1_body#5"]
        );
        let colors: std::collections::HashSet<[u32; 4]> = prims.iter().map(|p| p.color.map(f32::to_bits)).collect();
        assert_eq!(colors.len(), 6, "one color per mesh");
        assert_eq!(rig.joints[0].name, "origin");
        assert_eq!(rig.joints[0].parent, None);
        assert_eq!(rig.joints[32].name, "tiptoe.L");
        assert_eq!(rig.joints[32].parent, Some(31));

        assert_eq!(rig.clips.len(), 1);
        let clip = &rig.clips[0];
        assert_eq!(clip.name, "boblampclean");
        assert_eq!(clip.channels.len(), 66);
        for c in &clip.channels {
            assert_eq!(c.interpolation, Interpolation::Linear);
            assert_eq!(c.times.len(), 140);
            assert_eq!(c.values.len(), 140 * c.target.components());
            assert!(c.times.windows(2).all(|w| w[0] < w[1]));
        }
        let (t0, t1) = clip.time_range();
        assert_eq!(t0, 0.0);
        assert!((t1 - 139.0 / 24.0).abs() < 1e-6, "{t1}");

        let (m, a) = bob_texts();
        let anim = parse_anim(&a).unwrap();
        assert_eq!(anim.frame_count(), 140);
        assert_eq!(anim.frame_rate(), 24.0);
        assert_eq!(anim.animated_components(), 198);
        assert_eq!(anim.bounds().len(), 140);
        let mesh = parse_mesh(&m).unwrap();
        assert_eq!(mesh.commandline(), "");
        assert_eq!(mesh.meshes().iter().map(|p| p.weights.len()).sum::<usize>(), 867 + 220 + 80 + 18 + 38 + 135);
    }

    #[test]
    fn bob_weights_sum_to_one() {
        let rig = bob();
        let mut worst = 0.0f32;
        for p in rig.meshes.iter().map(|m| &m.primitives[0]) {
            for v in p.joint_weights.chunks(p.influences) {
                worst = worst.max((v.iter().sum::<f32>() - 1.0).abs());
            }
        }
        println!("bob: largest |Σ weights - 1| = {worst:e}");
        assert!(worst <= 1e-5, "{worst}");
        assert!(!rig.notes.iter().any(|n| n.contains("sum")), "{:?}", rig.notes);
    }

    #[test]
    fn bob_rest_pose_times_inverse_bind_is_identity() {
        let rig = bob();
        let rest: Vec<Transform<f32>> = rig.joints.iter().map(|j| j.rest).collect();
        let model = model_matrices(&rig, &rest);
        let identity = Mat4::<f32>::IDENTITY.to_cols_array();
        let mut worst = 0.0f32;
        for (m, ib) in model.iter().zip(&rig.skins[0].inverse_bind) {
            let palette = (*m * Mat4::from_cols_array(ib)).to_cols_array();
            worst = worst.max(max_diff(&palette, &identity));
        }
        println!("bob: largest |rest model × inverse bind - I| = {worst:e}");
        assert!(worst < 1e-4, "{worst}");
        // The rest chain reproduces the file's model-space joints.
        let mesh = parse_mesh(&bob_texts().0).unwrap();
        for (m, j) in model.iter().zip(mesh.joints()) {
            let d = (m.translation() - j.position).max_abs();
            assert!(d < 1e-4, "{d}");
        }
        // Skinning the bind positions with the rest palette gives them back.
        let mut worst_skin = 0.0f32;
        for p in rig.meshes.iter().map(|m| &m.primitives[0]) {
            for (vi, pos) in p.positions.iter().enumerate() {
                let bind = Vec3::from_array(*pos);
                let mut skinned = Vec3::ZERO;
                for k in 0..p.influences {
                    let j = p.joint_indices[vi * p.influences + k] as usize;
                    let palette = model[j] * Mat4::from_cols_array(&rig.skins[0].inverse_bind[j]);
                    skinned += palette.transform_point3(bind) * p.joint_weights[vi * p.influences + k];
                }
                worst_skin = worst_skin.max((skinned - bind).max_abs());
            }
        }
        println!("bob: largest |rest-skinned - bind position| = {worst_skin:e}");
        assert!(worst_skin < 1e-4, "{worst_skin}");
        for j in &rig.joints {
            assert!(j.rest.is_finite());
            assert!((j.rest.rotation.length_squared() - 1.0).abs() < 1e-5);
        }
    }

    /// Linear blend skinning of the rig's bind positions with `model × inverse bind` equals md5's
    /// own per-weight formula `Σ bias (joint_pos + joint_rot · weight_pos)` on every frame.
    #[test]
    fn bob_skinned_frames_match_md5_weights() {
        let (m, a) = bob_texts();
        let mesh = parse_mesh(&m).unwrap();
        let anim = parse_anim(&a).unwrap();
        let rig = to_rig(&mesh, &[("walk", &anim)], "bob").unwrap();
        let mut worst = 0.0f32;
        for frame in 0..anim.frame_count() {
            let pose = anim.pose(frame).unwrap();
            let model = model_matrices(&rig, &pose);
            assert!(model.iter().all(Mat4::is_finite));
            let palette: Vec<Mat4<f32>> =
                model.iter().zip(&rig.skins[0].inverse_bind).map(|(m, ib)| *m * Mat4::from_cols_array(ib)).collect();
            // World rotation of each joint, for md5's formula.
            let mut world_rot: Vec<Quat<f32>> = Vec::new();
            for (j, t) in rig.joints.iter().zip(&pose) {
                world_rot.push(match j.parent {
                    Some(p) => world_rot[p] * t.rotation,
                    None => t.rotation,
                });
            }
            for (part, rm) in mesh.meshes().iter().zip(&rig.meshes) {
                let prim = &rm.primitives[0];
                for (vi, v) in part.verts.iter().enumerate() {
                    let mut md5 = Vec3::ZERO;
                    for w in &part.weights[v.start_weight..v.start_weight + v.weight_count] {
                        md5 += (model[w.joint].translation() + world_rot[w.joint].rotate(w.position)) * w.bias;
                    }
                    let bind = Vec3::from_array(prim.positions[vi]);
                    let mut lbs = Vec3::ZERO;
                    for k in 0..prim.influences {
                        let j = prim.joint_indices[vi * prim.influences + k] as usize;
                        let w = prim.joint_weights[vi * prim.influences + k];
                        lbs += palette[j].transform_point3(bind) * w;
                    }
                    worst = worst.max((lbs - md5).max_abs());
                }
            }
        }
        println!("bob: largest |LBS - md5 weights| over 140 frames = {worst:e} (model is ~70 units tall)");
        assert!(worst < 1e-4, "{worst}");
    }

    #[test]
    fn bob_clip_keys_follow_the_anim() {
        let (m, a) = bob_texts();
        let mesh = parse_mesh(&m).unwrap();
        let anim = parse_anim(&a).unwrap();
        let rig = to_rig(&mesh, &[("idle", &anim)], "bob").unwrap();
        let clip = &rig.clips[0];
        assert_eq!(clip.name, "idle");
        for c in &clip.channels {
            let n = c.target.components();
            for (f, key) in c.values.chunks(n).enumerate() {
                let local = anim.pose(f).unwrap()[c.joint];
                match c.target {
                    ChannelTarget::Translation => {
                        assert_eq!(key, &local.translation.to_array());
                    }
                    ChannelTarget::Rotation => {
                        let q = Quat::from_array([key[0], key[1], key[2], key[3]]);
                        assert!((q.length_squared() - 1.0).abs() < 1e-5);
                        // Same rotation as the frame (possibly negated).
                        assert!((q.dot(local.rotation).abs() - 1.0).abs() < 1e-5);
                    }
                    ChannelTarget::Scale => panic!("md5 has no scale channel"),
                }
            }
            if c.target == ChannelTarget::Rotation {
                for w in c.values.chunks(4).collect::<Vec<_>>().windows(2) {
                    let d: f32 = w[0].iter().zip(w[1]).map(|(x, y)| x * y).sum();
                    assert!(d >= 0.0, "joint {} keys in opposite hemispheres", c.joint);
                }
            }
        }
        // Frame 0 of the root is the file's first frame line.
        let root_t = &clip.channels[0];
        assert_eq!(root_t.target, ChannelTarget::Translation);
        assert_eq!(&root_t.values[..3], &[-0.0, 0.016430, -0.006044]);
    }

    /// Counter-clockwise output winding: the enclosed signed volume `Σ p0 · (p1 × p2) / 6` is
    /// positive (outward-facing), and each vertex normal points the way its faces do.
    #[test]
    fn bob_winding_is_counter_clockwise() {
        let rig = bob();
        let mut total = 0.0f64;
        for m in &rig.meshes {
            let p = &m.primitives[0];
            let mut vol = 0.0f64;
            for t in p.indices.chunks(3) {
                let [a, b, c] = [t[0], t[1], t[2]].map(|i| Vec3::from_array(p.positions[i as usize]));
                vol += f64::from(a.dot(b.cross(c))) / 6.0;
            }
            println!("bob: mesh {} signed volume {vol:.1}", m.name);
            assert!(vol > 0.0, "mesh {} faces inward", m.name);
            total += vol;
        }
        assert!(total > 1000.0, "{total}");
        let body = &rig.meshes[0].primitives[0];
        let normals = body.normals.as_ref().unwrap();
        assert!(normals.iter().all(|n| (Vec3::from_array(*n).length() - 1.0).abs() < 1e-5));
    }

    // ---- Tiny files: exact values -----------------------------------------------------------

    #[test]
    fn tiny_mesh_positions_normals_and_winding() {
        let rig = load(TINY_MESH, None, "tiny").unwrap();
        assert_eq!(rig.name, "tiny");
        assert!(rig.clips.is_empty());
        assert_eq!(rig.meshes[0].name, "skin");
        let p = &rig.meshes[0].primitives[0];
        let expected = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        for (got, want) in p.positions.iter().zip(expected) {
            for k in 0..3 {
                assert!((got[k] - want[k]).abs() < 1e-6, "{got:?} vs {want:?}");
            }
        }
        // File `0 2 1` (clockwise from +Z) becomes `0 1 2` (counter-clockwise); normals +Z.
        assert_eq!(p.indices, [0, 1, 2]);
        for n in p.normals.as_ref().unwrap() {
            assert!((n[2] - 1.0).abs() < 1e-6 && n[0].abs() < 1e-6 && n[1].abs() < 1e-6, "{n:?}");
        }
        assert_eq!(p.influences, 2);
        assert_eq!(p.joint_indices, [0, 0, 0, 0, 0, 1]);
        assert_eq!(p.joint_weights, [1.0, 0.0, 1.0, 0.0, 0.5, 0.5]);
        // Child rest: model (0,0,1) with rotation -90° about Z under an identity root (w = -1).
        let child = rig.joints[1].rest;
        assert_eq!(child.translation, Vec3::new(0.0, 0.0, 1.0));
        let h = std::f32::consts::FRAC_1_SQRT_2;
        let expect = Quat::new(0.0, 0.0, h, -h);
        assert!((child.rotation.dot(expect).abs() - 1.0).abs() < 1e-6, "{:?}", child.rotation);
        assert!((child.rotation.rotate(Vec3::X) - Vec3::new(0.0, -1.0, 0.0)).max_abs() < 1e-6);
        // Inverse bind of the child maps its bind position to the origin.
        let ib = Mat4::from_cols_array(&rig.skins[0].inverse_bind[1]);
        assert!(ib.transform_point3(Vec3::new(0.0, 0.0, 1.0)).max_abs() < 1e-6);
    }

    #[test]
    fn tiny_anim_keys_and_hemisphere() {
        let rig = load(TINY_MESH, Some(TINY_ANIM), "tiny").unwrap();
        let clip = &rig.clips[0];
        assert_eq!(clip.name, "tiny");
        assert_eq!(clip.channels.len(), 4);
        let root_t = &clip.channels[0];
        assert_eq!((root_t.joint, root_t.target), (0, ChannelTarget::Translation));
        assert_eq!(root_t.times, [0.0, 0.1, 0.2]);
        assert_eq!(root_t.values, [0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
        let child_r = &clip.channels[3];
        assert_eq!((child_r.joint, child_r.target), (1, ChannelTarget::Rotation));
        let w = (1.0f32 - 0.81).sqrt();
        // Frame 0: xyz 0 gives w = -1. Frame 1: w negative. Frame 2's raw (-0.9, 0, 0, -w) has a
        // negative dot with frame 1, so it is stored negated.
        let expected = [0.0, 0.0, 0.0, -1.0, 0.9, 0.0, 0.0, -w, 0.9, 0.0, 0.0, w];
        for (got, want) in child_r.values.iter().zip(expected) {
            assert!((got - want).abs() < 1e-6, "{:?}", child_r.values);
        }
        let anim = parse_anim(TINY_ANIM).unwrap();
        assert_eq!(anim.frame_components(1), Some(&[2.0, 0.9, 0.0, 0.0][..]));
        assert_eq!(anim.frame_components(3), None);
        assert!(anim.pose(3).is_none());
        assert_eq!(anim.pose(2).unwrap()[1].rotation.x, -0.9);
    }

    #[test]
    fn tokenizer_handles_comments_strings_and_line_endings() {
        // `//` ends a word, CRLF line endings, and a commented-out bogus line.
        let text = TINY_MESH.replace('\n', "\r\n").replace("numJoints 2", "numJoints 2// two\r\n// numJoints 99");
        let rig = load(&text, None, "crlf").unwrap();
        assert_eq!(rig.joints.len(), 2);
        // Shader names keep backslashes verbatim.
        assert_eq!(parse_mesh(TINY_MESH).unwrap().meshes()[0].shader, "models\\tiny/skin.tga");
        // Line numbers count from 1 and follow comments.
        let bad = replace_once(TINY_MESH, "tri 0 0 2 1", "tri 0 0 2 x");
        assert_eq!(
            mesh_err(&bad),
            Md5Error::BadNumber { at: Location { file: Md5File::Mesh, line: 20 }, expected: "a vertex index" }
        );
        let msg = mesh_err(&bad).to_string();
        assert!(msg.starts_with("md5mesh line 20:"), "{msg}");
    }

    #[test]
    fn duplicate_names_are_made_unique() {
        let text = replace_once(TINY_MESH, "\"child\"", "\"root\"");
        let rig = load(&text, None, "dup").unwrap();
        assert_eq!(rig.joints[0].name, "root");
        assert_eq!(rig.joints[1].name, "root#1");
        assert!(rig.notes.iter().any(|n| n.contains("unique")));
        let text = replace_once(TINY_MESH, "weight 0 0 1 (", "weight 0 0 0.5 (");
        let rig = load(&text, None, "sum").unwrap();
        assert!(rig.notes.iter().any(|n| n.contains("1 vertices of mesh skin")), "{:?}", rig.notes);
    }

    // ---- Bad input --------------------------------------------------------------------------

    #[test]
    fn wrong_version() {
        let e = mesh_err(&replace_once(TINY_MESH, "MD5Version 10", "MD5Version 6"));
        assert!(matches!(e, Md5Error::UnsupportedVersion { version: 6, at: Location { line: 1, .. } }), "{e}");
        let e = anim_err(&replace_once(TINY_ANIM, "MD5Version 10", "MD5Version 11"));
        assert!(matches!(e, Md5Error::UnsupportedVersion { version: 11, .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "MD5Version 10", "MD5version 10"));
        assert!(matches!(e, Md5Error::UnexpectedToken { expected: "MD5Version", found: TokenKind::Word, .. }), "{e}");
    }

    #[test]
    fn count_mismatches() {
        let cases: [(&str, &str, &str, usize, usize); 7] = [
            ("numJoints 2", "numJoints 3", "joints", 3, 2),
            ("numJoints 2", "numJoints 1", "joints", 1, 2),
            ("numverts 3", "numverts 4", "vert", 4, 3),
            ("numverts 3", "numverts 2", "vert", 2, 3),
            ("numtris 1", "numtris 2", "tri", 2, 1),
            ("numweights 4", "numweights 5", "weight", 5, 4),
            ("numweights 4", "numweights 3", "weight", 3, 4),
        ];
        for (from, to, what, declared, found) in cases {
            let e = mesh_err(&replace_once(TINY_MESH, from, to));
            assert!(
                matches!(e, Md5Error::CountMismatch { what: w, declared: d, found: f, .. }
                    if w == what && d == declared && f == found),
                "{to}: {e}"
            );
        }
        let e = mesh_err(&replace_once(TINY_MESH, "numMeshes 1", "numMeshes 0"));
        assert!(matches!(e, Md5Error::CountMismatch { what: "numMeshes", declared: 0, found: 1, .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "numMeshes 1", "numMeshes 2"));
        assert!(matches!(e, Md5Error::UnexpectedEnd { expected: "mesh", .. }), "{e}");

        let e = anim_err(&replace_once(TINY_ANIM, "numFrames 3", "numFrames 2"));
        assert!(matches!(e, Md5Error::CountMismatch { what: "bounds", declared: 2, found: 3, .. }), "{e}");
        let e = anim_err(&replace_once(TINY_ANIM, "2 -0.9 0 0", "2 -0.9 0"));
        assert!(matches!(e, Md5Error::CountMismatch { what: "numAnimatedComponents", found: 3, .. }), "{e}");
        let e = anim_err(&replace_once(TINY_ANIM, "2 -0.9 0 0", "2 -0.9 0 0 0"));
        assert!(matches!(e, Md5Error::CountMismatch { what: "numAnimatedComponents", found: 5, .. }), "{e}");
        let e = anim_err(&replace_once(TINY_ANIM, "\t( 0 0 1 ) ( 0 0 0 )\n", ""));
        assert!(matches!(e, Md5Error::CountMismatch { what: "baseframe", declared: 2, found: 1, .. }), "{e}");
        let e = anim_err(&replace_once(
            TINY_ANIM,
            "frame 2 {\n\t2 -0.9 0 0\n}\n",
            "frame 2 {\n\t2 -0.9 0 0\n}\nframe 3 { 0 0 0 0 }\n",
        ));
        assert!(matches!(e, Md5Error::CountMismatch { what: "frame", declared: 3, found: 4, .. }), "{e}");
    }

    #[test]
    fn entries_out_of_order() {
        let e = mesh_err(&replace_once(TINY_MESH, "vert 1 ", "vert 5 "));
        assert!(matches!(e, Md5Error::EntryIndex { what: "vert", expected: 1, found: 5, .. }), "{e}");
        let e = anim_err(&replace_once(TINY_ANIM, "frame 1 {", "frame 2 {"));
        assert!(matches!(e, Md5Error::EntryIndex { what: "frame", expected: 1, found: 2, .. }), "{e}");
    }

    #[test]
    fn parent_out_of_range() {
        for parent in ["1", "2", "-2", "99999999999"] {
            let e = mesh_err(&replace_once(TINY_MESH, "\"child\"\t0", &format!("\"child\"\t{parent}")));
            assert!(matches!(e, Md5Error::IndexOutOfRange { what: "joint parent", limit: 1, .. }), "{e}");
            let e = anim_err(&replace_once(TINY_ANIM, "\"child\"\t0", &format!("\"child\"\t{parent}")));
            assert!(matches!(e, Md5Error::IndexOutOfRange { what: "joint parent", limit: 1, .. }), "{e}");
        }
    }

    #[test]
    fn indices_out_of_range() {
        let e = mesh_err(&replace_once(TINY_MESH, "weight 3 1 ", "weight 3 2 "));
        assert!(matches!(e, Md5Error::IndexOutOfRange { what: "weight joint", index: 2, limit: 2, .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "weight 3 1 ", "weight 3 -1 "));
        assert!(matches!(e, Md5Error::IndexOutOfRange { what: "weight joint", index: -1, .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "( 0 1 ) 2 2", "( 0 1 ) 2 3"));
        assert!(
            matches!(
                e,
                Md5Error::IndexOutOfRange {
                    what: "vertex weight range",
                    index: 4,
                    limit: 4,
                    at: Location { line: 17, .. }
                }
            ),
            "{e}"
        );
        let e = mesh_err(&replace_once(TINY_MESH, "( 0 1 ) 2 2", "( 0 1 ) 18446744073 2"));
        assert!(matches!(e, Md5Error::IndexOutOfRange { what: "vertex weight range", .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "tri 0 0 2 1", "tri 0 0 3 1"));
        assert!(matches!(e, Md5Error::IndexOutOfRange { what: "triangle vertex", index: 3, limit: 3, .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "( 0 1 ) 2 2", "( 0 1 ) 2 0"));
        assert!(matches!(e, Md5Error::InvalidValue { what: "countWeight", .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "( 0 1 ) 2 2", "( 0 1 ) 2 33"));
        assert!(matches!(e, Md5Error::TooLarge { what: "countWeight", value: 33, max: 32, .. }), "{e}");
        // Negative biases and vertices whose biases are all 0.
        let e = mesh_err(&replace_once(TINY_MESH, "weight 3 1 0.5", "weight 3 1 -0.5"));
        assert!(matches!(e, Md5Error::InvalidValue { what: "weight bias", at: Location { line: 26, .. }, .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "weight 1 0 1 ", "weight 1 0 0 "));
        assert!(matches!(e, Md5Error::InvalidValue { what: "vertex", at: Location { line: 16, .. }, .. }), "{e}");
        // startIndex + flagged components beyond numAnimatedComponents.
        let e = anim_err(&replace_once(TINY_ANIM, "0 56 1", "0 56 2"));
        assert!(matches!(e, Md5Error::IndexOutOfRange { what: "animated component", index: 4, limit: 4, .. }), "{e}");
        let e = anim_err(&replace_once(TINY_ANIM, "0 56 1", "0 63 1"));
        assert!(matches!(e, Md5Error::IndexOutOfRange { what: "animated component", index: 6, .. }), "{e}");
        let e = anim_err(&replace_once(TINY_ANIM, "0 56 1", "0 64 1"));
        assert!(matches!(e, Md5Error::InvalidValue { what: "joint flags", .. }), "{e}");
        // No flags: nothing is read, any start is fine.
        let anim = parse_anim(&replace_once(TINY_ANIM, "-1 1 0", "-1 0 77")).unwrap();
        assert_eq!(anim.pose(1).unwrap()[0].translation, Vec3::ZERO);
    }

    #[test]
    fn non_finite_and_malformed_numbers() {
        for bad in ["nan", "NaN", "inf", "-infinity", "1e39"] {
            let e = mesh_err(&replace_once(TINY_MESH, "( 1 0 0 )", &format!("( {bad} 0 0 )")));
            assert!(matches!(e, Md5Error::NonFinite { at: Location { line: 24, .. } }), "{bad}: {e}");
            let e = anim_err(&replace_once(TINY_ANIM, "2 0.9 0 0", &format!("2 0.9 {bad} 0")));
            assert!(matches!(e, Md5Error::NonFinite { .. }), "{bad}: {e}");
        }
        let e = anim_err(&replace_once(TINY_ANIM, "frameRate 10", "frameRate nan"));
        assert!(matches!(e, Md5Error::NonFinite { .. }), "{e}");
        let e = anim_err(&replace_once(TINY_ANIM, "frameRate 10", "frameRate 0"));
        assert!(matches!(e, Md5Error::InvalidValue { what: "frameRate", .. }), "{e}");
        let e = anim_err(&replace_once(TINY_ANIM, "frameRate 10", "frameRate 1e-45"));
        assert!(matches!(e, Md5Error::InvalidValue { what: "frameRate", at: Location { line: 6, .. }, .. }), "{e}");
        // Finite numbers whose bind transform or position overflows f32.
        let e = mesh_err(
            &replace_once(TINY_MESH, "0 ( 0 0 1 )", "0 ( 0 0 3e38 )").replace("-1 ( 0 0 0 )", "-1 ( 0 0 -3e38 )"),
        );
        assert!(matches!(e, Md5Error::InvalidValue { what: "joint", at: Location { line: 9, .. }, .. }), "{e}");
        let e = mesh_err(
            &replace_once(TINY_MESH, "weight 2 0 0.5 ( 0 1 0 )", "weight 2 0 1 ( 0 3e38 0 )")
                .replace("weight 3 1 0.5 ( -1 0 -1 )", "weight 3 0 1 ( 0 3e38 0 )"),
        );
        assert!(matches!(e, Md5Error::InvalidValue { what: "vertex", at: Location { line: 17, .. }, .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "( 1 0 0 )", "( 1x 0 0 )"));
        assert!(matches!(e, Md5Error::BadNumber { expected: "a weight position", .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "numverts 3", "numverts 3.0"));
        assert!(matches!(e, Md5Error::BadNumber { expected: "numverts", .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "numverts 3", "numverts -3"));
        assert!(matches!(e, Md5Error::InvalidValue { what: "numverts", .. }), "{e}");
        // Quaternion x y z longer than 1.
        let e = mesh_err(&replace_once(TINY_MESH, "( 0 0 0.7071068 )", "( 0 0.8 0.7071068 )"));
        assert!(
            matches!(e, Md5Error::InvalidValue { what: "joint orientation", at: Location { line: 9, .. }, .. }),
            "{e}"
        );
        let e = anim_err(&replace_once(TINY_ANIM, "2 0.9 0 0", "2 0.9 0.9 0"));
        assert!(
            matches!(e, Md5Error::InvalidValue { what: "a frame orientation", at: Location { line: 29, .. }, .. }),
            "{e}"
        );
    }

    #[test]
    fn unexpected_tokens_and_strings() {
        let e = mesh_err(&replace_once(TINY_MESH, "joints {", "joints ("));
        assert!(matches!(e, Md5Error::UnexpectedToken { found: TokenKind::OpenParen, .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "\"child\"", "child"));
        assert!(matches!(e, Md5Error::UnexpectedToken { found: TokenKind::Word, .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "commandline \"test\"", "commandline \"test"));
        assert!(matches!(e, Md5Error::UnterminatedString { at: Location { line: 2, .. } }), "{e}");
        let e = mesh_err(&format!("{TINY_MESH}\nextra"));
        assert!(matches!(e, Md5Error::UnexpectedToken { expected: "mesh", .. }), "{e}");
        let e = anim_err(&format!("{TINY_ANIM}\n}}"));
        assert!(matches!(e, Md5Error::UnexpectedToken { expected: "the end of the input", .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "numJoints 2", "numJoints 0"));
        assert!(matches!(e, Md5Error::InvalidValue { what: "numJoints", .. }), "{e}");
        let e = anim_err(&replace_once(TINY_ANIM, "numFrames 3", "numFrames 0"));
        assert!(matches!(e, Md5Error::InvalidValue { what: "numFrames", .. }), "{e}");
    }

    #[test]
    fn hierarchy_mismatch() {
        let mesh = parse_mesh(TINY_MESH).unwrap();
        let renamed = parse_anim(&replace_once(TINY_ANIM, "\"child\"", "\"kid\"")).unwrap();
        let e = to_rig(&mesh, &[("a", &renamed)], "x").unwrap_err();
        assert!(
            matches!(e, Md5Error::HierarchyMismatch { joint: 1, at: Location { file: Md5File::Anim, line: 11 } }),
            "{e}"
        );
        let reparented = parse_anim(&replace_once(TINY_ANIM, "\"child\"\t0 56 1", "\"child\"\t-1 56 1")).unwrap();
        let e = load(TINY_MESH, Some(&replace_once(TINY_ANIM, "\"child\"\t0 56 1", "\"child\"\t-1 56 1")), "x")
            .unwrap_err();
        assert!(matches!(e, Md5Error::HierarchyMismatch { joint: 1, .. }), "{e}");
        assert!(to_rig(&mesh, &[("a", &reparented)], "x").is_err());
        // One joint fewer in the anim.
        let short = TINY_ANIM
            .replace("numJoints 2", "numJoints 1")
            .replace("\t\"child\"\t0 56 1\t// root\n", "")
            .replace("\t( 0 0 1 ) ( 0 0 0 )\n", "");
        let short = parse_anim(&short).unwrap();
        let e = to_rig(&mesh, &[("a", &short)], "x").unwrap_err();
        assert!(
            matches!(e, Md5Error::HierarchyMismatch { joint: 1, at: Location { file: Md5File::Anim, line: 5 } }),
            "{e}"
        );
        // Bob's mesh with the tiny anim.
        let bob_mesh = parse_mesh(&bob_texts().0).unwrap();
        let tiny = parse_anim(TINY_ANIM).unwrap();
        assert!(matches!(to_rig(&bob_mesh, &[("a", &tiny)], "x"), Err(Md5Error::HierarchyMismatch { joint: 0, .. })));
    }

    #[test]
    fn truncated_files() {
        // Cut after whole lines: every proper prefix of both tiny files is an unexpected end.
        for (text, parse) in [
            (TINY_MESH, (|t: &str| parse_mesh(t).map(|_| ())) as fn(&str) -> Result<(), Md5Error>),
            (TINY_ANIM, |t: &str| parse_anim(t).map(|_| ())),
        ] {
            let lines: Vec<&str> = text.lines().collect();
            let mut cut_points = 0;
            for n in 0..lines.len() {
                let prefix = lines[..n].join("\n");
                // Prefixes that end after the last closing brace are complete.
                if prefix.trim_end().len() == text.trim_end().len() {
                    continue;
                }
                let e = parse(&prefix).unwrap_err();
                assert!(matches!(e, Md5Error::UnexpectedEnd { .. }), "{n} lines: {e}");
                cut_points += 1;
            }
            assert!(cut_points > 20);
        }
        // Bob cut at several points: inside joints, a vert list, a weight list, frames.
        let (m, a) = bob_texts();
        for line in [3, 20, 100, 700, 1500, 3000, 3300] {
            let prefix: String = m.lines().take(line).collect::<Vec<_>>().join("\n");
            let e = parse_mesh(&prefix).unwrap_err();
            assert!(matches!(e, Md5Error::UnexpectedEnd { .. }), "mesh {line}: {e}");
        }
        for line in [4, 30, 100, 200, 500, 1500] {
            let prefix: String = a.lines().take(line).collect::<Vec<_>>().join("\n");
            let e = parse_anim(&prefix).unwrap_err();
            assert!(matches!(e, Md5Error::UnexpectedEnd { .. }), "anim {line}: {e}");
        }
        // Byte-level cuts never panic and never succeed.
        for cut in 0..TINY_MESH.trim_end().len() - 1 {
            assert!(load(&TINY_MESH[..cut], None, "t").is_err(), "{cut}");
        }
        for cut in 0..TINY_ANIM.trim_end().len() - 1 {
            assert!(load(TINY_MESH, Some(&TINY_ANIM[..cut]), "t").is_err(), "{cut}");
        }
        for cut in (0..m.len()).step_by(997) {
            assert!(parse_mesh(&m[..cut]).is_err());
        }
        for cut in (0..a.len()).step_by(997) {
            assert!(parse_anim(&a[..cut]).is_err());
        }
    }

    #[test]
    fn hostile_counts_do_not_allocate() {
        // Huge declared counts with almost no entries fail on the mismatch, not on allocation.
        let e = mesh_err(&replace_once(TINY_MESH, "numverts 3", "numverts 4294967295"));
        assert!(matches!(e, Md5Error::CountMismatch { declared: 4294967295, found: 3, .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "numverts 3", "numverts 4294967296"));
        assert!(matches!(e, Md5Error::TooLarge { what: "numverts", .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "numweights 4", "numweights 9223372036854775807"));
        assert!(matches!(e, Md5Error::CountMismatch { .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "numMeshes 1", "numMeshes 9223372036854775807"));
        assert!(matches!(e, Md5Error::UnexpectedEnd { .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "numJoints 2", "numJoints 65536"));
        assert!(matches!(e, Md5Error::CountMismatch { what: "joints", declared: 65536, found: 2, .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "numJoints 2", "numJoints 65537"));
        assert!(matches!(e, Md5Error::TooLarge { what: "numJoints", .. }), "{e}");
        let e = mesh_err(&replace_once(TINY_MESH, "numverts 3", "numverts 99999999999999999999"));
        assert!(matches!(e, Md5Error::BadNumber { .. }), "{e}");
        let e = anim_err(&replace_once(TINY_ANIM, "numFrames 3", "numFrames 2000000"));
        assert!(matches!(e, Md5Error::TooLarge { what: "numJoints × numFrames", .. }), "{e}");
        let e = anim_err(&replace_once(TINY_ANIM, "numAnimatedComponents 4", "numAnimatedComponents 4294967295"));
        assert!(matches!(e, Md5Error::CountMismatch { what: "numAnimatedComponents", found: 4, .. }), "{e}");
    }

    /// The invariants [`Rig`] documents: finite data, indices in range, sorted key times.
    fn assert_rig_invariants(rig: &Rig) {
        for (i, j) in rig.joints.iter().enumerate() {
            assert!(j.rest.is_finite());
            assert!(j.parent.is_none_or(|p| p < i));
        }
        for skin in &rig.skins {
            assert!(skin.inverse_bind.iter().flatten().all(|v| v.is_finite()));
            assert!(skin.joints.iter().all(|&j| j < rig.joints.len()));
        }
        for p in rig.meshes.iter().flat_map(|m| &m.primitives) {
            assert!(p.positions.iter().flatten().all(|v| v.is_finite()));
            assert!(p.normals.iter().flatten().flatten().all(|v| v.is_finite()));
            assert!(p.indices.iter().all(|&i| (i as usize) < p.positions.len()));
            assert!(p.joint_indices.iter().all(|&j| (j as usize) < rig.joints.len()));
            assert!(p.joint_weights.iter().all(|v| v.is_finite()));
            assert_eq!(p.joint_indices.len(), p.positions.len() * p.influences);
        }
        for c in rig.clips.iter().flat_map(|c| &c.channels) {
            assert!(c.times.iter().all(|t| t.is_finite()));
            assert!(c.times.windows(2).all(|w| w[0] < w[1]));
            assert!(c.values.iter().all(|v| v.is_finite()));
            assert_eq!(c.values.len(), c.times.len() * c.target.components());
        }
    }

    /// Random byte substitutions, insertions and deletions in the tiny files and in Bob: loading
    /// never panics, and whatever loads keeps the rig's invariants.
    #[test]
    fn mutated_inputs_never_panic() {
        const BYTES: &[u8] = b"0123456789-+.e ()\"{}\n/xnaif\t";
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let (bob_mesh, bob_anim) = bob_texts();
        let (mut ok, mut err) = (0, 0);
        for round in 0..4400 {
            let (mesh, anim) = if round < 4000 { (TINY_MESH, TINY_ANIM) } else { (&bob_mesh[..], &bob_anim[..]) };
            let (mut mesh, mut anim) = (mesh.as_bytes().to_vec(), anim.as_bytes().to_vec());
            let target = if round % 2 == 0 { &mut mesh } else { &mut anim };
            for _ in 0..1 + rand(3) {
                let at = rand(target.len());
                let b = BYTES[rand(BYTES.len())];
                match rand(3) {
                    0 => target[at] = b,
                    1 => target.insert(at, b),
                    _ => {
                        target.remove(at);
                    }
                }
            }
            let (mesh, anim) = (String::from_utf8(mesh).unwrap(), String::from_utf8(anim).unwrap());
            match load(&mesh, Some(&anim), "fuzz") {
                Ok(rig) => {
                    ok += 1;
                    assert_rig_invariants(&rig);
                }
                Err(e) => {
                    err += 1;
                    assert!(!e.to_string().is_empty());
                }
            }
        }
        println!("mutations: {ok} loaded, {err} rejected");
        assert!(ok > 0 && err > 0);
    }

    #[test]
    fn load_files_errors_name_the_file() {
        let (m, _) = bob_paths();
        let missing = PathBuf::from(BOB_DIR).join("missing.md5anim");
        let e = load_files(&m, Some(&missing)).unwrap_err();
        assert!(matches!(&e, LoadError::Io { path, .. } if path == &missing), "{e}");
        assert!(std::error::Error::source(&e).is_some());
        // A mesh with an anim of another skeleton: the error names the anim.
        let dir = std::env::temp_dir().join(format!("sinew-md5-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let anim = dir.join("tiny.md5anim");
        std::fs::write(&anim, TINY_ANIM).unwrap();
        let e = load_files(&m, Some(&anim)).unwrap_err();
        assert!(
            matches!(&e, LoadError::Md5 { path, error: Md5Error::HierarchyMismatch { .. } } if path == &anim),
            "{e}"
        );
        let mesh = dir.join("tiny.md5mesh");
        std::fs::write(&mesh, TINY_MESH).unwrap();
        let rig = load_files(&mesh, Some(&anim)).unwrap();
        assert_eq!((rig.name.as_str(), rig.clips[0].name.as_str()), ("tiny", "tiny"));
        let rig = load_files(&mesh, None).unwrap();
        assert!(rig.clips.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
