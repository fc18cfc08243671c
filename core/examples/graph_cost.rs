//! The cost of the animation graph on the baked 24-joint character, instructions per update
//! (24 updates of 1/60 s in the `updates` function, what callgrind counts), and the state
//! machines' sizes. One mode per run:
//!
//! - `steady`, `crossfade`, `inertialize`: a `StateMachine` walking, or inside its walk → run
//!   transition of 0.5 s (synced smoothstep crossfade, or inertialized);
//! - `base`, `layered`: a `LayeredStateMachine` whose graph is read from a graph section
//!   (written with `write_layered_graph`, parsed, built with `GraphData::to_layered`), the base
//!   walking and, with `layered`, an override layer on the chest's subtree (a one-level
//!   fade-in) playing the run at weight 1.
//!
//! ```sh
//! cargo build --release -p sinew --example graph_cost
//! for m in steady crossfade inertialize base layered; do
//!   valgrind --tool=callgrind --toggle-collect='graph_cost::updates' \
//!     target/release/examples/graph_cost $m
//! done
//! ```
//!
//! The instructions per update are callgrind's total over 24.

use sinew::asset::format::{KIND_GRAPH, SECTION_ENTRY_LEN};
use sinew::asset::writer::Writer;
use sinew::asset::{write_layered_graph, Asset, GraphBuffers, LayerBuffers};
use sinew::capacity::OneLayer;
use sinew::controller::{ClipEntry, ControllerScratch, LayerMode};
use sinew::graph::*;
use sinew::job::mask::Channel;
use sinew::math::SoaTransform;
use sinew::skeleton::Skeleton;

static CHARACTER: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));

sinew::capacity! {
    /// The character measured: 24 joints, 2 slots (a crossfade's clips), a base and an
    /// upper-body layer, 72 tracks, 1 parameter.
    pub struct Character { joints: 24, slots: 2, layers: 2, params: 1 }
}

/// A single-graph machine plays on one layer.
type Machine<'g> = StateMachine<'g, f32, OneLayer<Character>>;
type Layered<'g> = LayeredStateMachine<'g, f32, Character>;

/// Updates measured.
const UPDATES: usize = 24;

/// `UPDATES` calls of `update` (one update of 1/60 s of the machine measured).
#[inline(never)]
fn updates(update: &mut dyn FnMut() -> Result<(), GraphError>) -> Result<(), GraphError> {
    for _ in 0..UPDATES {
        update()?;
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let which = std::env::args().nth(1).unwrap_or_else(|| "crossfade".into());
    match which.as_str() {
        "steady" | "crossfade" | "inertialize" => transition(&which),
        "base" | "layered" => layers(&which),
        _ => Err(format!("unknown mode '{which}' (steady, crossfade, inertialize, base, layered)").into()),
    }
}

/// A `StateMachine` walking (`steady`) or inside its walk → run transition.
fn transition(which: &str) -> Result<(), Box<dyn std::error::Error>> {
    let blend = match which {
        "inertialize" => TransitionBlend::Inertialize,
        _ => TransitionBlend::Crossfade { curve: FadeCurve::SmoothStep, sync: true },
    };
    let asset = Asset::parse(CHARACTER)?;
    let skeleton: Skeleton<f32, { Character::SOA }> = asset.skeleton().ok_or("no skeleton")?.to_skeleton()?;
    let clips = [
        ClipEntry::new(asset.clip_by_name("walk").ok_or("no walk")?),
        ClipEntry::new(asset.clip_by_name("run").ok_or("no run")?),
    ];
    let parameters = [Parameter { name: "run", kind: ParameterKind::Bool(false) }];
    let states = [
        State { name: "walk", kind: StateKind::Clip(0), looping: true },
        State { name: "run", kind: StateKind::Clip(1), looping: true },
    ];
    let conditions = [Condition { parameter: 0, test: Test::True }];
    let transitions =
        [Transition { from: Some(0), to: 1, conditions: Span::new(0, 1), exit_time: None, duration: 0.5, blend }];
    let graph = Graph {
        parameters: &parameters,
        states: &states,
        transitions: &transitions,
        points: &[],
        conditions: &conditions,
        initial: 0,
    };
    let mut m = Machine::new(graph, &clips)?;
    let mut scratch = ControllerScratch::new();
    let mut pose = [SoaTransform::IDENTITY; Character::SOA];
    for _ in 0..30 {
        m.update(1.0 / 60.0, &clips, skeleton.view(), &mut scratch, &mut pose, |_| {})?;
    }
    if which != "steady" {
        m.set_bool(0, true)?;
        // The update that fires the transition, then the measured ones inside it.
        m.update(1.0 / 60.0, &clips, skeleton.view(), &mut scratch, &mut pose, |_| {})?;
    }
    updates(&mut || m.update(1.0 / 60.0, &clips, skeleton.view(), &mut scratch, &mut pose, |_| {}))?;
    if which != "steady" {
        assert!(m.transition().is_some(), "still in the transition");
    }
    println!(
        "{which}: {UPDATES} updates; StateMachine<f32, OneLayer<Character>> takes {} bytes, its scratch {}",
        core::mem::size_of::<Machine<'_>>(),
        core::mem::size_of::<ControllerScratch<f32, OneLayer<Character>>>()
    );
    Ok(())
}

/// The character with `graph` appended as a graph section called "layered".
fn with_graph(graph: &LayeredGraph<'_, f32>) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let word = |at: usize| CHARACTER.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    let count = word(20).ok_or("no header")?;
    let mut out = Vec::new();
    for _ in 0..2 {
        let mut w = Writer::new(&mut out);
        let table = w.begin_file(count as u32 + 1);
        for i in 0..count {
            let e = 24 + i * SECTION_ENTRY_LEN;
            let kind = CHARACTER.get(e..e + 4).ok_or("a section")?;
            let kind = [kind[0], kind[1], kind[2], kind[3]];
            let (off, len) = (word(e + 4).ok_or("a section")?, word(e + 8).ok_or("a section")?);
            let start = w.len();
            w.bytes(CHARACTER.get(off..off + len).ok_or("a section")?);
            w.section(table, i, kind, start);
        }
        let start = w.len();
        write_layered_graph(&mut w, "layered", graph)?;
        w.section(table, count, KIND_GRAPH, start);
        let len = w.finish();
        if !w.overflowed() {
            break;
        }
        out = vec![0; len];
    }
    Ok(out)
}

/// A `LayeredStateMachine`, its graph read from a graph section: the base alone, or with an
/// override layer.
fn layers(which: &str) -> Result<(), Box<dyn std::error::Error>> {
    let asset = Asset::parse(CHARACTER)?;
    let skeleton: Skeleton<f32, { Character::SOA }> = asset.skeleton().ok_or("no skeleton")?.to_skeleton()?;
    let index = |name: &str| (0..asset.num_clips()).find(|&i| asset.clip(i).is_some_and(|c| c.name() == name));
    let (walk, run) = (index("walk").ok_or("no walk")?, index("run").ok_or("no run")?);
    let parameters = [Parameter { name: "speed", kind: ParameterKind::Float(1.0) }];
    let walking = [State { name: "walk", kind: StateKind::Clip(walk), looping: true }];
    let running = [State { name: "run", kind: StateKind::Clip(run), looping: true }];
    let base =
        Graph { parameters: &parameters, states: &walking, transitions: &[], points: &[], conditions: &[], initial: 0 };
    let chest = [Channel::named(skeleton.view(), "chest", 1).ok_or("no chest")?];
    let upper = [GraphLayer {
        name: "upper",
        mode: LayerMode::Override,
        weight: 1.0,
        mask: &chest,
        states: &running,
        transitions: &[],
        points: &[],
        conditions: &[],
        initial: 0,
    }];
    let layers: &[GraphLayer<'_, f32>] = if which == "base" { &[] } else { &upper };
    let bytes = with_graph(&LayeredGraph { base, layers })?;
    let file = Asset::parse(&bytes)?;
    let clips: Vec<ClipEntry<'_, f32>> =
        (0..file.num_clips()).filter_map(|i| file.clip(i)).map(ClipEntry::new).collect();
    let data = file.graph_by_name("layered").ok_or("no graph")?;
    let mut p = [Parameter::default(); 1];
    let (mut s, mut l) = ([State::default(); 2], [GraphLayer::default(); 1]);
    let mut ch = [Channel::subtree(0, 0); 1];
    let buffers =
        GraphBuffers { parameters: &mut p, states: &mut s, transitions: &mut [], points: &mut [], conditions: &mut [] };
    let graph = data.to_layered(buffers, LayerBuffers { channels: &mut ch, layers: &mut l }, clips.len())?;
    let mut m = Layered::new(graph, &clips)?;
    let mut scratch = LayeredScratch::new();
    let mut pose = [SoaTransform::IDENTITY; Character::SOA];
    for _ in 0..30 {
        m.update(1.0 / 60.0, &clips, skeleton.view(), &mut scratch, &mut pose, |_| {})?;
    }
    updates(&mut || m.update(1.0 / 60.0, &clips, skeleton.view(), &mut scratch, &mut pose, |_| {}))?;
    println!(
        "{which}: {} layers, {UPDATES} updates; LayeredStateMachine<f32, Character> takes {} bytes, its scratch {}",
        m.num_layers(),
        core::mem::size_of::<Layered<'_>>(),
        core::mem::size_of::<LayeredScratch<f32, Character>>()
    );
    Ok(())
}
