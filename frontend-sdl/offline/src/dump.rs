//! `sinew dump`: one JSON object with joint world matrices, skin matrices and skinned vertices
//! of a model at a time, optionally with blended layers, and the morph weights and final
//! positions of one mesh instance.
//!
//! # Fields
//!
//! `joints` (names), `joint_world`, `joint_matrices` (of `--skin`), then for the dumped mesh
//! (the one instanced at `--mesh-node`, else the first mesh of `--skin`): `skinned_positions`
//! and `skinned_normals` (after morph targets and skinning, or for a rigid mesh its node's
//! world matrix, in scene space), `morph_weights` (the mesh's sampled weights, `[]` without
//! targets) and `mesh_positions` (the same positions as `skinned_positions`: after morph
//! targets and skinning, or morph targets and the node's world matrix).
//!
//! # Layers
//!
//! The pose is the base clip at `--time`, then:
//!
//! - **override layers** (`--layer CLIP:WEIGHT[:MASK_JOINT[:FADE_IN]]`, bottom first): each
//!   clip sampled at the same time covers `WEIGHT × mask(j)` of what the layers below give at
//!   joint `j` (the last layer first: a layer of weight 1 without mask replaces everything
//!   below it, weight 0 changes nothing). The mask is the subtree of the joint called
//!   `MASK_JOINT` with a fade-in ramp over `FADE_IN` levels ([`sinew::job::mask`]); no mask covers
//!   the whole body. The per-joint shares go to one [`BlendingJob`].
//! - **additive layers** (`--additive CLIP:WEIGHT`, in order): the clip at the time made a
//!   delta from the clip's **first frame** (its pose at its start time, so a clip that starts
//!   where it rests adds only its motion), applied with the signed weight: 1 adds it, −1
//!   subtracts it.
//!
//! # Foot placement and IK
//!
//! [`pose_ik`] applies `--ground` (foot placement on a plane) and `--ik` chains (FABRIK or CCD)
//! to the local pose before [`dump_pose`] computes `joint_world` from it; [`springs`] plays the
//! model's spring bones up to the dump's time (`--springs`).

pub mod pose_ik;
pub mod springs;

use std::fmt::Write as _;

use sinew::clip::RotationInterpolation;
use sinew::controller::{layer_shares, ShareTerms};
use sinew::job::additive::MakeAdditiveJob;
use sinew::job::blending::{BlendingJob, Layer};
use sinew::job::mask::{Channel, MaskJob};
use sinew::math::{Mat4, SoaTransform};

use crate::model::{Model, Skinning};

/// What to dump.
#[derive(Debug, Clone)]
pub struct DumpOptions {
    /// Clip index (`None`: the rest pose).
    pub clip: Option<usize>,
    /// Clip time in seconds.
    pub time: f32,
    /// Skin index.
    pub skin: usize,
    /// Skinning method.
    pub skinning: Skinning,
    /// Rotation interpolation (exact slerp for raw dumps).
    pub rotation: RotationInterpolation,
    /// Override layers over the base clip, bottom first (`--layer`).
    pub layers: Vec<LayerSpec>,
    /// Additive layers applied after them, in order (`--additive`).
    pub additive: Vec<AdditiveSpec>,
    /// The node whose mesh instance to dump (`--mesh-node`): the glTF node index for models
    /// imported from glTF, the row of `joints` for other sources ([`Model::joint_of_node`]);
    /// `None`: the first mesh of `skin`.
    pub mesh_node: Option<usize>,
}

impl Default for DumpOptions {
    /// The rest pose at time 0, skin 0, linear blend skinning, corrected nlerp, no layers.
    fn default() -> Self {
        DumpOptions {
            clip: None,
            time: 0.0,
            skin: 0,
            skinning: Skinning::Lbs,
            rotation: RotationInterpolation::NlerpCorrected,
            layers: Vec::new(),
            additive: Vec::new(),
            mesh_node: None,
        }
    }
}

/// An override layer: `--layer CLIP:WEIGHT[:MASK_JOINT[:FADE_IN]]` (see the
/// [module documentation](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerSpec {
    /// Clip name or index.
    pub clip: String,
    /// Weight, 0 to 1.
    pub weight: f32,
    /// The joint whose subtree the layer covers (`None`: the whole body).
    pub mask: Option<String>,
    /// Levels over which the mask's weight ramps up from its top joint (0: a hard edge).
    pub fade_in: u16,
}

/// An additive layer: `--additive CLIP:WEIGHT` (see the [module documentation](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct AdditiveSpec {
    /// Clip name or index.
    pub clip: String,
    /// Signed weight: 1 adds the clip's motion, −1 subtracts it.
    pub weight: f32,
}

fn number(s: &str) -> Option<f32> {
    s.trim().parse::<f32>().ok()
}

/// Parses `CLIP:WEIGHT[:MASK_JOINT[:FADE_IN]]`. Names may contain `:` (`mixamorig:Spine`): the
/// first field after the clip name that reads as a number is the weight, and after the mask
/// joint's name, a last field that reads as an integer is the fade-in.
///
/// # Errors
///
/// A message for an empty clip name, a missing weight, a weight that is not finite or not in
/// `[0, 1]`, an empty mask joint name, or a fade-in outside `0..=65535`.
pub fn parse_layer(s: &str) -> Result<LayerSpec, String> {
    let parts: Vec<&str> = s.split(':').collect();
    let at = (1..parts.len())
        .find(|&i| number(parts[i]).is_some())
        .ok_or_else(|| format!("'{s}': expected CLIP:WEIGHT[:MASK_JOINT[:FADE_IN]]"))?;
    let clip = parts[..at].join(":");
    if clip.is_empty() {
        return Err(format!("'{s}': the clip name is empty"));
    }
    let weight = number(parts[at]).unwrap_or(f32::NAN);
    if !(0.0..=1.0).contains(&weight) {
        return Err(format!("'{s}': the weight must be a number from 0 to 1"));
    }
    let rest = &parts[at + 1..];
    let (mask, fade_in) = match rest {
        [] => (None, 0),
        [.., last] if rest.len() >= 2 && last.trim().parse::<i64>().is_ok() => {
            let fade = last.trim().parse::<i64>().ok().and_then(|f| u16::try_from(f).ok());
            let fade = fade.ok_or_else(|| format!("'{s}': the fade-in must be 0 to 65535 levels"))?;
            (Some(rest[..rest.len() - 1].join(":")), fade)
        }
        _ => (Some(rest.join(":")), 0),
    };
    if mask.as_deref().is_some_and(str::is_empty) {
        return Err(format!("'{s}': the mask joint name is empty"));
    }
    Ok(LayerSpec { clip, weight, mask, fade_in })
}

/// Parses `CLIP:WEIGHT` (the weight is after the last `:`, so the clip name may contain `:`).
///
/// # Errors
///
/// A message for a missing or empty clip name, or a weight that is missing or not finite.
pub fn parse_additive(s: &str) -> Result<AdditiveSpec, String> {
    let (clip, weight) = s.rsplit_once(':').ok_or_else(|| format!("'{s}': expected CLIP:WEIGHT"))?;
    if clip.is_empty() {
        return Err(format!("'{s}': the clip name is empty"));
    }
    let weight =
        number(weight).filter(|w| w.is_finite()).ok_or_else(|| format!("'{s}': the weight must be a finite number"))?;
    Ok(AdditiveSpec { clip: clip.to_string(), weight })
}

fn push_floats(out: &mut String, v: &[f32]) {
    out.push('[');
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        // Finite by construction; print the shortest round-trip form.
        let _ = write!(out, "{}", if x.is_finite() { *x } else { 0.0 });
    }
    out.push(']');
}

/// `"key":[…]`, one array of floats per item of `items`.
fn push_arrays<const N: usize>(out: &mut String, key: &str, items: impl IntoIterator<Item = [f32; N]>) {
    let _ = write!(out, "\"{key}\":[");
    for (i, a) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_floats(out, &a);
    }
    out.push(']');
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// Evaluates `model` and returns the dump's JSON text.
///
/// # Errors
///
/// A message for a layer naming a clip or a mask joint the model does not have, a
/// `mesh_node` that instances no mesh, or the job error's message when the model's parts do
/// not fit (not expected for validated files).
pub fn dump(model: &Model, opts: &DumpOptions) -> Result<String, String> {
    let pose = blended_pose(model, opts)?;
    dump_pose(model, &pose, opts)
}

/// The dump's JSON text for the local pose `pose` (the layers of `opts` are not used; its skin,
/// skinning and mesh node are, and its clip and time give the morph weights).
///
/// # Errors
///
/// The job error's message when the model's parts do not fit (not expected for validated
/// files).
pub fn dump_pose(model: &Model, pose: &[SoaTransform<f32>], opts: &DumpOptions) -> Result<String, String> {
    let mut world = Vec::new();
    model.world(pose, &mut world).map_err(|e| e.to_string())?;
    let palette = model.palette(&world, opts.skin).map_err(|e| e.to_string())?;
    let dq = model.dq_palette(&world, opts.skin).map_err(|e| e.to_string())?;
    let asset = model.asset();
    let mesh = match opts.mesh_node {
        Some(n) => {
            let joint = model.joint_of_node(n);
            Some(
                (0..asset.num_meshes())
                    .find(|&i| joint.is_some() && asset.mesh(i).and_then(|m| m.node()) == joint)
                    .ok_or_else(|| format!("no mesh instance at node {n}"))?,
            )
        }
        None => (0..asset.num_meshes()).find(|&i| asset.mesh(i).and_then(|m| m.skin()) == Some(opts.skin)),
    };
    let weights = match mesh {
        Some(m) => crate::morph::sample_weights(&asset, m, opts.clip, opts.time).map_err(|e| e.to_string())?,
        None => Vec::new(),
    };
    let parts = match mesh {
        Some(m) => {
            // A mesh picked by its node is skinned with its own skin.
            let skin = asset.mesh(m).and_then(|d| d.skin()).unwrap_or(opts.skin);
            let (palette, dq) = if skin == opts.skin {
                (palette.clone(), dq)
            } else {
                (
                    model.palette(&world, skin).map_err(|e| e.to_string())?,
                    model.dq_palette(&world, skin).map_err(|e| e.to_string())?,
                )
            };
            model.skin_mesh_morphed(m, &weights, &world, &palette, &dq, opts.skinning).map_err(|e| e.to_string())?
        }
        None => Vec::new(),
    };
    let mut out = String::with_capacity(1 << 16);
    out.push_str("{\"joints\":[");
    for (i, n) in model.skeleton().names().iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&json_str(n));
    }
    out.push_str("],");
    push_arrays(&mut out, "joint_world", world.iter().map(Mat4::to_cols_array));
    out.push(',');
    push_arrays(&mut out, "joint_matrices", palette.iter().map(Mat4::to_cols_array));
    let positions = || parts.iter().flat_map(|p| p.positions.iter().map(|v| v.to_array()));
    out.push(',');
    push_arrays(&mut out, "skinned_positions", positions());
    out.push(',');
    push_arrays(&mut out, "skinned_normals", parts.iter().flat_map(|p| p.normals.iter().map(|v| v.to_array())));
    out.push_str(",\"morph_weights\":");
    push_floats(&mut out, &weights);
    out.push(',');
    push_arrays(&mut out, "mesh_positions", positions());
    out.push('}');
    Ok(out)
}

/// The local pose of the dump: the base clip with the override and additive layers of `opts`
/// blended in (see the [module documentation](self)).
///
/// # Errors
///
/// A message for a layer naming a clip or a mask joint the model does not have, or a job
/// error's message.
pub fn blended_pose(model: &Model, opts: &DumpOptions) -> Result<Vec<SoaTransform<f32>>, String> {
    let sample = |clip: Option<usize>, time: f32| -> Result<Vec<SoaTransform<f32>>, String> {
        let mut pose = Vec::new();
        model.sample(clip, time, opts.rotation, &mut Vec::new(), &mut pose).map_err(|e| e.to_string())?;
        Ok(pose)
    };
    let find = |key: &str| model.find_clip(key).ok_or_else(|| format!("no clip named or numbered '{key}'"));
    let base = sample(opts.clip, opts.time)?;
    if opts.layers.is_empty() && opts.additive.is_empty() {
        return Ok(base);
    }
    let skeleton = model.skeleton();
    let n = skeleton.num_soa_joints();

    // Override layers over the base clip, weighed by the controller's rule: each covers
    // `weight × mask` of what the layers below it give, the top one first; the base, a layer
    // of weight 1, keeps what is left.
    let mut poses = Vec::with_capacity(opts.layers.len());
    for l in &opts.layers {
        poses.push(sample(Some(find(&l.clip)?), opts.time)?);
    }
    let mut masks = Vec::with_capacity(opts.layers.len());
    for l in &opts.layers {
        let mut mask = vec![[1.0f32; 4]; n];
        if let Some(name) = &l.mask {
            let channel =
                Channel::named(skeleton, name, l.fade_in).ok_or_else(|| format!("no joint named '{name}'"))?;
            MaskJob { skeleton, channels: &[channel], invert: false, output: &mut mask }
                .run()
                .map_err(|e| e.to_string())?;
        }
        masks.push(mask);
    }
    let base_terms = ShareTerms { covers: true, cover: 1.0, factor: 1.0, mask: None };
    let terms: Vec<ShareTerms<'_, f32>> = std::iter::once(base_terms)
        .chain(opts.layers.iter().zip(&masks).map(|(l, mask)| {
            let w = l.weight.clamp(0.0, 1.0);
            ShareTerms { covers: true, cover: w, factor: w, mask: Some(mask) }
        }))
        .collect();
    let mut shares = vec![vec![[0.0f32; 4]; n]; terms.len()];
    layer_shares(n, &terms, &mut shares).map_err(|e| e.to_string())?;

    // Additive layers: the clip at the time as a delta from its first frame.
    let mut deltas = Vec::with_capacity(opts.additive.len());
    for a in &opts.additive {
        let clip = find(&a.clip)?;
        let start = model.asset().clip(clip).map_or(0.0, |c| c.start());
        let (pose, reference) = (sample(Some(clip), opts.time)?, sample(Some(clip), start)?);
        let mut delta = vec![SoaTransform::IDENTITY; n];
        MakeAdditiveJob { pose: &pose, reference: &reference, output: &mut delta }.run().map_err(|e| e.to_string())?;
        deltas.push(delta);
    }

    let layers: Vec<Layer<'_, f32>> = std::iter::once(&base)
        .chain(&poses)
        .zip(&shares)
        .map(|(pose, share)| Layer { transform: pose, weight: 1.0, joint_weights: Some(share) })
        .collect();
    let additive: Vec<Layer<'_, f32>> =
        deltas.iter().zip(&opts.additive).map(|(d, a)| Layer::new(d, a.weight)).collect();
    let mut out = base.clone();
    // The shares sum to 1 at every joint: any threshold up to 1 leaves the rest pose out.
    BlendingJob {
        layers: &layers,
        additive: &additive,
        rest_pose: skeleton.rest_pose(),
        threshold: 0.5,
        output: &mut out,
    }
    .run()
    .map_err(|e| e.to_string())?;
    Ok(out)
}
