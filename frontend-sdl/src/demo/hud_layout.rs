//! The HUD's layout: what the demo shows over the frame and where (status, messages, help, the
//! scene's tentacle controls, the viewer's clip list and timeline), batched into a [`Hud`].

use super::app::App;
use super::font;
use super::gl::GlInfo;
use super::hud::{color, Hud};
use super::viewer::loop_mode_name;
use crate::scene::{IDLE, RUN, TENTACLE_AMPLITUDE_RANGE, TENTACLE_SPEED_RANGE, WALK, WAVE};
use sinew_pipeline::model::Skinning;

/// How long a message stays on the HUD, in seconds.
const MESSAGE_SECONDS: f32 = 8.0;

impl App {
    /// The HUD of a `w × h` frame: the labels at their projected positions `labels`, the
    /// status line (frame times, context), the last message, the scene's or viewer's panel
    /// with its widgets (tentacle sliders and toggles; clip list and timeline), and the help.
    pub(super) fn build_hud(
        &mut self,
        info: &GlInfo,
        palette: usize,
        w: f32,
        h: f32,
        labels: &[((f32, f32), String)],
    ) -> Hud {
        let mut hud = Hud::new(if h >= 600.0 && w >= 1000.0 { 2.0 } else { 1.0 });
        let lh = hud.line_height();
        let pad = 3.0 * hud.scale;
        let margin = 8.0;
        for ((x, y), text) in labels {
            let tw = hud.text_width(text);
            hud.panel(x - tw * 0.5 - pad, y - lh * 0.5 - pad, text, color::ACCENT, pad);
        }
        let skin_name = match self.skinning() {
            Skinning::Lbs => "LBS",
            Skinning::Dqs => "DQS",
        };
        // Bottom up: frame times and the context, a message, then help.
        let fps = if self.stats.frame_ms > 0.0 { 1000.0 / self.stats.frame_ms } else { 0.0 };
        let status = format!(
            "frame {:.2} ms ({fps:.0} fps)  cpu {:.2} ms  palette {palette} joints\n{} - {}",
            self.stats.frame_ms, self.stats.cpu_ms, info.version, info.renderer
        );
        let mut bottom = h - margin - 2.0 * lh - 2.0 * pad;
        hud.panel(margin, bottom, &status, color::DIM, pad);
        if let Some(m) = &self.message {
            if m.at.elapsed().as_secs_f32() < MESSAGE_SECONDS {
                bottom -= lh + 2.0 * pad + 4.0;
                hud.panel(margin, bottom, &m.text, if m.error { color::ERROR } else { color::ACCENT }, pad);
            }
        }
        let help = match self.viewer {
            None => {
                "Space pause   Left/Right seek   D LBS/DQS   Esc quit\n\
                 B bones   R reset view   H help   F12 screenshot\n\
                 drag orbit   wheel zoom   right-drag pan\n\
                 the character looks at the mouse cursor\n\
                 drop a .glb .gltf .md5mesh .sinew to view it"
            }
            Some(_) => {
                "Space play/pause   Left/Right scrub   Up/Down speed\n\
                 [ ] or 1-9 clip   L loop mode   C crossfade\n\
                 Tab blend clip   -/= blend weight   Y up axis\n\
                 B bones   D LBS/DQS   F frame   H help\n\
                 drag orbit   wheel zoom   right-drag pan\n\
                 Backspace back to the scene   F12 screenshot   Esc quit"
            }
        };
        match &self.viewer {
            None => {
                let mut text = format!(
                    "sinew demo: built-in scene   {skin_name}   t {:.1} s{}\n",
                    self.time,
                    if self.paused { "   [paused]" } else { "" },
                );
                match self.scene.character(self.time) {
                    Ok(c) => text.push_str(&format!(
                        "character  idle {:.2}  walk {:.2}  run {:.2}  wave {:.2}\n\
                         speed {:.1} m/s   distance {:.1} m   looking at the {} ({:.0}%)",
                        c.slots[IDLE].weight,
                        c.slots[WALK].weight,
                        c.slots[RUN].weight,
                        c.slots[WAVE].weight,
                        c.speed,
                        c.distance,
                        if self.scene.params.look_ray.is_some() { "mouse" } else { "marker" },
                        c.look_weight * 100.0
                    )),
                    Err(e) => text.push_str(&format!("character: {e}")),
                }
                hud.panel(margin, margin, &text, color::TEXT, pad);
                // Tentacle controls, top right.
                let pw = 26.0 * font::CELL_WIDTH as f32 * hud.scale;
                let px = w - pw - margin;
                hud.rect(px, margin, pw, lh * 7.4 + 2.0 * pad, color::PANEL);
                let (x0, mut y) = (px + pad, margin + pad);
                let sw = pw - 2.0 * pad;
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
            Some((v, _)) => {
                let m = &v.model;
                let mut text = format!(
                    "{}   {} joints  {} meshes  {skin_name}{}\n",
                    m.name,
                    m.skeleton().num_joints(),
                    m.asset().num_meshes(),
                    if v.z_up { "  Z-up" } else { "" }
                );
                match &v.primary {
                    Some(p) => {
                        let (s, e) = v.clip_range(p.clip);
                        text.push_str(&format!(
                            "clip {}/{} '{}'\n{:.2} / {:.2} s  x{:.2}  {}  {}\n",
                            p.clip + 1,
                            v.num_clips(),
                            v.clip_name(p.clip),
                            p.time() - s,
                            e - s,
                            v.speed(),
                            loop_mode_name(v.loop_mode()),
                            if v.playing { "playing" } else { "paused" }
                        ));
                    }
                    None => text.push_str("no clips: rest pose\n"),
                }
                match &v.secondary {
                    Some(sec) => text.push_str(&format!(
                        "blend '{}' {:.0}%{}",
                        v.clip_name(sec.clip),
                        v.weight * 100.0,
                        if v.fading { "  crossfading" } else { "" }
                    )),
                    None => text.push_str("blend: none"),
                }
                hud.panel(margin, margin, &text, color::TEXT, pad);
                let n = v.num_clips();
                if n > 0 {
                    let shown = n.min(((h * 0.45) / lh).max(1.0) as usize);
                    let first = v.primary.as_ref().map_or(0, |p| p.clip).saturating_sub(shown / 2).min(n - shown);
                    let list: Vec<String> = (first..first + shown)
                        .map(|i| {
                            let mark = if v.primary.as_ref().is_some_and(|p| p.clip == i) {
                                '>'
                            } else if v.secondary.as_ref().is_some_and(|p| p.clip == i) {
                                '+'
                            } else {
                                ' '
                            };
                            let name: String = v.clip_name(i).chars().take(24).collect();
                            format!("{mark}{:>3} {name}", i + 1)
                        })
                        .collect();
                    let list = list.join("\n");
                    let lw = hud.text_width(&list) + 2.0 * pad;
                    hud.panel(w - lw - margin, margin, &list, color::DIM, pad);
                }
                // Timeline: drag to scrub.
                if let Some((clip, time)) = v.primary.as_ref().map(|p| (p.clip, p.time())) {
                    let (s, e) = v.clip_range(clip);
                    let mouse = self.mouse;
                    let mut t = time;
                    let tw = (w - 2.0 * margin).max(10.0);
                    bottom -= 2.0 * lh + 2.0 * pad + 4.0;
                    hud.rect(margin, bottom, tw, 2.0 * lh + 2.0 * pad, color::PANEL);
                    let id = 10;
                    if self.ui.slider(
                        &mut hud,
                        &mouse,
                        id,
                        margin + pad,
                        bottom + pad,
                        tw - 2.0 * pad,
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
        }
        if self.help {
            let hh = help.lines().count() as f32 * lh + 2.0 * pad;
            hud.panel(margin, bottom - hh - 4.0, help, color::DIM, pad);
        }
        self.ui.end_frame();
        hud
    }
}
