//! Animation graphs in `.sinew` files: [`bake_graph`] adds a graph read from a JSON file (its
//! clip indices the file's) as a graph section, and [`baked_graph`] reads one back as the
//! core's [`Graph`] for the host to run.

use sinew::asset::format::{KIND_GRAPH, SECTION_ENTRY_LEN};
use sinew::asset::writer::Writer;
use sinew::asset::{write_graph, Asset, GraphBuffers, GraphData};
use sinew::graph::{BlendPoint, Condition, Graph, Parameter, State, Transition};

use crate::graph_file::GraphFile;

/// The name a graph baked from a file gets when none is given.
pub const DEFAULT_GRAPH_NAME: &str = "graph";

/// Returns `bytes` (a valid `.sinew` file) with `file`'s graph added as a graph section
/// called `name`, after the sections already there. `file` must have been read against this
/// file's clips ([`GraphFile::parse`] with its clip lookup).
///
/// # Errors
///
/// A message when `bytes` is not a valid file, `file` has layers (not baked yet), a graph called
/// `name` is already in it, or the
/// graph does not fit the section's limits (more than 256 parameters or states, a name over
/// 255 bytes).
pub fn bake_graph(bytes: &[u8], name: &str, file: &GraphFile) -> Result<Vec<u8>, String> {
    let asset = Asset::parse(bytes).map_err(|e| e.to_string())?;
    if file.num_layers() > 0 {
        return Err("graph layers are not baked into .sinew files yet: run the graph from its file".to_string());
    }
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
    let graph = parts.graph();
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
        write_graph(&mut w, name, &graph).map_err(|e| format!("the graph does not fit a .sinew file: {e}"))?;
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

/// A graph read from a graph section, in buffers it owns.
#[derive(Debug, Clone)]
pub struct BakedGraph<'a> {
    parameters: Vec<Parameter<'a, f32>>,
    states: Vec<State<'a>>,
    transitions: Vec<Transition<f32>>,
    points: Vec<BlendPoint<f32>>,
    conditions: Vec<Condition<f32>>,
    initial: usize,
}

impl BakedGraph<'_> {
    /// The core graph.
    #[must_use]
    pub fn graph(&self) -> Graph<'_, f32> {
        Graph {
            parameters: &self.parameters,
            states: &self.states,
            transitions: &self.transitions,
            points: &self.points,
            conditions: &self.conditions,
            initial: self.initial,
        }
    }
}

/// The graph called `name` in `asset` (the first graph when `name` is `None`), read with
/// [`GraphData::to_graph`].
///
/// # Errors
///
/// A message when the file has no such graph, or the graph does not validate.
pub fn baked_graph<'a>(asset: &Asset<'a>, name: Option<&str>) -> Result<BakedGraph<'a>, String> {
    let data: GraphData<'a> = match name {
        Some(n) => asset.graph_by_name(n).ok_or_else(|| format!("the file has no graph called '{n}'"))?,
        None => asset.graph(0).ok_or("the file has no graph (bake one with `sinew bake --graph FILE`)")?,
    };
    let mut parameters = vec![Parameter::default(); data.num_parameters()];
    let mut states = vec![State::default(); data.num_states()];
    let mut transitions = vec![Transition::default(); data.num_transitions()];
    let mut points = vec![BlendPoint::default(); data.num_points()];
    let mut conditions = vec![Condition::default(); data.num_conditions()];
    let buffers = GraphBuffers {
        parameters: &mut parameters,
        states: &mut states,
        transitions: &mut transitions,
        points: &mut points,
        conditions: &mut conditions,
    };
    data.to_graph(buffers, asset.num_clips()).map_err(|e| format!("graph '{}': {e}", data.name()))?;
    Ok(BakedGraph { parameters, states, transitions, points, conditions, initial: data.initial() })
}

#[cfg(test)]
mod tests;
