//! Shared by the demo tests: an X display to open windows on, the `sinew` binary run on it,
//! and PNG checks.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};

/// An X display: the one in `DISPLAY`, or a private Xvfb started for the test and stopped
/// when this is dropped.
pub struct Display {
    /// The display name (`:N`).
    pub name: String,
    server: Option<Child>,
}

impl Display {
    /// Uses `DISPLAY` when set; otherwise starts `Xvfb -displayfd 1`, which picks a free
    /// display number and prints it once the server accepts connections.
    pub fn get() -> Display {
        if let Some(d) = std::env::var_os("DISPLAY").filter(|d| !d.is_empty()) {
            return Display { name: d.to_string_lossy().into_owned(), server: None };
        }
        let mut child = Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("no DISPLAY and Xvfb could not be started: install xvfb (apt-get install xvfb)");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        BufReader::new(stdout).read_line(&mut line).expect("Xvfb did not print its display number");
        let n: u32 = line.trim().parse().unwrap_or_else(|_| panic!("Xvfb printed '{line}', not a display number"));
        Display { name: format!(":{n}"), server: Some(child) }
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        if let Some(mut c) = self.server.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A decoded RGBA8 image.
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

/// Runs the `sinew` binary with `args`, on `display` when given, and echoes its standard error.
pub fn sinew(display: Option<&Display>, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sinew"));
    c.args(args);
    if let Some(d) = display {
        c.env("DISPLAY", &d.name);
    }
    let out = c.output().expect("run sinew");
    eprintln!("sinew {}:\n{}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    out
}

/// Reads an RGBA8 PNG (an RGB8 one, as `sinew soft` writes, gets an opaque alpha).
pub fn read_png(path: &std::path::Path) -> Image {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf.truncate(info.buffer_size());
    let rgba = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect(),
        other => panic!("{}: {other:?} PNG", path.display()),
    };
    Image { width: info.width, height: info.height, rgba }
}

/// The share of pixels that differ from the top-left pixel (the clear color), and the
/// number of distinct colors.
pub fn coverage(rgba: &[u8]) -> (f64, usize) {
    let bg = &rgba[..4];
    let px: Vec<&[u8]> = rgba.chunks_exact(4).collect();
    let differ = px.iter().filter(|p| *p != &bg).count();
    let mut colors: Vec<[u8; 4]> = px.iter().map(|p| [p[0], p[1], p[2], p[3]]).collect();
    colors.sort_unstable();
    colors.dedup();
    (differ as f64 / px.len() as f64, colors.len())
}

/// A shared glTF sample model's path, `gltf/MODEL/MODEL.glb`, as a string.
pub fn gltf(model: &str) -> String {
    sinew_assets::path(&format!("gltf/{model}/{model}.glb")).to_str().expect("UTF-8 path").to_string()
}

/// The joint map of RiggedFigure driven by CesiumMan (`tests/data`), as a string.
pub fn map_file() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/riggedfigure-from-cesiumman.map")
        .to_str()
        .expect("UTF-8 path")
        .to_string()
}

/// Pixels of the left and right halves of `img` that `pred(x, y, pixel)` accepts.
pub fn halves(img: &Image, pred: impl Fn(usize, usize, &[u8]) -> bool) -> (usize, usize) {
    let w = img.width as usize;
    let mut n = (0, 0);
    for (i, p) in img.rgba.chunks_exact(4).enumerate() {
        let (x, y) = (i % w, i / w);
        if pred(x, y, p) {
            if x < w / 2 {
                n.0 += 1;
            } else {
                n.1 += 1;
            }
        }
    }
    n
}

/// Pixels, per half, that differ from the clear color (the top-left pixel) in the top 40% of
/// the rows: above the ground grid's far edge, so only the figures' upper bodies.
pub fn figure_pixels(img: &Image) -> (usize, usize) {
    let clear = img.rgba[..4].to_vec();
    let top = img.height as usize * 2 / 5;
    halves(img, |_, y, p| y < top && p != clear.as_slice())
}
