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

/// One timed call per configuration: a single cycle of the levels of detail.
const ONE_CYCLE: bench::BatchTiming = bench::BatchTiming { warm_s: 0.0, rep_s: 0.0, reps: 1 };

#[test]
fn the_batch_crowd_accounts_for_every_instance_each_frame() {
    let model = load("gltf/Fox/Fox.glb");
    let n = 200;
    // Without levels of detail: every instance evaluated every frame, on 1 and 2 threads.
    let (view, off) = bench::batch_crowd(&model, n, false, false, 720, 2, ONE_CYCLE).unwrap();
    assert!(view.is_none());
    assert_eq!(off.iter().map(|r| r.threads).collect::<Vec<_>>(), [1, 2]);
    for r in &off {
        assert_eq!((r.instances, r.lod, r.evaluated, r.shared, r.held), (n, false, n as f64, 0.0, 0.0), "{r:?}");
        assert!(r.frames > 0 && r.frames % bench::LOD_CYCLE == 0, "{r:?}");
        assert!(r.ms_per_frame.is_finite() && r.ms_per_frame > 0.0, "{r:?}");
    }
    // With them: the camera looks at one instance from the framing distance, so that one is
    // at full detail; an instance at level l updates once every 2^l frames after its first
    // frame, in which every instance updates.
    let (view, on) = bench::batch_crowd(&model, n, true, false, 720, 2, ONE_CYCLE).unwrap();
    let v = view.expect("a camera with levels of detail");
    assert_eq!(v.lods.iter().sum::<usize>(), n);
    assert!(v.lods[0] >= 1, "{v:?}");
    assert!((v.focal - 360.0 / 20f32.to_radians().tan()).abs() < 1e-2, "{v:?}");
    let held_per_frame: f64 = v.lods.iter().enumerate().map(|(l, &c)| c as f64 * (1.0 - 0.5f64.powi(l as i32))).sum();
    assert_eq!(on.len(), 2);
    for r in &on {
        assert!(r.lod && r.instances == n, "{r:?}");
        let f = r.frames as f64;
        assert!((r.evaluated + r.shared + r.held - n as f64).abs() < 1e-9 * n as f64, "{r:?}");
        assert!(r.held <= held_per_frame + 1e-9 && r.held >= held_per_frame - n as f64 / f, "{r:?} {v:?}");
        assert!(r.evaluated >= 1.0 && r.evaluated <= n as f64 - r.held + 1e-9, "{r:?}");
        assert!(r.ms_per_frame.is_finite() && r.ms_per_frame > 0.0, "{r:?}");
    }
}
