//! Morph targets: [`MorphGltf`], a small skinned and morphed glTF (with an unskinned morphed
//! mesh beside it) written here — the recipe of the test model the conformance tests evaluate
//! against `gltf_ref` — and [`morph_cases`], its hostile variants (target counts that differ
//! between primitives, weight arrays of the wrong length, target accessors of the wrong count),
//! each with the [`GltfError`] the importer must give.
//!
//! The model: `root → bone` (the skin's two joints, the bone rotating over a LINEAR channel),
//! `body` (mesh 0: a skinned quad with normals and two targets — a dense POSITION + NORMAL
//! target, and a sparse POSITION target on an accessor without a `bufferView` — mesh weights
//! `[0.25, 0]`, a CUBICSPLINE weights channel whose last key is after the rotation's), and
//! `plate` (mesh 1: the same quad unskinned, placed at x = 2, node weights `[0.5, 0.25]` over its
//! mesh's `[1, 1]`, a STEP weights channel in animation 0; animation 1 holds only a LINEAR
//! weights channel on it, from 0.25 s to 2 s).

use base64::Engine as _;
use sinew_offline::import::gltf::GltfError;

use super::gltf::GltfCase;
use super::Category::*;
use super::{H, IDENTITY};

/// The morphed model's JSON with `edits` (text replacements, each of which must match).
#[derive(Clone, Default)]
pub struct MorphGltf {
    /// Text replacements applied to the JSON, in order.
    pub edits: Vec<(String, String)>,
}

/// `body`'s cubic-spline weights: 3 keys × (in-tangents, values, out-tangents) × 2 targets.
pub const BODY_WEIGHTS: [f32; 18] = [
    0.0, 0.0, 0.0, 0.0, 2.0, 0.0, //
    -1.0, 0.5, 1.0, 0.25, -1.0, 0.5, //
    0.5, 0.0, 0.25, 1.0, 0.0, 0.0,
];

impl MorphGltf {
    /// The valid model.
    #[must_use]
    pub fn new() -> Self {
        MorphGltf::default()
    }

    /// The model with the first `from` of its JSON replaced by `to` (which must match).
    #[must_use]
    pub fn edit(mut self, from: &str, to: &str) -> Self {
        self.edits.push((from.to_owned(), to.to_owned()));
        self
    }

    /// `.gltf` text with the buffer as a base64 `data:` URI.
    #[must_use]
    pub fn gltf(&self) -> Vec<u8> {
        let mut bin = Vec::new();
        let mut views = Vec::new();
        let mut push = |bytes: Vec<u8>| {
            while bin.len() % 4 != 0 {
                bin.push(0);
            }
            views.push(format!(r#"{{"buffer":0,"byteOffset":{},"byteLength":{}}}"#, bin.len(), bytes.len()));
            bin.extend(bytes);
        };
        let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let u = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let mut down = IDENTITY;
        down[13] = -1.0;
        // Views in accessor order (see the accessors below).
        push(f(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0])); // 0 positions
        push(u(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0])); // 1 joints
        push(f(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0])); // 2 weights
        push(u(&[0, 1, 2, 2, 1, 3])); // 3 indices
        push(f(&[IDENTITY, down].concat())); // 4 inverse binds
        push(f(&[0.0, 0.5, 1.0])); // 5 rotation times
        push(f(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.38268343, 0.9238795, 0.0, 0.0, H, H])); // 6 rotations
        push(f(&[0.0, 0.0, 0.5, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])); // 7 target 0 positions
        push(u(&[1, 3])); // 8 target 1 sparse indices
        push(f(&[0.2, 0.0, 0.0, 0.0, 0.3, 0.0])); // 9 target 1 sparse values
        push(f(&[0.0, 0.0, 1.0].repeat(4))); // 10 normals
        push(f(&[0.1, 0.0, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])); // 11 target 0 normals
        push(f(&[0.0, 0.5, 1.25])); // 12 weight times
        push(f(&BODY_WEIGHTS)); // 13 body weights
        push(f(&[0.0, 1.0, 1.0, 0.0, 0.5, 0.5])); // 14 plate weights (STEP)
        push(f(&[0.25, 2.0])); // 15 animation 1 times
        push(f(&[0.0, 0.0, 1.0, 0.75])); // 16 animation 1 plate weights
        let data = base64::engine::general_purpose::STANDARD.encode(&bin);
        let mut text = format!(
            r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[3,2,0]}}],
"nodes":[{{"name":"root","children":[1]}},{{"name":"bone","translation":[0,1,0]}},
 {{"name":"body","mesh":0,"skin":0}},{{"name":"plate","mesh":1,"translation":[2,0,0],"weights":[0.5,0.25]}}],
"skins":[{{"joints":[0,1],"inverseBindMatrices":4}}],
"meshes":[
 {{"primitives":[{{"attributes":{{"POSITION":0,"NORMAL":9,"JOINTS_0":1,"WEIGHTS_0":2}},"indices":3,
   "targets":[{{"POSITION":7,"NORMAL":10}},{{"POSITION":8}}]}}],"weights":[0.25,0]}},
 {{"primitives":[{{"attributes":{{"POSITION":0}},"indices":3,"targets":[{{"POSITION":7}},{{"POSITION":8}}]}}],
  "weights":[1,1]}}],
"animations":[
 {{"channels":[{{"sampler":0,"target":{{"node":1,"path":"rotation"}}}},{{"sampler":1,"target":{{"node":2,"path":"weights"}}}},
   {{"sampler":2,"target":{{"node":3,"path":"weights"}}}}],
  "samplers":[{{"input":5,"output":6,"interpolation":"LINEAR"}},{{"input":11,"output":12,"interpolation":"CUBICSPLINE"}},
   {{"input":11,"output":13,"interpolation":"STEP"}}]}},
 {{"name":"weights only","channels":[{{"sampler":0,"target":{{"node":3,"path":"weights"}}}}],
  "samplers":[{{"input":14,"output":15,"interpolation":"LINEAR"}}]}}],
"accessors":[
 {{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}},
 {{"bufferView":1,"componentType":5123,"count":4,"type":"VEC4"}},
 {{"bufferView":2,"componentType":5126,"count":4,"type":"VEC4"}},
 {{"bufferView":3,"componentType":5123,"count":6,"type":"SCALAR"}},
 {{"bufferView":4,"componentType":5126,"count":2,"type":"MAT4"}},
 {{"bufferView":5,"componentType":5126,"count":3,"type":"SCALAR","min":[0],"max":[1]}},
 {{"bufferView":6,"componentType":5126,"count":3,"type":"VEC4"}},
 {{"bufferView":7,"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[0,0,0.5]}},
 {{"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[0.2,0.3,0],
   "sparse":{{"count":2,"indices":{{"bufferView":8,"componentType":5123}},"values":{{"bufferView":9}}}}}},
 {{"bufferView":10,"componentType":5126,"count":4,"type":"VEC3"}},
 {{"bufferView":11,"componentType":5126,"count":4,"type":"VEC3"}},
 {{"bufferView":12,"componentType":5126,"count":3,"type":"SCALAR","min":[0],"max":[1.25]}},
 {{"bufferView":13,"componentType":5126,"count":18,"type":"SCALAR"}},
 {{"bufferView":14,"componentType":5126,"count":6,"type":"SCALAR"}},
 {{"bufferView":15,"componentType":5126,"count":2,"type":"SCALAR","min":[0.25],"max":[2]}},
 {{"bufferView":16,"componentType":5126,"count":4,"type":"SCALAR"}}],
"bufferViews":[{views}],
"buffers":[{{"byteLength":{len},"uri":"data:application/octet-stream;base64,{data}"}}]}}"#,
            views = views.join(","),
            len = bin.len(),
        );
        for (from, to) in &self.edits {
            assert!(text.contains(from.as_str()), "edit {from:?} does not match");
            text = text.replacen(from.as_str(), to, 1);
        }
        text.into_bytes()
    }
}

/// Target 0's POSITION accessor, as [`MorphGltf::new`] writes it.
const QUANTIZED_FROM: &str =
    r#"{"bufferView":7,"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[0,0,0.5]}"#;

/// The morph cases: mismatched target counts, weight arrays of the wrong length, target
/// accessors whose count is not the vertex count and integer normal deltas that are not
/// normalized, each a typed [`GltfError`]; the valid model and a `KHR_mesh_quantization` target
/// (normalized shorts) import.
#[must_use]
pub fn morph_cases() -> Vec<GltfCase> {
    let mut cases = Vec::new();
    let base = MorphGltf::new();
    cases.push(GltfCase::matching(
        Counts,
        "morph.gltf (valid)",
        base.gltf(),
        "Ok: 2 targets, the sparse one on zeros, node weights over mesh weights, a 1.75 s weights-only clip",
        |r| {
            r.as_ref().is_ok_and(|rig| {
                let sparse = [[0.0, 0.0, 0.0], [0.2, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.3, 0.0]];
                // The instance on node `name` (the scene lists its roots out of file order).
                let weights = |name: &str| {
                    rig.meshes
                        .iter()
                        .find(|m| m.instance.and_then(|j| rig.joints.get(j)).is_some_and(|j| j.name == name))
                        .map(|m| m.weights.clone())
                };
                rig.meshes.iter().all(|m| m.num_targets() == 2 && m.primitives[0].targets[1].positions == sparse)
                    && weights("body") == Some(vec![0.25, 0.0])
                    && weights("plate") == Some(vec![0.5, 0.25])
                    && rig.clips[1].channels.is_empty()
                    && rig.clips[1].time_range() == (0.25, 2.0)
            })
        },
    ));
    // A second primitive with one target where the first has two.
    let second = base.clone().edit(
        r#"{"primitives":[{"attributes":{"POSITION":0},"indices":3,"targets":[{"POSITION":7},{"POSITION":8}]}],"#,
        r#"{"primitives":[{"attributes":{"POSITION":0},"indices":3,"targets":[{"POSITION":7},{"POSITION":8}]},
            {"attributes":{"POSITION":0},"indices":3,"targets":[{"POSITION":7}]}],"#,
    );
    cases.push(GltfCase::matching(
        Counts,
        "morph.gltf: primitives with 2 and 1 targets",
        second.gltf(),
        "MorphTargetCount { mesh: 1, primitive: 1, expected: 2, found: 1 }",
        |r| matches!(r, Err(GltfError::MorphTargetCount { mesh: 1, primitive: 1, expected: 2, found: 1 })),
    ));
    let weights_len = |name: &str, from: &str, to: &str, expected: usize, found: usize, what: &'static str| {
        GltfCase::matching(
            Counts,
            format!("morph.gltf: {name}"),
            base.clone().edit(from, to).gltf(),
            format!("MorphWeights {{ what: {what}…, expected: {expected}, found: {found} }}"),
            move |r| {
                matches!(r, Err(GltfError::MorphWeights { what: w, expected: e, found: f })
                    if w.starts_with(what) && *e == expected && *f == found)
            },
        )
    };
    cases.push(weights_len(
        "mesh weights of length 3",
        r#""weights":[0.25,0]"#,
        r#""weights":[0.25,0,1]"#,
        2,
        3,
        "mesh 0",
    ));
    cases.push(weights_len(
        "node weights of length 1",
        r#""weights":[0.5,0.25]"#,
        r#""weights":[0.5]"#,
        2,
        1,
        "node 3",
    ));
    cases.push(weights_len(
        "cubic weights channel with 17 values",
        r#""count":18,"type":"SCALAR""#,
        r#""count":17,"type":"SCALAR""#,
        18,
        17,
        "clip \"clip0\" channel 1",
    ));
    cases.push(weights_len(
        "step weights channel with 5 values",
        r#""bufferView":14,"componentType":5126,"count":6"#,
        r#""bufferView":14,"componentType":5126,"count":5"#,
        6,
        5,
        "clip \"clip0\" channel 2",
    ));
    // KHR_mesh_quantization: target 0's POSITION as normalized shorts over its float bytes (the
    // high half of 0.5f32, 0x3F00, lands at vertices 1 and 3's z), its NORMAL as bytes that are
    // not normalized (refused: normal targets must be).
    let quantized = base
        .clone()
        .edit(QUANTIZED_FROM, r#"{"bufferView":7,"componentType":5122,"normalized":true,"count":4,"type":"VEC3"}"#);
    let quantized = quantized.edit(
        r#""asset":{"version":"2.0"},"#,
        r#""asset":{"version":"2.0"},"extensionsUsed":["KHR_mesh_quantization"],"#,
    );
    cases.push(GltfCase::matching(
        Counts,
        "morph.gltf: a normalized i16 POSITION target",
        quantized.gltf(),
        "Ok, deltas q / 32767",
        |r| {
            let z = 16128.0 / 32767.0;
            r.as_ref().is_ok_and(|rig| {
                rig.meshes[0].primitives[0].targets[0].positions
                    == [[0.0, 0.0, 0.0], [0.0, 0.0, z], [0.0, 0.0, 0.0], [0.0, 0.0, z]]
            })
        },
    ));
    let bytes = base.clone().edit(
        r#"{"bufferView":11,"componentType":5126,"count":4,"type":"VEC3"}"#,
        r#"{"bufferView":11,"componentType":5120,"count":4,"type":"VEC3"}"#,
    );
    cases.push(GltfCase::matching(
        Counts,
        "morph.gltf: a NORMAL target of bytes not normalized",
        bytes.gltf(),
        "AccessorType naming the target, not normalized",
        |r| {
            matches!(r, Err(GltfError::AccessorType { usage, found, .. })
                if usage.contains("target 0 NORMAL") && found.contains("not normalized"))
        },
    ));
    // A target accessor with 3 elements for 4 vertices.
    let short = base
        .clone()
        .edit(r#"{"bufferView":7,"componentType":5126,"count":4"#, r#"{"bufferView":7,"componentType":5126,"count":3"#);
    cases.push(GltfCase::matching(
        Counts,
        "morph.gltf: a POSITION target of 3 elements for 4 vertices",
        short.gltf(),
        "CountMismatch naming the target, expected 4, actual 3",
        |r| {
            matches!(r, Err(GltfError::CountMismatch { what, expected: 4, actual: 3 })
                if what.contains("target 0 POSITION"))
        },
    ));
    cases
}
