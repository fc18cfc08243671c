//! Exact `f64` evaluation of a [`Rig`]'s clips and hierarchy: the measure the baker checks its
//! compressed clips against; morph weights ([`eval_weights`], [`mesh_weights`]) and morphed
//! vertices ([`morphed_positions`]) too.

use crate::rig::{ChannelTarget, Interpolation, Rig, RigChannel, RigClip, RigPrimitive, RigWeightChannel};

/// A TRS transform in `f64`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trs {
    /// Translation.
    pub t: [f64; 3],
    /// Rotation quaternion x, y, z, w.
    pub r: [f64; 4],
    /// Scale.
    pub s: [f64; 3],
}

/// A column-major affine matrix in `f64`.
pub type M4 = [[f64; 4]; 4];

impl Trs {
    /// The matrix `T · R · S`.
    #[must_use]
    pub fn matrix(&self) -> M4 {
        let [x, y, z, w] = normalize4(self.r);
        let c0 = [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y)];
        let c1 = [2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x)];
        let c2 = [2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)];
        let s = self.s;
        [
            [c0[0] * s[0], c0[1] * s[0], c0[2] * s[0], 0.0],
            [c1[0] * s[1], c1[1] * s[1], c1[2] * s[1], 0.0],
            [c2[0] * s[2], c2[1] * s[2], c2[2] * s[2], 0.0],
            [self.t[0], self.t[1], self.t[2], 1.0],
        ]
    }
}

/// `a × b`.
#[must_use]
pub fn mul(a: &M4, b: &M4) -> M4 {
    let mut o = [[0.0; 4]; 4];
    for c in 0..4 {
        for r in 0..4 {
            o[c][r] = (0..4).map(|k| a[k][r] * b[c][k]).sum();
        }
    }
    o
}

/// `m · p` for a point.
#[must_use]
pub fn transform_point(m: &M4, p: [f64; 3]) -> [f64; 3] {
    core::array::from_fn(|r| m[0][r] * p[0] + m[1][r] * p[1] + m[2][r] * p[2] + m[3][r])
}

fn normalize4(q: [f64; 4]) -> [f64; 4] {
    let l = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if l > 0.0 && l.is_finite() {
        q.map(|v| v / l)
    } else {
        [0.0, 0.0, 0.0, 1.0]
    }
}

/// The Hamilton product `a · b` of quaternions `[x, y, z, w]` (`b` applies first).
#[must_use]
pub fn quat_mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// Exact shortest-path slerp.
#[must_use]
pub fn slerp(a: [f64; 4], b: [f64; 4], t: f64) -> [f64; 4] {
    let mut d: f64 = (0..4).map(|i| a[i] * b[i]).sum();
    let b = if d < 0.0 {
        d = -d;
        b.map(|v| -v)
    } else {
        b
    };
    if d > 1.0 - 1e-12 {
        return normalize4(core::array::from_fn(|i| a[i] + (b[i] - a[i]) * t));
    }
    let th = d.min(1.0).acos();
    let s = th.sin();
    let (wa, wb) = (((1.0 - t) * th).sin() / s, (t * th).sin() / s);
    normalize4(core::array::from_fn(|i| a[i] * wa + b[i] * wb))
}

/// The value of a channel at time `t` (seconds), as glTF 2.0 Appendix C defines it; rotations
/// are exact slerps. Returns 3 or 4 components in `[f64; 4]`.
#[must_use]
pub fn eval_channel(c: &RigChannel, t: f64) -> [f64; 4] {
    let comps = c.target.components();
    let n = c.times.len();
    let cubic = c.interpolation == Interpolation::CubicSpline;
    let stride = if cubic { 3 * comps } else { comps };
    let mid = if cubic { comps } else { 0 };
    let read = |k: usize, part: usize| -> [f64; 4] {
        core::array::from_fn(|j| {
            if j < comps {
                c.values.get(k * stride + part + j).copied().unwrap_or(0.0) as f64
            } else {
                0.0
            }
        })
    };
    if n == 0 {
        return [0.0, 0.0, 0.0, 1.0];
    }
    let time = |k: usize| c.times[k] as f64;
    if n == 1 || t <= time(0) {
        return read(0, mid);
    }
    if t >= time(n - 1) {
        return read(n - 1, mid);
    }
    // Largest k with time(k) <= t.
    let k = c.times.partition_point(|&x| (x as f64) <= t).saturating_sub(1).min(n - 2);
    let (t0, t1) = (time(k), time(k + 1));
    let td = t1 - t0;
    let s = (t - t0) / td;
    match c.interpolation {
        Interpolation::Step => read(k, mid),
        Interpolation::Linear => {
            let (a, b) = (read(k, mid), read(k + 1, mid));
            if c.target == ChannelTarget::Rotation {
                slerp(a, b, s)
            } else {
                core::array::from_fn(|j| a[j] + (b[j] - a[j]) * s)
            }
        }
        Interpolation::CubicSpline => {
            let (p0, m0, p1, m1) = (read(k, mid), read(k, 2 * comps), read(k + 1, mid), read(k + 1, 0));
            let (s2, s3) = (s * s, s * s * s);
            let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
            let h10 = (s3 - 2.0 * s2 + s) * td;
            let h01 = -2.0 * s3 + 3.0 * s2;
            let h11 = (s3 - s2) * td;
            let v: [f64; 4] = core::array::from_fn(|j| h00 * p0[j] + h10 * m0[j] + h01 * p1[j] + h11 * m1[j]);
            if c.target == ChannelTarget::Rotation {
                normalize4(v)
            } else {
                v
            }
        }
    }
}

/// Local transforms of every joint of `rig` at time `t` of `clip` (rest pose where untracked;
/// `clip = None`: the rest pose).
#[must_use]
pub fn local_pose(rig: &Rig, clip: Option<&RigClip>, t: f64) -> Vec<Trs> {
    let mut pose: Vec<Trs> = rig
        .joints
        .iter()
        .map(|j| {
            let r = &j.rest;
            Trs {
                t: r.translation.to_array().map(f64::from),
                r: r.rotation.to_array().map(f64::from),
                s: r.scale.to_array().map(f64::from),
            }
        })
        .collect();
    if let Some(clip) = clip {
        for c in &clip.channels {
            let Some(p) = pose.get_mut(c.joint) else { continue };
            let v = eval_channel(c, t);
            match c.target {
                ChannelTarget::Translation => p.t = [v[0], v[1], v[2]],
                ChannelTarget::Rotation => p.r = v,
                ChannelTarget::Scale => p.s = [v[0], v[1], v[2]],
            }
        }
    }
    pose
}

/// Model-space (world) matrices of every joint from local transforms (parents come first).
#[must_use]
pub fn model_matrices(rig: &Rig, pose: &[Trs]) -> Vec<M4> {
    let mut out: Vec<M4> = Vec::with_capacity(pose.len());
    for (i, p) in pose.iter().enumerate() {
        let local = p.matrix();
        let m = match rig.joints.get(i).and_then(|j| j.parent).and_then(|pi| out.get(pi)) {
            Some(parent) => mul(parent, &local),
            None => local,
        };
        out.push(m);
    }
    out
}

/// The value of a weights track at time `t`: `times` strictly increasing, `targets` values per
/// key (× 3 for cubic splines: in-tangents, values, out-tangents), clamped to the first and
/// last key, as glTF 2.0 Appendix C defines it.
#[must_use]
pub fn eval_weight_keys(times: &[f64], values: &[f64], interp: Interpolation, targets: usize, t: f64) -> Vec<f64> {
    let n = times.len();
    let cubic = interp == Interpolation::CubicSpline;
    let stride = if cubic { 3 * targets } else { targets };
    let read = |k: usize, part: usize, j: usize| -> f64 {
        let p = if cubic { part * targets } else { 0 };
        values.get(k * stride + p + j).copied().unwrap_or(0.0)
    };
    if n == 0 {
        return vec![0.0; targets];
    }
    if n == 1 || t <= times[0] {
        return (0..targets).map(|j| read(0, 1, j)).collect();
    }
    if t >= times[n - 1] {
        return (0..targets).map(|j| read(n - 1, 1, j)).collect();
    }
    let k = times.partition_point(|&x| x <= t).saturating_sub(1).min(n - 2);
    let (t0, t1) = (times[k], times[k + 1]);
    let td = t1 - t0;
    let s = (t - t0) / td;
    (0..targets)
        .map(|j| match interp {
            Interpolation::Step => read(k, 1, j),
            Interpolation::Linear => read(k, 1, j) + (read(k + 1, 1, j) - read(k, 1, j)) * s,
            Interpolation::CubicSpline => {
                let (s2, s3) = (s * s, s * s * s);
                (2.0 * s3 - 3.0 * s2 + 1.0) * read(k, 1, j)
                    + (s3 - 2.0 * s2 + s) * td * read(k, 2, j)
                    + (-2.0 * s3 + 3.0 * s2) * read(k + 1, 1, j)
                    + (s3 - s2) * td * read(k + 1, 0, j)
            }
        })
        .collect()
}

/// The weights of a morph-weight channel of a mesh with `targets` targets at time `t`.
#[must_use]
pub fn eval_weights(c: &RigWeightChannel, targets: usize, t: f64) -> Vec<f64> {
    let times: Vec<f64> = c.times.iter().map(|&x| f64::from(x)).collect();
    let values: Vec<f64> = c.values.iter().map(|&x| f64::from(x)).collect();
    eval_weight_keys(&times, &values, c.interpolation, targets, t)
}

/// The morph weights of mesh `mesh` of `rig` at time `t` of `clip`: its channel in the clip
/// (the clip's time clamped into the clip's range, as the runtime samples), else its default
/// weights; empty for a mesh without morph targets.
#[must_use]
pub fn mesh_weights(rig: &Rig, mesh: usize, clip: Option<&RigClip>, t: f64) -> Vec<f64> {
    let Some(m) = rig.meshes.get(mesh) else { return Vec::new() };
    let channel = clip.and_then(|c| Some((c, c.weights.iter().find(|w| w.mesh == mesh)?)));
    match channel {
        Some((c, w)) => {
            let (start, end) = c.time_range();
            eval_weights(w, m.num_targets(), t.clamp(f64::from(start), f64::from(end)))
        }
        None => m.weights.iter().map(|&w| f64::from(w)).collect(),
    }
}

/// The bind-pose positions of primitive `p` with its morph targets weighted by `weights`.
#[must_use]
pub fn morphed_positions(p: &RigPrimitive, weights: &[f64]) -> Vec<[f64; 3]> {
    let mut out: Vec<[f64; 3]> = p.positions.iter().map(|v| v.map(f64::from)).collect();
    for (t, &w) in p.targets.iter().zip(weights) {
        for (o, d) in out.iter_mut().zip(&t.positions) {
            for k in 0..3 {
                o[k] += w * f64::from(d[k]);
            }
        }
    }
    out
}
