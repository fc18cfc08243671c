//! Morph targets and morph-weight tracks: their encodings, the error bound that picks them, and
//! their sections.
//!
//! - **Targets** are stored per mesh part, sparse: only the vertices a target moves, with
//!   their position deltas and, where both the part and the target have them, normal and
//!   tangent deltas. Each target is `i16` (a power-of-two step per attribute, the finest that
//!   holds its largest delta) unless the bound below needs `f32`; lossless bakes keep `f32`.
//! - **Weight tracks** keep every key: STEP and LINEAR tracks are quantized (16-bit times in
//!   the clip range, 16-bit values in the track's range) unless the bound needs `f32`; cubic
//!   splines and lossless bakes keep `f32`.
//! - **The bound**: half the baker's tolerance for the deltas and half for the weights, in
//!   scene space. A vertex's delta error is `Σ_i W_i · |d̃_i − d_i| · S` (the actual quantization
//!   errors; `W_i` the largest |weight| of target `i` over the default weights and every clip,
//!   `S` the largest scale of the mesh's node or skin matrices over the rest pose and the
//!   clips' key times); targets are moved to `f32`, largest share first, until the worst
//!   vertex meets it. A weight track's error is `Σ_i ε_i · D_i · S` (`ε_i` its largest weight
//!   error measured against the source at and between the keys, `D_i` the target's largest
//!   position delta).

use sinew::asset::format::*;
use sinew::asset::writer::Writer;

use super::write::{EncClip, EncMesh};
use super::BakeError;
use crate::eval::{self, M4};
use crate::rig::{Interpolation, Rig, RigClip, RigMesh, RigWeightChannel};

/// One target of one part as written.
pub(super) struct EncTarget {
    format: u8,
    attributes: u8,
    shifts: [u8; 3],
    vertices: Vec<u32>,
    /// Per vertex: position, [normal,] [tangent] deltas (as many as `attributes` says).
    deltas: Vec<Vec<f32>>,
}

/// The MRPH section of one mesh as written.
pub(super) struct EncMorph {
    mesh: u16,
    weights: Vec<f32>,
    parts: Vec<(u32, Vec<EncTarget>)>,
    /// The error bound the encoding meets (scene units).
    pub(super) bound: f64,
}

/// One weight track as written.
struct EncWeightTrack {
    mesh: u16,
    interp: u8,
    format: u8,
    keys: u16,
    data: Vec<u8>,
}

/// The MWGT section of one clip as written.
pub(super) struct EncWeights {
    clip: u16,
    start: f32,
    end: f32,
    tracks: Vec<EncWeightTrack>,
    /// The largest error bound of its tracks (scene units).
    pub(super) bound: f64,
}

/// Checks the rig's morph data: every primitive of a mesh with as many targets as the mesh
/// has weights, deltas for every vertex, finite values; weight channels on meshes with
/// targets, with at most 65535 keys and `targets` values per key (× 3 for cubic splines).
pub(super) fn check_morphs(rig: &Rig) -> Result<(), BakeError> {
    let invalid = |s: String| Err(BakeError::Invalid(s));
    for m in &rig.meshes {
        for (pi, p) in m.primitives.iter().enumerate() {
            if p.targets.len() != m.num_targets() {
                return invalid(format!(
                    "mesh '{}' primitive {pi} has {} morph targets, not {}",
                    m.name,
                    p.targets.len(),
                    m.num_targets()
                ));
            }
            let n = p.positions.len();
            for (ti, t) in p.targets.iter().enumerate() {
                let lens_ok = t.positions.len() == n
                    && t.normals.as_ref().is_none_or(|v| v.len() == n)
                    && t.tangents.as_ref().is_none_or(|v| v.len() == n);
                let finite = t
                    .positions
                    .iter()
                    .chain(t.normals.iter().flatten())
                    .chain(t.tangents.iter().flatten())
                    .all(|d| d.iter().all(|x| x.is_finite()));
                if !lens_ok || !finite {
                    return invalid(format!(
                        "mesh '{}' primitive {pi} morph target {ti}: deltas missing or not finite",
                        m.name
                    ));
                }
            }
        }
        if !m.weights.iter().all(|w| w.is_finite()) {
            return invalid(format!("mesh '{}' has a non-finite morph weight", m.name));
        }
    }
    for c in &rig.clips {
        for w in &c.weights {
            let Some(m) = rig.meshes.get(w.mesh).filter(|m| m.num_targets() > 0) else {
                return invalid(format!(
                    "clip '{}' animates the weights of mesh {}, which has no morph targets",
                    c.name, w.mesh
                ));
            };
            if w.times.len() > 65535 {
                return Err(BakeError::TooManyKeys { clip: c.name.clone() });
            }
            let per_key = if w.interpolation == Interpolation::CubicSpline { 3 } else { 1 } * m.num_targets();
            let sorted = w.times.windows(2).all(|p| p[0] < p[1]);
            let finite = w.times.iter().chain(&w.values).all(|x| x.is_finite());
            if w.times.is_empty() || w.values.len() != w.times.len() * per_key || !sorted || !finite {
                return invalid(format!("clip '{}': the weights channel of mesh '{}' has bad keys", c.name, m.name));
            }
        }
    }
    Ok(())
}

/// The largest column norm of a matrix's 3×3 part: how much it stretches a vector.
fn stretch(m: &M4) -> f64 {
    (0..3).map(|c| (0..3).map(|r| m[c][r] * m[c][r]).sum::<f64>().sqrt()).fold(0.0, f64::max)
}

/// `S`: the largest stretch the mesh's vertices see, over the rest pose and the clips' key
/// times (at most 256 poses, spread evenly over them).
fn mesh_stretch(rig: &Rig, m: &RigMesh) -> f64 {
    let mut poses: Vec<(Option<&RigClip>, f64)> = vec![(None, 0.0)];
    for c in &rig.clips {
        let mut times: Vec<f32> = c.channels.iter().flat_map(|ch| ch.times.iter().copied()).collect();
        times.sort_by(f32::total_cmp);
        times.dedup();
        poses.extend(times.iter().map(|&t| (Some(c), f64::from(t))));
    }
    let step = poses.len().div_ceil(256).max(1);
    let mut worst = 0.0f64;
    for &(clip, t) in poses.iter().step_by(step) {
        let model = eval::model_matrices(rig, &eval::local_pose(rig, clip, t));
        match m.skin.and_then(|s| rig.skins.get(s)) {
            Some(skin) => {
                for (&j, ib) in skin.joints.iter().zip(&skin.inverse_bind) {
                    let Some(w) = model.get(j) else { continue };
                    let ib: M4 = std::array::from_fn(|c| std::array::from_fn(|r| f64::from(ib[c * 4 + r])));
                    worst = worst.max(stretch(&eval::mul(w, &ib)));
                }
            }
            None => {
                let w = m.node.and_then(|n| model.get(n)).map_or(1.0, stretch);
                worst = worst.max(w);
            }
        }
    }
    if worst.is_finite() {
        worst
    } else {
        1.0
    }
}

/// `W_i`: the largest |weight| of each target of mesh `mesh` over its defaults and every
/// clip's channel for it (sampled at and between the keys).
fn weight_extents(rig: &Rig, mesh: usize, m: &RigMesh) -> Vec<f64> {
    let mut w: Vec<f64> = m.weights.iter().map(|x| f64::from(x.abs())).collect();
    for c in rig.clips.iter().flat_map(|c| c.weights.iter()).filter(|c| c.mesh == mesh) {
        for t in sample_times(&c.times.iter().map(|&t| f64::from(t)).collect::<Vec<_>>()) {
            for (o, v) in w.iter_mut().zip(eval::eval_weights(c, m.num_targets(), t)) {
                *o = o.max(v.abs());
            }
        }
    }
    w
}

/// Key times and points at ¼, ½ and ¾ of each interval.
fn sample_times(keys: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(keys.len() * 4);
    for (i, &t) in keys.iter().enumerate() {
        out.push(t);
        if let Some(&n) = keys.get(i + 1) {
            out.extend([0.25, 0.5, 0.75].map(|f| t + (n - t) * f));
        }
    }
    out
}

/// The finest shift whose `i16` range holds `max` (`None` when even a step of 1 does not).
fn shift_for(max: f32) -> Option<u8> {
    if max == 0.0 {
        return Some(MAX_MORPH_SHIFT);
    }
    (0..=MAX_MORPH_SHIFT).rev().find(|&s| f64::from(max) * f64::from(1u32 << s) <= 32767.0)
}

fn quantize(x: f32, shift: u8) -> i16 {
    (f64::from(x) * f64::from(1u32 << shift)).round().clamp(-32767.0, 32767.0) as i16
}

fn dequantize(q: i16, shift: u8) -> f32 {
    (f64::from(q) / f64::from(1u32 << shift)) as f32
}

/// One part's entries of one target: part vertex and its deltas (position, then normal and
/// tangent when `attributes` has them), zero vertices left out.
fn entries(
    m: &RigMesh,
    primitive: usize,
    source: &[u32],
    vertices: usize,
    target: usize,
    attributes: u8,
) -> Vec<(u32, Vec<f32>)> {
    let Some(t) = m.primitives.get(primitive).and_then(|p| p.targets.get(target)) else { return Vec::new() };
    let mut out = Vec::new();
    for v in 0..vertices {
        let sv = source.get(v).map_or(v, |&s| s as usize);
        let mut d: Vec<f32> = t.positions.get(sv).copied().unwrap_or([0.0; 3]).to_vec();
        if attributes & ATTR_NORMALS != 0 {
            d.extend(t.normals.as_ref().and_then(|n| n.get(sv)).copied().unwrap_or([0.0; 3]));
        }
        if attributes & ATTR_TANGENTS != 0 {
            d.extend(t.tangents.as_ref().and_then(|n| n.get(sv)).copied().unwrap_or([0.0; 3]));
        }
        if d.iter().any(|&x| x != 0.0) {
            out.push((v as u32, d));
        }
    }
    out
}

/// The quantized form of a target's entries (`None` when a delta does not fit `i16`), with the
/// position error of each entry.
fn quantized(attributes: u8, entries: &[(u32, Vec<f32>)]) -> Option<(EncTarget, Vec<(u32, f64)>)> {
    let slots = 1 + usize::from(attributes & ATTR_NORMALS != 0) + usize::from(attributes & ATTR_TANGENTS != 0);
    let mut shifts = [0u8; 3];
    let mut slot_shift = Vec::new();
    for s in 0..slots {
        let max = entries.iter().flat_map(|(_, d)| d[s * 3..s * 3 + 3].iter()).fold(0.0f32, |a, x| a.max(x.abs()));
        let shift = shift_for(max)?;
        slot_shift.push(shift);
        // Shifts are kept per attribute kind: position, normal, tangent.
        let kind = match s {
            0 => 0,
            1 if attributes & ATTR_NORMALS != 0 => 1,
            _ => 2,
        };
        shifts[kind] = shift;
    }
    let mut target =
        EncTarget { format: MORPH_QUANTIZED, attributes, shifts, vertices: Vec::new(), deltas: Vec::new() };
    let mut errors = Vec::with_capacity(entries.len());
    for (v, d) in entries {
        let q: Vec<f32> =
            d.iter().enumerate().map(|(i, &x)| dequantize(quantize(x, slot_shift[i / 3]), slot_shift[i / 3])).collect();
        let e = (0..3).map(|k| f64::from(q[k] - d[k]).powi(2)).sum::<f64>().sqrt();
        errors.push((*v, e));
        if q.iter().any(|&x| x != 0.0) {
            target.vertices.push(*v);
            target.deltas.push(q);
        }
    }
    Some((target, errors))
}

/// Encodes the morph targets of mesh `mesh` (`enc`: its parts as baked) within half of
/// `tolerance` (scene units), or losslessly; `None` without targets.
pub(super) fn bake_morph(rig: &Rig, mesh: usize, enc: &EncMesh, tolerance: f64, lossless: bool) -> Option<EncMorph> {
    let m = rig.meshes.get(mesh)?;
    let targets = m.num_targets();
    if targets == 0 {
        return None;
    }
    let scale = if lossless { 1.0 } else { mesh_stretch(rig, m) };
    let extent = if lossless { vec![0.0; targets] } else { weight_extents(rig, mesh, m) };
    let mut parts = Vec::with_capacity(enc.parts.len());
    let mut bound = 0.0f64;
    for part in &enc.parts {
        let n = part.positions.len();
        let prim = m.primitives.get(part.primitive);
        let mut lossless_targets = Vec::with_capacity(targets);
        let mut candidates = Vec::with_capacity(targets);
        for ti in 0..targets {
            let t = prim.and_then(|p| p.targets.get(ti));
            let attributes =
                if t.is_some_and(|t| t.normals.is_some()) && part.normals.is_some() { ATTR_NORMALS } else { 0 }
                    | if t.is_some_and(|t| t.tangents.is_some()) && part.tangents.is_some() {
                        ATTR_TANGENTS
                    } else {
                        0
                    };
            let e = entries(m, part.primitive, &part.source, n, ti, attributes);
            let (vertices, deltas): (Vec<u32>, Vec<Vec<f32>>) = e.iter().cloned().unzip();
            lossless_targets.push(EncTarget { format: MORPH_F32, attributes, shifts: [0; 3], vertices, deltas });
            candidates.push(if lossless { None } else { quantized(attributes, &e) });
        }
        // Per vertex, each quantized target's share of the error; move the largest to f32
        // until the worst vertex meets half the tolerance.
        let mut use_q: Vec<bool> = candidates.iter().map(Option::is_some).collect();
        let vertex_error = |use_q: &[bool]| -> (f64, Vec<f64>) {
            let mut per_vertex = vec![0.0f64; n];
            let mut share = vec![0.0f64; targets];
            for (ti, c) in candidates.iter().enumerate() {
                let (true, Some((_, errors))) = (use_q[ti], c) else { continue };
                for &(v, e) in errors {
                    let x = extent[ti] * e * scale;
                    if let Some(p) = per_vertex.get_mut(v as usize) {
                        *p += x;
                    }
                    share[ti] = share[ti].max(x);
                }
            }
            (per_vertex.into_iter().fold(0.0, f64::max), share)
        };
        loop {
            let (worst, share) = vertex_error(&use_q);
            if worst <= 0.5 * tolerance {
                bound = bound.max(worst);
                break;
            }
            let Some(ti) = (0..targets).filter(|&t| use_q[t]).max_by(|&a, &b| share[a].total_cmp(&share[b])) else {
                break;
            };
            use_q[ti] = false;
        }
        let mut out = Vec::with_capacity(targets);
        for ((l, c), q) in lossless_targets.into_iter().zip(candidates).zip(use_q) {
            out.push(match (q, c) {
                (true, Some((t, _))) => t,
                _ => l,
            });
        }
        parts.push((n as u32, out));
    }
    Some(EncMorph { mesh: mesh as u16, weights: m.weights.clone(), parts, bound })
}

/// The runtime's decoding of a quantized weight track: key times and values in `f64`.
fn decoded_quantized(times: &[u16], min: f32, scale: f32, q: &[u16], start: f32, end: f32) -> (Vec<f64>, Vec<f64>) {
    let t = times.iter().map(|&k| f64::from(dequantize_time(k, start, end))).collect();
    let v = q.iter().map(|&k| f64::from(min) + f64::from(scale) * f64::from(k) / 65536.0).collect();
    (t, v)
}

/// Encodes the morph-weight channels of `clip` (whose section `enc` gives the range) for the
/// meshes of `morphs`, within half of `tolerance` or losslessly; `None` without channels.
pub(super) fn bake_weights(
    rig: &Rig,
    index: usize,
    clip: &RigClip,
    enc: &EncClip,
    morphs: &[EncMorph],
    tolerance: f64,
    lossless: bool,
) -> Option<EncWeights> {
    let mut channels: Vec<&RigWeightChannel> =
        clip.weights.iter().filter(|w| morphs.iter().any(|m| usize::from(m.mesh) == w.mesh)).collect();
    if channels.is_empty() {
        return None;
    }
    channels.sort_by_key(|w| w.mesh);
    let mut tracks = Vec::with_capacity(channels.len());
    let mut bound = 0.0f64;
    for c in channels {
        let Some(m) = rig.meshes.get(c.mesh) else { continue };
        let targets = m.num_targets();
        let f32_track = || {
            let mut data = Vec::with_capacity(4 * (c.times.len() + c.values.len()));
            c.times.iter().chain(&c.values).for_each(|x| data.extend(x.to_le_bytes()));
            EncWeightTrack {
                mesh: c.mesh as u16,
                interp: interp_code(c.interpolation),
                format: FORMAT_F32,
                keys: c.times.len() as u16,
                data,
            }
        };
        let quantized = if lossless || c.interpolation == Interpolation::CubicSpline {
            None
        } else {
            quantized_track(rig, c, targets, enc.start, enc.end, tolerance)
        };
        match quantized {
            Some((t, e)) => {
                bound = bound.max(e);
                tracks.push(t);
            }
            None => tracks.push(f32_track()),
        }
    }
    Some(EncWeights { clip: index as u16, start: enc.start, end: enc.end, tracks, bound })
}

fn interp_code(i: Interpolation) -> u8 {
    match i {
        Interpolation::Step => INTERP_STEP,
        Interpolation::Linear => INTERP_LINEAR,
        Interpolation::CubicSpline => INTERP_CUBIC,
    }
}

/// A quantized weight track and its error bound, when the bound meets half the tolerance.
fn quantized_track(
    rig: &Rig,
    c: &RigWeightChannel,
    targets: usize,
    start: f32,
    end: f32,
    tolerance: f64,
) -> Option<(EncWeightTrack, f64)> {
    let m = rig.meshes.get(c.mesh)?;
    let times: Vec<u16> = c.times.iter().map(|&t| quantize_time(t, start, end)).collect();
    if times.windows(2).any(|w| w[1] <= w[0]) {
        return None;
    }
    let (lo, hi) = c.values.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    let scale = ((f64::from(hi) - f64::from(lo)) * 65536.0 / 65535.0) as f32;
    let q: Vec<u16> = c
        .values
        .iter()
        .map(|&v| {
            if scale > 0.0 {
                ((f64::from(v) - f64::from(lo)) / f64::from(scale) * 65536.0).round().clamp(0.0, 65535.0) as u16
            } else {
                0
            }
        })
        .collect();
    let (dt, dv) = decoded_quantized(&times, lo, scale, &q, start, end);
    // ε_i at the source keys, the decoded keys and between them.
    let src: Vec<f64> = c.times.iter().map(|&t| f64::from(t)).collect();
    let mut at: Vec<f64> = sample_times(&src);
    at.extend(&dt);
    let mut eps = vec![0.0f64; targets];
    for &t in &at {
        let a = eval::eval_weights(c, targets, t);
        let b = eval::eval_weight_keys(&dt, &dv, c.interpolation, targets, t);
        for (e, (x, y)) in eps.iter_mut().zip(a.iter().zip(&b)) {
            *e = e.max((x - y).abs());
        }
    }
    // D_i: the target's largest position delta.
    let reach: Vec<f64> = (0..targets)
        .map(|ti| {
            m.primitives
                .iter()
                .filter_map(|p| p.targets.get(ti))
                .flat_map(|t| t.positions.iter())
                .map(|d| d.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>().sqrt())
                .fold(0.0, f64::max)
        })
        .collect();
    let error = eps.iter().zip(&reach).map(|(e, d)| e * d).sum::<f64>() * mesh_stretch(rig, m);
    if error > 0.5 * tolerance {
        return None;
    }
    let mut data = Vec::with_capacity(2 * (times.len() + q.len()) + 8);
    times.iter().for_each(|t| data.extend(t.to_le_bytes()));
    data.extend(lo.to_le_bytes());
    data.extend(scale.to_le_bytes());
    q.iter().for_each(|v| data.extend(v.to_le_bytes()));
    let track = EncWeightTrack {
        mesh: c.mesh as u16,
        interp: interp_code(c.interpolation),
        format: FORMAT_QUANTIZED,
        keys: c.times.len() as u16,
        data,
    };
    Some((track, error))
}

/// Writes an MRPH section's body.
pub(super) fn write_morph(w: &mut Writer, m: &EncMorph) {
    w.u16(m.mesh);
    w.u16(m.weights.len() as u16);
    m.weights.iter().for_each(|&x| w.f32(x));
    w.u16(m.parts.len() as u16);
    for (vertices, targets) in &m.parts {
        w.u32(*vertices);
        let index_size = if *vertices > 65536 { 4 } else { 2 };
        for t in targets {
            w.u32(t.vertices.len() as u32);
            w.u8(t.format);
            w.u8(t.attributes);
            w.u8(index_size);
            w.bytes(&t.shifts);
            for &v in &t.vertices {
                if index_size == 2 {
                    w.u16(v as u16);
                } else {
                    w.u32(v);
                }
            }
            // Slot k of a vertex's deltas is position, normal or tangent, in stored order.
            let kinds: Vec<usize> =
                [(true, 0), (t.attributes & ATTR_NORMALS != 0, 1), (t.attributes & ATTR_TANGENTS != 0, 2)]
                    .iter()
                    .filter(|k| k.0)
                    .map(|k| k.1)
                    .collect();
            for d in &t.deltas {
                for (i, &x) in d.iter().enumerate() {
                    if t.format == MORPH_QUANTIZED {
                        let shift = kinds.get(i / 3).map_or(0, |&k| t.shifts[k]);
                        w.i16(quantize(x, shift));
                    } else {
                        w.f32(x);
                    }
                }
            }
        }
    }
}

/// Writes an MWGT section's body.
pub(super) fn write_weights(w: &mut Writer, m: &EncWeights) {
    let start = w.len();
    w.u16(m.clip);
    w.f32(m.start);
    w.f32(m.end);
    w.u16(m.tracks.len() as u16);
    let dir = w.len();
    for _ in &m.tracks {
        w.bytes(&[0; TRACK_ENTRY_LEN]);
    }
    for (i, t) in m.tracks.iter().enumerate() {
        let off = (w.len() - start) as u32;
        w.bytes(&t.data);
        let mut e = [0u8; TRACK_ENTRY_LEN];
        e[..2].copy_from_slice(&t.mesh.to_le_bytes());
        e[2] = TARGET_WEIGHTS;
        e[3] = t.interp;
        e[4] = t.format;
        e[6..8].copy_from_slice(&t.keys.to_le_bytes());
        e[8..12].copy_from_slice(&off.to_le_bytes());
        w.patch_bytes(dir + i * TRACK_ENTRY_LEN, &e);
    }
}
