//! The model viewers driven by an animation graph file: `sinew demo MODEL --graph FILE` and
//! `sinew soft MODEL --graph FILE` headless on Fox with the minimal graph of core/docs/graphs.md, a `--set`
//! moving it from idle into its blend space; and a graph with a mistake exiting 2 with one line
//! naming it. The demo runs on `DISPLAY`, or on a private Xvfb when `DISPLAY` is unset.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{coverage, read_png, sinew, Display};

/// The minimal graph for Fox (idle, and a synced walk/run blend space), shared by the graph tests.
const GRAPH: &str = include_str!("../offline/tests/data/fox_graph.json");

fn fox() -> String {
    sinew_assets::path("gltf/Fox/Fox.glb").display().to_string()
}

fn tmp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("viewer_graph_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}

fn graph_file(name: &str, json: &str) -> String {
    let path = tmp(name);
    std::fs::write(&path, json).expect("graph file");
    path.display().to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// 45 frames to 0.75 s with `speed` set at 0.5 s: the 0.3 s inertialized transition to `move`
/// is under way; the report names it, the image shows the fox.
#[test]
fn demo_runs_a_graph_headless() {
    let d = Display::get();
    let graph = graph_file("fox.json", GRAPH);
    let png = tmp("demo.png");
    let (fox, png_s) = (fox(), png.display().to_string());
    let args = [
        "demo",
        &fox,
        "--graph",
        &graph,
        "--set",
        "speed=2@0.5",
        "--frames",
        "45",
        "--width",
        "320",
        "--height",
        "180",
        "--screenshot",
        &png_s,
    ];
    let out = sinew(Some(&d), &args);
    assert!(out.status.success(), "exit {:?}", out.status);
    let log = stderr(&out);
    assert!(log.contains("45 frames"), "{log}");
    // The set applies before the step starting at 0.5 s: 14 or 15 of the transition's 18 steps
    // are run (one step later when the frames' sum of f32 steps falls short of 0.5 s).
    assert!(
        log.contains("graph state move (idle -> move 78%)") || log.contains("graph state move (idle -> move 72%)"),
        "{log}"
    );
    assert!(log.contains("[speed=2.00]"), "{log}");
    let img = read_png(&png);
    let (cover, _) = coverage(&img.rgba);
    assert!(cover > 0.02, "{cover}");
}

/// The software viewer: 60 frames to 1 s, the transition over; its parameters read back.
#[test]
fn soft_runs_a_graph_headless() {
    let graph = graph_file("fox_soft.json", GRAPH);
    let fox = fox();
    let args =
        ["soft", &fox, "--graph", &graph, "--set", "speed=2@0.5", "--headless", "--frames", "60", "--width", "96"];
    let out = sinew(None, &[&args[..], &["--height", "54"]].concat());
    assert!(out.status.success(), "exit {:?}", out.status);
    let log = stderr(&out);
    assert!(log.contains("sinew soft: graph state move   [speed=2.00]"), "{log}");
}

/// An unknown clip, a malformed condition, an unknown parameter in `--set`, and `--graph`
/// without a model: exit 2, one line naming what is wrong.
#[test]
fn bad_graphs_exit_2_with_one_line() {
    let d = Display::get();
    let fox = fox();
    let sprint = graph_file("sprint.json", &GRAPH.replace("\"Run\"", "\"Sprint\""));
    let cond = graph_file("cond.json", &GRAPH.replace("speed > 0.1", "speed => 0.1"));
    let good = graph_file("good.json", GRAPH);
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["demo", &fox, "--graph", &sprint, "--frames", "1", "--width", "64", "--height", "36"], "Sprint"),
        (vec!["soft", &fox, "--graph", &sprint, "--headless", "--width", "64", "--height", "36"], "Sprint"),
        (vec!["soft", &fox, "--graph", &cond, "--headless", "--width", "64", "--height", "36"], "speed => 0.1"),
        (
            vec![
                "demo", &fox, "--graph", &good, "--set", "sped=1@0", "--frames", "1", "--width", "64", "--height", "36",
            ],
            "unknown parameter 'sped'",
        ),
        (vec!["soft", "--graph", &good, "--headless"], "model"),
    ];
    for (args, named) in cases {
        let out = sinew(Some(&d), &args);
        let log = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {log}");
        let last = log.lines().last().unwrap_or("");
        assert!(last.starts_with("sinew: ") && last.contains(named), "{args:?}: {log}");
    }
}
