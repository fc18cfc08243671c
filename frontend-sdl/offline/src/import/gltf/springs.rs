//! Spring bones: the `VRMC_springBone` extension of VRM 1.0 (`specVersion` `"1.0"`, and
//! `"1.0-beta"` as three-vrm reads it) with `VRMC_springBone_extended_collider` 1.0, or the
//! `secondaryAnimation` of VRM 0.x's `VRM` extension, read into [`Rig::springs`] on the rig's
//! joints ([`Rig::source_nodes`] maps them back to nodes).
//!
//! The reference is three-vrm 3.5.5's `VRMSpringBoneLoaderPlugin`: `VRMC_springBone` is read
//! when `extensionsUsed` lists it and its `specVersion` is one of those above, otherwise the
//! VRM 0.x extension when `extensionsUsed` lists `VRM`; a VRM 1.0 spring's joint `i` sways
//! towards joint `i + 1` with joint `i`'s parameters (the last joint is only a tail); a VRM 0.x
//! bone group sways every node under each of its `bones`, towards its first child, or for a
//! leaf towards a virtual tail 7 cm along its rest translation; the joints run in the order of
//! three-vrm's `_sortJoints` (see [`SpringBones::joints`]).
//!
//! # Errors and notes
//!
//! Where the spec or its JSON schema states a rule, a file that breaks it is refused with a
//! [`SpringError`] naming the JSON path of the value (three-vrm warns and goes on, or does not
//! look): a value of the wrong type; a node, collider or collider group index out of range; a
//! node outside the imported scene; a spring without joints (`minItems` 1); a joint that is not
//! a descendant of the one before it ("joints\[n\] must be a parent or ancestor of
//! joints\[n+1\]"); a shape with none or several of its kinds (`oneOf`, "MUST define one of");
//! a plane normal of length zero; a radius, `hitRadius`, `stiffness` or `gravityPower` below 0
//! or a `dragForce` outside 0 to 1 (the schemas' ranges; VRM 0.x states none, so only its
//! radii must not be negative); a number too large for `f32`; a center that is not the
//! spring's first joint or an ancestor of it, or that is a joint of another spring or below
//! one ("Center Space").
//!
//! Skipped or changed with a line in [`Rig::notes`], as three-vrm or the spec has it:
//! - a `specVersion` other than `"1.0"` / `"1.0-beta"`: the extension is not read (three-vrm
//!   returns no springs, then tries VRM 0.x); an extended collider whose `specVersion` is not
//!   `"1.0"` (such as the draft's `"1.0-draft"`) keeps its `VRMC_springBone` shape (three-vrm's
//!   fallback, and what the shape in the base extension is for); one without `shape` too;
//! - spring data whose extension `extensionsUsed` does not list (three-vrm does not look);
//! - a spring of one joint: nothing sways (valid per schema);
//! - a joint that already sways in an earlier spring (VRM 1.0: "must not be duplicated",
//!   prohibited; UniVRM warns and skips it, three-vrm runs both): left out of the later
//!   spring, its tail and the rest of that spring kept;
//! - a plane normal whose length is not 1 (the spec: "MUST be normalized"): normalized;
//! - a tail at the joint's own position (a zero-length bone), and joints that depend on each
//!   other in a circle (three-vrm's "Circular dependency detected").
//!
//! # Where this differs from three-vrm
//!
//! - Rules above that three-vrm does not check are errors here.
//! - A VRM 1.0 `dragForce` left out is 0.5, the schema's default; three-vrm's is 0.4, which is
//!   kept for VRM 0.x, whose spec has no defaults.
//! - A VRM 1.0 joint whose next joint is a deeper descendant has its tail where that joint is in
//!   its space (the rest transforms between them composed); three-vrm takes the next joint's
//!   own translation, right only for a child.
//! - A joint of two springs sways once (see above).
//! - VRM 0.x subtrees and first children are the glTF nodes'; three-vrm walks three.js objects,
//!   where a mesh's primitives and the colliders it adds can come first among a node's
//!   children.
//!
//! # VRM 0.x axes
//!
//! VRM 0.x models are exported from Unity (left-handed, +Z forward) by negating z, so they face
//! -Z in glTF; the collider offsets are stored in Unity's axes and get their z negated (as
//! three-vrm does). `gravityDir` is read as stored, as three-vrm reads it.
//!
//! [`Rig::springs`]: crate::rig::Rig::springs
//! [`Rig::notes`]: crate::rig::Rig::notes
//! [`Rig::source_nodes`]: crate::rig::Rig::source_nodes

mod error;
mod json;
mod model;
mod resolve;
mod v0;
mod v1;

#[cfg(test)]
mod tests;

use gltf::json::Root;

use super::accessors::Importer;
use super::error::GltfError;
use super::hierarchy::Hierarchy;
use crate::rig::RigJoint;
pub use error::{SpringError, SpringErrorKind};
pub use model::{
    ColliderShape, ResolvedSpringJoint, Spring, SpringBones, SpringCollider, SpringColliderGroup, SpringJoint,
    SpringParams, SpringSource,
};

use json::At;
use resolve::Tree;

/// The extensions whose spring data this reads, and `VRMC_vrm`, whose humanoid, expressions,
/// look-at and first-person settings are not needed to read the model: a file that requires
/// them is imported (the rest of a VRM file is plain glTF).
pub(crate) const VRM_EXTENSIONS: &[&str] = &["VRMC_vrm", v0::EXTENSION, v1::EXTENSION, v1::EXTENDED_COLLIDER];

/// The file's nodes as the rig's joints.
pub(super) struct Nodes<'a> {
    /// Joint of each node, `None` for nodes outside the imported scenes.
    joint_of_node: &'a [Option<usize>],
    /// Node of each joint.
    node_of_joint: &'a [usize],
    joints: &'a [RigJoint],
}

impl Nodes<'_> {
    /// Number of nodes in the file.
    fn count(&self) -> usize {
        self.joint_of_node.len()
    }

    /// The joint of the node index at `at`.
    fn joint(&self, at: &At<'_>) -> Result<usize, SpringError> {
        let node = at.index("node", self.count())?;
        self.joint_of_node.get(node).copied().flatten().ok_or_else(|| at.error(SpringErrorKind::NotInScene { node }))
    }

    /// The node of `joint`.
    fn node(&self, joint: usize) -> usize {
        self.node_of_joint.get(joint).copied().unwrap_or(joint)
    }

    /// The name of `joint`.
    fn name(&self, joint: usize) -> &str {
        self.joints.get(joint).map_or("?", |j| j.name.as_str())
    }
}

/// The spring bones of the document `root` on the rig's `joints`: `VRMC_springBone` when the
/// file uses it with a known `specVersion`, else VRM 0.x `secondaryAnimation`, else `None`.
/// Notes go to `notes`.
///
/// # Errors
///
/// A [`SpringError`] when the spring data breaks a rule of its extension (see the module's
/// documentation).
fn read(
    root: &Root,
    h: &Hierarchy,
    joints: &[RigJoint],
    notes: &mut Vec<String>,
) -> Result<Option<SpringBones>, SpringError> {
    let Some(ext) = root.extensions.as_ref().map(|e| &e.others) else { return Ok(None) };
    let used = |name: &str| root.extensions_used.iter().any(|e| e == name);
    let nodes = Nodes { joint_of_node: &h.joint_of_node, node_of_joint: &h.order, joints };
    if used("VRMC_vrm") || used(v0::EXTENSION) {
        notes.push(
            "VRM: the spring bones are read; the humanoid, expressions, look-at, first-person and MToon \
                    settings are not"
                .into(),
        );
    }
    if let Some(v1) = ext.get(v1::EXTENSION) {
        if !used(v1::EXTENSION) {
            notes.push(format!("{}: extensionsUsed does not list it; it was not read", v1::EXTENSION));
        } else if let Some(springs) = v1::read(v1, &nodes, &Tree::new(joints), notes)? {
            return Ok(Some(springs));
        }
    }
    if let Some(v0) = ext.get(v0::EXTENSION) {
        if !used(v0::EXTENSION) {
            notes.push(format!("{}: extensionsUsed does not list it; its springs were not read", v0::EXTENSION));
        } else {
            return v0::read(v0, &nodes, &Tree::new(joints), notes);
        }
    }
    Ok(None)
}

impl Importer<'_> {
    /// The file's spring bones on the rig's `joints` (see the module's documentation).
    pub(super) fn springs(&mut self, h: &Hierarchy, joints: &[RigJoint]) -> Result<Option<SpringBones>, GltfError> {
        read(self.doc.as_json(), h, joints, &mut self.notes).map_err(GltfError::Springs)
    }
}
