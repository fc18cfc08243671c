//! Crowds (the `crowd` feature, in `sinew_web_graph.wasm`): many instances of one model evaluated
//! in one batch ([`sinew_host::crowd::Crowd`]) into a palette laid out for a float texture, the
//! instances' placements and palette texels as per-instance rows. Crowds live in their own
//! table, named by handles as characters are; a crowd keeps its model alive.
//!
//! The palette's address ([`sinew_crowd_palette_ptr`]) and the instance rows' address
//! ([`sinew_crowd_instance_rows`]) stay valid until the crowd is freed.

use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

use sinew::math::Vec3;
use sinew_host::crowd::{Crowd, CrowdSettings, INSTANCE_FLOATS};

use super::{insert, missing, report, slot, with, State};

/// The most instances a crowd may have: what a palette texture of [`sinew_host::crowd`]'s width
/// and 8,192 rows holds for a one-joint skin is far beyond it; this bounds the memory a page can
/// ask for by mistake.
pub const MAX_INSTANCES: u32 = 1 << 20;

/// A crowd of the browser runtime and the buffer of its instance rows.
#[derive(Debug)]
pub struct WebCrowd {
    crowd: Crowd,
    rows: Vec<f32>,
}

/// Runs `f` on crowd `id`; a missing crowd or an error from `f` is reported and gives
/// `on_error`.
fn crowd<T>(id: u32, on_error: T, f: impl FnOnce(&mut WebCrowd) -> Result<T, String>) -> T {
    with(|s| {
        let Some(c) = s.crowds.get_mut(slot(id)).and_then(Option::as_mut) else {
            missing(s, "crowd", id);
            return on_error;
        };
        match f(c) {
            Ok(v) => v,
            Err(e) => {
                report(s, e);
                on_error
            }
        }
    })
}

/// A model from the table, or the message.
fn model(s: &mut State, id: u32) -> Option<Rc<sinew_host::Model>> {
    let m = s.models.get(slot(id)).and_then(Option::as_ref).map(Rc::clone);
    if m.is_none() {
        missing(s, "model", id);
    }
    m
}

/// A new crowd of `count` instances of model `model` (its first skin, every clip) on the host
/// layer's grid; `lod` non-zero shares poses between instances at the same quantized time and
/// updates far instances less often (0: every instance is evaluated every frame into its own
/// slot); `z_up` non-zero for a model whose up axis is +Z. Returns the crowd's handle, or 0 with
/// the message (no such model, a count of 0 or above [`MAX_INSTANCES`], a model without a skin
/// or clips, a palette slot wider than the texture).
#[no_mangle]
pub extern "C" fn sinew_crowd_new(model_id: u32, count: u32, lod: u32, z_up: u32) -> u32 {
    with(|s| {
        let Some(m) = model(s, model_id) else { return 0 };
        if count == 0 || count > MAX_INSTANCES {
            report(s, format!("a crowd has 1 to {MAX_INSTANCES} instances, not {count}"));
            return 0;
        }
        let settings = CrowdSettings { lod: lod != 0, z_up: z_up != 0, ..CrowdSettings::new(count as usize) };
        match Crowd::new(m, settings) {
            Ok(crowd) => insert(&mut s.crowds, Box::new(WebCrowd { crowd, rows: Vec::new() })),
            Err(e) => {
                report(s, format!("crowd: {e}"));
                0
            }
        }
    })
}

/// Frees crowd `id`.
#[no_mangle]
pub extern "C" fn sinew_crowd_free(id: u32) {
    with(|s| {
        if let Some(c) = s.crowds.get_mut(slot(id)) {
            *c = None;
        }
    });
}

/// Instances of crowd `id` (0 for no such crowd).
#[no_mangle]
pub extern "C" fn sinew_crowd_len(id: u32) -> u32 {
    crowd(id, 0, |c| Ok(c.crowd.len() as u32))
}

/// Sets each instance's level of detail from the radius it projects to, seen from `(x, y, z)`
/// (world space) through a lens of `focal` pixels per unit at unit distance (the viewport's
/// height / (2 tan(fov / 2))). Without levels of detail every instance stays at level 0. 1, or
/// 0 with the message (no such crowd, numbers that are not finite, a focal length not above 0).
#[no_mangle]
pub extern "C" fn sinew_crowd_set_camera(id: u32, x: f32, y: f32, z: f32, focal: f32) -> u32 {
    crowd(id, 0, |c| {
        if ![x, y, z, focal].iter().all(|v| v.is_finite()) || focal <= 0.0 {
            return Err("the camera's eye is finite and its focal length a positive number".into());
        }
        c.crowd.set_camera(Vec3::new(x, y, z), focal);
        Ok(1)
    })
}

/// Advances crowd `id` by `dt` seconds and evaluates the frame's poses into its palette. 1, or 0
/// with the message (the crowd is as before when the frame could not be planned).
#[no_mangle]
pub extern "C" fn sinew_crowd_frame(id: u32, dt: f32) -> u32 {
    crowd(id, 0, |c| c.crowd.frame(dt).map(|_| 1).map_err(|e| format!("crowd: {e}")))
}

/// Count `k` of crowd `id`'s last frame: 0 the poses evaluated, 1 the instances that shared one
/// of them, 2 the instances that kept their pose from an earlier frame. -1 with the message for
/// no such crowd or another `k`.
#[no_mangle]
pub extern "C" fn sinew_crowd_stat(id: u32, k: u32) -> i32 {
    crowd(id, -1, |c| {
        let s = c.crowd.stats();
        let v = [s.evaluated, s.shared, s.held].get(k as usize).copied();
        v.map(|v| v as i32).ok_or_else(|| format!("no crowd count {k} (0 evaluated, 1 shared, 2 held)"))
    })
}

/// Address of crowd `id`'s palette texels: RGBA floats, row after row of the texture
/// ([`sinew_crowd_texture`]); null for no such crowd.
#[no_mangle]
pub extern "C" fn sinew_crowd_palette_ptr(id: u32) -> *const f32 {
    crowd(id, core::ptr::null(), |c| Ok(c.crowd.palette().as_ptr()))
}

/// Length in floats of crowd `id`'s palette (4 × width × height); 0 for no such crowd.
#[no_mangle]
pub extern "C" fn sinew_crowd_palette_len(id: u32) -> usize {
    crowd(id, 0, |c| Ok(c.crowd.palette().len()))
}

/// Dimension `k` of crowd `id`'s palette texture (`sinew::crowd::CrowdLayout`): 0 its width
/// and 1 its height in texels, 2 the palette slots per texture row, 3 the joints of a slot
/// (three texels each: the rows of an affine skin matrix). 0 with the message for no such crowd
/// or another `k`.
#[no_mangle]
pub extern "C" fn sinew_crowd_texture(id: u32, k: u32) -> u32 {
    crowd(id, 0, |c| {
        let l = c.crowd.layout();
        let v = [l.width, l.height, l.per_row, l.joints].get(k as usize).copied();
        v.map(|v| v as u32)
            .ok_or_else(|| format!("no texture dimension {k} (0 width, 1 height, 2 slots per row, 3 joints)"))
    })
}

/// Crowd `id`'s framing (`sinew_host::crowd::Crowd::bounds`): `k` 0 to 2 its center's x, y and
/// z, 3 its radius. NaN with the message for no such crowd or another `k`.
#[no_mangle]
pub extern "C" fn sinew_crowd_bounds(id: u32, k: u32) -> f32 {
    crowd(id, f32::NAN, |c| {
        let (m, r) = c.crowd.bounds();
        [m.x, m.y, m.z, r]
            .get(k as usize)
            .copied()
            .ok_or_else(|| format!("no bound {k} (0 to 2 the center, 3 the radius)"))
    })
}

/// The texture rows crowd `id`'s last frame wrote: `k` 0 the first, 1 one past the last (both 0
/// when it wrote none, the part to upload again). -1 with the message for no such crowd or
/// another `k`.
#[no_mangle]
pub extern "C" fn sinew_crowd_written_rows(id: u32, k: u32) -> i32 {
    crowd(id, -1, |c| {
        let r = c.crowd.written_rows().unwrap_or(0..0);
        let v = [r.start, r.end].get(k as usize).copied();
        v.map(|v| v as i32).ok_or_else(|| format!("no written-rows bound {k} (0 first, 1 end)"))
    })
}

/// Writes crowd `id`'s instance rows into its buffer and returns the buffer's address:
/// [`INSTANCE_FLOATS`] floats per instance, rows 0 to 2 of its placement (x, y, z, translation
/// each), then the texel where its palette slot starts (column, row) and two zeros. The slots
/// change as the crowd shares and holds poses: read them again after each frame. Null with the
/// message for no such crowd.
#[no_mangle]
pub extern "C" fn sinew_crowd_instance_rows(id: u32) -> *const f32 {
    crowd(id, core::ptr::null(), |c| {
        c.rows.clear();
        c.crowd.instance_rows(&mut c.rows);
        Ok(c.rows.as_ptr())
    })
}

/// Length in floats of crowd `id`'s instance rows ([`INSTANCE_FLOATS`] per instance); 0 for no
/// such crowd.
#[no_mangle]
pub extern "C" fn sinew_crowd_instance_rows_len(id: u32) -> usize {
    crowd(id, 0, |c| Ok(c.crowd.len() * INSTANCE_FLOATS))
}

#[cfg(test)]
mod tests {
    use super::super::sinew_model_close;
    use super::super::tests::{open, text};
    use super::*;

    static CHARACTER: &[u8] = include_bytes!("../../../../core/fixtures/character.sinew");

    #[test]
    fn a_crowd_fills_its_palette_texture_and_reports_bad_calls() {
        let m = open(CHARACTER, 64);
        assert_eq!(sinew_crowd_new(m, 0, 1, 0), 0);
        assert_eq!(text(), format!("a crowd has 1 to {MAX_INSTANCES} instances, not 0"));
        assert_eq!(sinew_crowd_new(m + 1, 4, 1, 0), 0);
        assert_eq!(text(), format!("no model {}", m + 1));
        let c = sinew_crowd_new(m, 40, 0, 0);
        assert_ne!(c, 0, "{}", text());
        sinew_model_close(m);
        assert_eq!(sinew_crowd_len(c), 40);
        let (w, h, per_row, joints) = (
            sinew_crowd_texture(c, 0),
            sinew_crowd_texture(c, 1),
            sinew_crowd_texture(c, 2),
            sinew_crowd_texture(c, 3),
        );
        // The fixture's skin: 22 joints, three texels each per slot, slots side by side.
        assert_eq!(joints, 22);
        assert_eq!(w, per_row * 3 * joints);
        assert!(w <= 2048);
        assert_eq!(h, 40u32.div_ceil(per_row));
        assert_eq!(sinew_crowd_palette_len(c), (w * h * 4) as usize);
        assert_eq!(sinew_crowd_texture(c, 4), 0);
        assert!(text().starts_with("no texture dimension 4"), "{}", text());
        // Without sharing every instance is evaluated every frame, and every row is written.
        assert_eq!(sinew_crowd_frame(c, 1.0 / 60.0), 1);
        assert_eq!([0, 1, 2].map(|k| sinew_crowd_stat(c, k)), [40, 0, 0]);
        assert_eq!([sinew_crowd_written_rows(c, 0), sinew_crowd_written_rows(c, 1)], [0, h as i32]);
        assert_eq!(sinew_crowd_stat(c, 3), -1);
        // Each instance's row points at a slot whose first texel is a rotation's row: unit length.
        let rows = sinew_crowd_instance_rows(c);
        assert_eq!(sinew_crowd_instance_rows_len(c), 40 * INSTANCE_FLOATS);
        // SAFETY: the crowd's rows and palette, at the lengths the exports give.
        let (rows, palette) = unsafe {
            (
                std::slice::from_raw_parts(rows, sinew_crowd_instance_rows_len(c)),
                std::slice::from_raw_parts(sinew_crowd_palette_ptr(c), sinew_crowd_palette_len(c)),
            )
        };
        let mut texels = std::collections::HashSet::new();
        for r in rows.chunks_exact(INSTANCE_FLOATS) {
            let (col, row) = (r[12] as usize, r[13] as usize);
            assert!(texels.insert((col, row)), "two instances share slot texel ({col}, {row}) without sharing");
            let at = (row * w as usize + col) * 4;
            let len = palette[at..at + 3].iter().map(|v| v * v).sum::<f32>().sqrt();
            assert!((len - 1.0).abs() < 1e-3, "slot at ({col}, {row}): row 0 of length {len}");
        }
        assert_eq!(sinew_crowd_set_camera(c, 0.0, 1.0, 5.0, 0.0), 0);
        assert_eq!(text(), "the camera's eye is finite and its focal length a positive number");
        assert_eq!(sinew_crowd_set_camera(c, 0.0, 1.0, 5.0, 500.0), 1);
        assert_eq!(sinew_crowd_frame(c, f32::NAN), 0);
        assert_eq!(text(), "crowd: the time step is not finite");
        sinew_crowd_free(c);
        assert_eq!(sinew_crowd_frame(c, 0.0), 0);
        assert_eq!(text(), format!("no crowd {c}"));
        assert!(sinew_crowd_palette_ptr(c).is_null());
    }

    #[test]
    fn sharing_evaluates_fewer_poses_and_far_instances_are_held() {
        let m = open(CHARACTER, 64);
        let c = sinew_crowd_new(m, 400, 1, 0);
        assert_ne!(c, 0, "{}", text());
        // An eye far above the grid: every instance small on screen.
        assert_eq!(sinew_crowd_set_camera(c, 0.0, 1000.0, 0.0, 100.0), 1);
        assert_eq!(sinew_crowd_frame(c, 0.0), 1);
        let mut held = 0;
        for _ in 0..4 {
            assert_eq!(sinew_crowd_frame(c, 1.0 / 60.0), 1);
            let s = [0, 1, 2].map(|k| sinew_crowd_stat(c, k));
            assert_eq!(s.iter().sum::<i32>(), 400, "{s:?}");
            assert!(s[0] < 400, "{s:?}");
            held += s[2];
        }
        assert!(held > 0);
        sinew_crowd_free(c);
        sinew_model_close(m);
    }
}
