//! `sinew dump` of rigs under an armature scale their inverse bind matrices lack (a centimetre
//! mesh under a 0.01 armature, an FBX export's 100): CesiumMan wrapped in a scaled root node.
//! Dual-quaternion skinning with scale gives the unscaled rig's DQS times the scale (same size
//! and place as LBS), and LBS normals stay unit length.

use std::path::{Path, PathBuf};
use std::process::Command;

use sinew_tests::corpus::gltf::glb_from;

fn cesium_man() -> PathBuf {
    sinew_assets::path("gltf/CesiumMan/CesiumMan.glb")
}

/// The JSON text and BIN chunk of a GLB file.
fn split_glb(bytes: &[u8]) -> (String, Vec<u8>) {
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes")) as usize;
    let json_len = u32_at(12);
    let json = String::from_utf8(bytes[20..20 + json_len].to_vec()).expect("UTF-8 JSON");
    let bin_at = 20 + json_len;
    let bin_len = u32_at(bin_at);
    (json, bytes[bin_at + 8..bin_at + 8 + bin_len].to_vec())
}

/// CesiumMan with its scene's nodes under one new root node of uniform scale `s`.
fn scaled_cesium_man(s: f32) -> Vec<u8> {
    let (json, bin) = split_glb(&std::fs::read(cesium_man()).expect("CesiumMan"));
    let mut v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let scene = v["scene"].as_u64().unwrap_or(0) as usize;
    let roots = v["scenes"][scene]["nodes"].clone();
    let nodes = v["nodes"].as_array_mut().expect("nodes");
    nodes.push(serde_json::json!({"name": "armature scale", "scale": [s, s, s], "children": roots}));
    let root = nodes.len() - 1;
    v["scenes"][scene]["nodes"] = serde_json::json!([root]);
    glb_from(&v.to_string(), &bin)
}

/// `skinned_positions` and `skinned_normals` of `sinew dump` at 0.7 s with `skinning`.
fn dump(path: &Path, skinning: &str) -> (Vec<[f64; 3]>, Vec<[f64; 3]>) {
    let out = Command::new(env!("CARGO_BIN_EXE_sinew"))
        .args(["dump", path.to_str().expect("path"), "--raw", "--time", "0.7", "--skinning", skinning])
        .output()
        .expect("sinew runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let vecs = |key: &str| -> Vec<[f64; 3]> {
        v[key]
            .as_array()
            .expect(key)
            .iter()
            .map(|p| {
                let a: Vec<f64> = p.as_array().expect("vector").iter().filter_map(serde_json::Value::as_f64).collect();
                [a[0], a[1], a[2]]
            })
            .collect()
    };
    (vecs("skinned_positions"), vecs("skinned_normals"))
}

fn largest_extent(p: &[[f64; 3]]) -> f64 {
    (0..3)
        .map(|c| {
            let (lo, hi) = p.iter().fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v[c]), hi.max(v[c])));
            hi - lo
        })
        .fold(0.0, f64::max)
}

#[test]
fn dqs_and_lbs_under_armature_scales() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sinew-cli-scaled");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let (lbs1, _) = dump(&cesium_man(), "lbs");
    let (dqs1, _) = dump(&cesium_man(), "dqs");
    let size = largest_extent(&lbs1);
    for s in [0.01f32, 100.0] {
        let path = dir.join(format!("CesiumMan-scaled-{s}.glb"));
        std::fs::write(&path, scaled_cesium_man(s)).expect("write");
        let (lbs, lbs_n) = dump(&path, "lbs");
        let (dqs, dqs_n) = dump(&path, "dqs");
        let s = f64::from(s);
        // Both methods give the unscaled rig's result times the scale (same size and place),
        // within 1e-5 of the model's size.
        for (scaled, unscaled, what) in [(&lbs, &lbs1, "LBS"), (&dqs, &dqs1, "DQS")] {
            let worst = scaled
                .iter()
                .zip(unscaled.iter())
                .flat_map(|(a, b)| (0..3).map(move |c| (a[c] / s - b[c]).abs()))
                .fold(0.0, f64::max);
            eprintln!(
                "armature scale {s}: {what} vs unscaled × scale, largest difference {:.2e} of the size",
                worst / size
            );
            assert!(worst < 1e-5 * size, "scale {s}, {what}: {worst}");
        }
        assert!((largest_extent(&dqs) / largest_extent(&lbs) - 1.0).abs() < 0.02, "scale {s}: DQS size vs LBS");
        // Unit normals from both methods.
        for (normals, what) in [(&lbs_n, "LBS"), (&dqs_n, "DQS")] {
            let worst = normals
                .iter()
                .map(|n| ((n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt() - 1.0).abs())
                .fold(0.0, f64::max);
            eprintln!("armature scale {s}: {what} normals' largest length error {worst:.2e}");
            assert!(worst < 1e-5, "scale {s}, {what} normals: {worst}");
        }
    }
}
