//! Replays the inputs the fuzz targets of `tests/fuzz` once failed on (kept, small, in
//! `tests/fuzz/regressions/<target>/`) and seeds, through the very code the
//! targets run (`tests/fuzz/src/lib.rs`, included below): every input must be handled without
//! a panic. Inputs whose cost grew far faster than their size are rebuilt here at full size
//! (`tests/fuzz/amplifiers.py` writes them as files) and checked for rejection or for time.

#[path = "../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod fuzz;

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use fuzz::Md5First;
use sinew::asset::Asset;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The files of `dir`, sorted (none when it does not exist).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

/// Runs `run` on every file of `regressions/<target>/`; returns the files that panicked, with
/// the panic message.
fn replay(target: &str, run: fn(&[u8])) -> (usize, Vec<String>) {
    let inputs = files(&fuzz_dir().join("regressions").join(target));
    let mut failed = Vec::new();
    for path in &inputs {
        let data = std::fs::read(path).unwrap();
        if let Err(e) = panic::catch_unwind(AssertUnwindSafe(|| run(&data))) {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            failed.push(format!("{}: {msg}", path.display()));
        }
    }
    (inputs.len(), failed)
}

fn check(target: &str, run: fn(&[u8])) {
    let (n, failed) = replay(target, run);
    assert!(n > 0, "no regression inputs for {target}");
    assert!(failed.is_empty(), "{} of {n} {target} regression inputs panic:\n{}", failed.len(), failed.join("\n"));
}

#[test]
fn asset_parse_regressions() {
    check("asset_parse", fuzz::asset_bytes);
}

#[test]
fn md5mesh_regressions() {
    check("md5mesh", |d| fuzz::md5_bytes(d, Md5First::Mesh));
}

#[test]
fn md5anim_regressions() {
    check("md5anim", |d| fuzz::md5_bytes(d, Md5First::Anim));
}

#[test]
fn bvh_regressions() {
    check("bvh", fuzz::bvh_bytes);
}

#[test]
fn fbx_regressions() {
    check("fbx", fuzz::fbx_bytes);
}

#[test]
fn gltf_import_regressions() {
    check("gltf_import", fuzz::gltf_bytes);
}

#[test]
fn image_decode_regressions() {
    check("image_decode", fuzz::image_bytes);
}

/// The image target's GLB loads, with its image decoded, when the image is a valid PNG.
#[test]
fn image_target_wraps_a_valid_png() {
    let png = std::fs::read(fuzz_dir().join("regressions/image_decode/tiny.png")).unwrap();
    let rig = sinew_offline::import::gltf::load_bytes(&fuzz::image_glb(&png), None, "f").unwrap();
    assert_eq!((rig.images.len(), rig.images[0].width, rig.images[0].height), (1, 2, 2));
}

/// The same for the lossless and the lossy 16 × 16 WebP seeds.
#[test]
fn image_target_wraps_a_valid_webp() {
    for name in ["tiny.webp", "tiny-lossy.webp"] {
        let webp = std::fs::read(fuzz_dir().join("regressions/image_decode").join(name)).unwrap();
        let rig = sinew_offline::import::gltf::load_bytes(&fuzz::image_glb(&webp), None, "f").unwrap();
        assert_eq!((rig.images.len(), rig.images[0].width, rig.images[0].height), (1, 16, 16), "{name}");
    }
}

#[test]
fn graph_file_regressions() {
    check("graph_file", fuzz::graph_bytes);
}

/// The layered seed (also among the regressions) is a graph the target accepts, so the fuzzer
/// starts from layers that bake and run.
#[test]
fn the_layered_graph_seed_is_accepted() {
    use sinew_offline::graph_file::GraphFile;
    let text = std::fs::read_to_string(fuzz_dir().join("seeds/graph/layers.json")).unwrap();
    let regression = std::fs::read_to_string(fuzz_dir().join("regressions/graph_file/layers.json")).unwrap();
    assert_eq!(text, regression);
    let asset = Asset::parse(include_bytes!("../../core/fixtures/character.sinew")).unwrap();
    let skeleton = asset.skeleton().unwrap();
    let clip = |k: &str| ["walk", "run"].iter().position(|n| *n == k);
    let joint = |name: &str| (0..skeleton.num_joints()).find(|&j| skeleton.name(j) == Some(name));
    let file = GraphFile::parse_with_joints(&text, clip, joint, 2).unwrap();
    assert_eq!(file.num_layers(), 2);
    fuzz::graph_bytes(text.as_bytes());
}

/// Bakes of the small sample models (made here from ../shared/assets, never committed) are
/// valid files and go through the whole pipeline.
#[test]
fn sinew_seeds_parse_and_run() {
    for m in [
        "SimpleSkin/SimpleSkin.gltf",
        "RiggedSimple/RiggedSimple.glb",
        "InterpolationTest/InterpolationTest.glb",
        "BoxAnimated/BoxAnimated.glb",
        "AnimatedMorphCube/AnimatedMorphCube.glb",
    ] {
        let path = sinew_assets::path(&format!("gltf/{m}"));
        let rig = sinew_offline::import::load(&path, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (data, _) = sinew_offline::bake::bake(&rig, &sinew_offline::bake::BakeOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let asset = Asset::parse(&data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(asset.skeleton().is_some(), "{}", path.display());
        fuzz::asset_bytes(&data);
    }
}

/// Bakes of the shared VRM models (spring bones, every collider shape) go through the whole
/// pipeline, the spring stage included; and the spring section of one (written last in the
/// file), each of its bytes replaced by three values, is refused with a typed error or runs
/// (`fuzz::asset_bytes` fixes the checksum, so the changes reach the section's checks).
#[test]
fn spring_seeds_parse_and_run() {
    let mut plane = Vec::new();
    for m in [
        "vrm-conformance/springbone_collider_capsule_x0p02_r0p1.vrm",
        "vrm-conformance/springbone_collider_sphere_x0p02_r0p1.vrm",
        "three-vrm/sphere-collider.gltf",
        "three-vrm/plane-collider.gltf",
        "three-vrm/inside-collider.gltf",
    ] {
        let path = sinew_assets::path(&format!("vrm/{m}"));
        let rig = sinew_offline::import::load(&path, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (data, _) = sinew_offline::bake::bake(&rig, &sinew_offline::bake::BakeOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let asset = Asset::parse(&data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(asset.springs().is_some_and(|s| s.num_joints() > 0), "{}: spring bones", path.display());
        fuzz::asset_bytes(&data);
        if m.starts_with("three-vrm/plane") {
            plane = data;
        }
    }
    let section = Asset::parse(&plane).expect("the plane model").springs().expect("its springs").byte_len();
    let (mut parsed, mut refused) = (0, 0);
    for at in plane.len() - section..plane.len() {
        for value in [0x00, 0xff, plane[at] ^ 0x5a] {
            let mut bad = plane.clone();
            bad[at] = value;
            // The checksum (bytes 16..20) over everything after it, as the header keeps it.
            let crc = sinew::asset::crc32(&bad[sinew::asset::format::CRC_START..]);
            bad[16..20].copy_from_slice(&crc.to_le_bytes());
            match Asset::parse(&bad) {
                Ok(_) => parsed += 1,
                Err(_) => refused += 1,
            }
            fuzz::asset_bytes(&bad);
        }
    }
    eprintln!("{} changed spring sections: {parsed} parsed and ran, {refused} refused", parsed + refused);
    assert!(parsed > 0 && refused > 0, "{parsed} parsed, {refused} refused");
}

/// The morphed models reach the morph jobs through the glTF target: AnimatedMorphCube and the
/// skinned and morphed model of the corpus, each also cut short (what the fuzzer starts from).
#[test]
fn morph_seeds_import_and_run() {
    let cube =
        std::fs::read(sinew_assets::path("gltf/AnimatedMorphCube/AnimatedMorphCube.glb")).expect("AnimatedMorphCube");
    let morph = sinew_tests::corpus::morph::MorphGltf::new().gltf();
    for data in [&cube, &morph] {
        assert!(sinew_offline::import::gltf::load_bytes(data, None, "seed").is_ok());
        fuzz::gltf_bytes(data);
        fuzz::gltf_bytes(&data[..data.len() / 2]);
    }
}

/// The compressed seeds (`make_corpus.sh` copies the quantized, meshopt- and Draco-compressed
/// models) and the corpus's broken meshopt and Draco streams and textures go through the glTF
/// target: the valid ones import, bake and run, the rest are refused, none panics.
#[test]
fn compressed_and_image_seeds_import_and_run() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../frontend-sdl/offline/tests/data");
    for name in [
        "RiggedFigure-quantized.glb",
        "RiggedFigure-meshopt.glb",
        "RiggedFigure-meshopt-khr.glb",
        "RiggedFigure-draco.glb",
        "RiggedFigure-draco-seq.glb",
        "SimpleSkin-draco.gltf",
    ] {
        let bytes = std::fs::read(data.join(name)).expect("compressed model");
        assert!(sinew_offline::import::gltf::load_bytes(&bytes, None, "seed").is_ok(), "{name}");
        fuzz::gltf_bytes(&bytes);
    }
    let mut cases = sinew_tests::corpus::gltf::image_cases();
    cases.extend(sinew_tests::corpus::meshopt::meshopt_cases());
    cases.extend(sinew_tests::corpus::draco::draco_cases());
    assert!(cases.len() > 40, "{} cases", cases.len());
    for c in &cases {
        if let Err(e) = panic::catch_unwind(AssertUnwindSafe(|| fuzz::gltf_bytes(&c.bytes))) {
            panic!("{}: {e:?}", c.name);
        }
    }
}

/// Writes the corpus's broken meshopt and Draco files into the directory named by
/// `SINEW_FUZZ_SEEDS` (`make_corpus.sh` runs it for the `gltf_import` target's corpus), so the
/// fuzzer also starts from streams that get past the container but not the decoders.
#[test]
#[ignore = "writes fuzz seeds into $SINEW_FUZZ_SEEDS (run by tests/fuzz/make_corpus.sh)"]
fn write_compressed_seeds() {
    let dir = std::path::PathBuf::from(std::env::var_os("SINEW_FUZZ_SEEDS").expect("SINEW_FUZZ_SEEDS"));
    std::fs::create_dir_all(&dir).expect("seed dir");
    let mut cases = sinew_tests::corpus::meshopt::meshopt_cases();
    cases.extend(sinew_tests::corpus::draco::draco_cases());
    for c in &cases {
        let name: String =
            c.name.chars().map(|ch| if ch.is_ascii_alphanumeric() || ch == '-' { ch } else { '_' }).collect();
        let ext = if c.bytes.starts_with(b"glTF") { "glb" } else { "gltf" };
        std::fs::write(dir.join(format!("{name}.{ext}")), &c.bytes).expect("write seed");
    }
}

/// The hand-written md5 seeds parse and load together (so the md5 targets start from inputs that
/// reach the baker), alone and as the NUL-joined pairs the targets read.
#[test]
fn md5_seeds_load() {
    let dir = fuzz_dir().join("seeds/md5");
    let mesh = std::fs::read_to_string(dir.join("arm.md5mesh")).unwrap();
    let anim = std::fs::read_to_string(dir.join("arm.md5anim")).unwrap();
    let rig = sinew_offline::import::md5::load(&mesh, Some(&anim), "arm").unwrap();
    assert_eq!(rig.joints.len(), 3);
    assert_eq!(rig.meshes.len(), 2);
    assert_eq!(rig.clips.len(), 1);
    fuzz::md5_bytes(format!("{mesh}\0{anim}").as_bytes(), Md5First::Mesh);
    fuzz::md5_bytes(format!("{anim}\0{mesh}").as_bytes(), Md5First::Anim);
}

/// The hand-written BVH seeds import with their channels and bake (so the `bvh` target starts
/// from texts that reach the baker); the edge cases among the regressions are refused with a
/// line.
#[test]
fn bvh_seeds_load() {
    use sinew_offline::import::bvh::{parse, BvhOptions};
    let dir = fuzz_dir().join("seeds/bvh");
    for (name, joints) in [("figure.bvh", 12), ("orders.bvh", 4)] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let rig = parse("seed", &text, &BvhOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(rig.joints.len(), joints, "{name}");
        assert_eq!(rig.clips.len(), 1, "{name}");
        fuzz::bvh_bytes(text.as_bytes());
    }
    for name in ["unclosed.bvh", "huge-frames.bvh", "tiny-frame-time.bvh", "non-finite.bvh", "bad-utf8-count.bvh"] {
        let data = std::fs::read(fuzz_dir().join("regressions/bvh").join(name)).unwrap();
        let e = parse("r", &String::from_utf8_lossy(&data), &BvhOptions::default()).expect_err(name);
        assert!(e.line().is_some(), "{name}: {e}");
    }
}

// ---------------------------------------------------------------------------------------------
// Slow units: `.sinew` files whose parse time grew faster than their size. They are built here
// rather than kept as files (the smallest that show the growth clearly are hundreds of KB).

use std::time::{Duration, Instant};

use sinew::asset::crc32;
use sinew::asset::format::{CRC_START, KIND_MESH, KIND_SKELETON, KIND_SKIN, MAGIC, NONE, VERSION};
use sinew::asset::ParseError;

/// A `.sinew` file from a table of (kind, body index) entries over `bodies`. Bodies are laid out
/// once each, in order, after the table; entries naming the same body alias it.
fn sinew_file(bodies: &[Vec<u8>], table: &[([u8; 4], usize)]) -> Vec<u8> {
    let table_end = 24 + 12 * table.len();
    let mut offsets = Vec::new();
    let mut at = table_end;
    for b in bodies {
        offsets.push(at);
        at += b.len();
    }
    let mut d = Vec::with_capacity(at);
    d.extend_from_slice(&MAGIC);
    d.extend_from_slice(&VERSION.to_le_bytes());
    d.extend_from_slice(&0u16.to_le_bytes());
    d.extend_from_slice(&(at as u32).to_le_bytes());
    d.extend_from_slice(&0u32.to_le_bytes());
    d.extend_from_slice(&(table.len() as u32).to_le_bytes());
    for &(kind, b) in table {
        d.extend_from_slice(&kind);
        d.extend_from_slice(&(offsets[b] as u32).to_le_bytes());
        d.extend_from_slice(&(bodies[b].len() as u32).to_le_bytes());
    }
    for b in bodies {
        d.extend_from_slice(b);
    }
    let crc = crc32(&d[CRC_START..]);
    d[16..20].copy_from_slice(&crc.to_le_bytes());
    d
}

/// A skeleton section: a chain of `n` joints at rest (identity), named `j0000…` (32 bytes) when
/// `named`.
fn skeleton_body(n: usize, named: bool) -> Vec<u8> {
    let mut b = (n as u16).to_le_bytes().to_vec();
    for i in 0..n {
        b.extend_from_slice(&(i as i16 - 1).to_le_bytes());
    }
    for _ in 0..n {
        for v in [0.0f32, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0] {
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
    for i in 0..n {
        let name = if named { format!("j{i:031}") } else { String::new() };
        b.push(name.len() as u8);
        b.extend_from_slice(name.as_bytes());
    }
    b
}

/// A skin of one joint (joint 0, identity inverse bind matrix).
fn skin_body() -> Vec<u8> {
    let mut b = vec![0u8];
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&0u16.to_le_bytes());
    for k in 0..16 {
        b.extend_from_slice(&(if k % 5 == 0 { 1.0f32 } else { 0.0 }).to_le_bytes());
    }
    b
}

/// A mesh of no parts using `skin`, or one rigid part of `vertices` vertices at the origin.
fn mesh_body(skin: Option<u16>, vertices: u32) -> Vec<u8> {
    let mut b = vec![0u8];
    b.extend_from_slice(&skin.unwrap_or(NONE).to_le_bytes());
    b.extend_from_slice(&NONE.to_le_bytes());
    b.extend_from_slice(&[255; 4]);
    let parts: u16 = if vertices > 0 { 1 } else { 0 };
    b.extend_from_slice(&parts.to_le_bytes());
    if parts == 1 {
        b.extend_from_slice(&0u16.to_le_bytes()); // palette
        b.extend_from_slice(&vertices.to_le_bytes());
        b.extend_from_slice(&[0, 0]); // influences, attributes
        b.extend(std::iter::repeat_n(0u8, 12 * vertices as usize));
        b.extend_from_slice(&0u32.to_le_bytes()); // indices
        b.push(2);
        // An untextured white material.
        b.extend_from_slice(&[255, 255, 255, 255, 0xFF, 0xFF, 0, 0, 1, 1, 0, 0]);
    }
    b
}

/// Parses `data` and reads every mesh through the accessor; returns the parse result's mesh
/// count and the time both took.
fn parse_and_list_meshes(data: &[u8]) -> (Result<usize, ParseError>, Duration) {
    let t = Instant::now();
    let r = Asset::parse(data).map(|a| (0..a.num_meshes()).filter(|&i| a.mesh(i).is_some()).count());
    (r, t.elapsed())
}

/// Parse time limit for the files below: they take 2 ms to 20 ms with linear parsing (release,
/// `probe` numbers in the fuzzing report) and 1 s to 30 s without.
const LINEAR_LIMIT: Duration = Duration::from_millis(400);

/// Table entries that alias one body made `Asset::parse` validate it once per entry (quadratic
/// in the file size: 27.6 s for 1.9 MB). Section bodies must follow the table in order without
/// overlapping.
#[test]
fn aliased_or_unordered_sections_are_rejected() {
    let bodies = [skeleton_body(1, true), mesh_body(None, 100)];
    let aliased = sinew_file(&bodies, &[(KIND_SKELETON, 0), (KIND_MESH, 1), (KIND_MESH, 1)]);
    assert_eq!(Asset::parse(&aliased).err(), Some(ParseError::BadSection { section: 2 }));
    // Out of table order.
    let mut swapped = sinew_file(&bodies, &[(KIND_SKELETON, 0), (KIND_MESH, 1)]);
    let (e0, e1) = (24, 36);
    let first: Vec<u8> = swapped[e0..e0 + 12].to_vec();
    let second: Vec<u8> = swapped[e1..e1 + 12].to_vec();
    swapped[e0..e0 + 12].copy_from_slice(&second);
    swapped[e1..e1 + 12].copy_from_slice(&first);
    let crc = crc32(&swapped[CRC_START..]);
    swapped[16..20].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(Asset::parse(&swapped).err(), Some(ParseError::BadSection { section: 1 }));
    // The same sections in order parse.
    assert!(Asset::parse(&sinew_file(&bodies, &[(KIND_SKELETON, 0), (KIND_MESH, 1)])).is_ok());
    // A large aliased file is refused quickly.
    let big = [skeleton_body(1, true), mesh_body(None, 20_000)];
    let mut table = vec![(KIND_SKELETON, 0)];
    table.extend(std::iter::repeat_n((KIND_MESH, 1), 20_000));
    let (r, took) = parse_and_list_meshes(&sinew_file(&big, &table));
    assert_eq!(r, Err(ParseError::BadSection { section: 2 }));
    assert!(took < LINEAR_LIMIT, "{took:?}");
}

/// Looking up the n-th skin or mesh walked the section table from the start, so a file of many
/// meshes with their skin after them parsed in quadratic time (15 s for 1.8 MB), and listing
/// its meshes took as long again.
#[test]
fn many_meshes_parse_and_list_in_linear_time() {
    let n = 20_000;
    let bodies = [skeleton_body(1, true), mesh_body(Some(0), 0), skin_body()];
    let mut bodies_all = vec![bodies[0].clone()];
    let mut table = vec![(KIND_SKELETON, 0)];
    for i in 0..n {
        bodies_all.push(bodies[1].clone());
        table.push((KIND_MESH, 1 + i));
    }
    bodies_all.push(bodies[2].clone());
    table.push((KIND_SKIN, 1 + n));
    let data = sinew_file(&bodies_all, &table);
    let (r, took) = parse_and_list_meshes(&data);
    assert_eq!(r, Ok(n));
    assert!(took < LINEAR_LIMIT, "{} bytes took {took:?}", data.len());
}

/// The duplicate-name check looked every name up from the start of the name list: cubic in the
/// joint count (1.1 s for a 77 KB skeleton of 1024 distinct 32-byte names).
#[test]
fn duplicate_name_check_is_quadratic_at_most() {
    let data = sinew_file(&[skeleton_body(1024, true)], &[(KIND_SKELETON, 0)]);
    let t = Instant::now();
    let a = Asset::parse(&data).unwrap();
    let took = t.elapsed();
    assert_eq!(a.skeleton().map(|s| s.num_joints()), Some(1024));
    assert!(took < LINEAR_LIMIT, "{took:?}");
    // A repeated name is still found.
    let mut dup = skeleton_body(1024, true);
    let names = 2 + 1024 * 42;
    let (first, last) = (names + 1, names + 1023 * 33 + 1);
    let copy: Vec<u8> = dup[first..first + 32].to_vec();
    dup[last..last + 32].copy_from_slice(&copy);
    let data = sinew_file(&[dup], &[(KIND_SKELETON, 0)]);
    assert_eq!(
        Asset::parse(&data).err(),
        Some(ParseError::Skeleton(sinew::skeleton::SkeletonError::DuplicateName { joint: 1023, first: 0 }))
    );
}

/// A sparse accessor (or one without a buffer view) decodes to zeros of any declared count: 594
/// bytes of JSON declaring 89 million vertices took 66 s and 4.2 GB to import and bake. The
/// decoding budget follows the input size (64 bytes per byte, at least 16 MiB), so the 2 million
/// vertices (24 MB) of `regressions/gltf_import/sparse-2M-vertices.gltf` are refused.
#[test]
fn sparse_accessor_counts_are_bounded_by_the_input_size() {
    use sinew_offline::import::gltf::{load_bytes, GltfError};
    let path = fuzz_dir().join("regressions/gltf_import/sparse-2M-vertices.gltf");
    let data = std::fs::read(path).unwrap();
    assert!(data.len() < 1000);
    let r = load_bytes(&data, None, "f");
    assert!(matches!(r, Err(GltfError::TooLarge { accessor: 0, limit }) if limit == 16 << 20), "{r:?}");
}

/// The baker's key reduction grew a segment key by key and checked every key inside it at each
/// step: keys on a straight line made one segment of the whole track, quadratic in the key count
/// (1.1 s for 20 000 keys, a 430 KB glTF; channels sharing one accessor multiply it). Segments
/// are capped at 256 key intervals.
#[test]
fn key_reduction_of_a_straight_track_is_not_quadratic() {
    use sinew::math::Transform;
    use sinew_offline::bake::{bake, BakeOptions};
    use sinew_offline::rig::{ChannelTarget, Interpolation, Rig, RigChannel, RigClip, RigJoint};
    let n = 30_000;
    let times: Vec<f32> = (0..n).map(|i| i as f32 / 30.0).collect();
    let values: Vec<f32> = (0..n).flat_map(|i| [i as f32 * 1.0e-3, 0.0, 0.0]).collect();
    let rig = Rig {
        name: "line".into(),
        joints: vec![RigJoint { name: "n".into(), parent: None, rest: Transform::IDENTITY }],
        clips: vec![RigClip {
            name: "c".into(),
            channels: vec![RigChannel {
                joint: 0,
                target: ChannelTarget::Translation,
                interpolation: Interpolation::Linear,
                times,
                values,
            }],
            ..RigClip::default()
        }],
        ..Rig::default()
    };
    let (bytes, report) = bake(&rig, &BakeOptions::default()).unwrap();
    assert!(Asset::parse(&bytes).is_ok());
    let clip = &report.clips[0];
    assert!(clip.baked_keys < n / 50, "{} keys kept", clip.baked_keys);
    // The work counter, not the wall clock, shows the growth: a quadratic search checks
    // about n²/2 = 4.5e8 keys (over the default budget, so the clip would fall back to
    // lossless); a linear one a bounded number per key.
    assert!(!clip.fallback, "the reduction ran out of work");
    assert!(clip.work <= 1_000 * n as u64, "{} work steps for {n} keys", clip.work);
}

/// A file with a graph section, and one with a layered graph, go through the asset target (their
/// graphs built in f32 and Q16), and so do the corpus's broken graph sections.
#[test]
fn graph_sections_run_through_the_asset_target() {
    let base = sinew_tests::corpus::graph::graph_base();
    assert_eq!(Asset::parse(&base).map(|a| a.num_graphs()), Ok(1));
    fuzz::asset_bytes(&base);
    let layered = sinew_tests::corpus::graph::graph_layered_base();
    assert_eq!(Asset::parse(&layered).map(|a| a.graph(0).map(|g| g.num_layers())), Ok(Some(1)));
    fuzz::asset_bytes(&layered);
    for case in sinew_tests::corpus::graph::graph_cases() {
        fuzz::asset_bytes(&case.bytes);
    }
}
