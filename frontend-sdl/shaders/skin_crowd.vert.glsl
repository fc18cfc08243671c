// Crowd skinning: linear blend skinning of one instance of a crowd, its palette read from a
// float texture (vertex texture fetch) and its placement from per-instance attributes. Follows
// skin_common.vert.glsl (attributes, uniforms, emitSkinned); JOINTS is unused.
//
// The palette texture holds every instance's palette of the whole skin: joint j of the
// instance whose slot starts at texel (a_instanceSlot.x, a_instanceSlot.y) has the three rows
// of its affine skin matrix at columns a_instanceSlot.x + 3j + 0, 1, 2 of row
// a_instanceSlot.y. Vertex joint indices are skin joints. The skinned vertex is then placed by
// the rows a_instance0..2 (model to world) and u_MVP takes it to clip space; u_normalMat turns
// the placed normal (the identity when the placements are in world space).

uniform sampler2D u_palette;
uniform vec2 u_paletteSize;
attribute vec4 a_instance0;
attribute vec4 a_instance1;
attribute vec4 a_instance2;
attribute vec4 a_instanceSlot;

// Texel `column` of the instance's palette row (nearest filtering, texel centers).
vec4 paletteTexel(float column) {
    vec2 at = vec2(a_instanceSlot.x + column + 0.5, a_instanceSlot.y + 0.5);
    return texture2D(u_palette, at / u_paletteSize);
}

void main() {
    vec4 j = floor(a_jointIndices + 0.5) * 3.0;
    vec4 w = a_jointWeights;
    vec4 r0 = paletteTexel(j.x) * w.x + paletteTexel(j.y) * w.y + paletteTexel(j.z) * w.z
        + paletteTexel(j.w) * w.w;
    vec4 r1 = paletteTexel(j.x + 1.0) * w.x + paletteTexel(j.y + 1.0) * w.y + paletteTexel(j.z + 1.0) * w.z
        + paletteTexel(j.w + 1.0) * w.w;
    vec4 r2 = paletteTexel(j.x + 2.0) * w.x + paletteTexel(j.y + 2.0) * w.y + paletteTexel(j.z + 2.0) * w.z
        + paletteTexel(j.w + 2.0) * w.w;
    vec4 p = vec4(a_position, 1.0);
    vec4 skinned = vec4(dot(r0, p), dot(r1, p), dot(r2, p), 1.0);
    vec3 n = vec3(dot(r0.xyz, a_normal), dot(r1.xyz, a_normal), dot(r2.xyz, a_normal));
    vec3 placed = vec3(dot(a_instance0, skinned), dot(a_instance1, skinned), dot(a_instance2, skinned));
    vec3 pn = vec3(dot(a_instance0.xyz, n), dot(a_instance1.xyz, n), dot(a_instance2.xyz, n));
    emitSkinned(placed, pn);
}
