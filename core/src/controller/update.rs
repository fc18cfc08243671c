//! [`Controller::update`] and its passes, in the order it runs them: `validate` (every input
//! checked, each playing slot's step planned), `progress_fades`, `weigh_layers` (layer assembly:
//! the weight algebra of override layers), `advance_and_sample` (with `restart_root_measure`
//! and `extract_root_motion` for each slot), `release_lone_synced` (in `fade.rs`) and `blend`.

use super::fade::Fade;
use super::state::Slot;
use super::{
    AdditiveReference, ClipEntry, Controller, ControllerError, ControllerEvent, ControllerScratch, LayerMode,
    SlotSampling,
};
use crate::capacity::{Buf, Capacity, Element};
use crate::clip::{Clip, RotationInterpolation};
use crate::job::blending::{make_additive, BlendingJob, Layer};
use crate::job::{JobError, SamplingJob};
use crate::math::{SoaTransform, Transform};
use crate::player::{Event, PlayerError, Step};
use crate::real::Real;
use crate::root_motion::{sample_joint, Motion, MotionBlend, RootMotionSettings, RootMotionTracker};
use crate::skeleton::SkeletonView;

/// How a slot playing at the start of an update advances.
#[derive(Debug, Clone, Copy)]
enum Plan<R> {
    /// By `dt` times its speed.
    Time,
    /// By this many cycles (synced).
    Cycles(R),
}

impl<R: Real, C: Capacity, S: SlotSampling<R, C>> Controller<R, C, S> {
    /// Advances every active slot by `dt` seconds, samples them into `scratch` and blends them
    /// into `output` (the local pose, at least `skeleton.num_soa_joints()` elements), and reports
    /// marker crossings of active slots to `on_event` (slot order, then crossing order).
    /// `scratch` holds nothing from one update to the next: any scratch of the same shape will
    /// do, and characters updated in turn can share one.
    ///
    /// # Errors
    ///
    /// [`ControllerError::SkeletonTooLarge`], [`ControllerError::ClipOutOfRange`],
    /// [`ControllerError::TooManyTracks`], [`ControllerError::MaskMismatch`],
    /// [`ControllerError::Job`] (output too small, a clip or the root-motion joint past the
    /// skeleton), [`ControllerError::Player`] (non-finite `dt`, too many loops in one step). All
    /// are checked before anything changes: on error the controller and `output` are untouched
    /// and no event is reported.
    pub fn update(
        &mut self,
        dt: R,
        clips: &[ClipEntry<'_, R>],
        skeleton: SkeletonView<'_, R>,
        scratch: &mut ControllerScratch<R, C>,
        output: &mut [SoaTransform<R>],
        mut on_event: impl FnMut(ControllerEvent<R>),
    ) -> Result<(), ControllerError> {
        let n = skeleton.num_soa_joints();
        // Slots playing at the start of the update advance (and report) even if they fade out
        // during it; the blend takes those still playing after it.
        let plan = self.validate(dt, clips, skeleton, output.len())?;
        self.progress_fades(dt);
        self.weigh_layers(n, &mut scratch.shares);
        let motion = self.advance_and_sample(dt, clips, skeleton, &plan, scratch, &mut on_event)?;
        self.release_lone_synced();
        self.blend(n, skeleton.rest_pose(), scratch, output)?;
        if C::ROOT_MOTION && self.root_settings.is_some() {
            self.root_delta = motion.finish();
            self.root_total = self.root_total.then(self.root_delta);
        }
        Ok(())
    }

    /// Checks everything `update` needs and plans the step of each slot playing at the start of
    /// the update (`None` for the others).
    fn validate(
        &self,
        dt: R,
        clips: &[ClipEntry<'_, R>],
        skeleton: SkeletonView<'_, R>,
        output_len: usize,
    ) -> Result<C::PerSlot<Option<Plan<R>>>, ControllerError> {
        if !dt.is_finite() {
            return Err(ControllerError::Player(PlayerError::NonFiniteDelta));
        }
        let n = skeleton.num_soa_joints();
        if n > C::SOA {
            return Err(ControllerError::SkeletonTooLarge);
        }
        if output_len < n {
            return Err(ControllerError::Job(JobError::OutputTooSmall));
        }
        if self.root_settings.is_some_and(|r| r.joint >= skeleton.num_joints()) {
            return Err(ControllerError::Job(JobError::JointIndexOutOfRange));
        }
        for (i, l) in self.layers.as_ref().iter().enumerate() {
            if l.mask_joints.is_some_and(|j| j != skeleton.num_joints()) {
                return Err(ControllerError::MaskMismatch { layer: i });
            }
        }
        // Fade weights after this update decide who is active and the sync rates.
        let mut weights: C::PerSlot<R> = Element::INIT;
        for (w, s) in weights.as_mut().iter_mut().zip(self.slots.as_ref()) {
            *w = match s.fade {
                Some(f) => Fade { elapsed: f.elapsed + dt.max(R::ZERO), ..f }.weight(),
                None => s.weight,
            };
        }
        let mut plan: C::PerSlot<Option<Plan<R>>> = Element::INIT;
        for (i, s) in self.slots.as_ref().iter().enumerate() {
            let Some(ci) = s.clip.filter(|_| s.active()) else { continue };
            let entry = clips.get(ci).ok_or(ControllerError::ClipOutOfRange { slot: i })?;
            let tracks = entry.clip.num_tracks();
            if tracks > S::MAX_TRACKS {
                return Err(ControllerError::TooManyTracks { tracks, capacity: S::MAX_TRACKS });
            }
            if entry.clip.joint_bound() > skeleton.num_joints() {
                return Err(ControllerError::Job(JobError::JointIndexOutOfRange));
            }
            plan.as_mut()[i] =
                Some(if s.synced { Plan::Cycles(self.sync_rate(s.layer, weights.as_ref()) * dt) } else { Plan::Time });
        }
        for (s, p) in self.slots.as_ref().iter().zip(plan.as_ref()) {
            match *p {
                Some(Plan::Time) => s.player.check_advance(dt)?,
                Some(Plan::Cycles(c)) => s.player.check_advance_cycles(c)?,
                None => {}
            }
        }
        Ok(plan)
    }

    /// Fades: every fading slot's weight moves on by `dt` seconds of real time (a negative `dt`
    /// counts as 0); a fade that reached its duration ends at its target weight.
    #[inline(always)]
    fn progress_fades(&mut self, dt: R) {
        let elapsed = dt.max(R::ZERO);
        for s in self.slots.as_mut() {
            if let Some(f) = &mut s.fade {
                f.elapsed += elapsed;
                s.weight = f.weight();
                if f.elapsed >= f.duration {
                    s.weight = f.to;
                    s.fade = None;
                }
            }
        }
    }

    /// Layer assembly, the weight algebra: each override layer's share of every joint, written
    /// to `shares` for the first `n` SoA elements. A slot's blend weight at joint `j` is its
    /// weight times its layer's share there.
    ///
    /// Override layers, from the last to the first, cover the ones below: a layer of weight
    /// `α`, mask `m(j)` (1 without mask) and active slots whose weights sum to `Σw` takes
    /// `c(j) = α · min(1, Σw) · m(j)` of what the layers above left at joint `j` (`r(j)`,
    /// starting at 1), and leaves `r(j) · (1 − c(j))` to the layers below. Its slots' blend
    /// weights at `j` are `wᵢ · α · m(j) · r(j)` (divided by `Σw` when `Σw > 1`), so they sum to
    /// `c(j) · r(j)`: linear in every weight. An upper-body layer at full weight replaces the base
    /// layer's upper body; an empty or zero-weight layer leaves the ones below untouched.
    ///
    /// Additive layers take no share: `blend` applies their slots' poses as deltas on top, with
    /// weight `layer weight × slot weight` and the layer mask as per-joint weights. The blend
    /// threshold (default 1) then fills in the rest pose where the override weights sum to less
    /// than it (a first clip fading in).
    ///
    /// Assumes `n ≤ C::SOA` and slot weights after this update's fades. Runs before the slots
    /// advance, which changes none of its inputs, so that root-motion extraction can weigh each
    /// slot's delta by its share at the root joint.
    #[inline(always)]
    fn weigh_layers(&self, n: usize, shares: &mut C::PerLayer<C::PerSoa<[R; 4]>>) {
        // Per layer: coverage α·min(1, Σw), and the factor turning slot weights into blend
        // weights that sum to that coverage (1/Σw when the slots sum to more than 1).
        let mut cover: C::PerLayer<R> = Element::INIT;
        let mut factor: C::PerLayer<R> = Element::INIT;
        let (cover_of, factor_of) = (cover.as_mut(), factor.as_mut());
        for l in 0..C::LAYERS {
            let sum = self
                .slots
                .as_ref()
                .iter()
                .filter(|s| s.layer == l && s.active())
                .fold(R::ZERO, |a, s| a + s.weight.max(R::ZERO));
            let alpha = self.layers.as_ref()[l].weight;
            cover_of[l] = alpha * sum.min(R::ONE);
            factor_of[l] = if sum > R::ONE { alpha / sum } else { alpha };
        }
        let terms: C::PerLayer<ShareTerms<'_, R>> = Buf::from_fn(|l| {
            let layer = &self.layers.as_ref()[l];
            ShareTerms {
                covers: layer.mode == LayerMode::Override,
                cover: cover.as_ref()[l],
                factor: factor.as_ref()[l],
                mask: layer.mask_joints.map(|_| layer.mask.as_ref()),
            }
        });
        override_shares(n, terms.as_ref(), shares.as_mut());
    }

    /// Advance and sample, slot by slot: each slot playing at the start of the update (planned
    /// in `plan`) restarts its root-motion measure if it must (`restart_root_measure`), advances
    /// its player as planned (reporting marker crossings to `on_event`, with the slot's weight
    /// after the fades) and, if still active after the fades, is sampled into its pose of
    /// `scratch` — made a delta from the rest pose in an additive layer with
    /// [`AdditiveReference::RestPose`], its root motion extracted in an override layer
    /// (`extract_root_motion`, which needs the shares of `weigh_layers`). Slots that do not play
    /// lose their root-motion measure; those that stopped playing also leave their phase sync.
    ///
    /// Returns the blend of the slots' root-motion deltas. Assumes `validate` passed (every clip
    /// given, within the cursor capacity and the skeleton, every step allowed): the errors are
    /// unreachable then.
    #[inline(always)]
    fn advance_and_sample(
        &mut self,
        dt: R,
        clips: &[ClipEntry<'_, R>],
        skeleton: SkeletonView<'_, R>,
        plan: &C::PerSlot<Option<Plan<R>>>,
        scratch: &mut ControllerScratch<R, C>,
        on_event: &mut impl FnMut(ControllerEvent<R>),
    ) -> Result<MotionBlend<R>, ControllerError> {
        let n = skeleton.num_soa_joints();
        let rest = skeleton.rest_pose();
        // Without root motion in the capacity, `root_rest` is `None` at compile time and the
        // measure and the extraction below are left out.
        let root_rest = self.root_settings.filter(|_| C::ROOT_MOTION).and_then(|r| skeleton.rest_transform(r.joint));
        let mut motion = MotionBlend::new();
        for i in 0..C::SLOTS {
            let slot = &mut self.slots.as_mut()[i];
            let (Some(ci), Some(plan)) = (slot.clip, plan.as_ref()[i]) else {
                // Measured afresh when it plays again.
                slot.root = None;
                continue;
            };
            let Some(entry) = clips.get(ci) else { continue };
            let mode = self.layers.as_ref()[slot.layer].mode;
            Self::restart_root_measure(slot, &entry.clip, mode, self.root_settings, root_rest, self.rotation);
            let weight = slot.weight;
            let report = |event: Event<R>| on_event(ControllerEvent { slot: i, clip: ci, weight, event });
            let step: Step = match plan {
                Plan::Time => slot.player.advance(dt, entry.markers, report)?,
                Plan::Cycles(c) => slot.player.advance_cycles(c, entry.markers, report)?,
            };
            slot.mark = (slot.player.phase_ticks(), slot.player.loops());
            if !slot.active() {
                slot.root = None;
                slot.synced = false;
                continue;
            }
            let pose = &mut scratch.poses.as_mut()[i].as_mut()[..n];
            SamplingJob {
                clip: entry.clip,
                time: slot.player.time(),
                rotation: self.rotation,
                rest_pose: rest,
                cursor: S::entries(&mut slot.cursor),
                output: pose,
            }
            .run()?;
            if C::ADDITIVE && mode == LayerMode::Additive(AdditiveReference::RestPose) {
                for (p, r) in pose.iter_mut().zip(rest) {
                    for l in 0..4 {
                        p.set_lane(l, &make_additive(&p.lane(l), &r.lane(l)));
                    }
                }
            }
            if C::ROOT_MOTION {
                Self::extract_root_motion(slot, pose, scratch.shares.as_ref(), step.wraps, &mut motion);
            }
        }
        Ok(motion)
    }

    /// The root-motion measure of a slot about to advance, in a layer of mode `mode`: kept, or
    /// (re)started at the player's time before the step after a seek, a clip change, a pause in
    /// playing or new settings; dropped without root motion (`settings` or the root joint's rest
    /// transform `root_rest` missing) and outside override layers.
    #[inline(always)]
    fn restart_root_measure(
        slot: &mut Slot<R, C, S>,
        clip: &Clip<'_>,
        mode: LayerMode,
        settings: Option<RootMotionSettings>,
        root_rest: Option<Transform<R>>,
        rotation: RotationInterpolation,
    ) {
        let seeked = (slot.player.phase_ticks(), slot.player.loops()) != slot.mark;
        match (settings, root_rest) {
            (Some(settings), Some(root_rest)) if mode == LayerMode::Override => {
                if seeked || slot.root.is_none_or(|t| t.settings != settings) {
                    let mut t = RootMotionTracker::from_clip(clip, settings, root_rest, rotation);
                    let at = sample_joint(clip, settings.joint, slot.player.time(), root_rest, rotation);
                    t.reset(Motion::extract(&at, &settings));
                    slot.root = Some(t);
                }
            }
            _ => slot.root = None,
        }
    }

    /// Root-motion extraction, for a slot of an override layer just sampled into `pose` while
    /// root motion is on (the slot has a measure, see `restart_root_measure`): the measure
    /// takes the root joint's motion over the step (`wraps` loops crossed), the motion is
    /// removed from the pose (in place) and its delta is added to `motion` with the slot's blend
    /// weight at the root joint (slot weight × layer share, from `weigh_layers`). Other slots are
    /// left alone.
    #[inline(always)]
    fn extract_root_motion(
        slot: &mut Slot<R, C, S>,
        pose: &mut [SoaTransform<R>],
        shares: &[C::PerSoa<[R; 4]>],
        wraps: i64,
        motion: &mut MotionBlend<R>,
    ) {
        if let Some(tracker) = &mut slot.root {
            let (g, l) = (tracker.settings.joint / 4, tracker.settings.joint % 4);
            let root = pose[g].lane(l);
            let delta = tracker.update(Motion::extract(&root, &tracker.settings), wraps);
            pose[g].set_lane(l, &tracker.remove(&root));
            motion.add(delta, slot.weight * shares[slot.layer].as_ref()[g][l]);
        }
    }

    /// Blend: one [`BlendingJob`] over the first `n` SoA elements (the skeleton's, whose rest
    /// pose is `rest_pose`) into `output`, with each
    /// active override slot of positive weight as a normal layer (its weight, its layer's shares
    /// as per-joint weights) and each additive one as an additive layer (slot weight × layer
    /// weight, the layer's mask if it has one), in slot order, and the controller's threshold.
    /// Assumes the poses and shares of `scratch` were made by this update's passes.
    #[inline(always)]
    fn blend(
        &self,
        n: usize,
        rest_pose: &[SoaTransform<R>],
        scratch: &ControllerScratch<R, C>,
        output: &mut [SoaTransform<R>],
    ) -> Result<(), JobError> {
        // Each list holds at most one layer per slot.
        let mut normal: C::PerSlot<Layer<'_, R>> = Element::INIT;
        let mut additive: C::PerSlot<Layer<'_, R>> = Element::INIT;
        let (mut normals, mut additives) = (0, 0);
        for (i, s) in self.slots.as_ref().iter().enumerate() {
            if !s.active() || s.weight <= R::ZERO {
                continue;
            }
            let layer = &self.layers.as_ref()[s.layer];
            let transform = &scratch.poses.as_ref()[i].as_ref()[..n];
            let (list, len, entry) = match layer.mode {
                LayerMode::Override => {
                    let shares = &scratch.shares.as_ref()[s.layer].as_ref()[..n];
                    (&mut normal, &mut normals, Layer { transform, weight: s.weight, joint_weights: Some(shares) })
                }
                LayerMode::Additive(_) if C::ADDITIVE => {
                    let mask = layer.mask_joints.map(|_| &layer.mask.as_ref()[..n]);
                    (
                        &mut additive,
                        &mut additives,
                        Layer { transform, weight: s.weight * layer.weight, joint_weights: mask },
                    )
                }
                // Refused by `set_layer` in a capacity without additive layers.
                LayerMode::Additive(_) => continue,
            };
            // A list holds a layer per slot: the entry is always there.
            if let Some(e) = list.as_mut().get_mut(*len) {
                *e = entry;
                *len += 1;
            }
        }
        BlendingJob {
            layers: normal.as_ref().get(..normals).unwrap_or(&[]),
            additive: additive.as_ref().get(..additives).unwrap_or(&[]),
            rest_pose,
            threshold: self.threshold,
            output,
        }
        .run()
    }
}

/// No layer: an empty pose at weight 0 (the blend lists' unused entries).
impl<R: Real> Element for Layer<'_, R> {
    const INIT: Self = Layer { transform: &[], weight: R::ZERO, joint_weights: None };
}

/// One layer's terms in the override share algebra of the controller's layers (shared by the
/// controller, [`crate::graph::LayeredStateMachine`] and callers of [`layer_shares`]).
#[derive(Debug, Clone, Copy)]
pub struct ShareTerms<'m, R> {
    /// An override layer (additive layers take no share and cover nothing).
    pub covers: bool,
    /// Its coverage `α · min(1, Σw)`: the layer's weight `α` times its slots' summed weight
    /// `Σw`, at most 1.
    pub cover: R,
    /// The factor turning its slot weights into blend weights (`α`, or `α / Σw` when `Σw > 1`).
    pub factor: R,
    /// Its per-joint mask (SoA layout), `None` for every joint.
    pub mask: Option<&'m [[R; 4]]>,
}

/// The override layers' per-joint shares, as a [`Controller`](super::Controller) weighs its
/// layers: from the last layer of `terms` to the first, each takes `factor · m(j) · r(j)` of
/// joint `j`, where `m` is its mask and `r(j)` (starting at 1) what the layers above left,
/// and leaves `r(j) · (1 − cover · m(j))` to the layers below. Layer `l`'s shares of the first
/// `n` SoA elements go to `shares[l]` (those of additive layers are untouched); they are the
/// per-joint weights of a [`BlendingJob`](crate::job::BlendingJob)'s layers.
///
/// # Errors
///
/// [`JobError::OutputTooSmall`] when `shares` has fewer entries than `terms` or an entry
/// fewer than `n` elements; [`JobError::InputTooSmall`] for a mask of fewer than `n`
/// elements. Nothing is written then.
pub fn layer_shares<R: Real, S: AsMut<[[R; 4]]>>(
    n: usize,
    terms: &[ShareTerms<'_, R>],
    shares: &mut [S],
) -> Result<(), JobError> {
    if shares.len() < terms.len() || shares.iter_mut().take(terms.len()).any(|s| s.as_mut().len() < n) {
        return Err(JobError::OutputTooSmall);
    }
    if terms.iter().any(|t| t.mask.is_some_and(|m| m.len() < n)) {
        return Err(JobError::InputTooSmall);
    }
    override_shares(n, terms, shares);
    Ok(())
}

/// A layer that covers nothing.
impl<R: Real> Element for ShareTerms<'_, R> {
    const INIT: Self = ShareTerms { covers: false, cover: R::ZERO, factor: R::ZERO, mask: None };
}

/// The override layers' shares of every joint of the first `n` SoA elements, written to
/// `shares[l]` for layer `l` of `terms`: from the last layer to the first, each takes
/// `factor · m(j) · r(j)` where `r(j)` (starting at 1) is what the layers above left, and
/// leaves `r(j) · (1 − cover · m(j))` to the layers below (see `weigh_layers`). Assumes
/// `n` within `shares`' SoA elements and masks of at least `n` elements; `shares` of additive layers are untouched.
#[inline(always)]
pub(crate) fn override_shares<R: Real, S: AsMut<[[R; 4]]>>(n: usize, terms: &[ShareTerms<'_, R>], shares: &mut [S]) {
    for e in 0..n {
        let mut remaining = [R::ONE; 4];
        for (t, share) in terms.iter().zip(shares.iter_mut()).rev() {
            if !t.covers {
                continue;
            }
            let share = share.as_mut();
            for k in 0..4 {
                let m = t.mask.map_or(R::ONE, |m| m[e][k]);
                share[e][k] = t.factor * m * remaining[k];
                remaining[k] *= R::ONE - t.cover * m;
            }
        }
    }
}
