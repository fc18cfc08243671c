//! Root-motion extraction: [`Motion`] (a planar rigid motion and its algebra), [`MotionBlend`],
//! [`sample_joint`] and [`RootMotionTracker`] (see the module documentation for the math).

use crate::clip::{Clip, ClipTime, RotationInterpolation, Target};
use crate::math::{ops, Quat, Transform, Vec3};
use crate::real::Real;

/// Which parts of the root joint's local transform are root motion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RootMotionSettings {
    /// The root joint (index into the skeleton), usually 0 (the hips or a dedicated root).
    pub joint: usize,
    /// Extract the translation along X, Y, Z (of the joint's parent space). Default: X and Z.
    pub translation: [bool; 3],
    /// Extract the rotation about +Y (the twist of the joint's rotation about Y). Default: true.
    pub yaw: bool,
}

impl Default for RootMotionSettings {
    fn default() -> Self {
        RootMotionSettings { joint: 0, translation: [true, false, true], yaw: true }
    }
}

/// A planar rigid motion: rotate by `yaw` about +Y, then translate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Motion<R> {
    /// Translation (metres, or the clip's unit), in the frame the motion starts from.
    pub translation: Vec3<R>,
    /// Rotation about +Y, radians, in `[-π, π]`.
    pub yaw: R,
}

impl<R: Real> Default for Motion<R> {
    fn default() -> Self {
        Self::IDENTITY
    }
}

/// `angle` wrapped into `[-π, π]`.
#[inline]
fn wrap_angle<R: Real>(angle: R) -> R {
    let two_pi = R::PI + R::PI;
    if angle > R::PI || angle < -R::PI {
        // Round to the nearest whole turn.
        let turns = angle / two_pi;
        let k = if turns >= R::ZERO { (turns + R::HALF).trunc_i32() } else { (turns - R::HALF).trunc_i32() };
        (angle - R::from_i32(k) * two_pi).clamp(-R::PI, R::PI)
    } else {
        angle
    }
}

/// `v` rotated by `yaw` about +Y (right-handed: +Z turns towards +X).
#[inline]
fn rotate_y<R: Real>(v: Vec3<R>, yaw: R) -> Vec3<R> {
    let (s, c) = ops::sin_cos(yaw);
    Vec3::new(c * v.x + s * v.z, v.y, c * v.z - s * v.x)
}

impl<R: Real> Motion<R> {
    /// No motion.
    pub const IDENTITY: Self = Motion { translation: Vec3::ZERO, yaw: R::ZERO };

    /// A motion from its parts (`yaw` is wrapped into `[-π, π]`).
    #[must_use]
    pub fn new(translation: Vec3<R>, yaw: R) -> Self {
        Motion { translation, yaw: wrap_angle(yaw) }
    }

    /// The root-motion part of a root joint's local transform: the selected translation axes
    /// (others 0) and, if selected, the twist of its rotation about +Y (`2·atan2(q.y, q.w)`).
    #[must_use]
    pub fn extract(t: &Transform<R>, settings: &RootMotionSettings) -> Self {
        let pick = |on: bool, v: R| if on { v } else { R::ZERO };
        let [x, y, z] = settings.translation;
        let translation = Vec3::new(pick(x, t.translation.x), pick(y, t.translation.y), pick(z, t.translation.z));
        let yaw = if settings.yaw { wrap_angle(R::TWO * ops::atan2(t.rotation.y, t.rotation.w)) } else { R::ZERO };
        Motion { translation, yaw }
    }

    /// `self` then `next` (expressed in `self`'s frame).
    #[must_use]
    pub fn then(self, next: Self) -> Self {
        Motion {
            translation: self.translation + rotate_y(next.translation, self.yaw),
            yaw: wrap_angle(self.yaw + next.yaw),
        }
    }

    /// The inverse motion.
    #[must_use]
    pub fn inverse(self) -> Self {
        Motion { translation: -rotate_y(self.translation, -self.yaw), yaw: -self.yaw }
    }

    /// The motion from `self` to `to`: `self⁻¹ · to`, in `self`'s frame.
    #[must_use]
    pub fn delta_to(self, to: Self) -> Self {
        self.inverse().then(to)
    }

    /// `self` composed `n` times (`n < 0`: the inverse `|n|` times), by repeated squaring.
    #[must_use]
    pub fn pow(self, n: i64) -> Self {
        let mut base = if n < 0 { self.inverse() } else { self };
        let mut n = n.unsigned_abs();
        let mut acc = Self::IDENTITY;
        while n > 0 {
            if n & 1 == 1 {
                acc = acc.then(base);
            }
            base = base.then(base);
            n >>= 1;
        }
        acc
    }

    /// Length of the horizontal (XZ) translation: the distance travelled on the ground.
    #[must_use]
    pub fn planar_length(&self) -> R {
        Vec3::new(self.translation.x, R::ZERO, self.translation.z).length()
    }

    /// The rotation about +Y as a quaternion.
    #[must_use]
    pub fn rotation(&self) -> Quat<R> {
        let (s, c) = ops::sin_cos(self.yaw * R::HALF);
        Quat::new(R::ZERO, s, R::ZERO, c)
    }

    /// Applies the motion to a transform in the same space: `self · t`.
    #[must_use]
    pub fn apply(&self, t: &Transform<R>) -> Transform<R> {
        Transform {
            translation: self.translation + rotate_y(t.translation, self.yaw),
            rotation: (self.rotation() * t.rotation).normalize(),
            scale: t.scale,
        }
    }
}

/// The weighted mean of several clips' root-motion deltas.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MotionBlend<R> {
    translation: Vec3<R>,
    yaw: R,
    weight: R,
}

impl<R: Real> Default for MotionBlend<R> {
    fn default() -> Self {
        MotionBlend { translation: Vec3::ZERO, yaw: R::ZERO, weight: R::ZERO }
    }
}

impl<R: Real> MotionBlend<R> {
    /// An empty blend.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds a delta with weight `w` (values ≤ 0 or NaN are ignored).
    pub fn add(&mut self, delta: Motion<R>, w: R) {
        if w > R::ZERO {
            self.translation += delta.translation * w;
            self.yaw += delta.yaw * w;
            self.weight += w;
        }
    }
    /// The weighted mean (identity when nothing was added).
    #[must_use]
    pub fn finish(&self) -> Motion<R> {
        if self.weight > R::ZERO {
            let inv = self.weight.recip();
            Motion::new(self.translation * inv, self.yaw * inv)
        } else {
            Motion::IDENTITY
        }
    }
}

/// Samples one joint of a clip at clip time `time` (seconds, clamped into the clip's range):
/// its tracks where it has them, `rest` elsewhere. Costs a scan of the track directory and a
/// binary search per track of the joint (no cursor).
#[must_use]
pub fn sample_joint<R: Real>(
    clip: &Clip<'_>,
    joint: usize,
    time: R,
    rest: Transform<R>,
    rotation: RotationInterpolation,
) -> Transform<R> {
    let ct = ClipTime::new(clip);
    let t = time.max(R::from_f32(clip.start())).min(R::from_f32(clip.end()));
    let mut out = rest;
    for i in 0..clip.num_tracks() {
        let Some(info) = clip.track(i) else { continue };
        if info.joint as usize != joint {
            continue;
        }
        let mut cursor = 0u16;
        let (_, _, v) = clip.sample_track(i, t, &ct, &mut cursor, rotation);
        match info.target {
            Target::Translation => out.translation = Vec3::new(v[0], v[1], v[2]),
            Target::Rotation => out.rotation = Quat::from_array(v),
            Target::Scale => out.scale = Vec3::new(v[0], v[1], v[2]),
        }
    }
    out
}

/// Root motion of one playing clip: its start motion, one loop's displacement, and the motion
/// at the previous update.
///
/// # Examples
///
/// The baked character's walk covers 1.2 m per one-second loop. A second and a half of play
/// moves the character 1.8 m, across the loop's wrap, while the root is kept in place:
///
/// ```
/// use sinew::asset::Asset;
/// use sinew::clip::RotationInterpolation;
/// use sinew::player::Player;
/// use sinew::root_motion::{sample_joint, Motion, RootMotionSettings, RootMotionTracker};
/// use sinew::skeleton::Skeleton;
///
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));
/// let asset = Asset::parse(bytes)?;
/// let skeleton: Skeleton<f32, 6> = asset.skeleton().ok_or("no skeleton")?.to_skeleton()?;
/// let walk = asset.clip_by_name("walk").ok_or("no walk")?;
///
/// let settings = RootMotionSettings::default(); // joint 0, its X and Z translation and its yaw
/// let rest = skeleton.view().rest_transform(settings.joint).ok_or("no root")?;
/// let lerp = RotationInterpolation::default();
/// let mut tracker = RootMotionTracker::from_clip(&walk, settings, rest, lerp);
/// assert!((tracker.loop_delta().planar_length() - 1.2).abs() < 1e-4);
///
/// let mut player = Player::<f32>::new(&walk);
/// let mut world = Motion::IDENTITY; // where the character stands
/// for _ in 0..90 {
///     let step = player.advance(1.0 / 60.0, &[], |_| {})?;
///     let root = sample_joint(&walk, settings.joint, player.time(), rest, lerp);
///     world = world.then(tracker.update(Motion::extract(&root, &settings), step.wraps));
///     // The pose keeps the root where it started; `world` carries the character instead.
///     assert!(tracker.remove(&root).translation.z.abs() < 1e-5);
/// }
/// assert!((world.translation.z - 1.8).abs() < 1e-3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RootMotionTracker<R> {
    /// What is extracted.
    pub settings: RootMotionSettings,
    start: Motion<R>,
    loop_delta: Motion<R>,
    previous: Motion<R>,
}

impl<R: Real> RootMotionTracker<R> {
    /// A tracker from the root's motion at the clip's start and end; the previous motion is
    /// the start's.
    #[must_use]
    pub fn new(settings: RootMotionSettings, start: Motion<R>, end: Motion<R>) -> Self {
        RootMotionTracker { settings, start, loop_delta: start.delta_to(end), previous: start }
    }

    /// A tracker for `clip`, sampling the root joint at the clip's start and end (`rest` is the
    /// root's rest transform, used where the clip has no track).
    #[must_use]
    pub fn from_clip(
        clip: &Clip<'_>,
        settings: RootMotionSettings,
        rest: Transform<R>,
        rotation: RotationInterpolation,
    ) -> Self {
        let at =
            |t: f32| Motion::extract(&sample_joint(clip, settings.joint, R::from_f32(t), rest, rotation), &settings);
        Self::new(settings, at(clip.start()), at(clip.end()))
    }

    /// One loop's displacement `L = M_s⁻¹ · M_e`.
    #[must_use]
    pub fn loop_delta(&self) -> Motion<R> {
        self.loop_delta
    }

    /// Restarts from `current` (after a seek): the next update measures from there.
    pub fn reset(&mut self, current: Motion<R>) {
        self.previous = current;
    }

    /// The displacement since the previous update, given the root's motion `current` at the new
    /// time and the loop wraps crossed ([`Step::wraps`](crate::player::Step::wraps)).
    pub fn update(&mut self, current: Motion<R>, wraps: i64) -> Motion<R> {
        let delta = if wraps == 0 {
            self.previous.delta_to(current)
        } else {
            let s = self.start;
            self.previous.inverse().then(s).then(self.loop_delta.pow(wraps)).then(s.inverse()).then(current)
        };
        self.previous = current;
        delta
    }

    /// The in-place root transform: `M(p)⁻¹ · M_s · root`, where `M(p)` is the motion extracted
    /// from `root` itself.
    #[must_use]
    pub fn remove(&self, root: &Transform<R>) -> Transform<R> {
        let current = Motion::extract(root, &self.settings);
        current.inverse().then(self.start).apply(root)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec::Vec;

    use super::*;
    use crate::asset::Asset;
    use crate::player::{LoopMode, Player};
    use crate::real::Q16;
    use crate::test_support::*;

    fn close<R: Real>(a: Motion<R>, b: Motion<R>, tol: f32) -> bool {
        (a.translation - b.translation).max_abs().to_f32() <= tol && wrap_angle(a.yaw - b.yaw).abs().to_f32() <= tol
    }

    #[test]
    fn motion_algebra() {
        let a = Motion::new(Vec3::new(1.0f32, 0.5, 2.0), 0.7);
        let b = Motion::new(Vec3::new(-0.3f32, 0.0, 1.0), -1.9);
        assert!(close(a.then(a.inverse()), Motion::IDENTITY, 1.0e-6));
        assert!(close(a.delta_to(b), a.inverse().then(b), 0.0));
        assert!(close(a.then(b).then(a), a.then(b.then(a)), 1.0e-6), "associative");
        let mut acc = Motion::IDENTITY;
        for n in 0..12i64 {
            assert!(close(a.pow(n), acc, 1.0e-5), "pow {n}");
            assert!(close(a.pow(-n), acc.inverse(), 1.0e-5), "pow -{n}");
            acc = acc.then(a);
        }
        // Yaw wraps into [-π, π].
        assert!((Motion::new(Vec3::ZERO, 7.0f32).yaw - (7.0 - 2.0 * core::f32::consts::PI)).abs() < 1.0e-6);
        // Extraction: translation axes and the twist about Y.
        let t = Transform {
            translation: Vec3::new(1.0f32, 2.0, 3.0),
            rotation: Quat::from_axis_angle(Vec3::Y, 0.4) * Quat::from_axis_angle(Vec3::X, 0.3),
            scale: Vec3::ONE,
        };
        let m = Motion::extract(&t, &RootMotionSettings::default());
        assert_eq!(m.translation, Vec3::new(1.0, 0.0, 3.0));
        assert!((m.yaw - 0.4).abs() < 1.0e-6);
        let none = RootMotionSettings { translation: [false; 3], yaw: false, ..Default::default() };
        assert_eq!(Motion::extract(&t, &none), Motion::IDENTITY);
        // Applying a motion to a transform rotates and moves it.
        let q = Motion::new(Vec3::new(1.0f32, 0.0, 0.0), core::f32::consts::FRAC_PI_2);
        let moved = q.apply(&Transform { translation: Vec3::new(0.0, 0.0, 1.0), ..Transform::IDENTITY });
        assert!((moved.translation - Vec3::new(2.0, 0.0, 0.0)).max_abs() < 1.0e-6);
    }

    /// One joint walking +Z 2 m per 1 s loop and turning `turn` radians about Y, with a vertical
    /// bob the default settings leave in the pose.
    fn walk(turn: f32) -> Vec<u8> {
        let times = [0.0f32, 0.25, 0.5, 0.75, 1.0];
        let tr: Vec<[f32; 3]> = times.iter().map(|&t| [0.1, 1.0 + 0.05 * (t * 12.0).sin(), 2.0 * t]).collect();
        let rot: Vec<[f32; 4]> = times
            .iter()
            .map(|&t| {
                let h = turn * t * 0.5;
                [0.0, h.sin(), 0.0, h.cos()]
            })
            .collect();
        let clip = ClipSpec {
            name: "walk",
            start: 0.0,
            end: 1.0,
            tracks: std::vec![translation(0, &times, &tr), rotation(0, &times, &rot)],
        };
        build(&[-1], &[Transform::IDENTITY], &["root"], &[clip])
    }

    /// Plays `seconds` at `hz` and speed `speed`; returns the accumulated motion and the in-place
    /// root translations seen.
    fn play<R: Real>(bytes: &[u8], seconds: u32, hz: u32, speed: R) -> (Motion<R>, Vec<Vec3<R>>) {
        let asset = Asset::parse(bytes).unwrap();
        let clip = asset.clip(0).unwrap();
        let settings = RootMotionSettings::default();
        let rot = RotationInterpolation::default();
        let mut tracker = RootMotionTracker::from_clip(&clip, settings, Transform::IDENTITY, rot);
        let mut player = Player::<R>::new(&clip);
        player.set_speed(speed);
        let mut total = Motion::IDENTITY;
        let mut in_place = Vec::new();
        // Under miri, an eighth of the rate (8 Hz for 64 Hz, 7 Hz for 60 Hz): the same loops.
        let hz = if cfg!(miri) { hz / 8 } else { hz };
        let dt = R::ratio(1, hz as i32);
        for _ in 0..seconds * hz {
            let step = player.advance(dt, &[], |_| {}).unwrap();
            let root = sample_joint(&clip, 0, player.time(), Transform::IDENTITY, rot);
            let delta = tracker.update(Motion::extract(&root, &settings), step.wraps);
            total = total.then(delta);
            in_place.push(tracker.remove(&root).translation);
        }
        (total, in_place)
    }

    #[test]
    fn n_loops_equal_n_times_one_loop() {
        let straight = walk(0.0);
        // Forward, 10 loops at 64 Hz (exact steps), and at 60 Hz over 7 loops.
        for (secs, hz) in [(10, 64), (7, 60)] {
            let (total, in_place) = play::<f32>(&straight, secs, hz, 1.0);
            let expected = Vec3::new(0.0, 0.0, 2.0 * secs as f32);
            let err = (total.translation - expected).max_abs();
            assert!(err < 1.0e-4 * secs as f32, "{secs} loops at {hz} Hz: {total:?}");
            // In place: the extracted axes keep the start values, the bob stays.
            for t in &in_place {
                assert!((t.x - 0.1).abs() < 1.0e-5 && t.z.abs() < 1.0e-5, "{t:?}");
            }
            assert!(in_place.iter().any(|t| (t.y - 1.0).abs() > 0.01));
        }
        // Backwards: minus the same.
        let (total, _) = play::<f32>(&straight, 5, 64, -1.0);
        assert!((total.translation - Vec3::new(0.0, 0.0, -10.0)).max_abs() < 1.0e-4, "{total:?}");
        // Turning a quarter per loop: four loops walk a square back to the start, and N loops
        // equal the loop displacement to the power N.
        let turning = walk(core::f32::consts::FRAC_PI_2);
        let asset = Asset::parse(&turning).unwrap();
        let rot = RotationInterpolation::default();
        let one = RootMotionTracker::<f32>::from_clip(
            &asset.clip(0).unwrap(),
            RootMotionSettings::default(),
            Transform::IDENTITY,
            rot,
        )
        .loop_delta();
        assert!((one.yaw - core::f32::consts::FRAC_PI_2).abs() < 1.0e-5);
        for loops in [1, 3, 4, 8] {
            let (total, _) = play::<f32>(&turning, loops, 64, 1.0);
            assert!(close(total, one.pow(loops as i64), 2.0e-4), "{loops}: {total:?} vs {:?}", one.pow(loops as i64));
        }
        let (square, _) = play::<f32>(&turning, 4, 64, 1.0);
        assert!(close(square, Motion::IDENTITY, 2.0e-4), "{square:?}");
        // Q16: the same straight walk within fixed-point steps.
        let (total, _) = play::<Q16>(&straight, 10, 64, Q16::ONE);
        let err = (total.translation.z.to_f32() - 20.0).abs();
        assert!(err < 2.0e-3, "Q16 error {err}");
    }

    #[test]
    fn ping_pong_and_once_need_no_wraps() {
        let bytes = walk(0.0);
        let asset = Asset::parse(&bytes).unwrap();
        let clip = asset.clip(0).unwrap();
        let settings = RootMotionSettings::default();
        let rot = RotationInterpolation::default();
        for (mode, expected_z) in [(LoopMode::PingPong, 0.5f32), (LoopMode::Once, 2.0)] {
            let mut tracker = RootMotionTracker::from_clip(&clip, settings, Transform::IDENTITY, rot);
            let mut player = Player::<f32>::new(&clip);
            player.set_mode(mode);
            let mut total = Motion::IDENTITY;
            for _ in 0..(2.25 * 64.0) as usize {
                let step = player.advance(1.0 / 64.0, &[], |_| {}).unwrap();
                let root = sample_joint(&clip, 0, player.time(), Transform::IDENTITY, rot);
                total = total.then(tracker.update(Motion::extract(&root, &settings), step.wraps));
            }
            assert!((total.translation.z - expected_z).abs() < 1.0e-5, "{mode:?}: {total:?}");
        }
    }

    #[test]
    fn blended_deltas_average_by_weight() {
        let mut b = MotionBlend::new();
        b.add(Motion::new(Vec3::new(0.0f32, 0.0, 2.0), 0.2), 1.0);
        b.add(Motion::new(Vec3::new(0.0f32, 0.0, 4.0), -0.2), 3.0);
        b.add(Motion::new(Vec3::new(100.0f32, 0.0, 0.0), 1.0), 0.0);
        b.add(Motion::new(Vec3::new(100.0f32, 0.0, 0.0), 1.0), f32::NAN);
        let m = b.finish();
        assert!((m.translation.z - 3.5).abs() < 1.0e-6 && (m.yaw + 0.1).abs() < 1.0e-6, "{m:?}");
        assert_eq!(MotionBlend::<f32>::new().finish(), Motion::IDENTITY);
    }
}
