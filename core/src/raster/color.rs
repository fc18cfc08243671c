//! Colors and pixel formats.

use core::fmt;

/// A color with 8 bits per channel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Rgb {
    /// Red, 0 to 255.
    pub r: u8,
    /// Green, 0 to 255.
    pub g: u8,
    /// Blue, 0 to 255.
    pub b: u8,
}

impl Rgb {
    /// Black.
    pub const BLACK: Rgb = Rgb::new(0, 0, 0);
    /// White.
    pub const WHITE: Rgb = Rgb::new(255, 255, 255);

    /// A color from its channels.
    #[inline(always)]
    #[must_use]
    pub const fn new(r: u8, g: u8, b: u8) -> Self {
        Rgb { r, g, b }
    }

    /// Every channel multiplied by `level / 255`, rounded to nearest.
    #[inline]
    #[must_use]
    pub const fn scale(self, level: u8) -> Self {
        const fn ch(c: u8, l: u8) -> u8 {
            ((c as u32 * l as u32 + 127) / 255) as u8
        }
        Rgb { r: ch(self.r, level), g: ch(self.g, level), b: ch(self.b, level) }
    }
}

/// How a color is stored in one element of a color buffer (like embedded-graphics'
/// `PixelColor`). Implement it for other layouts, such as byte-swapped RGB565 for an SPI LCD.
pub trait PixelFormat {
    /// One buffer element.
    type Raw: Copy + Default + PartialEq + fmt::Debug;
    /// Packs a color.
    fn pack(c: Rgb) -> Self::Raw;
    /// Unpacks a stored value (the inverse of [`pack`](Self::pack) up to the format's precision).
    fn unpack(raw: Self::Raw) -> Rgb;
}

/// 32-bit `0x00RRGGBB` (the top byte is written as 0), the layout of minifb and of most
/// desktop framebuffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Xrgb8888;

impl PixelFormat for Xrgb8888 {
    type Raw = u32;
    #[inline(always)]
    fn pack(c: Rgb) -> u32 {
        (c.r as u32) << 16 | (c.g as u32) << 8 | c.b as u32
    }
    #[inline(always)]
    fn unpack(raw: u32) -> Rgb {
        Rgb::new((raw >> 16) as u8, (raw >> 8) as u8, raw as u8)
    }
}

/// 16-bit `RRRRRGGGGGGBBBBB` in native `u16` order, the layout of most small LCD controllers.
/// Channels are rounded to nearest when packed and widened by bit replication when unpacked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rgb565;

impl PixelFormat for Rgb565 {
    type Raw = u16;
    #[inline(always)]
    fn pack(c: Rgb) -> u16 {
        let r = (c.r as u32 * 31 + 127) / 255;
        let g = (c.g as u32 * 63 + 127) / 255;
        let b = (c.b as u32 * 31 + 127) / 255;
        (r << 11 | g << 5 | b) as u16
    }
    #[inline(always)]
    fn unpack(raw: u16) -> Rgb {
        let r = (raw >> 11) & 31;
        let g = (raw >> 5) & 63;
        let b = raw & 31;
        Rgb::new((r << 3 | r >> 2) as u8, (g << 2 | g >> 4) as u8, (b << 3 | b >> 2) as u8)
    }
}

/// Number of shading levels in a [`ShadeTable`].
pub(crate) const SHADE_LEVELS: usize = 256;

/// A base color packed at each of 256 shading levels (level 255 is the color itself).
pub(crate) type ShadeTable<T> = [T; SHADE_LEVELS];

/// Builds the shade table of `base` for format `C`.
#[inline]
pub(crate) fn shade_table<C: PixelFormat>(base: Rgb) -> ShadeTable<C::Raw> {
    let mut t = [C::Raw::default(); SHADE_LEVELS];
    for (level, slot) in t.iter_mut().enumerate() {
        *slot = C::pack(base.scale(level as u8));
    }
    t
}
