//! The demo's window input on a VRM model, as synthetic SDL events through [`Headless`]: a
//! shift-drag with the left button moves the model on the ground so that the ground point
//! under the cursor follows it, a plain drag leaves the model where it is, `K` switches the
//! springs, `O` the collider overlay, `F` puts the model back; the frame with the colliders
//! draws without GL errors.
//!
//! SDL may only be initialized from one thread per process: one test function.

mod common;

use sdl2::event::Event;
use sdl2::keyboard::{Keycode, Mod};
use sdl2::mouse::{MouseButton, MouseState};
use sinew::math::{Mat4, Vec3, Vec4};
use sinew_frontend::demo::{GlRequest, Headless, Layers};
use sinew_frontend::scene::Camera;

const W: u32 = 480;
const H: u32 = 360;

fn key_down(k: Keycode) -> Event {
    Event::KeyDown { timestamp: 0, window_id: 0, keycode: Some(k), scancode: None, keymod: Mod::NOMOD, repeat: false }
}

fn key_up(k: Keycode) -> Event {
    Event::KeyUp { timestamp: 0, window_id: 0, keycode: Some(k), scancode: None, keymod: Mod::NOMOD, repeat: false }
}

fn button(down: bool, (x, y): (i32, i32)) -> Event {
    let (timestamp, window_id, which, mouse_btn, clicks) = (0, 0, 0, MouseButton::Left, 1);
    if down {
        Event::MouseButtonDown { timestamp, window_id, which, mouse_btn, clicks, x, y }
    } else {
        Event::MouseButtonUp { timestamp, window_id, which, mouse_btn, clicks, x, y }
    }
}

fn motion(from: (i32, i32), to: (i32, i32)) -> Event {
    Event::MouseMotion {
        timestamp: 0,
        window_id: 0,
        which: 0,
        mousestate: MouseState::from_sdl_state(1),
        x: to.0,
        y: to.1,
        xrel: to.0 - from.0,
        yrel: to.1 - from.1,
    }
}

/// A left drag from `from` to `to` in four motions, with a shift key held when `shift`.
fn drag(h: &mut Headless, from: (i32, i32), to: (i32, i32), shift: bool) {
    if shift {
        h.event(key_down(Keycode::LShift));
    }
    h.event(button(true, from));
    let mut at = from;
    for k in 1..=4 {
        let next = (from.0 + (to.0 - from.0) * k / 4, from.1 + (to.1 - from.1) * k / 4);
        h.event(motion(at, next));
        at = next;
    }
    h.event(button(false, to));
    if shift {
        h.event(key_up(Keycode::LShift));
    }
}

/// Pixel of world point `p` (top-left origin) in the `W × H` view of `view_proj`.
fn pixel(view_proj: &Mat4<f32>, p: Vec3<f32>) -> (f32, f32) {
    let c = view_proj.mul_vec4(Vec4::new(p.x, p.y, p.z, 1.0));
    ((c.x / c.w + 1.0) * 0.5 * W as f32, (1.0 - c.y / c.w) * 0.5 * H as f32)
}

#[test]
fn window_events_move_the_model_and_switch_its_springs() {
    let display = common::Display::get();
    std::env::set_var("DISPLAY", &display.name);
    let mut h = Headless::new(W, H, None, GlRequest::Auto).expect("a hidden window");
    h.load(&sinew_assets::path("vrm/three-vrm/sphere-collider.gltf")).expect("the model loads");
    let (center, radius, floor) = {
        let v = h.viewer().expect("a viewer");
        assert!(v.has_springs() && v.springs_enabled() && !v.show_colliders);
        (v.center, v.radius, v.floor)
    };
    // The camera the viewer frames the model with, at the window's aspect.
    let vp = Camera::framing(center, radius).view_proj(W as f32 / H as f32);
    let ground = Vec3::new(center.x, floor, center.z);
    let (sx, sy) = pixel(&vp, ground);
    let start = (sx.round() as i32, sy.round() as i32);
    let end = (start.0 + 60, start.1 + 20);

    // A plain drag turns the camera and leaves the model where it stands.
    drag(&mut h, start, end, false);
    assert_eq!(h.viewer().unwrap().placement(), Vec3::ZERO);
    // `F` frames the model again (the camera is back where the projections here assume).
    h.event(key_down(Keycode::F));
    h.event(key_up(Keycode::F));

    // A shift-drag: the ground point under the cursor at the start is under it at the end.
    drag(&mut h, start, end, true);
    let moved = h.viewer().unwrap().placement();
    let (ex, ey) = pixel(&vp, ground + moved);
    assert!(moved.y == 0.0 && moved.length() > 0.05 * radius, "{moved:?}");
    assert!((ex - end.0 as f32).abs() < 1.0 && (ey - end.1 as f32).abs() < 1.0, "({ex}, {ey}) for {end:?}");
    // The springs run in the moved world.
    for _ in 0..5 {
        h.advance(1.0 / 60.0);
    }
    let v = h.viewer().unwrap();
    assert_eq!(v.character().world(), v.world());
    assert!(v.spring_frame().is_some_and(|f| f.steps == 1));

    // `K` switches the springs off and on, `O` shows the colliders.
    h.event(key_down(Keycode::K));
    assert!(!h.viewer().unwrap().springs_enabled());
    h.event(key_down(Keycode::K));
    assert!(h.viewer().unwrap().springs_enabled());
    h.event(key_down(Keycode::O));
    assert!(h.viewer().unwrap().show_colliders);
    let rgba = h.render_scene(0.0, Layers::ALL).expect("a frame without GL errors");
    assert!(common::coverage(&rgba).0 > 0.01);

    // `F` puts the model back at the origin with its springs at rest.
    h.event(key_down(Keycode::F));
    let v = h.viewer().unwrap();
    assert_eq!(v.placement(), Vec3::ZERO);
    assert!(v.spring_frame().is_some_and(|f| f.reset));
}
