//! Shared by the retargeting CLI tests (`cli_retarget.rs`, `cli_retarget_bake.rs`): the
//! shared models and map, scratch folders, running `sinew`, its exit checks, and the dump's
//! joints.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The shared `gltf/MODEL/MODEL.glb`.
pub fn gltf_asset(model: &str) -> PathBuf {
    sinew_assets::path(&format!("gltf/{model}/{model}.glb"))
}

/// The map of RiggedFigure's joints to CesiumMan's.
pub fn map_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/riggedfigure-from-cesiumman.map")
}

/// An empty folder for test `test` (names are unique over both files).
pub fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sinew-cli-retarget-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Runs the `sinew` binary.
pub fn sinew(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sinew")).args(args).output().expect("sinew runs")
}

/// A path as an argument.
pub fn p(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// Asserts exit code 0 and returns stdout.
pub fn assert_ok(out: &Output, what: &str) -> String {
    assert_eq!(out.status.code(), Some(0), "{what}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Asserts exit code 2, nothing on stdout and one stderr line `sinew: FILE: ...` mentioning
/// `needle`.
pub fn assert_fails(out: &Output, file: &Path, needle: &str, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: exit code (stderr: {err})");
    assert!(out.stdout.is_empty(), "{what}: stdout {}", String::from_utf8_lossy(&out.stdout));
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: one error line, got {err:?}");
    let prefix = format!("sinew: {}: ", file.display());
    assert!(lines[0].starts_with(&prefix), "{what}: {:?} does not start with {prefix:?}", lines[0]);
    assert!(lines[0].contains(needle), "{what}: {:?} does not mention {needle:?}", lines[0]);
    eprintln!("cli {what}: {}", lines[0]);
}

/// The dump's joint names and world matrices (column-major).
pub fn dump_joints(json: &str) -> Vec<(String, [f64; 16])> {
    let v: serde_json::Value = serde_json::from_str(json).expect("JSON");
    let names = v["joints"].as_array().expect("joints");
    let world = v["joint_world"].as_array().expect("joint_world");
    assert_eq!(names.len(), world.len());
    names
        .iter()
        .zip(world)
        .map(|(n, m)| {
            let m: Vec<f64> = m.as_array().expect("matrix").iter().filter_map(serde_json::Value::as_f64).collect();
            (n.as_str().expect("name").to_string(), core::array::from_fn(|i| m[i]))
        })
        .collect()
}
