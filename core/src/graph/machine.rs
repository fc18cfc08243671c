//! [`StateMachine`]: a [`Graph`] running on a one-layer controller — parameters, transition
//! choice, state and blend-space weights, phase sync, and inertialization around the
//! controller's update.

use super::inertia::Inertia;
use super::space::{weights_1d, weights_2d, MAX_BLEND_POINTS};
use super::{Graph, GraphError, ParameterKind, StateKind, Test, TransitionBlend};
use crate::capacity::{Capacity, Element};
use crate::controller::{
    ClipEntry, ClipId, Controller, ControllerError, ControllerScratch, FadeCurve, LayerId, SlotId,
};
use crate::job::JobError;
use crate::math::SoaTransform;
use crate::player::{Event, LoopMode, Player, PlayerError};
use crate::real::Real;
use crate::root_motion::{Motion, RootMotionSettings};
use crate::skeleton::SkeletonView;

/// A marker crossing, with the state and clip that played it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GraphEvent<R> {
    /// The state playing the clip.
    pub state: usize,
    /// The clip index.
    pub clip: usize,
    /// The clip's weight in the blend after this update, in `[0, 1]`.
    pub weight: R,
    /// The crossing.
    pub event: Event<R>,
}

/// The transition in progress.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransitionStatus<R> {
    /// Its index in the graph.
    pub transition: usize,
    /// The state it leaves.
    pub from: usize,
    /// The state it enters (the current state).
    pub to: usize,
    /// Elapsed over duration, in `[0, 1]`.
    pub progress: R,
}

/// A clip slot's owner: a state and its blend point (0 for a clip state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Owner {
    state: usize,
    point: usize,
}

#[derive(Debug, Clone, Copy)]
struct Running<R> {
    index: usize,
    from: usize,
    elapsed: R,
    duration: R,
    blend: TransitionBlend,
    /// Fired during this update.
    fresh: bool,
}

/// Clip slots `graph` needs: the most clips of a state, and for each crossfade the clips of its
/// source (for an any-state transition, of the largest other state) and of its destination.
fn slots_needed<R: Real>(graph: &Graph<'_, R>) -> usize {
    let clips = |s: usize| graph.clips_of(s).map_or(0, |c| c.len());
    let crossfades = graph.transitions.iter().filter(|t| matches!(t.blend, TransitionBlend::Crossfade { .. }));
    crossfades
        .map(|t| {
            let from = match t.from {
                Some(f) => clips(f),
                None => (0..graph.states.len()).filter(|&s| s != t.to).map(clips).max().unwrap_or(0),
            };
            from + clips(t.to)
        })
        .fold(graph.max_state_clips(), usize::max)
}

/// A character driven by a [`Graph`]. See the [module documentation](super).
///
/// Its sizes are those of the [`Capacity`] `C`: `C::SOA`, the pose capacity in SoA elements;
/// `C::SLOTS`, the clip slots (the most clips of a state, and for each crossfade the clips of
/// its two states, which play together; an inertialized transition plays its destination
/// alone); `C::TRACKS`, the most tracks of a clip; `C::PARAMS`, the most parameters. The
/// machine plays on its controller's base layer: a `C` with more than one layer (the
/// [`capacity!`](crate::capacity!) default is one) leaves the others unused.
///
/// # Examples
///
/// Walk until the speed rises, then run, with an inertialized switch:
///
/// ```
/// use sinew::asset::Asset;
/// use sinew::controller::{ClipEntry, ControllerScratch};
/// use sinew::graph::*;
/// use sinew::math::SoaTransform;
/// use sinew::skeleton::Skeleton;
///
/// sinew::capacity! {
///     /// 24 joints, 2 slots (a crossfade's two clips), 1 parameter.
///     pub struct Walker { joints: 24, slots: 2, params: 1 }
/// }
///
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));
/// let asset = Asset::parse(bytes)?;
/// let skeleton: Skeleton<f32, { Walker::SOA }> = asset.skeleton().ok_or("no skeleton")?.to_skeleton()?;
/// let clips = [ClipEntry::new(asset.clip_by_name("walk").ok_or("no walk")?),
///              ClipEntry::new(asset.clip_by_name("run").ok_or("no run")?)];
///
/// let parameters = [Parameter { name: "speed", kind: ParameterKind::Float(0.0) }];
/// let states = [State { name: "walk", kind: StateKind::Clip(0), looping: true },
///               State { name: "run", kind: StateKind::Clip(1), looping: true }];
/// let conditions = [Condition { parameter: 0, test: Test::Greater(2.0) }];
/// let transitions = [Transition { from: Some(0), to: 1, conditions: Span::new(0, 1), exit_time: None,
///                                 duration: 0.3, blend: TransitionBlend::Inertialize }];
/// let graph = Graph { parameters: &parameters, states: &states, transitions: &transitions,
///                     points: &[], conditions: &conditions, initial: 0 };
///
/// let mut character = StateMachine::<f32, Walker>::new(graph, &clips)?;
/// let mut scratch = ControllerScratch::new();
/// let mut pose = [SoaTransform::IDENTITY; Walker::SOA];
/// for frame in 0..40 {
///     if frame == 30 {
///         character.set_float(0, 3.0)?;
///     }
///     character.update(1.0 / 60.0, &clips, skeleton.view(), &mut scratch, &mut pose, |_| {})?;
/// }
/// assert_eq!(character.current_state(), 1);
/// assert!(character.transition().is_some()); // 0.3 s of decay, half of it done
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct StateMachine<'g, R: Real, C: Capacity> {
    graph: Graph<'g, R>,
    controller: Controller<R, C>,
    values: C::PerParam<R>,
    current: usize,
    running: Option<Running<R>>,
    owner: C::PerSlot<Option<Owner>>,
    inertia: Inertia<R, C>,
    root: Option<RootMotionSettings>,
}

/// [`StateMachine::empty`].
impl<R: Real, C: Capacity> Element for StateMachine<'_, R, C> {
    const INIT: Self = Self::empty();
}

impl<'g, R: Real, C: Capacity> StateMachine<'g, R, C> {
    /// A state machine for `graph` over `clips` (the same list every update takes), in its
    /// initial state with every parameter at its default.
    ///
    /// # Errors
    ///
    /// What [`Graph::validate`] finds, [`GraphError::TooManyParameters`],
    /// [`GraphError::TooManySlots`], or [`GraphError::Controller`] with
    /// [`ControllerError::TooManyTracks`] for a clip of the graph with more than `C::TRACKS`.
    pub fn new(graph: Graph<'g, R>, clips: &[ClipEntry<'_, R>]) -> Result<Self, GraphError> {
        let mut m = Self::empty();
        m.reset(graph, clips)?;
        Ok(m)
    }

    /// A state machine over the empty graph (no parameters, no states): it plays nothing (an update
    /// outputs the rest pose). A `const fn`, so a `static` can hold one for
    /// [`StateMachine::reset`] to build the real machine in place (without the copy a
    /// [`StateMachine::new`] returned by value makes, which matters on a small stack).
    #[must_use]
    pub const fn empty() -> Self {
        StateMachine {
            graph: Graph { parameters: &[], states: &[], transitions: &[], points: &[], conditions: &[], initial: 0 },
            controller: Controller::new(),
            values: Element::INIT,
            current: 0,
            running: None,
            owner: Element::INIT,
            inertia: Inertia::new(),
            root: None,
        }
    }

    /// Makes this machine what [`StateMachine::new`]`(graph, clips)` returns, in place: checks
    /// `graph` first (nothing changes on an error), then resets every field (root motion off).
    ///
    /// # Errors
    ///
    /// Those of [`StateMachine::new`].
    pub fn reset(&mut self, graph: Graph<'g, R>, clips: &[ClipEntry<'_, R>]) -> Result<(), GraphError> {
        graph.validate(clips.len())?;
        if graph.parameters.len() > C::PARAMS {
            return Err(GraphError::TooManyParameters { count: graph.parameters.len(), capacity: C::PARAMS });
        }
        let needed = slots_needed(&graph);
        if needed > C::SLOTS {
            return Err(GraphError::TooManySlots { needed, capacity: C::SLOTS });
        }
        for s in 0..graph.states.len() {
            let Some(c) = graph.clips_of(s) else { continue };
            for k in 0..c.len() {
                let tracks = c.clip(k).and_then(|i| clips.get(i)).map_or(0, |e| e.clip.num_tracks());
                if tracks > C::TRACKS {
                    return Err(ControllerError::TooManyTracks { tracks, capacity: C::TRACKS }.into());
                }
            }
        }
        self.values = Element::INIT;
        for (v, p) in self.values.as_mut().iter_mut().zip(graph.parameters) {
            *v = match p.kind {
                ParameterKind::Float(x) => x,
                ParameterKind::Bool(b) => {
                    if b {
                        R::ONE
                    } else {
                        R::ZERO
                    }
                }
                ParameterKind::Trigger => R::ZERO,
            };
        }
        self.graph = graph;
        self.controller.reset();
        self.current = graph.initial;
        self.running = None;
        self.owner = Element::INIT;
        self.inertia.reset();
        self.root = None;
        self.enter(graph.initial, clips);
        // The initial state plays at full weight from the first update.
        self.set_weights();
        Ok(())
    }

    /// The graph.
    #[must_use]
    pub fn graph(&self) -> &Graph<'g, R> {
        &self.graph
    }

    /// The controller underneath (its slots, players and weights, read-only).
    #[must_use]
    pub fn controller(&self) -> &Controller<R, C> {
        &self.controller
    }

    /// The current state (the destination while a transition runs).
    #[must_use]
    pub fn current_state(&self) -> usize {
        self.current
    }

    /// The transition in progress, if any.
    #[must_use]
    pub fn transition(&self) -> Option<TransitionStatus<R>> {
        self.running.map(|r| TransitionStatus {
            transition: r.index,
            from: r.from,
            to: self.current,
            progress: if r.duration > R::ZERO { (r.elapsed / r.duration).clamp(R::ZERO, R::ONE) } else { R::ONE },
        })
    }

    /// Cycles the current state has played since it was entered: its heaviest clip's loops plus
    /// phase (what exit times compare with).
    #[must_use]
    pub fn state_time(&self) -> R {
        let mut best: Option<(usize, R)> = None;
        for (i, o) in self.owner.as_ref().iter().enumerate() {
            if o.is_some_and(|o| o.state == self.current) {
                let w = self.controller.weight(i).unwrap_or(R::ZERO);
                if best.is_none_or(|(_, b)| w > b) {
                    best = Some((i, w));
                }
            }
        }
        let Some(p) = best.and_then(|(i, _)| self.controller.player(i)) else { return R::ZERO };
        R::from_i32(p.loops().clamp(0, i32::MAX as i64) as i32) + p.normalized()
    }

    /// Parameter `parameter`'s value: the number of a float, 1 or 0 for a bool or a trigger.
    #[must_use]
    pub fn value(&self, parameter: usize) -> Option<R> {
        self.values.as_ref().get(parameter).copied().filter(|_| parameter < self.graph.parameters.len())
    }

    fn kind(&self, parameter: usize) -> Result<ParameterKind<R>, GraphError> {
        self.graph.parameters.get(parameter).map(|p| p.kind).ok_or(GraphError::UnknownParameter)
    }

    /// Sets float parameter `parameter`.
    ///
    /// # Errors
    ///
    /// [`GraphError::UnknownParameter`], [`GraphError::ParameterKind`] (not a float),
    /// [`GraphError::NonFiniteValue`].
    pub fn set_float(&mut self, parameter: usize, value: R) -> Result<(), GraphError> {
        if !matches!(self.kind(parameter)?, ParameterKind::Float(_)) {
            return Err(GraphError::ParameterKind { parameter });
        }
        if !value.is_finite() {
            return Err(GraphError::NonFiniteValue);
        }
        self.values.as_mut()[parameter] = value;
        Ok(())
    }

    /// Sets bool parameter `parameter`.
    ///
    /// # Errors
    ///
    /// [`GraphError::UnknownParameter`], [`GraphError::ParameterKind`] (not a bool).
    pub fn set_bool(&mut self, parameter: usize, value: bool) -> Result<(), GraphError> {
        if !matches!(self.kind(parameter)?, ParameterKind::Bool(_)) {
            return Err(GraphError::ParameterKind { parameter });
        }
        self.values.as_mut()[parameter] = if value { R::ONE } else { R::ZERO };
        Ok(())
    }

    /// Sets trigger `parameter` (`true`) or clears it (`false`); a set trigger stays set until
    /// a transition testing it fires.
    ///
    /// # Errors
    ///
    /// [`GraphError::UnknownParameter`], [`GraphError::ParameterKind`] (not a trigger).
    pub fn fire(&mut self, parameter: usize, set: bool) -> Result<(), GraphError> {
        if !matches!(self.kind(parameter)?, ParameterKind::Trigger) {
            return Err(GraphError::ParameterKind { parameter });
        }
        self.values.as_mut()[parameter] = if set { R::ONE } else { R::ZERO };
        Ok(())
    }

    /// Turns root-motion extraction on or off (see
    /// [`Controller::set_root_motion`](crate::controller::Controller::set_root_motion)).
    ///
    /// # Errors
    ///
    /// [`GraphError::Controller`] with [`ControllerError::NoRootMotion`] for settings when
    /// the capacity has no root motion; nothing changes.
    pub fn set_root_motion(&mut self, settings: Option<RootMotionSettings>) -> Result<(), GraphError> {
        self.controller.set_root_motion(settings)?;
        self.root = settings;
        Ok(())
    }

    /// The root displacement of the last update.
    #[must_use]
    pub fn root_motion_delta(&self) -> Motion<R> {
        self.controller.root_motion_delta()
    }

    /// The root displacement accumulated since creation.
    #[must_use]
    pub fn root_motion_total(&self) -> Motion<R> {
        self.controller.root_motion_total()
    }

    /// Runs one frame of `dt` seconds: chooses a transition if none runs, weighs the states'
    /// clips, advances, samples and blends them into `output` (the local pose, at least
    /// `skeleton.num_soa_joints()` elements), applies the inertialization offset, and reports
    /// marker crossings of every playing clip to `on_event`. `clips` must be the list given to
    /// [`new`](Self::new); `scratch` is shared by characters updated in turn.
    ///
    /// # Errors
    ///
    /// [`GraphError::NegativeStep`], [`GraphError::Clip`] (a clip of the graph missing from
    /// `clips`), or [`GraphError::Controller`]: a non-finite or too long step, a skeleton
    /// beyond `C::SOA`, a short output, a clip with more than `C::TRACKS` tracks or animating joints
    /// past the skeleton, a root-motion joint past it. All are checked before anything
    /// changes: on error the state machine and `output` are untouched and no event is reported.
    pub fn update(
        &mut self,
        dt: R,
        clips: &[ClipEntry<'_, R>],
        skeleton: SkeletonView<'_, R>,
        scratch: &mut ControllerScratch<R, C>,
        output: &mut [SoaTransform<R>],
        mut on_event: impl FnMut(GraphEvent<R>),
    ) -> Result<(), GraphError> {
        self.check(dt, clips, skeleton, output.len())?;
        let joints = skeleton.num_joints();
        if self.running.is_none() {
            if let Some(t) = self.choose() {
                self.start_transition(t, clips);
            }
        }
        if let Some(r) = &mut self.running {
            if r.fresh {
                r.fresh = false;
            } else {
                r.elapsed += dt;
            }
        }
        self.set_weights();
        let owner = self.owner.as_ref();
        self.controller.update(dt, clips, skeleton, scratch, output, |e| {
            if let Some(Some(o)) = owner.get(e.slot) {
                on_event(GraphEvent { state: o.state, clip: e.clip, weight: e.weight, event: e.event });
            }
        })?;
        if let Some(r) = self.running {
            if r.blend == TransitionBlend::Inertialize {
                if r.elapsed == R::ZERO {
                    self.inertia.capture(output, joints, dt);
                } else {
                    self.inertia.measure_target(output, joints, dt);
                }
                self.inertia.apply(output, joints, r.elapsed, r.duration);
            }
            if r.elapsed >= r.duration {
                self.release(r.from);
                self.running = None;
                self.set_weights();
            }
        }
        let decaying = self.running.is_some_and(|r| r.blend == TransitionBlend::Inertialize);
        self.inertia.record(output, joints, dt, decaying);
        Ok(())
    }

    /// Everything `update` needs, checked before anything changes: afterwards the controller's
    /// update cannot fail.
    pub(super) fn check(
        &self,
        dt: R,
        clips: &[ClipEntry<'_, R>],
        skeleton: SkeletonView<'_, R>,
        output_len: usize,
    ) -> Result<(), GraphError> {
        if !dt.is_finite() {
            return Err(ControllerError::Player(PlayerError::NonFiniteDelta).into());
        }
        if dt < R::ZERO {
            return Err(GraphError::NegativeStep);
        }
        let n = skeleton.num_soa_joints();
        if n > C::SOA {
            return Err(ControllerError::SkeletonTooLarge.into());
        }
        if output_len < n {
            return Err(ControllerError::Job(JobError::OutputTooSmall).into());
        }
        if self.root.is_some_and(|r| r.joint >= skeleton.num_joints()) {
            return Err(ControllerError::Job(JobError::JointIndexOutOfRange).into());
        }
        // The shortest clip bounds the loops any slot crosses: synced slots advance at a
        // weighted mean of their clips' rates, never faster than the shortest clip's.
        let mut shortest: Option<Player<R>> = None;
        for s in 0..self.graph.states.len() {
            let c = self.graph.clips_of(s).ok_or(GraphError::Points { state: s })?;
            for k in 0..c.len() {
                let entry = c.clip(k).and_then(|i| clips.get(i)).ok_or(GraphError::Clip { state: s })?;
                let tracks = entry.clip.num_tracks();
                if tracks > C::TRACKS {
                    return Err(ControllerError::TooManyTracks { tracks, capacity: C::TRACKS }.into());
                }
                if entry.clip.joint_bound() > skeleton.num_joints() {
                    return Err(ControllerError::Job(JobError::JointIndexOutOfRange).into());
                }
                let p = Player::new(&entry.clip);
                if p.duration_ticks() > 0 && shortest.as_ref().is_none_or(|q| p.duration_ticks() < q.duration_ticks()) {
                    shortest = Some(p);
                }
            }
        }
        if let Some(p) = shortest {
            p.check_advance(dt).map_err(ControllerError::Player)?;
        }
        Ok(())
    }

    /// The first transition that can fire now.
    fn choose(&self) -> Option<usize> {
        let time = self.state_time();
        self.graph.transitions.iter().position(|t| {
            let from_ok = match t.from {
                Some(f) => f == self.current,
                None => t.to != self.current,
            };
            from_ok
                && t.exit_time.is_none_or(|e| time >= e)
                && t.conditions.of(self.graph.conditions).is_some_and(|cs| {
                    cs.iter().all(|c| {
                        let v = self.values.as_ref().get(c.parameter).copied().unwrap_or(R::ZERO);
                        match c.test {
                            Test::Greater(x) => v > x,
                            Test::Less(x) => v < x,
                            Test::AtLeast(x) => v >= x,
                            Test::AtMost(x) => v <= x,
                            Test::True | Test::Triggered => v != R::ZERO,
                            Test::False => v == R::ZERO,
                        }
                    })
                })
        })
    }

    /// Fires transition `index`: consumes its triggers and enters its destination.
    fn start_transition(&mut self, index: usize, clips: &[ClipEntry<'_, R>]) {
        let Some(t) = self.graph.transitions.get(index).copied() else { return };
        for c in t.conditions.of(self.graph.conditions).unwrap_or(&[]) {
            if c.test == Test::Triggered {
                if let Some(v) = self.values.as_mut().get_mut(c.parameter) {
                    *v = R::ZERO;
                }
            }
        }
        let from = self.current;
        if t.blend == TransitionBlend::Inertialize {
            self.release(from);
        }
        self.current = t.to;
        self.enter(t.to, clips);
        self.running =
            Some(Running { index, from, elapsed: R::ZERO, duration: t.duration, blend: t.blend, fresh: true });
    }

    /// Puts state `state`'s clips in free slots, with fresh players (weight 0).
    fn enter(&mut self, state: usize, clips: &[ClipEntry<'_, R>]) {
        let Some(c) = self.graph.clips_of(state) else { return };
        let looping = self.graph.states.get(state).is_none_or(|s| s.looping);
        let mut slot = 0;
        for point in 0..c.len() {
            while slot < C::SLOTS && self.owner.as_ref()[slot].is_some() {
                slot += 1;
            }
            let (Some(ci), true) = (c.clip(point), slot < C::SLOTS) else { return };
            // Checked in `new` and `check`: a clip given, within SLOTS, TRACKS and the layers.
            if self.controller.assign(SlotId(slot), LayerId(0), ClipId(ci), clips).is_ok() {
                if let Some(p) = self.controller.player_mut(slot) {
                    p.set_mode(if looping { LoopMode::Loop } else { LoopMode::Once });
                }
                self.owner.as_mut()[slot] = Some(Owner { state, point });
            }
        }
    }

    /// Empties the slots of state `state`. Runs once per transition: kept out of line, out of
    /// the per-frame update's code.
    #[inline(never)]
    fn release(&mut self, state: usize) {
        for (i, o) in self.owner.as_mut().iter_mut().enumerate() {
            if o.is_some_and(|o| o.state == state) {
                *o = None;
                let _ = self.controller.clear(i);
            }
        }
    }

    /// The blend weights of state `state`'s points.
    fn point_weights(&self, state: usize) -> [R; MAX_BLEND_POINTS] {
        let mut w = [R::ZERO; MAX_BLEND_POINTS];
        let value = |p: usize| self.values.as_ref().get(p).copied().unwrap_or(R::ZERO);
        match self.graph.states.get(state).map(|s| s.kind) {
            Some(StateKind::Clip(_)) => w[0] = R::ONE,
            Some(StateKind::Blend1d { parameter, points, .. }) => {
                weights_1d(points.of(self.graph.points).unwrap_or(&[]), value(parameter), &mut w);
            }
            Some(StateKind::Blend2d { x, y, points, .. }) => {
                weights_2d(points.of(self.graph.points).unwrap_or(&[]), [value(x), value(y)], &mut w);
            }
            None => {}
        }
        w
    }

    fn synced(&self, state: usize) -> bool {
        matches!(
            self.graph.states.get(state).map(|s| s.kind),
            Some(StateKind::Blend1d { sync: true, .. } | StateKind::Blend2d { sync: true, .. })
        )
    }

    /// Slot weights (state weight × point weight) and speeds (phase sync), with the phase of a
    /// synced clip rising from weight zero moved to its group's.
    fn set_weights(&mut self) {
        let (incoming, from, sync_both) = match self.running {
            Some(r) => {
                let s = if r.duration > R::ZERO { (r.elapsed / r.duration).clamp(R::ZERO, R::ONE) } else { R::ONE };
                match r.blend {
                    TransitionBlend::Crossfade { curve, sync } => {
                        let s = match curve {
                            FadeCurve::Linear => s,
                            FadeCurve::SmoothStep => s * s * (R::from_i32(3) - R::TWO * s),
                        };
                        (s, Some(r.from), sync)
                    }
                    TransitionBlend::Inertialize => (R::ONE, None, false),
                }
            }
            None => (R::ONE, None, false),
        };
        let current_w = self.point_weights(self.current);
        let from_w = from.map(|f| self.point_weights(f));
        let mut new_weights: C::PerSlot<R> = Element::INIT;
        let new = new_weights.as_mut();
        // Sync group per slot: 1 = the current state's, 2 = the source's (the same as the
        // current's in a synced crossfade), 0 = none.
        let mut groups: C::PerSlot<u8> = Element::INIT;
        let group = groups.as_mut();
        for (i, o) in self.owner.as_ref().iter().enumerate() {
            let Some(o) = o else { continue };
            if o.state == self.current {
                new[i] = incoming * current_w.get(o.point).copied().unwrap_or(R::ZERO);
                group[i] = if self.synced(o.state) || sync_both { 1 } else { 0 };
            } else if Some(o.state) == from {
                let w = from_w.map_or(R::ZERO, |fw| fw.get(o.point).copied().unwrap_or(R::ZERO));
                new[i] = (R::ONE - incoming) * w;
                group[i] = if sync_both {
                    1
                } else if self.synced(o.state) {
                    2
                } else {
                    0
                };
            }
        }
        for g in [1u8, 2] {
            self.sync_group(g, group, new);
        }
        for i in 0..C::SLOTS {
            if self.owner.as_ref()[i].is_some() {
                let _ = self.controller.set_weight(i, new[i]);
                if group[i] == 0 {
                    if let Some(p) = self.controller.player_mut(i) {
                        p.set_speed(R::ONE);
                    }
                }
            }
        }
    }

    /// Phase sync of the slots of group `g`: a slot rising from weight zero jumps to the
    /// normalized phase of the group's heaviest playing slot; all advance at the weighted mean
    /// of their normalized rates.
    fn sync_group(&mut self, g: u8, group: &[u8], new: &[R]) {
        let mut leader: Option<(usize, R)> = None;
        let (mut rate, mut total) = (R::ZERO, R::ZERO);
        for i in 0..C::SLOTS {
            if group[i] != g {
                continue;
            }
            let old = self.controller.weight(i).unwrap_or(R::ZERO);
            if old > R::ZERO && leader.is_none_or(|(_, w)| old > w) {
                leader = Some((i, old));
            }
            let cycle = self.controller.player(i).map_or(R::ZERO, Player::cycle_duration);
            if new[i] > R::ZERO && cycle > R::ZERO {
                rate += new[i] / cycle;
                total += new[i];
            }
        }
        if total > R::ZERO {
            rate = rate / total;
        }
        let phase = leader.and_then(|(l, _)| self.controller.player(l)).map(Player::normalized);
        for i in 0..C::SLOTS {
            if group[i] != g {
                continue;
            }
            let old = self.controller.weight(i).unwrap_or(R::ZERO);
            let Some(p) = self.controller.player_mut(i) else { continue };
            if let (Some(phase), true) = (phase, old <= R::ZERO && new[i] > R::ZERO) {
                p.set_normalized(phase);
            }
            if total > R::ZERO {
                let cycle = p.cycle_duration();
                p.set_speed(rate * cycle);
            }
        }
    }
}
