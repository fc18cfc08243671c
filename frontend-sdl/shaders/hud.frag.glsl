// The HUD: the font atlas's coverage (alpha) times the vertex color.

uniform sampler2D u_font;
varying vec2 v_uv;
varying vec4 v_color;

void main() {
    gl_FragColor = vec4(v_color.rgb, v_color.a * texture2D(u_font, v_uv).a);
}
