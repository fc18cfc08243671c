//! `sinew bench` as a library: the kit's stages on pab_crossarms with the counts the kit
//! expects, and the crowd on Fox. Timing values are only checked for being positive and finite
//! (speed is measured by `../shared/bench/compare.sh`, not asserted in tests).

use std::path::PathBuf;

use sinew_offline::bake::BakeOptions;
use sinew_offline::bench;
use sinew_offline::model::Model;

fn load(rel: &str) -> Model {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/assets").join(rel);
    Model::load(&path, None, &BakeOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn stages_report_the_kit_workloads() {
    let m = bench::run(&load("ozz/pab_crossarms.glb"), 0).unwrap();
    let stages: Vec<(&str, usize)> = m.iter().map(|x| (x.stage, x.count)).collect();
    assert_eq!(
        stages,
        [
            ("sample", 67),
            ("sample_call", 67),
            ("blend", 67),
            ("l2m", 67),
            ("skin", 3934),
            ("skin_unit", 3934),
            ("skin_dqs", 3934),
            ("crowd", 1000)
        ]
    );
    for x in &m {
        assert!(x.ns_per_unit.is_finite() && x.ns_per_unit > 0.0, "{x:?}");
        assert!(x.min_max.0 <= x.min_max.1, "{x:?}");
    }
}

#[test]
fn crowd_updates_every_character_on_one_and_several_threads() {
    let r = bench::crowd(&load("gltf/Fox/Fox.glb"), 16).unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!((r[0].characters, r[0].threads), (16, 1));
    assert!(r[1].threads >= 1);
    for x in &r {
        assert!(x.ms_per_frame.is_finite() && x.ms_per_frame > 0.0, "{x:?}");
        let per_frame = 16.0 * 16.6 / x.ms_per_frame;
        assert!((x.per_60hz_frame - per_frame).abs() <= 1e-9 * per_frame, "{x:?}");
    }
}
