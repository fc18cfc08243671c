//! The sRGB transfer function in integers, for the textured path: 8-bit sRGB codes to 16-bit
//! linear light ([`decode`], [`decode_filtered`]) and back ([`encode`]); and for plain meshes,
//! an asset's 8-bit linear color to its display code ([`linear_to_srgb8`]).
//!
//! glTF stores base-color textures as sRGB and base-color factors and vertex colors as linear
//! values; the color of a surface is their product in linear light, encoded to sRGB for display.
//! Linear light here is `0..=65535` (1.0 is 65535): 16 bits keep every 8-bit code distinct
//! (code 1 is 20, code 2 is 40), which 8-bit linear values would not (codes 0 to 12 all fall
//! below linear 1/255).
//!
//! The tables are built at compile time from the exact curve (IEC 61966-2-1:
//! `c / 12.92` up to 0.04045, `((c + 0.055) / 1.055)^2.4` above): 512 bytes of decoded codes,
//! 512 bytes of thresholds and 1 KiB of coarse encodings.

/// Linear light of each 8-bit sRGB code, rounded to `0..=65535`.
const DECODE: [u16; 256] = build_decode();

/// `THRESHOLD[k]` (`k ≥ 1`): the smallest linear value that [`encode`] maps to code `k`, the
/// midpoint between the decoded codes `k − 1` and `k`, rounded up. `THRESHOLD[0]` is 0.
const THRESHOLD: [u16; 256] = build_thresholds();

/// Bits of a linear value below the [`COARSE`] table's index.
const COARSE_SHIFT: u32 = 6;

/// `COARSE[i]`: the encoding of linear value `i << COARSE_SHIFT`, where [`encode`] starts.
const COARSE: [u8; 1 << (16 - COARSE_SHIFT)] = build_coarse();

/// `x^(1/5)` for `x` in `(0, 1]`, by Newton's method from 1 (monotone from above).
const fn fifth_root(x: f64) -> f64 {
    let mut y = 1.0;
    let mut i = 0;
    while i < 64 {
        let y4 = y * y * y * y;
        y -= (y4 * y - x) / (5.0 * y4);
        i += 1;
    }
    y
}

/// The sRGB decoding of `s` in `[0, 1]` (IEC 61966-2-1).
const fn srgb_to_linear(s: f64) -> f64 {
    if s <= 0.04045 {
        s / 12.92
    } else {
        // x^2.4 = x² · (x^(1/5))².
        let x = (s + 0.055) / 1.055;
        let r = fifth_root(x);
        x * x * r * r
    }
}

const fn build_decode() -> [u16; 256] {
    let mut t = [0u16; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = (srgb_to_linear(c as f64 / 255.0) * 65535.0 + 0.5) as u16;
        c += 1;
    }
    t
}

const fn build_thresholds() -> [u16; 256] {
    let mut t = [0u16; 256];
    let mut k = 1;
    while k < 256 {
        t[k] = ((DECODE[k - 1] as u32 + DECODE[k] as u32).div_ceil(2)) as u16;
        k += 1;
    }
    t
}

/// The encoding of `x` by scanning the thresholds from code 0 (compile time only).
const fn encode_slow(x: u32) -> u8 {
    let mut k = 0;
    while k < 255 && x >= THRESHOLD[k + 1] as u32 {
        k += 1;
    }
    k as u8
}

const fn build_coarse() -> [u8; 1 << (16 - COARSE_SHIFT)] {
    let mut t = [0u8; 1 << (16 - COARSE_SHIFT)];
    let mut i = 0;
    while i < t.len() {
        t[i] = encode_slow((i as u32) << COARSE_SHIFT);
        i += 1;
    }
    t
}

/// Linear light (`0..=65535`) of 8-bit sRGB code `c`.
#[cfg_attr(not(feature = "texture"), allow(dead_code))]
#[inline(always)]
pub(crate) fn decode(c: u8) -> u32 {
    DECODE[c as usize] as u32
}

/// Linear light (`0..=65535`) of a filtered sRGB value `v`: a code with 8 fractional bits
/// (`0..=0xFF00`, as the texture sampler returns), the decoded curve interpolated linearly
/// between the two codes around it.
#[cfg_attr(not(feature = "texture"), allow(dead_code))]
#[inline(always)]
pub(crate) fn decode_filtered(v: u32) -> u32 {
    let v = v.min(0xFF00);
    let (i, f) = ((v >> 8) as usize & 255, v & 255);
    let a = decode(i as u8);
    if f == 0 {
        return a;
    }
    let b = decode((i + 1).min(255) as u8);
    a + (((b - a) * f + 128) >> 8)
}

/// The 8-bit sRGB code whose linear light is nearest to `x` (`0..=65535`; larger values give
/// 255).
#[inline(always)]
pub(crate) fn encode(x: u32) -> u8 {
    let x = x.min(65535);
    let mut k = COARSE[(x >> COARSE_SHIFT) as usize & (COARSE.len() - 1)] as usize;
    // At most four steps: codes are at least 20 apart in linear light, the coarse buckets 64.
    while k < 255 && x >= THRESHOLD[(k + 1) & 255] as u32 {
        k += 1;
    }
    k as u8
}

/// The 8-bit sRGB code nearest to a linear value × 255 (an asset's base color,
/// [`MeshData::color`](crate::asset::MeshData::color)): what a plain [`Mesh`](super::Mesh), which
/// draws its color as given, is handed to show a linear color.
#[must_use]
pub fn linear_to_srgb8(linear: u8) -> u8 {
    encode(u32::from(linear) * 257)
}

#[cfg(test)]
pub(super) mod tests {
    extern crate std;

    use super::*;

    /// The linear light of 8-bit sRGB code `c`, in `f64`: the reference the integer tables
    /// and the textured path are checked against.
    pub(in crate::raster) fn exact(c: u8) -> f64 {
        let s = f64::from(c) / 255.0;
        if s <= 0.04045 {
            s / 12.92
        } else {
            ((s + 0.055) / 1.055).powf(2.4)
        }
    }

    #[test]
    fn decoding_is_the_srgb_curve_rounded_to_16_bits() {
        for c in 0..=255u8 {
            let want = exact(c) * 65535.0;
            let got = f64::from(decode(c));
            assert!((got - want).abs() <= 0.5 + 1e-6, "code {c}: {got} against {want}");
        }
        assert_eq!((decode(0), decode(1), decode(255)), (0, 20, 65535));
        // Strictly increasing: every code keeps its own linear value.
        assert!((1..=255u8).all(|c| decode(c) > decode(c - 1)));
    }

    #[test]
    fn encoding_picks_the_nearest_code_and_inverts_decoding() {
        for c in 0..=255u8 {
            assert_eq!(encode(decode(c)), c);
        }
        for x in 0..=65535u32 {
            let k = encode(x);
            let d = |c: u8| f64::from(decode(c)) - f64::from(x);
            // Decoded codes increase, so the nearest is no farther than both neighbours.
            let (lo, hi) = (k.saturating_sub(1), k.saturating_add(1));
            assert!(d(k).abs() <= d(lo).abs() && d(k).abs() <= d(hi).abs(), "x = {x}: code {k}");
        }
        assert_eq!(encode(u32::MAX), 255);
    }

    #[test]
    fn encoding_takes_at_most_four_steps_past_the_coarse_table() {
        let steps = (0..=65535u32).map(|x| encode(x) - COARSE[(x >> COARSE_SHIFT) as usize]).max();
        assert_eq!(steps, Some(4));
    }

    #[test]
    fn linear_colors_encode_to_the_nearest_code() {
        // The code whose exact linear light is nearest to v / 255 (ties within the 16-bit
        // rounding of the tables accepted).
        for v in 0..=255u8 {
            let l = f64::from(v) / 255.0;
            let got = exact(linear_to_srgb8(v));
            let best = (0..=255u8).map(|c| (exact(c) - l).abs()).fold(f64::INFINITY, f64::min);
            assert!((got - l).abs() <= best + 1.0 / 65535.0, "{v}: code {} is not the nearest", linear_to_srgb8(v));
        }
        assert_eq!((linear_to_srgb8(0), linear_to_srgb8(255)), (0, 255));
    }

    #[test]
    fn filtered_values_interpolate_between_codes() {
        assert_eq!(decode_filtered(200 << 8), decode(200));
        let mid = decode_filtered((100 << 8) + 128);
        assert_eq!(mid, (decode(100) + decode(101)).div_ceil(2));
        assert_eq!(decode_filtered(u32::MAX), 65535);
    }
}
