//! The structure-of-arrays sampling cache: the decoded key intervals of four joints' tracks,
//! held in lanes, so that sampling between keys evaluates four joints per operation.

use super::{Clip, ClipTime, RotationInterpolation, TrackCache, TrackView};
use crate::format::reader::{byte, le_u16};
use crate::format::{TARGET_ROTATION, TARGET_SCALE, TARGET_TRANSLATION, TRACK_ENTRY_LEN};
use crate::math::{Quat, SoaQuat, SoaTransform, SoaVec3};
use crate::real::Lanes;
use crate::real::Real;

use super::CacheKind;

/// Lane marker of a joint property without a track (it holds the rest pose).
const NO_TRACK: u16 = u16::MAX;

type V<R> = <R as Real>::Lanes;

/// The lane indices whose bits are set in `mask`, lowest first.
#[inline(always)]
fn lanes_of(mut mask: u32) -> impl Iterator<Item = usize> {
    core::iter::from_fn(move || {
        let l = mask.trailing_zeros() as usize;
        mask &= mask.wrapping_sub(1);
        (l < 32).then_some(l)
    })
}

/// The key interval of each lane: a lane is valid while `t0 ≤ t < t1`; `inv_dt` is
/// `1 / (t1 − t0)`, or 0 where the lane holds one value.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
struct Span4<R> {
    t0: [R; 4],
    t1: [R; 4],
    inv_dt: [R; 4],
}

impl<R: Real> Span4<R> {
    /// Lanes that must be filled before use (no time is in `[MAX, MIN)`).
    const STALE: Self = Span4 { t0: [R::MAX; 4], t1: [R::MIN; 4], inv_dt: [R::ZERO; 4] };

    /// Lanes whose interval does not contain `t`.
    #[inline(always)]
    fn misses(&self, t: V<R>) -> u32 {
        !(t.mask_ge(V::<R>::load(&self.t0)) & t.mask_lt(V::<R>::load(&self.t1))) & 0xF
    }

    /// The interpolation parameter of each lane, in [0, 1].
    #[inline(always)]
    fn param(&self, t: V<R>) -> V<R> {
        // A NaN product (only possible in a lane that holds one value, whose parameter
        // multiplies 0) reads as 0.
        ((t - V::<R>::load(&self.t0)) * V::<R>::load(&self.inv_dt)).clamp01()
    }

    #[inline(always)]
    fn set(&mut self, l: usize, t0: R, t1: R, inv_dt: R) {
        self.t0[l] = t0;
        self.t1[l] = t1;
        self.inv_dt[l] = inv_dt;
    }
}

/// A per-instance sampling cache for one SoA element of a pose (four joints): for each of the
/// joints' translation, rotation and scale, the current key interval, its two keys and its
/// interpolation constants, stored lane by lane. Give a
/// [`SamplingJob`](crate::job::SamplingJob) one entry per SoA element of the pose (the rest
/// pose's length): while playback stays between keys, a call evaluates four joints per
/// operation and writes whole SoA elements; a lane that crosses a key is refilled from the clip.
///
/// About 580 bytes per entry for `f32` (one entry covers four joints, tracked or not).
///
/// An entry remembers which clip (by the address and length of its bytes), which rest pose (by
/// its address) and which element filled it; reset entries to [`SoaTrackCache::EMPTY`] when the
/// storage starts serving another clip, since new bytes can reuse the address of freed ones.
///
/// Results are a function of the clip, the rest pose and the time alone: an entry gives the
/// same bits whatever it sampled before (forward playback, jumps, other clips), as an
/// [`EMPTY`](Self::EMPTY) one would, so entries may be reused across characters and poses.
/// Each rotation interval holds its first key as stored and its second in the first's
/// hemisphere, whether filled from the clip or moved on from the previous interval. Results
/// equal those of the per-track [`TrackCache`] within rounding (see
/// `tests/tests/sampling_states.rs`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct SoaTrackCache<R> {
    translation_span: Span4<R>,
    translation: SoaVec3<R>,
    /// The interval's second key per lane (the first where the lane holds one value): kept,
    /// rather than the difference of the two, so that crossing into the next interval decodes
    /// one key.
    translation1: SoaVec3<R>,
    scale_span: Span4<R>,
    scale: SoaVec3<R>,
    scale1: SoaVec3<R>,
    rotation_span: Span4<R>,
    rotation0: SoaQuat<R>,
    /// The second key, in the first key's hemisphere (negated in `flipped` lanes).
    rotation1: SoaQuat<R>,
    /// Corrected-nlerp warp coefficients, or θ and 1/sin θ in `exact_slerp` lanes.
    warp: [[R; 4]; 3],
    /// 1 in `exact_slerp` lanes, 0 elsewhere.
    slerp_key: [R; 4],
    tag: u32,
    /// Track index per target (translation, rotation, scale) and lane, or `NO_TRACK`.
    track: [[u16; 4]; 3],
    /// Key hint per target and lane.
    key: [[u16; 4]; 3],
    /// Rotation lanes interpolating between two keys.
    interpolating: u8,
    /// Rotation lanes the clip requires to be slerped exactly.
    exact_slerp: u8,
    /// Rotation lanes whose second key is the stored key negated: moving to the next interval
    /// negates it back, so that the interval's first key is the key as stored, as a fill's is.
    flipped: u8,
    /// Lanes (per target) evaluated in full at every call: cubic splines, whose four control
    /// values per interval are not cached.
    direct: [u8; 3],
}

impl<R: Real> SoaTrackCache<R> {
    /// An empty entry (fills on first use).
    pub const EMPTY: Self = SoaTrackCache {
        translation_span: Span4::STALE,
        translation: SoaVec3::ZERO,
        translation1: SoaVec3::ZERO,
        scale_span: Span4::STALE,
        scale: SoaVec3::ZERO,
        scale1: SoaVec3::ZERO,
        rotation_span: Span4::STALE,
        rotation0: SoaQuat::IDENTITY,
        rotation1: SoaQuat::IDENTITY,
        warp: [[R::ZERO; 4]; 3],
        slerp_key: [R::ZERO; 4],
        tag: 0,
        track: [[NO_TRACK; 4]; 3],
        key: [[0; 4]; 3],
        interpolating: 0,
        exact_slerp: 0,
        flipped: 0,
        direct: [0; 3],
    };

    /// The part of the tags of a pose sampled from the clip of `time` with `rest` that all its
    /// elements share (see [`tag_of`](Self::tag_of)); computed once per sampling.
    #[inline(always)]
    pub(crate) fn tag_base(time: &ClipTime<R>, rest: &[SoaTransform<R>]) -> u32 {
        time.tag ^ (rest.as_ptr() as usize as u32).wrapping_mul(0x85EB_CA6B)
    }

    /// The tag of element `group` of a pose whose [`tag_base`](Self::tag_base) is `base`.
    #[inline(always)]
    pub(crate) fn tag_of(base: u32, group: usize) -> u32 {
        base.wrapping_add((group as u32).wrapping_mul(0x27D4_EB2F)) | 1
    }

    /// Starts serving `clip` for element `group`: finds the tracks of its four joints and marks
    /// every tracked lane for filling; untracked lanes hold the rest pose.
    #[cold]
    fn reset(&mut self, clip: &Clip<'_>, group: usize, tag: u32, rest: &SoaTransform<R>) {
        *self = Self::EMPTY;
        self.tag = tag;
        for i in 0..clip.num_tracks().min(NO_TRACK as usize) {
            let e = clip.dir + i * TRACK_ENTRY_LEN;
            let joint = le_u16(clip.body, e) as usize;
            let target = byte(clip.body, e + 2);
            if joint / 4 == group && target <= TARGET_SCALE {
                self.track[target as usize][joint % 4] = i as u16;
            }
        }
        for l in 0..4 {
            if self.track[TARGET_TRANSLATION as usize][l] == NO_TRACK {
                self.translation_span.set(l, R::MIN, R::MAX, R::ZERO);
                self.translation.set_lane(l, rest.translation.lane(l));
            }
            if self.track[TARGET_SCALE as usize][l] == NO_TRACK {
                self.scale_span.set(l, R::MIN, R::MAX, R::ZERO);
                self.scale.set_lane(l, rest.scale.lane(l));
            }
            if self.track[TARGET_ROTATION as usize][l] == NO_TRACK {
                self.rotation_span.set(l, R::MIN, R::MAX, R::ZERO);
                self.rotation0.set_lane(l, rest.rotation.lane(l));
                self.rotation1.set_lane(l, rest.rotation.lane(l));
            }
        }
    }

    /// Decodes the interval at `t` of lane `l`'s track for `target` into the scalar cache entry
    /// `c`; false for a lane without a track or a cubic spline (which becomes a direct lane).
    #[inline(always)]
    fn fill_lane(
        &mut self,
        clip: &Clip<'_>,
        target: usize,
        l: usize,
        t: R,
        time: &ClipTime<R>,
        c: &mut TrackCache<R>,
    ) -> bool {
        let i = self.track[target][l];
        if i == NO_TRACK {
            return false;
        }
        let tv: TrackView<'_> = clip.track_view(i as usize);
        let mut key = self.key[target][l];
        let filled = tv.fill(t, time, &mut key, c);
        self.key[target][l] = key;
        if !filled {
            self.direct[target] |= 1 << l;
        }
        filled
    }

    /// Refills the `lanes` of translation (`target` 0) or scale (2) for time `t`.
    #[cold]
    fn refill_vectors(
        &mut self,
        clip: &Clip<'_>,
        target: usize,
        lanes: u32,
        t: R,
        time: &ClipTime<R>,
        rest: &SoaTransform<R>,
    ) {
        for l in lanes_of(lanes) {
            if self.advance_vector(clip, target, l, t, time) {
                continue;
            }
            let mut c = TrackCache::EMPTY;
            let filled = self.fill_lane(clip, target, l, t, time, &mut c);
            let (span, value, value1) = self.vectors(target);
            if filled {
                let a = crate::math::Vec3::new(c.v0[0], c.v0[1], c.v0[2]);
                if c.kind == CacheKind::Lerp {
                    span.set(l, c.t0, c.t1, c.inv_dt);
                    value.set_lane(l, a);
                    value1.set_lane(l, crate::math::Vec3::new(c.v1[0], c.v1[1], c.v1[2]));
                } else {
                    span.set(l, c.t0, c.t1, R::ZERO);
                    value.set_lane(l, a);
                    value1.set_lane(l, a);
                }
            } else {
                // A direct lane (overwritten at every call) or a lane without a track.
                span.set(l, R::MIN, R::MAX, R::ZERO);
                let r = if target == 0 { rest.translation.lane(l) } else { rest.scale.lane(l) };
                value.set_lane(l, r);
                value1.set_lane(l, r);
            }
        }
    }

    /// Sets rotation lane `l`: from `a` to `b` (in `a`'s hemisphere; the stored key negated
    /// where `flipped`) over `[t0, t1)` with `inv_dt = 1 / (t1 − t0)`, or held at `a` when
    /// `interpolates` is false (`inv_dt` 0, `b` = `a`). `constants` are the corrected-nlerp
    /// warp, or with `slerp` the interval's slerp constants; a θ of 0 in them marks an interval
    /// short enough for plain nlerp (`Quat::slerp_with`), which is the warp of all zeros.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn set_rotation(
        &mut self,
        l: usize,
        (t0, t1, inv_dt): (R, R, R),
        a: Quat<R>,
        b: Quat<R>,
        constants: [R; 3],
        interpolates: bool,
        slerp: bool,
        flipped: bool,
    ) {
        let bit = 1u8 << l;
        let exact = interpolates && slerp && constants[1] != R::ZERO;
        let warp = if interpolates && (exact || !slerp) { constants } else { [R::ZERO; 3] };
        self.rotation_span.set(l, t0, t1, inv_dt);
        self.rotation0.set_lane(l, a);
        self.rotation1.set_lane(l, b);
        for (w, v) in self.warp.iter_mut().zip(warp) {
            w[l] = v;
        }
        self.slerp_key[l] = if exact { R::ONE } else { R::ZERO };
        self.exact_slerp = if exact { self.exact_slerp | bit } else { self.exact_slerp & !bit };
        self.interpolating = if interpolates { self.interpolating | bit } else { self.interpolating & !bit };
        self.flipped = if flipped { self.flipped | bit } else { self.flipped & !bit };
    }

    /// The interval, value and second value of the vector lanes of `target` (translation 0,
    /// scale 2).
    #[inline(always)]
    fn vectors(&mut self, target: usize) -> (&mut Span4<R>, &mut SoaVec3<R>, &mut SoaVec3<R>) {
        if target == TARGET_TRANSLATION as usize {
            (&mut self.translation_span, &mut self.translation, &mut self.translation1)
        } else {
            (&mut self.scale_span, &mut self.scale, &mut self.scale1)
        }
    }

    /// The key interval after lane `l`'s of `target`, which ends at `t0`, when `t` lies in it:
    /// the track's view, the interval's first key `k` (its second is `k + 1`) and its end time.
    /// None without a track, before `t0`, past the last key or past that interval.
    #[inline(always)]
    fn next_interval<'c>(
        &self,
        clip: &Clip<'c>,
        target: usize,
        l: usize,
        t0: R,
        t: R,
        time: &ClipTime<R>,
    ) -> Option<(TrackView<'c>, usize, R)> {
        let i = self.track[target][l];
        if i == NO_TRACK || t < t0 {
            return None;
        }
        let tv = clip.track_view(i as usize);
        let k = self.key[target][l] as usize + 1;
        if k + 1 >= tv.n {
            return None;
        }
        let t1 = tv.time(k + 1, time);
        if t >= t1 {
            return None;
        }
        Some((tv, k, t1))
    }

    /// Moves interpolating vector lane `l` of `target` (translation 0, scale 2) to the next key
    /// interval when `t` lies in it (forward playback crossing one key): the interval's first
    /// key is the previous interval's second, so only one key is decoded. The same values as a
    /// fill from the track. False, with nothing changed, in every other case (a lane holding one
    /// value has `inv_dt` 0).
    #[inline(always)]
    fn advance_vector(&mut self, clip: &Clip<'_>, target: usize, l: usize, t: R, time: &ClipTime<R>) -> bool {
        let (span, _, _) = self.vectors(target);
        if span.inv_dt[l] == R::ZERO {
            return false;
        }
        let t0 = span.t1[l];
        let Some((tv, k, t1)) = self.next_interval(clip, target, l, t0, t, time) else { return false };
        let b = tv.raw(k + 1);
        let (span, value, value1) = self.vectors(target);
        span.set(l, t0, t1, (t1 - t0).recip());
        value.set_lane(l, value1.lane(l));
        value1.set_lane(l, crate::math::Vec3::new(b[0], b[1], b[2]));
        self.key[target][l] = k as u16;
        true
    }

    /// Moves interpolating rotation lane `l` to the next key interval when `t` lies in it
    /// (forward playback crossing one key): the interval's first key is the previous interval's
    /// second (already decoded; negated back where it was flipped), so only one key is decoded
    /// and the lane holds the bits a fill would. False, with nothing changed, in every other
    /// case.
    #[inline(always)]
    fn advance_rotation(&mut self, clip: &Clip<'_>, l: usize, t: R, time: &ClipTime<R>) -> bool {
        if self.interpolating & (1u8 << l) == 0 {
            return false;
        }
        let t0 = self.rotation_span.t1[l];
        let Some((tv, k, t1)) = self.next_interval(clip, TARGET_ROTATION as usize, l, t0, t, time) else {
            return false;
        };
        let a = self.rotation1.lane(l);
        let a = if self.flipped & (1u8 << l) != 0 { -a } else { a };
        let mut b = Quat::from_array(tv.raw(k + 1));
        let mut d = a.dot(b);
        let flipped = d < R::ZERO;
        if flipped {
            b = -b;
            d = -d;
        }
        let constants = if tv.slerp { crate::math::quat::slerp_constants(d) } else { crate::math::quat::nlerp_warp(d) };
        self.set_rotation(l, (t0, t1, (t1 - t0).recip()), a, b, constants, true, tv.slerp, flipped);
        self.key[TARGET_ROTATION as usize][l] = k as u16;
        true
    }

    /// Refills the rotation `lanes` for time `t`.
    #[cold]
    fn refill_rotations(&mut self, clip: &Clip<'_>, lanes: u32, t: R, time: &ClipTime<R>, rest: &SoaTransform<R>) {
        for l in lanes_of(lanes) {
            if self.advance_rotation(clip, l, t, time) {
                continue;
            }
            let mut c = TrackCache::EMPTY;
            if self.fill_lane(clip, TARGET_ROTATION as usize, l, t, time, &mut c) {
                let interpolates = matches!(c.kind, CacheKind::Rotation | CacheKind::Slerp);
                let a = Quat::from_array(c.v0);
                let (b, inv_dt) = if interpolates { (Quat::from_array(c.v1), c.inv_dt) } else { (a, R::ZERO) };
                let (slerp, flipped) = (c.kind == CacheKind::Slerp, interpolates && c.flipped);
                self.set_rotation(l, (c.t0, c.t1, inv_dt), a, b, c.warp, interpolates, slerp, flipped);
            } else {
                // A direct lane (overwritten at every call) or a lane without a track.
                let r = rest.rotation.lane(l);
                self.set_rotation(l, (R::MIN, R::MAX, R::ZERO), r, r, [R::ZERO; 3], false, false, false);
            }
        }
    }
}

impl<R: Real> Default for SoaTrackCache<R> {
    fn default() -> Self {
        Self::EMPTY
    }
}

/// `sin x` for `0 ≤ x ≤ π/2`, four lanes: the Taylor series to x¹³ (truncation below 7e-10).
#[inline(always)]
fn sin_quadrant<R: Real>(x: V<R>) -> V<R> {
    let c = |v: f32| V::<R>::splat(R::from_f32(v));
    let z = x * x;
    x + x
        * z
        * (c(-1.0 / 6.0)
            + z * (c(1.0 / 120.0)
                + z * (c(-1.0 / 5040.0)
                    + z * (c(1.0 / 362_880.0) + z * (c(-1.0 / 39_916_800.0) + z * c(1.0 / 6_227_020_800.0))))))
}

/// SoA sampling's lane kernels (`clip/soa/sample.rs`) in the build's own kernel set.
pub(crate) mod build {
    /// The kernel set of this copy of the kernels: the build's own.
    const V3: bool = false;
    include!("soa/sample.rs");
}

/// SoA sampling's lane kernels in the x86-64-v3 kernel set, which the sampling job runs through
/// `platform::dispatch` on CPUs with the level (in builds with run-time dispatch only).
#[cfg(sinew_dispatch)]
pub(crate) mod v3 {
    /// The kernel set of this copy of the kernels: x86-64-v3.
    const V3: bool = true;
    include!("soa/sample.rs");
}
