//! Materials and images: a material's base color (factor and weight, from the sRGB values FBX
//! stores to linear) and its diffuse texture, whose image is the texture's embedded content or a
//! file beside the `.fbx`, decoded by the glTF importer's decoders (PNG, JPEG, WebP) within their
//! limits. A texture that cannot be found or decoded leaves the material untextured, with a note.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use sinew::raster::Wrap;
use ufbx::{Material, Texture, TextureType, WrapMode};

use super::error::FbxError;
use super::scene::Importer;
use crate::import::names::or_fallback;
use crate::material::{RigImage, RigMaterial, RigSampler, RigTexture};

/// The materials and images of one import, each converted once.
#[derive(Debug, Default)]
pub(super) struct Surfaces {
    /// [`Rig::materials`](crate::rig::Rig::materials).
    pub(super) materials: Vec<RigMaterial>,
    /// [`Rig::images`](crate::rig::Rig::images).
    pub(super) images: Vec<RigImage>,
    /// Base color and rig material of each ufbx material (by typed id).
    material_map: HashMap<u32, ([f32; 4], usize)>,
    /// Rig image of each ufbx texture (by typed id); `None` when it could not be read.
    image_map: HashMap<u32, Option<usize>>,
}

/// An sRGB-encoded value in `0..=1` to linear light.
fn srgb_to_linear(c: f64) -> f64 {
    let c = c.clamp(0.0, 1.0);
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

fn wrap(m: WrapMode) -> Wrap {
    match m {
        WrapMode::Repeat => Wrap::Repeat,
        WrapMode::Clamp => Wrap::ClampToEdge,
    }
}

/// The image formats the glTF decoders read, by their first bytes: the media type, or `None`.
fn media_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        Some("image/webp")
    } else {
        None
    }
}

/// A GLB of one triangle whose material's base-color texture is `image` (of media type `mime`):
/// how the glTF importer's image decoders, with their size and memory limits, are reached.
fn image_glb(image: &[u8], mime: &str) -> Vec<u8> {
    let mut bin: Vec<u8> = Vec::with_capacity(60 + image.len() + 3);
    for v in [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0] {
        bin.extend_from_slice(&v.to_le_bytes());
    }
    bin.extend_from_slice(image);
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let mut json = format!(
        concat!(
            r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],"#,
            r#""meshes":[{{"primitives":[{{"attributes":{{"POSITION":0,"TEXCOORD_0":1}},"material":0}}]}}],"#,
            r#""materials":[{{"pbrMetallicRoughness":{{"baseColorTexture":{{"index":0}}}}}}],"#,
            r#""textures":[{{"source":0}}],"images":[{{"bufferView":2,"mimeType":"{}"}}],"#,
            r#""accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}},"#,
            r#"{{"bufferView":1,"componentType":5126,"count":3,"type":"VEC2"}}],"#,
            r#""bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":36}},{{"buffer":0,"byteOffset":36,"byteLength":24}},"#,
            r#"{{"buffer":0,"byteOffset":60,"byteLength":{}}}],"buffers":[{{"byteLength":{}}}]}}"#
        ),
        mime,
        image.len(),
        bin.len()
    )
    .into_bytes();
    while !json.len().is_multiple_of(4) {
        json.push(b' ');
    }
    let total = 12 + 8 + json.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&u32::try_from(total).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(&u32::try_from(json.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    out.extend_from_slice(&u32::try_from(bin.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}

/// `name` (a path as the file stores it, `/` or `\` separated) below `base`, when it is
/// relative and stays below it.
fn below(base: &Path, name: &str) -> Option<PathBuf> {
    let rel = PathBuf::from(name.replace('\\', "/"));
    let plain =
        !rel.as_os_str().is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    plain.then(|| base.join(rel))
}

/// The last component of a path as the file stores it (`/` or `\` separated).
fn file_name(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

impl Importer<'_> {
    /// The base color and rig material of `m`, converted on first use.
    pub(super) fn material(&mut self, m: &Material) -> Result<([f32; 4], Option<usize>), FbxError> {
        if let Some(&(color, i)) = self.surfaces.material_map.get(&m.element.typed_id) {
            return Ok((color, Some(i)));
        }
        let name = or_fallback(Some(&m.element.name), || format!("material{}", m.element.typed_id));
        let base = m.pbr.base_color.value_vec4;
        let factor = if m.pbr.base_factor.has_value { m.pbr.base_factor.value_vec4.x } else { 1.0 };
        let alpha = if m.pbr.opacity.has_value { m.pbr.opacity.value_vec4.x } else { 1.0 };
        let raw = [base.x, base.y, base.z, factor, alpha];
        if !raw.iter().all(|v| v.is_finite()) {
            return Err(FbxError::NonFinite { what: format!("the base color of material {name:?}") });
        }
        let color = [
            (srgb_to_linear(base.x) * factor) as f32,
            (srgb_to_linear(base.y) * factor) as f32,
            (srgb_to_linear(base.z) * factor) as f32,
            alpha.clamp(0.0, 1.0) as f32,
        ];
        let texture = m.pbr.base_color.texture.as_ref().or(m.fbx.diffuse_color.texture.as_ref()).map(|t| &**t);
        let texture = texture.and_then(|t| match t.type_ {
            TextureType::File => Some(t),
            _ => t.file_textures.as_ref().first().map(|f| &**f),
        });
        let texture = match texture {
            Some(t) => self.image(t, &name).map(|image| RigTexture {
                image,
                sampler: RigSampler { wrap_s: wrap(t.wrap_u), wrap_t: wrap(t.wrap_v), ..RigSampler::default() },
            }),
            None => None,
        };
        let i = self.surfaces.materials.len();
        self.surfaces.materials.push(RigMaterial { name, base_color: color, texture });
        self.surfaces.material_map.insert(m.element.typed_id, (color, i));
        Ok((color, Some(i)))
    }

    /// The rig image of texture `t` (of material `material`), read and decoded on first use;
    /// `None`, with a note, when it is not found or does not decode.
    fn image(&mut self, t: &Texture, material: &str) -> Option<usize> {
        if let Some(&i) = self.surfaces.image_map.get(&t.element.typed_id) {
            return i;
        }
        let label =
            or_fallback(Some(&t.element.name), || or_fallback(Some(file_name(&t.filename)), || "texture".into()));
        let result = self.read_image(t).and_then(|(name, bytes)| {
            let mime = media_type(&bytes).ok_or_else(|| "not a PNG, JPEG or WebP image".to_owned())?;
            let rig =
                crate::import::gltf::load_bytes(&image_glb(&bytes, mime), None, "image").map_err(|e| e.to_string())?;
            let image = rig.images.into_iter().next().ok_or_else(|| "the image did not decode".to_owned())?;
            Ok(RigImage { name, ..image })
        });
        let index = match result {
            Ok(image) => {
                self.surfaces.images.push(image);
                Some(self.surfaces.images.len() - 1)
            }
            Err(why) => {
                self.notes.push(format!("material {material:?}: texture {label:?} left out: {why}"));
                None
            }
        };
        self.surfaces.image_map.insert(t.element.typed_id, index);
        index
    }

    /// The image bytes of texture `t` and a name for them: the embedded content (of the texture
    /// or its video), or the file beside the `.fbx` at the texture's relative path or with its
    /// file name.
    fn read_image(&self, t: &Texture) -> Result<(String, Vec<u8>), String> {
        let name = or_fallback(Some(file_name(&t.filename)), || or_fallback(Some(&t.element.name), || "image".into()));
        let video = t.video.as_ref();
        for content in [Some(&t.content), video.map(|v| &v.content)].into_iter().flatten() {
            if content.size > 0 {
                return Ok((name, content.to_vec()));
            }
        }
        let Some(base) = self.base_dir else {
            return Err(format!("{:?} is not embedded and no folder was given to look for it", &*t.filename));
        };
        let mut candidates = Vec::new();
        for n in [&*t.relative_filename, video.map_or("", |v| &v.relative_filename)] {
            candidates.extend(below(base, n));
        }
        for n in [&*t.filename, &*t.relative_filename, &*t.absolute_filename] {
            candidates.extend(below(base, file_name(n)));
        }
        for path in &candidates {
            let Ok(meta) = std::fs::metadata(path) else { continue };
            if !meta.is_file() {
                continue;
            }
            if meta.len() > self.memory as u64 {
                return Err(format!("{} is larger than {} bytes", path.display(), self.memory));
            }
            return std::fs::read(path).map(|b| (name.clone(), b)).map_err(|e| format!("{}: {e}", path.display()));
        }
        Err(format!("{:?} was not found in {}", &*t.filename, base.display()))
    }
}
