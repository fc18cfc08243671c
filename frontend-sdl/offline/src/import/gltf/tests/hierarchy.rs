//! The node hierarchy: graph errors, names, scenes and matrix nodes.

use super::*;

#[test]
fn hierarchy_errors() {
    let mut cycle = Tiny::new();
    cycle.nodes = r#"[{"children":[1]},{"children":[0]},{"mesh":0,"skin":0}]"#.into();
    cycle.scenes = r#"[{"nodes":[2]}]"#.into();
    assert!(matches!(cycle.load(), Err(GltfError::HierarchyCycle { .. })), "{:?}", cycle.load());
    let mut own = Tiny::new();
    own.nodes = r#"[{"children":[0]},{},{"mesh":0,"skin":0}]"#.into();
    assert!(matches!(own.load(), Err(GltfError::HierarchyCycle { node: 0 })));
    let mut two = Tiny::new();
    two.nodes = r#"[{"children":[1]},{},{"mesh":0,"skin":0,"children":[1]}]"#.into();
    assert!(matches!(two.load(), Err(GltfError::MultipleParents { node: 1 })));
    let mut twice = Tiny::new();
    twice.nodes = r#"[{"children":[1,1]},{},{"mesh":0,"skin":0}]"#.into();
    assert!(matches!(twice.load(), Err(GltfError::MultipleParents { node: 1 })));
    let mut not_root = Tiny::new();
    not_root.scenes = r#"[{"nodes":[0,1,2]}]"#.into();
    assert!(matches!(not_root.load(), Err(GltfError::NotARoot { scene: 0, node: 1 })));
    // A skinned mesh in the scene whose skin's joints are not.
    let mut outside = Tiny::new();
    outside.scenes = r#"[{"nodes":[2]}]"#.into();
    assert!(matches!(outside.load(), Err(GltfError::SkinJointNotInScene { skin: 0, node: 0 })));
    // Too many nodes.
    let mut many = Tiny::new();
    let mut nodes = String::from(r#"[{"name":"root","children":[1]},{},{"mesh":0,"skin":0}"#);
    nodes.push_str(&",{}".repeat(MAX_NODES));
    nodes.push(']');
    many.nodes = nodes;
    assert!(matches!(many.load(), Err(GltfError::TooManyNodes { count, limit: MAX_NODES }) if count == MAX_NODES + 3));
}

#[test]
fn names_scenes_and_channel_notes() {
    let mut tiny = Tiny::new();
    // Duplicate and missing names; an extra node outside the scene; a second rotation
    // channel for the same node; a channel on a node outside the scene.
    tiny.nodes = r#"[{"name":"a","children":[1]},{"name":"a"},{"mesh":0,"skin":0},{"name":"stray"}]"#.into();
    tiny.extra_channels = r#",{"sampler":0,"target":{"node":1,"path":"rotation"}},
            {"sampler":0,"target":{"node":3,"path":"rotation"}}"#
        .into();
    let rig = tiny.load().unwrap();
    let names: Vec<&str> = rig.joints.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["a", "a#1", "node2"]);
    assert_eq!(rig.clips[0].channels.len(), 1);
    assert!(has_note(&rig, "first one was kept"));
    assert!(has_note(&rig, "not in the scene"));
    assert!(has_note(&rig, "1 nodes are not in the imported scene"));
    // No default scene: all scenes are imported.
    let mut scenes = Tiny::new();
    scenes.scenes = r#"[{"nodes":[0]},{"nodes":[2]}]"#.into();
    let text = scenes.gltf().replacen(r#""scene":0,"#, "", 1);
    let rig = load_bytes(text.as_bytes(), None, "t").unwrap();
    assert_eq!(rig.joints.len(), 3);
    assert!(has_note(&rig, "all 2 scenes"));
}

#[test]
fn matrix_nodes() {
    let q = Quat::from_axis_angle(Vec3::new(0.0f32, 0.6, 0.8), 0.7);
    let exact = Mat4::from_trs(Vec3::new(1.0, -2.0, 3.0), q, Vec3::new(2.0, 0.5, 1.5));
    let d = decompose(&exact.cols);
    assert!(d.error < 1.0e-6 && !d.projective);
    let back = d.transform.to_mat4();
    for c in 0..4 {
        for r in 0..4 {
            assert!(close(back.cols[c][r], exact.cols[c][r], 1.0e-5));
        }
    }
    // A mirror: the reflection goes into a negative scale and the matrix is reproduced.
    let mut mirror = exact;
    for r in 0..3 {
        mirror.cols[1][r] = -mirror.cols[1][r];
    }
    let d = decompose(&mirror.cols);
    assert!(d.error < 1.0e-6, "{}", d.error);
    assert!(d.transform.scale.x * d.transform.scale.y * d.transform.scale.z < 0.0);
    // A zero scale axis.
    let flat = Mat4::from_trs(Vec3::ZERO, q, Vec3::new(1.0, 0.0, 2.0));
    let d = decompose(&flat.cols);
    assert!(d.error < 1.0e-6, "{}", d.error);
    assert!(d.transform.rotation.is_normalized(1.0e-4));
    // Shear: kept as the closest TRS, with a note from the importer.
    let mut tiny = Tiny::new();
    tiny.nodes = r#"[{"name":"root","matrix":[1,0,0,0, 0.5,1,0,0, 0,0,1,0, 0,1,0,1],"children":[1]},
                        {"name":"bone","translation":[0,1,0]},{"mesh":0,"skin":0}]"#
        .into();
    let rig = tiny.load().unwrap();
    assert!(has_note(&rig, "shear"), "{:?}", rig.notes);
    let root = rig.joints[0].rest;
    assert_eq!(root.translation, Vec3::new(0.0, 1.0, 0.0));
    let d = decompose(&[[1.0, 0.0, 0.0, 0.0], [0.5, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]);
    assert!(d.error > 0.1 && d.error < 0.5, "{}", d.error);
}
