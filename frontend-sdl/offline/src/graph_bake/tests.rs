//! Graphs baked into Fox: the section reads back as the JSON file's graph, and runs the same.

use super::*;
use crate::bake::BakeOptions;
use crate::graph_run::{parse_set, run_graph};
use crate::model::Model;
use sinew::math::SoaTransform;

/// The minimal graph for Fox (idle, and a synced walk/run blend space), shared by the graph tests.
const GRAPH: &str = include_str!("../../tests/data/fox_graph.json");

fn fox() -> Model {
    let path = sinew_assets::path("gltf/Fox/Fox.glb");
    Model::load(&path, None, &BakeOptions::default()).expect("Fox")
}

#[test]
fn a_baked_graph_reads_back_and_runs_as_its_file() {
    let model = fox();
    let file = GraphFile::parse(GRAPH, |k| model.find_clip(k), model.asset().num_clips()).unwrap();
    let bytes = bake_graph(model.bytes(), "locomotion", &file).unwrap();
    assert_eq!(
        bake_graph(&bytes, "locomotion", &file).unwrap_err(),
        "the file already has a graph called 'locomotion'"
    );
    let baked_model = Model::from_bytes("Fox", bytes.clone()).unwrap();
    let asset = baked_model.asset();
    assert_eq!(asset.num_graphs(), 1);
    // Everything else is unchanged.
    assert_eq!(asset.num_clips(), model.asset().num_clips());
    assert_eq!(asset.clip(2).unwrap().byte_len(), model.asset().clip(2).unwrap().byte_len());
    let baked = baked_graph(&asset, None).unwrap();
    assert_eq!(baked.graph(), file.parts().graph());
    assert!(baked_graph(&asset, Some("other")).is_err());

    let sets = [parse_set("speed=2@1.0").unwrap(), parse_set("speed=0@2.0").unwrap()];
    let mut from_file = Vec::new();
    let (pose, state) =
        run_graph(&model, file.parts().graph(), &sets, 2.5, |_, p, _| from_file.push(p.to_vec())).unwrap();
    let mut from_bake = Vec::new();
    let (baked_pose, baked_state) =
        run_graph(&baked_model, baked.graph(), &sets, 2.5, |_, p, _| from_bake.push(p.to_vec())).unwrap();
    assert_eq!(state, baked_state);
    assert_eq!(pose, baked_pose);
    assert_eq!(from_file, from_bake);
}

/// Fox's graph with an upper-body override layer (a soft-edged mask, a crossfaded and an
/// inertialized transition) and an additive layer, shared with the CLI tests.
const LAYERED: &str = include_str!("../../tests/data/fox_layered_graph.json");

#[test]
fn a_baked_layered_graph_reads_back_and_runs_as_its_file_through_transitions_and_fades() {
    use sinew::controller::ClipEntry;
    use sinew::graph::{FadeCurve, LayeredGraph, LayeredScratch};

    use crate::graph_run::{Host, HostLayered};

    let model = fox();
    let joint = |name: &str| model.skeleton().find(name);
    let file = GraphFile::parse_with_joints(LAYERED, |k| model.find_clip(k), joint, model.asset().num_clips()).unwrap();
    let bytes = bake_graph(model.bytes(), "layered", &file).unwrap();
    let baked_model = Model::from_bytes("Fox", bytes).unwrap();
    let asset = baked_model.asset();
    let data = asset.graph(0).unwrap();
    assert_eq!((data.num_layers(), data.layer(2).map(|l| l.name())), (2, Some("sway")));
    let baked = baked_graph(&asset, None).unwrap();
    let (parts, baked_layers) = (file.parts(), baked.layers());
    let file_layers = parts.layers();
    let from_file = LayeredGraph { base: parts.graph(), layers: &file_layers };
    let from_bake = LayeredGraph { base: baked.graph(), layers: &baked_layers };
    assert_eq!(from_file, from_bake);

    // Both run step by step: the wave layer's transitions both ways, the sway layer's weight
    // faded in and out, the base moving to its blend space.
    fn clips_of(m: &Model) -> Vec<ClipEntry<'_, f32>> {
        (0..m.asset().num_clips()).filter_map(|i| m.asset().clip(i)).map(ClipEntry::new).collect()
    }
    let (clips, baked_clips) = (clips_of(&model), clips_of(&baked_model));
    let mut a = Box::new(HostLayered::new(from_file, &clips).unwrap());
    let mut b = Box::new(HostLayered::new(from_bake, &baked_clips).unwrap());
    let mut scratch = Box::new(LayeredScratch::<f32, Host>::new());
    let n = model.skeleton().num_soa_joints();
    let (mut pa, mut pb) = (vec![SoaTransform::IDENTITY; n], vec![SoaTransform::IDENTITY; n]);
    let (mut fading, mut crossing) = (0, 0);
    for step in 0..150 {
        for m in [&mut a, &mut b] {
            match step {
                20 => m.set_bool(1, true).unwrap(),
                40 => m.fade_layer(2, 1.0, 0.5, FadeCurve::SmoothStep).unwrap(),
                60 => m.set_float(0, 2.0).unwrap(),
                90 => m.set_bool(1, false).unwrap(),
                110 => m.fade_layer(2, 0.0, 0.3, FadeCurve::Linear).unwrap(),
                _ => {}
            }
        }
        a.update(1.0 / 60.0, &clips, model.skeleton(), &mut scratch, &mut pa, |_| {}).unwrap();
        b.update(1.0 / 60.0, &baked_clips, baked_model.skeleton(), &mut scratch, &mut pb, |_| {}).unwrap();
        assert_eq!(pa, pb, "step {step}");
        for l in 0..3 {
            let (ma, mb) = (a.machine(l).unwrap(), b.machine(l).unwrap());
            assert_eq!(ma.current_state(), mb.current_state(), "layer {l}, step {step}");
            assert_eq!(ma.transition(), mb.transition(), "layer {l}, step {step}");
            assert_eq!(a.layer_weight(l), b.layer_weight(l), "layer {l}, step {step}");
        }
        fading += usize::from(a.is_layer_fading(2));
        crossing += usize::from(a.machine(1).unwrap().transition().is_some());
    }
    assert!(fading >= 40 && crossing >= 20, "{fading} steps of fades, {crossing} of layer transitions");
    assert_eq!(a.machine(1).unwrap().current_state(), 0);
    assert_eq!(a.layer_weight(2), Some(0.0));
}
