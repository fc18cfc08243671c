//! The built-in default scene of `sinew demo`, independent of any renderer.
//!
//! Three rigs are built in code as [`Rig`]s and baked to [`Model`]s (no files):
//!
//! - the **tentacle**: a box strip on a 4-joint chain, its joint angles driven by `sin()` of
//!   time with a speed and an amplitude ([`SceneParams`]);
//! - a procedural **humanoid** (22 joints, capsules along the bones, smooth weights at the
//!   joints) with `idle`, `walk`, `run` and `wave` clips authored as LINEAR keys every 1/30 s;
//!   it walks a closed path, switching between walk and run and stopping to wave
//!   ([`character_state`]);
//! - the **candy wrapper**: a cylinder on 2 joints whose second joint twists up to 180° about
//!   the long axis, drawn twice side by side, with linear blend skinning (which collapses) and
//!   dual-quaternion skinning (which keeps the volume).
//!
//! [`Scene::frame`] gives what to draw at a scene time: for each object its world matrix, the
//! baked mesh with its skin palettes (matrices and dual quaternions) for GPU skinning, or
//! [`DrawObject::skin_cpu`] for the skinned vertex buffers a software renderer needs, plus bone
//! lines, a ground grid and text labels. [`default_camera`] and [`SceneLight`] are the camera
//! and light both renderers use, so their images can be compared.

use std::f32::consts::{FRAC_PI_2, PI, TAU};

use sinew::clip::RotationInterpolation;
use sinew::job::JobError;
use sinew::math::{DualQuat, Mat4, Quat, SoaTransform, Transform, Vec3};

use crate::bake::BakeOptions;
use crate::model::{Model, ModelError, SkinnedPart, Skinning};
use crate::rig::{ChannelTarget, Interpolation, Rig, RigChannel, RigClip, RigJoint, RigMesh, RigPrimitive, RigSkin};

/// Key rate of the authored clips, in keys per second.
pub const KEY_RATE: f32 = 30.0;

/// Speed of the `walk` clip's root, in meters per second.
pub const WALK_SPEED: f32 = 1.3;
/// Length of one `walk` cycle (two steps), in seconds.
pub const WALK_CYCLE: f32 = 1.0;
/// Speed of the `run` clip's root, in meters per second.
pub const RUN_SPEED: f32 = 3.2;
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
fn smoothstep(x: f32) -> f32 {
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

fn rx(a: f32) -> Quat<f32> {
    Quat::from_axis_angle(Vec3::X, a)
}
fn ry(a: f32) -> Quat<f32> {
    Quat::from_axis_angle(Vec3::Y, a)
}
fn rz(a: f32) -> Quat<f32> {
    Quat::from_axis_angle(Vec3::Z, a)
}

/// Shape of a locomotion cycle; `walk` and `run` differ only in these numbers.
struct Gait {
    cycle: f32,
    speed: f32,
    lean: f32,
    thigh: f32,
    thigh_bias: f32,
    knee: f32,
    knee_rest: f32,
    arm_swing: f32,
    elbow: f32,
    twist: f32,
}

impl Gait {
    /// Thigh, knee and ankle angles (about X; positive swings backward) of the leg on `side`
    /// (+1 left, −1 right) at time `t`. The left leg swings forward through φ = 0; the right
    /// runs half a cycle behind. The knee folds while the thigh moves forward (cos φ > 0) and
    /// the ankle keeps the foot nearly level.
    fn leg(&self, side: f32, t: f32) -> (f32, f32, f32) {
        let ph = TAU * t / self.cycle + if side > 0.0 { 0.0 } else { PI };
        let hip = self.thigh_bias - self.thigh * ph.sin();
        let knee = self.knee_rest + self.knee * ph.cos().max(0.0).powf(1.5);
        (hip, knee, -0.8 * (hip + knee))
    }
}

/// Lowest point of the sole below the thigh joint, in the sagittal plane, for leg angles
/// `(hip, knee, ankle)`: forward kinematics over the rig's bone lengths (thigh 0.42 m,
/// shin 0.40 m) to a heel and a toe point under the ankle.
fn sole_height((hip, knee, ankle): (f32, f32, f32)) -> f32 {
    // (y, z) rotated about X by `a`.
    let rot = |a: f32, (y, z): (f32, f32)| (y * a.cos() - z * a.sin(), y * a.sin() + z * a.cos());
    let add = |p: (f32, f32), q: (f32, f32)| (p.0 + q.0, p.1 + q.1);
    let knee_p = rot(hip, (-0.42, 0.0));
    let ankle_p = add(knee_p, rot(hip + knee, (-0.40, 0.0)));
    let foot = hip + knee + ankle;
    let heel = add(ankle_p, rot(foot, (-0.075, -0.02)));
    let toe = add(ankle_p, rot(foot, (-0.075, 0.19)));
    heel.0.min(toe.0)
}

/// A looping locomotion clip: legs in anti-phase, arms opposite the legs, the root moving
/// forward (+Z) at `speed`, and the hips lowered so the lower foot stays on the ground (in the
/// rest pose the soles are 0.895 m below the thigh joints).
fn gait_clip(name: &str, rest: &[RigJoint], g: &Gait) -> RigClip {
    use humanoid::*;
    let d = g.cycle;
    let phase = move |t: f32| TAU * t / d;
    let hips_rest = rest[HIPS].rest.translation;
    let ground = sole_height((0.0, 0.0, 0.0));
    let plant = move |t: f32| ground - sole_height(g.leg(1.0, t)).min(sole_height(g.leg(-1.0, t)));
    let mut ch = vec![
        translation_channel(ROOT, d, move |t| Vec3::new(0.0, 0.0, g.speed * t)),
        translation_channel(HIPS, d, move |t| hips_rest + Vec3::new(0.0, plant(t), 0.0)),
        rotation_channel(HIPS, d, move |t| ry(g.twist * phase(t).sin()) * rz(0.04 * phase(t).sin())),
        rotation_channel(SPINE, d, move |t| rx(g.lean) * ry(-0.6 * g.twist * phase(t).sin())),
        rotation_channel(CHEST, d, move |t| ry(-0.6 * g.twist * phase(t).sin())),
        rotation_channel(HEAD, d, move |t| rx(-0.5 * g.lean) * ry(0.3 * g.twist * phase(t).sin())),
    ];
    for (side, thigh, shin, foot, upper, fore) in [
        (1.0f32, L_THIGH, L_SHIN, L_FOOT, L_UPPER_ARM, L_FOREARM),
        (-1.0, R_THIGH, R_SHIN, R_FOOT, R_UPPER_ARM, R_FOREARM),
    ] {
        let ph = move |t: f32| phase(t) + if side > 0.0 { 0.0 } else { PI };
        ch.push(rotation_channel(thigh, d, move |t| rx(g.leg(side, t).0)));
        ch.push(rotation_channel(shin, d, move |t| rx(g.leg(side, t).1)));
        ch.push(rotation_channel(foot, d, move |t| rx(g.leg(side, t).2)));
        // Arms hang down (about Z), swing against the same-side leg (about X) and bend forward
        // at the elbow (about Y in the T-pose frame).
        ch.push(rotation_channel(upper, d, move |t| rx(-g.arm_swing * ph(t).sin()) * rz(-side * 1.3)));
        ch.push(rotation_channel(fore, d, move |t| ry(-side * (g.elbow + 0.15 * g.elbow * ph(t).sin()))));
    }
    RigClip { name: name.into(), channels: ch }
}

fn idle_clip() -> RigClip {
    use humanoid::*;
    let d = IDLE_CYCLE;
    let phase = move |t: f32| TAU * t / d;
    let mut ch = vec![
        rotation_channel(SPINE, d, move |t| rx(0.02 * phase(t).sin())),
        rotation_channel(CHEST, d, move |t| rx(0.03 * phase(t).sin())),
        rotation_channel(HEAD, d, move |t| ry(0.15 * (0.5 * phase(t)).sin()) * rx(-0.02 * phase(t).sin())),
    ];
    for (side, upper, fore, shin) in [(1.0f32, L_UPPER_ARM, L_FOREARM, L_SHIN), (-1.0, R_UPPER_ARM, R_FOREARM, R_SHIN)]
    {
        ch.push(rotation_channel(upper, d, move |t| {
            rx(0.04 * phase(t).sin()) * rz(-side * (1.25 + 0.03 * phase(t).sin()))
        }));
        ch.push(rotation_channel(fore, d, move |_| ry(-side * 0.2)));
        ch.push(rotation_channel(shin, d, move |_| rx(0.05)));
    }
    RigClip { name: "idle".into(), channels: ch }
}

/// Waves the right arm only: the upper arm raised out to the side, the forearm raised and
/// swinging once per cycle, the hand following it.
fn wave_clip() -> RigClip {
    use humanoid::*;
    let d = WAVE_CYCLE;
    let phase = move |t: f32| TAU * t / d;
    RigClip {
        name: "wave".into(),
        channels: vec![
            rotation_channel(R_UPPER_ARM, d, move |t| rz(-0.75 + 0.05 * phase(t).sin()) * ry(0.3)),
            rotation_channel(R_FOREARM, d, move |t| rz(-(0.7 + 0.35 * phase(t).sin()))),
            rotation_channel(R_HAND, d, move |t| rz(-0.25 * (phase(t) - 0.6).sin())),
        ],
    }
}

/// The procedural humanoid: 22 joints (see [`humanoid`]), one skinned mesh of capsules along
/// the bones (each blended into its parent and child bone around the joints), and the clips
/// `idle`, `walk`, `run` and `wave` (LINEAR, keys every 1/30 s). `walk` and `run` move the
/// root forward at [`WALK_SPEED`] and [`RUN_SPEED`]; `wave` animates only the right arm.
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
        joints.push(joint(&format!("{name}_thigh"), Some(HIPS), v(side * 0.1, -0.05, 0.0)));
        joints.push(joint(&format!("{name}_shin"), Some(c), v(0.0, -0.42, 0.0)));
        joints.push(joint(&format!("{name}_foot"), Some(c + 1), v(0.0, -0.4, 0.0)));
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
    let walk = Gait {
        cycle: WALK_CYCLE,
        speed: WALK_SPEED,
        lean: 0.04,
        thigh: 0.45,
        thigh_bias: -0.05,
        knee: 0.65,
        knee_rest: 0.08,
        arm_swing: 0.35,
        elbow: 0.3,
        twist: 0.1,
    };
    let run = Gait {
        cycle: RUN_CYCLE,
        speed: RUN_SPEED,
        lean: 0.18,
        thigh: 0.75,
        thigh_bias: -0.2,
        knee: 1.3,
        knee_rest: 0.25,
        arm_swing: 0.6,
        elbow: 1.4,
        twist: 0.15,
    };
    let clips = vec![idle_clip(), gait_clip("walk", &joints, &walk), gait_clip("run", &joints, &run), wave_clip()];
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

// ------------------------------------------------------------------------------------------
// Camera and light
// ------------------------------------------------------------------------------------------

/// An orbit camera: it looks at `target` from `distance` away, turned `yaw` about +Y (0 looks
/// from +Z towards −Z) and raised `pitch` above the horizon.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// Point looked at.
    pub target: Vec3<f32>,
    /// Turn about +Y, in radians.
    pub yaw: f32,
    /// Elevation above the horizon, in radians (kept within ±1.5).
    pub pitch: f32,
    /// Distance from the target.
    pub distance: f32,
    /// Vertical field of view, in radians.
    pub fov_y: f32,
}

impl Camera {
    /// The eye position.
    #[must_use]
    pub fn eye(&self) -> Vec3<f32> {
        let (sp, cp) = self.pitch.sin_cos();
        let (sy, cy) = self.yaw.sin_cos();
        self.target + Vec3::new(cp * sy, sp, cp * cy) * self.distance
    }
    /// The view matrix (world to eye).
    #[must_use]
    pub fn view(&self) -> Mat4<f32> {
        Mat4::look_at_rh(self.eye(), self.target, Vec3::Y)
    }
    /// The near and far planes: proportional to the distance, so any framing keeps depth
    /// precision.
    #[must_use]
    pub fn clip_planes(&self) -> (f32, f32) {
        (self.distance * 0.02, self.distance * 20.0)
    }
    /// The projection for a viewport `aspect` (width / height) wide, OpenGL clip conventions.
    #[must_use]
    pub fn projection(&self, aspect: f32) -> Mat4<f32> {
        let (near, far) = self.clip_planes();
        let aspect = if aspect.is_finite() && aspect > 0.0 { aspect } else { 1.0 };
        Mat4::perspective_rh_gl(self.fov_y, aspect, near, far)
    }
    /// Projection × view.
    #[must_use]
    pub fn view_proj(&self, aspect: f32) -> Mat4<f32> {
        self.projection(aspect) * self.view()
    }
    /// Turns the camera by `dyaw`, `dpitch` (radians), keeping the pitch within ±1.5.
    pub fn orbit(&mut self, dyaw: f32, dpitch: f32) {
        self.yaw += dyaw;
        self.pitch = (self.pitch + dpitch).clamp(-1.5, 1.5);
    }
    /// Multiplies the distance by `factor` (clamped to stay positive and finite).
    pub fn zoom(&mut self, factor: f32) {
        if factor.is_finite() && factor > 0.0 {
            self.distance = (self.distance * factor).clamp(1.0e-3, 1.0e6);
        }
    }
    /// A camera that shows a sphere (`center`, `radius`) whole from a slightly raised front
    /// view, in any viewport at least as wide as tall.
    #[must_use]
    pub fn framing(center: Vec3<f32>, radius: f32) -> Camera {
        let fov_y = 40f32.to_radians();
        let radius = if radius.is_finite() && radius > 0.0 { radius } else { 1.0 };
        Camera { target: center, yaw: 0.35, pitch: 0.3, distance: radius * 1.1 / (fov_y * 0.5).sin(), fov_y }
    }
}

/// The default scene's camera for a viewport `aspect` (width / height) wide: the tentacle on
/// the left, the character's path in the middle and the two candy wrappers on the right. At
/// 16:9 and wider the scene fills the width; narrower viewports move the camera back so the
/// whole scene stays in view.
#[must_use]
pub fn default_camera(aspect: f32) -> Camera {
    let wide = 16.0 / 9.0;
    let aspect = if aspect.is_finite() && aspect > 0.0 { aspect } else { wide };
    Camera {
        target: Vec3::new(-0.25, 0.7, -0.5),
        yaw: 0.0,
        pitch: 0.3,
        distance: 6.0 * (wide / aspect).max(1.0),
        fov_y: 45f32.to_radians(),
    }
}

/// The directional light both renderers use: a surface with unit normal `n̂` gets the level
/// `ambient + diffuse · max(0, n̂ · l̂)` (clamped to 1) times its color.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SceneLight {
    /// World-space direction from surfaces towards the light (any non-zero length).
    pub direction: Vec3<f32>,
    /// Level of surfaces facing away from the light.
    pub ambient: f32,
    /// Extra level of surfaces facing the light head-on.
    pub diffuse: f32,
}

impl SceneLight {
    /// From the viewer's upper left, `(−1, 1, 1)`; ambient 0.25, diffuse 0.75 (the software
    /// rasterizer's default light).
    pub const DEFAULT: SceneLight =
        SceneLight { direction: Vec3 { x: -1.0, y: 1.0, z: 1.0 }, ambient: 0.25, diffuse: 0.75 };
}

impl Default for SceneLight {
    fn default() -> Self {
        Self::DEFAULT
    }
}

// ------------------------------------------------------------------------------------------
// The character's schedule
// ------------------------------------------------------------------------------------------

/// Length of the character's repeating schedule, in seconds.
pub const SCHEDULE_PERIOD: f32 = 20.0;

/// The schedule: `(time, idle, walk, run, wave)` keys, linear in between. Walk, crossfade to
/// run, run, back to walk, slow to idle and wave with the right arm, walk again.
const SCHEDULE: [(f32, f32, f32, f32, f32); 12] = [
    (0.0, 0.0, 1.0, 0.0, 0.0),
    (7.0, 0.0, 1.0, 0.0, 0.0),
    (7.6, 0.0, 0.0, 1.0, 0.0),
    (11.0, 0.0, 0.0, 1.0, 0.0),
    (11.6, 0.0, 1.0, 0.0, 0.0),
    (14.0, 0.0, 1.0, 0.0, 0.0),
    (14.6, 1.0, 0.0, 0.0, 0.0),
    (15.0, 1.0, 0.0, 0.0, 1.0),
    (18.4, 1.0, 0.0, 0.0, 1.0),
    (18.8, 1.0, 0.0, 0.0, 0.0),
    (19.4, 1.0, 0.0, 0.0, 0.0),
    (SCHEDULE_PERIOD, 0.0, 1.0, 0.0, 0.0),
];

/// When the wave starts within the schedule, in seconds.
const WAVE_START: f32 = 14.6;

/// Center of the character's circular path.
pub const PATH_CENTER: Vec3<f32> = Vec3 { x: 0.0, y: 0.0, z: -1.2 };
/// Radius of the character's circular path, in meters.
pub const PATH_RADIUS: f32 = 1.3;

/// What the character does at one moment of the schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CharacterState {
    /// Weight of `idle` (idle + walk + run = 1).
    pub idle: f32,
    /// Weight of `walk`.
    pub walk: f32,
    /// Weight of `run`.
    pub run: f32,
    /// Weight of the `wave` layer on the joints it animates (the right arm).
    pub wave: f32,
    /// Seconds since the wave started (0 outside it).
    pub wave_time: f32,
    /// Locomotion phase in cycles, `[0, 1)`: walk and run play at the same phase so their
    /// feet agree while crossfading.
    pub phase: f32,
    /// Distance walked along the path, in meters, `[0, 2π·PATH_RADIUS)`.
    pub distance: f32,
    /// Current speed, in meters per second.
    pub speed: f32,
    /// Time in the `idle` clip, in seconds.
    pub idle_time: f32,
}

fn schedule_at(t: f64) -> [f64; 4] {
    let mut prev = SCHEDULE[0];
    for k in SCHEDULE {
        if (k.0 as f64) >= t {
            let span = (k.0 - prev.0) as f64;
            let s = if span > 0.0 { (t - prev.0 as f64) / span } else { 1.0 };
            let lerp = |a: f32, b: f32| a as f64 + (b as f64 - a as f64) * s;
            return [lerp(prev.1, k.1), lerp(prev.2, k.2), lerp(prev.3, k.3), lerp(prev.4, k.4)];
        }
        prev = k;
    }
    [prev.1 as f64, prev.2 as f64, prev.3 as f64, prev.4 as f64]
}

/// `∫₀^t f(weights(τ)) dτ` for `t` within one period, with `f` linear in the weights (so the
/// integrand is piecewise linear and the trapezoid rule is exact).
fn integrate(t: f64, f: impl Fn([f64; 4]) -> f64) -> f64 {
    let mut acc = 0.0;
    for w in SCHEDULE.windows(2) {
        let (a, b) = (w[0].0 as f64, w[1].0 as f64);
        if t <= a {
            break;
        }
        let e = t.min(b);
        acc += (e - a) * 0.5 * (f(schedule_at(a)) + f(schedule_at(e)));
    }
    acc
}

fn speed_of(w: [f64; 4]) -> f64 {
    w[1] * WALK_SPEED as f64 + w[2] * RUN_SPEED as f64
}

fn phase_rate_of(w: [f64; 4]) -> f64 {
    w[1] / WALK_CYCLE as f64 + w[2] / RUN_CYCLE as f64
}

/// The character's state at scene time `t` (seconds; negative or non-finite times read as 0).
/// A pure function of `t`, so any renderer, frame rate or seek gives the same pose.
#[must_use]
pub fn character_state(t: f32) -> CharacterState {
    let t = if t.is_finite() { t.max(0.0) as f64 } else { 0.0 };
    let period = SCHEDULE_PERIOD as f64;
    let cycles = (t / period).floor();
    let local = t - cycles * period;
    let w = schedule_at(local);
    let circumference = TAU as f64 * PATH_RADIUS as f64;
    let distance = (cycles * integrate(period, speed_of) + integrate(local, speed_of)).rem_euclid(circumference);
    let phase = (cycles * integrate(period, phase_rate_of) + integrate(local, phase_rate_of)).rem_euclid(1.0);
    let waving = w[3] > 0.0;
    CharacterState {
        idle: w[0] as f32,
        walk: w[1] as f32,
        run: w[2] as f32,
        wave: w[3] as f32,
        wave_time: if waving { (local - WAVE_START as f64).max(0.0) as f32 } else { 0.0 },
        phase: phase as f32,
        distance: distance as f32,
        speed: speed_of(w) as f32,
        idle_time: local.rem_euclid(IDLE_CYCLE as f64) as f32,
    }
}

/// Where the character stands and faces after walking `distance` along the path: a circle
/// around [`PATH_CENTER`], walked counter-clockwise seen from below (left to right in front).
#[must_use]
pub fn path_transform(distance: f32) -> Mat4<f32> {
    let a = distance / PATH_RADIUS;
    let pos = PATH_CENTER + Vec3::new(a.sin(), 0.0, a.cos()) * PATH_RADIUS;
    // The character faces +Z; turn it to the path's tangent (cos a, 0, −sin a).
    Mat4::from_trs(pos, ry(a + FRAC_PI_2), Vec3::ONE)
}

// ------------------------------------------------------------------------------------------
// TEMPORARY pose blending — replaced by the core's controller and blending job
// ------------------------------------------------------------------------------------------

/// Blends local poses per joint: translations and scales by weighted sums, rotations by a
/// weighted nlerp (each aligned to the first contributing pose's hemisphere, then
/// normalized). Weights need not sum to 1 (they are normalized); zero-weight layers are
/// skipped; with no weight at all `out` is left as is. `out` and every layer must be equally
/// long.
///
/// TEMPORARY: a stand-in for `sinew::job::BlendingJob` (being written in the core).
pub fn blend_poses(layers: &[(&[SoaTransform<f32>], f32)], out: &mut [SoaTransform<f32>]) {
    let total: f32 = layers.iter().filter(|l| l.1 > 0.0 && l.0.len() >= out.len()).map(|l| l.1).sum();
    if total <= 0.0 {
        return;
    }
    for (g, o) in out.iter_mut().enumerate() {
        for lane in 0..4 {
            let mut t = Vec3::ZERO;
            let mut s = Vec3::ZERO;
            let mut q = Quat::new(0.0, 0.0, 0.0, 0.0);
            let mut first: Option<Quat<f32>> = None;
            for (pose, w) in layers.iter().filter(|l| l.1 > 0.0 && l.0.len() > g) {
                let x = pose[g].lane(lane);
                let w = w / total;
                let r = match first {
                    Some(f) if f.dot(x.rotation) < 0.0 => -x.rotation,
                    Some(_) => x.rotation,
                    None => {
                        first = Some(x.rotation);
                        x.rotation
                    }
                };
                t += x.translation * w;
                s += x.scale * w;
                q = q + r * w;
            }
            o.set_lane(lane, &Transform::new(t, q.normalize(), s));
        }
    }
}

/// Blends `layer` over `pose` with weight `w` on the joints where `mask` is true (a
/// partial-skeleton layer).
///
/// TEMPORARY: a stand-in for a masked layer of `sinew::job::BlendingJob`.
pub fn blend_masked(pose: &mut [SoaTransform<f32>], layer: &[SoaTransform<f32>], mask: &[bool], w: f32) {
    let w = w.clamp(0.0, 1.0);
    for (j, _) in mask.iter().enumerate().filter(|m| *m.1) {
        let (g, lane) = (j / 4, j % 4);
        let (Some(p), Some(l)) = (pose.get(g), layer.get(g)) else { continue };
        let (a, b) = (p.lane(lane), l.lane(lane));
        let t = Transform::new(
            a.translation.lerp(b.translation, w),
            a.rotation.nlerp(b.rotation, w),
            a.scale.lerp(b.scale, w),
        );
        if let Some(p) = pose.get_mut(g) {
            p.set_lane(lane, &t);
        }
    }
}

/// Clip indices of the humanoid, and which joints `wave` animates.
#[derive(Debug, Clone)]
struct CharacterClips {
    idle: usize,
    walk: usize,
    run: usize,
    wave: usize,
    wave_mask: Vec<bool>,
}

/// The character's local pose for a schedule state.
///
/// TEMPORARY — the one place the character is animated by hand, to be replaced by the core's
/// controller once `sinew::player`, `controller`, `root_motion`, `ik` and `job::blending` land:
/// it samples each clip at a time derived from the state (walk and run at the same phase),
/// crossfades idle/walk/run by the state's weights with [`blend_poses`], lays `wave` over the
/// right arm with [`blend_masked`], and removes the
/// root's motion (the scene moves the character along [`path_transform`] instead; the
/// controller will extract the root motion of `walk` and `run` and move it by that). Aim IK
/// (looking at the mouse) will correct this pose before local-to-model.
fn character_pose(
    model: &Model,
    clips: &CharacterClips,
    s: &CharacterState,
    out: &mut Vec<SoaTransform<f32>>,
) -> Result<(), JobError> {
    let rot = RotationInterpolation::NlerpCorrected;
    let sample = |clip: usize, t: f32| -> Result<Vec<SoaTransform<f32>>, JobError> {
        let mut cursor = Vec::new();
        let mut pose = Vec::new();
        model.sample(Some(clip), t, rot, &mut cursor, &mut pose)?;
        Ok(pose)
    };
    let idle = sample(clips.idle, s.idle_time)?;
    let walk = sample(clips.walk, s.phase * WALK_CYCLE)?;
    let run = sample(clips.run, s.phase * RUN_CYCLE)?;
    out.clear();
    out.extend_from_slice(&idle);
    blend_poses(&[(&idle, s.idle), (&walk, s.walk), (&run, s.run)], out);
    if s.wave > 0.0 {
        let wave = sample(clips.wave, s.wave_time.rem_euclid(WAVE_CYCLE))?;
        blend_masked(out, &wave, &clips.wave_mask, s.wave);
    }
    // In-place: the root stays at its rest transform.
    if let (Some(g), Some(rest)) = (out.first_mut(), model.skeleton().rest_transform(humanoid::ROOT)) {
        g.set_lane(humanoid::ROOT, &rest);
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------
// The scene
// ------------------------------------------------------------------------------------------

/// Index of the tentacle in [`Scene::models`].
pub const TENTACLE: usize = 0;
/// Index of the humanoid in [`Scene::models`].
pub const CHARACTER: usize = 1;
/// Index of the candy wrapper in [`Scene::models`].
pub const TWIST: usize = 2;

/// Where the tentacle's base stands.
pub const TENTACLE_POSITION: Vec3<f32> = Vec3 { x: -2.2, y: 0.0, z: 0.0 };
/// Where the linear-blend candy wrapper stands.
pub const TWIST_LBS_POSITION: Vec3<f32> = Vec3 { x: 1.95, y: 0.0, z: 0.3 };
/// Where the dual-quaternion candy wrapper stands.
pub const TWIST_DQS_POSITION: Vec3<f32> = Vec3 { x: 2.75, y: 0.0, z: 0.3 };

/// Range of the tentacle speed slider, in cycles per second.
pub const TENTACLE_SPEED_RANGE: (f32, f32) = (0.0, 2.0);
/// Range of the tentacle amplitude slider, in radians per joint.
pub const TENTACLE_AMPLITUDE_RANGE: (f32, f32) = (0.0, 1.2);

/// The scene's interactive settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SceneParams {
    /// Tentacle wave frequency, in cycles per second.
    pub tentacle_speed: f32,
    /// Tentacle joint swing, in radians.
    pub tentacle_amplitude: f32,
    /// Whether [`Frame::bones`] holds the skeletons.
    pub show_bones: bool,
    /// Skinning of the tentacle and the character (the candy wrappers show both).
    pub skinning: Skinning,
}

impl Default for SceneParams {
    fn default() -> Self {
        SceneParams { tentacle_speed: 0.5, tentacle_amplitude: 0.6, show_bones: false, skinning: Skinning::Lbs }
    }
}

/// Why the scene could not be built.
#[derive(Debug)]
pub enum SceneError {
    /// A rig failed to bake or load.
    Model(ModelError),
    /// A built-in clip is missing after baking (an internal error).
    MissingClip(&'static str),
}

impl std::fmt::Display for SceneError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Model(e) => write!(f, "{e}"),
            Self::MissingClip(c) => write!(f, "built-in clip '{c}' is missing"),
        }
    }
}

impl std::error::Error for SceneError {}

/// One skinned mesh to draw.
#[derive(Debug, Clone)]
pub struct DrawObject<'a> {
    /// The model.
    pub model: &'a Model,
    /// Index of the model in its owner's list (a key for cached GPU buffers).
    pub model_index: usize,
    /// Mesh index in the model.
    pub mesh: usize,
    /// Object to world.
    pub world: Mat4<f32>,
    /// Model-space joint matrices (rigid meshes follow their node's).
    pub joints: Vec<Mat4<f32>>,
    /// Skin palette (model × inverse bind) of the mesh's skin; empty for rigid meshes.
    pub palette: Vec<Mat4<f32>>,
    /// The same palette as dual quaternions.
    pub dq_palette: Vec<DualQuat<f32>>,
    /// Skinning method.
    pub skinning: Skinning,
    /// Base color, RGBA 0 to 1.
    pub color: [f32; 4],
}

impl DrawObject<'_> {
    /// The skinned vertices of every part of the mesh, in object space (apply
    /// [`DrawObject::world`]), for a renderer that skins on the CPU.
    ///
    /// # Errors
    ///
    /// A [`JobError`] when the palette does not fit the mesh.
    pub fn skin_cpu(&self) -> Result<Vec<SkinnedPart>, JobError> {
        self.model.skin_mesh(self.mesh, &self.joints, &self.palette, &self.dq_palette, self.skinning)
    }
}

/// A text label anchored at a world position.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// Anchor, in world space.
    pub position: Vec3<f32>,
    /// The text.
    pub text: String,
}

/// Everything to draw at one moment.
#[derive(Debug, Clone, Default)]
pub struct Frame<'a> {
    /// Skinned meshes.
    pub objects: Vec<DrawObject<'a>>,
    /// Bone lines (joint to parent) in world space, drawn over everything.
    pub bones: Vec<[Vec3<f32>; 2]>,
    /// Ground grid lines in world space, depth-tested.
    pub grid: Vec<[Vec3<f32>; 2]>,
    /// Labels.
    pub labels: Vec<Label>,
}

/// Appends one [`DrawObject`] per mesh of `model` posed by `pose` (local, SoA) and placed by
/// `world`, and, when `bones` is given, its bone lines in world space.
///
/// `color` overrides the meshes' own colors.
///
/// # Errors
///
/// A [`JobError`] when `pose` does not fit the skeleton.
#[allow(clippy::too_many_arguments)]
pub fn push_model<'a>(
    frame: &mut Frame<'a>,
    model: &'a Model,
    model_index: usize,
    pose: &[SoaTransform<f32>],
    world: Mat4<f32>,
    skinning: Skinning,
    color: Option<[f32; 4]>,
    bones: bool,
) -> Result<(), JobError> {
    let mut joints = Vec::new();
    model.world(pose, &mut joints)?;
    let asset = model.asset();
    for mesh in 0..asset.num_meshes() {
        let Some(m) = asset.mesh(mesh) else { continue };
        let (palette, dq_palette) = match m.skin() {
            Some(s) => (model.palette(&joints, s)?, model.dq_palette(&joints, s)?),
            None => (Vec::new(), Vec::new()),
        };
        let c = m.color();
        frame.objects.push(DrawObject {
            model,
            model_index,
            mesh,
            world,
            joints: joints.clone(),
            palette,
            dq_palette,
            skinning,
            color: color.unwrap_or([c[0], c[1], c[2], c[3]].map(|v| v as f32 / 255.0)),
        });
    }
    if bones {
        let skeleton = model.skeleton();
        for (j, m) in joints.iter().enumerate() {
            if let Some(p) = skeleton.parent(j).and_then(|p| joints.get(p)) {
                frame.bones.push([world.transform_point3(p.translation()), world.transform_point3(m.translation())]);
            }
        }
    }
    Ok(())
}

/// A ground grid on `y = 0`: lines every `step` over `[x0, x1] × [z0, z1]`.
#[must_use]
pub fn ground_grid(x0: f32, x1: f32, z0: f32, z1: f32, step: f32) -> Vec<[Vec3<f32>; 2]> {
    let mut out = Vec::new();
    if !(step > 0.0 && x1 >= x0 && z1 >= z0) {
        return out;
    }
    let nx = ((x1 - x0) / step).round() as i32;
    let nz = ((z1 - z0) / step).round() as i32;
    for i in 0..=nx {
        let x = x0 + i as f32 * step;
        out.push([Vec3::new(x, 0.0, z0), Vec3::new(x, 0.0, z1)]);
    }
    for i in 0..=nz {
        let z = z0 + i as f32 * step;
        out.push([Vec3::new(x0, 0.0, z), Vec3::new(x1, 0.0, z)]);
    }
    out
}

/// The tentacle's local pose at time `t`: joint `i` swings `amplitude · sin(2π·speed·t − 0.9 i)`
/// about Z (half as much at the base) and a third of that, slower, about X.
#[must_use]
pub fn tentacle_pose(model: &Model, t: f32, speed: f32, amplitude: f32) -> Vec<SoaTransform<f32>> {
    let mut pose = model.skeleton().rest_pose().to_vec();
    let w = TAU * speed;
    for i in 0..model.skeleton().num_joints().min(TENTACLE_JOINTS) {
        let Some(rest) = model.skeleton().rest_transform(i) else { continue };
        let k = if i == 0 { 0.5 } else { 1.0 };
        let bend = k * amplitude * (w * t - 0.9 * i as f32).sin();
        let sway = k * amplitude / 3.0 * (0.7 * w * t - 0.7 * i as f32).sin();
        let tr = Transform::new(rest.translation, rz(bend) * rx(sway), rest.scale);
        if let Some(g) = pose.get_mut(i / 4) {
            g.set_lane(i % 4, &tr);
        }
    }
    pose
}

/// The candy wrapper's twist angle at time `t`: 0 → π → 0 over [`TWIST_PERIOD`].
#[must_use]
pub fn twist_angle(t: f32) -> f32 {
    PI * (0.5 - 0.5 * (TAU * t / TWIST_PERIOD).cos())
}

/// The candy wrapper's local pose with its second joint twisted by `angle` about +Y.
#[must_use]
pub fn twist_pose(model: &Model, angle: f32) -> Vec<SoaTransform<f32>> {
    let mut pose = model.skeleton().rest_pose().to_vec();
    if let (Some(rest), Some(g)) = (model.skeleton().rest_transform(1), pose.first_mut()) {
        g.set_lane(1, &Transform::new(rest.translation, ry(angle), rest.scale));
    }
    pose
}

/// The built-in scene: the baked models and the settings.
#[derive(Debug)]
pub struct Scene {
    models: Vec<Model>,
    clips: CharacterClips,
    /// Interactive settings.
    pub params: SceneParams,
}

impl Scene {
    /// Builds and bakes the three rigs, splitting meshes into parts of at most `palette`
    /// joints (`None`: no limit) with at most 4 influences per vertex.
    ///
    /// # Errors
    ///
    /// [`SceneError::Model`] when baking fails (a `palette` of 1 cannot hold the triangles
    /// that blend two joints).
    pub fn new(palette: Option<usize>) -> Result<Scene, SceneError> {
        let opts = BakeOptions { palette, max_influences: 4, ..BakeOptions::default() };
        let bake = |rig: &Rig| Model::from_rig(rig, &opts).map_err(SceneError::Model);
        let models = vec![bake(&tentacle_rig())?, bake(&humanoid_rig())?, bake(&twist_rig())?];
        let c = &models[CHARACTER];
        let find = |name: &'static str| c.find_clip(name).ok_or(SceneError::MissingClip(name));
        let wave = find("wave")?;
        let mut wave_mask = vec![false; c.skeleton().num_joints()];
        if let Some(clip) = c.asset().clip(wave) {
            for i in 0..clip.num_tracks() {
                if let Some(m) = clip.track(i).and_then(|t| wave_mask.get_mut(t.joint as usize)) {
                    *m = true;
                }
            }
        }
        let clips = CharacterClips { idle: find("idle")?, walk: find("walk")?, run: find("run")?, wave, wave_mask };
        Ok(Scene { models, clips, params: SceneParams::default() })
    }

    /// The baked models: [`TENTACLE`], [`CHARACTER`], [`TWIST`].
    #[must_use]
    pub fn models(&self) -> &[Model] {
        &self.models
    }

    /// What to draw at scene time `t` (seconds) with the current [`SceneParams`].
    ///
    /// # Errors
    ///
    /// A [`JobError`] if a pose does not fit its skeleton (not expected: the models are
    /// built here).
    pub fn frame(&self, t: f32) -> Result<Frame<'_>, JobError> {
        let t = if t.is_finite() { t } else { 0.0 };
        let p = &self.params;
        let mut f = Frame { grid: ground_grid(-3.5, 3.5, -3.0, 1.5, 0.5), ..Frame::default() };
        let tentacle = &self.models[TENTACLE];
        let pose = tentacle_pose(tentacle, t, p.tentacle_speed, p.tentacle_amplitude);
        let at = |v: Vec3<f32>| Mat4::from_translation(v);
        push_model(&mut f, tentacle, TENTACLE, &pose, at(TENTACLE_POSITION), p.skinning, None, p.show_bones)?;

        let character = &self.models[CHARACTER];
        let state = character_state(t);
        let mut pose = Vec::new();
        character_pose(character, &self.clips, &state, &mut pose)?;
        let world = path_transform(state.distance);
        push_model(&mut f, character, CHARACTER, &pose, world, p.skinning, None, p.show_bones)?;

        let twist = &self.models[TWIST];
        let pose = twist_pose(twist, twist_angle(t));
        let lbs_color = [0.9, 0.75, 0.3, 1.0];
        let dqs_color = [0.35, 0.8, 0.6, 1.0];
        push_model(&mut f, twist, TWIST, &pose, at(TWIST_LBS_POSITION), Skinning::Lbs, Some(lbs_color), p.show_bones)?;
        push_model(&mut f, twist, TWIST, &pose, at(TWIST_DQS_POSITION), Skinning::Dqs, Some(dqs_color), p.show_bones)?;
        let above = Vec3::new(0.0, TWIST_LENGTH + 0.25, 0.0);
        f.labels.push(Label { position: TWIST_LBS_POSITION + above, text: "LBS".into() });
        f.labels.push(Label { position: TWIST_DQS_POSITION + above, text: "DQS".into() });
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights_ok(rig: &Rig) {
        for m in &rig.meshes {
            let skin_len = rig.skins[m.skin.unwrap()].joints.len();
            for p in &m.primitives {
                let k = p.influences;
                assert_eq!(p.joint_weights.len(), p.positions.len() * k);
                for v in 0..p.positions.len() {
                    let w: f32 = p.joint_weights[v * k..v * k + k].iter().sum();
                    assert!((w - 1.0).abs() < 1e-5, "{}: vertex {v} weights sum to {w}", rig.name);
                    assert!(p.joint_indices[v * k..v * k + k].iter().all(|&j| (j as usize) < skin_len));
                }
                assert!(p.indices.iter().all(|&i| (i as usize) < p.positions.len()));
            }
        }
    }

    #[test]
    fn rigs_are_well_formed_and_bake() {
        for rig in [tentacle_rig(), humanoid_rig(), twist_rig()] {
            weights_ok(&rig);
        }
        assert_eq!(humanoid_rig().joints.len(), humanoid::COUNT);
        let scene = Scene::new(None).unwrap();
        let parts = |s: &Scene, m: usize| -> Vec<usize> {
            let a = s.models()[m].asset();
            a.mesh(0).unwrap().parts().map(|p| p.palette_len()).collect()
        };
        assert_eq!(parts(&scene, CHARACTER), vec![humanoid::COUNT]);
        // A small palette splits the character's mesh into parts that each fit it.
        let small = Scene::new(Some(6)).unwrap();
        let p = parts(&small, CHARACTER);
        assert!(p.len() > 3 && p.iter().all(|&n| n <= 6), "{p:?}");
        assert!(Scene::new(Some(1)).is_err());
    }

    #[test]
    fn clips_are_linear_at_30_hz_with_root_motion_and_an_arm_only_wave() {
        let rig = humanoid_rig();
        let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["idle", "walk", "run", "wave"]);
        for c in &rig.clips {
            for ch in &c.channels {
                assert_eq!(ch.interpolation, Interpolation::Linear);
                assert!(ch.times.windows(2).all(|w| (w[1] - w[0] - 1.0 / KEY_RATE).abs() < 1e-5));
            }
        }
        let wave = &rig.clips[3];
        let joints: Vec<usize> = wave.channels.iter().map(|c| c.joint).collect();
        assert!(joints.iter().all(|j| [humanoid::R_UPPER_ARM, humanoid::R_FOREARM, humanoid::R_HAND].contains(j)));
        // The baked walk and run move the root forward by speed × cycle per cycle.
        let scene = Scene::new(None).unwrap();
        let m = &scene.models()[CHARACTER];
        for (name, speed, cycle) in [("walk", WALK_SPEED, WALK_CYCLE), ("run", RUN_SPEED, RUN_CYCLE)] {
            let clip = m.find_clip(name).unwrap();
            let mut pose = Vec::new();
            let root_z = |t: f32, pose: &mut Vec<SoaTransform<f32>>| {
                m.sample(Some(clip), t, RotationInterpolation::NlerpCorrected, &mut Vec::new(), pose).unwrap();
                pose[0].lane(humanoid::ROOT).translation
            };
            let (a, b) = (root_z(0.0, &mut pose), root_z(cycle, &mut pose));
            assert!((b.z - a.z - speed * cycle).abs() < 1e-3, "{name}: {} m", b.z - a.z);
            assert!(b.x.abs() < 1e-3 && b.y.abs() < 1e-3);
        }
    }

    #[test]
    fn tentacle_weights_fall_off_smoothly_along_the_length() {
        let rig = tentacle_rig();
        let p = &rig.meshes[0].primitives[0];
        let bone = TENTACLE_LENGTH / TENTACLE_JOINTS as f32;
        let weight_of = |v: usize, j: u16| -> f32 {
            (0..4).filter(|&k| p.joint_indices[v * 4 + k] == j).map(|k| p.joint_weights[v * 4 + k]).sum()
        };
        // Per joint, weight against height over the vertices of one side.
        let mut samples: Vec<(f32, [f32; 4])> = (0..p.positions.len())
            .filter(|&v| p.normals.as_ref().unwrap()[v][2] > 0.9)
            .map(|v| (p.positions[v][1], [0, 1, 2, 3].map(|j| weight_of(v, j))))
            .collect();
        samples.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (y, w) in &samples {
            // Full weight at a bone's center, at most two joints anywhere.
            let i = ((y / bone - 0.5).round() as usize).min(3);
            if ((y / bone - 0.5) - i as f32).abs() < 1e-4 {
                assert!((w[i] - 1.0).abs() < 1e-5, "y {y}: {w:?}");
            }
            assert!(w.iter().filter(|&&x| x > 0.0).count() <= 2);
        }
        // Smooth: no weight jumps by more than 0.25 between rings 5 cm apart.
        for pair in samples.windows(2) {
            for j in 0..4 {
                assert!((pair[1].1[j] - pair[0].1[j]).abs() <= 0.25, "{pair:?}");
            }
        }
    }

    /// Distance of skinned vertices from the cylinder axis at mid-height.
    fn mid_radius(scene: &Scene, skinning: Skinning, angle: f32) -> (f32, f32) {
        let m = &scene.models()[TWIST];
        let pose = twist_pose(m, angle);
        let mut f = Frame::default();
        push_model(&mut f, m, TWIST, &pose, Mat4::IDENTITY, skinning, None, false).unwrap();
        let parts = f.objects[0].skin_cpu().unwrap();
        let mid = TWIST_LENGTH * 0.5;
        let r: Vec<f32> = parts
            .iter()
            .flat_map(|p| p.positions.iter())
            .filter(|p| (p.y - mid).abs() < 1e-3)
            .map(|p| (p.x * p.x + p.z * p.z).sqrt())
            .filter(|&r| r > 1e-4 || skinning == Skinning::Lbs)
            .collect();
        (r.iter().copied().fold(f32::INFINITY, f32::min), r.iter().copied().fold(0.0, f32::max))
    }

    #[test]
    fn candy_wrapper_collapses_with_lbs_and_keeps_volume_with_dqs() {
        let scene = Scene::new(None).unwrap();
        let (_, lbs_max) = mid_radius(&scene, Skinning::Lbs, PI);
        let (dqs_min, _) = mid_radius(&scene, Skinning::Dqs, PI);
        assert!(lbs_max < 0.05 * TWIST_RADIUS, "LBS mid radius {lbs_max}");
        assert!(dqs_min > 0.99 * TWIST_RADIUS, "DQS mid radius {dqs_min}");
        // Untwisted, both keep the radius.
        assert!(mid_radius(&scene, Skinning::Lbs, 0.0).0 > 0.999 * TWIST_RADIUS);
        assert_eq!(twist_angle(0.0), 0.0);
        assert!((twist_angle(TWIST_PERIOD / 2.0) - PI).abs() < 1e-5);
    }

    #[test]
    fn character_schedule_is_continuous_and_moves_at_the_clip_speeds() {
        for i in 0..2000 {
            let s = character_state(i as f32 * 0.02);
            assert!((s.idle + s.walk + s.run - 1.0).abs() < 1e-5);
            assert!((0.0..=1.0).contains(&s.wave));
        }
        let step = |t: f32| {
            let (a, b) = (character_state(t), character_state(t + 0.1));
            let circ = TAU * PATH_RADIUS;
            ((b.distance - a.distance).rem_euclid(circ), (b.phase - a.phase).rem_euclid(1.0))
        };
        let (d, p) = step(3.0);
        assert!((d - 0.1 * WALK_SPEED).abs() < 1e-4 && (p - 0.1 / WALK_CYCLE).abs() < 1e-4, "{d} {p}");
        let (d, p) = step(9.0);
        assert!((d - 0.1 * RUN_SPEED).abs() < 1e-4 && (p - 0.1 / RUN_CYCLE).abs() < 1e-4, "{d} {p}");
        assert!(step(16.0).0 < 1e-5);
        assert!(character_state(16.0).wave == 1.0 && character_state(16.0).idle == 1.0);
        // Across the end of the schedule the distance keeps growing smoothly.
        let (d, _) = step(SCHEDULE_PERIOD - 0.05);
        assert!(d > 0.0 && d < 0.1 * WALK_SPEED + 1e-3, "{d}");
        // The pose at any time is a function of the time alone.
        assert_eq!(character_state(1234.5), character_state(1234.5));
        assert_eq!(character_state(f32::NAN), character_state(0.0));
    }

    fn world_vertices(scene: &Scene, t: f32) -> Vec<Vec3<f32>> {
        let f = scene.frame(t).unwrap();
        let mut out = Vec::new();
        for o in &f.objects {
            for p in o.skin_cpu().unwrap() {
                out.extend(p.positions.iter().map(|&v| o.world.transform_point3(v)));
            }
        }
        out
    }

    #[test]
    fn character_feet_stay_on_the_ground() {
        let scene = Scene::new(None).unwrap();
        for i in 0..80 {
            let t = i as f32 * 0.25;
            let f = scene.frame(t).unwrap();
            let o = &f.objects[1];
            assert_eq!(o.model_index, CHARACTER);
            let lowest = o
                .skin_cpu()
                .unwrap()
                .iter()
                .flat_map(|p| p.positions.iter())
                .map(|&v| o.world.transform_point3(v).y)
                .fold(f32::INFINITY, f32::min);
            assert!((-0.06..0.06).contains(&lowest), "t {t}: lowest point at {lowest} m");
        }
    }

    #[test]
    fn default_camera_sees_the_whole_scene() {
        let mut scene = Scene::new(None).unwrap();
        scene.params.tentacle_amplitude = TENTACLE_AMPLITUDE_RANGE.1;
        for aspect in [1.0, 4.0 / 3.0, 16.0 / 9.0, 2.4] {
            let vp = default_camera(aspect).view_proj(aspect);
            for i in 0..40 {
                let t = i as f32 * 0.5;
                for v in world_vertices(&scene, t) {
                    let c = vp.mul_vec4(v.extend(1.0));
                    assert!(c.w > 0.0);
                    let (x, y) = (c.x / c.w, c.y / c.w);
                    assert!(x.abs() < 0.95 && y.abs() < 0.95, "t {t}, aspect {aspect}: {v:?} at ({x}, {y})");
                }
            }
        }
    }

    #[test]
    fn frames_depend_on_time_only() {
        let scene = Scene::new(None).unwrap();
        let (a, b) = (scene.frame(7.3).unwrap(), scene.frame(7.3).unwrap());
        assert_eq!(a.objects.len(), 4);
        for (x, y) in a.objects.iter().zip(&b.objects) {
            assert_eq!(x.palette, y.palette);
            assert_eq!(x.world, y.world);
        }
        let c = scene.frame(7.4).unwrap();
        assert_ne!(a.objects[0].palette, c.objects[0].palette);
        assert_ne!(a.objects[1].world, c.objects[1].world);
        assert!(a.bones.is_empty());
        let mut s2 = Scene::new(None).unwrap();
        s2.params.show_bones = true;
        // Bones: one line per joint with a parent (tentacle 3, humanoid 21, twist 1 + 1).
        assert_eq!(s2.frame(0.0).unwrap().bones.len(), 3 + 21 + 2);
    }
}
