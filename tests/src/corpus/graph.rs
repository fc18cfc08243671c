//! `.sinew` graph-section cases: [`graph_base`] (and [`graph_layered_base`], with a layer), the
//! small asset with a graph baked from JSON
//! (`sinew bake --graph`'s path), and [`graph_cases`], its section broken one field at a time,
//! each with the [`ParseError::BadGraph`] (or overrun) naming the part at fault.

use sinew::asset::format::*;
use sinew::asset::{Asset, ParseError};
use sinew_offline::graph_bake::bake_graph;
use sinew_offline::graph_file::GraphFile;

use super::sinew::SmallSinew;
use super::sinew_layout::{patched, section_of};
use super::Category::*;
use super::{put_f32, put_u16, Case};

/// The graph of the base: parameters `go` (trigger, 0), `on` (bool, 1) and `speed` (float,
/// 2); states `idle` (the clip) and `move` (a 1D space of the clip at 0 and 1); transitions
/// idle → move on `speed > 0.1 && on`, inertialized, and any → idle on `go` after one cycle.
pub const GRAPH_JSON: &str = r#"{"parameters": {"speed": 0.5, "on": true, "go": "trigger"},
 "states": [{"name": "idle", "clip": "clip"},
            {"name": "move", "blend1d": {"parameter": "speed", "clips": [["clip", 0.0], ["clip", 1.0]]}}],
 "transitions": [{"from": "idle", "to": "move", "when": "speed > 0.1 && on", "duration": 0.3, "blend": "inertialize"},
                 {"from": "*", "to": "idle", "when": "go", "exit_time": 1.0}],
 "initial": "idle"}"#;

/// [`SmallSinew`] with [`GRAPH_JSON`] baked as the graph called "graph".
pub fn graph_base() -> Vec<u8> {
    let small = SmallSinew::new().bytes();
    let asset = Asset::parse(&small).expect("the small file parses");
    let clip = |k: &str| (k == "clip").then_some(0);
    let file = GraphFile::parse(GRAPH_JSON, clip, asset.num_clips()).expect("the graph reads");
    bake_graph(&small, "graph", &file).expect("the graph bakes")
}

/// [`GRAPH_JSON`] with a layer: `up`, an override at weight 0.5 on `joint1`'s subtree, its
/// states `a` and `b` (the clip), a → b on `on`.
pub const LAYERED_JSON: &str = r#"{"parameters": {"speed": 0.5, "on": true, "go": "trigger"},
 "states": [{"name": "idle", "clip": "clip"},
            {"name": "move", "blend1d": {"parameter": "speed", "clips": [["clip", 0.0], ["clip", 1.0]]}}],
 "transitions": [{"from": "idle", "to": "move", "when": "speed > 0.1 && on", "duration": 0.3, "blend": "inertialize"},
                 {"from": "*", "to": "idle", "when": "go", "exit_time": 1.0}],
 "initial": "idle",
 "layers": [{"name": "up", "mask": ["joint1"], "weight": 0.5,
             "states": [{"name": "a", "clip": "clip"}, {"name": "b", "clip": "clip"}],
             "transitions": [{"from": "a", "to": "b", "when": "on"}],
             "initial": "a"}]}"#;

/// [`SmallSinew`] with [`LAYERED_JSON`] baked as the graph called "graph".
pub fn graph_layered_base() -> Vec<u8> {
    let small = SmallSinew::new().bytes();
    let asset = Asset::parse(&small).expect("the small file parses");
    let skeleton = asset.skeleton().expect("a skeleton");
    let clip = |k: &str| (k == "clip").then_some(0);
    let joint = |name: &str| (0..skeleton.num_joints()).find(|&j| skeleton.name(j) == Some(name));
    let file = GraphFile::parse_with_joints(LAYERED_JSON, clip, joint, asset.num_clips()).expect("the graph reads");
    bake_graph(&small, "graph", &file).expect("the graph bakes")
}

/// Offsets in the graph section: after the name "graph" (6 bytes) come initial (6), the five
/// counts (8..18) and the records.
const INITIAL: usize = 6;
const COUNTS: usize = 8;
const PARAMETERS: usize = 18;
const STATES: usize = PARAMETERS + 3 * GRAPH_PARAMETER_LEN;
const TRANSITIONS: usize = STATES + 2 * GRAPH_STATE_LEN;
const POINTS: usize = TRANSITIONS + 2 * GRAPH_TRANSITION_LEN;
const CONDITIONS: usize = POINTS + 2 * GRAPH_POINT_LEN;

/// Every graph-section case.
pub fn graph_cases() -> Vec<Case<(), ParseError>> {
    type C = Case<(), ParseError>;
    let base = graph_base();
    let s = section_of(&base, KIND_GRAPH);
    assert!(Asset::parse(&base).is_ok_and(|a| a.num_graphs() == 1));
    let bad = |part, index| ParseError::BadGraph { section: s.index, part, index };
    let at = |off: usize| s.off + off;
    let mut cases: Vec<C> = Vec::new();
    let mut case = |category, name: &str, f: &dyn Fn(&mut Vec<u8>), e| {
        cases.push(C::is(category, format!("graph: {name}"), patched(&base, f), e));
    };
    // Counts over the limits, or past the section.
    case(Counts, "65535 parameters", &|b| put_u16(b, at(COUNTS), u16::MAX), bad(GraphPart::Header, 0));
    case(Counts, "257 states", &|b| put_u16(b, at(COUNTS + 2), 257), bad(GraphPart::Header, 0));
    case(
        Counts,
        "65535 transitions",
        &|b| put_u16(b, at(COUNTS + 4), u16::MAX),
        ParseError::SectionOverrun { section: s.index },
    );
    case(Counts, "initial state 2 of 2", &|b| put_u16(b, at(INITIAL), 2), bad(GraphPart::Header, 0));
    // Unknown codes and reserved bytes.
    case(Counts, "parameter kind 3", &|b| b[at(PARAMETERS)] = 3, bad(GraphPart::Parameter, 0));
    case(Counts, "a bool default of 2", &|b| put_f32(b, at(PARAMETERS + 8 + 4), 2.0), bad(GraphPart::Parameter, 1));
    case(Counts, "state kind 3", &|b| b[at(STATES)] = 3, bad(GraphPart::State, 0));
    case(Counts, "transition blend 2", &|b| b[at(TRANSITIONS + 8)] = 2, bad(GraphPart::Transition, 0));
    case(Counts, "condition test 7", &|b| b[at(CONDITIONS + 2)] = 7, bad(GraphPart::Condition, 0));
    case(Counts, "a reserved point byte", &|b| b[at(POINTS + 2)] = 1, bad(GraphPart::State, 1));
    // NaN and infinity.
    case(
        NonFinite,
        "NaN float default",
        &|b| put_f32(b, at(PARAMETERS + 16 + 4), f32::NAN),
        bad(GraphPart::Parameter, 2),
    );
    case(
        NonFinite,
        "infinite duration",
        &|b| put_f32(b, at(TRANSITIONS + 16), f32::INFINITY),
        bad(GraphPart::Transition, 0),
    );
    case(NonFinite, "NaN blend position", &|b| put_f32(b, at(POINTS + 4), f32::NAN), bad(GraphPart::State, 1));
    case(NonFinite, "NaN threshold", &|b| put_f32(b, at(CONDITIONS + 4), f32::NAN), bad(GraphPart::Condition, 0));
    case(
        NonFinite,
        "negative exit time",
        &|b| put_f32(b, at(TRANSITIONS + 20 + 12), -1.0),
        bad(GraphPart::Transition, 1),
    );
    // Positions out of order.
    case(Unsorted, "1D positions decreasing", &|b| put_f32(b, at(POINTS + 4), 2.0), bad(GraphPart::State, 1));
    // Indices past their lists.
    case(JointIndex, "clip 1 of 1", &|b| put_u16(b, at(STATES + 2), 1), bad(GraphPart::State, 0));
    case(JointIndex, "blend parameter 3 of 3", &|b| put_u16(b, at(STATES + 12 + 2), 3), bad(GraphPart::State, 1));
    case(JointIndex, "points past the list", &|b| put_u16(b, at(STATES + 12 + 6), 1), bad(GraphPart::State, 1));
    case(
        JointIndex,
        "transition to state 2 of 2",
        &|b| put_u16(b, at(TRANSITIONS + 2), 2),
        bad(GraphPart::Transition, 0),
    );
    case(
        JointIndex,
        "a transition to its source",
        &|b| put_u16(b, at(TRANSITIONS + 2), 0),
        bad(GraphPart::Transition, 0),
    );
    case(
        JointIndex,
        "conditions past the list",
        &|b| put_u16(b, at(TRANSITIONS + 20 + 6), 2),
        bad(GraphPart::Transition, 1),
    );
    case(
        JointIndex,
        "a condition on parameter 3 of 3",
        &|b| put_u16(b, at(CONDITIONS), 3),
        bad(GraphPart::Condition, 0),
    );
    case(JointIndex, "a bool tested as a float", &|b| put_u16(b, at(CONDITIONS), 1), bad(GraphPart::Condition, 0));
    cases.extend(layer_cases(s.len));
    cases
}

/// The layer table of [`graph_layered_base`] broken one field at a time; `table` is where it
/// starts in the section (the length of the section without layers).
fn layer_cases(table: usize) -> Vec<Case<(), ParseError>> {
    type C = Case<(), ParseError>;
    let base = graph_layered_base();
    let s = section_of(&base, KIND_GRAPH);
    assert!(Asset::parse(&base).is_ok_and(|a| a.graph(0).is_some_and(|g| g.num_layers() == 1)));
    let bad = |part, index| ParseError::BadGraphLayer { section: s.index, layer: 1, part, index };
    let overrun = ParseError::SectionOverrun { section: s.index };
    // The count, then the layer: name "up" (3), mode, reference, initial, weight, five counts,
    // one mask channel, two states, one transition.
    let layer = s.off + table + 2;
    let (mode, initial, counts) = (layer + 3, layer + 5, layer + 11);
    let mask = counts + 10;
    let transitions = mask + GRAPH_CHANNEL_LEN + 2 * GRAPH_STATE_LEN;
    let mut cases: Vec<C> = Vec::new();
    let mut case = |category, name: &str, f: &dyn Fn(&mut Vec<u8>), e| {
        cases.push(C::is(category, format!("graph layer: {name}"), patched(&base, f), e));
    };
    case(Counts, "a layer count past the end", &|b| put_u16(b, s.off + table, 2), overrun);
    case(
        Counts,
        "a layer count of 0",
        &|b| put_u16(b, s.off + table, 0),
        ParseError::BadGraph { section: s.index, part: GraphPart::Header, index: 0 },
    );
    case(Counts, "a truncated layer table (3 states of 2)", &|b| put_u16(b, counts + 2, 3), overrun);
    case(Counts, "layer mode 2", &|b| b[mode] = 2, bad(GraphPart::Header, 0));
    case(Counts, "an override layer with a reference", &|b| b[mode + 1] = 1, bad(GraphPart::Header, 0));
    case(NonFinite, "a layer weight of 2", &|b| put_f32(b, layer + 7, 2.0), bad(GraphPart::Header, 0));
    case(JointIndex, "layer initial state 2 of 2", &|b| put_u16(b, initial, 2), bad(GraphPart::Header, 0));
    case(JointIndex, "mask joint 3 of 3", &|b| put_u16(b, mask, 3), bad(GraphPart::Mask, 0));
    case(JointIndex, "mask range ending at joint 3 of 3", &|b| put_u16(b, mask + 2, 3), bad(GraphPart::Mask, 0));
    case(
        JointIndex,
        "a layer transition to state 2 of 2",
        &|b| put_u16(b, transitions + 2, 2),
        bad(GraphPart::Transition, 0),
    );
    cases
}
