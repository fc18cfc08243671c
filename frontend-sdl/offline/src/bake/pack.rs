//! Packed track encoding ([`FORMAT_PACKED`]): the clip's frame grid, and a channel's kept keys
//! as bit-packed records whose component widths are the narrowest that keep every key within
//! a tolerance (rotations drop `w`, relative to a reference rotation when that is smaller).

use sinew::asset::format::*;

use super::reduce::value_error;
use super::tracks::{interp_code, key_value, target_code};
use super::write::EncTrack;
use crate::rig::{ChannelTarget, Interpolation, RigChannel};

/// The frame grid of a clip: frame `f` is at `start + (end − start) · f / frames`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Grid {
    /// Frames of the grid (1 ..= 65535).
    pub(super) frames: u32,
    start: f64,
    end: f64,
}

/// Most frames of a grid (the packed header's `u16`).
const MAX_FRAMES: u32 = 65535;

impl Grid {
    /// The grid of a clip whose sorted key times are `times`: the source's frames when every
    /// time lies on an evenly spaced grid (within a thousandth of a frame), else 65535 frames
    /// over the range (times then move by at most half a step). Keys move to their frame's time
    /// with their value resampled there (see [`encode_packed`]), so a source whose times jitter
    /// around an even spacing (exporters' rounding) keeps its frames.
    pub(super) fn of(times: &[f32], start: f32, end: f32) -> Grid {
        let (start, end) = (f64::from(start), f64::from(end));
        let fine = Grid { frames: MAX_FRAMES, start, end };
        let span = end - start;
        let step = times.windows(2).map(|w| f64::from(w[1]) - f64::from(w[0])).fold(f64::INFINITY, f64::min);
        if !(span > 0.0 && step > 0.0 && step.is_finite()) {
            return Grid { frames: 1, start, end };
        }
        // The spacing of the shortest interval, or of the times' count (the shortest interval
        // of jittered times is short of a frame).
        for frames in [(span / step).round(), (times.len() - 1) as f64] {
            if !(1.0..=f64::from(MAX_FRAMES)).contains(&frames) {
                continue;
            }
            let grid = Grid { frames: frames as u32, start, end };
            let frame_step = span / frames;
            let on_grid = times.iter().all(|&t| (grid.time(grid.frame(t)) - f64::from(t)).abs() <= 0.1 * frame_step);
            if on_grid {
                return grid;
            }
        }
        fine
    }

    /// The nearest frame to `t`.
    pub(super) fn frame(&self, t: f32) -> u32 {
        let span = self.end - self.start;
        if span <= 0.0 {
            return 0;
        }
        ((f64::from(t) - self.start) / span * f64::from(self.frames)).round().clamp(0.0, f64::from(self.frames)) as u32
    }

    /// The time of frame `f`.
    pub(super) fn time(&self, f: u32) -> f64 {
        self.start + (self.end - self.start) * f64::from(f) / f64::from(self.frames)
    }

    /// Sub-frames per frame of a packed track with sub-frame offsets, as a power of two: the
    /// most that keep `frames · 2^shift` within 2²⁴ (at most [`MAX_PACKED_SUB_SHIFT`]).
    pub(super) fn sub_shift(&self) -> u8 {
        let mut shift = 0u8;
        while shift < MAX_PACKED_SUB_SHIFT && u64::from(self.frames) << (shift + 1) <= 1 << 24 {
            shift += 1;
        }
        shift
    }

    /// The grid of `2^shift` sub-frames per frame: where keys with sub-frame offsets lie
    /// (`shift` at most [`Grid::sub_shift`]).
    pub(super) fn fine_at(&self, shift: u8) -> Grid {
        Grid { frames: self.frames << shift.min(self.sub_shift()), ..*self }
    }
}

/// The value of linear channel `c` at time `t` near its key `k` (the source curve, so a key
/// moved onto the grid stays on it); other channels' key `k` as it is.
pub(super) fn value_at(c: &RigChannel, k: usize, t: f64) -> [f64; 4] {
    let tk = f64::from(c.times[k]);
    if c.interpolation != Interpolation::Linear || t == tk {
        return key_value(c, k);
    }
    let (a, b) = if t < tk { (k.saturating_sub(1), k) } else { (k, (k + 1).min(c.times.len() - 1)) };
    let (ta, tb) = (f64::from(c.times[a]), f64::from(c.times[b]));
    if a == b || tb <= ta {
        return key_value(c, k);
    }
    let s = ((t - ta) / (tb - ta)).clamp(0.0, 1.0);
    let (va, vb) = (key_value(c, a), key_value(c, b));
    if c.target == ChannelTarget::Rotation {
        crate::eval::slerp(va, vb, s)
    } else {
        core::array::from_fn(|j| va[j] + (vb[j] - va[j]) * s)
    }
}

/// The largest error at the source keys of linear channel `c` once every key moves to its frame
/// of `grid` with its value resampled there (scene units, for a joint of extent `extent`): the
/// floor that packing on this grid adds, whatever the widths.
pub(super) fn grid_error(c: &RigChannel, grid: &Grid, extent: f64) -> f64 {
    let n = c.times.len();
    if c.interpolation != Interpolation::Linear || n < 2 {
        return 0.0;
    }
    let g = |k: usize| grid.time(grid.frame(c.times[k]));
    let moved = |k: usize| value_at(c, k, g(k));
    let mut worst = 0.0f64;
    for k in 0..n {
        let t = f64::from(c.times[k]);
        let (a, b) = if t >= g(k) { (k, (k + 1).min(n - 1)) } else { (k.saturating_sub(1), k) };
        let (ga, gb) = (g(a), g(b));
        let s = if gb > ga { ((t - ga) / (gb - ga)).clamp(0.0, 1.0) } else { 0.0 };
        let (va, vb) = (moved(a), moved(b));
        let v = if c.target == ChannelTarget::Rotation {
            crate::eval::slerp(va, vb, s)
        } else {
            core::array::from_fn(|j| va[j] + (vb[j] - va[j]) * s)
        };
        worst = worst.max(value_error(c.target, key_value(c, k), v, extent));
    }
    worst
}

/// Quaternion product `a ⊗ b` (xyzw).
fn qmul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [
        a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
        a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
        a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
        a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
    ]
}

fn normalize(q: [f64; 4]) -> [f64; 4] {
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    if n > 0.0 {
        q.map(|v| v / n)
    } else {
        [0.0, 0.0, 0.0, 1.0]
    }
}

/// Largest magnitude of a packed track's `min` and `range` that the format accepts: 2¹²⁷.
const PARAM_LIMIT: f32 = f32::from_bits(0x7F00_0000);

/// One component's storage: width, `min`, `range` (as stored) and the integers of the keys.
struct Component {
    bits: u8,
    min: f32,
    range: f32,
    q: Vec<u32>,
}

/// The narrowest storage of `values` keeping each within `tol` of its value (up to
/// [`MAX_PACKED_BITS`] bits).
fn component(values: &[f64], tol: f64) -> Component {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mid = (lo + hi) / 2.0;
    if hi - lo <= 2.0 * tol && ((mid as f32) as f64 - lo).abs().max((hi - (mid as f32) as f64).abs()) <= tol {
        return Component { bits: 0, min: mid as f32, range: 0.0, q: vec![0; values.len()] };
    }
    let mut bits = 1u8;
    while bits < MAX_PACKED_BITS && (hi - lo) / ((1u64 << bits) - 1) as f64 / 2.0 > tol {
        bits += 1;
    }
    let levels = (1u64 << bits) as f64;
    let min = lo as f32;
    let range = ((hi - f64::from(min)) * levels / (levels - 1.0)) as f32;
    let q = values
        .iter()
        .map(|&v| {
            if range > 0.0 {
                ((v - f64::from(min)) / f64::from(range) * levels).round().clamp(0.0, levels - 1.0) as u32
            } else {
                0
            }
        })
        .collect();
    Component { bits, min, range, q }
}

/// Encoded key storage of one candidate: the reference, the dropped component of each key
/// (smallest three), the components.
struct Candidate {
    reference: Option<[f32; 4]>,
    largest: Option<Vec<u32>>,
    components: [Component; 3],
}

impl Candidate {
    fn header_len(&self) -> usize {
        PACKED_HEADER_LEN
            + if self.reference.is_some() { 16 } else { 0 }
            + self.components.iter().map(|c| if c.bits == 0 { 4 } else { 8 }).sum::<usize>()
    }
    fn record_bits(&self) -> usize {
        self.components.iter().map(|c| c.bits as usize).sum::<usize>() + if self.largest.is_some() { 2 } else { 0 }
    }
}

/// The tolerances of one track's keys: `vector` per translation/scale component (value units),
/// `angle` for rotations (radians).
#[derive(Debug, Clone, Copy)]
pub(super) struct KeyTolerance {
    /// Per component of a translation or scale.
    pub(super) vector: f64,
    /// Rotation angle.
    pub(super) angle: f64,
}

/// Rotation keys as stored: xyz of `reference⁻¹ ⊗ q` with `w ≥ 0`; `None` when a key turns more
/// than about 174° from the reference (`w` would be rebuilt too coarsely; nearer, the widths
/// grow with `|xyz| / w`).
fn relative(keys: &[[f64; 4]], reference: [f32; 4]) -> Option<(Vec<[f64; 3]>, f64)> {
    let r = reference.map(f64::from);
    let inv = [-r[0], -r[1], -r[2], r[3]];
    let mut out = Vec::with_capacity(keys.len());
    let mut slope = 0.0f64;
    for &q in keys {
        let mut v = qmul(inv, q);
        if v[3] < 0.0 {
            v = v.map(|x| -x);
        }
        if v[3] < 0.05 {
            return None;
        }
        let xyz = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        slope = slope.max(xyz / v[3]);
        out.push([v[0], v[1], v[2]]);
    }
    Some((out, slope))
}

/// Rotation keys as stored in smallest three: per key the index of its largest component (made
/// positive), the other three in xyzw order, and the largest `|stored| / dropped` (at most √3).
fn smallest_three(keys: &[[f64; 4]]) -> (Vec<u32>, Vec<[f64; 3]>, f64) {
    let mut index = Vec::with_capacity(keys.len());
    let mut out = Vec::with_capacity(keys.len());
    let mut slope = 0.0f64;
    for &q in keys {
        let i = (0..4).fold(0, |m, j| if q[j].abs() > q[m].abs() { j } else { m });
        let q = if q[i] < 0.0 { q.map(|x| -x) } else { q };
        // The three components other than i, in xyzw order.
        let rest: [f64; 3] = core::array::from_fn(|j| q[if j < i { j } else { j + 1 }]);
        let norm = rest.iter().map(|x| x * x).sum::<f64>().sqrt();
        slope = slope.max(norm / q[i]);
        index.push(i as u32);
        out.push(rest);
    }
    (index, out, slope)
}

/// Where the kept keys of a packed track lie: their frames, and with sub-frames their offsets
/// and the offsets' width and shift.
struct KeyTimes {
    frames: Vec<u32>,
    sub: Option<(Vec<u32>, u8, u8)>,
    /// Each key's time as stored.
    times: Vec<f64>,
}

/// The times of the kept `keys` of `c` on `grid`, with sub-frame offsets at `2^shift` per frame
/// when `sub` is `Some(shift)`; `None` when two keys share a position, `shift` is 0 or past
/// [`Grid::sub_shift`], or an offset needs more than [`MAX_PACKED_SUB_BITS`].
fn key_times(c: &RigChannel, keys: &[usize], grid: &Grid, sub: Option<u8>) -> Option<KeyTimes> {
    if grid.frames > MAX_FRAMES {
        return None;
    }
    let Some(shift) = sub else {
        let frames: Vec<u32> = keys.iter().map(|&k| grid.frame(c.times[k])).collect();
        if frames.windows(2).any(|w| w[1] <= w[0]) {
            return None;
        }
        let times = frames.iter().map(|&f| grid.time(f)).collect();
        return Some(KeyTimes { frames, sub: None, times });
    };
    if shift == 0 || shift > grid.sub_shift() {
        return None;
    }
    let fine = grid.fine_at(shift);
    let positions: Vec<u32> = keys.iter().map(|&k| fine.frame(c.times[k])).collect();
    if positions.windows(2).any(|w| w[1] <= w[0]) {
        return None;
    }
    let frames: Vec<u32> = positions.iter().map(|&n| ((n + (1 << (shift - 1))) >> shift).min(grid.frames)).collect();
    let offsets: Vec<i64> =
        positions.iter().zip(&frames).map(|(&n, &f)| i64::from(n) - (i64::from(f) << shift)).collect();
    let mut bits = 1u8;
    while offsets.iter().any(|&o| o < -(1i64 << (bits - 1)) || o >= 1i64 << (bits - 1)) {
        bits += 1;
        if bits > MAX_PACKED_SUB_BITS {
            return None;
        }
    }
    let stored = offsets.iter().map(|&o| (o + (1i64 << (bits - 1))) as u32).collect();
    let times = positions.iter().map(|&n| fine.time(n)).collect();
    Some(KeyTimes { frames, sub: Some((stored, bits, shift)), times })
}

/// Encodes the kept `keys` of `c` packed on `grid` (with sub-frame offsets at `2^shift` per
/// frame when `sub` is `Some(shift)`, so keys keep their times off the grid), each component
/// within its tolerance; `None` when two keys share a time or a rotation spans too much for `w`
/// to be dropped.
pub(super) fn encode_packed(
    c: &RigChannel,
    keys: &[usize],
    grid: &Grid,
    sub: Option<u8>,
    tol: KeyTolerance,
) -> Option<EncTrack> {
    let KeyTimes { frames, sub, times } = key_times(c, keys, grid, sub)?;
    let implicit = frames.iter().enumerate().all(|(i, &f)| f as usize == i);
    let time_bits = if implicit { 0 } else { (32 - grid.frames.leading_zeros()) as u8 };
    let values: Vec<[f64; 4]> = keys.iter().zip(&times).map(|(&k, &t)| value_at(c, k, t)).collect();
    let column = |v: &[[f64; 3]], j: usize| v.iter().map(|x| x[j]).collect::<Vec<f64>>();
    let candidate = if c.target == ChannelTarget::Rotation {
        let quats: Vec<[f64; 4]> = values.iter().map(|&q| normalize(q)).collect();
        // The mean of the keys in the first key's hemisphere.
        let mut sum = [0.0; 4];
        for q in &quats {
            let s = if (0..4).map(|i| q[i] * quats[0][i]).sum::<f64>() < 0.0 { -1.0 } else { 1.0 };
            (0..4).for_each(|i| sum[i] += s * q[i]);
        }
        let mean = normalize(sum).map(|v| v as f32);
        let mut best: Option<Candidate> = None;
        // Relative to no reference, to the mean, or smallest three (no reference).
        for option in 0..3 {
            let (reference, largest, (rel, slope)) = if option == 2 {
                let (index, rel, slope) = smallest_three(&quats);
                (None, Some(index), (rel, slope))
            } else {
                let reference = (option == 1).then_some(mean);
                match relative(&quats, reference.unwrap_or([0.0, 0.0, 0.0, 1.0])) {
                    Some(r) => (reference, None, r),
                    None => continue,
                }
            };
            // The angle of an error e in each of the three stored components, with the fourth
            // rebuilt: 2√3·e·√(1 + slope²).
            let e = tol.angle / (2.0 * 3f64.sqrt() * (1.0 + slope * slope).sqrt());
            let cand = Candidate { reference, largest, components: [0, 1, 2].map(|j| component(&column(&rel, j), e)) };
            let size = |c: &Candidate| c.header_len() * 8 + c.record_bits() * keys.len();
            if best.as_ref().is_none_or(|b| size(&cand) < size(b)) {
                best = Some(cand);
            }
        }
        best?
    } else {
        let v: Vec<[f64; 3]> = values.iter().map(|v| [v[0], v[1], v[2]]).collect();
        Candidate {
            reference: None,
            largest: None,
            components: [0, 1, 2].map(|j| component(&column(&v, j), tol.vector)),
        }
    };
    // The format keeps a packed track's `min` and `range` within ±2¹²⁷, so that `min + range`
    // stays finite where the runtime decodes them: keys past that are stored another way.
    let stored = |c: &Component| c.min.abs() <= PARAM_LIMIT && (c.bits == 0 || c.range.abs() <= PARAM_LIMIT);
    if !candidate.components.iter().all(stored) {
        return None;
    }
    let mut data = Vec::with_capacity(candidate.header_len() + (keys.len() * 88).div_ceil(8));
    data.extend_from_slice(&(grid.frames as u16).to_le_bytes());
    data.push(time_bits);
    let flags = if candidate.reference.is_some() { PACKED_FLAG_REFERENCE } else { 0 }
        | if sub.is_some() { PACKED_FLAG_SUBFRAME } else { 0 }
        | if candidate.largest.is_some() { PACKED_FLAG_LARGEST } else { 0 };
    data.push(flags);
    data.extend(candidate.components.iter().map(|c| c.bits));
    for r in candidate.reference.iter().flatten() {
        data.extend_from_slice(&r.to_le_bytes());
    }
    if let Some((_, bits, shift)) = &sub {
        data.extend([*bits, *shift]);
    }
    for comp in &candidate.components {
        data.extend_from_slice(&comp.min.to_le_bytes());
        if comp.bits != 0 {
            data.extend_from_slice(&comp.range.to_le_bytes());
        }
    }
    let mut bits = BitWriter::default();
    for (i, &f) in frames.iter().enumerate() {
        bits.push(f, time_bits);
        if let Some((offsets, width, _)) = &sub {
            bits.push(offsets[i], *width);
        }
        for comp in &candidate.components {
            bits.push(comp.q[i], comp.bits);
        }
        if let Some(index) = &candidate.largest {
            bits.push(index[i], 2);
        }
    }
    data.extend(bits.finish());
    Some(EncTrack {
        joint: c.joint as u16,
        target: target_code(c.target),
        interp: interp_code(c.interpolation),
        format: FORMAT_PACKED,
        flags: 0,
        keys: keys.len() as u16,
        data,
    })
}

/// Bits appended least significant first.
#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitWriter {
    fn push(&mut self, v: u32, width: u8) {
        let w = u32::from(width);
        self.acc |= u64::from(v & ((1u64 << w) - 1) as u32) << self.n;
        self.n += w;
        while self.n >= 8 {
            self.bytes.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }
    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.bytes.push(self.acc as u8);
        }
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_pack_least_significant_first() {
        let mut w = BitWriter::default();
        w.push(0b101, 3);
        w.push(0x1FFFF, 17);
        w.push(0, 0);
        w.push(0xABCDEF, 24);
        let b = w.finish();
        assert_eq!(b.len(), 6);
        let all = b.iter().rev().fold(0u64, |a, &x| (a << 8) | u64::from(x));
        assert_eq!(all & 7, 0b101);
        assert_eq!((all >> 3) & 0x1FFFF, 0x1FFFF);
        assert_eq!((all >> 20) & 0xFF_FFFF, 0xABCDEF);
    }

    #[test]
    fn grids_follow_the_source_frames() {
        let times: Vec<f32> = (0..31).map(|k| k as f32 / 30.0).collect();
        let g = Grid::of(&times, 0.0, 1.0);
        assert_eq!(g.frames, 30);
        assert!(times.iter().enumerate().all(|(k, &t)| g.frame(t) == k as u32));
        // Uneven times: the fine grid.
        let g = Grid::of(&[0.0, 0.1, 0.25, 1.0], 0.0, 1.0);
        assert_eq!(g.frames, 65535);
    }

    #[test]
    fn sub_frames_keep_jittered_times() {
        // 31 keys 1/30 s apart, every other one moved by up to 4e-5 s (BrainStem's jitter).
        let times: Vec<f32> =
            (0..31).map(|k| k as f32 / 30.0 + if k % 2 == 1 { 4.0e-5 * (k as f32 / 31.0) } else { 0.0 }).collect();
        let g = Grid::of(&times, 0.0, 1.0);
        assert_eq!(g.frames, 30);
        assert_eq!(g.sub_shift(), 16);
        let c = RigChannel {
            joint: 0,
            target: ChannelTarget::Translation,
            interpolation: Interpolation::Linear,
            values: times.iter().flat_map(|&t| [(t * 20.0).sin(), 0.0, 1.0]).collect(),
            times,
        };
        let all: Vec<usize> = (0..31).collect();
        let on = key_times(&c, &all, &g, None).unwrap();
        assert!(on.sub.is_none());
        let sub = key_times(&c, &all, &g, Some(16)).unwrap();
        let (offsets, bits, shift) = sub.sub.as_ref().unwrap();
        assert_eq!((*bits, *shift), (8, 16));
        for (k, &t) in c.times.iter().enumerate() {
            assert_eq!(sub.frames[k], k as u32);
            // Within half a sub-frame of the source time; the frame alone is up to 4e-5 s off.
            assert!((sub.times[k] - f64::from(t)).abs() <= 0.5 / 30.0 / 65536.0 + 1e-9, "key {k}");
            let n = (i64::from(sub.frames[k]) << shift) + i64::from(offsets[k]) - (1 << (bits - 1));
            assert_eq!(g.fine_at(16).time(n as u32), sub.times[k]);
        }
        assert!(grid_error(&c, &g.fine_at(16), 1.0) * 20.0 < grid_error(&c, &g, 1.0));
        let t = encode_packed(&c, &all, &g, Some(16), KeyTolerance { vector: 1e-4, angle: 1e-4 }).unwrap();
        assert_eq!(t.data[3], PACKED_FLAG_SUBFRAME);
    }

    #[test]
    fn components_stay_within_their_tolerance() {
        let values: Vec<f64> = (0..50).map(|k| (k as f64 * 0.37).sin() * 2.0 + 0.5).collect();
        for tol in [1.0e-1, 1.0e-3, 1.0e-6] {
            let c = component(&values, tol);
            for (k, &v) in values.iter().enumerate() {
                let got = f64::from(c.min) + f64::from(c.range) * f64::from(c.q[k]) / (1u64 << c.bits) as f64;
                assert!((got - v).abs() <= tol * 1.01, "tol {tol}: key {k} {got} vs {v}");
            }
        }
        let flat = component(&[1.0, 1.0 + 1.0e-5], 1.0e-4);
        assert_eq!((flat.bits, flat.range), (0, 0.0));
    }
}
