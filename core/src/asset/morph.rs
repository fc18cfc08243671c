//! The morph sections, validated: MRPH (the morph targets of one mesh) and MWGT (the
//! morph-weight tracks of one clip); their views are [`crate::morph`]'s.

use super::{key_times, Asset};
use crate::format::reader::{is_finite_bits, le_u16, le_u32, ordered_bits, Reader};
use crate::format::*;
use crate::limits::MAX_MORPH_TARGETS;
use crate::morph::{weight_data_len, MorphTarget, MorphTargets, WeightTracks};

fn all_finite(d: &[u8]) -> bool {
    (0..d.len() / 4).all(|i| is_finite_bits(le_u32(d, i * 4)))
}

/// Validates MRPH section `sec` of `asset` (whose meshes are validated): a mesh after
/// `previous` (the mesh of the MRPH section before it), 1 to [`MAX_MORPH_TARGETS`] targets
/// with finite default weights, the mesh's parts with their vertex counts, and per target a
/// known format, attribute set, index size and shifts, at most the part's vertex count of
/// strictly increasing vertices below it, finite `f32` deltas; the data filling the section.
/// Returns the mesh.
pub(super) fn parse_morph(
    body: &[u8],
    sec: u16,
    asset: &Asset<'_>,
    previous: Option<usize>,
) -> Result<usize, ParseError> {
    let m = MorphTargets::header(body)?;
    let mesh = m.mesh();
    let mismatch = ParseError::MorphMeshMismatch { section: sec };
    if previous.is_some_and(|p| mesh <= p) {
        return Err(mismatch);
    }
    let mesh_data = asset.mesh(mesh).ok_or(mismatch)?;
    if m.num_targets() == 0 || m.num_targets() > MAX_MORPH_TARGETS {
        return Err(ParseError::BadMorphCount { section: sec });
    }
    if !(0..m.num_targets()).all(|i| is_finite_bits(m.default_weight::<f32>(i).to_bits())) {
        return Err(ParseError::NonFinite { section: sec });
    }
    if m.num_parts() != mesh_data.num_parts() {
        return Err(mismatch);
    }
    // The parts' bytes start after the header: mesh, count, weights, part count.
    let parts_at = 6 + 4 * m.num_targets();
    let mut r = Reader::new(body.get(parts_at..).unwrap_or(&[]));
    for (pi, mesh_part) in mesh_data.parts().enumerate() {
        let part = pi as u16;
        let vertices = r.u32()? as usize;
        if vertices != mesh_part.num_vertices() {
            return Err(mismatch);
        }
        for ti in 0..m.num_targets() {
            let target = ti as u16;
            let t = MorphTarget::read(&mut r)?;
            let (format, attributes, index_size, shifts) = t.raw_header();
            let shifts_ok = format == MORPH_F32 || shifts.iter().all(|&s| s <= MAX_MORPH_SHIFT);
            if format > MORPH_QUANTIZED
                || attributes > (ATTR_NORMALS | ATTR_TANGENTS)
                || (index_size != 2 && index_size != 4)
                || !shifts_ok
                || t.len() > vertices
            {
                return Err(ParseError::BadMorphTarget { section: sec, part, target });
            }
            let mut next = 0usize;
            for k in 0..t.len() {
                let v = t.vertex(k);
                if v < next || v >= vertices {
                    return Err(ParseError::MorphVertexIndex { section: sec, part, target });
                }
                next = v + 1;
            }
            if format == MORPH_F32 && !all_finite(t.delta_bytes()) {
                return Err(ParseError::NonFinite { section: sec });
            }
        }
    }
    if parts_at + r.pos() != body.len() {
        return Err(ParseError::BadSection { section: sec });
    }
    Ok(mesh)
}

/// Validates MWGT section `sec` of `asset` (whose clips and MRPH sections are validated): a
/// clip after `previous` with the clip's exact time range; tracks in strictly increasing mesh
/// order, each on a mesh with morph targets, of a known interpolation and format (no quantized
/// cubic spline), with keys inside the section, finite, at strictly increasing times within
/// the range; the data ending the section exactly. Returns the clip.
pub(super) fn parse_weights(
    body: &[u8],
    sec: u16,
    asset: &Asset<'_>,
    previous: Option<usize>,
) -> Result<usize, ParseError> {
    let w = WeightTracks::header(body)?;
    let mismatch = ParseError::WeightClipMismatch { section: sec };
    let clip = w.clip();
    if previous.is_some_and(|p| clip <= p) {
        return Err(mismatch);
    }
    let c = asset.clip(clip).ok_or(mismatch)?;
    if w.start().to_bits() != c.start().to_bits() || w.end().to_bits() != c.end().to_bits() {
        return Err(mismatch);
    }
    let (lo, hi) = (ordered_bits(w.start().to_bits()), ordered_bits(w.end().to_bits()));
    let dir = 12;
    let mut covered_end = dir + w.num_tracks() * TRACK_ENTRY_LEN;
    let mut last_mesh: Option<usize> = None;
    for i in 0..w.num_tracks() {
        let track = i as u16;
        let bad = ParseError::BadTrack { section: sec, track };
        let (mesh, target, interp, format, flags, keys, off) = w.entry(i);
        let mesh = mesh as usize;
        let targets = asset
            .morph_targets(mesh)
            .map(|m| m.num_targets())
            .ok_or(ParseError::WeightTrackMesh { section: sec, track })?;
        if last_mesh.is_some_and(|p| mesh <= p) {
            return Err(ParseError::DuplicateTrack { section: sec, track });
        }
        last_mesh = Some(mesh);
        if target != TARGET_WEIGHTS
            || interp > INTERP_CUBIC
            || format > FORMAT_QUANTIZED
            || keys == 0
            || flags != 0
            || (format == FORMAT_QUANTIZED && interp == INTERP_CUBIC)
        {
            return Err(bad);
        }
        let len = weight_data_len(interp, format, keys, targets).ok_or(bad)?;
        let data =
            off.checked_add(len).and_then(|end| body.get(off..end)).ok_or(ParseError::BadSection { section: sec })?;
        covered_end = covered_end.max(off + len);
        if format == FORMAT_F32 {
            key_times(data, keys, lo..=hi, sec, track)?;
            if !all_finite(data.get(keys * 4..).unwrap_or(&[])) {
                return Err(ParseError::NonFinite { section: sec });
            }
        } else {
            for k in 1..keys {
                if le_u16(data, k * 2) <= le_u16(data, (k - 1) * 2) {
                    return Err(ParseError::UnsortedKeys { section: sec, track });
                }
            }
            if !all_finite(data.get(keys * 2..keys * 2 + 8).unwrap_or(&[])) {
                return Err(ParseError::NonFinite { section: sec });
            }
        }
    }
    if covered_end != body.len() {
        return Err(ParseError::BadSection { section: sec });
    }
    Ok(clip)
}
