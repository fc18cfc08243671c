//! Shell distances: how far from each joint the error of a baked clip is measured (the
//! virtual vertices of [`BakeOptions::shell`], or per joint from the mesh and
//! [`BakeOptions::min_shell`] with [`BakeOptions::shell_from_mesh`]), shared by the baker and
//! the independent measurement ([`crate::clip_error`]); and the unit scale of a rig.

use crate::bake::BakeOptions;
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

/// The shell distances a bake or a measurement with `opts` uses (scene units, one per joint of
/// `rig`): with [`BakeOptions::shell_from_mesh`], [`shells_from_mesh`] at
/// [`BakeOptions::min_shell`]; otherwise [`BakeOptions::shell`] meters for every joint
/// ([`uniform_shells`]).
#[must_use]
pub fn shells(rig: &Rig, opts: &BakeOptions) -> Vec<f64> {
    if opts.shell_from_mesh {
        shells_from_mesh(rig, opts.min_shell)
    } else {
        uniform_shells(rig, opts.shell)
    }
}

/// Per joint, the distance (in the joint's own frame and units) within which lie the mesh
/// vertices the joint's error displaces, and at least `min_shell` meters in model space.
///
/// - A joint that moves vertices itself — skinned vertices it weighs above zero, the vertices
///   of rigid meshes on it — gets the distance to the farthest of them, in its bind frame
///   (skinned: the inverse bind matrix applied to the bind position; rigid: the node's frame).
/// - Every joint gets at least its *floor*: `min_shell` meters, divided by the model's units
///   ([`meters_per_unit`]) and by the smallest scale of the joint's rest-pose world matrix (its
///   smallest singular value), so that the floor is `min_shell` meters in model space. The
///   floor bounds the rotation of joints whose vertices all lie near them or that move none (an
///   IK pole target, an attachment point): a rotation error θ moves one of the six virtual
///   vertices at distance `r` by at least √(2/3)·2·sin(θ/2)·r (for any axis of rotation, one
///   of the six lies at least √(2/3)·r from it), so an error within the bound at `r` keeps θ
///   within about bound / (√(2/3)·r).
/// - A joint that moves none itself still moves its descendants, so it gets its subtree's
///   *reach* when that is larger: the largest, over its descendants `d`, of the length of the
///   chain of rest-pose offsets from the joint down to `d` plus `d`'s own distance (each step
///   through a child `c` adds `|t_c|` and multiplies what lies below by `c`'s largest scale
///   factor, so the sum is in the joint's units). By the triangle inequality this bounds the
///   distance from the joint to any vertex or virtual vertex its subtree moves in every pose
///   that keeps the rest-pose bone offsets (however the joints turn), not only in the bind
///   pose, which the distance to the farthest such vertex measured in the bind pose would not.
///
/// The vertex bound itself holds through each vertex's own joints, whose model-space error
/// includes every ancestor's; the reach gives a vertexless joint (a hip or armature node above
/// the skinned bones) the bound its subtree sees, for the baker's per-joint budgets and the
/// reported shell error. A model without mesh vertices gets the floors and their reach.
#[must_use]
pub fn shells_from_mesh(rig: &Rig, min_shell: f64) -> Vec<f64> {
    let n = rig.joints.len();
    let (direct, moves) = direct_shells(rig);
    let floor = floors(rig, min_shell);
    let own: Vec<f64> = (0..n).map(|j| direct[j].max(floor[j])).collect();
    let mut reach = own.clone();
    // Parents come before children: walking backwards finishes each subtree before its parent.
    for j in (0..n).rev() {
        let Some(p) = rig.joints[j].parent.filter(|&p| p < j) else { continue };
        let rest = &rig.joints[j].rest;
        let t = [rest.translation.x, rest.translation.y, rest.translation.z].map(f64::from);
        let scale =
            [rest.scale.x, rest.scale.y, rest.scale.z].map(|s| f64::from(s).abs()).into_iter().fold(0.0, f64::max);
        let below = length(t) + scale * reach[j];
        if below.is_finite() {
            reach[p] = reach[p].max(below);
        }
    }
    (0..n).map(|j| if moves[j] { own[j] } else { reach[j] }).collect()
}

/// Per joint, `min_shell` meters in model space in the joint's own units: divided by the
/// model's units and by the smallest singular value of the joint's rest-pose world matrix (its
/// upper 3 × 3). A joint whose rest world matrix is singular or not finite takes `min_shell` in
/// scene units.
fn floors(rig: &Rig, min_shell: f64) -> Vec<f64> {
    let scene = min_shell / meters_per_unit(rig);
    let world = eval::model_matrices(rig, &eval::local_pose(rig, None, 0.0));
    world
        .iter()
        .map(|m| {
            let floor = scene / smallest_singular_value(m);
            if floor.is_finite() {
                floor
            } else {
                scene
            }
        })
        .collect()
}

/// The smallest singular value of `m`'s upper 3 × 3: the square root of the smallest
/// eigenvalue of `AᵀA`, by the closed form for symmetric 3 × 3 matrices.
fn smallest_singular_value(m: &M4) -> f64 {
    // AᵀA[i][j] = column i · column j.
    let dot = |i: usize, j: usize| (0..3).map(|r| m[i][r] * m[j][r]).sum::<f64>();
    let b = [[dot(0, 0), dot(0, 1), dot(0, 2)], [dot(1, 0), dot(1, 1), dot(1, 2)], [dot(2, 0), dot(2, 1), dot(2, 2)]];
    let off = b[0][1] * b[0][1] + b[0][2] * b[0][2] + b[1][2] * b[1][2];
    let smallest = if off == 0.0 {
        b[0][0].min(b[1][1]).min(b[2][2])
    } else {
        let q = (b[0][0] + b[1][1] + b[2][2]) / 3.0;
        let p = (((b[0][0] - q).powi(2) + (b[1][1] - q).powi(2) + (b[2][2] - q).powi(2) + 2.0 * off) / 6.0).sqrt();
        // C = (B − qI) / p; its determinant over 2 is the cosine of three times the angle.
        let c: [[f64; 3]; 3] =
            core::array::from_fn(|i| core::array::from_fn(|j| (b[i][j] - if i == j { q } else { 0.0 }) / p));
        let det = c[0][0] * (c[1][1] * c[2][2] - c[1][2] * c[2][1]) - c[0][1] * (c[1][0] * c[2][2] - c[1][2] * c[2][0])
            + c[0][2] * (c[1][0] * c[2][1] - c[1][1] * c[2][0]);
        let phi = (det / 2.0).clamp(-1.0, 1.0).acos() / 3.0;
        q + 2.0 * p * (phi + 2.0 * core::f64::consts::FRAC_PI_3).cos()
    };
    smallest.max(0.0).sqrt()
}

/// Per joint, the distance to the farthest mesh vertex it moves itself (0 when none) and
/// whether it moves any.
fn direct_shells(rig: &Rig) -> (Vec<f64>, Vec<bool>) {
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
    (shells, moves)
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

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn a_joint_without_vertices_takes_its_subtrees_reach() {
        let s = shells_from_mesh(&rig(), 0.0);
        // The leg and the prop: their farthest vertex.
        assert!(close(s[2], 0.3) && close(s[4], 0.25), "{s:?}");
        // The hip: 0.5 to the leg plus the leg's 0.3 (the leg's scale is 1).
        assert!(close(s[1], 0.8), "{s:?}");
        // The root: the larger of 1 to the hip plus 2 × the hip's 0.8, and 3 to the prop plus 0.25.
        assert!(close(s[0], 3.25), "{s:?}");
        // Without a floor, the leaf moves nothing and has nothing below it.
        assert_eq!(s[3], 0.0, "{s:?}");
    }

    #[test]
    fn every_joint_is_measured_at_least_at_the_floor_in_model_space() {
        let s = shells_from_mesh(&rig(), 0.125);
        // The leaf lies under the hip's scale 2: 0.0625 in its own frame is 0.125 in model space.
        assert!(close(s[3], 0.0625), "{s:?}");
        // The leg's and the prop's vertices lie farther out than the floor.
        assert!(close(s[2], 0.3) && close(s[4], 0.25), "{s:?}");
        // The reach of the hip and the root: the leaf's 0.1 + 0.0625 stays within the leg's 0.3.
        assert!(close(s[1], 0.8) && close(s[0], 3.25), "{s:?}");
        // A floor of 1 m: every joint's own distance.
        let s = shells_from_mesh(&rig(), 1.0);
        assert!(close(s[2], 0.5) && close(s[3], 0.5) && close(s[4], 1.0), "{s:?}");
        // The hip: 0.5 to the leg plus the leg's reach, 0.1 to the leaf plus its 0.5; the root: 3
        // to the prop plus 1.
        assert!(close(s[1], 1.1) && close(s[0], 4.0), "{s:?}");
    }

    #[test]
    fn the_floor_follows_the_models_units_and_the_smallest_scale() {
        let mut r = rig();
        // Inches: 0.125 m is 4.92 inches.
        r.meters_per_unit = Some(0.0254);
        let s = shells_from_mesh(&r, 0.125);
        assert!(close(s[3], 0.125 / 0.0254 / 2.0), "{s:?}");
        // A leaf under a scale of (2, 3, 0.5) turned about z: the smallest is 0.5.
        let mut r = rig();
        r.joints[1].rest.scale = Vec3::new(2.0, 3.0, 0.5);
        r.joints[1].rest.rotation = Quat::new(0.0, 0.0, 0.6f32.sin(), 0.6f32.cos());
        let s = shells_from_mesh(&r, 0.125);
        assert!(close(s[3], 0.25), "{s:?}");
    }

    #[test]
    fn the_reach_bounds_the_vertices_in_every_pose_and_the_bind_distance_does_not() {
        let rig = rig();
        let s = shells_from_mesh(&rig, 0.0);
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
    fn models_without_vertices_get_the_floors_and_their_reach() {
        let mut r = rig();
        r.meshes.clear();
        let s = shells(&r, &BakeOptions::default());
        // The leaf's floor 0.0625 (under the hip's scale 2); the leg's reach 0.1 + 0.0625; the
        // hip's 0.5 + 0.1625; the prop's floor 0.125; the root's 3 + 0.125 over 1 + 2 × 0.6625.
        let want = [3.125, 0.6625, 0.1625, 0.0625, 0.125];
        assert!(s.iter().zip(want).all(|(&a, b)| close(a, b)), "{s:?}");
        // ACL's convention: one distance for every joint, vertices or not.
        let fixed = BakeOptions { shell_from_mesh: false, ..BakeOptions::default() };
        for rig in [r, rig()] {
            let s = shells(&rig, &fixed);
            assert!(s.iter().all(|&d| (d - 0.03).abs() < 1e-12), "{s:?}");
        }
    }
}
