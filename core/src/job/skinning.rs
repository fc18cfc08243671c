//! CPU skinning: linear blend (matrix palette) and dual-quaternion skinning.
//!
//! Each vertex has `influences` joint indices and weights, stored consecutively
//! (`joint_indices[v * influences + k]`). Weights are expected to sum to 1; they are used as
//! given (no renormalization), so the caller decides how to treat data that does not.

use crate::job::JobError;
use crate::limits::MAX_INFLUENCES;
use crate::math::{DualQuat, Mat4, SymMat3, Vec3, Vec4};
use crate::platform::{FMA, HOST_KERNELS};
use crate::real::Lanes;
use crate::real::Real;

mod scaled;

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
    /// DQS times `s`. Cost in `f32` on x86-64 (callgrind, 4 influences per vertex, every
    /// joint scaled): 619 instructions per vertex for positions against 415 for rigid DQS,
    /// 806 against 436 with normals; a palette entry's polar decomposition (in
    /// [`SkinDualQuatJob`](crate::job::SkinDualQuatJob)) about 530.
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
/// Newton steps): LBS of positions and normals costs 130 instructions per vertex on x86-64
/// against 96 without it (callgrind, 4 influences per vertex).
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
        if self.normals.is_some() != self.out_normals.is_some()
            || self.tangents.is_some() != self.out_tangents.is_some()
        {
            return Err(JobError::MismatchedStreams);
        }
        if self.normals.is_some_and(|s| s.len() < n) || self.tangents.is_some_and(|s| s.len() < n) {
            return Err(JobError::InputTooSmall);
        }
        if self.out_positions.len() < n
            || self.out_normals.as_ref().is_some_and(|s| s.len() < n)
            || self.out_tangents.as_ref().is_some_and(|s| s.len() < n)
        {
            return Err(JobError::OutputTooSmall);
        }
        if let Palette::ScaledDualQuats { dual_quats, scales } = self.palette {
            if dual_quats.len() != scales.len() {
                return Err(JobError::LengthMismatch);
            }
        }
        let max = self.joint_indices[..nk].iter().copied().max().unwrap_or(0);
        if nk > 0 && max as usize >= self.palette.len() {
            return Err(JobError::JointIndexOutOfRange);
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
        self.validate()?;
        // Hosts get a loop specialised for each usual influence count; microcontrollers one
        // general loop, which keeps the code small.
        if HOST_KERNELS {
            match (self.palette, self.influences) {
                (Palette::Matrices(p), 1) => self.lbs::<1>(p),
                (Palette::Matrices(p), 2) => self.lbs::<2>(p),
                (Palette::Matrices(p), 3) => self.lbs::<3>(p),
                (Palette::Matrices(p), 4) => self.lbs::<4>(p),
                (Palette::Matrices(p), _) => self.lbs::<0>(p),
                (Palette::DualQuats(p), _) => self.dqs(p),
                (Palette::ScaledDualQuats { dual_quats, scales }, _) => self.dqs_maybe_scaled(dual_quats, scales),
            }
        } else {
            match self.palette {
                Palette::Matrices(p) => self.lbs::<0>(p),
                Palette::DualQuats(p) => self.dqs(p),
                Palette::ScaledDualQuats { dual_quats, scales } => self.dqs_maybe_scaled(dual_quats, scales),
            }
        }
        Ok(())
    }

    /// Linear blend skinning with `K` influences (`K = 0`: `self.influences`).
    ///
    /// Hosts skinning enough vertices first copy the palette into a [`PackedPalette`] on the
    /// stack (three lane vectors per joint instead of four); the result is the same bit for bit.
    fn lbs<const K: usize>(&mut self, palette: &[Mat4<R>]) {
        if HOST_KERNELS && palette.len() <= PACKED_JOINTS && self.positions.len() >= PACKED_MIN_VERTICES {
            let table = pack(palette);
            return self.lbs_with::<K>(|idx, w| blend_packed::<R, K>(&table, idx, w));
        }
        self.lbs_with::<K>(|idx, w| blend_matrices::<R, K>(palette, idx, w));
    }

    /// Linear blend skinning with `blend` turning a vertex's indices and weights into its
    /// matrix.
    #[inline(always)]
    fn lbs_with<const K: usize>(&mut self, blend: impl Fn(&[u16], &[R]) -> Blended<R>) {
        let k = if K == 0 { self.influences } else { K };
        let n = self.positions.len();
        let idx = &self.joint_indices[..n * k];
        let wts = &self.joint_weights[..n * k];
        let pos = self.positions;
        let out_p = &mut self.out_positions[..n];
        match (self.normals, self.out_normals.as_deref_mut(), self.tangents, self.out_tangents.as_deref_mut()) {
            (Some(nrm), Some(out_n), None, _) => {
                let (nrm, out_n) = (&nrm[..n], &mut out_n[..n]);
                let it = idx.chunks_exact(k).zip(wts.chunks_exact(k)).zip(pos.iter().zip(out_p.iter_mut()));
                for (((idx, w), (p, op)), (nv, on)) in it.zip(nrm.iter().zip(out_n.iter_mut())) {
                    let m = blend(idx, w);
                    *op = m.point(*p);
                    *on = unit(m.direction(*nv));
                }
            }
            (nrm, mut out_n, tan, mut out_t) => {
                for (v, ((idx, w), (p, op))) in
                    idx.chunks_exact(k).zip(wts.chunks_exact(k)).zip(pos.iter().zip(out_p.iter_mut())).enumerate()
                {
                    let m = blend(idx, w);
                    *op = m.point(*p);
                    if let (Some(src), Some(dst)) = (nrm, out_n.as_deref_mut()) {
                        if let (Some(s), Some(d)) = (src.get(v), dst.get_mut(v)) {
                            *d = unit(m.direction(*s));
                        }
                    }
                    if let (Some(src), Some(dst)) = (tan, out_t.as_deref_mut()) {
                        if let (Some(s), Some(d)) = (src.get(v), dst.get_mut(v)) {
                            *d = unit(m.direction(s.truncate())).extend(s.w);
                        }
                    }
                }
            }
        }
    }

    /// Dual-quaternion skinning: blend, normalize, then transform through the equivalent
    /// rigid matrix (cheaper than applying the dual quaternion twice).
    fn dqs(&mut self, palette: &[DualQuat<R>]) {
        let k = self.influences;
        let n = self.positions.len();
        let idx = &self.joint_indices[..n * k];
        let wts = &self.joint_weights[..n * k];
        let normals = self.normals;
        let tangents = self.tangents;
        let mut out_n = self.out_normals.as_deref_mut();
        let mut out_t = self.out_tangents.as_deref_mut();
        for (v, ((idx, w), (p, op))) in idx
            .chunks_exact(k)
            .zip(wts.chunks_exact(k))
            .zip(self.positions.iter().zip(self.out_positions.iter_mut()))
            .enumerate()
        {
            let m = Blended::columns(&blend_dual_quats(palette, idx, w));
            *op = m.point(*p);
            if let (Some(src), Some(dst)) = (normals, out_n.as_deref_mut()) {
                if let (Some(s), Some(d)) = (src.get(v), dst.get_mut(v)) {
                    *d = m.direction(*s);
                }
            }
            if let (Some(src), Some(dst)) = (tangents, out_t.as_deref_mut()) {
                if let (Some(s), Some(d)) = (src.get(v), dst.get_mut(v)) {
                    *d = m.direction(s.truncate()).extend(s.w);
                }
            }
        }
    }
}

/// `v` scaled to unit length; zero stays zero.
///
/// In `f32`, branch-free: the squared length, [`Real::inv_sqrt_positive`] (a bit-level seed
/// and three Newton steps, no division, the same bits on every target) and three
/// multiplications; a zero vector meets the seed's large finite value and stays zero (inputs
/// are finite, as the job requires). `Q16` first divides by the largest component, so a short
/// vector (a normal under a 0.01 joint scale, whose squared length has only a few bits) keeps
/// its direction's precision, and a long one (scale 100) does not overflow.
#[inline(always)]
fn unit<R: Real>(v: Vec3<R>) -> Vec3<R> {
    if R::FIXED_POINT {
        let m = v.max_abs();
        if m <= R::ZERO {
            return Vec3::ZERO;
        }
        (v * m.recip()).normalize_or_zero()
    } else {
        v * v.length_squared().inv_sqrt_positive()
    }
}

/// The normalized, sign-aligned weighted sum of the influences' dual quaternions, as the
/// rigid matrix it represents (identity when the weights cancel).
#[inline(always)]
fn blend_dual_quats<R: Real>(palette: &[DualQuat<R>], idx: &[u16], w: &[R]) -> [[R; 4]; 4] {
    let mut r = [R::ZERO; 4];
    let mut d = [R::ZERO; 4];
    // Signs align with the first influence that has a weight: a zero-weight entry must not
    // change the result.
    let first = idx
        .iter()
        .zip(w.iter())
        .find(|&(_, &wj)| wj != R::ZERO)
        .and_then(|(&j, _)| palette.get(j as usize))
        .map(|q| q.real.to_array())
        .unwrap_or([R::ZERO; 4]);
    for (&j, &wj) in idx.iter().zip(w.iter()) {
        if wj == R::ZERO {
            continue;
        }
        let Some(q) = palette.get(j as usize) else { continue };
        let (qr, qd) = (q.real.to_array(), q.dual.to_array());
        let dot = first[0] * qr[0] + first[1] * qr[1] + first[2] * qr[2] + first[3] * qr[3];
        let s = if dot < R::ZERO { -wj } else { wj };
        for c in 0..4 {
            r[c] += qr[c] * s;
            d[c] += qd[c] * s;
        }
    }
    let l2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3];
    if l2 <= R::ZERO || !l2.is_finite() {
        let mut m = [[R::ZERO; 4]; 4];
        for c in 0..4 {
            m[c][c] = R::ONE;
        }
        return m;
    }
    let inv = if R::FIXED_POINT { l2.sqrt().recip() } else { l2.inv_sqrt() };
    let (x, y, z, qw) = (r[0] * inv, r[1] * inv, r[2] * inv, r[3] * inv);
    let (dx, dy, dz, dw) = (d[0] * inv, d[1] * inv, d[2] * inv, d[3] * inv);
    // Translation 2·(w·d⃗ − d_w·r⃗ + r⃗ × d⃗).
    let tx = R::TWO * (qw * dx - dw * x + (y * dz - z * dy));
    let ty = R::TWO * (qw * dy - dw * y + (z * dx - x * dz));
    let tz = R::TWO * (qw * dz - dw * z + (x * dy - y * dx));
    let (x2, y2, z2) = (x + x, y + y, z + z);
    let (xx, yy, zz) = (x * x2, y * y2, z * z2);
    let (xy, xz, yz) = (x * y2, x * z2, y * z2);
    let (wx, wy, wz) = (qw * x2, qw * y2, qw * z2);
    [
        [R::ONE - (yy + zz), xy + wz, xz - wy, R::ZERO],
        [xy - wz, R::ONE - (xx + zz), yz + wx, R::ZERO],
        [xz + wy, yz - wx, R::ONE - (xx + yy), R::ZERO],
        [tx, ty, tz, R::ONE],
    ]
}

/// The lanes of one matrix column.
type V<R> = <R as Real>::Lanes;

/// Palette entries the packed table holds (a power of two: validated indices, all below the
/// palette length, are masked into range without a bounds check).
const PACKED_JOINTS: usize = 256;

/// Fewest vertices for which packing the palette (a 12 KiB table for `f32`) pays off.
const PACKED_MIN_VERTICES: usize = 256;

/// A palette without its matrices' last rows, which only reach the discarded fourth output
/// lane: `table[c][j]` holds the first three rows of joint `j`'s column `c` and, in its fourth
/// lane, row `c` of the joint's translation (one array per column, so an entry's address is
/// the joint index shifted).
type PackedPalette<R> = [[Aligned<R>; PACKED_JOINTS]; 3];

/// Four lanes at a 16-byte boundary, so SSE arithmetic can read them from memory directly.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Aligned<R>([R; 4]);

/// `palette` (at most [`PACKED_JOINTS`] entries) as a [`PackedPalette`], zeros past its end.
fn pack<R: Real>(palette: &[Mat4<R>]) -> PackedPalette<R> {
    let mut table = [[Aligned([R::ZERO; 4]); PACKED_JOINTS]; 3];
    for (j, m) in palette.iter().enumerate().take(PACKED_JOINTS) {
        let t = m.cols[3];
        for c in 0..3 {
            let col = m.cols[c];
            table[c][j] = Aligned([col[0], col[1], col[2], t[c]]);
        }
    }
    table
}

/// A matrix as lane vectors: columns 0 to 2 and the translation (lanes 0 to 2 of each matter).
#[derive(Clone, Copy)]
struct Blended<R: Real> {
    cols: [V<R>; 3],
    translation: V<R>,
}

impl<R: Real> Blended<R> {
    /// The lanes of a column-major matrix.
    #[inline(always)]
    fn columns(m: &[[R; 4]; 4]) -> Self {
        Blended {
            cols: [V::<R>::load(&m[0]), V::<R>::load(&m[1]), V::<R>::load(&m[2])],
            translation: V::<R>::load(&m[3]),
        }
    }

    /// `m · (v, 1)`: `((c₀·x + c₁·y) + c₂·z) + t`, lane by lane; with FMA three fused
    /// multiply-adds starting from the translation, `((t + c₀·x) + c₁·y) + c₂·z`.
    #[inline(always)]
    fn point(&self, v: Vec3<R>) -> Vec3<R> {
        if FMA {
            let [c0, c1, c2] = self.cols;
            let s = V::<R>::splat;
            return vec3(c2.mul_add(s(v.z), c1.mul_add(s(v.y), c0.mul_add(s(v.x), self.translation))));
        }
        vec3(self.linear(v) + self.translation)
    }

    /// `m · (v, 0)`: `(c₀·x + c₁·y) + c₂·z`, lane by lane.
    #[inline(always)]
    fn direction(&self, v: Vec3<R>) -> Vec3<R> {
        vec3(self.linear(v))
    }

    #[inline(always)]
    fn linear(&self, v: Vec3<R>) -> V<R> {
        let [c0, c1, c2] = self.cols;
        let s = V::<R>::splat;
        c2.mul_add(s(v.z), c1.mul_add(s(v.y), c0 * s(v.x)))
    }
}

/// The first three lanes of `o`.
#[inline(always)]
fn vec3<R: Real>(o: V<R>) -> Vec3<R> {
    let a = o.to_array();
    Vec3::new(a[0], a[1], a[2])
}

/// `Σ wᵢ·vᵢ` over the influences, accumulated in order from the first product: the same
/// lane-wise sums whatever lane vectors `load` gives for a palette entry (validated indices:
/// a missing entry, or an empty influence list, reads as zero instead of panicking).
///
/// Every influence is added, zero weights included: the multiply-adds cost less than the
/// mispredicted branch that skipping them would take on meshes with mixed influence counts.
/// A zero weight adds exact zeros, so it leaves every sum unchanged.
#[inline(always)]
fn blend_with<R: Real, const K: usize, const C: usize>(
    idx: &[u16],
    w: &[R],
    load: impl Fn(u16) -> Option<[V<R>; C]>,
) -> [V<R>; C] {
    let k = if K == 0 { idx.len().min(w.len()) } else { K };
    let (Some(idx), Some(w)) = (idx.get(..k), w.get(..k)) else { return [V::<R>::splat(R::ZERO); C] };
    // Four weights: one load, then a broadcast of each lane.
    let w4 = <&[R; 4]>::try_from(w).ok().map(|a| V::<R>::load(a).to_array());
    let mut sum = [V::<R>::splat(R::ZERO); C];
    for (i, (&j, &wj)) in idx.iter().zip(w.iter()).enumerate() {
        let Some(m) = load(j) else { continue };
        let ws = V::<R>::splat(match w4 {
            Some(a) if K == 4 => a[i & 3],
            _ => wj,
        });
        for c in 0..C {
            sum[c] = if i == 0 { m[c] * ws } else { m[c].mul_add(ws, sum[c]) };
        }
    }
    sum
}

/// The weighted sum of the influences' matrices.
#[inline(always)]
fn blend_matrices<R: Real, const K: usize>(palette: &[Mat4<R>], idx: &[u16], w: &[R]) -> Blended<R> {
    let [c0, c1, c2, t] =
        blend_with::<R, K, 4>(idx, w, |j| palette.get(usize::from(j)).map(|m| m.cols.map(|c| V::<R>::load(&c))));
    Blended { cols: [c0, c1, c2], translation: t }
}

/// The weighted sum of the influences' [`PackedPalette`] entries (the translation moved out of
/// the fourth lanes).
#[inline(always)]
fn blend_packed<R: Real, const K: usize>(table: &PackedPalette<R>, idx: &[u16], w: &[R]) -> Blended<R> {
    let cols = blend_with::<R, K, 3>(idx, w, |j| {
        // Validated indices are below the palette length, at most PACKED_JOINTS: the mask
        // keeps them as they are and spares the bounds check.
        let j = usize::from(j) & (PACKED_JOINTS - 1);
        Some([V::<R>::load(&table[0][j].0), V::<R>::load(&table[1][j].0), V::<R>::load(&table[2][j].0)])
    });
    let [c0, c1, c2] = cols;
    let (t0, t1, t2) = (c0.to_array()[3], c1.to_array()[3], c2.to_array()[3]);
    Blended { cols, translation: V::<R>::load(&[t0, t1, t2, R::ZERO]) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Quat;

    const S: Vec3<f32> = Vec3 { x: 99.0, y: 99.0, z: 99.0 };
    const S4: Vec4<f32> = Vec4 { x: 99.0, y: 99.0, z: 99.0, w: 99.0 };

    fn palette() -> [Mat4<f32>; 2] {
        [
            Mat4::from_trs(Vec3::new(1.0, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE),
            Mat4::from_trs(Vec3::ZERO, Quat::from_axis_angle(Vec3::Z, core::f32::consts::FRAC_PI_2), Vec3::ONE),
        ]
    }

    #[test]
    fn validity() {
        let pal = palette();
        let pos = [Vec3::new(1.0, 0.0, 0.0); 2];
        let nrm = [Vec3::Y; 2];
        let idx = [0u16, 1, 0, 1];
        let w = [0.5f32; 4];
        macro_rules! check {
            ($err:expr, $infl:expr, $idx:expr, $w:expr, $nrm:expr, $op:expr, $on:expr) => {{
                let mut op = [S; 3];
                let mut on = [S; 3];
                let olen: usize = $op;
                let onl: Option<usize> = $on;
                let mut job = SkinningJob {
                    palette: Palette::Matrices(&pal),
                    influences: $infl,
                    joint_indices: $idx,
                    joint_weights: $w,
                    positions: &pos,
                    normals: $nrm,
                    tangents: None,
                    out_positions: &mut op[..olen],
                    out_normals: onl.map(|l| &mut on[..l]),
                    out_tangents: None,
                };
                assert_eq!(job.validate(), Err($err));
                assert_eq!(job.run(), Err($err));
                assert!(op.iter().all(|v| *v == S));
                assert!(on.iter().all(|v| *v == S));
            }};
        }
        // Influence count 0 and above the limit.
        check!(JobError::InvalidInfluenceCount, 0, &idx, &w, None, 2, None);
        check!(JobError::InvalidInfluenceCount, MAX_INFLUENCES + 1, &idx, &w, None, 2, None);
        // Too few indices or weights.
        check!(JobError::InputTooSmall, 2, &idx[..3], &w, None, 2, None);
        check!(JobError::InputTooSmall, 2, &idx, &w[..3], None, 2, None);
        // Normals without output, output without normals, short normals.
        check!(JobError::MismatchedStreams, 2, &idx, &w, Some(&nrm), 2, None);
        check!(JobError::MismatchedStreams, 2, &idx, &w, None, 2, Some(2));
        check!(JobError::InputTooSmall, 2, &idx, &w, Some(&nrm[..1]), 2, Some(2));
        // Outputs too small.
        check!(JobError::OutputTooSmall, 2, &idx, &w, None, 1, None);
        check!(JobError::OutputTooSmall, 2, &idx, &w, Some(&nrm), 2, Some(1));
        // Joint index past the palette.
        check!(JobError::JointIndexOutOfRange, 2, &[0, 1, 2, 0], &w, None, 2, None);
        // Tangents without output (and the DQS path shares validation).
        let tan = [Vec4::new(1.0, 0.0, 0.0, -1.0); 2];
        let dq = [DualQuat::IDENTITY; 2];
        let mut op = [S; 2];
        let mut ot = [S4; 2];
        let mut job = SkinningJob {
            palette: Palette::DualQuats(&dq),
            influences: 2,
            joint_indices: &idx,
            joint_weights: &w,
            positions: &pos,
            normals: None,
            tangents: Some(&tan),
            out_positions: &mut op,
            out_normals: None,
            out_tangents: None,
        };
        assert_eq!(job.run(), Err(JobError::MismatchedStreams));
        let mut job = SkinningJob {
            palette: Palette::DualQuats(&dq),
            influences: 2,
            joint_indices: &idx,
            joint_weights: &w,
            positions: &pos,
            normals: None,
            tangents: Some(&tan),
            out_positions: &mut op,
            out_normals: None,
            out_tangents: Some(&mut ot[..1]),
        };
        assert_eq!(job.run(), Err(JobError::OutputTooSmall));
        assert!(op.iter().all(|v| *v == S));
        assert!(ot.iter().all(|v| *v == S4));
    }

    #[test]
    fn lbs_blends_matrices() {
        let pal = palette();
        let pos = [Vec3::new(1.0f32, 0.0, 0.0), Vec3::new(0.0, 2.0, 0.0)];
        let nrm = [Vec3::Y, Vec3::X];
        let tan = [Vec4::new(1.0, 0.0, 0.0, -1.0); 2];
        let idx = [0u16, 1, 1, 0];
        let w = [0.5f32, 0.5, 1.0, 0.0];
        let mut op = [S; 3];
        let mut on = [S; 2];
        let mut ot = [S4; 2];
        SkinningJob {
            palette: Palette::Matrices(&pal),
            influences: 2,
            joint_indices: &idx,
            joint_weights: &w,
            positions: &pos,
            normals: Some(&nrm),
            tangents: Some(&tan),
            out_positions: &mut op,
            out_normals: Some(&mut on),
            out_tangents: Some(&mut ot),
        }
        .run()
        .unwrap();
        // Vertex 0: half of (2,0,0) and half of (0,1,0).
        assert!((op[0] - Vec3::new(1.0, 0.5, 0.0)).max_abs() < 1.0e-6);
        // Vertex 1: fully rotated by 90° about Z.
        assert!((op[1] - Vec3::new(-2.0, 0.0, 0.0)).max_abs() < 1.0e-6);
        assert!((on[1] - Vec3::Y).max_abs() < 1.0e-6);
        assert!((ot[1].truncate() - Vec3::Y).max_abs() < 1.0e-6);
        assert_eq!(ot[1].w, -1.0);
        assert_eq!(op[2], S);
    }

    #[test]
    fn every_influence_count_agrees_with_the_general_path() {
        let pal: [Mat4<f32>; 4] = core::array::from_fn(|i| {
            Mat4::from_trs(
                Vec3::new(i as f32, 1.0, -(i as f32)),
                Quat::from_axis_angle(Vec3::new(0.0, 0.6, 0.8), 0.3 * i as f32),
                Vec3::new(1.0, 1.0 + i as f32 * 0.2, 1.0),
            )
        });
        let pos = [Vec3::new(0.3f32, -0.2, 1.0)];
        for k in 1..=MAX_INFLUENCES {
            let idx: [u16; MAX_INFLUENCES] = core::array::from_fn(|i| (i % 4) as u16);
            let w: [f32; MAX_INFLUENCES] = core::array::from_fn(|i| if i < k { 1.0 / k as f32 } else { 0.0 });
            let mut op = [Vec3::ZERO; 1];
            SkinningJob {
                palette: Palette::Matrices(&pal),
                influences: k,
                joint_indices: &idx[..k],
                joint_weights: &w[..k],
                positions: &pos,
                normals: None,
                tangents: None,
                out_positions: &mut op,
                out_normals: None,
                out_tangents: None,
            }
            .run()
            .unwrap();
            let mut e = Vec3::ZERO;
            for i in 0..k {
                e += pal[idx[i] as usize].transform_point3(pos[0]) * w[i];
            }
            assert!((op[0] - e).max_abs() < 1.0e-5, "k = {k}");
        }
    }

    /// Vertices of the packed-palette test: enough for the packed loops.
    const N: usize = 300;

    /// Skins `N` vertices of a pseudo-random mesh on `J` pseudo-random (not affine) matrices,
    /// whole and one vertex per job, and asserts the same bits: large jobs take the
    /// packed-palette loops on hosts, single vertices the direct ones.
    fn check_packed_matches_direct<const J: usize>() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        };
        let pal: [Mat4<f32>; J] =
            core::array::from_fn(|_| Mat4 { cols: core::array::from_fn(|_| core::array::from_fn(|_| rnd() * 3.0)) });
        let pos: [Vec3<f32>; N] = core::array::from_fn(|_| Vec3::new(rnd(), rnd(), rnd()) * 10.0);
        let nrm: [Vec3<f32>; N] = core::array::from_fn(|_| Vec3::new(rnd(), rnd(), -0.0));
        let tan: [Vec4<f32>; N] = core::array::from_fn(|_| Vec4::new(rnd(), rnd(), rnd(), 1.0));
        let idx: [u16; N * MAX_INFLUENCES] =
            core::array::from_fn(|_| ((rnd() + 1.0) * 0.5 * J as f32) as u16 % J as u16);
        // Some zero weights of either sign: they still add their products.
        let w: [f32; N * MAX_INFLUENCES] = core::array::from_fn(|i| {
            if i % 5 == 1 {
                0.0
            } else if i % 7 == 2 {
                -0.0
            } else {
                rnd()
            }
        });
        // Miri (slow) covers two influence counts with normals only.
        for k in (1..=MAX_INFLUENCES).filter(|&k| !cfg!(miri) || k == 1 || k == 4) {
            for streams in (0..3).filter(|&s| !cfg!(miri) || s == 1) {
                let skin =
                    |from: usize, to: usize, op: &mut [Vec3<f32>], on: &mut [Vec3<f32>], ot: &mut [Vec4<f32>]| {
                        SkinningJob {
                            palette: Palette::Matrices(&pal),
                            influences: k,
                            joint_indices: &idx[from * k..to * k],
                            joint_weights: &w[from * k..to * k],
                            positions: &pos[from..to],
                            normals: (streams > 0).then(|| &nrm[from..to]),
                            tangents: (streams > 1).then(|| &tan[from..to]),
                            out_positions: &mut op[from..to],
                            out_normals: (streams > 0).then_some(&mut on[from..to]),
                            out_tangents: (streams > 1).then_some(&mut ot[from..to]),
                        }
                        .run()
                        .unwrap();
                    };
                let (mut op, mut on, mut ot) = ([S; N], [S; N], [S4; N]);
                skin(0, N, &mut op, &mut on, &mut ot);
                let (mut ep, mut en, mut et) = ([S; N], [S; N], [S4; N]);
                for v in 0..N {
                    skin(v, v + 1, &mut ep, &mut en, &mut et);
                }
                for v in 0..N {
                    let bits3 = |a: Vec3<f32>| [a.x.to_bits(), a.y.to_bits(), a.z.to_bits()];
                    let bits4 = |a: Vec4<f32>| [a.x.to_bits(), a.y.to_bits(), a.z.to_bits(), a.w.to_bits()];
                    assert_eq!(bits3(op[v]), bits3(ep[v]), "position {v}, k = {k}, streams {streams}");
                    assert_eq!(bits3(on[v]), bits3(en[v]), "normal {v}, k = {k}, streams {streams}");
                    assert_eq!(bits4(ot[v]), bits4(et[v]), "tangent {v}, k = {k}, streams {streams}");
                }
            }
        }
    }

    /// Skins 16 vertices with `k` influences through one kernel: 0 the narrow one (the general
    /// loop over the palette), 1 the host loop for `K` influences, 2 that loop over the packed
    /// palette. Returns the output bits.
    fn skin_with_kernel<const K: usize>(pal: &[Mat4<f32>], kernel: u8) -> [[u32; 10]; 16] {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ K as u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        };
        let pos: [Vec3<f32>; 16] = core::array::from_fn(|_| Vec3::new(rnd(), rnd(), rnd()) * 4.0);
        let nrm: [Vec3<f32>; 16] = core::array::from_fn(|_| Vec3::new(rnd(), rnd(), rnd()));
        let tan: [Vec4<f32>; 16] = core::array::from_fn(|_| Vec4::new(rnd(), rnd(), rnd(), -1.0));
        let idx: [u16; 16 * 4] = core::array::from_fn(|_| ((rnd() + 1.0) * 8.0) as u16 % pal.len() as u16);
        let w: [f32; 16 * 4] = core::array::from_fn(|i| if i % 6 == 5 { -0.0 } else { rnd() });
        let (mut op, mut on, mut ot) = ([S; 16], [S; 16], [S4; 16]);
        let mut job = SkinningJob {
            palette: Palette::Matrices(pal),
            influences: K,
            joint_indices: &idx[..16 * K],
            joint_weights: &w[..16 * K],
            positions: &pos,
            normals: Some(&nrm),
            tangents: Some(&tan),
            out_positions: &mut op,
            out_normals: Some(&mut on),
            out_tangents: Some(&mut ot),
        };
        job.validate().unwrap();
        match kernel {
            0 => job.lbs_with::<0>(|i, w| blend_matrices::<f32, 0>(pal, i, w)),
            1 => job.lbs_with::<K>(|i, w| blend_matrices::<f32, K>(pal, i, w)),
            _ => {
                let table = pack(pal);
                job.lbs_with::<K>(|i, w| blend_packed::<f32, K>(&table, i, w));
            }
        }
        core::array::from_fn(|v| {
            let (p, n, t) = (op[v], on[v], ot[v]);
            [p.x, p.y, p.z, n.x, n.y, n.z, t.x, t.y, t.z, t.w].map(f32::to_bits)
        })
    }

    /// The host kernels and the narrow one, called directly (whichever this build's `run`
    /// uses): the same bits for every influence count the host specialises.
    #[test]
    fn host_and_narrow_kernels_give_the_same_bits() {
        let pal: [Mat4<f32>; 9] = core::array::from_fn(|i| {
            let f = i as f32;
            Mat4::from_trs(
                Vec3::new(f, 0.5 - f, 2.0),
                Quat::from_axis_angle(Vec3::new(0.0, 0.6, 0.8), 0.4 * f),
                Vec3::new(1.0, 1.0 + f * 0.1, 0.9),
            )
        });
        for kernel in [1, 2] {
            assert_eq!(skin_with_kernel::<1>(&pal, kernel), skin_with_kernel::<1>(&pal, 0), "kernel {kernel}, k = 1");
            assert_eq!(skin_with_kernel::<2>(&pal, kernel), skin_with_kernel::<2>(&pal, 0), "kernel {kernel}, k = 2");
            assert_eq!(skin_with_kernel::<3>(&pal, kernel), skin_with_kernel::<3>(&pal, 0), "kernel {kernel}, k = 3");
            assert_eq!(skin_with_kernel::<4>(&pal, kernel), skin_with_kernel::<4>(&pal, 0), "kernel {kernel}, k = 4");
        }
    }

    #[test]
    fn packed_palette_gives_the_same_bits() {
        check_packed_matches_direct::<67>();
        // Palettes longer than the packed table take the direct loops.
        if !cfg!(miri) {
            check_packed_matches_direct::<300>();
        }
    }

    #[test]
    fn dqs_keeps_volume_where_lbs_collapses() {
        // Two joints twisted ±90° about X; a vertex bound half to each.
        let a = Quat::from_axis_angle(Vec3::X, core::f32::consts::FRAC_PI_2);
        let b = Quat::from_axis_angle(Vec3::X, -core::f32::consts::FRAC_PI_2);
        let mats = [Mat4::from_trs(Vec3::ZERO, a, Vec3::ONE), Mat4::from_trs(Vec3::ZERO, b, Vec3::ONE)];
        let dqs = [DualQuat::from_mat4_rigid(&mats[0]), DualQuat::from_mat4_rigid(&mats[1])];
        let pos = [Vec3::new(0.0f32, 1.0, 0.0)];
        let (idx, w) = ([0u16, 1], [0.5f32, 0.5]);
        let run = |palette| {
            let mut op = [Vec3::ZERO; 1];
            SkinningJob {
                palette,
                influences: 2,
                joint_indices: &idx,
                joint_weights: &w,
                positions: &pos,
                normals: None,
                tangents: None,
                out_positions: &mut op,
                out_normals: None,
                out_tangents: None,
            }
            .run()
            .unwrap();
            op[0]
        };
        let l = run(Palette::Matrices(&mats));
        let d = run(Palette::DualQuats(&dqs));
        assert!(l.length() < 1.0e-6, "LBS collapses to the axis: {l:?}");
        assert!((d.length() - 1.0).abs() < 1.0e-5, "DQS keeps the radius: {d:?}");
        // Antipodal input: negating one palette entry changes nothing.
        let flipped = [dqs[0], DualQuat { real: -dqs[1].real, dual: -dqs[1].dual }];
        let f = run(Palette::DualQuats(&flipped));
        assert!((f - d).max_abs() < 1.0e-6);
    }
}
