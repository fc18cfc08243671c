//! The GL context as the renderer sees it: what it is ([`GlInfo`]) and what can go wrong
//! ([`GlError`]).

use glow::HasContext;

/// A GL failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GlError {
    /// A shader did not compile: which one, and the compiler's log.
    Compile {
        /// Shader name.
        shader: String,
        /// Info log.
        log: String,
    },
    /// A program did not link: which one, and the linker's log.
    Link {
        /// Program name.
        program: String,
        /// Info log.
        log: String,
    },
    /// Creating a GL object failed.
    Create(String),
    /// The offscreen framebuffer is incomplete (the status code).
    Framebuffer(u32),
    /// The context cannot run the shaders (a limit is too small), with the reason.
    Unsupported(String),
}

impl std::fmt::Display for GlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Compile { shader, log } => write!(f, "shader '{shader}' failed to compile: {}", log.trim()),
            Self::Link { program, log } => write!(f, "program '{program}' failed to link: {}", log.trim()),
            Self::Create(s) => write!(f, "could not create a GL object: {s}"),
            Self::Framebuffer(s) => write!(f, "offscreen framebuffer incomplete (status 0x{s:04x})"),
            Self::Unsupported(s) => write!(f, "unsupported GL context: {s}"),
        }
    }
}

impl std::error::Error for GlError {}

/// What the context is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlInfo {
    /// An OpenGL ES context (else desktop OpenGL).
    pub es: bool,
    /// `GL_VERSION`.
    pub version: String,
    /// `GL_RENDERER`.
    pub renderer: String,
    /// `GL_SHADING_LANGUAGE_VERSION`.
    pub shading_language: String,
    /// `GL_MAX_VERTEX_UNIFORM_VECTORS`.
    pub max_vertex_uniform_vectors: usize,
    /// 32-bit indices are available (desktop GL, or `GL_OES_element_index_uint`).
    pub uint_indices: bool,
}

impl GlInfo {
    /// Queries the current context.
    #[must_use]
    pub fn query(gl: &glow::Context) -> GlInfo {
        // SAFETY: plain queries on the current context.
        unsafe {
            let version = gl.get_parameter_string(glow::VERSION);
            let es = version.starts_with("OpenGL ES");
            let max = gl.get_parameter_i32(glow::MAX_VERTEX_UNIFORM_VECTORS);
            // Desktop 2.1 has no GL_MAX_VERTEX_UNIFORM_VECTORS before ARB_ES2_compatibility:
            // derive it from the component count then.
            let max = if max > 0 { max } else { gl.get_parameter_i32(glow::MAX_VERTEX_UNIFORM_COMPONENTS) / 4 };
            let _ = gl.get_error();
            GlInfo {
                es,
                renderer: gl.get_parameter_string(glow::RENDERER),
                shading_language: gl.get_parameter_string(glow::SHADING_LANGUAGE_VERSION),
                max_vertex_uniform_vectors: max.max(0) as usize,
                uint_indices: !es || gl.supported_extensions().contains("GL_OES_element_index_uint"),
                version,
            }
        }
    }
}
