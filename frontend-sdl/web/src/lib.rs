//! sinew in the browser: the runtime compiled to `wasm32-unknown-unknown`, driven by
//! `js/sinew.js` through a plain C ABI ([`abi`]). No JavaScript glue generator is involved:
//! the module imports nothing and exports functions over numbers and linear-memory addresses.
//!
//! Models and characters are the host layer's ([`sinew_host`]), the one runtime under every
//! front end; this crate adds the ABI, the tables of handles, and the JSON the page reads:
//!
//! - [`model`]: a `.sinew` file opened at the browser's joint capacity, and its description;
//! - [`graph`]: the file's graphs as the page lists them;
//! - [`json`]: the writer of those descriptions.
//!
//! On wasm32 the heap is talc's (see `heap.rs`), smaller than the standard library's dlmalloc.
//!
//! The same code builds for the host, where the tests run. In wasm32 with the feature
//! `trap-panics` (every module `build.sh` builds) the crate has no standard library: a panic
//! traps at once (`unreachable`), with no message formatted and no panic hook.

#![cfg_attr(all(target_family = "wasm", not(target_feature = "atomics"), feature = "trap-panics"), no_std)]

extern crate alloc;

pub mod abi;
pub mod graph;
pub mod json;
pub mod model;

/// A character of the browser runtime: the host layer's, at the browser's capacity.
pub type WebCharacter = sinew_host::Character<sinew_host::limits::WebRig>;

/// The update buffers the browser runtime's characters share.
pub type WebWork = sinew_host::Work<sinew_host::limits::WebRig>;

#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
mod heap;

/// A panic (not expected: every export checks its input) traps: the call ends with a
/// `RuntimeError` in JavaScript, and the module's state is left as the panic found it.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics"), feature = "trap-panics", not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}
