//! A model without meshes (a BVH's skeleton) is framed by its joints in its pose, not by its
//! rest pose: CMU's rest pose stands at the origin while the clip lifts the hips to their
//! height, so the rest pose would put the figure below the floor it is shown on.

use std::rc::Rc;

use sinew::clip::RotationInterpolation;
use sinew::math::Vec3;
use sinew_host::limits::DesktopRig;
use sinew_host::model::{Bounds, Model as HostModel};
use sinew_host::{Character, Work};
use sinew_offline::bake::BakeOptions;
use sinew_offline::model::Model;

#[test]
fn a_meshless_model_is_framed_by_its_pose() {
    let path = sinew_assets::path("bvh/cmu/01_01.bvh");
    let model = Model::load(&path, None, &BakeOptions::default()).expect("01_01.bvh bakes");
    assert_eq!(model.asset().num_meshes(), 0);
    let host =
        Rc::new(HostModel::open::<{ DesktopRig::SOA }>(model.bytes().into(), None).expect("the baked bytes open"));
    let mut character = Character::<DesktopRig>::new(Rc::clone(&host)).expect("a character plays the clip");
    let mut work = Work::new();
    let start = model.asset().clip(0).expect("one clip").start();
    let (mut cursor, mut pose, mut world) = (Vec::new(), Vec::new(), Vec::new());
    for t in [0.0, 1.5] {
        character.seek(start + t);
        character.update(0, &mut work).expect("the pose updates");
        model.sample(Some(0), start + t, RotationInterpolation::NlerpCorrected, &mut cursor, &mut pose).unwrap();
        model.world(&pose, &mut world).unwrap();
        let points: Vec<Vec3<f32>> = world.iter().map(|m| m.translation()).collect();
        let (want, got) = (Bounds::of(&points), character.pose_bounds());
        for (a, b) in [(got.low, want.low), (got.high, want.high), (got.center, want.center)] {
            assert!((a - b).length() < 1e-4, "at {t} s: pose bounds {got:?}, the joints' box {want:?}");
        }
        // The clip stands the figure on the ground (its lowest joint near the floor, its head
        // above a meter), where the rest pose has it below.
        assert!(got.floor.abs() < 0.2 && got.high.y > 1.0, "{got:?}");
        assert!(host.bounds.floor < -0.5, "rest pose: {:?}", host.bounds);
    }
}
