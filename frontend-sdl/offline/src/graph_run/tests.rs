//! Graph runs on Fox (the issue's JSON): the idle state equals the Survey clip, and the
//! transitions after `--set speed=2@1.0` (inertialized) and back (crossfaded) do not pop.

use sinew::clip::RotationInterpolation;
use sinew::graph::TransitionBlend;

use super::*;
use crate::bake::BakeOptions;
use crate::graph_file::GraphFile;

/// The minimal graph for Fox (idle, and a synced walk/run blend space), shared by the graph tests.
const GRAPH: &str = include_str!("../../tests/data/fox_graph.json");

fn fox() -> Model {
    let path = sinew_assets::path("gltf/Fox/Fox.glb");
    Model::load(&path, None, &BakeOptions::default()).expect("Fox")
}

fn file(model: &Model, json: &str) -> GraphFile {
    GraphFile::parse(json, |k| model.find_clip(k), model.asset().num_clips()).unwrap()
}

fn set(s: &str) -> SetSpec {
    parse_set(s).unwrap()
}

#[test]
fn set_specs() {
    assert_eq!(set("speed=2@1.0"), SetSpec { name: "speed".into(), value: "2".into(), at: 1.0 });
    assert_eq!(set(" jump = true @ 0").value, "true");
    for bad in ["speed2@1", "speed=2", "=2@1", "speed=@1", "speed=2@-1", "speed=2@x"] {
        assert!(parse_set(bad).is_err(), "{bad}");
    }
}

fn max_diff(a: &[SoaTransform<f32>], b: &[SoaTransform<f32>], joints: usize) -> f32 {
    (0..joints)
        .map(|j| {
            let (x, y) = (a[j / 4].lane(j % 4), b[j / 4].lane(j % 4));
            (x.translation - y.translation).max_abs().max(x.rotation.angle_between(y.rotation))
        })
        .fold(0.0, f32::max)
}

#[test]
fn idle_is_the_survey_clip() {
    let model = fox();
    let g = file(&model, GRAPH);
    let survey = model.find_clip("Survey").unwrap();
    let joints = model.skeleton().num_joints();
    let mut worst = 0.0f32;
    let (_, state) = run_graph(&model, g.parts().graph(), &[], 2.5, |t, pose, _| {
        let mut expected = Vec::new();
        model
            .sample(Some(survey), t as f32, RotationInterpolation::NlerpCorrected, &mut Vec::new(), &mut expected)
            .unwrap();
        worst = worst.max(max_diff(pose, &expected, joints));
    })
    .unwrap();
    assert_eq!(state, GraphState { state: "idle".into(), transition: None, layers: Vec::new() });
    // The same clip at the same time: only the blend's quaternion normalization differs.
    assert!(worst < 1e-5, "{worst}");
}

/// World joint positions after each step, and the state machine's state.
fn world_positions(model: &Model, g: &GraphFile, sets: &[SetSpec], time: f32) -> Vec<(f64, Vec<[f32; 3]>, bool)> {
    let mut frames = Vec::new();
    let mut world = Vec::new();
    run_graph(model, g.parts().graph(), sets, time, |t, pose, m| {
        model.world(pose, &mut world).unwrap();
        let p = world.iter().map(|w| w.translation().to_array()).collect();
        frames.push((t, p, m.transition().is_some()));
    })
    .unwrap();
    frames
}

/// The largest frame-to-frame joint displacement of the frames ending in `(from, to]`.
fn largest_step(frames: &[(f64, Vec<[f32; 3]>, bool)], from: f64, to: f64) -> f32 {
    frames
        .windows(2)
        .filter(|w| w[1].0 > from + 1e-9 && w[1].0 <= to + 1e-9)
        .map(|w| {
            w[0].1
                .iter()
                .zip(&w[1].1)
                .map(|(a, b)| (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f32>().sqrt())
                .fold(0.0, f32::max)
        })
        .fold(0.0, f32::max)
}

#[test]
fn transitions_do_not_pop() {
    let model = fox();
    let g = file(&model, GRAPH);
    // A blend space follows its parameter at once (a game damps its inputs): before the way
    // back the speed first drops to the walk's (1, the walk alone, as at 0), so that the
    // crossfade at 3.0 is measured rather than the jump of the walk-run mix.
    let sets = [set("speed=2@1.0"), set("speed=1@2.5"), set("speed=0@3.0")];
    let frames = world_positions(&model, &g, &sets, 4.5);
    let idle = largest_step(&frames, 0.1, 1.0).max(largest_step(&frames, 3.6, 4.5));
    let locomotion = largest_step(&frames, 1.6, 2.5).max(largest_step(&frames, 2.55, 3.0));
    // The inertialized switch (fires at 1.0, 0.3 s) and the crossfade back (3.0, 0.25 s).
    let inertialized = largest_step(&frames, 1.0, 1.35);
    let crossfaded = largest_step(&frames, 3.0, 3.3);
    println!(
        "Fox largest step: idle {idle}, locomotion {locomotion}, inertialized {inertialized}, crossfaded {crossfaded}"
    );
    assert!(frames.iter().any(|f| f.0 > 1.0 && f.0 < 1.3 && f.2), "a transition ran");
    let bound = 2.0 * idle.max(locomotion);
    assert!(inertialized <= bound, "inertialized {inertialized} > {bound}");
    assert!(crossfaded <= bound, "crossfaded {crossfaded} > {bound}");

    // The measure sees a pop: the same switch with no blend at all exceeds the bound.
    let hard = GRAPH.replace("\"duration\": 0.3", "\"duration\": 0.0");
    let g = file(&model, &hard);
    assert_eq!(g.parts().graph().transitions[0].blend, TransitionBlend::Inertialize);
    let frames = world_positions(&model, &g, &sets, 1.5);
    let popped = largest_step(&frames, 1.0, 1.35);
    println!("Fox hard switch: {popped}");
    assert!(popped > bound, "a hard switch {popped} within {bound}");
}

/// The largest second difference (acceleration per step²) of the joint positions over the
/// frames ending in `(from, to]`.
fn largest_acceleration(frames: &[(f64, Vec<[f32; 3]>, bool)], from: f64, to: f64) -> f32 {
    frames
        .windows(3)
        .filter(|w| w[2].0 > from + 1e-9 && w[2].0 <= to + 1e-9)
        .map(|w| {
            (0..w[0].1.len())
                .map(|j| {
                    let (a, b, c) = (w[0].1[j], w[1].1[j], w[2].1[j]);
                    (0..3).map(|k| (c[k] - 2.0 * b[k] + a[k]).powi(2)).sum::<f32>().sqrt()
                })
                .fold(0.0, f32::max)
        })
        .fold(0.0, f32::max)
}

#[test]
fn inertialization_on_fox_is_smooth_at_the_switch_and_gone_at_the_end() {
    let model = fox();
    let sets = [set("speed=2@1.0")];
    let smooth = world_positions(&model, &file(&model, GRAPH), &sets, 2.0);
    let hard =
        world_positions(&model, &file(&model, &GRAPH.replace("\"duration\": 0.3", "\"duration\": 0.0")), &sets, 2.0);
    // The switch fires in the step ending at 61/60 s: its output continues the idle's motion, so
    // the velocity does not jump; the acceleration around it stays near the steady ones.
    let steady = largest_acceleration(&smooth, 0.1, 1.0).max(largest_acceleration(&smooth, 1.4, 2.0));
    let switch = largest_acceleration(&smooth, 1.0, 1.05);
    let popped = largest_acceleration(&hard, 1.0, 1.05);
    println!("Fox acceleration: steady {steady}, at the inertialized switch {switch}, at a hard switch {popped}");
    assert!(switch <= 2.0 * steady, "{switch} vs {steady}");
    assert!(popped > 4.0 * steady, "{popped} vs {steady}");
    // 0.3 s after the switch the offset is zero: the pose is the hard switch's.
    for (a, b) in smooth.iter().zip(&hard).filter(|(a, _)| a.0 > 61.0 / 60.0 + 0.3 + 1e-6) {
        let worst =
            a.1.iter()
                .zip(&b.1)
                .map(|(x, y)| (0..3).map(|k| (x[k] - y[k]).abs()).fold(0.0, f32::max))
                .fold(0.0, f32::max);
        assert!(worst < 1e-3, "at {}: {worst}", a.0);
    }
}

/// A run longer than [`MAX_GRAPH_TIME`] (or negative, or not a number) is refused before it
/// starts, naming the limit.
#[test]
fn run_time_is_bounded() {
    let model = fox();
    let g = file(&model, GRAPH);
    for time in [1e9, MAX_GRAPH_TIME * 1.01, -1.0, f32::NAN, f32::INFINITY] {
        let e = run_graph(&model, g.parts().graph(), &[], time, |_, _, _| panic!("no step runs")).unwrap_err();
        assert!(e.contains("--time must be a number of seconds from 0 to 3600"), "{time}: {e}");
    }
}

/// Fox surveying, with a layer playing the run on the spine up (an upper-body override) once
/// `waving` is set.
const LAYERED: &str = r#"{"parameters": {"speed": 0.0, "waving": false},
 "states": [{"name": "idle", "clip": "Survey"}],
 "layers": [{"name": "wave", "mask": ["b_Spine01_02"],
             "states": [{"name": "rest", "clip": "Survey"}, {"name": "wave", "clip": "Run"}],
             "transitions": [{"from": "rest", "to": "wave", "when": "waving", "duration": 0.0, "blend": "inertialize"}],
             "initial": "rest"}],
 "initial": "idle"}"#;

#[test]
fn an_upper_body_layer_plays_on_the_spine_up_and_the_base_below() {
    let model = fox();
    let skeleton = model.skeleton();
    let joint = |name: &str| skeleton.find(name);
    let g = GraphFile::parse_with_joints(LAYERED, |k| model.find_clip(k), joint, model.asset().num_clips()).unwrap();
    let parts = g.parts();
    let layers = parts.layers();
    let graph = LayeredGraph { base: parts.graph(), layers: &layers };
    let (survey, run) = (model.find_clip("Survey").unwrap(), model.find_clip("Run").unwrap());
    let spine = skeleton.find("b_Spine01_02").unwrap();
    let joints = skeleton.num_joints();
    let upper: Vec<bool> = (0..joints).map(|j| skeleton.is_in_subtree(j, spine)).collect();
    assert!(upper.iter().filter(|u| **u).count() >= 8 && upper.iter().filter(|u| !**u).count() >= 8);
    let sample = |clip: usize, t: f64| {
        let mut pose = Vec::new();
        model.sample(Some(clip), t as f32, RotationInterpolation::NlerpCorrected, &mut Vec::new(), &mut pose).unwrap();
        pose
    };
    let joint_diff = |a: &[SoaTransform<f32>], b: &[SoaTransform<f32>], j: usize| {
        let (x, y) = (a[j / 4].lane(j % 4), b[j / 4].lane(j % 4));
        (x.translation - y.translation).max_abs().max(x.rotation.angle_between(y.rotation))
    };
    let (mut below, mut above, mut wave_steps) = (0.0f32, 0.0f32, 0);
    let (_, state) = run_layered(&model, graph, &[set("waving=true@0.5")], 1.5, |t, pose, m| {
        if m.machine(1).map(|l| l.current_state()) != Some(1) {
            return;
        }
        // The layer entered `wave` on the step starting at 0.5 s: the run's clock is that
        // step's length behind the base's.
        let (base, layer) = (sample(survey, t), sample(run, t - 0.5));
        for (j, &up) in upper.iter().enumerate() {
            if up {
                above = above.max(joint_diff(pose, &layer, j));
            } else {
                below = below.max(joint_diff(pose, &base, j));
            }
        }
        wave_steps += 1;
    })
    .unwrap();
    assert_eq!(wave_steps, 60);
    assert!(below < 1e-4 && above < 1e-4, "below the spine {below}, from it up {above}");
    assert_eq!(state.state, "idle");
    assert_eq!(state.layers, [LayerState { name: "wave".into(), weight: 1.0, state: "wave".into(), transition: None }]);
    assert_eq!(
        state.to_json(),
        r#"{"state":"idle","transition":null,"layers":[{"name":"wave","weight":1,"state":"wave","transition":null}]}"#
    );
}
