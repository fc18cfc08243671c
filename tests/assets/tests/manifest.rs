//! The manifest against the files: each one present in the folder with its size and SHA-256;
//! and, in a test process of its own pointed at an empty folder, the one line a test that
//! reads a missing file fails with.

use std::path::Path;
use std::process::Command;

use sha2::{Digest, Sha256};

/// Set in the child process of `a_missing_file_fails_with_one_line_naming_the_script`.
const PROBE: &str = "SINEW_ASSETS_PROBE";

#[test]
fn every_file_is_there_with_its_size_and_sha256() {
    let root = sinew_assets::root();
    let mut total = 0;
    for e in sinew_assets::entries() {
        let bytes = std::fs::read(sinew_assets::path(e.path)).unwrap_or_else(|err| panic!("{}: {err}", e.path));
        assert_eq!(bytes.len() as u64, e.bytes, "{} in {}", e.path, root.display());
        let sum: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(sum, e.sha256, "{} in {}: SHA-256", e.path, root.display());
        total += e.bytes;
    }
    eprintln!("{}: every file of tests/assets/manifest.tsv matches ({total} bytes)", root.display());
}

/// The child's part: reads a shared file, which `SINEW_ASSETS` makes missing. Does nothing
/// in a plain run.
#[test]
fn probe_missing() {
    if std::env::var_os(PROBE).is_some() {
        let _ = sinew_assets::path("gltf/Fox/Fox.glb");
    }
}

#[test]
fn a_missing_file_fails_with_one_line_naming_the_script() {
    let empty = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sinew-assets-empty");
    let _ = std::fs::remove_dir_all(&empty);
    std::fs::create_dir_all(&empty).unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "probe_missing", "--test-threads=1"])
        .env(PROBE, "1")
        .env(sinew_assets::ENV, &empty)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the test binary runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success(), "the probe passed with {} empty:\n{text}", empty.display());
    let expected = format!(
        "shared asset gltf/Fox/Fox.glb is missing from {}: run tests/assets/fetch.sh (or point SINEW_ASSETS at a folder that has it)",
        empty.canonicalize().unwrap().display()
    );
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("fetch.sh")).collect();
    assert_eq!(lines, [expected.as_str()], "the probe's output:\n{text}");
}
