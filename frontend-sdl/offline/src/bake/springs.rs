//! The spring-bone section: [`Rig::springs`] as the core's spring joints (in the importer's run
//! order), colliders and joint→collider table, with each joint's spring and the springs' names.
//!
//! The baked skeleton is every rig joint in rig order (`skeleton`), so a rig joint index is
//! its baked index: the joints the springs and colliders name, and their ancestors, are all
//! kept. Joints whose collider lists are equal share one range of the table.

use std::collections::HashMap;

use sinew::asset::write_springs;
use sinew::asset::writer::Writer;
use sinew::job::spring::{SpringBones, SpringCollider, SpringJoint, NO_JOINT};
use sinew::limits::MAX_SPRING_TESTS;
use sinew::math::Vec3;

use super::BakeError;
use crate::rig::{self, Rig};

/// The spring-bone section as written.
pub(super) struct EncSprings {
    pub(super) joints: Vec<SpringJoint<f32>>,
    pub(super) colliders: Vec<SpringCollider<f32>>,
    pub(super) table: Vec<u16>,
    /// The spring of each joint.
    pub(super) joint_springs: Vec<u16>,
    /// Each spring's name (empty when the file gives none).
    pub(super) names: Vec<String>,
}

impl EncSprings {
    /// The section's contents as the core's writer takes them.
    pub(super) fn bones(&self) -> SpringBones<'_, f32> {
        SpringBones { joints: &self.joints, colliders: &self.colliders, joint_colliders: &self.table }
    }

    /// The section's body (laid out once to size the buffer, then written).
    ///
    /// # Errors
    ///
    /// [`BakeError::Springs`] with the writer's message when a list is too long for the
    /// section.
    pub(super) fn encode(&self) -> Result<Vec<u8>, BakeError> {
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        let write = |buf: &mut [u8]| {
            let mut w = Writer::new(buf);
            write_springs(&mut w, &self.bones(), &self.joint_springs, &names).map(|()| w.len())
        };
        let len = write(&mut []).map_err(|e| BakeError::Springs(e.to_string()))?;
        let mut buf = vec![0u8; len];
        write(&mut buf).map_err(|e| BakeError::Springs(e.to_string()))?;
        Ok(buf)
    }
}

/// `v` as a `u16`, or a [`BakeError::Springs`] saying `what` needs more than the section's
/// 16-bit counts and indices hold.
fn small(v: usize, what: &str) -> Result<u16, BakeError> {
    u16::try_from(v).map_err(|_| BakeError::Springs(format!("{what} ({v}) is past what the section's 16 bits hold")))
}

fn vec3(v: [f32; 3]) -> Vec3<f32> {
    Vec3::new(v[0], v[1], v[2])
}

/// The spring bones of `rig` for its baked skeleton, `None` without any.
///
/// # Errors
///
/// [`BakeError::Springs`] naming the spring joint or collider when an index is past the rig's
/// joints, a child is not below its joint, a joint swings twice, a value is not finite, a radius
/// is negative, a list is longer than the section's 16-bit counts hold, or the joints' collider
/// counts add up to more than [`MAX_SPRING_TESTS`] tests a step.
pub(super) fn springs_of(rig: &Rig) -> Result<Option<EncSprings>, BakeError> {
    let Some(b) = &rig.springs else { return Ok(None) };
    let name = |j: usize| rig.joints.get(j).map_or("?", |r| r.name.as_str());
    let baked = |j: usize, what: &str| -> Result<u16, BakeError> {
        if j >= rig.joints.len() {
            return Err(BakeError::Springs(format!("{what} names joint {j}, past the hierarchy")));
        }
        small(j, what)
    };
    small(b.springs.len(), "the spring count")?;
    small(b.joints.len(), "the spring joint count")?;
    small(b.colliders.len(), "the collider count")?;
    let mut colliders = Vec::with_capacity(b.colliders.len());
    for (i, c) in b.colliders.iter().enumerate() {
        let what = format!("collider {i}");
        let shape = c.shape.to_core();
        let (floats, radius): (Vec<f32>, f32) = match c.shape {
            rig::ColliderShape::Sphere { offset, radius, .. } => (offset.to_vec(), radius),
            rig::ColliderShape::Capsule { offset, tail, radius, .. } => ([offset, tail].concat(), radius),
            rig::ColliderShape::Plane { offset, normal } => ([offset, normal].concat(), 0.0),
        };
        if !floats.iter().chain([&radius]).all(|v| v.is_finite()) || radius < 0.0 {
            return Err(BakeError::Springs(format!(
                "{what} on joint '{}' has a value that is not finite or a negative radius",
                name(c.joint)
            )));
        }
        colliders.push(SpringCollider { joint: baked(c.joint, &what)?, shape });
    }
    let mut table = Vec::new();
    let mut ranges: HashMap<&[usize], (u16, u16)> = HashMap::new();
    let mut joints = Vec::with_capacity(b.joints.len());
    let mut joint_springs = Vec::with_capacity(b.joints.len());
    let mut swinging = vec![false; rig.joints.len()];
    for (i, r) in b.joints.iter().enumerate() {
        let what = format!("spring joint {i} ('{}')", name(r.joint));
        let joint = baked(r.joint, &what)?;
        if swinging.get_mut(r.joint).is_some_and(|s| std::mem::replace(s, true)) {
            return Err(BakeError::Springs(format!("{what} swings in an earlier spring joint too")));
        }
        let child = match r.child {
            Some(c) => {
                let c16 = baked(c, &what)?;
                if !is_below(rig, c, r.joint) {
                    return Err(BakeError::Springs(format!("{what}: its child '{}' is not below it", name(c))));
                }
                c16
            }
            None => NO_JOINT,
        };
        let center = r.center.map_or(Ok(NO_JOINT), |c| baked(c, &what))?;
        let p = &r.params;
        let settings = [p.hit_radius, p.stiffness, p.gravity_power, p.drag_force];
        let finite = r.tail.iter().chain(&p.gravity_dir).chain(&settings).all(|v| v.is_finite());
        if !finite || p.hit_radius < 0.0 {
            return Err(BakeError::Springs(format!(
                "{what} has a tail or setting that is not finite, or a negative hit radius"
            )));
        }
        if let Some(&c) = r.colliders.iter().find(|&&c| c >= colliders.len()) {
            return Err(BakeError::Springs(format!("{what} names collider {c}, past the colliders")));
        }
        let (colliders_start, colliders_len) = match ranges.get(r.colliders.as_slice()) {
            Some(&range) => range,
            None => {
                let range = (small(table.len(), "the joint collider table")?, small(r.colliders.len(), &what)?);
                small(table.len() + r.colliders.len(), "the joint collider table")?;
                // Indices below the collider count, itself checked above.
                table.extend(r.colliders.iter().map(|&c| c as u16));
                ranges.insert(&r.colliders, range);
                range
            }
        };
        if r.spring >= b.springs.len() {
            return Err(BakeError::Springs(format!("{what} names spring {}, past the springs", r.spring)));
        }
        joint_springs.push(r.spring as u16);
        joints.push(SpringJoint {
            joint,
            child,
            tail: vec3(r.tail),
            hit_radius: p.hit_radius,
            stiffness: p.stiffness,
            gravity_power: p.gravity_power,
            gravity_dir: vec3(p.gravity_dir),
            drag_force: p.drag_force,
            center,
            colliders_start,
            colliders_len,
        });
    }
    let tests: usize = joints.iter().map(|j| usize::from(j.colliders_len)).sum();
    if tests > MAX_SPRING_TESTS {
        return Err(BakeError::Springs(format!(
            "the spring joints test {tests} colliders a step, past the {MAX_SPRING_TESTS} a file may hold"
        )));
    }
    let names = b.springs.iter().map(|s| s.name.clone().unwrap_or_default()).collect();
    Ok(Some(EncSprings { joints, colliders, table, joint_springs, names }))
}

/// True when `child` is below `joint` (and not `joint`) in the rig's hierarchy.
fn is_below(rig: &Rig, child: usize, joint: usize) -> bool {
    let mut k = rig.joints.get(child).and_then(|j| j.parent);
    while let Some(p) = k {
        if p == joint {
            return true;
        }
        k = rig.joints.get(p).and_then(|j| j.parent).filter(|&q| q < p);
    }
    false
}

#[cfg(test)]
mod tests;
