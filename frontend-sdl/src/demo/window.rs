//! The SDL2 window and its GL context: OpenGL ES 2.0 first, desktop OpenGL 2.1 (running the
//! same GLSL ES 1.00 shaders) where ES is unavailable.

use sdl2::video::{GLContext, GLProfile, Window};

/// Which kind of context to ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GlRequest {
    /// OpenGL ES 2.0, else desktop OpenGL 2.1.
    #[default]
    Auto,
    /// OpenGL ES 2.0 only.
    Es,
    /// Desktop OpenGL 2.1 only.
    Desktop,
}

/// An SDL window with a current GL context.
pub struct GlWindow {
    // Fields drop in order: the context before its window, SDL last.
    _context: GLContext,
    /// The window.
    pub window: Window,
    /// The video subsystem.
    pub video: sdl2::VideoSubsystem,
    /// SDL itself (dropped last).
    pub sdl: sdl2::Sdl,
    /// The context is OpenGL ES (else desktop OpenGL).
    pub es: bool,
}

impl std::fmt::Debug for GlWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GlWindow").field("es", &self.es).finish_non_exhaustive()
    }
}

fn try_open(
    video: &sdl2::VideoSubsystem,
    title: &str,
    width: u32,
    height: u32,
    visible: bool,
    es: bool,
) -> Result<(Window, GLContext), String> {
    let attr = video.gl_attr();
    attr.set_context_profile(if es { GLProfile::GLES } else { GLProfile::Compatibility });
    if es {
        attr.set_context_version(2, 0);
    } else {
        attr.set_context_version(2, 1);
    }
    attr.set_depth_size(24);
    attr.set_double_buffer(true);
    attr.set_red_size(8);
    attr.set_green_size(8);
    attr.set_blue_size(8);
    let mut b = video.window(title, width.max(1), height.max(1));
    b.opengl().resizable().allow_highdpi();
    if !visible {
        b.hidden();
    }
    let window = b.build().map_err(|e| e.to_string())?;
    let ctx = window.gl_create_context()?;
    window.gl_make_current(&ctx)?;
    Ok((window, ctx))
}

impl GlWindow {
    /// Opens a window (`visible` or hidden) with a current context of the requested kind.
    ///
    /// # Errors
    ///
    /// SDL's message when no video device is available (no `DISPLAY`, say) or no context of
    /// the requested kind can be made.
    pub fn open(title: &str, width: u32, height: u32, visible: bool, request: GlRequest) -> Result<GlWindow, String> {
        let sdl = sdl2::init()?;
        let video = sdl.video().map_err(|e| format!("{e} (is DISPLAY set? headless runs can use Xvfb)"))?;
        let order: &[bool] = match request {
            GlRequest::Auto => &[true, false],
            GlRequest::Es => &[true],
            GlRequest::Desktop => &[false],
        };
        let mut errors = Vec::new();
        for &es in order {
            match try_open(&video, title, width, height, visible, es) {
                Ok((window, context)) => {
                    let _ = video.gl_set_swap_interval(if visible { 1 } else { 0 });
                    return Ok(GlWindow { window, _context: context, video, sdl, es });
                }
                Err(e) => errors.push(format!("{}: {e}", if es { "OpenGL ES 2.0" } else { "OpenGL 2.1" })),
            }
        }
        Err(format!("no GL context: {}", errors.join("; ")))
    }

    /// A `glow` context over this window's GL functions. A function the context lacks under
    /// its core name is looked up with the suffixes of the extensions that bring it
    /// (`glDrawElementsInstancedEXT`, `…ANGLE`, `…ARB`): instancing on OpenGL ES 2.0 and
    /// desktop OpenGL 2.1.
    #[must_use]
    pub fn glow(&self) -> glow::Context {
        let lookup = |s: &str| {
            let p = self.video.gl_get_proc_address(s);
            if !p.is_null() {
                return p.cast();
            }
            ["EXT", "ANGLE", "ARB"]
                .iter()
                .map(|suffix| self.video.gl_get_proc_address(&format!("{s}{suffix}")))
                .find(|q| !q.is_null())
                .unwrap_or(p)
                .cast()
        };
        // SAFETY: the context is current on this thread, and the loader returns SDL's
        // function pointers for it.
        unsafe { glow::Context::from_loader_function(lookup) }
    }
}
