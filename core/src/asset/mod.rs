//! Baked `.sinew` assets: parsed zero-copy from bytes (flash, `include_bytes!`, a file read by
//! the host), validated once, then read without further checks failing.
//!
//! [`Asset::parse`] checks the header, the checksum and every section (counts, ranges, finite
//! values, key order, index bounds, skin weights, triangles), so the views it hands out
//! ([`SkeletonData`], [`SkinData`], [`MeshData`], [`Clip`]) can be read without errors. Data is
//! read with unaligned little-endian loads, so any byte alignment works. The layout is in
//! [`format`].

use core::fmt;

use crate::clip::Clip;
use crate::limits::{MAX_INFLUENCES, MAX_JOINTS, MAX_NAME_LEN};
use crate::math::{Mat4, Transform, Vec3, Vec4};
use crate::real::Real;
use crate::skeleton::{Skeleton, SkeletonError, NO_PARENT};

mod crc;
pub mod format;
pub(crate) mod reader;
pub mod writer;

pub use crc::crc32;
use format::*;
use reader::{le_f32, le_u16, le_u32, Reader};

/// Why [`Asset::parse`] rejected a file. `section` fields index the section table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseError {
    /// The data ends before a structure it declares.
    Truncated,
    /// The file does not start with the `.sinew` magic bytes.
    BadMagic,
    /// The format version is not one this build reads.
    UnsupportedVersion {
        /// Version found in the header.
        found: u16,
    },
    /// The header's file length differs from the data length.
    LengthMismatch {
        /// Length declared in the header.
        declared: u32,
    },
    /// The CRC-32 of the contents differs from the stored one (corrupt data).
    ChecksumMismatch {
        /// Stored checksum.
        stored: u32,
        /// Checksum of the data.
        computed: u32,
    },
    /// A section lies outside the file, starts before the end of the table or of the section
    /// before it, comes apart from the other sections of its kind, or its contents do not fill
    /// it exactly.
    BadSection {
        /// Section index.
        section: u16,
    },
    /// A count or length inside a section (joints, parts, vertices, indices, tracks, a name)
    /// declares more data than the section holds.
    SectionOverrun {
        /// Section index.
        section: u16,
    },
    /// More than one skeleton section.
    DuplicateSkeleton,
    /// Skins or clips exist but no skeleton does.
    MissingSkeleton,
    /// The skeleton is invalid.
    Skeleton(SkeletonError),
    /// A float is NaN or infinite.
    NonFinite {
        /// Section index.
        section: u16,
    },
    /// A name is not UTF-8 or longer than [`MAX_NAME_LEN`].
    BadName {
        /// Section index.
        section: u16,
    },
    /// A joint index is not below the skeleton's joint count.
    JointOutOfRange {
        /// Section index.
        section: u16,
    },
    /// A mesh names a skin that does not exist.
    SkinOutOfRange {
        /// Section index.
        section: u16,
    },
    /// A mesh palette entry is not below its skin's joint count, or a vertex joint is not below
    /// the palette length.
    PaletteOutOfRange {
        /// Section index.
        section: u16,
    },
    /// A mesh part declares 0 influences with a skin, influences without one, or more than
    /// [`MAX_INFLUENCES`].
    BadInfluences {
        /// Section index.
        section: u16,
    },
    /// A mesh part's index count is not a multiple of 3, or its index size is not 2 or 4.
    BadIndices {
        /// Section index.
        section: u16,
    },
    /// A triangle of a mesh part uses a vertex index that is not below the part's vertex count.
    IndexOutOfRange {
        /// Section index.
        section: u16,
        /// Part index within the mesh.
        part: u16,
        /// Triangle index within the part.
        triangle: u32,
        /// The vertex index found.
        vertex: u32,
    },
    /// A triangle of a mesh part uses one vertex twice (the baker drops such triangles).
    DegenerateTriangle {
        /// Section index.
        section: u16,
        /// Part index within the mesh.
        part: u16,
        /// Triangle index within the part.
        triangle: u32,
    },
    /// A skinned vertex has a negative weight.
    NegativeWeight {
        /// Section index.
        section: u16,
        /// Part index within the mesh.
        part: u16,
        /// Vertex index within the part.
        vertex: u32,
    },
    /// A skinned vertex has no weight: all of its weights are zero.
    ZeroWeights {
        /// Section index.
        section: u16,
        /// Part index within the mesh.
        part: u16,
        /// Vertex index within the part.
        vertex: u32,
    },
    /// An inverse bind matrix holds a NaN or infinite value.
    NonFiniteBind {
        /// Section index.
        section: u16,
        /// Skin joint whose matrix it is.
        joint: u16,
    },
    /// A clip track has an unknown target, interpolation or format, no keys, or a quantized
    /// cubic spline.
    BadTrack {
        /// Section index.
        section: u16,
        /// Track index within the clip.
        track: u16,
    },
    /// Two tracks of a clip animate the same joint property.
    DuplicateTrack {
        /// Section index.
        section: u16,
        /// Track index within the clip.
        track: u16,
    },
    /// Key times are not strictly increasing, or lie outside the clip's range.
    UnsortedKeys {
        /// Section index.
        section: u16,
        /// Track index within the clip.
        track: u16,
    },
    /// The clip's start is after its end.
    BadTimeRange {
        /// Section index.
        section: u16,
    },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Truncated => f.write_str("data ends early (truncated file)"),
            Self::BadMagic => f.write_str("not a .sinew file (bad magic bytes)"),
            Self::UnsupportedVersion { found } => {
                write!(f, "format version {found} is not supported (expected {VERSION})")
            }
            Self::LengthMismatch { declared } => {
                write!(f, "header declares {declared} bytes but the data length differs")
            }
            Self::ChecksumMismatch { stored, computed } => {
                write!(f, "checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): corrupt data")
            }
            Self::BadSection { section } => {
                write!(f, "section {section} lies outside the file, overlaps another, is out of order or has the wrong length")
            }
            Self::SectionOverrun { section } => {
                write!(f, "section {section} declares more data than it holds (a count runs past its end)")
            }
            Self::DuplicateSkeleton => f.write_str("more than one skeleton section"),
            Self::MissingSkeleton => f.write_str("skins or clips without a skeleton section"),
            Self::Skeleton(e) => write!(f, "invalid skeleton: {e}"),
            Self::NonFinite { section } => write!(f, "section {section} holds a NaN or infinite value"),
            Self::BadName { section } => write!(f, "section {section} holds a name that is not UTF-8 or too long"),
            Self::JointOutOfRange { section } => write!(f, "section {section} refers to a joint past the skeleton"),
            Self::SkinOutOfRange { section } => write!(f, "mesh section {section} refers to a missing skin"),
            Self::PaletteOutOfRange { section } => {
                write!(f, "mesh section {section} has a joint index past its palette")
            }
            Self::BadInfluences { section } => write!(f, "mesh section {section} has an invalid influence count"),
            Self::BadIndices { section } => {
                write!(f, "mesh section {section} has an index count that is not a multiple of 3 or a bad index size")
            }
            Self::IndexOutOfRange { section, part, triangle, vertex } => {
                write!(f, "mesh section {section}, part {part}: triangle {triangle}: vertex {vertex} is out of range")
            }
            Self::DegenerateTriangle { section, part, triangle } => {
                write!(f, "mesh section {section}, part {part}: triangle {triangle} uses a vertex twice")
            }
            Self::NegativeWeight { section, part, vertex } => {
                write!(f, "mesh section {section}, part {part}: vertex {vertex} has a negative weight")
            }
            Self::ZeroWeights { section, part, vertex } => {
                write!(f, "mesh section {section}, part {part}: vertex {vertex} has weights summing to 0")
            }
            Self::NonFiniteBind { section, joint } => {
                write!(f, "skin section {section}: the inverse bind matrix of skin joint {joint} is not finite")
            }
            Self::BadTrack { section, track } => {
                write!(f, "clip section {section}, track {track}: invalid track header")
            }
            Self::DuplicateTrack { section, track } => {
                write!(f, "clip section {section}, track {track}: a second track for the same joint property")
            }
            Self::UnsortedKeys { section, track } => {
                write!(f, "clip section {section}, track {track}: key times not strictly increasing within the clip")
            }
            Self::BadTimeRange { section } => write!(f, "clip section {section}: start is after end"),
        }
    }
}

impl core::error::Error for ParseError {}

/// Turns [`ParseError::Truncated`] from inside section `section` (the file and its table were
/// checked before) into [`ParseError::SectionOverrun`].
fn overrun(section: u16) -> impl Fn(ParseError) -> ParseError {
    move |e| if e == ParseError::Truncated { ParseError::SectionOverrun { section } } else { e }
}

/// A validated `.sinew` file, borrowing its bytes.
#[derive(Debug, Clone, Copy)]
pub struct Asset<'a> {
    data: &'a [u8],
    skeleton: Option<SkeletonData<'a>>,
    skins: KindRun,
    meshes: KindRun,
    clips: KindRun,
}

/// Where the sections of one kind are in the table: `count` consecutive entries from `first`.
#[derive(Debug, Clone, Copy, Default)]
struct KindRun {
    first: usize,
    count: usize,
}

impl KindRun {
    /// Adds table entry `i`; false when it does not directly follow this kind's last entry.
    fn push(&mut self, i: usize) -> bool {
        if self.count == 0 {
            self.first = i;
        } else if self.first + self.count != i {
            return false;
        }
        self.count += 1;
        true
    }
    /// Table index of the `n`-th section of this kind.
    fn index(&self, n: usize) -> Option<usize> {
        (n < self.count).then_some(self.first + n)
    }
}

impl<'a> Asset<'a> {
    /// Parses and validates a `.sinew` file. Runs in time linear in the file size (sections
    /// follow the table in table order without overlapping, so no byte is validated twice) and
    /// reads nothing outside `data`. Sections of one kind are consecutive in the table, so the
    /// `n`-th skin, mesh or clip is found in constant time.
    ///
    /// # Errors
    ///
    /// A [`ParseError`] naming the first problem found: truncation of the header or table
    /// ([`ParseError::Truncated`]), bad magic or version, length or checksum mismatch, a section
    /// out of bounds ([`ParseError::BadSection`]), a count inside a section that runs past it
    /// ([`ParseError::SectionOverrun`]), or invalid contents: NaN or infinite values, unsorted
    /// keys, joint, skin, palette or vertex indices out of range, negative or all-zero weights,
    /// triangles that repeat a vertex, a skeleton that is not parents-first (see the variants).
    pub fn parse(data: &'a [u8]) -> Result<Self, ParseError> {
        let mut r = Reader::new(data);
        if r.array::<8>()? != MAGIC {
            return Err(ParseError::BadMagic);
        }
        let version = r.u16()?;
        if version != VERSION {
            return Err(ParseError::UnsupportedVersion { found: version });
        }
        let _flags = r.u16()?;
        let declared = r.u32()?;
        if declared as usize != data.len() {
            return Err(ParseError::LengthMismatch { declared });
        }
        let stored = r.u32()?;
        let computed = crc32(data.get(CRC_START..).unwrap_or(&[]));
        if stored != computed {
            return Err(ParseError::ChecksumMismatch { stored, computed });
        }
        let section_count = r.u32()? as usize;
        // The table must fit in the file.
        r.bytes(section_count.checked_mul(SECTION_ENTRY_LEN).ok_or(ParseError::Truncated)?)?;

        let empty = KindRun::default();
        let mut asset = Asset { data, skeleton: None, skins: empty, meshes: empty, clips: empty };
        // Bodies in table order, after the table, disjoint; each known kind in one run.
        let mut end = HEADER_LEN + section_count * SECTION_ENTRY_LEN;
        for i in 0..section_count {
            let bad = ParseError::BadSection { section: i as u16 };
            let (kind, off, len) = asset.entry(i).ok_or(bad)?;
            if off < end || asset.section_raw(i).is_none() {
                return Err(bad);
            }
            end = off + len;
            let grouped = match kind {
                KIND_SKIN => asset.skins.push(i),
                KIND_MESH => asset.meshes.push(i),
                KIND_CLIP => asset.clips.push(i),
                _ => true,
            };
            if !grouped {
                return Err(bad);
            }
        }
        for i in 0..section_count {
            let (kind, body) = asset.section_raw(i).ok_or(ParseError::BadSection { section: i as u16 })?;
            if kind == KIND_SKELETON {
                if asset.skeleton.is_some() {
                    return Err(ParseError::DuplicateSkeleton);
                }
                asset.skeleton = Some(SkeletonData::parse(body, i as u16).map_err(overrun(i as u16))?);
            }
        }
        let joints = asset.skeleton.map(|s| s.num_joints()).unwrap_or(0);
        for i in 0..section_count {
            let Some((kind, body)) = asset.section_raw(i) else { continue };
            let sec = i as u16;
            if kind == KIND_SKIN {
                if asset.skeleton.is_none() {
                    return Err(ParseError::MissingSkeleton);
                }
                SkinData::parse(body, sec, joints).map_err(overrun(sec))?;
            } else if kind == KIND_CLIP {
                if asset.skeleton.is_none() {
                    return Err(ParseError::MissingSkeleton);
                }
                Clip::parse(body, sec, joints).map_err(overrun(sec))?;
            }
        }
        for i in 0..section_count {
            let Some((kind, body)) = asset.section_raw(i) else { continue };
            if kind == KIND_MESH {
                MeshData::parse(body, i as u16, &asset, joints).map_err(overrun(i as u16))?;
            }
        }
        Ok(asset)
    }

    /// Re-opens bytes that [`Asset::parse`] accepted before (kept by the caller), reading only
    /// the header and section table: no checksum, no content validation, O(sections).
    ///
    /// On any other bytes it still never panics or reads out of bounds, but the values read may
    /// be meaningless. Returns `None` when the header or table is unreadable.
    #[must_use]
    pub fn reopen(data: &'a [u8]) -> Option<Self> {
        let mut r = Reader::new(data);
        if r.array::<8>().ok()? != MAGIC {
            return None;
        }
        r.bytes(12).ok()?;
        let section_count = r.u32().ok()? as usize;
        r.bytes(section_count.checked_mul(SECTION_ENTRY_LEN)?).ok()?;
        let empty = KindRun::default();
        let mut asset = Asset { data, skeleton: None, skins: empty, meshes: empty, clips: empty };
        for i in 0..section_count {
            let Some((kind, body)) = asset.section_raw(i) else { continue };
            match kind {
                KIND_SKELETON if asset.skeleton.is_none() => {
                    let joints = le_u16(body, 0) as usize;
                    asset.skeleton = Some(SkeletonData { body, joints });
                }
                // A kind that is not in one run keeps its first run (bytes `parse` rejected).
                KIND_SKIN => {
                    asset.skins.push(i);
                }
                KIND_MESH => {
                    asset.meshes.push(i);
                }
                KIND_CLIP => {
                    asset.clips.push(i);
                }
                _ => {}
            }
        }
        Some(asset)
    }

    /// The bytes of the whole file.
    #[must_use]
    pub fn bytes(&self) -> &'a [u8] {
        self.data
    }

    /// Table entry `i`: kind, offset and length.
    fn entry(&self, i: usize) -> Option<([u8; 4], usize, usize)> {
        let at = HEADER_LEN + i * SECTION_ENTRY_LEN;
        let e = self.data.get(at..at + SECTION_ENTRY_LEN)?;
        let kind = [e[0], e[1], e[2], e[3]];
        let off = u32::from_le_bytes([e[4], e[5], e[6], e[7]]) as usize;
        let len = u32::from_le_bytes([e[8], e[9], e[10], e[11]]) as usize;
        Some((kind, off, len))
    }

    fn section_raw(&self, i: usize) -> Option<([u8; 4], &'a [u8])> {
        let (kind, off, len) = self.entry(i)?;
        let body = self.data.get(off..off.checked_add(len)?)?;
        Some((kind, body))
    }

    fn nth_of_kind(&self, kind: [u8; 4], n: usize) -> Option<(u16, &'a [u8])> {
        let run = match kind {
            KIND_SKIN => self.skins,
            KIND_MESH => self.meshes,
            KIND_CLIP => self.clips,
            _ => return None,
        };
        let i = run.index(n)?;
        let (k, b) = self.section_raw(i)?;
        (k == kind).then_some((i as u16, b))
    }

    /// The skeleton, if the file has one.
    #[must_use]
    pub fn skeleton(&self) -> Option<SkeletonData<'a>> {
        self.skeleton
    }
    /// Number of skins.
    #[must_use]
    pub fn num_skins(&self) -> usize {
        self.skins.count
    }
    /// Skin `i`.
    #[must_use]
    pub fn skin(&self, i: usize) -> Option<SkinData<'a>> {
        let (_, b) = self.nth_of_kind(KIND_SKIN, i)?;
        SkinData::view(b)
    }
    /// Number of meshes.
    #[must_use]
    pub fn num_meshes(&self) -> usize {
        self.meshes.count
    }
    /// Mesh `i`.
    #[must_use]
    pub fn mesh(&self, i: usize) -> Option<MeshData<'a>> {
        let (_, b) = self.nth_of_kind(KIND_MESH, i)?;
        MeshData::view(b)
    }
    /// Number of clips.
    #[must_use]
    pub fn num_clips(&self) -> usize {
        self.clips.count
    }
    /// Clip `i`.
    #[must_use]
    pub fn clip(&self, i: usize) -> Option<Clip<'a>> {
        let (_, b) = self.nth_of_kind(KIND_CLIP, i)?;
        Clip::view(b)
    }
    /// The first clip called `name`.
    #[must_use]
    pub fn clip_by_name(&self, name: &str) -> Option<Clip<'a>> {
        (0..self.clips.count).filter_map(|i| self.clip(i)).find(|c| c.name() == name)
    }
}

/// The skeleton section of an asset.
#[derive(Debug, Clone, Copy)]
pub struct SkeletonData<'a> {
    body: &'a [u8],
    joints: usize,
}

impl<'a> SkeletonData<'a> {
    fn parse(body: &'a [u8], sec: u16) -> Result<Self, ParseError> {
        let mut r = Reader::for_section(body, sec);
        let n = r.u16()? as usize;
        if n > MAX_JOINTS {
            return Err(ParseError::Skeleton(SkeletonError::TooManyJoints { count: n, capacity: MAX_JOINTS }));
        }
        let parents = r.bytes(n * 2)?;
        let parent = |i: usize| le_u16(parents, i * 2) as i16;
        for i in 0..n {
            let p = parent(i);
            if p != NO_PARENT && (p < 0 || p as usize >= n) {
                return Err(ParseError::Skeleton(SkeletonError::ParentOutOfRange { joint: i as u16, parent: p }));
            }
            if p >= 0 && p as usize >= i {
                // Distinguish a cycle from an order error, walking at most n steps.
                let mut j = p;
                for _ in 0..=n {
                    if j < 0 {
                        break;
                    }
                    if j as usize == i {
                        return Err(ParseError::Skeleton(SkeletonError::Cycle { joint: i as u16 }));
                    }
                    j = parent(j as usize);
                }
                return Err(ParseError::Skeleton(SkeletonError::ParentAfterChild {
                    joint: i as u16,
                    parent: p as u16,
                }));
            }
        }
        // Rest values must be finite; unit rotations are checked when a Skeleton is built.
        for i in 0..n {
            for _ in 0..10 {
                r.finite_f32().map_err(|e| match e {
                    ParseError::Truncated => e,
                    _ => ParseError::Skeleton(SkeletonError::NonFiniteRest { joint: i as u16 }),
                })?;
            }
        }
        for i in 0..n {
            let s = r.str().map_err(|e| match e {
                ParseError::Truncated => ParseError::Truncated,
                _ => ParseError::BadName { section: sec },
            })?;
            if s.len() > MAX_NAME_LEN {
                return Err(ParseError::Skeleton(SkeletonError::NameTooLong { joint: i as u16 }));
            }
        }
        if r.pos() != body.len() {
            return Err(ParseError::BadSection { section: sec });
        }
        // Duplicate names (non-empty), quadratic in the joint count, once at load. Names are
        // walked with running offsets (looking each one up from the start would be cubic).
        let names = body.get(2 + n * 42..).unwrap_or(&[]);
        let name_at = |at: usize| {
            let len = names.get(at).copied().unwrap_or(0) as usize;
            names.get(at + 1..at + 1 + len).unwrap_or(&[])
        };
        let mut at_i = 0;
        for i in 0..n {
            let a = name_at(at_i);
            at_i += 1 + a.len();
            if a.is_empty() {
                continue;
            }
            let mut at_j = 0;
            for j in 0..i {
                let b = name_at(at_j);
                at_j += 1 + b.len();
                if a == b {
                    return Err(ParseError::Skeleton(SkeletonError::DuplicateName {
                        joint: i as u16,
                        first: j as u16,
                    }));
                }
            }
        }
        Ok(SkeletonData { body, joints: n })
    }

    /// Number of joints.
    #[must_use]
    pub fn num_joints(&self) -> usize {
        self.joints
    }
    /// Parent of joint `i` ([`NO_PARENT`] for a root).
    #[must_use]
    pub fn parent(&self, i: usize) -> i16 {
        le_u16(self.body, 2 + i * 2) as i16
    }
    /// Rest transform of joint `i`.
    #[must_use]
    pub fn rest<R: Real>(&self, i: usize) -> Transform<R> {
        let at = 2 + self.joints * 2 + i * 40;
        let f = |k: usize| R::from_f32(le_f32(self.body, at + 4 * k));
        Transform {
            translation: Vec3::new(f(0), f(1), f(2)),
            rotation: crate::math::Quat::new(f(3), f(4), f(5), f(6)),
            scale: Vec3::new(f(7), f(8), f(9)),
        }
    }
    /// Name of joint `i`.
    #[must_use]
    pub fn name(&self, i: usize) -> Option<&'a str> {
        let mut at = 2 + self.joints * 42;
        let mut k = 0;
        loop {
            let len = *self.body.get(at)? as usize;
            let s = self.body.get(at + 1..at + 1 + len)?;
            if k == i {
                return core::str::from_utf8(s).ok();
            }
            at += 1 + len;
            k += 1;
        }
    }
    /// Builds an owned [`Skeleton`] with capacity `SOA × 4`.
    ///
    /// # Errors
    ///
    /// [`SkeletonError::TooManyJoints`] when the capacity is too small, and
    /// [`SkeletonError::NonUnitRotation`] for a rest rotation far from unit length; the other
    /// rules were checked by [`Asset::parse`].
    pub fn to_skeleton<R: Real, const SOA: usize>(&self) -> Result<Skeleton<R, SOA>, SkeletonError> {
        // Names are looked up by walking; keep a running offset to stay linear.
        let mut name_at = 2 + self.joints * 42;
        Skeleton::from_fn(self.joints, |i| {
            let len = self.body.get(name_at).copied().unwrap_or(0) as usize;
            let name = self.body.get(name_at + 1..name_at + 1 + len).and_then(|s| core::str::from_utf8(s).ok());
            name_at += 1 + len;
            (self.parent(i), self.rest(i), name.unwrap_or(""))
        })
    }
}

/// A skin section: skin joints and inverse bind matrices.
#[derive(Debug, Clone, Copy)]
pub struct SkinData<'a> {
    name: &'a str,
    joints: &'a [u8],
    inverse_bind: &'a [u8],
}

impl<'a> SkinData<'a> {
    fn parse(body: &'a [u8], sec: u16, skeleton_joints: usize) -> Result<SkinData<'a>, ParseError> {
        let mut r = Reader::for_section(body, sec);
        let name = r.str().map_err(|_| ParseError::BadName { section: sec })?;
        let n = r.u16()? as usize;
        let joints = r.bytes(n * 2)?;
        for i in 0..n {
            if le_u16(joints, i * 2) as usize >= skeleton_joints {
                return Err(ParseError::JointOutOfRange { section: sec });
            }
        }
        let ib = r.bytes(n * 64)?;
        for i in 0..n * 16 {
            if !reader::is_finite_bits(le_u32(ib, i * 4)) {
                return Err(ParseError::NonFiniteBind { section: sec, joint: (i / 16) as u16 });
            }
        }
        if r.pos() != body.len() {
            return Err(ParseError::BadSection { section: sec });
        }
        Ok(SkinData { name, joints, inverse_bind: ib })
    }
    fn view(body: &'a [u8]) -> Option<Self> {
        let mut r = Reader::new(body);
        let name = r.str().ok()?;
        let n = r.u16().ok()? as usize;
        let joints = r.bytes(n * 2).ok()?;
        let inverse_bind = r.bytes(n * 64).ok()?;
        Some(SkinData { name, joints, inverse_bind })
    }
    /// Skin name.
    #[must_use]
    pub fn name(&self) -> &'a str {
        self.name
    }
    /// Number of skin joints.
    #[must_use]
    pub fn num_joints(&self) -> usize {
        self.joints.len() / 2
    }
    /// Skeleton joint of skin joint `i`.
    #[must_use]
    pub fn joint(&self, i: usize) -> u16 {
        le_u16(self.joints, i * 2)
    }
    /// Inverse bind matrix of skin joint `i`.
    #[must_use]
    pub fn inverse_bind<R: Real>(&self, i: usize) -> Mat4<R> {
        let a: [R; 16] = core::array::from_fn(|k| R::from_f32(le_f32(self.inverse_bind, i * 64 + k * 4)));
        Mat4::from_cols_array(&a)
    }
}

/// A mesh section.
#[derive(Debug, Clone, Copy)]
pub struct MeshData<'a> {
    name: &'a str,
    skin: u16,
    node: u16,
    color: [u8; 4],
    parts: usize,
    parts_bytes: &'a [u8],
}

/// One part of a mesh: vertices, triangles and the palette they index.
#[derive(Debug, Clone, Copy)]
pub struct MeshPart<'a> {
    palette: &'a [u8],
    vertices: usize,
    influences: usize,
    positions: &'a [u8],
    normals: Option<&'a [u8]>,
    tangents: Option<&'a [u8]>,
    joints: &'a [u8],
    weights: &'a [u8],
    index_size: usize,
    indices: &'a [u8],
}

impl<'a> MeshPart<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self, ParseError> {
        let pl = r.u16()? as usize;
        let palette = r.bytes(pl * 2)?;
        let vertices = r.u32()? as usize;
        let influences = r.u8()? as usize;
        let attrs = r.u8()?;
        let v3 = vertices.checked_mul(12).ok_or(ParseError::Truncated)?;
        let positions = r.bytes(v3)?;
        let normals = if attrs & ATTR_NORMALS != 0 { Some(r.bytes(v3)?) } else { None };
        let tangents = if attrs & ATTR_TANGENTS != 0 {
            Some(r.bytes(vertices.checked_mul(16).ok_or(ParseError::Truncated)?)?)
        } else {
            None
        };
        let vk = vertices.checked_mul(influences).ok_or(ParseError::Truncated)?;
        let joints = r.bytes(vk.checked_mul(2).ok_or(ParseError::Truncated)?)?;
        let weights = r.bytes(vk.checked_mul(4).ok_or(ParseError::Truncated)?)?;
        let count = r.u32()? as usize;
        let index_size = r.u8()? as usize;
        let indices = r.bytes(count.checked_mul(index_size).ok_or(ParseError::Truncated)?)?;
        Ok(MeshPart {
            palette,
            vertices,
            influences,
            positions,
            normals,
            tangents,
            joints,
            weights,
            index_size,
            indices,
        })
    }
    /// Palette length (skin joints this part's vertices index).
    #[must_use]
    pub fn palette_len(&self) -> usize {
        self.palette.len() / 2
    }
    /// Skin joint of palette entry `i`.
    #[must_use]
    pub fn palette(&self, i: usize) -> u16 {
        le_u16(self.palette, i * 2)
    }
    /// Vertex count.
    #[must_use]
    pub fn num_vertices(&self) -> usize {
        self.vertices
    }
    /// Influences per vertex (0 for a rigid mesh).
    #[must_use]
    pub fn influences(&self) -> usize {
        self.influences
    }
    /// True when normals are stored.
    #[must_use]
    pub fn has_normals(&self) -> bool {
        self.normals.is_some()
    }
    /// True when tangents are stored.
    #[must_use]
    pub fn has_tangents(&self) -> bool {
        self.tangents.is_some()
    }
    /// Position of vertex `v`.
    #[must_use]
    pub fn position<R: Real>(&self, v: usize) -> Vec3<R> {
        read_vec3(self.positions, v)
    }
    /// Normal of vertex `v` (zero when absent).
    #[must_use]
    pub fn normal<R: Real>(&self, v: usize) -> Vec3<R> {
        self.normals.map(|n| read_vec3(n, v)).unwrap_or(Vec3::ZERO)
    }
    /// Tangent of vertex `v` (zero when absent).
    #[must_use]
    pub fn tangent<R: Real>(&self, v: usize) -> Vec4<R> {
        match self.tangents {
            Some(t) => {
                let f = |k: usize| R::from_f32(le_f32(t, v * 16 + k * 4));
                Vec4::new(f(0), f(1), f(2), f(3))
            }
            None => Vec4::ZERO,
        }
    }
    /// Palette index of influence `k` of vertex `v`.
    #[must_use]
    pub fn joint(&self, v: usize, k: usize) -> u16 {
        le_u16(self.joints, (v * self.influences + k) * 2)
    }
    /// Weight of influence `k` of vertex `v`.
    #[must_use]
    pub fn weight<R: Real>(&self, v: usize, k: usize) -> R {
        R::from_f32(le_f32(self.weights, (v * self.influences + k) * 4))
    }
    /// Number of triangle indices.
    #[must_use]
    pub fn num_indices(&self) -> usize {
        self.indices.len() / self.index_size.max(1)
    }
    /// Triangle index `i`.
    #[must_use]
    pub fn index(&self, i: usize) -> u32 {
        if self.index_size == 2 {
            le_u16(self.indices, i * 2) as u32
        } else {
            le_u32(self.indices, i * 4)
        }
    }
}

fn read_vec3<R: Real>(d: &[u8], v: usize) -> Vec3<R> {
    let f = |k: usize| R::from_f32(le_f32(d, v * 12 + k * 4));
    Vec3::new(f(0), f(1), f(2))
}

fn all_finite(d: &[u8]) -> bool {
    (0..d.len() / 4).all(|i| reader::is_finite_bits(le_u32(d, i * 4)))
}

impl<'a> MeshData<'a> {
    fn parse(body: &'a [u8], sec: u16, asset: &Asset<'a>, skeleton_joints: usize) -> Result<(), ParseError> {
        let m = Self::header(body).map_err(|e| {
            if e == ParseError::Truncated {
                e
            } else {
                ParseError::BadName { section: sec }
            }
        })?;
        let skin_joints = if m.skin == NONE {
            None
        } else {
            if m.skin as usize >= asset.skins.count {
                return Err(ParseError::SkinOutOfRange { section: sec });
            }
            asset.skin(m.skin as usize).map(|s| s.num_joints())
        };
        if m.node != NONE && m.node as usize >= skeleton_joints {
            return Err(ParseError::JointOutOfRange { section: sec });
        }
        let mut r = Reader::new(m.parts_bytes);
        for part in 0..m.parts {
            let part = part as u16;
            let p = MeshPart::read(&mut r)?;
            match skin_joints {
                Some(sj) => {
                    if p.influences == 0 || p.influences > MAX_INFLUENCES {
                        return Err(ParseError::BadInfluences { section: sec });
                    }
                    if (0..p.palette_len()).any(|i| p.palette(i) as usize >= sj) {
                        return Err(ParseError::PaletteOutOfRange { section: sec });
                    }
                    let pl = p.palette_len();
                    if (0..p.joints.len() / 2).any(|i| le_u16(p.joints, i * 2) as usize >= pl) {
                        return Err(ParseError::PaletteOutOfRange { section: sec });
                    }
                }
                None => {
                    if p.influences != 0 {
                        return Err(ParseError::BadInfluences { section: sec });
                    }
                }
            }
            if !(all_finite(p.positions)
                && p.normals.is_none_or(all_finite)
                && p.tangents.is_none_or(all_finite)
                && all_finite(p.weights))
            {
                return Err(ParseError::NonFinite { section: sec });
            }
            // Weights: none negative, and not all zero (checked on the bits: no float operation).
            let k = p.influences;
            for v in 0..if k > 0 { p.vertices } else { 0 } {
                let mut any = false;
                for i in 0..k {
                    let bits = le_u32(p.weights, (v * k + i) * 4);
                    let magnitude = bits & 0x7fff_ffff;
                    if magnitude != 0 && bits >> 31 != 0 {
                        return Err(ParseError::NegativeWeight { section: sec, part, vertex: v as u32 });
                    }
                    any |= magnitude != 0;
                }
                if !any {
                    return Err(ParseError::ZeroWeights { section: sec, part, vertex: v as u32 });
                }
            }
            if (p.index_size != 2 && p.index_size != 4) || p.num_indices() % 3 != 0 {
                return Err(ParseError::BadIndices { section: sec });
            }
            for t in 0..p.num_indices() / 3 {
                let tri = [p.index(t * 3), p.index(t * 3 + 1), p.index(t * 3 + 2)];
                if let Some(&vertex) = tri.iter().find(|&&i| i as usize >= p.vertices) {
                    return Err(ParseError::IndexOutOfRange { section: sec, part, triangle: t as u32, vertex });
                }
                if tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] {
                    return Err(ParseError::DegenerateTriangle { section: sec, part, triangle: t as u32 });
                }
            }
        }
        if r.pos() != m.parts_bytes.len() {
            return Err(ParseError::BadSection { section: sec });
        }
        Ok(())
    }
    fn header(body: &'a [u8]) -> Result<Self, ParseError> {
        let mut r = Reader::new(body);
        let name = r.str()?;
        let skin = r.u16()?;
        let node = r.u16()?;
        let color = r.array::<4>()?;
        let parts = r.u16()? as usize;
        let rest = r.pos();
        Ok(MeshData { name, skin, node, color, parts, parts_bytes: body.get(rest..).unwrap_or(&[]) })
    }
    fn view(body: &'a [u8]) -> Option<Self> {
        Self::header(body).ok()
    }
    /// Mesh name.
    #[must_use]
    pub fn name(&self) -> &'a str {
        self.name
    }
    /// Skin index, or `None` for a rigid mesh.
    #[must_use]
    pub fn skin(&self) -> Option<usize> {
        (self.skin != NONE).then_some(self.skin as usize)
    }
    /// Skeleton joint a rigid mesh follows, if any.
    #[must_use]
    pub fn node(&self) -> Option<usize> {
        (self.node != NONE).then_some(self.node as usize)
    }
    /// Base color, linear RGBA × 255.
    #[must_use]
    pub fn color(&self) -> [u8; 4] {
        self.color
    }
    /// Number of parts.
    #[must_use]
    pub fn num_parts(&self) -> usize {
        self.parts
    }
    /// The parts, in order.
    pub fn parts(&self) -> impl Iterator<Item = MeshPart<'a>> + 'a {
        let mut r = Reader::new(self.parts_bytes);
        let n = self.parts;
        (0..n).map_while(move |_| MeshPart::read(&mut r).ok())
    }
}

#[cfg(test)]
mod tests;
