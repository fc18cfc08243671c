//! Joint indices of the procedural humanoid ([`humanoid_rig`](super::humanoid_rig)). Its rest
//! pose is a T-pose facing +Z with Y up; the character's left is +X.

/// On the ground under the hips; carries the root motion of `walk` and `run`.
pub const ROOT: usize = 0;
/// Pelvis.
pub const HIPS: usize = 1;
/// Lower spine.
pub const SPINE: usize = 2;
/// Upper spine.
pub const CHEST: usize = 3;
/// Neck.
pub const NECK: usize = 4;
/// Head.
pub const HEAD: usize = 5;
/// Left clavicle.
pub const L_CLAVICLE: usize = 6;
/// Left upper arm (shoulder).
pub const L_UPPER_ARM: usize = 7;
/// Left forearm (elbow).
pub const L_FOREARM: usize = 8;
/// Left hand (wrist).
pub const L_HAND: usize = 9;
/// Right clavicle.
pub const R_CLAVICLE: usize = 10;
/// Right upper arm (shoulder).
pub const R_UPPER_ARM: usize = 11;
/// Right forearm (elbow).
pub const R_FOREARM: usize = 12;
/// Right hand (wrist).
pub const R_HAND: usize = 13;
/// Left thigh (hip joint).
pub const L_THIGH: usize = 14;
/// Left shin (knee).
pub const L_SHIN: usize = 15;
/// Left foot (ankle).
pub const L_FOOT: usize = 16;
/// Left toes.
pub const L_TOE: usize = 17;
/// Right thigh (hip joint).
pub const R_THIGH: usize = 18;
/// Right shin (knee).
pub const R_SHIN: usize = 19;
/// Right foot (ankle).
pub const R_FOOT: usize = 20;
/// Right toes.
pub const R_TOE: usize = 21;
/// Number of joints.
pub const COUNT: usize = 22;
