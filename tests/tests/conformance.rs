//! Conformance of the whole pipeline on the real models of `../shared/assets`: sinew's importers,
//! baker, model pipeline and `sinew dump` (called as a library: `Model::load` + `dump::dump`,
//! exactly what the command line does) against the independent `f64` evaluators
//! `sinew_tests::gltf_ref` (glTF 2.0 Appendix C) and `sinew_tests::md5_ref`.
//!
//! For every model, clip and skin tested, sinew is sampled at the clip's start and end, at key
//! times spread over the clip, between keys, before the start and after the end:
//!
//! - **raw** (`dump --raw`: lossless keys, exact slerp, every influence) against the reference:
//!   joint world matrices, joint (skin) matrices, and linear-blend and dual-quaternion skinned
//!   positions and normals. Errors are relative to the model's size (the diagonal of the
//!   bounding box of its joints and rest-pose vertices) for positions and translations, and to
//!   `max(1, |entry|)` for 3×3 parts and normals; the bound is 1e-4.
//! - **baked** (`dump` without `--raw`: default `BakeOptions`, corrected nlerp) against raw: joint
//!   world positions within the baker's tolerance (1e-4 m, in scene units: 1e-4 / 0.0254 for md5)
//!   plus f32 slack of 1e-6 × the model size. The baked clip is also sampled with exact slerp,
//!   which isolates what key quantization and reduction change from what the runtime's
//!   rotation interpolation adds; both must meet the bound.
//!
//! Each test prints its model's figures (`cargo test -p sinew-tests --test conformance --
//! --nocapture`). Vertex weights: sinew's glTF importer renormalizes a vertex whose weights sum
//! further than 1e-3 from 1; the reference does the same (`WeightRule::RenormalizeBeyond`) and the
//! count of such vertices is printed.

// Index loops over vector components read like the formulas they check.
#![allow(clippy::needless_range_loop)]

use std::path::{Path, PathBuf};

use serde_json::Value;
use sinew::clip::RotationInterpolation;
use sinew::math::{Mat4, SoaTransform};
use sinew_offline::bake::BakeOptions;
use sinew_offline::dump::{dump, DumpOptions};
use sinew_offline::model::{Model, Skinning};
use sinew_tests::corpus::morph::MorphGltf;
use sinew_tests::gltf_ref::{GltfRef, Interp, Method, Target, WeightRule};
use sinew_tests::md5_ref::Md5Ref;
use sinew_tests::reference::{Mat4d, Quatd, Vec3d};

// -------------------------------------------------------------------------------------------------
// Inputs and settings
// -------------------------------------------------------------------------------------------------

/// The shared `gltf/MODEL/MODEL.glb`, or `.gltf` where the manifest lists that one.
fn gltf_path(model: &str) -> PathBuf {
    let glb = format!("gltf/{model}/{model}.glb");
    if sinew_assets::entry(&glb).is_some() {
        sinew_assets::path(&glb)
    } else {
        sinew_assets::path(&format!("gltf/{model}/{model}.gltf"))
    }
}

fn bob() -> (PathBuf, PathBuf) {
    sinew_tests::corpus::bob()
}

/// Largest raw-vs-reference error, relative to the model's size.
const RAW_BOUND: f64 = 1.0e-4;

/// The baker's default tolerance in meters.
const BAKE_TOLERANCE_M: f64 = 1.0e-4;

/// Threshold of sinew's glTF importer for renormalizing vertex weights.
const IMPORTER_WEIGHT_TOLERANCE: f64 = 1.0e-3;

/// f32 slack added to the baked-vs-raw bound, relative to the model size (about 8 ulps).
const F32_SLACK: f64 = 1.0e-6;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// `dump --raw`.
    Raw,
    /// `dump`.
    Baked,
}

/// Loads a model as `sinew dump` does for `mode`.
fn load(path: &Path, anim: Option<&Path>, mode: Mode) -> Model {
    let opts = match mode {
        Mode::Raw => {
            BakeOptions { lossless: true, max_influences: sinew::limits::MAX_INFLUENCES, ..BakeOptions::default() }
        }
        Mode::Baked => BakeOptions::default(),
    };
    Model::load(path, anim, &opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One parsed `sinew dump` object.
#[derive(Debug, Clone)]
struct Dump {
    joints: Vec<String>,
    joint_world: Vec<Mat4d>,
    joint_matrices: Vec<Mat4d>,
    positions: Vec<Vec3d>,
    normals: Vec<Vec3d>,
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().expect("array").iter().map(|x| x.as_f64().expect("number")).collect()
}

fn mats(v: &Value) -> Vec<Mat4d> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|m| {
            let f = floats(m);
            assert_eq!(f.len(), 16, "a matrix has 16 floats");
            Mat4d { cols: std::array::from_fn(|c| std::array::from_fn(|r| f[c * 4 + r])) }
        })
        .collect()
}

fn vecs(v: &Value) -> Vec<Vec3d> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|p| {
            let f = floats(p);
            assert_eq!(f.len(), 3, "a vector has 3 floats");
            Vec3d::new(f[0], f[1], f[2])
        })
        .collect()
}

fn parse_dump(json: &str) -> Dump {
    let v: Value = serde_json::from_str(json).expect("dump prints one JSON object");
    Dump {
        joints: v["joints"].as_array().expect("joints").iter().map(|n| n.as_str().expect("name").to_owned()).collect(),
        joint_world: mats(&v["joint_world"]),
        joint_matrices: mats(&v["joint_matrices"]),
        positions: vecs(&v["skinned_positions"]),
        normals: vecs(&v["skinned_normals"]),
    }
}

/// The rotation interpolation `sinew dump` uses for `mode`.
fn rotation_of(mode: Mode) -> RotationInterpolation {
    match mode {
        Mode::Raw => RotationInterpolation::Slerp,
        Mode::Baked => RotationInterpolation::NlerpCorrected,
    }
}

/// `sinew dump` of `model` (loaded for `mode`) at clip `clip`, time `t`, skin `skin`.
fn run_dump(model: &Model, mode: Mode, clip: Option<usize>, t: f32, skin: usize, skinning: Skinning) -> Dump {
    dump_with(model, rotation_of(mode), clip, t, skin, skinning)
}

/// `dump::dump` with an explicit rotation interpolation.
fn dump_with(
    model: &Model,
    rotation: RotationInterpolation,
    clip: Option<usize>,
    t: f32,
    skin: usize,
    skinning: Skinning,
) -> Dump {
    let json =
        dump(model, &DumpOptions { clip, time: t, skin, skinning, rotation, ..DumpOptions::default() }).expect("dump");
    parse_dump(&json)
}

/// Sample times of a clip with sorted key times `keys` over `[start, end]`: before the start, the
/// start, up to `spread` key times spread over the clip and points between them, the end and
/// after it; as f32 (what sinew takes) in increasing order.
fn sample_times(keys: &[f64], start: f64, end: f64, spread: usize) -> Vec<f32> {
    let mut t = vec![start - 0.5, start, end, end + 0.5, 0.0];
    let n = keys.len();
    if n > 1 {
        let picks = spread.min(n - 1).max(1);
        for i in 0..=picks {
            let k = (i * (n - 1)) / picks;
            t.push(keys[k]);
            if k + 1 < n {
                let (a, b) = (keys[k], keys[k + 1]);
                t.push(a + 0.5 * (b - a));
                t.push(a + 0.3 * (b - a));
            }
        }
    }
    let mut t: Vec<f32> = t.into_iter().map(|x| x as f32).collect();
    t.sort_by(f32::total_cmp);
    t.dedup();
    t
}

// -------------------------------------------------------------------------------------------------
// Error measures
// -------------------------------------------------------------------------------------------------

/// The largest error seen and where.
#[derive(Debug, Default, Clone)]
struct Worst {
    value: f64,
    at: String,
}

impl Worst {
    fn update(&mut self, value: f64, at: impl FnOnce() -> String) {
        if value.is_nan() || value > self.value {
            self.value = if value.is_nan() { f64::INFINITY } else { value };
            self.at = at();
        }
    }
}

/// A matrix's error: 3×3 entries relative to `max(1, largest 3×3 entry of the reference)`,
/// translation relative to `size`.
fn mat_error(got: &Mat4d, want: &Mat4d, size: f64) -> f64 {
    let mag = (0..3).flat_map(|c| (0..3).map(move |r| (c, r))).fold(1.0f64, |m, (c, r)| m.max(want.cols[c][r].abs()));
    let mut e = 0.0f64;
    for c in 0..3 {
        for r in 0..4 {
            e = e.max((got.cols[c][r] - want.cols[c][r]).abs() / mag);
        }
    }
    for r in 0..3 {
        e = e.max((got.cols[3][r] - want.cols[3][r]).abs() / size);
    }
    e.max((got.cols[3][3] - want.cols[3][3]).abs())
}

fn dist(a: Vec3d, b: Vec3d) -> f64 {
    (a - b).length()
}

fn bbox_diagonal(points: impl IntoIterator<Item = Vec3d>) -> f64 {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in points {
        for (i, v) in p.to_array().into_iter().enumerate() {
            lo[i] = lo[i].min(v);
            hi[i] = hi[i].max(v);
        }
    }
    if lo[0] > hi[0] {
        return 0.0;
    }
    (0..3).map(|i| (hi[i] - lo[i]).powi(2)).sum::<f64>().sqrt()
}

/// Raw-vs-reference errors of one model.
#[derive(Debug, Default, Clone)]
struct RawStats {
    world: Worst,
    joint_matrices: Worst,
    lbs_pos: Worst,
    lbs_nrm: Worst,
    dqs_pos: Worst,
    dqs_nrm: Worst,
    samples: usize,
    vertices: usize,
    normals: usize,
}

impl RawStats {
    fn max(&self) -> f64 {
        [&self.world, &self.joint_matrices, &self.lbs_pos, &self.lbs_nrm, &self.dqs_pos, &self.dqs_nrm]
            .iter()
            .map(|w| w.value)
            .fold(0.0, f64::max)
    }
    fn worst(&self) -> &Worst {
        [&self.world, &self.joint_matrices, &self.lbs_pos, &self.lbs_nrm, &self.dqs_pos, &self.dqs_nrm]
            .into_iter()
            .fold(&self.world, |a, b| if b.value > a.value { b } else { a })
    }
}

/// Baked-vs-raw differences of one model.
#[derive(Debug, Default, Clone)]
struct BakedStats {
    /// Joint world positions, `dump` (corrected nlerp) against `dump --raw`.
    joint_pos: Worst,
    /// Joint world positions of the baked clip sampled with exact slerp: what key quantization
    /// and reduction alone change.
    storage: Worst,
    /// Skinned positions, `dump` against `dump --raw` (not bounded by the baker: its tolerance
    /// holds at 3 cm from each joint, vertices further away move more).
    vertices: Worst,
    samples: usize,
}

fn compare_vertices(
    worst_pos: &mut Worst,
    worst_nrm: &mut Worst,
    got: &Dump,
    pos: &[Vec3d],
    nrm: &[Vec3d],
    size: f64,
    at: &dyn Fn() -> String,
) {
    assert_eq!(got.positions.len(), pos.len(), "skinned vertex count at {}", at());
    assert_eq!(got.normals.len(), nrm.len(), "skinned normal count at {}", at());
    for (v, (g, w)) in got.positions.iter().zip(pos).enumerate() {
        worst_pos.update(dist(*g, *w) / size, || format!("{} vertex {v}", at()));
    }
    for (v, (g, w)) in got.normals.iter().zip(nrm).enumerate() {
        worst_nrm.update(dist(*g, *w) / w.length().max(1.0), || format!("{} normal {v}", at()));
    }
}

/// Records `baked` (the `dump` path) and `storage` (the baked clip sampled with exact slerp)
/// against `raw`.
fn compare_baked(stats: &mut BakedStats, baked: &Dump, storage: &Dump, raw: &Dump, at: &dyn Fn() -> String) {
    assert_eq!(baked.joints, raw.joints, "baked and raw joints at {}", at());
    for (j, ((b, s), r)) in baked.joint_world.iter().zip(&storage.joint_world).zip(&raw.joint_world).enumerate() {
        let d = dist(b.translation(), r.translation());
        stats.joint_pos.update(d, || format!("{} joint {j} ({})", at(), raw.joints[j]));
        let d = dist(s.translation(), r.translation());
        stats.storage.update(d, || format!("{} joint {j} ({})", at(), raw.joints[j]));
    }
    assert_eq!(baked.positions.len(), raw.positions.len());
    for (v, (b, r)) in baked.positions.iter().zip(&raw.positions).enumerate() {
        stats.vertices.update(dist(*b, *r), || format!("{} vertex {v}", at()));
    }
    stats.samples += 1;
}

fn print_rows(model: &str, size: f64, raw: &RawStats, baked: &BakedStats, bound: f64, unit_m: f64, note: &str) {
    eprintln!(
        "conformance {model:<20} size {size:>8.3}  raw-vs-f64 max {:.2e}: world {:.2e}, joint mats {:.2e}, LBS pos \
         {:.2e} nrm {:.2e}, DQS pos {:.2e} nrm {:.2e} ({} samples, {} vertices, {} normals); worst world at {}",
        raw.max(),
        raw.world.value,
        raw.joint_matrices.value,
        raw.lbs_pos.value,
        raw.lbs_nrm.value,
        raw.dqs_pos.value,
        raw.dqs_nrm.value,
        raw.samples,
        raw.vertices,
        raw.normals,
        raw.world.at,
    );
    eprintln!(
        "conformance {model:<20} baked-vs-raw joint pos {:.3e} m at {} (bound {:.3e} m; {} samples); \
         keys alone (exact slerp) {:.3e} m; skinned vertices {:.3e} m{note}",
        baked.joint_pos.value * unit_m,
        baked.joint_pos.at,
        bound * unit_m,
        baked.samples,
        baked.storage.value * unit_m,
        baked.vertices.value * unit_m,
    );
}

/// Asserts the raw and baked bounds of one model.
fn check_bounds(model: &str, raw: &RawStats, baked: &BakedStats, bound: f64) {
    assert!(raw.max() <= RAW_BOUND, "{model}: raw vs f64 error {:e} at {}", raw.max(), raw.worst().at);
    assert!(
        baked.storage.value <= bound,
        "{model}: baked keys (sampled with exact slerp) vs raw: joint position {:e} exceeds {bound:e} at {}",
        baked.storage.value,
        baked.storage.at
    );
    assert!(
        baked.joint_pos.value <= bound,
        "{model}: baked (dump, corrected nlerp) vs raw: joint position {:e} exceeds {bound:e} at {} \
         (keys alone: {:e})",
        baked.joint_pos.value,
        baked.joint_pos.at,
        baked.storage.value
    );
}

// -------------------------------------------------------------------------------------------------
// glTF models
// -------------------------------------------------------------------------------------------------

/// What to run on one glTF model.
struct GltfCase {
    model: &'static str,
    /// Skins to dump (`[0]` for models without skins: the dump then has no joint matrices).
    skins: &'static [usize],
    /// Key times picked per clip.
    spread: usize,
    /// Run dual-quaternion skinning at every `dqs_every`-th sample.
    dqs_every: usize,
}

/// The model's size: the bounding-box diagonal of its joints at rest and of its rest-pose
/// vertices (skinned meshes skinned, rigid meshes placed by their node).
fn gltf_size(r: &GltfRef) -> f64 {
    let world = r.world_at(None, 0.0);
    let mut pts: Vec<Vec3d> = r.import_order().iter().map(|&n| world[n].translation()).collect();
    for &n in &r.import_order() {
        let node = &r.nodes[n];
        match (node.mesh, node.skin) {
            (Some(m), Some(s)) => {
                if let Ok(sk) = r.skin_mesh(&world, s, m, Method::Linear, WeightRule::AsGiven) {
                    pts.extend(sk.positions);
                }
            }
            (Some(m), None) => {
                for p in &r.meshes[m].primitives {
                    pts.extend(p.positions.iter().map(|&v| world[n].transform_point(v)));
                }
            }
            _ => {}
        }
    }
    bbox_diagonal(pts).max(1.0e-3)
}

/// Checks the dump's joint rows against the importer's documented node order: same count, and
/// every node with a unique, non-empty file name of at most 32 bytes appears under that name.
fn check_joint_names(r: &GltfRef, order: &[usize], names: &[String], model: &str) {
    assert_eq!(names.len(), order.len(), "{model}: dump joints vs nodes in the scene");
    for (i, &n) in order.iter().enumerate() {
        let Some(name) = r.nodes[n].name.as_deref() else { continue };
        let unique = r.nodes.iter().filter(|o| o.name.as_deref() == Some(name)).count() == 1;
        if unique && !name.is_empty() && name.len() <= sinew::limits::MAX_NAME_LEN {
            assert_eq!(names[i], name, "{model}: joint row {i} should be node {n}");
        }
    }
}

fn run_gltf(case: &GltfCase) {
    run_gltf_file(case, &gltf_path(case.model));
}

fn run_gltf_file(case: &GltfCase, path: &Path) {
    let path = path.to_path_buf();
    let r = GltfRef::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let order = r.import_order();
    let size = gltf_size(&r);
    let raw_model = load(&path, None, Mode::Raw);
    let baked_model = load(&path, None, Mode::Baked);
    let asset = raw_model.asset();
    // sinew imports the node-transform channels of every animation as one clip each.
    assert_eq!(asset.num_clips(), r.animations.len(), "{}: clips", case.model);
    let mut raw = RawStats::default();
    let mut baked = BakedStats::default();
    let mut renormalized = 0;
    let mut morph = MorphStats::default();
    let clips: Vec<Option<usize>> =
        if r.animations.is_empty() { vec![None] } else { (0..r.animations.len()).map(Some).collect() };
    for &clip in &clips {
        let (keys, (start, end)) = match clip {
            Some(c) => (r.animations[c].key_times(), r.animations[c].range().unwrap_or((0.0, 0.0))),
            None => (Vec::new(), (0.0, 0.0)),
        };
        if let Some(c) = clip.and_then(|c| asset.clip(c)) {
            // The clip's range is the union of its channels' key ranges.
            assert!(
                (f64::from(c.start()) - start).abs() <= 1e-6 && (f64::from(c.end()) - end).abs() <= 1e-6,
                "{}: clip {} range {}..{} vs the channels' {start}..{end}",
                case.model,
                c.name(),
                c.start(),
                c.end()
            );
        }
        for (ti, &t) in sample_times(&keys, start, end, case.spread).iter().enumerate() {
            let tf = f64::from(t);
            let world = r.world_at(clip, tf);
            for &skin in case.skins {
                let at = || format!("clip {clip:?} t={t} skin {skin}");
                let got = run_dump(&raw_model, Mode::Raw, clip, t, skin, Skinning::Lbs);
                check_joint_names(&r, &order, &got.joints, case.model);
                for (i, &n) in order.iter().enumerate() {
                    raw.world.update(mat_error(&got.joint_world[i], &world[n], size), || {
                        format!("{} joint {i} (node {n})", at())
                    });
                }
                if r.skins.is_empty() {
                    assert!(got.joint_matrices.is_empty() && got.positions.is_empty());
                } else {
                    let jm = r.joint_matrices(&world, skin).expect("joint matrices");
                    assert_eq!(got.joint_matrices.len(), jm.len(), "{} joint matrices at {}", case.model, at());
                    for (i, (g, w)) in got.joint_matrices.iter().zip(&jm).enumerate() {
                        raw.joint_matrices.update(mat_error(g, w, size), || format!("{} skin joint {i}", at()));
                    }
                    // The instance's morph targets apply before skinning (none: the bind pose).
                    let (node, _) = r.skinned_instance(skin).expect("a mesh uses the skin");
                    let rule = WeightRule::RenormalizeBeyond(IMPORTER_WEIGHT_TOLERANCE);
                    let lbs = r.mesh_instance(node, clip, tf, Method::Linear, rule).expect("reference LBS");
                    renormalized = lbs.renormalized;
                    raw.vertices = lbs.positions.len();
                    raw.normals = lbs.normals.len();
                    compare_vertices(
                        &mut raw.lbs_pos,
                        &mut raw.lbs_nrm,
                        &got,
                        &lbs.positions,
                        &lbs.normals,
                        size,
                        &|| format!("{} LBS", at()),
                    );
                    if ti % case.dqs_every == 0 {
                        let got = run_dump(&raw_model, Mode::Raw, clip, t, skin, Skinning::Dqs);
                        let dqs = r.mesh_instance(node, clip, tf, Method::DualQuat, rule).expect("reference DQS");
                        compare_vertices(
                            &mut raw.dqs_pos,
                            &mut raw.dqs_nrm,
                            &got,
                            &dqs.positions,
                            &dqs.normals,
                            size,
                            &|| format!("{} DQS", at()),
                        );
                    }
                }
                raw.samples += 1;
                check_morphs(&r, &order, &raw_model, &baked_model, clip, t, size, &mut morph);
                let b = run_dump(&baked_model, Mode::Baked, clip, t, skin, Skinning::Lbs);
                let bs = dump_with(&baked_model, RotationInterpolation::Slerp, clip, t, skin, Skinning::Lbs);
                compare_baked(&mut baked, &b, &bs, &got, &at);
            }
        }
    }
    let bound = BAKE_TOLERANCE_M + F32_SLACK * size;
    let note =
        if renormalized > 0 { format!("; {renormalized} vertices' weights renormalized") } else { String::new() };
    print_rows(case.model, size, &raw, &baked, bound, 1.0, &note);
    check_bounds(case.model, &raw, &baked, bound);
    if morph.samples > 0 {
        eprintln!(
            "conformance {:<20} morph: raw-vs-f64 weights {:.2e} at {}, mesh positions {:.2e} (of the size) at {}; \
             baked-vs-raw weights {:.2e}, unskinned static-node positions {:.3e} (bound {bound:.3e}) ({} samples)",
            case.model,
            morph.weights.value,
            morph.weights.at,
            morph.positions.value,
            morph.positions.at,
            morph.baked_weights.value,
            morph.baked_positions.value,
            morph.samples
        );
        assert!(morph.weights.value <= 1e-6, "{}: raw morph weights vs f64 at {}", case.model, morph.weights.at);
        assert!(
            morph.positions.value <= RAW_BOUND,
            "{}: raw mesh positions vs f64 at {}",
            case.model,
            morph.positions.at
        );
        assert!(
            morph.baked_positions.value <= bound,
            "{}: baked mesh positions vs raw {:e} at {}",
            case.model,
            morph.baked_positions.value,
            morph.baked_positions.at
        );
    }
}

/// Morph-target errors of one model.
#[derive(Debug, Default, Clone)]
struct MorphStats {
    /// `dump --raw` `morph_weights` against the reference (absolute).
    weights: Worst,
    /// `dump --raw` `mesh_positions` against the reference, relative to the model size.
    positions: Worst,
    /// `dump` weights against `dump --raw` (absolute).
    baked_weights: Worst,
    /// `dump` `mesh_positions` against `dump --raw`, for unskinned instances on nodes no
    /// channel moves (what the morph encoding alone changes), in scene units.
    baked_positions: Worst,
    samples: usize,
}

/// `morph_weights` and `mesh_positions` of the mesh instance at glTF node `node`.
fn dump_mesh(model: &Model, mode: Mode, clip: Option<usize>, t: f32, node: usize) -> (Vec<f64>, Vec<Vec3d>) {
    let opts =
        DumpOptions { clip, time: t, mesh_node: Some(node), rotation: rotation_of(mode), ..DumpOptions::default() };
    let v: Value = serde_json::from_str(&dump(model, &opts).expect("dump")).expect("JSON");
    (floats(&v["morph_weights"]), vecs(&v["mesh_positions"]))
}

/// Checks every mesh instance with morph targets at clip `clip`, time `t`: raw weights and
/// final positions against the reference, baked against raw.
#[allow(clippy::too_many_arguments)]
fn check_morphs(
    r: &GltfRef,
    order: &[usize],
    raw_model: &Model,
    baked_model: &Model,
    clip: Option<usize>,
    t: f32,
    size: f64,
    stats: &mut MorphStats,
) {
    let tf = f64::from(t);
    for &n in order {
        let Some(mesh) = r.nodes[n].mesh else { continue };
        if r.num_targets(mesh) == 0 {
            continue;
        }
        let at = || format!("clip {clip:?} t={t} node {n}");
        let (w, p) = dump_mesh(raw_model, Mode::Raw, clip, t, n);
        let want_w = r.morph_weights(n, clip, tf);
        assert_eq!(w.len(), want_w.len(), "morph weights at {}", at());
        for (j, (g, e)) in w.iter().zip(&want_w).enumerate() {
            stats.weights.update((g - e).abs(), || format!("{} target {j}", at()));
        }
        let rule = WeightRule::RenormalizeBeyond(IMPORTER_WEIGHT_TOLERANCE);
        let want = r.mesh_instance(n, clip, tf, Method::Linear, rule).expect("reference instance");
        assert_eq!(p.len(), want.positions.len(), "mesh positions at {}", at());
        for (v, (g, e)) in p.iter().zip(&want.positions).enumerate() {
            stats.positions.update(dist(*g, *e) / size, || format!("{} vertex {v}", at()));
        }
        let (bw, bp) = dump_mesh(baked_model, Mode::Baked, clip, t, n);
        for (j, (b, g)) in bw.iter().zip(&w).enumerate() {
            stats.baked_weights.update((b - g).abs(), || format!("{} target {j}", at()));
        }
        let moved = |node: usize| {
            r.animations.iter().flat_map(|a| &a.channels).any(|c| c.node == node && c.target != Target::Weights)
        };
        let mut chain = Some(n);
        let mut still = true;
        while let Some(k) = chain {
            still &= !moved(k);
            chain = r.nodes[k].parent;
        }
        if r.nodes[n].skin.is_none() && still {
            for (v, (b, g)) in bp.iter().zip(&p).enumerate() {
                stats.baked_positions.update(dist(*b, *g), || format!("{} vertex {v}", at()));
            }
        }
        stats.samples += 1;
    }
}

#[test]
fn rigged_simple() {
    run_gltf(&GltfCase { model: "RiggedSimple", skins: &[0], spread: 12, dqs_every: 1 });
}

#[test]
fn simple_skin() {
    run_gltf(&GltfCase { model: "SimpleSkin", skins: &[0], spread: 12, dqs_every: 1 });
}

#[test]
fn rigged_figure() {
    run_gltf(&GltfCase { model: "RiggedFigure", skins: &[0], spread: 4, dqs_every: 1 });
}

#[test]
fn cesium_man() {
    run_gltf(&GltfCase { model: "CesiumMan", skins: &[0], spread: 10, dqs_every: 2 });
}

#[test]
fn fox() {
    run_gltf(&GltfCase { model: "Fox", skins: &[0], spread: 8, dqs_every: 2 });
}

#[test]
fn brain_stem() {
    run_gltf(&GltfCase { model: "BrainStem", skins: &[0], spread: 3, dqs_every: 3 });
}

#[test]
fn recursive_skeletons() {
    run_gltf(&GltfCase { model: "RecursiveSkeletons", skins: &[0, 41, 83], spread: 4, dqs_every: 2 });
}

#[test]
fn interpolation_test_dump() {
    run_gltf(&GltfCase { model: "InterpolationTest", skins: &[0], spread: 8, dqs_every: 1 });
}

#[test]
fn box_animated_dump() {
    run_gltf(&GltfCase { model: "BoxAnimated", skins: &[0], spread: 8, dqs_every: 1 });
}

#[test]
fn animated_morph_cube() {
    run_gltf(&GltfCase { model: "AnimatedMorphCube", skins: &[0], spread: 12, dqs_every: 1 });
}

/// The skinned and morphed model of `sinew_tests::corpus::morph` (sparse and zero-filled
/// targets, mesh and node default weights, CUBICSPLINE, STEP and LINEAR weights channels, a
/// clip of weights channels only), written to a scratch file.
#[test]
fn skinned_and_morphed_model() {
    let dir = std::env::temp_dir().join(format!("sinew-conformance-morph-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join("morph.gltf");
    std::fs::write(&path, MorphGltf::new().gltf()).expect("write");
    run_gltf_file(&GltfCase { model: "morph.gltf", skins: &[0], spread: 8, dqs_every: 1 }, &path);
    let _ = std::fs::remove_dir_all(&dir);
}

// -------------------------------------------------------------------------------------------------
// md5 Bob
// -------------------------------------------------------------------------------------------------

/// Skins every mesh of `model` with the library pipeline (the dump shows only the first mesh
/// that uses the skin; md5 models have one mesh per `mesh` block).
fn skin_all_meshes(model: &Model, mode: Mode, t: f32, method: Skinning) -> Vec<(Vec<Vec3d>, Vec<Vec3d>)> {
    let rotation = match mode {
        Mode::Raw => RotationInterpolation::Slerp,
        Mode::Baked => RotationInterpolation::NlerpCorrected,
    };
    let mut pose: Vec<SoaTransform<f32>> = Vec::new();
    let mut cursor = Vec::new();
    model.sample(Some(0), t, rotation, &mut cursor, &mut pose).expect("sample");
    let mut world: Vec<Mat4<f32>> = Vec::new();
    model.world(&pose, &mut world).expect("world");
    let palette = model.palette(&world, 0).expect("palette");
    let dq = model.dq_palette(&world, 0).expect("dq palette");
    let v = |p: &sinew::math::Vec3<f32>| Vec3d::new(f64::from(p.x), f64::from(p.y), f64::from(p.z));
    (0..model.asset().num_meshes())
        .map(|m| {
            let parts = model.skin_mesh(m, &world, &palette, &dq, method).expect("skin");
            let pos = parts.iter().flat_map(|p| p.positions.iter().map(v)).collect();
            let nrm = parts.iter().flat_map(|p| p.normals.iter().map(v)).collect();
            (pos, nrm)
        })
        .collect()
}

#[test]
fn bob_md5() {
    let (mesh, anim) = bob();
    let r = Md5Ref::load(&mesh, Some(&anim)).expect("md5 reference");
    let a = r.anim.as_ref().expect("anim");
    let raw_model = load(&mesh, Some(&anim), Mode::Raw);
    let baked_model = load(&mesh, Some(&anim), Mode::Baked);
    let num_meshes = r.mesh.meshes.len();
    assert_eq!(raw_model.asset().num_meshes(), num_meshes, "one sinew mesh per md5 mesh block");
    let bind = r.mesh.bind_matrices();
    let mut pts: Vec<Vec3d> = bind.iter().map(Mat4d::translation).collect();
    for m in 0..num_meshes {
        pts.extend(r.mesh.bind_vertices(m).expect("bind").positions);
    }
    let size = bbox_diagonal(pts);
    let keys: Vec<f64> = (0..a.frames.len()).map(|f| f as f64 / a.frame_rate).collect();
    let clip = raw_model.asset().clip(0).expect("clip");
    assert!((f64::from(clip.end() - clip.start()) - a.duration()).abs() < 1e-5, "clip length");
    let mut raw = RawStats::default();
    let mut baked = BakedStats::default();
    let mut all_meshes = Worst::default();
    for (ti, &t) in sample_times(&keys, 0.0, a.duration(), 10).iter().enumerate() {
        let tf = f64::from(t);
        let at = || format!("t={t}");
        let world = r.world_at(tf).expect("world");
        let got = run_dump(&raw_model, Mode::Raw, Some(0), t, 0, Skinning::Lbs);
        let names: Vec<&str> = r.mesh.joints.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(got.joints, names, "joint rows are the md5 joints in file order");
        for (j, (g, w)) in got.joint_world.iter().zip(&world).enumerate() {
            raw.world.update(mat_error(g, w, size), || format!("{} joint {j}", at()));
        }
        let jm = r.joint_matrices(&world).expect("joint matrices");
        assert_eq!(got.joint_matrices.len(), jm.len());
        for (j, (g, w)) in got.joint_matrices.iter().zip(&jm).enumerate() {
            raw.joint_matrices.update(mat_error(g, w, size), || format!("{} skin joint {j}", at()));
        }
        // The dump's vertices: the first mesh block.
        let (pos, nrm) = r.skin_mesh(&world, 0, Method::Linear).expect("LBS");
        raw.vertices = pos.len();
        raw.normals = nrm.len();
        compare_vertices(&mut raw.lbs_pos, &mut raw.lbs_nrm, &got, &pos, &nrm, size, &|| format!("{} LBS", at()));
        let got_dq = run_dump(&raw_model, Mode::Raw, Some(0), t, 0, Skinning::Dqs);
        let (dpos, dnrm) = r.skin_mesh(&world, 0, Method::DualQuat).expect("DQS");
        compare_vertices(&mut raw.dqs_pos, &mut raw.dqs_nrm, &got_dq, &dpos, &dnrm, size, &|| format!("{} DQS", at()));
        // Every mesh block, through the library (LBS and DQS at alternate samples).
        let method = if ti % 2 == 0 { (Skinning::Lbs, Method::Linear) } else { (Skinning::Dqs, Method::DualQuat) };
        for (m, (gp, gn)) in skin_all_meshes(&raw_model, Mode::Raw, t, method.0).iter().enumerate() {
            let (wp, wn) = r.skin_mesh(&world, m, method.1).expect("reference");
            assert_eq!((gp.len(), gn.len()), (wp.len(), wn.len()), "mesh {m} vertex count");
            for (v, (g, w)) in gp.iter().zip(&wp).enumerate() {
                all_meshes.update(dist(*g, *w) / size, || format!("{} {:?} mesh {m} vertex {v}", at(), method.0));
            }
            for (v, (g, w)) in gn.iter().zip(&wn).enumerate() {
                all_meshes.update(dist(*g, *w), || format!("{} {:?} mesh {m} normal {v}", at(), method.0));
            }
        }
        raw.samples += 1;
        let b = run_dump(&baked_model, Mode::Baked, Some(0), t, 0, Skinning::Lbs);
        let bs = dump_with(&baked_model, RotationInterpolation::Slerp, Some(0), t, 0, Skinning::Lbs);
        compare_baked(&mut baked, &b, &bs, &got, &at);
    }
    let unit = 0.0254;
    let bound = BAKE_TOLERANCE_M / unit + F32_SLACK * size;
    let note = format!(
        "; all {num_meshes} mesh blocks via the library: {:.2e} relative at {}",
        all_meshes.value, all_meshes.at
    );
    print_rows("Bob (md5)", size, &raw, &baked, bound, unit, &note);
    assert!(all_meshes.value <= RAW_BOUND, "Bob: mesh blocks vs f64 {:e} at {}", all_meshes.value, all_meshes.at);
    check_bounds("Bob (md5)", &raw, &baked, bound);
}

// -------------------------------------------------------------------------------------------------
// Interpolation modes, channel ranges, first keys after 0
// -------------------------------------------------------------------------------------------------

/// The local TRS of every joint of `model` sampled at `t` (exact slerp for raw).
fn sinew_locals(model: &Model, mode: Mode, clip: usize, t: f32) -> Vec<sinew::math::Transform<f32>> {
    let rotation = match mode {
        Mode::Raw => RotationInterpolation::Slerp,
        Mode::Baked => RotationInterpolation::NlerpCorrected,
    };
    let mut pose: Vec<SoaTransform<f32>> = Vec::new();
    let mut cursor = Vec::new();
    model.sample(Some(clip), t, rotation, &mut cursor, &mut pose).expect("sample");
    (0..model.skeleton().num_joints()).map(|j| pose[j / 4].lane(j % 4)).collect()
}

/// InterpolationTest: every node's translation, rotation and scale at and between keys, for
/// each of the 9 clips (STEP / LINEAR / CUBICSPLINE × T / R / S), against Appendix C.
#[test]
fn interpolation_modes_trs() {
    let path = gltf_path("InterpolationTest");
    let r = GltfRef::load(&path).expect("reference");
    let order = r.import_order();
    let shell = 0.03;
    // Baked bounds from the baker's virtual-vertex tolerance: a translation error moves the
    // joint, a rotation error of θ moves a vertex at `shell` by about θ·shell, a scale error δ
    // by δ·shell.
    let baked_t = BAKE_TOLERANCE_M * 1.01 + 1e-6;
    let baked_r = BAKE_TOLERANCE_M / shell * 1.01 + 1e-6;
    let baked_s = baked_r;
    let mut seen = std::collections::HashSet::new();
    for mode in [Mode::Raw, Mode::Baked] {
        let model = load(&path, None, mode);
        for (ci, a) in r.animations.iter().enumerate() {
            let tracked: Vec<_> = a.channels.iter().filter(|c| c.target != Target::Weights).collect();
            assert_eq!(tracked.len(), 1, "each InterpolationTest clip animates one property");
            let ch = tracked[0];
            seen.insert((format!("{:?}", ch.interpolation), format!("{:?}", ch.target)));
            let (start, end) = a.range().expect("keys");
            let (mut et, mut er, mut es) = (0.0f64, 0.0f64, 0.0f64);
            for t in sample_times(&a.key_times(), start, end, 16) {
                let got = sinew_locals(&model, mode, ci, t);
                let want = r.local_pose(Some(ci), f64::from(t));
                for (j, &n) in order.iter().enumerate() {
                    let sinew_tests::gltf_ref::Local::Trs(w) = want[n] else { continue };
                    let g = &got[j];
                    let gt = Vec3d::new(g.translation.x.into(), g.translation.y.into(), g.translation.z.into());
                    let gs = Vec3d::new(g.scale.x.into(), g.scale.y.into(), g.scale.z.into());
                    let gr =
                        Quatd::new(g.rotation.x.into(), g.rotation.y.into(), g.rotation.z.into(), g.rotation.w.into());
                    et = et.max(dist(gt, w.translation));
                    es = es.max(dist(gs, w.scale));
                    er = er.max(gr.rotation_angle_to(w.rotation.normalized().expect("unit")).expect("angle"));
                }
            }
            let name = a.name.clone().unwrap_or_default();
            eprintln!(
                "conformance InterpolationTest {mode:?} {name:<24} ({:?} {:?}): translation {et:.2e} m, rotation \
                 {er:.2e} rad, scale {es:.2e}",
                ch.interpolation, ch.target
            );
            let (bt, br, bs) = match mode {
                Mode::Raw => (1e-6, 1e-6, 1e-6),
                Mode::Baked => (baked_t, baked_r, baked_s),
            };
            assert!(et <= bt && er <= br && es <= bs, "{mode:?} {name}: T {et:e} R {er:e} S {es:e}");
        }
    }
    assert_eq!(seen.len(), 9, "all 3 interpolations × 3 properties were exercised");
}

/// The reference itself against values worked out by hand from InterpolationTest's keys: the
/// step holds, the linear midpoint, and the cubic spline reproduces its keys.
#[test]
fn appendix_c_formulas_on_interpolation_test() {
    let r = GltfRef::load(&gltf_path("InterpolationTest")).expect("reference");
    for a in &r.animations {
        let c = a.channels.iter().find(|c| c.target != Target::Weights).expect("channel");
        let cubic = c.interpolation == Interp::CubicSpline;
        let val = |k: usize| c.values[if cubic { 3 * k + 1 } else { k }];
        for k in 0..c.times.len() {
            let v = c.sample(c.times[k]);
            let want = if c.target == Target::Rotation {
                let q = val(k);
                let l = q.iter().map(|x| x * x).sum::<f64>().sqrt();
                q.map(|x| x / l)
            } else {
                val(k)
            };
            for i in 0..4 {
                assert!((v[i] - want[i]).abs() < 1e-12, "{:?} key {k}", a.name);
            }
            if k + 1 < c.times.len() {
                let mid = 0.5 * (c.times[k] + c.times[k + 1]);
                let m = c.sample(mid);
                match (c.interpolation, c.target) {
                    (Interp::Step, _) => assert_eq!(m, want, "{:?}: step holds key {k}", a.name),
                    (Interp::Linear, Target::Translation | Target::Scale) => {
                        for i in 0..3 {
                            assert!((m[i] - 0.5 * (val(k)[i] + val(k + 1)[i])).abs() < 1e-12);
                        }
                    }
                    (Interp::CubicSpline, Target::Translation | Target::Scale) => {
                        // Hermite at s = ½: (v0 + v1)/2 + td·(b0 − a1)/8.
                        let td = c.times[k + 1] - c.times[k];
                        let (b0, a1) = (c.values[3 * k + 2], c.values[3 * (k + 1)]);
                        for i in 0..3 {
                            let e = 0.5 * (val(k)[i] + val(k + 1)[i]) + td * (b0[i] - a1[i]) / 8.0;
                            assert!((m[i] - e).abs() < 1e-12, "{:?} cubic midpoint", a.name);
                        }
                    }
                    _ => {}
                }
            }
        }
        // Clamped before the first and after the last key.
        assert_eq!(c.sample(c.times[0] - 1.0), c.sample(c.times[0]));
        assert_eq!(c.sample(c.times[c.times.len() - 1] + 1.0), c.sample(c.times[c.times.len() - 1]));
    }
}

/// BoxAnimated: two channels of different lengths; the clip spans the union of their ranges
/// (so it loops as a whole), and the shorter channel holds its last value until the clip ends.
#[test]
fn box_animated_channels_of_different_lengths() {
    let path = gltf_path("BoxAnimated");
    let r = GltfRef::load(&path).expect("reference");
    let a = &r.animations[0];
    let ranges: Vec<(usize, f64, f64, usize)> =
        a.channels.iter().map(|c| (c.node, c.times[0], c.times[c.times.len() - 1], c.times.len())).collect();
    assert_eq!(ranges.len(), 2);
    let (short, long) = if ranges[0].2 < ranges[1].2 { (ranges[0], ranges[1]) } else { (ranges[1], ranges[0]) };
    assert!(short.2 < long.2 && short.3 != long.3, "the file's channels differ in length: {ranges:?}");
    let (start, end) = a.range().expect("keys");
    let model = load(&path, None, Mode::Raw);
    let clip = model.asset().clip(0).expect("clip");
    eprintln!(
        "conformance BoxAnimated channels {ranges:?}; clip {}..{} s (union {start}..{end})",
        clip.start(),
        clip.end()
    );
    assert!((f64::from(clip.start()) - start).abs() < 1e-6 && (f64::from(clip.end()) - end).abs() < 1e-6);
    let order = r.import_order();
    let row = |node: usize| order.iter().position(|&n| n == node).expect("node imported");
    // After the short channel's last key its node holds its last local transform while the
    // long channel's node keeps moving.
    let t_a = (short.2 + 0.25 * (end - short.2)) as f32;
    let t_b = (short.2 + 0.75 * (end - short.2)) as f32;
    let local = |t: f32, node: usize| sinew_locals(&model, Mode::Raw, 0, t)[row(node)];
    let held = local(short.2 as f32, short.0);
    assert_eq!(local(t_a, short.0), held, "node {} holds after its last key", short.0);
    assert_eq!(local(t_b, short.0), held, "node {} holds after its last key", short.0);
    let (la, lb) = (local(t_a, long.0), local(t_b, long.0));
    assert_ne!(la, lb, "node {} keeps moving until the clip's end", long.0);
    for (t, l) in [(t_a, la), (t_b, lb)] {
        let sinew_tests::gltf_ref::Local::Trs(w) = r.local_pose(Some(0), f64::from(t))[long.0] else {
            panic!("animated nodes have TRS")
        };
        let g = Vec3d::new(l.translation.x.into(), l.translation.y.into(), l.translation.z.into());
        let q = Quatd::new(l.rotation.x.into(), l.rotation.y.into(), l.rotation.z.into(), l.rotation.w.into());
        assert!(dist(g, w.translation) < 1e-6 && q.rotation_angle_to(w.rotation).expect("angle") < 1e-6, "t={t}");
    }
    // Past the end everything holds the end pose.
    let de = run_dump(&model, Mode::Raw, Some(0), end as f32, 0, Skinning::Lbs);
    let dp = run_dump(&model, Mode::Raw, Some(0), end as f32 + 1.0, 0, Skinning::Lbs);
    assert_eq!(de.joint_world, dp.joint_world);
}

/// CesiumMan and RiggedSimple start their keys after 0: sampling at t = 0 gives the first
/// keys' values, both raw and baked.
#[test]
fn first_key_after_zero() {
    for model_name in ["CesiumMan", "RiggedSimple"] {
        let path = gltf_path(model_name);
        let r = GltfRef::load(&path).expect("reference");
        let (start, _) = r.animations[0].range().expect("keys");
        assert!(start > 0.0, "{model_name}: first key at {start}");
        let size = gltf_size(&r);
        let order = r.import_order();
        let first = r.world_at(Some(0), start);
        for mode in [Mode::Raw, Mode::Baked] {
            let model = load(&path, None, mode);
            let clip = model.asset().clip(0).expect("clip");
            assert!((f64::from(clip.start()) - start).abs() < 1e-6, "{model_name}: clip starts at {}", clip.start());
            let at0 = run_dump(&model, mode, Some(0), 0.0, 0, Skinning::Lbs);
            let at_first = run_dump(&model, mode, Some(0), start as f32, 0, Skinning::Lbs);
            assert_eq!(at0.joint_world, at_first.joint_world, "{model_name} {mode:?}");
            assert_eq!(at0.positions, at_first.positions, "{model_name} {mode:?}");
            let mut e = 0.0f64;
            for (i, &n) in order.iter().enumerate() {
                e = e.max(dist(at0.joint_world[i].translation(), first[n].translation()));
            }
            eprintln!("conformance {model_name} {mode:?}: t=0 vs the first key ({start} s): joint positions {e:.2e} m");
            let bound = match mode {
                Mode::Raw => RAW_BOUND * size,
                Mode::Baked => BAKE_TOLERANCE_M + F32_SLACK * size,
            };
            assert!(e <= bound, "{model_name} {mode:?}: {e:e}");
        }
    }
}
