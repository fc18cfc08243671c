//! Unit tests of the baker's parts: the work budget, key reduction, rotation angles, quantized
//! times, the skeleton's names and the writer's round trip through the parser. The bakes of
//! whole models are tested in `tests/tests/` (sizes, bytes, errors, the work budget).

use sinew::asset::Asset;
use sinew::math::Transform;

use super::measure::angle;
use super::quantize::encode_quantized;
use super::reduce::reduce;
use super::skeleton::skeleton_of;
use super::work::Work;
use super::write::{write_file, EncClip};
use super::{bake, BakeError, BakeOptions};
use crate::rig::{ChannelTarget, Interpolation, Rig, RigChannel, RigClip, RigJoint};

fn joint(name: &str, parent: Option<usize>) -> RigJoint {
    RigJoint { name: name.into(), parent, rest: Transform::IDENTITY }
}

fn translation(times: &[f32], xs: &[f32]) -> RigChannel {
    RigChannel {
        joint: 0,
        target: ChannelTarget::Translation,
        interpolation: Interpolation::Linear,
        times: times.to_vec(),
        values: xs.iter().flat_map(|&x| [x, 0.0, 0.0]).collect(),
    }
}

#[test]
fn work_is_spent_only_when_it_fits() {
    let mut w = Work { left: 10 };
    assert!(w.spend(4));
    assert!(!w.spend(7));
    assert_eq!(w.left, 6, "a refused spend takes nothing");
    assert!(w.spend(6));
    assert_eq!(w.left, 0);
    assert!(w.spend(0));
    assert!(!w.spend(1));
}

#[test]
fn reduction_keeps_the_keys_a_line_cannot_reproduce() {
    let times = [0.0, 0.25, 0.5, 0.75, 1.0];
    let mut work = Work { left: u64::MAX };
    // Constant: one key.
    assert_eq!(reduce(&translation(&times, &[1.0; 5]), 1e-6, 0.0, &mut work), Some(vec![0]));
    // On a line: the ends.
    assert_eq!(reduce(&translation(&times, &[0.0, 1.0, 2.0, 3.0, 4.0]), 1e-6, 0.0, &mut work), Some(vec![0, 4]));
    // A corner at key 2: it is kept.
    assert_eq!(reduce(&translation(&times, &[0.0, 1.0, 2.0, 1.0, 0.0]), 1e-6, 0.0, &mut work), Some(vec![0, 2, 4]));
    // STEP keeps every change.
    let mut step = translation(&times, &[0.0, 0.0, 1.0, 1.0, 2.0]);
    step.interpolation = Interpolation::Step;
    assert_eq!(reduce(&step, 1e-6, 0.0, &mut work), Some(vec![0, 2, 4]));
}

#[test]
fn reduction_stops_when_the_budget_runs_out() {
    let c = translation(&[0.0, 0.25, 0.5, 0.75, 1.0], &[0.0, 1.0, 2.0, 1.0, 0.0]);
    let mut work = Work { left: 2 };
    assert_eq!(reduce(&c, 1e-6, 0.0, &mut work), None);
    assert_eq!(work.left, 0, "every step that fitted was taken");
}

#[test]
fn angle_ignores_the_quaternion_sign() {
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let id = [0.0, 0.0, 0.0, 1.0];
    let quarter = [0.0, 0.0, h, h];
    assert_eq!(angle(id, id), 0.0);
    assert!((angle(id, quarter) - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
    assert!((angle(id, quarter.map(|v| -v)) - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
    assert_eq!(angle(quarter, quarter.map(|v| -v)), 0.0);
}

#[test]
fn quantized_times_must_stay_distinct() {
    let c = translation(&[0.0, 0.5, 0.500001, 1.0], &[0.0, 1.0, 2.0, 3.0]);
    // Two keys 1 µs apart fall on one 16-bit time in a 1 s clip.
    assert!(encode_quantized(&c, &[0, 1, 2, 3], 0.0, 1.0).is_none());
    let t = encode_quantized(&c, &[0, 1, 3], 0.0, 1.0).expect("distinct times");
    assert_eq!(t.keys, 3);
    // Times, then min and scale, then 3 components per key.
    assert_eq!(t.data.len(), 3 * 2 + 6 * 4 + 3 * 3 * 2);
}

#[test]
fn skeleton_names_are_cut_and_made_unique() {
    let long = "x".repeat(300);
    let rig = Rig {
        joints: vec![joint(&long, None), joint(&long, Some(0)), joint("a", Some(1)), joint("a", Some(0))],
        ..Rig::default()
    };
    let skel = skeleton_of(&rig).expect("valid");
    assert_eq!(skel.parents, [-1, 0, 1, 0]);
    let max = sinew::limits::MAX_NAME_LEN;
    assert_eq!(skel.names[0], "x".repeat(max));
    assert_eq!(skel.names[1], format!("{}~2", "x".repeat(max - 2)));
    assert_eq!(skel.names[2..], ["a", "a~2"]);
    // A parent after its child is refused.
    let rig = Rig { joints: vec![joint("a", Some(1)), joint("b", None)], ..Rig::default() };
    assert!(matches!(skeleton_of(&rig), Err(BakeError::Invalid(_))));
}

#[test]
fn written_sections_parse() {
    let rig = Rig { joints: vec![joint("root", None), joint("tip", Some(0))], ..Rig::default() };
    let skel = skeleton_of(&rig).expect("valid");
    let clip = EncClip { name: "empty".into(), start: 0.0, end: 1.0, tracks: Vec::new() };
    let bytes = write_file(&skel, &[], &[], &[&clip]);
    let a = Asset::parse(&bytes).expect("parses");
    assert_eq!(a.clip(0).map(|c| c.num_tracks()), Some(0));
    // `bake` writes the same skeleton and clip for a rig of that clip.
    let rig = Rig { clips: vec![RigClip { name: "empty".into(), ..RigClip::default() }], ..rig };
    let (baked, report) = bake(&rig, &BakeOptions::default()).expect("bakes");
    assert_eq!(report.bytes, baked.len());
    assert_eq!(report.clips.len(), 1);
    assert!(!report.clips[0].fallback);
}
