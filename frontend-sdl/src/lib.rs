//! sinew's viewers behind the `sinew` command line: the SDL2 window with an OpenGL ES 2 context
//! ([`demo`]), the software rasterizer in a minifb window ([`soft`]), the model and playback
//! options both take and the viewer built from them ([`playback`]), and the built-in scene both
//! draw ([`scene`]). The offline pipeline they load models through is [`sinew_offline`].

pub mod demo;
pub mod playback;
pub mod retarget;
pub mod scene;
pub mod soft;

/// Width of the `demo` window and the `soft` window and images unless told otherwise: one size
/// for both, so that their frames compare without flags.
pub const DEFAULT_WIDTH: u32 = 1280;
/// Height of the `demo` window and the `soft` window and images unless told otherwise.
pub const DEFAULT_HEIGHT: u32 = 720;
