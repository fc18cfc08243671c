//! Chain IK: FABRIK and CCD over a chain of joints, with optional joint limits and a pole.
//!
//! A chain is joints `j0 … jn` of one skeleton, each the parent of the next; `jn` is the end
//! effector. [`IkChainJob`] reads their model-space matrices and writes one local correction
//! per joint `j0 … jn−1`, in the convention of the other IK jobs
//! (`local.rotation = local.rotation · correction`, [`apply_correction`](super::apply_correction),
//! or [`apply_chain_corrections`] for the whole chain). Only rotations change, so every bone
//! keeps its length. The rules are [`IkChainJob`]'s.

use super::{from_to, rotation_of, to_local, weighted};
use crate::job::JobError;
use crate::math::{ops, Mat4, Quat, SoaTransform, Vec3};
use crate::real::Real;
use crate::skeleton::SkeletonView;

/// Most joints (the end effector included) of a chain that [`IkChainJob`] and
/// [`IkLookChainJob`](super::IkLookChainJob) accept.
pub const MAX_CHAIN_JOINTS: usize = 64;

/// Which chain solver [`IkChainJob`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainSolver {
    /// Forward and backward reaching (Aristidou and Lasenby, 2011).
    Fabrik,
    /// Cyclic coordinate descent.
    Ccd,
}

/// A joint's rotation limit, measured from its rest rotation in its rest frame (see
/// [`IkChainJob`]). Angles are radians in `[−π, π]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointLimit<R> {
    /// No limit.
    Free,
    /// A hinge: the deviation from rest is a rotation about `axis` by an angle in `[min, max]`.
    Hinge {
        /// The hinge's axis in the joint's rest frame. Must be non-zero.
        axis: Vec3<R>,
        /// The smallest angle, in `[−π, max]`.
        min: R,
        /// The largest angle, in `[min, π]`.
        max: R,
    },
    /// A swing cone with a twist range: the deviation from rest is a twist about `twist_axis`
    /// by an angle in `[twist_min, twist_max]`, then a swing about an axis perpendicular to it by
    /// at most `swing`.
    Cone {
        /// The twist axis in the joint's rest frame (usually the bone's direction). Must be
        /// non-zero.
        twist_axis: Vec3<R>,
        /// The cone's half-angle, in `[0, π]`.
        swing: R,
        /// The smallest twist angle, in `[−π, twist_max]`.
        twist_min: R,
        /// The largest twist angle, in `[twist_min, π]`.
        twist_max: R,
    },
}

impl<R: Real> JointLimit<R> {
    /// Checks the limit's axis and angles.
    ///
    /// # Errors
    ///
    /// [`JobError::InvalidAxis`] for a zero or non-finite axis, [`JobError::InvalidRange`] for a
    /// non-finite angle or an angle range that is empty or outside `[−π, π]`.
    pub fn validate(&self) -> Result<(), JobError> {
        let range = |lo: R, hi: R| lo.is_finite() && hi.is_finite() && -R::PI <= lo && lo <= hi && hi <= R::PI;
        let (axis, ok) = match *self {
            JointLimit::Free => return Ok(()),
            JointLimit::Hinge { axis, min, max } => (axis, range(min, max)),
            JointLimit::Cone { twist_axis, swing, twist_min, twist_max } => {
                (twist_axis, range(twist_min, twist_max) && range(R::ZERO, swing))
            }
        };
        if !axis.is_finite() || axis.try_normalize().is_none() {
            return Err(JobError::InvalidAxis);
        }
        if !ok {
            return Err(JobError::InvalidRange);
        }
        Ok(())
    }

    /// The allowed deviation nearest `wanted`, `r` being the direction in the joint's frame
    /// that `wanted` places (see [`IkChainJob`]).
    fn constrain(&self, wanted: Quat<R>, r: Vec3<R>) -> Quat<R> {
        match *self {
            JointLimit::Free => wanted,
            JointLimit::Hinge { axis, min, max } => {
                let a = axis.normalize_or_zero();
                let theta = roll_angle(r, wanted.rotate(r), a).unwrap_or_else(|| twist_angle(wanted, a));
                Quat::from_axis_angle(a, clamp_angle(theta, min, max))
            }
            JointLimit::Cone { twist_axis, swing, twist_min, twist_max } => {
                let a = twist_axis.normalize_or_zero();
                let q = if wanted.w < R::ZERO { -wanted } else { wanted };
                let theta = twist_angle(q, a);
                let twist = Quat::from_axis_angle(a, theta);
                let mut swung = (q * twist.conjugate()).normalize();
                if swung.w < R::ZERO {
                    swung = -swung;
                }
                let v = swung.xyz();
                let angle = R::TWO * ops::atan2(v.length(), swung.w);
                if angle > swing {
                    swung = match v.try_normalize() {
                        Some(axis) => Quat::from_axis_angle(axis, swing),
                        None => Quat::IDENTITY,
                    };
                }
                (swung * Quat::from_axis_angle(a, clamp_angle(theta, twist_min, twist_max))).normalize()
            }
        }
    }

    /// The limit of the inverse rotation: `Δ` is within `self` exactly when `Δ⁻¹` is within
    /// the result (a swing·twist's inverse is a swing of the same angle after the opposite
    /// twist).
    fn inverse(&self) -> Self {
        match *self {
            JointLimit::Free => JointLimit::Free,
            JointLimit::Hinge { axis, min, max } => JointLimit::Hinge { axis, min: -max, max: -min },
            JointLimit::Cone { twist_axis, swing, twist_min, twist_max } => {
                JointLimit::Cone { twist_axis, swing, twist_min: -twist_max, twist_max: -twist_min }
            }
        }
    }

    fn is_free(&self) -> bool {
        matches!(self, JointLimit::Free)
    }
}

/// The angle of `q`'s twist about the unit `axis` (swing-twist decomposition), in `[−π, π]`.
fn twist_angle<R: Real>(q: Quat<R>, axis: Vec3<R>) -> R {
    let q = if q.w < R::ZERO { -q } else { q };
    R::TWO * ops::atan2(q.xyz().dot(axis), q.w)
}

/// `angle` (in `[−π, π]`) clamped into `[lo, hi]`; outside it, the end nearer on the circle.
fn clamp_angle<R: Real>(angle: R, lo: R, hi: R) -> R {
    if angle >= lo && angle <= hi {
        return angle;
    }
    let turn = R::TWO * R::PI;
    let gap = |a: R, b: R| {
        let d = (a - b).abs();
        d.min(turn - d)
    };
    if gap(angle, lo) <= gap(angle, hi) {
        lo
    } else {
        hi
    }
}

/// What a chain solve reached (for the full-weight solution, whatever the job's weight).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainReport<R> {
    /// Iterations run (0 when the effector started within the tolerance, or a far target
    /// straightened the chain).
    pub iterations: u32,
    /// Distance from the end effector, as the corrections place it, to the target.
    pub distance: R,
    /// `distance ≤ tolerance`.
    pub reached: bool,
}

/// Chain IK: FABRIK or CCD over joints `j0 … jn` (each the parent of the next), with optional
/// per-joint limits and a pole; writes the local corrections of `j0 … jn−1`.
///
/// `core/docs/ik.md` states the same rules with measured figures.
///
/// # Solvers
///
/// Positions `p0 … pn` start at the joints' model positions; `di = |pi+1 − pi|`; `t` is the
/// target, `ε` the tolerance, `K` the iteration cap. Both solvers test `|pn − t| > ε` and
/// `iterations < K` before each iteration.
///
/// - **FABRIK** (Aristidou and Lasenby, 2011). Without limits, a target at `|t − p0| ≥ Σ di` is
///   out of reach: the chain is straightened towards it (`pi+1 = pi + di · (t − pi)/|t − pi|`)
///   and the solve ends after 0 iterations. Otherwise an iteration is a backward pass
///   (`pn = t`, then for `i = n−1 … 0`: `pi = pi+1 + di · (pi − pi+1)/|pi − pi+1|`) and a
///   forward pass (`p0` back to its start, then for `i = 0 … n−1`:
///   `pi+1 = pi + di · (pi+1 − pi)/|pi+1 − pi|`).
/// - **CCD.** An iteration visits `i = n−1 … 0` and turns joint `ji` by the shortest arc taking
///   `pn − pi` to `t − pi`, moving its descendants with it.
///
/// The positions become rotations from `j0` down: joint `ji`'s new model rotation is the
/// shortest arc from its input bone direction to its new one (`pi+1 − pi`), multiplied on the
/// left of its input model rotation; its local rotation follows from its parent's new model
/// rotation. A direction of zero length (a bone of length 0, or two positions that meet) keeps
/// the joint's local rotation.
///
/// # Limits
///
/// A joint's limit ([`JointLimit`]) bounds its *deviation from rest*: with `L` its local
/// rotation and `Lr` its rest rotation (the skeleton's rest pose), `Δ = Lr⁻¹ · L`, a rotation
/// in the joint's rest frame (the frame its local rotation is at rest). A hinge allows
/// `Δ = rotation(axis, θ)` with `θ ∈ [min, max]`; a cone allows `Δ = swing · twist`, the twist
/// about `twist_axis` by an angle in `[twist_min, twist_max]` and the swing about an axis
/// perpendicular to it by at most `swing`. The model rotation of `j0`'s parent is read from
/// its matrix (the identity when `j0` is a root). An angle outside a range is clamped to the
/// end nearer on the circle.
///
/// With limits (any entry not [`JointLimit::Free`]) every joint's rotation is kept as state
/// (a model-space turn per joint, in `corrections` during the solve), each pass sets the
/// rotations within the limits and places the joints from them, and the rotations of the last
/// pass are the result (the positions-to-rotations rule above is not applied):
///
/// 1. A *limited forward sweep* first brings the input pose into its limits.
/// 2. **FABRIK** takes no shortcut for a far target. An iteration is a *limited backward
///    pass* (`pn = t`), then `p0` back to its start and a limited forward sweep; when the
///    iteration leaves the effector farther from the target than 99/100 of its distance
///    before it, a limited CCD iteration follows in the same iteration (FABRIK stalls on
///    chains of hinges).
/// 3. **CCD** limits each step as it makes it.
///
/// In each pass a joint starts from its current model rotation *carried* by its neighbour's
/// new one (its local rotation kept; in the backward pass, the child's local rotation kept).
///
/// - **Limited forward sweep**, from `j0` down, `g` = `pn` before the sweep (the target after a
///   backward pass): a free or cone joint `ji` turns by the shortest arc taking its bone to
///   `pi+1 − pi`, then rolls about that direction so that its current offset to the end
///   effector points as near `g − pi` as it can; a cone then limits it (the deviation split
///   into `swing · twist`, the swing's angle reduced, the twist's clamped). A hinge takes the
///   angle about its axis that best takes (least squares, on the plane perpendicular to the
///   axis) its bone to `pi+1 − pi` and its offset to the effector to `g − pi`, clamped. `pi+1`
///   is then placed from the joint's rotation.
/// - **Limited backward pass**, from `jn−1` up, `r0` = the start of `p0`: joint `ji` turns by
///   the shortest arc taking its bone to `pi+1 − pi` (`pi` where the previous pass left it),
///   then rolls about it so that its offset to `j0` points as near `r0` as it can. `jn−1` then
///   keeps to its own limit under its parent's rotation before the pass (a hinge: the angle
///   taking its bone nearest `pi+1 − pi`); any other joint keeps to its child's limit: the
///   child's deviation `Δ` must stay within it, so `Δ⁻¹` is limited by the inverse limit (a
///   hinge over `[−max, −min]`, a cone with the twist range `[−twist_max, −twist_min]`), for a
///   hinge at the angle that best takes the bone to `pi − pi+1` and the offset from `ji+1` to
///   `j0` to `r0 − pi+1`. `pi` is then placed from the joint's rotation.
/// - **Limited CCD step** at `ji`: the step's arc on the left of the joint's current model
///   rotation, limited: a hinge at the signed angle about its axis from `r` to `Δw · r` (`Δw`
///   the wanted deviation, `r` the direction to the end effector in the joint's frame, both
///   projected on the plane perpendicular to the axis; the twist angle of `Δw` about the axis
///   when a projection is under 1/1000 of its vector), a cone as above; the descendants turn
///   rigidly with it, so their local rotations stay within their limits.
///
/// # Pole
///
/// With a pole position, after the iterations the interior joints `p1 … pn−1` turn rigidly
/// about the line from `p0` to `pn` so that the sum of their offsets from that line points to
/// the pole (nothing when the sum or the pole's offset vanishes). The chain keeps its shape,
/// its ends do not move, so the effector stays where the solver put it. With limits, a limited
/// forward sweep then follows, which can move the effector where a limit stops the turn.
///
/// # Examples
///
/// A straight arm of three 1 m bones along +X reaches a point in front of it:
///
/// ```
/// use sinew::job::ik::{apply_chain_corrections, ChainSolver, IkChainJob};
/// use sinew::job::LocalToModelJob;
/// use sinew::math::{Mat4, Quat, SoaTransform, Transform, Vec3};
/// use sinew::skeleton::{Skeleton, NO_PARENT};
///
/// let bone = Transform::new(Vec3::X, Quat::IDENTITY, Vec3::ONE);
/// let arm = Skeleton::<f32, 1>::new(
///     &[NO_PARENT, 0, 1, 2],
///     &[Transform::IDENTITY, bone, bone, bone],
///     &["shoulder", "elbow", "wrist", "hand"],
/// )?;
/// let mut local = [SoaTransform::IDENTITY];
/// local.copy_from_slice(arm.rest_pose());
/// let mut model = [Mat4::IDENTITY; 4];
/// LocalToModelJob::new(arm.view(), &local, &mut model).run()?;
///
/// let chain = [0u16, 1, 2, 3];
/// let target = Vec3::new(1.5, 1.5, 0.5);
/// let mut positions = [Vec3::ZERO; 4]; // scratch, one per chain joint
/// let mut corrections = [Quat::IDENTITY; 3]; // one per joint but the end effector
/// let report = IkChainJob {
///     solver: ChainSolver::Fabrik,
///     skeleton: arm.view(),
///     models: &model,
///     chain: &chain,
///     target,
///     tolerance: 1e-4,
///     max_iterations: 20,
///     weight: 1.0,
///     limits: &[], // no limits
///     pole: None,
///     positions: &mut positions,
///     corrections: &mut corrections,
/// }
/// .run()?;
/// assert!(report.reached);
///
/// apply_chain_corrections(&mut local, &chain, &corrections)?;
/// LocalToModelJob::new(arm.view(), &local, &mut model).run()?;
/// assert!((model[3].translation() - target).length() < 1e-3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct IkChainJob<'a, R: Real> {
    /// The solver.
    pub solver: ChainSolver,
    /// The skeleton: the parents that make the chain, and the rest rotations limits are
    /// measured from.
    pub skeleton: SkeletonView<'a, R>,
    /// Model matrices of the pose, indexed by joint (from
    /// [`LocalToModelJob`](crate::job::LocalToModelJob)).
    pub models: &'a [Mat4<R>],
    /// The chain's joints `j0 … jn`, each the parent of the next: at least 2, at most
    /// [`MAX_CHAIN_JOINTS`].
    pub chain: &'a [u16],
    /// Target of the end effector, model space.
    pub target: Vec3<R>,
    /// The solve stops once the effector is this close to the target (finite, ≥ 0).
    pub tolerance: R,
    /// The most iterations run.
    pub max_iterations: u32,
    /// Blend of the corrections with the input pose, in `[0, 1]`: 0 leaves the chain, 1 gives
    /// the solution (limits hold at 1; below, the corrections are `nlerp(identity, c, weight)`).
    pub weight: R,
    /// One limit per joint `j0 … jn−1`, or empty for none.
    pub limits: &'a [JointLimit<R>],
    /// A position, model space, that the chain's interior joints turn towards; `None` for none.
    pub pole: Option<Vec3<R>>,
    /// Scratch: the solver's joint positions, at least one per chain joint.
    pub positions: &'a mut [Vec3<R>],
    /// Output: the local corrections of `j0 … jn−1` (at least `chain.len() − 1`); during the
    /// solve it holds the joints' model-space turns.
    pub corrections: &'a mut [Quat<R>],
}

/// Checks that `chain` is joints of `skeleton` with model matrices, each the parent of the
/// next, of `min ..= MAX_CHAIN_JOINTS` joints.
pub(super) fn validate_chain<R: Real>(
    skeleton: &SkeletonView<'_, R>,
    models: &[Mat4<R>],
    chain: &[u16],
    min: usize,
) -> Result<(), JobError> {
    if chain.len() < min || chain.len() > MAX_CHAIN_JOINTS {
        return Err(JobError::InvalidRange);
    }
    let joints = skeleton.num_joints().min(models.len());
    if chain.iter().any(|&j| usize::from(j) >= joints) {
        return Err(JobError::JointIndexOutOfRange);
    }
    if chain.windows(2).any(|w| match w {
        [a, b] => skeleton.parent(usize::from(*b)) != Some(usize::from(*a)),
        _ => false,
    }) {
        return Err(JobError::InvalidRange);
    }
    // Every matrix read: the chain's, and that of j0's parent.
    let first = chain.first().map(|&j| usize::from(j));
    let parent = first.and_then(|j| skeleton.parent(j));
    for j in chain.iter().map(|&j| usize::from(j)).chain(parent) {
        match models.get(j) {
            Some(m) if m.is_finite() && rotation_of(m).is_some() => {}
            _ => return Err(JobError::InvalidTransform),
        }
    }
    Ok(())
}

impl<R: Real> IkChainJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// - [`JobError::InvalidRange`]: fewer than 2 or more than [`MAX_CHAIN_JOINTS`] joints, a
    ///   joint that is not the parent of the next, or a limit's angles (see
    ///   [`JointLimit::validate`]);
    /// - [`JobError::JointIndexOutOfRange`]: a joint outside the skeleton or `models`;
    /// - [`JobError::ContextTooSmall`]: `positions` shorter than the chain;
    /// - [`JobError::OutputTooSmall`]: `corrections` shorter than `chain.len() − 1`;
    /// - [`JobError::LengthMismatch`]: `limits` neither empty nor `chain.len() − 1` long;
    /// - [`JobError::InvalidThreshold`]: `tolerance` negative or not finite;
    /// - [`JobError::InvalidWeight`]: `weight` outside `[0, 1]` or not finite;
    /// - [`JobError::InvalidAxis`]: a limit's zero axis;
    /// - [`JobError::InvalidTransform`]: a non-finite target or pole, or a chain joint's (or
    ///   `j0`'s parent's) matrix that is not finite or has a zero column.
    pub fn validate(&self) -> Result<(), JobError> {
        validate_chain(&self.skeleton, self.models, self.chain, 2)?;
        let n = self.chain.len() - 1;
        if self.positions.len() < n + 1 {
            return Err(JobError::ContextTooSmall);
        }
        if self.corrections.len() < n {
            return Err(JobError::OutputTooSmall);
        }
        if !self.limits.is_empty() && self.limits.len() != n {
            return Err(JobError::LengthMismatch);
        }
        if !self.tolerance.is_finite() || self.tolerance < R::ZERO {
            return Err(JobError::InvalidThreshold);
        }
        if !self.weight.is_finite() || self.weight < R::ZERO || self.weight > R::ONE {
            return Err(JobError::InvalidWeight);
        }
        if !self.target.is_finite() || !self.pole.is_none_or(|p| p.is_finite()) {
            return Err(JobError::InvalidTransform);
        }
        self.limits.iter().try_for_each(JointLimit::validate)
    }

    /// Validates, then solves and writes the corrections.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    // Inlined, so that a caller whose limits are all free (an empty slice) links no limit code.
    #[inline]
    pub fn run(&mut self) -> Result<ChainReport<R>, JobError> {
        self.validate()?;
        if self.limits.iter().all(JointLimit::is_free) {
            Ok(self.solve::<false>())
        } else {
            Ok(self.solve::<true>())
        }
    }

    /// Solves the validated chain (`LIMITED`: some limit is not free) and writes the
    /// corrections.
    fn solve<const LIMITED: bool>(&mut self) -> ChainReport<R> {
        let n = self.chain.len() - 1;
        let parent_rot = self
            .chain
            .first()
            .and_then(|&j| self.skeleton.parent(usize::from(j)))
            .and_then(|p| self.models.get(p))
            .and_then(rotation_of)
            .unwrap_or(Quat::IDENTITY);
        let chain = Chain::<R, LIMITED> {
            skeleton: self.skeleton,
            models: self.models,
            joints: self.chain,
            limits: self.limits,
            parent_rot,
        };
        let p = self.positions.get_mut(..=n).unwrap_or_default();
        let q = self.corrections.get_mut(..n).unwrap_or_default();
        for (i, pi) in p.iter_mut().enumerate() {
            *pi = chain.position(i);
        }
        q.fill(Quat::IDENTITY);
        let iterations = match (self.solver, LIMITED) {
            (ChainSolver::Fabrik, false) => chain.fabrik_free(p, self.target, self.tolerance, self.max_iterations),
            (ChainSolver::Fabrik, true) => chain.fabrik_limited(p, q, self.target, self.tolerance, self.max_iterations),
            (ChainSolver::Ccd, _) => chain.ccd(p, q, self.target, self.tolerance, self.max_iterations),
        };
        if let Some(pole) = self.pole {
            turn_to_pole(p, pole);
        }
        // The turns from the positions; with limits the solvers leave them, unless the pole
        // moved the positions.
        if !LIMITED {
            chain.sweep(p, q);
        } else if self.pole.is_some() {
            chain.sweep_limited(p, q);
        }
        let distance = p.last().map_or(R::ZERO, |&e| (e - self.target).length());
        // Model-space turns to local corrections: c_i = W_i⁻¹ · q_{i−1}⁻¹ · q_i · W_i.
        let mut prev = Quat::IDENTITY;
        for (i, qi) in q.iter_mut().enumerate() {
            let turn = *qi;
            *qi = weighted(to_local((prev.conjugate() * turn).normalize(), chain.rotation(i)), self.weight);
            prev = turn;
        }
        ChainReport { iterations, distance, reached: distance <= self.tolerance }
    }
}

/// The chain's inputs, read by the solvers after validation.
struct Chain<'c, R: Real, const LIMITED: bool> {
    skeleton: SkeletonView<'c, R>,
    models: &'c [Mat4<R>],
    joints: &'c [u16],
    limits: &'c [JointLimit<R>],
    /// Model rotation of `j0`'s parent (identity for a root).
    parent_rot: Quat<R>,
}

/// The turn of joint `i`, identity past the end.
fn turn<R: Real>(q: &[Quat<R>], i: usize) -> Quat<R> {
    q.get(i).copied().unwrap_or(Quat::IDENTITY)
}

/// The signed angle about the unit `axis` from `a` to `b` (projected on the plane
/// perpendicular to it); `None` when a projection is under 1/1000 of its vector.
fn roll_angle<R: Real>(a: Vec3<R>, b: Vec3<R>, axis: Vec3<R>) -> Option<R> {
    let pa = a - axis * a.dot(axis);
    let pb = b - axis * b.dot(axis);
    let small = R::ratio(1, 1000);
    if pa.length() <= a.length() * small || pb.length() <= b.length() * small {
        return None;
    }
    Some(ops::atan2(axis.dot(pa.cross(pb)), pa.dot(pb)))
}

/// `carried` turned by the shortest arc taking `bone` (in its frame) to the direction `to_next`,
/// then rolled about that direction by the angle that takes `end` (in its frame) nearest the
/// direction `to_goal`.
fn aim_and_roll<R: Real>(carried: Quat<R>, bone: Vec3<R>, to_next: Vec3<R>, end: Vec3<R>, to_goal: Vec3<R>) -> Quat<R> {
    let (Some(from), Some(dir)) = (carried.rotate(bone).try_normalize(), to_next.try_normalize()) else {
        return carried;
    };
    let aimed = (from_to(from, dir) * carried).normalize();
    match roll_angle(aimed.rotate(end), to_goal, dir) {
        Some(angle) => (Quat::from_axis_angle(dir, angle) * aimed).normalize(),
        None => aimed,
    }
}

/// The rotation about `axis` by the angle in `[lo, hi]` (clamped as [`clamp_angle`]) that best
/// takes each `u` to its `v` (least squares over the pairs, projected on the plane
/// perpendicular to the axis).
fn hinge_fit<R: Real>(axis: Vec3<R>, lo: R, hi: R, pairs: &[(Vec3<R>, Vec3<R>)]) -> Quat<R> {
    let a = axis.normalize_or_zero();
    let (mut x, mut y) = (R::ZERO, R::ZERO);
    for &(u, v) in pairs {
        let (u, v) = (u - a * u.dot(a), v - a * v.dot(a));
        x += u.dot(v);
        y += a.dot(u.cross(v));
    }
    Quat::from_axis_angle(a, clamp_angle(ops::atan2(y, x), lo, hi))
}

impl<R: Real, const LIMITED: bool> Chain<'_, R, LIMITED> {
    fn model(&self, i: usize) -> Option<&Mat4<R>> {
        self.joints.get(i).and_then(|&j| self.models.get(usize::from(j)))
    }
    /// Input model position of chain joint `i`.
    fn position(&self, i: usize) -> Vec3<R> {
        self.model(i).map_or(Vec3::ZERO, Mat4::translation)
    }
    /// Input model rotation of chain joint `i`.
    fn rotation(&self, i: usize) -> Quat<R> {
        self.model(i).and_then(rotation_of).unwrap_or(Quat::IDENTITY)
    }
    /// Input model offset of bone `i` (joint `i` to joint `i + 1`).
    fn offset(&self, i: usize) -> Vec3<R> {
        self.position(i + 1) - self.position(i)
    }
    /// Rest rotation of chain joint `i`.
    fn rest(&self, i: usize) -> Quat<R> {
        self.joints
            .get(i)
            .and_then(|&j| self.skeleton.rest_transform(usize::from(j)))
            .map_or(Quat::IDENTITY, |t| t.rotation.normalize())
    }
    fn limit(&self, i: usize) -> JointLimit<R> {
        self.limits.get(i).copied().unwrap_or(JointLimit::Free)
    }
    /// Model rotation of the parent of chain joint `i`, given the turns `q`.
    fn parent_model(&self, q: &[Quat<R>], i: usize) -> Quat<R> {
        match i.checked_sub(1) {
            None => self.parent_rot,
            Some(k) => (turn(q, k) * self.rotation(k)).normalize(),
        }
    }
    /// The offset from joint `i` to the end effector, given the turns `q`.
    fn to_end(&self, q: &[Quat<R>], i: usize) -> Vec3<R> {
        (i..q.len()).fold(Vec3::ZERO, |e, k| e + turn(q, k).rotate(self.offset(k)))
    }
    /// The offset from joint `i` to `j0`, given the turns `q`.
    fn to_start(&self, q: &[Quat<R>], i: usize) -> Vec3<R> {
        (0..i).fold(Vec3::ZERO, |e, k| e - turn(q, k).rotate(self.offset(k)))
    }

    /// The positions-to-rotations rule: sets each joint's model-space turn `q[i]` (new model
    /// rotation `q[i] · W_i`) from the positions, then the positions from the turns.
    fn sweep(&self, p: &mut [Vec3<R>], q: &mut [Quat<R>]) {
        let mut prev = Quat::IDENTITY;
        for i in 0..q.len() {
            let (Some(&pi), Some(&next)) = (p.get(i), p.get(i + 1)) else { return };
            let off = self.offset(i);
            let t = match (off.try_normalize(), (next - pi).try_normalize()) {
                (Some(a), Some(b)) => from_to(a, b),
                // Keep the local rotation: turn with the parent.
                _ => prev,
            };
            if let Some(qi) = q.get_mut(i) {
                *qi = t;
            }
            if let Some(x) = p.get_mut(i + 1) {
                *x = pi + t.rotate(off);
            }
            prev = t;
        }
    }

    /// Stores joint `i`'s new model rotation `world` (`w` its input one) as its turn and places
    /// the joint after it.
    fn place_next(&self, p: &mut [Vec3<R>], q: &mut [Quat<R>], i: usize, world: Quat<R>, w: Quat<R>) {
        let t = (world * w.conjugate()).normalize();
        if let Some(qi) = q.get_mut(i) {
            *qi = t;
        }
        let Some(&pi) = p.get(i) else { return };
        if let Some(x) = p.get_mut(i + 1) {
            *x = pi + t.rotate(self.offset(i));
        }
    }

    /// The limited forward sweep (`IkChainJob`'s documentation), towards the positions the
    /// previous pass left; reads and writes the turns.
    fn sweep_limited(&self, p: &mut [Vec3<R>], q: &mut [Quat<R>]) {
        let n = q.len();
        let goal = p.get(n).copied().unwrap_or(Vec3::ZERO);
        // The parent's model rotation before and after this sweep.
        let (mut parent_old, mut parent_new) = (self.parent_rot, self.parent_rot);
        // The offset from joint `i` to the end effector before the sweep.
        let mut to_end = self.to_end(q, 0);
        for i in 0..n {
            let (Some(&pi), Some(&next)) = (p.get(i), p.get(i + 1)) else { return };
            let (w, off) = (self.rotation(i), self.offset(i));
            let old = (turn(q, i) * w).normalize();
            let carried = (parent_new * parent_old.conjugate() * old).normalize();
            let bone = w.conjugate().rotate(off);
            let end = old.conjugate().rotate(to_end);
            to_end -= turn(q, i).rotate(off);
            let frame = (parent_new * self.rest(i)).normalize();
            let world = match self.limit(i) {
                JointLimit::Hinge { axis, min, max } => {
                    let (to_next, to_goal) = (frame.conjugate().rotate(next - pi), frame.conjugate().rotate(goal - pi));
                    frame * hinge_fit(axis, min, max, &[(bone, to_next), (end, to_goal)])
                }
                limit => {
                    let wanted = aim_and_roll(carried, bone, next - pi, end, goal - pi);
                    frame * limit.constrain((frame.conjugate() * wanted).normalize(), bone.normalize_or_zero())
                }
            }
            .normalize();
            self.place_next(p, q, i, world, w);
            (parent_old, parent_new) = (old, world);
        }
    }

    /// FABRIK's limited backward pass (`IkChainJob`'s documentation), `pn` at the target;
    /// reads and writes the turns.
    fn sweep_back(&self, p: &mut [Vec3<R>], q: &mut [Quat<R>], root: Vec3<R>) {
        let n = q.len();
        // The child's model rotation before and after this pass.
        let (mut child_old, mut child_new) = (Quat::IDENTITY, Quat::IDENTITY);
        // The offset from joint `i` to `j0` before the pass.
        let mut to_start = self.to_start(q, n.saturating_sub(1));
        for i in (0..n).rev() {
            let (Some(&pi), Some(&next)) = (p.get(i), p.get(i + 1)) else { return };
            let off = self.offset(i);
            let w = self.rotation(i);
            let old = (turn(q, i) * w).normalize();
            let carried = if i + 1 == n { old } else { (child_new * child_old.conjugate() * old).normalize() };
            let bone = w.conjugate().rotate(off);
            let start = old.conjugate().rotate(to_start);
            if let Some(k) = i.checked_sub(1) {
                to_start += turn(q, k).rotate(self.offset(k));
            }
            // Where the joint lands with its bone towards `pi`: the pivot of the roll.
            let pivot = next - (next - pi).normalize_or_zero() * off.length();
            let wanted = aim_and_roll(carried, bone, next - pi, start, root - pivot);
            let world = if i + 1 == n {
                // The last joint: its own limit, under its parent's rotation before the pass.
                let frame = (self.parent_model(q, i) * self.rest(i)).normalize();
                match self.limit(i) {
                    JointLimit::Hinge { axis, min, max } => {
                        frame * hinge_fit(axis, min, max, &[(bone, frame.conjugate().rotate(next - pi))])
                    }
                    limit => {
                        frame * limit.constrain((frame.conjugate() * wanted).normalize(), bone.normalize_or_zero())
                    }
                }
            } else {
                // The child's local rotation Fi⁻¹ · Fi+1 = Lr · Δ: limit Δ⁻¹, which places joint i.
                let rest = self.rest(i + 1);
                let inverse = match self.limit(i + 1).inverse() {
                    JointLimit::Hinge { axis, min, max } => {
                        let into = |v: Vec3<R>| child_new.conjugate().rotate(v);
                        let from = |v: Vec3<R>| rest.conjugate().rotate(v);
                        hinge_fit(
                            axis,
                            min,
                            max,
                            &[(from(-bone), into(pi - next)), (from(start - bone), into(root - next))],
                        )
                    }
                    limit => {
                        let delta = (rest.conjugate() * wanted.conjugate() * child_new).normalize();
                        limit.constrain(delta.conjugate(), Vec3::ZERO)
                    }
                };
                child_new * inverse * rest.conjugate()
            }
            .normalize();
            let t = (world * w.conjugate()).normalize();
            if let Some(qi) = q.get_mut(i) {
                *qi = t;
            }
            if let Some(x) = p.get_mut(i) {
                *x = next - t.rotate(off);
            }
            (child_old, child_new) = (old, world);
        }
    }

    /// FABRIK without limits, as the definition states it; returns the iterations run. Leaves
    /// the positions.
    fn fabrik_free(&self, p: &mut [Vec3<R>], t: Vec3<R>, tolerance: R, cap: u32) -> u32 {
        let n = self.joints.len().saturating_sub(1);
        let root = p.first().copied().unwrap_or(Vec3::ZERO);
        let distance = |p: &[Vec3<R>]| p.get(n).map_or(R::ZERO, |&e| (e - t).length());
        let reach = (0..n).fold(R::ZERO, |s, i| s + self.offset(i).length());
        if (t - root).length() >= reach {
            for i in 0..n {
                let (Some(&pi), d) = (p.get(i), self.offset(i).length()) else { break };
                if let (Some(dir), Some(next)) = ((t - pi).try_normalize(), p.get_mut(i + 1)) {
                    *next = pi + dir * d;
                }
            }
            return 0;
        }
        let mut iterations = 0;
        while iterations < cap && distance(p) > tolerance {
            if let Some(e) = p.get_mut(n) {
                *e = t;
            }
            for i in (0..n).rev() {
                let (Some(&pi), Some(&next)) = (p.get(i), p.get(i + 1)) else { break };
                if let (Some(dir), Some(x)) = ((pi - next).try_normalize(), p.get_mut(i)) {
                    *x = next + dir * self.offset(i).length();
                }
            }
            if let Some(x) = p.first_mut() {
                *x = root;
            }
            for i in 0..n {
                let (Some(&pi), Some(&next)) = (p.get(i), p.get(i + 1)) else { break };
                if let (Some(dir), Some(x)) = ((next - pi).try_normalize(), p.get_mut(i + 1)) {
                    *x = pi + dir * self.offset(i).length();
                }
            }
            iterations += 1;
        }
        iterations
    }

    /// FABRIK with limits (both passes carry the joints' turns and respect the limits; a
    /// limited CCD pass when an iteration stalls); returns the iterations run. Leaves the
    /// positions and the turns.
    fn fabrik_limited(&self, p: &mut [Vec3<R>], q: &mut [Quat<R>], t: Vec3<R>, tolerance: R, cap: u32) -> u32 {
        let n = q.len();
        let root = p.first().copied().unwrap_or(Vec3::ZERO);
        let distance = |p: &[Vec3<R>]| p.get(n).map_or(R::ZERO, |&e| (e - t).length());
        self.sweep_limited(p, q);
        let mut iterations = 0;
        while iterations < cap && distance(p) > tolerance {
            let before = distance(p);
            if let Some(e) = p.get_mut(n) {
                *e = t;
            }
            self.sweep_back(p, q, root);
            if let Some(x) = p.first_mut() {
                *x = root;
            }
            self.sweep_limited(p, q);
            // Stalled: a limited CCD pass.
            if distance(p) > before * R::ratio(99, 100) {
                self.ccd_pass(p, q, t);
            }
            iterations += 1;
        }
        iterations
    }

    /// CCD; returns the iterations run. Leaves the positions and, with limits, the turns.
    fn ccd(&self, p: &mut [Vec3<R>], q: &mut [Quat<R>], t: Vec3<R>, tolerance: R, cap: u32) -> u32 {
        let n = q.len();
        if LIMITED {
            self.sweep_limited(p, q);
        }
        let mut iterations = 0;
        while iterations < cap && p.get(n).is_some_and(|&e| (e - t).length() > tolerance) {
            self.ccd_pass(p, q, t);
            iterations += 1;
        }
        iterations
    }

    /// One CCD iteration: joints `jn−1 … j0` in turn.
    fn ccd_pass(&self, p: &mut [Vec3<R>], q: &mut [Quat<R>], t: Vec3<R>) {
        let n = q.len();
        for i in (0..n).rev() {
            let (Some(&pi), Some(&e)) = (p.get(i), p.get(n)) else { break };
            let (Some(from), Some(to)) = ((e - pi).try_normalize(), (t - pi).try_normalize()) else {
                continue;
            };
            let arc = from_to(from, to);
            if !LIMITED {
                for x in p.get_mut(i + 1..).unwrap_or_default() {
                    *x = pi + arc.rotate(*x - pi);
                }
                continue;
            }
            let step = self.limited_step(q, i, arc, from);
            // The joint and its descendants turn rigidly; positions from the turns.
            for k in i..n {
                if let Some(qk) = q.get_mut(k) {
                    *qk = (step * *qk).normalize();
                }
                let (Some(&pk), qk) = (p.get(k), turn(q, k)) else { break };
                if let Some(x) = p.get_mut(k + 1) {
                    *x = pk + qk.rotate(self.offset(k));
                }
            }
        }
    }

    /// The model-space turn that a CCD step `arc` at chain joint `i` becomes under its limit;
    /// `from` is the unit direction from the joint to the effector.
    fn limited_step(&self, q: &[Quat<R>], i: usize, arc: Quat<R>, from: Vec3<R>) -> Quat<R> {
        let limit = self.limit(i);
        if limit.is_free() {
            return arc;
        }
        let current = (turn(q, i) * self.rotation(i)).normalize();
        let frame = (self.parent_model(q, i) * self.rest(i)).normalize();
        let wanted = (frame.conjugate() * arc * current).normalize();
        let r = current.conjugate().rotate(from);
        let world = (frame * limit.constrain(wanted, r)).normalize();
        (world * current.conjugate()).normalize()
    }
}

/// Turns the chain's interior joints rigidly about the line from `p0` to `pn` so that the sum
/// of their offsets from that line points towards the pole (nothing when the sum or the pole's
/// offset vanishes).
fn turn_to_pole<R: Real>(p: &mut [Vec3<R>], pole: Vec3<R>) {
    let (Some(&a), Some(&b)) = (p.first(), p.last()) else { return };
    let Some(axis) = (b - a).try_normalize() else { return };
    let interior = p.get(1..p.len().saturating_sub(1)).unwrap_or_default();
    let bend = interior.iter().fold(Vec3::ZERO, |s, &x| s + (x - a));
    let Some(angle) = roll_angle(bend, pole - a, axis) else { return };
    let spin = Quat::from_axis_angle(axis, angle);
    for x in p.get_mut(1..p.len().saturating_sub(1)).unwrap_or_default() {
        *x = a + spin.rotate(*x - a);
    }
}

/// Multiplies a chain's corrections (from [`IkChainJob`]) onto the local rotations of its
/// joints `j0 … jn−1` in a SoA pose ([`apply_correction`](super::apply_correction) for each).
///
/// # Errors
///
/// [`JobError::InputTooSmall`] when `corrections` is shorter than `chain.len() − 1`,
/// [`JobError::JointIndexOutOfRange`] when the pose has no element for one of the joints;
/// nothing is written on error.
pub fn apply_chain_corrections<R: Real>(
    pose: &mut [SoaTransform<R>],
    chain: &[u16],
    corrections: &[Quat<R>],
) -> Result<(), JobError> {
    let joints = chain.get(..chain.len().saturating_sub(1)).unwrap_or_default();
    if corrections.len() < joints.len() {
        return Err(JobError::InputTooSmall);
    }
    if joints.iter().any(|&j| usize::from(j) / 4 >= pose.len()) {
        return Err(JobError::JointIndexOutOfRange);
    }
    for (&j, &c) in joints.iter().zip(corrections) {
        super::apply_correction(pose, usize::from(j), c)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
