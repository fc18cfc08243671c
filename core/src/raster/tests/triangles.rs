//! Raster-stage tests on screen-space triangles: coverage patterns, the fill rule, clipping
//! at the borders, and the exact-span walk against a per-pixel reference.

extern crate std;

use std::vec;
use std::vec::Vec;

use super::super::color::shade_table;
use super::super::triangle::{fill_triangle, orient, Cull, ScreenVertex};
use super::super::{Rgb, Xrgb8888};
use super::{Mock, Rng};

/// A vertex at sub-pixel position `(x, y)` (16 per pixel).
fn sv(x: i32, y: i32) -> ScreenVertex {
    ScreenVertex { x, y, z: 0, s: 0xFF00 }
}

/// A vertex at whole pixel position `(x, y)`.
fn px(x: i32, y: i32) -> ScreenVertex {
    sv(x * 16, y * 16)
}

/// Culls and fills one white triangle.
fn fill(m: &mut Mock, v: [ScreenVertex; 3], cull: Cull) {
    fill_color(m, v, cull, Rgb::WHITE);
}

/// Culls and fills one triangle of color `c`.
fn fill_color(m: &mut Mock, v: [ScreenVertex; 3], cull: Cull, c: Rgb) {
    let table = shade_table::<Xrgb8888>(c);
    if let Some(v) = orient(v, cull) {
        fill_triangle(m, &v, &table);
    }
}

/// Reference coverage: evaluates the three edge functions from scratch at each pixel center
/// with the top-left rule, in `i128` (independent of the span walk's arithmetic).
fn reference(w: i32, h: i32, v: [ScreenVertex; 3]) -> Vec<u32> {
    let mut out = vec![0; (w * h) as usize];
    let area =
        (v[1].x - v[0].x) as i128 * (v[2].y - v[0].y) as i128 - (v[1].y - v[0].y) as i128 * (v[2].x - v[0].x) as i128;
    let v = if area < 0 { [v[0], v[2], v[1]] } else { v };
    if area == 0 {
        return out;
    }
    for y in 0..h {
        for x in 0..w {
            let (cx, cy) = ((x * 16 + 8) as i128, (y * 16 + 8) as i128);
            let inside = (0..3).all(|i| {
                let (a, b) = (v[i], v[(i + 1) % 3]);
                let (ex, ey) = ((b.x - a.x) as i128, (b.y - a.y) as i128);
                let e = ex * (cy - a.y as i128) - ey * (cx - a.x as i128);
                let top_left = ey < 0 || (ey == 0 && ex > 0);
                e > 0 || (e == 0 && top_left)
            });
            if inside {
                out[(y * w + x) as usize] = 1;
            }
        }
    }
    out
}

#[test]
fn single_triangle() {
    let mut m = Mock::new(8, 8, false);
    fill(&mut m, [px(0, 0), px(0, 8), px(8, 0)], Cull::Back);
    // Centers on the hypotenuse (x + y = 7) belong to the bottom-right neighbour.
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
fn quad_split_on_its_diagonal_covers_each_pixel_once() {
    let mut m = Mock::new(8, 8, false);
    fill(&mut m, [px(0, 0), px(0, 8), px(8, 0)], Cull::Back);
    fill(&mut m, [px(8, 0), px(0, 8), px(8, 8)], Cull::Back);
    m.assert_pattern(&["########"; 8]);
    // The other diagonal, with sub-pixel corners off the pixel grid.
    let mut m = Mock::new(8, 8, false);
    let (a, b, c, d) = (sv(-3, -5), sv(133, 2), sv(131, 130), sv(1, 135));
    fill(&mut m, [a, c, b], Cull::Back);
    fill(&mut m, [a, d, c], Cull::Back);
    m.assert_pattern(&["########"; 8]);
}

#[test]
fn two_triangles_sharing_a_slanted_edge() {
    // The shared edge runs through the pixel centers (2, 1), (3, 3) and (4, 5). It is a right
    // edge of the left triangle and a left edge of the right one, so those pixels are the
    // right triangle's, and no pixel is drawn twice.
    let pc = |x: i32, y: i32| sv(16 * x + 8, 16 * y + 8);
    let (a, b) = (pc(1, -1), pc(5, 7));
    let mut m = Mock::new(8, 8, false);
    fill_color(&mut m, [a, pc(-2, 9), b], Cull::Back, Rgb::new(255, 0, 0));
    fill_color(&mut m, [a, b, pc(9, -1)], Cull::Back, Rgb::new(0, 0, 255));
    assert!(m.counts.iter().all(|&c| c <= 1), "{:#?}", m.pattern());
    let got = m.color_pattern(|c| if c.r > 0 { 'L' } else { 'R' });
    super::assert_patterns_eq(
        &got,
        &[
            ".LRRRRRR", //
            ".LRRRRRR", //
            ".LLRRRRR", //
            "LLLRRRR.", //
            "LLLLRRR.", //
            "LLLLRR..", //
            "LLLLLR..", //
            "LLLLL...", //
        ],
    );
}

#[test]
fn clipping_at_each_border() {
    // Left: the triangle starts 8 pixels left of the target.
    let mut m = Mock::new(8, 8, false);
    fill(&mut m, [px(-8, 0), px(-8, 14), px(6, 0)], Cull::Back);
    m.assert_pattern(&[
        "#####...", //
        "####....", //
        "###.....", //
        "##......", //
        "#.......", //
        "........", //
        "........", //
        "........", //
    ]);
    // Top: the same shape transposed; both kept edges are top or left edges again.
    let mut m = Mock::new(8, 8, false);
    fill(&mut m, [px(0, -8), px(0, 6), px(14, -8)], Cull::Back);
    m.assert_pattern(&[
        "#####...", //
        "####....", //
        "###.....", //
        "##......", //
        "#.......", //
        "........", //
        "........", //
        "........", //
    ]);
    // Right: the slanted edge is a left edge, so centers on it (x − y = 2) are drawn.
    let mut m = Mock::new(8, 8, false);
    fill(&mut m, [px(2, 0), px(16, 14), px(16, 0)], Cull::Back);
    m.assert_pattern(&[
        "..######", //
        "...#####", //
        "....####", //
        ".....###", //
        "......##", //
        ".......#", //
        "........", //
        "........", //
    ]);
    // Bottom: the transposed shape; now the slanted edge is a right edge and centers on it
    // (y − x = 2) are left out.
    let mut m = Mock::new(8, 8, false);
    fill(&mut m, [px(0, 2), px(0, 16), px(14, 16)], Cull::Back);
    m.assert_pattern(&[
        "........", //
        "........", //
        "........", //
        "#.......", //
        "##......", //
        "###.....", //
        "####....", //
        "#####...", //
    ]);
}

#[test]
fn clipped_triangles_equal_a_crop_of_a_larger_target() {
    // A triangle drawn into 8×8 must equal the middle of the same triangle drawn, shifted by
    // 8 pixels, into 24×24, whichever borders it crosses. The mock panics on any write outside.
    let mut rng = Rng(0x5eed_0001);
    for _ in 0..if cfg!(miri) { 20 } else { 2000 } {
        let v = [0; 3].map(|_| sv(rng.range(-300, 430), rng.range(-300, 430)));
        let mut small = Mock::new(8, 8, false);
        fill(&mut small, v, Cull::None);
        let mut big = Mock::new(24, 24, false);
        fill(&mut big, v.map(|p| sv(p.x + 128, p.y + 128)), Cull::None);
        for y in 0..8 {
            for x in 0..8 {
                assert_eq!(small.count(x, y), big.count(x + 8, y + 8), "{v:?} at ({x}, {y})");
            }
        }
    }
}

#[test]
fn span_walk_matches_per_pixel_reference() {
    // Random triangles of every size (slivers, huge ones reaching the guard band, tiny ones)
    // with sub-pixel vertices: the quotient/remainder span walk equals the edge functions
    // evaluated per pixel.
    let mut rng = Rng(0x1234_5678);
    let (w, h) = (37, 23);
    let mut drawn = 0;
    let rounds = if cfg!(miri) { 20 } else { 3000 };
    for i in 0..rounds {
        let r = [8, 64, 800, 130_000][i % 4];
        let cx = rng.range(-100, w * 16 + 100);
        let cy = rng.range(-100, h * 16 + 100);
        let v = [0; 3].map(|_| sv(cx + rng.range(-r, r + 1), cy + rng.range(-r, r + 1)));
        let mut m = Mock::new(w, h, false);
        fill(&mut m, v, Cull::None);
        assert_eq!(m.counts, reference(w, h, v), "triangle {v:?}");
        drawn += m.counts.iter().filter(|&&c| c > 0).count();
    }
    assert!(drawn > 100_000 * rounds / 3000, "the triangles covered only {drawn} pixels");
}

/// Twice the signed area of `(a, b, q)` in `i64`.
fn cross(a: (i64, i64), b: (i64, i64), q: (i64, i64)) -> i64 {
    (b.0 - a.0) * (q.1 - a.1) - (b.1 - a.1) * (q.0 - a.0)
}

#[test]
fn random_fans_cover_each_pixel_at_most_once() {
    // Fans of triangles around a center, sharing their spokes. Pixels whose center is inside
    // the fan (or on a spoke) are drawn exactly once; centers on the outer boundary at most
    // once; nothing else is drawn.
    let mut rng = Rng(0xfa75);
    let (w, h) = (16, 16);
    let mut fans = 0;
    let mut interior = 0;
    let rounds = if cfg!(miri) { 4 } else { 400 };
    while fans < rounds {
        // Every other fan snaps its vertices to pixel centers, so that many centers lie exactly
        // on shared edges and the tie rule decides.
        let snap = |v: i64| if fans % 2 == 0 { v } else { v.div_euclid(16) * 16 + 8 };
        let c = (snap(rng.range(0, w * 16) as i64), snap(rng.range(0, h * 16) as i64));
        let k = rng.range(3, 13) as usize;
        let mut pts: Vec<(i64, i64, f64)> = (0..k)
            .map(|_| {
                let (x, y) = (snap(c.0 + rng.range(-250, 251) as i64), snap(c.1 + rng.range(-250, 251) as i64));
                (x, y, ((y - c.1) as f64).atan2((x - c.0) as f64))
            })
            .collect();
        pts.sort_by(|a, b| a.2.total_cmp(&b.2));
        // Every sector must be a proper, positively oriented triangle under π.
        let ok = (0..k).all(|i| {
            let (a, b) = (pts[i], pts[(i + 1) % k]);
            cross(c, (a.0, a.1), (b.0, b.1)) > 0
        });
        if !ok {
            continue;
        }
        fans += 1;
        let mut m = Mock::new(w, h, false);
        for i in 0..k {
            let (a, b) = (pts[i], pts[(i + 1) % k]);
            // Increasing angle with y down turns clockwise on screen: list the sector the other way.
            fill(
                &mut m,
                [sv(c.0 as i32, c.1 as i32), sv(b.0 as i32, b.1 as i32), sv(a.0 as i32, a.1 as i32)],
                Cull::Back,
            );
        }
        for y in 0..h {
            for x in 0..w {
                let q = ((x * 16 + 8) as i64, (y * 16 + 8) as i64);
                let n = m.count(x, y);
                assert!(n <= 1, "pixel ({x}, {y}) drawn {n} times by fan {pts:?}");
                // Inside the star-shaped polygon: inside (closed) one sector.
                let sectors: Vec<(i64, i64, i64)> = (0..k)
                    .map(|i| {
                        let (a, b) = ((pts[i].0, pts[i].1), (pts[(i + 1) % k].0, pts[(i + 1) % k].1));
                        (cross(c, a, q), cross(a, b, q), cross(b, c, q))
                    })
                    .collect();
                let in_closed = sectors.iter().any(|&(e0, e1, e2)| e0 >= 0 && e1 >= 0 && e2 >= 0);
                let on_outer = sectors.iter().any(|&(e0, e1, e2)| e0 >= 0 && e1 == 0 && e2 >= 0);
                if in_closed && !on_outer {
                    interior += 1;
                    assert_eq!(n, 1, "interior pixel ({x}, {y}) missed by fan {pts:?}");
                } else if !in_closed {
                    assert_eq!(n, 0, "outside pixel ({x}, {y}) drawn by fan {pts:?}");
                }
            }
        }
    }
    assert!(interior > 10_000 * rounds / 400, "only {interior} interior pixels were checked");
}

#[test]
fn jittered_grid_mesh_covers_the_target_exactly_once() {
    // A triangulated grid with random sub-pixel jitter that overhangs the target on every
    // side: each pixel is drawn exactly once.
    let mut rng = Rng(0x9e1d);
    for round in 0..if cfg!(miri) { 4 } else { 100 } {
        let (w, h) = (rng.range(5, 40), rng.range(5, 40));
        let (w, h) = if cfg!(miri) { (w.min(12), h.min(12)) } else { (w, h) };
        // Odd rounds put every vertex on the lattice of pixel centers (multiples of 8 offset
        // by 8), so that edges run through centers.
        let (step, jq) = if round % 2 == 0 { (rng.range(12, 90), 1) } else { (16 * rng.range(1, 6), 8) };
        let (nx, ny) = ((w * 16) / step + 3, (h * 16) / step + 3);
        let grid: Vec<Vec<ScreenVertex>> = (0..=ny)
            .map(|j| {
                (0..=nx)
                    .map(|i| {
                        let jit = step / 4 / jq;
                        let (dx, dy) = (rng.range(-jit, jit + 1) * jq, rng.range(-jit, jit + 1) * jq);
                        let off = if jq == 8 { 8 } else { 0 };
                        sv(i * step - step + dx + off, j * step - step + dy + off)
                    })
                    .collect()
            })
            .collect();
        let mut m = Mock::new(w, h, false);
        for j in 0..ny as usize {
            for i in 0..nx as usize {
                let (a, b, c, d) = (grid[j][i], grid[j][i + 1], grid[j + 1][i + 1], grid[j + 1][i]);
                if rng.next() & 1 == 0 {
                    fill(&mut m, [a, c, b], Cull::Back);
                    fill(&mut m, [a, d, c], Cull::Back);
                } else {
                    fill(&mut m, [a, d, b], Cull::Back);
                    fill(&mut m, [b, d, c], Cull::Back);
                }
            }
        }
        assert!(m.counts.iter().all(|&c| c == 1), "{w}x{h} step {step}:\n{:#?}", m.pattern());
    }
}

#[test]
fn culling_keeps_the_requested_faces() {
    // Counter-clockwise as seen on screen (and in NDC): a front face.
    let front = [px(1, 1), px(1, 7), px(7, 1)];
    let back = [front[0], front[2], front[1]];
    let count = |v, cull| {
        let mut m = Mock::new(8, 8, false);
        fill(&mut m, v, cull);
        m.counts.iter().sum::<u32>()
    };
    let n = count(front, Cull::Back);
    assert!(n > 0);
    assert_eq!(count(back, Cull::Back), 0);
    assert_eq!(count(front, Cull::Front), 0);
    assert_eq!(count(back, Cull::Front), n);
    assert_eq!(count(back, Cull::None), n);
    assert_eq!(count(front, Cull::None), n);
    // Degenerate triangles draw nothing in any mode.
    assert_eq!(count([px(1, 1), px(4, 4), px(7, 7)], Cull::None), 0);
}

#[test]
fn depth_and_shade_follow_the_planes_through_the_vertices() {
    // A pixel's depth and shade equal the exact barycentric interpolation within 4 depth
    // units (of 2^24) and half a shade level.
    let mut rng = Rng(0xdec0de);
    let (w, h) = (40, 30);
    let mut checked = 0;
    let rounds = if cfg!(miri) { 8 } else { 300 };
    for _ in 0..rounds {
        let v = [0; 3].map(|_| ScreenVertex {
            x: rng.range(-200, w * 16 + 200),
            y: rng.range(-200, h * 16 + 200),
            z: rng.range(0, 1 << 24),
            s: rng.range(0, 0xFF01),
        });
        let Some(v) = orient(v, Cull::None) else { continue };
        let mut m = Mock::new(w, h, true);
        let table: [u32; 256] = core::array::from_fn(|i| i as u32);
        fill_triangle(&mut m, &v, &table);
        let area =
            (v[1].x - v[0].x) as f64 * (v[2].y - v[0].y) as f64 - (v[1].y - v[0].y) as f64 * (v[2].x - v[0].x) as f64;
        let depth = m.depth.as_ref().unwrap();
        for y in 0..h {
            for x in 0..w {
                let i = (y * w + x) as usize;
                if m.counts[i] == 0 {
                    continue;
                }
                let (qx, qy) = ((x * 16 + 8) as f64, (y * 16 + 8) as f64);
                let e = |a: ScreenVertex, b: ScreenVertex| {
                    (b.x - a.x) as f64 * (qy - a.y as f64) - (b.y - a.y) as f64 * (qx - a.x as f64)
                };
                let (w1, w2) = (e(v[2], v[0]) / area, e(v[0], v[1]) / area);
                let w0 = 1.0 - w1 - w2;
                let z = w0 * v[0].z as f64 + w1 * v[1].z as f64 + w2 * v[2].z as f64;
                let s = (w0 * v[0].s as f64 + w1 * v[1].s as f64 + w2 * v[2].s as f64) / 256.0;
                assert!((depth[i] as f64 - z).abs() <= 4.0, "depth {} vs {z} in {v:?}", depth[i]);
                assert!((m.color[i] as f64 - s).abs() <= 0.5 + 1e-3, "shade {} vs {s} in {v:?}", m.color[i]);
                checked += 1;
            }
        }
    }
    assert!(checked > 20_000 * rounds / 300, "only {checked} pixels checked");
}
