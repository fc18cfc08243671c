//! The cost of a state machine's transition, crossfaded or inertialized, on the baked
//! 24-joint character: walk → run over 0.5 s, 24 updates of 1/60 s inside the transition (the
//! `updates` function, what callgrind counts), and the state machine's size.
//!
//! ```sh
//! cargo build --release -p sinew --example graph_cost
//! for b in steady crossfade inertialize; do
//!   valgrind --tool=callgrind --toggle-collect='graph_cost::updates' \
//!     target/release/examples/graph_cost $b
//! done
//! ```
//!
//! The instructions per update are callgrind's total over 24.

use sinew::asset::Asset;
use sinew::controller::{ClipEntry, ControllerScratch};
use sinew::graph::*;
use sinew::math::SoaTransform;
use sinew::skeleton::Skeleton;

static CHARACTER: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));

type Machine<'g> = StateMachine<'g, f32, 6, 2, 72, 1>;

/// Updates measured.
const UPDATES: usize = 24;

/// `UPDATES` updates of 1/60 s.
#[inline(never)]
fn updates(
    m: &mut Machine<'_>,
    clips: &[ClipEntry<'_, f32>],
    skeleton: &Skeleton<f32, 6>,
    scratch: &mut ControllerScratch<f32, 6, 2, 1>,
    pose: &mut [SoaTransform<f32>; 6],
) -> Result<(), GraphError> {
    for _ in 0..UPDATES {
        m.update(1.0 / 60.0, clips, skeleton.view(), scratch, pose, |_| {})?;
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let which = std::env::args().nth(1).unwrap_or_else(|| "crossfade".into());
    let blend = match which.as_str() {
        "inertialize" => TransitionBlend::Inertialize,
        _ => TransitionBlend::Crossfade { curve: FadeCurve::SmoothStep, sync: true },
    };
    let asset = Asset::parse(CHARACTER)?;
    let skeleton: Skeleton<f32, 6> = asset.skeleton().ok_or("no skeleton")?.to_skeleton()?;
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
    let mut pose = [SoaTransform::IDENTITY; 6];
    for _ in 0..30 {
        m.update(1.0 / 60.0, &clips, skeleton.view(), &mut scratch, &mut pose, |_| {})?;
    }
    if which != "steady" {
        m.set_bool(0, true)?;
        // The update that fires the transition, then the measured ones inside it.
        m.update(1.0 / 60.0, &clips, skeleton.view(), &mut scratch, &mut pose, |_| {})?;
    }
    updates(&mut m, &clips, &skeleton, &mut scratch, &mut pose)?;
    if which != "steady" {
        assert!(m.transition().is_some(), "still in the transition");
    }
    println!(
        "{which}: {UPDATES} updates; StateMachine<f32, 6, 2, 72, 1> takes {} bytes, its scratch {}",
        core::mem::size_of::<Machine<'_>>(),
        core::mem::size_of::<ControllerScratch<f32, 6, 2, 1>>()
    );
    Ok(())
}
