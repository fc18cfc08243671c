//! The on-screen HUD: text and rectangles batched as textured triangles over the font atlas,
//! and a minimal immediate-mode UI (sliders and toggles) driven by the mouse.

use super::font;

/// One HUD vertex: position in pixels from the top left, atlas coordinates, color (laid out
/// as the renderer uploads it).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HudVertex {
    /// Position in pixels.
    pub pos: [f32; 2],
    /// Atlas texture coordinates.
    pub uv: [f32; 2],
    /// RGBA, 0 to 1.
    pub color: [f32; 4],
}

/// Colors of the HUD.
pub mod color {
    /// Body text.
    pub const TEXT: [f32; 4] = [0.92, 0.93, 0.95, 1.0];
    /// Dimmed text.
    pub const DIM: [f32; 4] = [0.65, 0.68, 0.72, 1.0];
    /// Highlighted text.
    pub const ACCENT: [f32; 4] = [1.0, 0.8, 0.35, 1.0];
    /// Errors.
    pub const ERROR: [f32; 4] = [1.0, 0.4, 0.35, 1.0];
    /// Panel backgrounds.
    pub const PANEL: [f32; 4] = [0.0, 0.0, 0.0, 0.55];
    /// Slider tracks.
    pub const TRACK: [f32; 4] = [0.35, 0.37, 0.42, 1.0];
}

/// A batch of HUD triangles.
#[derive(Debug, Clone)]
pub struct Hud {
    /// The triangles (3 vertices each).
    pub vertices: Vec<HudVertex>,
    /// Pixels per font pixel.
    pub scale: f32,
}

impl Hud {
    /// An empty batch with glyphs drawn `scale` times their size.
    #[must_use]
    pub fn new(scale: f32) -> Hud {
        Hud { vertices: Vec::new(), scale: if scale.is_finite() && scale > 0.0 { scale } else { 1.0 } }
    }

    /// Height of one text line, in pixels.
    #[must_use]
    pub fn line_height(&self) -> f32 {
        font::CELL_HEIGHT as f32 * self.scale
    }

    /// Width of `text`'s longest line, in pixels.
    #[must_use]
    pub fn text_width(&self, text: &str) -> f32 {
        text.lines().map(|l| l.chars().count()).max().unwrap_or(0) as f32 * font::CELL_WIDTH as f32 * self.scale
    }

    /// A quad from corner `p0` to `p1` (pixels) textured from `uv0` to `uv1`.
    fn quad(&mut self, p0: [f32; 2], p1: [f32; 2], uv0: [f32; 2], uv1: [f32; 2], color: [f32; 4]) {
        let ([x0, y0], [x1, y1]) = (p0, p1);
        let v = |x, y, u, w| HudVertex { pos: [x, y], uv: [u, w], color };
        let (a, b, c, d) = (
            v(x0, y0, uv0[0], uv0[1]),
            v(x1, y0, uv1[0], uv0[1]),
            v(x1, y1, uv1[0], uv1[1]),
            v(x0, y1, uv0[0], uv1[1]),
        );
        self.vertices.extend_from_slice(&[a, b, c, a, c, d]);
    }

    /// A filled rectangle.
    pub fn rect(&mut self, x: f32, y: f32, w: f32, h: f32, color: [f32; 4]) {
        let (ox, oy) = font::cell_origin(font::BLOCK);
        let uv = [(ox as f32 + 2.5) / font::ATLAS_WIDTH as f32, (oy as f32 + 3.5) / font::ATLAS_HEIGHT as f32];
        self.quad([x, y], [x + w, y + h], uv, uv, color);
    }

    /// Draws `text` (lines split at `\n`) with its top left at `(x, y)`; returns the height
    /// used.
    pub fn text(&mut self, x: f32, y: f32, text: &str, color: [f32; 4]) -> f32 {
        let (cw, ch) = (font::CELL_WIDTH as f32 * self.scale, font::CELL_HEIGHT as f32 * self.scale);
        let (aw, ah) = (font::ATLAS_WIDTH as f32, font::ATLAS_HEIGHT as f32);
        let mut lines = 0;
        for (row, line) in text.lines().enumerate() {
            lines = row + 1;
            let top = y + row as f32 * self.line_height();
            for (col, c) in line.chars().enumerate() {
                if c == ' ' {
                    continue;
                }
                let (ox, oy) = font::cell_origin(font::cell_of(c));
                let left = x + col as f32 * cw;
                self.quad(
                    [left, top],
                    [left + cw, top + ch],
                    [ox as f32 / aw, oy as f32 / ah],
                    [(ox + font::CELL_WIDTH) as f32 / aw, (oy + font::CELL_HEIGHT) as f32 / ah],
                    color,
                );
            }
        }
        lines as f32 * self.line_height()
    }

    /// Text on a translucent panel with `pad` pixels of margin; returns the panel's size.
    pub fn panel(&mut self, x: f32, y: f32, text: &str, color: [f32; 4], pad: f32) -> (f32, f32) {
        let w = self.text_width(text) + 2.0 * pad;
        let h = text.lines().count() as f32 * self.line_height() + 2.0 * pad;
        self.rect(x, y, w, h, color::PANEL);
        self.text(x + pad, y + pad, text, color);
        (w, h)
    }
}

/// The mouse as the UI sees it this frame.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Mouse {
    /// Position in pixels from the top left.
    pub x: f32,
    /// Position in pixels from the top left.
    pub y: f32,
    /// The left button is held.
    pub down: bool,
}

/// A rectangle in pixels.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rect {
    /// Left.
    pub x: f32,
    /// Top.
    pub y: f32,
    /// Width.
    pub w: f32,
    /// Height.
    pub h: f32,
}

impl Rect {
    /// Whether `(x, y)` is inside.
    #[must_use]
    pub fn contains(&self, x: f32, y: f32) -> bool {
        x >= self.x && x < self.x + self.w && y >= self.y && y < self.y + self.h
    }
}

/// Immediate-mode widgets. Widgets register their rectangles while drawing; a press is
/// matched against the rectangles of the previous frame ([`Ui::press`]), so the caller knows
/// at once whether the press belongs to the UI or to the camera.
#[derive(Debug, Clone, Default)]
pub struct Ui {
    rects: Vec<(u32, Rect)>,
    next: Vec<(u32, Rect)>,
    active: Option<u32>,
    clicked: Option<u32>,
}

impl Ui {
    /// A left-button press at `(x, y)`; returns whether a widget took it.
    pub fn press(&mut self, x: f32, y: f32) -> bool {
        let hit = self.rects.iter().find(|(_, r)| r.contains(x, y)).map(|(id, _)| *id);
        self.active = hit;
        self.clicked = hit;
        hit.is_some()
    }

    /// The left button was released.
    pub fn release(&mut self) {
        self.active = None;
    }

    /// Whether a widget holds the mouse (a slider being dragged).
    #[must_use]
    pub fn captured(&self) -> bool {
        self.active.is_some()
    }

    /// Ends the frame: the rectangles registered become the ones presses are matched with.
    pub fn end_frame(&mut self) {
        self.rects = std::mem::take(&mut self.next);
        self.clicked = None;
    }

    /// A horizontal slider `w` pixels wide at `(x, y)` with a label above; dragging sets
    /// `value` within `range`. Returns whether the value changed.
    #[allow(clippy::too_many_arguments)]
    pub fn slider(
        &mut self,
        hud: &mut Hud,
        mouse: &Mouse,
        id: u32,
        x: f32,
        y: f32,
        w: f32,
        label: &str,
        value: &mut f32,
        range: (f32, f32),
    ) -> bool {
        let lh = hud.line_height();
        hud.text(x, y, label, color::TEXT);
        let track = Rect { x, y: y + lh, w, h: lh * 0.8 };
        self.next.push((id, track));
        let span = range.1 - range.0;
        let mut changed = false;
        if self.active == Some(id) && mouse.down && span > 0.0 {
            let v = range.0 + ((mouse.x - track.x) / track.w).clamp(0.0, 1.0) * span;
            changed = v != *value;
            *value = v;
        }
        let f = if span > 0.0 { ((*value - range.0) / span).clamp(0.0, 1.0) } else { 0.0 };
        hud.rect(track.x, track.y + track.h * 0.4, track.w, track.h * 0.2, color::TRACK);
        let knob = track.h * 0.6;
        let kc = if self.active == Some(id) { color::ACCENT } else { color::TEXT };
        hud.rect(track.x + f * track.w - knob * 0.5, track.y + track.h * 0.2, knob, track.h * 0.6, kc);
        changed
    }

    /// A checkbox with a label at `(x, y)`; a click flips `value`. Returns whether it changed.
    pub fn toggle(&mut self, hud: &mut Hud, id: u32, x: f32, y: f32, label: &str, value: &mut bool) -> bool {
        let lh = hud.line_height();
        let bx = lh * 0.8;
        let r = Rect { x, y, w: bx + hud.text_width(label) + lh * 0.5, h: lh };
        self.next.push((id, r));
        let changed = self.clicked == Some(id);
        if changed {
            *value = !*value;
            self.clicked = None;
        }
        hud.rect(x, y, bx, bx, color::TRACK);
        if *value {
            hud.rect(x + bx * 0.2, y + bx * 0.2, bx * 0.6, bx * 0.6, color::ACCENT);
        }
        hud.text(
            x + bx + lh * 0.4,
            y + (bx - font::CELL_HEIGHT as f32 * hud.scale) * 0.5 + hud.scale,
            label,
            color::TEXT,
        );
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_makes_two_triangles_per_visible_glyph() {
        let mut h = Hud::new(2.0);
        let used = h.text(10.0, 20.0, "ab c\nd", color::TEXT);
        assert_eq!(h.vertices.len(), 4 * 6);
        assert_eq!(used, 2.0 * h.line_height());
        // 'd' starts the second line at x = 10.
        let d = &h.vertices[18..24];
        assert_eq!(d[0].pos, [10.0, 20.0 + h.line_height()]);
        assert_eq!(h.text_width("ab c\nd"), 4.0 * 6.0 * 2.0);
    }

    #[test]
    fn slider_follows_a_drag_that_started_on_it() {
        let mut ui = Ui::default();
        let mut h = Hud::new(1.0);
        let mut v = 0.0;
        let m = Mouse { x: 0.0, y: 0.0, down: false };
        ui.slider(&mut h, &m, 1, 0.0, 0.0, 100.0, "s", &mut v, (0.0, 2.0));
        ui.end_frame();
        // A press on the track (below the label) captures the mouse.
        let ty = h.line_height() + 1.0;
        assert!(!ui.press(50.0, 500.0));
        assert!(ui.press(50.0, ty));
        assert!(ui.captured());
        let m = Mouse { x: 75.0, y: 300.0, down: true };
        assert!(ui.slider(&mut h, &m, 1, 0.0, 0.0, 100.0, "s", &mut v, (0.0, 2.0)));
        assert!((v - 1.5).abs() < 1e-6);
        ui.release();
        ui.end_frame();
        let m = Mouse { x: 10.0, y: 300.0, down: true };
        assert!(!ui.slider(&mut h, &m, 1, 0.0, 0.0, 100.0, "s", &mut v, (0.0, 2.0)));
        assert!((v - 1.5).abs() < 1e-6);
    }

    #[test]
    fn toggle_flips_once_per_click() {
        let mut ui = Ui::default();
        let mut h = Hud::new(1.0);
        let mut b = false;
        ui.toggle(&mut h, 7, 0.0, 0.0, "bones", &mut b);
        ui.end_frame();
        assert!(ui.press(2.0, 2.0));
        assert!(ui.toggle(&mut h, 7, 0.0, 0.0, "bones", &mut b));
        assert!(b);
        assert!(!ui.toggle(&mut h, 7, 0.0, 0.0, "bones", &mut b));
        assert!(b);
    }
}
