//! The built-in procedural rigs of `sinew demo`, built in code as [`Rig`](crate::rig::Rig)s
//! (no files):
//!
//! - the **tentacle** ([`tentacle_rig`]): a box strip on a 4-joint chain;
//! - a **humanoid** ([`humanoid_rig`], 22 joints, capsules along the bones, smooth weights at
//!   the joints) with `idle`, `walk`, `run` and `wave` clips authored as LINEAR keys every
//!   1/30 s, its feet planted by construction ([`Gait`]);
//! - the **candy wrapper** ([`twist_rig`]): a cylinder on 2 joints.
//!
//! The code is laid out as:
//!
//! - `mesh`: the mesh builder, the humanoid's capsules, [`smoothstep`], joint and skin helpers;
//! - `rigs`: the three rigs and the tentacle's and candy wrapper's dimensions;
//! - [`humanoid`]: the humanoid's joint indices;
//! - `gait`: the leg's dimensions and angles, [`Gait`] with [`WALK_GAIT`] and [`RUN_GAIT`], and
//!   the rotation helpers [`rx`], [`ry`], [`rz`];
//! - `clips`: the humanoid's `walk`, `run`, `idle` and `wave` clips.
//!
//! Besides the rigs and their dimensions, the demo's scene uses [`smoothstep`], the rotation
//! helpers and the gaits' duty (when a foot is planted): those are public for it.

mod clips;
mod gait;
pub mod humanoid;
mod mesh;
mod rigs;

#[cfg(test)]
mod tests;

pub use clips::{IDLE_CYCLE, KEY_RATE, WAVE_CYCLE};
pub use gait::{
    rx, ry, rz, Gait, ANKLE_HEIGHT, RUN_CYCLE, RUN_GAIT, RUN_SPEED, SHIN_LENGTH, THIGH_LENGTH, WALK_CYCLE, WALK_GAIT,
    WALK_SPEED,
};
pub use mesh::smoothstep;
pub use rigs::{
    humanoid_rig, tentacle_rig, twist_rig, TENTACLE_JOINTS, TENTACLE_LENGTH, TWIST_LENGTH, TWIST_PERIOD, TWIST_RADIUS,
};
