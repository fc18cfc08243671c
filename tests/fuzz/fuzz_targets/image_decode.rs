//! Image bytes (PNG, JPEG when they start with 0xFF, WebP when they start with `RIFF`) as the
//! texture of a one-triangle GLB:
//! decode, import, bake, parse the baked file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sinew_fuzz::image_bytes(data);
});
