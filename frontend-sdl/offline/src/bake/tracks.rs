//! Track encodings shared by the clip search: the format codes of a channel, its keys' values,
//! and the lossless `f32` encoding (every component of the kept keys, tangents included).

use sinew::asset::format::*;

use super::write::EncTrack;
use crate::rig::{ChannelTarget, Interpolation, RigChannel};

pub(super) fn target_code(t: ChannelTarget) -> u8 {
    match t {
        ChannelTarget::Translation => TARGET_TRANSLATION,
        ChannelTarget::Rotation => TARGET_ROTATION,
        ChannelTarget::Scale => TARGET_SCALE,
    }
}

pub(super) fn interp_code(i: Interpolation) -> u8 {
    match i {
        Interpolation::Step => INTERP_STEP,
        Interpolation::Linear => INTERP_LINEAR,
        Interpolation::CubicSpline => INTERP_CUBIC,
    }
}

pub(super) fn encode_f32(c: &RigChannel) -> EncTrack {
    encode_f32_keys(c, &(0..c.times.len()).collect::<Vec<_>>())
}

/// Lossless `f32` encoding of the kept keys (all components of each key, tangents included).
pub(super) fn encode_f32_keys(c: &RigChannel, keys: &[usize]) -> EncTrack {
    let per_key = if c.interpolation == Interpolation::CubicSpline { 3 } else { 1 } * c.target.components();
    let mut data = Vec::with_capacity(keys.len() * (4 + 4 * per_key));
    keys.iter().for_each(|&k| data.extend_from_slice(&c.times[k].to_le_bytes()));
    for &k in keys {
        for j in 0..per_key {
            let v = c.values.get(k * per_key + j).copied().unwrap_or(0.0);
            data.extend_from_slice(&v.to_le_bytes());
        }
    }
    EncTrack {
        joint: c.joint as u16,
        target: target_code(c.target),
        interp: interp_code(c.interpolation),
        format: FORMAT_F32,
        flags: 0,
        keys: keys.len() as u16,
        data,
    }
}

pub(super) fn key_value(c: &RigChannel, k: usize) -> [f64; 4] {
    let comps = c.target.components();
    core::array::from_fn(|j| if j < comps { c.values.get(k * comps + j).copied().unwrap_or(0.0) as f64 } else { 0.0 })
}
