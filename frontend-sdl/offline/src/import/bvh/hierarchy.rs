//! The `HIERARCHY` section: joints, End Sites, offsets and channel lists, read without
//! recursion (an explicit stack of open joints) so nesting depth costs no call stack.

use super::error::{shown, BvhErrorKind};
use super::lexer::{Lexer, Word};
use super::{MAX_CHANNELS_PER_JOINT, MAX_JOINTS};

/// An axis of a channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    pub(super) fn index(self) -> usize {
        match self {
            Axis::X => 0,
            Axis::Y => 1,
            Axis::Z => 2,
        }
    }
}

/// One channel of a joint: a position or a rotation (in degrees) about one axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Channel {
    Position(Axis),
    Rotation(Axis),
}

impl Channel {
    /// The channel a `CHANNELS` word names (ASCII case ignored).
    fn parse(word: &str) -> Option<Channel> {
        let table = [
            ("Xposition", Channel::Position(Axis::X)),
            ("Yposition", Channel::Position(Axis::Y)),
            ("Zposition", Channel::Position(Axis::Z)),
            ("Xrotation", Channel::Rotation(Axis::X)),
            ("Yrotation", Channel::Rotation(Axis::Y)),
            ("Zrotation", Channel::Rotation(Axis::Z)),
        ];
        table.iter().find(|(n, _)| n.eq_ignore_ascii_case(word)).map(|e| e.1)
    }
}

/// A joint or an End Site, in file order (parents first).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Node {
    /// The name as written (`None` for an End Site).
    pub(super) name: Option<String>,
    pub(super) parent: Option<usize>,
    /// OFFSET, in file units.
    pub(super) offset: [f64; 3],
    /// The line of the OFFSET keyword.
    pub(super) offset_line: u32,
    /// Channels in the order their values come in each frame (none for an End Site).
    pub(super) channels: Vec<Channel>,
}

/// Where an error is and what it is.
pub(super) type Failure = (u32, BvhErrorKind);

fn unexpected(w: Word<'_>, expected: &'static str) -> Failure {
    (w.line, BvhErrorKind::UnexpectedToken { expected, found: shown(w.text) })
}

/// A finite `f64` from a word.
pub(super) fn number(w: Word<'_>, what: &'static str) -> Result<f64, Failure> {
    let v: f64 = w.text.parse().map_err(|_| (w.line, BvhErrorKind::BadNumber { what, found: shown(w.text) }))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err((w.line, BvhErrorKind::NonFinite { what }))
    }
}

/// A non-negative integer count from a word.
pub(super) fn count(w: Word<'_>, what: &'static str) -> Result<u64, Failure> {
    w.text.parse::<u64>().map_err(|_| (w.line, BvhErrorKind::BadNumber { what, found: shown(w.text) }))
}

/// A joint whose `{` is open.
struct Open {
    node: usize,
    brace_line: u32,
    end_site: bool,
    has_offset: bool,
    has_channels: bool,
    /// Whether a child was read (OFFSET and CHANNELS must come before children).
    has_children: bool,
}

/// Reads `HIERARCHY` and its joints up to (not including) `MOTION`.
pub(super) fn parse_hierarchy(lex: &mut Lexer<'_>) -> Result<Vec<Node>, Failure> {
    lex.keyword("HIERARCHY")?;
    let mut nodes: Vec<Node> = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    loop {
        let Some(w) = lex.peek() else {
            let expected = if stack.is_empty() && !nodes.is_empty() { "MOTION" } else { "ROOT" };
            return match stack.last() {
                Some(open) => Err(unclosed(&nodes, open, lex.line())),
                None => Err((lex.line(), BvhErrorKind::UnexpectedEnd { expected })),
            };
        };
        let Some(top) = stack.last_mut() else {
            // Between roots: another ROOT, or MOTION (after at least one root).
            if w.text.eq_ignore_ascii_case("MOTION") && !nodes.is_empty() {
                return Ok(nodes);
            }
            if !w.text.eq_ignore_ascii_case("ROOT") {
                let expected = if nodes.is_empty() { "ROOT" } else { "ROOT or MOTION" };
                return Err(unexpected(w, expected));
            }
            lex.next();
            stack.push(open_joint(lex, &mut nodes, None, w)?);
            continue;
        };
        if w.text.eq_ignore_ascii_case("MOTION") {
            return Err(unclosed(&nodes, top, w.line));
        }
        lex.next();
        let parent = top.node;
        if w.text == "}" {
            if !top.has_offset {
                return Err(unexpected(w, "OFFSET"));
            }
            stack.pop();
            continue;
        }
        if w.text.eq_ignore_ascii_case("OFFSET") {
            if top.has_offset || top.has_children {
                return Err(unexpected(w, if top.end_site { "'}'" } else { "JOINT, End Site or '}'" }));
            }
            top.has_offset = true;
            let mut offset = [0.0; 3];
            for v in &mut offset {
                *v = number(lex.expect("an OFFSET value")?, "an OFFSET value")?;
            }
            if let Some(n) = nodes.get_mut(parent) {
                n.offset = offset;
                n.offset_line = w.line;
            }
            continue;
        }
        if top.end_site {
            return Err(unexpected(w, if top.has_offset { "'}' closing the End Site" } else { "OFFSET" }));
        }
        if w.text.eq_ignore_ascii_case("CHANNELS") {
            if top.has_channels || top.has_children {
                return Err(unexpected(w, "JOINT, End Site or '}'"));
            }
            top.has_channels = true;
            let channels = parse_channels(lex)?;
            if let Some(n) = nodes.get_mut(parent) {
                n.channels = channels;
            }
            continue;
        }
        let end_site = w.text.eq_ignore_ascii_case("End");
        if !(end_site || w.text.eq_ignore_ascii_case("JOINT")) {
            let expected = if !top.has_offset {
                "OFFSET"
            } else if top.has_channels || top.has_children {
                "JOINT, End Site or '}'"
            } else {
                "CHANNELS, JOINT, End Site or '}'"
            };
            return Err(unexpected(w, expected));
        }
        if !top.has_offset {
            return Err(unexpected(w, "OFFSET"));
        }
        top.has_children = true;
        let child = if end_site {
            lex.keyword("Site")?;
            open_end_site(lex, &mut nodes, parent, w.line)?
        } else {
            open_joint(lex, &mut nodes, Some(parent), w)?
        };
        stack.push(child);
    }
}

fn unclosed(nodes: &[Node], open: &Open, line: u32) -> Failure {
    let joint = nodes.get(open.node).and_then(|n| n.name.clone()).unwrap_or_else(|| "End Site".to_owned());
    (line, BvhErrorKind::UnclosedJoint { joint: shown(&joint), opened: open.brace_line })
}

/// Adds a node, checking the joint cap.
fn push_node(nodes: &mut Vec<Node>, node: Node, line: u32) -> Result<usize, Failure> {
    if nodes.len() >= MAX_JOINTS {
        return Err((line, BvhErrorKind::TooManyJoints { max: MAX_JOINTS }));
    }
    nodes.push(node);
    Ok(nodes.len() - 1)
}

/// After `ROOT`/`JOINT` (`keyword`): the name (the rest of its line) and `{`.
fn open_joint(
    lex: &mut Lexer<'_>,
    nodes: &mut Vec<Node>,
    parent: Option<usize>,
    keyword: Word<'_>,
) -> Result<Open, Failure> {
    let Some(name) = lex.rest_of_line_name() else {
        return match lex.peek() {
            Some(w) if w.line == keyword.line => Err(unexpected(w, "a joint name")),
            _ => Err((keyword.line, BvhErrorKind::UnexpectedEnd { expected: "a joint name on its line" })),
        };
    };
    let brace = lex.next();
    let brace_line = match brace {
        Some(w) if w.text == "{" => w.line,
        Some(w) => return Err((w.line, BvhErrorKind::MissingOpenBrace { joint: shown(&name) })),
        None => return Err((lex.line(), BvhErrorKind::MissingOpenBrace { joint: shown(&name) })),
    };
    let node = push_node(
        nodes,
        Node { name: Some(name), parent, offset: [0.0; 3], offset_line: 0, channels: Vec::new() },
        keyword.line,
    )?;
    Ok(Open { node, brace_line, end_site: false, has_offset: false, has_channels: false, has_children: false })
}

/// After `End Site`: `{`.
fn open_end_site(lex: &mut Lexer<'_>, nodes: &mut Vec<Node>, parent: usize, line: u32) -> Result<Open, Failure> {
    let brace_line = match lex.next() {
        Some(w) if w.text == "{" => w.line,
        Some(w) => return Err((w.line, BvhErrorKind::MissingOpenBrace { joint: "End Site".to_owned() })),
        None => return Err((lex.line(), BvhErrorKind::MissingOpenBrace { joint: "End Site".to_owned() })),
    };
    let node = push_node(
        nodes,
        Node { name: None, parent: Some(parent), offset: [0.0; 3], offset_line: 0, channels: Vec::new() },
        line,
    )?;
    Ok(Open { node, brace_line, end_site: true, has_offset: false, has_channels: false, has_children: false })
}

/// After `CHANNELS`: the count and as many channel names.
fn parse_channels(lex: &mut Lexer<'_>) -> Result<Vec<Channel>, Failure> {
    let w = lex.expect("the CHANNELS count")?;
    let declared = count(w, "the CHANNELS count")?;
    if declared > MAX_CHANNELS_PER_JOINT as u64 {
        return Err((
            w.line,
            BvhErrorKind::TooLarge { what: "CHANNELS", value: declared, max: MAX_CHANNELS_PER_JOINT as u64 },
        ));
    }
    let declared = declared as usize;
    let mut channels = Vec::with_capacity(declared);
    while channels.len() < declared {
        let Some(w) = lex.peek() else {
            return Err((lex.line(), BvhErrorKind::UnexpectedEnd { expected: "a channel name" }));
        };
        match Channel::parse(w.text) {
            Some(c) => {
                lex.next();
                channels.push(c);
            }
            None if is_structure(w.text) => {
                return Err((w.line, BvhErrorKind::ChannelCountMismatch { declared, found: channels.len() }));
            }
            None => return Err((w.line, BvhErrorKind::UnknownChannel { found: shown(w.text) })),
        }
    }
    // More channel names than declared.
    let mut found = declared;
    let mut first_extra = None;
    while let Some(w) = lex.peek() {
        if Channel::parse(w.text).is_none() {
            break;
        }
        first_extra.get_or_insert(w.line);
        found += 1;
        lex.next();
        if found > MAX_CHANNELS_PER_JOINT * 4 {
            break;
        }
    }
    match first_extra {
        Some(line) => Err((line, BvhErrorKind::ChannelCountMismatch { declared, found })),
        None => Ok(channels),
    }
}

/// Words that end a channel list: braces and the hierarchy's keywords.
fn is_structure(word: &str) -> bool {
    word == "{"
        || word == "}"
        || ["JOINT", "End", "OFFSET", "CHANNELS", "ROOT", "MOTION"].iter().any(|k| k.eq_ignore_ascii_case(word))
}
