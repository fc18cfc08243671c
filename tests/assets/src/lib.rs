//! Where the tests find the shared model files: the one way every Rust test of the workspace
//! reaches `../shared/assets`.
//!
//! The files are listed in `tests/assets/manifest.tsv` (path, bytes, SHA-256, license, source);
//! `tests/assets/fetch.sh` downloads them. The folder is `$SINEW_ASSETS`, read when a test runs
//! (a relative one is taken from the repository root), or `../shared/assets` beside the
//! repository. [`path`] refuses a file the manifest does not list, so the manifest stays
//! complete, and a missing file fails the test with one line that names the script:
//!
//! ```text
//! shared asset gltf/Fox/Fox.glb is missing from /x/shared/assets: run tests/assets/fetch.sh (or point SINEW_ASSETS at a folder that has it)
//! ```

use std::path::{Component, Path, PathBuf};

/// The manifest's text (`tests/assets/manifest.tsv`): `#` comments, then one file a line.
pub const MANIFEST: &str = include_str!("../manifest.tsv");

/// The variable that names the folder.
pub const ENV: &str = "SINEW_ASSETS";

/// One line of the manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The path under the folder, with `/` separators (`gltf/Fox/Fox.glb`).
    pub path: &'static str,
    /// The size in bytes.
    pub bytes: u64,
    /// The SHA-256 of the bytes, 64 lowercase hex digits.
    pub sha256: &'static str,
    /// The license: an SPDX id, or expression of ids and `LicenseRef-` names.
    pub license: &'static str,
    /// The upstream URL at a fixed commit, or `derived: ` and how the file is made.
    pub source: &'static str,
}

/// Every file of the manifest, in its order.
///
/// # Panics
///
/// If a line does not have the five tab-separated fields, or its size is not a number.
pub fn entries() -> impl Iterator<Item = Entry> {
    MANIFEST.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).map(|line| {
        let f: Vec<&'static str> = line.split('\t').collect();
        let [path, bytes, sha256, license, source] = f[..] else {
            panic!("tests/assets/manifest.tsv: {} fields, not 5, in `{line}`", f.len())
        };
        let bytes = bytes.parse().unwrap_or_else(|_| panic!("tests/assets/manifest.tsv: `{bytes}` is not a size"));
        Entry { path, bytes, sha256, license, source }
    })
}

/// The manifest's line for `rel`, if it lists it.
#[must_use]
pub fn entry(rel: &str) -> Option<Entry> {
    entries().find(|e| e.path == rel)
}

/// The folder the shared files are read from: `$SINEW_ASSETS`, or `../shared/assets` beside
/// the repository. Nothing is checked.
#[must_use]
pub fn root() -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = match std::env::var_os(ENV) {
        Some(v) if !v.is_empty() => repo.join(v),
        _ => repo.join("../shared/assets"),
    };
    dir.canonicalize().unwrap_or_else(|_| tidy(&dir))
}

/// The shared file `rel` (`gltf/Fox/Fox.glb`), under [`root`].
///
/// # Panics
///
/// If the manifest does not list `rel`; with one line naming `tests/assets/fetch.sh` if the
/// file is missing; if its size is not the manifest's.
#[track_caller]
#[must_use]
pub fn path(rel: &str) -> PathBuf {
    path_in(&root(), rel)
}

/// The folder `rel` under [`root`] (`""` for the root itself), for a test that reads several
/// files of it: each file the manifest lists there must be present.
///
/// # Panics
///
/// If the manifest lists no file under `rel`; as [`path`] does for the first file missing.
#[track_caller]
#[must_use]
pub fn dir(rel: &str) -> PathBuf {
    dir_in(&root(), rel)
}

/// [`path`] in the folder `root`.
#[track_caller]
fn path_in(root: &Path, rel: &str) -> PathBuf {
    let Some(e) = entry(rel) else {
        panic!("{rel} is not in tests/assets/manifest.tsv: list it there (path, bytes, SHA-256, license, source)")
    };
    let file = root.join(rel);
    match std::fs::metadata(&file) {
        Ok(m) if m.is_file() && m.len() == e.bytes => file,
        Ok(m) if m.is_file() => panic!(
            "shared asset {rel} in {} has {} bytes, not the manifest's {}: run tests/assets/fetch.sh",
            root.display(),
            m.len(),
            e.bytes
        ),
        _ => panic!("{}", missing(rel, root)),
    }
}

/// [`dir`] in the folder `root`.
#[track_caller]
fn dir_in(root: &Path, rel: &str) -> PathBuf {
    let rel = rel.trim_end_matches('/');
    let under = |p: &str| rel.is_empty() || p.strip_prefix(rel).is_some_and(|r| r.starts_with('/'));
    let mut n = 0;
    for e in entries().filter(|e| under(e.path)) {
        let _ = path_in(root, e.path);
        n += 1;
    }
    assert!(n > 0, "no file of tests/assets/manifest.tsv is under {rel}/");
    root.join(rel)
}

/// The one line of a missing file.
#[must_use]
pub fn missing(rel: &str, root: &Path) -> String {
    format!(
        "shared asset {rel} is missing from {}: run tests/assets/fetch.sh (or point {ENV} at a folder that has it)",
        root.display()
    )
}

/// `p` without `.` and `..` components (for messages: the folder may not exist).
fn tidy(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty folder of its own under the system's temporary folder.
    fn empty(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sinew-assets-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_manifest_parses_and_lists_each_file_once() {
        let all: Vec<Entry> = entries().collect();
        assert!(all.len() >= 13, "{} files", all.len());
        for (i, e) in all.iter().enumerate() {
            assert!(!all[..i].iter().any(|o| o.path == e.path), "{} twice", e.path);
            assert!(e.sha256.len() == 64 && e.sha256.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
            assert!(e.bytes > 0 && !e.license.is_empty(), "{}", e.path);
            assert!(e.source.starts_with("https://") || e.source.starts_with("derived: "), "{}", e.source);
            assert!(!e.path.starts_with('/') && !e.path.split('/').any(|c| c.is_empty() || c == ".."), "{}", e.path);
        }
    }

    #[test]
    #[should_panic(expected = "gltf/Fox/Nothing.glb is not in tests/assets/manifest.tsv")]
    fn a_path_outside_the_manifest_is_refused() {
        let _ = path("gltf/Fox/Nothing.glb");
    }

    #[test]
    #[should_panic(expected = "no file of tests/assets/manifest.tsv is under gltf/Nothing/")]
    fn a_folder_outside_the_manifest_is_refused() {
        let _ = dir("gltf/Nothing");
    }

    #[test]
    fn a_missing_file_is_one_line_naming_the_script() {
        let root = empty("missing");
        let reads: [fn(&Path); 2] =
            [|r| drop(path_in(r, "md5/boblamp/boblampclean.md5anim")), |r| drop(dir_in(r, "md5"))];
        for run in reads {
            let err = std::panic::catch_unwind(|| run(&root)).unwrap_err();
            let msg = err.downcast_ref::<String>().unwrap();
            assert_eq!(*msg, missing("md5/boblamp/boblampclean.md5anim", &root));
            assert!(!msg.contains('\n') && msg.contains("run tests/assets/fetch.sh"), "{msg}");
        }
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_file_of_another_size_is_refused() {
        let root = empty("size");
        std::fs::create_dir_all(root.join("gltf/Fox")).unwrap();
        std::fs::write(root.join("gltf/Fox/Fox.glb"), b"glTF").unwrap();
        let err = std::panic::catch_unwind(|| path_in(&root, "gltf/Fox/Fox.glb")).unwrap_err();
        let msg = err.downcast_ref::<String>().unwrap();
        assert!(msg.contains("has 4 bytes, not the manifest's 162852"), "{msg}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn folders_are_tidied_for_messages() {
        assert_eq!(tidy(Path::new("/a/b/../../c/./d")), Path::new("/c/d"));
        assert_eq!(tidy(Path::new("../x/..")), Path::new(".."));
    }
}
