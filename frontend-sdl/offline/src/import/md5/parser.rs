//! Parser primitives shared by the `.md5mesh` and `.md5anim` grammars: keywords, strings, integers
//! and finite floats, `( x y z )` vectors, quaternions stored as `x y z` (with `w` rebuilt), the
//! version line, `{ }` blocks of a declared count and `keyword i …` entries numbered in order.

use sinew::math::{Quat, Vec3};

use super::error::{Location, Md5Error, Md5File};
use super::lexer::{Lexer, Tok};
use super::limits::{MD5_VERSION, PREALLOC_CAP};

/// How far above 1 a quaternion's `x² + y² + z²` may be (rounding of 6-decimal files).
const QUAT_XYZ_TOLERANCE: f32 = 1e-3;

/// The grammar's building blocks over a [`Lexer`]: keywords, numbers, vectors, quaternions,
/// counted blocks and numbered entries, each failing with an [`Md5Error`] at its line.
pub(super) struct Parser<'a> {
    pub(super) lex: Lexer<'a>,
}

impl<'a> Parser<'a> {
    /// A parser at the start of `src`, the text of `file`.
    pub(super) fn new(src: &'a str, file: Md5File) -> Self {
        Parser { lex: Lexer::new(src, file) }
    }

    /// `line` of the file being parsed.
    pub(super) fn at(&self, line: u32) -> Location {
        self.lex.at(line)
    }

    /// The next token and its line without consuming it; `None` at the end.
    pub(super) fn peek(&self) -> Result<Option<(Tok<'a>, u32)>, Md5Error> {
        let mut copy = self.lex;
        copy.next()
    }

    /// The next token and its line; [`Md5Error::UnexpectedEnd`] naming `expected` at the end.
    pub(super) fn next(&mut self, expected: &'static str) -> Result<(Tok<'a>, u32), Md5Error> {
        match self.lex.next()? {
            Some(t) => Ok(t),
            None => Err(Md5Error::UnexpectedEnd { at: self.at(self.lex.line), expected }),
        }
    }

    /// [`Md5Error::UnexpectedToken`]: `tok` at `line` where `expected` was due.
    pub(super) fn unexpected(&self, line: u32, expected: &'static str, tok: Tok<'_>) -> Md5Error {
        Md5Error::UnexpectedToken { at: self.at(line), expected, found: tok.kind() }
    }

    /// The word `kw`; returns its line.
    pub(super) fn keyword(&mut self, kw: &'static str) -> Result<u32, Md5Error> {
        match self.next(kw)? {
            (Tok::Word(w), line) if w == kw => Ok(line),
            (tok, line) => Err(self.unexpected(line, kw, tok)),
        }
    }

    /// The token `want` (a parenthesis or brace); returns its line.
    pub(super) fn symbol(&mut self, want: Tok<'static>, expected: &'static str) -> Result<u32, Md5Error> {
        let (tok, line) = self.next(expected)?;
        if tok == want {
            Ok(line)
        } else {
            Err(self.unexpected(line, expected, tok))
        }
    }

    /// A quoted string's body.
    pub(super) fn string(&mut self, expected: &'static str) -> Result<&'a str, Md5Error> {
        match self.next(expected)? {
            (Tok::Str(s), _) => Ok(s),
            (tok, line) => Err(self.unexpected(line, expected, tok)),
        }
    }

    /// A bare word and its line.
    fn word(&mut self, expected: &'static str) -> Result<(&'a str, u32), Md5Error> {
        match self.next(expected)? {
            (Tok::Word(w), line) => Ok((w, line)),
            (tok, line) => Err(self.unexpected(line, expected, tok)),
        }
    }

    /// An integer and its line.
    pub(super) fn int(&mut self, expected: &'static str) -> Result<(i64, u32), Md5Error> {
        let (w, line) = self.word(expected)?;
        match w.parse::<i64>() {
            Ok(v) => Ok((v, line)),
            Err(_) => Err(Md5Error::BadNumber { at: self.at(line), expected }),
        }
    }

    /// A non-negative integer no larger than `max`.
    pub(super) fn index(&mut self, expected: &'static str, max: usize) -> Result<(usize, u32), Md5Error> {
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
    pub(super) fn count(&mut self, kw: &'static str, max: usize) -> Result<(usize, u32), Md5Error> {
        self.keyword(kw)?;
        self.index(kw, max)
    }

    /// A finite `f32` and its line.
    pub(super) fn float(&mut self, expected: &'static str) -> Result<(f32, u32), Md5Error> {
        let (w, line) = self.word(expected)?;
        let v: f32 = w.parse().map_err(|_| Md5Error::BadNumber { at: self.at(line), expected })?;
        if v.is_finite() {
            Ok((v, line))
        } else {
            Err(Md5Error::NonFinite { at: self.at(line) })
        }
    }

    /// `( x y )`.
    pub(super) fn vec2(&mut self, expected: &'static str) -> Result<[f32; 2], Md5Error> {
        self.symbol(Tok::OpenParen, "'('")?;
        let (x, _) = self.float(expected)?;
        let (y, _) = self.float(expected)?;
        self.symbol(Tok::CloseParen, "')'")?;
        Ok([x, y])
    }

    /// `( x y z )` and the line of its `(`.
    pub(super) fn vec3(&mut self, expected: &'static str) -> Result<(Vec3<f32>, u32), Md5Error> {
        let line = self.symbol(Tok::OpenParen, "'('")?;
        let (x, _) = self.float(expected)?;
        let (y, _) = self.float(expected)?;
        let (z, _) = self.float(expected)?;
        self.symbol(Tok::CloseParen, "')'")?;
        Ok((Vec3::new(x, y, z), line))
    }

    /// `( qx qy qz )` turned into a unit quaternion.
    pub(super) fn quat(&mut self, what: &'static str) -> Result<Quat<f32>, Md5Error> {
        let (xyz, line) = self.vec3(what)?;
        quat_from_xyz(xyz).ok_or(Md5Error::InvalidValue {
            at: self.at(line),
            what,
            requirement: "has x² + y² + z² above 1",
        })
    }

    /// `MD5Version 10`.
    pub(super) fn version(&mut self) -> Result<(), Md5Error> {
        self.keyword("MD5Version")?;
        let (v, line) = self.int("a version number")?;
        if v == MD5_VERSION {
            Ok(())
        } else {
            Err(Md5Error::UnsupportedVersion { at: self.at(line), version: v })
        }
    }

    /// The end of the input: nothing may follow the last section.
    pub(super) fn end(&mut self) -> Result<(), Md5Error> {
        match self.lex.next()? {
            None => Ok(()),
            Some((tok, line)) => Err(self.unexpected(line, "the end of the input", tok)),
        }
    }

    /// `{ entry* }` with exactly `declared` entries; `entry` gets the entry's position and line.
    pub(super) fn braced<T>(
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
    pub(super) fn keyed<T>(
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
pub(super) fn quat_from_xyz(xyz: Vec3<f32>) -> Option<Quat<f32>> {
    let s = xyz.x * xyz.x + xyz.y * xyz.y + xyz.z * xyz.z;
    if s.is_nan() || s > 1.0 + QUAT_XYZ_TOLERANCE {
        return None;
    }
    let w = -(1.0 - s).max(0.0).sqrt();
    Some(normalize_quat(Quat::new(xyz.x, xyz.y, xyz.z, w)))
}

/// `q / |q|` in full `f32` precision (identity for a zero quaternion).
pub(super) fn normalize_quat(q: Quat<f32>) -> Quat<f32> {
    let l = (q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w).sqrt();
    if l > 0.0 && l.is_finite() {
        Quat::new(q.x / l, q.y / l, q.z / l, q.w / l)
    } else {
        Quat::IDENTITY
    }
}

/// A joint's parent index: `-1` for a root, else an index below the joint's own `index`.
pub(super) fn parent_index(p: &Parser<'_>, parent: i64, line: u32, index: usize) -> Result<Option<usize>, Md5Error> {
    if parent == -1 {
        return Ok(None);
    }
    match usize::try_from(parent) {
        Ok(u) if u < index => Ok(Some(u)),
        _ => Err(Md5Error::IndexOutOfRange { at: p.at(line), what: "joint parent", index: parent, limit: index }),
    }
}
