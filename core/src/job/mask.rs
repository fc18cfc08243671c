//! Partial-skeleton masks: per-joint weights that restrict a blending layer to part of the body
//! (the upper body from the spine up, one arm), with a soft edge.
//!
//! A [`Channel`] selects joints: the subtree of a start joint, or an inclusive index range that
//! starts at a joint (meant for a depth-first run of joints, such as a subtree without some of its
//! last branches). Inside the channel, a joint's *depth* is the number of parent steps from it up
//! to the channel's top: 0 for a joint whose parent is outside the channel (the start joint), its
//! parent's depth + 1 otherwise. Its weight ramps over the first `fade_in` levels:
//!
//! ```text
//! weight(depth) = min(1, (depth + 1) / (fade_in + 1))      0 outside the channel
//! ```
//!
//! so with `fade_in = 0` every joint of the channel weighs 1; with `fade_in = 2` the start joint
//! weighs 1/3, its children 2/3 and everything deeper 1. Several channels combine by taking the
//! largest weight; `invert` turns the mask into `1 − weight` (the rest of the body).
//!
//! [`MaskJob`] writes the weights in the SoA layout of
//! [`Layer::joint_weights`](crate::job::blending::Layer::joint_weights): one `[R; 4]` per SoA
//! element, lane `j % 4` of element `j / 4` for joint `j`; padding lanes get 0.

use crate::job::JobError;
use crate::real::Real;
use crate::skeleton::SkeletonView;

/// A set of joints a mask covers, with its fade-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Channel {
    /// The channel's first joint (index into the skeleton).
    pub start: usize,
    /// `None`: the subtree of `start` (it and all its descendants). `Some(end)`: the joints with
    /// indices `start..=end` (`end ≥ start`).
    pub end: Option<usize>,
    /// Number of depth levels over which the weight ramps up to 1 (0: no ramp). See the
    /// [module documentation](self) for the formula.
    pub fade_in: u16,
}

impl Channel {
    /// The subtree of `start`.
    #[must_use]
    pub const fn subtree(start: usize, fade_in: u16) -> Self {
        Channel { start, end: None, fade_in }
    }

    /// The joints `start..=end`.
    #[must_use]
    pub const fn range(start: usize, end: usize, fade_in: u16) -> Self {
        Channel { start, end: Some(end), fade_in }
    }

    /// The subtree of the joint called `name`, or `None` when no joint has that name.
    #[must_use]
    pub fn named<R: Real>(skeleton: SkeletonView<'_, R>, name: &str, fade_in: u16) -> Option<Self> {
        skeleton.find(name).map(|start| Self::subtree(start, fade_in))
    }

    /// The joints from the one called `start` to the one called `end`, inclusive, or `None` when
    /// a name is missing or `end` comes before `start`.
    #[must_use]
    pub fn named_range<R: Real>(skeleton: SkeletonView<'_, R>, start: &str, end: &str, fade_in: u16) -> Option<Self> {
        let (s, e) = (skeleton.find(start)?, skeleton.find(end)?);
        (e >= s).then(|| Self::range(s, e, fade_in))
    }

    /// True when `joint` belongs to the channel.
    #[must_use]
    pub fn contains<R: Real>(&self, skeleton: SkeletonView<'_, R>, joint: usize) -> bool {
        match self.end {
            None => joint < skeleton.num_joints() && skeleton.is_in_subtree(joint, self.start),
            Some(end) => joint >= self.start && joint <= end && joint < skeleton.num_joints(),
        }
    }

    /// The weight of `joint`: 0 outside the channel, the fade-in ramp inside.
    #[must_use]
    pub fn weight<R: Real>(&self, skeleton: SkeletonView<'_, R>, joint: usize) -> R {
        if !self.contains(skeleton, joint) {
            return R::ZERO;
        }
        let fade = self.fade_in as usize;
        // Depth, counted only as far as the ramp needs.
        let mut depth = 0;
        let mut j = joint;
        while depth < fade {
            match skeleton.parent(j) {
                Some(p) if self.contains(skeleton, p) => {
                    depth += 1;
                    j = p;
                }
                _ => break,
            }
        }
        if depth >= fade {
            R::ONE
        } else {
            R::ratio(depth as i32 + 1, fade as i32 + 1)
        }
    }
}

/// Writes the per-joint weights of a set of channels, in the SoA layout blending takes.
///
/// # Examples
///
/// An upper-body mask from the spine up, ramping in over one level, and its complement:
///
/// ```
/// use sinew::job::mask::{Channel, MaskJob};
/// use sinew::math::Transform;
/// use sinew::skeleton::{Skeleton, NO_PARENT};
///
/// let names = ["root", "spine", "chest", "head", "arm", "leg"];
/// let skeleton = Skeleton::<f32, 2>::new(&[NO_PARENT, 0, 1, 2, 2, 0], &[Transform::IDENTITY; 6], &names)?;
/// let upper_body = Channel::named(skeleton.view(), "spine", 1).ok_or("no spine")?;
///
/// let mut weights = [[0.0; 4]; 2]; // one [f32; 4] per SoA element: joint j is [j / 4][j % 4]
/// MaskJob { skeleton: skeleton.view(), channels: &[upper_body], invert: false, output: &mut weights }.run()?;
/// //                root spine chest head   arm  leg  (padding)
/// assert_eq!(weights, [[0.0, 0.5, 1.0, 1.0], [1.0, 0.0, 0.0, 0.0]]);
///
/// // Inverted: the rest of the body (a lower-body layer).
/// MaskJob { skeleton: skeleton.view(), channels: &[upper_body], invert: true, output: &mut weights }.run()?;
/// assert_eq!(weights, [[1.0, 0.5, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct MaskJob<'a, R: Real> {
    /// The skeleton the channels refer to.
    pub skeleton: SkeletonView<'a, R>,
    /// Channels, combined by their largest weight. Empty: every joint weighs 0 (1 inverted).
    pub channels: &'a [Channel],
    /// Write `1 − weight` instead (the complement: e.g. the lower body of an upper-body mask).
    pub invert: bool,
    /// The weights, at least `skeleton.num_soa_joints()` elements; padding lanes are set to 0,
    /// extra elements are untouched.
    pub output: &'a mut [[R; 4]],
}

impl<R: Real> MaskJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// [`JobError::JointIndexOutOfRange`] when a channel's start or end is not a joint,
    /// [`JobError::InvalidRange`] when a channel's end comes before its start,
    /// [`JobError::OutputTooSmall`] when `output` is shorter than the SoA joint count.
    pub fn validate(&self) -> Result<(), JobError> {
        let n = self.skeleton.num_joints();
        for c in self.channels {
            if c.start >= n || c.end.is_some_and(|e| e >= n) {
                return Err(JobError::JointIndexOutOfRange);
            }
            if c.end.is_some_and(|e| e < c.start) {
                return Err(JobError::InvalidRange);
            }
        }
        if self.output.len() < self.skeleton.num_soa_joints() {
            return Err(JobError::OutputTooSmall);
        }
        Ok(())
    }

    /// Validates, then writes the weights.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let n = self.skeleton.num_joints();
        for (e, out) in self.output.iter_mut().enumerate().take(self.skeleton.num_soa_joints()) {
            for (l, w) in out.iter_mut().enumerate() {
                let j = e * 4 + l;
                *w = if j < n {
                    let m = self.channels.iter().map(|c| c.weight(self.skeleton, j)).fold(R::ZERO, R::max);
                    if self.invert {
                        R::ONE - m
                    } else {
                        m
                    }
                } else {
                    R::ZERO
                };
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Transform;
    use crate::real::Q16;
    use crate::skeleton::Skeleton;

    /// ```text
    /// 0 Hips ─ 1 Spine ─ 2 Chest ─ 3 Neck ─ 4 Head
    ///    │                  └─ 5 ArmL ─ 6 HandL
    ///    └─ 7 LegL ─ 8 FootL
    /// ```
    fn skeleton<R: Real>() -> Skeleton<R, 3> {
        let names = ["Hips", "Spine", "Chest", "Neck", "Head", "ArmL", "HandL", "LegL", "FootL"];
        Skeleton::new(&[-1, 0, 1, 2, 3, 2, 5, 0, 7], &[Transform::IDENTITY; 9], &names).unwrap()
    }

    fn weights<R: Real>(s: &Skeleton<R, 3>, channels: &[Channel], invert: bool) -> [R; 9] {
        let mut out = [[R::ONE; 4]; 3];
        MaskJob { skeleton: s.view(), channels, invert, output: &mut out }.run().unwrap();
        assert_eq!(&out[2][1..], &[R::ZERO; 3], "padding lanes are 0");
        core::array::from_fn(|j| out[j / 4][j % 4])
    }

    #[test]
    fn validity() {
        let s = skeleton::<f32>();
        let sentinel = [7.0f32; 4];
        for (channels, len, e) in [
            ([Channel::subtree(9, 0)], 3, JobError::JointIndexOutOfRange),
            ([Channel::range(1, 9, 0)], 3, JobError::JointIndexOutOfRange),
            ([Channel::range(4, 2, 0)], 3, JobError::InvalidRange),
            ([Channel::subtree(1, 0)], 2, JobError::OutputTooSmall),
        ] {
            let mut out = [sentinel; 3];
            let mut job = MaskJob { skeleton: s.view(), channels: &channels, invert: false, output: &mut out[..len] };
            assert_eq!(job.validate(), Err(e));
            assert_eq!(job.run(), Err(e));
            assert!(out.iter().all(|o| *o == sentinel), "{e:?}");
        }
        // Longer output: extra elements untouched.
        let mut out = [sentinel; 4];
        MaskJob { skeleton: s.view(), channels: &[Channel::subtree(1, 0)], invert: false, output: &mut out }
            .run()
            .unwrap();
        assert_eq!(out[3], sentinel);
    }

    #[test]
    fn fade_in_ramp_follows_the_documented_formula() {
        let s = skeleton::<f32>();
        // Spine subtree, fade over 2 levels: depth 0 → 1/3, 1 → 2/3, ≥ 2 → 1.
        let w = weights(&s, &[Channel::subtree(1, 2)], false);
        assert_eq!(w, [0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]);
        // No fade: a hard edge.
        let w = weights(&s, &[Channel::subtree(1, 0)], false);
        assert_eq!(w, [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]);
        // A long fade never reaches 1 on a short chain: Spine..Head are depths 0..3 of 9 levels.
        let w = weights(&s, &[Channel::subtree(1, 9)], false);
        for (j, d) in [(1, 0), (2, 1), (3, 2), (4, 3), (5, 2), (6, 3)] {
            assert_eq!(w[j], (d as f32 + 1.0) / 10.0, "joint {j}");
        }
        // The same formula in Q16 (rounded to the nearest step).
        let q = skeleton::<Q16>();
        let w = weights(&q, &[Channel::subtree(1, 2)], false);
        assert_eq!(w[1], Q16::ratio(1, 3));
        assert_eq!(w[2], Q16::ratio(2, 3));
        assert_eq!(w[3], Q16::ONE);
    }

    #[test]
    fn ranges_names_union_and_inversion() {
        let s = skeleton::<f32>();
        let v = s.view();
        // Range 5..=6 (ArmL, HandL): ArmL's parent is outside, so it is the top (depth 0).
        let w = weights(&s, &[Channel::range(5, 6, 1)], false);
        assert_eq!(w, [0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 0.0, 0.0]);
        // By name: "Spine" and its subtree equals the index form.
        let by_name = Channel::named(v, "Spine", 2).unwrap();
        assert_eq!(by_name, Channel::subtree(1, 2));
        assert_eq!(Channel::named(v, "Tail", 0), None);
        assert_eq!(Channel::named_range(v, "ArmL", "HandL", 1), Some(Channel::range(5, 6, 1)));
        assert_eq!(Channel::named_range(v, "HandL", "ArmL", 1), None);
        // Union of two channels takes the larger weight; inversion gives the rest of the body.
        let ch = [Channel::named(v, "Neck", 0).unwrap(), Channel::named(v, "LegL", 1).unwrap()];
        let w = weights(&s, &ch, false);
        assert_eq!(w, [0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.5, 1.0]);
        let inv = weights(&s, &ch, true);
        for j in 0..9 {
            assert_eq!(inv[j], 1.0 - w[j]);
        }
        // Membership follows is_in_subtree for the subtree form.
        let c = Channel::subtree(2, 0);
        for j in 0..9 {
            assert_eq!(c.contains(v, j), v.is_in_subtree(j, 2));
        }
        assert!(!c.contains(v, 42));
    }
}
