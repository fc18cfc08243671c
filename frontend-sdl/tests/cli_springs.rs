//! `sinew dump --springs` as a user runs it on a VRM model, against an independent
//! implementation: the spring joints' `joint_world` positions after the dump's steps equal
//! three-vrm 3.5.5's (`VRMSpringBoneManager`, run in Node by
//! `offline/tests/springs/three_springs.mjs`) after the same steps with the model held, within
//! 1e-4 of the model's height, at 60 Hz and at `--rate 30`; and bad uses exit 2 with one line.
//! Without `node` or `npm` the comparison is skipped with a printed reason (CI has both).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

#[path = "../offline/tests/support/npm.rs"]
mod npm;

/// The VRM 1.0 conformance model: a 4-joint chain under the head, falling onto a capsule.
const MODEL: &str = "vrm/vrm-conformance/springbone_collider_capsule_x0p02_r0p1.vrm";

fn sinew(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sinew")).args(args).output().expect("sinew runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The dump's joints by name, with their `joint_world` translations.
fn dump(args: &[&str]) -> Vec<(String, [f64; 3])> {
    let out = sinew(args);
    assert_eq!(out.status.code(), Some(0), "sinew {args:?}: {}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("the dump's JSON");
    let names = v["joints"].as_array().expect("joints");
    let world = v["joint_world"].as_array().expect("joint_world");
    names
        .iter()
        .zip(world)
        .map(|(n, m)| {
            let m: Vec<f64> = m.as_array().expect("a matrix").iter().map(|x| x.as_f64().expect("a number")).collect();
            (n.as_str().expect("a name").to_owned(), [m[12], m[13], m[14]])
        })
        .collect()
}

/// three-vrm's node names and positions after `steps` steps at `rate`, the model held.
fn three(modules: &Path, file: &Path, steps: usize, rate: f64) -> (Vec<String>, Vec<[f64; 3]>, Vec<[f64; 3]>) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("offline/tests/springs/three_springs.mjs");
    let out = Command::new("node")
        .arg(&script)
        .arg(modules)
        .arg(file)
        .args([steps.to_string(), rate.to_string(), "0".into(), "0".into()])
        .output()
        .expect("node runs");
    assert!(out.status.success(), "three_springs.mjs: {}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("the script's JSON");
    let point = |p: &Value| -> [f64; 3] { [0, 1, 2].map(|k| p[k].as_f64().expect("a coordinate")) };
    let frames = v["steps"].as_array().expect("steps");
    let at = |k: usize| frames[k].as_array().expect("positions").iter().map(point).collect::<Vec<_>>();
    let names = v["nodes"].as_array().expect("nodes").iter().map(|n| n.as_str().unwrap_or("").to_owned()).collect();
    (names, at(0), at(steps))
}

#[test]
fn dump_springs_matches_three_vrm_at_60_and_30_hz() {
    let modules = match npm::node_modules() {
        Ok(m) => m,
        Err(why) => {
            eprintln!("skipped: the comparison of `sinew dump --springs` with three-vrm: {why}");
            return;
        }
    };
    let file = sinew_assets::path(MODEL);
    let path = file.to_str().expect("UTF-8 path");
    for (rate, steps) in [(60.0, 600usize), (30.0, 300)] {
        let (names, rest, after) = three(&modules, &file, steps, rate);
        let ys = rest.iter().map(|p| p[1]);
        let height = ys.clone().fold(f64::MIN, f64::max) - ys.fold(f64::MAX, f64::min);
        let ours = dump(&["dump", path, "--springs", "--time", "10", "--rate", &rate.to_string()]);
        let plain = dump(&["dump", path, "--time", "10"]);
        let mut compared = 0;
        for (name, p) in &ours {
            let Some(node) = names.iter().position(|n| n == name) else { continue };
            let d = (0..3).map(|k| (p[k] - after[node][k]).powi(2)).sum::<f64>().sqrt();
            assert!(d <= 1e-4 * height, "{rate} Hz: {name} is {d} from three-vrm's (height {height})");
            compared += 1;
        }
        // Every joint but those whose names the baked skeleton shortens (32 bytes).
        let shortened = ours.iter().filter(|(n, _)| n.len() == 32).count();
        assert_eq!(compared + shortened, ours.len(), "every joint is a node of the file");
        // The chain's end fell: the springs did something, and the plain dump is at rest.
        let end = |d: &[(String, [f64; 3])]| d.iter().find(|(n, _)| n == "spring_joint_3").expect("the chain's end").1;
        let (swung, rest_end) = (end(&ours), end(&plain));
        let moved = (0..3).map(|k| (swung[k] - rest_end[k]).powi(2)).sum::<f64>().sqrt();
        assert!(moved > 0.01 * height, "{rate} Hz: the chain's end moved {moved}");
        eprintln!(
            "{rate} Hz: {compared} joints within 1e-4 × {height:.3} of three-vrm; the chain's end moved {moved:.4}"
        );
    }
}

#[test]
fn bad_spring_dumps_exit_2_with_one_line() {
    let file = sinew_assets::path(MODEL);
    let path = file.to_str().expect("UTF-8 path");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/fixtures/character.sinew");
    let fixture = fixture.to_str().expect("UTF-8 path");
    for (args, says) in [
        (vec!["dump", fixture, "--springs", "--time", "1"], "no spring bones"),
        (vec!["dump", path, "--springs", "--time", "1", "--rate", "0"], "positive number"),
        (vec!["dump", path, "--springs", "--time", "1e9"], "steps"),
    ] {
        let out = sinew(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // --rate belongs to --springs.
    let out = sinew(&["dump", path, "--time", "1", "--rate", "30"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}
