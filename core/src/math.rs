//! Math: vectors, quaternions, matrices, dual quaternions, their SoA forms, and the generic
//! transcendental kernels in [`ops`].
//!
//! Everything is generic over [`Real`](crate::Real) (`f32` or [`Q16`](crate::Q16)).

pub mod dual_quat;
pub mod mat4;
pub mod ops;
pub mod polar;
pub mod quat;
pub mod soa;
pub mod transform;
pub mod vec;

pub use dual_quat::DualQuat;
pub use mat4::Mat4;
pub use polar::SymMat3;
pub use quat::Quat;
pub use soa::{SoaQuat, SoaTransform, SoaVec3};
pub use transform::Transform;
pub use vec::{Vec3, Vec4};
