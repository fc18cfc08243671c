//! The constants every front end shares. The browser's JavaScript reads them from the module
//! (`sinew_limits` in the web runtime's ABI) rather than retyping them.

use sinew::controller::FadeCurve;

pub use crate::parts::{FLOATS_PER_VERTEX, MAX_PART_VERTICES, MIN_PALETTE};

/// The attributes of an interleaved draw-part vertex ([`FLOATS_PER_VERTEX`] floats), in
/// order: position, normal, joint indices, joint weights, texture coordinates, color; each as
/// (components, offset in floats). The shaders' attribute locations follow this order.
pub const VERTEX_ATTRIBUTES: [(usize, usize); 6] = [(3, 0), (3, 3), (4, 6), (4, 10), (2, 14), (4, 16)];

const _: () = {
    let mut i = 0;
    let mut next = 0;
    while i < VERTEX_ATTRIBUTES.len() {
        assert!(VERTEX_ATTRIBUTES[i].1 == next);
        next += VERTEX_ATTRIBUTES[i].0;
        i += 1;
    }
    assert!(next == FLOATS_PER_VERTEX);
};

/// A crossfade's length when the caller gives none, in seconds.
pub const CROSSFADE_SECONDS: f32 = 0.5;

/// A crossfade's curve when the caller gives none.
pub const CROSSFADE_CURVE: FadeCurve = FadeCurve::Linear;

/// The most joints of a character in the browser runtime and of a model a graph runs on (the
/// page's runtime and the command line's runner): a quarter of the format's
/// ([`sinew::limits::MAX_JOINTS`]), since a skeleton's storage is fixed and a module's
/// allocations start from its initial data.
pub const RUNTIME_JOINTS: usize = 256;

sinew::capacity! {
    /// The browser runtime's characters: up to [`RUNTIME_JOINTS`] joints, the primary and the second clip, no
    /// root motion (the viewer plays clips in place) and no additive layers (it blends the two
    /// clips in the base layer): their code stays out of the module.
    pub struct WebRig { joints: RUNTIME_JOINTS, slots: 2, root_motion: false, additive: false }
}

sinew::capacity! {
    /// The desktop's characters: the format's limit of joints
    /// ([`sinew::limits::MAX_JOINTS`]), the primary and the second clip.
    pub struct DesktopRig { joints: sinew::limits::MAX_JOINTS, slots: 2 }
}
