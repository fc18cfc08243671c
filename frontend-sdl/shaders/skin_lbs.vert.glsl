// Linear blend skinning. Follows skin_common.vert.glsl (attributes, uniforms, emitSkinned).
// The palette holds the first three rows of each joint's affine skin matrix.

uniform vec4 u_jointMat[JOINTS * 3];

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
    emitSkinned(skinned, n);
}
