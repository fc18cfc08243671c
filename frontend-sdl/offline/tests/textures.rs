//! Texture extensions: `EXT_texture_webp` images (lossless and lossy) decode to the pixels of
//! the PNG they were made from; a texture that offers a WebP image and a fallback reads the WebP
//! one; `KHR_texture_basisu` falls back to the texture's `source` (or no texture) with a note
//! when only used, and is refused by name when required; a corrupt WebP image is a typed error
//! naming it. The models are written by `tests/data/textures/make_textures.py`.

use std::path::{Path, PathBuf};

use sinew_offline::import::gltf::{load_file, GltfError};
use sinew_offline::rig::Rig;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/textures").join(name)
}

fn load(name: &str) -> Rig {
    load_file(&data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The RGBA8 pixels of the image the first material's texture reads.
fn texture_pixels(rig: &Rig) -> Option<&[u8]> {
    let texture = rig.materials.first()?.texture.as_ref()?;
    Some(rig.images.get(texture.image)?.rgba.as_slice())
}

fn png_pixels() -> Vec<u8> {
    let rig = load("quad-png.glb");
    let px = texture_pixels(&rig).expect("quad-png.glb has a texture").to_vec();
    assert_eq!(px.len(), 16 * 16 * 4);
    px
}

#[test]
fn lossless_webp_decodes_to_the_png_pixels() {
    let rig = load("quad-webp.glb");
    let image = &rig.images[0];
    assert_eq!((image.width, image.height), (16, 16));
    assert_eq!(texture_pixels(&rig), Some(png_pixels().as_slice()));
}

#[test]
fn lossy_webp_decodes_like_libwebp() {
    let rig = load("quad-webp-lossy.glb");
    let webp = texture_pixels(&rig).expect("a texture").to_vec();
    // The same image decoded by libwebp (sharp), written by make_textures.py.
    let reference = std::fs::read(data("quad-webp-lossy.rgba")).unwrap();
    assert_eq!(webp.len(), reference.len());
    let worst = webp.iter().zip(&reference).map(|(a, b)| a.abs_diff(*b)).max().unwrap_or(0);
    let mean = webp.iter().zip(&reference).map(|(a, b)| f64::from(a.abs_diff(*b))).sum::<f64>() / webp.len() as f64;
    eprintln!("lossy WebP: image-webp against libwebp: mean {mean:.2} levels, largest {worst}");
    // Lossy, so not the PNG's pixels, but exactly what libwebp decodes.
    assert_ne!(webp, png_pixels());
    assert_eq!(webp, reference, "mean difference {mean}, largest {worst}");
}

#[test]
fn a_texture_with_webp_and_a_fallback_reads_the_webp_image() {
    let rig = load("quad-both.glb");
    let px = texture_pixels(&rig).expect("a texture");
    // The fallback is solid magenta; the WebP image is the varied PNG's pixels.
    assert_eq!(px, png_pixels().as_slice());
    assert!(px.chunks_exact(4).any(|p| p[..3] != [255, 0, 255]));
    assert_eq!(rig.images.len(), 1, "the fallback image is not decoded");
}

#[test]
fn basisu_used_only_falls_back_with_a_note() {
    let rig = load("quad-basisu-used.glb");
    assert_eq!(texture_pixels(&rig), Some(png_pixels().as_slice()));
    let note = rig.notes.iter().find(|n| n.contains("KHR_texture_basisu"));
    assert!(note.is_some_and(|n| n.contains("fallback image 0")), "notes: {:?}", rig.notes);

    let rig = load("quad-basisu-only.glb");
    assert_eq!(rig.materials.len(), 1);
    assert!(rig.materials[0].texture.is_none(), "no image sinew decodes: untextured");
    assert!(rig.images.is_empty());
    assert!(
        rig.notes.iter().any(|n| n.contains("KHR_texture_basisu") && n.contains("untextured")),
        "notes: {:?}",
        rig.notes
    );
}

#[test]
fn basisu_required_is_refused_by_name() {
    match load_file(&data("quad-basisu-required.glb")) {
        Err(e @ GltfError::UnsupportedExtensions(_)) => {
            let GltfError::UnsupportedExtensions(names) = &e else { unreachable!() };
            assert_eq!(names, &["KHR_texture_basisu".to_owned()]);
            assert!(e.to_string().contains("KHR_texture_basisu"), "{e}");
        }
        other => panic!("expected UnsupportedExtensions, got {other:?}"),
    }
}

#[test]
fn corrupt_webp_is_a_typed_error_naming_the_image() {
    match load_file(&data("quad-webp-corrupt.glb")) {
        Err(e @ GltfError::BadImage { image: 0, .. }) => {
            let text = e.to_string();
            assert!(text.starts_with("image 0 ") && text.contains("WebP"), "{text}");
        }
        other => panic!("expected BadImage for image 0, got {other:?}"),
    }
}

#[test]
fn webp_extension_source_must_name_an_image() {
    let mut bad = std::fs::read(data("quad-webp.glb")).unwrap();
    // The JSON chunk holds `"EXT_texture_webp":{"source":0}`; point it past the images.
    let key = b"\"EXT_texture_webp\":{\"source\":0}";
    let at = bad.windows(key.len()).position(|w| w == key).expect("the extension object");
    bad[at + key.len() - 2] = b'7';
    match sinew_offline::import::gltf::load_bytes(&bad, None, "bad") {
        Err(GltfError::Schema(s)) => assert!(s.contains("textures[0].extensions.EXT_texture_webp.source"), "{s}"),
        other => panic!("expected a schema error, got {other:?}"),
    }
}
