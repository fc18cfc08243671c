//! `sinew dump --graph` as a user runs it on Fox with the minimal graph of core/docs/graphs.md: the idle
//! state's dump equals `dump --clip Survey`, `--set` moves the graph into its blend space with
//! `"graph_state"` reporting the transition, and a graph with a mistake exits 2 with one line
//! naming it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The minimal graph for Fox (idle, and a synced walk/run blend space), shared by the graph tests.
const GRAPH: &str = include_str!("../offline/tests/data/fox_graph.json");

fn fox() -> PathBuf {
    sinew_assets::path("gltf/Fox/Fox.glb")
}

fn graph_file(name: &str, json: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sinew-cli-graph");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(name);
    std::fs::write(&path, json).expect("graph file");
    path
}

fn sinew(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sinew")).args(args).output().expect("sinew runs")
}

fn json(out: &Output) -> Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn numbers(v: &Value, key: &str) -> Vec<f64> {
    let mut out = Vec::new();
    fn walk(v: &Value, out: &mut Vec<f64>) {
        match v {
            Value::Number(n) => out.push(n.as_f64().unwrap_or(f64::NAN)),
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    walk(&v[key], &mut out);
    out
}

#[test]
fn idle_equals_the_clip_and_set_moves_to_the_blend_space() {
    let g = graph_file("fox.json", GRAPH);
    let (fox, g) = (fox(), g);
    let (fox, g) = (fox.to_str().unwrap(), g.to_str().unwrap());
    for t in ["0.5", "2.25"] {
        let graph = json(&sinew(&["dump", fox, "--graph", g, "--time", t]));
        let clip = json(&sinew(&["dump", fox, "--clip", "Survey", "--time", t]));
        assert_eq!(graph["graph_state"], serde_json::json!({"state": "idle", "transition": null}));
        assert_eq!(graph["joints"], clip["joints"]);
        for key in ["joint_world", "joint_matrices", "skinned_positions"] {
            let (a, b) = (numbers(&graph, key), numbers(&clip, key));
            assert_eq!(a.len(), b.len(), "{key}");
            // Fox is about 100 units long: float rounding of the blend's normalization only.
            let worst = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
            assert!(worst < 1e-3, "{key} at {t}: {worst}");
        }
    }
    // speed 2 at 1 s: the inertialized transition (0.3 s) is 0.1 s in at 1.1 s (6 steps of
    // 1/60 after the one that fired), done by 1.5 s.
    let moving = json(&sinew(&["dump", fox, "--graph", g, "--set", "speed=2@1.0", "--time", "1.1"]));
    let state = &moving["graph_state"];
    assert_eq!((state["state"].as_str(), state["transition"]["from"].as_str()), (Some("move"), Some("idle")));
    let progress = state["transition"]["progress"].as_f64().unwrap();
    assert!((progress - 5.0 / 60.0 / 0.3).abs() < 1e-4, "{progress}");
    let moved = json(&sinew(&["dump", fox, "--graph", g, "--set", "speed=2@1.0", "--time", "1.5"]));
    assert_eq!(moved["graph_state"], serde_json::json!({"state": "move", "transition": null}));
}

#[test]
fn mistakes_exit_2_with_one_line() {
    let fox = fox();
    for (name, json, set, needle) in [
        ("clip.json", GRAPH.replace("\"Survey\"", "\"Srvey\""), None, "unknown clip 'Srvey'"),
        ("state.json", GRAPH.replace("\"to\": \"idle\"", "\"to\": \"rest\""), None, "unknown state 'rest'"),
        ("param.json", GRAPH.replace("speed > 0.1", "pace > 0.1"), None, "unknown parameter 'pace'"),
        ("cond.json", GRAPH.replace("speed > 0.1", "speed => 0.1"), None, "malformed condition 'speed => 0.1'"),
        ("set.json", GRAPH.to_string(), Some("pace=1@0"), "--set: unknown parameter 'pace'"),
        ("value.json", GRAPH.to_string(), Some("speed=fast@0"), "is not a value for parameter 'speed'"),
    ] {
        let g = graph_file(name, &json);
        let mut args = vec!["dump", fox.to_str().unwrap(), "--graph", g.to_str().unwrap(), "--time", "1"];
        if let Some(s) = set {
            args.extend(["--set", s]);
        }
        let out = sinew(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(out.stdout.is_empty());
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.starts_with(&format!("sinew: {}: ", g.display())) && err.contains(needle), "{name}: {err}");
    }
}

#[test]
fn a_baked_graph_dumps_as_its_file_and_info_lists_it() {
    let (fox, g, o, info) = bake_fox_with("locomotion.json", GRAPH, "fox-graph.sinew");
    let (fox, g, o) = (fox.as_str(), g.as_str(), o.as_str());
    assert!(
        info.contains(
            "graph 0 'locomotion': 2 states [idle, move], 1 parameters [speed], 2 transitions, initial 'idle'"
        ),
        "{info}"
    );
    for (sets, t) in [
        (&[][..], "0.5"),
        (&["--set", "speed=2@1.0"][..], "1.1"),
        (&["--set", "speed=2@1.0", "--set", "speed=0@2"][..], "2.1"),
    ] {
        let (a, b) = dump_both((fox, g, o), t, sets);
        assert!(a.status.success() && b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
        assert_eq!(a.stdout, b.stdout, "at {t} with {sets:?}");
    }
    let named = sinew(&["dump", o, "--graph-baked", "locomotion", "--time", "0.1"]);
    assert!(named.status.success());
    // A missing graph, a graph on a file without one, an unknown parameter: exit 2, one line.
    for args in [
        vec!["dump", o, "--graph-baked", "other"],
        vec!["dump", fox, "--graph-baked"],
        vec!["dump", o, "--graph-baked", "--set", "pace=1@0"],
        vec!["dump", fox, "--set", "speed=1@0"],
    ] {
        let r = sinew(&args);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}

/// The minimal graph with an upper-body layer playing the run once `waving` is set.
const LAYERED: &str = r#"{"parameters": {"speed": 0.0, "waving": false},
 "states": [{"name": "idle", "clip": "Survey"}],
 "layers": [{"name": "wave", "mode": "override", "mask": ["b_Spine01_02"], "weight": 1.0,
             "states": [{"name": "rest", "clip": "Survey"}, {"name": "wave", "clip": "Run"}],
             "transitions": [{"from": "rest", "to": "wave", "when": "waving", "duration": 0.25}],
             "initial": "rest"}],
 "initial": "idle"}"#;

#[test]
fn layers_run_and_report_their_state() {
    let g = graph_file("layered.json", LAYERED);
    let (fox, g) = (fox(), g);
    let (fox, g) = (fox.to_str().unwrap(), g.to_str().unwrap());
    // Before the layer moves, it plays the same clip as the base: the dump is the clip's.
    let still = json(&sinew(&["dump", fox, "--graph", g, "--time", "0.5"]));
    let clip = json(&sinew(&["dump", fox, "--clip", "Survey", "--time", "0.5"]));
    let (a, b) = (numbers(&still, "joint_world"), numbers(&clip, "joint_world"));
    assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-3));
    assert_eq!(
        still["graph_state"],
        serde_json::json!({"state": "idle", "transition": null,
                           "layers": [{"name": "wave", "weight": 1, "state": "rest", "transition": null}]})
    );
    let waving = json(&sinew(&["dump", fox, "--graph", g, "--set", "waving=true@0.5", "--time", "0.6"]));
    let layer = &waving["graph_state"]["layers"][0];
    assert_eq!((layer["state"].as_str(), layer["transition"]["from"].as_str()), (Some("wave"), Some("rest")));
    assert_eq!(waving["graph_state"]["state"].as_str(), Some("idle"));
    // A layer naming a joint the model does not have: exit 2, one line naming it.
    let bad = graph_file("layered-bad.json", &LAYERED.replace("b_Spine01_02", "spine"));
    let out = sinew(&["dump", fox, "--graph", bad.to_str().unwrap(), "--time", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("layer 'wave': mask: unknown joint 'spine'"), "{err}");
}

/// Fox's graph with an upper-body override layer and an additive layer.
const TWO_LAYERS: &str = include_str!("../offline/tests/data/fox_layered_graph.json");

#[test]
fn a_baked_layered_graph_dumps_as_its_file_through_layer_transitions() {
    let (fox, g, o, info) = bake_fox_with("two-layers.json", TWO_LAYERS, "fox-layered.sinew");
    let (fox, g, o) = (fox.as_str(), g.as_str(), o.as_str());
    assert!(info.contains("initial 'idle', 2 layers [wave, sway]"), "{info}");
    let sets = ["--set", "waving=true@0.5", "--set", "speed=2@0.6", "--set", "waving=false@1.0"];
    // Before the layer moves, during its crossfade, between, during its inertialization, after.
    for (t, wave) in [("0.4", None), ("0.65", Some("rest")), ("0.9", None), ("1.1", Some("wave")), ("1.5", None)] {
        let (a, b) = dump_both((fox, g, o), t, &sets);
        assert_eq!(a.stdout, b.stdout, "at {t}: {}", String::from_utf8_lossy(&b.stderr));
        let state = &json(&b)["graph_state"]["layers"];
        assert_eq!(state[0]["name"], "wave");
        assert_eq!(state[1], serde_json::json!({"name": "sway", "weight": 0.5, "state": "walk", "transition": null}));
        assert_eq!(state[0]["transition"]["from"].as_str(), wave, "at {t}: {state}");
    }
}

/// Bakes Fox with the graph `json` (written to `name`) into `out` in the test folder: the
/// model's, the graph file's and the bake's paths, and what `sinew info` prints of the bake.
fn bake_fox_with(name: &str, json: &str, out: &str) -> (String, String, String, String) {
    let g = graph_file(name, json);
    let o = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sinew-cli-graph").join(out);
    let (fox, g, o) =
        (fox().to_str().unwrap().to_owned(), g.to_str().unwrap().to_owned(), o.to_str().unwrap().to_owned());
    let bake = sinew(&["bake", &fox, "-o", &o, "--graph", &g]);
    assert!(bake.status.success(), "{}", String::from_utf8_lossy(&bake.stderr));
    let info = String::from_utf8_lossy(&sinew(&["info", &o]).stdout).into_owned();
    (fox, g, o, info)
}

/// `sinew dump` at `t` with `sets`, from the model and its graph file, then from the bake.
fn dump_both((fox, g, o): (&str, &str, &str), t: &str, sets: &[&str]) -> (Output, Output) {
    let mut from_file = vec!["dump", fox, "--graph", g, "--time", t];
    from_file.extend_from_slice(sets);
    let mut from_bake = vec!["dump", o, "--graph-baked", "--time", t];
    from_bake.extend_from_slice(sets);
    (sinew(&from_file), sinew(&from_bake))
}
