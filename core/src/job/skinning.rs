//! CPU skinning: linear blend (matrix palette) and dual-quaternion skinning.
//!
//! Each vertex has `influences` joint indices and weights, stored consecutively
//! (`joint_indices[v * influences + k]`). Weights are expected to sum to 1; they are used as
//! given (no renormalization), so the caller decides how to treat data that does not.

//!
//! This file holds the job's interface ([`Palette`], [`SkinningJob`]: fields, validation, and
//! the choice of kernel set); the loops and their kernels are in `skinning/`: `loops.rs` (the
//! choice of loop), `lbs.rs` (linear blend), `dqs.rs` and `scaled.rs` (dual quaternions, without
//! and with scale), `blended.rs` (a blended matrix as lane vectors, shared by both methods),
//! written once and compiled once per kernel set (`loops.rs` and the files it includes, in the
//! modules `build` and `v3`), and `vertex.rs` (vertex streams, unit length). LBS's rule is
//! `skinning/rule.rs`, which the tests hold the kernels to.

use crate::job::{check_streams, JobError};
use crate::limits::MAX_INFLUENCES;
use crate::math::{DualQuat, Mat4, SymMat3, Vec3, Vec4};
use crate::platform::dispatch::{dispatch, PerSet};
use crate::real::Real;

mod vertex;

/// The skinning palette, which also selects the method.
#[derive(Debug, Clone, Copy)]
pub enum Palette<'a, R> {
    /// Linear blend skinning: the weighted sum of the joints' skin matrices transforms the
    /// vertex. Handles scale; thin joints collapse under strong twists ("candy wrapper").
    Matrices(&'a [Mat4<R>]),
    /// Dual-quaternion skinning: the weighted, normalized sum of the joints' unit dual
    /// quaternions (each sign-aligned with the vertex's first weighted influence, so antipodal
    /// quaternions do not cancel) transforms the vertex. Keeps volume under twist; rigid only
    /// (see [`SkinDualQuatJob`](crate::job::SkinDualQuatJob)).
    DualQuats(&'a [DualQuat<R>]),
    /// Dual-quaternion skinning with scale: each joint's skin matrix `[A | t]` split as
    /// `A = R·P` ([`SkinDualQuatJob::with_scales`](crate::job::SkinDualQuatJob::with_scales)).
    /// Per vertex, `P_b = Σ wᵢ·Pᵢ` (linear) scales and shears the bind-pose vertex first, then
    /// the blended dual quaternion of the `(Rᵢ, tᵢ)` moves it as [`DualQuats`](Self::DualQuats)
    /// does; normals go through `P_b⁻ᵀ` then the rotation, tangents through `P_b` then the
    /// rotation, both renormalized. A vertex whose weighted influences all have
    /// [`SymMat3::IDENTITY`] skips `P_b`, and a palette whose scales are all the identity is
    /// skinned exactly as [`DualQuats`](Self::DualQuats). `scales` must be as long as
    /// `dual_quats`.
    ///
    /// This is the scale/shear extension of Kavan et al.'s dual-quaternion skinning: exact
    /// where a vertex's influences share one matrix (a weight-1 vertex lands where LBS puts it,
    /// at any scale), and under a uniform armature scale `s` the result is the unscaled rig's
    /// DQS times `s`. It costs more than rigid DQS per vertex, and each palette entry a polar
    /// decomposition (in [`SkinDualQuatJob`](crate::job::SkinDualQuatJob)); the figures are in
    /// `core/docs/performance.md#instructions-per-call`.
    ScaledDualQuats {
        /// The rigid parts `(Rᵢ, tᵢ)`.
        dual_quats: &'a [DualQuat<R>],
        /// The scale/shear factors `Pᵢ`.
        scales: &'a [SymMat3<R>],
    },
}

impl<R> Palette<'_, R> {
    /// Number of joints in the palette.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Palette::Matrices(m) => m.len(),
            Palette::DualQuats(d) => d.len(),
            Palette::ScaledDualQuats { dual_quats, .. } => dual_quats.len(),
        }
    }
    /// True for an empty palette.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Skins vertex positions, and optionally normals and tangents, with a palette.
///
/// Normals and tangents are transformed by the blended 3×3 part (LBS) and renormalized to unit
/// length (a zero vector stays zero), or rotated (DQS: unit vectors stay unit; with
/// [`Palette::ScaledDualQuats`] see there); tangents keep their `w` (handedness). LBS adds every
/// influence, zero weights included (cheaper than a branch), so every palette entry a vertex
/// names must be finite.
///
/// The renormalization is branch-free in `f32` (a bit-level inverse square root seed and three
/// Newton steps); on hosts, with positions and normals only, it runs as a pass of its own over
/// the skinned normals, four at a time, so that its dependency chains do not hold up the
/// skinning loop. [`run_unnormalized`](Self::run_unnormalized) skips it; what each costs is in
/// `core/docs/performance.md#instructions-per-call`.
///
/// # Examples
///
/// Linear blend skinning: a vertex weighted half to a joint at rest and half to one moved 1 m
/// along +Z moves half-way.
///
/// ```
/// use sinew::job::{Palette, SkinningJob};
/// use sinew::math::{Mat4, Vec3};
///
/// let palette = [Mat4::IDENTITY, Mat4::from_translation(Vec3::new(0.0, 0.0, 1.0))];
/// let positions = [Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, 2.0, 0.0)];
/// let joints = [0, 1, /* vertex 1: */ 1, 1]; // two influences per vertex
/// let weights = [0.5, 0.5, /* vertex 1: */ 1.0, 0.0];
/// let mut out = [Vec3::ZERO; 2];
/// SkinningJob {
///     palette: Palette::Matrices(&palette),
///     influences: 2,
///     joint_indices: &joints,
///     joint_weights: &weights,
///     positions: &positions,
///     normals: None,
///     tangents: None,
///     out_positions: &mut out,
///     out_normals: None,
///     out_tangents: None,
/// }
/// .run()?;
/// assert_eq!(out, [Vec3::new(0.0, 1.0, 0.5), Vec3::new(0.0, 2.0, 1.0)]);
/// # Ok::<(), sinew::job::JobError>(())
/// ```
///
/// Dual-quaternion skinning keeps volume where the matrices' blend collapses it: between a
/// joint at rest and one turned a quarter turn, a vertex at 1 m from the axis stays at 1 m
/// (turned by 45°) instead of being pulled in to 0.71 m.
///
/// ```
/// use core::f32::consts::FRAC_PI_2;
/// use sinew::job::{Palette, SkinningJob};
/// use sinew::math::{DualQuat, Mat4, Quat, Vec3};
///
/// let turn = Quat::from_axis_angle(Vec3::Z, FRAC_PI_2);
/// let dual_quats = [DualQuat::IDENTITY, DualQuat::from_rotation_translation(turn, Vec3::ZERO)];
/// let matrices = [Mat4::IDENTITY, Mat4::from_trs(Vec3::ZERO, turn, Vec3::ONE)];
/// let skin = |palette: Palette<'_, f32>| -> Result<Vec3<f32>, sinew::job::JobError> {
///     let mut out = [Vec3::ZERO];
///     SkinningJob {
///         palette,
///         influences: 2,
///         joint_indices: &[0, 1],
///         joint_weights: &[0.5, 0.5],
///         positions: &[Vec3::X],
///         normals: None,
///         tangents: None,
///         out_positions: &mut out,
///         out_normals: None,
///         out_tangents: None,
///     }
///     .run()?;
///     Ok(out[0])
/// };
/// let dqs = skin(Palette::DualQuats(&dual_quats))?;
/// let lbs = skin(Palette::Matrices(&matrices))?;
/// assert!((dqs.length() - 1.0).abs() < 1e-5);
/// assert!((lbs.length() - 0.5f32.sqrt()).abs() < 1e-5);
/// # Ok::<(), sinew::job::JobError>(())
/// ```
#[derive(Debug)]
pub struct SkinningJob<'a, R: Real> {
    /// The skin palette (see [`SkinMatrixJob`](crate::job::SkinMatrixJob)).
    pub palette: Palette<'a, R>,
    /// Influences per vertex, 1 to [`MAX_INFLUENCES`].
    pub influences: usize,
    /// Palette index of each influence, `positions.len() × influences` at least.
    pub joint_indices: &'a [u16],
    /// Weight of each influence, `positions.len() × influences` at least.
    pub joint_weights: &'a [R],
    /// Bind-pose positions; their count is the vertex count.
    pub positions: &'a [Vec3<R>],
    /// Bind-pose normals (at least the vertex count), or `None`.
    pub normals: Option<&'a [Vec3<R>]>,
    /// Bind-pose tangents with handedness in `w` (at least the vertex count), or `None`.
    pub tangents: Option<&'a [Vec4<R>]>,
    /// Skinned positions, at least the vertex count; extra entries are untouched.
    pub out_positions: &'a mut [Vec3<R>],
    /// Skinned normals; present exactly when `normals` is.
    pub out_normals: Option<&'a mut [Vec3<R>]>,
    /// Skinned tangents; present exactly when `tangents` is.
    pub out_tangents: Option<&'a mut [Vec4<R>]>,
}

impl<'a, R: Real> SkinningJob<'a, R> {
    /// The job for positions only: `influences` joints per vertex, `joint_indices` and
    /// `joint_weights` `influences` per vertex, from `positions` to `out_positions`. Add normals
    /// and tangents with [`with_normals`](Self::with_normals) and
    /// [`with_tangents`](Self::with_tangents).
    #[must_use]
    pub fn new(
        palette: Palette<'a, R>,
        influences: usize,
        joint_indices: &'a [u16],
        joint_weights: &'a [R],
        positions: &'a [Vec3<R>],
        out_positions: &'a mut [Vec3<R>],
    ) -> Self {
        SkinningJob {
            palette,
            influences,
            joint_indices,
            joint_weights,
            positions,
            normals: None,
            tangents: None,
            out_positions,
            out_normals: None,
            out_tangents: None,
        }
    }

    /// The job with normals skinned from `normals` to `out`.
    #[must_use]
    pub fn with_normals(self, normals: &'a [Vec3<R>], out: &'a mut [Vec3<R>]) -> Self {
        SkinningJob { normals: Some(normals), out_normals: Some(out), ..self }
    }

    /// The job with tangents (xyz skinned, w kept) from `tangents` to `out`.
    #[must_use]
    pub fn with_tangents(self, tangents: &'a [Vec4<R>], out: &'a mut [Vec4<R>]) -> Self {
        SkinningJob { tangents: Some(tangents), out_tangents: Some(out), ..self }
    }
}

impl<R: Real> SkinningJob<'_, R> {
    /// Checks the job's inputs. This scans the joint indices once (a read of 2 bytes per
    /// influence), which is what lets `run` index the palette without bounds failures.
    ///
    /// # Errors
    ///
    /// [`JobError::InvalidInfluenceCount`] when `influences` is 0 or above
    /// [`MAX_INFLUENCES`]; [`JobError::InputTooSmall`] when indices, weights, normals or tangents
    /// are shorter than needed; [`JobError::MismatchedStreams`] when normals or tangents are
    /// given without their output or the reverse; [`JobError::OutputTooSmall`] when an output
    /// is shorter than the vertex count; [`JobError::JointIndexOutOfRange`] when an index is not
    /// below the palette length; [`JobError::LengthMismatch`] when a
    /// [`Palette::ScaledDualQuats`] has not one scale per dual quaternion.
    pub fn validate(&self) -> Result<(), JobError> {
        let n = self.positions.len();
        let k = self.influences;
        if k == 0 || k > MAX_INFLUENCES {
            return Err(JobError::InvalidInfluenceCount);
        }
        let nk = n.checked_mul(k).ok_or(JobError::InputTooSmall)?;
        if self.joint_indices.len() < nk || self.joint_weights.len() < nk {
            return Err(JobError::InputTooSmall);
        }
        check_streams(
            n,
            false,
            (self.normals, self.out_normals.as_deref()),
            (self.tangents, self.out_tangents.as_deref()),
            self.out_positions,
        )?;
        if let Palette::ScaledDualQuats { dual_quats, scales } = self.palette {
            if dual_quats.len() != scales.len() {
                return Err(JobError::LengthMismatch);
            }
        }
        // An index is in range when it is at most the last entry's: saturating subtraction and
        // an OR over every index (eight indices per SSE2 `psubusw`/`por`, where a maximum of
        // unsigned 16-bit values has no SSE2 instruction).
        if nk > 0 {
            let last = self.palette.len().checked_sub(1).ok_or(JobError::JointIndexOutOfRange)?;
            let last = u16::try_from(last).unwrap_or(u16::MAX);
            let over = self.joint_indices[..nk].iter().fold(0, |a, &j| a | j.saturating_sub(last));
            if over != 0 {
                return Err(JobError::JointIndexOutOfRange);
            }
        }
        Ok(())
    }

    /// Validates, then skins every vertex.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    // Inlined on microcontrollers, so a caller that names its palette kind and streams (the
    // firmware: `Palette::Matrices`, positions only) links only that loop. Out of line, soft-float
    // targets keep the DQS, scaled-DQS and normal/tangent loops too (about 9 KB of Thumb code).
    #[cfg_attr(not(sinew_host_kernels), inline(always))]
    pub fn run(&mut self) -> Result<(), JobError> {
        self.run_with::<true>()
    }

    /// As [`run`](Self::run), except that linear blend skinning leaves normals and tangents as
    /// the blended matrix's 3×3 part maps them, without renormalizing them: for consumers that
    /// normalize them anyway (a shader that normalizes its interpolated normal), and the same
    /// operation as a matrix-palette skinning that does not renormalize. Where influences
    /// disagree their length drifts from 1 (a normal perpendicular to the axis between two
    /// equally weighted influences turned θ apart comes out cos(θ/2) long), and joint scale
    /// scales them. Positions are the same bits as `run`'s; dual-quaternion palettes
    /// are skinned exactly as `run` does (their directions are rotated, or renormalized with
    /// [`Palette::ScaledDualQuats`]).
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    #[cfg_attr(not(sinew_host_kernels), inline(always))]
    pub fn run_unnormalized(&mut self) -> Result<(), JobError> {
        self.run_with::<false>()
    }

    /// [`run`](Self::run) (`UNIT`) or [`run_unnormalized`](Self::run_unnormalized); inlined on
    /// microcontrollers for the reason `run` is.
    #[cfg_attr(not(sinew_host_kernels), inline(always))]
    fn run_with<const UNIT: bool>(&mut self) -> Result<(), JobError> {
        self.validate()?;
        dispatch(Skin::<'_, '_, R, UNIT>(self));
        Ok(())
    }
}

/// A skinning job's loops as a dispatched kernel.
struct Skin<'j, 'a, R: Real, const UNIT: bool>(&'j mut SkinningJob<'a, R>);

impl<R: Real, const UNIT: bool> PerSet for Skin<'_, '_, R, UNIT> {
    type Output = ();
    #[inline(always)]
    fn build(self) {
        build::kernels::<R, UNIT>(self.0);
    }
    #[cfg(sinew_dispatch)]
    #[inline(always)]
    fn v3(self) {
        v3::kernels::<R, UNIT>(self.0);
    }
}

/// The loops (`skinning/loops.rs` and the files it includes) in the build's own kernel set.
mod build {
    /// The kernel set of this copy of the loops: the build's own.
    const V3: bool = false;
    include!("skinning/loops.rs");
}

/// The loops in the x86-64-v3 kernel set, which [`dispatch`] runs on CPUs with the level (in
/// builds with run-time dispatch only).
#[cfg(sinew_dispatch)]
mod v3 {
    /// The kernel set of this copy of the loops: x86-64-v3.
    const V3: bool = true;
    include!("skinning/loops.rs");
}

#[cfg(test)]
mod rule;
#[cfg(test)]
mod scaled_tests;
#[cfg(test)]
mod tests;
