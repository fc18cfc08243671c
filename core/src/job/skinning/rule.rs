//! The linear-blend-skinning rule in plain code: one vertex at a time in scalar arithmetic, the
//! operations in the order the build's own kernels compute them in lanes (`skinning/lbs.rs`,
//! `skinning/blended.rs`), so that those give the rule's bits, in `f32` and `Q16`. The
//! x86-64-v3 kernels fuse the multiply-adds (and start a point's sum from the translation), so
//! the tests hold them within a stated tolerance instead. Directions are scaled to unit length
//! by [`unit`], scalar in every build: the rule and the kernels share it (the kernels' four-lane
//! pass gives its bits).

use super::vertex::unit;
use crate::math::{Mat4, Vec3, Vec4};
use crate::real::Real;

/// A vertex's blended matrix: `Σ wᵢ·Mᵢ` entry by entry over its influences in order, from the
/// first product, zero weights included.
fn blend<R: Real>(palette: &[Mat4<R>], idx: &[u16], w: &[R]) -> [[R; 4]; 4] {
    let mut m = [[R::ZERO; 4]; 4];
    for (i, (&j, &wi)) in idx.iter().zip(w).enumerate() {
        let p = &palette[usize::from(j)].cols;
        for c in 0..4 {
            for r in 0..4 {
                m[c][r] = if i == 0 { p[c][r] * wi } else { p[c][r] * wi + m[c][r] };
            }
        }
    }
    m
}

/// `m · (v, 0)`: `(c₀·x + c₁·y) + c₂·z`, row by row.
fn direction<R: Real>(m: &[[R; 4]; 4], v: Vec3<R>) -> Vec3<R> {
    let row = |r: usize| (m[0][r] * v.x + m[1][r] * v.y) + m[2][r] * v.z;
    Vec3::new(row(0), row(1), row(2))
}

/// `m · (v, 1)`: `((c₀·x + c₁·y) + c₂·z) + t`, row by row.
fn point<R: Real>(m: &[[R; 4]; 4], v: Vec3<R>) -> Vec3<R> {
    let d = direction(m, v);
    Vec3::new(d.x + m[3][0], d.y + m[3][1], d.z + m[3][2])
}

/// The skinned streams of [`SkinningJob`](super::SkinningJob) with
/// [`Palette::Matrices`](super::Palette::Matrices) (checked inputs, `k` influences per vertex):
/// each vertex's blended matrix moves its position and maps its normal and its tangent's xyz
/// (w kept), the directions scaled to unit length when `unit_directions` (`run`) and left as
/// mapped otherwise (`run_unnormalized`).
#[allow(clippy::too_many_arguments)]
pub(super) fn lbs<R: Real>(
    palette: &[Mat4<R>],
    k: usize,
    idx: &[u16],
    w: &[R],
    positions: &[Vec3<R>],
    normals: Option<&[Vec3<R>]>,
    tangents: Option<&[Vec4<R>]>,
    unit_directions: bool,
    out_p: &mut [Vec3<R>],
    mut out_n: Option<&mut [Vec3<R>]>,
    mut out_t: Option<&mut [Vec4<R>]>,
) {
    let dir = |d: Vec3<R>| if unit_directions { unit(d) } else { d };
    for (v, p) in positions.iter().enumerate() {
        let m = blend(palette, &idx[v * k..(v + 1) * k], &w[v * k..(v + 1) * k]);
        out_p[v] = point(&m, *p);
        if let (Some(n), Some(o)) = (normals, out_n.as_deref_mut()) {
            o[v] = dir(direction(&m, n[v]));
        }
        if let (Some(t), Some(o)) = (tangents, out_t.as_deref_mut()) {
            o[v] = dir(direction(&m, t[v].truncate())).extend(t[v].w);
        }
    }
}
