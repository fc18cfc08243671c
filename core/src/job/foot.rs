//! Foot placement on uneven ground: legs solved with two-bone IK so that the feet stand on the
//! caller's ground, the pelvis lowered on a spring so that the lowest foot can reach, planted
//! feet locked where they landed.
//!
//! The stage runs after the pose's model matrices ([`LocalToModelJob`] with no root: model
//! space), edits the local pose and recomputes the model matrices it changed. The clip's
//! ground is the plane `y = 0` of model space; `world` places model space in the world (a
//! rotation about +Y, a translation and a uniform scale `s`), where the ground is queried and
//! where locks are kept, so that a lock holds while root motion moves the character.
//!
//! # The algorithm
//!
//! Per run, with `w` the blend weight (below) and, per leg, the animated ankle `A` (model
//! space), its world position `Aw`, its clip height `h = A.y` and the leg's hip `H`:
//!
//! 1. **Weight.** `w` moves towards 1 (enabled) or 0 (disabled) by `dt / blend_time`
//!    ([`FootState::set_enabled`]); a settled run (below) sets it there at once. At `w = 0`
//!    no ground is asked, every lock is dropped and the pose is left as it is.
//! 2. **Planted.** A foot is planted when `h ≤ standing_height + contact_height` and the
//!    animated ankle moved at most `lock_speed × dt` in the world since the last run (a
//!    settled run has no last run: height alone decides).
//! 3. **Lock.** A free foot that is planted locks at `Aw`. A locked foot stays over its lock
//!    while it is planted and the lock is within the leg's length (`s × (|HK| + |KA|)`) of the
//!    animated hip (the distance measured at the animated ankle's height); otherwise it is
//!    released: the horizontal offset `lock − Aw` is kept and fades out over `release_time`
//!    by a smoothstep, the ankle going over `Aw + offset × (1 − smoothstep(t / release_time))`.
//!    A releasing foot that is planted again locks where it is. The point the ankle goes over
//!    is `P`: the lock, the releasing point, or `Aw` for a free foot.
//! 4. **Ground.** The ground is asked at `(P.x, Aw.y, P.z)`. No answer: the leg follows the
//!    animation (its ankle kept at `A` in model space) and its lock is dropped. Otherwise, with
//!    the hit's height `g` and normal `n` (taken into model space, `n_m`): the foot's tilt is
//!    the rotation about `Y × n_m` by `θ = min(angle(Y, n_m), max_tilt)`, and the ankle's
//!    world target is `(P.x, g + s·h / cos θ, P.z)`: at its clip height above the ground,
//!    measured across the tilted sole. For a leg with a toe, the ground is asked again under
//!    where the toe goes (the toe's animated offset from the ankle, tilted, from the target);
//!    when that ground plus the toe's clip height (`s × toe.y`) is above the placed toe, the
//!    target rises by the difference (a toe over a step's edge lifts the foot).
//! 5. **Pelvis.** The spring's target is the largest deficit of the legs: `min(0, min over
//!    legs with a target of (target_m.y − A.y))` in model space (`target_m` the target taken
//!    into model space). A critically damped spring follows it (exact steps of
//!    `x(t) = x* + (j0 + j1·t)·e^(−ωt)`, `j0 = x − x*`, `j1 = v + ω·j0`; `ω` such that a step
//!    from rest covers half its distance in `pelvis_half_life`); a settled run puts it on the
//!    target at rest. The pelvis's local translation gets `w × x` upwards in model space,
//!    converted into its parent's space, and the model matrices from the pelvis down are
//!    recomputed.
//! 6. **Legs.** Each leg with a target (or with a pelvis offset to undo) is solved by
//!    [`IkTwoBoneJob`] for the ankle goal `A + w × (target_m − A)` (`A` itself for a leg with
//!    no ground), with the pole the knee's direction away from the hip-ankle line (the knee
//!    stays in its animated plane; `forward` when the leg is straight); the corrections go
//!    onto the hip's and knee's local rotations and the leg is recomputed. The ankle's local
//!    rotation is then set so that its model rotation is `slerp(1, tilt, w) × R_A`, `R_A` its
//!    animated model rotation (the foot keeps its animated orientation under the new shin,
//!    then tilts to the ground), and the foot is recomputed.
//!
//! The locks and the spring live in [`FootState`] and a [`LegState`] per leg, owned by the
//! caller; [`FootState::reset`] makes the next run a *settled* one: spring on its target at
//! rest, weight at its end, locks taken from the current pose, no speed measured.
//!
//! Exact for rigid or uniformly scaled joints, like the IK it uses. `core/docs/foot-placement.md`
//! shows the stage in a frame and lists its settings.

use core::fmt;

use crate::job::ik::{apply_correction, IkTwoBoneJob};
use crate::job::{JobError, LocalToModelJob};
use crate::math::{ops, Mat4, Quat, SoaTransform, Vec3};
use crate::real::Real;
use crate::skeleton::SkeletonView;

mod ground;
mod state;

pub use ground::{Ground, GroundHit, GroundPlane};
pub use state::{FootLock, FootState, LegState};

use state::{spring_frequency, spring_step};

/// One leg: its joints, from the hip down, and the ankle's standing height.
///
/// `knee` must descend from `hip`, `ankle` from `knee` and `toe` from `ankle` (joints between
/// them are allowed: a twist joint, say), and `hip` from the job's pelvis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FootLeg<R> {
    /// The hip (thigh) joint: the IK chain's start.
    pub hip: usize,
    /// The knee (shin) joint: the IK chain's middle.
    pub knee: usize,
    /// The ankle (foot) joint: the IK chain's end, placed on the ground and tilted.
    pub ankle: usize,
    /// The toe joint, when the foot has one: the ground is also asked under it.
    pub toe: Option<usize>,
    /// The ankle's height above the clip's ground when the foot stands flat, model-space
    /// units: an ankle above it by more than [`FootSettings::contact_height`] is not planted.
    pub standing_height: R,
}

/// The stage's settings, shared by all legs. Times in seconds, world speeds in world units per
/// second, heights in model-space units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FootSettings<R> {
    /// Time in which the pelvis covers half of a change of its target (≥ 0; 0: no
    /// smoothing).
    pub pelvis_half_life: R,
    /// World speed of the animated ankle under which a foot can be planted (≥ 0).
    pub lock_speed: R,
    /// Height above [`FootLeg::standing_height`] under which a foot can be planted.
    pub contact_height: R,
    /// Time over which a released foot returns to the animation (≥ 0).
    pub release_time: R,
    /// Largest tilt of a foot towards the ground's normal, radians, in `[0, π/2)`.
    pub max_tilt: R,
    /// Time over which enabling or disabling ramps the effect in or out (≥ 0).
    pub blend_time: R,
    /// The character's forward direction, model space: where a straight leg's knee bends to.
    /// Must not be zero.
    pub forward: Vec3<R>,
}

impl<R: Real> FootSettings<R> {
    /// Settings for a human-sized character: pelvis half-life 0.1 s, lock speed 0.2 m/s,
    /// contact height 0.02, release over 0.15 s, tilt up to 30°, blend over 0.25 s, forward
    /// +Z.
    #[must_use]
    pub fn new() -> Self {
        FootSettings {
            pelvis_half_life: R::ratio(1, 10),
            lock_speed: R::ratio(1, 5),
            contact_height: R::ratio(1, 50),
            release_time: R::ratio(3, 20),
            max_tilt: R::FRAC_PI_2 / R::from_i32(3),
            blend_time: R::ratio(1, 4),
            forward: Vec3::Z,
        }
    }

    /// `Ok` when every setting is finite and in its range.
    fn check(&self) -> Result<(), JobError> {
        let non_negative = |v: R| v.is_finite() && v >= R::ZERO;
        let ok = non_negative(self.pelvis_half_life)
            && non_negative(self.lock_speed)
            && self.contact_height.is_finite()
            && non_negative(self.release_time)
            && non_negative(self.max_tilt)
            && self.max_tilt < R::FRAC_PI_2
            && non_negative(self.blend_time)
            && self.forward.is_finite();
        if !ok {
            return Err(JobError::InvalidTransform);
        }
        if self.forward.try_normalize().is_none() {
            return Err(JobError::InvalidAxis);
        }
        Ok(())
    }
}

impl<R: Real> Default for FootSettings<R> {
    fn default() -> Self {
        Self::new()
    }
}

/// Places the feet of a pose on the ground (see the [module](self) for the method).
///
/// # Examples
///
/// A leg hanging from a pelvis 1 m up, its ankle 0.1 m above the clip's ground, stands on a
/// floor raised by 0.2 m:
///
/// ```
/// use sinew::job::foot::{FootLeg, FootPlacementJob, FootSettings, FootState, GroundPlane, LegState};
/// use sinew::job::LocalToModelJob;
/// use sinew::math::{Mat4, Quat, SoaTransform, Transform, Vec3};
/// use sinew::skeleton::{Skeleton, NO_PARENT};
///
/// let at = |x: f32, y: f32, z: f32, bend: f32| Transform::new(Vec3::new(x, y, z), Quat::from_axis_angle(Vec3::X, bend), Vec3::ONE);
/// let rest = [at(0.0, 1.0, 0.0, 0.0), at(0.0, 0.0, 0.0, -0.3), at(0.0, -0.45, 0.0, 0.6), at(0.0, -0.45, 0.0, -0.3)];
/// let skeleton = Skeleton::<f32, 1>::new(&[NO_PARENT, 0, 1, 2], &rest, &["pelvis", "hip", "knee", "ankle"])?;
/// let mut pose = [SoaTransform::IDENTITY];
/// pose.copy_from_slice(skeleton.rest_pose());
/// let mut model = [Mat4::IDENTITY; 4];
/// LocalToModelJob::new(skeleton.view(), &pose, &mut model).run()?;
/// let standing = model[3].translation().y; // the ankle's height above the clip's ground
///
/// let legs = [FootLeg { hip: 1, knee: 2, ankle: 3, toe: None, standing_height: standing }];
/// let (mut state, mut leg_states) = (FootState::new(true), [LegState::new()]);
/// FootPlacementJob {
///     skeleton: skeleton.view(),
///     pelvis: 0,
///     legs: &legs,
///     settings: FootSettings::new(),
///     state: &mut state,
///     leg_states: &mut leg_states,
///     world: Mat4::IDENTITY,
///     dt: 0.0,
///     pose: &mut pose,
///     model: &mut model,
///     ground: &mut GroundPlane::flat(0.2),
/// }
/// .run()?;
/// assert!((model[3].translation().y - (0.2 + standing)).abs() < 1e-4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FootPlacementJob<'a, R: Real> {
    /// The hierarchy.
    pub skeleton: SkeletonView<'a, R>,
    /// The pelvis joint, which the legs' hips descend from; lowered to let the feet reach.
    pub pelvis: usize,
    /// The legs.
    pub legs: &'a [FootLeg<R>],
    /// The settings.
    pub settings: FootSettings<R>,
    /// The pelvis spring, the blend weight, the enabled flag.
    pub state: &'a mut FootState<R>,
    /// One state per leg (at least `legs.len()`), in the order of `legs`.
    pub leg_states: &'a mut [LegState<R>],
    /// Model space to world space: a rotation about +Y, a translation and a uniform scale.
    pub world: Mat4<R>,
    /// Seconds since the last run (≥ 0).
    pub dt: R,
    /// The local pose, at least `skeleton.num_soa_joints()` elements; the pelvis's
    /// translation and the legs' rotations are edited.
    pub pose: &'a mut [SoaTransform<R>],
    /// The pose's model matrices (from [`LocalToModelJob`] with no root), at least
    /// `skeleton.num_joints()`; the edited joints' subtrees are recomputed.
    pub model: &'a mut [Mat4<R>],
    /// The ground query.
    pub ground: &'a mut dyn Ground<R>,
}

impl<R: Real> fmt::Debug for FootPlacementJob<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FootPlacementJob")
            .field("pelvis", &self.pelvis)
            .field("legs", &self.legs)
            .field("settings", &self.settings)
            .field("state", &self.state)
            .field("world", &self.world)
            .field("dt", &self.dt)
            .finish_non_exhaustive()
    }
}

/// Relative tolerance of the checks that `world` has no tilt.
const UPRIGHT_TOLERANCE: i32 = 1000;

/// `world` and what the stage derives from it.
struct Frame<R> {
    world: Mat4<R>,
    inverse: Mat4<R>,
    scale: R,
}

impl<R: Real> Frame<R> {
    /// `None` unless `world` is finite and invertible, its +Y axis points up and its X and Z
    /// axes are horizontal (within `scale / UPRIGHT_TOLERANCE`).
    fn new(world: Mat4<R>) -> Option<Self> {
        if !world.is_finite() {
            return None;
        }
        let c = &world.cols;
        let scale = Vec3::new(c[1][0], c[1][1], c[1][2]).length();
        let tol = scale / R::from_i32(UPRIGHT_TOLERANCE);
        let upright =
            c[1][1] > R::ZERO && c[1][0].abs() + c[1][2].abs() <= tol && c[0][1].abs() <= tol && c[2][1].abs() <= tol;
        if !upright {
            return None;
        }
        Some(Frame { world, inverse: world.inverse()?, scale })
    }
}

/// The rotation of a model matrix (Gram-Schmidt on its first two columns), `None` when they
/// are zero or parallel.
fn rotation_of<R: Real>(m: &Mat4<R>) -> Option<Quat<R>> {
    let col = |c: usize| Vec3::new(m.cols[c][0], m.cols[c][1], m.cols[c][2]);
    let x = col(0).try_normalize()?;
    let y = col(1);
    let y = (y - x * x.dot(y)).try_normalize()?;
    Some(Quat::from_mat3_cols([x, y, x.cross(y)]))
}

/// `t` clamped into `[0, 1]`, eased: `t²(3 − 2t)`.
fn smoothstep<R: Real>(t: R) -> R {
    let t = t.clamp(R::ZERO, R::ONE);
    t * t * (R::from_i32(3) - R::TWO * t)
}

/// `v` with its Y set to 0.
fn horizontal<R: Real>(v: Vec3<R>) -> Vec3<R> {
    Vec3::new(v.x, R::ZERO, v.z)
}

/// A model matrix of a joint the validation checked (identity past the end, never reached).
fn matrix<R: Real>(model: &[Mat4<R>], joint: usize) -> Mat4<R> {
    model.get(joint).copied().unwrap_or(Mat4::IDENTITY)
}

/// `Ok` when a ground hit is finite and its normal is not zero.
fn check_hit<R: Real>(hit: &GroundHit<R>) -> Result<(), JobError> {
    if !hit.height.is_finite() || !hit.normal.is_finite() {
        return Err(JobError::InvalidTransform);
    }
    if hit.normal.try_normalize().is_none() {
        return Err(JobError::InvalidAxis);
    }
    Ok(())
}

/// What every leg's planning reads.
struct Plan<'p, R> {
    model: &'p [Mat4<R>],
    frame: &'p Frame<R>,
    settings: &'p FootSettings<R>,
    dt: R,
    settle: bool,
}

impl<R: Real> Plan<'_, R> {
    /// Steps 2 to 4 of the method for leg `index`: its next lock, its ground, its target and
    /// tilt, into `ls`'s working fields (its lock and history stay as they are). Asks nothing
    /// and targets nothing when `query` is false.
    fn leg(
        &self,
        index: usize,
        leg: &FootLeg<R>,
        ls: &mut LegState<R>,
        ground: &mut dyn Ground<R>,
        query: bool,
    ) -> Result<(), JobError> {
        let (s, frame) = (self.settings, self.frame);
        let (hip, knee, ankle) =
            (matrix(self.model, leg.hip), matrix(self.model, leg.knee), matrix(self.model, leg.ankle));
        let a = ankle.translation();
        let aw = frame.world.transform_point3(a);
        ls.animated = aw;
        ls.next_lock = FootLock::Free;
        ls.hit = None;
        ls.target = None;
        ls.tilt = Quat::IDENTITY;
        if !query {
            return Ok(());
        }

        // Planted: low enough, and slow enough since the last run.
        let previous = if self.settle { None } else { ls.previous };
        let slow = previous.is_none_or(|p| (aw - p).length() <= s.lock_speed * self.dt);
        let planted = slow && a.y <= leg.standing_height + s.contact_height;
        let hip_w = frame.world.transform_point3(hip.translation());
        let reach =
            frame.scale * ((knee.translation() - hip.translation()).length() + (a - knee.translation()).length());
        let reachable = |p: Vec3<R>| (Vec3::new(p.x, aw.y, p.z) - hip_w).length() <= reach;

        let lock = if self.settle { FootLock::Free } else { ls.lock };
        let (next, over) = match lock {
            FootLock::Locked(at) if planted && reachable(at) => (FootLock::Locked(at), at),
            FootLock::Locked(at) => (FootLock::Releasing { offset: horizontal(at - aw), elapsed: R::ZERO }, at),
            FootLock::Releasing { offset, elapsed } => {
                let t = elapsed + self.dt;
                if t < s.release_time {
                    let p = aw + offset * (R::ONE - smoothstep(t / s.release_time));
                    if planted && reachable(p) {
                        (FootLock::Locked(p), p)
                    } else {
                        (FootLock::Releasing { offset, elapsed: t }, p)
                    }
                } else if planted {
                    (FootLock::Locked(aw), aw)
                } else {
                    (FootLock::Free, aw)
                }
            }
            FootLock::Free if planted => (FootLock::Locked(aw), aw),
            FootLock::Free => (FootLock::Free, aw),
        };

        let Some(hit) = ground.ground(index, Vec3::new(over.x, aw.y, over.z)) else {
            return Ok(());
        };
        check_hit(&hit)?;
        // The tilt: towards the normal, in model space, up to the largest angle.
        let n = frame.inverse.transform_vector3(hit.normal).try_normalize().ok_or(JobError::InvalidAxis)?;
        let axis = Vec3::new(n.z, R::ZERO, -n.x);
        let angle = ops::atan2(axis.length(), n.y).min(s.max_tilt);
        let tilt = match axis.try_normalize() {
            Some(axis) => Quat::from_axis_angle(axis, angle),
            None => Quat::IDENTITY,
        };
        let cos = ops::cos(angle);
        let mut target = Vec3::new(over.x, hit.height + frame.scale * a.y / cos, over.z);

        if let Some(toe) = leg.toe {
            let t = matrix(self.model, toe).translation();
            let placed = frame.inverse.transform_point3(target) + tilt.rotate(t - a);
            let placed = frame.world.transform_point3(placed);
            if let Some(under) = ground.ground(index, placed) {
                check_hit(&under)?;
                let rise = under.height + frame.scale * t.y - placed.y;
                if rise > R::ZERO {
                    target.y += rise;
                }
            }
        }
        if !target.is_finite() {
            return Err(JobError::InvalidTransform);
        }
        ls.next_lock = next;
        ls.hit = Some(hit);
        ls.target = Some(target);
        ls.tilt = tilt;
        Ok(())
    }
}

impl<R: Real> FootPlacementJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// [`JobError::InputTooSmall`] when `pose` has fewer than `num_soa_joints()` elements,
    /// [`JobError::OutputTooSmall`] when `model` has fewer than `num_joints()` matrices,
    /// [`JobError::ContextTooSmall`] when `leg_states` is shorter than `legs`,
    /// [`JobError::JointIndexOutOfRange`] when the pelvis or a leg's joint is not a joint,
    /// [`JobError::InvalidRange`] when a leg is not a chain (knee under hip, ankle under knee,
    /// toe under ankle, hip under the pelvis, each a different joint) or two legs share a hip
    /// or one's hip is under another's,
    /// [`JobError::InvalidTransform`] when `dt` or a setting is NaN, infinite or out of its
    /// range, a standing height is not finite, `world` is not finite, not invertible or tilted,
    /// or a model matrix the stage reads (each leg's joints and the ankle's parent, the
    /// pelvis's parent) is not finite or has a zero column (or, for the pelvis's parent, is
    /// singular), and [`JobError::InvalidAxis`] when `settings.forward` is zero.
    pub fn validate(&self) -> Result<(), JobError> {
        let sk = &self.skeleton;
        let n = sk.num_joints();
        if self.pose.len() < sk.num_soa_joints() {
            return Err(JobError::InputTooSmall);
        }
        if self.model.len() < n {
            return Err(JobError::OutputTooSmall);
        }
        if self.leg_states.len() < self.legs.len() {
            return Err(JobError::ContextTooSmall);
        }
        let in_range = |leg: &FootLeg<R>| leg.hip < n && leg.knee < n && leg.ankle < n && leg.toe.is_none_or(|t| t < n);
        if self.pelvis >= n || !self.legs.iter().all(in_range) {
            return Err(JobError::JointIndexOutOfRange);
        }
        let below = |joint: usize, above: usize| joint != above && sk.is_in_subtree(joint, above);
        for (i, leg) in self.legs.iter().enumerate() {
            let chain = below(leg.hip, self.pelvis)
                && below(leg.knee, leg.hip)
                && below(leg.ankle, leg.knee)
                && leg.toe.is_none_or(|t| below(t, leg.ankle));
            let apart = self.legs.iter().enumerate().all(|(j, other)| j == i || !sk.is_in_subtree(leg.hip, other.hip));
            if !chain || !apart {
                return Err(JobError::InvalidRange);
            }
        }
        self.settings.check()?;
        if !self.dt.is_finite() || self.dt < R::ZERO || Frame::new(self.world).is_none() {
            return Err(JobError::InvalidTransform);
        }
        let usable = |j: usize| self.model.get(j).is_some_and(|m| m.is_finite() && rotation_of(m).is_some());
        for leg in self.legs {
            let ankle_parent = sk.parent(leg.ankle).unwrap_or(leg.knee);
            let ok = leg.standing_height.is_finite()
                && usable(leg.hip)
                && usable(leg.knee)
                && usable(leg.ankle)
                && usable(ankle_parent)
                && leg.toe.is_none_or(usable);
            if !ok {
                return Err(JobError::InvalidTransform);
            }
        }
        if let Some(p) = sk.parent(self.pelvis) {
            if !self.model.get(p).is_some_and(|m| m.is_finite() && m.inverse().is_some()) {
                return Err(JobError::InvalidTransform);
            }
        }
        Ok(())
    }

    /// Validates, asks the ground, then edits the pose and its model matrices and steps the
    /// state.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate), and [`JobError::InvalidTransform`] when the ground
    /// answers a NaN or infinite hit (or one that puts a target out of range),
    /// [`JobError::InvalidAxis`] when it answers a zero normal. Nothing is written to the pose,
    /// the model matrices, `state` or the legs' locks and history then (the legs' last hits
    /// and targets are unspecified).
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let frame = Frame::new(self.world).ok_or(JobError::InvalidTransform)?;
        let s = self.settings;
        let settle = self.state.settle;
        let end = if self.state.enabled { R::ONE } else { R::ZERO };
        let weight = if settle || s.blend_time <= R::ZERO {
            end
        } else {
            let step = self.dt / s.blend_time;
            let w = self.state.weight;
            if w < end {
                (w + step).min(end)
            } else {
                (w - step).max(end)
            }
        };

        // Ask the ground for every leg before writing anything.
        let plan = Plan { model: self.model, frame: &frame, settings: &s, dt: self.dt, settle };
        for (i, (leg, ls)) in self.legs.iter().zip(self.leg_states.iter_mut()).enumerate() {
            plan.leg(i, leg, ls, self.ground, weight > R::ZERO)?;
        }

        // Commit the locks; the pelvis spring follows the largest deficit.
        let mut deficit = R::ZERO;
        for (leg, ls) in self.legs.iter().zip(self.leg_states.iter_mut()) {
            ls.lock = ls.next_lock;
            ls.previous = Some(ls.animated);
            if let Some(t) = ls.target {
                let dy = frame.inverse.transform_point3(t).y - matrix(self.model, leg.ankle).translation().y;
                deficit = deficit.min(dy);
            }
        }
        // From weight 0 the spring starts on its target: the weight hides the jump.
        let (offset, velocity) = if settle || self.state.weight <= R::ZERO || s.pelvis_half_life <= R::ZERO {
            (deficit, R::ZERO)
        } else {
            let omega = spring_frequency(s.pelvis_half_life);
            spring_step(self.state.offset, self.state.velocity, deficit, omega, self.dt)
        };
        *self.state = FootState { offset, velocity, weight, enabled: self.state.enabled, settle: false };
        if weight <= R::ZERO {
            return Ok(());
        }

        let sk = self.skeleton;
        let to_model = |pose: &[SoaTransform<R>], model: &mut [Mat4<R>], from: usize| {
            LocalToModelJob { skeleton: sk, root: None, input: pose, output: model, from: Some(from), to: None }.run()
        };
        let lowered = weight * offset;
        let drop = Vec3::new(R::ZERO, lowered, R::ZERO);
        if lowered != R::ZERO {
            let local = match sk.parent(self.pelvis) {
                Some(p) => matrix(self.model, p).inverse().ok_or(JobError::InvalidTransform)?.transform_vector3(drop),
                None => drop,
            };
            let soa = self.pose.get_mut(self.pelvis / 4).ok_or(JobError::JointIndexOutOfRange)?;
            let lane = self.pelvis % 4;
            soa.translation.set_lane(lane, soa.translation.lane(lane) + local);
            to_model(self.pose, self.model, self.pelvis)?;
        }

        let forward = s.forward.normalize_or_zero();
        for (leg, ls) in self.legs.iter().zip(self.leg_states.iter()) {
            if ls.target.is_none() && lowered == R::ZERO {
                continue;
            }
            let (hip_m, knee_m, ankle_m) =
                (matrix(self.model, leg.hip), matrix(self.model, leg.knee), matrix(self.model, leg.ankle));
            let (hip, knee, ankle) = (hip_m.translation(), knee_m.translation(), ankle_m.translation());
            let animated = ankle - drop;
            let goal = match ls.target {
                Some(t) => animated + (frame.inverse.transform_point3(t) - animated) * weight,
                None => animated,
            };
            // The knee stays in its animated plane: the pole is its direction off the hip-ankle
            // line, the hinge the normal of that plane (in the knee's space, for a straight leg).
            let line = (ankle - hip).try_normalize().unwrap_or(-Vec3::Y);
            let off_line = |v: Vec3<R>| (v - line * v.dot(line)).try_normalize();
            let pole = off_line(knee - hip).or_else(|| off_line(forward)).unwrap_or(Vec3::Z);
            let hinge = line.cross(pole).try_normalize().unwrap_or(Vec3::X);
            let knee_rot = rotation_of(&knee_m).ok_or(JobError::InvalidTransform)?;
            let (mut start, mut mid, mut reached) = (Quat::IDENTITY, Quat::IDENTITY, false);
            IkTwoBoneJob {
                target: goal,
                pole_vector: pole,
                mid_axis: knee_rot.conjugate().rotate(hinge),
                twist_angle: R::ZERO,
                soften: R::ONE,
                weight: R::ONE,
                start_joint: &hip_m,
                mid_joint: &knee_m,
                end_joint: &ankle_m,
                start_correction: &mut start,
                mid_correction: &mut mid,
                reached: &mut reached,
            }
            .run()?;
            apply_correction(self.pose, leg.hip, start)?;
            apply_correction(self.pose, leg.knee, mid)?;
            to_model(self.pose, self.model, leg.hip)?;

            // The foot: its animated model rotation, tilted by the weighted tilt.
            let animated_rot = rotation_of(&ankle_m).ok_or(JobError::InvalidTransform)?;
            let wanted = Quat::IDENTITY.slerp(ls.tilt, weight) * animated_rot;
            let parent = sk.parent(leg.ankle).unwrap_or(leg.knee);
            let parent_rot = rotation_of(&matrix(self.model, parent)).ok_or(JobError::InvalidTransform)?;
            let soa = self.pose.get_mut(leg.ankle / 4).ok_or(JobError::JointIndexOutOfRange)?;
            soa.rotation.set_lane(leg.ankle % 4, (parent_rot.conjugate() * wanted).normalize());
            to_model(self.pose, self.model, leg.ankle)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
