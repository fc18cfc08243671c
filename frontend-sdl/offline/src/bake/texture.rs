//! Textures and materials: the images the rig's materials use, fitted within
//! [`BakeOptions::texture_size`] (area-averaged in linear light) and stored in
//! [`BakeOptions::texture_format`], and each part's material bytes.

use std::collections::HashMap;

use sinew::asset::format::*;
use sinew::raster::{TexelFormat, Wrap};

use super::{BakeError, BakeOptions};
use crate::material::{fit_within, resize_rgba, to_rgb565, FilterMode};
use crate::rig::{Rig, RigPrimitive};

/// A texture section as written.
pub(super) struct EncTexture {
    pub(super) name: String,
    pub(super) format: u8,
    pub(super) width: u16,
    pub(super) height: u16,
    pub(super) texels: Vec<u8>,
}

/// What baking one texture gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextureReport {
    /// Image name.
    pub name: String,
    /// Size of the source image.
    pub source: (u32, u32),
    /// Size baked.
    pub baked: (u32, u32),
    /// Texel format baked.
    pub format: TexelFormat,
}

/// What [`bake_textures`] gives: the texture sections, the map from rig image to texture
/// index, and a report per texture.
pub(super) type BakedTextures = (Vec<EncTexture>, HashMap<usize, u16>, Vec<TextureReport>);

/// The textures of every image a primitive's material uses, in first-use order, and the map
/// from rig image to texture index.
pub(super) fn bake_textures(rig: &Rig, opts: &BakeOptions) -> Result<BakedTextures, BakeError> {
    let mut out = Vec::new();
    let mut map = HashMap::new();
    let mut reports = Vec::new();
    let used = rig.meshes.iter().flat_map(|m| &m.primitives).filter_map(|p| p.material);
    for m in used {
        let material =
            rig.materials.get(m).ok_or_else(|| BakeError::Invalid(format!("material {m} does not exist")))?;
        let Some(t) = material.texture else { continue };
        if map.contains_key(&t.image) {
            continue;
        }
        let img =
            rig.images.get(t.image).ok_or_else(|| BakeError::Invalid(format!("image {} does not exist", t.image)))?;
        if img.width == 0 || img.height == 0 || img.rgba.len() != img.width as usize * img.height as usize * 4 {
            return Err(BakeError::Invalid(format!(
                "image '{}' does not hold {}×{} RGBA pixels",
                img.name, img.width, img.height
            )));
        }
        let (w, h) = fit_within(img.width, img.height, opts.texture_size);
        let rgba = resize_rgba(&img.rgba, img.width, img.height, w, h);
        let (format, texels) = match opts.texture_format {
            TexelFormat::Rgba8 => (TEXEL_RGBA8, rgba),
            TexelFormat::Rgb565 => (TEXEL_RGB565, to_rgb565(&rgba)),
        };
        // `NONE` (0xFFFF) marks an untextured part, so the last usable index is 0xFFFE.
        let index = u16::try_from(out.len())
            .ok()
            .filter(|&i| i != NONE)
            .ok_or_else(|| BakeError::Invalid(format!("more than {NONE} textures")))?;
        map.insert(t.image, index);
        reports.push(TextureReport {
            name: img.name.clone(),
            source: (img.width, img.height),
            baked: (w, h),
            format: opts.texture_format,
        });
        out.push(EncTexture { name: img.name.clone(), format, width: w as u16, height: h as u16, texels });
    }
    Ok((out, map, reports))
}

fn wrap_code(w: Wrap) -> u8 {
    match w {
        Wrap::Repeat => WRAP_REPEAT,
        Wrap::ClampToEdge => WRAP_CLAMP,
        Wrap::MirroredRepeat => WRAP_MIRROR,
    }
}

fn filter_code(f: FilterMode) -> u8 {
    match f {
        FilterMode::Nearest => FILTER_NEAREST,
        FilterMode::Linear => FILTER_LINEAR,
        FilterMode::NearestMipmapNearest => FILTER_NEAREST_MIPMAP_NEAREST,
        FilterMode::LinearMipmapNearest => FILTER_LINEAR_MIPMAP_NEAREST,
        FilterMode::NearestMipmapLinear => FILTER_NEAREST_MIPMAP_LINEAR,
        FilterMode::LinearMipmapLinear => FILTER_LINEAR_MIPMAP_LINEAR,
    }
}

/// A linear 0..1 value × 255, rounded.
fn unorm8(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8
}

/// The material bytes of primitive `p`: its base color, its texture (when it has texture
/// coordinates) and sampler, and the vertex-color flag (when it has vertex colors).
pub(super) fn material_bytes(rig: &Rig, p: &RigPrimitive, textures: &HashMap<usize, u16>) -> [u8; MATERIAL_LEN] {
    let material = p.material.and_then(|m| rig.materials.get(m));
    let texture = material.and_then(|m| m.texture).filter(|_| p.texcoords.is_some());
    let index = texture.and_then(|t| textures.get(&t.image)).copied().unwrap_or(NONE);
    let s = texture.map(|t| t.sampler).unwrap_or_default();
    let c = p.color.map(unorm8);
    let flags = if p.colors.is_some() { MATERIAL_VERTEX_COLORS } else { 0 };
    let i = index.to_le_bytes();
    let mag = if s.mag_filter == FilterMode::Nearest { FILTER_NEAREST } else { FILTER_LINEAR };
    [
        c[0],
        c[1],
        c[2],
        c[3],
        i[0],
        i[1],
        wrap_code(s.wrap_s),
        wrap_code(s.wrap_t),
        mag,
        filter_code(s.min_filter),
        flags,
        0,
    ]
}

/// Vertex colors as written (linear RGBA × 255).
pub(super) fn colors_u8(colors: &[[f32; 4]]) -> Vec<[u8; 4]> {
    colors.iter().map(|c| c.map(unorm8)).collect()
}
