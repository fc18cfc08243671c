//! Root motion: moves the character by its root joint's animated displacement and keeps the
//! pose in place (`extract.rs`), plus a path follower that advances a character along a
//! polyline by that displacement, so its feet do not slide (`path.rs`).
//!
//! # Motions
//!
//! A [`Motion`] is a planar rigid motion: a rotation of `yaw` radians about +Y followed by a
//! translation. [`Motion::extract`] takes the chosen part of a root transform (by default its X
//! and Z translation and its twist about Y). With `M(p)` the root's motion at clip phase `p`,
//! `M_s` at the clip start and `M_e` at the end, one loop's displacement is
//! `L = M_s⁻¹ · M_e`, and the character frame unwrapped over loops is
//! `P(k, p) = Lᵏ · M_s⁻¹ · M(p)` — continuous across each wrap, since `P(k, end) = P(k + 1, start)`.
//! The displacement of an update from `(k₀, p₀)` to `(k₁, p₁)` is
//!
//! ```text
//! Δ = P(k₀, p₀)⁻¹ · P(k₁, p₁) = M(p₀)⁻¹ · M_s · L^(k₁−k₀) · M_s⁻¹ · M(p₁)
//! ```
//!
//! expressed in the character's frame before the update (apply it as `world = world · Δ`). It is
//! exact over any number of wraps (`L^n` by repeated squaring), backwards (`n < 0`), and its
//! composition over consecutive updates telescopes: N whole loops give exactly `Lᴺ`.
//! [`RootMotionTracker`] keeps `M_s`, `L` and the previous `M(p)` of one playing clip.
//!
//! To animate in place, the root joint's local transform `X` becomes `M(p)⁻¹ · M_s · X`
//! ([`RootMotionTracker::remove`]), so that `world · Δ…` times the in-place root equals the
//! original animation: the root keeps its start offset on the extracted axes, and its other
//! motion (a walk's vertical bob, its sway about other axes) stays in the pose.
//!
//! Blended clips: each clip's Δ is computed on its own, then the deltas are averaged by weight
//! ([`MotionBlend`]).

mod extract;
mod path;

pub use extract::{sample_joint, Motion, MotionBlend, RootMotionSettings, RootMotionTracker};
pub use path::{PathEnd, PathFollower, PathPose, Segment};
