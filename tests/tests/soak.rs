//! Soak test of [`sinew::controller::Controller`]: 24 simulated hours at 60 Hz.
//!
//! The character is the built-in procedural humanoid (`sinew_offline::builtin::humanoid_rig`),
//! baked in memory with the default (quantized) options. Its controller plays, on a repeating
//! schedule:
//!
//! - `walk` and `run` on the base layer, crossfading (smoothstep, 0.29 s) from one to the other
//!   every [`BASE_PERIOD`] frames;
//! - `wave` on an override layer masked to the right arm (the subtree of `r_clavicle` with a
//!   fade-in of one level), faded in (linear, 0.49 s, restarted from the clip's start) and out
//!   again every [`WAVE_PERIOD`] frames;
//! - `idle` on an additive layer (deltas from the rest pose) of weight 0.5, at speed 0.7;
//! - markers on every clip, at its start, inside it and at its end.
//!
//! Checks:
//!
//! - every frame: the output pose and the model matrices (hierarchy walk of the output) are
//!   finite; each fade's weights equal, bit for bit, those of the first fade of the same kind,
//!   and are within 1e-6 of the fade curve evaluated at the frame's time;
//! - every simulated hour and at the end: each player's position (in ticks of 2⁻³² s), clip
//!   time and loop count equal the values computed here with integer arithmetic from the
//!   schedule (frames played × dt, times the speed, modulo the duration); the marker counts
//!   equal the crossings computed from the same advance; no fade is running; and the output pose
//!   and every active slot's pose equal, bit for bit, those of a fresh controller set up with
//!   the same weights and seeked to the expected times (and the slot poses those of a
//!   `SamplingJob` with a fresh cursor);
//! - the loop allocates and frees nothing: a counting `#[global_allocator]` counts the calls on
//!   the test's thread.
//!
//! Bit-exact equality is the right bound: the player keeps its position as an exact integer, so
//! the sampled time after 24 h is the correctly rounded `f32` of the exact position, the same
//! `f32` a fresh player seeked there returns; sampling and blending are pure functions of that
//! time, the weights (exactly 0 or 1 after a fade) and the clip, with the key cursor only a
//! search hint.
//!
//! `cargo test -p sinew-tests --test soak -- --nocapture` prints a summary line. The test is
//! `slow::controller_soak_24_hours`: the fast tier (`--skip slow::`) leaves it out.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Instant;

use sinew::asset::Asset;
use sinew::clip::RotationInterpolation;
use sinew::controller::{
    AdditiveReference, ClipEntry, ClipId, Controller, ControllerEvent, ControllerScratch, FadeCurve, LayerId,
    LayerMode, SlotId,
};
use sinew::job::mask::Channel;
use sinew::job::{LocalToModelJob, SamplingJob};
use sinew::math::{Mat4, SoaTransform};
use sinew::player::Marker;
use sinew::skeleton::{Skeleton, SkeletonView};
use sinew_offline::bake::{bake, BakeOptions};
use sinew_offline::builtin::{humanoid, humanoid_rig};

// ------------------------------------------------------------------------------------------
// Allocation counting
// ------------------------------------------------------------------------------------------

/// The system allocator, counting calls per thread.
struct CountingAllocator;

thread_local! {
    /// `alloc`/`alloc_zeroed`, `dealloc` and `realloc` calls made on this thread.
    static CALLS: Cell<[u64; 3]> = const { Cell::new([0; 3]) };
}

fn count(kind: usize) {
    // A thread being torn down has no counter left; its calls are not ours.
    let _ = CALLS.try_with(|c| {
        let mut v = c.get();
        v[kind] += 1;
        c.set(v);
    });
}

// SAFETY: every call is forwarded unchanged to `System`, which upholds the contract.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(0);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(0);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(1);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(2);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Allocation, deallocation and reallocation calls made so far on this thread.
fn allocator_calls() -> [u64; 3] {
    CALLS.with(Cell::get)
}

// ------------------------------------------------------------------------------------------
// The schedule
// ------------------------------------------------------------------------------------------

/// Updates per simulated second.
const HZ: u64 = 60;
/// The time step.
const DT: f32 = 1.0 / HZ as f32;
/// Updates per simulated hour.
const HOUR: u64 = 3600 * HZ;
/// Simulated hours.
const HOURS: u64 = 24;
/// Updates in all.
const FRAMES: u64 = HOURS * HOUR;

sinew::capacity! {
    /// The soak's character: the humanoid's joints; 4 slots, `walk` and `run` on the base
    /// layer, `wave` on the arm layer, `idle` on the additive layer; 3 layers.
    pub struct Soak { joints: humanoid::COUNT, slots: 4, layers: 3 }
}
/// Slots (clip i plays in slot i).
const WALK: usize = 0;
const RUN: usize = 1;
const WAVE: usize = 2;
const IDLE: usize = 3;
const SLOT_CLIPS: [&str; Soak::SLOTS] = ["walk", "run", "wave", "idle"];
const BASE_LAYER: usize = 0;
const ARM_LAYER: usize = 1;
const ADDITIVE_LAYER: usize = 2;

type Ctl = Controller<f32, Soak>;
type Scratch = ControllerScratch<f32, Soak>;

/// Base-layer crossfade `k` happens before update `BASE_OFFSET + k · BASE_PERIOD`, to `run` for
/// even `k`, to `walk` for odd `k` (`walk` plays alone before the first).
const BASE_OFFSET: u64 = 200;
const BASE_PERIOD: u64 = 547;
/// Crossfade duration in milliseconds (17.4 frames: it ends in the 18th update).
const BASE_FADE_MS: u64 = 290;
/// `wave` fades in (restarted) before update `WAVE_OFFSET + k · WAVE_PERIOD` and out again
/// [`WAVE_ON`] updates later.
const WAVE_OFFSET: u64 = 500;
const WAVE_PERIOD: u64 = 731;
const WAVE_ON: u64 = 480;
/// Wave fade duration in milliseconds (29.4 frames: it ends in the 30th update).
const WAVE_FADE_MS: u64 = 490;
/// Speed of the additive `idle`.
const IDLE_SPEED: f32 = 0.7;
/// Weight of the additive layer.
const ADDITIVE_WEIGHT: f32 = 0.5;

/// Updates a fade of `ms` milliseconds takes to end: the first `k` with `k · dt ≥ ms`. The
/// durations are chosen away from whole frames so that the controller's `f32` sum of `dt`
/// cannot round across a frame.
const fn fade_frames(ms: u64) -> u64 {
    assert!(ms * HZ % 1000 != 0, "a fade of whole frames is sensitive to rounding");
    (ms * HZ).div_ceil(1000)
}
const BASE_FADE: u64 = fade_frames(BASE_FADE_MS);
const WAVE_FADE: u64 = fade_frames(WAVE_FADE_MS);
const _: () = assert!(BASE_FADE < BASE_PERIOD && WAVE_FADE < WAVE_ON && WAVE_ON + WAVE_FADE < WAVE_PERIOD);

fn seconds(ms: u64) -> f32 {
    ms as f32 / 1000.0
}

/// Applies the schedule's actions due before update `n`.
fn apply_schedule(ctl: &mut Ctl, n: u64) {
    if n >= BASE_OFFSET && (n - BASE_OFFSET) % BASE_PERIOD == 0 {
        let k = (n - BASE_OFFSET) / BASE_PERIOD;
        let to = if k % 2 == 0 { RUN } else { WALK };
        ctl.crossfade(to, seconds(BASE_FADE_MS), FadeCurve::SmoothStep, false).unwrap();
    }
    if n >= WAVE_OFFSET {
        let q = (n - WAVE_OFFSET) % WAVE_PERIOD;
        if q == 0 {
            ctl.player_mut(WAVE).unwrap().rewind();
            ctl.fade_to(WAVE, 1.0, seconds(WAVE_FADE_MS), FadeCurve::Linear).unwrap();
        } else if q == WAVE_ON {
            ctl.fade_to(WAVE, 0.0, seconds(WAVE_FADE_MS), FadeCurve::Linear).unwrap();
        }
    }
}

// ------------------------------------------------------------------------------------------
// Expected state, in integers
// ------------------------------------------------------------------------------------------

/// `v` in Q32.32, asserting that it is exact.
fn exact_q32(v: f32) -> i128 {
    let x = f64::from(v) * 4_294_967_296.0;
    assert_eq!(x.fract(), 0.0, "{v} is not a whole number of 2^-32 s");
    x as i128
}

/// Updates in which a base slot advanced among the first `n`: `walk` from 0 until its fade-out
/// ends [`BASE_FADE`] updates after the first crossfade, then each slot from the crossfade
/// that brings it in to the end of the fade of the one that takes it out.
fn base_frames(slot: usize, n: u64) -> u64 {
    let mut total = 0;
    let mut since = (slot == WALK).then_some(0);
    let mut k = 0;
    loop {
        let at = BASE_OFFSET + k * BASE_PERIOD;
        if at >= n {
            break;
        }
        let to = if k % 2 == 0 { RUN } else { WALK };
        if to == slot {
            since = Some(at);
        } else if let Some(s) = since.take() {
            total += (at + BASE_FADE).min(n) - s;
        }
        k += 1;
    }
    total + since.map_or(0, |s| n - s)
}

/// Updates played by each `wave` episode begun among the first `n` (each starts from the clip's
/// start), oldest first.
fn wave_episodes(n: u64) -> impl Iterator<Item = u64> {
    (0..)
        .map(|k| WAVE_OFFSET + k * WAVE_PERIOD)
        .take_while(move |&at| at < n)
        .map(move |at| (n - at).min(WAVE_ON + WAVE_FADE))
}

/// Forward crossings of a marker at `p` ticks (`0 ≤ p ≤ d`) in a loop of `d` ticks, playing
/// `a` units of 2⁻⁶⁴ s from the start: the occurrences `k·d + p` in `(0, a]`.
fn crossings(a: i128, p: i128, d: i128) -> u64 {
    let (p, d) = (p << 32, d << 32);
    let c = if p == 0 || p == d {
        a / d
    } else if a >= p {
        (a - p) / d + 1
    } else {
        0
    };
    c as u64
}

/// What a slot's player should show after `n` updates.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Expected {
    phase_ticks: u64,
    loops: i64,
    time: f32,
    /// Marker crossings, per marker.
    events: [u64; MAX_MARKERS],
}

/// A clip's timing in integers: start and duration in ticks, marker positions in ticks.
struct Timing {
    start: i128,
    duration: i128,
    markers: Vec<i128>,
}

impl Timing {
    fn new(entry: &ClipEntry<'_, f32>) -> Timing {
        let start = exact_q32(entry.clip.start());
        let duration = exact_q32(entry.clip.end()) - start;
        let markers = entry.markers.iter().map(|m| exact_q32(m.time) - start).collect();
        Timing { start, duration, markers }
    }

    /// The state after playing the advances of `runs` (units of 2⁻⁶⁴ s, each from the start;
    /// the player keeps the last).
    fn after(&self, runs: impl Iterator<Item = i128>) -> Expected {
        let cycle = self.duration << 32;
        let mut e = Expected { phase_ticks: 0, loops: 0, time: 0.0, events: [0; MAX_MARKERS] };
        let mut last = 0;
        for a in runs {
            e.loops += (a / cycle) as i64;
            for (count, &p) in e.events.iter_mut().zip(&self.markers) {
                *count += crossings(a, p, self.duration);
            }
            last = a;
        }
        e.phase_ticks = ((last % cycle) >> 32) as u64;
        // The exact time is below 2⁵³ units of 2⁻³² s: exact in f64, then rounded once.
        e.time = ((self.start + i128::from(e.phase_ticks)) as f64 / 4_294_967_296.0) as f32;
        e
    }
}

/// Expected state of every slot after `n` updates.
fn expected(timing: &[Timing; Soak::SLOTS], n: u64) -> [Expected; Soak::SLOTS] {
    let dt = exact_q32(DT);
    let unit = dt << 32; // one update at speed 1, in units of 2⁻⁶⁴ s
    let idle = dt * exact_q32(IDLE_SPEED);
    [
        timing[WALK].after(std::iter::once(i128::from(base_frames(WALK, n)) * unit)),
        timing[RUN].after(std::iter::once(i128::from(base_frames(RUN, n)) * unit)),
        timing[WAVE].after(wave_episodes(n).map(|f| i128::from(f) * unit)),
        timing[IDLE].after(std::iter::once(i128::from(n) * idle)),
    ]
}

/// Expected weights after `n` updates, when no fade runs.
fn steady_weights(n: u64) -> [f32; Soak::SLOTS] {
    let crossfades = if n > BASE_OFFSET { (n - BASE_OFFSET - 1) / BASE_PERIOD + 1 } else { 0 };
    let run = crossfades % 2 == 1;
    let wave = n > WAVE_OFFSET && (n - WAVE_OFFSET - 1) % WAVE_PERIOD < WAVE_ON;
    [f32::from(u8::from(!run)), f32::from(u8::from(run)), f32::from(u8::from(wave)), 1.0]
}

/// True when no fade runs after `n` updates (a fade of `f` updates begun before update `b` has
/// ended after update `b + f − 1`).
fn steady(n: u64) -> bool {
    let Some(last) = n.checked_sub(1) else { return true };
    let base = last < BASE_OFFSET || (last - BASE_OFFSET) % BASE_PERIOD >= BASE_FADE - 1;
    let wave = last < WAVE_OFFSET || {
        let q = (last - WAVE_OFFSET) % WAVE_PERIOD;
        !(q < WAVE_FADE - 1 || (WAVE_ON..WAVE_ON + WAVE_FADE - 1).contains(&q))
    };
    base && wave
}

/// The checkpoints: for each simulated hour, the last update count up to its end with no fade
/// running (the schedule's periods do not divide an hour, so they fall at varied clip times).
fn checkpoints() -> [u64; HOURS as usize] {
    core::array::from_fn(|h| (0..=(h as u64 + 1) * HOUR).rev().find(|&n| steady(n)).unwrap())
}

// ------------------------------------------------------------------------------------------
// Setup and comparisons
// ------------------------------------------------------------------------------------------

const MAX_MARKERS: usize = 3;

/// Markers as fractions of each clip's end: `walk` at its start and middle, `run` a quarter in
/// and at its end, `wave` in the middle, `idle` at its start, a third in and its end.
const MARKERS: [&[f32]; Soak::SLOTS] = [&[0.0, 0.5], &[0.25, 1.0], &[0.5], &[0.0, 1.0 / 3.0, 1.0]];

/// The controller with the soak's slots and layers, every weight 0.
fn setup(skel: SkeletonView<'_, f32>, clips: &[ClipEntry<'_, f32>; Soak::SLOTS]) -> Ctl {
    let mut c = Ctl::new();
    for (slot, layer) in [(WALK, BASE_LAYER), (RUN, BASE_LAYER), (WAVE, ARM_LAYER), (IDLE, ADDITIVE_LAYER)] {
        c.assign(SlotId(slot), LayerId(layer), ClipId(slot), clips).unwrap();
    }
    let arm = Channel::named(skel, "r_clavicle", 1).unwrap();
    c.set_layer_mask(ARM_LAYER, skel, &[arm], false).unwrap();
    c.set_layer(ADDITIVE_LAYER, LayerMode::Additive(AdditiveReference::RestPose), ADDITIVE_WEIGHT).unwrap();
    c.player_mut(IDLE).unwrap().set_speed(IDLE_SPEED);
    c
}

fn bits(t: &SoaTransform<f32>) -> [[u32; 4]; 10] {
    let (p, q, s) = (&t.translation, &t.rotation, &t.scale);
    [p.x, p.y, p.z, q.x, q.y, q.z, q.w, s.x, s.y, s.z].map(|a| a.map(f32::to_bits))
}

fn same_bits(a: &[SoaTransform<f32>], b: &[SoaTransform<f32>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| bits(x) == bits(y))
}

fn pose_is_finite(pose: &[SoaTransform<f32>]) -> bool {
    pose.iter().all(|t| (0..4).all(|l| t.lane(l).is_finite()))
}

/// A clip sampled at `time` with a fresh cursor.
fn sample(entry: &ClipEntry<'_, f32>, skel: SkeletonView<'_, f32>, time: f32) -> [SoaTransform<f32>; Soak::SOA] {
    let mut out = [SoaTransform::IDENTITY; Soak::SOA];
    let mut cursor = [0u16; Soak::TRACKS];
    SamplingJob {
        clip: entry.clip,
        time,
        rotation: RotationInterpolation::default(),
        rest_pose: skel.rest_pose(),
        cursor: &mut cursor,
        output: &mut out,
    }
    .run()
    .unwrap();
    out
}

/// The character: its skeleton, the slots' clips with their markers, and their timing.
struct Fixture<'a> {
    skel: SkeletonView<'a, f32>,
    clips: [ClipEntry<'a, f32>; Soak::SLOTS],
    timing: [Timing; Soak::SLOTS],
}

/// Checks the controller after `n` updates against the integer expectations and against a fresh
/// controller seeked to the expected state; returns the expected state.
fn check_checkpoint(
    n: u64,
    ctl: &Ctl,
    scratch: &Scratch,
    pose: &[SoaTransform<f32>; Soak::SOA],
    events: &[[u64; MAX_MARKERS]; Soak::SLOTS],
    f: &Fixture<'_>,
) -> [Expected; Soak::SLOTS] {
    let (skel, clips) = (f.skel, &f.clips);
    let exp = expected(&f.timing, n);
    let weights = steady_weights(n);
    for s in 0..Soak::SLOTS {
        let p = ctl.player(s).unwrap();
        let e = &exp[s];
        assert_eq!(p.phase_ticks(), e.phase_ticks, "frame {n}, slot {s}: position");
        assert_eq!(p.loops(), e.loops, "frame {n}, slot {s}: loops");
        assert_eq!(p.time().to_bits(), e.time.to_bits(), "frame {n}, slot {s}: time {} vs {}", p.time(), e.time);
        assert_eq!(events[s], e.events, "frame {n}, slot {s}: events");
        assert!(!ctl.is_fading(s), "frame {n}, slot {s}: checkpoints fall between fades");
        assert_eq!(ctl.weight(s), Some(weights[s]), "frame {n}, slot {s}: weight");
    }

    // A fresh controller at the expected state: same weights, players seeked to the times.
    let mut fresh = setup(skel, clips);
    for s in 0..Soak::SLOTS {
        fresh.set_weight(s, weights[s]).unwrap();
        fresh.player_mut(s).unwrap().seek(exp[s].time);
        assert_eq!(fresh.player(s).unwrap().time().to_bits(), exp[s].time.to_bits(), "frame {n}, slot {s}: seek");
    }
    let mut out = [SoaTransform::IDENTITY; Soak::SOA];
    let mut fresh_scratch = Scratch::new();
    let mut fresh_events = 0;
    fresh.update(0.0, clips, skel, &mut fresh_scratch, &mut out, |_| fresh_events += 1).unwrap();
    assert_eq!(fresh_events, 0);
    assert!(same_bits(pose, &out), "frame {n}: the pose differs from a fresh controller's");
    for s in (0..Soak::SLOTS).filter(|&s| weights[s] > 0.0) {
        let (a, b) = (scratch.slot_pose(s).unwrap(), fresh_scratch.slot_pose(s).unwrap());
        assert!(same_bits(a, b), "frame {n}, slot {s}: the slot pose differs from a fresh controller's");
        if s != IDLE {
            // Override slots hold their clip's sample (the additive one holds a delta).
            let direct = sample(&clips[s], skel, exp[s].time);
            assert!(same_bits(a, &direct), "frame {n}, slot {s}: the slot pose differs from a fresh sample");
        }
    }
    exp
}

/// Records the weights of the first fade of a kind (incoming and outgoing slot), and requires
/// every later one to repeat them.
struct FadeLog<const N: usize> {
    first: [[u32; 2]; N],
    fades: u64,
}

impl<const N: usize> FadeLog<N> {
    fn new() -> Self {
        FadeLog { first: [[0; 2]; N], fades: 0 }
    }

    /// Frame `j` (0-based) of fade number `k` of this kind: the weights of `slots`.
    fn record(&mut self, k: u64, j: usize, ctl: &Ctl, slots: [usize; 2]) {
        let w = slots.map(|s| ctl.weight(s).unwrap().to_bits());
        if k == 0 {
            self.first[j] = w;
        } else {
            assert_eq!(w, self.first[j], "fade {k}, frame {j}: weights differ from the first fade's");
        }
        self.fades = self.fades.max(k + 1);
    }
}

fn smoothstep(s: f32) -> f32 {
    s * s * (3.0 - 2.0 * s)
}

// ------------------------------------------------------------------------------------------
// The soak
// ------------------------------------------------------------------------------------------

/// The slow tier (`cargo test -- --skip slow::` leaves it out; see the README's Tests table).
mod slow {
    #[test]
    fn controller_soak_24_hours() {
        super::controller_soak_24_hours();
    }
}

/// 24 simulated hours of the controller's schedule, checked as the module documentation says.
fn controller_soak_24_hours() {
    let rig = humanoid_rig();
    let bytes = bake(&rig, &BakeOptions::default()).unwrap().0;
    let asset = Asset::parse(&bytes).unwrap();
    let skeleton: Skeleton<f32, { Soak::SOA }> = asset.skeleton().unwrap().to_skeleton().unwrap();
    assert_eq!(skeleton.num_joints(), Soak::JOINTS);
    let skel = skeleton.view();
    let clip = |name: &str| asset.clip_by_name(name).unwrap_or_else(|| panic!("no clip {name}"));
    let markers: Vec<Vec<Marker<f32>>> = (0..Soak::SLOTS)
        .map(|s| {
            let end = clip(SLOT_CLIPS[s]).end();
            MARKERS[s].iter().enumerate().map(|(i, f)| Marker { time: end * f, id: (10 * s + i) as u32 }).collect()
        })
        .collect();
    let clips: [ClipEntry<'_, f32>; Soak::SLOTS] =
        core::array::from_fn(|s| ClipEntry { clip: clip(SLOT_CLIPS[s]), markers: &markers[s] });
    let timing: [Timing; Soak::SLOTS] = core::array::from_fn(|s| Timing::new(&clips[s]));
    for (s, t) in timing.iter().enumerate() {
        assert!(t.start == 0 && t.duration > 0, "{}: range", SLOT_CLIPS[s]);
        assert!(t.markers.iter().all(|&p| (0..=t.duration).contains(&p)));
    }

    let fixture = Fixture { skel, clips, timing };
    let clips = &fixture.clips;
    let mut ctl = setup(skel, clips);
    ctl.set_weight(WALK, 1.0).unwrap();
    ctl.set_weight(IDLE, 1.0).unwrap();
    let mut scratch = Scratch::new();
    let mut pose = [SoaTransform::IDENTITY; Soak::SOA];
    let mut model = [Mat4::IDENTITY; Soak::JOINTS];
    let mut events = [[0u64; MAX_MARKERS]; Soak::SLOTS];
    let mut total_events = 0u64;
    let mut misattributed = 0u64;
    let mut base_log = FadeLog::<{ BASE_FADE as usize }>::new();
    let mut wave_in_log = FadeLog::<{ WAVE_FADE as usize }>::new();
    let mut wave_out_log = FadeLog::<{ WAVE_FADE as usize }>::new();
    let checkpoint_frames = checkpoints();
    assert_eq!(checkpoint_frames[HOURS as usize - 1], FRAMES, "the last update leaves no fade running");
    let mut checked =
        [[Expected { phase_ticks: 0, loops: 0, time: 0.0, events: [0; MAX_MARKERS] }; Soak::SLOTS]; HOURS as usize];
    let mut next = 0;
    let size = (std::mem::size_of_val(&ctl), std::mem::size_of_val(&scratch));

    // The counter sees this thread's allocations.
    let probe = allocator_calls();
    drop(std::hint::black_box(Box::new(0u64)));
    let after_probe = allocator_calls();
    assert!(after_probe[0] > probe[0] && after_probe[1] > probe[1], "the allocation counter is not counting");

    let calls_before = allocator_calls();
    let started = Instant::now();
    for n in 0..FRAMES {
        apply_schedule(&mut ctl, n);
        ctl.update(DT, clips, skel, &mut scratch, &mut pose, |e: ControllerEvent<f32>| {
            events[e.slot][e.event.marker] += 1;
            total_events += 1;
            misattributed += u64::from(e.clip != e.slot || e.event.reverse);
        })
        .unwrap();
        LocalToModelJob { skeleton: skel, root: None, input: &pose, output: &mut model, from: None, to: None }
            .run()
            .unwrap();
        assert!(pose_is_finite(&pose), "frame {n}: non-finite pose");
        assert!(model.iter().all(Mat4::is_finite), "frame {n}: non-finite model matrix");

        // Fades: the same weights every time, on their curve.
        if n >= BASE_OFFSET && (n - BASE_OFFSET) % BASE_PERIOD < BASE_FADE {
            let (k, j) = ((n - BASE_OFFSET) / BASE_PERIOD, (n - BASE_OFFSET) % BASE_PERIOD);
            let s = ((j + 1) as f32 / (BASE_FADE_MS * HZ) as f32 * 1000.0).min(1.0);
            let to = if k % 2 == 0 { RUN } else { WALK };
            base_log.record(k, j as usize, &ctl, [to, RUN + WALK - to]);
            let w = ctl.weight(to).unwrap();
            assert!((w - smoothstep(s)).abs() < 1.0e-6, "crossfade {k}, frame {j}: {w} vs {}", smoothstep(s));
            assert!((ctl.weight(RUN + WALK - to).unwrap() - (1.0 - smoothstep(s))).abs() < 1.0e-6);
        }
        if n >= WAVE_OFFSET {
            let (k, q) = ((n - WAVE_OFFSET) / WAVE_PERIOD, (n - WAVE_OFFSET) % WAVE_PERIOD);
            let s = |j: u64| ((j + 1) as f32 / (WAVE_FADE_MS * HZ) as f32 * 1000.0).min(1.0);
            if q < WAVE_FADE {
                wave_in_log.record(k, q as usize, &ctl, [WAVE, WAVE]);
                assert!((ctl.weight(WAVE).unwrap() - s(q)).abs() < 1.0e-6, "wave fade-in {k}, frame {q}");
            } else if (WAVE_ON..WAVE_ON + WAVE_FADE).contains(&q) {
                wave_out_log.record(k, (q - WAVE_ON) as usize, &ctl, [WAVE, WAVE]);
                assert!((ctl.weight(WAVE).unwrap() - (1.0 - s(q - WAVE_ON))).abs() < 1.0e-6, "wave fade-out {k}");
            }
        }

        if n + 1 == checkpoint_frames[next] {
            checked[next] = check_checkpoint(n + 1, &ctl, &scratch, &pose, &events, &fixture);
            next = (next + 1).min(checkpoint_frames.len() - 1);
        }
    }
    let wall = started.elapsed();
    let calls = allocator_calls();
    let [allocs, frees, reallocs] = core::array::from_fn(|i| calls[i] - calls_before[i]);

    assert_eq!((allocs, frees, reallocs), (0, 0, 0), "allocator calls inside the soak loop");
    assert_eq!(misattributed, 0, "events reported with the wrong clip or direction");
    assert_eq!((std::mem::size_of_val(&ctl), std::mem::size_of_val(&scratch)), size);
    assert_eq!(total_events, events.iter().flatten().sum::<u64>());
    // Every fade of each kind ran and repeated the first (the logs hold them all).
    assert_eq!(base_log.fades, (FRAMES - BASE_OFFSET).div_ceil(BASE_PERIOD));
    assert_eq!(wave_in_log.fades, (FRAMES - WAVE_OFFSET).div_ceil(WAVE_PERIOD));
    assert!(wave_out_log.fades >= wave_in_log.fades - 1);

    for (h, c) in checked.iter().enumerate() {
        let times: Vec<String> = c.iter().map(|e| format!("{:.6}", e.time)).collect();
        let loops: Vec<String> = c.iter().map(|e| e.loops.to_string()).collect();
        println!(
            "hour {:2}, frame {:7}: times (walk, run, wave, idle) {}, loops {}",
            h + 1,
            checkpoint_frames[h],
            times.join(" "),
            loops.join(" ")
        );
    }
    let per_slot: Vec<u64> = events.iter().map(|e| e.iter().sum()).collect();
    println!(
        "soak: {FRAMES} frames ({HOURS} h at {HZ} Hz, {} crossfades, {} wave fades), {total_events} events \
         (walk, run, wave, idle: {per_slot:?}), {} checkpoints bit-exact, 0 allocations in the loop, \
         controller {} + scratch {} bytes, wall {:.2} s ({:.2} us/frame)",
        base_log.fades,
        wave_in_log.fades + wave_out_log.fades,
        checked.len(),
        size.0,
        size.1,
        wall.as_secs_f64(),
        wall.as_secs_f64() * 1.0e6 / FRAMES as f64,
    );
}
