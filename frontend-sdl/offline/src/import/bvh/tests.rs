//! The BVH parser on small texts: channel orders, End Sites, 3 and 6 channels, units, every
//! error with its line, and random damage to valid files (no panic; what is accepted bakes).

use sinew::math::{Quat, Vec3};

use super::*;
use crate::bake::{bake, BakeOptions};
use crate::rig::ChannelTarget;

/// Meters, so translations are the file's numbers.
const METERS: BvhOptions = BvhOptions { scale: Some(1.0) };

fn rig(text: &str) -> Rig {
    parse("t", text, &METERS).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn err(text: &str) -> (u32, BvhErrorKind) {
    match parse("t", text, &METERS) {
        Err(BvhError::Text { line, kind, path: None }) => (line, kind),
        other => panic!("expected a text error, got {other:?}\n{text}"),
    }
}

fn channel(rig: &Rig, joint: &str, target: ChannelTarget) -> Option<Vec<f32>> {
    let j = rig.joints.iter().position(|x| x.name == joint)?;
    let clip = rig.clips.first()?;
    clip.channels.iter().find(|c| c.joint == j && c.target == target).map(|c| c.values.clone())
}

fn quat(v: &[f32]) -> Quat<f32> {
    Quat::new(v[0], v[1], v[2], v[3])
}

/// A one-joint file with `channels` and one frame of `values`.
fn one_joint(channels: &str, values: &str) -> String {
    let n = channels.split_whitespace().count();
    format!(
        "HIERARCHY\nROOT a\n{{\n OFFSET 1 2 3\n CHANNELS {n} {channels}\n}}\nMOTION\nFrames: 1\nFrame Time: 0.1\n{values}\n"
    )
}

/// The rotation matrix (rows) by `deg` about axis `axis` (0 x, 1 y, 2 z), in f64.
fn axis_matrix(axis: usize, deg: f64) -> [[f64; 3]; 3] {
    let (s, c) = deg.to_radians().sin_cos();
    match axis {
        0 => [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]],
        1 => [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]],
        _ => [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]],
    }
}

fn mat_mul(a: [[f64; 3]; 3], b: [[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut m = [[0.0; 3]; 3];
    for (i, row) in m.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    m
}

#[test]
fn rotation_is_the_product_of_the_listed_axes_in_order() {
    let angles = [37.0, -71.0, 123.0];
    for order in ["X Y Z", "X Z Y", "Y X Z", "Y Z X", "Z X Y", "Z Y X"] {
        let axes: Vec<usize> = order.split(' ').map(|a| usize::from(a.as_bytes()[0] - b'X')).collect();
        let names: Vec<String> = order.split(' ').map(|a| format!("{a}rotation")).collect();
        let values: Vec<String> = angles.iter().map(f64::to_string).collect();
        let r = rig(&one_joint(&names.join(" "), &values.join(" ")));
        let q = quat(&channel(&r, "a", ChannelTarget::Rotation).unwrap());
        // R = R(first) · R(second) · R(third), applied to column vectors.
        let m = axes.iter().zip(angles).fold(axis_matrix(0, 0.0), |m, (&a, deg)| mat_mul(m, axis_matrix(a, deg)));
        for v in [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]] {
            let got = q.rotate(Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32));
            let want: Vec<f64> = (0..3).map(|i| (0..3).map(|k| m[i][k] * v[k]).sum()).collect();
            for (g, w) in [got.x, got.y, got.z].iter().zip(&want) {
                assert!((f64::from(*g) - w).abs() < 1e-6, "{order}: {got:?} vs {want:?}");
            }
        }
        // No position channel: no translation channel, the OFFSET stays the rest.
        assert_eq!(channel(&r, "a", ChannelTarget::Translation), None);
        assert_eq!(r.joints[0].rest.translation, Vec3::new(1.0, 2.0, 3.0));
    }
}

#[test]
fn position_channels_replace_the_offset_components_they_name() {
    let r = rig(&one_joint("Yposition", "7"));
    assert_eq!(channel(&r, "a", ChannelTarget::Translation).unwrap(), [1.0, 7.0, 3.0]);
    assert_eq!(channel(&r, "a", ChannelTarget::Rotation), None);
    let r = rig(&one_joint("Zrotation Xposition Yposition Zposition", "90 4 5 6"));
    assert_eq!(channel(&r, "a", ChannelTarget::Translation).unwrap(), [4.0, 5.0, 6.0]);
    let q = quat(&channel(&r, "a", ChannelTarget::Rotation).unwrap());
    let h = std::f32::consts::FRAC_1_SQRT_2;
    assert!((q.z - h).abs() < 1e-6 && (q.w - h).abs() < 1e-6, "{q:?}");
}

const TWO_LEVELS: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 90 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 20 0
    }
  }
  JOINT Leg
  {
    OFFSET 5 -10 0
    CHANNELS 3 Xrotation Yrotation Zrotation
    End Site
    {
      OFFSET 0 -40 0
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.5
1 90 2 0 0 0   0 11 0 0 0 0   0 0 0
1 91 2 10 0 0  0 12 0 0 0 5   0 0 30
1 92 2 20 0 0  0 13 0 0 0 10  0 0 60
";

#[test]
fn end_sites_become_joints_and_six_channels_work_on_any_joint() {
    let r = rig(TWO_LEVELS);
    let names: Vec<&str> = r.joints.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["Hips", "Spine", "Spine_end", "Leg", "Leg_end"]);
    let parents: Vec<Option<usize>> = r.joints.iter().map(|j| j.parent).collect();
    assert_eq!(parents, [None, Some(0), Some(1), Some(0), Some(3)]);
    assert_eq!(r.joints[2].rest.translation, Vec3::new(0.0, 20.0, 0.0));
    assert_eq!(r.joints[4].rest.translation, Vec3::new(0.0, -40.0, 0.0));
    assert!(r.joints.iter().all(|j| j.rest.rotation == Quat::IDENTITY && j.rest.scale == Vec3::ONE));
    assert!(r.skins.is_empty() && r.meshes.is_empty() && r.meters_per_unit.is_none());
    let clip = &r.clips[0];
    assert_eq!(clip.name, "t");
    // Hips and Spine: translation and rotation; Leg: rotation; End Sites: nothing.
    assert_eq!(clip.channels.len(), 5);
    assert!(clip.channels.iter().all(|c| c.times == [0.0, 0.5, 1.0] && c.interpolation == Interpolation::Linear));
    assert_eq!(
        channel(&r, "Spine", ChannelTarget::Translation).unwrap(),
        [0.0, 11.0, 0.0, 0.0, 12.0, 0.0, 0.0, 13.0, 0.0]
    );
    assert_eq!(channel(&r, "Hips", ChannelTarget::Translation).unwrap()[3..6], [1.0, 91.0, 2.0]);
    let leg = channel(&r, "Leg", ChannelTarget::Rotation).unwrap();
    let half = 30f32.to_radians();
    assert!((leg[11] - half.cos()).abs() < 1e-6 && (leg[10] - half.sin()).abs() < 1e-6, "{leg:?}");
    assert!(channel(&r, "Leg_end", ChannelTarget::Rotation).is_none());
    assert!(r.notes.iter().any(|n| n == "bvh: 2 End Sites became joints named <parent>_end"), "{:?}", r.notes);
    assert!(r.notes.iter().any(|n| n == "bvh: scale 1 m per file unit (given)"), "{:?}", r.notes);
    // It bakes.
    bake(&r, &BakeOptions::default()).unwrap();
}

#[test]
fn rotation_keys_keep_the_sign_nearest_the_previous_key() {
    let text = "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\n}\nMOTION\nFrames: 3\nFrame Time: 1\n179\n-179\n-170\n";
    let r = rig(text);
    let v = channel(&r, "a", ChannelTarget::Rotation).unwrap();
    let keys: Vec<Quat<f32>> = v.chunks(4).map(quat).collect();
    for w in keys.windows(2) {
        assert!(w[0].dot(w[1]) > 0.0, "{keys:?}");
    }
    // -179° as the quaternion of +181°: x = sin(90.5°) > 0, w = cos(90.5°) < 0.
    assert!(keys[1].x > 0.99 && keys[1].w < 0.0, "{keys:?}");
}

#[test]
fn layout_variants_are_read() {
    // CRLF and lone CR line ends, braces on the name's line, names with spaces, lower case
    // keywords, several roots, tabs, `Frames:n` glued, a joint without CHANNELS.
    let text = "hierarchy\r\nROOT My Hips {\r OFFSET 0 0 0\r\n\tCHANNELS 3 zrotation XROTATION Yrotation\n  JOINT no channels { OFFSET 1 0 0 }\n}\nROOT Second\n{ CHANNELS 1 Xposition OFFSET 0 0 1 end site { OFFSET 0 0 2 } }\nMOTION\nFrames:2\nFrame Time:\t0.25\n\n1 2 3 4\n\n5 6 7 8\n\n";
    let r = rig(text);
    let names: Vec<&str> = r.joints.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["My Hips", "no channels", "Second", "Second_end"]);
    assert_eq!(r.joints[2].parent, None);
    assert_eq!(channel(&r, "Second", ChannelTarget::Translation).unwrap(), [4.0, 0.0, 1.0, 8.0, 0.0, 1.0]);
    assert_eq!(r.clips[0].channels[0].times, [0.0, 0.25]);
    // A byte-order mark.
    let r = rig(&format!("\u{feff}{}", one_joint("Xrotation", "5")));
    assert_eq!(r.joints.len(), 1);
}

#[test]
fn repeated_names_are_made_unique() {
    let text = "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\n JOINT a\n {\n  OFFSET 0 1 0\n  End Site { OFFSET 0 1 0 }\n }\n JOINT a_end { OFFSET 1 0 0 }\n}\nMOTION\nFrames: 1\nFrame Time: 1\n0\n";
    let r = rig(text);
    let names: Vec<&str> = r.joints.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["a", "a#1", "a#1_end", "a_end"]);
    assert!(r.notes.iter().any(|n| n == "bvh: 1 repeated joint names were made unique"), "{:?}", r.notes);
}

#[test]
fn no_frames_or_no_channels_give_no_clip() {
    let r = rig("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\n}\nMOTION\nFrames: 0\nFrame Time: 1\n");
    assert!(r.clips.is_empty());
    assert!(r.notes.iter().any(|n| n == "bvh: no clip (Frames: 0)"), "{:?}", r.notes);
    let r = rig("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n}\nMOTION\nFrames: 5\nFrame Time: 1\n");
    assert!(r.clips.is_empty());
    assert!(r.notes.iter().any(|n| n == "bvh: no clip (no joint has channels)"), "{:?}", r.notes);
    // One frame: single-key channels, which bake.
    let r = rig(&one_joint("Xrotation", "5"));
    assert_eq!(r.clips[0].channels[0].times, [0.0]);
    bake(&r, &BakeOptions::default()).unwrap();
}

/// A humanoid-ish file `height` units tall: the unit guess and its note.
fn tall(height: f64) -> String {
    let h = height / 2.0;
    format!("HIERARCHY\nROOT r\n{{\n OFFSET 0 0 0\n CHANNELS 3 Xposition Yposition Zposition\n End Site {{ OFFSET 0 {h} 0 }}\n JOINT l\n {{\n  OFFSET 0 {} 0\n  End Site {{ OFFSET 0 0 0 }}\n }}\n}}\nMOTION\nFrames: 1\nFrame Time: 1\n0 {h} 0\n", -h)
}

#[test]
fn units_are_guessed_from_the_rest_skeleton_and_noted() {
    for (height, unit, meters) in [
        (1.8, Unit::Meters, 1.0),
        (25.0, Unit::CmuUnits, 0.0254 / 0.45),
        (68.0, Unit::Inches, 0.0254),
        (175.0, Unit::Centimeters, 0.01),
        (1750.0, Unit::Millimeters, 0.001),
    ] {
        assert_eq!(Unit::guess(height), unit);
        assert_eq!(unit.meters(), meters);
        let r = parse("t", &tall(height), &BvhOptions::default()).unwrap();
        let want = (height / 2.0 * meters) as f32;
        assert!((r.joints[1].rest.translation.y - want).abs() < 1e-6 * want, "{height}");
        let t = channel(&r, "r", ChannelTarget::Translation).unwrap();
        assert!((t[1] - want).abs() < 1e-6 * want, "{height}: {t:?}");
        let note = format!(
            "bvh: scale {} m per file unit (auto: the rest skeleton is {height:.2} units across, read as {}; pass a scale to override)",
            meters as f32,
            unit.name()
        );
        assert!(r.notes.contains(&note), "{:?}\nwant {note}", r.notes);
    }
    // A given scale wins.
    let r = parse("t", &tall(175.0), &BvhOptions { scale: Some(0.5) }).unwrap();
    assert_eq!(r.joints[1].rest.translation.y, 43.75);
    for bad in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        assert!(matches!(parse("t", &tall(1.0), &BvhOptions { scale: Some(bad) }), Err(BvhError::InvalidScale { .. })));
    }
}

#[test]
fn each_fault_is_a_typed_error_at_its_line() {
    use BvhErrorKind as K;
    let good = one_joint("Xrotation Yrotation Zrotation", "1 2 3");
    assert_eq!(err(""), (1, K::UnexpectedEnd { expected: "HIERARCHY" }));
    assert_eq!(err("HIERARCH\n"), (1, K::UnexpectedToken { expected: "HIERARCHY", found: "HIERARCH".into() }));
    assert_eq!(err("HIERARCHY\nJOINT a\n"), (2, K::UnexpectedToken { expected: "ROOT", found: "JOINT".into() }));
    assert_eq!(err("HIERARCHY\nROOT\n{\n"), (2, K::UnexpectedEnd { expected: "a joint name on its line" }));
    assert_eq!(err("HIERARCHY\nROOT a\nOFFSET 0 0 0\n"), (3, K::MissingOpenBrace { joint: "a".into() }));
    assert_eq!(
        err("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n JOINT b\n End Site { OFFSET 0 0 0 }\n}\n"),
        (6, K::MissingOpenBrace { joint: "b".into() })
    );
    assert_eq!(
        err("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n JOINT b\n {\n OFFSET 0 0 0\n}\nMOTION\n"),
        (9, K::UnclosedJoint { joint: "a".into(), opened: 3 })
    );
    assert_eq!(
        err("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n JOINT b\n {\n OFFSET 0 0 0\n}\n"),
        (8, K::UnclosedJoint { joint: "a".into(), opened: 3 })
    );
    assert_eq!(
        err("HIERARCHY\nROOT a\n{\n CHANNELS 0\n}\n"),
        (5, K::UnexpectedToken { expected: "OFFSET", found: "}".into() })
    );
    assert_eq!(
        err("HIERARCHY\nROOT a\n{\n OFFSET 0 x 0\n}\n"),
        (4, K::BadNumber { what: "an OFFSET value", found: "x".into() })
    );
    assert_eq!(err("HIERARCHY\nROOT a\n{\n OFFSET 0 nan 0\n}\n"), (4, K::NonFinite { what: "an OFFSET value" }));
    assert_eq!(
        err("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 1 Wrotation\n}\n"),
        (5, K::UnknownChannel { found: "Wrotation".into() })
    );
    assert_eq!(
        err("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 3 Xrotation Yrotation\n}\n"),
        (6, K::ChannelCountMismatch { declared: 3, found: 2 })
    );
    assert_eq!(
        err("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\n Yrotation\n}\n"),
        (6, K::ChannelCountMismatch { declared: 1, found: 2 })
    );
    assert_eq!(
        err("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS -3 Xrotation\n}\n"),
        (5, K::BadNumber { what: "the CHANNELS count", found: "-3".into() })
    );
    assert_eq!(
        err("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 4000000000\n}\n"),
        (5, K::TooLarge { what: "CHANNELS", value: 4_000_000_000, max: MAX_CHANNELS_PER_JOINT as u64 })
    );
    assert_eq!(
        err("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n End Site\n {\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\n }\n}\n"),
        (8, K::UnexpectedToken { expected: "'}' closing the End Site", found: "CHANNELS".into() })
    );
    assert_eq!(
        err("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n OFFSET 0 0 0\n}\n"),
        (5, K::UnexpectedToken { expected: "JOINT, End Site or '}'", found: "OFFSET".into() })
    );
    // MOTION's header.
    let head = "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 2 Xrotation Yrotation\n}\n";
    assert_eq!(err(head), (6, K::UnexpectedEnd { expected: "MOTION" }));
    assert_eq!(
        err(&format!("{head}MOTION\nFrame: 1\n")),
        (8, K::UnexpectedToken { expected: "Frames:", found: "Frame:".into() })
    );
    assert_eq!(
        err(&format!("{head}MOTION\nFrames: -1\n")),
        (8, K::BadNumber { what: "the Frames count", found: "-1".into() })
    );
    assert_eq!(err(&format!("{head}MOTION\nFrames: 1\nFrame Time: 0\n1 2\n")), (9, K::InvalidFrameTime { value: 0.0 }));
    assert_eq!(
        err(&format!("{head}MOTION\nFrames: 1\nFrame Time: -0.1\n1 2\n")),
        (9, K::InvalidFrameTime { value: -0.1 })
    );
    assert_eq!(
        err(&format!("{head}MOTION\nFrames: 1\nFrame Time: inf\n1 2\n")),
        (9, K::NonFinite { what: "the Frame Time" })
    );
    assert_eq!(
        err(&format!("{head}MOTION\nFrames: 1\nFrame Time: 0.1 1 2\n")),
        (9, K::UnexpectedToken { expected: "the end of the Frame Time line", found: "1".into() })
    );
    assert_eq!(
        err(&format!("{head}MOTION\nFrames: 99999999999999\nFrame Time: 0.1\n1 2\n")),
        (8, K::TooLarge { what: "Frames × animated joints", value: 99_999_999_999_999, max: MAX_JOINT_FRAMES })
    );
    // Frames.
    let motion = format!("{head}MOTION\nFrames: 2\nFrame Time: 0.1\n");
    assert_eq!(err(&format!("{motion}1 2\n3\n")), (11, K::TooFewValues { frame: 1, expected: 2, found: 1 }));
    assert_eq!(err(&format!("{motion}1 2\n3 4 5 6\n")), (11, K::TooManyValues { frame: 1, expected: 2, found: 4 }));
    assert_eq!(err(&format!("{motion}1 2\n3 x\n")), (11, K::BadNumber { what: "a frame value", found: "x".into() }));
    assert_eq!(err(&format!("{motion}1 2\n3 NaN\n")), (11, K::NonFinite { what: "a frame value" }));
    assert_eq!(err(&format!("{motion}1 2\n")), (10, K::FrameCountMismatch { declared: 2, found: 1 }));
    assert_eq!(err(&format!("{motion}1 2\n3 4\n\n5 6\n")), (13, K::FrameCountMismatch { declared: 2, found: 3 }));
    assert_eq!(
        err(&format!("{head}MOTION\nFrames: 3\nFrame Time: 1e-50\n1 2\n3 4\n5 6\n")),
        (11, K::FrameTimeTooSmall { frame: 1 })
    );
    assert_eq!(
        err(&format!("{head}MOTION\nFrames: 2\nFrame Time: 1e300\n1 2\n3 4\n")),
        (11, K::NonFinite { what: "a key time (frame × Frame Time)" })
    );
    let pos =
        "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 1 Xposition\n}\nMOTION\nFrames: 1\nFrame Time: 1\n1e300\n";
    assert_eq!(err(pos), (10, K::NonFinite { what: "a position once scaled" }));
    let off = "HIERARCHY\nROOT a\n{\n OFFSET 1e300 0 0\n}\nMOTION\nFrames: 0\nFrame Time: 1\n";
    assert_eq!(err(off), (4, K::NonFinite { what: "an OFFSET once scaled" }));
    // No channels at all: no frame line may follow.
    let none = "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n}\nMOTION\nFrames: 1\nFrame Time: 1\n5\n";
    assert_eq!(err(none), (9, K::TooManyValues { frame: 0, expected: 0, found: 1 }));
    // The good file parses.
    assert_eq!(rig(&good).joints.len(), 1);
}

#[test]
fn joints_past_the_cap_are_refused() {
    // A chain of MAX_JOINTS joints is read (without recursion); one more is refused.
    let chain = |n: usize| {
        let mut t = String::from("HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\n");
        for i in 1..n {
            t.push_str(&format!("JOINT j{i}\n{{\nOFFSET 0 1 0\n"));
        }
        t.push_str(&"}\n".repeat(n));
        t.push_str("MOTION\nFrames: 0\nFrame Time: 1\n");
        t
    };
    assert_eq!(rig(&chain(MAX_JOINTS)).joints.len(), MAX_JOINTS);
    let line = 4 + 3 * u32::try_from(MAX_JOINTS).unwrap() - 3 + 1;
    assert_eq!(err(&chain(MAX_JOINTS + 1)), (line, BvhErrorKind::TooManyJoints { max: MAX_JOINTS }));
    // An End Site counts.
    let mut t = chain(MAX_JOINTS);
    t = t.replacen("OFFSET 0 0 0\n", "OFFSET 0 0 0\nEnd Site { OFFSET 0 0 0 }\n", 1);
    assert!(matches!(err(&t).1, BvhErrorKind::TooManyJoints { .. }));
}

#[test]
fn errors_name_the_file_and_line() {
    let dir = std::env::temp_dir().join(format!("sinew-bvh-unit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.bvh");
    std::fs::write(&path, "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 1 Qrotation\n}\n").unwrap();
    let e = load_file(&path, &BvhOptions::default()).unwrap_err();
    assert_eq!(e.line(), Some(5));
    assert!(matches!(e.kind(), Some(BvhErrorKind::UnknownChannel { .. })));
    let shown = e.to_string();
    assert!(shown.starts_with(&format!("{}: bvh line 5: 'Qrotation' is no channel", path.display())), "{shown}");
    assert!(!shown.contains('\n'));
    // Through the importer: the caller names the file, the message its line.
    let e = crate::import::load(&path, None).unwrap_err();
    assert!(e.to_string().starts_with("bvh line 5: 'Qrotation' is no channel"), "{e}");
    let missing = dir.join("missing.bvh");
    assert!(matches!(load_file(&missing, &BvhOptions::default()), Err(BvhError::Io { .. })));
    // The file stem names the rig and its clip.
    let ok = dir.join("walk.bvh");
    std::fs::write(&ok, one_joint("Xrotation", "3")).unwrap();
    let r = crate::import::load(&ok, None).unwrap();
    assert_eq!((r.name.as_str(), r.clips[0].name.as_str()), ("walk", "walk"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A small deterministic generator (xorshift64*), so the damage below is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Words the damage inserts: the format's keywords, braces, numbers at the edges.
const WORDS: [&str; 24] = [
    "{",
    "}",
    "ROOT",
    "JOINT",
    "End",
    "Site",
    "OFFSET",
    "CHANNELS",
    "MOTION",
    "Frames:",
    "Frame",
    "Time:",
    "Xrotation",
    "Zposition",
    "0",
    "-1",
    "3",
    "6",
    "1e39",
    "nan",
    "99999999999",
    "0.0000001",
    "\n",
    "\r",
];

/// Damages `text` at random: byte-level edits, word insertions, deletions and repeats (one
/// edit in two of three texts, up to four in the rest).
fn damage(text: &str, rng: &mut Rng) -> String {
    let mut b = text.as_bytes().to_vec();
    let edits = if rng.below(3) < 2 { 1 } else { 1 + rng.below(4) };
    for _ in 0..edits {
        let at = rng.below(b.len() + 1);
        match rng.below(6) {
            0 if at < b.len() => b[at] = b" \n{}0123456789.-eXYZ"[rng.below(20)],
            1 if at < b.len() => {
                let end = (at + 1 + rng.below(12)).min(b.len());
                b.drain(at..end);
            }
            2 => {
                let w = WORDS[rng.below(WORDS.len())];
                b.splice(at..at, format!(" {w} ").into_bytes());
            }
            3 if at < b.len() => {
                let end = (at + 1 + rng.below(40)).min(b.len());
                let copy = b[at..end].to_vec();
                b.splice(at..at, copy);
            }
            4 => b.truncate(at),
            _ => b.insert(at.min(b.len()), rng.next() as u8),
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

#[test]
fn damaged_files_never_panic_and_accepted_ones_bake() {
    let sources = [TWO_LEVELS.to_owned(), one_joint("Zrotation Xrotation Yrotation", "1 2 3"), tall(170.0)];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut accepted, mut refused) = (0, 0);
    for i in 0..3000 {
        let text = damage(&sources[i % sources.len()], &mut rng);
        let result = std::panic::catch_unwind(|| parse("d", &text, &BvhOptions::default()));
        match result {
            Ok(Ok(r)) => {
                accepted += 1;
                if let Err(e) = bake(&r, &BakeOptions::default()) {
                    panic!("an accepted file does not bake: {e}\n{text:?}");
                }
            }
            Ok(Err(e)) => {
                refused += 1;
                let shown = e.to_string();
                assert!(!shown.contains('\n') && e.line().is_some_and(|l| l >= 1), "{shown:?}\n{text:?}");
            }
            Err(_) => panic!("the parser panics on {text:?}"),
        }
    }
    assert!(accepted > 100 && refused > 1000, "accepted {accepted}, refused {refused}");
}
