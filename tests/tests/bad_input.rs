//! The bad-input corpus in-process: every byte sinew reads may come from a stranger, so every
//! input format (`.sinew` through `Asset::parse`, glTF `.glb`/`.gltf` through the importer,
//! md5mesh/md5anim) is fed the broken variants of [`sinew_tests::corpus`] — of a real model from
//! `../shared/assets`, or of a small asset written with the core's `Writer` or the importers'
//! own formats — and each must give one specific typed error (the variant and, where they mean
//! something, its fields: which section, part, vertex, triangle, track, joint, key or line),
//! never a panic.
//!
//! Then the asset cache keeps what it loaded when a later load fails, the baker drops
//! degenerate triangles and rejects the weights and matrices the format rejects, and its work on
//! a hostile-but-valid clip stays bounded.
//!
//! The same corpus through the `sinew` binary (one stderr line `sinew: <file>: <problem>`, exit
//! code 2, a closed stdout ending the output quietly, and the CLI's word on the baker's dropped
//! triangles and work budget) is tested where the binary is built:
//! `frontend-sdl/tests/cli_bad_input.rs`.

use std::collections::{BTreeMap, HashSet};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sinew::asset::Asset;
use sinew_offline::bake::{bake, BakeOptions, MAX_BAKE_WORK};
use sinew_offline::import::gltf::{self, GltfError};
use sinew_offline::import::md5::{self, Md5Error};
use sinew_offline::import::{AssetCache, ImportError};
use sinew_offline::rig::Rig;
use sinew_tests::corpus::gltf::{chain_glb, gltf_cases, hostile_chain, SmallGltf};
use sinew_tests::corpus::md5::{edited, md5_cases, SMALL_ANIM, SMALL_MESH};
use sinew_tests::corpus::sinew::{sinew_cases, SmallSinew};
use sinew_tests::corpus::Category::{self, *};
use sinew_tests::corpus::{asset, bob, gltf_asset, read, Case, ALL_BUT_CHECKSUM};

// ---------------------------------------------------------------------------------------------
// Scratch space
// ---------------------------------------------------------------------------------------------

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sinew-bad-input-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write scratch file");
    path
}

// ---------------------------------------------------------------------------------------------
// The corpus runner
// ---------------------------------------------------------------------------------------------

/// Runs every case through `run` (a panic is a failure), checks the outcomes, the names'
/// uniqueness and that every category in `required` has cases. Returns the case count per
/// category. With `SINEW_CORPUS_VERBOSE` set, prints every case and its outcome.
fn run_corpus<T, E: std::fmt::Debug>(
    format: &str,
    cases: &[Case<T, E>],
    required: &[Category],
    run: impl Fn(&[u8], Option<&[u8]>) -> Result<T, E>,
) -> BTreeMap<Category, usize> {
    let mut failures = Vec::new();
    let mut names = HashSet::new();
    let mut counts = BTreeMap::new();
    let verbose = std::env::var_os("SINEW_CORPUS_VERBOSE").is_some();
    for c in cases {
        assert!(names.insert(c.name.as_str()), "{format}: duplicate case name {:?}", c.name);
        *counts.entry(c.category).or_insert(0) += 1;
        match panic::catch_unwind(AssertUnwindSafe(|| run(&c.bytes, c.second.as_deref()))) {
            Err(_) => failures.push(format!("{}: PANIC (want {})", c.name, c.want)),
            Ok(r) => {
                let got = match &r {
                    Ok(_) => "Ok".to_owned(),
                    Err(e) => format!("{e:?}"),
                };
                if verbose {
                    eprintln!("{format} [{:?}] {}: {got}", c.category, c.name);
                }
                if !(c.check)(&r) {
                    failures.push(format!("{}: got {got}, want {}", c.name, c.want));
                }
            }
        }
    }
    for cat in required {
        assert!(counts.contains_key(cat), "{format}: no case of category {cat:?}");
    }
    eprintln!("{format} corpus: {} cases {counts:?}", cases.len());
    assert!(
        failures.is_empty(),
        "{format}: {} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    counts
}

// ---------------------------------------------------------------------------------------------
// The corpora
// ---------------------------------------------------------------------------------------------

#[test]
fn sinew_corpus() {
    assert!(Asset::parse(&SmallSinew::new().bytes()).is_ok(), "the small base is valid");
    let textured = SmallSinew::with(|s| {
        s.texcoords = Some(vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]);
        s.material = sinew_tests::corpus::sinew::TEXTURED_MATERIAL;
        s.texture = Some(vec![0, 0, 2, 0, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
    });
    assert_eq!(Asset::parse(&textured).map(|a| a.num_textures()), Ok(1), "the textured small base is valid");
    let mut required = ALL_BUT_CHECKSUM.to_vec();
    required.extend([Checksum, Image]);
    let counts = run_corpus("sinew", &sinew_cases(), &required, |b, _| Asset::parse(b).map(|_| ()));
    assert!(counts[&Truncated] > 1000, "{counts:?}");
}

#[test]
fn gltf_corpus() {
    assert!(gltf::load_bytes(&SmallGltf::new().gltf(), None, "small").is_ok(), "the small base is valid");
    assert!(gltf::load_bytes(&SmallGltf::new().glb(), None, "small").is_ok(), "the small GLB is valid");
    let mut required = ALL_BUT_CHECKSUM.to_vec();
    required.extend([Image, Compressed]);
    let counts = run_corpus("glTF", &gltf_cases(), &required, |b, _| gltf::load_bytes(b, None, "case"));
    assert!(counts[&Truncated] > 1000, "{counts:?}");
}

#[test]
fn md5_corpus() {
    assert!(md5::load(SMALL_MESH, Some(SMALL_ANIM), "small").is_ok(), "the small base is valid");
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let counts = run_corpus("md5", &md5_cases(), &ALL_BUT_CHECKSUM, |mesh, anim| {
        md5::load(&lossy(mesh), anim.map(lossy).as_deref(), "case")
    });
    assert!(counts[&Truncated] > 1000, "{counts:?}");
}

// ---------------------------------------------------------------------------------------------
// Nothing already loaded is lost
// ---------------------------------------------------------------------------------------------

#[test]
fn failed_loads_keep_what_the_cache_holds() {
    let dir = scratch("cache");
    let cache = AssetCache::new();
    let cesium = gltf_asset("CesiumMan", "glb");
    let first = cache.get(&cesium, None).expect("CesiumMan loads");
    // A bad file of every format fails with its typed error and leaves the cache as it was.
    let real = read(&cesium);
    let cut = write(&dir, "cut.glb", &real[..real.len() / 2]);
    assert!(matches!(cache.get(&cut, None), Err(ImportError::Gltf(GltfError::Container(_)))));
    let mut s = SmallGltf::new();
    s.weights[2] = [-1.0, 2.0, 0.0, 0.0];
    let negative = write(&dir, "negative.gltf", s.gltf());
    assert!(matches!(
        cache.get(&negative, None),
        Err(ImportError::Gltf(GltfError::NegativeWeight { mesh: 0, primitive: 0, vertex: 2 }))
    ));
    let mesh = write(&dir, "small.md5mesh", SMALL_MESH);
    let anim = write(&dir, "cycle.md5anim", edited(SMALL_ANIM, "\"root\"\t-1 1 0", "\"root\"\t1 1 0"));
    assert!(matches!(
        cache.get(&mesh, Some(&anim)),
        Err(ImportError::Md5(md5::LoadError::Md5 {
            error: Md5Error::IndexOutOfRange { what: "joint parent", .. },
            ..
        }))
    ));
    assert_eq!(cache.len(), 1);
    let again = cache.get(&cesium, None).expect("still there");
    assert!(Arc::ptr_eq(&first, &again), "the cached rig is served, not reloaded");
    // A file that loaded, then was overwritten with bad bytes: the loaded rig is kept.
    let model = write(&dir, "model.glb", read(&gltf_asset("RiggedSimple", "glb")));
    let loaded = cache.get(&model, None).expect("RiggedSimple loads");
    std::fs::write(&model, &real[..100]).expect("overwrite");
    let after = cache.get(&model, None).expect("served from the cache");
    assert!(Arc::ptr_eq(&loaded, &after));
    assert_eq!(cache.len(), 2);
    // A fixed file loads on the next call (failures are not cached).
    std::fs::write(&negative, SmallGltf::new().gltf()).expect("fix");
    assert!(cache.get(&negative, None).is_ok());
    assert_eq!(cache.len(), 3);
}

// ---------------------------------------------------------------------------------------------
// The baker: degenerate triangles, weights, bounded work
// ---------------------------------------------------------------------------------------------

#[test]
fn baker_drops_degenerate_triangles() {
    let mut s = SmallGltf::new();
    s.indices = vec![0, 1, 2, 2, 2, 3];
    let rig = gltf::load_bytes(&s.gltf(), None, "degenerate").expect("imports");
    let (bytes, report) = bake(&rig, &BakeOptions::default()).expect("bakes");
    assert_eq!(report.degenerate_triangles, 1);
    let a = Asset::parse(&bytes).expect("parses");
    let part = a.mesh(0).and_then(|m| m.parts().next()).expect("a part");
    assert_eq!((0..part.num_indices()).map(|i| part.index(i)).collect::<Vec<_>>(), [0, 1, 2]);
    // The same through a palette split, and from md5.
    let (_, report) = bake(&rig, &BakeOptions { palette: Some(2), ..BakeOptions::default() }).expect("bakes");
    assert_eq!(report.degenerate_triangles, 1);
    let rig = md5::load(&edited(SMALL_MESH, "tri 1 1 2 3", "tri 1 1 1 3"), None, "degenerate").expect("imports");
    let (_, report) = bake(&rig, &BakeOptions::default()).expect("bakes");
    assert_eq!(report.degenerate_triangles, 1);
    // That the CLI says so: `cli_bake_reports_dropped_degenerate_triangles` in
    // frontend-sdl/tests/cli_bad_input.rs.
}

#[test]
fn baker_rejects_weights_and_bind_matrices_the_format_rejects() {
    use sinew_offline::bake::BakeError;
    let rig = gltf::load_bytes(&SmallGltf::new().gltf(), None, "small").expect("imports");
    let with = |f: &dyn Fn(&mut Rig)| {
        let mut r = rig.clone();
        f(&mut r);
        bake(&r, &BakeOptions::default()).err()
    };
    let body = rig.meshes[0].name.clone();
    assert_eq!(
        with(&|r| r.meshes[0].primitives[0].joint_weights[8..12].copy_from_slice(&[0.0; 4])),
        Some(BakeError::ZeroWeights { mesh: body.clone(), primitive: 0, vertex: 2 })
    );
    assert_eq!(
        with(&|r| r.meshes[0].primitives[0].joint_weights[4..6].copy_from_slice(&[1.5, -0.5])),
        Some(BakeError::NegativeWeight { mesh: body.clone(), primitive: 0, vertex: 1 })
    );
    let skin = rig.skins[0].name.clone();
    assert_eq!(with(&|r| r.skins[0].inverse_bind[1][3] = f32::NAN), Some(BakeError::NonFiniteBind { skin, joint: 1 }));
}

/// One measurement pass of a clip over `joints` joints with `channels` channels and `times`
/// distinct key times (the baker's unit of work: one joint or track at one evaluation time).
fn measure_cost(joints: usize, channels: usize, times: usize) -> u64 {
    (4 * times as u64 - 3) * (joints + channels) as u64
}

/// 1000 joints × 8300 distinct key times ([`hostile_chain`]): one measurement alone is past the
/// default budget, so the clip is stored lossless without any reduction or measurement.
#[test]
fn hostile_clip_is_stored_lossless_without_work() {
    let chain = hostile_chain();
    let (joints, animated, keys) = (chain.joints, chain.animated, chain.keys);
    assert!(measure_cost(joints, animated, keys) > MAX_BAKE_WORK);
    let glb = chain.glb;
    let rig = gltf::load_bytes(&glb, None, "hostile").expect("imports");
    assert_eq!(rig.joints.len(), joints);
    let (bytes, report) = bake(&rig, &BakeOptions::default()).expect("bakes");
    let c = &report.clips[0];
    eprintln!(
        "hostile clip: {joints} joints, {animated} × {keys} keys: fallback {}, {} work steps, {} bytes",
        c.fallback,
        c.work,
        bytes.len()
    );
    assert!(c.fallback);
    assert_eq!(c.work, 0);
    assert_eq!((c.source_keys, c.baked_keys), (animated * keys, animated * keys));
    let a = Asset::parse(&bytes).expect("parses");
    let clip = a.clip(0).expect("clip");
    for t in 0..clip.num_tracks() {
        let info = clip.track(t).expect("track");
        assert_eq!(info.format, sinew::clip::KeyFormat::F32);
        assert!(info.slerp, "track {t}: linear rotations are slerped exactly");
    }
    // That the command line says what it did: `cli_bake_reports_the_work_budget_fallback` in
    // frontend-sdl/tests/cli_bad_input.rs.
}

/// A smaller hostile clip whose search runs many rounds: with a budget below what it needs the
/// baker stops within the budget and stores the clip lossless; with exactly what it needs the
/// result is the unbounded one.
#[test]
fn search_stops_within_the_work_budget() {
    let (joints, keys) = (60, 120);
    let rig = gltf::load_bytes(&chain_glb(joints, joints, keys, 0.02), None, "noisy").expect("imports");
    let unbounded = BakeOptions { max_work: u64::MAX, ..BakeOptions::default() };
    let (full_bytes, full) = bake(&rig, &unbounded).expect("bakes");
    let need = full.clips[0].work;
    let one = measure_cost(joints, joints, keys);
    eprintln!("noisy clip: {need} work steps, {:.1} measurements' worth", need as f64 / one as f64);
    assert!(!full.clips[0].fallback);
    assert!(need > 2 * one, "the search ran several rounds: {need} vs {one} per measurement");
    for budget in [need / 2, need - 1, one + 1] {
        let (bytes, r) = bake(&rig, &BakeOptions { max_work: budget, ..BakeOptions::default() }).expect("bakes");
        assert!(r.clips[0].fallback, "budget {budget}");
        assert!(r.clips[0].work <= budget, "budget {budget}: {} steps", r.clips[0].work);
        assert!(Asset::parse(&bytes).is_ok());
    }
    let (bytes, r) = bake(&rig, &BakeOptions { max_work: need, ..BakeOptions::default() }).expect("bakes");
    assert!(!r.clips[0].fallback);
    assert_eq!(r.clips[0].work, need);
    assert_eq!(bytes, full_bytes);
    // The budget is shared by the clips of one bake: a second copy of the clip, with what the
    // first left, falls back.
    let mut two = rig.clone();
    two.clips.push(rig.clips[0].clone());
    two.clips[1].name = "again".into();
    let (_, r) = bake(&two, &BakeOptions { max_work: need + need / 2, ..BakeOptions::default() }).expect("bakes");
    assert!(!r.clips[0].fallback && r.clips[1].fallback);
    assert!(r.clips.iter().map(|c| c.work).sum::<u64>() <= need + need / 2);
}

/// The sample models bake far inside the default budget (the figures for choosing it).
#[test]
fn sample_models_bake_well_within_the_work_budget() {
    let mut models: Vec<(String, Rig)> = Vec::new();
    for m in [
        "BrainStem",
        "CesiumMan",
        "Fox",
        "RecursiveSkeletons",
        "RiggedFigure",
        "RiggedSimple",
        "InterpolationTest",
        "BoxAnimated",
        "AnimatedMorphCube",
    ] {
        models.push((m.into(), gltf::load_file(&gltf_asset(m, "glb")).expect("imports")));
    }
    models.push(("SimpleSkin".into(), gltf::load_file(&gltf_asset("SimpleSkin", "gltf")).expect("imports")));
    models.push(("pab_crossarms".into(), gltf::load_file(&asset("ozz/pab_crossarms.glb")).expect("imports")));
    let (mesh, anim) = bob();
    models.push(("Bob".into(), md5::load_files(&mesh, Some(&anim)).expect("imports")));
    let mut most = 0;
    for (name, rig) in &models {
        let (_, r) = bake(rig, &BakeOptions::default()).expect("bakes");
        let work: u64 = r.clips.iter().map(|c| c.work).sum();
        eprintln!("bake work {name}: {work} steps over {} clips", r.clips.len());
        assert!(r.clips.iter().all(|c| !c.fallback), "{name}");
        assert_eq!(r.degenerate_triangles, 0, "{name}");
        most = most.max(work);
    }
    assert!(most * 8 <= MAX_BAKE_WORK, "the largest sample takes {most} steps");
}
