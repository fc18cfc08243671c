//! CPU skinning: linear blend (matrix palette) and dual-quaternion skinning.
//!
//! Each vertex has `influences` joint indices and weights, stored consecutively
//! (`joint_indices[v * influences + k]`). Weights are expected to sum to 1; they are used as
//! given (no renormalization), so the caller decides how to treat data that does not.

use core::cell::Cell;

use crate::job::JobError;
use crate::limits::MAX_INFLUENCES;
use crate::math::{DualQuat, Mat4, SymMat3, Vec3, Vec4};
use crate::platform::{AVX2, FMA, HOST_KERNELS};
use crate::real::Lanes;
use crate::real::Real;

mod dqs;
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
/// Newton steps); on hosts, with positions and normals only, it runs as a pass of its own over
/// the skinned normals, four at a time, so that its dependency chains do not hold up the
/// skinning loop. LBS of positions and normals costs 103 instructions per vertex on x86-64
/// against 89 without it ([`run_unnormalized`](Self::run_unnormalized); callgrind, 4
/// influences per vertex, 3,934 vertices, `examples/job_cost.rs`; about 4 of them are the
/// palette table's zeroing, one `rep stosb` that callgrind counts per byte group); 64 against
/// 54 with `-C target-cpu=x86-64-v3`, whose loop blends a joint's palette columns two at a
/// time as eight lanes.
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
        // Hosts get a loop specialised for each usual influence count; microcontrollers one
        // general loop, which keeps the code small.
        if HOST_KERNELS {
            match (self.palette, self.influences) {
                (Palette::Matrices(p), 1) => self.lbs::<1, UNIT>(p),
                (Palette::Matrices(p), 2) => self.lbs::<2, UNIT>(p),
                (Palette::Matrices(p), 3) => self.lbs::<3, UNIT>(p),
                (Palette::Matrices(p), 4) => self.lbs::<4, UNIT>(p),
                (Palette::Matrices(p), _) => self.lbs::<0, UNIT>(p),
                (Palette::DualQuats(p), _) => self.dqs(p),
                (Palette::ScaledDualQuats { dual_quats, scales }, _) => self.dqs_maybe_scaled(dual_quats, scales),
            }
        } else {
            match self.palette {
                Palette::Matrices(p) => self.lbs::<0, UNIT>(p),
                Palette::DualQuats(p) => self.dqs(p),
                Palette::ScaledDualQuats { dual_quats, scales } => self.dqs_maybe_scaled(dual_quats, scales),
            }
        }
        Ok(())
    }

    /// Linear blend skinning with `K` influences (`K = 0`: `self.influences`), directions
    /// renormalized when `UNIT`.
    ///
    /// Hosts skinning enough vertices first copy the palette into a [`PackedPalette`] on the
    /// stack (three lane vectors per joint instead of four); the result is the same bit for bit.
    // Out of line on hosts: inside `run_with`, among all the other loops, the skinning loop's
    // iterators were not inlined and the influence count `K` became a value read from memory.
    #[cfg_attr(sinew_host_kernels, inline(never))]
    fn lbs<const K: usize, const UNIT: bool>(&mut self, palette: &[Mat4<R>]) {
        if HOST_KERNELS && palette.len() <= PACKED_JOINTS && self.positions.len() >= PACKED_MIN_VERTICES {
            let mut table = [PackedJoint([[R::ZERO; 4]; 4]); PACKED_JOINTS];
            pack(&mut table, palette);
            // Each index as its two bytes in memory order: a table index is the low byte
            // (validated indices are below PACKED_JOINTS), read by one byte load.
            if let Ok(idx) = bytemuck::try_cast_slice::<u16, [u8; 2]>(self.joint_indices) {
                return self.lbs_with::<K, UNIT, _>(idx, |idx, w| blend_packed::<R, K>(&table, idx, w));
            }
        }
        let idx = self.joint_indices;
        self.lbs_with::<K, UNIT, _>(idx, |idx, w| blend_matrices::<R, K>(palette, idx, w));
    }

    /// Linear blend skinning with `blend` turning a vertex's indices (`k` of `idx`'s entries,
    /// [`joint_indices`](Self::joint_indices) as `blend` reads them) and weights into its matrix,
    /// directions renormalized when `UNIT`.
    ///
    /// With positions and normals, and tangents or not, in floating point on hosts, the
    /// skinning loop leaves the directions as the matrices map them and [`renormalize`] scales
    /// them afterwards, four at a time (the same bits as [`unit`] in the loop).
    #[inline(always)]
    fn lbs_with<const K: usize, const UNIT: bool, I>(&mut self, idx: &[I], blend: impl Fn(&[I], &[R]) -> Blended<R>) {
        let k = if K == 0 { self.influences } else { K };
        let n = self.positions.len();
        let idx = &idx[..n * k];
        let wts = &self.joint_weights[..n * k];
        let pos = self.positions;
        let out_p = &mut self.out_positions[..n];
        let dir = |d: Vec3<R>| if UNIT { unit(d) } else { d };
        match (self.normals, self.out_normals.as_deref_mut(), self.tangents, self.out_tangents.as_deref_mut()) {
            (Some(nrm), Some(out_n), None, _) => {
                let (nrm, out_n) = (&nrm[..n], &mut out_n[..n]);
                // In floating point on hosts, the normals are renormalized in a second pass, four
                // at a time.
                if UNIT && HOST_KERNELS && !R::FIXED_POINT {
                    points_and_normals::<R, I, false>(&blend, k, (idx, wts), (pos, out_p), (nrm, &mut *out_n));
                    renormalize(out_n);
                } else {
                    points_and_normals::<R, I, UNIT>(&blend, k, (idx, wts), (pos, out_p), (nrm, out_n));
                }
            }
            (Some(nrm), Some(out_n), Some(tan), Some(out_t)) if HOST_KERNELS && !R::FIXED_POINT => {
                let (nrm, out_n, tan, out_t) = (&nrm[..n], &mut out_n[..n], &tan[..n], &mut out_t[..n]);
                points_normals_tangents(&blend, k, (idx, wts), (pos, out_p), (nrm, &mut *out_n), (tan, &mut *out_t));
                if UNIT {
                    renormalize(out_n);
                    renormalize_xyz(out_t);
                }
            }
            (nrm, mut out_n, tan, mut out_t) => {
                for (v, ((idx, w), (p, op))) in
                    idx.chunks_exact(k).zip(wts.chunks_exact(k)).zip(pos.iter().zip(out_p.iter_mut())).enumerate()
                {
                    let m = blend(idx, w);
                    *op = m.point(*p);
                    directions(v, (nrm, out_n.as_deref_mut()), (tan, out_t.as_deref_mut()), |d| dir(m.direction(d)));
                }
            }
        }
    }
}

/// `out[v] = f(src[v])` where the job has the stream (both slices) and `v` is in both.
#[inline(always)]
pub(super) fn map_vertex<S: Copy, D>(src: Option<&[S]>, out: Option<&mut [D]>, v: usize, f: impl FnOnce(S) -> D) {
    if let (Some(s), Some(d)) = (src.and_then(|s| s.get(v)), out.and_then(|o| o.get_mut(v))) {
        *d = f(*s);
    }
}

/// An optional input stream and its optional output.
pub(super) type Stream<'s, T> = (Option<&'s [T]>, Option<&'s mut [T]>);

/// Vertex `v`'s normal and tangent, where the job has them, through `f` (a tangent's xyz; its
/// w is kept).
#[inline(always)]
pub(super) fn directions<R: Real>(
    v: usize,
    (nrm, out_n): Stream<'_, Vec3<R>>,
    (tan, out_t): Stream<'_, Vec4<R>>,
    f: impl Fn(Vec3<R>) -> Vec3<R>,
) {
    map_vertex(nrm, out_n, v, &f);
    map_vertex(tan, out_t, v, |t| f(t.truncate()).extend(t.w));
}

/// The skinning loop of positions and normals: `blend` turns each vertex's `k` indices and
/// weights into its matrix, which moves the position and the normal (scaled to unit length
/// when `UNIT`).
///
/// A function of its own, out of line on hosts: only the loop's own pointers are live in it,
/// so they stay in registers (inside the job's method, beside the other loops, they were
/// reloaded from the stack every vertex).
///
/// In floating point on hosts, every vertex but the last writes its results with
/// [`store_over`]: one four-lane store each, instead of two stores and a lane extraction; and
/// the loop takes two vertices an iteration, which share its counters and its exit test.
#[cfg_attr(sinew_host_kernels, inline(never))]
fn points_and_normals<R: Real, I, const UNIT: bool>(
    blend: &impl Fn(&[I], &[R]) -> Blended<R>,
    k: usize,
    (idx, wts): (&[I], &[R]),
    (pos, out_p): (&[Vec3<R>], &mut [Vec3<R>]),
    (nrm, out_n): (&[Vec3<R>], &mut [Vec3<R>]),
) {
    let n = pos.len().saturating_sub(1);
    let heads =
        (idx.split_at_checked(n * k), wts.split_at_checked(n * k), pos.split_at_checked(n), nrm.split_at_checked(n));
    if let (true, Some((idx, last_idx)), Some((wts, last_w)), Some((pos, last_p)), Some((nrm, last_n))) =
        (HOST_KERNELS && !R::FIXED_POINT && !UNIT, heads.0, heads.1, heads.2, heads.3)
    {
        let (cells_p, cells_n) = (Cell::from_mut(out_p).as_slice_of_cells(), Cell::from_mut(out_n).as_slice_of_cells());
        // Two vertices an iteration (one set of loop counters for both), while a pair's stores
        // have a next pair to run over; then the one or two vertices left before the last.
        let pairs = cells_p.len().saturating_sub(2) / 2;
        let (i2, i1) = idx.split_at(pairs * 2 * k);
        let (w2, w1) = wts.split_at(pairs * 2 * k);
        let (p2, p1) = pos.split_at(pairs * 2);
        let (n2, n1) = nrm.split_at(pairs * 2);
        let it = i2.chunks_exact(2 * k).zip(w2.chunks_exact(2 * k)).zip(p2.chunks_exact(2).zip(n2.chunks_exact(2)));
        for (((i, w), (p, nv)), ((cp, np), (cn, nn))) in it.zip(pair_cells(cells_p).zip(pair_cells(cells_n))) {
            if let ([pa, pb], [na, nb], [ca, cb], [da, db], [np, _], [nn, _]) = (p, nv, cp, cn, np, nn) {
                let ((ia, ib), (wa, wb)) = (i.split_at(k), w.split_at(k));
                skin_over(blend, (ia, wa), (pa, na), ([ca, cb], [da, db]));
                skin_over(blend, (ib, wb), (pb, nb), ([cb, np], [db, nn]));
            }
        }
        let at = pairs * 2;
        let (tail_p, tail_n) = (cells_p.get(at..).unwrap_or(&[]), cells_n.get(at..).unwrap_or(&[]));
        let it = i1.chunks_exact(k).zip(w1.chunks_exact(k)).zip(p1.iter().zip(n1.iter()));
        for (((i, w), (p, nv)), (cp, cn)) in it.zip(tail_p.windows(2).zip(tail_n.windows(2))) {
            if let ([ca, cb], [da, db]) = (cp, cn) {
                skin_over(blend, (i, w), (p, nv), ([ca, cb], [da, db]));
            }
        }
        if let ([p], [nv], Some(op), Some(on)) = (last_p, last_n, cells_p.last(), cells_n.last()) {
            let m = blend(last_idx, last_w);
            op.set(m.point(*p));
            on.set(m.direction(*nv));
        }
        return;
    }
    let it = idx.chunks_exact(k).zip(wts.chunks_exact(k)).zip(pos.iter().zip(nrm.iter()));
    for (((idx, w), (p, nv)), (op, on)) in it.zip(out_p.iter_mut().zip(out_n.iter_mut())) {
        let m = blend(idx, w);
        *op = m.point(*p);
        *on = if UNIT { unit(m.direction(*nv)) } else { m.direction(*nv) };
    }
}

/// The skinning loop of positions, normals and tangents in floating point on hosts: `blend`
/// turns each vertex's `k` indices and weights into its matrix, which moves the position and
/// maps the normal and the tangent's xyz (its w kept), none of them renormalized. Every vertex
/// but the last writes its position and its normal with [`store_over`], and every tangent is
/// one four-lane store.
#[cfg_attr(sinew_host_kernels, inline(never))]
fn points_normals_tangents<R: Real, I>(
    blend: &impl Fn(&[I], &[R]) -> Blended<R>,
    k: usize,
    (idx, wts): (&[I], &[R]),
    (pos, out_p): (&[Vec3<R>], &mut [Vec3<R>]),
    (nrm, out_n): (&[Vec3<R>], &mut [Vec3<R>]),
    (tan, out_t): (&[Vec4<R>], &mut [Vec4<R>]),
) {
    let tangent = |m: &Blended<R>, t: &Vec4<R>| {
        let a = m.linear(t.truncate()).to_array();
        Vec4::new(a[0], a[1], a[2], t.w)
    };
    let (cells_p, cells_n) = (Cell::from_mut(out_p).as_slice_of_cells(), Cell::from_mut(out_n).as_slice_of_cells());
    let it = idx.chunks_exact(k).zip(wts.chunks_exact(k)).zip(pos.iter().zip(nrm.iter()).zip(tan.iter().zip(out_t)));
    let mut it = it.zip(cells_p.iter().zip(cells_n.iter()));
    // Each vertex but the last, with the next one's cells for `store_over`.
    let Some(mut cur) = it.next() else { return };
    for next in it {
        let (((i, w), ((p, nv), (t, ot))), (cp, cn)) = cur;
        let m = blend(i, w);
        store_over([cp, next.1 .0], m.point_lanes(*p));
        store_over([cn, next.1 .1], m.linear(*nv));
        *ot = tangent(&m, t);
        cur = next;
    }
    let (((i, w), ((p, nv), (t, ot))), (cp, cn)) = cur;
    let m = blend(i, w);
    cp.set(m.point(*p));
    cn.set(m.direction(*nv));
    *ot = tangent(&m, t);
}

/// One vertex of [`points_and_normals`]' four-lane path: its matrix from its indices and
/// weights, then its position and normal each [`store_over`] its output cell and the next one.
#[inline(always)]
fn skin_over<R: Real, I>(
    blend: &impl Fn(&[I], &[R]) -> Blended<R>,
    (idx, w): (&[I], &[R]),
    (p, nv): (&Vec3<R>, &Vec3<R>),
    (cp, cn): (Over<'_, R>, Over<'_, R>),
) {
    let m = blend(idx, w);
    store_over(cp, m.point_lanes(*p));
    store_over(cn, m.linear(*nv));
}

/// An output cell and the next one, which a [`store_over`] into the first runs over.
type Over<'c, R> = [&'c Cell<Vec3<R>>; 2];

/// Each pair of `c`'s elements with the pair after it (for two vertices' [`store_over`]).
#[inline(always)]
fn pair_cells<T>(c: &[T]) -> impl Iterator<Item = (&[T], &[T])> {
    c.chunks_exact(2).zip(c.chunks_exact(2).skip(1))
}

/// Lanes 0 to 2 of `v` into `cur`, and lane 3 into `next.x`, which the next vertex's results
/// overwrite: the four lanes are one store.
#[inline(always)]
fn store_over<R: Real>([cur, next]: Over<'_, R>, v: V<R>) {
    let a = v.to_array();
    cur.set(Vec3::new(a[0], a[1], a[2]));
    let mut n = next.get();
    n.x = a[3];
    next.set(n);
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

/// Every vector of `v` scaled to unit length ([`unit`]), four at a time in floating point: the
/// squared lengths summed as [`unit`] sums them, then, four at once, the lanes' bit-level seed
/// and Newton steps (the scalar ones), so the same bits as [`unit`] vector by vector. The
/// groups of four do not depend on each other, so the Newton steps' dependency chains overlap
/// (one chain per vertex inside the skinning loop would hold up the vertices after it).
#[inline(always)]
fn renormalize<R: Real>(v: &mut [Vec3<R>]) {
    renormalize_by(v, |v| *v, |v, u| *v = u);
}

/// The xyz of every vector of `v` scaled to unit length, as [`renormalize`]; w is kept.
#[inline(always)]
fn renormalize_xyz<R: Real>(v: &mut [Vec4<R>]) {
    renormalize_by(v, |t| t.truncate(), |t, u| *t = u.extend(t.w));
}

/// [`renormalize`] of the vectors `get` reads from `v`'s elements and `set` writes back.
#[inline(always)]
fn renormalize_by<R: Real, T>(v: &mut [T], get: impl Fn(&T) -> Vec3<R>, set: impl Fn(&mut T, Vec3<R>)) {
    let mut groups = v.chunks_exact_mut(4);
    for g in groups.by_ref() {
        if let [a, b, c, d] = g {
            let l2 = V::<R>::load(&[&*a, &*b, &*c, &*d].map(|x| get(x).length_squared()));
            for (x, s) in [a, b, c, d].into_iter().zip(l2.inv_sqrt_positive().to_array()) {
                set(x, get(x) * s);
            }
        }
    }
    for x in groups.into_remainder() {
        set(x, unit(get(x)));
    }
}

/// The lanes of one matrix column.
type V<R> = <R as Real>::Lanes;

/// Palette entries the packed table holds: one per value of a byte, so that validated indices,
/// all below the palette length, index it by their low byte without a bounds check.
const PACKED_JOINTS: usize = 1 << u8::BITS;

/// Fewest vertices for which packing the palette (a 16 KiB table for `f32`) pays off.
const PACKED_MIN_VERTICES: usize = 256;

/// A palette without its matrices' last rows, which only reach the discarded fourth output
/// lane, one 64-byte entry per joint (an entry's address is the joint index shifted). Without
/// AVX2, `table[j]` holds, for joint `j`, the first three rows of each of its columns 0 to 2
/// and, in their fourth lanes, the rows of its translation (three lane vectors per joint
/// instead of four). With AVX2 it holds the four columns as they are: eight lanes hold two
/// columns, so columns 0 and 1, then column 2 and the translation, are two eight-lane
/// operations, and the translation needs no gathering from the fourth lanes.
type PackedPalette<R> = [PackedJoint<R>; PACKED_JOINTS];

/// One joint of a [`PackedPalette`] on a 64-byte boundary (one cache line; SSE and AVX
/// arithmetic read the columns from memory directly).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct PackedJoint<R>([[R; 4]; 4]);

/// `palette` (at most [`PACKED_JOINTS`] entries) into `table`'s first entries.
fn pack<R: Real>(table: &mut PackedPalette<R>, palette: &[Mat4<R>]) {
    for (entry, m) in table.iter_mut().zip(palette) {
        if AVX2 {
            entry.0 = m.cols;
        } else {
            let t = m.cols[3];
            for (c, col) in entry.0.iter_mut().take(3).enumerate() {
                *col = [m.cols[c][0], m.cols[c][1], m.cols[c][2], t[c]];
            }
        }
    }
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
        vec3(self.point_lanes(v))
    }

    /// [`point`](Self::point) in lanes 0 to 2.
    #[inline(always)]
    fn point_lanes(&self, v: Vec3<R>) -> V<R> {
        let s = V::<R>::splat;
        affine_point::<R>(self.cols, self.translation, [s(v.x), s(v.y), s(v.z)])
    }

    /// `m · (v, 0)`: `(c₀·x + c₁·y) + c₂·z`, lane by lane.
    #[inline(always)]
    fn direction(&self, v: Vec3<R>) -> Vec3<R> {
        vec3(self.linear(v))
    }

    #[inline(always)]
    fn linear(&self, v: Vec3<R>) -> V<R> {
        let s = V::<R>::splat;
        affine_linear::<R>(self.cols, [s(v.x), s(v.y), s(v.z)])
    }
}

/// `c₀·x + c₁·y + c₂·z + t` lane by lane: with FMA three fused multiply-adds from `t`,
/// `((t + c₀·x) + c₁·y) + c₂·z`; otherwise [`affine_linear`] then `+ t`. One set of operations
/// for a matrix's columns against a vector's broadcast components ([`Blended`]) and for four
/// matrices' rows against four vectors' components (DQS), so the two give the same bits.
#[inline(always)]
fn affine_point<R: Real>([c0, c1, c2]: [V<R>; 3], t: V<R>, [x, y, z]: [V<R>; 3]) -> V<R> {
    if FMA {
        return c2.mul_add(z, c1.mul_add(y, c0.mul_add(x, t)));
    }
    affine_linear::<R>([c0, c1, c2], [x, y, z]) + t
}

/// `(c₀·x + c₁·y) + c₂·z` lane by lane (see [`affine_point`]).
#[inline(always)]
fn affine_linear<R: Real>([c0, c1, c2]: [V<R>; 3], [x, y, z]: [V<R>; 3]) -> V<R> {
    c2.mul_add(z, c1.mul_add(y, c0 * x))
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
fn blend_with<R: Real, const K: usize, const C: usize, I: Copy>(
    idx: &[I],
    w: &[R],
    load: impl Fn(I) -> Option<[V<R>; C]>,
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
        blend_with::<R, K, 4, _>(idx, w, |j| palette.get(usize::from(j)).map(|m| m.cols.map(|c| V::<R>::load(&c))));
    Blended { cols: [c0, c1, c2], translation: t }
}

/// The weighted sum of the influences' [`PackedPalette`] entries. Without AVX2, three columns
/// with the translation in their fourth lanes, moved out afterwards; with AVX2, columns 0 and 1
/// and column 2 and the translation as two pairs of lanes ([`Lanes::mul_add_pair`]): the same
/// operations in the same order for every lane that matters, so the same bits.
#[inline(always)]
fn blend_packed<R: Real, const K: usize>(table: &PackedPalette<R>, idx: &[[u8; 2]], w: &[R]) -> Blended<R> {
    // Validated indices are below the palette length, at most PACKED_JOINTS (256): the low
    // byte is the index, and a byte indexes the table without a bounds check.
    const LOW: usize = if cfg!(target_endian = "little") { 0 } else { 1 };
    let entry = |j: [u8; 2]| &table[usize::from(j[LOW])].0;
    if AVX2 {
        let k = if K == 0 { idx.len().min(w.len()) } else { K };
        let (idx, w) = (idx.get(..k).unwrap_or(&[]), w.get(..k).unwrap_or(&[]));
        let [c0, c1, c2, t] = blend_pairs(idx.iter().map(|&j| entry(j)), w);
        return Blended { cols: [c0, c1, c2], translation: t };
    }
    let cols = blend_with::<R, K, 3, _>(idx, w, |j| {
        let e = entry(j);
        Some([V::<R>::load(&e[0]), V::<R>::load(&e[1]), V::<R>::load(&e[2])])
    });
    let [c0, c1, c2] = cols;
    let (t0, t1, t2) = (c0.to_array()[3], c1.to_array()[3], c2.to_array()[3]);
    // Lane 3 is never read as a result; [`store_over`] stores it, and t2 there takes one
    // shuffle less than a zero would.
    Blended { cols, translation: V::<R>::load(&[t0, t1, t2, t2]) }
}

/// [`blend_with`] of four columns as two pairs of lanes: `Σ wᵢ·vᵢ`, accumulated in order from
/// the first product, for each column of the `entries`, one per weight.
#[inline(always)]
fn blend_pairs<'t, R: Real + 't>(entries: impl Iterator<Item = &'t [[R; 4]; 4]>, w: &[R]) -> [V<R>; 4] {
    let zero = V::<R>::splat(R::ZERO);
    let (mut s01, mut s23) = ([zero; 2], [zero; 2]);
    for (i, (e, &wj)) in entries.zip(w.iter()).enumerate() {
        let [c0, c1, c2, c3] = e;
        let (c01, c23) = ([V::<R>::load(c0), V::<R>::load(c1)], [V::<R>::load(c2), V::<R>::load(c3)]);
        if i == 0 {
            s01 = V::<R>::mul_pair(c01, wj);
            s23 = V::<R>::mul_pair(c23, wj);
        } else {
            s01 = V::<R>::mul_add_pair(c01, wj, s01);
            s23 = V::<R>::mul_add_pair(c23, wj, s23);
        }
    }
    [s01[0], s01[1], s23[0], s23[1]]
}

#[cfg(test)]
mod tests;
