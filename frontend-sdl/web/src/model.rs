//! A loaded `.sinew` file ([`WebModel`]): the bytes the page handed over, parsed in place and
//! kept for the model's life, its skeleton, its skins' bind data, its clips, its meshes as
//! [`DrawPart`]s for the page's palette budget, and the bind-pose bounds the viewer frames.

use std::ptr::NonNull;

use sinew::asset::format::{
    FILTER_LINEAR_MIPMAP_LINEAR, FILTER_LINEAR_MIPMAP_NEAREST, FILTER_NEAREST, FILTER_NEAREST_MIPMAP_LINEAR,
    FILTER_NEAREST_MIPMAP_NEAREST,
};
use sinew::asset::{Asset, ParseError};
use sinew::controller::ClipEntry;
use sinew::job::{LocalToModelJob, Palette, SkinMatrixJob, SkinningJob};
use sinew::math::{Mat4, Vec3};
use sinew::skeleton::{Skeleton, SkeletonError};

use crate::json::Json;
use crate::parts::{draw_parts, DrawPart};

/// Why a file could not be opened; the messages are the command line's.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadError {
    /// The bytes are not a valid `.sinew` file.
    Parse(ParseError),
    /// The file has no skeleton.
    NoSkeleton,
    /// The skeleton could not be built.
    Skeleton(SkeletonError),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Parse(e) => write!(f, "{e}"),
            LoadError::NoSkeleton => f.write_str("the file has no skeleton"),
            LoadError::Skeleton(e) => write!(f, "{e}"),
        }
    }
}

/// A skin's bind data, decoded once.
#[derive(Debug, Clone, Default)]
pub struct Skin {
    /// The skeleton joint of each skin joint.
    pub joints: Vec<u16>,
    /// The inverse bind matrix of each skin joint.
    pub inverse_bind: Vec<Mat4<f32>>,
}

/// The bind-pose bounds of the skinned meshes (the joints when there are none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Center of the box.
    pub center: Vec3<f32>,
    /// Half its diagonal.
    pub radius: f32,
    /// Its lowest point (the ground).
    pub floor: f32,
}

/// The most joints a model may have here, in fours: 256 joints. A skeleton's storage is
/// fixed, and starts as the module's initial data: the format's limit (1024) would put four
/// times the rest pose and names there.
pub const WEB_SOA_JOINTS: usize = 64;

/// The skeleton type models load into.
pub type WebSkeleton = Skeleton<f32, WEB_SOA_JOINTS>;

/// A loaded model. Its bytes are owned here and never move; the views below borrow them for
/// as long as the model lives.
pub struct WebModel {
    /// The parsed file, read in place.
    pub asset: Asset<'static>,
    /// The skeleton.
    pub skeleton: Box<WebSkeleton>,
    /// Skins by index.
    pub skins: Vec<Skin>,
    /// Every clip, in file order, as the controller and the graphs take them.
    pub clips: Vec<ClipEntry<'static, f32>>,
    /// Each mesh's draw parts.
    pub meshes: Vec<Vec<DrawPart>>,
    /// Joints per draw part's palette at most.
    pub palette: usize,
    /// Bind-pose bounds.
    pub bounds: Bounds,
    /// The owned bytes every `'static` view above points into; released in `drop`, after
    /// which nothing reads the views (they have no destructors).
    bytes: NonNull<[u8]>,
}

impl std::fmt::Debug for WebModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebModel")
            .field("bytes", &self.asset.bytes().len())
            .field("joints", &self.skeleton.num_joints())
            .field("clips", &self.clips.len())
            .finish_non_exhaustive()
    }
}

impl Drop for WebModel {
    fn drop(&mut self) {
        // SAFETY: `bytes` came from `Box::into_raw` in `open` and is released once, here; the
        // `'static` views into it are plain references dropped with the model right after.
        drop(unsafe { Box::from_raw(self.bytes.as_ptr()) });
    }
}

impl WebModel {
    /// Takes ownership of `bytes`, parses them in place (no copy) and prepares the meshes for
    /// palettes of at most `palette` joints.
    ///
    /// # Errors
    ///
    /// A [`LoadError`] for bytes that are not a `.sinew` file with a skeleton; `bytes` are
    /// dropped.
    pub fn open(bytes: Box<[u8]>, palette: usize) -> Result<WebModel, LoadError> {
        let raw = NonNull::from(Box::leak(bytes));
        // SAFETY: `raw` is the leaked box, alive until `release` below or the model's drop.
        let data: &'static [u8] = unsafe { raw.as_ref() };
        let release = || {
            // SAFETY: nothing borrowed from `data` outlives this error path.
            drop(unsafe { Box::from_raw(raw.as_ptr()) });
        };
        let built = Self::build(data, palette);
        match built {
            Ok((asset, skeleton, skins, clips, meshes)) => {
                let mut m =
                    WebModel { asset, skeleton, skins, clips, meshes, palette, bounds: Bounds::UNIT, bytes: raw };
                m.bounds = m.bind_bounds();
                Ok(m)
            }
            Err(e) => {
                release();
                Err(e)
            }
        }
    }

    #[allow(clippy::type_complexity)]
    // Out of line: a load-time or rarely used path, whose inlined copies only grow the module.
    #[inline(never)]
    fn build(
        data: &'static [u8],
        palette: usize,
    ) -> Result<
        (Asset<'static>, Box<WebSkeleton>, Vec<Skin>, Vec<ClipEntry<'static, f32>>, Vec<Vec<DrawPart>>),
        LoadError,
    > {
        // Without the state machines the graphs are only listed (`describe`): their sections'
        // layout is checked, and the graphs' module, which runs them, checks the rest.
        #[cfg(feature = "graph")]
        let asset = Asset::parse(data);
        #[cfg(not(feature = "graph"))]
        let asset = Asset::parse_without_graph_rules(data);
        let asset = asset.map_err(LoadError::Parse)?;
        let sd = asset.skeleton().ok_or(LoadError::NoSkeleton)?;
        let skeleton = Box::new(sd.to_skeleton::<f32, WEB_SOA_JOINTS>().map_err(LoadError::Skeleton)?);
        let skins = (0..asset.num_skins())
            .filter_map(|i| asset.skin(i))
            .map(|s| Skin {
                joints: (0..s.num_joints()).map(|i| s.joint(i)).collect(),
                inverse_bind: (0..s.num_joints()).map(|i| s.inverse_bind(i)).collect(),
            })
            .collect();
        let clips = (0..asset.num_clips()).filter_map(|i| asset.clip(i)).map(ClipEntry::new).collect();
        let meshes = (0..asset.num_meshes())
            .map(|i| asset.mesh(i).map(|m| draw_parts(&m, palette)).unwrap_or_default())
            .collect();
        Ok((asset, skeleton, skins, clips, meshes))
    }

    /// Number of joints.
    #[must_use]
    pub fn num_joints(&self) -> usize {
        self.skeleton.num_joints()
    }

    /// The joints' model matrices in the rest pose.
    fn rest_model(&self) -> Vec<Mat4<f32>> {
        let mut model = vec![Mat4::IDENTITY; self.num_joints()];
        let _ = LocalToModelJob::new(self.skeleton.view(), self.skeleton.rest_pose(), &mut model).run();
        model
    }

    /// The bounds of every mesh skinned (linear blend) in the rest pose, as the desktop viewer
    /// frames them: the box of the skinned vertices, or of the joints without meshes.
    // Out of line: a load-time or rarely used path, whose inlined copies only grow the module.
    #[inline(never)]
    fn bind_bounds(&self) -> Bounds {
        let model = self.rest_model();
        let mut points: Vec<Vec3<f32>> = Vec::new();
        for mi in 0..self.asset.num_meshes() {
            let Some(mesh) = self.asset.mesh(mi) else { continue };
            let palette = match mesh.skin().and_then(|s| self.skins.get(s)) {
                Some(skin) => {
                    let mut out = vec![Mat4::IDENTITY; skin.inverse_bind.len()];
                    let job = SkinMatrixJob::new(&model, &skin.inverse_bind, &mut out).with_joints(&skin.joints).run();
                    if job.is_err() {
                        continue;
                    }
                    out
                }
                None => Vec::new(),
            };
            let node = mesh.node().and_then(|n| model.get(n)).copied().unwrap_or(Mat4::IDENTITY);
            for part in mesh.parts() {
                let n = part.num_vertices();
                let positions: Vec<Vec3<f32>> = (0..n).map(|v| part.position(v)).collect();
                let k = part.influences();
                if k == 0 {
                    points.extend(positions.iter().map(|&p| node.transform_point3(p)));
                    continue;
                }
                let joints: Vec<u16> = (0..n * k).map(|i| part.joint(i / k, i % k)).collect();
                let weights: Vec<f32> = (0..n * k).map(|i| part.weight(i / k, i % k)).collect();
                let local: Vec<Mat4<f32>> = (0..part.palette_len())
                    .map(|i| palette.get(part.palette(i) as usize).copied().unwrap_or(Mat4::IDENTITY))
                    .collect();
                let mut out = vec![Vec3::ZERO; n];
                let job = SkinningJob::new(Palette::Matrices(&local), k, &joints, &weights, &positions, &mut out).run();
                if job.is_ok() {
                    points.extend(out);
                }
            }
        }
        if points.is_empty() {
            points.extend(model.iter().map(Mat4::translation));
        }
        Bounds::of(&points)
    }

    /// The model's description for the JavaScript side: joints, skins, clips, graphs, meshes
    /// with their draw parts (addresses of their vertex and index data in this module's
    /// memory), textures (addresses of their texels), and the bounds.
    #[must_use]
    // Out of line: a load-time or rarely used path, whose inlined copies only grow the module.
    #[inline(never)]
    pub fn describe(&self) -> String {
        let mut j = Json::default();
        j.raw("{").key("joints").uint(self.num_joints()).raw(",").key("jointNames").raw("[");
        for i in 0..self.num_joints() {
            if i > 0 {
                j.raw(",");
            }
            j.string(self.skeleton.view().name(i).unwrap_or(""));
        }
        j.raw("],").key("palette").uint(self.palette).raw(",").key("skins").raw("[");
        for (i, s) in self.skins.iter().enumerate() {
            if i > 0 {
                j.raw(",");
            }
            j.raw("{").key("joints").uint(s.joints.len()).raw("}");
        }
        j.raw("],").key("clips").raw("[");
        for (i, c) in self.clips.iter().enumerate() {
            if i > 0 {
                j.raw(",");
            }
            j.raw("{").key("name").string(c.clip.name()).raw(",").key("start").float(c.clip.start());
            j.raw(",").key("end").float(c.clip.end()).raw("}");
        }
        j.raw("],").key("graphs").raw("[");
        crate::graph::describe_graphs(&self.asset, &mut j);
        j.raw("],").key("meshes").raw("[");
        for (mi, parts) in self.meshes.iter().enumerate() {
            let mesh = self.asset.mesh(mi);
            if mi > 0 {
                j.raw(",");
            }
            j.raw("{").key("name").string(mesh.map_or("", |m| m.name()));
            j.raw(",").key("skin").opt_uint(mesh.and_then(|m| m.skin()));
            j.raw(",").key("node").opt_uint(mesh.and_then(|m| m.node()));
            j.raw(",").key("morph").raw(if self.asset.morph_targets(mi).is_some() { "true" } else { "false" });
            j.raw(",").key("parts").raw("[");
            for (pi, p) in parts.iter().enumerate() {
                if pi > 0 {
                    j.raw(",");
                }
                let m = &p.material;
                j.raw("{").key("source").uint(p.source);
                j.raw(",").key("vertices").uint(p.vertices.as_ptr() as usize);
                j.raw(",").key("vertexCount").uint(p.num_vertices());
                j.raw(",").key("indices").uint(p.indices.as_ptr() as usize);
                j.raw(",").key("indexCount").uint(p.indices.len());
                j.raw(",").key("joints").uint(if p.is_rigid() { 1 } else { p.map.len() });
                j.raw(",").key("map").uint(p.map.as_ptr() as usize);
                j.raw(",").key("rigid").raw(if p.is_rigid() { "true" } else { "false" });
                let color = m.factor.map(|c| f32::from(c) / 255.0);
                j.raw(",").key("color").floats(&color);
                j.raw(",").key("texture").opt_uint(m.texture.filter(|_| p.textured));
                j.raw(",").key("wrapS").uint(wrap_code(m.wrap_s));
                j.raw(",").key("wrapT").uint(wrap_code(m.wrap_t));
                j.raw(",").key("mag").uint(mag_code(m.mag_filter)).raw(",").key("min").uint(min_code(m.min_filter));
                j.raw("}");
            }
            j.raw("]}");
        }
        j.raw("],").key("textures").raw("[");
        for i in 0..self.asset.num_textures() {
            if i > 0 {
                j.raw(",");
            }
            match self.asset.texture(i) {
                Some(t) => {
                    let tex = t.texture();
                    let format = match tex.format() {
                        sinew::raster::TexelFormat::Rgba8 => "rgba8",
                        sinew::raster::TexelFormat::Rgb565 => "rgb565",
                    };
                    j.raw("{").key("name").string(t.name()).raw(",").key("width").uint(tex.width() as usize);
                    j.raw(",").key("height").uint(tex.height() as usize).raw(",").key("format").string(format);
                    j.raw(",").key("texels").uint(tex.texels().as_ptr() as usize);
                    j.raw(",").key("length").uint(tex.texels().len()).raw("}");
                }
                None => {
                    j.raw("null");
                }
            }
        }
        let b = self.bounds;
        j.raw("],").key("bounds").raw("{").key("center").floats(&b.center.to_array());
        j.raw(",").key("radius").float(b.radius).raw(",").key("floor").float(b.floor).raw("}}");
        j.out
    }
}

/// The GL enum of a wrap mode.
fn wrap_code(w: sinew::raster::Wrap) -> usize {
    match w {
        sinew::raster::Wrap::Repeat => 0x2901,
        sinew::raster::Wrap::ClampToEdge => 0x812F,
        sinew::raster::Wrap::MirroredRepeat => 0x8370,
    }
}

/// The GL enum of a magnification filter code (`NEAREST` or `LINEAR`).
fn mag_code(code: u8) -> usize {
    if code == FILTER_NEAREST {
        0x2600
    } else {
        0x2601
    }
}

/// The GL enum of a minification filter code.
fn min_code(code: u8) -> usize {
    match code {
        FILTER_NEAREST => 0x2600,
        FILTER_NEAREST_MIPMAP_NEAREST => 0x2700,
        FILTER_LINEAR_MIPMAP_NEAREST => 0x2701,
        FILTER_NEAREST_MIPMAP_LINEAR => 0x2702,
        FILTER_LINEAR_MIPMAP_LINEAR => 0x2703,
        _ => 0x2601,
    }
}

impl Bounds {
    /// A unit sphere at the origin (no points).
    pub const UNIT: Bounds = Bounds { center: Vec3 { x: 0.0, y: 0.0, z: 0.0 }, radius: 1.0, floor: 0.0 };

    /// The box of the finite `points`.
    #[must_use]
    pub fn of(points: &[Vec3<f32>]) -> Bounds {
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for p in points.iter().filter(|p| p.is_finite()) {
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
        if lo.x <= hi.x {
            Bounds { center: (lo + hi) * 0.5, radius: ((hi - lo).length() * 0.5).max(1.0e-3), floor: lo.y }
        } else {
            Bounds::UNIT
        }
    }
}
