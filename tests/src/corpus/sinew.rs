//! `.sinew` cases: [`SmallSinew`], a small asset written with the core's `Writer` and changed
//! field by field; the real CesiumMan bake ([`cesium_sinew`]) changed at its sections, parts,
//! tracks and header; and [`sinew_cases`], every hostile variant with the [`ParseError`] that
//! `Asset::parse` must give.

use std::sync::OnceLock;

use sinew::asset::format::*;
use sinew::asset::writer::Writer;
use sinew::asset::{crc32, Asset, ParseError};
use sinew::skeleton::SkeletonError;
use sinew_offline::bake::{bake, BakeOptions};
use sinew_offline::import::gltf;

use super::sinew_layout::{clip_tracks, mesh_parts, patched, put_index, reheader, section_of, sections};
use super::Category::*;
use super::{bob, gltf_asset, put_f32, put_u16, put_u32, read, u16_at, u32_at, Case, H, IDENTITY};

// ---------------------------------------------------------------------------------------------
// The small asset
// ---------------------------------------------------------------------------------------------

/// A small asset written with the core's writer: a 3-joint chain, one skin, one clip of four
/// tracks, a skinned mesh (section 3) and a rigid one following joint 2 (section 4).
///
/// The fields are written as they are; the `Option` counts, when set, are written in place of
/// the true count of what follows.
#[derive(Clone)]
pub struct SmallSinew {
    /// The skeleton's joint count (default: `parents.len()`).
    pub joint_count: Option<u16>,
    /// Each joint's parent, -1 for a root.
    pub parents: Vec<i16>,
    /// Each joint's rest transform: translation, rotation (x, y, z, w), scale.
    pub rest: Vec<[f32; 10]>,
    /// The skin's joints.
    pub skin_joints: Vec<u16>,
    /// The skin's joint count (default: `skin_joints.len()`).
    pub skin_count: Option<u16>,
    /// The skin's inverse bind matrices, column-major.
    pub bind: Vec<[f32; 16]>,
    /// The clip's start time.
    pub clip_start: f32,
    /// The clip's end time.
    pub clip_end: f32,
    /// The clip's track count (default: `tracks.len()`).
    pub track_count: Option<u16>,
    /// The clip's tracks.
    pub tracks: Vec<SmallTrack>,
    /// The skinned mesh's skin.
    pub mesh_skin: u16,
    /// The skinned mesh's part count (default: 1).
    pub part_count: Option<u16>,
    /// The part's palette (skin joint indices).
    pub palette: Vec<u16>,
    /// The palette's length (default: `palette.len()`).
    pub palette_len: Option<u16>,
    /// The part's vertex count (default: `positions.len()`).
    pub vertex_count: Option<u32>,
    /// Influences per vertex.
    pub influences: u8,
    /// Vertex positions.
    pub positions: Vec<[f32; 3]>,
    /// Vertex normals.
    pub normals: Vec<[f32; 3]>,
    /// `influences` palette indices per vertex.
    pub joints: Vec<u16>,
    /// `influences` weights per vertex.
    pub weights: Vec<f32>,
    /// The part's index count (default: `indices.len()`).
    pub index_count: Option<u32>,
    /// Bytes per index (2 or 4 are valid).
    pub index_size: u8,
    /// Triangle indices.
    pub indices: Vec<u32>,
    /// The joint the rigid mesh follows.
    pub rigid_node: u16,
    /// The skinned part's texture coordinates, if any.
    pub texcoords: Option<Vec<[f32; 2]>>,
    /// The skinned part's material.
    pub material: [u8; MATERIAL_LEN],
    /// A texture section's body after its name (section 5), if any.
    pub texture: Option<Vec<u8>>,
}

/// An untextured white material (repeat, linear).
pub const PLAIN_MATERIAL: [u8; MATERIAL_LEN] = [255, 255, 255, 255, 0xFF, 0xFF, 0, 0, 1, 1, 0, 0];
/// A material reading texture 0 (repeat, linear).
pub const TEXTURED_MATERIAL: [u8; MATERIAL_LEN] = [255, 255, 255, 255, 0, 0, 0, 0, 1, 1, 0, 0];

/// One track of [`SmallSinew`]'s clip: its directory entry and its key data.
#[derive(Clone)]
pub struct SmallTrack {
    /// The joint it animates.
    pub joint: u16,
    /// `TARGET_*`.
    pub target: u8,
    /// `INTERP_*`.
    pub interp: u8,
    /// `FORMAT_*`.
    pub format: u8,
    /// Key count.
    pub keys: u16,
    /// Key data ([`f32_keys`], [`quantized_rotations`], [`quantized_vec3`]).
    pub data: Vec<u8>,
}

/// Key data of a lossless track: times, then values.
pub fn f32_keys(times: &[f32], values: &[f32]) -> Vec<u8> {
    times.iter().chain(values).flat_map(|v| v.to_le_bytes()).collect()
}

/// Key data of a quantized rotation track.
pub fn quantized_rotations(times: &[u16], rotations: &[[f32; 4]]) -> Vec<u8> {
    let mut d: Vec<u8> = times.iter().flat_map(|t| t.to_le_bytes()).collect();
    rotations.iter().for_each(|q| d.extend(pack_rotation(*q)));
    d
}

/// Key data of a quantized translation or scale track.
pub fn quantized_vec3(times: &[u16], min: [f32; 3], scale: [f32; 3], keys: &[[u16; 3]]) -> Vec<u8> {
    let mut d: Vec<u8> = times.iter().flat_map(|t| t.to_le_bytes()).collect();
    min.iter().chain(&scale).for_each(|v| d.extend(v.to_le_bytes()));
    keys.iter().flatten().for_each(|q| d.extend(q.to_le_bytes()));
    d
}

/// Key data of a packed translation track of three keys on a grid of 2 frames (key `k` at frame
/// `k`), its values constant, each key moved by a sub-frame offset of `sub_bits` bits (stored
/// biased by `2^(sub_bits − 1)`) in units of `2^-sub_shift` frames.
pub fn packed_subframe_vec3(sub_bits: u8, sub_shift: u8, offsets: [u32; 3]) -> Vec<u8> {
    let mut d = vec![2, 0, 0, PACKED_FLAG_SUBFRAME, 0, 0, 0, sub_bits, sub_shift];
    [0.0f32, 0.5, 0.0].iter().for_each(|v| d.extend(v.to_le_bytes()));
    let record = |i: usize| u64::from(offsets[i]) & ((1u64 << sub_bits.min(32)) - 1);
    let bits = (0..3).fold(0u64, |acc, i| acc | (record(i) << (i * sub_bits as usize).min(63)));
    d.extend(bits.to_le_bytes().iter().take((3 * sub_bits as usize).div_ceil(8)));
    d
}

impl Default for SmallSinew {
    fn default() -> Self {
        Self::new()
    }
}

impl SmallSinew {
    /// The skeleton's section index.
    pub const SKEL: u16 = 0;
    /// The skin's section index.
    pub const SKIN: u16 = 1;
    /// The clip's section index.
    pub const CLIP: u16 = 2;
    /// The skinned mesh's section index.
    pub const MESH: u16 = 3;
    /// The rigid mesh's section index.
    pub const RIGID: u16 = 4;

    /// The valid base.
    pub fn new() -> Self {
        let rest = |y: f32| [0.0, y, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0];
        SmallSinew {
            joint_count: None,
            parents: vec![-1, 0, 1],
            rest: vec![rest(0.0), rest(1.0), rest(1.0)],
            skin_joints: vec![0, 1, 2],
            skin_count: None,
            bind: vec![IDENTITY; 3],
            clip_start: 0.0,
            clip_end: 1.0,
            track_count: None,
            tracks: vec![
                SmallTrack {
                    joint: 0,
                    target: TARGET_TRANSLATION,
                    interp: INTERP_LINEAR,
                    format: FORMAT_F32,
                    keys: 3,
                    data: f32_keys(&[0.0, 0.5, 1.0], &[0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0]),
                },
                SmallTrack {
                    joint: 1,
                    target: TARGET_ROTATION,
                    interp: INTERP_LINEAR,
                    format: FORMAT_QUANTIZED,
                    keys: 3,
                    data: quantized_rotations(
                        &[0, 32768, 65535],
                        &[[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.38268343, 0.9238795], [0.0, 0.0, H, H]],
                    ),
                },
                SmallTrack {
                    joint: 2,
                    target: TARGET_SCALE,
                    interp: INTERP_STEP,
                    format: FORMAT_QUANTIZED,
                    keys: 2,
                    data: quantized_vec3(&[0, 65535], [1.0; 3], [1.0; 3], &[[0; 3], [65535; 3]]),
                },
                SmallTrack {
                    joint: 1,
                    target: TARGET_TRANSLATION,
                    interp: INTERP_CUBIC,
                    format: FORMAT_F32,
                    keys: 2,
                    data: f32_keys(
                        &[0.0, 1.0],
                        &[
                            0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, //
                            1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0,
                        ],
                    ),
                },
            ],
            mesh_skin: 0,
            part_count: None,
            palette: vec![0, 1, 2],
            palette_len: None,
            vertex_count: None,
            influences: 2,
            positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]],
            normals: vec![[0.0, 0.0, 1.0]; 4],
            joints: vec![0, 1, 1, 2, 2, 0, 0, 0],
            weights: vec![0.5, 0.5, 1.0, 0.0, 0.25, 0.75, 1.0, 0.0],
            index_count: None,
            index_size: 2,
            indices: vec![0, 1, 2, 2, 1, 3],
            rigid_node: 2,
            texcoords: None,
            material: PLAIN_MATERIAL,
            texture: None,
        }
    }

    fn emit(&self, w: &mut Writer) {
        let table = w.begin_file(5 + u32::from(self.texture.is_some()));
        let s = w.len();
        w.u16(self.joint_count.unwrap_or(self.parents.len() as u16));
        self.parents.iter().for_each(|&p| w.i16(p));
        self.rest.iter().flatten().for_each(|&v| w.f32(v));
        for i in 0..self.parents.len() {
            w.str(&format!("joint{i}"));
        }
        w.section(table, 0, KIND_SKELETON, s);
        let s = w.len();
        w.str("skin");
        w.u16(self.skin_count.unwrap_or(self.skin_joints.len() as u16));
        self.skin_joints.iter().for_each(|&j| w.u16(j));
        self.bind.iter().flatten().for_each(|&v| w.f32(v));
        w.section(table, 1, KIND_SKIN, s);
        let s = w.len();
        w.str("clip");
        w.f32(self.clip_start);
        w.f32(self.clip_end);
        w.u16(self.track_count.unwrap_or(self.tracks.len() as u16));
        let dir = w.len();
        for _ in &self.tracks {
            w.bytes(&[0; TRACK_ENTRY_LEN]);
        }
        for (i, t) in self.tracks.iter().enumerate() {
            let off = (w.len() - s) as u32;
            w.bytes(&t.data);
            let mut e = [0u8; TRACK_ENTRY_LEN];
            e[..2].copy_from_slice(&t.joint.to_le_bytes());
            e[2] = t.target;
            e[3] = t.interp;
            e[4] = t.format;
            e[6..8].copy_from_slice(&t.keys.to_le_bytes());
            e[8..12].copy_from_slice(&off.to_le_bytes());
            w.patch_bytes(dir + i * TRACK_ENTRY_LEN, &e);
        }
        w.section(table, 2, KIND_CLIP, s);
        let s = w.len();
        w.str("body");
        w.u16(self.mesh_skin);
        w.u16(NONE);
        w.bytes(&[200, 180, 160, 255]);
        w.u16(self.part_count.unwrap_or(1));
        w.u16(self.palette_len.unwrap_or(self.palette.len() as u16));
        self.palette.iter().for_each(|&j| w.u16(j));
        w.u32(self.vertex_count.unwrap_or(self.positions.len() as u32));
        w.u8(self.influences);
        w.u8(ATTR_NORMALS | if self.texcoords.is_some() { ATTR_TEXCOORDS } else { 0 });
        self.positions.iter().chain(&self.normals).flatten().for_each(|&v| w.f32(v));
        self.joints.iter().for_each(|&j| w.u16(j));
        self.weights.iter().for_each(|&v| w.f32(v));
        w.u32(self.index_count.unwrap_or(self.indices.len() as u32));
        w.u8(self.index_size);
        for &i in &self.indices {
            match self.index_size {
                2 => w.u16(i as u16),
                _ => w.u32(i),
            }
        }
        if let Some(t) = &self.texcoords {
            t.iter().flatten().for_each(|&v| w.f32(v));
        }
        w.bytes(&self.material);
        w.section(table, 3, KIND_MESH, s);
        let s = w.len();
        w.str("prop");
        w.u16(NONE);
        w.u16(self.rigid_node);
        w.bytes(&[255; 4]);
        w.u16(1);
        w.u16(0);
        w.u32(3);
        w.u8(0);
        w.u8(0);
        [[0.0f32, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.1, 0.0]].iter().flatten().for_each(|&v| w.f32(v));
        w.u32(3);
        w.u8(2);
        [0u16, 1, 2].iter().for_each(|&i| w.u16(i));
        w.bytes(&PLAIN_MATERIAL);
        w.section(table, 4, KIND_MESH, s);
        if let Some(t) = &self.texture {
            let s = w.len();
            w.str("tex");
            w.bytes(t);
            w.section(table, 5, KIND_TEXTURE, s);
        }
        w.finish();
    }

    /// The file.
    pub fn bytes(&self) -> Vec<u8> {
        let mut w = Writer::new(&mut []);
        self.emit(&mut w);
        let mut buf = vec![0u8; w.len()];
        let mut w = Writer::new(&mut buf);
        self.emit(&mut w);
        assert!(!w.overflowed());
        buf
    }

    /// The file of the base changed by `f`.
    pub fn with(f: impl FnOnce(&mut SmallSinew)) -> Vec<u8> {
        let mut s = SmallSinew::new();
        f(&mut s);
        s.bytes()
    }
}

// ---------------------------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------------------------

/// The real `.sinew` base: CesiumMan baked with the default options (skeleton, skin, clip and
/// skinned mesh sections).
pub fn cesium_sinew() -> Vec<u8> {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES
        .get_or_init(|| {
            let rig = gltf::load_file(&gltf_asset("CesiumMan", "glb")).expect("CesiumMan imports");
            bake(&rig, &BakeOptions::default()).expect("CesiumMan bakes").0
        })
        .clone()
}

/// Every `.sinew` case: truncations, magic and version, checksums, counts, NaN and infinity, key
/// order, joint indices, weights, cycles and triangles, each with the exact [`ParseError`].
pub fn sinew_cases() -> Vec<Case<(), ParseError>> {
    type C = Case<(), ParseError>;
    let mut cases: Vec<C> = Vec::new();
    let real = cesium_sinew();
    let len = real.len();
    let secs = sections(&real);
    let skel = section_of(&real, KIND_SKELETON);
    let skin = section_of(&real, KIND_SKIN);
    let clip = section_of(&real, KIND_CLIP);
    let mesh = section_of(&real, KIND_MESH);
    let joints = u16_at(&real, skel.off) as usize;
    let skin_count_at = skin.off + 1 + real[skin.off] as usize;
    let skin_joints = u16_at(&real, skin_count_at) as usize;
    let (mesh_skin_at, part_count_at, parts) = mesh_parts(&real, mesh);
    let part = parts[0];
    let (clip_times_at, track_count_at, tracks) = clip_tracks(&real, clip);
    let crc = u32_at(&real, 16);
    assert!(Asset::parse(&real).is_ok());
    assert!(part.influences > 0 && part.count >= 30 && part.vertices > 20);

    // ---- truncation -----------------------------------------------------------------------
    // At every section's start and end: the header still declares the whole file; with the
    // header rewritten for the shorter data, the first section that no longer fits is named.
    let table_end = HEADER_LEN + secs.len() * SECTION_ENTRY_LEN;
    let mut cuts: Vec<(String, usize)> = vec![("header end".into(), HEADER_LEN), ("table end".into(), table_end)];
    for s in &secs {
        let kind = String::from_utf8_lossy(&s.kind).into_owned();
        cuts.push((format!("section {} ({kind}) start", s.index), s.off));
        if s.off + s.len < len {
            cuts.push((format!("section {} ({kind}) end", s.index), s.off + s.len));
        }
    }
    for (what, cut) in &cuts {
        cases.push(C::is(
            Truncated,
            format!("CesiumMan cut at {what} ({cut} bytes)"),
            real[..*cut].to_vec(),
            ParseError::LengthMismatch { declared: len as u32 },
        ));
        let want = match secs.iter().find(|s| s.off + s.len > *cut) {
            _ if *cut < table_end => ParseError::Truncated,
            Some(s) => ParseError::BadSection { section: s.index },
            None => unreachable!("a cut inside the file"),
        };
        cases.push(C::is(
            Truncated,
            format!("CesiumMan cut at {what} ({cut} bytes), header rewritten"),
            reheader(real[..*cut].to_vec()),
            want,
        ));
    }
    // At every byte of the small file.
    let small = SmallSinew::new().bytes();
    let small_secs = sections(&small);
    let small_table_end = HEADER_LEN + small_secs.len() * SECTION_ENTRY_LEN;
    for cut in 0..small.len() {
        let want =
            if cut < 16 { ParseError::Truncated } else { ParseError::LengthMismatch { declared: small.len() as u32 } };
        cases.push(C::is(Truncated, format!("small cut to {cut} bytes"), small[..cut].to_vec(), want));
        if cut >= CRC_START {
            let want = match small_secs.iter().find(|s| s.off + s.len > cut) {
                _ if cut < small_table_end => ParseError::Truncated,
                Some(s) => ParseError::BadSection { section: s.index },
                None => unreachable!(),
            };
            cases.push(C::is(
                Truncated,
                format!("small cut to {cut} bytes, header rewritten"),
                reheader(small[..cut].to_vec()),
                want,
            ));
        }
    }
    let mut longer = real.clone();
    longer.push(0);
    cases.push(C::is(
        Truncated,
        "one byte past the declared length",
        longer,
        ParseError::LengthMismatch { declared: len as u32 },
    ));
    cases.push(C::is(Truncated, "empty file", Vec::new(), ParseError::Truncated));

    // ---- magic and version ------------------------------------------------------------------
    for i in 0..MAGIC.len() {
        let mut b = real.clone();
        b[i] ^= 0x20;
        cases.push(C::is(Magic, format!("magic byte {i} changed"), b, ParseError::BadMagic));
    }
    cases.push(C::is(Magic, "a .glb file", read(&gltf_asset("RiggedSimple", "glb")), ParseError::BadMagic));
    cases.push(C::is(Magic, "an md5mesh file", read(&bob().0), ParseError::BadMagic));
    for v in [0u16, VERSION + 1, u16::MAX] {
        let mut b = real.clone();
        put_u16(&mut b, 8, v);
        cases.push(C::is(Version, format!("version {v}"), b, ParseError::UnsupportedVersion { found: v }));
    }

    // ---- checksum ---------------------------------------------------------------------------
    let flipped = |at: usize| {
        let mut b = real.clone();
        b[at] ^= 0x04;
        let computed = crc32(&b[CRC_START..]);
        (b, ParseError::ChecksumMismatch { stored: crc, computed })
    };
    for s in &secs {
        let (b, e) = flipped(s.off + s.len / 2);
        cases.push(C::is(Checksum, format!("a bit flipped in the middle of section {}", s.index), b, e));
    }
    let (b, e) = flipped(HEADER_LEN + 4);
    cases.push(C::is(Checksum, "a bit flipped in the section table", b, e));
    let (b, e) = flipped(20);
    cases.push(C::is(Checksum, "a bit flipped in the section count", b, e));
    let (b, e) = flipped(len - 1);
    cases.push(C::is(Checksum, "a bit flipped in the last byte", b, e));
    let mut b = real.clone();
    put_u32(&mut b, 16, crc ^ 1);
    cases.push(C::is(
        Checksum,
        "stored checksum changed",
        b,
        ParseError::ChecksumMismatch { stored: crc ^ 1, computed: crc },
    ));

    // ---- counts that overflow ---------------------------------------------------------------
    for n in [u32::MAX, 0x1555_5556] {
        // 0x1555_5556 table entries of 12 bytes wrap to 8 bytes in 32-bit arithmetic.
        cases.push(C::is(
            Counts,
            format!("section count {n:#x}"),
            patched(&real, |b| put_u32(b, 20, n)),
            ParseError::Truncated,
        ));
    }
    // One entry more: the table then reaches into the first section.
    cases.push(C::is(
        Counts,
        "section count one more than the sections",
        patched(&real, |b| put_u32(b, 20, secs.len() as u32 + 1)),
        ParseError::BadSection { section: 0 },
    ));
    for n in [u16::MAX, 1025] {
        cases.push(C::is(
            Counts,
            format!("skeleton joint count {n}"),
            patched(&real, |b| put_u16(b, skel.off, n)),
            ParseError::Skeleton(SkeletonError::TooManyJoints {
                count: n as usize,
                capacity: sinew::limits::MAX_JOINTS,
            }),
        ));
    }
    cases.push(C::is(
        Counts,
        "small skeleton declaring 1024 joints",
        SmallSinew::with(|s| s.joint_count = Some(1024)),
        ParseError::SectionOverrun { section: SmallSinew::SKEL },
    ));
    cases.push(C::is(
        Counts,
        "skin joint count 65535",
        patched(&real, |b| put_u16(b, skin_count_at, u16::MAX)),
        ParseError::SectionOverrun { section: skin.index },
    ));
    cases.push(C::is(
        Counts,
        "mesh part count 65535",
        patched(&real, |b| put_u16(b, part_count_at, u16::MAX)),
        ParseError::SectionOverrun { section: mesh.index },
    ));
    // Vertex counts whose byte sizes (×12, ×16, ×2k, ×4k) pass u32 (and wrap a 32-bit usize).
    for v in [u32::MAX, 0x1555_5556, 0x4000_0000, 0x2000_0000] {
        cases.push(C::is(
            Counts,
            format!("vertex count {v:#x}"),
            patched(&real, |b| put_u32(b, part.vertex_count, v)),
            ParseError::SectionOverrun { section: mesh.index },
        ));
    }
    cases.push(C::is(
        Counts,
        "index count 0xffffffff",
        patched(&real, |b| put_u32(b, part.index_count, u32::MAX)),
        ParseError::SectionOverrun { section: mesh.index },
    ));
    cases.push(C::is(
        Counts,
        "small palette length 65535",
        SmallSinew::with(|s| s.palette_len = Some(u16::MAX)),
        ParseError::SectionOverrun { section: SmallSinew::MESH },
    ));
    cases.push(C::is(
        Counts,
        "small vertex count 0x2000_0000 with 8 influences",
        SmallSinew::with(|s| {
            s.vertex_count = Some(0x2000_0000);
            s.influences = 8;
        }),
        ParseError::SectionOverrun { section: SmallSinew::MESH },
    ));
    cases.push(C::is(
        Counts,
        "clip track count 65535",
        patched(&real, |b| put_u16(b, track_count_at, u16::MAX)),
        ParseError::SectionOverrun { section: clip.index },
    ));
    cases.push(C::is(
        Counts,
        "small track count one more than the tracks",
        SmallSinew::with(|s| s.track_count = Some(5)),
        // The fifth entry is the first 12 bytes of track 0's keys: joint 0's translation again.
        ParseError::DuplicateTrack { section: SmallSinew::CLIP, track: 4 },
    ));
    // A track's key count past the section: its data lies outside the clip.
    cases.push(C::is(
        Counts,
        "track key count 65535",
        patched(&real, |b| put_u16(b, tracks[0].entry + 6, u16::MAX)),
        ParseError::BadSection { section: clip.index },
    ));
    cases.push(C::is(
        Counts,
        "small skin joint count 4 of 3",
        SmallSinew::with(|s| s.skin_count = Some(4)),
        ParseError::SectionOverrun { section: SmallSinew::SKIN },
    ));

    // ---- NaN and infinity -------------------------------------------------------------------
    let rest_at = |j: usize, k: usize| skel.off + 2 + 2 * joints + 40 * j + 4 * k;
    cases.push(C::is(
        NonFinite,
        "NaN rest translation of joint 3",
        patched(&real, |b| put_f32(b, rest_at(3, 1), f32::NAN)),
        ParseError::Skeleton(SkeletonError::NonFiniteRest { joint: 3 }),
    ));
    cases.push(C::is(
        NonFinite,
        "infinite rest scale of the last joint",
        patched(&real, |b| put_f32(b, rest_at(joints - 1, 9), f32::INFINITY)),
        ParseError::Skeleton(SkeletonError::NonFiniteRest { joint: joints as u16 - 1 }),
    ));
    cases.push(C::is(
        NonFinite,
        "NaN rest rotation of joint 0",
        patched(&real, |b| put_f32(b, rest_at(0, 6), f32::NAN)),
        ParseError::Skeleton(SkeletonError::NonFiniteRest { joint: 0 }),
    ));
    let bind_at = |j: usize, k: usize| skin.off + 1 + real[skin.off] as usize + 2 + 2 * skin_joints + 64 * j + 4 * k;
    for (j, k, v) in [(2, 12, f32::NAN), (0, 0, f32::NEG_INFINITY), (skin_joints - 1, 15, f32::INFINITY)] {
        cases.push(C::is(
            NonFinite,
            format!("inverse bind matrix {j} element {k} = {v}"),
            patched(&real, |b| put_f32(b, bind_at(j, k), v)),
            ParseError::NonFiniteBind { section: skin.index, joint: j as u16 },
        ));
    }
    let normals = part.normals.expect("CesiumMan has normals");
    for (what, at) in [
        ("position of vertex 7", part.positions + 7 * 12 + 4),
        ("normal of vertex 9", normals + 9 * 12),
        ("weight of vertex 11", part.weights + 11 * 4 * part.influences),
    ] {
        cases.push(C::is(
            NonFinite,
            format!("NaN {what}"),
            patched(&real, |b| put_f32(b, at, f32::NAN)),
            ParseError::NonFinite { section: mesh.index },
        ));
    }
    cases.push(C::is(
        NonFinite,
        "infinite clip start",
        patched(&real, |b| put_f32(b, clip_times_at, f32::NEG_INFINITY)),
        ParseError::NonFinite { section: clip.index },
    ));
    cases.push(C::is(
        NonFinite,
        "NaN clip end",
        patched(&real, |b| put_f32(b, clip_times_at + 4, f32::NAN)),
        ParseError::NonFinite { section: clip.index },
    ));
    let small_clip = |f: &dyn Fn(&mut SmallTrack)| SmallSinew::with(|s| f(&mut s.tracks[0]));
    cases.push(C::is(
        NonFinite,
        "small NaN key time",
        small_clip(&|t| t.data = f32_keys(&[0.0, f32::NAN, 1.0], &[0.0; 9])),
        ParseError::NonFinite { section: SmallSinew::CLIP },
    ));
    cases.push(C::is(
        NonFinite,
        "small infinite key value",
        small_clip(&|t| t.data = f32_keys(&[0.0, 0.5, 1.0], &[0.0, 0.0, 0.0, 0.0, f32::INFINITY, 0.0, 0.0, 0.0, 0.0])),
        ParseError::NonFinite { section: SmallSinew::CLIP },
    ));
    cases.push(C::is(
        NonFinite,
        "small NaN cubic tangent",
        SmallSinew::with(|s| {
            s.tracks[3].data = f32_keys(&[0.0, 1.0], &[f32::NAN; 18]);
        }),
        ParseError::NonFinite { section: SmallSinew::CLIP },
    ));
    cases.push(C::is(
        NonFinite,
        "small NaN quantization range",
        SmallSinew::with(|s| s.tracks[2].data = quantized_vec3(&[0, 65535], [f32::NAN; 3], [1.0; 3], &[[0; 3]; 2])),
        ParseError::NonFinite { section: SmallSinew::CLIP },
    ));

    // ---- key order --------------------------------------------------------------------------
    for (what, times) in
        [("decreasing", [0.0, 0.75, 0.5]), ("repeated", [0.0, 0.5, 0.5]), ("past the clip end", [0.0, 0.5, 1.5])]
    {
        cases.push(C::is(
            Unsorted,
            format!("small key times {what}"),
            small_clip(&|t| t.data = f32_keys(&times, &[0.0; 9])),
            ParseError::UnsortedKeys { section: SmallSinew::CLIP, track: 0 },
        ));
    }
    let packed_sub = |bits: u8, shift: u8, o: [u32; 3]| {
        small_clip(&|t| {
            t.format = FORMAT_PACKED;
            t.data = packed_subframe_vec3(bits, shift, o);
        })
    };
    cases.push(C::is(
        Counts,
        "small packed sub-frame offsets of width 0",
        packed_sub(0, 4, [0; 3]),
        ParseError::BadTrack { section: SmallSinew::CLIP, track: 0 },
    ));
    cases.push(C::is(
        Counts,
        "small packed translation with the smallest-three flag",
        small_clip(&|t| {
            t.format = FORMAT_PACKED;
            t.data = packed_subframe_vec3(4, 4, [8; 3]);
            t.data[3] |= PACKED_FLAG_LARGEST;
        }),
        ParseError::BadTrack { section: SmallSinew::CLIP, track: 0 },
    ));
    cases.push(C::is(
        Counts,
        "small packed sub-frames 2^17 per frame",
        packed_sub(4, 17, [8; 3]),
        ParseError::BadTrack { section: SmallSinew::CLIP, track: 0 },
    ));
    cases.push(C::is(
        Unsorted,
        "small packed sub-frame offset before the clip start",
        packed_sub(4, 4, [7, 8, 8]),
        ParseError::UnsortedKeys { section: SmallSinew::CLIP, track: 0 },
    ));
    cases.push(C::is(
        Unsorted,
        "small packed sub-frame offsets reordering keys",
        packed_sub(6, 4, [32, 56, 32 - 9]),
        ParseError::UnsortedKeys { section: SmallSinew::CLIP, track: 0 },
    ));
    cases.push(C::is(
        Unsorted,
        "small clip start after its end",
        SmallSinew::with(|s| s.clip_start = 2.0),
        ParseError::BadTimeRange { section: SmallSinew::CLIP },
    ));
    let (pi, p) = tracks
        .iter()
        .enumerate()
        .find(|(_, t)| t.format == FORMAT_PACKED && t.keys >= 3)
        .map(|(i, t)| (i as u16, *t))
        .expect("a packed track of 3 keys or more");
    cases.push(C::is(
        Unsorted,
        format!("packed track {pi}'s frame grid shrunk below its keys"),
        patched(&real, |b| put_u16(b, p.data, 1)),
        ParseError::UnsortedKeys { section: clip.index, track: pi },
    ));
    if let Some((qi, q)) = tracks
        .iter()
        .enumerate()
        .find(|(_, t)| t.format == FORMAT_QUANTIZED && t.keys >= 3)
        .map(|(i, t)| (i as u16, *t))
    {
        cases.push(C::is(
            Unsorted,
            format!("quantized key times of track {qi} swapped"),
            patched(&real, |b| {
                let (t1, t2) = (u16_at(b, q.data + 2), u16_at(b, q.data + 4));
                put_u16(b, q.data + 2, t2);
                put_u16(b, q.data + 4, t1);
            }),
            ParseError::UnsortedKeys { section: clip.index, track: qi },
        ));
        cases.push(C::is(
            Unsorted,
            format!("quantized key time of track {qi} repeated"),
            patched(&real, |b| {
                let t = u16_at(b, q.data + 2);
                put_u16(b, q.data + 4, t);
            }),
            ParseError::UnsortedKeys { section: clip.index, track: qi },
        ));
    }

    // ---- joint indices ----------------------------------------------------------------------
    for j in [joints as u16, u16::MAX] {
        cases.push(C::is(
            JointIndex,
            format!("track 0 on joint {j}"),
            patched(&real, |b| put_u16(b, tracks[0].entry, j)),
            ParseError::JointOutOfRange { section: clip.index },
        ));
        cases.push(C::is(
            JointIndex,
            format!("skin joint 3 = {j}"),
            patched(&real, |b| put_u16(b, skin_count_at + 2 + 2 * 3, j)),
            ParseError::JointOutOfRange { section: skin.index },
        ));
    }
    cases.push(C::is(
        JointIndex,
        "parent of joint 1 past the joints",
        patched(&real, |b| put_u16(b, skel.off + 2 + 2, joints as u16)),
        ParseError::Skeleton(SkeletonError::ParentOutOfRange { joint: 1, parent: joints as i16 }),
    ));
    cases.push(C::is(
        JointIndex,
        "parent of joint 2 = -2",
        patched(&real, |b| put_u16(b, skel.off + 2 + 4, (-2i16) as u16)),
        ParseError::Skeleton(SkeletonError::ParentOutOfRange { joint: 2, parent: -2 }),
    ));
    cases.push(C::is(
        JointIndex,
        "mesh skin 1 of 1",
        patched(&real, |b| put_u16(b, mesh_skin_at, 1)),
        ParseError::SkinOutOfRange { section: mesh.index },
    ));
    cases.push(C::is(
        JointIndex,
        "palette entry past the skin",
        patched(&real, |b| put_u16(b, part.palette, skin_joints as u16)),
        ParseError::PaletteOutOfRange { section: mesh.index },
    ));
    let palette_len = u16_at(&real, part.palette_len);
    cases.push(C::is(
        JointIndex,
        "vertex joint past the palette",
        patched(&real, |b| put_u16(b, part.joints + 2 * part.influences * 5, palette_len)),
        ParseError::PaletteOutOfRange { section: mesh.index },
    ));
    cases.push(C::is(
        JointIndex,
        "small rigid mesh following joint 3 of 3",
        SmallSinew::with(|s| s.rigid_node = 3),
        ParseError::JointOutOfRange { section: SmallSinew::RIGID },
    ));

    // ---- weights ----------------------------------------------------------------------------
    let k = part.influences;
    let weights_of = |v: usize, w: &[f32]| {
        patched(&real, |b| {
            for (i, &x) in w.iter().enumerate() {
                put_f32(b, part.weights + 4 * (v * k + i), x);
            }
        })
    };
    let negative = |vertex: u32| ParseError::NegativeWeight { section: mesh.index, part: 0, vertex };
    let zero = |vertex: u32| ParseError::ZeroWeights { section: mesh.index, part: 0, vertex };
    let mut w = vec![0.0f32; k];
    w[0] = 1.25;
    w[1] = -0.25;
    cases.push(C::is(Weights, "vertex 10 weights 1.25, -0.25", weights_of(10, &w), negative(10)));
    cases.push(C::is(Weights, "vertex 20 weights all zero", weights_of(20, &vec![0.0; k]), zero(20)));
    cases.push(C::is(Weights, "vertex 21 weights all -0", weights_of(21, &vec![-0.0; k]), zero(21)));
    let last = part.vertices as u32 - 1;
    cases.push(C::is(Weights, "last vertex weight -1", weights_of(last as usize, &[-1.0]), negative(last)));
    cases.push(C::is(
        Weights,
        "small vertex 2 weights all zero",
        SmallSinew::with(|s| s.weights[4..6].copy_from_slice(&[0.0, 0.0])),
        ParseError::ZeroWeights { section: SmallSinew::MESH, part: 0, vertex: 2 },
    ));
    cases.push(C::is(
        Weights,
        "small vertex 1 weights 1.5, -0.5",
        SmallSinew::with(|s| s.weights[2..4].copy_from_slice(&[1.5, -0.5])),
        ParseError::NegativeWeight { section: SmallSinew::MESH, part: 0, vertex: 1 },
    ));

    // ---- cycles -----------------------------------------------------------------------------
    let parent_at = |j: usize| skel.off + 2 + 2 * j;
    cases.push(C::is(
        Cycle,
        "joint 1 its own parent",
        patched(&real, |b| put_u16(b, parent_at(1), 1)),
        ParseError::Skeleton(SkeletonError::Cycle { joint: 1 }),
    ));
    cases.push(C::is(
        Cycle,
        "joints 4 and 5 each other's parent",
        patched(&real, |b| {
            put_u16(b, parent_at(4), 5);
            put_u16(b, parent_at(5), 4);
        }),
        ParseError::Skeleton(SkeletonError::Cycle { joint: 4 }),
    ));
    cases.push(C::is(
        Cycle,
        "small three-joint cycle 0 → 2 → 1 → 0",
        SmallSinew::with(|s| s.parents = vec![2, 0, 1]),
        ParseError::Skeleton(SkeletonError::Cycle { joint: 0 }),
    ));
    cases.push(C::is(
        Cycle,
        "small parent after its child (no cycle)",
        SmallSinew::with(|s| s.parents = vec![-1, 2, 0]),
        ParseError::Skeleton(SkeletonError::ParentAfterChild { joint: 1, parent: 2 }),
    ));

    // ---- triangles --------------------------------------------------------------------------
    let tri = |t: usize, a: u32, b2: u32, c: u32| {
        patched(&real, |b| {
            put_index(b, &part, 3 * t, a);
            put_index(b, &part, 3 * t + 1, b2);
            put_index(b, &part, 3 * t + 2, c);
        })
    };
    let n = part.vertices as u32;
    cases.push(C::is(
        Degenerate,
        "triangle 7 repeats a vertex",
        tri(7, 3, 3, 4),
        ParseError::DegenerateTriangle { section: mesh.index, part: 0, triangle: 7 },
    ));
    cases.push(C::is(
        Degenerate,
        "triangle 8 is one vertex",
        tri(8, 5, 5, 5),
        ParseError::DegenerateTriangle { section: mesh.index, part: 0, triangle: 8 },
    ));
    cases.push(C::is(
        Degenerate,
        "triangle 9 uses the vertex count",
        tri(9, 0, 1, n),
        ParseError::IndexOutOfRange { section: mesh.index, part: 0, triangle: 9, vertex: n },
    ));
    cases.push(C::is(
        Degenerate,
        "small index size 3",
        SmallSinew::with(|s| s.index_size = 3),
        ParseError::BadIndices { section: SmallSinew::MESH },
    ));
    cases.push(C::is(
        Degenerate,
        "small index count 5",
        SmallSinew::with(|s| {
            s.index_count = Some(5);
            s.indices.pop();
        }),
        ParseError::BadIndices { section: SmallSinew::MESH },
    ));
    cases.push(C::is(
        Degenerate,
        "small last triangle 1, 3, 1",
        SmallSinew::with(|s| s.indices[5] = 1),
        ParseError::DegenerateTriangle { section: SmallSinew::MESH, part: 0, triangle: 1 },
    ));
    cases.extend(texture_cases());
    cases.extend(super::graph::graph_cases());
    cases.extend(super::sinew_report::report_cases());

    cases
}

/// Textures and materials: texture sections with bad formats, flags, sizes or lengths, and
/// materials with bad codes, a texture without texture coordinates or past the textures.
fn texture_cases() -> Vec<Case<(), ParseError>> {
    type C = Case<(), ParseError>;
    const TEXR: u16 = 5;
    // A 2 × 1 RGBA8 texture read by the skinned part.
    let textured = |s: &mut SmallSinew| {
        s.texcoords = Some(vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]);
        s.material = TEXTURED_MATERIAL;
        s.texture = Some(vec![TEXEL_RGBA8, 0, 2, 0, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
    };
    let mut cases = Vec::new();
    let bad_texture = ParseError::BadTexture { section: TEXR };
    for (name, body) in [
        ("unknown texel format", vec![7, 0, 1, 0, 1, 0, 1, 2, 3, 4]),
        ("texture flags set", vec![TEXEL_RGBA8, 1, 1, 0, 1, 0, 1, 2, 3, 4]),
        ("texture 0 wide", vec![TEXEL_RGBA8, 0, 0, 0, 1, 0]),
        ("texture 4097 wide", vec![TEXEL_RGB565, 0, 0x01, 0x10, 1, 0, 0, 0]),
        ("texture 65535 × 65535", vec![TEXEL_RGBA8, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]),
        ("texture with a texel too many", vec![TEXEL_RGB565, 0, 1, 0, 1, 0, 1, 2, 3, 4]),
    ] {
        cases.push(C::is(
            Image,
            name,
            SmallSinew::with(|s| {
                textured(s);
                s.texture = Some(body);
            }),
            bad_texture,
        ));
    }
    cases.push(C::is(
        Image,
        "texture shorter than its size",
        SmallSinew::with(|s| {
            textured(s);
            s.texture = Some(vec![TEXEL_RGBA8, 0, 2, 0, 2, 0, 1, 2, 3, 4]);
        }),
        ParseError::SectionOverrun { section: TEXR },
    ));
    let bad_material = ParseError::BadMaterial { section: SmallSinew::MESH, part: 0 };
    for (at, v) in [(6, 3u8), (7, 200), (8, 2), (9, 6), (10, 1), (11, 1)] {
        let name = format!("material byte {at} = {v}");
        cases.push(C::is(
            Image,
            name,
            SmallSinew::with(|s| {
                textured(s);
                s.material[at] = v;
            }),
            bad_material,
        ));
    }
    cases.push(C::is(
        Image,
        "a texture without texture coordinates",
        SmallSinew::with(|s| {
            textured(s);
            s.texcoords = None;
        }),
        bad_material,
    ));
    cases.push(C::is(
        Image,
        "a material naming texture 1 of 1",
        SmallSinew::with(|s| {
            textured(s);
            s.material[4] = 1;
        }),
        ParseError::TextureOutOfRange { section: SmallSinew::MESH, part: 0, texture: 1 },
    ));
    cases.push(C::is(
        Image,
        "a material naming a texture in a file without textures",
        SmallSinew::with(|s| {
            textured(s);
            s.texture = None;
        }),
        ParseError::TextureOutOfRange { section: SmallSinew::MESH, part: 0, texture: 0 },
    ));
    cases.push(C::is(
        NonFinite,
        "NaN texture coordinate",
        SmallSinew::with(|s| {
            textured(s);
            s.texcoords = Some(vec![[0.0, f32::NAN], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]);
        }),
        ParseError::NonFinite { section: SmallSinew::MESH },
    ));
    cases
}
