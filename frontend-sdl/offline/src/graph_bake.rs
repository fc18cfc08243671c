//! Animation graphs in `.sinew` files: [`bake_graph`] adds a graph read from a JSON file (its
//! clip indices the file's), with its layers, as a graph section, and [`baked_graph`] reads one
//! back as the core's [`Graph`] and [`GraphLayer`]s for the host to run.

use sinew::asset::format::{KIND_GRAPH, SECTION_ENTRY_LEN};
use sinew::asset::writer::Writer;
use sinew::asset::{write_layered_graph, Asset, GraphBuffers, GraphData, LayerBuffers};
use sinew::controller::LayerMode;
use sinew::graph::{BlendPoint, Condition, Graph, GraphLayer, LayeredGraph, Parameter, State, Transition};
use sinew::job::mask::Channel;

use crate::graph_file::{GraphFile, MachineLinks};

/// The name a graph baked from a file gets when none is given.
pub const DEFAULT_GRAPH_NAME: &str = "graph";

/// Returns `bytes` (a valid `.sinew` file) with `file`'s graph added as a graph section
/// called `name`, after the sections already there. `file` must have been read against this
/// file's clips ([`GraphFile::parse`] with its clip lookup).
///
/// # Errors
///
/// A message when `bytes` is not a valid file, a graph called `name` is already in it, or the
/// graph does not fit the section's limits (more than 256 parameters or states, or 64 layers,
/// a name over 255 bytes).
pub fn bake_graph(bytes: &[u8], name: &str, file: &GraphFile) -> Result<Vec<u8>, String> {
    let asset = Asset::parse(bytes).map_err(|e| e.to_string())?;
    if asset.graph_by_name(name).is_some() {
        return Err(format!("the file already has a graph called '{name}'"));
    }
    let count = u32::from_le_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]) as usize;
    let entry = |i: usize| {
        let e = &bytes[24 + i * SECTION_ENTRY_LEN..24 + (i + 1) * SECTION_ENTRY_LEN];
        let word = |k: usize| u32::from_le_bytes([e[k], e[k + 1], e[k + 2], e[k + 3]]) as usize;
        ([e[0], e[1], e[2], e[3]], word(4), word(8))
    };
    let parts = file.parts();
    let layers = parts.layers();
    let graph = LayeredGraph { base: parts.graph(), layers: &layers };
    let mut out = Vec::new();
    // Twice: the first pass measures, the second writes.
    for _ in 0..2 {
        let mut w = Writer::new(&mut out);
        let table = w.begin_file(count as u32 + 1);
        for i in 0..count {
            let (kind, off, len) = entry(i);
            let start = w.len();
            w.bytes(&bytes[off..off + len]);
            w.section(table, i, kind, start);
        }
        let start = w.len();
        write_layered_graph(&mut w, name, &graph).map_err(|e| format!("the graph does not fit a .sinew file: {e}"))?;
        w.section(table, count, KIND_GRAPH, start);
        let len = w.finish();
        if !w.overflowed() {
            break;
        }
        out = vec![0; len];
    }
    Asset::parse(&out).map_err(|e| format!("the baked graph does not parse: {e}"))?;
    Ok(out)
}

/// A graph read from a graph section, with its layers, in buffers it owns.
#[derive(Debug, Clone)]
pub struct BakedGraph<'a> {
    parameters: Vec<Parameter<'a, f32>>,
    base: BakedMachine<'a>,
    layers: Vec<BakedLayer<'a>>,
}

/// One state machine's lists.
#[derive(Debug, Clone)]
struct BakedMachine<'a> {
    states: Vec<State<'a>>,
    links: MachineLinks,
}

/// A layer's header and state machine.
#[derive(Debug, Clone)]
struct BakedLayer<'a> {
    name: &'a str,
    mode: LayerMode,
    weight: f32,
    mask: Vec<Channel>,
    machine: BakedMachine<'a>,
}

impl BakedGraph<'_> {
    /// The core graph (the base graph of a graph with layers).
    #[must_use]
    pub fn graph(&self) -> Graph<'_, f32> {
        self.base.links.graph(&self.parameters, &self.base.states)
    }

    /// The layers, for a [`LayeredGraph`] with [`graph`](Self::graph) as its base:
    /// `LayeredGraph { base: baked.graph(), layers: &baked.layers() }`.
    #[must_use]
    pub fn layers(&self) -> Vec<GraphLayer<'_, f32>> {
        self.layers
            .iter()
            .map(|l| l.machine.links.layer(l.name, l.mode, l.weight, &l.mask, &l.machine.states))
            .collect()
    }
}

/// The graph called `name` in `asset` (the first graph when `name` is `None`), with its
/// layers, read with [`GraphData::to_layered`].
///
/// # Errors
///
/// A message when the file has no such graph, or the graph does not validate.
pub fn baked_graph<'a>(asset: &Asset<'a>, name: Option<&str>) -> Result<BakedGraph<'a>, String> {
    let data: GraphData<'a> = match name {
        Some(n) => asset.graph_by_name(n).ok_or_else(|| format!("the file has no graph called '{n}'"))?,
        None => asset.graph(0).ok_or("the file has no graph (bake one with `sinew bake --graph FILE`)")?,
    };
    let machines =
        (0..=data.num_layers()).filter_map(|l| if l == 0 { Some(data) } else { data.layer(l).map(|d| d.machine()) });
    let mut totals = [0usize; 4];
    for m in machines {
        for (t, n) in totals.iter_mut().zip([m.num_states(), m.num_transitions(), m.num_points(), m.num_conditions()]) {
            *t += n;
        }
    }
    let channels: usize = (1..=data.num_layers()).filter_map(|l| data.layer(l)).map(|l| l.num_channels()).sum();
    let mut parameters = vec![Parameter::default(); data.num_parameters()];
    let mut states = vec![State::default(); totals[0]];
    let mut transitions = vec![Transition::default(); totals[1]];
    let mut points = vec![BlendPoint::default(); totals[2]];
    let mut conditions = vec![Condition::default(); totals[3]];
    let mut mask = vec![Channel::subtree(0, 0); channels];
    {
        let mut slots = vec![GraphLayer::default(); data.num_layers()];
        let buffers = GraphBuffers {
            parameters: &mut parameters,
            states: &mut states,
            transitions: &mut transitions,
            points: &mut points,
            conditions: &mut conditions,
        };
        data.to_layered(buffers, LayerBuffers { channels: &mut mask, layers: &mut slots }, asset.num_clips())
            .map_err(|e| format!("graph '{}': {e}", data.name()))?;
    }
    // The buffers hold the base's lists, then each layer's, in order.
    let (mut st, mut tr, mut pt, mut co) =
        (states.into_iter(), transitions.into_iter(), points.into_iter(), conditions.into_iter());
    let mut mask = mask.into_iter();
    let mut machine = |m: &GraphData<'a>| BakedMachine {
        states: st.by_ref().take(m.num_states()).collect(),
        links: MachineLinks {
            transitions: tr.by_ref().take(m.num_transitions()).collect(),
            points: pt.by_ref().take(m.num_points()).collect(),
            conditions: co.by_ref().take(m.num_conditions()).collect(),
            initial: m.initial(),
        },
    };
    let base = machine(&data);
    let layers = (1..=data.num_layers())
        .filter_map(|l| data.layer(l))
        .map(|l| BakedLayer {
            name: l.name(),
            mode: l.mode(),
            weight: l.weight(),
            mask: mask.by_ref().take(l.num_channels()).collect(),
            machine: machine(&l.machine()),
        })
        .collect();
    Ok(BakedGraph { parameters, base, layers })
}

#[cfg(test)]
mod tests;
