//! What a viewer needs to draw the spring stage: the pose the stages left
//! ([`Character::staged_pose`]) and the colliders placed in the world
//! ([`SpringSet::world_colliders`]).

use alloc::vec::Vec;

use sinew::capacity::Capacity;
use sinew::job::spring::ColliderShape;
use sinew::math::{Mat4, SoaTransform, Vec3};

use super::super::Character;
use super::SpringSet;

impl<C: Capacity> Character<C> {
    /// The local pose (SoA) of the last [`update`](Self::update) after its stages (foot
    /// placement, chain IK, spring bones) when one of them is set up and running, else the
    /// sampled pose ([`pose`](Self::pose)): the pose the model matrices
    /// ([`Character::joints`]) were computed from.
    #[must_use]
    pub fn staged_pose(&self) -> &[SoaTransform<f32>] {
        if self.stages_run() && self.placed.len() == self.pose.len() {
            &self.placed
        } else {
            &self.pose
        }
    }
}

/// The world matrix `world × models[joint]` of a collider's joint; `None` past the matrices.
fn joint_world(models: &[Mat4<f32>], world: &Mat4<f32>, joint: u16) -> Option<Mat4<f32>> {
    models.get(usize::from(joint)).map(|m| *world * *m)
}

/// `n` through the normal matrix of `w` (its inverse transposed), unit length; `None` for a
/// singular matrix or a zero normal.
fn normal_through(w: &Mat4<f32>, n: Vec3<f32>) -> Option<Vec3<f32>> {
    let inv = w.inverse()?;
    let col = |i: usize| Vec3::new(inv.cols[i][0], inv.cols[i][1], inv.cols[i][2]);
    let out = Vec3::new(col(0).dot(n), col(1).dot(n), col(2).dot(n));
    out.try_normalize()
}

impl SpringSet {
    /// Each collider placed in the world, in the order of [`SpringSet::colliders`]: its shape
    /// with the points (`offset`, a capsule's `tail`) moved by its joint's model matrix in
    /// `models` and then by `world`, a plane's normal turned by their normal matrix to unit
    /// length, radii as they are (the spring job uses them unscaled). A collider whose joint
    /// has no matrix in `models`, or a plane whose normal has no direction, is left out.
    #[must_use]
    pub fn world_colliders(&self, models: &[Mat4<f32>], world: Mat4<f32>) -> Vec<ColliderShape<f32>> {
        self.colliders
            .iter()
            .filter_map(|c| {
                let w = joint_world(models, &world, c.joint)?;
                Some(match c.shape {
                    ColliderShape::Sphere { offset, radius, inside } => {
                        ColliderShape::Sphere { offset: w.transform_point3(offset), radius, inside }
                    }
                    ColliderShape::Capsule { offset, tail, radius, inside } => ColliderShape::Capsule {
                        offset: w.transform_point3(offset),
                        tail: w.transform_point3(tail),
                        radius,
                        inside,
                    },
                    ColliderShape::Plane { offset, normal } => {
                        ColliderShape::Plane { offset: w.transform_point3(offset), normal: normal_through(&w, normal)? }
                    }
                })
            })
            .collect()
    }
}
