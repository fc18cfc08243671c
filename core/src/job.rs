//! Jobs: the per-frame work, as plain structs of borrowed inputs and outputs.
//!
//! A job owns no memory. Fill its fields, then call `run()`: it calls `validate()` first and
//! writes nothing when that fails. Output buffers may be longer than needed; elements past the
//! needed length are left untouched.

use core::fmt;

use crate::math::{Vec3, Vec4};

pub mod additive;
pub mod blending;
pub mod foot;
pub mod ik;
pub mod local_to_model;
pub mod mask;
pub mod morph;
pub mod retarget;
pub mod sampling;
pub mod skin_matrix;
pub mod skinning;
pub mod spring;

pub use additive::MakeAdditiveJob;
pub use blending::{BlendingJob, Layer};
pub use foot::FootPlacementJob;
pub use ik::{IkAimJob, IkChainJob, IkLookChainJob, IkTwoBoneJob};
pub use local_to_model::LocalToModelJob;
pub use mask::MaskJob;
pub use morph::{MorphJob, MorphWeightsJob};
pub use retarget::{RetargetJob, RetargetJoint, RetargetRoot};
pub use sampling::SamplingJob;
pub use skin_matrix::{SkinDualQuatJob, SkinMatrixJob};
pub use skinning::{Palette, SkinningJob};
pub use spring::SpringBoneJob;

/// Why a job refused to run. Each job's `validate()` documents which variants it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JobError {
    /// An input buffer is shorter than the job needs.
    InputTooSmall,
    /// An output buffer is shorter than the job needs.
    OutputTooSmall,
    /// A joint range is out of bounds or empty.
    InvalidRange,
    /// The influence count is 0 or above [`MAX_INFLUENCES`](crate::limits::MAX_INFLUENCES).
    InvalidInfluenceCount,
    /// A joint index refers past the end of the joint or palette buffer.
    JointIndexOutOfRange,
    /// An optional input stream is given without its output (or the reverse).
    MismatchedStreams,
    /// Two inputs that must have the same length do not.
    LengthMismatch,
    /// A per-instance context (cursor, scratch) is shorter than the job needs.
    ContextTooSmall,
    /// The blending threshold is not a finite value above 0.
    InvalidThreshold,
    /// A weight is NaN or infinite.
    InvalidWeight,
    /// An axis is zero-length, or two axes that must differ are parallel.
    InvalidAxis,
    /// A matrix or vector is NaN or infinite, or a joint matrix is singular.
    InvalidTransform,
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::InputTooSmall => "an input buffer is too small",
            Self::OutputTooSmall => "an output buffer is too small",
            Self::InvalidRange => "the joint range is out of bounds or empty",
            Self::InvalidInfluenceCount => "the influence count is 0 or above MAX_INFLUENCES",
            Self::JointIndexOutOfRange => "a joint index is out of range",
            Self::MismatchedStreams => "an optional input stream has no matching output, or the reverse",
            Self::LengthMismatch => "inputs that must have the same length differ",
            Self::ContextTooSmall => "a per-instance context (cursor) is too small",
            Self::InvalidThreshold => "the blending threshold is not a finite value above 0",
            Self::InvalidWeight => "a weight is NaN or infinite",
            Self::InvalidAxis => "an axis is zero-length, or two axes that must differ are parallel",
            Self::InvalidTransform => "a matrix or vector is NaN or infinite, or a joint matrix is singular",
        })
    }
}

impl core::error::Error for JobError {}

/// An optional input stream and its optional output, as [`check_streams`] reads them.
type StreamPair<'s, T> = (Option<&'s [T]>, Option<&'s [T]>);

/// The vertex-stream checks that skinning and morphing share, for `n` vertices, in this order:
/// [`JobError::MismatchedStreams`] when normals or tangents come without their output or the
/// reverse; [`JobError::InputTooSmall`] when `short` (the caller's own inputs) or an input
/// stream holds fewer than `n`; [`JobError::OutputTooSmall`] when an output does.
#[inline(always)]
pub(crate) fn check_streams<R>(
    n: usize,
    short: bool,
    (normals, out_normals): StreamPair<'_, Vec3<R>>,
    (tangents, out_tangents): StreamPair<'_, Vec4<R>>,
    out_positions: &[Vec3<R>],
) -> Result<(), JobError> {
    if normals.is_some() != out_normals.is_some() || tangents.is_some() != out_tangents.is_some() {
        return Err(JobError::MismatchedStreams);
    }
    if short || normals.is_some_and(|s| s.len() < n) || tangents.is_some_and(|s| s.len() < n) {
        return Err(JobError::InputTooSmall);
    }
    if out_positions.len() < n || out_normals.is_some_and(|s| s.len() < n) || out_tangents.is_some_and(|s| s.len() < n)
    {
        return Err(JobError::OutputTooSmall);
    }
    Ok(())
}
