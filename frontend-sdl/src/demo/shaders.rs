//! GLSL ES 1.00 sources of the demo renderer.
//!
//! The skinning vertex shaders follow the GPU contract of the design notes: attributes
//! `a_position`, `a_normal`, `a_jointIndices` and `a_jointWeights` (4 influences, weights
//! summing to 1, indices into the part's local palette), uniform `u_MVP` and a palette of
//! `JOINTS` joints — `u_jointMat[3 · JOINTS]` holding the first three rows of each affine skin
//! matrix (linear blend skinning), or `u_jointDQ[4 · JOINTS]` holding each joint's dual
//! quaternion as `(real.xyzw, dual.xyzw)` and its scale/shear factor `P` (symmetric) as
//! `(xx, yy, zz, xy), (xz, yz, 0, 0)` (dual-quaternion skinning with scale: the vertex is
//! scaled by the blended `P` first, normals by its inverse transpose). `JOINTS` is defined in
//! front of the source by [`skin_vertex_shader`]. Lighting is per vertex, as in the software
//! rasterizer: `ambient + diffuse · max(0, n̂ · l̂)`. Both also pass `a_uv` and `a_color` on to
//! the fragment shader, which multiplies the base color, the vertex color and the base-color
//! texture (`u_texture`).

use sinew_pipeline::model::Skinning;

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

const LBS_BODY: &str = r"
attribute vec3 a_position;
attribute vec3 a_normal;
attribute vec4 a_jointIndices;
attribute vec4 a_jointWeights;
uniform mat4 u_MVP;
uniform mat3 u_normalMat;
uniform vec3 u_lightDir;
uniform vec2 u_light;
uniform vec4 u_jointMat[JOINTS * 3];
varying float v_shade;

void main() {
    ivec4 j = ivec4(a_jointIndices + 0.5) * 3;
    vec4 w = a_jointWeights;
    vec4 r0 = u_jointMat[j.x] * w.x + u_jointMat[j.y] * w.y + u_jointMat[j.z] * w.z + u_jointMat[j.w] * w.w;
    vec4 r1 = u_jointMat[j.x + 1] * w.x + u_jointMat[j.y + 1] * w.y + u_jointMat[j.z + 1] * w.z
        + u_jointMat[j.w + 1] * w.w;
    vec4 r2 = u_jointMat[j.x + 2] * w.x + u_jointMat[j.y + 2] * w.y + u_jointMat[j.z + 2] * w.z
        + u_jointMat[j.w + 2] * w.w;
    vec4 p = vec4(a_position, 1.0);
    vec3 skinned = vec3(dot(r0, p), dot(r1, p), dot(r2, p));
    vec3 n = vec3(dot(r0.xyz, a_normal), dot(r1.xyz, a_normal), dot(r2.xyz, a_normal));
    gl_Position = u_MVP * vec4(skinned, 1.0);
    float len = length(n);
    vec3 wn = len > 0.0 ? normalize(u_normalMat * (n / len)) : vec3(0.0);
    v_shade = clamp(u_light.x + u_light.y * max(dot(wn, u_lightDir), 0.0), 0.0, 1.0);
}
";

const DQS_BODY: &str = r"
attribute vec3 a_position;
attribute vec3 a_normal;
attribute vec4 a_jointIndices;
attribute vec4 a_jointWeights;
uniform mat4 u_MVP;
uniform mat3 u_normalMat;
uniform vec3 u_lightDir;
uniform vec2 u_light;
uniform vec4 u_jointDQ[JOINTS * 4];
varying float v_shade;

void main() {
    ivec4 j = ivec4(a_jointIndices + 0.5) * 4;
    vec4 w = a_jointWeights;
    vec4 q0 = u_jointDQ[j.x];
    vec4 q1 = u_jointDQ[j.y];
    vec4 q2 = u_jointDQ[j.z];
    vec4 q3 = u_jointDQ[j.w];
    // Blend on the hemisphere of the first influence.
    float s1 = dot(q0, q1) < 0.0 ? -w.y : w.y;
    float s2 = dot(q0, q2) < 0.0 ? -w.z : w.z;
    float s3 = dot(q0, q3) < 0.0 ? -w.w : w.w;
    vec4 real = q0 * w.x + q1 * s1 + q2 * s2 + q3 * s3;
    vec4 dual = u_jointDQ[j.x + 1] * w.x + u_jointDQ[j.y + 1] * s1 + u_jointDQ[j.z + 1] * s2
        + u_jointDQ[j.w + 1] * s3;
    // The scale factor P, blended linearly: (xx, yy, zz, xy) and (xz, yz).
    vec4 pa = u_jointDQ[j.x + 2] * w.x + u_jointDQ[j.y + 2] * w.y + u_jointDQ[j.z + 2] * w.z
        + u_jointDQ[j.w + 2] * w.w;
    vec2 pb = u_jointDQ[j.x + 3].xy * w.x + u_jointDQ[j.y + 3].xy * w.y + u_jointDQ[j.z + 3].xy * w.z
        + u_jointDQ[j.w + 3].xy * w.w;
    mat3 P = mat3(pa.x, pa.w, pb.x, pa.w, pa.y, pb.y, pb.x, pb.y, pa.z);
    // Its adjugate (det P · P^-1, symmetric), divided by the largest diagonal entry.
    float ps = max(max(abs(pa.x), abs(pa.y)), abs(pa.z));
    mat3 Q = ps > 0.0 ? P * (1.0 / ps) : mat3(0.0);
    vec3 c0 = cross(Q[1], Q[2]);
    mat3 adj = mat3(c0, cross(Q[2], Q[0]), cross(Q[0], Q[1]));
    float det = dot(Q[0], c0);
    float len = length(real);
    if (len > 0.0) {
        real /= len;
        dual /= len;
    } else {
        real = vec4(0.0, 0.0, 0.0, 1.0);
        dual = vec4(0.0);
    }
    vec3 t = 2.0 * (real.w * dual.xyz - dual.w * real.xyz + cross(real.xyz, dual.xyz));
    vec3 sp = P * a_position;
    vec3 sn = (det < 0.0 ? -1.0 : 1.0) * (adj * a_normal);
    vec3 skinned = sp + 2.0 * cross(real.xyz, cross(real.xyz, sp) + real.w * sp) + t;
    vec3 n = sn + 2.0 * cross(real.xyz, cross(real.xyz, sn) + real.w * sn);
    gl_Position = u_MVP * vec4(skinned, 1.0);
    float nl = length(n);
    vec3 wn = nl > 0.0 ? normalize(u_normalMat * (n / nl)) : vec3(0.0);
    v_shade = clamp(u_light.x + u_light.y * max(dot(wn, u_lightDir), 0.0), 0.0, 1.0);
}
";

/// What the skinning vertex shaders add to their body: the surface attributes (texture
/// coordinates, vertex color) passed to the fragment shader unchanged. [`skin_vertex_shader`]
/// declares them in front of the body and assigns them first thing in `main`.
const SURFACE_DECLARATIONS: &str = "attribute vec2 a_uv;
attribute vec4 a_color;
varying vec2 v_uv;
varying vec4 v_color;
";

/// The assignments [`SURFACE_DECLARATIONS`] needs, at the top of `main`.
const SURFACE_PASS: &str = "void main() {
    v_uv = a_uv;
    v_color = a_color;";

/// Fragment shader of skinned meshes: the base color (`u_color`, the material's factor) times
/// the vertex color times the base-color texture (a white texel for untextured parts), scaled
/// by the vertex light level.
pub const SKIN_FRAGMENT: &str = r"#version 100
precision mediump float;
uniform vec4 u_color;
uniform sampler2D u_texture;
varying float v_shade;
varying vec2 v_uv;
varying vec4 v_color;

void main() {
    vec4 c = u_color * v_color * texture2D(u_texture, v_uv);
    gl_FragColor = vec4(c.rgb * v_shade, u_color.a);
}
";

/// Vertex shader of lines (bones, grid).
pub const LINE_VERTEX: &str = r"#version 100
attribute vec3 a_position;
uniform mat4 u_MVP;

void main() {
    gl_Position = u_MVP * vec4(a_position, 1.0);
}
";

/// Fragment shader of lines.
pub const LINE_FRAGMENT: &str = r"#version 100
precision mediump float;
uniform vec4 u_color;

void main() {
    gl_FragColor = u_color;
}
";

/// Vertex shader of the HUD: positions in pixels from the top left.
pub const HUD_VERTEX: &str = r"#version 100
attribute vec2 a_position;
attribute vec2 a_uv;
attribute vec4 a_color;
uniform vec2 u_screen;
varying vec2 v_uv;
varying vec4 v_color;

void main() {
    vec2 ndc = a_position / u_screen * 2.0 - 1.0;
    gl_Position = vec4(ndc.x, -ndc.y, 0.0, 1.0);
    v_uv = a_uv;
    v_color = a_color;
}
";

/// Fragment shader of the HUD: the font atlas's coverage times the vertex color.
pub const HUD_FRAGMENT: &str = r"#version 100
precision mediump float;
uniform sampler2D u_font;
varying vec2 v_uv;
varying vec4 v_color;

void main() {
    gl_FragColor = vec4(v_color.rgb, v_color.a * texture2D(u_font, v_uv).a);
}
";

/// The skinning vertex shader for `method` with a palette of `joints` joints (at least 1).
#[must_use]
pub fn skin_vertex_shader(method: Skinning, joints: usize) -> String {
    let body = match method {
        Skinning::Lbs => LBS_BODY,
        Skinning::Dqs => DQS_BODY,
    };
    let body = body.replacen("void main() {", SURFACE_PASS, 1);
    format!("#version 100\n#define JOINTS {}\n{SURFACE_DECLARATIONS}{body}", joints.max(1))
}

/// The largest palette both skinning shaders can declare with `max_vertex_uniform_vectors`
/// (`GL_MAX_VERTEX_UNIFORM_VECTORS`), capped at the runtime's `MAX_JOINTS`.
#[must_use]
pub fn palette_capacity(max_vertex_uniform_vectors: usize) -> usize {
    let per_joint = LBS_VECTORS_PER_JOINT.max(DQS_VECTORS_PER_JOINT);
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
    }

    #[test]
    fn joints_are_defined_after_the_version_line() {
        let s = skin_vertex_shader(Skinning::Dqs, 12);
        assert!(s.starts_with("#version 100\n#define JOINTS 12\n"));
        assert!(s.contains("u_jointDQ[JOINTS * 4]"));
        assert!(skin_vertex_shader(Skinning::Lbs, 0).contains("#define JOINTS 1\n"));
        // Both pass the surface attributes on.
        for m in [Skinning::Lbs, Skinning::Dqs] {
            let s = skin_vertex_shader(m, 8);
            assert!(
                s.contains("attribute vec2 a_uv;") && s.contains("v_uv = a_uv;") && s.contains("v_color = a_color;")
            );
        }
    }
}
