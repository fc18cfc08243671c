//! A baked material's sampler codes as OpenGL ES 2.0 / WebGL 1 enums, for the desktop viewer's
//! textures and the browser page's.

use sinew::asset::format::{
    FILTER_LINEAR_MIPMAP_LINEAR, FILTER_LINEAR_MIPMAP_NEAREST, FILTER_NEAREST, FILTER_NEAREST_MIPMAP_LINEAR,
    FILTER_NEAREST_MIPMAP_NEAREST,
};
use sinew::raster::Wrap;

/// `GL_NEAREST`.
pub const NEAREST: u32 = 0x2600;
/// `GL_LINEAR`.
pub const LINEAR: u32 = 0x2601;
/// `GL_NEAREST_MIPMAP_NEAREST`.
pub const NEAREST_MIPMAP_NEAREST: u32 = 0x2700;
/// `GL_LINEAR_MIPMAP_NEAREST`.
pub const LINEAR_MIPMAP_NEAREST: u32 = 0x2701;
/// `GL_NEAREST_MIPMAP_LINEAR`.
pub const NEAREST_MIPMAP_LINEAR: u32 = 0x2702;
/// `GL_LINEAR_MIPMAP_LINEAR`.
pub const LINEAR_MIPMAP_LINEAR: u32 = 0x2703;
/// `GL_REPEAT`.
pub const REPEAT: u32 = 0x2901;
/// `GL_CLAMP_TO_EDGE`.
pub const CLAMP_TO_EDGE: u32 = 0x812F;
/// `GL_MIRRORED_REPEAT`.
pub const MIRRORED_REPEAT: u32 = 0x8370;

/// The wrap mode's enum.
#[must_use]
pub fn wrap(w: Wrap) -> u32 {
    match w {
        Wrap::Repeat => REPEAT,
        Wrap::ClampToEdge => CLAMP_TO_EDGE,
        Wrap::MirroredRepeat => MIRRORED_REPEAT,
    }
}

/// A magnification filter code's enum (`NEAREST`, else `LINEAR`).
#[must_use]
pub fn mag_filter(code: u8) -> u32 {
    if code == FILTER_NEAREST {
        NEAREST
    } else {
        LINEAR
    }
}

/// A minification filter code's enum (`LINEAR` for an unknown code).
#[must_use]
pub fn min_filter(code: u8) -> u32 {
    match code {
        FILTER_NEAREST => NEAREST,
        FILTER_NEAREST_MIPMAP_NEAREST => NEAREST_MIPMAP_NEAREST,
        FILTER_LINEAR_MIPMAP_NEAREST => LINEAR_MIPMAP_NEAREST,
        FILTER_NEAREST_MIPMAP_LINEAR => NEAREST_MIPMAP_LINEAR,
        FILTER_LINEAR_MIPMAP_LINEAR => LINEAR_MIPMAP_LINEAR,
        _ => LINEAR,
    }
}
