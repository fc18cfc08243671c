//! FBX and BVH everywhere the command line takes a model: `bake`, `info` and `dump` of the shared
//! files (the baked file and the source giving the same `dump`), `--bvh-scale`, and bad files as
//! one line naming the file, exit code 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sinew(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sinew")).args(args).output().expect("sinew runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sinew-cli-formats-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn ok(out: &Output, what: &str) -> String {
    assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// Exit code 2, nothing on stdout, one stderr line naming `file`.
fn refused(out: &Output, file: &Path, what: &str) -> String {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(out.stdout.is_empty(), "{what}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: {err:?}");
    assert!(lines[0].starts_with(&format!("sinew: {}: ", file.display())), "{what}: {}", lines[0]);
    lines[0].to_owned()
}

#[test]
fn fbx_and_bvh_bake_and_dump_as_their_sources() {
    let dir = scratch("bake");
    for (file, time) in [
        ("fbx/ufbx/maya_game_sausage_7500_binary_wiggle.fbx", "0.5"),
        ("fbx/ufbx/blender_279_sausage_7400_binary.fbx", "0.5"),
        ("fbx/assimp/huesitos.fbx", "0.5"),
        ("bvh/cmu/01_01.bvh", "3.25"),
        ("bvh/bvh_anim/test_simple.bvh", "0.02"),
    ] {
        let src = sinew_assets::path(file);
        let baked = dir.join(format!("{}.sinew", src.file_stem().and_then(|s| s.to_str()).unwrap_or("model")));
        ok(&sinew(&["bake", p(&src), "-o", p(&baked)]), file);
        let info = ok(&sinew(&["info", p(&baked)]), file);
        assert!(info.contains("joints") && info.contains("clip 0"), "{file}: {info}");
        let a = ok(&sinew(&["dump", p(&src), "--time", time]), file);
        let b = ok(&sinew(&["dump", p(&baked), "--time", time]), file);
        assert_eq!(a, b, "{file}: dump of the source and of its bake");
    }
}

#[test]
fn bvh_scale_is_given_or_guessed_and_only_for_bvh() {
    let dir = scratch("scale");
    let cmu = sinew_assets::path("bvh/cmu/01_01.bvh");
    // The import's notes are part of what `bake` prints of the model (stdout).
    let guessed = ok(&sinew(&["bake", p(&cmu), "-o", p(&dir.join("guessed.sinew"))]), "guessed");
    assert!(guessed.contains("read as CMU units"), "{guessed}");
    let given = ok(&sinew(&["bake", p(&cmu), "-o", p(&dir.join("inches.sinew")), "--bvh-scale", "0.0254"]), "given");
    assert!(given.contains("scale 0.0254 m per file unit (given)"), "{given}");
    let fox = sinew_assets::path("gltf/Fox/Fox.glb");
    let out = sinew(&["bake", p(&fox), "-o", p(&dir.join("fox.sinew")), "--bvh-scale", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--bvh-scale is for .bvh inputs"));
}

#[test]
fn bad_fbx_and_bvh_files_are_one_line() {
    let dir = scratch("bad");
    let cases: [(&str, &[u8], &str); 4] = [
        ("empty.fbx", b"", "fbx"),
        ("text.fbx", b"not an fbx file at all", "fbx"),
        ("cut.bvh", b"HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition", "line"),
        ("motion.bvh", b"HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n CHANNELS 3 Xrotation Yrotation Zrotation\n End Site\n {\n OFFSET 0 1 0\n }\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n0 0 0\n", "line"),
    ];
    for (name, bytes, needle) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("scratch file");
        for cmd in ["info", "dump", "bake"] {
            let mut args = vec![cmd, p(&path)];
            let out_file = dir.join("out.sinew");
            if cmd == "bake" {
                args.extend(["-o", p(&out_file)]);
            }
            let line = refused(&sinew(&args), &path, &format!("{cmd} {name}"));
            assert!(line.to_lowercase().contains(needle), "{cmd} {name}: {line}");
        }
    }
}
