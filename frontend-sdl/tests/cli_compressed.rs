//! `sinew` on compressed glTF as a user runs it: meshopt-compressed, Draco-compressed and
//! quantized models load (`sinew info`) and bake (`sinew bake`); a corrupt meshopt stream gives
//! one error line naming the buffer view and the extension, a corrupt Draco stream one naming the
//! mesh and the primitive, and exit code 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sinew_tests::corpus::gltf::glb_from;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("offline/tests/data").join(name)
}

fn sinew(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sinew")).args(args).output().expect("sinew runs")
}

/// The JSON text and BIN chunk of a GLB file.
fn split_glb(bytes: &[u8]) -> (String, Vec<u8>) {
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes")) as usize;
    let json_len = u32_at(12);
    let json = String::from_utf8(bytes[20..20 + json_len].to_vec()).expect("UTF-8 JSON");
    let bin_at = 20 + json_len;
    (json, bytes[bin_at + 8..bin_at + 8 + u32_at(bin_at)].to_vec())
}

fn assert_fails_naming(path: &Path, needle: &str) {
    let out = sinew(&["info", path.to_str().expect("path")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(needle), "{err}");
}

#[test]
fn compressed_models_load_and_bad_ones_are_named() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sinew-cli-compressed");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    for name in [
        "RiggedFigure-quantized.glb",
        "RiggedFigure-meshopt.glb",
        "RiggedFigure-draco.glb",
        "RiggedFigure-draco-seq.glb",
        "SimpleSkin-draco.gltf",
    ] {
        let out = sinew(&["info", data(name).to_str().expect("path")]);
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let baked = dir.join(format!("{name}.sinew"));
        let out = sinew(&["bake", data(name).to_str().expect("path"), "-o", baked.to_str().expect("path")]);
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(std::fs::metadata(&baked).expect("baked file").len() > 0);
    }
    let good = std::fs::read(data("RiggedFigure-meshopt.glb")).expect("model");
    let (json, mut bin) = split_glb(&good);
    // A corrupt stream: the first view's header byte.
    bin[0] ^= 0xff;
    let corrupt = dir.join("corrupt-meshopt.glb");
    std::fs::write(&corrupt, glb_from(&json, &bin)).expect("write");
    assert_fails_naming(&corrupt, "buffer view 0: EXT_meshopt_compression data cannot be decoded");
    // A corrupt Draco stream: its magic ("DRACO") zeroed.
    let good = std::fs::read(data("RiggedFigure-draco.glb")).expect("model");
    let at = good.windows(5).position(|w| w == b"DRACO").expect("the stream");
    let mut corrupt = good.clone();
    corrupt[at..at + 5].fill(0);
    let path = dir.join("corrupt-draco.glb");
    std::fs::write(&path, corrupt).expect("write");
    assert_fails_naming(&path, "mesh 0 (\"Proxy\") primitive 0: KHR_draco_mesh_compression data cannot be decoded");
}
