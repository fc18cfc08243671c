//! Skin palettes as the shaders' uniform arrays take them: three rows per matrix for linear
//! blend skinning ([`lbs_rows`]), two per dual quaternion ([`dq_rows`]), and back
//! ([`mat_from_rows`]).

use sinew::math::{DualQuat, Mat4};

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

/// Each dual quaternion of a part's local palette as two rows, as uploaded to `u_jointDQ`:
/// entry `2i` is `palette[map[i]].real` (x, y, z, w), `2i + 1` its dual part.
#[must_use]
pub fn dq_rows(palette: &[DualQuat<f32>], map: &[u16]) -> Vec<[f32; 4]> {
    let mut out = Vec::with_capacity(map.len() * 2);
    for &j in map {
        let d = palette.get(j as usize).copied().unwrap_or(DualQuat::IDENTITY);
        out.push(d.real.to_array());
        out.push(d.dual.to_array());
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
