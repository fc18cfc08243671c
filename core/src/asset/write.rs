//! The section writers: [`write_graph`], [`write_layered_graph`] and [`write_clip_report`]
//! emit section bodies with a [`Writer`], as the baker does. Offline code: the module is
//! compiled with the crate's `writer` feature (and in its own tests, which build fixtures with
//! it); a runtime that only reads files leaves it out.

use crate::controller::{AdditiveReference, LayerMode};
use crate::format::writer::Writer;
use crate::format::*;
use crate::graph::{
    BlendPoint, Condition, FadeCurve, Graph, GraphError, LayeredGraph, ParameterKind, Span, State, StateKind, Test,
    Transition, TransitionBlend,
};

use super::ClipReport;

/// [`GraphError::Storage`] when `list` needs more than its `capacity`.
fn limit(list: &'static str, needed: usize, capacity: usize) -> Result<(), GraphError> {
    if needed > capacity {
        Err(GraphError::Storage { list, needed, capacity })
    } else {
        Ok(())
    }
}

/// Writes `graph` as the body of a graph section called `name` (the caller records the
/// section with [`Writer::section`](crate::format::writer::Writer::section)). The graph's
/// clip indices must be the file's.
///
/// # Errors
///
/// [`GraphError::Storage`] when a list is longer than the section holds (parameters over
/// [`MAX_GRAPH_PARAMETERS`], states over [`MAX_GRAPH_STATES`], other lists or an index over
/// 65,534) or a name is longer than 255 bytes (`list` is then `"name bytes"`). Counts and
/// names are checked before anything is written; an index over 65,534 (which
/// [`Graph::validate`] would refuse) stops the writing midway.
pub fn write_graph(w: &mut Writer<'_>, name: &str, graph: &Graph<'_, f32>) -> Result<(), GraphError> {
    let big = NONE as usize - 1;
    limit("parameters", graph.parameters.len(), MAX_GRAPH_PARAMETERS)?;
    limit("states", graph.states.len(), MAX_GRAPH_STATES)?;
    limit("transitions", graph.transitions.len(), big)?;
    limit("points", graph.points.len(), big)?;
    limit("conditions", graph.conditions.len(), big)?;
    let names = graph.parameters.iter().map(|p| p.name).chain(graph.states.iter().map(|s| s.name));
    for n in names.chain([name]) {
        limit("name bytes", n.len(), 255)?;
    }
    w.str(name);
    w.u16(index(graph.initial)?);
    for n in [
        graph.parameters.len(),
        graph.states.len(),
        graph.transitions.len(),
        graph.points.len(),
        graph.conditions.len(),
    ] {
        w.u16(n as u16);
    }
    for p in graph.parameters {
        let (kind, v) = match p.kind {
            ParameterKind::Float(v) => (PARAM_FLOAT, v),
            ParameterKind::Bool(b) => (PARAM_BOOL, if b { 1.0 } else { 0.0 }),
            ParameterKind::Trigger => (PARAM_TRIGGER, 0.0),
        };
        w.bytes(&[kind, 0, 0, 0]);
        w.f32(v);
    }
    write_records(w, graph.states, graph.transitions, graph.points, graph.conditions)?;
    for p in graph.parameters {
        w.str(p.name);
    }
    for s in graph.states {
        w.str(s.name);
    }
    Ok(())
}

/// A list index as a `u16` of a record (at most 65,534: `NONE` means none).
fn index(i: usize) -> Result<u16, GraphError> {
    let big = NONE as usize - 1;
    if i > big {
        Err(GraphError::Storage { list: "index", needed: i, capacity: big })
    } else {
        Ok(i as u16)
    }
}

/// Writes a state machine's state, transition, point and condition records.
fn write_records(
    w: &mut Writer<'_>,
    states: &[State<'_>],
    transitions: &[Transition<f32>],
    points: &[BlendPoint<f32>],
    conditions: &[Condition<f32>],
) -> Result<(), GraphError> {
    for s in states {
        let loop_flag = if s.looping { STATE_FLAG_LOOP } else { 0 };
        let sync_flag = |sync: bool| if sync { STATE_FLAG_SYNC } else { 0 };
        let (kind, flags, a, b, points) = match s.kind {
            StateKind::Clip(c) => (STATE_CLIP, loop_flag, index(c)?, NONE, Span::default()),
            StateKind::Blend1d { parameter, points, sync } => {
                (STATE_BLEND1D, loop_flag | sync_flag(sync), index(parameter)?, NONE, points)
            }
            StateKind::Blend2d { x, y, points, sync } => {
                (STATE_BLEND2D, loop_flag | sync_flag(sync), index(x)?, index(y)?, points)
            }
        };
        w.bytes(&[kind, flags]);
        for v in [a, b, points.start, points.len, 0] {
            w.u16(v);
        }
    }
    for t in transitions {
        w.u16(t.from.map_or(Ok(NONE), index)?);
        w.u16(index(t.to)?);
        w.u16(t.conditions.start);
        w.u16(t.conditions.len);
        let (blend, curve, sync) = match t.blend {
            TransitionBlend::Crossfade { curve, sync } => {
                (BLEND_CROSSFADE, if curve == FadeCurve::Linear { CURVE_LINEAR } else { CURVE_SMOOTHSTEP }, sync)
            }
            TransitionBlend::Inertialize => (BLEND_INERTIALIZE, CURVE_LINEAR, false),
        };
        let flags = if sync { TRANSITION_FLAG_SYNC } else { 0 }
            | if t.exit_time.is_some() { TRANSITION_FLAG_EXIT_TIME } else { 0 };
        w.bytes(&[blend, curve, flags, 0]);
        w.f32(t.exit_time.unwrap_or(0.0));
        w.f32(t.duration);
    }
    for p in points {
        w.u16(index(p.clip)?);
        w.u16(0);
        w.f32(p.position[0]);
        w.f32(p.position[1]);
    }
    for c in conditions {
        let (test, v) = match c.test {
            Test::Greater(v) => (TEST_GREATER, v),
            Test::Less(v) => (TEST_LESS, v),
            Test::AtLeast(v) => (TEST_AT_LEAST, v),
            Test::AtMost(v) => (TEST_AT_MOST, v),
            Test::True => (TEST_TRUE, 0.0),
            Test::False => (TEST_FALSE, 0.0),
            Test::Triggered => (TEST_TRIGGERED, 0.0),
        };
        w.u16(index(c.parameter)?);
        w.bytes(&[test, 0]);
        w.f32(v);
    }
    Ok(())
}

/// Writes `graph` (a base graph and its layers) as the body of a graph section called `name`
/// (see [`write_graph`]; a graph without layers is written as it writes
/// it). The graph's clip indices must be the file's.
///
/// # Errors
///
/// As [`write_graph`], and [`GraphError::Storage`] for more than
/// [`MAX_GRAPH_LAYERS`] layers, a layer with more than [`MAX_GRAPH_STATES`] states or a list
/// or mask joint over 65,534, or a layer name over 255 bytes. Every count and name is checked
/// before anything is written.
pub fn write_layered_graph(w: &mut Writer<'_>, name: &str, graph: &LayeredGraph<'_, f32>) -> Result<(), GraphError> {
    let big = NONE as usize - 1;
    limit("layers", graph.layers.len(), MAX_GRAPH_LAYERS)?;
    for l in graph.layers {
        limit("states", l.states.len(), MAX_GRAPH_STATES)?;
        limit("channels", l.mask.len(), big)?;
        limit("transitions", l.transitions.len(), big)?;
        limit("points", l.points.len(), big)?;
        limit("conditions", l.conditions.len(), big)?;
        for n in l.states.iter().map(|s| s.name).chain([l.name]) {
            limit("name bytes", n.len(), 255)?;
        }
        for c in l.mask {
            limit("index", c.start.max(c.end.unwrap_or(0)), big)?;
        }
    }
    write_graph(w, name, &graph.base)?;
    if graph.layers.is_empty() {
        return Ok(());
    }
    w.u16(graph.layers.len() as u16);
    for l in graph.layers {
        w.str(l.name);
        let (mode, reference) = match l.mode {
            LayerMode::Override => (LAYER_OVERRIDE, 0),
            LayerMode::Additive(AdditiveReference::RestPose) => (LAYER_ADDITIVE, REFERENCE_REST),
            LayerMode::Additive(AdditiveReference::Baked) => (LAYER_ADDITIVE, REFERENCE_BAKED),
        };
        w.bytes(&[mode, reference]);
        w.u16(index(l.initial)?);
        w.f32(l.weight);
        for n in [l.mask.len(), l.states.len(), l.transitions.len(), l.points.len(), l.conditions.len()] {
            w.u16(n as u16);
        }
        for c in l.mask {
            w.u16(index(c.start)?);
            w.u16(c.end.map_or(Ok(NONE), index)?);
            w.u16(c.fade_in);
            w.u16(0);
        }
        write_records(w, l.states, l.transitions, l.points, l.conditions)?;
        for s in l.states {
            w.str(s.name);
        }
    }
    Ok(())
}

/// Writes `report` as the body of a clip-report section (the values as given: the file's
/// parser checks them).
pub fn write_clip_report(w: &mut Writer<'_>, report: &ClipReport) {
    w.u16(report.clip as u16);
    let mut flags = 0;
    if report.shell_from_mesh {
        flags |= REPORT_FLAG_SHELL_FROM_MESH;
    }
    if !report.measured {
        flags |= REPORT_FLAG_UNMEASURED;
    }
    w.bytes(&[flags, 0]);
    w.f32(report.bound);
    w.f32(report.shell);
    w.f32(report.error);
    w.u16(report.joint.map_or(NONE, |j| j as u16));
    w.u16(0);
    w.f32(report.time);
}
