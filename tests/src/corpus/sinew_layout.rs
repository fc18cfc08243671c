//! Where things are in a `.sinew` file: its sections, a mesh section's parts and a clip
//! section's tracks (absolute offsets read from the bytes), and the header rewritten so a
//! changed file passes its length and checksum checks.

use sinew::asset::crc32;
use sinew::asset::format::*;

use super::{put_u16, put_u32, u16_at, u32_at};

/// Rewrites the header's length and checksum for the bytes as they are.
pub(super) fn reheader(mut b: Vec<u8>) -> Vec<u8> {
    let n = b.len() as u32;
    put_u32(&mut b, 12, n);
    let crc = crc32(&b[CRC_START..]);
    put_u32(&mut b, 16, crc);
    b
}

/// A copy of `base` changed by `f`, with a valid checksum (so the content checks are reached).
pub(super) fn patched(base: &[u8], f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut b = base.to_vec();
    f(&mut b);
    reheader(b)
}

/// One section table entry.
#[derive(Debug, Clone, Copy)]
pub(super) struct Section {
    pub(super) index: u16,
    pub(super) kind: [u8; 4],
    pub(super) off: usize,
    pub(super) len: usize,
}

pub(super) fn sections(b: &[u8]) -> Vec<Section> {
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

pub(super) fn section_of(b: &[u8], kind: [u8; 4]) -> Section {
    *sections(b).iter().find(|s| s.kind == kind).expect("section of that kind")
}

/// Where the fields of one mesh part are (absolute offsets).
#[derive(Debug, Clone, Copy)]
pub(super) struct PartAt {
    pub(super) palette_len: usize,
    pub(super) palette: usize,
    pub(super) vertex_count: usize,
    pub(super) vertices: usize,
    pub(super) influences: usize,
    pub(super) positions: usize,
    pub(super) normals: Option<usize>,
    pub(super) joints: usize,
    pub(super) weights: usize,
    pub(super) index_count: usize,
    pub(super) indices: usize,
    pub(super) index_size: usize,
    pub(super) count: usize,
}

/// The parts of a mesh section and where its skin index and part count are.
pub(super) fn mesh_parts(b: &[u8], s: Section) -> (usize, usize, Vec<PartAt>) {
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
        if attrs & ATTR_TEXCOORDS != 0 {
            at += 8 * v;
        }
        if attrs & ATTR_COLORS != 0 {
            at += 4 * v;
        }
        at += MATERIAL_LEN;
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

pub(super) fn put_index(b: &mut [u8], part: &PartAt, i: usize, v: u32) {
    let at = part.indices + i * part.index_size;
    if part.index_size == 2 {
        put_u16(b, at, v as u16);
    } else {
        put_u32(b, at, v);
    }
}

/// One clip track directory entry (absolute offsets).
#[derive(Debug, Clone, Copy)]
pub(super) struct TrackAt {
    pub(super) entry: usize,
    pub(super) format: u8,
    pub(super) keys: usize,
    pub(super) data: usize,
}

/// The start/end fields, track count field and tracks of a clip section.
pub(super) fn clip_tracks(b: &[u8], s: Section) -> (usize, usize, Vec<TrackAt>) {
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
