//! The HUD's layout: what the demo shows over the frame and where (status, messages, help, the
//! scene's tentacle controls, the viewer's clip list and timeline, or with a graph its state and
//! parameter list), batched into a [`Hud`].
//!
//! Panels are placed from the window size ([`place`]): the header at the top left (its lines cut
//! with `…` to the window's width), the controls or the clip list at the top right (below the
//! header when both do not fit side by side), and from the bottom up the status line, the last
//! message, the timeline and the help; a bottom panel that would reach a top one is left out.
//! Glyphs are drawn twice their size on large windows unless that would leave a panel out.
//! From [`MIN_WINDOW`] up no two panels overlap.

use super::app::App;
use super::font;
use super::gl::GlInfo;
use super::hud::{color, Hud, Rect};
use super::viewer::{loop_mode_name, PaletteSizes};
use crate::scene::{IDLE, RUN, TENTACLE_AMPLITUDE_RANGE, TENTACLE_SPEED_RANGE, WALK, WAVE};
use sinew_offline::model::Skinning;

/// How long a message stays on the HUD, in seconds.
const MESSAGE_SECONDS: f32 = 8.0;

/// The smallest window the demo opens (and lets the user resize to): from here up the HUD's
/// panels never overlap.
pub const MIN_WINDOW: (u32, u32) = (480, 360);

/// Space between the window's edge and the panels, and between panels, in pixels.
const MARGIN: f32 = 8.0;
/// Space between stacked panels, in pixels.
const GAP: f32 = 4.0;
/// Columns of the tentacle's control panel.
const CONTROL_COLUMNS: f32 = 26.0;
/// Lines of the tentacle's control panel (two sliders, two toggles).
const CONTROL_LINES: f32 = 7.4;
/// Longest clip name shown in the viewer's clip list, in characters.
const CLIP_NAME_CHARS: usize = 24;

/// The size of every panel, in pixels, before placing: the header, the top-right panel (if
/// any), and the bottom panels from the bottom up.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Sizes {
    pub(super) header: (f32, f32),
    pub(super) top_right: Option<(f32, f32)>,
    pub(super) bottom: Vec<(f32, f32)>,
}

/// Where the panels of [`Sizes`] go; a bottom panel is `None` when it does not fit.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Placed {
    pub(super) header: Rect,
    pub(super) top_right: Option<Rect>,
    pub(super) bottom: Vec<Option<Rect>>,
}

#[cfg(test)]
impl Placed {
    /// Every placed panel.
    pub(super) fn rects(&self) -> impl Iterator<Item = Rect> + '_ {
        std::iter::once(self.header).chain(self.top_right).chain(self.bottom.iter().flatten().copied())
    }
}

/// Whether two rectangles share any area.
pub(super) fn overlap(a: &Rect, b: &Rect) -> bool {
    a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
}

/// Places the panels of `sizes` in a `w × h` window (see the module docs).
pub(super) fn place(w: f32, h: f32, sizes: &Sizes) -> Placed {
    let header = Rect { x: MARGIN, y: MARGIN, w: sizes.header.0, h: sizes.header.1 };
    let top_right = sizes.top_right.map(|(pw, ph)| {
        let x = (w - MARGIN - pw).max(MARGIN);
        let beside = x >= header.x + header.w + MARGIN;
        Rect { x, y: if beside { MARGIN } else { header.y + header.h + GAP }, w: pw, h: ph }
    });
    let mut bottom = Vec::with_capacity(sizes.bottom.len());
    let mut y = h - MARGIN;
    let mut room = true;
    for &(pw, ph) in &sizes.bottom {
        let r = Rect { x: MARGIN, y: y - ph, w: pw, h: ph };
        room = room && r.y >= 0.0 && !overlap(&r, &header) && top_right.is_none_or(|t| !overlap(&r, &t));
        if room {
            bottom.push(Some(r));
            y = r.y - GAP;
        } else {
            bottom.push(None);
        }
    }
    Placed { header, top_right, bottom }
}

/// `text` with every line cut to at most `columns` characters, a cut line ending in `…`.
pub(super) fn fit_lines(text: &str, columns: usize) -> String {
    let fit = |line: &str| -> String {
        if line.chars().count() <= columns {
            line.to_owned()
        } else {
            let mut cut: String = line.chars().take(columns.saturating_sub(1)).collect();
            cut.push('…');
            cut
        }
    };
    text.lines().map(fit).collect::<Vec<_>>().join("\n")
}

/// What the HUD shows, as text: the header, the top-right panel (the scene's controls or the
/// viewer's clip list), the status line, the message, whether a timeline is shown, and the
/// help.
#[derive(Debug, Clone)]
pub(super) struct Content {
    pub(super) header: String,
    pub(super) top_right: TopRight,
    pub(super) status: String,
    pub(super) message: Option<String>,
    pub(super) timeline: bool,
    pub(super) help: Option<&'static str>,
}

/// The top-right panel.
#[derive(Debug, Clone)]
pub(super) enum TopRight {
    /// The tentacle's sliders and toggles.
    Controls,
    /// The viewer's clip list, one line per clip, and the line of the clip playing: as many
    /// lines around it as fit are shown.
    Clips(Vec<String>, usize),
}

/// Content laid out: the glyph scale, the header cut to the window, and the panels' places
/// (bottom panels in the order status, message, timeline, help, each `None` when absent or
/// left out).
#[derive(Debug, Clone)]
pub(super) struct Layout {
    pub(super) scale: f32,
    pub(super) header: String,
    /// The lines of the clip list that are shown, cut to the window.
    pub(super) clips: Option<String>,
    pub(super) placed: Placed,
    pub(super) status: Option<Rect>,
    pub(super) message: Option<Rect>,
    pub(super) timeline: Option<Rect>,
    pub(super) help: Option<Rect>,
}

/// Lays `content` out in a `w × h` window: at twice the glyph size on windows of at least
/// 1000 × 600 when everything fits so, otherwise at the glyphs' size.
pub(super) fn layout(content: &Content, w: f32, h: f32) -> Layout {
    let large = w >= 1000.0 && h >= 600.0;
    let first = layout_at(content, w, h, if large { 2.0 } else { 1.0 });
    let complete = first.status.is_some()
        && first.message.is_some() == content.message.is_some()
        && first.timeline.is_some() == content.timeline
        && first.help.is_some() == content.help.is_some();
    if large && !complete {
        layout_at(content, w, h, 1.0)
    } else {
        first
    }
}

fn layout_at(content: &Content, w: f32, h: f32, scale: f32) -> Layout {
    let hud = Hud::new(scale);
    let (lh, pad) = (hud.line_height(), 3.0 * scale);
    let cw = font::CELL_WIDTH as f32 * scale;
    let columns = (((w - 2.0 * MARGIN - 2.0 * pad) / cw).floor() as usize).max(1);
    let panel = |text: &str| (hud.text_width(text) + 2.0 * pad, text.lines().count() as f32 * lh + 2.0 * pad);
    let header = fit_lines(&content.header, columns);
    let status = fit_lines(&content.status, columns);
    // The clip list: at most 45 % of the window's height, and above the status line and the
    // timeline, whose places are kept.
    let header_size = panel(&header);
    let mut clips = None;
    let top_right = match &content.top_right {
        TopRight::Controls => Some((CONTROL_COLUMNS * cw, lh * CONTROL_LINES + 2.0 * pad)),
        TopRight::Clips(list, current) if !list.is_empty() => {
            let widest = list.iter().map(|l| l.chars().count()).max().unwrap_or(1).min(columns);
            let beside = w - 2.0 * MARGIN - (widest as f32 * cw + 2.0 * pad) >= header_size.0 + MARGIN;
            let top = if beside { MARGIN } else { MARGIN + header_size.1 + GAP };
            let kept = panel(&status).1 + GAP + if content.timeline { 2.0 * lh + 2.0 * pad + GAP } else { 0.0 };
            let room = ((h - MARGIN - kept - top - 2.0 * pad) / lh).floor().min((h * 0.45 / lh).floor());
            let shown = (room.max(1.0) as usize).min(list.len());
            let first = current.saturating_sub(shown / 2).min(list.len() - shown);
            let text = fit_lines(&list[first..first + shown].join("\n"), columns);
            let size = panel(&text);
            clips = Some(text);
            Some(size)
        }
        _ => None,
    };
    let mut bottom = vec![panel(&status)];
    let message = content.message.as_deref().map(|m| fit_lines(m, columns));
    if let Some(m) = &message {
        bottom.push(panel(m));
    }
    if content.timeline {
        bottom.push(((w - 2.0 * MARGIN).max(10.0), 2.0 * lh + 2.0 * pad));
    }
    if let Some(help) = content.help {
        bottom.push(panel(&fit_lines(help, columns)));
    }
    let placed = place(w, h, &Sizes { header: header_size, top_right, bottom });
    let mut slots = placed.bottom.iter().copied();
    let status = slots.next().flatten();
    let message = message.and_then(|_| slots.next().flatten());
    let timeline = if content.timeline { slots.next().flatten() } else { None };
    let help = content.help.and_then(|_| slots.next().flatten());
    Layout { scale, header, clips, placed, status, message, timeline, help }
}

/// The help of the crowd mode.
const CROWD_HELP: &str = "Space play/pause   Up/Down speed   F frame the crowd\n\
     drag orbit   wheel zoom   right-drag pan   H help\n\
     F12 screenshot   Backspace back to the scene   Esc quit";

/// The help of the scene (`viewer` false), of the model viewer, of the viewer driven by a
/// graph (`graph`), or of the viewer playing a retarget source's clips (`retarget`).
fn help_text(viewer: bool, graph: bool, retarget: bool) -> &'static str {
    if viewer && graph {
        "Tab/Shift+Tab or 1-9 select a parameter\n\
         Up/Down change it by 0.1 (Shift 1.0)\n\
         Space/Enter flip a bool, fire a trigger\n\
         P pause   B bones   D LBS/DQS   F frame   H help\n\
         drag orbit   wheel zoom   right-drag pan\n\
         Backspace back to the scene   F12 screenshot   Esc quit"
    } else if viewer && retarget {
        "Space play/pause   Left/Right scrub   Up/Down speed\n\
         [ ] or 1-9 clip   L loop mode   C crossfade\n\
         Tab blend clip   -/= blend weight   Y up axis\n\
         S source   B bones   D LBS/DQS   F frame   H help\n\
         K springs   O colliders   Shift+drag move model\n\
         drag orbit   wheel zoom   right-drag pan\n\
         Backspace back to the scene   F12 screenshot   Esc quit"
    } else if viewer {
        "Space play/pause   Left/Right scrub   Up/Down speed\n\
         [ ] or 1-9 clip   L loop mode   C crossfade\n\
         Tab blend clip   -/= blend weight   Y up axis\n\
         B bones   D LBS/DQS   F frame   H help\n\
         K springs   O colliders   Shift+drag move model\n\
         drag orbit   wheel zoom   right-drag pan\n\
         Backspace back to the scene   F12 screenshot   Esc quit"
    } else {
        "Space pause   Left/Right seek   D LBS/DQS   Esc quit\n\
         B bones   R reset view   H help   F12 screenshot\n\
         G foot placement on the terrain\n\
         drag orbit   wheel zoom   right-drag pan\n\
         the character looks at the mouse cursor\n\
         drop a .glb .gltf .md5mesh .sinew to view it"
    }
}

/// The viewer's spring line: on or off, joints, and the last update's contacts and steps (or
/// its reset), the colliders drawn or not, and where the model was moved to.
fn spring_line(v: &super::viewer::Viewer) -> String {
    let frame = v.spring_frame().unwrap_or_default();
    let last =
        if frame.reset { "at rest".to_owned() } else { format!("{} contacts  {} steps", frame.contacts, frame.steps) };
    let p = v.placement();
    format!(
        "springs {} (K)  {} joints  {last}  colliders {} (O){}",
        if v.springs_enabled() { "on" } else { "off" },
        v.spring_joints(),
        if v.show_colliders { "shown" } else { "hidden" },
        if p == sinew::math::Vec3::ZERO { String::new() } else { format!("  moved {:.2} {:.2}", p.x, p.z) },
    )
}

/// One line of the viewer's clip list: the mark (`>` playing, `+` blended), the number and the
/// name, cut to [`CLIP_NAME_CHARS`] with `…`.
fn clip_line(mark: char, index: usize, name: &str) -> String {
    format!("{mark}{:>3} {}", index + 1, fit_lines(name, CLIP_NAME_CHARS))
}

impl App {
    /// What the HUD shows this frame, as text (see [`Content`]).
    fn hud_content(&self, info: &GlInfo, palette: PaletteSizes) -> Content {
        let skin_name = match self.skinning() {
            Skinning::Lbs => "LBS",
            Skinning::Dqs => "DQS",
        };
        let fps = if self.stats.frame_ms > 0.0 { 1000.0 / self.stats.frame_ms } else { 0.0 };
        let palette = if palette.rigid == palette.scaled {
            format!("palette {} joints", palette.scaled)
        } else {
            format!("palette {} joints ({} with scale)", palette.rigid, palette.scaled)
        };
        let status = format!(
            "frame {:.2} ms ({fps:.0} fps)  cpu {:.2} ms  {palette}\n{} - {}",
            self.stats.frame_ms, self.stats.cpu_ms, info.version, info.renderer
        );
        let message =
            self.message.as_ref().filter(|m| m.at.elapsed().as_secs_f32() < MESSAGE_SECONDS).map(|m| m.text.clone());
        let graph = self.viewer.as_ref().is_some_and(|(v, _)| v.graph.is_some());
        let retarget = self.viewer.as_ref().is_some_and(|(v, _)| v.retarget.is_some());
        let help = self.help.then(|| help_text(self.viewer.is_some(), graph, retarget));
        if let (Some(c), Some((v, _))) = (&self.crowd, &self.viewer) {
            let header = format!(
                "{}\n{} x{}  x{:.2}  {}\ndrawn {}",
                c.hud_line(),
                v.model.name,
                c.len(),
                v.speed(),
                if v.is_playing() { "playing" } else { "paused" },
                c.how
            );
            let help = self.help.then_some(CROWD_HELP);
            return Content {
                header,
                top_right: TopRight::Clips(Vec::new(), 0),
                status,
                message,
                timeline: false,
                help,
            };
        }
        let Some((v, _)) = &self.viewer else {
            let mut header = format!(
                "sinew demo: built-in scene   {skin_name}   t {:.1} s{}\n",
                self.time,
                if self.paused { "   [paused]" } else { "" },
            );
            match self.scene.character(self.time) {
                Ok(c) => header.push_str(&format!(
                    "graph: {}{}   wave layer: {}   speed {:.1}\n\
                     character  idle {:.2}  walk {:.2}  run {:.2}  wave {:.2}\n\
                     speed {:.1} m/s   distance {:.1} m   looking at the {} ({:.0}%)\n\
                     foot placement {} (G)   weight {:.2}",
                    c.state,
                    c.transition.map_or(String::new(), |(from, to, p)| format!(" ({from} -> {to} {:.0}%)", p * 100.0)),
                    c.wave_state,
                    c.speed_parameter,
                    c.slots[IDLE].weight,
                    c.slots[WALK].weight,
                    c.slots[RUN].weight,
                    c.slots[WAVE].weight,
                    c.speed,
                    c.distance,
                    if self.scene.params.look_ray.is_some() { "mouse" } else { "marker" },
                    c.look_weight * 100.0,
                    if c.foot_placement_on { "on" } else { "off" },
                    c.foot_placement,
                )),
                Err(e) => header.push_str(&format!("character: {e}")),
            }
            return Content { header, top_right: TopRight::Controls, status, message, timeline: false, help };
        };
        let m = &v.model;
        let mut header = format!(
            "{}   {} joints  {} meshes  {skin_name}{}\n",
            m.name,
            m.skeleton().num_joints(),
            m.asset().num_meshes(),
            if v.z_up { "  Z-up" } else { "" }
        );
        if let Some(d) = &v.retarget {
            header.push_str(&format!(
                "retargeted from {} ({} joints){}\n",
                d.source.name,
                d.source.skeleton().num_joints(),
                if d.show_source { ", shown on the left" } else { "" }
            ));
        }
        if let Some(g) = &v.graph {
            header.push_str(&format!(
                "graph '{}'  t {:.2} s  {}\n{}",
                g.name(),
                g.time(),
                if v.is_playing() { "playing" } else { "paused" },
                g.state_line()
            ));
            let list: Vec<String> = g
                .parameters()
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let mark = if i == g.selected() { '>' } else { ' ' };
                    // The name is cut, never the value.
                    format!("{mark}{:>3} {} = {} ({})", i + 1, fit_lines(&p.name, CLIP_NAME_CHARS), p.value, p.kind)
                })
                .collect();
            let top_right = TopRight::Clips(list, g.selected());
            return Content { header, top_right, status, message, timeline: false, help };
        }
        match v.primary() {
            Some((clip, time)) => {
                let (s, e) = v.clip_range(clip);
                header.push_str(&format!(
                    "clip {}/{} '{}'\n{:.2} / {:.2} s  x{:.2}  {}  {}\n",
                    clip + 1,
                    v.num_clips(),
                    v.clip_name(clip),
                    time - s,
                    e - s,
                    v.speed(),
                    loop_mode_name(v.loop_mode()),
                    if v.is_playing() { "playing" } else { "paused" }
                ));
            }
            None => header.push_str("no clips: rest pose\n"),
        }
        match v.secondary() {
            Some(sec) => header.push_str(&format!(
                "blend '{}' {:.0}%{}",
                v.clip_name(sec),
                v.weight() * 100.0,
                if v.is_fading() { "  crossfading" } else { "" }
            )),
            None => header.push_str("blend: none"),
        }
        if v.has_springs() {
            header.push('\n');
            header.push_str(&spring_line(v));
        }
        let n = v.num_clips();
        let list: Vec<String> = (0..n)
            .map(|i| {
                let mark = if v.primary().is_some_and(|(clip, _)| clip == i) {
                    '>'
                } else if v.secondary() == Some(i) {
                    '+'
                } else {
                    ' '
                };
                clip_line(mark, i, &v.clip_name(i))
            })
            .collect();
        let top_right = TopRight::Clips(list, v.primary().map_or(0, |(clip, _)| clip));
        Content { header, top_right, status, message, timeline: v.primary().is_some(), help }
    }

    /// The HUD of a `w × h` frame: the labels at their projected positions `labels`, then the
    /// panels of [`Self::hud_content`] where [`layout`] puts them, with their widgets (tentacle
    /// sliders and toggles; clip list and timeline).
    pub(super) fn build_hud(
        &mut self,
        info: &GlInfo,
        palette: PaletteSizes,
        w: f32,
        h: f32,
        labels: &[((f32, f32), String)],
    ) -> Hud {
        let content = self.hud_content(info, palette);
        let l = layout(&content, w, h);
        let mut hud = Hud::new(l.scale);
        let lh = hud.line_height();
        let pad = 3.0 * hud.scale;
        for ((x, y), text) in labels {
            let tw = hud.text_width(text);
            hud.panel(x - tw * 0.5 - pad, y - lh * 0.5 - pad, text, color::ACCENT, pad);
        }
        let cell = font::CELL_WIDTH as f32 * l.scale;
        let columns = |r: &Rect| (((r.w - 2.0 * pad) / cell).round() as usize).max(1);
        if let Some(r) = l.status {
            hud.panel(r.x, r.y, &fit_lines(&content.status, columns(&r)), color::DIM, pad);
        }
        if let (Some(r), Some(m)) = (l.message, &self.message) {
            hud.panel(
                r.x,
                r.y,
                &fit_lines(&m.text, columns(&r)),
                if m.error { color::ERROR } else { color::ACCENT },
                pad,
            );
        }
        hud.panel(l.placed.header.x, l.placed.header.y, &l.header, color::TEXT, pad);
        match (&content.top_right, l.placed.top_right) {
            (TopRight::Controls, Some(r)) => {
                hud.rect(r.x, r.y, r.w, r.h, color::PANEL);
                let (x0, mut y) = (r.x + pad, r.y + pad);
                let sw = r.w - 2.0 * pad;
                let mouse = self.mouse;
                let p = &mut self.scene.params;
                let label = format!("tentacle speed {:.2} Hz", p.tentacle_speed);
                self.ui.slider(&mut hud, &mouse, 1, x0, y, sw, &label, &mut p.tentacle_speed, TENTACLE_SPEED_RANGE);
                y += lh * 2.0;
                let label = format!("amplitude {:.0} deg", p.tentacle_amplitude.to_degrees());
                self.ui.slider(
                    &mut hud,
                    &mouse,
                    2,
                    x0,
                    y,
                    sw,
                    &label,
                    &mut p.tentacle_amplitude,
                    TENTACLE_AMPLITUDE_RANGE,
                );
                y += lh * 2.2;
                self.ui.toggle(&mut hud, 3, x0, y, "show bones (B)", &mut p.show_bones);
                y += lh * 1.2;
                let mut dqs = p.skinning == Skinning::Dqs;
                if self.ui.toggle(&mut hud, 4, x0, y, "dual quaternions (D)", &mut dqs) {
                    p.skinning = if dqs { Skinning::Dqs } else { Skinning::Lbs };
                }
            }
            (TopRight::Clips(..), Some(r)) => {
                if let Some(list) = &l.clips {
                    hud.panel(r.x, r.y, list, color::DIM, pad);
                }
            }
            _ => {}
        }
        // Timeline: drag to scrub.
        if let (Some(r), Some((v, _))) = (l.timeline, self.viewer.as_ref()) {
            if let Some((clip, time)) = v.primary() {
                let (s, e) = v.clip_range(clip);
                let mouse = self.mouse;
                let mut t = time;
                hud.rect(r.x, r.y, r.w, r.h, color::PANEL);
                if self.ui.slider(
                    &mut hud,
                    &mouse,
                    10,
                    r.x + pad,
                    r.y + pad,
                    r.w - 2.0 * pad,
                    "timeline",
                    &mut t,
                    (s, e),
                ) {
                    if let Some((v, _)) = self.viewer.as_mut() {
                        v.seek_primary(t);
                    }
                }
            }
        }
        if let (Some(r), Some(help)) = (l.help, content.help) {
            hud.panel(r.x, r.y, &fit_lines(help, columns(&r)), color::DIM, pad);
        }
        self.ui.end_frame();
        hud
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The longest texts the HUD shows: long model, clip and renderer names, a long message.
    fn worst(viewer: bool, message: bool) -> Content {
        let long = "a_model_exported_with_a_very_long_name_from_a_digital_content_creation_tool_v2";
        let header = if viewer {
            format!(
                "{long}   1024 joints  64 meshes  DQS  Z-up\nclip 12/40 '{long}'\n\
                 123.45 / 600.00 s  x2.00  ping-pong  playing\nblend '{long}' 100%  crossfading\n\
                 springs off (K)  1024 joints  1024 contacts  4 steps  colliders hidden (O)  moved -123.45 678.90"
            )
        } else {
            "sinew demo: built-in scene   DQS   t 1234.5 s   [paused]\n\
             graph: locomotion (locomotion -> idle 100%)   wave layer: wave   speed 10.0\n\
             character  idle 1.00  walk 1.00  run 1.00  wave 1.00\n\
             speed 10.0 m/s   distance 1000.0 m   looking at the marker (100%)\n\
             foot placement off (G)   weight 1.00"
                .to_owned()
        };
        let top_right = if viewer {
            TopRight::Clips((0..40).map(|i| clip_line(if i == 11 { '>' } else { ' ' }, i, long)).collect(), 11)
        } else {
            TopRight::Controls
        };
        Content {
            header,
            top_right,
            status: format!(
                "frame 1234.56 ms (1 fps)  cpu 1234.56 ms  palette 256 joints\n\
                 OpenGL ES 3.2 Mesa 24.2.8-1~bpo12+1 - llvmpipe (LLVM 19.1.7, 256 bits) {long}"
            ),
            message: message.then(|| format!("cannot load /home/user/models/{long}.glb: {long}")),
            timeline: viewer,
            help: Some(help_text(viewer, false, false)),
        }
    }

    fn sizes() -> Vec<(f32, f32)> {
        let (w, h) = (MIN_WINDOW.0 as f32, MIN_WINDOW.1 as f32);
        vec![
            (w, h),
            (640.0, 360.0),
            (800.0, 450.0),
            (1024.0, 640.0),
            (1280.0, 720.0),
            (1366.0, 768.0),
            (1920.0, 1080.0),
        ]
    }

    /// From the smallest window up, with the longest texts, no two panels overlap, every panel
    /// is inside the window, and the status line and the timeline are always shown.
    #[test]
    fn panels_never_overlap() {
        for (w, h) in sizes() {
            for viewer in [false, true] {
                for message in [false, true] {
                    let mut content = worst(viewer, message);
                    if viewer && message {
                        // The graph's help instead of the clips'.
                        content.help = Some(help_text(true, true, false));
                    }
                    let l = layout(&content, w, h);
                    let rects: Vec<Rect> = l.placed.rects().collect();
                    for (i, a) in rects.iter().enumerate() {
                        assert!(
                            a.x >= 0.0 && a.y >= 0.0 && a.x + a.w <= w && a.y + a.h <= h,
                            "{w}×{h} viewer {viewer}: panel {i} {a:?} leaves the window"
                        );
                        for (j, b) in rects.iter().enumerate().skip(i + 1) {
                            assert!(!overlap(a, b), "{w}×{h} viewer {viewer}: panels {i} {a:?} and {j} {b:?} overlap");
                        }
                    }
                    assert!(l.status.is_some(), "{w}×{h}: status");
                    assert!(!viewer || l.clips.as_deref().is_some_and(|c| c.contains('>')), "{w}×{h}: clip playing");
                    assert_eq!(l.timeline.is_some(), viewer, "{w}×{h}: timeline");
                }
            }
        }
    }

    /// At 1024 × 640 the scene's header and controls both show, side by side or stacked, and so
    /// does the help; at 1280 × 720 the glyphs are drawn at twice their size.
    #[test]
    fn common_sizes_show_everything() {
        let l = layout(&worst(false, true), 1024.0, 640.0);
        assert!(l.placed.top_right.is_some() && l.help.is_some() && l.message.is_some());
        let l = layout(&worst(false, false), 1280.0, 720.0);
        assert_eq!(l.scale, 2.0);
        assert!(l.help.is_some());
    }

    #[test]
    fn long_lines_are_cut_with_a_mark() {
        assert_eq!(fit_lines("abcdef\nab", 4), "abc…\nab");
        assert_eq!(fit_lines("abcd", 4), "abcd");
        assert_eq!(clip_line('>', 0, &"x".repeat(40)), format!(">  1 {}…", "x".repeat(CLIP_NAME_CHARS - 1)));
        let l = layout(&worst(true, false), MIN_WINDOW.0 as f32, MIN_WINDOW.1 as f32);
        let columns = ((MIN_WINDOW.0 as f32 - 2.0 * MARGIN - 6.0) / font::CELL_WIDTH as f32) as usize;
        assert!(l.header.lines().all(|line| line.chars().count() <= columns));
        assert!(l.header.contains('…'));
    }
}
