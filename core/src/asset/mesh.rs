//! The mesh section: parts of vertices (positions, optional normals and tangents, joint
//! influences, optional texture coordinates and vertex colors), triangles and a material,
//! rigid or skinned. `mesh/inputs.rs` reads a part's skinning inputs into the caller's buffers.

use super::texture::MaterialData;
use super::Asset;
use crate::format::reader::{is_finite_bits, le_f32, le_u16, le_u32, Reader};
use crate::format::{ParseError, ATTR_COLORS, ATTR_NORMALS, ATTR_TANGENTS, MATERIAL_LEN, NONE};
use crate::limits::MAX_INFLUENCES;
use crate::math::{Vec3, Vec4};
use crate::real::Real;

mod inputs;
pub use inputs::{PartBuffers, PartInputs, PartInputsLen};

/// A mesh section.
#[derive(Debug, Clone, Copy)]
pub struct MeshData<'a> {
    name: &'a str,
    skin: u16,
    node: u16,
    color: [u8; 4],
    parts: usize,
    parts_bytes: &'a [u8],
}

/// One part of a mesh: vertices, triangles and the palette they index.
#[derive(Debug, Clone, Copy)]
pub struct MeshPart<'a> {
    palette: &'a [u8],
    vertices: usize,
    influences: usize,
    positions: &'a [u8],
    normals: Option<&'a [u8]>,
    tangents: Option<&'a [u8]>,
    joints: &'a [u8],
    weights: &'a [u8],
    index_size: usize,
    indices: &'a [u8],
    texcoords: Option<&'a [u8]>,
    colors: Option<&'a [u8]>,
    material: &'a [u8],
}

impl<'a> MeshPart<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self, ParseError> {
        let pl = r.u16()? as usize;
        let palette = r.bytes(pl * 2)?;
        let vertices = r.u32()? as usize;
        let influences = r.u8()? as usize;
        let attrs = r.u8()?;
        let v3 = vertices.checked_mul(12).ok_or(ParseError::Truncated)?;
        let positions = r.bytes(v3)?;
        let normals = if attrs & ATTR_NORMALS != 0 { Some(r.bytes(v3)?) } else { None };
        let tangents = if attrs & ATTR_TANGENTS != 0 {
            Some(r.bytes(vertices.checked_mul(16).ok_or(ParseError::Truncated)?)?)
        } else {
            None
        };
        let vk = vertices.checked_mul(influences).ok_or(ParseError::Truncated)?;
        let joints = r.bytes(vk.checked_mul(2).ok_or(ParseError::Truncated)?)?;
        let weights = r.bytes(vk.checked_mul(4).ok_or(ParseError::Truncated)?)?;
        let count = r.u32()? as usize;
        let index_size = r.u8()? as usize;
        let indices = r.bytes(count.checked_mul(index_size).ok_or(ParseError::Truncated)?)?;
        let texcoords = if attrs & crate::format::ATTR_TEXCOORDS != 0 {
            Some(r.bytes(vertices.checked_mul(8).ok_or(ParseError::Truncated)?)?)
        } else {
            None
        };
        let colors = if attrs & ATTR_COLORS != 0 {
            Some(r.bytes(vertices.checked_mul(4).ok_or(ParseError::Truncated)?)?)
        } else {
            None
        };
        let material = r.bytes(MATERIAL_LEN)?;
        Ok(MeshPart {
            palette,
            vertices,
            influences,
            positions,
            normals,
            tangents,
            joints,
            weights,
            index_size,
            indices,
            texcoords,
            colors,
            material,
        })
    }
    /// Palette length (skin joints this part's vertices index).
    #[must_use]
    pub fn palette_len(&self) -> usize {
        self.palette.len() / 2
    }
    /// Skin joint of palette entry `i`.
    #[must_use]
    pub fn palette(&self, i: usize) -> u16 {
        le_u16(self.palette, i * 2)
    }
    /// Vertex count.
    #[must_use]
    pub fn num_vertices(&self) -> usize {
        self.vertices
    }
    /// Influences per vertex (0 for a rigid mesh).
    #[must_use]
    pub fn influences(&self) -> usize {
        self.influences
    }
    /// True when normals are stored.
    #[must_use]
    pub fn has_normals(&self) -> bool {
        self.normals.is_some()
    }
    /// True when tangents are stored.
    #[must_use]
    pub fn has_tangents(&self) -> bool {
        self.tangents.is_some()
    }
    /// Position of vertex `v`.
    #[must_use]
    pub fn position<R: Real>(&self, v: usize) -> Vec3<R> {
        read_vec3(self.positions, v)
    }
    /// Normal of vertex `v` (zero when absent).
    #[must_use]
    pub fn normal<R: Real>(&self, v: usize) -> Vec3<R> {
        self.normals.map(|n| read_vec3(n, v)).unwrap_or(Vec3::ZERO)
    }
    /// Tangent of vertex `v` (zero when absent).
    #[must_use]
    pub fn tangent<R: Real>(&self, v: usize) -> Vec4<R> {
        match self.tangents {
            Some(t) => {
                let f = |k: usize| R::from_f32(le_f32(t, v * 16 + k * 4));
                Vec4::new(f(0), f(1), f(2), f(3))
            }
            None => Vec4::ZERO,
        }
    }
    /// Palette index of influence `k` of vertex `v`.
    #[must_use]
    pub fn joint(&self, v: usize, k: usize) -> u16 {
        le_u16(self.joints, (v * self.influences + k) * 2)
    }
    /// Weight of influence `k` of vertex `v`.
    #[must_use]
    pub fn weight<R: Real>(&self, v: usize, k: usize) -> R {
        R::from_f32(le_f32(self.weights, (v * self.influences + k) * 4))
    }
    /// Number of triangle indices.
    #[must_use]
    pub fn num_indices(&self) -> usize {
        self.indices.len() / self.index_size.max(1)
    }
    /// Triangle index `i`.
    #[must_use]
    pub fn index(&self, i: usize) -> u32 {
        if self.index_size == 2 {
            le_u16(self.indices, i * 2) as u32
        } else {
            le_u32(self.indices, i * 4)
        }
    }
    /// True when texture coordinates are stored.
    #[must_use]
    pub fn has_texcoords(&self) -> bool {
        self.texcoords.is_some()
    }
    /// Texture coordinates `(u, v)` of vertex `v` (zero when absent).
    #[must_use]
    pub fn texcoord<R: Real>(&self, v: usize) -> [R; 2] {
        match self.texcoords {
            Some(t) => [R::from_f32(le_f32(t, v * 8)), R::from_f32(le_f32(t, v * 8 + 4))],
            None => [R::ZERO; 2],
        }
    }
    /// True when vertex colors are stored.
    #[must_use]
    pub fn has_colors(&self) -> bool {
        self.colors.is_some()
    }
    /// Color of vertex `v`, linear RGBA × 255 (opaque white when absent).
    #[must_use]
    pub fn color(&self, v: usize) -> [u8; 4] {
        match self.colors.and_then(|c| c.get(v * 4..v * 4 + 4)) {
            Some(c) => [c[0], c[1], c[2], c[3]],
            None => [255; 4],
        }
    }
    /// The part's material.
    #[must_use]
    pub fn material(&self) -> MaterialData {
        MaterialData::read(self.material).unwrap_or(MaterialData {
            factor: [255; 4],
            texture: None,
            wrap_s: crate::raster::Wrap::Repeat,
            wrap_t: crate::raster::Wrap::Repeat,
            mag_filter: crate::format::FILTER_LINEAR,
            min_filter: crate::format::FILTER_LINEAR,
            vertex_colors: false,
        })
    }
}

fn read_vec3<R: Real>(d: &[u8], v: usize) -> Vec3<R> {
    let f = |k: usize| R::from_f32(le_f32(d, v * 12 + k * 4));
    Vec3::new(f(0), f(1), f(2))
}

fn all_finite(d: &[u8]) -> bool {
    (0..d.len() / 4).all(|i| is_finite_bits(le_u32(d, i * 4)))
}

impl<'a> MeshData<'a> {
    pub(super) fn parse(body: &'a [u8], sec: u16, asset: &Asset<'a>, skeleton_joints: usize) -> Result<(), ParseError> {
        let m = Self::header(body).map_err(|e| {
            if e == ParseError::Truncated {
                e
            } else {
                ParseError::BadName { section: sec }
            }
        })?;
        let skin_joints = if m.skin == NONE {
            None
        } else {
            if m.skin as usize >= asset.skins.count {
                return Err(ParseError::SkinOutOfRange { section: sec });
            }
            asset.skin(m.skin as usize).map(|s| s.num_joints())
        };
        if m.node != NONE && m.node as usize >= skeleton_joints {
            return Err(ParseError::JointOutOfRange { section: sec });
        }
        let mut r = Reader::new(m.parts_bytes);
        for part in 0..m.parts {
            let part = part as u16;
            let p = MeshPart::read(&mut r)?;
            match skin_joints {
                Some(sj) => {
                    if p.influences == 0 || p.influences > MAX_INFLUENCES {
                        return Err(ParseError::BadInfluences { section: sec });
                    }
                    if (0..p.palette_len()).any(|i| p.palette(i) as usize >= sj) {
                        return Err(ParseError::PaletteOutOfRange { section: sec });
                    }
                    let pl = p.palette_len();
                    if (0..p.joints.len() / 2).any(|i| le_u16(p.joints, i * 2) as usize >= pl) {
                        return Err(ParseError::PaletteOutOfRange { section: sec });
                    }
                }
                None => {
                    if p.influences != 0 {
                        return Err(ParseError::BadInfluences { section: sec });
                    }
                }
            }
            if !(all_finite(p.positions)
                && p.normals.is_none_or(all_finite)
                && p.tangents.is_none_or(all_finite)
                && p.texcoords.is_none_or(all_finite)
                && all_finite(p.weights))
            {
                return Err(ParseError::NonFinite { section: sec });
            }
            // Weights: none negative, and not all zero (checked on the bits: no float operation).
            let k = p.influences;
            for v in 0..if k > 0 { p.vertices } else { 0 } {
                let mut any = false;
                for i in 0..k {
                    let bits = le_u32(p.weights, (v * k + i) * 4);
                    let magnitude = bits & 0x7fff_ffff;
                    if magnitude != 0 && bits >> 31 != 0 {
                        return Err(ParseError::NegativeWeight { section: sec, part, vertex: v as u32 });
                    }
                    any |= magnitude != 0;
                }
                if !any {
                    return Err(ParseError::ZeroWeights { section: sec, part, vertex: v as u32 });
                }
            }
            if (p.index_size != 2 && p.index_size != 4) || p.num_indices() % 3 != 0 {
                return Err(ParseError::BadIndices { section: sec });
            }
            for t in 0..p.num_indices() / 3 {
                let tri = [p.index(t * 3), p.index(t * 3 + 1), p.index(t * 3 + 2)];
                if let Some(&vertex) = tri.iter().find(|&&i| i as usize >= p.vertices) {
                    return Err(ParseError::IndexOutOfRange { section: sec, part, triangle: t as u32, vertex });
                }
                if tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] {
                    return Err(ParseError::DegenerateTriangle { section: sec, part, triangle: t as u32 });
                }
            }
            let bad_material = ParseError::BadMaterial { section: sec, part };
            let mat = MaterialData::read(p.material).ok_or(bad_material)?;
            if mat.vertex_colors && p.colors.is_none() {
                return Err(bad_material);
            }
            if let Some(t) = mat.texture {
                if p.texcoords.is_none() {
                    return Err(bad_material);
                }
                if t >= asset.textures.count {
                    return Err(ParseError::TextureOutOfRange { section: sec, part, texture: t as u16 });
                }
            }
        }
        if r.pos() != m.parts_bytes.len() {
            return Err(ParseError::BadSection { section: sec });
        }
        Ok(())
    }
    fn header(body: &'a [u8]) -> Result<Self, ParseError> {
        let mut r = Reader::new(body);
        let name = r.str()?;
        let skin = r.u16()?;
        let node = r.u16()?;
        let color = r.array::<4>()?;
        let parts = r.u16()? as usize;
        let rest = r.pos();
        Ok(MeshData { name, skin, node, color, parts, parts_bytes: body.get(rest..).unwrap_or(&[]) })
    }
    pub(super) fn view(body: &'a [u8]) -> Option<Self> {
        Self::header(body).ok()
    }
    /// Mesh name.
    #[must_use]
    pub fn name(&self) -> &'a str {
        self.name
    }
    /// Skin index, or `None` for a rigid mesh.
    #[must_use]
    pub fn skin(&self) -> Option<usize> {
        (self.skin != NONE).then_some(self.skin as usize)
    }
    /// The skeleton joint that instances the mesh, if any: a rigid mesh follows it; a skinned
    /// mesh is placed by its skin alone (the joint names the instance).
    #[must_use]
    pub fn node(&self) -> Option<usize> {
        (self.node != NONE).then_some(self.node as usize)
    }
    /// Base color, linear RGBA × 255.
    #[must_use]
    pub fn color(&self) -> [u8; 4] {
        self.color
    }
    /// Number of parts.
    #[must_use]
    pub fn num_parts(&self) -> usize {
        self.parts
    }
    /// The parts, in order.
    pub fn parts(&self) -> impl Iterator<Item = MeshPart<'a>> + 'a {
        let mut r = Reader::new(self.parts_bytes);
        let n = self.parts;
        (0..n).map_while(move |_| MeshPart::read(&mut r).ok())
    }
}
