//! Materials, texture coordinates, vertex colors and images: the sample models' textures, a
//! PNG from a `data:` URI and from a file beside the `.gltf`, vertex colors of every allowed
//! type, one material per primitive through the baker, and bad images refused by index.

use serde_json::{json, Value};
use sinew::asset::Asset;
use sinew::raster::{TexelFormat, Wrap};

use super::optional::{full, load_value, TINY_PNG};
use super::*;
use crate::bake::{bake, BakeOptions};
use crate::material::FilterMode;

/// The RGBA8 pixels of [`TINY_PNG`].
const TINY_RGBA: [u8; 16] = [255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255];

#[test]
fn cesium_man_and_fox_read_their_textures() {
    for (model, min) in [("CesiumMan", FilterMode::NearestMipmapLinear), ("Fox", FilterMode::LinearMipmapLinear)] {
        let rig = load(model);
        assert_eq!(rig.materials.len(), 1, "{model}");
        let t = rig.materials[0].texture.unwrap_or_else(|| panic!("{model}: no texture"));
        assert_eq!((t.sampler.wrap_s, t.sampler.wrap_t), (Wrap::Repeat, Wrap::Repeat), "{model}");
        assert_eq!((t.sampler.mag_filter, t.sampler.min_filter), (FilterMode::Linear, min), "{model}");
        assert_eq!(rig.images.len(), 1, "{model}");
        let img = &rig.images[t.image];
        assert_eq!((img.width, img.height, img.rgba.len()), (1024, 1024, 1024 * 1024 * 4), "{model}");
        // A real picture: many distinct colors, opaque.
        let distinct: HashSet<&[u8]> = img.rgba.chunks_exact(4).step_by(97).collect();
        assert!(distinct.len() > 40, "{model}: {} colors", distinct.len());
        assert!(img.rgba.chunks_exact(4).all(|p| p[3] == 255), "{model}");
        for p in primitives(&rig) {
            assert_eq!(p.material, Some(0), "{model}");
            let uv = p.texcoords.as_ref().unwrap_or_else(|| panic!("{model}: no texture coordinates"));
            assert_eq!(uv.len(), p.positions.len(), "{model}");
            assert!(
                uv.iter().flatten().all(|c| (-0.001..=1.001).contains(c)),
                "{model}: texture coordinates off [0, 1]"
            );
            assert!(p.colors.is_none(), "{model}");
        }
    }
}

#[test]
fn a_data_uri_png_decodes_with_its_sampler() {
    let rig = load_value(&full()).unwrap();
    assert_eq!(rig.images.len(), 1);
    assert_eq!((rig.images[0].width, rig.images[0].height), (2, 2));
    assert_eq!(rig.images[0].rgba, TINY_RGBA);
    assert_eq!(rig.images[0].name, "i");
    let m = &rig.materials[0];
    assert_eq!(m.base_color, [1.0, 0.5, 0.25, 1.0]);
    let s = m.texture.unwrap().sampler;
    assert_eq!((s.wrap_s, s.wrap_t), (Wrap::Repeat, Wrap::ClampToEdge));
    assert_eq!((s.mag_filter, s.min_filter), (FilterMode::Linear, FilterMode::LinearMipmapLinear));
    let p = primitives(&rig).next().unwrap();
    assert_eq!(p.texcoords.as_ref().map(Vec::len), Some(p.positions.len()));
}

#[test]
fn an_image_file_beside_the_gltf_is_read() {
    let dir = std::env::temp_dir().join(format!("sinew-image-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tiny.png"), STANDARD.decode(TINY_PNG).unwrap()).unwrap();
    let mut v = full();
    v["images"][0] = json!({"uri": "tiny.png"});
    std::fs::write(dir.join("m.gltf"), v.to_string()).unwrap();
    let rig = load_file(&dir.join("m.gltf"));
    // Not there: an error naming the image file.
    v["images"][0] = json!({"uri": "missing.png"});
    std::fs::write(dir.join("n.gltf"), v.to_string()).unwrap();
    let missing = load_file(&dir.join("n.gltf"));
    std::fs::remove_dir_all(&dir).unwrap();
    let rig = rig.unwrap();
    assert_eq!(rig.images[0].rgba, TINY_RGBA);
    assert_eq!(rig.images[0].name, "tiny.png");
    let e = missing.unwrap_err().to_string();
    assert!(e.contains("missing.png"), "{e}");
}

/// `v` with `COLOR_0` on its primitive: an accessor of `component`/`kind` over `bytes` in a
/// second buffer.
fn with_colors(mut v: Value, component: u32, kind: &str, normalized: bool, bytes: &[u8]) -> Value {
    let buffers = v["buffers"].as_array_mut().unwrap();
    buffers.push(json!({"byteLength": bytes.len(), "uri": format!("data:application/octet-stream;base64,{}", STANDARD.encode(bytes))}));
    let views = v["bufferViews"].as_array_mut().unwrap();
    views.push(json!({"buffer": 1, "byteLength": bytes.len()}));
    let view = views.len() - 1;
    let accessors = v["accessors"].as_array_mut().unwrap();
    accessors.push(
        json!({"bufferView": view, "componentType": component, "normalized": normalized, "count": 3, "type": kind}),
    );
    v["meshes"][0]["primitives"][0]["attributes"]["COLOR_0"] = json!(accessors.len() - 1);
    v
}

#[test]
fn vertex_colors_of_every_type_read_as_linear_rgba() {
    let want = [[1.0, 0.0, 0.5, 1.0], [0.0, 1.0, 0.25, 0.5], [0.0, 0.0, 1.0, 1.0]];
    let f32s: Vec<u8> = want.iter().flat_map(|c| c.iter().flat_map(|x: &f32| x.to_le_bytes())).collect();
    let f32_rgb: Vec<u8> = want.iter().flat_map(|c| c[..3].iter().flat_map(|x: &f32| x.to_le_bytes())).collect();
    let u8s: Vec<u8> = want.iter().flat_map(|c| c.map(|x| (x * 255.0).round() as u8)).collect();
    let u16s: Vec<u8> =
        want.iter().flat_map(|c| c.iter().flat_map(|x| ((x * 65535.0).round() as u16).to_le_bytes())).collect();
    let cases: [(u32, &str, &[u8], bool); 4] = [
        (5126, "VEC4", &f32s, false),
        (5126, "VEC3", &f32_rgb, true),
        (5121, "VEC4", &u8s, false),
        (5123, "VEC4", &u16s, false),
    ];
    for (component, kind, bytes, rgb) in cases {
        let mut pad = bytes.to_vec();
        pad.resize(pad.len().next_multiple_of(4), 0);
        let rig = load_value(&with_colors(full(), component, kind, component != 5126, &pad))
            .unwrap_or_else(|e| panic!("{component} {kind}: {e}"));
        let got = primitives(&rig).next().unwrap().colors.clone().unwrap();
        for (g, w) in got.iter().zip(&want) {
            let w = if rgb { [w[0], w[1], w[2], 1.0] } else { *w };
            assert!(g.iter().zip(&w).all(|(a, b)| (a - b).abs() < 0.003), "{component} {kind}: {g:?} vs {w:?}");
        }
    }
    // Not normalized integers are not colors.
    let e = load_value(&with_colors(full(), 5121, "VEC4", false, &u8s)).unwrap_err().to_string();
    assert!(e.contains("COLOR_0"), "{e}");
}

#[test]
fn each_primitive_keeps_its_material_through_the_baker() {
    // A second primitive, the same triangle, with an untextured blue material.
    let mut v = full();
    let mut second = v["meshes"][0]["primitives"][0].clone();
    second["material"] = json!(1);
    v["meshes"][0]["primitives"].as_array_mut().unwrap().push(second);
    v["materials"].as_array_mut().unwrap().push(json!({"pbrMetallicRoughness": {"baseColorFactor": [0, 0, 1, 1]}}));
    let rig = load_value(&v).unwrap();
    let mats: Vec<Option<usize>> = primitives(&rig).map(|p| p.material).collect();
    assert_eq!(mats, [Some(0), Some(1)]);

    for (format, size, texels) in [
        (TexelFormat::Rgba8, 1024, TINY_RGBA.to_vec()),
        (TexelFormat::Rgb565, 1024, vec![0x00, 0xf8, 0xe0, 0x07, 0x1f, 0x00, 0xff, 0xff]),
    ] {
        let opts = BakeOptions { texture_format: format, texture_size: size, ..BakeOptions::default() };
        let (bytes, report) = bake(&rig, &opts).unwrap();
        let asset = Asset::parse(&bytes).unwrap();
        assert_eq!(asset.num_textures(), 1);
        let t = asset.texture(0).unwrap();
        let texture = t.texture();
        assert_eq!((t.name(), texture.width(), texture.height(), texture.format()), ("i", 2, 2, format));
        assert_eq!(texture.texels(), texels.as_slice());
        assert_eq!(report.textures.len(), 1);
        let parts: Vec<_> = asset.mesh(0).unwrap().parts().collect();
        assert_eq!(parts.len(), 2);
        let (a, b) = (parts[0].material(), parts[1].material());
        assert_eq!((a.factor, a.texture, a.wrap_t), ([255, 128, 64, 255], Some(0), Wrap::ClampToEdge));
        assert!(parts[0].has_texcoords());
        assert_eq!((b.factor, b.texture), ([0, 0, 255, 255], None));
        // The untextured part does not store texture coordinates.
        assert!(!parts[1].has_texcoords());
    }
    // Textures larger than the size asked for are scaled down.
    let opts = BakeOptions { texture_size: 1, ..BakeOptions::default() };
    let (bytes, report) = bake(&rig, &opts).unwrap();
    let t = Asset::parse(&bytes).unwrap().texture(0).unwrap().texture();
    assert_eq!((t.width(), t.height(), report.textures[0].source), (1, 1, (2, 2)));
}

/// A PNG file's signature and IHDR chunk for a `w × h` RGB image, and nothing else.
fn png_header(w: u32, h: u32) -> Vec<u8> {
    let mut ihdr = b"IHDR".to_vec();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend_from_slice(&13u32.to_be_bytes());
    out.extend_from_slice(&ihdr);
    out.extend_from_slice(&sinew::asset::crc32(&ihdr).to_be_bytes());
    out
}

/// [`full`] with its image as `bytes` in a `data:` URI of media type `mime`.
fn with_image(mime: &str, bytes: &[u8]) -> Value {
    let mut v = full();
    v["images"][0] = json!({"uri": format!("data:{mime};base64,{}", STANDARD.encode(bytes)), "mimeType": mime});
    v
}

#[test]
fn bad_images_are_refused_naming_the_image() {
    let png = STANDARD.decode(TINY_PNG).unwrap();
    type Want = fn(&GltfError) -> bool;
    let cases: Vec<(&str, Value, Want)> = vec![
        ("truncated PNG", with_image("image/png", &png[..png.len() - 20]), |e| {
            matches!(e, GltfError::BadImage { image: 0, .. })
        }),
        ("huge PNG", with_image("image/png", &png_header(9000, 16)), |e| {
            matches!(e, GltfError::ImageTooLarge { image: 0, width: 9000, height: 16, .. })
        }),
        ("empty PNG", with_image("image/png", &png_header(0, 16)), |e| {
            matches!(e, GltfError::BadImage { image: 0, .. } | GltfError::ImageTooLarge { image: 0, .. })
        }),
        ("huge PNG with data", with_image("image/png", &[png_header(4, 9000), png[33..].to_vec()].concat()), |e| {
            matches!(e, GltfError::ImageTooLarge { image: 0, width: 4, height: 9000, .. })
        }),
        ("corrupt JPEG", with_image("image/jpeg", &[0xFF, 0xD8, 0xFF, 0xC0, 0, 3, 1, 2, 3, 4]), |e| {
            matches!(e, GltfError::BadImage { image: 0, .. })
        }),
        ("PNG declared as JPEG", with_image("image/jpeg", &png), |e| matches!(e, GltfError::BadImage { image: 0, .. })),
        ("truncated WebP data: URI", with_image("image/webp", b"RIFF0000WEBP"), |e| {
            matches!(e, GltfError::BadImage { image: 0, .. })
        }),
        ("KTX2 data: URI", with_image("image/ktx2", b"\xabKTX 20\xbb\r\n\x1a\n"), |e| {
            matches!(e, GltfError::ImageUnavailable { image: 0, .. })
        }),
        (
            "PNG declared as WebP",
            {
                let mut v = with_image("image/png", &png);
                v["images"][0]["mimeType"] = json!("image/webp");
                v
            },
            |e| matches!(e, GltfError::BadImage { image: 0, .. }),
        ),
        (
            "declared KTX2",
            {
                let mut v = with_image("image/png", &png);
                v["images"][0]["mimeType"] = json!("image/ktx2");
                v
            },
            |e| matches!(e, GltfError::UnsupportedImage { image: 0, .. }),
        ),
        (
            "no source",
            {
                let mut v = full();
                v["images"][0] = json!({});
                v
            },
            |e| matches!(e, GltfError::ImageUnavailable { image: 0, .. }),
        ),
    ];
    for (what, v, ok) in cases {
        match load_value(&v) {
            Ok(_) => panic!("{what}: loaded"),
            Err(e) => {
                assert!(ok(&e), "{what}: {e:?}");
                assert!(e.to_string().contains("image 0"), "{what}: {e}");
            }
        }
    }
}

/// `KHR_texture_transform` on the base-color texture: offset, scale and rotation applied to the
/// coordinates as the extension's matrix `T · R · S` says, its `texCoord` chosen over the
/// texture info's, and the extension accepted in `extensionsRequired`.
#[test]
fn texture_transform_applies_to_the_base_color_coordinates() {
    let plain = load_value(&full()).unwrap();
    let uv0 = primitives(&plain).next().unwrap().texcoords.clone().unwrap();
    let with = |ext: Value| {
        let mut v = full();
        v["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"]["extensions"] =
            json!({ "KHR_texture_transform": ext });
        v["extensionsUsed"] = json!(["KHR_texture_transform"]);
        v["extensionsRequired"] = json!(["KHR_texture_transform"]);
        let rig = load_value(&v).unwrap();
        let uv = primitives(&rig).next().unwrap().texcoords.clone().unwrap();
        uv
    };
    let shifted = with(json!({"offset": [0.5, -0.25], "scale": [2.0, 4.0]}));
    for (a, b) in uv0.iter().zip(&shifted) {
        assert!((b[0] - (2.0 * a[0] + 0.5)).abs() < 1e-6 && (b[1] - (4.0 * a[1] - 0.25)).abs() < 1e-6, "{a:?} {b:?}");
    }
    // A quarter turn: (u, v) → (−v, u).
    let turned = with(json!({"rotation": std::f32::consts::FRAC_PI_2, "texCoord": 0}));
    for (a, b) in uv0.iter().zip(&turned) {
        assert!((b[0] + a[1]).abs() < 1e-6 && (b[1] - a[0]).abs() < 1e-6, "{a:?} {b:?}");
    }
    // A texCoord set the primitive lacks is named.
    let mut v = full();
    v["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"]["extensions"] =
        json!({"KHR_texture_transform": {"texCoord": 3}});
    let e = load_value(&v).unwrap_err().to_string();
    assert!(e.contains("TEXCOORD_3"), "{e}");
}

/// Texture coordinates as `KHR_mesh_quantization` stores them: normalized unsigned shorts map
/// to `q / 65535`, signed bytes that are not normalized read as their values.
#[test]
fn quantized_texture_coordinates_read_as_gltf_maps_them() {
    for (component, normalized, bytes, want) in [
        (
            5123u32,
            true,
            [0u16, 65535, 32768, 0, 65535, 65535].iter().flat_map(|q| q.to_le_bytes()).collect::<Vec<u8>>(),
            [[0.0, 1.0], [32768.0 / 65535.0, 0.0], [1.0, 1.0]],
        ),
        (5120, false, vec![0u8, 1, 0xff, 2, 3, 0xfe], [[0.0, 1.0], [-1.0, 2.0], [3.0, -2.0]]),
    ] {
        let mut v = full();
        let buffers = v["buffers"].as_array_mut().unwrap();
        buffers.push(json!({"byteLength": bytes.len(), "uri": format!("data:application/octet-stream;base64,{}", STANDARD.encode(&bytes))}));
        let views = v["bufferViews"].as_array_mut().unwrap();
        views.push(json!({"buffer": 1, "byteLength": bytes.len()}));
        let view = views.len() - 1;
        let accessors = v["accessors"].as_array_mut().unwrap();
        accessors.push(json!({"bufferView": view, "componentType": component, "normalized": normalized, "count": 3, "type": "VEC2"}));
        v["meshes"][0]["primitives"][0]["attributes"]["TEXCOORD_0"] = json!(accessors.len() - 1);
        let rig = load_value(&v).unwrap();
        let uv = primitives(&rig).next().unwrap().texcoords.clone().unwrap();
        for (g, w) in uv.iter().zip(&want) {
            assert!((g[0] - w[0]).abs() < 1e-6 && (g[1] - w[1]).abs() < 1e-6, "{component}: {g:?} vs {w:?}");
        }
    }
}
