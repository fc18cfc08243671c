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

/// The shell distances a bake or a measurement uses (scene units, one per joint of `rig`), and
/// whether they came from the mesh: with `from_mesh`, [`shells_from_mesh`] when the model has
/// mesh vertices; otherwise, or for a model without them, `shell` meters for every joint
/// ([`uniform_shells`]).
#[must_use]
pub fn shells(rig: &Rig, shell: f64, from_mesh: bool) -> (Vec<f64>, bool) {
    match from_mesh.then(|| shells_from_mesh(rig)).flatten() {
        Some(s) => (s, true),
        None => (uniform_shells(rig, shell), false),
    }
}

/// Per joint, the distance (in the joint's own frame and units) within which lie the mesh
/// vertices the joint's error displaces. `None` when no joint moves any vertex (a model
/// without meshes).
///
/// - A joint that moves vertices itself — skinned vertices it weighs above zero, the vertices
///   of rigid meshes on it — gets the distance to the farthest of them, in its bind frame
///   (skinned: the inverse bind matrix applied to the bind position; rigid: the node's frame).
/// - A joint that moves none itself still moves its descendants' vertices, so it gets its
///   subtree's *reach*: the largest, over its descendants `d` that move vertices, of the length
///   of the chain of rest-pose offsets from the joint down to `d` plus `d`'s own distance
///   (each step through a child `c` adds `|t_c|` and multiplies what lies below by `c`'s
///   largest scale factor, so the sum is in the joint's units). By the triangle inequality this
///   bounds the distance from the joint to any vertex its subtree moves in every pose that
///   keeps the rest-pose bone offsets (however the joints turn), not only in the bind pose,
///   which the distance to the farthest such vertex measured in the bind pose would not.
/// - A joint whose subtree moves no vertex gets 0: its error displaces nothing.
///
/// The vertex bound itself holds through each vertex's own joints, whose model-space error
/// includes every ancestor's; the reach gives a vertexless joint (a hip or armature node above
/// the skinned bones) the bound its subtree's vertices see, for the baker's per-joint budgets
/// and the reported shell error.
#[must_use]
pub fn shells_from_mesh(rig: &Rig) -> Option<Vec<f64>> {
    let (direct, moves) = direct_shells(rig)?;
    let mut reach = direct.clone();
    // Whether the joint's subtree moves any vertex.
    let mut live = moves.clone();
    // Parents come before children: walking backwards finishes each subtree before its parent.
    for j in (0..rig.joints.len()).rev() {
        let Some(p) = rig.joints[j].parent.filter(|&p| p < j) else { continue };
        if live[j] {
            let rest = &rig.joints[j].rest;
            let t = [rest.translation.x, rest.translation.y, rest.translation.z].map(f64::from);
            let scale =
                [rest.scale.x, rest.scale.y, rest.scale.z].map(|s| f64::from(s).abs()).into_iter().fold(0.0, f64::max);
            reach[p] = reach[p].max(length(t) + scale * reach[j]);
            live[p] = true;
        }
    }
    Some((0..rig.joints.len()).map(|j| if moves[j] { direct[j] } else { reach[j] }).collect())
}

/// Per joint, the distance to the farthest mesh vertex it moves itself (0 when none) and
/// whether it moves any; `None` when no joint moves any vertex.
fn direct_shells(rig: &Rig) -> Option<(Vec<f64>, Vec<bool>)> {
    let mut shells = vec![0.0f64; rig.joints.len()];
    let mut moves = vec![false; rig.joints.len()];
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
                                moves[joint] = true;
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
                        shells[node] = shells[node].max(length(pos.map(f64::from)));
                        moves[node] = true;
                    }
                }
            }
        }
    }
    moves.iter().any(|&m| m).then_some((shells, moves))
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

#[cfg(test)]
mod tests {
    use sinew::math::{Quat, Transform, Vec3};

    use super::*;
    use crate::eval::{local_pose, model_matrices};
    use crate::rig::{RigJoint, RigMesh, RigPrimitive, RigSkin};

    const IDENTITY: [f32; 16] = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];

    fn joint(name: &str, parent: Option<usize>, t: [f32; 3], scale: f32) -> RigJoint {
        let rest = Transform {
            translation: Vec3::new(t[0], t[1], t[2]),
            rotation: Quat::IDENTITY,
            scale: Vec3::new(scale, scale, scale),
        };
        RigJoint { name: name.to_owned(), parent, rest }
    }

    /// A root; a hip (scale 2) that moves no vertex itself; a leg below it that weighs one
    /// vertex 0.3 from itself; a leaf below the leg that moves nothing; and a rigid prop on a
    /// node under the root, its farthest vertex 0.25 from the node.
    fn rig() -> Rig {
        let skinned = RigPrimitive {
            positions: vec![[0.0, 0.0, 0.3], [0.0, 0.1, 0.0]],
            influences: 1,
            joint_indices: vec![0, 0],
            joint_weights: vec![1.0, 1.0],
            ..RigPrimitive::default()
        };
        let prop = RigPrimitive { positions: vec![[0.0, 0.25, 0.0], [0.1, 0.0, 0.0]], ..RigPrimitive::default() };
        Rig {
            joints: vec![
                joint("root", None, [0.0, 0.0, 0.0], 1.0),
                joint("hip", Some(0), [0.0, 1.0, 0.0], 2.0),
                joint("leg", Some(1), [0.5, 0.0, 0.0], 1.0),
                joint("leaf", Some(2), [0.0, 0.0, 0.1], 1.0),
                joint("prop", Some(0), [3.0, 0.0, 0.0], 1.0),
            ],
            // The leg's inverse bind is the identity: its vertices are given in its frame.
            skins: vec![RigSkin { name: "skin".to_owned(), joints: vec![2], inverse_bind: vec![IDENTITY] }],
            meshes: vec![
                RigMesh { skin: Some(0), primitives: vec![skinned], ..RigMesh::default() },
                RigMesh { node: Some(4), primitives: vec![prop], ..RigMesh::default() },
            ],
            ..Rig::default()
        }
    }

    #[test]
    fn a_joint_without_vertices_takes_its_subtrees_reach() {
        let s = shells_from_mesh(&rig()).expect("the rig has vertices");
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        // The leg and the prop: their farthest vertex.
        assert!(close(s[2], 0.3) && close(s[4], 0.25), "{s:?}");
        // The hip: 0.5 to the leg plus the leg's 0.3 (the leg's scale is 1).
        assert!(close(s[1], 0.8), "{s:?}");
        // The root: the larger of 1 to the hip plus 2 × the hip's 0.8, and 3 to the prop plus 0.25.
        assert!(close(s[0], 3.25), "{s:?}");
        // The leaf moves nothing and has nothing below it.
        assert_eq!(s[3], 0.0, "{s:?}");
    }

    #[test]
    fn the_reach_bounds_the_vertices_in_every_pose_and_the_bind_distance_does_not() {
        let rig = rig();
        let s = shells_from_mesh(&rig).expect("the rig has vertices");
        let bind_distance = length([0.5, 0.0, 0.3]);
        let mut widest = 0.0f64;
        for step in 0..64 {
            let mut pose = local_pose(&rig, None, 0.0);
            let a = f64::from(step) * 0.1;
            // Turn the hip about z and the leg about y by different angles.
            pose[1].r = [0.0, 0.0, (a / 2.0).sin(), (a / 2.0).cos()];
            pose[2].r = [0.0, (0.7 * a).sin(), 0.0, (0.7 * a).cos()];
            let m = model_matrices(&rig, &pose);
            let vertex = eval::transform_point(&m[2], [0.0, 0.0, 0.3]);
            let from = |j: usize| length(core::array::from_fn(|k| vertex[k] - m[j][3][k]));
            // The hip's frame has scale 2: its distances are half the world's.
            let in_hip = from(1) / 2.0;
            assert!(in_hip <= s[1] + 1e-9 && from(0) <= s[0] + 1e-9, "{in_hip} {} {s:?}", from(0));
            widest = widest.max(in_hip);
        }
        // Turned straight, the leg's vertex lies farther from the hip than in the bind pose.
        assert!(widest > bind_distance + 0.2 && widest <= s[1] + 1e-9, "{widest} {bind_distance}");
    }

    #[test]
    fn models_without_vertices_keep_the_fixed_shell() {
        let mut r = rig();
        r.meshes.clear();
        assert!(shells_from_mesh(&r).is_none());
        let (s, from_mesh) = shells(&r, 0.03, true);
        assert!(!from_mesh && s.iter().all(|&d| (d - 0.03).abs() < 1e-12), "{s:?}");
        let (s, from_mesh) = shells(&rig(), 0.03, false);
        assert!(!from_mesh && s.iter().all(|&d| (d - 0.03).abs() < 1e-12), "{s:?}");
        let (s, from_mesh) = shells(&rig(), 0.03, true);
        assert!(from_mesh && (s[1] - 0.8).abs() < 1e-6, "{s:?}");
    }
}
