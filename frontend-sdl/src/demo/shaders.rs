//! The demo renderer's GLSL ES 1.00 shaders, Rust side: the sources are the files under
//! `frontend-sdl/shaders/` (shared with other frontends; their README states the contract),
//! included here, and this module adds what the host puts in front of them ([`VERSION`],
//! `#define JOINTS n` and [`SKIN_COMMON_VERTEX`] for skinning, [`FRAGMENT_PRECISION`]), the
//! attribute locations bound before linking, and the uniform vectors a palette costs.
//!
//! The skinning vertex shaders follow the GPU contract of the design notes: attributes
//! `a_position`, `a_normal`, `a_jointIndices` and `a_jointWeights` (4 influences, weights
//! summing to 1, indices into the part's local palette), uniform `u_MVP` and a palette of
//! `JOINTS` joints — `u_jointMat[3 · JOINTS]` holding the first three rows of each affine skin
//! matrix (linear blend skinning), or `u_jointDQ[4 · JOINTS]` holding each joint's dual
//! quaternion as `(real.xyzw, dual.xyzw)` and its scale/shear factor `P` (symmetric) as
//! `(xx, yy, zz, xy), (xz, yz, 0, 0)` (dual-quaternion skinning with scale: the vertex is
//! scaled by the blended `P` first, normals by its inverse transpose), or, for palettes whose
//! joints carry no scale, `u_jointDQ[2 · JOINTS]` holding the dual quaternions alone (the
//! rigid DQS variant, [`SkinShader::DqsRigid`]). Lighting is per vertex,
//! as in the software rasterizer: `ambient + diffuse · max(0, n̂ · l̂)`. Both also pass `a_uv`
//! and `a_color` on to the fragment shader, which multiplies the base color, the vertex color
//! and the base-color texture (`u_texture`).
//!
//! Palette sizes: the scaled DQS palette's 4 vectors per joint bound the joints a part may
//! have when its rig scales ([`palette_capacity`], 28 at the ES 2.0 minimum of 128 vectors);
//! LBS (3 vectors) and rigid DQS (2) hold more when it does not ([`rigid_palette_capacity`],
//! 37 at 128). The demo splits a model's parts by the one that fits its rig, decided once at
//! load (see `crate::demo::viewer::rig_is_rigid`).

use sinew_offline::model::Skinning;

/// Vertex attribute locations, bound before linking.
pub mod attrib {
    /// `a_position`.
    pub const POSITION: u32 = 0;
    /// `a_normal`.
    pub const NORMAL: u32 = 1;
    /// `a_jointIndices`.
    pub const JOINT_INDICES: u32 = 2;
    /// `a_jointWeights`.
    pub const JOINT_WEIGHTS: u32 = 3;
    /// `a_uv` (mesh texture coordinates).
    pub const TEXCOORD: u32 = 4;
    /// `a_color` of meshes (vertex colors).
    pub const VERTEX_COLOR: u32 = 5;
    /// HUD `a_uv`.
    pub const UV: u32 = 1;
    /// HUD `a_color`.
    pub const COLOR: u32 = 2;
    /// The crowd shader's `a_instance0` (row 0 of the instance's placement); `a_instance1`,
    /// `a_instance2` and `a_instanceSlot` follow at the next locations.
    pub const INSTANCE: u32 = 6;
    /// Attribute locations the crowd shader uses (0 to 9).
    pub const CROWD_ATTRIBUTES: u32 = INSTANCE + 4;
}

/// Vertex uniform vectors the skinning shaders use besides the palette (`u_MVP` 4,
/// `u_normalMat` 3, `u_lightDir` 1, `u_light` 1), rounded up to leave room for what a driver
/// adds itself.
pub const RESERVED_VERTEX_VECTORS: usize = 16;

/// Uniform vectors per joint in the linear-blend palette.
pub const LBS_VECTORS_PER_JOINT: usize = 3;
/// Uniform vectors per joint in the dual-quaternion palette: the dual quaternion (2) and the
/// scale factor (2).
pub const DQS_VECTORS_PER_JOINT: usize = 4;
/// Uniform vectors per joint in the rigid dual-quaternion palette: the dual quaternion alone.
pub const DQS_RIGID_VECTORS_PER_JOINT: usize = 2;

/// The three skinning vertex shaders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkinShader {
    /// Linear blend skinning, [`SKIN_LBS_VERTEX`], 3 vectors per joint.
    Lbs,
    /// Dual-quaternion skinning with scale, [`SKIN_DQS_VERTEX`], 4 vectors per joint.
    Dqs,
    /// Dual-quaternion skinning of rigid palettes, [`SKIN_DQS_RIGID_VERTEX`], 2 vectors per
    /// joint.
    DqsRigid,
}

impl SkinShader {
    /// Uniform vectors per joint of its palette.
    #[must_use]
    pub fn vectors_per_joint(self) -> usize {
        match self {
            SkinShader::Lbs => LBS_VECTORS_PER_JOINT,
            SkinShader::Dqs => DQS_VECTORS_PER_JOINT,
            SkinShader::DqsRigid => DQS_RIGID_VECTORS_PER_JOINT,
        }
    }

    /// Its file's text.
    #[must_use]
    pub fn source(self) -> &'static str {
        match self {
            SkinShader::Lbs => SKIN_LBS_VERTEX,
            SkinShader::Dqs => SKIN_DQS_VERTEX,
            SkinShader::DqsRigid => SKIN_DQS_RIGID_VERTEX,
        }
    }

    /// The name of its palette uniform (`u_jointMat` or `u_jointDQ`).
    #[must_use]
    pub fn palette_uniform(self) -> &'static str {
        match self {
            SkinShader::Lbs => "u_jointMat",
            SkinShader::Dqs | SkinShader::DqsRigid => "u_jointDQ",
        }
    }

    /// The file's stem, for logs and errors.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            SkinShader::Lbs => "skin_lbs",
            SkinShader::Dqs => "skin_dqs",
            SkinShader::DqsRigid => "skin_dqs_rigid",
        }
    }
}

impl From<Skinning> for SkinShader {
    /// The shader of a method that holds any palette: LBS or DQS with scale.
    fn from(method: Skinning) -> SkinShader {
        match method {
            Skinning::Lbs => SkinShader::Lbs,
            Skinning::Dqs => SkinShader::Dqs,
        }
    }
}

/// The line every source starts with: GLSL ES 1.00.
pub const VERSION: &str = "#version 100\n";

/// What fragment shaders get after [`VERSION`]: ES 1.00 fragment shaders have no default float
/// precision.
pub const FRAGMENT_PRECISION: &str = "precision mediump float;\n";

/// `shaders/skin_common.vert.glsl`: the skinning shaders' attributes, uniforms besides the
/// palette, varyings, and `emitSkinned` (position, lighting and surface attributes out).
pub const SKIN_COMMON_VERTEX: &str = include_str!("../../shaders/skin_common.vert.glsl");
/// `shaders/skin_lbs.vert.glsl`: linear blend skinning (`u_jointMat`).
pub const SKIN_LBS_VERTEX: &str = include_str!("../../shaders/skin_lbs.vert.glsl");
/// `shaders/skin_dqs.vert.glsl`: dual-quaternion skinning with scale (`u_jointDQ`).
pub const SKIN_DQS_VERTEX: &str = include_str!("../../shaders/skin_dqs.vert.glsl");
/// `shaders/skin_dqs_rigid.vert.glsl`: dual-quaternion skinning of rigid palettes
/// (`u_jointDQ`, 2 vectors per joint).
pub const SKIN_DQS_RIGID_VERTEX: &str = include_str!("../../shaders/skin_dqs_rigid.vert.glsl");
/// `shaders/skin_crowd.vert.glsl`: a crowd's instance skinned from the palette texture
/// (`u_palette`) and placed by its instance attributes.
pub const SKIN_CROWD_VERTEX: &str = include_str!("../../shaders/skin_crowd.vert.glsl");
/// `shaders/mesh.frag.glsl`: skinned meshes' fragments, the base color times the vertex color
/// times the base-color texture, scaled by the vertex light level.
pub const MESH_FRAGMENT: &str = include_str!("../../shaders/mesh.frag.glsl");
/// `shaders/line.vert.glsl`: lines (bones, grid).
pub const LINE_VERTEX: &str = include_str!("../../shaders/line.vert.glsl");
/// `shaders/line.frag.glsl`: lines' one color.
pub const LINE_FRAGMENT: &str = include_str!("../../shaders/line.frag.glsl");
/// `shaders/hud.vert.glsl`: the HUD, positions in pixels from the top left.
pub const HUD_VERTEX: &str = include_str!("../../shaders/hud.vert.glsl");
/// `shaders/hud.frag.glsl`: the font atlas's coverage times the vertex color.
pub const HUD_FRAGMENT: &str = include_str!("../../shaders/hud.frag.glsl");

/// The skinning vertex shader for `method` with a palette of `joints` joints (at least 1):
/// [`VERSION`], `#define JOINTS n`, [`SKIN_COMMON_VERTEX`] and the method's file.
#[must_use]
pub fn skin_vertex_shader(method: Skinning, joints: usize) -> String {
    skin_shader_source(method.into(), joints)
}

/// The vertex shader `shader` with a palette of `joints` joints (at least 1): [`VERSION`],
/// `#define JOINTS n`, [`SKIN_COMMON_VERTEX`] and its file.
#[must_use]
pub fn skin_shader_source(shader: SkinShader, joints: usize) -> String {
    format!("{VERSION}#define JOINTS {}\n{SKIN_COMMON_VERTEX}{}", joints.max(1), shader.source())
}

/// The crowd's vertex shader: [`VERSION`], `#define JOINTS 1` (unused: the palette is a
/// texture), [`SKIN_COMMON_VERTEX`] and [`SKIN_CROWD_VERTEX`].
#[must_use]
pub fn crowd_vertex_shader() -> String {
    format!("{VERSION}#define JOINTS 1\n{SKIN_COMMON_VERTEX}{SKIN_CROWD_VERTEX}")
}

/// A vertex shader's full source: [`VERSION`], then `body` (one of the files).
#[must_use]
pub fn vertex_shader(body: &str) -> String {
    format!("{VERSION}{body}")
}

/// A fragment shader's full source: [`VERSION`], [`FRAGMENT_PRECISION`], then `body` (one of
/// the files).
#[must_use]
pub fn fragment_shader(body: &str) -> String {
    format!("{VERSION}{FRAGMENT_PRECISION}{body}")
}

/// The largest palette every skinning shader can declare with `max_vertex_uniform_vectors`
/// (`GL_MAX_VERTEX_UNIFORM_VECTORS`), capped at the runtime's `MAX_JOINTS`: what a part may
/// hold when its rig scales (DQS with scale, 4 vectors per joint, bounds it).
#[must_use]
pub fn palette_capacity(max_vertex_uniform_vectors: usize) -> usize {
    capacity(max_vertex_uniform_vectors, &[SkinShader::Lbs, SkinShader::Dqs, SkinShader::DqsRigid])
}

/// The largest palette LBS and rigid DQS can declare with `max_vertex_uniform_vectors`, capped
/// at the runtime's `MAX_JOINTS`: what a part may hold when its rig never scales (LBS, 3
/// vectors per joint, bounds it).
#[must_use]
pub fn rigid_palette_capacity(max_vertex_uniform_vectors: usize) -> usize {
    capacity(max_vertex_uniform_vectors, &[SkinShader::Lbs, SkinShader::DqsRigid])
}

fn capacity(max_vertex_uniform_vectors: usize, shaders: &[SkinShader]) -> usize {
    let per_joint = shaders.iter().map(|s| s.vectors_per_joint()).max().unwrap_or(1).max(1);
    (max_vertex_uniform_vectors.saturating_sub(RESERVED_VERTEX_VECTORS) / per_joint).min(sinew::limits::MAX_JOINTS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_follows_the_uniform_budget() {
        // The ES 2.0 minimum of 128 vectors leaves 112 for the palette: 28 joints of 4 rows
        // (dual quaternion and scale factor).
        assert_eq!(palette_capacity(128), 28);
        assert_eq!(palette_capacity(10), 0);
        assert_eq!(palette_capacity(1 << 20), sinew::limits::MAX_JOINTS);
        // Rigid rigs: 3 rows per joint (LBS) bound it, 37 joints at 128.
        assert_eq!(rigid_palette_capacity(128), 37);
        assert_eq!(rigid_palette_capacity(10), 0);
        assert_eq!(rigid_palette_capacity(1 << 20), sinew::limits::MAX_JOINTS);
        for v in [64, 128, 200, 256, 1024] {
            assert!(rigid_palette_capacity(v) >= palette_capacity(v));
            // Every program fits the budget at its capacity.
            for (cap, shaders) in [
                (palette_capacity(v), &[SkinShader::Lbs, SkinShader::Dqs, SkinShader::DqsRigid][..]),
                (rigid_palette_capacity(v), &[SkinShader::Lbs, SkinShader::DqsRigid][..]),
            ] {
                for s in shaders {
                    assert!(cap * s.vectors_per_joint() + RESERVED_VERTEX_VECTORS <= v.max(RESERVED_VERTEX_VECTORS));
                }
            }
        }
    }

    const FILES: [&str; 10] = [
        SKIN_COMMON_VERTEX,
        SKIN_CROWD_VERTEX,
        SKIN_LBS_VERTEX,
        SKIN_DQS_VERTEX,
        SKIN_DQS_RIGID_VERTEX,
        MESH_FRAGMENT,
        LINE_VERTEX,
        LINE_FRAGMENT,
        HUD_VERTEX,
        HUD_FRAGMENT,
    ];

    #[test]
    fn the_files_leave_version_precision_and_joints_to_the_host() {
        for f in FILES {
            assert!(f.is_ascii(), "GLSL ES 1.00 sources are ASCII");
            for directive in ["#version", "precision ", "#define JOINTS"] {
                assert!(!f.contains(directive), "{directive} in a shader file: {f}");
            }
        }
        assert!(fragment_shader(MESH_FRAGMENT).starts_with("#version 100\nprecision mediump float;\n"));
        assert!(vertex_shader(HUD_VERTEX).starts_with("#version 100\n"));
    }

    #[test]
    fn joints_are_defined_after_the_version_line() {
        let s = skin_vertex_shader(Skinning::Dqs, 12);
        assert!(s.starts_with("#version 100\n#define JOINTS 12\n"));
        assert!(s.contains("u_jointDQ[JOINTS * 4]"));
        assert!(skin_vertex_shader(Skinning::Lbs, 0).contains("#define JOINTS 1\n"));
        let r = skin_shader_source(SkinShader::DqsRigid, 37);
        assert!(r.starts_with("#version 100\n#define JOINTS 37\n"));
        assert!(r.contains("u_jointDQ[JOINTS * 2]") && r.contains("emitSkinned(") && r.contains("v_uv = a_uv;"));
        // Both pass the surface attributes on.
        for m in [Skinning::Lbs, Skinning::Dqs] {
            let s = skin_vertex_shader(m, 8);
            assert!(
                s.contains("attribute vec2 a_uv;") && s.contains("v_uv = a_uv;") && s.contains("v_color = a_color;")
            );
        }
    }
}
