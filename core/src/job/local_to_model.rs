//! Local-to-model: walks the hierarchy and turns local transforms into model-space matrices.

use crate::job::JobError;
use crate::limits::MAX_JOINTS;
use crate::math::{Mat4, SoaTransform, SoaVec3};
use crate::platform::dispatch::{dispatch, PerSet};
use crate::platform::SIMD_LANES;
use crate::real::Lanes as _;
use crate::real::Real;
use crate::skeleton::SkeletonView;

/// Computes model-space matrices `model[j] = model[parent(j)] × local[j]` (roots use `root`).
///
/// With `from` set, only that joint and its descendants are recomputed (a partial update after
/// editing a subtree, e.g. by IK); the other outputs must already hold valid matrices, since
/// `from`'s parent is read from `output`. `to` stops the walk after that joint index.
///
/// # Examples
///
/// A root turned a quarter turn about +Y carries its child, 1 m along its +X, to −Z:
///
/// ```
/// use core::f32::consts::FRAC_PI_2;
/// use sinew::job::LocalToModelJob;
/// use sinew::math::{Mat4, Quat, SoaTransform, Transform, Vec3};
/// use sinew::skeleton::{Skeleton, NO_PARENT};
///
/// let child = Transform::new(Vec3::X, Quat::IDENTITY, Vec3::ONE);
/// let skeleton = Skeleton::<f32, 1>::new(&[NO_PARENT, 0], &[Transform::IDENTITY, child], &["root", "child"])?;
///
/// // The local pose: the rest pose with the root turned.
/// let mut local = [SoaTransform::IDENTITY];
/// local.copy_from_slice(skeleton.rest_pose());
/// let turned = Transform::new(Vec3::ZERO, Quat::from_axis_angle(Vec3::Y, FRAC_PI_2), Vec3::ONE);
/// local[0].set_lane(0, &turned);
///
/// // `root` places the whole character in the world: here 5 m up.
/// let world = Mat4::from_translation(Vec3::new(0.0, 5.0, 0.0));
/// let mut model = [Mat4::IDENTITY; 2];
/// LocalToModelJob {
///     skeleton: skeleton.view(),
///     root: Some(&world),
///     input: &local,
///     output: &mut model,
///     from: None,
///     to: None,
/// }
/// .run()?;
/// assert!((model[1].translation() - Vec3::new(0.0, 5.0, -1.0)).length() < 1e-6);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct LocalToModelJob<'a, R: Real> {
    /// The hierarchy; defines how many joints are processed.
    pub skeleton: SkeletonView<'a, R>,
    /// Model matrix of the roots' parent; `None` means identity.
    pub root: Option<&'a Mat4<R>>,
    /// Local transforms, at least `skeleton.num_soa_joints()` elements.
    pub input: &'a [SoaTransform<R>],
    /// Model matrices, at least `skeleton.num_joints()` long; extra entries are untouched.
    pub output: &'a mut [Mat4<R>],
    /// Root of the subtree to update (`None`: every joint). Must be a valid joint index.
    pub from: Option<usize>,
    /// Last joint index to update, inclusive (`None`: the last joint). At least `from`.
    pub to: Option<usize>,
}

impl<'a, R: Real> LocalToModelJob<'a, R> {
    /// The job over the whole hierarchy with an identity root: `input`'s local transforms to
    /// `output`'s model matrices. Set [`root`](Self::root), [`from`](Self::from) and
    /// [`to`](Self::to) afterwards for a placed root or a partial update.
    #[must_use]
    pub fn new(skeleton: SkeletonView<'a, R>, input: &'a [SoaTransform<R>], output: &'a mut [Mat4<R>]) -> Self {
        LocalToModelJob { skeleton, root: None, input, output, from: None, to: None }
    }
}

impl<R: Real> LocalToModelJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// [`JobError::InputTooSmall`] when `input` has fewer than `num_soa_joints()` elements,
    /// [`JobError::OutputTooSmall`] when `output` has fewer than `num_joints()` matrices,
    /// [`JobError::InvalidRange`] when `from` or `to` is not a joint index or `to < from`.
    pub fn validate(&self) -> Result<(), JobError> {
        let n = self.skeleton.num_joints();
        let mut ok = true;
        if self.input.len() < self.skeleton.num_soa_joints() {
            return Err(JobError::InputTooSmall);
        }
        if self.output.len() < n {
            return Err(JobError::OutputTooSmall);
        }
        if let Some(f) = self.from {
            ok &= f < n;
        }
        if let Some(t) = self.to {
            ok &= t < n;
            ok &= t >= self.from.unwrap_or(0);
        }
        if ok {
            Ok(())
        } else {
            Err(JobError::InvalidRange)
        }
    }

    /// Validates, then computes the model matrices.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let n = self.skeleton.num_joints();
        if n == 0 {
            return Ok(());
        }
        let parents = self.skeleton.parents();
        let root = self.root.copied().unwrap_or(Mat4::IDENTITY);
        let range = Range { start: self.from.unwrap_or(0), end: self.to.unwrap_or(n - 1) };
        let (input, output) = (self.input, &mut *self.output);
        // Where `f32` lanes are a SIMD register the unrolled walks pay off; where they are four
        // scalars (microcontrollers, and the `narrow-kernels` build) the compact walk keeps the
        // code small. Both give the same bits.
        if SIMD_LANES && !R::FIXED_POINT {
            dispatch(Walk { parents, input, output, root: &root, range, subtree: self.from.is_some() });
        } else {
            // Scalar lanes: each row costs its own operations, and with affine parents (an
            // affine root, and for a subtree an affine parent of `from`) the last row is known.
            // Only for fixed point, whose last row comes out exactly (0, 0, 0, 1) either way;
            // `f32` keeps computing it, for the same bits (signed zeros) as the SIMD walk.
            let affine = R::FIXED_POINT
                && is_affine(&root)
                && match self.from.and_then(|f| parents.get(f)) {
                    Some(&p) if p >= 0 => output.get(p as usize).is_some_and(is_affine),
                    _ => true,
                };
            walk_compact(parents, input, output, &root, range, self.from.is_some(), if affine { 3 } else { 4 });
        }
        Ok(())
    }
}

/// Four lanes of `R`.
type Lanes<R> = <R as Real>::Lanes;

/// The local matrices of an SoA element: `rs[c][r]` is row `r` (0..3) of column `c` (0..3),
/// the rotation and scale part; column 3, the translation, is read from the input as needed.
struct Local<'t, R: Real> {
    rs: [[Lanes<R>; 3]; 3],
    t: &'t SoaVec3<R>,
}

/// An inclusive range of joint indices.
#[derive(Clone, Copy)]
struct Range {
    start: usize,
    end: usize,
}

/// Descendant bits of the subtree's root, one per joint.
type SubtreeBits = [u32; MAX_JOINTS / 32];

/// The SIMD walks ([`walk_all`], [`walk_subtree`]) as a dispatched kernel. Both kernel sets
/// compute the same operations ([`mul_lane`] is unfused), so the same bits; the x86-64-v3 set
/// is their AVX encoding (three-operand forms, broadcasts from memory), fewer instructions.
struct Walk<'w, R: Real> {
    parents: &'w [i16],
    input: &'w [SoaTransform<R>],
    output: &'w mut [Mat4<R>],
    root: &'w Mat4<R>,
    range: Range,
    subtree: bool,
}

impl<R: Real> Walk<'_, R> {
    /// The walk, in the kernel set of the function it is inlined into.
    #[inline(always)]
    fn walk(self) {
        let Walk { parents, input, output, root, range, subtree } = self;
        if subtree {
            walk_subtree::<R>(parents, input, output, root, range);
        } else {
            walk_all::<R>(parents, input, output, root, range.end);
        }
    }
}

impl<R: Real> PerSet for Walk<'_, R> {
    type Output = ();
    #[inline(always)]
    fn build(self) {
        self.walk();
    }
    #[cfg(sinew_dispatch)]
    #[inline(always)]
    fn v3(self) {
        self.walk();
    }
}

/// True when the last row is (0, 0, 0, 1).
#[inline]
fn is_affine<R: Real>(m: &Mat4<R>) -> bool {
    let c = &m.cols;
    c[0][3] == R::ZERO && c[1][3] == R::ZERO && c[2][3] == R::ZERO && c[3][3] == R::ONE
}

/// Computes joints `0..=end` group by group: the four local matrices of an SoA element are
/// built once, in lanes, and each joint takes its lane with a constant index.
#[inline(always)]
fn walk_all<R: Real>(parents: &[i16], input: &[SoaTransform<R>], output: &mut [Mat4<R>], root: &Mat4<R>, end: usize) {
    let n = (end + 1).min(parents.len()).min(output.len());
    let (Some(parents), Some(output)) = (parents.get(..n), output.get_mut(..n)) else { return };
    // The matrix of the joint before, kept in registers: a chain (a spine, a limb, a finger)
    // takes its parent from there rather than through a store and a load.
    let mut prev = None;
    for g in 0..n / 4 {
        let i = g * 4;
        let (Some(&[p0, p1, p2, p3]), Some(t)) = (parents.get(i..i + 4), input.get(g)) else { return };
        let local = affine_lanes(t);
        if p0 | p1 | p2 | p3 >= 0 {
            // The common case, no root among the four: no root to choose from.
            link::<R, 0>(output, i, p0, None, &local, &mut prev);
            link::<R, 1>(output, i + 1, p1, None, &local, &mut prev);
            link::<R, 2>(output, i + 2, p2, None, &local, &mut prev);
            link::<R, 3>(output, i + 3, p3, None, &local, &mut prev);
        } else {
            let root = Some(root);
            link::<R, 0>(output, i, p0, root, &local, &mut prev);
            link::<R, 1>(output, i + 1, p1, root, &local, &mut prev);
            link::<R, 2>(output, i + 2, p2, root, &local, &mut prev);
            link::<R, 3>(output, i + 3, p3, root, &local, &mut prev);
        }
    }
    let i = n / 4 * 4;
    if let (Some(rest @ [_, ..]), Some(t)) = (parents.get(i..), input.get(n / 4)) {
        let (local, root) = (affine_lanes(t), Some(root));
        for (k, &p) in rest.iter().enumerate() {
            match k {
                0 => joint::<R, 0>(output, i, p, root, &local),
                1 => joint::<R, 1>(output, i + 1, p, root, &local),
                _ => joint::<R, 2>(output, i + 2, p, root, &local),
            }
        }
    }
}

/// Computes `range.start` and its descendants up to `range.end`, as [`walk_all`] does.
#[inline(always)]
fn walk_subtree<R: Real>(
    parents: &[i16],
    input: &[SoaTransform<R>],
    output: &mut [Mat4<R>],
    root: &Mat4<R>,
    range: Range,
) {
    let mut bits: SubtreeBits = [0; MAX_JOINTS / 32];
    // The parent of joint `i` when `i` is in the range and the subtree (marking it), else None.
    let mut member = |i: usize| {
        let parent = *parents.get(i)?;
        if i < range.start || i > range.end {
            return None;
        }
        if i != range.start && (parent < 0 || !has_bit(&bits, parent as usize)) {
            return None;
        }
        let w = bits.get_mut(i / 32)?;
        *w |= 1 << (i % 32);
        Some(parent)
    };
    let root = Some(root);
    for g in range.start / 4..=range.end / 4 {
        let Some(t) = input.get(g) else { return };
        let i = g * 4;
        let parents = [member(i), member(i + 1), member(i + 2), member(i + 3)];
        if parents.iter().all(Option::is_none) {
            continue;
        }
        let local = affine_lanes(t);
        if let Some(p) = parents[0] {
            joint::<R, 0>(output, i, p, root, &local);
        }
        if let Some(p) = parents[1] {
            joint::<R, 1>(output, i + 1, p, root, &local);
        }
        if let Some(p) = parents[2] {
            joint::<R, 2>(output, i + 2, p, root, &local);
        }
        if let Some(p) = parents[3] {
            joint::<R, 3>(output, i + 3, p, root, &local);
        }
    }
}

/// [`joint`], with `prev` the columns of joint `i - 1` when they are known (then updated to
/// joint `i`'s): a parent that is the joint before is taken from there, with the same bits.
#[inline(always)]
fn link<R: Real, const LANE: usize>(
    output: &mut [Mat4<R>],
    i: usize,
    parent: i16,
    root: Option<&Mat4<R>>,
    local: &Local<'_, R>,
    prev: &mut Option<[Lanes<R>; 4]>,
) {
    let cols = match *prev {
        Some(cols) if parent >= 0 && parent as usize + 1 == i => cols,
        // A negative parent turns into an index past the end: the root.
        _ => match output.get(parent as usize).or(root) {
            Some(p) => load_cols(p),
            None => {
                *prev = None;
                return;
            }
        },
    };
    let m = mul_lane::<R, LANE>(&cols, local);
    if let Some(o) = output.get_mut(i) {
        for (oc, mc) in o.cols.iter_mut().zip(m) {
            *oc = mc.to_array();
        }
    }
    *prev = Some(m);
}

/// `output[i] = parent matrix × local matrix in lane LANE`, the parent being `root` when
/// `parent` is negative (without a root, such a joint is left alone).
#[inline(always)]
fn joint<R: Real, const LANE: usize>(
    output: &mut [Mat4<R>],
    i: usize,
    parent: i16,
    root: Option<&Mat4<R>>,
    local: &Local<'_, R>,
) {
    link::<R, LANE>(output, i, parent, root, local, &mut None);
}

/// Joint by joint, one SoA element's local matrices built at a time (the walk for scalar
/// lanes): computes `range`, or with `subtree` `range.start` and its descendants in `range`.
/// `rows` (3 or 4) is how many rows to compute; with 3, the last row is (0, 0, 0, 1).
fn walk_compact<R: Real>(
    parents: &[i16],
    input: &[SoaTransform<R>],
    output: &mut [Mat4<R>],
    root: &Mat4<R>,
    range: Range,
    subtree: bool,
    rows: usize,
) {
    let mut bits: SubtreeBits = [0; MAX_JOINTS / 32];
    let mut group = usize::MAX;
    let mut local = [[[R::ZERO; 4]; 3]; 4];
    for i in range.start..=range.end {
        let Some(&parent) = parents.get(i) else { return };
        if subtree {
            if i != range.start && (parent < 0 || !has_bit(&bits, parent as usize)) {
                continue;
            }
            if let Some(w) = bits.get_mut(i / 32) {
                *w |= 1 << (i % 32);
            }
        }
        if i / 4 != group {
            group = i / 4;
            let Some(t) = input.get(group) else { return };
            local = t.to_affine_soa();
        }
        let p = match output.get(parent as usize) {
            Some(m) => *m,
            None => *root,
        };
        if let Some(o) = output.get_mut(i) {
            *o = mul_affine_lane(&p, &local, i % 4, rows);
        }
    }
}

/// `p × l`, `l` lane `lane` of an SoA affine matrix (last row 0, 0, 0, 1), rows `0..rows` of
/// the product; the other rows are those of the identity.
#[inline(always)]
fn mul_affine_lane<R: Real>(p: &Mat4<R>, l: &[[[R; 4]; 3]; 4], lane: usize, rows: usize) -> Mat4<R> {
    let pc = &p.cols;
    let mut o = Mat4::IDENTITY;
    for (oc, lc) in o.cols.iter_mut().zip(l) {
        let (a, b, d) = (lc[0][lane], lc[1][lane], lc[2][lane]);
        for r in 0..rows.min(4) {
            oc[r] = pc[0][r] * a + pc[1][r] * b + pc[2][r] * d;
        }
    }
    for r in 0..rows.min(4) {
        o.cols[3][r] += pc[3][r];
    }
    o
}

/// True when joint `j`'s bit is set.
#[inline(always)]
fn has_bit(bits: &SubtreeBits, j: usize) -> bool {
    bits.get(j / 32).is_some_and(|w| w & (1 << (j % 32)) != 0)
}

/// The columns of `m` as lanes.
#[inline(always)]
fn load_cols<R: Real>(m: &Mat4<R>) -> [Lanes<R>; 4] {
    let c = &m.cols;
    [Lanes::<R>::load(&c[0]), Lanes::<R>::load(&c[1]), Lanes::<R>::load(&c[2]), Lanes::<R>::load(&c[3])]
}

/// The local matrices of an SoA element in lanes, as [`SoaTransform::to_affine_soa`] computes
/// them (same operations, same results).
#[inline(always)]
fn affine_lanes<R: Real>(t: &SoaTransform<R>) -> Local<'_, R> {
    let ld = Lanes::<R>::load;
    let (x, y, z, w) = (ld(&t.rotation.x), ld(&t.rotation.y), ld(&t.rotation.z), ld(&t.rotation.w));
    let (sx, sy, sz) = (ld(&t.scale.x), ld(&t.scale.y), ld(&t.scale.z));
    let one = Lanes::<R>::splat(R::ONE);
    let (x2, y2, z2) = (x + x, y + y, z + z);
    let (xx, yy, zz) = (x * x2, y * y2, z * z2);
    let (xy, xz, yz) = (x * y2, x * z2, y * z2);
    let (wx, wy, wz) = (w * x2, w * y2, w * z2);
    Local {
        rs: [
            [(one - (yy + zz)) * sx, (xy + wz) * sx, (xz - wy) * sx],
            [(xy - wz) * sy, (one - (xx + zz)) * sy, (yz + wx) * sy],
            [(xz + wy) * sz, (yz - wx) * sz, (one - (xx + yy)) * sz],
        ],
        t: &t.translation,
    }
}

/// Column `c` (0..4) of the local matrix in lane `LANE`, rows 0..3.
#[inline(always)]
fn local_col<R: Real, const LANE: usize>(local: &Local<'_, R>, c: usize) -> [R; 3] {
    match local.rs.get(c) {
        Some(l) => [l[0].to_array()[LANE], l[1].to_array()[LANE], l[2].to_array()[LANE]],
        None => [local.t.x[LANE], local.t.y[LANE], local.t.z[LANE]],
    }
}

/// `p × l`, `l` the affine matrix in lane `LANE` of `local` (last row 0, 0, 0, 1), by columns.
///
/// Unfused in every kernel set, x86-64-v3 included: along a chain of joints (a spine, a limb,
/// a finger) each product waits for the one before, so the walk runs at this function's
/// latency, and a column of three fused multiply-adds in a row takes longer than a multiply
/// and two adds in a tree (`core/docs/performance.md#where-the-time-goes`). The results
/// are the same bits in every build.
#[inline(always)]
fn mul_lane<R: Real, const LANE: usize>(p: &[Lanes<R>; 4], local: &Local<'_, R>) -> [Lanes<R>; 4] {
    let col = |c: usize| {
        let [a, b, d] = local_col::<R, LANE>(local, c).map(Lanes::<R>::splat);
        p[2] * d + (p[1] * b + p[0] * a)
    };
    [col(0), col(1), col(2), col(3) + p[3]]
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::math::{Quat, Transform, Vec3};
    use crate::skeleton::Skeleton;

    fn skeleton() -> Skeleton<f32, 2> {
        // 0 ─ 1 ─ 2
        //  └─ 3 ─ 4
        // 5 (second root)
        let mut rest = [Transform::IDENTITY; 6];
        for (i, t) in rest.iter_mut().enumerate() {
            t.translation = Vec3::new(1.0, i as f32, 0.0);
            t.rotation = Quat::from_axis_angle(Vec3::Z, 0.1 * i as f32);
            t.scale = Vec3::new(1.0, 1.0 + 0.1 * i as f32, 1.0);
        }
        Skeleton::new(&[-1, 0, 1, 0, 3, -1], &rest, &["0", "1", "2", "3", "4", "5"]).unwrap()
    }

    fn reference(s: &Skeleton<f32, 2>, root: Mat4<f32>) -> [Mat4<f32>; 6] {
        let mut out = [Mat4::IDENTITY; 6];
        let v = s.view();
        for i in 0..6 {
            let local = v.rest_transform(i).unwrap().to_mat4();
            out[i] = match v.parent(i) {
                Some(p) => out[p] * local,
                None => root * local,
            };
        }
        out
    }

    #[test]
    fn validity() {
        let s = skeleton();
        let sentinel = Mat4::from_cols_array(&[7.0; 16]);
        let input = [SoaTransform::IDENTITY; 2];
        // Input too small.
        let mut out = [sentinel; 6];
        let mut job = LocalToModelJob {
            skeleton: s.view(),
            root: None,
            input: &input[..1],
            output: &mut out,
            from: None,
            to: None,
        };
        assert_eq!(job.validate(), Err(JobError::InputTooSmall));
        assert_eq!(job.run(), Err(JobError::InputTooSmall));
        assert!(out.iter().all(|m| *m == sentinel));
        // Output too small.
        let mut out = [sentinel; 5];
        let mut job =
            LocalToModelJob { skeleton: s.view(), root: None, input: &input, output: &mut out, from: None, to: None };
        assert_eq!(job.run(), Err(JobError::OutputTooSmall));
        assert!(out.iter().all(|m| *m == sentinel));
        // from / to out of range, or to before from.
        for (from, to) in [(Some(6), None), (None, Some(6)), (Some(3), Some(2))] {
            let mut out = [sentinel; 6];
            let mut job = LocalToModelJob { skeleton: s.view(), root: None, input: &input, output: &mut out, from, to };
            assert_eq!(job.validate(), Err(JobError::InvalidRange));
            assert_eq!(job.run(), Err(JobError::InvalidRange));
            assert!(out.iter().all(|m| *m == sentinel));
        }
        // Longer output: extra entries untouched.
        let mut out = [sentinel; 8];
        let mut job = LocalToModelJob {
            skeleton: s.view(),
            root: None,
            input: s.rest_pose(),
            output: &mut out,
            from: None,
            to: None,
        };
        assert_eq!(job.run(), Ok(()));
        assert_eq!(out[6], sentinel);
        assert_eq!(out[7], sentinel);
    }

    #[test]
    fn matches_matrix_reference_with_root() {
        let s = skeleton();
        let root = Mat4::from_trs(Vec3::new(0.0, 0.0, 5.0), Quat::from_axis_angle(Vec3::Y, 0.7), Vec3::splat(2.0));
        let mut out = [Mat4::ZERO; 6];
        LocalToModelJob {
            skeleton: s.view(),
            root: Some(&root),
            input: s.rest_pose(),
            output: &mut out,
            from: None,
            to: None,
        }
        .run()
        .unwrap();
        let e = reference(&s, root);
        for (a, b) in out.iter().zip(e.iter()) {
            for (x, y) in a.to_cols_array().iter().zip(b.to_cols_array().iter()) {
                assert!((x - y).abs() < 1.0e-5, "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn subtree_update_touches_only_the_subtree() {
        let s = skeleton();
        let mut full = [Mat4::ZERO; 6];
        LocalToModelJob {
            skeleton: s.view(),
            root: None,
            input: s.rest_pose(),
            output: &mut full,
            from: None,
            to: None,
        }
        .run()
        .unwrap();
        // Edit joint 3's local transform, update from 3: only 3 and 4 change.
        let mut pose = [SoaTransform::IDENTITY; 2];
        pose.copy_from_slice(s.rest_pose());
        let mut t = pose[0].lane(3);
        t.rotation = Quat::from_axis_angle(Vec3::X, 1.0);
        pose[0].set_lane(3, &t);
        let mut part = full;
        LocalToModelJob { skeleton: s.view(), root: None, input: &pose, output: &mut part, from: Some(3), to: None }
            .run()
            .unwrap();
        let mut again = [Mat4::ZERO; 6];
        LocalToModelJob { skeleton: s.view(), root: None, input: &pose, output: &mut again, from: None, to: None }
            .run()
            .unwrap();
        for i in 0..6 {
            if i == 3 || i == 4 {
                assert_ne!(part[i], full[i]);
            } else {
                assert_eq!(part[i], full[i]);
            }
            assert_eq!(part[i], again[i]);
        }
        // `to` stops early.
        let mut capped = [Mat4::ZERO; 6];
        LocalToModelJob { skeleton: s.view(), root: None, input: &pose, output: &mut capped, from: None, to: Some(2) }
            .run()
            .unwrap();
        assert_eq!(capped[2], again[2]);
        assert_eq!(capped[3], Mat4::ZERO);
    }

    /// Eleven joints: roots at 0, 5 (mid group) and 9 (tail group), two full SoA groups and a
    /// tail of three; scales, rotations and translations differ per joint.
    fn mixed_skeleton<R: Real>() -> Skeleton<R, 3> {
        let parents = [-1, 0, 1, 1, 3, -1, 5, 6, 2, -1, 9];
        let rest: [Transform<R>; 11] = core::array::from_fn(|i| {
            let a = i as f32;
            let f = R::from_f32;
            Transform::new(
                Vec3::new(f(0.5 - 0.1 * a), f(0.25 * a), f(-0.3)),
                Quat::from_axis_angle(Vec3::new(f(0.6), f(0.0), f(-0.8)), f(0.3 * a - 1.0)),
                Vec3::new(f(1.0 + 0.05 * a), f(0.75), f(1.25 - 0.02 * a)),
            )
        });
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"];
        Skeleton::new(&parents, &rest, &names).unwrap()
    }

    /// The model matrices by whole 4×4 products of the SoA local matrices, joint by joint.
    fn product_reference<R: Real>(s: &Skeleton<R, 3>, root: Option<&Mat4<R>>, out: &mut [Mat4<R>]) {
        let v = s.view();
        for i in 0..v.num_joints() {
            let m = v.rest_pose()[i / 4].to_affine_soa();
            let mut local = Mat4::IDENTITY;
            for c in 0..4 {
                for r in 0..3 {
                    local.cols[c][r] = m[c][r][i % 4];
                }
            }
            let parent = match v.parent(i) {
                Some(p) => out[p],
                None => root.copied().unwrap_or(Mat4::IDENTITY),
            };
            out[i] = crate::math::mat4::mul_mat4(&parent, &local);
        }
    }

    /// `got` equals `want` bit for bit, or with fused multiply-adds in `f32` (which the
    /// product reference does not use) within 1e-6 relative to the largest entry.
    fn assert_mats<R: Real>(got: &[Mat4<R>], want: &[Mat4<R>], what: &str) {
        assert_eq!(got.len(), want.len(), "{what}");
        if !crate::platform::jobs_fuse() || R::FIXED_POINT {
            assert_eq!(got, want, "{what}");
            return;
        }
        for (g, w) in got.iter().zip(want) {
            let (g, w) = (g.to_cols_array(), w.to_cols_array());
            let scale = w.iter().fold(1.0f32, |m, x| m.max(x.to_f32().abs()));
            for (a, b) in g.iter().zip(&w) {
                assert!((a.to_f32() - b.to_f32()).abs() <= 1e-6 * scale, "{what}: {g:?} vs {w:?}");
            }
        }
    }

    fn check_against_products<R: Real>(root: Option<&Mat4<R>>) {
        let s = mixed_skeleton::<R>();
        let mut want = [Mat4::ZERO; 11];
        product_reference(&s, root, &mut want);
        let mut got = [Mat4::ZERO; 12];
        LocalToModelJob { skeleton: s.view(), root, input: s.rest_pose(), output: &mut got, from: None, to: None }
            .run()
            .unwrap();
        assert_mats(&got[..11], &want, "whole");
        assert_eq!(got[11], Mat4::ZERO);
        // Subtrees, including one whose root joint is not first in its group.
        for from in [0, 3, 5, 6, 9] {
            // Descendants of `from` are cleared; the job must rebuild exactly those.
            let mut inside = [false; 11];
            let mut seeded = want;
            for i in from..11 {
                inside[i] = i == from || s.view().parent(i).is_some_and(|p| inside[p]);
                if inside[i] {
                    seeded[i] = Mat4::ZERO;
                }
            }
            assert!(seeded != want);
            LocalToModelJob {
                skeleton: s.view(),
                root,
                input: s.rest_pose(),
                output: &mut seeded,
                from: Some(from),
                to: None,
            }
            .run()
            .unwrap();
            assert_mats(&seeded, &want, &std::format!("from {from}"));
        }
        // A range that ends inside a group.
        let mut capped = [Mat4::ZERO; 11];
        LocalToModelJob {
            skeleton: s.view(),
            root,
            input: s.rest_pose(),
            output: &mut capped,
            from: None,
            to: Some(6),
        }
        .run()
        .unwrap();
        assert_mats(&capped[..7], &want[..7], "capped");
        assert!(capped[7..].iter().all(|m| *m == Mat4::ZERO));
    }

    #[test]
    fn lanes_give_the_matrices_of_to_affine_soa() {
        let s = mixed_skeleton::<f32>();
        for t in s.rest_pose() {
            let (want, got) = (t.to_affine_soa(), affine_lanes(t));
            for c in 0..3 {
                for r in 0..3 {
                    let g = got.rs[c][r].to_array();
                    assert!((0..4).all(|l| g[l].to_bits() == want[c][r][l].to_bits()));
                }
            }
            assert_eq!([got.t.x, got.t.y, got.t.z], [want[3][0], want[3][1], want[3][2]]);
        }
    }

    /// The walks in each kernel set this build and CPU have against the rule: whole 4×4
    /// products down the hierarchy ([`product_reference`]).
    #[test]
    fn equals_whole_matrix_products_for_any_root() {
        use crate::platform::dispatch::{with_kernels, Kernels};
        let affine = Mat4::from_trs(Vec3::new(1.0, -2.0, 0.5), Quat::from_axis_angle(Vec3::Y, 0.7), Vec3::splat(1.5));
        let mut projective = affine;
        projective.cols[0][3] = 0.25;
        projective.cols[2][3] = -0.5;
        projective.cols[3][3] = 2.0;
        for kernels in [Kernels::Build, Kernels::X86_64V3] {
            with_kernels(kernels, || {
                for root in [None, Some(&affine), Some(&projective)] {
                    check_against_products::<f32>(root);
                    // Q16.16 takes the three-row walk with an affine root; its last rows are exact.
                    let q = root.map(|m| Mat4 { cols: m.cols.map(|c| c.map(crate::real::Q16::from_f32)) });
                    check_against_products::<crate::real::Q16>(q.as_ref());
                }
            });
        }
    }
}
