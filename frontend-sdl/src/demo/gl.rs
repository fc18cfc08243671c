//! The demo's OpenGL renderer: skinned meshes skinned in the vertex shader (LBS or DQS),
//! lines, the HUD, and an offscreen target for screenshots. Works on an OpenGL ES 2.0
//! context, or a desktop OpenGL 2.1 context that accepts GLSL ES 1.00.
//!
//! Every mesh part of a model goes to the GPU once ([`Renderer::upload`]). A part is drawn
//! in one of three ways:
//!
//! - **skinned on the GPU**: its palette fits the shaders' `JOINTS` and it has at most 4
//!   influences; each draw uploads the rows of its local palette (the part's joints mapped to
//!   skin joints, see [`lbs_rows`] and [`dq_rows`]);
//! - **rigid**: no influences; drawn with one palette entry, its node's model matrix;
//! - **skinned on the CPU**: a part the shaders cannot take (from a `.sinew` baked with a
//!   larger palette or more influences), or every part when [`Renderer::cpu_skinning`] is
//!   set; its vertices are skinned by [`Model::skin_mesh`](sinew_pipeline::model::Model::skin_mesh)
//!   every frame and streamed with an identity palette.

use glow::HasContext;
use sinew::asset::MeshPart;
use sinew::job::JobError;
use sinew::math::{DualQuat, Mat4, Vec3};

use super::hud::HudVertex;
use super::shaders::{self, attrib};
use crate::scene::{DrawObject, SceneLight};
use sinew_pipeline::model::{Model, Skinning};

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

/// The first three rows of each skin matrix of a part's local palette, as uploaded to
/// `u_jointMat`: entry `3i + r` is row `r` of `palette[map[i]]` (identity for an index past
/// the palette).
#[must_use]
pub fn lbs_rows(palette: &[Mat4<f32>], map: &[u16]) -> Vec<[f32; 4]> {
    let mut out = Vec::with_capacity(map.len() * 3);
    for &j in map {
        let m = palette.get(j as usize).copied().unwrap_or(Mat4::IDENTITY);
        for r in 0..3 {
            out.push([m.cols[0][r], m.cols[1][r], m.cols[2][r], m.cols[3][r]]);
        }
    }
    out
}

/// Each dual quaternion of a part's local palette as two rows, as uploaded to `u_jointDQ`:
/// entry `2i` is `palette[map[i]].real` (x, y, z, w), `2i + 1` its dual part.
#[must_use]
pub fn dq_rows(palette: &[DualQuat<f32>], map: &[u16]) -> Vec<[f32; 4]> {
    let mut out = Vec::with_capacity(map.len() * 2);
    for &j in map {
        let d = palette.get(j as usize).copied().unwrap_or(DualQuat::IDENTITY);
        out.push(d.real.to_array());
        out.push(d.dual.to_array());
    }
    out
}

/// The matrix whose first three rows are `rows` (the inverse of one [`lbs_rows`] entry).
#[must_use]
pub fn mat_from_rows(rows: &[[f32; 4]; 3]) -> Mat4<f32> {
    let mut m = Mat4::IDENTITY;
    for (r, row) in rows.iter().enumerate() {
        for (col, &v) in m.cols.iter_mut().zip(row) {
            col[r] = v;
        }
    }
    m
}

struct SkinProgram {
    program: glow::Program,
    mvp: Option<glow::UniformLocation>,
    normal_mat: Option<glow::UniformLocation>,
    light_dir: Option<glow::UniformLocation>,
    light: Option<glow::UniformLocation>,
    palette: Option<glow::UniformLocation>,
    color: Option<glow::UniformLocation>,
}

struct LineProgram {
    program: glow::Program,
    mvp: Option<glow::UniformLocation>,
    color: Option<glow::UniformLocation>,
}

struct HudProgram {
    program: glow::Program,
    screen: Option<glow::UniformLocation>,
    font: Option<glow::UniformLocation>,
}

/// How a part is drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartMode {
    /// Skinned in the vertex shader with the part's local palette.
    Gpu,
    /// Rigid: one palette entry, the mesh node's model matrix.
    Rigid,
    /// Skinned on the CPU every frame (the reason is kept for the log).
    Cpu(String),
}

/// Floats per vertex: position 3, normal 3, joint indices 4, joint weights 4.
const STRIDE_FLOATS: usize = 14;

struct GpuPart {
    vbo: glow::Buffer,
    ibo: Option<glow::Buffer>,
    index_type: u32,
    count: i32,
    mode: PartMode,
    /// Local palette: part joint → skin joint.
    map: Vec<u16>,
    /// For non-indexed parts, the source vertex of each drawn vertex.
    expand: Option<Vec<u32>>,
    /// Bind-pose vertex data; CPU skinning streams a skinned copy of it.
    base: Vec<f32>,
}

/// A model's mesh parts in GPU buffers.
pub struct GpuModel {
    meshes: Vec<Vec<GpuPart>>,
}

impl std::fmt::Debug for GpuModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuModel").field("meshes", &self.meshes.len()).finish_non_exhaustive()
    }
}

impl GpuModel {
    /// How each part of each mesh is drawn.
    #[must_use]
    pub fn modes(&self) -> Vec<Vec<PartMode>> {
        self.meshes.iter().map(|m| m.iter().map(|p| p.mode.clone()).collect()).collect()
    }
}

/// Area-weighted vertex normals of indexed triangles.
fn computed_normals(positions: &[Vec3<f32>], indices: &[u32]) -> Vec<Vec3<f32>> {
    let mut n = vec![Vec3::ZERO; positions.len()];
    for t in indices.chunks_exact(3) {
        let (Some(&a), Some(&b), Some(&c)) =
            (positions.get(t[0] as usize), positions.get(t[1] as usize), positions.get(t[2] as usize))
        else {
            continue;
        };
        let f = (b - a).cross(c - a);
        for &i in t {
            if let Some(v) = n.get_mut(i as usize) {
                *v += f;
            }
        }
    }
    n.into_iter().map(Vec3::normalize_or_zero).collect()
}

/// Interleaved vertex data of a part ([`STRIDE_FLOATS`] per vertex) for `mode`.
fn part_vertex_data(part: &MeshPart<'_>, indices: &[u32], mode: &PartMode) -> Vec<f32> {
    let n = part.num_vertices();
    let positions: Vec<Vec3<f32>> = (0..n).map(|v| part.position(v)).collect();
    let normals: Vec<Vec3<f32>> = if part.has_normals() {
        (0..n).map(|v| part.normal(v)).collect()
    } else {
        computed_normals(&positions, indices)
    };
    let k = part.influences();
    let mut out = Vec::with_capacity(n * STRIDE_FLOATS);
    for v in 0..n {
        out.extend_from_slice(&positions[v].to_array());
        out.extend_from_slice(&normals[v].to_array());
        let mut idx = [0.0f32; 4];
        let mut w = [1.0f32, 0.0, 0.0, 0.0];
        if *mode == PartMode::Gpu {
            w = [0.0; 4];
            for i in 0..k.min(4) {
                idx[i] = f32::from(part.joint(v, i));
                w[i] = part.weight(v, i);
            }
        }
        out.extend_from_slice(&idx);
        out.extend_from_slice(&w);
    }
    out
}

fn as_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn compile(gl: &glow::Context, kind: u32, name: &str, source: &str) -> Result<glow::Shader, GlError> {
    // SAFETY: shader object calls on the current context with a valid handle.
    unsafe {
        let s = gl.create_shader(kind).map_err(GlError::Create)?;
        gl.shader_source(s, source);
        gl.compile_shader(s);
        if gl.get_shader_compile_status(s) {
            Ok(s)
        } else {
            let log = gl.get_shader_info_log(s);
            gl.delete_shader(s);
            Err(GlError::Compile { shader: name.to_string(), log })
        }
    }
}

/// Compiles and links a program with the attribute locations bound as listed.
fn link(
    gl: &glow::Context,
    name: &str,
    vs: &str,
    fs: &str,
    attributes: &[(u32, &str)],
) -> Result<glow::Program, GlError> {
    let v = compile(gl, glow::VERTEX_SHADER, &format!("{name}.vert"), vs)?;
    let f = match compile(gl, glow::FRAGMENT_SHADER, &format!("{name}.frag"), fs) {
        Ok(f) => f,
        Err(e) => {
            // SAFETY: deleting the shader created above.
            unsafe { gl.delete_shader(v) };
            return Err(e);
        }
    };
    // SAFETY: program object calls on the current context with valid handles.
    unsafe {
        let p = gl.create_program().map_err(GlError::Create)?;
        gl.attach_shader(p, v);
        gl.attach_shader(p, f);
        for &(loc, a) in attributes {
            gl.bind_attrib_location(p, loc, a);
        }
        gl.link_program(p);
        gl.delete_shader(v);
        gl.delete_shader(f);
        if gl.get_program_link_status(p) {
            Ok(p)
        } else {
            let log = gl.get_program_info_log(p);
            gl.delete_program(p);
            Err(GlError::Link { program: name.to_string(), log })
        }
    }
}

fn skin_program(gl: &glow::Context, method: Skinning, joints: usize) -> Result<SkinProgram, GlError> {
    let name = match method {
        Skinning::Lbs => "skin_lbs",
        Skinning::Dqs => "skin_dqs",
    };
    let program = link(
        gl,
        name,
        &shaders::skin_vertex_shader(method, joints),
        shaders::SKIN_FRAGMENT,
        &[
            (attrib::POSITION, "a_position"),
            (attrib::NORMAL, "a_normal"),
            (attrib::JOINT_INDICES, "a_jointIndices"),
            (attrib::JOINT_WEIGHTS, "a_jointWeights"),
        ],
    )?;
    // SAFETY: uniform queries on a linked program.
    unsafe {
        let u = |n: &str| gl.get_uniform_location(program, n);
        Ok(SkinProgram {
            program,
            mvp: u("u_MVP"),
            normal_mat: u("u_normalMat"),
            light_dir: u("u_lightDir"),
            light: u("u_light"),
            palette: u(match method {
                Skinning::Lbs => "u_jointMat[0]",
                Skinning::Dqs => "u_jointDQ[0]",
            }),
            color: u("u_color"),
        })
    }
}

/// What the last frame drew (reset by [`Renderer::begin_frame`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DrawStats {
    /// Parts skinned in the vertex shader.
    pub gpu_parts: usize,
    /// Parts skinned on the CPU.
    pub cpu_parts: usize,
    /// Rigid parts.
    pub rigid_parts: usize,
    /// Triangles drawn.
    pub triangles: usize,
}

/// The offscreen color and depth target of screenshots.
struct Offscreen {
    fbo: glow::Framebuffer,
    color: glow::Texture,
    depth: glow::Renderbuffer,
    width: u32,
    height: u32,
}

/// Compiles both skinning shaders for a palette of `joints` joints and returns the compile
/// or link error of the first that fails. The programs are deleted again.
///
/// # Errors
///
/// The [`GlError`] of the first shader that fails.
pub fn check_skin_shaders(gl: &glow::Context, joints: usize) -> Result<(), GlError> {
    for m in [Skinning::Lbs, Skinning::Dqs] {
        let p = skin_program(gl, m, joints)?;
        // SAFETY: deleting the program just linked.
        unsafe { gl.delete_program(p.program) };
    }
    Ok(())
}

/// The demo renderer on a current GL context.
pub struct Renderer {
    gl: glow::Context,
    /// The context.
    pub info: GlInfo,
    /// Joints per palette the skinning shaders hold (`JOINTS`).
    pub palette_size: usize,
    /// Skin every part on the CPU ([`Model::skin_mesh`], streamed each frame) instead of in
    /// the shaders: the same image from the CPU's `SkinningJob`, to compare with.
    pub cpu_skinning: bool,
    /// What the current frame has drawn so far.
    pub stats: DrawStats,
    lbs: SkinProgram,
    dqs: SkinProgram,
    lines: LineProgram,
    hud: HudProgram,
    stream: glow::Buffer,
    font: glow::Texture,
    offscreen: Option<Offscreen>,
    rows: Vec<f32>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("info", &self.info)
            .field("palette_size", &self.palette_size)
            .finish_non_exhaustive()
    }
}

impl Renderer {
    /// Sets up programs, buffers and the font texture on the current context `gl`. The
    /// palette holds [`shaders::palette_capacity`] joints of the context's uniform budget, or
    /// `palette` when smaller.
    ///
    /// # Errors
    ///
    /// [`GlError`] when a shader fails or the context has room for no palette.
    pub fn new(gl: glow::Context, palette: Option<usize>) -> Result<Renderer, GlError> {
        let info = GlInfo::query(&gl);
        let capacity = shaders::palette_capacity(info.max_vertex_uniform_vectors);
        let palette_size = palette.map_or(capacity, |p| p.min(capacity));
        if palette_size < 4 {
            return Err(GlError::Unsupported(format!(
                "{} vertex uniform vectors leave room for {capacity} joints; at least 4 are needed",
                info.max_vertex_uniform_vectors
            )));
        }
        let lbs = skin_program(&gl, Skinning::Lbs, palette_size)?;
        let dqs = skin_program(&gl, Skinning::Dqs, palette_size)?;
        let lp = link(&gl, "lines", shaders::LINE_VERTEX, shaders::LINE_FRAGMENT, &[(attrib::POSITION, "a_position")])?;
        let hp = link(
            &gl,
            "hud",
            shaders::HUD_VERTEX,
            shaders::HUD_FRAGMENT,
            &[(attrib::POSITION, "a_position"), (attrib::UV, "a_uv"), (attrib::COLOR, "a_color")],
        )?;
        // SAFETY: object creation and state setup on the current context.
        unsafe {
            let lines = LineProgram {
                program: lp,
                mvp: gl.get_uniform_location(lp, "u_MVP"),
                color: gl.get_uniform_location(lp, "u_color"),
            };
            let hud = HudProgram {
                program: hp,
                screen: gl.get_uniform_location(hp, "u_screen"),
                font: gl.get_uniform_location(hp, "u_font"),
            };
            let stream = gl.create_buffer().map_err(GlError::Create)?;
            let font = gl.create_texture().map_err(GlError::Create)?;
            let atlas = super::font::atlas();
            gl.bind_texture(glow::TEXTURE_2D, Some(font));
            gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
            gl.tex_image_2d(
                glow::TEXTURE_2D,
                0,
                glow::RGBA as i32,
                super::font::ATLAS_WIDTH as i32,
                super::font::ATLAS_HEIGHT as i32,
                0,
                glow::RGBA,
                glow::UNSIGNED_BYTE,
                glow::PixelUnpackData::Slice(Some(&atlas)),
            );
            for (p, v) in [
                (glow::TEXTURE_MIN_FILTER, glow::NEAREST),
                (glow::TEXTURE_MAG_FILTER, glow::NEAREST),
                (glow::TEXTURE_WRAP_S, glow::CLAMP_TO_EDGE),
                (glow::TEXTURE_WRAP_T, glow::CLAMP_TO_EDGE),
            ] {
                gl.tex_parameter_i32(glow::TEXTURE_2D, p, v as i32);
            }
            gl.bind_texture(glow::TEXTURE_2D, None);
            Ok(Renderer {
                gl,
                info,
                palette_size,
                cpu_skinning: false,
                stats: DrawStats::default(),
                lbs,
                dqs,
                lines,
                hud,
                stream,
                font,
                offscreen: None,
                rows: Vec::new(),
            })
        }
    }

    /// The GL context.
    #[must_use]
    pub fn gl(&self) -> &glow::Context {
        &self.gl
    }

    /// Uploads every mesh part of `model`.
    ///
    /// # Errors
    ///
    /// [`GlError::Create`] when a buffer cannot be created.
    pub fn upload(&self, model: &Model) -> Result<GpuModel, GlError> {
        let gl = &self.gl;
        let asset = model.asset();
        let mut meshes = Vec::new();
        for mi in 0..asset.num_meshes() {
            let mut parts = Vec::new();
            let Some(mesh) = asset.mesh(mi) else {
                meshes.push(parts);
                continue;
            };
            for part in mesh.parts() {
                let mode = if part.influences() == 0 {
                    PartMode::Rigid
                } else if part.influences() > 4 {
                    PartMode::Cpu(format!("{} influences per vertex (the shaders take 4)", part.influences()))
                } else if part.palette_len() > self.palette_size {
                    PartMode::Cpu(format!(
                        "a palette of {} joints (the shaders hold {})",
                        part.palette_len(),
                        self.palette_size
                    ))
                } else {
                    PartMode::Gpu
                };
                let indices: Vec<u32> = (0..part.num_indices()).map(|i| part.index(i)).collect();
                let base = part_vertex_data(&part, &indices, &mode);
                let n = part.num_vertices();
                let (index_type, expand) = if n <= 65536 {
                    (glow::UNSIGNED_SHORT, None)
                } else if self.info.uint_indices {
                    (glow::UNSIGNED_INT, None)
                } else {
                    (0, Some(indices.clone()))
                };
                let map: Vec<u16> = (0..part.palette_len()).map(|i| part.palette(i)).collect();
                // SAFETY: buffer creation and upload on the current context.
                unsafe {
                    let vbo = gl.create_buffer().map_err(GlError::Create)?;
                    gl.bind_buffer(glow::ARRAY_BUFFER, Some(vbo));
                    let data = match &expand {
                        Some(e) => expanded(&base, e),
                        None => base.clone(),
                    };
                    gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &as_bytes(&data), glow::STATIC_DRAW);
                    let ibo = if expand.is_none() {
                        let ibo = gl.create_buffer().map_err(GlError::Create)?;
                        gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(ibo));
                        let bytes: Vec<u8> = if index_type == glow::UNSIGNED_SHORT {
                            indices.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect()
                        } else {
                            indices.iter().flat_map(|&i| i.to_le_bytes()).collect()
                        };
                        gl.buffer_data_u8_slice(glow::ELEMENT_ARRAY_BUFFER, &bytes, glow::STATIC_DRAW);
                        Some(ibo)
                    } else {
                        None
                    };
                    parts.push(GpuPart { vbo, ibo, index_type, count: indices.len() as i32, mode, map, expand, base });
                }
            }
            meshes.push(parts);
        }
        // SAFETY: unbinding.
        unsafe {
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
            gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, None);
        }
        Ok(GpuModel { meshes })
    }

    /// Deletes a model's buffers.
    pub fn free(&self, model: GpuModel) {
        // SAFETY: deleting buffers this renderer created.
        unsafe {
            for p in model.meshes.iter().flatten() {
                self.gl.delete_buffer(p.vbo);
                if let Some(i) = p.ibo {
                    self.gl.delete_buffer(i);
                }
            }
        }
    }

    /// Starts a frame: binds the offscreen target when `offscreen`, sets the viewport and
    /// clears color and depth.
    ///
    /// # Errors
    ///
    /// [`GlError`] when the offscreen target cannot be made.
    pub fn begin_frame(&mut self, width: u32, height: u32, offscreen: bool) -> Result<(), GlError> {
        if offscreen {
            self.ensure_offscreen(width, height)?;
        }
        self.stats = DrawStats::default();
        let gl = &self.gl;
        // SAFETY: state changes on the current context.
        unsafe {
            gl.bind_framebuffer(
                glow::FRAMEBUFFER,
                if offscreen { self.offscreen.as_ref().map(|o| o.fbo) } else { None },
            );
            gl.viewport(0, 0, width as i32, height as i32);
            gl.clear_color(0.12, 0.13, 0.16, 1.0);
            gl.depth_mask(true);
            gl.clear(glow::COLOR_BUFFER_BIT | glow::DEPTH_BUFFER_BIT);
        }
        Ok(())
    }

    fn ensure_offscreen(&mut self, width: u32, height: u32) -> Result<(), GlError> {
        if self.offscreen.as_ref().is_some_and(|o| o.width == width && o.height == height) {
            return Ok(());
        }
        let gl = &self.gl;
        // SAFETY: framebuffer object creation on the current context.
        unsafe {
            if let Some(o) = self.offscreen.take() {
                gl.delete_framebuffer(o.fbo);
                gl.delete_texture(o.color);
                gl.delete_renderbuffer(o.depth);
            }
            let fbo = gl.create_framebuffer().map_err(GlError::Create)?;
            let color = gl.create_texture().map_err(GlError::Create)?;
            let depth = gl.create_renderbuffer().map_err(GlError::Create)?;
            gl.bind_texture(glow::TEXTURE_2D, Some(color));
            gl.tex_image_2d(
                glow::TEXTURE_2D,
                0,
                glow::RGBA as i32,
                width as i32,
                height as i32,
                0,
                glow::RGBA,
                glow::UNSIGNED_BYTE,
                glow::PixelUnpackData::Slice(None),
            );
            gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_MIN_FILTER, glow::NEAREST as i32);
            gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_MAG_FILTER, glow::NEAREST as i32);
            gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_WRAP_S, glow::CLAMP_TO_EDGE as i32);
            gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_WRAP_T, glow::CLAMP_TO_EDGE as i32);
            gl.bind_texture(glow::TEXTURE_2D, None);
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
                gl.delete_framebuffer(o.fbo);
                gl.delete_texture(o.color);
                gl.delete_renderbuffer(o.depth);
                return Err(GlError::Framebuffer(status));
            }
            self.offscreen = Some(o);
        }
        Ok(())
    }

    /// Reads the current framebuffer's `width × height` pixels as RGBA, top row first.
    #[must_use]
    pub fn read_rgba(&self, width: u32, height: u32) -> Vec<u8> {
        let (w, h) = (width as usize, height as usize);
        let mut buf = vec![0u8; w * h * 4];
        // SAFETY: the buffer holds width × height RGBA8 pixels; with a pack alignment of 4
        // rows have no padding.
        unsafe {
            self.gl.pixel_store_i32(glow::PACK_ALIGNMENT, 4);
            self.gl.read_pixels(
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

    /// Every pending GL error code (empty when none).
    #[must_use]
    pub fn errors(&self) -> Vec<u32> {
        let mut out = Vec::new();
        // SAFETY: error queries; bounded in case a broken context never clears.
        unsafe {
            for _ in 0..64 {
                match self.gl.get_error() {
                    glow::NO_ERROR => break,
                    e => out.push(e),
                }
            }
        }
        out
    }

    fn program(&self, m: Skinning) -> &SkinProgram {
        match m {
            Skinning::Lbs => &self.lbs,
            Skinning::Dqs => &self.dqs,
        }
    }

    /// Uploads `rows` to the palette uniform of the `method` program (and makes it current).
    pub fn upload_palette(&mut self, method: Skinning, rows: &[[f32; 4]]) {
        self.rows.clear();
        self.rows.extend(rows.iter().flatten());
        let p = self.program(method);
        // SAFETY: uniform upload to a linked program; `rows` never exceeds the declared array
        // (callers pass at most `palette_size` joints).
        unsafe {
            self.gl.use_program(Some(p.program));
            if !self.rows.is_empty() {
                self.gl.uniform_4_f32_slice(p.palette.as_ref(), &self.rows);
            }
        }
    }

    /// Reads `count` palette rows back from the `method` program's uniform (what the shader
    /// sees), for tests.
    #[must_use]
    pub fn read_palette(&self, method: Skinning, count: usize) -> Vec<[f32; 4]> {
        let p = self.program(method);
        let name = match method {
            Skinning::Lbs => "u_jointMat",
            Skinning::Dqs => "u_jointDQ",
        };
        let mut out = Vec::with_capacity(count);
        // SAFETY: uniform queries on a linked program.
        unsafe {
            for i in 0..count {
                let mut v = [0.0f32; 4];
                if let Some(loc) = self.gl.get_uniform_location(p.program, &format!("{name}[{i}]")) {
                    self.gl.get_uniform_f32(p.program, &loc, &mut v);
                }
                out.push(v);
            }
        }
        out
    }

    fn bind_vertex_layout(&self) {
        let gl = &self.gl;
        let stride = (STRIDE_FLOATS * 4) as i32;
        // SAFETY: attribute pointers into the bound array buffer.
        unsafe {
            for (loc, size, offset) in [
                (attrib::POSITION, 3, 0),
                (attrib::NORMAL, 3, 3),
                (attrib::JOINT_INDICES, 4, 6),
                (attrib::JOINT_WEIGHTS, 4, 10),
            ] {
                gl.enable_vertex_attrib_array(loc);
                gl.vertex_attrib_pointer_f32(loc, size, glow::FLOAT, false, stride, offset * 4);
            }
        }
    }

    fn disable_attributes(&self) {
        // SAFETY: state change.
        unsafe {
            for loc in 0..4 {
                self.gl.disable_vertex_attrib_array(loc);
            }
        }
    }

    /// Draws one object: every part of its mesh, depth-tested with back faces culled.
    ///
    /// # Errors
    ///
    /// A [`JobError`] when CPU skinning of a fallback part fails.
    pub fn draw_object(
        &mut self,
        gpu: &GpuModel,
        obj: &DrawObject<'_>,
        view_proj: &Mat4<f32>,
        light: &SceneLight,
    ) -> Result<(), JobError> {
        let Some(parts) = gpu.meshes.get(obj.mesh) else { return Ok(()) };
        let mvp = *view_proj * obj.world;
        let w = obj.world.cols;
        let normal_mat = [w[0][0], w[0][1], w[0][2], w[1][0], w[1][1], w[1][2], w[2][0], w[2][1], w[2][2]];
        let dir = light.direction.normalize_or_zero();
        let force = self.cpu_skinning;
        let on_cpu = |p: &GpuPart| matches!(p.mode, PartMode::Cpu(_)) || (force && p.mode == PartMode::Gpu);
        let cpu = if parts.iter().any(on_cpu) { Some(obj.skin_cpu()?) } else { None };
        let node = obj
            .model
            .asset()
            .mesh(obj.mesh)
            .and_then(|m| m.node())
            .and_then(|n| obj.joints.get(n))
            .copied()
            .unwrap_or(Mat4::IDENTITY);
        // SAFETY: state for mesh drawing.
        unsafe {
            self.gl.enable(glow::DEPTH_TEST);
            self.gl.depth_func(glow::LEQUAL);
            self.gl.enable(glow::CULL_FACE);
            self.gl.cull_face(glow::BACK);
            self.gl.disable(glow::BLEND);
        }
        for (pi, part) in parts.iter().enumerate() {
            let cpu_path = on_cpu(part);
            match (&part.mode, cpu_path) {
                (_, true) => self.stats.cpu_parts += 1,
                (PartMode::Rigid, _) => self.stats.rigid_parts += 1,
                _ => self.stats.gpu_parts += 1,
            }
            self.stats.triangles += part.count as usize / 3;
            let method = if part.mode == PartMode::Gpu && !cpu_path { obj.skinning } else { Skinning::Lbs };
            let rows = match (&part.mode, cpu_path) {
                (_, true) | (PartMode::Cpu(_), _) => lbs_rows(&[Mat4::IDENTITY], &[0]),
                (PartMode::Gpu, false) => match method {
                    Skinning::Lbs => lbs_rows(&obj.palette, &part.map),
                    Skinning::Dqs => dq_rows(&obj.dq_palette, &part.map),
                },
                (PartMode::Rigid, false) => lbs_rows(&[node], &[0]),
            };
            self.upload_palette(method, &rows);
            let p = self.program(method);
            let gl = &self.gl;
            // SAFETY: uniform uploads, buffer binds and uploads of vertex data built here.
            unsafe {
                gl.uniform_matrix_4_f32_slice(p.mvp.as_ref(), false, &mvp.to_cols_array());
                gl.uniform_matrix_3_f32_slice(p.normal_mat.as_ref(), false, &normal_mat);
                gl.uniform_3_f32(p.light_dir.as_ref(), dir.x, dir.y, dir.z);
                gl.uniform_2_f32(p.light.as_ref(), light.ambient, light.diffuse);
                let c = obj.color;
                gl.uniform_4_f32(p.color.as_ref(), c[0], c[1], c[2], c[3]);
                match (cpu_path, cpu.as_ref().and_then(|c| c.get(pi))) {
                    (true, Some(sk)) => {
                        // Skinned vertices with one identity influence, streamed.
                        let mut data = part.base.clone();
                        for (v, chunk) in data.chunks_exact_mut(STRIDE_FLOATS).enumerate() {
                            if let Some(p) = sk.positions.get(v) {
                                chunk[..3].copy_from_slice(&p.to_array());
                            }
                            if let Some(n) = sk.normals.get(v) {
                                chunk[3..6].copy_from_slice(&n.to_array());
                            }
                            chunk[6..14].copy_from_slice(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
                        }
                        let data = match &part.expand {
                            Some(e) => expanded(&data, e),
                            None => data,
                        };
                        gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.stream));
                        gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &as_bytes(&data), glow::STREAM_DRAW);
                    }
                    _ => gl.bind_buffer(glow::ARRAY_BUFFER, Some(part.vbo)),
                }
            }
            self.bind_vertex_layout();
            // SAFETY: draw with the part's own index buffer and count.
            unsafe {
                match part.ibo {
                    Some(ibo) => {
                        self.gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(ibo));
                        self.gl.draw_elements(glow::TRIANGLES, part.count, part.index_type, 0);
                    }
                    None => self.gl.draw_arrays(glow::TRIANGLES, 0, part.count),
                }
            }
        }
        self.disable_attributes();
        // SAFETY: unbinding.
        unsafe {
            self.gl.bind_buffer(glow::ARRAY_BUFFER, None);
            self.gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, None);
        }
        Ok(())
    }

    /// Draws world-space line segments in one color, depth-tested or on top of everything.
    pub fn draw_lines(&mut self, lines: &[[Vec3<f32>; 2]], view_proj: &Mat4<f32>, color: [f32; 4], on_top: bool) {
        if lines.is_empty() {
            return;
        }
        let data: Vec<f32> = lines.iter().flat_map(|l| l.iter().flat_map(|p| p.to_array())).collect();
        let gl = &self.gl;
        // SAFETY: streaming upload and a draw of `2 × lines.len()` vertices just uploaded.
        unsafe {
            if on_top {
                gl.disable(glow::DEPTH_TEST);
            } else {
                gl.enable(glow::DEPTH_TEST);
            }
            gl.enable(glow::BLEND);
            gl.blend_func(glow::SRC_ALPHA, glow::ONE_MINUS_SRC_ALPHA);
            gl.use_program(Some(self.lines.program));
            gl.uniform_matrix_4_f32_slice(self.lines.mvp.as_ref(), false, &view_proj.to_cols_array());
            gl.uniform_4_f32(self.lines.color.as_ref(), color[0], color[1], color[2], color[3]);
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.stream));
            gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &as_bytes(&data), glow::STREAM_DRAW);
            gl.enable_vertex_attrib_array(attrib::POSITION);
            gl.vertex_attrib_pointer_f32(attrib::POSITION, 3, glow::FLOAT, false, 12, 0);
            gl.draw_arrays(glow::LINES, 0, (lines.len() * 2) as i32);
            gl.disable_vertex_attrib_array(attrib::POSITION);
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
            gl.disable(glow::BLEND);
        }
    }

    /// Draws HUD triangles (pixel coordinates from the top left of a `width × height`
    /// viewport), blended over the frame.
    pub fn draw_hud(&mut self, vertices: &[HudVertex], width: u32, height: u32) {
        if vertices.is_empty() {
            return;
        }
        let data: Vec<f32> =
            vertices.iter().flat_map(|v| [v.pos[0], v.pos[1], v.uv[0], v.uv[1]].into_iter().chain(v.color)).collect();
        let gl = &self.gl;
        // SAFETY: streaming upload and a draw of the vertices just uploaded.
        unsafe {
            gl.disable(glow::DEPTH_TEST);
            gl.disable(glow::CULL_FACE);
            gl.enable(glow::BLEND);
            gl.blend_func(glow::SRC_ALPHA, glow::ONE_MINUS_SRC_ALPHA);
            gl.use_program(Some(self.hud.program));
            gl.uniform_2_f32(self.hud.screen.as_ref(), width.max(1) as f32, height.max(1) as f32);
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_2D, Some(self.font));
            gl.uniform_1_i32(self.hud.font.as_ref(), 0);
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.stream));
            gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &as_bytes(&data), glow::STREAM_DRAW);
            let stride = 8 * 4;
            gl.enable_vertex_attrib_array(attrib::POSITION);
            gl.vertex_attrib_pointer_f32(attrib::POSITION, 2, glow::FLOAT, false, stride, 0);
            gl.enable_vertex_attrib_array(attrib::UV);
            gl.vertex_attrib_pointer_f32(attrib::UV, 2, glow::FLOAT, false, stride, 8);
            gl.enable_vertex_attrib_array(attrib::COLOR);
            gl.vertex_attrib_pointer_f32(attrib::COLOR, 4, glow::FLOAT, false, stride, 16);
            gl.draw_arrays(glow::TRIANGLES, 0, vertices.len() as i32);
            for loc in [attrib::POSITION, attrib::UV, attrib::COLOR] {
                gl.disable_vertex_attrib_array(loc);
            }
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
            gl.bind_texture(glow::TEXTURE_2D, None);
            gl.disable(glow::BLEND);
        }
    }

    /// Waits for the GPU to finish the frame (for frame timing).
    pub fn finish(&self) {
        // SAFETY: glFinish.
        unsafe { self.gl.finish() };
    }
}

/// Vertex data repeated per index (for non-indexed drawing).
fn expanded(base: &[f32], indices: &[u32]) -> Vec<f32> {
    let mut out = Vec::with_capacity(indices.len() * STRIDE_FLOATS);
    for &i in indices {
        let s = i as usize * STRIDE_FLOATS;
        match base.get(s..s + STRIDE_FLOATS) {
            Some(v) => out.extend_from_slice(v),
            None => out.extend_from_slice(&[0.0; STRIDE_FLOATS]),
        }
    }
    out
}

impl Drop for Renderer {
    fn drop(&mut self) {
        // SAFETY: deleting objects this renderer created, on its context.
        unsafe {
            for p in [self.lbs.program, self.dqs.program, self.lines.program, self.hud.program] {
                self.gl.delete_program(p);
            }
            self.gl.delete_buffer(self.stream);
            self.gl.delete_texture(self.font);
            if let Some(o) = self.offscreen.take() {
                self.gl.delete_framebuffer(o.fbo);
                self.gl.delete_texture(o.color);
                self.gl.delete_renderbuffer(o.depth);
            }
        }
    }
}
