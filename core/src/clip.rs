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
//!
//! Here: [`Clip`] and its track directory, the decoding of one track (`TrackView`: key times
//! and values in any key format, the interval search, interpolation) and the per-track
//! [`TrackCache`]; the per-SoA-element [`SoaTrackCache`] is in `clip/soa.rs`. The byte layout
//! is [`crate::format`]'s; sections are validated by [`crate::asset`] before a clip is read.

use crate::format::packed::Packed;
use crate::format::reader::{byte, le_f32, le_u16, le_u32, Reader};
use crate::format::*;
use crate::math::{Quat, Vec3};
use crate::platform::HOST_KERNELS;
use crate::real::Real;

pub(crate) mod soa;
#[cfg(test)]
pub(crate) mod tests;

pub use soa::SoaTrackCache;

/// The key formats this build decodes (cargo features `clip-f32`, `clip-quantized`,
/// `clip-packed`).
const F32: bool = cfg!(feature = "clip-f32");
const QUANTIZED: bool = cfg!(feature = "clip-quantized");
const PACKED: bool = cfg!(feature = "clip-packed");

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
    /// Bit-packed keys at per-track widths (see [`FORMAT_PACKED`]).
    Packed,
}

/// How LINEAR rotation tracks are interpolated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RotationInterpolation {
    /// Exact spherical interpolation (trigonometry per track).
    Slerp,
    /// Corrected nlerp: within 7e-5 rad of slerp, with no trigonometry.
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
    /// True when the track must be slerped exactly (see [`TRACK_FLAG_SLERP`]).
    pub slerp: bool,
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
    joint_bound: usize,
}

impl<'a> Clip<'a> {
    /// Reads the header of a clip section that [`Asset::parse`](crate::asset::Asset::parse)
    /// validated (the section's validation is in `asset/clip.rs`); `None` when it is unreadable.
    pub(crate) fn view(body: &'a [u8]) -> Option<Self> {
        let mut r = Reader::new(body);
        let name = r.str().ok()?;
        let start = r.f32().ok()?;
        let end = r.f32().ok()?;
        let tracks = r.u16().ok()? as usize;
        let dir = r.pos();
        r.bytes(tracks * TRACK_ENTRY_LEN).ok()?;
        let joint_bound = (0..tracks).map(|i| le_u16(body, dir + i * TRACK_ENTRY_LEN) as usize + 1).max().unwrap_or(0);
        Some(Clip { body, name, start, end, tracks, dir, joint_bound })
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
            format: match f {
                FORMAT_F32 => KeyFormat::F32,
                FORMAT_QUANTIZED => KeyFormat::Quantized,
                _ => KeyFormat::Packed,
            },
            key_count: keys,
            slerp: byte(self.body, e + 5) & TRACK_FLAG_SLERP != 0,
            data_len: if f == FORMAT_PACKED {
                let off = le_u32(self.body, e + 8) as usize;
                Packed::check(self.body.get(off..).unwrap_or(&[]), t, keys as usize).unwrap_or(0)
            } else {
                track_data_len(t, ip, f, keys as usize).unwrap_or(0)
            },
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
        self.joint_bound
    }

    /// The decoding view of track `i`. Host kernels copy the whole entry with one bounds check
    /// (a validated clip has every entry); narrow kernels read it field by field (smaller code
    /// on microcontrollers).
    #[inline(always)]
    fn track_view(&self, i: usize) -> TrackView<'a> {
        let e = self.dir + i * TRACK_ENTRY_LEN;
        let b = self.body;
        if HOST_KERNELS {
            let d: [u8; TRACK_ENTRY_LEN] =
                b.get(e..e + TRACK_ENTRY_LEN).and_then(|s| s.try_into().ok()).unwrap_or([0; TRACK_ENTRY_LEN]);
            let off = u32::from_le_bytes([d[8], d[9], d[10], d[11]]) as usize;
            TrackView::with_header(
                u16::from_le_bytes([d[0], d[1]]) as usize,
                [d[2], d[3], d[4]],
                d[5] & TRACK_FLAG_SLERP != 0,
                u16::from_le_bytes([d[6], d[7]]) as usize,
                b.get(off..).unwrap_or(&[]),
            )
        } else {
            let off = le_u32(b, e + 8) as usize;
            TrackView::with_header(
                le_u16(b, e) as usize,
                [byte(b, e + 2), byte(b, e + 3), byte(b, e + 4)],
                byte(b, e + 5) & TRACK_FLAG_SLERP != 0,
                le_u16(b, e + 6) as usize,
                b.get(off..).unwrap_or(&[]),
            )
        }
    }

    /// Samples track `i` at clip time `t` (already clamped to the clip range) with a key-index
    /// cursor. Returns the joint, the target and xyz (and w for rotations).
    #[inline]
    pub(crate) fn sample_track<R: Real>(
        &self,
        i: usize,
        t: R,
        time: &ClipTime<R>,
        cursor: &mut u16,
        rot: RotationInterpolation,
    ) -> (usize, u8, [R; 4]) {
        let tv = self.track_view(i);
        (tv.joint, tv.target, tv.evaluate(t, time, cursor, rot))
    }

    /// Samples track `i` through a per-track cache: while `t` stays in the cached key interval
    /// only the interpolation runs; otherwise the interval is found (from the cached key) and
    /// decoded into the cache.
    #[inline]
    pub(crate) fn sample_track_cached<R: Real>(
        &self,
        i: usize,
        t: R,
        time: &ClipTime<R>,
        cache: &mut TrackCache<R>,
        rot: RotationInterpolation,
    ) -> (usize, u8, [R; 4]) {
        // The tag names the clip (by the address and length of its bytes) and the track, so a
        // hit needs no access to the track directory.
        let tag = time.tag.wrapping_add(i as u32) | 1;
        if cache.tag == tag && t >= cache.t0 && t < cache.t1 {
            return (cache.joint as usize, cache.target, cache.eval(t, rot));
        }
        let tv = self.track_view(i);
        let mut key = if cache.tag == tag { cache.key } else { 0 };
        if !tv.fill(t, time, &mut key, cache) {
            // Cubic splines are evaluated directly (their four control values do not fit).
            cache.tag = 0;
            let v = tv.evaluate(t, time, &mut key, rot);
            cache.key = key;
            return (tv.joint, tv.target, v);
        }
        cache.tag = tag;
        cache.key = key;
        cache.joint = tv.joint as u16;
        cache.target = tv.target;
        (tv.joint, tv.target, cache.eval(t, rot))
    }
}

/// What a [`TrackCache`] entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CacheKind {
    /// `v0` for the whole interval.
    Hold,
    /// Linear interpolation of a vector.
    Lerp,
    /// Shortest-arc interpolation of a rotation (`v1` already sign-aligned with `v0`).
    Rotation,
    /// A rotation the clip requires to be slerped exactly.
    Slerp,
}

/// A per-instance, per-track sampling cache: the current key interval, its two decoded keys and
/// its interpolation constants. Give a [`SamplingJob`](crate::job::SamplingJob) one entry per
/// clip track: forward playback then decodes keys only when it crosses one.
///
/// An entry remembers which clip (by the address and length of its bytes) and track filled it;
/// reset entries to [`TrackCache::EMPTY`] when the storage starts serving another clip, since
/// new bytes can reuse the address of freed ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackCache<R> {
    tag: u32,
    key: u16,
    joint: u16,
    target: u8,
    kind: CacheKind,
    /// The second key `v1` of a rotation interval is the stored key negated (moved into the
    /// first key's hemisphere).
    flipped: bool,
    t0: R,
    t1: R,
    inv_dt: R,
    v0: [R; 4],
    v1: [R; 4],
    warp: [R; 3],
}

impl<R: Real> TrackCache<R> {
    /// An empty entry (fills on first use).
    pub const EMPTY: Self = TrackCache {
        tag: 0,
        key: 0,
        joint: 0,
        target: 0,
        kind: CacheKind::Hold,
        flipped: false,
        t0: R::ZERO,
        t1: R::ZERO,
        inv_dt: R::ZERO,
        v0: [R::ZERO; 4],
        v1: [R::ZERO; 4],
        warp: [R::ZERO; 3],
    };

    #[inline(always)]
    fn eval(&self, t: R, rot: RotationInterpolation) -> [R; 4] {
        match self.kind {
            CacheKind::Hold => self.v0,
            CacheKind::Lerp => {
                let s = ((t - self.t0) * self.inv_dt).clamp(R::ZERO, R::ONE);
                let (a, b) = (&self.v0, &self.v1);
                [a[0] + (b[0] - a[0]) * s, a[1] + (b[1] - a[1]) * s, a[2] + (b[2] - a[2]) * s, R::ZERO]
            }
            CacheKind::Rotation => {
                let s = ((t - self.t0) * self.inv_dt).clamp(R::ZERO, R::ONE);
                let (a, b) = (Quat::from_array(self.v0), Quat::from_array(self.v1));
                match rot {
                    RotationInterpolation::NlerpCorrected => {
                        (a + (b - a) * crate::math::quat::warp_t(s, &self.warp)).normalize_near_unit().to_array()
                    }
                    RotationInterpolation::Slerp => a.slerp(b, s).normalize().to_array(),
                }
            }
            CacheKind::Slerp => {
                let s = ((t - self.t0) * self.inv_dt).clamp(R::ZERO, R::ONE);
                let (a, b) = (Quat::from_array(self.v0), Quat::from_array(self.v1));
                a.slerp_with(b, s, &self.warp).normalize().to_array()
            }
        }
    }
}

impl<R: Real> Default for TrackCache<R> {
    fn default() -> Self {
        Self::EMPTY
    }
}

/// A track of key format `format` is decoded as packed: the format is packed, or packed is the
/// only format of the build besides f32 (formats left out never reach the decoders: the parser
/// refuses them, and their branches compile away).
#[inline(always)]
fn packed_format(format: u8) -> bool {
    PACKED && !(F32 && format == FORMAT_F32) && (format == FORMAT_PACKED || !QUANTIZED)
}

/// Decoding access to one track's keys.
#[derive(Debug, Clone, Copy)]
struct TrackView<'a> {
    joint: usize,
    target: u8,
    interp: u8,
    format: u8,
    slerp: bool,
    n: usize,
    data: &'a [u8],
    /// The header of a packed track, read once for the view's key and time reads (unused for
    /// the other formats).
    packed: Packed,
}

impl<'a> TrackView<'a> {
    /// The view of a track entry's fields (`[target, interp, format]` in `tif`), with a packed
    /// track's header read. Off the hosts one function for all the views made, as
    /// [`raw`](Self::raw) and [`time`](Self::time) are.
    #[cfg_attr(sinew_host_kernels, inline(always))]
    #[cfg_attr(not(sinew_host_kernels), inline(never))]
    fn with_header(joint: usize, tif: [u8; 3], slerp: bool, n: usize, data: &'a [u8]) -> Self {
        let [target, interp, format] = tif;
        let packed = if packed_format(format) { Packed::read(data, target) } else { Packed::EMPTY };
        TrackView { joint, target, interp, format, slerp, n, data, packed }
    }
    #[inline(always)]
    fn components(&self) -> usize {
        track_components(self.target)
    }
    /// Time of key `k`. Inlined into each caller on hosts; elsewhere (microcontrollers,
    /// WebAssembly) one function for the sampler's few call sites, like [`raw`](Self::raw): each
    /// copy holds every decoder the build has.
    #[cfg_attr(sinew_host_kernels, inline(always))]
    #[cfg_attr(not(sinew_host_kernels), inline(never))]
    fn time<R: Real>(&self, k: usize, time: &ClipTime<R>) -> R {
        // Formats left out of the build never reach here (the parser refuses them): their
        // branches compile away.
        if F32 && self.format == FORMAT_F32 {
            R::from_f32(le_f32(self.data, k * 4))
        } else if packed_format(self.format) {
            let (n, d) = self.packed.time_ratio(self.data, k);
            time.start + time.duration * R::ratio(n, d)
        } else if QUANTIZED {
            time.start + time.scale * R::from_fixed_bits(le_u16(self.data, k * 2) as i32, 16)
        } else {
            time.start
        }
    }
    /// Part `part` (component offset) of key `k` of an f32 track.
    #[inline(always)]
    fn read_f32<R: Real>(&self, k: usize, part: usize) -> [R; 4] {
        let c = self.components();
        let stride = if self.interp == INTERP_CUBIC { 3 * c } else { c };
        let at = self.n * 4 + (k * stride + part) * 4;
        let f = |j: usize| R::from_f32(le_f32(self.data, at + 4 * j));
        [f(0), f(1), f(2), if c == 4 { f(3) } else { R::ZERO }]
    }
    /// Value of key `k` as stored (quantized rotations not renormalized).
    #[cfg_attr(sinew_host_kernels, inline(always))]
    #[cfg_attr(not(sinew_host_kernels), inline(never))]
    fn raw<R: Real>(&self, k: usize) -> [R; 4] {
        if F32 && self.format == FORMAT_F32 {
            let mid = if self.interp == INTERP_CUBIC { self.components() } else { 0 };
            return self.read_f32(k, mid);
        }
        if packed_format(self.format) {
            return self.packed.value(self.data, self.target, k);
        }
        if !QUANTIZED {
            return [R::ZERO; 4];
        }
        let vals = self.n * 2;
        if self.target == TARGET_ROTATION {
            let at = vals + k * ROTATION_BYTES;
            let p = match self.data.get(at..at + ROTATION_BYTES) {
                Some(b) => [b[0], b[1], b[2], b[3], b[4], b[5]],
                None => [0; ROTATION_BYTES],
            };
            return unpack_rotation_raw::<R>(p).to_array();
        }
        let d = self.data;
        let v = |j: usize| {
            let min = R::from_f32(le_f32(d, vals + j * 4));
            let scale = R::from_f32(le_f32(d, vals + 12 + j * 4));
            min + scale * R::from_fixed_bits(le_u16(d, vals + 24 + k * 6 + j * 2) as i32, 16)
        };
        [v(0), v(1), v(2), R::ZERO]
    }
    /// A key value ready to output (rotations normalized).
    #[inline(always)]
    fn finish<R: Real>(&self, v: [R; 4]) -> [R; 4] {
        if self.target == TARGET_ROTATION {
            Quat::from_array(v).normalize().to_array()
        } else {
            v
        }
    }
    /// The value at `t` (already clamped to the clip range), found from the key hint `key`
    /// (updated) and decoded from the keys: no cache involved.
    #[inline]
    fn evaluate<R: Real>(&self, t: R, time: &ClipTime<R>, key: &mut u16, rot: RotationInterpolation) -> [R; 4] {
        match interval(self.n, t, key, |k| self.time(k, time)) {
            Span::At(k) => self.finish(self.raw(k)),
            Span::Between(k, t0, t1) => self.between(k, t, t0, t1, rot),
        }
    }
    /// The value between keys `k` and `k + 1` at `t`.
    #[inline]
    fn between<R: Real>(&self, k: usize, t: R, t0: R, t1: R, rot: RotationInterpolation) -> [R; 4] {
        let rot = if self.slerp { RotationInterpolation::Slerp } else { rot };
        let td = t1 - t0;
        let s = ((t - t0) / td).clamp(R::ZERO, R::ONE);
        match self.interp {
            INTERP_STEP => self.finish(self.raw(k)),
            INTERP_LINEAR => lerp_value(self.target, self.raw(k), self.raw(k + 1), s, rot),
            // Cubic splines are stored in f32 only.
            _ if !F32 => self.finish(self.raw(k)),
            _ => {
                let c = self.components();
                hermite(
                    self.target,
                    self.raw(k),
                    self.read_f32(k, 2 * c),
                    self.raw(k + 1),
                    self.read_f32(k + 1, 0),
                    s,
                    td,
                )
            }
        }
    }
    /// Fills `cache` for time `t`; false for cubic splines, which are not cached.
    ///
    /// What it fills is a function of the track and `t` alone (the key hint only shortens the
    /// search), and a cache that holds an interval gives at each time in it what a fill at that
    /// time would: a time on the first key is filled as the start of the first interval (which
    /// contains it) rather than as the key held, and an interval's first key is the key as
    /// stored, its second put in the first's hemisphere.
    #[inline]
    fn fill<R: Real>(&self, t: R, time: &ClipTime<R>, key: &mut u16, cache: &mut TrackCache<R>) -> bool {
        if self.n <= 1 {
            cache.kind = CacheKind::Hold;
            cache.t0 = -R::MAX;
            cache.t1 = R::MAX;
            cache.v0 = self.finish(self.raw(0));
            return true;
        }
        if F32 && self.interp == INTERP_CUBIC {
            return false;
        }
        cache.flipped = false;
        match interval_within(self.n, t, key, |k| self.time(k, time)) {
            Span::At(k) => {
                cache.kind = CacheKind::Hold;
                if k == 0 {
                    cache.t0 = -R::MAX;
                    cache.t1 = self.time(0, time);
                } else {
                    cache.t0 = self.time(k, time);
                    cache.t1 = R::MAX;
                }
                cache.v0 = self.finish(self.raw(k));
            }
            Span::Between(k, t0, t1) => {
                cache.t0 = t0;
                cache.t1 = t1;
                if self.interp == INTERP_STEP {
                    cache.kind = CacheKind::Hold;
                    cache.v0 = self.finish(self.raw(k));
                } else {
                    cache.inv_dt = (t1 - t0).recip();
                    cache.v0 = self.raw(k);
                    let mut b = self.raw(k + 1);
                    if self.target == TARGET_ROTATION {
                        let (qa, qb) = (Quat::from_array(cache.v0), Quat::from_array(b));
                        let mut d = qa.dot(qb);
                        if d < R::ZERO {
                            b = (-qb).to_array();
                            d = -d;
                            cache.flipped = true;
                        }
                        if self.slerp {
                            // The interval's angle and 1/sin of it, once per interval.
                            cache.kind = CacheKind::Slerp;
                            cache.warp = crate::math::quat::slerp_constants(d);
                        } else {
                            cache.kind = CacheKind::Rotation;
                            cache.warp = crate::math::quat::nlerp_warp(d);
                        }
                    } else {
                        cache.kind = CacheKind::Lerp;
                    }
                    cache.v1 = b;
                }
            }
        }
        true
    }
}

/// Per-sample constants for quantized times (an implementation detail of sampling).
#[derive(Debug, Clone, Copy)]
pub struct ClipTime<R> {
    /// Clip start.
    pub(crate) start: R,
    /// `(end − start) · 65536 / 65535`: multiplies `q / 65536` into seconds.
    pub(crate) scale: R,
    /// `end − start`.
    pub(crate) duration: R,
    /// The clip's part of a [`TrackCache`] tag (a hash of the address and length of its bytes),
    /// computed once per sampling instead of once per track.
    pub(crate) tag: u32,
}

impl<R: Real> ClipTime<R> {
    pub(crate) fn new(clip: &Clip<'_>) -> Self {
        let start = R::from_f32(clip.start);
        let end = R::from_f32(clip.end);
        let tag =
            ((clip.body.as_ptr() as usize as u32) ^ (clip.body.len() as u32).rotate_left(13)).wrapping_mul(0x9E37_79B1);
        ClipTime { start, scale: (end - start) * R::ratio(65536, 65535), duration: end - start, tag }
    }
}

pub(crate) enum Span<R> {
    /// Exactly key `k` (before the first key, after the last, or a single key).
    At(usize),
    /// Between keys `k` and `k + 1`, at times `t0` and `t1`.
    Between(usize, R, R),
}

/// Finds the key interval containing `t`, starting from the cursor hint.
#[inline]
pub(crate) fn interval<R: Real>(n: usize, t: R, cursor: &mut u16, time: impl Fn(usize) -> R) -> Span<R> {
    interval_from::<R, false>(n, t, cursor, time)
}

/// [`interval`], except that a time on the first key (of two or more) is the start of the first
/// interval, `[t0, t1)`, as every later key's time is of its interval: the spans the caches
/// hold then cover each time once.
#[inline]
fn interval_within<R: Real>(n: usize, t: R, cursor: &mut u16, time: impl Fn(usize) -> R) -> Span<R> {
    interval_from::<R, true>(n, t, cursor, time)
}

/// [`interval`], or with `WITHIN` [`interval_within`].
#[inline(always)]
fn interval_from<R: Real, const WITHIN: bool>(n: usize, t: R, cursor: &mut u16, time: impl Fn(usize) -> R) -> Span<R> {
    if n <= 1 {
        return Span::At(0);
    }
    let last = n - 2;
    let mut k = (*cursor as usize).min(last);
    // The times of keys `k` and `k + 1` once known, so that a walk forward from the cursor
    // (the usual case: playback crossed a key or two) reads each key's time once.
    let mut known = None;
    let tk = time(k);
    if t >= tk {
        let mut steps = 0;
        let mut t0 = tk;
        while k < last {
            let t1 = time(k + 1);
            if t >= t1 {
                k += 1;
            } else {
                // `t < t1`, or a NaN time, which stops the walk too.
                known = Some((t0, t1));
                break;
            }
            t0 = t1;
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
    let (t0, t1) = match known {
        Some(times) => times,
        None => (time(k), time(k + 1)),
    };
    if k == 0 && (t < t0 || (!WITHIN && t <= t0)) {
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
