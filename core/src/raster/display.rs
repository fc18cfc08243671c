//! The embedded-graphics adapter (feature `embedded-graphics`): frames and bands from the
//! rasterizer go to any [`DrawTarget`] of `embedded-graphics-core`, so every display driver
//! written for embedded-graphics shows sinew's frames.
//!
//! [`EgColor`] says which embedded-graphics color a stored pixel is ([`Rgb565`] as
//! `pixelcolor::Rgb565`, bit for bit; [`Xrgb8888`] as `pixelcolor::Rgb888`); the display's own
//! color type only needs a `From` conversion from it, as embedded-graphics' RGB types have.
//! [`draw_band`] sends one band of [`Renderer::render_bands`] (call it from the band callback),
//! [`draw_frame`] a whole [`Target`], and [`render_to_display`] renders a scene band by band
//! straight to a display.

use embedded_graphics_core::draw_target::DrawTarget;
use embedded_graphics_core::geometry::{Point, Size};
use embedded_graphics_core::pixelcolor::raw::RawU16;
use embedded_graphics_core::pixelcolor::{self, PixelColor};
use embedded_graphics_core::primitives::Rectangle;

use super::color::{PixelFormat, Rgb, Rgb565, Xrgb8888};
use super::depth::DepthFormat;
use super::error::RasterError;
use super::mesh::CachedVertex;
use super::renderer::{Draw, Renderer};
use super::target::{BandBuffer, Target};
use crate::real::Real;

/// A pixel format whose stored values are an embedded-graphics color.
pub trait EgColor: PixelFormat {
    /// The embedded-graphics color of a stored value.
    type Color: PixelColor;
    /// A stored value as that color.
    fn to_eg(raw: Self::Raw) -> Self::Color;
}

impl EgColor for Rgb565 {
    type Color = pixelcolor::Rgb565;
    /// The same 16 bits (`RRRRRGGGGGGBBBBB`).
    #[inline]
    fn to_eg(raw: u16) -> pixelcolor::Rgb565 {
        RawU16::new(raw).into()
    }
}

impl EgColor for Xrgb8888 {
    type Color = pixelcolor::Rgb888;
    #[inline]
    fn to_eg(raw: u32) -> pixelcolor::Rgb888 {
        let Rgb { r, g, b } = Xrgb8888::unpack(raw);
        pixelcolor::Rgb888::new(r, g, b)
    }
}

/// Why a frame did not reach the display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisplayError<E> {
    /// The renderer refused the scene (nothing was drawn).
    Raster(RasterError),
    /// The display refused a band; the bands after it were not sent.
    Display(E),
}

impl<E: core::fmt::Debug> core::fmt::Display for DisplayError<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Raster(e) => write!(f, "{e}"),
            Self::Display(e) => write!(f, "the display refused a band: {e:?}"),
        }
    }
}

impl<E: core::fmt::Debug> core::error::Error for DisplayError<E> {}

/// Sends one band of a `width`-pixel-wide frame to `display`: `pixels` (as
/// [`Renderer::render_bands`] emits them, `width` per row) cover the rows from `y0` down.
/// Pixels outside the display are discarded by the display, as embedded-graphics specifies.
///
/// # Errors
///
/// The display's error.
pub fn draw_band<C, D>(display: &mut D, width: u32, y0: u32, pixels: &[C::Raw]) -> Result<(), D::Error>
where
    C: EgColor,
    D: DrawTarget,
    D::Color: From<C::Color>,
{
    let rows = pixels.len().checked_div(width as usize).unwrap_or(0) as u32;
    let area = Rectangle::new(Point::new(0, y0 as i32), Size::new(width, rows));
    display.fill_contiguous(&area, pixels.iter().map(|&p| D::Color::from(C::to_eg(p))))
}

/// Sends a whole frame to `display`, row by row (the target's stride may exceed its width).
///
/// # Errors
///
/// The display's error.
pub fn draw_frame<C, Z, D>(display: &mut D, frame: &Target<'_, C, Z>) -> Result<(), D::Error>
where
    C: EgColor,
    Z: DepthFormat,
    D: DrawTarget,
    D::Color: From<C::Color>,
{
    let (width, stride) = (frame.width() as usize, frame.stride());
    for (y, row) in frame.pixels().chunks(stride).take(frame.height() as usize).enumerate() {
        if let Some(row) = row.get(..width) {
            draw_band::<C, D>(display, frame.width(), y as u32, row)?;
        }
    }
    Ok(())
}

/// Renders `scene` band by band into `bands` (see [`Renderer::render_bands`]) and sends each
/// band to `display` as it is finished: the frame never needs to fit in RAM.
///
/// # Errors
///
/// [`DisplayError::Raster`] when the renderer refuses the scene (nothing is drawn);
/// [`DisplayError::Display`] with the display's first error (the later bands are rendered but
/// not sent).
///
/// # Examples
///
/// A triangle on a 64 × 64 RGB565 display, 8 rows at a time: here embedded-graphics'
/// `MockDisplay`, on a board the display driver.
///
/// ```
/// use embedded_graphics::mock_display::MockDisplay;
/// use embedded_graphics::pixelcolor::Rgb565 as EgRgb565;
/// use embedded_graphics::prelude::*;
/// use sinew::math::{Mat4, Vec3};
/// use sinew::raster::display::render_to_display;
/// use sinew::raster::{BandBuffer, CachedVertex, Depth16, Draw, Indices, Mesh, Renderer, Rgb, Rgb565, Shading};
///
/// let corners = [Vec3::new(-0.5, -0.5, 0.0), Vec3::new(0.5, -0.5, 0.0), Vec3::new(0.0, 0.5, 0.0)];
/// let triangle = Mesh { shading: Shading::Unlit, ..Mesh::new(&corners, None, Indices::U16(&[0, 1, 2]), Rgb::WHITE) };
///
/// let mut display = MockDisplay::<EgRgb565>::new();
/// let (mut color, mut depth) = ([0u16; 64 * 8], [0u16; 64 * 8]); // one band: 2 KiB
/// let mut bands = BandBuffer::<Rgb565, Depth16>::new(&mut color, Some(&mut depth), 64, 64, 8)?;
/// let mut scratch = [CachedVertex::default(); 3];
/// let renderer = Renderer::new(Mat4::IDENTITY);
/// render_to_display(&renderer, &mut bands, &[Draw::Mesh(triangle)], &mut scratch, Rgb::BLACK, &mut display)?;
///
/// assert_eq!(display.get_pixel(Point::new(32, 32)), Some(EgRgb565::WHITE));
/// assert_eq!(display.get_pixel(Point::new(2, 2)), Some(EgRgb565::BLACK));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn render_to_display<R, C, Z, D>(
    renderer: &Renderer<R>,
    bands: &mut BandBuffer<'_, C, Z>,
    scene: &[Draw<'_, R>],
    scratch: &mut [CachedVertex],
    clear: Rgb,
    display: &mut D,
) -> Result<(), DisplayError<D::Error>>
where
    R: Real,
    C: EgColor,
    Z: DepthFormat,
    D: DrawTarget,
    D::Color: From<C::Color>,
{
    let width = bands.width();
    let mut failed = None;
    renderer
        .render_bands(bands, scene, scratch, clear, |y0, pixels| {
            if failed.is_none() {
                failed = draw_band::<C, D>(display, width, y0, pixels).err();
            }
        })
        .map_err(DisplayError::Raster)?;
    failed.map_or(Ok(()), |e| Err(DisplayError::Display(e)))
}
