//! The tokenizer of both md5 files: words, double-quoted strings (no escapes, on one line),
//! parentheses and braces, with whitespace and `//` comments skipped and lines counted.

use super::error::{Location, Md5Error, Md5File, TokenKind};

/// A token: a word, a quoted string's body, or a parenthesis or brace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Tok<'a> {
    Word(&'a str),
    Str(&'a str),
    OpenParen,
    CloseParen,
    OpenBrace,
    CloseBrace,
}

impl Tok<'_> {
    /// The kind of this token, as errors name it.
    pub(super) fn kind(self) -> TokenKind {
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
pub(super) struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    /// The 1-based line of the cursor.
    pub(super) line: u32,
    file: Md5File,
}

fn is_delimiter(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b'(' | b')' | b'{' | b'}' | b'"')
}

impl<'a> Lexer<'a> {
    /// A cursor at the start of `src`, the text of `file`.
    pub(super) fn new(src: &'a str, file: Md5File) -> Self {
        Lexer { src, pos: 0, line: 1, file }
    }

    /// `line` of this lexer's file.
    pub(super) fn at(&self, line: u32) -> Location {
        Location { file: self.file, line }
    }

    /// The text between two byte offsets that sit on ASCII delimiters (or the ends), so they are
    /// always char boundaries; an impossible miss yields "".
    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.src.get(start..end).unwrap_or("")
    }

    /// The next token and its line, or `None` at the end of the input.
    pub(super) fn next(&mut self) -> Result<Option<(Tok<'a>, u32)>, Md5Error> {
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
