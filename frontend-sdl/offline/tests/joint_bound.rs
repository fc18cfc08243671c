//! Every joint of a baked clip within its bound: the default bake against the raw import (what
//! `sinew dump --raw` and `sinew dump` print as `joint_world`), joint by joint — joints that
//! move no vertex included — on the shared models, and on a rig whose vertex-less leaf (an IK
//! pole target) turns through a large angle.

use sinew::clip::RotationInterpolation;
use sinew::math::{Mat4, Quat, SoaTransform, Transform, Vec3};
use sinew_offline::bake::BakeOptions;
use sinew_offline::clip_error::{joint_error, measure_times, JointErrors};
use sinew_offline::eval::M4;
use sinew_offline::import;
use sinew_offline::model::Model;
use sinew_offline::rig::{
    ChannelTarget, Interpolation, Rig, RigChannel, RigClip, RigJoint, RigMesh, RigPrimitive, RigSkin,
};
use sinew_offline::shells::meters_per_unit;

/// The largest world rotation error the default bake leaves on any joint, radians.
const ROTATION_BOUND: f64 = 1.0e-3;

/// The shared models with joint animation (model, md5 animation), as
/// `tests/assets/manifest.tsv` names them: glTF, md5, FBX and BVH.
const MODELS: [(&str, Option<&str>); 18] = [
    ("gltf/CesiumMan/CesiumMan.glb", None),
    ("gltf/Fox/Fox.glb", None),
    ("gltf/BrainStem/BrainStem.glb", None),
    ("gltf/RiggedFigure/RiggedFigure.glb", None),
    ("gltf/RiggedSimple/RiggedSimple.glb", None),
    ("gltf/SimpleSkin/SimpleSkin.gltf", None),
    ("gltf/RecursiveSkeletons/RecursiveSkeletons.glb", None),
    ("gltf/InterpolationTest/InterpolationTest.glb", None),
    ("gltf/BoxAnimated/BoxAnimated.glb", None),
    ("gltf/AnimatedMorphCube/AnimatedMorphCube.glb", None),
    ("md5/boblamp/boblampclean.md5mesh", Some("md5/boblamp/boblampclean.md5anim")),
    ("ozz/pab_crossarms.glb", None),
    ("fbx/ufbx/blender_279_sausage_7400_binary.fbx", None),
    ("fbx/ufbx/maya_game_sausage_7500_binary_wiggle.fbx", None),
    ("fbx/ufbx/maya_game_sausage_7500_ascii_wiggle.fbx", None),
    ("fbx/assimp/huesitos.fbx", None),
    ("bvh/cmu/01_01.bvh", None),
    ("bvh/bvh_anim/test_simple.bvh", None),
];

/// The model without its materials and images (textures do not change clips; decoding them is
/// slow in debug).
fn load(model: &str, anim: Option<&str>) -> Rig {
    let anim = anim.map(sinew_assets::path);
    let mut rig = import::load(&sinew_assets::path(model), anim.as_deref()).unwrap_or_else(|e| panic!("{model}: {e}"));
    rig.meshes.iter_mut().flat_map(|m| m.primitives.iter_mut()).for_each(|p| p.material = None);
    Rig { images: Vec::new(), materials: Vec::new(), ..rig }
}

/// The world matrices of `model`'s clip `clip` at `t` with `rotation`, as `sinew dump` computes
/// its `joint_world`.
fn joint_world(model: &Model, clip: usize, t: f64, rotation: RotationInterpolation) -> Vec<M4> {
    let mut pose: Vec<SoaTransform<f32>> = Vec::new();
    let mut world: Vec<Mat4<f32>> = Vec::new();
    model.sample(Some(clip), t as f32, rotation, &mut Vec::new(), &mut pose).expect("samples");
    model.world(&pose, &mut world).expect("composes");
    world.iter().map(|m| m.cols.map(|c| c.map(f64::from))).collect()
}

/// Per clip of `rig`, the largest joint errors of its default bake against its raw import
/// (`sinew dump --raw`: every key in `f32`, exact slerp), at every source key time and 0.2,
/// 0.5 and 0.8 of each interval between two (the times the baker measures), in meters and
/// radians.
fn joint_errors(rig: &Rig) -> Vec<(String, JointErrors)> {
    let raw_opts =
        BakeOptions { lossless: true, max_influences: sinew::limits::MAX_INFLUENCES, ..BakeOptions::default() };
    let raw = Model::from_rig(rig, &raw_opts).expect("the raw import bakes");
    let baked = Model::from_rig(rig, &BakeOptions::default()).expect("the default bake");
    let unit = meters_per_unit(rig);
    let mut out = Vec::new();
    for (i, clip) in rig.clips.iter().enumerate() {
        let mut errors = JointErrors::default();
        for t in measure_times(clip) {
            let exact = joint_world(&raw, i, t, RotationInterpolation::Slerp);
            let device = joint_world(&baked, i, t, RotationInterpolation::NlerpCorrected);
            for (j, (a, b)) in exact.iter().zip(&device).enumerate() {
                let (position, rotation) = joint_error(a, b);
                errors.add(&rig.joints[j].name, t, position * unit, rotation);
            }
        }
        out.push((clip.name.clone(), errors));
    }
    out
}

#[test]
fn every_joint_of_the_shared_models_is_within_the_bound_after_the_default_bake() {
    let bound = BakeOptions::default().tolerance;
    let mut failures = Vec::new();
    let (mut worst_position, mut worst_rotation) = (0.0f64, 0.0f64);
    for (model, anim) in MODELS {
        let rig = load(model, anim);
        for (clip, e) in joint_errors(&rig) {
            eprintln!(
                "{model} '{clip}': joint position {:.3e} m ('{}' at {:.4} s), rotation {:.3e} rad ('{}' at {:.4} s)",
                e.position, e.position_joint, e.position_time, e.rotation, e.rotation_joint, e.rotation_time
            );
            worst_position = worst_position.max(e.position);
            worst_rotation = worst_rotation.max(e.rotation);
            if e.position > bound || e.rotation > ROTATION_BOUND {
                failures.push(format!("{model} '{clip}': {e:?}"));
            }
        }
    }
    eprintln!("largest joint errors: position {worst_position:.3e} m, rotation {worst_rotation:.3e} rad");
    assert!(failures.is_empty(), "joints over the bound ({bound} m, {ROTATION_BOUND} rad):\n{}", failures.join("\n"));
}

const IDENTITY: [f32; 16] = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];

fn joint(name: &str, parent: Option<usize>, t: [f32; 3]) -> RigJoint {
    let rest = Transform { translation: Vec3::new(t[0], t[1], t[2]), rotation: Quat::IDENTITY, scale: Vec3::ONE };
    RigJoint { name: name.to_owned(), parent, rest }
}

/// A leg (hip, knee) skinned to a thin box, and a knee pole target: a leaf under the hip that
/// moves no vertex and turns 1.6 rad about z and back over two seconds, as an IK rig's pole
/// target does, while the knee bends a little.
fn pole_rig() -> Rig {
    // Two vertices per joint, 2 cm from its axis: each joint's shell from the mesh is tiny.
    let positions = vec![[0.02, 0.0, 0.0], [-0.02, 0.0, 0.0], [0.02, -0.5, 0.0], [-0.02, -0.5, 0.0]];
    let leg = RigPrimitive {
        positions,
        influences: 1,
        joint_indices: vec![0, 0, 1, 1],
        joint_weights: vec![1.0; 4],
        indices: vec![0, 1, 2, 1, 3, 2],
        color: [1.0; 4],
        ..RigPrimitive::default()
    };
    // The knee's inverse bind: its bind position is 0.5 below the hip.
    let mut knee_bind = IDENTITY;
    knee_bind[13] = 0.5;
    let times: Vec<f32> = (0..=8).map(|k| k as f32 * 0.25).collect();
    let turn = |a: f32| [0.0, 0.0, (a / 2.0).sin(), (a / 2.0).cos()];
    let pole = RigChannel {
        joint: 2,
        target: ChannelTarget::Rotation,
        interpolation: Interpolation::Linear,
        values: times.iter().flat_map(|&t| turn(1.6 * (std::f32::consts::PI * t / 2.0).sin())).collect(),
        times: times.clone(),
    };
    let knee = RigChannel {
        joint: 1,
        target: ChannelTarget::Rotation,
        interpolation: Interpolation::Linear,
        values: times.iter().flat_map(|&t| turn(0.2 * t)).collect(),
        times,
    };
    Rig {
        name: "pole".to_owned(),
        joints: vec![
            joint("hip", None, [0.0, 1.0, 0.0]),
            joint("knee", Some(0), [0.0, -0.5, 0.0]),
            joint("PoleTarget", Some(0), [0.0, -0.5, 0.5]),
        ],
        skins: vec![RigSkin { name: "leg".to_owned(), joints: vec![0, 1], inverse_bind: vec![IDENTITY, knee_bind] }],
        meshes: vec![RigMesh { name: "leg".to_owned(), skin: Some(0), primitives: vec![leg], ..RigMesh::default() }],
        clips: vec![RigClip { name: "swing".to_owned(), channels: vec![pole, knee], weights: Vec::new() }],
        ..Rig::default()
    }
}

#[test]
fn a_vertexless_pole_target_keeps_its_rotation_through_the_default_bake() {
    let rig = pole_rig();
    let bound = BakeOptions::default().tolerance;
    let (_, e) = joint_errors(&rig).pop().expect("one clip");
    eprintln!("pole rig: {e:?}");
    assert!(e.position <= bound && e.rotation <= ROTATION_BOUND, "{e:?}");
    // The pole target's turn survives: at 1 s it is 1.6 rad from its rest rotation.
    let baked = Model::from_rig(&rig, &BakeOptions::default()).expect("bakes");
    let world = joint_world(&baked, 0, 1.0, RotationInterpolation::NlerpCorrected);
    let rest = joint_world(&baked, 0, 0.0, RotationInterpolation::NlerpCorrected);
    let (_, turned) = joint_error(&rest[2], &world[2]);
    let turned = turned.expect("a rotation");
    assert!((turned - 1.6).abs() < 1e-3, "the pole target turned {turned} rad, not 1.6");
}
