//! Meshes: the tiny model's skinned triangle, bad vertex data, strips, fans and lines.

use super::*;

#[test]
fn tiny_model_imports() {
    let tiny = Tiny::new();
    for rig in [tiny.load().unwrap(), load_bytes(&tiny.glb(), None, "tiny").unwrap()] {
        check_invariants(&rig);
        let names: Vec<&str> = rig.joints.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["root", "bone", "skinned"]);
        assert_eq!(rig.joints[1].parent, Some(0));
        assert_eq!(rig.joints[2].parent, None);
        assert_eq!(rig.skins[0].joints, [0, 1]);
        assert!(bind_error(&rig, 0) < 1.0e-6);
        let m = &rig.meshes[0];
        assert_eq!((m.name.as_str(), m.skin, m.node), ("tri", Some(0), None));
        let p = &m.primitives[0];
        assert_eq!(p.influences, 4);
        assert_eq!(&p.joint_indices[8..10], &[0, 1]);
        assert_eq!(&p.joint_weights[8..10], &[0.5, 0.5]);
        assert_eq!(p.indices, [0, 1, 2]);
        assert_eq!(p.color, DEFAULT_COLOR);
        let ch = &rig.clips[0].channels[0];
        assert_eq!((rig.clips[0].name.as_str(), ch.joint, ch.target), ("spin", 1, ChannelTarget::Rotation));
        assert_eq!(ch.times, [0.0, 0.5, 1.0]);
        assert_eq!(ch.values.len(), 12);
        assert!(rig.notes.is_empty(), "{:?}", rig.notes);
    }
}

#[test]
fn bad_vertex_data() {
    let mut nan = Tiny::new();
    nan.positions[1][2] = f32::NAN;
    assert!(matches!(nan.load(), Err(GltfError::NonFinite { .. })));
    let mut bad_joint = Tiny::new();
    bad_joint.joints[2] = [0, 2, 0, 0];
    assert!(matches!(bad_joint.load(), Err(GltfError::BadIndex { index: 2, limit: 2, .. })), "{:?}", bad_joint.load());
    // An out-of-range joint with zero weight is harmless: it is set to 0 and noted.
    let mut zero_weight = Tiny::new();
    zero_weight.joints[0] = [0, 9, 0, 0];
    let rig = zero_weight.load().unwrap();
    assert_eq!(&rig.meshes[0].primitives[0].joint_indices[0..4], &[0, 0, 0, 0]);
    assert!(has_note(&rig, "out-of-range joint"));
    let mut negative = Tiny::new();
    negative.weights[0] = [1.5, -0.5, 0.0, 0.0];
    assert!(matches!(negative.load(), Err(GltfError::NegativeWeight { mesh: 0, primitive: 0, vertex: 0 })));
    let mut zero = Tiny::new();
    zero.weights[1] = [0.0; 4];
    assert!(matches!(zero.load(), Err(GltfError::ZeroWeights { mesh: 0, primitive: 0, vertex: 1 })));
    // A triangle that repeats a vertex is kept (the baker drops it).
    let mut degenerate = Tiny::new();
    degenerate.indices = vec![0, 1, 1];
    assert_eq!(degenerate.load().unwrap().meshes[0].primitives[0].indices, [0, 1, 1]);
    let mut unnormalized = Tiny::new();
    unnormalized.weights[2] = [1.0, 1.0, 0.0, 0.0];
    let rig = unnormalized.load().unwrap();
    assert_eq!(&rig.meshes[0].primitives[0].joint_weights[8..10], &[0.5, 0.5]);
    assert!(has_note(&rig, "renormalized"));
    let mut bad_index = Tiny::new();
    bad_index.indices = vec![0, 1, 3];
    assert!(matches!(bad_index.load(), Err(GltfError::BadIndex { index: 3, limit: 3, .. })));
}

#[test]
fn strips_fans_and_lines() {
    let mut strip = Tiny::new();
    strip.positions.push([1.0, 1.0, 0.0]);
    strip.joints.push([0; 4]);
    strip.weights.push([1.0, 0.0, 0.0, 0.0]);
    strip.indices = vec![0, 1, 2, 3];
    let with_mode = |t: &Tiny, mode: u32| {
        let text = t.gltf().replacen(r#""indices":3}"#, &format!(r#""indices":3,"mode":{mode}}}"#), 1);
        let r = load_bytes(text.as_bytes(), None, "t").unwrap();
        check_invariants(&r);
        r
    };
    let rig = with_mode(&strip, 5);
    assert_eq!(rig.meshes[0].primitives[0].indices, [0, 1, 2, 1, 3, 2]);
    let rig = with_mode(&strip, 6);
    assert_eq!(rig.meshes[0].primitives[0].indices, [1, 2, 0, 2, 3, 0]);
    let rig = with_mode(&strip, 1);
    assert!(rig.meshes[0].primitives.is_empty());
    assert!(has_note(&rig, "Lines primitive skipped"));
}
