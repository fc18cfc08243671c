//! `.sinew` bytes: `Asset::parse`, then every view and the whole per-frame pipeline.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sinew_fuzz::asset_bytes(data);
});
