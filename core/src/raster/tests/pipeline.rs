//! Whole-pipeline tests: vertex stage, clipping, culling, depth, shading, overlays, formats,
//! bands, the Q16.16 path, and argument validation.

extern crate std;

use std::vec;
use std::vec::Vec;

use super::super::{
    BandBuffer, CachedVertex, Cull, Depth16, Depth32, DepthFormat, Draw, Indices, Light, Lines, Mesh, PixelFormat,
    Points, RasterError, Renderer, Rgb, Rgb565, Shading, Target, Xrgb8888,
};
use super::{assert_patterns_eq, at_px, run, Mock, Rng};
use crate::math::{Mat4, Vec3};
use crate::real::Real;
use crate::Q16;

const RED: Rgb = Rgb::new(255, 0, 0);
const BLUE: Rgb = Rgb::new(0, 0, 255);

/// An unlit mesh with an identity model matrix.
fn unlit<'a, R: Real>(positions: &'a [Vec3<R>], indices: &'a [u16], color: Rgb) -> Mesh<'a, R> {
    Mesh { shading: Shading::Unlit, ..Mesh::new(positions, None, Indices::U16(indices), color) }
}

/// A camera looking from `eye` at the origin, y up, 60° vertical field of view.
fn camera<R: Real>(eye: [f32; 3], aspect: f32, near: f32, far: f32) -> Mat4<R> {
    let v = |a: [f32; 3]| Vec3::new(R::from_f32(a[0]), R::from_f32(a[1]), R::from_f32(a[2]));
    let proj =
        Mat4::perspective_rh_gl(R::PI / R::from_i32(3), R::from_f32(aspect), R::from_f32(near), R::from_f32(far));
    proj * Mat4::look_at_rh(v(eye), Vec3::ZERO, Vec3::Y)
}

#[test]
fn identity_camera_maps_ndc_to_pixels() {
    // Through the vertex stage, NDC (x right, y up) lands on pixels (y down), and the pattern
    // is the raster stage's single-triangle pattern.
    let p: [Vec3<f32>; 3] = [at_px(8, 8, 0.0, 0.0, 0.0), at_px(8, 8, 0.0, 8.0, 0.0), at_px(8, 8, 8.0, 0.0, 0.0)];
    let mut m = Mock::new(8, 8, true);
    run(&mut m, &Renderer::new(Mat4::IDENTITY), &[Draw::Mesh(unlit(&p, &[0, 1, 2], RED))]);
    m.assert_pattern(&[
        "#######.", //
        "######..", //
        "#####...", //
        "####....", //
        "###.....", //
        "##......", //
        "#.......", //
        "........", //
    ]);
}

#[test]
fn back_faces_are_culled_counter_clockwise_is_front() {
    // Counter-clockwise in NDC (y up).
    let p: [Vec3<f32>; 3] = [Vec3::new(-0.8, -0.8, 0.0), Vec3::new(0.8, -0.8, 0.0), Vec3::new(0.0, 0.8, 0.0)];
    let draw = |idx: &[u16], cull: Cull| {
        let mut m = Mock::new(16, 16, true);
        let r = Renderer { cull, ..Renderer::new(Mat4::IDENTITY) };
        run(&mut m, &r, &[Draw::Mesh(unlit(&p, idx, RED))]);
        m.counts.iter().sum::<u32>()
    };
    let n = draw(&[0, 1, 2], Cull::Back);
    assert!(n > 50, "front face drew {n} pixels");
    assert_eq!(draw(&[0, 2, 1], Cull::Back), 0);
    assert_eq!(draw(&[0, 2, 1], Cull::None), n);
    assert_eq!(draw(&[0, 1, 2], Cull::Front), 0);
    assert_eq!(draw(&[0, 2, 1], Cull::Front), n);
}

#[test]
fn nearer_triangle_wins_in_either_order() {
    let (w, h) = (8, 8);
    // A red triangle at depth −0.5 (near) and a blue one at +0.5 overlapping it.
    let near: [Vec3<f32>; 3] = [at_px(w, h, 0.0, 0.0, -0.5), at_px(w, h, 0.0, 8.0, -0.5), at_px(w, h, 8.0, 0.0, -0.5)];
    let far: [Vec3<f32>; 3] = [at_px(w, h, 2.0, 2.0, 0.5), at_px(w, h, 2.0, 8.0, 0.5), at_px(w, h, 8.0, 2.0, 0.5)];
    let expected = [
        "RRRRRRR.", //
        "RRRRRR..", //
        "RRRRRBB.", //
        "RRRRBB..", //
        "RRRBB...", //
        "RRBB....", //
        "R.B.....", //
        "........", //
    ];
    let idx = [0u16, 1, 2];
    let a = Draw::Mesh(unlit(&near, &idx, RED));
    let b = Draw::Mesh(unlit(&far, &idx, BLUE));
    let renderer = Renderer::new(Mat4::IDENTITY);
    let name = |c: Rgb| {
        if c == RED {
            'R'
        } else if c == BLUE {
            'B'
        } else {
            '?'
        }
    };
    for scene in [[a, b], [b, a]] {
        let mut m = Mock::new(w, h, true);
        run(&mut m, &renderer, &scene);
        assert_patterns_eq(&m.color_pattern(name), &expected);
        // The real targets agree, in both depth formats.
        let mut color = vec![0u32; 64];
        let mut d16 = vec![0u16; 64];
        let mut t = Target::<Xrgb8888, Depth16>::new(&mut color, Some(&mut d16), 8, 8, 8).unwrap();
        t.clear(Rgb::BLACK);
        renderer.render(&mut t, &scene, &mut [CachedVertex::default(); 6]).unwrap();
        let mut color32 = vec![0u32; 64];
        let mut d32 = vec![0u32; 64];
        let mut t32 = Target::<Xrgb8888, Depth32>::new(&mut color32, Some(&mut d32), 8, 8, 8).unwrap();
        t32.clear(Rgb::BLACK);
        renderer.render(&mut t32, &scene, &mut [CachedVertex::default(); 6]).unwrap();
        for (i, &c) in m.color.iter().enumerate() {
            let want = if m.counts[i] == 0 { 0 } else { c };
            assert_eq!(color[i], want, "Depth16 pixel {i}");
            assert_eq!(color32[i], want, "Depth32 pixel {i}");
        }
    }
}

/// Ray-cast reference for one triangle seen through `view_proj`: is the pixel-space point
/// `(x, y)` covered by the part of the triangle between the near and far planes?
fn ray_hits(inv: &Mat4<f32>, w: i32, h: i32, x: f64, y: f64, tri: &[Vec3<f32>; 3]) -> bool {
    let xn = (x / w as f64 * 2.0 - 1.0) as f32;
    let yn = (1.0 - y / h as f64 * 2.0) as f32;
    let un = |z: f32| {
        let c = inv.mul_vec4(crate::math::Vec4::new(xn, yn, z, 1.0));
        [c.x as f64 / c.w as f64, c.y as f64 / c.w as f64, c.z as f64 / c.w as f64]
    };
    let (o, f) = (un(-1.0), un(1.0));
    let d = [f[0] - o[0], f[1] - o[1], f[2] - o[2]];
    let v = |p: Vec3<f32>| [p.x as f64, p.y as f64, p.z as f64];
    let (a, b, c) = (v(tri[0]), v(tri[1]), v(tri[2]));
    let sub = |p: [f64; 3], q: [f64; 3]| [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
    let cr =
        |p: [f64; 3], q: [f64; 3]| [p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2], p[0] * q[1] - p[1] * q[0]];
    let dot = |p: [f64; 3], q: [f64; 3]| p[0] * q[0] + p[1] * q[1] + p[2] * q[2];
    // Möller–Trumbore on the segment from the near point to the far point.
    let (e1, e2) = (sub(b, a), sub(c, a));
    let pv = cr(d, e2);
    let det = dot(e1, pv);
    if det.abs() < 1e-12 {
        return false;
    }
    let tv = sub(o, a);
    let u = dot(tv, pv) / det;
    let qv = cr(tv, e1);
    let vv = dot(d, qv) / det;
    let t = dot(e2, qv) / det;
    u >= 0.0 && vv >= 0.0 && u + vv <= 1.0 && (0.0..=1.0).contains(&t)
}

#[test]
fn near_plane_clipping_draws_the_visible_part() {
    // Ground-plane triangles with one or two vertices behind the camera: the part in front
    // of the near plane is drawn, matching a ray-cast reference at every pixel whose
    // coverage does not change within 0.05 px of its center.
    let (w, h) = (48, 32);
    let vp = camera::<f32>([0.0, 1.0, 3.0], w as f32 / h as f32, 0.5, 50.0);
    let inv = vp.inverse().unwrap();
    let cases: [[Vec3<f32>; 3]; 3] = [
        // One vertex behind the camera (eye z = 3): clipped into a quad, two triangles.
        [Vec3::new(-2.0, 0.0, -4.0), Vec3::new(2.0, 0.0, -4.0), Vec3::new(0.0, 0.0, 6.0)],
        // Two vertices behind: clipped into one triangle.
        [Vec3::new(0.0, 0.0, -4.0), Vec3::new(3.0, 0.0, 6.0), Vec3::new(-3.0, 0.0, 6.0)],
        // Crossing the near plane and both sides of the screen.
        [Vec3::new(-30.0, 0.5, -2.0), Vec3::new(30.0, 0.5, -2.0), Vec3::new(0.0, 0.5, 3.2)],
    ];
    for tri in &cases {
        let mut m = Mock::new(w, h, true);
        let r = Renderer { cull: Cull::None, ..Renderer::new(vp) };
        run(&mut m, &r, &[Draw::Mesh(unlit(tri, &[0, 1, 2], RED))]);
        let (mut certain, mut drawn) = (0, 0);
        // Every pixel; under miri, every third in each direction (thresholds scaled to match).
        let stride = if cfg!(miri) { 3 } else { 1 };
        let sampled = ((w + stride - 1) / stride * ((h + stride - 1) / stride)) as u32;
        for y in (0..h).step_by(stride as usize) {
            for x in (0..w).step_by(stride as usize) {
                let (cx, cy) = (x as f64 + 0.5, y as f64 + 0.5);
                let e = 0.05;
                let s = [(0.0, 0.0), (e, 0.0), (-e, 0.0), (0.0, e), (0.0, -e)]
                    .map(|(dx, dy)| ray_hits(&inv, w, h, cx + dx, cy + dy, tri));
                if s.iter().all(|&v| v == s[0]) {
                    certain += 1;
                    assert_eq!(m.count(x, y), s[0] as u32, "pixel ({x}, {y}) of {tri:?}:\n{:#?}", m.pattern());
                    drawn += s[0] as u32;
                }
            }
        }
        assert!(
            drawn > 150 * sampled / (w * h) as u32 && certain > sampled * 9 / 10,
            "{tri:?}: {drawn} drawn, {certain} certain"
        );
    }
}

#[test]
fn lines_follow_the_nearest_pixel_rule() {
    let (w, h) = (8, 8);
    let c = |x: i32, y: i32| at_px::<f32>(w, h, x as f32 + 0.5, y as f32 + 0.5, 0.0);
    // Each segment is listed in both directions (positions 0–1 and 4–5, 2–3 and 6–7).
    let pts = [c(0, 0), c(7, 3), c(1, 7), c(3, 0), c(7, 3), c(0, 0), c(3, 0), c(1, 7)];
    let draw = |idx: &[u16]| {
        let mut m = Mock::new(w, h, true);
        let lines =
            Lines { positions: &pts, indices: Indices::U16(idx), model: Mat4::IDENTITY, color: RED, depth_test: false };
        run(&mut m, &Renderer::new(Mat4::IDENTITY), &[Draw::Lines(lines)]);
        m
    };
    let x_major = [
        "##......", //
        "..##....", //
        "....##..", //
        "......##", //
        "........", //
        "........", //
        "........", //
        "........", //
    ];
    draw(&[0, 1]).assert_pattern(&x_major);
    draw(&[4, 5]).assert_pattern(&x_major);
    let y_major = [
        "...#....", //
        "...#....", //
        "..#.....", //
        "..#.....", //
        "..#.....", //
        "..#.....", //
        ".#......", //
        ".#......", //
    ];
    draw(&[2, 3]).assert_pattern(&y_major);
    draw(&[6, 7]).assert_pattern(&y_major);
    // A single-pixel segment.
    let mut one = ["........"; 8];
    one[0] = "#.......";
    draw(&[0, 0]).assert_pattern(&one);
}

#[test]
fn lines_are_clipped_like_a_crop_of_a_larger_target() {
    // Random segments reaching far outside an 8×8 target equal the middle of the same
    // segments in a 24×24 target (shifted by 8 pixels); the mock panics on any write outside.
    let mut rng = Rng(0x11e5);
    for _ in 0..if cfg!(miri) { 60 } else { 3000 } {
        let q = |rng: &mut Rng| rng.range(-120, 160) as f32 / 4.0;
        let (ax, ay, bx, by) = (q(&mut rng), q(&mut rng), q(&mut rng), q(&mut rng));
        let small_pts: [Vec3<f32>; 2] = [at_px(8, 8, ax, ay, 0.0), at_px(8, 8, bx, by, 0.0)];
        let big_pts: [Vec3<f32>; 2] = [at_px(24, 24, ax + 8.0, ay + 8.0, 0.0), at_px(24, 24, bx + 8.0, by + 8.0, 0.0)];
        let lines = |p| Lines {
            positions: p,
            indices: Indices::U16(&[0, 1]),
            model: Mat4::IDENTITY,
            color: RED,
            depth_test: false,
        };
        let mut small = Mock::new(8, 8, false);
        run(&mut small, &Renderer::new(Mat4::IDENTITY), &[Draw::Lines(lines(&small_pts))]);
        let mut big = Mock::new(24, 24, false);
        run(&mut big, &Renderer::new(Mat4::IDENTITY), &[Draw::Lines(lines(&big_pts))]);
        for y in 0..8 {
            for x in 0..8 {
                assert_eq!(small.count(x, y), big.count(x + 8, y + 8), "({ax}, {ay})-({bx}, {by}) at ({x}, {y})");
            }
        }
    }
}

#[test]
fn line_crossing_the_near_plane_draws_its_visible_part() {
    let (w, h) = (64, 48);
    let vp = camera::<f32>([0.0, 0.0, 4.0], w as f32 / h as f32, 1.0, 20.0);
    // From the origin (screen center) to a point behind the camera.
    let pts = [Vec3::new(0.0f32, 0.0, 0.0), Vec3::new(0.4, 0.2, 6.0)];
    let lines =
        Lines { positions: &pts, indices: Indices::U16(&[0, 1]), model: Mat4::IDENTITY, color: RED, depth_test: false };
    let mut m = Mock::new(w, h, false);
    run(&mut m, &Renderer::new(vp), &[Draw::Lines(lines)]);
    // Where the segment meets the near plane (view depth 1, at z = 3), in view space, in f64.
    let t = 0.5;
    let (px, py, pz) = (0.4 * t, 0.2 * t, 6.0 * t - 4.0);
    let f = 1.0 / (std::f64::consts::PI / 6.0).tan();
    let sx = (px * f / (w as f64 / h as f64) / -pz + 1.0) * w as f64 / 2.0;
    let sy = (1.0 - py * f / -pz) * h as f64 / 2.0;
    let drawn: Vec<(i32, i32)> =
        (0..h).flat_map(|y| (0..w).map(move |x| (x, y))).filter(|&(x, y)| m.count(x, y) > 0).collect();
    assert!(drawn.contains(&(w / 2, h / 2)), "the visible end is missing");
    let far_end = drawn.iter().max_by_key(|p| p.0).unwrap();
    assert!((far_end.0 as f64 - sx.floor()).abs() <= 1.0, "{far_end:?} vs ({sx}, {sy})");
    assert!((far_end.1 as f64 - sy.floor()).abs() <= 1.0, "{far_end:?} vs ({sx}, {sy})");
    assert_eq!(drawn.len() as i32, far_end.0 - w / 2 + 1, "one pixel per column");
}

#[test]
fn points_draw_squares() {
    let (w, h) = (8, 8);
    let c = |x: i32, y: i32| at_px::<f32>(w, h, x as f32 + 0.5, y as f32 + 0.5, 0.0);
    let mut m = Mock::new(w, h, false);
    let draw =
        |pos, size| Draw::Points(Points { positions: pos, model: Mat4::IDENTITY, color: RED, size, depth_test: false });
    let (a, b, d, e) = ([c(2, 2)], [c(6, 5)], [c(0, 7)], [c(7, 0)]);
    run(&mut m, &Renderer::new(Mat4::IDENTITY), &[draw(&a, 3), draw(&b, 2), draw(&d, 1), draw(&e, 4), draw(&e, 0)]);
    m.assert_pattern(&[
        ".....###", //
        ".###.###", //
        ".###....", //
        ".###....", //
        ".....##.", //
        ".....##.", //
        "........", //
        "#.......", //
    ]);
}

#[test]
fn overlays_draw_over_the_mesh_unless_depth_tested() {
    let (w, h) = (8, 8);
    // A full-screen quad at NDC depth 0, and a line at depth 0.5 (behind) and −0.5 (in front).
    let quad: [Vec3<f32>; 4] = [
        at_px(w, h, 0.0, 0.0, 0.0),
        at_px(w, h, 8.0, 0.0, 0.0),
        at_px(w, h, 8.0, 8.0, 0.0),
        at_px(w, h, 0.0, 8.0, 0.0),
    ];
    let idx = [0u16, 2, 1, 0, 3, 2];
    let mesh = Draw::Mesh(unlit(&quad, &idx, BLUE));
    let count_red = |z: f32, depth_test: bool| {
        let line = [at_px::<f32>(w, h, 0.5, 3.5, z), at_px(w, h, 7.5, 3.5, z)];
        let lines =
            Lines { positions: &line, indices: Indices::U16(&[0, 1]), model: Mat4::IDENTITY, color: RED, depth_test };
        let mut m = Mock::new(w, h, true);
        run(&mut m, &Renderer::new(Mat4::IDENTITY), &[mesh, Draw::Lines(lines)]);
        m.color.iter().filter(|&&c| c == Xrgb8888::pack(RED)).count()
    };
    assert_eq!(count_red(0.5, false), 8);
    assert_eq!(count_red(0.5, true), 0);
    assert_eq!(count_red(-0.5, true), 8);
}

#[test]
fn lambert_and_ambient_levels() {
    // A triangle facing +z, lit from +z, from the side and from behind; ambient 0.25,
    // diffuse 0.75. The stored color is the base color scaled by the level.
    let p: [Vec3<f32>; 3] = [Vec3::new(-1.0, -1.0, 0.0), Vec3::new(1.0, -1.0, 0.0), Vec3::new(-1.0, 1.0, 0.0)];
    let n = [Vec3::Z; 3];
    let base = Rgb::new(200, 100, 40);
    let level_for = |dir: Vec3<f32>, shading: Shading| {
        let mesh = Mesh { shading, ..Mesh::new(&p, Some(&n), Indices::U16(&[0, 1, 2]), base) };
        let light = Light { direction: dir, ambient: 0.25, diffuse: 0.75 };
        let mut m = Mock::new(4, 4, true);
        run(&mut m, &Renderer { light, ..Renderer::new(Mat4::IDENTITY) }, &[Draw::Mesh(mesh)]);
        // Pixel (0, 3), bottom left, well inside.
        Xrgb8888::unpack(m.color[12])
    };
    for shading in [Shading::Smooth, Shading::Flat] {
        assert_eq!(level_for(Vec3::new(0.0, 0.0, 3.0), shading), base);
        // cos = 0.6: 0.25 + 0.45 = 0.7 → level round(178.5) = 179 (ties up).
        assert_eq!(level_for(Vec3::new(0.0, 0.8, 0.6), shading), base.scale(179));
        // Facing away: ambient only, 0.25 → level round(63.75) = 64.
        assert_eq!(level_for(Vec3::new(0.0, 0.0, -1.0), shading), base.scale(64));
    }
    assert_eq!(level_for(Vec3::new(0.0, 0.0, -1.0), Shading::Unlit), base);
}

#[test]
fn gouraud_interpolates_vertex_levels() {
    // Normals chosen so the three vertices get levels 255, 63.75 and 63.75 (ambient only):
    // pixels blend monotonically from the first vertex.
    let p: [Vec3<f32>; 3] = [Vec3::new(-1.0, 1.0, 0.0), Vec3::new(-1.0, -1.0, 0.0), Vec3::new(1.0, 1.0, 0.0)];
    let n = [Vec3::Z, -Vec3::Z, -Vec3::Z];
    let mesh = Mesh::new(&p, Some(&n), Indices::U16(&[0, 1, 2]), Rgb::WHITE);
    let light = Light { direction: Vec3::Z, ambient: 0.25, diffuse: 0.75 };
    let mut m = Mock::new(16, 16, true);
    run(&mut m, &Renderer { light, ..Renderer::new(Mat4::IDENTITY) }, &[Draw::Mesh(mesh)]);
    let level = |x: i32, y: i32| Xrgb8888::unpack(m.color[(y * 16 + x) as usize]).r as f64;
    for y in 0..16 {
        for x in 0..16 - y {
            if m.count(x, y) == 0 {
                continue;
            }
            // Barycentric weight of vertex 0 at the pixel center.
            let w0 = 1.0 - (x as f64 + 0.5) / 16.0 - (y as f64 + 0.5) / 16.0;
            let want = 63.75 + w0 * (255.0 - 63.75);
            assert!((level(x, y) - want).abs() <= 1.0, "({x}, {y}): {} vs {want}", level(x, y));
        }
    }
}

#[test]
fn rgb565_packing() {
    assert_eq!(Rgb565::pack(Rgb::WHITE), 0xFFFF);
    assert_eq!(Rgb565::pack(Rgb::BLACK), 0x0000);
    assert_eq!(Rgb565::pack(RED), 0xF800);
    assert_eq!(Rgb565::pack(Rgb::new(0, 255, 0)), 0x07E0);
    assert_eq!(Rgb565::pack(BLUE), 0x001F);
    assert_eq!(Rgb565::pack(Rgb::new(128, 128, 128)), 0x8410);
    assert_eq!(Rgb565::unpack(0xF800), RED);
    assert_eq!(Rgb565::unpack(0x8410), Rgb::new(132, 130, 132));
    // Round trip within half a quantization step (255/31/2 ≈ 4.1, 255/63/2 ≈ 2.0).
    for v in 0..=255u8 {
        let c = Rgb::new(v, v, 255 - v);
        let back = Rgb565::unpack(Rgb565::pack(c));
        assert!((back.r as i32 - c.r as i32).abs() <= 4, "{c:?} -> {back:?}");
        assert!((back.g as i32 - c.g as i32).abs() <= 2, "{c:?} -> {back:?}");
        assert!((back.b as i32 - c.b as i32).abs() <= 4, "{c:?} -> {back:?}");
    }
    assert_eq!(Xrgb8888::pack(Rgb::new(0x12, 0x34, 0x56)), 0x0012_3456);
    // A render into an RGB565 target stores the packed color.
    let p: [Vec3<f32>; 3] = [at_px(4, 4, 0.0, 0.0, 0.0), at_px(4, 4, 0.0, 4.0, 0.0), at_px(4, 4, 4.0, 0.0, 0.0)];
    let mut color = [0u16; 16];
    let mut t = Target::<Rgb565, Depth16>::new(&mut color, None, 4, 4, 4).unwrap();
    let c = Rgb::new(10, 200, 90);
    Renderer::new(Mat4::IDENTITY)
        .draw_mesh(&mut t, &unlit(&p, &[0, 1, 2], c), &mut [CachedVertex::default(); 3])
        .unwrap();
    assert_eq!(t.pixel(0, 0), Some(Rgb565::pack(c)));
    assert_eq!(t.pixel(3, 3), Some(0));
    assert_eq!(t.pixel(4, 0), None);
}

/// A random scene: two meshes (16- and 32-bit indices, smooth and flat) whose triangles cross
/// the near plane, the screen borders and each other, plus lines and points with and without
/// depth test.
struct Scene<R> {
    pos: Vec<Vec3<R>>,
    nrm: Vec<Vec3<R>>,
    idx16: Vec<u16>,
    idx32: Vec<u32>,
    joints: Vec<Vec3<R>>,
    bones: Vec<u16>,
}

impl<R: Real> Scene<R> {
    fn random(seed: u32, tris: usize) -> Self {
        let mut rng = Rng(seed);
        let mut v = |lo: f32, hi: f32| R::from_f32(rng.f(lo, hi));
        let mut pos = Vec::new();
        let mut nrm = Vec::new();
        for _ in 0..tris {
            let c = [v(-3.0, 3.0), v(-2.0, 2.0), v(-3.0, 4.8)];
            for _ in 0..3 {
                pos.push(Vec3::new(c[0] + v(-1.5, 1.5), c[1] + v(-1.5, 1.5), c[2] + v(-1.5, 1.5)));
                nrm.push(Vec3::new(v(-1.0, 1.0), v(-1.0, 1.0), v(-1.0, 1.0)));
            }
        }
        let idx16: Vec<u16> = (0..pos.len() as u16).collect();
        let idx32: Vec<u32> = (0..pos.len() as u32).rev().collect();
        let joints = (0..12).map(|_| Vec3::new(v(-2.0, 2.0), v(-2.0, 2.0), v(-2.0, 5.5))).collect();
        let bones = (1..12u16).flat_map(|j| [j, j / 2]).collect();
        Scene { pos, nrm, idx16, idx32, joints, bones }
    }

    fn draws(&self) -> [Draw<'_, R>; 4] {
        let half = self.pos.len() / 2 / 3 * 3;
        let shift = Mat4::from_translation(Vec3::new(R::HALF, R::ZERO, R::ZERO));
        [
            Draw::Mesh(Mesh::new(
                &self.pos[..half],
                Some(&self.nrm[..half]),
                Indices::U16(&self.idx16[..half]),
                Rgb::new(230, 180, 90),
            )),
            Draw::Mesh(Mesh {
                shading: Shading::Flat,
                model: shift,
                ..Mesh::new(&self.pos, None, Indices::U32(&self.idx32), Rgb::new(90, 200, 250))
            }),
            Draw::Lines(Lines {
                positions: &self.joints,
                indices: Indices::U16(&self.bones),
                model: Mat4::IDENTITY,
                color: Rgb::new(255, 60, 60),
                depth_test: false,
            }),
            Draw::Points(Points {
                positions: &self.joints,
                model: shift,
                color: Rgb::WHITE,
                size: 3,
                depth_test: true,
            }),
        ]
    }
}

/// Full-frame render of `scene` into a cleared target.
fn render_full<C: PixelFormat, D: DepthFormat>(
    r: &Renderer<f32>,
    scene: &[Draw<'_, f32>],
    w: u32,
    h: u32,
    with_depth: bool,
) -> Vec<C::Raw>
where
    D::Raw: Default,
{
    let n = (w * h) as usize;
    let mut color = vec![C::Raw::default(); n];
    let mut depth = vec![D::Raw::default(); n];
    let mut scratch = vec![CachedVertex::default(); Renderer::scratch_len(scene)];
    let mut t = Target::<C, D>::new(&mut color, with_depth.then_some(&mut depth[..]), w, h, w as usize).unwrap();
    t.clear(Rgb::new(20, 30, 40));
    r.render(&mut t, scene, &mut scratch).unwrap();
    color
}

/// Banded render of `scene`, reassembled into a frame.
fn render_banded<C: PixelFormat, D: DepthFormat>(
    r: &Renderer<f32>,
    scene: &[Draw<'_, f32>],
    w: u32,
    h: u32,
    rows: u32,
    with_depth: bool,
) -> Vec<C::Raw>
where
    D::Raw: Default,
{
    let n = (w * rows.min(h)) as usize;
    let mut color = vec![C::Raw::default(); n];
    let mut depth = vec![D::Raw::default(); n];
    let mut scratch = vec![CachedVertex::default(); Renderer::scratch_len(scene)];
    let mut bands = BandBuffer::<C, D>::new(&mut color, with_depth.then_some(&mut depth[..]), w, h, rows).unwrap();
    let mut frame = vec![C::Raw::default(); (w * h) as usize];
    let mut next = 0;
    r.render_bands(&mut bands, scene, &mut scratch, Rgb::new(20, 30, 40), |y0, px| {
        assert_eq!(y0, next, "bands come in order");
        let rows_here = (rows.min(h - y0)) as usize;
        assert_eq!(px.len(), rows_here * w as usize);
        frame[(y0 * w) as usize..][..px.len()].copy_from_slice(px);
        next = y0 + rows_here as u32;
    })
    .unwrap();
    assert_eq!(next, h, "every row emitted");
    frame
}

#[test]
#[cfg_attr(miri, ignore = "renders a 96×72 frame of 240 triangles 28 times: too slow under miri")]
fn bands_equal_the_full_frame() {
    let (w, h) = (96, 72);
    let scene = Scene::<f32>::random(0xba4d, 120);
    let draws = scene.draws();
    for cull in [Cull::Back, Cull::None] {
        let r = Renderer { cull, ..Renderer::new(camera([0.5, 0.8, 6.0], w as f32 / h as f32, 0.5, 30.0)) };
        let full = render_full::<Xrgb8888, Depth32>(&r, &draws, w, h, true);
        // The scene is not trivial: most of the frame is drawn, in many colors.
        let bg = Xrgb8888::pack(Rgb::new(20, 30, 40));
        let drawn = full.iter().filter(|&&c| c != bg).count();
        let mut colors = full.clone();
        colors.sort_unstable();
        colors.dedup();
        assert!(drawn > (w * h) as usize / 2 && colors.len() > 100, "{drawn} pixels, {} colors", colors.len());
        for rows in [1, 7, 16, 72, 500] {
            assert!(full == render_banded::<Xrgb8888, Depth32>(&r, &draws, w, h, rows, true), "{rows} rows");
        }
        let full = render_full::<Rgb565, Depth16>(&r, &draws, w, h, true);
        for rows in [1, 7, 16] {
            assert!(full == render_banded::<Rgb565, Depth16>(&r, &draws, w, h, rows, true), "565 {rows} rows");
        }
        let full = render_full::<Xrgb8888, Depth16>(&r, &draws, w, h, false);
        for rows in [1, 7, 16] {
            assert!(full == render_banded::<Xrgb8888, Depth16>(&r, &draws, w, h, rows, false), "no depth {rows} rows");
        }
    }
}

#[test]
fn band_mocks_cover_a_closed_surface_once() {
    // A closed grid mesh covering the whole frame, drawn band by band into mocks: every pixel
    // is written exactly once (no depth test needed), including on band boundaries.
    let (w, h) = (40, 30);
    let mut rng = Rng(0x6a1d);
    let (nx, ny) = (9, 7);
    let pts: Vec<Vec3<f32>> = (0..=ny)
        .flat_map(|j| (0..=nx).map(move |i| (i, j)))
        .map(|(i, j)| {
            let jit = |rng: &mut Rng, k: i32, n: i32| if k == 0 || k == n { 0.0 } else { rng.f(-0.04, 0.04) };
            let (jx, jy) = (jit(&mut rng, i, nx), jit(&mut rng, j, ny));
            Vec3::new(-1.2 + 2.4 * i as f32 / nx as f32 + jx, -1.2 + 2.4 * j as f32 / ny as f32 + jy, 0.0)
        })
        .collect();
    let mut idx = Vec::new();
    for j in 0..ny {
        for i in 0..nx {
            let a = (j * (nx + 1) + i) as u16;
            let (b, c, d) = (a + 1, a + 1 + nx as u16 + 1, a + nx as u16 + 1);
            idx.extend_from_slice(&[a, b, c, a, c, d]);
        }
    }
    let scene = [Draw::Mesh(unlit(&pts, &idx, RED))];
    let r = Renderer::new(Mat4::IDENTITY);
    for &rows in if cfg!(miri) { &[7, 16][..] } else { &[1, 7, 16][..] } {
        let mut y0 = 0;
        while y0 < h {
            let mut m = Mock::band(w, h, y0, (y0 + rows).min(h), false);
            run(&mut m, &r, &scene);
            assert!(m.counts.iter().all(|&c| c == 1), "band {y0} of {rows}:\n{:#?}", m.pattern());
            y0 += rows;
        }
    }
}

#[test]
fn q16_renders_the_same_pattern_as_f32() {
    // Pixel-aligned geometry: vertices on whole pixels and depths on multiples of 1/8 are
    // exact in both types, so coverage, depth order and color agree exactly.
    let (w, h) = (32, 32);
    let px = |x: f32, y: f32, z: f32| [x, y, z];
    let tris = [
        [px(0.0, 0.0, 0.0), px(20.0, 2.0, 0.0), px(3.0, 22.0, 0.0)],
        [px(10.0, 4.0, -0.5), px(31.0, 8.0, -0.25), px(12.0, 23.0, 0.125)],
        [px(-6.0, 10.0, 0.5), px(40.0, 12.0, 0.5), px(16.0, 30.0, -0.75)],
    ];
    fn build<R: Real>(w: i32, h: i32, tris: &[[[f32; 3]; 3]]) -> Vec<Vec3<R>> {
        tris.iter().flat_map(|t| t.iter().map(|p| at_px::<R>(w, h, p[0], p[1], p[2]))).collect()
    }
    let (pf, pq) = (build::<f32>(w, h, &tris), build::<Q16>(w, h, &tris));
    let idx: Vec<u16> = (0..9).collect();
    let colors = [RED, BLUE, Rgb::new(0, 255, 0)];
    let mut mf = Mock::new(w, h, true);
    let sf: Vec<Draw<'_, f32>> =
        (0..3).map(|k| Draw::Mesh(unlit(&pf[3 * k..3 * k + 3], &idx[..3], colors[k]))).collect();
    run(&mut mf, &Renderer { cull: Cull::None, ..Renderer::new(Mat4::IDENTITY) }, &sf);
    let mut mq = Mock::new(w, h, true);
    let sq: Vec<Draw<'_, Q16>> =
        (0..3).map(|k| Draw::Mesh(unlit(&pq[3 * k..3 * k + 3], &idx[..3], colors[k]))).collect();
    run(&mut mq, &Renderer { cull: Cull::None, ..Renderer::new(Mat4::IDENTITY) }, &sq);
    assert!(mf.counts.iter().filter(|&&c| c > 0).count() > 300);
    assert_eq!(mf.pattern(), mq.pattern());
    assert_eq!(mf.color, mq.color);
    assert_eq!(mf.depth, mq.depth);
}

/// A UV sphere of radius 1 with outward normals and counter-clockwise (outside) winding.
fn sphere<R: Real>(lat: usize, lon: usize) -> (Vec<Vec3<R>>, Vec<Vec3<R>>, Vec<u16>) {
    let mut pos = Vec::new();
    for i in 0..=lat {
        let th = std::f32::consts::PI * i as f32 / lat as f32;
        for j in 0..=lon {
            let ph = 2.0 * std::f32::consts::PI * j as f32 / lon as f32;
            pos.push([th.sin() * ph.cos(), th.cos(), -th.sin() * ph.sin()]);
        }
    }
    let mut idx = Vec::new();
    for i in 0..lat {
        for j in 0..lon {
            let a = (i * (lon + 1) + j) as u16;
            let (b, c, d) = (a + 1, a + 1 + lon as u16 + 1, a + lon as u16 + 1);
            for t in [[a, b, c], [a, c, d]] {
                let p = |k: u16| pos[k as usize];
                let (pa, pb, pc) = (p(t[0]), p(t[1]), p(t[2]));
                let e1 = [pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]];
                let e2 = [pc[0] - pa[0], pc[1] - pa[1], pc[2] - pa[2]];
                let n = [e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]];
                let out =
                    n[0] * (pa[0] + pb[0] + pc[0]) + n[1] * (pa[1] + pb[1] + pc[1]) + n[2] * (pa[2] + pb[2] + pc[2]);
                if out.abs() < 1e-6 {
                    continue; // degenerate at a pole
                }
                idx.extend_from_slice(&if out > 0.0 { t } else { [t[0], t[2], t[1]] });
            }
        }
    }
    let v = |p: [f32; 3]| Vec3::new(R::from_f32(p[0]), R::from_f32(p[1]), R::from_f32(p[2]));
    (pos.iter().map(|&p| v(p)).collect(), pos.iter().map(|&p| v(p)).collect(), idx)
}

#[test]
fn q16_lit_sphere_is_within_a_pixel_of_f32() {
    // A lit, perspective-projected sphere: Q16 coverage differs from f32 only next to the
    // silhouette, and shading by at most 2 levels where both cover a pixel.
    let (w, h) = if cfg!(miri) { (48, 36) } else { (96, 72) };
    let (pf, nf, idx) = sphere::<f32>(12, 24);
    let (pq, nq, _) = sphere::<Q16>(12, 24);
    let draw = |m: &mut Mock, f: bool| {
        if f {
            let r = Renderer::new(camera::<f32>([0.4, 0.6, 2.2], w as f32 / h as f32, 0.5, 20.0));
            run(m, &r, &[Draw::Mesh(Mesh::new(&pf, Some(&nf), Indices::U16(&idx), Rgb::WHITE))]);
        } else {
            let r = Renderer::new(camera::<Q16>([0.4, 0.6, 2.2], w as f32 / h as f32, 0.5, 20.0));
            run(m, &r, &[Draw::Mesh(Mesh::new(&pq, Some(&nq), Indices::U16(&idx), Rgb::WHITE))]);
        }
    };
    let (mut mf, mut mq) = (Mock::new(w, h, true), Mock::new(w, h, true));
    draw(&mut mf, true);
    draw(&mut mq, false);
    let cov = |m: &Mock, x: i32, y: i32| x >= 0 && y >= 0 && x < w && y < h && m.count(x, y) > 0;
    let (mut both, mut worst, mut edge_diffs) = (0, 0i32, 0);
    for y in 0..h {
        for x in 0..w {
            let (a, b) = (cov(&mf, x, y), cov(&mq, x, y));
            if a != b {
                let near_silhouette =
                    [(-1, 0), (1, 0), (0, -1), (0, 1)].iter().any(|&(dx, dy)| cov(&mf, x + dx, y + dy) != a);
                assert!(near_silhouette, "coverage differs away from the silhouette at ({x}, {y})");
                edge_diffs += 1;
            } else if a {
                both += 1;
                let i = (y * w + x) as usize;
                let (lf, lq) = (Xrgb8888::unpack(mf.color[i]).r as i32, Xrgb8888::unpack(mq.color[i]).r as i32);
                worst = worst.max((lf - lq).abs());
            }
        }
    }
    assert!(both > 1500 * w * h / (96 * 72), "sphere covers only {both} pixels");
    std::println!("Q16 vs f32 sphere: {both} pixels in both, shading differs by at most {worst} levels, {edge_diffs} silhouette pixels differ");
    assert!(worst <= 2, "shading differs by {worst} levels");
    assert!(edge_diffs <= 20, "{edge_diffs} silhouette pixels differ");
}

#[test]
fn hostile_values_draw_nothing_bad() {
    // NaN, infinite, huge and degenerate inputs must neither panic nor write outside.
    let big = 1.0e30f32;
    let p = [
        Vec3::new(f32::NAN, 0.0, 0.0),
        Vec3::new(0.0, f32::INFINITY, 0.0),
        Vec3::new(big, -big, 0.5),
        Vec3::new(-big, big, 0.5),
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(1.0e-30, 0.0, 0.0),
        Vec3::new(0.5, 0.5, -1.0),
    ];
    let n = [Vec3::ZERO; 8];
    // Every ordered triple of them; under miri, each set of three once (120 of 512 triangles:
    // culling is off, so a triangle's order changes only its winding).
    let idx: Vec<u16> = (0..8u16)
        .flat_map(|a| (0..8u16).flat_map(move |b| (0..8u16).map(move |c| [a, b, c])))
        .filter(|&[a, b, c]| !cfg!(miri) || (a <= b && b <= c))
        .flatten()
        .collect();
    for vp in [Mat4::IDENTITY, camera([0.0, 0.0, 2.0], 1.5, 0.1, 10.0), Mat4::ZERO] {
        let mut m = Mock::new(12, 8, true);
        let r = Renderer { cull: Cull::None, ..Renderer::new(vp) };
        let lines = Lines {
            positions: &p,
            indices: Indices::U16(&idx[..idx.len() / 3 * 2]),
            model: Mat4::IDENTITY,
            color: RED,
            depth_test: true,
        };
        let points = Points { positions: &p, model: Mat4::IDENTITY, color: RED, size: 255, depth_test: false };
        run(
            &mut m,
            &r,
            &[Draw::Mesh(Mesh::new(&p, Some(&n), Indices::U16(&idx), RED)), Draw::Lines(lines), Draw::Points(points)],
        );
    }
    // Q16 at the edge of its range.
    let q = |v: f32| Q16::from_f32(v);
    let pq = [
        Vec3::new(q(30000.0), q(-30000.0), q(0.0)),
        Vec3::new(q(-30000.0), q(0.0), q(30000.0)),
        Vec3::new(q(1.0), q(1.0), q(-30000.0)),
    ];
    let mut m = Mock::new(12, 8, true);
    let r = Renderer { cull: Cull::None, ..Renderer::new(camera::<Q16>([0.0, 0.0, 2.0], 1.5, 0.1, 10.0)) };
    run(
        &mut m,
        &r,
        &[Draw::Mesh(Mesh { shading: Shading::Flat, ..Mesh::new(&pq, None, Indices::U16(&[0, 1, 2, 2, 1, 0]), RED) })],
    );
}

#[test]
fn validity() {
    let p: [Vec3<f32>; 3] = [Vec3::new(-1.0, -1.0, 0.0), Vec3::new(1.0, -1.0, 0.0), Vec3::new(-1.0, 1.0, 0.0)];
    let n = [Vec3::Z; 3];
    let r = Renderer::new(Mat4::IDENTITY);
    let sentinel = 0xDEAD_BEEFu32;

    // Target dimensions and buffer sizes.
    let mut c = [0u32; 40];
    let mut d = [0u16; 40];
    type T<'a> = Target<'a, Xrgb8888, Depth16>;
    assert_eq!(T::new(&mut c, None, 0, 4, 8).unwrap_err(), RasterError::InvalidDimensions);
    assert_eq!(T::new(&mut c, None, 4, 0, 8).unwrap_err(), RasterError::InvalidDimensions);
    assert_eq!(T::new(&mut c, None, 5, 4, 4).unwrap_err(), RasterError::InvalidDimensions);
    assert_eq!(T::new(&mut c, None, 4097, 1, 4097).unwrap_err(), RasterError::InvalidDimensions);
    assert_eq!(T::new(&mut c, None, 8, 6, 8).unwrap_err(), RasterError::ColorBufferTooSmall);
    assert_eq!(T::new(&mut c, Some(&mut d[..35]), 8, 5, 8).unwrap_err(), RasterError::DepthBufferTooSmall);
    // stride × (height − 1) + width is enough.
    assert!(T::new(&mut c[..36], Some(&mut d[..36]), 4, 5, 8).is_ok());
    type B<'a> = BandBuffer<'a, Xrgb8888, Depth16>;
    assert_eq!(B::new(&mut c, None, 8, 8, 0).unwrap_err(), RasterError::InvalidDimensions);
    assert_eq!(B::new(&mut c, None, 8, 0, 4).unwrap_err(), RasterError::InvalidDimensions);
    assert_eq!(B::new(&mut c, None, 8, 100, 6).unwrap_err(), RasterError::ColorBufferTooSmall);
    assert_eq!(B::new(&mut c, Some(&mut d[..16]), 8, 100, 4).unwrap_err(), RasterError::DepthBufferTooSmall);
    assert_eq!(B::new(&mut c, None, 8, 3, 50).map(|b| b.rows()), Ok(3));

    // Scene errors; a valid command before a bad one draws nothing either.
    let good = Draw::Mesh(Mesh::new(&p, Some(&n), Indices::U16(&[0, 1, 2]), RED));
    let cases: [(Draw<'_, f32>, usize, RasterError); 7] = [
        (good, 2, RasterError::ScratchTooSmall),
        (Draw::Mesh(Mesh::new(&p, Some(&n), Indices::U16(&[0, 1]), RED)), 3, RasterError::IndexCountMismatch),
        (Draw::Mesh(Mesh::new(&p, Some(&n), Indices::U32(&[0, 1, 3]), RED)), 3, RasterError::IndexOutOfRange),
        (
            Draw::Mesh(Mesh { shading: Shading::Smooth, ..Mesh::new(&p, None, Indices::U16(&[0, 1, 2]), RED) }),
            3,
            RasterError::MissingNormals,
        ),
        (Draw::Mesh(Mesh::new(&p, Some(&n[..2]), Indices::U16(&[0, 1, 2]), RED)), 3, RasterError::MissingNormals),
        (
            Draw::Lines(Lines {
                positions: &p,
                indices: Indices::U16(&[0, 1, 2]),
                model: Mat4::IDENTITY,
                color: RED,
                depth_test: false,
            }),
            3,
            RasterError::IndexCountMismatch,
        ),
        (
            Draw::Lines(Lines {
                positions: &p,
                indices: Indices::U16(&[0, 3]),
                model: Mat4::IDENTITY,
                color: RED,
                depth_test: false,
            }),
            3,
            RasterError::IndexOutOfRange,
        ),
    ];
    for (bad, scratch_len, err) in cases {
        let scene = [good, bad];
        let scratch_len = scratch_len + if matches!(bad, Draw::Mesh(_)) { 3 } else { 0 };
        let mut scratch = vec![CachedVertex::default(); scratch_len];
        let mut color = vec![sentinel; 16];
        let mut t = Target::<Xrgb8888, Depth16>::new(&mut color, None, 4, 4, 4).unwrap();
        assert_eq!(r.validate(&scene, scratch.len()), Err(err));
        assert_eq!(r.render(&mut t, &scene, &mut scratch), Err(err));
        assert!(color.iter().all(|&c| c == sentinel), "{err:?} drew");
        let mut band = vec![sentinel; 8];
        let mut bands = BandBuffer::<Xrgb8888, Depth16>::new(&mut band, None, 4, 4, 2).unwrap();
        let mut emitted = false;
        assert_eq!(r.render_bands(&mut bands, &scene, &mut scratch, Rgb::BLACK, |_, _| emitted = true), Err(err));
        assert!(!emitted && band.iter().all(|&c| c == sentinel), "{err:?} emitted");
        assert!(!std::format!("{err}").is_empty());
        let _: &dyn core::error::Error = &err;
    }
    // The same scene with enough scratch renders.
    let mut scratch = vec![CachedVertex::default(); 3];
    let mut color = vec![sentinel; 16];
    let mut t = Target::<Xrgb8888, Depth16>::new(&mut color, None, 4, 4, 4).unwrap();
    assert_eq!(r.render(&mut t, &[good], &mut scratch), Ok(()));
    assert_eq!(Renderer::scratch_len(&[good, good]), 6);
}

#[test]
fn clear_leaves_stride_padding_alone() {
    let mut c = vec![7u32; 3 * 5];
    let mut d = vec![7u16; 3 * 5];
    let mut t = Target::<Xrgb8888, Depth16>::new(&mut c, Some(&mut d), 3, 3, 5).unwrap();
    t.clear(Rgb::new(1, 2, 3));
    assert_eq!(t.pixel(2, 2), Some(0x0001_0203));
    assert_eq!(t.pixel(3, 0), None);
    for (i, (&c, &d)) in c.iter().zip(&d).enumerate() {
        let inside = i % 5 < 3;
        assert_eq!(c == 0x0001_0203, inside, "color {i}");
        assert_eq!(d == u16::MAX, inside, "depth {i}");
    }
}
