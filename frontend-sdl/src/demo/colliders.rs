//! Spring colliders as wire lines for the viewer's collider overlay: the host layer's
//! ([`sinew_host::character::colliders`]), which the browser viewer draws too.

pub use sinew_host::character::colliders::{shape_lines, ColliderLines, CIRCLE_SEGMENTS};
