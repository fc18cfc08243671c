//! The renderer: camera, light and culling settings, and the full-frame and banded entry
//! points.

use super::clip::Viewport;
use super::color::{PixelFormat, Rgb};
use super::depth::DepthFormat;
use super::error::RasterError;
use super::line::{draw_lines, draw_points, Lines, Points};
use super::mesh::{draw_mesh, project_mesh, CachedVertex, Light, Mesh};
use super::target::{BandBuffer, Sink, Target};
use super::triangle::Cull;
use crate::math::Mat4;
use crate::real::Real;

/// One drawing command of a scene.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Draw<'a, R> {
    /// A lit triangle mesh, depth-tested when the target has depth.
    Mesh(Mesh<'a, R>),
    /// A lit triangle mesh with a texture and/or vertex colors, depth-tested when the target
    /// has depth (feature `texture`).
    #[cfg(feature = "texture")]
    Textured(super::textured::TexturedMesh<'a, R>),
    /// A line list.
    Lines(Lines<'a, R>),
    /// A point list.
    Points(Points<'a, R>),
}

/// Draws meshes, lines and points with one camera, light and culling mode.
///
/// Commands draw in order; meshes depth-test against what is already in the target (when it
/// has depth), so opaque meshes may come in any order, and overlays without depth test should
/// come last.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Renderer<R> {
    /// Projection × view, e.g. `Mat4::perspective_rh_gl(..) * Mat4::look_at_rh(..)`; OpenGL
    /// clip conventions (`−w ≤ z ≤ w`).
    pub view_proj: Mat4<R>,
    /// The light.
    pub light: Light<R>,
    /// Face culling.
    pub cull: Cull,
}

impl<R: Real> Renderer<R> {
    /// A renderer with the default light and back-face culling.
    #[must_use]
    pub fn new(view_proj: Mat4<R>) -> Self {
        Renderer { view_proj, light: Light::default(), cull: Cull::Back }
    }

    /// The number of [`CachedVertex`] entries [`render`](Self::render) and
    /// [`render_bands`](Self::render_bands) need for `scene`: the sum of its meshes' position
    /// counts.
    #[must_use]
    pub fn scratch_len(scene: &[Draw<'_, R>]) -> usize {
        scene
            .iter()
            .map(|d| match d {
                Draw::Mesh(m) => m.positions.len(),
                #[cfg(feature = "texture")]
                Draw::Textured(t) => t.mesh.positions.len(),
                _ => 0,
            })
            .sum()
    }

    /// Checks every command of `scene` and that `scratch_len` entries of scratch suffice.
    ///
    /// # Errors
    ///
    /// As [`Mesh::validate`] and [`Lines::validate`]; [`RasterError::ScratchTooSmall`] when
    /// `scratch_len` is below [`scratch_len`](Self::scratch_len).
    pub fn validate(&self, scene: &[Draw<'_, R>], scratch_len: usize) -> Result<(), RasterError> {
        for d in scene {
            match d {
                Draw::Mesh(m) => m.validate()?,
                #[cfg(feature = "texture")]
                Draw::Textured(t) => t.validate()?,
                Draw::Lines(l) => l.validate()?,
                Draw::Points(_) => {}
            }
        }
        if scratch_len < Self::scratch_len(scene) {
            return Err(RasterError::ScratchTooSmall);
        }
        Ok(())
    }

    /// Draws `scene` into `target` in order (without clearing it first).
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is drawn on error.
    ///
    /// # Examples
    ///
    /// A red triangle, unlit, given directly in normalized device coordinates (an identity
    /// camera), in a 16 × 16 frame:
    ///
    /// ```
    /// use sinew::math::{Mat4, Vec3};
    /// use sinew::raster::{
    ///     CachedVertex, Depth16, Draw, Indices, Mesh, PixelFormat, Renderer, Rgb, Shading, Target, Xrgb8888,
    /// };
    ///
    /// // Counter-clockwise on screen: front-facing.
    /// let corners = [Vec3::new(-0.5, -0.5, 0.0), Vec3::new(0.5, -0.5, 0.0), Vec3::new(0.0, 0.5, 0.0)];
    /// let red = Rgb::new(255, 0, 0);
    /// let triangle = Mesh { shading: Shading::Unlit, ..Mesh::new(&corners, None, Indices::U16(&[0, 1, 2]), red) };
    ///
    /// let mut color = [0u32; 16 * 16];
    /// let mut depth = [0u16; 16 * 16];
    /// let mut target = Target::<Xrgb8888, Depth16>::new(&mut color, Some(&mut depth), 16, 16, 16)?;
    /// let mut scratch = [CachedVertex::default(); 3]; // one per mesh vertex
    /// target.clear(Rgb::BLACK);
    /// Renderer::new(Mat4::IDENTITY).render(&mut target, &[Draw::Mesh(triangle)], &mut scratch)?;
    ///
    /// assert_eq!(target.pixel(8, 8), Some(Xrgb8888::pack(red))); // the middle (row 0 is the top)
    /// assert_eq!(target.pixel(8, 3), Some(Xrgb8888::pack(Rgb::BLACK))); // above the apex
    /// assert_eq!(target.pixel(1, 14), Some(Xrgb8888::pack(Rgb::BLACK))); // beside the base
    /// # Ok::<(), sinew::raster::RasterError>(())
    /// ```
    pub fn render<C: PixelFormat, D: DepthFormat>(
        &self,
        target: &mut Target<'_, C, D>,
        scene: &[Draw<'_, R>],
        scratch: &mut [CachedVertex],
    ) -> Result<(), RasterError> {
        self.validate(scene, scratch.len())?;
        let vp = Viewport::new(target.width(), target.height());
        self.project(scene, &vp, scratch);
        self.draw_scene(target, scene, &vp, scratch);
        Ok(())
    }

    /// Draws one mesh into `target`; `scratch` needs `mesh.positions.len()` entries.
    ///
    /// # Errors
    ///
    /// As [`render`](Self::render).
    pub fn draw_mesh<C: PixelFormat, D: DepthFormat>(
        &self,
        target: &mut Target<'_, C, D>,
        mesh: &Mesh<'_, R>,
        scratch: &mut [CachedVertex],
    ) -> Result<(), RasterError> {
        self.render(target, &[Draw::Mesh(*mesh)], scratch)
    }

    /// Draws a line list into `target`.
    ///
    /// # Errors
    ///
    /// As [`Lines::validate`].
    pub fn draw_lines<C: PixelFormat, D: DepthFormat>(
        &self,
        target: &mut Target<'_, C, D>,
        lines: &Lines<'_, R>,
    ) -> Result<(), RasterError> {
        self.render(target, &[Draw::Lines(*lines)], &mut [])
    }

    /// Draws a point list into `target`.
    ///
    /// # Errors
    ///
    /// None at present; the `Result` keeps the signature in line with the other draws.
    pub fn draw_points<C: PixelFormat, D: DepthFormat>(
        &self,
        target: &mut Target<'_, C, D>,
        points: &Points<'_, R>,
    ) -> Result<(), RasterError> {
        self.render(target, &[Draw::Points(*points)], &mut [])
    }

    /// Renders `scene` into a `bands.width() × bands.height()` frame, `bands.rows()` rows at a
    /// time: for each band from the top, clears it to `clear` (and the far depth), draws every
    /// command that touches it, and calls `emit(y0, pixels)` with the band's first frame row
    /// and its `width × rows` pixels (the last band may have fewer rows). Vertices are
    /// projected once for the whole frame. The pixels equal those of [`render`](Self::render)
    /// into a cleared full-frame target with the same formats.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is drawn or emitted on error.
    ///
    /// # Examples
    ///
    /// A 32 × 24 RGB565 frame in bands of 8 rows: 512 bytes of color and 512 of depth instead of
    /// a frame's 3 KiB. Each band goes to the callback (on a device, to the display); here they
    /// are put together and compared with a full-frame render.
    ///
    /// ```
    /// use sinew::math::{Mat4, Vec3};
    /// use sinew::raster::{BandBuffer, CachedVertex, Depth16, Draw, Indices, Mesh, Renderer, Rgb, Rgb565, Target};
    ///
    /// let corners = [Vec3::new(-0.8, -0.9, 0.0), Vec3::new(0.8, -0.9, 0.0), Vec3::new(0.0, 0.9, 0.0)];
    /// let triangle = Mesh::new(&corners, None, Indices::U16(&[0, 1, 2]), Rgb::new(255, 200, 0));
    /// let scene = [Draw::Mesh(triangle)];
    /// let renderer = Renderer::new(Mat4::IDENTITY);
    /// let mut scratch = [CachedVertex::default(); 3];
    ///
    /// let (mut color, mut depth) = ([0u16; 32 * 8], [0u16; 32 * 8]);
    /// let mut bands = BandBuffer::<Rgb565, Depth16>::new(&mut color, Some(&mut depth), 32, 24, 8)?;
    /// let mut frame = vec![0u16; 32 * 24];
    /// let mut sent = 0;
    /// renderer.render_bands(&mut bands, &scene, &mut scratch, Rgb::BLACK, |y0, pixels| {
    ///     // `pixels` holds rows y0.. of the frame, 32 per row.
    ///     let start = y0 as usize * 32;
    ///     frame[start..start + pixels.len()].copy_from_slice(pixels);
    ///     sent += 1;
    /// })?;
    /// assert_eq!(sent, 3);
    ///
    /// let (mut full, mut full_depth) = (vec![0u16; 32 * 24], vec![0u16; 32 * 24]);
    /// let mut target = Target::<Rgb565, Depth16>::new(&mut full, Some(&mut full_depth), 32, 24, 32)?;
    /// target.clear(Rgb::BLACK);
    /// renderer.render(&mut target, &scene, &mut scratch)?;
    /// assert_eq!(frame, target.pixels()); // pixel for pixel
    /// assert!(frame.iter().any(|&p| p != 0));
    /// # Ok::<(), sinew::raster::RasterError>(())
    /// ```
    pub fn render_bands<C, D, F>(
        &self,
        bands: &mut BandBuffer<'_, C, D>,
        scene: &[Draw<'_, R>],
        scratch: &mut [CachedVertex],
        clear: Rgb,
        mut emit: F,
    ) -> Result<(), RasterError>
    where
        C: PixelFormat,
        D: DepthFormat,
        F: FnMut(u32, &[C::Raw]),
    {
        self.validate(scene, scratch.len())?;
        let (width, height, rows) = (bands.width, bands.height, bands.rows);
        let vp = Viewport::new(width, height);
        self.project(scene, &vp, scratch);
        let mut y0 = 0;
        while y0 < height {
            let n = rows.min(height - y0);
            let len = width as usize * n as usize;
            let Some(color) = bands.color.get_mut(..len) else { return Ok(()) };
            let depth = match bands.depth.as_deref_mut() {
                Some(d) => d.get_mut(..len),
                None => None,
            };
            let mut target = Target::<C, D>::band(color, depth, width, height, y0, n);
            target.clear(clear);
            self.draw_scene(&mut target, scene, &vp, scratch);
            emit(y0, target.pixels());
            y0 += n;
        }
        Ok(())
    }

    /// Vertex stage for every mesh of a validated scene.
    pub(crate) fn project(&self, scene: &[Draw<'_, R>], vp: &Viewport<R>, scratch: &mut [CachedVertex]) {
        let mut rest = scratch;
        for d in scene {
            let m = match d {
                Draw::Mesh(m) => m,
                #[cfg(feature = "texture")]
                Draw::Textured(t) => &t.mesh,
                _ => continue,
            };
            let (cache, tail) = rest.split_at_mut(m.positions.len().min(rest.len()));
            project_mesh(m, &self.view_proj, &self.light, vp, cache);
            rest = tail;
        }
    }

    /// Primitive and raster stages for every command of a validated, projected scene.
    pub(crate) fn draw_scene<S: Sink>(
        &self,
        sink: &mut S,
        scene: &[Draw<'_, R>],
        vp: &Viewport<R>,
        scratch: &[CachedVertex],
    ) {
        let mut rest = scratch;
        for d in scene {
            match d {
                Draw::Mesh(m) => {
                    let (cache, tail) = rest.split_at(m.positions.len().min(rest.len()));
                    draw_mesh(sink, m, self, vp, cache);
                    rest = tail;
                }
                #[cfg(feature = "texture")]
                Draw::Textured(t) => {
                    let (cache, tail) = rest.split_at(t.mesh.positions.len().min(rest.len()));
                    super::textured::draw_textured(sink, t, self, vp, cache);
                    rest = tail;
                }
                Draw::Lines(l) => draw_lines(sink, l, &self.view_proj, vp),
                Draw::Points(p) => draw_points(sink, p, &self.view_proj, vp),
            }
        }
    }
}
