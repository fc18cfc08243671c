//! The graph file reader: the issue's minimal JSON exactly, the full format, and one message
//! per mistake.

use super::*;

/// The minimal graph for Fox (idle, and a synced walk/run blend space), shared by the graph tests.
const MINIMAL: &str = include_str!("../../tests/data/fox_graph.json");

fn fox_clip(name: &str) -> Option<usize> {
    ["Survey", "Walk", "Run"].iter().position(|c| *c == name).or_else(|| name.parse().ok().filter(|i| *i < 3))
}

fn parse(json: &str) -> Result<GraphFile, String> {
    GraphFile::parse(json, fox_clip, 3)
}

#[test]
fn the_minimal_graph_is_read_exactly() {
    let g = parse(MINIMAL).unwrap();
    let parts = g.parts();
    let graph = parts.graph();
    assert_eq!(graph.parameters, &[Parameter { name: "speed", kind: ParameterKind::Float(0.0) }]);
    assert_eq!(
        graph.states,
        &[
            State { name: "idle", kind: StateKind::Clip(0), looping: true },
            State {
                name: "move",
                kind: StateKind::Blend1d { parameter: 0, points: Span::new(0, 2), sync: true },
                looping: true
            },
        ]
    );
    assert_eq!(
        graph.points,
        &[BlendPoint { clip: 1, position: [1.0, 0.0] }, BlendPoint { clip: 2, position: [3.0, 0.0] }]
    );
    assert_eq!(
        graph.conditions,
        &[Condition { parameter: 0, test: Test::Greater(0.1) }, Condition { parameter: 0, test: Test::Less(0.1) }]
    );
    assert_eq!(
        graph.transitions,
        &[
            Transition {
                from: Some(0),
                to: 1,
                conditions: Span::new(0, 1),
                exit_time: None,
                duration: 0.3,
                blend: TransitionBlend::Inertialize
            },
            Transition {
                from: Some(1),
                to: 0,
                conditions: Span::new(1, 1),
                exit_time: None,
                duration: 0.25,
                blend: TransitionBlend::Crossfade { curve: FadeCurve::Linear, sync: false }
            },
        ]
    );
    assert_eq!(graph.initial, 0);
}

#[test]
fn the_full_format() {
    let json = r#"{"parameters": {"speed": 0.5, "grounded": true, "jump": "trigger", "side": 0},
     "states": [{"name": "idle", "clip": "Survey"},
                {"name": "strafe", "blend2d": {"x": "side", "y": "speed",
                                               "clips": [["Walk", [0, 1]], ["Run", [0, 3]], [0, [1, 0]]]}},
                {"name": "jump", "clip": 2, "loop": false}],
     "transitions": [{"from": "*", "to": "jump", "when": "jump && grounded && speed >= 0.5 && side <= 2"},
                     {"from": "jump", "to": "idle", "exit_time": 1.0, "duration": 0.2, "curve": "smoothstep", "sync": true},
                     {"from": "idle", "to": "strafe", "when": "!grounded", "blend": "inertialize"}],
     "initial": "idle"}"#;
    let g = parse(json).unwrap();
    let parts = g.parts();
    let graph = parts.graph();
    // Parameters in name order.
    let names: Vec<&str> = graph.parameters.iter().map(|p| p.name).collect();
    assert_eq!(names, ["grounded", "jump", "side", "speed"]);
    assert_eq!(graph.parameters[3].kind, ParameterKind::Float(0.5));
    assert_eq!(graph.parameters[1].kind, ParameterKind::Trigger);
    assert_eq!(graph.states[1].kind, StateKind::Blend2d { x: 2, y: 3, points: Span::new(0, 3), sync: false });
    assert_eq!(graph.points[2], BlendPoint { clip: 0, position: [1.0, 0.0] });
    assert_eq!(graph.states[2], State { name: "jump", kind: StateKind::Clip(2), looping: false });
    assert_eq!(
        graph.conditions,
        &[
            Condition { parameter: 1, test: Test::Triggered },
            Condition { parameter: 0, test: Test::True },
            Condition { parameter: 3, test: Test::AtLeast(0.5) },
            Condition { parameter: 2, test: Test::AtMost(2.0) },
            Condition { parameter: 0, test: Test::False },
        ]
    );
    assert_eq!(graph.transitions[0].from, None);
    assert_eq!(graph.transitions[0].duration, DEFAULT_DURATION);
    assert_eq!(graph.transitions[1].exit_time, Some(1.0));
    assert_eq!(graph.transitions[1].conditions, Span::new(4, 0));
    assert_eq!(graph.transitions[1].blend, TransitionBlend::Crossfade { curve: FadeCurve::SmoothStep, sync: true });
    assert_eq!(graph.transitions[2].conditions, Span::new(4, 1));
}

#[test]
fn each_mistake_is_named_in_one_line() {
    let cases = [
        (MINIMAL.replace("\"Survey\"", "\"Srvey\""), "state 'idle': unknown clip 'Srvey'"),
        (MINIMAL.replace("\"to\": \"move\"", "\"to\": \"mvoe\""), "transitions[0]: unknown state 'mvoe'"),
        (MINIMAL.replace("\"initial\": \"idle\"", "\"initial\": \"rest\""), "initial: unknown state 'rest'"),
        (MINIMAL.replace("speed > 0.1", "sped > 0.1"), "transitions[0]: unknown parameter 'sped' in 'sped > 0.1'"),
        (MINIMAL.replace("speed > 0.1", "speed >> 0.1"), "transitions[0]: malformed condition 'speed >> 0.1'"),
        (MINIMAL.replace("speed > 0.1", "speed > fast"), "transitions[0]: malformed condition 'speed > fast'"),
        (MINIMAL.replace("speed > 0.1", "speed"), "transitions[0]: 'speed': a number needs a comparison"),
        (MINIMAL.replace("speed > 0.1", ""), "transitions[0]: malformed condition ''"),
        (
            MINIMAL.replace("\"parameter\": \"speed\"", "\"parameter\": \"pace\""),
            "state 'move': parameter: unknown parameter 'pace'",
        ),
        (MINIMAL.replace("\"when\"", "\"whne\""), "transitions[0]: unknown key 'whne'"),
        (
            MINIMAL.replace("\"inertialize\"", "\"inertial\""),
            "transitions[0]: blend is \"crossfade\" or \"inertialize\", found Some(\"inertial\")",
        ),
        (MINIMAL.replace("3.0]]", "0.5]]"), "state 'move': positions must be increasing (1D) or distinct (2D)"),
        (
            MINIMAL.replace("\"duration\": 0.3", "\"duration\": -0.3"),
            "transition 0 has a NaN, infinite or negative exit time or duration",
        ),
        (MINIMAL.replace("\"name\": \"move\"", "\"name\": \"idle\""), "state 'idle' is defined twice"),
        (
            MINIMAL.replace("\"from\": \"move\"", "\"from\": \"idle\""),
            "transitions[1]: a transition cannot go to its own source",
        ),
        ("[1, 2]".to_string(), "the graph must be a JSON object"),
    ];
    for (json, message) in cases {
        let e = parse(&json).unwrap_err();
        assert_eq!(e, message);
        assert!(!e.contains('\n'));
    }
    assert!(parse("{").unwrap_err().starts_with("not a JSON graph: "));
}

#[test]
fn the_documented_examples_are_accepted() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../core/docs/graphs.md")).unwrap();
    let at = doc.find("<!-- graph example -->").expect("the graph example marker of core/docs/graphs.md");
    let block = doc[at..].split_once("```json\n").unwrap().1;
    let json = &block[..block.find("\n```").unwrap()];
    let g = parse(json).unwrap();
    let parts = g.parts();
    assert_eq!(parts.graph().states.len(), 3);
    assert_eq!(parts.graph().transitions.len(), 4);
    assert_eq!(g.state("hop"), Some(2));
    let at =
        doc.find("<!-- layered graph example -->").expect("the layered graph example marker of core/docs/graphs.md");
    let block = doc[at..].split_once("```json\n").unwrap().1;
    let json = &block[..block.find("\n```").unwrap()];
    let joint = |name: &str| (name == "b_Spine01_02").then_some(4);
    let g = GraphFile::parse_with_joints(json, fox_clip, joint, 3).unwrap();
    let parts = g.parts();
    let layers = parts.layers();
    assert_eq!((layers.len(), layers[0].name, layers[0].transitions.len()), (1, "wave", 2));
}

/// Mutated graphs (bytes changed, cut short, pieces repeated) never panic: they are refused
/// with a message, or accepted as a graph the state machine takes.
#[test]
fn mutated_graphs_are_refused_or_run() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let alphabet = b"{}[]\",:0123456789.-e!&<>=* aInvspeedWalkRunSurveyidlemovefromtowhenblend";
    let bytes = MINIMAL.as_bytes();
    let (mut accepted, mut refused) = (0, 0);
    for _ in 0..4000 {
        let mut m = bytes.to_vec();
        for _ in 0..1 + next() % 4 {
            let at = (next() as usize) % m.len();
            match next() % 3 {
                0 => m[at] = alphabet[(next() as usize) % alphabet.len()],
                1 => {
                    m.remove(at);
                }
                _ => m.insert(at, alphabet[(next() as usize) % alphabet.len()]),
            }
        }
        let text = String::from_utf8_lossy(&m);
        match parse(&text) {
            Ok(g) => {
                accepted += 1;
                let parts = g.parts();
                assert_eq!(parts.graph().validate(3), Ok(()));
            }
            Err(e) => {
                refused += 1;
                assert!(!e.is_empty() && !e.contains('\n'), "{e:?}");
            }
        }
    }
    assert!(accepted > 100 && refused > 1000, "{accepted} accepted, {refused} refused");
}

/// The minimal graph with an upper-body layer over Fox's clips.
const LAYERED: &str = r#"{"parameters": {"speed": 0.0, "waving": false},
 "states": [{"name": "idle", "clip": "Survey"}],
 "layers": [{"name": "wave", "mode": "override", "mask": ["spine", {"joint": "neck", "fade_in": 1}], "weight": 0.5,
             "states": [{"name": "rest", "clip": "Survey"}, {"name": "wave", "clip": "Run"}],
             "transitions": [{"from": "rest", "to": "wave", "when": "waving", "duration": 0.2}],
             "initial": "rest"},
            {"name": "breath", "mode": "additive", "reference": "baked",
             "states": [{"name": "in", "clip": 1}], "initial": "in"}],
 "initial": "idle"}"#;

fn joint(name: &str) -> Option<usize> {
    ["hips", "spine", "neck", "head"].iter().position(|j| *j == name)
}

fn parse_layered(json: &str) -> Result<GraphFile, String> {
    GraphFile::parse_with_joints(json, fox_clip, joint, 3)
}

#[test]
fn layers_are_read_with_their_masks_modes_and_machines() {
    use sinew::controller::{AdditiveReference, LayerMode};
    use sinew::job::mask::Channel;
    let g = parse_layered(LAYERED).unwrap();
    assert_eq!(
        (g.num_layers(), g.layer_name(1), g.layer_name(2), g.layer_name(0)),
        (2, Some("wave"), Some("breath"), None)
    );
    let parts = g.parts();
    let layers = parts.layers();
    let (wave, breath) = (&layers[0], &layers[1]);
    assert_eq!((wave.mode, wave.weight), (LayerMode::Override, 0.5));
    assert_eq!(wave.mask, &[Channel::subtree(1, 0), Channel::subtree(2, 1)]);
    assert_eq!(wave.states.iter().map(|s| s.name).collect::<Vec<_>>(), ["rest", "wave"]);
    assert_eq!(wave.states[1].kind, StateKind::Clip(2));
    // The layer's condition reads the shared parameter `waving` (index 1, name order).
    assert_eq!(wave.conditions, &[Condition { parameter: 1, test: Test::True }]);
    assert_eq!(wave.transitions[0].from, Some(0));
    assert_eq!(
        (breath.mode, breath.weight, breath.mask),
        (LayerMode::Additive(AdditiveReference::Baked), 1.0, &[][..])
    );
    let graph = LayeredGraph { base: parts.graph(), layers: &layers };
    assert_eq!(graph.validate(3), Ok(()));
    // Without joint names, the masks cannot be resolved.
    assert!(parse(LAYERED).unwrap_err().contains("unknown joint 'spine'"));
}

#[test]
fn each_layer_mistake_is_named_in_one_line() {
    for (from, to, needle) in [
        ("\"spine\", {", "\"tail\", {", "layer 'wave': mask: unknown joint 'tail'"),
        ("\"Run\"", "\"Rn\"", "layer 'wave': state 'wave': unknown clip 'Rn'"),
        ("\"to\": \"wave\"", "\"to\": \"waved\"", "layer 'wave': transitions[0]: unknown state 'waved'"),
        (
            "\"when\": \"waving\"",
            "\"when\": \"wavng\"",
            "layer 'wave': transitions[0]: unknown parameter 'wavng' in 'wavng'",
        ),
        ("\"initial\": \"rest\"", "\"initial\": \"idle\"", "layer 'wave': initial: unknown state 'idle'"),
        ("\"mode\": \"override\"", "\"mode\": \"over\"", "layer 'wave': mode is \"override\" or \"additive\""),
        ("\"weight\": 0.5", "\"weight\": 2", "layer 'wave': weight must be from 0 to 1"),
        ("\"name\": \"breath\"", "\"name\": \"wave\"", "layer 'wave' is defined twice"),
        ("\"fade_in\": 1", "\"fade_in\": -1", "layer 'wave': mask fade_in must be a whole number"),
        ("\"reference\": \"baked\"", "\"reference\": \"none\"", "layer 'breath': reference is \"rest\" or \"baked\""),
        (
            "\"mode\": \"override\", \"mask\"",
            "\"reference\": \"rest\", \"mask\"",
            "layer 'wave': reference is for additive layers",
        ),
        ("\"weight\": 0.5", "\"wieght\": 0.5", "layers[0]: unknown key 'wieght'"),
        ("\"clip\": 1}", "\"clip\": 7}", "layer 'breath': state 'in': unknown clip '7'"),
        ("\"layers\": [", "\"layers\": [7, ", "layers[0]: expected an object"),
    ] {
        assert!(LAYERED.contains(from), "{from}");
        let e = parse_layered(&LAYERED.replacen(from, to, 1)).unwrap_err();
        assert!(e.contains(needle), "{needle}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    // A layer state's positions, checked by the core, named with the layer.
    let bad = LAYERED.replace(
        "{\"name\": \"wave\", \"clip\": \"Run\"}",
        "{\"name\": \"wave\", \"blend1d\": {\"parameter\": \"speed\", \"clips\": [[\"Run\", 1.0], [\"Walk\", 1.0]]}}",
    );
    let e = parse_layered(&bad).unwrap_err();
    assert!(e.contains("layer 'wave': state 'wave': positions must be increasing"), "{e}");
}
