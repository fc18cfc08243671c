//! Quantized (`KHR_mesh_quantization`) and meshopt-compressed (`EXT_meshopt_compression`, and
//! the ratified `KHR_meshopt_compression` with version-1 vertex streams) models load and skin to
//! their uncompressed original within the position quantization error; corrupt meshopt streams
//! are typed errors, and so are KHR's version-1 streams labelled EXT; every byte of every stream
//! inverted gives a typed error or other valid data, never a panic. The models are RiggedFigure
//! repacked by gltfpack (`tests/data/make_compressed.sh`).

use std::path::{Path, PathBuf};

use sinew::math::{Mat4, Vec3};
use sinew_offline::bake::BakeOptions;
use sinew_offline::import::gltf::{load_bytes, GltfError};
use sinew_offline::model::{Model, Skinning};
use sinew_tests::corpus::gltf::glb_from;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn original() -> PathBuf {
    sinew_assets::path("gltf/RiggedFigure/RiggedFigure.glb")
}

fn exact() -> BakeOptions {
    BakeOptions { lossless: true, max_influences: sinew::limits::MAX_INFLUENCES, ..BakeOptions::default() }
}

/// Skinned positions of mesh 0 (LBS) in the rest pose, and the skin palette.
fn rest_pose(path: &Path) -> (Vec<Vec3<f32>>, Vec<Mat4<f32>>) {
    let model = Model::load(path, None, &exact()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut world = Vec::new();
    model.world(model.skeleton().rest_pose(), &mut world).unwrap();
    let palette = model.palette(&world, 0).unwrap();
    let dq = model.dq_palette(&world, 0).unwrap();
    let parts = model.skin_mesh(0, &world, &palette, &dq, Skinning::Lbs).unwrap();
    (parts.into_iter().flat_map(|p| p.positions).collect(), palette)
}

/// The largest distance from a point of `a` to its nearest point of `b`.
fn one_sided(a: &[Vec3<f32>], b: &[Vec3<f32>]) -> f32 {
    a.iter().map(|p| b.iter().map(|q| (*p - *q).length()).fold(f32::MAX, f32::min)).fold(0.0, f32::max)
}

#[test]
#[cfg_attr(not(feature = "meshopt"), ignore = "needs the meshopt decoder (the `meshopt` feature)")]
fn quantized_and_meshopt_models_match_the_original() {
    let (want, palette) = rest_pose(&original());
    // gltfpack's default: positions on a 14-bit grid over the mesh's largest extent, so each
    // coordinate moves by at most half a step; the palette's 3×3 part (Frobenius norm, at
    // least its spectral norm) carries that to the skinned vertex. Plus f32 rounding.
    let (lo, hi) =
        want.iter().fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(lo, hi), p| (lo.min(*p), hi.max(*p)));
    let extent = (hi - lo).max_abs();
    let norm = palette
        .iter()
        .map(|m| (0..3).flat_map(|c| (0..3).map(move |r| m.cols[c][r] * m.cols[c][r])).sum::<f32>().sqrt())
        .fold(0.0, f32::max);
    let step = extent / ((1 << 14) - 1) as f32;
    let bound = 3f32.sqrt() * 0.5 * step * norm + 1e-5 * extent;
    for name in ["RiggedFigure-quantized.glb", "RiggedFigure-meshopt.glb", "RiggedFigure-meshopt-khr.glb"] {
        let (got, _) = rest_pose(&data(name));
        let d = one_sided(&got, &want).max(one_sided(&want, &got));
        eprintln!(
            "{name}: {} vertices (original {}), Hausdorff distance {d:.2e} (bound {bound:.2e}, size {extent:.3})",
            got.len(),
            want.len()
        );
        assert!(d <= bound, "{name}: {d} > {bound}");
        assert!(d > 0.0, "{name}: no quantization error at all");
    }
}

/// The BIN chunk's byte range of a GLB.
fn bin_range(glb: &[u8]) -> std::ops::Range<usize> {
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let at = 20 + json_len;
    let len = u32::from_le_bytes(glb[at..at + 4].try_into().unwrap()) as usize;
    at + 8..at + 8 + len
}

#[test]
#[cfg_attr(not(feature = "meshopt"), ignore = "needs the meshopt decoder (the `meshopt` feature)")]
fn corrupt_meshopt_streams_are_typed_errors() {
    let good = std::fs::read(data("RiggedFigure-meshopt.glb")).unwrap();
    assert!(load_bytes(&good, None, "rf").is_ok());
    let bin = bin_range(&good);
    // The first view's stream starts the BIN chunk: a wrong header byte, then garbage inside
    // every stream, then all-zero data.
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut header = good.clone();
    header[bin.start] ^= 0xff;
    cases.push(("header", header));
    let mut garbage = good.clone();
    for (i, b) in garbage[bin.clone()].iter_mut().enumerate() {
        if i % 7 == 3 {
            *b = b.wrapping_mul(31).wrapping_add(17);
        }
    }
    cases.push(("garbage", garbage));
    let mut zeros = good.clone();
    zeros[bin.clone()].fill(0);
    cases.push(("zeros", zeros));
    for (what, bytes) in cases {
        match load_bytes(&bytes, None, "rf") {
            Err(GltfError::Meshopt { view, detail, .. }) => eprintln!("{what}: view {view}: {detail}"),
            other => panic!("{what}: {other:?}"),
        }
    }
    // A compressed range past its buffer, and a stride the codec cannot take.
    let text = String::from_utf8_lossy(&good[20..bin.start - 8]).into_owned();
    for (from, to) in [
        (r#""byteLength":725"#, r#""byteLength":99999"#),
        (r#""byteStride":4,"mode":"ATTRIBUTES""#, r#""byteStride":6,"mode":"ATTRIBUTES""#),
    ] {
        assert!(text.contains(from), "{from}");
        let json = text.replacen(from, to, 1);
        let bytes = glb_from(&json, &good[bin.clone()]);
        assert!(matches!(load_bytes(&bytes, None, "rf"), Err(GltfError::Meshopt { view: 0, .. })), "{to}");
    }
}

/// Every byte of every compressed stream of both meshopt files inverted, one at a time: each
/// import returns, with the rig when the change decodes to other valid data, or a typed error
/// (the stream refused, or what it decodes to: joint or vertex indices out of range, weights
/// that are all zero, key times out of order, ...), and never panics.
#[test]
#[cfg_attr(not(feature = "meshopt"), ignore = "needs the meshopt decoder (the `meshopt` feature)")]
fn every_inverted_meshopt_byte_is_handled() {
    for name in ["RiggedFigure-meshopt.glb", "RiggedFigure-meshopt-khr.glb"] {
        let good = std::fs::read(data(name)).unwrap();
        let bin = bin_range(&good);
        let json: serde_json::Value = serde_json::from_slice(&good[20..bin.start - 8]).unwrap();
        let (mut refused, mut stream_refused, mut loaded) = (0, 0, 0);
        for view in json["bufferViews"].as_array().unwrap() {
            let e = &view["extensions"];
            let Some(e) = e.get("EXT_meshopt_compression").or(e.get("KHR_meshopt_compression")) else { continue };
            let at = bin.start + e["byteOffset"].as_u64().unwrap_or(0) as usize;
            for i in at..at + e["byteLength"].as_u64().unwrap() as usize {
                let mut bytes = good.clone();
                bytes[i] = !bytes[i];
                match load_bytes(&bytes, None, "rf") {
                    Ok(_) => loaded += 1,
                    Err(GltfError::Meshopt { .. }) => stream_refused += 1,
                    Err(_) => refused += 1,
                }
            }
        }
        eprintln!("{name}: {stream_refused} streams refused, {refused} decoded data refused, {loaded} loaded");
        assert!(stream_refused > 0 && loaded > 0, "{name}");
    }
}

/// The two meshopt extensions: an EXT file relabelled KHR loads to the same vertices (KHR's
/// version-0 streams are EXT's), the KHR file relabelled EXT is refused by its version-1
/// streams, naming the view and the extension.
#[test]
#[cfg_attr(not(feature = "meshopt"), ignore = "needs the meshopt decoder (the `meshopt` feature)")]
fn khr_and_ext_meshopt_labels() {
    let relabel = |glb: &[u8], from: &str, to: &str| {
        let bin = bin_range(glb);
        let text = String::from_utf8_lossy(&glb[20..bin.start - 8]).replace(from, to);
        glb_from(&text, &glb[bin])
    };
    let ext = std::fs::read(data("RiggedFigure-meshopt.glb")).unwrap();
    let khr = std::fs::read(data("RiggedFigure-meshopt-khr.glb")).unwrap();
    let positions =
        |bytes: &[u8]| load_bytes(bytes, None, "rf").map(|rig| rig.meshes[0].primitives[0].positions.clone());
    let as_khr = relabel(&ext, "EXT_meshopt_compression", "KHR_meshopt_compression");
    assert_eq!(positions(&as_khr).unwrap(), positions(&ext).unwrap());
    assert_eq!(positions(&khr).unwrap().len(), positions(&ext).unwrap().len());
    match load_bytes(&relabel(&khr, "KHR_meshopt_compression", "EXT_meshopt_compression"), None, "rf") {
        Err(e @ GltfError::Meshopt { view: 0, extension: "EXT_meshopt_compression", .. }) => {
            let text = e.to_string();
            assert!(text.contains("codec version 1") && text.contains("KHR_meshopt_compression"), "{text}");
        }
        other => panic!("{other:?}"),
    }
}

/// A GLB of `json` and `bin`, both padded to 4 bytes.
/// Without the decoder, a file that requires the extension, or whose compressed views have no
/// fallback data, is refused by name.
#[test]
#[cfg(not(feature = "meshopt"))]
fn meshopt_files_are_refused_without_the_decoder() {
    for (name, extension) in [
        ("RiggedFigure-meshopt.glb", "EXT_meshopt_compression"),
        ("RiggedFigure-meshopt-khr.glb", "KHR_meshopt_compression"),
    ] {
        let bytes = std::fs::read(data(name)).unwrap();
        let e = load_bytes(&bytes, None, "m").unwrap_err();
        assert!(
            matches!(e, GltfError::ExtensionNotInBuild { extension: x, feature: "meshopt" } if x == extension),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!(
                "the file requires the extension {extension}, which this build of sinew cannot decode \
                 (built without the `meshopt` feature)"
            )
        );
    }
}
