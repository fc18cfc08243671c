// The blending job's lane kernels, written once and compiled once per kernel set: `blending.rs`
// includes this file in its modules `build` and `v3`, each of which names its set with the
// constant `V3` that the lane operations read (`avx2(V3)`, `mul_add_on::<V3>`). The rule these
// kernels compute is `blending/rule.rs`; the tests hold them to it.

use super::{apply_additive, clamped_weights, weight, Blend, Layer};
use crate::math::SoaTransform;
use crate::platform::{avx2, HOST_KERNELS};
use crate::real::{Lanes, Real};

/// Runs a checked job ([`Blend`]): the normal layers ([`blend_layers`]), the rest pose below
/// the threshold and the normalization ([`fill_rest_and_normalize`]), the additive layers
/// ([`add_additive_layers`]); or, on hosts, in the usual uniform case, all in one loop
/// ([`blend_uniform_layers`]).
#[inline(always)]
pub(super) fn blend<R: Real>(job: Blend<'_, '_, R>) {
    let Blend { layers, additive, rest_pose, threshold, total, uniform, out } = job;
    // The usual case in floating point: every layer with one weight for the whole pose,
    // a total above the threshold, no additive layer. One loop over the elements keeps each
    // element's sums in registers across the layers (the same operations, in the same
    // order, as the passes below). Hosts only: on microcontrollers the passes alone keep
    // the code small.
    if HOST_KERNELS && !R::FIXED_POINT && additive.is_empty() && uniform && total >= threshold {
        blend_uniform_layers(layers, total, out);
        return;
    }
    blend_layers(layers, out);
    fill_rest_and_normalize(layers, rest_pose, threshold, out);
    add_additive_layers(additive, out);
}

/// The normal layers' blend in one loop over the elements, each element's sums kept in
/// registers across the layers, for the usual case in floating point: every layer with one
/// weight for the whole pose, a total weight at least the threshold (so the rest pose takes no
/// weight), no additive layer. The same operations in the same order as [`blend_layers`] then
/// [`fill_rest_and_normalize`], so the same bits. Two layers of nonzero weight (a crossfade, a
/// two-clip blend) go without the per-layer loop and its bounds checks; where the build has
/// AVX2, they take the eight-lane [`blend_two_paired`] instead (other roundings).
///
/// Assumes what `run` checked: `R` floating point, every layer's `transform` at least
/// `out.len()` long, no per-joint weights, `total` the sum of the layers' weights and positive.
#[inline(always)]
fn blend_uniform_layers<R: Real>(layers: &[Layer<'_, R>], total: R, out: &mut [SoaTransform<R>]) {
    let n = out.len();
    let inv_w = V::<R>::splat(total).recip();
    let zero = V::<R>::splat(R::ZERO);
    if let [a, b] = layers {
        let (wa, wb) = (weight(a.weight), weight(b.weight));
        if wa != R::ZERO && wb != R::ZERO {
            if avx2(V3) {
                blend_two_paired(&a.transform[..n], &b.transform[..n], wa, wb, total, out);
                return;
            }
            // Two active layers (a crossfade, a two-clip blend): the same operations
            // without the per-layer loop and its bounds checks.
            let (wa, wb) = (V::<R>::splat(wa), V::<R>::splat(wb));
            for ((o, x), y) in out.iter_mut().zip(&a.transform[..n]).zip(&b.transform[..n]) {
                let mut acc = Sums::scaled(x, wa);
                acc.add(y, wb);
                acc.store_means(o, inv_w);
            }
            normalize_rotations(out);
            return;
        }
    }
    for (e, o) in out.iter_mut().enumerate() {
        let mut acc = Sums { t: [zero; 3], q: [zero; 4], s: [zero; 3] };
        let mut first = true;
        for layer in layers {
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
        acc.store_means(o, inv_w);
    }
    normalize_rotations(out);
}

/// Normalizes the rotation sums that [`Sums::store_means`] left in `out`, element by element
/// as [`Sums::normalize_into`] does. A pass of its own: the elements do not depend on each
/// other, so the square roots and divisions of several elements overlap, where in the summing
/// loop each would wait at the end of its element's dependency chain.
#[inline(always)]
fn normalize_rotations<R: Real>(out: &mut [SoaTransform<R>]) {
    for o in out {
        let q = [ld(&o.rotation.x), ld(&o.rotation.y), ld(&o.rotation.z), ld(&o.rotation.w)];
        let [x, y, z, w] = unit_rotation::<R>(q);
        o.rotation.x = x.to_array();
        o.rotation.y = y.to_array();
        o.rotation.z = z.to_array();
        o.rotation.w = w.to_array();
    }
}

/// A rotation sum's lanes normalized (identity where the sum vanished or overflowed).
#[inline(always)]
fn unit_rotation<R: Real>(q: [V<R>; 4]) -> [V<R>; 4] {
    let (zero, one) = (V::<R>::splat(R::ZERO), V::<R>::splat(R::ONE));
    let [qx, qy, qz, qw] = q;
    let l2 = qy.mul_add_on::<V3>(qy, qx * qx) + qw.mul_add_on::<V3>(qw, qz * qz);
    // 1 / √l2 from the correctly rounded square root: two short instructions where lanes are
    // SIMD (Newton steps from an estimate would form a long dependency chain).
    let inv_q = one / l2.sqrt_ieee();
    [
        l2.select_positive_finite(qx * inv_q, zero),
        l2.select_positive_finite(qy * inv_q, zero),
        l2.select_positive_finite(qz * inv_q, zero),
        l2.select_positive_finite(qw * inv_q, one),
    ]
}

/// An element's ten components as five pairs of lane vectors, in memory order: (tx, ty),
/// (tz, qx), (qy, qz), (qw, sx), (sy, sz). Where the build has AVX2 a pair is one `ymm`
/// register, so the five cover the element's 160 bytes.
type Pairs<R> = [[V<R>; 2]; 5];

/// The [`Pairs`] of `x`.
#[inline(always)]
fn pairs<R: Real>(x: &SoaTransform<R>) -> Pairs<R> {
    [
        [ld(&x.translation.x), ld(&x.translation.y)],
        [ld(&x.translation.z), ld(&x.rotation.x)],
        [ld(&x.rotation.y), ld(&x.rotation.z)],
        [ld(&x.rotation.w), ld(&x.scale.x)],
        [ld(&x.scale.y), ld(&x.scale.z)],
    ]
}

/// Writes [`Pairs`] into `o`.
#[inline(always)]
fn store_pairs<R: Real>(o: &mut SoaTransform<R>, p: &Pairs<R>) {
    [o.translation.x, o.translation.y] = [p[0][0].to_array(), p[0][1].to_array()];
    [o.translation.z, o.rotation.x] = [p[1][0].to_array(), p[1][1].to_array()];
    [o.rotation.y, o.rotation.z] = [p[2][0].to_array(), p[2][1].to_array()];
    [o.rotation.w, o.scale.x] = [p[3][0].to_array(), p[3][1].to_array()];
    [o.scale.y, o.scale.z] = [p[4][0].to_array(), p[4][1].to_array()];
}

/// Two layers of positive weights `wa`, `wb` (their sum `total`) blended, for builds with
/// AVX2: each element as five eight-lane [`Pairs`], the weights divided by the total up front
/// (`(wa / W) · a + (wb / W) · b`, fused), then the rotations normalized in a pass of their own
/// ([`normalize_rotations`], whose square roots and divisions overlap across elements). The
/// rules of [`blend_uniform_layers`], rounded differently (within the accuracy the tests state).
///
/// Assumes `a` and `b` at least `out.len()` long.
#[inline(always)]
fn blend_two_paired<R: Real>(
    a: &[SoaTransform<R>],
    b: &[SoaTransform<R>],
    wa: R,
    wb: R,
    total: R,
    out: &mut [SoaTransform<R>],
) {
    let inv = R::ONE / total;
    let (wa, wb) = (V::<R>::splat(wa * inv), V::<R>::splat(wb * inv));
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        store_pairs(o, &two_sums(x, y, wa, wb));
    }
    normalize_rotations(out);
}

/// The sums `wa · x + wb · y` of [`blend_two_paired`] as [`Pairs`], `y`'s rotation brought into
/// the hemisphere of `x`'s (`wa`, `wb` positive).
#[inline(always)]
fn two_sums<R: Real>(x: &SoaTransform<R>, y: &SoaTransform<R>, wa: V<R>, wb: V<R>) -> Pairs<R> {
    let (x, y) = (pairs(x), pairs(y));
    let ww = [wa, wa];
    let s = [
        V::<R>::mul_pairs(x[0], ww),
        V::<R>::mul_pairs(x[1], ww),
        V::<R>::mul_pairs(x[2], ww),
        V::<R>::mul_pairs(x[3], ww),
        V::<R>::mul_pairs(x[4], ww),
    ];
    // The sign of the rotations' dot product: (qx·qx' + qw·qw') + (qy·qy' + qz·qz').
    let d = V::<R>::mul_pairs([s[1][1], s[3][0]], [y[1][1], y[3][0]]);
    let d = V::<R>::mul_add_pairs_on::<V3>(s[2], y[2], d);
    let wq = wb.negate_where_negative(d[0] + d[1]);
    [
        V::<R>::mul_add_pairs_on::<V3>(y[0], [wb, wb], s[0]),
        V::<R>::mul_add_pairs_on::<V3>(y[1], [wb, wq], s[1]),
        V::<R>::mul_add_pairs_on::<V3>(y[2], [wq, wq], s[2]),
        V::<R>::mul_add_pairs_on::<V3>(y[3], [wq, wb], s[3]),
        V::<R>::mul_add_pairs_on::<V3>(y[4], [wb, wb], s[4]),
    ]
}

/// Blends the normal layers into `out`, which holds their running weighted sums afterwards:
/// one pass per layer of positive weight over the elements, the first storing `w · x`, the
/// others adding it with each quaternion brought into the hemisphere of the running sum. `w` is
/// the layer weight, times the per-joint weights clamped into `[0, 1]` where the layer has them
/// (four joints of weight 0 ignore the layer, whatever it holds). With no such layer, `out`
/// holds zero sums.
///
/// Assumes every layer's `transform` and `joint_weights` at least `out.len()` long.
#[inline(always)]
fn blend_layers<R: Real>(layers: &[Layer<'_, R>], out: &mut [SoaTransform<R>]) {
    let n = out.len();
    // One pass per normal layer over the output, which holds the running sums (it stays in
    // L1 for any skeleton: 160 bytes per four joints). The layer's weight is hoisted out of
    // its pass; the first active layer stores instead of adding.
    let mut first = true;
    for layer in layers {
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
}

/// Fills in the rest pose and normalizes, element by element ([`finish`]): the total weight of
/// the normal layers in each lane (one value for the whole pose unless a layer has per-joint
/// weights), the rest pose added with the weight `threshold − total` where that is positive,
/// then translation and scale divided by the total and the rotation normalized.
///
/// Assumes `out` holds the sums of [`blend_layers`] over the same `layers`, and `rest_pose` at
/// least `out.len()` long.
#[inline(always)]
fn fill_rest_and_normalize<R: Real>(
    layers: &[Layer<'_, R>],
    rest_pose: &[SoaTransform<R>],
    threshold: R,
    out: &mut [SoaTransform<R>],
) {
    // Total weights: one value for the whole pose unless a layer has per-joint weights.
    let per_joint = layers.iter().any(|l| l.joint_weights.is_some());
    let mut uniform = R::ZERO;
    for layer in layers {
        uniform += weight(layer.weight);
    }
    for (e, (o, rest)) in out.iter_mut().zip(rest_pose).enumerate() {
        let mut total = [uniform; 4];
        if per_joint {
            total = [R::ZERO; 4];
            for layer in layers {
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
    }
}

/// Applies the additive layers to the blended pose in `out`, in order, element by element
/// ([`apply_additive`]), each with its signed weight times its per-joint weights clamped into
/// `[0, 1]`; four joints of weight 0 skip the layer.
///
/// Assumes every layer's `transform` and `joint_weights` at least `out.len()` long.
#[inline(always)]
fn add_additive_layers<R: Real>(additive: &[Layer<'_, R>], out: &mut [SoaTransform<R>]) {
    for (e, o) in out.iter_mut().enumerate() {
        for layer in additive {
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
        let dot = self.q[1].mul_add_on::<V3>(qy, self.q[0] * qx) + self.q[3].mul_add_on::<V3>(qw, self.q[2] * qz);
        let wq = w.negate_where_negative(dot);
        self.q = [
            wq.mul_add_on::<V3>(qx, self.q[0]),
            wq.mul_add_on::<V3>(qy, self.q[1]),
            wq.mul_add_on::<V3>(qz, self.q[2]),
            wq.mul_add_on::<V3>(qw, self.q[3]),
        ];
        self.t[0] = w.mul_add_on::<V3>(ld(&x.translation.x), self.t[0]);
        self.t[1] = w.mul_add_on::<V3>(ld(&x.translation.y), self.t[1]);
        self.t[2] = w.mul_add_on::<V3>(ld(&x.translation.z), self.t[2]);
        self.s[0] = w.mul_add_on::<V3>(ld(&x.scale.x), self.s[0]);
        self.s[1] = w.mul_add_on::<V3>(ld(&x.scale.y), self.s[1]);
        self.s[2] = w.mul_add_on::<V3>(ld(&x.scale.z), self.s[2]);
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
    /// (1 / total weight), the rotation sum normalized ([`unit_rotation`]).
    #[inline(always)]
    fn normalize_into(&self, o: &mut SoaTransform<R>, inv_w: V<R>) {
        let [x, y, z, w] = unit_rotation::<R>(self.q);
        o.rotation.x = x.to_array();
        o.rotation.y = y.to_array();
        o.rotation.z = z.to_array();
        o.rotation.w = w.to_array();
        self.store_translation_scale(o, inv_w);
    }

    /// Translation and scale times `inv_w` (1 / total weight) into `o`, and the rotation sum
    /// as it is, for [`normalize_rotations`] to finish.
    #[inline(always)]
    fn store_means(&self, o: &mut SoaTransform<R>, inv_w: V<R>) {
        o.rotation.x = self.q[0].to_array();
        o.rotation.y = self.q[1].to_array();
        o.rotation.z = self.q[2].to_array();
        o.rotation.w = self.q[3].to_array();
        self.store_translation_scale(o, inv_w);
    }

    /// Translation and scale times `inv_w` into `o`.
    #[inline(always)]
    fn store_translation_scale(&self, o: &mut SoaTransform<R>, inv_w: V<R>) {
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
