//! glTF (GLB or JSON) bytes: import without a base directory, bake, parse the baked file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sinew_fuzz::gltf_bytes(data);
});
