//! Layers with their own state machines: a [`LayeredGraph`] (a base [`Graph`] and
//! [`GraphLayer`]s sharing its parameters), the [`LayeredStateMachine`] that runs one, its
//! working memory ([`LayeredScratch`]) and its errors ([`LayerError`]).
//!
//! # Layers
//!
//! Layer 0 is the base graph; layers 1… are [`GraphLayer`]s, each a sub-graph (its own states,
//! transitions, blend points, conditions and initial state) with a [`LayerMode`], a weight in
//! `[0, 1]` and a mask ([`Channel`]s of [`crate::job::mask`]: joint subtrees or index ranges, with
//! their fade-in ramp of per-joint weights; no channel: every joint).
//!
//! **One parameter set.** Every layer's conditions and blend spaces read the base graph's
//! parameters (indices into `base.parameters`): a game sets `speed` once and every layer sees
//! it. A trigger is seen by every layer in the update that consumes it: each layer's first
//! transition that can fire does, then the trigger is cleared for all of them (a `jump`
//! trigger can move the base to its jump state and an upper-body layer to its arms-up state in
//! the same update).
//!
//! # Update
//!
//! Each layer's machine runs as a [`StateMachine`] (its transitions, blend spaces, phase sync
//! and inertialization) into its own pose, then the poses combine as the
//! [`Controller`](crate::controller::Controller)'s layers do, with its share algebra and one
//! [`BlendingJob`]:
//!
//! - **override** layers, from the last to the first, cover the ones below in proportion to
//!   their weight `α` and mask `m(j)`: a layer takes `α · m(j)` of what the layers above left
//!   at joint `j`, the base takes the rest (a masked upper-body layer at weight 1 replaces the
//!   base's upper body);
//! - **additive** layers apply their pose as a delta on top, with weight `α` and their mask as
//!   per-joint weights: with [`AdditiveReference::RestPose`] the pose is first made a delta
//!   from the skeleton's rest pose, with [`AdditiveReference::Baked`] the clips hold deltas
//!   already.
//!
//! A layer at weight 0 still runs (its states advance and its transitions fire, so it resumes
//! in step) but takes no part in the blend: with every layer at weight 0 the output is the
//! base's pose, bit for bit. Layer weights are set at once ([`set_layer_weight`]) or faded
//! ([`fade_layer`], over real time like [`Controller::fade_to`]).
//!
//! **Root motion** comes from the base layer: with it on, every layer's pose has the root
//! joint's motion taken out (so a layer covering the root does not drag it back), and the
//! displacement reported is the base's. **Events** come from every layer's playing clips, each
//! with its layer ([`LayerEvent`]), the base's first.
//!
//! # Memory
//!
//! A [`LayeredStateMachine`] holds one [`StateMachine`] per layer of its capacity (its
//! controller of `SLOTS` slots and one layer, parameter values and inertialization state) and per layer a weight and a fade. The
//! graph, the clips and the masks' channels are borrowed. What an update only works in — the
//! state machines' controller scratch, one pose, one mask and one share table per layer — is a
//! [`LayeredScratch`] shared by the characters updated in turn. The sizes are printed by the
//! `memory_per_character` test.
//!
//! [`set_layer_weight`]: LayeredStateMachine::set_layer_weight
//! [`fade_layer`]: LayeredStateMachine::fade_layer
//! [`Controller::fade_to`]: crate::controller::Controller::fade_to
//! [`BlendingJob`]: crate::job::BlendingJob

use core::fmt;

use super::machine::{GraphEvent, StateMachine};
use super::{BlendPoint, Condition, Graph, GraphError, Parameter, ParameterKind, State, Transition};
use crate::capacity::{check, Buf, Capacity, Element, OneLayer};
use crate::controller::{
    override_shares, AdditiveReference, ClipEntry, ControllerError, ControllerScratch, Fade, FadeCurve, LayerMode,
    ShareTerms,
};
use crate::job::blending::{make_additive, BlendingJob, Layer};
use crate::job::mask::{Channel, MaskJob};
use crate::job::JobError;
use crate::math::SoaTransform;
use crate::real::Real;
use crate::root_motion::{Motion, RootMotionSettings};
use crate::skeleton::SkeletonView;

/// A layer of a [`LayeredGraph`]: a sub-graph over the base graph's parameters, how it
/// combines, its weight and its mask. See the [module documentation](self).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GraphLayer<'a, R> {
    /// Its name (unique among the layers).
    pub name: &'a str,
    /// Override (covers the layers below) or additive (adds a delta).
    pub mode: LayerMode,
    /// Its initial weight, in `[0, 1]`.
    pub weight: R,
    /// The joints it covers, with their per-joint weights (see [`crate::job::mask`]); empty: every
    /// joint.
    pub mask: &'a [Channel],
    /// Its states.
    pub states: &'a [State<'a>],
    /// Its transitions, by priority.
    pub transitions: &'a [Transition<R>],
    /// Its blend points.
    pub points: &'a [BlendPoint<R>],
    /// Its conditions (on the base graph's parameters).
    pub conditions: &'a [Condition<R>],
    /// Its state playing at the start.
    pub initial: usize,
}

impl<R: Real> Default for GraphLayer<'_, R> {
    /// An unnamed override layer at weight 0 without states (a buffer entry to be
    /// overwritten).
    fn default() -> Self {
        GraphLayer {
            name: "",
            mode: LayerMode::Override,
            weight: R::ZERO,
            mask: &[],
            states: &[],
            transitions: &[],
            points: &[],
            conditions: &[],
            initial: 0,
        }
    }
}

impl<'a, R: Copy> GraphLayer<'a, R> {
    /// The layer's state machine definition over `parameters` (the base graph's).
    #[must_use]
    pub fn graph(&self, parameters: &'a [Parameter<'a, R>]) -> Graph<'a, R> {
        Graph {
            parameters,
            states: self.states,
            transitions: self.transitions,
            points: self.points,
            conditions: self.conditions,
            initial: self.initial,
        }
    }
}

/// A base graph and layers with their own state machines. See the
/// [module documentation](self).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayeredGraph<'a, R> {
    /// Layer 0: the base graph, whose parameters every layer reads.
    pub base: Graph<'a, R>,
    /// Layers 1…, in order (each covers the ones before it).
    pub layers: &'a [GraphLayer<'a, R>],
}

impl<'a, R: Real> LayeredGraph<'a, R> {
    /// A graph without layers.
    #[must_use]
    pub fn new(base: Graph<'a, R>) -> Self {
        LayeredGraph { base, layers: &[] }
    }

    /// Number of layers, the base included.
    #[must_use]
    pub fn num_layers(&self) -> usize {
        1 + self.layers.len()
    }

    /// Layer `layer`'s state machine definition (0: the base).
    #[must_use]
    pub fn graph(&self, layer: usize) -> Option<Graph<'a, R>> {
        match layer {
            0 => Some(self.base),
            l => self.layers.get(l - 1).map(|g| g.graph(self.base.parameters)),
        }
    }

    /// The index of the layer called `name` (1…; the base has no name).
    #[must_use]
    pub fn layer(&self, name: &str) -> Option<usize> {
        self.layers.iter().position(|l| l.name == name).map(|i| i + 1)
    }

    /// Checks every layer's graph against `num_clips` clips (see [`Graph::validate`]), the
    /// layers' names, weights and mask ranges.
    ///
    /// # Errors
    ///
    /// The first problem found and its layer (0: the base).
    pub fn validate(&self, num_clips: usize) -> Result<(), LayerError> {
        self.base.validate(num_clips).map_err(|error| LayerError { layer: 0, error })?;
        for (i, l) in self.layers.iter().enumerate() {
            let layer = i + 1;
            let fail = |error| Err(LayerError { layer, error });
            if self.layers[..i].iter().any(|o| o.name == l.name) {
                return fail(GraphError::DuplicateLayer);
            }
            if !(l.weight.is_finite() && l.weight >= R::ZERO && l.weight <= R::ONE) {
                return fail(GraphError::LayerWeight);
            }
            if l.mask.iter().any(|c| c.end.is_some_and(|e| e < c.start)) {
                return fail(GraphError::LayerMask { layer });
            }
            l.graph(self.base.parameters).validate(num_clips).map_err(|error| LayerError { layer, error })?;
        }
        Ok(())
    }
}

/// A problem with one layer of a [`LayeredGraph`]: its index (0: the base) and what is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerError {
    /// The layer (0: the base graph).
    pub layer: usize,
    /// What is wrong with it (state and transition indices are the layer's own).
    pub error: GraphError,
}

impl fmt::Display for LayerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "layer {}: {}", self.layer, self.error)
    }
}

impl core::error::Error for LayerError {}

/// A marker crossing of a layered state machine's clip, with its layer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerEvent<R> {
    /// The layer playing the clip (0: the base).
    pub layer: usize,
    /// The crossing, with the layer's state and the clip's weight within the layer.
    pub event: GraphEvent<R>,
}

/// The working memory of [`LayeredStateMachine::update`]: the state machines' controller
/// scratch and, per layer, its pose, mask and blend shares. Nothing in it survives from one
/// update to the next: characters updated in turn share one.
#[derive(Debug, Clone)]
pub struct LayeredScratch<R: Real, C: Capacity> {
    machine: ControllerScratch<R, OneLayer<C>>,
    poses: C::PerLayer<C::PerSoa<SoaTransform<R>>>,
    masks: C::PerLayer<C::PerSoa<[R; 4]>>,
    shares: C::PerLayer<C::PerSoa<[R; 4]>>,
}

impl<R: Real, C: Capacity> Default for LayeredScratch<R, C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<R: Real, C: Capacity> LayeredScratch<R, C> {
    /// A scratch for the layered state machines of capacity `C`.
    #[must_use]
    pub const fn new() -> Self {
        const { check::<C>() };
        LayeredScratch {
            machine: ControllerScratch::new(),
            poses: Element::INIT,
            masks: Element::INIT,
            shares: Element::INIT,
        }
    }

    /// Layer `layer`'s pose in the last update that used this scratch (a delta for an additive
    /// layer with [`AdditiveReference::RestPose`]).
    #[must_use]
    pub fn layer_pose(&self, layer: usize) -> Option<&[SoaTransform<R>]> {
        self.poses.as_ref().get(layer).map(AsRef::as_ref)
    }
}

/// A character driven by a [`LayeredGraph`]: a state machine per layer, their poses combined
/// by the layers' modes, weights and masks. See the [module documentation](self).
///
/// Its sizes are those of the [`Capacity`] `C`: `C::SOA`, `C::SLOTS`, `C::TRACKS`,
/// `C::PARAMS` as [`StateMachine`]'s (`SLOTS` per layer: each layer runs a
/// [`StateMachine<R, OneLayer<C>>`](StateMachine)), and `C::LAYERS`, the most layers, the base
/// included.
///
/// # Examples
///
/// The baked character walks on its base layer while an upper-body override layer (the chest
/// up) plays the run, faded in over a quarter of a second:
///
/// ```
/// use sinew::asset::Asset;
/// use sinew::controller::{ClipEntry, LayerMode};
/// use sinew::graph::*;
/// use sinew::job::mask::Channel;
/// use sinew::math::SoaTransform;
/// use sinew::skeleton::Skeleton;
///
/// sinew::capacity! {
///     /// 24 joints, 2 slots per layer, 2 layers, 1 parameter.
///     pub struct Pumper { joints: 24, slots: 2, layers: 2, params: 1 }
/// }
///
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));
/// let asset = Asset::parse(bytes)?;
/// let skeleton: Skeleton<f32, { Pumper::SOA }> = asset.skeleton().ok_or("no skeleton")?.to_skeleton()?;
/// let clips = [ClipEntry::new(asset.clip_by_name("walk").ok_or("no walk")?),
///              ClipEntry::new(asset.clip_by_name("run").ok_or("no run")?)];
///
/// let parameters = [Parameter { name: "speed", kind: ParameterKind::Float(1.0) }];
/// let base = Graph { parameters: &parameters, states: &[State { name: "walk", kind: StateKind::Clip(0), looping: true }],
///                    transitions: &[], points: &[], conditions: &[], initial: 0 };
/// let chest = [Channel::named(skeleton.view(), "chest", 1).ok_or("no chest")?];
/// let upper = GraphLayer { name: "upper", mode: LayerMode::Override, weight: 0.0, mask: &chest,
///                          states: &[State { name: "pump", kind: StateKind::Clip(1), looping: true }],
///                          transitions: &[], points: &[], conditions: &[], initial: 0 };
/// let layers = [upper];
/// let graph = LayeredGraph { base, layers: &layers };
///
/// let mut character = LayeredStateMachine::<f32, Pumper>::new(graph, &clips)?;
/// let mut scratch = LayeredScratch::new(); // shared by the characters updated in turn
/// let mut pose = [SoaTransform::IDENTITY; Pumper::SOA];
/// character.fade_layer(1, 1.0, 0.25, FadeCurve::SmoothStep)?;
/// for _ in 0..30 {
///     character.update(1.0 / 60.0, &clips, skeleton.view(), &mut scratch, &mut pose, |e| {
///         let _from_layer = e.layer; // markers of every layer's clips
///     })?;
/// }
/// assert_eq!(character.layer_weight(1), Some(1.0));
/// assert_eq!(character.machine(1).map(|m| m.current_state()), Some(0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct LayeredStateMachine<'g, R: Real, C: Capacity> {
    graph: LayeredGraph<'g, R>,
    /// One per layer; the first `count` are the graph's.
    machines: C::PerLayer<StateMachine<'g, R, OneLayer<C>>>,
    count: usize,
    weights: C::PerLayer<R>,
    fades: C::PerLayer<Option<Fade<R>>>,
}

impl<'g, R: Real, C: Capacity> LayeredStateMachine<'g, R, C> {
    /// A layered state machine for `graph` over `clips` (the same list every update takes):
    /// every layer in its initial state at its initial weight, every parameter at its default.
    ///
    /// # Errors
    ///
    /// What [`LayeredGraph::validate`] finds, [`GraphError::TooManyLayers`] (layer: the first
    /// past the capacity), or what [`StateMachine::new`] refuses for a layer.
    pub fn new(graph: LayeredGraph<'g, R>, clips: &[ClipEntry<'_, R>]) -> Result<Self, LayerError> {
        const { check::<C>() };
        graph.validate(clips.len())?;
        let count = graph.num_layers();
        if count > C::LAYERS {
            return Err(LayerError {
                layer: C::LAYERS,
                error: GraphError::TooManyLayers { count, capacity: C::LAYERS },
            });
        }
        let mut machines: C::PerLayer<StateMachine<'g, R, OneLayer<C>>> = Element::INIT;
        let mut weights: C::PerLayer<R> = Element::INIT;
        for layer in 0..count {
            let Some(g) = graph.graph(layer) else { break };
            machines.as_mut()[layer].reset(g, clips).map_err(|error| LayerError { layer, error })?;
            weights.as_mut()[layer] = if layer == 0 { R::ONE } else { graph.layers[layer - 1].weight };
        }
        Ok(LayeredStateMachine { graph, machines, count, weights, fades: Element::INIT })
    }

    /// The graph.
    #[must_use]
    pub fn graph(&self) -> &LayeredGraph<'g, R> {
        &self.graph
    }

    /// Number of layers, the base included.
    #[must_use]
    pub fn num_layers(&self) -> usize {
        self.count
    }

    /// The graph's layers' machines.
    fn machines(&self) -> &[StateMachine<'g, R, OneLayer<C>>] {
        &self.machines.as_ref()[..self.count]
    }

    /// The graph's layers' machines, mutable.
    fn machines_mut(&mut self) -> &mut [StateMachine<'g, R, OneLayer<C>>] {
        &mut self.machines.as_mut()[..self.count]
    }

    /// Layer `layer`'s state machine (0: the base), to read its current state, its transition
    /// in progress, its controller…
    #[must_use]
    pub fn machine(&self, layer: usize) -> Option<&StateMachine<'g, R, OneLayer<C>>> {
        self.machines().get(layer)
    }

    /// Layer `layer`'s current weight (the base's is 1).
    #[must_use]
    pub fn layer_weight(&self, layer: usize) -> Option<R> {
        (layer < self.count).then(|| self.weights.as_ref()[layer])
    }

    /// True while layer `layer`'s weight fades.
    #[must_use]
    pub fn is_layer_fading(&self, layer: usize) -> bool {
        self.fades.as_ref().get(layer).is_some_and(Option::is_some)
    }

    /// Sets layer `layer`'s weight at once (clamped into `[0, 1]`), cancelling its fade.
    ///
    /// # Errors
    ///
    /// As [`fade_layer`](Self::fade_layer).
    pub fn set_layer_weight(&mut self, layer: usize, weight: R) -> Result<(), GraphError> {
        self.fade_layer(layer, weight, R::ZERO, FadeCurve::Linear)
    }

    /// Fades layer `layer`'s weight from its current value to `target` (clamped into `[0, 1]`)
    /// over `duration` seconds of real time (0: at once), along `curve`.
    ///
    /// # Errors
    ///
    /// [`GraphError::UnknownLayer`] for the base (always at weight 1) or an index past the
    /// layers, [`GraphError::NonFiniteValue`] for a non-finite target or duration or a
    /// negative duration.
    pub fn fade_layer(&mut self, layer: usize, target: R, duration: R, curve: FadeCurve) -> Result<(), GraphError> {
        if layer == 0 || layer >= self.count {
            return Err(GraphError::UnknownLayer);
        }
        if !(target.is_finite() && duration.is_finite() && duration >= R::ZERO) {
            return Err(GraphError::NonFiniteValue);
        }
        let to = target.clamp(R::ZERO, R::ONE);
        if duration > R::ZERO {
            let from = self.weights.as_ref()[layer];
            self.fades.as_mut()[layer] = Some(Fade { from, to, duration, elapsed: R::ZERO, curve });
        } else {
            self.weights.as_mut()[layer] = to;
            self.fades.as_mut()[layer] = None;
        }
        Ok(())
    }

    /// Parameter `parameter`'s value (see [`StateMachine::value`]).
    #[must_use]
    pub fn value(&self, parameter: usize) -> Option<R> {
        self.machines().first().and_then(|m| m.value(parameter))
    }

    /// Sets float parameter `parameter`, for every layer.
    ///
    /// # Errors
    ///
    /// As [`StateMachine::set_float`]; nothing changes on error.
    pub fn set_float(&mut self, parameter: usize, value: R) -> Result<(), GraphError> {
        self.for_all(|m| m.set_float(parameter, value))
    }

    /// Sets bool parameter `parameter`, for every layer.
    ///
    /// # Errors
    ///
    /// As [`StateMachine::set_bool`]; nothing changes on error.
    pub fn set_bool(&mut self, parameter: usize, value: bool) -> Result<(), GraphError> {
        self.for_all(|m| m.set_bool(parameter, value))
    }

    /// Sets trigger `parameter` (`true`) or clears it (`false`), for every layer; a set trigger
    /// stays set until an update in which a transition of some layer consumes it.
    ///
    /// # Errors
    ///
    /// As [`StateMachine::fire`]; nothing changes on error.
    pub fn fire(&mut self, parameter: usize, set: bool) -> Result<(), GraphError> {
        self.for_all(|m| m.fire(parameter, set))
    }

    /// Applies `f` to the base, then (it passed: every layer shares its parameters, so it
    /// passes for them too) to the other layers.
    fn for_all(
        &mut self,
        mut f: impl FnMut(&mut StateMachine<'g, R, OneLayer<C>>) -> Result<(), GraphError>,
    ) -> Result<(), GraphError> {
        let (base, rest) = self.machines_mut().split_first_mut().ok_or(GraphError::UnknownParameter)?;
        f(base)?;
        for m in rest {
            f(m)?;
        }
        Ok(())
    }

    /// Turns root-motion extraction on or off for every layer (see
    /// [`StateMachine::set_root_motion`]); the displacement reported is the base's.
    ///
    /// # Errors
    ///
    /// As [`StateMachine::set_root_motion`]; nothing changes.
    pub fn set_root_motion(&mut self, settings: Option<RootMotionSettings>) -> Result<(), GraphError> {
        if settings.is_some() && !C::ROOT_MOTION {
            return Err(GraphError::Controller(crate::controller::ControllerError::NoRootMotion));
        }
        for m in self.machines_mut() {
            m.set_root_motion(settings)?;
        }
        Ok(())
    }

    /// The base layer's root displacement of the last update.
    #[must_use]
    pub fn root_motion_delta(&self) -> Motion<R> {
        self.machines().first().map_or(Motion::IDENTITY, StateMachine::root_motion_delta)
    }

    /// The base layer's root displacement accumulated since creation.
    #[must_use]
    pub fn root_motion_total(&self) -> Motion<R> {
        self.machines().first().map_or(Motion::IDENTITY, StateMachine::root_motion_total)
    }

    /// Runs one frame of `dt` seconds: the layers' weight fades progress, every layer's state
    /// machine runs into its pose of `scratch` (reporting its clips' marker crossings to
    /// `on_event`, the base's first), triggers consumed by any layer are cleared for all, and
    /// the poses combine into `output` (the local pose, at least `skeleton.num_soa_joints()`
    /// elements). `clips` must be the list given to [`new`](Self::new).
    ///
    /// # Errors
    ///
    /// What [`StateMachine::update`] refuses for any layer, or [`GraphError::LayerMask`] for a
    /// mask channel past the skeleton. All are checked before anything changes: on error the
    /// state machine and `output` are untouched and no event is reported.
    pub fn update(
        &mut self,
        dt: R,
        clips: &[ClipEntry<'_, R>],
        skeleton: SkeletonView<'_, R>,
        scratch: &mut LayeredScratch<R, C>,
        output: &mut [SoaTransform<R>],
        mut on_event: impl FnMut(LayerEvent<R>),
    ) -> Result<(), GraphError> {
        for m in self.machines() {
            m.check(dt, clips, skeleton, output.len())?;
        }
        let n = skeleton.num_soa_joints();
        let joints = skeleton.num_joints();
        for (i, l) in self.graph.layers.iter().enumerate().take(self.count.saturating_sub(1)) {
            if l.mask.iter().any(|c| c.start >= joints || c.end.is_some_and(|e| e >= joints || e < c.start)) {
                return Err(GraphError::LayerMask { layer: i + 1 });
            }
        }
        self.progress_fades(dt);
        let count = self.count;
        for (layer, m) in self.machines.as_mut()[..count].iter_mut().enumerate() {
            let pose = &mut scratch.poses.as_mut()[layer].as_mut()[..n];
            m.update(dt, clips, skeleton, &mut scratch.machine, pose, |event| on_event(LayerEvent { layer, event }))?;
        }
        self.share_triggers();
        self.combine(n, skeleton, scratch, output).map_err(|e| ControllerError::Job(e).into())
    }

    /// Layer fades move on by `dt` seconds (a fade that reached its duration ends at its
    /// target).
    fn progress_fades(&mut self, dt: R) {
        for (w, fade) in self.weights.as_mut().iter_mut().zip(self.fades.as_mut()) {
            if let Some(f) = fade {
                f.elapsed += dt.max(R::ZERO);
                *w = f.weight();
                if f.elapsed >= f.duration {
                    *w = f.to;
                    *fade = None;
                }
            }
        }
    }

    /// A trigger some layer consumed in this update is cleared for every layer.
    fn share_triggers(&mut self) {
        for (p, param) in self.graph.base.parameters.iter().enumerate() {
            if param.kind == ParameterKind::Trigger && self.machines().iter().any(|m| m.value(p) == Some(R::ZERO)) {
                for m in self.machines_mut() {
                    let _ = m.fire(p, false);
                }
            }
        }
    }

    /// Combines the layers' poses of `scratch` into `output`: the base's copied when no other
    /// layer takes part, else one [`BlendingJob`] with the override layers' shares as per-joint
    /// weights and the additive layers' (rest-pose references made deltas first) on top.
    fn combine(
        &self,
        n: usize,
        skeleton: SkeletonView<'_, R>,
        scratch: &mut LayeredScratch<R, C>,
        output: &mut [SoaTransform<R>],
    ) -> Result<(), JobError> {
        let count = self.count;
        let weights = self.weights.as_ref();
        let modes: C::PerLayer<LayerMode> = Buf::from_fn(|l| match l {
            0 => LayerMode::Override,
            l => self.graph.layers.get(l - 1).map_or(LayerMode::Override, |g| g.mode),
        });
        let modes = modes.as_ref();
        let active = |l: usize| l < count && (l == 0 || weights[l] > R::ZERO);
        if !(1..count).any(active) {
            output[..n].copy_from_slice(&scratch.poses.as_ref()[0].as_ref()[..n]);
            return Ok(());
        }
        let rest = skeleton.rest_pose();
        let mut masked_layers: C::PerLayer<bool> = Element::INIT;
        let masked = masked_layers.as_mut();
        for l in (1..count).filter(|&l| active(l)) {
            let channels = self.graph.layers.get(l - 1).map_or(&[][..], |g| g.mask);
            if !channels.is_empty() {
                MaskJob { skeleton, channels, invert: false, output: scratch.masks.as_mut()[l].as_mut() }.run()?;
                masked[l] = true;
            }
            if modes[l] == LayerMode::Additive(AdditiveReference::RestPose) {
                for (p, r) in scratch.poses.as_mut()[l].as_mut()[..n].iter_mut().zip(rest) {
                    for k in 0..4 {
                        p.set_lane(k, &make_additive(&p.lane(k), &r.lane(k)));
                    }
                }
            }
        }
        let overrides = (1..count).any(|l| active(l) && modes[l] == LayerMode::Override);
        let masks = scratch.masks.as_ref();
        let terms: C::PerLayer<ShareTerms<'_, R>> = Buf::from_fn(|l| {
            let w = if active(l) { weights[l] } else { R::ZERO };
            ShareTerms {
                covers: active(l) && modes[l] == LayerMode::Override,
                cover: w,
                factor: w,
                mask: masked[l].then(|| masks[l].as_ref()),
            }
        });
        if overrides {
            override_shares(n, &terms.as_ref()[..count], &mut scratch.shares.as_mut()[..count]);
        }
        // Each list holds at most one layer per layer of the graph.
        let mut normal: C::PerLayer<Layer<'_, R>> = Element::INIT;
        let mut additive: C::PerLayer<Layer<'_, R>> = Element::INIT;
        let (mut normals, mut additives) = (0, 0);
        let (poses, shares, terms) = (scratch.poses.as_ref(), scratch.shares.as_ref(), terms.as_ref());
        for l in (0..count).filter(|&l| active(l)) {
            let transform = &poses[l].as_ref()[..n];
            match modes[l] {
                LayerMode::Override => {
                    normal.as_mut()[normals] =
                        Layer { transform, weight: R::ONE, joint_weights: overrides.then(|| &shares[l].as_ref()[..n]) };
                    normals += 1;
                }
                LayerMode::Additive(_) => {
                    additive.as_mut()[additives] =
                        Layer { transform, weight: weights[l], joint_weights: terms[l].mask.map(|m| &m[..n]) };
                    additives += 1;
                }
            }
        }
        BlendingJob {
            layers: &normal.as_ref()[..normals],
            additive: &additive.as_ref()[..additives],
            rest_pose: rest,
            threshold: R::ONE,
            output,
        }
        .run()
    }
}
