//! Depth: the range the raster stage interpolates ([`DEPTH_BITS`]) and the formats a depth buffer
//! stores it in.

use core::fmt;

/// Bits of the depth the raster stage interpolates: 0 at the near plane, `2^24 − 1` at the far
/// plane. [`DepthFormat::from_z`] receives values in this range.
pub const DEPTH_BITS: u32 = 24;

/// The largest depth value, at the far plane.
pub const DEPTH_MAX: u32 = (1 << DEPTH_BITS) - 1;

/// How a depth is stored in one element of a depth buffer. Smaller is nearer; the depth test
/// passes when the new value is strictly less than the stored one.
pub trait DepthFormat {
    /// One buffer element.
    type Raw: Copy + Ord + fmt::Debug;
    /// The value a cleared buffer holds: farther than anything drawn.
    const FAR: Self::Raw;
    /// Converts a depth `z` in `0..=`[`DEPTH_MAX`] (0 at the near plane) into
    /// the stored value. Must not decrease when `z` increases.
    fn from_z(z: u32) -> Self::Raw;
}

/// 16-bit depth: the top 16 of the 24 interpolated bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Depth16;

impl DepthFormat for Depth16 {
    type Raw = u16;
    const FAR: u16 = u16::MAX;
    #[inline(always)]
    fn from_z(z: u32) -> u16 {
        (z >> 8) as u16
    }
}

/// 32-bit depth holding all 24 interpolated bits (values up to
/// [`DEPTH_MAX`]; the cleared value is `u32::MAX`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Depth32;

impl DepthFormat for Depth32 {
    type Raw = u32;
    const FAR: u32 = u32::MAX;
    #[inline(always)]
    fn from_z(z: u32) -> u32 {
        z
    }
}
