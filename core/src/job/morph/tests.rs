//! The morph jobs against values worked out by hand, in `f32` and `Q16`, on a file written here:
//! a rigid quad (4 vertices, normals and tangents), two targets (one `f32` with normal deltas,
//! one quantized with tangent deltas) and weight tracks of each interpolation; and the morph
//! sections' validation.

extern crate std;
use std::vec::Vec;

use super::*;
use crate::asset::format::*;
use crate::asset::writer::Writer;
use crate::asset::{Asset, ParseError};
use crate::real::Q16;

/// One weight track: interpolation, format, times and values (`2 × keys`, × 3 for cubic).
struct Track {
    interp: u8,
    format: u8,
    times: Vec<f32>,
    values: Vec<f32>,
}

/// What [`build`] writes; the tests change it to break one rule at a time.
struct Spec {
    /// MRPH: mesh index, target count, default weights, part vertex count.
    mesh: u16,
    targets: u16,
    defaults: Vec<f32>,
    part_vertices: u32,
    /// Target 0's vertices (f32 position and normal deltas).
    t0_vertices: Vec<u32>,
    t0_format: u8,
    /// Target 1's shifts (quantized position and tangent deltas, vertex 2).
    t1_shifts: [u8; 3],
    /// MWGT: clip index, the range written, the track's mesh, the tracks (one per clip).
    clip: u16,
    range: (f32, f32),
    track_mesh: u16,
    tracks: Vec<Track>,
}

fn spec() -> Spec {
    Spec {
        mesh: 0,
        targets: 2,
        defaults: std::vec![0.25, 0.0],
        part_vertices: 4,
        t0_vertices: std::vec![1, 3],
        t0_format: MORPH_F32,
        t1_shifts: [8, 0, 8],
        clip: 0,
        range: (0.0, 2.0),
        track_mesh: 0,
        tracks: std::vec![Track {
            interp: INTERP_LINEAR,
            format: FORMAT_F32,
            times: std::vec![0.0, 1.0, 2.0],
            values: std::vec![0.0, 0.0, 1.0, 0.5, 0.0, 1.0],
        }],
    }
}

fn write(w: &mut Writer, s: &Spec) {
    let table = w.begin_file(5);
    // Skeleton: one joint at the origin.
    let start = w.len();
    w.u16(1);
    w.i16(-1);
    for v in [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0] {
        w.f32(v);
    }
    w.str("root");
    w.section(table, 0, KIND_SKELETON, start);
    // A clip without joint tracks over 0..2 s.
    let start = w.len();
    w.str("morph");
    w.f32(0.0);
    w.f32(2.0);
    w.u16(0);
    w.section(table, 1, KIND_CLIP, start);
    // A rigid quad following joint 0.
    let start = w.len();
    w.str("quad");
    w.u16(NONE);
    w.u16(0);
    w.bytes(&[255; 4]);
    w.u16(1);
    w.u16(0);
    w.u32(4);
    w.u8(0);
    w.u8(ATTR_NORMALS | ATTR_TANGENTS);
    for p in [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]] {
        p.iter().for_each(|&v| w.f32(v));
    }
    for _ in 0..4 {
        [0.0, 0.0, 1.0].iter().for_each(|&v| w.f32(v));
    }
    for _ in 0..4 {
        [1.0, 0.0, 0.0, 1.0].iter().for_each(|&v| w.f32(v));
    }
    w.u32(6);
    w.u8(2);
    for i in [0u16, 1, 2, 2, 1, 3] {
        w.u16(i);
    }
    // An untextured white material.
    w.bytes(&[255, 255, 255, 255, 0xFF, 0xFF, 0, 0, 1, 1, 0, 0]);
    w.section(table, 2, KIND_MESH, start);
    // Its targets.
    let start = w.len();
    w.u16(s.mesh);
    w.u16(s.targets);
    s.defaults.iter().for_each(|&v| w.f32(v));
    w.u16(1);
    w.u32(s.part_vertices);
    // Target 0: f32 positions and normals.
    w.u32(s.t0_vertices.len() as u32);
    w.bytes(&[s.t0_format, ATTR_NORMALS, 2, 0, 0, 0]);
    s.t0_vertices.iter().for_each(|&v| w.u16(v as u16));
    let deltas = [[0.0, 0.0, 1.0, 0.0, 0.5, 0.0], [0.0, 0.0, 2.0, 0.0, 0.0, 0.0]];
    for d in deltas.iter().take(s.t0_vertices.len()) {
        d.iter().for_each(|&v| w.f32(v));
    }
    // Target 1: quantized positions and tangents of vertex 2.
    w.u32(1);
    w.bytes(&[MORPH_QUANTIZED, ATTR_TANGENTS, 4]);
    w.bytes(&s.t1_shifts);
    w.u32(2);
    for q in [128i16, 0, -256, 0, 64, 0] {
        w.i16(q);
    }
    w.section(table, 3, KIND_MORPH, start);
    // The weight tracks of clip 0.
    let start = w.len();
    w.u16(s.clip);
    w.f32(s.range.0);
    w.f32(s.range.1);
    w.u16(s.tracks.len() as u16);
    let dir = w.len();
    for _ in &s.tracks {
        w.bytes(&[0; TRACK_ENTRY_LEN]);
    }
    for (i, t) in s.tracks.iter().enumerate() {
        let off = (w.len() - start) as u32;
        if t.format == FORMAT_F32 {
            t.times.iter().chain(&t.values).for_each(|&v| w.f32(v));
        } else {
            t.times.iter().for_each(|&v| w.u16(quantize_time(v, s.range.0, s.range.1)));
            w.f32(0.0);
            w.f32(1.0);
            t.values.iter().for_each(|&v| w.u16((v * 65536.0).min(65535.0) as u16));
        }
        let mut e = [0u8; TRACK_ENTRY_LEN];
        e[..2].copy_from_slice(&(s.track_mesh + i as u16).to_le_bytes());
        e[2] = TARGET_WEIGHTS;
        e[3] = t.interp;
        e[4] = t.format;
        e[6..8].copy_from_slice(&(t.times.len() as u16).to_le_bytes());
        e[8..12].copy_from_slice(&off.to_le_bytes());
        w.patch_bytes(dir + i * TRACK_ENTRY_LEN, &e);
    }
    w.section(table, 4, KIND_WEIGHTS, start);
    w.finish();
}

fn build(s: &Spec) -> Vec<u8> {
    let mut measure = Writer::new(&mut []);
    write(&mut measure, s);
    let mut buf = std::vec![0u8; measure.len()];
    write(&mut Writer::new(&mut buf), s);
    buf
}

fn close(a: f32, b: f32, tol: f32) -> bool {
    (a - b).abs() <= tol
}

/// Morphed positions, normals and tangents.
type Morphed<R> = (Vec<Vec3<R>>, Vec<Vec3<R>>, Vec<Vec4<R>>);

/// The quad morphed with weights `[0.5, 2]`, in `R`.
fn morph_quad<R: Real>(asset: &Asset<'_>) -> Morphed<R> {
    let mesh = asset.mesh(0).expect("mesh");
    let part = mesh.parts().next().expect("part");
    let targets = asset.morph_targets(0).expect("targets");
    let morph = targets.part(0).expect("morph part");
    let (mut p, mut n, mut t) = ([Vec3::ZERO; 4], [Vec3::ZERO; 4], [Vec4::ZERO; 4]);
    let p = part.read_positions(&mut p).expect("positions");
    let n = part.read_normals(&mut n).expect("normals").expect("stored");
    let t = part.read_tangents(&mut t).expect("tangents").expect("stored");
    let (mut op, mut on, mut ot) = (std::vec![Vec3::ZERO; 4], std::vec![Vec3::ZERO; 4], std::vec![Vec4::ZERO; 4]);
    let weights = [R::HALF, R::TWO];
    MorphJob::new(morph, &weights, p, &mut op).with_normals(n, &mut on).with_tangents(t, &mut ot).run().expect("run");
    (op, on, ot)
}

#[test]
fn morph_job_adds_weighted_sparse_deltas() {
    let bytes = build(&spec());
    let asset = Asset::parse(&bytes).expect("valid");
    let want_p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.5], [1.0, 1.0, -2.0], [1.0, 1.0, 1.0]];
    let want_n = [[0.0, 0.0, 1.0], [0.0, 0.25, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]];
    let want_t = [[1.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0], [1.0, 0.5, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0]];
    let (p, n, t) = morph_quad::<f32>(&asset);
    for v in 0..4 {
        assert_eq!(p[v].to_array(), want_p[v], "f32 position {v}");
        assert_eq!(n[v].to_array(), want_n[v], "f32 normal {v}");
        assert_eq!(t[v].to_array(), want_t[v], "f32 tangent {v}");
    }
    let (p, n, t) = morph_quad::<Q16>(&asset);
    for v in 0..4 {
        for j in 0..3 {
            assert!(close(p[v].to_array()[j].to_f32(), want_p[v][j], 1e-4), "Q16 position {v}");
            assert!(close(n[v].to_array()[j].to_f32(), want_n[v][j], 1e-4), "Q16 normal {v}");
        }
        for j in 0..4 {
            assert!(close(t[v].to_array()[j].to_f32(), want_t[v][j], 1e-4), "Q16 tangent {v}");
        }
    }
}

#[test]
fn morph_job_checks_its_inputs_and_skips_zero_weights() {
    let bytes = build(&spec());
    let asset = Asset::parse(&bytes).expect("valid");
    let morph = asset.morph_targets(0).and_then(|t| t.part(0)).expect("part");
    let p = [Vec3::new(1.0f32, 2.0, 3.0); 4];
    let mut out = [Vec3::ZERO; 4];
    // Zero weights copy the input.
    MorphJob::new(morph, &[0.0, 0.0], &p, &mut out).run().expect("run");
    assert_eq!(out, p);
    let mut short = [Vec3::ZERO; 3];
    assert_eq!(MorphJob::new(morph, &[0.0, 0.0], &p, &mut short).run(), Err(JobError::OutputTooSmall));
    assert_eq!(MorphJob::new(morph, &[0.0], &p, &mut out).run(), Err(JobError::InputTooSmall));
    assert_eq!(MorphJob::new(morph, &[f32::NAN, 0.0], &p, &mut out).run(), Err(JobError::InvalidWeight));
    let n = [Vec3::Z; 4];
    let job = MorphJob { normals: Some(&n), ..MorphJob::new(morph, &[1.0, 1.0], &p, &mut out) };
    assert_eq!(job.validate(), Err(JobError::MismatchedStreams));
}

/// Samples mesh 0's weights at `t` from the file of `s` (`None`: no tracks).
fn weights_at<R: Real>(s: &Spec, t: f32, tracks: bool) -> [f32; 2] {
    let bytes = build(s);
    let asset = Asset::parse(&bytes).expect("valid");
    let targets = asset.morph_targets(0).expect("targets");
    let tracks = if tracks { asset.morph_weights(0) } else { None };
    let mut cursor = 0;
    let mut out = [R::ZERO; 3];
    MorphWeightsJob::new(targets, tracks, R::from_f32(t), &mut cursor, &mut out).run().expect("run");
    assert_eq!(out[2], R::ZERO, "entries past the targets are untouched");
    [out[0].to_f32(), out[1].to_f32()]
}

fn check<R: Real>(s: &Spec, cases: &[(f32, [f32; 2])], tol: f32) {
    for &(t, want) in cases {
        let got = weights_at::<R>(s, t, true);
        assert!(close(got[0], want[0], tol) && close(got[1], want[1], tol), "t={t}: {got:?} vs {want:?}");
    }
}

#[test]
fn weights_follow_linear_step_and_cubic_tracks() {
    let s = spec();
    // Defaults without a track.
    assert_eq!(weights_at::<f32>(&s, 1.0, false), [0.25, 0.0]);
    // LINEAR, clamped outside the clip.
    let linear = [(-1.0, [0.0, 0.0]), (0.5, [0.5, 0.25]), (1.0, [1.0, 0.5]), (1.5, [0.5, 0.75]), (3.0, [0.0, 1.0])];
    check::<f32>(&s, &linear, 1e-6);
    check::<Q16>(&s, &linear, 1e-4);
    // STEP holds each key.
    let mut step = spec();
    step.tracks[0].interp = INTERP_STEP;
    check::<f32>(&step, &[(0.5, [0.0, 0.0]), (1.0, [1.0, 0.5]), (1.99, [1.0, 0.5]), (2.0, [0.0, 1.0])], 0.0);
    // CUBICSPLINE: in-tangent, value, out-tangent per key. At s = ½ between keys 0 and 1
    // (td = 1): (v0 + v1)/2 + (b0 − a1)/8.
    let mut cubic = spec();
    cubic.tracks[0] = Track {
        interp: INTERP_CUBIC,
        format: FORMAT_F32,
        times: std::vec![0.0, 1.0],
        values: std::vec![0.0, 0.0, 0.0, 0.0, 2.0, -1.0, 4.0, 0.0, 1.0, 1.0, 0.0, 0.0],
    };
    let want = [0.5 + (2.0 - 4.0) / 8.0, 0.5 + (-1.0 - 0.0) / 8.0];
    check::<f32>(&cubic, &[(0.5, want), (1.0, [1.0, 1.0]), (0.0, [0.0, 0.0])], 1e-6);
    check::<Q16>(&cubic, &[(0.5, want)], 1e-4);
    // Quantized LINEAR keys: 16-bit values in [min, min + scale).
    let mut quantized = spec();
    quantized.tracks[0].format = FORMAT_QUANTIZED;
    check::<f32>(&quantized, &linear[1..4], 4e-5);
}

fn rejects(s: &Spec, want: ParseError) {
    let bytes = build(s);
    assert_eq!(Asset::parse(&bytes).err(), Some(want));
}

#[test]
fn morph_sections_are_validated() {
    rejects(&Spec { mesh: 1, ..spec() }, ParseError::MorphMeshMismatch { section: 3 });
    rejects(&Spec { part_vertices: 5, ..spec() }, ParseError::MorphMeshMismatch { section: 3 });
    rejects(&Spec { t0_format: 7, ..spec() }, ParseError::BadMorphTarget { section: 3, part: 0, target: 0 });
    rejects(&Spec { t1_shifts: [32, 0, 8], ..spec() }, ParseError::BadMorphTarget { section: 3, part: 0, target: 1 });
    rejects(
        &Spec { t0_vertices: std::vec![3, 1], ..spec() },
        ParseError::MorphVertexIndex { section: 3, part: 0, target: 0 },
    );
    rejects(
        &Spec { t0_vertices: std::vec![1, 4], ..spec() },
        ParseError::MorphVertexIndex { section: 3, part: 0, target: 0 },
    );
    rejects(&Spec { defaults: std::vec![f32::NAN, 0.0], ..spec() }, ParseError::NonFinite { section: 3 });
    rejects(&Spec { clip: 1, ..spec() }, ParseError::WeightClipMismatch { section: 4 });
    rejects(&Spec { range: (0.0, 3.0), ..spec() }, ParseError::WeightClipMismatch { section: 4 });
    rejects(&Spec { track_mesh: 1, ..spec() }, ParseError::WeightTrackMesh { section: 4, track: 0 });
    let mut late = spec();
    late.tracks[0].times[2] = 2.5;
    rejects(&late, ParseError::UnsortedKeys { section: 4, track: 0 });
    let mut cubic_q = spec();
    cubic_q.tracks[0].interp = INTERP_CUBIC;
    cubic_q.tracks[0].format = FORMAT_QUANTIZED;
    rejects(&cubic_q, ParseError::BadTrack { section: 4, track: 0 });
    // Truncated counts are overruns.
    let mut bytes = build(&spec());
    let table = HEADER_LEN + 3 * SECTION_ENTRY_LEN;
    let off = u32::from_le_bytes([bytes[table + 4], bytes[table + 5], bytes[table + 6], bytes[table + 7]]) as usize;
    bytes[off + 2] = 200; // 200 targets: the default weights run past the section.
    let crc = crc32(&bytes[CRC_START..]);
    bytes[16..20].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(Asset::parse(&bytes).err(), Some(ParseError::SectionOverrun { section: 3 }));
}
