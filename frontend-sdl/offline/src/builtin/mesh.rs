//! Building blocks of the procedural rigs: [`smoothstep`], the mesh builder (skinned vertices
//! with 4 influences, quad grids, smooth normals), the capsules the humanoid's body is made of,
//! and joints and skins whose rest pose is made of translations only.

use std::f32::consts::{FRAC_PI_2, TAU};

use sinew::math::{Mat4, Quat, Transform, Vec3};

use crate::rig::{RigJoint, RigPrimitive, RigSkin};

/// Smooth step from 0 at `x ≤ 0` to 1 at `x ≥ 1`: `3x² − 2x³` in between.
///
/// It shapes the rigs' skin weights here and, in the demo's scene, the foot locks' release and
/// the look-at's fade.
pub fn smoothstep(x: f32) -> f32 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// A primitive under construction, with 4 influences per vertex.
#[derive(Default)]
pub(super) struct MeshBuilder {
    pub(super) positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    joints: Vec<u16>,
    weights: Vec<f32>,
    pub(super) indices: Vec<u32>,
}

impl MeshBuilder {
    /// Adds a vertex with up to 4 influences (weights are normalized; zero ones dropped).
    pub(super) fn vertex(&mut self, p: Vec3<f32>, n: Vec3<f32>, influences: &[(usize, f32)]) -> u32 {
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
    pub(super) fn grid(&mut self, first: u32, rows: u32, cols: u32, wrap: bool) {
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

    /// The finished primitive, in `color`: a display (sRGB-encoded) color, stored as its linear
    /// value (the rig's colors are linear, as glTF's are), so the viewers show `color` itself.
    pub(super) fn into_primitive(self, color: [f32; 4]) -> RigPrimitive {
        let linear = |c: f32| if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) };
        let color = [linear(color[0]), linear(color[1]), linear(color[2]), color[3]];
        RigPrimitive {
            positions: self.positions,
            normals: Some(self.normals),
            tangents: None,
            influences: 4,
            joint_indices: self.joints,
            joint_weights: self.weights,
            indices: self.indices,
            color,
            ..RigPrimitive::default()
        }
    }
}

/// One capsule of the humanoid's mesh: a tube from `a` to `b` with an elliptic cross-section
/// (`rx` along `lateral`, `rz` across it) and rounded ends, skinned to `joint` and blended into
/// `parent` around `a` and into `child` around `b`.
pub(super) struct Capsule {
    pub(super) joint: usize,
    pub(super) a: Vec3<f32>,
    pub(super) b: Vec3<f32>,
    pub(super) rx: f32,
    pub(super) rz: f32,
    pub(super) lateral: Vec3<f32>,
    pub(super) parent: Option<usize>,
    pub(super) child: Option<usize>,
}

const CAPSULE_SIDES: u32 = 12;

impl MeshBuilder {
    /// Adds the tube and end caps of `c`, with smooth normals.
    pub(super) fn capsule(&mut self, c: &Capsule) {
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

/// A joint with a translation-only rest pose.
pub(super) fn joint(name: &str, parent: Option<usize>, t: Vec3<f32>) -> RigJoint {
    RigJoint { name: name.to_string(), parent, rest: Transform::new(t, Quat::IDENTITY, Vec3::ONE) }
}

/// A skin over every joint, with inverse bind matrices from the rest pose (whose rotations
/// are all identity, so each bind matrix is a translation).
pub(super) fn skin_all(joints: &[RigJoint]) -> RigSkin {
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
