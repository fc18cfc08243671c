//! Raster tests: a counting mock target, ASCII patterns, and comparisons against brute-force
//! references.

extern crate std;

use std::string::String;
use std::vec;
use std::vec::Vec;

use super::clip::Viewport;
use super::color::{shade_table, ShadeTable};
use super::target::{depth_of, shade_index, Sink, Span};
use super::{CachedVertex, Draw, PixelFormat, Renderer, Rgb, Xrgb8888};
use crate::math::Vec3;
use crate::real::Real;

#[cfg(feature = "embedded-graphics")]
mod display;
mod pipeline;
#[cfg(feature = "texture")]
mod texture;
mod triangles;

/// A target that records how often each pixel is written, with `Xrgb8888` color and 24-bit
/// depth (`Depth32` semantics). It panics when a span reaches outside the rows it holds or the
/// frame's columns: the raster stage must clip before emitting.
pub(super) struct Mock {
    pub w: i32,
    pub h: i32,
    pub y0: i32,
    pub y1: i32,
    pub counts: Vec<u32>,
    pub color: Vec<u32>,
    pub depth: Option<Vec<u32>>,
}

impl Mock {
    pub fn new(w: i32, h: i32, depth: bool) -> Self {
        Self::band(w, h, 0, h, depth)
    }

    /// Holds rows `y0..y1` of a `w × h` frame.
    pub fn band(w: i32, h: i32, y0: i32, y1: i32, depth: bool) -> Self {
        let n = (w * (y1 - y0)) as usize;
        Mock { w, h, y0, y1, counts: vec![0; n], color: vec![0; n], depth: depth.then(|| vec![u32::MAX; n]) }
    }

    fn index(&self, x: i32, y: i32) -> usize {
        assert!(
            (0..self.w).contains(&x) && (self.y0..self.y1).contains(&y),
            "pixel ({x}, {y}) outside {}x{} rows {}..{}",
            self.w,
            self.h,
            self.y0,
            self.y1
        );
        ((y - self.y0) * self.w + x) as usize
    }

    pub fn count(&self, x: i32, y: i32) -> u32 {
        self.counts[self.index(x, y)]
    }

    /// Rows of `.` (not written), `#` (written once) and digits (written that many times).
    pub fn pattern(&self) -> Vec<String> {
        self.counts
            .chunks(self.w as usize)
            .map(|row| {
                row.iter()
                    .map(|&c| match c {
                        0 => '.',
                        1 => '#',
                        n => char::from_digit(n.min(9), 10).unwrap_or('*'),
                    })
                    .collect()
            })
            .collect()
    }

    /// Rows of characters chosen from the stored colors (unwritten pixels are `.`).
    pub fn color_pattern(&self, f: impl Fn(Rgb) -> char) -> Vec<String> {
        self.color
            .chunks(self.w as usize)
            .zip(self.counts.chunks(self.w as usize))
            .map(|(row, counts)| {
                row.iter().zip(counts).map(|(&c, &n)| if n == 0 { '.' } else { f(Xrgb8888::unpack(c)) }).collect()
            })
            .collect()
    }

    #[track_caller]
    pub fn assert_pattern(&self, expected: &[&str]) {
        assert_patterns_eq(&self.pattern(), expected);
    }

    fn write(&mut self, x: i32, y: i32, z: i64, depth_test: bool, color: u32) {
        let i = self.index(x, y);
        if depth_test {
            if let Some(d) = self.depth.as_mut() {
                let zv = depth_of(z);
                if zv >= d[i] {
                    return;
                }
                d[i] = zv;
            }
        }
        self.color[i] = color;
        self.counts[i] += 1;
    }
}

#[track_caller]
pub(super) fn assert_patterns_eq(got: &[String], expected: &[&str]) {
    let ok = got.len() == expected.len() && got.iter().zip(expected).all(|(g, e)| g == e);
    if !ok {
        let mut msg = String::from("pattern mismatch\n  got:            expected:\n");
        for i in 0..got.len().max(expected.len()) {
            let g = got.get(i).map_or("", |s| s.as_str());
            let e = expected.get(i).copied().unwrap_or("");
            msg += &std::format!("  {g:16} {e}\n");
        }
        panic!("{msg}");
    }
}

impl Sink for Mock {
    type Raw = u32;
    fn frame_size(&self) -> (i32, i32) {
        (self.w, self.h)
    }
    fn rows(&self) -> (i32, i32) {
        (self.y0, self.y1)
    }
    fn pack(c: Rgb) -> u32 {
        Xrgb8888::pack(c)
    }
    fn shade_table(c: Rgb) -> ShadeTable<u32> {
        shade_table::<Xrgb8888>(c)
    }
    fn span_shaded(&mut self, span: &Span, table: &ShadeTable<u32>) {
        assert!(span.x0 < span.x1, "empty span {span:?}");
        let (mut z, mut s) = (span.z, span.s);
        for x in span.x0..span.x1 {
            self.write(x, span.y, z, true, table[shade_index(s)]);
            z = z.wrapping_add(span.dz);
            s = s.wrapping_add(span.ds);
        }
    }
    #[cfg(feature = "texture")]
    fn span_textured(&mut self, span: &Span, tex: &super::textured::TexSpan<'_>) {
        assert!(span.x0 < span.x1, "empty span {span:?}");
        let (mut z, mut t) = (span.z, *tex);
        for x in span.x0..span.x1 {
            self.write(x, span.y, z, true, Xrgb8888::pack(t.color()));
            z = z.wrapping_add(span.dz);
            t.step();
        }
    }
    fn span_solid(&mut self, span: &Span, color: u32, depth_test: bool) {
        assert!(span.x0 < span.x1, "empty span {span:?}");
        let mut z = span.z;
        for x in span.x0..span.x1 {
            self.write(x, span.y, z, depth_test, color);
            z = z.wrapping_add(span.dz);
        }
    }
}

/// Runs the renderer's vertex, primitive and raster stages into any sink.
pub(super) fn run<R: Real, S: Sink>(sink: &mut S, renderer: &Renderer<R>, scene: &[Draw<'_, R>]) {
    let mut scratch = vec![CachedVertex::default(); Renderer::scratch_len(scene)];
    renderer.validate(scene, scratch.len()).unwrap();
    let (w, h) = sink.frame_size();
    let vp = Viewport::new(w as u32, h as u32);
    renderer.project(scene, &vp, &mut scratch);
    renderer.draw_scene(sink, scene, &vp, &scratch);
}

/// The model-space point that an identity camera maps to pixel position `(px, py)` (in pixels,
/// not centers) of a `w × h` frame, at NDC depth `z`.
pub(super) fn at_px<R: Real>(w: i32, h: i32, px: f32, py: f32, z: f32) -> Vec3<R> {
    Vec3::new(R::from_f32(px / w as f32 * 2.0 - 1.0), R::from_f32(1.0 - py / h as f32 * 2.0), R::from_f32(z))
}

/// A small deterministic generator (xorshift32).
pub(super) struct Rng(pub u32);

impl Rng {
    pub fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }
    /// Uniform in `lo..hi`.
    pub fn range(&mut self, lo: i32, hi: i32) -> i32 {
        lo + (self.next() % (hi - lo) as u32) as i32
    }
    /// Uniform in `[lo, hi)`.
    pub fn f(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * (self.next() >> 8) as f32 / (1u32 << 24) as f32
    }
}
