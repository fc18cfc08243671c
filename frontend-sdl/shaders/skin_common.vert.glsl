// What both skinning vertex shaders share: the vertex's attributes, the uniforms besides the
// palette, the varyings, and emitSkinned, which ends main. The host puts this file after the
// version line and the JOINTS define, and before skin_lbs.vert.glsl or skin_dqs.vert.glsl.

attribute vec3 a_position;
attribute vec3 a_normal;
attribute vec4 a_jointIndices;
attribute vec4 a_jointWeights;
attribute vec2 a_uv;
attribute vec4 a_color;
uniform mat4 u_MVP;
uniform mat3 u_normalMat;
uniform vec3 u_lightDir;
uniform vec2 u_light;
varying float v_shade;
varying vec2 v_uv;
varying vec4 v_color;

// Places the skinned position, lights it by the skinned normal (any length; a zero normal
// gets the ambient level) and passes the surface attributes on.
void emitSkinned(vec3 position, vec3 normal) {
    v_uv = a_uv;
    v_color = a_color;
    gl_Position = u_MVP * vec4(position, 1.0);
    float len = length(normal);
    vec3 wn = len > 0.0 ? normalize(u_normalMat * (normal / len)) : vec3(0.0);
    v_shade = clamp(u_light.x + u_light.y * max(dot(wn, u_lightDir), 0.0), 0.0, 1.0);
}
