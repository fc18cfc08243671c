//! `.md5anim` text (optionally followed by NUL and an `.md5mesh`): parse, load, bake, parse.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sinew_fuzz::Md5First;

fuzz_target!(|data: &[u8]| {
    sinew_fuzz::md5_bytes(data, Md5First::Anim);
});
