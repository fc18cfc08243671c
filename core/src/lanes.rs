//! The lane types under their first path: [`Lanes`], [`F32x4`] and [`Q16x4`] live with their
//! scalars in [`crate::real`] (see its documentation) and are re-exported here.

pub use crate::real::{F32x4, Lanes, Q16x4};
