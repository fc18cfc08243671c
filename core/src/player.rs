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
use crate::real::q32::{f32_to_q32, q32_to_real, to_q32};
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
///
/// # Examples
///
/// A one-second loop with two footstep markers, advanced by half a second, then by three
/// quarters (across the loop's end):
///
/// ```
/// use sinew::player::{LoopMode, Marker, Player};
///
/// let mut player = Player::<f32>::from_range(0.0, 1.0); // or `Player::new(&clip)`
/// let steps = [Marker { time: 0.25, id: 1 }, Marker { time: 0.75, id: 2 }];
/// let mut heard = Vec::new();
///
/// let step = player.advance(0.5, &steps, |event| heard.push(event.id))?;
/// assert_eq!((player.time(), step.wraps), (0.5, 0));
/// assert_eq!(heard, [1]);
///
/// // From 0.5 to 1.25: past the marker at 0.75, round the loop, to the one at 0.25 again.
/// let step = player.advance(0.75, &steps, |event| heard.push(event.id))?;
/// assert_eq!((player.time(), step.wraps), (0.25, 1));
/// assert_eq!(heard, [1, 2, 1]);
///
/// // Played once, the clip stops at its end.
/// player.set_mode(LoopMode::Once);
/// player.advance(10.0, &steps, |_| {})?;
/// assert!(player.finished());
/// assert_eq!(player.time(), 1.0);
/// # Ok::<(), sinew::player::PlayerError>(())
/// ```
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

    /// A player over the empty range at time 0 (what [`Player::from_range`]`(0.0, 0.0)` gives),
    /// usable in constants.
    pub(crate) const fn idle() -> Self {
        Player {
            start: 0,
            duration: 0,
            pos: 0,
            sub: 0,
            loops: 0,
            speed: R::ONE,
            speed_fixed: 1 << 32,
            mode: LoopMode::Loop,
            playing: true,
        }
    }

    /// A player over the time range `[start, end]` (seconds; an end before the start, or a NaN,
    /// gives an empty range).
    #[must_use]
    pub fn from_range(start: f32, end: f32) -> Self {
        let s = f32_to_q32(start).unwrap_or(0);
        let e = f32_to_q32(end).unwrap_or(s);
        let duration = (e as i128 - s as i128).clamp(0, MAX_DURATION_TICKS as i128) as u64;
        Player { start: s, duration, ..Self::idle() }
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
        if f >= 1 << 31 {
            // At the end of the cycle (a `Once` player that finished): 2³¹ is not an `i32`.
            return R::ONE;
        }
        R::from_fixed_bits(f as i32, 31)
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

#[cfg(test)]
mod tests;
