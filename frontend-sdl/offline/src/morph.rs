//! Morph targets on the host, through the core's jobs: a mesh's weights at a clip time
//! ([`sample_weights`], `MorphWeightsJob`) and a part's bind-pose vertices with the weights
//! applied ([`morphed_part`], `MorphJob`), which skinning then takes as its input.

use sinew::asset::{Asset, MeshPart};
use sinew::job::{JobError, MorphJob, MorphWeightsJob};
use sinew::math::{Vec3, Vec4};

/// The morph weights of mesh `mesh` at time `t` of clip `clip` (`None`: the default weights);
/// empty for a mesh without morph targets.
///
/// # Errors
///
/// A [`JobError`] from the job (not expected for validated files).
pub fn sample_weights(asset: &Asset<'_>, mesh: usize, clip: Option<usize>, t: f32) -> Result<Vec<f32>, JobError> {
    let Some(targets) = asset.morph_targets(mesh) else { return Ok(Vec::new()) };
    let mut out = vec![0.0f32; targets.num_targets()];
    let mut cursor = 0u16;
    let tracks = clip.and_then(|c| asset.morph_weights(c));
    MorphWeightsJob::new(targets, tracks, t, &mut cursor, &mut out).run()?;
    Ok(out)
}

/// One part's bind-pose vertices, morphed.
#[derive(Debug, Clone, Default)]
pub struct MorphedPart {
    /// Positions.
    pub positions: Vec<Vec3<f32>>,
    /// Normals, when the part has them.
    pub normals: Option<Vec<Vec3<f32>>>,
    /// Tangents, when the part has them.
    pub tangents: Option<Vec<Vec4<f32>>>,
}

/// The vertices of part `index` (`part`) of mesh `mesh` with `weights` applied to its morph
/// targets; the bind pose when `weights` is empty or the mesh has no targets.
///
/// # Errors
///
/// A [`JobError`] when `weights` is shorter than the mesh's targets or not finite.
pub fn morphed_part(
    asset: &Asset<'_>,
    mesh: usize,
    index: usize,
    part: &MeshPart<'_>,
    weights: &[f32],
) -> Result<MorphedPart, JobError> {
    let (n, len) = (part.num_vertices(), part.inputs_len());
    let (mut positions, mut normals, mut tangents) =
        (vec![Vec3::ZERO; n], vec![Vec3::ZERO; len.normals], vec![Vec4::ZERO; len.tangents]);
    part.read_positions(&mut positions)?;
    let normals = part.read_normals(&mut normals)?.is_some().then_some(normals);
    let tangents = part.read_tangents(&mut tangents)?.is_some().then_some(tangents);
    let morph = if weights.is_empty() { None } else { asset.morph_targets(mesh).and_then(|m| m.part(index)) };
    let Some(morph) = morph else { return Ok(MorphedPart { positions, normals, tangents }) };
    let mut out = MorphedPart {
        positions: vec![Vec3::ZERO; n],
        normals: normals.as_ref().map(|_| vec![Vec3::ZERO; n]),
        tangents: tangents.as_ref().map(|_| vec![Vec4::ZERO; n]),
    };
    let mut job = MorphJob::new(morph, weights, &positions, &mut out.positions);
    if let (Some(src), Some(dst)) = (normals.as_deref(), out.normals.as_deref_mut()) {
        job = job.with_normals(src, dst);
    }
    if let (Some(src), Some(dst)) = (tangents.as_deref(), out.tangents.as_deref_mut()) {
        job = job.with_tangents(src, dst);
    }
    job.run()?;
    Ok(out)
}

#[cfg(test)]
mod tests;
