//! The bad-input corpus (`sinew_tests::corpus`) through the `sinew` binary: one stderr line
//! `sinew: <file>: <problem>` (the problem being the library's message for that error) and exit
//! code 2 for the first rejected case of every category of every format; a failed bake writes
//! no file; a closed stdout (`sinew info … | head -1`) ends the output quietly; and `sinew bake`
//! says when it dropped degenerate triangles or stored a clip lossless for the work budget.
//!
//! The same corpus in-process (every case, the baker's reports) is `tests/tests/bad_input.rs`.
//! Cargo builds the binary for these tests (`CARGO_BIN_EXE_sinew`); scratch files go to
//! `CARGO_TARGET_TMPDIR`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use sinew_offline::bake::BakeOptions;
use sinew_offline::import::md5;
use sinew_offline::import::{gltf, ImportError};
use sinew_offline::model::{Model, ModelError};
use sinew_tests::corpus::gltf::{gltf_cases, hostile_chain, SmallGltf};
use sinew_tests::corpus::md5::md5_cases;
use sinew_tests::corpus::morph::morph_cases;
use sinew_tests::corpus::sinew::sinew_cases;
use sinew_tests::corpus::Category::Checksum;
use sinew_tests::corpus::{gltf_asset, read};

// ---------------------------------------------------------------------------------------------
// The binary, scratch space
// ---------------------------------------------------------------------------------------------

fn sinew_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sinew"))
}

fn sinew(args: &[&str]) -> Output {
    Command::new(sinew_bin()).args(args).output().expect("sinew runs")
}

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sinew-cli-bad-input-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write scratch file");
    path
}

fn p(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

// ---------------------------------------------------------------------------------------------
// Rejected files
// ---------------------------------------------------------------------------------------------

/// Runs `sinew <command> <file> [--anim <anim>]` on a bad file and requires exit code 2, no
/// output, and exactly one stderr line: `sinew: <file>: ` and the library's message for the
/// error that `Model::load` gives in-process (whose typed error `check` must accept).
fn assert_cli_fails(command: &str, file: &Path, anim: Option<&Path>, check: impl FnOnce(ModelError) -> bool) -> String {
    let e = match Model::load(file, anim, &BakeOptions::default()) {
        Ok(_) => panic!("{} loads", file.display()),
        Err(e) => e,
    };
    let want = format!("sinew: {}: {e}\n", file.display());
    assert!(check(e), "{}: {want}", file.display());
    let mut args = vec![command, p(file)];
    if let Some(a) = anim {
        args.extend(["--anim", p(a)]);
    }
    let out = sinew(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{command} {}: {err}", file.display());
    assert!(out.stdout.is_empty(), "{command} {}: stdout {:?}", file.display(), String::from_utf8_lossy(&out.stdout));
    assert_eq!(err, want, "{command} {}", file.display());
    want
}

/// A file name from a case name.
fn file_name(case: &str, ext: &str) -> String {
    let stem: String = case.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    format!("{stem}.{ext}")
}

/// The first case of every category whose input is rejected, for each format, through
/// `sinew info` (and the checksum case through `dump`).
#[test]
fn cli_names_the_file_and_the_problem() {
    let dir = scratch("cli");
    let mut lines = Vec::new();
    let mut seen = HashSet::new();
    for c in sinew_cases() {
        if !seen.insert(c.category) {
            continue;
        }
        let path = write(&dir, &file_name(&c.name, "sinew"), &c.bytes);
        let check = &c.check;
        lines.push(assert_cli_fails("info", &path, None, |e| matches!(e, ModelError::Parse(pe) if check(&Err(pe)))));
        if c.category == Checksum {
            let check = &c.check;
            assert_cli_fails("dump", &path, None, |e| matches!(e, ModelError::Parse(pe) if check(&Err(pe))));
        }
    }
    let mut seen = HashSet::new();
    for c in gltf_cases() {
        let ext = if c.bytes.first() == Some(&b'{') { "gltf" } else { "glb" };
        if seen.contains(&c.category) || gltf::load_bytes(&c.bytes, None, "case").is_ok() {
            continue;
        }
        seen.insert(c.category);
        let path = write(&dir, &file_name(&c.name, ext), &c.bytes);
        let check = &c.check;
        lines.push(assert_cli_fails("info", &path, None, |e| match e {
            ModelError::Import(ImportError::Gltf(ge)) => check(&Err(ge)),
            _ => false,
        }));
    }
    let mut seen = HashSet::new();
    for c in md5_cases() {
        let anim_text = c.second.as_deref().map(String::from_utf8_lossy);
        let rig = md5::load(&String::from_utf8_lossy(&c.bytes), anim_text.as_deref(), "case");
        if seen.contains(&c.category) || rig.is_ok() {
            continue;
        }
        seen.insert(c.category);
        let mesh = write(&dir, &file_name(&c.name, "md5mesh"), &c.bytes);
        let anim = c.second.as_ref().map(|a| write(&dir, &file_name(&c.name, "md5anim"), a));
        let check = &c.check;
        lines.push(assert_cli_fails("info", &mesh, anim.as_deref(), |e| match e {
            ModelError::Import(ImportError::Md5(md5::LoadError::Md5 { error, .. })) => check(&Err(error)),
            _ => false,
        }));
    }
    // Every category of every format, but the degenerate triangles the importers keep (images
    // and textures: .sinew and glTF only; compressed streams: glTF only).
    assert_eq!(lines.len(), 12 + 11 + 9, "one CLI check per category and format");
    for l in &lines {
        eprint!("cli {l}");
    }
}

/// Every rejected morph-target case (mismatched target counts, weight arrays of the wrong
/// length, target accessors of the wrong count) through `sinew info` and `sinew dump`.
#[test]
fn cli_refuses_bad_morph_data() {
    let dir = scratch("cli-morph");
    let mut n = 0;
    for c in morph_cases() {
        if gltf::load_bytes(&c.bytes, None, "case").is_ok() {
            continue;
        }
        let path = write(&dir, &file_name(&c.name, "gltf"), &c.bytes);
        for command in ["info", "dump"] {
            let check = &c.check;
            let line = assert_cli_fails(command, &path, None, |e| match e {
                ModelError::Import(ImportError::Gltf(ge)) => check(&Err(ge)),
                _ => false,
            });
            eprint!("cli {line}");
        }
        n += 1;
    }
    assert_eq!(n, 7, "the rejected morph cases");
}

/// `sinew bake` of a rejected file writes nothing.
#[test]
fn failed_bake_writes_no_file() {
    let dir = scratch("bake-fails");
    let mut s = SmallGltf::new();
    s.weights[1] = [0.0; 4];
    let path = write(&dir, "zero-weights.gltf", s.gltf());
    let out = dir.join("out.sinew");
    let r = sinew(&["bake", p(&path), "-o", p(&out)]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(
        err,
        format!("sinew: {}: mesh 0 primitive 0 vertex 1 has all weights zero (it follows no joint)\n", path.display())
    );
    assert!(!out.exists());
}

// ---------------------------------------------------------------------------------------------
// A closed stdout
// ---------------------------------------------------------------------------------------------

/// `sinew info … | head -1`, `sinew bake … | head -1`, `sinew dump … | head -c 10`: once the
/// reader has gone, the output ends quietly (exit code 0, nothing on stderr but bake's own
/// summary), never with a panic on the broken pipe.
#[test]
fn closed_stdout_ends_output_quietly() {
    let dir = scratch("pipe");
    let model = gltf_asset("CesiumMan", "glb");
    let baked = dir.join("CesiumMan.sinew");
    for args in [
        vec!["info", p(&model)],
        vec!["bake", p(&model), "-o", p(&baked)],
        vec!["info", p(&baked)],
        vec!["dump", p(&model), "--time", "0.5"],
    ] {
        // The reading end is closed before the child has loaded the model, so every write it
        // makes meets a broken pipe.
        let mut child = Command::new(sinew_bin())
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sinew runs");
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("sinew ends");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{args:?}: {err}");
        if args[0] == "bake" {
            assert!(baked.exists() && err.contains("wrote"), "{err}");
        } else {
            assert!(err.is_empty(), "{args:?}: {err}");
        }
    }
    // `head -1` through a shell, as a user types it.
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("'{}' info '{}' | head -1", sinew_bin().display(), model.display()))
        .output()
        .expect("sh runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("model CesiumMan ({} bytes baked)\n", read(&baked).len()));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

// ---------------------------------------------------------------------------------------------
// What the baker did, as `sinew bake` says it
// ---------------------------------------------------------------------------------------------

/// The CLI half of `baker_drops_degenerate_triangles` (tests/tests/bad_input.rs): a triangle
/// that repeats a vertex is dropped, and `sinew bake` says so.
#[test]
fn cli_bake_reports_dropped_degenerate_triangles() {
    let mut s = SmallGltf::new();
    s.indices = vec![0, 1, 2, 2, 2, 3];
    let dir = scratch("degenerate");
    let path = write(&dir, "degenerate.gltf", s.gltf());
    let out = sinew(&["bake", p(&path), "-o", p(&dir.join("out.sinew"))]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("dropped 1 degenerate triangles (a vertex used twice)"));
}

/// The CLI half of `hostile_clip_is_stored_lossless_without_work` (tests/tests/bad_input.rs):
/// the clip whose one measurement is past the work budget is stored lossless, and `sinew bake`
/// says what it did.
#[test]
fn cli_bake_reports_the_work_budget_fallback() {
    let glb = hostile_chain().glb;
    let dir = scratch("hostile");
    let path = write(&dir, "hostile.glb", &glb);
    let out = sinew(&["bake", p(&path), "-o", p(&dir.join("hostile.sinew"))]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("clip 'hostile': key reduction would exceed the work budget"), "{err}");
}
