//! Materials and images: a primitive's material (base-color factor, base-color texture with its
//! `texCoord` set and sampler), its texture coordinates and vertex colors (`COLOR_0`), and the
//! images its texture reads, fetched (GLB buffer view, `data:` URI, relative file) and decoded
//! (PNG, JPEG, WebP) within limits: [`MAX_IMAGE_DIMENSION`] per side, and the decoded RGBA8 bytes
//! counted in the import's decoding budget.
//!
//! A texture's image is its `EXT_texture_webp` image when it has one, otherwise its `source`.
//! A `KHR_texture_basisu` (KTX2) image is not decoded: the texture reads its `source` (the
//! fallback PNG or JPEG) with a note, or, without one, the material is drawn untextured with a
//! note. A file that requires `KHR_texture_basisu` is refused by name (see `container`).

use std::collections::HashMap;
use std::path::Path;

use gltf::accessor::{DataType, Dimensions};
use gltf::mesh::Semantic;
use gltf::texture::{MagFilter, MinFilter, WrappingMode};
use sinew::raster::Wrap;

use super::accessors::{check_finite, Importer};
use super::container::fetch;
use super::error::{short, GltfError};
use super::meshes::DEFAULT_COLOR;
use crate::import::names::or_fallback;
use crate::material::{FilterMode, RigImage, RigMaterial, RigSampler, RigTexture};

/// Largest width or height of an image the importer decodes, in pixels. Larger images are
/// refused ([`GltfError::ImageTooLarge`]) before their pixels are decoded; the baker scales
/// textures down further (`--texture-size`, at most 4096).
pub const MAX_IMAGE_DIMENSION: u32 = 8192;

/// Accessor element types of texture coordinates (glTF 2.0: float, normalized unsigned byte and
/// short; `KHR_mesh_quantization` adds signed ones and integers that are not normalized) and
/// vertex colors.
const TEXCOORDS: &[(DataType, Dimensions)] = &[
    (DataType::F32, Dimensions::Vec2),
    (DataType::U8, Dimensions::Vec2),
    (DataType::U16, Dimensions::Vec2),
    (DataType::I8, Dimensions::Vec2),
    (DataType::I16, Dimensions::Vec2),
];
/// The WebP texture extension: its `source` image is read in preference to the texture's own.
pub(super) const EXT_TEXTURE_WEBP: &str = "EXT_texture_webp";
/// The KTX2 / Basis Universal texture extension: not decoded, the texture's `source` is the
/// fallback.
const KHR_TEXTURE_BASISU: &str = "KHR_texture_basisu";

/// Media types an image's `data:` URI may have.
const IMAGE_MEDIA: &[&str] = &["image/png", "image/jpeg", "image/webp"];

const COLORS: &[(DataType, Dimensions)] = &[
    (DataType::F32, Dimensions::Vec3),
    (DataType::F32, Dimensions::Vec4),
    (DataType::U8, Dimensions::Vec3),
    (DataType::U8, Dimensions::Vec4),
    (DataType::U16, Dimensions::Vec3),
    (DataType::U16, Dimensions::Vec4),
];

/// The materials and images of one import, each converted once.
#[derive(Debug, Default)]
pub(super) struct Surfaces {
    /// Where relative image files are looked up.
    pub(super) base_dir: Option<std::path::PathBuf>,
    pub(super) materials: Vec<RigMaterial>,
    pub(super) images: Vec<RigImage>,
    /// glTF material index → index in `materials`.
    material_map: HashMap<usize, usize>,
    /// glTF image index → index in `images`.
    image_map: HashMap<usize, usize>,
}

impl Surfaces {
    /// No materials yet; relative image files are read from `base_dir`.
    pub(super) fn new(base_dir: Option<&Path>) -> Self {
        Surfaces { base_dir: base_dir.map(Path::to_path_buf), ..Surfaces::default() }
    }
}

/// What a primitive's surface needs: base color, material index, texture coordinates and
/// vertex colors.
pub(super) struct Surface {
    pub(super) color: [f32; 4],
    pub(super) material: Option<usize>,
    pub(super) texcoords: Option<Vec<[f32; 2]>>,
    pub(super) colors: Option<Vec<[f32; 4]>>,
}

fn wrap(m: WrappingMode) -> Wrap {
    match m {
        WrappingMode::ClampToEdge => Wrap::ClampToEdge,
        WrappingMode::MirroredRepeat => Wrap::MirroredRepeat,
        WrappingMode::Repeat => Wrap::Repeat,
    }
}

fn sampler_of(s: &gltf::texture::Sampler<'_>) -> RigSampler {
    let mag = match s.mag_filter() {
        Some(MagFilter::Nearest) => FilterMode::Nearest,
        _ => FilterMode::Linear,
    };
    let min = match s.min_filter() {
        Some(MinFilter::Nearest) => FilterMode::Nearest,
        Some(MinFilter::Linear) | None => FilterMode::Linear,
        Some(MinFilter::NearestMipmapNearest) => FilterMode::NearestMipmapNearest,
        Some(MinFilter::LinearMipmapNearest) => FilterMode::LinearMipmapNearest,
        Some(MinFilter::NearestMipmapLinear) => FilterMode::NearestMipmapLinear,
        Some(MinFilter::LinearMipmapLinear) => FilterMode::LinearMipmapLinear,
    };
    RigSampler { wrap_s: wrap(s.wrap_s()), wrap_t: wrap(s.wrap_t()), mag_filter: mag, min_filter: min }
}

impl Importer<'_> {
    /// The surface of primitive `prim` (`label` names it, `n` is its vertex count): its
    /// material (converted on first use, with its texture's image decoded), the texture
    /// coordinates that texture reads and the vertex colors.
    pub(super) fn surface(&mut self, label: &str, prim: &gltf::Primitive<'_>, n: usize) -> Result<Surface, GltfError> {
        let reader = prim.reader(self.data());
        let colors = match prim.get(&Semantic::Colors(0)) {
            None => None,
            Some(acc) => {
                let what = format!("{label} COLOR_0");
                self.check_count(self.check_accessor(&acc, &what, COLORS)?, n, &what)?;
                if acc.data_type() != DataType::F32 && !acc.normalized() {
                    return Err(GltfError::AccessorType {
                        accessor: acc.index(),
                        usage: what,
                        found: format!("{:?} of {:?}, not normalized", acc.dimensions(), acc.data_type()),
                    });
                }
                let v = self.collect(reader.read_colors(0).map(|c| c.into_rgba_f32()), acc.index(), n)?;
                check_finite(v.iter().flatten(), || what.clone())?;
                Some(v.into_iter().map(|c| c.map(|x| x.clamp(0.0, 1.0))).collect())
            }
        };
        let material = prim.material();
        let Some(index) = material.index() else {
            return Ok(Surface { color: DEFAULT_COLOR, material: None, texcoords: None, colors });
        };
        let color = material.pbr_metallic_roughness().base_color_factor();
        if !color.iter().all(|v| v.is_finite()) {
            return Err(GltfError::NonFinite { what: format!("{label} material base color") });
        }
        let info = material.pbr_metallic_roughness().base_color_texture();
        let texcoords = match &info {
            None => None,
            Some(info) => {
                let transform = info.texture_transform();
                let set = transform.as_ref().and_then(|t| t.tex_coord()).unwrap_or_else(|| info.tex_coord());
                let what = format!("{label} TEXCOORD_{set}");
                let acc = prim
                    .get(&Semantic::TexCoords(set))
                    .ok_or_else(|| GltfError::MissingAttribute { what: what.clone() })?;
                self.check_count(self.check_accessor(&acc, &what, TEXCOORDS)?, n, &what)?;
                let mut v = self.read_floats::<2>(&acc, n, &what, false)?;
                if let Some(t) = transform {
                    let (offset, rotation, scale) = (t.offset(), t.rotation(), t.scale());
                    check_finite(offset.iter().chain(&scale).chain([&rotation]), || {
                        format!("{label} material {:?} KHR_texture_transform", material.index())
                    })?;
                    apply_texture_transform(&mut v, offset, rotation, scale);
                }
                check_finite(v.iter().flatten(), || what.clone())?;
                Some(v)
            }
        };
        if let Some(&m) = self.surfaces.material_map.get(&index) {
            return Ok(Surface { color, material: Some(m), texcoords, colors });
        }
        if material.alpha_mode() != gltf::material::AlphaMode::Opaque {
            self.notes.push(format!("material {index}: alpha mode {:?} drawn opaque", material.alpha_mode()));
        }
        let texture = match info {
            None => None,
            Some(info) => {
                let t = info.texture();
                match self.texture_image(&t)? {
                    Some(source) => {
                        let image = self.image(source)?;
                        Some(RigTexture { image, sampler: sampler_of(&t.sampler()) })
                    }
                    None => None,
                }
            }
        };
        let name = or_fallback(material.name(), || format!("material{index}"));
        let m = self.surfaces.materials.len();
        self.surfaces.materials.push(RigMaterial { name, base_color: color, texture });
        self.surfaces.material_map.insert(index, m);
        Ok(Surface { color, material: Some(m), texcoords, colors })
    }

    /// The glTF image texture `t` reads: its `EXT_texture_webp` image, else its `source`; `None`
    /// (with a note) when it has neither, as when its only image is a `KHR_texture_basisu` one.
    fn texture_image(&mut self, t: &gltf::Texture<'_>) -> Result<Option<usize>, GltfError> {
        let index = t.index();
        if let Some(ext) = t.extension_value(EXT_TEXTURE_WEBP) {
            let path = format!("textures[{index}].extensions.{EXT_TEXTURE_WEBP}.source");
            let source = ext.get("source").ok_or_else(|| GltfError::Schema(format!("{path}: missing")))?;
            let image = source
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .filter(|&i| i < self.doc.images().len())
                .ok_or_else(|| GltfError::Schema(format!("{path}: {source} is not an image index")))?;
            return Ok(Some(image));
        }
        let basisu = t.extension_value(KHR_TEXTURE_BASISU).is_some();
        match t.source() {
            Some(image) => {
                if basisu {
                    self.notes.push(format!(
                        "texture {index}: its {KHR_TEXTURE_BASISU} (KTX2) image is not decoded; its fallback image {} is used",
                        image.index()
                    ));
                }
                Ok(Some(image.index()))
            }
            None => {
                self.notes.push(if basisu {
                    format!(
                        "texture {index}: its only image is a {KHR_TEXTURE_BASISU} (KTX2) one, which sinew does not decode; drawn untextured"
                    )
                } else {
                    format!("texture {index} has no image; drawn untextured")
                });
                Ok(None)
            }
        }
    }

    /// Rig image of glTF image `index`, fetched and decoded on first use.
    fn image(&mut self, index: usize) -> Result<usize, GltfError> {
        if let Some(&i) = self.surfaces.image_map.get(&index) {
            return Ok(i);
        }
        let json = self
            .doc
            .as_json()
            .images
            .get(index)
            .ok_or_else(|| GltfError::BadImage { image: index, detail: "does not exist".into() })?;
        let unavailable = |reason: String| GltfError::ImageUnavailable { image: index, reason };
        let declared = json.mime_type.as_ref().map(|m| m.0.clone());
        let bytes = match (&json.buffer_view, &json.uri) {
            (Some(view), _) => {
                let view = self
                    .doc
                    .views()
                    .nth(view.value())
                    .ok_or_else(|| unavailable(format!("buffer view {} does not exist", view.value())))?;
                let buffer = self.buffers.get(view.buffer().index()).map_or(&[][..], Vec::as_slice);
                let end = view.offset().checked_add(view.length());
                let data = end.and_then(|end| buffer.get(view.offset()..end)).ok_or_else(|| {
                    unavailable(format!("buffer view {} exceeds buffer {}", view.index(), view.buffer().index()))
                })?;
                data.to_vec()
            }
            (None, Some(uri)) => fetch(uri, self.surfaces.base_dir.as_deref(), IMAGE_MEDIA, unavailable)?,
            (None, None) => return Err(unavailable("has neither a URI nor a buffer view".into())),
        };
        let name = json
            .name
            .clone()
            .or_else(|| {
                json.uri
                    .as_ref()
                    .filter(|u| !u.starts_with("data:"))
                    .and_then(|u| u.rsplit('/').next().map(|s| short(s).into_owned()))
            })
            .unwrap_or_else(|| format!("image{index}"));
        let left = self.budget.saturating_sub(self.decoded);
        let (width, height, rgba) = decode(index, &bytes, declared.as_deref(), left)?;
        self.decoded = self.decoded.saturating_add(rgba.len());
        let i = self.surfaces.images.len();
        self.surfaces.images.push(RigImage { name, width, height, rgba });
        self.surfaces.image_map.insert(index, i);
        Ok(i)
    }
}

/// The kinds of image this importer decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Png,
    Jpeg,
    WebP,
}

/// Decodes image `image` (`bytes`, declared media type `mime`) to RGBA8 with at most `budget`
/// decoded bytes: `(width, height, pixels)`.
fn decode(image: usize, bytes: &[u8], mime: Option<&str>, budget: usize) -> Result<(u32, u32, Vec<u8>), GltfError> {
    let sniffed = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(Kind::Png)
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(Kind::Jpeg)
    } else if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        Some(Kind::WebP)
    } else {
        None
    };
    let kind = match mime.map(str::to_ascii_lowercase).as_deref() {
        Some("image/png") => Kind::Png,
        Some("image/jpeg") => Kind::Jpeg,
        Some("image/webp") => Kind::WebP,
        Some(other) => return Err(GltfError::UnsupportedImage { image, mime: short(other).into_owned() }),
        None => sniffed
            .ok_or_else(|| GltfError::UnsupportedImage { image, mime: "unknown (not PNG, JPEG or WebP)".into() })?,
    };
    if sniffed != Some(kind) {
        return Err(GltfError::BadImage { image, detail: format!("the data is not a {kind:?} file") });
    }
    let check = |w: u32, h: u32| -> Result<usize, GltfError> {
        if w == 0 || h == 0 || w > MAX_IMAGE_DIMENSION || h > MAX_IMAGE_DIMENSION {
            return Err(GltfError::ImageTooLarge { image, width: w, height: h, limit: MAX_IMAGE_DIMENSION });
        }
        let len = w as usize * h as usize * 4;
        if len > budget {
            return Err(GltfError::ImageOverBudget { image, bytes: len, budget });
        }
        Ok(len)
    };
    let bad = |detail: String| GltfError::BadImage { image, detail };
    // The decoders are fuzzed; a panic in one still only fails this import.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match kind {
        Kind::Png => decode_png(bytes, budget, &check, &bad),
        Kind::Jpeg => decode_jpeg(bytes, &check, &bad),
        Kind::WebP => decode_webp(bytes, budget, &check, &bad),
    }));
    run.unwrap_or_else(|_| Err(bad("the decoder failed".into())))
}

type Check<'a> = &'a dyn Fn(u32, u32) -> Result<usize, GltfError>;
type Bad<'a> = &'a dyn Fn(String) -> GltfError;

fn decode_png(bytes: &[u8], budget: usize, check: Check<'_>, bad: Bad<'_>) -> Result<(u32, u32, Vec<u8>), GltfError> {
    let limits = png::Limits { bytes: budget.max(1 << 20) };
    let mut decoder = png::Decoder::new_with_limits(std::io::Cursor::new(bytes), limits);
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    // The size is checked from the header, before anything else is read.
    let header = decoder.read_header_info().map_err(|e| bad(e.to_string()))?;
    let (w, h) = (header.width, header.height);
    check(w, h)?;
    let mut reader = decoder.read_info().map_err(|e| bad(e.to_string()))?;
    let size = reader.output_buffer_size().ok_or_else(|| bad("the image is too large to decode".into()))?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| bad(e.to_string()))?;
    let n = w as usize * h as usize;
    let rgba = match info.color_type {
        png::ColorType::Rgba => buf.get(..n * 4).map(<[u8]>::to_vec),
        png::ColorType::Rgb => {
            buf.get(..n * 3).map(|b| b.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect())
        }
        png::ColorType::Grayscale => buf.get(..n).map(|b| b.iter().flat_map(|&g| [g, g, g, 255]).collect()),
        png::ColorType::GrayscaleAlpha => {
            buf.get(..n * 2).map(|b| b.chunks_exact(2).flat_map(|p| [p[0], p[0], p[0], p[1]]).collect())
        }
        png::ColorType::Indexed => None,
    };
    let rgba = rgba.ok_or_else(|| bad(format!("unexpected decoded layout {:?}", info.color_type)))?;
    Ok((w, h, rgba))
}

fn decode_jpeg(bytes: &[u8], check: Check<'_>, bad: Bad<'_>) -> Result<(u32, u32, Vec<u8>), GltfError> {
    use zune_jpeg::zune_core::bytestream::ZCursor;
    use zune_jpeg::zune_core::colorspace::ColorSpace;
    use zune_jpeg::zune_core::options::DecoderOptions;
    // Any size JPEG can state passes the header (sizes are u16); `check` applies the limit.
    let options = DecoderOptions::default()
        .set_max_width(usize::from(u16::MAX))
        .set_max_height(usize::from(u16::MAX))
        .jpeg_set_out_colorspace(ColorSpace::RGBA)
        // A truncated or corrupt stream is an error, not a partly gray image.
        .set_strict_mode(true);
    let mut decoder = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(bytes), options);
    decoder.decode_headers().map_err(|e| bad(format!("{e:?}")))?;
    let info = decoder.info().ok_or_else(|| bad("no frame header".into()))?;
    let (w, h) = (u32::from(info.width), u32::from(info.height));
    let len = check(w, h)?;
    let mut out = vec![0u8; len];
    decoder.decode_into(&mut out).map_err(|e| bad(format!("{e:?}")))?;
    Ok((w, h, out))
}

/// WebP, lossy (VP8) or lossless (VP8L), with or without alpha; an animated file gives its first
/// frame. The size is checked from the header before any pixel is decoded.
fn decode_webp(bytes: &[u8], budget: usize, check: Check<'_>, bad: Bad<'_>) -> Result<(u32, u32, Vec<u8>), GltfError> {
    let mut decoder =
        image_webp::WebPDecoder::new(std::io::Cursor::new(bytes)).map_err(|e| bad(format!("WebP: {e}")))?;
    let (w, h) = decoder.dimensions();
    let len = check(w, h)?;
    decoder.set_memory_limit(budget.max(1 << 20));
    let size = decoder.output_buffer_size().ok_or_else(|| bad("the image is too large to decode".into()))?;
    let mut buf = vec![0u8; size];
    decoder.read_image(&mut buf).map_err(|e| bad(format!("WebP: {e}")))?;
    let rgba =
        if decoder.has_alpha() { buf } else { buf.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect() };
    if rgba.len() != len {
        return Err(bad(format!("decoded {} bytes, expected {len}", rgba.len())));
    }
    Ok((w, h, rgba))
}

/// `KHR_texture_transform` on texture coordinates: `uv' = T · R · S · uv` as the extension's
/// GLSL defines it (column-major `mat3(cos, sin, 0, -sin, cos, 0, 0, 0, 1)`), i.e. scaled, then
/// `(u cos r − v sin r, u sin r + v cos r)`, then offset. Computed in f64.
pub(super) fn apply_texture_transform(uv: &mut [[f32; 2]], offset: [f32; 2], rotation: f32, scale: [f32; 2]) {
    let (sin, cos) = f64::from(rotation).sin_cos();
    for c in uv {
        let (u, v) = (f64::from(c[0]) * f64::from(scale[0]), f64::from(c[1]) * f64::from(scale[1]));
        *c = [(u * cos - v * sin + f64::from(offset[0])) as f32, (u * sin + v * cos + f64::from(offset[1])) as f32];
    }
}
