//! ufbx's load options (glTF's space, geometric transforms baked, missing normals generated,
//! memory capped) and the import's shared state: the scene, the notes, and which rig joint each
//! ufbx node became.

use std::path::Path;

use sinew::math::{Quat, Transform, Vec3};
use ufbx::{
    AllocatorOpts, CoordinateAxes, CoordinateAxis, GeometryTransformHandling, InheritModeHandling, LoadOpts, Scene,
    SpaceConversion,
};

use super::error::{one_line, FbxError};
use super::materials::Surfaces;
use super::{MAX_MEMORY, MAX_NODES, MEMORY_PER_INPUT_BYTE, MIN_MEMORY};
use crate::rig::Rig;

/// The state of one import.
pub(super) struct Importer<'s> {
    /// The scene ufbx loaded.
    pub(super) scene: &'s Scene,
    /// Where texture files are looked up.
    pub(super) base_dir: Option<&'s Path>,
    /// Memory limit of each ufbx allocator (load, bake).
    pub(super) memory: usize,
    /// Notes for [`Rig::notes`].
    pub(super) notes: Vec<String>,
    /// Rig joint of each ufbx node, by the node's typed id (`None`: ufbx's root, when it is
    /// not a joint, and nodes outside the root's tree).
    pub(super) joint_of_node: Vec<Option<usize>>,
    /// The ufbx node of each rig joint.
    pub(super) nodes: Vec<&'s ufbx::Node>,
    /// Materials and images, each converted once.
    pub(super) surfaces: Surfaces,
}

/// ufbx's memory limit for an input of `len` bytes.
pub(super) fn memory_limit(len: usize) -> usize {
    len.saturating_mul(MEMORY_PER_INPUT_BYTE).clamp(MIN_MEMORY, MAX_MEMORY)
}

/// An allocator capped at `memory` bytes.
fn allocator(memory: usize) -> AllocatorOpts {
    AllocatorOpts { memory_limit: memory, ..AllocatorOpts::default() }
}

/// Load options: glTF's space (meters, +Y up, +Z front, right-handed) folded into the nodes'
/// transforms and the geometry; geometric transforms baked into meshes (helper nodes only where
/// a mesh is instanced); scale inheritance other than the usual compensated on the children
/// (helper nodes where it cannot be); missing normals generated; normals and tangents of unit
/// length; ufbx's memory capped at `memory` bytes.
pub(super) fn load_options<'a>(memory: usize) -> LoadOpts<'a> {
    LoadOpts {
        temp_allocator: allocator(memory),
        result_allocator: allocator(memory),
        target_axes: CoordinateAxes {
            right: CoordinateAxis::PositiveX,
            up: CoordinateAxis::PositiveY,
            front: CoordinateAxis::PositiveZ,
        },
        target_unit_meters: 1.0,
        space_conversion: SpaceConversion::ModifyGeometry,
        geometry_transform_handling: GeometryTransformHandling::ModifyGeometry,
        inherit_mode_handling: InheritModeHandling::Compensate,
        generate_missing_normals: true,
        normalize_normals: true,
        normalize_tangents: true,
        ..LoadOpts::default()
    }
}

/// The baking options of an animation stack: keys at the source keys, curves that are not
/// linear resampled at `rate` per second; ufbx's memory capped at `memory` bytes.
pub(super) fn bake_options(rate: f64, memory: usize) -> ufbx::BakeOpts {
    ufbx::BakeOpts {
        temp_allocator: allocator(memory),
        result_allocator: allocator(memory),
        resample_rate: rate,
        ..ufbx::BakeOpts::default()
    }
}

/// ufbx's error as one line: its description, and its detail when it gives one.
pub(super) fn ufbx_error(what: &str, e: &ufbx::Error) -> FbxError {
    let description: &str = &e.description;
    let info = e.info();
    let description = if info.is_empty() { description.to_owned() } else { format!("{description}: {info}") };
    FbxError::Ufbx { what: one_line(what), description: one_line(&description) }
}

/// Imports a scene from `bytes` (see [`super::load_bytes`]).
pub(super) fn import(bytes: &[u8], base_dir: Option<&Path>, name: &str) -> Result<Rig, FbxError> {
    let memory = memory_limit(bytes.len());
    let scene = ufbx::load_memory(bytes, load_options(memory)).map_err(|e| ufbx_error("load", &e))?;
    let count = scene.nodes.len();
    if count > MAX_NODES {
        return Err(FbxError::TooManyNodes { count, limit: MAX_NODES });
    }
    let mut imp = Importer {
        scene: &scene,
        base_dir,
        memory,
        notes: Vec::new(),
        joint_of_node: vec![None; count],
        nodes: Vec::new(),
        surfaces: Surfaces::default(),
    };
    let joints = imp.joints()?;
    let (meshes, skins, morphs) = imp.meshes(&joints)?;
    let clips = imp.clips(&meshes, &morphs)?;
    let has_bones = imp.nodes.iter().any(|n| n.bone.is_some());
    if meshes.is_empty() && !has_bones && clips.iter().all(|c| c.channels.is_empty() && c.weights.is_empty()) {
        return Err(FbxError::Nothing);
    }
    Ok(Rig {
        name: name.to_owned(),
        joints,
        skins,
        meshes,
        clips,
        notes: imp.notes,
        meters_per_unit: None,
        source_nodes: Vec::new(),
        materials: imp.surfaces.materials,
        images: imp.surfaces.images,
        springs: None,
    })
}

/// `v` as a rig vector.
pub(super) fn vec3(v: ufbx::Vec3) -> Vec3<f32> {
    Vec3::new(v.x as f32, v.y as f32, v.z as f32)
}

/// `v` as an array.
pub(super) fn array3(v: ufbx::Vec3) -> [f32; 3] {
    [v.x as f32, v.y as f32, v.z as f32]
}

/// `q` normalized (identity when it has no length), as `[x, y, z, w]`.
pub(super) fn unit_quat(q: ufbx::Quat) -> [f64; 4] {
    let l = (q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w).sqrt();
    if l > 1.0e-12 && l.is_finite() {
        [q.x / l, q.y / l, q.z / l, q.w / l]
    } else {
        [0.0, 0.0, 0.0, 1.0]
    }
}

/// A ufbx transform as a rig transform (rotation normalized); `None` when a component is not
/// finite.
pub(super) fn transform(t: &ufbx::Transform) -> Option<Transform<f32>> {
    let q = unit_quat(t.rotation);
    let rotation = Quat::new(q[0] as f32, q[1] as f32, q[2] as f32, q[3] as f32);
    let r = Transform::new(vec3(t.translation), rotation, vec3(t.scale));
    let finite = [t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w].iter().all(|v| v.is_finite());
    (finite && r.is_finite()).then_some(r)
}

/// A ufbx affine matrix as a column-major 4 × 4 matrix; `None` when an entry is not finite.
pub(super) fn matrix(m: &ufbx::Matrix) -> Option<[f32; 16]> {
    let a = [m.m00, m.m10, m.m20, 0.0, m.m01, m.m11, m.m21, 0.0, m.m02, m.m12, m.m22, 0.0, m.m03, m.m13, m.m23, 1.0];
    a.iter().all(|v| v.is_finite() && v.abs() <= f64::from(f32::MAX)).then(|| a.map(|v| v as f32))
}

/// True when `m` is the identity within `1e-9`.
pub(super) fn is_identity(m: &ufbx::Matrix) -> bool {
    let id = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
    let a = [m.m00, m.m10, m.m20, m.m01, m.m11, m.m21, m.m02, m.m12, m.m22, m.m03, m.m13, m.m23];
    a.iter().zip(id).all(|(x, y)| (x - y).abs() <= 1.0e-9)
}
