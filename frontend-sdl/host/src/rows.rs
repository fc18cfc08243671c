//! Skin palettes as the GLSL ES 1.00 shaders' uniform arrays take them (`frontend-sdl/shaders`),
//! appended to a flat `f32` buffer: three rows per matrix for linear blend skinning
//! (`u_jointMat`), four per dual quaternion and its scale factor, two per dual quaternion of a
//! rigid palette (`u_jointDQ`). The desktop viewer and the browser runtime upload exactly these.

use alloc::vec::Vec;

use sinew::math::{DualQuat, Mat4, SymMat3};

/// Floats per joint of the linear-blend rows.
pub const LBS_FLOATS: usize = 12;
/// Floats per joint of the dual-quaternion rows with scale.
pub const DQS_FLOATS: usize = 16;
/// Floats per joint of the rigid dual-quaternion rows.
pub const DQS_RIGID_FLOATS: usize = 8;

/// Appends the first three rows of `m`, as `u_jointMat` takes them.
pub fn push_matrix(out: &mut Vec<f32>, m: &Mat4<f32>) {
    for r in 0..3 {
        out.extend([m.cols[0][r], m.cols[1][r], m.cols[2][r], m.cols[3][r]]);
    }
}

/// Appends `d` as `u_jointDQ` takes it: the real part (x, y, z, w), the dual part, then with a
/// scale factor `P` the rows `(xx, yy, zz, xy)` and `(xz, yz, 0, 0)`.
pub fn push_dual_quat(out: &mut Vec<f32>, d: &DualQuat<f32>, scale: Option<&SymMat3<f32>>) {
    out.extend(d.real.to_array());
    out.extend(d.dual.to_array());
    if let Some(s) = scale {
        out.extend([s.xx, s.yy, s.zz, s.xy, s.xz, s.yz, 0.0, 0.0]);
    }
}

/// The linear-blend rows of a part's local palette: joint `i` is `palette[map[i]]` (the
/// identity for an index past the palette).
pub fn lbs_rows(palette: &[Mat4<f32>], map: &[u16], out: &mut Vec<f32>) {
    out.reserve(map.len() * LBS_FLOATS);
    for &j in map {
        push_matrix(out, palette.get(j as usize).unwrap_or(&Mat4::IDENTITY));
    }
}

/// The dual-quaternion rows with scale of a part's local palette (identities for an index past
/// the palette).
pub fn dq_rows(dual_quats: &[DualQuat<f32>], scales: &[SymMat3<f32>], map: &[u16], out: &mut Vec<f32>) {
    out.reserve(map.len() * DQS_FLOATS);
    for &j in map {
        let d = dual_quats.get(j as usize).unwrap_or(&DualQuat::IDENTITY);
        push_dual_quat(out, d, Some(scales.get(j as usize).unwrap_or(&SymMat3::IDENTITY)));
    }
}

/// The rigid dual-quaternion rows of a part's local palette: the scale factors are not sent,
/// so use them where [`part_is_rigid`] holds.
pub fn dq_rigid_rows(dual_quats: &[DualQuat<f32>], map: &[u16], out: &mut Vec<f32>) {
    out.reserve(map.len() * DQS_RIGID_FLOATS);
    for &j in map {
        push_dual_quat(out, dual_quats.get(j as usize).unwrap_or(&DualQuat::IDENTITY), None);
    }
}

/// True when no joint `map` names scales in `scales` (an index past it counts as the
/// identity), so [`dq_rigid_rows`] loses nothing.
#[must_use]
pub fn part_is_rigid(scales: &[SymMat3<f32>], map: &[u16]) -> bool {
    map.iter().all(|&j| scales.get(j as usize).is_none_or(SymMat3::is_identity))
}

/// The matrix whose first three rows are `rows` (the inverse of [`push_matrix`]).
#[must_use]
pub fn mat_from_rows(rows: &[f32; LBS_FLOATS]) -> Mat4<f32> {
    let mut m = Mat4::IDENTITY;
    for (r, row) in rows.chunks_exact(4).enumerate() {
        for (col, &v) in m.cols.iter_mut().zip(row) {
            col[r] = v;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use sinew::math::{Quat, Vec3};

    #[test]
    fn matrix_rows_round_trip_and_unknown_joints_are_identities() {
        let m = Mat4::from_trs(Vec3::new(1.0, 2.0, 3.0), Quat::from_axis_angle(Vec3::Y, 0.3), Vec3::splat(1.5));
        let mut out = Vec::new();
        lbs_rows(&[m], &[0, 7], &mut out);
        assert_eq!(out.len(), 2 * LBS_FLOATS);
        let rows: [f32; LBS_FLOATS] = out[..LBS_FLOATS].try_into().unwrap_or([0.0; LBS_FLOATS]);
        assert_eq!(mat_from_rows(&rows), m);
        assert_eq!(&out[LBS_FLOATS..], &[1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    }

    #[test]
    fn dual_quaternion_rows_carry_the_scale_factor_and_rigidity_follows_the_part() {
        let d = DualQuat::from_rotation_translation(Quat::from_axis_angle(Vec3::Y, 0.1), Vec3::new(1.0, 0.0, 0.0));
        let mut scales = vec![SymMat3::IDENTITY; 3];
        let (mut with, mut rigid) = (Vec::new(), Vec::new());
        dq_rows(&[d, d, d], &scales, &[2, 9], &mut with);
        dq_rigid_rows(&[d, d, d], &[2, 9], &mut rigid);
        assert_eq!(with.len(), 2 * DQS_FLOATS);
        assert_eq!(rigid.len(), 2 * DQS_RIGID_FLOATS);
        assert_eq!(&with[..8], &rigid[..8]);
        assert_eq!(&rigid[8..], &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
        assert!(part_is_rigid(&scales, &[0, 2, 9]));
        scales[1] = SymMat3 { xx: 1.5, ..SymMat3::IDENTITY };
        assert!(!part_is_rigid(&scales, &[0, 1]));
        assert!(part_is_rigid(&scales, &[0, 2]));
    }
}
