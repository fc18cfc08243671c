//! Helpers shared by the integration tests that run the `sinew` command line.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The `sinew` binary, built once per test run: `cargo build` in this test's profile, located
/// through cargo's JSON messages so a stale binary never runs.
pub fn sinew_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
        cmd.args(["build", "-p", "sinew-frontend", "--bin", "sinew", "--message-format=json-render-diagnostics"]);
        if !cfg!(debug_assertions) {
            cmd.arg("--release");
        }
        let out = cmd.output().expect("cargo runs");
        assert!(out.status.success(), "building sinew failed:\n{}", String::from_utf8_lossy(&out.stderr));
        let exe = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["reason"] == "compiler-artifact" && v["target"]["name"] == "sinew")
            .find_map(|v| v["executable"].as_str().map(PathBuf::from))
            .expect("cargo reports the sinew executable");
        assert!(exe.exists(), "{} exists", exe.display());
        exe
    })
}
