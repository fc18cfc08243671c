//! The demo's input: keys (quit, skinning, bones, help, camera, screenshots; playback, spring
//! bones and their colliders in the viewer, or the graph's parameters while a graph drives the
//! model; time and the character's foot placement in the scene), mouse drags and the wheel for
//! the camera, a shift-drag moving the viewed model on the ground, the mouse over the HUD
//! widgets, and files dropped on the window.

use std::path::PathBuf;

use sdl2::event::{Event, WindowEvent};
use sdl2::keyboard::{Keycode, Mod};
use sdl2::mouse::MouseButton;
use sinew::math::Vec3;

use super::app::{App, Drag};
use super::gl::Renderer;
use super::graph_drive::FLOAT_STEP;
use crate::scene::Camera;

impl App {
    /// Handles a key; returns `true` to quit.
    fn key(&mut self, r: &Renderer, key: Keycode, keymod: Mod) -> bool {
        let shift = keymod.intersects(Mod::LSHIFTMOD | Mod::RSHIFTMOD);
        match key {
            Keycode::Escape | Keycode::Q => return true,
            Keycode::D => self.toggle_skinning(),
            Keycode::B => self.scene.params.show_bones = !self.scene.params.show_bones,
            Keycode::H => self.help = !self.help,
            Keycode::R | Keycode::F => self.reset_camera(),
            Keycode::Backspace => self.close_model(r),
            Keycode::F12 => self.snapshot = true,
            _ => {}
        }
        match self.viewer.as_mut() {
            Some((v, _)) if v.graph.is_some() && key == Keycode::P => v.set_playing(!v.is_playing()),
            Some((v, _)) if v.graph.is_some() => {
                let Some(g) = v.graph.as_mut() else { return false };
                let step = if shift { 10.0 * FLOAT_STEP } else { FLOAT_STEP };
                match key {
                    Keycode::Space | Keycode::Return => g.toggle(),
                    Keycode::Tab => g.select_by(if shift { -1 } else { 1 }),
                    Keycode::Up => g.nudge(step),
                    Keycode::Down => g.nudge(-step),
                    k => {
                        let digit = i32::from(k) - i32::from(Keycode::Num1);
                        if (0..9).contains(&digit) {
                            g.select(digit as usize);
                        }
                    }
                }
            }
            Some((v, _)) => match key {
                Keycode::Space => v.set_playing(!v.is_playing()),
                Keycode::Left => v.seek_by(if shift { -0.5 } else { -1.0 / 30.0 }),
                Keycode::Right => v.seek_by(if shift { 0.5 } else { 1.0 / 30.0 }),
                Keycode::Up => v.set_speed((v.speed() * 1.25).min(16.0)),
                Keycode::Down => v.set_speed((v.speed() / 1.25).max(1.0 / 16.0)),
                Keycode::LeftBracket | Keycode::PageUp => v.step_clip(-1),
                Keycode::RightBracket | Keycode::PageDown => v.step_clip(1),
                Keycode::C => v.crossfade(),
                Keycode::Tab => v.cycle_secondary(),
                Keycode::Minus | Keycode::KpMinus => v.nudge_weight(-0.1),
                Keycode::Equals | Keycode::Plus | Keycode::KpPlus => v.nudge_weight(0.1),
                Keycode::L => v.cycle_loop_mode(),
                Keycode::K => v.set_springs_enabled(!v.springs_enabled()),
                Keycode::O => v.show_colliders = !v.show_colliders,
                Keycode::S => {
                    if let Some(d) = v.retarget.as_mut() {
                        d.show_source = !d.show_source;
                    }
                }
                Keycode::Y => {
                    v.set_z_up(!v.z_up);
                    self.camera = Camera::framing(v.center, v.radius);
                }
                k => {
                    let digit = i32::from(k) - i32::from(Keycode::Num1);
                    if (0..9).contains(&digit) {
                        v.select(digit as usize);
                    }
                }
            },
            None => match key {
                Keycode::Space => self.paused = !self.paused,
                Keycode::Left => self.time = (self.time - if shift { 5.0 } else { 1.0 }).max(0.0),
                Keycode::Right => self.time += if shift { 5.0 } else { 1.0 },
                Keycode::G => self.scene.params.foot_placement.switch_at(self.time),
                _ => {}
            },
        }
        false
    }

    /// Handles one event; returns `true` to quit.
    pub(super) fn event(&mut self, r: &Renderer, e: Event) -> bool {
        match e {
            Event::Quit { .. } => return true,
            Event::KeyDown { keycode: Some(Keycode::LShift | Keycode::RShift), .. } => self.shift = true,
            Event::KeyUp { keycode: Some(Keycode::LShift | Keycode::RShift), .. } => self.shift = false,
            Event::KeyDown { keycode: Some(k), keymod, .. } => return self.key(r, k, keymod),
            Event::MouseButtonDown { mouse_btn, x, y, .. } => {
                self.mouse.x = x as f32;
                self.mouse.y = y as f32;
                match mouse_btn {
                    MouseButton::Left => {
                        self.mouse.down = true;
                        if !(self.hud && self.ui.press(x as f32, y as f32)) {
                            let model = self.shift && self.viewer.is_some();
                            self.drag = Some(if model { Drag::Model } else { Drag::Orbit });
                        }
                    }
                    MouseButton::Right | MouseButton::Middle => self.drag = Some(Drag::Pan),
                    _ => {}
                }
            }
            Event::MouseButtonUp { mouse_btn, .. } => {
                if mouse_btn == MouseButton::Left {
                    self.mouse.down = false;
                    self.ui.release();
                }
                self.drag = None;
            }
            Event::MouseMotion { x, y, xrel, yrel, .. } => {
                self.mouse.x = x as f32;
                self.mouse.y = y as f32;
                self.cursor = Some((x as f32, y as f32));
                match self.drag {
                    Some(Drag::Orbit) if !self.ui.captured() => {
                        self.camera_auto = false;
                        self.camera.orbit(-xrel as f32 * 0.008, yrel as f32 * 0.008);
                    }
                    Some(Drag::Model) => {
                        self.drag_model(((x - xrel) as f32, (y - yrel) as f32), (x as f32, y as f32));
                    }
                    Some(Drag::Pan) => {
                        let view = self.camera.view();
                        let right = Vec3::new(view.cols[0][0], view.cols[1][0], view.cols[2][0]);
                        let up = Vec3::new(view.cols[0][1], view.cols[1][1], view.cols[2][1]);
                        let k = self.camera.distance * 0.0015;
                        self.camera_auto = false;
                        self.camera.target = self.camera.target - right * (xrel as f32 * k) + up * (yrel as f32 * k);
                    }
                    _ => {}
                }
            }
            Event::MouseWheel { precise_y, .. } => {
                self.camera_auto = false;
                self.camera.zoom(0.9f32.powf(precise_y));
            }
            Event::DropFile { filename, .. } => self.drop_file(r, PathBuf::from(filename)),
            Event::Window { win_event: WindowEvent::Leave, .. } => self.cursor = None,
            Event::Window { win_event: WindowEvent::FocusLost, .. } => self.shift = false,
            _ => {}
        }
        false
    }
}
