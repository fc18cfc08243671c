//! `frontend-sdl/web/node_modules` for the cross-checks that run three.js in Node, found and
//! installed as `frontend-sdl/web/test/run.sh` does: `node` on the `PATH`, the packages
//! installed with `npm ci` when missing or older than the lockfile.
//!
//! `npm ci` deletes `node_modules` before it installs, so two installs at once break each
//! other's packages: the tests of one binary run on several threads, and the check and the
//! install run under one mutex. (`cargo test` runs the test binaries one after another.)

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

fn runs(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// `frontend-sdl/web`, the package whose lockfile pins three.js (beside the including
/// package's folder for `sinew-offline`, under it for `sinew-frontend`).
pub fn web() -> PathBuf {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    let inside = package.join("web");
    if inside.join("package.json").is_file() {
        inside
    } else {
        package.join("../web")
    }
}

/// Whether `node_modules` is missing or older than the lockfile (npm writes its own copy of the
/// lockfile, `node_modules/.package-lock.json`, at the end of every install).
fn stale(web: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (modified(&web.join("node_modules/.package-lock.json")), modified(&web.join("package-lock.json"))) {
        (Some(installed), Some(lock)) => lock > installed,
        _ => true,
    }
}

/// The installed `node_modules`, after one `npm ci` when it is missing or stale; `Err` with
/// the reason to skip when `node` or `npm` is not there.
///
/// # Panics
///
/// When `npm ci` fails: the packages are there to be installed and a cross-check that cannot
/// run them must not pass as skipped.
pub fn node_modules() -> Result<PathBuf, String> {
    static IN_PROCESS: Mutex<()> = Mutex::new(());
    if !runs("node") {
        return Err("`node` is not on the PATH".into());
    }
    let web = web();
    let modules = web.join("node_modules");
    // A test that panicked while holding the lock leaves nothing half-done that the check
    // below does not see: a poisoned lock is taken as it is.
    let _thread = IN_PROCESS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if stale(&web) {
        if !runs("npm") {
            return Err(format!("{} is missing or stale and `npm` is not on the PATH", modules.display()));
        }
        let out = Command::new("npm")
            .args(["ci", "--prefix"])
            .arg(&web)
            .args(["--no-audit", "--no-fund"])
            .output()
            .unwrap_or_else(|e| panic!("npm: {e}"));
        assert!(
            out.status.success(),
            "npm ci in {} failed:\n{}{}",
            web.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(modules)
}
