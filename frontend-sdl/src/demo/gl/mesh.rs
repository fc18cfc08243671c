//! Mesh upload: every part of a model's meshes goes to GPU buffers once ([`upload`]), with the
//! way it is drawn ([`PartMode`]): skinned in the shaders, rigid, or skinned on the CPU and
//! streamed ([`GpuPart::skinned_vertices`]). A part of a mesh with morph targets is morphed
//! on the CPU by the core's `MorphJob` and its bind-pose vertices streamed
//! ([`GpuPart::morphed_vertices`]) with their joints and weights, so the shaders still skin it.
//! Each part keeps its surface: the material's base color, its texture coordinates and vertex
//! colors, and its texture (see `texture`).

use glow::HasContext;
use sinew::asset::MeshPart;
use sinew_host::parts::{PartVertices, FLOATS_PER_VERTEX};
use sinew_offline::model::{Model, SkinnedPart};
use sinew_offline::morph::MorphedPart;

use super::context::GlError;
use super::texture::{self, TextureKey};
use super::vertex::{vertex_bytes, MeshVertex};

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

/// One mesh part in GPU buffers.
pub(super) struct GpuPart {
    /// Its vertices ([`MeshVertex`]).
    pub(super) vbo: glow::Buffer,
    /// Its indices, `None` when drawn without (see `expand`).
    pub(super) ibo: Option<glow::Buffer>,
    /// `UNSIGNED_SHORT` or `UNSIGNED_INT` (0 without indices).
    pub(super) index_type: u32,
    /// Vertices drawn (3 per triangle).
    pub(super) count: i32,
    /// How it is drawn.
    pub(super) mode: PartMode,
    /// Local palette: part joint → skin joint.
    pub(super) map: Vec<u16>,
    /// For non-indexed parts, the source vertex of each drawn vertex.
    expand: Option<Vec<u32>>,
    /// Bind-pose vertex data; CPU skinning streams a skinned copy of it.
    base: Vec<MeshVertex>,
    /// The material's base-color factor, linear RGBA 0 to 1.
    pub(super) color: [f32; 4],
    /// The base-color texture (one of [`GpuModel`]'s), `None` for the white texture.
    pub(super) texture: Option<glow::Texture>,
}

impl GpuPart {
    /// The vertices to stream for the CPU-skinned part `skinned`: its positions and normals,
    /// each following palette entry 0 (the identity) alone, repeated per index for a
    /// non-indexed part.
    pub(super) fn skinned_vertices(&self, skinned: &SkinnedPart) -> Vec<MeshVertex> {
        let mut data = self.base.clone();
        for (v, vertex) in data.iter_mut().enumerate() {
            if let Some(p) = skinned.positions.get(v) {
                vertex.position = p.to_array();
            }
            if let Some(n) = skinned.normals.get(v) {
                vertex.normal = n.to_array();
            }
            vertex.joint_indices = MeshVertex::SINGLE_INDICES;
            vertex.joint_weights = MeshVertex::SINGLE_WEIGHTS;
        }
        match &self.expand {
            Some(e) => expanded(&data, e),
            None => data,
        }
    }
}

impl GpuPart {
    /// The vertices to stream for the part morphed to `morphed` (bind pose, before skinning):
    /// its positions, and normals when the part has its own (computed normals are kept), with
    /// the joints and weights of the uploaded part, repeated per index for a non-indexed part.
    pub(super) fn morphed_vertices(&self, morphed: &MorphedPart, own_normals: bool) -> Vec<MeshVertex> {
        let mut data = self.base.clone();
        for (v, vertex) in data.iter_mut().enumerate() {
            if let Some(p) = morphed.positions.get(v) {
                vertex.position = p.to_array();
            }
            if let (true, Some(n)) = (own_normals, morphed.normals.as_ref().and_then(|n| n.get(v))) {
                vertex.normal = n.to_array();
            }
        }
        match &self.expand {
            Some(e) => expanded(&data, e),
            None => data,
        }
    }
}

/// A model's mesh parts in GPU buffers, and its textures.
pub struct GpuModel {
    /// Parts by mesh.
    pub(super) meshes: Vec<Vec<GpuPart>>,
    /// Textures with their sampler state, as the parts use them.
    textures: Vec<(TextureKey, glow::Texture)>,
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

    /// Number of GL textures uploaded (one per baked texture and sampler state).
    #[must_use]
    pub fn num_textures(&self) -> usize {
        self.textures.len()
    }
}

/// The vertices of a part for `mode` (the host layer's [`PartVertices`], as the browser
/// runtime draws them): its joints and weights when skinned on the GPU, else palette entry 0
/// alone.
fn part_vertex_data(part: &MeshPart<'_>, mode: &PartMode) -> Vec<MeshVertex> {
    const { assert!(size_of::<MeshVertex>() == FLOATS_PER_VERTEX * 4) };
    let src = PartVertices::read(part);
    let rigid = *mode != PartMode::Gpu;
    let mut floats = Vec::with_capacity(FLOATS_PER_VERTEX);
    (0..src.len())
        .map(|v| {
            floats.clear();
            src.push_vertex(v, rigid, &|j| j, &mut floats);
            let at = |i: usize| floats.get(i).copied().unwrap_or(0.0);
            let take = |from: usize, out: &mut [f32]| out.iter_mut().enumerate().for_each(|(k, x)| *x = at(from + k));
            let mut m = MeshVertex::default();
            take(0, &mut m.position);
            take(3, &mut m.normal);
            take(6, &mut m.joint_indices);
            take(10, &mut m.joint_weights);
            take(14, &mut m.uv);
            take(16, &mut m.color);
            m
        })
        .collect()
}

/// Vertex data repeated per index (for non-indexed drawing); zeros for an index past `base`.
fn expanded(base: &[MeshVertex], indices: &[u32]) -> Vec<MeshVertex> {
    indices.iter().map(|&i| base.get(i as usize).copied().unwrap_or_default()).collect()
}

/// Uploads every mesh part of `model` on `gl`: parts with more than 4 influences or a palette
/// larger than `palette_size` joints are skinned on the CPU; parts with more vertices than
/// 16-bit indices reach use 32-bit ones when `uint_indices`, else are drawn without indices.
///
/// # Errors
///
/// [`GlError::Create`] when a buffer cannot be created.
pub(super) fn upload(
    gl: &glow::Context,
    uint_indices: bool,
    palette_size: usize,
    model: &Model,
) -> Result<GpuModel, GlError> {
    let asset = model.asset();
    let mut meshes = Vec::new();
    let mut textures: Vec<(TextureKey, glow::Texture)> = Vec::new();
    // SAFETY: a parameter query.
    let max_size = unsafe { gl.get_parameter_i32(glow::MAX_TEXTURE_SIZE) }.max(64) as u32;
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
            } else if part.palette_len() > palette_size {
                PartMode::Cpu(format!("a palette of {} joints (the shaders hold {})", part.palette_len(), palette_size))
            } else {
                PartMode::Gpu
            };
            let indices: Vec<u32> = (0..part.num_indices()).map(|i| part.index(i)).collect();
            let base = part_vertex_data(&part, &mode);
            let n = part.num_vertices();
            let (index_type, expand) = if n <= 65536 {
                (glow::UNSIGNED_SHORT, None)
            } else if uint_indices {
                (glow::UNSIGNED_INT, None)
            } else {
                (0, Some(indices.clone()))
            };
            let map: Vec<u16> = (0..part.palette_len()).map(|i| part.palette(i)).collect();
            let material = part.material();
            let color = material.factor.map(|c| f32::from(c) / 255.0);
            let key = TextureKey::of(&material).filter(|_| part.has_texcoords());
            let texture = match key {
                None => None,
                Some(key) => match textures.iter().find(|(k, _)| *k == key) {
                    Some(&(_, t)) => Some(t),
                    None => match asset.texture(key.texture) {
                        Some(data) => {
                            let (t, _) = texture::upload(gl, &data.texture(), &key, max_size)?;
                            textures.push((key, t));
                            Some(t)
                        }
                        None => None,
                    },
                },
            };
            // SAFETY: buffer creation and upload on the current context.
            unsafe {
                let vbo = gl.create_buffer().map_err(GlError::Create)?;
                gl.bind_buffer(glow::ARRAY_BUFFER, Some(vbo));
                let data = match &expand {
                    Some(e) => expanded(&base, e),
                    None => base.clone(),
                };
                gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &vertex_bytes(&data), glow::STATIC_DRAW);
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
                parts.push(GpuPart {
                    vbo,
                    ibo,
                    index_type,
                    count: indices.len() as i32,
                    mode,
                    map,
                    expand,
                    base,
                    color,
                    texture,
                });
            }
        }
        meshes.push(parts);
    }
    // SAFETY: unbinding.
    unsafe {
        gl.bind_buffer(glow::ARRAY_BUFFER, None);
        gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, None);
    }
    Ok(GpuModel { meshes, textures })
}

/// Deletes the buffers of `model`.
pub(super) fn free(gl: &glow::Context, model: GpuModel) {
    // SAFETY: deleting buffers created by `upload` on this context.
    unsafe {
        for p in model.meshes.iter().flatten() {
            gl.delete_buffer(p.vbo);
            if let Some(i) = p.ibo {
                gl.delete_buffer(i);
            }
        }
        for &(_, t) in &model.textures {
            gl.delete_texture(t);
        }
    }
}
