//! The layers of a graph section: [`GraphLayerData`] (one layer read in place), their
//! validation, [`GraphData::to_layered`], which fills caller buffers with the
//! [`LayeredGraph`] a [`LayeredStateMachine`](crate::graph::LayeredStateMachine) runs.

use crate::controller::{AdditiveReference, LayerMode};
use crate::format::reader::{is_finite_bits, le_u16, ordered_bits, Reader};
use crate::format::*;
use crate::graph::{Graph, GraphError, GraphLayer, LayerError, LayeredGraph, Parameter};
use crate::job::mask::Channel;
use crate::real::Real;

use super::graph::{GraphBuffers, GraphData, LENS};

/// A layer of a graph section, read in place: its name, mode, weight, mask and state machine
/// (a [`GraphData`] over the base graph's parameters).
#[derive(Debug, Clone, Copy)]
pub struct GraphLayerData<'a> {
    machine: GraphData<'a>,
    mode: LayerMode,
    weight: u32,
    mask: usize,
    channels: u16,
}

/// The caller's storage for the layers of [`GraphData::to_layered`]: at least as many
/// channels as the layers' masks hold together and one entry per layer (any initial
/// contents; `Default` values will do).
#[derive(Debug)]
pub struct LayerBuffers<'s, R> {
    /// Mask channels, every layer's.
    pub channels: &'s mut [Channel],
    /// Layers.
    pub layers: &'s mut [GraphLayer<'s, R>],
}

impl<'a> GraphLayerData<'a> {
    /// The layer's name.
    #[must_use]
    pub fn name(&self) -> &'a str {
        self.machine.name
    }
    /// Override or additive.
    #[must_use]
    pub fn mode(&self) -> LayerMode {
        self.mode
    }
    /// Its initial weight.
    #[must_use]
    pub fn weight<R: Real>(&self) -> R {
        R::from_f32(f32::from_bits(self.weight))
    }
    /// Its state machine: states, transitions, points and conditions (the layer's own), and
    /// the base graph's parameters.
    #[must_use]
    pub fn machine(&self) -> GraphData<'a> {
        self.machine
    }
    /// Number of mask channels (0: every joint).
    #[must_use]
    pub fn num_channels(&self) -> usize {
        self.channels as usize
    }
    /// Mask channel `i` (`None` past the list).
    #[must_use]
    pub fn channel(&self, i: usize) -> Option<Channel> {
        if i >= self.num_channels() {
            return None;
        }
        let (b, at) = (self.machine.body, self.mask + i * GRAPH_CHANNEL_LEN);
        let (start, end) = (le_u16(b, at) as usize, le_u16(b, at + 2));
        Some(Channel { start, end: (end != NONE).then_some(end as usize), fade_in: le_u16(b, at + 4) })
    }
}

impl<'a> GraphData<'a> {
    /// Reads the layout of layer `layer` (1…) at offset `at`: the layer and the offset after it.
    pub(super) fn read_layer(
        &self,
        at: usize,
        sec: u16,
        layer: u16,
    ) -> Result<(GraphLayerData<'a>, usize), ParseError> {
        let body = self.body;
        let mut r = Reader::for_section(body, sec);
        r.bytes(at)?;
        let name = r.str()?;
        let (mode, reference) = (r.u8()?, r.u8()?);
        let initial = r.u16()?;
        let weight = r.u32()?;
        let mut counts = [0u16; 5];
        for c in &mut counts {
            *c = r.u16()?;
        }
        let bad = ParseError::BadGraphLayer { section: sec, layer, part: GraphPart::Header, index: 0 };
        let mode = match (mode, reference) {
            (LAYER_OVERRIDE, 0) => LayerMode::Override,
            (LAYER_ADDITIVE, REFERENCE_REST) => LayerMode::Additive(AdditiveReference::RestPose),
            (LAYER_ADDITIVE, REFERENCE_BAKED) => LayerMode::Additive(AdditiveReference::Baked),
            _ => return Err(bad),
        };
        if counts[1] as usize > MAX_GRAPH_STATES {
            return Err(bad);
        }
        let mask = r.pos();
        r.bytes(counts[0] as usize * GRAPH_CHANNEL_LEN)?;
        let records = r.pos();
        for (c, l) in counts.iter().zip(LENS).skip(1) {
            r.bytes(*c as usize * l)?;
        }
        let state_names = r.pos();
        for _ in 0..counts[1] {
            r.str()?;
        }
        let machine = GraphData {
            name,
            initial,
            counts: [self.counts[0], counts[1], counts[2], counts[3], counts[4]],
            records,
            state_names,
            layers_at: body.len(),
            num_layers: 0,
            ..*self
        };
        Ok((GraphLayerData { machine, mode, weight, mask, channels: counts[0] }, r.pos()))
    }

    /// Validates the layers of a parsed section: codes, weights, names, masks against `joints`
    /// joints, then each layer's records and graph.
    pub(super) fn parse_layers(&self, sec: u16, num_clips: usize, joints: usize) -> Result<(), ParseError> {
        let one = 1.0f32.to_bits();
        for k in 0..self.num_layers() {
            let layer = k as u16 + 1;
            let bad = |part, index: usize| ParseError::BadGraphLayer { section: sec, layer, part, index: index as u16 };
            let l = self.layer(k + 1).ok_or(bad(GraphPart::Header, 0))?;
            let w = l.weight;
            if !(is_finite_bits(w) && ordered_bits(w) >= 0 && ordered_bits(w) <= ordered_bits(one)) {
                return Err(bad(GraphPart::Header, 0));
            }
            if (1..=k).filter_map(|o| self.layer(o)).any(|o| o.name() == l.name()) {
                return Err(bad(GraphPart::Header, 0));
            }
            for c in 0..l.num_channels() {
                let at = l.mask + c * GRAPH_CHANNEL_LEN;
                let (start, end) = (le_u16(self.body, at) as usize, le_u16(self.body, at + 2));
                let end_ok = end == NONE || (start..joints).contains(&(end as usize));
                if start >= joints || !end_ok || le_u16(self.body, at + 6) != 0 {
                    return Err(bad(GraphPart::Mask, c));
                }
            }
            l.machine.check(num_clips, false).map_err(|(part, index)| bad(part, index))?;
        }
        Ok(())
    }

    /// Number of layers besides the base.
    #[must_use]
    pub fn num_layers(&self) -> usize {
        self.num_layers as usize
    }

    /// Layer `layer` (1…, as in [`LayeredGraph`]; `None` for 0 or past the layers).
    #[must_use]
    pub fn layer(&self, layer: usize) -> Option<GraphLayerData<'a>> {
        if layer == 0 || layer > self.num_layers() {
            return None;
        }
        let mut at = self.layers_at;
        for k in 1..=layer {
            let (l, next) = self.read_layer(at, 0, k as u16).ok()?;
            if k == layer {
                return Some(l);
            }
            at = next;
        }
        None
    }

    /// Fills `buffers` (each list long enough for the base's and every layer's entries
    /// together) and `layers` with this graph and its layers in `R`, and returns the
    /// [`LayeredGraph`], checked by [`LayeredGraph::validate`] against `num_clips` clips.
    /// Nothing is allocated. A graph without layers gives a layered graph of its base alone.
    ///
    /// # Errors
    ///
    /// [`GraphError::Storage`] (layer 0) when a buffer is shorter than its lists, or what
    /// [`LayeredGraph::validate`] finds, with its layer.
    pub fn to_layered<'s, R: Real>(
        &self,
        buffers: GraphBuffers<'s, 'a, R>,
        layers: LayerBuffers<'s, R>,
        num_clips: usize,
    ) -> Result<LayeredGraph<'s, R>, LayerError> {
        let base = |error| LayerError { layer: 0, error };
        let corrupt = base(GraphError::InitialState);
        let mut needed = [self.num_parameters(), 0, 0, 0, 0, 0, self.num_layers()];
        for k in 0..=self.num_layers() {
            let (m, channels) = match k {
                0 => (*self, 0),
                k => self.layer(k).map(|l| (l.machine, l.num_channels())).ok_or(corrupt)?,
            };
            let lists = [m.num_states(), m.num_transitions(), m.num_points(), m.num_conditions(), channels];
            for (n, c) in needed[1..6].iter_mut().zip(lists) {
                *n += c;
            }
        }
        let have = [
            buffers.parameters.len(),
            buffers.states.len(),
            buffers.transitions.len(),
            buffers.points.len(),
            buffers.conditions.len(),
            layers.channels.len(),
            layers.layers.len(),
        ];
        let names = ["parameters", "states", "transitions", "points", "conditions", "channels", "layers"];
        for ((list, needed), capacity) in names.into_iter().zip(needed).zip(have) {
            if capacity < needed {
                return Err(base(GraphError::Storage { list, needed, capacity }));
            }
        }
        let GraphBuffers { parameters, mut states, mut transitions, mut points, mut conditions } = buffers;
        let (parameters, _) = parameters.split_at_mut(self.num_parameters());
        self.fill_parameters(parameters).map_err(base)?;
        let parameters: &'s [Parameter<'a, R>] = parameters;
        let mut channels = layers.channels;
        let (slots, _) = layers.layers.split_at_mut(self.num_layers());
        let mut machine = |m: &GraphData<'a>| -> Result<Graph<'s, R>, LayerError> {
            let st = carve(&mut states, m.num_states()).ok_or(corrupt)?;
            let tr = carve(&mut transitions, m.num_transitions()).ok_or(corrupt)?;
            let pt = carve(&mut points, m.num_points()).ok_or(corrupt)?;
            let co = carve(&mut conditions, m.num_conditions()).ok_or(corrupt)?;
            m.fill(st, tr, pt, co).map_err(base)?;
            Ok(Graph { parameters, states: st, transitions: tr, points: pt, conditions: co, initial: m.initial() })
        };
        let base_graph = machine(self)?;
        for (k, slot) in slots.iter_mut().enumerate() {
            let l = self.layer(k + 1).ok_or(corrupt)?;
            let g = machine(&l.machine)?;
            let mask = carve(&mut channels, l.num_channels()).ok_or(corrupt)?;
            for (i, c) in mask.iter_mut().enumerate() {
                *c = l.channel(i).ok_or(corrupt)?;
            }
            *slot = GraphLayer {
                name: l.name(),
                mode: l.mode,
                weight: l.weight(),
                mask,
                states: g.states,
                transitions: g.transitions,
                points: g.points,
                conditions: g.conditions,
                initial: g.initial,
            };
        }
        let graph = LayeredGraph { base: base_graph, layers: slots };
        graph.validate(num_clips)?;
        Ok(graph)
    }
}

/// The first `n` entries of `rest`, which keeps the others (`None` when it holds fewer).
fn carve<'s, T>(rest: &mut &'s mut [T], n: usize) -> Option<&'s mut [T]> {
    if n > rest.len() {
        return None;
    }
    let (head, tail) = core::mem::take(rest).split_at_mut(n);
    *rest = tail;
    Some(head)
}
