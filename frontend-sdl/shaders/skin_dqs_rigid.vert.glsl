// Dual-quaternion skinning for rigid palettes (no scale). Follows skin_common.vert.glsl
// (attributes, uniforms, emitSkinned). The palette holds two vectors per joint: the dual
// quaternion's real and dual parts (x, y, z, w). Same result as skin_dqs.vert.glsl with every
// scale factor P the identity, in half the uniform vectors.

uniform vec4 u_jointDQ[JOINTS * 2];

void main() {
    ivec4 j = ivec4(a_jointIndices + 0.5) * 2;
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
    float len = length(real);
    if (len > 0.0) {
        real /= len;
        dual /= len;
    } else {
        real = vec4(0.0, 0.0, 0.0, 1.0);
        dual = vec4(0.0);
    }
    vec3 t = 2.0 * (real.w * dual.xyz - dual.w * real.xyz + cross(real.xyz, dual.xyz));
    vec3 p = a_position;
    vec3 nrm = a_normal;
    vec3 skinned = p + 2.0 * cross(real.xyz, cross(real.xyz, p) + real.w * p) + t;
    vec3 n = nrm + 2.0 * cross(real.xyz, cross(real.xyz, nrm) + real.w * nrm);
    emitSkinned(skinned, n);
}
