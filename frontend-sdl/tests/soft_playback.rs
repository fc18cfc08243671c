//! `sinew soft` takes `sinew demo`'s model and playback options, headless and without a
//! display: `--clip` picks the first clip (of core/fixtures/character.sinew, walk and run), an
//! unknown one fails with one line naming the file; `--retarget-from` plays CesiumMan's walk
//! on RiggedFigure (mapped by `tests/data/riggedfigure-from-cesiumman.map`) with CesiumMan to
//! its left, `--hide-source` leaves the target alone, and a bad mapping fails with
//! `sinew dump --retarget-from`'s line.

mod common;

use std::path::{Path, PathBuf};

use common::{coverage, figure_pixels, gltf, map_file, read_png, sinew, Image};

fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("soft_playback_{}_{name}", std::process::id()))
}

fn character() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/fixtures/character.sinew")
        .to_str()
        .expect("UTF-8 path")
        .to_string()
}

/// `sinew soft` headless with `args`, 6 frames to `time`, at 320 × 180 (`--width`/`--height`
/// in `args` win); the screenshot.
fn render(name: &str, time: &str, args: &[&str]) -> Image {
    let png = tmp(name);
    let png_s = png.to_str().expect("UTF-8 path");
    let mut all = vec!["soft"];
    all.extend(args);
    all.extend(["--headless", "--frames", "6", "--time", time, "--screenshot", png_s]);
    if !args.contains(&"--width") {
        all.extend(["--width", "320", "--height", "180"]);
    }
    let out = sinew(None, &all);
    assert!(out.status.success(), "{name}: exit {:?}", out.status);
    let img = read_png(&png);
    let _ = std::fs::remove_file(&png);
    img
}

/// The single line of a run that must fail with exit code 2.
fn failure(args: &[&str]) -> String {
    let out = sinew(None, args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    err
}

#[test]
fn soft_plays_the_clip_asked_for() {
    let model = character();
    let first = render("first.png", "0.25", &[&model]);
    let walk = render("walk.png", "0.25", &[&model, "--clip", "walk"]);
    let run = render("run.png", "0.25", &[&model, "--clip", "run"]);
    let run_by_index = render("run1.png", "0.25", &[&model, "--clip", "1"]);
    assert!(coverage(&run.rgba).0 > 0.02, "nothing drawn");
    // The first clip is walk: the same frame; run (by name or index) is another pose.
    assert!(walk.rgba == first.rgba, "--clip walk differs from the first clip");
    assert!(run.rgba == run_by_index.rgba, "--clip run and --clip 1 differ");
    let changed = walk.rgba.chunks_exact(4).zip(run.rgba.chunks_exact(4)).filter(|(a, b)| a != b).count();
    assert!(changed > 200, "walk and run differ in {changed} pixels only");

    // An unknown clip names the file; a clip without a model fails too.
    let err = failure(&["soft", &model, "--clip", "jump", "--headless"]);
    assert_eq!(err.trim_end(), format!("sinew: {model}: no clip named or numbered 'jump'"));
    let err = failure(&["soft", "--clip", "walk", "--headless"]);
    assert!(err.starts_with("sinew: ") && err.contains("--clip"), "{err}");
}

#[test]
fn soft_draws_the_retargeted_target_with_the_source_to_its_left() {
    let (target, source, map) = (gltf("RiggedFigure"), gltf("CesiumMan"), map_file());
    let retarget = ["--retarget-from", source.as_str(), "--map", map.as_str(), "--clip", "clip0"];
    let args = |extra: &[&'static str]| {
        let mut a = vec![target.as_str()];
        a.extend(retarget);
        a.extend(["--width", "640", "--height", "360"]);
        a.extend(extra);
        a
    };
    let shown = render("shown.png", "0.5", &args(&[]));
    let hidden = render("hidden.png", "0.5", &args(&["--hide-source"]));
    let start = render("start.png", "0", &args(&[]));
    let half = 320 * 360;

    // Two figures, one in each half; hiding the source leaves the right one alone, unchanged.
    let (l, r) = figure_pixels(&shown);
    eprintln!("figure pixels with the source: left {l}, right {r}");
    assert!(l * 200 > half && r * 200 > half, "left {l}, right {r}");
    let (l, r) = figure_pixels(&hidden);
    eprintln!("figure pixels without the source: left {l}, right {r}");
    assert!(l == 0 && r * 200 > half, "left {l}, right {r}");
    let w = 640;
    let right_half = |img: &Image| -> Vec<u8> {
        img.rgba.chunks_exact(4 * w).flat_map(|row| row[4 * w / 2..].iter().copied()).collect::<Vec<u8>>()
    };
    assert!(right_half(&shown) == right_half(&hidden), "hiding the source moved the target");

    // The target moves with the source's clip.
    let moved = shown.rgba.chunks_exact(4).zip(start.rgba.chunks_exact(4)).filter(|(a, b)| a != b).count();
    assert!(moved * 200 > 2 * half, "{moved} pixels differ between 0 s and 0.5 s");
}

#[test]
fn soft_fails_on_a_bad_map_as_dump_does() {
    let dir = tmp("maps");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let (target, source) = (gltf("RiggedFigure"), gltf("CesiumMan"));
    let map = dir.join("unknown.map");
    std::fs::write(&map, "NoSuchJoint = Skeleton_torso_joint_1\n").expect("map file");
    let map = map.to_str().expect("UTF-8 path");
    let soft = failure(&["soft", &target, "--retarget-from", &source, "--map", map, "--headless"]);
    let dump = failure(&["dump", &target, "--retarget-from", &source, "--map", map]);
    assert_eq!(soft, dump);
    assert!(
        soft.starts_with(&format!("sinew: {map}: ")) && soft.contains("has no joint named 'NoSuchJoint'"),
        "{soft}"
    );
    // A source that cannot be loaded names it.
    let missing = dir.join("missing.glb");
    let missing = missing.to_str().expect("UTF-8 path");
    let err = failure(&["soft", &target, "--retarget-from", missing, "--headless"]);
    assert!(err.starts_with(&format!("sinew: {missing}: ")), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
