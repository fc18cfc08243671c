//! `sinew dump --ik`, `--ground` and `--leg` as a user runs them on the shared models: a chain
//! solved by FABRIK or CCD puts its end joint's `joint_world` translation within the tolerance
//! of a reachable target (a hand or a foot moved by turning its elbow or knee, computed here
//! from the dump without `--ik`), leaves the joints outside the chain's subtree where they were
//! and every bone's length as it was; foot placement on a ground 10 cm up raises both ankles of
//! a standing pose by 10 cm, with the legs found by name or given; and every bad spec exits 2
//! with one line naming the problem.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;
use sinew_offline::bake::BakeOptions;
use sinew_offline::model::Model;

fn gltf(model: &str) -> PathBuf {
    sinew_assets::path(&format!("gltf/{model}/{model}.glb"))
}

fn cmu_source() -> PathBuf {
    sinew_assets::path("bvh/cmu/01_01.bvh")
}

/// CMU's `01_01.bvh` baked once for all the tests (a `.sinew` file loads without the import
/// and the bake that every run on the `.bvh` repeats; its dump is the source's, as cli.rs
/// checks).
fn cmu() -> PathBuf {
    static BAKED: OnceLock<PathBuf> = OnceLock::new();
    BAKED
        .get_or_init(|| {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sinew-cli-ik");
            std::fs::create_dir_all(&dir).expect("scratch dir");
            let baked = dir.join("01_01.sinew");
            let out = sinew(&["bake", p(&cmu_source()), "-o", p(&baked)]);
            assert_eq!(out.status.code(), Some(0), "bake 01_01.bvh: {}", text(&out.stderr));
            baked
        })
        .clone()
}

fn p(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

fn sinew(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sinew")).args(args).output().expect("sinew runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A dump's joints: names and `joint_world` matrices (column-major, f64).
struct Dump {
    names: Vec<String>,
    world: Vec<Vec<f64>>,
}

impl Dump {
    fn run(args: &[&str]) -> Dump {
        let out = sinew(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let names =
            v["joints"].as_array().expect("joints").iter().map(|n| n.as_str().unwrap_or("").to_owned()).collect();
        let world = v["joint_world"]
            .as_array()
            .expect("joint_world")
            .iter()
            .map(|m| m.as_array().expect("matrix").iter().map(|x| x.as_f64().expect("number")).collect())
            .collect();
        Dump { names, world }
    }
    fn index(&self, name: &str) -> usize {
        self.names.iter().position(|n| n == name).unwrap_or_else(|| panic!("no joint {name}"))
    }
    fn pos(&self, joint: usize) -> [f64; 3] {
        let m = &self.world[joint];
        [m[12], m[13], m[14]]
    }
    fn at(&self, name: &str) -> [f64; 3] {
        self.pos(self.index(name))
    }
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn scale(a: [f64; 3], s: f64) -> [f64; 3] {
    [a[0] * s, a[1] * s, a[2] * s]
}

fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    dot(sub(a, b), sub(a, b)).sqrt()
}

/// `v` turned by `angle` radians about the unit `axis` (Rodrigues).
fn rotate(v: [f64; 3], axis: [f64; 3], angle: f64) -> [f64; 3] {
    let (s, c) = angle.sin_cos();
    add(add(scale(v, c), scale(cross(axis, v), s)), scale(axis, dot(axis, v) * (1.0 - c)))
}

/// A unit vector perpendicular to `v`: the normal of the plane of `v` and `hint`, or of `v` and
/// a coordinate axis when they are parallel.
fn perpendicular(v: [f64; 3], hint: [f64; 3]) -> [f64; 3] {
    for w in [hint, [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]] {
        let c = cross(v, w);
        let n = dot(c, c).sqrt();
        if n > 1e-3 * dot(v, v).sqrt() * dot(w, w).sqrt() {
            return scale(c, 1.0 / n);
        }
    }
    unreachable!("no axis perpendicular to {v:?}")
}

/// The joints' parents, read from the model's skeleton.
fn parents(model: &Path) -> Vec<Option<usize>> {
    let m = Model::load(model, None, &BakeOptions::default()).expect("the model loads");
    m.skeleton().parents().iter().map(|&p| usize::try_from(p).ok()).collect()
}

fn in_subtree(parents: &[Option<usize>], mut joint: usize, root: usize) -> bool {
    loop {
        if joint == root {
            return true;
        }
        match parents.get(joint).copied().flatten() {
            Some(p) => joint = p,
            None => return false,
        }
    }
}

fn fmt(v: [f64; 3]) -> String {
    format!("{},{},{}", v[0], v[1], v[2])
}

/// Runs `base` (a dump command line) with `--ik SOLVER,FROM,TO,target[,tail]`, the target
/// being the end joint of the dump of `base` turned by `angle` about the middle joint `mid`
/// (a reachable point: the joints above `mid` stay, and `mid`-to-end keeps its length). Checks
/// the end within `tolerance` of it, the joints outside the subtree of FROM unchanged and every
/// bone's length kept. Returns the distance.
#[allow(clippy::too_many_arguments)]
fn check_reach(
    what: &str,
    model: &Path,
    base: &[&str],
    solver: &str,
    (from, mid, to): (&str, &str, &str),
    angle: f64,
    tail: &str,
    tolerance: f64,
) -> f64 {
    let before = Dump::run(base);
    let (s, e, h) = (before.at(from), before.at(mid), before.at(to));
    let axis = perpendicular(sub(h, e), cross(sub(e, s), sub(h, e)));
    let target = add(e, rotate(sub(h, e), axis, angle));
    // The target is away from where the end was: the chain has to move.
    assert!(dist(target, h) > 0.2 * dist(h, e), "{what}: the target is too near the start");
    let spec = format!("{solver},{from},{to},{}{tail}", fmt(target));
    let mut args = base.to_vec();
    args.extend(["--ik", &spec]);
    let after = Dump::run(&args);
    assert_eq!(after.names, before.names);
    // The end joint within the tolerance (and the f32 rounding of the model matrices).
    let reached = dist(after.at(to), target);
    let scale_of = dot(h, h).sqrt().max(1.0);
    assert!(reached <= tolerance + 2e-6 * scale_of, "{what}: {to} is {reached} from the target ({tolerance} asked)");
    let parents = parents(model);
    let root = before.index(from);
    let size = dist(s, h).max(dist(e, h));
    for (j, parent) in parents.iter().enumerate() {
        let name = &before.names[j];
        if !in_subtree(&parents, j, root) {
            let (a, b) = (&before.world[j], &after.world[j]);
            let moved = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
            assert!(moved <= 1e-6 * scale_of, "{what}: {name} outside the chain moved by {moved}");
        }
        if let Some(p) = *parent {
            let (l0, l1) = (dist(before.pos(j), before.pos(p)), dist(after.pos(j), after.pos(p)));
            assert!((l0 - l1).abs() <= 1e-5 * size, "{what}: the bone to {name} was {l0} long, is {l1}");
        }
    }
    // The chain's start stays (its parent does not move), its end moved.
    assert!(dist(after.at(from), s) <= 1e-6 * scale_of, "{what}: {from} moved");
    assert!(dist(after.at(to), h) > 0.1 * dist(h, e), "{what}: {to} did not move");
    eprintln!("cli ik {what}: {spec} → {to} {reached:.2e} from the target");
    reached
}

#[test]
fn fabrik_and_ccd_reach_a_bent_arm() {
    let cmu = cmu();
    let figure = gltf("RiggedFigure");
    for solver in ["fabrik", "ccd"] {
        // CMU's left arm at 2 s of its clip (Mixamo's limb names), elbow bent 50° more, with the
        // default iterations and tolerance.
        let base = ["dump", p(&cmu), "--time", "2"];
        let arm = ("LeftArm", "LeftForeArm", "LeftHand");
        check_reach(&format!("{solver} CMU left arm"), &cmu, &base, solver, arm, 0.9, "", 1e-4);
        // The right arm with more iterations and a tighter tolerance given.
        let arm = ("RightArm", "RightForeArm", "RightHand");
        check_reach(&format!("{solver} CMU right arm"), &cmu, &base, solver, arm, -0.6, ",200,2e-5", 2e-5);
        // RiggedFigure's left arm in its first frame; the scene nodes above its skeleton
        // (`Z_UP`, `Armature`) are in `joint_world`, and so in the target's space.
        let base = ["dump", p(&figure), "--time", "0"];
        let arm = ("arm_joint_L_1", "arm_joint_L_2", "arm_joint_L_3");
        check_reach(&format!("{solver} RiggedFigure left arm"), &figure, &base, solver, arm, 0.7, ",100", 1e-4);
    }
}

#[test]
fn a_longer_chain_and_chains_in_order() {
    // Spine to hand: five joints, the target the hand with its elbow turned.
    let cmu = cmu();
    let base = ["dump", p(&cmu), "--time", "1"];
    check_reach("fabrik CMU spine to hand", &cmu, &base, "fabrik", ("Spine", "LeftForeArm", "LeftHand"), 0.8, "", 1e-4);
    check_reach("ccd CMU spine to hand", &cmu, &base, "ccd", ("Spine", "LeftForeArm", "LeftHand"), 0.8, ",100", 1e-4);
    // Two chains: each end reaches its target (the second, on the other arm, keeps the first's).
    let before = Dump::run(&base);
    let left = add(
        before.at("LeftForeArm"),
        rotate(sub(before.at("LeftHand"), before.at("LeftForeArm")), [0.0, 1.0, 0.0], 0.5),
    );
    let right = add(
        before.at("RightForeArm"),
        rotate(sub(before.at("RightHand"), before.at("RightForeArm")), [0.0, 1.0, 0.0], -0.5),
    );
    let (a, b) =
        (format!("fabrik,LeftArm,LeftHand,{}", fmt(left)), format!("ccd,RightArm,RightHand,{},100", fmt(right)));
    let mut args = base.to_vec();
    args.extend(["--ik", &a, "--ik", &b]);
    let after = Dump::run(&args);
    for (joint, target) in [("LeftHand", left), ("RightHand", right)] {
        let d = dist(after.at(joint), target);
        assert!(d <= 1e-4 + 2e-6, "{joint} is {d} from its target");
    }
}

/// The minimal Fox graph of core/docs/graphs.md, written to a scratch file of one test.
fn scratch_graph(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sinew-cli-ik");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let graph = dir.join(format!("fox_graph-{test}.json"));
    std::fs::write(&graph, include_str!("../offline/tests/data/fox_graph.json")).expect("graph file");
    graph
}

#[test]
fn ik_on_the_graph_and_retarget_paths() {
    // Fox driven by the minimal graph (centimeter-sized units: the tolerance in them too).
    let fox = gltf("Fox");
    let graph = scratch_graph("paths");
    let base = ["dump", p(&fox), "--graph", p(&graph), "--set", "speed=2@0.5", "--time", "1"];
    let leg = ("b_LeftLeg01_015", "b_LeftLeg02_016", "b_LeftFoot01_017");
    for solver in ["fabrik", "ccd"] {
        check_reach(&format!("{solver} Fox graph"), &fox, &base, solver, leg, 0.5, ",100,0.01", 0.01);
    }
    // RiggedFigure in CMU's pose.
    let figure = gltf("RiggedFigure");
    let cmu = cmu();
    let map = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/riggedfigure-from-cmu.map");
    let base = ["dump", p(&figure), "--retarget-from", p(&cmu), "--map", p(&map), "--time", "3"];
    let arm = ("arm_joint_R_1", "arm_joint_R_2", "arm_joint_R_3");
    check_reach("fabrik RiggedFigure retargeted", &figure, &base, "fabrik", arm, 0.6, "", 1e-4);
}

/// The ankles' height (y) in a dump.
fn ankle_heights(d: &Dump, ankles: [&str; 2]) -> [f64; 2] {
    ankles.map(|a| d.at(a)[1])
}

/// `base` and `base --ground G [legs]`: both ankles rise `rise` (± 5 mm) and stay over the same
/// spot (± 5 mm); returns the dump with the ground.
fn check_ground(what: &str, base: &[&str], ground: &str, legs: &[&str], ankles: [&str; 2], rise: f64) -> Dump {
    let before = Dump::run(base);
    let mut args = base.to_vec();
    args.extend(["--ground", ground]);
    for leg in legs {
        args.extend(["--leg", leg]);
    }
    let after = Dump::run(&args);
    let (h0, h1) = (ankle_heights(&before, ankles), ankle_heights(&after, ankles));
    for (i, ankle) in ankles.iter().enumerate() {
        let up = h1[i] - h0[i];
        assert!((up - rise).abs() <= 5e-3, "{what}: {ankle} rose {up} m, not {rise} m");
        let (a, b) = (before.at(ankle), after.at(ankle));
        let across = ((a[0] - b[0]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
        assert!(across <= 5e-3, "{what}: {ankle} moved {across} m across");
        eprintln!("cli ground {what}: {ankle} {:.4} → {:.4} m", h0[i], h1[i]);
    }
    after
}

fn max_difference(a: &Dump, b: &Dump) -> f64 {
    a.world.iter().flatten().zip(b.world.iter().flatten()).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

#[test]
fn ground_raises_both_ankles_of_a_standing_pose() {
    // CMU's first frame, standing: its legs found by their names (CMU's Mixamo limb names).
    let (source, cmu) = (cmu_source(), cmu());
    let ankles = ["LeftFoot", "RightFoot"];
    let on_source = check_ground("CMU .bvh by name", &["dump", p(&source), "--time", "0"], "0.1", &[], ankles, 0.1);
    let base = ["dump", p(&cmu), "--time", "0"];
    let found = check_ground("CMU by name", &base, "0.1", &[], ankles, 0.1);
    assert!(max_difference(&found, &on_source) <= 1e-6, "the baked file and the .bvh");
    let legs = ["LeftUpLeg,LeftLeg,LeftFoot", "RightUpLeg,RightLeg,RightFoot"];
    let given = check_ground("CMU given", &base, "0.1", &legs, ankles, 0.1);
    assert!(max_difference(&found, &given) <= 1e-6, "--leg gives the legs found by name");
    let legs = ["LeftUpLeg,LeftLeg,LeftFoot,LeftToeBase", "RightUpLeg,RightLeg,RightFoot,RightToeBase"];
    let with_toes = check_ground("CMU given with toes", &base, "0.1", &legs, ankles, 0.1);
    assert!(max_difference(&found, &with_toes) <= 1e-6, "--leg with toes gives the legs found by name");
    // The normal's length does not matter: (0, 5, 0) is up.
    let scaled = check_ground("CMU normal (0, 5, 0)", &base, "0.1,0,5,0", &[], ankles, 0.1);
    assert!(max_difference(&found, &scaled) <= 1e-6, "a longer normal gives the same plane");
    // A ground 5 cm down lowers both.
    check_ground("CMU ground -0.05", &base, "-0.05", &[], ankles, -0.05);
    // RiggedFigure's rest pose, its legs named with --leg.
    let figure = gltf("RiggedFigure");
    let base = ["dump", p(&figure), "--time", "0"];
    let legs = ["leg_joint_L_1,leg_joint_L_2,leg_joint_L_3", "leg_joint_R_1,leg_joint_R_2,leg_joint_R_3"];
    check_ground("RiggedFigure", &base, "0.1", &legs, ["leg_joint_L_3", "leg_joint_R_3"], 0.1);
}

/// Asserts exit code 2, nothing on stdout and one stderr line starting `sinew: ` that contains
/// every needle.
fn assert_fails(args: &[&str], needles: &[&str]) {
    let out = sinew(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: exit code (stderr: {err})");
    assert!(out.stdout.is_empty(), "{args:?}: stdout {}", text(&out.stdout));
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one error line, got {err:?}");
    assert!(lines[0].starts_with("sinew: "), "{args:?}: {}", lines[0]);
    for n in needles {
        assert!(lines[0].contains(n), "{args:?}: {:?} does not mention {n:?}", lines[0]);
    }
    eprintln!("cli ik error: {}", lines[0]);
}

#[test]
fn bad_specs_exit_2_with_one_line() {
    let (cmu, figure) = (cmu(), gltf("RiggedFigure"));
    // Each case: the model, the options after it, and what the line must say.
    let cases: [(&Path, &[&str], &[&str]); 30] = [
        // Unknown joints.
        (&cmu, &["--ik", "fabrik,LeftArm,NoSuchHand,1,1,0"], &["--ik: no joint named 'NoSuchHand'"]),
        (&cmu, &["--ik", "ccd,mixamorig:LeftArm,LeftHand,1,1,0"], &["no joint named 'mixamorig:LeftArm'"]),
        // Not one chain: the end above the start, on another branch, or the start itself.
        (&cmu, &["--ik", "fabrik,LeftHand,LeftArm,1,1,0"], &["'LeftArm' is not below 'LeftHand'", "not one chain"]),
        (&cmu, &["--ik", "ccd,LeftArm,RightHand,1,1,0"], &["'RightHand' is not below 'LeftArm'"]),
        (&cmu, &["--ik", "fabrik,LeftArm,LeftArm,1,1,0"], &["not one chain"]),
        // Non-finite targets.
        (
            &cmu,
            &["--ik", "fabrik,LeftArm,LeftHand,nan,1,0"],
            &["--ik 'fabrik,LeftArm,LeftHand,nan,1,0'", "target x 'nan' is not finite"],
        ),
        (&cmu, &["--ik", "fabrik,LeftArm,LeftHand,1,inf,0"], &["target y 'inf' is not finite"]),
        (&cmu, &["--ik", "fabrik,LeftArm,LeftHand,1,1,1e40"], &["target z '1e40' is not finite"]),
        // Malformed specs.
        (
            &cmu,
            &["--ik", "fabrik,LeftArm,LeftHand,1,1"],
            &["expected SOLVER,FROM,TO,X,Y,Z[,ITERATIONS[,TOLERANCE]]", "5 fields"],
        ),
        (&cmu, &["--ik", "jacobian,LeftArm,LeftHand,1,1,0"], &["unknown solver 'jacobian' (fabrik or ccd)"]),
        (&cmu, &["--ik", "fabrik,LeftArm,LeftHand,1,x,0"], &["target y 'x' is not a number"]),
        (&cmu, &["--ik", "fabrik,,LeftHand,1,1,0"], &["the first joint name is empty"]),
        (&cmu, &["--ik", "fabrik,LeftArm,LeftHand,1,1,0,0"], &["iterations '0'"]),
        (&cmu, &["--ik", "fabrik,LeftArm,LeftHand,1,1,0,2.5"], &["iterations '2.5'"]),
        (&cmu, &["--ik", "fabrik,LeftArm,LeftHand,1,1,0,20,-1"], &["tolerance '-1'"]),
        (&cmu, &["--ik", "fabrik,LeftArm,LeftHand,1,1,0,20,1e-4,9"], &["9 fields"]),
        // A bad second chain fails before anything is dumped.
        (
            &cmu,
            &["--ik", "fabrik,LeftArm,LeftHand,1,1,0", "--ik", "ccd,RightArm,Nose,1,1,0"],
            &["no joint named 'Nose'"],
        ),
        // --ground and --leg.
        (&cmu, &["--ground", "up"], &["--ground 'up'", "the height 'up' is not a number"]),
        (&cmu, &["--ground", "0.1,0,1"], &["expected HEIGHT[,NX,NY,NZ]"]),
        (&cmu, &["--ground", "0.1,0,0,0"], &["the normal is zero"]),
        (&cmu, &["--ground", "0.1,0,nan,0"], &["normal y 'nan' is not finite"]),
        (&cmu, &["--ground", "0.1,1,0,0"], &["the normal must point up"]),
        (&cmu, &["--ground", "0.1,0,-1,0"], &["the normal must point up"]),
        (&figure, &["--ground", "0.1"], &["no legs found", "--leg HIP,KNEE,ANKLE"]),
        (&cmu, &["--leg", "LeftUpLeg,LeftLeg,LeftFoot"], &["--leg needs --ground"]),
        (
            &cmu,
            &["--ground", "0", "--leg", "LeftUpLeg,LeftLeg"],
            &["--leg 'LeftUpLeg,LeftLeg'", "expected HIP,KNEE,ANKLE"],
        ),
        (&cmu, &["--ground", "0", "--leg", "LeftUpLeg,LeftLeg,Foot"], &["--leg: no joint named 'Foot'"]),
        (
            &cmu,
            &["--ground", "0", "--leg", "LeftUpLeg,LeftFoot,LeftLeg"],
            &["--leg: 'LeftLeg' is not below 'LeftFoot'"],
        ),
        (
            &cmu,
            &["--ground", "0", "--leg", "LeftUpLeg,LeftLeg,LeftFoot,RightToeBase"],
            &["'RightToeBase' is not below 'LeftFoot'"],
        ),
        (
            &cmu,
            &["--ground", "0", "--leg", "LeftUpLeg,LeftLeg,LeftFoot", "--leg", "LeftLeg,LeftFoot,LeftToeBase"],
            &["--leg: the legs overlap: hip 'LeftLeg' is 'LeftUpLeg' or below it"],
        ),
    ];
    for (model, options, needles) in cases {
        let mut args = vec!["dump", p(model)];
        args.extend(options);
        assert_fails(&args, needles);
    }
    // On the graph path too.
    let fox = gltf("Fox");
    let graph = scratch_graph("errors");
    let args = ["dump", p(&fox), "--graph", p(&graph), "--ik", "fabrik,b_Hip_01,b_Tail03,0,0,0"];
    assert_fails(&args, &["no joint named 'b_Tail03'"]);
}
