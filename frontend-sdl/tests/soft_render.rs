//! The software path against itself and against GL: band rendering equals full-frame rendering
//! pixel for pixel, and the GL demo and the software rasterizer draw the same silhouettes for the
//! same scene, pose and camera.

mod common;

use sinew::raster::{Depth16, PixelFormat, Rgb565};
use sinew_frontend::scene::{default_camera, Scene};
use sinew_frontend::soft::{render_frame, render_frame_bands, render_into, Overlays, BACKGROUND};

const W: u32 = 320;
const H: u32 = 180;

#[test]
fn bands_equal_the_full_frame_on_the_default_scene() {
    let scene = Scene::new(None).unwrap();
    let camera = default_camera(W as f32 / H as f32);
    for t in [0.0f32, 2.0, 7.5] {
        let frame = scene.frame(t).unwrap();
        let overlays = Overlays { grid: true, bones: true };
        let n = (W * H) as usize;
        let (mut full, mut depth) = (vec![0u16; n], vec![0u16; n]);
        render_into::<Rgb565, Depth16>(&frame, &camera, W, H, overlays, &mut full, &mut depth).unwrap();
        for rows in [1, 7, 16, 64] {
            let (banded, bytes) = render_frame_bands(&frame, &camera, W, H, rows, overlays).unwrap();
            assert_eq!(bytes, (W * rows * 4) as usize);
            let differ = full.iter().zip(&banded).filter(|(a, b)| a != b).count();
            assert_eq!(differ, 0, "t = {t}, bands of {rows} rows: {differ} pixels differ");
        }
        let covered = full.iter().filter(|&&p| p != Rgb565::pack(BACKGROUND)).count();
        assert!(covered > n / 20, "t = {t}: only {covered} pixels drawn");
    }
}

/// Intersection over union of the non-background pixels of two RGB images.
fn iou(a: &[[u8; 3]], b: &[[u8; 3]], bg: [u8; 3]) -> (f64, usize) {
    let near = |p: &[u8; 3]| p.iter().zip(bg.iter()).all(|(x, y)| x.abs_diff(*y) <= 6);
    let (mut inter, mut uni) = (0usize, 0usize);
    for (p, q) in a.iter().zip(b) {
        let (x, y) = (!near(p), !near(q));
        inter += (x && y) as usize;
        uni += (x || y) as usize;
    }
    (if uni == 0 { 1.0 } else { inter as f64 / uni as f64 }, uni)
}

#[test]
fn gl_and_software_silhouettes_agree() {
    let display = common::Display::get();
    std::env::set_var("DISPLAY", &display.name);
    let scene = Scene::new(None).unwrap();
    let camera = default_camera(W as f32 / H as f32);
    let bg = [BACKGROUND.r, BACKGROUND.g, BACKGROUND.b];
    let mut worst = 1.0f64;
    for t in [0.5f32, 2.0, 4.25, 9.0] {
        let gl = sinew_frontend::demo::render_scene_rgba(t, W, H).unwrap();
        let gl: Vec<[u8; 3]> = gl.chunks_exact(4).map(|p| [p[0], p[1], p[2]]).collect();
        let frame = scene.frame(t).unwrap();
        let soft = render_frame(&frame, &camera, W, H, Overlays { grid: false, bones: false }).unwrap();
        let soft: Vec<[u8; 3]> = soft.iter().map(|&p| [(p >> 16) as u8, (p >> 8) as u8, p as u8]).collect();
        let (v, union) = iou(&gl, &soft, bg);
        eprintln!("t = {t}: silhouette IoU {v:.4} over {union} pixels");
        assert!(union > 500, "t = {t}: the scene drew almost nothing");
        worst = worst.min(v);
    }
    assert!(worst >= 0.97, "GL and software silhouettes differ: IoU {worst:.4}");
}

/// The software render of the default scene at t = 2 s (320×180, grid on, bones off) against
/// `tests/golden/scene_t2.png`, with a tolerance (not bit-exact across compilers): at most 1 %
/// of the pixels may differ by more than 24 levels in a channel. `SINEW_REGENERATE_GOLDEN=1`
/// rewrites the image.
#[test]
fn default_scene_matches_its_golden_image() {
    let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/scene_t2.png"));
    let scene = Scene::new(None).unwrap();
    let camera = default_camera(W as f32 / H as f32);
    let frame = scene.frame(2.0).unwrap();
    let px = render_frame(&frame, &camera, W, H, Overlays { grid: true, bones: false }).unwrap();
    if std::env::var_os("SINEW_REGENERATE_GOLDEN").is_some() {
        sinew_frontend::soft::write_png(path, &px, W, H).unwrap();
    }
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height, info.color_type), (W, H, png::ColorType::Rgb));
    let differ = px
        .iter()
        .zip(buf.chunks_exact(3))
        .filter(|(&p, g)| {
            let c = [(p >> 16) as u8, (p >> 8) as u8, p as u8];
            c.iter().zip(g.iter()).any(|(a, b)| a.abs_diff(*b) > 24)
        })
        .count();
    let share = differ as f64 / px.len() as f64;
    eprintln!("golden image: {differ} of {} pixels differ by more than 24 levels ({:.3} %)", px.len(), share * 100.0);
    assert!(share <= 0.01, "the default scene no longer matches its golden image: {differ} pixels differ");
}
