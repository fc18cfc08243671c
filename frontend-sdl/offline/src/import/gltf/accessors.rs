//! Accessors: the state of one import ([`Importer`]: the document, its buffers, the notes and the
//! decoding budget) and the reading of accessors through it: every accessor (and its sparse
//! storage) is checked against its buffer view and buffer and against the element types its use
//! allows before the `gltf` readers touch it, and every read counts against the budget. Normalized
//! integer data is turned into floats by the callers (`into_f32`, `into_u16`, `into_u32`), and
//! float attributes stored as integers (`KHR_mesh_quantization`) by [`Importer::read_floats`].

use gltf::accessor::{DataType, Dimensions, Item, Iter};

use super::error::GltfError;

/// Allowed element types of each accessor use.
pub(super) const VEC3_F32: &[(DataType, Dimensions)] = &[(DataType::F32, Dimensions::Vec3)];
/// `POSITION`: float, or any 8- or 16-bit integer, normalized or not (`KHR_mesh_quantization`).
pub(super) const POSITIONS: &[(DataType, Dimensions)] = &[
    (DataType::F32, Dimensions::Vec3),
    (DataType::I8, Dimensions::Vec3),
    (DataType::U8, Dimensions::Vec3),
    (DataType::I16, Dimensions::Vec3),
    (DataType::U16, Dimensions::Vec3),
];
/// `NORMAL`: float, or normalized signed 8- or 16-bit integers (`KHR_mesh_quantization`).
pub(super) const NORMALS: &[(DataType, Dimensions)] =
    &[(DataType::F32, Dimensions::Vec3), (DataType::I8, Dimensions::Vec3), (DataType::I16, Dimensions::Vec3)];
/// `TANGENT`: float, or normalized signed 8- or 16-bit integers (`KHR_mesh_quantization`).
pub(super) const TANGENTS: &[(DataType, Dimensions)] =
    &[(DataType::F32, Dimensions::Vec4), (DataType::I8, Dimensions::Vec4), (DataType::I16, Dimensions::Vec4)];
pub(super) const SCALAR_F32: &[(DataType, Dimensions)] = &[(DataType::F32, Dimensions::Scalar)];
pub(super) const MAT4_F32: &[(DataType, Dimensions)] = &[(DataType::F32, Dimensions::Mat4)];
pub(super) const INDICES: &[(DataType, Dimensions)] =
    &[(DataType::U8, Dimensions::Scalar), (DataType::U16, Dimensions::Scalar), (DataType::U32, Dimensions::Scalar)];
pub(super) const JOINTS: &[(DataType, Dimensions)] =
    &[(DataType::U8, Dimensions::Vec4), (DataType::U16, Dimensions::Vec4)];
pub(super) const WEIGHTS: &[(DataType, Dimensions)] =
    &[(DataType::F32, Dimensions::Vec4), (DataType::U8, Dimensions::Vec4), (DataType::U16, Dimensions::Vec4)];
pub(super) const ROTATIONS: &[(DataType, Dimensions)] = &[
    (DataType::F32, Dimensions::Vec4),
    (DataType::I8, Dimensions::Vec4),
    (DataType::U8, Dimensions::Vec4),
    (DataType::I16, Dimensions::Vec4),
    (DataType::U16, Dimensions::Vec4),
];

/// One import in progress: the document, its buffers (each cut to its `byteLength`), the notes
/// so far and the decoding budget.
pub(super) struct Importer<'a> {
    pub(super) doc: &'a gltf::Document,
    pub(super) buffers: &'a [Vec<u8>],
    pub(super) notes: Vec<String>,
    /// Bytes decoded so far, against `budget`.
    pub(super) decoded: usize,
    /// Most bytes this import may decode (see
    /// [`DECODED_BYTES_PER_INPUT_BYTE`](super::DECODED_BYTES_PER_INPUT_BYTE)).
    pub(super) budget: usize,
    /// Animation channels to skip, as `(animation, channel)`: their target names no node.
    pub(super) ignored_channels: std::collections::HashSet<(usize, usize)>,
    /// Materials and images converted so far.
    pub(super) surfaces: super::materials::Surfaces,
}

impl<'a> Importer<'a> {
    /// The buffer lookup the `gltf` readers call.
    pub(super) fn data(&self) -> impl Fn(gltf::Buffer<'_>) -> Option<&'a [u8]> + Clone + 'a {
        let buffers = self.buffers;
        move |b: gltf::Buffer<'_>| buffers.get(b.index()).map(Vec::as_slice)
    }

    /// Collects exactly `count` items from a reader iterator, within the decoding budget. An
    /// accessor with neither a buffer view nor sparse storage (for which the readers give no
    /// iterator) reads as `count` zeros, as glTF defines.
    pub(super) fn collect<T: Default + Clone>(
        &mut self,
        it: Option<impl Iterator<Item = T>>,
        accessor: usize,
        count: usize,
    ) -> Result<Vec<T>, GltfError> {
        let bytes = count.saturating_mul(std::mem::size_of::<T>());
        self.decoded = self.decoded.saturating_add(bytes);
        if self.decoded > self.budget {
            return Err(GltfError::TooLarge { accessor, limit: self.budget });
        }
        if it.is_none() && self.is_unbacked(accessor) {
            return Ok(vec![T::default(); count]);
        }
        let it =
            it.ok_or_else(|| GltfError::AccessorOutOfBounds { accessor, detail: "its data could not be read".into() })?;
        let v: Vec<T> = it.take(count).collect();
        if v.len() != count {
            return Err(GltfError::CountMismatch {
                what: format!("accessor {accessor}"),
                expected: count,
                actual: v.len(),
            });
        }
        Ok(v)
    }

    /// Reads `count` elements of `N` floats from an accessor of [`POSITIONS`], [`NORMALS`] or
    /// [`TANGENTS`] (or `TEXCOORD_n`'s float and 8/16-bit integer `VEC2`, checked by
    /// [`check_accessor`](Self::check_accessor)):
    /// floats as they are, integers as their value or, when `normalized`, as glTF maps them
    /// (`c / 127` clamped at −1 for bytes, `c / 255` for unsigned bytes, `c / 32767` and
    /// `c / 65535` for shorts). `normalized_only` refuses integers that are not normalized
    /// (`NORMAL` and `TANGENT`), naming `what`.
    pub(super) fn read_floats<const N: usize>(
        &mut self,
        acc: &gltf::Accessor<'_>,
        count: usize,
        what: &str,
        normalized_only: bool,
    ) -> Result<Vec<[f32; N]>, GltfError>
    where
        [f32; N]: Item + Default,
        [i8; N]: Item + Default,
        [u8; N]: Item + Default,
        [i16; N]: Item + Default,
        [u16; N]: Item + Default,
    {
        let (dt, norm, index) = (acc.data_type(), acc.normalized(), acc.index());
        if normalized_only && dt != DataType::F32 && !norm {
            return Err(GltfError::AccessorType {
                accessor: index,
                usage: what.to_owned(),
                found: format!("{:?} of {dt:?}, not normalized", acc.dimensions()),
            });
        }
        let data = self.data();
        fn map<T: Copy, const N: usize>(v: Vec<[T; N]>, f: impl Fn(T) -> f32) -> Vec<[f32; N]> {
            v.into_iter().map(|c| c.map(&f)).collect()
        }
        Ok(match dt {
            DataType::I8 => {
                let v = self.collect(Iter::<[i8; N]>::new(acc.clone(), data), index, count)?;
                map(v, |x| if norm { (f32::from(x) / 127.0).max(-1.0) } else { f32::from(x) })
            }
            DataType::U8 => {
                let v = self.collect(Iter::<[u8; N]>::new(acc.clone(), data), index, count)?;
                map(v, |x| if norm { f32::from(x) / 255.0 } else { f32::from(x) })
            }
            DataType::I16 => {
                let v = self.collect(Iter::<[i16; N]>::new(acc.clone(), data), index, count)?;
                map(v, |x| if norm { (f32::from(x) / 32767.0).max(-1.0) } else { f32::from(x) })
            }
            DataType::U16 => {
                let v = self.collect(Iter::<[u16; N]>::new(acc.clone(), data), index, count)?;
                map(v, |x| if norm { f32::from(x) / 65535.0 } else { f32::from(x) })
            }
            _ => self.collect(Iter::<[f32; N]>::new(acc.clone(), data), index, count)?,
        })
    }

    /// True when accessor `accessor` has neither a buffer view nor sparse storage: its elements
    /// are all zero.
    pub(super) fn is_unbacked(&self, accessor: usize) -> bool {
        self.doc.accessors().nth(accessor).is_some_and(|a| a.view().is_none() && a.sparse().is_none())
    }

    pub(super) fn check_count(&self, count: usize, expected: usize, what: &str) -> Result<(), GltfError> {
        if count == expected {
            Ok(())
        } else {
            Err(GltfError::CountMismatch { what: what.to_owned(), expected, actual: count })
        }
    }

    /// Checks that an accessor has an allowed element type and that every byte it (and its
    /// sparse storage) reads lies inside its buffer view and buffer. Returns its count.
    pub(super) fn check_accessor(
        &self,
        acc: &gltf::Accessor<'_>,
        usage: &str,
        allowed: &[(DataType, Dimensions)],
    ) -> Result<usize, GltfError> {
        let (dt, dims) = (acc.data_type(), acc.dimensions());
        if !allowed.iter().any(|&(d, m)| d == dt && m == dims) {
            return Err(GltfError::AccessorType {
                accessor: acc.index(),
                usage: usage.to_owned(),
                found: format!("{dims:?} of {dt:?}"),
            });
        }
        let count = acc.count();
        if count == 0 {
            return Ok(0);
        }
        let elem = acc.size();
        // Without a buffer view the base values are zeros (see `collect`), with or without
        // sparse storage over them.
        if let Some(view) = acc.view() {
            self.check_range(acc.index(), "", &view, acc.offset(), count, elem)?;
        }
        if let Some(sparse) = acc.sparse() {
            let sc = sparse.count();
            if sc == 0 || sc > count {
                return Err(GltfError::AccessorOutOfBounds {
                    accessor: acc.index(),
                    detail: format!("sparse count {sc} is not in 1..={count}"),
                });
            }
            let indices = sparse.indices();
            let isize_ = indices.index_type().size();
            self.check_range(acc.index(), "sparse indices ", &indices.view(), indices.offset(), sc, isize_)?;
            let values = sparse.values();
            self.check_range(acc.index(), "sparse values ", &values.view(), values.offset(), sc, elem)?;
        }
        Ok(count)
    }

    /// Checks that `count` elements of `elem` bytes at `offset` with the view's stride fit the
    /// view, that the stride is at least an element, and that the view fits its buffer.
    fn check_range(
        &self,
        accessor: usize,
        part: &str,
        view: &gltf::buffer::View<'_>,
        offset: usize,
        count: usize,
        elem: usize,
    ) -> Result<(), GltfError> {
        let oob = |detail: String| GltfError::AccessorOutOfBounds { accessor, detail };
        let vi = view.index();
        let buffer = view.buffer().index();
        let buffer_len = self.buffers.get(buffer).map_or(0, Vec::len);
        let view_end = view.offset().checked_add(view.length());
        if view_end.is_none_or(|end| end > buffer_len) {
            return Err(oob(format!(
                "{part}buffer view {vi} (offset {}, length {}) exceeds buffer {buffer} ({buffer_len} bytes)",
                view.offset(),
                view.length()
            )));
        }
        let stride = view.stride().unwrap_or(elem);
        if stride < elem {
            return Err(oob(format!("{part}buffer view {vi} stride {stride} is smaller than the {elem}-byte element")));
        }
        let end = count
            .checked_sub(1)
            .and_then(|c| c.checked_mul(stride))
            .and_then(|b| b.checked_add(elem))
            .and_then(|b| b.checked_add(offset));
        if end.is_none_or(|end| end > view.length()) {
            return Err(oob(format!(
                "{part}{count} elements of {elem} bytes (stride {stride}) from offset {offset} exceed buffer view {vi} \
                 ({} bytes)",
                view.length()
            )));
        }
        Ok(())
    }
}

/// Fails with [`GltfError::NonFinite`] when a value is NaN or infinite.
pub(super) fn check_finite<'v>(
    mut values: impl Iterator<Item = &'v f32>,
    what: impl FnOnce() -> String,
) -> Result<(), GltfError> {
    if values.all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(GltfError::NonFinite { what: what() })
    }
}
