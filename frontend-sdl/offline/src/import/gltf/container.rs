//! The container and the buffers: the GLB header and chunks or the plain JSON text, the glTF
//! version and schema checks, and the bytes of every buffer (the GLB `BIN` chunk, base64
//! `data:` URIs, or relative files that must stay inside the base directory).

use std::path::{Path, PathBuf};

use base64::Engine as _;
use gltf::json::validation::Validate as _;

use super::draco::{self, Draco, KHR_DRACO};
use super::error::{short, GltfError};
use super::materials::EXT_TEXTURE_WEBP;
use super::meshopt::{scan, Meshopt, EXT_MESHOPT, KHR_MESHOPT};

/// The parsed and validated document, the GLB `BIN` chunk (if any), and the animation channels
/// to ignore, as `(animation, channel)`: those whose target names no node.
pub(super) struct Parsed {
    pub(super) document: gltf::Document,
    pub(super) blob: Option<Vec<u8>>,
    pub(super) ignored_channels: Vec<(usize, usize)>,
    /// The meshopt-compressed (KHR or EXT) views and fallback buffers (empty when the file does not
    /// use the extension).
    pub(super) meshopt: Meshopt,
    /// The Draco-compressed primitives (empty when the file does not use the extension).
    pub(super) draco: Draco,
}

/// Parses the container and JSON and validates the schema.
pub(super) fn parse_document(bytes: &[u8], notes: &mut Vec<String>) -> Result<Parsed, GltfError> {
    let (json, blob) = if bytes.starts_with(b"glTF") {
        let glb = gltf::Glb::from_slice(check_glb_header(bytes)?).map_err(|e| GltfError::Container(e.to_string()))?;
        (glb.json, glb.bin.map(std::borrow::Cow::into_owned))
    } else {
        let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        // JSON text of a glTF document is an object: its first byte past whitespace is `{`.
        match text.iter().find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
            None => return Err(GltfError::Json("the file is empty or only whitespace".into())),
            Some(b'{') => {}
            Some(_) => {
                return Err(GltfError::Json(
                    "the file is neither a GLB file (which begins with \"glTF\") nor glTF JSON text \
                     (which begins with '{')"
                        .into(),
                ))
            }
        }
        (std::borrow::Cow::Borrowed(text), None)
    };
    let mut ignored_channels = Vec::new();
    let document = gltf::Document::from_json_without_validation(parse_json(&json, notes, &mut ignored_channels)?);
    let root = document.as_json();

    // Extensions the file cannot be read without, before anything that depends on them.
    let unsupported: Vec<String> = root.extensions_required.iter().filter(|e| !supported(e)).cloned().collect();
    if !unsupported.is_empty() {
        return Err(GltfError::UnsupportedExtensions(unsupported));
    }
    // Read, but not decoded by a build without the meshopt decoder.
    if !cfg!(feature = "meshopt") {
        let required = |name: &str| root.extensions_required.iter().any(|e| e == name);
        if let Some(extension) = [KHR_MESHOPT, EXT_MESHOPT].into_iter().find(|e| required(e)) {
            return Err(GltfError::ExtensionNotInBuild { extension, feature: "meshopt" });
        }
    }
    if !cfg!(feature = "draco") && root.extensions_required.iter().any(|e| e == KHR_DRACO) {
        return Err(GltfError::ExtensionNotInBuild { extension: KHR_DRACO, feature: "draco" });
    }

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
        } else if matches!(error, gltf::json::validation::Error::Unsupported)
            && path.as_str().starts_with("extensionsRequired[")
        {
            // Checked against this importer's own list above: the ones left are read here
            // (`gltf-json` knows neither).
        } else if matches!(error, gltf::json::validation::Error::Missing) && is_accessor_buffer_view(path.as_str()) {
            // glTF 2.0: an accessor without a buffer view (and without sparse storage) holds
            // zeros; `gltf-json` reports it missing.
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
    let meshopt = if root.extensions_used.iter().any(|e| e == EXT_MESHOPT || e == KHR_MESHOPT) {
        scan(&json)?
    } else {
        Meshopt::default()
    };
    let draco =
        if root.extensions_used.iter().any(|e| e == KHR_DRACO) { draco::scan(&json)? } else { Draco::default() };
    Ok(Parsed { document, blob, ignored_channels, meshopt, draco })
}

/// Extensions this importer reads: a file whose `extensionsRequired` lists another is refused
/// by name.
/// `KHR_texture_basisu` is not among them: a file may use it (its textures then read their
/// fallback images), but one that requires it is refused.
pub(super) const SUPPORTED_EXTENSIONS: &[&str] =
    &["KHR_mesh_quantization", "KHR_texture_transform", KHR_MESHOPT, EXT_MESHOPT, KHR_DRACO, EXT_TEXTURE_WEBP];

/// True for an extension this importer reads: [`SUPPORTED_EXTENSIONS`] and the VRM extensions
/// of [`VRM_EXTENSIONS`](super::springs::VRM_EXTENSIONS).
fn supported(name: &str) -> bool {
    SUPPORTED_EXTENSIONS.contains(&name) || super::springs::VRM_EXTENSIONS.contains(&name)
}

/// True for the JSON path `accessors[<n>].bufferView`.
fn is_accessor_buffer_view(path: &str) -> bool {
    path.strip_prefix("accessors[")
        .and_then(|rest| rest.strip_suffix("].bufferView"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
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

/// Fetches the bytes of every buffer, each cut to its `byteLength`. A `fallback` buffer (of
/// `KHR_meshopt_compression` or `EXT_meshopt_compression`) without a URI or BIN chunk is left empty, for the decoder to fill.
pub(super) fn resolve_buffers(
    doc: &gltf::Document,
    mut blob: Option<Vec<u8>>,
    base_dir: Option<&Path>,
    fallback: &[usize],
) -> Result<Vec<Vec<u8>>, GltfError> {
    let mut out = Vec::with_capacity(doc.buffers().len());
    for buffer in doc.buffers() {
        let index = buffer.index();
        let no_data = matches!(buffer.source(), gltf::buffer::Source::Bin) && (index != 0 || blob.is_none());
        if fallback.contains(&index) && no_data {
            out.push(Vec::new());
            continue;
        }
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

/// Media types a buffer's `data:` URI may have.
const BUFFER_MEDIA: &[&str] = &["", "application/octet-stream", "application/gltf-buffer"];

/// Decodes a `data:` URI or reads a relative file URI of buffer `buffer`.
fn fetch_uri(buffer: usize, uri: &str, base_dir: Option<&Path>) -> Result<Vec<u8>, GltfError> {
    fetch(uri, base_dir, BUFFER_MEDIA, |reason| GltfError::MissingBuffer { buffer, reason })
}

/// Decodes a `data:` URI whose media type is one of `accepted` (compared without case), or
/// reads a relative file URI inside `base_dir`. `missing` makes the error of a URI that cannot
/// be read (file errors are [`GltfError::Io`], naming the file).
pub(super) fn fetch(
    uri: &str,
    base_dir: Option<&Path>,
    accepted: &[&str],
    missing: impl Fn(String) -> GltfError,
) -> Result<Vec<u8>, GltfError> {
    if uri.get(..5).is_some_and(|s| s.eq_ignore_ascii_case("data:")) {
        let rest = uri.get(5..).unwrap_or("");
        let (header, payload) = rest.split_once(',').ok_or_else(|| missing("data: URI without a comma".into()))?;
        let media = header.strip_suffix(";base64").ok_or_else(|| missing("data: URI is not base64".into()))?;
        if !accepted.iter().any(|a| media.eq_ignore_ascii_case(a)) {
            return Err(missing(format!("data: URI media type {:?} is not one of {accepted:?}", short(media))));
        }
        let engine = base64::engine::GeneralPurpose::new(
            &base64::alphabet::STANDARD,
            base64::engine::GeneralPurposeConfig::new()
                .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
        );
        return engine.decode(payload).map_err(|e| missing(format!("bad base64 in data: URI: {e}")));
    }
    let rel = relative_file_path(uri).map_err(|r| missing(format!("URI {:?}: {r}", short(uri))))?;
    let dir = base_dir.ok_or_else(|| {
        missing(format!(
            "external file {:?} cannot be read: this import reads only embedded data \
             (a .glb, or a .gltf with data: URIs)",
            short(uri)
        ))
    })?;
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

/// Deserializes the glTF JSON text. An error names the JSON path of the offending value
/// (`materials[0].pbrMetallicRoughness.baseColorFactor: invalid length 3, ...`) and, from the
/// text itself, its line and column.
///
/// glTF 2.0 lets some fields be absent that the `gltf` crate's JSON layer requires: when the
/// text fails and such fields are absent, they are filled in (see [`fill_optional_fields`]) and
/// the tree is deserialized again.
fn parse_json(
    json: &[u8],
    notes: &mut Vec<String>,
    ignored: &mut Vec<(usize, usize)>,
) -> Result<gltf::json::Root, GltfError> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let first = serde_path_to_error::deserialize(&mut de).map_err(path_error).and_then(|root: gltf::json::Root| {
        de.end().map_err(|e| GltfError::Json(e.to_string()))?;
        Ok(root)
    });
    let Err(first) = first else { return first };
    let Ok(mut tree) = serde_json::from_slice::<serde_json::Value>(json) else { return Err(first) };
    let mut filled = Vec::new();
    fill_optional_fields(&mut tree, &mut filled, ignored);
    if filled.is_empty() {
        return Err(first);
    }
    let root = serde_path_to_error::deserialize(tree).map_err(path_error)?;
    notes.extend(filled);
    Ok(root)
}

/// A JSON error with the path of the value it is about, when there is one.
fn path_error(e: serde_path_to_error::Error<serde_json::Error>) -> GltfError {
    let path = e.path().to_string();
    if path == "." {
        GltfError::Json(e.into_inner().to_string())
    } else {
        GltfError::Json(format!("{path}: {}", e.into_inner()))
    }
}

/// Fills in the fields glTF 2.0 makes optional and the `gltf` crate requires, and says what it
/// did in `notes`:
///
/// - `scenes[i].nodes` (a scene may be empty) becomes `[]`;
/// - an animation channel whose `target` has no `node` animates something an extension defines,
///   and the spec says to ignore it when the extension is not supported: it is pointed at node 0
///   and listed in `ignored` (as `(animation, channel)`) for the importer to skip, so every
///   channel keeps its index in messages. In a file without nodes it is removed instead.
fn fill_optional_fields(tree: &mut serde_json::Value, notes: &mut Vec<String>, ignored: &mut Vec<(usize, usize)>) {
    use serde_json::Value;
    let has_nodes = tree.get("nodes").and_then(Value::as_array).is_some_and(|n| !n.is_empty());
    if let Some(Value::Array(scenes)) = tree.get_mut("scenes") {
        for (i, scene) in scenes.iter_mut().enumerate() {
            if let Value::Object(scene) = scene {
                if !scene.contains_key("nodes") {
                    scene.insert("nodes".into(), Value::Array(Vec::new()));
                    notes.push(format!("scene {i} has no nodes"));
                }
            }
        }
    }
    if let Some(Value::Array(animations)) = tree.get_mut("animations") {
        for (a, animation) in animations.iter_mut().enumerate() {
            let Some(Value::Array(channels)) = animation.get_mut("channels") else { continue };
            let mut c = 0;
            channels.retain_mut(|channel| {
                let index = c;
                c += 1;
                let Some(Value::Object(target)) = channel.get_mut("target") else { return true };
                if target.contains_key("node") {
                    return true;
                }
                notes.push(format!("animation {a} channel {index} targets no node (an extension's target); ignored"));
                if has_nodes {
                    target.insert("node".into(), Value::from(0));
                    ignored.push((a, index));
                }
                has_nodes
            });
        }
    }
}
