//! The pose the spring stage edits: the local transforms, the model matrices as three-vrm's
//! `matrixWorld`s hold them while the joints run (recomputed when read), and the final pass
//! that brings every matrix up to date.

use super::{affine, SpringJoint};
use crate::limits::MAX_JOINTS;
use crate::math::{Mat4, Quat, SoaTransform, Transform};
use crate::real::Real;
use crate::skeleton::SkeletonView;

/// One bit per joint.
type Bits = [u32; MAX_JOINTS / 32];

/// No joint.
const NONE: Bits = [0; MAX_JOINTS / 32];

/// True when joint `j`'s bit is set.
fn has(bits: &Bits, j: usize) -> bool {
    bits.get(j / 32).is_some_and(|w| w & (1 << (j % 32)) != 0)
}

/// True when joint `j` is below 128 and its bit of `bits` is set.
fn low(bits: u128, j: usize) -> bool {
    j < 128 && bits & (1 << j) != 0
}

/// Sets joint `j`'s bit.
fn set(bits: &mut Bits, j: usize) {
    if let Some(w) = bits.get_mut(j / 32) {
        *w |= 1 << (j % 32);
    }
}

/// `parent × local`, with the operations and their order of
/// [`LocalToModelJob`](crate::job::LocalToModelJob) (the same bits).
#[cfg_attr(sinew_simd_lanes, inline(always))]
pub(super) fn model_of<R: Real>(parent: &Mat4<R>, local: &Transform<R>) -> Mat4<R> {
    affine::affine_product(parent, &Mat4::from_trs(local.translation, local.rotation, local.scale))
}

/// Which joints of a skeleton are spring joints and which lie below one: what a step needs of
/// the springs' place in the hierarchy, computed once for a set of springs that does not change
/// (a character's) and passed to
/// [`SpringBoneJob::step_validated_springs`](super::SpringBoneJob::step_validated_springs).
#[derive(Clone, Debug)]
pub struct SpringPlan {
    /// The joints that are spring joints.
    spring: Bits,
    /// The joints below a spring joint (whose matrices a spring joint's run can change).
    under: Bits,
    /// Every spring joint's matrix, computed at its turn, is final when all of them run: each
    /// joint appears once in the run order, after its parent when the parent is a spring joint,
    /// and otherwise below no spring joint (a chain's joints top down). A step in which every
    /// joint ran then recomputes only the joints below the spring joints that are not spring
    /// joints themselves.
    pub(super) ordered: bool,
    /// The number of spring joints in the run order.
    count: usize,
}

impl SpringPlan {
    /// The plan of `springs` on `skeleton`. Joints past the skeleton's end are ignored.
    pub fn new<R: Real>(skeleton: &SkeletonView<'_, R>, springs: &[SpringJoint<R>]) -> Self {
        let mut spring = NONE;
        let mut lowest = usize::MAX;
        for s in springs {
            set(&mut spring, s.joint.into());
            lowest = lowest.min(s.joint.into());
        }
        // Parents come before their children: one pass from the lowest spring joint on marks
        // every joint below a spring joint.
        let mut under = NONE;
        for (j, &p) in skeleton.parents().iter().enumerate().skip(lowest) {
            if usize::try_from(p).is_ok_and(|p| has(&spring, p) || has(&under, p)) {
                set(&mut under, j);
            }
        }
        // Each joint once, after its parent when that is a spring joint, else below none.
        let mut seen = NONE;
        let mut ordered = true;
        for s in springs {
            let j = usize::from(s.joint);
            let after_parent = match skeleton.parent(j) {
                None => true,
                Some(p) if has(&spring, p) => has(&seen, p),
                Some(p) => !has(&under, p),
            };
            ordered &= after_parent && !has(&seen, j);
            set(&mut seen, j);
        }
        SpringPlan { spring, under, ordered, count: springs.len() }
    }
}

/// The local pose and its model matrices while the spring joints run.
///
/// `models` keeps, for each joint, the matrix three-vrm's scene would hold for it: a spring
/// joint's is the one on entry until the joint has run, then its new one. The other joints'
/// matrices are read through [`Pose::stored`]: under a spring joint that has run, recomputed
/// from it; otherwise the one on entry. [`Pose::finish`] writes every matrix that changed.
pub(super) struct Pose<'p, R: Real> {
    skeleton: SkeletonView<'p, R>,
    locals: &'p mut [SoaTransform<R>],
    models: &'p mut [Mat4<R>],
    /// The spring joints and the joints below them.
    plan: &'p SpringPlan,
    /// The spring joints that have run.
    done: Bits,
    /// The spring joints (among joints 0 to 127, one bit each) whose stored matrix is already
    /// what [`Pose::finish`] would compute: each was computed from a parent matrix that no
    /// later commit changes (a root's, a joint's above every spring joint, or a kept spring
    /// joint's), so the final pass keeps it. Others are recomputed.
    exact: u128,
    /// A spring joint ran twice (a repeat in the run order): the final pass recomputes every
    /// joint that ran.
    repeated: bool,
    /// The lowest joint that has run (`usize::MAX`: none).
    first: usize,
    /// Commits made (spring joints that ran, repeats counted).
    commits: usize,
}

impl<'p, R: Real> Pose<'p, R> {
    /// The pose, with the spring joints and the joints below them of `plan`.
    pub(super) fn new(
        skeleton: SkeletonView<'p, R>,
        plan: &'p SpringPlan,
        locals: &'p mut [SoaTransform<R>],
        models: &'p mut [Mat4<R>],
    ) -> Self {
        Pose { skeleton, locals, models, plan, done: NONE, exact: 0, repeated: false, first: usize::MAX, commits: 0 }
    }

    /// The hierarchy.
    pub(super) fn skeleton(&self) -> SkeletonView<'p, R> {
        self.skeleton
    }

    /// Joint `j`'s local transform.
    #[cfg_attr(sinew_simd_lanes, inline(always))]
    pub(super) fn local(&self, j: usize) -> Transform<R> {
        self.locals.get(j / 4).map_or(Transform::IDENTITY, |s| s.lane(j % 4))
    }

    /// The stored model matrix of joint `j` (identity past the end, never reached).
    fn model(&self, j: usize) -> Mat4<R> {
        self.models.get(j).copied().unwrap_or(Mat4::IDENTITY)
    }

    /// True when joint `j`'s matrix stays as it was on entry for the whole step: it is neither
    /// a spring joint nor below one.
    pub(super) fn fixed(&self, j: usize) -> bool {
        !has(&self.plan.spring, j) && !has(&self.plan.under, j)
    }

    /// Joint `x`'s model matrix as three-vrm holds it now: a spring joint's stored one; for
    /// another joint, recomputed from its nearest spring ancestor when that one has run (three-vrm
    /// updates the joints below a spring joint after it moves, down to the next spring joints),
    /// else the one on entry.
    #[cfg_attr(sinew_simd_lanes, inline(always))]
    pub(super) fn stored(&self, x: usize) -> Mat4<R> {
        if has(&self.plan.spring, x) || !has(&self.plan.under, x) {
            return self.model(x);
        }
        let sk = &self.skeleton;
        let mut up = sk.parent(x);
        let above = loop {
            match up {
                None => return self.model(x),
                Some(a) if has(&self.plan.spring, a) => break a,
                Some(a) => up = sk.parent(a),
            }
        };
        if !has(&self.done, above) {
            return self.model(x);
        }
        // The product of the local matrices from below `above` down to `x`.
        let local = |j: usize| self.local(j).to_mat4();
        let mut path = local(x);
        let mut up = sk.parent(x);
        while let Some(a) = up {
            if a == above {
                break;
            }
            path = affine::product(&local(a), &path);
            up = sk.parent(a);
        }
        affine::product(&self.model(above), &path)
    }

    /// Writes joint `j`'s new rotation and model matrix (computed from `stored` of its parent)
    /// and marks it as run.
    #[cfg_attr(sinew_simd_lanes, inline(always))]
    pub(super) fn commit(&mut self, j: usize, rotation: Quat<R>, model: Mat4<R>) {
        if let Some(soa) = self.locals.get_mut(j / 4) {
            soa.rotation.set_lane(j % 4, rotation);
        }
        if let Some(m) = self.models.get_mut(j) {
            *m = model;
        }
        set(&mut self.done, j);
        self.first = self.first.min(j);
        self.commits += 1;
        if self.plan.ordered {
            // Every matrix so far is final; the final pass knows without the bookkeeping.
            return;
        }
        // The parent's matrix as read now is its final one when the parent is a root's (none),
        // a joint above every spring joint (never recomputed), or a spring joint whose own
        // matrix is final: `models` holds it and only its own commit changes it.
        let exact = match self.skeleton.parent(j) {
            None => true,
            Some(p) if has(&self.plan.spring, p) => low(self.exact, p),
            Some(p) => !has(&self.plan.under, p),
        };
        if has(&self.done, j) {
            self.repeated = true;
        }
        if exact && j < 128 {
            self.exact |= 1 << j;
        }
    }

    /// Gives each joint of `rotations` (joint, rotation), in order, its rotation; when one
    /// changes, recomputes the model matrices of those joints and of every joint below them,
    /// so that `models` is a local-to-model of the new locals.
    pub(super) fn restore(&mut self, rotations: impl Iterator<Item = (usize, Quat<R>)> + Clone) {
        let differs = |(j, q): (usize, Quat<R>)| self.locals.get(j / 4).is_some_and(|s| s.rotation.lane(j % 4) != q);
        if !rotations.clone().any(differs) {
            return;
        }
        let mut changed = [0; MAX_JOINTS / 32];
        let mut first = usize::MAX;
        for (j, q) in rotations {
            let Some(soa) = self.locals.get_mut(j / 4) else { continue };
            if soa.rotation.lane(j % 4) != q {
                soa.rotation.set_lane(j % 4, q);
                set(&mut changed, j);
                first = first.min(j);
            }
        }
        refresh(self.skeleton, self.locals, self.models, &changed, first);
    }

    /// Brings every model matrix up to date: recomputes the matrices of the joints below one
    /// that has run, and those of the joints that have run but were computed from a parent
    /// matrix that changed since (see `exact`).
    pub(super) fn finish(&mut self) {
        if self.first == usize::MAX {
            return;
        }
        let words = self.first / 32..self.skeleton.num_joints().div_ceil(32);
        if self.plan.ordered && self.commits == self.plan.count {
            // Every spring joint ran and its matrix is final: only the joints below them that
            // are not spring joints change, each after its parent.
            for w in words {
                let spring = self.plan.spring.get(w).copied().unwrap_or(0);
                let mut bits = self.plan.under.get(w).copied().unwrap_or(0) & !spring;
                while bits != 0 {
                    let j = w * 32 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    recompute(self.locals, self.models, j, self.skeleton.parent(j));
                }
            }
            return;
        }
        // Some joint was skipped (or the order is another): the bookkeeping of `commit` says
        // which matrices are final, none where it was not kept.
        let keep = if self.repeated || self.plan.ordered { 0 } else { self.exact };
        // Parents first: a joint is recomputed when it ran or its parent was (marked in
        // `done` as it goes). Both are among the joints that ran and those below a spring joint.
        for w in words {
            let mut bits = self.done.get(w).copied().unwrap_or(0) | self.plan.under.get(w).copied().unwrap_or(0);
            while bits != 0 {
                let j = w * 32 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let parent = self.skeleton.parent(j);
                if !has(&self.done, j) && !parent.is_some_and(|p| has(&self.done, p)) {
                    continue;
                }
                set(&mut self.done, j);
                if !low(keep, j) {
                    recompute(self.locals, self.models, j, parent);
                }
            }
        }
    }
}

/// Recomputes, parents first from joint `first`, the model matrix of every joint of `roots` and
/// of every joint below one, as `LocalToModelJob` would.
fn refresh<R: Real>(
    skeleton: SkeletonView<'_, R>,
    locals: &[SoaTransform<R>],
    models: &mut [Mat4<R>],
    roots: &Bits,
    first: usize,
) {
    if first == usize::MAX {
        return;
    }
    let mut moved = NONE;
    let parents = skeleton.parents();
    for (j, &p) in parents.iter().enumerate().skip(first) {
        let parent = usize::try_from(p).ok();
        if has(roots, j) || parent.is_some_and(|p| has(&moved, p)) {
            set(&mut moved, j);
            recompute(locals, models, j, parent);
        }
    }
}

/// Joint `j`'s model matrix from its parent's (`parent`; the identity for a root) and its local
/// transform, as `LocalToModelJob` computes it.
#[inline(always)]
fn recompute<R: Real>(locals: &[SoaTransform<R>], models: &mut [Mat4<R>], j: usize, parent: Option<usize>) {
    let above = parent.and_then(|p| models.get(p)).copied().unwrap_or(Mat4::IDENTITY);
    let local = locals.get(j / 4).map_or(Transform::IDENTITY, |s| s.lane(j % 4));
    if let Some(m) = models.get_mut(j) {
        *m = model_of(&above, &local);
    }
}
