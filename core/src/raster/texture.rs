//! Textures read in place: [`Texture`] over caller-owned texels ([`TexelFormat::Rgba8`] or
//! [`TexelFormat::Rgb565`]), the [`Sampler`] state ([`Wrap`] per axis, [`Filter`]), and the
//! integer texel lookups of the raster stage (nearest and bilinear, with the three wrap modes).

#[cfg(feature = "texture")]
use super::color::{PixelFormat, Rgb565};
use super::error::RasterError;

/// Largest width or height of a texture, in texels. It bounds the texel coordinates the raster
/// stage carries in fixed point.
pub const MAX_TEXTURE_DIMENSION: u32 = 4096;

/// How texels are stored: rows from the top, texels left to right, no padding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TexelFormat {
    /// Four bytes per texel: red, green, blue, alpha (alpha is not used: surfaces are opaque).
    #[default]
    Rgba8,
    /// Two bytes per texel: a little-endian `u16` `RRRRRGGGGGGBBBBB`.
    Rgb565,
}

impl TexelFormat {
    /// Bytes per texel.
    #[must_use]
    pub const fn bytes_per_texel(self) -> usize {
        match self {
            TexelFormat::Rgba8 => 4,
            TexelFormat::Rgb565 => 2,
        }
    }
}

/// What a texture coordinate outside `[0, 1]` reads, per axis (glTF and OpenGL wrap modes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Wrap {
    /// The texture tiles: `u` and `u + 1` read the same texel.
    #[default]
    Repeat,
    /// The edge texels extend outwards.
    ClampToEdge,
    /// The texture tiles, every other copy mirrored.
    MirroredRepeat,
}

/// How a texel is chosen or blended for a pixel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Filter {
    /// The texel whose square holds the point.
    Nearest,
    /// A blend of the four texels whose centers surround the point, weighted by distance
    /// (1/256 steps).
    #[default]
    Bilinear,
}

/// Sampler state: wrap modes and filter. The software rasterizer has no mipmaps: a minifying
/// texture is filtered like a magnified one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sampler {
    /// Wrap of the horizontal coordinate `u` (glTF `wrapS`).
    pub wrap_s: Wrap,
    /// Wrap of the vertical coordinate `v` (glTF `wrapT`).
    pub wrap_t: Wrap,
    /// The filter.
    pub filter: Filter,
}

/// A texture over caller-owned texels, read in place (texture coordinate `(0, 0)` is the top
/// left corner of the first texel, as in glTF).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Texture<'a> {
    texels: &'a [u8],
    width: u32,
    height: u32,
    format: TexelFormat,
}

impl<'a> Texture<'a> {
    /// A `width × height` texture of `format` over `texels`.
    ///
    /// # Errors
    ///
    /// [`RasterError::InvalidTexture`] when `width` or `height` is 0 or above
    /// [`MAX_TEXTURE_DIMENSION`], or `texels` is shorter than
    /// `width × height × format.bytes_per_texel()`.
    pub fn new(texels: &'a [u8], width: u32, height: u32, format: TexelFormat) -> Result<Self, RasterError> {
        let ok_dim = |d: u32| (1..=MAX_TEXTURE_DIMENSION).contains(&d);
        let need = width as usize * height as usize * format.bytes_per_texel();
        if !ok_dim(width) || !ok_dim(height) || texels.len() < need {
            return Err(RasterError::InvalidTexture);
        }
        Ok(Texture { texels, width, height, format })
    }
    /// Width in texels.
    #[must_use]
    pub fn width(&self) -> u32 {
        self.width
    }
    /// Height in texels.
    #[must_use]
    pub fn height(&self) -> u32 {
        self.height
    }
    /// Texel format.
    #[must_use]
    pub fn format(&self) -> TexelFormat {
        self.format
    }
    /// The texels.
    #[must_use]
    pub fn texels(&self) -> &'a [u8] {
        self.texels
    }
}

#[cfg(feature = "texture")]
impl Texture<'_> {
    /// Texel `(x, y)` (in range; 0 past the end of the data, which `new` rules out).
    #[inline(always)]
    pub(crate) fn texel(&self, x: u32, y: u32) -> [u32; 3] {
        let i = y as usize * self.width as usize + x as usize;
        match self.format {
            TexelFormat::Rgba8 => match self.texels.get(i * 4..i * 4 + 3) {
                Some(t) => [t[0] as u32, t[1] as u32, t[2] as u32],
                None => [0; 3],
            },
            TexelFormat::Rgb565 => match self.texels.get(i * 2..i * 2 + 2) {
                Some(t) => {
                    let c = Rgb565::unpack(u16::from_le_bytes([t[0], t[1]]));
                    [c.r as u32, c.g as u32, c.b as u32]
                }
                None => [0; 3],
            },
        }
    }

    /// The color at texel-space point `(u, v)`, both with [`TEXEL_FRAC_BITS`] fractional bits
    /// (`u = 0` is the left edge of texel column 0), each channel 0..=255 with 8 fractional bits
    /// for bilinear blends (`× 256`).
    #[inline(always)]
    pub(crate) fn sample(&self, sampler: &Sampler, u: i64, v: i64) -> [u32; 3] {
        let (w, h) = (self.width as i64, self.height as i64);
        match sampler.filter {
            Filter::Nearest => {
                let x = wrap(sampler.wrap_s, u >> TEXEL_FRAC_BITS, w);
                let y = wrap(sampler.wrap_t, v >> TEXEL_FRAC_BITS, h);
                self.texel(x, y).map(|c| c << 8)
            }
            Filter::Bilinear => {
                // Texel centers are at +0.5: blend between the centers around the point.
                let half = 1 << (TEXEL_FRAC_BITS - 1);
                let (us, vs) = (u - half, v - half);
                let (fx, fy) = ((us & TEXEL_FRAC_MASK) as u32, (vs & TEXEL_FRAC_MASK) as u32);
                let (cx, cy) = (us >> TEXEL_FRAC_BITS, vs >> TEXEL_FRAC_BITS);
                let (x0, x1) = (wrap(sampler.wrap_s, cx, w), wrap(sampler.wrap_s, cx + 1, w));
                let (y0, y1) = (wrap(sampler.wrap_t, cy, h), wrap(sampler.wrap_t, cy + 1, h));
                let (a, b, c, d) = (self.texel(x0, y0), self.texel(x1, y0), self.texel(x0, y1), self.texel(x1, y1));
                let one = 1u32 << TEXEL_FRAC_BITS;
                let mut out = [0u32; 3];
                for (k, o) in out.iter_mut().enumerate() {
                    let top = a[k] * (one - fx) + b[k] * fx;
                    let bottom = c[k] * (one - fx) + d[k] * fx;
                    // 8 + 8 fractional bits → 8.
                    *o = (top * (one - fy) + bottom * fy + (1 << (2 * TEXEL_FRAC_BITS - 9)))
                        >> (2 * TEXEL_FRAC_BITS - 8);
                }
                out
            }
        }
    }
}

#[cfg(feature = "texture")]
/// Fractional bits of texel-space coordinates in the raster stage (1/256 texel).
pub(crate) const TEXEL_FRAC_BITS: u32 = 8;
#[cfg(feature = "texture")]
/// Mask of the fractional bits.
const TEXEL_FRAC_MASK: i64 = (1 << TEXEL_FRAC_BITS) - 1;

#[cfg(feature = "texture")]
/// Texel index `i` wrapped into `0..n` by `mode`.
#[inline(always)]
pub(crate) fn wrap(mode: Wrap, i: i64, n: i64) -> u32 {
    let n = n.max(1);
    let r = match mode {
        Wrap::Repeat => i.rem_euclid(n),
        Wrap::ClampToEdge => i.clamp(0, n - 1),
        Wrap::MirroredRepeat => {
            let m = i.rem_euclid(2 * n);
            if m < n {
                m
            } else {
                2 * n - 1 - m
            }
        }
    };
    r as u32
}

#[cfg(feature = "texture")]
/// A sampled texel (sRGB channels ×256) decoded to linear light, times a linear modulation
/// color (channels 0..=0xFF00, 0xFF00 = 1): 16-bit linear light per channel (`0..=65535`).
#[inline(always)]
pub(crate) fn modulate(t: [u32; 3], m: [u32; 3]) -> [u32; 3] {
    // decoded ≤ 65535 and m ≤ 0xFF00: the product fits u64 (and u32, but not with rounding).
    let ch = |t: u32, m: u32| ((super::srgb::decode_filtered(t) as u64 * m as u64 + 0x7F80) / 0xFF00) as u32;
    [ch(t[0], m[0]), ch(t[1], m[1]), ch(t[2], m[2])]
}
