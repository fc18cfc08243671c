//! `KHR_meshopt_compression` and `EXT_meshopt_compression`: buffer views whose bytes are stored
//! compressed in another buffer (the meshoptimizer vertex and index codecs, then an optional
//! filter), decoded with the `meshopt` crate into the view's own place in its (usually fallback)
//! buffer, so that every accessor reads them as plain data.
//!
//! The ratified KHR extension is the EXT one with two additions: vertex streams of codec
//! version 1 (header byte `0xA1`; EXT streams are version 0, `0xA0`) and the `COLOR` filter
//! (YCoCg). Each view names its extension; one view may not use both.
//!
//! The extension objects are read from the JSON text ([`scan`]); a fallback buffer (no URI,
//! `"fallback": true`) starts as zeros of its `byteLength`, within the decoding budget. Every
//! field is checked before the decoders run (the codecs' own preconditions: a vertex stride that
//! is a multiple of 4 up to 256, index strides of 2 or 4, whole triangles, the filters' strides),
//! and a stream the decoders reject is a [`GltfError::Meshopt`] naming the view.
//!
//! Without the `meshopt` cargo feature the extension objects are still read and checked, but
//! nothing is decoded: views whose buffer holds uncompressed fallback data are read from it,
//! and a view whose buffer has no data is [`GltfError::ExtensionNotInBuild`].

// Without the decoder, the views' codec fields are read and checked but not used.
#![cfg_attr(not(feature = "meshopt"), allow(dead_code))]

use serde_json::Value;

use super::error::GltfError;

/// The vendor extension's name.
pub(super) const EXT_MESHOPT: &str = "EXT_meshopt_compression";
/// The ratified extension's name.
pub(super) const KHR_MESHOPT: &str = "KHR_meshopt_compression";

/// How a view's bytes are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Attributes,
    Triangles,
    Indices,
}

/// The filter applied after the vertex codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Filter {
    None,
    Octahedral,
    Quaternion,
    Exponential,
    /// YCoCg colors (`KHR_meshopt_compression` only).
    Color,
}

/// One compressed buffer view.
#[derive(Clone, Debug)]
struct CompressedView {
    view: usize,
    /// [`KHR_MESHOPT`] or [`EXT_MESHOPT`].
    extension: &'static str,
    buffer: usize,
    offset: usize,
    length: usize,
    stride: usize,
    count: usize,
    mode: Mode,
    filter: Filter,
}

/// What the JSON says about meshopt compression: the compressed views and the fallback buffers.
#[derive(Default, Debug)]
pub(super) struct Meshopt {
    views: Vec<CompressedView>,
    /// Buffers marked `"fallback": true`.
    pub(super) fallback: Vec<usize>,
}

/// A JSON object's meshopt extension object and the extension's name (KHR first).
fn extension_of(v: &Value) -> Option<(&'static str, &Value)> {
    let extensions = v.get("extensions")?;
    [KHR_MESHOPT, EXT_MESHOPT].into_iter().find_map(|name| Some((name, extensions.get(name)?)))
}

/// Reads the extension objects of every buffer and buffer view of the JSON text.
///
/// # Errors
///
/// [`GltfError::Meshopt`] for an extension object with a missing or invalid field, or a view
/// that uses both extensions.
pub(super) fn scan(json: &[u8]) -> Result<Meshopt, GltfError> {
    let tree: Value = serde_json::from_slice(json).map_err(|e| GltfError::Json(e.to_string()))?;
    let mut out = Meshopt::default();
    if let Some(buffers) = tree.get("buffers").and_then(Value::as_array) {
        for (i, b) in buffers.iter().enumerate() {
            if extension_of(b).and_then(|(_, e)| e.get("fallback").and_then(Value::as_bool)) == Some(true) {
                out.fallback.push(i);
            }
        }
    }
    let Some(views) = tree.get("bufferViews").and_then(Value::as_array) else { return Ok(out) };
    for (view, v) in views.iter().enumerate() {
        let Some((extension, e)) = extension_of(v) else { continue };
        let bad = |detail: String| GltfError::Meshopt { view, extension, detail };
        if extension == KHR_MESHOPT && v.get("extensions").and_then(|x| x.get(EXT_MESHOPT)).is_some() {
            return Err(bad(format!("the view also uses {EXT_MESHOPT}")));
        }
        let number = |key: &str, default: Option<usize>| -> Result<usize, GltfError> {
            match e.get(key) {
                None => default.ok_or_else(|| bad(format!("{key} is missing"))),
                Some(x) => x
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| bad(format!("{key} {x} is not a non-negative integer"))),
            }
        };
        let mode = match e.get("mode").and_then(Value::as_str) {
            Some("ATTRIBUTES") => Mode::Attributes,
            Some("TRIANGLES") => Mode::Triangles,
            Some("INDICES") => Mode::Indices,
            other => return Err(bad(format!("mode {other:?} is not ATTRIBUTES, TRIANGLES or INDICES"))),
        };
        let filter = match e.get("filter").and_then(Value::as_str) {
            None | Some("NONE") => Filter::None,
            Some("OCTAHEDRAL") => Filter::Octahedral,
            Some("QUATERNION") => Filter::Quaternion,
            Some("EXPONENTIAL") => Filter::Exponential,
            Some("COLOR") if extension == KHR_MESHOPT => Filter::Color,
            Some(other) => return Err(bad(format!("filter {other:?} is not one of {extension}'s"))),
        };
        out.views.push(CompressedView {
            view,
            extension,
            buffer: number("buffer", None)?,
            offset: number("byteOffset", Some(0))?,
            length: number("byteLength", None)?,
            stride: number("byteStride", None)?,
            count: number("count", None)?,
            mode,
            filter,
        });
    }
    Ok(out)
}

/// Checks a view's fields against the codecs' preconditions.
fn check(v: &CompressedView) -> Result<(), String> {
    match v.mode {
        Mode::Attributes if v.stride == 0 || !v.stride.is_multiple_of(4) || v.stride > 256 => {
            return Err(format!("ATTRIBUTES byteStride {} is not a multiple of 4 in 4..=256", v.stride));
        }
        Mode::Triangles | Mode::Indices if v.stride != 2 && v.stride != 4 => {
            return Err(format!("{:?} byteStride {} is not 2 or 4", v.mode, v.stride));
        }
        Mode::Triangles if !v.count.is_multiple_of(3) => {
            return Err(format!("TRIANGLES count {} is not a multiple of 3", v.count));
        }
        _ => {}
    }
    let filter_ok = match v.filter {
        Filter::None => true,
        _ if v.mode != Mode::Attributes => false,
        Filter::Octahedral => v.stride == 4 || v.stride == 8,
        Filter::Quaternion => v.stride == 8,
        Filter::Exponential => v.stride.is_multiple_of(4),
        Filter::Color => v.stride == 4 || v.stride == 8,
    };
    if !filter_ok {
        return Err(format!("filter {:?} does not apply to {:?} with byteStride {}", v.filter, v.mode, v.stride));
    }
    Ok(())
}

/// Decodes every compressed view into its place in `buffers` (fallback buffers, given empty by
/// the buffer resolver, are first grown to zeros of their `byteLength`). `decoded` counts the
/// bytes made against `budget`.
///
/// # Errors
///
/// [`GltfError::Meshopt`] for a view whose fields, source range or stream are bad;
/// [`GltfError::TooLarge`]-like budget overruns are reported as [`GltfError::Meshopt`] naming
/// the view.
#[cfg(feature = "meshopt")]
pub(super) fn decode(
    doc: &gltf::Document,
    meshopt: &Meshopt,
    buffers: &mut [Vec<u8>],
    decoded: &mut usize,
    budget: usize,
) -> Result<(), GltfError> {
    for &b in &meshopt.fallback {
        let declared = doc.buffers().nth(b).map_or(0, |buf| buf.length());
        if let Some(data) = buffers.get_mut(b) {
            if data.is_empty() && declared > 0 {
                *decoded = decoded.saturating_add(declared);
                if *decoded > budget {
                    return Err(GltfError::MissingBuffer {
                        buffer: b,
                        reason: format!("fallback buffer of {declared} bytes exceeds the decoding budget of {budget}"),
                    });
                }
                data.resize(declared, 0);
            }
        }
    }
    for v in &meshopt.views {
        let bad = |detail: String| GltfError::Meshopt { view: v.view, extension: v.extension, detail };
        check(v).map_err(bad)?;
        let size = v.count.checked_mul(v.stride).ok_or_else(|| bad("count × byteStride overflows".into()))?;
        *decoded = decoded.saturating_add(size);
        if *decoded > budget {
            return Err(bad(format!("{size} decoded bytes exceed the decoding budget of {budget}")));
        }
        let source = buffers
            .get(v.buffer)
            .and_then(|b| b.get(v.offset..v.offset.checked_add(v.length)?))
            .ok_or_else(|| bad(format!("compressed range {}+{} is outside buffer {}", v.offset, v.length, v.buffer)))?;
        let bytes = decode_view(source, v).map_err(bad)?;
        let Some(target) = doc.views().nth(v.view) else { return Err(bad("the buffer view does not exist".into())) };
        if bytes.len() > target.length() {
            return Err(bad(format!("{} decoded bytes exceed the view's byteLength {}", bytes.len(), target.length())));
        }
        let (tb, to) = (target.buffer().index(), target.offset());
        let slot = buffers
            .get_mut(tb)
            .and_then(|b| b.get_mut(to..to.checked_add(bytes.len())?))
            .ok_or_else(|| bad(format!("the view's range {to}+{} is outside buffer {tb}", bytes.len())))?;
        slot.copy_from_slice(&bytes);
    }
    Ok(())
}

/// Without the decoder: checks that every compressed view's buffer holds data (the
/// uncompressed fallback the view is then read from as it is).
///
/// # Errors
///
/// [`GltfError::ExtensionNotInBuild`] for the first view whose buffer has no data.
#[cfg(not(feature = "meshopt"))]
pub(super) fn decode(
    doc: &gltf::Document,
    meshopt: &Meshopt,
    buffers: &mut [Vec<u8>],
    _decoded: &mut usize,
    _budget: usize,
) -> Result<(), GltfError> {
    for v in &meshopt.views {
        let buffer = doc.views().nth(v.view).map(|t| t.buffer().index());
        if buffer.and_then(|b| buffers.get(b)).is_none_or(Vec::is_empty) {
            return Err(GltfError::ExtensionNotInBuild { extension: v.extension, feature: "meshopt" });
        }
    }
    Ok(())
}

/// `N` bytes, for the vertex decoder's element type (arrays above 32 have no `Default`).
#[cfg(feature = "meshopt")]
#[derive(Clone, Copy)]
struct Bytes<const N: usize>([u8; N]);

#[cfg(feature = "meshopt")]
impl<const N: usize> Default for Bytes<N> {
    fn default() -> Self {
        Bytes([0; N])
    }
}

#[cfg(feature = "meshopt")]
fn vertices<const N: usize>(src: &[u8], count: usize) -> Result<Vec<u8>, String> {
    let v: Vec<Bytes<N>> = meshopt::decode_vertex_buffer(src, count).map_err(|e| format!("vertex stream: {e}"))?;
    Ok(v.iter().flat_map(|b| b.0).collect())
}

#[cfg(feature = "meshopt")]
/// The vertex codec for a stride known to be a multiple of 4 in 4..=256.
fn decode_vertices(src: &[u8], count: usize, stride: usize) -> Result<Vec<u8>, String> {
    macro_rules! strides {
        ($($n:literal)*) => {
            match stride {
                $($n => vertices::<$n>(src, count),)*
                _ => Err(format!("byteStride {stride} is not supported")),
            }
        };
    }
    strides!(4 8 12 16 20 24 28 32 36 40 44 48 52 56 60 64 68 72 76 80 84 88 92 96 100 104 108 112 116 120
        124 128 132 136 140 144 148 152 156 160 164 168 172 176 180 184 188 192 196 200 204 208 212 216 220 224
        228 232 236 240 244 248 252 256)
}

#[cfg(feature = "meshopt")]
/// One view's bytes: the codec of its mode, then its filter.
fn decode_view(src: &[u8], v: &CompressedView) -> Result<Vec<u8>, String> {
    let le16 = |x: Vec<u16>| x.iter().flat_map(|i| i.to_le_bytes()).collect::<Vec<u8>>();
    let le32 = |x: Vec<u32>| x.iter().flat_map(|i| i.to_le_bytes()).collect::<Vec<u8>>();
    let stream = |e: meshopt::Error| format!("{:?} stream: {e}", v.mode);
    let mut out = match (v.mode, v.stride) {
        (Mode::Attributes, _) => {
            // The codec reads both versions; EXT defines version 0 only.
            if let Some(version) = meshopt::decode_vertex_version(src).filter(|&n| n != 0) {
                if v.extension == EXT_MESHOPT {
                    return Err(format!("vertex stream of codec version {version}, which only {KHR_MESHOPT} allows"));
                }
            }
            decode_vertices(src, v.count, v.stride)?
        }
        (Mode::Triangles, 2) => le16(meshopt::decode_index_buffer::<u16>(src, v.count).map_err(stream)?),
        (Mode::Triangles, _) => le32(meshopt::decode_index_buffer::<u32>(src, v.count).map_err(stream)?),
        (Mode::Indices, 2) => le16(meshopt::decode_index_sequence::<u16>(src, v.count).map_err(stream)?),
        (Mode::Indices, _) => le32(meshopt::decode_index_sequence::<u32>(src, v.count).map_err(stream)?),
    };
    match (v.filter, v.stride) {
        (Filter::None, _) => {}
        (Filter::Octahedral, 4) => {
            let mut d: Vec<[i8; 4]> = out.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]].map(|b| b as i8)).collect();
            meshopt::decode_filter_oct(&mut d);
            out = d.iter().flat_map(|c| c.map(|x| x as u8)).collect();
        }
        (Filter::Octahedral | Filter::Quaternion, _) => {
            let mut d: Vec<[i16; 4]> = out
                .chunks_exact(8)
                .map(|c| [0, 1, 2, 3].map(|k| i16::from_le_bytes([c[2 * k], c[2 * k + 1]])))
                .collect();
            if v.filter == Filter::Octahedral {
                meshopt::decode_filter_oct(&mut d);
            } else {
                meshopt::decode_filter_quat(&mut d);
            }
            out = d.iter().flat_map(|c| c.iter().flat_map(|x| x.to_le_bytes())).collect();
        }
        (Filter::Color, 4) => {
            let mut d: Vec<[u8; 4]> = out.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
            meshopt::decode_filter_color(&mut d);
            out = d.concat();
        }
        (Filter::Color, _) => {
            let mut d: Vec<[u16; 4]> = out
                .chunks_exact(8)
                .map(|c| [0, 1, 2, 3].map(|k| u16::from_le_bytes([c[2 * k], c[2 * k + 1]])))
                .collect();
            meshopt::decode_filter_color(&mut d);
            out = d.iter().flat_map(|c| c.iter().flat_map(|x| x.to_le_bytes())).collect();
        }
        (Filter::Exponential, _) => {
            let mut d: Vec<[u32; 1]> =
                out.chunks_exact(4).map(|c| [u32::from_le_bytes([c[0], c[1], c[2], c[3]])]).collect();
            meshopt::decode_filter_exp(&mut d);
            out = d.iter().flat_map(|c| c[0].to_le_bytes()).collect();
        }
    }
    Ok(out)
}

#[cfg(all(test, feature = "meshopt"))]
mod tests {
    use super::*;

    fn view(mode: Mode, filter: Filter, stride: usize, count: usize) -> CompressedView {
        CompressedView { view: 3, extension: EXT_MESHOPT, buffer: 0, offset: 0, length: 0, stride, count, mode, filter }
    }

    #[test]
    fn encoded_streams_decode_and_corrupt_ones_fail() {
        let data: Vec<[u16; 2]> = (0..50u16).map(|i| [i * 3, 1000 - i]).collect();
        // EXT_meshopt_compression's vertex codec version 0.
        let enc = meshopt::encode_vertex_buffer_level(&data, 2, Some(0)).unwrap();
        let v = view(Mode::Attributes, Filter::None, 4, 50);
        let out = decode_view(&enc, &v).unwrap();
        let want: Vec<u8> = data.iter().flat_map(|p| p.iter().flat_map(|x| x.to_le_bytes())).collect();
        assert_eq!(out, want);
        let idx: Vec<u32> = vec![0, 1, 2, 2, 1, 3, 3, 1, 4];
        let enc_i = meshopt::encode_index_buffer(&idx, 5).unwrap();
        let out = decode_view(&enc_i, &view(Mode::Triangles, Filter::None, 2, 9)).unwrap();
        assert_eq!(out, idx.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect::<Vec<u8>>());
        // Truncated or garbled streams are errors, never a panic.
        assert!(decode_view(&enc[..enc.len() / 2], &v).is_err());
        let mut garbled = enc.clone();
        garbled[0] = 0x7f;
        assert!(decode_view(&garbled, &v).is_err());
        assert!(decode_view(&[], &view(Mode::Triangles, Filter::None, 4, 9)).is_err());
        // Preconditions the codecs assert are checked first.
        assert!(check(&view(Mode::Attributes, Filter::None, 6, 1)).is_err());
        assert!(check(&view(Mode::Triangles, Filter::None, 2, 4)).is_err());
        assert!(check(&view(Mode::Attributes, Filter::Quaternion, 4, 1)).is_err());
        assert!(check(&view(Mode::Indices, Filter::Exponential, 4, 1)).is_err());
        assert!(check(&view(Mode::Attributes, Filter::Octahedral, 8, 1)).is_ok());
    }

    /// What KHR adds to EXT: vertex codec version 1 and the COLOR filter (refused under EXT).
    #[test]
    fn khr_streams_decode_and_ext_refuses_them() {
        let khr = |mode, filter, stride, count| CompressedView {
            extension: KHR_MESHOPT,
            ..view(mode, filter, stride, count)
        };
        let data: Vec<[u16; 2]> = (0..50u16).map(|i| [i * 7, 3000 - 2 * i]).collect();
        let v1 = meshopt::encode_vertex_buffer_level(&data, 3, Some(1)).unwrap();
        assert_eq!(meshopt::decode_vertex_version(&v1), Some(1));
        let want: Vec<u8> = data.iter().flat_map(|p| p.iter().flat_map(|x| x.to_le_bytes())).collect();
        assert_eq!(decode_view(&v1, &khr(Mode::Attributes, Filter::None, 4, 50)).unwrap(), want);
        let e = decode_view(&v1, &view(Mode::Attributes, Filter::None, 4, 50)).unwrap_err();
        assert!(e.contains("codec version 1") && e.contains(KHR_MESHOPT), "{e}");
        // COLOR: 8- and 16-bit YCoCg back to RGBA within a step of the encoding's K bits.
        let rgba: Vec<[f32; 4]> = (0..20)
            .map(|i| [i as f32 / 19.0, 1.0 - i as f32 / 19.0, 0.25, if i % 2 == 0 { 1.0 } else { 0.5 }])
            .collect();
        for (stride, bits, max) in [(4usize, 8, 255.0f32), (8, 12, 65535.0)] {
            let raw: Vec<u8> = if stride == 4 {
                meshopt::encode_filter_color::<u8>(&rgba, bits).concat()
            } else {
                meshopt::encode_filter_color::<u16>(&rgba, bits)
                    .iter()
                    .flat_map(|c| c.iter().flat_map(|x| x.to_le_bytes()))
                    .collect()
            };
            let enc = match stride {
                4 => meshopt::encode_vertex_buffer(
                    &raw.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect::<Vec<_>>(),
                ),
                _ => meshopt::encode_vertex_buffer(
                    &raw.chunks_exact(8).map(|c| c.try_into().unwrap()).collect::<Vec<[u8; 8]>>(),
                ),
            }
            .unwrap();
            let out = decode_view(&enc, &khr(Mode::Attributes, Filter::Color, stride, 20)).unwrap();
            let step = 2.0 / ((1 << (bits - 1)) as f32);
            for (i, c) in rgba.iter().enumerate() {
                for k in 0..4 {
                    let got = if stride == 4 {
                        out[4 * i + k] as f32
                    } else {
                        u16::from_le_bytes([out[8 * i + 2 * k], out[8 * i + 2 * k + 1]]) as f32
                    } / max;
                    assert!((got - c[k]).abs() <= step, "stride {stride} color {i} component {k}: {got} vs {}", c[k]);
                }
            }
        }
        assert!(check(&khr(Mode::Attributes, Filter::Color, 12, 1)).is_err());
        assert!(check(&khr(Mode::Triangles, Filter::Color, 4, 3)).is_err());
        let color = |ext: &str| {
            format!(
                r#"{{"extensionsUsed": ["{ext}"], "bufferViews": [{{"buffer": 0, "byteLength": 4, "extensions": {{"{ext}":
                  {{"buffer": 0, "byteLength": 4, "byteStride": 4, "count": 1, "mode": "ATTRIBUTES", "filter": "COLOR"}}}}}}]}}"#
            )
        };
        assert_eq!(scan(color(KHR_MESHOPT).as_bytes()).unwrap().views[0].filter, Filter::Color);
        assert!(matches!(
            scan(color(EXT_MESHOPT).as_bytes()),
            Err(GltfError::Meshopt { view: 0, extension: EXT_MESHOPT, detail }) if detail.contains("COLOR")
        ));
        // One view may not use both extensions.
        let both =
            color(KHR_MESHOPT).replace(r#""extensions": {"#, &format!(r#""extensions": {{"{EXT_MESHOPT}": {{}}, "#));
        assert!(matches!(
            scan(both.as_bytes()),
            Err(GltfError::Meshopt { view: 0, extension: KHR_MESHOPT, detail }) if detail.contains(EXT_MESHOPT)
        ));
    }

    #[test]
    fn scan_reads_views_and_fallback_buffers() {
        let json = br#"{"buffers": [{"byteLength": 8}, {"byteLength": 64, "extensions": {"EXT_meshopt_compression": {"fallback": true}}}],
            "bufferViews": [{"buffer": 1, "byteLength": 64, "extensions": {"EXT_meshopt_compression":
              {"buffer": 0, "byteLength": 8, "byteStride": 8, "count": 8, "mode": "ATTRIBUTES", "filter": "OCTAHEDRAL"}}}]}"#;
        let m = scan(json).unwrap();
        assert_eq!(m.fallback, [1]);
        assert_eq!(m.views.len(), 1);
        assert_eq!((m.views[0].mode, m.views[0].filter, m.views[0].count), (Mode::Attributes, Filter::Octahedral, 8));
        let bad = br#"{"bufferViews": [{"buffer": 0, "byteLength": 4, "extensions": {"EXT_meshopt_compression": {"buffer": 0, "byteLength": 4, "byteStride": 4, "mode": "ATTRIBUTES"}}}]}"#;
        assert!(matches!(scan(bad), Err(GltfError::Meshopt { view: 0, .. })));
    }
}
