//! The container and the buffers: the GLB header and chunks or the plain JSON text, the glTF
//! version and schema checks, and the bytes of every buffer (the GLB `BIN` chunk, base64
//! `data:` URIs, or relative files that must stay inside the base directory).

use std::path::{Path, PathBuf};

use base64::Engine as _;
use gltf::json::validation::Validate as _;

use super::error::{short, GltfError};

/// Parses the container and JSON and validates the schema. Returns the document and the GLB
/// `BIN` chunk, if any.
pub(super) fn parse_document(
    bytes: &[u8],
    notes: &mut Vec<String>,
) -> Result<(gltf::Document, Option<Vec<u8>>), GltfError> {
    let slice = if bytes.starts_with(b"glTF") {
        check_glb_header(bytes)?
    } else {
        bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
    };
    let gltf = gltf::Gltf::from_slice_without_validation(slice).map_err(|e| match e {
        gltf::Error::Binary(b) => GltfError::Container(b.to_string()),
        other => GltfError::Json(other.to_string()),
    })?;
    let gltf::Gltf { document, blob } = gltf;
    let root = document.as_json();

    // `major.minor`: this importer reads 2.0 and the later 2.x that do not require more.
    let numbers = |v: &str| -> Option<(u32, u32)> {
        let (major, minor) = v.split_once('.')?;
        Some((major.parse().ok()?, minor.parse().ok()?))
    };
    let version = &root.asset.version;
    if numbers(version).is_none_or(|(major, _)| major != 2) {
        return Err(GltfError::UnsupportedVersion { version: version.clone() });
    }
    if let Some(min) = &root.asset.min_version {
        if numbers(min).is_none_or(|v| v > (2, 0)) {
            return Err(GltfError::UnsupportedVersion { version: min.clone() });
        }
    }

    // The schema validation of `gltf-json` indexes the accessor list with the POSITION
    // accessor index before checking it, so attribute references are checked here first.
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            for index in prim.attributes.values() {
                if index.value() >= root.accessors.len() {
                    return Err(GltfError::Schema(format!(
                        "meshes[{m}].primitives[{p}].attributes: accessor {} does not exist",
                        index.value()
                    )));
                }
            }
        }
    }

    // Nor does it check animation channel targets, which the `gltf` crate unwraps.
    for (a, anim) in root.animations.iter().enumerate() {
        for (c, channel) in anim.channels.iter().enumerate() {
            if channel.target.node.value() >= root.nodes.len() {
                return Err(GltfError::Schema(format!(
                    "animations[{a}].channels[{c}].target.node: node {} does not exist",
                    channel.target.node.value()
                )));
            }
            if matches!(channel.target.path, gltf::json::validation::Checked::Invalid) {
                return Err(GltfError::Schema(format!("animations[{a}].channels[{c}].target.path: invalid value")));
            }
        }
    }

    let mut errors = Vec::new();
    let mut unknown_semantics = 0usize;
    root.validate(root, gltf::json::Path::new, &mut |path, error| {
        let path = path();
        // Application-specific attributes (`_NAME`) and unknown semantics are not errors: they
        // are simply not read.
        if matches!(error, gltf::json::validation::Error::Invalid)
            && path.as_str().ends_with("[\"<invalid semantic name>\"]")
        {
            unknown_semantics += 1;
        } else {
            errors.push(format!("{}: {error}", path.as_str()));
        }
    });
    if !errors.is_empty() {
        let total = errors.len();
        errors.truncate(8);
        let mut text = errors.join("; ");
        if total > 8 {
            text.push_str(&format!("; and {} more", total - 8));
        }
        return Err(GltfError::Schema(text));
    }
    if unknown_semantics > 0 {
        notes.push(format!("{unknown_semantics} primitives have attributes with unknown semantics; they were ignored"));
    }
    Ok((document, blob))
}

/// Checks the 12-byte GLB header and returns the bytes it covers.
fn check_glb_header(bytes: &[u8]) -> Result<&[u8], GltfError> {
    let word = |at: usize| -> Option<u32> {
        let b: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
        Some(u32::from_le_bytes(b))
    };
    let (Some(version), Some(length)) = (word(4), word(8)) else {
        return Err(GltfError::Container(format!("{} bytes is shorter than the 12-byte header", bytes.len())));
    };
    if version != 2 {
        return Err(GltfError::Container(format!("version {version}, only 2 is supported")));
    }
    let length = length as usize;
    if length < 20 {
        return Err(GltfError::Container(format!("total length {length} cannot hold a header and a JSON chunk")));
    }
    bytes.get(..length).ok_or_else(|| {
        GltfError::Container(format!("truncated: the header says {length} bytes, there are {}", bytes.len()))
    })
}

/// Fetches the bytes of every buffer, each cut to its `byteLength`.
pub(super) fn resolve_buffers(
    doc: &gltf::Document,
    mut blob: Option<Vec<u8>>,
    base_dir: Option<&Path>,
) -> Result<Vec<Vec<u8>>, GltfError> {
    let mut out = Vec::with_capacity(doc.buffers().len());
    for buffer in doc.buffers() {
        let index = buffer.index();
        let mut data = match buffer.source() {
            gltf::buffer::Source::Bin => {
                if index != 0 {
                    return Err(GltfError::MissingBuffer {
                        buffer: index,
                        reason: "has no URI, and only buffer 0 may refer to the GLB BIN chunk".into(),
                    });
                }
                blob.take().ok_or_else(|| GltfError::MissingBuffer {
                    buffer: index,
                    reason: "has no URI and the file has no GLB BIN chunk".into(),
                })?
            }
            gltf::buffer::Source::Uri(uri) => fetch_uri(index, uri, base_dir)?,
        };
        let declared = buffer.length();
        if data.len() < declared {
            return Err(GltfError::BufferTooShort { buffer: index, declared, actual: data.len() });
        }
        data.truncate(declared);
        out.push(data);
    }
    Ok(out)
}

/// Decodes a `data:` URI or reads a relative file URI.
fn fetch_uri(buffer: usize, uri: &str, base_dir: Option<&Path>) -> Result<Vec<u8>, GltfError> {
    let missing = |reason: String| GltfError::MissingBuffer { buffer, reason };
    if uri.get(..5).is_some_and(|s| s.eq_ignore_ascii_case("data:")) {
        let rest = uri.get(5..).unwrap_or("");
        let (header, payload) = rest.split_once(',').ok_or_else(|| missing("data: URI without a comma".into()))?;
        let media = header.strip_suffix(";base64").ok_or_else(|| missing("data: URI is not base64".into()))?;
        let accepted = ["", "application/octet-stream", "application/gltf-buffer"];
        if !accepted.iter().any(|a| media.eq_ignore_ascii_case(a)) {
            return Err(missing(format!("data: URI media type {media:?} is not a buffer type")));
        }
        let engine = base64::engine::GeneralPurpose::new(
            &base64::alphabet::STANDARD,
            base64::engine::GeneralPurposeConfig::new()
                .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
        );
        return engine.decode(payload).map_err(|e| missing(format!("bad base64 in data: URI: {e}")));
    }
    let rel = relative_file_path(uri).map_err(|r| missing(format!("URI {:?}: {r}", short(uri))))?;
    let dir = base_dir.ok_or_else(|| missing(format!("external file {:?} but no base directory", short(uri))))?;
    let path = dir.join(rel);
    std::fs::read(&path).map_err(|source| GltfError::Io { path, source })
}

/// Turns a URI reference into a relative path that stays inside the base directory.
fn relative_file_path(uri: &str) -> Result<PathBuf, &'static str> {
    if uri.is_empty() {
        return Err("empty URI");
    }
    let first_sep = uri.find(['/', '?', '#']).unwrap_or(uri.len());
    if uri.get(..first_sep).is_some_and(|head| head.contains(':')) {
        return Err("has a scheme or drive letter; only relative file paths are read");
    }
    if uri.contains(['?', '#']) {
        return Err("has a query or fragment; only relative file paths are read");
    }
    let decoded = percent_decode(uri).ok_or("bad percent-escape")?;
    if decoded.starts_with(['/', '\\']) {
        return Err("is an absolute path");
    }
    if decoded.contains('\0') {
        return Err("contains a NUL byte");
    }
    let mut path = PathBuf::new();
    for part in decoded.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => return Err("leaves the base directory"),
            p if p.contains(':') => return Err("has a drive or stream separator"),
            p => path.push(p),
        }
    }
    if path.as_os_str().is_empty() {
        return Err("names no file");
    }
    Ok(path)
}

/// Decodes `%XX` escapes; `None` on a malformed escape or invalid UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
