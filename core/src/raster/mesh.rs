//! Triangle meshes: the vertex stage (transform, light, classify, project into the caller's
//! cache) and the primitive stage (cull, clip, hand triangles to the raster stage).

use super::clip::{clip_triangle, to_clip, ClipVertex, Viewport};
use super::color::{Rgb, ShadeTable};
use super::error::RasterError;
use super::fixed::to_fixed;
use super::renderer::Renderer;
use super::target::Sink;
use super::triangle::{fill_triangle, orient, pixel_bounds, ScreenVertex, SUBPIXEL_BITS};
use crate::math::{Mat4, Vec3};
use crate::real::Real;

/// Indices of a triangle or line list, in either width.
#[derive(Clone, Copy, Debug)]
pub enum Indices<'a> {
    /// 16-bit indices (up to 65 536 vertices).
    U16(&'a [u16]),
    /// 32-bit indices.
    U32(&'a [u32]),
}

impl Indices<'_> {
    /// Number of indices.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Indices::U16(s) => s.len(),
            Indices::U32(s) => s.len(),
        }
    }
    /// True when there are no indices.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Index `i`, or `None` past the end.
    #[inline(always)]
    #[must_use]
    pub fn get(&self, i: usize) -> Option<usize> {
        match self {
            Indices::U16(s) => s.get(i).map(|&v| v as usize),
            Indices::U32(s) => s.get(i).map(|&v| v as usize),
        }
    }
    /// Triangle `tri`'s three vertex indices and their cached vertices, or `None` when an
    /// index is past the list or the cache.
    #[inline(always)]
    pub(crate) fn cached_triangle<'c>(
        &self,
        tri: usize,
        cache: &'c [CachedVertex],
    ) -> Option<([usize; 3], [&'c CachedVertex; 3])> {
        let (Some(i0), Some(i1), Some(i2)) = (self.get(3 * tri), self.get(3 * tri + 1), self.get(3 * tri + 2)) else {
            return None;
        };
        let (Some(a), Some(b), Some(c)) = (cache.get(i0), cache.get(i1), cache.get(i2)) else { return None };
        Some(([i0, i1, i2], [a, b, c]))
    }
    /// The largest index, or `None` when empty.
    #[must_use]
    pub fn max(&self) -> Option<usize> {
        match self {
            Indices::U16(s) => s.iter().copied().max().map(|v| v as usize),
            Indices::U32(s) => s.iter().copied().max().map(|v| v as usize),
        }
    }
}

/// A directional light with an ambient term. A surface with unit normal `n̂` gets the level
/// `ambient + diffuse · max(0, n̂ · l̂)`, clamped to `[0, 1]`, where `l̂` is `direction`
/// normalized.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Light<R> {
    /// World-space direction from surfaces towards the light (any non-zero length).
    pub direction: Vec3<R>,
    /// Level of surfaces facing away from the light, 0 to 1.
    pub ambient: R,
    /// Extra level of surfaces facing the light head-on, 0 to 1.
    pub diffuse: R,
}

impl<R: Real> Default for Light<R> {
    /// From the viewer's upper left (`(-1, 1, 1)` in a y-up, z-towards-viewer world), ambient
    /// 0.25, diffuse 0.75.
    fn default() -> Self {
        Light { direction: Vec3::new(-R::ONE, R::ONE, R::ONE), ambient: R::ratio(1, 4), diffuse: R::ratio(3, 4) }
    }
}

/// How a mesh is lit by the renderer's [`Light`]: `ambient + diffuse · max(0, n̂ · l̂)`,
/// clamped to `[0, 1]`, scales the mesh color.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shading {
    /// No lighting: the mesh color as is.
    Unlit,
    /// One level per triangle, from its geometric normal (the cross product of two edges of
    /// the skinned positions, counter-clockwise winding facing out). Needs no normals.
    Flat,
    /// Gouraud: one level per vertex from its normal (normalized here; skinned normals need not
    /// be unit length), interpolated linearly across the triangle in screen space.
    #[default]
    Smooth,
}

/// An indexed triangle mesh to draw: positions (and normals) in model space, typically the
/// output of [`SkinningJob`](crate::job::SkinningJob).
#[derive(Clone, Copy, Debug)]
pub struct Mesh<'a, R> {
    /// Vertex positions in model space.
    pub positions: &'a [Vec3<R>],
    /// Vertex normals in model space, at least one per position; needed by
    /// [`Shading::Smooth`] only.
    pub normals: Option<&'a [Vec3<R>]>,
    /// Triangle list: three indices per triangle, each below `positions.len()`. A triangle is
    /// front-facing when counter-clockwise on screen (as in glTF and OpenGL).
    pub indices: Indices<'a>,
    /// Model-to-world matrix. Lighting assumes it has no non-uniform scale.
    pub model: Mat4<R>,
    /// Base color (the color of a fully lit surface). A plain mesh draws it as stored (a display
    /// color); a `TexturedMesh` reads it as linear light and encodes the result to sRGB.
    pub color: Rgb,
    /// Lighting mode.
    pub shading: Shading,
}

impl<'a, R: Real> Mesh<'a, R> {
    /// A smooth-shaded mesh with an identity model matrix.
    #[must_use]
    pub fn new(positions: &'a [Vec3<R>], normals: Option<&'a [Vec3<R>]>, indices: Indices<'a>, color: Rgb) -> Self {
        let shading = if normals.is_some() { Shading::Smooth } else { Shading::Flat };
        Mesh { positions, normals, indices, model: Mat4::IDENTITY, color, shading }
    }

    /// Checks indices and normals.
    ///
    /// # Errors
    ///
    /// [`RasterError::IndexCountMismatch`] when the index count is not a multiple of 3;
    /// [`RasterError::IndexOutOfRange`] when an index is not below `positions.len()`;
    /// [`RasterError::MissingNormals`] when `shading` is [`Shading::Smooth`] and normals are
    /// absent or fewer than the positions.
    pub fn validate(&self) -> Result<(), RasterError> {
        if self.indices.len() % 3 != 0 {
            return Err(RasterError::IndexCountMismatch);
        }
        if self.indices.max().is_some_and(|m| m >= self.positions.len()) {
            return Err(RasterError::IndexOutOfRange);
        }
        if self.shading == Shading::Smooth && self.normals.is_none_or(|n| n.len() < self.positions.len()) {
            return Err(RasterError::MissingNormals);
        }
        Ok(())
    }
}

/// One vertex after the vertex stage: its screen position, depth and shade, and which clip
/// planes it is outside of. A scratch buffer of these (one per mesh vertex, see
/// [`Renderer::scratch_len`](super::Renderer::scratch_len)) lets the renderer transform each
/// vertex once per frame, however many triangles and bands use it. 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CachedVertex {
    x: i32,
    y: i32,
    z: u32,
    shade: u16,
    out: u8,
}

impl CachedVertex {
    #[inline(always)]
    pub(crate) fn screen(&self) -> ScreenVertex {
        ScreenVertex { x: self.x, y: self.y, z: self.z as i32, s: self.shade as i32 }
    }
    /// Screen y in sub-pixels.
    #[cfg(feature = "texture")]
    #[inline(always)]
    pub(crate) fn y(&self) -> i32 {
        self.y
    }
    /// Shade level ×256.
    #[cfg(feature = "texture")]
    #[inline(always)]
    pub(crate) fn shade(&self) -> u16 {
        self.shade
    }
    /// The clip planes the vertex is outside of.
    #[cfg(feature = "texture")]
    #[inline(always)]
    pub(crate) fn outcode(&self) -> u8 {
        self.out
    }
}

/// Shade level ×256 (`0..=0xFF00`) of `ambient + diffuse · max(0, cos)`.
#[inline]
fn level<R: Real>(light: &Light<R>, cos: R) -> u16 {
    let i = (light.ambient + light.diffuse * cos.max(R::ZERO)).clamp(R::ZERO, R::ONE);
    to_fixed(i * R::from_i32(255), 8).clamp(0, 0xFF00) as u16
}

/// Shade of a surface with (not necessarily unit) normal `n`, lit from unit direction `l`.
#[inline]
fn shade_of_normal<R: Real>(light: &Light<R>, l: Vec3<R>, n: Vec3<R>) -> u16 {
    let n2 = n.length_squared();
    let cos = if n2 > R::ZERO { n.dot(l) * n2.inv_sqrt() } else { R::ZERO };
    level(light, cos)
}

/// The light direction in model space (unit length), for a model matrix without non-uniform
/// scale: `n_world · l = n_model · (Mᵀ l)`.
#[inline]
pub(crate) fn light_in_model<R: Real>(model: &Mat4<R>, light: &Light<R>) -> Vec3<R> {
    model.transpose().transform_vector3(light.direction).normalize_or_zero()
}

/// Shade of the triangle `a, b, c` from its geometric normal. Edges are scaled to unit size
/// before the cross product so that small triangles keep their precision in Q16.16.
#[inline]
pub(crate) fn face_shade<R: Real>(light: &Light<R>, l: Vec3<R>, a: Vec3<R>, b: Vec3<R>, c: Vec3<R>) -> u16 {
    let (e1, e2) = (b - a, c - a);
    let m = e1.max_abs().max(e2.max_abs());
    if m <= R::ZERO || !m.is_finite() {
        return level(light, R::ZERO);
    }
    let k = m.recip();
    shade_of_normal(light, l, (e1 * k).cross(e2 * k))
}

/// Vertex stage: fills `cache[..positions.len()]`. The mesh has been validated and the cache
/// is long enough.
pub(crate) fn project_mesh<R: Real>(
    mesh: &Mesh<'_, R>,
    view_proj: &Mat4<R>,
    light: &Light<R>,
    vp: &Viewport<R>,
    cache: &mut [CachedVertex],
) {
    let mvp = *view_proj * mesh.model;
    let l = light_in_model(&mesh.model, light);
    let full = level(light, R::ONE).max(1);
    let normals = mesh.normals.unwrap_or(&[]);
    for (i, (p, out)) in mesh.positions.iter().zip(cache.iter_mut()).enumerate() {
        let shade = match mesh.shading {
            Shading::Unlit => 0xFF00,
            Shading::Flat => full,
            Shading::Smooth => normals.get(i).map_or(full, |&n| shade_of_normal(light, l, n)),
        };
        let c = to_clip(&mvp, *p);
        let code = vp.outcode(&c);
        let sv = if code == 0 { vp.project(&c, shade as i32) } else { ScreenVertex::default() };
        *out = CachedVertex { x: sv.x, y: sv.y, z: sv.z as u32, shade, out: code };
    }
}

/// Primitive stage: draws a validated, projected mesh into `sink`.
pub(crate) fn draw_mesh<R: Real, S: Sink>(
    sink: &mut S,
    mesh: &Mesh<'_, R>,
    renderer: &Renderer<R>,
    vp: &Viewport<R>,
    cache: &[CachedVertex],
) {
    let table: ShadeTable<S::Raw> = S::shade_table(mesh.color);
    let l = light_in_model(&mesh.model, &renderer.light);
    let mut mvp = None;
    let (r0, r1) = sink.rows();
    let (band_top, band_bottom) = ((r0 as i64) << SUBPIXEL_BITS, (r1 as i64) << SUBPIXEL_BITS);
    let face = |t: [usize; 3]| -> u16 {
        let p = |i: usize| mesh.positions.get(i).copied().unwrap_or(Vec3::ZERO);
        face_shade(&renderer.light, l, p(t[0]), p(t[1]), p(t[2]))
    };
    let flat = mesh.shading == Shading::Flat;
    for tri in 0..mesh.indices.len() / 3 {
        let Some(([i0, i1, i2], [a, b, c])) = mesh.indices.cached_triangle(tri, cache) else { continue };
        if a.out & b.out & c.out != 0 || (a.out | b.out | c.out) & super::clip::OUT_INVALID != 0 {
            continue;
        }
        if (a.out | b.out | c.out) == 0 {
            // Cheap band rejection before any setup (pixel centers lie 8 sub-pixels in).
            let (ymin, ymax) = (a.y.min(b.y).min(c.y) as i64, a.y.max(b.y).max(c.y) as i64);
            if ymax < band_top || ymin >= band_bottom {
                continue;
            }
            let Some(mut v) = orient([a.screen(), b.screen(), c.screen()], renderer.cull) else { continue };
            if pixel_bounds(sink, &v).is_none() {
                continue;
            }
            if flat {
                let s = face([i0, i1, i2]) as i32;
                v.iter_mut().for_each(|v| v.s = s);
            }
            fill_triangle(sink, &v, &table);
        } else {
            // Crosses a clip plane: recompute clip coordinates and clip.
            let m = *mvp.get_or_insert_with(|| renderer.view_proj * mesh.model);
            let pos = |i: usize| mesh.positions.get(i).copied().unwrap_or(Vec3::ZERO);
            let tri = [
                ClipVertex { c: to_clip(&m, pos(i0)), s: a.shade as i32, a: () },
                ClipVertex { c: to_clip(&m, pos(i1)), s: b.shade as i32, a: () },
                ClipVertex { c: to_clip(&m, pos(i2)), s: c.shade as i32, a: () },
            ];
            let poly = clip_triangle(vp, tri, a.out | b.out | c.out);
            let verts = poly.vertices();
            let Some(first) = verts.first() else { continue };
            let p0 = vp.project(&first.c, first.s);
            let mut flat_shade = None;
            for pair in verts.get(1..).unwrap_or(&[]).windows(2) {
                let v = [p0, vp.project(&pair[0].c, pair[0].s), vp.project(&pair[1].c, pair[1].s)];
                let Some(mut v) = orient(v, renderer.cull) else { continue };
                if pixel_bounds(sink, &v).is_none() {
                    continue;
                }
                if flat {
                    let s = *flat_shade.get_or_insert_with(|| face([i0, i1, i2])) as i32;
                    v.iter_mut().for_each(|v| v.s = s);
                }
                fill_triangle(sink, &v, &table);
            }
        }
    }
}
