//! `sinew bench` as a library: the kit's stages on pab_crossarms with the counts the kit
//! expects, and the crowd on Fox. Timing values are only checked for being positive and finite
//! (speed is measured by `../shared/bench/compare.sh`, not asserted in tests).

use sinew_offline::bake::BakeOptions;
use sinew_offline::bench;
use sinew_offline::model::Model;

fn load(rel: &str) -> Model {
    let path = sinew_assets::path(rel);
    Model::load(&path, None, &BakeOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn stages_report_the_kit_workloads() {
    let m = bench::run(&load("ozz/pab_crossarms.glb"), 0, 1).unwrap();
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

#[test]
fn the_kit_crowd_gives_the_same_palettes_on_any_number_of_threads() {
    let model = load("gltf/Fox/Fox.glb");
    let run = |threads: usize| {
        let mut crowd = bench::KitCrowd::new(&model, 1, 37).unwrap();
        crowd.run_frames(5, threads).unwrap();
        assert_eq!(crowd.palettes().len(), 37 * crowd.palette_len());
        let bits = crowd.palettes().iter().flat_map(|m| m.to_cols_array()).map(f32::to_bits).collect::<Vec<_>>();
        (bits, 16 * crowd.palette_len())
    };
    let (one, slot) = run(1);
    // Every character's palette moved from the identity matrices it starts as.
    let identity: Vec<u32> = sinew::math::Mat4::<f32>::IDENTITY.to_cols_array().map(f32::to_bits).to_vec();
    assert!(one.chunks(slot).all(|p| p.chunks(16).any(|m| m != identity.as_slice())));
    for threads in [2, 3, 64] {
        assert!(run(threads).0 == one, "{threads} threads");
    }
}
