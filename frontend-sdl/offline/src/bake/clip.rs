//! One clip: its evaluation times, the encoding search (encode, measure, tighten the joints that
//! miss the bound, repeat) within the work budget, the lossless fallback, and its report.

use sinew::asset::format::TRACK_FLAG_SLERP;

use super::measure::{extents, measure, nlerp_deviation, posed, PoseCheck};
use super::pack::{encode_packed, grid_error, Grid, KeyTolerance};
use super::quantize::{encode_quantized, key_range_overflow};
use super::reduce::{reduce, value_error};
use super::tracks::{encode_f32, encode_f32_keys, key_value};
use super::work::Work;
use super::write::{EncClip, EncSkeleton, EncTrack};
use super::{BakeError, BakeOptions, ClipReport};
use crate::rig::{ChannelTarget, Interpolation, Rig, RigChannel, RigClip};

/// Bakes one clip (`shells`: per joint, the distance of its virtual vertices in scene units):
/// the searched encoding, or the lossless one when the search does not fit in
/// what is left of `work`.
pub(super) fn bake_clip(
    rig: &Rig,
    skel: &EncSkeleton,
    clip: &RigClip,
    opts: &BakeOptions,
    shells: &[f64],
    work: &mut Work,
    check: &mut PoseCheck,
) -> Result<(EncClip, ClipReport), BakeError> {
    let (start, end) = clip.time_range();
    let mut times: Vec<f32> = clip.channels.iter().flat_map(|c| c.times.iter().copied()).collect();
    times.sort_by(f32::total_cmp);
    times.dedup();
    let source_keys: usize = clip.channels.iter().map(|c| c.times.len()).sum();
    if clip.channels.iter().any(|c| c.times.len() > 65535) {
        return Err(BakeError::TooManyKeys { clip: clip.name.clone() });
    }
    let channels: Vec<&RigChannel> =
        clip.channels.iter().filter(|c| c.joint < rig.joints.len() && !c.times.is_empty()).collect();
    for c in &channels {
        if let Some(largest) = key_range_overflow(c) {
            return Err(BakeError::KeyRange {
                clip: clip.name.clone(),
                joint: rig.joints.get(c.joint).map(|j| j.name.clone()).unwrap_or_default(),
                property: match c.target {
                    ChannelTarget::Translation => "translation",
                    ChannelTarget::Rotation => "rotation",
                    ChannelTarget::Scale => "scale",
                },
                largest,
            });
        }
    }
    // Evaluation times: every source key time and three points inside each interval — at ½
    // and near the peaks of corrected nlerp's deviation (about 0.2 and 0.8).
    let mut eval_times: Vec<f64> = Vec::new();
    for (i, &t) in times.iter().enumerate() {
        eval_times.push(t as f64);
        if let Some(&n) = times.get(i + 1) {
            for f in [0.2, 0.5, 0.8] {
                eval_times.push(t as f64 + (n as f64 - t as f64) * f);
            }
        }
    }
    if eval_times.is_empty() {
        eval_times.push(start as f64);
    }
    let before = work.left;
    // One measurement: every joint and every source track at every evaluation time.
    let measure_cost = (eval_times.len() as u64).saturating_mul((rig.joints.len() + clip.channels.len()) as u64);
    let searched = if measure_cost <= work.left {
        search(rig, skel, clip, &channels, (&times, &eval_times), (opts, shells), measure_cost, work, check)?
    } else {
        None
    };
    let fallback = searched.is_none();
    let (tracks, errors, at) = match searched {
        Some(found) => found,
        None => {
            // Lossless, with exact slerp: the runtime reproduces the source's interpolation.
            let tracks = channels
                .iter()
                .map(|c| {
                    let mut t = encode_f32(c);
                    if c.target == ChannelTarget::Rotation && c.interpolation == Interpolation::Linear {
                        t.flags |= TRACK_FLAG_SLERP;
                    }
                    t
                })
                .collect();
            (tracks, vec![0.0; rig.joints.len()], vec![f64::from(start); rig.joints.len()])
        }
    };
    let enc = EncClip { name: clip.name.clone(), start, end, tracks };
    if fallback {
        // Unmeasured: the runtime's poses are checked at the source key times (between them,
        // linear keys stay between their neighbours and slerped rotations are unit).
        let key_times: Vec<f64> = times.iter().map(|&t| f64::from(t)).collect();
        posed(rig, skel, Some(&enc), &key_times, check, |_, _| Ok(()))?;
    }
    let (worst_joint, max_error) =
        errors.iter().copied().enumerate().fold((0, 0.0f64), |acc, (j, e)| if e > acc.1 { (j, e) } else { acc });
    let animated: std::collections::HashSet<usize> = channels.iter().map(|c| c.joint).collect();
    let report = ClipReport {
        name: clip.name.clone(),
        duration: end - start,
        tracks: enc.tracks.len(),
        source_keys,
        baked_keys: enc.tracks.iter().map(|t| t.keys as usize).sum(),
        source_times: times.len(),
        raw_bytes: 40 * animated.len() * times.len(),
        baked_bytes: 0,
        max_error,
        max_error_joint: if fallback {
            String::new()
        } else {
            rig.joints.get(worst_joint).map(|j| j.name.clone()).unwrap_or_default()
        },
        max_error_joint_index: (max_error > 0.0).then_some(worst_joint),
        max_error_time: if max_error > 0.0 { at[worst_joint] } else { f64::from(start) },
        work: before - work.left,
        fallback,
    };
    Ok((enc, report))
}

/// A clip's tracks, the per-joint errors measured for them and the time of each.
type Searched = (Vec<EncTrack>, Vec<f64>, Vec<f64>);

/// The encoding search of [`bake_clip`]: encode, measure, tighten the joints that miss the bound,
/// repeat. Returns the tracks and the per-joint errors with their times, or `None` when `work`
/// runs out first.
#[allow(clippy::too_many_arguments)]
fn search(
    rig: &Rig,
    skel: &EncSkeleton,
    clip: &RigClip,
    channels: &[&RigChannel],
    (times, eval_times): (&[f32], &[f64]),
    (opts, shells): (&BakeOptions, &[f64]),
    measure_cost: u64,
    work: &mut Work,
    check: &mut PoseCheck,
) -> Result<Option<Searched>, BakeError> {
    let (start, end) = clip.time_range();
    let ext = extents(rig, shells);
    let grid = Grid::of(times, start, end);
    let mut grid_floor: Vec<Option<f64>> = vec![None; channels.len()];
    // Per channel, the floor on the sub-frame grids of SUB_SHIFTS fewer bits than the finest.
    let mut sub_floor: Vec<Option<Vec<(u8, f64)>>> = vec![None; channels.len()];
    let mut budget = vec![0.5f64; rig.joints.len()];
    let mut enc = EncClip { name: clip.name.clone(), start, end, tracks: Vec::new() };
    // Per joint: 0 = quantized and reduced, 1 = f32 values but reduced keys (for joints whose
    // quantization steps alone exceed the bound), 2 = every key in f32. Joints on the path of a
    // joint that misses the bound get a halved budget, then move up a mode.
    let mut mode = vec![if opts.lossless { 2u8 } else { 0 }; rig.joints.len()];
    // Joints whose rotations must be slerped exactly: corrected nlerp deviates up to 7e-5 rad
    // per joint between keys, which long chains amplify past the bound.
    let mut slerp = vec![false; rig.joints.len()];
    // The last reduction of each channel and the tolerance it was made for: a joint whose budget
    // did not change keeps its keys without a second pass.
    let mut reduced: Vec<Option<(f64, Vec<usize>)>> = vec![None; channels.len()];
    let mut previous: Option<Vec<f64>> = None;
    let mut round = 0;
    // Once every joint is within the bound, the budgets are relaxed joint by joint by what the
    // measured errors of each joint's subtree leave ([`relax`]) and the clip encoded again:
    // the search tightens whole paths at once and often ends far under the bound, and the
    // per-track tolerances assume the worst case of every error adding up. A relaxed round that
    // misses the bound puts the failing paths back; the smallest encoding within it is kept.
    let mut best: Option<Searched> = None;
    let mut best_size = usize::MAX;
    let mut relaxed = 0;
    // Per joint: the budget of the last encoding within the bound, and the smallest that
    // missed it while relaxing.
    let mut good = budget.clone();
    let mut bad: Vec<Option<f64>> = vec![None; rig.joints.len()];
    loop {
        enc.tracks.clear();
        for (ci, c) in channels.iter().enumerate() {
            let tol = opts.tolerance * budget[c.joint];
            let lossless = mode[c.joint] == 2;
            let cubic = c.interpolation == Interpolation::CubicSpline;
            if mode[c.joint] == 0 && !cubic && at_rest(c, &skel.rest[c.joint], tol, ext[c.joint]) {
                // Missing tracks sample the rest pose.
                continue;
            }
            // Packed: every key with the whole tolerance for quantization, or the keys reduced
            // within half of it and quantized within the other half, whichever is smaller.
            let packed = |keys: &[usize], tol: f64, sub: Option<u8>| {
                let key_tol = KeyTolerance { vector: tol / 3f64.sqrt(), angle: tol / ext[c.joint] };
                let key_tol = match c.target {
                    ChannelTarget::Scale => KeyTolerance { vector: tol / ext[c.joint], ..key_tol },
                    _ => key_tol,
                };
                encode_packed(c, keys, &grid, sub, key_tol)
            };
            let keys = if lossless || cubic {
                Vec::new()
            } else {
                match &reduced[ci] {
                    Some((t, k)) if *t == tol => k.clone(),
                    _ => {
                        let Some(k) = reduce(c, tol * 0.5, ext[c.joint], work) else { return Ok(None) };
                        reduced[ci] = Some((tol, k.clone()));
                        k
                    }
                }
            };
            let all: Vec<usize> = (0..c.times.len()).collect();
            // The error that moving the keys onto the grid adds (the floor), on the frames and,
            // for channels whose times stray from the frames by more than half the tolerance,
            // on the sub-frames. Packing on the frames needs the floor under 0.9 of the
            // tolerance, on the sub-frames too; channels where neither fits keep their exact
            // times in f32.
            let packable = mode[c.joint] == 0 && !lossless && !cubic;
            if packable && grid_floor[ci].is_none() {
                if !work.spend(c.times.len() as u64) {
                    return Ok(None);
                }
                grid_floor[ci] = Some(grid_error(c, &grid, ext[c.joint]));
            }
            let floor = grid_floor[ci].unwrap_or(0.0);
            if packable && floor > tol * 0.5 && sub_floor[ci].is_none() {
                let shifts: Vec<u8> =
                    (0..SUB_SHIFTS).filter_map(|d| grid.sub_shift().checked_sub(d)).filter(|&s| s > 0).collect();
                if !work.spend(c.times.len() as u64 * shifts.len() as u64) {
                    return Ok(None);
                }
                sub_floor[ci] =
                    Some(shifts.into_iter().map(|s| (s, grid_error(c, &grid.fine_at(s), ext[c.joint]))).collect());
            }
            // Packing choices: on the frames, or on one of the sub-frame grids (fewer sub-frames
            // take fewer bits per key and leave a larger floor).
            let mut options: Vec<(Option<u8>, f64)> = vec![(None, floor)];
            if floor > tol * 0.5 {
                options.extend(sub_floor[ci].iter().flatten().filter(|o| o.1 < floor).map(|&(s, f)| (Some(s), f)));
            }
            options.retain(|o| o.1 <= tol * 0.9);
            let (mut t, keys) = if lossless || cubic {
                (encode_f32(c), all)
            } else if mode[c.joint] == 1 || options.is_empty() {
                (encode_f32_keys(c, &keys), keys)
            } else {
                let mut best: Option<(EncTrack, Vec<usize>)> = None;
                let mut consider = |cand: Option<EncTrack>, k: &[usize]| {
                    if let Some(a) = cand {
                        if best.as_ref().is_none_or(|b| a.data.len() < b.0.data.len()) {
                            best = Some((a, k.to_vec()));
                        }
                    }
                };
                for &(sub, floor) in &options {
                    consider(packed(&all, tol - floor, sub), &all);
                    if floor <= tol * 0.5 {
                        consider(packed(&keys, tol * 0.5, sub), &keys);
                    }
                }
                match best {
                    Some(found) => found,
                    None => match encode_quantized(c, &keys, start, end) {
                        Some(q) => (q, keys),
                        None => match encode_quantized(c, &all, start, end) {
                            Some(q) => (q, all),
                            None => (encode_f32(c), all),
                        },
                    },
                }
            };
            if c.target == ChannelTarget::Rotation && c.interpolation == Interpolation::Linear {
                let nlerp_error = nlerp_deviation(c, &keys) * ext[c.joint];
                if slerp[c.joint] || nlerp_error > 0.25 * opts.tolerance * budget[c.joint] {
                    t.flags |= TRACK_FLAG_SLERP;
                }
            }
            enc.tracks.push(t);
        }
        if !work.spend(measure_cost) {
            return Ok(None);
        }
        let (errors, at) = measure(rig, skel, clip, &enc, eval_times, shells, check)?;
        let failing: Vec<usize> = (0..errors.len()).filter(|&j| errors[j] > opts.tolerance).collect();
        let within = failing.is_empty();
        if within {
            let size = enc.tracks.iter().map(|t| t.data.len()).sum::<usize>();
            if size < best_size {
                best_size = size;
                best = Some((std::mem::take(&mut enc.tracks), errors.clone(), at.clone()));
            }
        }
        // Relaxing: after an encoding within the bound, each round either relaxes again (the
        // last one was within it) or puts back the budgets on the failing joints' paths.
        if within || best.is_some() {
            if relaxed == MAX_RELAX_ROUNDS {
                return Ok(best.take());
            }
            if within {
                good.clone_from(&budget);
                if !relax(rig, &errors, opts.tolerance, &mode, &mut budget, &bad) {
                    return Ok(best.take());
                }
            } else {
                // A relaxed round missed the bound: the joints on the failing joints' paths go
                // back to their last budgets within it and remember the ones that failed; the
                // others keep theirs.
                for &j in &failing {
                    let mut a = Some(j);
                    while let Some(k) = a {
                        if budget[k] > good[k] {
                            bad[k] = Some(budget[k]);
                            budget[k] = good[k];
                        }
                        a = rig.joints[k].parent;
                    }
                }
            }
            relaxed += 1;
            round += 1;
            continue;
        }
        if round == 14 {
            return Ok(Some((enc.tracks, errors, at)));
        }
        // The failing joints and their ancestors, each tightened once per round. A joint whose
        // error barely moved since the last round misses the bound by corrected nlerp's
        // deviation along its chain, which tighter keys hardly reduce: its path is slerped
        // instead of tightened that round.
        let mut path = vec![false; rig.joints.len()];
        let mut stalled = vec![false; rig.joints.len()];
        for j in failing {
            let stall = previous.as_ref().is_some_and(|p: &Vec<f64>| errors[j] > 0.9 * p[j]);
            let mut a = Some(j);
            while let Some(k) = a.filter(|&k| !path[k] || (stall && !stalled[k])) {
                path[k] = true;
                stalled[k] |= stall;
                a = rig.joints[k].parent;
            }
        }
        // Joints already slerped are tightened as usual, so the search still ends lossless.
        for (st, sl) in stalled.iter_mut().zip(slerp.iter_mut()) {
            *st &= !*sl;
            *sl |= *st;
        }
        previous = Some(errors);
        for k in (0..path.len()).filter(|&k| path[k] && !stalled[k]) {
            // More keys first (they also shrink nlerp's deviation, which grows with the angle
            // between keys), then exact slerp, then lossless values.
            match (mode[k], round) {
                (_, r) if r >= 12 => slerp[k] = true,
                (0, r) if r >= 5 => {
                    mode[k] = 1;
                    budget[k] = 0.5;
                }
                (1, r) if r >= 10 => mode[k] = 2,
                _ => budget[k] *= 0.5,
            }
        }
        round += 1;
    }
}

/// Sub-frame grids tried per channel whose times stray from the frames: the finest and up to
/// this many less one bit each.
const SUB_SHIFTS: u8 = 8;

/// Most rounds of [`relax`] after the first encoding within the bound.
const MAX_RELAX_ROUNDS: usize = 6;

/// Largest budget of one joint: its tracks' own error may reach this multiple of the bound
/// (the per-track estimates assume the worst case; the measured error decides).
const MAX_BUDGET: f64 = 4.0;

/// Raises the budget of each quantized joint (mode 0) by the room its subtree's measured errors
/// leave under `tolerance` (at most 2× a round, 0.9 of the room), or, for a joint whose larger
/// budget missed the bound (`bad`), halfway (geometrically) towards that budget. Returns whether
/// any budget changed by 5 % or more.
fn relax(rig: &Rig, errors: &[f64], tolerance: f64, mode: &[u8], budget: &mut [f64], bad: &[Option<f64>]) -> bool {
    // The largest error of each joint's subtree (children follow their parents).
    let mut subtree = errors.to_vec();
    for j in (0..rig.joints.len()).rev() {
        if let Some(p) = rig.joints[j].parent {
            subtree[p] = subtree[p].max(subtree[j]);
        }
    }
    let mut changed = false;
    for j in 0..budget.len() {
        if mode[j] != 0 {
            continue;
        }
        let room = if subtree[j] > 0.0 { 0.9 * tolerance / subtree[j] } else { 2.0 };
        let mut next = budget[j] * room.clamp(1.0, 2.0);
        if let Some(b) = bad[j] {
            next = next.min((budget[j] * b).sqrt());
        }
        next = next.min(MAX_BUDGET);
        if next >= budget[j] * 1.05 {
            budget[j] = next;
            changed = true;
        }
    }
    changed
}

/// True when every key of `c` is within `tol` of the joint's rest value (`rest`: translation,
/// rotation xyzw, scale), for a joint of extent `extent`.
fn at_rest(c: &RigChannel, rest: &[f32; 10], tol: f64, extent: f64) -> bool {
    let at = match c.target {
        ChannelTarget::Translation => 0,
        ChannelTarget::Rotation => 3,
        ChannelTarget::Scale => 7,
    };
    let r: [f64; 4] = core::array::from_fn(|j| if j < c.target.components() { f64::from(rest[at + j]) } else { 0.0 });
    (0..c.times.len()).all(|k| value_error(c.target, key_value(c, k), r, extent) <= tol)
}
