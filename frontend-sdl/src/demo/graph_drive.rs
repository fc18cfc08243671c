//! A viewed model driven by an animation graph file ([`GraphDrive`]): the graph read and
//! validated against the model's clips, its state machine run in steps of at most 1/60 s,
//! parameter changes from keys (a selected parameter, nudged, toggled or fired) and from
//! `--set NAME=VALUE@SECONDS`, and the state as text for the HUD and the window title.

use std::path::Path;

use self_cell::self_cell;
use sinew::capacity::OneLayer;
use sinew::controller::{ClipEntry, ControllerScratch};
use sinew::graph::ParameterKind;
use sinew::math::SoaTransform;
use sinew_offline::graph_file::{GraphFile, GraphParts};
use sinew_offline::graph_run::{Host, HostMachine, SetSpec, STEP};
use sinew_offline::model::Model;

/// The change of a float parameter per Up/Down press (ten times that with Shift).
pub const FLOAT_STEP: f32 = 0.1;

type Parts<'a> = GraphParts<'a>;
type Machine<'a> = HostMachine<'a>;

self_cell!(
    /// A graph file and the lists its core graph borrows.
    struct OwnedParts {
        owner: GraphFile,
        #[covariant]
        dependent: Parts,
    }
);

self_cell!(
    /// A graph and the state machine running it.
    struct OwnedMachine {
        owner: OwnedParts,
        #[covariant]
        dependent: Machine,
    }
);

/// The clips of `model`, in the order graphs index them.
fn clip_entries(model: &Model) -> Vec<ClipEntry<'_, f32>> {
    let asset = model.asset();
    (0..asset.num_clips()).filter_map(|i| asset.clip(i)).map(ClipEntry::new).collect()
}

/// One parameter as the HUD lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterView {
    /// Its name.
    pub name: String,
    /// Its value: a number, `true`/`false`, or `set`/`-` for a trigger.
    pub value: String,
    /// Its kind: `float`, `bool` or `trigger`.
    pub kind: &'static str,
}

/// A model's pose driven by an animation graph. See the [module documentation](self).
pub struct GraphDrive {
    machine: OwnedMachine,
    scratch: Box<ControllerScratch<f32, OneLayer<Host>>>,
    pose: Vec<SoaTransform<f32>>,
    /// The graph file's name, for the HUD.
    name: String,
    /// Scheduled changes, and whether each has been applied.
    sets: Vec<(SetSpec, bool)>,
    /// Graph time run so far, seconds.
    time: f64,
    selected: usize,
}

impl std::fmt::Debug for GraphDrive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphDrive")
            .field("name", &self.name)
            .field("time", &self.time)
            .field("state", &self.state_line())
            .finish_non_exhaustive()
    }
}

/// Applies `value` (as `--set` writes it) to parameter `name`.
fn apply(machine: &mut HostMachine<'_>, name: &str, value: &str) -> Result<(), String> {
    let graph = *machine.graph();
    let p = graph.parameter(name).ok_or_else(|| format!("--set: unknown parameter '{name}'"))?;
    let bad = || format!("--set: '{value}' is not a value for parameter '{name}'");
    let flag = || match value {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    };
    let r = match graph.parameters.get(p).map(|p| p.kind) {
        Some(ParameterKind::Float(_)) => {
            let v = value.parse::<f32>().ok().filter(|v| v.is_finite()).ok_or_else(bad)?;
            machine.set_float(p, v)
        }
        Some(ParameterKind::Bool(_)) => machine.set_bool(p, flag().ok_or_else(bad)?),
        Some(ParameterKind::Trigger) | None => machine.fire(p, flag().ok_or_else(bad)?),
    };
    r.map_err(|e| format!("--set {name}: {e}"))
}

impl GraphDrive {
    /// Reads the graph file `path`, validates it against `model`'s clips and the changes
    /// `sets` against its parameters, and poses the model in the initial state at time 0.
    ///
    /// # Errors
    ///
    /// One line naming what is wrong: an unreadable file, what [`GraphFile::parse`] finds (an
    /// unknown clip, state or parameter, a malformed condition…), a model with more joints
    /// than [`Host::SOA`] holds, a change naming an unknown parameter or a value of the wrong kind.
    pub fn load(model: &Model, path: &Path, sets: &[SetSpec]) -> Result<GraphDrive, String> {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        let file = GraphFile::parse(&text, |key| model.find_clip(key), model.asset().num_clips())?;
        let skeleton = model.skeleton();
        if skeleton.num_soa_joints() > Host::SOA {
            return Err(format!(
                "the model has {} joints; graphs run on at most {}",
                skeleton.num_joints(),
                4 * Host::SOA
            ));
        }
        let clips = clip_entries(model);
        let parts = OwnedParts::new(file, GraphFile::parts);
        let machine = OwnedMachine::try_new(parts, |p| {
            HostMachine::new(p.borrow_dependent().graph(), &clips).map_err(|e| e.to_string())
        })?;
        // Every change is checked once, on a copy, before anything runs.
        for s in sets {
            apply(&mut machine.borrow_dependent().clone(), &s.name, &s.value)?;
        }
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        let mut drive = GraphDrive {
            machine,
            scratch: Box::new(ControllerScratch::new()),
            pose: skeleton.rest_pose().to_vec(),
            name,
            sets: sets.iter().map(|s| (s.clone(), false)).collect(),
            time: 0.0,
            selected: 0,
        };
        drive.step(model, 0.0)?;
        Ok(drive)
    }

    /// One update of the state machine by `dt` seconds.
    fn step(&mut self, model: &Model, dt: f32) -> Result<(), String> {
        let clips = clip_entries(model);
        let (scratch, pose) = (&mut self.scratch, &mut self.pose);
        self.machine
            .with_dependent_mut(|_, m| m.update(dt, &clips, model.skeleton(), scratch, pose, |_| {}))
            .map_err(|e| e.to_string())
    }

    /// Runs the graph for `dt` seconds in equal steps of at most 1/60 s, applying each
    /// scheduled change before the first step starting at or after its time (as `sinew dump
    /// --graph` does). Non-finite or non-positive steps are ignored.
    ///
    /// # Errors
    ///
    /// A state-machine error (not expected once [`load`](Self::load) passed); the pose then
    /// stays as it was.
    pub fn advance(&mut self, model: &Model, dt: f32) -> Result<(), String> {
        if !(dt.is_finite() && dt > 0.0) {
            return Ok(());
        }
        let n = (f64::from(dt) / STEP - 1e-6).ceil().max(1.0) as u32;
        let step = dt / n as f32;
        for _ in 0..n {
            for k in 0..self.sets.len() {
                let (s, done) = &self.sets[k];
                if !*done && f64::from(s.at) <= self.time + 1e-9 {
                    let (name, value) = (s.name.clone(), s.value.clone());
                    self.machine.with_dependent_mut(|_, m| apply(m, &name, &value))?;
                    self.sets[k].1 = true;
                }
            }
            self.step(model, step)?;
            self.time += f64::from(step);
        }
        Ok(())
    }

    /// The local pose now.
    #[must_use]
    pub fn pose(&self) -> &[SoaTransform<f32>] {
        &self.pose
    }

    /// The state machine (read-only).
    #[must_use]
    pub fn machine(&self) -> &HostMachine<'_> {
        self.machine.borrow_dependent()
    }

    /// The graph file's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Graph time run so far, in seconds.
    #[must_use]
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Number of parameters.
    #[must_use]
    pub fn num_parameters(&self) -> usize {
        self.machine().graph().parameters.len()
    }

    /// The selected parameter (what the keys change).
    #[must_use]
    pub fn selected(&self) -> usize {
        self.selected
    }

    /// Selects parameter `index` (ignored past the count).
    pub fn select(&mut self, index: usize) {
        if index < self.num_parameters() {
            self.selected = index;
        }
    }

    /// Selects the parameter `delta` places on (wrapping).
    pub fn select_by(&mut self, delta: i64) {
        let n = self.num_parameters() as i64;
        if n > 0 {
            self.selected = (self.selected as i64 + delta).rem_euclid(n) as usize;
        }
    }

    /// Adds `delta` to the selected parameter when it is a float.
    pub fn nudge(&mut self, delta: f32) {
        let p = self.selected;
        self.machine.with_dependent_mut(|_, m| {
            if let (Some(ParameterKind::Float(_)), Some(v)) = (m.graph().parameters.get(p).map(|p| p.kind), m.value(p))
            {
                // Rounded to the step, so that repeated presses land on round values.
                let next = ((v + delta) / FLOAT_STEP).round() * FLOAT_STEP;
                let _ = m.set_float(p, next);
            }
        });
    }

    /// Flips the selected parameter when it is a bool, sets it when it is a trigger.
    pub fn toggle(&mut self) {
        let p = self.selected;
        self.machine.with_dependent_mut(|_, m| match m.graph().parameters.get(p).map(|p| p.kind) {
            Some(ParameterKind::Bool(_)) => {
                let on = m.value(p).is_some_and(|v| v != 0.0);
                let _ = m.set_bool(p, !on);
            }
            Some(ParameterKind::Trigger) => {
                let _ = m.fire(p, true);
            }
            _ => {}
        });
    }

    /// The parameters with their values, in the graph's order.
    #[must_use]
    pub fn parameters(&self) -> Vec<ParameterView> {
        let m = self.machine();
        m.graph()
            .parameters
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let v = m.value(i).unwrap_or(0.0);
                let (value, kind) = match p.kind {
                    ParameterKind::Float(_) => (format!("{v:.2}"), "float"),
                    ParameterKind::Bool(_) => ((v != 0.0).to_string(), "bool"),
                    ParameterKind::Trigger => ((if v != 0.0 { "set" } else { "-" }).to_string(), "trigger"),
                };
                ParameterView { name: p.name.to_string(), value, kind }
            })
            .collect()
    }

    /// The current state and the transition in progress, as one line: `state move (idle ->
    /// move 45%)`, or `state idle`.
    #[must_use]
    pub fn state_line(&self) -> String {
        let m = self.machine();
        let graph = m.graph();
        let name = |s: usize| graph.states.get(s).map_or("?", |s| s.name);
        let mut line = format!("state {}", name(m.current_state()));
        if let Some(t) = m.transition() {
            line.push_str(&format!(" ({} -> {} {:.0}%)", name(t.from), name(t.to), t.progress * 100.0));
        }
        line
    }

    /// The parameters in one line: `speed=2.00 [grounded=true] jump=-`, the selected one in
    /// brackets.
    #[must_use]
    pub fn parameters_line(&self) -> String {
        let list: Vec<String> = self
            .parameters()
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                let s = format!("{}={}", p.name, p.value);
                if i == self.selected {
                    format!("[{s}]")
                } else {
                    s
                }
            })
            .collect();
        list.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use sinew_offline::bake::{bake, BakeOptions};
    use sinew_offline::builtin::humanoid_rig;
    use sinew_offline::graph_run::{parse_set, run_graph};

    fn humanoid() -> Model {
        let (bytes, _) = bake(&humanoid_rig(), &BakeOptions::default()).unwrap();
        Model::from_bytes("humanoid", bytes).unwrap()
    }

    const GRAPH: &str = r#"{"parameters": {"speed": 0.0, "wave": "trigger", "calm": true},
        "states": [{"name": "idle", "clip": "idle"},
                   {"name": "move", "blend1d": {"parameter": "speed",
                                                "clips": [["walk", 1.0], ["run", 3.0]], "sync": true}},
                   {"name": "greet", "clip": "wave", "loop": false}],
        "transitions": [{"from": "idle", "to": "move", "when": "speed > 0.1", "duration": 0.3, "blend": "inertialize"},
                        {"from": "move", "to": "idle", "when": "speed < 0.1", "duration": 0.25},
                        {"from": "idle", "to": "greet", "when": "wave && calm", "duration": 0.2},
                        {"from": "greet", "to": "idle", "exit_time": 1.0, "duration": 0.2}],
        "initial": "idle"}"#;

    fn write(tag: &str, text: &str) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("sinew_graph_drive_{}_{tag}.json", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    fn max_diff(a: &[SoaTransform<f32>], b: &[SoaTransform<f32>]) -> f32 {
        a.iter()
            .zip(b)
            .flat_map(|(x, y)| (0..4).map(move |l| (x.lane(l), y.lane(l))))
            .map(|(x, y)| (x.translation - y.translation).max_abs().max(x.rotation.angle_between(y.rotation)))
            .fold(0.0, f32::max)
    }

    /// Frames of any length reach the pose and state `sinew dump --graph` computes at the same
    /// time with the same changes.
    #[test]
    fn frames_follow_the_dump_run() {
        let model = humanoid();
        let path = write("dump", GRAPH);
        let sets = [parse_set("speed=2@0.5").unwrap()];
        let mut drive = GraphDrive::load(&model, &path, &sets).unwrap();
        assert_eq!(drive.state_line(), "state idle");
        // 0.6 s in frames of 0.1 s: 0.5 s of idle, the change, 0.1 s of transition.
        for _ in 0..6 {
            drive.advance(&model, 0.1).unwrap();
        }
        let file = GraphFile::parse(&std::fs::read_to_string(&path).unwrap(), |k| model.find_clip(k), 4).unwrap();
        let (pose, state) = run_graph(&model, file.parts().graph(), &sets, 0.6, |_, _, _| {}).unwrap();
        let (from, to, progress) = state.transition.clone().unwrap();
        assert_eq!((state.state.as_str(), from.as_str(), to.as_str()), ("move", "idle", "move"));
        assert_eq!(drive.state_line(), format!("state move (idle -> move {:.0}%)", progress * 100.0));
        assert!(max_diff(drive.pose(), &pose) < 1e-5, "{}", max_diff(drive.pose(), &pose));
        std::fs::remove_file(&path).unwrap();
    }

    /// Keys: select, nudge a float by round steps, flip a bool, fire a trigger (consumed by
    /// the transition it starts).
    #[test]
    fn keys_change_the_selected_parameter() {
        let model = humanoid();
        let path = write("keys", GRAPH);
        let mut drive = GraphDrive::load(&model, &path, &[]).unwrap();
        // Parameters in name order: calm, speed, wave.
        let names: Vec<String> = drive.parameters().into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["calm", "speed", "wave"]);
        assert_eq!(drive.parameters_line(), "[calm=true] speed=0.00 wave=-");
        drive.toggle();
        assert_eq!(drive.parameters()[0].value, "false");
        drive.toggle();
        drive.select_by(-1);
        assert_eq!(drive.selected(), 2);
        drive.toggle();
        assert_eq!(drive.parameters()[2].value, "set");
        drive.advance(&model, 1.0 / 60.0).unwrap();
        assert!(drive.state_line().starts_with("state greet (idle -> greet"), "{}", drive.state_line());
        assert_eq!(drive.parameters()[2].value, "-");
        drive.select(1);
        for _ in 0..3 {
            drive.nudge(FLOAT_STEP);
        }
        drive.nudge(-FLOAT_STEP * 10.0);
        drive.nudge(FLOAT_STEP * 10.0);
        assert_eq!(drive.parameters()[1].value, "0.30");
        // Nudging a bool or toggling a float does nothing.
        drive.toggle();
        drive.select(0);
        drive.nudge(1.0);
        assert_eq!(drive.parameters_line(), "[calm=true] speed=0.30 wave=-");
        drive.select(7);
        assert_eq!(drive.selected(), 0);
        std::fs::remove_file(&path).unwrap();
    }

    /// A bad graph or change is refused with one line naming it.
    #[test]
    fn bad_graphs_and_changes_are_named() {
        let model = humanoid();
        let path = write("bad", &GRAPH.replace("\"run\"", "\"sprint\""));
        let e = GraphDrive::load(&model, &path, &[]).unwrap_err();
        assert!(e.contains("sprint") && !e.contains('\n'), "{e}");
        let path2 = write("good", GRAPH);
        let e = GraphDrive::load(&model, &path2, &[parse_set("sped=1@0").unwrap()]).unwrap_err();
        assert!(e.contains("unknown parameter 'sped'"), "{e}");
        let e = GraphDrive::load(&model, &path2, &[parse_set("calm=maybe@0").unwrap()]).unwrap_err();
        assert!(e.contains("'maybe'"), "{e}");
        assert!(GraphDrive::load(&model, Path::new("/nonexistent/graph.json"), &[]).is_err());
        for p in [path, path2] {
            std::fs::remove_file(p).unwrap();
        }
    }
}
