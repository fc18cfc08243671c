//! The humanoid's clips, authored as LINEAR keys every 1/[`KEY_RATE`] s: the `walk` and `run`
//! locomotion cycles of a [`Gait`], `idle` and the right arm's `wave`.

use std::f32::consts::TAU;

use sinew::math::{Quat, Vec3};

use super::gait::{leg_angles, rx, ry, rz, Gait, ANKLE_HEIGHT, THIGH_OFFSET};
use super::humanoid;
use crate::rig::{ChannelTarget, Interpolation, RigChannel, RigClip};

/// Key rate of the authored clips, in keys per second.
pub const KEY_RATE: f32 = 30.0;
/// Length of the `idle` clip, in seconds.
pub const IDLE_CYCLE: f32 = 3.0;
/// Length of the `wave` clip, in seconds.
pub const WAVE_CYCLE: f32 = 1.2;

/// Key times every 1/[`KEY_RATE`] s from 0 to `duration` (rounded to a whole key).
fn key_times(duration: f32) -> Vec<f32> {
    let n = (duration * KEY_RATE).round().max(1.0) as usize;
    (0..=n).map(|k| k as f32 / KEY_RATE).collect()
}

/// A LINEAR rotation channel of `joint` keyed from `f`, consecutive keys in one hemisphere.
fn rotation_channel(joint: usize, duration: f32, f: impl Fn(f32) -> Quat<f32>) -> RigChannel {
    let times = key_times(duration);
    let mut values = Vec::with_capacity(times.len() * 4);
    let mut prev: Option<Quat<f32>> = None;
    for &t in &times {
        let mut q = f(t).normalize();
        // Keep consecutive keys in the same hemisphere.
        if prev.is_some_and(|p| p.dot(q) < 0.0) {
            q = -q;
        }
        prev = Some(q);
        values.extend_from_slice(&q.to_array());
    }
    RigChannel { joint, target: ChannelTarget::Rotation, interpolation: Interpolation::Linear, times, values }
}

/// A LINEAR translation channel of `joint` keyed from `f`.
fn translation_channel(joint: usize, duration: f32, f: impl Fn(f32) -> Vec3<f32>) -> RigChannel {
    let times = key_times(duration);
    let values = times.iter().flat_map(|&t| f(t).to_array()).collect();
    RigChannel { joint, target: ChannelTarget::Translation, interpolation: Interpolation::Linear, times, values }
}

/// A looping locomotion clip: feet planted while on the ground (see [`Gait`]), arms swinging
/// against the legs, the root moving forward (+Z) at `speed`.
pub(super) fn gait_clip(name: &str, g: &Gait) -> RigClip {
    use humanoid::*;
    let d = g.cycle;
    let g = *g;
    let half = g.stride() * 0.5;
    let left = move |t: f32| g.foot(1.0, t).0 / half;
    let mut ch = vec![
        translation_channel(ROOT, d, move |t| Vec3::new(0.0, 0.0, g.speed * t)),
        translation_channel(HIPS, d, move |t| Vec3::new(0.0, g.hip_height(t) - THIGH_OFFSET.y, 0.0)),
        rotation_channel(HIPS, d, move |t| g.hips_rotation(t)),
        rotation_channel(SPINE, d, move |t| rx(g.lean) * ry(0.6 * g.twist * left(t))),
        rotation_channel(CHEST, d, move |t| ry(0.6 * g.twist * left(t))),
        rotation_channel(HEAD, d, move |t| rx(-0.5 * g.lean) * ry(-0.2 * g.twist * left(t))),
    ];
    for (side, thigh, upper, fore) in
        [(1.0f32, L_THIGH, L_UPPER_ARM, L_FOREARM), (-1.0, R_THIGH, R_UPPER_ARM, R_FOREARM)]
    {
        let forward = move |t: f32| g.foot(side, t).0 / half;
        for k in 0..3 {
            ch.push(rotation_channel(thigh + k, d, move |t| g.leg(side, t)[k]));
        }
        // Arms hang down (about Z), swing against the same-side leg (about X) and bend forward
        // at the elbow (about Y in the T-pose frame).
        ch.push(rotation_channel(upper, d, move |t| rx(g.arm_swing * forward(t)) * rz(-side * 1.3)));
        ch.push(rotation_channel(fore, d, move |t| ry(-side * g.elbow * (1.0 - 0.15 * forward(t)))));
    }
    RigClip { name: name.into(), channels: ch, ..RigClip::default() }
}

/// Height of the thigh joints above the ground while standing in `idle`, in meters (knees a
/// little bent).
const IDLE_HIP_HEIGHT: f32 = 0.885;

/// Standing: breathing in the spine and chest, the head looking around slowly, arms hanging,
/// knees a little bent with the feet flat on the ground.
pub(super) fn idle_clip() -> RigClip {
    use humanoid::*;
    let d = IDLE_CYCLE;
    let phase = move |t: f32| TAU * t / d;
    let height = move |t: f32| IDLE_HIP_HEIGHT + 0.004 * phase(t).sin();
    let mut ch = vec![
        translation_channel(HIPS, d, move |t| Vec3::new(0.0, height(t) - THIGH_OFFSET.y, 0.0)),
        rotation_channel(SPINE, d, move |t| rx(0.02 * phase(t).sin())),
        rotation_channel(CHEST, d, move |t| rx(0.03 * phase(t).sin())),
        rotation_channel(HEAD, d, move |t| ry(0.15 * (0.5 * phase(t)).sin()) * rx(-0.02 * phase(t).sin())),
    ];
    for (side, upper, fore, thigh) in
        [(1.0f32, L_UPPER_ARM, L_FOREARM, L_THIGH), (-1.0, R_UPPER_ARM, R_FOREARM, R_THIGH)]
    {
        ch.push(rotation_channel(upper, d, move |t| {
            rx(0.04 * phase(t).sin()) * rz(-side * (1.25 + 0.03 * phase(t).sin()))
        }));
        ch.push(rotation_channel(fore, d, move |_| ry(-side * 0.2)));
        let leg = move |t: f32| leg_angles(ANKLE_HEIGHT - height(t), 0.0);
        ch.push(rotation_channel(thigh, d, move |t| rx(leg(t).0)));
        ch.push(rotation_channel(thigh + 1, d, move |t| rx(leg(t).1)));
        ch.push(rotation_channel(thigh + 2, d, move |t| rx(-leg(t).0 - leg(t).1)));
    }
    RigClip { name: "idle".into(), channels: ch, ..RigClip::default() }
}

/// Waves the right arm: the shoulder raised a little, the upper arm raised out to the side,
/// the forearm raised and swinging once per cycle, the hand following it. It animates the
/// subtree of the right clavicle only (the joints of the demo scene's upper-body mask).
pub(super) fn wave_clip() -> RigClip {
    use humanoid::*;
    let d = WAVE_CYCLE;
    let phase = move |t: f32| TAU * t / d;
    RigClip {
        name: "wave".into(),
        channels: vec![
            rotation_channel(R_CLAVICLE, d, move |t| rz(-0.2 - 0.03 * phase(t).sin())),
            rotation_channel(R_UPPER_ARM, d, move |t| rz(-0.6 + 0.05 * phase(t).sin()) * ry(0.3)),
            rotation_channel(R_FOREARM, d, move |t| rz(-(0.7 + 0.35 * phase(t).sin()))),
            rotation_channel(R_HAND, d, move |t| rz(-0.25 * (phase(t) - 0.6).sin())),
        ],
        ..RigClip::default()
    }
}
