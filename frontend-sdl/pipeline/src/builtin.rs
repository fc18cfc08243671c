//! The built-in procedural rigs of `sinew demo`, built in code as [`Rig`]s (no files):
//!
//! - the **tentacle** ([`tentacle_rig`]): a box strip on a 4-joint chain;
//! - a **humanoid** ([`humanoid_rig`], 22 joints, capsules along the bones, smooth weights at
//!   the joints) with `idle`, `walk`, `run` and `wave` clips authored as LINEAR keys every
//!   1/30 s, its feet planted by construction ([`Gait`]);
//! - the **candy wrapper** ([`twist_rig`]): a cylinder on 2 joints.

use std::f32::consts::{FRAC_PI_2, PI, TAU};

use sinew::math::{Mat4, Quat, Transform, Vec3};

use crate::rig::{ChannelTarget, Interpolation, Rig, RigChannel, RigClip, RigJoint, RigMesh, RigPrimitive, RigSkin};

/// Key rate of the authored clips, in keys per second.
pub const KEY_RATE: f32 = 30.0;

/// Speed of the `walk` clip's root, in meters per second.
pub const WALK_SPEED: f32 = 1.2;
/// Length of one `walk` cycle (two steps), in seconds.
pub const WALK_CYCLE: f32 = 1.0;
/// Speed of the `run` clip's root, in meters per second.
pub const RUN_SPEED: f32 = 2.8;
/// Length of one `run` cycle (two steps), in seconds.
pub const RUN_CYCLE: f32 = 0.7;
/// Length of the `idle` clip, in seconds.
pub const IDLE_CYCLE: f32 = 3.0;
/// Length of the `wave` clip, in seconds.
pub const WAVE_CYCLE: f32 = 1.2;

/// Length of the tentacle, in meters.
pub const TENTACLE_LENGTH: f32 = 1.6;
/// Joints of the tentacle's chain.
pub const TENTACLE_JOINTS: usize = 4;

/// Radius of the candy-wrapper cylinder, in meters.
pub const TWIST_RADIUS: f32 = 0.14;
/// Length of the candy-wrapper cylinder, in meters.
pub const TWIST_LENGTH: f32 = 1.2;
/// Period of the candy-wrapper twist (0° → 180° → 0°), in seconds.
pub const TWIST_PERIOD: f32 = 6.0;

/// Joint indices of the procedural humanoid ([`humanoid_rig`]). Its rest pose is a T-pose
/// facing +Z with Y up; the character's left is +X.
pub mod humanoid {
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
}

// ------------------------------------------------------------------------------------------
// Mesh building
// ------------------------------------------------------------------------------------------

/// Smooth step from 0 at `x ≤ 0` to 1 at `x ≥ 1`.
pub fn smoothstep(x: f32) -> f32 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// A primitive under construction, with 4 influences per vertex.
#[derive(Default)]
struct MeshBuilder {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    joints: Vec<u16>,
    weights: Vec<f32>,
    indices: Vec<u32>,
}

impl MeshBuilder {
    /// Adds a vertex with up to 4 influences (weights are normalized; zero ones dropped).
    fn vertex(&mut self, p: Vec3<f32>, n: Vec3<f32>, influences: &[(usize, f32)]) -> u32 {
        let mut slots = [(0u16, 0.0f32); 4];
        let mut k = 0;
        for &(j, w) in influences {
            if w > 1.0e-6 && k < 4 {
                slots[k] = (j as u16, w);
                k += 1;
            }
        }
        let sum: f32 = slots.iter().map(|s| s.1).sum();
        if sum <= 0.0 {
            slots[0] = (influences.first().map(|i| i.0 as u16).unwrap_or(0), 1.0);
        } else {
            slots.iter_mut().for_each(|s| s.1 /= sum);
        }
        self.positions.push(p.to_array());
        self.normals.push(n.to_array());
        for (j, w) in slots {
            self.joints.push(j);
            self.weights.push(w);
        }
        (self.positions.len() - 1) as u32
    }

    /// Adds the triangles of a grid of vertices `first + row * cols + col` (quads split in
    /// two), counter-clockwise when rows advance along `d` and columns along `t_φ` with
    /// `t_φ × d` facing out.
    fn grid(&mut self, first: u32, rows: u32, cols: u32, wrap: bool) {
        let quads = if wrap { cols } else { cols - 1 };
        for r in 0..rows - 1 {
            for c in 0..quads {
                let c1 = (c + 1) % cols;
                let a = first + r * cols + c;
                let b = first + r * cols + c1;
                let d = first + (r + 1) * cols + c;
                let e = first + (r + 1) * cols + c1;
                self.indices.extend_from_slice(&[a, b, d, b, e, d]);
            }
        }
    }

    /// Recomputes the normals of vertices `from..` as area-weighted averages of the faces of
    /// the triangles `tri_from..` that use them.
    fn smooth_normals(&mut self, from: usize, tri_from: usize) {
        let mut acc = vec![Vec3::<f32>::ZERO; self.positions.len() - from];
        for t in self.indices[tri_from..].chunks_exact(3) {
            let p = |i: u32| Vec3::from_array(self.positions[i as usize]);
            let n = (p(t[1]) - p(t[0])).cross(p(t[2]) - p(t[0]));
            for &i in t {
                if let Some(a) = (i as usize).checked_sub(from).and_then(|k| acc.get_mut(k)) {
                    *a += n;
                }
            }
        }
        for (k, n) in acc.into_iter().enumerate() {
            self.normals[from + k] = n.normalize_or_zero().to_array();
        }
    }

    fn into_primitive(self, color: [f32; 4]) -> RigPrimitive {
        RigPrimitive {
            positions: self.positions,
            normals: Some(self.normals),
            tangents: None,
            influences: 4,
            joint_indices: self.joints,
            joint_weights: self.weights,
            indices: self.indices,
            color,
        }
    }
}

/// One capsule of the humanoid's mesh: a tube from `a` to `b` with an elliptic cross-section
/// (`rx` along `lateral`, `rz` across it) and rounded ends, skinned to `joint` and blended into
/// `parent` around `a` and into `child` around `b`.
struct Capsule {
    joint: usize,
    a: Vec3<f32>,
    b: Vec3<f32>,
    rx: f32,
    rz: f32,
    lateral: Vec3<f32>,
    parent: Option<usize>,
    child: Option<usize>,
}

const CAPSULE_SIDES: u32 = 12;

impl MeshBuilder {
    fn capsule(&mut self, c: &Capsule) {
        let axis = c.b - c.a;
        let len = axis.length();
        let d = axis.normalize_or_zero();
        let u = (c.lateral - d * c.lateral.dot(d)).normalize_or_zero();
        let v = d.cross(u);
        let cap = c.rx.min(c.rz);
        // Axial stations: a hemisphere below `a`, the tube, a hemisphere above `b`.
        let mut stations: Vec<(f32, f32)> = Vec::new();
        const CAP_RINGS: u32 = 5;
        for i in 0..=CAP_RINGS {
            let th = FRAC_PI_2 * i as f32 / CAP_RINGS as f32;
            stations.push((-cap * th.cos(), th.sin()));
        }
        let tube = (len / 0.04).ceil().max(1.0) as u32;
        for i in 1..tube {
            stations.push((len * i as f32 / tube as f32, 1.0));
        }
        for i in (0..=CAP_RINGS).rev() {
            let th = FRAC_PI_2 * i as f32 / CAP_RINGS as f32;
            stations.push((len + cap * th.cos(), th.sin()));
        }
        let blend = (len / 3.0).min(0.07);
        let first = self.positions.len();
        let tri_first = self.indices.len();
        for &(z, f) in &stations {
            let w_parent = if c.parent.is_some() { 1.0 - smoothstep((z + blend) / (2.0 * blend)) } else { 0.0 };
            let w_child = if c.child.is_some() { smoothstep((z - len + blend) / (2.0 * blend)) } else { 0.0 };
            let w_self = (1.0 - w_parent - w_child).max(0.0);
            let infl = [(c.joint, w_self), (c.parent.unwrap_or(0), w_parent), (c.child.unwrap_or(0), w_child)];
            for s in 0..CAPSULE_SIDES {
                let phi = TAU * s as f32 / CAPSULE_SIDES as f32;
                let p = c.a + d * z + u * (f * c.rx * phi.cos()) + v * (f * c.rz * phi.sin());
                self.vertex(p, Vec3::ZERO, &infl);
            }
        }
        self.grid(first as u32, stations.len() as u32, CAPSULE_SIDES, true);
        self.smooth_normals(first, tri_first);
        // The pole rings collapse to a point: their normals point along the axis.
        let last = self.positions.len() - CAPSULE_SIDES as usize;
        for k in 0..CAPSULE_SIDES as usize {
            self.normals[first + k] = (-d).to_array();
            self.normals[last + k] = d.to_array();
        }
    }
}

// ------------------------------------------------------------------------------------------
// Rigs
// ------------------------------------------------------------------------------------------

fn joint(name: &str, parent: Option<usize>, t: Vec3<f32>) -> RigJoint {
    RigJoint { name: name.to_string(), parent, rest: Transform::new(t, Quat::IDENTITY, Vec3::ONE) }
}

/// A skin over every joint, with inverse bind matrices from the rest pose (whose rotations
/// are all identity, so each bind matrix is a translation).
fn skin_all(joints: &[RigJoint]) -> RigSkin {
    let mut world: Vec<Vec3<f32>> = Vec::with_capacity(joints.len());
    for j in joints {
        let base = j.parent.and_then(|p| world.get(p).copied()).unwrap_or(Vec3::ZERO);
        world.push(base + j.rest.translation);
    }
    RigSkin {
        name: "skin".into(),
        joints: (0..joints.len()).collect(),
        inverse_bind: world.iter().map(|&p| Mat4::from_translation(-p).to_cols_array()).collect(),
    }
}

/// The tentacle: a box strip `TENTACLE_LENGTH` long (0.16 × 0.16 cross-section), subdivided in
/// 32 along its length (+Y), on a chain of [`TENTACLE_JOINTS`] joints. Each vertex is weighted
/// between the two nearest bone centers with a smooth step, so the falloff between adjacent
/// joints is smooth.
#[must_use]
pub fn tentacle_rig() -> Rig {
    let bone = TENTACLE_LENGTH / TENTACLE_JOINTS as f32;
    let joints: Vec<RigJoint> = (0..TENTACLE_JOINTS)
        .map(|i| {
            let t = if i == 0 { Vec3::ZERO } else { Vec3::new(0.0, bone, 0.0) };
            joint(&format!("tentacle{i}"), i.checked_sub(1), t)
        })
        .collect();
    let weights = |y: f32| -> [(usize, f32); 2] {
        let c = (y / bone - 0.5).clamp(0.0, (TENTACLE_JOINTS - 1) as f32);
        let i = (c.floor() as usize).min(TENTACLE_JOINTS - 2);
        let s = smoothstep(c - i as f32);
        [(i, 1.0 - s), (i + 1, s)]
    };
    let half = 0.08;
    let segments = 32u32;
    let mut mb = MeshBuilder::default();
    // Four sides, each with its own vertices so the box keeps flat faces.
    let sides = [
        (Vec3::new(0.0, 0.0, 1.0), Vec3::new(1.0, 0.0, 0.0)),
        (Vec3::new(1.0, 0.0, 0.0), Vec3::new(0.0, 0.0, -1.0)),
        (Vec3::new(0.0, 0.0, -1.0), Vec3::new(-1.0, 0.0, 0.0)),
        (Vec3::new(-1.0, 0.0, 0.0), Vec3::new(0.0, 0.0, 1.0)),
    ];
    for (n, across) in sides {
        let first = mb.positions.len() as u32;
        for r in 0..=segments {
            let y = TENTACLE_LENGTH * r as f32 / segments as f32;
            for c in 0..2 {
                let s = if c == 0 { -half } else { half };
                let p = n * half + across * s + Vec3::new(0.0, y, 0.0);
                mb.vertex(p, n, &weights(y));
            }
        }
        // Rows advance along +Y, columns along `across`; `across × Y` is `n`.
        mb.grid(first, segments + 1, 2, false);
    }
    for (y, n) in [(0.0f32, -Vec3::Y), (TENTACLE_LENGTH, Vec3::Y)] {
        let first = mb.positions.len() as u32;
        for (x, z) in [(-half, -half), (half, -half), (half, half), (-half, half)] {
            mb.vertex(Vec3::new(x, y, z), n, &weights(y));
        }
        let quad = if n.y > 0.0 { [0, 3, 2, 0, 2, 1] } else { [0, 1, 2, 0, 2, 3] };
        mb.indices.extend(quad.iter().map(|k| first + k));
    }
    let skin = skin_all(&joints);
    Rig {
        name: "tentacle".into(),
        joints,
        skins: vec![skin],
        meshes: vec![RigMesh {
            name: "tentacle".into(),
            skin: Some(0),
            node: None,
            primitives: vec![mb.into_primitive([0.85, 0.45, 0.2, 1.0])],
        }],
        ..Rig::default()
    }
}

/// The candy wrapper: a closed cylinder of radius [`TWIST_RADIUS`] and length
/// [`TWIST_LENGTH`] along +Y on 2 joints (`base` at the bottom, `twist` at mid-length),
/// blended smoothly over the middle half.
#[must_use]
pub fn twist_rig() -> Rig {
    let joints =
        vec![joint("base", None, Vec3::ZERO), joint("twist", Some(0), Vec3::new(0.0, TWIST_LENGTH * 0.5, 0.0))];
    let weights = |y: f32| -> [(usize, f32); 2] {
        let s = smoothstep((y / TWIST_LENGTH - 0.25) * 2.0);
        [(0, 1.0 - s), (1, s)]
    };
    const SIDES: u32 = 24;
    const RINGS: u32 = 48;
    let mut mb = MeshBuilder::default();
    let first = mb.positions.len() as u32;
    for r in 0..=RINGS {
        let y = TWIST_LENGTH * r as f32 / RINGS as f32;
        for s in 0..SIDES {
            let phi = TAU * s as f32 / SIDES as f32;
            // Columns advance clockwise seen from +Y so that `t_φ × Y` faces out.
            let n = Vec3::new(phi.sin(), 0.0, phi.cos());
            mb.vertex(n * TWIST_RADIUS + Vec3::new(0.0, y, 0.0), n, &weights(y));
        }
    }
    mb.grid(first, RINGS + 1, SIDES, true);
    for (y, n) in [(0.0f32, -Vec3::Y), (TWIST_LENGTH, Vec3::Y)] {
        let center = mb.vertex(Vec3::new(0.0, y, 0.0), n, &weights(y));
        let ring = mb.positions.len() as u32;
        for s in 0..SIDES {
            let phi = TAU * s as f32 / SIDES as f32;
            mb.vertex(Vec3::new(phi.sin() * TWIST_RADIUS, y, phi.cos() * TWIST_RADIUS), n, &weights(y));
        }
        for s in 0..SIDES {
            let (a, b) = (ring + s, ring + (s + 1) % SIDES);
            let tri = if n.y > 0.0 { [center, a, b] } else { [center, b, a] };
            mb.indices.extend_from_slice(&tri);
        }
    }
    let skin = skin_all(&joints);
    Rig {
        name: "candy-wrapper".into(),
        joints,
        skins: vec![skin],
        meshes: vec![RigMesh {
            name: "cylinder".into(),
            skin: Some(0),
            node: None,
            primitives: vec![mb.into_primitive([0.8, 0.8, 0.8, 1.0])],
        }],
        ..Rig::default()
    }
}

fn key_times(duration: f32) -> Vec<f32> {
    let n = (duration * KEY_RATE).round().max(1.0) as usize;
    (0..=n).map(|k| k as f32 / KEY_RATE).collect()
}

fn rotation_channel(joint: usize, duration: f32, f: impl Fn(f32) -> Quat<f32>) -> RigChannel {
    let times = key_times(duration);
    let mut values = Vec::with_capacity(times.len() * 4);
    let mut prev: Option<Quat<f32>> = None;
    for &t in &times {
        let mut q = f(t).normalize();
        // Keep consecutive keys in the same hemisphere.
        if prev.is_some_and(|p| p.dot(q) < 0.0) {
            q = -q;
        }
        prev = Some(q);
        values.extend_from_slice(&q.to_array());
    }
    RigChannel { joint, target: ChannelTarget::Rotation, interpolation: Interpolation::Linear, times, values }
}

fn translation_channel(joint: usize, duration: f32, f: impl Fn(f32) -> Vec3<f32>) -> RigChannel {
    let times = key_times(duration);
    let values = times.iter().flat_map(|&t| f(t).to_array()).collect();
    RigChannel { joint, target: ChannelTarget::Translation, interpolation: Interpolation::Linear, times, values }
}

/// A rotation by `a` radians about X.
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
const THIGH_OFFSET: Vec3<f32> = Vec3 { x: 0.1, y: -0.05, z: 0.0 };
/// Longest distance from the thigh joint to the ankle a stance leg is asked to reach, as a
/// share of the leg's length: the margin absorbs the hips' sway and keeps the knee unlocked.
const LEG_REACH: f32 = 0.97;

/// Thigh and knee angles about X (positive swings the bone backward) that put the ankle at
/// `(y, z)` relative to the thigh joint, with the knee bending forward: two-bone IK in the
/// sagittal plane, the distance clamped into the leg's reach.
pub fn leg_angles(y: f32, z: f32) -> (f32, f32) {
    let (a, b) = (THIGH_LENGTH, SHIN_LENGTH);
    let d = (y * y + z * z).sqrt().clamp((a - b).abs() + 1.0e-4, (a + b) * 0.9999);
    // The target's direction is (−cos φ, −sin φ) in (y, z), like the rest bone rotated by φ.
    let phi = (-z).atan2(-y);
    let at_hip = ((a * a + d * d - b * b) / (2.0 * a * d)).clamp(-1.0, 1.0).acos();
    let at_knee = ((a * a + b * b - d * d) / (2.0 * a * b)).clamp(-1.0, 1.0).acos();
    (phi - at_hip, PI - at_knee)
}

/// Shape of a locomotion cycle; `walk` and `run` differ only in these numbers.
///
/// Each foot follows a path relative to the root (which moves forward at `speed`): on the
/// ground for the first `duty` of its cycle, sliding backward at exactly `speed` (so it stays
/// put in the world), then swinging forward on a raised arc back to its touchdown point. The
/// left foot touches down at phase 0, the right half a cycle later. Leg angles come from
/// [`leg_angles`], so a planted foot is where the path says, up to key interpolation.
#[derive(Debug, Clone, Copy)]
pub struct Gait {
    /// Cycle length (two steps), in seconds.
    pub cycle: f32,
    /// Root speed, in meters per second.
    pub speed: f32,
    /// Share of the cycle a foot spends on the ground (above 0.5: double support, a walk;
    /// below: a flight phase, a run).
    pub duty: f32,
    /// Height of the swing foot's arc, in meters.
    pub lift: f32,
    /// Foot pitch during the swing (toes down after lift-off, up before touchdown), radians.
    pub pitch: f32,
    /// Vertical bob of the hips, in meters: highest at each mid-stance.
    pub bob: f32,
    /// Forward lean of the spine, radians.
    pub lean: f32,
    /// Arm swing, radians.
    pub arm_swing: f32,
    /// Elbow bend, radians.
    pub elbow: f32,
    /// Pelvis yaw, radians.
    pub twist: f32,
}

impl Gait {
    /// Length of the ground contact: how far a planted foot moves relative to the root.
    pub fn stride(&self) -> f32 {
        self.speed * self.cycle * self.duty
    }

    /// The foot on `side` (+1 left, −1 right) at time `t`: its forward position relative to
    /// the root, its height above [`ANKLE_HEIGHT`], its pitch about X, and whether it is on the
    /// ground.
    pub fn foot(&self, side: f32, t: f32) -> (f32, f32, f32, bool) {
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
    pub fn hip_height(&self, t: f32) -> f32 {
        let half = self.stride() * 0.5;
        let reach = LEG_REACH * (THIGH_LENGTH + SHIN_LENGTH);
        let at_ends = ANKLE_HEIGHT + (reach * reach - half * half).max(0.0).sqrt();
        // Mid-stance of the left foot is at phase duty / 2; the right one's half a cycle later.
        let bob = |t: f32| self.bob * (2.0 * TAU * (t / self.cycle - self.duty * 0.5)).cos();
        at_ends - bob(0.0) + bob(t)
    }

    /// The hips' rotation at time `t`: yaw following the left foot, a little roll.
    pub fn hips_rotation(&self, t: f32) -> Quat<f32> {
        let half = self.stride() * 0.5;
        let forward = self.foot(1.0, t).0 / half;
        ry(-self.twist * forward) * rz(0.03 * (TAU * t / self.cycle).sin())
    }

    /// Local rotations of the thigh, shin and foot on `side` at time `t`, solved from the
    /// actual hip joint position (after the hips' bob, yaw and roll) so the ankle lands on the
    /// foot's path in the leg's plane (the hips' sway moves that plane a little sideways),
    /// the foot at its pitch in the character's frame.
    pub fn leg(&self, side: f32, t: f32) -> [Quat<f32>; 3] {
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

/// A looping locomotion clip: feet planted while on the ground (see [`Gait`]), arms swinging
/// against the legs, the root moving forward (+Z) at `speed`.
fn gait_clip(name: &str, g: &Gait) -> RigClip {
    use humanoid::*;
    let d = g.cycle;
    let g = *g;
    let half = g.stride() * 0.5;
    let left = move |t: f32| g.foot(1.0, t).0 / half;
    let mut ch = vec![
        translation_channel(ROOT, d, move |t| Vec3::new(0.0, 0.0, g.speed * t)),
        translation_channel(HIPS, d, move |t| Vec3::new(0.0, g.hip_height(t) - THIGH_OFFSET.y, 0.0)),
        rotation_channel(HIPS, d, move |t| g.hips_rotation(t)),
        rotation_channel(SPINE, d, move |t| rx(g.lean) * ry(0.6 * g.twist * left(t))),
        rotation_channel(CHEST, d, move |t| ry(0.6 * g.twist * left(t))),
        rotation_channel(HEAD, d, move |t| rx(-0.5 * g.lean) * ry(-0.2 * g.twist * left(t))),
    ];
    for (side, thigh, upper, fore) in
        [(1.0f32, L_THIGH, L_UPPER_ARM, L_FOREARM), (-1.0, R_THIGH, R_UPPER_ARM, R_FOREARM)]
    {
        let forward = move |t: f32| g.foot(side, t).0 / half;
        for k in 0..3 {
            ch.push(rotation_channel(thigh + k, d, move |t| g.leg(side, t)[k]));
        }
        // Arms hang down (about Z), swing against the same-side leg (about X) and bend forward
        // at the elbow (about Y in the T-pose frame).
        ch.push(rotation_channel(upper, d, move |t| rx(g.arm_swing * forward(t)) * rz(-side * 1.3)));
        ch.push(rotation_channel(fore, d, move |t| ry(-side * g.elbow * (1.0 - 0.15 * forward(t)))));
    }
    RigClip { name: name.into(), channels: ch }
}

/// Height of the thigh joints above the ground while standing in `idle`, in meters (knees a
/// little bent).
const IDLE_HIP_HEIGHT: f32 = 0.885;

/// Standing: breathing in the spine and chest, the head looking around slowly, arms hanging,
/// knees a little bent with the feet flat on the ground.
fn idle_clip() -> RigClip {
    use humanoid::*;
    let d = IDLE_CYCLE;
    let phase = move |t: f32| TAU * t / d;
    let height = move |t: f32| IDLE_HIP_HEIGHT + 0.004 * phase(t).sin();
    let mut ch = vec![
        translation_channel(HIPS, d, move |t| Vec3::new(0.0, height(t) - THIGH_OFFSET.y, 0.0)),
        rotation_channel(SPINE, d, move |t| rx(0.02 * phase(t).sin())),
        rotation_channel(CHEST, d, move |t| rx(0.03 * phase(t).sin())),
        rotation_channel(HEAD, d, move |t| ry(0.15 * (0.5 * phase(t)).sin()) * rx(-0.02 * phase(t).sin())),
    ];
    for (side, upper, fore, thigh) in
        [(1.0f32, L_UPPER_ARM, L_FOREARM, L_THIGH), (-1.0, R_UPPER_ARM, R_FOREARM, R_THIGH)]
    {
        ch.push(rotation_channel(upper, d, move |t| {
            rx(0.04 * phase(t).sin()) * rz(-side * (1.25 + 0.03 * phase(t).sin()))
        }));
        ch.push(rotation_channel(fore, d, move |_| ry(-side * 0.2)));
        let leg = move |t: f32| leg_angles(ANKLE_HEIGHT - height(t), 0.0);
        ch.push(rotation_channel(thigh, d, move |t| rx(leg(t).0)));
        ch.push(rotation_channel(thigh + 1, d, move |t| rx(leg(t).1)));
        ch.push(rotation_channel(thigh + 2, d, move |t| rx(-leg(t).0 - leg(t).1)));
    }
    RigClip { name: "idle".into(), channels: ch }
}

/// Waves the right arm: the shoulder raised a little, the upper arm raised out to the side,
/// the forearm raised and swinging once per cycle, the hand following it. It animates the
/// subtree of the right clavicle only, the joints of [`WAVE_MASK`].
fn wave_clip() -> RigClip {
    use humanoid::*;
    let d = WAVE_CYCLE;
    let phase = move |t: f32| TAU * t / d;
    RigClip {
        name: "wave".into(),
        channels: vec![
            rotation_channel(R_CLAVICLE, d, move |t| rz(-0.2 - 0.03 * phase(t).sin())),
            rotation_channel(R_UPPER_ARM, d, move |t| rz(-0.6 + 0.05 * phase(t).sin()) * ry(0.3)),
            rotation_channel(R_FOREARM, d, move |t| rz(-(0.7 + 0.35 * phase(t).sin()))),
            rotation_channel(R_HAND, d, move |t| rz(-0.25 * (phase(t) - 0.6).sin())),
        ],
    }
}

/// The procedural humanoid: 22 joints (see [`humanoid`]), one skinned mesh of capsules along
/// the bones (each blended into its parent and child bone around the joints), and the clips
/// `idle`, `walk`, `run` and `wave` (LINEAR, keys every 1/30 s). `walk` and `run` move the
/// root forward at [`WALK_SPEED`] and [`RUN_SPEED`] and plant their feet (see `Gait`); `idle`
/// stands with the feet flat; `wave` animates only the right clavicle and arm.
#[must_use]
pub fn humanoid_rig() -> Rig {
    use humanoid::*;
    let v = Vec3::new;
    let mut joints = Vec::with_capacity(COUNT);
    joints.push(joint("root", None, Vec3::ZERO));
    joints.push(joint("hips", Some(ROOT), v(0.0, 0.95, 0.0)));
    joints.push(joint("spine", Some(HIPS), v(0.0, 0.12, 0.0)));
    joints.push(joint("chest", Some(SPINE), v(0.0, 0.18, 0.0)));
    joints.push(joint("neck", Some(CHEST), v(0.0, 0.2, 0.0)));
    joints.push(joint("head", Some(NECK), v(0.0, 0.1, 0.0)));
    for (side, name) in [(1.0f32, "l"), (-1.0, "r")] {
        let c = joints.len();
        joints.push(joint(&format!("{name}_clavicle"), Some(CHEST), v(side * 0.04, 0.16, 0.0)));
        joints.push(joint(&format!("{name}_upper_arm"), Some(c), v(side * 0.13, 0.0, 0.0)));
        joints.push(joint(&format!("{name}_forearm"), Some(c + 1), v(side * 0.28, 0.0, 0.0)));
        joints.push(joint(&format!("{name}_hand"), Some(c + 2), v(side * 0.26, 0.0, 0.0)));
    }
    for (side, name) in [(1.0f32, "l"), (-1.0, "r")] {
        let c = joints.len();
        joints.push(joint(&format!("{name}_thigh"), Some(HIPS), v(side * THIGH_OFFSET.x, THIGH_OFFSET.y, 0.0)));
        joints.push(joint(&format!("{name}_shin"), Some(c), v(0.0, -THIGH_LENGTH, 0.0)));
        joints.push(joint(&format!("{name}_foot"), Some(c + 1), v(0.0, -SHIN_LENGTH, 0.0)));
        joints.push(joint(&format!("{name}_toe"), Some(c + 2), v(0.0, -0.05, 0.13)));
    }
    let skin = skin_all(&joints);
    // Bind positions of the joints.
    let pos: Vec<Vec3<f32>> = skin.inverse_bind.iter().map(|m| -Mat4::from_cols_array(m).translation()).collect();
    let (x, z) = (Vec3::X, Vec3::Z);
    let seg = |joint: usize, a: Vec3<f32>, b: Vec3<f32>, rx: f32, rz: f32, lateral, parent, child| Capsule {
        joint,
        a,
        b,
        rx,
        rz,
        lateral,
        parent,
        child,
    };
    let mut caps = vec![
        seg(HIPS, pos[HIPS] - v(0.0, 0.03, 0.0), pos[SPINE], 0.15, 0.1, x, None, Some(SPINE)),
        seg(SPINE, pos[SPINE], pos[CHEST], 0.14, 0.095, x, Some(HIPS), Some(CHEST)),
        seg(CHEST, pos[CHEST], pos[NECK] - v(0.0, 0.03, 0.0), 0.17, 0.1, x, Some(SPINE), None),
        seg(NECK, pos[NECK] - v(0.0, 0.04, 0.0), pos[HEAD], 0.045, 0.045, x, Some(CHEST), Some(HEAD)),
        seg(HEAD, pos[HEAD] + v(0.0, 0.08, 0.0), pos[HEAD] + v(0.0, 0.16, 0.01), 0.095, 0.105, x, None, None),
    ];
    for (side, c, th) in [(1.0f32, L_CLAVICLE, L_THIGH), (-1.0, R_CLAVICLE, R_THIGH)] {
        let (u, f, h) = (c + 1, c + 2, c + 3);
        let (sh, ft, to) = (th + 1, th + 2, th + 3);
        caps.push(seg(c, pos[c], pos[u], 0.05, 0.05, z, Some(CHEST), Some(u)));
        caps.push(seg(u, pos[u], pos[f], 0.055, 0.055, z, Some(c), Some(f)));
        caps.push(seg(f, pos[f], pos[h], 0.045, 0.045, z, Some(u), Some(h)));
        caps.push(seg(
            h,
            pos[h] + v(side * 0.03, 0.0, 0.0),
            pos[h] + v(side * 0.12, 0.0, 0.0),
            0.05,
            0.025,
            z,
            Some(f),
            None,
        ));
        caps.push(seg(th, pos[th], pos[sh], 0.08, 0.08, x, Some(HIPS), Some(sh)));
        caps.push(seg(sh, pos[sh], pos[ft], 0.06, 0.06, x, Some(th), Some(ft)));
        caps.push(seg(ft, pos[ft], pos[to], 0.05, 0.04, x, Some(sh), Some(to)));
        caps.push(seg(to, pos[to], pos[to] + v(0.0, 0.0, 0.06), 0.05, 0.03, x, Some(ft), None));
    }
    let mut mb = MeshBuilder::default();
    for c in &caps {
        mb.capsule(c);
    }
    let clips = vec![idle_clip(), gait_clip("walk", &WALK_GAIT), gait_clip("run", &RUN_GAIT), wave_clip()];
    Rig {
        name: "humanoid".into(),
        joints,
        skins: vec![skin],
        meshes: vec![RigMesh {
            name: "body".into(),
            skin: Some(0),
            node: None,
            primitives: vec![mb.into_primitive([0.35, 0.55, 0.85, 1.0])],
        }],
        clips,
        ..Rig::default()
    }
}
