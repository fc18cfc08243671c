//! The FBX importer on the shared FBX files (`../shared/assets/fbx`, three from ufbx's test data
//! and one from assimp's): each imports and bakes; Maya's binary and ASCII exports of one scene
//! give the same rig; the skinned Maya sausage posed by the baked clip matches the skinned mesh
//! Maya wrote at two frames (ufbx's own skinning test data); and every joint's world position
//! at four times of every clip matches an independent FBX loader, three.js's `FBXLoader` (the
//! release pinned in `frontend-sdl/web/package-lock.json`) run in Node. The inputs the fuzz
//! target `fbx` once failed on (`tests/fuzz/regressions/fbx`) import without a panic.

#![cfg(feature = "fbx")]

use std::path::{Path, PathBuf};
use std::process::Command;

use sinew::clip::RotationInterpolation;
use sinew::limits::MAX_INFLUENCES;
use sinew::math::{Mat4, SoaTransform, Vec3};
use sinew_offline::bake::BakeOptions;
use sinew_offline::import::fbx::{load_bytes, load_file, FbxError};
use sinew_offline::model::{DqPalette, Model, Skinning};
use sinew_offline::rig::Rig;

#[path = "support/npm.rs"]
mod npm;

/// The four files, as `sinew_assets` paths.
const FILES: [&str; 4] = [
    "fbx/ufbx/blender_279_sausage_7400_binary.fbx",
    "fbx/ufbx/maya_game_sausage_7500_binary_wiggle.fbx",
    "fbx/ufbx/maya_game_sausage_7500_ascii_wiggle.fbx",
    "fbx/assimp/huesitos.fbx",
];

fn load(rel: &str) -> Rig {
    load_file(&sinew_assets::path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Bakes with every key kept as `f32` and every influence, so the pose is the rig's own.
fn bake_exact(rig: &Rig) -> Model {
    let opts = BakeOptions { lossless: true, max_influences: MAX_INFLUENCES, ..BakeOptions::default() };
    Model::from_rig(rig, &opts).unwrap_or_else(|e| panic!("{}: {e}", rig.name))
}

/// Model-space joint matrices of clip `clip` at `t` seconds.
fn world_at(model: &Model, clip: usize, t: f32) -> Vec<Mat4<f32>> {
    let (mut cursor, mut pose, mut world) = (Vec::new(), Vec::<SoaTransform<f32>>::new(), Vec::new());
    model.sample(Some(clip), t, RotationInterpolation::Slerp, &mut cursor, &mut pose).expect("sampling");
    model.world(&pose, &mut world).expect("local to model");
    world
}

/// Every skinned vertex of every mesh at clip `clip`, time `t`.
fn skinned_at(model: &Model, clip: usize, t: f32) -> Vec<Vec3<f32>> {
    let world = world_at(model, clip, t);
    let mut out = Vec::new();
    for mesh in 0..model.asset().num_meshes() {
        let skin = model.asset().mesh(mesh).and_then(|m| m.skin());
        let palette = skin.map(|s| model.palette(&world, s).expect("palette")).unwrap_or_default();
        let parts = model.skin_mesh(mesh, &world, &palette, &DqPalette::default(), Skinning::Lbs).expect("skinning");
        out.extend(parts.into_iter().flat_map(|p| p.positions));
    }
    out
}

fn dist(a: Vec3<f32>, b: Vec3<f32>) -> f32 {
    ((a.x - b.x).powi(2) + (a.y - b.y).powi(2) + (a.z - b.z).powi(2)).sqrt()
}

/// The diagonal of the bounding box of `points`.
fn size(points: &[Vec3<f32>]) -> f32 {
    let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    for p in points {
        for (k, c) in [p.x, p.y, p.z].into_iter().enumerate() {
            lo[k] = lo[k].min(c);
            hi[k] = hi[k].max(c);
        }
    }
    (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f32>().sqrt()
}

/// The largest distance from a point of either set to the nearest point of the other.
fn set_distance(a: &[Vec3<f32>], b: &[Vec3<f32>]) -> f32 {
    let one_way = |a: &[Vec3<f32>], b: &[Vec3<f32>]| {
        a.iter().map(|&p| b.iter().map(|&q| dist(p, q)).fold(f32::INFINITY, f32::min)).fold(0.0, f32::max)
    };
    one_way(a, b).max(one_way(b, a))
}

/// The `v` lines of an OBJ file.
fn obj_positions(text: &str) -> Vec<Vec3<f32>> {
    text.lines()
        .filter_map(|l| l.strip_prefix("v "))
        .map(|l| {
            let v: Vec<f32> = l.split_whitespace().map(|x| x.parse().expect("a number")).collect();
            Vec3::new(v[0], v[1], v[2])
        })
        .collect()
}

#[test]
fn every_file_imports_and_bakes() {
    for rel in FILES {
        let rig = load(rel);
        assert!(!rig.joints.is_empty() && !rig.skins.is_empty() && !rig.meshes.is_empty(), "{rel}");
        assert!(!rig.clips.is_empty() && rig.clips.iter().all(|c| !c.channels.is_empty()), "{rel}");
        for m in &rig.meshes {
            for p in &m.primitives {
                assert!(p.normals.is_some() && p.influences > 0, "{rel}: {}", m.name);
                // Influences are normalized.
                for w in p.joint_weights.chunks(p.influences) {
                    assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{rel}: {w:?}");
                }
            }
        }
        let model = Model::from_rig(&rig, &BakeOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(model.asset().num_clips(), rig.clips.len(), "{rel}");
        eprintln!(
            "{rel}: {} joints, {} skins, {} meshes, clips {:?}, notes {:?}",
            rig.joints.len(),
            rig.skins.len(),
            rig.meshes.len(),
            rig.clips.iter().map(|c| (&c.name, c.time_range())).collect::<Vec<_>>(),
            rig.notes
        );
    }
}

/// Maya's binary (7500, 64-bit headers) and ASCII exports of the sausage scene: the same joints,
/// skins, meshes and clips, values equal to f32 rounding of the ASCII file's decimals.
#[test]
fn maya_binary_and_ascii_give_the_same_rig() {
    let a = load(FILES[1]);
    let b = load(FILES[2]);
    let close = |x: &[f32], y: &[f32], what: &str| {
        assert_eq!(x.len(), y.len(), "{what}");
        for (p, q) in x.iter().zip(y) {
            assert!((p - q).abs() <= 1e-5 * (1.0 + p.abs()), "{what}: {p} and {q}");
        }
    };
    assert_eq!(a.joints.len(), b.joints.len());
    for (ja, jb) in a.joints.iter().zip(&b.joints) {
        assert_eq!((&ja.name, ja.parent), (&jb.name, jb.parent));
        let t = |j: &sinew_offline::rig::RigJoint| {
            let r = j.rest;
            [r.translation.x, r.translation.y, r.translation.z, r.rotation.x, r.rotation.y, r.rotation.z]
                .into_iter()
                .chain([r.rotation.w, r.scale.x, r.scale.y, r.scale.z])
                .collect::<Vec<f32>>()
        };
        close(&t(ja), &t(jb), &ja.name);
    }
    assert_eq!(a.skins.len(), b.skins.len());
    for (sa, sb) in a.skins.iter().zip(&b.skins) {
        assert_eq!(sa.joints, sb.joints);
        close(&sa.inverse_bind.concat(), &sb.inverse_bind.concat(), "inverse bind");
    }
    assert_eq!(a.meshes.len(), b.meshes.len());
    for (ma, mb) in a.meshes.iter().zip(&b.meshes) {
        assert_eq!(
            (&ma.name, ma.skin, ma.node, ma.primitives.len()),
            (&mb.name, mb.skin, mb.node, mb.primitives.len())
        );
        for (pa, pb) in ma.primitives.iter().zip(&mb.primitives) {
            assert_eq!(pa.indices, pb.indices);
            close(&pa.positions.concat(), &pb.positions.concat(), "positions");
            close(&pa.normals.clone().unwrap().concat(), &pb.normals.clone().unwrap().concat(), "normals");
            assert_eq!((pa.influences, &pa.joint_indices), (pb.influences, &pb.joint_indices));
            close(&pa.joint_weights, &pb.joint_weights, "weights");
        }
    }
    assert_eq!(a.clips.len(), b.clips.len());
    for (ca, cb) in a.clips.iter().zip(&b.clips) {
        assert_eq!((&ca.name, ca.channels.len()), (&cb.name, cb.channels.len()));
        for (x, y) in ca.channels.iter().zip(&cb.channels) {
            assert_eq!((x.joint, x.target, x.interpolation), (y.joint, y.target, y.interpolation));
            close(&x.times, &y.times, "key times");
            close(&x.values, &y.values, "key values");
        }
    }
}

/// ufbx's skinning test data: Maya's skinned sausage written as OBJ at frames 10 and 18 of
/// "wiggle" (24 frames per second, so 10/24 s and 18/24 s on the file's time line; centimeters).
/// The baked clip, sampled there and skinned by the core, gives the same vertices.
#[test]
fn maya_sausage_skinned_matches_mayas_obj_at_frames_10_and_18() {
    for rel in [FILES[1], FILES[2]] {
        let rig = load(rel);
        let model = bake_exact(&rig);
        let clip = model.find_clip("wiggle").expect("the wiggle clip");
        for frame in [10, 18] {
            let text =
                std::fs::read_to_string(sinew_assets::path(&format!("fbx/ufbx/maya_game_sausage_wiggle_{frame}.obj")))
                    .expect("the OBJ snapshot");
            let expected: Vec<Vec3<f32>> = obj_positions(&text).into_iter().map(|p| p * 0.01).collect();
            let got = skinned_at(&model, clip, frame as f32 / 24.0);
            let (d, s) = (set_distance(&got, &expected), size(&expected));
            eprintln!(
                "{rel} frame {frame}: largest distance to Maya's OBJ {d:.3e} m, model size {s:.4} m ({:.2e} of it)",
                d / s
            );
            assert!(d <= 1e-3 * s, "{rel} frame {frame}: {d} m off, size {s} m");
            // The other frame's pose is far from this snapshot: the check tells poses apart.
            let other = skinned_at(&model, clip, (28 - frame) as f32 / 24.0);
            let d_other = set_distance(&other, &expected);
            assert!(d_other > 0.05 * s, "{rel} frame {frame}: frame {} is only {d_other} m away", 28 - frame);
        }
    }
}

/// The `three` npm package of `frontend-sdl/web` (installed from its lockfile when missing or
/// stale, as the browser tests do).
fn three_dir() -> PathBuf {
    let modules = npm::node_modules().unwrap_or_else(|why| panic!("three.js's FBXLoader cannot run: {why}"));
    modules.join("three")
}

/// A name as three.js's `PropertyBinding.sanitizeNodeName` writes it: white space to `_`, and
/// `[`, `]`, `.`, `:`, `/` removed.
fn sanitized(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '[' | ']' | '.' | ':' | '/'))
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect()
}

/// The names that appear once in `names`.
fn unique<'a>(names: impl Iterator<Item = &'a str>) -> std::collections::HashSet<&'a str> {
    let mut seen = std::collections::HashMap::new();
    for n in names {
        *seen.entry(n).or_insert(0) += 1;
    }
    seen.into_iter().filter(|&(_, c)| c == 1).map(|(n, _)| n).collect()
}

/// An independent loader: three.js's FBXLoader (Node, the release `frontend-sdl/web`'s lockfile
/// pins) loads each file and gives every node's world position at four times of each clip
/// (its first key, a third and two thirds of the way, its last key). The baked model, sampled
/// at the same times, puts every joint of the same name within 1e-3 of the model's size of it
/// (three.js's positions in the file's units, scaled to meters by the file's `UnitScaleFactor`).
#[test]
fn joint_world_positions_match_threejs_fbxloader() {
    let three = three_dir();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fbx/three_joints.mjs");
    for rel in FILES {
        let path = sinew_assets::path(rel);
        let out = Command::new("node")
            .arg(&script)
            .arg(&three)
            .arg(&path)
            .args(["0", "0.3333333", "0.6666667", "1"])
            .output()
            .expect("node runs (Node.js 20: see the README)");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{rel}: three_joints.mjs failed:\n{stderr}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the script's JSON");
        let loader = json["loader"].as_str().expect("loader");
        assert_eq!(loader, "three.js FBXLoader r187", "{rel}: the lockfile's three.js");
        let meters = json["unitScaleFactor"].as_f64().expect("unitScaleFactor") as f32 / 100.0;

        let rig = load(rel);
        let model = bake_exact(&rig);
        let names: Vec<String> = rig.joints.iter().map(|j| sanitized(&j.name)).collect();
        let ours = unique(names.iter().map(String::as_str));
        let rest = skinned_at(&model, 0, model.asset().clip(0).map_or(0.0, |c| c.start()));
        let size = size(&rest);
        let clips = json["clips"].as_array().expect("clips");
        assert_eq!(clips.len(), rig.clips.len(), "{rel}: clips");
        let mut worst = (0.0f32, String::new());
        let mut compared = 0;
        for (ci, clip) in clips.iter().enumerate() {
            let name = clip["name"].as_str().expect("clip name");
            let index = model.find_clip(name).unwrap_or(ci);
            for sample in clip["samples"].as_array().expect("samples") {
                let t = sample["time"].as_f64().expect("time") as f32;
                let world = world_at(&model, index, t);
                let theirs: Vec<(&str, Vec3<f32>)> = sample["joints"]
                    .as_array()
                    .expect("joints")
                    .iter()
                    .map(|j| {
                        let c = |k: usize| j[k].as_f64().expect("coordinate") as f32 * meters;
                        (j[0].as_str().expect("name"), Vec3::new(c(1), c(2), c(3)))
                    })
                    .collect();
                let once = unique(theirs.iter().map(|(n, _)| *n));
                for (n, p) in &theirs {
                    if !once.contains(n) || !ours.contains(n) {
                        continue;
                    }
                    let Some(j) = names.iter().position(|m| m == n) else { continue };
                    let w = world[j];
                    let d = dist(Vec3::new(w.cols[3][0], w.cols[3][1], w.cols[3][2]), *p);
                    compared += 1;
                    if d > worst.0 {
                        worst = (d, format!("{n} in {name:?} at {t} s"));
                    }
                }
            }
        }
        eprintln!(
            "{rel}: {loader}: {compared} joint positions, largest distance {:.3e} m ({:.2e} of the model's size {size:.4} m; {})",
            worst.0,
            worst.0 / size,
            worst.1
        );
        assert!(compared >= 4 * 4, "{rel}: only {compared} positions compared");
        assert!(worst.0 <= 1e-3 * size, "{rel}: {} m off ({}), model size {size} m", worst.0, worst.1);
    }
}

/// Every input of `tests/fuzz/regressions/fbx` (what the fuzz target `fbx` once failed on, and
/// its small seeds) imports or is refused with a one-line error, and what imports bakes, as the
/// target runs it; so do the shared files cut short.
#[test]
fn fuzz_regressions_and_truncated_files_do_not_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fuzz/regressions/fbx");
    let mut inputs: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .map(|p| (p.display().to_string(), std::fs::read(&p).expect("a regression input")))
        .collect();
    assert!(!inputs.is_empty(), "no inputs in {}", dir.display());
    for rel in FILES {
        let bytes = std::fs::read(sinew_assets::path(rel)).expect("a shared file");
        for cut in [bytes.len() / 2, bytes.len() - 1, 100] {
            inputs.push((format!("{rel} cut to {cut} bytes"), bytes[..cut].to_vec()));
        }
    }
    for (name, bytes) in &inputs {
        match load_bytes(bytes, None, "fuzz") {
            Ok(rig) => {
                let _ = sinew_offline::bake::bake(&rig, &BakeOptions::default());
            }
            Err(e) => {
                let text = e.to_string();
                assert!(!text.is_empty() && !text.contains('\n'), "{name}: {text:?}");
            }
        }
    }
}

/// Bytes that are not FBX are refused with ufbx's reason, on one line.
#[test]
fn bytes_that_are_not_fbx_are_refused_on_one_line() {
    for bytes in [&b""[..], b"hello", b"Kaydara FBX Binary  \x00\x1a\x00\xff\xff"] {
        let e = load_bytes(bytes, None, "x").expect_err("not FBX");
        assert!(matches!(e, FbxError::Ufbx { .. }), "{e:?}");
        let text = e.to_string();
        assert!(text.starts_with("FBX load: ") && !text.contains('\n'), "{text:?}");
    }
    let e = sinew_offline::import::load(Path::new("/nonexistent/x.FBX"), None).expect_err("no file");
    assert!(e.to_string().contains("/nonexistent/x.FBX"), "{e}");
}
