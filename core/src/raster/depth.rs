//! Depth formats.

use core::fmt;

/// How a depth is stored in one element of a depth buffer. Smaller is nearer; the depth test
/// passes when the new value is strictly less than the stored one.
pub trait DepthFormat {
    /// One buffer element.
    type Raw: Copy + Ord + fmt::Debug;
    /// The value a cleared buffer holds: farther than anything drawn.
    const FAR: Self::Raw;
    /// Converts a depth `z` in `0..=`[`DEPTH_MAX`](super::DEPTH_MAX) (0 at the near plane) into
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
/// [`DEPTH_MAX`](super::DEPTH_MAX); the cleared value is `u32::MAX`).
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
