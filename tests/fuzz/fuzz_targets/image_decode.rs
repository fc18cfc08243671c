//! Image bytes (PNG, or JPEG when they start with 0xFF) as the texture of a one-triangle GLB:
//! decode, import, bake, parse the baked file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sinew_fuzz::image_bytes(data);
});
