//! A crowd on the GPU: what the context offers it ([`Renderer::crowd_support`]), its buffers
//! ([`CrowdGpu`]: each draw part's vertices, the palette texture, the instance rows), and its
//! two ways of drawing ([`Renderer::draw_crowd`]):
//!
//! - **instanced**: `skin_crowd.vert.glsl` reads each instance's palette from the RGBA32F
//!   palette texture (vertex texture fetch) and its placement and slot from four attributes of
//!   divisor 1, one `glDrawElementsInstanced` per draw part for the whole crowd;
//! - **instance by instance**: the uniform-palette LBS program, one draw per instance and
//!   part, each with that part's local rows copied from the instance's palette slot
//!   (`--no-instancing`, or a context without instancing, float textures or vertex texture
//!   units).
//!
//! Both draw the same parts (the host layer's [`DrawPart`]s, split for the LBS program's
//! palette) with the same matrices, so they give the same image.

use glow::HasContext;
use sinew::math::Mat4;
use sinew_host::crowd::{skin_indexed_vertices, INSTANCE_FLOATS};
use sinew_host::parts::DrawPart;

use super::super::context::{GlError, GlInfo};
use super::super::mesh::GpuModel;
use super::super::programs::{link, MESH_ATTRIBUTES};
use super::super::vertex::{bind_attributes, disable_attributes, MeshVertex};
use super::Renderer;
use crate::demo::shaders::{self, attrib, SkinShader};
use crate::scene::SceneLight;

/// `GL_RGBA32F` (ES 3.0, desktop 3.0 and `ARB_texture_float`'s `RGBA32F_ARB`).
const RGBA32F: u32 = 0x8814;

/// What the context offers the instanced crowd: where instancing and float textures come
/// from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrowdSupport {
    /// Where `glDrawElementsInstanced` and `glVertexAttribDivisor` come from.
    pub instancing: &'static str,
    /// Where float textures come from.
    pub float_textures: &'static str,
    /// The palette texture's internal format (`GL_RGBA32F`, or `GL_RGBA` under
    /// `OES_texture_float`).
    internal_format: u32,
}

/// The context's version as (major, minor), from `GL_VERSION` ("OpenGL ES 3.2 Mesa …",
/// "4.5 (Compatibility Profile) Mesa …"); (0, 0) when it cannot be read.
#[must_use]
pub fn gl_version(info: &GlInfo) -> (u32, u32) {
    let rest = info.version.strip_prefix("OpenGL ES").map_or(info.version.as_str(), |r| r.trim_start_matches('-'));
    let number = rest.split_whitespace().find(|w| w.starts_with(|c: char| c.is_ascii_digit())).unwrap_or("");
    let mut it = number.split('.').map(|p| p.chars().take_while(char::is_ascii_digit).collect::<String>());
    let major = it.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    let minor = it.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    (major, minor)
}

/// The crowd shader's program and uniforms.
struct CrowdProgram {
    program: glow::Program,
    mvp: Option<glow::UniformLocation>,
    normal_mat: Option<glow::UniformLocation>,
    light_dir: Option<glow::UniformLocation>,
    light: Option<glow::UniformLocation>,
    color: Option<glow::UniformLocation>,
    texture: Option<glow::UniformLocation>,
    palette: Option<glow::UniformLocation>,
    palette_size: Option<glow::UniformLocation>,
}

/// One draw part of the crowd's model in GPU buffers.
struct CrowdPart {
    vbo: glow::Buffer,
    ibo: glow::Buffer,
    count: i32,
    /// Local palette: part joint → skin joint (for the instance-by-instance draws).
    map: Vec<u16>,
    color: [f32; 4],
    texture: Option<glow::Texture>,
}

/// A crowd's GPU side: its parts, and for instanced drawing the program, the palette texture
/// and the instance buffer.
pub struct CrowdGpu {
    parts: Vec<CrowdPart>,
    instanced: Option<Instanced>,
    /// The palette texture's width in texels (the palette buffer's texels per row).
    width: usize,
    /// Bytes of the texture rows being uploaded, reused.
    bytes: Vec<u8>,
}

/// The instanced path's objects.
struct Instanced {
    program: CrowdProgram,
    palette: glow::Texture,
    size: (usize, usize),
    instances: glow::Buffer,
    internal_format: u32,
    /// The texture holds a whole palette (its first upload happened).
    allocated: bool,
}

impl std::fmt::Debug for CrowdGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrowdGpu")
            .field("parts", &self.parts.len())
            .field("instanced", &self.instanced.is_some())
            .finish_non_exhaustive()
    }
}

impl CrowdGpu {
    /// Draw calls a frame of `instances` instances takes.
    #[must_use]
    pub fn draws_per_frame(&self, instances: usize) -> usize {
        if self.instanced.is_some() {
            self.parts.len()
        } else {
            self.parts.len() * instances
        }
    }

    /// Whether it draws instanced.
    #[must_use]
    pub fn is_instanced(&self) -> bool {
        self.instanced.is_some()
    }
}

/// `floats` as native-endian bytes, appended to `out` after clearing it.
fn float_bytes(floats: &[f32], out: &mut Vec<u8>) {
    out.clear();
    out.reserve(floats.len() * 4);
    for f in floats {
        out.extend_from_slice(&f.to_ne_bytes());
    }
}

impl Renderer {
    /// What the context offers a crowd whose palette texture is `width × height` texels: the
    /// sources of instancing and float textures, or why it must be drawn instance by instance
    /// (no instancing, no float textures, no vertex texture units, too few vertex attributes,
    /// a texture larger than the context takes).
    ///
    /// # Errors
    ///
    /// The reason, as the one-time message says it.
    pub fn crowd_support(&self, width: usize, height: usize) -> Result<CrowdSupport, String> {
        let gl = &self.gl;
        let (major, minor) = gl_version(&self.info);
        let es = self.info.es;
        let ext = gl.supported_extensions();
        let has = |e: &str| ext.contains(e);
        let instancing = if es && major >= 3 {
            "OpenGL ES 3.0"
        } else if es && has("GL_EXT_instanced_arrays") {
            "GL_EXT_instanced_arrays"
        } else if es && has("GL_ANGLE_instanced_arrays") {
            "GL_ANGLE_instanced_arrays"
        } else if !es && (major, minor) >= (3, 3) {
            "OpenGL 3.3"
        } else if !es && has("GL_ARB_instanced_arrays") {
            "GL_ARB_instanced_arrays"
        } else {
            return Err("no instancing (needs OpenGL ES 3.0, GL_EXT_instanced_arrays or GL_ANGLE_instanced_arrays, or GL_ARB_instanced_arrays on desktop OpenGL)".into());
        };
        let (float_textures, internal_format) = if es && major >= 3 {
            ("OpenGL ES 3.0 RGBA32F", RGBA32F)
        } else if es && has("GL_OES_texture_float") {
            ("GL_OES_texture_float", glow::RGBA)
        } else if !es && major >= 3 {
            ("OpenGL 3.0 RGBA32F", RGBA32F)
        } else if !es && has("GL_ARB_texture_float") {
            ("GL_ARB_texture_float", RGBA32F)
        } else {
            return Err("no float textures (needs OpenGL ES 3.0, GL_OES_texture_float or GL_ARB_texture_float)".into());
        };
        // SAFETY: parameter queries.
        let (units, attributes, max_size) = unsafe {
            (
                gl.get_parameter_i32(glow::MAX_VERTEX_TEXTURE_IMAGE_UNITS),
                gl.get_parameter_i32(glow::MAX_VERTEX_ATTRIBS),
                gl.get_parameter_i32(glow::MAX_TEXTURE_SIZE),
            )
        };
        if units < 1 {
            return Err("no vertex texture units (GL_MAX_VERTEX_TEXTURE_IMAGE_UNITS is 0)".into());
        }
        if attributes < attrib::CROWD_ATTRIBUTES as i32 {
            return Err(format!("{attributes} vertex attributes (the crowd shader uses {})", attrib::CROWD_ATTRIBUTES));
        }
        if width.max(height) > max_size.max(0) as usize {
            return Err(format!("a palette texture of {width} x {height} texels (the context takes {max_size})"));
        }
        Ok(CrowdSupport { instancing, float_textures, internal_format })
    }

    /// Uploads the crowd's draw parts (`(mesh, part)`; rigid parts are left out), with the
    /// colors and textures of the viewer's `model` for their source parts; with `support`,
    /// also the crowd program, a `width × height` palette texture and the instance buffer.
    ///
    /// # Errors
    ///
    /// [`GlError`] when a buffer, texture or the crowd program cannot be made.
    pub fn upload_crowd(
        &self,
        parts: &[(usize, &DrawPart)],
        model: &GpuModel,
        (width, height): (usize, usize),
        support: Option<CrowdSupport>,
    ) -> Result<CrowdGpu, GlError> {
        let gl = &self.gl;
        let mut out = CrowdGpu { parts: Vec::new(), instanced: None, width, bytes: Vec::new() };
        for &(mesh, part) in parts.iter().filter(|(_, p)| !p.is_rigid()) {
            let vertices = if support.is_some() { skin_indexed_vertices(part) } else { part.vertices.clone() };
            let source = model.meshes.get(mesh).and_then(|m| m.get(part.source));
            let color = part.material.factor.map(|c| f32::from(c) / 255.0);
            let texture = source.and_then(|s| s.texture).filter(|_| part.textured);
            let mut vb = Vec::new();
            float_bytes(&vertices, &mut vb);
            let ib: Vec<u8> = part.indices.iter().flat_map(|i| i.to_ne_bytes()).collect();
            // SAFETY: buffer creation and uploads on the current context.
            let (vbo, ibo) = unsafe {
                let vbo = gl.create_buffer().map_err(GlError::Create)?;
                gl.bind_buffer(glow::ARRAY_BUFFER, Some(vbo));
                gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &vb, glow::STATIC_DRAW);
                let ibo = gl.create_buffer().map_err(GlError::Create)?;
                gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(ibo));
                gl.buffer_data_u8_slice(glow::ELEMENT_ARRAY_BUFFER, &ib, glow::STATIC_DRAW);
                (vbo, ibo)
            };
            out.parts.push(CrowdPart {
                vbo,
                ibo,
                count: part.indices.len() as i32,
                map: part.map.clone(),
                color,
                texture,
            });
        }
        if let Some(s) = support {
            let program = crowd_program(gl)?;
            // SAFETY: texture and buffer creation on the current context.
            let (palette, instances) = unsafe {
                let t = gl.create_texture().map_err(GlError::Create)?;
                gl.bind_texture(glow::TEXTURE_2D, Some(t));
                for (p, v) in super::super::texture::NEAREST_CLAMPED {
                    gl.tex_parameter_i32(glow::TEXTURE_2D, p, v);
                }
                gl.bind_texture(glow::TEXTURE_2D, None);
                (t, gl.create_buffer().map_err(GlError::Create)?)
            };
            out.instanced = Some(Instanced {
                program,
                palette,
                size: (width, height),
                instances,
                internal_format: s.internal_format,
                allocated: false,
            });
        }
        // SAFETY: unbinding.
        unsafe {
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
            gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, None);
        }
        Ok(out)
    }

    /// Deletes the crowd's buffers, texture and program.
    pub fn free_crowd(&self, gpu: CrowdGpu) {
        let gl = &self.gl;
        // SAFETY: deleting objects `upload_crowd` created on this context.
        unsafe {
            for p in &gpu.parts {
                gl.delete_buffer(p.vbo);
                gl.delete_buffer(p.ibo);
            }
            if let Some(i) = gpu.instanced {
                gl.delete_program(i.program.program);
                gl.delete_texture(i.palette);
                gl.delete_buffer(i.instances);
            }
        }
    }

    /// Uploads the palette texture's `rows` (`None`: none changed) from `palette` (all of it
    /// on the first upload) and the instance rows, for the instanced path (nothing otherwise).
    pub fn upload_crowd_frame(
        &self,
        gpu: &mut CrowdGpu,
        palette: &[f32],
        rows: Option<std::ops::Range<usize>>,
        instance_rows: &[f32],
    ) {
        let Some(inst) = gpu.instanced.as_mut() else { return };
        let (w, h) = inst.size;
        let row_floats = w * 4;
        let rows = if inst.allocated { rows } else { Some(0..h) };
        let gl = &self.gl;
        if let Some(r) = rows.filter(|r| r.start < r.end && r.end <= h) {
            let Some(floats) = palette.get(r.start * row_floats..r.end * row_floats) else { return };
            float_bytes(floats, &mut gpu.bytes);
            // SAFETY: uploads of `w × (r.end − r.start)` RGBA float texels, the bytes just
            // built; the first allocates the whole texture.
            unsafe {
                gl.bind_texture(glow::TEXTURE_2D, Some(inst.palette));
                gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 4);
                if inst.allocated {
                    gl.tex_sub_image_2d(
                        glow::TEXTURE_2D,
                        0,
                        0,
                        r.start as i32,
                        w as i32,
                        (r.end - r.start) as i32,
                        glow::RGBA,
                        glow::FLOAT,
                        glow::PixelUnpackData::Slice(Some(&gpu.bytes)),
                    );
                } else {
                    gl.tex_image_2d(
                        glow::TEXTURE_2D,
                        0,
                        inst.internal_format as i32,
                        w as i32,
                        h as i32,
                        0,
                        glow::RGBA,
                        glow::FLOAT,
                        glow::PixelUnpackData::Slice(Some(&gpu.bytes)),
                    );
                    inst.allocated = true;
                }
                gl.bind_texture(glow::TEXTURE_2D, None);
            }
        }
        float_bytes(instance_rows, &mut gpu.bytes);
        // SAFETY: a streaming upload to the instance buffer.
        unsafe {
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(inst.instances));
            gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &gpu.bytes, glow::STREAM_DRAW);
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
        }
    }

    /// Draws the crowd: its placements (`instance_rows`, [`INSTANCE_FLOATS`] per instance)
    /// under `world` then `view_proj`; instanced, one draw per part, or instance by instance
    /// with each part's local rows read from `palette` (the texture's texels, row after row).
    /// Returns the draw calls made.
    pub fn draw_crowd(
        &mut self,
        gpu: &CrowdGpu,
        palette: &[f32],
        instance_rows: &[f32],
        world: &Mat4<f32>,
        view_proj: &Mat4<f32>,
        light: &SceneLight,
    ) -> usize {
        let n = instance_rows.len() / INSTANCE_FLOATS;
        let width = gpu.width;
        let w = world.cols;
        let normal_mat = [w[0][0], w[0][1], w[0][2], w[1][0], w[1][1], w[1][2], w[2][0], w[2][1], w[2][2]];
        let dir = light.direction.normalize_or_zero();
        // SAFETY: state for mesh drawing.
        unsafe {
            self.gl.enable(glow::DEPTH_TEST);
            self.gl.depth_func(glow::LEQUAL);
            self.gl.enable(glow::CULL_FACE);
            self.gl.cull_face(glow::BACK);
            self.gl.disable(glow::BLEND);
        }
        let mut draws = 0;
        match &gpu.instanced {
            Some(inst) => {
                let p = &inst.program;
                let mvp = *view_proj * *world;
                let gl = &self.gl;
                // SAFETY: uniforms of the linked crowd program, the palette texture on unit 1,
                // the instance attributes (4 vec4 of divisor 1) in the instance buffer, one
                // instanced draw per part with its own buffers, then the divisors reset.
                unsafe {
                    gl.use_program(Some(p.program));
                    gl.uniform_matrix_4_f32_slice(p.mvp.as_ref(), false, &mvp.to_cols_array());
                    gl.uniform_matrix_3_f32_slice(p.normal_mat.as_ref(), false, &normal_mat);
                    gl.uniform_3_f32(p.light_dir.as_ref(), dir.x, dir.y, dir.z);
                    gl.uniform_2_f32(p.light.as_ref(), light.ambient, light.diffuse);
                    gl.uniform_2_f32(p.palette_size.as_ref(), inst.size.0 as f32, inst.size.1 as f32);
                    gl.active_texture(glow::TEXTURE1);
                    gl.bind_texture(glow::TEXTURE_2D, Some(inst.palette));
                    gl.uniform_1_i32(p.palette.as_ref(), 1);
                    gl.active_texture(glow::TEXTURE0);
                    gl.uniform_1_i32(p.texture.as_ref(), 0);
                    gl.bind_buffer(glow::ARRAY_BUFFER, Some(inst.instances));
                    let stride = (INSTANCE_FLOATS * 4) as i32;
                    for k in 0..4 {
                        let loc = attrib::INSTANCE + k;
                        gl.enable_vertex_attrib_array(loc);
                        gl.vertex_attrib_pointer_f32(loc, 4, glow::FLOAT, false, stride, 16 * k as i32);
                        gl.vertex_attrib_divisor(loc, 1);
                    }
                    for part in &gpu.parts {
                        gl.uniform_4_f32(p.color.as_ref(), part.color[0], part.color[1], part.color[2], part.color[3]);
                        gl.bind_texture(glow::TEXTURE_2D, Some(part.texture.unwrap_or(self.white)));
                        gl.bind_buffer(glow::ARRAY_BUFFER, Some(part.vbo));
                        bind_attributes::<MeshVertex>(gl);
                        gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(part.ibo));
                        gl.draw_elements_instanced(glow::TRIANGLES, part.count, glow::UNSIGNED_SHORT, 0, n as i32);
                        draws += 1;
                        self.stats.gpu_parts += 1;
                        self.stats.triangles += part.count as usize / 3 * n;
                    }
                    for k in 0..4 {
                        gl.vertex_attrib_divisor(attrib::INSTANCE + k, 0);
                        gl.disable_vertex_attrib_array(attrib::INSTANCE + k);
                    }
                    gl.active_texture(glow::TEXTURE1);
                    gl.bind_texture(glow::TEXTURE_2D, None);
                    gl.active_texture(glow::TEXTURE0);
                }
            }
            None => {
                let mut rows: Vec<[f32; 4]> = Vec::new();
                for inst in instance_rows.chunks_exact(INSTANCE_FLOATS) {
                    let at = |i: usize| inst.get(i).copied().unwrap_or(0.0);
                    let placement = Mat4 {
                        cols: [
                            [at(0), at(4), at(8), 0.0],
                            [at(1), at(5), at(9), 0.0],
                            [at(2), at(6), at(10), 0.0],
                            [at(3), at(7), at(11), 1.0],
                        ],
                    };
                    let model = *world * placement;
                    let mvp = *view_proj * model;
                    let m = model.cols;
                    let normal = [m[0][0], m[0][1], m[0][2], m[1][0], m[1][1], m[1][2], m[2][0], m[2][1], m[2][2]];
                    let (x0, y0) = (at(12) as usize, at(13) as usize);
                    for part in &gpu.parts {
                        rows.clear();
                        for &j in &part.map {
                            for k in 0..3 {
                                let texel = (y0 * width + x0 + 3 * usize::from(j) + k) * 4;
                                let t = palette.get(texel..texel + 4).unwrap_or(&[0.0; 4]);
                                rows.push([t[0], t[1], t[2], t[3]]);
                            }
                        }
                        self.upload_palette(SkinShader::Lbs, &rows);
                        let p = self.programs.skin(SkinShader::Lbs);
                        let gl = &self.gl;
                        // SAFETY: uniforms of the linked LBS program (current after the palette
                        // upload), the part's own buffers, one draw.
                        unsafe {
                            gl.uniform_matrix_4_f32_slice(p.mvp.as_ref(), false, &mvp.to_cols_array());
                            gl.uniform_matrix_3_f32_slice(p.normal_mat.as_ref(), false, &normal);
                            gl.uniform_3_f32(p.light_dir.as_ref(), dir.x, dir.y, dir.z);
                            gl.uniform_2_f32(p.light.as_ref(), light.ambient, light.diffuse);
                            let c = part.color;
                            gl.uniform_4_f32(p.color.as_ref(), c[0], c[1], c[2], c[3]);
                            gl.active_texture(glow::TEXTURE0);
                            gl.bind_texture(glow::TEXTURE_2D, Some(part.texture.unwrap_or(self.white)));
                            gl.uniform_1_i32(p.texture.as_ref(), 0);
                            gl.bind_buffer(glow::ARRAY_BUFFER, Some(part.vbo));
                            bind_attributes::<MeshVertex>(gl);
                            gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(part.ibo));
                            gl.draw_elements(glow::TRIANGLES, part.count, glow::UNSIGNED_SHORT, 0);
                        }
                        draws += 1;
                        self.stats.gpu_parts += 1;
                        self.stats.triangles += part.count as usize / 3;
                    }
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
        draws
    }
}

/// Compiles and links the crowd program (`skin_crowd.vert.glsl` after the common part, the
/// mesh fragment shader) with the mesh and instance attribute locations.
fn crowd_program(gl: &glow::Context) -> Result<CrowdProgram, GlError> {
    let attributes: Vec<(u32, &str)> = MESH_ATTRIBUTES
        .into_iter()
        .chain([
            (attrib::INSTANCE, "a_instance0"),
            (attrib::INSTANCE + 1, "a_instance1"),
            (attrib::INSTANCE + 2, "a_instance2"),
            (attrib::INSTANCE + 3, "a_instanceSlot"),
        ])
        .collect();
    let program = link(
        gl,
        "skin_crowd",
        &shaders::crowd_vertex_shader(),
        &shaders::fragment_shader(shaders::MESH_FRAGMENT),
        &attributes,
    )?;
    // SAFETY: uniform queries on a linked program.
    unsafe {
        let u = |n: &str| gl.get_uniform_location(program, n);
        Ok(CrowdProgram {
            program,
            mvp: u("u_MVP"),
            normal_mat: u("u_normalMat"),
            light_dir: u("u_lightDir"),
            light: u("u_light"),
            color: u("u_color"),
            texture: u("u_texture"),
            palette: u("u_palette"),
            palette_size: u("u_paletteSize"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(version: &str, es: bool) -> GlInfo {
        GlInfo {
            es,
            version: version.into(),
            renderer: String::new(),
            shading_language: String::new(),
            max_vertex_uniform_vectors: 128,
            uint_indices: true,
        }
    }

    #[test]
    fn versions_are_read_from_es_and_desktop_strings() {
        assert_eq!(gl_version(&info("OpenGL ES 3.2 Mesa 22.3.6", true)), (3, 2));
        assert_eq!(gl_version(&info("OpenGL ES 2.0 (ANGLE 2.1)", true)), (2, 0));
        assert_eq!(gl_version(&info("4.5 (Compatibility Profile) Mesa 22.3.6", false)), (4, 5));
        assert_eq!(gl_version(&info("2.1 Mesa 10.0", false)), (2, 1));
        assert_eq!(gl_version(&info("", false)), (0, 0));
    }
}
