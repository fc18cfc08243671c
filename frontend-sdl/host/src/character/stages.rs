//! The set-up of the stages that edit the pose after local-to-model ([`Character::update`]'s
//! foot placement, chain IK and spring bones), the world matrix they work in, and what they
//! report.

use alloc::boxed::Box;
#[cfg(any(feature = "feet", feature = "springs"))]
use alloc::vec;
use alloc::vec::Vec;

use sinew::capacity::Capacity;
#[cfg(feature = "feet")]
use sinew::job::foot::{FootSettings, FootState, Ground, GroundHit, LegState};
use sinew::job::ik::ChainReport;
use sinew::math::Mat4;
#[cfg(feature = "feet")]
use sinew::math::Vec3;

#[cfg(feature = "springs")]
use super::springs::{SpringFrame, SpringSet, SpringSettings, Springs};
use super::{chain, Character, CharacterError, IkChain};
#[cfg(feature = "feet")]
use super::{feet, Legs};

impl<C: Capacity> Character<C> {
    #[cfg(feature = "feet")]
    /// Sets up foot placement as a stage of [`update`](Self::update), after local-to-model:
    /// the core's [`FootPlacementJob`](sinew::job::FootPlacementJob) on `legs` with `settings`,
    /// over `ground` (asked in the world: see [`set_world`](Self::set_world)), on (`enabled`)
    /// or off. Its first run is settled (the effect at its end weight at once, the pelvis on
    /// its target); [`set_feet_enabled`](Self::set_feet_enabled) then ramps it in and out over
    /// `settings.blend_time`, stepped by the seconds [`advance`](Self::advance) advances. A
    /// set-up in place replaces it.
    ///
    /// # Errors
    ///
    /// [`CharacterError::Job`] with what the job's validation refuses (a joint out of range, a
    /// leg that is not a chain under the pelvis, a setting out of range, a world matrix that is
    /// tilted); nothing changes.
    // Out of line: a set-up path, whose inlined copies only grow a wasm module.
    #[inline(never)]
    pub fn set_feet(
        &mut self,
        legs: Legs,
        settings: FootSettings<f32>,
        ground: Box<dyn Ground<f32>>,
        enabled: bool,
    ) -> Result<(), CharacterError> {
        let n = legs.legs.len();
        let mut f = feet::Feet {
            pelvis: legs.pelvis,
            legs: legs.legs,
            settings,
            state: FootState::new(enabled),
            leg_states: vec![LegState::new(); n],
            ground,
            dt: 0.0,
        };
        super::copy_pose(&mut self.placed, &self.pose);
        f.validate(self.model.skeleton(), &mut self.placed, &mut self.joints, self.world)?;
        self.feet = Some(f);
        Ok(())
    }

    #[cfg(feature = "feet")]
    /// Removes the foot placement stage.
    pub fn clear_feet(&mut self) {
        self.feet = None;
    }

    #[cfg(feature = "feet")]
    /// Turns foot placement on or off; its effect ramps in or out over the settings'
    /// `blend_time`.
    ///
    /// # Errors
    ///
    /// [`CharacterError::NoFeet`] without a set-up.
    pub fn set_feet_enabled(&mut self, enabled: bool) -> Result<(), CharacterError> {
        self.feet.as_mut().ok_or(CharacterError::NoFeet)?.state.set_enabled(enabled);
        Ok(())
    }

    #[cfg(feature = "feet")]
    /// Makes foot placement's next run a settled one, as after a cut or a teleport: the
    /// effect at its end weight at once, the pelvis on its target, the feet's locks taken from
    /// the pose. Nothing without a set-up.
    pub fn reset_feet(&mut self) {
        if let Some(f) = self.feet.as_mut() {
            f.state.reset();
        }
    }

    #[cfg(feature = "feet")]
    /// Foot placement's state after the last update (the weight it applied, whether it is on,
    /// the pelvis spring), `None` without a set-up.
    #[must_use]
    pub fn feet(&self) -> Option<&FootState<f32>> {
        self.feet.as_ref().map(|f| &f.state)
    }

    #[cfg(feature = "feet")]
    /// Each leg's state after the last update (its lock, its ground, its target), in the
    /// order of the set-up's legs; empty without one.
    #[must_use]
    pub fn leg_states(&self) -> &[LegState<f32>] {
        self.feet.as_ref().map_or(&[], |f| f.leg_states.as_slice())
    }

    #[cfg(feature = "feet")]
    /// Replaces the ground foot placement stands the feet on.
    ///
    /// # Errors
    ///
    /// [`CharacterError::NoFeet`] without a set-up.
    pub fn set_ground(&mut self, ground: Box<dyn Ground<f32>>) -> Result<(), CharacterError> {
        self.feet.as_mut().ok_or(CharacterError::NoFeet)?.ground = ground;
        Ok(())
    }

    #[cfg(feature = "feet")]
    /// What foot placement's ground answers under world point `at` (as for the first leg);
    /// `None` where it has no ground, or without a set-up.
    pub fn ground(&mut self, at: Vec3<f32>) -> Option<GroundHit<f32>> {
        self.feet.as_mut()?.ground.ground(0, at)
    }

    /// Sets where the model stands in the world for the next updates (model space to world
    /// space: a rotation about +Y, a translation and a uniform scale; the identity until set),
    /// which foot placement asks its ground and keeps its locks in: with root motion, the
    /// character's placement each frame. A jump (a teleport) calls for
    /// `reset_feet` too.
    pub fn set_world(&mut self, world: Mat4<f32>) {
        self.world = world;
    }

    /// Model space to world space, as last set.
    #[must_use]
    pub fn world(&self) -> Mat4<f32> {
        self.world
    }

    /// Sets up chain IK as a stage of [`update`](Self::update), after foot placement: the
    /// core's [`IkChainJob`](sinew::job::ik::IkChainJob) on each of `chains` in turn, each
    /// correcting the pose the next one starts from. The targets are model space; move them
    /// between frames with [`chain_ik_mut`](Self::chain_ik_mut). A set-up in place replaces it.
    ///
    /// # Errors
    ///
    /// [`CharacterError::Job`] with what a chain's validation refuses (a joint out of range,
    /// joints that are not a chain, a bad target, tolerance, weight or limit); nothing changes.
    // Out of line: a set-up path.
    #[inline(never)]
    pub fn set_chain_ik(&mut self, chains: Vec<IkChain>) -> Result<(), CharacterError> {
        let mut stage = chain::Chains::new(chains);
        chain::PoseStage::validate(&mut stage, self.model.skeleton(), &self.joints)?;
        self.chains = Some(Box::new(stage));
        Ok(())
    }

    /// Removes the chain IK stage.
    pub fn clear_chain_ik(&mut self) {
        self.chains = None;
    }

    /// The IK chains, to move their targets (or change their settings) for the next update;
    /// empty without a set-up.
    pub fn chain_ik_mut(&mut self) -> &mut [IkChain] {
        self.chains.as_mut().map_or(&mut [], |c| c.chains())
    }

    /// What each chain's solve reached in the last update, in the order of the chains; empty
    /// without a set-up.
    #[must_use]
    pub fn chain_reports(&self) -> &[ChainReport<f32>] {
        self.chains.as_ref().map_or(&[], |c| c.reports())
    }
    #[cfg(feature = "springs")]
    /// Sets up spring bones as a stage of [`update`](Self::update), after chain IK and
    /// before skinning: the core's [`SpringBoneJob`](sinew::job::SpringBoneJob) on `set` (the
    /// model's springs: [`Model::springs`](crate::model::Model::springs)), stepped at
    /// `settings.rate` by the seconds [`advance`](Self::advance) advances, in the world of
    /// [`set_world`](Self::set_world); on (`enabled`) or off. Its first run puts the springs at
    /// rest in the pose. A set-up in place replaces it.
    ///
    /// # Errors
    ///
    /// [`CharacterError::Job`] with what the job's validation refuses (a joint out of range, a
    /// child that is not below its joint, a collider range past the table, a setting that is
    /// not finite; settings with a rate that is not positive or no step per update:
    /// `JobError::InvalidWeight`); nothing changes.
    // Out of line: a set-up path.
    #[inline(never)]
    pub fn set_springs(
        &mut self,
        set: SpringSet,
        settings: SpringSettings,
        enabled: bool,
    ) -> Result<(), CharacterError> {
        let n = set.joints.len();
        let skeleton = self.model.skeleton();
        let plan = sinew::job::spring::SpringPlan::new(&skeleton, &set.joints);
        let mut rests = vec![sinew::job::spring::SpringRest::default(); n];
        sinew::job::spring::SpringRest::fill(&skeleton, &set.joints, &mut rests)?;
        let stage = Springs {
            set,
            plan,
            rests,
            settings,
            tails: vec![sinew::job::spring::SpringTail::default(); n],
            enabled,
            reset: true,
            dt: 0.0,
            frame: SpringFrame::default(),
        };
        stage.validate(self.model.skeleton())?;
        self.springs = Some(stage);
        Ok(())
    }
    #[cfg(feature = "springs")]
    /// Removes the spring bones stage.
    pub fn clear_springs(&mut self) {
        self.springs = None;
    }
    #[cfg(feature = "springs")]
    /// Turns the spring bones on or off; switched on, their next run puts them at rest in the
    /// pose of that update.
    ///
    /// # Errors
    ///
    /// [`CharacterError::NoSprings`] without a set-up.
    pub fn set_springs_enabled(&mut self, enabled: bool) -> Result<(), CharacterError> {
        let s = self.springs.as_mut().ok_or(CharacterError::NoSprings)?;
        if enabled && !s.enabled {
            s.reset = true;
        }
        s.enabled = enabled;
        Ok(())
    }
    #[cfg(feature = "springs")]
    /// Whether spring bones are set up and on.
    #[must_use]
    pub fn springs_enabled(&self) -> bool {
        self.springs.as_ref().is_some_and(|s| s.enabled)
    }
    #[cfg(feature = "springs")]
    /// Makes the springs' next run a reset, as after a cut or a teleport: at rest in that
    /// update's pose, the time owed dropped. Nothing without a set-up.
    pub fn reset_springs(&mut self) {
        if let Some(s) = self.springs.as_mut() {
            s.reset = true;
        }
    }
    #[cfg(feature = "springs")]
    /// What the springs did in the last update (a reset, steps run, contacts, time dropped);
    /// `None` without a set-up.
    #[must_use]
    pub fn spring_frame(&self) -> Option<SpringFrame> {
        self.springs.as_ref().map(|s| s.frame)
    }
    #[cfg(feature = "springs")]
    /// The springs' set-up (their joints and colliders, to draw them); `None` without one.
    #[must_use]
    pub fn spring_set(&self) -> Option<&SpringSet> {
        self.springs.as_ref().map(|s| &s.set)
    }
}
