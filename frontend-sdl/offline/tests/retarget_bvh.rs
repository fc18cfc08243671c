//! A CMU motion-capture BVH plays on the glTF sample humanoids through the joint maps in
//! `frontend-sdl/tests/data`: CMU's rest pose has its hips at the origin, so the hips' height
//! that scales the motion is taken where the clip starts.

use sinew::clip::RotationInterpolation;
use sinew_offline::bake::BakeOptions;
use sinew_offline::model::Model;
use sinew_offline::retarget::{JointMap, Retarget, RetargetOptions};

fn load(path: &str) -> Model {
    Model::load(&sinew_assets::path(path), None, &BakeOptions::default()).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn map(name: &str) -> JointMap {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/").to_owned() + name;
    JointMap::parse(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).unwrap()
}

#[test]
fn cmu_walks_on_riggedfigure_and_cesiumman() {
    let cmu = load("bvh/cmu/01_01.bvh");
    let start = cmu.asset().clip(0).unwrap().start();
    let end = cmu.asset().clip(0).unwrap().end();
    let (mut cursor, mut pose, mut world) = (Vec::new(), Vec::new(), Vec::new());
    cmu.sample(Some(0), start, RotationInterpolation::NlerpCorrected, &mut cursor, &mut pose).unwrap();
    cmu.world(&pose, &mut world).unwrap();
    for (target, file) in [
        ("gltf/RiggedFigure/RiggedFigure.glb", "riggedfigure-from-cmu.map"),
        ("gltf/CesiumMan/CesiumMan.glb", "cesiumman-from-cmu.map"),
    ] {
        let model = load(target);
        let r = Retarget::new(&cmu, &model, Some(&map(file)), RetargetOptions::default())
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(r.sources().iter().flatten().count(), 19, "{target}: every joint of the map is mapped");
        let (hips, source_hips) = r.hips();
        let mut rest = Vec::new();
        let (mut tc, mut tp) = (Vec::new(), Vec::new());
        model.sample(None, 0.0, RotationInterpolation::NlerpCorrected, &mut tc, &mut tp).unwrap();
        model.world(&tp, &mut rest).unwrap();
        let (target_height, source_height) = (rest[hips].translation().y, world[source_hips].translation().y);
        assert!(source_height > 0.5, "CMU's hips stand {source_height} m high where the clip starts");
        assert!((r.scale() - target_height / source_height).abs() < 1e-5, "{target}: scale {}", r.scale());
        // Through the walk, the target's hips stay near their standing height, and its lowest
        // mapped joint (a foot) near the ground.
        for k in 0..=8 {
            let t = start + (end - start) * k as f32 / 8.0;
            cmu.sample(Some(0), t, RotationInterpolation::NlerpCorrected, &mut cursor, &mut pose).unwrap();
            let posed = r.pose(&pose).unwrap();
            let mut w = Vec::new();
            model.world(&posed, &mut w).unwrap();
            let y = w[hips].translation().y;
            assert!(
                (y - target_height).abs() < 0.25 * target_height,
                "{target} at {t} s: hips at {y}, standing {target_height}"
            );
            let mapped = w.iter().zip(r.sources()).filter(|(_, s)| s.is_some());
            let low = mapped.map(|(m, _)| m.translation().y).fold(f32::INFINITY, f32::min);
            assert!(low.abs() < 0.2 * target_height, "{target} at {t} s: lowest mapped joint at {low}");
        }
    }
}
