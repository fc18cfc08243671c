//! Fields glTF 2.0 allows to be absent: a file that uses every optional field the importer's
//! JSON layer knows loads with each one removed; JSON errors name the JSON path of the value
//! they are about; long strings in messages are cut with a mark.

use serde_json::{json, Value};

use super::*;

/// A 2 × 2 RGB PNG (red, green / blue, white), base64.
pub(super) const TINY_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP4z8DAAMIM/4EAAB/uBfsL2WiLAAAAAElFTkSuQmCC";

/// The tiny model with every optional field of the objects it uses set, and a material, a
/// texture with its sampler and image, a camera, morph-target weights and extensions, so that
/// each can be taken away.
pub(super) fn full() -> Value {
    let mut v: Value = serde_json::from_str(&Tiny::new().gltf()).unwrap();
    v["asset"]["generator"] = json!("sinew tests");
    v["asset"]["copyright"] = json!("none");
    v["asset"]["minVersion"] = json!("2.0");
    v["asset"]["extras"] = json!({"a": 1});
    v["extensionsUsed"] = json!(["EXT_unknown"]);
    v["extras"] = json!({});
    v["scenes"][0]["name"] = json!("scene");
    v["nodes"][0]["rotation"] = json!([0, 0, 0, 1]);
    v["nodes"][0]["scale"] = json!([1, 1, 1]);
    v["nodes"][1]["matrix"] = json!([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1]);
    v["nodes"][1].as_object_mut().unwrap().remove("translation");
    v["nodes"][2]["camera"] = json!(0);
    v["nodes"][2]["children"] = json!([3]);
    v["nodes"].as_array_mut().unwrap().push(json!({"name": "leaf"}));
    v["nodes"][2]["extensions"] = json!({"EXT_unknown": {}});
    v["meshes"][0]["weights"] = json!([]);
    let prim = &mut v["meshes"][0]["primitives"][0];
    prim["material"] = json!(0);
    prim["mode"] = json!(4);
    prim["attributes"]["TEXCOORD_0"] = json!(7);
    v["materials"] = json!([{
        "name": "m",
        "pbrMetallicRoughness": {
            "baseColorFactor": [1, 0.5, 0.25, 1],
            "baseColorTexture": {"index": 0, "texCoord": 0},
            "metallicFactor": 0.5,
            "roughnessFactor": 0.5,
            "metallicRoughnessTexture": {"index": 0}
        },
        "normalTexture": {"index": 0, "scale": 1},
        "occlusionTexture": {"index": 0, "strength": 1},
        "emissiveTexture": {"index": 0},
        "emissiveFactor": [0, 0, 0],
        "alphaMode": "OPAQUE",
        "alphaCutoff": 0.5,
        "doubleSided": false
    }]);
    v["textures"] = json!([{"name": "t", "sampler": 0, "source": 0}]);
    v["samplers"] = json!([{"name": "s", "magFilter": 9729, "minFilter": 9987, "wrapS": 10497, "wrapT": 33071}]);
    // A 2 × 2 RGB PNG: red, green / blue, white.
    v["images"] = json!([{"name": "i", "uri": format!("data:image/png;base64,{TINY_PNG}"), "mimeType": "image/png"}]);
    v["cameras"] = json!([{"name": "c", "type": "perspective",
        "perspective": {"aspectRatio": 1.5, "yfov": 0.7, "zfar": 100, "znear": 0.1}}]);
    // TEXCOORD_0 of three vertices: one float pair per vertex at the end of the buffer.
    let uv_view = v["bufferViews"].as_array().unwrap().len();
    v["accessors"].as_array_mut().unwrap().push(json!({
        "bufferView": uv_view, "byteOffset": 0, "componentType": 5126, "normalized": false,
        "count": 3, "type": "VEC2", "name": "uv", "min": [0, 0], "max": [0, 0]
    }));
    v["bufferViews"].as_array_mut().unwrap().push(json!({
        "buffer": 0, "byteOffset": 0, "byteLength": 24, "byteStride": 8, "target": 34962, "name": "uv"
    }));
    v["buffers"][0]["name"] = json!("b");
    v["skins"][0]["skeleton"] = json!(0);
    v["skins"][0]["name"] = json!("skin");
    v["animations"][0]["samplers"][0]["interpolation"] = json!("LINEAR");
    v
}

fn remove(v: &mut Value, pointer: &str) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let parent = v.pointer_mut(parent).unwrap_or_else(|| panic!("{pointer}: no parent"));
    let removed = match parent {
        Value::Object(o) => o.remove(key),
        _ => panic!("{pointer}: parent is not an object"),
    };
    assert!(removed.is_some(), "{pointer} is in the full file");
}

pub(super) fn load_value(v: &Value) -> Result<Rig, GltfError> {
    let r = load_bytes(v.to_string().as_bytes(), None, "optional");
    if let Ok(rig) = &r {
        check_invariants(rig);
    }
    r
}

#[test]
fn the_full_file_loads() {
    let rig = load_value(&full()).unwrap();
    assert_eq!(rig.joints.len(), 4);
    assert_eq!(rig.clips[0].channels.len(), 1);
}

/// One case per optional field: the file without it loads.
#[test]
fn every_optional_field_may_be_absent() {
    let fields = [
        "/asset/generator",
        "/asset/copyright",
        "/asset/minVersion",
        "/asset/extras",
        "/extensionsUsed",
        "/extras",
        "/scene",
        "/scenes/0/name",
        "/scenes/0/nodes",
        "/nodes/0/name",
        "/nodes/0/translation",
        "/nodes/0/rotation",
        "/nodes/0/scale",
        "/nodes/2/children",
        "/nodes/1/matrix",
        "/nodes/2/mesh",
        "/nodes/2/skin",
        "/nodes/2/camera",
        "/nodes/2/extensions",
        "/meshes/0/name",
        "/meshes/0/weights",
        "/meshes/0/primitives/0/indices",
        "/meshes/0/primitives/0/material",
        "/meshes/0/primitives/0/mode",
        "/materials/0/name",
        "/materials/0/pbrMetallicRoughness/baseColorFactor",
        "/materials/0/pbrMetallicRoughness/baseColorTexture",
        "/materials/0/pbrMetallicRoughness/baseColorTexture/texCoord",
        "/materials/0/pbrMetallicRoughness/metallicFactor",
        "/materials/0/pbrMetallicRoughness/roughnessFactor",
        "/materials/0/pbrMetallicRoughness/metallicRoughnessTexture",
        "/materials/0/pbrMetallicRoughness",
        "/materials/0/normalTexture/scale",
        "/materials/0/normalTexture",
        "/materials/0/occlusionTexture/strength",
        "/materials/0/occlusionTexture",
        "/materials/0/emissiveTexture",
        "/materials/0/emissiveFactor",
        "/materials/0/alphaMode",
        "/materials/0/alphaCutoff",
        "/materials/0/doubleSided",
        "/textures/0/name",
        "/textures/0/sampler",
        "/samplers/0/name",
        "/samplers/0/magFilter",
        "/samplers/0/minFilter",
        "/samplers/0/wrapS",
        "/samplers/0/wrapT",
        "/images/0/name",
        "/images/0/mimeType",
        "/cameras/0/name",
        "/cameras/0/perspective/aspectRatio",
        "/cameras/0/perspective/zfar",
        "/accessors/0/byteOffset",
        "/accessors/7/min",
        "/accessors/7/max",
        "/accessors/7/normalized",
        "/accessors/7/name",
        "/accessors/7/bufferView",
        "/accessors/1/bufferView",
        "/bufferViews/7/byteOffset",
        "/bufferViews/7/byteStride",
        "/bufferViews/7/target",
        "/bufferViews/7/name",
        "/buffers/0/name",
        "/skins/0/inverseBindMatrices",
        "/skins/0/skeleton",
        "/skins/0/name",
        "/animations/0/name",
        "/animations/0/samplers/0/interpolation",
        "/animations/0/channels/0/target/node",
    ];
    let mut failed = Vec::new();
    for field in fields {
        let mut v = full();
        remove(&mut v, field);
        if let Err(e) = load_value(&v) {
            failed.push(format!("{field}: {e}"));
        }
    }
    assert!(failed.is_empty(), "files without an optional field were refused:\n{}", failed.join("\n"));
}

#[test]
fn an_empty_scene_loads_with_nothing_to_animate() {
    let mut v = full();
    remove(&mut v, "/scenes/0/nodes");
    let rig = load_value(&v).unwrap();
    assert!(rig.joints.is_empty() && rig.meshes.is_empty());
    assert!(has_note(&rig, "scene 0 has no nodes"), "{:?}", rig.notes);
    // The smallest valid glTF: an asset and an empty scene.
    let rig = load_bytes(br#"{"asset":{"version":"2.0"},"scenes":[{}],"scene":0}"#, None, "empty").unwrap();
    assert!(rig.joints.is_empty() && rig.clips.is_empty() && rig.meshes.is_empty());
    let rig = load_bytes(br#"{"asset":{"version":"2.0"}}"#, None, "empty").unwrap();
    assert!(rig.joints.is_empty());
}

#[test]
fn a_channel_without_a_target_node_is_ignored_and_keeps_the_others_in_place() {
    let mut v = full();
    // A second channel that targets no node, placed first: the node's own channel stays
    // channel 1 in messages.
    let channels = v["animations"][0]["channels"].as_array_mut().unwrap();
    channels.insert(0, json!({"sampler": 0, "target": {"path": "rotation"}}));
    let rig = load_value(&v).unwrap();
    assert_eq!(rig.clips[0].channels.len(), 1);
    assert!(has_note(&rig, "animation 0 channel 0 targets no node"), "{:?}", rig.notes);
    // Errors about later channels name them by their index in the file.
    v["animations"][0]["samplers"].as_array_mut().unwrap().push(json!({"input": 0, "output": 6}));
    v["animations"][0]["channels"][1]["sampler"] = json!(1);
    let e = load_value(&v).unwrap_err();
    assert!(e.to_string().contains("channel 1"), "{e}");
}

#[test]
fn accessors_without_a_buffer_view_read_as_zeros() {
    let mut v = full();
    remove(&mut v, "/accessors/1/bufferView");
    let rig = load_value(&v).unwrap();
    assert!(rig.meshes[0].primitives[0].joint_indices.iter().all(|&j| j == 0));
    // Key values: translation keys of zeros.
    let mut v = full();
    v["animations"][0]["channels"][0]["target"]["path"] = json!("translation");
    v["accessors"][6] = json!({"componentType": 5126, "count": 3, "type": "VEC3"});
    let rig = load_value(&v).unwrap();
    assert!(rig.clips[0].channels[0].values.iter().all(|&x| x == 0.0));
    assert_eq!(rig.clips[0].channels[0].values.len(), 9);
}

/// JSON errors say where in the document the value is, by JSON path, and where in the text.
#[test]
fn json_errors_name_the_json_path() {
    let cases: [(&str, Value, &str); 4] = [
        (
            "/materials/0/pbrMetallicRoughness/baseColorFactor",
            json!([1, 0.5, 0.25]),
            "materials[0].pbrMetallicRoughness.baseColorFactor: invalid length 3",
        ),
        ("/nodes/0/children", json!(["one"]), "nodes[0].children[0]: invalid type: string \"one\""),
        ("/accessors/0/count", json!(-3), "accessors[0].count: invalid value: integer `-3`"),
        ("/meshes/0/primitives", json!({}), "meshes[0].primitives: invalid type: map"),
    ];
    for (pointer, value, want) in cases {
        let mut v = full();
        *v.pointer_mut(pointer).unwrap() = value;
        let text = serde_json::to_string_pretty(&v).unwrap();
        let e = load_bytes(text.as_bytes(), None, "t").unwrap_err();
        let GltfError::Json(message) = &e else { panic!("{pointer}: {e:?}") };
        assert!(message.starts_with(want), "{pointer}: {message}");
        assert!(message.contains(" at line "), "{pointer}: {message}");
    }
    // A required field: its object's path.
    let mut v = full();
    remove(&mut v, "/accessors/2/count");
    let e = load_value(&v).unwrap_err().to_string();
    assert!(e.contains("accessors[2]: missing field `count`"), "{e}");
    // With an absent optional field filled in, a later error still names its path.
    remove(&mut v, "/scenes/0/nodes");
    let e = load_value(&v).unwrap_err().to_string();
    assert!(e.contains("accessors[2]: missing field `count`"), "{e}");
    // Syntax errors keep their line and column.
    let e = load_bytes(b"{\n\"asset\": {\"version\": \"2.0\"},,\n}", None, "t").unwrap_err().to_string();
    assert!(e.contains("line 2 column"), "{e}");
}

#[test]
fn long_strings_in_messages_are_cut_with_a_mark() {
    let long = "v".repeat(100);
    let e = load_bytes(format!(r#"{{"asset":{{"version":"{long}"}}}}"#).as_bytes(), None, "t").unwrap_err();
    let text = e.to_string();
    assert!(text.contains(&format!("\"{}…\"", "v".repeat(64))), "{text}");
    let short = "2.0.x";
    let e = load_bytes(format!(r#"{{"asset":{{"version":"{short}"}}}}"#).as_bytes(), None, "t").unwrap_err();
    assert!(!e.to_string().contains('…'), "{e}");
    let mut v = full();
    let uri = format!("{}.bin", "d/".repeat(50));
    v["buffers"][0]["uri"] = json!(uri);
    let e = load_value(&v).unwrap_err().to_string();
    assert!(e.contains('…') && !e.contains(&uri), "{e}");
}

#[test]
fn unsupported_required_extensions_are_named_first() {
    let mut v = full();
    v["extensionsRequired"] =
        json!(["EXT_mesh_gpu_instancing", "KHR_mesh_quantization", "EXT_meshopt_compression", "EXT_other"]);
    // Even with a schema error elsewhere, the extensions come first.
    remove(&mut v, "/accessors/2/bufferView");
    v["accessors"][2]["sparse"] = json!({"count": 1, "indices": {"bufferView": 99, "componentType": 5123},
        "values": {"bufferView": 99}});
    let e = load_value(&v).unwrap_err();
    assert!(
        matches!(&e, GltfError::UnsupportedExtensions(n) if n == &["EXT_mesh_gpu_instancing", "EXT_other"]),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "the file requires the extensions EXT_mesh_gpu_instancing, EXT_other, which sinew does not read"
    );
    let mut v = full();
    v["extensionsRequired"] = json!(["EXT_mesh_gpu_instancing"]);
    assert_eq!(
        load_value(&v).unwrap_err().to_string(),
        "the file requires the extension EXT_mesh_gpu_instancing, which sinew does not read"
    );
    // Draco is read by a build with its decoder.
    let mut v = full();
    v["extensionsRequired"] = json!(["KHR_draco_mesh_compression"]);
    v["extensionsUsed"] = json!(["KHR_draco_mesh_compression"]);
    match load_value(&v) {
        Ok(_) if cfg!(feature = "draco") => {}
        Err(GltfError::ExtensionNotInBuild { extension: "KHR_draco_mesh_compression", feature: "draco" })
            if !cfg!(feature = "draco") => {}
        r => panic!("{:?}", r.err()),
    }
    // The two this importer reads are accepted (meshopt by a build with its decoder).
    let mut v = full();
    v["extensionsRequired"] = json!(["KHR_mesh_quantization", "EXT_meshopt_compression"]);
    v["extensionsUsed"] = json!(["KHR_mesh_quantization", "EXT_meshopt_compression"]);
    match load_value(&v) {
        Ok(_) if cfg!(feature = "meshopt") => {}
        Err(GltfError::ExtensionNotInBuild { extension: "EXT_meshopt_compression", feature: "meshopt" })
            if !cfg!(feature = "meshopt") => {}
        r => panic!("{:?}", r.err()),
    }
    // Used but not required: read without it.
    let mut v = full();
    v["extensionsUsed"] = json!(["KHR_materials_emissive_strength"]);
    assert!(load_value(&v).is_ok());
}
