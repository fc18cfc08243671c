//! The graphs of a file as the page lists them ([`describe_graphs`]). They run in the host
//! layer's `sinew_host::graph`, whose state machines are the larger part of the runtime: the
//! site's `sinew_web.wasm` is built without them (feature `graph` off) and shows and plays any
//! file, and `sinew_web_graph.wasm`, with them, is fetched when a page runs a graph.

use sinew::asset::Asset;
use sinew::graph::ParameterKind;

use crate::json::Json;

/// Appends each graph of `asset` as `{"name", "states": [...], "parameters": [{"name",
/// "kind", "value"}]}` (kinds `float`, `bool`, `trigger`; the initial value).
pub fn describe_graphs(asset: &Asset<'_>, j: &mut Json) {
    for g in 0..asset.num_graphs() {
        let Some(data) = asset.graph(g) else { continue };
        if g > 0 {
            j.raw(",");
        }
        j.raw("{").key("name").string(data.name()).raw(",").key("states").raw("[");
        for s in 0..data.num_states() {
            if s > 0 {
                j.raw(",");
            }
            j.string(data.state_name(s).unwrap_or(""));
        }
        j.raw("],").key("parameters").raw("[");
        for p in 0..data.num_parameters() {
            if p > 0 {
                j.raw(",");
            }
            j.raw("{").key("name").string(data.parameter_name(p).unwrap_or(""));
            let (kind, value) = match data.parameter_kind::<f32>(p) {
                Some(ParameterKind::Float(v)) => ("float", v),
                Some(ParameterKind::Bool(b)) => ("bool", if b { 1.0 } else { 0.0 }),
                _ => ("trigger", 0.0),
            };
            j.raw(",").key("kind").string(kind).raw(",").key("value").float(value).raw("}");
        }
        j.raw("]}");
    }
}
