//! `sinew dump --retarget-from` and `sinew info --retarget-from` as a user runs them:
//! CesiumMan's walk retargeted onto RiggedFigure (the same skeleton under other names and rest
//! orientations, mapped by `tests/data/riggedfigure-from-cesiumman.map`) against an
//! independent `f64` implementation of the method in this file; CesiumMan onto itself gives
//! CesiumMan's own world rotations and hips; and the mapping's errors exit 2 with one line.

mod retarget_cli;

use std::collections::HashMap;
use std::path::Path;

use sinew_offline::eval::{local_pose, model_matrices, quat_mul, Trs, M4};
use sinew_offline::rig::Rig;

use retarget_cli::{assert_fails, assert_ok, dump_joints, gltf_asset, map_file, p, scratch, sinew};

// ---------------------------------------------------------------------------------------------
// The method in f64
// ---------------------------------------------------------------------------------------------

type Q = [f64; 4];

fn qconj(q: Q) -> Q {
    [-q[0], -q[1], -q[2], q[3]]
}

/// The rotation of an affine matrix whose columns are orthogonal (scaled): its columns
/// normalized, as a quaternion.
fn rotation(m: &M4) -> Q {
    let c: [[f64; 3]; 3] = core::array::from_fn(|i| {
        let l = (m[i][0] * m[i][0] + m[i][1] * m[i][1] + m[i][2] * m[i][2]).sqrt();
        [m[i][0] / l, m[i][1] / l, m[i][2] / l]
    });
    // r[row][col] = c[col][row].
    let r = |row: usize, col: usize| c[col][row];
    let tr = r(0, 0) + r(1, 1) + r(2, 2);
    let q = if tr > 0.0 {
        let s = (tr + 1.0).sqrt() * 2.0;
        [(r(2, 1) - r(1, 2)) / s, (r(0, 2) - r(2, 0)) / s, (r(1, 0) - r(0, 1)) / s, 0.25 * s]
    } else if r(0, 0) > r(1, 1) && r(0, 0) > r(2, 2) {
        let s = (1.0 + r(0, 0) - r(1, 1) - r(2, 2)).sqrt() * 2.0;
        [0.25 * s, (r(0, 1) + r(1, 0)) / s, (r(0, 2) + r(2, 0)) / s, (r(2, 1) - r(1, 2)) / s]
    } else if r(1, 1) > r(2, 2) {
        let s = (1.0 + r(1, 1) - r(0, 0) - r(2, 2)).sqrt() * 2.0;
        [(r(0, 1) + r(1, 0)) / s, 0.25 * s, (r(1, 2) + r(2, 1)) / s, (r(0, 2) - r(2, 0)) / s]
    } else {
        let s = (1.0 + r(2, 2) - r(0, 0) - r(1, 1)).sqrt() * 2.0;
        [(r(0, 2) + r(2, 0)) / s, (r(1, 2) + r(2, 1)) / s, 0.25 * s, (r(1, 0) - r(0, 1)) / s]
    };
    let l = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    q.map(|v| v / l)
}

fn translation(m: &M4) -> [f64; 3] {
    [m[3][0], m[3][1], m[3][2]]
}

/// The inverse of an affine matrix applied to a point.
fn inverse_transform_point(m: &M4, p: [f64; 3]) -> [f64; 3] {
    let a = |r: usize, c: usize| m[c][r];
    let d = [p[0] - m[3][0], p[1] - m[3][1], p[2] - m[3][2]];
    let det = a(0, 0) * (a(1, 1) * a(2, 2) - a(1, 2) * a(2, 1)) - a(0, 1) * (a(1, 0) * a(2, 2) - a(1, 2) * a(2, 0))
        + a(0, 2) * (a(1, 0) * a(2, 1) - a(1, 1) * a(2, 0));
    // Cramer's rule.
    let solve = |col: usize| {
        let b = |r: usize, c: usize| if c == col { d[r] } else { a(r, c) };
        (b(0, 0) * (b(1, 1) * b(2, 2) - b(1, 2) * b(2, 1)) - b(0, 1) * (b(1, 0) * b(2, 2) - b(1, 2) * b(2, 0))
            + b(0, 2) * (b(1, 0) * b(2, 1) - b(1, 1) * b(2, 0)))
            / det
    };
    [solve(0), solve(1), solve(2)]
}

fn index_of(rig: &Rig, name: &str) -> usize {
    rig.joints.iter().position(|j| j.name == name).unwrap_or_else(|| panic!("no joint {name}"))
}

/// The map file read independently: target joint → source joint, and the hips.
fn read_map(path: &Path, source: &Rig, target: &Rig) -> (HashMap<usize, usize>, usize) {
    let text = std::fs::read_to_string(path).expect("map file");
    let mut map = HashMap::new();
    let mut hips = None;
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(h) = line.strip_prefix("@hips") {
            hips = Some(index_of(target, h.trim()));
        } else if let Some((t, s)) = line.split_once('=') {
            map.insert(index_of(target, t.trim()), index_of(source, s.trim()));
        }
    }
    (map, hips.expect("@hips"))
}

/// The target's world matrices for the source's clip 0 at `t`, by the method.
fn retarget_f64(source: &Rig, target: &Rig, map: &HashMap<usize, usize>, hips: usize, t: f64) -> Vec<M4> {
    let ws_rest = model_matrices(source, &local_pose(source, None, 0.0));
    let ws = model_matrices(source, &local_pose(source, source.clips.first(), t));
    let wt_rest = model_matrices(target, &local_pose(target, None, 0.0));
    let source_hips = map[&hips];
    let (ht, hs) = (translation(&wt_rest[hips])[1], translation(&ws_rest[source_hips])[1]);
    assert!(ht > 0.0 && hs > 0.0);
    let rest = local_pose(target, None, 0.0);
    let mut world: Vec<M4> = Vec::with_capacity(target.joints.len());
    for (k, joint) in target.joints.iter().enumerate() {
        let parent = joint.parent.map(|p| world[p]);
        let parent_rot = parent.as_ref().map_or([0.0, 0.0, 0.0, 1.0], rotation);
        let mut local: Trs = rest[k];
        if let Some(&j) = map.get(&k) {
            let w = quat_mul(quat_mul(rotation(&ws[j]), qconj(rotation(&ws_rest[j]))), rotation(&wt_rest[k]));
            local.r = quat_mul(qconj(parent_rot), w);
        }
        if k == hips {
            let (pt, ps, ps0) =
                (translation(&wt_rest[k]), translation(&ws[source_hips]), translation(&ws_rest[source_hips]));
            let pos: [f64; 3] = core::array::from_fn(|i| pt[i] + (ps[i] - ps0[i]) * (ht / hs));
            local.t = match joint.parent {
                Some(p) => inverse_transform_point(&wt_rest[p], pos),
                None => pos,
            };
        }
        let m = local.matrix();
        world.push(match parent {
            Some(pm) => sinew_offline::eval::mul(&pm, &m),
            None => m,
        });
    }
    world
}

/// The angle between two rotations.
fn angle(a: Q, b: Q) -> f64 {
    let d: f64 = (0..4).map(|i| a[i] * b[i]).sum::<f64>().abs().min(1.0);
    2.0 * d.acos()
}

fn as_m4(m: &[f64; 16]) -> M4 {
    core::array::from_fn(|c| core::array::from_fn(|r| m[c * 4 + r]))
}

#[test]
fn cesium_man_onto_rigged_figure_matches_the_method_in_f64() {
    let (src_path, tgt_path, map_path) = (gltf_asset("CesiumMan"), gltf_asset("RiggedFigure"), map_file());
    let source = sinew_offline::import::load(&src_path, None).expect("CesiumMan");
    let target = sinew_offline::import::load(&tgt_path, None).expect("RiggedFigure");
    let (map, hips) = read_map(&map_path, &source, &target);
    assert_eq!(map.len(), 19, "every skin joint mapped");
    // The target's size: the bounding radius of its rest joints about their centroid.
    let rest: Vec<[f64; 3]> =
        model_matrices(&target, &local_pose(&target, None, 0.0)).iter().map(translation).collect();
    let c: [f64; 3] = core::array::from_fn(|i| rest.iter().map(|p| p[i]).sum::<f64>() / rest.len() as f64);
    let dist = |a: [f64; 3], b: [f64; 3]| (0..3).map(|i| (a[i] - b[i]).powi(2)).sum::<f64>().sqrt();
    let radius = rest.iter().map(|&p| dist(p, c)).fold(0.0, f64::max);
    assert!(radius > 0.1, "radius {radius}");

    let info = assert_ok(
        &sinew(&["info", p(&tgt_path), "--retarget-from", p(&src_path), "--map", p(&map_path)]),
        "info --retarget-from",
    );
    assert!(info.lines().any(|l| l == "arm_joint_L_1 <- Skeleton_arm_joint_L__4_"), "{info}");
    assert!(info.lines().any(|l| l == "Armature at rest"), "{info}");
    assert!(info.lines().any(|l| l == "hips torso_joint_1 <- Skeleton_torso_joint_1"), "{info}");
    assert!(info.lines().any(|l| l.starts_with("scale ")), "{info}");

    let (mut max_pos, mut max_rot) = (0.0f64, 0.0f64);
    for t in [0.0, 0.35, 0.9, 1.62] {
        let ts = format!("{t}");
        let out = sinew(&[
            "dump",
            p(&tgt_path),
            "--retarget-from",
            p(&src_path),
            "--map",
            p(&map_path),
            "--raw",
            "--time",
            &ts,
        ]);
        let dumped = dump_joints(&assert_ok(&out, "dump --retarget-from --raw"));
        assert_eq!(dumped.len(), target.joints.len());
        let want = retarget_f64(&source, &target, &map, hips, t);
        let mut moved = 0.0f64;
        for (name, m) in &dumped {
            let k = index_of(&target, name);
            let got = as_m4(m);
            let e = dist(translation(&got), translation(&want[k]));
            let r = angle(rotation(&got), rotation(&want[k]));
            assert!(e <= 1e-4 * radius, "t {t}, joint {name}: position error {e} (radius {radius})");
            assert!(r <= 1e-3, "t {t}, joint {name}: rotation error {r} rad");
            max_pos = max_pos.max(e);
            max_rot = max_rot.max(r);
            moved = moved.max(dist(translation(&want[k]), rest[k]));
        }
        assert!(t == 0.0 || moved > 0.01 * radius, "t {t}: the pose moves ({moved})");
    }
    eprintln!(
        "retarget CesiumMan → RiggedFigure: max position error {max_pos:.3e} (bound {:.3e}), max rotation error {max_rot:.3e} rad",
        1e-4 * radius
    );
}

#[test]
fn cesium_man_onto_itself_is_its_own_dump() {
    let src = gltf_asset("CesiumMan");
    for raw in [true, false] {
        for t in ["0.4", "1.3"] {
            let mut args = vec!["dump", p(&src), "--time", t];
            if raw {
                args.push("--raw");
            }
            let own = dump_joints(&assert_ok(&sinew(&args), "dump"));
            args.extend(["--retarget-from", p(&src)]);
            let re = dump_joints(&assert_ok(&sinew(&args), "dump --retarget-from itself"));
            assert_eq!(own.len(), re.len());
            // Every world rotation (the matrices' upper 3×3) is the source's, and so is the
            // hips' position and those of the nodes above them. The other joints keep their
            // rest local translations where CesiumMan's clip moves them a few millimeters, so
            // their positions are checked against the method in the test above instead.
            let (mut max_rot, mut max_hips) = (0.0f64, 0.0f64);
            for ((n, a), (m, b)) in own.iter().zip(&re) {
                assert_eq!(n, m);
                for (x, y) in a[..12].iter().zip(&b[..12]) {
                    max_rot = max_rot.max((x - y).abs());
                }
                if ["Z_UP", "Armature", "Skeleton_torso_joint_1"].contains(&n.as_str()) {
                    for (x, y) in a[12..].iter().zip(&b[12..]) {
                        max_hips = max_hips.max((x - y).abs());
                    }
                }
            }
            assert!(max_rot < 1e-5, "raw {raw}, t {t}: max rotation-part difference {max_rot}");
            assert!(max_hips < 1e-6, "raw {raw}, t {t}: max hips position difference {max_hips}");
            eprintln!(
                "CesiumMan onto itself (raw {raw}, t {t}): max 3×3 difference {max_rot:.3e}, hips {max_hips:.3e}"
            );
        }
    }
    let info = assert_ok(&sinew(&["info", p(&src), "--retarget-from", p(&src)]), "info itself");
    assert!(info.lines().any(|l| l == "hips Skeleton_torso_joint_1 <- Skeleton_torso_joint_1"), "{info}");
    assert!(info.lines().any(|l| l == "Z_UP at rest"), "{info}");
    assert!(info.lines().any(|l| l == "scale 1"), "{info}");
}

#[test]
fn retarget_errors_exit_2_with_one_line() {
    let dir = scratch("errors");
    let (src, tgt) = (gltf_asset("CesiumMan"), gltf_asset("RiggedFigure"));
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("map");
        path
    };
    let cases = [
        (write("unknown-target.map", "nope = torso_joint_3\n"), "'nope'", true),
        (write("unknown-source.map", "torso_joint_3 = nope_src\n"), "'nope_src'", true),
        (write("hips-unmapped.map", "@hips torso_joint_2\ntorso_joint_3 = torso_joint_3\n"), "torso_joint_2", true),
        (write("above-skin.map", "Armature = torso_joint_3\n"), "Armature", true),
        (write("garbage.map", "# ok\ntorso_joint_3\n"), "line 2", true),
        (write("empty.map", "# nothing mapped\n"), "no joint in common", false),
    ];
    for (map, needle, in_map) in &cases {
        let file = if *in_map { map.as_path() } else { tgt.as_path() };
        let what = map.file_name().and_then(|n| n.to_str()).unwrap_or("map");
        let out = sinew(&["dump", p(&tgt), "--retarget-from", p(&src), "--map", p(map), "--time", "0.5"]);
        assert_fails(&out, file, needle, &format!("dump {what}"));
        let out = sinew(&["info", p(&tgt), "--retarget-from", p(&src), "--map", p(map)]);
        assert_fails(&out, file, needle, &format!("info {what}"));
    }
    let missing = dir.join("missing.map");
    let out = sinew(&["info", p(&tgt), "--retarget-from", p(&src), "--map", p(&missing)]);
    assert_eq!(out.status.code(), Some(2));
    let out = sinew(&["dump", p(&tgt), "--retarget-from", p(&src), "--clip", "nope"]);
    assert_fails(&out, &src, "nope", "dump --clip unknown in the source");
    // A negative scale is allowed; a non-finite one is not.
    let out = sinew(&["info", p(&tgt), "--retarget-from", p(&src), "--retarget-scale", "inf"]);
    assert_fails(&out, &tgt, "finite", "info --retarget-scale inf");
    // --retarget-from conflicts with graphs and layers (clap's usage error, exit 2).
    for extra in [["--graph", "g.json"], ["--layer", "0:1"], ["--additive", "0:1"]] {
        let mut args = vec!["dump", p(&tgt), "--retarget-from", p(&src)];
        args.extend(extra);
        assert_eq!(sinew(&args).status.code(), Some(2), "{extra:?}");
    }
    assert_eq!(sinew(&["dump", p(&tgt), "--map", p(&map_file())]).status.code(), Some(2), "--map alone");
}
