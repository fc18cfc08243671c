//! The demo [`Renderer`] on a current GL context: frames (window or offscreen), palette
//! uploads, and the draw calls for skinned meshes, lines and the HUD.

use glow::HasContext;
use sinew::job::JobError;
use sinew::math::{Mat4, Vec3};
use sinew_offline::model::{Model, Skinning};
use sinew_offline::morph::morphed_part;

use super::context::{GlError, GlInfo};
use super::mesh::{self, GpuModel, GpuPart, PartMode};
use super::palette::{dq_rigid_rows, dq_rows, lbs_rows, needs_cpu_dqs, part_is_rigid};
use super::programs::{Programs, SkinProgram};
use super::target::{self, Offscreen};
use super::vertex::{bind_attributes, disable_attributes, vertex_bytes, LineVertex, MeshVertex};
use crate::demo::font;
use crate::demo::hud::HudVertex;
use crate::demo::shaders::{self, SkinShader};
use crate::demo::viewer::PaletteSizes;
use crate::scene::{srgb_to_linear, DrawObject, SceneLight};

mod crowd;
pub use crowd::{gl_version, CrowdGpu, CrowdSupport};

/// What the last frame drew (reset by [`Renderer::begin_frame`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DrawStats {
    /// Parts skinned in the vertex shader.
    pub gpu_parts: usize,
    /// Parts skinned on the CPU.
    pub cpu_parts: usize,
    /// Rigid parts.
    pub rigid_parts: usize,
    /// Of the parts skinned in the vertex shader, those drawn by the rigid DQS program (two
    /// vectors per joint).
    pub dqs_rigid_parts: usize,
    /// Joints of the largest palette skinned in the vertex shader in one draw.
    pub largest_palette: usize,
    /// Triangles drawn.
    pub triangles: usize,
}

/// The demo renderer on a current GL context.
pub struct Renderer {
    gl: glow::Context,
    /// The context.
    pub info: GlInfo,
    /// Joints per palette every skinning shader holds: the most a part may have when its rig
    /// scales (DQS with scale's `JOINTS`).
    pub palette_size: usize,
    /// Joints per palette LBS and rigid DQS hold (their `JOINTS`): the most a part may have
    /// when its rig never scales; at least [`Renderer::palette_size`].
    pub rigid_palette_size: usize,
    /// Skin every part on the CPU ([`Model::skin_mesh`], streamed each frame) instead of in
    /// the shaders: the same image from the CPU's `SkinningJob`, to compare with.
    pub cpu_skinning: bool,
    /// What the current frame has drawn so far.
    pub stats: DrawStats,
    programs: Programs,
    stream: glow::Buffer,
    font: glow::Texture,
    /// The 1 × 1 white texture untextured parts sample.
    white: glow::Texture,
    offscreen: Option<Offscreen>,
    rows: Vec<f32>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("info", &self.info)
            .field("palette_size", &self.palette_size)
            .field("rigid_palette_size", &self.rigid_palette_size)
            .finish_non_exhaustive()
    }
}

/// Creates the font atlas texture.
fn font_texture(gl: &glow::Context) -> Result<glow::Texture, GlError> {
    // SAFETY: texture creation and upload of the atlas (ATLAS_WIDTH × ATLAS_HEIGHT RGBA8,
    // unpacked with an alignment of 1).
    unsafe {
        let texture = gl.create_texture().map_err(GlError::Create)?;
        let atlas = font::atlas();
        gl.bind_texture(glow::TEXTURE_2D, Some(texture));
        gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
        gl.tex_image_2d(
            glow::TEXTURE_2D,
            0,
            glow::RGBA as i32,
            font::ATLAS_WIDTH as i32,
            font::ATLAS_HEIGHT as i32,
            0,
            glow::RGBA,
            glow::UNSIGNED_BYTE,
            glow::PixelUnpackData::Slice(Some(&atlas)),
        );
        for (p, v) in super::texture::NEAREST_CLAMPED {
            gl.tex_parameter_i32(glow::TEXTURE_2D, p, v);
        }
        gl.bind_texture(glow::TEXTURE_2D, None);
        Ok(texture)
    }
}

impl Renderer {
    /// Sets up programs, buffers and the font texture on the current context `gl`. The
    /// palettes hold [`shaders::palette_capacity`] (scaled) and
    /// [`shaders::rigid_palette_capacity`] (rigid) joints of the context's uniform budget, or
    /// `palette` when smaller.
    ///
    /// # Errors
    ///
    /// [`GlError`] when a shader fails or the context has room for no palette.
    pub fn new(gl: glow::Context, palette: Option<usize>) -> Result<Renderer, GlError> {
        Renderer::with_budget(gl, palette, None)
    }

    /// [`Renderer::new`] with the palettes sized for at most `budget` vertex uniform vectors
    /// (`None`: the context's `GL_MAX_VERTEX_UNIFORM_VECTORS`; a larger budget is cut to it),
    /// to draw as a smaller context would (`Some(128)`: the ES 2.0 minimum).
    ///
    /// # Errors
    ///
    /// As [`Renderer::new`].
    pub fn with_budget(gl: glow::Context, palette: Option<usize>, budget: Option<usize>) -> Result<Renderer, GlError> {
        let info = GlInfo::query(&gl);
        let vectors = budget.map_or(info.max_vertex_uniform_vectors, |b| b.min(info.max_vertex_uniform_vectors));
        let capacity = shaders::palette_capacity(vectors);
        let palette_size = palette.map_or(capacity, |p| p.min(capacity));
        let rigid_capacity = shaders::rigid_palette_capacity(vectors);
        let rigid_palette_size = palette.map_or(rigid_capacity, |p| p.min(rigid_capacity));
        if palette_size < 4 {
            return Err(GlError::Unsupported(format!(
                "{vectors} vertex uniform vectors leave room for {capacity} joints; at least 4 are needed"
            )));
        }
        let programs = Programs::new(&gl, palette_size, rigid_palette_size)?;
        // SAFETY: buffer creation on the current context.
        let stream = unsafe { gl.create_buffer() }.map_err(GlError::Create)?;
        let font = font_texture(&gl)?;
        let white = super::texture::white(&gl)?;
        Ok(Renderer {
            gl,
            info,
            palette_size,
            rigid_palette_size,
            cpu_skinning: false,
            stats: DrawStats::default(),
            programs,
            stream,
            font,
            white,
            offscreen: None,
            rows: Vec::new(),
        })
    }

    /// The GL context.
    #[must_use]
    pub fn gl(&self) -> &glow::Context {
        &self.gl
    }

    /// The palette sizes models are split by at load: [`Renderer::rigid_palette_size`] for
    /// rigs without scale, [`Renderer::palette_size`] for the others.
    #[must_use]
    pub fn palette_sizes(&self) -> PaletteSizes {
        PaletteSizes { rigid: self.rigid_palette_size, scaled: self.palette_size }
    }

    /// Uploads every mesh part of `model`: parts of up to [`Renderer::rigid_palette_size`]
    /// joints are skinned in the shaders (under DQS, a part beyond
    /// [`Renderer::palette_size`] whose palette scales in some frame is skinned on the CPU in
    /// that frame).
    ///
    /// # Errors
    ///
    /// [`GlError::Create`] when a buffer cannot be created.
    pub fn upload(&self, model: &Model) -> Result<GpuModel, GlError> {
        mesh::upload(&self.gl, self.info.uint_indices, self.rigid_palette_size, model)
    }

    /// Deletes a model's buffers.
    pub fn free(&self, model: GpuModel) {
        mesh::free(&self.gl, model);
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

    /// Makes the offscreen target `width × height` (a new one when the size changed).
    fn ensure_offscreen(&mut self, width: u32, height: u32) -> Result<(), GlError> {
        if self.offscreen.as_ref().is_some_and(|o| o.width == width && o.height == height) {
            return Ok(());
        }
        if let Some(o) = self.offscreen.take() {
            o.delete(&self.gl);
        }
        self.offscreen = Some(Offscreen::new(&self.gl, width, height)?);
        Ok(())
    }

    /// Reads the current framebuffer's `width × height` pixels as RGBA, top row first.
    #[must_use]
    pub fn read_rgba(&self, width: u32, height: u32) -> Vec<u8> {
        target::read_rgba(&self.gl, width, height)
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

    fn program(&self, shader: SkinShader) -> &SkinProgram {
        self.programs.skin(shader)
    }

    /// Joints the palette of `shader`'s program holds (its `JOINTS`).
    #[must_use]
    pub fn program_joints(&self, shader: impl Into<SkinShader>) -> usize {
        self.program(shader.into()).joints
    }

    /// Uploads `rows` to the palette uniform of the `shader` program (a [`Skinning`] method
    /// names LBS or DQS with scale), and makes it current.
    pub fn upload_palette(&mut self, shader: impl Into<SkinShader>, rows: &[[f32; 4]]) {
        self.rows.clear();
        self.rows.extend(rows.iter().flatten());
        let p = self.programs.skin(shader.into());
        // SAFETY: uniform upload to a linked program; `rows` never exceeds the declared array
        // (callers pass at most `palette_size` joints).
        unsafe {
            self.gl.use_program(Some(p.program));
            if !self.rows.is_empty() {
                self.gl.uniform_4_f32_slice(p.palette.as_ref(), &self.rows);
            }
        }
    }

    /// Reads `count` palette rows back from the `shader` program's uniform (what the shader
    /// sees), for tests.
    #[must_use]
    pub fn read_palette(&self, shader: impl Into<SkinShader>, count: usize) -> Vec<[f32; 4]> {
        let shader = shader.into();
        let p = self.program(shader);
        let name = shader.palette_uniform();
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
        // Under DQS, a part beyond the scaled palette's size fits only the rigid program: when
        // its palette scales in this frame (a pose the load-time check did not see), the CPU
        // skins it.
        let scaled_size = self.palette_size;
        let dqs = obj.skinning == Skinning::Dqs;
        let too_big = |p: &GpuPart| dqs && needs_cpu_dqs(&obj.dq_palette, &p.map, scaled_size);
        let on_cpu =
            |p: &GpuPart| matches!(p.mode, PartMode::Cpu(_)) || (p.mode == PartMode::Gpu && (force || too_big(p)));
        let cpu = if parts.iter().any(on_cpu) { Some(obj.skin_cpu()?) } else { None };
        // Morph targets: the bind-pose vertices morphed on the CPU (`MorphJob`), streamed, then
        // skinned in the shaders like the static ones.
        let asset = obj.model.asset();
        let morphs = asset.morph_targets(obj.mesh).is_some() && !obj.morph_weights.is_empty();
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
            let shader = match (part.mode == PartMode::Gpu && !cpu_path, obj.skinning) {
                (false, _) | (true, Skinning::Lbs) => SkinShader::Lbs,
                (true, Skinning::Dqs) if part_is_rigid(&obj.dq_palette, &part.map) => SkinShader::DqsRigid,
                (true, Skinning::Dqs) => SkinShader::Dqs,
            };
            let rows = match (&part.mode, cpu_path) {
                (_, true) | (PartMode::Cpu(_), _) => lbs_rows(&[Mat4::IDENTITY], &[0]),
                (PartMode::Gpu, false) => {
                    self.stats.largest_palette = self.stats.largest_palette.max(part.map.len());
                    match shader {
                        SkinShader::Lbs => lbs_rows(&obj.palette, &part.map),
                        SkinShader::Dqs => dq_rows(&obj.dq_palette, &part.map),
                        SkinShader::DqsRigid => {
                            self.stats.dqs_rigid_parts += 1;
                            dq_rigid_rows(&obj.dq_palette, &part.map)
                        }
                    }
                }
                (PartMode::Rigid, false) => lbs_rows(&[node], &[0]),
            };
            self.upload_palette(shader, &rows);
            let p = self.program(shader);
            let gl = &self.gl;
            // SAFETY: uniform uploads, buffer binds and uploads of vertex data built here.
            unsafe {
                gl.uniform_matrix_4_f32_slice(p.mvp.as_ref(), false, &mvp.to_cols_array());
                gl.uniform_matrix_3_f32_slice(p.normal_mat.as_ref(), false, &normal_mat);
                gl.uniform_3_f32(p.light_dir.as_ref(), dir.x, dir.y, dir.z);
                gl.uniform_2_f32(p.light.as_ref(), light.ambient, light.diffuse);
                // The shader combines colors in linear light; an override is a display color.
                let c = if obj.material_colors {
                    part.color
                } else {
                    let [r, g, b, a] = obj.color;
                    [srgb_to_linear(r), srgb_to_linear(g), srgb_to_linear(b), a]
                };
                gl.uniform_4_f32(p.color.as_ref(), c[0], c[1], c[2], c[3]);
                gl.active_texture(glow::TEXTURE0);
                gl.bind_texture(glow::TEXTURE_2D, Some(part.texture.unwrap_or(self.white)));
                gl.uniform_1_i32(p.texture.as_ref(), 0);
                match (cpu_path, cpu.as_ref().and_then(|c| c.get(pi))) {
                    (true, Some(sk)) => {
                        // Skinned vertices with one identity influence, streamed.
                        let data = part.skinned_vertices(sk);
                        gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.stream));
                        gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &vertex_bytes(&data), glow::STREAM_DRAW);
                    }
                    _ => match asset.mesh(obj.mesh).and_then(|m| m.parts().nth(pi)).filter(|_| morphs) {
                        Some(mp) => {
                            let morphed = morphed_part(&asset, obj.mesh, pi, &mp, &obj.morph_weights)?;
                            let data = part.morphed_vertices(&morphed, mp.has_normals());
                            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.stream));
                            gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &vertex_bytes(&data), glow::STREAM_DRAW);
                        }
                        None => gl.bind_buffer(glow::ARRAY_BUFFER, Some(part.vbo)),
                    },
                }
            }
            bind_attributes::<MeshVertex>(&self.gl);
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
        disable_attributes::<MeshVertex>(&self.gl);
        // SAFETY: unbinding.
        unsafe {
            self.gl.bind_buffer(glow::ARRAY_BUFFER, None);
            self.gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, None);
            self.gl.bind_texture(glow::TEXTURE_2D, None);
        }
        Ok(())
    }

    /// Draws world-space line segments in one color, depth-tested or on top of everything.
    pub fn draw_lines(&mut self, lines: &[[Vec3<f32>; 2]], view_proj: &Mat4<f32>, color: [f32; 4], on_top: bool) {
        if lines.is_empty() {
            return;
        }
        let data: Vec<LineVertex> = lines.iter().flatten().map(|p| LineVertex { position: p.to_array() }).collect();
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
            let program = &self.programs.lines;
            gl.use_program(Some(program.program));
            gl.uniform_matrix_4_f32_slice(program.mvp.as_ref(), false, &view_proj.to_cols_array());
            gl.uniform_4_f32(program.color.as_ref(), color[0], color[1], color[2], color[3]);
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.stream));
            gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &vertex_bytes(&data), glow::STREAM_DRAW);
            bind_attributes::<LineVertex>(gl);
            gl.draw_arrays(glow::LINES, 0, (lines.len() * 2) as i32);
            disable_attributes::<LineVertex>(gl);
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
        let gl = &self.gl;
        // SAFETY: streaming upload and a draw of the vertices just uploaded.
        unsafe {
            gl.disable(glow::DEPTH_TEST);
            gl.disable(glow::CULL_FACE);
            gl.enable(glow::BLEND);
            gl.blend_func(glow::SRC_ALPHA, glow::ONE_MINUS_SRC_ALPHA);
            let program = &self.programs.hud;
            gl.use_program(Some(program.program));
            gl.uniform_2_f32(program.screen.as_ref(), width.max(1) as f32, height.max(1) as f32);
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_2D, Some(self.font));
            gl.uniform_1_i32(program.font.as_ref(), 0);
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.stream));
            gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &vertex_bytes(vertices), glow::STREAM_DRAW);
            bind_attributes::<HudVertex>(gl);
            gl.draw_arrays(glow::TRIANGLES, 0, vertices.len() as i32);
            disable_attributes::<HudVertex>(gl);
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

impl Drop for Renderer {
    fn drop(&mut self) {
        self.programs.delete(&self.gl);
        // SAFETY: deleting objects this renderer created, on its context.
        unsafe {
            self.gl.delete_buffer(self.stream);
            self.gl.delete_texture(self.font);
            self.gl.delete_texture(self.white);
        }
        if let Some(o) = self.offscreen.take() {
            o.delete(&self.gl);
        }
    }
}
