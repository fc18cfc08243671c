//! The interleaved vertex layouts the renderer uploads and streams, each stated once as a
//! `#[repr(C)]` type: the attribute offsets come from the type (`offset_of!`), the stride from
//! its size, and the bytes are written field by field in the same order (no casts of memory).
//!
//! - [`MeshVertex`]: what the skinning shaders read (position, normal, 4 joint indices and 4
//!   weights, texture coordinates, vertex color);
//! - [`LineVertex`]: a line end;
//! - [`HudVertex`]: a HUD vertex (position in pixels, atlas coordinates, color).

use core::mem::{offset_of, size_of, size_of_val};

use glow::HasContext;

use crate::demo::hud::HudVertex;
use crate::demo::shaders::attrib;

/// One float attribute of an interleaved vertex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Attribute {
    /// Its location, bound before linking (see [`attrib`]).
    pub(super) location: u32,
    /// Its number of floats (1 to 4).
    pub(super) components: i32,
    /// Its byte offset in the vertex.
    pub(super) offset: usize,
}

/// A vertex type uploaded interleaved, `size_of::<Self>()` bytes apart.
pub(super) trait Vertex {
    /// Its attributes, in field order.
    const ATTRIBUTES: &'static [Attribute];

    /// Appends the vertex's bytes to `out`, field by field in declaration order, so that each
    /// attribute's floats start at its offset.
    fn write(&self, out: &mut Vec<u8>);
}

/// Appends `values` as 4-byte floats.
fn put(out: &mut Vec<u8>, values: &[f32]) {
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// The bytes of `vertices`, one after another, as uploaded to an array buffer.
pub(super) fn vertex_bytes<V: Vertex>(vertices: &[V]) -> Vec<u8> {
    let mut out = Vec::with_capacity(size_of_val(vertices));
    for v in vertices {
        v.write(&mut out);
    }
    out
}

/// Enables the attributes of `V` and points them into the bound array buffer.
pub(super) fn bind_attributes<V: Vertex>(gl: &glow::Context) {
    let stride = size_of::<V>() as i32;
    // SAFETY: attribute pointers into the bound array buffer, within one vertex of `V`.
    unsafe {
        for a in V::ATTRIBUTES {
            gl.enable_vertex_attrib_array(a.location);
            gl.vertex_attrib_pointer_f32(a.location, a.components, glow::FLOAT, false, stride, a.offset as i32);
        }
    }
}

/// Disables the attributes of `V`.
pub(super) fn disable_attributes<V: Vertex>(gl: &glow::Context) {
    // SAFETY: state change.
    unsafe {
        for a in V::ATTRIBUTES {
            gl.disable_vertex_attrib_array(a.location);
        }
    }
}

/// One vertex of a mesh part as the skinning shaders read it.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct MeshVertex {
    /// Object-space position (`a_position`).
    pub(super) position: [f32; 3],
    /// Normal (`a_normal`).
    pub(super) normal: [f32; 3],
    /// Indices into the part's local palette, as floats (`a_jointIndices`).
    pub(super) joint_indices: [f32; 4],
    /// Weights of those joints (`a_jointWeights`).
    pub(super) joint_weights: [f32; 4],
    /// Texture coordinates (`a_uv`; zero without a texture).
    pub(super) uv: [f32; 2],
    /// Vertex color, linear RGBA 0 to 1 (`a_color`; white without vertex colors).
    pub(super) color: [f32; 4],
}

impl MeshVertex {
    /// Joint indices of a vertex that follows palette entry 0 alone.
    pub(super) const SINGLE_INDICES: [f32; 4] = [0.0; 4];
    /// Joint weights of a vertex that follows palette entry 0 alone.
    pub(super) const SINGLE_WEIGHTS: [f32; 4] = [1.0, 0.0, 0.0, 0.0];
}

impl Vertex for MeshVertex {
    const ATTRIBUTES: &'static [Attribute] = &[
        Attribute { location: attrib::POSITION, components: 3, offset: offset_of!(MeshVertex, position) },
        Attribute { location: attrib::NORMAL, components: 3, offset: offset_of!(MeshVertex, normal) },
        Attribute { location: attrib::JOINT_INDICES, components: 4, offset: offset_of!(MeshVertex, joint_indices) },
        Attribute { location: attrib::JOINT_WEIGHTS, components: 4, offset: offset_of!(MeshVertex, joint_weights) },
        Attribute { location: attrib::TEXCOORD, components: 2, offset: offset_of!(MeshVertex, uv) },
        Attribute { location: attrib::VERTEX_COLOR, components: 4, offset: offset_of!(MeshVertex, color) },
    ];

    fn write(&self, out: &mut Vec<u8>) {
        put(out, &self.position);
        put(out, &self.normal);
        put(out, &self.joint_indices);
        put(out, &self.joint_weights);
        put(out, &self.uv);
        put(out, &self.color);
    }
}

// The layout is the host layer's draw-part vertex (`sinew_host::limits::VERTEX_ATTRIBUTES`),
// which the browser page reads from its module: the same attributes in the same places.
const _: () = {
    let (ours, host) = (<MeshVertex as Vertex>::ATTRIBUTES, sinew_host::limits::VERTEX_ATTRIBUTES);
    assert!(ours.len() == host.len() && size_of::<MeshVertex>() == sinew_host::limits::FLOATS_PER_VERTEX * 4);
    let mut i = 0;
    while i < ours.len() {
        assert!(ours[i].components as usize == host[i].0 && ours[i].offset == host[i].1 * 4);
        i += 1;
    }
};

/// One end of a world-space line.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct LineVertex {
    /// World-space position (`a_position`).
    pub(super) position: [f32; 3],
}

impl Vertex for LineVertex {
    const ATTRIBUTES: &'static [Attribute] =
        &[Attribute { location: attrib::POSITION, components: 3, offset: offset_of!(LineVertex, position) }];

    fn write(&self, out: &mut Vec<u8>) {
        put(out, &self.position);
    }
}

impl Vertex for HudVertex {
    const ATTRIBUTES: &'static [Attribute] = &[
        Attribute { location: attrib::POSITION, components: 2, offset: offset_of!(HudVertex, pos) },
        Attribute { location: attrib::UV, components: 2, offset: offset_of!(HudVertex, uv) },
        Attribute { location: attrib::COLOR, components: 4, offset: offset_of!(HudVertex, color) },
    ];

    fn write(&self, out: &mut Vec<u8>) {
        put(out, &self.pos);
        put(out, &self.uv);
        put(out, &self.color);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks that `v`'s bytes hold `fields` (its fields' floats, in order) at its attributes'
    /// offsets, and that the attributes tile the whole vertex.
    fn check<V: Vertex>(v: &V, fields: &[&[f32]]) {
        let bytes = vertex_bytes(std::slice::from_ref(v));
        assert_eq!(bytes.len(), size_of::<V>());
        assert_eq!(V::ATTRIBUTES.len(), fields.len());
        let mut end = 0;
        for (a, f) in V::ATTRIBUTES.iter().zip(fields) {
            assert_eq!(a.offset, end, "attribute {} starts where the previous one ends", a.location);
            assert_eq!(a.components as usize, f.len());
            let floats: Vec<f32> = bytes[a.offset..a.offset + 4 * f.len()]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            assert_eq!(floats, *f, "attribute {}", a.location);
            end = a.offset + 4 * f.len();
        }
        assert_eq!(end, size_of::<V>());
    }

    #[test]
    fn written_bytes_follow_the_attribute_offsets() {
        let m = MeshVertex {
            position: [1.0, 2.0, 3.0],
            normal: [4.0, 5.0, 6.0],
            joint_indices: [7.0, 8.0, 9.0, 10.0],
            joint_weights: [0.125, 0.25, 0.5, 0.125],
            uv: [0.75, -2.0],
            color: [0.5, 0.25, 1.0, 1.0],
        };
        check(&m, &[&m.position, &m.normal, &m.joint_indices, &m.joint_weights, &m.uv, &m.color]);
        let l = LineVertex { position: [-1.0, 0.5, 2.0] };
        check(&l, &[&l.position]);
        let h = HudVertex { pos: [10.0, 20.0], uv: [0.25, 0.75], color: [0.1, 0.2, 0.3, 0.4] };
        check(&h, &[&h.pos, &h.uv, &h.color]);
        // The shaders' contract: 20 floats per mesh vertex, 8 per HUD vertex.
        assert_eq!(size_of::<MeshVertex>(), 20 * 4);
        let offsets: Vec<usize> = MeshVertex::ATTRIBUTES.iter().map(|a| a.offset).collect();
        assert_eq!(offsets, [0, 12, 24, 40, 56, 64]);
        assert_eq!(size_of::<HudVertex>(), 8 * 4);
        assert_eq!(size_of::<LineVertex>(), 3 * 4);
    }
}
