//! Palette splitting: one primitive's triangles grouped into parts whose bone palettes fit a
//! joint limit, vertices duplicated across parts as needed.

use std::collections::HashMap;

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
    let mut cur: Vec<u16> = Vec::new();
    let mut tris: Vec<[u32; 3]> = Vec::new();
    let flush = |cur: &mut Vec<u16>, tris: &mut Vec<[u32; 3]>, parts: &mut Vec<EncPart>| {
        if tris.is_empty() {
            return;
        }
        let local: HashMap<u16, u16> = cur.iter().enumerate().map(|(i, &j)| (j, i as u16)).collect();
        let mut vmap: HashMap<u32, u32> = HashMap::new();
        let mut part = EncPart {
            palette: cur.clone(),
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
        cur.clear();
        tris.clear();
    };
    for t in indices.chunks_exact(3) {
        let mut need: Vec<u16> = Vec::new();
        for &v in t {
            for j in vjoints(v as usize) {
                if !need.contains(&j) {
                    need.push(j);
                }
            }
        }
        if need.len() > limit {
            return Err(BakeError::PaletteTooSmall { palette: limit, needed: need.len() });
        }
        let extra = need.iter().filter(|j| !cur.contains(j)).count();
        if cur.len() + extra > limit {
            flush(&mut cur, &mut tris, parts);
        }
        for j in need {
            if !cur.contains(&j) {
                cur.push(j);
            }
        }
        tris.push([t[0], t[1], t[2]]);
    }
    flush(&mut cur, &mut tris, parts);
    Ok(())
}
