//! A mesh part's skinning inputs read into the caller's buffers: its vertex streams, its
//! influences and its local palette, ready for a [`SkinningJob`].
//!
//! The file stores every stream as unaligned little-endian `f32` (positions, normals, tangents,
//! weights) and `u16` (joint indices), so the jobs' `&[Vec3<R>]`, `&[R]` and `&[u16]` cannot
//! borrow the bytes in place (alignment, byte order and the scalar type differ); one pass
//! copies each stream into a buffer the caller owns and sizes once with
//! [`MeshPart::inputs_len`].

use super::{MeshData, MeshPart};
use crate::format::reader::{le_f32, le_u16};
use crate::job::{JobError, Palette, SkinningJob};
use crate::math::{Vec3, Vec4};
use crate::real::Real;

/// The buffer lengths a part's inputs need ([`MeshPart::inputs_len`]); [`max`](Self::max)
/// combines parts whose inputs are read into the same buffers in turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PartInputsLen {
    /// Positions, and the skinned outputs: the vertex count.
    pub vertices: usize,
    /// Normals: the vertex count where the part stores normals, else 0.
    pub normals: usize,
    /// Tangents: the vertex count where the part stores tangents, else 0.
    pub tangents: usize,
    /// Joint indices, and as many weights: the vertex count × the influences per vertex (0 for
    /// a rigid part).
    pub influences: usize,
    /// The part's local palette: [`MeshPart::palette_len`] entries.
    pub palette: usize,
}

impl PartInputsLen {
    /// The larger of each length: buffers that fit both.
    #[must_use]
    pub const fn max(self, other: Self) -> Self {
        const fn m(a: usize, b: usize) -> usize {
            if a > b {
                a
            } else {
                b
            }
        }
        PartInputsLen {
            vertices: m(self.vertices, other.vertices),
            normals: m(self.normals, other.normals),
            tangents: m(self.tangents, other.tangents),
            influences: m(self.influences, other.influences),
            palette: m(self.palette, other.palette),
        }
    }

    /// The lengths that fit every part of `mesh`, read one after the other into the same
    /// buffers.
    #[must_use]
    pub fn of_mesh(mesh: &MeshData<'_>) -> Self {
        mesh.parts().fold(PartInputsLen::default(), |len, part| len.max(part.inputs_len()))
    }
}

/// The caller's buffers a part's inputs are read into ([`MeshPart::read_inputs`]), each at
/// least as long as [`MeshPart::inputs_len`] says (any contents; what lies past the part's
/// length is left untouched).
#[derive(Debug)]
pub struct PartBuffers<'b, R> {
    /// Bind-pose positions.
    pub positions: &'b mut [Vec3<R>],
    /// Bind-pose normals, read where the part stores them; `None` skips them.
    pub normals: Option<&'b mut [Vec3<R>]>,
    /// Bind-pose tangents (handedness in `w`), read where the part stores them; `None` skips
    /// them.
    pub tangents: Option<&'b mut [Vec4<R>]>,
    /// Each vertex's joint indices into the part's palette, `influences` per vertex.
    pub joint_indices: &'b mut [u16],
    /// Each vertex's weights, `influences` per vertex.
    pub joint_weights: &'b mut [R],
}

impl<'b, R> PartBuffers<'b, R> {
    /// Buffers for positions, joint indices and weights; add normals and tangents with
    /// [`with_normals`](Self::with_normals) and [`with_tangents`](Self::with_tangents).
    #[must_use]
    pub fn new(positions: &'b mut [Vec3<R>], joint_indices: &'b mut [u16], joint_weights: &'b mut [R]) -> Self {
        PartBuffers { positions, normals: None, tangents: None, joint_indices, joint_weights }
    }

    /// The buffers with one for normals.
    #[must_use]
    pub fn with_normals(self, normals: &'b mut [Vec3<R>]) -> Self {
        PartBuffers { normals: Some(normals), ..self }
    }

    /// The buffers with one for tangents.
    #[must_use]
    pub fn with_tangents(self, tangents: &'b mut [Vec4<R>]) -> Self {
        PartBuffers { tangents: Some(tangents), ..self }
    }
}

/// A part's skinning inputs as [`MeshPart::read_inputs`] read them: the streams a
/// [`SkinningJob`] takes, each exactly as long as the part needs, borrowed from the caller's
/// buffers.
#[derive(Debug, Clone, Copy)]
pub struct PartInputs<'b, R> {
    /// Influences per vertex (0 for a rigid part, which a [`SkinningJob`] refuses).
    pub influences: usize,
    /// Joint indices into the part's palette, `influences` per vertex.
    pub joint_indices: &'b [u16],
    /// Weights, `influences` per vertex.
    pub joint_weights: &'b [R],
    /// Bind-pose positions, one per vertex.
    pub positions: &'b [Vec3<R>],
    /// Bind-pose normals: `Some` when the part stores them and a buffer was given.
    pub normals: Option<&'b [Vec3<R>]>,
    /// Bind-pose tangents: `Some` when the part stores them and a buffer was given.
    pub tangents: Option<&'b [Vec4<R>]>,
}

impl<'b, R: Real> PartInputs<'b, R> {
    /// The skinning job of these inputs with `palette` (the part's local palette, from
    /// [`MeshPart::local_palette`]), positions to `out_positions`; normals and tangents are
    /// added with [`SkinningJob::with_normals`] and [`SkinningJob::with_tangents`].
    #[must_use]
    pub fn job<'j>(self, palette: Palette<'j, R>, out_positions: &'j mut [Vec3<R>]) -> SkinningJob<'j, R>
    where
        'b: 'j,
    {
        SkinningJob::new(
            palette,
            self.influences,
            self.joint_indices,
            self.joint_weights,
            self.positions,
            out_positions,
        )
    }
}

/// `R` from the little-endian `f32` at `offset` of `bytes`.
#[inline(always)]
fn real<R: Real>(bytes: &[u8], offset: usize) -> R {
    R::from_f32(le_f32(bytes, offset))
}

/// The first `out.len()` vectors of `bytes` (12 bytes each) into `out`.
fn fill_vec3<R: Real>(bytes: &[u8], out: &mut [Vec3<R>]) {
    for (o, b) in out.iter_mut().zip(bytes.chunks_exact(12)) {
        *o = Vec3::new(real(b, 0), real(b, 4), real(b, 8));
    }
}

/// The first `out.len()` vectors of `bytes` (16 bytes each) into `out`.
fn fill_vec4<R: Real>(bytes: &[u8], out: &mut [Vec4<R>]) {
    for (o, b) in out.iter_mut().zip(bytes.chunks_exact(16)) {
        *o = Vec4::new(real(b, 0), real(b, 4), real(b, 8), real(b, 12));
    }
}

/// `out`'s first `n` entries, or [`JobError::OutputTooSmall`].
fn first<T>(out: &mut [T], n: usize) -> Result<&mut [T], JobError> {
    out.get_mut(..n).ok_or(JobError::OutputTooSmall)
}

impl MeshPart<'_> {
    /// The buffer lengths [`read_inputs`](Self::read_inputs) and
    /// [`local_palette`](Self::local_palette) need for this part.
    #[must_use]
    pub fn inputs_len(&self) -> PartInputsLen {
        let n = self.vertices;
        PartInputsLen {
            vertices: n,
            normals: if self.has_normals() { n } else { 0 },
            tangents: if self.has_tangents() { n } else { 0 },
            // The parser checked this product against the section's bytes.
            influences: n.saturating_mul(self.influences),
            palette: self.palette_len(),
        }
    }

    /// Reads the part's skinning inputs into `buffers`: positions, joint indices and weights,
    /// and normals and tangents where the part stores them and `buffers` holds one for them.
    /// The values are the ones [`position`](Self::position), [`normal`](Self::normal),
    /// [`tangent`](Self::tangent), [`joint`](Self::joint) and [`weight`](Self::weight) read,
    /// in the layout [`SkinningJob`] takes.
    ///
    /// # Examples
    ///
    /// From a parsed file and a skin palette to a skinned part, buffers sized once:
    ///
    /// ```
    /// use sinew::asset::{Asset, PartBuffers, PartInputsLen};
    /// use sinew::job::{LocalToModelJob, Palette, SkinMatrixJob};
    /// use sinew::math::{Mat4, Vec3};
    /// use sinew::skeleton::Skeleton;
    ///
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));
    /// let asset = Asset::parse(bytes)?;
    /// let mesh = asset.mesh(0).ok_or("no mesh")?;
    /// let skin = asset.skin(mesh.skin().ok_or("not skinned")?).ok_or("no skin")?;
    /// // The skin palette in the rest pose.
    /// let skeleton: Skeleton<f32, 6> = asset.skeleton().ok_or("no skeleton")?.to_skeleton()?;
    /// let mut model = [Mat4::IDENTITY; 24];
    /// let model = &mut model[..skeleton.num_joints()];
    /// LocalToModelJob::new(skeleton.view(), skeleton.rest_pose(), model).run()?;
    /// let inverse_bind: Vec<Mat4<f32>> = (0..skin.num_joints()).map(|j| skin.inverse_bind(j)).collect();
    /// let joints: Vec<u16> = (0..skin.num_joints()).map(|j| skin.joint(j)).collect();
    /// let mut palette = vec![Mat4::IDENTITY; skin.num_joints()];
    /// SkinMatrixJob::new(model, &inverse_bind, &mut palette).with_joints(&joints).run()?;
    ///
    /// // Buffers that fit every part, allocated once.
    /// let len = PartInputsLen::of_mesh(&mesh);
    /// let mut positions = vec![Vec3::ZERO; len.vertices];
    /// let mut joint_indices = vec![0u16; len.influences];
    /// let mut joint_weights = vec![0.0f32; len.influences];
    /// let mut part_palette = vec![Mat4::IDENTITY; len.palette];
    /// let mut skinned = vec![Vec3::ZERO; len.vertices];
    ///
    /// for part in mesh.parts() {
    ///     let inputs =
    ///         part.read_inputs(PartBuffers::new(&mut positions, &mut joint_indices, &mut joint_weights))?;
    ///     let local = part.local_palette(&palette, &mut part_palette)?;
    ///     inputs.job(Palette::Matrices(local), &mut skinned).run()?;
    ///     // In the rest pose, skinning leaves the vertices where they were bound.
    ///     let n = part.num_vertices();
    ///     assert!(skinned[..n].iter().zip(inputs.positions).all(|(s, p)| (*s - *p).length() < 1e-4));
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`JobError::OutputTooSmall`] when a buffer is shorter than
    /// [`inputs_len`](Self::inputs_len) gives (normals and tangents only when the part stores
    /// them and the buffer is given); nothing is written then.
    pub fn read_inputs<'b, R: Real>(&self, buffers: PartBuffers<'b, R>) -> Result<PartInputs<'b, R>, JobError> {
        let len = self.inputs_len();
        let positions = first(buffers.positions, len.vertices)?;
        let joint_indices = first(buffers.joint_indices, len.influences)?;
        let joint_weights = first(buffers.joint_weights, len.influences)?;
        let normals = match (self.normals, buffers.normals) {
            (Some(bytes), Some(out)) => Some((bytes, first(out, len.normals)?)),
            _ => None,
        };
        let tangents = match (self.tangents, buffers.tangents) {
            (Some(bytes), Some(out)) => Some((bytes, first(out, len.tangents)?)),
            _ => None,
        };
        // Every length checked: nothing is written before this point.
        fill_vec3(self.positions, positions);
        self.fill_influences(joint_indices, joint_weights);
        Ok(PartInputs {
            influences: self.influences,
            joint_indices,
            joint_weights,
            positions,
            normals: normals.map(|(bytes, out)| {
                fill_vec3(bytes, out);
                &*out
            }),
            tangents: tangents.map(|(bytes, out)| {
                fill_vec4(bytes, out);
                &*out
            }),
        })
    }

    /// Reads the bind-pose positions into `out`; returns the part's vertex count of them.
    ///
    /// # Errors
    ///
    /// [`JobError::OutputTooSmall`] when `out` is shorter than the vertex count (nothing is
    /// written).
    pub fn read_positions<'b, R: Real>(&self, out: &'b mut [Vec3<R>]) -> Result<&'b [Vec3<R>], JobError> {
        let out = first(out, self.vertices)?;
        fill_vec3(self.positions, out);
        Ok(out)
    }

    /// Reads the bind-pose normals into `out`; `None` when the part stores none (`out` is left
    /// as it is).
    ///
    /// # Errors
    ///
    /// [`JobError::OutputTooSmall`] when the part has normals and `out` is shorter than the
    /// vertex count (nothing is written).
    pub fn read_normals<'b, R: Real>(&self, out: &'b mut [Vec3<R>]) -> Result<Option<&'b [Vec3<R>]>, JobError> {
        let Some(bytes) = self.normals else { return Ok(None) };
        let out = first(out, self.vertices)?;
        fill_vec3(bytes, out);
        Ok(Some(out))
    }

    /// Reads the bind-pose tangents (handedness in `w`) into `out`; `None` when the part stores
    /// none (`out` is left as it is).
    ///
    /// # Errors
    ///
    /// [`JobError::OutputTooSmall`] when the part has tangents and `out` is shorter than the
    /// vertex count (nothing is written).
    pub fn read_tangents<'b, R: Real>(&self, out: &'b mut [Vec4<R>]) -> Result<Option<&'b [Vec4<R>]>, JobError> {
        let Some(bytes) = self.tangents else { return Ok(None) };
        let out = first(out, self.vertices)?;
        fill_vec4(bytes, out);
        Ok(Some(out))
    }

    /// Reads each vertex's joint indices (into the part's palette) and weights,
    /// [`influences`](Self::influences) per vertex; empty for a rigid part.
    ///
    /// # Errors
    ///
    /// [`JobError::OutputTooSmall`] when either buffer is shorter than the vertex count × the
    /// influences (nothing is written).
    pub fn read_influences<'b, R: Real>(
        &self,
        joint_indices: &'b mut [u16],
        joint_weights: &'b mut [R],
    ) -> Result<(&'b [u16], &'b [R]), JobError> {
        let n = self.inputs_len().influences;
        let (joint_indices, joint_weights) = (first(joint_indices, n)?, first(joint_weights, n)?);
        self.fill_influences(joint_indices, joint_weights);
        Ok((joint_indices, joint_weights))
    }

    /// The joint indices and weights into buffers of the right length.
    fn fill_influences<R: Real>(&self, joint_indices: &mut [u16], joint_weights: &mut [R]) {
        for (o, b) in joint_indices.iter_mut().zip(self.joints.chunks_exact(2)) {
            *o = le_u16(b, 0);
        }
        for (o, b) in joint_weights.iter_mut().zip(self.weights.chunks_exact(4)) {
            *o = real(b, 0);
        }
    }

    /// The part's local palette: entry `i` is `skin_palette[palette(i)]`, the skin joint the
    /// part's joint index `i` names, for each of the [`palette_len`](Self::palette_len)
    /// entries, written to `out`. `skin_palette` is indexed by skin joint, as
    /// [`SkinMatrixJob`](crate::job::SkinMatrixJob) and
    /// [`SkinDualQuatJob`](crate::job::SkinDualQuatJob) write it: skin matrices, dual
    /// quaternions, a scaled palette's scale factors (one call for each slice), or a shader's
    /// uniform rows.
    ///
    /// # Examples
    ///
    /// ```
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));
    /// let asset = sinew::asset::Asset::parse(bytes)?;
    /// let part = asset.mesh(0).and_then(|m| m.parts().next()).ok_or("no part")?;
    /// let skin_joints = asset.skin(0).ok_or("no skin")?.num_joints();
    /// // Each skin joint's number stands in for its matrix.
    /// let skin_palette: Vec<u16> = (0..skin_joints as u16).collect();
    /// let mut local = vec![0u16; part.palette_len()];
    /// let local = part.local_palette(&skin_palette, &mut local)?;
    /// assert!(local.iter().enumerate().all(|(i, &j)| j == part.palette(i)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`JobError::OutputTooSmall`] when `out` is shorter than the palette;
    /// [`JobError::JointIndexOutOfRange`] when an entry names a skin joint past the end of
    /// `skin_palette` (a palette of another skin, or too short). Nothing is written on error.
    pub fn local_palette<'o, T: Copy>(&self, skin_palette: &[T], out: &'o mut [T]) -> Result<&'o [T], JobError> {
        let out = first(out, self.palette_len())?;
        let entries = || self.palette.chunks_exact(2).map(|b| usize::from(le_u16(b, 0)));
        if entries().any(|j| j >= skin_palette.len()) {
            return Err(JobError::JointIndexOutOfRange);
        }
        for (o, j) in out.iter_mut().zip(entries()) {
            if let Some(&m) = skin_palette.get(j) {
                *o = m;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
