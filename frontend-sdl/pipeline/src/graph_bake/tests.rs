//! Graphs baked into Fox: the section reads back as the JSON file's graph, and runs the same.

use std::path::PathBuf;

use super::*;
use crate::bake::BakeOptions;
use crate::graph_run::{parse_set, run_graph};
use crate::model::Model;

/// The minimal graph for Fox (idle, and a synced walk/run blend space), shared by the graph tests.
const GRAPH: &str = include_str!("../../tests/data/fox_graph.json");

fn fox() -> Model {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/assets/gltf/Fox/Fox.glb"));
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
