//! Animation clips: per-joint translation, rotation and scale tracks read in place from a
//! validated `.sinew` clip section.
//!
//! Interpolation follows glTF 2.0 (Appendix C): STEP holds a key until the next, LINEAR lerps
//! translations and scales and interpolates rotations on the shortest arc (exact slerp, or the
//! corrected nlerp of [`Quat::nlerp_corrected`]), CUBICSPLINE evaluates the Hermite spline with
//! tangents scaled by the key interval and normalizes rotations. A clip's range is the union of
//! its tracks' key times; a track clamps to its first and last key outside its own keys. Keys
//! are sampled as stored — there is no resampling.
//!
//! A per-instance cursor (one `u16` per track) remembers the last key interval, so forward
//! playback costs O(1) per track and a seek O(log keys). Any cursor value is a valid hint: a
//! stale one only costs a search.

use crate::asset::format::*;
use crate::asset::reader::{is_finite_bits, le_f32, le_u16, ordered_bits, Reader};
use crate::asset::ParseError;
use crate::limits::MAX_JOINTS;
use crate::math::{Quat, Vec3};
use crate::real::Real;

/// Which joint property a track animates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// Translation.
    Translation,
    /// Rotation.
    Rotation,
    /// Scale.
    Scale,
}

/// Interpolation between keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Interpolation {
    /// Hold each key until the next.
    Step,
    /// Linear; rotations on the shortest arc.
    Linear,
    /// glTF cubic Hermite spline.
    CubicSpline,
}

/// How keys are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyFormat {
    /// Lossless `f32` times and values.
    F32,
    /// Quantized times and values (see [`FORMAT_QUANTIZED`]).
    Quantized,
}

/// How LINEAR rotation tracks are interpolated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RotationInterpolation {
    /// Exact spherical interpolation (trigonometry per track).
    Slerp,
    /// Corrected nlerp: within 7e-5 rad of slerp, several times cheaper.
    #[default]
    NlerpCorrected,
}

/// Description of one track.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrackInfo {
    /// Skeleton joint.
    pub joint: u16,
    /// Animated property.
    pub target: Target,
    /// Interpolation.
    pub interpolation: Interpolation,
    /// Key storage.
    pub format: KeyFormat,
    /// Number of keys (at least 1).
    pub key_count: u16,
    /// Bytes of key data.
    pub data_len: usize,
}

/// A validated clip, borrowing its section bytes.
#[derive(Debug, Clone, Copy)]
pub struct Clip<'a> {
    body: &'a [u8],
    name: &'a str,
    start: f32,
    end: f32,
    tracks: usize,
    dir: usize,
}

fn components(target: u8) -> usize {
    if target == TARGET_ROTATION {
        4
    } else {
        3
    }
}

/// Bytes of key data for a track (`None` on overflow).
fn data_len(target: u8, interp: u8, format: u8, keys: usize) -> Option<usize> {
    let c = components(target);
    if format == FORMAT_F32 {
        let per_key = if interp == INTERP_CUBIC { 3 * c } else { c };
        keys.checked_mul(4 + 4 * per_key)
    } else if target == TARGET_ROTATION {
        keys.checked_mul(2 + ROTATION_BYTES)
    } else {
        keys.checked_mul(2 + 6)?.checked_add(24)
    }
}

impl<'a> Clip<'a> {
    fn header(body: &'a [u8]) -> Result<Self, ParseError> {
        let mut r = Reader::new(body);
        let name = r.str()?;
        let start = r.f32()?;
        let end = r.f32()?;
        let tracks = r.u16()? as usize;
        let dir = r.pos();
        r.bytes(tracks * TRACK_ENTRY_LEN)?;
        Ok(Clip { body, name, start, end, tracks, dir })
    }

    pub(crate) fn view(body: &'a [u8]) -> Option<Self> {
        Self::header(body).ok()
    }

    pub(crate) fn parse(body: &'a [u8], sec: u16, joints: usize) -> Result<Self, ParseError> {
        let c = Self::header(body).map_err(|e| {
            if e == ParseError::Truncated {
                e
            } else {
                ParseError::BadName { section: sec }
            }
        })?;
        if !is_finite_bits(c.start.to_bits()) || !is_finite_bits(c.end.to_bits()) {
            return Err(ParseError::NonFinite { section: sec });
        }
        let (lo, hi) = (ordered_bits(c.start.to_bits()), ordered_bits(c.end.to_bits()));
        if lo > hi {
            return Err(ParseError::BadTimeRange { section: sec });
        }
        let mut seen = [0u32; MAX_JOINTS * 3 / 32];
        let mut covered_end = c.dir + c.tracks * TRACK_ENTRY_LEN;
        for i in 0..c.tracks {
            let track = i as u16;
            let bad = ParseError::BadTrack { section: sec, track };
            let e = c.dir + i * TRACK_ENTRY_LEN;
            let joint = le_u16(body, e) as usize;
            let (target, interp, format) = (byte(body, e + 2), byte(body, e + 3), byte(body, e + 4));
            let keys = le_u16(body, e + 6) as usize;
            let off = crate::asset::reader::le_u32(body, e + 8) as usize;
            if joint >= joints {
                return Err(ParseError::JointOutOfRange { section: sec });
            }
            if target > TARGET_SCALE || interp > INTERP_CUBIC || format > FORMAT_QUANTIZED || keys == 0 {
                return Err(bad);
            }
            if format == FORMAT_QUANTIZED && interp == INTERP_CUBIC {
                return Err(bad);
            }
            let slot = joint * 3 + target as usize;
            if seen[slot / 32] & (1 << (slot % 32)) != 0 {
                return Err(ParseError::DuplicateTrack { section: sec, track });
            }
            seen[slot / 32] |= 1 << (slot % 32);
            let len = data_len(target, interp, format, keys).ok_or(bad)?;
            let data = off
                .checked_add(len)
                .and_then(|end| body.get(off..end))
                .ok_or(ParseError::BadSection { section: sec })?;
            covered_end = covered_end.max(off + len);
            if format == FORMAT_F32 {
                let mut prev = i32::MIN;
                for k in 0..keys {
                    let b = crate::asset::reader::le_u32(data, k * 4);
                    if !is_finite_bits(b) {
                        return Err(ParseError::NonFinite { section: sec });
                    }
                    let o = ordered_bits(b);
                    if (k > 0 && o <= prev) || o < lo || o > hi {
                        return Err(ParseError::UnsortedKeys { section: sec, track });
                    }
                    prev = o;
                }
                let values = &data[keys * 4..];
                if !(0..values.len() / 4).all(|k| is_finite_bits(crate::asset::reader::le_u32(values, k * 4))) {
                    return Err(ParseError::NonFinite { section: sec });
                }
            } else {
                for k in 1..keys {
                    if le_u16(data, k * 2) <= le_u16(data, (k - 1) * 2) {
                        return Err(ParseError::UnsortedKeys { section: sec, track });
                    }
                }
                if target != TARGET_ROTATION {
                    let ranges = &data[keys * 2..keys * 2 + 24];
                    if !(0..6).all(|k| is_finite_bits(crate::asset::reader::le_u32(ranges, k * 4))) {
                        return Err(ParseError::NonFinite { section: sec });
                    }
                }
            }
        }
        if covered_end != body.len() {
            return Err(ParseError::BadSection { section: sec });
        }
        Ok(c)
    }

    /// Clip name.
    #[must_use]
    pub fn name(&self) -> &'a str {
        self.name
    }
    /// First key time (seconds).
    #[must_use]
    pub fn start(&self) -> f32 {
        self.start
    }
    /// Last key time (seconds).
    #[must_use]
    pub fn end(&self) -> f32 {
        self.end
    }
    /// Number of tracks.
    #[must_use]
    pub fn num_tracks(&self) -> usize {
        self.tracks
    }
    /// Bytes of the clip section.
    #[must_use]
    pub fn byte_len(&self) -> usize {
        self.body.len()
    }
    /// Track `i`'s description.
    #[must_use]
    pub fn track(&self, i: usize) -> Option<TrackInfo> {
        if i >= self.tracks {
            return None;
        }
        let e = self.dir + i * TRACK_ENTRY_LEN;
        let (t, ip, f) = (byte(self.body, e + 2), byte(self.body, e + 3), byte(self.body, e + 4));
        let keys = le_u16(self.body, e + 6);
        Some(TrackInfo {
            joint: le_u16(self.body, e),
            target: match t {
                TARGET_TRANSLATION => Target::Translation,
                TARGET_ROTATION => Target::Rotation,
                _ => Target::Scale,
            },
            interpolation: match ip {
                INTERP_STEP => Interpolation::Step,
                INTERP_LINEAR => Interpolation::Linear,
                _ => Interpolation::CubicSpline,
            },
            format: if f == FORMAT_F32 { KeyFormat::F32 } else { KeyFormat::Quantized },
            key_count: keys,
            data_len: data_len(t, ip, f, keys as usize).unwrap_or(0),
        })
    }
    /// Total keys over all tracks.
    #[must_use]
    pub fn num_keys(&self) -> usize {
        (0..self.tracks).filter_map(|i| self.track(i)).map(|t| t.key_count as usize).sum()
    }
    /// Largest joint index any track animates, plus one (0 without tracks).
    #[must_use]
    pub fn joint_bound(&self) -> usize {
        (0..self.tracks).map(|i| le_u16(self.body, self.dir + i * TRACK_ENTRY_LEN) as usize + 1).max().unwrap_or(0)
    }

    /// Samples track `i` at clip time `t` (already clamped to the clip range). Returns xyz (and
    /// w for rotations) in `[R; 4]`, with the track's joint and target. `cursor` is the track's
    /// key-interval hint, updated.
    #[inline]
    pub(crate) fn sample_track<R: Real>(
        &self,
        i: usize,
        t: R,
        time: &ClipTime<R>,
        cursor: &mut u16,
        rot: RotationInterpolation,
    ) -> (usize, u8, [R; 4]) {
        let e = self.dir + i * TRACK_ENTRY_LEN;
        let b = self.body;
        let joint = le_u16(b, e) as usize;
        let (target, interp, format) = (byte(b, e + 2), byte(b, e + 3), byte(b, e + 4));
        let n = le_u16(b, e + 6) as usize;
        let off = crate::asset::reader::le_u32(b, e + 8) as usize;
        let data = b.get(off..).unwrap_or(&[]);
        let c = components(target);
        let out = if format == FORMAT_F32 {
            let key_time = |k: usize| R::from_f32(le_f32(data, k * 4));
            let vals = n * 4;
            let stride = if interp == INTERP_CUBIC { 3 * c } else { c };
            let mid = if interp == INTERP_CUBIC { c } else { 0 };
            let read = |k: usize, part: usize| -> [R; 4] {
                let at = vals + (k * stride + part) * 4;
                core::array::from_fn(|j| if j < c { R::from_f32(le_f32(data, at + j * 4)) } else { R::ZERO })
            };
            let value = |k: usize| read(k, mid);
            match interval(n, t, cursor, key_time) {
                Span::At(k) => value(k),
                Span::Between(k, t0, t1) => {
                    let td = t1 - t0;
                    let s = ((t - t0) / td).clamp(R::ZERO, R::ONE);
                    match interp {
                        INTERP_STEP => value(k),
                        INTERP_LINEAR => lerp_value(target, value(k), value(k + 1), s, rot),
                        _ => {
                            let p0 = value(k);
                            let m0 = read(k, 2 * c);
                            let p1 = value(k + 1);
                            let m1 = read(k + 1, 0);
                            hermite(target, p0, m0, p1, m1, s, td)
                        }
                    }
                }
            }
        } else {
            sample_quantized(data, n, target, interp, t, time, cursor, rot)
        };
        (joint, target, out)
    }
}

/// Samples a quantized track (STEP or LINEAR).
#[allow(clippy::too_many_arguments)]
#[inline]
fn sample_quantized<R: Real>(
    data: &[u8],
    n: usize,
    target: u8,
    interp: u8,
    t: R,
    time: &ClipTime<R>,
    cursor: &mut u16,
    rot: RotationInterpolation,
) -> [R; 4] {
    let vals = n * 2;
    if target == TARGET_ROTATION {
        let raw = |k: usize| -> Quat<R> {
            let at = vals + k * ROTATION_BYTES;
            let p = match data.get(at..at + ROTATION_BYTES) {
                Some(b) => [b[0], b[1], b[2], b[3], b[4], b[5]],
                None => [0; ROTATION_BYTES],
            };
            unpack_rotation_raw::<R>(p)
        };
        if n == 1 {
            return raw(0).normalize().to_array();
        }
        let key_time = |k: usize| time.start + time.scale * R::from_fixed_bits(le_u16(data, k * 2) as i32, 16);
        return match interval(n, t, cursor, key_time) {
            Span::At(k) => raw(k).normalize().to_array(),
            Span::Between(k, t0, t1) => {
                if interp == INTERP_STEP {
                    raw(k).normalize().to_array()
                } else {
                    let s = ((t - t0) / (t1 - t0)).clamp(R::ZERO, R::ONE);
                    let (a, b) = (raw(k), raw(k + 1));
                    match rot {
                        RotationInterpolation::Slerp => a.slerp(b, s),
                        RotationInterpolation::NlerpCorrected => a.nlerp_corrected(b, s),
                    }
                    .normalize()
                    .to_array()
                }
            }
        };
    }
    // Translation / scale: `min + scale · q / 65536`, interpolated in the quantized domain
    // (linear, so the same as interpolating decoded values).
    let min = [0, 1, 2].map(|j| R::from_f32(le_f32(data, vals + j * 4)));
    let scale = [0, 1, 2].map(|j| R::from_f32(le_f32(data, vals + 12 + j * 4)));
    let q = |k: usize, j: usize| R::from_fixed_bits(le_u16(data, vals + 24 + k * 6 + j * 2) as i32, 16);
    let decode = |k: usize| -> [R; 4] {
        [min[0] + scale[0] * q(k, 0), min[1] + scale[1] * q(k, 1), min[2] + scale[2] * q(k, 2), R::ZERO]
    };
    if n == 1 {
        return decode(0);
    }
    let key_time = |k: usize| time.start + time.scale * R::from_fixed_bits(le_u16(data, k * 2) as i32, 16);
    match interval(n, t, cursor, key_time) {
        Span::At(k) => decode(k),
        Span::Between(k, t0, t1) => {
            if interp == INTERP_STEP {
                decode(k)
            } else {
                let s = ((t - t0) / (t1 - t0)).clamp(R::ZERO, R::ONE);
                let v = |j: usize| {
                    let (a, b) = (q(k, j), q(k + 1, j));
                    min[j] + scale[j] * (a + (b - a) * s)
                };
                [v(0), v(1), v(2), R::ZERO]
            }
        }
    }
}

#[inline(always)]
fn byte(d: &[u8], at: usize) -> u8 {
    d.get(at).copied().unwrap_or(0)
}

/// Per-sample constants for quantized times.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClipTime<R> {
    /// Clip start.
    pub start: R,
    /// `(end − start) · 65536 / 65535`: multiplies `q / 65536` into seconds.
    pub scale: R,
}

impl<R: Real> ClipTime<R> {
    pub(crate) fn new(clip: &Clip<'_>) -> Self {
        let start = R::from_f32(clip.start);
        let end = R::from_f32(clip.end);
        ClipTime { start, scale: (end - start) * R::ratio(65536, 65535) }
    }
}

enum Span<R> {
    /// Exactly key `k` (before the first key, after the last, or a single key).
    At(usize),
    /// Between keys `k` and `k + 1`, at times `t0` and `t1`.
    Between(usize, R, R),
}

/// Finds the key interval containing `t`, starting from the cursor hint.
#[inline]
fn interval<R: Real>(n: usize, t: R, cursor: &mut u16, time: impl Fn(usize) -> R) -> Span<R> {
    if n <= 1 {
        return Span::At(0);
    }
    let last = n - 2;
    let mut k = (*cursor as usize).min(last);
    let tk = time(k);
    if t >= tk {
        let mut steps = 0;
        while k < last && t >= time(k + 1) {
            k += 1;
            steps += 1;
            if steps == 4 {
                k = search(k, last, t, &time);
                break;
            }
        }
    } else {
        k = search(0, k, t, &time);
    }
    *cursor = k as u16;
    let (t0, t1) = (time(k), time(k + 1));
    if t <= t0 && k == 0 {
        return Span::At(0);
    }
    if t >= t1 {
        return Span::At(k + 1);
    }
    Span::Between(k, t0, t1)
}

/// Largest `i` in `[lo, hi]` with `time(i) <= t` (or `lo`).
#[inline]
fn search<R: Real>(mut lo: usize, mut hi: usize, t: R, time: &impl Fn(usize) -> R) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if time(mid) <= t {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

#[inline]
fn lerp_value<R: Real>(target: u8, a: [R; 4], b: [R; 4], s: R, rot: RotationInterpolation) -> [R; 4] {
    if target == TARGET_ROTATION {
        let (qa, qb) = (Quat::from_array(a), Quat::from_array(b));
        match rot {
            RotationInterpolation::Slerp => qa.slerp(qb, s),
            RotationInterpolation::NlerpCorrected => qa.nlerp_corrected(qb, s),
        }
        .to_array()
    } else {
        let v = Vec3::new(a[0], a[1], a[2]).lerp(Vec3::new(b[0], b[1], b[2]), s);
        [v.x, v.y, v.z, R::ZERO]
    }
}

/// glTF cubic Hermite: `p(s) = (2s³−3s²+1)p0 + (s³−2s²+s)·td·m0 + (−2s³+3s²)p1 + (s³−s²)·td·m1`.
#[inline]
fn hermite<R: Real>(target: u8, p0: [R; 4], m0: [R; 4], p1: [R; 4], m1: [R; 4], s: R, td: R) -> [R; 4] {
    let s2 = s * s;
    let s3 = s2 * s;
    let two = R::TWO;
    let three = R::from_i32(3);
    let h00 = two * s3 - three * s2 + R::ONE;
    let h10 = (s3 - two * s2 + s) * td;
    let h01 = three * s2 - two * s3;
    let h11 = (s3 - s2) * td;
    let v: [R; 4] = core::array::from_fn(|j| h00 * p0[j] + h10 * m0[j] + h01 * p1[j] + h11 * m1[j]);
    if target == TARGET_ROTATION {
        Quat::from_array(v).normalize().to_array()
    } else {
        v
    }
}
