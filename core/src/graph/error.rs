//! [`GraphError`]: why a graph was refused, or why a state-machine call was.

use core::fmt;

use crate::controller::ControllerError;

/// Why a graph definition or a state-machine call was refused. On error nothing changed: the
/// state machine, its parameters and the output pose are as they were, and no event was
/// reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GraphError {
    /// The initial state is not a state of the graph.
    InitialState,
    /// Two parameters share a name.
    DuplicateParameter {
        /// The second one.
        parameter: usize,
    },
    /// Two states share a name.
    DuplicateState {
        /// The second one.
        state: usize,
    },
    /// A parameter's default value is NaN or infinite.
    ParameterDefault {
        /// The parameter.
        parameter: usize,
    },
    /// A state plays a clip index not below the number of clips.
    Clip {
        /// The state.
        state: usize,
    },
    /// A blend space's points are empty or lie outside the graph's point list.
    Points {
        /// The state.
        state: usize,
    },
    /// A blend space's positions are not finite, not strictly increasing (1D) or not distinct
    /// (2D).
    Positions {
        /// The state.
        state: usize,
    },
    /// A blend space's parameter is not a float parameter of the graph.
    BlendParameter {
        /// The state.
        state: usize,
    },
    /// A transition's source or destination is not a state, or they are the same state.
    TransitionState {
        /// The transition.
        transition: usize,
    },
    /// A transition's conditions lie outside the graph's condition list.
    Conditions {
        /// The transition.
        transition: usize,
    },
    /// A condition names no parameter, tests a parameter of another kind, or compares with a
    /// NaN or infinite threshold.
    Condition {
        /// The transition.
        transition: usize,
        /// The condition, an index into the graph's condition list.
        condition: usize,
    },
    /// A transition's exit time or duration is NaN, infinite or negative.
    Timing {
        /// The transition.
        transition: usize,
    },
    /// The graph has more parameters than the state machine's `PARAMS` capacity.
    TooManyParameters {
        /// Parameters of the graph.
        count: usize,
        /// `PARAMS`.
        capacity: usize,
    },
    /// Two states blending need more clip slots than the state machine's `SLOTS`.
    TooManySlots {
        /// Slots needed: the most clips of a state, or of the two states of a crossfade.
        needed: usize,
        /// `SLOTS`.
        capacity: usize,
    },
    /// A buffer given to [`GraphData::to_graph`](crate::asset::GraphData::to_graph) is shorter
    /// than the graph's list.
    Storage {
        /// The list: `"parameters"`, `"states"`, `"transitions"`, `"points"` or `"conditions"`.
        list: &'static str,
        /// Entries of the graph's list.
        needed: usize,
        /// Length of the buffer.
        capacity: usize,
    },
    /// A parameter index is not below the graph's parameter count.
    UnknownParameter,
    /// A parameter was set as another kind than it is (a float as a bool, a trigger as a
    /// float…).
    ParameterKind {
        /// The parameter.
        parameter: usize,
    },
    /// A float parameter's new value is NaN or infinite.
    NonFiniteValue,
    /// The time step is negative.
    NegativeStep,
    /// A layer has the name of an earlier one.
    DuplicateLayer,
    /// A layer's weight is not a number in `[0, 1]`.
    LayerWeight,
    /// A layer's mask has a channel whose joints are not the skeleton's (a start or end past
    /// it, an end before the start).
    LayerMask {
        /// The layer.
        layer: usize,
    },
    /// The graph has more layers than the layered state machine's `LAYERS` capacity.
    TooManyLayers {
        /// Layers of the graph, the base included.
        count: usize,
        /// `LAYERS`.
        capacity: usize,
    },
    /// A layer index is past the layers, or names the base where a layer is needed.
    UnknownLayer,
    /// The controller underneath refused the update (a clip past the skeleton, too many tracks,
    /// a non-finite step, a short output pose…).
    Controller(ControllerError),
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::InitialState => f.write_str("the initial state is not a state of the graph"),
            Self::DuplicateParameter { parameter } => write!(f, "parameter {parameter} repeats a name"),
            Self::DuplicateState { state } => write!(f, "state {state} repeats a name"),
            Self::ParameterDefault { parameter } => write!(f, "parameter {parameter} has a NaN or infinite default"),
            Self::Clip { state } => write!(f, "state {state} plays a clip that was not given"),
            Self::Points { state } => write!(f, "state {state} has no blend points or points outside the list"),
            Self::Positions { state } => {
                write!(f, "state {state} has positions that are not finite, increasing (1D) or distinct (2D)")
            }
            Self::BlendParameter { state } => write!(f, "state {state} blends by a parameter that is not a float"),
            Self::TransitionState { transition } => write!(f, "transition {transition} names a state that is not, or goes to its own source"),
            Self::Conditions { transition } => write!(f, "transition {transition} has conditions outside the list"),
            Self::Condition { transition, condition } => write!(
                f,
                "condition {condition} of transition {transition} names no parameter, the wrong kind, or a bad threshold"
            ),
            Self::Timing { transition } => {
                write!(f, "transition {transition} has a NaN, infinite or negative exit time or duration")
            }
            Self::TooManyParameters { count, capacity } => {
                write!(f, "the graph has {count} parameters, more than the capacity of {capacity}")
            }
            Self::TooManySlots { needed, capacity } => {
                write!(f, "the graph needs {needed} clip slots, more than the capacity of {capacity}")
            }
            Self::Storage { list, needed, capacity } => {
                write!(f, "the graph has {needed} {list}, more than the buffer's {capacity}")
            }
            Self::UnknownParameter => f.write_str("parameter index out of range"),
            Self::ParameterKind { parameter } => write!(f, "parameter {parameter} is of another kind"),
            Self::NonFiniteValue => f.write_str("a parameter value is NaN or infinite"),
            Self::NegativeStep => f.write_str("the time step is negative"),
            Self::DuplicateLayer => f.write_str("the layer repeats a name"),
            Self::LayerWeight => f.write_str("the layer's weight is not a number in [0, 1]"),
            Self::LayerMask { layer } => write!(f, "layer {layer}'s mask names joints that are not the skeleton's"),
            Self::TooManyLayers { count, capacity } => {
                write!(f, "the graph has {count} layers, more than the capacity of {capacity}")
            }
            Self::UnknownLayer => f.write_str("layer index out of range"),
            Self::Controller(e) => write!(f, "controller: {e}"),
        }
    }
}

impl core::error::Error for GraphError {}

impl From<ControllerError> for GraphError {
    fn from(e: ControllerError) -> Self {
        Self::Controller(e)
    }
}
