//! Accessors: bounds of views and buffers, element types, normalized integers and sparse storage.

use super::*;

#[test]
fn normalized_integer_data() {
    let mut tiny = Tiny::new();
    tiny.integers = true;
    let rig = tiny.load().unwrap();
    let p = &rig.meshes[0].primitives[0];
    assert_eq!(&p.joint_indices[8..10], &[0, 1]);
    // u8 weights: 128/255 each, renormalized to 0.5 (their sum 256/255 is off by 4e-3).
    assert!(close(p.joint_weights[8], 0.5, 1.0e-6) && close(p.joint_weights[0], 1.0, 1.0e-6));
    let ch = &rig.clips[0].channels[0];
    let want = Tiny::new().values.concat();
    assert_eq!(ch.values.len(), want.len());
    for (a, b) in ch.values.iter().zip(&want) {
        assert!(close(*a, *b, 1.0 / 32767.0), "{a} {b}");
    }
}

#[test]
fn accessor_past_its_buffer() {
    // POSITION starts 8 bytes into a 36-byte view: the last vertex ends past the view.
    let tiny = Tiny::new();
    let text = tiny.gltf().replacen(
        r#""byteOffset":0,"componentType":5126,"count":3"#,
        r#""byteOffset":8,"componentType":5126,"count":3"#,
        1,
    );
    let r = load_bytes(text.as_bytes(), None, "t");
    assert!(matches!(r, Err(GltfError::AccessorOutOfBounds { accessor: 0, .. })), "{r:?}");
    // A count that reaches past the view (a single bit flip: '3' -> '7').
    let text = tiny.gltf().replacen(
        r#""componentType":5126,"count":3,"type":"VEC3""#,
        r#""componentType":5126,"count":7,"type":"VEC3""#,
        1,
    );
    let r = load_bytes(text.as_bytes(), None, "t");
    assert!(matches!(r, Err(GltfError::AccessorOutOfBounds { accessor: 0, .. })), "{r:?}");
    // A view that reaches past its buffer.
    let (bin, mut views) = tiny.bin();
    views[6].1 += 4;
    let buffer = format!(
        r#"{{"byteLength":{},"uri":"data:application/gltf-buffer;base64,{}"}}"#,
        bin.len(),
        STANDARD.encode(&bin)
    );
    let r = load_bytes(tiny.json(&buffer, &views).as_bytes(), None, "t");
    assert!(matches!(r, Err(GltfError::AccessorOutOfBounds { accessor: 6, .. })), "{r:?}");
    // A buffer shorter than its byteLength.
    let (bin, views) = tiny.bin();
    let buffer = format!(r#"{{"byteLength":{},"uri":"data:;base64,{}"}}"#, bin.len() + 1, STANDARD.encode(&bin));
    let r = load_bytes(tiny.json(&buffer, &views).as_bytes(), None, "t");
    assert!(matches!(r, Err(GltfError::BufferTooShort { buffer: 0, .. })), "{r:?}");
    // A stride smaller than the element.
    let (bin, views) = tiny.bin();
    let buffer = format!(r#"{{"byteLength":{},"uri":"data:;base64,{}"}}"#, bin.len(), STANDARD.encode(&bin));
    let text = tiny.json(&buffer, &views).replacen(r#""byteLength":36}"#, r#""byteLength":36,"byteStride":8}"#, 1);
    let r = load_bytes(text.as_bytes(), None, "t");
    assert!(matches!(r, Err(GltfError::AccessorOutOfBounds { accessor: 0, .. })), "{r:?}");
    // A huge count does not overflow.
    let text = tiny.gltf().replacen(r#""count":3,"type":"VEC3""#, r#""count":18446744073709551615,"type":"VEC3""#, 1);
    let r = load_bytes(text.as_bytes(), None, "t");
    assert!(matches!(r, Err(GltfError::AccessorOutOfBounds { .. }) | Err(GltfError::Json(_))), "{r:?}");
}

#[test]
fn wrong_accessor_types() {
    let tiny = Tiny::new();
    let text = tiny.gltf().replacen(r#""count":3,"type":"VEC3""#, r#""count":3,"type":"VEC2""#, 1);
    let r = load_bytes(text.as_bytes(), None, "t");
    // gltf-json rejects the VEC2 min/max of POSITION first, or the importer rejects the type.
    assert!(matches!(r, Err(GltfError::AccessorType { accessor: 0, .. }) | Err(GltfError::Schema(_))), "{r:?}");
    let text = tiny.gltf().replacen(
        r#""componentType":5123,"count":3,"type":"SCALAR""#,
        r#""componentType":5126,"count":3,"type":"SCALAR""#,
        1,
    );
    let r = load_bytes(text.as_bytes(), None, "t");
    assert!(matches!(r, Err(GltfError::AccessorType { accessor: 3, .. })), "{r:?}");
    let text = tiny.gltf().replacen(
        r#""componentType":5126,"count":2,"type":"MAT4""#,
        r#""componentType":5126,"count":2,"type":"MAT3""#,
        1,
    );
    let r = load_bytes(text.as_bytes(), None, "t");
    assert!(matches!(r, Err(GltfError::AccessorType { accessor: 4, .. })), "{r:?}");
    let text = tiny.gltf().replacen(
        r#""componentType":5121,"count":3,"type":"VEC4""#,
        r#""componentType":5125,"count":3,"type":"VEC4""#,
        1,
    );
    let r = load_bytes(text.as_bytes(), None, "t");
    assert!(matches!(r, Err(GltfError::AccessorType { accessor: 1, .. })), "{r:?}");
    // Too few inverse bind matrices.
    let text = tiny.gltf().replacen(r#""count":2,"type":"MAT4""#, r#""count":1,"type":"MAT4""#, 1);
    let r = load_bytes(text.as_bytes(), None, "t");
    assert!(matches!(r, Err(GltfError::CountMismatch { expected: 2, actual: 1, .. })), "{r:?}");
    // JOINTS_0 without WEIGHTS_0.
    let text = tiny.gltf().replacen(r#","WEIGHTS_0":2"#, "", 1);
    let r = load_bytes(text.as_bytes(), None, "t");
    assert!(matches!(r, Err(GltfError::MissingAttribute { .. })), "{r:?}");
}

#[test]
fn sparse_accessors() {
    // POSITION with a sparse override of vertex 1 from the weights view's first 12 bytes.
    let tiny = Tiny::new();
    let text = tiny.gltf().replacen(
        r#""min":[0,0,0],"max":[1,1,0]}"#,
        r#""min":[0,0,0],"max":[1,1,0],"sparse":{"count":1,"indices":{"bufferView":3,"componentType":5123},"values":{"bufferView":2}}}"#,
        1,
    );
    // Sparse index 0 (the first u16 of the index view) takes (1, 0, 0) from the weights view.
    let rig = load_bytes(text.as_bytes(), None, "t").unwrap();
    assert_eq!(rig.meshes[0].primitives[0].positions[0], [1.0, 0.0, 0.0]);
    let zero = text.replacen(r#""sparse":{"count":1"#, r#""sparse":{"count":0"#, 1);
    let r = load_bytes(zero.as_bytes(), None, "t");
    assert!(matches!(r, Err(GltfError::AccessorOutOfBounds { accessor: 0, .. }) | Err(GltfError::Schema(_))), "{r:?}");
    let many = text.replacen(r#""sparse":{"count":1"#, r#""sparse":{"count":4"#, 1);
    let r = load_bytes(many.as_bytes(), None, "t");
    assert!(matches!(r, Err(GltfError::AccessorOutOfBounds { accessor: 0, .. })), "{r:?}");
    // A sparse accessor without a buffer view and a huge count would decode to 1.2 GB of
    // zeros: refused before anything is allocated.
    let huge = text.replacen(
        r#""bufferView":0,"byteOffset":0,"componentType":5126,"count":3"#,
        r#""componentType":5126,"count":100000000"#,
        1,
    );
    let r = load_bytes(huge.as_bytes(), None, "t");
    assert!(matches!(r, Err(GltfError::TooLarge { accessor: 0, limit: MIN_DECODE_BUDGET })), "{r:?}");
    // The same with a small count decodes zeros plus the sparse value.
    let small = huge.replacen(r#""count":100000000"#, r#""count":3"#, 1);
    let rig = load_bytes(small.as_bytes(), None, "t").unwrap();
    assert_eq!(rig.meshes[0].primitives[0].positions, [[1.0, 0.0, 0.0], [0.0; 3], [0.0; 3]]);
}
