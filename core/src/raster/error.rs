//! [`RasterError`]: why a target or a draw was refused, shared by every stage.

use core::fmt;

/// Why a draw or a target was refused. Nothing is drawn when a call returns an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RasterError {
    /// Width or height is 0 or above [`MAX_DIMENSION`](super::MAX_DIMENSION), the stride is
    /// below the width, or a band height is 0.
    InvalidDimensions,
    /// The color buffer is shorter than `stride × (height − 1) + width` (or one band).
    ColorBufferTooSmall,
    /// The depth buffer is shorter than the color buffer needs to be.
    DepthBufferTooSmall,
    /// The vertex scratch buffer is shorter than
    /// [`Renderer::scratch_len`](super::Renderer::scratch_len).
    ScratchTooSmall,
    /// A triangle list's length is not a multiple of 3, or a line list's not a multiple of 2.
    IndexCountMismatch,
    /// An index is not below the number of positions.
    IndexOutOfRange,
    /// [`Shading::Smooth`](super::Shading::Smooth) was asked for without normals, or with fewer
    /// normals than positions.
    MissingNormals,
    /// A texture's width or height is 0 or above
    /// [`MAX_TEXTURE_DIMENSION`](super::MAX_TEXTURE_DIMENSION), or its texels are fewer than
    /// its size needs.
    InvalidTexture,
    /// A textured mesh has fewer texture coordinates than positions.
    MissingTexcoords,
    /// A mesh has fewer vertex colors than positions.
    MissingColors,
}

impl fmt::Display for RasterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::InvalidDimensions => "target dimensions are zero, too large, or the stride is below the width",
            Self::ColorBufferTooSmall => "the color buffer is too small for the target",
            Self::DepthBufferTooSmall => "the depth buffer is too small for the target",
            Self::ScratchTooSmall => "the vertex scratch buffer is too small for the scene",
            Self::IndexCountMismatch => "the index count is not a multiple of the primitive size",
            Self::IndexOutOfRange => "an index is out of range of the positions",
            Self::MissingNormals => "smooth shading needs one normal per position",
            Self::InvalidTexture => "texture dimensions are zero or too large, or its texels are too few",
            Self::MissingTexcoords => "a textured mesh needs one texture coordinate pair per position",
            Self::MissingColors => "vertex colors need one color per position",
        })
    }
}

impl core::error::Error for RasterError {}
