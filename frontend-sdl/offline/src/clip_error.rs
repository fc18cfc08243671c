//! Independent measurement of a baked file's clip errors against the model it was baked from:
//! the check on the baker's own estimate (`bake::measure`), sharing nothing with it but the rig
//! and its exact `f64` evaluation ([`crate::eval`]).
//!
//! For every clip, at every distinct source key time and at 0.2, 0.5 and 0.8 of each interval
//! between consecutive ones (corrected nlerp departs most from slerp near 0.2 and 0.8):
//!
//! - the **reference** is the source clip evaluated exactly in `f64` (glTF 2.0 interpolation,
//!   exact slerp) and composed through the hierarchy;
//! - the **baked** pose comes from the runtime alone: the `.sinew` clip sampled by
//!   [`SamplingJob`](sinew::job::SamplingJob) (corrected nlerp, as players sample) and
//!   composed by [`LocalToModelJob`](sinew::job::LocalToModelJob) through
//!   [`Model::sample`] and [`Model::world`], whatever the track format;
//! - the **shell error** of a joint is the largest displacement, between the two world
//!   matrices, of six virtual vertices at its shell distance along its ±x, ±y and ±z axes;
//! - the **vertex error** is the largest displacement of the source meshes' real vertices
//!   (bind positions, every influence the file has, weights normalized) skinned by linear blend
//!   skinning with the reference skin matrices (`f64`) and with the runtime's skin palette
//!   ([`Model::palette`]); rigid meshes follow their node. Morph targets are left out: their
//!   encoding has its own bound (`BakeReport::morph_bound`);
//! - the **joint errors** are, over every joint, the largest distance between the two world
//!   matrices' origins (the joint's position) and the largest angle between their rotations
//!   ([`joint_error`]): what a joint that moves no vertex (an IK pole target, an attachment
//!   point) shows of the clip, which neither error above needs to see.
//!
//! Errors are reported in meters (scene units times [`Rig::meters_per_unit`]).

use std::fmt;

use sinew::clip::RotationInterpolation;
use sinew::job::JobError;
use sinew::math::{Mat4, SoaTransform};

use crate::eval::{self, M4};
use crate::model::Model;
use crate::rig::{Rig, RigClip};
use crate::shells::{influences, length, m4_of, meters_per_unit};

/// Why the clips of a baked file could not be measured against a rig.
#[derive(Debug)]
pub enum MeasureError {
    /// The file's skeleton does not have the rig's joints.
    Joints {
        /// Joints of the rig.
        rig: usize,
        /// Joints of the file.
        file: usize,
    },
    /// The file's clips are not the rig's.
    Clips {
        /// What differs.
        detail: String,
    },
    /// The shells do not give one distance per joint.
    Shells {
        /// Joints of the rig.
        joints: usize,
        /// Shell distances given.
        shells: usize,
    },
    /// A runtime job refused the file's data.
    Job(JobError),
}

impl fmt::Display for MeasureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Joints { rig, file } => {
                write!(f, "the source model has {rig} joints and the baked file {file}: not baked from it")
            }
            Self::Clips { detail } => write!(f, "the baked clips are not the source model's: {detail}"),
            Self::Shells { joints, shells } => write!(f, "{shells} shell distances for {joints} joints"),
            Self::Job(e) => write!(f, "sampling the baked file: {e}"),
        }
    }
}

impl std::error::Error for MeasureError {}

/// The measured errors of one clip, in meters.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipError {
    /// Clip name (the source's).
    pub name: String,
    /// Times sampled: every distinct source key time and three points inside each interval.
    pub times: usize,
    /// Largest shell error.
    pub shell_error: f64,
    /// The joint with the largest shell error (empty without joints).
    pub shell_joint: String,
    /// The clip time of the largest shell error, seconds.
    pub shell_time: f64,
    /// Largest error on the source meshes' vertices (`None`: the model has no mesh vertices).
    pub vertex_error: Option<f64>,
    /// The clip time of the largest vertex error, seconds.
    pub vertex_time: f64,
    /// The largest joint errors (every joint, vertices or not).
    pub joints: JointErrors,
}

/// The largest position and rotation errors of a clip's joints, each with its joint and time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JointErrors {
    /// Largest distance between a joint's reference and baked world positions, meters.
    pub position: f64,
    /// The joint with the largest position error (empty without joints).
    pub position_joint: String,
    /// The clip time of the largest position error, seconds.
    pub position_time: f64,
    /// Largest angle between a joint's reference and baked world rotations, radians (joints
    /// whose world matrix is singular at a time are left out at that time: [`joint_error`]).
    pub rotation: f64,
    /// The joint with the largest rotation error (empty without joints).
    pub rotation_joint: String,
    /// The clip time of the largest rotation error, seconds.
    pub rotation_time: f64,
}

impl JointErrors {
    /// Takes in joint `joint`'s errors at time `t`: `position` in meters, `rotation` in radians
    /// (`None`: not defined there).
    pub fn add(&mut self, joint: &str, t: f64, position: f64, rotation: Option<f64>) {
        if position > self.position {
            self.position = position;
            joint.clone_into(&mut self.position_joint);
            self.position_time = t;
        }
        if let Some(r) = rotation.filter(|&r| r > self.rotation) {
            self.rotation = r;
            joint.clone_into(&mut self.rotation_joint);
            self.rotation_time = t;
        }
    }
}

/// The error of one joint between its reference world matrix and another (column-major,
/// scene units): the distance between their origins, and the angle in radians between their
/// rotations — each matrix's rotation is the orthogonal factor of the polar decomposition of
/// its upper 3 × 3, which takes scale and shear out — or `None` when either 3 × 3 is singular
/// (a scale of zero) or not finite, where a rotation is not defined.
#[must_use]
pub fn joint_error(reference: &M4, other: &M4) -> (f64, Option<f64>) {
    let position = length(core::array::from_fn(|r| reference[3][r] - other[3][r]));
    let rotation = match (orthogonal_factor(reference), orthogonal_factor(other)) {
        (Some(a), Some(b)) => {
            // For orthogonal A and B with AᵀB a rotation by θ, |A − B|_F = 2√2·sin(θ/2); accurate
            // for small angles where the trace's arccosine is not. Factors of opposite
            // handedness read a quarter turn apart at least; the arcsine's argument caps at 1.
            let d: f64 =
                (0..3).flat_map(|c| (0..3).map(move |r| (c, r))).map(|(c, r)| (a[c][r] - b[c][r]).powi(2)).sum();
            Some(2.0 * (d.sqrt() / (2.0 * 2f64.sqrt())).min(1.0).asin())
        }
        _ => None,
    };
    (position, rotation)
}

/// The orthogonal factor `Q` of the polar decomposition `M = Q·P` of `m`'s upper 3 × 3
/// (columns), by Newton's iteration `Q ← (Q + Q⁻ᵀ) / 2`; `None` when the 3 × 3 is not finite or
/// its determinant is below 1e-12 of the product of its column lengths.
fn orthogonal_factor(m: &M4) -> Option<[[f64; 3]; 3]> {
    let mut q: [[f64; 3]; 3] = core::array::from_fn(|c| core::array::from_fn(|r| m[c][r]));
    let columns: f64 = q.iter().map(|c| length(*c)).product();
    if !(columns.is_finite() && det3(&q).abs() > 1e-12 * columns) {
        return None;
    }
    for _ in 0..64 {
        let det = det3(&q);
        if !(det.is_finite() && det != 0.0) {
            return None;
        }
        // Q⁻ᵀ = cofactor(Q) / det: column c of the cofactor matrix is the cross product of the
        // other two columns.
        let cof = [cross(q[1], q[2]), cross(q[2], q[0]), cross(q[0], q[1])];
        let next: [[f64; 3]; 3] = core::array::from_fn(|c| core::array::from_fn(|r| 0.5 * (q[c][r] + cof[c][r] / det)));
        let change: f64 = (0..3)
            .flat_map(|c| (0..3).map(move |r| (c, r)))
            .map(|(c, r)| (next[c][r] - q[c][r]).abs())
            .fold(0.0, f64::max);
        q = next;
        if change < 1e-14 {
            break;
        }
    }
    Some(q)
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn det3(m: &[[f64; 3]; 3]) -> f64 {
    let c = cross(m[1], m[2]);
    m[0][0] * c[0] + m[0][1] * c[1] + m[0][2] * c[2]
}

/// Measures every clip of `baked` against the clip of `rig` it was baked from (same order),
/// with `shells[j]` the shell distance of joint `j` in scene units.
///
/// # Errors
///
/// [`MeasureError`] when `baked` was not baked from `rig` (joint or clip counts or clip names
/// differ), `shells` has the wrong length, or a runtime job refuses the file.
pub fn measure_clips(rig: &Rig, baked: &Model, shells: &[f64]) -> Result<Vec<ClipError>, MeasureError> {
    // On the jobs' build kernels, as the baker measures: the same figures on every CPU.
    sinew::kernels::with_build_kernels(|| measure_with_build_kernels(rig, baked, shells))
}

/// [`measure_clips`] on the jobs' build kernels.
fn measure_with_build_kernels(rig: &Rig, baked: &Model, shells: &[f64]) -> Result<Vec<ClipError>, MeasureError> {
    let file_joints = baked.skeleton().num_joints();
    if file_joints != rig.joints.len() {
        return Err(MeasureError::Joints { rig: rig.joints.len(), file: file_joints });
    }
    if shells.len() != rig.joints.len() {
        return Err(MeasureError::Shells { joints: rig.joints.len(), shells: shells.len() });
    }
    let asset = baked.asset();
    if asset.num_clips() != rig.clips.len() {
        return Err(MeasureError::Clips {
            detail: format!("{} clips in the source, {} in the file", rig.clips.len(), asset.num_clips()),
        });
    }
    let vertices = Vertices::of(rig);
    let mut out = Vec::with_capacity(rig.clips.len());
    for (i, clip) in rig.clips.iter().enumerate() {
        let name = asset.clip(i).map(|c| c.name().to_owned()).unwrap_or_default();
        // The baker cuts names to 255 bytes.
        if name.is_empty() && !clip.name.is_empty() || !clip.name.starts_with(&name) {
            return Err(MeasureError::Clips {
                detail: format!("clip {i} is '{}' in the source, '{name}' in the file", clip.name),
            });
        }
        out.push(measure_clip(rig, baked, i, clip, shells, &vertices)?);
    }
    Ok(out)
}

/// The times a clip is measured at: every distinct key time of its joint channels and 0.2, 0.5
/// and 0.8 of each interval between two of them (the start time alone without keys).
#[must_use]
pub fn measure_times(clip: &RigClip) -> Vec<f64> {
    let mut keys: Vec<f64> = clip.channels.iter().flat_map(|c| c.times.iter().map(|&t| f64::from(t))).collect();
    keys.sort_by(f64::total_cmp);
    keys.dedup();
    if keys.is_empty() {
        return vec![f64::from(clip.time_range().0)];
    }
    let mut times = Vec::with_capacity(4 * keys.len());
    for (i, &t) in keys.iter().enumerate() {
        times.push(t);
        if let Some(&next) = keys.get(i + 1) {
            times.extend([0.2, 0.5, 0.8].map(|f| t + (next - t) * f));
        }
    }
    times
}

fn measure_clip(
    rig: &Rig,
    baked: &Model,
    index: usize,
    clip: &RigClip,
    shells: &[f64],
    vertices: &Vertices,
) -> Result<ClipError, MeasureError> {
    let unit = meters_per_unit(rig);
    let times = measure_times(clip);
    let mut cursor = Vec::new();
    let mut pose: Vec<SoaTransform<f32>> = Vec::new();
    let mut world: Vec<Mat4<f32>> = Vec::new();
    let mut result = ClipError {
        name: clip.name.clone(),
        times: times.len(),
        shell_error: 0.0,
        shell_joint: String::new(),
        shell_time: times.first().copied().unwrap_or(0.0),
        vertex_error: (!vertices.is_empty()).then_some(0.0),
        vertex_time: times.first().copied().unwrap_or(0.0),
        joints: JointErrors::default(),
    };
    for &t in &times {
        baked
            .sample(Some(index), t as f32, RotationInterpolation::NlerpCorrected, &mut cursor, &mut pose)
            .map_err(MeasureError::Job)?;
        baked.world(&pose, &mut world).map_err(MeasureError::Job)?;
        let reference = eval::model_matrices(rig, &eval::local_pose(rig, Some(clip), t));
        for (j, (r, b)) in reference.iter().zip(&world).enumerate() {
            let b = b.cols.map(|c| c.map(f64::from));
            let name = rig.joints.get(j).map_or("", |n| n.name.as_str());
            let e = shell_displacement(r, &b, shells.get(j).copied().unwrap_or(0.0));
            if e > result.shell_error {
                result.shell_error = e;
                name.clone_into(&mut result.shell_joint);
                result.shell_time = t;
            }
            let (position, rotation) = joint_error(r, &b);
            result.joints.add(name, t, position * unit, rotation);
        }
        if let Some(worst) = result.vertex_error {
            let e = vertices.error(baked, &reference, &world).map_err(MeasureError::Job)?;
            if e > worst {
                result.vertex_error = Some(e);
                result.vertex_time = t;
            }
        }
    }
    result.shell_error *= unit;
    result.vertex_error = result.vertex_error.map(|e| e * unit);
    Ok(result)
}

/// Largest distance between `a · p` and `b · p` over the six points `p` at `shell` along the
/// ±x, ±y, ±z axes.
fn shell_displacement(a: &M4, b: &M4, shell: f64) -> f64 {
    let d: M4 = core::array::from_fn(|c| core::array::from_fn(|r| a[c][r] - b[c][r]));
    (0..3)
        .flat_map(|axis| [-shell, shell].map(|s| length(core::array::from_fn(|r| d[3][r] + s * d[axis][r]))))
        .fold(0.0, f64::max)
}

/// A bind position and its influences (skin joint, normalized weight).
type SkinnedVertex = ([f64; 3], Vec<(usize, f64)>);

/// The source meshes' vertices, ready to skin.
struct Vertices {
    /// Per skinned primitive: the skin index, then per vertex its bind position and influences.
    skinned: Vec<(usize, Vec<SkinnedVertex>)>,
    /// Per rigid mesh on a node: the node and its vertices.
    rigid: Vec<(usize, Vec<[f64; 3]>)>,
    /// Per skin, the inverse bind matrices in `f64`.
    inverse_bind: Vec<Vec<M4>>,
    /// Per skin, the rig joint of each skin joint.
    joints: Vec<Vec<usize>>,
}

impl Vertices {
    fn of(rig: &Rig) -> Vertices {
        let mut skinned = Vec::new();
        let mut rigid = Vec::new();
        for mesh in &rig.meshes {
            match mesh.skin.filter(|&s| s < rig.skins.len()) {
                Some(skin) => {
                    for p in &mesh.primitives {
                        let verts = (0..p.positions.len())
                            .map(|v| {
                                let pos = p.positions[v].map(f64::from);
                                (pos, influences(p.influences, &p.joint_indices, &p.joint_weights, v))
                            })
                            .filter(|(_, inf)| !inf.is_empty())
                            .collect();
                        skinned.push((skin, verts));
                    }
                }
                None => {
                    let Some(node) = mesh.node.filter(|&n| n < rig.joints.len()) else { continue };
                    let verts = mesh.primitives.iter().flat_map(|p| p.positions.iter().map(|v| v.map(f64::from)));
                    rigid.push((node, verts.collect()));
                }
            }
        }
        Vertices {
            skinned,
            rigid,
            inverse_bind: rig.skins.iter().map(|s| s.inverse_bind.iter().map(m4_of).collect()).collect(),
            joints: rig.skins.iter().map(|s| s.joints.clone()).collect(),
        }
    }

    fn is_empty(&self) -> bool {
        self.skinned.iter().all(|(_, v)| v.is_empty()) && self.rigid.iter().all(|(_, v)| v.is_empty())
    }

    /// Largest vertex displacement (scene units) between the reference world matrices and the
    /// runtime's.
    fn error(&self, baked: &Model, reference: &[M4], world: &[Mat4<f32>]) -> Result<f64, JobError> {
        let mut worst = 0.0f64;
        // Skin matrices per skin: the reference in f64, the runtime's palette in f32.
        let mut palettes: Vec<Option<(Vec<M4>, Vec<M4>)>> = vec![None; self.joints.len()];
        for (skin, verts) in &self.skinned {
            if palettes[*skin].is_none() {
                let exact: Vec<M4> = self.joints[*skin]
                    .iter()
                    .zip(&self.inverse_bind[*skin])
                    .map(|(&j, ib)| reference.get(j).map_or(*ib, |w| eval::mul(w, ib)))
                    .collect();
                let runtime: Vec<M4> =
                    baked.palette(world, *skin)?.iter().map(|m| m.cols.map(|c| c.map(f64::from))).collect();
                palettes[*skin] = Some((exact, runtime));
            }
            let Some((exact, runtime)) = &palettes[*skin] else { continue };
            for (pos, inf) in verts {
                let (mut a, mut b) = ([0.0; 3], [0.0; 3]);
                for &(j, w) in inf {
                    let (Some(e), Some(r)) = (exact.get(j), runtime.get(j)) else { continue };
                    let (pa, pb) = (eval::transform_point(e, *pos), eval::transform_point(r, *pos));
                    for k in 0..3 {
                        a[k] += w * pa[k];
                        b[k] += w * pb[k];
                    }
                }
                worst = worst.max(length(core::array::from_fn(|k| a[k] - b[k])));
            }
        }
        for (node, verts) in &self.rigid {
            let (Some(e), Some(r)) = (reference.get(*node), world.get(*node)) else { continue };
            let r = r.cols.map(|c| c.map(f64::from));
            for pos in verts {
                let (pa, pb) = (eval::transform_point(e, *pos), eval::transform_point(&r, *pos));
                worst = worst.max(length(core::array::from_fn(|k| pa[k] - pb[k])));
            }
        }
        Ok(worst)
    }
}

impl ClipError {
    /// One line for people: `bound` (meters) and how the shell was set (`shell`, e.g. "a
    /// 0.03 m shell"), then the largest shell error with its joint and time, the largest
    /// vertex error with its time, and the largest joint position and rotation errors with
    /// their joints and times.
    #[must_use]
    pub fn describe(&self, bound: f64, shell: &str) -> String {
        let within = |e: f64| if e <= bound { "within" } else { "OVER" };
        let mut s = format!(
            "clip '{}': bound {bound:.1e} m at {shell}; shell error {:.2e} m ({} bound; joint '{}' at {:.4} s; {} times: source keys and three points between each two)",
            self.name,
            self.shell_error,
            within(self.shell_error),
            self.shell_joint,
            self.shell_time,
            self.times
        );
        match self.vertex_error {
            Some(v) => s += &format!("; vertex error {v:.2e} m ({} bound; at {:.4} s)", within(v), self.vertex_time),
            None => s += "; no mesh vertices",
        }
        let j = &self.joints;
        s += &format!(
            "; largest joint errors: position {:.2e} m ({} bound; joint '{}' at {:.4} s), rotation {:.2e} rad (joint '{}' at {:.4} s)",
            j.position,
            within(j.position),
            j.position_joint,
            j.position_time,
            j.rotation,
            j.rotation_joint,
            j.rotation_time
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::joint_error;
    use crate::eval::{Trs, M4};

    fn matrix(t: [f64; 3], angle: f64, s: [f64; 3]) -> M4 {
        // A rotation about the axis (1, 2, 2) / 3.
        let (sin, cos) = (angle / 2.0).sin_cos();
        Trs { t, r: [sin / 3.0, 2.0 * sin / 3.0, 2.0 * sin / 3.0, cos], s }.matrix()
    }

    #[test]
    fn the_joint_error_is_the_distance_and_the_angle_with_scale_taken_out() {
        let a = matrix([1.0, 2.0, 3.0], 0.2, [2.0, 0.5, 3.0]);
        let b = matrix([1.0, 2.0, 3.5], 0.2 + 1e-4, [2.0, 0.5, 3.0]);
        let (position, rotation) = joint_error(&a, &b);
        assert!((position - 0.5).abs() < 1e-12, "{position}");
        let rotation = rotation.expect("both have a rotation");
        assert!((rotation - 1e-4).abs() < 1e-9, "{rotation}");
        // A large angle and a different scale on each side.
        let c = matrix([0.0; 3], 2.5, [0.01, 0.01, 0.01]);
        let (_, rotation) = joint_error(&a, &c);
        assert!((rotation.expect("a rotation") - 2.3).abs() < 1e-9, "{rotation:?}");
        // A scale of zero has no rotation.
        let flat = matrix([0.0; 3], 0.2, [1.0, 0.0, 1.0]);
        assert_eq!(joint_error(&a, &flat).1, None);
    }
}
