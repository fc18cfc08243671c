// SoA sampling's lane kernels, written once and compiled once per kernel set: `clip/soa.rs`
// includes this file in its modules `build` and `v3`, each of which declares the constant `V3`
// that the lane operations read (`mul_add_on::<V3>`).

use super::*;

/// Samples every element of a pose at clip time `t` into `out` through its cache in `caches`
/// ([`sample`]); `rest` is the rest pose.
#[inline(always)]
pub(crate) fn sample_pose<R: Real>(
    clip: &Clip<'_>,
    t: R,
    rot: RotationInterpolation,
    rest: &[SoaTransform<R>],
    caches: &mut [SoaTrackCache<R>],
    out: &mut [SoaTransform<R>],
) {
    let time = ClipTime::new(clip);
    let base = SoaTrackCache::tag_base(&time, rest);
    for (g, ((state, rest_g), out_g)) in caches.iter_mut().zip(rest.iter()).zip(out.iter_mut()).enumerate() {
        let tag = SoaTrackCache::<R>::tag_of(base, g);
        sample(state, clip, g, tag, t, &time, rot, rest_g, out_g);
    }
}

/// Samples element `group` of the pose at clip time `t` (clamped to the clip range) into
/// `out`; `rest` is that element of the rest pose, `tag` its [`tag_of`](SoaTrackCache::tag_of).
#[cfg_attr(sinew_host_kernels, inline(always))]
#[cfg_attr(not(sinew_host_kernels), inline)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn sample<R: Real>(
    cache: &mut SoaTrackCache<R>,
    clip: &Clip<'_>,
    group: usize,
    tag: u32,
    t: R,
    time: &ClipTime<R>,
    rot: RotationInterpolation,
    rest: &SoaTransform<R>,
    out: &mut SoaTransform<R>,
) {
    if cache.tag != tag {
        cache.reset(clip, group, tag, rest);
    }
    let tl = V::<R>::splat(t);

    let miss = cache.translation_span.misses(tl);
    if miss != 0 {
        cache.refill_vectors(clip, 0, miss, t, time, rest);
    }
    let s = cache.translation_span.param(tl);
    lerp_into(&cache.translation, &cache.translation1, s, &mut out.translation);

    let miss = cache.scale_span.misses(tl);
    if miss != 0 {
        cache.refill_vectors(clip, 2, miss, t, time, rest);
    }
    let s = cache.scale_span.param(tl);
    lerp_into(&cache.scale, &cache.scale1, s, &mut out.scale);

    let miss = cache.rotation_span.misses(tl);
    if miss != 0 {
        cache.refill_rotations(clip, miss, t, time, rest);
    }
    rotations_into(cache, tl, rot, &mut out.rotation);

    // Cubic-spline lanes, rare: one test of the three masks skips them all.
    if cache.direct == [0; 3] {
        return;
    }
    for target in 0..3 {
        for l in lanes_of(u32::from(cache.direct[target])) {
            // A direct lane is evaluated from its track.
            let tv = clip.track_view(cache.track[target][l] as usize);
            let v = tv.evaluate(t, time, &mut cache.key[target][l], rot);
            match target {
                0 => out.translation.set_lane(l, crate::math::Vec3::new(v[0], v[1], v[2])),
                1 => out.rotation.set_lane(l, Quat::from_array(v)),
                _ => out.scale.set_lane(l, crate::math::Vec3::new(v[0], v[1], v[2])),
            }
        }
    }
}

/// Interpolates the four rotations at `t`: corrected nlerp, or exact slerp in the lanes the
/// clip flags (four lanes at once), or in every lane when `rot` asks for it (lane by lane).
#[inline(always)]
fn rotations_into<R: Real>(cache: &SoaTrackCache<R>, t: V<R>, rot: RotationInterpolation, out: &mut SoaQuat<R>) {
    let s = cache.rotation_span.param(t);
    // The corrected-nlerp warp of `quat::warp_t`, lane by lane in the same order.
    let one = V::<R>::splat(R::ONE);
    let half = V::<R>::splat(R::HALF);
    let w = &cache.warp;
    let u = s * (s - one);
    let ws = s + u * (s - half) * (V::<R>::load(&w[0]) + u * (V::<R>::load(&w[1]) + u * V::<R>::load(&w[2])));
    // q = a·c0 + b·c1.
    let (mut c0, mut c1) = (one - ws, ws);
    if cache.exact_slerp != 0 {
        // Slerp lanes hold θ and 1/sin θ (θ ≤ π/2, since the keys share a hemisphere).
        let theta = V::<R>::load(&w[0]);
        let inv_sin = V::<R>::load(&w[1]);
        let e0 = sin_quadrant::<R>((one - s) * theta) * inv_sin;
        let e1 = sin_quadrant::<R>(s * theta) * inv_sin;
        let key = V::<R>::load(&cache.slerp_key);
        c0 = key.select_positive_finite(e0, c0);
        c1 = key.select_positive_finite(e1, c1);
    }
    let (a, b) = (&cache.rotation0, &cache.rotation1);
    let mix = |a: &[R; 4], b: &[R; 4]| V::<R>::load(b).mul_add_on::<V3>(c1, V::<R>::load(a) * c0);
    let (x, y, z, q) = (mix(&a.x, &b.x), mix(&a.y, &b.y), mix(&a.z, &b.z), mix(&a.w, &b.w));
    // `Quat::normalize_near_unit`, lane by lane.
    let l2 = x * x + y * y + z * z + q * q;
    let e = l2 - one;
    let near = e.abs().mask_lt(V::<R>::splat(R::ratio(1, 100)));
    let y0 = one - half * e;
    let y1 = y0 * (V::<R>::splat(R::ratio(3, 2)) - half * l2 * y0 * y0);
    out.x = (x * y1).to_array();
    out.y = (y * y1).to_array();
    out.z = (z * y1).to_array();
    out.w = (q * y1).to_array();
    let slow = if rot == RotationInterpolation::Slerp { (cache.interpolating & !cache.exact_slerp) as u32 } else { 0 };
    let lanes = (!near & 0xF) | slow;
    if lanes != 0 {
        let (xs, ys, zs, qs, ss) = (x.to_array(), y.to_array(), z.to_array(), q.to_array(), s.to_array());
        for l in lanes_of(lanes) {
            let v = if slow & (1 << l) != 0 {
                a.lane(l).slerp(b.lane(l), ss[l]).normalize()
            } else {
                Quat::new(xs[l], ys[l], zs[l], qs[l]).normalize()
            };
            out.set_lane(l, v);
        }
    }
}

/// `out = value + (value1 − value) · s`, lane by lane.
#[inline(always)]
fn lerp_into<R: Real>(value: &SoaVec3<R>, value1: &SoaVec3<R>, s: V<R>, out: &mut SoaVec3<R>) {
    let lerp = |a: &[R; 4], b: &[R; 4]| {
        let a = V::<R>::load(a);
        (V::<R>::load(b) - a).mul_add_on::<V3>(s, a).to_array()
    };
    out.x = lerp(&value.x, &value1.x);
    out.y = lerp(&value.y, &value1.y);
    out.z = lerp(&value.z, &value1.z);
}
