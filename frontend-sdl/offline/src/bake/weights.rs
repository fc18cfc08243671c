//! Skin weights of one primitive: checked (joints within the skin, finite, not negative, not
//! all zero on a vertex), slots that are zero on every vertex dropped, and the largest
//! `max_influences` kept per vertex, renormalized when some were cut.

use super::{BakeError, BakeReport};
use crate::rig::{RigMesh, RigPrimitive};

/// A primitive's weights as written: influences per vertex, then the joint (a skin joint index)
/// and the weight of every slot of every vertex.
pub(super) type Weights = (usize, Vec<u16>, Vec<f32>);

/// The weights of primitive `pi` (`p`) of mesh `m`, whose skin has `sj` joints, with at most
/// `kmax` influences per vertex; vertices that lose an influence are counted in
/// [`BakeReport::clamped_vertices`].
pub(super) fn limit_weights(
    m: &RigMesh,
    pi: usize,
    p: &RigPrimitive,
    sj: usize,
    kmax: usize,
    report: &mut BakeReport,
) -> Result<Weights, BakeError> {
    let n = p.positions.len();
    let k_in = p.influences;
    // Slots that are zero on every vertex are dropped (e.g. 4 slots holding 1 joint).
    let used = (0..n)
        .map(|v| (0..k_in).filter(|&i| p.joint_weights.get(v * k_in + i).is_some_and(|&w| w != 0.0)).count())
        .max()
        .unwrap_or(1)
        .max(1);
    let k = used.min(kmax);
    let mut joints = Vec::with_capacity(n * k);
    let mut weights = Vec::with_capacity(n * k);
    for v in 0..n {
        let mut pairs: Vec<(u16, f32)> = (0..k_in)
            .map(|i| {
                (
                    p.joint_indices.get(v * k_in + i).copied().unwrap_or(0),
                    p.joint_weights.get(v * k_in + i).copied().unwrap_or(0.0),
                )
            })
            .collect();
        if pairs.iter().any(|&(j, w)| w != 0.0 && j as usize >= sj) {
            return Err(BakeError::Invalid(format!("mesh '{}' has a joint index past its skin", m.name)));
        }
        if pairs.iter().any(|&(_, w)| !w.is_finite()) {
            return Err(BakeError::Invalid(format!(
                "mesh '{}' primitive {pi} vertex {v} has a non-finite weight",
                m.name
            )));
        }
        if pairs.iter().any(|&(_, w)| w < 0.0) {
            return Err(BakeError::NegativeWeight { mesh: m.name.clone(), primitive: pi, vertex: v });
        }
        if pairs.iter().all(|&(_, w)| w == 0.0) {
            return Err(BakeError::ZeroWeights { mesh: m.name.clone(), primitive: pi, vertex: v });
        }
        pairs.sort_by(|a, b| b.1.total_cmp(&a.1));
        let dropped = pairs[k..].iter().any(|&(_, w)| w != 0.0);
        let kept = &mut pairs[..k];
        if dropped {
            report.clamped_vertices += 1;
            let sum: f32 = kept.iter().map(|p| p.1).sum();
            if sum > 0.0 {
                kept.iter_mut().for_each(|p| p.1 /= sum);
            }
        }
        for &(j, w) in kept.iter() {
            joints.push(if w == 0.0 { 0 } else { j });
            weights.push(w);
        }
    }
    Ok((k, joints, weights))
}
