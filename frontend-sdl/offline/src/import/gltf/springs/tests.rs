//! Tests of the spring bone import: small glTF documents written here, each value checked
//! against numbers worked out by hand from the document (not against the importer's output).

use serde_json::{json, Value};

use super::super::{load_bytes, GltfError};
use super::error::{SpringError, SpringErrorKind};
use crate::rig::{ColliderShape, ResolvedSpringJoint, Rig, SpringBones, SpringParams, SpringSource};

// ---- helpers ------------------------------------------------------------------------

/// A glTF document with `nodes` (the scene's roots are those no node lists as a child),
/// `extensionsUsed` `used` and the root `extensions` `ext`.
fn doc(nodes: Value, used: &[&str], ext: Value) -> Vec<u8> {
    let list = nodes.as_array().cloned().unwrap_or_default();
    let mut child = vec![false; list.len()];
    for n in &list {
        for c in n.get("children").and_then(Value::as_array).into_iter().flatten() {
            if let Some(i) = c.as_u64().and_then(|i| usize::try_from(i).ok()) {
                if let Some(slot) = child.get_mut(i) {
                    *slot = true;
                }
            }
        }
    }
    let roots: Vec<usize> = (0..list.len()).filter(|&i| !child[i]).collect();
    serde_json::to_vec(&json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": roots}],
        "nodes": nodes,
        "extensionsUsed": used,
        "extensions": ext,
    }))
    .expect("json")
}

fn load(bytes: &[u8]) -> Result<Rig, GltfError> {
    load_bytes(bytes, None, "springs")
}

fn springs(bytes: &[u8]) -> (SpringBones, Vec<String>) {
    let rig = load(bytes).unwrap_or_else(|e| panic!("import: {e}"));
    (rig.springs.expect("spring bones"), rig.notes)
}

fn spring_error(bytes: &[u8]) -> SpringError {
    match load(bytes) {
        Err(GltfError::Springs(e)) => e,
        Err(e) => panic!("expected a spring error, got {e}"),
        Ok(r) => panic!("expected a spring error, imported {:?}", r.springs),
    }
}

fn node(name: &str, children: &[usize], t: [f64; 3]) -> Value {
    json!({"name": name, "children": children, "translation": t})
}

/// root(0) → a(1) → b(2) → c(3) → d(4) → e(5), and root → side(6) → s1(7) → s2(8): node `i`
/// is joint `i`.
fn chain() -> Value {
    json!([
        node("root", &[1, 6], [0.0, 1.0, 0.0]),
        node("a", &[2], [0.0, 0.5, 0.0]),
        node("b", &[3], [0.0, 0.25, 0.0]),
        node("c", &[4], [0.0, 0.25, 0.0]),
        node("d", &[5], [0.0, 0.25, 0.0]),
        node("e", &[], [0.0, 0.25, 0.0]),
        node("side", &[7], [1.0, 0.0, 0.0]),
        node("s1", &[8], [0.0, -0.1, 0.0]),
        node("s2", &[], [0.0, -0.1, 0.0]),
    ])
}

fn v1(ext: Value) -> Value {
    let mut e = ext;
    if let Some(o) = e.as_object_mut() {
        o.entry("specVersion").or_insert(json!("1.0"));
    }
    json!({ "VRMC_springBone": e })
}

fn joints(nodes: &[usize]) -> Value {
    Value::Array(nodes.iter().map(|n| json!({"node": n})).collect())
}

fn order(b: &SpringBones) -> Vec<(usize, Option<usize>)> {
    b.joints.iter().map(|j| (j.joint, j.child)).collect()
}

fn close(a: [f32; 3], b: [f64; 3], what: &str) {
    for k in 0..3 {
        assert!((f64::from(a[k]) - b[k]).abs() < 1e-6, "{what}: {a:?}, expected {b:?}");
    }
}

// ---- VRM 1.0 ------------------------------------------------------------------------

#[test]
fn vrm1_shapes() {
    let ext = v1(json!({
        "colliders": [
            {"node": 6, "shape": {"sphere": {"offset": [0.1, 0.2, 0.3], "radius": 0.4}}},
            {"node": 6, "shape": {"capsule": {"offset": [1, 2, 3], "radius": 0.5, "tail": [4, 5, 6]}}},
            {"node": 0, "shape": {"sphere": {}}},
            {"node": 6, "shape": {"sphere": {"offset": [-1000, 0, 0], "radius": 1000}},
             "extensions": {"VRMC_springBone_extended_collider": {"specVersion": "1.0",
                 "shape": {"plane": {"offset": [0, 1, 0], "normal": [0, 0, 2]}}}}},
            {"node": 6, "shape": {"sphere": {"offset": [0, -10000, 0]}},
             "extensions": {"VRMC_springBone_extended_collider": {"specVersion": "1.0",
                 "shape": {"sphere": {"radius": 1.25, "inside": true}}}}},
            {"node": 6, "shape": {"sphere": {"offset": [0, -10000, 0]}},
             "extensions": {"VRMC_springBone_extended_collider": {"specVersion": "1.0",
                 "shape": {"capsule": {"offset": [0, 1, 0], "tail": [0, 2, 0], "radius": 0.3, "inside": true}}}}},
            {"node": 6, "shape": {"sphere": {"offset": [0, -7, 0], "radius": 0.25}},
             "extensions": {"VRMC_springBone_extended_collider": {"specVersion": "1.0-draft",
                 "shape": {"plane": {}}}}},
            {"node": 6, "shape": {"sphere": {"radius": 2}},
             "extensions": {"VRMC_springBone_extended_collider": {"specVersion": "1.0",
                 "shape": {"plane": {}}}}},
        ],
        "colliderGroups": [{"name": "all", "colliders": [0, 1, 2, 3, 4, 5, 6, 7]}],
        "springs": [{"joints": joints(&[7, 8]), "colliderGroups": [0]}],
    }));
    let used = ["VRMC_springBone", "VRMC_springBone_extended_collider"];
    let (b, notes) = springs(&doc(chain(), &used, ext));
    let shapes: Vec<ColliderShape> = b.colliders.iter().map(|c| c.shape).collect();
    assert_eq!(
        shapes,
        [
            ColliderShape::Sphere { offset: [0.1, 0.2, 0.3], radius: 0.4, inside: false },
            ColliderShape::Capsule { offset: [1.0, 2.0, 3.0], tail: [4.0, 5.0, 6.0], radius: 0.5, inside: false },
            ColliderShape::Sphere { offset: [0.0; 3], radius: 0.0, inside: false },
            ColliderShape::Plane { offset: [0.0, 1.0, 0.0], normal: [0.0, 0.0, 1.0] },
            ColliderShape::Sphere { offset: [0.0; 3], radius: 1.25, inside: true },
            ColliderShape::Capsule { offset: [0.0, 1.0, 0.0], tail: [0.0, 2.0, 0.0], radius: 0.3, inside: true },
            // Draft version: the base shape.
            ColliderShape::Sphere { offset: [0.0, -7.0, 0.0], radius: 0.25, inside: false },
            // A plane with the defaults: through the origin, normal +z.
            ColliderShape::Plane { offset: [0.0; 3], normal: [0.0, 0.0, 1.0] },
        ]
    );
    assert_eq!(b.colliders.iter().map(|c| c.joint).collect::<Vec<_>>(), [6, 6, 0, 6, 6, 6, 6, 6]);
    assert_eq!(b.source, SpringSource::Vrm1 { spec_version: "1.0".into(), extended_colliders: 4 });
    assert_eq!(b.collider_groups[0].name.as_deref(), Some("all"));
    assert_eq!(b.joints[0].colliders, [0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(
        b.shape_counts(),
        [("sphere", 3), ("capsule", 1), ("plane", 2), ("inside sphere", 1), ("inside capsule", 1)]
    );
    assert!(notes.iter().any(|n| n.contains("colliders[3]") && n.contains("normal: length 2")), "{notes:?}");
    assert!(notes.iter().any(|n| n.contains("colliders[6]") && n.contains("\"1.0-draft\"")), "{notes:?}");
}

#[test]
fn vrm1_defaults_and_pairs() {
    // Joint 0 has every parameter, joint 1 none, joint 2 (the tail) odd ones that are unused.
    let ext = v1(json!({"springs": [{"name": "hair", "joints": [
        {"node": 1, "hitRadius": 0.05, "stiffness": 2.5, "gravityPower": 0.75, "gravityDir": [1, 0, 0], "dragForce": 0.125},
        {"node": 2},
        {"node": 3, "stiffness": 9, "dragForce": 1},
    ]}]}));
    let (b, notes) = springs(&doc(chain(), &["VRMC_springBone"], ext));
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(b.springs.len(), 1);
    assert_eq!(b.springs[0].name.as_deref(), Some("hair"));
    assert_eq!(b.springs[0].joints.len(), 3);
    assert_eq!(
        b.springs[0].joints[2].params,
        SpringParams {
            hit_radius: 0.0,
            stiffness: 9.0,
            gravity_power: 0.0,
            gravity_dir: [0.0, -1.0, 0.0],
            drag_force: 1.0
        }
    );
    assert_eq!(order(&b), [(1, Some(2)), (2, Some(3))]);
    assert_eq!(
        b.joints[0].params,
        SpringParams {
            hit_radius: 0.05,
            stiffness: 2.5,
            gravity_power: 0.75,
            gravity_dir: [1.0, 0.0, 0.0],
            drag_force: 0.125
        }
    );
    // The schema's defaults, not three-vrm's dragForce 0.4.
    assert_eq!(
        b.joints[1].params,
        SpringParams {
            hit_radius: 0.0,
            stiffness: 1.0,
            gravity_power: 0.0,
            gravity_dir: [0.0, -1.0, 0.0],
            drag_force: 0.5
        }
    );
    // Tails: the next joint's rest translation.
    close(b.joints[0].tail, [0.0, 0.25, 0.0], "a's tail");
    close(b.joints[1].tail, [0.0, 0.25, 0.0], "b's tail");
    assert!(b.joints.iter().all(|j| j.center.is_none() && j.colliders.is_empty() && j.spring == 0));
}

#[test]
fn vrm1_tail_through_skipped_nodes() {
    // a → m → t, the spring [a, t] skips m: rotated 90° about z, scaled 2. t sits at
    // (1, 0, 0) in m's space, so in a's space at m's translation + Rz(90°)(2 × (1, 0, 0)) =
    // (0, 1, 0) + (0, 2, 0). three-vrm would take t's own translation, (1, 0, 0).
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let nodes = json!([
        node("a", &[1], [0.0, 0.0, 0.0]),
        {"name": "m", "children": [2], "translation": [0, 1, 0], "rotation": [0, 0, h, h], "scale": [2, 2, 2]},
        node("t", &[], [1.0, 0.0, 0.0]),
    ]);
    let ext = v1(json!({"springs": [{"joints": joints(&[0, 2])}]}));
    let (b, _) = springs(&doc(nodes, &["VRMC_springBone"], ext));
    assert_eq!(order(&b), [(0, Some(2))]);
    close(b.joints[0].tail, [0.0, 3.0, 0.0], "tail through m");
}

#[test]
fn vrm1_run_order() {
    // Added in file order s1, c, d, a, b. s1 collides with a sphere on d, so it runs after every
    // spring joint above d: a and b (above c), c (above d), d. c's parent b is a spring joint
    // too, and b's is a. three-vrm's order: a, b, c, d, s1.
    let ext = v1(json!({
        "colliders": [{"node": 4, "shape": {"sphere": {"radius": 0.1}}}],
        "colliderGroups": [{"colliders": [0]}],
        "springs": [
            {"joints": joints(&[7, 8]), "colliderGroups": [0]},
            {"joints": joints(&[3, 4, 5])},
            {"joints": joints(&[1, 2, 3])},
        ],
    }));
    let (b, notes) = springs(&doc(chain(), &["VRMC_springBone"], ext));
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(order(&b), [(1, Some(2)), (2, Some(3)), (3, Some(4)), (4, Some(5)), (7, Some(8))]);
    assert_eq!(b.joints.iter().map(|j| j.spring).collect::<Vec<_>>(), [2, 2, 1, 1, 0]);
    assert_eq!(b.joints[4].colliders, [0]);
}

#[test]
fn vrm1_circular_order() {
    // The spring [a, b, c] collides with a sphere on b: a depends on b (through the collider)
    // and b on a (its parent). three-vrm visits a, meets a (open: circular), then b, which
    // meets a again (circular) and takes the first place; a follows.
    let ext = v1(json!({
        "colliders": [{"node": 2, "shape": {"sphere": {"radius": 0.1}}}],
        "colliderGroups": [{"colliders": [0]}],
        "springs": [{"joints": joints(&[1, 2, 3]), "colliderGroups": [0]}],
    }));
    let (b, notes) = springs(&doc(chain(), &["VRMC_springBone"], ext));
    assert_eq!(order(&b), [(2, Some(3)), (1, Some(2))]);
    assert!(notes.iter().any(|n| n.contains("circle")), "{notes:?}");
}

#[test]
fn vrm1_center() {
    let ext =
        v1(json!({"springs": [{"joints": joints(&[3, 4, 5]), "center": 1}, {"joints": joints(&[7, 8]), "center": 6}]}));
    let (b, _) = springs(&doc(chain(), &["VRMC_springBone"], ext));
    assert_eq!(b.springs[0].center, Some(1));
    assert_eq!(
        b.joints.iter().map(|j| (j.joint, j.center)).collect::<Vec<_>>(),
        [(3, Some(1)), (4, Some(1)), (7, Some(6))]
    );
}

#[test]
fn vrm1_notes() {
    let chain_doc = |used: &[&str], ext: Value| doc(chain(), used, ext);
    // An unknown specVersion: not read.
    let unknown = chain_doc(&["VRMC_springBone"], json!({"VRMC_springBone": {"specVersion": "2.0", "springs": 7}}));
    let rig = load(&unknown).expect("import");
    assert!(rig.springs.is_none());
    assert!(rig.notes.iter().any(|n| n.contains("specVersion \"2.0\"")), "{:?}", rig.notes);
    // Unknown specVersion with VRM 0.x data too: three-vrm then reads VRM 0.x.
    let both = chain_doc(
        &["VRMC_springBone", "VRM"],
        json!({"VRMC_springBone": {"specVersion": "0.9"}, "VRM": {"secondaryAnimation": {"boneGroups": [{"bones": [7]}]}}}),
    );
    let (b, _) = springs(&both);
    assert_eq!(b.source, SpringSource::Vrm0);
    // Not in extensionsUsed: not read.
    let unlisted = chain_doc(&[], v1(json!({"springs": [{"joints": joints(&[1, 2])}]})));
    let rig = load(&unlisted).expect("import");
    assert!(rig.springs.is_none());
    assert!(rig.notes.iter().any(|n| n.contains("extensionsUsed")), "{:?}", rig.notes);
    // One joint: nothing sways; c heads a pair in springs 1 and 2: it sways in spring 1 only,
    // and spring 2 keeps its pair at d.
    let ext = v1(json!({"springs": [
        {"joints": joints(&[1])},
        {"joints": joints(&[2, 3, 4])},
        {"joints": joints(&[3, 4, 5])},
    ]}));
    let (b, notes) = springs(&chain_doc(&["VRMC_springBone"], ext));
    assert!(notes.iter().any(|n| n.contains("spring 0 has one joint")), "{notes:?}");
    assert_eq!(notes.iter().filter(|n| n.contains("already sways")).count(), 1, "{notes:?}");
    assert!(notes.iter().any(|n| n.contains("spring 2: joint 'c' already sways")), "{notes:?}");
    assert_eq!(order(&b), [(2, Some(3)), (3, Some(4)), (4, Some(5))]);
    assert_eq!(b.joints.iter().map(|j| j.spring).collect::<Vec<_>>(), [1, 1, 2]);
}

#[test]
fn vrm1_errors() {
    let ok_collider = json!({"node": 6, "shape": {"sphere": {"radius": 0.1}}});
    // (what, extension JSON, path, kind)
    let cases: Vec<(&str, Value, &str, SpringErrorKind)> = vec![
        (
            "node out of range",
            json!({"springs": [{"joints": joints(&[1, 9])}]}),
            "extensions.VRMC_springBone.springs[0].joints[1].node",
            SpringErrorKind::BadIndex { what: "node", index: 9, limit: 9 },
        ),
        (
            "node not an index",
            json!({"springs": [{"joints": [{"node": 1.5}]}]}),
            "extensions.VRMC_springBone.springs[0].joints[0].node",
            SpringErrorKind::Type { expected: "an index" },
        ),
        (
            "joint not below the previous",
            json!({"springs": [{"joints": joints(&[1, 2, 7])}]}),
            "extensions.VRMC_springBone.springs[0].joints[2].node",
            SpringErrorKind::NotDescendant { node: 7, previous: 2 },
        ),
        (
            "joint above the previous",
            json!({"springs": [{"joints": joints(&[2, 1])}]}),
            "extensions.VRMC_springBone.springs[0].joints[1].node",
            SpringErrorKind::NotDescendant { node: 1, previous: 2 },
        ),
        (
            "joint repeated",
            json!({"springs": [{"joints": joints(&[2, 2])}]}),
            "extensions.VRMC_springBone.springs[0].joints[1].node",
            SpringErrorKind::NotDescendant { node: 2, previous: 2 },
        ),
        (
            "no joints",
            json!({"springs": [{"joints": []}]}),
            "extensions.VRMC_springBone.springs[0].joints",
            SpringErrorKind::NoJoints,
        ),
        (
            "joints missing",
            json!({"springs": [{"name": "x"}]}),
            "extensions.VRMC_springBone.springs[0].joints",
            SpringErrorKind::Type { expected: "an array of joints" },
        ),
        (
            "collider out of range",
            json!({"colliders": [ok_collider.clone()], "colliderGroups": [{"colliders": [0, 1]}]}),
            "extensions.VRMC_springBone.colliderGroups[0].colliders[1]",
            SpringErrorKind::BadIndex { what: "collider", index: 1, limit: 1 },
        ),
        (
            "collider group out of range",
            json!({"springs": [{"joints": joints(&[1, 2]), "colliderGroups": [0]}]}),
            "extensions.VRMC_springBone.springs[0].colliderGroups[0]",
            SpringErrorKind::BadIndex { what: "collider group", index: 0, limit: 0 },
        ),
        (
            "collider node out of range",
            json!({"colliders": [{"node": 40, "shape": {"sphere": {}}}]}),
            "extensions.VRMC_springBone.colliders[0].node",
            SpringErrorKind::BadIndex { what: "node", index: 40, limit: 9 },
        ),
        (
            "two shapes",
            json!({"colliders": [{"node": 6, "shape": {"sphere": {}, "capsule": {}}}]}),
            "extensions.VRMC_springBone.colliders[0].shape",
            SpringErrorKind::Shape { found: vec!["sphere", "capsule"] },
        ),
        (
            "no shape",
            json!({"colliders": [{"node": 6, "shape": {}}]}),
            "extensions.VRMC_springBone.colliders[0].shape",
            SpringErrorKind::Shape { found: vec![] },
        ),
        (
            "extended shape with two kinds",
            json!({"colliders": [{"node": 6, "shape": {"sphere": {}}, "extensions": {"VRMC_springBone_extended_collider":
                {"specVersion": "1.0", "shape": {"plane": {}, "sphere": {}}}}}]}),
            "extensions.VRMC_springBone.colliders[0].extensions.VRMC_springBone_extended_collider.shape",
            SpringErrorKind::Shape { found: vec!["sphere", "plane"] },
        ),
        (
            "zero normal",
            json!({"colliders": [{"node": 6, "shape": {"sphere": {}}, "extensions": {"VRMC_springBone_extended_collider":
                {"specVersion": "1.0", "shape": {"plane": {"normal": [0, 0, 0]}}}}}]}),
            "extensions.VRMC_springBone.colliders[0].extensions.VRMC_springBone_extended_collider.shape.plane.normal",
            SpringErrorKind::ZeroNormal,
        ),
        (
            "negative radius",
            json!({"colliders": [{"node": 6, "shape": {"capsule": {"radius": -0.5}}}]}),
            "extensions.VRMC_springBone.colliders[0].shape.capsule.radius",
            SpringErrorKind::OutOfRange { value: -0.5, range: "at least 0" },
        ),
        (
            "drag force above 1",
            json!({"springs": [{"joints": [{"node": 1, "dragForce": 1.5}, {"node": 2}]}]}),
            "extensions.VRMC_springBone.springs[0].joints[0].dragForce",
            SpringErrorKind::OutOfRange { value: 1.5, range: "0 to 1" },
        ),
        (
            "negative stiffness",
            json!({"springs": [{"joints": [{"node": 1}, {"node": 2, "stiffness": -1}]}]}),
            "extensions.VRMC_springBone.springs[0].joints[1].stiffness",
            SpringErrorKind::OutOfRange { value: -1.0, range: "at least 0" },
        ),
        (
            "too large for f32",
            json!({"springs": [{"joints": [{"node": 1, "gravityDir": [0, -1e39, 0]}, {"node": 2}]}]}),
            "extensions.VRMC_springBone.springs[0].joints[0].gravityDir[1]",
            SpringErrorKind::OutOfRange { value: -1e39, range: "a finite f32" },
        ),
        (
            "gravityDir of two numbers",
            json!({"springs": [{"joints": [{"node": 1, "gravityDir": [0, -1]}, {"node": 2}]}]}),
            "extensions.VRMC_springBone.springs[0].joints[0].gravityDir",
            SpringErrorKind::Type { expected: "an array of 3 numbers" },
        ),
        (
            "center below the first joint",
            json!({"springs": [{"joints": joints(&[2, 3]), "center": 3}]}),
            "extensions.VRMC_springBone.springs[0].center",
            SpringErrorKind::Center { node: 3, reason: "it is neither the spring's first joint nor an ancestor of it" },
        ),
        (
            "center on another spring's joint",
            json!({"springs": [{"joints": joints(&[1, 2])}, {"joints": joints(&[3, 4]), "center": 2}]}),
            "extensions.VRMC_springBone.springs[1].center",
            SpringErrorKind::Center { node: 2, reason: "it is a joint of another spring or below one" },
        ),
        (
            "springs not an array",
            json!({"springs": {"joints": []}}),
            "extensions.VRMC_springBone.springs",
            SpringErrorKind::Type { expected: "an array" },
        ),
    ];
    for (what, ext, path, kind) in cases {
        let e = spring_error(&doc(chain(), &["VRMC_springBone"], v1(ext)));
        assert_eq!((e.path.as_str(), &e.kind), (path, &kind), "{what}: {e}");
        assert!(!e.to_string().contains('\n'), "{what}: {e}");
    }
    // A node outside the imported scene (node 1 is in scene 1, the default is scene 0).
    let mut outside: Value = serde_json::from_slice(&doc(
        json!([node("x", &[], [0.0; 3]), node("y", &[], [0.0; 3])]),
        &["VRMC_springBone"],
        v1(json!({"springs": [{"joints": joints(&[1])}]})),
    ))
    .expect("json");
    outside["scenes"] = json!([{"nodes": [0]}, {"nodes": [1]}]);
    let e = spring_error(&serde_json::to_vec(&outside).expect("json"));
    assert_eq!(e.kind, SpringErrorKind::NotInScene { node: 1 });
    assert_eq!(
        e.to_string(),
        "extensions.VRMC_springBone.springs[0].joints[0].node: node 1 is not in the imported scene"
    );
}

// ---- VRM 0.x ------------------------------------------------------------------------

/// hips(0) → hair_root(1) → hair_a(2) → hair_a_tip(3), hair_root → hair_b(4), hips → head(5) →
/// ribbon(6); two collider groups, on head and on hair_a; the ribbon group collides with both,
/// the hair group (every parameter left out, center hips) with the head's.
fn vrm0() -> Vec<u8> {
    let nodes = json!([
        node("hips", &[1, 5], [0.0, 1.0, 0.0]),
        node("hair_root", &[2, 4], [0.0, 0.5, 0.1]),
        node("hair_a", &[3], [0.0, -0.1, 0.0]),
        node("hair_a_tip", &[], [0.03, -0.04, 0.0]),
        node("hair_b", &[], [0.0, 0.0, 0.0]),
        node("head", &[6], [0.0, 0.6, 0.0]),
        node("ribbon", &[], [0.0, 0.0, -0.2]),
    ]);
    let ext = json!({"VRM": {"secondaryAnimation": {
        "colliderGroups": [
            {"node": 5, "colliders": [{"offset": {"x": 0.01, "y": 0.02, "z": 0.03}, "radius": 0.1}, {"radius": 0.05}]},
            {"node": 2, "colliders": [{"offset": {"z": -0.01}, "radius": 0.01}]},
        ],
        "boneGroups": [
            {"comment": "ribbon", "bones": [6], "center": -1, "colliderGroups": [1, 0], "stiffiness": 2.0,
             "dragForce": 0.3, "gravityPower": 0.5, "gravityDir": {"x": 1, "y": -1}, "hitRadius": 0.02},
            {"comment": "hair", "bones": [1], "center": 0, "colliderGroups": [0]},
        ],
    }}});
    doc(nodes, &["VRM"], ext)
}

#[test]
fn vrm0_conversion() {
    let (b, notes) = springs(&vrm0());
    assert_eq!(b.source, SpringSource::Vrm0);
    // Offsets with z negated; a collider without offset or radius at the origin, radius 0.
    let shapes: Vec<(usize, ColliderShape)> = b.colliders.iter().map(|c| (c.joint, c.shape)).collect();
    assert_eq!(
        shapes,
        [
            (5, ColliderShape::Sphere { offset: [0.01, 0.02, -0.03], radius: 0.1, inside: false }),
            (5, ColliderShape::Sphere { offset: [0.0; 3], radius: 0.05, inside: false }),
            (2, ColliderShape::Sphere { offset: [0.0, 0.0, 0.01], radius: 0.01, inside: false }),
        ]
    );
    assert_eq!(b.collider_groups.iter().map(|g| g.colliders.clone()).collect::<Vec<_>>(), [vec![0, 1], vec![2]]);
    assert_eq!(b.springs.iter().map(|s| s.name.as_deref()).collect::<Vec<_>>(), [Some("ribbon"), Some("hair")]);
    assert_eq!(b.springs[1].joints.iter().map(|j| j.joint).collect::<Vec<_>>(), [1, 2, 3, 4]);
    // Run order: the ribbon collides with the sphere on hair_a, so hair_root and hair_a run
    // first; then the ribbon; then the rest of the hair in the order added.
    assert_eq!(order(&b), [(1, Some(2)), (2, Some(3)), (6, None), (3, None), (4, None)]);
    let ribbon = SpringParams {
        hit_radius: 0.02,
        stiffness: 2.0,
        gravity_power: 0.5,
        gravity_dir: [1.0, -1.0, 0.0],
        drag_force: 0.3,
    };
    let by_joint = |j: usize| -> &ResolvedSpringJoint { b.joints.iter().find(|r| r.joint == j).expect("joint") };
    assert_eq!(by_joint(6).params, ribbon);
    assert_eq!(by_joint(6).center, None);
    assert_eq!(by_joint(6).colliders, [2, 0, 1]);
    for j in [1, 2, 3, 4] {
        assert_eq!(by_joint(j).params, SpringParams::VRM0_DEFAULT);
        assert_eq!(by_joint(j).params.drag_force, 0.4);
        assert_eq!(by_joint(j).center, Some(0));
        assert_eq!(by_joint(j).colliders, [0, 1]);
    }
    // Tails: the first child's translation; for a leaf 0.07 along its own translation:
    // (0.03, -0.04, 0) has length 0.05, so (0.6, -0.8, 0) × 0.07; (0, 0, -0.2) gives
    // (0, 0, -0.07); hair_b's zero translation gives zero, with a note.
    close(by_joint(1).tail, [0.0, -0.1, 0.0], "hair_root");
    close(by_joint(2).tail, [0.03, -0.04, 0.0], "hair_a");
    close(by_joint(3).tail, [0.042, -0.056, 0.0], "hair_a_tip");
    close(by_joint(6).tail, [0.0, 0.0, -0.07], "ribbon");
    assert_eq!(by_joint(4).tail, [0.0; 3]);
    assert!(notes.iter().any(|n| n.contains("'hair_b'") && n.contains("own position")), "{notes:?}");
    assert!(!notes.iter().any(|n| n.contains("circle")), "{notes:?}");
}

#[test]
fn vrm0_overlap_and_errors() {
    // Two roots, one under the other: hair_a sways once, in the first group.
    let nodes = || {
        json!([
            node("hips", &[1], [0.0, 1.0, 0.0]),
            node("hair_root", &[2], [0.0, 0.5, 0.0]),
            node("hair_a", &[], [0.0, -0.1, 0.0]),
        ])
    };
    let groups = |g: Value| json!({"VRM": {"secondaryAnimation": {"boneGroups": g}}});
    let (b, notes) = springs(&doc(nodes(), &["VRM"], groups(json!([{"bones": [1]}, {"bones": [2]}]))));
    assert_eq!(order(&b), [(1, Some(2)), (2, None)]);
    assert_eq!(b.joints.iter().map(|j| j.spring).collect::<Vec<_>>(), [0, 0]);
    assert!(notes.iter().any(|n| n.contains("bone group 1") && n.contains("'hair_a'")), "{notes:?}");
    // No boneGroups: nothing, as three-vrm.
    let rig = load(&doc(nodes(), &["VRM"], json!({"VRM": {"secondaryAnimation": {}}}))).expect("import");
    assert!(rig.springs.is_none());

    let cases: Vec<(Value, &str, SpringErrorKind)> = vec![
        (
            json!({"boneGroups": [{"bones": [3]}]}),
            "extensions.VRM.secondaryAnimation.boneGroups[0].bones[0]",
            SpringErrorKind::BadIndex { what: "node", index: 3, limit: 3 },
        ),
        (
            json!({"boneGroups": [{"bones": [1], "center": -2}]}),
            "extensions.VRM.secondaryAnimation.boneGroups[0].center",
            SpringErrorKind::Type { expected: "an index" },
        ),
        (
            json!({"boneGroups": [{"bones": [1], "colliderGroups": [0]}]}),
            "extensions.VRM.secondaryAnimation.boneGroups[0].colliderGroups[0]",
            SpringErrorKind::BadIndex { what: "collider group", index: 0, limit: 0 },
        ),
        (
            json!({"boneGroups": [], "colliderGroups": [{"node": 0, "colliders": [{"radius": -1}]}]}),
            "extensions.VRM.secondaryAnimation.colliderGroups[0].colliders[0].radius",
            SpringErrorKind::OutOfRange { value: -1.0, range: "at least 0" },
        ),
        (
            json!({"boneGroups": [], "colliderGroups": [{"colliders": []}]}),
            "extensions.VRM.secondaryAnimation.colliderGroups[0].node",
            SpringErrorKind::Type { expected: "a node index" },
        ),
        (
            json!({"boneGroups": [{"bones": [1], "gravityDir": [0, -1, 0]}]}),
            "extensions.VRM.secondaryAnimation.boneGroups[0].gravityDir",
            SpringErrorKind::Type { expected: "an object" },
        ),
    ];
    for (secondary, path, kind) in cases {
        let e = spring_error(&doc(nodes(), &["VRM"], json!({"VRM": {"secondaryAnimation": secondary}})));
        assert_eq!((e.path.as_str(), &e.kind), (path, &kind), "{e}");
    }
}

// ---- robustness ---------------------------------------------------------------------

/// Every value of the spring extensions replaced, one at a time, by values of other types and
/// out-of-range numbers: each import ends in a rig or an error, never a panic.
#[test]
fn replaced_values_do_not_panic() {
    let replacements = [
        json!(null),
        json!(-1),
        json!(1e40),
        json!(0.5),
        json!(123_456_789_u64),
        json!("x"),
        json!([]),
        json!([0, 0, 0]),
        json!({}),
        json!(true),
    ];
    let full_v1 = v1(json!({
        "colliders": [
            {"node": 4, "shape": {"capsule": {"offset": [0, 0, 0], "radius": 0.1, "tail": [0, 1, 0]}}},
            {"node": 6, "shape": {"sphere": {"radius": 1}}, "extensions": {"VRMC_springBone_extended_collider":
                {"specVersion": "1.0", "shape": {"plane": {"offset": [0, 1, 0], "normal": [0, 1, 0]}}}}},
        ],
        "colliderGroups": [{"name": "g", "colliders": [0, 1]}],
        "springs": [{"name": "s", "center": 0, "colliderGroups": [0], "joints": [
            {"node": 1, "hitRadius": 0.1, "stiffness": 1, "gravityPower": 1, "gravityDir": [0, -1, 0], "dragForce": 0.5},
            {"node": 2}, {"node": 3}]}],
    }));
    let bases = [
        (chain(), vec!["VRMC_springBone", "VRMC_springBone_extended_collider"], full_v1),
        (
            serde_json::from_slice::<Value>(&vrm0()).expect("json")["nodes"].clone(),
            vec!["VRM"],
            serde_json::from_slice::<Value>(&vrm0()).expect("json")["extensions"].clone(),
        ),
    ];
    let mut runs = 0;
    for (nodes, used, ext) in bases {
        let mut paths = Vec::new();
        collect_paths(&ext, &mut Vec::new(), &mut paths);
        for path in &paths {
            for r in &replacements {
                let mut e = ext.clone();
                if let Some(slot) = pointer_mut(&mut e, path) {
                    *slot = r.clone();
                }
                let _ = load(&doc(nodes.clone(), &used, e));
                runs += 1;
            }
        }
    }
    assert!(runs > 500, "{runs} imports");
}

/// The paths (object keys and array indices) of every value under `v`.
fn collect_paths(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                at.push(k.clone());
                out.push(at.clone());
                collect_paths(c, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                at.push(i.to_string());
                out.push(at.clone());
                collect_paths(c, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn pointer_mut<'a>(v: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    let mut cur = v;
    for p in path {
        cur = match cur {
            Value::Object(m) => m.get_mut(p)?,
            Value::Array(a) => a.get_mut(p.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

#[test]
fn order_budget() {
    // A chain of 4096 joints, each sways towards the next, springs listed from the tip up, all
    // colliding with a sphere on the tip: every joint depends on all the others, and three-vrm's
    // walk is joints × depth. Past the budget the joints run parents first.
    let n = 4096;
    let nodes: Vec<Value> = (0..n).map(|i| if i + 1 < n { json!({"children": [i + 1]}) } else { json!({}) }).collect();
    let list: Vec<Value> =
        (0..n - 1).rev().map(|i| json!({"joints": [{"node": i}, {"node": i + 1}], "colliderGroups": [0]})).collect();
    let ext = v1(json!({
        "colliders": [{"node": n - 1, "shape": {"sphere": {"radius": 0.1}}}],
        "colliderGroups": [{"colliders": [0]}],
        "springs": list,
    }));
    let (b, notes) = springs(&doc(Value::Array(nodes), &["VRMC_springBone"], ext));
    assert!(notes.iter().any(|n| n.contains("steps to sort")), "{notes:?}");
    assert_eq!(b.joints.iter().map(|j| j.joint).collect::<Vec<_>>(), (0..n - 1).collect::<Vec<_>>());
}

// ---- run order against a plain transcription of three-vrm ---------------------------

/// three-vrm's `_sortJoints` as it is written: recursive, every dependency object (the parent,
/// then each collider once) walked from the root down on every visit.
fn three_vrm_order(
    parents: &[Option<usize>],
    joints: &[(usize, Vec<usize>)],
    collider_nodes: &[usize],
) -> (Vec<usize>, bool) {
    struct S<'a> {
        parents: &'a [Option<usize>],
        joints: &'a [(usize, Vec<usize>)],
        collider_nodes: &'a [usize],
        tried: Vec<bool>,
        done: Vec<bool>,
        order: Vec<usize>,
        circular: bool,
    }
    fn chain(parents: &[Option<usize>], mut n: usize) -> Vec<usize> {
        let mut c = vec![n];
        while let Some(p) = parents[n] {
            c.push(p);
            n = p;
        }
        c.reverse();
        c
    }
    fn insert(s: &mut S<'_>, i: usize) {
        if s.done[i] {
            return;
        }
        if s.tried[i] {
            s.circular = true;
            return;
        }
        s.tried[i] = true;
        let (node, colliders) = &s.joints[i];
        let mut deps: Vec<usize> = s.parents[*node].into_iter().collect();
        let mut seen = Vec::new();
        for &c in colliders {
            if !seen.contains(&c) {
                seen.push(c);
                deps.push(s.collider_nodes[c]);
            }
        }
        for d in deps {
            for a in chain(s.parents, d) {
                for k in 0..s.joints.len() {
                    if s.joints[k].0 == a {
                        insert(s, k);
                    }
                }
            }
        }
        s.order.push(i);
        s.done[i] = true;
    }
    let n = joints.len();
    let mut s = S {
        parents,
        joints,
        collider_nodes,
        tried: vec![false; n],
        done: vec![false; n],
        order: Vec::new(),
        circular: false,
    };
    for i in 0..n {
        insert(&mut s, i);
    }
    (s.order, s.circular)
}

#[test]
fn run_order_matches_three_vrm() {
    use super::resolve::{run_order, Tree};
    use crate::rig::{RigJoint, SpringCollider};
    use sinew::math::Transform;

    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |n: usize| -> usize {
        seed ^= seed >> 12;
        seed ^= seed << 25;
        seed ^= seed >> 27;
        (seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    };
    let rounds = if cfg!(miri) { 20 } else { 3000 };
    let mut circular_cases = 0;
    for _ in 0..rounds {
        let n = 1 + next(24);
        let parents: Vec<Option<usize>> =
            (0..n).map(|i| if i == 0 || next(5) == 0 { None } else { Some(next(i)) }).collect();
        let rig: Vec<RigJoint> = parents
            .iter()
            .enumerate()
            .map(|(i, &parent)| RigJoint { name: format!("j{i}"), parent, rest: Transform::IDENTITY })
            .collect();
        let collider_nodes: Vec<usize> = (0..next(5)).map(|_| next(n)).collect();
        let count = next(12);
        let joints: Vec<(usize, Vec<usize>)> = (0..count)
            .map(|_| {
                (
                    next(n),
                    if collider_nodes.is_empty() {
                        Vec::new()
                    } else {
                        (0..next(4)).map(|_| next(collider_nodes.len())).collect()
                    },
                )
            })
            .collect();
        let resolved: Vec<ResolvedSpringJoint> = joints
            .iter()
            .map(|(j, cs)| ResolvedSpringJoint {
                joint: *j,
                child: None,
                tail: [0.0; 3],
                params: SpringParams::VRM1_DEFAULT,
                center: None,
                colliders: cs.clone(),
                spring: 0,
            })
            .collect();
        let colliders: Vec<SpringCollider> = collider_nodes
            .iter()
            .map(|&joint| SpringCollider {
                joint,
                shape: ColliderShape::Sphere { offset: [0.0; 3], radius: 0.0, inside: false },
            })
            .collect();
        let tree = Tree::new(&rig);
        let expected = three_vrm_order(&parents, &joints, &collider_nodes);
        assert_eq!(
            run_order(&tree, &resolved, &colliders),
            Some(expected.clone()),
            "parents {parents:?} joints {joints:?} colliders {collider_nodes:?}"
        );
        circular_cases += usize::from(expected.1);
    }
    // Both kinds of case are drawn.
    assert!(circular_cases > rounds / 20 && circular_cases < rounds, "{circular_cases} of {rounds} circular");
}
