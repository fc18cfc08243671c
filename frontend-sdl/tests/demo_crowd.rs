//! The demo's crowd in-process, on Mesa (or whatever `DISPLAY` offers): 16 instances of the
//! Fox drawn instanced (the palette read from the float texture in the vertex shader, one
//! draw call per mesh part) and drawn one by one with the uniform-palette LBS program (each
//! part's rows copied from the crowd's palette on the CPU) give the same silhouettes.
//!
//! SDL may only be initialized from one thread per process, so every check runs in the one
//! test function below.

mod common;

use sinew_frontend::demo::{CrowdOptions, GlRequest, Headless, Layers};

/// Pixels that differ from `background` by more than 8 levels in a channel.
fn covered(rgba: &[u8], background: [u8; 3]) -> Vec<bool> {
    rgba.chunks_exact(4).map(|p| (0..3).any(|k| p[k].abs_diff(background[k]) > 8)).collect()
}

/// The most frequent color: the clear color where the figures cover less than half the frame.
fn background(rgba: &[u8]) -> [u8; 3] {
    let mut colors: Vec<[u8; 3]> = rgba.chunks_exact(4).map(|p| [p[0], p[1], p[2]]).collect();
    colors.sort_unstable();
    let mut best = ([0; 3], 0);
    let mut i = 0;
    while i < colors.len() {
        let run = colors[i..].iter().take_while(|c| **c == colors[i]).count();
        if run > best.1 {
            best = (colors[i], run);
        }
        i += run;
    }
    best.0
}

/// Intersection over union of two masks (1 for two empty masks).
fn iou(a: &[bool], b: &[bool]) -> f64 {
    let both = a.iter().zip(b).filter(|(x, y)| **x && **y).count();
    let either = a.iter().zip(b).filter(|(x, y)| **x || **y).count();
    if either == 0 {
        1.0
    } else {
        both as f64 / either as f64
    }
}

#[test]
fn sixteen_instances_drawn_instanced_match_them_drawn_one_by_one() {
    let display = common::Display::get();
    // Only this thread uses SDL; it reads DISPLAY when it initializes.
    std::env::set_var("DISPLAY", &display.name);
    let fox = sinew_assets::path("gltf/Fox/Fox.glb");
    let mut h = Headless::new(320, 240, None, GlRequest::Auto).unwrap();
    h.load(&fox).unwrap();
    let parts = h.viewer_gpu().unwrap().modes().iter().flatten().count();
    let mut render = |instancing: bool| {
        h.start_crowd(CrowdOptions { count: 16, lod: true, instancing }).unwrap();
        // A few frames, so that levels of detail hold some instances and share others.
        let mut last = None;
        for _ in 0..4 {
            last = Some(h.render_crowd(0.125, Layers::MESHES).unwrap());
        }
        let line = h.crowd_line().unwrap();
        eprintln!("instancing {instancing}: {line}");
        (last.unwrap(), line)
    };
    let ((instanced, draws), line) = render(true);
    let ((one_by_one, draws_one), line_one) = render(false);
    // One draw call per part for the whole crowd, one per part and instance without.
    assert_eq!(draws, parts, "{line}");
    assert!(line.contains(&format!("draws {parts} ")), "{line}");
    assert_eq!(draws_one, 16 * parts, "{line_one}");
    // The crowd frames evaluate the same poses either way.
    let counts = |l: &str| l.split("draws").next().unwrap_or("").to_string();
    assert_eq!(counts(&line), counts(&line_one));
    let bg = background(&instanced);
    assert_eq!(bg, background(&one_by_one));
    let (a, b) = (covered(&instanced, bg), covered(&one_by_one, bg));
    let share = a.iter().filter(|c| **c).count() as f64 / a.len() as f64;
    assert!(share > 0.02, "the crowd covers {:.1}% of the frame", share * 100.0);
    let v = iou(&a, &b);
    eprintln!("silhouette IoU instanced / one by one: {v:.5}, crowd covers {:.1}%", share * 100.0);
    assert!(v >= 0.99, "IoU {v}");
}
