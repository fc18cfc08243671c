//! Skin palettes: model matrix × inverse bind matrix, per skin joint, as matrices or as dual
//! quaternions.

use crate::job::JobError;
use crate::math::{mat4::mul_mat4, DualQuat, Mat4, SymMat3};
use crate::platform::dispatch::{dispatch, PerSet};
use crate::platform::SIMD_LANES;
use crate::real::Real;

/// Checks the inputs shared by both palette jobs; returns the palette length.
fn validate_inputs<R: Real>(
    model: &[Mat4<R>],
    inverse_bind: &[Mat4<R>],
    joints: Option<&[u16]>,
    output_len: usize,
) -> Result<usize, JobError> {
    let n = inverse_bind.len();
    match joints {
        Some(j) => {
            if j.len() != n {
                return Err(JobError::LengthMismatch);
            }
            if j.iter().any(|&k| k as usize >= model.len()) {
                return Err(JobError::JointIndexOutOfRange);
            }
        }
        None => {
            if model.len() < n {
                return Err(JobError::InputTooSmall);
            }
        }
    }
    if output_len < n {
        return Err(JobError::OutputTooSmall);
    }
    Ok(n)
}

#[inline(always)]
fn model_of<'m, R>(model: &'m [Mat4<R>], joints: Option<&[u16]>, i: usize) -> &'m Mat4<R> {
    match joints {
        Some(j) => &model[j[i] as usize],
        None => &model[i],
    }
}

/// Builds a matrix palette: `output[i] = model[joints[i]] × inverse_bind[i]`.
///
/// # Examples
///
/// Two joints bound 1 m apart; the second moves up 0.5 m, and its palette entry takes the
/// vertices it carries along:
///
/// ```
/// use sinew::job::SkinMatrixJob;
/// use sinew::math::{Mat4, Vec3};
///
/// // Bind pose: model matrices when the mesh was bound, inverted once (a baked skin stores them).
/// let bind = [Mat4::IDENTITY, Mat4::from_translation(Vec3::new(0.0, 1.0, 0.0))];
/// let inverse_bind = bind.map(|m| m.inverse().unwrap_or(Mat4::IDENTITY));
///
/// // This frame's model matrices (from `LocalToModelJob`).
/// let model = [Mat4::IDENTITY, Mat4::from_translation(Vec3::new(0.0, 1.5, 0.0))];
/// let mut palette = [Mat4::IDENTITY; 2];
/// SkinMatrixJob { model: &model, inverse_bind: &inverse_bind, joints: None, output: &mut palette }.run()?;
///
/// assert_eq!(palette[0], Mat4::IDENTITY);
/// let tip = palette[1].transform_point3(Vec3::new(0.0, 1.2, 0.0)); // a vertex bound to joint 1
/// assert!((tip - Vec3::new(0.0, 1.7, 0.0)).length() < 1e-6);
/// # Ok::<(), sinew::job::JobError>(())
/// ```
#[derive(Debug)]
pub struct SkinMatrixJob<'a, R: Real> {
    /// Model-space joint matrices (from [`LocalToModelJob`](crate::job::LocalToModelJob)).
    pub model: &'a [Mat4<R>],
    /// One inverse bind matrix per skin joint; its length is the palette length.
    pub inverse_bind: &'a [Mat4<R>],
    /// Skeleton joint of each skin joint (same length as `inverse_bind`); `None` maps skin joint
    /// `i` to skeleton joint `i`.
    pub joints: Option<&'a [u16]>,
    /// The palette, at least `inverse_bind.len()` long; extra entries are untouched.
    pub output: &'a mut [Mat4<R>],
}

impl<'a, R: Real> SkinMatrixJob<'a, R> {
    /// The job for a skin whose joint `i` is skeleton joint `i`; set [`joints`](Self::joints)
    /// for any other mapping.
    #[must_use]
    pub fn new(model: &'a [Mat4<R>], inverse_bind: &'a [Mat4<R>], output: &'a mut [Mat4<R>]) -> Self {
        SkinMatrixJob { model, inverse_bind, joints: None, output }
    }

    /// The job with skin joint `i` taken from skeleton joint `joints[i]`.
    #[must_use]
    pub fn with_joints(self, joints: &'a [u16]) -> Self {
        SkinMatrixJob { joints: Some(joints), ..self }
    }
}

impl<R: Real> SkinMatrixJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// [`JobError::LengthMismatch`] when `joints` and `inverse_bind` differ in length,
    /// [`JobError::JointIndexOutOfRange`] when a joint index is not below `model.len()`,
    /// [`JobError::InputTooSmall`] when, without `joints`, `model` is shorter than
    /// `inverse_bind`, [`JobError::OutputTooSmall`] when `output` is.
    pub fn validate(&self) -> Result<(), JobError> {
        validate_inputs(self.model, self.inverse_bind, self.joints, self.output.len()).map(|_| ())
    }

    /// Validates, then fills the palette.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    pub fn run(&mut self) -> Result<(), JobError> {
        let n = validate_inputs(self.model, self.inverse_bind, self.joints, self.output.len())?;
        if !SIMD_LANES {
            for i in 0..n {
                self.output[i] = mul_mat4(model_of(self.model, self.joints, i), &self.inverse_bind[i]);
            }
            return Ok(());
        }
        dispatch(LanePalette(self));
        Ok(())
    }
}

/// A matrix palette's lane products (`skin_matrix/kernels.rs`) as a dispatched kernel.
struct LanePalette<'j, 'a, R: Real>(&'j mut SkinMatrixJob<'a, R>);

impl<R: Real> PerSet for LanePalette<'_, '_, R> {
    type Output = ();
    #[inline(always)]
    fn build(self) {
        build::palette(self.0);
    }
    #[cfg(sinew_dispatch)]
    #[inline(always)]
    fn v3(self) {
        v3::palette(self.0);
    }
}

/// The lane kernels (`skin_matrix/kernels.rs`) in the build's own kernel set.
mod build {
    /// The kernel set of this copy of the kernels: the build's own.
    const V3: bool = false;
    include!("skin_matrix/kernels.rs");
}

/// The lane kernels (`skin_matrix/kernels.rs`) in the x86-64-v3 kernel set, which [`dispatch`]
/// runs on CPUs with the level (in builds with run-time dispatch only).
#[cfg(sinew_dispatch)]
mod v3 {
    /// The kernel set of this copy of the kernels: x86-64-v3.
    const V3: bool = true;
    include!("skin_matrix/kernels.rs");
}

/// Builds a dual-quaternion palette: the rigid part of `model[joints[i]] × inverse_bind[i]`,
/// and optionally each skin matrix's scale/shear factor.
///
/// Dual quaternions carry rotation and translation only. Without [`scales`](Self::scales), a
/// skin matrix with scale or shear keeps its rotation (columns are normalized) and translation,
/// and its scale is dropped. With `scales`, each skin matrix `[A | t]` is split as
/// [`DualQuat::from_mat4_scaled`] does: `A = R·P` (polar decomposition), the dual quaternion
/// holds `(R, t)` and `scales[i]` holds `P` ([`SymMat3::IDENTITY`] for rigid joints, whose dual
/// quaternion is then the same bits as without `scales`); skin with
/// [`Palette::ScaledDualQuats`](crate::job::Palette::ScaledDualQuats).
///
/// # Examples
///
/// A joint bound at (0, 1, 0) turns a quarter turn about +Z: its dual quaternion swings a
/// vertex 1 m to the joint's +X side round to 1 m above it.
///
/// ```
/// use core::f32::consts::FRAC_PI_2;
/// use sinew::job::SkinDualQuatJob;
/// use sinew::math::{DualQuat, Mat4, Quat, Vec3};
///
/// let at = Vec3::new(0.0, 1.0, 0.0);
/// let inverse_bind = [Mat4::from_translation(-at)];
/// let model = [Mat4::from_trs(at, Quat::from_axis_angle(Vec3::Z, FRAC_PI_2), Vec3::ONE)];
/// let mut palette = [DualQuat::IDENTITY];
/// SkinDualQuatJob::new(&model, &inverse_bind, &mut palette).run()?;
///
/// let v = palette[0].transform_point3(Vec3::new(1.0, 1.0, 0.0));
/// assert!((v - Vec3::new(0.0, 2.0, 0.0)).length() < 1e-6);
/// # Ok::<(), sinew::job::JobError>(())
/// ```
#[derive(Debug)]
pub struct SkinDualQuatJob<'a, R: Real> {
    /// Model-space joint matrices.
    pub model: &'a [Mat4<R>],
    /// One inverse bind matrix per skin joint; its length is the palette length.
    pub inverse_bind: &'a [Mat4<R>],
    /// Skeleton joint of each skin joint; `None` maps skin joint `i` to skeleton joint `i`.
    pub joints: Option<&'a [u16]>,
    /// The palette, at least `inverse_bind.len()` long; extra entries are untouched.
    pub output: &'a mut [DualQuat<R>],
    /// Each skin matrix's scale/shear factor `P`, at least `inverse_bind.len()` long, or `None`
    /// to drop scale (see the type's docs).
    pub scales: Option<&'a mut [SymMat3<R>]>,
}

impl<'a, R: Real> SkinDualQuatJob<'a, R> {
    /// The job for a skin whose joint `i` is skeleton joint `i`; set [`joints`](Self::joints)
    /// for any other mapping.
    #[must_use]
    pub fn new(model: &'a [Mat4<R>], inverse_bind: &'a [Mat4<R>], output: &'a mut [DualQuat<R>]) -> Self {
        SkinDualQuatJob { model, inverse_bind, joints: None, output, scales: None }
    }

    /// The job with skin joint `i` taken from skeleton joint `joints[i]`.
    #[must_use]
    pub fn with_joints(self, joints: &'a [u16]) -> Self {
        SkinDualQuatJob { joints: Some(joints), ..self }
    }

    /// The job with each skin matrix's scale/shear factor written to `scales`.
    #[must_use]
    pub fn with_scales(self, scales: &'a mut [SymMat3<R>]) -> Self {
        SkinDualQuatJob { scales: Some(scales), ..self }
    }
}

impl<R: Real> SkinDualQuatJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// The same rules as [`SkinMatrixJob::validate`]; [`JobError::OutputTooSmall`] also when
    /// `scales` is shorter than `inverse_bind`.
    pub fn validate(&self) -> Result<(), JobError> {
        self.checked_len().map(|_| ())
    }

    fn checked_len(&self) -> Result<usize, JobError> {
        let n = validate_inputs(self.model, self.inverse_bind, self.joints, self.output.len())?;
        if self.scales.as_ref().is_some_and(|s| s.len() < n) {
            return Err(JobError::OutputTooSmall);
        }
        Ok(n)
    }

    /// Validates, then fills the palette.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    pub fn run(&mut self) -> Result<(), JobError> {
        let n = self.checked_len()?;
        match self.scales.as_deref_mut() {
            None => {
                for i in 0..n {
                    let m = mul_mat4(model_of(self.model, self.joints, i), &self.inverse_bind[i]);
                    self.output[i] = DualQuat::from_mat4_rigid(&m);
                }
            }
            Some(scales) => {
                for (i, (out, scale)) in self.output[..n].iter_mut().zip(scales[..n].iter_mut()).enumerate() {
                    let m = mul_mat4(model_of(self.model, self.joints, i), &self.inverse_bind[i]);
                    (*out, *scale) = DualQuat::from_mat4_scaled(&m);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{Quat, Vec3};

    #[test]
    fn validity() {
        let model = [Mat4::<f32>::IDENTITY; 3];
        let ib = [Mat4::IDENTITY; 2];
        let s = Mat4::from_cols_array(&[9.0; 16]);
        let sdq = DualQuat { real: Quat::new(9.0, 9.0, 9.0, 9.0), dual: Quat::new(9.0, 9.0, 9.0, 9.0) };
        // joints / inverse_bind length mismatch.
        let mut out = [s; 2];
        let mut job = SkinMatrixJob { model: &model, inverse_bind: &ib, joints: Some(&[0]), output: &mut out };
        assert_eq!(job.validate(), Err(JobError::LengthMismatch));
        assert_eq!(job.run(), Err(JobError::LengthMismatch));
        assert!(out.iter().all(|m| *m == s));
        // Joint index out of range.
        let mut job = SkinMatrixJob { model: &model, inverse_bind: &ib, joints: Some(&[0, 3]), output: &mut out };
        assert_eq!(job.run(), Err(JobError::JointIndexOutOfRange));
        assert!(out.iter().all(|m| *m == s));
        // Identity mapping with too few model matrices.
        let mut job = SkinMatrixJob { model: &model[..1], inverse_bind: &ib, joints: None, output: &mut out };
        assert_eq!(job.run(), Err(JobError::InputTooSmall));
        assert!(out.iter().all(|m| *m == s));
        // Output too small.
        let mut short = [s; 1];
        let mut job = SkinMatrixJob { model: &model, inverse_bind: &ib, joints: None, output: &mut short };
        assert_eq!(job.run(), Err(JobError::OutputTooSmall));
        assert_eq!(short[0], s);
        // The dual-quaternion job shares the rules.
        let mut dq = [sdq; 1];
        let mut job = SkinDualQuatJob::new(&model, &ib, &mut dq);
        assert_eq!(job.validate(), Err(JobError::OutputTooSmall));
        assert_eq!(job.run(), Err(JobError::OutputTooSmall));
        assert_eq!(dq[0], sdq);
        let mut dq = [sdq; 2];
        let mut job = SkinDualQuatJob::new(&model, &ib, &mut dq).with_joints(&[5, 0]);
        assert_eq!(job.run(), Err(JobError::JointIndexOutOfRange));
        assert!(dq.iter().all(|d| *d == sdq));
    }

    #[test]
    fn palette_is_model_times_inverse_bind() {
        let a = Mat4::from_trs(Vec3::new(1.0f32, 2.0, 3.0), Quat::from_axis_angle(Vec3::Y, 0.5), Vec3::ONE);
        let b = Mat4::from_trs(Vec3::new(-1.0f32, 0.0, 0.5), Quat::from_axis_angle(Vec3::X, -0.3), Vec3::ONE);
        let model = [a, b];
        let ib = [b.inverse().unwrap(), a.inverse().unwrap()];
        let mut out = [Mat4::ZERO; 3];
        SkinMatrixJob { model: &model, inverse_bind: &ib, joints: Some(&[1, 0]), output: &mut out }.run().unwrap();
        for m in &out[..2] {
            for (x, y) in m.to_cols_array().iter().zip(Mat4::<f32>::IDENTITY.to_cols_array().iter()) {
                assert!((x - y).abs() < 1.0e-5);
            }
        }
        assert_eq!(out[2], Mat4::ZERO);
        let mut dq = [DualQuat::IDENTITY; 2];
        SkinDualQuatJob::new(&model, &ib, &mut dq).run().unwrap();
        let p = Vec3::new(0.3, 0.2, 0.1);
        let m0 = a * ib[0];
        assert!((dq[0].transform_point3(p) - m0.transform_point3(p)).max_abs() < 1.0e-5);
    }

    /// The palette (lane products where lanes are SIMD registers) in each kernel set this build
    /// and CPU have gives the rule's bits, `mul_mat4`'s (the scalar product of
    /// microcontrollers), or with fused multiply-adds agrees within the rounding of its sums
    /// (entries below 4, so every partial sum below 64: four ulps at 64); Q16 lanes never fuse.
    #[test]
    fn palette_gives_the_scalar_product() {
        use crate::platform::dispatch::{with_kernels, Kernels};
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        };
        let q = |m: &Mat4<f32>| Mat4 { cols: m.cols.map(|c| c.map(crate::real::Q16::from_f32)) };
        for _ in 0..40 {
            let mut m = || Mat4 { cols: core::array::from_fn(|_| core::array::from_fn(|_| rnd() * 4.0)) };
            let model: [Mat4<f32>; 7] = core::array::from_fn(|_| m());
            let ib: [Mat4<f32>; 5] = core::array::from_fn(|_| m());
            let joints = [6, 0, 3, 3, 1];
            for kernels in [Kernels::Build, Kernels::X86_64V3] {
                let Some((fused, out, out_q)) = with_kernels(kernels, || {
                    let mut out = [Mat4::ZERO; 5];
                    SkinMatrixJob::new(&model, &ib, &mut out).with_joints(&joints).run().unwrap();
                    let (model_q, ib_q) = (model.map(|m| q(&m)), ib.map(|m| q(&m)));
                    let mut out_q = [Mat4::ZERO; 5];
                    SkinMatrixJob::new(&model_q, &ib_q, &mut out_q).with_joints(&joints).run().unwrap();
                    (crate::platform::jobs_fuse(), out, out_q)
                }) else {
                    continue;
                };
                for (i, j) in joints.iter().map(|&j| usize::from(j)).enumerate() {
                    let want = mul_mat4(&model[j], &ib[i]);
                    if fused {
                        for (x, y) in out[i].to_cols_array().iter().zip(want.to_cols_array()) {
                            assert!((x - y).abs() <= 4.0 * 64.0 * f32::EPSILON, "{x} vs {y}");
                        }
                    } else {
                        assert_eq!(out[i].to_cols_array().map(f32::to_bits), want.to_cols_array().map(f32::to_bits));
                    }
                    assert_eq!(out_q[i], mul_mat4(&q(&model[j]), &q(&ib[i])));
                }
            }
        }
    }
}
