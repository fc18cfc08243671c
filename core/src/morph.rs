//! Morph targets and morph-weight tracks, read in place from validated `.sinew` sections (the
//! MRPH and MWGT layouts of [`crate::format`]; [`crate::asset`] validates them and hands out
//! these views, [`crate::job::MorphJob`] and [`crate::job::MorphWeightsJob`] use them).
//!
//! - [`MorphTargets`]: the targets of one mesh — its default weights and, per mesh part, each
//!   target's sparse deltas ([`MorphPart`], [`MorphTarget`]): the vertices it moves (strictly
//!   increasing) with their position, normal and tangent deltas, `f32` or `i16` scaled by a
//!   power of two (integer-only for `Q16`).
//! - [`WeightTracks`]: the weight tracks of one clip, one per morphed mesh, `targets` values per
//!   key, STEP / LINEAR / CUBICSPLINE as glTF 2.0 Appendix C defines them (the key search is
//!   [`crate::clip`]'s).

use crate::clip::{interval, Span};
use crate::format::reader::{byte, le_f32, le_u16, le_u32, Reader};
use crate::format::*;
use crate::math::Vec3;
use crate::real::Real;

/// The morph targets of one mesh (an MRPH section), borrowing its bytes.
#[derive(Debug, Clone, Copy)]
pub struct MorphTargets<'a> {
    mesh: u16,
    targets: usize,
    weights: &'a [u8],
    parts: usize,
    parts_bytes: &'a [u8],
    len: usize,
}

impl<'a> MorphTargets<'a> {
    /// Reads the header of an MRPH section; `Err` when it is truncated.
    pub(crate) fn header(body: &'a [u8]) -> Result<Self, ParseError> {
        let mut r = Reader::new(body);
        let mesh = r.u16()?;
        let targets = r.u16()? as usize;
        let weights = r.bytes(targets * 4)?;
        let parts = r.u16()? as usize;
        let rest = r.pos();
        Ok(MorphTargets {
            mesh,
            targets,
            weights,
            parts,
            parts_bytes: body.get(rest..).unwrap_or(&[]),
            len: body.len(),
        })
    }
    /// Bytes of the section.
    #[must_use]
    pub fn byte_len(&self) -> usize {
        self.len
    }
    /// The mesh (index in the file) these targets deform.
    #[must_use]
    pub fn mesh(&self) -> usize {
        self.mesh as usize
    }
    /// Number of targets.
    #[must_use]
    pub fn num_targets(&self) -> usize {
        self.targets
    }
    /// Default weight of target `i` (the mesh instance's weights without animation; 0 past the
    /// end).
    #[must_use]
    pub fn default_weight<R: Real>(&self, i: usize) -> R {
        R::from_f32(le_f32(self.weights, i * 4))
    }
    /// Number of parts (the mesh's).
    #[must_use]
    pub fn num_parts(&self) -> usize {
        self.parts
    }
    /// The parts, in the mesh's part order.
    pub fn parts(&self) -> impl Iterator<Item = MorphPart<'a>> + 'a {
        let mut r = Reader::new(self.parts_bytes);
        let (n, targets) = (self.parts, self.targets);
        (0..n).map_while(move |_| MorphPart::read(&mut r, targets).ok())
    }
    /// Part `i`.
    #[must_use]
    pub fn part(&self, i: usize) -> Option<MorphPart<'a>> {
        self.parts().nth(i)
    }
}

/// The targets of one mesh part.
#[derive(Debug, Clone, Copy)]
pub struct MorphPart<'a> {
    vertices: usize,
    targets: usize,
    data: &'a [u8],
}

impl<'a> MorphPart<'a> {
    /// Reads one part (its vertex count and `targets` targets).
    pub(crate) fn read(r: &mut Reader<'a>, targets: usize) -> Result<Self, ParseError> {
        let vertices = r.u32()? as usize;
        let start = r.pos();
        for _ in 0..targets {
            MorphTarget::read(r)?;
        }
        Ok(MorphPart { vertices, targets, data: r.taken(start) })
    }
    /// Vertex count of the part.
    #[must_use]
    pub fn num_vertices(&self) -> usize {
        self.vertices
    }
    /// Number of targets (the mesh's).
    #[must_use]
    pub fn num_targets(&self) -> usize {
        self.targets
    }
    /// The targets, in order.
    pub fn targets(&self) -> impl Iterator<Item = MorphTarget<'a>> + 'a {
        let mut r = Reader::new(self.data);
        (0..self.targets).map_while(move |_| MorphTarget::read(&mut r).ok())
    }
    /// Target `i`.
    #[must_use]
    pub fn target(&self, i: usize) -> Option<MorphTarget<'a>> {
        self.targets().nth(i)
    }
}

/// One target of one part: the vertices it moves and their deltas.
#[derive(Debug, Clone, Copy)]
pub struct MorphTarget<'a> {
    count: usize,
    format: u8,
    attributes: u8,
    index_size: usize,
    shifts: [u8; 3],
    indices: &'a [u8],
    deltas: &'a [u8],
}

impl<'a> MorphTarget<'a> {
    /// Reads one target's header, vertices and deltas.
    pub(crate) fn read(r: &mut Reader<'a>) -> Result<Self, ParseError> {
        let count = r.u32()? as usize;
        let format = r.u8()?;
        let attributes = r.u8()?;
        let index_size = r.u8()? as usize;
        let shifts = r.array::<3>()?;
        let indices = r.bytes(count.checked_mul(index_size).ok_or(ParseError::Truncated)?)?;
        let t = MorphTarget { count, format, attributes, index_size, shifts, indices, deltas: &[] };
        let len = count.checked_mul(t.stride()).ok_or(ParseError::Truncated)?;
        Ok(MorphTarget { deltas: r.bytes(len)?, ..t })
    }
    /// Bytes of one vertex's deltas.
    #[inline(always)]
    fn stride(&self) -> usize {
        let attrs = 1 + usize::from(self.has_normals()) + usize::from(self.has_tangents());
        3 * attrs * if self.format == MORPH_QUANTIZED { 2 } else { 4 }
    }
    /// The header fields as stored: format, attribute bits, index size, shifts.
    pub(crate) fn raw_header(&self) -> (u8, u8, usize, [u8; 3]) {
        (self.format, self.attributes, self.index_size, self.shifts)
    }
    /// The deltas' bytes (for validation).
    pub(crate) fn delta_bytes(&self) -> &'a [u8] {
        self.deltas
    }
    /// Number of vertices the target moves (its other vertices do not move).
    #[must_use]
    pub fn len(&self) -> usize {
        self.count
    }
    /// True when the target moves no vertex of this part.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// True when normal deltas are stored.
    #[must_use]
    pub fn has_normals(&self) -> bool {
        self.attributes & ATTR_NORMALS != 0
    }
    /// True when tangent deltas (xyz) are stored.
    #[must_use]
    pub fn has_tangents(&self) -> bool {
        self.attributes & ATTR_TANGENTS != 0
    }
    /// True for `i16` deltas ([`MORPH_QUANTIZED`]), false for `f32`.
    #[must_use]
    pub fn is_quantized(&self) -> bool {
        self.format == MORPH_QUANTIZED
    }
    /// The part vertex of entry `k`.
    #[inline(always)]
    #[must_use]
    pub fn vertex(&self, k: usize) -> usize {
        if self.index_size == 2 {
            le_u16(self.indices, k * 2) as usize
        } else {
            le_u32(self.indices, k * 4) as usize
        }
    }
    /// Delta `slot` (0 position, 1 normal, 2 tangent, as stored) of entry `k`.
    #[inline(always)]
    fn delta<R: Real>(&self, k: usize, slot: usize, shift: u8) -> Vec3<R> {
        let at = k * self.stride();
        if self.format == MORPH_QUANTIZED {
            let q =
                |j: usize| R::from_fixed_bits(le_u16(self.deltas, at + (slot * 3 + j) * 2) as i16 as i32, shift as u32);
            Vec3::new(q(0), q(1), q(2))
        } else {
            let f = |j: usize| R::from_f32(le_f32(self.deltas, at + (slot * 3 + j) * 4));
            Vec3::new(f(0), f(1), f(2))
        }
    }
    /// Position delta of entry `k`.
    #[inline(always)]
    #[must_use]
    pub fn position<R: Real>(&self, k: usize) -> Vec3<R> {
        self.delta(k, 0, self.shifts[0])
    }
    /// Normal delta of entry `k` (zero when none is stored).
    #[inline(always)]
    #[must_use]
    pub fn normal<R: Real>(&self, k: usize) -> Vec3<R> {
        if self.has_normals() {
            self.delta(k, 1, self.shifts[1])
        } else {
            Vec3::ZERO
        }
    }
    /// Tangent delta (xyz; the handedness does not change) of entry `k` (zero when none is
    /// stored).
    #[inline(always)]
    #[must_use]
    pub fn tangent<R: Real>(&self, k: usize) -> Vec3<R> {
        if self.has_tangents() {
            self.delta(k, 1 + usize::from(self.has_normals()), self.shifts[2])
        } else {
            Vec3::ZERO
        }
    }
}

/// Description of one morph-weight track.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeightTrackInfo {
    /// The mesh whose weights the track animates.
    pub mesh: u16,
    /// Interpolation.
    pub interpolation: crate::clip::Interpolation,
    /// Key storage.
    pub format: crate::clip::KeyFormat,
    /// Number of keys (at least 1).
    pub key_count: u16,
}

/// The morph-weight tracks of one clip (an MWGT section), borrowing its bytes.
#[derive(Debug, Clone, Copy)]
pub struct WeightTracks<'a> {
    body: &'a [u8],
    clip: u16,
    start: f32,
    end: f32,
    tracks: usize,
    dir: usize,
}

/// Bytes of an MWGT track's key data (`None` on overflow): `targets` values per key.
pub(crate) fn weight_data_len(interp: u8, format: u8, keys: usize, targets: usize) -> Option<usize> {
    if format == FORMAT_F32 {
        let per_key = if interp == INTERP_CUBIC { 3 * targets } else { targets };
        keys.checked_mul(per_key.checked_mul(4)?.checked_add(4)?)
    } else {
        keys.checked_mul(targets.checked_mul(2)?.checked_add(2)?)?.checked_add(8)
    }
}

impl<'a> WeightTracks<'a> {
    /// Reads the header of an MWGT section; `Err` when it or its directory is truncated.
    pub(crate) fn header(body: &'a [u8]) -> Result<Self, ParseError> {
        let mut r = Reader::new(body);
        let clip = r.u16()?;
        let start = r.f32()?;
        let end = r.f32()?;
        let tracks = r.u16()? as usize;
        let dir = r.pos();
        r.bytes(tracks * TRACK_ENTRY_LEN)?;
        Ok(WeightTracks { body, clip, start, end, tracks, dir })
    }
    /// The clip (index in the file) the tracks belong to.
    #[must_use]
    pub fn clip(&self) -> usize {
        self.clip as usize
    }
    /// The clip's start (seconds).
    #[must_use]
    pub fn start(&self) -> f32 {
        self.start
    }
    /// The clip's end (seconds).
    #[must_use]
    pub fn end(&self) -> f32 {
        self.end
    }
    /// Number of tracks.
    #[must_use]
    pub fn num_tracks(&self) -> usize {
        self.tracks
    }
    /// Bytes of the section.
    #[must_use]
    pub fn byte_len(&self) -> usize {
        self.body.len()
    }
    /// The directory entry of track `i`: mesh, target, interpolation, format, flags, keys,
    /// data offset.
    pub(crate) fn entry(&self, i: usize) -> (u16, u8, u8, u8, u8, usize, usize) {
        let e = self.dir + i * TRACK_ENTRY_LEN;
        let b = self.body;
        (
            le_u16(b, e),
            byte(b, e + 2),
            byte(b, e + 3),
            byte(b, e + 4),
            byte(b, e + 5),
            le_u16(b, e + 6) as usize,
            le_u32(b, e + 8) as usize,
        )
    }
    /// Track `i`'s description.
    #[must_use]
    pub fn track(&self, i: usize) -> Option<WeightTrackInfo> {
        use crate::clip::{Interpolation, KeyFormat};
        if i >= self.tracks {
            return None;
        }
        let (mesh, _, interp, format, _, keys, _) = self.entry(i);
        Some(WeightTrackInfo {
            mesh,
            interpolation: match interp {
                INTERP_STEP => Interpolation::Step,
                INTERP_LINEAR => Interpolation::Linear,
                _ => Interpolation::CubicSpline,
            },
            format: if format == FORMAT_F32 { KeyFormat::F32 } else { KeyFormat::Quantized },
            key_count: keys as u16,
        })
    }
    /// The track animating mesh `mesh` (tracks are in increasing mesh order).
    #[must_use]
    pub fn track_of_mesh(&self, mesh: usize) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.tracks);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let m = le_u16(self.body, self.dir + mid * TRACK_ENTRY_LEN) as usize;
            if m == mesh {
                return Some(mid);
            } else if m < mesh {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        None
    }

    /// Samples track `i` at `t` (already clamped to the clip range) into `out`, one weight per
    /// target (`out.len()` is the mesh's target count), finding the key interval from the hint
    /// `cursor` (updated).
    pub(crate) fn sample<R: Real>(&self, i: usize, t: R, cursor: &mut u16, out: &mut [R]) {
        let (_, _, interp, format, _, n, off) = self.entry(i);
        let data = self.body.get(off..).unwrap_or(&[]);
        let targets = out.len();
        let (start, end) = (R::from_f32(self.start), R::from_f32(self.end));
        let scale = (end - start) * R::ratio(65536, 65535);
        let time = |k: usize| -> R {
            if format == FORMAT_F32 {
                R::from_f32(le_f32(data, k * 4))
            } else {
                start + scale * R::from_fixed_bits(le_u16(data, k * 2) as i32, 16)
            }
        };
        let cubic = interp == INTERP_CUBIC;
        // Component `j` of part `part` (0 in-tangent, 1 value, 2 out-tangent) of key `k`.
        let read = |k: usize, part: usize, j: usize| -> R {
            if format == FORMAT_F32 {
                let (stride, p) = if cubic { (3 * targets, part * targets) } else { (targets, 0) };
                R::from_f32(le_f32(data, n * 4 + (k * stride + p + j) * 4))
            } else {
                let v = n * 2;
                let (min, sc) = (R::from_f32(le_f32(data, v)), R::from_f32(le_f32(data, v + 4)));
                min + sc * R::from_fixed_bits(le_u16(data, v + 8 + (k * targets + j) * 2) as i32, 16)
            }
        };
        match interval(n, t, cursor, time) {
            Span::At(k) => {
                for (j, o) in out.iter_mut().enumerate() {
                    *o = read(k, 1, j);
                }
            }
            Span::Between(k, t0, t1) => {
                let td = t1 - t0;
                let s = ((t - t0) / td).clamp(R::ZERO, R::ONE);
                match interp {
                    INTERP_STEP => {
                        for (j, o) in out.iter_mut().enumerate() {
                            *o = read(k, 1, j);
                        }
                    }
                    INTERP_LINEAR => {
                        for (j, o) in out.iter_mut().enumerate() {
                            let (a, b) = (read(k, 1, j), read(k + 1, 1, j));
                            *o = a + (b - a) * s;
                        }
                    }
                    _ => {
                        // glTF cubic Hermite, tangents scaled by the key interval.
                        let (s2, two, three) = (s * s, R::TWO, R::from_i32(3));
                        let s3 = s2 * s;
                        let h00 = two * s3 - three * s2 + R::ONE;
                        let h10 = (s3 - two * s2 + s) * td;
                        let h01 = three * s2 - two * s3;
                        let h11 = (s3 - s2) * td;
                        for (j, o) in out.iter_mut().enumerate() {
                            *o = h00 * read(k, 1, j)
                                + h10 * read(k, 2, j)
                                + h01 * read(k + 1, 1, j)
                                + h11 * read(k + 1, 0, j);
                        }
                    }
                }
            }
        }
    }
}
