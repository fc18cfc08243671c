//! What a renderer draws at one moment, independent of the renderer: the [`Frame`] of skinned
//! [`DrawObject`]s, bone and grid lines and [`Label`]s, with [`push_model`] to add a posed model
//! and [`ground_grid`] for the floor.

use sinew::job::JobError;
use sinew::math::{Mat4, SoaTransform, Vec3};
use sinew_offline::model::{DqPalette, Model, SkinnedPart, Skinning};
use sinew_offline::morph::sample_weights;

/// One skinned mesh to draw.
#[derive(Debug, Clone)]
pub struct DrawObject<'a> {
    /// The model.
    pub model: &'a Model,
    /// Index of the model in its owner's list (a key for cached GPU buffers).
    pub model_index: usize,
    /// Mesh index in the model.
    pub mesh: usize,
    /// Object to world.
    pub world: Mat4<f32>,
    /// Model-space joint matrices (rigid meshes follow their node's).
    pub joints: Vec<Mat4<f32>>,
    /// Skin palette (model × inverse bind) of the mesh's skin; empty for rigid meshes.
    pub palette: Vec<Mat4<f32>>,
    /// The same palette as dual quaternions with scale factors.
    pub dq_palette: DqPalette,
    /// Skinning method.
    pub skinning: Skinning,
    /// Base color, RGBA 0 to 1: the mesh's color (linear light, as glTF factors are), or the
    /// override [`push_model`] was given (a display color, sRGB: the viewers decode it with
    /// [`srgb_to_linear`] where colors combine in linear light).
    pub color: [f32; 4],
    /// True when each part's own material colors it (no override was given); false when
    /// [`DrawObject::color`] replaces every part's base color.
    pub material_colors: bool,
    /// Morph weights of the mesh, one per target (empty without targets): its default
    /// weights from [`push_model`], a clip's from whoever samples them.
    pub morph_weights: Vec<f32>,
}

impl DrawObject<'_> {
    /// The skinned vertices of every part of the mesh, morphed by
    /// [`DrawObject::morph_weights`] first, in object space (apply [`DrawObject::world`]), for
    /// a renderer that skins on the CPU.
    ///
    /// # Errors
    ///
    /// A [`JobError`] when the palette does not fit the mesh.
    pub fn skin_cpu(&self) -> Result<Vec<SkinnedPart>, JobError> {
        self.model.skin_mesh_morphed(
            self.mesh,
            &self.morph_weights,
            &self.joints,
            &self.palette,
            &self.dq_palette,
            self.skinning,
        )
    }
}

/// A text label anchored at a world position.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// Anchor, in world space.
    pub position: Vec3<f32>,
    /// The text.
    pub text: String,
}

/// Everything to draw at one moment.
#[derive(Debug, Clone, Default)]
pub struct Frame<'a> {
    /// Skinned meshes.
    pub objects: Vec<DrawObject<'a>>,
    /// Bone lines (joint to parent) in world space, drawn over everything.
    pub bones: Vec<[Vec3<f32>; 2]>,
    /// Ground grid lines and other markers (the character's look target) in world space,
    /// depth-tested.
    pub grid: Vec<[Vec3<f32>; 2]>,
    /// Labels.
    pub labels: Vec<Label>,
}

/// Appends one [`DrawObject`] per mesh of `model` posed by `pose` (local, SoA) and placed by
/// `world`, and, when `bones` is given, its bone lines in world space.
///
/// `color` overrides the meshes' own colors (their parts' materials' base colors).
///
/// # Errors
///
/// A [`JobError`] when `pose` does not fit the skeleton.
#[allow(clippy::too_many_arguments)]
pub fn push_model<'a>(
    frame: &mut Frame<'a>,
    model: &'a Model,
    model_index: usize,
    pose: &[SoaTransform<f32>],
    world: Mat4<f32>,
    skinning: Skinning,
    color: Option<[f32; 4]>,
    bones: bool,
) -> Result<(), JobError> {
    let mut joints = Vec::new();
    model.world(pose, &mut joints)?;
    let asset = model.asset();
    for mesh in 0..asset.num_meshes() {
        let Some(m) = asset.mesh(mesh) else { continue };
        let (palette, dq_palette) = match m.skin() {
            Some(s) => (model.palette(&joints, s)?, model.dq_palette(&joints, s)?),
            None => (Vec::new(), DqPalette::default()),
        };
        let c = m.color();
        frame.objects.push(DrawObject {
            model,
            model_index,
            mesh,
            world,
            joints: joints.clone(),
            palette,
            dq_palette,
            skinning,
            color: color.unwrap_or([c[0], c[1], c[2], c[3]].map(|v| v as f32 / 255.0)),
            material_colors: color.is_none(),
            morph_weights: sample_weights(&asset, mesh, None, 0.0)?,
        });
    }
    if bones {
        let skeleton = model.skeleton();
        for (j, m) in joints.iter().enumerate() {
            if let Some(p) = skeleton.parent(j).and_then(|p| joints.get(p)) {
                frame.bones.push([world.transform_point3(p.translation()), world.transform_point3(m.translation())]);
            }
        }
    }
    Ok(())
}

/// A ground grid on `y = 0`: lines every `step` over `[x0, x1] × [z0, z1]`.
#[must_use]
pub fn ground_grid(x0: f32, x1: f32, z0: f32, z1: f32, step: f32) -> Vec<[Vec3<f32>; 2]> {
    let mut out = Vec::new();
    if !(step > 0.0 && x1 >= x0 && z1 >= z0) {
        return out;
    }
    let nx = ((x1 - x0) / step).round() as i32;
    let nz = ((z1 - z0) / step).round() as i32;
    for i in 0..=nx {
        let x = x0 + i as f32 * step;
        out.push([Vec3::new(x, 0.0, z0), Vec3::new(x, 0.0, z1)]);
    }
    for i in 0..=nz {
        let z = z0 + i as f32 * step;
        out.push([Vec3::new(x0, 0.0, z), Vec3::new(x1, 0.0, z)]);
    }
    out
}

/// The linear light of an sRGB-encoded channel value in `[0, 1]` (IEC 61966-2-1; values
/// outside are clamped).
#[must_use]
pub fn srgb_to_linear(c: f32) -> f32 {
    let c = c.clamp(0.0, 1.0);
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// The sRGB encoding of a linear channel value in `[0, 1]` (IEC 61966-2-1; values outside are
/// clamped).
#[must_use]
pub fn linear_to_srgb(c: f32) -> f32 {
    let c = c.clamp(0.0, 1.0);
    if c <= 0.0031308 {
        c * 12.92
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    }
}
