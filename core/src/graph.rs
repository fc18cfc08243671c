//! Animation state machines in fixed memory: a [`Graph`] (parameters, states that play a clip
//! or a 1D / 2D blend space, transitions with conditions, exit times and a crossfaded or
//! inertialized blend) and the [`StateMachine`] that runs one on a
//! [`Controller`](crate::controller::Controller).
//!
//! # The graph
//!
//! A [`Graph`] is plain borrowed data, built in code or read from a file on the host: flat
//! lists of [`Parameter`]s, [`State`]s, [`Transition`]s, blend points ([`BlendPoint`]) and
//! conditions ([`Condition`]); states and transitions refer to runs of the last two by a
//! [`Span`]. [`Graph::validate`] checks every index, kind and number once; the state machine
//! refuses a graph that does not pass.
//!
//! - **Parameters** are float, bool or trigger, addressed by index (names are looked up once
//!   with [`Graph::parameter`]).
//! - **States** play a clip ([`StateKind::Clip`]), a 1D blend space ([`StateKind::Blend1d`]:
//!   clips at increasing positions of a float parameter; the two neighbours of the parameter's
//!   value weigh `1 − f` and `f`, piecewise linearly; outside the range the end clip plays) or a
//!   2D blend space ([`StateKind::Blend2d`], two float parameters, weights by gradient band
//!   interpolation, see [`weights_2d`]). A blend space with `sync` keeps its clips in phase:
//!   they advance together at the weighted mean of their normalized rates (a walk and a run of
//!   different lengths keep their feet together), and a clip whose weight rises from zero first
//!   jumps to the phase of the heaviest one.
//! - **Transitions** go from a state (or from any state: `from: None`) to another when all their
//!   conditions hold (`speed > 0.1`, a bool true or false, a trigger set) and, with an exit
//!   time, once the source state has played that many cycles since it was entered (its
//!   heaviest clip's loops plus phase: 0.75 is three quarters into its first loop, 2 the end of
//!   the second). The first transition in list order that can fire does (an any-state
//!   transition never fires to the state already playing); the triggers its conditions test
//!   are consumed, other triggers stay set until a transition consumes them. A transition runs
//!   to its end before the next one is considered (transitions are not interrupted).
//!
//! # Layers
//!
//! A [`LayeredGraph`] adds layers to a base graph, each with its own state machine over the
//! base's parameters, a mode (masked override or additive), a weight and a mask; a
//! [`LayeredStateMachine`] runs one and combines the layers' poses as the controller's layers
//! combine (see [`LayeredStateMachine`]). A layered graph bakes into a `.sinew` graph section
//! and is read back, zero-copy, by
//! [`GraphData::to_layered`](crate::asset::GraphData::to_layered).
//!
//! # Blends
//!
//! A transition blends over its duration (seconds of real time) in one of two ways:
//!
//! - [`TransitionBlend::Crossfade`]: both states play and their weights move from the source to
//!   the destination along a [`FadeCurve`]; with `sync` the destination starts at the source's
//!   phase and both advance in phase (as [`Controller::crossfade`](crate::controller::Controller::crossfade)).
//! - [`TransitionBlend::Inertialize`]: only the destination plays. At the switch the
//!   outgoing pose (the last output extrapolated by one step of its velocity) is compared with
//!   the destination's: the offset `x₀` (per joint: translation and scale differences, the
//!   rotation offset as a rotation vector) and its velocity `v₀` (the outgoing velocity, from the
//!   last two output poses, minus the destination's, measured over its first step) decay as
//!
//!   ```text
//!   o(t) = (1 − u)⁴ · (x₀ · (1 + 4u) + v₀ · T · u),      u = t / T,
//!   ```
//!
//!   Bollo's quintic (o(0) = x₀, o′(0) = v₀, o, o′ and o″ zero at T) without his overshoot
//!   clamp, which would break the velocity's continuity. The output is the destination's pose
//!   with the offset applied (added to translation and scale, `exp(o) · q` for rotations), so
//!   the pose and its first derivative are continuous at the switch and the offset is zero at
//!   the end. It samples one state where a crossfade samples two.
//!
//! # Memory
//!
//! A [`StateMachine`] holds its controller (one layer of `SLOTS` slots), `PARAMS` parameter
//! values, the slot owners and the inertialization state: the last output pose and one store
//! that holds the output before it between transitions and the offset and its velocity during
//! a decay (they are never needed at once): 448 bytes per four joints in `f32` or `Q16`. The
//! graph and the clips are borrowed. `SLOTS` covers the most clips of a state and, for each
//! crossfade, the clips of both its states (an inertialized transition plays one state). The
//! sizes are printed by the `memory_per_character` test.

mod error;
pub mod layers;
mod machine;
mod space;
#[cfg(test)]
mod tests;

mod inertia;
pub(crate) mod validate;

pub use error::GraphError;
pub use layers::{GraphLayer, LayerError, LayerEvent, LayeredGraph, LayeredScratch, LayeredStateMachine};
pub use machine::{GraphEvent, StateMachine, TransitionStatus};
pub use space::{weights_1d, weights_2d, MAX_BLEND_POINTS};

pub use crate::controller::FadeCurve;
use crate::real::Real;

/// A parameter's kind and default value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParameterKind<R> {
    /// A number, with its initial value.
    Float(R),
    /// A flag, with its initial value.
    Bool(bool),
    /// A flag set by [`StateMachine::fire`] and cleared by the transition that tests it.
    Trigger,
}

/// A named parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Parameter<'a, R> {
    /// Its name (unique in the graph).
    pub name: &'a str,
    /// Its kind and initial value.
    pub kind: ParameterKind<R>,
}

impl<R> Default for Parameter<'_, R> {
    /// An unnamed trigger (a buffer entry to be overwritten).
    fn default() -> Self {
        Parameter { name: "", kind: ParameterKind::Trigger }
    }
}

impl Default for State<'_> {
    /// An unnamed looping state playing clip 0 (a buffer entry to be overwritten).
    fn default() -> Self {
        State { name: "", kind: StateKind::Clip(0), looping: true }
    }
}

impl<R: Real> Default for Transition<R> {
    /// An immediate inertialized transition from any state to state 0 (a buffer entry to be
    /// overwritten).
    fn default() -> Self {
        Transition {
            from: None,
            to: 0,
            conditions: Span::default(),
            exit_time: None,
            duration: R::ZERO,
            blend: TransitionBlend::Inertialize,
        }
    }
}

impl<R: Real> Default for BlendPoint<R> {
    /// Clip 0 at the origin (a buffer entry to be overwritten).
    fn default() -> Self {
        BlendPoint { clip: 0, position: [R::ZERO; 2] }
    }
}

impl<R> Default for Condition<R> {
    /// Parameter 0 triggered (a buffer entry to be overwritten).
    fn default() -> Self {
        Condition { parameter: 0, test: Test::Triggered }
    }
}

/// A run of entries of one of the graph's flat lists: `start..start + len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Span {
    /// First entry.
    pub start: u16,
    /// Number of entries.
    pub len: u16,
}

impl Span {
    /// `start..start + len`.
    #[must_use]
    pub const fn new(start: u16, len: u16) -> Self {
        Span { start, len }
    }

    /// The entries of `list` in the span, or `None` when it reaches past the end.
    #[must_use]
    pub fn of<T>(self, list: &[T]) -> Option<&[T]> {
        list.get(self.start as usize..self.start as usize + self.len as usize)
    }
}

/// A clip of a blend space and its position in parameter space (`[x, 0]` in 1D).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlendPoint<R> {
    /// Index into the clips given to the state machine.
    pub clip: usize,
    /// Position: the parameter value(s) at which this clip plays alone.
    pub position: [R; 2],
}

/// What a state plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateKind {
    /// One clip (an index into the clips).
    Clip(usize),
    /// A 1D blend space over a float parameter: its points' `position[0]` strictly increasing.
    Blend1d {
        /// The float parameter.
        parameter: usize,
        /// Its points in the graph's point list (at most [`MAX_BLEND_POINTS`]).
        points: Span,
        /// Keep the clips in phase.
        sync: bool,
    },
    /// A 2D blend space over two float parameters (x, y): distinct positions, weights by
    /// gradient band interpolation.
    Blend2d {
        /// The float parameter along x.
        x: usize,
        /// The float parameter along y.
        y: usize,
        /// Its points in the graph's point list (at most [`MAX_BLEND_POINTS`]).
        points: Span,
        /// Keep the clips in phase.
        sync: bool,
    },
}

/// A state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct State<'a> {
    /// Its name (unique in the graph).
    pub name: &'a str,
    /// What it plays.
    pub kind: StateKind,
    /// Its clips loop (true) or stop at their end (false: a jump or a landing, left by an exit
    /// time of 1).
    pub looping: bool,
}

/// A test of one parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Test<R> {
    /// Float parameter `>` the value.
    Greater(R),
    /// Float parameter `<` the value.
    Less(R),
    /// Float parameter `≥` the value.
    AtLeast(R),
    /// Float parameter `≤` the value.
    AtMost(R),
    /// Bool parameter is true.
    True,
    /// Bool parameter is false.
    False,
    /// Trigger parameter is set (consumed when the transition fires).
    Triggered,
}

/// A condition of a transition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Condition<R> {
    /// The parameter tested.
    pub parameter: usize,
    /// The test.
    pub test: Test<R>,
}

/// How a transition blends from its source to its destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransitionBlend {
    /// Both states play, weights moving along `curve`; with `sync`, in phase.
    Crossfade {
        /// The weight curve.
        curve: FadeCurve,
        /// Start the destination at the source's phase and keep them in phase.
        sync: bool,
    },
    /// Only the destination plays; the pose offset at the switch decays to zero.
    Inertialize,
}

/// A transition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transition<R> {
    /// Source state, or `None` for any state.
    pub from: Option<usize>,
    /// Destination state.
    pub to: usize,
    /// Its conditions in the graph's condition list (all must hold; none: always).
    pub conditions: Span,
    /// Cycles the source must have played since it was entered, or `None`.
    pub exit_time: Option<R>,
    /// Blend duration, seconds (0: at once).
    pub duration: R,
    /// How it blends.
    pub blend: TransitionBlend,
}

/// A state machine's definition. See the [module documentation](self).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Graph<'a, R> {
    /// The parameters.
    pub parameters: &'a [Parameter<'a, R>],
    /// The states.
    pub states: &'a [State<'a>],
    /// The transitions, by priority (the first that can fire does).
    pub transitions: &'a [Transition<R>],
    /// Blend points, referred to by the blend-space states.
    pub points: &'a [BlendPoint<R>],
    /// Conditions, referred to by the transitions.
    pub conditions: &'a [Condition<R>],
    /// The state playing at the start.
    pub initial: usize,
}

impl<'a, R: Real> Graph<'a, R> {
    /// The index of the parameter called `name`.
    #[must_use]
    pub fn parameter(&self, name: &str) -> Option<usize> {
        self.parameters.iter().position(|p| p.name == name)
    }

    /// The index of the state called `name`.
    #[must_use]
    pub fn state(&self, name: &str) -> Option<usize> {
        self.states.iter().position(|s| s.name == name)
    }

    /// The blend points of state `state` (one, at the origin, for a clip state's clip; `None`
    /// for a state out of range or points outside the list).
    pub(crate) fn clips_of(&self, state: usize) -> Option<StateClips<'a, R>> {
        match self.states.get(state)?.kind {
            StateKind::Clip(c) => Some(StateClips::One(c)),
            StateKind::Blend1d { points, .. } | StateKind::Blend2d { points, .. } => {
                points.of(self.points).map(StateClips::Many)
            }
        }
    }

    /// The most clips a state plays.
    #[must_use]
    pub fn max_state_clips(&self) -> usize {
        (0..self.states.len()).filter_map(|s| self.clips_of(s)).map(|c| c.len()).max().unwrap_or(0)
    }

    /// Checks the graph against `num_clips` clips: every index, kind, span and number.
    ///
    /// # Errors
    ///
    /// The first problem found, as a [`GraphError`] naming the parameter, state, transition or
    /// condition.
    pub fn validate(&self, num_clips: usize) -> Result<(), GraphError> {
        validate::validate(self, num_clips)
    }
}

/// The clips of a state.
#[derive(Debug, Clone, Copy)]
pub(crate) enum StateClips<'a, R> {
    /// A clip state's clip.
    One(usize),
    /// A blend space's points.
    Many(&'a [BlendPoint<R>]),
}

impl<R: Copy> StateClips<'_, R> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::One(_) => 1,
            Self::Many(p) => p.len(),
        }
    }
    pub(crate) fn clip(&self, k: usize) -> Option<usize> {
        match self {
            Self::One(c) => (k == 0).then_some(*c),
            Self::Many(p) => p.get(k).map(|p| p.clip),
        }
    }
}
