//! The three rigs: the tentacle, the candy wrapper and the humanoid (its skeleton, its body of
//! capsules and its clips).

use std::f32::consts::TAU;

use sinew::math::{Mat4, Vec3};

use super::clips::{gait_clip, idle_clip, wave_clip};
use super::gait::{RUN_GAIT, SHIN_LENGTH, THIGH_LENGTH, THIGH_OFFSET, WALK_GAIT};
use super::humanoid;
use super::mesh::{joint, skin_all, smoothstep, Capsule, MeshBuilder};
use crate::rig::{Rig, RigJoint, RigMesh};

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
            ..RigMesh::default()
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
            ..RigMesh::default()
        }],
        ..Rig::default()
    }
}

/// The procedural humanoid: 22 joints (see [`humanoid`]), one skinned mesh of capsules along
/// the bones (each blended into its parent and child bone around the joints), and the clips
/// `idle`, `walk`, `run` and `wave` (LINEAR, keys every 1/30 s). `walk` and `run` move the
/// root forward at [`WALK_SPEED`] and [`RUN_SPEED`] and plant their feet (see [`Gait`]); `idle`
/// stands with the feet flat; `wave` animates only the right clavicle and arm.
///
/// [`WALK_SPEED`]: super::WALK_SPEED
/// [`RUN_SPEED`]: super::RUN_SPEED
/// [`Gait`]: super::Gait
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
            ..RigMesh::default()
        }],
        clips,
        ..Rig::default()
    }
}
