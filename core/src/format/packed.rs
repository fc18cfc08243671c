//! The packed key format ([`FORMAT_PACKED`](super::FORMAT_PACKED)): the header of a packed
//! track, the bit reader of its key records, and the decoding of one key's time and value.
//!
//! ```text
//! frames      u16        time grid: frame f is at start + (end − start) · f / frames
//! time_bits   u8         0: key k is frame k; else each record starts with its frame
//! flags       u8         PACKED_FLAG_REFERENCE, PACKED_FLAG_LARGEST (rotations only),
//!                        PACKED_FLAG_SUBFRAME
//! bits        [u8; 3]    width of each stored component (0 ..= MAX_PACKED_BITS)
//! [reference  f32 × 4]   rotations with PACKED_FLAG_REFERENCE (xyzw)
//! [sub_bits   u8         with PACKED_FLAG_SUBFRAME: width of a key's sub-frame offset
//!                        (1 ..= MAX_PACKED_SUB_BITS)
//!  sub_shift  u8]        sub-frames per frame, as a power of two (1 ..= MAX_PACKED_SUB_SHIFT)
//! components  3 × { min f32, [range f32 when its width is not 0] }
//! records     key_count × (time_bits + sub_bits + Σ bits + [2]) bits, least significant bit first,
//!             the last byte padded with zeros
//! ```
//!
//! Without sub-frames key `k` is at frame `f` (its stored frame, or `k`): time
//! `start + (end − start) · f / frames`. With them a record's frame is followed by an offset
//! `o` of `sub_bits` bits, and the key is at `start + (end − start) · n / (frames · 2^sub_shift)`
//! with `n = f · 2^sub_shift + o − 2^(sub_bits − 1)`: sources whose key times jitter off an even
//! spacing keep their exact times at a few bits per key (`frames · 2^sub_shift` is at most
//! 2²⁴, so the ratio is exact in `f32`; it is an integer division in Q16.16).
//!
//! A component of width `b` stores `q` and decodes as `min + range · q / 2^b` (just `min` when
//! `b` is 0). Translations and scales store xyz; rotations store the xyz of a unit quaternion
//! with `w ≥ 0` (`w = √(1 − x² − y² − z²)`), multiplied by the reference on its left when the
//! track has one (the keys then stay near the reference, with large `w`). With
//! `PACKED_FLAG_LARGEST` a record's components are followed by a 2-bit index `i` (the record's
//! last bits): the stored components are the quaternion's others in xyzw order and component `i`
//! is rebuilt `≥ 0` (smallest three: no precision floor whatever the rotation).

use super::reader::{byte, le_f32, le_u16};
use super::{
    MAX_PACKED_BITS, MAX_PACKED_SUB_BITS, MAX_PACKED_SUB_SHIFT, MAX_PACKED_TIME_BITS, PACKED_FLAG_LARGEST,
    PACKED_FLAG_REFERENCE, PACKED_FLAG_SUBFRAME, TARGET_ROTATION,
};
use crate::math::Quat;
use crate::real::Real;

/// Bytes of a packed track's fixed header (frames, time bits, flags, widths).
pub const PACKED_HEADER_LEN: usize = 7;

/// The decoded header of a packed track.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Packed {
    /// Frames of the time grid.
    pub frames: u16,
    /// Bits of a key's frame (0: implicit).
    pub time_bits: u8,
    /// Bits of a key's sub-frame offset (0: none).
    pub sub_bits: u8,
    /// Sub-frames per frame, as a power of two (0 without sub-frames).
    pub sub_shift: u8,
    /// The track has a reference rotation.
    pub reference: bool,
    /// Each record ends with the index of its rotation's dropped component (2 bits).
    pub largest: bool,
    /// Component widths.
    pub bits: [u8; 3],
    /// Byte offset of each component's `min` (its `range` follows when its width is not 0).
    pub params: [u8; 3],
    /// Byte offset of the first record.
    pub records: usize,
    /// Bits of one record.
    pub record_bits: usize,
}

impl Packed {
    /// A header of no keys' data (what a view of another format's track holds).
    pub(crate) const EMPTY: Packed = Packed {
        frames: 0,
        time_bits: 0,
        sub_bits: 0,
        sub_shift: 0,
        reference: false,
        largest: false,
        bits: [0; 3],
        params: [0; 3],
        records: 0,
        record_bits: 0,
    };

    /// Reads the header at the start of `data`. Field values are taken as stored: validation
    /// ([`Packed::check`]) bounds them.
    #[inline(always)]
    pub(crate) fn read(data: &[u8], target: u8) -> Self {
        let flags = byte(data, 3);
        let reference = target == TARGET_ROTATION && flags & PACKED_FLAG_REFERENCE != 0;
        let largest = target == TARGET_ROTATION && flags & PACKED_FLAG_LARGEST != 0;
        let bits = [byte(data, 4), byte(data, 5), byte(data, 6)];
        let mut at = PACKED_HEADER_LEN + if reference { 16 } else { 0 };
        let (sub_bits, sub_shift) = if flags & PACKED_FLAG_SUBFRAME != 0 {
            at += 2;
            (byte(data, at - 2), byte(data, at - 1))
        } else {
            (0, 0)
        };
        let mut params = [0u8; 3];
        for j in 0..3 {
            params[j] = at as u8;
            at += if bits[j] == 0 { 4 } else { 8 };
        }
        let time_bits = byte(data, 2);
        Packed {
            frames: le_u16(data, 0),
            time_bits,
            sub_bits,
            sub_shift,
            reference,
            largest,
            bits,
            params,
            records: at,
            record_bits: time_bits as usize
                + sub_bits as usize
                + if largest { 2 } else { 0 }
                + bits[0] as usize
                + bits[1] as usize
                + bits[2] as usize,
        }
    }

    /// Checks the header fields of a track of `keys` keys and returns the track's length in
    /// bytes; `None` when a field is out of range.
    pub(crate) fn check(data: &[u8], target: u8, keys: usize) -> Option<usize> {
        let flags = byte(data, 3);
        if data.len() < PACKED_HEADER_LEN
            || le_u16(data, 0) == 0
            || byte(data, 2) > MAX_PACKED_TIME_BITS
            || flags & !(PACKED_FLAG_REFERENCE | PACKED_FLAG_SUBFRAME | PACKED_FLAG_LARGEST) != 0
            || (flags & (PACKED_FLAG_REFERENCE | PACKED_FLAG_LARGEST) != 0 && target != TARGET_ROTATION)
            || (4..7).any(|i| byte(data, i) > MAX_PACKED_BITS)
        {
            return None;
        }
        let p = Packed::read(data, target);
        if flags & PACKED_FLAG_SUBFRAME != 0
            && (data.len() < p.params[0] as usize
                || !(1..=MAX_PACKED_SUB_BITS).contains(&p.sub_bits)
                || !(1..=MAX_PACKED_SUB_SHIFT).contains(&p.sub_shift)
                || u32::from(p.frames) << p.sub_shift > 1 << 24)
        {
            return None;
        }
        p.records.checked_add(keys.checked_mul(p.record_bits)?.div_ceil(8))
    }

    /// The frame of key `k`.
    #[inline(always)]
    pub(crate) fn frame(&self, data: &[u8], k: usize) -> u32 {
        if self.time_bits == 0 {
            k as u32
        } else {
            read_bits(data, self.records * 8 + k * self.record_bits, self.time_bits as u32)
        }
    }

    /// The position of key `k` on the track's time grid as `(n, d)`: the key is at
    /// `start + (end − start) · n / d`. Without sub-frames `n` is the key's frame and `d` the
    /// frames; with them both count sub-frames (`n` is negative only in an invalid track).
    #[inline(always)]
    pub(crate) fn time_ratio(&self, data: &[u8], k: usize) -> (i32, i32) {
        let f = self.frame(data, k);
        if self.sub_bits == 0 {
            return (f as i32, self.frames as i32);
        }
        let shift = self.sub_shift as u32;
        let bit = self.records * 8 + k * self.record_bits + self.time_bits as usize;
        let o = read_bits(data, bit, self.sub_bits as u32) as i32 - (1 << (self.sub_bits - 1));
        (((f << shift) as i32).wrapping_add(o), (self.frames as i32) << shift)
    }

    /// The three stored components of key `k`, decoded.
    #[inline(always)]
    pub(crate) fn components<R: Real>(&self, data: &[u8], k: usize) -> [R; 3] {
        let mut bit = self.records * 8 + k * self.record_bits + self.time_bits as usize + self.sub_bits as usize;
        let mut out = [R::ZERO; 3];
        for (j, o) in out.iter_mut().enumerate() {
            let b = self.bits[j] as u32;
            let at = self.params[j] as usize;
            let min = R::from_f32(le_f32(data, at));
            *o = if b == 0 {
                min
            } else {
                let q = read_bits(data, bit, b);
                bit += b as usize;
                min + R::from_f32(le_f32(data, at + 4)) * R::from_fixed_bits(q as i32, b)
            };
        }
        out
    }

    /// Key `k` as xyz (and w for rotations), rotations not renormalized (their norm is within
    /// the quantization step of 1).
    #[inline(always)]
    pub(crate) fn value<R: Real>(&self, data: &[u8], target: u8, k: usize) -> [R; 4] {
        let [x, y, z] = self.components::<R>(data, k);
        if target != TARGET_ROTATION {
            return [x, y, z, R::ZERO];
        }
        let w2 = (R::ONE - x * x - y * y - z * z).max(R::ZERO);
        let w = if w2 > R::ZERO { w2 * w2.inv_sqrt() } else { R::ZERO };
        let q = if self.largest {
            with_dropped([x, y, z, w], data, self.records * 8 + (k + 1) * self.record_bits - 2)
        } else {
            Quat::new(x, y, z, w)
        };
        if !self.reference {
            return q.to_array();
        }
        let f = |j: usize| R::from_f32(le_f32(data, PACKED_HEADER_LEN + 4 * j));
        (Quat::new(f(0), f(1), f(2), f(3)) * q).to_array()
    }
}

/// The quaternion of a smallest-three key: `v` holds the three stored components in order and
/// the rebuilt one last, which goes to the index stored at bit `bit` of `data` (2 bits: x, y,
/// z, w). Out of line: only smallest-three tracks call it, and the sampling paths that inline
/// [`Packed::value`] share one copy.
#[inline(never)]
fn with_dropped<R: Real>(v: [R; 4], data: &[u8], bit: usize) -> Quat<R> {
    let [a, b, c, d] = v;
    match read_bits(data, bit, 2) {
        0 => Quat::new(d, a, b, c),
        1 => Quat::new(a, d, b, c),
        2 => Quat::new(a, b, d, c),
        _ => Quat::new(a, b, c, d),
    }
}

/// `width` bits (at most 25) of `data` starting at bit `bit` (least significant first); bits
/// past the end read as 0.
#[inline(always)]
pub(crate) fn read_bits(data: &[u8], bit: usize, width: u32) -> u32 {
    let at = bit / 8;
    let word = match data.get(at..at.wrapping_add(4)) {
        Some(s) => u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
        None => u32::from_le_bytes([byte(data, at), byte(data, at + 1), byte(data, at + 2), byte(data, at + 3)]),
    };
    (word >> (bit % 8)) & ((1u32 << width) - 1)
}
