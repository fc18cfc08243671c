//! Conversion of a parsed mesh and anims into a [`Rig`]: the joints (local rest transforms from
//! the model-space bind pose) and one skin over all of them, one mesh per `mesh { }` block
//! (weights to bind positions and influences, triangles turned counter-clockwise, normals), and
//! one clip per anim (frames to linear keys, rotations kept in one hemisphere).

use sinew::math::{Quat, Vec3};

use super::anim::Md5Anim;
use super::error::{Location, Md5Error, Md5File};
use super::mesh::{bind_position, rest_and_inverse_bind, Md5Joint, Md5Mesh, Md5MeshPart};
use crate::import::names::{or_fallback, UniqueNames};
use crate::rig::{ChannelTarget, Interpolation, Rig, RigChannel, RigClip, RigJoint, RigMesh, RigPrimitive, RigSkin};

/// How far from 1 a vertex's bias sum may be before it is noted.
const WEIGHT_SUM_TOLERANCE: f32 = 1e-3;

/// Per-mesh colors (linear RGBA), cycled.
const PALETTE: [[f32; 4]; 8] = [
    [0.80, 0.62, 0.45, 1.0],
    [0.35, 0.55, 0.85, 1.0],
    [0.85, 0.35, 0.30, 1.0],
    [0.40, 0.75, 0.40, 1.0],
    [0.85, 0.75, 0.30, 1.0],
    [0.65, 0.45, 0.80, 1.0],
    [0.35, 0.75, 0.75, 1.0],
    [0.75, 0.75, 0.75, 1.0],
];

/// The file stem of a shader path written with `/` or `\` separators.
fn shader_stem(shader: &str) -> &str {
    let file = shader.rsplit(['/', '\\']).next().unwrap_or(shader);
    match file.rfind('.') {
        Some(dot) if dot > 0 => file.get(..dot).unwrap_or(file),
        _ => file,
    }
}

/// Fails with [`Md5Error::HierarchyMismatch`] when `anim`'s hierarchy is not `mesh`'s joints.
fn check_hierarchy(mesh: &Md5Mesh, anim: &Md5Anim) -> Result<(), Md5Error> {
    let at = |line: u32| Location { file: Md5File::Anim, line };
    for (j, (mj, aj)) in mesh.joints.iter().zip(&anim.joints).enumerate() {
        if mj.name != aj.name || mj.parent != aj.parent {
            let line = anim.hierarchy_lines.get(j).copied().unwrap_or(anim.num_joints_line);
            return Err(Md5Error::HierarchyMismatch { at: at(line), joint: j });
        }
    }
    if mesh.joints.len() != anim.joints.len() {
        return Err(Md5Error::HierarchyMismatch {
            at: at(anim.num_joints_line),
            joint: mesh.joints.len().min(anim.joints.len()),
        });
    }
    Ok(())
}

/// The primitive of one `mesh { }` block in the bind pose, with the count of vertices whose
/// biases do not sum to 1 and the largest such difference.
fn build_primitive(
    part: &Md5MeshPart,
    joints: &[Md5Joint],
    color: [f32; 4],
    at: Location,
) -> Result<(RigPrimitive, usize, f32), Md5Error> {
    let influences = part.verts.iter().map(|v| v.weight_count).max().unwrap_or(0);
    let mut positions = Vec::with_capacity(part.verts.len());
    let mut joint_indices = Vec::with_capacity(part.verts.len().saturating_mul(influences));
    let mut joint_weights = Vec::with_capacity(part.verts.len().saturating_mul(influences));
    let mut off_sum = 0usize;
    let mut worst = 0.0f32;
    for v in &part.verts {
        let end = v.start_weight.saturating_add(v.weight_count);
        let weights = part.weights.get(v.start_weight..end).ok_or(Md5Error::IndexOutOfRange {
            at,
            what: "vertex weight range",
            index: i64::try_from(end).unwrap_or(i64::MAX),
            limit: part.weights.len(),
        })?;
        let p = bind_position(weights, joints).ok_or(Md5Error::IndexOutOfRange {
            at,
            what: "weight joint",
            index: i64::try_from(joints.len()).unwrap_or(i64::MAX),
            limit: joints.len(),
        })?;
        let mut sum = 0.0f32;
        for w in weights {
            sum += w.bias;
            let index = u16::try_from(w.joint).map_err(|_| Md5Error::TooLarge {
                at,
                what: "joint index",
                value: w.joint as u64,
                max: u64::from(u16::MAX),
            })?;
            joint_indices.push(index);
            joint_weights.push(w.bias);
        }
        for _ in weights.len()..influences {
            joint_indices.push(0);
            joint_weights.push(0.0);
        }
        let dev = (sum - 1.0).abs();
        if dev.is_nan() || dev > WEIGHT_SUM_TOLERANCE {
            off_sum += 1;
            worst = worst.max(dev);
        }
        positions.push(p.to_array());
    }

    // Doom 3 is clockwise-front; swap the last two corners for counter-clockwise.
    let mut indices = Vec::with_capacity(part.tris.len() * 3);
    let mut normals = vec![Vec3::<f32>::ZERO; positions.len()];
    for &[a, b, c] in &part.tris {
        let tri = [a, c, b];
        indices.extend_from_slice(&tri);
        let corner = |i: u32| positions.get(i as usize).map(|&p| Vec3::from_array(p));
        let (Some(p0), Some(p1), Some(p2)) = (corner(tri[0]), corner(tri[1]), corner(tri[2])) else {
            return Err(Md5Error::IndexOutOfRange {
                at,
                what: "triangle vertex",
                index: i64::from(a.max(b).max(c)),
                limit: positions.len(),
            });
        };
        // Twice the face's area along its normal: summing it weights faces by area.
        let n = (p1 - p0).cross(p2 - p0);
        for i in tri {
            if let Some(slot) = normals.get_mut(i as usize) {
                *slot += n;
            }
        }
    }
    let normals = normals
        .into_iter()
        .map(|n| {
            let l = n.length_squared().sqrt();
            if l > 0.0 && l.is_finite() {
                [n.x / l, n.y / l, n.z / l]
            } else {
                [0.0, 0.0, 1.0]
            }
        })
        .collect();

    let prim = RigPrimitive {
        positions,
        normals: Some(normals),
        tangents: None,
        influences,
        joint_indices,
        joint_weights,
        indices,
        color,
        ..RigPrimitive::default()
    };
    Ok((prim, off_sum, worst))
}

/// The clip of an anim: a linear translation and rotation channel per joint, one key per frame.
fn build_clip(name: &str, anim: &Md5Anim) -> RigClip {
    let joints = anim.joints.len();
    let frames = anim.frame_count;
    let times: Vec<f32> = (0..frames).map(|f| f as f32 / anim.frame_rate).collect();
    let mut translations: Vec<Vec<f32>> = (0..joints).map(|_| Vec::with_capacity(frames * 3)).collect();
    let mut rotations: Vec<Vec<f32>> = (0..joints).map(|_| Vec::with_capacity(frames * 4)).collect();
    let mut previous: Vec<Option<Quat<f32>>> = vec![None; joints];
    let mut pose = Vec::with_capacity(joints);
    for frame in 0..frames {
        // Frames were validated by `parse_anim`; a failure leaves the pose empty and no key.
        if anim.pose_into(frame, &mut pose).is_err() {
            pose.clear();
        }
        for (j, t) in pose.iter().enumerate() {
            let mut q = t.rotation;
            if let Some(Some(prev)) = previous.get(j) {
                if prev.dot(q) < 0.0 {
                    q = -q;
                }
            }
            if let Some(slot) = previous.get_mut(j) {
                *slot = Some(q);
            }
            if let Some(values) = translations.get_mut(j) {
                values.extend_from_slice(&t.translation.to_array());
            }
            if let Some(values) = rotations.get_mut(j) {
                values.extend_from_slice(&q.to_array());
            }
        }
    }
    let mut channels = Vec::with_capacity(joints * 2);
    for (j, (tv, rv)) in translations.into_iter().zip(rotations).enumerate() {
        channels.push(RigChannel {
            joint: j,
            target: ChannelTarget::Translation,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: tv,
        });
        channels.push(RigChannel {
            joint: j,
            target: ChannelTarget::Rotation,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: rv,
        });
    }
    RigClip { name: name.to_owned(), channels, ..RigClip::default() }
}

/// Builds a [`Rig`] named `name` from a parsed mesh and any number of parsed anims, each with its
/// clip name (see the [module docs](super) for the mapping).
///
/// # Errors
///
/// [`Md5Error::HierarchyMismatch`] when an anim's hierarchy differs from the mesh's joints in
/// count, a name or a parent (located at the anim's hierarchy entry or its `numJoints`).
pub fn to_rig(mesh: &Md5Mesh, anims: &[(&str, &Md5Anim)], name: &str) -> Result<Rig, Md5Error> {
    for (_, anim) in anims {
        check_hierarchy(mesh, anim)?;
    }
    let at = Location { file: Md5File::Mesh, line: mesh.num_joints_line };
    let mut notes = Vec::new();

    let mut joint_names = UniqueNames::default();
    let mut joints = Vec::with_capacity(mesh.joints.len());
    let mut inverse_bind = Vec::with_capacity(mesh.joints.len());
    let mut renamed = 0usize;
    for (i, j) in mesh.joints.iter().enumerate() {
        let joint_name = joint_names.make(or_fallback(Some(&j.name), || format!("joint{i}")), i);
        if joint_name != j.name {
            renamed += 1;
        }
        let (rest, inverse) = rest_and_inverse_bind(&mesh.joints, j);
        joints.push(RigJoint { name: joint_name, parent: j.parent, rest });
        inverse_bind.push(inverse);
    }
    if renamed > 0 {
        notes.push(format!("md5: {renamed} empty or repeated joint names were made unique"));
    }
    let skins = vec![RigSkin { name: name.to_owned(), joints: (0..mesh.joints.len()).collect(), inverse_bind }];

    let mut meshes = Vec::with_capacity(mesh.meshes.len());
    let mut mesh_names = UniqueNames::default();
    for (i, part) in mesh.meshes.iter().enumerate() {
        let color = PALETTE.get(i % PALETTE.len()).copied().unwrap_or([1.0; 4]);
        let (prim, off_sum, worst) = build_primitive(part, &mesh.joints, color, at)?;
        let mesh_name = mesh_names.make(or_fallback(Some(shader_stem(&part.shader)), || format!("mesh{i}")), i);
        if off_sum > 0 {
            notes.push(format!(
                "md5: {off_sum} vertices of mesh {mesh_name} have weights whose sum is off 1 by up to {worst}; kept as is"
            ));
        }
        meshes.push(RigMesh {
            name: mesh_name,
            skin: Some(0),
            node: None,
            primitives: vec![prim],
            ..RigMesh::default()
        });
    }
    if mesh.meshes.iter().any(|m| !m.verts.is_empty()) {
        notes.push("md5: texture coordinates and shader names are not kept (mesh names come from shaders)".to_owned());
    }

    let mut clips = Vec::with_capacity(anims.len());
    let mut clip_names = UniqueNames::default();
    for (i, (clip_name, anim)) in anims.iter().enumerate() {
        let clip_name = clip_names.make(or_fallback(Some(clip_name), || format!("clip{i}")), i);
        clips.push(build_clip(&clip_name, anim));
    }
    if !anims.is_empty() {
        notes.push("md5: anim bounds are not kept".to_owned());
    }

    Ok(Rig {
        name: name.to_owned(),
        joints,
        skins,
        meshes,
        clips,
        notes,
        meters_per_unit: Some(0.0254),
        ..Rig::default()
    })
}
