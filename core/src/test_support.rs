//! Builders of small `.sinew` files for this crate's tests: a skeleton (parents, rest pose,
//! names) and clips of LINEAR `f32` tracks, written with [`Writer`] as the baker would. The
//! player, controller and root-motion tests build their fixtures with it.

extern crate std;
use std::vec::Vec;

use crate::asset::format::*;
use crate::asset::writer::Writer;
use crate::math::{Quat, SoaTransform, Transform, Vec3};
use crate::real::Real;

/// One LINEAR or STEP `f32` track.
pub(crate) struct TrackSpec {
    pub joint: u16,
    pub target: u8,
    pub interp: u8,
    pub times: Vec<f32>,
    /// 3 (translation, scale) or 4 (rotation xyzw) values per key.
    pub values: Vec<f32>,
}

/// One clip.
pub(crate) struct ClipSpec {
    pub name: &'static str,
    pub start: f32,
    pub end: f32,
    pub tracks: Vec<TrackSpec>,
}

fn write(w: &mut Writer, parents: &[i16], rest: &[Transform<f32>], names: &[&str], clips: &[ClipSpec]) {
    let table = w.begin_file(1 + clips.len() as u32);
    let s0 = w.len();
    w.u16(parents.len() as u16);
    for &p in parents {
        w.i16(p);
    }
    for t in rest {
        let (a, q, s) = (t.translation, t.rotation, t.scale);
        for v in [a.x, a.y, a.z, q.x, q.y, q.z, q.w, s.x, s.y, s.z] {
            w.f32(v);
        }
    }
    for n in names {
        w.str(n);
    }
    w.section(table, 0, KIND_SKELETON, s0);
    for (c, clip) in clips.iter().enumerate() {
        let s1 = w.len();
        w.str(clip.name);
        w.f32(clip.start);
        w.f32(clip.end);
        w.u16(clip.tracks.len() as u16);
        let dir = w.len();
        for _ in &clip.tracks {
            w.bytes(&[0; TRACK_ENTRY_LEN]);
        }
        for (i, t) in clip.tracks.iter().enumerate() {
            let off = (w.len() - s1) as u32;
            for &v in t.times.iter().chain(t.values.iter()) {
                w.f32(v);
            }
            let mut entry = [0u8; TRACK_ENTRY_LEN];
            entry[..2].copy_from_slice(&t.joint.to_le_bytes());
            entry[2] = t.target;
            entry[3] = t.interp;
            entry[4] = FORMAT_F32;
            entry[6..8].copy_from_slice(&(t.times.len() as u16).to_le_bytes());
            entry[8..12].copy_from_slice(&off.to_le_bytes());
            w.patch_bytes(dir + i * TRACK_ENTRY_LEN, &entry);
        }
        w.section(table, 1 + c, KIND_CLIP, s1);
    }
    w.finish();
}

/// A `.sinew` file with a skeleton and clips (every track lossless `f32`).
pub(crate) fn build(parents: &[i16], rest: &[Transform<f32>], names: &[&str], clips: &[ClipSpec]) -> Vec<u8> {
    let mut measure = Writer::new(&mut []);
    write(&mut measure, parents, rest, names, clips);
    let mut buf = std::vec![0u8; measure.len()];
    write(&mut Writer::new(&mut buf), parents, rest, names, clips);
    buf
}

/// A LINEAR translation track.
pub(crate) fn translation(joint: u16, times: &[f32], values: &[[f32; 3]]) -> TrackSpec {
    TrackSpec {
        joint,
        target: TARGET_TRANSLATION,
        interp: INTERP_LINEAR,
        times: times.to_vec(),
        values: values.iter().flatten().copied().collect(),
    }
}

/// A LINEAR rotation track.
pub(crate) fn rotation(joint: u16, times: &[f32], values: &[[f32; 4]]) -> TrackSpec {
    TrackSpec {
        joint,
        target: TARGET_ROTATION,
        interp: INTERP_LINEAR,
        times: times.to_vec(),
        values: values.iter().flatten().copied().collect(),
    }
}

/// A fixed-seed xorshift generator of values in [-1, 1), and of the random transforms, poses
/// and vectors the kernels' tests feed their jobs.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
    pub(crate) fn real<R: Real>(&mut self, scale: f32) -> R {
        R::from_f32(self.next() * scale)
    }
    pub(crate) fn transform<R: Real>(&mut self) -> Transform<R> {
        let axis = Vec3::new(self.real(1.0), self.real(1.0), R::TWO + self.real(1.0));
        Transform {
            translation: Vec3::new(self.real(2.0), self.real(2.0), self.real(2.0)),
            rotation: Quat::from_axis_angle(axis.normalize_or_zero(), self.real(3.0)),
            scale: Vec3::new(R::ONE + self.real(0.25), R::ONE + self.real(0.25), R::ONE + self.real(0.25)),
        }
    }
    pub(crate) fn vec3<R: Real>(&mut self, scale: f32) -> Vec3<R> {
        Vec3::new(self.real(scale), self.real(scale), self.real(scale))
    }
    pub(crate) fn pose<R: Real>(&mut self, joints: usize) -> Vec<SoaTransform<R>> {
        let mut pose = std::vec![SoaTransform::IDENTITY; joints.div_ceil(4)];
        for j in 0..joints {
            let t = self.transform();
            pose[j / 4].set_lane(j % 4, &t);
        }
        pose
    }
}

/// A fixed-seed xorshift64* generator of `f64` values in [0, 1), for tests that compare with
/// an `f64` reference.
pub(crate) struct Rng64(pub(crate) u64);

impl Rng64 {
    pub(crate) fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
    pub(crate) fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((self.next() * n as f64) as usize).min(n - 1)
    }
    /// A unit vector, uniform over directions: a point of the cube [−1, 1]³ kept when its
    /// length is in (0.1, 1], then divided by it.
    pub(crate) fn direction(&mut self) -> [f64; 3] {
        loop {
            let v = [self.range(-1.0, 1.0), self.range(-1.0, 1.0), self.range(-1.0, 1.0)];
            let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            if l > 0.1 && l <= 1.0 {
                let s = 1.0 / l;
                return [v[0] * s, v[1] * s, v[2] * s];
            }
        }
    }
    /// A rotation `[x, y, z, w]` about a [`direction`](Self::direction) axis by an angle uniform in
    /// [−`max_angle`, `max_angle`].
    pub(crate) fn rotation(&mut self, max_angle: f64) -> [f64; 4] {
        let axis = self.direction();
        let (s, c) = (self.range(-max_angle, max_angle) * 0.5).sin_cos();
        [axis[0] * s, axis[1] * s, axis[2] * s, c]
    }
}
