//! Differential tests: sinew's jobs on random skeletons and skinned meshes, against the
//! independent `f64` reference of `sinew_tests::reference`, in `f32` and in Q16.16.
//!
//! Inputs come from fixed seeds. They are generated in `f64`, rounded to the scalar under test,
//! and the reference is computed from the rounded values, so the errors measure sinew's
//! arithmetic. Each test prints its worst errors with where they occurred (`--nocapture`) and
//! asserts bounds a little above them.
//!
//! Errors are relative to the magnitude that the computation works at, so that a deep hierarchy
//! whose values grow is held to the same standard as a shallow one:
//!
//! - model matrices: the largest entry error divided by the *chain magnitude* of the joint, the
//!   largest |entry| of the reference model matrices from its root (and the root matrix) down
//!   to the joint, at least 1; and, separately, the error of each axis column (the joint's
//!   scaled axes, `parent · local axis`) relative to the length of `|parent| · |local axis|`
//!   (entry-wise absolute values: the size of the terms before they cancel, which is what a
//!   rounding error is proportional to when non-uniform scales make `parent` anisotropic);
//! - skin matrices `model · inverse_bind`: the largest entry error divided by the largest entry
//!   of `|model| · |inverse_bind|` (entry-wise absolute values), at least 1: what the product's
//!   terms add up to before they cancel;
//! - skinned positions: the error divided by `max(1, |p|) · m`, `m` the largest such palette
//!   magnitude among the vertex's influences; normals and tangents by `m` alone (LBS), or
//!   absolute (DQS, where they are only rotated).

use rand::seq::SliceRandom;
use rand::Rng;
use sinew::job::{LocalToModelJob, Palette, SkinDualQuatJob, SkinMatrixJob, SkinningJob};
use sinew::limits::{MAX_INFLUENCES, MAX_JOINTS, MAX_SOA_JOINTS};
use sinew::math::{DualQuat, Mat4, Transform, Vec3, Vec4};
use sinew::skeleton::Skeleton;
use sinew::Q16;
use sinew_tests::convert::{
    dual_quat_to_f64, mat4_from_f64, mat4_to_f64, pack_soa, real_from_f64, real_to_f64, transform_from_f64,
    transform_to_f64, vec3_from_f64, vec3_to_f64, vec4_from_f64, vec4_to_f64, ExactF64,
};
use sinew_tests::random::{in_box, log_uniform, rng, small_rotation, uniform, unit_quat, unit_vec3, TestRng};
use sinew_tests::reference::{self, DualQuatd, Mat4d, SkinInput, Trsd, Vec3d, Vec4d};

// -------------------------------------------------------------------------------------------------
// Worst-case tracking
// -------------------------------------------------------------------------------------------------

/// The largest error seen so far and where it was.
#[derive(Debug, Default)]
struct Worst {
    value: f64,
    at: String,
}

impl Worst {
    /// Records `value` if it is the largest so far (NaN counts as larger than anything).
    fn update(&mut self, value: f64, at: impl FnOnce() -> String) {
        if value.is_nan() || value > self.value {
            self.value = if value.is_nan() { f64::INFINITY } else { value };
            self.at = at();
        }
    }
    /// Prints the figure and asserts `value ≤ bound`.
    fn check(&self, what: &str, bound: f64) {
        eprintln!("  {what}: {:.3e} (bound {bound:.1e}) at {}", self.value, self.at);
        assert!(self.value <= bound, "{what}: {:e} exceeds {bound:e} at {}", self.value, self.at);
    }
}

// -------------------------------------------------------------------------------------------------
// Random skeletons
// -------------------------------------------------------------------------------------------------

/// How parents are drawn.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// Parent uniform among the earlier joints (depth about ln n).
    Random,
    /// Parent among the 4 previous joints (depth about n / 2.5).
    Bushy,
    /// Parent the previous joint 97 % of the time, else one of the 8 previous (depth close
    /// to n).
    Chain,
}

const SHAPES: [Shape; 3] = [Shape::Random, Shape::Bushy, Shape::Chain];

/// Ranges of the random local transforms.
#[derive(Clone, Copy, Debug)]
struct TrsRange {
    /// Each translation component is uniform in `[-translation, translation]`.
    translation: f64,
    /// Scales are log-uniform in `[1 / scale, scale]`.
    scale: f64,
    /// One scale for all three axes (similarity transforms).
    uniform_scale: bool,
}

impl TrsRange {
    fn sample(&self, rng: &mut TestRng) -> Trsd {
        let s = self.scale;
        let scale = if self.uniform_scale {
            Vec3d::splat(log_uniform(rng, 1.0 / s, s))
        } else {
            Vec3d::new(log_uniform(rng, 1.0 / s, s), log_uniform(rng, 1.0 / s, s), log_uniform(rng, 1.0 / s, s))
        };
        Trsd { translation: in_box(rng, self.translation), rotation: unit_quat(rng), scale }
    }
}

/// A random parents-first hierarchy; joint 0 is a root, and other joints are roots with
/// probability `root_probability`.
fn random_parents(rng: &mut TestRng, n: usize, shape: Shape, root_probability: f64) -> Vec<i16> {
    (0..n)
        .map(|i| {
            if i == 0 || rng.gen::<f64>() < root_probability {
                return -1;
            }
            let p = match shape {
                Shape::Random => rng.gen_range(0..i),
                Shape::Bushy => rng.gen_range(i.saturating_sub(4)..i),
                Shape::Chain if rng.gen::<f64>() < 0.97 => i - 1,
                Shape::Chain => rng.gen_range(i.saturating_sub(8)..i),
            };
            p as i16
        })
        .collect()
}

/// A joint count log-uniform in `[1, max]`.
fn random_size(rng: &mut TestRng, max: usize) -> usize {
    (log_uniform(rng, 1.0, max as f64 + 1.0).floor() as usize).clamp(1, max)
}

fn depths(parents: &[i16]) -> Vec<usize> {
    let mut d = vec![0usize; parents.len()];
    for j in 0..parents.len() {
        if parents[j] >= 0 {
            d[j] = d[parents[j] as usize] + 1;
        }
    }
    d
}

/// Local transforms rounded to `R`, and the rounded values in `f64`.
fn round_transforms<R: ExactF64>(t: &[Trsd]) -> (Vec<Transform<R>>, Vec<Trsd>) {
    let r: Vec<Transform<R>> = t.iter().map(transform_from_f64).collect();
    let d = r.iter().map(transform_to_f64).collect();
    (r, d)
}

/// A matrix rounded to `R`, and the rounded value in `f64`.
fn round_matrix<R: ExactF64>(m: &Mat4d) -> (Mat4<R>, Mat4d) {
    let r = mat4_from_f64::<R>(m);
    (r, mat4_to_f64(&r))
}

/// A skeleton of the largest capacity (boxed: it is about 80 KiB).
fn build_skeleton<R: ExactF64>(parents: &[i16], rest: &[Transform<R>]) -> Box<Skeleton<R, MAX_SOA_JOINTS>> {
    let names = vec![""; parents.len()];
    Box::new(Skeleton::new(parents, rest, &names).unwrap())
}

/// sinew's model matrices for the local transforms `locals`.
fn run_local_to_model<R: ExactF64>(
    skeleton: &Skeleton<R, MAX_SOA_JOINTS>,
    locals: &[Transform<R>],
    root: Option<&Mat4<R>>,
) -> Vec<Mat4<R>> {
    let input = pack_soa(locals);
    let mut output = vec![Mat4::ZERO; locals.len()];
    LocalToModelJob { skeleton: skeleton.view(), root, input: &input, output: &mut output, from: None, to: None }
        .run()
        .unwrap();
    output
}

// -------------------------------------------------------------------------------------------------
// Local to model
// -------------------------------------------------------------------------------------------------

/// Hierarchies deeper than this use [`HierarchyConfig::deep`] transforms.
const SHALLOW_DEPTH: usize = 32;

/// One hierarchy suite: how many skeletons, how big, and the transform ranges.
struct HierarchyConfig {
    name: &'static str,
    seed: u64,
    /// Skeletons of random size (log-uniform in 1..=max_joints).
    skeletons: usize,
    /// Largest random size.
    max_joints: usize,
    /// Extra skeletons of exactly `full_joints` joints, cycling through the shapes.
    full_size: usize,
    full_joints: usize,
    /// Local transforms of hierarchies at most `SHALLOW_DEPTH` deep.
    shallow: TrsRange,
    /// Local transforms of deeper hierarchies (narrower scales keep products of hundreds of
    /// scales in a sane range).
    deep: TrsRange,
    /// Half extent of the root matrix's translation; scales as `shallow`.
    root_translation: f64,
}

/// Depth ranges (inclusive) over which model-matrix errors are reported separately: rounding
/// errors accumulate down a chain, so the bound depends on how deep a joint is.
const DEPTH_BUCKETS: [(usize, usize); 5] = [(0, 8), (9, 32), (33, 128), (129, 512), (513, MAX_JOINTS)];

fn bucket(depth: usize) -> usize {
    DEPTH_BUCKETS.iter().position(|&(lo, hi)| (lo..=hi).contains(&depth)).unwrap_or(DEPTH_BUCKETS.len() - 1)
}

/// Worst model-matrix errors per depth bucket.
#[derive(Default)]
struct ModelWorst {
    /// Largest entry error / chain magnitude.
    entries: [Worst; DEPTH_BUCKETS.len()],
    /// Largest axis-column error / `|parent| · |local axis|`.
    axes: [Worst; DEPTH_BUCKETS.len()],
    /// Joints compared per bucket.
    joints: [usize; DEPTH_BUCKETS.len()],
    /// Largest chain magnitude met (to show values stayed in range).
    largest: f64,
}

impl ModelWorst {
    /// Prints every bucket and asserts `bounds[b]` on both figures of bucket `b` (buckets with no
    /// joint are skipped).
    fn check(&self, what: &str, bounds: [f64; DEPTH_BUCKETS.len()]) {
        for (b, &(lo, hi)) in DEPTH_BUCKETS.iter().enumerate() {
            if self.joints[b] == 0 {
                eprintln!("  {what}, depth {lo}..={hi}: no joint");
                continue;
            }
            eprintln!("  {what}, depth {lo}..={hi}: {} joints", self.joints[b]);
            self.entries[b].check("    entry error / chain magnitude", bounds[b]);
            self.axes[b].check("    axis error / (|parent|·|local axis|)", bounds[b]);
        }
    }
}

/// Compares `got` (sinew) with `want` (reference) for the joints where `select` holds.
#[allow(clippy::too_many_arguments)]
fn compare_models<R: ExactF64>(
    got: &[Mat4<R>],
    want: &[Mat4d],
    parents: &[i16],
    locals: &[Trsd],
    depth: &[usize],
    root: Option<&Mat4d>,
    select: impl Fn(usize) -> bool,
    worst: &mut ModelWorst,
    label: &dyn Fn(usize) -> String,
) {
    let root_mag = root.map_or(1.0, |m| m.max_abs().max(1.0));
    let mut chain = vec![0.0f64; want.len()];
    for j in 0..want.len() {
        let up = if parents[j] >= 0 { chain[parents[j] as usize] } else { root_mag };
        chain[j] = up.max(want[j].max_abs());
        worst.largest = worst.largest.max(chain[j]);
        if !select(j) {
            continue;
        }
        let b = bucket(depth[j]);
        worst.joints[b] += 1;
        let g = mat4_to_f64(&got[j]);
        let mut e = 0.0f64;
        for c in 0..4 {
            for r in 0..4 {
                e = e.max((g.cols[c][r] - want[j].cols[c][r]).abs());
            }
        }
        worst.entries[b].update(e / chain[j], || label(j));
        // Axis c of the model matrix is parent · (local axis c): relative to the sum of the
        // absolute values of the terms, `|parent| · |local axis c|`.
        let parent = if parents[j] >= 0 { want[parents[j] as usize] } else { root.copied().unwrap_or(Mat4d::IDENTITY) };
        let local = locals[j].to_matrix();
        for c in 0..3 {
            let terms = Vec3d::new(
                (0..3).map(|k| (parent.at(0, k) * local.at(k, c)).abs()).sum(),
                (0..3).map(|k| (parent.at(1, k) * local.at(k, c)).abs()).sum(),
                (0..3).map(|k| (parent.at(2, k) * local.at(k, c)).abs()).sum(),
            );
            let rel = (g.axis(c) - want[j].axis(c)).length() / terms.length();
            worst.axes[b].update(rel, || format!("{} axis {c}", label(j)));
        }
    }
}

/// Worst errors of a hierarchy suite.
#[derive(Default)]
struct HierarchyWorst {
    /// Full updates.
    full: ModelWorst,
    /// The same hierarchies evaluated naively in the same scalar type, one AoS product
    /// `model[parent] * local.to_mat4()` per joint: the errors `R` itself commits.
    naive: ModelWorst,
    /// Partial (`from`/`to`) updates, over the joints they recompute.
    partial: ModelWorst,
}

fn hierarchy_suite<R: ExactF64>(cfg: &HierarchyConfig) -> HierarchyWorst {
    let mut rng = rng(cfg.seed);
    let mut w = HierarchyWorst::default();
    let mut deepest = 0;
    for case in 0..cfg.skeletons + cfg.full_size {
        let (n, shape) = if case < cfg.skeletons {
            (random_size(&mut rng, cfg.max_joints), SHAPES[rng.gen_range(0..SHAPES.len())])
        } else {
            (cfg.full_joints, SHAPES[case % SHAPES.len()])
        };
        let root_probability = [0.0, 0.01, 0.1][rng.gen_range(0..3)];
        let parents = random_parents(&mut rng, n, shape, root_probability);
        let depth = depths(&parents);
        let deepest_here = depth.iter().copied().max().unwrap_or(0);
        deepest = deepest.max(deepest_here);
        let range = if deepest_here <= SHALLOW_DEPTH { cfg.shallow } else { cfg.deep };
        let locals: Vec<Trsd> = (0..n).map(|_| range.sample(&mut rng)).collect();
        let (locals_r, locals_d) = round_transforms::<R>(&locals);
        let root = (rng.gen::<f64>() < 0.5).then(|| {
            let t = TrsRange { translation: cfg.root_translation, ..cfg.shallow };
            round_matrix::<R>(&t.sample(&mut rng).to_matrix())
        });
        let (root_r, root_d) = (root.as_ref().map(|r| &r.0), root.as_ref().map(|r| &r.1));

        let skeleton = build_skeleton(&parents, &locals_r);
        let got = run_local_to_model(&skeleton, &locals_r, root_r);
        let want = reference::local_to_model(&parents, &locals_d, root_d).unwrap();
        let label = |j: usize| format!("case {case} ({shape:?}, {n} joints) joint {j} depth {}", depth[j]);
        compare_models(&got, &want, &parents, &locals_d, &depth, root_d, |_| true, &mut w.full, &label);
        let mut naive: Vec<Mat4<R>> = Vec::with_capacity(n);
        for j in 0..n {
            let parent =
                if parents[j] >= 0 { naive[parents[j] as usize] } else { root_r.copied().unwrap_or(Mat4::IDENTITY) };
            naive.push(parent * locals_r[j].to_mat4());
        }
        compare_models(&naive, &want, &parents, &locals_d, &depth, root_d, |_| true, &mut w.naive, &label);

        // Every fourth skeleton: a partial update of a random subtree with a new pose.
        if case % 4 == 0 {
            let from = rng.gen_range(0..n);
            let to = (rng.gen::<f64>() < 0.5).then(|| rng.gen_range(from..n));
            let new_locals: Vec<Trsd> = (0..n).map(|_| range.sample(&mut rng)).collect();
            let (new_r, new_d) = round_transforms::<R>(&new_locals);
            let input = pack_soa(&new_r);
            let mut got_partial = got.clone();
            LocalToModelJob {
                skeleton: skeleton.view(),
                root: root_r,
                input: &input,
                output: &mut got_partial,
                from: Some(from),
                to,
            }
            .run()
            .unwrap();
            let mut want_partial = want.clone();
            reference::local_to_model_range(&parents, &new_d, root_d, Some(from), to, &mut want_partial).unwrap();
            let last = to.unwrap_or(n - 1);
            let updated = |j: usize| j <= last && reference::is_in_subtree(&parents, j, from).unwrap();
            for j in 0..n {
                if !updated(j) {
                    assert_eq!(got_partial[j], got[j], "case {case}: joint {j} outside from={from} to={to:?} changed");
                }
            }
            let label = |j: usize| format!("{} (partial from {from} to {to:?})", label(j));
            compare_models(
                &got_partial,
                &want_partial,
                &parents,
                &new_d,
                &depth,
                root_d,
                updated,
                &mut w.partial,
                &label,
            );
        }
    }
    eprintln!(
        "{}: {} skeletons, deepest joint at depth {deepest}, largest chain magnitude {:.1}",
        cfg.name,
        cfg.skeletons + cfg.full_size,
        w.full.largest
    );
    w
}

impl HierarchyWorst {
    /// Prints and checks every figure: full and partial updates against `bounds` (per depth
    /// bucket), and full updates against at most `1.5 ×` the naive evaluation's error plus
    /// `slack` (sinew must not lose precision compared to the plain product).
    fn check(&self, bounds: [f64; DEPTH_BUCKETS.len()], slack: f64) {
        self.naive.check("naive AoS evaluation (for comparison)", [f64::INFINITY; DEPTH_BUCKETS.len()]);
        self.full.check("full update", bounds);
        self.partial.check("partial update", bounds);
        for b in 0..DEPTH_BUCKETS.len() {
            for (got, naive) in
                [(&self.full.entries[b], &self.naive.entries[b]), (&self.full.axes[b], &self.naive.axes[b])]
            {
                assert!(
                    got.value <= 1.5 * naive.value + slack,
                    "depth bucket {b}: error {:e} is well above the naive evaluation's {:e}",
                    got.value,
                    naive.value
                );
            }
        }
    }
}

#[test]
fn f32_local_to_model_matches_reference() {
    let cfg = HierarchyConfig {
        name: "f32 local-to-model",
        seed: 0x5EED_0001,
        skeletons: 2000,
        max_joints: MAX_JOINTS,
        full_size: 9,
        full_joints: MAX_JOINTS,
        shallow: TrsRange { translation: 1.0, scale: 2.0, uniform_scale: false },
        deep: TrsRange { translation: 1.0, scale: 1.1, uniform_scale: false },
        root_translation: 10.0,
    };
    let w = hierarchy_suite::<f32>(&cfg);
    // Rounding errors accumulate with depth (hierarchies deeper than 32 use scales within
    // [1/1.1, 1.1], so values stay below a few thousand).
    assert!(w.full.largest < 1.0e5, "values grew to {}", w.full.largest);
    w.check([2.0e-6, 8.0e-6, 8.0e-6, 1.0e-5, 5.0e-5], 1.0e-7);
}

#[test]
fn q16_local_to_model_matches_reference() {
    let cfg = HierarchyConfig {
        name: "Q16 local-to-model",
        seed: 0x5EED_0002,
        skeletons: 2000,
        max_joints: 128,
        full_size: 9,
        full_joints: MAX_JOINTS,
        shallow: TrsRange { translation: 0.5, scale: 1.25, uniform_scale: false },
        deep: TrsRange { translation: 0.5, scale: 1.05, uniform_scale: false },
        root_translation: 4.0,
    };
    let w = hierarchy_suite::<Q16>(&cfg);
    // Random skeletons of at most 128 joints, plus 9 of 1024 (chains reach depth 900); values
    // stay far from the ±32768 range.
    assert!(w.full.largest < 1000.0, "values grew to {}", w.full.largest);
    w.check([3.0e-4, 5.0e-4, 8.0e-4, 1.5e-3, 2.0e-3], 3.0e-5);
}

// -------------------------------------------------------------------------------------------------
// Skinning
// -------------------------------------------------------------------------------------------------

/// Which palette and skinning method a suite runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    /// `SkinMatrixJob` + `SkinningJob` with `Palette::Matrices`.
    Linear,
    /// `SkinDualQuatJob` + `SkinningJob` with `Palette::DualQuats`.
    DualQuat,
}

/// One skinning suite.
struct SkinConfig {
    name: &'static str,
    seed: u64,
    method: Method,
    /// Meshes, each on its own random skeleton of log-uniform size in 1..=max_joints.
    meshes: usize,
    max_joints: usize,
    vertices: usize,
    /// Bind-pose local transforms of hierarchies at most `SHALLOW_DEPTH` deep, and of deeper
    /// ones. Dual-quaternion suites use uniform scales, so that every skin matrix is a rotation
    /// times a scale and "its rotation" is well defined.
    shallow: TrsRange,
    deep: TrsRange,
    /// The animated pose rotates each joint by up to this angle (radians) from the bind pose...
    pose_angle: f64,
    /// ... multiplies its scale by a factor log-uniform in [1/pose_scale, pose_scale]
    /// (`deep_pose_scale` in hierarchies deeper than `SHALLOW_DEPTH`)...
    pose_scale: f64,
    deep_pose_scale: f64,
    /// ... and moves it by up to this much per axis.
    pose_translation: f64,
    /// Vertices lie within this half extent of their first joint's bind position.
    vertex_offset: f64,
    /// Half extent of the root matrix's translation.
    root_translation: f64,
    /// Dual quaternions only: an influence whose palette rotation has |dot| below this with the
    /// vertex's first influence is replaced (its hemisphere, hence the blend, would depend on
    /// rounding).
    min_abs_dot: f64,
}

#[derive(Default)]
struct SkinWorst {
    /// Matrices: entry error / palette magnitude. Dual quaternions: real-part error (sign
    /// aligned).
    palette: Worst,
    /// Dual quaternions: translation error / palette magnitude.
    palette_translation: Worst,
    /// Position error / (max(1, |p|) · palette magnitude).
    positions: Worst,
    /// Normal and tangent errors (divided by the palette magnitude for matrices).
    normals: Worst,
    tangents: Worst,
    /// Vertices compared, largest skinned coordinate.
    vertices: usize,
    largest: f64,
}

/// The largest entry of `|a| · |b|` (entry-wise absolute values), at least 1: the size of the
/// terms a product's entries are sums of.
fn product_magnitude(a: &Mat4d, b: &Mat4d) -> f64 {
    let mut m = 1.0f64;
    for r in 0..4 {
        for c in 0..4 {
            m = m.max((0..4).map(|k| (a.at(r, k) * b.at(k, c)).abs()).sum());
        }
    }
    m
}

fn max_abs_diff(a: Vec3d, b: Vec3d) -> f64 {
    (a - b).max_abs()
}

fn skinning_suite<R: ExactF64>(cfg: &SkinConfig) -> SkinWorst {
    let mut rng = rng(cfg.seed);
    let mut w = SkinWorst::default();
    for mesh in 0..cfg.meshes {
        // Skeleton, bind pose and inverse bind matrices.
        let n = random_size(&mut rng, cfg.max_joints);
        let shape = SHAPES[rng.gen_range(0..SHAPES.len())];
        let root_probability = [0.0, 0.01, 0.1][rng.gen_range(0..3)];
        let parents = random_parents(&mut rng, n, shape, root_probability);
        let deepest = depths(&parents).into_iter().max().unwrap_or(0);
        let (range, pose_scale) =
            if deepest <= SHALLOW_DEPTH { (cfg.shallow, cfg.pose_scale) } else { (cfg.deep, cfg.deep_pose_scale) };
        let bind: Vec<Trsd> = (0..n).map(|_| range.sample(&mut rng)).collect();
        let bind_model = reference::local_to_model(&parents, &bind, None).unwrap();
        let inverse_bind_all: Vec<(Mat4<R>, Mat4d)> =
            bind_model.iter().map(|m| round_matrix::<R>(&m.inverse().unwrap())).collect();

        // Skin joints: all joints in order, or a random subset in random order.
        let joints: Option<Vec<u16>> = (rng.gen::<f64>() < 0.5).then(|| {
            let mut all: Vec<u16> = (0..n as u16).collect();
            all.shuffle(&mut rng);
            all.truncate(rng.gen_range(1..=n));
            all
        });
        let skeleton_joint = |i: usize| joints.as_ref().map_or(i, |j| j[i] as usize);
        let palette_len = joints.as_ref().map_or(n, Vec::len);
        let ib_r: Vec<Mat4<R>> = (0..palette_len).map(|i| inverse_bind_all[skeleton_joint(i)].0).collect();
        let ib_d: Vec<Mat4d> = (0..palette_len).map(|i| inverse_bind_all[skeleton_joint(i)].1).collect();

        // The animated pose: the bind pose moved a little.
        let pose: Vec<Trsd> = bind
            .iter()
            .map(|b| {
                let f = |rng: &mut TestRng| log_uniform(rng, 1.0 / pose_scale, pose_scale);
                let scale = if range.uniform_scale {
                    b.scale * f(&mut rng)
                } else {
                    Vec3d::new(b.scale.x * f(&mut rng), b.scale.y * f(&mut rng), b.scale.z * f(&mut rng))
                };
                Trsd {
                    translation: b.translation + in_box(&mut rng, cfg.pose_translation),
                    rotation: b.rotation * small_rotation(&mut rng, cfg.pose_angle),
                    scale,
                }
            })
            .collect();
        let (pose_r, pose_d) = round_transforms::<R>(&pose);
        let root = (rng.gen::<f64>() < 0.5).then(|| {
            let t = TrsRange { translation: cfg.root_translation, ..range };
            round_matrix::<R>(&t.sample(&mut rng).to_matrix())
        });
        let (root_r, root_d) = (root.as_ref().map(|r| &r.0), root.as_ref().map(|r| &r.1));

        // Model matrices and palettes.
        let skeleton = build_skeleton(&parents, &pose_r);
        let model_r = run_local_to_model(&skeleton, &pose_r, root_r);
        let model_d = reference::local_to_model(&parents, &pose_d, root_d).unwrap();
        let magnitude: Vec<f64> =
            (0..palette_len).map(|i| product_magnitude(&model_d[skeleton_joint(i)], &ib_d[i])).collect();
        let joints_slice = joints.as_deref();
        let label =
            |what: &str, i: usize| format!("mesh {mesh} ({shape:?}, {n} joints, palette {palette_len}) {what} {i}");

        let mut mat_palette: Vec<Mat4<R>> = Vec::new();
        let mut dq_palette: Vec<DualQuat<R>> = Vec::new();
        let mut ref_mat_palette: Vec<Mat4d> = Vec::new();
        let mut ref_dq_palette: Vec<DualQuatd> = Vec::new();
        match cfg.method {
            Method::Linear => {
                mat_palette = vec![Mat4::ZERO; palette_len];
                SkinMatrixJob { model: &model_r, inverse_bind: &ib_r, joints: joints_slice, output: &mut mat_palette }
                    .run()
                    .unwrap();
                ref_mat_palette = reference::skin_matrices(&model_d, &ib_d, joints_slice).unwrap();
                for i in 0..palette_len {
                    let g = mat4_to_f64(&mat_palette[i]);
                    let mut e = 0.0f64;
                    for c in 0..4 {
                        for r in 0..4 {
                            e = e.max((g.cols[c][r] - ref_mat_palette[i].cols[c][r]).abs());
                        }
                    }
                    w.palette.update(e / magnitude[i], || label("skin joint", i));
                }
            }
            Method::DualQuat => {
                dq_palette = vec![DualQuat::IDENTITY; palette_len];
                SkinDualQuatJob {
                    model: &model_r,
                    inverse_bind: &ib_r,
                    joints: joints_slice,
                    output: &mut dq_palette,
                    scales: None,
                }
                .run()
                .unwrap();
                ref_dq_palette = reference::skin_dual_quats(&model_d, &ib_d, joints_slice).unwrap();
                for i in 0..palette_len {
                    let g = dual_quat_to_f64(&dq_palette[i]);
                    let e = ref_dq_palette[i];
                    let real = if g.real.dot(e.real) < 0.0 { -g.real } else { g.real };
                    w.palette.update((real - e.real).length(), || label("skin joint", i));
                    let t = max_abs_diff(g.translation(), e.translation());
                    w.palette_translation.update(t / magnitude[i], || label("skin joint", i));
                }
            }
        }

        // The mesh.
        let k = rng.gen_range(1..=MAX_INFLUENCES);
        let v_count = cfg.vertices;
        let mut indices = Vec::with_capacity(v_count * k);
        let mut weights_d = Vec::with_capacity(v_count * k);
        let mut positions_d = Vec::with_capacity(v_count);
        let mut normals_d = Vec::with_capacity(v_count);
        let mut tangents_d = Vec::with_capacity(v_count);
        for _ in 0..v_count {
            let first = rng.gen_range(0..palette_len);
            indices.push(first as u16);
            for _ in 1..k {
                let mut pick = first;
                for _ in 0..16 {
                    let i = rng.gen_range(0..palette_len);
                    let clear_hemisphere = cfg.method == Method::Linear
                        || ref_dq_palette[first].real.dot(ref_dq_palette[i].real).abs() >= cfg.min_abs_dot;
                    if clear_hemisphere {
                        pick = i;
                        break;
                    }
                }
                indices.push(pick as u16);
            }
            let raw: Vec<f64> = (0..k)
                .map(|i| if i > 0 && rng.gen::<f64>() < 0.2 { 0.0 } else { uniform(&mut rng, 0.05, 1.0) })
                .collect();
            let sum: f64 = raw.iter().sum();
            weights_d.extend(raw.iter().map(|x| x / sum));
            let anchor = bind_model[skeleton_joint(first)].translation();
            positions_d.push(anchor + in_box(&mut rng, cfg.vertex_offset));
            normals_d.push(unit_vec3(&mut rng));
            let t = unit_vec3(&mut rng);
            tangents_d.push(Vec4d::new(t.x, t.y, t.z, if rng.gen::<bool>() { 1.0 } else { -1.0 }));
        }
        let weights_r: Vec<R> = weights_d.iter().map(|&x| real_from_f64(x)).collect();
        let positions_r: Vec<Vec3<R>> = positions_d.iter().map(|&p| vec3_from_f64(p)).collect();
        let normals_r: Vec<Vec3<R>> = normals_d.iter().map(|&p| vec3_from_f64(p)).collect();
        let tangents_r: Vec<Vec4<R>> = tangents_d.iter().map(|&t| vec4_from_f64(t)).collect();
        // The reference sees the rounded inputs.
        let weights_d: Vec<f64> = weights_r.iter().map(|&x| real_to_f64(x)).collect();
        let positions_d: Vec<Vec3d> = positions_r.iter().map(|&p| vec3_to_f64(p)).collect();
        let normals_d: Vec<Vec3d> = normals_r.iter().map(|&p| vec3_to_f64(p)).collect();
        let tangents_d: Vec<Vec4d> = tangents_r.iter().map(|&t| vec4_to_f64(t)).collect();

        let mut out_p = vec![Vec3::ZERO; v_count];
        let mut out_n = vec![Vec3::ZERO; v_count];
        let mut out_t = vec![Vec4::ZERO; v_count];
        let palette = match cfg.method {
            Method::Linear => Palette::Matrices(&mat_palette),
            Method::DualQuat => Palette::DualQuats(&dq_palette),
        };
        SkinningJob {
            palette,
            influences: k,
            joint_indices: &indices,
            joint_weights: &weights_r,
            positions: &positions_r,
            normals: Some(&normals_r),
            tangents: Some(&tangents_r),
            out_positions: &mut out_p,
            out_normals: Some(&mut out_n),
            out_tangents: Some(&mut out_t),
        }
        .run()
        .unwrap();
        let input = SkinInput {
            influences: k,
            joints: &indices,
            weights: &weights_d,
            positions: &positions_d,
            normals: Some(&normals_d),
            tangents: Some(&tangents_d),
        };
        let want = match cfg.method {
            Method::Linear => reference::skin_linear(&ref_mat_palette, &input),
            Method::DualQuat => reference::skin_dual_quat(&ref_dq_palette, &input),
        }
        .unwrap();
        let (want_n, want_t) = (want.normals.unwrap_or_default(), want.tangents.unwrap_or_default());

        for v in 0..v_count {
            let m = indices[v * k..(v + 1) * k].iter().map(|&i| magnitude[i as usize]).fold(1.0, f64::max);
            let p_scale = positions_d[v].max_abs().max(1.0) * m;
            // LBS renormalizes: an error of the blended vector grows by the magnitude over the
            // blended vector's length before normalization.
            let shrink = |d: Vec3d| -> f64 {
                if cfg.method != Method::Linear {
                    return 1.0;
                }
                let blended = (v * k..(v + 1) * k).fold(Vec3d::ZERO, |acc, i| {
                    acc + ref_mat_palette[indices[i] as usize].transform_vector(d) * weights_d[i]
                });
                m / blended.length().max(1e-3)
            };
            let at = || format!("{} ({k} influences)", label("vertex", v));
            w.positions.update(max_abs_diff(vec3_to_f64(out_p[v]), want.positions[v]) / p_scale, at);
            w.normals.update(max_abs_diff(vec3_to_f64(out_n[v]), want_n[v]) / shrink(normals_d[v]), at);
            let t = vec4_to_f64(out_t[v]);
            w.tangents.update(max_abs_diff(t.xyz(), want_t[v].xyz()) / shrink(tangents_d[v].xyz()), at);
            assert_eq!(t.w, tangents_d[v].w, "{}: tangent handedness changed", at());
            w.largest = w.largest.max(want.positions[v].max_abs());
        }
        w.vertices += v_count;
    }
    eprintln!(
        "{}: {} meshes, {} vertices, largest skinned coordinate {:.1}",
        cfg.name, cfg.meshes, w.vertices, w.largest
    );
    w
}

impl SkinWorst {
    /// Prints and checks every figure against its bound: (palette, palette translation,
    /// positions, normals and tangents).
    fn check(&self, palette: f64, palette_translation: f64, positions: f64, vectors: f64) {
        self.palette.check("palette error", palette);
        if palette_translation.is_finite() {
            self.palette_translation.check("palette translation error / magnitude", palette_translation);
        }
        self.positions.check("position error / (max(1, |p|) · magnitude)", positions);
        self.normals.check("normal error", vectors);
        self.tangents.check("tangent error", vectors);
    }
}

const F32_SHALLOW: TrsRange = TrsRange { translation: 1.0, scale: 2.0, uniform_scale: false };
const F32_DEEP: TrsRange = TrsRange { translation: 1.0, scale: 1.1, uniform_scale: false };
const Q16_SHALLOW: TrsRange = TrsRange { translation: 0.5, scale: 1.25, uniform_scale: false };
const Q16_DEEP: TrsRange = TrsRange { translation: 0.5, scale: 1.05, uniform_scale: false };

fn uniform_scale(r: TrsRange) -> TrsRange {
    TrsRange { uniform_scale: true, ..r }
}

fn f32_skin_config(method: Method) -> SkinConfig {
    let dq = method == Method::DualQuat;
    SkinConfig {
        name: if dq { "f32 dual-quaternion skinning" } else { "f32 linear-blend skinning" },
        seed: if dq { 0x5EED_0004 } else { 0x5EED_0003 },
        method,
        meshes: 1000,
        max_joints: MAX_JOINTS,
        vertices: 200,
        shallow: if dq { uniform_scale(F32_SHALLOW) } else { F32_SHALLOW },
        deep: if dq { uniform_scale(F32_DEEP) } else { F32_DEEP },
        pose_angle: 1.0,
        pose_scale: 1.25,
        deep_pose_scale: 1.02,
        pose_translation: 0.2,
        vertex_offset: 1.0,
        root_translation: 10.0,
        min_abs_dot: 1.0e-3,
    }
}

fn q16_skin_config(method: Method) -> SkinConfig {
    let dq = method == Method::DualQuat;
    SkinConfig {
        name: if dq { "Q16 dual-quaternion skinning" } else { "Q16 linear-blend skinning" },
        seed: if dq { 0x5EED_0006 } else { 0x5EED_0005 },
        method,
        meshes: 1000,
        max_joints: 64,
        vertices: 100,
        shallow: if dq { uniform_scale(Q16_SHALLOW) } else { Q16_SHALLOW },
        deep: if dq { uniform_scale(Q16_DEEP) } else { Q16_DEEP },
        pose_angle: 1.0,
        pose_scale: 1.1,
        deep_pose_scale: 1.02,
        pose_translation: 0.1,
        vertex_offset: 0.5,
        root_translation: 2.0,
        min_abs_dot: 2.0e-2,
    }
}

#[test]
fn f32_linear_blend_skinning_matches_reference() {
    let w = skinning_suite::<f32>(&f32_skin_config(Method::Linear));
    w.check(1.0e-5, f64::INFINITY, 3.0e-6, 5.0e-6);
}

#[test]
fn f32_dual_quaternion_skinning_matches_reference() {
    let w = skinning_suite::<f32>(&f32_skin_config(Method::DualQuat));
    w.check(4.0e-6, 1.5e-5, 3.0e-6, 6.0e-6);
}

#[test]
fn q16_linear_blend_skinning_matches_reference() {
    let w = skinning_suite::<Q16>(&q16_skin_config(Method::Linear));
    assert!(w.largest < 100.0, "values grew to {}", w.largest);
    w.check(5.0e-4, f64::INFINITY, 3.0e-4, 3.0e-4);
}

#[test]
fn q16_dual_quaternion_skinning_matches_reference() {
    let w = skinning_suite::<Q16>(&q16_skin_config(Method::DualQuat));
    assert!(w.largest < 100.0, "values grew to {}", w.largest);
    w.check(3.0e-4, 5.0e-4, 5.0e-4, 5.0e-4);
}
