//! The module's global allocator: talc over the wasm memory, grown with `memory.grow` as
//! needed, freed blocks reused (models and characters are freed and replaced as the page
//! loads other files). Its module is a fraction of the size of the standard library's
//! dlmalloc.
//!
//! Talc marks its entry points `#[inline]`; under LTO each `Box`, `Vec` and `String` drop and
//! growth then carried its own copy of the free-list code. [`Outlined`] keeps one copy of each
//! entry point, called from everywhere. The frame's buffers keep their capacity from frame to
//! frame, so allocations come with loading files and making characters (and morphed meshes'
//! scratch), where one call more is nothing next to the allocation itself.

use core::alloc::{GlobalAlloc, Layout};

#[global_allocator]
static HEAP: Outlined = Outlined(talc::wasm::new_wasm_dynamic_allocator());

/// Talc's single-threaded wasm allocator behind entry points that are never inlined.
struct Outlined(talc::wasm::WasmDynamicTalc);

// SAFETY: each method forwards its arguments unchanged to talc's `GlobalAlloc`, whose
// contract is the same; the caller's obligations pass through as they are.
unsafe impl GlobalAlloc for Outlined {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { self.0.alloc(layout) }
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator with `layout` (the caller's contract).
        unsafe { self.0.dealloc(ptr, layout) }
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout`, `new_size` is valid for it.
        unsafe { self.0.realloc(ptr, layout, new_size) }
    }
}
