//! Spring bones of the shared VRM models and of `tests/data/vrm/vrm0_springs.gltf`, checked
//! against values read by hand from their JSON (node names, radii, offsets, the plane's normal,
//! the inside flag, the tails), and against three-vrm 3.5.5's loader run in Node by
//! `tests/data/vrm/three_vrm_springs.mjs` (three.js r187's `GLTFLoader` with
//! `VRMSpringBoneLoaderPlugin`): the same joints in the same run order, with the same tails,
//! parameters, centers and colliders.
//!
//! The shared files are `vrm/vrm-conformance/*.vrm` (VRM 1.0 GLB, a four-joint spring under
//! `head`, a capsule or sphere collider on `head`) and `vrm/three-vrm/{sphere,plane,inside}-
//! collider.gltf` (a five-node chain, a collider node; no skin). Node and the npm packages are
//! found as `tests/bvh.rs` finds them; without them, or without `@pixiv/three-vrm-springbone`
//! in `frontend-sdl/web/node_modules`, the cross-check is skipped with a printed reason.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use sinew_offline::import::{self, gltf};
use sinew_offline::rig::{ColliderShape, ResolvedSpringJoint, Rig, SpringBones, SpringParams, SpringSource};

use npm::node_modules;

#[path = "support/npm.rs"]
mod npm;

const CAPSULE: &str = "vrm/vrm-conformance/springbone_collider_capsule_x0p02_r0p1.vrm";
const SPHERE: &str = "vrm/vrm-conformance/springbone_collider_sphere_x0p02_r0p1.vrm";
const THREE_SPHERE: &str = "vrm/three-vrm/sphere-collider.gltf";
const THREE_PLANE: &str = "vrm/three-vrm/plane-collider.gltf";
const THREE_INSIDE: &str = "vrm/three-vrm/inside-collider.gltf";

/// A shared VRM file: through the assets manifest when it lists the file (size checked), else
/// under the shared assets' root.
fn shared(rel: &str) -> PathBuf {
    if sinew_assets::entry(rel).is_some() {
        return sinew_assets::path(rel);
    }
    let root = sinew_assets::root();
    let path = root.join(rel);
    assert!(path.is_file(), "{}", sinew_assets::missing(rel, &root));
    path
}

fn vrm0_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/vrm/vrm0_springs.gltf")
}

fn load(path: &Path) -> Rig {
    import::load(path, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn joint(rig: &Rig, name: &str) -> usize {
    rig.joints.iter().position(|j| j.name == name).unwrap_or_else(|| panic!("no joint {name}"))
}

fn springs(rig: &Rig) -> &SpringBones {
    rig.springs.as_ref().unwrap_or_else(|| panic!("{}: no spring bones", rig.name))
}

/// The swaying joints by name: (joint, child).
fn pairs(rig: &Rig) -> Vec<(&str, Option<&str>)> {
    let name = |j: usize| rig.joints[j].name.as_str();
    springs(rig).joints.iter().map(|r| (name(r.joint), r.child.map(name))).collect()
}

// ---- values read by hand -------------------------------------------------------------

/// The conformance models: springs.joints[0..4] are nodes 19..22 (`spring_joint_0..3`, each
/// at (0, -0.05, 0) from its parent), all with hitRadius 0.02, stiffness 0.5, gravityPower 0.5,
/// gravityDir (0, -1, 0), dragForce 0.5; one collider on node 4 (`head`), offset (0.02, -0.1,
/// 0), radius 0.1, for the capsule a tail (0, -0.05, 0); group `head_g`.
#[test]
fn conformance_models() {
    for (rel, capsule) in [(CAPSULE, true), (SPHERE, false)] {
        let rig = load(&shared(rel));
        let b = springs(&rig);
        assert_eq!(b.source, SpringSource::Vrm1 { spec_version: "1.0".into(), extended_colliders: 0 });
        // The spring nodes survive as joints, and the skin over them.
        for (k, node) in (19..23).enumerate() {
            let j = joint(&rig, &format!("spring_joint_{k}"));
            assert_eq!(rig.source_nodes[j], node, "{rel}");
        }
        assert_eq!(rig.skins.len(), 1);
        assert_eq!(rig.skins[0].joints.len(), 4);
        assert_eq!(
            pairs(&rig),
            [
                ("spring_joint_0", Some("spring_joint_1")),
                ("spring_joint_1", Some("spring_joint_2")),
                ("spring_joint_2", Some("spring_joint_3")),
            ],
            "{rel}"
        );
        let name = rel.rsplit('/').next().and_then(|f| f.strip_suffix(".vrm")).expect("file name");
        assert_eq!(b.springs[0].name.as_deref(), Some(format!("{name}_chain").as_str()));
        assert_eq!(b.springs[0].joints.len(), 4);
        let params = SpringParams {
            hit_radius: 0.02,
            stiffness: 0.5,
            gravity_power: 0.5,
            gravity_dir: [0.0, -1.0, 0.0],
            drag_force: 0.5,
        };
        for r in &b.joints {
            assert_eq!(r.params, params, "{rel}");
            assert_eq!(r.tail, [0.0, -0.05, 0.0], "{rel}");
            assert_eq!((r.center, r.colliders.as_slice(), r.spring), (None, &[0][..], 0), "{rel}");
        }
        assert_eq!(b.collider_groups.len(), 1);
        assert_eq!(b.collider_groups[0].name.as_deref(), Some("head_g"));
        assert_eq!(b.colliders.len(), 1);
        assert_eq!(b.colliders[0].joint, joint(&rig, "head"));
        let shape = if capsule {
            ColliderShape::Capsule { offset: [0.02, -0.1, 0.0], tail: [0.0, -0.05, 0.0], radius: 0.1, inside: false }
        } else {
            ColliderShape::Sphere { offset: [0.02, -0.1, 0.0], radius: 0.1, inside: false }
        };
        assert_eq!(b.colliders[0].shape, shape, "{rel}");
    }
}

/// three-vrm's collider examples: nodes 0..4 `Spring A`..`Spring E`, each at (0, -2, 0) from
/// its parent (A at (0, 2, 0)), joints A..D with hitRadius 0.25, stiffness 1, gravityPower 0,
/// gravityDir (0, -1, 0), dragForce 0.4, E without parameters; node 5 `Collider`: a sphere of
/// radius 0.5 at its origin; a plane (extended; the base shape a sphere of radius 10000 at
/// (-10000, 0, 0)) with normal (0, 0, 1); an inside sphere (extended) of radius 1.25 (the base
/// shape a sphere of radius 0 at (10000, 0, 0)). Rigid meshes on every node, no skin.
#[test]
fn three_vrm_collider_examples() {
    let cases = [
        (THREE_SPHERE, ColliderShape::Sphere { offset: [0.0; 3], radius: 0.5, inside: false }, 0),
        (THREE_PLANE, ColliderShape::Plane { offset: [0.0; 3], normal: [0.0, 0.0, 1.0] }, 1),
        (THREE_INSIDE, ColliderShape::Sphere { offset: [0.0; 3], radius: 1.25, inside: true }, 1),
    ];
    for (rel, shape, extended) in cases {
        let rig = load(&shared(rel));
        assert!(rig.skins.is_empty(), "{rel}");
        assert_eq!(rig.meshes.len(), 6, "{rel}");
        assert_eq!(rig.joints.len(), 6, "{rel}");
        let b = springs(&rig);
        assert_eq!(b.source, SpringSource::Vrm1 { spec_version: "1.0".into(), extended_colliders: extended });
        assert_eq!(
            pairs(&rig),
            [
                ("Spring A", Some("Spring B")),
                ("Spring B", Some("Spring C")),
                ("Spring C", Some("Spring D")),
                ("Spring D", Some("Spring E")),
            ],
            "{rel}"
        );
        let params = SpringParams {
            hit_radius: 0.25,
            stiffness: 1.0,
            gravity_power: 0.0,
            gravity_dir: [0.0, -1.0, 0.0],
            drag_force: 0.4,
        };
        for r in &b.joints {
            assert_eq!(
                (r.params, r.tail, r.center, r.colliders.as_slice()),
                (params, [0.0, -2.0, 0.0], None, &[0][..])
            );
        }
        // The last joint, a tail only, has the VRM 1.0 defaults.
        assert_eq!(b.springs[0].joints[4].params, SpringParams::VRM1_DEFAULT);
        assert_eq!(b.colliders.len(), 1);
        assert_eq!((b.colliders[0].joint, b.colliders[0].shape), (joint(&rig, "Collider"), shape), "{rel}");
        assert!(rig.notes.is_empty() || rel == THREE_INSIDE, "{rel}: {:?}", rig.notes);
    }
}

/// `tests/data/vrm/vrm0_springs.gltf`: the values its recipe (`make_vrm0.py`) works out.
#[test]
fn vrm0_test_file() {
    let rig = load(&vrm0_file());
    assert_eq!(rig.meshes.len(), 1);
    assert_eq!(rig.meshes[0].node, Some(joint(&rig, "head")));
    let b = springs(&rig);
    assert_eq!(b.source, SpringSource::Vrm0);
    let (head, hair_a, hips) = (joint(&rig, "head"), joint(&rig, "hair_a"), joint(&rig, "hips"));
    let colliders: Vec<(usize, ColliderShape)> = b.colliders.iter().map(|c| (c.joint, c.shape)).collect();
    assert_eq!(
        colliders,
        [
            (head, ColliderShape::Sphere { offset: [0.01, 0.02, -0.03], radius: 0.1, inside: false }),
            (head, ColliderShape::Sphere { offset: [0.0; 3], radius: 0.05, inside: false }),
            (hair_a, ColliderShape::Sphere { offset: [0.0, 0.0, 0.01], radius: 0.01, inside: false }),
        ]
    );
    assert_eq!(
        pairs(&rig),
        [
            ("hair_root", Some("hair_a")),
            ("hair_a", Some("hair_a_tip")),
            ("ribbon", None),
            ("hair_a_tip", None),
            ("hair_b", None),
        ]
    );
    let tails: Vec<[f32; 3]> = b.joints.iter().map(|r| r.tail).collect();
    let expected = [[0.0, -0.1, 0.0], [0.03, -0.04, 0.0], [0.0, 0.0, -0.07], [0.042, -0.056, 0.0], [0.0; 3]];
    for (t, e) in tails.iter().zip(expected) {
        for k in 0..3 {
            assert!((t[k] - e[k]).abs() < 1e-7, "tails {tails:?}, expected {expected:?}");
        }
    }
    let ribbon = &b.joints[2];
    assert_eq!(
        ribbon.params,
        SpringParams {
            hit_radius: 0.02,
            stiffness: 2.0,
            gravity_power: 0.5,
            gravity_dir: [1.0, -1.0, 0.0],
            drag_force: 0.3
        }
    );
    assert_eq!((ribbon.center, ribbon.colliders.as_slice()), (None, &[2, 0, 1][..]));
    for r in b.joints.iter().filter(|r| r.spring == 1) {
        assert_eq!((r.params, r.center, r.colliders.as_slice()), (SpringParams::VRM0_DEFAULT, Some(hips), &[0, 1][..]));
    }
    assert!(rig.notes.iter().any(|n| n.contains("'hair_b'")), "{:?}", rig.notes);
}

// ---- three-vrm ----------------------------------------------------------------------

/// What three-vrm made of one joint, nodes as glTF node indices.
struct ThreeJoint {
    node: Option<usize>,
    child: Option<usize>,
    tail: [f64; 3],
    params: [f64; 7],
    center: Option<usize>,
    colliders: Vec<(Option<usize>, String, Vec<f64>)>,
}

fn three_vrm(modules: &Path, file: &Path) -> Vec<ThreeJoint> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/vrm/three_vrm_springs.mjs");
    let out = Command::new("node").arg(&script).arg(modules).arg(file).output().expect("node runs");
    assert!(out.status.success(), "three-vrm on {}:\n{}", file.display(), String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("the script's JSON");
    assert_eq!(v["springbone"], "3.5.5", "the cross-check is written for three-vrm 3.5.5");
    let node = |x: &Value| x.as_u64().map(|n| n as usize);
    let nums =
        |x: &Value| -> Vec<f64> { x.as_array().map_or(Vec::new(), |a| a.iter().filter_map(Value::as_f64).collect()) };
    let three = |x: &Value| -> [f64; 3] {
        let n = nums(x);
        [n[0], n[1], n[2]]
    };
    v["joints"]
        .as_array()
        .expect("joints")
        .iter()
        .map(|j| {
            let dir = three(&j["gravityDir"]);
            let f = |k: &str| j[k].as_f64().expect("a number");
            ThreeJoint {
                node: node(&j["node"]),
                child: node(&j["child"]),
                tail: three(&j["tail"]),
                params: [f("hitRadius"), f("stiffness"), f("gravityPower"), dir[0], dir[1], dir[2], f("dragForce")],
                center: node(&j["center"]),
                colliders: j["colliders"]
                    .as_array()
                    .expect("colliders")
                    .iter()
                    .map(|c| {
                        let mut values = nums(&c["offset"]);
                        values.extend(c["radius"].as_f64());
                        values.extend(nums(&c["tail"]));
                        values.extend(nums(&c["normal"]));
                        values.push(if c["inside"] == Value::Bool(true) { 1.0 } else { 0.0 });
                        (node(&c["node"]), c["type"].as_str().unwrap_or("?").to_owned(), values)
                    })
                    .collect(),
            }
        })
        .collect()
}

/// A collider as the script describes one: type, then offset, radius, tail, normal, inside.
fn describe(shape: &ColliderShape) -> (String, Vec<f64>) {
    let f = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
    match *shape {
        ColliderShape::Sphere { offset, radius, inside } => {
            ("sphere".into(), [f(&offset), vec![f64::from(radius)], vec![f64::from(u8::from(inside))]].concat())
        }
        ColliderShape::Capsule { offset, tail, radius, inside } => (
            "capsule".into(),
            [f(&offset), vec![f64::from(radius)], f(&tail), vec![f64::from(u8::from(inside))]].concat(),
        ),
        ColliderShape::Plane { offset, normal } => ("plane".into(), [f(&offset), f(&normal), vec![0.0]].concat()),
    }
}

fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * (1.0 + b.abs())
}

fn compare(file: &Path, rig: &Rig, three: &[ThreeJoint]) {
    let b = springs(rig);
    let node = |j: usize| rig.source_nodes[j];
    // three-vrm walks three.js objects: under a VRM 0.x root it also sways the collider
    // objects it added to nodes, which are no glTF nodes (see the springs module's notes).
    let three: Vec<&ThreeJoint> = three.iter().filter(|t| t.node.is_some()).collect();
    let ours: Vec<Option<usize>> = b.joints.iter().map(|r| Some(node(r.joint))).collect();
    let theirs: Vec<Option<usize>> = three.iter().map(|t| t.node).collect();
    assert_eq!(ours, theirs, "{}: run order (glTF nodes)", file.display());
    for (r, t) in b.joints.iter().zip(&three) {
        let at = format!("{} node {:?}", file.display(), t.node);
        let r: &ResolvedSpringJoint = r;
        assert_eq!(r.child.map(node), t.child, "{at}: child");
        assert!(
            (0..3).all(|k| same(f64::from(r.tail[k]), t.tail[k])),
            "{at}: tail {:?}, three-vrm {:?}",
            r.tail,
            t.tail
        );
        let p = r.params;
        let mine = [
            p.hit_radius,
            p.stiffness,
            p.gravity_power,
            p.gravity_dir[0],
            p.gravity_dir[1],
            p.gravity_dir[2],
            p.drag_force,
        ];
        assert!(
            mine.iter().zip(&t.params).all(|(&a, &b)| same(f64::from(a), b)),
            "{at}: {mine:?}, three-vrm {:?}",
            t.params
        );
        assert_eq!(r.center.map(node), t.center, "{at}: center");
        let cols: Vec<(Option<usize>, String, Vec<f64>)> = r
            .colliders
            .iter()
            .map(|&c| {
                let (kind, values) = describe(&b.colliders[c].shape);
                (Some(node(b.colliders[c].joint)), kind, values)
            })
            .collect();
        assert_eq!(cols.len(), t.colliders.len(), "{at}: colliders");
        for (a, b) in cols.iter().zip(&t.colliders) {
            let ok =
                a.0 == b.0 && a.1 == b.1 && a.2.len() == b.2.len() && a.2.iter().zip(&b.2).all(|(&x, &y)| same(x, y));
            assert!(ok, "{at}: collider {a:?}, three-vrm {b:?}");
        }
    }
}

#[test]
fn three_vrm_cross_check() {
    let modules = match node_modules() {
        Ok(m) => m,
        Err(why) => {
            eprintln!("skipped: the cross-check against three-vrm: {why}");
            return;
        }
    };
    if !modules.join("@pixiv/three-vrm-springbone/package.json").is_file() {
        eprintln!(
            "skipped: the cross-check against three-vrm: @pixiv/three-vrm-springbone is not in {}",
            modules.display()
        );
        return;
    }
    let files: Vec<PathBuf> = [CAPSULE, SPHERE, THREE_SPHERE, THREE_PLANE, THREE_INSIDE]
        .iter()
        .map(|r| shared(r))
        .chain([vrm0_file()])
        .collect();
    for file in files {
        let rig = load(&file);
        compare(&file, &rig, &three_vrm(&modules, &file));
    }
}

// ---- damaged files ------------------------------------------------------------------

/// xorshift64*: the damage below, the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The files cut short at many lengths, and with bytes of their JSON (digits, brackets,
/// quotes) replaced: every import ends in a rig or an error, never a panic.
#[test]
fn damaged_files_do_not_panic() {
    let files: Vec<PathBuf> =
        [CAPSULE, THREE_PLANE, THREE_INSIDE].iter().map(|r| shared(r)).chain([vrm0_file()]).collect();
    let mut rng = Rng(0x5eed_5eed_0bad_f00d);
    let mut errors = 0;
    let mut runs = 0;
    for file in &files {
        let bytes = std::fs::read(file).expect("read");
        let dir = file.parent().expect("a folder");
        let mut try_bytes = |b: &[u8]| {
            runs += 1;
            if gltf::load_bytes(b, Some(dir), "damaged").is_err() {
                errors += 1;
            }
        };
        // Cut short: every length in the spring extension's text, and a spread elsewhere.
        let text = String::from_utf8_lossy(&bytes);
        let start = text.find("VRMC_springBone").or_else(|| text.find("secondaryAnimation")).unwrap_or(0);
        let step = (bytes.len() / 200).max(1);
        for len in (0..bytes.len()).step_by(step).chain(start..(start + 1500).min(bytes.len())) {
            try_bytes(&bytes[..len]);
        }
        // Bytes replaced, in the spring data (past `start`) where a change keeps JSON mostly
        // readable: a digit by another, a bracket or quote by another.
        let alphabet = b"0123456789-.,[]{}\":e";
        for _ in 0..400 {
            let mut b = bytes.clone();
            for _ in 0..1 + rng.below(3) {
                let span = (b.len() - start).min(3000);
                let at = start + rng.below(span);
                if b[at].is_ascii_graphic() {
                    b[at] = alphabet[rng.below(alphabet.len())];
                }
            }
            try_bytes(&b);
        }
    }
    assert!(runs > 2000, "{runs} imports");
    assert!(errors > runs / 4, "{errors} of {runs} damaged imports failed: the damage should break most");
}
