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
//! one pass that fills in the rest pose, normalizes and applies the additive layers; no scratch
//! memory is needed, whatever the joint or layer count. On x86-64 and AArch64, when every layer
//! has one weight for the whole pose, the total is above the threshold and there is no additive
//! layer, one loop over the elements keeps each element's sums in registers across the layers
//! instead (the same operations in the same order, so the same bits).

use crate::job::JobError;
use crate::lanes::Lanes;
use crate::math::{Quat, SoaTransform, Transform, Vec3};
use crate::real::Real;

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
        if !(self.threshold.is_finite() && self.threshold >= R::EPSILON) {
            return Err(JobError::InvalidThreshold);
        }
        let n = self.rest_pose.len();
        for layer in self.layers.iter().chain(self.additive.iter()) {
            if !layer.weight.is_finite() {
                return Err(JobError::InvalidWeight);
            }
            if layer.transform.len() < n || layer.joint_weights.is_some_and(|w| w.len() < n) {
                return Err(JobError::InputTooSmall);
            }
        }
        if self.output.len() < n {
            return Err(JobError::OutputTooSmall);
        }
        Ok(())
    }

    /// Validates, then blends.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let n = self.rest_pose.len();
        let out = &mut self.output[..n];
        let weight = |w: R| w.max(R::ZERO);
        let threshold = self.threshold;
        // The usual case in floating point: every layer with one weight for the whole pose,
        // a total above the threshold, no additive layer. One loop over the elements keeps each
        // element's sums in registers across the layers (the same operations, in the same
        // order, as the passes below). Hosts only: on microcontrollers the passes alone keep
        // the code small.
        #[cfg(sinew_host_kernels)]
        if !R::FIXED_POINT
            && self.additive.is_empty()
            && self.layers.iter().all(|l| l.joint_weights.is_none())
            && self.layers.iter().fold(R::ZERO, |a, l| a + weight(l.weight)) >= threshold
        {
            let mut uniform = R::ZERO;
            for layer in self.layers {
                uniform += weight(layer.weight);
            }
            let inv_w = V::<R>::splat(uniform).recip();
            let zero = V::<R>::splat(R::ZERO);
            if let [a, b] = self.layers {
                let (wa, wb) = (weight(a.weight), weight(b.weight));
                if wa != R::ZERO && wb != R::ZERO {
                    // Two active layers (a crossfade, a two-clip blend): the same operations
                    // without the per-layer loop and its bounds checks.
                    let (wa, wb) = (V::<R>::splat(wa), V::<R>::splat(wb));
                    for ((o, x), y) in out.iter_mut().zip(&a.transform[..n]).zip(&b.transform[..n]) {
                        let mut acc = Sums::scaled(x, wa);
                        acc.add(y, wb);
                        acc.normalize_into(o, inv_w);
                    }
                    return Ok(());
                }
            }
            for (e, o) in out.iter_mut().enumerate() {
                let mut acc = Sums { t: [zero; 3], q: [zero; 4], s: [zero; 3] };
                let mut first = true;
                for layer in self.layers {
                    let base = weight(layer.weight);
                    let Some(x) = layer.transform.get(e).filter(|_| base != R::ZERO) else { continue };
                    let w = V::<R>::splat(base);
                    if first {
                        acc = Sums::scaled(x, w);
                        first = false;
                    } else {
                        acc.add(x, w);
                    }
                }
                acc.normalize_into(o, inv_w);
            }
            return Ok(());
        }
        // One pass per normal layer over the output, which holds the running sums (it stays in
        // L1 for any skeleton: 160 bytes per four joints). The layer's weight is hoisted out of
        // its pass; the first active layer stores instead of adding.
        let mut first = true;
        for layer in self.layers {
            let base = weight(layer.weight);
            let src = &layer.transform[..n];
            if base == R::ZERO {
                // Contributes nothing anywhere, whatever it holds.
                continue;
            }
            match layer.joint_weights {
                None => {
                    let w = V::<R>::splat(base);
                    if first {
                        out.iter_mut().zip(src).for_each(|(o, x)| store_scaled(o, x, w));
                    } else {
                        out.iter_mut().zip(src).for_each(|(o, x)| add_scaled(o, x, w));
                    }
                }
                Some(jw) => {
                    for ((o, x), j) in out.iter_mut().zip(src).zip(&jw[..n]) {
                        // Four joints whose weights are all 0 ignore the layer, whatever it
                        // holds (a lane of weight 0 among others adds 0 · value).
                        let w = clamped_weights(base, j);
                        if w == [R::ZERO; 4] {
                            if first {
                                store_scaled(o, &SoaTransform::IDENTITY, V::<R>::splat(R::ZERO));
                            }
                        } else if first {
                            store_scaled(o, x, V::<R>::load(&w));
                        } else {
                            add_scaled(o, x, V::<R>::load(&w));
                        }
                    }
                }
            }
            first = false;
        }
        if first {
            let zero = V::<R>::splat(R::ZERO);
            out.iter_mut().for_each(|o| store_scaled(o, &SoaTransform::IDENTITY, zero));
        }
        // Total weights: one value for the whole pose unless a layer has per-joint weights.
        let per_joint = self.layers.iter().any(|l| l.joint_weights.is_some());
        let mut uniform = R::ZERO;
        for layer in self.layers {
            uniform += weight(layer.weight);
        }
        for (e, (o, rest)) in out.iter_mut().zip(self.rest_pose).enumerate() {
            let mut total = [uniform; 4];
            if per_joint {
                total = [R::ZERO; 4];
                for layer in self.layers {
                    let base = weight(layer.weight);
                    let w = match layer.joint_weights {
                        Some(jw) => jw.get(e).map_or([R::ZERO; 4], |j| clamped_weights(base, j)),
                        None => [base; 4],
                    };
                    for l in 0..4 {
                        total[l] += w[l];
                    }
                }
            }
            finish(o, rest, V::<R>::load(&total), V::<R>::splat(threshold));
            for layer in self.additive {
                let w = match layer.joint_weights {
                    Some(jw) => jw.get(e).map_or([R::ZERO; 4], |j| clamped_weights(layer.weight, j)),
                    None => [layer.weight; 4],
                };
                if w == [R::ZERO; 4] {
                    continue;
                }
                if let Some(d) = layer.transform.get(e) {
                    apply_additive(o, d, w);
                }
            }
        }
        Ok(())
    }
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

/// The lanes of one component.
type V<R> = <R as Real>::Lanes;

/// Loads one component's four lanes.
#[inline(always)]
fn ld<R: Real>(a: &[R; 4]) -> V<R> {
    V::<R>::load(a)
}

/// An element's weighted sums as lane values (registers where lanes are SIMD).
#[derive(Clone, Copy)]
struct Sums<R: Real> {
    t: [V<R>; 3],
    q: [V<R>; 4],
    s: [V<R>; 3],
}

impl<R: Real> Sums<R> {
    /// The sums held in `o`.
    #[inline(always)]
    fn load(o: &SoaTransform<R>) -> Self {
        Sums {
            t: [ld(&o.translation.x), ld(&o.translation.y), ld(&o.translation.z)],
            q: [ld(&o.rotation.x), ld(&o.rotation.y), ld(&o.rotation.z), ld(&o.rotation.w)],
            s: [ld(&o.scale.x), ld(&o.scale.y), ld(&o.scale.z)],
        }
    }

    /// `w · x`.
    #[inline(always)]
    fn scaled(x: &SoaTransform<R>, w: V<R>) -> Self {
        Sums {
            t: [ld(&x.translation.x) * w, ld(&x.translation.y) * w, ld(&x.translation.z) * w],
            q: [ld(&x.rotation.x) * w, ld(&x.rotation.y) * w, ld(&x.rotation.z) * w, ld(&x.rotation.w) * w],
            s: [ld(&x.scale.x) * w, ld(&x.scale.y) * w, ld(&x.scale.z) * w],
        }
    }

    /// `self += w · x`, the quaternion first brought into the hemisphere of the running sum.
    #[inline(always)]
    fn add(&mut self, x: &SoaTransform<R>, w: V<R>) {
        let (qx, qy, qz, qw) = (ld(&x.rotation.x), ld(&x.rotation.y), ld(&x.rotation.z), ld(&x.rotation.w));
        // Summed in pairs: a shorter dependency chain than a running sum.
        let dot = (self.q[0] * qx + self.q[1] * qy) + (self.q[2] * qz + self.q[3] * qw);
        let wq = w.negate_where_negative(dot);
        self.q = [self.q[0] + wq * qx, self.q[1] + wq * qy, self.q[2] + wq * qz, self.q[3] + wq * qw];
        self.t[0] = self.t[0] + w * ld(&x.translation.x);
        self.t[1] = self.t[1] + w * ld(&x.translation.y);
        self.t[2] = self.t[2] + w * ld(&x.translation.z);
        self.s[0] = self.s[0] + w * ld(&x.scale.x);
        self.s[1] = self.s[1] + w * ld(&x.scale.y);
        self.s[2] = self.s[2] + w * ld(&x.scale.z);
    }

    /// Writes the sums into `o`.
    #[inline(always)]
    fn store(&self, o: &mut SoaTransform<R>) {
        o.translation.x = self.t[0].to_array();
        o.translation.y = self.t[1].to_array();
        o.translation.z = self.t[2].to_array();
        o.rotation.x = self.q[0].to_array();
        o.rotation.y = self.q[1].to_array();
        o.rotation.z = self.q[2].to_array();
        o.rotation.w = self.q[3].to_array();
        o.scale.x = self.s[0].to_array();
        o.scale.y = self.s[1].to_array();
        o.scale.z = self.s[2].to_array();
    }

    /// The floating-point normalization into `o`: translation and scale times `inv_w`
    /// (1 / total weight), the rotation sum normalized (identity where it vanished or
    /// overflowed).
    #[inline(always)]
    fn normalize_into(&self, o: &mut SoaTransform<R>, inv_w: V<R>) {
        let (zero, one) = (V::<R>::splat(R::ZERO), V::<R>::splat(R::ONE));
        let [qx, qy, qz, qw] = self.q;
        let l2 = (qx * qx + qy * qy) + (qz * qz + qw * qw);
        // 1 / √l2 from the correctly rounded square root: two short instructions where lanes are
        // SIMD (Newton steps from an estimate would form a long dependency chain).
        let inv_q = one / l2.sqrt_ieee();
        o.rotation.x = l2.select_positive_finite(qx * inv_q, zero).to_array();
        o.rotation.y = l2.select_positive_finite(qy * inv_q, zero).to_array();
        o.rotation.z = l2.select_positive_finite(qz * inv_q, zero).to_array();
        o.rotation.w = l2.select_positive_finite(qw * inv_q, one).to_array();
        o.translation.x = (self.t[0] * inv_w).to_array();
        o.translation.y = (self.t[1] * inv_w).to_array();
        o.translation.z = (self.t[2] * inv_w).to_array();
        o.scale.x = (self.s[0] * inv_w).to_array();
        o.scale.y = (self.s[1] * inv_w).to_array();
        o.scale.z = (self.s[2] * inv_w).to_array();
    }
}

/// `o = w · x`, component by component.
#[cfg_attr(sinew_host_kernels, inline(always))]
#[cfg_attr(not(sinew_host_kernels), inline(never))]
fn store_scaled<R: Real>(o: &mut SoaTransform<R>, x: &SoaTransform<R>, w: V<R>) {
    Sums::scaled(x, w).store(o);
}

/// `o += w · x`, each quaternion first brought into the hemisphere of the running sum in `o`.
///
/// Inlined where lanes are SIMD registers; elsewhere (microcontrollers) one shared copy keeps
/// the code small, for the cost of a call per element and layer.
#[cfg_attr(sinew_host_kernels, inline(always))]
#[cfg_attr(not(sinew_host_kernels), inline(never))]
fn add_scaled<R: Real>(o: &mut SoaTransform<R>, x: &SoaTransform<R>, w: V<R>) {
    let mut sums = Sums::load(o);
    sums.add(x, w);
    sums.store(o);
}

/// Fills in the rest pose with the weight `threshold − total` where that is positive, then turns
/// the weighted sums in `o` into a transform: translation and scale divided by the total weight
/// (at least the threshold in every lane), the rotation normalized (identity where the sum
/// vanished or overflowed).
#[cfg_attr(sinew_host_kernels, inline(always))]
#[cfg_attr(not(sinew_host_kernels), inline(never))]
fn finish<R: Real>(o: &mut SoaTransform<R>, rest: &SoaTransform<R>, mut total: V<R>, threshold: V<R>) {
    let rw = (threshold - total).max(V::<R>::splat(R::ZERO));
    if rw.any_positive() {
        add_scaled(o, rest, rw);
        total = total + rw;
    }
    if R::FIXED_POINT {
        let (zero, one) = (V::<R>::splat(R::ZERO), V::<R>::splat(R::ONE));
        let (mut qx, mut qy, mut qz, mut qw) =
            (ld(&o.rotation.x), ld(&o.rotation.y), ld(&o.rotation.z), ld(&o.rotation.w));
        // Fixed point divides (rounded once) instead of multiplying by rounded reciprocals,
        // whose relative error grows with the total weight, and divides the rotation sum by the
        // total first so that its squared length cannot saturate (|Σ w·q|² would exceed the
        // Q16.16 range above a total weight of 181).
        let (tx, ty, tz) = (ld(&o.translation.x) / total, ld(&o.translation.y) / total, ld(&o.translation.z) / total);
        let (sx, sy, sz) = (ld(&o.scale.x) / total, ld(&o.scale.y) / total, ld(&o.scale.z) / total);
        o.translation.x = tx.to_array();
        o.translation.y = ty.to_array();
        o.translation.z = tz.to_array();
        o.scale.x = sx.to_array();
        o.scale.y = sy.to_array();
        o.scale.z = sz.to_array();
        (qx, qy, qz, qw) = (qx / total, qy / total, qz / total, qw / total);
        let l2 = qx * qx + qy * qy + qz * qz + qw * qw;
        let len = l2.sqrt();
        o.rotation.x = l2.select_positive_finite(qx / len, zero).to_array();
        o.rotation.y = l2.select_positive_finite(qy / len, zero).to_array();
        o.rotation.z = l2.select_positive_finite(qz / len, zero).to_array();
        o.rotation.w = l2.select_positive_finite(qw / len, one).to_array();
        return;
    }
    normalize(o, total.recip());
}

/// [`Sums::normalize_into`] of the sums held in `o`.
#[inline(always)]
fn normalize<R: Real>(o: &mut SoaTransform<R>, inv_w: V<R>) {
    Sums::load(o).normalize_into(o, inv_w);
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

/// The additive delta that turns `reference` into `pose`: translation `t − t_ref`, rotation
/// `q · conj(q_ref)` (so that `delta.rotation · q_ref = q`, matching the blend's
/// `rotation = d · rotation`), scale `s / s_ref` per axis (1 where `s_ref` is 0).
///
/// Applied with weight 1 onto `reference` by [`BlendingJob`], it gives back `pose`.
#[must_use]
pub fn make_additive<R: Real>(pose: &Transform<R>, reference: &Transform<R>) -> Transform<R> {
    let div = |a: R, b: R| if b == R::ZERO { R::ONE } else { a / b };
    Transform {
        translation: pose.translation - reference.translation,
        rotation: (pose.rotation * reference.rotation.conjugate()).normalize(),
        scale: Vec3::new(
            div(pose.scale.x, reference.scale.x),
            div(pose.scale.y, reference.scale.y),
            div(pose.scale.z, reference.scale.z),
        ),
    }
}

/// Builds additive deltas for a whole pose: `output[j] = make_additive(pose[j], reference[j])`.
#[derive(Debug)]
pub struct MakeAdditiveJob<'a, R: Real> {
    /// The pose to turn into a delta, SoA; its length is the number of elements processed.
    pub pose: &'a [SoaTransform<R>],
    /// The reference pose (often the first frame of the additive clip), at least as long as `pose`.
    pub reference: &'a [SoaTransform<R>],
    /// The deltas, at least as long as `pose`; extra elements are untouched.
    pub output: &'a mut [SoaTransform<R>],
}

impl<R: Real> MakeAdditiveJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// [`JobError::InputTooSmall`] when `reference` is shorter than `pose`,
    /// [`JobError::OutputTooSmall`] when `output` is.
    pub fn validate(&self) -> Result<(), JobError> {
        if self.reference.len() < self.pose.len() {
            return Err(JobError::InputTooSmall);
        }
        if self.output.len() < self.pose.len() {
            return Err(JobError::OutputTooSmall);
        }
        Ok(())
    }

    /// Validates, then builds the deltas.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        for ((out, p), r) in self.output.iter_mut().zip(self.pose).zip(self.reference) {
            for l in 0..4 {
                out.set_lane(l, &make_additive(&p.lane(l), &r.lane(l)));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec::Vec;

    use super::*;
    use crate::math::SoaVec3;
    use crate::real::Q16;

    /// xorshift32 in [0, 1).
    struct Rng(u32);
    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 17;
            self.0 ^= self.0 << 5;
            self.0 as f64 / 4_294_967_296.0
        }
        fn range(&mut self, lo: f64, hi: f64) -> f64 {
            lo + (hi - lo) * self.next()
        }
    }

    type Q64 = [f64; 4];
    #[derive(Clone, Copy, Debug)]
    struct T64 {
        t: [f64; 3],
        q: Q64,
        s: [f64; 3],
    }

    fn qmul(a: Q64, b: Q64) -> Q64 {
        [
            a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
            a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
            a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
            a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
        ]
    }
    fn qnorm(q: Q64) -> Q64 {
        let l = q.iter().map(|v| v * v).sum::<f64>().sqrt();
        q.map(|v| v / l)
    }
    /// Rotation angle between two quaternions (normalized first), accurate for tiny angles.
    fn qangle(a: Q64, b: Q64) -> f64 {
        let (a, mut b) = (qnorm(a), qnorm(b));
        if a.iter().zip(b.iter()).map(|(x, y)| x * y).sum::<f64>() < 0.0 {
            b = b.map(|v| -v);
        }
        let len = |v: [f64; 4]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        4.0 * len(core::array::from_fn(|i| a[i] - b[i])).atan2(len(core::array::from_fn(|i| a[i] + b[i])))
    }

    /// Plain f64 reference of the blend of one joint: layers `(pose, weight)`, then additive
    /// `(delta, weight)`.
    fn reference(layers: &[(T64, f64)], rest: T64, threshold: f64, additive: &[(T64, f64)]) -> T64 {
        let mut t = [0.0; 3];
        let mut q = [0.0; 4];
        let mut s = [0.0; 3];
        let mut total = 0.0;
        let mut inputs: Vec<(T64, f64)> = layers.iter().filter(|(_, w)| *w > 0.0).copied().collect();
        let sum: f64 = inputs.iter().map(|(_, w)| w).sum();
        if sum < threshold {
            inputs.push((rest, threshold - sum));
        }
        for (p, w) in &inputs {
            let dot: f64 = (0..4).map(|i| q[i] * p.q[i]).sum();
            let wq = if dot < 0.0 { -w } else { *w };
            for i in 0..3 {
                t[i] += w * p.t[i];
                s[i] += w * p.s[i];
            }
            for i in 0..4 {
                q[i] += wq * p.q[i];
            }
            total += w;
        }
        let mut o = T64 { t: t.map(|v| v / total), q: qnorm(q), s: s.map(|v| v / total) };
        for (d, w) in additive {
            let a = w.abs();
            let mut dq = d.q;
            if dq[3] < 0.0 {
                dq = dq.map(|v| -v);
            }
            let mut iq = qnorm([dq[0] * a, dq[1] * a, dq[2] * a, 1.0 + (dq[3] - 1.0) * a]);
            if *w < 0.0 {
                iq = [-iq[0], -iq[1], -iq[2], iq[3]];
            }
            o.q = qnorm(qmul(iq, o.q));
            for i in 0..3 {
                o.t[i] += w * d.t[i];
                let f = 1.0 + (d.s[i] - 1.0) * a;
                if *w > 0.0 {
                    o.s[i] *= f;
                } else {
                    o.s[i] /= f;
                }
            }
        }
        o
    }

    fn random_quat_near(rng: &mut Rng, base: Q64, spread: f64) -> Q64 {
        let axis = qnorm([rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), 0.0]);
        let a = rng.range(-spread, spread) * 0.5;
        let d = [axis[0] * a.sin(), axis[1] * a.sin(), axis[2] * a.sin(), a.cos()];
        let q = qmul(d, base);
        // Random sign: blending must align hemispheres itself.
        if rng.next() < 0.5 {
            q.map(|v| -v)
        } else {
            q
        }
    }

    fn random_t64(rng: &mut Rng, base: Q64) -> T64 {
        T64 {
            t: [rng.range(-2.0, 2.0), rng.range(-2.0, 2.0), rng.range(-2.0, 2.0)],
            q: random_quat_near(rng, base, 1.2),
            s: [rng.range(0.5, 1.5), rng.range(0.5, 1.5), rng.range(0.5, 1.5)],
        }
    }

    fn to_r<R: Real>(t: &T64) -> Transform<R> {
        let c = |v: f64| R::from_f32(v as f32);
        Transform {
            translation: Vec3::new(c(t.t[0]), c(t.t[1]), c(t.t[2])),
            rotation: Quat::new(c(t.q[0]), c(t.q[1]), c(t.q[2]), c(t.q[3])),
            scale: Vec3::new(c(t.s[0]), c(t.s[1]), c(t.s[2])),
        }
    }
    fn from_r<R: Real>(t: &Transform<R>) -> T64 {
        let c = |v: R| v.to_f32() as f64;
        T64 {
            t: [c(t.translation.x), c(t.translation.y), c(t.translation.z)],
            q: [c(t.rotation.x), c(t.rotation.y), c(t.rotation.z), c(t.rotation.w)],
            s: [c(t.scale.x), c(t.scale.y), c(t.scale.z)],
        }
    }
    /// Rounds through R, so the reference sees exactly the job's inputs.
    fn through<R: Real>(t: &T64) -> T64 {
        from_r(&to_r::<R>(t))
    }

    fn pose<R: Real>(joints: &[T64]) -> Vec<SoaTransform<R>> {
        let mut p = std::vec![SoaTransform::IDENTITY; joints.len().div_ceil(4)];
        for (j, t) in joints.iter().enumerate() {
            p[j / 4].set_lane(j % 4, &to_r::<R>(t));
        }
        p
    }

    #[test]
    fn validity() {
        let rest = [SoaTransform::<f32>::IDENTITY; 2];
        let short = [SoaTransform::<f32>::IDENTITY; 1];
        let jw_short = [[1.0f32; 4]; 1];
        let sentinel = SoaTransform { translation: SoaVec3 { x: [9.0; 4], ..SoaVec3::ZERO }, ..SoaTransform::IDENTITY };
        let check = |layers: &[Layer<f32>], additive: &[Layer<f32>], threshold: f32, out_len: usize, e: JobError| {
            let mut out = [sentinel; 3];
            let mut job = BlendingJob { layers, additive, rest_pose: &rest, threshold, output: &mut out[..out_len] };
            assert_eq!(job.validate(), Err(e));
            assert_eq!(job.run(), Err(e));
            assert!(out.iter().all(|o| *o == sentinel), "{e:?}");
        };
        let good = Layer::new(&rest, 1.0);
        // Threshold zero, negative, NaN, infinite.
        for th in [0.0, -0.1, f32::NAN, f32::INFINITY] {
            check(&[good], &[], th, 2, JobError::InvalidThreshold);
        }
        // A non-finite layer weight, normal or additive.
        check(&[Layer::new(&rest, f32::NAN)], &[], 0.1, 2, JobError::InvalidWeight);
        check(&[good], &[Layer::new(&rest, f32::INFINITY)], 0.1, 2, JobError::InvalidWeight);
        // A layer pose shorter than the rest pose.
        check(&[good, Layer::new(&short, 1.0)], &[], 0.1, 2, JobError::InputTooSmall);
        check(&[good], &[Layer::new(&short, 1.0)], 0.1, 2, JobError::InputTooSmall);
        // Per-joint weights shorter than the rest pose.
        let jl = Layer { transform: &rest, weight: 1.0, joint_weights: Some(&jw_short) };
        check(&[jl], &[], 0.1, 2, JobError::InputTooSmall);
        check(&[], &[jl], 0.1, 2, JobError::InputTooSmall);
        // Output too small.
        check(&[good], &[], 0.1, 1, JobError::OutputTooSmall);
        // A longer output: the extra element is untouched.
        let mut out = [sentinel; 3];
        BlendingJob { layers: &[good], additive: &[], rest_pose: &rest, threshold: 0.1, output: &mut out }
            .run()
            .unwrap();
        assert!(out[0].rotation.lane(0).angle_between(Quat::IDENTITY) < 1.0e-6);
        assert_eq!(out[2], sentinel);
        // No layers at all is valid: the rest pose.
        let mut out = [sentinel; 2];
        BlendingJob { layers: &[], additive: &[], rest_pose: &rest, threshold: 0.5, output: &mut out }.run().unwrap();
        assert!(out[1].rotation.lane(3).angle_between(Quat::IDENTITY) < 1.0e-6);
        assert_eq!(out[1].translation, SoaVec3::ZERO);
    }

    #[test]
    fn make_additive_validity() {
        let p = [SoaTransform::<f32>::IDENTITY; 2];
        let sentinel = SoaTransform { translation: SoaVec3 { x: [9.0; 4], ..SoaVec3::ZERO }, ..SoaTransform::IDENTITY };
        let mut out = [sentinel; 2];
        let mut job = MakeAdditiveJob { pose: &p, reference: &p[..1], output: &mut out };
        assert_eq!(job.run(), Err(JobError::InputTooSmall));
        assert!(out.iter().all(|o| *o == sentinel));
        let mut out = [sentinel; 1];
        let mut job = MakeAdditiveJob { pose: &p, reference: &p, output: &mut out };
        assert_eq!(job.validate(), Err(JobError::OutputTooSmall));
        assert_eq!(job.run(), Err(JobError::OutputTooSmall));
        assert!(out.iter().all(|o| *o == sentinel));
    }

    /// Worst errors of the job against the f64 reference on random poses: (translation and
    /// scale, absolute; rotation, radians).
    fn blend_errors<R: Real>(seed: u32, joints: usize, rounds: usize) -> (f64, f64) {
        let mut rng = Rng(seed);
        let (mut worst_v, mut worst_q) = (0.0f64, 0.0f64);
        for _ in 0..rounds {
            let layers = 1 + (rng.next() * 4.0) as usize;
            let additive = (rng.next() * 3.0) as usize;
            // One base orientation per joint; layers vary within ±60° of it.
            let bases: Vec<Q64> = (0..joints)
                .map(|_| {
                    qnorm([rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)])
                })
                .collect();
            let make =
                |rng: &mut Rng| -> Vec<T64> { (0..joints).map(|j| through::<R>(&random_t64(rng, bases[j]))).collect() };
            let rest = make(&mut rng);
            let poses: Vec<Vec<T64>> = (0..layers).map(|_| make(&mut rng)).collect();
            let deltas: Vec<Vec<T64>> = (0..additive)
                .map(|_| {
                    (0..joints)
                        .map(|_| {
                            through::<R>(&T64 {
                                t: [rng.range(-0.5, 0.5), rng.range(-0.5, 0.5), rng.range(-0.5, 0.5)],
                                q: random_quat_near(&mut rng, [0.0, 0.0, 0.0, 1.0], 1.0),
                                s: [rng.range(0.8, 1.25), rng.range(0.8, 1.25), rng.range(0.8, 1.25)],
                            })
                        })
                        .collect()
                })
                .collect();
            let weight = |rng: &mut Rng| R::from_f32(rng.range(-0.2, 1.5) as f32);
            let lw: Vec<R> = (0..layers).map(|_| weight(&mut rng)).collect();
            let aw: Vec<R> = (0..additive).map(|_| R::from_f32(rng.range(-1.0, 1.0) as f32)).collect();
            let jw: Vec<Vec<[R; 4]>> = (0..layers + additive)
                .map(|_| {
                    (0..joints.div_ceil(4))
                        .map(|_| core::array::from_fn(|_| R::from_f32(rng.range(-0.2, 1.2) as f32)))
                        .collect()
                })
                .collect();
            let use_jw: Vec<bool> = (0..layers + additive).map(|_| rng.next() < 0.5).collect();
            let threshold = R::from_f32(rng.range(0.05, 1.0) as f32);

            let rest_soa = pose::<R>(&rest);
            let pose_soa: Vec<Vec<SoaTransform<R>>> = poses.iter().map(|p| pose::<R>(p)).collect();
            let delta_soa: Vec<Vec<SoaTransform<R>>> = deltas.iter().map(|p| pose::<R>(p)).collect();
            let jw_of = |i: usize| if use_jw[i] { Some(&jw[i][..]) } else { None };
            let job_layers: Vec<Layer<R>> = (0..layers)
                .map(|i| Layer { transform: &pose_soa[i], weight: lw[i], joint_weights: jw_of(i) })
                .collect();
            let job_add: Vec<Layer<R>> = (0..additive)
                .map(|i| Layer { transform: &delta_soa[i], weight: aw[i], joint_weights: jw_of(layers + i) })
                .collect();
            let mut out = std::vec![SoaTransform::IDENTITY; rest_soa.len()];
            BlendingJob { layers: &job_layers, additive: &job_add, rest_pose: &rest_soa, threshold, output: &mut out }
                .run()
                .unwrap();

            let f = |v: R| v.to_f32() as f64;
            let eff = |i: usize, j: usize, w: R| -> f64 {
                let jwv = if use_jw[i] { f(jw[i][j / 4][j % 4]).clamp(0.0, 1.0) } else { 1.0 };
                f(w) * jwv
            };
            for j in 0..joints {
                let l: Vec<(T64, f64)> =
                    (0..layers).map(|i| (poses[i][j], f(lw[i]).max(0.0) * eff(i, j, R::ONE))).collect();
                let a: Vec<(T64, f64)> = (0..additive).map(|i| (deltas[i][j], eff(layers + i, j, aw[i]))).collect();
                let e = reference(&l, rest[j], f(threshold), &a);
                let got = from_r(&out[j / 4].lane(j % 4));
                for i in 0..3 {
                    worst_v = worst_v.max((got.t[i] - e.t[i]).abs()).max((got.s[i] - e.s[i]).abs());
                }
                worst_q = worst_q.max(qangle(got.q, e.q));
            }
        }
        (worst_v, worst_q)
    }

    #[test]
    fn f32_blend_matches_f64_reference() {
        let (v, q) = blend_errors::<f32>(0x1234_5678, 23, if cfg!(miri) { 4 } else { 300 });
        std::println!("f32 blend error: translation/scale {v:.3e}, rotation {q:.3e} rad");
        assert!(v < 1.0e-6, "translation/scale error {v:e}");
        assert!(q < 1.0e-6, "rotation error {q:e} rad");
    }

    #[test]
    fn q16_blend_matches_f64_reference() {
        let (v, q) = blend_errors::<Q16>(0x9e37_79b9, 23, if cfg!(miri) { 2 } else { 300 });
        std::println!("Q16 blend error: translation/scale {v:.3e}, rotation {q:.3e} rad");
        assert!(v < 1.0e-3, "translation/scale error {v:e}");
        assert!(q < 1.0e-3, "rotation error {q:e} rad");
    }

    fn lane_t(t: f32) -> Transform<f32> {
        Transform { translation: Vec3::new(t, 0.0, 0.0), ..Transform::IDENTITY }
    }

    #[test]
    fn weights_normalize_and_threshold_fills_rest() {
        let rest = [SoaTransform::from_transforms([lane_t(10.0); 4])];
        let a = [SoaTransform::from_transforms([lane_t(1.0); 4])];
        let b = [SoaTransform::from_transforms([lane_t(3.0); 4])];
        let run = |layers: &[Layer<f32>], threshold: f32| {
            let mut out = [SoaTransform::IDENTITY];
            BlendingJob { layers, additive: &[], rest_pose: &rest, threshold, output: &mut out }.run().unwrap();
            out[0].translation.x
        };
        // Normalized: 2 × a and 2 × b average to 2.
        assert_eq!(run(&[Layer::new(&a, 2.0), Layer::new(&b, 2.0)], 0.1), [2.0; 4]);
        // 1 : 3 weights.
        assert_eq!(run(&[Layer::new(&a, 0.5), Layer::new(&b, 1.5)], 0.1), [2.5; 4]);
        // Negative weights count as 0.
        assert_eq!(run(&[Layer::new(&a, -1.0), Layer::new(&b, 1.0)], 0.1), [3.0; 4]);
        // Below the threshold, the rest pose takes the missing weight: 0.25 a + 0.75 rest.
        assert_eq!(run(&[Layer::new(&a, 0.25)], 1.0), [0.25 * 1.0 + 0.75 * 10.0; 4]);
        // No weight at all: the rest pose.
        assert_eq!(run(&[Layer::new(&a, 0.0)], 0.1), [10.0; 4]);
        // Per-joint weights: lane 0 only a, lane 1 only b, lane 2 half each, lane 3 none (rest).
        let ja = [[1.0, 0.0, 0.5, 0.0]];
        let jb = [[0.0, 1.0, 0.5, f32::NAN]];
        let la = Layer { transform: &a, weight: 1.0, joint_weights: Some(&ja) };
        let lb = Layer { transform: &b, weight: 1.0, joint_weights: Some(&jb) };
        assert_eq!(run(&[la, lb], 0.1), [1.0, 3.0, 2.0, 10.0]);
    }

    /// Uniform layers (one loop with the sums in registers on hosts) and the same layers with
    /// per-joint weights of 1 (one pass per layer) give the same bits.
    #[test]
    fn uniform_and_per_joint_paths_agree_bit_for_bit() {
        let mut rng = Rng(7);
        for case in 0..if cfg!(miri) { 52 } else { 200 } {
            let joints = 1 + case % 13;
            let rest =
                pose::<f32>(&(0..joints).map(|_| random_t64(&mut rng, [0.0, 0.0, 0.0, 1.0])).collect::<Vec<_>>());
            let layers: Vec<Vec<SoaTransform<f32>>> = (0..1 + case % 4)
                .map(|_| pose(&(0..joints).map(|_| random_t64(&mut rng, [0.0, 0.0, 0.0, 1.0])).collect::<Vec<_>>()))
                .collect();
            let weights: Vec<f32> = layers.iter().map(|_| rng.range(0.0, 2.0) as f32).collect();
            let ones = std::vec![[1.0f32; 4]; rest.len()];
            let uniform: Vec<Layer<f32>> = layers.iter().zip(&weights).map(|(l, &w)| Layer::new(l, w)).collect();
            let per_joint: Vec<Layer<f32>> = layers
                .iter()
                .zip(&weights)
                .map(|(l, &w)| Layer { transform: l, weight: w, joint_weights: Some(&ones) })
                .collect();
            let threshold = 0.05;
            let mut a = std::vec![SoaTransform::IDENTITY; rest.len()];
            let mut b = a.clone();
            BlendingJob { layers: &uniform, additive: &[], rest_pose: &rest, threshold, output: &mut a }.run().unwrap();
            BlendingJob { layers: &per_joint, additive: &[], rest_pose: &rest, threshold, output: &mut b }
                .run()
                .unwrap();
            assert_eq!(a, b, "case {case}");
        }
    }

    #[test]
    fn rotations_take_the_shortest_path() {
        // Two rotations about Y, ±40°, the second given with the opposite sign: the blend is
        // the identity, not a rotation through the long way.
        let q1 = Quat::from_axis_angle(Vec3::Y, 0.7f32);
        let q2 = -Quat::from_axis_angle(Vec3::Y, -0.7f32);
        let mk = |q| [SoaTransform::from_transforms([Transform { rotation: q, ..Transform::IDENTITY }; 4])];
        let (a, b) = (mk(q1), mk(q2));
        let rest = [SoaTransform::IDENTITY];
        let mut out = [SoaTransform::IDENTITY];
        BlendingJob {
            layers: &[Layer::new(&a, 1.0), Layer::new(&b, 1.0)],
            additive: &[],
            rest_pose: &rest,
            threshold: 0.1,
            output: &mut out,
        }
        .run()
        .unwrap();
        assert!(out[0].rotation.lane(0).angle_between(Quat::IDENTITY) < 1.0e-6);
    }

    #[test]
    fn additive_applies_and_subtracts_exactly() {
        let mut rng = Rng(77);
        let reference: Vec<T64> = (0..8).map(|_| random_t64(&mut rng, [0.0, 0.0, 0.0, 1.0])).collect();
        let target: Vec<T64> = (0..8).map(|_| random_t64(&mut rng, [0.0, 0.0, 0.0, 1.0])).collect();
        let (r, t) = (pose::<f32>(&reference), pose::<f32>(&target));
        let mut delta = std::vec![SoaTransform::IDENTITY; 2];
        MakeAdditiveJob { pose: &t, reference: &r, output: &mut delta }.run().unwrap();
        // Weight 1 onto the reference gives the target back.
        let mut out = std::vec![SoaTransform::IDENTITY; 2];
        BlendingJob {
            layers: &[Layer::new(&r, 1.0)],
            additive: &[Layer::new(&delta, 1.0)],
            rest_pose: &r,
            threshold: 0.1,
            output: &mut out,
        }
        .run()
        .unwrap();
        let mut worst = (0.0f32, 0.0f32);
        for j in 0..8 {
            let (g, e) = (out[j / 4].lane(j % 4), t[j / 4].lane(j % 4));
            worst.0 = worst.0.max((g.translation - e.translation).max_abs()).max((g.scale - e.scale).max_abs());
            worst.1 = worst.1.max(g.rotation.angle_between(e.rotation));
        }
        assert!(worst.0 < 1.0e-5 && worst.1 < 1.0e-5, "{worst:?}");
        // Adding with weight 1 then subtracting with weight −1 returns the base.
        BlendingJob {
            layers: &[Layer::new(&t, 1.0)],
            additive: &[Layer::new(&delta, 1.0), Layer::new(&delta, -1.0)],
            rest_pose: &r,
            threshold: 0.1,
            output: &mut out,
        }
        .run()
        .unwrap();
        let mut worst = (0.0f32, 0.0f32);
        for j in 0..8 {
            let (g, e) = (out[j / 4].lane(j % 4), t[j / 4].lane(j % 4));
            worst.0 = worst.0.max((g.translation - e.translation).max_abs()).max((g.scale - e.scale).max_abs());
            worst.1 = worst.1.max(g.rotation.angle_between(e.rotation));
        }
        assert!(worst.0 < 1.0e-5 && worst.1 < 1.0e-5, "{worst:?}");
        // Weight 0.5 of a pure rotation delta of 80° about X rotates by 40°.
        let d = [SoaTransform::from_transforms(
            [Transform { rotation: Quat::from_axis_angle(Vec3::X, 1.4f32), ..Transform::IDENTITY }; 4],
        )];
        let id = [SoaTransform::IDENTITY];
        let mut o = [SoaTransform::IDENTITY];
        BlendingJob {
            layers: &[Layer::new(&id, 1.0)],
            additive: &[Layer::new(&d, 0.5)],
            rest_pose: &id,
            threshold: 0.1,
            output: &mut o,
        }
        .run()
        .unwrap();
        let a = o[0].rotation.lane(0).angle_between(Quat::IDENTITY);
        // nlerp from identity is not constant-speed: within 1° of half the angle.
        assert!((a - 0.7).abs() < 0.02, "{a}");
    }
}
