//! Values that are finite in the file but overflow `f32` in what the baker encodes or the
//! runtime computes from them (key ranges, model matrices, skin palettes): the import reads
//! them, the bake refuses them with a message naming the clip, the node and the property.

use serde_json::{json, Value};

use super::optional::load_value;
use super::*;
use crate::bake::{bake, BakeError, BakeOptions};

/// The tiny model as JSON, with `keys` as a translation channel on `node` in its clip "spin"
/// (key times those of its rotation channel, 0, 0.5 and 1 s), in a second buffer.
fn with_translation(node: usize, keys: [[f32; 3]; 3]) -> Value {
    let mut v: Value = serde_json::from_str(&Tiny::new().gltf()).unwrap();
    let bytes: Vec<u8> = keys.concat().iter().flat_map(|x| x.to_le_bytes()).collect();
    let uri = format!("data:application/octet-stream;base64,{}", STANDARD.encode(&bytes));
    v["buffers"].as_array_mut().unwrap().push(json!({"byteLength": bytes.len(), "uri": uri}));
    let view = v["bufferViews"].as_array().unwrap().len();
    v["bufferViews"].as_array_mut().unwrap().push(json!({"buffer": 1, "byteLength": bytes.len()}));
    let accessor = v["accessors"].as_array().unwrap().len();
    v["accessors"]
        .as_array_mut()
        .unwrap()
        .push(json!({"bufferView": view, "componentType": 5126, "count": 3, "type": "VEC3"}));
    let anim = &mut v["animations"][0];
    anim["samplers"].as_array_mut().unwrap().push(json!({"input": 5, "output": accessor}));
    anim["channels"]
        .as_array_mut()
        .unwrap()
        .push(json!({"sampler": 1, "target": {"node": node, "path": "translation"}}));
    v
}

/// The bake's error for the model `v` (which must import).
fn bake_error(v: &Value) -> BakeError {
    let rig = load_value(v).unwrap();
    bake(&rig, &BakeOptions::default()).map(|(bytes, _)| bytes.len()).expect_err("the bake refuses the model")
}

#[test]
fn key_values_whose_difference_overflows_are_refused_naming_the_clip_node_and_property() {
    // Each key is finite; their difference (an interpolation step, the encoder's range) is not.
    let v = with_translation(1, [[0.0, 0.0, 0.0], [0.0, -3.4e38, 0.0], [0.0, 3.4e38, 0.0]]);
    let e = bake_error(&v);
    assert!(matches!(e, BakeError::KeyRange { property: "translation", .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.starts_with("clip 'spin', joint 'bone' translation: key values beyond what f32"), "{text}");
    assert!(text.contains("3.4e38"), "{text}");
    // Half the spread bakes.
    let v = with_translation(1, [[0.0, 0.0, 0.0], [0.0, -1.0e38, 0.0], [0.0, 1.0e38, 0.0]]);
    assert!(!matches!(bake(&load_value(&v).unwrap(), &BakeOptions::default()), Err(BakeError::KeyRange { .. })));
}

#[test]
fn a_rest_pose_whose_products_overflow_is_refused_naming_the_node() {
    // The root's y scale carries the bone's y offset of 4 past f32's largest value.
    let mut v: Value = serde_json::from_str(&Tiny::new().gltf()).unwrap();
    v["nodes"][0]["scale"] = json!([1, 1.0e38, 1]);
    v["nodes"][1]["translation"] = json!([0, 4, 0]);
    let e = bake_error(&v);
    assert!(matches!(&e, BakeError::Overflow { clip: None, joint, .. } if joint == "bone"), "{e:?}");
    let text = e.to_string();
    assert!(text.starts_with("rest pose, joint 'bone': its model matrix"), "{text}");
    assert!(text.contains("overflows f32"), "{text}");

    // Model matrices within f32 (the bone at y = 3e38 + 1), but its skin matrix is not: the
    // inverse bind matrix moves it by −2 units along the scaled axis first.
    v["nodes"][0]["scale"] = json!([1, 3.0e38, 1]);
    v["nodes"][1]["translation"] = json!([0, 1, 0]);
    let text = bake_error(&v).to_string();
    assert!(text.starts_with("rest pose, joint 'bone': its skin 'skin0' matrix"), "{text}");

    // An ordinary scale bakes.
    v["nodes"][0]["scale"] = json!([1, 3.0e3, 1]);
    bake(&load_value(&v).unwrap(), &BakeOptions::default()).unwrap();
}

#[test]
fn a_clip_pose_whose_products_overflow_is_refused_naming_the_clip_and_time() {
    // The rest pose holds (the bone at 2e38 + 1 above the root); the root's translation
    // reaches 2e38 over the clip, and the bone's model matrix overflows on the way.
    let mut v = with_translation(0, [[0.0, 1.0, 0.0], [0.0, 1.0e38, 0.0], [0.0, 2.0e38, 0.0]]);
    v["nodes"][1]["translation"] = json!([0, 2.0e38, 0]);
    let e = bake_error(&v);
    assert!(
        matches!(&e, BakeError::Overflow { clip: Some((clip, t)), joint, .. }
        if clip == "spin" && joint == "bone" && *t > 0.5 && *t <= 1.0),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(text.starts_with("clip 'spin' at 0."), "{text}");
    assert!(text.contains("joint 'bone': its model matrix"), "{text}");
}
