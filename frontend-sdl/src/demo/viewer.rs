//! The model viewer's state: a loaded model, its clip playback (play/pause, scrub, speed, loop
//! mode), a second clip to blend with or crossfade to, and the model's framing.

use std::path::{Path, PathBuf};

use sinew::clip::RotationInterpolation;
use sinew::job::JobError;
use sinew::math::{Mat4, Quat, SoaTransform, Vec3};

use crate::bake::BakeOptions;
use crate::model::{Model, ModelError, Skinning};
use crate::scene::{blend_poses, ground_grid, push_model, Frame};

/// How playback continues past the end of a clip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopMode {
    /// Wrap to the start.
    Loop,
    /// Stop at the end.
    Once,
    /// Reverse at each end.
    PingPong,
}

impl LoopMode {
    /// The next mode (Loop → Once → PingPong → Loop).
    #[must_use]
    pub fn next(self) -> LoopMode {
        match self {
            Self::Loop => Self::Once,
            Self::Once => Self::PingPong,
            Self::PingPong => Self::Loop,
        }
    }
    /// Display name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Loop => "loop",
            Self::Once => "once",
            Self::PingPong => "ping-pong",
        }
    }
}

/// A clip's playhead.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Playhead {
    /// Clip index.
    pub clip: usize,
    /// Time in the clip, in seconds (within its range).
    pub time: f32,
    /// +1 forward, −1 backward (ping-pong).
    pub direction: f32,
}

/// Wraps `t` into `[start, end]` by `mode`, flipping `direction` at the ends in ping-pong.
/// Returns the wrapped time.
#[must_use]
pub fn wrap_time(t: f32, start: f32, end: f32, mode: LoopMode, direction: &mut f32) -> f32 {
    let len = end - start;
    if len.is_nan() || len <= 0.0 || !t.is_finite() {
        return start;
    }
    match mode {
        LoopMode::Loop => start + (t - start).rem_euclid(len),
        LoopMode::Once => t.clamp(start, end),
        LoopMode::PingPong => {
            // Each crossing of an end reflects the playhead and reverses it.
            let x = (t - start) / len;
            let k = x.floor();
            let frac = x - k;
            if (k as i64).rem_euclid(2) == 1 {
                *direction = -*direction;
                start + (1.0 - frac) * len
            } else {
                start + frac * len
            }
        }
    }
}

/// Crossfade length, in seconds.
pub const CROSSFADE_SECONDS: f32 = 0.5;

/// The viewer.
#[derive(Debug)]
pub struct Viewer {
    /// The model.
    pub model: Model,
    /// The file it came from.
    pub path: PathBuf,
    /// The md5 animation loaded with it.
    pub anim: Option<PathBuf>,
    /// The model is Z-up (md5) and is turned to Y-up.
    pub z_up: bool,
    /// The primary clip (`None`: the model has no clips; the rest pose is shown).
    pub primary: Option<Playhead>,
    /// A second clip blended in with [`Viewer::weight`].
    pub secondary: Option<Playhead>,
    /// Weight of the secondary clip, 0 to 1.
    pub weight: f32,
    /// A crossfade to the secondary clip is running.
    pub fading: bool,
    /// Playing (else paused).
    pub playing: bool,
    /// Playback speed factor.
    pub speed: f32,
    /// Loop mode.
    pub loop_mode: LoopMode,
    /// Center of the bind-pose bounds, in world space.
    pub center: Vec3<f32>,
    /// Radius of the bind-pose bounds.
    pub radius: f32,
    /// Lowest point of the bind-pose bounds (the ground).
    pub floor: f32,
}

fn is_md5(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("md5mesh"))
}

impl Viewer {
    /// Loads a model, baking imported files with palettes of at most `palette` joints and 4
    /// influences.
    ///
    /// # Errors
    ///
    /// The [`ModelError`] of a file that cannot be loaded.
    pub fn load(path: &Path, anim: Option<&Path>, palette: usize) -> Result<Viewer, ModelError> {
        let opts = BakeOptions { palette: Some(palette), max_influences: 4, ..BakeOptions::default() };
        let model = Model::load(path, anim, &opts)?;
        let primary = (model.asset().num_clips() > 0).then_some(Playhead { clip: 0, time: 0.0, direction: 1.0 });
        let mut v = Viewer {
            model,
            path: path.to_path_buf(),
            anim: anim.map(Path::to_path_buf),
            z_up: is_md5(path),
            primary,
            secondary: None,
            weight: 0.0,
            fading: false,
            playing: true,
            speed: 1.0,
            loop_mode: LoopMode::Loop,
            center: Vec3::ZERO,
            radius: 1.0,
            floor: 0.0,
        };
        if let Some(p) = v.primary.as_mut() {
            p.time = v.model.asset().clip(p.clip).map_or(0.0, |c| c.start());
        }
        v.measure_bounds();
        Ok(v)
    }

    /// Object-to-world matrix (Z-up models turned to Y-up).
    #[must_use]
    pub fn world(&self) -> Mat4<f32> {
        if self.z_up {
            Mat4::from_trs(Vec3::ZERO, Quat::from_axis_angle(Vec3::X, -std::f32::consts::FRAC_PI_2), Vec3::ONE)
        } else {
            Mat4::IDENTITY
        }
    }

    /// Recomputes the bind-pose bounds in world space (after a change of up axis).
    pub fn measure_bounds(&mut self) {
        let world = self.world();
        let rest = self.model.skeleton().rest_pose().to_vec();
        let mut points: Vec<Vec3<f32>> = Vec::new();
        let mut frame = Frame::default();
        if push_model(&mut frame, &self.model, 0, &rest, world, Skinning::Lbs, None, true).is_ok() {
            for o in &frame.objects {
                for part in o.skin_cpu().unwrap_or_default() {
                    points.extend(part.positions.iter().map(|&p| world.transform_point3(p)));
                }
            }
            if points.is_empty() {
                points.extend(frame.bones.iter().flatten());
            }
        }
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for p in points.into_iter().filter(|p| p.is_finite()) {
            lo = lo.min(p);
            hi = hi.max(p);
        }
        if lo.x <= hi.x {
            self.center = (lo + hi) * 0.5;
            self.radius = ((hi - lo).length() * 0.5).max(1.0e-3);
            self.floor = lo.y;
        } else {
            self.center = Vec3::ZERO;
            self.radius = 1.0;
            self.floor = 0.0;
        }
    }

    /// Number of clips.
    #[must_use]
    pub fn num_clips(&self) -> usize {
        self.model.asset().num_clips()
    }

    /// Name of clip `i`.
    #[must_use]
    pub fn clip_name(&self, i: usize) -> String {
        self.model.asset().clip(i).map(|c| c.name().to_string()).unwrap_or_default()
    }

    /// `(start, end)` of clip `i`.
    #[must_use]
    pub fn clip_range(&self, i: usize) -> (f32, f32) {
        self.model.asset().clip(i).map_or((0.0, 0.0), |c| (c.start(), c.end()))
    }

    /// Switches the primary clip to `clip` at its start (no-op past the clip count).
    pub fn select(&mut self, clip: usize) {
        if clip < self.num_clips() {
            self.primary = Some(Playhead { clip, time: self.clip_range(clip).0, direction: 1.0 });
            self.fading = false;
        }
    }

    /// Steps the primary clip by `delta` clips (wrapping).
    pub fn step_clip(&mut self, delta: i64) {
        let n = self.num_clips() as i64;
        if n > 0 {
            let cur = self.primary.map_or(0, |p| p.clip as i64);
            self.select((cur + delta).rem_euclid(n) as usize);
        }
    }

    /// Cycles the secondary (blend) clip: none → 0 → 1 → … → none.
    pub fn cycle_secondary(&mut self) {
        let n = self.num_clips();
        let next = match self.secondary {
            None => 0,
            Some(p) => p.clip + 1,
        };
        self.fading = false;
        self.secondary = (next < n).then(|| Playhead { clip: next, time: self.clip_range(next).0, direction: 1.0 });
    }

    /// Starts a crossfade to the secondary clip, or to the clip after the primary when no
    /// secondary is chosen.
    pub fn crossfade(&mut self) {
        let n = self.num_clips();
        if n == 0 {
            return;
        }
        if self.secondary.is_none() {
            let next = self.primary.map_or(0, |p| (p.clip + 1) % n);
            self.secondary = Some(Playhead { clip: next, time: self.clip_range(next).0, direction: 1.0 });
            self.weight = 0.0;
        }
        self.fading = true;
    }

    /// Changes the blend weight by `delta` (clamped to 0..1).
    pub fn nudge_weight(&mut self, delta: f32) {
        self.weight = (self.weight + delta).clamp(0.0, 1.0);
        self.fading = false;
    }

    /// Moves both playheads by `dt` seconds of clip time (respecting direction and loop
    /// mode); `dt` may be negative (scrubbing).
    pub fn seek_by(&mut self, dt: f32) {
        let mode = self.loop_mode;
        for ph in [&mut self.primary, &mut self.secondary].into_iter().flatten() {
            let (s, e) = self.model.asset().clip(ph.clip).map_or((0.0, 0.0), |c| (c.start(), c.end()));
            let mut dir = ph.direction;
            ph.time = wrap_time(ph.time + dt * ph.direction, s, e, mode, &mut dir);
            ph.direction = dir;
        }
    }

    /// Advances playback by `dt` seconds of wall time (speed applied) and the crossfade.
    pub fn advance(&mut self, dt: f32) {
        if !(dt.is_finite() && dt > 0.0) {
            return;
        }
        if self.playing {
            self.seek_by(dt * self.speed);
        }
        if self.fading {
            self.weight += dt / CROSSFADE_SECONDS;
            if self.weight >= 1.0 {
                self.primary = self.secondary.take();
                self.weight = 0.0;
                self.fading = false;
            }
        }
    }

    /// The local pose now: the primary clip (or the rest pose), blended with the secondary
    /// by the weight.
    ///
    /// # Errors
    ///
    /// A [`JobError`] when a clip does not fit the skeleton.
    pub fn pose(&self) -> Result<Vec<SoaTransform<f32>>, JobError> {
        let rot = RotationInterpolation::NlerpCorrected;
        let sample = |p: Option<Playhead>| -> Result<Vec<SoaTransform<f32>>, JobError> {
            let mut pose = Vec::new();
            self.model.sample(p.map(|p| p.clip), p.map_or(0.0, |p| p.time), rot, &mut Vec::new(), &mut pose)?;
            Ok(pose)
        };
        let mut pose = sample(self.primary)?;
        if let (Some(sec), true) = (self.secondary, self.weight > 0.0) {
            let other = sample(Some(sec))?;
            let base = pose.clone();
            blend_poses(&[(&base, 1.0 - self.weight), (&other, self.weight)], &mut pose);
        }
        Ok(pose)
    }

    /// What to draw now: the model (as model index 0), its bones when `bones`, and a ground
    /// grid under it.
    ///
    /// # Errors
    ///
    /// As [`Viewer::pose`].
    pub fn frame(&self, skinning: Skinning, bones: bool) -> Result<Frame<'_>, JobError> {
        let pose = self.pose()?;
        let mut f = Frame::default();
        push_model(&mut f, &self.model, 0, &pose, self.world(), skinning, None, bones)?;
        let step = grid_step(self.radius);
        let half = (self.radius * 1.5 / step).ceil() * step;
        let (cx, cz) = ((self.center.x / step).round() * step, (self.center.z / step).round() * step);
        f.grid = ground_grid(cx - half, cx + half, cz - half, cz + half, step)
            .into_iter()
            .map(|l| l.map(|p| Vec3::new(p.x, self.floor, p.z)))
            .collect();
        Ok(f)
    }
}

/// A round grid spacing for a model of `radius`: 1, 2 or 5 times a power of ten, about a
/// fifth of the radius.
#[must_use]
pub fn grid_step(radius: f32) -> f32 {
    let target = (radius / 5.0).max(1.0e-4);
    let p = 10f32.powf(target.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * p).find(|&s| s >= target).unwrap_or(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_modes_wrap_as_named() {
        let mut d = 1.0;
        assert!((wrap_time(2.5, 0.0, 1.0, LoopMode::Loop, &mut d) - 0.5).abs() < 1e-6);
        assert!((wrap_time(-0.25, 0.0, 1.0, LoopMode::Loop, &mut d) - 0.75).abs() < 1e-6);
        assert_eq!(wrap_time(3.0, 0.0, 1.0, LoopMode::Once, &mut d), 1.0);
        assert_eq!(wrap_time(-3.0, 0.0, 1.0, LoopMode::Once, &mut d), 0.0);
        // Ping-pong: past the end comes back and turns around.
        let mut d = 1.0;
        assert!((wrap_time(1.25, 0.0, 1.0, LoopMode::PingPong, &mut d) - 0.75).abs() < 1e-6);
        assert_eq!(d, -1.0);
        // Going backward past the start turns forward again.
        let t = wrap_time(0.75 - 1.0, 0.0, 1.0, LoopMode::PingPong, &mut d);
        assert!((t - 0.25).abs() < 1e-6, "{t}");
        assert_eq!(d, 1.0);
        assert_eq!(wrap_time(f32::NAN, 0.5, 1.0, LoopMode::Loop, &mut d), 0.5);
        assert_eq!(wrap_time(3.0, 1.0, 1.0, LoopMode::Loop, &mut d), 1.0);
    }

    #[test]
    fn grid_steps_are_round() {
        assert_eq!(grid_step(5.0), 1.0);
        assert_eq!(grid_step(6.0), 2.0);
        assert!((grid_step(0.9) - 0.2).abs() < 1e-6);
        assert!((grid_step(40.0) - 10.0).abs() < 1e-4);
    }
}
