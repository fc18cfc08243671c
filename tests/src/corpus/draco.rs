//! Draco-compressed glTF (`KHR_draco_mesh_compression`) broken in its stream, its extension
//! object and the accessors the stream fills: [`draco_glb`], the bases (RiggedFigure and
//! SimpleSkin compressed by gltf-pipeline and gltf-transform, kept with sinew-offline's tests),
//! and [`draco_cases`] (part of [`gltf_cases`](super::gltf::gltf_cases)), each refused as a
//! [`GltfError::Draco`] naming the mesh, its name and the primitive, and what is wrong.

use std::path::Path;

use serde_json::Value;
use sinew_offline::import::gltf::GltfError;

use super::gltf::{glb_json_edit, glb_parts, GltfCase};
use super::read;
use super::Category::Compressed;

/// A Draco test model of `frontend-sdl/offline/tests/data` (`make_draco.sh` there): for
/// `RiggedFigure-draco.glb` (gltf-pipeline's defaults), mesh 0 "Proxy" has one primitive whose
/// JOINTS_0, NORMAL, POSITION and WEIGHTS_0 (accessors 78 to 81, Draco ids 0 to 3) and indices
/// (accessor 77) are one 3281-byte stream in buffer view 4: 367 vertices, 256 triangles.
pub fn draco_glb(name: &str) -> Vec<u8> {
    read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../frontend-sdl/offline/tests/data").join(name))
}

/// The base of most cases.
const BASE: &str = "RiggedFigure-draco.glb";

/// The primitive's extension object in a GLB's JSON.
fn ext(json: &mut Value) -> &mut Value {
    &mut json["meshes"][0]["primitives"][0]["extensions"]["KHR_draco_mesh_compression"]
}

/// Where the stream (buffer view 4) starts in the GLB's bytes, and its length.
fn stream(glb: &[u8]) -> (usize, usize) {
    let (json, bin_start) = glb_parts(glb);
    let view = &json["bufferViews"][4];
    let at = |k: &str| view[k].as_u64().expect("buffer view field") as usize;
    (bin_start + at("byteOffset"), at("byteLength"))
}

/// A case that must be refused as [`GltfError::Draco`] for mesh 0 ("Proxy") primitive 0, its
/// detail containing `detail`.
fn refused(name: &str, bytes: Vec<u8>, detail: &'static str) -> GltfCase {
    GltfCase::matching(
        Compressed,
        format!("{BASE}: {name}"),
        bytes,
        format!("Draco {{ mesh: 0, name: \"Proxy\", primitive: 0, detail: …{detail}… }}"),
        move |r| {
            matches!(r, Err(GltfError::Draco { mesh: 0, name: Some(n), primitive: 0, detail: d })
                if n == "Proxy" && d.contains(detail))
        },
    )
}

/// The valid files; streams cut short, zeroed, or with a byte changed in the header, the
/// connectivity or the vertex count; extension objects with missing, invalid or dangling
/// fields; attribute ids the stream lacks or that the primitive does not list; accessors whose
/// count, type or component type do not fit the decoded data.
#[must_use]
pub fn draco_cases() -> Vec<GltfCase> {
    let base = draco_glb(BASE);
    let edit = |f: fn(&mut Value)| glb_json_edit(&base, f);
    let mut cases = Vec::new();
    for (name, vertices) in
        [("RiggedFigure-draco.glb", 367), ("RiggedFigure-draco-seq.glb", 365), ("SimpleSkin-draco.gltf", 10)]
    {
        cases.push(GltfCase::matching(
            Compressed,
            format!("{name} (valid)"),
            draco_glb(name),
            format!("Ok, {vertices} vertices"),
            move |r| r.as_ref().is_ok_and(|rig| rig.meshes[0].primitives[0].positions.len() == vertices),
        ));
    }
    // The stream cut short, zeroed, and single bytes changed: the magic ("DRACO"), a byte of the
    // EdgeBreaker connectivity, and one of the point count (the decoded count then disagrees
    // with the accessors').
    let (at, length) = stream(&base);
    for cut in [1000, 8] {
        let bytes = glb_json_edit(&base, |j| j["bufferViews"][4]["byteLength"] = cut.into());
        cases.push(refused(&format!("stream cut to {cut} of {length} bytes"), bytes, "does not decode"));
    }
    let mut zeros = base.clone();
    zeros[at..at + length].fill(0);
    cases.push(refused("stream zeroed", zeros, "does not decode"));
    for (offset, what, detail) in [
        (0, "magic byte", "does not decode"),
        (20, "connectivity byte", "does not decode"),
        (96, "point-count byte", "has count 367, the stream decodes 361 vertices"),
    ] {
        let mut b = base.clone();
        b[at + offset] = !b[at + offset];
        cases.push(refused(&format!("{what} {offset} of the stream inverted"), b, detail));
    }
    // The extension object.
    cases.push(refused(
        "no bufferView",
        edit(|j| {
            ext(j).as_object_mut().map(|o| o.remove("bufferView"));
        }),
        "bufferView is missing",
    ));
    cases.push(refused("bufferView -1", edit(|j| ext(j)["bufferView"] = (-1).into()), "not a non-negative integer"));
    cases.push(refused("bufferView 99", edit(|j| ext(j)["bufferView"] = 99.into()), "buffer view 99 does not exist"));
    cases.push(refused(
        "stream's view past its buffer",
        edit(|j| j["bufferViews"][4]["byteOffset"] = 5000.into()),
        "is outside buffer 0",
    ));
    cases.push(refused("attributes not an object", edit(|j| ext(j)["attributes"] = 3.into()), "attributes"));
    cases.push(refused(
        "attribute id \"2\" (a string)",
        edit(|j| ext(j)["attributes"]["POSITION"] = "2".into()),
        "POSITION id \"2\" is not an integer",
    ));
    cases.push(refused(
        "attribute id 9, not in the stream",
        edit(|j| ext(j)["attributes"]["NORMAL"] = 9.into()),
        "NORMAL id 9 is not in the stream",
    ));
    cases.push(refused(
        "TEXCOORD_0 compressed but not in the primitive",
        edit(|j| ext(j)["attributes"]["TEXCOORD_0"] = 1.into()),
        "TEXCOORD_0 is compressed but not among the primitive's attributes",
    ));
    // The accessors the stream fills.
    cases.push(refused(
        "POSITION accessor count 366",
        edit(|j| j["accessors"][80]["count"] = 366.into()),
        "accessor 80 (POSITION) has count 366, the stream decodes 367 vertices",
    ));
    cases.push(refused(
        "indices accessor count 765",
        edit(|j| j["accessors"][77]["count"] = 765.into()),
        "indices accessor 77 has count 765",
    ));
    cases.push(refused(
        "POSITION accessor VEC2",
        edit(|j| j["accessors"][80]["type"] = "VEC2".into()),
        "the decoded attribute has 3 components",
    ));
    cases.push(refused(
        "indices as unsigned bytes (367 vertices)",
        edit(|j| j["accessors"][77]["componentType"] = 5121.into()),
        "does not fit U8",
    ));
    cases.push(refused(
        "NORMAL accessor of shorts (decoded as floats)",
        edit(|j| {
            j["accessors"][79]["componentType"] = 5122.into();
            j["accessors"][79]["normalized"] = true.into();
        }),
        "decoded floating-point value",
    ));
    cases.push(GltfCase::matching(
        Compressed,
        format!("{BASE}: JOINTS_0 accessor of floats"),
        edit(|j| j["accessors"][78]["componentType"] = 5126.into()),
        "AccessorType { accessor: 78, .. }",
        |r| matches!(r, Err(GltfError::AccessorType { accessor: 78, .. })),
    ));
    // A points primitive is not decoded: the importer skips it.
    cases.push(GltfCase::matching(
        Compressed,
        format!("{BASE}: POINTS mode (skipped, not decoded)"),
        edit(|j| j["meshes"][0]["primitives"][0]["mode"] = 0.into()),
        "Ok, no primitives",
        |r| r.as_ref().is_ok_and(|rig| rig.meshes[0].primitives.is_empty()),
    ));
    cases
}
