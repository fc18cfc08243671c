//! Materials and images on the host: what the importers give a primitive to color it
//! ([`RigMaterial`]: base-color factor and texture with its sampler; [`RigImage`]: decoded RGBA8
//! pixels), and the image operations the baker and the GL viewer share: area-averaging
//! resampling in linear light ([`resize_rgba`], [`fit_within`]) and RGB565 packing
//! ([`to_rgb565`]).

use sinew::raster::{PixelFormat, Rgb, Rgb565, Wrap, MAX_TEXTURE_DIMENSION};

/// A decoded image: RGBA8 pixels, rows from the top (color values as stored: sRGB for glTF
/// base-color textures).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RigImage {
    /// Name (the file's image name, its URI's file name, or `image<i>`).
    pub name: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width × height × 4` bytes.
    pub rgba: Vec<u8>,
}

/// Texture filtering, as glTF samplers name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FilterMode {
    /// Nearest texel.
    Nearest,
    /// Linear.
    #[default]
    Linear,
    /// Nearest texel of the nearest mipmap (minification only).
    NearestMipmapNearest,
    /// Linear within the nearest mipmap (minification only).
    LinearMipmapNearest,
    /// Nearest texel, linear between mipmaps (minification only).
    NearestMipmapLinear,
    /// Trilinear (minification only).
    LinearMipmapLinear,
}

/// How a texture is sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RigSampler {
    /// Wrap of `u`.
    pub wrap_s: Wrap,
    /// Wrap of `v`.
    pub wrap_t: Wrap,
    /// Magnification filter (nearest or linear).
    pub mag_filter: FilterMode,
    /// Minification filter.
    pub min_filter: FilterMode,
}

/// A base-color texture of a material.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RigTexture {
    /// Index into [`Rig::images`](crate::rig::Rig::images).
    pub image: usize,
    /// The sampler.
    pub sampler: RigSampler,
}

/// A material: how a primitive's surface is colored.
#[derive(Debug, Clone, PartialEq)]
pub struct RigMaterial {
    /// Name.
    pub name: String,
    /// Base-color factor, linear RGBA.
    pub base_color: [f32; 4],
    /// The base-color texture, if any (read with the primitive's
    /// [`texcoords`](crate::rig::RigPrimitive::texcoords)).
    pub texture: Option<RigTexture>,
}

/// sRGB-encoded 8-bit value to linear light, 16 bits.
fn to_linear(c: u8) -> f32 {
    let c = c as f32 / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear light to an sRGB-encoded 8-bit value.
fn to_srgb(l: f32) -> u8 {
    let l = l.clamp(0.0, 1.0);
    let c = if l <= 0.003_130_8 { l * 12.92 } else { 1.055 * l.powf(1.0 / 2.4) - 0.055 };
    (c * 255.0 + 0.5) as u8
}

/// The size of a `width × height` image scaled down (never up) to fit `max × max`, keeping
/// its aspect ratio (each side at least 1).
#[must_use]
pub fn fit_within(width: u32, height: u32, max: u32) -> (u32, u32) {
    let max = max.clamp(1, MAX_TEXTURE_DIMENSION);
    let longest = width.max(height).max(1);
    if longest <= max {
        return (width.max(1), height.max(1));
    }
    let scale = |d: u32| ((d as u64 * max as u64 + longest as u64 / 2) / longest as u64).max(1) as u32;
    (scale(width), scale(height))
}

/// One axis of an area-averaging resample: for each output pixel, the source pixels it
/// covers and their weights (the overlap of their extent with the output pixel's footprint).
/// Magnifying axes use linear interpolation between source centers instead.
fn axis_weights(src: u32, dst: u32) -> Vec<Vec<(usize, f32)>> {
    let (src, dst) = (src.max(1) as usize, dst.max(1) as usize);
    let scale = src as f64 / dst as f64;
    (0..dst)
        .map(|o| {
            if scale <= 1.0 {
                let x = ((o as f64 + 0.5) * scale - 0.5).clamp(0.0, (src - 1) as f64);
                let i = x.floor() as usize;
                let f = (x - i as f64) as f32;
                let j = (i + 1).min(src - 1);
                vec![(i, 1.0 - f), (j, f)]
            } else {
                let (a, b) = (o as f64 * scale, (o + 1) as f64 * scale);
                let mut w = Vec::new();
                let mut i = a.floor() as usize;
                while (i as f64) < b && i < src {
                    let overlap = (b.min(i as f64 + 1.0) - a.max(i as f64)) / scale;
                    if overlap > 0.0 {
                        w.push((i, overlap as f32));
                    }
                    i += 1;
                }
                w
            }
        })
        .collect()
}

/// Resamples RGBA8 pixels (`width × height`, sRGB color) to `new_width × new_height`:
/// each output pixel is the area-weighted mean of the source pixels under it, computed in
/// linear light (alpha linearly), so downscaled textures keep their brightness and thin
/// features fade instead of flickering; enlarging axes interpolate linearly.
#[must_use]
pub fn resize_rgba(rgba: &[u8], width: u32, height: u32, new_width: u32, new_height: u32) -> Vec<u8> {
    let (w, h) = (width.max(1) as usize, height.max(1) as usize);
    if (new_width as usize, new_height as usize) == (w, h) && rgba.len() >= w * h * 4 {
        return rgba[..w * h * 4].to_vec();
    }
    let lut: Vec<f32> = (0..=255u8).map(to_linear).collect();
    let px = |x: usize, y: usize| -> [f32; 4] {
        let i = (y * w + x) * 4;
        match rgba.get(i..i + 4) {
            Some(p) => [lut[p[0] as usize], lut[p[1] as usize], lut[p[2] as usize], p[3] as f32 / 255.0],
            None => [0.0; 4],
        }
    };
    let (wx, wy) = (axis_weights(width, new_width), axis_weights(height, new_height));
    // Horizontal pass into linear floats, then vertical.
    let nw = wx.len();
    let mut rows = vec![[0.0f32; 4]; nw * h];
    for y in 0..h {
        for (o, ws) in wx.iter().enumerate() {
            let mut acc = [0.0f32; 4];
            for &(i, wt) in ws {
                let p = px(i, y);
                for k in 0..4 {
                    acc[k] += p[k] * wt;
                }
            }
            rows[y * nw + o] = acc;
        }
    }
    let mut out = Vec::with_capacity(nw * wy.len() * 4);
    for ws in &wy {
        for x in 0..nw {
            let mut acc = [0.0f32; 4];
            for &(j, wt) in ws {
                let p = rows[j * nw + x];
                for k in 0..4 {
                    acc[k] += p[k] * wt;
                }
            }
            out.extend_from_slice(&[
                to_srgb(acc[0]),
                to_srgb(acc[1]),
                to_srgb(acc[2]),
                (acc[3] * 255.0 + 0.5).clamp(0.0, 255.0) as u8,
            ]);
        }
    }
    out
}

/// RGBA8 pixels as little-endian RGB565 (channels rounded to nearest, as the rasterizer's
/// [`Rgb565`] packs them; alpha dropped).
#[must_use]
pub fn to_rgb565(rgba: &[u8]) -> Vec<u8> {
    rgba.chunks_exact(4).flat_map(|p| Rgb565::pack(Rgb::new(p[0], p[1], p[2])).to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fitting_keeps_the_aspect_and_never_enlarges() {
        assert_eq!(fit_within(1024, 1024, 256), (256, 256));
        assert_eq!(fit_within(1000, 100, 256), (256, 26));
        assert_eq!(fit_within(100, 1000, 64), (6, 64));
        assert_eq!(fit_within(30, 20, 256), (30, 20));
        assert_eq!(fit_within(4000, 1, 16), (16, 1));
    }

    #[test]
    fn downscaling_averages_in_linear_light() {
        // A 2 × 1 black and white image to 1 × 1: half the light, which is sRGB 188, not 128.
        let img = [0, 0, 0, 255, 255, 255, 255, 255];
        assert_eq!(resize_rgba(&img, 2, 1, 1, 1), [188, 188, 188, 255]);
        // A uniform image stays uniform at any size.
        let flat: Vec<u8> = [40u8, 90, 200, 255].repeat(7 * 5);
        let out = resize_rgba(&flat, 7, 5, 3, 2);
        assert!(out.chunks_exact(4).all(|p| p == [40, 90, 200, 255]), "{out:?}");
        let up = resize_rgba(&flat, 7, 5, 16, 8);
        assert_eq!(up.len(), 16 * 8 * 4);
        assert!(up.chunks_exact(4).all(|p| p == [40, 90, 200, 255]));
        // Same size is a copy.
        assert_eq!(resize_rgba(&img, 2, 1, 2, 1), img);
    }

    #[test]
    fn rgb565_rounds_each_channel() {
        assert_eq!(to_rgb565(&[255, 255, 255, 0, 0, 0, 0, 9]), [0xff, 0xff, 0, 0]);
        assert_eq!(to_rgb565(&[255, 0, 0, 255]), 0xf800u16.to_le_bytes());
    }
}
