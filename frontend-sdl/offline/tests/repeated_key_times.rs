//! A glTF time given twice in a row is a jump: the key at the later index holds from that time
//! on, in the import model and through the default bake; times that decrease stay an error.

use sinew::clip::RotationInterpolation;
use sinew::math::{Mat4, SoaTransform};
use sinew_offline::bake::BakeOptions;
use sinew_offline::eval::{eval_channel, eval_weights};
use sinew_offline::import::gltf::{load_bytes, GltfError};
use sinew_offline::model::Model;
use sinew_offline::morph::sample_weights;
use sinew_offline::rig::{Interpolation, Rig};
use sinew_tests::corpus::gltf::SmallGltf;
use sinew_tests::corpus::morph::MorphGltf;

/// A rotation of `a` radians about z.
fn turn(a: f32) -> [f32; 4] {
    [0.0, 0.0, (a / 2.0).sin(), (a / 2.0).cos()]
}

/// The angle about z of a rotation about z.
fn angle(q: [f64; 4]) -> f64 {
    2.0 * q[2].atan2(q[3])
}

/// The small skinned model with its bone's rotation channel keyed at `times` to the angles
/// `angles` with `interpolation` (cubic splines with zero tangents).
fn model(times: &[f32], angles: &[f32], interpolation: &str) -> Vec<u8> {
    let cubic = interpolation == "CUBICSPLINE";
    let rotations =
        angles.iter().flat_map(|&a| if cubic { vec![[0.0; 4], turn(a), [0.0; 4]] } else { vec![turn(a)] }).collect();
    let mut s = SmallGltf { times: times.to_vec(), rotations, ..SmallGltf::new() };
    if interpolation != "LINEAR" {
        s = s.edit(r#""interpolation":"LINEAR""#, &format!(r#""interpolation":"{interpolation}""#));
    }
    s.glb()
}

fn import(bytes: &[u8]) -> Result<Rig, GltfError> {
    load_bytes(bytes, None, "jump")
}

/// The bone's rotation angle at `t` in the import model.
fn imported(rig: &Rig, t: f32) -> f64 {
    angle(eval_channel(&rig.clips[0].channels[0], f64::from(t)))
}

/// The bone's world rotation angle at `t` in the default bake, sampled as players sample.
fn baked(model: &Model, t: f32) -> f64 {
    let mut pose: Vec<SoaTransform<f32>> = Vec::new();
    let mut world: Vec<Mat4<f32>> = Vec::new();
    model.sample(Some(0), t, RotationInterpolation::NlerpCorrected, &mut Vec::new(), &mut pose).expect("samples");
    model.world(&pose, &mut world).expect("composes");
    let bone = model.skeleton().find("bone").expect("the bone");
    let x = world[bone].cols[0];
    f64::from(x[1]).atan2(f64::from(x[0]))
}

/// Times around the jump at 0.5 and the angle each must show: the left segment up to just
/// before it, the later key at it and after.
fn expected(interpolation: Interpolation) -> Vec<(f32, f64)> {
    // Keys: 0 at 0 s, 0.4 at 0.5 s, 1.2 at 0.5 s again, 1.6 at 1 s.
    let before = 0.5 - 1e-3;
    match interpolation {
        Interpolation::Linear => {
            vec![
                (0.25, 0.2),
                (before, 0.4 * 0.998),
                (0.5, 1.2),
                (0.5 + 1e-3, 1.2 + 0.4 * 0.002),
                (0.75, 1.4),
                (1.0, 1.6),
            ]
        }
        Interpolation::Step => vec![(0.25, 0.0), (before, 0.0), (0.5, 1.2), (0.5 + 1e-3, 1.2), (0.75, 1.2), (1.0, 1.6)],
        // Hermite with zero tangents: smoothstep between the keys.
        Interpolation::CubicSpline => {
            let smooth = |s: f64| s * s * (3.0 - 2.0 * s);
            vec![
                (0.25, 0.4 * smooth(0.5)),
                (before, 0.4 * smooth(0.998)),
                (0.5, 1.2),
                (0.5 + 1e-3, 1.2 + 0.4 * smooth(0.002)),
                (0.75, 1.2 + 0.4 * smooth(0.5)),
                (1.0, 1.6),
            ]
        }
    }
}

#[test]
fn a_repeated_key_time_is_a_jump_to_the_later_key() {
    let times = [0.0, 0.5, 0.5, 1.0];
    let angles = [0.0, 0.4, 1.2, 1.6];
    for (name, interpolation) in
        [("LINEAR", Interpolation::Linear), ("STEP", Interpolation::Step), ("CUBICSPLINE", Interpolation::CubicSpline)]
    {
        let rig = import(&model(&times, &angles, name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let c = &rig.clips[0].channels[0];
        assert_eq!(c.interpolation, interpolation);
        // The earlier key moved one f32 step down: strictly increasing, the jump within it.
        assert_eq!(c.times, [0.0, 0.5f32.next_down(), 0.5, 1.0], "{name}");
        assert!(
            rig.notes
                .iter()
                .any(|n| n == r#"animation 0 channel 0 (node "bone" rotation): 1 repeated key time read as a jump"#),
            "{name}: {:?}",
            rig.notes
        );
        let bake = Model::from_rig(&rig, &BakeOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        for (t, want) in expected(interpolation) {
            let (got, played) = (imported(&rig, t), baked(&bake, t));
            assert!((got - want).abs() < 1e-5, "{name} at {t}: imported {got}, want {want}");
            assert!((played - want).abs() < 1e-3, "{name} at {t}: baked {played}, want {want}");
        }
    }
}

#[test]
fn a_time_given_three_times_holds_the_last_key() {
    let rig = import(&model(&[0.0, 0.5, 0.5, 0.5, 1.0], &[0.0, 0.4, 0.8, 1.2, 1.6], "LINEAR")).expect("imports");
    let c = &rig.clips[0].channels[0];
    assert_eq!(c.times, [0.0, 0.5f32.next_down().next_down(), 0.5f32.next_down(), 0.5, 1.0]);
    assert!((imported(&rig, 0.5) - 1.2).abs() < 1e-6 && (imported(&rig, 0.499) - 0.4 * 0.998).abs() < 1e-5);
    assert!(rig.notes.iter().any(|n| n.ends_with("(node \"bone\" rotation): 2 repeated key times read as jumps")));
}

#[test]
fn keys_sharing_the_first_time_keep_the_last() {
    // Nothing comes before the first time: the keys before the last there are dropped.
    let rig = import(&model(&[0.0, 0.0, 1.0], &[0.0, 0.4, 1.6], "CUBICSPLINE")).expect("imports");
    let c = &rig.clips[0].channels[0];
    assert_eq!(c.times, [0.0, 1.0]);
    assert_eq!(c.values.len(), 2 * 12, "two keys of in-tangent, value and out-tangent");
    assert!((imported(&rig, 0.0) - 0.4).abs() < 1e-6 && (imported(&rig, 1.0) - 1.6).abs() < 1e-6);
    assert_eq!(rig.clips[0].time_range(), (0.0, 1.0));
    let note = r#"animation 0 channel 0 (node "bone" rotation): 1 repeated key time read as a jump; 1 of the keys at its first time dropped, the last of them kept"#;
    assert!(rig.notes.iter().any(|n| n == note), "{:?}", rig.notes);
}

#[test]
fn decreasing_key_times_stay_an_error() {
    for (times, key) in [(vec![0.0, 1.0, 0.5], 2), (vec![0.0, 0.5, 0.5, 0.25], 3), (vec![0.5, 0.5, 0.25], 2)] {
        let angles = vec![0.0; times.len()];
        let err = import(&model(&times, &angles, "LINEAR")).expect_err("decreasing times");
        assert!(
            matches!(err, GltfError::UnsortedKeyTimes { animation: 0, channel: 0, key: k } if k == key),
            "{times:?}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("animation 0 channel 0: key time {key} is less than the previous one"),
            "{times:?}"
        );
    }
}

#[test]
fn a_weights_channel_jumps_alike() {
    // The plate's STEP weights channel keyed at 0, 1 and 1 s (a new accessor 16 on the first
    // three floats of its own values, 0, 1, 1): [0, 1] from 0 s, [1, 0] for one f32 step before
    // 1 s, [0.5, 0.5] from 1 s on.
    let times = r#"{"bufferView":14,"componentType":5126,"count":3,"type":"SCALAR","min":[0],"max":[1]}"#;
    let last = r#"{"bufferView":16,"componentType":5126,"count":4,"type":"SCALAR"}]"#;
    let bytes = MorphGltf::new()
        .edit(last, &format!("{},{times}]", &last[..last.len() - 1]))
        .edit(
            r#"{"input":11,"output":13,"interpolation":"STEP"}"#,
            r#"{"input":16,"output":13,"interpolation":"STEP"}"#,
        )
        .gltf();
    let rig = import(&bytes).expect("imports");
    let note = r#"animation 0 channel 2 (node "plate" weights): 1 repeated key time read as a jump"#;
    assert!(rig.notes.iter().any(|n| n == note), "{:?}", rig.notes);
    let plate = rig.meshes.iter().position(|m| m.skin.is_none()).expect("the plate, the unskinned mesh");
    let channel = rig.clips[0].weights.iter().find(|w| w.mesh == plate).expect("the plate's weights");
    assert_eq!(channel.times, [0.0, 1.0f32.next_down(), 1.0]);
    let bake = Model::from_rig(&rig, &BakeOptions::default()).expect("bakes");
    let asset = bake.asset();
    for (t, want) in [(0.5f32, [0.0, 1.0]), (0.999, [0.0, 1.0]), (1.0, [0.5, 0.5]), (1.2, [0.5, 0.5])] {
        let got = eval_weights(channel, 2, f64::from(t));
        assert!((0..2).all(|i| (got[i] - want[i]).abs() < 1e-6), "imported at {t}: {got:?}");
        let played = sample_weights(&asset, plate, Some(0), t).expect("samples");
        assert!((0..2).all(|i| (f64::from(played[i]) - want[i]).abs() < 1e-3), "baked at {t}: {played:?}");
    }
}
