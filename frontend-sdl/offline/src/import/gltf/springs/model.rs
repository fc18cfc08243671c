//! The spring bones of a model as its file states them ([`SpringBones::springs`],
//! [`SpringBones::colliders`], [`SpringBones::collider_groups`]) and resolved for a runtime
//! ([`SpringBones::joints`]), every node named by its index in [`Rig::joints`].
//!
//! [`Rig::joints`]: crate::rig::Rig::joints

/// Where a model's spring bones come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpringSource {
    /// The `VRMC_springBone` glTF extension (VRM 1.0), with its `specVersion` (`"1.0"` or
    /// `"1.0-beta"`); `extended_colliders` counts the colliders whose shape the
    /// `VRMC_springBone_extended_collider` extension gave.
    Vrm1 {
        /// The extension's `specVersion`.
        spec_version: String,
        /// Colliders shaped by `VRMC_springBone_extended_collider`.
        extended_colliders: usize,
    },
    /// The `secondaryAnimation` of the VRM 0.x extension `VRM`.
    Vrm0,
}

/// The five parameters of a spring joint, with the defaults of its source where the file
/// leaves one out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpringParams {
    /// Radius of the sphere at the joint's tail that collides with the colliders (meters in
    /// glTF); at least 0. Default 0.
    pub hit_radius: f32,
    /// How strongly the tail is pulled back to its rest direction; at least 0 in VRM 1.0.
    /// Default 1.
    pub stiffness: f32,
    /// Strength of the gravity pulling the tail along [`Self::gravity_dir`]; at least 0 in
    /// VRM 1.0. Default 0.
    pub gravity_power: f32,
    /// Direction of that gravity in world (model) space, as the file gives it (not normalized).
    /// Default `[0, -1, 0]`.
    pub gravity_dir: [f32; 3],
    /// Share of the tail's velocity lost each update, 0 to 1 in VRM 1.0. Default 0.5 for
    /// VRM 1.0 (the JSON schema's), 0.4 for VRM 0.x (three-vrm's, VRM 0.x states none).
    pub drag_force: f32,
}

impl SpringParams {
    /// The VRM 1.0 defaults (`VRMC_springBone.joint.schema.json`).
    pub const VRM1_DEFAULT: Self =
        Self { hit_radius: 0.0, stiffness: 1.0, gravity_power: 0.0, gravity_dir: [0.0, -1.0, 0.0], drag_force: 0.5 };
    /// The VRM 0.x defaults: VRM 0.x states none, these are three-vrm's `VRMSpringBoneJoint`
    /// constructor's.
    pub const VRM0_DEFAULT: Self =
        Self { hit_radius: 0.0, stiffness: 1.0, gravity_power: 0.0, gravity_dir: [0.0, -1.0, 0.0], drag_force: 0.4 };
}

/// One joint of a spring as the file lists it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpringJoint {
    /// The joint, an index into [`Rig::joints`](crate::rig::Rig::joints).
    pub joint: usize,
    /// Its parameters (those of a VRM 1.0 spring's last joint, which is only a tail, are read
    /// and checked but never used).
    pub params: SpringParams,
}

/// A spring: a VRM 1.0 `springs[i]`, or a VRM 0.x bone group.
#[derive(Debug, Clone, PartialEq)]
pub struct Spring {
    /// The file's name (VRM 1.0 `name`, VRM 0.x `comment`), if it has one.
    pub name: Option<String>,
    /// VRM 1.0: the spring's `joints`, each a descendant of the one before; the last is only a
    /// tail. VRM 0.x: every node under each of the group's `bones`, each root's subtree
    /// depth-first with children in file order, all with the group's parameters.
    pub joints: Vec<SpringJoint>,
    /// The collider groups it collides with, indices into [`SpringBones::collider_groups`].
    pub collider_groups: Vec<usize>,
    /// The joint whose space its inertia is computed in (`center`), or `None` for the world.
    pub center: Option<usize>,
}

/// The shape of a collider, in the space of its joint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ColliderShape {
    /// A sphere at `offset`.
    Sphere {
        /// Center.
        offset: [f32; 3],
        /// Radius, at least 0.
        radius: f32,
        /// `true`: the tails are kept inside the sphere rather than outside
        /// (`VRMC_springBone_extended_collider`).
        inside: bool,
    },
    /// A capsule: the segment from `offset` to `tail`, swept by a sphere of `radius`.
    Capsule {
        /// Center of the head end.
        offset: [f32; 3],
        /// Center of the tail end.
        tail: [f32; 3],
        /// Radius, at least 0.
        radius: f32,
        /// `true`: the tails are kept inside the capsule (`VRMC_springBone_extended_collider`).
        inside: bool,
    },
    /// An infinite plane through `offset`; tails are kept on the side `normal` points to
    /// (`VRMC_springBone_extended_collider`).
    Plane {
        /// A point of the plane.
        offset: [f32; 3],
        /// Unit normal.
        normal: [f32; 3],
    },
}

impl ColliderShape {
    /// The shape as the core's spring stage takes it (the same fields, in `sinew`'s vectors).
    #[must_use]
    pub fn to_core(&self) -> sinew::job::spring::ColliderShape<f32> {
        use sinew::job::spring::ColliderShape as Core;
        let v = |a: [f32; 3]| sinew::math::Vec3::new(a[0], a[1], a[2]);
        match *self {
            ColliderShape::Sphere { offset, radius, inside } => Core::Sphere { offset: v(offset), radius, inside },
            ColliderShape::Capsule { offset, tail, radius, inside } => {
                Core::Capsule { offset: v(offset), tail: v(tail), radius, inside }
            }
            ColliderShape::Plane { offset, normal } => Core::Plane { offset: v(offset), normal: v(normal) },
        }
    }

    /// The shape's kind in words: `sphere`, `capsule`, `plane`, `inside sphere` or `inside
    /// capsule`.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            ColliderShape::Sphere { inside: false, .. } => "sphere",
            ColliderShape::Sphere { inside: true, .. } => "inside sphere",
            ColliderShape::Capsule { inside: false, .. } => "capsule",
            ColliderShape::Capsule { inside: true, .. } => "inside capsule",
            ColliderShape::Plane { .. } => "plane",
        }
    }
}

/// A collider: a shape that moves with a joint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpringCollider {
    /// The joint it moves with, an index into [`Rig::joints`](crate::rig::Rig::joints).
    pub joint: usize,
    /// Its shape in that joint's space.
    pub shape: ColliderShape,
}

/// A named list of colliders that springs refer to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpringColliderGroup {
    /// The file's name (VRM 1.0 `name`; VRM 0.x groups have none).
    pub name: Option<String>,
    /// Its colliders, indices into [`SpringBones::colliders`], in file order.
    pub colliders: Vec<usize>,
}

/// One joint ready for a runtime: the joint it turns, the tail it aims at, its parameters, its
/// center space and its colliders.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedSpringJoint {
    /// The joint it turns, an index into [`Rig::joints`](crate::rig::Rig::joints).
    pub joint: usize,
    /// The joint whose position is the tail (VRM 1.0: the spring's next joint, a descendant;
    /// VRM 0.x: the first child), or `None` for a VRM 0.x leaf, whose tail is virtual.
    pub child: Option<usize>,
    /// The tail at rest in `joint`'s space: the position of `child` (its rest translation when
    /// it is a child of `joint`, the rest transforms between them composed when it is a deeper
    /// descendant), or for a VRM 0.x leaf `normalize(rest translation of joint) × 0.07` (zero
    /// when that translation is zero), as three-vrm's `setInitState` makes it.
    pub tail: [f32; 3],
    /// Its parameters.
    pub params: SpringParams,
    /// Its spring's center joint, or `None` for world space.
    pub center: Option<usize>,
    /// The colliders of its spring's collider groups, indices into [`SpringBones::colliders`],
    /// group after group in the spring's order (a collider in two groups comes twice).
    pub colliders: Vec<usize>,
    /// Its spring, an index into [`SpringBones::springs`].
    pub spring: usize,
}

/// A model's spring bones: the file's springs, colliders and collider groups, and the joints
/// resolved for a runtime in the order it must update them.
#[derive(Debug, Clone, PartialEq)]
pub struct SpringBones {
    /// Where they come from.
    pub source: SpringSource,
    /// The springs, in file order.
    pub springs: Vec<Spring>,
    /// The colliders, in file order (VRM 0.x: each group's spheres, group after group).
    pub colliders: Vec<SpringCollider>,
    /// The collider groups, in file order.
    pub collider_groups: Vec<SpringColliderGroup>,
    /// The joints that sway, in run order: each after the spring joints above it and after the
    /// spring joints above (or at) its colliders' joints, the order three-vrm's
    /// `VRMSpringBoneManager` gives the same joints. A joint at the head of two springs is kept
    /// in the first only (see [`Rig::notes`](crate::rig::Rig::notes)).
    pub joints: Vec<ResolvedSpringJoint>,
}

impl SpringBones {
    /// How many colliders have each shape kind, in the order sphere, capsule, plane, inside
    /// sphere, inside capsule (see [`ColliderShape::kind`]).
    #[must_use]
    pub fn shape_counts(&self) -> [(&'static str, usize); 5] {
        let mut counts = [("sphere", 0), ("capsule", 0), ("plane", 0), ("inside sphere", 0), ("inside capsule", 0)];
        for c in &self.colliders {
            let kind = c.shape.kind();
            if let Some(slot) = counts.iter_mut().find(|(k, _)| *k == kind) {
                slot.1 += 1;
            }
        }
        counts
    }
}
