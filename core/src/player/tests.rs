//! Tests of the player: loop modes, marker crossings, and no drift over 24 hours.

extern crate std;
use std::vec::Vec;

use super::*;
use crate::asset::Asset;
use crate::clip::RotationInterpolation;
use crate::job::SamplingJob;
use crate::math::{SoaTransform, Transform};
use crate::real::Q16;
use crate::skeleton::Skeleton;
use crate::test_support::*;

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
    // Just under the limit is fine (under miri, a shorter step: 2^20 wraps are too slow there).
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
    // At the very end (a finished `Once` player) the position is a whole cycle.
    let mut once = p.clone();
    once.set_mode(LoopMode::Once);
    once.seek(1.0e9);
    assert_eq!(once.normalized(), 1.0);
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
        tracks: std::vec![translation(0, &[0.25, 0.9, 1.55], &[[0.0, 0.0, 0.0], [2.6, -1.3, 0.5], [0.0, 0.0, 1.0]])],
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

#[test]
fn idle_is_the_empty_range_at_zero() {
    assert_eq!(std::format!("{:?}", Player::<f32>::idle()), std::format!("{:?}", Player::<f32>::from_range(0.0, 0.0)));
    assert_eq!(std::format!("{:?}", Player::<Q16>::idle()), std::format!("{:?}", Player::<Q16>::from_range(0.0, 0.0)));
}
