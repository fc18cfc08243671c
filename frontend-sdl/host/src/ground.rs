//! The ground a viewer stands a character's feet on ([`Terrain`]): a floor with a step and a
//! slope, answering the height and normal under a point as the core's foot placement asks
//! ([`Ground`]). The browser viewer draws it from the same answers (`sinew_character_ground`),
//! so what is drawn is what the feet stand on.

use sinew::job::foot::{Ground, GroundHit};
use sinew::math::Vec3;

/// The step's height in [`Terrain::beside`], per unit of the legs' length.
pub const STEP_PER_LEG: f32 = 0.15;

/// The slope's grade in [`Terrain::beside`] (height per unit of run): tan 12°.
pub const SLOPE_GRADE: f32 = 0.212_556_56;

/// A floor split in two by the vertical plane `x = edge`: where `x < edge` a flat step `step`
/// above the floor's `height`; where `x ≥ edge` a slope rising by `grade` per unit of `z`
/// (uphill towards +Z), at the floor's height along `z = 0`. World units, Y up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Terrain {
    /// World height of the floor: the step's foot, and the slope along `z = 0`.
    pub height: f32,
    /// Where the step ends and the slope begins: the plane `x = edge`.
    pub edge: f32,
    /// The step's height above the floor (negative: a step down).
    pub step: f32,
    /// The slope's grade: its rise per unit of `z`.
    pub grade: f32,
}

impl Terrain {
    /// A flat floor at height 0.
    pub const FLAT: Terrain = Terrain { height: 0.0, edge: 0.0, step: 0.0, grade: 0.0 };

    /// The ground a viewer puts under a character standing on the model's ground (height 0)
    /// with its legs either side of `x = middle` (the mean of its hips) and `leg` long (hip to
    /// ankle): the step, [`STEP_PER_LEG`] of a leg high, under the legs on the −X side, the
    /// slope of grade [`SLOPE_GRADE`] under those on the +X side.
    #[must_use]
    pub fn beside(middle: f32, leg: f32) -> Terrain {
        Terrain { height: 0.0, edge: middle, step: STEP_PER_LEG * leg, grade: SLOPE_GRADE }
    }

    /// The ground's height under `(x, z)`.
    #[must_use]
    pub fn height_at(&self, x: f32, z: f32) -> f32 {
        if x < self.edge {
            self.height + self.step
        } else {
            self.height + self.grade * z
        }
    }

    /// The ground's upward normal under `(x, z)`, not normalized: `(0, 1, −grade)` on the slope,
    /// +Y on the step.
    #[must_use]
    pub fn normal_at(&self, x: f32, _z: f32) -> Vec3<f32> {
        if x < self.edge {
            Vec3::Y
        } else {
            Vec3::new(0.0, 1.0, -self.grade)
        }
    }
}

impl Ground<f32> for Terrain {
    fn ground(&mut self, _leg: usize, at: Vec3<f32>) -> Option<GroundHit<f32>> {
        Some(GroundHit { height: self.height_at(at.x, at.z), normal: self.normal_at(at.x, at.z) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_and_the_slope_meet_at_the_edge() {
        let mut t = Terrain { height: 0.5, edge: -0.1, step: 0.2, grade: 0.25 };
        // The step: flat, 0.2 above the floor, whatever z.
        assert_eq!(t.height_at(-0.3, 4.0), 0.7);
        assert_eq!(t.normal_at(-0.3, 4.0), Vec3::Y);
        // The slope: the floor's height on z = 0, a quarter up per unit forward.
        assert_eq!(t.height_at(-0.1, 0.0), 0.5);
        assert_eq!(t.height_at(2.0, 2.0), 1.0);
        assert_eq!(t.height_at(2.0, -2.0), 0.0);
        // Its normal is perpendicular to the slope's direction of climb (0, 0.25, 1).
        let n = t.normal_at(2.0, 2.0);
        assert_eq!(n.dot(Vec3::new(0.0, 0.25, 1.0)), 0.0);
        assert!(n.y > 0.0);
        // The ground query answers the same, for any leg and any height of the point.
        let hit = t.ground(1, Vec3::new(2.0, 9.0, 2.0)).unwrap();
        assert_eq!((hit.height, hit.normal), (1.0, n));
        // The viewers' ground: the step under −X, 12° of slope under +X.
        let b = Terrain::beside(0.25, 2.0);
        assert_eq!((b.height, b.edge, b.step), (0.0, 0.25, 0.3));
        let degrees = sinew::math::ops::atan(b.grade) * 180.0 / core::f32::consts::PI;
        assert!((degrees - 12.0).abs() < 1e-4, "{degrees}");
        assert_eq!(Terrain::FLAT.height_at(-3.0, 7.0), 0.0);
    }
}
