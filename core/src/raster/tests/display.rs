//! The embedded-graphics adapter: bands and frames reach a `MockDisplay` pixel for pixel as the
//! renderer drew them, in the display's own color type; a display error stops the sending.

extern crate std;

use std::vec;

use embedded_graphics::mock_display::MockDisplay;
use embedded_graphics::pixelcolor::{Rgb565 as EgRgb565, Rgb888};
use embedded_graphics::prelude::*;

use super::super::display::{draw_band, draw_frame, render_to_display, DisplayError, EgColor};
use super::super::{BandBuffer, CachedVertex, Depth16, Draw, Indices, Mesh, PixelFormat, Renderer, Rgb, Rgb565};
use super::super::{Target, Xrgb8888};
use crate::math::{Mat4, Vec3};

const W: u32 = 40;
const H: u32 = 30;

/// Two overlapping triangles of different colors and depths, filling part of a `W × H` frame.
fn scene<'a>(positions: &'a [Vec3<f32>], indices: &'a [u16]) -> [Draw<'a, f32>; 2] {
    let near = Mesh::new(&positions[..3], None, Indices::U16(&indices[..3]), Rgb::new(250, 120, 30));
    let far = Mesh::new(&positions[3..], None, Indices::U16(&indices[..3]), Rgb::new(40, 90, 220));
    [Draw::Mesh(near), Draw::Mesh(far)]
}

fn geometry() -> ([Vec3<f32>; 6], [u16; 3]) {
    let v = Vec3::new;
    (
        [
            v(-0.9, -0.8, 0.2),
            v(0.7, -0.6, 0.2),
            v(-0.2, 0.9, 0.2),
            v(-0.6, 0.5, -0.3),
            v(0.2, -0.9, -0.3),
            v(0.9, 0.8, -0.3),
        ],
        [0, 1, 2],
    )
}

/// The frame drawn in one target, as `C` raw pixels.
fn reference<C: PixelFormat>() -> vec::Vec<C::Raw> {
    let (p, i) = geometry();
    let mut color = vec![C::Raw::default(); (W * H) as usize];
    let mut depth = vec![0u16; (W * H) as usize];
    let mut target = Target::<C, Depth16>::new(&mut color, Some(&mut depth), W, H, W as usize).unwrap();
    target.clear(Rgb::new(8, 8, 8));
    let mut scratch = [CachedVertex::default(); 6];
    Renderer::new(Mat4::IDENTITY).render(&mut target, &scene(&p, &i), &mut scratch).unwrap();
    color
}

fn assert_shows<C: EgColor, D>(display: &MockDisplay<D>, frame: &[C::Raw])
where
    D: PixelColor + From<C::Color> + core::fmt::Debug,
{
    for y in 0..H {
        for x in 0..W {
            let want = D::from(C::to_eg(frame[(y * W + x) as usize]));
            assert_eq!(display.get_pixel(Point::new(x as i32, y as i32)), Some(want), "pixel ({x}, {y})");
        }
    }
}

#[test]
fn rgb565_is_the_same_bits() {
    for raw in [0u16, 0xffff, 0xf800, 0x07e0, 0x001f, 0x1234] {
        assert_eq!(Rgb565::to_eg(raw).into_storage(), raw);
    }
    let c = Xrgb8888::to_eg(0x00c0_8040);
    assert_eq!((c.r(), c.g(), c.b()), (0xc0, 0x80, 0x40));
}

#[test]
fn bands_reach_the_display_as_drawn() {
    let (p, i) = geometry();
    let frame = reference::<Rgb565>();
    for rows in [1, 7, H] {
        let mut color = vec![0u16; (W * rows) as usize];
        let mut depth = vec![0u16; (W * rows) as usize];
        let mut bands = BandBuffer::<Rgb565, Depth16>::new(&mut color, Some(&mut depth), W, H, rows).unwrap();
        let mut display = MockDisplay::<EgRgb565>::new();
        let mut scratch = [CachedVertex::default(); 6];
        render_to_display(
            &Renderer::new(Mat4::IDENTITY),
            &mut bands,
            &scene(&p, &i),
            &mut scratch,
            Rgb::new(8, 8, 8),
            &mut display,
        )
        .unwrap();
        assert_shows::<Rgb565, EgRgb565>(&display, &frame);
    }
}

#[test]
fn a_display_of_another_color_type_gets_converted_colors() {
    let (p, i) = geometry();
    let mut color = vec![0u32; (W * 4) as usize];
    let mut bands = BandBuffer::<Xrgb8888, Depth16>::new(&mut color, None, W, H, 4).unwrap();
    // Bands without depth: the reference is drawn without depth too (painter's order).
    let mut display = MockDisplay::<Rgb888>::new();
    let mut scratch = [CachedVertex::default(); 6];
    let mut full = vec![0u32; (W * H) as usize];
    let mut target = Target::<Xrgb8888, Depth16>::new(&mut full, None, W, H, W as usize).unwrap();
    target.clear(Rgb::new(8, 8, 8));
    Renderer::new(Mat4::IDENTITY).render(&mut target, &scene(&p, &i), &mut scratch).unwrap();
    render_to_display(
        &Renderer::new(Mat4::IDENTITY),
        &mut bands,
        &scene(&p, &i),
        &mut scratch,
        Rgb::new(8, 8, 8),
        &mut display,
    )
    .unwrap();
    assert_shows::<Xrgb8888, Rgb888>(&display, &full);
    // RGB565 pixels on an RGB888 display: embedded-graphics widens the channels.
    let frame565 = reference::<Rgb565>();
    let mut display = MockDisplay::<Rgb888>::new();
    draw_band::<Rgb565, _>(&mut display, W, 0, &frame565).unwrap();
    assert_shows::<Rgb565, Rgb888>(&display, &frame565);
}

#[test]
fn frames_with_a_stride_are_sent_row_by_row() {
    let frame = reference::<Rgb565>();
    // The same frame in a buffer 5 pixels wider than the image.
    let stride = (W + 5) as usize;
    let mut wide = vec![0xdead_u16; stride * H as usize];
    for y in 0..H as usize {
        wide[y * stride..y * stride + W as usize].copy_from_slice(&frame[y * W as usize..(y + 1) * W as usize]);
    }
    let target = Target::<Rgb565, Depth16>::new(&mut wide, None, W, H, stride).unwrap();
    let mut display = MockDisplay::<EgRgb565>::new();
    draw_frame(&mut display, &target).unwrap();
    assert_shows::<Rgb565, EgRgb565>(&display, &frame);
    // Nothing outside the image was sent.
    assert_eq!(display.get_pixel(Point::new(W as i32, 0)), None);
}

/// A display that accepts `left` fills, then fails.
struct Failing {
    left: usize,
    fills: usize,
}

impl OriginDimensions for Failing {
    fn size(&self) -> Size {
        Size::new(W, H)
    }
}

impl DrawTarget for Failing {
    type Color = EgRgb565;
    type Error = u8;
    fn draw_iter<I: IntoIterator<Item = Pixel<EgRgb565>>>(&mut self, _: I) -> Result<(), u8> {
        Ok(())
    }
    fn fill_contiguous<I: IntoIterator<Item = EgRgb565>>(
        &mut self,
        _: &embedded_graphics::primitives::Rectangle,
        _: I,
    ) -> Result<(), u8> {
        self.fills += 1;
        if self.left == 0 {
            return Err(7);
        }
        self.left -= 1;
        Ok(())
    }
}

#[test]
fn a_display_error_stops_the_sending() {
    let (p, i) = geometry();
    let mut color = vec![0u16; (W * 5) as usize];
    let mut bands = BandBuffer::<Rgb565, Depth16>::new(&mut color, None, W, H, 5).unwrap();
    let mut display = Failing { left: 2, fills: 0 };
    let mut scratch = [CachedVertex::default(); 6];
    let r = render_to_display(
        &Renderer::new(Mat4::IDENTITY),
        &mut bands,
        &scene(&p, &i),
        &mut scratch,
        Rgb::BLACK,
        &mut display,
    );
    assert_eq!(r, Err(DisplayError::Display(7)));
    assert_eq!(display.fills, 3, "two bands sent, the third refused, none after");
    // A scene the renderer refuses: nothing reaches the display.
    let mut display = Failing { left: 10, fills: 0 };
    let bad = [0u16, 1, 9];
    let mesh = Mesh::new(&p[..3], None, Indices::U16(&bad), Rgb::WHITE);
    let r = render_to_display(
        &Renderer::new(Mat4::IDENTITY),
        &mut bands,
        &[Draw::Mesh(mesh)],
        &mut scratch,
        Rgb::BLACK,
        &mut display,
    );
    assert!(matches!(r, Err(DisplayError::Raster(_))), "{r:?}");
    assert_eq!(display.fills, 0);
}
