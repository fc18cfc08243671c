//! The texture section ([`TextureData`]: texels read in place) and the material of a mesh part
//! ([`MaterialData`]: base-color factor, texture, sampler, vertex colors), with their validation.

use crate::format::reader::{le_u16, Reader};
use crate::format::*;
use crate::raster::{Filter, Sampler, TexelFormat, Texture, Wrap, MAX_TEXTURE_DIMENSION};

/// A texture section: its name and its texture (size, format and texels), read in place.
#[derive(Debug, Clone, Copy)]
pub struct TextureData<'a> {
    name: &'a str,
    texture: Texture<'a>,
}

impl<'a> TextureData<'a> {
    fn read(body: &'a [u8], sec: u16) -> Result<Self, ParseError> {
        let mut r = Reader::for_section(body, sec);
        let name = r.str()?;
        let format = r.u8()?;
        let flags = r.u8()?;
        let width = r.u16()? as u32;
        let height = r.u16()? as u32;
        let bad = ParseError::BadTexture { section: sec };
        let bytes = texel_bytes(format).ok_or(bad)?;
        let dims_ok = |d: u32| (1..=MAX_TEXTURE_DIMENSION).contains(&d);
        if flags != 0 || !dims_ok(width) || !dims_ok(height) {
            return Err(bad);
        }
        let len = width as usize * height as usize * bytes;
        let texels = r.bytes(len)?;
        if r.pos() != body.len() {
            return Err(bad);
        }
        let format = if format == TEXEL_RGB565 { TexelFormat::Rgb565 } else { TexelFormat::Rgba8 };
        let texture = Texture::new(texels, width, height, format).map_err(|_| bad)?;
        Ok(TextureData { name, texture })
    }
    pub(super) fn parse(body: &'a [u8], sec: u16) -> Result<(), ParseError> {
        Self::read(body, sec).map(|_| ())
    }
    pub(super) fn view(body: &'a [u8]) -> Option<Self> {
        Self::read(body, 0).ok()
    }
    /// Texture name (the source image's name).
    #[must_use]
    pub fn name(&self) -> &'a str {
        self.name
    }
    /// The texture for the rasterizer (its size, format and texels), reading the section's
    /// bytes in place.
    #[must_use]
    pub fn texture(&self) -> Texture<'a> {
        self.texture
    }
}

/// The material of a mesh part: how its surface is colored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaterialData {
    /// Base-color factor, linear RGBA × 255 (multiplies the texture and the vertex colors).
    pub factor: [u8; 4],
    /// Index of the base-color texture among the file's textures, if any.
    pub texture: Option<usize>,
    /// Wrap of `u`.
    pub wrap_s: Wrap,
    /// Wrap of `v`.
    pub wrap_t: Wrap,
    /// Magnification filter ([`FILTER_NEAREST`] or [`FILTER_LINEAR`]).
    pub mag_filter: u8,
    /// Minification filter (any `FILTER_*`; the mipmap ones are for GPUs).
    pub min_filter: u8,
    /// The part's vertex colors multiply the color.
    pub vertex_colors: bool,
}

impl MaterialData {
    /// Reads a material (`MATERIAL_LEN` bytes) with its codes checked; `None` for an unknown
    /// code or a non-zero reserved byte.
    pub(super) fn read(b: &[u8]) -> Option<MaterialData> {
        let b: &[u8; MATERIAL_LEN] = b.try_into().ok()?;
        let wrap = |c: u8| match c {
            WRAP_REPEAT => Some(Wrap::Repeat),
            WRAP_CLAMP => Some(Wrap::ClampToEdge),
            WRAP_MIRROR => Some(Wrap::MirroredRepeat),
            _ => None,
        };
        let texture = le_u16(b, 4);
        let ok = b[8] <= FILTER_LINEAR && b[9] <= FILTER_LINEAR_MIPMAP_LINEAR;
        if !ok || b[10] & !MATERIAL_VERTEX_COLORS != 0 || b[11] != 0 {
            return None;
        }
        Some(MaterialData {
            factor: [b[0], b[1], b[2], b[3]],
            texture: (texture != NONE).then_some(texture as usize),
            wrap_s: wrap(b[6])?,
            wrap_t: wrap(b[7])?,
            mag_filter: b[8],
            min_filter: b[9],
            vertex_colors: b[10] & MATERIAL_VERTEX_COLORS != 0,
        })
    }

    /// The sampler the software rasterizer uses: the wrap modes, and bilinear filtering when
    /// the magnification filter is linear.
    #[must_use]
    pub fn sampler(&self) -> Sampler {
        let filter = if self.mag_filter == FILTER_LINEAR { Filter::Bilinear } else { Filter::Nearest };
        Sampler { wrap_s: self.wrap_s, wrap_t: self.wrap_t, filter }
    }

    /// True when the minification filter reads mipmaps.
    #[must_use]
    pub fn uses_mipmaps(&self) -> bool {
        self.min_filter >= FILTER_NEAREST_MIPMAP_NEAREST
    }
}
