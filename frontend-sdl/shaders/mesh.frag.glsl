// Skinned meshes, colored in linear light as glTF defines it: the base-color texture's texel
// (sRGB, decoded here: GLSL ES 1.00 has no sRGB textures) times the base color (u_color, the
// material's factor, linear) times the vertex color (linear), encoded back to sRGB, then scaled
// by the vertex's light level; alpha is the material's. Untextured parts read a white texel,
// which decodes to 1.

uniform vec4 u_color;
uniform sampler2D u_texture;
varying float v_shade;
varying vec2 v_uv;
varying vec4 v_color;

// The sRGB transfer function (IEC 61966-2-1), exact: the linear segment near black and the
// 2.4 power above it. `mix` with `step` evaluates both sides; pow's argument is never negative.
vec3 srgbToLinear(vec3 c) {
    vec3 lo = c / 12.92;
    vec3 hi = pow((c + 0.055) / 1.055, vec3(2.4));
    return mix(lo, hi, step(vec3(0.04045), c));
}

vec3 linearToSrgb(vec3 c) {
    c = clamp(c, 0.0, 1.0);
    vec3 lo = c * 12.92;
    vec3 hi = 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055;
    return mix(lo, hi, step(vec3(0.0031308), c));
}

void main() {
    vec3 texel = srgbToLinear(texture2D(u_texture, v_uv).rgb);
    vec3 c = linearToSrgb(texel * u_color.rgb * v_color.rgb);
    gl_FragColor = vec4(c * v_shade, u_color.a);
}
