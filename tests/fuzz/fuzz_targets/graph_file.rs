//! Animation graph JSON for the core's baked character: read, validate, run.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sinew_fuzz::graph_bytes(data);
});
