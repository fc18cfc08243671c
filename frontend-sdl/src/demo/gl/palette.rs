//! Skin palettes as the shaders' uniform arrays take them, in `vec4`s: three rows per matrix for
//! linear blend skinning ([`lbs_rows`]), four per dual quaternion and its scale factor
//! ([`dq_rows`]), two per dual quaternion of a rigid palette ([`dq_rigid_rows`]), and back
//! ([`mat_from_rows`]). The rows are the host layer's ([`sinew_host::rows`]), which the browser
//! runtime uploads too.

use sinew::math::Mat4;
use sinew_host::rows;
use sinew_offline::model::DqPalette;

/// `flat` as `vec4`s.
fn vec4s(flat: &[f32]) -> Vec<[f32; 4]> {
    flat.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect()
}

/// The first three rows of each skin matrix of a part's local palette, as uploaded to
/// `u_jointMat`: entry `3i + r` is row `r` of `palette[map[i]]` (identity for an index past
/// the palette).
#[must_use]
pub fn lbs_rows(palette: &[Mat4<f32>], map: &[u16]) -> Vec<[f32; 4]> {
    let mut flat = Vec::new();
    rows::lbs_rows(palette, map, &mut flat);
    vec4s(&flat)
}

/// Each joint of a part's local palette as four rows, as uploaded to `u_jointDQ`: entry `4i` is
/// the real part of `palette.dual_quats[map[i]]` (x, y, z, w), `4i + 1` its dual part, `4i + 2`
/// and `4i + 3` the scale factor `P` as `(xx, yy, zz, xy)` and `(xz, yz, 0, 0)` (identity for
/// an index past the palette).
#[must_use]
pub fn dq_rows(palette: &DqPalette, map: &[u16]) -> Vec<[f32; 4]> {
    let mut flat = Vec::new();
    rows::dq_rows(&palette.dual_quats, &palette.scales, map, &mut flat);
    vec4s(&flat)
}

/// Each joint of a part's local palette as two rows, as uploaded to the rigid DQS program's
/// `u_jointDQ`: entry `2i` is the real part of `palette.dual_quats[map[i]]` (x, y, z, w),
/// `2i + 1` its dual part (identity for an index past the palette). The scale factors are not
/// sent: use it when [`part_is_rigid`] holds.
#[must_use]
pub fn dq_rigid_rows(palette: &DqPalette, map: &[u16]) -> Vec<[f32; 4]> {
    let mut flat = Vec::new();
    rows::dq_rigid_rows(&palette.dual_quats, map, &mut flat);
    vec4s(&flat)
}

/// True when every joint `map` names has no scale in `palette` (an index past it counts as
/// the identity), so [`dq_rigid_rows`] loses nothing.
#[must_use]
pub fn part_is_rigid(palette: &DqPalette, map: &[u16]) -> bool {
    rows::part_is_rigid(&palette.scales, map)
}

/// True when a part of `map`'s joints fits no program that can draw `palette` under DQS: it
/// has more than `scaled_size` joints (the DQS with scale program's `JOINTS`) and some of
/// them scale, so only the CPU can skin it.
#[must_use]
pub fn needs_cpu_dqs(palette: &DqPalette, map: &[u16], scaled_size: usize) -> bool {
    map.len() > scaled_size && !part_is_rigid(palette, map)
}

/// The matrix whose first three rows are `rows` (the inverse of one [`lbs_rows`] entry).
#[must_use]
pub fn mat_from_rows(rows: &[[f32; 4]; 3]) -> Mat4<f32> {
    let mut flat = [0.0; rows::LBS_FLOATS];
    for (out, row) in flat.chunks_exact_mut(4).zip(rows) {
        out.copy_from_slice(row);
    }
    rows::mat_from_rows(&flat)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sinew::math::{DualQuat, Quat, SymMat3, Vec3};

    fn palette(n: usize) -> DqPalette {
        let dual_quats = (0..n)
            .map(|i| {
                DualQuat::from_rotation_translation(
                    Quat::from_axis_angle(Vec3::Y, i as f32 * 0.1),
                    Vec3::new(i as f32, 0.0, 0.0),
                )
            })
            .collect();
        DqPalette { dual_quats, scales: vec![SymMat3::IDENTITY; n] }
    }

    #[test]
    fn rigid_rows_are_the_dual_quaternions_and_rigidity_follows_the_part() {
        let mut p = palette(40);
        let map: Vec<u16> = (0..37).rev().collect();
        let rows = dq_rigid_rows(&p, &map);
        assert_eq!(rows.len(), 74);
        assert_eq!(rows[0], p.dual_quats[36].real.to_array());
        assert_eq!(rows[1], p.dual_quats[36].dual.to_array());
        // Past the palette: the identity.
        assert_eq!(dq_rigid_rows(&p, &[99]), vec![[0.0, 0.0, 0.0, 1.0], [0.0; 4]]);
        assert!(part_is_rigid(&p, &map) && part_is_rigid(&p, &[99]));
        assert!(!needs_cpu_dqs(&p, &map, 28));
        // One scaled joint of the part: not rigid; beyond 28 joints only the CPU can skin it.
        p.scales[5] = SymMat3 { xx: 1.5, ..SymMat3::IDENTITY };
        assert!(!part_is_rigid(&p, &map));
        assert!(needs_cpu_dqs(&p, &map, 28));
        assert!(!needs_cpu_dqs(&p, &map[..28], 28));
        // A scaled joint outside the part does not matter.
        assert!(part_is_rigid(&p, &[38, 39]));
    }
}
