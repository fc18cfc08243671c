//! Meshopt-compressed glTF (`EXT_meshopt_compression` and `KHR_meshopt_compression`) broken in
//! its streams and its extension objects: [`meshopt_glb`], the bases (RiggedFigure repacked by
//! gltfpack, kept with sinew-offline's tests), and [`meshopt_cases`] (part of
//! [`gltf_cases`](super::gltf::gltf_cases)), each refused as a [`GltfError::Meshopt`] naming the
//! buffer view, the extension and what is wrong.

use std::path::Path;

use serde_json::Value;
use sinew_offline::import::gltf::GltfError;

use super::gltf::{glb_json_edit, glb_parts, GltfCase};
use super::read;
use super::Category::Compressed;

const EXT: &str = "EXT_meshopt_compression";
const KHR: &str = "KHR_meshopt_compression";

/// RiggedFigure, quantized and meshopt-compressed with filters by gltfpack
/// (`frontend-sdl/offline/tests/data/make_compressed.sh`) under `extension` (`EXT_…` or
/// `KHR_…`, whose vertex streams are codec version 1): eight compressed views, the streams one
/// after another at the start of the BIN chunk (buffer 0), decoded into the fallback buffer 1.
pub fn meshopt_glb(extension: &str) -> Vec<u8> {
    let name = if extension == KHR { "RiggedFigure-meshopt-khr.glb" } else { "RiggedFigure-meshopt.glb" };
    read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../frontend-sdl/offline/tests/data").join(name))
}

/// The compression object of buffer view `view` in a GLB's JSON.
fn ext(json: &mut Value, view: usize) -> &mut Value {
    let e = &mut json["bufferViews"][view]["extensions"];
    let name = if e.get(KHR).is_some() { KHR } else { EXT };
    &mut e[name]
}

/// Where buffer view `view`'s compressed stream starts in the GLB's bytes.
fn stream_start(glb: &[u8], view: usize) -> usize {
    let (mut json, bin_start) = glb_parts(glb);
    bin_start + ext(&mut json, view)["byteOffset"].as_u64().expect("byteOffset") as usize
}

/// A case of `base` (`EXT_…` or `KHR_…`) that must be refused as [`GltfError::Meshopt`] for
/// `view` under `extension`, its detail containing `detail`.
fn refused_as(
    base: &'static str,
    name: &str,
    bytes: Vec<u8>,
    view: usize,
    extension: &'static str,
    detail: &'static str,
) -> GltfCase {
    GltfCase::matching(
        Compressed,
        format!("RiggedFigure-meshopt ({base}): {name}"),
        bytes,
        format!("Meshopt {{ view: {view}, extension: {extension}, detail: …{detail}… }}"),
        move |r| {
            matches!(r, Err(GltfError::Meshopt { view: v, extension: e, detail: d })
                if *v == view && *e == extension && d.contains(detail))
        },
    )
}

/// Truncated streams (the compressed range cut short), wrong header bytes, bytes inverted
/// inside the data, zeroed data, a filter the extension does not define or that does not fit its view, a mode it does not
/// define, missing fields, a compressed range outside its buffer and more elements than the
/// view holds.
#[must_use]
pub fn meshopt_cases() -> Vec<GltfCase> {
    let base = meshopt_glb(EXT);
    let edit = |view: usize, f: fn(&mut Value)| glb_json_edit(&base, |j| f(ext(j, view)));
    let refused = |name: &str, bytes, view, detail| refused_as(EXT, name, bytes, view, EXT, detail);
    let mut cases = Vec::new();
    for extension in [EXT, KHR] {
        cases.push(GltfCase::matching(
            Compressed,
            format!("RiggedFigure-meshopt ({extension}, valid)"),
            meshopt_glb(extension),
            "Ok, 312 vertices",
            |r| r.as_ref().is_ok_and(|rig| rig.meshes[0].primitives[0].positions.len() == 312),
        ));
    }
    // Truncated: the positions' vertex stream (725 bytes) and the index stream (285 bytes)
    // declared shorter than they are.
    cases.push(refused(
        "vertex stream cut to 400 of 725 bytes",
        edit(0, |e| e["byteLength"] = 400.into()),
        0,
        "vertex stream",
    ));
    cases.push(refused(
        "index stream cut to 100 of 285 bytes",
        edit(4, |e| e["byteLength"] = 100.into()),
        4,
        "Triangles stream",
    ));
    // The header byte of each codec (vertex 0xA0, index 0xE1) changed.
    for (view, what, detail) in [(0, "vertex", "vertex stream"), (4, "index", "Triangles stream")] {
        let mut b = base.clone();
        b[stream_start(&base, view)] ^= 0xFF;
        cases.push(refused(&format!("{what} stream header byte changed"), b, view, detail));
    }
    // A byte inside the data of a stream inverted (past the header and the first block's
    // control bytes): the vertex codec, its octahedral and quaternion filters' streams, and the
    // index codec refuse the stream; another byte of the index stream decodes to an index past
    // the vertices, which the importer refuses.
    for (view, offset, what, detail) in [
        (0, 24, "vertex", "vertex stream"),
        (1, 18, "octahedral normals'", "vertex stream"),
        (7, 17, "quaternion rotations'", "vertex stream"),
        (4, 17, "index", "Triangles stream"),
    ] {
        let mut b = base.clone();
        let at = stream_start(&base, view) + offset;
        b[at] = !b[at];
        cases.push(refused(&format!("{what} stream byte {offset} inverted"), b, view, detail));
    }
    let mut b = base.clone();
    let at = stream_start(&base, 4) + 32;
    b[at] = !b[at];
    cases.push(GltfCase::matching(
        Compressed,
        format!("RiggedFigure-meshopt ({EXT}): index stream byte 32 inverted (decodes to index 312)"),
        b,
        "BadIndex { what: \"mesh 0 primitive 0 indices\", index: 312, limit: 312 }",
        |r| matches!(r, Err(GltfError::BadIndex { what, index: 312, limit: 312 }) if what == "mesh 0 primitive 0 indices"),
    ));
    let mut b = base.clone();
    let at = stream_start(&base, 2);
    b[at..at + 1495].fill(0);
    cases.push(refused("weights stream zeroed", b, 2, "vertex stream"));
    // Filters: a name the extension does not define, and QUATERNION on 4-byte normals.
    cases.push(refused("filter \"WAVY\"", edit(1, |e| e["filter"] = "WAVY".into()), 1, "filter \"WAVY\""));
    cases.push(refused(
        "QUATERNION filter on a 4-byte stride",
        edit(1, |e| e["filter"] = "QUATERNION".into()),
        1,
        "does not apply",
    ));
    cases.push(refused(
        "EXPONENTIAL filter on an index stream",
        edit(4, |e| e["filter"] = "EXPONENTIAL".into()),
        4,
        "does not apply",
    ));
    cases.push(refused("mode \"POINTS\"", edit(3, |e| e["mode"] = "POINTS".into()), 3, "mode"));
    cases.push(refused(
        "no count",
        edit(5, |e| {
            e.as_object_mut().map(|o| o.remove("count"));
        }),
        5,
        "count is missing",
    ));
    cases.push(refused("byteStride -4", edit(0, |e| e["byteStride"] = (-4).into()), 0, "byteStride"));
    cases.push(refused(
        "compressed range past the buffer",
        edit(7, |e| e["byteOffset"] = 5200.into()),
        7,
        "outside buffer 0",
    ));
    cases.push(refused(
        "count past the view's byteLength",
        edit(6, |e| e["count"] = 3.into()),
        6,
        "exceed the view's byteLength 8",
    ));
    // KHR: a version-1 vertex stream cut short; the file relabelled EXT (whose streams are
    // version 0); a view that uses both extensions.
    let khr = meshopt_glb(KHR);
    let mut b = khr.clone();
    let at = stream_start(&khr, 0) + 18;
    b[at] = !b[at];
    cases.push(refused_as(KHR, "vertex stream byte 18 inverted", b, 0, KHR, "vertex stream"));
    cases.push(refused_as(
        KHR,
        "vertex stream cut to 300 of 653 bytes",
        glb_json_edit(&khr, |j| ext(j, 0)["byteLength"] = 300.into()),
        0,
        KHR,
        "vertex stream",
    ));
    let (json, bin_start) = glb_parts(&khr);
    let relabelled = json.to_string().replace(KHR, EXT);
    cases.push(refused_as(
        KHR,
        "relabelled EXT_meshopt_compression",
        super::gltf::glb_from(&relabelled, &khr[bin_start..]),
        0,
        EXT,
        "codec version 1",
    ));
    let both = glb_json_edit(&khr, |j| {
        let copy = ext(j, 3).clone();
        j["bufferViews"][3]["extensions"][EXT] = copy;
    });
    cases.push(refused_as(KHR, "a view with both extensions", both, 3, KHR, "also uses EXT_meshopt_compression"));
    cases
}
