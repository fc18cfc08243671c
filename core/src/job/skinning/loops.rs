// The skinning loops of one kernel set: `skinning.rs` includes this file in its modules
// `build` and `v3`, each of which declares the constant `V3` that the lane operations read
// (`fma(V3)`, `mul_add_whole_on::<V3>`, `call::<_, V3>`), so that the loops are written once
// and take no parameter for the set. The files below are included into modules of their own
// in each copy.

use super::{vertex, Palette, SkinningJob};
use crate::platform::HOST_KERNELS;
use crate::real::Real;

/// A blended matrix as lane vectors, and the affine transforms of lane vectors that LBS and
/// DQS share (`skinning/blended.rs`).
mod blended {
    use super::V3;
    include!("blended.rs");
}

/// Linear blend skinning (`skinning/lbs.rs`).
pub(crate) mod lbs {
    use super::V3;
    include!("lbs.rs");
}

/// Dual-quaternion skinning (`skinning/dqs.rs`).
mod dqs {
    use super::V3;
    include!("dqs.rs");
}

/// Dual-quaternion skinning with scale (`skinning/scaled.rs`).
mod scaled {
    use super::V3;
    include!("scaled.rs");
}

/// The loop for the job's palette kind and influence count.
#[inline(always)]
pub(super) fn kernels<R: Real, const UNIT: bool>(job: &mut SkinningJob<'_, R>) {
    // Hosts get a loop specialised for each usual influence count; microcontrollers one
    // general loop, which keeps the code small.
    if HOST_KERNELS {
        match (job.palette, job.influences) {
            (Palette::Matrices(p), 1) => lbs::lbs::<R, 1, UNIT>(job, p),
            (Palette::Matrices(p), 2) => lbs::lbs::<R, 2, UNIT>(job, p),
            (Palette::Matrices(p), 3) => lbs::lbs::<R, 3, UNIT>(job, p),
            (Palette::Matrices(p), 4) => lbs::lbs::<R, 4, UNIT>(job, p),
            (Palette::Matrices(p), _) => lbs::lbs::<R, 0, UNIT>(job, p),
            (Palette::DualQuats(p), _) => dqs::dqs(job, p),
            (Palette::ScaledDualQuats { dual_quats, scales }, _) => {
                scaled::dqs_maybe_scaled(job, dual_quats, scales);
            }
        }
    } else {
        match job.palette {
            Palette::Matrices(p) => lbs::lbs::<R, 0, UNIT>(job, p),
            Palette::DualQuats(p) => dqs::dqs(job, p),
            Palette::ScaledDualQuats { dual_quats, scales } => scaled::dqs_maybe_scaled(job, dual_quats, scales),
        }
    }
}
