//! A loaded `.sinew` file as the page sees it: [`open`] with the browser's joint capacity,
//! and [`describe`], the model's description for the JavaScript side.

use alloc::boxed::Box;
use alloc::string::String;

use sinew::asset::Asset;
use sinew_host::gl;
use sinew_host::limits::WebRig;
use sinew_host::{LoadError, Model};

use crate::json::Json;

/// Takes ownership of `bytes` and opens them as a model of at most [`WebRig::JOINTS`] joints,
/// its meshes split for palettes of at most `palette` joints (see [`Model::open`]), parsed
/// as the module's features need: a module with the graphs' state machines with
/// [`Asset::parse`], one without them with [`Asset::parse_without_graph_rules`], and one
/// without morph targets and spring bones too (`sinew_web.wasm`) with
/// [`Asset::parse_for_playback`], which lists their sections unchecked: that module reads no
/// more of them than whether they are there, and the page opens a file that needs them in the
/// full module, which checks them.
///
/// # Errors
///
/// A [`LoadError`] for bytes that are not a `.sinew` file with a skeleton that fits.
pub fn open(bytes: Box<[u8]>, palette: usize) -> Result<Model, LoadError> {
    #[cfg(feature = "graph")]
    let parse = Asset::parse;
    #[cfg(all(not(feature = "graph"), any(feature = "springs", feature = "morphs")))]
    let parse = Asset::parse_without_graph_rules;
    #[cfg(not(any(feature = "graph", feature = "springs", feature = "morphs")))]
    let parse = Asset::parse_for_playback;
    Model::open_with::<{ WebRig::SOA }>(bytes, Some(palette), parse)
}

/// The model's description for the JavaScript side: joints and their parents, skins, clips, graphs, meshes
/// with their draw parts (addresses of their vertex and index data in this module's
/// memory), textures (addresses of their texels), and the bounds.
#[must_use]
// Out of line: a load-time path, whose inlined copies only grow the module.
#[inline(never)]
pub fn describe(model: &Model) -> String {
    let mut j = Json::default();
    j.raw("{").key("joints").uint(model.num_joints()).raw(",").key("jointNames").raw("[");
    for i in 0..model.num_joints() {
        if i > 0 {
            j.raw(",");
        }
        j.string(model.skeleton().name(i).unwrap_or(""));
    }
    // Each joint's parent, -1 for a root: the viewer draws bones from them.
    j.raw("],").key("parents").raw("[");
    for i in 0..model.num_joints() {
        if i > 0 {
            j.raw(",");
        }
        match model.skeleton().parent(i) {
            Some(p) => j.uint(p),
            None => j.raw("-1"),
        };
    }
    j.raw("],").key("palette").uint(model.palette.unwrap_or(0)).raw(",").key("skins").raw("[");
    for (i, s) in model.skins.iter().enumerate() {
        if i > 0 {
            j.raw(",");
        }
        j.raw("{").key("joints").uint(s.joints.len()).raw("}");
    }
    j.raw("],").key("clips").raw("[");
    for (i, c) in model.clips.iter().enumerate() {
        if i > 0 {
            j.raw(",");
        }
        j.raw("{").key("name").string(c.clip.name()).raw(",").key("start").float(c.clip.start());
        j.raw(",").key("end").float(c.clip.end()).raw("}");
    }
    j.raw("],").key("graphs").raw("[");
    crate::graph::describe_graphs(&model.asset, &mut j);
    j.raw("],").key("meshes").raw("[");
    for (mi, parts) in model.meshes.iter().enumerate() {
        let mesh = model.asset.mesh(mi);
        if mi > 0 {
            j.raw(",");
        }
        j.raw("{").key("name").string(mesh.map_or("", |m| m.name()));
        j.raw(",").key("skin").opt_uint(mesh.and_then(|m| m.skin()));
        j.raw(",").key("node").opt_uint(mesh.and_then(|m| m.node()));
        j.raw(",").key("morph").raw(if model.asset.morph_targets(mi).is_some() { "true" } else { "false" });
        j.raw(",").key("parts").raw("[");
        for (pi, p) in parts.iter().enumerate() {
            if pi > 0 {
                j.raw(",");
            }
            let m = &p.material;
            j.raw("{").key("source").uint(p.source);
            j.raw(",").key("vertices").uint(p.vertices.as_ptr() as usize);
            j.raw(",").key("vertexCount").uint(p.num_vertices());
            j.raw(",").key("indices").uint(p.indices.as_ptr() as usize);
            j.raw(",").key("indexCount").uint(p.indices.len());
            j.raw(",").key("joints").uint(if p.is_rigid() { 1 } else { p.map.len() });
            j.raw(",").key("map").uint(p.map.as_ptr() as usize);
            j.raw(",").key("rigid").raw(if p.is_rigid() { "true" } else { "false" });
            let color = m.factor.map(|c| f32::from(c) / 255.0);
            j.raw(",").key("color").floats(&color);
            j.raw(",").key("texture").opt_uint(m.texture.filter(|_| p.textured));
            j.raw(",").key("wrapS").uint(gl::wrap(m.wrap_s) as usize);
            j.raw(",").key("wrapT").uint(gl::wrap(m.wrap_t) as usize);
            j.raw(",")
                .key("mag")
                .uint(gl::mag_filter(m.mag_filter) as usize)
                .raw(",")
                .key("min")
                .uint(gl::min_filter(m.min_filter) as usize);
            j.raw("}");
        }
        j.raw("]}");
    }
    j.raw("],").key("textures").raw("[");
    for i in 0..model.asset.num_textures() {
        if i > 0 {
            j.raw(",");
        }
        match model.asset.texture(i) {
            Some(t) => {
                let tex = t.texture();
                let format = match tex.format() {
                    sinew::raster::TexelFormat::Rgba8 => "rgba8",
                    sinew::raster::TexelFormat::Rgb565 => "rgb565",
                };
                j.raw("{").key("name").string(t.name()).raw(",").key("width").uint(tex.width() as usize);
                j.raw(",").key("height").uint(tex.height() as usize).raw(",").key("format").string(format);
                j.raw(",").key("texels").uint(tex.texels().as_ptr() as usize);
                j.raw(",").key("length").uint(tex.texels().len()).raw("}");
            }
            None => {
                j.raw("null");
            }
        }
    }
    let b = model.bounds;
    j.raw("],").key("bounds").raw("{").key("center").floats(&b.center.to_array());
    j.raw(",").key("radius").float(b.radius).raw(",").key("floor").float(b.floor).raw("}}");
    j.out
}
