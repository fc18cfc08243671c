//! The exported functions, called as the JavaScript loader calls them.

use super::*;

/// Copies `bytes` into memory from [`sinew_import_alloc`], runs [`sinew_import`], releases the
/// memory, and returns the outcome read through the result and error functions.
fn import(bytes: &[u8], palette: u32) -> Result<Vec<u8>, String> {
    let len = u32::try_from(bytes.len()).unwrap();
    let ptr = sinew_import_alloc(len);
    assert!(!ptr.is_null());
    // SAFETY: `ptr` holds `len` bytes from `sinew_import_alloc`, released once below.
    let ok = unsafe {
        std::slice::from_raw_parts_mut(ptr, bytes.len()).copy_from_slice(bytes);
        let ok = sinew_import(ptr, len, palette);
        sinew_import_free(ptr, len);
        ok
    };
    let read = |p: *const u8, n: u32| -> Vec<u8> {
        // SAFETY: the pointer and length of the state's result or error, unchanged until the
        // next `sinew_import` call on this thread.
        unsafe { std::slice::from_raw_parts(p, n as usize) }.to_vec()
    };
    let result = read(sinew_import_result_ptr(), sinew_import_result_len());
    let error = String::from_utf8(read(sinew_import_error_ptr(), sinew_import_error_len())).unwrap();
    match ok {
        1 => {
            assert!(error.is_empty());
            Ok(result)
        }
        0 => {
            assert!(result.is_empty());
            Err(error)
        }
        n => panic!("sinew_import returned {n}"),
    }
}

/// The notes of the last [`sinew_import`] call, read through the notes functions.
fn notes() -> String {
    // SAFETY: the pointer and length of the state's notes, unchanged until the next
    // `sinew_import` call on this thread.
    let bytes = unsafe { std::slice::from_raw_parts(sinew_import_notes_ptr(), sinew_import_notes_len() as usize) };
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// A glTF file with two scenes, the default one holding node "a", the other node "b".
const TWO_SCENES: &str = r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]},{"nodes":[1]}],
"nodes":[{"name":"a"},{"name":"b"}]}"#;

#[test]
fn notes_of_the_last_import_are_read_one_per_line() {
    import(TWO_SCENES.as_bytes(), 0).unwrap();
    assert_eq!(notes(), "1 nodes are not in the imported scene(s) and were left out");
    // Fox has none; a failure leaves none either.
    import(&fox(), 0).unwrap();
    assert_eq!(notes(), "");
    import(TWO_SCENES.as_bytes(), 0).unwrap();
    assert!(import(b"{}", 0).is_err());
    assert_eq!(sinew_import_notes_len(), 0);
}

/// The Fox sample model (3 clips) of the shared assets.
fn fox() -> Vec<u8> {
    let fox = sinew_assets::path("gltf/Fox/Fox.glb");
    std::fs::read(&fox).unwrap_or_else(|e| panic!("{}: {e}", fox.display()))
}

#[test]
fn fox_bakes_with_its_three_clips() {
    let baked = import(&fox(), 0).unwrap();
    let asset = sinew::asset::Asset::parse(&baked).unwrap();
    assert_eq!(asset.num_clips(), 3);
    for name in ["Survey", "Walk", "Run"] {
        assert!(asset.clip_by_name(name).is_some(), "no clip {name}");
    }
    assert_eq!(import_gltf(&fox(), 0).unwrap().0, baked);
}

#[test]
fn palette_limit_splits_meshes() {
    let whole = import(&fox(), 0).unwrap();
    let split = import(&fox(), 8).unwrap();
    assert!(sinew::asset::Asset::parse(&split).is_ok());
    assert_ne!(whole, split);
}

#[test]
fn truncated_glb_is_a_message() {
    let bytes = fox();
    let e = import(&bytes[..bytes.len() / 2], 0).unwrap_err();
    assert!(e.starts_with("malformed GLB container: truncated"), "{e}");
    assert!(!e.contains('\n'));
    // The failure leaves nothing behind: the next import succeeds.
    assert!(import(&bytes, 0).is_ok());
}

#[test]
fn empty_and_null_inputs_are_messages() {
    assert!(!import(&[], 0).unwrap_err().is_empty());
    // SAFETY: a null pointer is allowed.
    assert_eq!(unsafe { sinew_import(std::ptr::null(), 4, 0) }, 0);
    assert_eq!(sinew_import_result_len(), 0);
    assert!(sinew_import_error_len() > 0);
    // SAFETY: null is ignored.
    unsafe { sinew_import_free(std::ptr::null_mut(), 4) };
}

#[test]
fn gltf_json_with_data_uris_imports() {
    // A one-joint skinned triangle: positions, joints, weights and an inverse bind matrix in
    // one base64 buffer.
    let mut bin = Vec::new();
    for p in [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]] {
        bin.extend(p.iter().flat_map(|x| x.to_le_bytes()));
    }
    bin.extend([0u8; 12]);
    for _ in 0..3 {
        bin.extend([1.0f32, 0.0, 0.0, 0.0].iter().flat_map(|x| x.to_le_bytes()));
    }
    let identity = [1.0f32, 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1.];
    bin.extend(identity.iter().flat_map(|x| x.to_le_bytes()));
    let uri = base64(&bin);
    let json = format!(
        r#"{{"asset": {{"version": "2.0"}}, "scene": 0, "scenes": [{{"nodes": [0, 1]}}],
        "nodes": [{{"name": "root"}}, {{"mesh": 0, "skin": 0}}],
        "skins": [{{"joints": [0], "inverseBindMatrices": 3}}],
        "meshes": [{{"primitives": [{{"attributes": {{"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2}}}}]}}],
        "buffers": [{{"byteLength": {}, "uri": "data:application/octet-stream;base64,{uri}"}}],
        "bufferViews": [{{"buffer": 0, "byteOffset": 0, "byteLength": 36}},
            {{"buffer": 0, "byteOffset": 36, "byteLength": 12}},
            {{"buffer": 0, "byteOffset": 48, "byteLength": 48}},
            {{"buffer": 0, "byteOffset": 96, "byteLength": 64}}],
        "accessors": [
            {{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
              "min": [0, 0, 0], "max": [1, 1, 0]}},
            {{"bufferView": 1, "componentType": 5121, "count": 3, "type": "VEC4"}},
            {{"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC4"}},
            {{"bufferView": 3, "componentType": 5126, "count": 1, "type": "MAT4"}}]}}"#,
        bin.len()
    );
    let baked = import(json.as_bytes(), 0).unwrap();
    assert!(sinew::asset::Asset::parse(&baked).is_ok());
}

#[test]
fn external_buffers_are_refused() {
    let json = r#"{"asset": {"version": "2.0"}, "buffers": [{"byteLength": 4, "uri": "model.bin"}]}"#;
    let e = import(json.as_bytes(), 0).unwrap_err();
    assert_eq!(
        e,
        "buffer 0: external file \"model.bin\" cannot be read: this import reads only embedded data \
         (a .glb, or a .gltf with data: URIs)"
    );
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = c.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Draco-compressed files import in the browser's build (the decoder is pure Rust), and a
/// corrupt stream is a one-line message naming the primitive.
#[test]
fn draco_files_import() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../offline/tests/data/RiggedFigure-draco.glb");
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let baked = import(&bytes, 0).expect("a Draco file imports");
    let asset = sinew::asset::Asset::parse(&baked).expect("the bake parses");
    assert_eq!(asset.num_meshes(), 1);
    // The stream's first bytes ("DRACO" and its version) zeroed.
    let at = bytes.windows(5).position(|w| w == b"DRACO").expect("the stream");
    let mut corrupt = bytes.clone();
    corrupt[at..at + 8].fill(0);
    let message = import(&corrupt, 0).unwrap_err();
    assert!(
        message.starts_with("mesh 0 (\"Proxy\") primitive 0: KHR_draco_mesh_compression data cannot be decoded"),
        "{message}"
    );
    assert_eq!(message.lines().count(), 1);
}

#[test]
fn meshopt_files_need_the_decoder() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../offline/tests/data/RiggedFigure-meshopt.glb");
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let outcome = import(&bytes, 0);
    if sinew_offline::import::gltf::DECODES_MESHOPT {
        // Built together with packages that enable the decoder (`cargo test --workspace`).
        assert!(outcome.is_ok(), "{outcome:?}");
    } else {
        assert_eq!(
            outcome.unwrap_err(),
            "the file requires the extension EXT_meshopt_compression, which this build of sinew cannot decode \
             (built without the `meshopt` feature)"
        );
    }
}

#[test]
fn bvh_files_import_their_skeleton_and_motion() {
    let path = sinew_assets::path("bvh/cmu/01_01.bvh");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let baked = import(&bytes, 0).unwrap();
    let asset = sinew::asset::Asset::parse(&baked).unwrap();
    assert_eq!((asset.num_meshes(), asset.num_clips()), (0, 1));
    assert_eq!(asset.skeleton().map(|s| s.num_joints()), Some(38));
    // A BVH cut short is one line naming what is wrong, and the next import succeeds.
    let e = import(&bytes[..bytes.len() / 3], 0).unwrap_err();
    assert!(!e.is_empty() && !e.contains('\n'), "{e}");
    assert!(import(&fox(), 0).is_ok());
}
