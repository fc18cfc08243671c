//! Runs an animation graph file on a model from time 0, in steps of 1/60 s, with parameter
//! changes at given times: the work of `sinew dump --graph`.

use sinew::capacity::OneLayer;
use sinew::controller::ClipEntry;
use sinew::graph::{Graph, LayeredGraph, LayeredScratch, LayeredStateMachine, ParameterKind, StateMachine};
use sinew::math::SoaTransform;

use crate::model::Model;

sinew::capacity! {
    /// The capacities the host runs graphs with: the runtime's joints
    /// ([`sinew_host::limits::RUNTIME_JOINTS`]); two states of up to eight clips each (the
    /// slots of a crossfade between blend spaces); 4 layers, the base included; three tracks per
    /// joint; 32 parameters.
    pub struct Host {
        joints: sinew_host::limits::RUNTIME_JOINTS,
        slots: 2 * sinew::graph::MAX_BLEND_POINTS,
        layers: 4,
        params: 32,
    }
}

/// The state machine the host runs graphs with (one layer's).
pub type HostMachine<'g> = StateMachine<'g, f32, OneLayer<Host>>;

/// The layered state machine the host runs graphs with layers with.
pub type HostLayered<'g> = LayeredStateMachine<'g, f32, Host>;

/// The step of a run: 1/60 s.
pub const STEP: f64 = 1.0 / 60.0;
/// The longest run `--time` asks for, in seconds (one hour: 216,000 steps). Beyond a few hours
/// the f32 step ends no longer hold 1/60 s steps.
pub const MAX_GRAPH_TIME: f32 = 3600.0;

/// A parameter change: `--set NAME=VALUE@SECONDS`.
#[derive(Debug, Clone, PartialEq)]
pub struct SetSpec {
    /// Parameter name.
    pub name: String,
    /// The value as written: a number, `true` or `false` (a trigger is set by `true` or 1).
    pub value: String,
    /// When it applies: before the first step starting at or after this time, seconds.
    pub at: f32,
}

/// Parses `NAME=VALUE@SECONDS`.
///
/// # Errors
///
/// A message for a missing `=` or `@`, an empty name or value, or a time that is not a finite
/// number of seconds of at least 0.
pub fn parse_set(s: &str) -> Result<SetSpec, String> {
    let (name, rest) = s.split_once('=').ok_or_else(|| format!("'{s}': expected NAME=VALUE@SECONDS"))?;
    let (value, at) = rest.rsplit_once('@').ok_or_else(|| format!("'{s}': expected NAME=VALUE@SECONDS"))?;
    let (name, value) = (name.trim(), value.trim());
    if name.is_empty() || value.is_empty() {
        return Err(format!("'{s}': the name and the value must not be empty"));
    }
    let at = at.trim().parse::<f32>().ok().filter(|t| t.is_finite() && *t >= 0.0);
    let at = at.ok_or_else(|| format!("'{s}': the time must be a number of seconds, at least 0"))?;
    Ok(SetSpec { name: name.to_string(), value: value.to_string(), at })
}

/// Where a run ended: the current state, and the transition in progress (the base graph's),
/// and each layer's.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphState {
    /// The current state's name.
    pub state: String,
    /// The transition in progress: source, destination, progress in `[0, 1]`.
    pub transition: Option<(String, String, f32)>,
    /// The layers besides the base, in order (empty for a graph without layers).
    pub layers: Vec<LayerState>,
}

/// Where a layer's run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerState {
    /// The layer's name.
    pub name: String,
    /// Its weight.
    pub weight: f32,
    /// Its current state's name.
    pub state: String,
    /// Its transition in progress: source, destination, progress in `[0, 1]`.
    pub transition: Option<(String, String, f32)>,
}

fn transition_json(t: Option<&(String, String, f32)>) -> String {
    match t {
        Some((from, to, p)) => format!(
            "{{\"from\":{},\"to\":{},\"progress\":{}}}",
            serde_json::Value::from(from.as_str()),
            serde_json::Value::from(to.as_str()),
            p
        ),
        None => "null".to_string(),
    }
}

impl GraphState {
    /// The state as the JSON object `dump` prints: `state` and `transition` for the base, and
    /// for a graph with layers `layers`, a list of `{name, weight, state, transition}`.
    #[must_use]
    pub fn to_json(&self) -> String {
        let mut json = format!(
            "{{\"state\":{},\"transition\":{}",
            serde_json::Value::from(self.state.as_str()),
            transition_json(self.transition.as_ref())
        );
        if !self.layers.is_empty() {
            let layers: Vec<String> = self
                .layers
                .iter()
                .map(|l| {
                    format!(
                        "{{\"name\":{},\"weight\":{},\"state\":{},\"transition\":{}}}",
                        serde_json::Value::from(l.name.as_str()),
                        l.weight,
                        serde_json::Value::from(l.state.as_str()),
                        transition_json(l.transition.as_ref())
                    )
                })
                .collect();
            json += &format!(",\"layers\":[{}]", layers.join(","));
        }
        json + "}"
    }
}

fn apply(machine: &mut HostLayered<'_>, graph: &Graph<'_, f32>, set: &SetSpec) -> Result<(), String> {
    let p = graph.parameter(&set.name).ok_or_else(|| format!("--set: unknown parameter '{}'", set.name))?;
    let bad = || format!("--set: '{}' is not a value for parameter '{}'", set.value, set.name);
    let flag = || match set.value.as_str() {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    };
    let r = match graph.parameters.get(p).map(|p| p.kind) {
        Some(ParameterKind::Float(_)) => {
            let v = set.value.parse::<f32>().ok().filter(|v| v.is_finite()).ok_or_else(bad)?;
            machine.set_float(p, v)
        }
        Some(ParameterKind::Bool(_)) => machine.set_bool(p, flag().ok_or_else(bad)?),
        Some(ParameterKind::Trigger) | None => machine.fire(p, flag().ok_or_else(bad)?),
    };
    r.map_err(|e| format!("--set {}: {e}", set.name))
}

/// Runs `graph` (from a [`GraphFile`](crate::graph_file::GraphFile) or baked in the model:
/// [`baked_graph`](crate::graph_bake::baked_graph)) on `model`: [`run_layered`] without
/// layers, `each` given the base's state machine.
///
/// # Errors
///
/// As [`run_layered`].
pub fn run_graph(
    model: &Model,
    graph: Graph<'_, f32>,
    sets: &[SetSpec],
    time: f32,
    mut each: impl FnMut(f64, &[SoaTransform<f32>], &HostMachine<'_>),
) -> Result<(Vec<SoaTransform<f32>>, GraphState), String> {
    run_layered(model, LayeredGraph::new(graph), sets, time, |t, pose, m| {
        if let Some(base) = m.machine(0) {
            each(t, pose, base);
        }
    })
}

/// Runs `graph` (a base graph and its layers, from a
/// [`GraphFile`](crate::graph_file::GraphFile) or baked in the model:
/// [`baked_graph`](crate::graph_bake::baked_graph)) on `model` from 0 to `time` seconds in
/// steps of 1/60 s (the last one shorter when `time` is not a multiple), applying each change
/// of `sets` before the first step that starts at or after its time, and calls
/// `each(step_end_time, pose, machine)` after every step. Returns the final local pose and
/// state.
///
/// # Errors
///
/// A message for a model with more joints than [`Host::SOA`] holds, a graph with more than
/// [`Host::LAYERS`] layers, a change naming an unknown parameter or a value of the wrong kind, or a
/// state-machine error.
pub fn run_layered(
    model: &Model,
    graph: LayeredGraph<'_, f32>,
    sets: &[SetSpec],
    time: f32,
    mut each: impl FnMut(f64, &[SoaTransform<f32>], &HostLayered<'_>),
) -> Result<(Vec<SoaTransform<f32>>, GraphState), String> {
    let asset = model.asset();
    let clips: Vec<ClipEntry<'_, f32>> =
        (0..asset.num_clips()).filter_map(|i| asset.clip(i)).map(ClipEntry::new).collect();
    let skeleton = model.skeleton();
    if skeleton.num_soa_joints() > Host::SOA {
        return Err(format!("the model has {} joints; graphs run on at most {}", skeleton.num_joints(), 4 * Host::SOA));
    }
    if !(time.is_finite() && (0.0..=MAX_GRAPH_TIME).contains(&time)) {
        return Err(format!(
            "--time must be a number of seconds from 0 to {MAX_GRAPH_TIME} (a graph runs in 1/60 s steps)"
        ));
    }
    let describe = |e: sinew::graph::LayerError| {
        if e.layer == 0 {
            e.error.to_string()
        } else {
            let name = graph.layers.get(e.layer - 1).map_or("?", |l| l.name);
            format!("layer '{name}': {}", e.error)
        }
    };
    let mut machine = Box::new(HostLayered::new(graph, &clips).map_err(describe)?);
    // Check every change once before running.
    for s in sets {
        apply(&mut machine.clone(), &graph.base, s)?;
    }
    let mut scratch = Box::new(LayeredScratch::<f32, Host>::new());
    let mut pose = vec![SoaTransform::IDENTITY; skeleton.num_soa_joints()];
    let mut applied = vec![false; sets.len()];
    let end = f64::from(time);
    let mut k = 0u64;
    loop {
        let start = k as f64 * STEP;
        if start >= end - 1e-9 {
            break;
        }
        for (s, done) in sets.iter().zip(applied.iter_mut()) {
            if !*done && f64::from(s.at) <= start + 1e-9 {
                apply(&mut machine, &graph.base, s)?;
                *done = true;
            }
        }
        // Step ends rounded to f32, steps as their differences (exact: the ends are within a
        // factor of two of each other), so the clips' clocks sum exactly to the last end.
        let stop = (start + STEP).min(end);
        let dt = stop as f32 - start as f32;
        machine.update(dt, &clips, skeleton, &mut scratch, &mut pose, |_| {}).map_err(|e| e.to_string())?;
        k += 1;
        each(stop, &pose, &machine);
    }
    let status = |layer: usize| {
        let g = graph.graph(layer)?;
        let m = machine.machine(layer)?;
        let name = |s: usize| g.states.get(s).map_or("?", |s| s.name).to_string();
        Some((name(m.current_state()), m.transition().map(|t| (name(t.from), name(t.to), t.progress))))
    };
    let (state, transition) = status(0).unwrap_or_default();
    let layers = (1..machine.num_layers())
        .filter_map(|l| {
            let (state, transition) = status(l)?;
            Some(LayerState {
                name: graph.layers.get(l - 1).map_or("?", |g| g.name).to_string(),
                weight: machine.layer_weight(l).unwrap_or(0.0),
                state,
                transition,
            })
        })
        .collect();
    Ok((pose, GraphState { state, transition, layers }))
}

#[cfg(test)]
mod tests;
