//! Clip decoding on hand-built tracks: every key format and interpolation checked against
//! values computed here in `f64` (or exactly), the key interval search from any cursor hint,
//! and the three sampling states (key cursor, per-track cache, SoA cache) agreeing.

extern crate std;

use std::boxed::Box;
use std::vec;
use std::vec::Vec;

use super::*;
use crate::asset::Asset;
use crate::format::writer::Writer;
use crate::job::sampling::TrackState;
use crate::job::SamplingJob;
use crate::math::SoaTransform;
use crate::real::Q16;

// ------------------------------------------------------------------------------------------------
// Hand-built clips
// ------------------------------------------------------------------------------------------------

/// How a test track's keys are stored.
#[derive(Clone)]
pub(crate) enum Keys {
    /// Lossless: `f32` times, then per key 3 or 4 values (for cubic splines: in-tangent, value,
    /// out-tangent).
    F32 { times: Vec<f32>, values: Vec<f32> },
    /// Quantized translation or scale: `u16` times, `min` and `scale`, three `u16` per key.
    QuantizedVec { times: Vec<u16>, min: [f32; 3], scale: [f32; 3], q: Vec<[u16; 3]> },
    /// Quantized rotation: `u16` times and packed smallest-three rotations.
    QuantizedRot { times: Vec<u16>, packed: Vec<[u8; 6]> },
    /// Packed: frames of a grid of `frames` (implicit `0, 1, …` when `frame_of` is `None`),
    /// an optional reference rotation, per-component widths, `min` and `range`, and the
    /// integers of each key.
    Packed(Packed),
    /// Packed track data as given (for corrupt tracks), with its key count.
    RawPacked { data: Vec<u8>, keys: usize },
}

/// The fields of a packed test track (see [`FORMAT_PACKED`]).
#[derive(Clone)]
pub(crate) struct Packed {
    pub frames: u16,
    pub frame_of: Option<Vec<u32>>,
    pub reference: Option<[f32; 4]>,
    /// Sub-frame offsets: their width, the shift, and each key's stored offset.
    pub sub: Option<(u8, u8, Vec<u32>)>,
    /// Smallest three: each key's dropped component (0..=3, xyzw).
    pub largest: Option<Vec<u32>>,
    pub bits: [u8; 3],
    pub min: [f32; 3],
    pub range: [f32; 3],
    pub q: Vec<[u32; 3]>,
}

impl Packed {
    /// The track data as the format lays it out.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let time_bits = match &self.frame_of {
            None => 0u8,
            Some(_) => (32 - u32::from(self.frames).leading_zeros()) as u8,
        };
        let mut out = Vec::new();
        out.extend_from_slice(&self.frames.to_le_bytes());
        out.push(time_bits);
        let sub_flag = if self.sub.is_some() { PACKED_FLAG_SUBFRAME } else { 0 };
        let largest_flag = if self.largest.is_some() { PACKED_FLAG_LARGEST } else { 0 };
        out.push(if self.reference.is_some() { PACKED_FLAG_REFERENCE } else { 0 } | sub_flag | largest_flag);
        out.extend_from_slice(&self.bits);
        for r in self.reference.iter().flatten() {
            out.extend_from_slice(&r.to_le_bytes());
        }
        if let Some((bits, shift, _)) = &self.sub {
            out.extend([*bits, *shift]);
        }
        for j in 0..3 {
            out.extend_from_slice(&self.min[j].to_le_bytes());
            if self.bits[j] != 0 {
                out.extend_from_slice(&self.range[j].to_le_bytes());
            }
        }
        // Every bit of the records, least significant first, then packed into bytes.
        let mut bits: Vec<bool> = Vec::new();
        let mut push = |v: u32, w: u8| bits.extend((0..w).map(|i| (v >> i) & 1 != 0));
        for (k, q) in self.q.iter().enumerate() {
            if let Some(f) = &self.frame_of {
                push(f[k], time_bits);
            }
            if let Some((bits, _, o)) = &self.sub {
                push(o[k], *bits);
            }
            for j in 0..3 {
                push(q[j], self.bits[j]);
            }
            if let Some(l) = &self.largest {
                push(l[k], 2);
            }
        }
        out.extend(bits.chunks(8).map(|c| c.iter().enumerate().fold(0u8, |b, (i, &on)| b | (u8::from(on) << i))));
        out
    }

    /// Key times, in f64.
    fn times(&self, start: f32, end: f32) -> Vec<f64> {
        let f: Vec<f64> = match &self.frame_of {
            None => (0..self.q.len()).map(|k| k as f64).collect(),
            Some(f) => f.iter().map(|&f| f64::from(f)).collect(),
        };
        let (f, frames): (Vec<f64>, f64) = match &self.sub {
            None => (f, f64::from(self.frames)),
            Some((bits, shift, o)) => {
                let per = f64::from(1u32 << shift);
                let n = f.iter().zip(o).map(|(f, &o)| f * per + f64::from(o) - f64::from(1u32 << (bits - 1))).collect();
                (n, f64::from(self.frames) * per)
            }
        };
        f.iter().map(|f| f64::from(start) + (f64::from(end) - f64::from(start)) * f / frames).collect()
    }

    /// Key `k`'s value, in f64 (rotations: `w ≥ 0` rebuilt, then the reference applied).
    fn value(&self, k: usize, rotation: bool) -> [f64; 4] {
        let c: [f64; 3] = core::array::from_fn(|j| {
            let scale = f64::from(self.range[j]) / f64::from(1u32 << self.bits[j]);
            f64::from(self.min[j]) + if self.bits[j] == 0 { 0.0 } else { scale * f64::from(self.q[k][j]) }
        });
        if !rotation {
            return [c[0], c[1], c[2], 0.0];
        }
        let w = (1.0 - c.iter().map(|v| v * v).sum::<f64>()).max(0.0).sqrt();
        let b = match self.largest.as_ref().map(|l| l[k]) {
            Some(0) => [w, c[0], c[1], c[2]],
            Some(1) => [c[0], w, c[1], c[2]],
            Some(2) => [c[0], c[1], w, c[2]],
            _ => [c[0], c[1], c[2], w],
        };
        let Some(r) = self.reference else { return b };
        let a = r.map(f64::from);
        [
            a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
            a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
            a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
            a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
        ]
    }
}

#[derive(Clone)]
pub(crate) struct Track {
    joint: u16,
    target: u8,
    interp: u8,
    slerp: bool,
    keys: Keys,
}

impl Track {
    fn key_count(&self) -> usize {
        match &self.keys {
            Keys::F32 { times, .. } => times.len(),
            Keys::QuantizedVec { times, .. } | Keys::QuantizedRot { times, .. } => times.len(),
            Keys::Packed(p) => p.q.len(),
            Keys::RawPacked { keys, .. } => *keys,
        }
    }
    fn format(&self) -> u8 {
        match self.keys {
            Keys::F32 { .. } => FORMAT_F32,
            Keys::Packed(_) | Keys::RawPacked { .. } => FORMAT_PACKED,
            _ => FORMAT_QUANTIZED,
        }
    }
}

/// A `.sinew` file: `joints` root joints at rest (identity) and one clip "c" over
/// `[start, end]` with `tracks`, laid out as `format` documents.
pub(crate) fn file(joints: u16, start: f32, end: f32, tracks: &[Track]) -> Vec<u8> {
    let write = |w: &mut Writer| {
        let table = w.begin_file(2);
        let s0 = w.len();
        w.u16(joints);
        for _ in 0..joints {
            w.i16(-1);
        }
        for _ in 0..joints {
            for v in [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0] {
                w.f32(v);
            }
        }
        for _ in 0..joints {
            w.str("");
        }
        w.section(table, 0, KIND_SKELETON, s0);
        let s1 = w.len();
        w.str("c");
        w.f32(start);
        w.f32(end);
        w.u16(tracks.len() as u16);
        let dir = w.len();
        w.bytes(&vec![0; tracks.len() * TRACK_ENTRY_LEN]);
        for (i, t) in tracks.iter().enumerate() {
            let offset = (w.len() - s1) as u32;
            match &t.keys {
                Keys::F32 { times, values } => {
                    times.iter().chain(values).for_each(|&v| w.f32(v));
                }
                Keys::QuantizedVec { times, min, scale, q } => {
                    times.iter().for_each(|&v| w.u16(v));
                    min.iter().chain(scale).for_each(|&v| w.f32(v));
                    q.iter().flatten().for_each(|&v| w.u16(v));
                }
                Keys::QuantizedRot { times, packed } => {
                    times.iter().for_each(|&v| w.u16(v));
                    packed.iter().for_each(|p| w.bytes(p));
                }
                Keys::Packed(p) => w.bytes(&p.bytes()),
                Keys::RawPacked { data, .. } => w.bytes(data),
            }
            let mut entry = [0u8; TRACK_ENTRY_LEN];
            entry[..2].copy_from_slice(&t.joint.to_le_bytes());
            entry[2] = t.target;
            entry[3] = t.interp;
            entry[4] = t.format();
            entry[5] = if t.slerp { TRACK_FLAG_SLERP } else { 0 };
            entry[6..8].copy_from_slice(&(t.key_count() as u16).to_le_bytes());
            entry[8..12].copy_from_slice(&offset.to_le_bytes());
            w.patch_bytes(dir + i * TRACK_ENTRY_LEN, &entry);
        }
        w.section(table, 1, KIND_CLIP, s1);
        w.finish()
    };
    let len = write(&mut Writer::new(&mut []));
    let mut buf = vec![0u8; len];
    assert_eq!(write(&mut Writer::new(&mut buf)), len);
    buf
}

/// The clip of a file built by [`file`], validated by the asset parser.
pub(crate) fn clip_of(bytes: &[u8]) -> Clip<'_> {
    Asset::parse(bytes).expect("a valid hand-built file").clip(0).expect("one clip")
}

fn f32_track(joint: u16, target: u8, interp: u8, times: &[f32], values: &[f32]) -> Track {
    Track { joint, target, interp, slerp: false, keys: Keys::F32 { times: times.to_vec(), values: values.to_vec() } }
}

/// A unit quaternion (xyzw) of `angle` radians about `axis` (not necessarily unit), in f64.
fn axis_angle(axis: [f64; 3], angle: f64) -> [f64; 4] {
    let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
    let (s, c) = ((angle / 2.0).sin() / n, (angle / 2.0).cos());
    [axis[0] * s, axis[1] * s, axis[2] * s, c]
}

fn to_f32s(q: [f64; 4]) -> [f32; 4] {
    q.map(|v| v as f32)
}

// ------------------------------------------------------------------------------------------------
// The reference, in f64
// ------------------------------------------------------------------------------------------------

/// Where `t` falls among `times`: `(k, None)` at key `k` (before the first, after the last, a
/// single key), `(k, Some(s))` between keys `k` and `k + 1` at parameter `s`.
fn locate(times: &[f64], t: f64) -> (usize, Option<f64>) {
    let n = times.len();
    if n == 1 || t <= times[0] {
        return (0, None);
    }
    if t >= times[n - 1] {
        return (n - 1, None);
    }
    let k = (0..n - 1).rfind(|&k| times[k] <= t).unwrap_or(0);
    (k, Some((t - times[k]) / (times[k + 1] - times[k])))
}

fn normalize4(q: [f64; 4]) -> [f64; 4] {
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    q.map(|v| v / n)
}

fn dot4(a: [f64; 4], b: [f64; 4]) -> f64 {
    (0..4).map(|i| a[i] * b[i]).sum()
}

/// Exact slerp on the shortest arc.
fn slerp64(a: [f64; 4], b: [f64; 4], s: f64) -> [f64; 4] {
    let (a, mut b) = (normalize4(a), normalize4(b));
    let mut d = dot4(a, b);
    if d < 0.0 {
        b = b.map(|v| -v);
        d = -d;
    }
    let theta = d.min(1.0).acos();
    if theta < 1e-12 {
        return a;
    }
    let (wa, wb) = (((1.0 - s) * theta).sin() / theta.sin(), (s * theta).sin() / theta.sin());
    core::array::from_fn(|i| wa * a[i] + wb * b[i])
}

/// The glTF cubic Hermite spline over an interval of length `td`.
fn hermite64(p0: f64, m0: f64, p1: f64, m1: f64, s: f64, td: f64) -> f64 {
    let (s2, s3) = (s * s, s * s * s);
    (2.0 * s3 - 3.0 * s2 + 1.0) * p0 + (s3 - 2.0 * s2 + s) * td * m0 + (3.0 * s2 - 2.0 * s3) * p1 + (s3 - s2) * td * m1
}

/// A smallest-three rotation decoded as the format describes it: three 15-bit components
/// `q / 16384 − 1` scaled by 1/√2, the largest rebuilt as `±√(1 − a² − b² − c²)`.
fn unpack64(b: [u8; 6]) -> [f64; 4] {
    let bits = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], 0, 0]);
    let c = |i: u32| (((bits >> (15 * i)) & 0x7fff) as f64 - 16384.0) / 16384.0 / core::f64::consts::SQRT_2;
    let small = [c(0), c(1), c(2)];
    let w = (1.0 - small.iter().map(|v| v * v).sum::<f64>()).max(0.0).sqrt();
    let w = if (bits >> 47) & 1 != 0 { -w } else { w };
    let largest = ((bits >> 45) & 3) as usize;
    let mut out = [0.0; 4];
    let mut k = 0;
    for (i, o) in out.iter_mut().enumerate() {
        if i == largest {
            *o = w;
        } else {
            *o = small[k];
            k += 1;
        }
    }
    out
}

/// The rotation angle between two unit quaternions (either sign), well conditioned near 0.
fn angle64(a: [f64; 4], b: [f64; 4]) -> f64 {
    let (a, b) = (normalize4(a), normalize4(b));
    let b = if dot4(a, b) < 0.0 { b.map(|v| -v) } else { b };
    let chord = (0..4).map(|i| (a[i] - b[i]).powi(2)).sum::<f64>().sqrt();
    4.0 * (chord / 2.0).min(1.0).asin()
}

/// Part `part` of key `k` (in-tangent 0, value 1, out-tangent 2 of a cubic spline; else the
/// value), in f64.
type KeyPart = dyn Fn(usize, usize) -> [f64; 4];

/// What a track gives at clip time `t` (in `[start, end]`), computed from its keys in f64:
/// xyz (and w for rotations). LINEAR rotations are slerped exactly; the caller allows
/// corrected nlerp its documented distance from slerp.
fn reference(track: &Track, start: f32, end: f32, t: f64) -> [f64; 4] {
    let rotation = track.target == TARGET_ROTATION;
    let c = if rotation { 4 } else { 3 };
    let (times, key): (Vec<f64>, Box<KeyPart>) = match &track.keys {
        Keys::F32 { times, values } => {
            let stride = if track.interp == INTERP_CUBIC { 3 * c } else { c };
            let values = values.clone();
            // part 0: in-tangent (cubic) or value; part 1: value (cubic); part 2: out-tangent.
            let get = move |k: usize, part: usize| -> [f64; 4] {
                let at = k * stride + part * c;
                core::array::from_fn(|j| if j < c { f64::from(values[at + j]) } else { 0.0 })
            };
            (times.iter().map(|&t| f64::from(t)).collect(), Box::new(get))
        }
        Keys::QuantizedVec { times, min, scale, q } => {
            let (min, scale, q) = (*min, *scale, q.clone());
            let get = move |k: usize, _: usize| -> [f64; 4] {
                core::array::from_fn(|j| {
                    if j < 3 {
                        f64::from(min[j]) + f64::from(scale[j]) * f64::from(q[k][j]) / 65536.0
                    } else {
                        0.0
                    }
                })
            };
            (quantized_times(times, start, end), Box::new(get))
        }
        Keys::QuantizedRot { times, packed } => {
            let packed = packed.clone();
            (quantized_times(times, start, end), Box::new(move |k: usize, _: usize| unpack64(packed[k])))
        }
        Keys::Packed(p) => {
            let p = p.clone();
            (p.times(start, end), Box::new(move |k: usize, _: usize| p.value(k, rotation)))
        }
        Keys::RawPacked { .. } => unreachable!("corrupt tracks are not sampled"),
    };
    let value = |k: usize| if track.interp == INTERP_CUBIC { key(k, 1) } else { key(k, 0) };
    let finish = |v: [f64; 4]| if rotation { normalize4(v) } else { v };
    match locate(&times, t) {
        (k, None) => finish(value(k)),
        (k, Some(s)) => match track.interp {
            INTERP_STEP => finish(value(k)),
            INTERP_LINEAR if rotation => slerp64(value(k), value(k + 1), s),
            INTERP_LINEAR => core::array::from_fn(|j| value(k)[j] + (value(k + 1)[j] - value(k)[j]) * s),
            _ => {
                let td = times[k + 1] - times[k];
                let (p0, m0, p1, m1) = (value(k), key(k, 2), value(k + 1), key(k + 1, 0));
                finish(core::array::from_fn(|j| hermite64(p0[j], m0[j], p1[j], m1[j], s, td)))
            }
        },
    }
}

/// Key times of a quantized track: `start + (end − start) · q / 65535`.
fn quantized_times(q: &[u16], start: f32, end: f32) -> Vec<f64> {
    q.iter().map(|&q| f64::from(start) + (f64::from(end) - f64::from(start)) * f64::from(q) / 65535.0).collect()
}

// ------------------------------------------------------------------------------------------------
// Sampling through the clip's three paths
// ------------------------------------------------------------------------------------------------

/// Track `i` at `t` through a fresh key cursor (hint `hint`) and through a per-track cache.
fn sample_both<R: Real>(clip: &Clip<'_>, i: usize, t: f32, hint: u16, rot: RotationInterpolation) -> [[f32; 4]; 2] {
    let time = ClipTime::<R>::new(clip);
    let t = R::from_f32(t);
    let mut cursor = hint;
    let (_, _, a) = clip.sample_track(i, t, &time, &mut cursor, rot);
    let mut cache = TrackCache::EMPTY;
    let (_, _, b) = clip.sample_track_cached(i, t, &time, &mut cache, rot);
    [a.map(Real::to_f32), b.map(Real::to_f32)]
}

/// Checks every track of `tracks` (one clip over `[start, end]`) at `times` against the f64
/// reference: `f32` within `tol`, `Q16` within `tol_q16` (in value units or radians).
fn check_tracks(tracks: &[Track], start: f32, end: f32, times: &[f32], tol: f64, tol_q16: f64) {
    let bytes = file(7, start, end, tracks);
    let clip = clip_of(&bytes);
    // Miri (slow) takes every third time and one hint.
    let hints: &[u16] = if cfg!(miri) { &[u16::MAX] } else { &[0, 1, 2, u16::MAX] };
    for (i, track) in tracks.iter().enumerate() {
        for &t in times.iter().step_by(if cfg!(miri) { 3 } else { 1 }) {
            for rot in [RotationInterpolation::Slerp, RotationInterpolation::NlerpCorrected] {
                let want = reference(track, start, end, f64::from(t));
                // Corrected nlerp is within 7e-5 rad of slerp (only LINEAR rotations without
                // the slerp flag use it).
                let nlerp = rot == RotationInterpolation::NlerpCorrected
                    && track.target == TARGET_ROTATION
                    && track.interp == INTERP_LINEAR
                    && !track.slerp;
                let extra = if nlerp { 7.5e-5 } else { 0.0 };
                for &hint in hints {
                    let f = sample_both::<f32>(&clip, i, t, hint, rot);
                    let q = sample_both::<Q16>(&clip, i, t, hint, rot);
                    for (got, tol) in [(f[0], tol), (f[1], tol), (q[0], tol_q16), (q[1], tol_q16)] {
                        let got = got.map(f64::from);
                        let err = if track.target == TARGET_ROTATION {
                            angle64(got, want)
                        } else {
                            (0..3).map(|j| (got[j] - want[j]).abs()).fold(0.0, f64::max)
                        };
                        assert!(
                            err <= tol + extra,
                            "track {i} at t = {t} ({rot:?}, hint {hint}): {got:?} vs {want:?}, error {err:e}"
                        );
                    }
                }
            }
        }
    }
}

/// Sample times over `[start, end]`: the ends, every key time, midpoints and quarter points.
fn probe_times(start: f32, end: f32, keys: &[f32]) -> Vec<f32> {
    let mut t = vec![start, end];
    t.extend_from_slice(keys);
    for w in keys.windows(2) {
        t.extend([w[0] + (w[1] - w[0]) * 0.25, (w[0] + w[1]) * 0.5, w[0] + (w[1] - w[0]) * 0.875]);
    }
    if let (Some(&first), Some(&last)) = (keys.first(), keys.last()) {
        t.extend([(start + first) * 0.5, (last + end) * 0.5]);
    }
    t
}

// ------------------------------------------------------------------------------------------------
// Tests
// ------------------------------------------------------------------------------------------------

/// Lossless keys: translation, rotation and scale with STEP, LINEAR and CUBICSPLINE, the
/// tracks starting after the clip start and ending before its end.
#[test]
fn f32_keys_in_every_interpolation_match_the_reference() {
    let times = [0.25f32, 1.0, 1.75];
    let vecs = [1.0, -2.0, 0.5, 3.0, 0.0, -1.5, -0.25, 4.0, 2.0];
    let q = [
        axis_angle([0.0, 0.0, 1.0], 0.3),
        axis_angle([1.0, 2.0, 0.5], 1.9),
        // The opposite sign of a nearby rotation: interpolation takes the shortest arc.
        axis_angle([1.0, 2.0, 0.7], 2.6).map(|v| -v),
    ];
    let quats: Vec<f32> = q.iter().flat_map(|&q| to_f32s(q)).collect();
    // Cubic: in-tangent, value, out-tangent per key.
    let cubic_vec =
        [0.5, 0.0, -1.0, 1.0, 2.0, 3.0, 2.0, -1.0, 0.0, /**/ 0.0, 1.0, 1.0, -1.0, 0.5, 4.0, 3.0, 3.0, 3.0];
    let (q0, q1) = (to_f32s(axis_angle([0.0, 1.0, 0.0], 0.4)), to_f32s(axis_angle([0.0, 1.0, 0.2], 1.4)));
    let mut cubic_rot = vec![0.0, 0.1, 0.0, 0.0];
    cubic_rot.extend(q0);
    cubic_rot.extend([0.2, 0.3, 0.0, -0.1, 0.0, 0.0, 0.1, 0.0]);
    cubic_rot.extend(q1);
    cubic_rot.extend([0.0; 4]);
    let tracks = [
        f32_track(0, TARGET_TRANSLATION, INTERP_LINEAR, &times, &vecs),
        f32_track(1, TARGET_TRANSLATION, INTERP_STEP, &times, &vecs),
        f32_track(2, TARGET_TRANSLATION, INTERP_CUBIC, &[0.5, 1.75], &cubic_vec),
        f32_track(0, TARGET_ROTATION, INTERP_LINEAR, &times, &quats),
        f32_track(1, TARGET_ROTATION, INTERP_STEP, &times, &quats),
        f32_track(2, TARGET_ROTATION, INTERP_CUBIC, &[0.25, 1.5], &cubic_rot),
        f32_track(0, TARGET_SCALE, INTERP_LINEAR, &times, &vecs.map(|v: f32| v.abs() + 0.5)),
        // One key: held over the whole clip.
        f32_track(3, TARGET_SCALE, INTERP_LINEAR, &[1.5], &[2.0, 0.5, 1.0]),
        Track { slerp: true, ..f32_track(3, TARGET_ROTATION, INTERP_LINEAR, &times, &quats) },
    ];
    let probes = probe_times(0.0, 2.0, &[0.25, 0.5, 1.0, 1.5, 1.75]);
    check_tracks(&tracks, 0.0, 2.0, &probes, 2.0e-6, 4.0e-4);
}

/// Quantized keys: 16-bit times, ranged 16-bit translations and scales, smallest-three
/// rotations, with STEP and LINEAR.
#[test]
fn quantized_keys_match_the_reference() {
    let qt = vec![0u16, 9000, 40000, 65535];
    let vec_track = |target, interp| Track {
        joint: 1,
        target,
        interp,
        slerp: false,
        keys: Keys::QuantizedVec {
            times: qt.clone(),
            min: [-2.0, 0.5, -1.0],
            scale: [4.0, 1.5, 0.25],
            q: vec![[0, 65535, 32768], [12345, 100, 65000], [65535, 0, 1], [30000, 40000, 50000]],
        },
    };
    let rots = [
        axis_angle([0.0, 0.0, 1.0], -0.2),
        axis_angle([0.3, 1.0, 0.0], 1.2),
        axis_angle([0.3, 1.0, 0.4], 2.9).map(|v| -v),
        axis_angle([1.0, 0.0, 0.0], 0.7),
    ];
    let rot_track = |joint, interp, times: Vec<u16>| Track {
        joint,
        target: TARGET_ROTATION,
        interp,
        slerp: false,
        keys: Keys::QuantizedRot { times, packed: rots.iter().map(|&q| pack_rotation(to_f32s(q))).collect() },
    };
    let (start, end) = (0.5f32, 2.5f32);
    let tracks = [
        vec_track(TARGET_TRANSLATION, INTERP_LINEAR),
        vec_track(TARGET_SCALE, INTERP_STEP),
        rot_track(2, INTERP_LINEAR, qt.clone()),
        rot_track(3, INTERP_STEP, vec![100, 20000, 50000, 65000]),
        Track { slerp: true, ..rot_track(0, INTERP_LINEAR, qt.clone()) },
    ];
    // The runtime's key times (start + (end − start) · 65536/65535 · q/65536) round differently
    // from the reference's: probe next to them, not on them.
    let keys: Vec<f32> = quantized_times(&qt, start, end).iter().map(|&t| t as f32).collect();
    let mut probes: Vec<f32> = probe_times(start, end, &keys).into_iter().filter(|t| !keys.contains(t)).collect();
    probes.extend(keys.iter().skip(1).map(|&t| t - 1.0e-4));
    probes.extend(keys.iter().map(|&t| (t + 1.0e-4).min(end)));
    // Quantized rotation components have a step of 4.3e-5: the f32 decoder agrees with the
    // exact one to about 1e-6, and nlerp adds its own bound.
    check_tracks(&tracks, start, end, &probes, 2.0e-5, 5.0e-4);
}

/// Packed keys: implicit and stored frames, widths from 0 to 24 bits, rotations with and
/// without a reference, STEP and LINEAR, one-key tracks.
#[test]
fn packed_keys_match_the_reference() {
    let (start, end) = (0.5f32, 2.5f32);
    let packed = |frames, frame_of: Option<Vec<u32>>, reference, bits, min, range, q: Vec<[u32; 3]>| {
        Keys::Packed(Packed { frames, frame_of, reference, sub: None, largest: None, bits, min, range, q })
    };
    let track = |joint, target, interp, keys| Track { joint, target, interp, slerp: false, keys };
    let reference = to_f32s(axis_angle([0.2, 1.0, -0.4], 2.9));
    let tracks = [
        track(
            0,
            TARGET_TRANSLATION,
            INTERP_LINEAR,
            packed(
                8,
                None,
                None,
                [12, 0, 24],
                [-1.0, 0.25, 3.0],
                [2.5, 0.0, -4.0],
                vec![[0, 0, 0], [4095, 0, 1 << 23], [17, 0, (1 << 24) - 1], [2000, 0, 5], [3000, 0, 77_777]],
            ),
        ),
        track(
            1,
            TARGET_SCALE,
            INTERP_STEP,
            packed(
                8,
                Some(vec![1, 3, 7]),
                None,
                [7, 1, 3],
                [0.5; 3],
                [1.0, 2.0, 0.5],
                vec![[0, 1, 7], [127, 0, 3], [64, 1, 0]],
            ),
        ),
        track(
            0,
            TARGET_ROTATION,
            INTERP_LINEAR,
            packed(
                40,
                Some(vec![0, 2, 5, 40]),
                Some(reference),
                [16, 14, 18],
                [-0.5, -0.3, -0.6],
                [1.0, 0.6, 1.2],
                vec![[32768, 8192, 131_072], [60000, 100, 200_000], [1, 16383, 0], [40000, 9000, 150_000]],
            ),
        ),
        track(
            1,
            TARGET_ROTATION,
            INTERP_STEP,
            packed(8, None, None, [9, 9, 9], [-0.6; 3], [1.2; 3], vec![[256, 0, 511], [100, 300, 256], [511, 511, 0]]),
        ),
        Track {
            slerp: true,
            ..track(
                2,
                TARGET_ROTATION,
                INTERP_LINEAR,
                packed(
                    4,
                    None,
                    Some(reference),
                    [10, 10, 10],
                    [-0.7; 3],
                    [1.4; 3],
                    vec![[0, 512, 1023], [900, 10, 512], [300, 700, 100]],
                ),
            )
        },
        track(
            3,
            TARGET_TRANSLATION,
            INTERP_LINEAR,
            packed(1, None, None, [0; 3], [1.5, -2.0, 0.0], [0.0; 3], vec![[0; 3]]),
        ),
        track(
            3,
            TARGET_ROTATION,
            INTERP_LINEAR,
            packed(1, None, Some(reference), [0; 3], [0.0; 3], [0.0; 3], vec![[0; 3]]),
        ),
        // Sub-frame offsets: implicit frames 64 sub-frames apart moved by −5, +7 and −8, and
        // stored frames with a reference and 2¹⁶ sub-frames per frame.
        track(
            4,
            TARGET_TRANSLATION,
            INTERP_LINEAR,
            Keys::Packed(Packed {
                frames: 8,
                frame_of: None,
                reference: None,
                sub: Some((4, 6, vec![8, 3, 15, 8, 0])),
                largest: None,
                bits: [12, 8, 0],
                min: [-1.0, 0.5, 2.0],
                range: [2.5, -1.0, 0.0],
                q: vec![[0, 255, 0], [4095, 0, 0], [17, 100, 0], [2000, 7, 0], [3000, 200, 0]],
            }),
        ),
        track(
            4,
            TARGET_ROTATION,
            INTERP_LINEAR,
            Keys::Packed(Packed {
                frames: 40,
                frame_of: Some(vec![0, 2, 5, 40]),
                reference: Some(reference),
                sub: Some((3, 16, vec![4, 0, 7, 4])),
                largest: None,
                bits: [16, 14, 18],
                min: [-0.5, -0.3, -0.6],
                range: [1.0, 0.6, 1.2],
                q: vec![[32768, 8192, 131_072], [60000, 100, 200_000], [1, 16383, 0], [40000, 9000, 150_000]],
            }),
        ),
        // Smallest three: keys dropping each component in turn (stored components negative and
        // positive), with sub-frames, and with a reference and stored frames.
        track(
            5,
            TARGET_ROTATION,
            INTERP_LINEAR,
            Keys::Packed(Packed {
                frames: 8,
                frame_of: None,
                reference: None,
                sub: Some((3, 6, vec![4, 1, 7, 4, 4])),
                largest: Some(vec![3, 0, 1, 2, 3]),
                bits: [12, 11, 13],
                min: [-0.7; 3],
                range: [1.4; 3],
                q: vec![
                    [2048, 1024, 4096],
                    [1024, 1500, 5000],
                    [3500, 1024, 2000],
                    [3000, 1500, 4096],
                    [0, 1024, 4096],
                ],
            }),
        ),
        track(
            6,
            TARGET_ROTATION,
            INTERP_STEP,
            Keys::Packed(Packed {
                frames: 40,
                frame_of: Some(vec![0, 2, 5, 40]),
                reference: Some(reference),
                sub: None,
                largest: Some(vec![2, 1, 0, 3]),
                bits: [9, 9, 9],
                min: [-0.6; 3],
                range: [1.2; 3],
                q: vec![[256, 0, 511], [100, 300, 256], [400, 100, 256], [0, 256, 256]],
            }),
        ),
    ];
    let grid = |frames: f32, f: &[f32]| f.iter().map(|f| start + (end - start) * f / frames).collect::<Vec<f32>>();
    let mut keys = grid(8.0, &[0.0, 1.0, 2.0, 3.0, 4.0, 7.0]);
    keys.extend(grid(40.0, &[2.0, 5.0]));
    keys.extend(grid(4.0, &[1.0, 2.0]));
    keys.extend(grid(512.0, &[59.0, 135.0, 192.0, 248.0]));
    keys.extend(grid(2_621_440.0, &[131_068.0, 327_683.0]));
    // The runtime's key times may round differently from the reference's: probe next to them.
    let mut probes: Vec<f32> = probe_times(start, end, &keys).into_iter().filter(|t| !keys.contains(t)).collect();
    probes.extend(keys.iter().filter(|&&t| t > start).map(|&t| t - 1.0e-4));
    probes.extend(keys.iter().map(|&t| (t + 1.0e-4).min(end)));
    check_tracks(&tracks, start, end, &probes, 4.0e-6, 5.0e-4);
}

/// The validator refuses packed tracks whose header, parameters or frames are out of range, or
/// whose records do not fit the section.
#[test]
fn corrupt_packed_tracks_are_refused() {
    let good = Packed {
        frames: 10,
        frame_of: Some(vec![0, 4, 10]),
        reference: Some([0.0, 0.0, 0.0, 1.0]),
        sub: None,
        largest: None,
        bits: [5, 0, 9],
        min: [-0.5; 3],
        range: [1.0; 3],
        q: vec![[1, 0, 2], [3, 0, 4], [5, 0, 6]],
    };
    let parse = |target: u8, data: Vec<u8>, keys: usize| {
        let track =
            Track { joint: 0, target, interp: INTERP_LINEAR, slerp: false, keys: Keys::RawPacked { data, keys } };
        Asset::parse(&file(1, 0.0, 1.0, &[track])).map(|_| ())
    };
    let bytes = good.bytes();
    assert_eq!(parse(TARGET_ROTATION, bytes.clone(), 3), Ok(()));
    let bad_track = Err(crate::format::ParseError::BadTrack { section: 1, track: 0 });
    let edit = |at: usize, v: u8| {
        let mut b = bytes.clone();
        b[at] = v;
        b
    };
    // Frames 0, widths past the maximum, unknown flags, a reference on a translation.
    assert_eq!(parse(TARGET_ROTATION, edit(0, 0), 3), bad_track);
    assert_eq!(parse(TARGET_ROTATION, edit(2, 17), 3), bad_track);
    assert_eq!(parse(TARGET_ROTATION, edit(4, 25), 3), bad_track);
    assert_eq!(parse(TARGET_ROTATION, edit(3, 2), 3), bad_track);
    assert_eq!(parse(TARGET_TRANSLATION, bytes.clone(), 3), bad_track);
    // More keys than the data holds, or data left over.
    let bad_section = Err(crate::format::ParseError::BadSection { section: 1 });
    assert_eq!(parse(TARGET_ROTATION, bytes.clone(), 9), bad_section);
    assert_eq!(parse(TARGET_ROTATION, bytes[..bytes.len() - 1].to_vec(), 3), bad_section);
    // A reference component or a range out of bounds (rotations: ±4), a NaN minimum.
    let non_finite = Err(crate::format::ParseError::NonFinite { section: 1 });
    let put = |at: usize, v: f32| {
        let mut b = bytes.clone();
        b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        b
    };
    assert_eq!(parse(TARGET_ROTATION, put(PACKED_HEADER_LEN, 5.0), 3), non_finite);
    assert_eq!(parse(TARGET_ROTATION, put(PACKED_HEADER_LEN + 16, f32::NAN), 3), non_finite);
    assert_eq!(parse(TARGET_ROTATION, put(PACKED_HEADER_LEN + 20, -4.5), 3), non_finite);
    // Frames beyond the grid, or not increasing.
    let unsorted = Err(crate::format::ParseError::UnsortedKeys { section: 1, track: 0 });
    let frames = |f: Vec<u32>| Packed { frame_of: Some(f), ..good.clone() }.bytes();
    assert_eq!(parse(TARGET_ROTATION, frames(vec![0, 4, 11]), 3), unsorted);
    assert_eq!(parse(TARGET_ROTATION, frames(vec![0, 4, 4]), 3), unsorted);
    // Implicit frames: at most frames + 1 keys.
    let implicit = Packed { frames: 1, frame_of: None, ..good.clone() }.bytes();
    assert_eq!(parse(TARGET_ROTATION, implicit, 3), unsorted);
    // Sub-frame offsets: widths out of range, too many sub-frames, keys moved before the start,
    // past the end or onto the previous key.
    let sub = |frames: u16, f: Vec<u32>, bits: u8, shift: u8, o: Vec<u32>| {
        Packed { frames, frame_of: Some(f), sub: Some((bits, shift, o)), ..good.clone() }.bytes()
    };
    assert_eq!(parse(TARGET_ROTATION, sub(10, vec![0, 4, 10], 3, 4, vec![4, 0, 3]), 3), Ok(()));
    assert_eq!(
        parse(
            TARGET_TRANSLATION,
            Packed { reference: None, sub: Some((3, 4, vec![4, 0, 3])), ..good.clone() }.bytes(),
            3
        ),
        Ok(())
    );
    // Smallest three: rotations only.
    let largest = Packed { reference: None, largest: Some(vec![0, 3, 2]), ..good.clone() }.bytes();
    assert_eq!(parse(TARGET_ROTATION, largest.clone(), 3), Ok(()));
    assert_eq!(parse(TARGET_TRANSLATION, largest.clone(), 3), bad_track);
    assert_eq!(parse(TARGET_SCALE, largest, 3), bad_track);
    assert_eq!(parse(TARGET_ROTATION, sub(10, vec![0, 4, 10], 0, 4, vec![0, 0, 0]), 3), bad_track);
    assert_eq!(parse(TARGET_ROTATION, sub(10, vec![0, 4, 10], 17, 4, vec![0, 0, 0]), 3), bad_track);
    assert_eq!(parse(TARGET_ROTATION, sub(10, vec![0, 4, 10], 3, 0, vec![4, 4, 4]), 3), bad_track);
    assert_eq!(parse(TARGET_ROTATION, sub(10, vec![0, 4, 10], 3, 17, vec![4, 4, 4]), 3), bad_track);
    assert_eq!(parse(TARGET_ROTATION, sub(300, vec![0, 4, 10], 3, 16, vec![4, 4, 4]), 3), bad_track);
    assert_eq!(parse(TARGET_ROTATION, sub(256, vec![0, 4, 10], 3, 16, vec![4, 4, 4]), 3), Ok(()));
    assert_eq!(parse(TARGET_ROTATION, sub(10, vec![0, 4, 10], 3, 4, vec![3, 4, 4]), 3), unsorted);
    assert_eq!(parse(TARGET_ROTATION, sub(10, vec![0, 4, 10], 3, 4, vec![4, 4, 5]), 3), unsorted);
    assert_eq!(parse(TARGET_ROTATION, sub(10, vec![0, 4, 5], 3, 1, vec![4, 6, 4]), 3), unsorted);
}

/// At exactly a key time the value is the key's, bit for bit (lossless translations), before
/// the first key the first key's and after the last the last key's.
#[test]
fn key_times_and_ends_give_the_keys_exactly() {
    let times = [0.5f32, 1.0, 1.25, 2.0];
    let values: Vec<f32> = (0..12).map(|i| i as f32 * 0.37 - 1.0).collect();
    for interp in [INTERP_STEP, INTERP_LINEAR] {
        let tracks = [f32_track(0, TARGET_TRANSLATION, interp, &times, &values)];
        let bytes = file(1, 0.0, 3.0, &tracks);
        let clip = clip_of(&bytes);
        let key = |k: usize| [values[3 * k], values[3 * k + 1], values[3 * k + 2], 0.0];
        for (k, &t) in times.iter().enumerate() {
            for hint in [0, 1, 2, 3, 7] {
                assert_eq!(sample_both::<f32>(&clip, 0, t, hint, RotationInterpolation::Slerp), [key(k); 2], "key {k}");
            }
        }
        for t in [0.0, 0.25, 0.499_999_97] {
            assert_eq!(sample_both::<f32>(&clip, 0, t, 2, RotationInterpolation::Slerp), [key(0); 2], "t = {t}");
        }
        for t in [2.0, 2.000_000_2, 3.0] {
            assert_eq!(sample_both::<f32>(&clip, 0, t, 0, RotationInterpolation::Slerp), [key(3); 2], "t = {t}");
        }
        // STEP holds a key until the next one.
        if interp == INTERP_STEP {
            for (t, k) in [(0.75, 0), (1.249_999_9, 1), (1.9, 2)] {
                assert_eq!(sample_both::<f32>(&clip, 0, t, 0, RotationInterpolation::Slerp), [key(k); 2]);
            }
        }
    }
}

/// What `interval` found, in a comparable form.
fn span(s: Span<f32>) -> (usize, Option<(f32, f32)>) {
    match s {
        Span::At(k) => (k, None),
        Span::Between(k, t0, t1) => (k, Some((t0, t1))),
    }
}

/// The key interval search gives the same answer from every cursor hint, at key times, between
/// them, before the first and after the last, and leaves the cursor on the interval's first key.
#[test]
fn interval_search_is_independent_of_the_hint() {
    let many: Vec<f32> = (0..40).map(|k| (k * k) as f32 * 0.01).collect();
    for times in [vec![1.0f32], vec![0.0, 1.0], vec![0.0, 1.0, 2.0, 3.0, 5.0, 8.0], many] {
        let n = times.len();
        let mut probes = vec![-1.0f32, 100.0];
        for w in times.windows(2) {
            probes.extend([w[0], (w[0] + w[1]) * 0.5, w[1] - 1.0e-3]);
        }
        probes.push(times[n - 1]);
        for &t in &probes {
            // Independently: the last key at or before t.
            let want = if n == 1 || t <= times[0] {
                (0, None)
            } else if t >= times[n - 1] {
                (n - 1, None)
            } else {
                let k = (0..n - 1).rfind(|&k| times[k] <= t).unwrap();
                (k, Some((times[k], times[k + 1])))
            };
            // Miri (slow) takes every fifth hint.
            for hint in (0..n as u16 + 3).step_by(if cfg!(miri) { 5 } else { 1 }).chain([u16::MAX]) {
                let mut cursor = hint;
                let got = span(interval(n, t, &mut cursor, |k| times[k]));
                assert_eq!(got, want, "{n} keys, t = {t}, hint {hint}");
                let k = if n == 1 { 0 } else { want.0.min(n - 2) };
                assert_eq!(cursor as usize, if n == 1 { hint as usize } else { k }, "cursor, t = {t}, hint {hint}");
            }
        }
    }
}

/// The track directory as [`Clip`] reports it.
#[test]
fn the_track_directory_reads_back() {
    let q = to_f32s(axis_angle([0.0, 1.0, 0.0], 0.5));
    let tracks = [
        f32_track(3, TARGET_TRANSLATION, INTERP_CUBIC, &[0.0, 1.0], &[0.0; 18]),
        Track { slerp: true, ..f32_track(1, TARGET_ROTATION, INTERP_LINEAR, &[0.5], &q) },
        Track {
            joint: 0,
            target: TARGET_SCALE,
            interp: INTERP_STEP,
            slerp: false,
            keys: Keys::QuantizedVec { times: vec![0, 1, 2], min: [1.0; 3], scale: [0.0; 3], q: vec![[0; 3]; 3] },
        },
        Track {
            joint: 2,
            target: TARGET_ROTATION,
            interp: INTERP_LINEAR,
            slerp: false,
            keys: Keys::QuantizedRot { times: vec![0, 65535], packed: vec![pack_rotation(q); 2] },
        },
    ];
    let bytes = file(5, 0.0, 1.0, &tracks);
    let clip = clip_of(&bytes);
    assert_eq!((clip.name(), clip.start(), clip.end()), ("c", 0.0, 1.0));
    assert_eq!((clip.num_tracks(), clip.num_keys(), clip.joint_bound()), (4, 2 + 1 + 3 + 2, 4));
    let info = |joint, target, interpolation, format, key_count, slerp, data_len| TrackInfo {
        joint,
        target,
        interpolation,
        format,
        key_count,
        slerp,
        data_len,
    };
    use Interpolation::*;
    use KeyFormat::*;
    assert_eq!(clip.track(0), Some(info(3, Target::Translation, CubicSpline, F32, 2, false, 2 * 4 + 18 * 4)));
    assert_eq!(clip.track(1), Some(info(1, Target::Rotation, Linear, F32, 1, true, 4 + 16)));
    assert_eq!(clip.track(2), Some(info(0, Target::Scale, Step, Quantized, 3, false, 3 * 2 + 24 + 3 * 6)));
    assert_eq!(clip.track(3), Some(info(2, Target::Rotation, Linear, Quantized, 2, false, 2 * (2 + 6))));
    assert_eq!(clip.track(4), None);
    // The section: name, range, count, directory and data, nothing else.
    let data: usize = (0..4).map(|i| clip.track(i).unwrap().data_len).sum();
    assert_eq!(clip.byte_len(), 2 + 8 + 2 + 4 * TRACK_ENTRY_LEN + data);
}

/// A clip over six joints (two SoA elements, some joints without tracks) with every key format
/// and interpolation, the slerp flag, and tracks in no particular order.
pub(crate) fn mixed_clip_tracks() -> Vec<Track> {
    let t3 = [0.0f32, 0.4, 1.5];
    let v3 = [0.0, 1.0, 2.0, 1.0, -1.0, 0.5, 3.0, 0.0, -2.0];
    let q3: Vec<f32> = [
        axis_angle([0.0, 0.0, 1.0], 0.1),
        axis_angle([1.0, 1.0, 0.0], 2.4),
        axis_angle([1.0, 0.2, 0.3], 0.9).map(|v| -v),
    ]
    .iter()
    .flat_map(|&q| to_f32s(q))
    .collect();
    let packed: Vec<[u8; 6]> =
        (0..5).map(|k| pack_rotation(to_f32s(axis_angle([1.0, k as f64, 0.5], 0.8 * k as f64)))).collect();
    let cubic = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, /**/ 0.0, 0.0, 1.0, 2.0, 0.0, 1.0, 0.0, 0.0, 0.0];
    vec![
        f32_track(5, TARGET_ROTATION, INTERP_LINEAR, &t3, &q3),
        f32_track(0, TARGET_TRANSLATION, INTERP_LINEAR, &t3, &v3),
        f32_track(0, TARGET_SCALE, INTERP_STEP, &t3, &v3.map(|v: f32| v.abs() + 1.0)),
        f32_track(1, TARGET_TRANSLATION, INTERP_CUBIC, &[0.2, 1.8], &cubic),
        Track { slerp: true, ..f32_track(1, TARGET_ROTATION, INTERP_LINEAR, &t3, &q3) },
        f32_track(2, TARGET_ROTATION, INTERP_STEP, &t3, &q3),
        Track {
            joint: 3,
            target: TARGET_ROTATION,
            interp: INTERP_LINEAR,
            slerp: false,
            keys: Keys::QuantizedRot { times: vec![0, 10000, 30000, 50000, 65535], packed },
        },
        Track {
            joint: 4,
            target: TARGET_TRANSLATION,
            interp: INTERP_LINEAR,
            slerp: false,
            keys: Keys::QuantizedVec {
                times: vec![5000, 60000],
                min: [-1.0, -1.0, 0.0],
                scale: [2.0, 2.0, 3.0],
                q: vec![[0, 65535, 1000], [65535, 0, 64000]],
            },
        },
    ]
}

/// The pose of `clip` at `t` through `states`.
fn pose<C: TrackState<f32>>(
    clip: Clip<'_>,
    rest: &[SoaTransform<f32>],
    t: f32,
    rot: RotationInterpolation,
    states: &mut [C],
) -> [SoaTransform<f32>; 2] {
    let mut out = [SoaTransform::IDENTITY; 2];
    SamplingJob { clip, time: t, rotation: rot, rest_pose: rest, cursor: states, output: &mut out }.run().unwrap();
    out
}

/// Key cursors, per-track caches and SoA caches give the same poses, playing forward at 60 Hz
/// with loops, jumping back and landing on key times; untracked joints keep the rest pose.
#[test]
fn cursors_and_caches_agree() {
    states_agree(&mixed_clip_tracks());
}

/// Packed tracks: the three sampling states agree as on the other formats.
#[test]
fn cursors_and_caches_agree_on_packed_tracks() {
    states_agree(&packed_clip_tracks());
}

/// Packed tracks of every kind: rotations (with a reference key, STEP, exact slerp), vectors
/// with sub-frame times, scales.
fn packed_clip_tracks() -> Vec<Track> {
    let packed = |frames, frame_of: Option<Vec<u32>>, reference, bits, q: Vec<[u32; 3]>| {
        Keys::Packed(Packed {
            frames,
            frame_of,
            reference,
            sub: None,
            largest: None,
            bits,
            min: [-0.6; 3],
            range: [1.2; 3],
            q,
        })
    };
    let reference = Some(to_f32s(axis_angle([1.0, -0.5, 0.3], 3.1)));
    let q: Vec<[u32; 3]> = (0..9u32).map(|k| [k * 100 % 1024, (k * 377 + 50) % 1024, (900 - k * 90) % 1024]).collect();
    let track = |joint, target, interp, keys| Track { joint, target, interp, slerp: false, keys };
    vec![
        track(0, TARGET_ROTATION, INTERP_LINEAR, packed(8, None, reference, [10; 3], q.clone())),
        track(0, TARGET_TRANSLATION, INTERP_LINEAR, packed(8, None, None, [10, 0, 10], q.clone())),
        track(
            3,
            TARGET_TRANSLATION,
            INTERP_LINEAR,
            Keys::Packed(Packed {
                frames: 8,
                frame_of: None,
                reference: None,
                sub: Some((5, 8, vec![16, 0, 31, 16, 20, 3, 16, 30, 0])),
                largest: None,
                bits: [10, 10, 10],
                min: [-0.6; 3],
                range: [1.2; 3],
                q: q.clone(),
            }),
        ),
        track(
            1,
            TARGET_ROTATION,
            INTERP_STEP,
            packed(60, Some(vec![0, 7, 8, 20, 33, 34, 35, 50, 59]), None, [10; 3], q.clone()),
        ),
        Track {
            slerp: true,
            ..track(
                2,
                TARGET_ROTATION,
                INTERP_LINEAR,
                packed(100, Some(vec![3, 10, 20, 30, 40, 50, 60, 70, 90]), reference, [10; 3], q.clone()),
            )
        },
        track(
            5,
            TARGET_SCALE,
            INTERP_LINEAR,
            packed(1000, Some((0..9).map(|k| k * 100 + 50).collect()), None, [10; 3], q),
        ),
    ]
}

/// An SoA cache played forward (its lanes moved to the next key interval as playback crosses
/// keys, one key decoded) gives exactly the pose of a cache filled afresh at each time, in
/// every build: rotations included (a lane moved on holds its first key as stored, as a fill
/// does).
#[test]
fn advanced_soa_lanes_match_fresh_fills() {
    for tracks in [mixed_clip_tracks(), packed_vector_tracks()] {
        let bytes = file(6, 0.0, 2.0, &tracks);
        let clip = clip_of(&bytes);
        let rest = [SoaTransform::IDENTITY; 2];
        let mut played = [SoaTrackCache::EMPTY; 2];
        let rot = RotationInterpolation::NlerpCorrected;
        for i in 0..if cfg!(miri) { 30 } else { 240 } {
            let t = i as f32 / 120.0;
            let a = pose(clip, &rest, t, rot, &mut played);
            let b = pose(clip, &rest, t, rot, &mut [SoaTrackCache::EMPTY; 2]);
            assert_eq!(pose_bits(&a), pose_bits(&b), "t = {t}");
        }
    }
}

/// Packed translation and scale tracks with many keys on irregular frames.
fn packed_vector_tracks() -> Vec<Track> {
    let q: Vec<[u32; 3]> = (0..9u32).map(|k| [k * 100 % 1024, (k * 377 + 50) % 1024, (900 - k * 90) % 1024]).collect();
    let packed = |frames, frame_of: Option<Vec<u32>>| {
        Keys::Packed(Packed {
            frames,
            frame_of,
            reference: None,
            sub: None,
            largest: None,
            bits: [10, 0, 10],
            min: [-0.6; 3],
            range: [1.2; 3],
            q: q.clone(),
        })
    };
    let track = |joint, target, keys| Track { joint, target, interp: INTERP_LINEAR, slerp: false, keys };
    vec![
        track(0, TARGET_TRANSLATION, packed(8, None)),
        track(2, TARGET_SCALE, packed(60, Some(vec![0, 7, 8, 20, 33, 34, 35, 50, 59]))),
        track(5, TARGET_TRANSLATION, packed(100, Some(vec![3, 10, 20, 30, 40, 50, 60, 70, 90]))),
    ]
}

/// Key cursors, per-track caches and SoA caches give the same poses of a clip over six joints.
fn states_agree(tracks: &[Track]) {
    let bytes = file(6, 0.0, 2.0, tracks);
    let clip = clip_of(&bytes);
    let mut rest = [SoaTransform::IDENTITY; 2];
    rest[1].translation.set_lane(2, crate::math::Vec3::new(7.0, 8.0, 9.0));
    rest[1].scale.set_lane(3, crate::math::Vec3::splat(2.0));
    let mut times = Vec::new();
    let mut t = 0.0f32;
    for i in 0..if cfg!(miri) { 20 } else { 300 } {
        t += 1.0 / 60.0;
        if t > 2.0 {
            t -= 2.0;
        }
        times.push(match i % 41 {
            7 => 0.4,
            8 => 1.5,
            9 => 0.2,
            10 => 0.0,
            11 => 2.0,
            12 => 1.1,
            _ => t,
        });
    }
    for rot in [RotationInterpolation::NlerpCorrected, RotationInterpolation::Slerp] {
        let mut cursors = vec![0u16; tracks.len()];
        let mut caches = vec![TrackCache::EMPTY; tracks.len()];
        let mut soa = [SoaTrackCache::EMPTY; 2];
        for &t in &times {
            let a = pose(clip, &rest, t, rot, &mut cursors);
            let b = pose(clip, &rest, t, rot, &mut caches);
            let c = pose(clip, &rest, t, rot, &mut soa);
            for j in 0..8 {
                let (x, y, z) = (a[j / 4].lane(j % 4), b[j / 4].lane(j % 4), c[j / 4].lane(j % 4));
                for other in [y, z] {
                    assert!((x.translation - other.translation).max_abs() < 2.0e-6, "joint {j}, t = {t}, {rot:?}");
                    assert!((x.scale - other.scale).max_abs() < 2.0e-6, "joint {j}, t = {t}, {rot:?}");
                    assert!(x.rotation.angle_between(other.rotation) < 1.0e-5, "joint {j}, t = {t}, {rot:?}");
                }
                // The SoA cache evaluates the per-track cache's formulas in the same order
                // (its lerps fused where the build has FMA); a rotation may come out as −q.
                if crate::platform::jobs_fuse() {
                    let d = (y.translation - z.translation).max_abs().max((y.scale - z.scale).max_abs());
                    assert!(d < 1.0e-6, "joint {j}, t = {t}");
                } else {
                    assert_eq!((y.translation, y.scale), (z.translation, z.scale), "joint {j}, t = {t}");
                }
                assert!(y.rotation.angle_between(z.rotation) < 1.0e-6, "joint {j}, t = {t}");
                if j >= 6 {
                    assert_eq!(x, rest[1].lane(j % 4), "untracked joint {j}");
                    assert_eq!(z, rest[1].lane(j % 4), "untracked joint {j}");
                }
            }
        }
    }
}

/// The bits of every value of a pose as `f32` (so that −0 and 0, or NaNs, are told apart; a
/// `Q16` below 256 in magnitude converts exactly).
fn pose_bits<R: Real>(pose: &[SoaTransform<R>]) -> Vec<u32> {
    let bits = |v: R| v.to_f32().to_bits();
    let mut out = Vec::new();
    for p in pose {
        for a in [&p.translation.x, &p.translation.y, &p.translation.z, &p.scale.x, &p.scale.y, &p.scale.z] {
            out.extend(a.iter().map(|&v| bits(v)));
        }
        for a in [&p.rotation.x, &p.rotation.y, &p.rotation.z, &p.rotation.w] {
            out.extend(a.iter().map(|&v| bits(v)));
        }
    }
    out
}

/// Sampling through a cache gives the bits of an empty cache at every time, whatever the cache
/// sampled before: forward playback at several rates, steps back, jumps, key times (the first
/// key's included), times outside the clip, and another clip in between. Per-track caches
/// and SoA caches, in f32 and Q16, both rotation modes, over every key format and kind
/// (LINEAR, STEP, CUBICSPLINE, exact slerp; f32, quantized and packed keys).
#[test]
fn warm_caches_give_the_bits_of_empty_ones() {
    fn run<R: Real>(clips: &[Clip<'_>], keys: &[f32], steps: usize, seed: u64) {
        let rest = [SoaTransform::<R>::IDENTITY; 2];
        let tracks = clips.iter().map(|c| c.num_tracks()).max().unwrap_or(0);
        let mut rng = crate::test_support::Rng64(seed);
        for rot in [RotationInterpolation::NlerpCorrected, RotationInterpolation::Slerp] {
            let mut soa = [SoaTrackCache::<R>::EMPTY; 2];
            let mut per_track = vec![TrackCache::<R>::EMPTY; tracks];
            let (mut c, mut t) = (0usize, 0.0f32);
            for _ in 0..steps {
                let r = rng.next();
                t = match (r * 16.0) as u32 {
                    0..=5 => t + 1.0 / 60.0,
                    6 | 7 => t + 1.0 / 24.0,
                    8 => t + 0.3,
                    9 => t - 1.0 / 60.0,
                    10 => rng.range(-0.5, 2.5) as f32,
                    11 | 12 => keys[rng.below(keys.len())],
                    13 => 0.0,
                    14 => 2.0,
                    _ => {
                        c = rng.below(clips.len());
                        t
                    }
                };
                if t > 2.0 && r < 0.3 {
                    t -= 2.0;
                }
                let clip = clips[c];
                let n = clip.num_tracks();
                let time = R::from_f32(t);
                let sample = |states: &mut [_], out: &mut [SoaTransform<R>]| {
                    SamplingJob { clip, time, rotation: rot, rest_pose: &rest, cursor: states, output: out }.run()
                };
                let (mut warm, mut cold) = ([SoaTransform::IDENTITY; 2], [SoaTransform::IDENTITY; 2]);
                sample(&mut soa, &mut warm).unwrap();
                sample(&mut [SoaTrackCache::EMPTY; 2], &mut cold).unwrap();
                assert_eq!(pose_bits(&warm), pose_bits(&cold), "SoA cache, clip {c}, t = {t}, {rot:?}");
                let (mut warm, mut cold) = ([SoaTransform::IDENTITY; 2], [SoaTransform::IDENTITY; 2]);
                SamplingJob {
                    clip,
                    time,
                    rotation: rot,
                    rest_pose: &rest,
                    cursor: &mut per_track[..n],
                    output: &mut warm,
                }
                .run()
                .unwrap();
                let mut empty = vec![TrackCache::<R>::EMPTY; n];
                SamplingJob { clip, time, rotation: rot, rest_pose: &rest, cursor: &mut empty, output: &mut cold }
                    .run()
                    .unwrap();
                assert_eq!(pose_bits(&warm), pose_bits(&cold), "per-track cache, clip {c}, t = {t}, {rot:?}");
            }
        }
    }
    let files: Vec<Vec<u8>> = [mixed_clip_tracks(), packed_clip_tracks(), packed_vector_tracks()]
        .iter()
        .map(|t| file(6, 0.0, 2.0, t))
        .collect();
    let clips: Vec<Clip<'_>> = files.iter().map(|b| clip_of(b)).collect();
    // Key times of the tracks above (f32 times, quantized and packed frames of the 2 s clip).
    let mut keys = vec![0.0f32, 0.2, 0.4, 1.5, 1.8, 2.0];
    keys.extend([5000u16, 10000, 30000, 50000, 60000].map(|q| 2.0 * (f32::from(q) / 65535.0)));
    for frames in [8u32, 60, 100, 1000] {
        keys.extend((0..=frames).step_by((frames as usize / 20).max(1)).map(|f| 2.0 * f as f32 / frames as f32));
    }
    let steps = if cfg!(miri) { 12 } else { 3000 };
    run::<f32>(&clips, &keys, steps, 0x5EED_0001);
    run::<Q16>(&clips, &keys, steps / 3, 0x5EED_0002);
}
