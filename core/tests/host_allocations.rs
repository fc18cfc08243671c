//! The host example's frames allocate nothing: `core/examples/host.rs`'s own `load`, `setup`
//! and `frame`, run under a global allocator that counts the allocations this thread makes.
//! Loading and setup allocate (the buffers); the example's 240 frames, crossfade included, must
//! not.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

#[allow(dead_code)] // the example's `main`
#[path = "../examples/host.rs"]
mod host;

thread_local! {
    /// Allocations (and reallocations) made by this thread while counting; `None`: not counting.
    static COUNT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The system allocator, counting on threads that asked for it.
struct Counting;

impl Counting {
    fn count() {
        // `try_with`: a thread being torn down has no thread-locals left (and is not counting).
        let _ = COUNT.try_with(|c| c.set(c.get().map(|n| n + 1)));
    }
}

// SAFETY: every call is forwarded to `System` with the caller's arguments unchanged; counting
// touches only a const-initialized thread-local `Cell`, which neither allocates nor unwinds.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::count();
        // SAFETY: the caller's contract for `GlobalAlloc::alloc`, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::count();
        // SAFETY: as `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::count();
        // SAFETY: `ptr` and `layout` come from this allocator, that is from `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as `realloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f`, returning its result and the allocations it made on this thread.
fn counted<T>(f: impl FnOnce() -> T) -> (T, usize) {
    COUNT.with(|c| c.set(Some(0)));
    let out = f();
    let n = COUNT.with(|c| c.replace(None)).unwrap_or(0);
    (out, n)
}

#[test]
fn the_host_examples_frames_allocate_nothing() {
    // The counter counts: a vector's allocation is seen.
    let (v, n) = counted(|| vec![0u8; 16]);
    assert_eq!((v.len(), n), (16, 1));

    let scene = host::load(host::CHARACTER).expect("the built-in character loads");
    let (state, setup_allocations) = counted(|| host::setup(&scene).expect("setup"));
    let mut state = state;
    assert!(setup_allocations > 0, "setup allocates the buffers");
    // The kernels are chosen once per process, on the first job (the environment is read for
    // SINEW_KERNELS then): not a frame's work.
    let _ = sinew::kernels::active();

    let (result, frame_allocations) = counted(|| {
        (1..=host::FRAMES).try_for_each(|number| host::frame(&scene, &mut state, number).map_err(|e| e.to_string()))
    });
    assert_eq!(result, Ok(()));
    assert_eq!(frame_allocations, 0, "allocations in {} frames", host::FRAMES);
    // The frames did their work: the crossfade ran to the run, the mesh was skinned.
    assert_eq!(state.character.weight(1), Some(1.0));
    assert!(state.skinned.iter().all(|p| p.is_finite()) && state.skinned.iter().any(|p| p.y > 1.5));
}
