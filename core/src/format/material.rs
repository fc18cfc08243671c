//! The layout constants of textures and materials (format version 2): the `TEXR` section kind,
//! its texel formats, the mesh part attributes that carry texture coordinates and vertex
//! colors, and the codes of a part's material (wrap modes, filters, flags).

/// Section kind: a texture (see the layout in [`crate::format`]).
pub const KIND_TEXTURE: [u8; 4] = *b"TEXR";

/// Mesh part attribute bit: texture coordinates present (`f32 × 2` per vertex).
pub const ATTR_TEXCOORDS: u8 = 16;
/// Mesh part attribute bit: vertex colors present (`u8 × 4` RGBA per vertex).
pub const ATTR_COLORS: u8 = 32;

/// Texel format: 4 bytes per texel, RGBA.
pub const TEXEL_RGBA8: u8 = 0;
/// Texel format: 2 bytes per texel, little-endian RGB565.
pub const TEXEL_RGB565: u8 = 1;

/// Bytes of a part's material.
pub const MATERIAL_LEN: usize = 12;

/// Wrap mode: repeat (glTF 10497).
pub const WRAP_REPEAT: u8 = 0;
/// Wrap mode: clamp to edge (glTF 33071).
pub const WRAP_CLAMP: u8 = 1;
/// Wrap mode: mirrored repeat (glTF 33648).
pub const WRAP_MIRROR: u8 = 2;

/// Filter: nearest (glTF 9728).
pub const FILTER_NEAREST: u8 = 0;
/// Filter: linear (glTF 9729).
pub const FILTER_LINEAR: u8 = 1;
/// Minification filter: nearest texel of the nearest mipmap (glTF 9984).
pub const FILTER_NEAREST_MIPMAP_NEAREST: u8 = 2;
/// Minification filter: linear within the nearest mipmap (glTF 9985).
pub const FILTER_LINEAR_MIPMAP_NEAREST: u8 = 3;
/// Minification filter: nearest texel, linear between mipmaps (glTF 9986).
pub const FILTER_NEAREST_MIPMAP_LINEAR: u8 = 4;
/// Minification filter: trilinear (glTF 9987).
pub const FILTER_LINEAR_MIPMAP_LINEAR: u8 = 5;

/// Material flag: multiply by the part's vertex colors (the part has [`ATTR_COLORS`]).
pub const MATERIAL_VERTEX_COLORS: u8 = 1;

/// Bytes per texel of texel format `format`, or `None` for an unknown format.
#[must_use]
pub const fn texel_bytes(format: u8) -> Option<usize> {
    match format {
        TEXEL_RGBA8 => Some(4),
        TEXEL_RGB565 => Some(2),
        _ => None,
    }
}
