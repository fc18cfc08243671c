//! Key reduction: the keys of a channel to keep so every removed key is reproduced within a
//! tolerance, each check counted against the work budget.

use super::measure::angle;
use super::tracks::key_value;
use super::work::Work;
use crate::eval;
use crate::rig::{ChannelTarget, Interpolation, RigChannel};

/// The error of approximating `raw` with `approx`, in scene units, for a track on a joint whose
/// farthest virtual vertex is `extent` away.
pub(super) fn value_error(target: ChannelTarget, raw: [f64; 4], approx: [f64; 4], extent: f64) -> f64 {
    match target {
        ChannelTarget::Rotation => angle(raw, approx) * extent,
        ChannelTarget::Translation => (0..3).map(|j| (raw[j] - approx[j]).powi(2)).sum::<f64>().sqrt(),
        ChannelTarget::Scale => (0..3).map(|j| (raw[j] - approx[j]).abs()).fold(0.0, f64::max) * extent,
    }
}

fn interp_value(target: ChannelTarget, a: [f64; 4], b: [f64; 4], s: f64) -> [f64; 4] {
    if target == ChannelTarget::Rotation {
        eval::slerp(a, b, s)
    } else {
        core::array::from_fn(|j| a[j] + (b[j] - a[j]) * s)
    }
}

/// Most source key intervals one baked interval of [`reduce`] spans.
const MAX_REDUCE_SPAN: usize = 256;

/// Keys to keep so every removed key is reproduced within `tol` (scene units). Each key checked
/// costs one step of `work`; `None` when the budget runs out.
pub(super) fn reduce(c: &RigChannel, tol: f64, extent: f64, work: &mut Work) -> Option<Vec<usize>> {
    let n = c.times.len();
    if n <= 1 {
        return Some((0..n).collect());
    }
    let first = key_value(c, 0);
    let mut within = |a: [f64; 4], b: [f64; 4]| -> Option<bool> {
        work.spend(1).then(|| value_error(c.target, a, b, extent) <= tol)
    };
    let mut constant = true;
    for k in 1..n {
        if !within(key_value(c, k), first)? {
            constant = false;
            break;
        }
    }
    if constant {
        return Some(vec![0]);
    }
    let mut kept = vec![0];
    if c.interpolation == Interpolation::Step {
        let mut last = first;
        for k in 1..n {
            let v = key_value(c, k);
            if !within(v, last)? {
                kept.push(k);
                last = v;
            }
        }
        return Some(kept);
    }
    let mut i = 0;
    let mut j = 2;
    while j < n {
        let (ti, tj) = (c.times[i] as f64, c.times[j] as f64);
        let (vi, vj) = (key_value(c, i), key_value(c, j));
        // A segment is checked key by key, so its length is capped: without the cap, keys on
        // a straight line make one segment of the whole track, checked in quadratic time.
        let mut ok = j - i <= MAX_REDUCE_SPAN;
        if ok {
            for m in i + 1..j {
                let s = (c.times[m] as f64 - ti) / (tj - ti);
                if !within(key_value(c, m), interp_value(c.target, vi, vj, s))? {
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            j += 1;
        } else {
            kept.push(j - 1);
            i = j - 1;
            j = i + 2;
        }
    }
    kept.push(n - 1);
    Some(kept)
}
