//! `sinew dump` layers, through the library: override layers (full body and masked) and
//! additive layers blended over the base clip, and the `--layer` / `--additive` parsers.
//!
//! The model is the demo's procedural humanoid (clips idle, walk, run, wave; joints named
//! `root`, `hips`, `spine`, …, `r_clavicle`, `r_upper_arm`, …).

use sinew::math::{Quat, SoaTransform, Transform};
use sinew_offline::bake::BakeOptions;
use sinew_offline::builtin::humanoid_rig;
use sinew_offline::dump::{blended_pose, dump, parse_additive, parse_layer, AdditiveSpec, DumpOptions, LayerSpec};
use sinew_offline::model::Model;

fn humanoid() -> Model {
    Model::from_rig(&humanoid_rig(), &BakeOptions::default()).expect("bake the humanoid")
}

fn opts(m: &Model, clip: &str, time: f32) -> DumpOptions {
    DumpOptions { clip: Some(m.find_clip(clip).expect("clip")), time, ..DumpOptions::default() }
}

fn layer(s: &str) -> LayerSpec {
    parse_layer(s).expect("layer spec")
}

fn additive(s: &str) -> AdditiveSpec {
    parse_additive(s).expect("additive spec")
}

/// Every number of the dump's `joint_world`, `joint_matrices` and `skinned_positions`.
fn numbers(m: &Model, o: &DumpOptions) -> Vec<f64> {
    let v: serde_json::Value = serde_json::from_str(&dump(m, o).expect("dump")).expect("json");
    let mut out = Vec::new();
    for key in ["joint_world", "joint_matrices", "skinned_positions"] {
        for row in v[key].as_array().expect(key) {
            out.extend(row.as_array().expect("row").iter().map(|x| x.as_f64().expect("number")));
        }
    }
    out
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

fn joint(pose: &[SoaTransform<f32>], j: usize) -> Transform<f32> {
    pose[j / 4].lane(j % 4)
}

/// Largest difference of two local transforms: translation (m) or rotation angle (rad).
fn local_diff(a: &Transform<f32>, b: &Transform<f32>) -> f32 {
    (a.translation - b.translation).max_abs().max(a.rotation.angle_between(b.rotation))
}

#[test]
fn a_layer_of_weight_zero_changes_nothing() {
    let m = humanoid();
    let base = opts(&m, "walk", 0.37);
    let with = DumpOptions { layers: vec![layer("run:0")], ..base.clone() };
    let d = max_diff(&numbers(&m, &base), &numbers(&m, &with));
    assert!(d < 1e-6, "{d}");
    // And with a mask too.
    let with = DumpOptions { layers: vec![layer("wave:0:spine:2")], ..base.clone() };
    assert!(max_diff(&numbers(&m, &base), &numbers(&m, &with)) < 1e-6);
}

#[test]
fn a_full_body_layer_of_weight_one_is_that_clip_alone() {
    let m = humanoid();
    for (base_clip, top, t) in [("walk", "run", 0.37), ("idle", "walk", 0.8), ("run", "idle", 2.5)] {
        let alone = opts(&m, top, t);
        // Under the full layer, the base and a half layer below it do not show.
        let layered =
            DumpOptions { layers: vec![layer("wave:0.5"), layer(&format!("{top}:1"))], ..opts(&m, base_clip, t) };
        let d = max_diff(&numbers(&m, &alone), &numbers(&m, &layered));
        assert!(d < 1e-5, "{base_clip} under {top}: {d}");
        // It differs from the base alone: the layer did something.
        assert!(max_diff(&numbers(&m, &opts(&m, base_clip, t)), &numbers(&m, &layered)) > 1e-2);
    }
}

#[test]
fn a_masked_layer_covers_its_subtree_with_the_fade_in() {
    let m = humanoid();
    let s = m.skeleton();
    let t = 0.45;
    let walk = blended_pose(&m, &opts(&m, "walk", t)).unwrap();
    let run = blended_pose(&m, &opts(&m, "run", t)).unwrap();
    // The run over the spine's subtree, fading in over two levels: spine 1/3, chest 2/3, the
    // neck, head, clavicles, arms and hands fully; the root, hips and legs stay the walk's.
    let mixed = blended_pose(&m, &DumpOptions { layers: vec![layer("run:1:spine:2")], ..opts(&m, "walk", t) }).unwrap();
    let spine = s.find("spine").unwrap();
    let (mut outside, mut inside) = (0, 0);
    for j in 0..s.num_joints() {
        let (got, a, b) = (joint(&mixed, j), joint(&walk, j), joint(&run, j));
        let depth = {
            let (mut d, mut k) = (None, Some(j));
            let mut steps = 0;
            while let Some(x) = k {
                if x == spine {
                    d = Some(steps);
                    break;
                }
                k = s.parent(x);
                steps += 1;
            }
            d
        };
        match depth {
            None => {
                assert!(local_diff(&got, &a) < 1e-6, "joint {j} outside the mask moved");
                outside += 1;
            }
            Some(d) => {
                let w = ((d + 1) as f32 / 3.0).min(1.0);
                let rotation = a.rotation.nlerp(b.rotation, w);
                let translation = a.translation * (1.0 - w) + b.translation * w;
                let expected = Transform { translation, rotation, scale: got.scale };
                assert!(local_diff(&got, &expected) < 1e-5, "joint {j} at depth {d}");
                inside += 1;
            }
        }
    }
    assert_eq!((outside, inside), (10, 12));
    // In world space too: the legs and hips of the dump are the walk's, the head is not.
    let world = |o: &DumpOptions| -> Vec<Vec<f64>> {
        let v: serde_json::Value = serde_json::from_str(&dump(&m, o).unwrap()).unwrap();
        v["joint_world"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect())
            .collect()
    };
    let (w0, w1) = (
        world(&opts(&m, "walk", t)),
        world(&DumpOptions { layers: vec![layer("run:1:spine:2")], ..opts(&m, "walk", t) }),
    );
    for name in ["hips", "l_foot", "r_toe"] {
        let j = s.find(name).unwrap();
        assert!(max_diff(&w0[j], &w1[j]) < 1e-6, "{name}");
    }
    assert!(max_diff(&w0[s.find("head").unwrap()], &w1[s.find("head").unwrap()]) > 1e-2);
    // Half a layer covers half, masked layers stack: the wave over the right arm (no fade)
    // above a half-weight run over the body.
    let stacked = blended_pose(
        &m,
        &DumpOptions { layers: vec![layer("run:0.5"), layer("wave:1:r_upper_arm")], ..opts(&m, "walk", t) },
    )
    .unwrap();
    let wave = blended_pose(&m, &opts(&m, "wave", t)).unwrap();
    let arm = s.find("r_forearm").unwrap();
    assert!(local_diff(&joint(&stacked, arm), &joint(&wave, arm)) < 1e-6);
    let thigh = s.find("l_thigh").unwrap();
    let half = joint(&walk, thigh).rotation.nlerp(joint(&run, thigh).rotation, 0.5);
    assert!(joint(&stacked, thigh).rotation.angle_between(half) < 1e-5);
}

#[test]
fn an_additive_layer_added_and_subtracted_cancels() {
    let m = humanoid();
    let s = m.skeleton();
    for (base_clip, add, t) in [("walk", "walk", 0.3), ("idle", "wave", 0.7), ("run", "idle", 1.9)] {
        let base = opts(&m, base_clip, t);
        let both = DumpOptions {
            additive: vec![additive(&format!("{add}:-1")), additive(&format!("{add}:1"))],
            ..base.clone()
        };
        let d = max_diff(&numbers(&m, &base), &numbers(&m, &both));
        assert!(d < 1e-5, "{base_clip} ± {add}: {d}");
        // Alone, the additive layer moves the pose; at weight 1 it adds the clip's motion since
        // its first frame.
        let one = DumpOptions { additive: vec![additive(&format!("{add}:1"))], ..base.clone() };
        let pose = blended_pose(&m, &one).unwrap();
        let (b, a, first) = (
            blended_pose(&m, &base).unwrap(),
            blended_pose(&m, &opts(&m, add, t)).unwrap(),
            blended_pose(&m, &opts(&m, add, 0.0)).unwrap(),
        );
        let mut moved = 0.0f32;
        for j in 0..s.num_joints() {
            let (p, b, a, f) = (joint(&pose, j), joint(&b, j), joint(&a, j), joint(&first, j));
            let rotation: Quat<f32> = (a.rotation * f.rotation.conjugate()).normalize() * b.rotation;
            let expected =
                Transform { translation: b.translation + (a.translation - f.translation), rotation, scale: p.scale };
            assert!(local_diff(&p, &expected) < 1e-5, "{add} onto {base_clip}: joint {j}");
            moved = moved.max(local_diff(&p, &b));
        }
        assert!(moved > 1e-2, "{add} onto {base_clip} did not move anything");
    }
    // A clip at its first frame adds nothing.
    let base = opts(&m, "run", 0.2);
    let at_start = DumpOptions { time: 0.0, additive: vec![additive("walk:1")], ..opts(&m, "run", 0.0) };
    assert!(max_diff(&numbers(&m, &DumpOptions { time: 0.0, ..base }), &numbers(&m, &at_start)) < 1e-5);
}

#[test]
fn specs_parse_and_bad_ones_are_refused() {
    assert_eq!(parse_layer("walk:0.5"), Ok(LayerSpec { clip: "walk".into(), weight: 0.5, mask: None, fade_in: 0 }));
    assert_eq!(
        parse_layer("wave:1:spine:2"),
        Ok(LayerSpec { clip: "wave".into(), weight: 1.0, mask: Some("spine".into()), fade_in: 2 })
    );
    // Names with colons: the first number is the weight, a last integer the fade-in.
    assert_eq!(
        parse_layer("Armature:wave:0.25:mixamorig:Spine"),
        Ok(LayerSpec { clip: "Armature:wave".into(), weight: 0.25, mask: Some("mixamorig:Spine".into()), fade_in: 0 })
    );
    assert_eq!(
        parse_layer("3:1:mixamorig:Spine:4"),
        Ok(LayerSpec { clip: "3".into(), weight: 1.0, mask: Some("mixamorig:Spine".into()), fade_in: 4 })
    );
    assert_eq!(parse_additive("walk:-1"), Ok(AdditiveSpec { clip: "walk".into(), weight: -1.0 }));
    assert_eq!(parse_additive("a:b:2.5"), Ok(AdditiveSpec { clip: "a:b".into(), weight: 2.5 }));
    for (bad, why) in [
        ("walk", "expected CLIP:WEIGHT[:MASK_JOINT[:FADE_IN]]"),
        ("walk:", "expected CLIP:WEIGHT[:MASK_JOINT[:FADE_IN]]"),
        ("walk:fast", "expected CLIP:WEIGHT[:MASK_JOINT[:FADE_IN]]"),
        (":1", "the clip name is empty"),
        ("walk:1.5", "the weight must be a number from 0 to 1"),
        ("walk:-0.1", "the weight must be a number from 0 to 1"),
        ("walk:NaN", "the weight must be a number from 0 to 1"),
        ("walk:inf", "the weight must be a number from 0 to 1"),
        ("walk:1:", "the mask joint name is empty"),
        ("walk:1:spine:70000", "the fade-in must be 0 to 65535 levels"),
        ("walk:1:spine:-1", "the fade-in must be 0 to 65535 levels"),
    ] {
        assert_eq!(parse_layer(bad), Err(format!("'{bad}': {why}")));
    }
    for (bad, why) in [
        ("walk", "expected CLIP:WEIGHT"),
        (":1", "the clip name is empty"),
        ("walk:x", "the weight must be a finite number"),
        ("walk:inf", "the weight must be a finite number"),
        ("walk:NaN", "the weight must be a finite number"),
        ("walk:", "the weight must be a finite number"),
    ] {
        assert_eq!(parse_additive(bad), Err(format!("'{bad}': {why}")));
    }
    // Names the model does not have are refused by the dump.
    let m = humanoid();
    let base = opts(&m, "walk", 0.1);
    let e = dump(&m, &DumpOptions { layers: vec![layer("jump:1")], ..base.clone() }).unwrap_err();
    assert!(e.contains("no clip named or numbered 'jump'"), "{e}");
    let e = dump(&m, &DumpOptions { layers: vec![layer("run:1:tail")], ..base.clone() }).unwrap_err();
    assert!(e.contains("no joint named 'tail'"), "{e}");
    let e = dump(&m, &DumpOptions { additive: vec![additive("7:1")], ..base.clone() }).unwrap_err();
    assert!(e.contains("'7'"), "{e}");
    // A clip index works as a name.
    assert!(dump(&m, &DumpOptions { layers: vec![layer("2:1")], ..base }).is_ok());
}
