//! The graph section ([`GraphData`]: an animation graph read in place; its layers are in
//! `graph_layers`), its validation by the
//! rules of [`Graph::validate`], and [`GraphData::to_graph`], which fills caller buffers with
//! the [`Graph`] a [`StateMachine`](crate::graph::StateMachine) runs, without allocating.

use crate::format::reader::{byte, le_u16, le_u32, Reader};
use crate::format::*;
use crate::graph::validate::{repeated_name, validate, Checked, F32Bits, GraphSource};
use crate::graph::{
    BlendPoint, Condition, FadeCurve, Graph, GraphError, Parameter, ParameterKind, Span, State, StateKind, Test,
    Transition, TransitionBlend,
};
use crate::real::Real;

/// A graph section, read in place. Its records decode to the core's graph types in any
/// [`Real`]; [`GraphData::to_graph`] builds the whole [`Graph`].
#[derive(Debug, Clone, Copy)]
pub struct GraphData<'a> {
    pub(super) body: &'a [u8],
    pub(super) name: &'a str,
    pub(super) initial: u16,
    /// Parameters (the base's), then this machine's states, transitions, points, conditions.
    pub(super) counts: [u16; 5],
    /// Offset of the parameter records.
    pub(super) params: usize,
    /// Offset of the parameter names.
    pub(super) param_names: usize,
    /// Offset of this machine's state records.
    pub(super) records: usize,
    /// Offset of this machine's state names.
    pub(super) state_names: usize,
    /// Offset of the first layer record (after the layer count).
    pub(super) layers_at: usize,
    /// Number of layers besides the base (0 for a layer's machine).
    pub(super) num_layers: u16,
}

/// Bytes of each record list: parameters, states, transitions, points, conditions.
pub(super) const LENS: [usize; 5] =
    [GRAPH_PARAMETER_LEN, GRAPH_STATE_LEN, GRAPH_TRANSITION_LEN, GRAPH_POINT_LEN, GRAPH_CONDITION_LEN];

/// The caller's storage for [`GraphData::to_graph`]: one slice per list of the [`Graph`], each
/// at least as long as the graph's list (any initial contents; `Default` values will do).
#[derive(Debug)]
pub struct GraphBuffers<'s, 'a, R> {
    /// Parameters.
    pub parameters: &'s mut [Parameter<'a, R>],
    /// States.
    pub states: &'s mut [State<'a>],
    /// Transitions.
    pub transitions: &'s mut [Transition<R>],
    /// Blend points.
    pub points: &'s mut [BlendPoint<R>],
    /// Conditions.
    pub conditions: &'s mut [Condition<R>],
}

/// A number of the section: its `f32` bits as the validation reads them, or converted to a
/// [`Real`].
trait FromBits: Checked {
    fn from_bits(bits: u32) -> Self;
}

impl<R: Real> FromBits for R {
    fn from_bits(bits: u32) -> Self {
        R::from_f32(f32::from_bits(bits))
    }
}

impl FromBits for F32Bits {
    fn from_bits(bits: u32) -> Self {
        F32Bits(bits)
    }
}

fn f32_to<R: FromBits>(bits: u32) -> R {
    R::from_bits(bits)
}

impl<'a> GraphData<'a> {
    fn read(body: &'a [u8], sec: u16) -> Result<Self, ParseError> {
        let mut r = Reader::for_section(body, sec);
        let name = r.str()?;
        let initial = r.u16()?;
        let mut counts = [0u16; 5];
        for c in &mut counts {
            *c = r.u16()?;
        }
        if counts[0] as usize > MAX_GRAPH_PARAMETERS || counts[1] as usize > MAX_GRAPH_STATES {
            return Err(ParseError::BadGraph { section: sec, part: GraphPart::Header, index: 0 });
        }
        let params = r.pos();
        for (c, l) in counts.iter().zip(LENS) {
            r.bytes(*c as usize * l)?;
        }
        let records = params + counts[0] as usize * GRAPH_PARAMETER_LEN;
        let param_names = r.pos();
        for _ in 0..counts[0] {
            r.str()?;
        }
        let state_names = r.pos();
        for _ in 0..counts[1] {
            r.str()?;
        }
        let mut g = GraphData {
            body,
            name,
            initial,
            counts,
            params,
            param_names,
            records,
            state_names,
            layers_at: body.len(),
            num_layers: 0,
        };
        if r.pos() != body.len() {
            let count = r.u16()?;
            if count == 0 || count as usize > MAX_GRAPH_LAYERS {
                return Err(ParseError::BadGraph { section: sec, part: GraphPart::Header, index: 0 });
            }
            g.layers_at = r.pos();
            let mut at = r.pos();
            for k in 0..count {
                at = g.read_layer(at, sec, k + 1)?.1;
            }
            if at != body.len() {
                return Err(ParseError::BadSection { section: sec });
            }
            g.num_layers = count;
        }
        Ok(g)
    }

    /// Validates a graph section (`sec` in the table) of a file with `num_clips` clips and
    /// `joints` joints: the layout, every code and reserved byte, then the base graph and each
    /// layer by [`LayeredGraph::validate`](crate::graph::LayeredGraph::validate)'s rules.
    pub(super) fn parse(body: &'a [u8], sec: u16, num_clips: usize, joints: usize) -> Result<(), ParseError> {
        let g = Self::read(body, sec)?;
        g.check(num_clips, true).map_err(|(part, index)| ParseError::BadGraph {
            section: sec,
            part,
            index: index as u16,
        })?;
        g.parse_layers(sec, num_clips, joints)
    }

    /// Checks a graph section's layout (see [`Asset::parse_without_graph_rules`]): what
    /// [`GraphData::view`] reads, and the base's parameter records, float defaults finite.
    ///
    /// [`Asset::parse_without_graph_rules`]: super::Asset::parse_without_graph_rules
    pub(super) fn parse_layout(body: &'a [u8], sec: u16) -> Result<(), ParseError> {
        let g = Self::read(body, sec)?;
        let infinite = (0..g.num_parameters())
            .find(|&i| matches!(g.kind_of::<F32Bits>(i), Some(ParameterKind::Float(v)) if !v.finite()));
        g.check_parameters().and_then(|()| infinite.map_or(Ok(()), Err)).map_err(|index| ParseError::BadGraph {
            section: sec,
            part: GraphPart::Parameter,
            index: index as u16,
        })
    }

    /// Checks the parameter records: a known kind, a default of that kind, reserved bytes
    /// zero; the first at fault. Shared by `check` and `parse_layout`, and inlined into
    /// `check` so that a firmware image's `.text` is the same as with the loop written there.
    #[inline(always)]
    fn check_parameters(&self) -> Result<(), usize> {
        let body = self.body;
        for i in 0..self.num_parameters() {
            let at = self.offset(0, i);
            if self.kind_of::<F32Bits>(i).is_none() || byte(body, at + 1) | byte(body, at + 2) | byte(body, at + 3) != 0
            {
                return Err(i);
            }
        }
        Ok(())
    }

    /// Checks this machine's records (with the parameters' for the base) and its graph; the
    /// part and index at fault.
    pub(super) fn check(&self, num_clips: usize, with_parameters: bool) -> Result<(), (GraphPart, usize)> {
        let body = self.body;
        if with_parameters {
            self.check_parameters().map_err(|i| (GraphPart::Parameter, i))?;
        }
        for i in 0..self.num_states() {
            let at = self.offset(1, i);
            if self.state_record(i).is_none() || le_u16(body, at + 10) != 0 {
                return Err((GraphPart::State, i));
            }
        }
        for i in 0..self.num_transitions() {
            if self.transition_of::<F32Bits>(i).is_none() || byte(body, self.offset(2, i) + 11) != 0 {
                return Err((GraphPart::Transition, i));
            }
        }
        for i in 0..self.num_points() {
            if le_u16(body, self.offset(3, i) + 2) != 0 {
                return Err((GraphPart::State, self.state_of_point(i)));
            }
        }
        for i in 0..self.num_conditions() {
            if self.condition_of::<F32Bits>(i).is_none() || byte(body, self.offset(4, i) + 3) != 0 {
                return Err((GraphPart::Condition, i));
            }
        }
        validate::<F32Bits>(self, num_clips).map_err(|e| match e {
            GraphError::InitialState => (GraphPart::Header, 0),
            GraphError::DuplicateParameter { parameter } | GraphError::ParameterDefault { parameter } => {
                (GraphPart::Parameter, parameter)
            }
            GraphError::DuplicateState { state }
            | GraphError::Clip { state }
            | GraphError::Points { state }
            | GraphError::Positions { state }
            | GraphError::BlendParameter { state } => (GraphPart::State, state),
            GraphError::Condition { condition, .. } => (GraphPart::Condition, condition),
            GraphError::TransitionState { transition }
            | GraphError::Conditions { transition }
            | GraphError::Timing { transition } => (GraphPart::Transition, transition),
            _ => (GraphPart::Header, 0),
        })
    }

    pub(super) fn view(body: &'a [u8]) -> Option<Self> {
        Self::read(body, 0).ok()
    }

    /// Offset of record `i` of list `list` (0 parameters … 4 conditions).
    pub(super) fn offset(&self, list: usize, i: usize) -> usize {
        if list == 0 {
            return self.params + i * GRAPH_PARAMETER_LEN;
        }
        let before: usize = (1..list).map(|l| self.counts[l] as usize * LENS[l]).sum();
        self.records + before + i * LENS[list]
    }

    /// The state whose points include point `i` (0 when none does).
    fn state_of_point(&self, i: usize) -> usize {
        (0..self.num_states())
            .find(|&s| {
                matches!(self.state_record(s), Some((StateKind::Blend1d { points, .. } | StateKind::Blend2d { points, .. }, _))
                    if (points.start as usize..points.start as usize + points.len as usize).contains(&i))
            })
            .unwrap_or(0)
    }

    /// The graph's name.
    #[must_use]
    pub fn name(&self) -> &'a str {
        self.name
    }
    /// Bytes of the section.
    #[must_use]
    pub fn byte_len(&self) -> usize {
        self.body.len()
    }
    /// Number of parameters.
    #[must_use]
    pub fn num_parameters(&self) -> usize {
        self.counts[0] as usize
    }
    /// Number of states.
    #[must_use]
    pub fn num_states(&self) -> usize {
        self.counts[1] as usize
    }
    /// Number of transitions.
    #[must_use]
    pub fn num_transitions(&self) -> usize {
        self.counts[2] as usize
    }
    /// Number of blend points.
    #[must_use]
    pub fn num_points(&self) -> usize {
        self.counts[3] as usize
    }
    /// Number of conditions.
    #[must_use]
    pub fn num_conditions(&self) -> usize {
        self.counts[4] as usize
    }
    /// The state playing first.
    #[must_use]
    pub fn initial(&self) -> usize {
        self.initial as usize
    }

    /// The names from offset `at` on.
    fn names_at(&self, at: usize) -> impl Iterator<Item = &'a str> + Clone {
        let body = self.body;
        let mut at = at;
        core::iter::from_fn(move || {
            let n = byte(body, at) as usize;
            let s = body.get(at + 1..at + 1 + n)?;
            at += 1 + n;
            core::str::from_utf8(s).ok()
        })
    }
    /// The parameters' names.
    fn parameter_names(&self) -> impl Iterator<Item = &'a str> + Clone {
        self.names_at(self.param_names).take(self.num_parameters())
    }
    /// The states' names.
    fn state_names(&self) -> impl Iterator<Item = &'a str> + Clone {
        self.names_at(self.state_names).take(self.num_states())
    }
    /// Parameter `i`'s name.
    #[must_use]
    pub fn parameter_name(&self, i: usize) -> Option<&'a str> {
        self.parameter_names().nth(i)
    }
    /// State `i`'s name.
    #[must_use]
    pub fn state_name(&self, i: usize) -> Option<&'a str> {
        self.state_names().nth(i)
    }

    /// Parameter `i`'s kind and default (`None` past the list or for an unknown code).
    #[must_use]
    pub fn parameter_kind<R: Real>(&self, i: usize) -> Option<ParameterKind<R>> {
        self.kind_of(i)
    }

    fn kind_of<R: FromBits>(&self, i: usize) -> Option<ParameterKind<R>> {
        if i >= self.num_parameters() {
            return None;
        }
        let at = self.offset(0, i);
        let bits = le_u32(self.body, at + 4);
        match byte(self.body, at) {
            PARAM_FLOAT => Some(ParameterKind::Float(f32_to(bits))),
            PARAM_BOOL if bits == 0 || bits == 1.0f32.to_bits() => Some(ParameterKind::Bool(bits != 0)),
            PARAM_TRIGGER if bits == 0 => Some(ParameterKind::Trigger),
            _ => None,
        }
    }

    /// State `i`'s kind and looping flag (`None` past the list or for unknown codes).
    fn state_record(&self, i: usize) -> Option<(StateKind, bool)> {
        if i >= self.num_states() {
            return None;
        }
        let (b, at) = (self.body, self.offset(1, i));
        let (kind, flags) = (byte(b, at), byte(b, at + 1));
        let (a, y) = (le_u16(b, at + 2) as usize, le_u16(b, at + 4));
        let points = Span::new(le_u16(b, at + 6), le_u16(b, at + 8));
        if flags & !(STATE_FLAG_LOOP | STATE_FLAG_SYNC) != 0 {
            return None;
        }
        let (looping, sync) = (flags & STATE_FLAG_LOOP != 0, flags & STATE_FLAG_SYNC != 0);
        let kind = match kind {
            STATE_CLIP if y == NONE && points == Span::default() && !sync => StateKind::Clip(a),
            STATE_BLEND1D if y == NONE => StateKind::Blend1d { parameter: a, points, sync },
            STATE_BLEND2D => StateKind::Blend2d { x: a, y: y as usize, points, sync },
            _ => return None,
        };
        Some((kind, looping))
    }

    /// State `i` (`None` past the list).
    #[must_use]
    pub fn state(&self, i: usize) -> Option<State<'a>> {
        let (kind, looping) = self.state_record(i)?;
        Some(State { name: self.state_name(i)?, kind, looping })
    }

    /// Transition `i` (`None` past the list or for unknown codes).
    #[must_use]
    pub fn transition<R: Real>(&self, i: usize) -> Option<Transition<R>> {
        self.transition_of(i)
    }

    fn transition_of<R: FromBits>(&self, i: usize) -> Option<Transition<R>> {
        if i >= self.num_transitions() {
            return None;
        }
        let (b, at) = (self.body, self.offset(2, i));
        let from = le_u16(b, at);
        let conditions = Span::new(le_u16(b, at + 4), le_u16(b, at + 6));
        let (blend, curve, flags) = (byte(b, at + 8), byte(b, at + 9), byte(b, at + 10));
        if flags & !(TRANSITION_FLAG_SYNC | TRANSITION_FLAG_EXIT_TIME) != 0 {
            return None;
        }
        let exit = le_u32(b, at + 12);
        let blend = match (blend, curve) {
            (BLEND_CROSSFADE, CURVE_LINEAR | CURVE_SMOOTHSTEP) => TransitionBlend::Crossfade {
                curve: if curve == CURVE_LINEAR { FadeCurve::Linear } else { FadeCurve::SmoothStep },
                sync: flags & TRANSITION_FLAG_SYNC != 0,
            },
            (BLEND_INERTIALIZE, CURVE_LINEAR) if flags & TRANSITION_FLAG_SYNC == 0 => TransitionBlend::Inertialize,
            _ => return None,
        };
        let exit_time = if flags & TRANSITION_FLAG_EXIT_TIME != 0 {
            Some(f32_to(exit))
        } else if exit == 0 {
            None
        } else {
            return None;
        };
        Some(Transition {
            from: (from != NONE).then_some(from as usize),
            to: le_u16(b, at + 2) as usize,
            conditions,
            exit_time,
            duration: f32_to(le_u32(b, at + 16)),
            blend,
        })
    }

    /// Blend point `i` (`None` past the list).
    #[must_use]
    pub fn point<R: Real>(&self, i: usize) -> Option<BlendPoint<R>> {
        self.point_of(i)
    }

    fn point_of<R: FromBits>(&self, i: usize) -> Option<BlendPoint<R>> {
        if i >= self.num_points() {
            return None;
        }
        let (b, at) = (self.body, self.offset(3, i));
        Some(BlendPoint {
            clip: le_u16(b, at) as usize,
            position: [f32_to(le_u32(b, at + 4)), f32_to(le_u32(b, at + 8))],
        })
    }

    /// Condition `i` (`None` past the list or for an unknown test).
    #[must_use]
    pub fn condition<R: Real>(&self, i: usize) -> Option<Condition<R>> {
        self.condition_of(i)
    }

    fn condition_of<R: FromBits>(&self, i: usize) -> Option<Condition<R>> {
        if i >= self.num_conditions() {
            return None;
        }
        let (b, at) = (self.body, self.offset(4, i));
        let v = le_u32(b, at + 4);
        let zero = v == 0;
        let test = match byte(b, at + 2) {
            TEST_GREATER => Test::Greater(f32_to(v)),
            TEST_LESS => Test::Less(f32_to(v)),
            TEST_AT_LEAST => Test::AtLeast(f32_to(v)),
            TEST_AT_MOST => Test::AtMost(f32_to(v)),
            TEST_TRUE if zero => Test::True,
            TEST_FALSE if zero => Test::False,
            TEST_TRIGGERED if zero => Test::Triggered,
            _ => return None,
        };
        Some(Condition { parameter: le_u16(b, at) as usize, test })
    }

    /// Fills `buffers` with this graph in `R` and returns it, checked by [`Graph::validate`]
    /// against `num_clips` clips (in `R`: Q16 may merge positions that differ by less than
    /// its step, or overflow on values beyond its range). Nothing is allocated.
    ///
    /// # Errors
    ///
    /// [`GraphError::Storage`] when a buffer is shorter than its list, or what
    /// [`Graph::validate`] finds.
    pub fn to_graph<'s, R: Real>(
        &self,
        buffers: GraphBuffers<'s, 'a, R>,
        num_clips: usize,
    ) -> Result<Graph<'s, R>, GraphError> {
        let short = |list: usize, have: usize| -> Result<(), GraphError> {
            let needed = self.counts[list] as usize;
            let names = ["parameters", "states", "transitions", "points", "conditions"];
            if have < needed {
                Err(GraphError::Storage { list: names[list], needed, capacity: have })
            } else {
                Ok(())
            }
        };
        short(0, buffers.parameters.len())?;
        short(1, buffers.states.len())?;
        short(2, buffers.transitions.len())?;
        short(3, buffers.points.len())?;
        short(4, buffers.conditions.len())?;
        let (np, ns) = (self.num_parameters(), self.num_states());
        self.fill_parameters(buffers.parameters)?;
        self.fill(buffers.states, buffers.transitions, buffers.points, buffers.conditions)?;
        let graph = Graph {
            parameters: &buffers.parameters[..np],
            states: &buffers.states[..ns],
            transitions: &buffers.transitions[..self.num_transitions()],
            points: &buffers.points[..self.num_points()],
            conditions: &buffers.conditions[..self.num_conditions()],
            initial: self.initial(),
        };
        graph.validate(num_clips)?;
        Ok(graph)
    }
}

impl<'a> GraphData<'a> {
    /// Fills the first entries of `parameters` (at least as many) with the parameters.
    pub(super) fn fill_parameters<R: Real>(&self, parameters: &mut [Parameter<'a, R>]) -> Result<(), GraphError> {
        // Only bytes that `Asset::parse` did not accept (through `Asset::reopen`) fail here.
        let corrupt = GraphError::InitialState;
        let mut names = self.parameter_names();
        for (i, p) in parameters.iter_mut().take(self.num_parameters()).enumerate() {
            *p = Parameter { name: names.next().ok_or(corrupt)?, kind: self.parameter_kind(i).ok_or(corrupt)? };
        }
        Ok(())
    }

    /// Fills the first entries of each slice (at least as many as the lists) with this
    /// machine's states, transitions, points and conditions.
    pub(super) fn fill<R: Real>(
        &self,
        states: &mut [State<'a>],
        transitions: &mut [Transition<R>],
        points: &mut [BlendPoint<R>],
        conditions: &mut [Condition<R>],
    ) -> Result<(), GraphError> {
        let corrupt = GraphError::InitialState;
        let mut names = self.state_names();
        for (i, s) in states.iter_mut().take(self.num_states()).enumerate() {
            let (kind, looping) = self.state_record(i).ok_or(corrupt)?;
            *s = State { name: names.next().ok_or(corrupt)?, kind, looping };
        }
        for (i, t) in transitions.iter_mut().take(self.num_transitions()).enumerate() {
            *t = self.transition(i).ok_or(corrupt)?;
        }
        for (i, p) in points.iter_mut().take(self.num_points()).enumerate() {
            *p = self.point(i).ok_or(corrupt)?;
        }
        for (i, c) in conditions.iter_mut().take(self.num_conditions()).enumerate() {
            *c = self.condition(i).ok_or(corrupt)?;
        }
        Ok(())
    }
}

impl GraphSource<F32Bits> for GraphData<'_> {
    fn initial(&self) -> usize {
        self.initial as usize
    }
    fn num_parameters(&self) -> usize {
        GraphData::num_parameters(self)
    }
    fn parameter_kind(&self, i: usize) -> Option<ParameterKind<F32Bits>> {
        self.kind_of(i)
    }
    fn duplicate_parameter(&self) -> Option<usize> {
        repeated_name(self.parameter_names())
    }
    fn num_states(&self) -> usize {
        GraphData::num_states(self)
    }
    fn state(&self, i: usize) -> Option<(StateKind, bool)> {
        self.state_record(i)
    }
    fn duplicate_state(&self) -> Option<usize> {
        repeated_name(self.state_names())
    }
    fn num_transitions(&self) -> usize {
        GraphData::num_transitions(self)
    }
    fn transition(&self, i: usize) -> Option<Transition<F32Bits>> {
        self.transition_of(i)
    }
    fn num_points(&self) -> usize {
        GraphData::num_points(self)
    }
    fn point(&self, i: usize) -> Option<BlendPoint<F32Bits>> {
        self.point_of(i)
    }
    fn num_conditions(&self) -> usize {
        GraphData::num_conditions(self)
    }
    fn condition(&self, i: usize) -> Option<Condition<F32Bits>> {
        self.condition_of(i)
    }
}
