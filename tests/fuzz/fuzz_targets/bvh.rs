//! BVH text: import (units guessed and given), check the rig, bake, parse the baked file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sinew_fuzz::bvh_bytes(data);
});
