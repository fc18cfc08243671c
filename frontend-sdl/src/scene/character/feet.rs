//! The character's feet on the terrain: the core's [`FootPlacementJob`] over both legs
//! ([`place_feet`]), its state kept with the rest of the character's ([`Feet`]), and when it is
//! on ([`FootPlacement`]).
//!
//! The stage puts each ankle at its height above the clip's ground over the terrain under it
//! (the toe lifts the foot where it is over a higher tread), tilts the foot to the ground's
//! normal, lowers the pelvis on a spring so that the lower foot can reach, and holds a planted
//! foot where it landed until it lifts (then eases it back to the animation). Its enabled flag
//! follows [`FootPlacement`] at every simulation step, and its weight ramps in and out over
//! [`FOOT_BLEND`].
//!
//! The ground it asks is the terrain's own under a foot at its standing height, so a planted
//! foot stands on the tread under its ankle, or on the step's nose under its toe when it
//! straddles a riser; a lifted foot's ground rises over a step's nose before it gets there
//! ([`FeetGround`]), so that the swing steps up instead of jumping by a riser's height.

use sinew::job::foot::{FootLeg, FootLock, FootPlacementJob, FootSettings, FootState, Ground, GroundHit, LegState};
use sinew::math::{Mat4, SoaTransform, Vec3};
use sinew_offline::builtin::{humanoid, smoothstep, ANKLE_HEIGHT};
use sinew_offline::model::Model;

use super::step_at;
use crate::scene::error::SceneError;
use crate::scene::terrain::Terrain;

/// Seconds over which switching the foot placement on or off ramps its effect in or out.
pub const FOOT_BLEND: f32 = 0.5;
/// Seconds over which a lifted foot returns from where it was planted to the animation.
const FOOT_RELEASE: f32 = 0.15;
/// Height above its standing height within which an ankle counts as touching the ground, in
/// meters (a foot locks as it lands, the lock keeping it where it lands as the body turns).
const FOOT_CONTACT: f32 = 0.02;
/// World speed of the animated ankle under which a foot touching the ground counts as
/// planted, in meters per second: above what a planted foot's animated ankle moves at while
/// the root climbs the stairs at a run and the body turns over it (up to about 2.4 m/s), below
/// a swing kept low by the walk-run blend (3.7 m/s). Height alone tells the clips' own stances
/// from their swings, which leave and reach the ground slowly.
const FOOT_LOCK_SPEED: f32 = 3.0;
/// Seconds in which the pelvis covers half of a change of how far it is lowered.
const PELVIS_HALF_LIFE: f32 = 0.08;
/// Largest tilt of a foot towards the ground's normal, in radians.
const MAX_TILT: f32 = 0.5;

/// Lift of the animated ankle above its standing height over which a foot's ground goes from
/// the terrain's own height to its [`Terrain::envelope`], in meters.
const SWING_LIFT: f32 = 0.03;
/// The slope of the ground a lifted foot follows towards a higher tread: the foot rises over
/// a step's nose (and its toe with it) at this many meters per meter as it comes near.
const SWING_SLOPE: f32 = 0.5;

/// The ground the feet are placed on: the terrain, as a foot on it sees it.
///
/// A foot at its standing height gets the terrain's exact height and normal
/// ([`Terrain::sample`]) under its ankle and under its toe: a planted foot stands on the tread
/// under its ankle, or on the higher tread under its toe when it straddles a riser. A lifted
/// foot gets, as its lift grows to [`SWING_LIFT`], the terrain's [`Terrain::envelope`] instead,
/// which rises over a step's nose as the foot comes near it, and a normal going from the
/// terrain's to straight up: a swinging foot steps up rather than jumping by a riser's height
/// when its ankle or its toe crosses it, and keeps its animated pitch rather than turning at
/// once where a slope meets flat ground.
struct FeetGround<'t> {
    terrain: &'t Terrain,
    /// World height of the model's ground (the character's root).
    root: f32,
    /// Per leg, the share of the envelope in the ankle's answer of this run, which its toe's
    /// answer (asked next) shares.
    swing: [Option<f32>; 2],
}

impl Ground<f32> for FeetGround<'_> {
    fn ground(&mut self, leg: usize, at: Vec3<f32>) -> Option<GroundHit<f32>> {
        let exact = self.terrain.ground(leg, at)?;
        let swing = self.swing.get_mut(leg)?;
        // The ankle is asked first, at the animated ankle's height; then the toe.
        let share = *swing.get_or_insert_with(|| smoothstep((at.y - self.root - ANKLE_HEIGHT) / SWING_LIFT));
        let envelope = self.terrain.envelope(at.x, at.z, SWING_SLOPE);
        let normal = exact.normal + (Vec3::Y - exact.normal) * share;
        Some(GroundHit { height: exact.height + (envelope - exact.height) * share, normal })
    }
}

/// The foot placement's settings.
fn settings() -> FootSettings<f32> {
    FootSettings {
        pelvis_half_life: PELVIS_HALF_LIFE,
        lock_speed: FOOT_LOCK_SPEED,
        contact_height: FOOT_CONTACT,
        release_time: FOOT_RELEASE,
        max_tilt: MAX_TILT,
        blend_time: FOOT_BLEND,
        forward: Vec3::Z,
    }
}

/// The humanoid's legs, left then right.
const LEGS: [FootLeg<f32>; 2] = [leg(humanoid::L_THIGH), leg(humanoid::R_THIGH)];

/// The leg whose thigh is `thigh` (then shin, foot and toe), standing with its ankle
/// [`ANKLE_HEIGHT`] above the ground.
const fn leg(thigh: usize) -> FootLeg<f32> {
    FootLeg { hip: thigh, knee: thigh + 1, ankle: thigh + 2, toe: Some(thigh + 3), standing_height: ANKLE_HEIGHT }
}

/// What the foot placement keeps between simulation steps: the pelvis spring, the weight, the
/// enabled flag, and each leg's lock (left, right).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Feet {
    state: FootState<f32>,
    legs: [LegState<f32>; 2],
}

impl Feet {
    /// Settled on its first run, enabled or not then as the switches say.
    pub(super) fn new() -> Feet {
        Feet { state: FootState::new(true), legs: [LegState::new(); 2] }
    }

    /// Whether each foot (left, right) is held where it was planted.
    pub(super) fn locked(&self) -> [bool; 2] {
        self.legs.map(|l| matches!(l.lock(), FootLock::Locked(_)))
    }

    /// The weight of the placement in the last run, 0 to 1.
    pub(super) fn weight(&self) -> f32 {
        self.state.weight()
    }

    /// Whether the placement is on (its weight ramping to 1) or off.
    pub(super) fn enabled(&self) -> bool {
        self.state.enabled()
    }

    /// How far the last run lowered the pelvis (≤ 0), in meters.
    pub(super) fn pelvis_offset(&self) -> f32 {
        self.state.weight() * self.state.pelvis_offset()
    }
}

/// Runs the foot placement for `dt` seconds, on (`on`) or off, with the character placed in the
/// world by `world` on `terrain`: edits `pose` (local) and `joints` (its model matrices) and
/// steps `feet`. Feet lock only where `lock` is true (no foot counts as planted otherwise: the
/// locks are let go and the feet follow the animation, on the ground).
///
/// # Errors
///
/// [`SceneError::Job`] when the stage refuses its inputs (not expected: the rig is built here).
#[allow(clippy::too_many_arguments)]
pub(super) fn place_feet(
    model: &Model,
    feet: &mut Feet,
    on: bool,
    lock: bool,
    world: Mat4<f32>,
    dt: f32,
    terrain: &Terrain,
    pose: &mut [SoaTransform<f32>],
    joints: &mut [Mat4<f32>],
) -> Result<(), SceneError> {
    feet.state.set_enabled(on);
    FootPlacementJob {
        skeleton: model.skeleton(),
        pelvis: humanoid::HIPS,
        legs: &LEGS,
        settings: FootSettings { lock_speed: if lock { FOOT_LOCK_SPEED } else { 0.0 }, ..settings() },
        state: &mut feet.state,
        leg_states: &mut feet.legs,
        world,
        dt,
        pose,
        model: joints,
        ground: &mut FeetGround { terrain, root: world.translation().y, swing: [None; 2] },
    }
    .run()?;
    Ok(())
}

/// When the character's feet are placed on the terrain: on or off from t = 0, then switched at
/// scene times. The scene replays the character from t = 0, so the whole history of switches
/// decides the state at any time; [`FootPlacement::switch_at`] keeps the switches before a new
/// one and forgets those after it.
#[derive(Debug, Clone, PartialEq)]
pub struct FootPlacement {
    initially: bool,
    switches: Vec<f32>,
}

impl FootPlacement {
    /// On (`true`) or off from t = 0, never switched.
    #[must_use]
    pub const fn new(on: bool) -> FootPlacement {
        FootPlacement { initially: on, switches: Vec::new() }
    }

    /// Whether the placement is on at t = 0.
    #[must_use]
    pub fn initially(&self) -> bool {
        self.initially
    }

    /// The scene times at which the placement switches, increasing.
    #[must_use]
    pub fn switches(&self) -> &[f32] {
        &self.switches
    }

    /// Whether the placement is on at scene time `t`: the state at t = 0, flipped by each
    /// switch at or before `t`.
    #[must_use]
    pub fn is_on(&self, t: f32) -> bool {
        let flips = self.switches.iter().take_while(|&&s| s <= t).count();
        self.initially ^ (flips % 2 == 1)
    }

    /// Whether the placement is on over simulation step `step`: flipped by each switch whose
    /// first step ([`step_at`]) is at or before it.
    pub(in crate::scene) fn on_at_step(&self, step: u64) -> bool {
        let flips = self.switches.iter().take_while(|&&s| step_at(f64::from(s)) <= step).count();
        self.initially ^ (flips % 2 == 1)
    }

    /// Switches the placement at scene time `t` (negative or non-finite times read as 0): from
    /// `t` on it is the opposite of what it was at `t`. Switches after `t` are dropped, and one
    /// at `t` itself is undone instead.
    pub fn switch_at(&mut self, t: f32) {
        let t = if t.is_finite() { t.max(0.0) } else { 0.0 };
        let undo = self.switches.contains(&t);
        self.switches.retain(|&s| s < t);
        if !undo {
            self.switches.push(t);
        }
    }

    /// The earliest scene time from which `self` and `other` may answer differently; `None`
    /// when they are the same history.
    pub(in crate::scene) fn first_difference(&self, other: &FootPlacement) -> Option<f64> {
        if self.initially != other.initially {
            return Some(0.0);
        }
        let (a, b) = (&self.switches, &other.switches);
        let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        match (a.get(common), b.get(common)) {
            (None, None) => None,
            (Some(&x), None) | (None, Some(&x)) => Some(f64::from(x)),
            (Some(&x), Some(&y)) => Some(f64::from(x.min(y))),
        }
    }
}

impl Default for FootPlacement {
    /// On, never switched.
    fn default() -> Self {
        FootPlacement::new(true)
    }
}
