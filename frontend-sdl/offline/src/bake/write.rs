//! The encoded form of every section (skeleton, skins, clips' tracks, meshes' parts, textures)
//! and the writer that lays them out as a `.sinew` file.

use sinew::asset::format::*;
use sinew::asset::writer::Writer;
use sinew::asset::{write_clip_report, ClipReport};

use super::morph::{write_morph, write_weights, EncMorph, EncWeights};
use super::texture::{colors_u8, EncTexture};

/// One clip track as written: its directory entry and its key data.
pub(super) struct EncTrack {
    pub(super) joint: u16,
    pub(super) target: u8,
    pub(super) interp: u8,
    pub(super) format: u8,
    pub(super) flags: u8,
    pub(super) keys: u16,
    pub(super) data: Vec<u8>,
}

/// A clip section as written.
pub(super) struct EncClip {
    pub(super) name: String,
    pub(super) start: f32,
    pub(super) end: f32,
    pub(super) tracks: Vec<EncTrack>,
}

/// One mesh part as written: its palette, vertices (joints index the palette) and triangles.
pub(super) struct EncPart {
    pub(super) palette: Vec<u16>,
    pub(super) positions: Vec<[f32; 3]>,
    pub(super) normals: Option<Vec<[f32; 3]>>,
    pub(super) tangents: Option<Vec<[f32; 4]>>,
    pub(super) influences: usize,
    pub(super) joints: Vec<u16>,
    pub(super) weights: Vec<f32>,
    pub(super) indices: Vec<u32>,
    pub(super) texcoords: Option<Vec<[f32; 2]>>,
    pub(super) colors: Option<Vec<[f32; 4]>>,
    pub(super) material: [u8; MATERIAL_LEN],
    /// The primitive the part comes from.
    pub(super) primitive: usize,
    /// The primitive vertex of each part vertex (empty: the same index, the part is the whole
    /// primitive).
    pub(super) source: Vec<u32>,
}

/// A mesh section as written.
pub(super) struct EncMesh {
    pub(super) name: String,
    pub(super) skin: u16,
    pub(super) node: u16,
    pub(super) color: [u8; 4],
    pub(super) parts: Vec<EncPart>,
}

/// A skin as written: name, skeleton joints, inverse bind matrices.
pub(super) type EncSkin = (String, Vec<u16>, Vec<[f32; 16]>);

/// The skeleton section as written.
pub(super) struct EncSkeleton {
    pub(super) parents: Vec<i16>,
    pub(super) rest: Vec<[f32; 10]>,
    pub(super) names: Vec<String>,
}

/// The morph sections: MRPH per morphed mesh, MWGT per clip with weight tracks.
pub(super) type EncMorphs<'a> = (&'a [EncMorph], &'a [EncWeights]);

/// The sections of a `.sinew` file as written (the clip reports in increasing clip order).
pub(super) struct EncFile<'a> {
    pub(super) skel: &'a EncSkeleton,
    pub(super) skins: &'a [EncSkin],
    pub(super) meshes: &'a [EncMesh],
    pub(super) clips: &'a [&'a EncClip],
    pub(super) morphs: EncMorphs<'a>,
    pub(super) textures: &'a [EncTexture],
    pub(super) reports: &'a [ClipReport],
    /// The spring-bone section's body, written last (`None`: no section, the file as without
    /// spring bones).
    pub(super) springs: Option<&'a [u8]>,
}

fn emit(w: &mut Writer, file: &EncFile<'_>) {
    let EncFile { skel, skins, meshes, clips, morphs, textures, reports, springs } = *file;
    let count = 1
        + skins.len()
        + meshes.len()
        + clips.len()
        + morphs.0.len()
        + morphs.1.len()
        + textures.len()
        + reports.len()
        + usize::from(springs.is_some());
    let table = w.begin_file(count as u32);
    let mut idx = 0;
    let start = w.len();
    w.u16(skel.parents.len() as u16);
    for &p in &skel.parents {
        w.i16(p);
    }
    for r in &skel.rest {
        for &v in r {
            w.f32(v);
        }
    }
    for n in &skel.names {
        w.str(n);
    }
    w.section(table, idx, KIND_SKELETON, start);
    idx += 1;
    for (name, joints, ib) in skins {
        let start = w.len();
        w.str(name);
        w.u16(joints.len() as u16);
        for &j in joints {
            w.u16(j);
        }
        for m in ib {
            for &v in m {
                w.f32(v);
            }
        }
        w.section(table, idx, KIND_SKIN, start);
        idx += 1;
    }
    for c in clips {
        let start = w.len();
        w.str(&c.name);
        w.f32(c.start);
        w.f32(c.end);
        w.u16(c.tracks.len() as u16);
        let dir = w.len();
        for _ in &c.tracks {
            w.bytes(&[0; TRACK_ENTRY_LEN]);
        }
        for (i, t) in c.tracks.iter().enumerate() {
            let off = (w.len() - start) as u32;
            w.bytes(&t.data);
            let mut e = [0u8; TRACK_ENTRY_LEN];
            e[..2].copy_from_slice(&t.joint.to_le_bytes());
            e[2] = t.target;
            e[3] = t.interp;
            e[4] = t.format;
            e[5] = t.flags;
            e[6..8].copy_from_slice(&t.keys.to_le_bytes());
            e[8..12].copy_from_slice(&off.to_le_bytes());
            w.patch_bytes(dir + i * TRACK_ENTRY_LEN, &e);
        }
        w.section(table, idx, KIND_CLIP, start);
        idx += 1;
    }
    for m in meshes {
        let start = w.len();
        w.str(&m.name);
        w.u16(m.skin);
        w.u16(m.node);
        w.bytes(&m.color);
        w.u16(m.parts.len() as u16);
        for p in &m.parts {
            w.u16(p.palette.len() as u16);
            for &j in &p.palette {
                w.u16(j);
            }
            w.u32(p.positions.len() as u32);
            w.u8(p.influences as u8);
            let attrs = if p.normals.is_some() { ATTR_NORMALS } else { 0 }
                | if p.tangents.is_some() { ATTR_TANGENTS } else { 0 }
                | if p.texcoords.is_some() { ATTR_TEXCOORDS } else { 0 }
                | if p.colors.is_some() { ATTR_COLORS } else { 0 };
            w.u8(attrs);
            for v in &p.positions {
                v.iter().for_each(|&x| w.f32(x));
            }
            if let Some(n) = &p.normals {
                n.iter().flatten().for_each(|&x| w.f32(x));
            }
            if let Some(t) = &p.tangents {
                t.iter().flatten().for_each(|&x| w.f32(x));
            }
            p.joints.iter().for_each(|&j| w.u16(j));
            p.weights.iter().for_each(|&x| w.f32(x));
            w.u32(p.indices.len() as u32);
            let wide = p.positions.len() > 65536;
            w.u8(if wide { 4 } else { 2 });
            for &i in &p.indices {
                if wide {
                    w.u32(i);
                } else {
                    w.u16(i as u16);
                }
            }
            if let Some(t) = &p.texcoords {
                t.iter().flatten().for_each(|&x| w.f32(x));
            }
            if let Some(c) = &p.colors {
                colors_u8(c).iter().for_each(|c| w.bytes(c));
            }
            w.bytes(&p.material);
        }
        w.section(table, idx, KIND_MESH, start);
        idx += 1;
    }
    for m in morphs.0 {
        let start = w.len();
        write_morph(w, m);
        w.section(table, idx, KIND_MORPH, start);
        idx += 1;
    }
    for m in morphs.1 {
        let start = w.len();
        write_weights(w, m);
        w.section(table, idx, KIND_WEIGHTS, start);
        idx += 1;
    }
    for t in textures {
        let start = w.len();
        w.str(&t.name);
        w.u8(t.format);
        w.u8(0);
        w.u16(t.width);
        w.u16(t.height);
        w.bytes(&t.texels);
        w.section(table, idx, KIND_TEXTURE, start);
        idx += 1;
    }
    for r in reports {
        let start = w.len();
        write_clip_report(w, r);
        w.section(table, idx, KIND_CLIP_REPORT, start);
        idx += 1;
    }
    if let Some(body) = springs {
        let start = w.len();
        w.bytes(body);
        w.section(table, idx, KIND_SPRINGS, start);
    }
    w.finish();
}

/// The bytes of a `.sinew` file of these sections (laid out once to size the buffer, then
/// written).
pub(super) fn write_file(skel: &EncSkeleton, skins: &[EncSkin], meshes: &[EncMesh], clips: &[&EncClip]) -> Vec<u8> {
    write_file_with_morphs(&EncFile {
        skel,
        skins,
        meshes,
        clips,
        morphs: (&[], &[]),
        textures: &[],
        reports: &[],
        springs: None,
    })
}

/// As [`write_file`], with the morph, texture, clip-report and spring-bone sections.
pub(super) fn write_file_with_morphs(file: &EncFile<'_>) -> Vec<u8> {
    let mut w = Writer::new(&mut []);
    emit(&mut w, file);
    let mut buf = vec![0u8; w.len()];
    let mut w = Writer::new(&mut buf);
    emit(&mut w, file);
    buf
}
