//! Tests of the glTF importer, grouped like its files: the sample models (`samples`), and a tiny
//! synthetic skinned model varied to reach every error and note (`container`, `accessors`,
//! `hierarchy`, `meshes`, `animations`). The helpers and the tiny model are here.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Instant;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use sinew::math::{Mat4, Quat, Vec3};

use super::matrix::decompose;
use super::{load_bytes, load_file, GltfError, DEFAULT_COLOR, MAX_NODES, MIN_DECODE_BUDGET};
use crate::rig::{ChannelTarget, Interpolation, Rig, RigMesh, RigPrimitive};

mod accessors;
mod animations;
mod container;
mod hierarchy;
mod materials;
mod meshes;
mod optional;
mod overflow;
mod samples;

// ---- helpers ------------------------------------------------------------------------

fn asset(rel: &str) -> PathBuf {
    sinew_assets::path(rel)
}

fn sample(model: &str) -> PathBuf {
    let ext = if model == "SimpleSkin" { "gltf" } else { "glb" };
    asset(&format!("gltf/{model}/{model}.{ext}"))
}

fn load(model: &str) -> Rig {
    let rig = load_file(&sample(model)).unwrap_or_else(|e| panic!("{model}: {e}"));
    check_invariants(&rig);
    rig
}

const MODELS: [&str; 10] = [
    "RiggedSimple",
    "SimpleSkin",
    "RiggedFigure",
    "CesiumMan",
    "Fox",
    "BrainStem",
    "RecursiveSkeletons",
    "InterpolationTest",
    "BoxAnimated",
    "AnimatedMorphCube",
];

/// Everything the importer promises about a rig, whatever the file was.
fn check_invariants(rig: &Rig) {
    let nj = rig.joints.len();
    let mut names = HashSet::new();
    for (i, j) in rig.joints.iter().enumerate() {
        assert!(j.parent.is_none_or(|p| p < i), "joint {i} parent {:?} is not before it", j.parent);
        assert!(names.insert(j.name.clone()), "duplicate joint name {}", j.name);
        assert!(j.rest.is_finite());
        let q = j.rest.rotation;
        assert!((q.length_squared() - 1.0).abs() < 1.0e-4, "joint {i} rotation not unit");
    }
    for s in &rig.skins {
        assert_eq!(s.joints.len(), s.inverse_bind.len());
        assert!(s.joints.iter().all(|&j| j < nj));
        assert!(s.inverse_bind.iter().flatten().all(|v| v.is_finite()));
    }
    for m in &rig.meshes {
        match (m.skin, m.node) {
            (Some(s), None) => assert!(s < rig.skins.len()),
            (None, Some(n)) => assert!(n < nj),
            other => panic!("mesh {} has skin/node {other:?}", m.name),
        }
        let skin_joints = m.skin.and_then(|s| rig.skins.get(s)).map_or(0, |s| s.joints.len());
        for p in &m.primitives {
            let n = p.positions.len();
            assert!(n > 0);
            assert!(p.positions.iter().flatten().all(|v| v.is_finite()));
            assert!(p.normals.as_ref().is_none_or(|v| v.len() == n && v.iter().flatten().all(|x| x.is_finite())));
            assert!(p.tangents.as_ref().is_none_or(|v| v.len() == n && v.iter().flatten().all(|x| x.is_finite())));
            assert_eq!(p.joint_indices.len(), n * p.influences);
            assert_eq!(p.joint_weights.len(), n * p.influences);
            assert!(p.influences == 0 || m.skin.is_some());
            assert!(p.joint_indices.iter().all(|&j| usize::from(j) < skin_joints));
            assert!(p.joint_weights.iter().all(|&w| w.is_finite() && w >= 0.0));
            assert_eq!(p.indices.len() % 3, 0);
            assert!(p.indices.iter().all(|&i| (i as usize) < n));
            assert!(p.color.iter().all(|c| c.is_finite()));
        }
    }
    let mut clip_names = HashSet::new();
    for c in &rig.clips {
        assert!(clip_names.insert(c.name.clone()), "duplicate clip name {}", c.name);
        let mut seen = HashSet::new();
        for ch in &c.channels {
            assert!(ch.joint < nj);
            assert!(seen.insert((ch.joint, ch.target)), "two {:?} channels on joint {}", ch.target, ch.joint);
            assert!(!ch.times.is_empty());
            assert!(ch.times.iter().all(|t| t.is_finite()));
            assert!(ch.times.windows(2).all(|w| w[0] < w[1]));
            let per_key = if ch.interpolation == Interpolation::CubicSpline { 3 } else { 1 };
            assert_eq!(ch.values.len(), ch.times.len() * per_key * ch.target.components());
            assert!(ch.values.iter().all(|v| v.is_finite()));
        }
    }
}

fn world_matrices(rig: &Rig) -> Vec<Mat4<f32>> {
    let mut world: Vec<Mat4<f32>> = Vec::with_capacity(rig.joints.len());
    for j in &rig.joints {
        let local = j.rest.to_mat4();
        let w = match j.parent {
            Some(p) => world[p] * local,
            None => local,
        };
        world.push(w);
    }
    world
}

/// `world(joint) × inverse bind(joint)` for each joint of a skin, in the rest pose.
fn rest_skin_matrices(rig: &Rig, skin: usize) -> Vec<Mat4<f32>> {
    let world = world_matrices(rig);
    let s = &rig.skins[skin];
    s.joints.iter().zip(&s.inverse_bind).map(|(&j, ibm)| world[j] * Mat4::from_cols_array(ibm)).collect()
}

fn max_diff(a: &Mat4<f32>, b: &Mat4<f32>) -> f32 {
    let mut err = 0.0f32;
    for c in 0..4 {
        for r in 0..4 {
            err = err.max((a.cols[c][r] - b.cols[c][r]).abs());
        }
    }
    err
}

/// Largest element of |world × inverse bind − identity| over a skin's joints in the rest
/// pose: 0 when the inverse bind matrices invert the rest pose's world matrices.
fn bind_error(rig: &Rig, skin: usize) -> f32 {
    rest_skin_matrices(rig, skin).iter().map(|m| max_diff(m, &Mat4::IDENTITY)).fold(0.0, f32::max)
}

/// Largest element of |world × inverse bind − the same for skin joint 0|: 0 when the rest
/// pose moves the whole mesh rigidly (the bind pose is the rest pose up to a transform
/// above the joints, such as an armature root's).
fn bind_rigidity_error(rig: &Rig, skin: usize) -> f32 {
    let m = rest_skin_matrices(rig, skin);
    m.iter().map(|x| max_diff(x, &m[0])).fold(0.0, f32::max)
}

fn primitives(rig: &Rig) -> impl Iterator<Item = &RigPrimitive> {
    rig.meshes.iter().flat_map(|m| m.primitives.iter())
}

fn vertex_count(rig: &Rig) -> usize {
    primitives(rig).map(|p| p.positions.len()).sum()
}

fn vertex_count_of(m: &RigMesh) -> usize {
    m.primitives.iter().map(|p| p.positions.len()).sum()
}

/// Most influences with a non-zero weight on any vertex.
fn max_used_influences(rig: &Rig) -> usize {
    primitives(rig)
        .filter(|p| p.influences > 0)
        .flat_map(|p| p.joint_weights.chunks(p.influences).map(|w| w.iter().filter(|&&x| x > 0.0).count()))
        .max()
        .unwrap_or(0)
}

/// Largest |sum of weights − 1| over skinned vertices.
fn max_weight_sum_error(rig: &Rig) -> f32 {
    primitives(rig)
        .filter(|p| p.influences > 0)
        .flat_map(|p| p.joint_weights.chunks(p.influences).map(|w| (w.iter().sum::<f32>() - 1.0).abs()))
        .fold(0.0, f32::max)
}

fn channel_count(rig: &Rig) -> usize {
    rig.clips.iter().map(|c| c.channels.len()).sum()
}

fn close(a: f32, b: f32, eps: f32) -> bool {
    (a - b).abs() <= eps
}

fn has_note(rig: &Rig, needle: &str) -> bool {
    rig.notes.iter().any(|n| n.contains(needle))
}

// ---- a tiny synthetic skinned model -------------------------------------------------

/// A 3-node, 2-joint skinned triangle with one rotation channel, built in memory.
#[derive(Clone)]
struct Tiny {
    positions: Vec<[f32; 3]>,
    joints: Vec<[u8; 4]>,
    weights: Vec<[f32; 4]>,
    indices: Vec<u16>,
    times: Vec<f32>,
    values: Vec<[f32; 4]>,
    interpolation: &'static str,
    nodes: String,
    scenes: String,
    position_offset: usize,
    /// Store JOINTS_0 as u16, WEIGHTS_0 as normalized u8 and rotations as normalized i16.
    integers: bool,
    extra_channels: String,
}

impl Tiny {
    fn new() -> Self {
        Tiny {
            positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            joints: vec![[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]],
            weights: vec![[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]],
            indices: vec![0, 1, 2],
            times: vec![0.0, 0.5, 1.0],
            values: vec![[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.38268343, 0.9238795], [0.0, 0.0, 0.70710677, 0.70710677]],
            interpolation: "LINEAR",
            nodes: r#"[{"name":"root","translation":[0,1,0],"children":[1]},
                           {"name":"bone","translation":[0,1,0]},
                           {"name":"skinned","mesh":0,"skin":0}]"#
                .into(),
            scenes: r#"[{"nodes":[0,2]}]"#.into(),
            position_offset: 0,
            integers: false,
            extra_channels: String::new(),
        }
    }

    /// The binary buffer and its views (offset, length), 4-byte aligned.
    fn bin(&self) -> (Vec<u8>, Vec<(usize, usize)>) {
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
        let mut pos = vec![0u8; self.position_offset];
        pos.extend(f(&self.positions.concat()));
        push(pos);
        if self.integers {
            push(self.joints.concat().iter().flat_map(|&j| u16::from(j).to_le_bytes()).collect());
            push(self.weights.concat().iter().map(|&w| (w * 255.0).round() as u8).collect());
        } else {
            push(self.joints.concat());
            push(f(&self.weights.concat()));
        }
        push(self.indices.iter().flat_map(|i| i.to_le_bytes()).collect());
        let ibm = [
            Mat4::from_translation(Vec3::new(0.0f32, -1.0, 0.0)).to_cols_array(),
            Mat4::from_translation(Vec3::new(0.0f32, -2.0, 0.0)).to_cols_array(),
        ];
        push(f(&ibm.concat()));
        push(f(&self.times));
        if self.integers {
            let norm = |v: f32| ((v * 32767.0).round() as i16).to_le_bytes();
            push(self.values.concat().iter().flat_map(|&v| norm(v)).collect());
        } else {
            push(f(&self.values.concat()));
        }
        (bin, views)
    }

    fn json(&self, buffer: &str, views: &[(usize, usize)]) -> String {
        let views: Vec<String> =
            views.iter().map(|(o, l)| format!(r#"{{"buffer":0,"byteOffset":{o},"byteLength":{l}}}"#)).collect();
        format!(
            r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":{scenes},"nodes":{nodes},
"skins":[{{"joints":[0,1],"inverseBindMatrices":4}}],
"meshes":[{{"name":"tri","primitives":[{{"attributes":{{"POSITION":0,"JOINTS_0":1,"WEIGHTS_0":2}},"indices":3}}]}}],
"animations":[{{"name":"spin","channels":[{{"sampler":0,"target":{{"node":1,"path":"rotation"}}}}{extra}],
 "samplers":[{{"input":5,"output":6,"interpolation":"{interp}"}}]}}],
"accessors":[
 {{"bufferView":0,"byteOffset":{po},"componentType":5126,"count":{nv},"type":"VEC3","min":[0,0,0],"max":[1,1,0]}},
 {{"bufferView":1,"componentType":{jt},"count":{nj},"type":"VEC4"}},
 {{"bufferView":2,"componentType":{wt},"count":{nw},"type":"VEC4"{wn}}},
 {{"bufferView":3,"componentType":5123,"count":{ni},"type":"SCALAR"}},
 {{"bufferView":4,"componentType":5126,"count":2,"type":"MAT4"}},
 {{"bufferView":5,"componentType":5126,"count":{nt},"type":"SCALAR"}},
 {{"bufferView":6,"componentType":{rt},"count":{nr},"type":"VEC4"{wn}}}],
"bufferViews":[{views}],
"buffers":[{buffer}]}}"#,
            scenes = self.scenes,
            nodes = self.nodes,
            extra = self.extra_channels,
            interp = self.interpolation,
            po = self.position_offset,
            nv = self.positions.len(),
            nj = self.joints.len(),
            nw = self.weights.len(),
            ni = self.indices.len(),
            nt = self.times.len(),
            nr = self.values.len(),
            jt = if self.integers { 5123 } else { 5121 },
            wt = if self.integers { 5121 } else { 5126 },
            rt = if self.integers { 5122 } else { 5126 },
            wn = if self.integers { r#","normalized":true"# } else { "" },
            views = views.join(","),
        )
    }

    /// As `.gltf` text with the buffer in a base64 data: URI.
    fn gltf(&self) -> String {
        let (bin, views) = self.bin();
        let buffer = format!(
            r#"{{"byteLength":{},"uri":"data:application/octet-stream;base64,{}"}}"#,
            bin.len(),
            STANDARD.encode(&bin)
        );
        self.json(&buffer, &views)
    }

    /// As a GLB container.
    fn glb(&self) -> Vec<u8> {
        let (mut bin, views) = self.bin();
        let mut json = self.json(&format!(r#"{{"byteLength":{}}}"#, bin.len()), &views).into_bytes();
        while !json.len().is_multiple_of(4) {
            json.push(b' ');
        }
        while bin.len() % 4 != 0 {
            bin.push(0);
        }
        glb_from_chunks(&json, Some(&bin))
    }

    fn load(&self) -> Result<Rig, GltfError> {
        let r = load_bytes(self.gltf().as_bytes(), None, "tiny");
        if let Ok(rig) = &r {
            check_invariants(rig);
        }
        r
    }
}

fn glb_from_chunks(json: &[u8], bin: Option<&[u8]>) -> Vec<u8> {
    let total = 12 + 8 + json.len() + bin.map_or(0, |b| 8 + b.len());
    let mut out = Vec::with_capacity(total);
    out.extend(b"glTF");
    out.extend(2u32.to_le_bytes());
    out.extend((total as u32).to_le_bytes());
    out.extend((json.len() as u32).to_le_bytes());
    out.extend(b"JSON");
    out.extend(json);
    if let Some(b) = bin {
        out.extend((b.len() as u32).to_le_bytes());
        out.extend(b"BIN\0");
        out.extend(b);
    }
    out
}
