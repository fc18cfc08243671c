//! The source tree's one module file convention: a module with children is `name.rs` beside
//! `name/`, never `name/mod.rs`. The exception is a helper module shared by a package's
//! integration tests (`tests/common/mod.rs`): cargo would build a `tests/common.rs` as a test of
//! its own.

use std::path::{Path, PathBuf};

/// Every `mod.rs` under `dir`, build outputs and npm packages left out.
fn mod_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name();
        if path.is_dir() {
            if !matches!(name.to_str(), Some("target" | "node_modules" | ".git")) {
                mod_files(&path, out);
            }
        } else if name == "mod.rs" {
            out.push(path);
        }
    }
}

#[test]
fn modules_with_children_are_name_rs_beside_name() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for dir in ["core", "frontend-sdl", "tests"] {
        mod_files(&root.join(dir), &mut found);
    }
    // A helper of integration tests: `<package>/tests/<helper>/mod.rs`.
    let test_helper = |p: &Path| p.parent().and_then(Path::parent).is_some_and(|d| d.ends_with("tests"));
    let stray: Vec<_> = found.iter().filter(|p| !test_helper(p)).collect();
    assert!(stray.is_empty(), "mod.rs files where name.rs beside name/ is the convention: {stray:?}");
    assert!(
        found.iter().any(|p| p.ends_with("frontend-sdl/tests/common/mod.rs")),
        "the walk reaches the tree: {found:?}"
    );
}
