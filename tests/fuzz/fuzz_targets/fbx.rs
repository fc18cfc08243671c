//! FBX bytes (binary or ASCII): ufbx's load from memory, then the importer's conversion to the
//! import model, without a base directory (embedded textures only); an imported rig is baked
//! with the default options and with lossless keys, small palettes and every influence, and
//! whatever bakes must parse and is run through the asset target's whole pipeline. A refusal
//! must be a one-line error. See `sinew_fuzz::fbx_bytes`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sinew_fuzz::fbx_bytes(data));
