//! Every fixed capacity of the runtime, in one place.
//!
//! The runtime never allocates: buffers are sized by these constants or by the caller. Change a
//! capacity here and every check that depends on it follows. A character's own capacities
//! (joints, clip slots, layers, tracks, graph parameters) are a [`Capacity`] type, declared
//! with [`capacity!`](crate::capacity!) and bounded by these limits (see [`capacity`](mod@crate::capacity)).
//!
//! [`Capacity`]: crate::capacity::Capacity

/// Most joints a skeleton may have (parents are stored as `i16`, and jobs keep per-joint
/// scratch bits on the stack sized by this).
pub const MAX_JOINTS: usize = 1024;

/// Most SoA elements (groups of four joints) a pose may have.
pub const MAX_SOA_JOINTS: usize = MAX_JOINTS.div_ceil(4);

/// Longest joint name, in bytes of UTF-8.
pub const MAX_NAME_LEN: usize = 32;

/// Most joint influences per vertex that CPU skinning accepts (glTF `JOINTS_0` + `JOINTS_1`).
pub const MAX_INFLUENCES: usize = 8;

/// Most morph targets a mesh may have (an MRPH section's target count, the weights a
/// [`MorphWeightsJob`](crate::job::MorphWeightsJob) writes).
pub const MAX_MORPH_TARGETS: usize = 256;

/// Most joint-collider tests one spring step of a `.sinew` file's spring section may ask for:
/// the sum over its spring joints of their collider counts. A step's cost grows with it (a
/// joint's collider range may be the whole table, so the sum can grow with the square of the
/// section's size); a section past it is refused.
pub const MAX_SPRING_TESTS: usize = 65_536;

/// Number of SoA elements needed for `joints` joints: `ceil(joints / 4)`.
///
/// Use it to size owned buffers: `Skeleton<f32, { soa_count(24) }>` (a [`Capacity`]'s `SOA`
/// is this of its joints).
///
/// [`Capacity`]: crate::capacity::Capacity
#[must_use]
pub const fn soa_count(joints: usize) -> usize {
    joints.div_ceil(4)
}

/// Clips one crowd instance blends (`sinew::crowd::CrowdInstance::layers`): a pose key holds
/// a clip, frame and weight per layer, so the planning's cost per instance grows with it.
pub const MAX_CROWD_LAYERS: usize = 2;
