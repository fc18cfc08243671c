//! The pose the spring stage edits: the local transforms, the model matrices as three-vrm's
//! `matrixWorld`s hold them while the joints run (recomputed when read), and the final pass
//! that brings every matrix up to date.

use super::SpringJoint;
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
pub(super) fn model_of<R: Real>(parent: &Mat4<R>, local: &Transform<R>) -> Mat4<R> {
    let l = Mat4::from_trs(local.translation, local.rotation, local.scale);
    let p = &parent.cols;
    let mut o = Mat4::ZERO;
    for (oc, lc) in o.cols.iter_mut().zip(l.cols.iter()) {
        let (a, b, d) = (lc[0], lc[1], lc[2]);
        for (r, v) in oc.iter_mut().enumerate() {
            *v = p[2][r] * d + (p[1][r] * b + p[0][r] * a);
        }
    }
    for (v, pv) in o.cols[3].iter_mut().zip(p[3]) {
        *v += pv;
    }
    o
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
    /// The joints that are spring joints.
    spring: Bits,
    /// The joints below a spring joint (whose matrices a spring joint's run can change).
    under: Bits,
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
}

impl<'p, R: Real> Pose<'p, R> {
    /// The pose, with the joints of `springs` marked as spring joints.
    pub(super) fn new(
        skeleton: SkeletonView<'p, R>,
        springs: &[SpringJoint<R>],
        locals: &'p mut [SoaTransform<R>],
        models: &'p mut [Mat4<R>],
    ) -> Self {
        let mut spring = [0; MAX_JOINTS / 32];
        let mut lowest = usize::MAX;
        for s in springs {
            set(&mut spring, s.joint.into());
            lowest = lowest.min(s.joint.into());
        }
        // Parents come before their children: one pass from the lowest spring joint on marks
        // every joint below a spring joint.
        let mut under = [0; MAX_JOINTS / 32];
        for (j, &p) in skeleton.parents().iter().enumerate().skip(lowest) {
            if usize::try_from(p).is_ok_and(|p| has(&spring, p) || has(&under, p)) {
                set(&mut under, j);
            }
        }
        Pose { skeleton, locals, models, spring, under, done: NONE, exact: 0, repeated: false, first: usize::MAX }
    }

    /// The hierarchy.
    pub(super) fn skeleton(&self) -> SkeletonView<'p, R> {
        self.skeleton
    }

    /// Joint `j`'s local transform.
    pub(super) fn local(&self, j: usize) -> Transform<R> {
        self.locals.get(j / 4).map_or(Transform::IDENTITY, |s| s.lane(j % 4))
    }

    /// The stored model matrix of joint `j` (identity past the end, never reached).
    fn model(&self, j: usize) -> Mat4<R> {
        self.models.get(j).copied().unwrap_or(Mat4::IDENTITY)
    }

    /// Joint `x`'s model matrix as three-vrm holds it now: a spring joint's stored one; for
    /// another joint, recomputed from its nearest spring ancestor when that one has run (three-vrm
    /// updates the joints below a spring joint after it moves, down to the next spring joints),
    /// else the one on entry.
    pub(super) fn stored(&self, x: usize) -> Mat4<R> {
        if has(&self.spring, x) || !has(&self.under, x) {
            return self.model(x);
        }
        let sk = &self.skeleton;
        let mut up = sk.parent(x);
        let above = loop {
            match up {
                None => return self.model(x),
                Some(a) if has(&self.spring, a) => break a,
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
            path = local(a) * path;
            up = sk.parent(a);
        }
        self.model(above) * path
    }

    /// Writes joint `j`'s new rotation and model matrix (computed from `stored` of its parent)
    /// and marks it as run.
    pub(super) fn commit(&mut self, j: usize, rotation: Quat<R>, model: Mat4<R>) {
        if let Some(soa) = self.locals.get_mut(j / 4) {
            soa.rotation.set_lane(j % 4, rotation);
        }
        if let Some(m) = self.models.get_mut(j) {
            *m = model;
        }
        // The parent's matrix as read now is its final one when the parent is a root's (none),
        // a joint above every spring joint (never recomputed), or a spring joint whose own
        // matrix is final: `models` holds it and only its own commit changes it.
        let exact = match self.skeleton.parent(j) {
            None => true,
            Some(p) if has(&self.spring, p) => low(self.exact, p),
            Some(p) => !has(&self.under, p),
        };
        if has(&self.done, j) {
            self.repeated = true;
        }
        if exact && j < 128 {
            self.exact |= 1 << j;
        }
        set(&mut self.done, j);
        self.first = self.first.min(j);
    }

    /// Gives each joint of `rotations` (joint, rotation), in order, its rotation; when one
    /// changes, recomputes the model matrices of those joints and of every joint below them,
    /// so that `models` is a local-to-model of the new locals.
    pub(super) fn restore(&mut self, rotations: impl Iterator<Item = (usize, Quat<R>)>) {
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
        refresh(self.skeleton, self.locals, self.models, &changed, first, 0);
    }

    /// Brings every model matrix up to date: recomputes the matrices of the joints below one
    /// that has run, and those of the joints that have run but were computed from a parent
    /// matrix that changed since (see `exact`).
    pub(super) fn finish(self) {
        let keep = if self.repeated { 0 } else { self.exact };
        refresh(self.skeleton, self.locals, self.models, &self.done, self.first, keep);
    }
}

/// Recomputes, parents first from joint `first`, the model matrix of every joint of `roots` and
/// of every joint below one, as `LocalToModelJob` would; the joints of `keep` (up to date
/// already) count as recomputed without being computed again.
fn refresh<R: Real>(
    skeleton: SkeletonView<'_, R>,
    locals: &[SoaTransform<R>],
    models: &mut [Mat4<R>],
    roots: &Bits,
    first: usize,
    keep: u128,
) {
    if first == usize::MAX {
        return;
    }
    let mut moved = NONE;
    let parents = skeleton.parents();
    for (j, &p) in parents.iter().enumerate().skip(first) {
        let parent = usize::try_from(p).ok();
        if !has(roots, j) && !parent.is_some_and(|p| has(&moved, p)) {
            continue;
        }
        set(&mut moved, j);
        if low(keep, j) {
            continue;
        }
        let above = parent.and_then(|p| models.get(p)).copied().unwrap_or(Mat4::IDENTITY);
        let local = locals.get(j / 4).map_or(Transform::IDENTITY, |s| s.lane(j % 4));
        if let Some(m) = models.get_mut(j) {
            *m = model_of(&above, &local);
        }
    }
}
