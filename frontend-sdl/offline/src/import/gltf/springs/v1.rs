//! `VRMC_springBone` 1.0 (and 1.0-beta) with `VRMC_springBone_extended_collider` 1.0.

use std::collections::HashSet;

use super::error::{SpringError, SpringErrorKind};
use super::json::{At, Range};
use super::model::{
    ColliderShape, Spring, SpringBones, SpringCollider, SpringColliderGroup, SpringJoint, SpringParams, SpringSource,
};
use super::resolve::{resolve, Head, Tree};
use super::Nodes;

/// The extension's name.
pub(crate) const EXTENSION: &str = "VRMC_springBone";
/// The extended collider extension's name.
pub(crate) const EXTENDED_COLLIDER: &str = "VRMC_springBone_extended_collider";
/// The `specVersion`s read (three-vrm's list).
const SPEC_VERSIONS: &[&str] = &["1.0", "1.0-beta"];
/// The extended collider `specVersion` read (three-vrm's; the draft's `1.0-draft` is not).
const EXTENDED_SPEC_VERSION: &str = "1.0";
/// Largest distance of a plane normal's length from 1 kept as it is; a longer or shorter one is
/// normalized with a note.
const NORMAL_TOLERANCE: f32 = 1.0e-4;

/// The spring bones of `ext` (`extensions.VRMC_springBone`), or `None` with a note when its
/// `specVersion` is not one this reads.
pub(super) fn read(
    ext: &serde_json::Value,
    nodes: &Nodes<'_>,
    tree: &Tree<'_>,
    notes: &mut Vec<String>,
) -> Result<Option<SpringBones>, SpringError> {
    let root = At::root(ext, "extensions.VRMC_springBone");
    root.object()?;
    let version = match root.get("specVersion") {
        Some(v) => v.string()?.to_owned(),
        None => String::new(),
    };
    if !SPEC_VERSIONS.contains(&version.as_str()) {
        notes.push(format!("{EXTENSION}: specVersion {version:?} is not 1.0 or 1.0-beta; its springs were not read"));
        return Ok(None);
    }

    let mut colliders = Vec::new();
    let mut extended = 0;
    if let Some(list) = root.get("colliders") {
        for c in list.items()? {
            let (collider, from_extension) = collider(&c, nodes, notes)?;
            extended += usize::from(from_extension);
            colliders.push(collider);
        }
    }
    let mut groups = Vec::new();
    if let Some(list) = root.get("colliderGroups") {
        for g in list.items()? {
            let name = g.get("name").map(|n| n.string().map(str::to_owned)).transpose()?;
            g.object()?;
            let mut members = Vec::new();
            if let Some(cs) = g.get("colliders") {
                for c in cs.items()? {
                    members.push(c.index("collider", colliders.len())?);
                }
            }
            groups.push(SpringColliderGroup { name, colliders: members });
        }
    }
    let mut springs = Vec::new();
    if let Some(list) = root.get("springs") {
        for s in list.items()? {
            springs.push(spring(&s, nodes, tree, groups.len())?);
        }
    }
    check_centers(&root, &springs, nodes, tree)?;

    // Each joint but the last sways, aiming at the next (spec "Example": a-b, b-c, c-d).
    let mut heads = Vec::new();
    let mut seen = HashSet::new();
    for (si, s) in springs.iter().enumerate() {
        if s.joints.len() == 1 {
            notes.push(format!("{EXTENSION}: spring {si} has one joint, which is only a tail; nothing sways"));
        }
        for pair in s.joints.windows(2) {
            let (Some(a), Some(b)) = (pair.first(), pair.get(1)) else { continue };
            if !seen.insert(a.joint) {
                notes.push(format!(
                    "{EXTENSION}: spring {si}: joint '{}' already sways in an earlier spring (the spec forbids \
                     it); this spring's pair at it was left out",
                    nodes.name(a.joint)
                ));
                continue;
            }
            heads.push(Head { joint: a.joint, child: Some(b.joint), params: a.params, spring: si });
        }
    }
    let joints = resolve(tree, &heads, &springs, &groups, &colliders, notes, EXTENSION);
    Ok(Some(SpringBones {
        source: SpringSource::Vrm1 { spec_version: version, extended_colliders: extended },
        springs,
        colliders,
        collider_groups: groups,
        joints,
    }))
}

/// One collider, and whether its shape is the extended collider's.
fn collider(c: &At<'_>, nodes: &Nodes<'_>, notes: &mut Vec<String>) -> Result<(SpringCollider, bool), SpringError> {
    let joint = nodes.joint(&c.require("node", "a node index")?)?;
    let base = base_shape(&c.require("shape", "an object with a sphere or a capsule")?)?;
    let Some(ext) = c.get("extensions").and_then(|e| e.get(EXTENDED_COLLIDER)) else {
        return Ok((SpringCollider { joint, shape: base }, false));
    };
    ext.object()?;
    let version = ext.get("specVersion").map(|v| v.string().map(str::to_owned)).transpose()?;
    if version.as_deref() != Some(EXTENDED_SPEC_VERSION) {
        let found = version.map_or_else(|| "(none)".to_owned(), |v| format!("{v:?}"));
        notes.push(format!(
            "{}: {EXTENDED_COLLIDER} specVersion {found} is not 1.0; the collider keeps its {EXTENSION} shape",
            c.path()
        ));
        return Ok((SpringCollider { joint, shape: base }, false));
    }
    let Some(shape) = ext.get("shape") else {
        return Ok((SpringCollider { joint, shape: base }, false));
    };
    Ok((SpringCollider { joint, shape: extended_shape(&shape, notes)? }, true))
}

/// The names of `shape`'s members among `kinds`, which must be exactly one.
fn one_of(shape: &At<'_>, kinds: &[&'static str]) -> Result<&'static str, SpringError> {
    shape.object()?;
    let found: Vec<&'static str> = kinds.iter().copied().filter(|k| shape.get(k).is_some()).collect();
    match found.as_slice() {
        [one] => Ok(one),
        _ => Err(shape.error(SpringErrorKind::Shape { found })),
    }
}

/// `VRMC_springBone` `shape`: exactly one of `sphere` and `capsule` (the schema's `oneOf`).
fn base_shape(shape: &At<'_>) -> Result<ColliderShape, SpringError> {
    let kind = one_of(shape, &["sphere", "capsule"])?;
    let s = shape.require(kind, "an object")?;
    s.object()?;
    let offset = vec3_or(&s, "offset", [0.0; 3])?;
    let radius = number_or(&s, "radius", 0.0, Range::NonNegative)?;
    Ok(if kind == "sphere" {
        ColliderShape::Sphere { offset, radius, inside: false }
    } else {
        ColliderShape::Capsule { offset, tail: vec3_or(&s, "tail", [0.0; 3])?, radius, inside: false }
    })
}

/// `VRMC_springBone_extended_collider` `shape`: exactly one of `sphere`, `capsule` and `plane`.
fn extended_shape(shape: &At<'_>, notes: &mut Vec<String>) -> Result<ColliderShape, SpringError> {
    let kind = one_of(shape, &["sphere", "capsule", "plane"])?;
    let s = shape.require(kind, "an object")?;
    s.object()?;
    let offset = vec3_or(&s, "offset", [0.0; 3])?;
    let inside = s.get("inside").map(|v| v.boolean()).transpose()?.unwrap_or(false);
    Ok(match kind {
        "sphere" => ColliderShape::Sphere { offset, radius: number_or(&s, "radius", 0.0, Range::NonNegative)?, inside },
        "capsule" => ColliderShape::Capsule {
            offset,
            tail: vec3_or(&s, "tail", [0.0; 3])?,
            radius: number_or(&s, "radius", 0.0, Range::NonNegative)?,
            inside,
        },
        _ => {
            let n = vec3_or(&s, "normal", [0.0, 0.0, 1.0])?;
            let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            if !(len > 0.0 && len.is_finite()) {
                let at = s.get("normal").unwrap_or(s);
                return Err(at.error(SpringErrorKind::ZeroNormal));
            }
            if (len - 1.0).abs() > NORMAL_TOLERANCE {
                notes.push(format!("{}.normal: length {len}, normalized", s.path()));
            }
            ColliderShape::Plane { offset, normal: n.map(|v| v / len) }
        }
    })
}

/// One spring: its joints (each a descendant of the one before), collider groups and center.
fn spring(s: &At<'_>, nodes: &Nodes<'_>, tree: &Tree<'_>, groups: usize) -> Result<Spring, SpringError> {
    let name = s.get("name").map(|n| n.string().map(str::to_owned)).transpose()?;
    let list = s.require("joints", "an array of joints")?;
    let mut joints: Vec<SpringJoint> = Vec::new();
    let mut previous: Option<(usize, usize)> = None;
    for j in list.items()? {
        let node_at = j.require("node", "a node index")?;
        let node = node_at.index("node", nodes.count())?;
        let joint = nodes.joint(&node_at)?;
        if let Some((prev_node, prev_joint)) = previous {
            if prev_joint == joint || !tree.is_ancestor_or_self(prev_joint, joint) {
                return Err(node_at.error(SpringErrorKind::NotDescendant { node, previous: prev_node }));
            }
        }
        previous = Some((node, joint));
        joints.push(SpringJoint { joint, params: params(&j)? });
    }
    if joints.is_empty() {
        return Err(list.error(SpringErrorKind::NoJoints));
    }
    let mut collider_groups = Vec::new();
    if let Some(gs) = s.get("colliderGroups") {
        for g in gs.items()? {
            collider_groups.push(g.index("collider group", groups)?);
        }
    }
    let center = s.get("center").map(|c| nodes.joint(&c)).transpose()?;
    Ok(Spring { name, joints, collider_groups, center })
}

/// A joint's parameters, the schema's defaults where absent.
fn params(j: &At<'_>) -> Result<SpringParams, SpringError> {
    let d = SpringParams::VRM1_DEFAULT;
    Ok(SpringParams {
        hit_radius: number_or(j, "hitRadius", d.hit_radius, Range::NonNegative)?,
        stiffness: number_or(j, "stiffness", d.stiffness, Range::NonNegative)?,
        gravity_power: number_or(j, "gravityPower", d.gravity_power, Range::NonNegative)?,
        gravity_dir: vec3_or(j, "gravityDir", d.gravity_dir)?,
        drag_force: number_or(j, "dragForce", d.drag_force, Range::Unit)?,
    })
}

/// The spec's two rules for a spring's center: it is the spring's first joint or an ancestor
/// of it, and it is no joint of another spring nor below one.
fn check_centers(root: &At<'_>, springs: &[Spring], nodes: &Nodes<'_>, tree: &Tree<'_>) -> Result<(), SpringError> {
    if springs.iter().all(|s| s.center.is_none()) {
        return Ok(());
    }
    // For each joint, up to two distinct springs that list it or one of its ancestors.
    let n = tree.joints.len();
    let mut own: Vec<[Option<usize>; 2]> = vec![[None; 2]; n];
    let add = |slot: &mut [Option<usize>; 2], s: usize| {
        if slot[0].is_none() {
            slot[0] = Some(s);
        } else if slot[0] != Some(s) && slot[1].is_none() {
            slot[1] = Some(s);
        }
    };
    for (si, s) in springs.iter().enumerate() {
        for j in &s.joints {
            if let Some(slot) = own.get_mut(j.joint) {
                add(slot, si);
            }
        }
    }
    // Parents come before children: one pass down the joints carries the ancestors' springs.
    let mut above: Vec<[Option<usize>; 2]> = vec![[None; 2]; n];
    for j in 0..n {
        let mut slot = tree.parent(j).and_then(|p| above.get(p).copied()).unwrap_or([None; 2]);
        for s in own.get(j).copied().unwrap_or([None; 2]).into_iter().flatten() {
            add(&mut slot, s);
        }
        if let Some(a) = above.get_mut(j) {
            *a = slot;
        }
    }
    for (si, s) in springs.iter().enumerate() {
        let Some(center) = s.center else { continue };
        let at = root.get("springs").map(|l| l.item(si)).and_then(|sp| sp.get("center"));
        let error = |reason: &'static str| {
            let node = nodes.node(center);
            SpringError {
                path: at.as_ref().map_or_else(|| format!("{}.springs[{si}].center", root.path()), At::path),
                kind: SpringErrorKind::Center { node, reason },
            }
        };
        let first = s.joints.first().map(|j| j.joint);
        if first.is_none_or(|f| !tree.is_ancestor_or_self(center, f)) {
            return Err(error("it is neither the spring's first joint nor an ancestor of it"));
        }
        let others = above.get(center).copied().unwrap_or([None; 2]).into_iter().flatten().any(|o| o != si);
        if others {
            return Err(error("it is a joint of another spring or below one"));
        }
    }
    Ok(())
}

/// Member `key` of `at` as a number in `range`, or `default` when absent.
fn number_or(at: &At<'_>, key: &str, default: f32, range: Range) -> Result<f32, SpringError> {
    at.get(key).map_or(Ok(default), |v| v.number(range))
}

/// Member `key` of `at` as three numbers, or `default` when absent.
fn vec3_or(at: &At<'_>, key: &str, default: [f32; 3]) -> Result<[f32; 3], SpringError> {
    at.get(key).map_or(Ok(default), |v| v.vec3())
}
