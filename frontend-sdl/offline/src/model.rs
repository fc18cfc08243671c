//! A loaded model on the host: baked bytes plus the decoded skeleton, with the per-frame
//! pipeline (sample → local-to-model → palette → skinning) the CLI and viewers share.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use sinew::asset::{Asset, MeshPart, ParseError};
use sinew::clip::RotationInterpolation;
use sinew::job::{JobError, LocalToModelJob, Palette, SamplingJob, SkinDualQuatJob, SkinMatrixJob, SkinningJob};
use sinew::limits::MAX_SOA_JOINTS;
use sinew::math::{DualQuat, Mat4, SoaTransform, SymMat3, Vec3};
use sinew::skeleton::{Skeleton, SkeletonError, SkeletonView};

use crate::bake::{bake, BakeError, BakeOptions, BakeReport};
use crate::import::{self, ImportError};
use crate::rig::Rig;

/// Why a model could not be loaded.
#[derive(Debug)]
pub enum ModelError {
    /// The file could not be read.
    Io(std::io::Error),
    /// Import failed.
    Import(ImportError),
    /// Baking failed.
    Bake(BakeError),
    /// The `.sinew` data is invalid.
    Parse(ParseError),
    /// The skeleton could not be built.
    Skeleton(SkeletonError),
    /// The file has no skeleton.
    NoSkeleton,
    /// The runtime's character refused the model.
    Character(sinew_host::CharacterError),
}

impl From<sinew_host::LoadError> for ModelError {
    fn from(e: sinew_host::LoadError) -> Self {
        match e {
            sinew_host::LoadError::Parse(e) => Self::Parse(e),
            sinew_host::LoadError::NoSkeleton => Self::NoSkeleton,
            sinew_host::LoadError::Skeleton(e) => Self::Skeleton(e),
        }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => write!(f, "{e}"),
            Self::Import(e) => write!(f, "{e}"),
            Self::Bake(e) => write!(f, "{e}"),
            Self::Parse(e) => write!(f, "{e}"),
            Self::Skeleton(e) => write!(f, "{e}"),
            Self::NoSkeleton => f.write_str("the file has no skeleton"),
            Self::Character(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ModelError {}

/// Skinning method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skinning {
    /// Linear blend skinning.
    Lbs,
    /// Dual-quaternion skinning.
    Dqs,
}

/// A model ready to animate.
pub struct Model {
    /// Display name.
    pub name: String,
    bytes: Arc<[u8]>,
    skeleton: Box<Skeleton<f32, MAX_SOA_JOINTS>>,
    /// Per skin: skeleton joint of each skin joint and its inverse bind matrix, decoded once.
    skins: Vec<(Vec<u16>, Vec<Mat4<f32>>)>,
    /// The baker's report, when the model was baked from an imported file.
    pub report: Option<BakeReport>,
    /// Importer notes, when imported.
    pub notes: Vec<String>,
    /// The source file's node index of each joint (glTF); empty for other sources.
    source_nodes: Vec<usize>,
}

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Model").field("name", &self.name).field("bytes", &self.bytes.len()).finish_non_exhaustive()
    }
}

/// Skinned vertices of one mesh part.
#[derive(Debug, Clone, Default)]
pub struct SkinnedPart {
    /// Positions.
    pub positions: Vec<Vec3<f32>>,
    /// Normals (empty when the part has none).
    pub normals: Vec<Vec3<f32>>,
}

impl Model {
    /// From `.sinew` bytes.
    ///
    /// # Errors
    ///
    /// [`ModelError::Parse`] for invalid data, [`ModelError::NoSkeleton`] or
    /// [`ModelError::Skeleton`] when no usable skeleton is present.
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Result<Model, ModelError> {
        let asset = Asset::parse(&bytes).map_err(ModelError::Parse)?;
        let sd = asset.skeleton().ok_or(ModelError::NoSkeleton)?;
        let skeleton = Box::new(sd.to_skeleton().map_err(ModelError::Skeleton)?);
        let skins = (0..asset.num_skins())
            .filter_map(|i| asset.skin(i))
            .map(|s| {
                (
                    (0..s.num_joints()).map(|i| s.joint(i)).collect(),
                    (0..s.num_joints()).map(|i| s.inverse_bind(i)).collect(),
                )
            })
            .collect();
        Ok(Model {
            name: name.to_string(),
            bytes: bytes.into(),
            skeleton,
            skins,
            report: None,
            notes: Vec::new(),
            source_nodes: Vec::new(),
        })
    }
    /// Bakes an imported rig.
    ///
    /// # Errors
    ///
    /// As [`bake`] and [`Model::from_bytes`].
    pub fn from_rig(rig: &Rig, opts: &BakeOptions) -> Result<Model, ModelError> {
        let (bytes, report) = bake(rig, opts).map_err(ModelError::Bake)?;
        let mut m = Model::from_bytes(&rig.name, bytes)?;
        m.report = Some(report);
        m.notes = rig.notes.clone();
        m.source_nodes = rig.source_nodes.clone();
        Ok(m)
    }
    /// Loads `.sinew`, `.glb`, `.gltf` or `.md5mesh` (+ `anim`), baking imported files with
    /// `opts`.
    ///
    /// # Errors
    ///
    /// Any [`ModelError`].
    pub fn load(path: &Path, anim: Option<&Path>, opts: &BakeOptions) -> Result<Model, ModelError> {
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("model").to_string();
        if path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("sinew")) {
            let bytes = std::fs::read(path).map_err(ModelError::Io)?;
            return Model::from_bytes(&name, bytes);
        }
        let rig = import::load(path, anim).map_err(ModelError::Import)?;
        Model::from_rig(&rig, opts)
    }
    /// The baked bytes.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    /// The asset view.
    #[must_use]
    #[allow(clippy::redundant_closure)] // the closure shortens the 'static view's lifetime
    pub fn asset(&self) -> Asset<'_> {
        // The bytes passed `Asset::parse` in the constructor.
        Asset::reopen(&self.bytes).unwrap_or_else(|| unreachable_asset())
    }
    /// The joint imported from node `node` of the source file: the glTF node index for models
    /// imported from glTF, the joint index itself for sources without node numbers (md5,
    /// `.sinew`, built-in rigs). `None` when no joint has that node.
    #[must_use]
    pub fn joint_of_node(&self, node: usize) -> Option<usize> {
        if self.source_nodes.is_empty() {
            (node < self.skeleton.view().num_joints()).then_some(node)
        } else {
            self.source_nodes.iter().position(|&n| n == node)
        }
    }
    /// The skeleton.
    #[must_use]
    pub fn skeleton(&self) -> SkeletonView<'_, f32> {
        self.skeleton.view()
    }
    /// Index of a clip by name or decimal index.
    #[must_use]
    pub fn find_clip(&self, key: &str) -> Option<usize> {
        let a = self.asset();
        (0..a.num_clips())
            .find(|&i| a.clip(i).is_some_and(|c| c.name() == key))
            .or_else(|| key.parse::<usize>().ok().filter(|&i| i < a.num_clips()))
    }
    /// Local pose of clip `clip` at time `t` (or the rest pose), into `pose`.
    ///
    /// # Errors
    ///
    /// A [`JobError`] when the clip does not fit the skeleton.
    pub fn sample(
        &self,
        clip: Option<usize>,
        t: f32,
        rotation: RotationInterpolation,
        cursor: &mut Vec<u16>,
        pose: &mut Vec<SoaTransform<f32>>,
    ) -> Result<(), JobError> {
        let rest = self.skeleton.rest_pose();
        pose.resize(rest.len(), SoaTransform::IDENTITY);
        match clip.and_then(|i| self.asset().clip(i)) {
            Some(c) => {
                cursor.resize(c.num_tracks().max(cursor.len()), 0);
                SamplingJob { clip: c, time: t, rotation, rest_pose: rest, cursor, output: pose }.run()
            }
            None => {
                pose.copy_from_slice(rest);
                Ok(())
            }
        }
    }
    /// Model-space matrices of a local pose.
    ///
    /// # Errors
    ///
    /// A [`JobError`] when `pose` is too short.
    pub fn world(&self, pose: &[SoaTransform<f32>], out: &mut Vec<Mat4<f32>>) -> Result<(), JobError> {
        out.resize(self.skeleton.num_joints(), Mat4::IDENTITY);
        LocalToModelJob { skeleton: self.skeleton.view(), root: None, input: pose, output: out, from: None, to: None }
            .run()
    }
    /// Skin `skin`'s skeleton joint per skin joint and inverse bind matrices (decoded at load).
    #[must_use]
    pub fn skin_bind(&self, skin: usize) -> Option<(&[u16], &[Mat4<f32>])> {
        self.skins.get(skin).map(|(j, ib)| (j.as_slice(), ib.as_slice()))
    }
    /// The skin palette (world × inverse bind) of skin `skin`.
    ///
    /// # Errors
    ///
    /// A [`JobError`] when `world` is too short; an empty palette for a missing skin.
    pub fn palette(&self, world: &[Mat4<f32>], skin: usize) -> Result<Vec<Mat4<f32>>, JobError> {
        let Some((joints, ib)) = self.skin_bind(skin) else { return Ok(Vec::new()) };
        let mut out = vec![Mat4::IDENTITY; ib.len()];
        SkinMatrixJob { model: world, inverse_bind: ib, joints: Some(joints), output: &mut out }.run()?;
        Ok(out)
    }
    /// The dual-quaternion palette of skin `skin`, with each joint's scale/shear factor (see
    /// [`SkinDualQuatJob::with_scales`]).
    ///
    /// # Errors
    ///
    /// As [`Model::palette`].
    pub fn dq_palette(&self, world: &[Mat4<f32>], skin: usize) -> Result<DqPalette, JobError> {
        let Some((joints, ib)) = self.skin_bind(skin) else { return Ok(DqPalette::default()) };
        let mut dual_quats = vec![DualQuat::IDENTITY; ib.len()];
        let mut scales = vec![SymMat3::IDENTITY; ib.len()];
        SkinDualQuatJob::new(world, ib, &mut dual_quats).with_joints(joints).with_scales(&mut scales).run()?;
        Ok(DqPalette { dual_quats, scales })
    }
    /// Skins every part of mesh `mesh` with a skin palette (`palette`/`dq` from
    /// [`Model::palette`] / [`Model::dq_palette`]). Rigid meshes follow their node's world
    /// matrix (identity without one).
    ///
    /// # Errors
    ///
    /// A [`JobError`] when the palette does not fit the mesh
    /// ([`JobError::JointIndexOutOfRange`]: a part names a skin joint past it).
    pub fn skin_mesh(
        &self,
        mesh: usize,
        world: &[Mat4<f32>],
        palette: &[Mat4<f32>],
        dq: &DqPalette,
        method: Skinning,
    ) -> Result<Vec<SkinnedPart>, JobError> {
        self.skin_mesh_morphed(mesh, &[], world, palette, dq, method)
    }
    /// [`Model::skin_mesh`] of the mesh's vertices with its morph targets applied with
    /// `weights` first (from [`crate::morph::sample_weights`]; empty: the bind pose).
    ///
    /// # Errors
    ///
    /// A [`JobError`] when the palette does not fit the mesh or `weights` its targets.
    pub fn skin_mesh_morphed(
        &self,
        mesh: usize,
        weights: &[f32],
        world: &[Mat4<f32>],
        palette: &[Mat4<f32>],
        dq: &DqPalette,
        method: Skinning,
    ) -> Result<Vec<SkinnedPart>, JobError> {
        let asset = self.asset();
        let Some(m) = asset.mesh(mesh) else { return Ok(Vec::new()) };
        let mut out = Vec::new();
        for (pi, part) in m.parts().enumerate() {
            let n = part.num_vertices();
            let morphed = crate::morph::morphed_part(&asset, mesh, pi, &part, weights)?;
            let (positions, normals) = (morphed.positions, morphed.normals);
            let mut sp = SkinnedPart {
                positions: vec![Vec3::ZERO; n],
                normals: vec![Vec3::ZERO; if normals.is_some() { n } else { 0 }],
            };
            if part.influences() == 0 {
                let node = m.node().and_then(|j| world.get(j)).copied().unwrap_or(Mat4::IDENTITY);
                for v in 0..n {
                    sp.positions[v] = node.transform_point3(positions[v]);
                    if let Some(nrm) = &normals {
                        sp.normals[v] = node.transform_vector3(nrm[v]);
                    }
                }
                out.push(sp);
                continue;
            }
            let len = part.inputs_len();
            let (mut joints, mut joint_weights) = (vec![0u16; len.influences], vec![0.0f32; len.influences]);
            part.read_influences(&mut joints, &mut joint_weights)?;
            // The part's palette, of the method's kind only.
            let (local_m, local_d) = match method {
                Skinning::Lbs => {
                    let mut local = vec![Mat4::IDENTITY; len.palette];
                    part.local_palette(palette, &mut local)?;
                    (local, DqPalette::default())
                }
                Skinning::Dqs => (Vec::new(), dq.of_part(&part)?),
            };
            SkinningJob {
                palette: match method {
                    Skinning::Lbs => Palette::Matrices(&local_m),
                    Skinning::Dqs => local_d.palette(),
                },
                influences: part.influences(),
                joint_indices: &joints,
                joint_weights: &joint_weights,
                positions: &positions,
                normals: normals.as_deref(),
                tangents: None,
                out_positions: &mut sp.positions,
                out_normals: normals.as_ref().map(|_| sp.normals.as_mut_slice()),
                out_tangents: None,
            }
            .run()?;
            out.push(sp);
        }
        Ok(out)
    }
}

/// A dual-quaternion skin palette: each joint's rigid part and its scale/shear factor
/// ([`SymMat3::IDENTITY`] for rigid joints), as [`Model::dq_palette`] builds it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DqPalette {
    /// The rigid parts.
    pub dual_quats: Vec<DualQuat<f32>>,
    /// The scale/shear factors, one per dual quaternion.
    pub scales: Vec<SymMat3<f32>>,
}

impl DqPalette {
    /// The entries `map` names, in its order (identity for an index past the palette): a
    /// part's local palette.
    #[must_use]
    pub fn local(&self, map: &[u16]) -> DqPalette {
        let get = |j: u16| {
            let j = usize::from(j);
            (
                self.dual_quats.get(j).copied().unwrap_or(DualQuat::IDENTITY),
                self.scales.get(j).copied().unwrap_or(SymMat3::IDENTITY),
            )
        };
        let (dual_quats, scales) = map.iter().map(|&j| get(j)).unzip();
        DqPalette { dual_quats, scales }
    }
    /// The entries of `part`'s palette, in its order ([`MeshPart::local_palette`]): the
    /// palette its joint indices point into.
    ///
    /// # Errors
    ///
    /// [`JobError::JointIndexOutOfRange`] when the part names a joint past this palette.
    pub fn of_part(&self, part: &MeshPart<'_>) -> Result<DqPalette, JobError> {
        let n = part.palette_len();
        let mut local = DqPalette { dual_quats: vec![DualQuat::IDENTITY; n], scales: vec![SymMat3::IDENTITY; n] };
        part.local_palette(&self.dual_quats, &mut local.dual_quats)?;
        part.local_palette(&self.scales, &mut local.scales)?;
        Ok(local)
    }
    /// The palette for [`SkinningJob`].
    #[must_use]
    pub fn palette(&self) -> Palette<'_, f32> {
        Palette::ScaledDualQuats { dual_quats: &self.dual_quats, scales: &self.scales }
    }
    /// True when every joint is rigid.
    #[must_use]
    pub fn is_rigid(&self) -> bool {
        self.scales.iter().all(SymMat3::is_identity)
    }
}

fn unreachable_asset() -> Asset<'static> {
    // An empty but valid view; only reached if bytes that parsed once stop re-opening.
    static EMPTY: [u8; 24] =
        [b'S', b'I', b'N', b'E', b'W', 0, b'\r', b'\n', 1, 0, 0, 0, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    Asset::reopen(&EMPTY).unwrap_or_else(|| panic!("static empty asset is valid"))
}
