//! The clip-report section (`CREP`): [`ClipReport`], what the baker measured for one clip
//! (the error bound, the shell distance, its largest shell error with the joint and time),
//! and its validation (`write_clip_report`, in `write.rs`, writes it). Tools read it; the runtime never needs it.

use crate::format::reader::{is_finite_bits, le_u16, le_u32, ordered_bits};
use crate::format::*;

use super::Asset;

/// The baker's error report of one clip, as stored in its clip-report section. Lengths are in
/// meters, times in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClipReport {
    /// The clip it reports on.
    pub clip: usize,
    /// The error bound the clip was baked to.
    pub bound: f32,
    /// The shell distance: how far from each joint the error was measured (with
    /// `shell_from_mesh`, the largest joint's).
    pub shell: f32,
    /// Each joint's shell distance came from the mesh (its farthest vertex, or its subtree's
    /// reach for a joint that moves none itself); false: `shell` for every joint.
    pub shell_from_mesh: bool,
    /// The baker measured the clip (false: stored lossless when its work budget ran out).
    pub measured: bool,
    /// The baker's largest measured shell error.
    pub error: f32,
    /// The joint of that error (`None` when it is 0).
    pub joint: Option<usize>,
    /// The clip time of that error.
    pub time: f32,
}

impl ClipReport {
    /// Reads a clip-report section's body (`None` when it is not [`CLIP_REPORT_LEN`] bytes).
    /// The values are as stored: [`Asset::parse`] validated them.
    #[must_use]
    pub(super) fn read(body: &[u8]) -> Option<Self> {
        if body.len() != CLIP_REPORT_LEN {
            return None;
        }
        let flags = body[2];
        let joint = le_u16(body, 16);
        Some(ClipReport {
            clip: le_u16(body, 0) as usize,
            bound: f32::from_bits(le_u32(body, 4)),
            shell: f32::from_bits(le_u32(body, 8)),
            shell_from_mesh: flags & REPORT_FLAG_SHELL_FROM_MESH != 0,
            measured: flags & REPORT_FLAG_UNMEASURED == 0,
            error: f32::from_bits(le_u32(body, 12)),
            joint: (joint != NONE).then_some(joint as usize),
            time: f32::from_bits(le_u32(body, 20)),
        })
    }
}

/// Validates clip-report section `sec` against the clips of `asset` and `joints` skeleton
/// joints; `previous` is the clip of the report before it. Integer-only, like all validation.
/// Returns the clip it reports on.
pub(super) fn parse(
    body: &[u8],
    sec: u16,
    asset: &Asset<'_>,
    joints: usize,
    previous: Option<usize>,
) -> Result<usize, ParseError> {
    if body.len() < CLIP_REPORT_LEN {
        return Err(ParseError::SectionOverrun { section: sec });
    }
    if body.len() > CLIP_REPORT_LEN {
        return Err(ParseError::BadSection { section: sec });
    }
    let bad = |field| ParseError::BadClipReport { section: sec, field };
    let clip = le_u16(body, 0) as usize;
    let c = asset.clip(clip).ok_or(bad(ReportField::Clip))?;
    if previous.is_some_and(|p| clip <= p) {
        return Err(bad(ReportField::Clip));
    }
    let flags = body[2];
    if flags & !(REPORT_FLAG_SHELL_FROM_MESH | REPORT_FLAG_UNMEASURED) != 0 || body[3] != 0 || le_u16(body, 18) != 0 {
        return Err(bad(ReportField::Flags));
    }
    // A finite value's order key, `None` when NaN or infinite.
    let value = |at: usize| {
        let b = le_u32(body, at);
        is_finite_bits(b).then(|| ordered_bits(b))
    };
    if value(4).is_none_or(|v| v <= 0) {
        return Err(bad(ReportField::Bound));
    }
    if value(8).is_none_or(|v| v < 0) {
        return Err(bad(ReportField::Shell));
    }
    let error = value(12).filter(|&v| v >= 0).ok_or(bad(ReportField::Error))?;
    let joint = le_u16(body, 16);
    if flags & REPORT_FLAG_UNMEASURED != 0 && (error > 0 || joint != NONE) {
        return Err(bad(ReportField::Error));
    }
    if (joint == NONE && error > 0) || (joint != NONE && joint as usize >= joints) {
        return Err(bad(ReportField::Joint));
    }
    let (lo, hi) = (ordered_bits(c.start().to_bits()), ordered_bits(c.end().to_bits()));
    if !value(20).is_some_and(|t| (lo..=hi).contains(&t)) {
        return Err(bad(ReportField::Time));
    }
    Ok(clip)
}
