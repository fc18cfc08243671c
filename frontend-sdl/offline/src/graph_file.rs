//! Animation graph files: the JSON a user edits, read into a [`GraphFile`] whose
//! [`GraphParts::graph`] is the core's [`Graph`], validated against a model's clips.
//!
//! # Format
//!
//! ```json
//! {"parameters": {"speed": 0.0, "grounded": true, "jump": "trigger", "side": 0.0},
//!  "states": [{"name": "idle", "clip": "Survey"},
//!             {"name": "move", "blend1d": {"parameter": "speed",
//!                                          "clips": [["Walk", 1.0], ["Run", 3.0]], "sync": true}},
//!             {"name": "strafe", "blend2d": {"x": "side", "y": "speed",
//!                                            "clips": [["Walk", [0, 1]], ["Run", [0, 3]], ["Survey", [1, 0]]]}},
//!             {"name": "jump", "clip": "Jump", "loop": false}],
//!  "transitions": [{"from": "idle", "to": "move", "when": "speed > 0.1", "duration": 0.3, "blend": "inertialize"},
//!                  {"from": "move", "to": "idle", "when": "speed <= 0.1", "duration": 0.25, "blend": "crossfade"},
//!                  {"from": "*", "to": "jump", "when": "jump && grounded", "duration": 0.1},
//!                  {"from": "jump", "to": "idle", "exit_time": 1.0, "duration": 0.2, "curve": "smoothstep"}],
//!  "initial": "idle"}
//! ```
//!
//! - `parameters`: name → a number (float, its initial value), `true`/`false` (bool) or
//!   `"trigger"`. Parameters are numbered in name order.
//! - `states`: each has a `name` and one of `clip` (a clip name or index), `blend1d`
//!   (`parameter`, `clips` as `[clip, position]` pairs with increasing positions, optional
//!   `sync`) or `blend2d` (`x`, `y`, `clips` as `[clip, [x, y]]` pairs, optional `sync`), and
//!   optionally `"loop": false` (the clips stop at their end).
//! - `transitions`, by priority: `from` (a state, or `"*"` for any state), `to`, optional
//!   `when` (conditions joined by `&&`: `NAME > N`, `NAME < N`, `NAME >= N`, `NAME <= N`,
//!   `NAME` for a true bool or a set trigger, `!NAME` for a false bool), optional `exit_time`
//!   (cycles of the source since it was entered), `duration` (seconds, default 0.2), `blend`
//!   (`"crossfade"`, the default, or `"inertialize"`), and for crossfades `curve` (`"linear"`,
//!   the default, or `"smoothstep"`) and `sync` (default false).
//! - `initial`: the state playing first.
//! - `layers` (optional), each a state machine of its own over the same parameters, combined
//!   in order on top of the base (see [`sinew::graph::LayeredStateMachine`]):
//!
//!   ```json
//!   "layers": [{"name": "wave", "mode": "override", "mask": ["spine", {"joint": "neck", "fade_in": 1}],
//!               "weight": 1.0,
//!               "states": [{"name": "rest", "clip": "Survey"}, {"name": "wave", "clip": "Run"}],
//!               "transitions": [{"from": "rest", "to": "wave", "when": "waving", "duration": 0.2}],
//!               "initial": "rest"}]
//!   ```
//!
//!   `name` (unique among the layers); `mode`: `"override"` (the default: covers the layers
//!   below by its weight and mask) or `"additive"` (adds its pose as a delta, against
//!   `"reference": "rest"`, the default, the skeleton's rest pose, or `"baked"`: the clips hold
//!   deltas); `mask`: joints whose subtrees it covers, by name, or `{"joint": NAME, "fade_in":
//!   LEVELS}` for a soft edge (default: every joint); `weight` from 0 to 1 (default 1);
//!   `states`, `transitions` and `initial` as the base graph's, state names the layer's own.
//!
//! Unknown keys are refused, so a misspelt key does not pass silently.

use serde_json::{Map, Value};
use sinew::controller::{AdditiveReference, LayerMode};
use sinew::graph::{
    BlendPoint, Condition, FadeCurve, Graph, GraphLayer, LayerError, LayeredGraph, Parameter, ParameterKind, Span,
    State, StateKind, Test, Transition, TransitionBlend, MAX_BLEND_POINTS,
};
use sinew::job::mask::Channel;

/// Default transition duration, seconds.
pub const DEFAULT_DURATION: f32 = 0.2;

/// A graph read from a file: the core's lists, owning their names.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphFile {
    parameter_names: Vec<String>,
    parameter_kinds: Vec<ParameterKind<f32>>,
    base: Machine,
    layers: Vec<LayerFile>,
}

/// One state machine's lists: the base graph's or a layer's.
#[derive(Debug, Clone, PartialEq, Default)]
struct Machine {
    state_names: Vec<String>,
    state_kinds: Vec<(StateKind, bool)>,
    links: MachineLinks,
}

/// The lists of a state machine that refer to its states, parameters and clips by index: its
/// transitions, blend points and conditions, and its initial state. A graph read from a file
/// and one read from a `.sinew` file keep them alike.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct MachineLinks {
    pub(crate) transitions: Vec<Transition<f32>>,
    pub(crate) points: Vec<BlendPoint<f32>>,
    pub(crate) conditions: Vec<Condition<f32>>,
    pub(crate) initial: usize,
}

impl MachineLinks {
    /// The core graph of these lists with `parameters` and `states`.
    pub(crate) fn graph<'a>(&'a self, parameters: &'a [Parameter<'a, f32>], states: &'a [State<'a>]) -> Graph<'a, f32> {
        Graph {
            parameters,
            states,
            transitions: &self.transitions,
            points: &self.points,
            conditions: &self.conditions,
            initial: self.initial,
        }
    }

    /// The core layer of these lists with `states`, called `name`, blending by `mode` at
    /// `weight` over `mask`.
    pub(crate) fn layer<'a>(
        &'a self,
        name: &'a str,
        mode: LayerMode,
        weight: f32,
        mask: &'a [Channel],
        states: &'a [State<'a>],
    ) -> GraphLayer<'a, f32> {
        GraphLayer {
            name,
            mode,
            weight,
            mask,
            states,
            transitions: &self.transitions,
            points: &self.points,
            conditions: &self.conditions,
            initial: self.initial,
        }
    }
}

/// A layer read from a file.
#[derive(Debug, Clone, PartialEq)]
struct LayerFile {
    name: String,
    mode: LayerMode,
    weight: f32,
    mask: Vec<Channel>,
    machine: Machine,
}

/// The borrowed lists a [`Graph`] refers to, made by [`GraphFile::parts`].
#[derive(Debug, Clone)]
pub struct GraphParts<'a> {
    parameters: Vec<Parameter<'a, f32>>,
    states: Vec<State<'a>>,
    layer_states: Vec<Vec<State<'a>>>,
    file: &'a GraphFile,
}

impl GraphParts<'_> {
    /// The core graph (the base graph of a graph with layers).
    #[must_use]
    pub fn graph(&self) -> Graph<'_, f32> {
        self.file.base.links.graph(&self.parameters, &self.states)
    }

    /// The layers, for a [`LayeredGraph`] with [`graph`](Self::graph) as its base:
    /// `LayeredGraph { base: parts.graph(), layers: &parts.layers() }`.
    #[must_use]
    pub fn layers(&self) -> Vec<GraphLayer<'_, f32>> {
        self.file
            .layers
            .iter()
            .zip(&self.layer_states)
            .map(|(l, states)| l.machine.links.layer(&l.name, l.mode, l.weight, &l.mask, states))
            .collect()
    }
}

impl Machine {
    /// Index of the state called `name`.
    fn state(&self, name: &str) -> Option<usize> {
        self.state_names.iter().position(|n| n == name)
    }

    fn states(&self) -> Vec<State<'_>> {
        self.state_names
            .iter()
            .zip(&self.state_kinds)
            .map(|(name, &(kind, looping))| State { name, kind, looping })
            .collect()
    }
}

fn keys(obj: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<(), String> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!("{what}: unknown key '{k}'")),
        None => Ok(()),
    }
}

fn finite(v: &Value, what: &str) -> Result<f32, String> {
    v.as_f64()
        .map(|x| x as f32)
        .filter(|x| x.is_finite())
        .ok_or_else(|| format!("{what}: expected a finite number, found {v}"))
}

fn text<'v>(v: Option<&'v Value>, what: &str) -> Result<&'v str, String> {
    v.and_then(Value::as_str).ok_or_else(|| format!("{what}: expected a string"))
}

/// `start..start + len` as a [`Span`], if it fits its `u16`s.
fn span(start: usize, len: usize) -> Option<Span> {
    Some(Span::new(u16::try_from(start).ok()?, u16::try_from(len).ok()?))
}

impl GraphFile {
    /// Reads a graph without layer masks from JSON text, resolving clip names (or indices)
    /// with `clip`: [`parse_with_joints`](Self::parse_with_joints) with no joint known.
    ///
    /// # Errors
    ///
    /// As [`parse_with_joints`](Self::parse_with_joints) (a layer mask names an unknown joint).
    pub fn parse(json: &str, clip: impl Fn(&str) -> Option<usize>, num_clips: usize) -> Result<GraphFile, String> {
        Self::parse_with_joints(json, clip, |_| None, num_clips)
    }

    /// Reads a graph from JSON text, resolving clip names (or indices) with `clip` and the
    /// joint names of layer masks with `joint`.
    ///
    /// # Errors
    ///
    /// One line naming what is wrong: malformed JSON, a missing or unknown key, an unknown
    /// clip, state, parameter or joint, a malformed condition, a bad number; then what
    /// [`LayeredGraph::validate`] finds, with the names of the layers, states and transitions
    /// involved.
    pub fn parse_with_joints(
        json: &str,
        clip: impl Fn(&str) -> Option<usize>,
        joint: impl Fn(&str) -> Option<usize>,
        num_clips: usize,
    ) -> Result<GraphFile, String> {
        let root: Value = serde_json::from_str(json).map_err(|e| format!("not a JSON graph: {e}"))?;
        let root = root.as_object().ok_or("the graph must be a JSON object")?;
        keys(root, &["parameters", "states", "transitions", "initial", "layers"], "graph")?;
        let mut g = GraphFile {
            parameter_names: Vec::new(),
            parameter_kinds: Vec::new(),
            base: Machine::default(),
            layers: Vec::new(),
        };
        if let Some(p) = root.get("parameters") {
            let p = p.as_object().ok_or("parameters: expected an object of name: value")?;
            for (name, v) in p {
                let kind = match v {
                    Value::Bool(b) => ParameterKind::Bool(*b),
                    Value::String(s) if s == "trigger" => ParameterKind::Trigger,
                    Value::Number(_) => ParameterKind::Float(finite(v, &format!("parameter '{name}'"))?),
                    _ => return Err(format!("parameter '{name}': expected a number, true, false or \"trigger\"")),
                };
                g.parameter_names.push(name.clone());
                g.parameter_kinds.push(kind);
            }
        }
        g.base = g.read_machine(root, "", &clip)?;
        if let Some(layers) = root.get("layers") {
            let layers = layers.as_array().ok_or("layers: expected a list of layers")?;
            for (i, l) in layers.iter().enumerate() {
                let obj = l.as_object().ok_or_else(|| format!("layers[{i}]: expected an object"))?;
                let layer = g.read_layer(obj, i, &clip, &joint)?;
                g.layers.push(layer);
            }
        }
        let parts = g.parts();
        let layers = parts.layers();
        LayeredGraph { base: parts.graph(), layers: &layers }.validate(num_clips).map_err(|e| g.describe(e))?;
        Ok(g)
    }

    /// A state machine's `states`, `transitions` and `initial` in `obj`; `prefix` names the
    /// layer in messages (empty for the base).
    fn read_machine(
        &self,
        obj: &Map<String, Value>,
        prefix: &str,
        clip: &impl Fn(&str) -> Option<usize>,
    ) -> Result<Machine, String> {
        let mut m = Machine::default();
        let states = obj
            .get("states")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{prefix}states: expected a list of states"))?;
        // Names first: transitions and the initial state refer to them.
        for (i, s) in states.iter().enumerate() {
            let obj = s.as_object().ok_or_else(|| format!("{prefix}states[{i}]: expected an object"))?;
            let name = text(obj.get("name"), &format!("{prefix}states[{i}].name"))?;
            if m.state_names.iter().any(|n| n == name) {
                return Err(format!("{prefix}state '{name}' is defined twice"));
            }
            m.state_names.push(name.to_string());
        }
        for (i, s) in states.iter().enumerate() {
            let obj = s.as_object().ok_or_else(|| format!("{prefix}states[{i}]: expected an object"))?;
            let what = format!("{prefix}state '{}'", m.state_names[i]);
            let kind = self.read_state(&mut m, obj, &what, clip)?;
            m.state_kinds.push(kind);
        }
        if let Some(t) = obj.get("transitions") {
            let t = t.as_array().ok_or_else(|| format!("{prefix}transitions: expected a list"))?;
            for (i, t) in t.iter().enumerate() {
                let o = t.as_object().ok_or_else(|| format!("{prefix}transitions[{i}]: expected an object"))?;
                let tr = self.read_transition(&mut m, o, &format!("{prefix}transitions[{i}]"))?;
                m.links.transitions.push(tr);
            }
        }
        let initial = text(obj.get("initial"), &format!("{prefix}initial"))?;
        m.links.initial = m.state(initial).ok_or_else(|| format!("{prefix}initial: unknown state '{initial}'"))?;
        Ok(m)
    }

    /// Layer `i`: its name, mode, weight, mask and state machine.
    fn read_layer(
        &self,
        obj: &Map<String, Value>,
        i: usize,
        clip: &impl Fn(&str) -> Option<usize>,
        joint: &impl Fn(&str) -> Option<usize>,
    ) -> Result<LayerFile, String> {
        let allowed = ["name", "mode", "reference", "mask", "weight", "states", "transitions", "initial"];
        keys(obj, &allowed, &format!("layers[{i}]"))?;
        let name = text(obj.get("name"), &format!("layers[{i}].name"))?;
        let what = format!("layer '{name}'");
        if self.layers.iter().any(|l| l.name == name) {
            return Err(format!("{what} is defined twice"));
        }
        let reference = match obj.get("reference").map(Value::as_str) {
            None | Some(Some("rest")) => AdditiveReference::RestPose,
            Some(Some("baked")) => AdditiveReference::Baked,
            Some(r) => return Err(format!("{what}: reference is \"rest\" or \"baked\", found {r:?}")),
        };
        let mode = match obj.get("mode").map(Value::as_str) {
            None | Some(Some("override")) if !obj.contains_key("reference") => LayerMode::Override,
            Some(Some("additive")) => LayerMode::Additive(reference),
            None | Some(Some("override")) => return Err(format!("{what}: reference is for additive layers")),
            Some(m) => return Err(format!("{what}: mode is \"override\" or \"additive\", found {m:?}")),
        };
        let weight = match obj.get("weight") {
            None => 1.0,
            Some(v) => finite(v, &format!("{what}: weight"))?,
        };
        if !(0.0..=1.0).contains(&weight) {
            return Err(format!("{what}: weight must be from 0 to 1, found {weight}"));
        }
        let mut mask = Vec::new();
        if let Some(m) = obj.get("mask") {
            let m = m.as_array().ok_or_else(|| format!("{what}: mask must be a list of joints"))?;
            for entry in m {
                let (joint_name, fade_in) = match entry {
                    Value::String(s) => (s.as_str(), 0),
                    Value::Object(o) => {
                        keys(o, &["joint", "fade_in"], &format!("{what}: mask"))?;
                        let j = text(o.get("joint"), &format!("{what}: mask joint"))?;
                        let fade = match o.get("fade_in") {
                            None => 0,
                            Some(v) => v
                                .as_u64()
                                .and_then(|f| u16::try_from(f).ok())
                                .ok_or_else(|| format!("{what}: mask fade_in must be a whole number of levels"))?,
                        };
                        (j, fade)
                    }
                    _ => return Err(format!("{what}: a mask entry is a joint name or {{\"joint\", \"fade_in\"}}")),
                };
                let start = joint(joint_name).ok_or_else(|| format!("{what}: mask: unknown joint '{joint_name}'"))?;
                mask.push(Channel::subtree(start, fade_in));
            }
        }
        let machine = self.read_machine(obj, &format!("{what}: "), clip)?;
        Ok(LayerFile { name: name.to_string(), mode, weight, mask, machine })
    }

    /// The lists the core [`Graph`] (and the layers of a [`LayeredGraph`]) borrow.
    #[must_use]
    pub fn parts(&self) -> GraphParts<'_> {
        GraphParts {
            parameters: self
                .parameter_names
                .iter()
                .zip(&self.parameter_kinds)
                .map(|(name, &kind)| Parameter { name, kind })
                .collect(),
            states: self.base.states(),
            layer_states: self.layers.iter().map(|l| l.machine.states()).collect(),
            file: self,
        }
    }

    /// Number of layers (besides the base).
    #[must_use]
    pub fn num_layers(&self) -> usize {
        self.layers.len()
    }

    /// Name of layer `index` (1…, as in [`LayeredGraph`]).
    #[must_use]
    pub fn layer_name(&self, index: usize) -> Option<&str> {
        index.checked_sub(1).and_then(|i| self.layers.get(i)).map(|l| l.name.as_str())
    }

    /// Index of the parameter called `name`.
    #[must_use]
    pub fn parameter(&self, name: &str) -> Option<usize> {
        self.parameter_names.iter().position(|n| n == name)
    }

    /// Kind of parameter `index`.
    #[must_use]
    pub fn parameter_kind(&self, index: usize) -> Option<ParameterKind<f32>> {
        self.parameter_kinds.get(index).copied()
    }

    /// Index of the base graph's state called `name`.
    #[must_use]
    pub fn state(&self, name: &str) -> Option<usize> {
        self.base.state(name)
    }

    /// Name of the base graph's state `index`.
    #[must_use]
    pub fn state_name(&self, index: usize) -> Option<&str> {
        self.base.state_names.get(index).map(String::as_str)
    }

    fn float_parameter(&self, v: Option<&Value>, what: &str) -> Result<usize, String> {
        let name = text(v, what)?;
        let p = self.parameter(name).ok_or_else(|| format!("{what}: unknown parameter '{name}'"))?;
        match self.parameter_kinds[p] {
            ParameterKind::Float(_) => Ok(p),
            _ => Err(format!("{what}: parameter '{name}' is not a number")),
        }
    }

    fn read_state(
        &self,
        m: &mut Machine,
        obj: &Map<String, Value>,
        what: &str,
        clip: &impl Fn(&str) -> Option<usize>,
    ) -> Result<(StateKind, bool), String> {
        let what = what.to_string();
        keys(obj, &["name", "clip", "blend1d", "blend2d", "loop"], &what)?;
        let looping = match obj.get("loop") {
            None => true,
            Some(v) => v.as_bool().ok_or_else(|| format!("{what}: loop must be true or false"))?,
        };
        let find_clip = |v: &Value| -> Result<usize, String> {
            let key = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return Err(format!("{what}: a clip is a name or an index, found {v}")),
            };
            clip(&key).ok_or_else(|| format!("{what}: unknown clip '{key}'"))
        };
        let kinds = ["clip", "blend1d", "blend2d"].iter().filter(|k| obj.contains_key(**k)).count();
        if kinds != 1 {
            return Err(format!("{what}: needs exactly one of clip, blend1d, blend2d"));
        }
        if let Some(c) = obj.get("clip") {
            return Ok((StateKind::Clip(find_clip(c)?), looping));
        }
        let (space, two) = match (obj.get("blend1d"), obj.get("blend2d")) {
            (Some(s), _) => (s, false),
            (_, Some(s)) => (s, true),
            _ => return Err(format!("{what}: needs exactly one of clip, blend1d, blend2d")),
        };
        let space = space.as_object().ok_or_else(|| format!("{what}: the blend space must be an object"))?;
        let allowed: &[&str] = if two { &["x", "y", "clips", "sync"] } else { &["parameter", "clips", "sync"] };
        keys(space, allowed, &what)?;
        let sync = match space.get("sync") {
            None => false,
            Some(v) => v.as_bool().ok_or_else(|| format!("{what}: sync must be true or false"))?,
        };
        let clips =
            space.get("clips").and_then(Value::as_array).ok_or_else(|| format!("{what}: clips must be a list"))?;
        if clips.is_empty() || clips.len() > MAX_BLEND_POINTS {
            return Err(format!("{what}: a blend space has 1 to {MAX_BLEND_POINTS} clips"));
        }
        let start = m.links.points.len();
        for c in clips {
            let pair = c.as_array().filter(|p| p.len() == 2);
            let pair = pair.ok_or_else(|| format!("{what}: each clip is [clip, position], found {c}"))?;
            let position = if two {
                let xy = pair[1].as_array().filter(|p| p.len() == 2);
                let xy = xy.ok_or_else(|| format!("{what}: a 2D position is [x, y], found {}", pair[1]))?;
                [finite(&xy[0], &what)?, finite(&xy[1], &what)?]
            } else {
                [finite(&pair[1], &what)?, 0.0]
            };
            m.links.points.push(BlendPoint { clip: find_clip(&pair[0])?, position });
        }
        let points = span(start, clips.len()).ok_or_else(|| format!("{what}: the graph has too many blend points"))?;
        let kind = if two {
            StateKind::Blend2d {
                x: self.float_parameter(space.get("x"), &format!("{what}: x"))?,
                y: self.float_parameter(space.get("y"), &format!("{what}: y"))?,
                points,
                sync,
            }
        } else {
            let parameter = self.float_parameter(space.get("parameter"), &format!("{what}: parameter"))?;
            StateKind::Blend1d { parameter, points, sync }
        };
        Ok((kind, looping))
    }

    fn read_transition(
        &self,
        m: &mut Machine,
        obj: &Map<String, Value>,
        what: &str,
    ) -> Result<Transition<f32>, String> {
        keys(obj, &["from", "to", "when", "exit_time", "duration", "blend", "curve", "sync"], what)?;
        let state = |key: &str| -> Result<usize, String> {
            let name = text(obj.get(key), &format!("{what}.{key}"))?;
            m.state(name).ok_or_else(|| format!("{what}: unknown state '{name}'"))
        };
        let from = match obj.get("from").and_then(Value::as_str) {
            Some("*") => None,
            _ => Some(state("from")?),
        };
        let to = state("to")?;
        let start = m.links.conditions.len();
        if let Some(when) = obj.get("when") {
            let when = when.as_str().ok_or_else(|| format!("{what}: when must be a string"))?;
            for term in when.split("&&") {
                let c = self.condition(term.trim()).map_err(|e| format!("{what}: {e}"))?;
                m.links.conditions.push(c);
            }
        }
        let conditions = span(start, m.links.conditions.len() - start)
            .ok_or_else(|| format!("{what}: the graph has too many conditions"))?;
        let number = |key: &str| obj.get(key).map(|v| finite(v, &format!("{what}.{key}"))).transpose();
        let exit_time = number("exit_time")?;
        let duration = number("duration")?.unwrap_or(DEFAULT_DURATION);
        let flag = |key: &str| match obj.get(key) {
            None => Ok(false),
            Some(v) => v.as_bool().ok_or_else(|| format!("{what}: {key} must be true or false")),
        };
        let blend = match obj.get("blend").map(|b| b.as_str()) {
            None | Some(Some("crossfade")) => {
                let curve = match obj.get("curve").map(|c| c.as_str()) {
                    None | Some(Some("linear")) => FadeCurve::Linear,
                    Some(Some("smoothstep")) => FadeCurve::SmoothStep,
                    Some(c) => return Err(format!("{what}: curve is \"linear\" or \"smoothstep\", found {c:?}")),
                };
                TransitionBlend::Crossfade { curve, sync: flag("sync")? }
            }
            Some(Some("inertialize")) => {
                if obj.contains_key("curve") || obj.contains_key("sync") {
                    return Err(format!("{what}: curve and sync are for crossfades"));
                }
                TransitionBlend::Inertialize
            }
            Some(b) => return Err(format!("{what}: blend is \"crossfade\" or \"inertialize\", found {b:?}")),
        };
        Ok(Transition { from, to, conditions, exit_time, duration, blend })
    }

    /// One condition: `NAME OP NUMBER`, `NAME` or `!NAME`.
    fn condition(&self, term: &str) -> Result<Condition<f32>, String> {
        let malformed = || format!("malformed condition '{term}'");
        let param = |name: &str| -> Result<usize, String> {
            let name = name.trim();
            if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '-') {
                return Err(malformed());
            }
            self.parameter(name).ok_or_else(|| format!("unknown parameter '{name}' in '{term}'"))
        };
        for (op, make) in [
            (">=", Test::AtLeast as fn(f32) -> Test<f32>),
            ("<=", Test::AtMost),
            (">", Test::Greater),
            ("<", Test::Less),
        ] {
            if let Some((lhs, rhs)) = term.split_once(op) {
                let p = param(lhs)?;
                let v = rhs.trim().parse::<f32>().ok().filter(|v| v.is_finite()).ok_or_else(malformed)?;
                if !matches!(self.parameter_kinds[p], ParameterKind::Float(_)) {
                    return Err(format!("'{term}' compares parameter '{}', which is not a number", lhs.trim()));
                }
                return Ok(Condition { parameter: p, test: make(v) });
            }
        }
        let (negated, name) = match term.strip_prefix('!') {
            Some(n) => (true, n),
            None => (false, term),
        };
        let p = param(name)?;
        let test = match (self.parameter_kinds[p], negated) {
            (ParameterKind::Bool(_), false) => Test::True,
            (ParameterKind::Bool(_), true) => Test::False,
            (ParameterKind::Trigger, false) => Test::Triggered,
            (ParameterKind::Trigger, true) => return Err(format!("'{term}': a trigger cannot be negated")),
            (ParameterKind::Float(_), _) => return Err(format!("'{term}': a number needs a comparison")),
        };
        Ok(Condition { parameter: p, test })
    }

    /// A core validation error in the file's names.
    fn describe(&self, e: LayerError) -> String {
        use sinew::graph::GraphError as E;
        let (m, prefix) = match e.layer.checked_sub(1).and_then(|i| self.layers.get(i)) {
            Some(l) => (&l.machine, format!("layer '{}': ", l.name)),
            None => (&self.base, String::new()),
        };
        let state = |s: usize| m.state_names.get(s).map_or("?", String::as_str).to_string();
        match e.error {
            E::Clip { state: s } => format!("{prefix}state '{}': unknown clip", state(s)),
            E::Positions { state: s } => {
                format!("{prefix}state '{}': positions must be increasing (1D) or distinct (2D)", state(s))
            }
            E::TransitionState { transition } => {
                format!("{prefix}transitions[{transition}]: a transition cannot go to its own source")
            }
            other => format!("{prefix}{other}"),
        }
    }
}

#[cfg(test)]
mod tests;
