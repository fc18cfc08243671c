//! sinew's glTF importer and baker for the browser: a WebAssembly module (built for
//! `wasm32-unknown-unknown`) that turns the bytes of a `.glb` file, or of a `.gltf` file whose
//! buffers and images are `data:` URIs, into the bytes of a baked `.sinew` file.
//!
//! The module exports a plain C ABI and imports nothing. From JavaScript (see
//! `frontend-sdl/web/js/import.js`):
//!
//! 1. [`sinew_import_alloc`] reserves `len` bytes of the module's memory; the caller copies the
//!    file into them;
//! 2. [`sinew_import`] imports and bakes them, returning 1 on success and 0 on failure;
//! 3. on success, [`sinew_import_result_ptr`] and [`sinew_import_result_len`] give the baked
//!    bytes; on failure, [`sinew_import_error_ptr`] and [`sinew_import_error_len`] give a one-line
//!    UTF-8 message (the text the `sinew` command line prints for the same error). After a
//!    success, [`sinew_import_notes_ptr`] and [`sinew_import_notes_len`] give the import's notes
//!    (what was left out or changed: scene nodes, skins, untextured KTX2 images, ...), one per
//!    line, UTF-8, empty when there are none. All stay valid until the next call of
//!    [`sinew_import`];
//! 4. [`sinew_import_free`] releases the input bytes.
//!
//! The bake uses the options `sinew demo` gives imported files: bone palettes of at most the
//! given number of joints per mesh part and 4 influences per vertex.
//!
//! The importer is built with the Draco decoder (`KHR_draco_mesh_compression`, pure Rust) and
//! without the meshopt decoder (C code that does not build for this target): a file that needs
//! `KHR_meshopt_compression` or `EXT_meshopt_compression` is refused with a message that says
//! so. Files with external buffers or images are refused (there is no
//! file system).
//!
//! Malformed input gives an error message, never a panic: every value read from the file is
//! checked by the importer and the baker. Should a panic happen anyway, the panic hook this
//! module installs stores its message as the error message before the module traps, so the
//! caller can still read it (and should then discard the instance).

use std::cell::RefCell;
use std::sync::Once;

use sinew_offline::bake::{bake, BakeOptions};
use sinew_offline::import::bvh::{self, BvhOptions};
use sinew_offline::import::gltf::load_bytes;

/// The outcome of the last [`sinew_import`] call.
#[derive(Default)]
struct State {
    /// The baked `.sinew` bytes of the last success (empty after a failure).
    result: Vec<u8>,
    /// The message of the last failure (empty after a success).
    error: String,
    /// The import notes of the last success, one per line (empty after a failure).
    notes: String,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// Installs the panic hook once (see the crate documentation).
static HOOK: Once = Once::new();

/// The name the imported rig gets (the file's name is not passed in).
const RIG_NAME: &str = "model";

/// Imports glTF bytes (a GLB container or glTF JSON text whose buffers and images are `data:`
/// URIs), or a BVH file's (its skeleton and its motion as one clip, units guessed as
/// [`bvh::Unit::guess`] does), and bakes them with bone palettes of at most `palette` joints per mesh part (0: no
/// limit) and at most 4 influences per vertex.
///
/// Returns the baked bytes and the import's notes ([`Rig::notes`](sinew_offline::rig::Rig::notes),
/// each on one line).
///
/// # Errors
///
/// A one-line message: the importer's or the baker's error, as the command line prints it.
pub fn import_gltf(bytes: &[u8], palette: u32) -> Result<(Vec<u8>, Vec<String>), String> {
    let rig = if is_bvh(bytes) {
        let text = String::from_utf8_lossy(bytes);
        bvh::parse(RIG_NAME, &text, &BvhOptions::default()).map_err(|e| e.to_string())
    } else {
        load_bytes(bytes, None, RIG_NAME).map_err(|e| e.to_string())
    }
    .map_err(|e| one_line(&e))?;
    let palette = usize::try_from(palette).ok().filter(|&p| p > 0);
    let opts = BakeOptions { palette, max_influences: 4, ..BakeOptions::default() };
    let (baked, _report) = bake(&rig, &opts).map_err(|e| one_line(&e.to_string()))?;
    Ok((baked, rig.notes.iter().map(|n| one_line(n)).collect()))
}

/// Whether `bytes` are a BVH file: text whose first word is `HIERARCHY` (after an optional
/// UTF-8 byte order mark). A GLB starts with `glTF`, glTF JSON with `{`.
fn is_bvh(bytes: &[u8]) -> bool {
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = text.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(text.len());
    text[start..].starts_with(b"HIERARCHY")
}

/// `text` with its line breaks replaced by spaces.
fn one_line(text: &str) -> String {
    text.replace(['\r', '\n'], " ")
}

/// Reserves `len` bytes of memory for the caller to write an input file into, zero-filled.
/// Returns null when the memory cannot be had; release it with [`sinew_import_free`] and the
/// same `len`.
#[no_mangle]
pub extern "C" fn sinew_import_alloc(len: u32) -> *mut u8 {
    let Ok(len) = usize::try_from(len) else { return std::ptr::null_mut() };
    let mut v: Vec<u8> = Vec::new();
    if v.try_reserve_exact(len).is_err() {
        return std::ptr::null_mut();
    }
    v.resize(len, 0);
    Box::into_raw(v.into_boxed_slice()).cast::<u8>()
}

/// Releases memory reserved by [`sinew_import_alloc`]. Null is ignored.
///
/// # Safety
///
/// `ptr` must be null or a pointer [`sinew_import_alloc`] returned for this same `len`, not
/// yet released.
#[no_mangle]
pub unsafe extern "C" fn sinew_import_free(ptr: *mut u8, len: u32) {
    let Ok(len) = usize::try_from(len) else { return };
    if ptr.is_null() {
        return;
    }
    // SAFETY: per this function's contract, `ptr` and `len` are those of a boxed slice that
    // `sinew_import_alloc` leaked with `Box::into_raw`, and it is released only once.
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) });
}

/// Imports and bakes the `len` bytes at `ptr` (see [`import_gltf`]; `palette` 0: no limit).
/// Returns 1 on success (the baked bytes are at [`sinew_import_result_ptr`]) and 0 on failure
/// (the message is at [`sinew_import_error_ptr`]). A null `ptr` is a failure.
///
/// # Safety
///
/// Unless `len` is 0, `ptr` must be null or point to `len` initialized bytes that nothing
/// writes during the call (such as memory from [`sinew_import_alloc`]).
#[no_mangle]
pub unsafe extern "C" fn sinew_import(ptr: *const u8, len: u32, palette: u32) -> u32 {
    HOOK.call_once(install_panic_hook);
    STATE.with(|s| *s.borrow_mut() = State::default());
    let outcome = match usize::try_from(len) {
        Ok(0) => import_gltf(&[], palette),
        _ if ptr.is_null() => Err("no input: the pointer is null".to_owned()),
        // SAFETY: per this function's contract, `ptr` points to `len` initialized bytes that
        // are not written while the slice lives (it does not outlive this call).
        Ok(n) => import_gltf(unsafe { std::slice::from_raw_parts(ptr, n) }, palette),
        Err(_) => Err(format!("{len} bytes do not fit in this platform's memory")),
    };
    // The state is borrowed only here, after the work, so the panic hook can always borrow it.
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        match outcome {
            Ok((bytes, notes)) => {
                s.result = bytes;
                s.notes = notes.join("\n");
                1
            }
            Err(message) => {
                s.error = message;
                0
            }
        }
    })
}

/// Makes a panic's message the error message (see the crate documentation), then runs the
/// default hook.
fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = one_line(&format!("internal error in the importer: {info}"));
        STATE.with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                s.result.clear();
                s.error = message;
            }
        });
        default(info);
    }));
}

/// The baked bytes of the last successful [`sinew_import`] (valid until the next call).
#[no_mangle]
pub extern "C" fn sinew_import_result_ptr() -> *const u8 {
    STATE.with(|s| s.borrow().result.as_ptr())
}

/// The length of [`sinew_import_result_ptr`]'s bytes (0 after a failure).
#[no_mangle]
pub extern "C" fn sinew_import_result_len() -> u32 {
    STATE.with(|s| u32::try_from(s.borrow().result.len()).unwrap_or(0))
}

/// The import notes of the last successful [`sinew_import`], UTF-8, one per line (valid until
/// the next call).
#[no_mangle]
pub extern "C" fn sinew_import_notes_ptr() -> *const u8 {
    STATE.with(|s| s.borrow().notes.as_ptr())
}

/// The length of [`sinew_import_notes_ptr`]'s text in bytes (0 when there are no notes, and
/// after a failure).
#[no_mangle]
pub extern "C" fn sinew_import_notes_len() -> u32 {
    STATE.with(|s| u32::try_from(s.borrow().notes.len()).unwrap_or(0))
}

/// The UTF-8 message of the last failed [`sinew_import`] (valid until the next call).
#[no_mangle]
pub extern "C" fn sinew_import_error_ptr() -> *const u8 {
    STATE.with(|s| s.borrow().error.as_ptr())
}

/// The length of [`sinew_import_error_ptr`]'s message in bytes (0 after a success).
#[no_mangle]
pub extern "C" fn sinew_import_error_len() -> u32 {
    STATE.with(|s| u32::try_from(s.borrow().error.len()).unwrap_or(0))
}

#[cfg(test)]
mod tests;
