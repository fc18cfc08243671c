//! `sinew demo` headless, as CI runs it: N frames with a GL error check after each, and the
//! last one written as a PNG. Each test runs the binary on `DISPLAY`, or on a private Xvfb
//! when `DISPLAY` is unset.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{coverage, read_png, Display};

fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("demo_cli_{}_{name}", std::process::id()))
}

fn asset(rel: &str) -> PathBuf {
    sinew_assets::path(rel)
}

fn demo(display: &Display, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_sinew"))
        .arg("demo")
        .args(args)
        .env("DISPLAY", &display.name)
        .output()
        .expect("run sinew");
    eprintln!("sinew demo {}:\n{}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Pixels whose color matches `pred`, in the column range `[x0, x1)` (fractions of the width).
fn count(img: &common::Image, x0: f64, x1: f64, pred: impl Fn(u8, u8, u8) -> bool) -> usize {
    let w = img.width as usize;
    img.rgba
        .chunks_exact(4)
        .enumerate()
        .filter(|(i, p)| {
            let x = (i % w) as f64 / w as f64;
            x >= x0 && x < x1 && pred(p[0], p[1], p[2])
        })
        .count()
}

#[test]
fn scene_runs_600_frames_without_gl_errors_and_writes_a_screenshot() {
    let d = Display::get();
    let png = tmp("scene.png");
    let out =
        demo(&d, &["--frames", "600", "--width", "640", "--height", "360", "--screenshot", png.to_str().unwrap()]);
    assert!(out.status.success(), "exit {:?}", out.status);
    let log = stderr(&out);
    assert!(log.contains("GL_RENDERER"), "{log}");
    assert!(log.contains("600 frames"), "{log}");
    let img = read_png(&png);
    assert_eq!((img.width, img.height), (640, 360));
    let (cover, colors) = coverage(&img.rgba);
    assert!(cover > 0.1, "only {cover:.3} of the image differs from the background");
    assert!(colors > 200, "only {colors} colors");
    // The orange tentacle stands on the left, the green DQS candy wrapper on the right, the
    // blue character in between.
    let orange = count(&img, 0.0, 0.4, |r, g, b| r as u32 > g as u32 * 3 / 2 && g > b && r > 60);
    let green = count(&img, 0.6, 1.0, |r, g, b| g as u32 > r as u32 * 3 / 2 && g > b && g > 60);
    let blue = count(&img, 0.3, 0.75, |r, g, b| b as u32 > r as u32 * 3 / 2 && b > g && b > 60);
    assert!(orange > 300 && green > 300 && blue > 200, "orange {orange}, green {green}, blue {blue}");
    let _ = std::fs::remove_file(&png);
}

#[test]
fn desktop_gl_fallback_runs_the_same_shaders() {
    let d = Display::get();
    let png = tmp("desktop.png");
    let out = demo(
        &d,
        &[
            "--gl",
            "desktop",
            "--frames",
            "30",
            "--width",
            "320",
            "--height",
            "240",
            "--screenshot",
            png.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "exit {:?}", out.status);
    assert!(stderr(&out).contains("desktop OpenGL context"));
    let (cover, _) = coverage(&read_png(&png).rgba);
    assert!(cover > 0.05, "{cover}");
    let _ = std::fs::remove_file(&png);
}

#[test]
fn viewer_shows_gltf_and_md5_models() {
    let d = Display::get();
    for (name, args) in [
        ("figure", vec![asset("gltf/RiggedFigure/RiggedFigure.glb")]),
        ("brainstem", vec![asset("gltf/BrainStem/BrainStem.glb")]),
        (
            "bob",
            vec![
                asset("md5/boblamp/boblampclean.md5mesh"),
                PathBuf::from("--anim"),
                asset("md5/boblamp/boblampclean.md5anim"),
            ],
        ),
    ] {
        let png = tmp(&format!("{name}.png"));
        let mut a: Vec<String> = args.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        a.extend(["--frames", "20", "--bones", "--width", "480", "--height", "360", "--screenshot"].map(String::from));
        a.push(png.to_string_lossy().into_owned());
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = demo(&d, &refs);
        assert!(out.status.success(), "{name}: exit {:?}", out.status);
        assert!(stderr(&out).contains("loaded"), "{name}");
        let (cover, colors) = coverage(&read_png(&png).rgba);
        // The model fills a good part of the frame (framed from its bind-pose bounds).
        assert!(cover > 0.08 && colors > 50, "{name}: coverage {cover:.3}, {colors} colors");
        let _ = std::fs::remove_file(&png);
    }
}

#[test]
fn baked_humanoid_views_on_gpu_and_with_a_palette_too_small_for_its_parts() {
    use sinew_offline::bake::{bake, BakeOptions};
    let d = Display::get();
    let (bytes, _) = bake(&sinew_offline::builtin::humanoid_rig(), &BakeOptions::default()).unwrap();
    let file = tmp("humanoid.sinew");
    std::fs::write(&file, bytes).unwrap();
    let f = file.to_str().unwrap();
    // One part of 22 joints: on the GPU by default; with --palette 8 it cannot fit the shaders
    // and is skinned on the CPU instead.
    for (name, extra) in [("gpu", vec![]), ("cpu", vec!["--palette", "8"])] {
        let png = tmp(&format!("humanoid_{name}.png"));
        let mut a =
            vec![f, "--frames", "45", "--width", "320", "--height", "320", "--screenshot", png.to_str().unwrap()];
        a.extend(extra.iter());
        let out = demo(&d, &a);
        assert!(out.status.success(), "{name}: exit {:?}", out.status);
        let log = stderr(&out);
        assert_eq!(log.contains("skinned on the CPU"), name == "cpu", "{log}");
        let (cover, _) = coverage(&read_png(&png).rgba);
        assert!(cover > 0.05, "{name}: {cover}");
        let _ = std::fs::remove_file(&png);
    }
    let _ = std::fs::remove_file(&file);
}

#[test]
fn bad_input_fails_headless_with_a_message() {
    let d = Display::get();
    let junk = tmp("junk.glb");
    std::fs::write(&junk, b"glTF\x02\0\0\0 definitely not a model").unwrap();
    let out = demo(&d, &[junk.to_str().unwrap(), "--frames", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot load"), "{}", stderr(&out));
    let out = demo(&d, &["--frames", "1", "--palette", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--palette"));
    let _ = std::fs::remove_file(&junk);
}

/// `--clip` picks the viewer's first clip as `sinew soft --clip` does: an unknown one fails
/// headless with one line naming the model (the same line as `sinew soft`'s).
#[test]
fn an_unknown_clip_fails_headless_naming_the_model() {
    let d = Display::get();
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/fixtures/character.sinew");
    let model = model.to_str().unwrap();
    let out = demo(&d, &[model, "--clip", "run", "--frames", "1", "--width", "64", "--height", "36"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = demo(&d, &[model, "--clip", "jump", "--frames", "1", "--width", "64", "--height", "36"]);
    assert_eq!(out.status.code(), Some(2));
    let want = format!("sinew: {model}: no clip named or numbered 'jump'");
    assert_eq!(stderr(&out).lines().last(), Some(want.as_str()), "{}", stderr(&out));
    let soft = Command::new(env!("CARGO_BIN_EXE_sinew"))
        .args(["soft", model, "--clip", "jump", "--headless"])
        .output()
        .expect("run sinew");
    assert_eq!(String::from_utf8_lossy(&soft.stderr).trim_end(), want);
}

/// CesiumMan and Fox drawn by GL (`sinew demo`) and by the software rasterizer (`sinew soft`)
/// at the same time and size: the same silhouette, the same texture colors, and the textures'
/// own colors on screen (CesiumMan's blue and green logo stripes, the fox's orange fur), which an
/// untextured white model would not show.
#[test]
fn textured_models_look_the_same_in_gl_and_software() {
    let d = Display::get();
    let blue = |r: u8, g: u8, b: u8| b as i32 > r as i32 + 40 && b >= g;
    let green = |r: u8, g: u8, b: u8| g as i32 > b as i32 + 40 && g as i32 > r as i32 + 10;
    let orange = |r: u8, g: u8, b: u8| r as i32 > g as i32 + 40 && g as i32 > b as i32 + 20;
    type Pred = fn(u8, u8, u8) -> bool;
    let cases: [(&str, &str, Vec<Pred>); 2] =
        [("CesiumMan", "gltf/CesiumMan/CesiumMan.glb", vec![blue, green]), ("Fox", "gltf/Fox/Fox.glb", vec![orange])];
    for (name, rel, colors) in cases {
        let model = asset(rel);
        let model = model.to_str().unwrap();
        let (gl_png, soft_png) = (tmp(&format!("{name}-gl.png")), tmp(&format!("{name}-soft.png")));
        let size = ["--width", "320", "--height", "240", "--time", "1"];
        let mut a = vec![model, "--frames", "2", "--no-hud", "--screenshot", gl_png.to_str().unwrap()];
        a.extend(size);
        assert!(demo(&d, &a).status.success(), "{name}: demo failed");
        let out = Command::new(env!("CARGO_BIN_EXE_sinew"))
            .args(["soft", model, "--headless", "--screenshot", soft_png.to_str().unwrap()])
            .args(size)
            .output()
            .expect("run sinew soft");
        assert!(out.status.success(), "{name}: soft failed: {}", stderr(&out));
        let (gl, soft) = (read_png(&gl_png), read_png(&soft_png));
        let _ = (std::fs::remove_file(&gl_png), std::fs::remove_file(&soft_png));
        assert_eq!((gl.width, gl.height), (soft.width, soft.height));
        for pred in &colors {
            let (g, s) = (count(&gl, 0.0, 1.0, pred), count(&soft, 0.0, 1.0, pred));
            eprintln!("{name}: a texture color covers {g} GL and {s} software pixels");
            assert!(g > 40 && s > 40, "{name}: the texture's colors cover {g} GL and {s} software pixels");
            assert!(g.abs_diff(s) * 4 < g.max(s), "{name}: {g} GL pixels of a texture color, {s} in software");
        }
        // Pixels both draw the model on (not the background or the grid): close colors.
        let bg = [gl.rgba[0], gl.rgba[1], gl.rgba[2]];
        let off_bg = |p: &[u8]| p[..3].iter().zip(bg).any(|(a, b)| a.abs_diff(b) > 30);
        let (mut both, mut close) = (0usize, 0usize);
        for (p, q) in gl.rgba.chunks_exact(4).zip(soft.rgba.chunks_exact(4)) {
            if off_bg(p) && off_bg(q) {
                both += 1;
                close += usize::from(p[..3].iter().zip(&q[..3]).all(|(a, b)| a.abs_diff(*b) <= 40));
            }
        }
        eprintln!("{name}: {close} of {both} pixels drawn by both are within 40 levels");
        assert!(both > 2000, "{name}: {both} pixels drawn by both");
        assert!(close * 100 >= both * 95, "{name}: only {close} of {both} pixels have close colors");
    }
}

/// RiggedFigure Draco-compressed (`offline/tests/data/RiggedFigure-draco.glb`, gltf-pipeline's
/// 11-bit positions) draws like its original in both viewers: at the same time and size, the
/// pixels off the background of `sinew demo` (GL) and of `sinew soft` cover the same place.
#[test]
fn draco_model_draws_like_its_original_in_both_viewers() {
    let d = Display::get();
    let draco = Path::new(env!("CARGO_MANIFEST_DIR")).join("offline/tests/data/RiggedFigure-draco.glb");
    let original = asset("gltf/RiggedFigure/RiggedFigure.glb");
    let size = ["--width", "320", "--height", "240", "--time", "0.6"];
    for viewer in ["demo", "soft"] {
        let mut frames = Vec::new();
        for (name, model) in [("original", &original), ("draco", &draco)] {
            let png = tmp(&format!("figure-{name}-{viewer}.png"));
            let (model, out_png) = (model.to_str().unwrap(), png.to_str().unwrap());
            let out = if viewer == "demo" {
                let mut a = vec![model, "--frames", "2", "--no-hud", "--screenshot", out_png];
                a.extend(size);
                demo(&d, &a)
            } else {
                Command::new(env!("CARGO_BIN_EXE_sinew"))
                    .args(["soft", model, "--headless", "--screenshot", out_png])
                    .args(size)
                    .output()
                    .expect("run sinew soft")
            };
            assert!(out.status.success(), "{viewer} {name}: {}", stderr(&out));
            frames.push(rgb_pixels(&png));
            let _ = std::fs::remove_file(&png);
        }
        let bg = frames[0][0];
        let off = |p: &[u8; 3]| p.iter().zip(bg).any(|(a, b)| a.abs_diff(b) > 30);
        let (mut inter, mut union) = (0usize, 0usize);
        for (p, q) in frames[0].iter().zip(&frames[1]) {
            inter += usize::from(off(p) && off(q));
            union += usize::from(off(p) || off(q));
        }
        let iou = inter as f64 / union.max(1) as f64;
        eprintln!("{viewer}: Draco and original silhouettes IoU {iou:.4} over {union} pixels");
        assert!(union > 2000, "{viewer}: {union} pixels drawn");
        assert!(iou >= 0.95, "{viewer}: IoU {iou:.4}");
    }
}

/// The RGB pixels of a PNG (RGB or RGBA, 8 bits).
fn rgb_pixels(path: &Path) -> Vec<[u8; 3]> {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).expect("open PNG")));
    let mut reader = decoder.read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("PNG size")];
    let info = reader.next_frame(&mut buf).expect("PNG data");
    let channels = info.color_type.samples();
    buf[..info.buffer_size()].chunks_exact(channels).map(|p| [p[0], p[1], p[2]]).collect()
}

/// AnimatedMorphCube's morph weights move its vertices in both viewers: the frames at 0.3 s
/// and 1.2 s (the cube squeezed by its first target) differ in many pixels, in the GL viewer
/// (CPU `MorphJob`, shader skinning) and in the software rasterizer.
#[test]
fn morph_cube_animates_in_gl_and_soft() {
    let d = Display::get();
    let cube = asset("gltf/AnimatedMorphCube/AnimatedMorphCube.glb");
    let cube = cube.to_string_lossy().into_owned();
    let size = ["--width", "480", "--height", "360"];
    for viewer in ["demo", "soft"] {
        let mut frames = Vec::new();
        for t in ["0.3", "1.2"] {
            let png = tmp(&format!("cube_{viewer}_{t}.png"));
            let png_s = png.to_string_lossy().into_owned();
            let mut args = vec![cube.as_str(), "--time", t, "--screenshot", png_s.as_str()];
            args.extend(size);
            let out = if viewer == "demo" {
                args.extend(["--frames", "2"]);
                demo(&d, &args)
            } else {
                args.push("--headless");
                Command::new(env!("CARGO_BIN_EXE_sinew")).arg("soft").args(&args).output().expect("run sinew")
            };
            assert!(out.status.success(), "{viewer} at {t}: {}", stderr(&out));
            frames.push(rgb_pixels(&png));
            let _ = std::fs::remove_file(&png);
        }
        let changed = frames[0].iter().zip(&frames[1]).filter(|(a, b)| a != b).count();
        let share = changed as f64 / frames[0].len() as f64;
        eprintln!("AnimatedMorphCube in {viewer}: {:.1} % of the pixels change from 0.3 s to 1.2 s", 100.0 * share);
        assert!(share > 0.03, "{viewer}: the cube does not change ({share})");
    }
}
