//! Palette splitting: one primitive's triangles grouped into parts whose bone palettes fit a
//! joint limit (the core's [`sinew::partition`]), vertices duplicated across parts as needed.
//! Each part keeps its triangles in the primitive's order, and its palette lists the joints in
//! the order those triangles first use them.

use std::collections::HashMap;

use sinew::partition::{partition, scratch_len, PartitionError, TriangleJoints};

use super::write::EncPart;
use super::BakeError;
use crate::rig::RigPrimitive;

/// Splits one primitive's triangles into parts whose joint sets fit `limit`.
pub(super) fn split_palette(
    p: &RigPrimitive,
    indices: &[u32],
    k: usize,
    joints: &[u16],
    weights: &[f32],
    limit: usize,
    parts: &mut Vec<EncPart>,
) -> Result<(), BakeError> {
    let vjoints = |v: usize| (0..k).filter(move |&i| weights[v * k + i] != 0.0).map(move |i| joints[v * k + i]);
    let flush = |cur: &[u16], tris: &[[u32; 3]], parts: &mut Vec<EncPart>| {
        let local: HashMap<u16, u16> = cur.iter().enumerate().map(|(i, &j)| (j, i as u16)).collect();
        let mut vmap: HashMap<u32, u32> = HashMap::new();
        let mut part = EncPart {
            palette: cur.to_vec(),
            positions: Vec::new(),
            normals: p.normals.as_ref().map(|_| Vec::new()),
            tangents: p.tangents.as_ref().map(|_| Vec::new()),
            influences: k,
            joints: Vec::new(),
            weights: Vec::new(),
            indices: Vec::new(),
            texcoords: p.texcoords.as_ref().map(|_| Vec::new()),
            colors: p.colors.as_ref().map(|_| Vec::new()),
            material: [0; sinew::asset::format::MATERIAL_LEN],
            primitive: 0,
            source: Vec::new(),
        };
        for t in tris.iter() {
            for &v in t {
                let nv = *vmap.entry(v).or_insert_with(|| {
                    let vi = v as usize;
                    part.source.push(v);
                    part.positions.push(p.positions[vi]);
                    if let (Some(dst), Some(src)) = (part.normals.as_mut(), p.normals.as_ref()) {
                        dst.push(src.get(vi).copied().unwrap_or([0.0; 3]));
                    }
                    if let (Some(dst), Some(src)) = (part.tangents.as_mut(), p.tangents.as_ref()) {
                        dst.push(src.get(vi).copied().unwrap_or([0.0; 4]));
                    }
                    if let (Some(dst), Some(src)) = (part.texcoords.as_mut(), p.texcoords.as_ref()) {
                        dst.push(src.get(vi).copied().unwrap_or([0.0; 2]));
                    }
                    if let (Some(dst), Some(src)) = (part.colors.as_mut(), p.colors.as_ref()) {
                        dst.push(src.get(vi).copied().unwrap_or([1.0; 4]));
                    }
                    for i in 0..k {
                        let w = weights[vi * k + i];
                        part.joints.push(if w == 0.0 {
                            0
                        } else {
                            local.get(&joints[vi * k + i]).copied().unwrap_or(0)
                        });
                        part.weights.push(w);
                    }
                    (part.positions.len() - 1) as u32
                });
                part.indices.push(nv);
            }
        }
        parts.push(part);
    };
    let triangles: Vec<[u32; 3]> = indices.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
    let mut sets = Vec::with_capacity(triangles.len());
    for t in &triangles {
        let mut set = TriangleJoints::EMPTY;
        let mut all: Vec<u16> = t.iter().flat_map(|&v| vjoints(v as usize)).collect();
        if !all.iter().all(|&j| set.insert(j)) {
            all.sort_unstable();
            all.dedup();
            return Err(BakeError::PaletteTooSmall { palette: limit, needed: all.len() });
        }
        sets.push(set);
    }
    let num_joints = joints.iter().map(|&j| j as usize + 1).max().unwrap_or(0);
    let mut scratch = vec![0; scratch_len(&sets, num_joints)];
    let (mut part_of, mut order) = (vec![0u16; sets.len()], vec![0u32; sets.len()]);
    match partition(&sets, num_joints, limit, &mut scratch, &mut part_of, &mut order) {
        Ok(_) => {}
        Err(PartitionError::TriangleTooLarge { joints, .. }) => {
            return Err(BakeError::PaletteTooSmall { palette: limit, needed: joints })
        }
        // The sets were built from `joints` above and the buffers sized by `scratch_len`.
        Err(_) => return Err(BakeError::PaletteTooSmall { palette: limit, needed: num_joints }),
    }
    // Each part's triangles (`order` lists them part after part) and its joints in first use.
    for ts in order.chunk_by(|&a, &b| part_of.get(a as usize) == part_of.get(b as usize)) {
        let group: Vec<[u32; 3]> = ts.iter().filter_map(|&t| triangles.get(t as usize).copied()).collect();
        let mut cur: Vec<u16> = Vec::new();
        for &j in ts.iter().filter_map(|&t| sets.get(t as usize)).flat_map(TriangleJoints::as_slice) {
            if !cur.contains(&j) {
                cur.push(j);
            }
        }
        flush(&cur, &group, parts);
    }
    Ok(())
}
