//! The host-side model every importer produces and the baker consumes: a node hierarchy, skins,
//! skinned meshes with their morph targets, clips (joint channels and morph-weight channels),
//! and spring bones ([`SpringBones`], baked into the file's spring section), all in `f32` as read
//! from the file.

use sinew::math::Transform;

pub use crate::import::gltf::springs::{
    ColliderShape, ResolvedSpringJoint, Spring, SpringBones, SpringCollider, SpringColliderGroup, SpringJoint,
    SpringParams, SpringSource,
};
pub use crate::material::{FilterMode, RigImage, RigMaterial, RigSampler, RigTexture};

/// One imported model.
#[derive(Debug, Clone, Default)]
pub struct Rig {
    /// Human-readable name (usually the file stem).
    pub name: String,
    /// Every node of the hierarchy, parents before children. Joints of skins and nodes above
    /// them (an armature root, say) are all kept so world transforms are right.
    pub joints: Vec<RigJoint>,
    /// Skins: which joints deform meshes, with their inverse bind matrices.
    pub skins: Vec<RigSkin>,
    /// Meshes (skinned or rigid).
    pub meshes: Vec<RigMesh>,
    /// Animation clips.
    pub clips: Vec<RigClip>,
    /// Things the importer skipped or changed, one line each (unsupported channels, clamped
    /// influences, ...), for `sinew info` and logs.
    pub notes: Vec<String>,
    /// Length of one scene unit in meters, when the format says (md5: 1 inch); `None` means
    /// meters (glTF). The baker states its tolerances in meters and converts with this.
    pub meters_per_unit: Option<f64>,
    /// For each joint, the index of the node it was imported from in the source file (glTF
    /// node indices); empty when the source numbers no nodes (md5, built-in rigs).
    pub source_nodes: Vec<usize>,
    /// Materials the primitives use ([`RigPrimitive::material`]).
    pub materials: Vec<RigMaterial>,
    /// Decoded images the materials' textures use.
    pub images: Vec<RigImage>,
    /// Spring bones (VRM's `VRMC_springBone` or VRM 0.x `secondaryAnimation`), on the joints of
    /// [`Self::joints`]; `None` when the file has none.
    pub springs: Option<SpringBones>,
}

/// One node of the hierarchy.
#[derive(Debug, Clone)]
pub struct RigJoint {
    /// Node name; unique within the rig (importers make unnamed or duplicate names unique).
    pub name: String,
    /// Parent index into [`Rig::joints`], always smaller than this joint's index.
    pub parent: Option<usize>,
    /// Rest (bind-time local) transform.
    pub rest: Transform<f32>,
}

/// A skin: an ordered list of joints and their inverse bind matrices.
#[derive(Debug, Clone)]
pub struct RigSkin {
    /// Skin name.
    pub name: String,
    /// Skin joint `i` is `joints[i]`, an index into [`Rig::joints`].
    pub joints: Vec<usize>,
    /// Inverse bind matrix of each skin joint, column-major (identity where the file has none).
    pub inverse_bind: Vec<[f32; 16]>,
}

/// A mesh: one or more primitives sharing a skin.
#[derive(Debug, Clone, Default)]
pub struct RigMesh {
    /// Mesh name.
    pub name: String,
    /// Skin index into [`Rig::skins`], or `None` for a rigid mesh.
    pub skin: Option<usize>,
    /// For a rigid mesh, the joint (node) it is attached to.
    pub node: Option<usize>,
    /// The primitives, in file order.
    pub primitives: Vec<RigPrimitive>,
    /// Default morph weights of this mesh instance, one per morph target (every primitive has
    /// that many targets); empty without morph targets.
    pub weights: Vec<f32>,
    /// The joint (node) that instances the mesh, skinned or rigid, when the format says.
    pub instance: Option<usize>,
}

impl RigMesh {
    /// Number of morph targets (of every primitive).
    #[must_use]
    pub fn num_targets(&self) -> usize {
        self.weights.len()
    }
}

/// One morph target of a primitive: a delta per vertex (zero where the file has none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RigMorphTarget {
    /// Position deltas (as many as the primitive's positions).
    pub positions: Vec<[f32; 3]>,
    /// Normal deltas, if the target has them.
    pub normals: Option<Vec<[f32; 3]>>,
    /// Tangent deltas (xyz), if the target has them.
    pub tangents: Option<Vec<[f32; 3]>>,
}

/// Indexed triangles with per-vertex attributes.
#[derive(Debug, Clone, Default)]
pub struct RigPrimitive {
    /// Bind-pose positions.
    pub positions: Vec<[f32; 3]>,
    /// Bind-pose normals (same count as positions), if present.
    pub normals: Option<Vec<[f32; 3]>>,
    /// Bind-pose tangents with handedness in w, if present.
    pub tangents: Option<Vec<[f32; 4]>>,
    /// Influences per vertex (0 for a rigid primitive). Every influence the file has is kept.
    pub influences: usize,
    /// Skin-joint index of each influence: `positions.len() × influences` entries.
    pub joint_indices: Vec<u16>,
    /// Weight of each influence: `positions.len() × influences` entries.
    pub joint_weights: Vec<f32>,
    /// Triangle list indices (three per triangle).
    pub indices: Vec<u32>,
    /// Base color (linear RGBA).
    pub color: [f32; 4],
    /// Texture coordinates of the set the material's base-color texture reads (same count as
    /// positions), when it has one.
    pub texcoords: Option<Vec<[f32; 2]>>,
    /// Vertex colors (`COLOR_0`, linear RGBA; same count as positions), if present.
    pub colors: Option<Vec<[f32; 4]>>,
    /// Index into [`Rig::materials`], or `None` for the default material ([`Self::color`] alone).
    pub material: Option<usize>,
    /// Morph targets (as many as the mesh's weights).
    pub targets: Vec<RigMorphTarget>,
}

/// Which part of a joint's transform a channel animates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChannelTarget {
    /// Translation (3 components per key).
    Translation,
    /// Rotation quaternion x, y, z, w (4 components per key).
    Rotation,
    /// Scale (3 components per key).
    Scale,
}

impl ChannelTarget {
    /// Components per value.
    #[must_use]
    pub fn components(self) -> usize {
        match self {
            ChannelTarget::Rotation => 4,
            _ => 3,
        }
    }
}

/// Interpolation between keys, as glTF 2.0 defines it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Interpolation {
    /// Hold each key's value until the next key.
    Step,
    /// Linear (rotations: shortest-path slerp).
    Linear,
    /// Cubic Hermite spline with in and out tangents per key.
    CubicSpline,
}

/// One animated property of one joint.
#[derive(Debug, Clone)]
pub struct RigChannel {
    /// Joint index into [`Rig::joints`].
    pub joint: usize,
    /// The property.
    pub target: ChannelTarget,
    /// Interpolation mode.
    pub interpolation: Interpolation,
    /// Key times in seconds, strictly increasing, finite. A jump — a time a file gives twice
    /// in a row, the later key's value holding from it — is held as the earlier key one `f32`
    /// step earlier (`t.next_down()`): the segment before the jump ends there and the later
    /// key holds at `t` and after, whatever the interpolation (the glTF importer reads repeated
    /// times so and notes each channel that has them).
    pub times: Vec<f32>,
    /// Key values: `components` floats per key, or for cubic splines `3 × components` per key
    /// (in-tangent, value, out-tangent, as glTF stores them).
    pub values: Vec<f32>,
}

/// The morph weights of one mesh instance over time.
#[derive(Debug, Clone, PartialEq)]
pub struct RigWeightChannel {
    /// Mesh index into [`Rig::meshes`] (the instance's weights are animated).
    pub mesh: usize,
    /// Interpolation mode.
    pub interpolation: Interpolation,
    /// Key times in seconds, strictly increasing, finite; jumps as in [`RigChannel::times`].
    pub times: Vec<f32>,
    /// Key values: one weight per target per key, or for cubic splines `3 × targets` per key
    /// (in-tangents, values, out-tangents, as glTF stores them).
    pub values: Vec<f32>,
}

/// A clip: channels that play together.
#[derive(Debug, Clone, Default)]
pub struct RigClip {
    /// Clip name (unique within the rig; importers name unnamed clips).
    pub name: String,
    /// Its channels; at most one per (joint, target).
    pub channels: Vec<RigChannel>,
    /// Its morph-weight channels; at most one per mesh.
    pub weights: Vec<RigWeightChannel>,
}

impl RigClip {
    /// The clip's time range: the union of its channels' key times (morph-weight channels
    /// included), or `(0, 0)` for no keys.
    #[must_use]
    pub fn time_range(&self) -> (f32, f32) {
        let mut lo = f32::INFINITY;
        let mut hi = f32::NEG_INFINITY;
        let times = self.channels.iter().map(|c| &c.times).chain(self.weights.iter().map(|w| &w.times));
        for c in times {
            if let (Some(&a), Some(&b)) = (c.first(), c.last()) {
                lo = lo.min(a);
                hi = hi.max(b);
            }
        }
        if lo <= hi {
            (lo, hi)
        } else {
            (0.0, 0.0)
        }
    }
}
