//! The character the firmware embeds, `core/fixtures/character.sinew`, and the test
//! that keeps it in step with its source.
//!
//! The fixture is the built-in procedural humanoid (`sinew_offline::builtin::humanoid_rig`)
//! reduced to what a microcontroller with 16 KiB of RAM can animate, skin and draw:
//!
//! - its clips `walk` and `run` only, baked with quantized keys (1 mm tolerance);
//! - its mesh, a set of separate capsules (one per bone, thousands of vertices), replaced by a
//!   low-poly shell per capsule: a triangular antiprism, six of the capsule's own vertices (with
//!   their skin weights) in two twisted rings near the capsule's ends, joined by 8
//!   outward-facing triangles;
//! - no normals (the firmware draws it flat-shaded), at most 4 influences per vertex;
//! - the animation graph [`GRAPH`], baked as the graph section `character` (what
//!   `sinew bake --graph` does).
//!
//! `fixture_matches_its_generator` regenerates the bytes in memory and requires them to equal
//! the committed file. After a change to the humanoid or to the baker, rewrite the file with
//!
//! ```text
//! SINEW_REGENERATE_FIXTURES=1 cargo test -p sinew-tests --test firmware_fixture
//! ```
//!
//! and run `tests/firmware/run.sh`.

use std::path::{Path, PathBuf};

use sinew::asset::Asset;
use sinew_offline::bake::{bake, BakeOptions};
use sinew_offline::builtin::humanoid_rig;
use sinew_offline::graph_bake::bake_graph;
use sinew_offline::graph_file::GraphFile;
use sinew_offline::rig::{Rig, RigPrimitive};

/// The clips kept, in this order (the firmware plays clip 0 and crossfades to clip 1).
const CLIPS: [&str; 2] = ["walk", "run"];

/// The character's animation graph: `walk`, and `stride`, a phase-synced 1D space of `walk`
/// (speed 1) and `run` (speed 3); an inertialized switch to `stride` once `speed` exceeds 1.5
/// and a synced smoothstep crossfade back on the trigger `stop`.
const GRAPH: &str = r#"{"parameters": {"speed": 1.0, "stop": "trigger"},
 "states": [{"name": "walk", "clip": "walk"},
            {"name": "stride", "blend1d": {"parameter": "speed", "clips": [["walk", 1.0], ["run", 3.0]], "sync": true}}],
 "transitions": [{"from": "walk", "to": "stride", "when": "speed > 1.5", "duration": 0.3, "blend": "inertialize"},
                 {"from": "stride", "to": "walk", "when": "stop", "duration": 0.2, "curve": "smoothstep", "sync": true}],
 "initial": "walk"}"#;

/// Axial positions of the two rings, as fractions of the pole-to-pole length.
const RINGS: [f64; 2] = [0.15, 0.85];

/// Vertices kept per capsule: two rings of three.
const PER_CAPSULE: usize = 6;

/// Triangles per capsule.
const TRIANGLES_PER_CAPSULE: usize = 8;

/// Flash budget of the fixture (the micro:bit has 256 KiB for code and data).
const MAX_BYTES: usize = 64 * 1024;

fn fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/fixtures/character.sinew")
}

type V3 = [f64; 3];

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
fn scale(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}
fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
fn norm(a: V3) -> V3 {
    scale(a, 1.0 / dot(a, a).sqrt())
}
fn f64v(p: [f32; 3]) -> V3 {
    p.map(f64::from)
}

/// The connected components of a triangle list, as sorted vertex lists in order of their
/// smallest vertex.
fn components(vertices: usize, indices: &[u32]) -> Vec<Vec<usize>> {
    fn find(parent: &mut [usize], mut v: usize) -> usize {
        while parent[v] != v {
            parent[v] = parent[parent[v]];
            v = parent[v];
        }
        v
    }
    let mut parent: Vec<usize> = (0..vertices).collect();
    for t in indices.chunks_exact(3) {
        for e in [(t[0], t[1]), (t[1], t[2])] {
            let (a, b) = (find(&mut parent, e.0 as usize), find(&mut parent, e.1 as usize));
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut slot = vec![usize::MAX; vertices];
    let used: std::collections::BTreeSet<usize> = indices.iter().map(|&i| i as usize).collect();
    for v in used {
        let r = find(&mut parent, v);
        if slot[r] == usize::MAX {
            slot[r] = groups.len();
            groups.push(Vec::new());
        }
        groups[slot[r]].push(v);
    }
    groups
}

/// The six vertices of the low-poly shell of one capsule (a convex component): its axis runs
/// between its two poles (the farthest pair of vertices); for each ring, the vertices nearest
/// three points spaced 120° apart on the capsule's widest radius, the second ring turned by 60°.
/// Returns vertex indices into `positions`: `[ring 0 ×3, ring 1 ×3]`.
fn shell_vertices(positions: &[[f32; 3]], comp: &[usize]) -> [usize; PER_CAPSULE] {
    let p = |v: usize| f64v(positions[v]);
    let (mut a, mut b, mut best) = (comp[0], comp[0], -1.0);
    for (i, &u) in comp.iter().enumerate() {
        for &v in &comp[i + 1..] {
            let d = sub(p(u), p(v));
            if dot(d, d) > best {
                (a, b, best) = (u, v, dot(d, d));
            }
        }
    }
    let length = best.sqrt();
    let axis = scale(sub(p(b), p(a)), 1.0 / length);
    // A reference direction across the axis: world X, or Z for capsules along X.
    let reference = if axis[0].abs() > 0.9 { [0.0, 0.0, 1.0] } else { [1.0, 0.0, 0.0] };
    let u = norm(sub(reference, scale(axis, dot(reference, axis))));
    let w = cross(axis, u);
    let radius = comp
        .iter()
        .map(|&v| {
            let d = sub(p(v), p(a));
            let radial = sub(d, scale(axis, dot(d, axis)));
            dot(radial, radial).sqrt()
        })
        .fold(0.0, f64::max);
    let mut out = [a; PER_CAPSULE];
    for (r, &f) in RINGS.iter().enumerate() {
        for k in 0..3 {
            let angle = std::f64::consts::TAU * (2 * k + r) as f64 / 6.0;
            let ideal = add(
                add(p(a), scale(axis, f * length)),
                add(scale(u, radius * angle.cos()), scale(w, radius * angle.sin())),
            );
            let nearest = comp
                .iter()
                .copied()
                .min_by(|&x, &y| {
                    let (dx, dy) = (sub(p(x), ideal), sub(p(y), ideal));
                    dot(dx, dx).total_cmp(&dot(dy, dy)).then(x.cmp(&y))
                })
                .unwrap();
            out[3 * r + k] = nearest;
        }
    }
    out
}

/// Triangles of a shell (local indices into [`shell_vertices`]'s order), wound
/// counter-clockwise seen from outside: the two rings' triangles and the antiprism band
/// between them.
fn shell_triangles(points: &[V3; PER_CAPSULE]) -> Vec<[usize; 3]> {
    let r0 = |k: usize| k % 3;
    let r1 = |k: usize| 3 + k % 3;
    let mut tris = vec![[r0(0), r0(2), r0(1)], [r1(0), r1(1), r1(2)]];
    for k in 0..3 {
        // Ring 1 vertex k sits between ring 0 vertices k and k + 1.
        tris.push([r0(k), r1(k), r0(k + 1)]);
        tris.push([r0(k + 1), r1(k), r1(k + 1)]);
    }
    let centroid = scale(points.iter().fold([0.0; 3], |s, &q| add(s, q)), 1.0 / PER_CAPSULE as f64);
    for t in &mut tris {
        let [a, b, c] = t.map(|i| points[i]);
        let n = cross(sub(b, a), sub(c, a));
        assert!(dot(n, n) > 1.0e-14, "degenerate shell triangle");
        if dot(n, sub(a, centroid)) < 0.0 {
            t.swap(1, 2);
        }
    }
    assert_eq!(tris.len(), TRIANGLES_PER_CAPSULE);
    tris
}

/// The low-poly mesh: one shell per connected component of `prim`.
fn low_poly(prim: &RigPrimitive) -> RigPrimitive {
    let k = prim.influences;
    let mut out = RigPrimitive { influences: k, color: prim.color, ..RigPrimitive::default() };
    for comp in components(prim.positions.len(), &prim.indices) {
        let picked = shell_vertices(&prim.positions, &comp);
        let mut unique = picked.to_vec();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), PER_CAPSULE, "a capsule is too small for its shell: {picked:?}");
        let points = picked.map(|v| f64v(prim.positions[v]));
        let base = out.positions.len() as u32;
        for &v in &picked {
            out.positions.push(prim.positions[v]);
            out.joint_indices.extend_from_slice(&prim.joint_indices[v * k..(v + 1) * k]);
            out.joint_weights.extend_from_slice(&prim.joint_weights[v * k..(v + 1) * k]);
        }
        for t in shell_triangles(&points) {
            out.indices.extend(t.map(|i| base + i as u32));
        }
    }
    out
}

/// The fixture's rig: the humanoid with [`CLIPS`] and the low-poly mesh.
fn fixture_rig() -> Rig {
    let mut rig = humanoid_rig();
    rig.clips = CLIPS
        .iter()
        .map(|name| rig.clips.iter().find(|c| c.name == *name).cloned().unwrap_or_else(|| panic!("no clip {name}")))
        .collect();
    for mesh in &mut rig.meshes {
        mesh.primitives = mesh.primitives.iter().map(low_poly).collect();
    }
    rig
}

/// The fixture's bytes.
fn generate() -> Vec<u8> {
    // 1 mm: far below a pixel of the firmware's frame, and loose enough that every track
    // stays quantized; at a fixed 3 cm shell (the fixture's bytes predate shells from the
    // mesh).
    let options = BakeOptions {
        tolerance: 1.0e-3,
        shell: 0.03,
        shell_from_mesh: false,
        max_influences: 4,
        lossless: false,
        palette: None,
        ..BakeOptions::default()
    };
    let bytes = bake(&fixture_rig(), &options).expect("the humanoid bakes").0;
    let asset = Asset::parse(&bytes).expect("the bake parses");
    let clip = |key: &str| CLIPS.iter().position(|c| *c == key);
    let graph = GraphFile::parse(GRAPH, clip, asset.num_clips()).expect("the graph reads");
    bake_graph(&bytes, "character", &graph).expect("the graph bakes")
}

#[test]
fn fixture_matches_its_generator() {
    let bytes = generate();
    let path = fixture_path();
    if std::env::var_os("SINEW_REGENERATE_FIXTURES").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        eprintln!("wrote {} ({} bytes)", path.display(), bytes.len());
    }
    let committed = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        committed == bytes,
        "{} is stale ({} bytes, generator gives {}): regenerate it with SINEW_REGENERATE_FIXTURES=1 \
         cargo test -p sinew-tests --test firmware_fixture",
        path.display(),
        committed.len(),
        bytes.len()
    );
}

#[test]
fn fixture_is_the_small_humanoid() {
    let bytes = generate();
    assert!(bytes.len() < MAX_BYTES, "{} bytes", bytes.len());
    let asset = Asset::parse(&bytes).unwrap();
    let rig = humanoid_rig();
    let skeleton = asset.skeleton().unwrap();
    assert_eq!(skeleton.num_joints(), rig.joints.len());
    let names: Vec<&str> = (0..asset.num_clips()).map(|i| asset.clip(i).unwrap().name()).collect();
    assert_eq!(names, CLIPS);
    let graph = asset.graph_by_name("character").unwrap();
    assert_eq!((graph.num_states(), graph.num_parameters(), graph.num_transitions()), (2, 2, 2));
    for i in 0..asset.num_clips() {
        let clip = asset.clip(i).unwrap();
        for t in 0..clip.num_tracks() {
            assert_ne!(clip.track(t).unwrap().format, sinew::clip::KeyFormat::F32);
        }
    }
    // One skin over every joint, in joint order (the firmware builds its palette in place).
    assert_eq!(asset.num_skins(), 1);
    let skin = asset.skin(0).unwrap();
    assert!((0..skin.num_joints()).all(|i| skin.joint(i) as usize == i));
    // One shell per capsule of the source mesh.
    let source = &rig.meshes[0].primitives[0];
    let capsules = components(source.positions.len(), &source.indices).len();
    assert_eq!(asset.num_meshes(), 1);
    let mesh = asset.mesh(0).unwrap();
    let parts: Vec<_> = mesh.parts().collect();
    assert_eq!(parts.len(), 1);
    let part = parts[0];
    assert_eq!(part.num_vertices(), capsules * PER_CAPSULE);
    assert_eq!(part.num_indices(), capsules * TRIANGLES_PER_CAPSULE * 3);
    assert!(!part.has_normals());
    assert!((1..=4).contains(&part.influences()));
    println!(
        "fixture: {} bytes, {} joints, {} vertices, {} triangles, {} influences, clips {:?} ({} and {} tracks)",
        bytes.len(),
        skeleton.num_joints(),
        part.num_vertices(),
        part.num_indices() / 3,
        part.influences(),
        names,
        asset.clip(0).unwrap().num_tracks(),
        asset.clip(1).unwrap().num_tracks(),
    );
}

#[test]
fn shells_lie_on_their_capsules_and_face_out() {
    let rig = humanoid_rig();
    let source = &rig.meshes[0].primitives[0];
    let shell = low_poly(source);
    // Every shell vertex is a source vertex with the same weights.
    for (i, p) in shell.positions.iter().enumerate() {
        let v = source.positions.iter().position(|q| q == p).expect("a source vertex");
        let k = source.influences;
        assert_eq!(shell.joint_weights[i * k..(i + 1) * k], source.joint_weights[v * k..(v + 1) * k]);
    }
    // Each shell is closed (every edge shared by two triangles in opposite directions) and
    // every triangle faces away from its shell's centroid.
    for (c, tris) in shell.indices.chunks(TRIANGLES_PER_CAPSULE * 3).enumerate() {
        let mut edges = std::collections::BTreeMap::new();
        for t in tris.chunks_exact(3) {
            for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
                *edges.entry((a, b)).or_insert(0) += 1;
            }
        }
        for (&(a, b), &n) in &edges {
            assert_eq!(n, 1, "shell {c}: edge {a}-{b} repeated");
            assert_eq!(edges.get(&(b, a)), Some(&1), "shell {c}: edge {a}-{b} is open");
        }
        let base = c * PER_CAPSULE;
        let centroid = scale(
            (base..base + PER_CAPSULE).fold([0.0; 3], |s, v| add(s, f64v(shell.positions[v]))),
            1.0 / PER_CAPSULE as f64,
        );
        for t in tris.chunks_exact(3) {
            let [a, b, cc] = [t[0], t[1], t[2]].map(|v| f64v(shell.positions[v as usize]));
            assert!(dot(cross(sub(b, a), sub(cc, a)), sub(a, centroid)) > 0.0, "shell {c} faces in");
        }
    }
}
