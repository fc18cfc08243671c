//! Error measurement: angles between rotations, corrected nlerp's departure from slerp, joint
//! extents, and the displacement of virtual vertices at `shell` distance from every joint in
//! model space, through the hierarchy, with the encoded clip sampled by the runtime.

use sinew::asset::Asset;
use sinew::clip::RotationInterpolation;
use sinew::job::{LocalToModelJob, SamplingJob, SkinDualQuatJob, SkinMatrixJob};
use sinew::limits::MAX_SOA_JOINTS;
use sinew::math::{DualQuat, Mat4, SoaTransform, SymMat3};
use sinew::skeleton::Skeleton;

use super::tracks::key_value;
use super::write::{write_file, EncClip, EncSkeleton, EncSkin};
use super::BakeError;
use crate::eval::{self, M4};
use crate::rig::{Rig, RigChannel, RigClip};

/// Rotation angle between two unit quaternions: `4·asin(|a − ±b| / 2)`, accurate for tiny
/// angles.
pub(super) fn angle(a: [f64; 4], b: [f64; 4]) -> f64 {
    let s = if (0..4).map(|i| a[i] * b[i]).sum::<f64>() < 0.0 { -1.0 } else { 1.0 };
    let diff: f64 = (0..4).map(|i| (a[i] - s * b[i]).powi(2)).sum::<f64>().sqrt();
    4.0 * (diff / 2.0).min(1.0).asin()
}

/// Largest rotation angle (radians) by which the runtime's corrected nlerp departs from exact
/// slerp between consecutive kept keys of a rotation channel.
pub(super) fn nlerp_deviation(c: &RigChannel, keys: &[usize]) -> f64 {
    let q = |k: usize| {
        let v = key_value(c, k);
        sinew::math::Quat::new(v[0] as f32, v[1] as f32, v[2] as f32, v[3] as f32).normalize()
    };
    let mut worst = 0.0f64;
    for pair in keys.windows(2) {
        let (a, b) = (q(pair[0]), q(pair[1]));
        // Adjacent keys a few degrees apart deviate by far less than f32 resolution.
        if a.dot(b).abs() > 0.9999 {
            continue;
        }
        for s in [0.1f32, 0.2, 0.3, 0.7, 0.8, 0.9] {
            worst = worst
                .max(angle(a.nlerp_corrected(b, s).to_array().map(f64::from), a.slerp(b, s).to_array().map(f64::from)));
        }
    }
    worst
}

/// Per joint, the distance to its farthest descendant in the rest pose plus its shell distance.
pub(super) fn extents(rig: &Rig, shells: &[f64]) -> Vec<f64> {
    let pose = eval::local_pose(rig, None, 0.0);
    let model = eval::model_matrices(rig, &pose);
    let pos: Vec<[f64; 3]> = model.iter().map(|m| [m[3][0], m[3][1], m[3][2]]).collect();
    let mut ext = vec![0.0f64; rig.joints.len()];
    for j in (0..rig.joints.len()).rev() {
        let mut a = rig.joints[j].parent;
        while let Some(p) = a {
            let d = (0..3).map(|k| (pos[j][k] - pos[p][k]).powi(2)).sum::<f64>().sqrt();
            ext[p] = ext[p].max(d);
            a = rig.joints[p].parent;
        }
    }
    ext.iter().enumerate().map(|(j, e)| e + shells.get(j).copied().unwrap_or(0.0)).collect()
}

/// Largest virtual-vertex displacement between two model matrices.
fn shell_error(a: &M4, b: &M4, shell: f64) -> f64 {
    let mut worst = 0.0f64;
    for axis in 0..3 {
        for sgn in [-1.0, 1.0] {
            let mut p = [0.0; 3];
            p[axis] = sgn * shell;
            let (x, y) = (eval::transform_point(a, p), eval::transform_point(b, p));
            worst = worst.max((0..3).map(|k| (x[k] - y[k]).powi(2)).sum::<f64>().sqrt());
        }
    }
    worst
}

/// The runtime's `f32` products on a pose: the model matrices, and per skin the matrix palette
/// (model × inverse bind) and the dual-quaternion palette with its scale/shear factors, as the
/// runtime's jobs compute them. A value that overflows there is NaN or infinite on the device
/// (every skinned vertex of the joint with it), so the baker refuses the input instead.
pub(super) struct PoseCheck {
    /// Per skin: its name, its skeleton joints and its inverse bind matrices.
    skins: Vec<(String, Vec<u16>, Vec<Mat4<f32>>)>,
    palette: Vec<Mat4<f32>>,
    dual_quats: Vec<DualQuat<f32>>,
    scales: Vec<SymMat3<f32>>,
}

/// A value of a pose that is not finite in `f32`: the joint it belongs to and what it is.
pub(super) struct PoseFault {
    /// The joint (index into the rig's joints).
    pub(super) joint: usize,
    /// The value: the model matrix, or a skin's palette entry.
    pub(super) what: String,
}

impl PoseCheck {
    /// The check for the baked skins: name, skeleton joints and inverse bind matrices, as the
    /// file stores them.
    pub(super) fn new(skins: &[EncSkin]) -> Self {
        let skins = skins
            .iter()
            .map(|(name, joints, inverse_bind)| {
                (name.clone(), joints.clone(), inverse_bind.iter().map(Mat4::from_cols_array).collect())
            })
            .collect();
        PoseCheck { skins, palette: Vec::new(), dual_quats: Vec::new(), scales: Vec::new() }
    }

    /// The first value of the pose with model matrices `world` that is not finite: the model
    /// matrices parents first, then each skin's palettes.
    pub(super) fn fault(&mut self, world: &[Mat4<f32>]) -> Result<Option<PoseFault>, BakeError> {
        if let Some(joint) = world.iter().position(|m| !m.is_finite()) {
            return Ok(Some(PoseFault {
                joint,
                what: "model matrix (the product of its ancestors' transforms)".into(),
            }));
        }
        let job_error = |e: sinew::job::JobError| BakeError::Encoding(format!("skin palette: {e}"));
        for (name, joints, inverse_bind) in &self.skins {
            let n = joints.len();
            let joint_of = |i: usize| joints.get(i).map_or(0, |&j| usize::from(j));
            self.palette.resize(n, Mat4::IDENTITY);
            SkinMatrixJob::new(world, inverse_bind, &mut self.palette).with_joints(joints).run().map_err(job_error)?;
            if let Some(i) = self.palette.iter().position(|m| !m.is_finite()) {
                return Ok(Some(PoseFault {
                    joint: joint_of(i),
                    what: format!("skin '{name}' matrix (model matrix × inverse bind matrix {i})"),
                }));
            }
            self.dual_quats.resize(n, DualQuat::IDENTITY);
            self.scales.resize(n, SymMat3::IDENTITY);
            SkinDualQuatJob::new(world, inverse_bind, &mut self.dual_quats)
                .with_joints(joints)
                .with_scales(&mut self.scales)
                .run()
                .map_err(job_error)?;
            let finite = |s: &SymMat3<f32>| [s.xx, s.yy, s.zz, s.xy, s.xz, s.yz].iter().all(|v| v.is_finite());
            let bad = self
                .dual_quats
                .iter()
                .zip(&self.scales)
                .position(|(d, s)| !d.real.is_finite() || !d.dual.is_finite() || !finite(s));
            if let Some(i) = bad {
                return Ok(Some(PoseFault {
                    joint: joint_of(i),
                    what: format!(
                        "skin '{name}' dual quaternion and scale (of model matrix × inverse bind matrix {i})"
                    ),
                }));
            }
        }
        Ok(None)
    }
}

/// Poses the skeleton with the runtime at each of `times`: the encoded clip sampled (the rest
/// pose when `enc` is `None`), its model matrices composed by the runtime's `f32`
/// local-to-model job and checked by `check`, then handed to `each` with their time.
///
/// # Errors
///
/// [`BakeError::Overflow`] naming the clip, the time and the joint when `check` finds a value
/// that is not finite, [`BakeError::ClipEncoding`] when the encoded clip does not parse, and
/// `each`'s errors.
pub(super) fn posed(
    rig: &Rig,
    skel: &EncSkeleton,
    enc: Option<&EncClip>,
    times: &[f64],
    check: &mut PoseCheck,
    mut each: impl FnMut(f64, &[Mat4<f32>]) -> Result<(), BakeError>,
) -> Result<(), BakeError> {
    let clips: Vec<&EncClip> = enc.into_iter().collect();
    let bytes = write_file(skel, &[], &[], &clips);
    // The encoder writes what the source holds: a value the parser refuses is one of the input's
    // that f32 cannot carry through the encoding (the key range checks should have caught it).
    let asset = Asset::parse(&bytes).map_err(|e| match enc {
        Some(c) => BakeError::ClipEncoding { clip: c.name.clone(), detail: e.to_string() },
        None => BakeError::Encoding(e.to_string()),
    })?;
    let clip = match enc {
        Some(_) => Some(asset.clip(0).ok_or_else(|| BakeError::Encoding("clip missing".into()))?),
        None => None,
    };
    let skeleton: Box<Skeleton<f32, MAX_SOA_JOINTS>> = Box::new(
        asset
            .skeleton()
            .ok_or_else(|| BakeError::Encoding("skeleton missing".into()))?
            .to_skeleton()
            .map_err(|e| BakeError::Encoding(format!("{e:?}")))?,
    );
    let mut world = vec![Mat4::<f32>::IDENTITY; skeleton.num_joints()];
    let n = rig.joints.len();
    let soa = n.div_ceil(4);
    let mut rest = vec![SoaTransform::<f32>::IDENTITY; soa];
    for (i, r) in skel.rest.iter().enumerate() {
        let t = sinew::math::Transform::new(
            sinew::math::Vec3::new(r[0], r[1], r[2]),
            sinew::math::Quat::new(r[3], r[4], r[5], r[6]),
            sinew::math::Vec3::new(r[7], r[8], r[9]),
        );
        rest[i / 4].set_lane(i % 4, &t);
    }
    let mut out = rest.clone();
    let mut cursor = vec![0u16; clip.map_or(0, |c| c.num_tracks())];
    for &t in times {
        if let Some(clip) = clip {
            SamplingJob {
                clip,
                time: t as f32,
                rotation: RotationInterpolation::NlerpCorrected,
                rest_pose: &rest,
                cursor: &mut cursor,
                output: &mut out,
            }
            .run()
            .map_err(|e| BakeError::Encoding(e.to_string()))?;
        }
        LocalToModelJob::new(skeleton.view(), &out, &mut world)
            .run()
            .map_err(|e| BakeError::Encoding(e.to_string()))?;
        if let Some(f) = check.fault(&world)? {
            return Err(BakeError::Overflow {
                clip: enc.map(|c| (c.name.clone(), t as f32)),
                joint: rig.joints.get(f.joint).map(|j| j.name.clone()).unwrap_or_default(),
                what: f.what,
            });
        }
        each(t, &world)?;
    }
    Ok(())
}

/// Samples the encoded clip with the runtime at every evaluation time, composes the model
/// matrices with the runtime's `f32` local-to-model job (its rounding is part of what a device
/// shows: deep chains far from the origin add error the local transforms alone do not have),
/// checks them and the skin palettes for values `f32` cannot hold (`check`), and returns, per
/// joint, the largest virtual-vertex error against the source clip's model matrices and the
/// first time it was reached (the first evaluation time for joints without error). The
/// reference is evaluated time by time rather than kept for every time (times × joints
/// matrices reach gigabytes for long clips on large skeletons).
pub(super) fn measure(
    rig: &Rig,
    skel: &EncSkeleton,
    source: &RigClip,
    enc: &EncClip,
    times: &[f64],
    shells: &[f64],
    check: &mut PoseCheck,
) -> Result<(Vec<f64>, Vec<f64>), BakeError> {
    let n = rig.joints.len();
    let mut errors = vec![0.0f64; n];
    let mut at = vec![times.first().copied().unwrap_or(0.0); n];
    posed(rig, skel, Some(enc), times, check, |t, world| {
        let model: Vec<M4> = world.iter().map(|m| m.cols.map(|c| c.map(f64::from))).collect();
        let reference = eval::model_matrices(rig, &eval::local_pose(rig, Some(source), t));
        for (j, (m, r)) in model.iter().zip(&reference).enumerate().take(n) {
            let e = shell_error(m, r, shells.get(j).copied().unwrap_or(0.0));
            if e > errors[j] {
                errors[j] = e;
                at[j] = t;
            }
        }
        Ok(())
    })?;
    Ok((errors, at))
}
