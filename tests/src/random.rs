//! Seeded random inputs for differential tests: rotations, directions, magnitudes.
//!
//! Every generator takes the caller's [`TestRng`], created by [`rng`] from a fixed seed, so a
//! failing case reproduces exactly.

use rand::{Rng, SeedableRng};

use crate::reference::{Quatd, Vec3d};

/// The generator every test uses (PCG, 64-bit output; fast and reproducible across platforms).
pub type TestRng = rand_pcg::Pcg64Mcg;

/// A generator seeded with `seed`.
#[must_use]
pub fn rng(seed: u64) -> TestRng {
    TestRng::seed_from_u64(seed)
}

/// A uniform value in `[lo, hi)`.
pub fn uniform(rng: &mut TestRng, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * rng.gen::<f64>()
}

/// A value whose logarithm is uniform in `[ln lo, ln hi)` (`0 < lo < hi`).
pub fn log_uniform(rng: &mut TestRng, lo: f64, hi: f64) -> f64 {
    uniform(rng, lo.ln(), hi.ln()).exp()
}

/// A rotation drawn uniformly from SO(3) (Shoemake's subgroup algorithm), as a unit quaternion
/// with either sign equally likely.
pub fn unit_quat(rng: &mut TestRng) -> Quatd {
    let (u1, u2, u3): (f64, f64, f64) = (rng.gen(), rng.gen(), rng.gen());
    let tau = std::f64::consts::TAU;
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    Quatd::new(a * (tau * u2).sin(), a * (tau * u2).cos(), b * (tau * u3).sin(), b * (tau * u3).cos())
}

/// A direction drawn uniformly from the unit sphere.
pub fn unit_vec3(rng: &mut TestRng) -> Vec3d {
    let z = uniform(rng, -1.0, 1.0);
    let phi = uniform(rng, 0.0, std::f64::consts::TAU);
    let r = (1.0 - z * z).max(0.0).sqrt();
    Vec3d::new(r * phi.cos(), r * phi.sin(), z)
}

/// A vector with each component uniform in `[-half_extent, half_extent)`.
pub fn in_box(rng: &mut TestRng, half_extent: f64) -> Vec3d {
    Vec3d::new(
        uniform(rng, -half_extent, half_extent),
        uniform(rng, -half_extent, half_extent),
        uniform(rng, -half_extent, half_extent),
    )
}

/// A rotation of a uniformly random axis by an angle uniform in `[0, max_angle)` radians.
pub fn small_rotation(rng: &mut TestRng, max_angle: f64) -> Quatd {
    let axis = unit_vec3(rng);
    let angle = uniform(rng, 0.0, max_angle);
    Quatd::from_axis_angle(axis, angle)
}
