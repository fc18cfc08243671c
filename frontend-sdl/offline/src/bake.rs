//! The baker: turns a [`Rig`] into a `.sinew` file.
//!
//! - **Skeleton**: every rig joint (names cut to `MAX_NAME_LEN` bytes and kept unique).
//! - **Meshes**: influences limited to `max_influences` per vertex (the largest kept,
//!   renormalized; the count of changed vertices is reported), and triangles split into parts
//!   whose bone palettes fit `palette` joints (vertices duplicated across parts as needed).
//! - **Clips**: cubic splines are stored losslessly; STEP and LINEAR tracks are quantized
//!   (rotations smallest-three 3 × 15 bits, translations and scales 16 bits in a per-track
//!   range, times 16 bits in the clip range), constant tracks collapse to one key, and keys
//!   are removed while the error stays within `tolerance` — measured as the displacement of
//!   virtual vertices at each joint's farthest mesh vertex and at least `min_shell` from it
//!   (`shell_from_mesh`, the default; a joint that moves no vertex itself takes its subtree's
//!   reach; see [`crate::shells::shells_from_mesh`]) or at `shell` distance from every joint
//!   (ACL's convention), in model space, through the hierarchy (a child's error includes its
//!   parents'). The bound is verified by sampling the encoded clip with the runtime at every
//!   source key time and between them; tracks on the path of a joint that misses it are
//!   re-encoded with a tighter budget.
//! - **Bounded work**: key reduction and error measurement count their steps against
//!   [`BakeOptions::max_work`] (shared by the clips of one bake). A clip whose search would not
//!   fit in what is left — one measurement pass alone too big, or the budget running out between
//!   rounds — is stored lossless instead (every key `f32`, linear rotations slerped exactly, so
//!   it reproduces the source keys and needs no measurement) and reported as such
//!   ([`ClipReport::fallback`]). The bake stays correct; only its size grows.
//! - **Textures and materials**: every image a primitive's material uses becomes a texture
//!   section, scaled down (area average in linear light, aspect kept) to fit
//!   [`BakeOptions::texture_size`] and stored as [`BakeOptions::texture_format`]; each part
//!   keeps its primitive's material (base color, texture and sampler, vertex-color flag), its
//!   texture coordinates (when a texture reads them) and its vertex colors.
//! - **Morph targets**: per mesh part, sparse (only the vertices a target moves), `i16` deltas
//!   with a power-of-two step per attribute where the error bound allows, else `f32`; morph
//!   weight tracks with every key, quantized where the bound allows (see `morph`). Deltas and
//!   weights each get half of `tolerance` as a bound on the vertex displacement in scene space.
//! - **Spring bones**: [`Rig::springs`] as a spring-bone section (`springs`): the spring
//!   joints in the importer's run order, the colliders, the joint→collider table (equal
//!   collider lists share a range) and each spring's name and span; indices checked against
//!   the hierarchy ([`BakeError::Springs`]). A rig without spring bones bakes no section.
//! - **Clip reports**: per clip, a clip-report section records the bound (meters), the shell
//!   distance (or that it came from the mesh) and the largest error the baker measured, with its
//!   joint and time, for `sinew info` to print without the source.
//! - **Checks**: skin weights must not be negative or all zero on a vertex, inverse bind
//!   matrices must be finite (typed [`BakeError`]s); triangles that repeat a vertex are dropped
//!   and counted ([`BakeReport::degenerate_triangles`]). Values finite in the source but not in
//!   the `f32` arithmetic of the encoding and the runtime are refused naming the clip, the joint
//!   and the property: key values whose difference overflows ([`BakeError::KeyRange`]), and
//!   model matrices or skin palettes (matrices and dual quaternions, as the runtime's jobs
//!   compute them) that overflow in the rest pose or at the evaluation times of a clip
//!   ([`BakeError::Overflow`]; see `measure`).
//!
//! This module holds [`bake`]; its parts, along the baker's seams:
//!
//! - the public types: `options` ([`BakeOptions`], [`MAX_BAKE_WORK`]), `report`
//!   ([`BakeReport`], [`ClipReport`]) and `error` ([`BakeError`]);
//! - the mesh side: `mesh` (one mesh, its degenerate triangles), `weights` (checks and the
//!   influence limit), `palette` (the split into parts) and `texture` (textures and materials);
//! - the clip side: `clip` (the encoding search and the lossless fallback), `tracks` and
//!   `quantize` and `pack` (the key encodings), `reduce` (key reduction), `measure` (the virtual-vertex
//!   error through the hierarchy) and `work` (the work budget);
//! - the morph side: `morph` (targets, weight tracks, their bound and sections);
//! - the spring bones: `springs` (their section);
//! - the file: `skeleton` (its section) and `write` (the encoded sections and their layout).

mod clip;
mod error;
mod measure;
mod mesh;
mod morph;
mod options;
mod pack;
mod palette;
mod quantize;
mod reduce;
mod report;
mod skeleton;
mod springs;
mod texture;
mod tracks;
mod weights;
mod work;
mod write;

#[cfg(test)]
mod tests;

use sinew::asset::Asset;

pub use error::BakeError;
pub use options::{BakeOptions, DEFAULT_MIN_SHELL, DEFAULT_TEXTURE_SIZE, MAX_BAKE_WORK};
pub use report::{BakeReport, ClipReport};
pub use texture::TextureReport;

use clip::bake_clip;
use measure::{posed, PoseCheck};
use mesh::bake_mesh;
use skeleton::skeleton_of;
use texture::bake_textures;
use work::Work;
use write::{write_file_with_morphs, EncClip, EncFile};

use crate::rig::Rig;

/// Bakes a rig.
///
/// # Errors
///
/// [`BakeError`] when the rig cannot be represented (too many joints or keys, non-finite rest
/// values, vertices or inverse bind matrices, key values, model matrices or skin palettes that
/// overflow `f32`, negative or all-zero skin weights, a palette too small for a triangle,
/// inconsistent indices). Running out of [`BakeOptions::max_work`] is
/// not an error: the clips that do not fit are stored lossless.
pub fn bake(rig: &Rig, opts: &BakeOptions) -> Result<(Vec<u8>, BakeReport), BakeError> {
    let shells = crate::shells::shells(rig, opts);
    bake_at_shells(rig, opts, &shells, opts.shell_from_mesh)
}

/// Bakes a rig as [`bake`] does, with the error measured at the given shell distances
/// (`shells`: one per joint, in each joint's frame, scene units; `from_mesh`: what the clip
/// reports say of them) instead of those `opts` gives for `rig`. The compression benchmark
/// bakes a clip without its model's meshes at the shells of the model with them
/// ([`crate::shells::shells`]).
///
/// # Errors
///
/// As [`bake`]; [`BakeError::Invalid`] when `shells` does not hold one finite, non-negative
/// distance per joint.
pub fn bake_at_shells(
    rig: &Rig,
    opts: &BakeOptions,
    shells: &[f64],
    from_mesh: bool,
) -> Result<(Vec<u8>, BakeReport), BakeError> {
    // The baker's decisions follow the runtime's results (its error measurements sample and
    // skin through the jobs): the build's own kernels make a bake the same bytes on every CPU.
    sinew::kernels::with_build_kernels(|| bake_with_build_kernels(rig, opts, shells, from_mesh))
}

/// [`bake_at_shells`] on the jobs' build kernels.
fn bake_with_build_kernels(
    rig: &Rig,
    opts: &BakeOptions,
    shells: &[f64],
    from_mesh: bool,
) -> Result<(Vec<u8>, BakeReport), BakeError> {
    if shells.len() != rig.joints.len() || !shells.iter().all(|s| *s >= 0.0 && s.is_finite()) {
        return Err(BakeError::Invalid(format!(
            "{} shell distances for {} joints, each finite and non-negative",
            shells.len(),
            rig.joints.len()
        )));
    }
    let skel = skeleton_of(rig)?;
    let springs = springs::springs_of(rig)?.map(|s| s.encode()).transpose()?;
    let mut report = BakeReport::default();
    let mut skins = Vec::new();
    for s in &rig.skins {
        if s.joints.iter().any(|&j| j >= rig.joints.len()) {
            return Err(BakeError::Invalid(format!("skin '{}' names a joint past the hierarchy", s.name)));
        }
        if let Some(joint) = s.inverse_bind.iter().position(|m| !m.iter().all(|v| v.is_finite())) {
            return Err(BakeError::NonFiniteBind { skin: s.name.clone(), joint });
        }
        skins.push((s.name.clone(), s.joints.iter().map(|&j| j as u16).collect(), s.inverse_bind.clone()));
    }
    // The rest pose as the runtime computes it (a model without clips shows it; joints without
    // tracks keep it): its model matrices and skin palettes must be finite in f32.
    let mut check = PoseCheck::new(&skins);
    posed(rig, &skel, None, &[0.0], &mut check, |_, _| Ok(()))?;
    let (textures, texture_map, texture_reports) = bake_textures(rig, opts)?;
    report.textures = texture_reports;
    morph::check_morphs(rig)?;
    let mut meshes = Vec::new();
    for m in &rig.meshes {
        meshes.push(bake_mesh(rig, m, opts, &mut report, &texture_map)?);
    }
    report.parts = meshes.iter().map(|m| m.parts.len()).sum();
    let mut clips = Vec::new();
    let unit = rig.meters_per_unit.filter(|u| *u > 0.0 && u.is_finite()).unwrap_or(1.0);
    let scene_opts = BakeOptions { tolerance: opts.tolerance / unit, shell: opts.shell / unit, ..*opts };
    let shell_from_mesh = from_mesh;
    let shell = if from_mesh { shells.iter().copied().fold(0.0, f64::max) * unit } else { opts.shell };
    let mut work = Work { left: opts.max_work };
    for c in &rig.clips {
        let (enc, rep) = bake_clip(rig, &skel, c, &scene_opts, shells, &mut work, &mut check)?;
        clips.push(enc);
        report.clips.push(rep);
    }
    let refs: Vec<&EncClip> = clips.iter().collect();
    let morphs: Vec<_> = (0..meshes.len())
        .filter_map(|i| morph::bake_morph(rig, i, &meshes[i], scene_opts.tolerance, opts.lossless))
        .collect();
    let weights: Vec<_> = (0..clips.len())
        .filter_map(|i| {
            morph::bake_weights(rig, i, &rig.clips[i], &clips[i], &morphs, scene_opts.tolerance, opts.lossless)
        })
        .collect();
    report.morph_bound = morphs.iter().map(|m| m.bound).chain(weights.iter().map(|w| w.bound)).fold(0.0, f64::max);
    let reports: Vec<sinew::asset::ClipReport> = report
        .clips
        .iter()
        .enumerate()
        .map(|(clip, c)| sinew::asset::ClipReport {
            clip,
            bound: opts.tolerance as f32,
            shell: shell as f32,
            shell_from_mesh,
            measured: !c.fallback,
            error: (c.max_error * unit) as f32,
            joint: c.max_error_joint_index,
            time: c.max_error_time as f32,
        })
        // A bound or distance that f32 cannot hold (options outside the CLI's checks) goes
        // unreported rather than failing the bake.
        .filter(|r| r.bound > 0.0 && [r.bound, r.shell, r.error].iter().all(|v| v.is_finite()))
        .collect();
    let bytes = write_file_with_morphs(&EncFile {
        skel: &skel,
        skins: &skins,
        meshes: &meshes,
        clips: &refs,
        morphs: (&morphs, &weights),
        textures: &textures,
        reports: &reports,
        springs: springs.as_deref(),
    });
    Asset::parse(&bytes).map_err(|e| BakeError::Encoding(e.to_string()))?;
    // Section sizes for the report.
    if let Ok(a) = Asset::parse(&bytes) {
        for (i, r) in report.clips.iter_mut().enumerate() {
            r.baked_bytes = a.clip(i).map(|c| c.byte_len()).unwrap_or(0);
        }
        report.morph_bytes =
            (0..a.num_meshes()).filter_map(|i| a.morph_targets(i)).map(|m| m.byte_len()).sum::<usize>()
                + (0..a.num_clips()).filter_map(|i| a.morph_weights(i)).map(|w| w.byte_len()).sum::<usize>();
        report.spring_bytes = a.springs().map_or(0, |s| s.byte_len());
    }
    report.bytes = bytes.len();
    Ok((bytes, report))
}
