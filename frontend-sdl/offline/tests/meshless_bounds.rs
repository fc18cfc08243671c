//! A model without meshes (a BVH's skeleton) is framed by its joints where its first clip
//! starts, not by its rest pose: CMU's rest pose stands at the origin while the clip lifts the
//! hips to their height, so the rest pose would put the figure below the floor it is shown on.

use sinew::clip::RotationInterpolation;
use sinew::math::Vec3;
use sinew_host::model::{Bounds, Model as HostModel};
use sinew_offline::bake::BakeOptions;
use sinew_offline::model::Model;

#[test]
fn a_meshless_model_is_framed_where_its_first_clip_starts() {
    let path = sinew_assets::path("bvh/cmu/01_01.bvh");
    let model = Model::load(&path, None, &BakeOptions::default()).expect("01_01.bvh bakes");
    assert_eq!(model.asset().num_meshes(), 0);
    let host = HostModel::open::<64>(model.bytes().into(), None).expect("the baked bytes open");
    let start = model.asset().clip(0).expect("one clip").start();
    let (mut cursor, mut pose, mut world) = (Vec::new(), Vec::new(), Vec::new());
    model.sample(Some(0), start, RotationInterpolation::NlerpCorrected, &mut cursor, &mut pose).unwrap();
    model.world(&pose, &mut world).unwrap();
    let points: Vec<Vec3<f32>> = world.iter().map(|m| m.translation()).collect();
    let want = Bounds::of(&points);
    let got = host.bounds;
    for (a, b) in [(got.low, want.low), (got.high, want.high), (got.center, want.center)] {
        assert!((a - b).length() < 1e-4, "bounds {got:?}, joints at the clip's start {want:?}");
    }
    // The clip stands the figure on the ground: its lowest joint near the floor, the head above
    // a meter.
    assert!(got.floor.abs() < 0.2 && got.high.y > 1.0, "{got:?}");
}
