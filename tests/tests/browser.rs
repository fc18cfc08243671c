//! Runs the browser build's tests (`frontend-sdl/web/test/run.sh`): the site built into
//! `target/site`, then its pages in headless Chromium against the desktop viewer's frames and
//! the native runtime's palettes. The Node tests' report must show every test passing.
//!
//! Needs Debian's `chromium`, Node.js 20 with npm (the script installs the npm packages of
//! `frontend-sdl/web/package-lock.json`), the `wasm32-unknown-unknown` target (added when
//! missing), and what the desktop viewer's GL tests need (libsdl2-dev, Xvfb, Mesa); the script
//! names what is missing, and this test fails then.

use std::path::Path;
use std::process::Command;

/// The slow tier (`cargo test -- --skip slow::` leaves it out; see the README's Tests table).
mod slow {
    #[test]
    fn browser_build_in_headless_chromium() {
        super::browser_build_in_headless_chromium();
    }
}

/// Builds the site and runs the Node tests on it.
fn browser_build_in_headless_chromium() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let script = root.join("frontend-sdl/web/test/run.sh");
    let site = root.join("target/site");
    let out = Command::new("bash")
        .arg(&script)
        .arg(&site)
        .current_dir(&root)
        // The site's wasm modules build with their own flags in their own target folders.
        .env_remove("RUSTFLAGS")
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}\n{stderr}");
    assert!(out.status.success(), "frontend-sdl/web/test/run.sh failed:\n{stdout}\n{stderr}");
    let count = |key: &str| {
        stdout.lines().find_map(|l| l.strip_prefix(key)).and_then(|n| n.trim().parse::<usize>().ok()).unwrap_or(0)
    };
    assert_eq!(count("# fail "), 0, "failing browser tests:\n{stdout}");
    assert!(count("# pass ") >= 19, "expected at least 19 browser tests to pass:\n{stdout}");
}
