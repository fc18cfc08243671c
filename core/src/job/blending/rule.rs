//! The blending rule in plain code: one SoA element at a time, each of its four joints in
//! scalar arithmetic, the operations in the order the kernels (`blending/kernels.rs`) compute
//! them in lanes. The build's own kernels give the rule's bits, in `f32` and `Q16`; the
//! x86-64-v3 kernels fuse multiply-adds, and the eight-lane crossfade divides the weights by
//! their total first, so the tests hold those within a stated tolerance instead.
//!
//! The additive layers' delta is applied by [`apply_additive`], scalar in every build: the
//! rule and the kernels share it.

use super::{apply_additive, clamped_weights, weight, Layer};
use crate::math::{SoaTransform, Transform};
use crate::real::Real;

/// A joint's weighted sums: translation, rotation (x, y, z, w), scale.
#[derive(Clone, Copy)]
struct Sums<R> {
    t: [R; 3],
    q: [R; 4],
    s: [R; 3],
}

impl<R: Real> Sums<R> {
    /// The sums of no layer: `0 · identity`, every component +0.
    fn zero() -> Self {
        Sums { t: [R::ZERO; 3], q: [R::ZERO; 4], s: [R::ZERO; 3] }
    }

    /// `w · x`.
    fn scaled(x: &Transform<R>, w: R) -> Self {
        let (t, q, s) = (x.translation, x.rotation, x.scale);
        Sums { t: [w * t.x, w * t.y, w * t.z], q: [w * q.x, w * q.y, w * q.z, w * q.w], s: [w * s.x, w * s.y, w * s.z] }
    }

    /// `self += w · x`, `x`'s rotation taken with the weight `−w` where its dot product with
    /// the running sum, `(sx·x + sy·y) + (sz·z + sw·w)`, is negative (the shortest path).
    fn add(&mut self, x: &Transform<R>, w: R) {
        let (t, q, s) = (x.translation, x.rotation, x.scale);
        let (t, q, s) = ([t.x, t.y, t.z], [q.x, q.y, q.z, q.w], [s.x, s.y, s.z]);
        let sq = self.q;
        let dot = (sq[0] * q[0] + sq[1] * q[1]) + (sq[2] * q[2] + sq[3] * q[3]);
        let wq = if dot < R::ZERO { -w } else { w };
        for c in 0..4 {
            self.q[c] = wq * q[c] + self.q[c];
        }
        for c in 0..3 {
            self.t[c] = w * t[c] + self.t[c];
            self.s[c] = w * s[c] + self.s[c];
        }
    }

    /// The blended joint: translation and scale divided by the total weight, the rotation
    /// normalized (the identity where its squared length is 0 or not finite). Floating point
    /// multiplies by `1 / total` and by `1 / √l2` (`√` correctly rounded); fixed point divides,
    /// the rotation by the total first.
    fn finish(&self, total: R) -> Transform<R> {
        let (t, s) = if R::FIXED_POINT {
            (self.t.map(|v| v / total), self.s.map(|v| v / total))
        } else {
            let inv = R::ONE / total;
            (self.t.map(|v| v * inv), self.s.map(|v| v * inv))
        };
        let q = if R::FIXED_POINT {
            let [x, y, z, w] = self.q.map(|v| v / total);
            let l2 = x * x + y * y + z * z + w * w;
            let len = l2.sqrt();
            if l2 > R::ZERO {
                [x / len, y / len, z / len, w / len]
            } else {
                [R::ZERO, R::ZERO, R::ZERO, R::ONE]
            }
        } else {
            let [x, y, z, w] = self.q;
            let l2 = (x * x + y * y) + (z * z + w * w);
            let inv = R::ONE / R::from_f32(f32::sqrt(l2.to_f32()));
            if l2 > R::ZERO && l2.is_finite() {
                [x * inv, y * inv, z * inv, w * inv]
            } else {
                [R::ZERO, R::ZERO, R::ZERO, R::ONE]
            }
        };
        let mut out = Transform::<R>::IDENTITY;
        (out.translation.x, out.translation.y, out.translation.z) = (t[0], t[1], t[2]);
        (out.rotation.x, out.rotation.y, out.rotation.z, out.rotation.w) = (q[0], q[1], q[2], q[3]);
        (out.scale.x, out.scale.y, out.scale.z) = (s[0], s[1], s[2]);
        out
    }
}

/// A normal layer's weights on element `e`'s four joints: `max(weight, 0)`, times the
/// per-joint weights clamped into `[0, 1]` where the layer has them.
fn weights<R: Real>(layer: &Layer<'_, R>, e: usize) -> [R; 4] {
    match layer.joint_weights {
        Some(jw) => clamped_weights(weight(layer.weight), &jw[e]),
        None => [weight(layer.weight); 4],
    }
}

/// What [`BlendingJob::run`](super::BlendingJob::run) writes into `out` for these inputs
/// (checked: every slice at least `rest_pose.len()` long), by the rule:
///
/// - the normal layers in order, those of weight `max(weight, 0) = 0` left out: the first
///   stores `w · x`, the others add `w · x` with the rotation on the shortest path
///   ([`Sums::add`]); four joints of weight 0 (an element) leave a layer out, but the first
///   layer still counts as the first there;
/// - the total weight summed in layer order; where some joint of the element has a total
///   below `threshold`, the rest pose added with the weights `max(threshold − total, 0)` on all
///   four joints, and those weights added to the totals;
/// - the sums divided by the totals, the rotation normalized ([`Sums::finish`]);
/// - the additive layers in order, an element whose four weights are 0 left out
///   ([`apply_additive`]).
pub(super) fn blend<R: Real>(
    layers: &[Layer<'_, R>],
    additive: &[Layer<'_, R>],
    rest_pose: &[SoaTransform<R>],
    threshold: R,
    out: &mut [SoaTransform<R>],
) {
    for (e, (o, rest)) in out.iter_mut().zip(rest_pose).enumerate() {
        let mut sums = [Sums::zero(); 4];
        let mut first = true;
        for layer in layers.iter().filter(|l| weight(l.weight) != R::ZERO) {
            let w = weights(layer, e);
            if w != [R::ZERO; 4] {
                for (j, sum) in sums.iter_mut().enumerate() {
                    let x = layer.transform[e].lane(j);
                    if first {
                        *sum = Sums::scaled(&x, w[j]);
                    } else {
                        sum.add(&x, w[j]);
                    }
                }
            }
            first = false;
        }
        let mut total = [R::ZERO; 4];
        for layer in layers {
            let w = weights(layer, e);
            for j in 0..4 {
                total[j] += w[j];
            }
        }
        let rest_w = total.map(|t| (threshold - t).max(R::ZERO));
        if rest_w.iter().any(|&w| w > R::ZERO) {
            for j in 0..4 {
                sums[j].add(&rest.lane(j), rest_w[j]);
                total[j] += rest_w[j];
            }
        }
        for j in 0..4 {
            o.set_lane(j, &sums[j].finish(total[j]));
        }
        for layer in additive {
            let w = match layer.joint_weights {
                Some(jw) => clamped_weights(layer.weight, &jw[e]),
                None => [layer.weight; 4],
            };
            if w != [R::ZERO; 4] {
                apply_additive(o, &layer.transform[e], w);
            }
        }
    }
}
