//! `KHR_draco_mesh_compression`: primitives whose attributes and indices are stored as one Draco
//! mesh stream in a buffer view, decoded with the `draco-core` crate before anything reads them.
//!
//! The extension objects are read from the JSON text ([`scan`]): each primitive's stream (a
//! buffer view) and the Draco attribute id of each compressed attribute. Decoding a primitive
//! ([`decode`]) fills its accessors as the extension defines: their `componentType`, `type`,
//! `normalized` and `count` stay as the file declares them (the count must match the decoded
//! mesh), their `bufferView`, `byteOffset` and `sparse` are replaced by the decoded data, written
//! to a buffer appended after the file's own. An accessor that something else also reads is
//! copied first, so each use keeps the data it declares. Draco dequantizes what it quantized
//! (positions, texture coordinates, weights are decoded as floats; normals from their octahedral
//! form); the decoded values are converted to the accessor's component type, and integers that
//! do not fit it are refused. Attributes the extension does not list are read from their
//! accessors as usual; morph targets are never compressed by the extension.
//!
//! Points and lines primitives are not decoded (the importer skips them). Every stream is decoded
//! within what is left of the import's decoding budget; a stream the decoder rejects, an
//! attribute id it does not hold, or decoded data that does not fit its accessor is a
//! [`GltfError::Draco`] naming the mesh and the primitive.
//!
//! Without the `draco` cargo feature nothing is decoded: a primitive whose accessors have
//! uncompressed fallback data is read from it, and one without is
//! [`GltfError::ExtensionNotInBuild`].

// Without the decoder, the attribute ids are read and checked but not used.
#![cfg_attr(not(feature = "draco"), allow(dead_code))]

use serde_json::Value;

use super::error::GltfError;

/// The extension's name.
pub(super) const KHR_DRACO: &str = "KHR_draco_mesh_compression";

/// One Draco-compressed primitive.
#[derive(Clone, Debug)]
struct DracoPrimitive {
    mesh: usize,
    /// The mesh's name, for messages.
    name: Option<String>,
    primitive: usize,
    /// The buffer view holding the stream.
    view: usize,
    /// `(semantic, Draco attribute id)`, in the extension's order.
    attributes: Vec<(String, u32)>,
}

impl DracoPrimitive {
    fn error(&self, detail: String) -> GltfError {
        GltfError::Draco { mesh: self.mesh, name: self.name.clone(), primitive: self.primitive, detail }
    }
}

/// What the JSON says about Draco compression: the compressed primitives.
#[derive(Default, Debug)]
pub(super) struct Draco {
    primitives: Vec<DracoPrimitive>,
}

/// Reads the extension object of every mesh primitive of the JSON text.
///
/// # Errors
///
/// [`GltfError::Draco`] for an extension object that is not an object, or whose `bufferView`
/// or `attributes` is missing or invalid.
pub(super) fn scan(json: &[u8]) -> Result<Draco, GltfError> {
    let tree: Value = serde_json::from_slice(json).map_err(|e| GltfError::Json(e.to_string()))?;
    let mut out = Draco::default();
    let Some(meshes) = tree.get("meshes").and_then(Value::as_array) else { return Ok(out) };
    for (mesh, m) in meshes.iter().enumerate() {
        let Some(primitives) = m.get("primitives").and_then(Value::as_array) else { continue };
        let name = m.get("name").and_then(Value::as_str).map(str::to_owned);
        for (primitive, p) in primitives.iter().enumerate() {
            let Some(e) = p.get("extensions").and_then(|x| x.get(KHR_DRACO)) else { continue };
            let mut prim = DracoPrimitive { mesh, name: name.clone(), primitive, view: 0, attributes: Vec::new() };
            let view = e.get("bufferView").ok_or_else(|| prim.error("bufferView is missing".into()))?;
            prim.view = view
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| prim.error(format!("bufferView {view} is not a non-negative integer")))?;
            let attributes = e
                .get("attributes")
                .and_then(Value::as_object)
                .ok_or_else(|| prim.error("attributes is missing or not an object".into()))?;
            for (semantic, id) in attributes {
                let id = id.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(|| {
                    prim.error(format!("attribute {} id {id} is not an integer in 0..2^32", short(semantic)))
                })?;
                prim.attributes.push((semantic.clone(), id));
            }
            out.primitives.push(prim);
        }
    }
    Ok(out)
}

/// A semantic for a message.
fn short(s: &str) -> std::borrow::Cow<'_, str> {
    super::error::short(s)
}

/// True for the primitive modes whose Draco data is decoded (triangle lists, strips and fans).
fn decodes(mode: &gltf::json::validation::Checked<gltf::json::mesh::Mode>) -> bool {
    use gltf::json::mesh::Mode;
    matches!(mode, gltf::json::validation::Checked::Valid(Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan))
}

/// The accessor of `semantic` in a primitive's `attributes`.
fn attribute_accessor(prim: &gltf::json::mesh::Primitive, semantic: &str) -> Option<usize> {
    prim.attributes.iter().find(|(k, _)| k.to_string() == semantic).map(|(_, a)| a.value())
}

/// Without the decoder: checks that every accessor a compressed primitive reads has fallback
/// data (a buffer view), and returns the document unchanged.
///
/// # Errors
///
/// [`GltfError::ExtensionNotInBuild`] for the first accessor without a buffer view.
#[cfg(not(feature = "draco"))]
pub(super) fn decode(
    doc: gltf::Document,
    draco: &Draco,
    _buffers: &mut Vec<Vec<u8>>,
    _decoded: &mut usize,
    _budget: usize,
) -> Result<gltf::Document, GltfError> {
    let root = doc.as_json();
    for d in &draco.primitives {
        let Some(prim) = root.meshes.get(d.mesh).and_then(|m| m.primitives.get(d.primitive)) else { continue };
        if !decodes(&prim.mode) {
            continue;
        }
        let accessors = d.attributes.iter().filter_map(|(s, _)| attribute_accessor(prim, s));
        let unbacked = accessors
            .chain(prim.indices.map(|i| i.value()))
            .any(|a| root.accessors.get(a).is_some_and(|acc| acc.buffer_view.is_none()));
        if unbacked {
            return Err(GltfError::ExtensionNotInBuild { extension: KHR_DRACO, feature: "draco" });
        }
    }
    Ok(doc)
}

/// Decodes every compressed triangle primitive: its stream within `budget` (less what
/// `decoded` counts already), its attributes and indices into a new buffer (appended to
/// `buffers` and to the document), and its accessors pointed at them. Returns the document
/// with those changes.
///
/// # Errors
///
/// [`GltfError::Draco`] for a primitive whose stream, attribute ids or decoded data are bad, or
/// whose decoded data exceeds the budget.
#[cfg(feature = "draco")]
pub(super) fn decode(
    doc: gltf::Document,
    draco: &Draco,
    buffers: &mut Vec<Vec<u8>>,
    decoded: &mut usize,
    budget: usize,
) -> Result<gltf::Document, GltfError> {
    if draco.primitives.is_empty() {
        return Ok(doc);
    }
    let mut root = doc.into_json();
    let mut uses = accessor_uses(&root);
    for d in &draco.primitives {
        decode_primitive(&mut root, &mut uses, d, buffers, decoded, budget)?;
    }
    Ok(gltf::Document::from_json_without_validation(root))
}

/// How many times each accessor is read: by primitive attributes, indices and morph targets,
/// skins and animation samplers.
#[cfg(feature = "draco")]
fn accessor_uses(root: &gltf::json::Root) -> Vec<usize> {
    let mut uses = vec![0usize; root.accessors.len()];
    let mut count = |i: usize| {
        if let Some(u) = uses.get_mut(i) {
            *u += 1;
        }
    };
    for prim in root.meshes.iter().flat_map(|m| &m.primitives) {
        prim.attributes.values().for_each(|a| count(a.value()));
        prim.indices.iter().for_each(|a| count(a.value()));
        for t in prim.targets.iter().flatten() {
            [&t.positions, &t.normals, &t.tangents].into_iter().flatten().for_each(|a| count(a.value()));
        }
    }
    root.skins.iter().filter_map(|s| s.inverse_bind_matrices).for_each(|a| count(a.value()));
    for s in root.animations.iter().flat_map(|a| &a.samplers) {
        count(s.input.value());
        count(s.output.value());
    }
    uses
}

/// One value of a decoded attribute.
#[cfg(feature = "draco")]
#[derive(Clone, Copy)]
enum Scalar {
    Int(i64),
    Float(f64),
}

/// Reads component `c` of value `v` of a decoded attribute (`None` outside its data).
#[cfg(feature = "draco")]
fn component(attr: &draco_core::PointAttribute, v: usize, c: usize) -> Option<Scalar> {
    use draco_core::DataType as T;
    let dt = attr.data_type();
    let width = dt.byte_length();
    let stride = usize::try_from(attr.byte_stride()).ok()?;
    let at = v.checked_mul(stride)?.checked_add(c.checked_mul(width)?)?;
    let b = attr.buffer().data().get(at..at.checked_add(width)?)?;
    let mut w = [0u8; 8];
    w.get_mut(..width)?.copy_from_slice(b);
    Some(match dt {
        T::Int8 => Scalar::Int(i64::from(w[0] as i8)),
        T::Uint8 | T::Bool => Scalar::Int(i64::from(w[0])),
        T::Int16 => Scalar::Int(i64::from(i16::from_le_bytes([w[0], w[1]]))),
        T::Uint16 => Scalar::Int(i64::from(u16::from_le_bytes([w[0], w[1]]))),
        T::Int32 => Scalar::Int(i64::from(i32::from_le_bytes([w[0], w[1], w[2], w[3]]))),
        T::Uint32 => Scalar::Int(i64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]]))),
        T::Int64 => Scalar::Int(i64::from_le_bytes(w)),
        T::Uint64 => Scalar::Int(i64::try_from(u64::from_le_bytes(w)).ok()?),
        T::Float32 => Scalar::Float(f64::from(f32::from_le_bytes([w[0], w[1], w[2], w[3]]))),
        T::Float64 => Scalar::Float(f64::from_le_bytes(w)),
        _ => return None,
    })
}

/// The largest magnitude of a normalized Draco integer type (`None` for others).
#[cfg(feature = "draco")]
fn normalized_max(dt: draco_core::DataType) -> Option<f64> {
    use draco_core::DataType as T;
    Some(match dt {
        T::Int8 => 127.0,
        T::Uint8 => 255.0,
        T::Int16 => 32767.0,
        T::Uint16 => 65535.0,
        T::Int32 => 2147483647.0,
        T::Uint32 => 4294967295.0,
        _ => return None,
    })
}

/// Appends `value` as a little-endian `ct` component; `Err` names what does not fit.
#[cfg(feature = "draco")]
fn put(out: &mut Vec<u8>, ct: gltf::json::accessor::ComponentType, value: Scalar) -> Result<(), String> {
    use gltf::json::accessor::ComponentType as C;
    let int = |range: std::ops::RangeInclusive<i64>| match value {
        Scalar::Int(i) if range.contains(&i) => Ok(i),
        Scalar::Int(i) => Err(format!("decoded value {i} does not fit {ct:?}")),
        Scalar::Float(f) => Err(format!("decoded floating-point value {f} for an integer ({ct:?}) accessor")),
    };
    match ct {
        C::I8 => out.push(int(-128..=127)? as i8 as u8),
        C::U8 => out.push(int(0..=255)? as u8),
        C::I16 => out.extend((int(-32768..=32767)? as i16).to_le_bytes()),
        C::U16 => out.extend((int(0..=65535)? as u16).to_le_bytes()),
        C::U32 => out.extend((int(0..=i64::from(u32::MAX))? as u32).to_le_bytes()),
        C::F32 => {
            let f = match value {
                Scalar::Int(i) => i as f32,
                Scalar::Float(f) => f as f32,
            };
            out.extend(f.to_le_bytes());
        }
    }
    Ok(())
}

/// The bytes of the accessor `acc` filled from decoded attribute `attr` at each of the mesh's
/// `points` (following Draco's point-to-value map).
#[cfg(feature = "draco")]
fn attribute_bytes(
    attr: &draco_core::PointAttribute,
    points: usize,
    acc: &gltf::json::Accessor,
) -> Result<Vec<u8>, String> {
    use gltf::json::validation::Checked::Valid;
    let (Valid(ct), Valid(ty)) = (&acc.component_type, &acc.type_) else {
        return Err("the accessor's componentType or type is invalid".into());
    };
    let ct = ct.0;
    let components = ty.multiplicity();
    if !matches!(
        ty,
        gltf::json::accessor::Type::Scalar
            | gltf::json::accessor::Type::Vec2
            | gltf::json::accessor::Type::Vec3
            | gltf::json::accessor::Type::Vec4
    ) {
        return Err(format!("the accessor's type {ty:?} is not SCALAR or VEC2..4"));
    }
    if usize::from(attr.num_components()) != components {
        return Err(format!(
            "the decoded attribute has {} components, the accessor's type {ty:?} has {components}",
            attr.num_components()
        ));
    }
    // Normalized integers decoded for a float accessor: glTF's mapping to [0, 1] or [-1, 1].
    let scale = if attr.normalized() && ct == gltf::json::accessor::ComponentType::F32 {
        normalized_max(attr.data_type())
    } else {
        None
    };
    let values = attr.size();
    let mut out = Vec::with_capacity(points.saturating_mul(components).saturating_mul(ct.size()));
    for p in 0..points {
        let point = draco_core::PointIndex(u32::try_from(p).map_err(|_| "too many points".to_string())?);
        let v = attr.mapped_index(point).0 as usize;
        if v >= values {
            return Err(format!("point {p} maps to value {v}, the attribute has {values}"));
        }
        for c in 0..components {
            let x = component(attr, v, c).ok_or_else(|| format!("value {v} lies outside the attribute's data"))?;
            let x = match (scale, x) {
                (Some(s), Scalar::Int(i)) => Scalar::Float((i as f64 / s).max(-1.0)),
                _ => x,
            };
            put(&mut out, ct, x)?;
        }
    }
    Ok(out)
}

/// Decodes primitive `d` into `root` and `buffers` (see [`decode`]).
#[cfg(feature = "draco")]
fn decode_primitive(
    root: &mut gltf::json::Root,
    uses: &mut Vec<usize>,
    d: &DracoPrimitive,
    buffers: &mut Vec<Vec<u8>>,
    decoded: &mut usize,
    budget: usize,
) -> Result<(), GltfError> {
    use gltf::json::accessor::{ComponentType, GenericComponentType, Type};
    use gltf::json::validation::{Checked, USize64};
    use gltf::json::Index;

    let bad = |detail: String| d.error(detail);
    let Some(prim) = root.meshes.get(d.mesh).and_then(|m| m.primitives.get(d.primitive)) else {
        return Err(bad("the primitive does not exist".into()));
    };
    if !decodes(&prim.mode) {
        return Ok(());
    }
    // The stream.
    let view = root.buffer_views.get(d.view).ok_or_else(|| bad(format!("buffer view {} does not exist", d.view)))?;
    let (b, offset, length) = (view.buffer.value(), view.byte_offset.map_or(0, |o| o.0), view.byte_length.0);
    let range = usize::try_from(offset).ok().zip(usize::try_from(length).ok());
    let stream = range
        .and_then(|(o, l)| buffers.get(b)?.get(o..o.checked_add(l)?))
        .ok_or_else(|| bad(format!("buffer view {} ({offset}+{length}) is outside buffer {b}", d.view)))?;
    let left = budget.saturating_sub(*decoded) as u64;
    let mut input = draco_core::DecoderBuffer::new(stream)
        .with_limits(draco_core::DecodeLimits::default().with_max_decoded_bytes(left));
    let mut mesh = draco_core::Mesh::new();
    draco_core::MeshDecoder::new()
        .decode(&mut input, &mut mesh)
        .map_err(|e| bad(format!("the stream in buffer view {} ({length} bytes) does not decode: {e}", d.view)))?;
    let points = mesh.num_points();

    // Each slot's data: the compressed attributes, then the indices. Each is counted against
    // the budget before it is made (the decoder's own limit counts Draco's values, which the
    // accessor's component type may widen).
    let mut slots: Vec<(Option<String>, usize, Vec<u8>)> = Vec::new();
    let mut reserved = 0usize;
    let mut reserve = |bytes: usize| {
        reserved = reserved.saturating_add(bytes.next_multiple_of(4));
        if decoded.saturating_add(reserved) > budget {
            Err(bad(format!("the decoded data exceeds the decoding budget of {budget} bytes")))
        } else {
            Ok(())
        }
    };
    for (semantic, id) in &d.attributes {
        let a = attribute_accessor(prim, semantic).ok_or_else(|| {
            bad(format!("attribute {} is compressed but not among the primitive's attributes", short(semantic)))
        })?;
        let acc = root.accessors.get(a).ok_or_else(|| bad(format!("accessor {a} does not exist")))?;
        if acc.count.0 != points as u64 {
            return Err(bad(format!(
                "accessor {a} ({}) has count {}, the stream decodes {points} vertices",
                short(semantic),
                acc.count.0
            )));
        }
        let element = match (&acc.component_type, &acc.type_) {
            (Checked::Valid(ct), Checked::Valid(ty)) => ct.0.size().saturating_mul(ty.multiplicity()),
            _ => 0,
        };
        reserve(points.saturating_mul(element))?;
        let attr = mesh
            .attribute_by_unique_id(*id)
            .ok_or_else(|| bad(format!("attribute {} id {id} is not in the stream", short(semantic))))?;
        let bytes =
            attribute_bytes(attr, points, acc).map_err(|e| bad(format!("{} (accessor {a}): {e}", short(semantic))))?;
        slots.push((Some(semantic.clone()), a, bytes));
    }
    let faces = mesh.faces();
    let corners = faces.len().saturating_mul(3);
    let index_accessor = match prim.indices {
        Some(i) => {
            let i = i.value();
            let acc = root.accessors.get(i).ok_or_else(|| bad(format!("accessor {i} does not exist")))?;
            if acc.count.0 != corners as u64 {
                return Err(bad(format!(
                    "indices accessor {i} has count {}, the stream decodes {} triangles ({corners} indices)",
                    acc.count.0,
                    faces.len()
                )));
            }
            Some(i)
        }
        None => None,
    };
    let index_type = match index_accessor.and_then(|i| root.accessors.get(i)).map(|a| &a.component_type) {
        None => ComponentType::U32,
        Some(Checked::Valid(GenericComponentType(
            ct @ (ComponentType::U8 | ComponentType::U16 | ComponentType::U32),
        ))) => *ct,
        Some(other) => {
            return Err(bad(format!("the indices accessor's componentType {other:?} is not an unsigned integer")))
        }
    };
    reserve(corners.saturating_mul(index_type.size()))?;
    let mut indices = Vec::with_capacity(corners.saturating_mul(index_type.size()));
    for p in faces.iter().flatten() {
        if p.0 as usize >= points {
            return Err(bad(format!("a triangle uses point {}, the stream has {points}", p.0)));
        }
        put(&mut indices, index_type, Scalar::Int(i64::from(p.0))).map_err(|e| bad(format!("indices: {e}")))?;
    }

    // The new buffer, its views and the accessors.
    let size = slots.iter().map(|s| s.2.len().next_multiple_of(4)).sum::<usize>().saturating_add(indices.len());
    *decoded = decoded.saturating_add(size);
    let buffer = root.buffers.len();
    let buffer_index = u32::try_from(buffer).map_err(|_| bad("too many buffers".into()))?;
    let mut data = Vec::with_capacity(size);
    let index_slot = (None, index_accessor.unwrap_or(usize::MAX), indices);
    for (semantic, a, bytes) in slots.into_iter().chain([index_slot]) {
        let start = data.len();
        data.extend_from_slice(&bytes);
        data.resize(data.len().next_multiple_of(4), 0);
        let view = root.buffer_views.len();
        root.buffer_views.push(gltf::json::buffer::View {
            buffer: Index::new(buffer_index),
            byte_length: USize64(bytes.len() as u64),
            byte_offset: Some(USize64(start as u64)),
            byte_stride: None,
            name: None,
            target: None,
            extensions: None,
            extras: Default::default(),
        });
        let view = Index::new(u32::try_from(view).map_err(|_| bad("too many buffer views".into()))?);
        let accessor = if root.accessors.get(a).is_some() && uses.get(a) == Some(&1) {
            // Read only here: filled in place.
            a
        } else {
            // Read elsewhere too, or the indices the primitive did not have: a new accessor.
            let copy = root.accessors.get(a).cloned().unwrap_or_else(|| gltf::json::Accessor {
                buffer_view: None,
                byte_offset: None,
                count: USize64(corners as u64),
                component_type: Checked::Valid(GenericComponentType(ComponentType::U32)),
                extensions: None,
                extras: Default::default(),
                type_: Checked::Valid(Type::Scalar),
                min: None,
                max: None,
                name: None,
                normalized: false,
                sparse: None,
            });
            if let Some(u) = uses.get_mut(a) {
                *u -= 1;
            }
            root.accessors.push(copy);
            uses.push(1);
            root.accessors.len() - 1
        };
        if let Some(acc) = root.accessors.get_mut(accessor) {
            acc.buffer_view = Some(view);
            acc.byte_offset = None;
            acc.sparse = None;
        }
        let index = Index::new(u32::try_from(accessor).map_err(|_| bad("too many accessors".into()))?);
        let Some(prim) = root.meshes.get_mut(d.mesh).and_then(|m| m.primitives.get_mut(d.primitive)) else {
            return Err(bad("the primitive does not exist".into()));
        };
        match semantic {
            Some(s) => {
                if let Some(slot) = prim.attributes.iter_mut().find(|(k, _)| k.to_string() == s).map(|(_, v)| v) {
                    *slot = index;
                }
            }
            None => prim.indices = Some(index),
        }
    }
    root.buffers.push(gltf::json::Buffer {
        byte_length: USize64(data.len() as u64),
        name: None,
        uri: None,
        extensions: None,
        extras: Default::default(),
    });
    buffers.push(data);
    Ok(())
}
