// The HUD: positions in pixels from the top left of a u_screen-sized viewport, the font
// atlas's texture coordinates and a color per vertex.

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
