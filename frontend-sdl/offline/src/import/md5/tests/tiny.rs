//! The tiny files: exact positions, normals, winding and keys; the tokenizer; unique names.

use super::*;

#[test]
fn tiny_mesh_positions_normals_and_winding() {
    let rig = load(TINY_MESH, None, "tiny").unwrap();
    assert_eq!(rig.name, "tiny");
    assert!(rig.clips.is_empty());
    assert_eq!(rig.meshes[0].name, "skin");
    let p = &rig.meshes[0].primitives[0];
    let expected = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    for (got, want) in p.positions.iter().zip(expected) {
        for k in 0..3 {
            assert!((got[k] - want[k]).abs() < 1e-6, "{got:?} vs {want:?}");
        }
    }
    // File `0 2 1` (clockwise from +Z) becomes `0 1 2` (counter-clockwise); normals +Z.
    assert_eq!(p.indices, [0, 1, 2]);
    for n in p.normals.as_ref().unwrap() {
        assert!((n[2] - 1.0).abs() < 1e-6 && n[0].abs() < 1e-6 && n[1].abs() < 1e-6, "{n:?}");
    }
    assert_eq!(p.influences, 2);
    assert_eq!(p.joint_indices, [0, 0, 0, 0, 0, 1]);
    assert_eq!(p.joint_weights, [1.0, 0.0, 1.0, 0.0, 0.5, 0.5]);
    // Child rest: model (0,0,1) with rotation -90° about Z under an identity root (w = -1).
    let child = rig.joints[1].rest;
    assert_eq!(child.translation, Vec3::new(0.0, 0.0, 1.0));
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let expect = Quat::new(0.0, 0.0, h, -h);
    assert!((child.rotation.dot(expect).abs() - 1.0).abs() < 1e-6, "{:?}", child.rotation);
    assert!((child.rotation.rotate(Vec3::X) - Vec3::new(0.0, -1.0, 0.0)).max_abs() < 1e-6);
    // Inverse bind of the child maps its bind position to the origin.
    let ib = Mat4::from_cols_array(&rig.skins[0].inverse_bind[1]);
    assert!(ib.transform_point3(Vec3::new(0.0, 0.0, 1.0)).max_abs() < 1e-6);
}

#[test]
fn tiny_anim_keys_and_hemisphere() {
    let rig = load(TINY_MESH, Some(TINY_ANIM), "tiny").unwrap();
    let clip = &rig.clips[0];
    assert_eq!(clip.name, "tiny");
    assert_eq!(clip.channels.len(), 4);
    let root_t = &clip.channels[0];
    assert_eq!((root_t.joint, root_t.target), (0, ChannelTarget::Translation));
    assert_eq!(root_t.times, [0.0, 0.1, 0.2]);
    assert_eq!(root_t.values, [0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
    let child_r = &clip.channels[3];
    assert_eq!((child_r.joint, child_r.target), (1, ChannelTarget::Rotation));
    let w = (1.0f32 - 0.81).sqrt();
    // Frame 0: xyz 0 gives w = -1. Frame 1: w negative. Frame 2's raw (-0.9, 0, 0, -w) has a
    // negative dot with frame 1, so it is stored negated.
    let expected = [0.0, 0.0, 0.0, -1.0, 0.9, 0.0, 0.0, -w, 0.9, 0.0, 0.0, w];
    for (got, want) in child_r.values.iter().zip(expected) {
        assert!((got - want).abs() < 1e-6, "{:?}", child_r.values);
    }
    let anim = parse_anim(TINY_ANIM).unwrap();
    assert_eq!(anim.frame_components(1), Some(&[2.0, 0.9, 0.0, 0.0][..]));
    assert_eq!(anim.frame_components(3), None);
    assert!(anim.pose(3).is_none());
    assert_eq!(anim.pose(2).unwrap()[1].rotation.x, -0.9);
}

#[test]
fn tokenizer_handles_comments_strings_and_line_endings() {
    // `//` ends a word, CRLF line endings, and a commented-out bogus line.
    let text = TINY_MESH.replace('\n', "\r\n").replace("numJoints 2", "numJoints 2// two\r\n// numJoints 99");
    let rig = load(&text, None, "crlf").unwrap();
    assert_eq!(rig.joints.len(), 2);
    // Shader names keep backslashes verbatim.
    assert_eq!(parse_mesh(TINY_MESH).unwrap().meshes()[0].shader, "models\\tiny/skin.tga");
    // Line numbers count from 1 and follow comments.
    let bad = replace_once(TINY_MESH, "tri 0 0 2 1", "tri 0 0 2 x");
    assert_eq!(
        mesh_err(&bad),
        Md5Error::BadNumber { at: Location { file: Md5File::Mesh, line: 20 }, expected: "a vertex index" }
    );
    let msg = mesh_err(&bad).to_string();
    assert!(msg.starts_with("md5mesh line 20:"), "{msg}");
}

#[test]
fn duplicate_names_are_made_unique() {
    let text = replace_once(TINY_MESH, "\"child\"", "\"root\"");
    let rig = load(&text, None, "dup").unwrap();
    assert_eq!(rig.joints[0].name, "root");
    assert_eq!(rig.joints[1].name, "root#1");
    assert!(rig.notes.iter().any(|n| n.contains("unique")));
    let text = replace_once(TINY_MESH, "weight 0 0 1 (", "weight 0 0 0.5 (");
    let rig = load(&text, None, "sum").unwrap();
    assert!(rig.notes.iter().any(|n| n.contains("1 vertices of mesh skin")), "{:?}", rig.notes);
}
