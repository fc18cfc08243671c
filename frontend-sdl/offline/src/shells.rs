//! Shell distances: how far from each joint the error of a baked clip is measured (the
//! virtual vertices of `BakeOptions::shell`, or per joint from the mesh with
//! `BakeOptions::shell_from_mesh`), shared by the baker and the independent measurement
//! ([`crate::clip_error`]); and the unit scale of a rig.

use crate::eval::{self, M4};
use crate::rig::Rig;

/// The scale from scene units to meters of `rig`.
#[must_use]
pub fn meters_per_unit(rig: &Rig) -> f64 {
    rig.meters_per_unit.filter(|u| *u > 0.0 && u.is_finite()).unwrap_or(1.0)
}

/// One shell distance, `shell` meters, for every joint of `rig`, in scene units.
#[must_use]
pub fn uniform_shells(rig: &Rig, shell: f64) -> Vec<f64> {
    vec![shell / meters_per_unit(rig); rig.joints.len()]
}

/// Per joint, the distance (scene units, in the joint's bind frame) to the farthest mesh vertex
/// it moves: skinned vertices it weighs with a weight above zero, and the vertices of rigid
/// meshes on it. Joints that move no vertex get 0. `None` when no joint moves any vertex (a
/// model without meshes).
#[must_use]
pub fn shells_from_mesh(rig: &Rig) -> Option<Vec<f64>> {
    let mut shells = vec![0.0f64; rig.joints.len()];
    let mut any = false;
    for mesh in &rig.meshes {
        match mesh.skin.and_then(|s| rig.skins.get(s)) {
            Some(skin) => {
                for p in &mesh.primitives {
                    for (v, pos) in p.positions.iter().enumerate() {
                        for (ji, w) in influences(p.influences, &p.joint_indices, &p.joint_weights, v) {
                            let (Some(&joint), Some(ib)) = (skin.joints.get(ji), skin.inverse_bind.get(ji)) else {
                                continue;
                            };
                            if w > 0.0 && joint < shells.len() {
                                let local = eval::transform_point(&m4_of(ib), pos.map(f64::from));
                                shells[joint] = shells[joint].max(length(local));
                                any = true;
                            }
                        }
                    }
                }
            }
            None => {
                let Some(node) = mesh.node.filter(|&n| n < shells.len()) else { continue };
                // Rigid vertices are in the node's frame.
                for p in &mesh.primitives {
                    for pos in &p.positions {
                        let d = length(pos.map(f64::from));
                        shells[node] = shells[node].max(d);
                        any = true;
                    }
                }
            }
        }
    }
    any.then_some(shells)
}

/// Length of a vector.
pub(crate) fn length(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// A column-major `f32` matrix in `f64`.
pub(crate) fn m4_of(m: &[f32; 16]) -> M4 {
    core::array::from_fn(|c| core::array::from_fn(|r| f64::from(m[4 * c + r])))
}

/// The influences of vertex `v` with a weight above zero, weights normalized to sum 1:
/// (skin-joint index, weight). Empty when the vertex has no positive weight or its entries are
/// missing.
pub(crate) fn influences(k: usize, joints: &[u16], weights: &[f32], v: usize) -> Vec<(usize, f64)> {
    let range = v.saturating_mul(k)..v.saturating_mul(k).saturating_add(k);
    let (Some(js), Some(ws)) = (joints.get(range.clone()), weights.get(range)) else { return Vec::new() };
    let list: Vec<(usize, f64)> = js
        .iter()
        .zip(ws)
        .filter(|(_, &w)| w > 0.0 && w.is_finite())
        .map(|(&j, &w)| (usize::from(j), f64::from(w)))
        .collect();
    let sum: f64 = list.iter().map(|(_, w)| w).sum();
    if sum > 0.0 {
        list.into_iter().map(|(j, w)| (j, w / sum)).collect()
    } else {
        Vec::new()
    }
}
