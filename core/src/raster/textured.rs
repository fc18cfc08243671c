//! Textured meshes (feature `texture`): [`TexturedMesh`], its primitive stage (texture
//! coordinates and vertex colors carried through the clipper) and its raster stage, which maps
//! the texture perspective-correctly with integer planes.
//!
//! # Perspective correction
//!
//! Per triangle, each vertex gets `q = w_min / w` (its clip `w` against the nearest vertex's)
//! as an integer with 22 fractional bits, and its texel-space coordinates times `q`:
//! `s = U·q`, `t = V·q`, where `U = (u − ⌊u_min⌋) · width` with 8 fractional bits (the integer
//! part of the smallest `u` is taken out, a multiple of the wrap period, so a triangle far out
//! in a tiled texture keeps its precision; a triangle spanning more than 2¹⁸ texels is cut
//! there). `q`, `s` and `t` are affine in screen space, so they are planes like depth
//! ([`Coverage::plane`]: the same integer formula at a pixel whatever band holds it), and each
//! pixel divides: `U = s / q`, `V = t / q` (two 64-bit divisions for each textured pixel
//! that passes the depth test). Band output therefore equals full-frame output pixel for pixel.
//!
//! # Color
//!
//! Colors combine in linear light, as glTF defines them: the texel (nearest or bilinear, see
//! [`Sampler`], filtered as stored) is an sRGB value, decoded to linear light; the mesh color
//! (the material's base-color factor) and the vertex colors are linear values. Their product is
//! encoded to sRGB, then scaled by the light level: `pixel = srgb(linear(texel) · factor ·
//! vertex color) · light`. Factor times vertex color and the light level are Gouraud-interpolated
//! per vertex. The transfer function runs in integers on tables built at compile time
//! (16-bit linear light; see `srgb`).

use super::clip::{clip_triangle, to_clip, Attributes, ClipVertex, Viewport, OUT_INVALID};
use super::color::Rgb;
use super::error::RasterError;
use super::fixed::to_fixed;
use super::mesh::{face_shade, light_in_model, CachedVertex, Mesh, Shading};
use super::renderer::Renderer;
use super::srgb;
use super::target::Sink;
use super::texture::{modulate, Sampler, Texture, Wrap, TEXEL_FRAC_BITS};
use super::triangle::{area2, orient_by, pixel_bounds, Coverage, Cull, ScreenVertex, SUBPIXEL_BITS};
use crate::math::{Mat4, Vec3};
use crate::real::Real;

/// A mesh drawn with a texture and/or vertex colors: the [`Mesh`] (its `color` is the
/// base-color factor, linear light), one texture coordinate pair per position, optional vertex
/// colors (linear), the texture (sRGB texels) and its sampler. They combine in linear light and
/// the result is encoded to sRGB (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub struct TexturedMesh<'a, R> {
    /// Positions, normals, indices, model matrix, base-color factor and lighting.
    pub mesh: Mesh<'a, R>,
    /// Texture coordinates `(u, v)` per position (`(0, 0)`: the texture's top left); needed
    /// when `texture` is set.
    pub texcoords: &'a [[R; 2]],
    /// Vertex colors (RGBA, linear light, alpha unused) multiplying the color, at least one per
    /// position.
    pub colors: Option<&'a [[u8; 4]]>,
    /// The base-color texture (`None`: the factor and vertex colors alone).
    pub texture: Option<Texture<'a>>,
    /// Wrap modes and filter.
    pub sampler: Sampler,
}

impl<'a, R: Real> TexturedMesh<'a, R> {
    /// `mesh` with `texture` mapped by `texcoords`, no vertex colors, the default sampler
    /// (repeat, bilinear).
    #[must_use]
    pub fn new(mesh: Mesh<'a, R>, texcoords: &'a [[R; 2]], texture: Texture<'a>) -> Self {
        TexturedMesh { mesh, texcoords, colors: None, texture: Some(texture), sampler: Sampler::default() }
    }

    /// Checks the mesh and the per-vertex attributes.
    ///
    /// # Errors
    ///
    /// As [`Mesh::validate`]; [`RasterError::MissingTexcoords`] when there is a texture and
    /// fewer texture coordinates than positions; [`RasterError::MissingColors`] when there are
    /// fewer vertex colors than positions.
    pub fn validate(&self) -> Result<(), RasterError> {
        self.mesh.validate()?;
        let n = self.mesh.positions.len();
        if self.texture.is_some() && self.texcoords.len() < n {
            return Err(RasterError::MissingTexcoords);
        }
        if self.colors.is_some_and(|c| c.len() < n) {
            return Err(RasterError::MissingColors);
        }
        Ok(())
    }
}

/// What the clipper carries for a textured vertex: texture coordinates and the color before
/// lighting (levels ×256, `0..=0xFF00`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TexAttr<R> {
    uv: [R; 2],
    rgb: [i32; 3],
}

impl<R: Real> Attributes<R> for TexAttr<R> {
    #[inline]
    fn lerp(&self, o: &Self, t: R, tf: i64) -> Self {
        let l = |a: R, b: R| a + (b - a) * t;
        let li = |a: i32, b: i32| (a as i64 + (((b - a) as i64 * tf) >> 16)) as i32;
        TexAttr {
            uv: [l(self.uv[0], o.uv[0]), l(self.uv[1], o.uv[1])],
            rgb: [li(self.rgb[0], o.rgb[0]), li(self.rgb[1], o.rgb[1]), li(self.rgb[2], o.rgb[2])],
        }
    }
}

/// A vertex ready for textured rasterization: screen position, depth and shade, clip `w`,
/// and its attributes.
#[derive(Clone, Copy, Debug)]
struct TexVertex<R> {
    sv: ScreenVertex,
    w: R,
    a: TexAttr<R>,
}

/// The per-pixel state of a textured span: the perspective planes' values (`q`, `s`, `t`), the
/// linear modulation color's (`m`) and the light level's (`l`), at the current pixel, with their
/// steps per pixel; the texture, its sampler and the texel-space offsets taken out of `s` and
/// `t`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TexSpan<'t> {
    pub q: i64,
    pub dq: i64,
    pub s: i64,
    pub ds: i64,
    pub t: i64,
    pub dt: i64,
    pub m: [i64; 3],
    pub dm: [i64; 3],
    pub l: i64,
    pub dl: i64,
    pub base: (i64, i64),
    pub texture: Option<&'t Texture<'t>>,
    pub sampler: Sampler,
}

impl TexSpan<'_> {
    /// Moves the planes `k` pixels right.
    #[inline(always)]
    pub(crate) fn skip(&mut self, k: i64) {
        self.q = self.q.wrapping_add(self.dq.wrapping_mul(k));
        self.s = self.s.wrapping_add(self.ds.wrapping_mul(k));
        self.t = self.t.wrapping_add(self.dt.wrapping_mul(k));
        for (m, d) in self.m.iter_mut().zip(self.dm) {
            *m = m.wrapping_add(d.wrapping_mul(k));
        }
        self.l = self.l.wrapping_add(self.dl.wrapping_mul(k));
    }

    /// Moves the planes one pixel right.
    #[inline(always)]
    pub(crate) fn step(&mut self) {
        self.q = self.q.wrapping_add(self.dq);
        self.s = self.s.wrapping_add(self.ds);
        self.t = self.t.wrapping_add(self.dt);
        for (m, d) in self.m.iter_mut().zip(self.dm) {
            *m = m.wrapping_add(d);
        }
        self.l = self.l.wrapping_add(self.dl);
    }

    /// The color at the current pixel.
    #[inline(always)]
    pub(crate) fn color(&self) -> Rgb {
        // Linear factor × vertex color, 0xFF00 = 1.
        let m = self.m.map(|m| (m >> 16).clamp(0, 0xFF00) as u32);
        let linear = match self.texture {
            // To 16-bit linear light (× 65535 / 0xFF00).
            None => m.map(|m| (m * 257 + 128) >> 8),
            Some(tex) => {
                // s, t < 2⁴³ and q ≥ 2¹⁶ inside the triangle (see the module documentation).
                let q = (self.q >> 2).max(1);
                let u = (self.s << 20) / q + self.base.0;
                let v = (self.t << 20) / q + self.base.1;
                modulate(tex.sample(&self.sampler, u, v), m)
            }
        };
        let l = (self.l >> 16).clamp(0, 0xFF00) as u32;
        // sRGB code × light level / 0xFF00, rounded.
        let lit = |x: u32| ((u32::from(srgb::encode(x)) * l + 0x7F80) / 0xFF00) as u8;
        Rgb::new(lit(linear[0]), lit(linear[1]), lit(linear[2]))
    }
}

/// `⌊v⌋` as an integer (saturating).
#[inline]
fn floor_i32<R: Real>(v: R) -> i32 {
    let i = v.trunc_i32();
    if R::from_i32(i) > v {
        i.saturating_sub(1)
    } else {
        i
    }
}

/// Bits of the largest texel-space coordinate (after the offset) a triangle keeps.
const SPAN_BITS: u32 = 18;
/// Fractional bits of `q`.
const Q_BITS: u32 = 22;

/// One axis of a triangle's texture mapping: the texel-space value times `q` at each vertex,
/// and the texel-space offset taken out (8 fractional bits).
#[inline]
fn axis<R: Real>(c: [R; 3], q: [i64; 3], size: u32, wrap: Wrap) -> ([i32; 3], i64) {
    let mut o = floor_i32(c[0].min(c[1]).min(c[2]));
    if wrap == Wrap::MirroredRepeat {
        o -= o.rem_euclid(2);
    }
    let limit = R::from_i32(((1i32 << SPAN_BITS) / size.max(1) as i32).clamp(1, 32767));
    let origin = R::from_i32(o);
    let mut out = [0i32; 3];
    for k in 0..3 {
        let rel = (c[k] - origin).clamp(R::ZERO, limit);
        // 20 fractional bits × size (≤ 2¹²) → 8 fractional bits of a texel.
        let texel = (to_fixed(rel, 20) * size as i64 + (1 << 11)) >> 12;
        out[k] = ((texel * q[k]) >> Q_BITS) as i32;
    }
    (out, (o as i64 * size as i64) << TEXEL_FRAC_BITS)
}

/// Fills a textured triangle of positive area (see [`orient`](super::triangle::orient)).
fn fill_textured<R: Real, S: Sink>(
    sink: &mut S,
    v: &[TexVertex<R>; 3],
    texture: Option<&Texture<'_>>,
    sampler: Sampler,
) {
    let sv = [v[0].sv, v[1].sv, v[2].sv];
    let Some(mut cov) = Coverage::new(sink, &sv) else { return };
    let zp = cov.plane(sv[0].z, sv[1].z, sv[2].z);
    // The linear color before lighting and the light level, per vertex (levels ×256).
    let mp = [0, 1, 2].map(|c| cov.plane(v[0].a.rgb[c], v[1].a.rgb[c], v[2].a.rgb[c]));
    let lp = cov.plane(sv[0].s, sv[1].s, sv[2].s);
    let (mut qp, mut sp, mut tp, mut base) = (zp, zp, zp, (0, 0));
    if let Some(tex) = texture {
        let w_min = v[0].w.min(v[1].w).min(v[2].w);
        let q = v.map(|x| {
            let r = if x.w > R::ZERO { w_min / x.w } else { R::ONE };
            to_fixed(r, Q_BITS).clamp(1, 1 << Q_BITS)
        });
        let (s, bu) = axis(v.map(|x| x.a.uv[0]), q, tex.width(), sampler.wrap_s);
        let (t, bv) = axis(v.map(|x| x.a.uv[1]), q, tex.height(), sampler.wrap_t);
        qp = cov.plane(q[0] as i32, q[1] as i32, q[2] as i32);
        sp = cov.plane(s[0], s[1], s[2]);
        tp = cov.plane(t[0], t[1], t[2]);
        base = (bu, bv);
    }
    let (mut z_row, mut q_row, mut s_row, mut t_row) = (zp.start, qp.start, sp.start, tp.start);
    let mut m_row = mp.map(|p| p.start);
    let mut l_row = lp.start;
    cov.rows(|y, x0, cols| {
        if let Some((lo, hi)) = cols {
            let span = super::target::Span {
                y,
                x0: x0 + lo as i32,
                x1: x0 + hi as i32 + 1,
                z: z_row.wrapping_add(zp.dx.wrapping_mul(lo)),
                dz: zp.dx,
                s: 0,
                ds: 0,
            };
            let mut ts = TexSpan {
                q: q_row,
                dq: qp.dx,
                s: s_row,
                ds: sp.dx,
                t: t_row,
                dt: tp.dx,
                m: m_row,
                dm: mp.map(|p| p.dx),
                l: l_row,
                dl: lp.dx,
                base,
                texture,
                sampler,
            };
            ts.skip(lo);
            sink.span_textured(&span, &ts);
        }
        z_row = z_row.wrapping_add(zp.dy);
        q_row = q_row.wrapping_add(qp.dy);
        s_row = s_row.wrapping_add(sp.dy);
        t_row = t_row.wrapping_add(tp.dy);
        for (m, p) in m_row.iter_mut().zip(&mp) {
            *m = m.wrapping_add(p.dy);
        }
        l_row = l_row.wrapping_add(lp.dy);
    });
}

/// Culls and orders a textured triangle like [`orient`](super::triangle::orient).
#[inline]
fn orient_textured<R: Copy>(v: [TexVertex<R>; 3], cull: Cull) -> Option<[TexVertex<R>; 3]> {
    orient_by(v, area2(&[v[0].sv, v[1].sv, v[2].sv]), cull)
}

/// The clip-space `w` of model-space point `p`.
#[inline(always)]
fn clip_w<R: Real>(mvp: &Mat4<R>, p: Vec3<R>) -> R {
    let c = &mvp.cols;
    c[0][3] * p.x + c[1][3] * p.y + c[2][3] * p.z + c[3][3]
}

/// The linear color of vertex `i` before lighting (factor × vertex color, levels ×256).
#[inline]
fn vertex_rgb<R>(m: &TexturedMesh<'_, R>, i: usize) -> [i32; 3] {
    let f = m.mesh.color;
    let c = m.colors.and_then(|c| c.get(i)).copied().unwrap_or([255; 4]);
    let ch = |f: u8, c: u8| ((f as u32 * c as u32 * 256 + 127) / 255) as i32;
    [ch(f.r, c[0]), ch(f.g, c[1]), ch(f.b, c[2])]
}

/// Primitive and raster stages of a validated, projected textured mesh.
pub(crate) fn draw_textured<R: Real, S: Sink>(
    sink: &mut S,
    tm: &TexturedMesh<'_, R>,
    renderer: &Renderer<R>,
    vp: &Viewport<R>,
    cache: &[CachedVertex],
) {
    let mesh = &tm.mesh;
    let mvp = renderer.view_proj * mesh.model;
    let l = light_in_model(&mesh.model, &renderer.light);
    let (r0, r1) = sink.rows();
    let (band_top, band_bottom) = ((r0 as i64) << SUBPIXEL_BITS, (r1 as i64) << SUBPIXEL_BITS);
    let pos = |i: usize| mesh.positions.get(i).copied().unwrap_or(Vec3::ZERO);
    let flat = mesh.shading == Shading::Flat;
    let texture = tm.texture.as_ref();
    let attr = |i: usize| TexAttr {
        uv: if texture.is_some() { tm.texcoords.get(i).copied().unwrap_or([R::ZERO; 2]) } else { [R::ZERO; 2] },
        rgb: vertex_rgb(tm, i),
    };
    for tri in 0..mesh.indices.len() / 3 {
        let Some(([i0, i1, i2], [a, b, c])) = mesh.indices.cached_triangle(tri, cache) else { continue };
        let (oa, ob, oc) = (a.outcode(), b.outcode(), c.outcode());
        if oa & ob & oc != 0 || (oa | ob | oc) & OUT_INVALID != 0 {
            continue;
        }
        let idx = [i0, i1, i2];
        let face = || face_shade(&renderer.light, l, pos(i0), pos(i1), pos(i2)) as i32;
        if (oa | ob | oc) == 0 {
            let (ymin, ymax) = (a.y().min(b.y()).min(c.y()) as i64, a.y().max(b.y()).max(c.y()) as i64);
            if ymax < band_top || ymin >= band_bottom {
                continue;
            }
            let cached = [a, b, c];
            let v =
                [0, 1, 2].map(|k| TexVertex { sv: cached[k].screen(), w: clip_w(&mvp, pos(idx[k])), a: attr(idx[k]) });
            let Some(mut v) = orient_textured(v, renderer.cull) else { continue };
            if pixel_bounds(sink, &[v[0].sv, v[1].sv, v[2].sv]).is_none() {
                continue;
            }
            if flat {
                let s = face();
                v.iter_mut().for_each(|v| v.sv.s = s);
            }
            fill_textured(sink, &v, texture, tm.sampler);
        } else {
            let shades = [a.shade(), b.shade(), c.shade()];
            let tri =
                [0, 1, 2].map(|k| ClipVertex { c: to_clip(&mvp, pos(idx[k])), s: shades[k] as i32, a: attr(idx[k]) });
            let poly = clip_triangle(vp, tri, oa | ob | oc);
            let verts = poly.vertices();
            let Some(first) = verts.first() else { continue };
            let proj = |p: &ClipVertex<R, TexAttr<R>>| TexVertex { sv: vp.project(&p.c, p.s), w: p.c.w, a: p.a };
            let p0 = proj(first);
            let mut flat_shade = None;
            for pair in verts.get(1..).unwrap_or(&[]).windows(2) {
                let Some(mut v) = orient_textured([p0, proj(&pair[0]), proj(&pair[1])], renderer.cull) else {
                    continue;
                };
                if pixel_bounds(sink, &[v[0].sv, v[1].sv, v[2].sv]).is_none() {
                    continue;
                }
                if flat {
                    let s = *flat_shade.get_or_insert_with(face);
                    v.iter_mut().for_each(|v| v.sv.s = s);
                }
                fill_textured(sink, &v, texture, tm.sampler);
            }
        }
    }
}
