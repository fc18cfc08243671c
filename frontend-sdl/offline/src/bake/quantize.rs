//! Quantized track encoding: times 16 bits in the clip range, rotations smallest-three
//! 3 × 15 bits, translations and scales 16 bits in a per-track range.

use sinew::asset::format::*;

use super::pack::value_at;
use super::tracks::{interp_code, key_value, target_code};
use super::write::EncTrack;
use crate::rig::{ChannelTarget, Interpolation, RigChannel};

/// Quantized value range of translation/scale keys: `min` and `scale` as stored.
fn range_of(values: &[[f64; 4]]) -> ([f32; 3], [f32; 3]) {
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for v in values {
        for j in 0..3 {
            lo[j] = lo[j].min(v[j] as f32);
            hi[j] = hi[j].max(v[j] as f32);
        }
    }
    let scale = core::array::from_fn(|j| (hi[j] - lo[j]) * (65536.0 / 65535.0));
    (lo, scale)
}

/// The largest magnitude of a channel's key values when they span more than `f32` arithmetic
/// holds, `None` otherwise: the stored range of [`range_of`] (and of the packed encodings)
/// is `max − min` of each component, and the runtime interpolates two keys as
/// `a + (b − a)·s`, so `max − min` (a little more for the range) must be finite in `f32`.
/// Cubic-spline channels are stored in `f32` and not interpolated linearly: their poses are
/// checked where the baker measures them.
pub(super) fn key_range_overflow(c: &RigChannel) -> Option<f32> {
    if c.interpolation == Interpolation::CubicSpline {
        return None;
    }
    let values: Vec<[f64; 4]> = (0..c.times.len()).map(|k| key_value(c, k)).collect();
    let (_, scale) = range_of(&values);
    if scale.iter().all(|s| s.is_finite()) {
        return None;
    }
    Some(values.iter().flat_map(|v| v.iter().take(3)).fold(0.0f32, |m, &x| m.max((x as f32).abs())))
}

fn quantize_component(v: f64, min: f32, scale: f32) -> u16 {
    if scale <= 0.0 {
        return 0;
    }
    let q = (v - min as f64) / scale as f64 * 65536.0;
    q.round().clamp(0.0, 65535.0) as u16
}

/// Encodes the kept keys quantized; `None` when two kept keys fall on the same quantized time.
pub(super) fn encode_quantized(c: &RigChannel, keys: &[usize], start: f32, end: f32) -> Option<EncTrack> {
    let mut data = Vec::new();
    let mut prev: Option<u16> = None;
    // Values at the quantized times, on the source curve.
    let mut values = Vec::with_capacity(keys.len());
    for &k in keys {
        let q = quantize_time(c.times[k], start, end);
        if prev.is_some_and(|p| q <= p) {
            return None;
        }
        prev = Some(q);
        data.extend_from_slice(&q.to_le_bytes());
        values.push(value_at(c, k, f64::from(start) + (f64::from(end) - f64::from(start)) * f64::from(q) / 65535.0));
    }
    if c.target == ChannelTarget::Rotation {
        for v in &values {
            data.extend_from_slice(&pack_rotation([v[0] as f32, v[1] as f32, v[2] as f32, v[3] as f32]));
        }
    } else {
        let (min, scale) = range_of(&values);
        min.iter().chain(scale.iter()).for_each(|x| data.extend_from_slice(&x.to_le_bytes()));
        for v in &values {
            for j in 0..3 {
                data.extend_from_slice(&quantize_component(v[j], min[j], scale[j]).to_le_bytes());
            }
        }
    }
    Some(EncTrack {
        joint: c.joint as u16,
        target: target_code(c.target),
        interp: interp_code(c.interpolation),
        format: FORMAT_QUANTIZED,
        flags: 0,
        keys: keys.len() as u16,
        data,
    })
}
