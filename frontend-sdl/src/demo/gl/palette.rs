//! Skin palettes as the shaders' uniform arrays take them: three rows per matrix for linear
//! blend skinning ([`lbs_rows`]), four per dual quaternion and its scale factor ([`dq_rows`]),
//! and back ([`mat_from_rows`]).

use sinew::math::{DualQuat, Mat4, SymMat3};
use sinew_offline::model::DqPalette;

/// The first three rows of each skin matrix of a part's local palette, as uploaded to
/// `u_jointMat`: entry `3i + r` is row `r` of `palette[map[i]]` (identity for an index past
/// the palette).
#[must_use]
pub fn lbs_rows(palette: &[Mat4<f32>], map: &[u16]) -> Vec<[f32; 4]> {
    let mut out = Vec::with_capacity(map.len() * 3);
    for &j in map {
        let m = palette.get(j as usize).copied().unwrap_or(Mat4::IDENTITY);
        for r in 0..3 {
            out.push([m.cols[0][r], m.cols[1][r], m.cols[2][r], m.cols[3][r]]);
        }
    }
    out
}

/// Each joint of a part's local palette as four rows, as uploaded to `u_jointDQ`: entry `4i` is
/// the real part of `palette.dual_quats[map[i]]` (x, y, z, w), `4i + 1` its dual part, `4i + 2`
/// and `4i + 3` the scale factor `P` as `(xx, yy, zz, xy)` and `(xz, yz, 0, 0)` (identity for
/// an index past the palette).
#[must_use]
pub fn dq_rows(palette: &DqPalette, map: &[u16]) -> Vec<[f32; 4]> {
    let mut out = Vec::with_capacity(map.len() * 4);
    for &j in map {
        let d = palette.dual_quats.get(j as usize).copied().unwrap_or(DualQuat::IDENTITY);
        let s = palette.scales.get(j as usize).copied().unwrap_or(SymMat3::IDENTITY);
        out.push(d.real.to_array());
        out.push(d.dual.to_array());
        out.push([s.xx, s.yy, s.zz, s.xy]);
        out.push([s.xz, s.yz, 0.0, 0.0]);
    }
    out
}

/// The matrix whose first three rows are `rows` (the inverse of one [`lbs_rows`] entry).
#[must_use]
pub fn mat_from_rows(rows: &[[f32; 4]; 3]) -> Mat4<f32> {
    let mut m = Mat4::IDENTITY;
    for (r, row) in rows.iter().enumerate() {
        for (col, &v) in m.cols.iter_mut().zip(row) {
            col[r] = v;
        }
    }
    m
}
