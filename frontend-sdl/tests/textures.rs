//! Texture extensions and color in both viewers (`sinew demo` on GL, `sinew soft`): a quad whose
//! texture is lossless WebP draws the same pixels as its PNG original; one that offers a WebP
//! image and a magenta fallback draws the WebP image; a `KHR_texture_basisu` texture that is
//! only used draws its fallback, and `sinew info` lists the note. Colors combine in linear
//! light: a texel × factor × vertex color draws like a texture of the expected sRGB color, not
//! like their sRGB product. The models are `offline/tests/data/textures` (`make_textures.py`).

mod common;

use std::path::{Path, PathBuf};

use common::{read_png, sinew, Display, Image};

fn model(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("offline/tests/data/textures").join(name);
    p.to_string_lossy().into_owned()
}

fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("textures_{}_{name}", std::process::id()))
}

const SIZE: [&str; 6] = ["--width", "160", "--height", "120", "--time", "0"];

/// `name` drawn by `viewer` ("soft" or "demo").
fn render(display: Option<&Display>, viewer: &str, name: &str) -> Image {
    let png = tmp(&format!("{viewer}_{name}.png"));
    let (m, p) = (model(name), png.to_string_lossy().into_owned());
    let mut args = vec![viewer, m.as_str(), "--screenshot", p.as_str()];
    args.extend(SIZE);
    if viewer == "soft" {
        args.push("--headless");
    } else {
        args.extend(["--frames", "2", "--no-hud"]);
    }
    let out = sinew(display, &args);
    assert!(out.status.success(), "{viewer} {name} failed");
    let img = read_png(&png);
    let _ = std::fs::remove_file(&png);
    img
}

/// Pixels that differ from the background (the top-left pixel) in `a` or `b`, and how many of
/// them differ between `a` and `b` by more than `tolerance` in a channel.
fn compare(a: &Image, b: &Image, tolerance: u8) -> (usize, usize) {
    assert_eq!((a.width, a.height), (b.width, b.height));
    let bg = [a.rgba[0], a.rgba[1], a.rgba[2]];
    let (mut drawn, mut differ) = (0, 0);
    for (p, q) in a.rgba.chunks_exact(4).zip(b.rgba.chunks_exact(4)) {
        if p[..3] != bg || q[..3] != bg {
            drawn += 1;
            differ += usize::from(p[..3].iter().zip(&q[..3]).any(|(x, y)| x.abs_diff(*y) > tolerance));
        }
    }
    (drawn, differ)
}

/// The mean color of the pixels that are not the background.
fn mean_drawn(img: &Image) -> [f64; 3] {
    let bg = [img.rgba[0], img.rgba[1], img.rgba[2]];
    let px: Vec<&[u8]> = img.rgba.chunks_exact(4).filter(|p| p[..3] != bg).collect();
    let n = px.len().max(1) as f64;
    [0, 1, 2].map(|k| px.iter().map(|p| f64::from(p[k])).sum::<f64>() / n)
}

fn check_viewer(display: Option<&Display>, viewer: &str) {
    let png = render(display, viewer, "quad-png.glb");
    let total = (png.width * png.height) as usize;
    let (drawn, _) = compare(&png, &png, 0);
    assert!(drawn * 10 > total, "{viewer}: the quad covers only {drawn} of {total} pixels");
    for name in ["quad-webp.glb", "quad-both.glb", "quad-basisu-used.glb"] {
        let img = render(display, viewer, name);
        let (drawn, differ) = compare(&png, &img, 0);
        eprintln!("{viewer}: {name} against quad-png.glb: {differ} of {drawn} drawn pixels differ");
        assert_eq!(differ, 0, "{viewer}: {name} does not draw the PNG original's pixels");
        let magenta = img.rgba.chunks_exact(4).filter(|p| p[0] > 150 && p[1] < 60 && p[2] > 150).count();
        assert!(magenta * 100 < drawn, "{viewer}: {name} shows the magenta fallback ({magenta} pixels)");
    }
    // Linear light: mix.glb (texel (200, 120, 40) × factor (1, 0.8, 0.5) × vertex color
    // (0.5, 1, 0.25)) draws like mix-ref.glb (a texel of the expected (146, 108, 9)).
    let (mix, reference) = (render(display, viewer, "mix.glb"), render(display, viewer, "mix-ref.glb"));
    let (drawn, differ) = compare(&mix, &reference, 2);
    let (m, r) = (mean_drawn(&mix), mean_drawn(&reference));
    eprintln!("{viewer}: mix.glb mean {m:.1?}, mix-ref.glb mean {r:.1?}; {differ} of {drawn} pixels off by > 2");
    assert!(drawn * 10 > total && differ * 100 <= drawn, "{viewer}: {differ} of {drawn} pixels differ");
    // The sRGB product (100, 96, 5) would be a third darker in red than the reference.
    assert!((m[0] - r[0]).abs() < 2.0 && (m[1] - r[1]).abs() < 2.0, "{viewer}: {m:?} against {r:?}");
}

#[test]
fn software_viewer_draws_webp_fallbacks_and_linear_light() {
    check_viewer(None, "soft");
}

#[test]
fn gl_viewer_draws_webp_fallbacks_and_linear_light() {
    let display = Display::get();
    check_viewer(Some(&display), "demo");
}

#[test]
fn info_lists_the_basisu_note_and_refuses_it_when_required() {
    let out = sinew(None, &["info", &model("quad-basisu-used.glb")]);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("KHR_texture_basisu"), "no note: {text}");
    let out = sinew(None, &["info", &model("quad-basisu-required.glb")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("KHR_texture_basisu"));
}
