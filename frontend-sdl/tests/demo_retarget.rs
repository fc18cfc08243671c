//! `sinew demo TARGET --retarget-from SOURCE` headless: CesiumMan's walk played on
//! RiggedFigure (mapped by `tests/data/riggedfigure-from-cesiumman.map`) with CesiumMan drawn
//! to its left; `--hide-source` leaves the target alone, unchanged; a bad mapping fails before
//! any window opens, with `sinew dump --retarget-from`'s line. A motion capture without meshes
//! (CMU's BVH) is drawn as bones by both viewers, alone and as a source. The GL runs use
//! `DISPLAY`, or a private Xvfb when it is unset.

mod common;

use std::path::{Path, PathBuf};

use common::{figure_pixels, gltf, halves, map_file, read_png, sinew, Display, Image};

fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("demo_retarget_{}_{name}", std::process::id()))
}

/// RiggedFigure driven by CesiumMan's `clip0` at `time`, 640 × 360 without the HUD, with
/// `extra` flags; the screenshot.
fn render(d: &Display, name: &str, time: &str, extra: &[&str]) -> Image {
    let png = tmp(name);
    let (target, source, map) = (gltf("RiggedFigure"), gltf("CesiumMan"), map_file());
    let mut args = vec!["demo", &target, "--retarget-from", &source, "--map", &map, "--clip", "clip0"];
    args.extend(["--time", time, "--width", "640", "--height", "360", "--no-hud"]);
    args.extend(extra);
    args.extend(["--screenshot", png.to_str().expect("UTF-8 path")]);
    let out = sinew(Some(d), &args);
    assert!(out.status.success(), "{name}: exit {:?}", out.status);
    let img = read_png(&png);
    assert_eq!((img.width, img.height), (640, 360));
    let _ = std::fs::remove_file(&png);
    img
}

/// Pixels, per half, that differ between two images of the same size.
fn differing(a: &Image, b: &Image) -> (usize, usize) {
    let w = a.width as usize;
    halves(a, |x, y, p| {
        let i = 4 * (y * w + x);
        (0..3).any(|k| p[k].abs_diff(b.rgba[i + k]) > 2)
    })
}

#[test]
fn demo_draws_the_retargeted_target_with_the_source_to_its_left() {
    let d = Display::get();
    let shown = render(&d, "shown.png", "0.5", &[]);
    let hidden = render(&d, "hidden.png", "0.5", &["--hide-source"]);
    let start = render(&d, "start.png", "0", &[]);
    let half = 320 * 360;

    // Two figures: one in each half; hiding the source leaves the right one alone.
    let (l, r) = figure_pixels(&shown);
    eprintln!("figure pixels with the source: left {l}, right {r}");
    assert!(l * 200 > half && r * 200 > half, "left {l}, right {r}");
    let (l, r) = figure_pixels(&hidden);
    eprintln!("figure pixels without the source: left {l}, right {r}");
    assert!(l == 0 && r * 200 > half, "left {l}, right {r}");

    // Hiding the source changes the left half only: the target and the camera stay.
    let (l, r) = differing(&shown, &hidden);
    eprintln!("pixels differing when the source is hidden: left {l}, right {r}");
    assert!(l * 100 > half && r == 0, "left {l}, right {r}");

    // Both figures move with the source's clip: the retargeted pose follows its time.
    let (l, r) = differing(&shown, &start);
    eprintln!("pixels differing between 0 s and 0.5 s: left {l}, right {r}");
    assert!(l * 200 > half && r * 200 > half, "left {l}, right {r}");
}

#[test]
fn demo_fails_on_a_bad_map_as_dump_does() {
    let dir = tmp("maps");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let (target, source) = (gltf("RiggedFigure"), gltf("CesiumMan"));
    for (name, text, needle) in [
        ("unknown.map", "NoSuchJoint = Skeleton_torso_joint_1\n", "has no joint named 'NoSuchJoint'"),
        ("hips.map", "@hips torso_joint_1\n", "are not mapped"),
    ] {
        let map = dir.join(name);
        std::fs::write(&map, text).expect("map file");
        let map = map.to_str().expect("UTF-8 path");
        // No window is opened: the check runs before, without a display.
        let demo = sinew(None, &["demo", &target, "--retarget-from", &source, "--map", map, "--frames", "1"]);
        let dump = sinew(None, &["dump", &target, "--retarget-from", &source, "--map", map]);
        let (de, du) = (String::from_utf8_lossy(&demo.stderr), String::from_utf8_lossy(&dump.stderr));
        assert_eq!((demo.status.code(), dump.status.code()), (Some(2), Some(2)), "{name}: {de} / {du}");
        assert_eq!(de.lines().count(), 1, "{name}: {de}");
        assert_eq!(de, du, "{name}");
        assert!(de.starts_with(&format!("sinew: {map}: ")) && de.contains(needle), "{name}: {de}");
    }
    // A source that cannot be loaded names it.
    let missing = dir.join("missing.glb");
    let missing = missing.to_str().expect("UTF-8 path");
    let out = sinew(None, &["demo", &target, "--retarget-from", missing, "--frames", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.lines().count() == 1 && err.starts_with(&format!("sinew: {missing}: ")), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bone-yellow pixels (red and green high, blue low), per half.
fn bone_pixels(img: &Image) -> (usize, usize) {
    halves(img, |_, _, p| p[0] > 200 && p[1] > 160 && p[2] < 120)
}

/// A motion capture without meshes (CMU's `01_01.bvh`) is drawn as its bones, by `sinew demo` and
/// `sinew soft`: alone, framed by its pose, and as a retarget source beside RiggedFigure
/// (`tests/data/riggedfigure-from-cmu.map`), which it drives.
#[test]
fn a_motion_capture_is_drawn_as_bones_alone_and_beside_its_target() {
    let d = Display::get();
    let bvh = sinew_assets::path("bvh/cmu/01_01.bvh").to_str().expect("UTF-8 path").to_string();
    let map = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/riggedfigure-from-cmu.map");
    let (map, target) = (map.to_str().expect("UTF-8 path").to_string(), gltf("RiggedFigure"));
    let half = 320 * 360;
    for viewer in ["demo", "soft"] {
        let shot = |name: &str, args: &[&str]| {
            let png = tmp(&format!("{viewer}-{name}"));
            let mut all = vec![viewer];
            all.extend(args);
            all.extend(["--time", "2", "--width", "640", "--height", "360", "--screenshot", png.to_str().unwrap()]);
            if viewer == "demo" {
                all.push("--no-hud");
            } else {
                all.push("--headless");
            }
            let out = sinew(Some(&d), &all);
            assert!(out.status.success(), "{viewer} {name}: exit {:?}", out.status);
            let img = read_png(&png);
            let _ = std::fs::remove_file(&png);
            img
        };
        let (l, r) = bone_pixels(&shot("alone.png", &[&bvh]));
        eprintln!("{viewer}: bone pixels of the capture alone: left {l}, right {r}");
        assert!(l + r > 100 && l > 0 && r > 0, "{viewer}: framed in the middle, left {l}, right {r}");
        let beside = shot("beside.png", &[&target, "--retarget-from", &bvh, "--map", &map]);
        let (l, _) = bone_pixels(&beside);
        let (_, figure) = figure_pixels(&beside);
        eprintln!("{viewer}: source bone pixels {l}, target figure pixels {figure}");
        assert!(l > 100 && figure * 200 > half, "{viewer}: bones {l}, figure {figure}");
    }
}
