//! One mesh: its color, skin and node, each primitive's vertices checked, its weights limited
//! ([`super::weights`]), triangles that repeat a vertex dropped, parts split to the palette
//! size ([`super::palette`]), and each part's material ([`super::texture`]).

use sinew::asset::format::NONE;
use sinew::limits::MAX_INFLUENCES;

use super::palette::split_palette;
use super::texture::material_bytes;
use super::weights::limit_weights;
use super::write::{EncMesh, EncPart};
use super::{BakeError, BakeOptions, BakeReport};
use crate::rig::{Rig, RigMesh};

/// Bakes one mesh of the rig, counting clamped vertices and dropped triangles in `report`.
pub(super) fn bake_mesh(
    rig: &Rig,
    m: &RigMesh,
    opts: &BakeOptions,
    report: &mut BakeReport,
    textures: &std::collections::HashMap<usize, u16>,
) -> Result<EncMesh, BakeError> {
    let color = m.primitives.first().map(|p| p.color).unwrap_or([0.8, 0.8, 0.8, 1.0]);
    let color = color.map(|c| (c.clamp(0.0, 1.0) * 255.0 + 0.5) as u8);
    let skin_joints = match m.skin {
        Some(s) => Some(
            rig.skins
                .get(s)
                .ok_or_else(|| BakeError::Invalid(format!("mesh '{}' names a missing skin", m.name)))?
                .joints
                .len(),
        ),
        None => None,
    };
    // A rigid mesh follows its node; a skinned one keeps its instance's node for reference.
    let node = m.node.or(m.instance).map(|n| n as u16).unwrap_or(NONE);
    let mut parts = Vec::new();
    let kmax = opts.max_influences.clamp(1, MAX_INFLUENCES);
    for (pi, p) in m.primitives.iter().enumerate() {
        let n = p.positions.len();
        if let Some(v) = p.positions.iter().position(|q| !q.iter().all(|x| x.is_finite())) {
            return Err(BakeError::Invalid(format!("mesh '{}' primitive {pi} vertex {v} is not finite", m.name)));
        }
        let (influences, joints, weights) = match skin_joints {
            Some(sj) if p.influences > 0 => limit_weights(m, pi, p, sj, kmax, report)?,
            _ => (0, Vec::new(), Vec::new()),
        };
        if p.indices.len() % 3 != 0 || p.indices.iter().any(|&i| i as usize >= n) {
            return Err(BakeError::Invalid(format!("mesh '{}' has invalid triangle indices", m.name)));
        }
        // Triangles that repeat a vertex cover no pixel; the format rejects them.
        let indices: Vec<u32> = p
            .indices
            .chunks_exact(3)
            .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
            .flatten()
            .copied()
            .collect();
        report.degenerate_triangles += (p.indices.len() - indices.len()) / 3;
        let full: Vec<u16> = match skin_joints {
            Some(sj) if influences > 0 => (0..sj as u16).collect(),
            _ => Vec::new(),
        };
        for (what, len) in [
            ("texture coordinates", p.texcoords.as_ref().map(Vec::len)),
            ("vertex colors", p.colors.as_ref().map(Vec::len)),
        ] {
            if len.is_some_and(|l| l != n) {
                return Err(BakeError::Invalid(format!(
                    "mesh '{}' primitive {pi} has {what} for {len:?} of {n} vertices",
                    m.name
                )));
            }
        }
        if p.texcoords.as_ref().is_some_and(|t| !t.iter().flatten().all(|x| x.is_finite())) {
            return Err(BakeError::Invalid(format!(
                "mesh '{}' primitive {pi} has non-finite texture coordinates",
                m.name
            )));
        }
        let material = material_bytes(rig, p, textures);
        let first = parts.len();
        let split = match (opts.palette, influences) {
            (Some(limit), k) if k > 0 && full.len() > limit => Some(limit),
            _ => None,
        };
        match split {
            None => parts.push(EncPart {
                palette: full,
                positions: p.positions.clone(),
                normals: p.normals.clone(),
                tangents: p.tangents.clone(),
                influences,
                joints,
                weights,
                indices,
                texcoords: p.texcoords.clone(),
                colors: p.colors.clone(),
                material,
                primitive: pi,
                source: Vec::new(),
            }),
            Some(limit) => {
                let first = parts.len();
                split_palette(p, &indices, influences, &joints, &weights, limit, &mut parts)?;
                parts.iter_mut().skip(first).for_each(|part| part.primitive = pi);
            }
        }
        for part in parts.get_mut(first..).unwrap_or_default() {
            part.material = material;
            if material[4..6] == NONE.to_le_bytes() {
                // No texture reads them.
                part.texcoords = None;
            }
        }
    }
    Ok(EncMesh { name: m.name.clone(), skin: m.skin.map(|s| s as u16).unwrap_or(NONE), node, color, parts })
}
