//! FBX bytes (binary or ASCII): ufbx's load from memory, then the importer's conversion to the
//! import model, without a base directory (embedded textures only); an imported rig is baked
//! with the default options and with lossless keys, small palettes and every influence, and
//! whatever bakes must parse and is run through the asset target's whole pipeline. A refusal
//! must be a one-line error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sinew::asset::Asset;
use sinew::limits::MAX_INFLUENCES;
use sinew_offline::bake::{bake, BakeOptions};
use sinew_offline::import::fbx;

fuzz_target!(|data: &[u8]| {
    let rig = match fbx::load_bytes(data, None, "f") {
        Ok(rig) => rig,
        Err(e) => {
            let text = e.to_string();
            assert!(!text.is_empty() && !text.contains('\n'), "message {text:?}");
            return;
        }
    };
    let options = [
        BakeOptions::default(),
        BakeOptions { lossless: true, palette: Some(8), max_influences: MAX_INFLUENCES, ..BakeOptions::default() },
    ];
    for opts in &options {
        if let Ok((bytes, _)) = bake(&rig, opts) {
            if let Err(e) = Asset::parse(&bytes) {
                panic!("the baker wrote a file that does not parse: {e}");
            }
            sinew_fuzz::exercise_asset(&bytes, &[0.0, 0.5, 1.0e3]);
        }
    }
});
