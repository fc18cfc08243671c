//! Containers and buffers: external files and unsafe URIs, `data:` URIs, GLB headers and chunks,
//! truncated files and bit flips.

use super::*;

#[test]
fn external_buffers() {
    let tiny = Tiny::new();
    let (bin, views) = tiny.bin();
    let dir = std::env::temp_dir().join(format!("sinew-gltf-test-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/tiny data.bin"), &bin).unwrap();
    let with_uri = |uri: &str| tiny.json(&format!(r#"{{"byteLength":{},"uri":"{uri}"}}"#, bin.len()), &views);
    std::fs::write(dir.join("tiny.gltf"), with_uri("sub/tiny%20data.bin")).unwrap();
    let rig = load_file(&dir.join("tiny.gltf")).unwrap();
    check_invariants(&rig);
    assert_eq!(rig.name, "tiny");
    assert_eq!(rig.meshes[0].primitives[0].positions.len(), 3);
    // The same text without a base directory.
    let r = load_bytes(with_uri("sub/tiny%20data.bin").as_bytes(), None, "t");
    assert!(matches!(r, Err(GltfError::MissingBuffer { buffer: 0, .. })), "{r:?}");
    // Paths that leave the base directory or are not files.
    for uri in [
        "../tiny.bin",
        "sub/../../x.bin",
        "/etc/passwd",
        "http://example.com/a.bin",
        "file:///a.bin",
        "C:/a.bin",
        "%2e%2e/x.bin",
        "a.bin?x",
    ] {
        let r = load_bytes(with_uri(uri).as_bytes(), Some(&dir), "t");
        assert!(matches!(r, Err(GltfError::MissingBuffer { buffer: 0, .. })), "{uri}: {r:?}");
    }
    let r = load_bytes(with_uri("missing.bin").as_bytes(), Some(&dir), "t");
    assert!(matches!(r, Err(GltfError::Io { .. })), "{r:?}");
    // Unsupported data: URIs.
    for uri in [
        "data:text/plain;base64,AAAA",
        "data:application/octet-stream,AAAA",
        "data:application/octet-stream;base64,@@@@",
    ] {
        let r = load_bytes(with_uri(uri).as_bytes(), None, "t");
        assert!(matches!(r, Err(GltfError::MissingBuffer { .. })), "{uri}: {r:?}");
    }
    let r = load_file(&dir.join("nothing.glb"));
    assert!(matches!(r, Err(GltfError::Io { .. })));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn glb_container_errors() {
    let tiny = Tiny::new();
    let glb = tiny.glb();
    assert!(load_bytes(&glb, None, "t").is_ok());
    // No BIN chunk for a buffer without URI.
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let no_bin = glb_from_chunks(&glb[20..20 + json_len], None);
    assert!(matches!(load_bytes(&no_bin, None, "t"), Err(GltfError::MissingBuffer { buffer: 0, .. })));
    // Wrong version, tiny and lying lengths.
    let mut v1 = glb.clone();
    v1[4] = 1;
    assert!(matches!(load_bytes(&v1, None, "t"), Err(GltfError::Container(_))));
    for len in [0u32, 8, 12, 19] {
        let mut short = glb.clone();
        short[8..12].copy_from_slice(&len.to_le_bytes());
        assert!(matches!(load_bytes(&short, None, "t"), Err(GltfError::Container(_))), "length {len}");
    }
    let mut chunk = glb.clone();
    chunk[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(load_bytes(&chunk, None, "t"), Err(GltfError::Container(_))));
    // Trailing bytes after the declared length are ignored.
    let mut longer = glb.clone();
    longer.extend([0u8; 7]);
    assert!(load_bytes(&longer, None, "t").is_ok());
    // Neither GLB nor JSON text (a wrong magic), and nothing at all: messages that say so.
    let mut magic = glb.clone();
    magic[3] = b'X';
    let e = load_bytes(&magic, None, "t").unwrap_err().to_string();
    assert!(e.contains("neither a GLB file") && e.contains("nor glTF JSON text"), "{e}");
    for blank in [&b""[..], b" \r\n\t", b"\xEF\xBB\xBF"] {
        let e = load_bytes(blank, None, "t").unwrap_err().to_string();
        assert_eq!(e, "invalid glTF JSON: the file is empty or only whitespace");
    }
}

#[test]
fn truncated_files() {
    let glb = std::fs::read(sample("RiggedSimple")).unwrap();
    let json_end = 20 + u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    for cut in [0, 3] {
        // Too short for the magic: not recognized as GLB, so it is (bad) JSON.
        assert!(matches!(load_bytes(&glb[..cut], None, "t"), Err(GltfError::Json(_))));
    }
    for cut in [4, 11, 12, 19, 20, 21, 100, json_end - 1, json_end, json_end + 4, json_end + 8, glb.len() - 1] {
        let r = load_bytes(&glb[..cut], None, "t");
        assert!(matches!(r, Err(GltfError::Container(_))), "cut at {cut}: {r:?}");
    }
    let text = std::fs::read(sample("SimpleSkin")).unwrap();
    for cut in [0, 1, 10, 100, 1000, text.len() / 2, text.len() - 2] {
        let r = load_bytes(&text[..cut], None, "t");
        assert!(matches!(r, Err(GltfError::Json(_))), "cut at {cut}: {r:?}");
    }
}

#[test]
fn bit_flips_never_panic() {
    let mut outcomes = HashMap::new();
    let mut run = |bytes: &[u8]| {
        let kind = match load_bytes(bytes, None, "t") {
            Ok(rig) => {
                check_invariants(&rig);
                "ok"
            }
            Err(e) => {
                assert!(!e.to_string().is_empty());
                match e {
                    GltfError::Container(_) => "container",
                    GltfError::Json(_) => "json",
                    GltfError::Schema(_) => "schema",
                    _ => "content",
                }
            }
        };
        *outcomes.entry(kind).or_insert(0usize) += 1;
    };
    // Every byte of a .gltf, one bit each.
    let text = std::fs::read(sample("SimpleSkin")).unwrap();
    for i in 0..text.len() {
        let mut b = text.clone();
        b[i] ^= 1 << (i % 8);
        run(&b);
    }
    // The JSON chunk and header of a .glb byte by byte, its BIN chunk sparsely.
    let glb = std::fs::read(sample("RiggedSimple")).unwrap();
    let json_end = 20 + u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    for i in (0..json_end).chain((json_end..glb.len()).step_by(7)) {
        let mut b = glb.clone();
        b[i] ^= 1 << (i % 8);
        run(&b);
    }
    // The tiny model, every byte (its binary data is inside base64).
    let tiny = Tiny::new().gltf().into_bytes();
    for i in 0..tiny.len() {
        let mut b = tiny.clone();
        b[i] ^= 1 << (i % 8);
        run(&b);
    }
    println!("bit flip outcomes: {outcomes:?}");
    for kind in ["ok", "container", "json", "schema", "content"] {
        assert!(outcomes.get(kind).copied().unwrap_or(0) > 0, "no {kind} outcome: {outcomes:?}");
    }
    // A flip of the first byte of JSON text is a parse error.
    let mut b = text.clone();
    b[0] ^= 0x01;
    assert!(matches!(load_bytes(&b, None, "t"), Err(GltfError::Json(_))));
}
