//! `sinew demo MODEL --crowd N` headless, as CI runs it: the crowd line it reports (one draw
//! call per mesh part when instanced, every instance evaluated with `--no-lod`), and a
//! screenshot with many separate figures over the frame. Each test runs the binary on
//! `DISPLAY`, or on a private Xvfb when `DISPLAY` is unset.

mod common;

use std::path::{Path, PathBuf};

use common::{gltf, read_png, sinew, Display};

fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("demo_crowd_cli_{}_{name}", std::process::id()))
}

/// The number after `key` in the crowd line of `log` (`crowd N  evaluated E ... draws D`).
fn figure(log: &str, key: &str) -> usize {
    let line = log.lines().find(|l| l.starts_with("sinew demo: crowd ") && l.contains(" draws ")).expect("crowd line");
    let after = line.split(&format!("{key} ")).nth(1).unwrap_or_else(|| panic!("no '{key}' in {line}"));
    after.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("'{key}' in {line}"))
}

/// Mesh parts the crowd line says it draws (`... cpu X ms (P mesh parts, ...)`).
fn parts(log: &str) -> usize {
    let line = log.lines().find(|l| l.starts_with("sinew demo: crowd ") && l.contains(" draws ")).expect("crowd line");
    let before = line.split(" mesh parts, ").next().unwrap_or("");
    before.rsplit('(').next().and_then(|n| n.trim().parse().ok()).unwrap_or_else(|| panic!("parts in {line}"))
}

#[test]
fn instanced_crowd_draws_once_per_part_and_no_lod_evaluates_everyone() {
    let d = Display::get();
    let fox = gltf("Fox");
    let out = sinew(Some(&d), &["demo", &fox, "--crowd", "16", "--frames", "3", "--width", "320", "--height", "240"]);
    assert!(out.status.success(), "exit {:?}", out.status);
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(log.contains("instanced ("), "{log}");
    let p = parts(&log);
    assert!(p >= 1);
    assert_eq!(figure(&log, "draws"), p, "{log}");
    assert_eq!(figure(&log, "crowd"), 16);
    let (e, s, h) = (figure(&log, "evaluated"), figure(&log, "shared"), figure(&log, "held"));
    assert_eq!(e + s + h, 16, "{log}");

    let out = sinew(
        Some(&d),
        &[
            "demo",
            &fox,
            "--crowd",
            "16",
            "--no-lod",
            "--no-instancing",
            "--frames",
            "3",
            "--width",
            "320",
            "--height",
            "240",
        ],
    );
    assert!(out.status.success(), "exit {:?}", out.status);
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(log.contains("instance by instance with uniforms (--no-instancing)"), "{log}");
    assert_eq!(figure(&log, "draws"), 16 * parts(&log), "{log}");
    assert_eq!((figure(&log, "evaluated"), figure(&log, "shared"), figure(&log, "held")), (16, 0, 0), "{log}");
}

/// Groups of 4-connected pixels that `mask` holds, with at least `min` pixels: their count
/// and their centers' horizontal spread (fraction of the width).
fn blobs(mask: &[bool], w: usize, min: usize) -> (usize, f64) {
    let mut seen = vec![false; mask.len()];
    let (mut n, mut lo, mut hi) = (0, f64::MAX, 0.0f64);
    for start in 0..mask.len() {
        if !mask[start] || seen[start] {
            continue;
        }
        let (mut stack, mut size, mut sx) = (vec![start], 0, 0usize);
        seen[start] = true;
        while let Some(i) = stack.pop() {
            size += 1;
            sx += i % w;
            let (x, y) = (i % w, i / w);
            let mut push = |j: usize| {
                if mask[j] && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            };
            if x > 0 {
                push(i - 1);
            }
            if x + 1 < w {
                push(i + 1);
            }
            if y > 0 {
                push(i - w);
            }
            if i + w < mask.len() {
                push(i + w);
            }
        }
        if size >= min {
            n += 1;
            let cx = sx as f64 / size as f64 / w as f64;
            lo = lo.min(cx);
            hi = hi.max(cx);
        }
    }
    (n, if n > 0 { hi - lo } else { 0.0 })
}

#[test]
fn crowd_screenshot_shows_many_separate_figures() {
    let d = Display::get();
    let png = tmp("crowd.png");
    let fox = gltf("Fox");
    let out = sinew(
        Some(&d),
        &[
            "demo",
            &fox,
            "--crowd",
            "100",
            "--frames",
            "2",
            "--no-hud",
            "--width",
            "640",
            "--height",
            "360",
            "--screenshot",
            png.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "exit {:?}", out.status);
    let img = read_png(&png);
    // The Fox's fur: orange (red well above green, green above blue), unlike the grid and
    // the clear color, both grey-blue.
    let fur: Vec<bool> = img
        .rgba
        .chunks_exact(4)
        .map(|p| {
            let (r, g, b) = (i32::from(p[0]), i32::from(p[1]), i32::from(p[2]));
            r > 90 && r > g + 25 && g > b
        })
        .collect();
    let (n, spread) = blobs(&fur, img.width as usize, 3);
    eprintln!("{n} figures, spread over {:.0}% of the width", spread * 100.0);
    assert!(n >= 40, "{n} separate figures of 100");
    assert!(spread > 0.4, "the figures span {:.0}% of the width", spread * 100.0);
}

/// An OpenGL ES 2.0 context (Mesa's, capped with `MESA_GLES_VERSION_OVERRIDE`): instanced where
/// it has `GL_EXT_instanced_arrays` or `GL_ANGLE_instanced_arrays`, else instance by instance,
/// said once. Another driver that ignores the override gives a context this does not test.
#[test]
fn an_es2_context_draws_instanced_with_its_extension_or_falls_back_and_says_so_once() {
    let d = Display::get();
    let fox = gltf("Fox");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sinew"))
        .args(["demo", &fox, "--gl", "es", "--crowd", "16", "--frames", "2", "--width", "320", "--height", "240"])
        .env("DISPLAY", &d.name)
        .env("MESA_GLES_VERSION_OVERRIDE", "2.0")
        .output()
        .expect("run sinew");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("{log}");
    assert!(out.status.success(), "exit {:?}", out.status);
    if !log.contains("OpenGL ES 2.0") {
        eprintln!("skipped: the driver gave no OpenGL ES 2.0 context");
        return;
    }
    let p = parts(&log);
    if log.contains("instanced (GL_EXT_instanced_arrays") || log.contains("instanced (GL_ANGLE_instanced_arrays") {
        assert_eq!(figure(&log, "draws"), p, "{log}");
    } else {
        let said = log.lines().filter(|l| l.contains("crowd of 16") && l.contains("instance by instance")).count();
        assert_eq!(said, 1, "{log}");
        assert!(log.contains("no instancing") || log.contains("no float textures"), "{log}");
        assert_eq!(figure(&log, "draws"), 16 * p, "{log}");
    }
}
