//! Lines and words of a BVH text.
//!
//! A line ends at `\n`, `\r\n` or a lone `\r`. Words are runs of characters other than
//! whitespace and braces; `{` and `}` are words of their own wherever they stand. Lines are
//! read one at a time as words are asked for, so nothing is allocated per line.

use super::error::{shown, BvhErrorKind};

/// One word and its 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Word<'a> {
    pub(super) text: &'a str,
    pub(super) line: u32,
}

/// Splits `text` at its first line break: the line and what follows the break.
fn split_line(text: &str) -> (&str, &str) {
    match text.find(['\n', '\r']) {
        Some(i) => {
            let rest = &text[i..];
            let skip = if rest.starts_with("\r\n") { 2 } else { 1 };
            (&text[..i], &rest[skip..])
        }
        None => (text, ""),
    }
}

/// The lines of a text from a given line number on, for the frame data.
pub(super) struct Lines<'a> {
    rest: &'a str,
    next_line: u32,
    done: bool,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (u32, &'a str);
    fn next(&mut self) -> Option<(u32, &'a str)> {
        if self.done {
            return None;
        }
        if self.rest.is_empty() {
            self.done = true;
            return None;
        }
        let (line, rest) = split_line(self.rest);
        self.rest = rest;
        let n = self.next_line;
        self.next_line = self.next_line.saturating_add(1);
        Some((n, line))
    }
}

/// Words over a text, line by line.
pub(super) struct Lexer<'a> {
    /// The current line's part not yet split into words.
    cur: &'a str,
    /// What follows the current line.
    rest: &'a str,
    /// The current line's number.
    line: u32,
    /// Whether `rest` still holds lines (a text ending in a line break has no line after it).
    more: bool,
    peeked: Option<Word<'a>>,
}

impl<'a> Lexer<'a> {
    /// A lexer at the first word of `text` (a leading byte-order mark is skipped).
    pub(super) fn new(text: &'a str) -> Self {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let (cur, rest) = split_line(text);
        Lexer { cur, rest, line: 1, more: !rest.is_empty(), peeked: None }
    }

    /// The line of the last word read (or the last line, at the end of the input).
    pub(super) fn line(&self) -> u32 {
        self.line
    }

    fn advance_line(&mut self) -> bool {
        if !self.more {
            return false;
        }
        let (cur, rest) = split_line(self.rest);
        self.cur = cur;
        self.rest = rest;
        self.more = !rest.is_empty();
        self.line = self.line.saturating_add(1);
        true
    }

    /// The next word on the current line, without moving to the next line.
    fn word_on_line(&mut self) -> Option<Word<'a>> {
        let s = self.cur.trim_start();
        if s.is_empty() {
            self.cur = s;
            return None;
        }
        let end = if s.starts_with(['{', '}']) {
            1
        } else {
            s.find(|c: char| c.is_whitespace() || c == '{' || c == '}').unwrap_or(s.len())
        };
        self.cur = &s[end..];
        Some(Word { text: &s[..end], line: self.line })
    }

    /// The next word, on this line or a later one.
    pub(super) fn next(&mut self) -> Option<Word<'a>> {
        if let Some(w) = self.peeked.take() {
            return Some(w);
        }
        loop {
            if let Some(w) = self.word_on_line() {
                return Some(w);
            }
            if !self.advance_line() {
                return None;
            }
        }
    }

    /// The next word without consuming it.
    pub(super) fn peek(&mut self) -> Option<Word<'a>> {
        if self.peeked.is_none() {
            self.peeked = self.next();
        }
        self.peeked
    }

    /// The next word, or [`BvhErrorKind::UnexpectedEnd`] at the last line.
    pub(super) fn expect(&mut self, expected: &'static str) -> Result<Word<'a>, (u32, BvhErrorKind)> {
        self.next().ok_or((self.line, BvhErrorKind::UnexpectedEnd { expected }))
    }

    /// The next word, which must be `keyword` (ASCII case ignored).
    pub(super) fn keyword(&mut self, keyword: &'static str) -> Result<Word<'a>, (u32, BvhErrorKind)> {
        let w = self.expect(keyword)?;
        if w.text.eq_ignore_ascii_case(keyword) {
            Ok(w)
        } else {
            Err((w.line, BvhErrorKind::UnexpectedToken { expected: keyword, found: shown(w.text) }))
        }
    }

    /// The words left on the current line up to a `{` (not consumed), joined by single spaces;
    /// `None` when a word was peeked (the line is then already past) or none is left.
    pub(super) fn rest_of_line_name(&mut self) -> Option<String> {
        if self.peeked.is_some() {
            return None;
        }
        let mut parts: Vec<&str> = Vec::new();
        loop {
            let before = self.cur;
            match self.word_on_line() {
                Some(w) if w.text == "{" || w.text == "}" => {
                    self.cur = before;
                    break;
                }
                Some(w) => parts.push(w.text),
                None => break,
            }
        }
        (!parts.is_empty()).then(|| parts.join(" "))
    }

    /// Whether the current line has words left (a peeked word counts).
    pub(super) fn line_has_more(&mut self) -> bool {
        if let Some(w) = self.peeked {
            return w.line == self.line;
        }
        !self.cur.trim().is_empty()
    }

    /// The lines after the current one, numbered.
    pub(super) fn into_lines(self) -> Lines<'a> {
        Lines { rest: self.rest, next_line: self.line.saturating_add(1), done: !self.more }
    }
}
