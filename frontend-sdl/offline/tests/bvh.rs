//! The BVH importer on the shared motion-capture files (CMU `01_01.bvh`, bvh_anim's
//! `test_simple.bvh`), cross-checked against an independent loader: three.js r187's
//! `BVHLoader` (three 0.187.0, `frontend-sdl/web/package-lock.json`), run in Node by
//! `tests/bvh/three_bvh.mjs`.
//!
//! Each file is imported through [`import::load`] (its extension, default options: units
//! guessed), baked with the default options and evaluated with `sinew dump`'s code
//! ([`sinew_offline::dump::dump`]) at four times of its clip; three.js samples its clip at the
//! same times with an `AnimationMixer` on its skeleton. Every joint's world position must be
//! within 1e-3 × the model's size (the diagonal of its rest skeleton's box) of three.js's,
//! scaled by the unit three.js's rest skeleton's size gives ([`Unit::guess`]). Joints match by
//! name; three.js names every End Site `ENDSITE`, so End Sites match by their parent.
//!
//! Node and the npm packages are found as `frontend-sdl/web/test/run.sh` finds them: `node` on
//! the `PATH`, the packages in `frontend-sdl/web/node_modules`, installed with `npm ci` when
//! missing or older than the lockfile. Without `node` or `npm` the cross-check is skipped with
//! a printed reason (CI has both).

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use sinew_offline::bake::BakeOptions;
use sinew_offline::dump::{dump, DumpOptions};
use sinew_offline::import::{self, bvh};
use sinew_offline::model::Model;
use sinew_offline::rig::{ChannelTarget, Rig};

use bvh::{BvhOptions, Unit};
use npm::node_modules;

#[path = "support/npm.rs"]
mod npm;

/// The loader the cross-check runs, as its messages name it.
const THREE: &str = "three.js r187 BVHLoader (three 0.187.0)";

/// three.js's bone positions (file units) at rest and at `times`, with the bones' names and
/// parents, and its clip's length.
struct ThreePoses {
    duration: f64,
    names: Vec<String>,
    parents: Vec<Option<usize>>,
    rest: Vec<[f64; 3]>,
    frames: Vec<Vec<[f64; 3]>>,
}

fn three_poses(modules: &Path, file: &Path, times: &[f32]) -> ThreePoses {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bvh/three_bvh.mjs");
    let out = Command::new("node")
        .arg(&script)
        .arg(modules)
        .arg(file)
        .args(times.iter().map(|t| t.to_string()))
        .output()
        .expect("node runs");
    assert!(out.status.success(), "{THREE} on {}:\n{}", file.display(), String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("the script's JSON");
    assert_eq!(v["version"], "0.187.0", "the cross-check is written for {THREE}");
    let point = |p: &Value| -> [f64; 3] { [0, 1, 2].map(|k| p[k].as_f64().expect("a coordinate")) };
    let points = |a: &Value| -> Vec<[f64; 3]> { a.as_array().expect("positions").iter().map(point).collect() };
    let bones = v["bones"].as_array().expect("bones");
    ThreePoses {
        duration: v["duration"].as_f64().expect("a duration"),
        names: bones.iter().map(|b| b["name"].as_str().expect("a name").to_owned()).collect(),
        parents: bones.iter().map(|b| b["parent"].as_u64().map(|p| p as usize)).collect(),
        rest: points(&v["rest"]),
        frames: v["frames"].as_array().expect("frames").iter().map(|f| points(&f["positions"])).collect(),
    }
}

/// The longest side and the diagonal of the box around `points`.
fn extent(points: &[[f64; 3]]) -> (f64, f64) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in points {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let d = [0, 1, 2].map(|k| hi[k] - lo[k]);
    (d.iter().copied().fold(0.0, f64::max), d.iter().map(|x| x * x).sum::<f64>().sqrt())
}

/// The world positions of every joint of `model` at `time` of clip 0, from `sinew dump`'s JSON.
fn dumped(model: &Model, time: Option<f32>) -> (Vec<String>, Vec<[f64; 3]>) {
    let opts = DumpOptions { clip: time.map(|_| 0), time: time.unwrap_or(0.0), ..DumpOptions::default() };
    let json: Value = serde_json::from_str(&dump(model, &opts).expect("dump")).expect("dump's JSON");
    let names = json["joints"].as_array().expect("joints").iter().map(|n| n.as_str().unwrap().to_owned()).collect();
    let world = json["joint_world"]
        .as_array()
        .expect("joint_world")
        .iter()
        .map(|m| [12, 13, 14].map(|k| m[k].as_f64().expect("a matrix entry")))
        .collect();
    (names, world)
}

/// For each three.js bone, the rig joint it is: by name, End Sites by parent.
fn match_bones(three: &ThreePoses, rig: &Rig) -> Vec<usize> {
    let mut map: Vec<usize> = Vec::with_capacity(three.names.len());
    for (b, name) in three.names.iter().enumerate() {
        let j = if name == "ENDSITE" {
            let parent = three.parents[b].map(|p| map[p]).expect("an End Site has a parent");
            let want = format!("{}_end", rig.joints[parent].name);
            rig.joints.iter().position(|j| j.parent == Some(parent) && j.name == want)
        } else {
            rig.joints.iter().position(|j| &j.name == name)
        };
        map.push(j.unwrap_or_else(|| panic!("{THREE}'s bone {b} ({name}) has no joint in sinew's rig")));
    }
    assert_eq!(map.len(), rig.joints.len(), "{THREE} has {} bones, sinew {} joints", map.len(), rig.joints.len());
    map
}

/// Imports `rel`, compares it with three.js at four times, and returns the largest deviation
/// (meters) at each time.
fn cross_check(rel: &str) -> Option<Vec<f64>> {
    let modules = match node_modules() {
        Ok(m) => m,
        Err(why) => {
            eprintln!("skipped: the cross-check of {rel} against {THREE}: {why}");
            return None;
        }
    };
    let path = sinew_assets::path(rel);
    let rig = import::load(&path, None).unwrap_or_else(|e| panic!("{rel}: {e}"));
    // three.js adds position channels to the OFFSET, sinew replaces the OFFSET with them: the
    // two agree where those joints have a zero OFFSET, as in these files.
    let clip = &rig.clips[0];
    for c in clip.channels.iter().filter(|c| c.target == ChannelTarget::Translation) {
        let j = &rig.joints[c.joint];
        assert_eq!(j.rest.translation.to_array(), [0.0; 3], "{rel}: {} has position channels and an OFFSET", j.name);
    }
    let model = Model::from_rig(&rig, &BakeOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let (_, end) = clip.time_range();
    let times: Vec<f32> = [0.0, 0.31, 0.62, 0.93].iter().map(|f| f * end).collect();

    let three = three_poses(&modules, &path, &times);
    assert!(
        (f64::from(end) - three.duration).abs() < 1e-4,
        "{rel}: the clip lasts {end} s, {THREE}'s {} s",
        three.duration
    );
    let map = match_bones(&three, &rig);
    let (three_size, _) = extent(&three.rest);
    let scale = Unit::guess(three_size).meters();
    // The same unit as the import's: its rest joints are three.js's, scaled.
    let (names, rest) = dumped(&model, None);
    assert_eq!(names, rig.joints.iter().map(|j| j.name.clone()).collect::<Vec<_>>(), "{rel}: joint order");
    let (_, diagonal) = extent(&rest);
    let tolerance = 1e-3 * diagonal;
    let deviation = |sinew: &[[f64; 3]], three_points: &[[f64; 3]]| -> (f64, usize) {
        let mut worst = (0.0, 0);
        for (b, &j) in map.iter().enumerate() {
            let (s, t) = (sinew[j], three_points[b]);
            let d = (0..3).map(|k| (s[k] - t[k] * scale).powi(2)).sum::<f64>().sqrt();
            if d > worst.0 {
                worst = (d, j);
            }
        }
        worst
    };
    let (d, j) = deviation(&rest, &three.rest);
    assert!(d <= tolerance, "{rel} at rest: joint {} is {d} m from {THREE}'s (tolerance {tolerance})", names[j]);
    let mut worst = Vec::new();
    for (t, positions) in times.iter().zip(&three.frames) {
        let (_, world) = dumped(&model, Some(*t));
        let (d, j) = deviation(&world, positions);
        eprintln!(
            "{rel} at {t} s: largest deviation from {THREE}: {d:.3e} m (joint {}; tolerance {tolerance:.3e})",
            names[j]
        );
        assert!(d <= tolerance, "{rel} at {t} s: joint {} is {d} m from {THREE}'s (tolerance {tolerance} m)", names[j]);
        worst.push(d);
    }
    Some(worst)
}

#[test]
fn cmu_01_01_matches_three_js() {
    let Some(worst) = cross_check("bvh/cmu/01_01.bvh") else { return };
    assert_eq!(worst.len(), 4);
}

#[test]
fn bvh_anim_test_simple_matches_three_js() {
    let Some(worst) = cross_check("bvh/bvh_anim/test_simple.bvh") else { return };
    assert_eq!(worst.len(), 4);
}

/// The CMU file: its skeleton, clip, units and note.
#[test]
fn cmu_01_01_imports() {
    let rig = bvh::load_file(&sinew_assets::path("bvh/cmu/01_01.bvh"), &BvhOptions::default()).unwrap();
    // 31 joints and 7 End Sites.
    assert_eq!(rig.joints.len(), 38);
    assert_eq!(rig.joints.iter().filter(|j| j.name.ends_with("_end")).count(), 7);
    assert_eq!(rig.joints[0].name, "Hips");
    assert!(rig.joints.iter().any(|j| j.name == "LeftToeBase_end"));
    let clip = &rig.clips[0];
    assert_eq!(clip.name, "01_01");
    // The root: translation and rotation; every other joint: rotation.
    assert_eq!(clip.channels.len(), 32);
    let times = &clip.channels[0].times;
    assert_eq!(times.len(), 2752);
    assert!((times[2751] - 2751.0 * 0.0083333).abs() < 1e-4);
    let note = "bvh: scale 0.056444444 m per file unit (auto: the rest skeleton is 26.07 units across, read as CMU units (1/0.45 inch); pass a scale to override)";
    assert!(rig.notes.iter().any(|n| n == note), "{:?}", rig.notes);
    // A given scale: centimeters would make the figure 26 cm across.
    let cm = bvh::load_file(&sinew_assets::path("bvh/cmu/01_01.bvh"), &BvhOptions { scale: Some(0.01) }).unwrap();
    let ratio = cm.joints[2].rest.translation.y / rig.joints[2].rest.translation.y;
    assert!((ratio - 0.01 / (0.0254 / 0.45)).abs() < 1e-6, "{ratio}");
}
