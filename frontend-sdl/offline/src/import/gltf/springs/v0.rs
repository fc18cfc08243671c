//! VRM 0.x `secondaryAnimation` (extension `VRM`): bone groups and sphere collider groups,
//! converted to the model VRM 1.0 springs use.

use std::collections::HashSet;

use super::error::SpringError;
use super::json::{At, Range};
use super::model::{
    ColliderShape, Spring, SpringBones, SpringCollider, SpringColliderGroup, SpringJoint, SpringParams, SpringSource,
};
use super::resolve::{resolve, Head, Tree};
use super::Nodes;

/// The extension's name.
pub(crate) const EXTENSION: &str = "VRM";
/// How notes name the source.
const SOURCE: &str = "VRM secondaryAnimation";

/// The spring bones of `ext` (`extensions.VRM`), or `None` when it has no `secondaryAnimation`
/// or that has no `boneGroups` (three-vrm then reads none either).
pub(super) fn read(
    ext: &serde_json::Value,
    nodes: &Nodes<'_>,
    tree: &Tree<'_>,
    notes: &mut Vec<String>,
) -> Result<Option<SpringBones>, SpringError> {
    let root = At::root(ext, "extensions.VRM");
    root.object()?;
    let Some(secondary) = root.get("secondaryAnimation") else { return Ok(None) };
    secondary.object()?;
    let Some(bone_groups) = secondary.get("boneGroups") else { return Ok(None) };

    let mut colliders = Vec::new();
    let mut groups = Vec::new();
    if let Some(list) = secondary.get("colliderGroups") {
        for g in list.items()? {
            let joint = nodes.joint(&g.require("node", "a node index")?)?;
            let mut members = Vec::new();
            if let Some(cs) = g.get("colliders") {
                for c in cs.items()? {
                    c.object()?;
                    // VRM 0.x stores the offset in Unity's left-handed axes; its glTF is
                    // converted from them by negating z, so the offset's z is negated too.
                    let offset = match c.get("offset") {
                        Some(o) => {
                            let [x, y, z] = o.xyz()?;
                            [x, y, -z]
                        }
                        None => [0.0; 3],
                    };
                    let radius = c.get("radius").map_or(Ok(0.0), |r| r.number(Range::NonNegative))?;
                    members.push(colliders.len());
                    colliders
                        .push(SpringCollider { joint, shape: ColliderShape::Sphere { offset, radius, inside: false } });
                }
            }
            groups.push(SpringColliderGroup { name: None, colliders: members });
        }
    }

    let mut springs = Vec::new();
    let mut heads = Vec::new();
    let mut seen = HashSet::new();
    for (gi, g) in bone_groups.items()?.enumerate() {
        g.object()?;
        let name = g.get("comment").map(|n| n.string().map(str::to_owned)).transpose()?;
        let params = params(&g)?;
        let center = match g.get("center") {
            Some(c) if c.value.as_i64() == Some(-1) => None,
            Some(c) => Some(nodes.joint(&c)?),
            None => None,
        };
        let mut collider_groups = Vec::new();
        if let Some(list) = g.get("colliderGroups") {
            for c in list.items()? {
                collider_groups.push(c.index("collider group", groups.len())?);
            }
        }
        let mut joints = Vec::new();
        if let Some(bones) = g.get("bones") {
            for b in bones.items()? {
                let root_joint = nodes.joint(&b)?;
                for j in tree.subtree(root_joint) {
                    joints.push(SpringJoint { joint: j, params });
                    if !seen.insert(j) {
                        notes.push(format!(
                            "{SOURCE}: bone group {gi}: joint '{}' already sways in an earlier group or \
                             root; it was left out here",
                            nodes.name(j)
                        ));
                        continue;
                    }
                    // The first child is the tail; a leaf aims at a virtual tail.
                    let child = tree.children.get(j).and_then(|c| c.first()).copied();
                    heads.push(Head { joint: j, child, params, spring: springs.len() });
                }
            }
        }
        springs.push(Spring { name, joints, collider_groups, center });
    }
    let joints = resolve(tree, &heads, &springs, &groups, &colliders, notes, SOURCE);
    Ok(Some(SpringBones { source: SpringSource::Vrm0, springs, colliders, collider_groups: groups, joints }))
}

/// A bone group's parameters (`stiffiness` spelled as VRM 0.x spells it), three-vrm's
/// defaults where absent. VRM 0.x states no ranges; the numbers must be finite, and the radius
/// not negative.
fn params(g: &At<'_>) -> Result<SpringParams, SpringError> {
    let d = SpringParams::VRM0_DEFAULT;
    let num = |key: &str, default: f32, range: Range| g.get(key).map_or(Ok(default), |v| v.number(range));
    Ok(SpringParams {
        hit_radius: num("hitRadius", d.hit_radius, Range::NonNegative)?,
        stiffness: num("stiffiness", d.stiffness, Range::Any)?,
        gravity_power: num("gravityPower", d.gravity_power, Range::Any)?,
        // As three-vrm: not mirrored like the collider offsets.
        gravity_dir: g.get("gravityDir").map_or(Ok(d.gravity_dir), |v| v.xyz())?,
        drag_force: num("dragForce", d.drag_force, Range::Any)?,
    })
}
