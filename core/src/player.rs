//! Playback time: a frame-rate-independent clock over a clip's range, with loop modes, speed,
//! pause and seek, and markers that fire exactly once per crossing.
//!
//! # Time representation
//!
//! A [`Player`] keeps its position as an integer: whole *ticks* of 2⁻³² s (`u64`) plus a
//! sub-tick remainder of 2⁻⁶⁴ s (`u32`). Each update converts `dt` and the speed to Q32.32 fixed
//! point (exactly, for any `f32` or [`Q16`](crate::Q16) value from 2⁻⁹ up to 2³¹), multiplies them
//! exactly in `i128` and adds the product exactly; wrapping into the clip range is an integer
//! remainder. So the position after any number of updates is *exactly* `Σ dtᵢ · speedᵢ` wrapped
//! into the range: nothing accumulates, a 24-hour session samples the same times as the first
//! minute, and [`Player::time`] is the exact position rounded once to `R` (correctly rounded for
//! `f32`). Float accumulation, even compensated, would round at every update and wrap; the
//! integer form makes wrapping and marker crossings exact comparisons.
//!
//! # Loop modes
//!
//! - [`LoopMode::Loop`]: the position wraps from the end back to the start (the end and the start
//!   are the same point of the loop).
//! - [`LoopMode::Once`]: the position stops at the end (or at the start when playing backwards);
//!   [`Player::finished`] then reports true.
//! - [`LoopMode::PingPong`]: the position bounces between start and end; one cycle is a forward
//!   then a backward pass (twice the duration).
//!
//! # Markers
//!
//! A [`Marker`] is a clip time and an id, in a slice the caller supplies (sorted by time for
//! events to come out in time order). A marker fires when the playhead *arrives at or passes*
//! it: an update from position `a` to `b` fires the markers in `(a, b]` going forward and in
//! `[b, a)` going backward, in the order they are crossed, once per loop crossed (an update may
//! span several loops). Consecutive updates cover the timeline without gap or overlap, so no
//! crossing is skipped or doubled, whatever the frame rate. Consequences: a marker exactly at the
//! initial position does not fire until the playhead comes back to it; in `Loop` mode markers at
//! the start and at the end both fire on each wrap (end first when going forward); in `PingPong`
//! a marker at a turning point fires once per bounce; in `Once` a marker at the end fires when
//! the end is reached.

use core::fmt;

use crate::clip::Clip;
use crate::real::Real;

/// Ticks (2⁻³² s) per second.
pub const TICKS_PER_SECOND: u64 = 1 << 32;

/// Longest clip duration in ticks (2³⁰ s ≈ 34 years); longer ranges are clamped.
pub const MAX_DURATION_TICKS: u64 = 1 << 62;

/// Most loops (or ping-pong cycles) a single update may cross; a longer step is refused with
/// [`PlayerError::TooManyWraps`] (it bounds the work of reporting markers).
pub const MAX_WRAPS_PER_STEP: u64 = 1 << 20;

/// How playback continues at the ends of the clip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum LoopMode {
    /// Wrap around: the end and the start are the same point.
    #[default]
    Loop,
    /// Stop at the end (or at the start when playing backwards).
    Once,
    /// Bounce between the start and the end.
    PingPong,
}

/// A named point in a clip's time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Marker<R> {
    /// Clip time, seconds, within `[clip.start(), clip.end()]` (markers outside never fire).
    pub time: R,
    /// Caller-defined identifier, reported in the [`Event`].
    pub id: u32,
}

/// A marker crossing reported by [`Player::advance`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Event<R> {
    /// Index of the marker in the slice given to the update.
    pub marker: usize,
    /// The marker's id.
    pub id: u32,
    /// The marker's clip time, seconds.
    pub time: R,
    /// True when clip time was decreasing at the crossing (reverse playback or the backward
    /// pass of a ping-pong).
    pub reverse: bool,
}

/// What an update did besides moving the position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Step {
    /// Loop wraps crossed in [`LoopMode::Loop`]: positive forwards, negative backwards, 0 in the
    /// other modes. Root motion adds one loop's displacement per wrap.
    pub wraps: i64,
    /// [`Player::finished`] after the update: a [`LoopMode::Once`] player standing at the end
    /// it plays towards.
    pub finished: bool,
}

/// Why an update was refused. The player is unchanged and no event was reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlayerError {
    /// `dt` (or the cycle count) is NaN or infinite.
    NonFiniteDelta,
    /// The step would cross more than [`MAX_WRAPS_PER_STEP`] loops.
    TooManyWraps,
}

impl fmt::Display for PlayerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NonFiniteDelta => "the time step is NaN or infinite",
            Self::TooManyWraps => "the time step crosses more loops than MAX_WRAPS_PER_STEP",
        })
    }
}

impl core::error::Error for PlayerError {}

/// A playback clock over one clip's time range. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct Player<R> {
    /// Clip start, Q32.32 seconds.
    start: i64,
    /// Clip duration, ticks.
    duration: u64,
    /// Position in the cycle, ticks: `[0, duration]` (Loop, Once) or `[0, 2·duration)` (PingPong).
    pos: u64,
    /// Sub-tick remainder, 2⁻⁶⁴ s.
    sub: u32,
    loops: i64,
    speed: R,
    /// `speed` in Q32.32.
    speed_fixed: i64,
    mode: LoopMode,
    playing: bool,
}

impl<R: Real> Player<R> {
    /// A player over `clip`'s range, at its start, playing forwards at speed 1 in
    /// [`LoopMode::Loop`].
    #[must_use]
    pub fn new(clip: &Clip<'_>) -> Self {
        Self::from_range(clip.start(), clip.end())
    }

    /// A player over the time range `[start, end]` (seconds; an end before the start, or a NaN,
    /// gives an empty range).
    #[must_use]
    pub fn from_range(start: f32, end: f32) -> Self {
        let s = f32_to_q32(start).unwrap_or(0);
        let e = f32_to_q32(end).unwrap_or(s);
        let duration = (e as i128 - s as i128).clamp(0, MAX_DURATION_TICKS as i128) as u64;
        Player {
            start: s,
            duration,
            pos: 0,
            sub: 0,
            loops: 0,
            speed: R::ONE,
            speed_fixed: 1 << 32,
            mode: LoopMode::Loop,
            playing: true,
        }
    }

    /// Clip start time, seconds.
    #[must_use]
    pub fn start(&self) -> R {
        q32_to_real(self.start)
    }
    /// Clip end time, seconds.
    #[must_use]
    pub fn end(&self) -> R {
        q32_to_real(self.start.saturating_add(self.duration as i64))
    }
    /// Clip duration, seconds.
    #[must_use]
    pub fn duration(&self) -> R {
        q32_to_real(self.duration as i64)
    }
    /// Clip duration in ticks of 2⁻³² s (exact).
    #[must_use]
    pub fn duration_ticks(&self) -> u64 {
        self.duration
    }

    /// The loop mode.
    #[must_use]
    pub fn mode(&self) -> LoopMode {
        self.mode
    }
    /// Sets the loop mode, keeping the clip time (a ping-pong player on its backward pass
    /// continues forwards from the same time).
    pub fn set_mode(&mut self, mode: LoopMode) {
        let phase = self.phase();
        self.mode = mode;
        self.pos = phase;
    }

    /// Playback speed: 1 is real time, negative plays backwards, 0 holds.
    #[must_use]
    pub fn speed(&self) -> R {
        self.speed
    }
    /// Sets the playback speed (NaN reads as 0; infinities saturate at ±2³¹).
    pub fn set_speed(&mut self, speed: R) {
        self.speed = speed;
        self.speed_fixed = to_q32(speed).unwrap_or(0);
    }

    /// Resumes playback.
    pub fn play(&mut self) {
        self.playing = true;
    }
    /// Pauses playback: updates leave the time alone.
    pub fn pause(&mut self) {
        self.playing = false;
    }
    /// True unless paused.
    #[must_use]
    pub fn is_playing(&self) -> bool {
        self.playing
    }

    /// Moves to clip time `time` (seconds, clamped into the range; NaN reads as the start)
    /// without firing markers. A ping-pong player continues on its forward pass.
    pub fn seek(&mut self, time: R) {
        let t = to_q32(time).unwrap_or(self.start);
        self.pos = (t as i128 - self.start as i128).clamp(0, self.duration as i128) as u64;
        self.sub = 0;
    }

    /// Moves to the start (speed ≥ 0) or the end (speed < 0) of the clip, without firing
    /// markers: where a fresh playback begins.
    pub fn rewind(&mut self) {
        self.pos = if self.speed_fixed < 0 && self.mode != LoopMode::PingPong { self.duration } else { 0 };
        self.sub = 0;
    }

    /// Current clip time, seconds, in `[start, end]`.
    #[must_use]
    pub fn time(&self) -> R {
        q32_to_real(self.start.saturating_add(self.phase() as i64))
    }

    /// Current time relative to the start in ticks of 2⁻³² s (exact), in `[0, duration]`.
    #[must_use]
    pub fn phase_ticks(&self) -> u64 {
        self.phase()
    }

    /// Position in the current cycle, in `[0, 1]`: the phase over the duration (Loop, Once), or
    /// over twice the duration (PingPong, whose cycle is a forward and a backward pass).
    #[must_use]
    pub fn normalized(&self) -> R {
        let c = self.cycle();
        if c == 0 {
            return R::ZERO;
        }
        let f = ((self.pos as u128) << 31) / c as u128;
        R::from_fixed_bits(f.min(1 << 31) as i32, 31)
    }

    /// Moves to a position in the cycle (see [`normalized`](Self::normalized)); `r` is clamped
    /// into `[0, 1]` (NaN reads as 0). No marker fires.
    pub fn set_normalized(&mut self, r: R) {
        let q = to_q32(r).unwrap_or(0).clamp(0, 1 << 32) as u128;
        let c = self.cycle();
        let mut pos = ((q * c as u128) >> 32) as u64;
        if self.mode == LoopMode::PingPong && pos >= c {
            pos = 0;
        }
        self.pos = pos.min(c);
        self.sub = 0;
    }

    /// Loops (or ping-pong cycles) completed since creation: positive forwards, negative
    /// backwards (saturating).
    #[must_use]
    pub fn loops(&self) -> i64 {
        self.loops
    }

    /// True for a [`LoopMode::Once`] player standing at the end it plays towards (the end for a
    /// positive speed, the start for a negative one).
    #[must_use]
    pub fn finished(&self) -> bool {
        self.mode == LoopMode::Once
            && ((self.speed_fixed > 0 && self.pos >= self.duration) || (self.speed_fixed < 0 && self.pos == 0))
    }

    /// Advances by `dt` seconds of real time (times the speed), reporting crossed markers in
    /// order to `on_event`. Does nothing while paused. To collect events into a
    /// `heapless::Vec`, pass `|e| { let _ = events.push(e); }` (or count the refused pushes).
    ///
    /// # Errors
    ///
    /// [`PlayerError::NonFiniteDelta`] when `dt` is NaN or infinite,
    /// [`PlayerError::TooManyWraps`] when the step crosses more than [`MAX_WRAPS_PER_STEP`]
    /// loops. On error the player is unchanged and nothing is reported.
    pub fn advance(
        &mut self,
        dt: R,
        markers: &[Marker<R>],
        on_event: impl FnMut(Event<R>),
    ) -> Result<Step, PlayerError> {
        if !dt.is_finite() {
            return Err(PlayerError::NonFiniteDelta);
        }
        let dt = to_q32(dt).ok_or(PlayerError::NonFiniteDelta)?;
        self.step(dt as i128 * self.speed_fixed as i128, markers, on_event)
    }

    /// Advances by `cycles` cycles (a fraction of [`normalized`](Self::normalized)'s range,
    /// signed; the speed is not applied), reporting crossed markers. Used to keep several
    /// players in phase. Does nothing while paused.
    ///
    /// # Errors
    ///
    /// As [`advance`](Self::advance).
    pub fn advance_cycles(
        &mut self,
        cycles: R,
        markers: &[Marker<R>],
        on_event: impl FnMut(Event<R>),
    ) -> Result<Step, PlayerError> {
        if !cycles.is_finite() {
            return Err(PlayerError::NonFiniteDelta);
        }
        let c = to_q32(cycles).ok_or(PlayerError::NonFiniteDelta)?;
        self.step(c as i128 * self.cycle() as i128, markers, on_event)
    }

    /// Checks that [`advance`](Self::advance) with `dt` would succeed, without moving.
    ///
    /// # Errors
    ///
    /// As [`advance`](Self::advance).
    pub fn check_advance(&self, dt: R) -> Result<(), PlayerError> {
        if !dt.is_finite() {
            return Err(PlayerError::NonFiniteDelta);
        }
        let dt = to_q32(dt).ok_or(PlayerError::NonFiniteDelta)?;
        self.check_step(dt as i128 * self.speed_fixed as i128)
    }

    /// Checks that [`advance_cycles`](Self::advance_cycles) with `cycles` would succeed,
    /// without moving.
    ///
    /// # Errors
    ///
    /// As [`advance_cycles`](Self::advance_cycles).
    pub fn check_advance_cycles(&self, cycles: R) -> Result<(), PlayerError> {
        if !cycles.is_finite() {
            return Err(PlayerError::NonFiniteDelta);
        }
        let c = to_q32(cycles).ok_or(PlayerError::NonFiniteDelta)?;
        self.check_step(c as i128 * self.cycle() as i128)
    }

    /// Duration of one cycle in seconds: the clip's duration, twice it in
    /// [`LoopMode::PingPong`].
    #[must_use]
    pub fn cycle_duration(&self) -> R {
        q32_to_real(self.cycle().min(i64::MAX as u64) as i64)
    }

    /// Refuses a step that wraps more than [`MAX_WRAPS_PER_STEP`] cycles.
    fn check_step(&self, delta: i128) -> Result<(), PlayerError> {
        let cycle = (self.cycle() as i128) << 32;
        if !self.playing || self.mode == LoopMode::Once || cycle == 0 {
            return Ok(());
        }
        let u0 = ((self.pos as i128) << 32) | self.sub as i128;
        if (u0 + delta).div_euclid(cycle).unsigned_abs() > MAX_WRAPS_PER_STEP as u128 {
            return Err(PlayerError::TooManyWraps);
        }
        Ok(())
    }

    /// Clip phase in ticks, `[0, duration]`.
    #[inline]
    fn phase(&self) -> u64 {
        if self.mode == LoopMode::PingPong && self.pos > self.duration {
            2 * self.duration - self.pos
        } else {
            self.pos
        }
    }

    /// Cycle length in ticks.
    #[inline]
    fn cycle(&self) -> u64 {
        if self.mode == LoopMode::PingPong {
            2 * self.duration
        } else {
            self.duration
        }
    }

    /// Moves by `delta` (units of 2⁻⁶⁴ s).
    fn step(
        &mut self,
        delta: i128,
        markers: &[Marker<R>],
        mut on_event: impl FnMut(Event<R>),
    ) -> Result<Step, PlayerError> {
        if !self.playing || delta == 0 || self.duration == 0 {
            return Ok(Step { wraps: 0, finished: self.finished() });
        }
        self.check_step(delta)?;
        let u0 = ((self.pos as i128) << 32) | self.sub as i128;
        let dw = (self.duration as i128) << 32;
        let mut emit = |i: usize, reverse: bool| {
            if let Some(m) = markers.get(i) {
                on_event(Event { marker: i, id: m.id, time: m.time, reverse });
            }
        };
        let pos = |m: &Marker<R>| self.marker_pos(m);
        let (cycles, new) = match self.mode {
            LoopMode::Once => {
                let u1 = (u0 + delta).clamp(0, dw);
                if u1 > u0 {
                    for (i, m) in markers.iter().enumerate() {
                        if pos(m).is_some_and(|p| u0 < p && p <= u1) {
                            emit(i, false);
                        }
                    }
                } else {
                    for (i, m) in markers.iter().enumerate().rev() {
                        if pos(m).is_some_and(|p| u1 <= p && p < u0) {
                            emit(i, true);
                        }
                    }
                }
                (0, u1)
            }
            LoopMode::Loop => {
                let u1 = u0 + delta;
                let wraps = u1.div_euclid(dw);
                // Marker i of loop k sits at k·D + mᵢ; loops k0 − 1 ..= k1 cover every
                // occurrence in the swept interval.
                let (k0, k1) = (u0.div_euclid(dw), wraps);
                if u1 > u0 {
                    for k in k0 - 1..=k1 {
                        for (i, m) in markers.iter().enumerate() {
                            if pos(m).is_some_and(|p| u0 < k * dw + p && k * dw + p <= u1) {
                                emit(i, false);
                            }
                        }
                    }
                } else {
                    for k in (k1 - 1..=k0).rev() {
                        for (i, m) in markers.iter().enumerate().rev() {
                            if pos(m).is_some_and(|p| u1 <= k * dw + p && k * dw + p < u0) {
                                emit(i, true);
                            }
                        }
                    }
                }
                (wraps, u1 - wraps * dw)
            }
            LoopMode::PingPong => {
                let period = 2 * dw;
                let u1 = u0 + delta;
                let wraps = u1.div_euclid(period);
                // Cycle k: the forward pass holds markers m ∈ (0, D] at k·P + m, the backward pass
                // markers m ∈ [0, D) at k·P + P − m.
                let (k0, k1) = (u0.div_euclid(period), wraps);
                let fwd = |k: i128, m: &Marker<R>| pos(m).filter(|&p| p > 0).map(|p| k * period + p);
                let bwd = |k: i128, m: &Marker<R>| pos(m).filter(|&p| p < dw).map(|p| k * period + period - p);
                if u1 > u0 {
                    let hit = |p: i128| u0 < p && p <= u1;
                    for k in k0 - 1..=k1 {
                        for (i, m) in markers.iter().enumerate() {
                            if fwd(k, m).is_some_and(hit) {
                                emit(i, false);
                            }
                        }
                        for (i, m) in markers.iter().enumerate().rev() {
                            if bwd(k, m).is_some_and(hit) {
                                emit(i, true);
                            }
                        }
                    }
                } else {
                    let hit = |p: i128| u1 <= p && p < u0;
                    for k in (k1 - 1..=k0).rev() {
                        for (i, m) in markers.iter().enumerate() {
                            if bwd(k, m).is_some_and(hit) {
                                emit(i, false);
                            }
                        }
                        for (i, m) in markers.iter().enumerate().rev() {
                            if fwd(k, m).is_some_and(hit) {
                                emit(i, true);
                            }
                        }
                    }
                }
                (wraps, u1 - wraps * period)
            }
        };
        self.pos = (new >> 32) as u64;
        self.sub = (new & 0xffff_ffff) as u32;
        // |cycles| ≤ MAX_WRAPS_PER_STEP, so the cast is exact.
        self.loops = self.loops.saturating_add(cycles as i64);
        let wraps = if self.mode == LoopMode::Loop { cycles as i64 } else { 0 };
        Ok(Step { wraps, finished: self.finished() })
    }

    /// Position of a marker relative to the start, in units of 2⁻⁶⁴ s, when inside the range.
    #[inline]
    fn marker_pos(&self, m: &Marker<R>) -> Option<i128> {
        let t = to_q32(m.time)? as i128 - self.start as i128;
        (0..=self.duration as i128).contains(&t).then_some(t << 32)
    }
}

/// `v` in Q32.32 fixed point, rounded to nearest and saturated at ±(2⁶³ − 1); `None` for NaN.
/// Integer-only: no floating-point operation, so it costs no soft-float call on an FPU-less core.
pub(crate) fn f32_to_q32(v: f32) -> Option<i64> {
    let b = v.to_bits();
    let negative = b >> 31 != 0;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = (b & 0x7f_ffff) as i64;
    let magnitude = if exp == 0xff {
        if man != 0 {
            return None;
        }
        i64::MAX
    } else if exp == 0 {
        0 // zero and subnormals (below 2⁻¹²⁶)
    } else {
        // value = m · 2^(exp − 150); in Q32.32: m · 2^(exp − 118).
        let m = man | 0x80_0000;
        let shift = exp - 118;
        if shift >= 0 {
            if shift > 39 {
                i64::MAX
            } else {
                m << shift
            }
        } else if shift < -25 {
            0
        } else {
            let s = -shift;
            (m + (1 << (s - 1))) >> s
        }
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// `v` in Q32.32 fixed point, saturating; `None` for NaN. Exact for `f32` values whose magnitude
/// is in `[2⁻⁹, 2³¹)` and for every `Q16` value: the integer part goes through `trunc_i32`, only
/// the fraction (exact in `f32` for both types) through [`f32_to_q32`].
#[inline]
pub(crate) fn to_q32<R: Real>(v: R) -> Option<i64> {
    // Bit tests, not float comparisons: the Q16 path stays integer-only.
    let f = v.to_f32();
    let exp = (f.to_bits() >> 23) & 0xff;
    if exp >= 127 + 31 {
        // NaN, infinities and magnitudes of 2³¹ and more: saturate (or None for NaN).
        return f32_to_q32(f);
    }
    let whole = v.trunc_i32();
    let frac = f32_to_q32((v - R::from_i32(whole)).to_f32())?;
    Some(((whole as i64) << 32) + frac)
}

/// A Q32.32 value as `R`: correctly rounded (to nearest, ties to even) for `f32`, rounded to the
/// nearest step for `Q16` (saturating). Integer-only on the `Q16` path.
pub(crate) fn q32_to_real<R: Real>(v: i64) -> R {
    if v == 0 {
        return R::ZERO;
    }
    let mag = v.unsigned_abs();
    let lead = 63 - mag.leading_zeros() as i32;
    let r = if lead <= 30 {
        // At most 31 significant bits: `bits / 2³¹ / 2` rounds once (in `from_fixed_bits`).
        R::from_fixed_bits(mag as i32, 31) * R::HALF
    } else {
        // Round to 24 significant bits, ties to even, then scale exactly.
        let shift = (lead - 23) as u32;
        let mut mant = mag >> shift;
        let rem = mag & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        if rem > half || (rem == half && mant & 1 == 1) {
            mant += 1;
        }
        let frac = 32 - shift as i32;
        if frac >= 0 {
            R::from_fixed_bits(mant as i32, frac as u32)
        } else {
            let whole = (mant as u128) << (-frac) as u32;
            R::from_i32(whole.min(i32::MAX as u128) as i32)
        }
    };
    if v < 0 {
        -r
    } else {
        r
    }
}

/// Builders of small `.sinew` files for the tests of this crate's animation modules.
#[cfg(test)]
pub(crate) mod test_support {
    extern crate std;
    use std::vec::Vec;

    use crate::asset::format::*;
    use crate::asset::writer::Writer;
    use crate::math::Transform;

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
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec::Vec;

    use super::test_support::*;
    use super::*;
    use crate::asset::Asset;
    use crate::clip::RotationInterpolation;
    use crate::job::SamplingJob;
    use crate::math::{SoaTransform, Transform};
    use crate::real::Q16;
    use crate::skeleton::Skeleton;

    fn collect<R: Real>(
        p: &mut Player<R>,
        dt: R,
        markers: &[Marker<R>],
        out: &mut Vec<(u32, bool)>,
    ) -> Result<Step, PlayerError> {
        p.advance(dt, markers, |e| out.push((e.id, e.reverse)))
    }

    #[test]
    fn validity() {
        let markers = [Marker { time: 0.5f32, id: 1 }];
        let mut p = Player::<f32>::from_range(0.0, 1.0);
        p.seek(0.25);
        let before = p.clone();
        let mut events = Vec::new();
        for dt in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            assert_eq!(collect(&mut p, dt, &markers, &mut events), Err(PlayerError::NonFiniteDelta));
        }
        assert_eq!(p.advance_cycles(f32::NAN, &markers, |_| {}), Err(PlayerError::NonFiniteDelta));
        // A step over more than MAX_WRAPS_PER_STEP loops, in Loop and PingPong.
        let long = MAX_WRAPS_PER_STEP as f32 * 2.5;
        assert_eq!(collect(&mut p, long, &markers, &mut events), Err(PlayerError::TooManyWraps));
        assert_eq!(collect(&mut p, -long, &markers, &mut events), Err(PlayerError::TooManyWraps));
        let mut pp = p.clone();
        pp.set_mode(LoopMode::PingPong);
        let pp_before = pp.clone();
        assert_eq!(collect(&mut pp, 3.0 * long, &markers, &mut events), Err(PlayerError::TooManyWraps));
        assert_eq!(std::format!("{pp:?}"), std::format!("{pp_before:?}"));
        assert_eq!(p.check_advance(long), Err(PlayerError::TooManyWraps));
        assert_eq!(p.check_advance(f32::NAN), Err(PlayerError::NonFiniteDelta));
        assert_eq!(p.check_advance_cycles(3.0e6), Err(PlayerError::TooManyWraps));
        assert_eq!(p.check_advance(1.0), Ok(()));
        // Nothing changed, nothing fired.
        assert!(events.is_empty());
        assert_eq!(std::format!("{p:?}"), std::format!("{before:?}"));
        // Just under the limit is fine (under miri, a shorter step: 2^20 wraps take minutes there).
        let wraps = if cfg!(miri) { 1 << 10 } else { MAX_WRAPS_PER_STEP - 1 };
        assert!(collect(&mut p, wraps as f32, &[], &mut events).is_ok());
        // Once mode never wraps: any finite step is fine and clamps.
        let mut once = Player::<f32>::from_range(0.0, 1.0);
        once.set_mode(LoopMode::Once);
        assert_eq!(collect(&mut once, 1.0e30, &markers, &mut events), Ok(Step { wraps: 0, finished: true }));
        assert_eq!(events, [(1, false)]);
        assert_eq!(once.time(), 1.0);
    }

    #[test]
    fn fixed_point_conversions_are_exact_or_correctly_rounded() {
        let mut s = 0x2545_f491u32;
        for _ in 0..if cfg!(miri) { 2_000 } else { 200_000 } {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            // Random f32 in roughly [2⁻⁹, 2²⁰], both signs.
            let e = 118 + (s % 30);
            let v = f32::from_bits((e << 23) | (s >> 9) | ((s & 1) << 31));
            let q = f32_to_q32(v).unwrap();
            assert_eq!(q as f64, v as f64 * 4_294_967_296.0, "{v} is exact in Q32.32");
            assert_eq!(to_q32(v), Some(q));
            assert_eq!(q32_to_real::<f32>(q), v, "round trip of {v}");
            // A value between ticks rounds like f64 → f32 (correct rounding).
            let odd = q | 1;
            assert_eq!(q32_to_real::<f32>(odd), (odd as f64 / 4_294_967_296.0) as f32);
        }
        assert_eq!(f32_to_q32(f32::NAN), None);
        assert_eq!(f32_to_q32(f32::INFINITY), Some(i64::MAX));
        assert_eq!(f32_to_q32(-1.0e30), Some(-i64::MAX));
        assert_eq!(f32_to_q32(1.0e-30), Some(0));
        // Q16 values are exact in Q32.32 and come back unchanged.
        for bits in [1, -1, 12345, -654_321, 0x7fff_ffff, -0x7fff_ffff] {
            let q = Q16::from_bits(bits);
            assert_eq!(to_q32(q), Some((bits as i64) << 16));
            assert_eq!(q32_to_real::<Q16>((bits as i64) << 16), q);
        }
    }

    #[test]
    fn loop_modes() {
        // Loop: wraps, counts loops, and time stays in range.
        let mut p = Player::<f32>::from_range(1.0, 3.0);
        assert_eq!(p.time(), 1.0);
        let step = p.advance(5.5, &[], |_| {}).unwrap();
        assert_eq!((step.wraps, p.loops(), p.time()), (2, 2, 2.5));
        let step = p.advance(-4.0, &[], |_| {}).unwrap();
        assert_eq!((step.wraps, p.loops(), p.time()), (-2, 0, 2.5));
        // Speed scales and reverses.
        p.set_speed(-0.5);
        p.advance(2.0, &[], |_| {}).unwrap();
        assert_eq!(p.time(), 1.5);
        // Pause holds.
        p.pause();
        p.advance(1.0, &[], |_| {}).unwrap();
        assert_eq!(p.time(), 1.5);
        p.play();
        assert!(p.is_playing());
        // Once: stops at the end and reports it once.
        let mut o = Player::<f32>::from_range(0.0, 2.0);
        o.set_mode(LoopMode::Once);
        assert!(!o.finished());
        assert_eq!(o.advance(1.5, &[], |_| {}).unwrap(), Step { wraps: 0, finished: false });
        assert_eq!(o.advance(1.5, &[], |_| {}).unwrap(), Step { wraps: 0, finished: true });
        assert!(o.finished());
        assert_eq!(o.time(), 2.0);
        assert!(o.advance(1.0, &[], |_| {}).unwrap().finished);
        // Backwards from the end: stops at the start.
        o.set_speed(-1.0);
        assert!(!o.finished());
        o.advance(5.0, &[], |_| {}).unwrap();
        assert!(o.finished());
        assert_eq!(o.time(), 0.0);
        // PingPong: bounces.
        let mut pp = Player::<f32>::from_range(0.0, 1.0);
        pp.set_mode(LoopMode::PingPong);
        for (dt, t) in [(0.75, 0.75), (0.5, 0.75), (0.5, 0.25), (0.5, 0.25), (1.25, 0.5)] {
            pp.advance(dt, &[], |_| {}).unwrap();
            assert_eq!(pp.time(), t);
        }
        assert_eq!(pp.loops(), 1);
        // Seek clamps; normalized position round-trips.
        p.seek(10.0);
        assert_eq!(p.time(), 3.0);
        p.seek(-10.0);
        assert_eq!(p.time(), 1.0);
        p.set_normalized(0.25);
        assert_eq!((p.time(), p.normalized()), (1.5, 0.25));
        pp.set_normalized(0.75);
        assert_eq!((pp.time(), pp.normalized()), (0.5, 0.75));
        p.set_speed(1.0);
        p.advance_cycles(0.5, &[], |_| {}).unwrap();
        assert_eq!(p.time(), 2.5);
        // Rewind goes to the end when playing backwards.
        o.set_speed(-1.0);
        o.rewind();
        assert_eq!(o.time(), 2.0);
        // An empty range never moves and Once is finished at once.
        let mut e = Player::<f32>::from_range(1.0, 1.0);
        e.set_mode(LoopMode::Once);
        assert!(e.advance(1.0, &[], |_| {}).unwrap().finished);
        assert_eq!(e.time(), 1.0);
    }

    fn m(time: f32, id: u32) -> Marker<f32> {
        Marker { time, id }
    }

    #[test]
    fn markers_fire_once_per_crossing_over_several_loops() {
        // Markers at the start, inside, and at the end of [0, 1].
        let markers = [m(0.0, 0), m(0.25, 1), m(1.0, 2)];
        let mut p = Player::<f32>::from_range(0.0, 1.0);
        let mut ev = Vec::new();
        // The initial position does not fire; arriving does.
        collect(&mut p, 0.25, &markers, &mut ev).unwrap();
        assert_eq!(ev, [(1, false)]);
        ev.clear();
        // 0.25 → 3.125: end of loop 0, then loops 1 and 2 whole, then the start of loop 3.
        let step = collect(&mut p, 2.875, &markers, &mut ev).unwrap();
        assert_eq!(step.wraps, 3);
        let ids: Vec<u32> = ev.iter().map(|e| e.0).collect();
        assert_eq!(ids, [2, 0, 1, 2, 0, 1, 2, 0]);
        assert!(ev.iter().all(|e| !e.1));
        ev.clear();
        // Backwards by the same amount retraces the crossings in reverse order, and arrives on
        // marker 1 where the forward step started (arrival fires).
        p.set_speed(-1.0);
        let step = collect(&mut p, 2.875, &markers, &mut ev).unwrap();
        assert_eq!(step.wraps, -3);
        let ids: Vec<u32> = ev.iter().map(|e| e.0).collect();
        assert_eq!(ids, [0, 2, 1, 0, 2, 1, 0, 2, 1]);
        assert!(ev.iter().all(|e| e.1));
        assert_eq!(p.time(), 0.25);
        ev.clear();
        // Ping-pong: turning points fire once per bounce.
        let mut pp = Player::<f32>::from_range(0.0, 1.0);
        pp.set_mode(LoopMode::PingPong);
        collect(&mut pp, 4.5, &markers, &mut ev).unwrap();
        assert_eq!(
            ev,
            [(1, false), (2, false), (1, true), (0, true), (1, false), (2, false), (1, true), (0, true), (1, false)]
        );
        ev.clear();
        // Once: the end marker fires on arrival, and never again.
        let mut o = Player::<f32>::from_range(0.0, 1.0);
        o.set_mode(LoopMode::Once);
        collect(&mut o, 0.5, &markers, &mut ev).unwrap();
        collect(&mut o, 0.5, &markers, &mut ev).unwrap();
        collect(&mut o, 0.5, &markers, &mut ev).unwrap();
        assert_eq!(ev, [(1, false), (2, false)]);
        ev.clear();
        o.set_speed(-1.0);
        collect(&mut o, 2.0, &markers, &mut ev).unwrap();
        assert_eq!(ev, [(1, true), (0, true)]);
        // Collected into a fixed-capacity heapless::Vec: crossings past its capacity are counted
        // as dropped by the caller's closure.
        let mut fixed: heapless::Vec<Event<f32>, 4> = heapless::Vec::new();
        let mut dropped = 0;
        let mut q = Player::<f32>::from_range(0.0, 1.0);
        q.advance(2.5, &markers, |e| {
            if fixed.push(e).is_err() {
                dropped += 1;
            }
        })
        .unwrap();
        let ids: Vec<u32> = fixed.iter().map(|e| e.id).collect();
        assert_eq!((ids, dropped), (std::vec![1, 2, 0, 1], 3));
        assert_eq!(fixed[1], Event { marker: 2, id: 2, time: 1.0, reverse: false });
        // Markers outside the range never fire.
        ev.clear();
        collect(&mut p, 10.0, &[m(-0.5, 7), m(1.5, 8), m(f32::NAN, 9)], &mut ev).unwrap();
        assert!(ev.is_empty());
    }

    /// Events of a run in many random steps equal those of the same run in one step, and their
    /// count matches a closed-form count of crossings.
    fn partition_invariance(mode: LoopMode, speed: f32, seed: u32) {
        let markers = [m(0.0, 0), m(0.125, 1), m(0.5, 2), m(0.5, 3), m(1.25, 4), m(1.25, 5)];
        let mut s = seed;
        let mut rnd = move || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s
        };
        let mut a = Player::<f32>::from_range(0.0, 1.25);
        a.set_mode(mode);
        a.set_speed(speed);
        a.seek(0.375);
        let mut b = a.clone();
        let mut many = Vec::new();
        let mut total = 0.0f32;
        for _ in 0..if cfg!(miri) { 20 } else { 400 } {
            // Steps of k / 256 s, k in 0..1024: from nothing to several loops, all exact.
            let dt = (rnd() % 1024) as f32 / 256.0;
            total += dt;
            a.advance(dt, &markers, |e| many.push(e)).unwrap();
        }
        let mut one = Vec::new();
        b.advance(total, &markers, |e| one.push(e)).unwrap();
        assert_eq!(many, one, "{mode:?} speed {speed}");
        assert_eq!(a.time(), b.time());
        assert_eq!(a.loops(), b.loops());
        // Closed form: the swept distance is total·|speed| from phase 0.375 (exact in f64).
        let d = 1.25f64;
        let swept = total as f64 * speed.abs() as f64;
        let count = |p: f64| -> usize {
            // Occurrences of a marker at unwrapped positions p + k·period within the sweep.
            let (start, period) = match mode {
                LoopMode::Loop => (0.375, d),
                _ => (0.375, 2.0 * d),
            };
            let (lo, hi) = if speed > 0.0 { (start, start + swept) } else { (start - swept, start) };
            let mut n = 0;
            let mut k = ((lo - p) / period).floor() as i64 - 1;
            while p + k as f64 * period <= hi + period {
                let x = p + k as f64 * period;
                let inside = if speed > 0.0 { x > lo && x <= hi } else { x >= lo && x < hi };
                if inside {
                    n += 1;
                }
                k += 1;
            }
            n
        };
        let expected: usize = markers
            .iter()
            .map(|mk| {
                let t = mk.time as f64;
                match mode {
                    LoopMode::Loop => count(t),
                    // Forward pass position t (t > 0), backward pass position 2D − t (t < D).
                    _ => (if t > 0.0 { count(t) } else { 0 }) + (if t < d { count(2.0 * d - t) } else { 0 }),
                }
            })
            .sum();
        assert_eq!(many.len(), expected, "{mode:?} speed {speed}");
    }

    #[test]
    fn markers_partition_invariance() {
        for (i, speed) in [1.0f32, 1.5, -1.0, -0.75].into_iter().enumerate() {
            partition_invariance(LoopMode::Loop, speed, 11 + i as u32);
            partition_invariance(LoopMode::PingPong, speed, 97 + i as u32);
        }
    }

    /// A one-joint clip over [0.25, 1.55] s whose translation changes fast (4 m/s), so a time
    /// error of 1 µs moves the joint by 4 µm.
    fn drift_asset() -> Vec<u8> {
        let clip = ClipSpec {
            name: "drift",
            start: 0.25,
            end: 1.55,
            tracks: std::vec![translation(
                0,
                &[0.25, 0.9, 1.55],
                &[[0.0, 0.0, 0.0], [2.6, -1.3, 0.5], [0.0, 0.0, 1.0]]
            )],
        };
        build(&[-1], &[Transform::IDENTITY], &["root"], &[clip])
    }

    fn sample_at(asset: &Asset, t: f32) -> SoaTransform<f32> {
        let skel: Skeleton<f32, 1> = asset.skeleton().unwrap().to_skeleton().unwrap();
        let mut cursor = [0u16; 1];
        let mut out = [SoaTransform::IDENTITY];
        SamplingJob {
            clip: asset.clip(0).unwrap(),
            time: t,
            rotation: RotationInterpolation::default(),
            rest_pose: skel.rest_pose(),
            cursor: &mut cursor,
            output: &mut out,
        }
        .run()
        .unwrap();
        out[0]
    }

    /// Plays `hours` of updates at `hz` (dt = 1/hz as f32) at `speed` and checks, at a few
    /// checkpoints, that the player's time equals the exact `start + (n·dt·speed mod D)`
    /// rounded once to f32, and that the sampled pose equals the pose sampled at that time.
    /// Returns the drift of a naive f32 accumulator over the same run, in seconds.
    fn no_drift(hz: u32, hours: u32, speed: f32) -> f64 {
        let bytes = drift_asset();
        let asset = Asset::parse(&bytes).unwrap();
        let clip = asset.clip(0).unwrap();
        let markers = [Marker { time: 0.25f32, id: 0 }, Marker { time: 1.0, id: 1 }];
        let mut p = Player::<f32>::new(&clip);
        p.set_speed(speed);
        let dt = 1.0f32 / hz as f32;
        let frames = if cfg!(miri) { 400 } else { hz as u64 * 3600 * hours as u64 };
        let (start, d) = (clip.start() as f64, clip.end() as f64 - clip.start() as f64);
        // Exact arithmetic: dt·speed·n and D in units of 2⁻⁶⁴ s (both are exact in f64 × 2³²).
        let unit = |x: f64| (x * 4_294_967_296.0) as i128;
        let (dt_q, sp_q, d_q) = (unit(dt as f64), unit(speed as f64), unit(d));
        let mut naive = 0.0f32;
        let mut events = 0u64;
        let mut cursor = [0u16; 1];
        let skel: Skeleton<f32, 1> = asset.skeleton().unwrap().to_skeleton().unwrap();
        for n in 1..=frames {
            p.advance(dt, &markers, |_| events += 1).unwrap();
            naive += dt * speed;
            naive = naive.rem_euclid(d as f32);
            if n % (frames / 4) == 0 {
                let u = (dt_q * sp_q * n as i128).rem_euclid(d_q << 32);
                let exact = start + (u as f64) / 18_446_744_073_709_551_616.0;
                let expected = exact as f32;
                assert_eq!(p.time(), expected, "after {n} frames at {hz} Hz");
                let mut pose = [SoaTransform::IDENTITY];
                SamplingJob {
                    clip,
                    time: p.time(),
                    rotation: RotationInterpolation::default(),
                    rest_pose: skel.rest_pose(),
                    cursor: &mut cursor,
                    output: &mut pose,
                }
                .run()
                .unwrap();
                assert_eq!(pose[0], sample_at(&asset, expected));
                if n == frames {
                    // Both markers fire once per loop: count the loops crossed exactly.
                    let total = dt_q * sp_q.abs() * n as i128;
                    let first = (0.75 * 4_294_967_296.0) as i128; // marker 1.0 is 0.75 s after the start
                    let loops_from = |offset: i128| -> i128 {
                        let off = offset << 32;
                        if total < off {
                            0
                        } else {
                            (total - off) / (d_q << 32) + 1
                        }
                    };
                    let expect = if speed > 0.0 {
                        // Marker 0.25 sits at the start: first reached after a full loop.
                        loops_from(first) + loops_from(d_q)
                    } else {
                        // Backwards from the start: marker 1.0 after D − 0.75 s, the start after D.
                        loops_from(d_q - first) + loops_from(d_q)
                    };
                    assert_eq!(events as i128, expect);
                    return (naive as f64 - (exact - start)).abs();
                }
            }
        }
        unreachable!()
    }

    #[test]
    #[cfg_attr(miri, ignore = "5 million steps: the length of the run is what it tests")]
    fn no_drift_over_24_hours_at_60_hz() {
        let naive = no_drift(60, 24, 1.0);
        std::println!("naive f32 accumulation drifts {naive:.4} s over 24 h at 60 Hz");
        assert!(naive > 1.0e-3, "the naive accumulator was expected to drift ({naive:e} s)");
    }

    #[test]
    #[cfg_attr(miri, ignore = "600 000 steps: the length of the run is what it tests")]
    fn no_drift_over_24_hours_at_7_hz() {
        let naive = no_drift(7, 24, 1.0);
        std::println!("naive f32 accumulation drifts {naive:.4} s over 24 h at 7 Hz");
        assert!(naive > 1.0e-4, "the naive accumulator was expected to drift ({naive:e} s)");
    }

    #[test]
    fn no_drift_with_odd_and_reverse_speeds() {
        no_drift(60, 1, 1.1);
        no_drift(7, 3, -0.37);
    }

    #[test]
    fn q16_player_is_exact_too() {
        let mut p = Player::<Q16>::from_range(0.5, 2.0);
        let dt = Q16::ratio(1, 60);
        let markers = [Marker { time: Q16::ONE, id: 3 }];
        let mut events = 0;
        let frames = if cfg!(miri) { 600 } else { 60 * 600 };
        for _ in 0..frames {
            p.advance(dt, &markers, |_| events += 1).unwrap();
        }
        // dt is 1092 / 65536 s exactly; the position is n·dt mod 1.5 s, exactly.
        let u = (frames as i64 * dt.to_bits() as i64).rem_euclid(3 << 15);
        assert_eq!(p.time(), Q16::from_bits((1 << 15) + u as i32));
        let total = frames as i64 * dt.to_bits() as i64;
        assert_eq!(events as i64, (total - (1 << 15)) / (3 << 15) + 1);
    }
}
