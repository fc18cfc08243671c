//! `sinew bake --retarget-from` as a user runs it: CesiumMan's walk retargeted onto
//! RiggedFigure and baked, against the unbaked retarget (`sinew dump --retarget-from --raw`);
//! `--clip` selection and order; and bad selections exit 2 with one line.

mod retarget_cli;

use retarget_cli::{assert_fails, assert_ok, dump_joints, gltf_asset, map_file, p, scratch, sinew};

/// The dump's joint names and world positions.
fn dump_positions(json: &str) -> Vec<(String, [f64; 3])> {
    dump_joints(json).into_iter().map(|(n, m)| (n, [m[12], m[13], m[14]])).collect()
}

fn clip_names(info: &str) -> Vec<String> {
    info.lines()
        .filter_map(|l| l.strip_prefix("clip ")?.split_once(" '")?.1.split_once("':").map(|(n, _)| n.to_string()))
        .collect()
}

/// The baked clip against the unbaked retarget: every joint's world position within the bake's
/// bound (1e-4 m at shells from the mesh, the default) plus a slack of 1.1e-5 m. A joint's position is
/// the mean of its opposite shell vertices, so its error is at most the shell error the baker
/// bounds against the retargeted keys; those keys are themselves within a tenth of the bound
/// (1e-5 m) of the exact retarget between samples (`retarget_clips`); 1e-6 m covers `f32`
/// rounding of positions near 1 m and the runtime's corrected nlerp against the raw dump's slerp
/// on the unbaked side (both are inside the baker's measurement on the baked side).
#[test]
fn baked_retarget_matches_the_unbaked_one_within_the_bound() {
    let dir = scratch("bake-match");
    let (target, source, map) = (gltf_asset("RiggedFigure"), gltf_asset("CesiumMan"), map_file());
    let out = dir.join("figure-walk.sinew");
    let bake = sinew(&["bake", p(&target), "--retarget-from", p(&source), "--map", p(&map), "-o", p(&out)]);
    assert_ok(&bake, "bake --retarget-from");
    let info = assert_ok(&sinew(&["info", p(&out)]), "info");
    let source_info = assert_ok(&sinew(&["info", p(&source)]), "info source");
    assert_eq!(clip_names(&info), clip_names(&source_info), "the source's clips, by name");
    assert_eq!(clip_names(&info), ["clip0"]);
    assert!(info.contains("baked to 1.0e-4 m at shells from the mesh (up to "), "{info}");

    let bound = 1.0e-4;
    let limit = bound + 0.1 * bound + 1.0e-6;
    let mut worst = (0.0f64, String::new(), 0.0f32);
    // Source key times (the walk is keyed every 1/24 s from 0.0417 s), between them, the ends
    // and the baker's own worst time (0.7917 s).
    for t in [0.0417f32, 0.1, 0.3, 0.5417, 0.6, 0.7917, 1.0, 1.2345, 1.37, 1.6, 1.9, 2.0] {
        let ts = t.to_string();
        let baked = assert_ok(&sinew(&["dump", p(&out), "--clip", "clip0", "--time", &ts]), "dump baked");
        let exact = assert_ok(
            &sinew(&["dump", p(&target), "--retarget-from", p(&source), "--map", p(&map), "--raw", "--time", &ts]),
            "dump unbaked",
        );
        let (b, e) = (dump_positions(&baked), dump_positions(&exact));
        assert_eq!(b.len(), e.len());
        for ((nb, pb), (ne, pe)) in b.iter().zip(&e) {
            assert_eq!(nb, ne);
            let d = (0..3).map(|i| (pb[i] - pe[i]).powi(2)).sum::<f64>().sqrt();
            if d > worst.0 {
                worst = (d, nb.clone(), t);
            }
        }
    }
    eprintln!(
        "baked vs unbaked retarget: largest joint position error {:.3e} m ({} at {} s)",
        worst.0, worst.1, worst.2
    );
    assert!(worst.0 <= limit, "joint '{}' at {} s is {:.3e} m off (limit {limit:.3e})", worst.1, worst.2, worst.0);
    // The retarget moved the figure: the clip is not the rest pose.
    let rest = dump_positions(&assert_ok(&sinew(&["dump", p(&target), "--time", "0.5"]), "dump rest"));
    let baked = dump_positions(&assert_ok(&sinew(&["dump", p(&out), "--time", "0.5"]), "dump baked"));
    let moved = rest.iter().zip(&baked).any(|((_, a), (_, b))| (0..3).any(|i| (a[i] - b[i]).abs() > 1e-2));
    assert!(moved, "the baked clip moves joints");
}

/// `--clip` keeps the source clips given, by name or index, in that order (Fox onto itself, at
/// a loose bound to keep the bake quick); a repeated or unknown clip exits 2 with one line.
#[test]
fn clip_selection_and_bad_clips() {
    let dir = scratch("bake-clips");
    let fox = gltf_asset("Fox");
    let out = dir.join("fox.sinew");
    let base = ["bake", p(&fox), "--retarget-from", p(&fox), "--retarget-scale", "1", "--tolerance", "0.05"];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().copied().map(String::from).chain(extra.iter().map(|s| s.to_string())).collect()
    };
    let run = |args: Vec<String>| sinew(&args.iter().map(String::as_str).collect::<Vec<_>>());

    assert_ok(&run(with(&["--clip", "Run", "--clip", "0", "-o", p(&out)])), "bake --clip Run --clip 0");
    let info = assert_ok(&sinew(&["info", p(&out)]), "info");
    assert_eq!(clip_names(&info), ["Run", "Survey"]);

    let bad = dir.join("bad.sinew");
    let unknown = run(with(&["--clip", "Jump", "-o", p(&bad)]));
    assert_fails(&unknown, &fox, "no clip named or numbered 'Jump'", "unknown clip");
    let past = run(with(&["--clip", "3", "-o", p(&bad)]));
    assert_fails(&past, &fox, "no clip named or numbered '3'", "clip index past the end");
    let twice = run(with(&["--clip", "Walk", "--clip", "1", "-o", p(&bad)]));
    assert_fails(&twice, &fox, "a second time", "a clip twice");
    assert!(!bad.exists(), "nothing written on failure");

    // The mapping's own errors as dump gives them: a map naming a joint Fox does not have.
    let map = dir.join("bad.map");
    std::fs::write(&map, "_rootJoint = NoSuchJoint\n").expect("map");
    let unmapped = run(with(&["--map", p(&map), "-o", p(&bad)]));
    assert_fails(&unmapped, &map, "NoSuchJoint", "map with an unknown joint");
    // A .sinew target has no rig to retarget onto.
    let sinew_target = sinew(&["bake", p(&out), "--retarget-from", p(&fox), "-o", p(&bad)]);
    assert_fails(&sinew_target, &out, "imported target", ".sinew target");
}
