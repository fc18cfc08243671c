//! Blending: mixes several local poses into one, with optional per-joint weights, a rest-pose
//! fallback below a weight threshold, and additive layers applied on top.
//!
//! # Normal layers
//!
//! For every joint, each layer contributes with the weight `w = max(weight, 0) · jw`, where `jw`
//! is the layer's per-joint weight clamped into `[0, 1]` (1 without per-joint weights). With
//! `W = Σ w`:
//!
//! - when `W < threshold`, the rest pose is blended in with the weight `threshold − W` (so a
//!   joint that no layer drives shows the rest pose, and a weakly driven one leans towards it);
//! - translation and scale are the weighted means `Σ w·t / W'`, `Σ w·s / W'` (`W'` the total
//!   including the rest pose);
//! - rotation is the normalized weighted sum `normalize(Σ ±w·q)`, each quaternion's sign chosen
//!   so that it lies in the hemisphere of the running sum (shortest path).
//!
//! # Additive layers
//!
//! Applied afterwards, in order, with the signed weight `w = weight · jw` (`jw` clamped into
//! `[0, 1]`) to a delta `(t, q, s)` made by [`make_additive`]:
//!
//! - `translation += w · t`;
//! - `rotation = d · rotation` with `d = nlerp(identity, q, |w|)`, conjugated when `w < 0`;
//! - `scale *= lerp(1, s, |w|)`, divided instead of multiplied when `w < 0`.
//!
//! A weight of 1 applies the delta fully; −1 removes it exactly (for translation, rotation and
//! scale alike).
//!
//! The job makes one pass per normal layer over the output, which holds the running sums, then
//! one that fills in the rest pose and normalizes, and one for the additive layers; no scratch
//! memory is needed, whatever the joint or layer count. On x86-64 and AArch64, when every layer
//! has one weight for the whole pose, the total is above the threshold and there is no additive
//! layer, one loop over the elements keeps each element's sums in registers across the layers
//! instead (the same operations in the same order, so the same bits). Where the build has AVX2
//! (`x86-64-v3`), two such layers (a crossfade) take an eight-lane kernel that blends each
//! element as five `ymm` registers (its 160 bytes), rounding differently (within the accuracy
//! the tests state).
//!
//! The rule above is written once in plain code, one joint at a time (`blending/rule.rs`, the
//! tests' reference). The lane kernels are `blending/kernels.rs`, written once and compiled
//! once per kernel set (the modules `build` and `v3`, between which [`kernels`](crate::kernels)
//! chooses); the tests hold every kernel path in every set to the rule, bit for bit where
//! multiply-adds are not fused.

use crate::job::JobError;
use crate::math::{Quat, SoaTransform, Vec3};
use crate::platform::dispatch::{dispatch, PerSet};
use crate::real::Real;

// The delta an additive layer applies; made with `MakeAdditiveJob`, in `additive.rs`.
pub use super::additive::make_additive;

/// One input pose of a [`BlendingJob`].
#[derive(Debug, Clone, Copy)]
pub struct Layer<'a, R> {
    /// The layer's local pose (SoA), at least as long as the job's `rest_pose`. For additive
    /// layers, deltas made by [`make_additive`].
    pub transform: &'a [SoaTransform<R>],
    /// Layer weight; must be finite. Normal layers: negative values count as 0, any positive
    /// value is allowed (weights are normalized by their sum; with `Q16` the weighted sums
    /// `weight × value` must stay within ±32768). Additive layers: signed, 1 applies the delta,
    /// −1 subtracts it, values beyond ±1 extrapolate.
    pub weight: R,
    /// Optional per-joint weights multiplying `weight`, one `[R; 4]` per SoA element (lane `j % 4`
    /// of element `j / 4` for joint `j`), at least as long as `rest_pose`. Values are clamped
    /// into `[0, 1]` (NaN reads as 0).
    pub joint_weights: Option<&'a [[R; 4]]>,
}

impl<'a, R: Real> Layer<'a, R> {
    /// A layer with a uniform weight.
    #[must_use]
    pub fn new(transform: &'a [SoaTransform<R>], weight: R) -> Self {
        Layer { transform, weight, joint_weights: None }
    }
}

/// Blends normal layers, fills in the rest pose below `threshold`, then applies additive layers.
/// See the [module documentation](self) for the exact rules.
///
/// # Examples
///
/// A quarter of one pose and three quarters of another (one joint; poses are SoA, four joints
/// per element):
///
/// ```
/// use sinew::job::{BlendingJob, Layer};
/// use sinew::math::{Quat, SoaTransform, Transform, Vec3};
///
/// let at = |x: f32| {
///     let joint = Transform::new(Vec3::new(x, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE);
///     [SoaTransform::from_transforms([joint, Transform::IDENTITY, Transform::IDENTITY, Transform::IDENTITY])]
/// };
/// let (rest, a, b) = (at(0.0), at(1.0), at(2.0));
/// let mut out = [SoaTransform::IDENTITY];
/// BlendingJob {
///     layers: &[Layer::new(&a, 0.25), Layer::new(&b, 0.75)],
///     additive: &[],
///     rest_pose: &rest,
///     threshold: 0.1,
///     output: &mut out,
/// }
/// .run()?;
/// assert!((out[0].lane(0).translation.x - 1.75).abs() < 1e-6);
/// # Ok::<(), sinew::job::JobError>(())
/// ```
#[derive(Debug)]
pub struct BlendingJob<'a, R: Real> {
    /// Normal layers, blended by normalized weights. May be empty.
    pub layers: &'a [Layer<'a, R>],
    /// Additive layers, applied in order after the normal blend. May be empty.
    pub additive: &'a [Layer<'a, R>],
    /// The skeleton's rest pose; its length is the number of SoA elements processed.
    pub rest_pose: &'a [SoaTransform<R>],
    /// Total weight below which the rest pose fills in (with the weight `threshold − total`).
    /// Must be finite and at least `R::EPSILON`; 0.1 is a usual value.
    pub threshold: R,
    /// The blended local pose, at least `rest_pose.len()` elements; extra elements are untouched.
    pub output: &'a mut [SoaTransform<R>],
}

impl<R: Real> BlendingJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// [`JobError::InvalidThreshold`] when `threshold` is not finite or below `R::EPSILON`,
    /// [`JobError::InvalidWeight`] when a layer weight is NaN or infinite,
    /// [`JobError::InputTooSmall`] when a layer's `transform` or `joint_weights` is shorter than
    /// `rest_pose`, [`JobError::OutputTooSmall`] when `output` is.
    pub fn validate(&self) -> Result<(), JobError> {
        self.check().map(|_| ())
    }

    /// [`validate`](Self::validate) in one pass over the layers, which also returns what `run`
    /// needs of them: the normal layers' total weight `Σ max(weight, 0)` (summed in order) and
    /// whether none of them has per-joint weights.
    #[inline(always)]
    fn check(&self) -> Result<(R, bool), JobError> {
        if !(self.threshold.is_finite() && self.threshold >= R::EPSILON) {
            return Err(JobError::InvalidThreshold);
        }
        let n = self.rest_pose.len();
        let mut total = R::ZERO;
        let mut uniform = true;
        for layer in self.layers {
            check_layer(layer, n)?;
            total += weight(layer.weight);
            uniform &= layer.joint_weights.is_none();
        }
        for layer in self.additive {
            check_layer(layer, n)?;
        }
        if self.output.len() < n {
            return Err(JobError::OutputTooSmall);
        }
        Ok((total, uniform))
    }

    /// Validates, then blends with the kernel set [`kernels`](crate::kernels) chooses (see the
    /// [module documentation](self)).
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    pub fn run(&mut self) -> Result<(), JobError> {
        let (total, uniform) = self.check()?;
        let n = self.rest_pose.len();
        dispatch(Blend {
            layers: self.layers,
            additive: self.additive,
            rest_pose: self.rest_pose,
            threshold: self.threshold,
            total,
            uniform,
            out: &mut self.output[..n],
        });
        Ok(())
    }
}

/// A checked blending job: what its kernels (`build::blend`, `v3::blend`) read and write.
struct Blend<'b, 'a, R: Real> {
    layers: &'b [Layer<'a, R>],
    additive: &'b [Layer<'a, R>],
    rest_pose: &'b [SoaTransform<R>],
    threshold: R,
    /// The normal layers' total weight, and whether each has one weight for the whole pose.
    total: R,
    uniform: bool,
    out: &'b mut [SoaTransform<R>],
}

impl<R: Real> PerSet for Blend<'_, '_, R> {
    type Output = ();
    #[inline(always)]
    fn build(self) {
        build::blend(self);
    }
    #[cfg(sinew_dispatch)]
    #[inline(always)]
    fn v3(self) {
        v3::blend(self);
    }
}

/// The lane kernels (`blending/kernels.rs`) in the build's own kernel set.
mod build {
    /// The kernel set of this copy of the kernels: the build's own.
    const V3: bool = false;
    include!("blending/kernels.rs");
}

/// The lane kernels (`blending/kernels.rs`) in the x86-64-v3 kernel set, which [`dispatch`]
/// runs on CPUs with the level (in builds with run-time dispatch only).
#[cfg(sinew_dispatch)]
mod v3 {
    /// The kernel set of this copy of the kernels: x86-64-v3.
    const V3: bool = true;
    include!("blending/kernels.rs");
}

/// A layer's checks: a finite weight, `transform` and `joint_weights` at least `n` long.
#[inline(always)]
fn check_layer<R: Real>(layer: &Layer<'_, R>, n: usize) -> Result<(), JobError> {
    if !layer.weight.is_finite() {
        return Err(JobError::InvalidWeight);
    }
    if layer.transform.len() < n || layer.joint_weights.is_some_and(|w| w.len() < n) {
        return Err(JobError::InputTooSmall);
    }
    Ok(())
}

/// A normal layer's weight: negative values count as 0.
#[inline(always)]
fn weight<R: Real>(w: R) -> R {
    w.max(R::ZERO)
}

/// `base` times per-joint weights clamped into `[0, 1]` (`max` first maps NaN to 0 for `f32`).
#[inline(always)]
fn clamped_weights<R: Real>(base: R, jw: &[R; 4]) -> [R; 4] {
    let mut w = *jw;
    for l in 0..4 {
        w[l] = base * w[l].max(R::ZERO).min(R::ONE);
    }
    w
}

/// Applies the additive delta `d` with signed lane weights `w` onto `out`.
#[inline(always)]
fn apply_additive<R: Real>(out: &mut SoaTransform<R>, d: &SoaTransform<R>, w: [R; 4]) {
    for l in 0..4 {
        let wl = w[l];
        if wl == R::ZERO {
            continue;
        }
        let a = wl.abs();
        let t = out.translation.lane(l) + d.translation.lane(l) * wl;
        out.translation.set_lane(l, t);
        // nlerp(identity, q, a) on the shortest path: q in the w ≥ 0 hemisphere.
        let mut q = d.rotation.lane(l);
        if q.w < R::ZERO {
            q = -q;
        }
        let mut dq = Quat::new(q.x * a, q.y * a, q.z * a, R::ONE + (q.w - R::ONE) * a).normalize();
        if wl < R::ZERO {
            dq = dq.conjugate();
        }
        out.rotation.set_lane(l, (dq * out.rotation.lane(l)).normalize());
        let ds = Vec3::ONE + (d.scale.lane(l) - Vec3::ONE) * a;
        let s = out.scale.lane(l);
        let s = if wl > R::ZERO {
            s.mul_elem(ds)
        } else {
            Vec3::new(safe_div(s.x, ds.x), safe_div(s.y, ds.y), safe_div(s.z, ds.z))
        };
        out.scale.set_lane(l, s);
    }
}

/// `a / b`, or `a` when `b` is 0.
#[inline(always)]
fn safe_div<R: Real>(a: R, b: R) -> R {
    if b == R::ZERO {
        a
    } else {
        a / b
    }
}

#[cfg(test)]
mod rule;
#[cfg(test)]
mod tests;
