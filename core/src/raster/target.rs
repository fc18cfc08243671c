//! Render targets over caller-owned buffers, and the span interface the raster stage writes
//! through.

use core::fmt;
use core::marker::PhantomData;

use super::color::{shade_table, PixelFormat, Rgb, ShadeTable, SHADE_LEVELS};
use super::depth::{DepthFormat, DEPTH_MAX};
use super::error::RasterError;

/// Largest width or height of a target, in pixels. Together with the guard band it bounds
/// screen coordinates so that the raster stage's integer arithmetic cannot overflow.
pub const MAX_DIMENSION: u32 = 4096;

/// A horizontal run of pixels `[x0, x1)` on row `y` with the depth and shade at `x0` and
/// their per-pixel steps. `z` is a depth (`0..=DEPTH_MAX`) with 16 fractional bits; `s` is a
/// shade level (0..=255) with 24 fractional bits, biased by half a level so that truncation
/// rounds to nearest. Both wrap on overflow: the values at covered pixels are exact.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span {
    pub y: i32,
    pub x0: i32,
    pub x1: i32,
    pub z: i64,
    pub dz: i64,
    pub s: i64,
    pub ds: i64,
}

/// What the primitive rasterizers draw into: a frame of `frame_size()` pixels of which rows
/// `rows()` are held. Spans may extend past the held region; the sink discards what is outside.
pub(crate) trait Sink {
    /// One packed color.
    type Raw: Copy;
    /// Width and height of the whole frame (the viewport).
    fn frame_size(&self) -> (i32, i32);
    /// First row held and one past the last.
    fn rows(&self) -> (i32, i32);
    /// Packs a solid color.
    fn pack(c: Rgb) -> Self::Raw;
    /// The shade table of a base color.
    fn shade_table(c: Rgb) -> ShadeTable<Self::Raw>;
    /// Depth-tests (when the sink has depth) and writes a shaded span; writes depth too.
    fn span_shaded(&mut self, span: &Span, table: &ShadeTable<Self::Raw>);
    /// Writes a span of one color, depth-tested and depth-writing when `depth_test` is set and
    /// the sink has depth.
    fn span_solid(&mut self, span: &Span, color: Self::Raw, depth_test: bool);
    /// Depth-tests (when the sink has depth) and writes a textured span (`span.s` is unused;
    /// `tex` is at the span's first pixel); writes depth too.
    #[cfg(feature = "texture")]
    fn span_textured(&mut self, span: &Span, tex: &super::textured::TexSpan<'_>);
}

/// Shade-table index of a span shade value (see [`Span`]); the mask never changes an index of
/// a covered pixel, it only makes the lookup provably in bounds.
#[inline(always)]
pub(crate) fn shade_index(s: i64) -> usize {
    ((s >> 24) as usize) & (SHADE_LEVELS - 1)
}

/// Depth of a span depth value, clamped into `0..=DEPTH_MAX`.
#[inline(always)]
pub(crate) fn depth_of(z: i64) -> u32 {
    (z >> 16).clamp(0, DEPTH_MAX as i64) as u32
}

/// Checks target dimensions and returns the buffer length they need.
fn required_len(width: u32, height: u32, stride: usize) -> Result<usize, RasterError> {
    if width == 0 || height == 0 || width > MAX_DIMENSION || height > MAX_DIMENSION || stride < width as usize {
        return Err(RasterError::InvalidDimensions);
    }
    stride
        .checked_mul(height as usize - 1)
        .and_then(|n| n.checked_add(width as usize))
        .ok_or(RasterError::InvalidDimensions)
}

/// [`RasterError::ColorBufferTooSmall`] or [`RasterError::DepthBufferTooSmall`] when `color`,
/// or `depth` where there is one, holds fewer than `need` elements.
fn buffers_hold<C, D>(color: &[C], depth: Option<&[D]>, need: usize) -> Result<(), RasterError> {
    if color.len() < need {
        return Err(RasterError::ColorBufferTooSmall);
    }
    if depth.is_some_and(|d| d.len() < need) {
        return Err(RasterError::DepthBufferTooSmall);
    }
    Ok(())
}

/// A color buffer, an optional depth buffer, and their geometry: what the renderer draws into.
///
/// Pixel `(x, y)` is element `y × stride + x` of both buffers (row 0 at the top). Drawing
/// outside `width × height` is clipped silently. With no depth buffer, meshes draw in order
/// (painter's algorithm) with no depth test.
pub struct Target<'a, C: PixelFormat, D: DepthFormat> {
    color: &'a mut [C::Raw],
    depth: Option<&'a mut [D::Raw]>,
    width: u32,
    height: u32,
    stride: usize,
    /// First frame row the buffers hold (non-zero for a band).
    y0: i32,
    /// One past the last frame row the buffers hold.
    y1: i32,
    _format: PhantomData<(C, D)>,
}

impl<C: PixelFormat, D: DepthFormat> fmt::Debug for Target<'_, C, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Target")
            .field("width", &self.width)
            .field("height", &self.height)
            .field("stride", &self.stride)
            .field("rows", &(self.y0..self.y1))
            .field("depth", &self.depth.is_some())
            .finish()
    }
}

impl<'a, C: PixelFormat, D: DepthFormat> Target<'a, C, D> {
    /// A target of `width × height` pixels, `stride` elements apart row to row, over `color`
    /// and optionally `depth` (same layout as `color`).
    ///
    /// # Errors
    ///
    /// [`RasterError::InvalidDimensions`] when `width` or `height` is 0 or above
    /// [`MAX_DIMENSION`], or `stride < width`; [`RasterError::ColorBufferTooSmall`] or
    /// [`RasterError::DepthBufferTooSmall`] when a buffer is shorter than
    /// `stride × (height − 1) + width`.
    pub fn new(
        color: &'a mut [C::Raw],
        depth: Option<&'a mut [D::Raw]>,
        width: u32,
        height: u32,
        stride: usize,
    ) -> Result<Self, RasterError> {
        let need = required_len(width, height, stride)?;
        buffers_hold(color, depth.as_deref(), need)?;
        Ok(Target { color, depth, width, height, stride, y0: 0, y1: height as i32, _format: PhantomData })
    }

    /// A band of a `width × frame_height` frame holding rows `y0..y0 + rows`, stride `width`.
    /// The caller has checked the dimensions and that the buffers hold `width × rows` elements.
    pub(crate) fn band(
        color: &'a mut [C::Raw],
        depth: Option<&'a mut [D::Raw]>,
        width: u32,
        frame_height: u32,
        y0: u32,
        rows: u32,
    ) -> Self {
        Target {
            color,
            depth,
            width,
            height: frame_height,
            stride: width as usize,
            y0: y0 as i32,
            y1: (y0 + rows) as i32,
            _format: PhantomData,
        }
    }

    /// Width in pixels.
    #[must_use]
    pub fn width(&self) -> u32 {
        self.width
    }
    /// Height in pixels.
    #[must_use]
    pub fn height(&self) -> u32 {
        self.height
    }
    /// Elements from one row to the next.
    #[must_use]
    pub fn stride(&self) -> usize {
        self.stride
    }
    /// True when the target has a depth buffer.
    #[must_use]
    pub fn has_depth(&self) -> bool {
        self.depth.is_some()
    }
    /// The color buffer.
    #[must_use]
    pub fn pixels(&self) -> &[C::Raw] {
        self.color
    }
    /// The depth buffer, if any.
    #[must_use]
    pub fn depth(&self) -> Option<&[D::Raw]> {
        self.depth.as_deref()
    }
    /// The stored value of pixel `(x, y)`, or `None` outside the target.
    #[must_use]
    pub fn pixel(&self, x: u32, y: u32) -> Option<C::Raw> {
        let i = self.index(x as i32, y as i32)?;
        self.color.get(i).copied()
    }

    /// Fills every pixel with `c` and, if there is a depth buffer, clears it to
    /// [`DepthFormat::FAR`]. Elements between rows (stride padding) are left alone.
    pub fn clear(&mut self, c: Rgb) {
        let raw = C::pack(c);
        let w = self.width as usize;
        for row in self.color.chunks_mut(self.stride) {
            for p in row.iter_mut().take(w) {
                *p = raw;
            }
        }
        self.clear_depth();
    }

    /// Clears the depth buffer (if any) to [`DepthFormat::FAR`].
    pub fn clear_depth(&mut self) {
        let w = self.width as usize;
        if let Some(depth) = self.depth.as_deref_mut() {
            for row in depth.chunks_mut(self.stride) {
                for d in row.iter_mut().take(w) {
                    *d = D::FAR;
                }
            }
        }
    }

    /// Buffer index of frame pixel `(x, y)` if this target holds it.
    #[inline(always)]
    fn index(&self, x: i32, y: i32) -> Option<usize> {
        if x < 0 || x >= self.width as i32 || y < self.y0 || y >= self.y1 {
            return None;
        }
        Some((y - self.y0) as usize * self.stride + x as usize)
    }

    /// The buffer range of `span` clipped to the target, as (start, end).
    #[inline(always)]
    fn span_range(&self, span: &Span) -> Option<(usize, usize, i64)> {
        if span.y < self.y0 || span.y >= self.y1 {
            return None;
        }
        let x0 = span.x0.max(0);
        let x1 = span.x1.min(self.width as i32);
        if x0 >= x1 {
            return None;
        }
        let row = (span.y - self.y0) as usize * self.stride;
        Some((row + x0 as usize, row + x1 as usize, (x0 - span.x0) as i64))
    }
}

impl<C: PixelFormat, D: DepthFormat> Sink for Target<'_, C, D> {
    type Raw = C::Raw;

    #[inline(always)]
    fn frame_size(&self) -> (i32, i32) {
        (self.width as i32, self.height as i32)
    }
    #[inline(always)]
    fn rows(&self) -> (i32, i32) {
        (self.y0, self.y1)
    }
    #[inline(always)]
    fn pack(c: Rgb) -> C::Raw {
        C::pack(c)
    }
    #[inline]
    fn shade_table(c: Rgb) -> ShadeTable<C::Raw> {
        shade_table::<C>(c)
    }

    #[inline]
    fn span_shaded(&mut self, span: &Span, table: &ShadeTable<C::Raw>) {
        let Some((a, b, skip)) = self.span_range(span) else { return };
        let Some(colors) = self.color.get_mut(a..b) else { return };
        let mut z = span.z.wrapping_add(span.dz.wrapping_mul(skip));
        let mut s = span.s.wrapping_add(span.ds.wrapping_mul(skip));
        match self.depth.as_deref_mut() {
            Some(depth) => {
                let Some(depths) = depth.get_mut(a..b) else { return };
                for (c, d) in colors.iter_mut().zip(depths.iter_mut()) {
                    let zv = D::from_z(depth_of(z));
                    if zv < *d {
                        *d = zv;
                        *c = table[shade_index(s)];
                    }
                    z = z.wrapping_add(span.dz);
                    s = s.wrapping_add(span.ds);
                }
            }
            None => {
                for c in colors.iter_mut() {
                    *c = table[shade_index(s)];
                    s = s.wrapping_add(span.ds);
                }
            }
        }
    }

    #[cfg(feature = "texture")]
    #[inline]
    fn span_textured(&mut self, span: &Span, tex: &super::textured::TexSpan<'_>) {
        let Some((a, b, skip)) = self.span_range(span) else { return };
        let Some(colors) = self.color.get_mut(a..b) else { return };
        let mut z = span.z.wrapping_add(span.dz.wrapping_mul(skip));
        let mut t = *tex;
        t.skip(skip);
        match self.depth.as_deref_mut() {
            Some(depth) => {
                let Some(depths) = depth.get_mut(a..b) else { return };
                for (c, d) in colors.iter_mut().zip(depths.iter_mut()) {
                    let zv = D::from_z(depth_of(z));
                    if zv < *d {
                        *d = zv;
                        *c = C::pack(t.color());
                    }
                    z = z.wrapping_add(span.dz);
                    t.step();
                }
            }
            None => {
                for c in colors.iter_mut() {
                    *c = C::pack(t.color());
                    t.step();
                }
            }
        }
    }

    #[inline]
    fn span_solid(&mut self, span: &Span, color: C::Raw, depth_test: bool) {
        let Some((a, b, skip)) = self.span_range(span) else { return };
        let Some(colors) = self.color.get_mut(a..b) else { return };
        match self.depth.as_deref_mut() {
            Some(depth) if depth_test => {
                let Some(depths) = depth.get_mut(a..b) else { return };
                let mut z = span.z.wrapping_add(span.dz.wrapping_mul(skip));
                for (c, d) in colors.iter_mut().zip(depths.iter_mut()) {
                    let zv = D::from_z(depth_of(z));
                    if zv < *d {
                        *d = zv;
                        *c = color;
                    }
                    z = z.wrapping_add(span.dz);
                }
            }
            _ => {
                for c in colors.iter_mut() {
                    *c = color;
                }
            }
        }
    }
}

/// Caller-owned buffers for rendering a `width × height` frame in bands of `rows` rows (see
/// [`Renderer::render_bands`](super::Renderer::render_bands)). Both buffers have stride
/// `width`.
pub struct BandBuffer<'a, C: PixelFormat, D: DepthFormat> {
    pub(crate) color: &'a mut [C::Raw],
    pub(crate) depth: Option<&'a mut [D::Raw]>,
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) rows: u32,
    _format: PhantomData<(C, D)>,
}

impl<C: PixelFormat, D: DepthFormat> fmt::Debug for BandBuffer<'_, C, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BandBuffer")
            .field("width", &self.width)
            .field("height", &self.height)
            .field("rows", &self.rows)
            .field("depth", &self.depth.is_some())
            .finish()
    }
}

impl<'a, C: PixelFormat, D: DepthFormat> BandBuffer<'a, C, D> {
    /// Band buffers for a `width × height` frame drawn `rows` rows at a time (the last band
    /// may be shorter). `color` and `depth` need `width × rows` elements; `rows` above
    /// `height` is treated as `height`.
    ///
    /// # Errors
    ///
    /// [`RasterError::InvalidDimensions`] when `width` or `height` is 0 or above
    /// [`MAX_DIMENSION`], or `rows` is 0; [`RasterError::ColorBufferTooSmall`] or
    /// [`RasterError::DepthBufferTooSmall`] when a buffer is shorter than `width × rows`.
    pub fn new(
        color: &'a mut [C::Raw],
        depth: Option<&'a mut [D::Raw]>,
        width: u32,
        height: u32,
        rows: u32,
    ) -> Result<Self, RasterError> {
        if rows == 0 {
            return Err(RasterError::InvalidDimensions);
        }
        let rows = rows.min(height);
        let need = required_len(width, rows.max(1), width as usize)?;
        required_len(width, height, width as usize)?;
        buffers_hold(color, depth.as_deref(), need)?;
        Ok(BandBuffer { color, depth, width, height, rows, _format: PhantomData })
    }

    /// Frame width in pixels.
    #[must_use]
    pub fn width(&self) -> u32 {
        self.width
    }
    /// Frame height in pixels.
    #[must_use]
    pub fn height(&self) -> u32 {
        self.height
    }
    /// Rows per band.
    #[must_use]
    pub fn rows(&self) -> u32 {
        self.rows
    }
}
