//! Textured meshes: a perspective quad against a brute-force perspective-correct reference (f32
//! and Q16), filters and wrap modes, vertex colors, band equality with clipping, validation.

extern crate std;

use std::vec;
use std::vec::Vec;

use super::super::srgb::tests::exact as srgb_exact;
use super::super::texture::wrap;
use super::super::{
    BandBuffer, CachedVertex, Cull, Depth16, Depth32, Draw, Filter, Indices, Mesh, PixelFormat, RasterError, Renderer,
    Rgb, Rgb565, Sampler, Shading, Target, TexelFormat, Texture, TexturedMesh, Wrap, Xrgb8888,
};
use super::Rng;
use crate::math::{Mat4, Vec3};
use crate::real::Real;
use crate::Q16;

/// An 8 × 8 RGBA texture whose texel `(x, y)` is `(32x + 16, 32y + 16, 200 − 24((x + y) % 8))`:
/// every texel distinct.
fn grid_texels() -> Vec<u8> {
    let mut t = Vec::new();
    for y in 0..8u8 {
        for x in 0..8u8 {
            t.extend_from_slice(&[x * 32 + 16, y * 32 + 16, 200 - 24 * ((x + y) % 8), 255]);
        }
    }
    t
}

fn texel_color(x: u32, y: u32) -> Rgb {
    Rgb::new(x as u8 * 32 + 16, y as u8 * 32 + 16, 200 - 24 * ((x + y) % 8) as u8)
}

/// A floor quad receding from the camera (strong perspective) with texture coordinates
/// `(0, 0)` to `(1, 1)` at its corners.
const QUAD: [[f32; 3]; 4] = [[-1.0, 0.0, 1.0], [1.0, 0.0, 1.0], [-1.0, 0.0, -6.0], [1.0, 0.0, -6.0]];
const QUAD_UV: [[f32; 2]; 4] = [[0.0, 1.0], [1.0, 1.0], [0.0, 0.0], [1.0, 0.0]];
const QUAD_IDX: [u16; 6] = [0, 1, 2, 2, 1, 3];

fn quad_camera<R: Real>(w: u32, h: u32) -> Mat4<R> {
    let v = |a: f32, b: f32, c: f32| Vec3::new(R::from_f32(a), R::from_f32(b), R::from_f32(c));
    let proj = Mat4::perspective_rh_gl(
        R::from_f32(1.0),
        R::from_f32(w as f32 / h as f32),
        R::from_f32(0.1),
        R::from_f32(20.0),
    );
    proj * Mat4::look_at_rh(v(0.0, 0.8, 2.2), v(0.0, 0.0, -1.5), Vec3::Y)
}

/// The exact texture coordinates at the center of pixel `(px, py)` on the quad's plane (in
/// f64, from the clip coordinates of its corners), or `None` off the quad.
fn reference_uv(vp: &Mat4<f32>, w: u32, h: u32, px: u32, py: u32) -> Option<(f64, f64)> {
    let clip = |p: [f32; 3]| -> [f64; 4] {
        let c = &vp.cols;
        let mut out = [0.0; 4];
        for (r, o) in out.iter_mut().enumerate() {
            *o = c[0][r] as f64 * p[0] as f64
                + c[1][r] as f64 * p[1] as f64
                + c[2][r] as f64 * p[2] as f64
                + c[3][r] as f64;
        }
        out
    };
    // The quad is P(u, v) = A + u·(B − A) + (1 − v)·(C − A) with A = corner 0 (uv (0, 1)).
    let (a, b, c) = (clip(QUAD[0]), clip(QUAD[1]), clip(QUAD[2]));
    let du: [f64; 4] = core::array::from_fn(|k| b[k] - a[k]);
    let dv: [f64; 4] = core::array::from_fn(|k| c[k] - a[k]);
    let x = (px as f64 + 0.5) / w as f64 * 2.0 - 1.0;
    let y = 1.0 - (py as f64 + 0.5) / h as f64 * 2.0;
    // x·Cw − Cx = 0 and y·Cw − Cy = 0, linear in (s, t) = (u, 1 − v).
    let row = |n: f64, k: usize| (n * a[3] - a[k], n * du[3] - du[k], n * dv[3] - dv[k]);
    let (c0, a0, b0) = row(x, 0);
    let (c1, a1, b1) = row(y, 1);
    let det = a0 * b1 - b0 * a1;
    let s = (-c0 * b1 + b0 * c1) / det;
    let t = (-a0 * c1 + c0 * a1) / det;
    ((0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&t)).then_some((s, 1.0 - t))
}

/// Renders the quad with nearest filtering, unlit, into a `w × h` XRGB frame (black clear).
fn render_quad<R: Real>(w: u32, h: u32, texels: &[u8]) -> Vec<u32> {
    render_quad_with::<R>(w, h, texels, Filter::Nearest)
}

/// Renders the quad with `filter` (repeat wrap), unlit, into a `w × h` XRGB frame.
fn render_quad_with<R: Real>(w: u32, h: u32, texels: &[u8], filter: Filter) -> Vec<u32> {
    let pos: Vec<Vec3<R>> =
        QUAD.iter().map(|p| Vec3::new(R::from_f32(p[0]), R::from_f32(p[1]), R::from_f32(p[2]))).collect();
    let uv: Vec<[R; 2]> = QUAD_UV.iter().map(|t| [R::from_f32(t[0]), R::from_f32(t[1])]).collect();
    let texture = Texture::new(texels, 8, 8, TexelFormat::Rgba8).unwrap();
    let mesh = Mesh { shading: Shading::Unlit, ..Mesh::new(&pos, None, Indices::U16(&QUAD_IDX), Rgb::WHITE) };
    let tm =
        TexturedMesh { sampler: Sampler { filter, ..Sampler::default() }, ..TexturedMesh::new(mesh, &uv, texture) };
    let mut color = vec![0u32; (w * h) as usize];
    let mut depth = vec![0u32; (w * h) as usize];
    let mut t = Target::<Xrgb8888, Depth32>::new(&mut color, Some(&mut depth), w, h, w as usize).unwrap();
    t.clear(Rgb::BLACK);
    let mut scratch = [CachedVertex::default(); 4];
    Renderer { cull: Cull::None, ..Renderer::new(quad_camera::<R>(w, h)) }
        .render(&mut t, &[Draw::Textured(tm)], &mut scratch)
        .unwrap();
    color
}

/// Pixels the reference comparisons check: every one natively; under miri, which checks the
/// renderer's memory accesses and runs the f64 reference far slower than native code, every
/// fourth row and column (the render is still the whole frame).
const STRIDE: usize = if cfg!(miri) { 4 } else { 1 };

/// The least pixel count a comparison must check: 1,000 of the whole frame, or the same share
/// of the pixels [`STRIDE`] leaves.
const MIN_CHECKED: usize = 1000 / (STRIDE * STRIDE);

/// Compares a render of the quad with the reference: returns (pixels checked, pixels whose
/// texel differs although the reference point is more than `margin` texels from a texel edge).
fn compare_with_reference(frame: &[u32], w: u32, h: u32, margin: f64) -> (usize, usize) {
    let vp = quad_camera::<f32>(w, h);
    let (mut checked, mut wrong) = (0, 0);
    for py in (0..h).step_by(STRIDE) {
        for px in (0..w).step_by(STRIDE) {
            let Some((u, v)) = reference_uv(&vp, w, h, px, py) else { continue };
            let (tu, tv) = (u * 8.0, v * 8.0);
            let near_edge = |c: f64| (c - c.round()).abs() < margin;
            if near_edge(tu) || near_edge(tv) {
                continue;
            }
            let want = texel_color((tu.floor() as u32).min(7), (tv.floor() as u32).min(7));
            checked += 1;
            if frame[(py * w + px) as usize] != Xrgb8888::pack(want) {
                wrong += 1;
            }
        }
    }
    (checked, wrong)
}

#[test]
fn quad_is_mapped_perspective_correctly() {
    let (w, h) = (96, 64);
    let texels = grid_texels();
    let frame = render_quad::<f32>(w, h, &texels);
    let (checked, wrong) = compare_with_reference(&frame, w, h, 0.02);
    assert!(checked > MIN_CHECKED, "only {checked} pixels checked");
    assert_eq!(wrong, 0, "{wrong} of {checked} pixels read the wrong texel");
    // An affine (screen-linear) mapping would be far off: the rows of texels are not evenly
    // spaced on screen. The far half of the quad (v < 0.5) covers fewer rows than the near half.
    let vp = quad_camera::<f32>(w, h);
    let rows_with = |far: bool| {
        (0..h)
            .step_by(STRIDE)
            .filter(|&py| (0..w).any(|px| reference_uv(&vp, w, h, px, py).is_some_and(|(_, v)| (v < 0.5) == far)))
            .count()
    };
    assert!(rows_with(true) * 2 < rows_with(false), "the test quad needs strong perspective");
}

/// The f64 bilinear sample of the grid texture (repeat wrap) at `(u, v)`, channel `k`.
fn reference_bilinear(u: f64, v: f64, k: usize) -> f64 {
    let (x, y) = (u * 8.0 - 0.5, v * 8.0 - 0.5);
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let at = |i: f64, j: f64| {
        let c = texel_color((i as i64).rem_euclid(8) as u32, (j as i64).rem_euclid(8) as u32);
        [c.r, c.g, c.b][k] as f64
    };
    let top = at(x0, y0) * (1.0 - fx) + at(x0 + 1.0, y0) * fx;
    let bottom = at(x0, y0 + 1.0) * (1.0 - fx) + at(x0 + 1.0, y0 + 1.0) * fx;
    top * (1.0 - fy) + bottom * fy
}

#[test]
fn bilinear_quad_matches_the_reference_in_f32_and_q16() {
    // The rasterizer snaps vertices to 1/16 pixel and carries texel coordinates in 1/256
    // texel, so a pixel's texture point is off the exact one by a few hundredths of a texel
    // where a texel spans a pixel or two: each channel must be within `slack` texels (times its
    // local slope) and 1.5 levels of the exact bilinear value.
    let (w, h) = (96, 64);
    let texels = grid_texels();
    let vp = quad_camera::<f32>(w, h);
    for (name, frame, slack) in [
        ("f32", render_quad_with::<f32>(w, h, &texels, Filter::Bilinear), 0.04),
        ("Q16", render_quad_with::<Q16>(w, h, &texels, Filter::Bilinear), 0.08),
    ] {
        let (mut checked, mut exact) = (0, 0);
        for py in (0..h).step_by(STRIDE) {
            for px in (0..w).step_by(STRIDE) {
                let Some((u, v)) = reference_uv(&vp, w, h, px, py) else { continue };
                // Pixels on the quad's outline may be covered or not.
                if [u, v].iter().any(|c| *c < 0.01 || *c > 0.99) {
                    continue;
                }
                let got = frame[(py * w + px) as usize];
                for k in 0..3 {
                    let g = ((got >> (16 - 8 * k)) & 255) as f64;
                    let want = reference_bilinear(u, v, k);
                    let d = 0.01 / 8.0;
                    let slope = ((reference_bilinear(u + d, v, k) - reference_bilinear(u - d, v, k)).abs()
                        + (reference_bilinear(u, v + d, k) - reference_bilinear(u, v - d, k)).abs())
                        / 0.02;
                    let e = (g - want).abs();
                    assert!(e <= 1.5 + slope * slack, "{name}: pixel ({px}, {py}) channel {k} is {g}, want {want:.2}");
                    exact += usize::from(e <= 1.0);
                }
                checked += 1;
            }
        }
        assert!(checked > MIN_CHECKED, "{name}: only {checked} pixels checked");
        assert!(exact * 10 >= checked * 3 * 9, "{name}: only {exact} of {} channels within a level", checked * 3);
    }
}

#[test]
fn q16_quad_matches_the_reference_but_for_rounding() {
    let (w, h) = (96, 64);
    let texels = grid_texels();
    let frame = render_quad::<Q16>(w, h, &texels);
    let (checked, wrong) = compare_with_reference(&frame, w, h, 0.06);
    assert!(checked > MIN_CHECKED, "only {checked} pixels checked");
    assert!(wrong * 200 <= checked, "{wrong} of {checked} pixels read the wrong texel");
}

#[test]
fn wrap_modes_and_filters() {
    for (mode, want) in [
        (Wrap::Repeat, [2, 3, 0, 1, 2, 3, 0, 1]),
        (Wrap::ClampToEdge, [0, 0, 0, 1, 2, 3, 3, 3]),
        (Wrap::MirroredRepeat, [1, 0, 0, 1, 2, 3, 3, 2]),
    ] {
        let got: Vec<u32> = (-2..6).map(|i| wrap(mode, i, 4)).collect();
        assert_eq!(got, want, "{mode:?}");
    }
    // 2 × 1: black and white.
    let texels = [0, 0, 0, 255, 255, 255, 255, 255];
    let t = Texture::new(&texels, 2, 1, TexelFormat::Rgba8).unwrap();
    let clamp = Sampler { wrap_s: Wrap::ClampToEdge, wrap_t: Wrap::ClampToEdge, filter: Filter::Bilinear };
    let at = |s: &Sampler, u: f32| t.sample(s, (u * 2.0 * 256.0) as i64, 128)[0];
    // Texel centers are exact; halfway between them is the mean; beyond the centers, clamped.
    assert_eq!(at(&clamp, 0.25), 0);
    assert_eq!(at(&clamp, 0.75), 255 << 8);
    assert_eq!(at(&clamp, 0.5), 255 << 7);
    assert_eq!(at(&clamp, 0.05), 0);
    // Repeat blends across the seam; nearest picks the texel the point is in.
    let repeat = Sampler { filter: Filter::Bilinear, ..Sampler::default() };
    assert_eq!(at(&repeat, 0.0), 255 << 7);
    let nearest = Sampler { filter: Filter::Nearest, ..Sampler::default() };
    assert_eq!((at(&nearest, 0.49), at(&nearest, 0.51), at(&nearest, 1.2)), (0, 255 << 8, 0));
    // RGB565 texels widen like the RGB565 pixel format.
    let raw = Rgb565::pack(Rgb::new(200, 100, 50)).to_le_bytes();
    let t565 = Texture::new(&raw, 1, 1, TexelFormat::Rgb565).unwrap();
    let c = Rgb565::unpack(Rgb565::pack(Rgb::new(200, 100, 50)));
    assert_eq!(t565.sample(&nearest, 0, 0), [c.r as u32 * 256, c.g as u32 * 256, c.b as u32 * 256]);
}

/// The sRGB encoding of linear `x` in `[0, 1]`, as an 8-bit code (IEC 61966-2-1, in f64).
fn srgb_code(x: f64) -> u8 {
    let s = if x <= 0.0031308 { x * 12.92 } else { 1.055 * x.powf(1.0 / 2.4) - 0.055 };
    (s * 255.0).round().clamp(0.0, 255.0) as u8
}

#[test]
fn vertex_colors_and_factor_multiply_the_texture_in_linear_light() {
    // A full-screen triangle pair, unlit, one texel (200, 120, 40) in sRGB; vertex colors all
    // (128, 255, 64) and a factor of (255, 204, 128), both linear: every pixel is
    // srgb(linear(texel) × factor × vertex color), or srgb(factor × vertex color) untextured.
    let pos: [Vec3<f32>; 4] =
        [Vec3::new(-1.0, -1.0, 0.0), Vec3::new(1.0, -1.0, 0.0), Vec3::new(-1.0, 1.0, 0.0), Vec3::new(1.0, 1.0, 0.0)];
    let uv = [[0.0f32, 0.0]; 4];
    let (texel, vertex, factor) = ([200u8, 120, 40], [128u8, 255, 64], [255u8, 204, 128]);
    let colors = [[vertex[0], vertex[1], vertex[2], 255]; 4];
    let texels = [texel[0], texel[1], texel[2], 255];
    let texture = Texture::new(&texels, 1, 1, TexelFormat::Rgba8).unwrap();
    let mesh = Mesh {
        shading: Shading::Unlit,
        ..Mesh::new(&pos, None, Indices::U16(&QUAD_IDX), Rgb::new(factor[0], factor[1], factor[2]))
    };
    for texture in [Some(texture), None] {
        let expect: [u8; 3] = core::array::from_fn(|k| {
            let t = if texture.is_some() { srgb_exact(texel[k]) } else { 1.0 };
            srgb_code(t * f64::from(factor[k]) / 255.0 * f64::from(vertex[k]) / 255.0)
        });
        let tm = TexturedMesh {
            colors: Some(&colors),
            texture,
            ..TexturedMesh::new(mesh, &uv, texture.unwrap_or(texture_white()))
        };
        let mut color = [0u32; 64];
        let mut t = Target::<Xrgb8888, Depth16>::new(&mut color, None, 8, 8, 8).unwrap();
        Renderer::new(Mat4::IDENTITY).render(&mut t, &[Draw::Textured(tm)], &mut [CachedVertex::default(); 4]).unwrap();
        for &p in t.pixels() {
            let got = Xrgb8888::unpack(p);
            let got = [got.r, got.g, got.b];
            assert!(got.iter().zip(expect).all(|(g, e)| g.abs_diff(e) <= 1), "{got:?}, expected {expect:?}");
        }
        // Multiplying the sRGB values instead would give (100, 96, 5).
        if texture.is_some() {
            assert_eq!(expect, [147, 108, 9]);
        }
    }
}

/// A 1 × 1 white texture.
fn texture_white() -> Texture<'static> {
    Texture::new(&[255; 4], 1, 1, TexelFormat::Rgba8).unwrap()
}

#[test]
fn textured_meshes_are_validated() {
    let pos = [Vec3::<f32>::ZERO; 3];
    let idx = [0u16, 1, 2];
    let texels = [0u8; 16];
    let texture = Texture::new(&texels, 2, 2, TexelFormat::Rgba8).unwrap();
    let mesh = Mesh::new(&pos, None, Indices::U16(&idx), Rgb::WHITE);
    let uv = [[0.0f32; 2]; 2];
    let r = Renderer::new(Mat4::IDENTITY);
    assert_eq!(
        r.validate(&[Draw::Textured(TexturedMesh::new(mesh, &uv, texture))], 3),
        Err(RasterError::MissingTexcoords)
    );
    let uv3 = [[0.0f32; 2]; 3];
    let colors = [[0u8; 4]; 2];
    let tm = TexturedMesh { colors: Some(&colors), ..TexturedMesh::new(mesh, &uv3, texture) };
    assert_eq!(r.validate(&[Draw::Textured(tm)], 3), Err(RasterError::MissingColors));
    assert_eq!(
        r.validate(&[Draw::Textured(TexturedMesh::new(mesh, &uv3, texture))], 2),
        Err(RasterError::ScratchTooSmall)
    );
    assert_eq!(Texture::new(&texels, 3, 2, TexelFormat::Rgba8), Err(RasterError::InvalidTexture));
    assert_eq!(Texture::new(&texels, 0, 2, TexelFormat::Rgb565), Err(RasterError::InvalidTexture));
    assert_eq!(Texture::new(&texels, 4097, 1, TexelFormat::Rgb565).err(), Some(RasterError::InvalidTexture));
    assert!(Texture::new(&texels, 4, 2, TexelFormat::Rgb565).is_ok());
}

/// Random textured triangles crossing the near plane and the borders, with texture coordinates
/// far outside `[0, 1]`, vertex colors, every wrap mode and both filters.
struct TexScene<R> {
    pos: Vec<Vec3<R>>,
    nrm: Vec<Vec3<R>>,
    uv: Vec<[R; 2]>,
    colors: Vec<[u8; 4]>,
    idx: Vec<u16>,
    texels: Vec<u8>,
    texels565: Vec<u8>,
}

impl TexScene<f32> {
    fn random(seed: u32, tris: usize) -> Self {
        let mut rng = Rng(seed);
        let (mut pos, mut nrm, mut uv, mut colors) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..tris {
            let c = [rng.f(-3.0, 3.0), rng.f(-2.0, 2.0), rng.f(-3.0, 4.8)];
            let o = [rng.f(-40.0, 40.0), rng.f(-40.0, 40.0)];
            for _ in 0..3 {
                pos.push(Vec3::new(c[0] + rng.f(-1.5, 1.5), c[1] + rng.f(-1.5, 1.5), c[2] + rng.f(-1.5, 1.5)));
                nrm.push(Vec3::new(rng.f(-1.0, 1.0), rng.f(-1.0, 1.0), rng.f(-1.0, 1.0)));
                uv.push([o[0] + rng.f(-3.0, 3.0), o[1] + rng.f(-3.0, 3.0)]);
                colors.push([rng.range(0, 256) as u8, rng.range(0, 256) as u8, rng.range(0, 256) as u8, 255]);
            }
        }
        let idx = (0..pos.len() as u16).collect();
        let texels: Vec<u8> = (0..5 * 3 * 4).map(|_| rng.range(0, 256) as u8).collect();
        let texels565: Vec<u8> = (0..5 * 3 * 2).map(|_| rng.range(0, 256) as u8).collect();
        TexScene { pos, nrm, uv, colors, idx, texels, texels565 }
    }

    /// The same scene in another scalar type.
    fn to<R: Real>(&self) -> TexScene<R> {
        let v = |p: &Vec3<f32>| Vec3::new(R::from_f32(p.x), R::from_f32(p.y), R::from_f32(p.z));
        TexScene {
            pos: self.pos.iter().map(v).collect(),
            nrm: self.nrm.iter().map(v).collect(),
            uv: self.uv.iter().map(|t| [R::from_f32(t[0]), R::from_f32(t[1])]).collect(),
            colors: self.colors.clone(),
            idx: self.idx.clone(),
            texels: self.texels.clone(),
            texels565: self.texels565.clone(),
        }
    }
}

impl<R: Real> TexScene<R> {
    fn draws(&self) -> Vec<Draw<'_, R>> {
        let third = self.pos.len() / 3 / 3 * 3;
        let tex = Texture::new(&self.texels, 5, 3, TexelFormat::Rgba8).unwrap();
        let tex565 = Texture::new(&self.texels565, 5, 3, TexelFormat::Rgb565).unwrap();
        let part = |k: usize, texture, sampler, shading| {
            let r = k * third..(k + 1) * third;
            let mesh = Mesh {
                shading,
                ..Mesh::new(
                    &self.pos[r.clone()],
                    Some(&self.nrm[r.clone()]),
                    Indices::U16(&self.idx[..third]),
                    Rgb::new(250, 220, 200),
                )
            };
            Draw::Textured(TexturedMesh {
                mesh,
                texcoords: &self.uv[r.clone()],
                colors: Some(&self.colors[r]),
                texture,
                sampler,
            })
        };
        let s = |wrap_s, wrap_t, filter| Sampler { wrap_s, wrap_t, filter };
        vec![
            part(0, Some(tex), s(Wrap::Repeat, Wrap::MirroredRepeat, Filter::Bilinear), Shading::Smooth),
            part(1, Some(tex565), s(Wrap::ClampToEdge, Wrap::Repeat, Filter::Nearest), Shading::Flat),
            part(2, Some(tex), s(Wrap::MirroredRepeat, Wrap::ClampToEdge, Filter::Bilinear), Shading::Smooth),
            Draw::Mesh(Mesh::new(&self.pos[..third], None, Indices::U16(&self.idx[..third]), Rgb::new(90, 200, 250))),
        ]
    }
}

fn render<C: PixelFormat, R: Real>(
    scene: &[Draw<'_, R>],
    r: &Renderer<R>,
    w: u32,
    h: u32,
    rows: Option<u32>,
) -> Vec<C::Raw> {
    let mut scratch = vec![CachedVertex::default(); Renderer::scratch_len(scene)];
    let n = (w * h) as usize;
    let mut frame = vec![C::Raw::default(); n];
    match rows {
        None => {
            let mut depth = vec![0u16; n];
            let mut t = Target::<C, Depth16>::new(&mut frame, Some(&mut depth), w, h, w as usize).unwrap();
            t.clear(Rgb::new(20, 30, 40));
            r.render(&mut t, scene, &mut scratch).unwrap();
        }
        Some(rows) => {
            let mut color = vec![C::Raw::default(); (w * rows) as usize];
            let mut depth = vec![0u16; (w * rows) as usize];
            let mut bands = BandBuffer::<C, Depth16>::new(&mut color, Some(&mut depth), w, h, rows).unwrap();
            r.render_bands(&mut bands, scene, &mut scratch, Rgb::new(20, 30, 40), |y0, px| {
                frame[(y0 * w) as usize..][..px.len()].copy_from_slice(px);
            })
            .unwrap();
        }
    }
    frame
}

#[test]
fn textured_bands_equal_the_full_frame() {
    // Under miri, a quarter of the frame (odd sizes still, so bands end mid-frame).
    let (w, h) = if cfg!(miri) { (41, 31) } else { (83, 61) };
    let proj = Mat4::perspective_rh_gl(1.1f32, w as f32 / h as f32, 0.5, 30.0);
    let r = Renderer {
        cull: Cull::None,
        ..Renderer::new(proj * Mat4::look_at_rh(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, Vec3::Y))
    };
    // Under miri (about 10 s a frame at full size), one seed and fewer band heights.
    for &seed in if cfg!(miri) { &[3u32][..] } else { &[3u32, 99, 2024][..] } {
        let scene = TexScene::random(seed, 24);
        let draws = scene.draws();
        let full = render::<Xrgb8888, f32>(&draws, &r, w, h, None);
        let textured = full.iter().filter(|&&p| p != Xrgb8888::pack(Rgb::new(20, 30, 40))).count();
        assert!(textured * 83 * 61 > 500 * (w * h) as usize, "seed {seed}: {textured} pixels drawn");
        for &rows in if cfg!(miri) { &[5u32][..] } else { &[1u32, 5, 16][..] } {
            assert_eq!(render::<Xrgb8888, f32>(&draws, &r, w, h, Some(rows)), full, "seed {seed}, rows {rows}");
        }
        let full565 = render::<Rgb565, f32>(&draws, &r, w, h, None);
        assert_eq!(render::<Rgb565, f32>(&draws, &r, w, h, Some(7)), full565, "seed {seed}, RGB565");
        // Q16.16: bands equal the full frame too, and the frame is close to f32's.
        let scene_q = scene.to::<Q16>();
        let draws_q = scene_q.draws();
        let rq = Renderer { cull: Cull::None, ..Renderer::new(mat_to::<Q16>(&r.view_proj)) };
        let full_q = render::<Xrgb8888, Q16>(&draws_q, &rq, w, h, None);
        for &rows in if cfg!(miri) { &[9u32][..] } else { &[1u32, 9][..] } {
            assert_eq!(
                render::<Xrgb8888, Q16>(&draws_q, &rq, w, h, Some(rows)),
                full_q,
                "Q16 seed {seed}, rows {rows}"
            );
        }
        let same = full.iter().zip(&full_q).filter(|(a, b)| a == b).count();
        let close = full.iter().zip(&full_q).filter(|(&a, &b)| channel_diff(a, b) <= 8).count();
        assert!(same * 10 >= full.len() * 8, "seed {seed}: only {same} of {} pixels equal in Q16", full.len());
        assert!(close * 100 >= full.len() * 97, "seed {seed}: only {close} of {} pixels close in Q16", full.len());
    }
}

/// The largest channel difference of two XRGB pixels.
fn channel_diff(a: u32, b: u32) -> u32 {
    (0..3).map(|k| ((a >> (8 * k)) & 255).abs_diff((b >> (8 * k)) & 255)).max().unwrap_or(0)
}

fn mat_to<R: Real>(m: &Mat4<f32>) -> Mat4<R> {
    Mat4 { cols: m.cols.map(|c| c.map(R::from_f32)) }
}
