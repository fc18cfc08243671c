//! The offscreen render target of headless frames and screenshots ([`Offscreen`]: an RGBA8
//! color texture and a 16-bit depth buffer), and reading pixels back ([`read_rgba`]).

use glow::HasContext;

use super::context::GlError;
use super::texture;

/// An offscreen color and depth target.
pub(super) struct Offscreen {
    /// The framebuffer to bind.
    pub(super) fbo: glow::Framebuffer,
    color: glow::Texture,
    depth: glow::Renderbuffer,
    /// Width in pixels.
    pub(super) width: u32,
    /// Height in pixels.
    pub(super) height: u32,
}

impl Offscreen {
    /// Creates a complete `width × height` target on `gl`.
    ///
    /// # Errors
    ///
    /// [`GlError::Create`] when an object cannot be created, [`GlError::Framebuffer`] when the
    /// framebuffer is incomplete (its objects are deleted again).
    pub(super) fn new(gl: &glow::Context, width: u32, height: u32) -> Result<Offscreen, GlError> {
        // SAFETY: framebuffer object creation on the current context.
        unsafe {
            let fbo = gl.create_framebuffer().map_err(GlError::Create)?;
            let color = texture::create(gl, width, height, None, texture::NEAREST_CLAMPED, false)?;
            let depth = gl.create_renderbuffer().map_err(GlError::Create)?;
            gl.bind_renderbuffer(glow::RENDERBUFFER, Some(depth));
            gl.renderbuffer_storage(glow::RENDERBUFFER, glow::DEPTH_COMPONENT16, width as i32, height as i32);
            gl.bind_renderbuffer(glow::RENDERBUFFER, None);
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(fbo));
            gl.framebuffer_texture_2d(glow::FRAMEBUFFER, glow::COLOR_ATTACHMENT0, glow::TEXTURE_2D, Some(color), 0);
            gl.framebuffer_renderbuffer(glow::FRAMEBUFFER, glow::DEPTH_ATTACHMENT, glow::RENDERBUFFER, Some(depth));
            let status = gl.check_framebuffer_status(glow::FRAMEBUFFER);
            gl.bind_framebuffer(glow::FRAMEBUFFER, None);
            let o = Offscreen { fbo, color, depth, width, height };
            if status != glow::FRAMEBUFFER_COMPLETE {
                o.delete(gl);
                return Err(GlError::Framebuffer(status));
            }
            Ok(o)
        }
    }

    /// Deletes the target's objects.
    pub(super) fn delete(&self, gl: &glow::Context) {
        // SAFETY: deleting objects created by `Offscreen::new` on this context.
        unsafe {
            gl.delete_framebuffer(self.fbo);
            gl.delete_texture(self.color);
            gl.delete_renderbuffer(self.depth);
        }
    }
}

/// Reads the current framebuffer's `width × height` pixels as RGBA, top row first.
pub(super) fn read_rgba(gl: &glow::Context, width: u32, height: u32) -> Vec<u8> {
    let (w, h) = (width as usize, height as usize);
    let mut buf = vec![0u8; w * h * 4];
    // SAFETY: the buffer holds width × height RGBA8 pixels; with a pack alignment of 4 rows
    // have no padding.
    unsafe {
        gl.pixel_store_i32(glow::PACK_ALIGNMENT, 4);
        gl.read_pixels(
            0,
            0,
            width as i32,
            height as i32,
            glow::RGBA,
            glow::UNSIGNED_BYTE,
            glow::PixelPackData::Slice(Some(&mut buf)),
        );
    }
    let mut out = vec![0u8; buf.len()];
    for y in 0..h {
        let src = &buf[(h - 1 - y) * w * 4..(h - y) * w * 4];
        out[y * w * 4..(y + 1) * w * 4].copy_from_slice(src);
    }
    out
}
