//! Baked `.sinew` assets: parsed zero-copy from bytes (flash, `include_bytes!`, a file read by
//! the host), validated once, then read without further checks failing.
//!
//! [`Asset::parse`] checks the header, the checksum and every section (counts, ranges, finite
//! values, key order, index bounds, skin weights, triangles), so the views it hands out
//! ([`SkeletonData`], [`SkinData`], [`MeshData`], [`Clip`], [`TextureData`]) can be read
//! without errors. Data is
//! read with unaligned little-endian loads, so any byte alignment works. The layout is in
//! [`format`] (the layer below); each section kind has its file here, with its validation
//! and its view (`skeleton.rs`, `skin.rs`, `mesh.rs`, `texture.rs` with the parts' materials;
//! `clip.rs` validates clip sections, which [`crate::clip`] decodes; `morph.rs` validates the
//! morph-target and morph-weight sections, which [`crate::morph`] reads; `report.rs` holds
//! the optional clip-report sections, the baker's [`ClipReport`]s; `spring.rs` the optional
//! spring-bone section, [`SpringsData`]).

use crate::clip::Clip;
use crate::format::reader::{le_u16, le_u32, Reader};
use crate::format::*;
use crate::morph::{MorphTargets, WeightTracks};

mod clip;
mod graph;
mod graph_layers;
mod mesh;
mod morph;
mod report;
mod skeleton;
mod skin;
mod spring;
mod texture;
#[cfg(any(test, feature = "writer"))]
mod write;

// The byte layout's paths as other crates use them: `sinew::asset::format::*`,
// `sinew::asset::writer::Writer`, `sinew::asset::{crc32, ParseError}`.
#[cfg(any(test, feature = "writer"))]
pub use crate::format::writer;
pub use crate::format::{self, crc32, ParseError};
pub use graph::{GraphBuffers, GraphData};
pub use graph_layers::{GraphLayerData, LayerBuffers};
pub use mesh::{MeshData, MeshPart, PartBuffers, PartInputs, PartInputsLen};
pub use report::ClipReport;
pub use skeleton::SkeletonData;
pub use skin::SkinData;
#[cfg(any(test, feature = "writer"))]
pub use spring::{write_springs, SpringWriteError};
pub use spring::{SpringInfo, SpringsData, SpringsFillError};
pub use texture::{MaterialData, TextureData};
#[cfg(any(test, feature = "writer"))]
pub use write::{write_clip_report, write_graph, write_layered_graph};

/// Turns [`ParseError::Truncated`] from inside section `section` (the file and its table were
/// checked before) into [`ParseError::SectionOverrun`].
fn overrun(section: u16) -> impl Fn(ParseError) -> ParseError {
    move |e| if e == ParseError::Truncated { ParseError::SectionOverrun { section } } else { e }
}

/// Checks the `keys` f32 key times at the start of `data` (a track's, which holds them): finite
/// ([`ParseError::NonFinite`]), strictly increasing and inside `range` as ordered bits
/// ([`ParseError::UnsortedKeys`] naming `track`).
fn key_times(
    data: &[u8],
    keys: usize,
    range: core::ops::RangeInclusive<i32>,
    sec: u16,
    track: u16,
) -> Result<(), ParseError> {
    let mut prev = i32::MIN;
    for k in 0..keys {
        let b = le_u32(data, k * 4);
        if !format::reader::is_finite_bits(b) {
            return Err(ParseError::NonFinite { section: sec });
        }
        let o = format::reader::ordered_bits(b);
        if (k > 0 && o <= prev) || !range.contains(&o) {
            return Err(ParseError::UnsortedKeys { section: sec, track });
        }
        prev = o;
    }
    Ok(())
}

/// A validated `.sinew` file, borrowing its bytes.
#[derive(Debug, Clone, Copy)]
pub struct Asset<'a> {
    data: &'a [u8],
    skeleton: Option<SkeletonData<'a>>,
    skins: KindRun,
    meshes: KindRun,
    clips: KindRun,
    textures: KindRun,
    morphs: KindRun,
    weights: KindRun,
    graphs: KindRun,
    reports: KindRun,
    /// Table index of the spring-bone section.
    springs: Option<usize>,
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
    /// An asset over `data` with no section found yet (what `parse` and `reopen` fill in).
    fn unread(data: &'a [u8]) -> Self {
        let empty = KindRun::default();
        Asset {
            data,
            skeleton: None,
            skins: empty,
            meshes: empty,
            clips: empty,
            textures: empty,
            morphs: empty,
            weights: empty,
            graphs: empty,
            reports: empty,
            springs: None,
        }
    }

    /// Adds table entry `i`, of kind `kind`, to its kind's run ([`KindRun::push`]); false when
    /// it does not directly follow that kind's last entry. Kinds without runs (the skeleton,
    /// unknown kinds) are left alone: true.
    fn group(&mut self, kind: [u8; 4], i: usize) -> bool {
        let run = match kind {
            KIND_SKIN => &mut self.skins,
            KIND_MESH => &mut self.meshes,
            KIND_CLIP => &mut self.clips,
            KIND_TEXTURE => &mut self.textures,
            KIND_MORPH => &mut self.morphs,
            KIND_WEIGHTS => &mut self.weights,
            KIND_GRAPH => &mut self.graphs,
            KIND_CLIP_REPORT => &mut self.reports,
            _ => return true,
        };
        run.push(i)
    }

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
    /// triangles that repeat a vertex, a skeleton that is not parents-first, a second
    /// spring-bone section ([`ParseError::DuplicateSprings`]) or a bad record in one
    /// ([`ParseError::BadSprings`]) (see the variants).
    ///
    /// # Examples
    ///
    /// Parse a baked file, then read its skeleton, clips and meshes in place:
    ///
    /// ```
    /// use sinew::asset::Asset;
    /// use sinew::skeleton::Skeleton;
    ///
    /// let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));
    /// let asset = Asset::parse(bytes)?;
    ///
    /// // The skeleton, as an owned `Skeleton` with room for 6 × 4 joints.
    /// let skeleton: Skeleton<f32, 6> = asset.skeleton().ok_or("no skeleton")?.to_skeleton()?;
    /// assert_eq!(skeleton.num_joints(), 22);
    /// assert_eq!(skeleton.view().find("head"), Some(5));
    ///
    /// // Clips by name or index.
    /// let walk = asset.clip_by_name("walk").ok_or("no walk")?;
    /// assert_eq!((walk.start(), walk.end()), (0.0, 1.0));
    /// assert_eq!(asset.num_clips(), 2);
    ///
    /// // A skinned mesh: its parts hold the vertices, influences and triangles.
    /// let mesh = asset.mesh(0).ok_or("no mesh")?;
    /// assert_eq!(mesh.skin(), Some(0));
    /// let vertices: usize = mesh.parts().map(|part| part.num_vertices()).sum();
    /// assert_eq!(vertices, 126);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Damaged bytes are refused, here by the checksum:
    ///
    /// ```
    /// use sinew::asset::{Asset, ParseError};
    ///
    /// let mut bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew")).to_vec();
    /// let last = bytes.len() - 1;
    /// bytes[last] ^= 0xff;
    /// assert!(matches!(Asset::parse(&bytes), Err(ParseError::ChecksumMismatch { .. })));
    /// ```
    pub fn parse(data: &'a [u8]) -> Result<Self, ParseError> {
        Self::parse_checking::<true, true>(data)
    }

    /// Parses and validates a `.sinew` file as [`Asset::parse`] does, except the graph
    /// sections' records: each graph section's layout is checked (its name, its lists'
    /// counts within the limits and their records inside the section, its names, its layers'
    /// layout, every parameter's kind and default: a known kind, a finite float, a bool 0 or
    /// 1), which is all that [`GraphData`]'s names, counts and [`GraphData::parameter_kind`]
    /// read; its states, transitions, points and conditions are not held to the graph rules
    /// ([`LayeredGraph::validate`]).
    ///
    /// For a runtime that lists a file's graphs but runs none, it links none of the graph
    /// validation (the browser's module without state machines). Running such a graph stays
    /// safe: [`GraphData::to_graph`] and [`GraphLayerData`]'s `to_layered` check what they
    /// build by those rules, and the state machines check their graphs, so a graph that
    /// [`Asset::parse`] would refuse is refused there, with its [`GraphError`](crate::graph::GraphError).
    ///
    /// [`LayeredGraph::validate`]: crate::graph::LayeredGraph::validate
    ///
    /// # Errors
    ///
    /// What [`Asset::parse`] finds, but for a graph section's records: a graph section's
    /// layout gives [`ParseError::SectionOverrun`], [`ParseError::BadSection`] or
    /// [`ParseError::BadGraph`] (header or parameter), as it does there.
    pub fn parse_without_graph_rules(data: &'a [u8]) -> Result<Self, ParseError> {
        Self::parse_checking::<false, true>(data)
    }

    /// Parses and validates a `.sinew` file as [`Asset::parse_without_graph_rules`] does, except
    /// the sections of spring bones, clip reports, morph targets and morph weights: their
    /// contents are not checked (a spring-bone section still needs the skeleton and is one at
    /// most). They are listed as [`Asset::reopen`] lists sections: [`Asset::morph_targets`]
    /// says which meshes have targets, [`Asset::springs`] whether the file has spring bones,
    /// and what their views read is bounds-checked but may be meaningless.
    ///
    /// For a runtime that plays clips and lists graphs, but evaluates no morph targets, runs no
    /// spring bones and reads no clip reports (the browser's module without them): it links
    /// none of those sections' validation. A runtime that reads them opens the file with
    /// [`Asset::parse`] or [`Asset::parse_without_graph_rules`], which check them.
    ///
    /// # Errors
    ///
    /// What [`Asset::parse_without_graph_rules`] finds in the other sections.
    pub fn parse_for_playback(data: &'a [u8]) -> Result<Self, ParseError> {
        Self::parse_checking::<false, false>(data)
    }

    /// [`Asset::parse`], holding graph sections to the graph rules when `GRAPH_RULES` is set
    /// and checking their layout only when not ([`Asset::parse_without_graph_rules`]), and
    /// leaving the contents of the spring-bone, clip-report, morph-target and morph-weight
    /// sections unchecked when `EVERY_SECTION` is not set ([`Asset::parse_for_playback`]).
    /// Inlined: a firmware image that calls only `parse` links the same code as if `parse`
    /// held this body.
    #[inline(always)]
    fn parse_checking<const GRAPH_RULES: bool, const EVERY_SECTION: bool>(data: &'a [u8]) -> Result<Self, ParseError> {
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

        let mut asset = Asset::unread(data);
        // Bodies in table order, after the table, disjoint; each known kind in one run.
        let mut end = HEADER_LEN + section_count * SECTION_ENTRY_LEN;
        for i in 0..section_count {
            let bad = ParseError::BadSection { section: i as u16 };
            let (kind, off, len) = asset.entry(i).ok_or(bad)?;
            if off < end || asset.section_raw(i).is_none() {
                return Err(bad);
            }
            end = off + len;
            if !asset.group(kind, i) {
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
                clip::parse(body, sec, joints).map_err(overrun(sec))?;
            } else if kind == KIND_TEXTURE {
                TextureData::parse(body, sec).map_err(overrun(sec))?;
            } else if kind == KIND_SPRINGS {
                let skeleton = asset.skeleton.ok_or(ParseError::MissingSkeleton)?;
                if asset.springs.is_some() {
                    return Err(ParseError::DuplicateSprings);
                }
                if EVERY_SECTION {
                    SpringsData::parse(body, sec, &skeleton).map_err(overrun(sec))?;
                }
                asset.springs = Some(i);
            }
        }
        for i in 0..section_count {
            let Some((kind, body)) = asset.section_raw(i) else { continue };
            if kind == KIND_MESH {
                MeshData::parse(body, i as u16, &asset, joints).map_err(overrun(i as u16))?;
            }
        }
        // Morph targets after the meshes they deform, weight tracks after both and the clips.
        let mut previous = None;
        for n in 0..if EVERY_SECTION { asset.morphs.count } else { 0 } {
            let i = asset.morphs.first + n;
            let (_, body) = asset.section_raw(i).ok_or(ParseError::BadSection { section: i as u16 })?;
            previous = Some(morph::parse_morph(body, i as u16, &asset, previous).map_err(overrun(i as u16))?);
        }
        let mut previous = None;
        for n in 0..if EVERY_SECTION { asset.weights.count } else { 0 } {
            let i = asset.weights.first + n;
            let (_, body) = asset.section_raw(i).ok_or(ParseError::BadSection { section: i as u16 })?;
            previous = Some(morph::parse_weights(body, i as u16, &asset, previous).map_err(overrun(i as u16))?);
        }
        for n in 0..asset.graphs.count {
            let i = asset.graphs.first + n;
            let (_, body) = asset.section_raw(i).ok_or(ParseError::BadSection { section: i as u16 })?;
            if GRAPH_RULES {
                GraphData::parse(body, i as u16, asset.clips.count, joints)
            } else {
                GraphData::parse_layout(body, i as u16)
            }
            .map_err(overrun(i as u16))?;
        }
        let mut previous = None;
        for n in 0..if EVERY_SECTION { asset.reports.count } else { 0 } {
            let i = asset.reports.first + n;
            let (_, body) = asset.section_raw(i).ok_or(ParseError::BadSection { section: i as u16 })?;
            previous = Some(report::parse(body, i as u16, &asset, joints, previous)?);
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
        let mut asset = Asset::unread(data);
        for i in 0..section_count {
            let Some((kind, body)) = asset.section_raw(i) else { continue };
            if kind == KIND_SKELETON && asset.skeleton.is_none() {
                asset.skeleton = Some(SkeletonData::view(body));
            }
            if kind == KIND_SPRINGS && asset.springs.is_none() {
                asset.springs = Some(i);
            }
            // A kind that is not in one run keeps its first run (bytes `parse` rejected).
            asset.group(kind, i);
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
            KIND_TEXTURE => self.textures,
            KIND_GRAPH => self.graphs,
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
    /// Number of textures.
    #[must_use]
    pub fn num_textures(&self) -> usize {
        self.textures.count
    }
    /// Texture `i` (what a mesh part's [`MaterialData::texture`] names).
    #[must_use]
    pub fn texture(&self, i: usize) -> Option<TextureData<'a>> {
        let (_, b) = self.nth_of_kind(KIND_TEXTURE, i)?;
        TextureData::view(b)
    }
    /// Number of animation graphs.
    #[must_use]
    pub fn num_graphs(&self) -> usize {
        self.graphs.count
    }
    /// Animation graph `i` (its clip indices are this file's).
    #[must_use]
    pub fn graph(&self, i: usize) -> Option<GraphData<'a>> {
        let (_, b) = self.nth_of_kind(KIND_GRAPH, i)?;
        GraphData::view(b)
    }
    /// The first animation graph called `name`.
    #[must_use]
    pub fn graph_by_name(&self, name: &str) -> Option<GraphData<'a>> {
        (0..self.graphs.count).filter_map(|i| self.graph(i)).find(|g| g.name() == name)
    }
    /// The first clip called `name`.
    #[must_use]
    pub fn clip_by_name(&self, name: &str) -> Option<Clip<'a>> {
        (0..self.clips.count).filter_map(|i| self.clip(i)).find(|c| c.name() == name)
    }
    /// The body of the section of `run` whose first `u16` is `key` (such sections are in
    /// increasing key order): a binary search.
    fn find_keyed(&self, run: KindRun, kind: [u8; 4], key: usize) -> Option<&'a [u8]> {
        let (mut lo, mut hi) = (0, run.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (k, body) = self.section_raw(run.index(mid)?)?;
            if k != kind {
                return None;
            }
            let at = le_u16(body, 0) as usize;
            if at == key {
                return Some(body);
            } else if at < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        None
    }
    /// Number of meshes with morph targets.
    #[must_use]
    pub fn num_morphed_meshes(&self) -> usize {
        self.morphs.count
    }
    /// The morph targets of mesh `mesh` (`None` when it has none).
    #[must_use]
    pub fn morph_targets(&self, mesh: usize) -> Option<MorphTargets<'a>> {
        MorphTargets::header(self.find_keyed(self.morphs, KIND_MORPH, mesh)?).ok()
    }
    /// The baker's error report of clip `clip` (`None` when the file holds none for it: files
    /// baked without one, or written by other tools).
    #[must_use]
    pub fn clip_report(&self, clip: usize) -> Option<ClipReport> {
        ClipReport::read(self.find_keyed(self.reports, KIND_CLIP_REPORT, clip)?)
    }
    /// The spring bones (`None` when the file holds none): springs, spring joints in run
    /// order, colliders and the joint→collider table, read in place;
    /// [`SpringsData::fill`] copies them into the [`SpringBones`](crate::job::spring::SpringBones)
    /// of a [`SpringBoneJob`](crate::job::SpringBoneJob).
    #[must_use]
    pub fn springs(&self) -> Option<SpringsData<'a>> {
        match self.section_raw(self.springs?)? {
            (KIND_SPRINGS, body) => SpringsData::view(body),
            _ => None,
        }
    }
    /// The morph-weight tracks of clip `clip` (`None` when it animates no morph weights).
    #[must_use]
    pub fn morph_weights(&self, clip: usize) -> Option<WeightTracks<'a>> {
        WeightTracks::header(self.find_keyed(self.weights, KIND_WEIGHTS, clip)?).ok()
    }
}

#[cfg(test)]
mod tests;
