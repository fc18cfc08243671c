use sinew::clip::RotationInterpolation;
use sinew::math::{Mat4, Quat, Vec3};

use super::humanoid::{canonical_bones, Bone};
use super::*;
use crate::bake::BakeOptions;
use crate::builtin::humanoid_rig;
use crate::rig::Rig;

/// The built-in humanoid's joints in order, as VRM bones (`None`: its `root`).
const VRM: [&str; 22] = [
    "root",
    "hips",
    "spine",
    "chest",
    "neck",
    "head",
    "leftShoulder",
    "leftUpperArm",
    "leftLowerArm",
    "leftHand",
    "rightShoulder",
    "rightUpperArm",
    "rightLowerArm",
    "rightHand",
    "leftUpperLeg",
    "leftLowerLeg",
    "leftFoot",
    "leftToes",
    "rightUpperLeg",
    "rightLowerLeg",
    "rightFoot",
    "rightToes",
];

/// The same joints' Mixamo names, unprefixed.
const MIXAMO: [&str; 22] = [
    "root",
    "Hips",
    "Spine",
    "Spine1",
    "Neck",
    "Head",
    "LeftShoulder",
    "LeftArm",
    "LeftForeArm",
    "LeftHand",
    "RightShoulder",
    "RightArm",
    "RightForeArm",
    "RightHand",
    "LeftUpLeg",
    "LeftLeg",
    "LeftFoot",
    "LeftToeBase",
    "RightUpLeg",
    "RightLeg",
    "RightFoot",
    "RightToeBase",
];

/// The same joints' UE4 mannequin names.
const MANNEQUIN: [&str; 22] = [
    "root",
    "pelvis",
    "spine_01",
    "spine_02",
    "neck_01",
    "head",
    "clavicle_l",
    "upperarm_l",
    "lowerarm_l",
    "hand_l",
    "clavicle_r",
    "upperarm_r",
    "lowerarm_r",
    "hand_r",
    "thigh_l",
    "calf_l",
    "foot_l",
    "ball_l",
    "thigh_r",
    "calf_r",
    "foot_r",
    "ball_r",
];

/// The same joints' CMU names (BVH files of the CMU database): `LowerBack` is the spine,
/// `Spine` the chest.
const CMU: [&str; 22] = [
    "root",
    "Hips",
    "LowerBack",
    "Spine",
    "Neck",
    "Head",
    "LeftShoulder",
    "LeftArm",
    "LeftForeArm",
    "LeftHand",
    "RightShoulder",
    "RightArm",
    "RightForeArm",
    "RightHand",
    "LeftUpLeg",
    "LeftLeg",
    "LeftFoot",
    "LeftToeBase",
    "RightUpLeg",
    "RightLeg",
    "RightFoot",
    "RightToeBase",
];

/// The same joints' Biovision names (older BVH files, bvh_anim's `test_mocapbank.bvh`):
/// `LeftCollar` is the shoulder, `LeftShoulder` the upper arm.
const BIOVISION: [&str; 22] = [
    "root",
    "Hips",
    "Chest",
    "Chest2",
    "Neck",
    "Head",
    "LeftCollar",
    "LeftShoulder",
    "LeftElbow",
    "LeftWrist",
    "RightCollar",
    "RightShoulder",
    "RightElbow",
    "RightWrist",
    "LeftHip",
    "LeftKnee",
    "LeftAnkle",
    "LeftToe",
    "RightHip",
    "RightKnee",
    "RightAnkle",
    "RightToe",
];

/// The built-in humanoid with its joints renamed (`prefix` + `names`, `root` kept), with or
/// without its clips.
fn renamed(names: &[&str; 22], prefix: &str, clips: bool) -> Rig {
    let mut rig = humanoid_rig();
    assert_eq!(rig.joints.len(), 22);
    for (j, n) in rig.joints.iter_mut().zip(names) {
        j.name = if *n == "root" { (*n).to_string() } else { format!("{prefix}{n}") };
    }
    if !clips {
        rig.clips.clear();
    }
    rig
}

fn model(rig: &Rig) -> Model {
    Model::from_rig(rig, &BakeOptions::default()).expect("model")
}

/// Asserts every target joint follows the source joint of the same index, hips at 1.
fn assert_identity_map(r: &Retarget<'_>, what: &str) {
    let want: Vec<Option<usize>> = (0..22).map(Some).collect();
    assert_eq!(r.sources(), want.as_slice(), "{what}: {:?}", r.report());
    assert_eq!(r.hips(), (1, 1), "{what}");
    assert!((r.scale() - 1.0).abs() < 1e-6, "{what}: scale {}", r.scale());
}

#[test]
fn canonical_bones_of_each_naming() {
    let vrm = canonical_bones(&VRM);
    assert_eq!(vrm[0], None);
    assert_eq!(vrm[1], Some(Bone::Hips));
    for (prefix, names) in [("mixamorig:", &MIXAMO), ("mixamorig1:", &MIXAMO), ("mixamorig_", &MIXAMO), ("", &MIXAMO)] {
        let prefixed: Vec<String> = names.iter().map(|n| format!("{prefix}{n}")).collect();
        assert_eq!(canonical_bones(&prefixed)[1..], vrm[1..], "mixamo prefix {prefix:?}");
    }
    assert_eq!(canonical_bones(&MANNEQUIN)[1..], vrm[1..], "mannequin");
    for (i, b) in vrm.iter().enumerate().skip(1) {
        assert_eq!(b.map(Bone::vrm_name).as_deref(), Some(VRM[i]));
    }
    // Fingers, and UE5's five spine joints.
    let f = canonical_bones(&["mixamorig:LeftHandIndex2", "leftIndexIntermediate", "index_02_l", "rightLittleDistal"]);
    assert_eq!(f[0], Some(Bone::Finger(true, 1, 1)));
    assert_eq!(f[1], None, "the same bone twice goes to the first joint");
    assert_eq!(canonical_bones(&["index_02_l"])[0], Some(Bone::Finger(true, 1, 1)));
    assert_eq!(f[3].map(Bone::vrm_name).as_deref(), Some("rightLittleDistal"));
    assert_eq!(canonical_bones(&["mixamorig:RightHandPinky3"])[0], Some(Bone::Finger(false, 4, 2)));
    let ue5 = canonical_bones(&["spine_01", "spine_02", "spine_03", "spine_04", "spine_05"]);
    assert_eq!(ue5, vec![Some(Bone::Spine), None, Some(Bone::Chest), None, Some(Bone::UpperChest)]);
    assert_eq!(canonical_bones(&["mixamorigHips", "l_thigh", "Hip"]), vec![None, None, None]);
}

#[test]
fn canonical_bones_of_the_mocap_namings() {
    let vrm = canonical_bones(&VRM);
    assert_eq!(canonical_bones(&CMU)[1..], vrm[1..], "CMU");
    assert_eq!(canonical_bones(&BIOVISION)[1..], vrm[1..], "Biovision");
    // The whole CMU skeleton (01_01.bvh's joints, its End Sites as the importer names them).
    let cmu = [
        "Hips",
        "LHipJoint",
        "LeftUpLeg",
        "LeftLeg",
        "LeftFoot",
        "LeftToeBase",
        "LeftToeBase_end",
        "RHipJoint",
        "LowerBack",
        "Spine",
        "Spine1",
        "Neck",
        "Neck1",
        "Head",
        "Head_end",
        "LeftShoulder",
        "LeftArm",
        "LeftForeArm",
        "LeftHand",
        "LeftFingerBase",
        "LFingers",
        "LThumb",
        "RightHand",
        "RFingers",
        "RThumb",
        "RightHandIndex1",
    ];
    let bones = canonical_bones(&cmu);
    let of = |name: &str| bones[cmu.iter().position(|n| *n == name).unwrap()];
    for (name, bone) in [
        ("Hips", Some(Bone::Hips)),
        ("LHipJoint", None),
        ("RHipJoint", None),
        ("LeftUpLeg", Some(Bone::LeftUpperLeg)),
        ("LeftToeBase", Some(Bone::LeftToes)),
        ("LeftToeBase_end", None),
        ("LowerBack", Some(Bone::Spine)),
        ("Spine", Some(Bone::Chest)),
        ("Spine1", Some(Bone::UpperChest)),
        ("Neck", Some(Bone::Neck)),
        ("Neck1", None),
        ("Head", Some(Bone::Head)),
        ("LeftShoulder", Some(Bone::LeftShoulder)),
        ("LeftArm", Some(Bone::LeftUpperArm)),
        ("LeftForeArm", Some(Bone::LeftLowerArm)),
        ("LeftHand", Some(Bone::LeftHand)),
        ("LeftFingerBase", None),
        ("LFingers", Some(Bone::Finger(true, 1, 0))),
        ("LThumb", Some(Bone::Finger(true, 0, 0))),
        ("RFingers", Some(Bone::Finger(false, 1, 0))),
        ("RThumb", Some(Bone::Finger(false, 0, 0))),
        // The index bone twice (some CMU conversions name it so): the first joint keeps it.
        ("RightHandIndex1", None),
    ] {
        assert_eq!(of(name), bone, "CMU {name}");
    }
    // Without a CMU-only joint the same names are Mixamo's: `Spine` is the spine.
    assert_eq!(
        canonical_bones(&["Hips", "Spine", "Spine1"]),
        vec![Some(Bone::Hips), Some(Bone::Spine), Some(Bone::Chest)]
    );
    // Biovision: `LeftShoulder` is the upper arm only beside a collar or an elbow.
    let bio =
        canonical_bones(&["Hips", "Chest", "Chest2", "Chest3", "LeftCollar", "LeftShoulder", "RightToe", "Spine"]);
    assert_eq!(
        bio,
        vec![
            Some(Bone::Hips),
            Some(Bone::Spine),
            Some(Bone::Chest),
            Some(Bone::UpperChest),
            Some(Bone::LeftShoulder),
            Some(Bone::LeftUpperArm),
            Some(Bone::RightToes),
            None,
        ]
    );
    assert_eq!(canonical_bones(&["LeftShoulder"]), vec![Some(Bone::LeftShoulder)]);
    // bvh_anim's test_simple.bvh is no humanoid.
    assert_eq!(canonical_bones(&["Base", "End", "End_end"]), vec![None, None, None]);
}

#[test]
fn mocap_namings_map_automatically() {
    let vrm = model(&renamed(&VRM, "", false));
    let mixamo = model(&renamed(&MIXAMO, "mixamorig:", false));
    let (cmu, bio) = (model(&renamed(&CMU, "", false)), model(&renamed(&BIOVISION, "", false)));
    assert_identity_map(
        &Retarget::new(&cmu, &mixamo, None, RetargetOptions::default()).expect("cmu→mixamo"),
        "CMU onto Mixamo",
    );
    assert_identity_map(
        &Retarget::new(&bio, &vrm, None, RetargetOptions::default()).expect("bio→vrm"),
        "Biovision onto VRM",
    );
    assert_identity_map(
        &Retarget::new(&cmu, &bio, None, RetargetOptions::default()).expect("cmu→bio"),
        "CMU onto Biovision",
    );
}

/// The shared CMU capture's humanoid bones map onto the Mixamo-named humanoid automatically. Its
/// hips rest at the origin (the motion holds their height), so the hips' scale is taken from
/// their height where the clip starts.
#[test]
fn the_cmu_capture_retargets_onto_a_mixamo_humanoid() {
    let target = model(&renamed(&MIXAMO, "mixamorig:", false));
    let source = Model::load(&sinew_assets::path("bvh/cmu/01_01.bvh"), None, &BakeOptions::default()).unwrap();
    let r = Retarget::new(&source, &target, None, RetargetOptions::default()).unwrap();
    assert!(r.scale() > 0.5 && r.scale() < 2.0, "a humanoid's hips over a capture's: {}", r.scale());
    let source_name = |k: usize| r.sources()[k].and_then(|s| source.skeleton().name(s)).unwrap_or_default().to_owned();
    let pairs: Vec<(&str, String)> = MIXAMO.iter().enumerate().skip(1).map(|(k, n)| (*n, source_name(k))).collect();
    let want = [
        ("Hips", "Hips"),
        ("Spine", "LowerBack"),
        ("Spine1", "Spine"),
        ("Neck", "Neck"),
        ("Head", "Head"),
        ("LeftShoulder", "LeftShoulder"),
        ("LeftArm", "LeftArm"),
        ("LeftForeArm", "LeftForeArm"),
        ("LeftHand", "LeftHand"),
        ("RightShoulder", "RightShoulder"),
        ("RightArm", "RightArm"),
        ("RightForeArm", "RightForeArm"),
        ("RightHand", "RightHand"),
        ("LeftUpLeg", "LeftUpLeg"),
        ("LeftLeg", "LeftLeg"),
        ("LeftFoot", "LeftFoot"),
        ("LeftToeBase", "LeftToeBase"),
        ("RightUpLeg", "RightUpLeg"),
        ("RightLeg", "RightLeg"),
        ("RightFoot", "RightFoot"),
        ("RightToeBase", "RightToeBase"),
    ];
    let want: Vec<(&str, String)> = want.iter().map(|(t, s)| (*t, (*s).to_owned())).collect();
    assert_eq!(pairs, want, "{:?}", r.report());
    assert_eq!(source.skeleton().name(r.hips().1), Some("Hips"));
}

#[test]
fn mixamo_prefixes_map_automatically() {
    let (s, t) = (model(&renamed(&MIXAMO, "mixamorig1:", false)), model(&renamed(&MIXAMO, "mixamorig:", false)));
    let r = Retarget::new(&s, &t, None, RetargetOptions::default()).expect("retarget");
    assert_identity_map(&r, "mixamorig1: onto mixamorig:");
    let report = r.report();
    assert_eq!(report[1], "mixamorig:Hips <- mixamorig1:Hips");
    assert_eq!(report[22], "hips mixamorig:Hips <- mixamorig1:Hips");
    assert!(report[23].starts_with("scale 1"), "{}", report[23]);
    let u = model(&renamed(&MIXAMO, "mixamorig_", false));
    assert_identity_map(&Retarget::new(&u, &t, None, RetargetOptions::default()).expect("retarget"), "mixamorig_");
    assert_eq!(r.joints().len(), 22);
    assert!(r.joints().iter().enumerate().all(|(k, j)| usize::from(j.source) == k));
    assert_eq!((r.root().target, r.root().source, r.root().in_place), (1, 1, false));
}

#[test]
fn vrm_and_mannequin_map_automatically() {
    let (vrm, ue) = (model(&renamed(&VRM, "", false)), model(&renamed(&MANNEQUIN, "", false)));
    let mixamo = model(&renamed(&MIXAMO, "", false));
    assert_identity_map(&Retarget::new(&ue, &vrm, None, RetargetOptions::default()).expect("ue→vrm"), "ue onto vrm");
    assert_identity_map(&Retarget::new(&vrm, &ue, None, RetargetOptions::default()).expect("vrm→ue"), "vrm onto ue");
    assert_identity_map(
        &Retarget::new(&mixamo, &ue, None, RetargetOptions::default()).expect("mixamo→ue"),
        "mixamo onto ue",
    );
}

#[test]
fn exact_names_map_and_hips_fall_back_to_the_nearest_mapped_skin_joint() {
    let mut rig = humanoid_rig();
    rig.clips.clear();
    let m = model(&rig);
    // The built-in names (`l_thigh`, ...) are no humanoid naming, but "hips" is VRM's.
    let r = Retarget::new(&m, &m, None, RetargetOptions::default()).expect("retarget");
    assert_identity_map(&r, "exact");
    // Without any humanoid name, the hips are the mapped skin joint nearest the root: with
    // the root unmapped, that is joint 1 again.
    let mut plain = humanoid_rig();
    plain.clips.clear();
    for j in &mut plain.joints {
        j.name = format!("j_{}", j.name);
    }
    let mut other = plain.clone();
    other.joints[0].name = "other_root".into();
    let (p, o) = (model(&plain), model(&other));
    let r = Retarget::new(&p, &o, None, RetargetOptions::default()).expect("retarget");
    assert_eq!(r.sources()[0], None);
    assert_eq!(r.hips(), (1, 1));
    assert_eq!(r.report()[0], "other_root at rest");
}

#[test]
fn same_rest_poses_give_the_source_pose() {
    let src = model(&renamed(&VRM, "", true));
    let tgt = model(&renamed(&MIXAMO, "mixamorig:", false));
    let r = Retarget::new(&src, &tgt, None, RetargetOptions::default()).expect("retarget");
    let walk = src.find_clip("walk").expect("walk");
    let mut pose = Vec::new();
    src.sample(Some(walk), 0.37, RotationInterpolation::Slerp, &mut Vec::new(), &mut pose).expect("sample");
    let out = r.pose(&pose).expect("pose");
    let (mut a, mut b) = (Vec::new(), Vec::new());
    src.world(&pose, &mut a).expect("world");
    tgt.world(&out, &mut b).expect("world");
    // The root keeps its rest translation (the walk moves it forward): the hips' world
    // displacement carries that motion, and every joint from the hips down matches.
    for (k, (x, y)) in a.iter().zip(&b).enumerate().skip(1) {
        let d = (x.translation() - y.translation()).length();
        assert!(d < 1e-5, "joint {k}: {d}");
        let rot = |m: &Mat4<f32>| {
            Quat::from_mat3_cols(core::array::from_fn(|c| Vec3::new(m.cols[c][0], m.cols[c][1], m.cols[c][2])))
        };
        let r = rot(x).dot(rot(y)).abs();
        assert!(r > 1.0 - 1e-6, "joint {k}: rotation dot {r}");
    }
    // In place: the hips keep their rest horizontal position.
    let opts = RetargetOptions { in_place: true, scale: None };
    let out = Retarget::new(&src, &tgt, None, opts).expect("retarget").pose(&pose).expect("pose");
    tgt.world(&out, &mut b).expect("world");
    let rest = rest_model(&tgt).expect("rest");
    let (h, h0) = (b[1].translation(), rest[1].translation());
    assert!((h.x - h0.x).abs() < 1e-6 && (h.z - h0.z).abs() < 1e-6, "{h:?} vs {h0:?}");
    assert!((h.y - a[1].translation().y).abs() < 1e-5);
}

#[test]
fn scale_is_the_ratio_of_hips_heights() {
    let src = model(&renamed(&VRM, "", false));
    let mut big = renamed(&VRM, "", false);
    big.joints[1].rest.translation = Vec3::new(0.0, 1.9, 0.0);
    let big = model(&big);
    let r = Retarget::new(&src, &big, None, RetargetOptions::default()).expect("retarget");
    assert!((r.scale() - 2.0).abs() < 1e-6, "{}", r.scale());
    let r = Retarget::new(&src, &big, None, RetargetOptions { scale: Some(0.5), in_place: false }).expect("retarget");
    assert_eq!(r.scale(), 0.5);
    let e = Retarget::new(&src, &big, None, RetargetOptions { scale: Some(f32::NAN), in_place: false });
    assert_eq!(e.err(), Some(RetargetError::InvalidScale));
    let mut low = renamed(&VRM, "", false);
    low.joints[1].rest.translation = Vec3::new(0.0, -0.2, 0.0);
    let low = model(&low);
    let e = Retarget::new(&src, &low, None, RetargetOptions::default()).expect_err("error");
    assert!(matches!(&e, RetargetError::HipsHeight { side: Side::Target, name, .. } if name == "hips"), "{e}");
    assert!(e.to_string().contains("height"), "{e}");
    assert!(Retarget::new(&low, &src, None, RetargetOptions { scale: Some(1.0), in_place: false }).is_ok());
}

#[test]
fn map_files_parse() {
    let text = "# target = source\n\n  Left Arm = mixamorig:LeftArm # trailing comment\nhips=Hips\n@hips  hips \n";
    let m = JointMap::parse(text).expect("map");
    assert_eq!(
        m.pairs,
        vec![("Left Arm".to_string(), "mixamorig:LeftArm".to_string()), ("hips".to_string(), "Hips".to_string())]
    );
    assert_eq!(m.hips.as_deref(), Some("hips"));
    assert_eq!(JointMap::parse("").expect("empty"), JointMap::default());
    let cases: [(&str, MapParseError); 6] = [
        ("a = b\nnonsense\n", MapParseError::MissingEquals { line: 2 }),
        (" = b", MapParseError::EmptyName { line: 1 }),
        ("a =  # no source", MapParseError::EmptyName { line: 1 }),
        ("a = b\n#\na = c", MapParseError::DuplicateTarget { line: 3, name: "a".into() }),
        ("@root x", MapParseError::BadDirective { line: 1 }),
        ("@hips a\n@hips b", MapParseError::DuplicateHips { line: 2 }),
    ];
    for (text, want) in cases {
        let e = JointMap::parse(text).err();
        assert_eq!(e.as_ref(), Some(&want), "{text:?}");
        let msg = want.to_string();
        assert!(msg.starts_with("line ") && !msg.contains('\n'), "{msg}");
    }
    assert_eq!(JointMap::parse("@hips").err(), Some(MapParseError::BadDirective { line: 1 }));
}

#[test]
fn explicit_maps_and_their_errors() {
    let (s, t) = (model(&renamed(&MIXAMO, "mixamorig:", false)), model(&renamed(&VRM, "", false)));
    let map = |text: &str| JointMap::parse(text).expect("map");
    let opts = RetargetOptions::default();
    // Only the named joints are mapped; the hips are the mapped skin joint nearest the root.
    let m = map("leftUpperLeg = mixamorig:LeftUpLeg\nspine = mixamorig:Spine\nchest = mixamorig:Spine1");
    let r = Retarget::new(&s, &t, Some(&m), opts).expect("retarget");
    assert_eq!(r.hips(), (2, 2));
    assert_eq!(r.sources().iter().filter(|x| x.is_some()).count(), 3);
    assert_eq!(r.sources()[14], Some(14));
    // `@hips` picks them.
    let m = map("@hips chest\nleftUpperLeg = mixamorig:LeftUpLeg\nspine = mixamorig:Spine\nchest = mixamorig:Spine1");
    assert_eq!(Retarget::new(&s, &t, Some(&m), opts).expect("retarget").hips(), (3, 3));
    let err = |text: &str| Retarget::new(&s, &t, Some(&map(text)), opts).expect_err("an error");
    assert_eq!(
        err("hips = mixamorig:Hips\nnope = mixamorig:Spine"),
        RetargetError::UnknownJoint { side: Side::Target, name: "nope".into() }
    );
    assert_eq!(err("hips = Hips"), RetargetError::UnknownJoint { side: Side::Source, name: "Hips".into() });
    assert_eq!(err("@hips hips\nspine = mixamorig:Spine"), RetargetError::HipsUnmapped { name: "hips".into() });
    assert_eq!(err("@hips pelvis\nspine = mixamorig:Spine").to_string(), "the target has no joint named 'pelvis'");
    assert_eq!(err("# nothing"), RetargetError::NoJointInCommon);
    // Automatic mapping with nothing in common.
    let mut other = humanoid_rig();
    other.clips.clear();
    for j in &mut other.joints {
        j.name = format!("x_{}", j.name);
    }
    let other = model(&other);
    assert_eq!(Retarget::new(&s, &other, None, opts).err(), Some(RetargetError::NoJointInCommon));
    for e in [err("# nothing"), err("hips = Hips")] {
        assert!(!e.to_string().contains('\n'));
    }
}

#[test]
fn joints_above_the_skin_root_stay_at_rest() {
    // An armature node above the humanoid, rotated and scaled, outside the skin.
    let mut rig = renamed(&VRM, "", false);
    for j in &mut rig.joints {
        j.parent = Some(j.parent.map_or(0, |p| p + 1));
    }
    let armature = crate::rig::RigJoint {
        name: "Armature".into(),
        parent: None,
        rest: sinew::math::Transform::new(Vec3::ZERO, Quat::from_axis_angle(Vec3::X, 0.3), Vec3::splat(2.0)),
    };
    rig.joints.insert(0, armature);
    for s in &mut rig.skins {
        for j in &mut s.joints {
            *j += 1;
        }
    }
    for m in &mut rig.meshes {
        m.node = m.node.map(|n| n + 1);
        m.instance = m.instance.map(|n| n + 1);
    }
    let t = model(&rig);
    let s = model(&renamed(&VRM, "", false));
    let r = Retarget::new(&s, &t, None, RetargetOptions::default()).expect("retarget");
    assert_eq!(r.sources()[0], None);
    assert_eq!(r.hips(), (2, 1));
    let m = JointMap::parse("Armature = root\nhips = hips").expect("map");
    assert_eq!(
        Retarget::new(&s, &t, Some(&m), RetargetOptions::default()).err(),
        Some(RetargetError::AboveSkinRoot { name: "Armature".into() })
    );
    // The rest pose maps onto the rest pose.
    let out = r.pose(s.skeleton().rest_pose()).expect("pose");
    let (mut a, b) = (Vec::new(), rest_model(&t).expect("rest"));
    t.world(&out, &mut a).expect("world");
    for (k, (x, y)) in a.iter().zip(&b).enumerate() {
        let d = (x.translation() - y.translation()).length();
        assert!(d < 1e-5, "joint {k}: {d}");
    }
}
