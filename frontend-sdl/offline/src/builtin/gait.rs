//! The humanoid's locomotion: the leg's dimensions, the two-bone solve of its angles
//! ([`leg_angles`]), the [`Gait`] that describes a walk or a run cycle (where each foot is,
//! how high the hips are, how the legs bend at any time) with the `walk` and `run` gaits, and
//! the rotation helpers the clips are written with.

use std::f32::consts::{PI, TAU};

use sinew::math::{Quat, Vec3};

/// Speed of the `walk` clip's root, in meters per second.
pub const WALK_SPEED: f32 = 1.2;
/// Length of one `walk` cycle (two steps), in seconds.
pub const WALK_CYCLE: f32 = 1.0;
/// Speed of the `run` clip's root, in meters per second.
pub const RUN_SPEED: f32 = 2.8;
/// Length of one `run` cycle (two steps), in seconds.
pub const RUN_CYCLE: f32 = 0.7;

/// A rotation by `a` radians about X (the clips' and the demo scene's poses are written with
/// these three).
pub fn rx(a: f32) -> Quat<f32> {
    Quat::from_axis_angle(Vec3::X, a)
}
/// A rotation by `a` radians about Y.
pub fn ry(a: f32) -> Quat<f32> {
    Quat::from_axis_angle(Vec3::Y, a)
}
/// A rotation by `a` radians about Z.
pub fn rz(a: f32) -> Quat<f32> {
    Quat::from_axis_angle(Vec3::Z, a)
}

/// Length of the humanoid's thigh bone (hip joint to knee), in meters.
pub const THIGH_LENGTH: f32 = 0.42;
/// Length of the humanoid's shin bone (knee to ankle), in meters.
pub const SHIN_LENGTH: f32 = 0.40;
/// Height of the ankle joint above the ground when the foot stands flat, in meters (the
/// lowest point of the foot mesh is this far below the ankle).
pub const ANKLE_HEIGHT: f32 = 0.085;
/// Offset of the left thigh joint from the hips (the right one mirrors it in X).
pub(super) const THIGH_OFFSET: Vec3<f32> = Vec3 { x: 0.1, y: -0.05, z: 0.0 };
/// Longest distance from the thigh joint to the ankle a stance leg is asked to reach, as a
/// share of the leg's length: the margin absorbs the hips' sway and keeps the knee unlocked.
const LEG_REACH: f32 = 0.97;

/// Thigh and knee angles about X (positive swings the bone backward) that put the ankle at
/// `(y, z)` relative to the thigh joint, with the knee bending forward: two-bone IK in the
/// sagittal plane, the distance clamped into the leg's reach.
pub(super) fn leg_angles(y: f32, z: f32) -> (f32, f32) {
    let (a, b) = (THIGH_LENGTH, SHIN_LENGTH);
    let d = (y * y + z * z).sqrt().clamp((a - b).abs() + 1.0e-4, (a + b) * 0.9999);
    // The target's direction is (−cos φ, −sin φ) in (y, z), like the rest bone rotated by φ.
    let phi = (-z).atan2(-y);
    let at_hip = ((a * a + d * d - b * b) / (2.0 * a * d)).clamp(-1.0, 1.0).acos();
    let at_knee = ((a * a + b * b - d * d) / (2.0 * a * b)).clamp(-1.0, 1.0).acos();
    (phi - at_hip, PI - at_knee)
}

/// Shape of a locomotion cycle; `walk` and `run` differ only in these numbers ([`WALK_GAIT`],
/// [`RUN_GAIT`]). Only [`duty`](Gait::duty) is public: the demo's scene reads it to tell when a
/// foot is planted.
///
/// Each foot follows a path relative to the root (which moves forward at `speed`): on the
/// ground for the first `duty` of its cycle, sliding backward at exactly `speed` (so it stays
/// put in the world), then swinging forward on a raised arc back to its touchdown point. The
/// left foot touches down at phase 0, the right half a cycle later. The leg angles are solved
/// from the foot's path (two-bone IK in the sagittal plane), so a planted foot is where the
/// path says, up to key interpolation.
#[derive(Debug, Clone, Copy)]
pub struct Gait {
    /// Cycle length (two steps), in seconds.
    pub(super) cycle: f32,
    /// Root speed, in meters per second.
    pub(super) speed: f32,
    /// Share of the cycle a foot spends on the ground (above 0.5: double support, a walk;
    /// below: a flight phase, a run).
    pub duty: f32,
    /// Height of the swing foot's arc, in meters.
    pub(super) lift: f32,
    /// Foot pitch during the swing (toes down after lift-off, up before touchdown), radians.
    pub(super) pitch: f32,
    /// Vertical bob of the hips, in meters: highest at each mid-stance.
    pub(super) bob: f32,
    /// Forward lean of the spine, radians.
    pub(super) lean: f32,
    /// Arm swing, radians.
    pub(super) arm_swing: f32,
    /// Elbow bend, radians.
    pub(super) elbow: f32,
    /// Pelvis yaw, radians.
    pub(super) twist: f32,
}

impl Gait {
    /// Length of the ground contact: how far a planted foot moves relative to the root.
    pub(super) fn stride(&self) -> f32 {
        self.speed * self.cycle * self.duty
    }

    /// The foot on `side` (+1 left, −1 right) at time `t`: its forward position relative to
    /// the root, its height above [`ANKLE_HEIGHT`], its pitch about X, and whether it is on the
    /// ground.
    pub(super) fn foot(&self, side: f32, t: f32) -> (f32, f32, f32, bool) {
        let u = (t / self.cycle + if side > 0.0 { 0.0 } else { 0.5 }).rem_euclid(1.0);
        let s = self.stride();
        if u < self.duty {
            return (s * 0.5 - s * u / self.duty, 0.0, 0.0, true);
        }
        // Swing: a cubic Hermite from the lift-off point back to the touchdown point, leaving
        // and arriving at the ground speed so the foot neither jerks nor scuffs.
        let x = (u - self.duty) / (1.0 - self.duty);
        let m = -s * (1.0 - self.duty) / self.duty;
        let (x2, x3) = (x * x, x * x * x);
        let z = (2.0 * x3 - 3.0 * x2 + 1.0) * (-s * 0.5)
            + (x3 - 2.0 * x2 + x) * m
            + (-2.0 * x3 + 3.0 * x2) * (s * 0.5)
            + (x3 - x2) * m;
        (z, self.lift * (PI * x).sin(), self.pitch * (TAU * x).sin(), false)
    }

    /// Height of the thigh joints above the ground at time `t`: as high as the stance legs
    /// allow at touchdown and lift-off (their longest reach, [`LEG_REACH`]), plus the bob.
    pub(super) fn hip_height(&self, t: f32) -> f32 {
        let half = self.stride() * 0.5;
        let reach = LEG_REACH * (THIGH_LENGTH + SHIN_LENGTH);
        let at_ends = ANKLE_HEIGHT + (reach * reach - half * half).max(0.0).sqrt();
        // Mid-stance of the left foot is at phase duty / 2; the right one's half a cycle later.
        let bob = |t: f32| self.bob * (2.0 * TAU * (t / self.cycle - self.duty * 0.5)).cos();
        at_ends - bob(0.0) + bob(t)
    }

    /// The hips' rotation at time `t`: yaw following the left foot, a little roll.
    pub(super) fn hips_rotation(&self, t: f32) -> Quat<f32> {
        let half = self.stride() * 0.5;
        let forward = self.foot(1.0, t).0 / half;
        ry(-self.twist * forward) * rz(0.03 * (TAU * t / self.cycle).sin())
    }

    /// Local rotations of the thigh, shin and foot on `side` at time `t`, solved from the
    /// actual hip joint position (after the hips' bob, yaw and roll) so the ankle lands on the
    /// foot's path in the leg's plane (the hips' sway moves that plane a little sideways),
    /// the foot at its pitch in the character's frame.
    pub(super) fn leg(&self, side: f32, t: f32) -> [Quat<f32>; 3] {
        let (z, lift, pitch, _) = self.foot(side, t);
        let hips_rot = self.hips_rotation(t);
        let hips_pos = Vec3::new(0.0, self.hip_height(t) - THIGH_OFFSET.y, 0.0);
        let thigh = hips_pos + hips_rot.rotate(Vec3::new(side * THIGH_OFFSET.x, THIGH_OFFSET.y, 0.0));
        let (hip, knee) = leg_angles(ANKLE_HEIGHT + lift - thigh.y, z - thigh.z);
        // The thigh's model rotation is rx(hip): its local one undoes the hips'.
        [hips_rot.conjugate() * rx(hip), rx(knee), rx(pitch - hip - knee)]
    }
}

/// The `walk` clip's gait.
pub const WALK_GAIT: Gait = Gait {
    cycle: WALK_CYCLE,
    speed: WALK_SPEED,
    duty: 0.58,
    lift: 0.09,
    pitch: 0.3,
    bob: 0.035,
    lean: 0.04,
    arm_swing: 0.35,
    elbow: 0.3,
    twist: 0.1,
};

/// The `run` clip's gait.
pub const RUN_GAIT: Gait = Gait {
    cycle: RUN_CYCLE,
    speed: RUN_SPEED,
    duty: 0.34,
    lift: 0.16,
    pitch: 0.4,
    bob: 0.0,
    lean: 0.18,
    arm_swing: 0.6,
    elbow: 1.4,
    twist: 0.15,
};
