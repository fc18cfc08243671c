//! The module's exports: a plain C ABI over numbers and addresses in linear memory, which
//! `js/sinew.js` wraps in classes. Models and characters live in tables here and are named by
//! handles (1 and up; 0 is "none"). A call that fails returns 0 (or a negative value, or NaN)
//! and leaves its one-line message for [`sinew_text_ptr`] / [`sinew_text_len`]; nothing
//! loaded before is touched by a failed call.
//!
//! Addresses handed out (vertex and index data, texels, palettes, rows) stay valid until the
//! model or character is freed; JavaScript views them in place (`new Float32Array(memory.buffer,
//! address, length)`), making the view again after any call that may grow memory.

use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::cell::RefCell;

use sinew::controller::FadeCurve;
use sinew_host::camera::{grid_step, Camera};
#[cfg(feature = "springs")]
use sinew_host::character::colliders::ColliderLines;
#[cfg(feature = "feet")]
use sinew_host::ground::Terrain;
use sinew_host::limits::{WebRig, CROSSFADE_SECONDS, FLOATS_PER_VERTEX, MIN_PALETTE, VERTEX_ATTRIBUTES};
#[cfg(feature = "feet")]
use sinew_host::Legs;
use sinew_host::Model;

use crate::{WebCharacter as Character, WebWork as Work};

#[cfg(feature = "crowd")]
pub mod crowd;

/// The module's state: its tables, the last text, the characters' shared update buffers.
#[derive(Default)]
struct State {
    models: Vec<Option<Rc<Model>>>,
    characters: Vec<Option<Box<Character>>>,
    text: String,
    work: Work,
    /// The last collider lines computed ([`sinew_character_collider_lines`]).
    #[cfg(feature = "springs")]
    lines: ColliderLines,
    /// The crowds ([`crowd`]).
    #[cfg(feature = "crowd")]
    crowds: Vec<Option<Box<crowd::WebCrowd>>>,
}

impl State {
    /// No models, characters or text; the update buffers unallocated.
    const fn new() -> State {
        State {
            models: Vec::new(),
            characters: Vec::new(),
            text: String::new(),
            work: Work::new(),
            #[cfg(feature = "springs")]
            lines: ColliderLines { outside: Vec::new(), inside: Vec::new() },
            #[cfg(feature = "crowd")]
            crowds: Vec::new(),
        }
    }
}

/// The module's state: one for the module in wasm32 (one thread, without the standard
/// library), one per thread on the hosts, where the tests run.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
static STATE: Global = Global(RefCell::new(State::new()));

/// The state of a module whose code runs on one thread.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
struct Global(RefCell<State>);

// SAFETY: wasm32 without the atomics feature has one thread: nothing shares the state.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
unsafe impl Sync for Global {}

#[cfg(not(all(target_family = "wasm", not(target_feature = "atomics"))))]
std::thread_local! {
    static STATE: RefCell<State> = const { RefCell::new(State::new()) };
}

/// Runs `f` on the module's state.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
fn with<T>(f: impl FnOnce(&mut State) -> T) -> T {
    f(&mut STATE.0.borrow_mut())
}

/// Runs `f` on the thread's state.
#[cfg(not(all(target_family = "wasm", not(target_feature = "atomics"))))]
fn with<T>(f: impl FnOnce(&mut State) -> T) -> T {
    STATE.with(|s| f(&mut s.borrow_mut()))
}

/// Puts `value` in the first free slot of `table` and returns its handle.
fn insert<T>(table: &mut Vec<Option<T>>, value: T) -> u32 {
    match table.iter().position(Option::is_none) {
        Some(i) => {
            table[i] = Some(value);
            i as u32 + 1
        }
        None => {
            table.push(Some(value));
            table.len() as u32
        }
    }
}

/// The slot of `handle` in a table.
fn slot(handle: u32) -> usize {
    (handle as usize).wrapping_sub(1)
}

/// Runs `f` on character `id`; a missing character or an error from `f` is reported and gives
/// `on_error`.
fn character<T>(id: u32, on_error: T, f: impl FnOnce(&mut Character, &mut State) -> Result<T, String>) -> T {
    with(|s| {
        let Some(mut c) = s.characters.get_mut(slot(id)).and_then(Option::take) else {
            missing(s, "character", id);
            return on_error;
        };
        let r = f(&mut c, s);
        if let Some(entry) = s.characters.get_mut(slot(id)) {
            *entry = Some(c);
        }
        r.unwrap_or_else(|e| {
            report(s, e);
            on_error
        })
    })
}

/// Says that there is no `what` `id` ("no character 3") in the last text. Out of line with
/// [`report`].
#[inline(never)]
#[cold]
fn missing(s: &mut State, what: &str, id: u32) {
    s.text = format!("no {what} {id}");
}

/// Keeps `text` as the last text. Out of line: every export's error path calls it.
#[inline(never)]
#[cold]
fn report(s: &mut State, text: String) {
    s.text = text;
}

/// Reserves `len` zeroed bytes for the caller to fill; free them with [`sinew_free`] or hand
/// them to [`sinew_model_open`]. Null when `len` is 0.
#[no_mangle]
pub extern "C" fn sinew_alloc(len: usize) -> *mut u8 {
    if len == 0 {
        return core::ptr::null_mut();
    }
    Box::leak(vec![0u8; len].into_boxed_slice()).as_mut_ptr()
}

/// Frees `len` bytes at `ptr` from [`sinew_alloc`].
///
/// # Safety
///
/// `ptr` and `len` are a pair [`sinew_alloc`] returned, not freed or handed over since.
#[no_mangle]
pub unsafe extern "C" fn sinew_free(ptr: *mut u8, len: usize) {
    if !ptr.is_null() && len > 0 {
        // SAFETY: the caller's contract: the box `sinew_alloc` leaked.
        drop(unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, len)) });
    }
}

/// The constants the page shares with the runtime, by `what`: 0 a crossfade's default length
/// in seconds, 1 the most joints of a model, 2 floats per vertex of a draw part, 3 the fewest
/// joints a palette may hold; the camera's ([`Camera`]): 4 its largest elevation, 5 and 6 its
/// near and far planes per unit of distance, 7 to 10 the framing's yaw, pitch, vertical field
/// of view (radians) and distance per unit of radius; 11 whether the module evaluates morph
/// targets (1, the feature `morphs`) or not (0), 12 whether it computes dual-quaternion rows
/// (1, the feature `dqs`) or not (0). NaN for any other.
#[no_mangle]
pub extern "C" fn sinew_limit(what: u32) -> f32 {
    match what {
        0 => CROSSFADE_SECONDS,
        1 => WebRig::JOINTS as f32,
        2 => FLOATS_PER_VERTEX as f32,
        3 => MIN_PALETTE as f32,
        4 => Camera::MAX_PITCH,
        5 => Camera::NEAR_PER_DISTANCE,
        6 => Camera::FAR_PER_DISTANCE,
        7 => Camera::FRAMING_YAW,
        8 => Camera::FRAMING_PITCH,
        9 => Camera::FRAMING_FOV_Y,
        10 => Camera::FRAMING_DISTANCE_PER_RADIUS,
        11 => f32::from(u8::from(cfg!(feature = "morphs"))),
        12 => f32::from(u8::from(cfg!(feature = "dqs"))),
        _ => f32::NAN,
    }
}

/// Attribute `i` of a draw part's vertex (position, normal, joint indices, joint weights,
/// texture coordinates, color) as `components + 256 × offset` (offset in floats); 0 past the
/// last.
#[no_mangle]
pub extern "C" fn sinew_vertex_attribute(i: u32) -> u32 {
    VERTEX_ATTRIBUTES.get(i as usize).map_or(0, |&(n, offset)| (n + 256 * offset) as u32)
}

/// The floor grid's spacing under a model of `radius`.
#[no_mangle]
pub extern "C" fn sinew_grid_step(radius: f32) -> f32 {
    grid_step(radius)
}

/// Address of the last text: an error message, or a model's description.
#[no_mangle]
pub extern "C" fn sinew_text_ptr() -> *const u8 {
    with(|s| s.text.as_ptr())
}

/// Length in bytes (UTF-8) of the last text.
#[no_mangle]
pub extern "C" fn sinew_text_len() -> usize {
    with(|s| s.text.len())
}

/// Opens the `.sinew` file in the `len` bytes at `ptr` (from [`sinew_alloc`], handed over:
/// the model owns them from here, and frees them on failure too), its meshes prepared for
/// palettes of at most `palette` joints. Returns the model's handle, or 0 with the message.
///
/// # Safety
///
/// As [`sinew_free`].
#[no_mangle]
pub unsafe extern "C" fn sinew_model_open(ptr: *mut u8, len: usize, palette: usize) -> u32 {
    if ptr.is_null() || len == 0 {
        with(|s| s.text = "the file is empty".into());
        return 0;
    }
    // SAFETY: the caller's contract: the box `sinew_alloc` leaked, handed over.
    let bytes = unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, len)) };
    match crate::model::open(bytes, palette) {
        Ok(m) => with(|s| insert(&mut s.models, Rc::new(m))),
        Err(e) => {
            with(|s| s.text = e.to_string());
            0
        }
    }
}

/// Releases model `id`; its characters keep it alive until they are freed.
#[no_mangle]
pub extern "C" fn sinew_model_close(id: u32) {
    with(|s| {
        if let Some(m) = s.models.get_mut(slot(id)) {
            *m = None;
        }
    });
}

/// Writes model `id`'s description (JSON, see [`crate::model::describe`]) as the last text and
/// returns its length (0: no such model).
#[no_mangle]
pub extern "C" fn sinew_model_describe(id: u32) -> usize {
    with(|s| {
        let Some(m) = s.models.get(slot(id)).and_then(Option::as_ref) else {
            missing(s, "model", id);
            return 0;
        };
        s.text = crate::model::describe(m);
        s.text.len()
    })
}

/// A new character of model `id` playing its first clip; 0 with the message for no such
/// model (or one the character refuses).
#[no_mangle]
pub extern "C" fn sinew_character_new(model: u32) -> u32 {
    with(|s| match s.models.get(slot(model)).and_then(Option::as_ref) {
        Some(m) => match Character::new(Rc::clone(m)) {
            Ok(c) => insert(&mut s.characters, Box::new(c)),
            Err(e) => {
                report(s, e.to_string());
                0
            }
        },
        None => {
            missing(s, "model", model);
            0
        }
    })
}

/// Frees character `id`.
#[no_mangle]
pub extern "C" fn sinew_character_free(id: u32) {
    with(|s| {
        if let Some(c) = s.characters.get_mut(slot(id)) {
            *c = None;
        }
    });
}

/// Plays clip `clip` alone (see `Character::play`). 1, or 0 with the message.
#[no_mangle]
pub extern "C" fn sinew_character_play(id: u32, clip: u32) -> u32 {
    character(id, 0, |c, _| c.play(clip as usize).map(|()| 1).map_err(|e| e.to_string()))
}

/// Blends clip `clip` in at `weight`. 1, or 0 with the message.
#[no_mangle]
pub extern "C" fn sinew_character_blend(id: u32, clip: u32, weight: f32) -> u32 {
    character(id, 0, |c, _| c.blend(clip as usize, weight).map(|()| 1).map_err(|e| e.to_string()))
}

/// Crossfades to clip `clip` over `seconds`; `flags` bit 0 fades by smoothstep (else
/// linearly), bit 1 starts the clip at the playing one's phase and keeps them in phase. 1, or 0
/// with the message.
#[no_mangle]
pub extern "C" fn sinew_character_crossfade(id: u32, clip: u32, seconds: f32, flags: u32) -> u32 {
    let curve = if flags & 1 != 0 { FadeCurve::SmoothStep } else { FadeCurve::Linear };
    character(id, 0, |c, _| {
        c.crossfade(clip as usize, seconds, curve, flags & 2 != 0).map(|()| 1).map_err(|e| e.to_string())
    })
}

/// Moves the playing clip to time `t`.
#[no_mangle]
pub extern "C" fn sinew_character_seek(id: u32, t: f32) {
    character(id, (), |c, _| {
        c.seek(t);
        Ok(())
    });
}

/// Plays (non-zero) or pauses.
#[no_mangle]
pub extern "C" fn sinew_character_set_playing(id: u32, playing: u32) {
    character(id, (), |c, _| {
        c.set_playing(playing != 0);
        Ok(())
    });
}

/// Sets the speed factor.
#[no_mangle]
pub extern "C" fn sinew_character_set_speed(id: u32, speed: f32) {
    character(id, (), |c, _| {
        c.set_speed(speed);
        Ok(())
    });
}

/// Sets the loop mode: 0 loop, 1 once, 2 ping-pong.
#[no_mangle]
pub extern "C" fn sinew_character_set_loop(id: u32, mode: u32) {
    use sinew::player::LoopMode;
    let mode = match mode {
        1 => LoopMode::Once,
        2 => LoopMode::PingPong,
        _ => LoopMode::Loop,
    };
    character(id, (), |c, _| {
        c.set_loop_mode(mode);
        Ok(())
    });
}

/// Runs graph `graph` of the file (a negative index stops the graph). 1, or 0 with the message.
#[no_mangle]
pub extern "C" fn sinew_character_use_graph(id: u32, graph: i32) -> u32 {
    character(id, 0, |c, _| {
        if graph < 0 {
            c.stop_graph();
            Ok(1)
        } else {
            c.use_graph(graph as usize).map(|()| 1).map_err(|e| e.to_string())
        }
    })
}

/// Sets parameter `p` of the running graph. 1, or 0 with the message.
#[no_mangle]
pub extern "C" fn sinew_character_set_parameter(id: u32, p: u32, value: f32) -> u32 {
    character(id, 0, |c, _| c.set_parameter(p as usize, value).map(|()| 1).map_err(|e| e.to_string()))
}

/// Parameter `p`'s value in the running graph (NaN without one).
#[no_mangle]
pub extern "C" fn sinew_character_parameter(id: u32, p: u32) -> f32 {
    character(id, f32::NAN, |c, _| Ok(c.graph().and_then(|g| g.value(p as usize)).unwrap_or(f32::NAN)))
}

/// The running graph's base state (-1 without a graph).
#[no_mangle]
pub extern "C" fn sinew_character_graph_state(id: u32) -> i32 {
    character(id, -1, |c, _| Ok(c.graph().map_or(-1, |g| g.state() as i32)))
}

/// The playing clip (-1: none, or a graph runs).
#[no_mangle]
pub extern "C" fn sinew_character_clip(id: u32) -> i32 {
    character(id, -1, |c, _| Ok(c.clip().map_or(-1, |(clip, _)| clip as i32)))
}

/// The playing clip's time.
#[no_mangle]
pub extern "C" fn sinew_character_time(id: u32) -> f32 {
    character(id, 0.0, |c, _| Ok(c.time()))
}

/// The second clip's weight.
#[no_mangle]
pub extern "C" fn sinew_character_weight(id: u32) -> f32 {
    character(id, 0.0, |c, _| Ok(c.weight()))
}

/// Advances time by `dt` seconds. 1, or 0 with the message.
#[no_mangle]
pub extern "C" fn sinew_character_advance(id: u32, dt: f32) -> u32 {
    character(id, 0, |c, s| c.advance(dt, &mut s.work).map(|()| 1).map_err(|e| e.to_string()))
}

/// The flags of `character::outputs` this module computes: all but `MORPHS` without the
/// feature `morphs`, and but `DQS_ROWS` without the feature `dqs` (`Character::update_only`
/// with them left out has none of their code).
const OUTPUTS: u32 = {
    use sinew_host::character::outputs::{DQS_ROWS, MORPHS};
    let morphs = if cfg!(feature = "morphs") { 0 } else { MORPHS };
    let dqs = if cfg!(feature = "dqs") { 0 } else { DQS_ROWS };
    !(morphs | dqs)
};

/// Computes the pose, the model matrices and `outputs` (flags of `character::outputs`) of
/// those the module computes (see [`sinew_limit`]: a draw part's morphed vertices and
/// dual-quaternion rows stay empty in a module without them). 1, or 0 with the message.
#[no_mangle]
pub extern "C" fn sinew_character_update(id: u32, outputs: u32) -> u32 {
    character(id, 0, |c, s| c.update_only::<OUTPUTS>(outputs, &mut s.work).map(|()| 1).map_err(|e| e.to_string()))
}

/// Address of the joints' model matrices (16 floats each, column-major); null for no such
/// character.
#[no_mangle]
pub extern "C" fn sinew_character_joints(id: u32) -> *const f32 {
    character(id, core::ptr::null(), |c, _| Ok(c.joints.as_ptr().cast()))
}

/// Component `k` of the box of the joints' positions in the pose of the last update (0–2 its
/// center's x, y, z, 3 its radius, 4 its floor): the framing of a model without meshes. NaN for
/// no such character or component.
#[no_mangle]
pub extern "C" fn sinew_character_bounds(id: u32, k: u32) -> f32 {
    character(id, f32::NAN, |c, _| {
        let b = c.pose_bounds();
        [b.center.x, b.center.y, b.center.z, b.radius, b.floor]
            .get(k as usize)
            .copied()
            .ok_or_else(|| format!("no bounds component {k}"))
    })
}

/// Address of skin `skin`'s palette (16 floats per skin joint, column-major model × inverse
/// bind); null for no such skin.
#[no_mangle]
pub extern "C" fn sinew_character_palette(id: u32, skin: u32) -> *const f32 {
    character(id, core::ptr::null(), |c, _| {
        c.palettes.get(skin as usize).map(|p| p.as_ptr().cast()).ok_or_else(|| format!("no skin {skin}"))
    })
}

#[cfg(feature = "feet")]
/// Sets up foot placement on character `id`, off: its legs found by the humanoid naming
/// (`Legs::humanoid`), standing on the viewers' ground (`Terrain::beside` the legs: a step under
/// the legs on the −X side, a slope under those on the +X side). 1, or 0 with the message.
#[no_mangle]
pub extern "C" fn sinew_character_feet_setup(id: u32) -> u32 {
    character(id, 0, |c, _| {
        let legs = Legs::humanoid(&c.model)
            .ok_or("no legs by the humanoid naming (upper leg, lower leg and foot of each side)")?;
        let (ground, settings) = (Terrain::beside(legs.middle.x, legs.length), legs.settings());
        c.set_feet(legs, settings, Box::new(ground), false).map(|()| 1).map_err(|e| e.to_string())
    })
}

#[cfg(feature = "feet")]
/// Turns foot placement on (`flags` bit 0) or off, ramping over its blend time, or at once
/// with bit 1 (the next update is settled). 1, or 0 with the message.
#[no_mangle]
pub extern "C" fn sinew_character_feet(id: u32, flags: u32) -> u32 {
    character(id, 0, |c, _| {
        c.set_feet_enabled(flags & 1 != 0).map_err(|e| e.to_string())?;
        if flags & 2 != 0 {
            c.reset_feet();
        }
        Ok(1)
    })
}

#[cfg(feature = "feet")]
/// The weight foot placement applied in the last update, 0 (off) to 1 (on); NaN without it.
#[no_mangle]
pub extern "C" fn sinew_character_feet_weight(id: u32) -> f32 {
    character(id, f32::NAN, |c, _| Ok(c.feet().map_or(f32::NAN, |s| s.weight())))
}

#[cfg(feature = "feet")]
/// Sets the ground foot placement stands the feet on (`Terrain`): the floor's `height`, the
/// plane `x = edge` between the step (x < edge) and the slope, the step's height `step`, the
/// slope's `grade` along +Z. 1, or 0 with the message.
#[no_mangle]
pub extern "C" fn sinew_character_set_ground(id: u32, height: f32, edge: f32, step: f32, grade: f32) -> u32 {
    character(id, 0, |c, _| {
        if ![height, edge, step, grade].iter().all(|v| v.is_finite()) {
            return Err("the ground's height, edge, step and grade are finite numbers".into());
        }
        c.set_ground(Box::new(Terrain { height, edge, step, grade })).map(|()| 1).map_err(|e| e.to_string())
    })
}

#[cfg(feature = "feet")]
/// The ground under `(x, z)` that foot placement stands the feet on: `k` 0 its height, 1 to 3
/// its unit normal's x, y, z. NaN where there is none, without foot placement or for another
/// `k`.
#[no_mangle]
pub extern "C" fn sinew_character_ground(id: u32, x: f32, z: f32, k: u32) -> f32 {
    character(id, f32::NAN, |c, _| {
        Ok(c.ground(sinew::math::Vec3::new(x, 0.0, z)).map_or(f32::NAN, |h| {
            let n = h.normal.normalize_or_zero();
            [h.height, n.x, n.y, n.z].get(k as usize).copied().unwrap_or(f32::NAN)
        }))
    })
}

#[cfg(any(feature = "feet", feature = "springs"))]
/// Places character `id` in the world (model space to world space) for the next updates:
/// translation `(tx, ty, tz)`, rotation quaternion `(qx, qy, qz, qw)` (normalized here; a zero
/// one is the identity), uniform `scale`. Foot placement asks its ground there and the spring
/// bones feel its motion (see `Character::set_world`). 1, or 0 with the message.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn sinew_character_set_world(
    id: u32,
    tx: f32,
    ty: f32,
    tz: f32,
    qx: f32,
    qy: f32,
    qz: f32,
    qw: f32,
    scale: f32,
) -> u32 {
    use sinew::math::{Mat4, Quat, Vec3};
    character(id, 0, |c, _| {
        if !([tx, ty, tz, qx, qy, qz, qw].iter().all(|v| v.is_finite()) && scale.is_finite() && scale > 0.0) {
            return Err("the world's translation and rotation are finite numbers and its scale a positive one".into());
        }
        let r = Quat::new(qx, qy, qz, qw).normalize();
        c.set_world(Mat4::from_trs(Vec3::new(tx, ty, tz), r, Vec3::new(scale, scale, scale)));
        Ok(1)
    })
}

#[cfg(feature = "springs")]
/// Sets up the spring bones of character `id`'s model (its file's spring section) as a stage
/// of its updates, stepped `rate` times a second (0: 60) and at most `max_steps` times an
/// update (0: 4); on when `flags` bit 0 is set. Their first run puts them at rest in that
/// update's pose. 1 when set up; 2 for a model without spring bones (nothing set up, "the
/// model has no spring bones" as the message); 0 with the message for no such character, a
/// rate that is not a positive number, or a section the job refuses.
#[no_mangle]
pub extern "C" fn sinew_character_springs_setup(id: u32, rate: f32, max_steps: u32, flags: u32) -> u32 {
    use sinew_host::SpringSettings;
    character(id, 0, |c, s| {
        let Some(set) = c.model.springs() else {
            report(s, "the model has no spring bones".into());
            return Ok(2);
        };
        let defaults = SpringSettings::default();
        let settings = SpringSettings {
            rate: if rate == 0.0 { defaults.rate } else { rate },
            max_steps: if max_steps == 0 { defaults.max_steps } else { max_steps },
        };
        if !settings.is_valid() {
            return Err(format!("a spring rate of {rate} steps per second is not a positive number"));
        }
        c.set_springs(set, settings, flags & 1 != 0).map(|()| 1).map_err(|e| e.to_string())
    })
}

#[cfg(feature = "springs")]
/// Turns character `id`'s spring bones on (`flags` bit 0) or off; bit 1 makes their next run
/// a reset (at rest in that update's pose, as after a teleport). Switched on, their next run
/// is a reset too. 1, or 0 with the message (not set up).
#[no_mangle]
pub extern "C" fn sinew_character_springs(id: u32, flags: u32) -> u32 {
    character(id, 0, |c, _| {
        c.set_springs_enabled(flags & 1 != 0).map_err(|e| e.to_string())?;
        if flags & 2 != 0 {
            c.reset_springs();
        }
        Ok(1)
    })
}

#[cfg(feature = "springs")]
/// What character `id`'s spring bones did in the last update, by `k`: 0 whether they are on
/// (1 or 0), 1 whether the update reset them (1 or 0), 2 the steps run, 3 the joint-collider
/// contacts over those steps, 4 the seconds dropped (more steps were due than an update runs),
/// 5 the number of spring joints, 6 the number of colliders. NaN without a set-up or for
/// another `k`.
#[no_mangle]
pub extern "C" fn sinew_character_spring_frame(id: u32, k: u32) -> f32 {
    character(id, f32::NAN, |c, _| {
        let (Some(f), Some(set)) = (c.spring_frame(), c.spring_set()) else {
            return Err("spring bones are not set up".into());
        };
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        Ok([
            flag(c.springs_enabled()),
            flag(f.reset),
            f.steps as f32,
            f.contacts as f32,
            f.dropped,
            set.joints.len() as f32,
            set.colliders.len() as f32,
        ]
        .get(k as usize)
        .copied()
        .unwrap_or(f32::NAN))
    })
}

#[cfg(feature = "springs")]
/// The skeleton joint of character `id`'s spring joint `i` (in the order they run), or, with
/// `flags` bit 0, its child (the joint its tail follows; -1 for a tail without a child joint).
/// -1 past the last spring joint or without a set-up.
#[no_mangle]
pub extern "C" fn sinew_character_spring_joint(id: u32, i: u32, flags: u32) -> i32 {
    use sinew::job::spring::NO_JOINT;
    character(id, -1, |c, _| {
        let Some(j) = c.spring_set().and_then(|s| s.joints.get(i as usize)) else { return Ok(-1) };
        let joint = if flags & 1 != 0 { j.child } else { j.joint };
        Ok(if joint == NO_JOINT { -1 } else { i32::from(joint) })
    })
}

#[cfg(feature = "springs")]
/// Computes character `id`'s spring colliders as wire lines in world space
/// (`Character::collider_lines`: the model matrices of its last update and its world as set
/// now, planes as squares sized to its model's bounds) into the module's one buffer, which the
/// next call replaces and [`sinew_collider_lines_ptr`] and [`sinew_collider_lines_len`] read.
/// 1, or 0 with the message for no such character or no spring set-up (the buffer then as it
/// was).
#[no_mangle]
pub extern "C" fn sinew_character_collider_lines(id: u32) -> u32 {
    character(id, 0, |c, s| {
        if c.spring_set().is_none() {
            return Err("spring bones are not set up".into());
        }
        c.collider_lines_into(ColliderLines::plane_size(c.model.bounds.radius), &mut s.lines);
        Ok(1)
    })
}

#[cfg(feature = "springs")]
/// Set `inside` of the collider lines the last [`sinew_character_collider_lines`] computed (0
/// the colliders that keep the tails out, 1 those that keep them in): its address and its
/// length in floats (`Vec3` is `repr(C)`: a line is two points of three floats); null and 0
/// with the message for another `inside`.
fn collider_line_set(inside: u32) -> (*const f32, usize) {
    with(|s| {
        let set = match inside {
            0 => &s.lines.outside,
            1 => &s.lines.inside,
            _ => {
                report(s, format!("no collider line set {inside} (0 outside, 1 inside)"));
                return (core::ptr::null(), 0);
            }
        };
        (set.as_ptr().cast(), set.len() * 6)
    })
}

#[cfg(feature = "springs")]
/// Address of set `inside` of the collider lines the last [`sinew_character_collider_lines`]
/// computed: x, y, z per point, two points per line, as many floats as
/// [`sinew_collider_lines_len`] gives. Valid until that export runs again. Null with the message
/// for another `inside` than 0 (outside) or 1 (inside).
#[no_mangle]
pub extern "C" fn sinew_collider_lines_ptr(inside: u32) -> *const f32 {
    collider_line_set(inside).0
}

#[cfg(feature = "springs")]
/// Length in floats (6 per line) of set `inside` of the collider lines the last
/// [`sinew_character_collider_lines`] computed; 0 for a set without lines, and 0 with the
/// message for another `inside` than 0 or 1.
#[no_mangle]
pub extern "C" fn sinew_collider_lines_len(inside: u32) -> usize {
    collider_line_set(inside).1
}

/// Draw part `part` of mesh `mesh`: which output `what` names (0 linear-blend rows, 1
/// dual-quaternion rows, 2 morphed vertices).
fn part_output(c: &Character, mesh: u32, part: u32, what: u32) -> Result<&[f32], String> {
    let (lbs, dqs, morphed) =
        c.part(mesh as usize, part as usize).ok_or_else(|| format!("no part {part} of mesh {mesh}"))?;
    Ok(match what {
        0 => lbs,
        1 => dqs,
        _ => morphed,
    })
}

/// Address of a draw part's output `what` (0 `u_jointMat` rows, 1 `u_jointDQ` rows, 2 its
/// morphed vertices), as of the last update that computed it.
#[no_mangle]
pub extern "C" fn sinew_character_part_ptr(id: u32, mesh: u32, part: u32, what: u32) -> *const f32 {
    character(id, core::ptr::null(), |c, _| part_output(c, mesh, part, what).map(<[f32]>::as_ptr))
}

/// Length in floats of a draw part's output `what` (see [`sinew_character_part_ptr`]).
#[no_mangle]
pub extern "C" fn sinew_character_part_len(id: u32, mesh: u32, part: u32, what: u32) -> usize {
    character(id, 0, |c, _| part_output(c, mesh, part, what).map(<[f32]>::len))
}

#[cfg(test)]
mod tests {
    use super::*;

    static CHARACTER: &[u8] = include_bytes!("../../../core/fixtures/character.sinew");

    /// Opens `bytes` as a model with palettes of `palette` joints (0: refused, with the message).
    pub(super) fn open(bytes: &[u8], palette: usize) -> u32 {
        let p = sinew_alloc(bytes.len());
        // SAFETY: `p` holds `bytes.len()` bytes from `sinew_alloc`.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
            sinew_model_open(p, bytes.len(), palette)
        }
    }

    /// The module's last message.
    pub(super) fn text() -> String {
        // SAFETY: the text's own address and length.
        let bytes = unsafe { std::slice::from_raw_parts(sinew_text_ptr(), sinew_text_len()) };
        String::from_utf8_lossy(bytes).into_owned()
    }

    #[test]
    fn bad_bytes_give_the_command_lines_message_and_keep_what_was_loaded() {
        let good = open(CHARACTER, 64);
        assert_ne!(good, 0);
        assert_eq!(open(&[0x55; 64], 64), 0);
        assert_eq!(text(), "not a .sinew file (bad magic bytes)");
        assert_eq!(open(&CHARACTER[..2000], 64), 0);
        assert_eq!(text(), "header declares 9378 bytes but the data length differs");
        assert!(sinew_model_describe(good) > 0);
        assert!(text().starts_with("{\"joints\":22,"));
        sinew_model_close(good);
    }

    #[test]
    fn the_module_says_whether_it_evaluates_morph_targets_and_dual_quaternions() {
        assert_eq!(sinew_limit(11), if cfg!(feature = "morphs") { 1.0 } else { 0.0 });
        assert_eq!(sinew_limit(12), if cfg!(feature = "dqs") { 1.0 } else { 0.0 });
        assert!(sinew_limit(13).is_nan());
    }

    #[cfg(feature = "graph")]
    #[test]
    fn a_graph_takes_parameters_and_a_refused_one_leaves_it_running() {
        let m = open(CHARACTER, 64);
        let c = sinew_character_new(m);
        assert_eq!(sinew_character_use_graph(c, 0), 1);
        assert_eq!(sinew_character_graph_state(c), 0);
        assert_eq!(sinew_character_set_parameter(c, 0, 2.0), 1);
        assert_eq!(sinew_character_parameter(c, 0), 2.0);
        assert_eq!(sinew_character_advance(c, 1.0 / 60.0), 1);
        let state = sinew_character_graph_state(c);
        assert_eq!(sinew_character_use_graph(c, 3), 0);
        assert_eq!(text(), "no graph 3 (the file has 1)");
        assert_eq!(sinew_character_graph_state(c), state, "a refused graph leaves the running one");
        assert_eq!(sinew_character_parameter(c, 0), 2.0);
        sinew_character_free(c);
        sinew_model_close(m);
    }

    #[cfg(not(feature = "graph"))]
    #[test]
    fn without_the_feature_no_graph_starts() {
        let m = open(CHARACTER, 64);
        let c = sinew_character_new(m);
        assert_eq!(sinew_character_use_graph(c, 0), 0);
        assert_eq!(text(), "this module runs no graphs: load sinew_web_graph.wasm");
        assert_eq!(sinew_character_graph_state(c), -1);
        sinew_character_free(c);
        sinew_model_close(m);
    }

    /// The character with its graph's first state sent to clip 999, which the file lacks: the
    /// section's layout is sound, a rule of the graphs is broken.
    fn character_with_a_broken_graph() -> Vec<u8> {
        use sinew::format::{crc32, CRC_START, GRAPH_PARAMETER_LEN, HEADER_LEN, KIND_GRAPH, SECTION_ENTRY_LEN};
        let mut bytes = CHARACTER.to_vec();
        let u32_at = |b: &[u8], at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize;
        let sections = u32_at(&bytes, HEADER_LEN - 4);
        let entry = (0..sections)
            .map(|i| HEADER_LEN + i * SECTION_ENTRY_LEN)
            .find(|&e| bytes[e..e + 4] == KIND_GRAPH)
            .expect("the character has a graph");
        let body = u32_at(&bytes, entry + 4);
        // Name, initial state, five counts, the parameters, then the first state's record:
        // kind, flags, clip.
        let counts = body + 1 + bytes[body] as usize + 2;
        let parameters = u16::from_le_bytes([bytes[counts], bytes[counts + 1]]) as usize;
        let state = counts + 10 + parameters * GRAPH_PARAMETER_LEN;
        assert_eq!(bytes[state], sinew::format::STATE_CLIP, "the first state plays a clip");
        bytes[state + 2..state + 4].copy_from_slice(&999u16.to_le_bytes());
        let crc = crc32(&bytes[CRC_START..]);
        bytes[CRC_START - 4..CRC_START].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    #[cfg(feature = "graph")]
    #[test]
    fn a_graph_that_breaks_the_rules_is_refused() {
        assert_eq!(open(&character_with_a_broken_graph(), 64), 0);
        assert!(text().starts_with("graph section "), "{}", text());
        assert!(text().contains("state 0"), "{}", text());
    }

    #[cfg(not(feature = "graph"))]
    #[test]
    fn without_the_feature_a_graph_is_listed_and_its_rules_left_to_the_graphs_module() {
        let m = open(&character_with_a_broken_graph(), 64);
        assert_ne!(m, 0, "{}", text());
        assert!(sinew_model_describe(m) > 0);
        assert!(text().contains("\"graphs\":[{\"name\":\"character\",\"states\":["), "{}", text());
        sinew_model_close(m);
    }

    #[test]
    fn a_character_outlives_its_model_handle_and_reports_bad_calls() {
        let m = open(CHARACTER, 64);
        let c = sinew_character_new(m);
        sinew_model_close(m);
        assert_eq!(sinew_character_play(c, 7), 0);
        assert_eq!(text(), "no clip 7 (the file has 2)");
        assert_eq!(sinew_character_crossfade(c, 1, 0.5, 0), 1);
        assert_eq!(sinew_character_advance(c, 0.25), 1);
        assert_eq!(sinew_character_update(c, 1 | 2 | 4), 1);
        assert!((sinew_character_weight(c) - 0.5).abs() < 1e-6);
        assert_eq!(sinew_character_part_len(c, 0, 0, 0), 22 * 12);
        // Dual-quaternion rows where the module computes them, none where it does not.
        assert_eq!(sinew_character_part_len(c, 0, 0, 1), if cfg!(feature = "dqs") { 22 * 16 } else { 0 });
        assert!(!sinew_character_palette(c, 0).is_null());
        assert!(sinew_character_palette(c, 1).is_null());
        assert_eq!(text(), "no skin 1");
        assert_eq!(sinew_character_set_parameter(c, 0, 1.0), 0);
        assert_eq!(text(), "no graph is running");
        // The pose's box: a center inside it, a radius, a floor at its lowest joint.
        let b: Vec<f32> = (0..5).map(|k| sinew_character_bounds(c, k)).collect();
        assert!(b.iter().all(|v| v.is_finite()) && b[3] > 0.0 && b[4] <= b[1], "{b:?}");
        assert!(sinew_character_bounds(c, 5).is_nan());
        assert_eq!(text(), "no bounds component 5");
        sinew_character_free(c);
        assert_eq!(sinew_character_update(c, 1), 0);
        assert_eq!(text(), format!("no character {c}"));
    }

    #[cfg(feature = "springs")]
    #[test]
    fn springs_on_a_model_without_them_are_refused_and_bad_calls_report() {
        let m = open(CHARACTER, 64);
        let c = sinew_character_new(m);
        assert_eq!(sinew_character_springs_setup(c, 0.0, 0, 1), 2);
        assert_eq!(text(), "the model has no spring bones");
        assert_eq!(sinew_character_springs(c, 1), 0);
        assert_eq!(text(), "spring bones are not set up");
        assert!((0..7).all(|k| sinew_character_spring_frame(c, k).is_nan()));
        assert_eq!(sinew_character_spring_joint(c, 0, 0), -1);
        assert_eq!(sinew_character_springs_setup(c + 1, 0.0, 0, 1), 0);
        assert_eq!(text(), format!("no character {}", c + 1));
        assert_eq!(sinew_character_spring_joint(c + 1, 0, 0), -1);
        assert_eq!(sinew_character_collider_lines(c), 0);
        assert_eq!(text(), "spring bones are not set up");
        assert_eq!(sinew_character_collider_lines(c + 1), 0);
        assert_eq!(text(), format!("no character {}", c + 1));
        assert!(sinew_collider_lines_ptr(2).is_null());
        assert_eq!(text(), "no collider line set 2 (0 outside, 1 inside)");
        assert_eq!(sinew_collider_lines_len(2), 0);
        sinew_character_free(c);
        sinew_model_close(m);
    }

    #[cfg(any(feature = "feet", feature = "springs"))]
    #[test]
    fn the_world_moves_the_character_and_refuses_bad_numbers() {
        let m = open(CHARACTER, 64);
        let c = sinew_character_new(m);
        assert_eq!(sinew_character_set_world(c, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0), 0);
        assert_eq!(text(), "the world's translation and rotation are finite numbers and its scale a positive one");
        assert_eq!(sinew_character_set_world(c, f32::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0), 0);
        // A half turn about +Y (an unnormalized quaternion), moved and doubled.
        assert_eq!(sinew_character_set_world(c, 1.0, 2.0, 3.0, 0.0, 2.0, 0.0, 0.0, 2.0), 1);
        let w = with(|s| s.characters[slot(c)].as_ref().map(|c| c.world().to_cols_array()));
        let want = [-2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, -2.0, 0.0, 1.0, 2.0, 3.0, 1.0];
        let w = w.expect("the character");
        assert!(w.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6), "{w:?}");
        assert_eq!(sinew_character_set_world(c + 1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0), 0);
        sinew_character_free(c);
        sinew_model_close(m);
    }

    #[cfg(feature = "feet")]
    /// The heights of the fixture's ankles (joints 16 and 20) after the last update.
    fn ankles(c: u32) -> [f32; 2] {
        // SAFETY: the character's 22 model matrices, 16 floats each.
        let m = unsafe { std::slice::from_raw_parts(sinew_character_joints(c), 22 * 16) };
        [m[16 * 16 + 13], m[20 * 16 + 13]]
    }

    #[cfg(feature = "feet")]
    #[test]
    fn feet_stand_on_the_ground_the_module_answers() {
        let m = open(CHARACTER, 64);
        let c = sinew_character_new(m);
        assert_eq!(sinew_character_feet(c, 1), 0);
        assert_eq!(text(), "foot placement is not set up");
        assert!(sinew_character_feet_weight(c).is_nan() && sinew_character_ground(c, 0.0, 0.0, 0).is_nan());
        assert_eq!(sinew_character_feet_setup(c), 1);
        assert_eq!(sinew_character_set_ground(c, 0.0, 0.0, f32::NAN, 0.0), 0);
        assert_eq!(text(), "the ground's height, edge, step and grade are finite numbers");
        // The viewers' ground: a step on one side of x = 0.02, a slope of grade 0.5 on the other.
        assert_eq!(sinew_character_set_ground(c, 0.1, 0.02, 0.2, 0.5), 1);
        let near = |x: f32, z: f32, want: [f32; 4]| {
            let got = [0, 1, 2, 3].map(|k| sinew_character_ground(c, x, z, k));
            assert!(got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-6), "({x}, {z}): {got:?}, want {want:?}");
        };
        near(-0.3, 1.0, [0.3, 0.0, 1.0, 0.0]);
        let n = 1.25f32.sqrt();
        near(0.3, 1.0, [0.6, 0.0, 1.0 / n, -0.5 / n]);
        assert!(sinew_character_ground(c, 0.0, 0.0, 4).is_nan());
        // Off: the clip's ankles. On at once, over a floor raised by 0.1: both 0.1 higher.
        assert_eq!(sinew_character_set_ground(c, 0.1, 0.0, 0.0, 0.0), 1);
        assert_eq!(sinew_character_update(c, 1), 1);
        assert_eq!(sinew_character_feet_weight(c), 0.0);
        let before = ankles(c);
        assert_eq!(sinew_character_feet(c, 1 | 2), 1);
        assert_eq!(sinew_character_update(c, 1), 1);
        assert_eq!(sinew_character_feet_weight(c), 1.0);
        let after = ankles(c);
        for (a, b) in after.iter().zip(before) {
            assert!((a - b - 0.1).abs() < 1e-4, "{after:?} from {before:?}");
        }
        // Off again, ramping: half way after half the blend time.
        assert_eq!(sinew_character_feet(c, 0), 1);
        assert_eq!(sinew_character_advance(c, 0.125), 1);
        assert_eq!(sinew_character_update(c, 1), 1);
        assert!((sinew_character_feet_weight(c) - 0.5).abs() < 1e-6);
        sinew_character_free(c);
        sinew_model_close(m);
    }
}
