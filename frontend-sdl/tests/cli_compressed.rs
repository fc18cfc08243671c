//! `sinew` on compressed glTF as a user runs it: a meshopt-compressed and a quantized model
//! load (`sinew info`), a corrupt meshopt stream and a Draco-compressed file give one error line
//! naming the extension, and exit code 2.

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
    for name in ["RiggedFigure-quantized.glb", "RiggedFigure-meshopt.glb"] {
        let out = sinew(&["info", data(name).to_str().expect("path")]);
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sinew-cli-compressed");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let good = std::fs::read(data("RiggedFigure-meshopt.glb")).expect("model");
    let (json, mut bin) = split_glb(&good);
    // A corrupt stream: the first view's header byte.
    bin[0] ^= 0xff;
    let corrupt = dir.join("corrupt-meshopt.glb");
    std::fs::write(&corrupt, glb_from(&json, &bin)).expect("write");
    assert_fails_naming(&corrupt, "buffer view 0: EXT_meshopt_compression data cannot be decoded");
    // A Draco-compressed file is refused by the extension's name.
    let (json, bin) = split_glb(&good);
    let draco = json.replacen(r#""extensionsRequired":["#, r#""extensionsRequired":["KHR_draco_mesh_compression","#, 1);
    assert_ne!(draco, json);
    let path = dir.join("draco.glb");
    std::fs::write(&path, glb_from(&draco, &bin)).expect("write");
    assert_fails_naming(&path, "requires the extension KHR_draco_mesh_compression");
}
