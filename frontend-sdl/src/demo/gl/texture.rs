//! Base-color textures on the GPU under OpenGL ES 2.0 rules: one GL texture per baked texture
//! and sampler state (wrap and filters are texture state in ES 2.0). A texture whose size is
//! not a power of two can only clamp to its edge and has no mipmaps there, so when its sampler
//! repeats, mirrors or reads mipmaps it is resampled ([`resize_rgba`], area average in linear
//! light) to the next power of two at upload; one larger than `GL_MAX_TEXTURE_SIZE` is scaled
//! down to fit. Untextured parts sample a 1 × 1 white texture. [`create`] also makes the
//! offscreen target's color texture.

use glow::HasContext;
use sinew::asset::format::FILTER_LINEAR;
use sinew::asset::MaterialData;
use sinew::raster::{PixelFormat, Rgb565, TexelFormat, Texture, Wrap};
use sinew_offline::material::resize_rgba;

use super::context::GlError;

/// What one GL texture is made of: the baked texture and the sampler state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TextureKey {
    /// Baked texture index.
    pub(super) texture: usize,
    wrap_s: Wrap,
    wrap_t: Wrap,
    mag: u8,
    min: u8,
}

impl TextureKey {
    /// The key of `material`'s texture, if it has one.
    pub(super) fn of(material: &MaterialData) -> Option<TextureKey> {
        Some(TextureKey {
            texture: material.texture?,
            wrap_s: material.wrap_s,
            wrap_t: material.wrap_t,
            mag: material.mag_filter,
            min: material.min_filter,
        })
    }
    fn needs_pot(&self) -> bool {
        self.wrap_s != Wrap::ClampToEdge || self.wrap_t != Wrap::ClampToEdge || self.mipmaps()
    }
    fn mipmaps(&self) -> bool {
        self.min > FILTER_LINEAR
    }
}

/// The texels of `t` as RGBA8.
fn rgba_of(t: &Texture<'_>) -> Vec<u8> {
    match t.format() {
        TexelFormat::Rgba8 => t.texels().to_vec(),
        TexelFormat::Rgb565 => t
            .texels()
            .chunks_exact(2)
            .flat_map(|p| {
                let c = Rgb565::unpack(u16::from_le_bytes([p[0], p[1]]));
                [c.r, c.g, c.b, 255]
            })
            .collect(),
    }
}

/// The size a `width × height` texture is uploaded at: within `max_size`, and powers of two
/// when `pot`.
pub(super) fn upload_size(width: u32, height: u32, pot: bool, max_size: u32) -> (u32, u32) {
    let max_size = max_size.max(1);
    let fit = |d: u32| if pot { d.next_power_of_two().min(prev_pot(max_size)) } else { d.min(max_size) };
    (fit(width.max(1)), fit(height.max(1)))
}

/// The largest power of two not above `n` (n ≥ 1).
fn prev_pot(n: u32) -> u32 {
    1 << (31 - n.max(1).leading_zeros())
}

/// The wrap mode's enum (the host layer's table, which the browser page reads too).
fn gl_wrap(w: Wrap) -> i32 {
    sinew_host::gl::wrap(w) as i32
}

/// A minification filter code's enum.
fn gl_min(code: u8) -> i32 {
    sinew_host::gl::min_filter(code) as i32
}

/// Sampler state of nearest texels clamped to the edge (the white texture, the offscreen color
/// target).
pub(super) const NEAREST_CLAMPED: [(u32, i32); 4] = [
    (glow::TEXTURE_MIN_FILTER, glow::NEAREST as i32),
    (glow::TEXTURE_MAG_FILTER, glow::NEAREST as i32),
    (glow::TEXTURE_WRAP_S, glow::CLAMP_TO_EDGE as i32),
    (glow::TEXTURE_WRAP_T, glow::CLAMP_TO_EDGE as i32),
];

/// Creates a `width × height` RGBA8 2D texture with the given parameters, filled from `pixels`
/// (exactly that many texels) or left undefined (`None`, a render target), and unbinds it.
pub(super) fn create(
    gl: &glow::Context,
    width: u32,
    height: u32,
    pixels: Option<&[u8]>,
    params: [(u32, i32); 4],
    mipmaps: bool,
) -> Result<glow::Texture, GlError> {
    debug_assert!(pixels.is_none_or(|p| p.len() == width as usize * height as usize * 4));
    // SAFETY: texture creation and an upload of `width × height` RGBA8 texels from `pixels`
    // (callers pass exactly that many) or of none, unpacked with an alignment of 1.
    unsafe {
        let texture = gl.create_texture().map_err(GlError::Create)?;
        gl.bind_texture(glow::TEXTURE_2D, Some(texture));
        gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
        gl.tex_image_2d(
            glow::TEXTURE_2D,
            0,
            glow::RGBA as i32,
            width as i32,
            height as i32,
            0,
            glow::RGBA,
            glow::UNSIGNED_BYTE,
            glow::PixelUnpackData::Slice(pixels),
        );
        for (p, v) in params {
            gl.tex_parameter_i32(glow::TEXTURE_2D, p, v);
        }
        if mipmaps {
            gl.generate_mipmap(glow::TEXTURE_2D);
        }
        gl.bind_texture(glow::TEXTURE_2D, None);
        Ok(texture)
    }
}

/// The 1 × 1 white texture untextured parts sample.
pub(super) fn white(gl: &glow::Context) -> Result<glow::Texture, GlError> {
    create(gl, 1, 1, Some(&[255; 4]), NEAREST_CLAMPED, false)
}

/// Uploads texture `t` with the sampler state of `key`, resized as the module documentation
/// says. Returns the texture and its uploaded size.
pub(super) fn upload(
    gl: &glow::Context,
    t: &Texture<'_>,
    key: &TextureKey,
    max_size: u32,
) -> Result<(glow::Texture, (u32, u32)), GlError> {
    let (w, h) = upload_size(t.width(), t.height(), key.needs_pot(), max_size);
    let rgba = rgba_of(t);
    let pixels = if (w, h) == (t.width(), t.height()) { rgba } else { resize_rgba(&rgba, t.width(), t.height(), w, h) };
    let mag = sinew_host::gl::mag_filter(key.mag) as i32;
    let texture = create(
        gl,
        w,
        h,
        Some(&pixels),
        [
            (glow::TEXTURE_MIN_FILTER, gl_min(key.min)),
            (glow::TEXTURE_MAG_FILTER, mag),
            (glow::TEXTURE_WRAP_S, gl_wrap(key.wrap_s)),
            (glow::TEXTURE_WRAP_T, gl_wrap(key.wrap_t)),
        ],
        key.mipmaps(),
    )?;
    Ok((texture, (w, h)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npot_textures_grow_to_powers_of_two_only_when_they_must() {
        assert_eq!(upload_size(1000, 100, true, 4096), (1024, 128));
        assert_eq!(upload_size(1000, 100, false, 4096), (1000, 100));
        assert_eq!(upload_size(1024, 1024, true, 512), (512, 512));
        assert_eq!(upload_size(3000, 5, false, 2048), (2048, 5));
        assert_eq!(upload_size(3000, 5, true, 2000), (1024, 8));
        assert_eq!(prev_pot(1), 1);
        assert_eq!(prev_pot(4095), 2048);
    }
}
