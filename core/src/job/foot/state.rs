//! What foot placement keeps between frames: the pelvis spring and blend weight
//! ([`FootState`]), and each leg's lock and last animated position ([`LegState`]).

use crate::math::{Quat, Vec3};
use crate::real::Real;

use super::GroundHit;

/// `u` with `(1 + u)·e^(−u) = 1/2`: a critically damped spring of angular frequency `ω`,
/// starting at rest, covers half the distance to a new target in `u / ω` seconds.
const HALF_DISTANCE: (i32, i32) = (1_678_347, 1_000_000);

/// The pelvis spring, the blend weight and the enabled flag of one character's foot placement.
///
/// [`new`](Self::new) and [`reset`](Self::reset) make the next run a *settled* one: the spring
/// starts at its target with no velocity, the weight at its end (1 when enabled, 0 when not),
/// every leg's lock is taken from the current pose and speeds are not measured (there is no
/// previous frame).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FootState<R> {
    pub(super) offset: R,
    pub(super) velocity: R,
    pub(super) weight: R,
    pub(super) enabled: bool,
    pub(super) settle: bool,
}

impl<R: Real> FootState<R> {
    /// A state whose next run is settled, enabled or not.
    #[must_use]
    pub const fn new(enabled: bool) -> Self {
        FootState { offset: R::ZERO, velocity: R::ZERO, weight: R::ZERO, enabled, settle: true }
    }

    /// Makes the next run a settled one (after a teleport, a cut, or a new character).
    pub fn reset(&mut self) {
        self.settle = true;
    }

    /// Turns the placement on or off. The effect then ramps in or out over
    /// [`FootSettings::blend_time`](super::FootSettings::blend_time).
    pub fn set_enabled(&mut self, enabled: bool) {
        self.enabled = enabled;
    }

    /// Whether the placement is on (the weight is ramping to 1) or off (to 0).
    #[must_use]
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The weight the last run applied, in `[0, 1]`.
    #[must_use]
    pub fn weight(&self) -> R {
        self.weight
    }

    /// The pelvis spring's offset after the last run, vertical, in model-space units (≤ 0
    /// once settled: the pelvis only goes down). The run applied `weight × offset`.
    #[must_use]
    pub fn pelvis_offset(&self) -> R {
        self.offset
    }

    /// The pelvis spring's velocity after the last run, model-space units per second.
    #[must_use]
    pub fn pelvis_velocity(&self) -> R {
        self.velocity
    }

    /// Whether the next run is a settled one.
    #[must_use]
    pub fn settling(&self) -> bool {
        self.settle
    }
}

impl<R: Real> Default for FootState<R> {
    /// Enabled, next run settled.
    fn default() -> Self {
        Self::new(true)
    }
}

/// Where a leg's ankle goes horizontally.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FootLock<R> {
    /// The ankle follows the animation.
    Free,
    /// The foot is planted: the ankle stays over this world point (its X and Z; Y is the
    /// animated ankle's height when it locked, for display: the placed height comes from the
    /// ground).
    Locked(Vec3<R>),
    /// The foot was lifted: the ankle goes from where it was locked back to the animation, the
    /// horizontal world offset between them at the release (`offset`) fading out by a
    /// smoothstep over [`FootSettings::release_time`](super::FootSettings::release_time);
    /// `elapsed` is the time since the release as of the last run.
    Releasing {
        /// Lock minus animated ankle at the release, world space, Y = 0.
        offset: Vec3<R>,
        /// Seconds since the release.
        elapsed: R,
    },
}

/// One leg's state: its lock, its animated ankle position in the last run (for the foot's
/// speed), and what the last run found and aimed at (for display and tests).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LegState<R> {
    pub(super) lock: FootLock<R>,
    pub(super) previous: Option<Vec3<R>>,
    pub(super) next_lock: FootLock<R>,
    pub(super) animated: Vec3<R>,
    pub(super) hit: Option<GroundHit<R>>,
    pub(super) target: Option<Vec3<R>>,
    pub(super) tilt: Quat<R>,
}

impl<R: Real> LegState<R> {
    /// A free leg with no history.
    #[must_use]
    pub const fn new() -> Self {
        LegState {
            lock: FootLock::Free,
            previous: None,
            next_lock: FootLock::Free,
            animated: Vec3::ZERO,
            hit: None,
            target: None,
            tilt: Quat::IDENTITY,
        }
    }

    /// The leg's lock after the last run.
    #[must_use]
    pub fn lock(&self) -> FootLock<R> {
        self.lock
    }

    /// The animated ankle's world position in the last run (before placement), `None` before
    /// the first run and after a settled one's reset of history.
    #[must_use]
    pub fn previous(&self) -> Option<Vec3<R>> {
        self.previous
    }

    /// The ground under the ankle found by the last run, `None` when the ground answered none
    /// or the run skipped the queries (weight 0). Unspecified after a run that failed.
    #[must_use]
    pub fn ground_hit(&self) -> Option<GroundHit<R>> {
        self.hit
    }

    /// The ankle's world target at full weight in the last run, `None` when the leg followed
    /// the animation. Unspecified after a run that failed.
    #[must_use]
    pub fn target(&self) -> Option<Vec3<R>> {
        self.target
    }
}

impl<R: Real> Default for LegState<R> {
    fn default() -> Self {
        Self::new()
    }
}

/// `e^(−x)` for `x ≥ 0` (0 for `x ≥ 24`, 1 for `x ≤ 0`): `x = k·ln 2 + r` with `r` in
/// `[0, ln 2)`, `e^(−r)` by its Taylor polynomial of degree 8 (error below 1.1e-7), halved `k`
/// times.
pub(super) fn exp_neg<R: Real>(x: R) -> R {
    if x <= R::ZERO {
        return R::ONE;
    }
    if x >= R::from_i32(24) {
        return R::ZERO;
    }
    let ln2 = R::ratio(693_147_181, 1_000_000_000);
    let k = (x / ln2).trunc_i32().max(0);
    let r = (x - R::from_i32(k) * ln2).max(R::ZERO);
    let mut p = R::ONE;
    for n in (1..=8).rev() {
        p = R::ONE - r * p / R::from_i32(n);
    }
    for _ in 0..k {
        p *= R::HALF;
    }
    p
}

/// The angular frequency of a critically damped spring that covers half a step's distance in
/// `half_life` seconds (> 0).
pub(super) fn spring_frequency<R: Real>(half_life: R) -> R {
    R::ratio(HALF_DISTANCE.0, HALF_DISTANCE.1) / half_life
}

/// One exact step of a critically damped spring towards `target` (constant over the step):
/// with `j0 = x − target` and `j1 = v + ω·j0`, `x(t) = target + (j0 + j1·t)·e^(−ωt)` and
/// `v(t) = (v − ω·j1·t)·e^(−ωt)`.
pub(super) fn spring_step<R: Real>(x: R, v: R, target: R, omega: R, dt: R) -> (R, R) {
    let j0 = x - target;
    let j1 = v + omega * j0;
    let e = exp_neg(omega * dt);
    (target + (j0 + j1 * dt) * e, (v - omega * j1 * dt) * e)
}
