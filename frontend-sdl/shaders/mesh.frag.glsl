// Skinned meshes: the base color (u_color, the material's factor) times the vertex color times
// the base-color texture (a white texel for untextured parts), scaled by the vertex's light
// level; alpha is the material's.

uniform vec4 u_color;
uniform sampler2D u_texture;
varying float v_shade;
varying vec2 v_uv;
varying vec4 v_color;

void main() {
    vec4 c = u_color * v_color * texture2D(u_texture, v_uv);
    gl_FragColor = vec4(c.rgb * v_shade, u_color.a);
}
