//! The `MOTION` section: `Frames:`, `Frame Time:` and one line of channel values per frame,
//! turned into key values as they are read (nothing is reserved from the declared count).

use super::error::{shown, BvhErrorKind};
use super::hierarchy::{count, number, Axis, Channel, Failure, Node};
use super::lexer::{Lexer, Word};
use super::MAX_JOINT_FRAMES;
use crate::eval::quat_mul;

/// The keys of the frames read: times, and per node its translation keys (nodes with position
/// channels) and rotation keys (nodes with rotation channels).
#[derive(Debug, Default)]
pub(super) struct Motion {
    /// `i × Frame Time` for frame `i`, in seconds.
    pub(super) times: Vec<f32>,
    /// Per node: `x y z` per frame, in meters; empty without position channels.
    pub(super) translations: Vec<Vec<f32>>,
    /// Per node: `x y z w` per frame; empty without rotation channels.
    pub(super) rotations: Vec<Vec<f32>>,
    /// Whether any node has channels (without, the frames hold nothing).
    pub(super) any_channels: bool,
}

/// A quaternion `[x, y, z, w]` in `f64`.
type Q = [f64; 4];

/// The rotation by `degrees` about `axis`.
pub(super) fn axis_rotation(axis: Axis, degrees: f64) -> Q {
    let half = degrees.to_radians() * 0.5;
    let (s, c) = half.sin_cos();
    let mut q = [0.0, 0.0, 0.0, c];
    if let Some(v) = q.get_mut(axis.index()) {
        *v = s;
    }
    q
}

/// The value word of `Frames: n` or `Frame Time: t`: after the label's last word, or glued to it
/// (`Frames:12`).
fn labeled<'a>(lex: &mut Lexer<'a>, words: &[&'static str], expected: &'static str) -> Result<Word<'a>, Failure> {
    let (last, firsts) = words.split_last().ok_or((lex.line(), BvhErrorKind::UnexpectedEnd { expected }))?;
    for w in firsts {
        lex.keyword(w)?;
    }
    let w = lex.expect(last)?;
    let glued = match w.text.get(..last.len()) {
        Some(label) if label.eq_ignore_ascii_case(last) => w.text.get(last.len()..),
        _ => None,
    };
    match glued {
        Some("") => lex.expect(expected),
        Some(value) => Ok(Word { text: value, line: w.line }),
        None => Err((w.line, BvhErrorKind::UnexpectedToken { expected: last, found: shown(w.text) })),
    }
}

/// Reads `MOTION` to the end of the text. Positions are multiplied by `scale` (meters per file
/// unit); the position channels of a joint replace the components of its OFFSET they name.
pub(super) fn parse_motion(mut lex: Lexer<'_>, nodes: &[Node], scale: f64) -> Result<Motion, Failure> {
    lex.keyword("MOTION")?;
    let frames_word = labeled(&mut lex, &["Frames:"], "the Frames count")?;
    let declared = count(frames_word, "the Frames count")?;
    let time_word = labeled(&mut lex, &["Frame", "Time:"], "the Frame Time")?;
    let frame_time = number(time_word, "the Frame Time")?;
    if frame_time <= 0.0 {
        return Err((time_word.line, BvhErrorKind::InvalidFrameTime { value: frame_time }));
    }
    if lex.line_has_more() {
        let line = lex.line();
        let found = lex.next().map(|w| shown(w.text)).unwrap_or_default();
        return Err((line, BvhErrorKind::UnexpectedToken { expected: "the end of the Frame Time line", found }));
    }

    let expected: usize = nodes.iter().map(|n| n.channels.len()).sum();
    let animated = nodes.iter().filter(|n| !n.channels.is_empty()).count() as u64;
    let joint_frames = animated.saturating_mul(declared);
    if joint_frames > MAX_JOINT_FRAMES {
        return Err((
            frames_word.line,
            BvhErrorKind::TooLarge { what: "Frames × animated joints", value: joint_frames, max: MAX_JOINT_FRAMES },
        ));
    }
    let mut motion = Motion {
        translations: vec![Vec::new(); nodes.len()],
        rotations: vec![Vec::new(); nodes.len()],
        any_channels: expected > 0,
        ..Motion::default()
    };
    let mut previous: Vec<Option<Q>> = vec![None; nodes.len()];
    let mut last_line = time_word.line;
    let mut frame = 0usize;
    for (line, text) in lex.into_lines() {
        last_line = line;
        let mut values = text.split_whitespace();
        let Some(first) = values.next() else { continue };
        if expected == 0 {
            let found = 1 + values.count();
            return Err((line, BvhErrorKind::TooManyValues { frame, expected, found }));
        }
        if frame as u64 >= declared {
            return Err((line, BvhErrorKind::FrameCountMismatch { declared, found: declared + 1 }));
        }
        let time = (frame as f64 * frame_time) as f32;
        if !time.is_finite() {
            return Err((line, BvhErrorKind::NonFinite { what: "a key time (frame × Frame Time)" }));
        }
        if motion.times.last().is_some_and(|&t| time <= t) {
            return Err((line, BvhErrorKind::FrameTimeTooSmall { frame }));
        }
        motion.times.push(time);
        let mut values = std::iter::once(first).chain(values);
        let mut read = 0usize;
        for (j, node) in nodes.iter().enumerate() {
            if node.channels.is_empty() {
                continue;
            }
            let mut position = node.offset;
            let mut rotation: Q = [0.0, 0.0, 0.0, 1.0];
            for c in &node.channels {
                let Some(word) = values.next() else {
                    return Err((line, BvhErrorKind::TooFewValues { frame, expected, found: read }));
                };
                read += 1;
                let v = number(Word { text: word, line }, "a frame value")?;
                match *c {
                    Channel::Position(a) => {
                        if let Some(p) = position.get_mut(a.index()) {
                            *p = v;
                        }
                    }
                    Channel::Rotation(a) => rotation = quat_mul(rotation, axis_rotation(a, v)),
                }
            }
            if node.channels.iter().any(|c| matches!(c, Channel::Position(_))) {
                let t = position.map(|p| (p * scale) as f32);
                if !t.iter().all(|v| v.is_finite()) {
                    return Err((line, BvhErrorKind::NonFinite { what: "a position once scaled" }));
                }
                if let Some(keys) = motion.translations.get_mut(j) {
                    keys.extend_from_slice(&t);
                }
            }
            if node.channels.iter().any(|c| matches!(c, Channel::Rotation(_))) {
                let q = continuous(normalize(rotation), previous.get(j).copied().flatten());
                if let Some(slot) = previous.get_mut(j) {
                    *slot = Some(q);
                }
                if let Some(keys) = motion.rotations.get_mut(j) {
                    keys.extend_from_slice(&q.map(|v| v as f32));
                }
            }
        }
        let surplus = values.count();
        if surplus > 0 {
            return Err((line, BvhErrorKind::TooManyValues { frame, expected, found: expected + surplus }));
        }
        frame += 1;
    }
    if expected > 0 && (frame as u64) < declared {
        return Err((last_line, BvhErrorKind::FrameCountMismatch { declared, found: frame as u64 }));
    }
    Ok(motion)
}

/// `q` scaled to unit length (a product of unit quaternions, so never near zero).
fn normalize(q: Q) -> Q {
    let len = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    if len > 0.0 {
        q.map(|v| v / len)
    } else {
        [0.0, 0.0, 0.0, 1.0]
    }
}

/// `q` or `-q`, whichever is nearer `previous` (the same rotation; linear keys then take the
/// short way between them).
fn continuous(q: Q, previous: Option<Q>) -> Q {
    match previous {
        Some(p) if p.iter().zip(&q).map(|(a, b)| a * b).sum::<f64>() < 0.0 => q.map(|v| -v),
        _ => q,
    }
}
