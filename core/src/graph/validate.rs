//! Graph validation over any source of a graph's lists: the borrowed [`Graph`] and the baked
//! graph section that [`crate::asset`] reads in place check the same rules with one code.

use super::MAX_BLEND_POINTS;
use super::{BlendPoint, Condition, Graph, GraphError, Parameter, ParameterKind, State, StateKind, Test, Transition};
use crate::format::reader::{is_finite_bits, ordered_bits};
use crate::real::Real;

/// The operations validation needs of a graph's numbers: a [`Real`], or the raw `f32` bits of
/// a graph section ([`F32Bits`]), compared with integer operations only so that parsing a file
/// needs no floating point (no soft-float routines on an FPU-less target).
pub(crate) trait Checked: Copy {
    /// Zero.
    const ZERO: Self;
    /// Neither NaN nor infinite.
    fn finite(self) -> bool;
    /// At least zero (for finite values).
    fn non_negative(self) -> bool;
    /// Strictly below `other` (for finite values).
    fn below(self, other: Self) -> bool;
    /// Equal to `other` (for finite values; −0 equals +0).
    fn same(self, other: Self) -> bool;
}

impl<R: Real> Checked for R {
    const ZERO: Self = R::ZERO;
    fn finite(self) -> bool {
        self.is_finite()
    }
    fn non_negative(self) -> bool {
        self >= R::ZERO
    }
    fn below(self, other: Self) -> bool {
        self < other
    }
    fn same(self, other: Self) -> bool {
        self == other
    }
}

/// The bits of an `f32` as stored in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct F32Bits(pub(crate) u32);

impl Checked for F32Bits {
    const ZERO: Self = F32Bits(0);
    fn finite(self) -> bool {
        is_finite_bits(self.0)
    }
    fn non_negative(self) -> bool {
        ordered_bits(self.0) >= 0
    }
    fn below(self, other: Self) -> bool {
        ordered_bits(self.0) < ordered_bits(other.0)
    }
    fn same(self, other: Self) -> bool {
        ordered_bits(self.0) == ordered_bits(other.0)
    }
}

/// A graph's lists, read by index.
pub(crate) trait GraphSource<R> {
    /// The initial state.
    fn initial(&self) -> usize;
    /// Number of parameters.
    fn num_parameters(&self) -> usize;
    /// Parameter `i`'s kind.
    fn parameter_kind(&self, i: usize) -> Option<ParameterKind<R>>;
    /// The first parameter whose name an earlier one has.
    fn duplicate_parameter(&self) -> Option<usize>;
    /// Number of states.
    fn num_states(&self) -> usize;
    /// State `i`'s kind and looping flag.
    fn state(&self, i: usize) -> Option<(StateKind, bool)>;
    /// The first state whose name an earlier one has.
    fn duplicate_state(&self) -> Option<usize>;
    /// Number of transitions.
    fn num_transitions(&self) -> usize;
    /// Transition `i`.
    fn transition(&self, i: usize) -> Option<Transition<R>>;
    /// Number of blend points.
    fn num_points(&self) -> usize;
    /// Blend point `i`.
    fn point(&self, i: usize) -> Option<BlendPoint<R>>;
    /// Number of conditions.
    fn num_conditions(&self) -> usize;
    /// Condition `i`.
    fn condition(&self, i: usize) -> Option<Condition<R>>;
}

fn first_repeat<'n>(names: impl Iterator<Item = &'n str> + Clone) -> Option<usize> {
    names.clone().enumerate().position(|(i, n)| names.clone().take(i).any(|m| m == n))
}

impl<R: Copy> GraphSource<R> for Graph<'_, R> {
    fn initial(&self) -> usize {
        self.initial
    }
    fn num_parameters(&self) -> usize {
        self.parameters.len()
    }
    fn parameter_kind(&self, i: usize) -> Option<ParameterKind<R>> {
        self.parameters.get(i).map(|p: &Parameter<'_, R>| p.kind)
    }
    fn duplicate_parameter(&self) -> Option<usize> {
        first_repeat(self.parameters.iter().map(|p| p.name))
    }
    fn num_states(&self) -> usize {
        self.states.len()
    }
    fn state(&self, i: usize) -> Option<(StateKind, bool)> {
        self.states.get(i).map(|s: &State<'_>| (s.kind, s.looping))
    }
    fn duplicate_state(&self) -> Option<usize> {
        first_repeat(self.states.iter().map(|s| s.name))
    }
    fn num_transitions(&self) -> usize {
        self.transitions.len()
    }
    fn transition(&self, i: usize) -> Option<Transition<R>> {
        self.transitions.get(i).copied()
    }
    fn num_points(&self) -> usize {
        self.points.len()
    }
    fn point(&self, i: usize) -> Option<BlendPoint<R>> {
        self.points.get(i).copied()
    }
    fn num_conditions(&self) -> usize {
        self.conditions.len()
    }
    fn condition(&self, i: usize) -> Option<Condition<R>> {
        self.conditions.get(i).copied()
    }
}

/// The names of a graph's parameters or states, for [`GraphSource::duplicate_parameter`] and
/// [`GraphSource::duplicate_state`] of other sources.
pub(crate) fn repeated_name<'n>(names: impl Iterator<Item = &'n str> + Clone) -> Option<usize> {
    first_repeat(names)
}

/// Checks `g` against `num_clips` clips: every index, kind, span and number.
pub(crate) fn validate<R: Checked>(g: &impl GraphSource<R>, num_clips: usize) -> Result<(), GraphError> {
    for i in 0..g.num_parameters() {
        if matches!(g.parameter_kind(i), Some(ParameterKind::Float(v)) if !v.finite()) {
            return Err(GraphError::ParameterDefault { parameter: i });
        }
    }
    if let Some(parameter) = g.duplicate_parameter() {
        return Err(GraphError::DuplicateParameter { parameter });
    }
    let n = g.num_states();
    if g.initial() >= n {
        return Err(GraphError::InitialState);
    }
    if let Some(state) = g.duplicate_state() {
        return Err(GraphError::DuplicateState { state });
    }
    for i in 0..n {
        validate_state(g, i, num_clips)?;
    }
    for i in 0..g.num_transitions() {
        let Some(t) = g.transition(i) else { return Err(GraphError::TransitionState { transition: i }) };
        if t.to >= n || t.from.is_some_and(|f| f >= n || f == t.to) {
            return Err(GraphError::TransitionState { transition: i });
        }
        let (start, len) = (t.conditions.start as usize, t.conditions.len as usize);
        if start + len > g.num_conditions() {
            return Err(GraphError::Conditions { transition: i });
        }
        for k in start..start + len {
            let Some(c) = g.condition(k) else { return Err(GraphError::Conditions { transition: i }) };
            let ok = match (c.test, g.parameter_kind(c.parameter)) {
                (
                    Test::Greater(v) | Test::Less(v) | Test::AtLeast(v) | Test::AtMost(v),
                    Some(ParameterKind::Float(_)),
                ) => v.finite(),
                (Test::True | Test::False, Some(ParameterKind::Bool(_))) => true,
                (Test::Triggered, Some(ParameterKind::Trigger)) => true,
                _ => false,
            };
            if !ok {
                return Err(GraphError::Condition { transition: i, condition: k });
            }
        }
        let time_ok = |v: R| v.finite() && v.non_negative();
        if !time_ok(t.duration) || t.exit_time.is_some_and(|e| !time_ok(e)) {
            return Err(GraphError::Timing { transition: i });
        }
    }
    Ok(())
}

fn validate_state<R: Checked>(g: &impl GraphSource<R>, i: usize, num_clips: usize) -> Result<(), GraphError> {
    let is_float = |p: usize| matches!(g.parameter_kind(p), Some(ParameterKind::Float(_)));
    let Some((kind, _)) = g.state(i) else { return Err(GraphError::Points { state: i }) };
    let (params_ok, points, one_d) = match kind {
        StateKind::Clip(c) => {
            return if c < num_clips { Ok(()) } else { Err(GraphError::Clip { state: i }) };
        }
        StateKind::Blend1d { parameter, points, .. } => (is_float(parameter), points, true),
        StateKind::Blend2d { x, y, points, .. } => (is_float(x) && is_float(y), points, false),
    };
    if !params_ok {
        return Err(GraphError::BlendParameter { state: i });
    }
    let (start, len) = (points.start as usize, points.len as usize);
    if len == 0 || len > MAX_BLEND_POINTS || start + len > g.num_points() {
        return Err(GraphError::Points { state: i });
    }
    let mut list = [BlendPoint { clip: 0, position: [R::ZERO; 2] }; MAX_BLEND_POINTS];
    for (k, d) in list.iter_mut().enumerate().take(len) {
        *d = g.point(start + k).ok_or(GraphError::Points { state: i })?;
    }
    let pts = &list[..len];
    if pts.iter().any(|p| p.clip >= num_clips) {
        return Err(GraphError::Clip { state: i });
    }
    let finite = pts.iter().all(|p| p.position[0].finite() && p.position[1].finite());
    let ordered = if one_d {
        pts.windows(2).all(|w| w[0].position[0].below(w[1].position[0]))
    } else {
        (1..pts.len()).all(|a| {
            (0..a)
                .all(|b| !(pts[a].position[0].same(pts[b].position[0]) && pts[a].position[1].same(pts[b].position[1])))
        })
    };
    if !(finite && ordered) {
        return Err(GraphError::Positions { state: i });
    }
    Ok(())
}
