//! glTF cases: [`SmallGltf`], a small skinned, animated model written as `.gltf` text or a GLB
//! and changed field by field; the real CesiumMan GLB changed in its JSON and its BIN chunk; and
//! [`gltf_cases`], every hostile variant with the [`GltfError`] the importer must give. Also
//! [`chain_glb`], the long animated chains of the baker's work-budget tests.

use base64::Engine as _;
use sinew_offline::bake::MAX_BAKE_WORK;
use sinew_offline::import::gltf::{GltfError, MAX_NODES, MIN_DECODE_BUDGET};
use sinew_offline::rig::Rig;

use super::sinew::SmallSinew;
use super::Category::*;
use super::{gltf_asset, put_f32, put_u16, put_u32, read, u32_at, Case, H, IDENTITY};

// ---------------------------------------------------------------------------------------------
// The small model and GLB containers
// ---------------------------------------------------------------------------------------------

/// A small skinned, animated glTF: root → bone (the skin's two joints) and a skinned triangle
/// pair node, one LINEAR rotation channel on the bone. `edits` are text replacements applied
/// to the JSON (each must match).
#[derive(Clone)]
pub struct SmallGltf {
    /// The `nodes` array, JSON.
    pub nodes: String,
    /// The `scenes` array, JSON.
    pub scenes: String,
    /// Vertex positions.
    pub positions: Vec<[f32; 3]>,
    /// `JOINTS_0` of each vertex.
    pub joints: Vec<[u16; 4]>,
    /// `WEIGHTS_0` of each vertex.
    pub weights: Vec<[f32; 4]>,
    /// Triangle indices.
    pub indices: Vec<u16>,
    /// The skin's inverse bind matrices, column-major.
    pub bind: Vec<[f32; 16]>,
    /// The rotation channel's key times.
    pub times: Vec<f32>,
    /// The rotation channel's keys (x, y, z, w).
    pub rotations: Vec<[f32; 4]>,
    /// Text replacements applied to the JSON, in order.
    pub edits: Vec<(String, String)>,
}

impl Default for SmallGltf {
    fn default() -> Self {
        Self::new()
    }
}

impl SmallGltf {
    /// The valid base.
    pub fn new() -> Self {
        let mut down = IDENTITY;
        down[13] = -1.0;
        SmallGltf {
            nodes: r#"[{"name":"root","children":[1]},{"name":"bone","translation":[0,1,0]},
                       {"name":"body","mesh":0,"skin":0}]"#
                .into(),
            scenes: r#"[{"nodes":[0,2]}]"#.into(),
            positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]],
            joints: vec![[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0]],
            weights: vec![[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]],
            indices: vec![0, 1, 2, 2, 1, 3],
            bind: vec![IDENTITY, down],
            times: vec![0.0, 0.5, 1.0],
            rotations: vec![[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.38268343, 0.9238795], [0.0, 0.0, H, H]],
            edits: Vec::new(),
        }
    }

    /// The model with the first `from` of its JSON replaced by `to` (which must match).
    pub fn edit(mut self, from: &str, to: &str) -> Self {
        self.edits.push((from.to_owned(), to.to_owned()));
        self
    }

    /// The binary buffer and its views (offset, length), 4-byte aligned.
    pub fn bin(&self) -> (Vec<u8>, Vec<(usize, usize)>) {
        let mut bin = Vec::new();
        let mut views = Vec::new();
        let mut push = |bytes: Vec<u8>| {
            while bin.len() % 4 != 0 {
                bin.push(0);
            }
            views.push((bin.len(), bytes.len()));
            bin.extend(bytes);
        };
        let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        push(f(&self.positions.concat()));
        push(self.joints.concat().iter().flat_map(|j| j.to_le_bytes()).collect());
        push(f(&self.weights.concat()));
        push(self.indices.iter().flat_map(|i| i.to_le_bytes()).collect());
        push(f(&self.bind.concat()));
        push(f(&self.times));
        push(f(&self.rotations.concat()));
        (bin, views)
    }

    fn json(&self, buffer: &str, views: &[(usize, usize)]) -> String {
        let views: Vec<String> =
            views.iter().map(|(o, l)| format!(r#"{{"buffer":0,"byteOffset":{o},"byteLength":{l}}}"#)).collect();
        let mut text = format!(
            r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":{scenes},"nodes":{nodes},
"skins":[{{"joints":[0,1],"inverseBindMatrices":4}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0,"JOINTS_0":1,"WEIGHTS_0":2}},"indices":3}}]}}],
"animations":[{{"channels":[{{"sampler":0,"target":{{"node":1,"path":"rotation"}}}}],
 "samplers":[{{"input":5,"output":6,"interpolation":"LINEAR"}}]}}],
"accessors":[
 {{"bufferView":0,"componentType":5126,"count":{nv},"type":"VEC3","min":[0,0,0],"max":[1,1,0]}},
 {{"bufferView":1,"componentType":5123,"count":{nj},"type":"VEC4"}},
 {{"bufferView":2,"componentType":5126,"count":{nw},"type":"VEC4"}},
 {{"bufferView":3,"componentType":5123,"count":{ni},"type":"SCALAR"}},
 {{"bufferView":4,"componentType":5126,"count":{nb},"type":"MAT4"}},
 {{"bufferView":5,"componentType":5126,"count":{nt},"type":"SCALAR"}},
 {{"bufferView":6,"componentType":5126,"count":{nr},"type":"VEC4"}}],
"bufferViews":[{views}],
"buffers":[{buffer}]}}"#,
            scenes = self.scenes,
            nodes = self.nodes,
            nv = self.positions.len(),
            nj = self.joints.len(),
            nw = self.weights.len(),
            ni = self.indices.len(),
            nb = self.bind.len(),
            nt = self.times.len(),
            nr = self.rotations.len(),
            views = views.join(","),
        );
        for (from, to) in &self.edits {
            assert!(text.contains(from.as_str()), "edit {from:?} does not match");
            text = text.replacen(from.as_str(), to, 1);
        }
        text
    }

    /// `.gltf` text with the buffer as a base64 `data:` URI.
    pub fn gltf(&self) -> Vec<u8> {
        let (bin, views) = self.bin();
        let data = base64::engine::general_purpose::STANDARD.encode(&bin);
        let buffer = format!(r#"{{"byteLength":{},"uri":"data:application/octet-stream;base64,{data}"}}"#, bin.len());
        self.json(&buffer, &views).into_bytes()
    }

    /// A GLB container.
    pub fn glb(&self) -> Vec<u8> {
        let (bin, views) = self.bin();
        glb_from(&self.json(&format!(r#"{{"byteLength":{}}}"#, bin.len()), &views), &bin)
    }
}

/// A GLB container of a JSON text and a BIN chunk (both padded to 4 bytes).
pub fn glb_from(json: &str, bin: &[u8]) -> Vec<u8> {
    let mut json = json.as_bytes().to_vec();
    while json.len() % 4 != 0 {
        json.push(b' ');
    }
    let mut bin = bin.to_vec();
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let total = 12 + 8 + json.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend(b"glTF");
    out.extend(2u32.to_le_bytes());
    out.extend((total as u32).to_le_bytes());
    out.extend((json.len() as u32).to_le_bytes());
    out.extend(b"JSON");
    out.extend(json);
    out.extend((bin.len() as u32).to_le_bytes());
    out.extend(b"BIN\0");
    out.extend(bin);
    out
}

/// The JSON of a GLB and where its BIN chunk's data starts.
pub(super) fn glb_parts(glb: &[u8]) -> (serde_json::Value, usize) {
    let json_len = u32_at(glb, 12) as usize;
    let json = serde_json::from_slice(&glb[20..20 + json_len]).expect("GLB JSON");
    (json, 20 + json_len + 8)
}

/// A GLB with its JSON changed by `f` (the BIN chunk kept).
pub(super) fn glb_json_edit(glb: &[u8], f: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let (mut json, bin_start) = glb_parts(glb);
    f(&mut json);
    glb_from(&json.to_string(), &glb[bin_start..])
}

/// Where accessor `a`'s first element is in a GLB.
fn accessor_at(json: &serde_json::Value, bin_start: usize, a: usize) -> usize {
    let acc = &json["accessors"][a];
    let view = &json["bufferViews"][acc["bufferView"].as_u64().expect("view") as usize];
    bin_start + view["byteOffset"].as_u64().unwrap_or(0) as usize + acc["byteOffset"].as_u64().unwrap_or(0) as usize
}

// ---------------------------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------------------------

/// A glTF case: the bytes must import with this outcome.
pub type GltfCase = Case<Rig, GltfError>;

/// A case whose error must match `pattern` (with its guard) — `GltfError` holds an I/O error,
/// so it has no `PartialEq`.
macro_rules! gltf_case {
    ($cat:expr, $name:expr, $bytes:expr, $pattern:pat $(if $guard:expr)?) => {
        GltfCase::matching($cat, $name, $bytes, stringify!($pattern $(if $guard)?), move |r| {
            matches!(r, Err($pattern) $(if $guard)?)
        })
    };
}

/// Every glTF case: truncations, magic and version, counts, NaN and infinity, key order, joint
/// indices, weights, hierarchy cycles and degenerate triangles (kept), each with its
/// [`GltfError`] (or, for what the importer accepts, the rig it must give).
pub fn gltf_cases() -> Vec<GltfCase> {
    let mut cases = Vec::new();
    let small = SmallGltf::new();
    let text = small.gltf();
    let glb = small.glb();

    // ---- truncation -------------------------------------------------------------------------
    // A real GLB cut at its chunk boundaries and at every buffer view's start and end.
    let real = read(&gltf_asset("CesiumMan", "glb"));
    let len = real.len();
    let (json, bin_start) = glb_parts(&real);
    let json_end = bin_start - 8;
    let mut cuts = vec![12, 20, json_end, bin_start];
    for v in json["bufferViews"].as_array().expect("views") {
        let off = bin_start + v["byteOffset"].as_u64().unwrap_or(0) as usize;
        cuts.extend([off, off + v["byteLength"].as_u64().expect("length") as usize]);
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts.retain(|&c| c < len);
    let declared = json["buffers"][0]["byteLength"].as_u64().expect("byteLength") as usize;
    for &cut in &cuts {
        let msg = format!("truncated: the header says {len} bytes, there are {cut}");
        cases.push(gltf_case!(
            Truncated,
            format!("CesiumMan.glb cut at {cut}"),
            real[..cut].to_vec(),
            GltfError::Container(s) if *s == msg
        ));
        // The same cut with the container's lengths rewritten: the buffer is short.
        if cut > bin_start {
            let mut b = real[..cut].to_vec();
            put_u32(&mut b, 8, cut as u32);
            put_u32(&mut b, json_end, (cut - bin_start) as u32);
            let actual = cut - bin_start;
            cases.push(gltf_case!(
                Truncated,
                format!("CesiumMan.glb cut at {cut}, lengths rewritten"),
                b,
                GltfError::BufferTooShort { buffer: 0, declared: d, actual: a } if *d == declared && *a == actual
            ));
        }
    }
    let mut b = real[..json_end].to_vec();
    put_u32(&mut b, 8, json_end as u32);
    cases.push(gltf_case!(
        Truncated,
        "CesiumMan.glb without its BIN chunk",
        b,
        GltfError::MissingBuffer { buffer: 0, .. }
    ));
    // The small GLB and .gltf at every byte.
    let glb_len = glb.len();
    for cut in 0..glb_len {
        let bytes = glb[..cut].to_vec();
        if cut < 4 {
            cases.push(gltf_case!(Truncated, format!("small.glb cut to {cut}"), bytes, GltfError::Json(_)));
        } else if cut < 12 {
            let msg = format!("{cut} bytes is shorter than the 12-byte header");
            cases.push(
                gltf_case!(Truncated, format!("small.glb cut to {cut}"), bytes, GltfError::Container(s) if *s == msg),
            );
        } else {
            let msg = format!("truncated: the header says {glb_len} bytes, there are {cut}");
            cases.push(
                gltf_case!(Truncated, format!("small.glb cut to {cut}"), bytes, GltfError::Container(s) if *s == msg),
            );
        }
    }
    // Nothing left (or only whitespace) is said so; any other cut ends the JSON early.
    let blank = text.iter().take_while(|b| b.is_ascii_whitespace()).count();
    for cut in 0..text.len() {
        let empty = cut <= blank;
        cases.push(gltf_case!(
            Truncated,
            format!("small.gltf cut to {cut}"),
            text[..cut].to_vec(),
            GltfError::Json(s) if s.contains(if empty { "empty" } else { "EOF" })
        ));
    }
    // A real .gltf cut before each top-level member.
    let simple = read(&gltf_asset("SimpleSkin", "gltf"));
    let simple_text = String::from_utf8(simple.clone()).expect("UTF-8");
    for key in ["\"nodes\"", "\"meshes\"", "\"skins\"", "\"animations\"", "\"buffers\"", "\"accessors\"", "\"asset\""] {
        let cut = simple_text.find(key).expect("member");
        cases.push(gltf_case!(
            Truncated,
            format!("SimpleSkin.gltf cut before {key}"),
            simple[..cut].to_vec(),
            GltfError::Json(s) if s.contains("EOF")
        ));
    }
    // A base64 buffer shorter than its byteLength.
    let (bin, _) = small.bin();
    let full = base64::engine::general_purpose::STANDARD.encode(&bin);
    let short = base64::engine::general_purpose::STANDARD.encode(&bin[..bin.len() - 12]);
    let t = String::from_utf8(text.clone()).expect("UTF-8").replacen(&full, &short, 1);
    let (declared, actual) = (bin.len(), bin.len() - 12);
    cases.push(gltf_case!(
        Truncated,
        "small.gltf base64 buffer 12 bytes short",
        t.into_bytes(),
        GltfError::BufferTooShort { buffer: 0, declared: d, actual: a } if *d == declared && *a == actual
    ));

    // ---- magic and version ------------------------------------------------------------------
    for (i, to) in [(3, b'f'), (0, b'G')] {
        let mut b = glb.clone();
        b[i] = to;
        cases.push(gltf_case!(Magic, format!("small.glb magic byte {i} changed"), b, GltfError::Json(_)));
    }
    let mut b = real.clone();
    b[..4].copy_from_slice(b"GLTF");
    cases.push(gltf_case!(Magic, "CesiumMan.glb magic GLTF", b, GltfError::Json(_)));
    cases.push(gltf_case!(Magic, "a .sinew file", SmallSinew::new().bytes(), GltfError::Json(_)));
    for v in [0u32, 1, 3, u32::MAX] {
        let mut b = glb.clone();
        put_u32(&mut b, 4, v);
        let msg = format!("version {v}, only 2 is supported");
        cases.push(gltf_case!(Version, format!("GLB version {v}"), b, GltfError::Container(s) if *s == msg));
    }
    for v in ["1.0", "3.0", "2"] {
        let b = small.clone().edit(r#""version":"2.0""#, &format!(r#""version":"{v}""#)).gltf();
        let want = v.to_owned();
        cases.push(gltf_case!(
            Version,
            format!("asset version {v}"),
            b,
            GltfError::UnsupportedVersion { version } if *version == want
        ));
    }
    let b = small.clone().edit(r#""version":"2.0""#, r#""version":"2.0","minVersion":"2.1""#).gltf();
    cases.push(gltf_case!(
        Version,
        "asset minVersion 2.1",
        b,
        GltfError::UnsupportedVersion { version } if version == "2.1"
    ));

    // ---- counts -----------------------------------------------------------------------------
    for count in ["4294967295", "2147483648", "5"] {
        let b = small.clone().edit(r#""count":4,"type":"VEC3""#, &format!(r#""count":{count},"type":"VEC3""#)).gltf();
        cases.push(gltf_case!(
            Counts,
            format!("POSITION count {count}"),
            b,
            GltfError::AccessorOutOfBounds { accessor: 0, .. }
        ));
    }
    let b = small.clone().edit(r#""count":3,"type":"SCALAR""#, r#""count":4294967295,"type":"SCALAR""#).gltf();
    cases.push(gltf_case!(Counts, "key time count 0xffffffff", b, GltfError::AccessorOutOfBounds { accessor: 5, .. }));
    let b = small.clone().edit(r#""byteOffset":0,"byteLength":48"#, r#""byteOffset":0,"byteLength":4294967295"#).gltf();
    cases.push(gltf_case!(
        Counts,
        "buffer view length 0xffffffff",
        b,
        GltfError::AccessorOutOfBounds { accessor: 0, .. }
    ));
    let b =
        small.clone().edit(r#""byteOffset":0,"byteLength":48"#, r#""byteOffset":4294967292,"byteLength":48"#).gltf();
    cases.push(gltf_case!(
        Counts,
        "buffer view offset 0xfffffffc",
        b,
        GltfError::AccessorOutOfBounds { accessor: 0, .. }
    ));
    let (bin, _) = small.bin();
    let b = String::from_utf8(text.clone())
        .expect("UTF-8")
        .replacen(&format!(r#""byteLength":{}"#, bin.len()), r#""byteLength":4294967295"#, 1)
        .into_bytes();
    cases.push(gltf_case!(
        Counts,
        "buffer byteLength 0xffffffff",
        b,
        GltfError::BufferTooShort { buffer: 0, declared: 4294967295, .. }
    ));
    let b = small
        .clone()
        .edit(
            r#"{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}"#,
            r#"{"componentType":5126,"count":100000000,"type":"VEC3","min":[0,0,0],"max":[1,1,0],
                "sparse":{"count":1,"indices":{"bufferView":3,"componentType":5123},"values":{"bufferView":0}}}"#,
        )
        .gltf();
    cases.push(gltf_case!(
        Counts,
        "sparse POSITION of 100 million vertices",
        b,
        GltfError::TooLarge { accessor: 0, limit } if *limit == MIN_DECODE_BUDGET
    ));
    let mut nodes = String::from(r#"[{"name":"root","children":[1]},{"name":"bone"},{"mesh":0,"skin":0}"#);
    nodes.push_str(&",{}".repeat(MAX_NODES - 2));
    nodes.push(']');
    let many = SmallGltf { nodes, ..SmallGltf::new() }.gltf();
    cases.push(gltf_case!(
        Counts,
        "MAX_NODES + 1 nodes",
        many,
        GltfError::TooManyNodes { count, limit } if *count == MAX_NODES + 1 && *limit == MAX_NODES
    ));
    let mut b = glb.clone();
    put_u32(&mut b, 12, u32::MAX);
    cases.push(gltf_case!(Counts, "GLB JSON chunk length 0xffffffff", b, GltfError::Container(_)));
    let b = glb_json_edit(&real, |j| j["accessors"][3]["count"] = u32::MAX.into());
    cases.push(gltf_case!(
        Counts,
        "CesiumMan POSITION count 0xffffffff",
        b,
        GltfError::AccessorOutOfBounds { accessor: 3, .. }
    ));

    // ---- NaN and infinity -------------------------------------------------------------------
    let mut s = small.clone();
    s.positions[2][1] = f32::NAN;
    cases.push(gltf_case!(
        NonFinite,
        "NaN position",
        s.gltf(),
        GltfError::NonFinite { what } if what == "mesh 0 primitive 0 POSITION"
    ));
    let mut s = small.clone();
    s.times[1] = f32::NAN;
    cases.push(gltf_case!(
        NonFinite,
        "NaN key time",
        s.gltf(),
        GltfError::NonFinite { what } if what == "animation 0 channel 0 key time 1"
    ));
    let mut s = small.clone();
    s.rotations[2][3] = f32::INFINITY;
    cases.push(gltf_case!(
        NonFinite,
        "infinite key value",
        s.gltf(),
        GltfError::NonFinite { what } if what == "animation 0 channel 0 key values"
    ));
    let mut s = small.clone();
    s.bind[1][5] = f32::NAN;
    cases.push(gltf_case!(
        NonFinite,
        "NaN inverse bind matrix",
        s.gltf(),
        GltfError::NonFinite { what } if what == "skin 0 inverse bind matrix 1"
    ));
    let mut s = small.clone();
    s.weights[2][1] = f32::NAN;
    cases.push(gltf_case!(
        NonFinite,
        "NaN weight",
        s.gltf(),
        GltfError::NonFinite { what } if what == "mesh 0 primitive 0 vertex 2 weight"
    ));
    let b = small.clone().edit(r#""translation":[0,1,0]"#, r#""translation":[0,1e39,0]"#).gltf();
    cases.push(gltf_case!(
        NonFinite,
        "rest translation 1e39",
        b,
        GltfError::NonFinite { what } if what == "node 1 (bone) translation"
    ));
    let b =
        small.clone().edit(r#""translation":[0,1,0]"#, r#""matrix":[1,0,0,0, 0,1,0,0, 0,0,1,0, 0,-3e39,0,1]"#).gltf();
    cases.push(gltf_case!(
        NonFinite,
        "rest matrix with -3e39",
        b,
        GltfError::NonFinite { what } if what == "node 1 (bone) matrix"
    ));
    let (json, bin_start) = glb_parts(&real);
    let ibm = accessor_at(&json, bin_start, json["skins"][0]["inverseBindMatrices"].as_u64().expect("ibm") as usize);
    let mut b = real.clone();
    put_f32(&mut b, ibm + 64 * 4 + 4 * 14, f32::NAN);
    cases.push(gltf_case!(
        NonFinite,
        "CesiumMan NaN inverse bind matrix 4",
        b,
        GltfError::NonFinite { what } if what == "skin 0 inverse bind matrix 4"
    ));

    // ---- key order --------------------------------------------------------------------------
    for (what, times, key) in [
        ("decreasing", [0.0, 1.0, 0.5], 2),
        // A time given twice is a jump; one that decreases after it is not.
        ("repeated, then decreasing", [0.5, 0.5, 0.25], 2),
        ("first after second", [0.5, 0.25, 1.0], 1),
    ] {
        let mut s = small.clone();
        s.times = times.to_vec();
        cases.push(gltf_case!(
            Unsorted,
            format!("key times {what}"),
            s.gltf(),
            GltfError::UnsortedKeyTimes { animation: 0, channel: 0, key: k } if *k == key
        ));
    }
    // CesiumMan: the key times of the first channel's sampler, keys 1 and 2 swapped.
    let input = json["animations"][0]["samplers"][0]["input"].as_u64().expect("input") as usize;
    let at = accessor_at(&json, bin_start, input);
    let mut b = real.clone();
    let (t1, t2) = (u32_at(&b, at + 4), u32_at(&b, at + 8));
    put_u32(&mut b, at + 4, t2);
    put_u32(&mut b, at + 8, t1);
    cases.push(gltf_case!(
        Unsorted,
        "CesiumMan key times 1 and 2 swapped",
        b,
        GltfError::UnsortedKeyTimes { animation: 0, channel: 0, key: 2 }
    ));

    // ---- joint indices ----------------------------------------------------------------------
    for joint in [2u16, u16::MAX] {
        let mut s = small.clone();
        s.joints[2] = [0, joint, 0, 0];
        cases.push(gltf_case!(
            JointIndex,
            format!("vertex 2 joint {joint} of 2"),
            s.gltf(),
            GltfError::BadIndex { what, index, limit: 2 }
                if what == "mesh 0 primitive 0 vertex 2 joint" && *index == joint as usize
        ));
    }
    let mut s = small.clone();
    s.indices[4] = 4;
    cases.push(gltf_case!(
        JointIndex,
        "triangle vertex 4 of 4",
        s.gltf(),
        GltfError::BadIndex { what, index: 4, limit: 4 } if what == "mesh 0 primitive 0 indices"
    ));
    let b = small.clone().edit(r#""joints":[0,1]"#, r#""joints":[0,7]"#).gltf();
    cases.push(gltf_case!(JointIndex, "skin joint node 7 of 3", b, GltfError::Schema(_)));
    let b = small.clone().edit(r#""target":{"node":1"#, r#""target":{"node":9"#).gltf();
    cases.push(gltf_case!(
        JointIndex,
        "channel target node 9 of 3",
        b,
        GltfError::Schema(s) if s == "animations[0].channels[0].target.node: node 9 does not exist"
    ));
    let weights = json["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_0"].as_u64().expect("weights") as usize;
    let joints_acc = json["meshes"][0]["primitives"][0]["attributes"]["JOINTS_0"].as_u64().expect("joints") as usize;
    let joint_count = json["skins"][0]["joints"].as_array().expect("joints").len();
    let jat = accessor_at(&json, bin_start, joints_acc);
    let wat = accessor_at(&json, bin_start, weights);
    let mut b = real.clone();
    let jstride = json["bufferViews"][json["accessors"][joints_acc]["bufferView"].as_u64().expect("view") as usize]
        ["byteStride"]
        .as_u64()
        .unwrap_or(8) as usize;
    put_u16(&mut b, jat + 9 * jstride, joint_count as u16);
    put_f32(&mut b, wat + 9 * 16, 1.0);
    cases.push(gltf_case!(
        JointIndex,
        "CesiumMan vertex 9 joint past the skin",
        b,
        GltfError::BadIndex { what, index, limit }
            if what == "mesh 0 primitive 0 vertex 9 joint" && *index == joint_count && *limit == joint_count
    ));

    // ---- weights ----------------------------------------------------------------------------
    let mut s = small.clone();
    s.weights[0] = [1.5, -0.5, 0.0, 0.0];
    cases.push(gltf_case!(
        Weights,
        "vertex 0 weights 1.5, -0.5",
        s.gltf(),
        GltfError::NegativeWeight { mesh: 0, primitive: 0, vertex: 0 }
    ));
    let mut s = small.clone();
    s.weights[3] = [0.0; 4];
    cases.push(gltf_case!(
        Weights,
        "vertex 3 weights all zero",
        s.gltf(),
        GltfError::ZeroWeights { mesh: 0, primitive: 0, vertex: 3 }
    ));
    let mut b = real.clone();
    for k in 0..4 {
        put_f32(&mut b, wat + 100 * 16 + 4 * k, 0.0);
    }
    cases.push(gltf_case!(
        Weights,
        "CesiumMan vertex 100 weights all zero",
        b,
        GltfError::ZeroWeights { mesh: 0, primitive: 0, vertex: 100 }
    ));
    let mut b = real.clone();
    put_f32(&mut b, wat + 200 * 16 + 4, -0.125);
    cases.push(gltf_case!(
        Weights,
        "CesiumMan vertex 200 negative weight",
        b,
        GltfError::NegativeWeight { mesh: 0, primitive: 0, vertex: 200 }
    ));
    // Weights summing to 2 are renormalized (with a note), not rejected.
    let mut s = small.clone();
    s.weights[2] = [1.0, 1.0, 0.0, 0.0];
    cases.push(GltfCase::matching(
        Weights,
        "vertex 2 weights summing to 2 (renormalized)",
        s.gltf(),
        "Ok, weights 0.5 and 0.5",
        |r| r.as_ref().is_ok_and(|rig| rig.meshes[0].primitives[0].joint_weights[8..10] == [0.5, 0.5]),
    ));

    // ---- hierarchy cycles -------------------------------------------------------------------
    let cyc =
        |nodes: &str, scenes: &str| SmallGltf { nodes: nodes.into(), scenes: scenes.into(), ..SmallGltf::new() }.gltf();
    cases.push(gltf_case!(
        Cycle,
        "nodes 0 and 1 each other's child",
        cyc(r#"[{"children":[1]},{"children":[0]},{"mesh":0,"skin":0}]"#, r#"[{"nodes":[2]}]"#),
        GltfError::HierarchyCycle { node: 0 }
    ));
    cases.push(gltf_case!(
        Cycle,
        "node 0 its own child",
        cyc(r#"[{"children":[0,1]},{},{"mesh":0,"skin":0}]"#, r#"[{"nodes":[2]}]"#),
        GltfError::HierarchyCycle { node: 0 }
    ));
    cases.push(gltf_case!(
        Cycle,
        "node 1 the child of two nodes",
        cyc(r#"[{"children":[1]},{},{"mesh":0,"skin":0,"children":[1]}]"#, r#"[{"nodes":[0,2]}]"#),
        GltfError::MultipleParents { node: 1 }
    ));
    cases.push(gltf_case!(
        Cycle,
        "scene root with a parent",
        cyc(r#"[{"children":[1]},{},{"mesh":0,"skin":0}]"#, r#"[{"nodes":[0,1,2]}]"#),
        GltfError::NotARoot { scene: 0, node: 1 }
    ));
    let b = glb_json_edit(&real, |j| {
        let children = j["nodes"][3]["children"].as_array_mut().expect("children");
        children.push(0.into());
    });
    cases.push(gltf_case!(Cycle, "CesiumMan root made a child of node 3", b, GltfError::HierarchyCycle { node: 0 }));

    // ---- degenerate triangles: kept by the importer -----------------------------------------
    let mut s = small.clone();
    s.indices = vec![0, 1, 2, 2, 2, 3];
    cases.push(GltfCase::matching(
        Degenerate,
        "triangle 1 repeats vertex 2 (kept)",
        s.gltf(),
        "Ok, indices as in the file",
        |r| r.as_ref().is_ok_and(|rig| rig.meshes[0].primitives[0].indices == [0, 1, 2, 2, 2, 3]),
    ));
    let strip = small.clone().edit(r#""indices":3}"#, r#""indices":3,"mode":5}"#).gltf();
    cases.push(GltfCase::matching(
        Degenerate,
        "triangle strip with a repeated index (kept)",
        strip,
        "Ok, 4 triangles",
        |r| r.as_ref().is_ok_and(|rig| rig.meshes[0].primitives[0].indices.len() == 12),
    ));
    cases.extend(image_cases());
    cases.extend(super::morph::morph_cases());
    cases.extend(super::meshopt::meshopt_cases());
    cases.extend(super::draco::draco_cases());
    cases
}

// ---------------------------------------------------------------------------------------------
// Hostile clips for the baker
// ---------------------------------------------------------------------------------------------

/// A glTF chain of `joints` nodes (5 cm apart), the first `animated` of them with a LINEAR
/// rotation channel of `keys` keys sharing one time accessor. `noise` jitters every key so key
/// reduction keeps them all and the error measurement keeps tightening.
pub fn chain_glb(joints: usize, animated: usize, keys: usize, noise: f32) -> Vec<u8> {
    let mut bin: Vec<u8> = (0..keys).flat_map(|k| (k as f32 / 30.0).to_le_bytes()).collect();
    let mut seed = 0x2545_f491u32;
    let mut jitter = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        (seed as f32 / u32::MAX as f32 - 0.5) * noise
    };
    for c in 0..animated {
        for k in 0..keys {
            let a = 0.6 * (k as f32 * 0.05 + c as f32).sin() + jitter();
            let (s, co) = (0.5 * a).sin_cos();
            let axis = [(c as f32).cos(), 0.6, (c as f32).sin()];
            let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
            for v in [s * axis[0] / n, s * axis[1] / n, s * axis[2] / n, co] {
                bin.extend(v.to_le_bytes());
            }
        }
    }
    let nodes: Vec<String> = (0..joints)
        .map(|i| {
            let children = if i + 1 < joints { format!(r#","children":[{}]"#, i + 1) } else { String::new() };
            format!(r#"{{"name":"j{i}","translation":[0,0.05,0]{children}}}"#)
        })
        .collect();
    let mut views = vec![format!(r#"{{"buffer":0,"byteOffset":0,"byteLength":{}}}"#, 4 * keys)];
    let mut accessors = vec![format!(r#"{{"bufferView":0,"componentType":5126,"count":{keys},"type":"SCALAR"}}"#)];
    let mut samplers = Vec::new();
    let mut channels = Vec::new();
    for c in 0..animated {
        views.push(format!(r#"{{"buffer":0,"byteOffset":{},"byteLength":{}}}"#, 4 * keys + 16 * keys * c, 16 * keys));
        accessors.push(format!(r#"{{"bufferView":{},"componentType":5126,"count":{keys},"type":"VEC4"}}"#, c + 1));
        samplers.push(format!(r#"{{"input":0,"output":{},"interpolation":"LINEAR"}}"#, c + 1));
        channels.push(format!(r#"{{"sampler":{c},"target":{{"node":{c},"path":"rotation"}}}}"#));
    }
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{}],
"animations":[{{"name":"hostile","channels":[{}],"samplers":[{}]}}],
"accessors":[{}],"bufferViews":[{}],"buffers":[{{"byteLength":{}}}]}}"#,
        nodes.join(","),
        channels.join(","),
        samplers.join(","),
        accessors.join(","),
        views.join(","),
        bin.len()
    );
    glb_from(&json, &bin)
}

/// The clip of the work-budget fallback tests, from [`hostile_chain`].
pub struct HostileChain {
    /// Joints in the chain.
    pub joints: usize,
    /// Joints with a rotation channel (the first ones).
    pub animated: usize,
    /// Keys per channel, all at distinct times.
    pub keys: usize,
    /// The model, a GLB from [`chain_glb`].
    pub glb: Vec<u8>,
}

/// 1000 joints, 8 of them animated, each with enough keys (`MAX_BAKE_WORK / (4 × 1008) + 2`)
/// that one error measurement of the clip alone is past [`MAX_BAKE_WORK`], jittered by 0.01.
pub fn hostile_chain() -> HostileChain {
    let (joints, animated) = (1000, 8);
    let keys = (MAX_BAKE_WORK / (4 * (joints + animated) as u64)) as usize + 2;
    HostileChain { joints, animated, keys, glb: chain_glb(joints, animated, keys, 0.01) }
}

/// Where a GLB's image `i` (stored in a buffer view) is: its bytes' range.
fn image_range(glb: &[u8], i: usize) -> std::ops::Range<usize> {
    let (json, bin_start) = glb_parts(glb);
    let view = &json["bufferViews"][json["images"][i]["bufferView"].as_u64().expect("image view") as usize];
    let start = bin_start + view["byteOffset"].as_u64().unwrap_or(0) as usize;
    start..start + view["byteLength"].as_u64().expect("length") as usize
}

/// Offset of a JPEG's frame header (SOF0 to SOF2 marker) within `jpeg`.
fn jpeg_frame(jpeg: &[u8]) -> usize {
    let mut i = 2;
    while i + 4 < jpeg.len() {
        if (0xC0..=0xC2).contains(&jpeg[i + 1]) {
            return i;
        }
        i += 2 + u16::from_be_bytes([jpeg[i + 2], jpeg[i + 3]]) as usize;
    }
    panic!("no JPEG frame header");
}

/// Textures: CesiumMan's JPEG and Fox's PNG truncated, corrupt and oversized, each refused
/// naming image 0 (part of [`gltf_cases`]).
#[must_use]
pub fn image_cases() -> Vec<GltfCase> {
    let mut cases = Vec::new();
    let cesium = read(&gltf_asset("CesiumMan", "glb"));
    let fox = read(&gltf_asset("Fox", "glb"));
    for (model, glb) in [("CesiumMan", &cesium), ("Fox", &fox)] {
        let r = image_range(glb, 0);
        // The image's buffer view cut to a part of it.
        for keep in [0usize, 8, 100, r.len() / 2] {
            let b = glb_json_edit(glb, |j| {
                let v = j["images"][0]["bufferView"].as_u64().expect("view") as usize;
                j["bufferViews"][v]["byteLength"] = keep.into();
            });
            cases.push(gltf_case!(
                Image,
                format!("{model}.glb image cut to {keep} bytes"),
                b,
                GltfError::BadImage { image: 0, .. } | GltfError::UnsupportedImage { image: 0, .. }
            ));
        }
    }
    // CesiumMan: the JPEG frame header says 65535 × 65535, or its markers are overwritten.
    let r = image_range(&cesium, 0);
    let sof = r.start + jpeg_frame(&cesium[r.clone()]);
    let mut b = cesium.clone();
    b[sof + 5..sof + 9].copy_from_slice(&[0xFF; 4]);
    cases.push(gltf_case!(
        Image,
        "CesiumMan.glb JPEG of 65535 × 65535",
        b,
        GltfError::ImageTooLarge { image: 0, width: 65535, height: 65535, .. }
    ));
    let mut b = cesium.clone();
    b[sof..sof + 16].fill(0);
    cases.push(gltf_case!(Image, "CesiumMan.glb JPEG frame header zeroed", b, GltfError::BadImage { image: 0, .. }));
    // Fox: the PNG header says 9000 wide (its checksum kept right), or a data byte changes.
    let r = image_range(&fox, 0);
    let mut b = fox.clone();
    let ihdr = r.start + 12;
    b[ihdr + 4..ihdr + 8].copy_from_slice(&9000u32.to_be_bytes());
    let crc = sinew::asset::crc32(&b[ihdr..ihdr + 17]);
    b[ihdr + 17..ihdr + 21].copy_from_slice(&crc.to_be_bytes());
    cases.push(gltf_case!(
        Image,
        "Fox.glb PNG of 9000 × 1024",
        b,
        GltfError::ImageTooLarge { image: 0, width: 9000, height: 1024, .. }
    ));
    let mut b = fox.clone();
    b[r.start + r.len() / 2] ^= 0x5A;
    cases.push(gltf_case!(Image, "Fox.glb PNG data byte changed", b, GltfError::BadImage { image: 0, .. }));
    cases.extend(webp_cases());
    cases
}

/// A lossless WebP texture (`EXT_texture_webp`, the 16 × 16 quad of
/// `frontend-sdl/offline/tests/data/textures`) truncated, or its VP8L header saying
/// 10000 × 16, each refused naming image 0 (part of [`image_cases`]).
fn webp_cases() -> Vec<GltfCase> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../frontend-sdl/offline/tests/data/textures/quad-webp.glb");
    let quad = read(&path);
    let r = image_range(&quad, 0);
    let mut cases = Vec::new();
    for keep in [0usize, 8, 20, r.len() / 2] {
        let b = glb_json_edit(&quad, |j| {
            let v = j["images"][0]["bufferView"].as_u64().expect("view") as usize;
            j["bufferViews"][v]["byteLength"] = keep.into();
        });
        cases.push(gltf_case!(
            Image,
            format!("quad-webp.glb WebP cut to {keep} bytes"),
            b,
            GltfError::BadImage { image: 0, .. }
        ));
    }
    // RIFF, size, WEBP, VP8L, chunk size, signature 0x2F, then 14 bits of width − 1.
    let header = r.start + 21;
    assert_eq!(&quad[r.start + 12..r.start + 16], b"VP8L", "a lossless WebP image");
    let mut b = quad.clone();
    let bits = u32::from_le_bytes(b[header..header + 4].try_into().expect("4 bytes"));
    b[header..header + 4].copy_from_slice(&((bits & !0x3FFF) | 9999).to_le_bytes());
    cases.push(gltf_case!(
        Image,
        "quad-webp.glb WebP of 10000 × 16",
        b,
        GltfError::ImageTooLarge { image: 0, width: 10000, height: 16, .. }
    ));
    cases
}
