//! A loaded `.sinew` file ([`Model`]): the bytes, parsed in place and kept for the model's
//! life, its skeleton, its skins' bind data, its clips, its meshes as [`DrawPart`]s for a
//! palette budget, and the bind-pose bounds a viewer frames.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use core::ptr::NonNull;

use sinew::asset::{Asset, ParseError, PartBuffers, PartInputsLen};
use sinew::controller::ClipEntry;
use sinew::job::{Palette, SkinMatrixJob};
use sinew::math::{Mat4, Vec3};
use sinew::skeleton::{Skeleton, SkeletonError, SkeletonView};

#[cfg(feature = "springs")]
use crate::character::SpringSet;
use crate::limits::VERTEX_ATTRIBUTES;
use crate::parts::{draw_parts, DrawPart, FLOATS_PER_VERTEX};

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

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Parse(e) => write!(f, "{e}"),
            LoadError::NoSkeleton => f.write_str("the file has no skeleton"),
            LoadError::Skeleton(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for LoadError {}

/// A skin's bind data, decoded once.
#[derive(Debug, Clone, Default)]
pub struct Skin {
    /// The skeleton joint of each skin joint.
    pub joints: Vec<u16>,
    /// The inverse bind matrix of each skin joint.
    pub inverse_bind: Vec<Mat4<f32>>,
}

/// The bind-pose bounds of the skinned meshes (the joints when there are none): an
/// axis-aligned box, and the sphere and floor a viewer frames.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// The box's lowest corner.
    pub low: Vec3<f32>,
    /// The box's highest corner.
    pub high: Vec3<f32>,
    /// Center of the box.
    pub center: Vec3<f32>,
    /// Half its diagonal.
    pub radius: f32,
    /// Its lowest point (the ground).
    pub floor: f32,
}

/// A skeleton of any capacity, seen through its view.
trait SkeletonStore {
    fn view(&self) -> SkeletonView<'_, f32>;
}

impl<const SOA: usize> SkeletonStore for Skeleton<f32, SOA> {
    fn view(&self) -> SkeletonView<'_, f32> {
        Skeleton::view(self)
    }
}

/// A loaded model. Its bytes are owned here and never move; the views below borrow them for
/// as long as the model lives.
pub struct Model {
    /// The parsed file, read in place.
    pub asset: Asset<'static>,
    /// The skeleton, in storage of the capacity it was opened with.
    skeleton: Box<dyn SkeletonStore>,
    /// Skins by index.
    pub skins: Vec<Skin>,
    /// Every clip, in file order, as the controller and the graphs take them.
    pub clips: Vec<ClipEntry<'static, f32>>,
    /// Each mesh's draw parts (none for a model opened without a palette budget).
    pub meshes: Vec<Vec<DrawPart>>,
    /// Joints per draw part's palette at most (`None`: no draw parts).
    pub palette: Option<usize>,
    /// Bind-pose bounds.
    pub bounds: Bounds,
    /// The owned bytes every `'static` view above points into; released in `drop`, after
    /// which nothing reads the views (they have no destructors).
    bytes: NonNull<[u8]>,
}

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Model")
            .field("bytes", &self.asset.bytes().len())
            .field("joints", &self.num_joints())
            .field("clips", &self.clips.len())
            .finish_non_exhaustive()
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: `bytes` came from `Box::into_raw` in `open` and is released once, here; the
        // `'static` views into it are plain references dropped with the model right after.
        drop(unsafe { Box::from_raw(self.bytes.as_ptr()) });
    }
}

/// The parts of a model that borrow its bytes.
type Built = (Asset<'static>, Box<dyn SkeletonStore>, Vec<Skin>, Vec<ClipEntry<'static, f32>>, Vec<Vec<DrawPart>>);

impl Model {
    /// Takes ownership of `bytes`, parses them in place (no copy), builds the skeleton in
    /// storage of `SOA` SoA elements (`4 × SOA` joints at most) and prepares the meshes as draw
    /// parts for palettes of at most `palette` joints (`None`: no draw parts, for a front end
    /// that draws the file's own parts).
    ///
    /// # Errors
    ///
    /// A [`LoadError`] for bytes that are not a `.sinew` file with a skeleton; `bytes` are
    /// dropped.
    pub fn open<const SOA: usize>(bytes: Box<[u8]>, palette: Option<usize>) -> Result<Model, LoadError> {
        // Without the state machines the graphs are only listed (`describe`): their sections'
        // layout is checked, and the graphs' module, which runs them, checks the rest.
        #[cfg(feature = "graph")]
        let parse = Asset::parse;
        #[cfg(not(feature = "graph"))]
        let parse = Asset::parse_without_graph_rules;
        Self::open_with::<SOA>(bytes, palette, parse)
    }

    /// As [`Model::open`], the bytes parsed by `parse`: one of the core's parses, such as
    /// [`Asset::parse_for_playback`] for a runtime that evaluates no morph targets and runs no
    /// spring bones (which then must not be asked for: their sections are unchecked).
    ///
    /// # Errors
    ///
    /// As [`Model::open`], with `parse`'s refusals.
    pub fn open_with<const SOA: usize>(
        bytes: Box<[u8]>,
        palette: Option<usize>,
        parse: fn(&'static [u8]) -> Result<Asset<'static>, ParseError>,
    ) -> Result<Model, LoadError> {
        let raw = NonNull::from(Box::leak(bytes));
        // SAFETY: `raw` is the leaked box, alive until `release` below or the model's drop.
        let data: &'static [u8] = unsafe { raw.as_ref() };
        let release = || {
            // SAFETY: nothing borrowed from `data` outlives this error path.
            drop(unsafe { Box::from_raw(raw.as_ptr()) });
        };
        let built = Self::build::<SOA>(data, palette, parse);
        match built {
            Ok((asset, skeleton, skins, clips, meshes)) => {
                let mut m = Model { asset, skeleton, skins, clips, meshes, palette, bounds: Bounds::UNIT, bytes: raw };
                m.bounds = match palette {
                    Some(_) => m.part_bounds(),
                    None => m.bind_bounds(),
                };
                Ok(m)
            }
            Err(e) => {
                release();
                Err(e)
            }
        }
    }

    // Out of line: a load-time path, whose inlined copies only grow a wasm module.
    #[inline(never)]
    fn build<const SOA: usize>(
        data: &'static [u8],
        palette: Option<usize>,
        parse: fn(&'static [u8]) -> Result<Asset<'static>, ParseError>,
    ) -> Result<Built, LoadError> {
        let asset = parse(data).map_err(LoadError::Parse)?;
        let sd = asset.skeleton().ok_or(LoadError::NoSkeleton)?;
        let skeleton: Box<dyn SkeletonStore> = Box::new(sd.to_skeleton::<f32, SOA>().map_err(LoadError::Skeleton)?);
        let skins = (0..asset.num_skins())
            .filter_map(|i| asset.skin(i))
            .map(|s| Skin {
                joints: (0..s.num_joints()).map(|i| s.joint(i)).collect(),
                inverse_bind: (0..s.num_joints()).map(|i| s.inverse_bind(i)).collect(),
            })
            .collect();
        let clips = (0..asset.num_clips()).filter_map(|i| asset.clip(i)).map(ClipEntry::new).collect();
        let meshes = (0..asset.num_meshes())
            .map(|i| asset.mesh(i).zip(palette).map(|(m, p)| draw_parts(&m, p)).unwrap_or_default())
            .collect();
        Ok((asset, skeleton, skins, clips, meshes))
    }

    /// Number of joints.
    #[must_use]
    pub fn num_joints(&self) -> usize {
        self.skeleton.view().num_joints()
    }

    /// The skeleton.
    #[must_use]
    pub fn skeleton(&self) -> SkeletonView<'_, f32> {
        self.skeleton.view()
    }

    #[cfg(feature = "springs")]
    /// The file's spring bones in the core's form, for
    /// [`Character::set_springs`](crate::Character::set_springs); `None` when it has none.
    #[must_use]
    pub fn springs(&self) -> Option<SpringSet> {
        SpringSet::from_asset(&self.asset)
    }

    /// The joints' model matrices in the rest pose.
    fn rest_model(&self) -> Vec<Mat4<f32>> {
        let mut model = vec![Mat4::IDENTITY; self.num_joints()];
        let skeleton = self.skeleton.view();
        let _ = crate::jobs::local_to_model(skeleton, skeleton.rest_pose(), &mut model);
        model
    }

    /// The bounds of the draw parts skinned (linear blend, the up to 4 influences a part's
    /// vertex keeps) in the rest pose: the box of the vertices as a renderer of the draw parts
    /// places them, or of the joints without meshes. A rigid part follows its mesh node; a
    /// skinned part of a mesh without a skin is left out.
    // Out of line: a load-time path, whose inlined copies only grow a wasm module.
    #[inline(never)]
    fn part_bounds(&self) -> Bounds {
        let model = self.rest_model();
        let joint = |j: usize| model.get(j).copied().unwrap_or(Mat4::IDENTITY);
        let mut points: Vec<Vec3<f32>> = Vec::new();
        for (mi, parts) in self.meshes.iter().enumerate() {
            let Some(mesh) = self.asset.mesh(mi) else { continue };
            let node = mesh.node().map_or(Mat4::IDENTITY, joint);
            // The skin's palette: each skin joint's rest model matrix × its inverse bind.
            let palette: Option<Vec<Mat4<f32>>> = mesh.skin().and_then(|s| self.skins.get(s)).map(|skin| {
                skin.joints.iter().zip(&skin.inverse_bind).map(|(&j, inverse)| joint(j as usize) * *inverse).collect()
            });
            for part in parts {
                let vertices = part.vertices.chunks_exact(FLOATS_PER_VERTEX);
                if part.is_rigid() {
                    points.extend(vertices.map(|v| node.transform_point3(position(v))));
                    continue;
                }
                let Some(palette) = palette.as_deref() else { continue };
                // The joint indices' and the weights' offsets in the vertex.
                let (joints_at, weights_at) = (VERTEX_ATTRIBUTES[2].1, VERTEX_ATTRIBUTES[3].1);
                points.extend(vertices.map(|v| {
                    let p = position(v);
                    let mut skinned = Vec3::ZERO;
                    for k in 0..4 {
                        let (Some(&j), Some(&w)) = (v.get(joints_at + k), v.get(weights_at + k)) else { continue };
                        let m = part.map.get(j as usize).and_then(|&s| palette.get(s as usize));
                        if let (true, Some(m)) = (w != 0.0, m) {
                            skinned += m.transform_point3(p) * w;
                        }
                    }
                    skinned
                }));
            }
        }
        if points.is_empty() {
            points.extend(model.iter().map(Mat4::translation));
        }
        Bounds::of(&points)
    }

    /// The bounds of every mesh skinned (linear blend) in the rest pose, as the desktop viewer
    /// frames them: the box of the skinned vertices, or of the joints without meshes.
    // Out of line: a load-time path, whose inlined copies only grow a wasm module.
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
            // Each part's inputs in turn, in buffers that fit the longest.
            let len = PartInputsLen::of_mesh(&mesh);
            let mut positions = vec![Vec3::ZERO; len.vertices];
            let (mut joints, mut weights) = (vec![0u16; len.influences], vec![0.0f32; len.influences]);
            let mut local = vec![Mat4::IDENTITY; len.palette];
            for part in mesh.parts() {
                let buffers = PartBuffers::new(&mut positions, &mut joints, &mut weights);
                let Ok(inputs) = part.read_inputs(buffers) else { continue };
                if inputs.influences == 0 {
                    points.extend(inputs.positions.iter().map(|&p| node.transform_point3(p)));
                    continue;
                }
                let Ok(local) = part.local_palette(&palette, &mut local) else { continue };
                let mut out = vec![Vec3::ZERO; part.num_vertices()];
                if inputs.job(Palette::Matrices(local), &mut out).run().is_ok() {
                    points.extend(out);
                }
            }
        }
        if points.is_empty() {
            points.extend(model.iter().map(Mat4::translation));
        }
        Bounds::of(&points)
    }
}

/// The position of an interleaved draw-part vertex ([`FLOATS_PER_VERTEX`] floats, position
/// first: [`VERTEX_ATTRIBUTES`]); the origin for a shorter slice.
fn position(v: &[f32]) -> Vec3<f32> {
    match *v {
        [x, y, z, ..] => Vec3::new(x, y, z),
        _ => Vec3::ZERO,
    }
}

impl Bounds {
    /// A unit sphere at the origin on a floor through it, the box a unit square of that floor
    /// (no points).
    pub const UNIT: Bounds = Bounds {
        low: Vec3 { x: -1.0, y: 0.0, z: -1.0 },
        high: Vec3 { x: 1.0, y: 0.0, z: 1.0 },
        center: Vec3 { x: 0.0, y: 0.0, z: 0.0 },
        radius: 1.0,
        floor: 0.0,
    };

    /// The box of the finite `points` ([`Bounds::UNIT`] without one).
    #[must_use]
    pub fn of(points: &[Vec3<f32>]) -> Bounds {
        Self::of_box(points.iter().copied()).unwrap_or(Bounds::UNIT)
    }

    /// The box of the finite `points`, `None` without one.
    #[must_use]
    pub fn of_box(points: impl IntoIterator<Item = Vec3<f32>>) -> Option<Bounds> {
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for p in points.into_iter().filter(|p| p.is_finite()) {
            lo = lo.min(p);
            hi = hi.max(p);
        }
        (lo.x <= hi.x).then(|| Bounds {
            low: lo,
            high: hi,
            center: (lo + hi) * 0.5,
            radius: ((hi - lo).length() * 0.5).max(1.0e-3),
            floor: lo.y,
        })
    }

    /// The box holding this one's corners placed by `m` (exact for rotations by quarter turns,
    /// such as a Z-up model turned to Y-up).
    #[must_use]
    pub fn transformed(&self, m: &Mat4<f32>) -> Bounds {
        let (l, h) = (self.low, self.high);
        let corners = (0..8).map(|i| {
            let pick = |bit: usize, a: f32, b: f32| if i & bit == 0 { a } else { b };
            m.transform_point3(Vec3::new(pick(1, l.x, h.x), pick(2, l.y, h.y), pick(4, l.z, h.z)))
        });
        Self::of_box(corners).unwrap_or(*self)
    }

    /// The box moved by `offset`.
    #[must_use]
    pub fn translated(&self, offset: Vec3<f32>) -> Bounds {
        Self::of_box([self.low + offset, self.high + offset]).unwrap_or(*self)
    }

    /// The box holding both.
    #[must_use]
    pub fn union(&self, other: &Bounds) -> Bounds {
        Self::of_box([self.low, self.high, other.low, other.high]).unwrap_or(*self)
    }
}
