//! Inverse kinematics: two-bone chains (legs, arms) and aiming (heads, eyes, weapons), as jobs
//! producing local-space rotation corrections applied after blending.
//!
//! The jobs read model-space matrices (from [`LocalToModelJob`](crate::job::LocalToModelJob))
//! and write quaternions to multiply onto the joints' *local* rotations,
//! `local.rotation = local.rotation · correction` ([`apply_correction`]). Then a
//! `LocalToModelJob` with `from` = the first corrected joint recomputes that subtree only.
//!
//! The corrections are exact for joints whose model matrices are rigid or uniformly scaled; a
//! non-uniform scale on the corrected joints skews them.
//!
//! # Two-bone IK
//!
//! With `A`, `B`, `C` the start, mid and end joint positions, `a = |AB|`, `b = |BC|` and the
//! target `T` at distance `d = |AT|`: the mid joint turns (about the normal of the plane
//! `ABC`, or `mid_axis` when the chain is straight) so that `|AC| = d` (clamped into
//! `[|a − b|, a + b]`, after softening), then the start joint turns `C` onto the line `AT` and
//! spins the chain about `AT` so that `B` lies in the half-plane of `AT` and the pole vector.
//! No trigonometry is involved except for that spin.
//!
//! # Aim
//!
//! Turns one joint so that the ray from `offset` along `forward` (both in the joint's space)
//! passes through the target, then spins it about the joint-to-target axis so that `up` lies
//! in the half-plane of that axis and the pole vector.
//!
//! # Chains
//!
//! [`IkChainJob`] solves longer chains with FABRIK or CCD, with optional joint limits (hinges,
//! swing cones with twist) and a pole; [`IkLookChainJob`] spreads an aim over a chain (spine,
//! neck, head) by weights and maximum angles. Their rules are in their documentation
//! and `core/docs/ik.md`.

use crate::job::JobError;
use crate::math::{ops, Mat4, Quat, SoaTransform, Vec3};
use crate::real::Real;

mod chain;
mod look;

pub use chain::{apply_chain_corrections, ChainReport, ChainSolver, IkChainJob, JointLimit, MAX_CHAIN_JOINTS};
pub use look::{IkLookChainJob, LookReport, LOOK_WALKS};

/// The rotation taking direction `from` onto direction `to` (both unit) by the shortest arc;
/// a half turn about an axis perpendicular to `from` when they are opposite.
fn from_to<R: Real>(from: Vec3<R>, to: Vec3<R>) -> Quat<R> {
    let d = from.dot(to);
    if d < -R::ONE + R::ratio(1, 1_000_000) {
        // Opposite: any perpendicular axis; pick the one from the smallest component.
        let other = if from.x.abs() < from.y.abs() && from.x.abs() < from.z.abs() {
            Vec3::X
        } else if from.y.abs() < from.z.abs() {
            Vec3::Y
        } else {
            Vec3::Z
        };
        let axis = from.cross(other).normalize_or_zero();
        return Quat::new(axis.x, axis.y, axis.z, R::ZERO);
    }
    let c = from.cross(to);
    if d >= R::ZERO {
        return Quat::new(c.x, c.y, c.z, R::ONE + d).normalize();
    }
    // Beyond 90° the half-angle form loses precision (1 + d is small): use the angle itself.
    match c.try_normalize() {
        Some(axis) => Quat::from_axis_angle(axis, ops::atan2(c.length(), d)),
        None => Quat::new(c.x, c.y, c.z, R::ONE + d).normalize(),
    }
}

/// The rotation part of a model matrix (its columns normalized), or `None` when a column is
/// zero or not finite.
fn rotation_of<R: Real>(m: &Mat4<R>) -> Option<Quat<R>> {
    let col = |i: usize| Vec3::new(m.cols[i][0], m.cols[i][1], m.cols[i][2]).try_normalize();
    Some(Quat::from_mat3_cols([col(0)?, col(1)?, col(2)?]))
}

/// A model-space rotation `q` seen from a joint whose model rotation is `joint`: the local
/// correction `joint⁻¹ · q · joint`.
fn to_local<R: Real>(q: Quat<R>, joint: Quat<R>) -> Quat<R> {
    (joint.conjugate() * q * joint).normalize()
}

/// `nlerp(identity, q, w)` for `w` in `[0, 1]` (`q` taken in the `w ≥ 0` hemisphere).
fn weighted<R: Real>(q: Quat<R>, w: R) -> Quat<R> {
    let w = w.max(R::ZERO).min(R::ONE);
    let q = if q.w < R::ZERO { -q } else { q };
    if w >= R::ONE {
        return q;
    }
    if w <= R::ZERO {
        return Quat::IDENTITY;
    }
    Quat::new(q.x * w, q.y * w, q.z * w, R::ONE + (q.w - R::ONE) * w).normalize()
}

/// The signed angle from `a` to `b` about the unit `axis`, after projecting both onto the
/// plane perpendicular to it; `None` when a projection vanishes.
fn spin_angle<R: Real>(a: Vec3<R>, b: Vec3<R>, axis: Vec3<R>) -> Option<R> {
    let pa = a - axis * a.dot(axis);
    let pb = b - axis * b.dot(axis);
    let tiny = R::ratio(1, 1_000_000);
    if pa.length_squared() <= tiny * tiny || pb.length_squared() <= tiny * tiny {
        return None;
    }
    Some(ops::atan2(axis.dot(pa.cross(pb)), pa.dot(pb)))
}

fn finite_vec<R: Real>(v: Vec3<R>) -> bool {
    v.is_finite()
}

/// Relative tolerance of [`IkTwoBoneJob::reached`]: the solved start-to-end distance is within
/// `chain length / 10 000` of the start-to-target distance.
pub const REACH_TOLERANCE_RATIO: i32 = 10_000;

/// Two-bone IK (like ozz's `IKTwoBoneJob`): corrections for a start and a mid joint so that the
/// end joint reaches a target.
///
/// # Examples
///
/// A straight arm of two 1 m bones along +X reaches for a point above its elbow, the elbow
/// pointing up:
///
/// ```
/// use sinew::job::ik::{apply_correction, IkTwoBoneJob};
/// use sinew::job::LocalToModelJob;
/// use sinew::math::{Mat4, Quat, SoaTransform, Transform, Vec3};
/// use sinew::skeleton::{Skeleton, NO_PARENT};
///
/// let bone = Transform::new(Vec3::X, Quat::IDENTITY, Vec3::ONE);
/// let names = ["shoulder", "elbow", "wrist"];
/// let arm = Skeleton::<f32, 1>::new(&[NO_PARENT, 0, 1], &[Transform::IDENTITY, bone, bone], &names)?;
/// // Model matrices of the joints from `from` down (all with `None`).
/// let to_model = |local: &[SoaTransform<f32>], model: &mut [Mat4<f32>], from| {
///     LocalToModelJob { skeleton: arm.view(), root: None, input: local, output: model, from, to: None }.run()
/// };
/// let mut local = [SoaTransform::IDENTITY];
/// local.copy_from_slice(arm.rest_pose());
/// let mut model = [Mat4::IDENTITY; 3];
/// to_model(&local, &mut model, None)?;
///
/// let target = Vec3::new(1.0, 1.0, 0.0);
/// let (mut shoulder, mut elbow, mut reached) = (Quat::IDENTITY, Quat::IDENTITY, false);
/// IkTwoBoneJob {
///     target,
///     pole_vector: Vec3::Y,  // where the elbow should point
///     mid_axis: Vec3::Z,     // the elbow's hinge, to bend a straight arm
///     twist_angle: 0.0,
///     soften: 1.0,           // no softening
///     weight: 1.0,
///     start_joint: &model[0],
///     mid_joint: &model[1],
///     end_joint: &model[2],
///     start_correction: &mut shoulder,
///     mid_correction: &mut elbow,
///     reached: &mut reached,
/// }
/// .run()?;
/// assert!(reached);
///
/// // Apply the corrections to the local pose, then update the arm from the shoulder down.
/// apply_correction(&mut local, 0, shoulder)?;
/// apply_correction(&mut local, 1, elbow)?;
/// to_model(&local, &mut model, Some(0))?;
/// assert!((model[2].translation() - target).length() < 1e-5);
/// assert!(model[1].translation().y > 0.0); // the elbow is up, towards the pole
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct IkTwoBoneJob<'a, R: Real> {
    /// Target position, model space.
    pub target: Vec3<R>,
    /// Direction the mid joint should point to, model space (a knee's forward, an elbow's
    /// back). Zero, or parallel to the start-to-target axis: no spin is applied.
    pub pole_vector: Vec3<R>,
    /// The mid joint's bending axis in its own space (a knee's hinge), used to pick the bend
    /// direction when the chain is straight. Must be non-zero.
    pub mid_axis: Vec3<R>,
    /// Extra rotation about the start-to-target axis, radians.
    pub twist_angle: R,
    /// Softening, in `[0, 1]` (clamped): 1 disables it; below 1, target distances beyond
    /// `soften × (a + b)` are eased so the chain never snaps straight:
    /// `d' = da + ds · x / (1 + x)`, `x = (d − da) / ds`, `da = soften · (a + b)`,
    /// `ds = (a + b) − da`.
    pub soften: R,
    /// Blend of the correction, in `[0, 1]` (clamped): 0 leaves the chain, 1 solves fully.
    pub weight: R,
    /// Model matrix of the start joint (shoulder, hip).
    pub start_joint: &'a Mat4<R>,
    /// Model matrix of the mid joint (elbow, knee).
    pub mid_joint: &'a Mat4<R>,
    /// Model matrix of the end joint (wrist, ankle).
    pub end_joint: &'a Mat4<R>,
    /// Output: the start joint's local correction.
    pub start_correction: &'a mut Quat<R>,
    /// Output: the mid joint's local correction.
    pub mid_correction: &'a mut Quat<R>,
    /// Output: true when the full-weight solution reaches the target: the target's distance
    /// from the start joint, after softening and clamping into `[|a − b|, a + b]`, changed by at
    /// most `(a + b) / REACH_TOLERANCE_RATIO` (false for a target out of reach or softened, or a
    /// degenerate chain), whatever `weight` is. The solution's direction is exact, so a
    /// reached target is hit up to rounding (measured in the tests).
    pub reached: &'a mut bool,
}

impl<R: Real> IkTwoBoneJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// [`JobError::InvalidAxis`] when `mid_axis` is zero, [`JobError::InvalidTransform`] when a
    /// vector, a scalar or a matrix is NaN or infinite, or a joint matrix has a zero column.
    pub fn validate(&self) -> Result<(), JobError> {
        let finite = finite_vec(self.target)
            && finite_vec(self.pole_vector)
            && finite_vec(self.mid_axis)
            && self.twist_angle.is_finite()
            && self.soften.is_finite()
            && self.weight.is_finite()
            && self.start_joint.is_finite()
            && self.mid_joint.is_finite()
            && self.end_joint.is_finite();
        if !finite || rotation_of(self.start_joint).is_none() || rotation_of(self.mid_joint).is_none() {
            return Err(JobError::InvalidTransform);
        }
        if self.mid_axis.try_normalize().is_none() {
            return Err(JobError::InvalidAxis);
        }
        Ok(())
    }

    /// Validates, then solves.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let (start_rot, mid_rot) = match (rotation_of(self.start_joint), rotation_of(self.mid_joint)) {
            (Some(s), Some(m)) => (s, m),
            _ => return Err(JobError::InvalidTransform),
        };
        let a_pos = self.start_joint.translation();
        let b_pos = self.mid_joint.translation();
        let c_pos = self.end_joint.translation();
        let u = a_pos - b_pos;
        let v = c_pos - b_pos;
        let (a, b) = (u.length(), v.length());
        let chain = a + b;
        let tiny = R::ratio(1, 1_000_000);
        let (Some(u_dir), Some(v_dir)) = (u.try_normalize(), v.try_normalize()) else {
            // A bone of zero length: nothing to bend.
            *self.start_correction = Quat::IDENTITY;
            *self.mid_correction = Quat::IDENTITY;
            *self.reached = false;
            return Ok(());
        };
        let to_target = self.target - a_pos;
        let d0 = to_target.length();

        // Softened and clamped target distance.
        let soften = self.soften.max(R::ZERO).min(R::ONE);
        let da = chain * soften;
        let ds = chain - da;
        let mut d = d0;
        if d > da && ds > tiny {
            let x = (d - da) / ds;
            d = da + ds * x / (R::ONE + x);
        }
        let d = d.max((a - b).abs()).min(chain);

        // Mid joint: the interior angle at B that makes |AC| = d.
        let cos_b = ((a * a + b * b - d * d) / (R::TWO * a * b)).clamp(-R::ONE, R::ONE);
        let sin_b = (R::ONE - cos_b * cos_b).max(R::ZERO).sqrt();
        let cross = u_dir.cross(v_dir);
        let normal = if cross.length_squared() > R::ratio(1, 1_000_000) {
            cross.normalize_or_zero()
        } else {
            // Straight (or folded) chain: bend about the hinge, made perpendicular to the bone.
            let hinge = mid_rot.rotate(self.mid_axis.normalize_or_zero());
            (hinge - u_dir * hinge.dot(u_dir)).try_normalize().unwrap_or_else(|| {
                u_dir.cross(if u_dir.x.abs() < R::HALF { Vec3::X } else { Vec3::Y }).normalize_or_zero()
            })
        };
        // An orthonormal pair (û, side) keeps |v_new| = b even when the normal is imprecise.
        let side = normal.cross(u_dir).try_normalize().unwrap_or(v_dir);
        let v_new = (u_dir * cos_b + side * sin_b) * b;
        let mid_model = from_to(v_dir, v_new.normalize_or_zero());
        let c_new = b_pos + v_new;

        // Start joint: bring the end onto the target line, then spin towards the pole.
        let t_dir = to_target.try_normalize().or_else(|| (c_new - a_pos).try_normalize()).unwrap_or(Vec3::Y);
        let e_dir = (c_new - a_pos).try_normalize().unwrap_or(t_dir);
        let swing = from_to(e_dir, t_dir);
        let b_swung = swing.rotate(b_pos - a_pos);
        let spin = spin_angle(b_swung, self.pole_vector, t_dir).unwrap_or(R::ZERO) + self.twist_angle;
        let start_model = (Quat::from_axis_angle(t_dir, spin) * swing).normalize();

        *self.reached = (d - d0).abs() * R::from_i32(REACH_TOLERANCE_RATIO) <= chain;
        *self.start_correction = weighted(to_local(start_model, start_rot), self.weight);
        *self.mid_correction = weighted(to_local(mid_model, mid_rot), self.weight);
        Ok(())
    }
}

/// Aim IK (like ozz's `IKAimJob`): a correction turning one joint so that a ray fixed to it
/// passes through a target.
///
/// # Examples
///
/// A head looking along +Z turns to a target on its +X side:
///
/// ```
/// use sinew::job::ik::IkAimJob;
/// use sinew::math::{Mat4, Quat, Vec3};
///
/// let head = Mat4::from_translation(Vec3::new(0.0, 1.6, 0.0)); // the joint's model matrix
/// let (mut correction, mut reached) = (Quat::IDENTITY, false);
/// IkAimJob {
///     target: Vec3::new(2.0, 1.6, 0.0),
///     forward: Vec3::Z,     // the head's aiming axis, in its own space
///     up: Vec3::Y,          // kept towards the pole vector
///     offset: Vec3::ZERO,   // the ray starts at the joint
///     pole_vector: Vec3::Y,
///     twist_angle: 0.0,
///     weight: 1.0,
///     joint: &head,
///     joint_correction: &mut correction,
///     reached: &mut reached,
/// }
/// .run()?;
/// assert!(reached);
/// // Multiplied onto the head's local rotation (`ik::apply_correction`), it turns +Z to +X.
/// assert!((correction.rotate(Vec3::Z) - Vec3::X).length() < 1e-5);
/// # Ok::<(), sinew::job::JobError>(())
/// ```
#[derive(Debug)]
pub struct IkAimJob<'a, R: Real> {
    /// Target position, model space.
    pub target: Vec3<R>,
    /// The aiming direction in the joint's space (e.g. a head's +Z). Must be non-zero.
    pub forward: Vec3<R>,
    /// The joint's up direction in its own space, aligned towards `pole_vector`. Must be
    /// non-zero and not parallel to `forward`.
    pub up: Vec3<R>,
    /// Origin of the aiming ray in the joint's space (e.g. the eyes' offset from the head).
    pub offset: Vec3<R>,
    /// Where `up` should point, model space (usually +Y). Zero, or parallel to the aim axis:
    /// no spin is applied.
    pub pole_vector: Vec3<R>,
    /// Extra rotation about the joint-to-target axis, radians.
    pub twist_angle: R,
    /// Blend of the correction, in `[0, 1]` (clamped).
    pub weight: R,
    /// Model matrix of the joint.
    pub joint: &'a Mat4<R>,
    /// Output: the joint's local correction.
    pub joint_correction: &'a mut Quat<R>,
    /// Output: false when the target is too close for the offset ray to pass through it (it
    /// lies nearer the joint than the ray's closest approach); the ray then points as close as
    /// it can. Independent of `weight`.
    pub reached: &'a mut bool,
}

impl<R: Real> IkAimJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// [`JobError::InvalidAxis`] when `forward` or `up` is zero or they are parallel,
    /// [`JobError::InvalidTransform`] when a vector, a scalar or the matrix is NaN or infinite,
    /// or the matrix is singular.
    pub fn validate(&self) -> Result<(), JobError> {
        let finite = finite_vec(self.target)
            && finite_vec(self.forward)
            && finite_vec(self.up)
            && finite_vec(self.offset)
            && finite_vec(self.pole_vector)
            && self.twist_angle.is_finite()
            && self.weight.is_finite()
            && self.joint.is_finite();
        if !finite || self.joint.inverse().is_none() {
            return Err(JobError::InvalidTransform);
        }
        match (self.forward.try_normalize(), self.up.try_normalize()) {
            (Some(f), Some(u)) if f.cross(u).length_squared() > R::ratio(1, 1_000_000) => Ok(()),
            _ => Err(JobError::InvalidAxis),
        }
    }

    /// Validates, then solves.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let (Some(inv), Some(f), Some(up)) =
            (self.joint.inverse(), self.forward.try_normalize(), self.up.try_normalize())
        else {
            return Err(JobError::InvalidTransform);
        };
        let target = inv.transform_point3(self.target);
        let pole = inv.transform_vector3(self.pole_vector);
        let Some(t_dir) = target.try_normalize() else {
            *self.joint_correction = Quat::IDENTITY;
            *self.reached = false;
            return Ok(());
        };
        // The point of the ray O + s·F at the target's distance from the joint.
        let o = self.offset;
        let of = o.dot(f);
        let disc = of * of - o.length_squared() + target.length_squared();
        *self.reached = disc >= R::ZERO;
        let s = -of + disc.max(R::ZERO).sqrt();
        let aim_point = o + f * s;
        let swing = match aim_point.try_normalize() {
            Some(p) => from_to(p, t_dir),
            None => from_to(f, t_dir),
        };
        let spin = spin_angle(swing.rotate(up), pole, t_dir).unwrap_or(R::ZERO) + self.twist_angle;
        let q = (Quat::from_axis_angle(t_dir, spin) * swing).normalize();
        *self.joint_correction = weighted(q, self.weight);
        Ok(())
    }
}

/// Multiplies a correction onto joint `joint`'s local rotation in a SoA pose:
/// `rotation = normalize(rotation · correction)`.
///
/// # Errors
///
/// [`JobError::JointIndexOutOfRange`] when the pose has no element for `joint`.
pub fn apply_correction<R: Real>(
    pose: &mut [SoaTransform<R>],
    joint: usize,
    correction: Quat<R>,
) -> Result<(), JobError> {
    let soa = pose.get_mut(joint / 4).ok_or(JobError::JointIndexOutOfRange)?;
    let l = joint % 4;
    let q = (soa.rotation.lane(l) * correction).normalize();
    soa.rotation.set_lane(l, q);
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::job::LocalToModelJob;
    use crate::math::Transform;
    use crate::real::Q16;
    use crate::skeleton::Skeleton;

    struct Rng(u32);
    impl Rng {
        fn next(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 17;
            self.0 ^= self.0 << 5;
            (self.0 >> 8) as f32 / 16_777_216.0
        }
        fn range(&mut self, lo: f32, hi: f32) -> f32 {
            lo + (hi - lo) * self.next()
        }
        fn unit(&mut self) -> Vec3<f32> {
            loop {
                let v = Vec3::new(self.range(-1.0, 1.0), self.range(-1.0, 1.0), self.range(-1.0, 1.0));
                if let Some(n) = v.try_normalize() {
                    if v.length() <= 1.0 {
                        return n;
                    }
                }
            }
        }
        fn quat(&mut self, max_angle: f32) -> Quat<f32> {
            let axis = self.unit();
            Quat::from_axis_angle(axis, self.range(-max_angle, max_angle))
        }
    }

    fn to_r<R: Real>(v: Vec3<f32>) -> Vec3<R> {
        Vec3::new(R::from_f32(v.x), R::from_f32(v.y), R::from_f32(v.z))
    }
    fn to_f<R: Real>(v: Vec3<R>) -> Vec3<f32> {
        Vec3::new(v.x.to_f32(), v.y.to_f32(), v.z.to_f32())
    }

    /// A 4-joint chain: 0 root, 1 start (shoulder), 2 mid (elbow), 3 end (hand); the elbow bends
    /// about its local Z.
    fn arm<R: Real>(rng: &mut Rng, straight: bool) -> (Skeleton<R, 1>, f32) {
        let (la, lb) = (rng.range(0.3, 1.0), rng.range(0.3, 1.0));
        let bend = if straight { 0.0 } else { rng.range(0.2, 2.5) };
        let rest = [
            Transform::new(to_r(Vec3::new(rng.range(-1.0, 1.0), 1.0, 0.0)), qr(rng.quat(3.0)), Vec3::ONE),
            Transform::new(to_r(Vec3::new(0.0, 0.2, 0.1)), qr(rng.quat(3.0)), Vec3::ONE),
            Transform::new(
                to_r(Vec3::new(la, 0.0, 0.0)),
                qr(Quat::from_axis_angle(Vec3::Z, bend) * rng.quat(0.1)),
                Vec3::ONE,
            ),
            Transform::new(to_r(Vec3::new(lb, 0.0, 0.0)), Quat::IDENTITY, Vec3::ONE),
        ];
        (Skeleton::new(&[-1, 0, 1, 2], &rest, &["root", "shoulder", "elbow", "hand"]).unwrap(), la + lb)
    }
    fn qr<R: Real>(q: Quat<f32>) -> Quat<R> {
        Quat::new(R::from_f32(q.x), R::from_f32(q.y), R::from_f32(q.z), R::from_f32(q.w)).normalize()
    }

    fn model<R: Real>(s: &Skeleton<R, 1>, pose: &[SoaTransform<R>], out: &mut [Mat4<R>; 4], from: Option<usize>) {
        LocalToModelJob { skeleton: s.view(), root: None, input: pose, output: out, from, to: None }.run().unwrap();
    }

    #[test]
    fn two_bone_validity() {
        let m = Mat4::<f32>::IDENTITY;
        let zero_col = Mat4 { cols: [[0.0; 4], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]] };
        let nan = Mat4 { cols: [[f32::NAN; 4]; 4] };
        let sentinel = Quat::new(9.0f32, 9.0, 9.0, 9.0);
        type Case<'a> = (Vec3<f32>, Vec3<f32>, &'a Mat4<f32>, &'a Mat4<f32>, f32, JobError);
        let cases: [Case; 6] = [
            (Vec3::ZERO, Vec3::X, &m, &m, 1.0, JobError::InvalidAxis),
            (Vec3::Z, Vec3::new(f32::NAN, 0.0, 0.0), &m, &m, 1.0, JobError::InvalidTransform),
            (Vec3::Z, Vec3::X, &nan, &m, 1.0, JobError::InvalidTransform),
            (Vec3::Z, Vec3::X, &m, &zero_col, 1.0, JobError::InvalidTransform),
            (Vec3::Z, Vec3::X, &zero_col, &m, 1.0, JobError::InvalidTransform),
            (Vec3::Z, Vec3::X, &m, &m, f32::INFINITY, JobError::InvalidTransform),
        ];
        for (axis, target, start, mid, weight, e) in cases {
            let (mut sc, mut mc, mut reached) = (sentinel, sentinel, true);
            let mut job = IkTwoBoneJob {
                target,
                pole_vector: Vec3::Y,
                mid_axis: axis,
                twist_angle: 0.0,
                soften: 1.0,
                weight,
                start_joint: start,
                mid_joint: mid,
                end_joint: &m,
                start_correction: &mut sc,
                mid_correction: &mut mc,
                reached: &mut reached,
            };
            assert_eq!(job.validate(), Err(e));
            assert_eq!(job.run(), Err(e));
            assert_eq!((sc, mc, reached), (sentinel, sentinel, true), "{e:?}");
        }
    }

    /// Solves a random arm towards `target` and returns (distance from the end to the target
    /// over the chain length, reached, how far B is from the pole half-plane).
    fn solve<R: Real>(
        s: &Skeleton<R, 1>,
        target: Vec3<R>,
        pole: Vec3<R>,
        soften: R,
        weight: R,
    ) -> ([Mat4<R>; 4], [Mat4<R>; 4], bool) {
        let mut pose = [SoaTransform::IDENTITY];
        pose.copy_from_slice(s.rest_pose());
        let mut m = [Mat4::IDENTITY; 4];
        model(s, &pose, &mut m, None);
        let before = m;
        let (mut sc, mut mc, mut reached) = (Quat::IDENTITY, Quat::IDENTITY, false);
        IkTwoBoneJob {
            target,
            pole_vector: pole,
            mid_axis: Vec3::Z,
            twist_angle: R::ZERO,
            soften,
            weight,
            start_joint: &m[1],
            mid_joint: &m[2],
            end_joint: &m[3],
            start_correction: &mut sc,
            mid_correction: &mut mc,
            reached: &mut reached,
        }
        .run()
        .unwrap();
        apply_correction(&mut pose, 1, sc).unwrap();
        apply_correction(&mut pose, 2, mc).unwrap();
        model(s, &pose, &mut m, Some(1));
        (before, m, reached)
    }

    /// Worst end-to-target distance over chain length, and worst pole misalignment (1 − cos).
    fn two_bone_accuracy<R: Real>(seed: u32, rounds: usize) -> (f32, f32) {
        let mut rng = Rng(seed);
        let (mut worst, mut worst_pole) = (0.0f32, 0.0f32);
        for i in 0..rounds {
            let (s, chain) = arm::<R>(&mut rng, i % 5 == 0);
            let mut m = [Mat4::IDENTITY; 4];
            model(&s, s.rest_pose(), &mut m, None);
            let a = to_f(m[1].translation());
            let (la, lb) = (
                (to_f(m[2].translation()) - a).length(),
                (to_f(m[3].translation()) - to_f(m[2].translation())).length(),
            );
            // A reachable distance, kept off both limits.
            let d = rng.range((la - lb).abs() + 0.02 * chain, chain * 0.98);
            let target = a + rng.unit() * d;
            let pole = rng.unit();
            let (_, after, reached) = solve(&s, to_r(target), to_r(pole), R::ONE, R::ONE);
            assert!(reached, "round {i}");
            let err = (to_f(after[3].translation()) - target).length() / chain;
            worst = worst.max(err);
            // B lies in the half-plane of the target axis and the pole.
            let t = (target - a).normalize_or_zero();
            let bp = to_f(after[2].translation()) - a;
            let (pb, pp) = ((bp - t * bp.dot(t)).normalize_or_zero(), (pole - t * pole.dot(t)).normalize_or_zero());
            worst_pole = worst_pole.max(1.0 - pb.dot(pp));
        }
        (worst, worst_pole)
    }

    #[test]
    fn two_bone_reaches_reachable_targets() {
        let (err, pole) = two_bone_accuracy::<f32>(0x5eed, if cfg!(miri) { 20 } else { 2000 });
        std::println!("two-bone f32: end error {err:.2e} × chain, pole misalignment {pole:.2e}");
        assert!(err < 1.0e-5, "end error {err:e} of the chain length");
        assert!(pole < 1.0e-5, "pole misalignment {pole:e}");
        let (err, pole) = two_bone_accuracy::<Q16>(0x5eed, if cfg!(miri) { 10 } else { 500 });
        std::println!("two-bone Q16: end error {err:.2e} × chain, pole misalignment {pole:.2e}");
        assert!(err < 5.0e-4, "Q16 end error {err:e}");
        assert!(pole < 1.0e-4, "Q16 pole misalignment {pole:e}");
    }

    #[test]
    fn two_bone_reports_unreachable_targets() {
        let mut rng = Rng(99);
        for i in 0..if cfg!(miri) { 10 } else { 200 } {
            let (s, chain) = arm::<f32>(&mut rng, false);
            let mut m = [Mat4::IDENTITY; 4];
            model(&s, s.rest_pose(), &mut m, None);
            let a = m[1].translation();
            let dir = rng.unit();
            // Too far: the chain straightens along the target line.
            let (_, after, reached) = solve(&s, a + dir * (chain * rng.range(1.01, 3.0)), Vec3::Y, 1.0, 1.0);
            assert!(!reached, "round {i}");
            let end = after[3].translation() - a;
            assert!((end.length() - chain).abs() < 1.0e-4 * chain, "round {i}: {end:?}");
            assert!(end.normalize_or_zero().dot(dir) > 1.0 - 1.0e-6, "round {i}");
            // Too close (inside |a − b|): folded as far as it goes, still reported.
            let la = (m[2].translation() - a).length();
            let lb = (m[3].translation() - m[2].translation()).length();
            if (la - lb).abs() > 0.05 {
                let (_, _, reached) = solve(&s, a + dir * ((la - lb).abs() * 0.5), Vec3::Y, 1.0, 1.0);
                assert!(!reached, "round {i} (too close)");
            }
        }
    }

    #[test]
    fn two_bone_weight_and_soften() {
        let mut rng = Rng(7);
        let (s, chain) = arm::<f32>(&mut rng, false);
        let mut m = [Mat4::IDENTITY; 4];
        model(&s, s.rest_pose(), &mut m, None);
        let a = m[1].translation();
        let target = a + Vec3::new(0.3, -0.5, 0.2).normalize_or_zero() * (0.9 * chain);
        // Weight 0: nothing moves, though the target is reachable.
        let (before, after, reached) = solve(&s, target, Vec3::Y, 1.0, 0.0);
        assert!(reached);
        assert!((after[3].translation() - before[3].translation()).max_abs() < 1.0e-6);
        // Softening from half the chain: 0.9 of the chain eases to da + ds·x/(1+x) with
        // da = ds = 0.5 and x = 0.8, that is 0.5 + 0.5 · 0.8 / 1.8 of the chain.
        let (_, after, reached) = solve(&s, target, Vec3::Y, 0.5, 1.0);
        assert!(!reached);
        let d = (after[3].translation() - a).length() / chain;
        assert!((d - (0.5 + 0.5 * 0.8 / 1.8)).abs() < 1.0e-5, "softened distance {d}");
        // Below the softening start the target is reached exactly.
        let near = a + Vec3::new(0.3, -0.5, 0.2).normalize_or_zero() * (0.45 * chain);
        let (_, after, reached) = solve(&s, near, Vec3::Y, 0.5, 1.0);
        assert!(reached);
        assert!((after[3].translation() - near).length() < 1.0e-5 * chain);
        // A straight chain bends about mid_axis: the elbow's local Z stays the bend axis.
        let (s, chain) = arm::<f32>(&mut rng, true);
        model(&s, s.rest_pose(), &mut m, None);
        let a = m[1].translation();
        let (_, after, reached) = solve(&s, a + Vec3::new(0.0, 0.0, 0.6 * chain), Vec3::Y, 1.0, 1.0);
        assert!(reached);
        assert!(((after[3].translation() - a).length() - 0.6 * chain).abs() < 1.0e-5 * chain);
    }

    #[test]
    fn aim_validity() {
        let m = Mat4::<f32>::IDENTITY;
        let singular = Mat4 { cols: [[0.0; 4], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]] };
        let sentinel = Quat::new(9.0f32, 9.0, 9.0, 9.0);
        type Case<'a> = (Vec3<f32>, Vec3<f32>, Vec3<f32>, &'a Mat4<f32>, JobError);
        let cases: [Case; 5] = [
            (Vec3::ZERO, Vec3::Y, Vec3::X, &m, JobError::InvalidAxis),
            (Vec3::Z, Vec3::ZERO, Vec3::X, &m, JobError::InvalidAxis),
            (Vec3::Z, Vec3::new(0.0, 0.0, -2.0), Vec3::X, &m, JobError::InvalidAxis),
            (Vec3::Z, Vec3::Y, Vec3::new(f32::INFINITY, 0.0, 0.0), &m, JobError::InvalidTransform),
            (Vec3::Z, Vec3::Y, Vec3::X, &singular, JobError::InvalidTransform),
        ];
        for (forward, up, target, joint, e) in cases {
            let (mut c, mut reached) = (sentinel, true);
            let mut job = IkAimJob {
                target,
                forward,
                up,
                offset: Vec3::ZERO,
                pole_vector: Vec3::Y,
                twist_angle: 0.0,
                weight: 1.0,
                joint,
                joint_correction: &mut c,
                reached: &mut reached,
            };
            assert_eq!(job.validate(), Err(e));
            assert_eq!(job.run(), Err(e));
            assert_eq!((c, reached), (sentinel, true), "{e:?}");
        }
    }

    #[test]
    fn aim_points_the_offset_ray_through_the_target() {
        let mut rng = Rng(0xa1a1);
        let mut worst = (0.0f32, 0.0f32);
        for i in 0..if cfg!(miri) { 30 } else { 2000 } {
            // A rigid joint matrix with a uniform scale.
            let q = rng.quat(3.0);
            let scale = rng.range(0.5, 2.0);
            let joint = Mat4::from_trs(Vec3::new(rng.range(-2.0, 2.0), 1.5, 0.0), q, Vec3::splat(scale));
            let forward = rng.unit();
            let up = (rng.unit() - forward * 0.5).normalize_or_zero();
            if forward.cross(up).length() < 0.1 {
                continue;
            }
            let offset = rng.unit() * rng.range(0.0, 0.2);
            let target = joint.translation() + rng.unit() * rng.range(1.0, 5.0);
            let pole = rng.unit();
            let (mut c, mut reached) = (Quat::IDENTITY, false);
            IkAimJob {
                target,
                forward,
                up,
                offset,
                pole_vector: pole,
                twist_angle: 0.0,
                weight: 1.0,
                joint: &joint,
                joint_correction: &mut c,
                reached: &mut reached,
            }
            .run()
            .unwrap();
            assert!(reached, "round {i}");
            // The corrected joint: M · corr (a local post-multiplication).
            let corrected = joint * Mat4::from_trs(Vec3::ZERO, c, Vec3::ONE);
            let origin = corrected.transform_point3(offset);
            let dir = corrected.transform_vector3(forward).normalize_or_zero();
            let to_t = target - origin;
            // Distance from the target to the ray, and the ray must point towards it.
            let miss = (to_t - dir * to_t.dot(dir)).length();
            assert!(to_t.dot(dir) > 0.0);
            worst.0 = worst.0.max(miss / to_t.length());
            // Up lies in the half-plane of the aim axis and the pole.
            let axis = (target - joint.translation()).normalize_or_zero();
            let u = corrected.transform_vector3(up);
            let (pu, pp) =
                ((u - axis * u.dot(axis)).normalize_or_zero(), (pole - axis * pole.dot(axis)).normalize_or_zero());
            if pp.length() > 0.5 {
                worst.1 = worst.1.max(1.0 - pu.dot(pp));
            }
        }
        std::println!("aim f32: ray miss {:.2e} × distance, up misalignment {:.2e}", worst.0, worst.1);
        assert!(worst.0 < 5.0e-6 && worst.1 < 5.0e-6, "{worst:?}");
        // A target inside the offset's reach cannot be hit.
        let (mut c, mut reached) = (Quat::IDENTITY, true);
        IkAimJob {
            target: Vec3::new(0.0f32, 0.0, 0.05),
            forward: Vec3::Z,
            up: Vec3::Y,
            offset: Vec3::new(0.2, 0.0, 0.0),
            pole_vector: Vec3::Y,
            twist_angle: 0.0,
            weight: 1.0,
            joint: &Mat4::IDENTITY,
            joint_correction: &mut c,
            reached: &mut reached,
        }
        .run()
        .unwrap();
        assert!(!reached);
        // Weight 0 is the identity.
        IkAimJob {
            target: Vec3::new(5.0f32, 0.0, 0.0),
            forward: Vec3::Z,
            up: Vec3::Y,
            offset: Vec3::ZERO,
            pole_vector: Vec3::Y,
            twist_angle: 0.0,
            weight: 0.0,
            joint: &Mat4::IDENTITY,
            joint_correction: &mut c,
            reached: &mut reached,
        }
        .run()
        .unwrap();
        assert_eq!(c, Quat::IDENTITY);
    }

    #[test]
    fn q16_aim() {
        let mut rng = Rng(0xbeef);
        let mut worst = 0.0f32;
        for _ in 0..if cfg!(miri) { 15 } else { 300 } {
            let q = qr::<Q16>(rng.quat(3.0));
            let joint = Mat4::from_trs(to_r::<Q16>(Vec3::new(rng.range(-2.0, 2.0), 1.5, 0.0)), q, Vec3::ONE);
            let forward = Vec3::<Q16>::Z;
            let offset = to_r::<Q16>(rng.unit() * 0.1);
            let target = joint.translation() + to_r::<Q16>(rng.unit() * rng.range(1.0, 5.0));
            let (mut c, mut reached) = (Quat::IDENTITY, false);
            IkAimJob {
                target,
                forward,
                up: Vec3::Y,
                offset,
                pole_vector: Vec3::Y,
                twist_angle: Q16::ZERO,
                weight: Q16::ONE,
                joint: &joint,
                joint_correction: &mut c,
                reached: &mut reached,
            }
            .run()
            .unwrap();
            assert!(reached);
            let corrected = joint * Mat4::from_trs(Vec3::ZERO, c, Vec3::ONE);
            let origin = to_f(corrected.transform_point3(offset));
            let dir = to_f(corrected.transform_vector3(forward)).normalize_or_zero();
            let to_t = to_f(target) - origin;
            worst = worst.max((to_t - dir * to_t.dot(dir)).length() / to_t.length());
        }
        std::println!("aim Q16: ray miss {worst:.2e} × distance");
        assert!(worst < 5.0e-4, "{worst}");
    }

    #[test]
    fn apply_correction_bounds() {
        let mut pose = [SoaTransform::<f32>::IDENTITY];
        assert_eq!(apply_correction(&mut pose, 4, Quat::IDENTITY), Err(JobError::JointIndexOutOfRange));
        let q = Quat::from_axis_angle(Vec3::X, 0.5f32);
        apply_correction(&mut pose, 3, q).unwrap();
        assert!(pose[0].rotation.lane(3).angle_between(q) < 1.0e-6);
        assert_eq!(pose[0].rotation.lane(2), Quat::IDENTITY);
    }
}
