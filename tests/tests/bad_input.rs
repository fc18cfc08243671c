//! The bad-input corpus: every byte sinew reads may come from a stranger, so every input format
//! (`.sinew` through `Asset::parse`, glTF `.glb`/`.gltf` through the importer, md5mesh/md5anim)
//! is fed broken variants of a valid base — a real model from `../shared/assets`, or a small
//! asset written here with the core's `Writer` or the importers' own formats — and each must
//! give one specific typed error (the variant and, where they mean something, its fields: which
//! section, part, vertex, triangle, track, joint, key or line), never a panic.
//!
//! The categories: truncation (at every section boundary of a real file, at every byte of a
//! small one), wrong magic and version, checksum mismatch, counts that overflow (near
//! `u16::MAX` / `u32::MAX`, and products that wrap a 32-bit `usize`), NaN and infinite keys and
//! matrices, unsorted key times, joint indices at or past the joint count, weights that are
//! negative or sum to 0, cycles in hierarchies, and degenerate triangles (importers keep them,
//! the baker drops them, the `.sinew` parser rejects them).
//!
//! Then the `sinew` binary on a subset: one stderr line `sinew: <file>: <problem>` (the
//! problem being the library's message for that error) and exit code 2; a closed stdout
//! (`sinew info … | head -1`) ends the output quietly; the asset cache keeps what it loaded
//! when a later load fails; and the baker's work on a hostile-but-valid clip stays bounded.

mod common;
use common::sinew_bin;
use std::collections::{BTreeMap, HashSet};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, OnceLock};

use base64::Engine as _;
use sinew::asset::format::*;
use sinew::asset::writer::Writer;
use sinew::asset::{crc32, Asset, ParseError};
use sinew::skeleton::SkeletonError;
use sinew_pipeline::bake::{bake, BakeOptions, MAX_BAKE_WORK};
use sinew_pipeline::import::gltf::{self, GltfError, MAX_NODES, MIN_DECODE_BUDGET};
use sinew_pipeline::import::md5::{self, Location, Md5Error, Md5File, TokenKind};
use sinew_pipeline::import::{AssetCache, ImportError};
use sinew_pipeline::model::{Model, ModelError};
use sinew_pipeline::rig::Rig;

// ---------------------------------------------------------------------------------------------
// Files, the binary, scratch space
// ---------------------------------------------------------------------------------------------

fn assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/assets")
}

fn gltf_asset(model: &str, ext: &str) -> PathBuf {
    assets().join("gltf").join(model).join(format!("{model}.{ext}"))
}

fn bob() -> (PathBuf, PathBuf) {
    let dir = assets().join("md5/boblamp");
    (dir.join("boblampclean.md5mesh"), dir.join("boblampclean.md5anim"))
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn sinew(args: &[&str]) -> Output {
    Command::new(sinew_bin()).args(args).output().expect("sinew runs")
}

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sinew-bad-input-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write scratch file");
    path
}

fn p(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

// ---------------------------------------------------------------------------------------------
// The corpus runner
// ---------------------------------------------------------------------------------------------

/// What a case breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Category {
    Truncated,
    Magic,
    Version,
    Checksum,
    Counts,
    NonFinite,
    Unsorted,
    JointIndex,
    Weights,
    Cycle,
    Degenerate,
}

use Category::*;

/// The categories that apply to every format but `.sinew`'s checksum.
const ALL_BUT_CHECKSUM: [Category; 10] =
    [Truncated, Magic, Version, Counts, NonFinite, Unsorted, JointIndex, Weights, Cycle, Degenerate];

/// One bad input: its name, category, bytes (a second file for md5 anims) and the outcome it
/// must have, as a description and a predicate.
struct Case<T, E> {
    name: String,
    category: Category,
    bytes: Vec<u8>,
    second: Option<Vec<u8>>,
    want: String,
    check: Check<T, E>,
}

/// A predicate on a case's outcome.
type Check<T, E> = Box<dyn Fn(&Result<T, E>) -> bool>;

impl<T, E: PartialEq + std::fmt::Debug + 'static> Case<T, E> {
    /// A case that must fail with exactly `e`.
    fn is(category: Category, name: impl Into<String>, bytes: Vec<u8>, e: E) -> Self {
        let want = format!("{e:?}");
        Case {
            name: name.into(),
            category,
            bytes,
            second: None,
            want,
            check: Box::new(move |r| r.as_ref().err() == Some(&e)),
        }
    }
}

impl<T, E> Case<T, E> {
    /// A case whose outcome must satisfy `check` (described by `want`).
    fn matching(
        category: Category,
        name: impl Into<String>,
        bytes: Vec<u8>,
        want: impl Into<String>,
        check: impl Fn(&Result<T, E>) -> bool + 'static,
    ) -> Self {
        Case { name: name.into(), category, bytes, second: None, want: want.into(), check: Box::new(check) }
    }
    fn with_second(mut self, second: Vec<u8>) -> Self {
        self.second = Some(second);
        self
    }
}

/// Runs every case through `run` (a panic is a failure), checks the outcomes, the names'
/// uniqueness and that every category in `required` has cases. Returns the case count per
/// category. With `SINEW_CORPUS_VERBOSE` set, prints every case and its outcome.
fn run_corpus<T, E: std::fmt::Debug>(
    format: &str,
    cases: &[Case<T, E>],
    required: &[Category],
    run: impl Fn(&[u8], Option<&[u8]>) -> Result<T, E>,
) -> BTreeMap<Category, usize> {
    let mut failures = Vec::new();
    let mut names = HashSet::new();
    let mut counts = BTreeMap::new();
    let verbose = std::env::var_os("SINEW_CORPUS_VERBOSE").is_some();
    for c in cases {
        assert!(names.insert(c.name.as_str()), "{format}: duplicate case name {:?}", c.name);
        *counts.entry(c.category).or_insert(0) += 1;
        match panic::catch_unwind(AssertUnwindSafe(|| run(&c.bytes, c.second.as_deref()))) {
            Err(_) => failures.push(format!("{}: PANIC (want {})", c.name, c.want)),
            Ok(r) => {
                let got = match &r {
                    Ok(_) => "Ok".to_owned(),
                    Err(e) => format!("{e:?}"),
                };
                if verbose {
                    eprintln!("{format} [{:?}] {}: {got}", c.category, c.name);
                }
                if !(c.check)(&r) {
                    failures.push(format!("{}: got {got}, want {}", c.name, c.want));
                }
            }
        }
    }
    for cat in required {
        assert!(counts.contains_key(cat), "{format}: no case of category {cat:?}");
    }
    eprintln!("{format} corpus: {} cases {counts:?}", cases.len());
    assert!(
        failures.is_empty(),
        "{format}: {} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    counts
}

// ---------------------------------------------------------------------------------------------
// `.sinew`: helpers over raw bytes
// ---------------------------------------------------------------------------------------------

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn put_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}
fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
fn put_f32(b: &mut [u8], at: usize, v: f32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Rewrites the header's length and checksum for the bytes as they are.
fn reheader(mut b: Vec<u8>) -> Vec<u8> {
    let n = b.len() as u32;
    put_u32(&mut b, 12, n);
    let crc = crc32(&b[CRC_START..]);
    put_u32(&mut b, 16, crc);
    b
}

/// A copy of `base` changed by `f`, with a valid checksum (so the content checks are reached).
fn patched(base: &[u8], f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut b = base.to_vec();
    f(&mut b);
    reheader(b)
}

/// One section table entry.
#[derive(Debug, Clone, Copy)]
struct Section {
    index: u16,
    kind: [u8; 4],
    off: usize,
    len: usize,
}

fn sections(b: &[u8]) -> Vec<Section> {
    let n = u32_at(b, 20) as usize;
    (0..n)
        .map(|i| {
            let at = HEADER_LEN + i * SECTION_ENTRY_LEN;
            Section {
                index: i as u16,
                kind: [b[at], b[at + 1], b[at + 2], b[at + 3]],
                off: u32_at(b, at + 4) as usize,
                len: u32_at(b, at + 8) as usize,
            }
        })
        .collect()
}

fn section_of(b: &[u8], kind: [u8; 4]) -> Section {
    *sections(b).iter().find(|s| s.kind == kind).expect("section of that kind")
}

/// Where the fields of one mesh part are (absolute offsets).
#[derive(Debug, Clone, Copy)]
struct PartAt {
    palette_len: usize,
    palette: usize,
    vertex_count: usize,
    vertices: usize,
    influences: usize,
    positions: usize,
    normals: Option<usize>,
    joints: usize,
    weights: usize,
    index_count: usize,
    indices: usize,
    index_size: usize,
    count: usize,
}

/// The parts of a mesh section and where its skin index and part count are.
fn mesh_parts(b: &[u8], s: Section) -> (usize, usize, Vec<PartAt>) {
    let mut at = s.off;
    at += 1 + b[at] as usize;
    let skin = at;
    at += 2 + 2 + 4;
    let part_count = at;
    let parts = u16_at(b, at) as usize;
    at += 2;
    let mut out = Vec::new();
    for _ in 0..parts {
        let palette_len = at;
        let pl = u16_at(b, at) as usize;
        at += 2;
        let palette = at;
        at += 2 * pl;
        let vertex_count = at;
        let v = u32_at(b, at) as usize;
        at += 4;
        let k = b[at] as usize;
        let attrs = b[at + 1];
        at += 2;
        let positions = at;
        at += 12 * v;
        let normals = (attrs & ATTR_NORMALS != 0).then(|| {
            at += 12 * v;
            at - 12 * v
        });
        if attrs & ATTR_TANGENTS != 0 {
            at += 16 * v;
        }
        let joints = at;
        at += 2 * k * v;
        let weights = at;
        at += 4 * k * v;
        let index_count = at;
        let count = u32_at(b, at) as usize;
        let index_size = b[at + 4] as usize;
        at += 5;
        let indices = at;
        at += count * index_size;
        out.push(PartAt {
            palette_len,
            palette,
            vertex_count,
            vertices: v,
            influences: k,
            positions,
            normals,
            joints,
            weights,
            index_count,
            indices,
            index_size,
            count,
        });
    }
    (skin, part_count, out)
}

fn put_index(b: &mut [u8], part: &PartAt, i: usize, v: u32) {
    let at = part.indices + i * part.index_size;
    if part.index_size == 2 {
        put_u16(b, at, v as u16);
    } else {
        put_u32(b, at, v);
    }
}

/// One clip track directory entry (absolute offsets).
#[derive(Debug, Clone, Copy)]
struct TrackAt {
    entry: usize,
    format: u8,
    keys: usize,
    data: usize,
}

/// The start/end fields, track count field and tracks of a clip section.
fn clip_tracks(b: &[u8], s: Section) -> (usize, usize, Vec<TrackAt>) {
    let mut at = s.off;
    at += 1 + b[at] as usize;
    let times = at;
    at += 8;
    let count_at = at;
    let n = u16_at(b, at) as usize;
    at += 2;
    let tracks = (0..n)
        .map(|i| {
            let e = at + i * TRACK_ENTRY_LEN;
            TrackAt {
                entry: e,
                format: b[e + 4],
                keys: u16_at(b, e + 6) as usize,
                data: s.off + u32_at(b, e + 8) as usize,
            }
        })
        .collect();
    (times, count_at, tracks)
}

/// A small asset written with the core's writer: a 3-joint chain, one skin, one clip of four
/// tracks, a skinned mesh (section 3) and a rigid one following joint 2 (section 4).
#[derive(Clone)]
struct SmallSinew {
    joint_count: Option<u16>,
    parents: Vec<i16>,
    rest: Vec<[f32; 10]>,
    skin_joints: Vec<u16>,
    skin_count: Option<u16>,
    bind: Vec<[f32; 16]>,
    clip_start: f32,
    clip_end: f32,
    track_count: Option<u16>,
    tracks: Vec<SmallTrack>,
    mesh_skin: u16,
    part_count: Option<u16>,
    palette: Vec<u16>,
    palette_len: Option<u16>,
    vertex_count: Option<u32>,
    influences: u8,
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    joints: Vec<u16>,
    weights: Vec<f32>,
    index_count: Option<u32>,
    index_size: u8,
    indices: Vec<u32>,
    rigid_node: u16,
}

#[derive(Clone)]
struct SmallTrack {
    joint: u16,
    target: u8,
    interp: u8,
    format: u8,
    keys: u16,
    data: Vec<u8>,
}

/// Key data of a lossless track: times, then values.
fn f32_keys(times: &[f32], values: &[f32]) -> Vec<u8> {
    times.iter().chain(values).flat_map(|v| v.to_le_bytes()).collect()
}

/// Key data of a quantized rotation track.
fn quantized_rotations(times: &[u16], rotations: &[[f32; 4]]) -> Vec<u8> {
    let mut d: Vec<u8> = times.iter().flat_map(|t| t.to_le_bytes()).collect();
    rotations.iter().for_each(|q| d.extend(pack_rotation(*q)));
    d
}

/// Key data of a quantized translation or scale track.
fn quantized_vec3(times: &[u16], min: [f32; 3], scale: [f32; 3], keys: &[[u16; 3]]) -> Vec<u8> {
    let mut d: Vec<u8> = times.iter().flat_map(|t| t.to_le_bytes()).collect();
    min.iter().chain(&scale).for_each(|v| d.extend(v.to_le_bytes()));
    keys.iter().flatten().for_each(|q| d.extend(q.to_le_bytes()));
    d
}

const IDENTITY: [f32; 16] = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];
const H: f32 = std::f32::consts::FRAC_1_SQRT_2;

impl SmallSinew {
    const SKEL: u16 = 0;
    const SKIN: u16 = 1;
    const CLIP: u16 = 2;
    const MESH: u16 = 3;
    const RIGID: u16 = 4;

    fn new() -> Self {
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
        }
    }

    fn emit(&self, w: &mut Writer) {
        let table = w.begin_file(5);
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
        w.u8(ATTR_NORMALS);
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
        w.section(table, 4, KIND_MESH, s);
        w.finish();
    }

    fn bytes(&self) -> Vec<u8> {
        let mut w = Writer::new(&mut []);
        self.emit(&mut w);
        let mut buf = vec![0u8; w.len()];
        let mut w = Writer::new(&mut buf);
        self.emit(&mut w);
        assert!(!w.overflowed());
        buf
    }

    fn with(f: impl FnOnce(&mut SmallSinew)) -> Vec<u8> {
        let mut s = SmallSinew::new();
        f(&mut s);
        s.bytes()
    }
}

/// The real `.sinew` base: CesiumMan baked with the default options (skeleton, skin, clip and
/// skinned mesh sections).
fn cesium_sinew() -> Vec<u8> {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES
        .get_or_init(|| {
            let rig = gltf::load_file(&gltf_asset("CesiumMan", "glb")).expect("CesiumMan imports");
            bake(&rig, &BakeOptions::default()).expect("CesiumMan bakes").0
        })
        .clone()
}

fn sinew_cases() -> Vec<Case<(), ParseError>> {
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
    cases.push(C::is(
        Unsorted,
        "small clip start after its end",
        SmallSinew::with(|s| s.clip_start = 2.0),
        ParseError::BadTimeRange { section: SmallSinew::CLIP },
    ));
    let (qi, q) = tracks
        .iter()
        .enumerate()
        .find(|(_, t)| t.format == FORMAT_QUANTIZED && t.keys >= 3)
        .map(|(i, t)| (i as u16, *t))
        .expect("a quantized track of 3 keys or more");
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
    cases
}

#[test]
fn sinew_corpus() {
    assert!(Asset::parse(&SmallSinew::new().bytes()).is_ok(), "the small base is valid");
    let mut required = ALL_BUT_CHECKSUM.to_vec();
    required.push(Checksum);
    let counts = run_corpus("sinew", &sinew_cases(), &required, |b, _| Asset::parse(b).map(|_| ()));
    assert!(counts[&Truncated] > 1000, "{counts:?}");
}

// ---------------------------------------------------------------------------------------------
// glTF
// ---------------------------------------------------------------------------------------------

/// A small skinned, animated glTF: root → bone (the skin's two joints) and a skinned triangle
/// pair node, one LINEAR rotation channel on the bone. `edits` are text replacements applied
/// to the JSON (each must match).
#[derive(Clone)]
struct SmallGltf {
    nodes: String,
    scenes: String,
    positions: Vec<[f32; 3]>,
    joints: Vec<[u16; 4]>,
    weights: Vec<[f32; 4]>,
    indices: Vec<u16>,
    bind: Vec<[f32; 16]>,
    times: Vec<f32>,
    rotations: Vec<[f32; 4]>,
    edits: Vec<(String, String)>,
}

impl SmallGltf {
    fn new() -> Self {
        let mut down = IDENTITY;
        down[13] = -1.0;
        SmallGltf {
            nodes: r#"[{"name":"root","children":[1]},{"name":"bone","translation":[0,1,0]},
                       {"name":"body","mesh":0,"skin":0}]"#
                .into(),
            scenes: r#"[{"nodes":[0,2]}]"#.into(),
            positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]],
            joints: vec![[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0]],
            weights: vec![[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]],
            indices: vec![0, 1, 2, 2, 1, 3],
            bind: vec![IDENTITY, down],
            times: vec![0.0, 0.5, 1.0],
            rotations: vec![[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.38268343, 0.9238795], [0.0, 0.0, H, H]],
            edits: Vec::new(),
        }
    }

    fn edit(mut self, from: &str, to: &str) -> Self {
        self.edits.push((from.to_owned(), to.to_owned()));
        self
    }

    /// The binary buffer and its views (offset, length), 4-byte aligned.
    fn bin(&self) -> (Vec<u8>, Vec<(usize, usize)>) {
        let mut bin = Vec::new();
        let mut views = Vec::new();
        let mut push = |bytes: Vec<u8>| {
            while bin.len() % 4 != 0 {
                bin.push(0);
            }
            views.push((bin.len(), bytes.len()));
            bin.extend(bytes);
        };
        let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        push(f(&self.positions.concat()));
        push(self.joints.concat().iter().flat_map(|j| j.to_le_bytes()).collect());
        push(f(&self.weights.concat()));
        push(self.indices.iter().flat_map(|i| i.to_le_bytes()).collect());
        push(f(&self.bind.concat()));
        push(f(&self.times));
        push(f(&self.rotations.concat()));
        (bin, views)
    }

    fn json(&self, buffer: &str, views: &[(usize, usize)]) -> String {
        let views: Vec<String> =
            views.iter().map(|(o, l)| format!(r#"{{"buffer":0,"byteOffset":{o},"byteLength":{l}}}"#)).collect();
        let mut text = format!(
            r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":{scenes},"nodes":{nodes},
"skins":[{{"joints":[0,1],"inverseBindMatrices":4}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0,"JOINTS_0":1,"WEIGHTS_0":2}},"indices":3}}]}}],
"animations":[{{"channels":[{{"sampler":0,"target":{{"node":1,"path":"rotation"}}}}],
 "samplers":[{{"input":5,"output":6,"interpolation":"LINEAR"}}]}}],
"accessors":[
 {{"bufferView":0,"componentType":5126,"count":{nv},"type":"VEC3","min":[0,0,0],"max":[1,1,0]}},
 {{"bufferView":1,"componentType":5123,"count":{nj},"type":"VEC4"}},
 {{"bufferView":2,"componentType":5126,"count":{nw},"type":"VEC4"}},
 {{"bufferView":3,"componentType":5123,"count":{ni},"type":"SCALAR"}},
 {{"bufferView":4,"componentType":5126,"count":{nb},"type":"MAT4"}},
 {{"bufferView":5,"componentType":5126,"count":{nt},"type":"SCALAR"}},
 {{"bufferView":6,"componentType":5126,"count":{nr},"type":"VEC4"}}],
"bufferViews":[{views}],
"buffers":[{buffer}]}}"#,
            scenes = self.scenes,
            nodes = self.nodes,
            nv = self.positions.len(),
            nj = self.joints.len(),
            nw = self.weights.len(),
            ni = self.indices.len(),
            nb = self.bind.len(),
            nt = self.times.len(),
            nr = self.rotations.len(),
            views = views.join(","),
        );
        for (from, to) in &self.edits {
            assert!(text.contains(from.as_str()), "edit {from:?} does not match");
            text = text.replacen(from.as_str(), to, 1);
        }
        text
    }

    /// `.gltf` text with the buffer as a base64 `data:` URI.
    fn gltf(&self) -> Vec<u8> {
        let (bin, views) = self.bin();
        let data = base64::engine::general_purpose::STANDARD.encode(&bin);
        let buffer = format!(r#"{{"byteLength":{},"uri":"data:application/octet-stream;base64,{data}"}}"#, bin.len());
        self.json(&buffer, &views).into_bytes()
    }

    /// A GLB container.
    fn glb(&self) -> Vec<u8> {
        let (bin, views) = self.bin();
        glb_from(&self.json(&format!(r#"{{"byteLength":{}}}"#, bin.len()), &views), &bin)
    }
}

/// A GLB container of a JSON text and a BIN chunk (both padded to 4 bytes).
fn glb_from(json: &str, bin: &[u8]) -> Vec<u8> {
    let mut json = json.as_bytes().to_vec();
    while json.len() % 4 != 0 {
        json.push(b' ');
    }
    let mut bin = bin.to_vec();
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let total = 12 + 8 + json.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend(b"glTF");
    out.extend(2u32.to_le_bytes());
    out.extend((total as u32).to_le_bytes());
    out.extend((json.len() as u32).to_le_bytes());
    out.extend(b"JSON");
    out.extend(json);
    out.extend((bin.len() as u32).to_le_bytes());
    out.extend(b"BIN\0");
    out.extend(bin);
    out
}

/// The JSON of a GLB and where its BIN chunk's data starts.
fn glb_parts(glb: &[u8]) -> (serde_json::Value, usize) {
    let json_len = u32_at(glb, 12) as usize;
    let json = serde_json::from_slice(&glb[20..20 + json_len]).expect("GLB JSON");
    (json, 20 + json_len + 8)
}

/// A GLB with its JSON changed by `f` (the BIN chunk kept).
fn glb_json_edit(glb: &[u8], f: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let (mut json, bin_start) = glb_parts(glb);
    f(&mut json);
    glb_from(&json.to_string(), &glb[bin_start..])
}

/// Where accessor `a`'s first element is in a GLB.
fn accessor_at(json: &serde_json::Value, bin_start: usize, a: usize) -> usize {
    let acc = &json["accessors"][a];
    let view = &json["bufferViews"][acc["bufferView"].as_u64().expect("view") as usize];
    bin_start + view["byteOffset"].as_u64().unwrap_or(0) as usize + acc["byteOffset"].as_u64().unwrap_or(0) as usize
}

type GltfCase = Case<Rig, GltfError>;

/// A case whose error must match `pattern` (with its guard) — `GltfError` holds an I/O error,
/// so it has no `PartialEq`.
macro_rules! gltf_case {
    ($cat:expr, $name:expr, $bytes:expr, $pattern:pat $(if $guard:expr)?) => {
        GltfCase::matching($cat, $name, $bytes, stringify!($pattern $(if $guard)?), move |r| {
            matches!(r, Err($pattern) $(if $guard)?)
        })
    };
}

fn gltf_cases() -> Vec<GltfCase> {
    let mut cases = Vec::new();
    let small = SmallGltf::new();
    let text = small.gltf();
    let glb = small.glb();

    // ---- truncation -------------------------------------------------------------------------
    // A real GLB cut at its chunk boundaries and at every buffer view's start and end.
    let real = read(&gltf_asset("CesiumMan", "glb"));
    let len = real.len();
    let (json, bin_start) = glb_parts(&real);
    let json_end = bin_start - 8;
    let mut cuts = vec![12, 20, json_end, bin_start];
    for v in json["bufferViews"].as_array().expect("views") {
        let off = bin_start + v["byteOffset"].as_u64().unwrap_or(0) as usize;
        cuts.extend([off, off + v["byteLength"].as_u64().expect("length") as usize]);
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts.retain(|&c| c < len);
    let declared = json["buffers"][0]["byteLength"].as_u64().expect("byteLength") as usize;
    for &cut in &cuts {
        let msg = format!("truncated: the header says {len} bytes, there are {cut}");
        cases.push(gltf_case!(
            Truncated,
            format!("CesiumMan.glb cut at {cut}"),
            real[..cut].to_vec(),
            GltfError::Container(s) if *s == msg
        ));
        // The same cut with the container's lengths rewritten: the buffer is short.
        if cut > bin_start {
            let mut b = real[..cut].to_vec();
            put_u32(&mut b, 8, cut as u32);
            put_u32(&mut b, json_end, (cut - bin_start) as u32);
            let actual = cut - bin_start;
            cases.push(gltf_case!(
                Truncated,
                format!("CesiumMan.glb cut at {cut}, lengths rewritten"),
                b,
                GltfError::BufferTooShort { buffer: 0, declared: d, actual: a } if *d == declared && *a == actual
            ));
        }
    }
    let mut b = real[..json_end].to_vec();
    put_u32(&mut b, 8, json_end as u32);
    cases.push(gltf_case!(
        Truncated,
        "CesiumMan.glb without its BIN chunk",
        b,
        GltfError::MissingBuffer { buffer: 0, .. }
    ));
    // The small GLB and .gltf at every byte.
    let glb_len = glb.len();
    for cut in 0..glb_len {
        let bytes = glb[..cut].to_vec();
        if cut < 4 {
            cases.push(gltf_case!(Truncated, format!("small.glb cut to {cut}"), bytes, GltfError::Json(_)));
        } else if cut < 12 {
            let msg = format!("{cut} bytes is shorter than the 12-byte header");
            cases.push(
                gltf_case!(Truncated, format!("small.glb cut to {cut}"), bytes, GltfError::Container(s) if *s == msg),
            );
        } else {
            let msg = format!("truncated: the header says {glb_len} bytes, there are {cut}");
            cases.push(
                gltf_case!(Truncated, format!("small.glb cut to {cut}"), bytes, GltfError::Container(s) if *s == msg),
            );
        }
    }
    for cut in 0..text.len() {
        cases.push(gltf_case!(
            Truncated,
            format!("small.gltf cut to {cut}"),
            text[..cut].to_vec(),
            GltfError::Json(s) if s.contains("EOF")
        ));
    }
    // A real .gltf cut before each top-level member.
    let simple = read(&gltf_asset("SimpleSkin", "gltf"));
    let simple_text = String::from_utf8(simple.clone()).expect("UTF-8");
    for key in ["\"nodes\"", "\"meshes\"", "\"skins\"", "\"animations\"", "\"buffers\"", "\"accessors\"", "\"asset\""] {
        let cut = simple_text.find(key).expect("member");
        cases.push(gltf_case!(
            Truncated,
            format!("SimpleSkin.gltf cut before {key}"),
            simple[..cut].to_vec(),
            GltfError::Json(s) if s.contains("EOF")
        ));
    }
    // A base64 buffer shorter than its byteLength.
    let (bin, _) = small.bin();
    let full = base64::engine::general_purpose::STANDARD.encode(&bin);
    let short = base64::engine::general_purpose::STANDARD.encode(&bin[..bin.len() - 12]);
    let t = String::from_utf8(text.clone()).expect("UTF-8").replacen(&full, &short, 1);
    let (declared, actual) = (bin.len(), bin.len() - 12);
    cases.push(gltf_case!(
        Truncated,
        "small.gltf base64 buffer 12 bytes short",
        t.into_bytes(),
        GltfError::BufferTooShort { buffer: 0, declared: d, actual: a } if *d == declared && *a == actual
    ));

    // ---- magic and version ------------------------------------------------------------------
    for (i, to) in [(3, b'f'), (0, b'G')] {
        let mut b = glb.clone();
        b[i] = to;
        cases.push(gltf_case!(Magic, format!("small.glb magic byte {i} changed"), b, GltfError::Json(_)));
    }
    let mut b = real.clone();
    b[..4].copy_from_slice(b"GLTF");
    cases.push(gltf_case!(Magic, "CesiumMan.glb magic GLTF", b, GltfError::Json(_)));
    cases.push(gltf_case!(Magic, "a .sinew file", SmallSinew::new().bytes(), GltfError::Json(_)));
    for v in [0u32, 1, 3, u32::MAX] {
        let mut b = glb.clone();
        put_u32(&mut b, 4, v);
        let msg = format!("version {v}, only 2 is supported");
        cases.push(gltf_case!(Version, format!("GLB version {v}"), b, GltfError::Container(s) if *s == msg));
    }
    for v in ["1.0", "3.0", "2"] {
        let b = small.clone().edit(r#""version":"2.0""#, &format!(r#""version":"{v}""#)).gltf();
        let want = v.to_owned();
        cases.push(gltf_case!(
            Version,
            format!("asset version {v}"),
            b,
            GltfError::UnsupportedVersion { version } if *version == want
        ));
    }
    let b = small.clone().edit(r#""version":"2.0""#, r#""version":"2.0","minVersion":"2.1""#).gltf();
    cases.push(gltf_case!(
        Version,
        "asset minVersion 2.1",
        b,
        GltfError::UnsupportedVersion { version } if version == "2.1"
    ));

    // ---- counts -----------------------------------------------------------------------------
    for count in ["4294967295", "2147483648", "5"] {
        let b = small.clone().edit(r#""count":4,"type":"VEC3""#, &format!(r#""count":{count},"type":"VEC3""#)).gltf();
        cases.push(gltf_case!(
            Counts,
            format!("POSITION count {count}"),
            b,
            GltfError::AccessorOutOfBounds { accessor: 0, .. }
        ));
    }
    let b = small.clone().edit(r#""count":3,"type":"SCALAR""#, r#""count":4294967295,"type":"SCALAR""#).gltf();
    cases.push(gltf_case!(Counts, "key time count 0xffffffff", b, GltfError::AccessorOutOfBounds { accessor: 5, .. }));
    let b = small.clone().edit(r#""byteOffset":0,"byteLength":48"#, r#""byteOffset":0,"byteLength":4294967295"#).gltf();
    cases.push(gltf_case!(
        Counts,
        "buffer view length 0xffffffff",
        b,
        GltfError::AccessorOutOfBounds { accessor: 0, .. }
    ));
    let b =
        small.clone().edit(r#""byteOffset":0,"byteLength":48"#, r#""byteOffset":4294967292,"byteLength":48"#).gltf();
    cases.push(gltf_case!(
        Counts,
        "buffer view offset 0xfffffffc",
        b,
        GltfError::AccessorOutOfBounds { accessor: 0, .. }
    ));
    let (bin, _) = small.bin();
    let b = String::from_utf8(text.clone())
        .expect("UTF-8")
        .replacen(&format!(r#""byteLength":{}"#, bin.len()), r#""byteLength":4294967295"#, 1)
        .into_bytes();
    cases.push(gltf_case!(
        Counts,
        "buffer byteLength 0xffffffff",
        b,
        GltfError::BufferTooShort { buffer: 0, declared: 4294967295, .. }
    ));
    let b = small
        .clone()
        .edit(
            r#"{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}"#,
            r#"{"componentType":5126,"count":100000000,"type":"VEC3","min":[0,0,0],"max":[1,1,0],
                "sparse":{"count":1,"indices":{"bufferView":3,"componentType":5123},"values":{"bufferView":0}}}"#,
        )
        .gltf();
    cases.push(gltf_case!(
        Counts,
        "sparse POSITION of 100 million vertices",
        b,
        GltfError::TooLarge { accessor: 0, limit } if *limit == MIN_DECODE_BUDGET
    ));
    let mut nodes = String::from(r#"[{"name":"root","children":[1]},{"name":"bone"},{"mesh":0,"skin":0}"#);
    nodes.push_str(&",{}".repeat(MAX_NODES - 2));
    nodes.push(']');
    let many = SmallGltf { nodes, ..SmallGltf::new() }.gltf();
    cases.push(gltf_case!(
        Counts,
        "MAX_NODES + 1 nodes",
        many,
        GltfError::TooManyNodes { count, limit } if *count == MAX_NODES + 1 && *limit == MAX_NODES
    ));
    let mut b = glb.clone();
    put_u32(&mut b, 12, u32::MAX);
    cases.push(gltf_case!(Counts, "GLB JSON chunk length 0xffffffff", b, GltfError::Container(_)));
    let b = glb_json_edit(&real, |j| j["accessors"][3]["count"] = u32::MAX.into());
    cases.push(gltf_case!(
        Counts,
        "CesiumMan POSITION count 0xffffffff",
        b,
        GltfError::AccessorOutOfBounds { accessor: 3, .. }
    ));

    // ---- NaN and infinity -------------------------------------------------------------------
    let mut s = small.clone();
    s.positions[2][1] = f32::NAN;
    cases.push(gltf_case!(
        NonFinite,
        "NaN position",
        s.gltf(),
        GltfError::NonFinite { what } if what == "mesh 0 primitive 0 POSITION"
    ));
    let mut s = small.clone();
    s.times[1] = f32::NAN;
    cases.push(gltf_case!(
        NonFinite,
        "NaN key time",
        s.gltf(),
        GltfError::NonFinite { what } if what == "animation 0 channel 0 key time 1"
    ));
    let mut s = small.clone();
    s.rotations[2][3] = f32::INFINITY;
    cases.push(gltf_case!(
        NonFinite,
        "infinite key value",
        s.gltf(),
        GltfError::NonFinite { what } if what == "animation 0 channel 0 key values"
    ));
    let mut s = small.clone();
    s.bind[1][5] = f32::NAN;
    cases.push(gltf_case!(
        NonFinite,
        "NaN inverse bind matrix",
        s.gltf(),
        GltfError::NonFinite { what } if what == "skin 0 inverse bind matrix 1"
    ));
    let mut s = small.clone();
    s.weights[2][1] = f32::NAN;
    cases.push(gltf_case!(
        NonFinite,
        "NaN weight",
        s.gltf(),
        GltfError::NonFinite { what } if what == "mesh 0 primitive 0 vertex 2 weight"
    ));
    let b = small.clone().edit(r#""translation":[0,1,0]"#, r#""translation":[0,1e39,0]"#).gltf();
    cases.push(gltf_case!(
        NonFinite,
        "rest translation 1e39",
        b,
        GltfError::NonFinite { what } if what == "node 1 (bone) translation"
    ));
    let b =
        small.clone().edit(r#""translation":[0,1,0]"#, r#""matrix":[1,0,0,0, 0,1,0,0, 0,0,1,0, 0,-3e39,0,1]"#).gltf();
    cases.push(gltf_case!(
        NonFinite,
        "rest matrix with -3e39",
        b,
        GltfError::NonFinite { what } if what == "node 1 (bone) matrix"
    ));
    let (json, bin_start) = glb_parts(&real);
    let ibm = accessor_at(&json, bin_start, json["skins"][0]["inverseBindMatrices"].as_u64().expect("ibm") as usize);
    let mut b = real.clone();
    put_f32(&mut b, ibm + 64 * 4 + 4 * 14, f32::NAN);
    cases.push(gltf_case!(
        NonFinite,
        "CesiumMan NaN inverse bind matrix 4",
        b,
        GltfError::NonFinite { what } if what == "skin 0 inverse bind matrix 4"
    ));

    // ---- key order --------------------------------------------------------------------------
    for (what, times, key) in [
        ("decreasing", [0.0, 1.0, 0.5], 2),
        ("repeated", [0.0, 0.5, 0.5], 2),
        ("first after second", [0.5, 0.25, 1.0], 1),
    ] {
        let mut s = small.clone();
        s.times = times.to_vec();
        cases.push(gltf_case!(
            Unsorted,
            format!("key times {what}"),
            s.gltf(),
            GltfError::UnsortedKeyTimes { animation: 0, channel: 0, key: k } if *k == key
        ));
    }
    // CesiumMan: the key times of the first channel's sampler, keys 1 and 2 swapped.
    let input = json["animations"][0]["samplers"][0]["input"].as_u64().expect("input") as usize;
    let at = accessor_at(&json, bin_start, input);
    let mut b = real.clone();
    let (t1, t2) = (u32_at(&b, at + 4), u32_at(&b, at + 8));
    put_u32(&mut b, at + 4, t2);
    put_u32(&mut b, at + 8, t1);
    cases.push(gltf_case!(
        Unsorted,
        "CesiumMan key times 1 and 2 swapped",
        b,
        GltfError::UnsortedKeyTimes { animation: 0, channel: 0, key: 2 }
    ));

    // ---- joint indices ----------------------------------------------------------------------
    for joint in [2u16, u16::MAX] {
        let mut s = small.clone();
        s.joints[2] = [0, joint, 0, 0];
        cases.push(gltf_case!(
            JointIndex,
            format!("vertex 2 joint {joint} of 2"),
            s.gltf(),
            GltfError::BadIndex { what, index, limit: 2 }
                if what == "mesh 0 primitive 0 vertex 2 joint" && *index == joint as usize
        ));
    }
    let mut s = small.clone();
    s.indices[4] = 4;
    cases.push(gltf_case!(
        JointIndex,
        "triangle vertex 4 of 4",
        s.gltf(),
        GltfError::BadIndex { what, index: 4, limit: 4 } if what == "mesh 0 primitive 0 indices"
    ));
    let b = small.clone().edit(r#""joints":[0,1]"#, r#""joints":[0,7]"#).gltf();
    cases.push(gltf_case!(JointIndex, "skin joint node 7 of 3", b, GltfError::Schema(_)));
    let b = small.clone().edit(r#""target":{"node":1"#, r#""target":{"node":9"#).gltf();
    cases.push(gltf_case!(
        JointIndex,
        "channel target node 9 of 3",
        b,
        GltfError::Schema(s) if s == "animations[0].channels[0].target.node: node 9 does not exist"
    ));
    let weights = json["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_0"].as_u64().expect("weights") as usize;
    let joints_acc = json["meshes"][0]["primitives"][0]["attributes"]["JOINTS_0"].as_u64().expect("joints") as usize;
    let joint_count = json["skins"][0]["joints"].as_array().expect("joints").len();
    let jat = accessor_at(&json, bin_start, joints_acc);
    let wat = accessor_at(&json, bin_start, weights);
    let mut b = real.clone();
    let jstride = json["bufferViews"][json["accessors"][joints_acc]["bufferView"].as_u64().expect("view") as usize]
        ["byteStride"]
        .as_u64()
        .unwrap_or(8) as usize;
    put_u16(&mut b, jat + 9 * jstride, joint_count as u16);
    put_f32(&mut b, wat + 9 * 16, 1.0);
    cases.push(gltf_case!(
        JointIndex,
        "CesiumMan vertex 9 joint past the skin",
        b,
        GltfError::BadIndex { what, index, limit }
            if what == "mesh 0 primitive 0 vertex 9 joint" && *index == joint_count && *limit == joint_count
    ));

    // ---- weights ----------------------------------------------------------------------------
    let mut s = small.clone();
    s.weights[0] = [1.5, -0.5, 0.0, 0.0];
    cases.push(gltf_case!(
        Weights,
        "vertex 0 weights 1.5, -0.5",
        s.gltf(),
        GltfError::NegativeWeight { mesh: 0, primitive: 0, vertex: 0 }
    ));
    let mut s = small.clone();
    s.weights[3] = [0.0; 4];
    cases.push(gltf_case!(
        Weights,
        "vertex 3 weights all zero",
        s.gltf(),
        GltfError::ZeroWeights { mesh: 0, primitive: 0, vertex: 3 }
    ));
    let mut b = real.clone();
    for k in 0..4 {
        put_f32(&mut b, wat + 100 * 16 + 4 * k, 0.0);
    }
    cases.push(gltf_case!(
        Weights,
        "CesiumMan vertex 100 weights all zero",
        b,
        GltfError::ZeroWeights { mesh: 0, primitive: 0, vertex: 100 }
    ));
    let mut b = real.clone();
    put_f32(&mut b, wat + 200 * 16 + 4, -0.125);
    cases.push(gltf_case!(
        Weights,
        "CesiumMan vertex 200 negative weight",
        b,
        GltfError::NegativeWeight { mesh: 0, primitive: 0, vertex: 200 }
    ));
    // Weights summing to 2 are renormalized (with a note), not rejected.
    let mut s = small.clone();
    s.weights[2] = [1.0, 1.0, 0.0, 0.0];
    cases.push(GltfCase::matching(
        Weights,
        "vertex 2 weights summing to 2 (renormalized)",
        s.gltf(),
        "Ok, weights 0.5 and 0.5",
        |r| r.as_ref().is_ok_and(|rig| rig.meshes[0].primitives[0].joint_weights[8..10] == [0.5, 0.5]),
    ));

    // ---- hierarchy cycles -------------------------------------------------------------------
    let cyc =
        |nodes: &str, scenes: &str| SmallGltf { nodes: nodes.into(), scenes: scenes.into(), ..SmallGltf::new() }.gltf();
    cases.push(gltf_case!(
        Cycle,
        "nodes 0 and 1 each other's child",
        cyc(r#"[{"children":[1]},{"children":[0]},{"mesh":0,"skin":0}]"#, r#"[{"nodes":[2]}]"#),
        GltfError::HierarchyCycle { node: 0 }
    ));
    cases.push(gltf_case!(
        Cycle,
        "node 0 its own child",
        cyc(r#"[{"children":[0,1]},{},{"mesh":0,"skin":0}]"#, r#"[{"nodes":[2]}]"#),
        GltfError::HierarchyCycle { node: 0 }
    ));
    cases.push(gltf_case!(
        Cycle,
        "node 1 the child of two nodes",
        cyc(r#"[{"children":[1]},{},{"mesh":0,"skin":0,"children":[1]}]"#, r#"[{"nodes":[0,2]}]"#),
        GltfError::MultipleParents { node: 1 }
    ));
    cases.push(gltf_case!(
        Cycle,
        "scene root with a parent",
        cyc(r#"[{"children":[1]},{},{"mesh":0,"skin":0}]"#, r#"[{"nodes":[0,1,2]}]"#),
        GltfError::NotARoot { scene: 0, node: 1 }
    ));
    let b = glb_json_edit(&real, |j| {
        let children = j["nodes"][3]["children"].as_array_mut().expect("children");
        children.push(0.into());
    });
    cases.push(gltf_case!(Cycle, "CesiumMan root made a child of node 3", b, GltfError::HierarchyCycle { node: 0 }));

    // ---- degenerate triangles: kept by the importer -----------------------------------------
    let mut s = small.clone();
    s.indices = vec![0, 1, 2, 2, 2, 3];
    cases.push(GltfCase::matching(
        Degenerate,
        "triangle 1 repeats vertex 2 (kept)",
        s.gltf(),
        "Ok, indices as in the file",
        |r| r.as_ref().is_ok_and(|rig| rig.meshes[0].primitives[0].indices == [0, 1, 2, 2, 2, 3]),
    ));
    let strip = small.clone().edit(r#""indices":3}"#, r#""indices":3,"mode":5}"#).gltf();
    cases.push(GltfCase::matching(
        Degenerate,
        "triangle strip with a repeated index (kept)",
        strip,
        "Ok, 4 triangles",
        |r| r.as_ref().is_ok_and(|rig| rig.meshes[0].primitives[0].indices.len() == 12),
    ));
    cases
}

#[test]
fn gltf_corpus() {
    assert!(gltf::load_bytes(&SmallGltf::new().gltf(), None, "small").is_ok(), "the small base is valid");
    assert!(gltf::load_bytes(&SmallGltf::new().glb(), None, "small").is_ok(), "the small GLB is valid");
    let counts = run_corpus("glTF", &gltf_cases(), &ALL_BUT_CHECKSUM, |b, _| gltf::load_bytes(b, None, "case"));
    assert!(counts[&Truncated] > 1000, "{counts:?}");
}

// ---------------------------------------------------------------------------------------------
// md5mesh / md5anim
// ---------------------------------------------------------------------------------------------

/// A two-joint, two-triangle md5 mesh. Its strings hold no whitespace, so a cut at a
/// whitespace byte is always a cut between tokens.
const SMALL_MESH: &str = "MD5Version 10
commandline \"corpus\"

numJoints 2
numMeshes 1

joints {
\t\"root\"\t-1 ( 0 0 0 ) ( 0 0 0 )
\t\"arm\"\t0 ( 0 0 2 ) ( 0 0 0.7071068 )
}

mesh {
\tshader \"arm.tga\"
\tnumverts 4
\tvert 0 ( 0 0 ) 0 1
\tvert 1 ( 1 0 ) 1 1
\tvert 2 ( 0 1 ) 2 2
\tvert 3 ( 1 1 ) 4 1

\tnumtris 2
\ttri 0 0 2 1
\ttri 1 1 2 3

\tnumweights 5
\tweight 0 0 1 ( 0 0 0 )
\tweight 1 0 1 ( 1 0 0 )
\tweight 2 0 0.5 ( 0 1 0 )
\tweight 3 1 0.5 ( -1 0 -2 )
\tweight 4 1 1 ( 0 1 0 )
}
";

/// Three frames of its two joints: the root's x translation and the arm's rotation.
const SMALL_ANIM: &str = "MD5Version 10
commandline \"corpus\"

numFrames 3
numJoints 2
frameRate 24
numAnimatedComponents 4

hierarchy {
\t\"root\"\t-1 1 0
\t\"arm\"\t0 56 1
}

bounds {
\t( -1 -1 -1 ) ( 1 1 1 )
\t( -1 -1 -1 ) ( 1 1 1 )
\t( -1 -1 -1 ) ( 1 1 1 )
}

baseframe {
\t( 0 0 0 ) ( 0 0 0 )
\t( 0 0 2 ) ( 0 0 0.7071068 )
}

frame 0 {
\t0 0 0 0.7071068
}

frame 1 {
\t0.5 0 0.2 0.6
}

frame 2 {
\t1 0 0.4 0.5
}
";

type Md5Case = Case<Rig, Md5Error>;

/// The 1-based line of the first occurrence of `needle`.
fn line_of(text: &str, needle: &str) -> u32 {
    let at = text.find(needle).unwrap_or_else(|| panic!("{needle:?} not found"));
    text[..at].matches('\n').count() as u32 + 1
}

fn at(file: Md5File, line: u32) -> Location {
    Location { file, line }
}

/// `text` with the first `from` replaced (which must be there).
fn edited(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} not found");
    text.replacen(from, to, 1)
}

/// A mesh case: the mesh text (no anim) must fail with exactly `e`.
fn mesh_case(category: Category, name: &str, text: String, e: Md5Error) -> Md5Case {
    Md5Case::is(category, name, text.into_bytes(), e)
}

/// An anim case: the small mesh with the edited small anim.
fn anim_case(category: Category, name: &str, text: String, e: Md5Error) -> Md5Case {
    Md5Case::is(category, name, SMALL_MESH.as_bytes().to_vec(), e).with_second(text.into_bytes())
}

/// The keyword that is due when a file ends right before `line` (its first word, a closing
/// brace as the parser names it).
fn due(line: &str) -> Option<&'static str> {
    let word = line.split_whitespace().next()?;
    [
        "MD5Version",
        "commandline",
        "numJoints",
        "numMeshes",
        "joints",
        "mesh",
        "shader",
        "numverts",
        "numtris",
        "numweights",
        "numFrames",
        "frameRate",
        "numAnimatedComponents",
        "hierarchy",
        "bounds",
        "baseframe",
        "frame",
    ]
    .into_iter()
    .find(|k| *k == word)
    .or((word == "}").then_some("'}'"))
}

/// Cuts of `text` at the start of every line that begins a section (a keyword or a closing
/// brace), with what is due there (inside a frame block, its numbers or its closing brace).
fn section_cuts(text: &str) -> Vec<(usize, &'static str, u32)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_frame = false;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        if let Some(k) = due(line) {
            let k = if k == "'}'" && in_frame { "a frame component or '}'" } else { k };
            in_frame = k == "frame";
            out.push((start, k, n as u32 + 1));
        }
        start += line.len();
    }
    out
}

fn md5_cases() -> Vec<Md5Case> {
    use Md5File::{Anim, Mesh};
    let mut cases = Vec::new();
    let (bob_mesh_path, bob_anim_path) = bob();
    let bob_mesh = String::from_utf8(read(&bob_mesh_path)).expect("UTF-8");
    let bob_anim = String::from_utf8(read(&bob_anim_path)).expect("UTF-8");

    // ---- truncation -------------------------------------------------------------------------
    for (cut, k, line) in section_cuts(&bob_mesh) {
        cases.push(Md5Case::matching(
            Truncated,
            format!("Bob md5mesh cut before line {line} ({k})"),
            bob_mesh.as_bytes()[..cut].to_vec(),
            format!("UnexpectedEnd in the md5mesh, {k} due"),
            move |r| matches!(r, Err(Md5Error::UnexpectedEnd { at, expected }) if at.file == Mesh && *expected == k),
        ));
    }
    for (cut, k, line) in section_cuts(&bob_anim) {
        cases.push(
            Md5Case::matching(
                Truncated,
                format!("Bob md5anim cut before line {line} ({k})"),
                bob_mesh.as_bytes().to_vec(),
                format!("UnexpectedEnd in the md5anim, {k} due"),
                move |r| {
                    matches!(r, Err(Md5Error::UnexpectedEnd { at, expected }) if at.file == Anim && *expected == k)
                },
            )
            .with_second(bob_anim.as_bytes()[..cut].to_vec()),
        );
    }
    // The small files at every byte: at a token boundary the input ends where something is due;
    // inside a token the truncated token is wrong in its own way, but in the right file.
    for (file, text) in [(Mesh, SMALL_MESH), (Anim, SMALL_ANIM)] {
        let b = text.as_bytes();
        for cut in 0..b.len() {
            if b[cut..].iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let boundary = b[cut].is_ascii_whitespace() || cut == 0;
            let name = format!("small {file:?} cut to {cut} bytes");
            let want = if boundary { "UnexpectedEnd" } else { "an error in that file" };
            let case = Md5Case::matching(Truncated, name, b[..cut].to_vec(), want, move |r| match r {
                Err(Md5Error::UnexpectedEnd { at, .. }) => at.file == file,
                Err(e) => !boundary && e.location().file == file,
                Ok(_) => false,
            });
            cases.push(match file {
                Mesh => case,
                Anim => Md5Case { bytes: SMALL_MESH.as_bytes().to_vec(), ..case }.with_second(b[..cut].to_vec()),
            });
        }
    }

    // ---- magic and version ------------------------------------------------------------------
    cases.push(mesh_case(
        Magic,
        "MD5Version misspelt",
        edited(SMALL_MESH, "MD5Version", "MD5Versoin"),
        Md5Error::UnexpectedToken { at: at(Mesh, 1), expected: "MD5Version", found: TokenKind::Word },
    ));
    cases.push(mesh_case(
        Magic,
        "a glTF JSON text",
        String::from_utf8(SmallGltf::new().gltf()).expect("UTF-8"),
        Md5Error::UnexpectedToken { at: at(Mesh, 1), expected: "MD5Version", found: TokenKind::OpenBrace },
    ));
    cases.push(Md5Case::is(
        Magic,
        "a .glb file",
        read(&gltf_asset("RiggedSimple", "glb")),
        Md5Error::UnexpectedToken { at: at(Mesh, 1), expected: "MD5Version", found: TokenKind::Word },
    ));
    cases.push(anim_case(
        Magic,
        "anim without MD5Version",
        edited(SMALL_ANIM, "MD5Version 10\n", ""),
        Md5Error::UnexpectedToken { at: at(Anim, 1), expected: "MD5Version", found: TokenKind::Word },
    ));
    for v in [11i64, 9, -10, 0] {
        cases.push(mesh_case(
            Version,
            &format!("mesh version {v}"),
            edited(SMALL_MESH, "MD5Version 10", &format!("MD5Version {v}")),
            Md5Error::UnsupportedVersion { at: at(Mesh, 1), version: v },
        ));
    }
    cases.push(mesh_case(
        Version,
        "mesh version 99999999999999999999",
        edited(SMALL_MESH, "MD5Version 10", "MD5Version 99999999999999999999"),
        Md5Error::BadNumber { at: at(Mesh, 1), expected: "a version number" },
    ));
    cases.push(anim_case(
        Version,
        "anim version 6",
        edited(SMALL_ANIM, "MD5Version 10", "MD5Version 6"),
        Md5Error::UnsupportedVersion { at: at(Anim, 1), version: 6 },
    ));

    // ---- counts -----------------------------------------------------------------------------
    cases.push(mesh_case(
        Counts,
        "numJoints 65537",
        edited(SMALL_MESH, "numJoints 2", "numJoints 65537"),
        Md5Error::TooLarge { at: at(Mesh, 4), what: "numJoints", value: 65537, max: 65536 },
    ));
    cases.push(mesh_case(
        Counts,
        "numJoints past i64",
        edited(SMALL_MESH, "numJoints 2", "numJoints 99999999999999999999"),
        Md5Error::BadNumber { at: at(Mesh, 4), expected: "numJoints" },
    ));
    cases.push(mesh_case(
        Counts,
        "numJoints 0",
        edited(SMALL_MESH, "numJoints 2", "numJoints 0"),
        Md5Error::InvalidValue { at: at(Mesh, 4), what: "numJoints", requirement: "must be at least 1" },
    ));
    cases.push(mesh_case(
        Counts,
        "numverts 2^32",
        edited(SMALL_MESH, "numverts 4", "numverts 4294967296"),
        Md5Error::TooLarge { at: at(Mesh, 14), what: "numverts", value: 1 << 32, max: u32::MAX as u64 },
    ));
    let t = edited(SMALL_MESH, "numtris 2", "numtris 9223372036854775807");
    let line = line_of(&t, "numweights");
    cases.push(mesh_case(
        Counts,
        "numtris i64::MAX",
        t,
        Md5Error::CountMismatch { at: at(Mesh, line), what: "tri", declared: i64::MAX as usize, found: 2 },
    ));
    let t = edited(SMALL_MESH, "numweights 5", "numweights 3");
    let line = line_of(&t, "weight 3");
    cases.push(mesh_case(
        Counts,
        "numweights 3 of 5",
        t,
        Md5Error::CountMismatch { at: at(Mesh, line), what: "weight", declared: 3, found: 4 },
    ));
    cases.push(mesh_case(
        Counts,
        "numMeshes i64::MAX",
        edited(SMALL_MESH, "numMeshes 1", "numMeshes 9223372036854775807"),
        Md5Error::UnexpectedEnd { at: at(Mesh, 30), expected: "mesh" },
    ));
    let t = edited(SMALL_MESH, "( 0 1 ) 2 2", "( 0 1 ) 2 33");
    let line = line_of(&t, "vert 2");
    cases.push(mesh_case(
        Counts,
        "countWeight 33",
        t,
        Md5Error::TooLarge { at: at(Mesh, line), what: "countWeight", value: 33, max: 32 },
    ));
    let t = edited(SMALL_MESH, "( 1 0 ) 1 1", "( 1 0 ) 9223372036854775807 1");
    let line = line_of(&t, "vert 1");
    cases.push(mesh_case(
        Counts,
        "startWeight i64::MAX",
        t,
        Md5Error::IndexOutOfRange { at: at(Mesh, line), what: "vertex weight range", index: i64::MAX, limit: 5 },
    ));
    cases.push(anim_case(
        Counts,
        "numFrames × numJoints past the cap",
        edited(SMALL_ANIM, "numFrames 3", "numFrames 2097152"),
        Md5Error::TooLarge {
            at: at(Anim, 5),
            what: "numJoints × numFrames",
            value: 2 * 2097152,
            max: md5::MAX_JOINT_FRAMES as u64,
        },
    ));
    cases.push(anim_case(
        Counts,
        "numAnimatedComponents 2^32",
        edited(SMALL_ANIM, "numAnimatedComponents 4", "numAnimatedComponents 4294967296"),
        Md5Error::TooLarge { at: at(Anim, 7), what: "numAnimatedComponents", value: 1 << 32, max: u32::MAX as u64 },
    ));
    let t = edited(&bob_mesh, "numverts 494", "numverts 4294967295");
    let line = line_of(&t, "numtris 628");
    cases.push(mesh_case(
        Counts,
        "Bob numverts 0xffffffff",
        t,
        Md5Error::CountMismatch { at: at(Mesh, line), what: "vert", declared: u32::MAX as usize, found: 494 },
    ));

    // ---- NaN and infinity -------------------------------------------------------------------
    for (name, from, to, needle) in [
        ("joint position nan", "( 0 0 2 ) ( 0 0 0.7071068 )\n}", "( 0 nan 2 ) ( 0 0 0.7071068 )\n}", "\"arm\""),
        ("weight bias inf", "weight 2 0 0.5", "weight 2 0 inf", "weight 2"),
        ("weight position 1e39", "weight 4 1 1 ( 0 1 0 )", "weight 4 1 1 ( 0 1e39 0 )", "weight 4"),
    ] {
        let t = edited(SMALL_MESH, from, to);
        let line = line_of(&t, needle);
        cases.push(mesh_case(NonFinite, name, t, Md5Error::NonFinite { at: at(Mesh, line) }));
    }
    for (name, from, to, needle) in [
        ("frame value NaN", "0.5 0 0.2 0.6", "0.5 NaN 0.2 0.6", "0.5 NaN"),
        ("baseframe -inf", "( 0 0 0 ) ( 0 0 0 )\n\t( 0 0 2 )", "( 0 0 -inf ) ( 0 0 0 )\n\t( 0 0 2 )", "-inf"),
        ("frameRate inf", "frameRate 24", "frameRate inf", "frameRate"),
        ("bound 1e39", "( -1 -1 -1 ) ( 1 1 1 )", "( -1 -1 -1 ) ( 1 1e39 1 )", "1e39"),
    ] {
        let t = edited(SMALL_ANIM, from, to);
        let line = line_of(&t, needle);
        cases.push(anim_case(NonFinite, name, t, Md5Error::NonFinite { at: at(Anim, line) }));
    }
    let t = edited(SMALL_MESH, "( 0 0 0 ) ( 0 0 0 )\n", "( 0 0 -3e38 ) ( 0 0 0 )\n");
    let t = edited(&t, "( 0 0 2 ) ( 0 0 0.7071068 )", "( 0 0 3e38 ) ( 0 0 0.7071068 )");
    cases.push(mesh_case(
        NonFinite,
        "bind transforms that overflow f32",
        t,
        Md5Error::InvalidValue {
            at: at(Mesh, 9),
            what: "joint",
            requirement: "has a bind transform that overflows f32",
        },
    ));
    let t = edited(&bob_mesh, "( 11.004813 -3.177138 31.702473 )", "( 11.004813 nan 31.702473 )");
    cases.push(mesh_case(NonFinite, "Bob joint 1 position nan", t, Md5Error::NonFinite { at: at(Mesh, 9) }));

    // ---- frame order ------------------------------------------------------------------------
    let t = edited(SMALL_ANIM, "frame 1 {", "frame 2 {");
    let line = line_of(&t, "frame 2 {");
    cases.push(anim_case(
        Unsorted,
        "frame 2 where frame 1 is due",
        t,
        Md5Error::EntryIndex { at: at(Anim, line), what: "frame", expected: 1, found: 2 },
    ));
    let t = edited(&bob_anim, "frame 5 {", "frame 6 {");
    cases.push(
        Md5Case::is(
            Unsorted,
            "Bob frame 6 where frame 5 is due",
            bob_mesh.as_bytes().to_vec(),
            Md5Error::EntryIndex { at: at(Anim, 404), what: "frame", expected: 5, found: 6 },
        )
        .with_second(t.into_bytes()),
    );
    for rate in ["0", "-24"] {
        cases.push(anim_case(
            Unsorted,
            &format!("frameRate {rate}"),
            edited(SMALL_ANIM, "frameRate 24", &format!("frameRate {rate}")),
            Md5Error::InvalidValue { at: at(Anim, 6), what: "frameRate", requirement: "must be positive" },
        ));
    }
    cases.push(anim_case(
        Unsorted,
        "frameRate 1e-45",
        edited(SMALL_ANIM, "frameRate 24", "frameRate 1e-45"),
        Md5Error::InvalidValue {
            at: at(Anim, 6),
            what: "frameRate",
            requirement: "is too small: the last frame's time overflows f32",
        },
    ));
    let t = edited(SMALL_MESH, "vert 1 ", "vert 2 ");
    cases.push(mesh_case(
        Unsorted,
        "vert 2 where vert 1 is due",
        t,
        Md5Error::EntryIndex { at: at(Mesh, 16), what: "vert", expected: 1, found: 2 },
    ));

    // ---- joint indices ----------------------------------------------------------------------
    for (j, index) in [("2", 2i64), ("-1", -1), ("65536", 65536)] {
        let t = edited(SMALL_MESH, "weight 3 1 ", &format!("weight 3 {j} "));
        let line = line_of(&t, "weight 3");
        cases.push(mesh_case(
            JointIndex,
            &format!("weight joint {j} of 2"),
            t,
            Md5Error::IndexOutOfRange { at: at(Mesh, line), what: "weight joint", index, limit: 2 },
        ));
    }
    let t = edited(SMALL_MESH, "tri 1 1 2 3", "tri 1 1 2 4");
    cases.push(mesh_case(
        JointIndex,
        "triangle vertex 4 of 4",
        t,
        Md5Error::IndexOutOfRange { at: at(Mesh, 22), what: "triangle vertex", index: 4, limit: 4 },
    ));
    let t = edited(&bob_mesh, "weight 0 5 ", "weight 0 33 ");
    let line = line_of(&t, "weight 0 33 ");
    cases.push(mesh_case(
        JointIndex,
        "Bob weight joint 33 of 33",
        t,
        Md5Error::IndexOutOfRange { at: at(Mesh, line), what: "weight joint", index: 33, limit: 33 },
    ));
    cases.push(anim_case(
        JointIndex,
        "anim joint 1 named differently",
        edited(SMALL_ANIM, "\"arm\"\t0 56 1", "\"leg\"\t0 56 1"),
        Md5Error::HierarchyMismatch { at: at(Anim, 11), joint: 1 },
    ));
    cases.push(anim_case(
        JointIndex,
        "anim startIndex past the components",
        edited(SMALL_ANIM, "\"arm\"\t0 56 1", "\"arm\"\t0 56 2"),
        Md5Error::IndexOutOfRange { at: at(Anim, 11), what: "animated component", index: 4, limit: 4 },
    ));

    // ---- weights ----------------------------------------------------------------------------
    let t = edited(SMALL_MESH, "weight 3 1 0.5", "weight 3 1 -0.5");
    cases.push(mesh_case(
        Weights,
        "negative bias",
        t,
        Md5Error::InvalidValue { at: at(Mesh, 28), what: "weight bias", requirement: "must not be negative" },
    ));
    let zero_vertex = Md5Error::InvalidValue {
        at: at(Mesh, 15),
        what: "vertex",
        requirement: "has weights whose biases are all 0 (it follows no joint)",
    };
    cases.push(mesh_case(
        Weights,
        "vertex 0 biases all 0",
        edited(SMALL_MESH, "weight 0 0 1 ", "weight 0 0 0 "),
        zero_vertex,
    ));
    let t = edited(SMALL_MESH, "weight 2 0 0.5", "weight 2 0 0");
    let t = edited(&t, "weight 3 1 0.5", "weight 3 1 -0");
    cases.push(mesh_case(
        Weights,
        "vertex 2 biases 0 and -0",
        t,
        Md5Error::InvalidValue {
            at: at(Mesh, 17),
            what: "vertex",
            requirement: "has weights whose biases are all 0 (it follows no joint)",
        },
    ));
    let first_weight = bob_mesh.find("\tweight 0 ").expect("weight 0");
    let line_end = first_weight + bob_mesh[first_weight..].find('\n').expect("line");
    let words: Vec<&str> = bob_mesh[first_weight..line_end].split_whitespace().collect();
    let t = format!("{}\tweight 0 {} -{} {}", &bob_mesh[..first_weight], words[2], words[3], words[4..].join(" "))
        + &bob_mesh[line_end..];
    let line = line_of(&bob_mesh, "\tweight 0 ");
    cases.push(mesh_case(
        Weights,
        "Bob weight 0 negative",
        t,
        Md5Error::InvalidValue { at: at(Mesh, line), what: "weight bias", requirement: "must not be negative" },
    ));
    let t = edited(SMALL_MESH, "weight 2 0 0.5", "weight 2 0 1");
    cases.push(Md5Case::matching(
        Weights,
        "vertex 2 biases summing to 1.5 (kept, noted)",
        t.into_bytes(),
        "Ok with a note",
        |r| r.as_ref().is_ok_and(|rig| rig.notes.iter().any(|n| n.contains("off 1 by up to 0.5"))),
    ));

    // ---- hierarchy cycles -------------------------------------------------------------------
    cases.push(mesh_case(
        Cycle,
        "joint 1 its own parent",
        edited(SMALL_MESH, "\"arm\"\t0", "\"arm\"\t1"),
        Md5Error::IndexOutOfRange { at: at(Mesh, 9), what: "joint parent", index: 1, limit: 1 },
    ));
    cases.push(mesh_case(
        Cycle,
        "root parented to its child",
        edited(SMALL_MESH, "\"root\"\t-1", "\"root\"\t1"),
        Md5Error::IndexOutOfRange { at: at(Mesh, 8), what: "joint parent", index: 1, limit: 0 },
    ));
    cases.push(mesh_case(
        Cycle,
        "Bob spine parented to its neck",
        edited(&bob_mesh, "\"spine\"\t4 ", "\"spine\"\t6 "),
        Md5Error::IndexOutOfRange { at: at(Mesh, 13), what: "joint parent", index: 6, limit: 5 },
    ));
    cases.push(anim_case(
        Cycle,
        "anim arm made a root",
        edited(SMALL_ANIM, "\"arm\"\t0 56 1", "\"arm\"\t-1 56 1"),
        Md5Error::HierarchyMismatch { at: at(Anim, 11), joint: 1 },
    ));
    cases.push(anim_case(
        Cycle,
        "anim root parented to its child",
        edited(SMALL_ANIM, "\"root\"\t-1 1 0", "\"root\"\t1 1 0"),
        Md5Error::IndexOutOfRange { at: at(Anim, 10), what: "joint parent", index: 1, limit: 0 },
    ));

    // ---- degenerate triangles: kept by the importer -----------------------------------------
    let t = edited(SMALL_MESH, "tri 1 1 2 3", "tri 1 1 1 3");
    cases.push(Md5Case::matching(
        Degenerate,
        "triangle 1 repeats vertex 1 (kept)",
        t.into_bytes(),
        "Ok, both triangles",
        |r| r.as_ref().is_ok_and(|rig| rig.meshes[0].primitives[0].indices == [0, 1, 2, 1, 3, 1]),
    ));
    cases
}

#[test]
fn md5_corpus() {
    assert!(md5::load(SMALL_MESH, Some(SMALL_ANIM), "small").is_ok(), "the small base is valid");
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let counts = run_corpus("md5", &md5_cases(), &ALL_BUT_CHECKSUM, |mesh, anim| {
        md5::load(&lossy(mesh), anim.map(lossy).as_deref(), "case")
    });
    assert!(counts[&Truncated] > 1000, "{counts:?}");
}

// ---------------------------------------------------------------------------------------------
// The `sinew` binary
// ---------------------------------------------------------------------------------------------

/// Runs `sinew <command> <file> [--anim <anim>]` on a bad file and requires exit code 2, no
/// output, and exactly one stderr line: `sinew: <file>: ` and the library's message for the
/// error that `Model::load` gives in-process (whose typed error `check` must accept).
fn assert_cli_fails(command: &str, file: &Path, anim: Option<&Path>, check: impl FnOnce(ModelError) -> bool) -> String {
    let e = match Model::load(file, anim, &BakeOptions::default()) {
        Ok(_) => panic!("{} loads", file.display()),
        Err(e) => e,
    };
    let want = format!("sinew: {}: {e}\n", file.display());
    assert!(check(e), "{}: {want}", file.display());
    let mut args = vec![command, p(file)];
    if let Some(a) = anim {
        args.extend(["--anim", p(a)]);
    }
    let out = sinew(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{command} {}: {err}", file.display());
    assert!(out.stdout.is_empty(), "{command} {}: stdout {:?}", file.display(), String::from_utf8_lossy(&out.stdout));
    assert_eq!(err, want, "{command} {}", file.display());
    want
}

/// A file name from a case name.
fn file_name(case: &str, ext: &str) -> String {
    let stem: String = case.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    format!("{stem}.{ext}")
}

/// The first case of every category whose input is rejected, for each format, through
/// `sinew info` (and the checksum case through `dump`).
#[test]
fn cli_names_the_file_and_the_problem() {
    let dir = scratch("cli");
    let mut lines = Vec::new();
    let mut seen = HashSet::new();
    for c in sinew_cases() {
        if !seen.insert(c.category) {
            continue;
        }
        let path = write(&dir, &file_name(&c.name, "sinew"), &c.bytes);
        let check = &c.check;
        lines.push(assert_cli_fails("info", &path, None, |e| matches!(e, ModelError::Parse(pe) if check(&Err(pe)))));
        if c.category == Checksum {
            let check = &c.check;
            assert_cli_fails("dump", &path, None, |e| matches!(e, ModelError::Parse(pe) if check(&Err(pe))));
        }
    }
    let mut seen = HashSet::new();
    for c in gltf_cases() {
        let ext = if c.bytes.first() == Some(&b'{') { "gltf" } else { "glb" };
        if seen.contains(&c.category) || gltf::load_bytes(&c.bytes, None, "case").is_ok() {
            continue;
        }
        seen.insert(c.category);
        let path = write(&dir, &file_name(&c.name, ext), &c.bytes);
        let check = &c.check;
        lines.push(assert_cli_fails("info", &path, None, |e| match e {
            ModelError::Import(ImportError::Gltf(ge)) => check(&Err(ge)),
            _ => false,
        }));
    }
    let mut seen = HashSet::new();
    for c in md5_cases() {
        let anim_text = c.second.as_deref().map(String::from_utf8_lossy);
        let rig = md5::load(&String::from_utf8_lossy(&c.bytes), anim_text.as_deref(), "case");
        if seen.contains(&c.category) || rig.is_ok() {
            continue;
        }
        seen.insert(c.category);
        let mesh = write(&dir, &file_name(&c.name, "md5mesh"), &c.bytes);
        let anim = c.second.as_ref().map(|a| write(&dir, &file_name(&c.name, "md5anim"), a));
        let check = &c.check;
        lines.push(assert_cli_fails("info", &mesh, anim.as_deref(), |e| match e {
            ModelError::Import(ImportError::Md5(md5::LoadError::Md5 { error, .. })) => check(&Err(error)),
            _ => false,
        }));
    }
    // Every category of every format, but the degenerate triangles the importers keep.
    assert_eq!(lines.len(), 11 + 9 + 9, "one CLI check per category and format");
    for l in &lines {
        eprint!("cli {l}");
    }
}

/// `sinew bake` of a rejected file writes nothing.
#[test]
fn failed_bake_writes_no_file() {
    let dir = scratch("bake-fails");
    let mut s = SmallGltf::new();
    s.weights[1] = [0.0; 4];
    let path = write(&dir, "zero-weights.gltf", s.gltf());
    let out = dir.join("out.sinew");
    let r = sinew(&["bake", p(&path), "-o", p(&out)]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(
        err,
        format!("sinew: {}: mesh 0 primitive 0 vertex 1 has all weights zero (it follows no joint)\n", path.display())
    );
    assert!(!out.exists());
}

/// `sinew info … | head -1`, `sinew bake … | head -1`, `sinew dump … | head -c 10`: once the
/// reader has gone, the output ends quietly (exit code 0, nothing on stderr but bake's own
/// summary), never with a panic on the broken pipe.
#[test]
fn closed_stdout_ends_output_quietly() {
    let dir = scratch("pipe");
    let model = gltf_asset("CesiumMan", "glb");
    let baked = dir.join("CesiumMan.sinew");
    for args in [
        vec!["info", p(&model)],
        vec!["bake", p(&model), "-o", p(&baked)],
        vec!["info", p(&baked)],
        vec!["dump", p(&model), "--time", "0.5"],
    ] {
        // The reading end is closed before the child has loaded the model, so every write it
        // makes meets a broken pipe.
        let mut child = Command::new(sinew_bin())
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sinew runs");
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("sinew ends");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{args:?}: {err}");
        if args[0] == "bake" {
            assert!(baked.exists() && err.contains("wrote"), "{err}");
        } else {
            assert!(err.is_empty(), "{args:?}: {err}");
        }
    }
    // `head -1` through a shell, as a user types it.
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("'{}' info '{}' | head -1", sinew_bin().display(), model.display()))
        .output()
        .expect("sh runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("model CesiumMan ({} bytes baked)\n", read(&baked).len()));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

// ---------------------------------------------------------------------------------------------
// Nothing already loaded is lost
// ---------------------------------------------------------------------------------------------

#[test]
fn failed_loads_keep_what_the_cache_holds() {
    let dir = scratch("cache");
    let cache = AssetCache::new();
    let cesium = gltf_asset("CesiumMan", "glb");
    let first = cache.get(&cesium, None).expect("CesiumMan loads");
    // A bad file of every format fails with its typed error and leaves the cache as it was.
    let real = read(&cesium);
    let cut = write(&dir, "cut.glb", &real[..real.len() / 2]);
    assert!(matches!(cache.get(&cut, None), Err(ImportError::Gltf(GltfError::Container(_)))));
    let mut s = SmallGltf::new();
    s.weights[2] = [-1.0, 2.0, 0.0, 0.0];
    let negative = write(&dir, "negative.gltf", s.gltf());
    assert!(matches!(
        cache.get(&negative, None),
        Err(ImportError::Gltf(GltfError::NegativeWeight { mesh: 0, primitive: 0, vertex: 2 }))
    ));
    let mesh = write(&dir, "small.md5mesh", SMALL_MESH);
    let anim = write(&dir, "cycle.md5anim", edited(SMALL_ANIM, "\"root\"\t-1 1 0", "\"root\"\t1 1 0"));
    assert!(matches!(
        cache.get(&mesh, Some(&anim)),
        Err(ImportError::Md5(md5::LoadError::Md5 {
            error: Md5Error::IndexOutOfRange { what: "joint parent", .. },
            ..
        }))
    ));
    assert_eq!(cache.len(), 1);
    let again = cache.get(&cesium, None).expect("still there");
    assert!(Arc::ptr_eq(&first, &again), "the cached rig is served, not reloaded");
    // A file that loaded, then was overwritten with bad bytes: the loaded rig is kept.
    let model = write(&dir, "model.glb", read(&gltf_asset("RiggedSimple", "glb")));
    let loaded = cache.get(&model, None).expect("RiggedSimple loads");
    std::fs::write(&model, &real[..100]).expect("overwrite");
    let after = cache.get(&model, None).expect("served from the cache");
    assert!(Arc::ptr_eq(&loaded, &after));
    assert_eq!(cache.len(), 2);
    // A fixed file loads on the next call (failures are not cached).
    std::fs::write(&negative, SmallGltf::new().gltf()).expect("fix");
    assert!(cache.get(&negative, None).is_ok());
    assert_eq!(cache.len(), 3);
}

// ---------------------------------------------------------------------------------------------
// The baker: degenerate triangles, weights, bounded work
// ---------------------------------------------------------------------------------------------

#[test]
fn baker_drops_degenerate_triangles() {
    let mut s = SmallGltf::new();
    s.indices = vec![0, 1, 2, 2, 2, 3];
    let rig = gltf::load_bytes(&s.gltf(), None, "degenerate").expect("imports");
    let (bytes, report) = bake(&rig, &BakeOptions::default()).expect("bakes");
    assert_eq!(report.degenerate_triangles, 1);
    let a = Asset::parse(&bytes).expect("parses");
    let part = a.mesh(0).and_then(|m| m.parts().next()).expect("a part");
    assert_eq!((0..part.num_indices()).map(|i| part.index(i)).collect::<Vec<_>>(), [0, 1, 2]);
    // The same through a palette split, and from md5.
    let (_, report) = bake(&rig, &BakeOptions { palette: Some(2), ..BakeOptions::default() }).expect("bakes");
    assert_eq!(report.degenerate_triangles, 1);
    let rig = md5::load(&edited(SMALL_MESH, "tri 1 1 2 3", "tri 1 1 1 3"), None, "degenerate").expect("imports");
    let (_, report) = bake(&rig, &BakeOptions::default()).expect("bakes");
    assert_eq!(report.degenerate_triangles, 1);
    // And the CLI says so.
    let dir = scratch("degenerate");
    let path = write(&dir, "degenerate.gltf", s.gltf());
    let out = sinew(&["bake", p(&path), "-o", p(&dir.join("out.sinew"))]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("dropped 1 degenerate triangles (a vertex used twice)"));
}

#[test]
fn baker_rejects_weights_and_bind_matrices_the_format_rejects() {
    use sinew_pipeline::bake::BakeError;
    let rig = gltf::load_bytes(&SmallGltf::new().gltf(), None, "small").expect("imports");
    let with = |f: &dyn Fn(&mut Rig)| {
        let mut r = rig.clone();
        f(&mut r);
        bake(&r, &BakeOptions::default()).err()
    };
    let body = rig.meshes[0].name.clone();
    assert_eq!(
        with(&|r| r.meshes[0].primitives[0].joint_weights[8..12].copy_from_slice(&[0.0; 4])),
        Some(BakeError::ZeroWeights { mesh: body.clone(), primitive: 0, vertex: 2 })
    );
    assert_eq!(
        with(&|r| r.meshes[0].primitives[0].joint_weights[4..6].copy_from_slice(&[1.5, -0.5])),
        Some(BakeError::NegativeWeight { mesh: body.clone(), primitive: 0, vertex: 1 })
    );
    let skin = rig.skins[0].name.clone();
    assert_eq!(with(&|r| r.skins[0].inverse_bind[1][3] = f32::NAN), Some(BakeError::NonFiniteBind { skin, joint: 1 }));
}

/// A glTF chain of `joints` nodes (5 cm apart), the first `animated` of them with a LINEAR
/// rotation channel of `keys` keys sharing one time accessor. `noise` jitters every key so key
/// reduction keeps them all and the error measurement keeps tightening.
fn chain_glb(joints: usize, animated: usize, keys: usize, noise: f32) -> Vec<u8> {
    let mut bin: Vec<u8> = (0..keys).flat_map(|k| (k as f32 / 30.0).to_le_bytes()).collect();
    let mut seed = 0x2545_f491u32;
    let mut jitter = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        (seed as f32 / u32::MAX as f32 - 0.5) * noise
    };
    for c in 0..animated {
        for k in 0..keys {
            let a = 0.6 * (k as f32 * 0.05 + c as f32).sin() + jitter();
            let (s, co) = (0.5 * a).sin_cos();
            let axis = [(c as f32).cos(), 0.6, (c as f32).sin()];
            let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
            for v in [s * axis[0] / n, s * axis[1] / n, s * axis[2] / n, co] {
                bin.extend(v.to_le_bytes());
            }
        }
    }
    let nodes: Vec<String> = (0..joints)
        .map(|i| {
            let children = if i + 1 < joints { format!(r#","children":[{}]"#, i + 1) } else { String::new() };
            format!(r#"{{"name":"j{i}","translation":[0,0.05,0]{children}}}"#)
        })
        .collect();
    let mut views = vec![format!(r#"{{"buffer":0,"byteOffset":0,"byteLength":{}}}"#, 4 * keys)];
    let mut accessors = vec![format!(r#"{{"bufferView":0,"componentType":5126,"count":{keys},"type":"SCALAR"}}"#)];
    let mut samplers = Vec::new();
    let mut channels = Vec::new();
    for c in 0..animated {
        views.push(format!(r#"{{"buffer":0,"byteOffset":{},"byteLength":{}}}"#, 4 * keys + 16 * keys * c, 16 * keys));
        accessors.push(format!(r#"{{"bufferView":{},"componentType":5126,"count":{keys},"type":"VEC4"}}"#, c + 1));
        samplers.push(format!(r#"{{"input":0,"output":{},"interpolation":"LINEAR"}}"#, c + 1));
        channels.push(format!(r#"{{"sampler":{c},"target":{{"node":{c},"path":"rotation"}}}}"#));
    }
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{}],
"animations":[{{"name":"hostile","channels":[{}],"samplers":[{}]}}],
"accessors":[{}],"bufferViews":[{}],"buffers":[{{"byteLength":{}}}]}}"#,
        nodes.join(","),
        channels.join(","),
        samplers.join(","),
        accessors.join(","),
        views.join(","),
        bin.len()
    );
    glb_from(&json, &bin)
}

/// One measurement pass of a clip over `joints` joints with `channels` channels and `times`
/// distinct key times (the baker's unit of work: one joint or track at one evaluation time).
fn measure_cost(joints: usize, channels: usize, times: usize) -> u64 {
    (4 * times as u64 - 3) * (joints + channels) as u64
}

/// 1000 joints × 8300 distinct key times: one measurement alone is past the default budget, so
/// the clip is stored lossless without any reduction or measurement.
#[test]
fn hostile_clip_is_stored_lossless_without_work() {
    let (joints, animated) = (1000, 8);
    let keys = (MAX_BAKE_WORK / (4 * (joints + animated) as u64)) as usize + 2;
    assert!(measure_cost(joints, animated, keys) > MAX_BAKE_WORK);
    let glb = chain_glb(joints, animated, keys, 0.01);
    let rig = gltf::load_bytes(&glb, None, "hostile").expect("imports");
    assert_eq!(rig.joints.len(), joints);
    let (bytes, report) = bake(&rig, &BakeOptions::default()).expect("bakes");
    let c = &report.clips[0];
    eprintln!(
        "hostile clip: {joints} joints, {animated} × {keys} keys: fallback {}, {} work steps, {} bytes",
        c.fallback,
        c.work,
        bytes.len()
    );
    assert!(c.fallback);
    assert_eq!(c.work, 0);
    assert_eq!((c.source_keys, c.baked_keys), (animated * keys, animated * keys));
    let a = Asset::parse(&bytes).expect("parses");
    let clip = a.clip(0).expect("clip");
    for t in 0..clip.num_tracks() {
        let info = clip.track(t).expect("track");
        assert_eq!(info.format, sinew::clip::KeyFormat::F32);
        assert!(info.slerp, "track {t}: linear rotations are slerped exactly");
    }
    // The command line says what it did.
    let dir = scratch("hostile");
    let path = write(&dir, "hostile.glb", &glb);
    let out = sinew(&["bake", p(&path), "-o", p(&dir.join("hostile.sinew"))]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("clip 'hostile': key reduction would exceed the work budget"), "{err}");
}

/// A smaller hostile clip whose search runs many rounds: with a budget below what it needs the
/// baker stops within the budget and stores the clip lossless; with exactly what it needs the
/// result is the unbounded one.
#[test]
fn search_stops_within_the_work_budget() {
    let (joints, keys) = (60, 120);
    let rig = gltf::load_bytes(&chain_glb(joints, joints, keys, 0.02), None, "noisy").expect("imports");
    let unbounded = BakeOptions { max_work: u64::MAX, ..BakeOptions::default() };
    let (full_bytes, full) = bake(&rig, &unbounded).expect("bakes");
    let need = full.clips[0].work;
    let one = measure_cost(joints, joints, keys);
    eprintln!("noisy clip: {need} work steps, {:.1} measurements' worth", need as f64 / one as f64);
    assert!(!full.clips[0].fallback);
    assert!(need > 3 * one, "the search ran several rounds: {need} vs {one} per measurement");
    for budget in [need / 2, need - 1, one + 1] {
        let (bytes, r) = bake(&rig, &BakeOptions { max_work: budget, ..BakeOptions::default() }).expect("bakes");
        assert!(r.clips[0].fallback, "budget {budget}");
        assert!(r.clips[0].work <= budget, "budget {budget}: {} steps", r.clips[0].work);
        assert!(Asset::parse(&bytes).is_ok());
    }
    let (bytes, r) = bake(&rig, &BakeOptions { max_work: need, ..BakeOptions::default() }).expect("bakes");
    assert!(!r.clips[0].fallback);
    assert_eq!(r.clips[0].work, need);
    assert_eq!(bytes, full_bytes);
    // The budget is shared by the clips of one bake: a second copy of the clip, with what the
    // first left, falls back.
    let mut two = rig.clone();
    two.clips.push(rig.clips[0].clone());
    two.clips[1].name = "again".into();
    let (_, r) = bake(&two, &BakeOptions { max_work: need + need / 2, ..BakeOptions::default() }).expect("bakes");
    assert!(!r.clips[0].fallback && r.clips[1].fallback);
    assert!(r.clips.iter().map(|c| c.work).sum::<u64>() <= need + need / 2);
}

/// The sample models bake far inside the default budget (the figures for choosing it).
#[test]
fn sample_models_bake_well_within_the_work_budget() {
    let mut models: Vec<(String, Rig)> = Vec::new();
    for m in [
        "BrainStem",
        "CesiumMan",
        "Fox",
        "RecursiveSkeletons",
        "RiggedFigure",
        "RiggedSimple",
        "InterpolationTest",
        "BoxAnimated",
        "AnimatedMorphCube",
    ] {
        models.push((m.into(), gltf::load_file(&gltf_asset(m, "glb")).expect("imports")));
    }
    models.push(("SimpleSkin".into(), gltf::load_file(&gltf_asset("SimpleSkin", "gltf")).expect("imports")));
    models.push(("pab_crossarms".into(), gltf::load_file(&assets().join("ozz/pab_crossarms.glb")).expect("imports")));
    let (mesh, anim) = bob();
    models.push(("Bob".into(), md5::load_files(&mesh, Some(&anim)).expect("imports")));
    let mut most = 0;
    for (name, rig) in &models {
        let (_, r) = bake(rig, &BakeOptions::default()).expect("bakes");
        let work: u64 = r.clips.iter().map(|c| c.work).sum();
        eprintln!("bake work {name}: {work} steps over {} clips", r.clips.len());
        assert!(r.clips.iter().all(|c| !c.fallback), "{name}");
        assert_eq!(r.degenerate_triangles, 0, "{name}");
        most = most.max(work);
    }
    assert!(most * 8 <= MAX_BAKE_WORK, "the largest sample takes {most} steps");
}
