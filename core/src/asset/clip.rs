//! The clip section: the header, the track directory and every track's keys, validated (clips
//! are decoded in [`crate::clip`]).

use super::key_times;
use crate::format::packed::Packed;
use crate::format::reader::{byte, is_finite_bits, le_u16, le_u32, ordered_bits, Reader};
use crate::format::*;
use crate::limits::MAX_JOINTS;

/// Validates a clip section (`sec` in the table) of a file whose skeleton has `joints` joints:
/// a readable header with a finite, ordered time range; known track kinds (no quantized cubic
/// spline, no two tracks for one joint property, joints below `joints`, key formats this build
/// decodes: [`key_format_enabled`]); key data inside the
/// section, finite, with strictly increasing times within the range; and the data ending the
/// section exactly.
pub(super) fn parse(body: &[u8], sec: u16, joints: usize) -> Result<(), ParseError> {
    let header = || -> Result<(f32, f32, usize, usize), ParseError> {
        let mut r = Reader::new(body);
        r.str()?;
        let start = r.f32()?;
        let end = r.f32()?;
        let tracks = r.u16()? as usize;
        let dir = r.pos();
        r.bytes(tracks * TRACK_ENTRY_LEN)?;
        Ok((start, end, tracks, dir))
    };
    let (start, end, tracks, dir) =
        header().map_err(|e| if e == ParseError::Truncated { e } else { ParseError::BadName { section: sec } })?;
    if !is_finite_bits(start.to_bits()) || !is_finite_bits(end.to_bits()) {
        return Err(ParseError::NonFinite { section: sec });
    }
    let (lo, hi) = (ordered_bits(start.to_bits()), ordered_bits(end.to_bits()));
    if lo > hi {
        return Err(ParseError::BadTimeRange { section: sec });
    }
    let mut seen = [0u32; MAX_JOINTS * 3 / 32];
    let mut covered_end = dir + tracks * TRACK_ENTRY_LEN;
    for i in 0..tracks {
        let track = i as u16;
        let bad = ParseError::BadTrack { section: sec, track };
        let e = dir + i * TRACK_ENTRY_LEN;
        let joint = le_u16(body, e) as usize;
        let (target, interp, format) = (byte(body, e + 2), byte(body, e + 3), byte(body, e + 4));
        let keys = le_u16(body, e + 6) as usize;
        let off = le_u32(body, e + 8) as usize;
        if joint >= joints {
            return Err(ParseError::JointOutOfRange { section: sec });
        }
        let flags = byte(body, e + 5);
        if target > TARGET_SCALE
            || interp > INTERP_CUBIC
            || format > FORMAT_PACKED
            || keys == 0
            || flags > TRACK_FLAG_SLERP
        {
            return Err(bad);
        }
        if format != FORMAT_F32 && interp == INTERP_CUBIC {
            return Err(bad);
        }
        if !key_format_enabled(format) {
            return Err(ParseError::KeyFormatDisabled { section: sec, track, format });
        }
        let slot = joint * 3 + target as usize;
        if seen[slot / 32] & (1 << (slot % 32)) != 0 {
            return Err(ParseError::DuplicateTrack { section: sec, track });
        }
        seen[slot / 32] |= 1 << (slot % 32);
        let len = if format == FORMAT_PACKED {
            Packed::check(body.get(off..).unwrap_or(&[]), target, keys).ok_or(bad)?
        } else {
            track_data_len(target, interp, format, keys).ok_or(bad)?
        };
        let data =
            off.checked_add(len).and_then(|end| body.get(off..end)).ok_or(ParseError::BadSection { section: sec })?;
        covered_end = covered_end.max(off + len);
        if cfg!(feature = "clip-f32") && format == FORMAT_F32 {
            key_times(data, keys, lo..=hi, sec, track)?;
            let values = &data[keys * 4..];
            if !(0..values.len() / 4).all(|k| is_finite_bits(le_u32(values, k * 4))) {
                return Err(ParseError::NonFinite { section: sec });
            }
        } else if cfg!(feature = "clip-packed") && format == FORMAT_PACKED {
            check_packed(data, target, keys, sec, track)?;
        } else if cfg!(feature = "clip-quantized") {
            for k in 1..keys {
                if le_u16(data, k * 2) <= le_u16(data, (k - 1) * 2) {
                    return Err(ParseError::UnsortedKeys { section: sec, track });
                }
            }
            if target != TARGET_ROTATION {
                let ranges = &data[keys * 2..keys * 2 + 24];
                if !(0..6).all(|k| is_finite_bits(le_u32(ranges, k * 4))) {
                    return Err(ParseError::NonFinite { section: sec });
                }
            }
        }
    }
    if covered_end != body.len() {
        return Err(ParseError::BadSection { section: sec });
    }
    Ok(())
}

/// Checks a packed track's parameters (finite, below 2¹²⁷ in magnitude so `min + range` is
/// finite; rotation components and reference within ±4, so their squares stay small) and its
/// key times (strictly increasing, on the grid: frames and sub-frames within `0 ..= frames`).
/// Integer-only, like all validation.
fn check_packed(data: &[u8], target: u8, keys: usize, sec: u16, track: u16) -> Result<(), ParseError> {
    let p = Packed::read(data, target);
    // Magnitude bits of ±4.0 and of 2¹²⁷.
    let limit = if target == TARGET_ROTATION { 0x4080_0000 } else { 0x7F00_0000 };
    let within = |at: usize| le_u32(data, at) & 0x7FFF_FFFF <= limit;
    for j in 0..3 {
        let at = p.params[j] as usize;
        if !within(at) || (p.bits[j] != 0 && !within(at + 4)) {
            return Err(ParseError::NonFinite { section: sec });
        }
    }
    if p.reference && !(0..4).all(|j| within(PACKED_HEADER_LEN + 4 * j)) {
        return Err(ParseError::NonFinite { section: sec });
    }
    let mut prev = None;
    for k in 0..keys {
        let (n, d) = p.time_ratio(data, k);
        if p.frame(data, k) > u32::from(p.frames) || n < 0 || n > d || prev.is_some_and(|q| n <= q) {
            return Err(ParseError::UnsortedKeys { section: sec, track });
        }
        prev = Some(n);
    }
    Ok(())
}
