//! The `sinew` command line as a user runs it: corrupt inputs give one error line on stderr that
//! names the file, and exit code 2 (never a panic); `sinew bake` → `sinew info` → `sinew dump`
//! of the `.sinew` file gives the same output as `sinew dump` of the source model.
//!
//! Cargo builds the binary for this test (`CARGO_BIN_EXE_sinew`, in the test's profile). Scratch
//! files go to `CARGO_TARGET_TMPDIR`. The bad-input corpus through the binary is in
//! `cli_bad_input.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use base64::Engine as _;

fn gltf_asset(model: &str) -> PathBuf {
    sinew_assets::path(&format!("gltf/{model}/{model}.glb"))
}

fn bob() -> (PathBuf, PathBuf) {
    (sinew_assets::path("md5/boblamp/boblampclean.md5mesh"), sinew_assets::path("md5/boblamp/boblampclean.md5anim"))
}

/// A fresh scratch directory for one test (emptied at the start of each run, kept afterwards
/// for inspection).
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sinew-cli-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn sinew(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sinew")).args(args).output().expect("sinew runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// Asserts a failure: exit code 2, nothing on stdout, and one stderr line `sinew: <file>: ...`
/// (containing `needle` when given). Returns that line.
fn assert_fails(out: &Output, file: &Path, needle: Option<&str>, what: &str) -> String {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: exit code (stderr: {err})");
    assert!(out.stdout.is_empty(), "{what}: stdout {}", text(&out.stdout));
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: one error line, got {err:?}");
    let prefix = format!("sinew: {}: ", file.display());
    assert!(lines[0].starts_with(&prefix), "{what}: {:?} does not start with {prefix:?}", lines[0]);
    if let Some(n) = needle {
        assert!(lines[0].contains(n), "{what}: {:?} does not mention {n:?}", lines[0]);
    }
    eprintln!("cli {what}: {}", lines[0]);
    lines[0].to_owned()
}

fn assert_ok(out: &Output, what: &str) -> String {
    assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out.stderr));
    text(&out.stdout)
}

// -------------------------------------------------------------------------------------------------
// A hand-made skinned, animated glTF
// -------------------------------------------------------------------------------------------------

/// A 3-vertex skinned triangle on a 2-joint skin with one LINEAR rotation channel keyed at
/// `times`; vertex 2 is bound to skin joint `joint` with weight 1. Returns `.gltf` JSON text with
/// its buffer as a base64 `data:` URI.
fn tiny_gltf(times: &[f32], joint: u16) -> String {
    let mut bin: Vec<u8> = Vec::new();
    let mut views: Vec<(usize, usize)> = Vec::new();
    let mut push = |bytes: Vec<u8>| {
        views.push((bin.len(), bytes.len()));
        bin.extend(bytes);
    };
    let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    push(f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0]));
    push([0u16, 0, 0, 0, 0, 0, 0, 0, joint, 0, 0, 0].iter().flat_map(|x| x.to_le_bytes()).collect());
    push(f32s(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]));
    let identity = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];
    let mut ibm = identity.to_vec();
    ibm.extend([1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, -1.0, 0.0, 1.0]);
    push(f32s(&ibm));
    push(f32s(times));
    let rotations: Vec<f32> = (0..times.len())
        .flat_map(|k| {
            let a = 0.25 * k as f32;
            [0.0, 0.0, a.sin(), a.cos()]
        })
        .collect();
    push(f32s(&rotations));
    let views_json: Vec<String> =
        views.iter().map(|(o, l)| format!(r#"{{"buffer":0,"byteOffset":{o},"byteLength":{l}}}"#)).collect();
    let n = times.len();
    let data = base64::engine::general_purpose::STANDARD.encode(&bin);
    format!(
        r#"{{
  "asset": {{"version": "2.0"}},
  "scene": 0,
  "scenes": [{{"nodes": [0, 1]}}],
  "nodes": [
    {{"name": "triangle", "mesh": 0, "skin": 0}},
    {{"name": "root", "children": [2]}},
    {{"name": "tip", "translation": [0, 1, 0]}}
  ],
  "meshes": [{{"primitives": [{{"attributes": {{"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2}}}}]}}],
  "skins": [{{"joints": [1, 2], "inverseBindMatrices": 3}}],
  "animations": [{{
    "channels": [{{"sampler": 0, "target": {{"node": 2, "path": "rotation"}}}}],
    "samplers": [{{"input": 4, "output": 5, "interpolation": "LINEAR"}}]
  }}],
  "buffers": [{{"byteLength": {len}, "uri": "data:application/octet-stream;base64,{data}"}}],
  "bufferViews": [{views}],
  "accessors": [
    {{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]}},
    {{"bufferView": 1, "componentType": 5123, "count": 3, "type": "VEC4"}},
    {{"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC4"}},
    {{"bufferView": 3, "componentType": 5126, "count": 2, "type": "MAT4"}},
    {{"bufferView": 4, "componentType": 5126, "count": {n}, "type": "SCALAR"}},
    {{"bufferView": 5, "componentType": 5126, "count": {n}, "type": "VEC4"}}
  ]
}}"#,
        len = bin.len(),
        views = views_json.join(", ")
    )
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write scratch file");
    path
}

#[test]
fn hand_made_gltf_control_dumps() {
    // The well-formed variant of the corrupt files below loads and animates.
    let dir = scratch("control");
    let path = write(&dir, "ok.gltf", tiny_gltf(&[0.0, 0.5, 1.0], 1));
    let out = assert_ok(&sinew(&["dump", p(&path), "--raw", "--time", "1"]), "control");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["joints"].as_array().map(Vec::len), Some(3));
    // Vertex 2, (1, 1, 0), rides the tip joint at (0, 1, 0), rotated by 2 × 0.5 rad about z at
    // the last key; vertex 1 stays on the root joint.
    let vertex = |i: usize| -> Vec<f64> {
        v["skinned_positions"][i].as_array().expect("vertex").iter().filter_map(serde_json::Value::as_f64).collect()
    };
    let (p1, p2) = (vertex(1), vertex(2));
    let want = [1.0f64.cos(), 1.0 + 1.0f64.sin(), 0.0];
    assert!((0..3).all(|i| (p2[i] - want[i]).abs() < 1e-6), "{p2:?} vs {want:?}");
    assert!((0..3).all(|i| (p1[i] - [1.0, 0.0, 0.0][i]).abs() < 1e-6), "{p1:?}");
    assert_ok(&sinew(&["info", p(&path)]), "control info");
}

#[test]
fn nan_key_time() {
    let dir = scratch("nan");
    let path = write(&dir, "nan-time.gltf", tiny_gltf(&[0.0, f32::NAN, 1.0], 1));
    for cmd in ["dump", "info"] {
        assert_fails(&sinew(&[cmd, p(&path)]), &path, Some("not finite"), &format!("NaN key time ({cmd})"));
    }
}

#[test]
fn unsorted_key_times() {
    let dir = scratch("unsorted");
    let path = write(&dir, "unsorted.gltf", tiny_gltf(&[0.0, 1.0, 0.5], 1));
    assert_fails(&sinew(&["dump", p(&path)]), &path, Some("less than the previous"), "unsorted key times");
    // A time given twice in a row is a jump, noted by `info`.
    let path = write(&dir, "repeated.gltf", tiny_gltf(&[0.0, 0.5, 0.5], 1));
    let info = assert_ok(&sinew(&["info", p(&path)]), "repeated key time");
    let note = r#"note: animation 0 channel 0 (node "tip" rotation): 1 repeated key time read as a jump"#;
    assert!(info.lines().any(|l| l == note), "{info}");
}

#[test]
fn joint_index_out_of_range() {
    let dir = scratch("joint");
    let path = write(&dir, "bad-joint.gltf", tiny_gltf(&[0.0, 1.0], 5));
    assert_fails(&sinew(&["dump", p(&path)]), &path, Some("index 5 is not below 2"), "joint index 5 of 2");
    let path = write(&dir, "bad-joint-max.gltf", tiny_gltf(&[0.0, 1.0], u16::MAX));
    assert_fails(&sinew(&["bake", p(&path), "-o", p(&dir.join("x.sinew"))]), &path, Some("65535"), "joint 65535");
    assert!(!dir.join("x.sinew").exists(), "no output file for a failed bake");
}

#[test]
fn truncated_glb() {
    let dir = scratch("truncated");
    let bytes = std::fs::read(gltf_asset("CesiumMan")).expect("asset");
    for len in [0, 3, 11, 12, 19, 100, bytes.len() / 2, bytes.len() - 1] {
        let path = write(&dir, &format!("cut-{len}.glb"), &bytes[..len]);
        let out = sinew(&["dump", p(&path), "--raw"]);
        assert_fails(&out, &path, None, &format!("CesiumMan.glb cut to {len} bytes"));
    }
}

#[test]
fn bit_flipped_sinew() {
    let dir = scratch("bitflip");
    let src = gltf_asset("RiggedSimple");
    let good = dir.join("RiggedSimple.sinew");
    assert_ok(&sinew(&["bake", p(&src), "-o", p(&good)]), "bake");
    let bytes = std::fs::read(&good).expect("baked file");
    assert_ok(&sinew(&["info", p(&good)]), "info of the intact file");
    let n = bytes.len();
    // Past the 20-byte header prefix every flip is caught by the CRC.
    for (at, bit) in [(24, 0), (n / 3, 3), (n / 2, 7), (n - 1, 1)] {
        let mut b = bytes.clone();
        b[at] ^= 1 << bit;
        let path = write(&dir, &format!("flip-{at}-{bit}.sinew"), &b);
        for cmd in ["info", "dump"] {
            assert_fails(&sinew(&[cmd, p(&path)]), &path, Some("checksum"), &format!("bit {bit} of byte {at} ({cmd})"));
        }
    }
    // Header flips (magic, version, length, stored CRC) are errors too.
    for at in [0, 8, 12, 16] {
        let mut b = bytes.clone();
        b[at] ^= 0x10;
        let path = write(&dir, &format!("header-{at}.sinew"), &b);
        assert_fails(&sinew(&["info", p(&path)]), &path, None, &format!("header byte {at}"));
    }
    // Truncated .sinew.
    let path = write(&dir, "short.sinew", &bytes[..n - 5]);
    assert_fails(&sinew(&["info", p(&path)]), &path, None, "truncated .sinew");
}

#[test]
fn md5_bad_counts() {
    let dir = scratch("md5");
    let (mesh, anim) = bob();
    let text = std::fs::read_to_string(&mesh).expect("md5mesh");
    let anim_text = std::fs::read_to_string(&anim).expect("md5anim");
    let cases = [
        ("numverts 494", "numverts 495", "numverts"),
        ("numJoints 33", "numJoints 34", "numJoints"),
        ("numweights", "numweights 1", "numweights"),
    ];
    for (from, to, what) in cases {
        assert!(text.contains(from), "{from}");
        let bad = if what == "numweights" {
            // Declare one weight more than the first mesh has.
            let i = text.find("numweights ").expect("numweights");
            let end = i + text[i..].find('\n').expect("line");
            let count: usize = text[i + 11..end].trim().parse().expect("count");
            format!("{}numweights {}{}", &text[..i], count + 1, &text[end..])
        } else {
            text.replacen(from, to, 1)
        };
        let path = write(&dir, &format!("bad-{what}.md5mesh"), bad);
        assert_fails(&sinew(&["dump", p(&path)]), &path, None, &format!("md5mesh with a wrong {what}"));
    }
    // A wrong frame count in the anim: the error names the anim file.
    let mesh_copy = write(&dir, "bob.md5mesh", &text);
    let bad_anim = write(&dir, "bad-frames.md5anim", anim_text.replacen("numFrames 140", "numFrames 141", 1));
    let out = sinew(&["dump", p(&mesh_copy), "--anim", p(&bad_anim)]);
    let err = text_of_failure(&out);
    assert!(err.contains("bad-frames.md5anim"), "the error names the anim file: {err}");
    eprintln!("cli md5anim with a wrong numFrames: {err}");
}

fn text_of_failure(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err:?}");
    err.trim_end().to_owned()
}

/// `sinew bake`, then `sinew info` and `sinew dump` of the `.sinew` file: the dump equals the
/// dump of the source model (which bakes it in memory with the same default options).
#[test]
fn bake_info_dump_round_trip() {
    let dir = scratch("roundtrip");
    let (mesh, anim) = bob();
    let cases: Vec<(PathBuf, Option<PathBuf>, Vec<&str>)> = vec![
        (gltf_asset("CesiumMan"), None, vec!["--time", "0.7"]),
        (gltf_asset("Fox"), None, vec!["--clip", "Walk", "--time", "0.3", "--skinning", "dqs"]),
        (gltf_asset("RecursiveSkeletons"), None, vec!["--skin", "41", "--time", "1.3"]),
        (gltf_asset("InterpolationTest"), None, vec!["--clip", "CubicSpline Rotation", "--time", "1.1"]),
        (mesh, Some(anim), vec!["--time", "2.5"]),
    ];
    for (src, anim, args) in cases {
        let stem = src.file_stem().and_then(|s| s.to_str()).expect("stem").to_owned();
        let baked = dir.join(format!("{stem}.sinew"));
        let mut bake_args = vec!["bake", p(&src), "-o", p(&baked)];
        if let Some(a) = &anim {
            bake_args.extend(["--anim", p(a)]);
        }
        let bake_out = assert_ok(&sinew(&bake_args), "bake");
        let info = assert_ok(&sinew(&["info", p(&baked)]), "info");
        // `bake` prints the same summary as `info` of what it wrote (plus importer notes).
        let summary =
            |s: &str| -> Vec<String> { s.lines().filter(|l| !l.starts_with("note:")).map(str::to_owned).collect() };
        assert_eq!(summary(&bake_out), summary(&info), "{stem}: bake vs info summary");
        assert!(info.lines().any(|l| l.starts_with("joints ")) && info.contains("clip 0 "), "{stem}: {info}");
        // Measured against its source, every clip reports its errors and meets the bound at the
        // shells, which come from the mesh by default, and so on the mesh's vertices.
        let mut info_args = vec!["info", p(&baked), "--source", p(&src)];
        if let Some(a) = &anim {
            info_args.extend(["--anim", p(a)]);
        }
        let measured = assert_ok(&sinew(&info_args), "info --source");
        let errors: Vec<&str> =
            measured.lines().filter(|l| l.contains("bound 1.0e-4 m at shells from the mesh (up to ")).collect();
        assert!(
            !errors.is_empty()
                && errors.iter().all(|l| {
                    l.contains("; shell error ")
                        && l.contains(" m (within bound; joint ")
                        && l.contains("; vertex error ")
                        && !l.contains("OVER")
                }),
            "{stem}: {measured}"
        );
        let mut src_dump = vec!["dump", p(&src)];
        if let Some(a) = &anim {
            src_dump.extend(["--anim", p(a)]);
        }
        src_dump.extend(args.iter().copied());
        let mut file_dump = vec!["dump", p(&baked)];
        file_dump.extend(args.iter().copied());
        let a = assert_ok(&sinew(&src_dump), "dump of the source");
        let b = assert_ok(&sinew(&file_dump), "dump of the .sinew");
        assert!(a.len() > 100, "{stem}: dump output");
        assert_eq!(a, b, "{stem}: dump of the .sinew differs from the dump of the source");
        eprintln!("cli round trip {stem} {}: bake → info → dump identical ({} bytes of JSON)", args.join(" "), a.len());
    }
}

/// `bake --texture-size --texture-format` sizes and stores CesiumMan's texture as asked; `info`
/// on the baked file lists the part's material and the texture; a size out of range is refused.
#[test]
fn bake_sizes_textures_and_info_lists_materials() {
    let dir = scratch("textures");
    let out_file = dir.join("cesium.sinew");
    let cesium = gltf_asset("CesiumMan");
    let args = ["bake", p(&cesium), "-o", p(&out_file), "--texture-size", "64", "--texture-format", "rgb565"];
    let baked = sinew(&args);
    assert_ok(&baked, "bake");
    assert!(text(&baked.stderr).contains("texture 'image0': 64x64 Rgb565 (from 1024x1024)"), "{}", text(&baked.stderr));
    let info = assert_ok(&sinew(&["info", p(&out_file)]), "info");
    assert!(
        info.contains(
            "  part 0: material color #ffffffff, texture 0 (wrap Repeat/Repeat, mag linear, min nearest-mipmap-linear)"
        ),
        "{info}"
    );
    assert!(info.contains("texture 0 'image0': 64x64 Rgb565, 8192 bytes"), "{info}");
    // The default: 512 texels, RGBA8.
    let info = assert_ok(&sinew(&["info", p(&gltf_asset("Fox"))]), "info Fox");
    assert!(info.contains("texture 0 'image0': 512x512 Rgba8, 1048576 bytes"), "{info}");
    let bad = sinew(&["bake", p(&cesium), "-o", p(&out_file), "--texture-size", "5000"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("--texture-size must be 1 to 4096"), "{}", text(&bad.stderr));
}

// -------------------------------------------------------------------------------------------------
// Morph targets
// -------------------------------------------------------------------------------------------------

/// `sinew info` lists AnimatedMorphCube's targets and weight track; `sinew dump --mesh-node`
/// prints the instance's sampled weights and its morphed positions, which change over the clip;
/// a node without a mesh is refused with exit code 2; a mesh without targets dumps `[]`.
#[test]
fn morph_targets_in_info_and_dump() {
    let cube = gltf_asset("AnimatedMorphCube");
    let info = assert_ok(&sinew(&["info", p(&cube)]), "info AnimatedMorphCube");
    assert!(info.contains("2 morph targets, default weights [0, 0]"), "{info}");
    assert!(info.contains("morph weights: mesh 0 (127 keys, Linear"), "{info}");
    let at = |t: &str| -> serde_json::Value {
        let out = assert_ok(&sinew(&["dump", p(&cube), "--raw", "--mesh-node", "0", "--time", t]), "dump");
        serde_json::from_str(&out).expect("JSON")
    };
    let (a, b) = (at("0.5"), at("2.5"));
    assert_eq!(a["morph_weights"].as_array().map(Vec::len), Some(2));
    assert_ne!(a["morph_weights"], b["morph_weights"]);
    assert_ne!(a["mesh_positions"], b["mesh_positions"]);
    assert_eq!(a["mesh_positions"].as_array().map(Vec::len), Some(24));
    assert_fails(
        &sinew(&["dump", p(&cube), "--mesh-node", "1"]),
        &cube,
        Some("no mesh instance at node 1"),
        "--mesh-node 1",
    );
    let out = assert_ok(&sinew(&["dump", p(&gltf_asset("RiggedSimple"))]), "dump RiggedSimple");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["morph_weights"], serde_json::json!([]));
    assert_eq!(v["mesh_positions"], v["skinned_positions"]);
}

/// `sinew info` of a baked file alone: per clip, its tracks counted by storage as the file holds
/// them, and the report the bake stored — the bound, the shell (each joint's from the mesh by
/// default, or `--shell 0.03`'s fixed distance), and the baker's own largest shell error with
/// its joint and time, the figures of the library's `BakeReport` for the same bake.
#[test]
fn info_prints_the_stored_bake_report() {
    use sinew::asset::Asset;
    use sinew::clip::KeyFormat;
    use sinew_offline::bake::{bake, BakeOptions};

    let dir = scratch("report");
    let src = gltf_asset("RiggedFigure");
    let rig = sinew_offline::import::load(&src, None).expect("RiggedFigure imports");
    // The shell options and whether the shells come from the mesh.
    let cases: [(&[&str], bool); 4] =
        [(&[], true), (&["--shell", "0.03"], false), (&["--shell", "mesh"], true), (&["--shell-from-mesh"], true)];
    for (n, (shell_args, from_mesh)) in cases.into_iter().enumerate() {
        let baked = dir.join(format!("RiggedFigure-{n}.sinew"));
        let mut args = vec!["bake", p(&src), "-o", p(&baked)];
        args.extend(shell_args);
        assert_ok(&sinew(&args), "bake");
        let report = Asset::parse(&std::fs::read(&baked).expect("baked file"))
            .expect("the baked file parses")
            .clip_report(0)
            .expect("a clip report");
        assert_eq!(report.shell_from_mesh, from_mesh, "{shell_args:?}: {report:?}");
        let info = assert_ok(&sinew(&["info", p(&baked)]), "info");
        let bytes = std::fs::read(&baked).expect("baked file");
        let asset = Asset::parse(&bytes).expect("the baked file parses");
        let opts = BakeOptions { shell_from_mesh: from_mesh, ..BakeOptions::default() };
        let (_, report) = bake(&rig, &opts).expect("RiggedFigure bakes");
        let unit = sinew_offline::shells::meters_per_unit(&rig);
        assert_eq!(asset.num_clips(), report.clips.len());
        for (i, r) in report.clips.iter().enumerate() {
            let c = asset.clip(i).expect("clip");
            let tracks: Vec<_> = (0..c.num_tracks()).filter_map(|t| c.track(t)).collect();
            let count = |f: KeyFormat| tracks.iter().filter(|t| t.format == f).count();
            let storage = format!(
                "{} tracks ({} packed, {} quantized, {} lossless f32; {} constant, {} exact slerp)",
                c.num_tracks(),
                count(KeyFormat::Packed),
                count(KeyFormat::Quantized),
                count(KeyFormat::F32),
                tracks.iter().filter(|t| t.key_count == 1).count(),
                tracks.iter().filter(|t| t.slerp).count()
            );
            let clip_line = info.lines().find(|l| l.starts_with(&format!("clip {i} "))).expect("clip line");
            assert!(clip_line.contains(&storage), "{clip_line} lacks {storage}");
            assert!(count(KeyFormat::Packed) + count(KeyFormat::Quantized) > 0, "{clip_line}: nothing compressed");
            let shell = if from_mesh {
                let farthest = sinew_offline::shells::shells_from_mesh(&rig, opts.min_shell);
                format!("shells from the mesh (up to {:.3} m)", farthest.iter().copied().fold(0.0, f64::max) * unit)
            } else {
                "a fixed 0.03 m shell".to_owned()
            };
            assert!(r.max_error > 0.0 && r.max_error * unit <= 1e-4, "{r:?}");
            let want = format!(
                "  baked to 1.0e-4 m at {shell}; baker's largest shell error {:.2e} m at joint '{}', {:.4} s",
                r.max_error * unit,
                r.max_error_joint,
                r.max_error_time
            );
            let next = info.lines().skip_while(|l| *l != clip_line).nth(1).unwrap_or("");
            assert_eq!(next, want, "{info}");
            eprintln!("cli info report: {clip_line}\n{next}");
        }
    }
}

// -------------------------------------------------------------------------------------------------
// FBX and BVH: `bake`, `info` and `dump` of the shared files (the baked file and the source
// giving the same `dump`), `--bvh-scale`, and bad files as one line naming the file
// -------------------------------------------------------------------------------------------------

#[test]
fn fbx_and_bvh_bake_and_dump_as_their_sources() {
    let dir = scratch("formats-bake");
    for (file, time) in [
        ("fbx/ufbx/maya_game_sausage_7500_binary_wiggle.fbx", "0.5"),
        ("fbx/ufbx/blender_279_sausage_7400_binary.fbx", "0.5"),
        ("fbx/assimp/huesitos.fbx", "0.5"),
        ("bvh/cmu/01_01.bvh", "3.25"),
        ("bvh/bvh_anim/test_simple.bvh", "0.02"),
    ] {
        let src = sinew_assets::path(file);
        let baked = dir.join(format!("{}.sinew", src.file_stem().and_then(|s| s.to_str()).unwrap_or("model")));
        assert_ok(&sinew(&["bake", p(&src), "-o", p(&baked)]), file);
        let info = assert_ok(&sinew(&["info", p(&baked)]), file);
        assert!(info.contains("joints") && info.contains("clip 0"), "{file}: {info}");
        let a = assert_ok(&sinew(&["dump", p(&src), "--time", time]), file);
        let b = assert_ok(&sinew(&["dump", p(&baked), "--time", time]), file);
        assert_eq!(a, b, "{file}: dump of the source and of its bake");
    }
}

#[test]
fn bvh_scale_is_given_or_guessed_and_only_for_bvh() {
    let dir = scratch("formats-scale");
    let cmu = sinew_assets::path("bvh/cmu/01_01.bvh");
    // The import's notes are part of what `bake` prints of the model (stdout).
    let guessed = assert_ok(&sinew(&["bake", p(&cmu), "-o", p(&dir.join("guessed.sinew"))]), "guessed");
    assert!(guessed.contains("read as CMU units"), "{guessed}");
    let given =
        assert_ok(&sinew(&["bake", p(&cmu), "-o", p(&dir.join("inches.sinew")), "--bvh-scale", "0.0254"]), "given");
    assert!(given.contains("scale 0.0254 m per file unit (given)"), "{given}");
    let fox = sinew_assets::path("gltf/Fox/Fox.glb");
    let out = sinew(&["bake", p(&fox), "-o", p(&dir.join("fox.sinew")), "--bvh-scale", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--bvh-scale is for .bvh inputs"));
}

#[test]
fn bad_fbx_and_bvh_files_are_one_line() {
    let dir = scratch("formats-bad");
    let cases: [(&str, &[u8], &str); 4] = [
        ("empty.fbx", b"", "fbx"),
        ("text.fbx", b"not an fbx file at all", "fbx"),
        ("cut.bvh", b"HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition", "line"),
        ("motion.bvh", b"HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n CHANNELS 3 Xrotation Yrotation Zrotation\n End Site\n {\n OFFSET 0 1 0\n }\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n0 0 0\n", "line"),
    ];
    for (name, bytes, needle) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("scratch file");
        for cmd in ["info", "dump", "bake"] {
            let mut args = vec![cmd, p(&path)];
            let out_file = dir.join("out.sinew");
            if cmd == "bake" {
                args.extend(["-o", p(&out_file)]);
            }
            let line = assert_fails(&sinew(&args), &path, None, &format!("{cmd} {name}"));
            assert!(line.to_lowercase().contains(needle), "{cmd} {name}: {line}");
        }
    }
}
