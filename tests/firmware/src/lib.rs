//! The scene the bare-metal probe runs, and its checksums.
//!
//! A 16-joint tree (a 13-joint chain with a 3-joint branch) carries a 100-vertex box strip
//! skinned with four influences per vertex. Each of [`FRAMES`] frames poses the skeleton from a
//! fixed sequence of times, runs [`LocalToModelJob`], [`SkinMatrixJob`], [`SkinDualQuatJob`] and
//! [`SkinningJob`] (linear blend, then dual quaternion, [`CHUNK`] vertices per run), and hashes
//! the bit patterns of the model matrices and skinned positions and normals with FNV-1a.
//!
//! The crate is `no_std` and allocation-free, generic over the scalar ([`Scalar`]: `f32` or
//! [`Q16`]), so the firmware and a host build compute the same report and their outputs can be
//! compared line by line. Every constant comes from [`Real::ratio`] or an integer, so the Q16.16
//! build contains no floating-point arithmetic.

#![no_std]
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]
#![forbid(unsafe_code)]

use core::fmt;

use sinew::job::{JobError, LocalToModelJob, Palette, SkinDualQuatJob, SkinMatrixJob, SkinningJob};
use sinew::limits::soa_count;
use sinew::math::{ops, DualQuat, Mat4, Quat, SoaQuat, SoaTransform, SoaVec3, Transform, Vec3};
use sinew::skeleton::{Skeleton, SkeletonError, SkeletonView, NO_PARENT};
use sinew::{Real, Q16};

/// Joints in the main chain (joint 0 is the root; each joint's parent is the one before it).
pub const CHAIN: usize = 13;
/// Joints in the side branch, hanging off chain joint [`BRANCH_PARENT`].
pub const BRANCH: usize = 3;
/// The chain joint the branch hangs off.
pub const BRANCH_PARENT: usize = 6;
/// Joints in the skeleton.
pub const JOINTS: usize = CHAIN + BRANCH;
/// SoA elements of the skeleton and pose.
pub const SOA: usize = soa_count(JOINTS);
/// Rings of four vertices: two per chain bone, plus one at the tip.
pub const RINGS: usize = 2 * (CHAIN - 1) + 1;
/// Vertices of the skinned mesh.
pub const VERTICES: usize = 4 * RINGS;
/// Joint influences per vertex.
pub const INFLUENCES: usize = 4;
/// Vertices skinned per [`SkinningJob`] run; the mesh is skinned in `VERTICES / CHUNK` chunks.
pub const CHUNK: usize = 10;
/// Frames the probe computes, at 1/8 s apart.
pub const FRAMES: usize = 16;

const _: () = assert!(VERTICES % CHUNK == 0, "the mesh must split into whole chunks");

/// Joint names: `c0`–`c12` along the chain, `b0`–`b2` along the branch.
pub const NAMES: [&str; JOINTS] =
    ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10", "c11", "c12", "b0", "b1", "b2"];

/// A scalar the probe can run in and hash.
pub trait Scalar: Real {
    /// The name printed in the report header.
    const NAME: &'static str;
    /// The value's bit pattern (`f32::to_bits`, or the raw Q16.16 bits).
    fn bits(self) -> u32;
}

impl Scalar for f32 {
    const NAME: &'static str = "f32";
    #[inline]
    fn bits(self) -> u32 {
        self.to_bits()
    }
}

impl Scalar for Q16 {
    const NAME: &'static str = "q16";
    #[inline]
    fn bits(self) -> u32 {
        self.to_bits() as u32
    }
}

/// 32-bit FNV-1a over little-endian words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fnv1a(u32);

impl Default for Fnv1a {
    fn default() -> Self {
        Self::new()
    }
}

impl Fnv1a {
    /// The FNV-1a offset basis.
    #[must_use]
    pub const fn new() -> Self {
        Fnv1a(0x811c_9dc5)
    }
    /// Hashes the four bytes of `w`, least significant first.
    pub fn word(&mut self, w: u32) {
        for b in w.to_le_bytes() {
            self.0 = (self.0 ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
    }
    /// Hashes a scalar's bit pattern.
    pub fn scalar<R: Scalar>(&mut self, v: R) {
        self.word(v.bits());
    }
    /// Hashes `x`, `y`, `z`.
    pub fn vec3<R: Scalar>(&mut self, v: &Vec3<R>) {
        self.scalar(v.x);
        self.scalar(v.y);
        self.scalar(v.z);
    }
    /// Hashes the 16 elements, column by column.
    pub fn mat4<R: Scalar>(&mut self, m: &Mat4<R>) {
        for c in &m.cols {
            for &v in c {
                self.scalar(v);
            }
        }
    }
    /// The hash so far.
    #[must_use]
    pub const fn finish(self) -> u32 {
        self.0
    }
}

/// Why the probe failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeError {
    /// The skeleton was refused.
    Skeleton(SkeletonError),
    /// A job was refused.
    Job(JobError),
    /// A joint's bind matrix has no inverse.
    SingularBind {
        /// The joint.
        joint: u16,
    },
    /// The skeleton does not have [`JOINTS`] joints.
    WrongSkeleton,
    /// Writing the report failed.
    Output,
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Skeleton(e) => write!(f, "skeleton: {e}"),
            Self::Job(e) => write!(f, "job: {e}"),
            Self::SingularBind { joint } => write!(f, "the bind matrix of joint {joint} is singular"),
            Self::WrongSkeleton => write!(f, "the skeleton does not have {JOINTS} joints"),
            Self::Output => f.write_str("writing the report failed"),
        }
    }
}

impl core::error::Error for ProbeError {}

impl From<SkeletonError> for ProbeError {
    fn from(e: SkeletonError) -> Self {
        Self::Skeleton(e)
    }
}

impl From<JobError> for ProbeError {
    fn from(e: JobError) -> Self {
        Self::Job(e)
    }
}

impl From<fmt::Error> for ProbeError {
    fn from(_: fmt::Error) -> Self {
        Self::Output
    }
}

/// Parent of joint `j` ([`NO_PARENT`] for the root and for indices past the skeleton).
#[must_use]
pub fn parent(j: usize) -> i16 {
    if j == 0 || j >= JOINTS {
        NO_PARENT
    } else if j == CHAIN {
        BRANCH_PARENT as i16
    } else {
        (j - 1) as i16
    }
}

/// Rest transform of joint `j`: chain bones half a unit long along +Y with a slight alternating
/// bend about Z; the branch turned towards +X.
#[must_use]
pub fn rest_transform<R: Scalar>(j: usize) -> Transform<R> {
    let mut t = Transform::IDENTITY;
    if j == 0 {
        return t;
    }
    if j < CHAIN {
        t.translation = Vec3::new(R::ZERO, R::HALF, R::ZERO);
        t.rotation = Quat::from_axis_angle(Vec3::Z, R::ratio((j % 3) as i32 - 1, 20));
    } else if j == CHAIN {
        t.translation = Vec3::new(R::ratio(1, 5), R::ratio(1, 4), R::ZERO);
        t.rotation = Quat::from_axis_angle(Vec3::Z, R::ratio(-3, 2));
    } else {
        t.translation = Vec3::new(R::ZERO, R::ratio(2, 5), R::ZERO);
        t.rotation = Quat::from_axis_angle(Vec3::X, R::ratio(1, 5));
    }
    t
}

/// Builds the probe's skeleton.
///
/// # Errors
///
/// [`SkeletonError`] if the hierarchy or rest pose were refused (they are fixed, so only a
/// broken `Skeleton::new` would refuse them).
pub fn build_skeleton<R: Scalar>() -> Result<Skeleton<R, SOA>, SkeletonError> {
    let parents: [i16; JOINTS] = core::array::from_fn(parent);
    let rest: [Transform<R>; JOINTS] = core::array::from_fn(rest_transform);
    Skeleton::new(&parents, &rest, &NAMES)
}

/// Time of frame `frame`, in seconds: `frame / 8`.
#[must_use]
pub fn frame_time<R: Scalar>(frame: usize) -> R {
    R::ratio(frame as i32, 8)
}

/// Local transform of joint `j` at time `t`: its rest transform turned by
/// `amplitude · sin(π·t + j/2)` about an axis that cycles through X, Z and (3/5, 0, 4/5); the
/// root also slides along X and spins about Y.
#[must_use]
pub fn animated_transform<R: Scalar>(j: usize, t: R) -> Transform<R> {
    let mut tr = rest_transform::<R>(j);
    let axis = match j % 3 {
        0 => Vec3::X,
        1 => Vec3::Z,
        _ => Vec3::new(R::ratio(3, 5), R::ZERO, R::ratio(4, 5)),
    };
    let amplitude = if j < CHAIN { R::ratio(1, 4) } else { R::HALF };
    let (s, _) = ops::sin_cos(R::PI * t + R::ratio(j as i32, 2));
    tr.rotation = tr.rotation * Quat::from_axis_angle(axis, amplitude * s);
    if j == 0 {
        let (s, _) = ops::sin_cos(R::FRAC_PI_2 * t);
        tr.translation = Vec3::new(R::HALF * s, R::ZERO, R::ZERO);
        tr.rotation = Quat::from_axis_angle(Vec3::Y, t) * tr.rotation;
    }
    tr
}

/// The model matrix the roots hang from: half a unit back along −Z, turned 0.5 rad about Y.
#[must_use]
pub fn root_matrix<R: Scalar>() -> Mat4<R> {
    Mat4::from_trs(Vec3::new(R::ZERO, R::ZERO, -R::HALF), Quat::from_axis_angle(Vec3::Y, R::HALF), Vec3::ONE)
}

/// The four corners of ring `k` in the local frame of its segment joint, the outward corner
/// normals (not normalized), and the segment joint.
fn ring<R: Scalar>(k: usize) -> (usize, [Vec3<R>; 4], [Vec3<R>; 4]) {
    let segment = (k / 2).min(CHAIN - 1);
    let h = if k % 2 == 1 { R::ratio(1, 4) } else { R::ZERO };
    // The box tapers from 1/6 to 1/15 of a unit along the chain.
    let w = R::ratio(40 - k as i32, 240);
    let signs = [(1, 1), (-1, 1), (-1, -1), (1, -1)];
    let corners = signs.map(|(sx, sz)| Vec3::new(R::from_i32(sx) * w, h, R::from_i32(sz) * w));
    let normals = signs.map(|(sx, sz)| Vec3::new(R::from_i32(sx), R::ZERO, R::from_i32(sz)));
    (segment, corners, normals)
}

/// Influences of the vertices of ring `k`: its segment joint, the next one, and the two
/// neighbours beyond, with weights 3/4, 0, 1/8, 1/8 on a joint and 3/8, 3/8, 1/8, 1/8 between
/// two joints. Indices are clamped to the chain.
fn ring_influences<R: Scalar>(k: usize) -> ([u16; INFLUENCES], [R; INFLUENCES]) {
    let s = (k / 2).min(CHAIN - 1);
    let last = CHAIN - 1;
    let idx = [s, (s + 1).min(last), s.saturating_sub(1), (s + 2).min(last)].map(|j| j as u16);
    let w = if k % 2 == 1 {
        [R::ratio(3, 8), R::ratio(3, 8), R::ratio(1, 8), R::ratio(1, 8)]
    } else {
        [R::ratio(3, 4), R::ZERO, R::ratio(1, 8), R::ratio(1, 8)]
    };
    (idx, w)
}

/// Bind-pose position and unit normal of vertex `v` given the bind model matrices.
fn bind_vertex<R: Scalar>(bind: &[Mat4<R>; JOINTS], v: usize) -> (Vec3<R>, Vec3<R>) {
    let (segment, corners, normals) = ring::<R>((v % VERTICES) / 4);
    let m = &bind[segment];
    (m.transform_point3(corners[v % 4]), m.transform_vector3(normals[v % 4]).normalize_or_zero())
}

/// Checksums of one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameSums {
    /// FNV-1a over the model matrices.
    pub model: u32,
    /// FNV-1a over the linear-blend skinned vertices (position, then normal, vertex by vertex).
    pub lbs: u32,
    /// FNV-1a over the dual-quaternion skinned vertices.
    pub dqs: u32,
}

/// One chunk of the mesh: its bind-pose vertices and influences, and the skinned outputs.
///
/// The mesh is skinned [`CHUNK`] vertices at a time, so a part with a few KiB of RAM holds
/// only one chunk, never the whole mesh.
#[derive(Clone, Debug)]
pub struct Chunk<R> {
    /// Bind-pose positions.
    pub positions: [Vec3<R>; CHUNK],
    /// Bind-pose unit normals.
    pub normals: [Vec3<R>; CHUNK],
    /// [`INFLUENCES`] joint indices per vertex.
    pub joint_indices: [u16; CHUNK * INFLUENCES],
    /// [`INFLUENCES`] weights per vertex, summing to 1.
    pub joint_weights: [R; CHUNK * INFLUENCES],
    /// Skinned positions.
    pub out_positions: [Vec3<R>; CHUNK],
    /// Skinned normals.
    pub out_normals: [Vec3<R>; CHUNK],
}

/// Every buffer the probe uses: bind matrices, pose, palettes and one mesh chunk.
///
/// It is plain data with an all-zero constant, [`Probe::ZERO`], so a firmware can keep it in a
/// static (`.bss`) instead of on its stack.
#[derive(Clone, Debug)]
pub struct Probe<R> {
    /// Bind (rest-pose) model matrices, one per joint.
    pub bind: [Mat4<R>; JOINTS],
    /// Their inverses.
    pub inverse_bind: [Mat4<R>; JOINTS],
    /// The current local pose.
    pub pose: [SoaTransform<R>; SOA],
    /// The current model matrices.
    pub model: [Mat4<R>; JOINTS],
    /// The current skinning matrices.
    pub skin: [Mat4<R>; JOINTS],
    /// The current skinning dual quaternions.
    pub dual: [DualQuat<R>; JOINTS],
    /// The mesh chunk last loaded.
    pub chunk: Chunk<R>,
}

/// The all-zero quaternion (not a rotation: a placeholder until the first pose).
const fn quat_zero<R: Real>() -> Quat<R> {
    Quat::new(R::ZERO, R::ZERO, R::ZERO, R::ZERO)
}

impl<R: Scalar> Probe<R> {
    const SOA_ZERO: SoaTransform<R> = SoaTransform {
        translation: SoaVec3::ZERO,
        rotation: SoaQuat { x: [R::ZERO; 4], y: [R::ZERO; 4], z: [R::ZERO; 4], w: [R::ZERO; 4] },
        scale: SoaVec3::ZERO,
    };

    /// Every buffer zeroed (all bits 0, so a static of it lands in `.bss`).
    pub const ZERO: Self = Probe {
        bind: [Mat4::ZERO; JOINTS],
        inverse_bind: [Mat4::ZERO; JOINTS],
        pose: [Self::SOA_ZERO; SOA],
        model: [Mat4::ZERO; JOINTS],
        skin: [Mat4::ZERO; JOINTS],
        dual: [DualQuat { real: quat_zero(), dual: quat_zero() }; JOINTS],
        chunk: Chunk {
            positions: [Vec3::ZERO; CHUNK],
            normals: [Vec3::ZERO; CHUNK],
            joint_indices: [0; CHUNK * INFLUENCES],
            joint_weights: [R::ZERO; CHUNK * INFLUENCES],
            out_positions: [Vec3::ZERO; CHUNK],
            out_normals: [Vec3::ZERO; CHUNK],
        },
    };

    /// Binds the mesh to `skeleton`'s rest pose: computes the bind model matrices (no root)
    /// and their inverses.
    ///
    /// # Errors
    ///
    /// [`ProbeError::WrongSkeleton`] unless the skeleton has [`JOINTS`] joints, a job error, or
    /// [`ProbeError::SingularBind`].
    pub fn bind(&mut self, skeleton: SkeletonView<'_, R>) -> Result<(), ProbeError> {
        if skeleton.num_joints() != JOINTS {
            return Err(ProbeError::WrongSkeleton);
        }
        LocalToModelJob {
            skeleton,
            root: None,
            input: skeleton.rest_pose(),
            output: &mut self.bind,
            from: None,
            to: None,
        }
        .run()?;
        for (j, (ib, m)) in self.inverse_bind.iter_mut().zip(self.bind.iter()).enumerate() {
            *ib = m.inverse().ok_or(ProbeError::SingularBind { joint: j as u16 })?;
        }
        Ok(())
    }

    /// Bind-pose position and unit normal of vertex `v` (after [`Probe::bind`]): the ring's
    /// corner placed by the bind matrix of its segment joint. Vertices past the mesh wrap.
    #[must_use]
    pub fn bind_vertex(&self, v: usize) -> (Vec3<R>, Vec3<R>) {
        bind_vertex(&self.bind, v)
    }

    /// Fills [`Probe::chunk`]'s inputs with chunk `c` of the mesh (vertices `c·CHUNK` onwards).
    pub fn load_chunk(&mut self, c: usize) {
        let ch = &mut self.chunk;
        let vertices = ch.positions.iter_mut().zip(ch.normals.iter_mut());
        let influences =
            ch.joint_indices.chunks_exact_mut(INFLUENCES).zip(ch.joint_weights.chunks_exact_mut(INFLUENCES));
        for (i, ((p, n), (idx, w))) in vertices.zip(influences).enumerate() {
            let v = c * CHUNK + i;
            (*p, *n) = bind_vertex(&self.bind, v);
            let (ri, rw) = ring_influences::<R>((v % VERTICES) / 4);
            idx.copy_from_slice(&ri);
            w.copy_from_slice(&rw);
        }
    }

    /// Poses the skeleton at frame `frame` and computes the model matrices and both skinning
    /// palettes.
    ///
    /// # Errors
    ///
    /// [`ProbeError::WrongSkeleton`] or a job error.
    pub fn pose(&mut self, skeleton: SkeletonView<'_, R>, frame: usize) -> Result<(), ProbeError> {
        if skeleton.num_joints() != JOINTS {
            return Err(ProbeError::WrongSkeleton);
        }
        let t = frame_time::<R>(frame);
        for j in 0..JOINTS {
            if let Some(soa) = self.pose.get_mut(j / 4) {
                soa.set_lane(j % 4, &animated_transform(j, t));
            }
        }
        self.palettes(skeleton)
    }

    /// Computes the model matrices of the current [`Probe::pose`] (under [`root_matrix`]) and
    /// both skinning palettes.
    ///
    /// # Errors
    ///
    /// A job error.
    pub fn palettes(&mut self, skeleton: SkeletonView<'_, R>) -> Result<(), ProbeError> {
        let root = root_matrix::<R>();
        LocalToModelJob {
            skeleton,
            root: Some(&root),
            input: &self.pose,
            output: &mut self.model,
            from: None,
            to: None,
        }
        .run()?;
        SkinMatrixJob { model: &self.model, inverse_bind: &self.inverse_bind, joints: None, output: &mut self.skin }
            .run()?;
        SkinDualQuatJob { model: &self.model, inverse_bind: &self.inverse_bind, joints: None, output: &mut self.dual }
            .run()?;
        Ok(())
    }

    /// Skins the loaded chunk with the matrix palette (`dual_quat` false) or the
    /// dual-quaternion palette into its outputs.
    ///
    /// # Errors
    ///
    /// A job error.
    pub fn skin_chunk(&mut self, dual_quat: bool) -> Result<(), ProbeError> {
        let palette = if dual_quat { Palette::DualQuats(&self.dual) } else { Palette::Matrices(&self.skin) };
        let ch = &mut self.chunk;
        SkinningJob {
            palette,
            influences: INFLUENCES,
            joint_indices: &ch.joint_indices,
            joint_weights: &ch.joint_weights,
            positions: &ch.positions,
            normals: Some(&ch.normals),
            tangents: None,
            out_positions: &mut ch.out_positions,
            out_normals: Some(&mut ch.out_normals),
            out_tangents: None,
        }
        .run()?;
        Ok(())
    }

    /// Skins the whole mesh chunk by chunk and calls `visit(vertex, position, normal)` for
    /// every skinned vertex, in order.
    ///
    /// # Errors
    ///
    /// A job error.
    pub fn skin_mesh<F: FnMut(usize, &Vec3<R>, &Vec3<R>)>(
        &mut self,
        dual_quat: bool,
        mut visit: F,
    ) -> Result<(), ProbeError> {
        for c in 0..VERTICES / CHUNK {
            self.load_chunk(c);
            self.skin_chunk(dual_quat)?;
            let ch = &self.chunk;
            for (i, (p, n)) in ch.out_positions.iter().zip(ch.out_normals.iter()).enumerate() {
                visit(c * CHUNK + i, p, n);
            }
        }
        Ok(())
    }

    /// Runs frame `frame` and returns its checksums.
    ///
    /// # Errors
    ///
    /// As [`Probe::pose`] and [`Probe::skin_chunk`].
    pub fn frame(&mut self, skeleton: SkeletonView<'_, R>, frame: usize) -> Result<FrameSums, ProbeError> {
        self.pose(skeleton, frame)?;
        let mut h = Fnv1a::new();
        self.model.iter().for_each(|m| h.mat4(m));
        let model = h.finish();
        let mut sums = [0u32; 2];
        for (dual_quat, sum) in [false, true].into_iter().zip(sums.iter_mut()) {
            let mut h = Fnv1a::new();
            self.skin_mesh(dual_quat, |_, p, n| {
                h.vec3(p);
                h.vec3(n);
            })?;
            *sum = h.finish();
        }
        Ok(FrameSums { model, lbs: sums[0], dqs: sums[1] })
    }
}

/// Binds the mesh, runs every frame and writes the report to `out`: a header line, one line
/// per frame (`frame NN model XXXXXXXX lbs XXXXXXXX dqs XXXXXXXX`), and
/// `checksum 0xXXXXXXXX`, the FNV-1a of all frame checksums, which it also returns.
///
/// # Errors
///
/// As [`Probe::bind`] and [`Probe::frame`], or [`ProbeError::Output`] when `out` fails.
pub fn report<R: Scalar, W: fmt::Write>(
    out: &mut W,
    skeleton: SkeletonView<'_, R>,
    probe: &mut Probe<R>,
) -> Result<u32, ProbeError> {
    writeln!(
        out,
        "sinew-firmware scalar {} joints {JOINTS} vertices {VERTICES} influences {INFLUENCES} frames {FRAMES}",
        R::NAME
    )?;
    probe.bind(skeleton)?;
    let mut total = Fnv1a::new();
    for f in 0..FRAMES {
        let s = probe.frame(skeleton, f)?;
        writeln!(out, "frame {f:02} model {:08x} lbs {:08x} dqs {:08x}", s.model, s.lbs, s.dqs)?;
        total.word(s.model);
        total.word(s.lbs);
        total.word(s.dqs);
    }
    let sum = total.finish();
    writeln!(out, "checksum 0x{sum:08x}")?;
    Ok(sum)
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::boxed::Box;
    use std::string::String;
    use std::vec::Vec;

    use super::*;

    fn setup<R: Scalar>() -> (Skeleton<R, SOA>, Box<Probe<R>>) {
        let skeleton = build_skeleton::<R>().unwrap();
        let mut probe = Box::new(Probe::<R>::ZERO);
        probe.bind(skeleton.view()).unwrap();
        (skeleton, probe)
    }

    fn skinned<R: Scalar>(probe: &mut Probe<R>, dual_quat: bool) -> Vec<(Vec3<R>, Vec3<R>)> {
        let mut out = Vec::new();
        probe
            .skin_mesh(dual_quat, |v, p, n| {
                assert_eq!(v, out.len());
                out.push((*p, *n));
            })
            .unwrap();
        assert_eq!(out.len(), VERTICES);
        out
    }

    fn dist(a: Vec3<f32>, b: Vec3<f32>) -> f32 {
        (a - b).length()
    }

    fn to_f32(v: Vec3<Q16>) -> Vec3<f32> {
        Vec3::new(v.x.to_f32(), v.y.to_f32(), v.z.to_f32())
    }

    #[test]
    fn rest_pose_reproduces_the_bind_mesh() {
        let (skeleton, mut probe) = setup::<f32>();
        probe.pose.copy_from_slice(skeleton.rest_pose());
        probe.palettes(skeleton.view()).unwrap();
        let root = root_matrix::<f32>();
        for dual_quat in [false, true] {
            let mut worst = 0.0f32;
            for (v, (p, n)) in skinned(&mut probe, dual_quat).into_iter().enumerate() {
                let (bp, bn) = probe.bind_vertex(v);
                worst = worst.max(dist(p, root.transform_point3(bp))).max(dist(n, root.transform_vector3(bn)));
            }
            assert!(worst < 2.0e-6, "dual_quat {dual_quat}: worst error {worst:e}");
        }
    }

    #[test]
    fn model_matrices_match_a_product_of_trs_matrices() {
        let (skeleton, mut probe) = setup::<f32>();
        for frame in [0, 5, 11] {
            probe.pose(skeleton.view(), frame).unwrap();
            let t = frame_time::<f32>(frame);
            let mut reference = [Mat4::IDENTITY; JOINTS];
            for j in 0..JOINTS {
                let local = animated_transform(j, t).to_mat4();
                let p = parent(j);
                reference[j] = if p < 0 { root_matrix() * local } else { reference[p as usize] * local };
            }
            for (a, b) in probe.model.iter().zip(reference.iter()) {
                for (x, y) in a.to_cols_array().iter().zip(b.to_cols_array().iter()) {
                    assert!((x - y).abs() < 1.0e-5, "frame {frame}: {a:?} vs {b:?}");
                }
            }
        }
    }

    #[test]
    fn chunked_skinning_equals_whole_mesh_skinning() {
        let (skeleton, mut probe) = setup::<f32>();
        probe.pose(skeleton.view(), 7).unwrap();
        let mut positions = [Vec3::ZERO; VERTICES];
        let mut normals = [Vec3::ZERO; VERTICES];
        let mut indices = [0u16; VERTICES * INFLUENCES];
        let mut weights = [0.0f32; VERTICES * INFLUENCES];
        for v in 0..VERTICES {
            (positions[v], normals[v]) = probe.bind_vertex(v);
            let (i, w) = ring_influences::<f32>(v / 4);
            indices[v * INFLUENCES..][..INFLUENCES].copy_from_slice(&i);
            weights[v * INFLUENCES..][..INFLUENCES].copy_from_slice(&w);
        }
        for dual_quat in [false, true] {
            let mut out_p = [Vec3::ZERO; VERTICES];
            let mut out_n = [Vec3::ZERO; VERTICES];
            SkinningJob {
                palette: if dual_quat { Palette::DualQuats(&probe.dual) } else { Palette::Matrices(&probe.skin) },
                influences: INFLUENCES,
                joint_indices: &indices,
                joint_weights: &weights,
                positions: &positions,
                normals: Some(&normals),
                tangents: None,
                out_positions: &mut out_p,
                out_normals: Some(&mut out_n),
                out_tangents: None,
            }
            .run()
            .unwrap();
            let chunked = skinned(&mut probe, dual_quat);
            for v in 0..VERTICES {
                assert_eq!(chunked[v], (out_p[v], out_n[v]), "vertex {v}");
            }
        }
    }

    #[test]
    fn influences_are_normalized_and_on_the_chain() {
        for k in 0..RINGS {
            let (idx, w) = ring_influences::<f32>(k);
            assert!(idx.iter().all(|&j| (j as usize) < CHAIN));
            assert_eq!(w.iter().sum::<f32>(), 1.0);
            assert!(w.iter().all(|&x| x >= 0.0));
        }
    }

    #[test]
    fn lbs_and_dqs_agree_and_dqs_keeps_normals_unit() {
        let (skeleton, mut probe) = setup::<f32>();
        let mut worst_gap = 0.0f32;
        let mut worst_unit = 0.0f32;
        let mut shortest_lbs_normal = 1.0f32;
        for frame in 0..FRAMES {
            probe.pose(skeleton.view(), frame).unwrap();
            let lbs = skinned(&mut probe, false);
            let dqs = skinned(&mut probe, true);
            for ((lp, ln), (dp, dn)) in lbs.iter().zip(dqs.iter()) {
                worst_gap = worst_gap.max(dist(*lp, *dp));
                worst_unit = worst_unit.max((dn.length() - 1.0).abs());
                shortest_lbs_normal = shortest_lbs_normal.min(ln.length());
            }
        }
        // Neighbouring joints turn by at most 0.5 rad relative to each other, so the two methods
        // differ by a fraction of the box width (1/6), and linear blending shortens normals a
        // little.
        assert!(worst_gap > 1.0e-3 && worst_gap < 0.02, "LBS/DQS gap {worst_gap}");
        assert!(worst_unit < 2.0e-6, "DQS normal length error {worst_unit:e}");
        assert!(shortest_lbs_normal > 0.95 && shortest_lbs_normal < 1.0, "LBS normal {shortest_lbs_normal}");
    }

    #[test]
    fn every_frame_differs_and_a_reused_probe_repeats_the_report() {
        let (skeleton, mut probe) = setup::<f32>();
        let sums: Vec<FrameSums> = (0..FRAMES).map(|f| probe.frame(skeleton.view(), f).unwrap()).collect();
        for (i, a) in sums.iter().enumerate() {
            for b in &sums[i + 1..] {
                assert!(a.model != b.model && a.lbs != b.lbs && a.dqs != b.dqs, "{a:?} vs {b:?}");
            }
            assert_ne!(a.lbs, a.dqs);
        }
        let mut first = String::new();
        let c1 = report(&mut first, skeleton.view(), &mut probe).unwrap();
        let mut fresh = Box::new(Probe::ZERO);
        let mut second = String::new();
        let c2 = report(&mut second, skeleton.view(), &mut fresh).unwrap();
        assert_eq!(c1, c2);
        assert_eq!(first, second);
        assert_eq!(first.lines().count(), FRAMES + 2);
        assert!(first.ends_with(&std::format!("checksum 0x{c1:08x}\n")));
    }

    #[test]
    fn q16_tracks_f32() {
        let (sf, mut pf) = setup::<f32>();
        let (sq, mut pq) = setup::<Q16>();
        let mut worst_model = 0.0f32;
        let mut worst_pos = 0.0f32;
        let mut worst_nrm = 0.0f32;
        for frame in 0..FRAMES {
            pf.pose(sf.view(), frame).unwrap();
            pq.pose(sq.view(), frame).unwrap();
            for (a, b) in pf.model.iter().zip(pq.model.iter()) {
                for (x, y) in a.to_cols_array().iter().zip(b.to_cols_array().iter()) {
                    worst_model = worst_model.max((x - y.to_f32()).abs());
                }
            }
            for dual_quat in [false, true] {
                let f = skinned(&mut pf, dual_quat);
                let q = skinned(&mut pq, dual_quat);
                for ((fp, fnrm), (qp, qn)) in f.iter().zip(q.iter()) {
                    worst_pos = worst_pos.max(dist(*fp, to_f32(*qp)));
                    worst_nrm = worst_nrm.max(dist(*fnrm, to_f32(*qn)));
                }
            }
        }
        assert!(worst_model < 2.0e-3, "Q16 model matrices off by {worst_model}");
        assert!(worst_pos < 3.0e-3, "Q16 positions off by {worst_pos}");
        assert!(worst_nrm < 1.0e-3, "Q16 normals off by {worst_nrm}");
    }
}
