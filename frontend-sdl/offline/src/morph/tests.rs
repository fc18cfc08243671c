//! Morph targets through the pipeline on AnimatedMorphCube: import, bake (lossless and
//! quantized), weights sampled by the core against the rig's `f64` evaluation, and the dump's
//! fields.

use std::path::PathBuf;

use super::*;
use crate::bake::{bake, BakeOptions};
use crate::dump::{dump, DumpOptions};
use crate::eval;
use crate::import::gltf::load_file;
use crate::model::Model;

fn cube_path() -> PathBuf {
    sinew_assets::path("gltf/AnimatedMorphCube/AnimatedMorphCube.glb")
}

#[test]
fn animated_morph_cube_imports_bakes_and_samples() {
    let rig = load_file(&cube_path()).expect("import");
    assert_eq!(rig.meshes.len(), 1);
    let m = &rig.meshes[0];
    assert_eq!((m.num_targets(), m.weights.as_slice(), m.instance), (2, [0.0f32, 0.0].as_slice(), Some(0)));
    let p = &m.primitives[0];
    assert_eq!(p.targets.len(), 2);
    assert!(p.targets.iter().all(|t| t.positions.len() == 24 && t.normals.is_some() && t.tangents.is_some()));
    let clip = &rig.clips[0];
    assert!(clip.channels.is_empty());
    assert_eq!(clip.weights.len(), 1);
    let (start, end) = clip.time_range();
    assert!(start == 0.0 && (end - 4.2).abs() < 1e-5, "the clip spans its weight keys: {start}..{end}");

    for lossless in [true, false] {
        let opts = BakeOptions { lossless, ..BakeOptions::default() };
        let (bytes, report) = bake(&rig, &opts).expect("bake");
        let model = Model::from_bytes("cube", bytes).expect("parse");
        let asset = model.asset();
        let targets = asset.morph_targets(0).expect("targets");
        assert_eq!(targets.num_targets(), 2);
        let c = asset.clip(0).expect("clip");
        assert!((c.end() - 4.2).abs() < 1e-5);
        let mut worst = 0.0f64;
        for i in 0..=84 {
            let t = i as f32 * 0.05;
            let got = sample_weights(&asset, 0, Some(0), t).expect("weights");
            let want = eval::mesh_weights(&rig, 0, Some(clip), f64::from(t));
            for (g, w) in got.iter().zip(&want) {
                worst = worst.max((f64::from(*g) - w).abs());
            }
        }
        eprintln!(
            "AnimatedMorphCube lossless={lossless}: weights vs f64 {worst:.2e}; morph sections {} bytes, bound {:.2e}",
            report.morph_bytes, report.morph_bound
        );
        assert!(worst < if lossless { 1e-6 } else { 1e-4 }, "{worst}");
        assert!(report.morph_bound <= 0.5 * opts.tolerance, "{}", report.morph_bound);
        // The dump shows the weights and the morphed, placed vertices.
        let json =
            dump(&model, &DumpOptions { clip: Some(0), time: 1.0, mesh_node: Some(0), ..DumpOptions::default() })
                .expect("dump");
        let v: serde_json::Value = serde_json::from_str(&json).expect("json");
        assert_eq!(v["morph_weights"].as_array().map(Vec::len), Some(2));
        assert_eq!(v["mesh_positions"].as_array().map(Vec::len), Some(24));
        assert_eq!(v["mesh_positions"], v["skinned_positions"]);
        assert!(dump(&model, &DumpOptions { mesh_node: Some(5), ..DumpOptions::default() }).is_err());
    }
}
