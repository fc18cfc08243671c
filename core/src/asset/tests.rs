//! Tests of the parser and of clip sampling on small hand-built files.

extern crate std;

use super::format::*;
use super::writer::Writer;
use super::*;
use crate::clip::RotationInterpolation;
use crate::job::{JobError, SamplingJob};
use crate::math::{Quat, SoaTransform, Vec3};
use crate::real::Real;
use crate::skeleton::{Skeleton, SkeletonError};

struct Track<'a> {
    joint: u16,
    target: u8,
    interp: u8,
    format: u8,
    keys: u16,
    data: &'a dyn Fn(&mut Writer),
}

/// Writes a skeleton of `n` chained joints and one clip with `tracks` over `[start, end]`.
fn build(buf: &mut [u8], n: u16, start: f32, end: f32, tracks: &[Track]) -> usize {
    let mut w = Writer::new(buf);
    let table = w.begin_file(2);
    let s0 = w.len();
    w.u16(n);
    for i in 0..n {
        w.i16(i as i16 - 1);
    }
    for i in 0..n {
        for v in [0.0, i as f32, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0] {
            w.f32(v);
        }
    }
    for i in 0..n {
        let name = [b'j', b'0' + i as u8];
        w.str(core::str::from_utf8(&name).unwrap());
    }
    w.section(table, 0, KIND_SKELETON, s0);
    let s1 = w.len();
    w.str("clip");
    w.f32(start);
    w.f32(end);
    w.u16(tracks.len() as u16);
    let dir = w.len();
    for _ in tracks {
        w.bytes(&[0; TRACK_ENTRY_LEN]);
    }
    for (i, t) in tracks.iter().enumerate() {
        let off = (w.len() - s1) as u32;
        (t.data)(&mut w);
        let e = dir + i * TRACK_ENTRY_LEN;
        let mut entry = [0u8; TRACK_ENTRY_LEN];
        entry[..2].copy_from_slice(&t.joint.to_le_bytes());
        entry[2] = t.target;
        entry[3] = t.interp;
        entry[4] = t.format;
        entry[6..8].copy_from_slice(&t.keys.to_le_bytes());
        entry[8..12].copy_from_slice(&off.to_le_bytes());
        w.patch_bytes(e, &entry);
    }
    w.section(table, 1, KIND_CLIP, s1);
    w.finish()
}

fn f32s(w: &mut Writer, v: &[f32]) {
    for &x in v {
        w.f32(x);
    }
}

fn sample_tracks() -> [Track<'static>; 4] {
    [
        // Joint 0 translation, linear, lossless.
        Track {
            joint: 0,
            target: TARGET_TRANSLATION,
            interp: INTERP_LINEAR,
            format: FORMAT_F32,
            keys: 3,
            data: &|w| f32s(w, &[0.0, 1.0, 3.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 3.0, 2.0, 1.0]),
        },
        // Joint 1 rotation, linear, quantized: 0° to 90° about Z over the whole clip.
        Track {
            joint: 1,
            target: TARGET_ROTATION,
            interp: INTERP_LINEAR,
            format: FORMAT_QUANTIZED,
            keys: 2,
            data: &|w| {
                w.u16(0);
                w.u16(65535);
                w.bytes(&pack_rotation([0.0, 0.0, 0.0, 1.0]));
                let h = core::f32::consts::FRAC_1_SQRT_2;
                w.bytes(&pack_rotation([0.0, 0.0, h, h]));
            },
        },
        // Joint 2 scale, step, lossless, starting after the clip start.
        Track {
            joint: 2,
            target: TARGET_SCALE,
            interp: INTERP_STEP,
            format: FORMAT_F32,
            keys: 2,
            data: &|w| f32s(w, &[0.5, 2.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0]),
        },
        // Joint 1 translation, cubic spline (in-tangent, value, out-tangent per key).
        Track {
            joint: 1,
            target: TARGET_TRANSLATION,
            interp: INTERP_CUBIC,
            format: FORMAT_F32,
            keys: 2,
            data: &|w| {
                f32s(w, &[0.0, 2.0]);
                f32s(w, &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
                f32s(w, &[1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
            },
        },
    ]
}

fn sample(asset: &Asset, t: f32, cursor: &mut [u16], rot: RotationInterpolation) -> [SoaTransform<f32>; 1] {
    let skel: Skeleton<f32, 1> = asset.skeleton().unwrap().to_skeleton().unwrap();
    sample_with(asset.clip(0).unwrap(), skel.rest_pose(), t, rot, cursor)
}

/// Samples `clip` at `t` into a one-element pose with the sampling state `state` (kept by the
/// caller between calls).
fn sample_with<C: crate::job::sampling::TrackState<f32>>(
    clip: crate::clip::Clip<'_>,
    rest: &[SoaTransform<f32>],
    t: f32,
    rot: RotationInterpolation,
    state: &mut [C],
) -> [SoaTransform<f32>; 1] {
    let mut out = [SoaTransform::IDENTITY; 1];
    SamplingJob { clip, time: t, rotation: rot, rest_pose: rest, cursor: state, output: &mut out }.run().unwrap();
    out
}

#[test]
fn writes_and_parses_a_file() {
    let mut buf = [0u8; 1024];
    let tracks = sample_tracks();
    let len = build(&mut buf, 3, 0.0, 3.0, &tracks);
    // A first pass with no buffer measures the same size.
    assert_eq!(build(&mut [], 3, 0.0, 3.0, &tracks), len);
    let a = Asset::parse(&buf[..len]).unwrap();
    let s = a.skeleton().unwrap();
    assert_eq!(s.num_joints(), 3);
    assert_eq!(s.name(2), Some("j2"));
    assert_eq!(s.parent(2), 1);
    let c = a.clip(0).unwrap();
    assert_eq!(c.name(), "clip");
    assert_eq!(c.num_tracks(), 4);
    assert_eq!(c.num_keys(), 9);
    assert_eq!(c.joint_bound(), 3);
    assert_eq!(a.clip_by_name("clip").map(|c| c.num_tracks()), Some(4));
    assert!(a.clip_by_name("nope").is_none());
    // Clip reports are optional.
    assert_eq!(a.clip_report(0), None);
}

#[test]
fn sampling_follows_gltf_interpolation() {
    let mut buf = [0u8; 1024];
    let len = build(&mut buf, 3, 0.0, 3.0, &sample_tracks());
    let a = Asset::parse(&buf[..len]).unwrap();
    let mut cur = [0u16; 4];
    let p = sample(&a, 0.5, &mut cur, RotationInterpolation::Slerp)[0];
    // Linear translation.
    assert_eq!(p.lane(0).translation, Vec3::new(0.5, 1.0, 1.5));
    // Quantized rotation at 1/6 of the way from 0° to 90°: 15° about Z.
    let e = Quat::from_axis_angle(Vec3::Z, 15.0f32.to_radians());
    assert!(p.lane(1).rotation.angle_between(e) < 2.0e-4);
    // Step scale: the first key holds from before its time until the next key.
    assert_eq!(p.lane(2).scale, Vec3::ONE);
    let p = sample(&a, 1.999, &mut cur, RotationInterpolation::Slerp)[0];
    assert_eq!(p.lane(2).scale, Vec3::ONE);
    let p = sample(&a, 2.0, &mut cur, RotationInterpolation::Slerp)[0];
    assert_eq!(p.lane(2).scale, Vec3::splat(2.0));
    // Cubic spline at the middle of [0, 2]: td = 2, s = ½ gives 0.25·1 + 0.5·1 − 0.25·1 = 0.5.
    let p = sample(&a, 1.0, &mut cur, RotationInterpolation::Slerp)[0];
    assert!((p.lane(1).translation.x - 0.5).abs() < 1.0e-6);
    // After its last key (t = 2) the cubic track holds its last value.
    let p = sample(&a, 2.5, &mut cur, RotationInterpolation::Slerp)[0];
    assert_eq!(p.lane(1).translation, Vec3::new(1.0, 0.0, 0.0));
    // Exact at keys; clamped outside the clip.
    let p = sample(&a, 1.0, &mut cur, RotationInterpolation::NlerpCorrected)[0];
    assert_eq!(p.lane(0).translation, Vec3::new(1.0, 2.0, 3.0));
    let p = sample(&a, 99.0, &mut cur, RotationInterpolation::NlerpCorrected)[0];
    assert_eq!(p.lane(0).translation, Vec3::new(3.0, 2.0, 1.0));
    let p = sample(&a, -5.0, &mut cur, RotationInterpolation::NlerpCorrected)[0];
    assert_eq!(p.lane(0).translation, Vec3::ZERO);
    let p = sample(&a, f32::NAN, &mut cur, RotationInterpolation::NlerpCorrected)[0];
    assert_eq!(p.lane(0).translation, Vec3::ZERO);
    // Untracked properties keep the rest pose (joint 2's translation is (0, 2, 0)).
    assert_eq!(p.lane(2).translation, Vec3::new(0.0, 2.0, 0.0));
    // Padding lane untouched: identity.
    assert_eq!(p.lane(3), crate::math::Transform::IDENTITY);
}

#[test]
fn cursor_is_only_a_hint() {
    let mut buf = [0u8; 1024];
    let len = build(&mut buf, 3, 0.0, 3.0, &sample_tracks());
    let a = Asset::parse(&buf[..len]).unwrap();
    let mut running = [0u16; 4];
    let times = [0.0, 0.3, 0.9, 1.0, 1.7, 2.9, 3.0, 0.1, 2.2, 1.1, 0.0, 2.5];
    for t in times {
        for garbage in [0u16, 1, 7, u16::MAX] {
            let mut fresh = [garbage; 4];
            let a1 = sample(&a, t, &mut running, RotationInterpolation::NlerpCorrected);
            let a2 = sample(&a, t, &mut fresh, RotationInterpolation::NlerpCorrected);
            assert_eq!(a1, a2, "t = {t}, cursor {garbage}");
        }
    }
}

#[test]
fn sampling_validity() {
    let mut buf = [0u8; 1024];
    let len = build(&mut buf, 3, 0.0, 3.0, &sample_tracks());
    let a = Asset::parse(&buf[..len]).unwrap();
    let skel: Skeleton<f32, 1> = a.skeleton().unwrap().to_skeleton().unwrap();
    let sentinel = SoaTransform {
        translation: crate::math::SoaVec3 { x: [9.0; 4], y: [9.0; 4], z: [9.0; 4] },
        ..SoaTransform::IDENTITY
    };
    // Cursor too small.
    let mut out = [sentinel; 1];
    let mut cur = [0u16; 3];
    let mut job = SamplingJob {
        clip: a.clip(0).unwrap(),
        time: 0.5,
        rotation: RotationInterpolation::Slerp,
        rest_pose: skel.rest_pose(),
        cursor: &mut cur,
        output: &mut out,
    };
    assert_eq!(job.validate(), Err(JobError::ContextTooSmall));
    assert_eq!(job.run(), Err(JobError::ContextTooSmall));
    assert_eq!(out[0], sentinel);
    // Output too small.
    let mut cur = [0u16; 4];
    let mut job = SamplingJob {
        clip: a.clip(0).unwrap(),
        time: 0.5,
        rotation: RotationInterpolation::Slerp,
        rest_pose: &[SoaTransform::IDENTITY; 2],
        cursor: &mut cur,
        output: &mut out,
    };
    assert_eq!(job.run(), Err(JobError::OutputTooSmall));
    assert_eq!(out[0], sentinel);
    // A pose too short for the clip's joints (a skeleton of 0 joints).
    let mut job = SamplingJob {
        clip: a.clip(0).unwrap(),
        time: 0.5,
        rotation: RotationInterpolation::Slerp,
        rest_pose: &[],
        cursor: &mut cur,
        output: &mut out,
    };
    assert_eq!(job.run(), Err(JobError::JointIndexOutOfRange));
    assert_eq!(out[0], sentinel);
}

#[test]
fn q16_sampling_matches_f32() {
    let mut buf = [0u8; 1024];
    let len = build(&mut buf, 3, 0.0, 3.0, &sample_tracks());
    let a = Asset::parse(&buf[..len]).unwrap();
    let sk: Skeleton<crate::Q16, 1> = a.skeleton().unwrap().to_skeleton().unwrap();
    for i in 0..=30 {
        let t = i as f32 * 0.1;
        let f = sample(&a, t, &mut [0; 4], RotationInterpolation::NlerpCorrected)[0];
        let mut out = [SoaTransform::IDENTITY; 1];
        SamplingJob {
            clip: a.clip(0).unwrap(),
            time: crate::Q16::from_f32(t),
            rotation: RotationInterpolation::NlerpCorrected,
            rest_pose: sk.rest_pose(),
            cursor: &mut [0; 4],
            output: &mut out,
        }
        .run()
        .unwrap();
        for l in 0..3 {
            let (x, y) = (f.lane(l), out[0].lane(l));
            let d = (x.translation
                - Vec3::new(y.translation.x.to_f32(), y.translation.y.to_f32(), y.translation.z.to_f32()))
            .max_abs();
            assert!(d < 5.0e-4, "t = {t} lane {l}: {d}");
            let q =
                Quat::new(y.rotation.x.to_f32(), y.rotation.y.to_f32(), y.rotation.z.to_f32(), y.rotation.w.to_f32());
            assert!(x.rotation.angle_between(q) < 1.0e-3, "t = {t} lane {l}");
        }
    }
}

#[test]
fn corrupt_files_are_rejected_without_panics() {
    let mut buf = [0u8; 1024];
    let len = build(&mut buf, 3, 0.0, 3.0, &sample_tracks());
    let good = &buf[..len];
    // Every truncation fails: before the length field is read, as truncated; after it, as a
    // length mismatch.
    for cut in (0..len).step_by(if cfg!(miri) { 5 } else { 1 }) {
        let want = if cut < 16 { ParseError::Truncated } else { ParseError::LengthMismatch { declared: len as u32 } };
        assert_eq!(Asset::parse(&good[..cut]).err(), Some(want), "truncated at {cut}");
    }
    // Bad magic, version, length, checksum.
    let mut b = [0u8; 1024];
    b[..len].copy_from_slice(good);
    b[0] ^= 1;
    assert_eq!(Asset::parse(&b[..len]).err(), Some(ParseError::BadMagic));
    b[..len].copy_from_slice(good);
    b[8] = 9;
    assert_eq!(Asset::parse(&b[..len]).err(), Some(ParseError::UnsupportedVersion { found: 9 }));
    b[..len].copy_from_slice(good);
    b[len] = 0;
    assert!(matches!(Asset::parse(&b[..len + 1]), Err(ParseError::LengthMismatch { .. })));
    // Every single-bit flip past the checksummed offset is caught by the checksum.
    let stored = u32::from_le_bytes([good[16], good[17], good[18], good[19]]);
    for i in (CRC_START..len).step_by(if cfg!(miri) { 5 } else { 1 }) {
        b[..len].copy_from_slice(good);
        b[i] ^= 0x10;
        let computed = crc32(&b[CRC_START..len]);
        assert_ne!(computed, stored);
        assert_eq!(
            Asset::parse(&b[..len]).err(),
            Some(ParseError::ChecksumMismatch { stored, computed }),
            "flip at {i}"
        );
    }
}

/// Rebuilds the file with one track replaced (a valid checksum), to reach content checks.
fn parse_with(track: Track) -> Result<(), ParseError> {
    let mut buf = [0u8; 1024];
    let mut tracks = sample_tracks();
    tracks[0] = track;
    let len = build(&mut buf, 3, 0.0, 3.0, &tracks);
    Asset::parse(&buf[..len]).map(|_| ())
}

#[test]
fn bad_tracks_give_specific_errors() {
    let t = |joint, target, interp, format, keys, data: &'static dyn Fn(&mut Writer)| Track {
        joint,
        target,
        interp,
        format,
        keys,
        data,
    };
    let lin = &|w: &mut Writer| f32s(w, &[0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    assert_eq!(parse_with(t(0, 0, 1, 0, 2, lin)), Ok(()));
    assert_eq!(parse_with(t(3, 0, 1, 0, 2, lin)), Err(ParseError::JointOutOfRange { section: 1 }));
    assert_eq!(parse_with(t(0, 3, 1, 0, 2, lin)), Err(ParseError::BadTrack { section: 1, track: 0 }));
    assert_eq!(parse_with(t(0, 0, 3, 0, 2, lin)), Err(ParseError::BadTrack { section: 1, track: 0 }));
    assert_eq!(parse_with(t(0, 0, 1, 2, 2, lin)), Err(ParseError::BadTrack { section: 1, track: 0 }));
    assert_eq!(parse_with(t(0, 0, 1, 0, 0, lin)), Err(ParseError::BadTrack { section: 1, track: 0 }));
    // Quantized cubic splines do not exist.
    assert_eq!(
        parse_with(t(0, 1, 2, 1, 1, &|w| {
            w.u16(0);
            w.bytes(&[0; 6])
        })),
        Err(ParseError::BadTrack { section: 1, track: 0 })
    );
    // Every key format is decoded in this build (the firmware probe's host tests check the
    // refusal of formats left out); an unknown format is not one.
    assert!([FORMAT_F32, FORMAT_QUANTIZED, FORMAT_PACKED].into_iter().all(key_format_enabled));
    assert!(!key_format_enabled(FORMAT_PACKED + 1));
    let disabled = ParseError::KeyFormatDisabled { section: 1, track: 2, format: FORMAT_QUANTIZED };
    assert!(std::format!("{disabled}").contains("`clip-quantized`"));
    // Same joint property twice (track 3 animates joint 1's translation).
    assert_eq!(parse_with(t(1, 0, 1, 0, 2, lin)), Err(ParseError::DuplicateTrack { section: 1, track: 3 }));
    // Unsorted, repeated and out-of-range times, NaN times and values.
    assert_eq!(
        parse_with(t(0, 0, 1, 0, 2, &|w| f32s(w, &[1.0, 0.5, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]))),
        Err(ParseError::UnsortedKeys { section: 1, track: 0 })
    );
    assert_eq!(
        parse_with(t(0, 0, 1, 0, 2, &|w| f32s(w, &[1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]))),
        Err(ParseError::UnsortedKeys { section: 1, track: 0 })
    );
    assert_eq!(
        parse_with(t(0, 0, 1, 0, 2, &|w| f32s(w, &[1.0, 4.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]))),
        Err(ParseError::UnsortedKeys { section: 1, track: 0 })
    );
    assert_eq!(
        parse_with(t(0, 0, 1, 0, 2, &|w| f32s(w, &[0.0, f32::NAN, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]))),
        Err(ParseError::NonFinite { section: 1 })
    );
    assert_eq!(
        parse_with(t(0, 0, 1, 0, 2, &|w| f32s(w, &[0.0, 1.0, 0.0, f32::INFINITY, 0.0, 1.0, 1.0, 1.0]))),
        Err(ParseError::NonFinite { section: 1 })
    );
    // Quantized times must increase too.
    assert_eq!(
        parse_with(t(0, 1, 1, 1, 2, &|w| {
            w.u16(5);
            w.u16(5);
            w.bytes(&[0; 12])
        })),
        Err(ParseError::UnsortedKeys { section: 1, track: 0 })
    );
    // Data shorter than declared.
    assert!(parse_with(t(0, 0, 1, 0, 3, lin)).is_err());
}

#[test]
fn bad_skeletons_give_specific_errors() {
    let mut buf = [0u8; 1024];
    let len = build(&mut buf, 3, 0.0, 3.0, &[]);
    let good = Asset::parse(&buf[..len]);
    assert!(good.is_ok());
    // Parent of joint 1 pointing at joint 2 (after it): patch and re-checksum.
    let parents_at = HEADER_LEN + 2 * SECTION_ENTRY_LEN + 2;
    let mut b = [0u8; 1024];
    b[..len].copy_from_slice(&buf[..len]);
    b[parents_at + 2..parents_at + 4].copy_from_slice(&2i16.to_le_bytes());
    b[parents_at + 4..parents_at + 6].copy_from_slice(&0i16.to_le_bytes());
    let crc = crc32(&b[CRC_START..len]);
    b[16..20].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(
        Asset::parse(&b[..len]).err(),
        Some(ParseError::Skeleton(SkeletonError::ParentAfterChild { joint: 1, parent: 2 }))
    );
    b[parents_at + 4..parents_at + 6].copy_from_slice(&1i16.to_le_bytes());
    let crc = crc32(&b[CRC_START..len]);
    b[16..20].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(Asset::parse(&b[..len]).err(), Some(ParseError::Skeleton(SkeletonError::Cycle { joint: 1 })));
    b[parents_at + 2..parents_at + 4].copy_from_slice(&7i16.to_le_bytes());
    let crc = crc32(&b[CRC_START..len]);
    b[16..20].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(
        Asset::parse(&b[..len]).err(),
        Some(ParseError::Skeleton(SkeletonError::ParentOutOfRange { joint: 1, parent: 7 }))
    );
    // A NaN rest value.
    b[..len].copy_from_slice(&buf[..len]);
    let rest_at = parents_at + 6;
    b[rest_at + 40..rest_at + 44].copy_from_slice(&f32::NAN.to_le_bytes());
    let crc = crc32(&b[CRC_START..len]);
    b[16..20].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(Asset::parse(&b[..len]).err(), Some(ParseError::Skeleton(SkeletonError::NonFiniteRest { joint: 1 })));
}

#[test]
fn track_cache_matches_the_cursor_path() {
    use crate::clip::TrackCache;
    let mut buf = [0u8; 1024];
    let len = build(&mut buf, 3, 0.0, 3.0, &sample_tracks());
    let a = Asset::parse(&buf[..len]).unwrap();
    let skel: Skeleton<f32, 1> = a.skeleton().unwrap().to_skeleton().unwrap();
    // Forward at 60 Hz with wraps, backward jumps, exact key times, and out-of-range times.
    let mut times = [0.0f32; 400];
    let mut t = 0.0;
    for (i, slot) in times.iter_mut().enumerate() {
        t += 1.0 / 60.0;
        if t > 3.0 {
            t -= 3.0;
        }
        *slot = match i % 97 {
            13 => 1.0,
            14 => 2.0,
            15 => -1.0,
            16 => 4.0,
            17 => 0.5,
            _ => t,
        };
    }
    for rot in [RotationInterpolation::NlerpCorrected, RotationInterpolation::Slerp] {
        let mut cursor = [0u16; 4];
        let mut cache = [TrackCache::EMPTY; 4];
        let mut soa = [crate::clip::SoaTrackCache::EMPTY; 1];
        for &t in &times[..if cfg!(miri) { 40 } else { times.len() }] {
            let clip = a.clip(0).unwrap();
            let a1 = sample_with(clip, skel.rest_pose(), t, rot, &mut cursor);
            let a2 = sample_with(clip, skel.rest_pose(), t, rot, &mut cache);
            let a3 = sample_with(clip, skel.rest_pose(), t, rot, &mut soa);
            for l in 0..4 {
                let x = a1[0].lane(l);
                for y in [a2[0].lane(l), a3[0].lane(l)] {
                    assert!((x.translation - y.translation).max_abs() < 1.0e-6, "t = {t}, lane {l}");
                    assert!((x.scale - y.scale).max_abs() < 1.0e-6, "t = {t}, lane {l}");
                    assert!(x.rotation.angle_between(y.rotation) < 1.0e-5, "t = {t}, lane {l}");
                }
                // The SoA cache computes the per-track cache's formulas in the same order.
                let z = a2[0].lane(l);
                assert_eq!((a3[0].lane(l).translation, a3[0].lane(l).scale), (z.translation, z.scale));
                assert!(a3[0].lane(l).rotation.angle_between(z.rotation) < 1.0e-6);
            }
        }
    }
    // A cache filled from another clip's tracks refills instead of returning stale values.
    let mut buf2 = [0u8; 1024];
    let mut other = sample_tracks();
    other[0] = Track {
        joint: 0,
        target: TARGET_TRANSLATION,
        interp: INTERP_LINEAR,
        format: FORMAT_F32,
        keys: 2,
        data: &|w| f32s(w, &[0.0, 3.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0]),
    };
    let len2 = build(&mut buf2, 3, 0.0, 3.0, &other);
    let b = Asset::parse(&buf2[..len2]).unwrap();
    let nlerp = RotationInterpolation::NlerpCorrected;
    let mut cache = [TrackCache::EMPTY; 4];
    let mut soa = [crate::clip::SoaTrackCache::EMPTY; 1];
    let mut out = [SoaTransform::IDENTITY; 1];
    for clip in [a.clip(0).unwrap(), b.clip(0).unwrap()] {
        out = sample_with(clip, skel.rest_pose(), 0.5, nlerp, &mut cache);
    }
    assert_eq!(out[0].lane(0).translation, Vec3::splat(5.0));
    for clip in [a.clip(0).unwrap(), b.clip(0).unwrap()] {
        out = sample_with(clip, skel.rest_pose(), 0.5, nlerp, &mut soa);
    }
    assert_eq!(out[0].lane(0).translation, Vec3::splat(5.0));
    // Too few entries: one per SoA element of the pose.
    let mut none: [crate::clip::SoaTrackCache<f32>; 0] = [];
    let job = SamplingJob {
        clip: a.clip(0).unwrap(),
        time: 0.5,
        rotation: RotationInterpolation::NlerpCorrected,
        rest_pose: skel.rest_pose(),
        cursor: &mut none,
        output: &mut out,
    };
    assert_eq!(job.validate(), Err(crate::job::JobError::ContextTooSmall));
}

#[test]
fn slerp_flag_forces_exact_slerp() {
    let mut buf = [0u8; 1024];
    let len = build(&mut buf, 3, 0.0, 3.0, &sample_tracks());
    // Track 1 is the quantized rotation; its flags byte is at directory entry 1, offset 5.
    let dir = {
        // Section 1 (the clip) starts where its table entry says; its directory follows the
        // name (1 + 4 bytes), start and end (8) and the track count (2).
        let at = HEADER_LEN + SECTION_ENTRY_LEN + 4;
        u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]) as usize + 1 + 4 + 4 + 4 + 2
    };
    let flag_at = dir + TRACK_ENTRY_LEN + 5;
    let patch = |b: &mut [u8], v: u8| {
        b[flag_at] = v;
        let crc = crc32(&b[CRC_START..len]);
        b[16..20].copy_from_slice(&crc.to_le_bytes());
    };
    let mut flagged = buf;
    patch(&mut flagged, TRACK_FLAG_SLERP);
    let a = Asset::parse(&flagged[..len]).unwrap();
    let plain = Asset::parse(&buf[..len]).unwrap();
    for t in [0.4f32, 1.3, 2.2] {
        let f = sample(&a, t, &mut [0; 4], RotationInterpolation::NlerpCorrected)[0].lane(1).rotation;
        let s = sample(&plain, t, &mut [0; 4], RotationInterpolation::Slerp)[0].lane(1).rotation;
        assert_eq!(f, s, "t = {t}");
        let skel: Skeleton<f32, 1> = a.skeleton().unwrap().to_skeleton().unwrap();
        let (clip, nlerp) = (a.clip(0).unwrap(), RotationInterpolation::NlerpCorrected);
        let cached = sample_with(clip, skel.rest_pose(), t, nlerp, &mut [crate::clip::TrackCache::EMPTY; 4]);
        assert!(cached[0].lane(1).rotation.angle_between(s) < 1.0e-6, "cached, t = {t}");
        let lanes = sample_with(clip, skel.rest_pose(), t, nlerp, &mut [crate::clip::SoaTrackCache::EMPTY; 1]);
        assert!(lanes[0].lane(1).rotation.angle_between(s) < 1.0e-6, "SoA cache, t = {t}");
    }
    let mut bad = buf;
    patch(&mut bad, 2);
    assert_eq!(Asset::parse(&bad[..len]).err(), Some(ParseError::BadTrack { section: 1, track: 1 }));
}

/// One skinned mesh part as written by [`build_mesh`].
#[derive(Clone)]
struct Part {
    palette: [u16; 3],
    vertices: u32,
    influences: u8,
    joints: [u16; 8],
    weights: [f32; 8],
    index_size: u8,
    indices: [u32; 6],
    index_count: u32,
    attrs: u8,
    texcoords: [f32; 8],
    colors: [u8; 16],
    material: [u8; MATERIAL_LEN],
}

/// An untextured material: white factor, no texture, repeat, linear.
const PLAIN: [u8; MATERIAL_LEN] = [255, 255, 255, 255, 0xff, 0xff, 0, 0, 1, 1, 0, 0];

impl Part {
    /// Four vertices, two influences each, two triangles.
    fn good() -> Self {
        Part {
            palette: [0, 1, 2],
            vertices: 4,
            influences: 2,
            joints: [0, 1, 1, 2, 2, 0, 0, 0],
            weights: [0.5, 0.5, 1.0, 0.0, 0.25, 0.75, 1.0, 0.0],
            index_size: 2,
            indices: [0, 1, 2, 2, 1, 3],
            index_count: 6,
            attrs: 0,
            texcoords: [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0],
            colors: [255; 16],
            material: PLAIN,
        }
    }
}

/// A skeleton of 3 joints, one skin of 3 joints (`bind` as the inverse bind matrix of joint 1),
/// a mesh of two parts, the second being `part`, and a 2 × 1 RGBA8 texture.
fn build_mesh(buf: &mut [u8], part: &Part, bind: f32) -> usize {
    build_textured(buf, part, bind, &[TEXEL_RGBA8, 0, 2, 0, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8])
}

/// [`build_mesh`] with `texture` as the texture section's body after its name.
fn build_textured(buf: &mut [u8], part: &Part, bind: f32, texture: &[u8]) -> usize {
    let mut w = Writer::new(buf);
    let table = w.begin_file(4);
    let s0 = w.len();
    w.u16(3);
    for i in 0..3 {
        w.i16(i - 1);
    }
    for _ in 0..3 {
        f32s(&mut w, &[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]);
    }
    for name in ["a", "b", "c"] {
        w.str(name);
    }
    w.section(table, 0, KIND_SKELETON, s0);
    let s1 = w.len();
    w.str("skin");
    w.u16(3);
    for j in 0..3 {
        w.u16(j);
    }
    for j in 0..3 {
        for k in 0..16 {
            w.f32(if j == 1 && k == 5 {
                bind
            } else if k % 5 == 0 {
                1.0
            } else {
                0.0
            });
        }
    }
    w.section(table, 1, KIND_SKIN, s1);
    let s2 = w.len();
    w.str("mesh");
    w.u16(0);
    w.u16(NONE);
    w.bytes(&[255; 4]);
    w.u16(2);
    for p in [&Part::good(), part] {
        w.u16(3);
        p.palette.iter().for_each(|&j| w.u16(j));
        w.u32(p.vertices);
        w.u8(p.influences);
        w.u8(p.attrs);
        for v in 0..4 {
            f32s(&mut w, &[v as f32, 0.0, 0.0]);
        }
        p.joints.iter().for_each(|&j| w.u16(j));
        f32s(&mut w, &p.weights);
        w.u32(p.index_count);
        w.u8(p.index_size);
        for &i in &p.indices {
            if p.index_size == 4 {
                w.u32(i);
            } else {
                w.u16(i as u16);
            }
        }
        if p.attrs & ATTR_TEXCOORDS != 0 {
            f32s(&mut w, &p.texcoords);
        }
        if p.attrs & ATTR_COLORS != 0 {
            w.bytes(&p.colors);
        }
        w.bytes(&p.material);
    }
    w.section(table, 2, KIND_MESH, s2);
    let s3 = w.len();
    w.str("tex");
    w.bytes(texture);
    w.section(table, 3, KIND_TEXTURE, s3);
    w.finish()
}

fn parse_mesh(part: &Part) -> Result<(), ParseError> {
    let mut buf = [0u8; 1024];
    let len = build_mesh(&mut buf, part, 1.0);
    Asset::parse(&buf[..len]).map(|_| ())
}

#[test]
fn bad_meshes_give_specific_errors() {
    assert_eq!(parse_mesh(&Part::good()), Ok(()));
    let with = |f: &dyn Fn(&mut Part)| {
        let mut p = Part::good();
        f(&mut p);
        parse_mesh(&p)
    };
    // Triangles: a repeated vertex, a vertex past the part, a count that is not a multiple of 3.
    assert_eq!(with(&|p| p.indices[4] = 2), Err(ParseError::DegenerateTriangle { section: 2, part: 1, triangle: 1 }));
    assert_eq!(
        with(&|p| p.indices[2] = 4),
        Err(ParseError::IndexOutOfRange { section: 2, part: 1, triangle: 0, vertex: 4 })
    );
    assert_eq!(
        with(&|p| {
            p.index_size = 4;
            p.indices[5] = 0x0001_0003;
        }),
        Err(ParseError::IndexOutOfRange { section: 2, part: 1, triangle: 1, vertex: 0x0001_0003 })
    );
    // Five indices (the sixth is left over).
    assert!(matches!(with(&|p| p.index_count = 5), Err(ParseError::BadIndices { section: 2 })));
    // Weights: negative, all zero (also as −0), NaN.
    assert_eq!(with(&|p| p.weights[5] = -0.25), Err(ParseError::NegativeWeight { section: 2, part: 1, vertex: 2 }));
    assert_eq!(with(&|p| p.weights[2] = 0.0), Err(ParseError::ZeroWeights { section: 2, part: 1, vertex: 1 }));
    assert_eq!(
        with(&|p| p.weights[6..8].copy_from_slice(&[-0.0, 0.0])),
        Err(ParseError::ZeroWeights { section: 2, part: 1, vertex: 3 })
    );
    assert_eq!(with(&|p| p.weights[0] = f32::NAN), Err(ParseError::NonFinite { section: 2 }));
    // Joint indices past the palette or the skin.
    assert_eq!(with(&|p| p.joints[3] = 3), Err(ParseError::PaletteOutOfRange { section: 2 }));
    assert_eq!(with(&|p| p.palette[2] = 3), Err(ParseError::PaletteOutOfRange { section: 2 }));
    // Counts larger than the section (the part is the last thing in it): vertices, also
    // 0x1555_5556 whose 12-byte positions wrap to 8 bytes in 32-bit arithmetic, and indices.
    for vertices in [5, u32::MAX, 0x1555_5556] {
        assert_eq!(with(&|p| p.vertices = vertices), Err(ParseError::SectionOverrun { section: 2 }), "{vertices}");
    }
    assert_eq!(with(&|p| p.index_count = u32::MAX), Err(ParseError::SectionOverrun { section: 2 }));
    // A NaN inverse bind matrix names its skin joint.
    let mut buf = [0u8; 1024];
    let len = build_mesh(&mut buf, &Part::good(), f32::INFINITY);
    assert_eq!(Asset::parse(&buf[..len]).err(), Some(ParseError::NonFiniteBind { section: 1, joint: 1 }));
}

#[test]
fn textures_and_materials_are_read_and_checked() {
    // A textured part with vertex colors reads back.
    let textured = |p: &mut Part| {
        p.attrs = ATTR_TEXCOORDS | ATTR_COLORS;
        p.material =
            [200, 100, 50, 255, 0, 0, WRAP_MIRROR, WRAP_CLAMP, FILTER_NEAREST, FILTER_LINEAR_MIPMAP_LINEAR, 1, 0];
        p.colors[4..8].copy_from_slice(&[1, 2, 3, 4]);
    };
    let mut p = Part::good();
    textured(&mut p);
    let mut buf = [0u8; 1024];
    let len = build_mesh(&mut buf, &p, 1.0);
    let asset = Asset::parse(&buf[..len]).unwrap();
    assert_eq!(asset.num_textures(), 1);
    let t = asset.texture(0).unwrap();
    let texture = t.texture();
    assert_eq!(
        (t.name(), texture.width(), texture.height(), texture.format()),
        ("tex", 2, 1, crate::raster::TexelFormat::Rgba8)
    );
    assert_eq!(texture.texels(), &[1, 2, 3, 4, 5, 6, 7, 8]);
    let parts: [MeshPart; 2] = {
        let mut it = asset.mesh(0).unwrap().parts();
        [it.next().unwrap(), it.next().unwrap()]
    };
    assert!(!parts[0].has_texcoords() && !parts[0].has_colors());
    assert_eq!(parts[0].material().texture, None);
    let part = parts[1];
    assert_eq!(part.texcoord::<f32>(3), [1.0, 1.0]);
    assert_eq!(part.color(1), [1, 2, 3, 4]);
    let m = part.material();
    assert_eq!((m.factor, m.texture, m.vertex_colors, m.uses_mipmaps()), ([200, 100, 50, 255], Some(0), true, true));
    let sampler = m.sampler();
    assert_eq!(sampler.wrap_s, crate::raster::Wrap::MirroredRepeat);
    assert_eq!(sampler.wrap_t, crate::raster::Wrap::ClampToEdge);
    assert_eq!(sampler.filter, crate::raster::Filter::Nearest);

    let with = |f: &dyn Fn(&mut Part)| {
        let mut p = Part::good();
        textured(&mut p);
        f(&mut p);
        parse_mesh(&p)
    };
    let bad = Err(ParseError::BadMaterial { section: 2, part: 1 });
    // A texture without texture coordinates; vertex colors asked for but absent.
    assert_eq!(with(&|p| p.attrs = ATTR_COLORS), bad);
    assert_eq!(with(&|p| p.attrs = ATTR_TEXCOORDS), bad);
    // Unknown codes, flags, a non-zero reserved byte.
    for (at, v) in [(6, 3), (7, 9), (8, 2), (9, 6), (10, 2), (11, 1)] {
        assert_eq!(with(&|p| p.material[at] = v), bad, "byte {at} = {v}");
    }
    // A texture past the file's textures.
    assert_eq!(with(&|p| p.material[4] = 1), Err(ParseError::TextureOutOfRange { section: 2, part: 1, texture: 1 }));
    // NaN texture coordinates.
    assert_eq!(with(&|p| p.texcoords[5] = f32::NAN), Err(ParseError::NonFinite { section: 2 }));

    // Texture sections: format, flags, dimensions, data length.
    let tex = |body: &[u8]| {
        let mut buf = [0u8; 1024];
        let len = build_textured(&mut buf, &Part::good(), 1.0, body);
        Asset::parse(&buf[..len]).map(|_| ())
    };
    let bad = Err(ParseError::BadTexture { section: 3 });
    assert_eq!(tex(&[TEXEL_RGB565, 0, 1, 0, 2, 0, 1, 2, 3, 4]), Ok(()));
    assert_eq!(tex(&[2, 0, 1, 0, 1, 0, 1, 2, 3, 4]), bad);
    assert_eq!(tex(&[TEXEL_RGBA8, 1, 1, 0, 1, 0, 1, 2, 3, 4]), bad);
    assert_eq!(tex(&[TEXEL_RGBA8, 0, 0, 0, 1, 0]), bad);
    assert_eq!(tex(&[TEXEL_RGB565, 0, 0x01, 0x10, 1, 0, 0, 0]), bad); // 4097 wide
    assert_eq!(tex(&[TEXEL_RGBA8, 0, 1, 0, 1, 0, 1, 2, 3, 4, 5]), bad); // a byte too many
    assert_eq!(tex(&[TEXEL_RGBA8, 0, 1, 0, 2, 0, 1, 2, 3, 4]), Err(ParseError::SectionOverrun { section: 3 }));
}

#[test]
fn counts_past_a_section_are_overruns() {
    let mut buf = [0u8; 1024];
    let len = build(&mut buf, 3, 0.0, 3.0, &sample_tracks());
    let patch = |at: usize, bytes: &[u8]| {
        let mut b = buf;
        b[at..at + bytes.len()].copy_from_slice(bytes);
        let crc = crc32(&b[CRC_START..len]);
        b[16..20].copy_from_slice(&crc.to_le_bytes());
        Asset::parse(&b[..len]).map(|_| ())
    };
    let section = |i: usize| {
        let at = HEADER_LEN + i * SECTION_ENTRY_LEN + 4;
        u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]) as usize
    };
    // The skeleton's joint count (3 → 4, still below MAX_JOINTS).
    assert_eq!(patch(section(0), &4u16.to_le_bytes()), Err(ParseError::SectionOverrun { section: 0 }));
    // The length of the skeleton's last name ("j2", the section's last bytes), the clip's
    // track count.
    assert_eq!(patch(section(1) - 3, &[200]), Err(ParseError::SectionOverrun { section: 0 }));
    assert_eq!(patch(section(1) + 1 + 4 + 8, &u16::MAX.to_le_bytes()), Err(ParseError::SectionOverrun { section: 1 }));
    // The section count of the header: the table no longer fits the file.
    assert_eq!(patch(20, &u32::MAX.to_le_bytes()), Err(ParseError::Truncated));
    assert_eq!(patch(20, &0x1555_5556u32.to_le_bytes()), Err(ParseError::Truncated));
}

#[test]
fn soa_cache_is_finite_over_the_widest_clip_range() {
    // Keys near ±f32::MAX: held lanes (before the first key, after the last, and untracked
    // joints) see `t − t0` overflow; their parameter must not turn the output into NaN.
    let tracks = [
        Track {
            joint: 0,
            target: TARGET_TRANSLATION,
            interp: INTERP_LINEAR,
            format: FORMAT_F32,
            keys: 2,
            data: &|w| f32s(w, &[-1.0e38, 1.0e38, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
        },
        Track {
            joint: 1,
            target: TARGET_ROTATION,
            interp: INTERP_LINEAR,
            format: FORMAT_F32,
            keys: 2,
            data: &|w| f32s(w, &[-3.0e38, 3.0e38, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.6, 0.8]),
        },
    ];
    let mut buf = [0u8; 1024];
    let len = build(&mut buf, 3, -3.0e38, 3.0e38, &tracks);
    let a = Asset::parse(&buf[..len]).unwrap();
    let skel: Skeleton<f32, 1> = a.skeleton().unwrap().to_skeleton().unwrap();
    let mut soa = [crate::clip::SoaTrackCache::EMPTY; 1];
    let mut cursor = [0u16; 2];
    for t in [3.0e38f32, -3.0e38, 0.0, 2.0e38, -2.0e38, f32::NAN, f32::INFINITY, 1.0e38, -1.0e38] {
        let (clip, nlerp) = (a.clip(0).unwrap(), RotationInterpolation::NlerpCorrected);
        let x = sample_with(clip, skel.rest_pose(), t, nlerp, &mut soa);
        let y = sample_with(clip, skel.rest_pose(), t, nlerp, &mut cursor);
        for l in 0..4 {
            let (p, q) = (x[0].lane(l), y[0].lane(l));
            assert!(p.translation.is_finite() && p.scale.is_finite() && p.rotation.is_finite(), "t = {t}: {p:?}");
            assert!((p.translation - q.translation).max_abs() <= 1.0e-6 * q.translation.max_abs().max(1.0), "t = {t}");
            assert!(p.rotation.angle_between(q.rotation) < 1.0e-6, "t = {t}, lane {l}");
        }
    }
}

/// The graph section: written by `write_graph`, validated by `Asset::parse`, read back by
/// `GraphData::to_graph` in f32 and Q16.
mod graph_section {
    use super::*;
    use crate::controller::{AdditiveReference, ClipEntry, LayerMode};
    use crate::graph::{
        BlendPoint, Condition, FadeCurve, Graph, GraphError, GraphLayer, LayeredGraph, LayeredScratch,
        LayeredStateMachine, Parameter, ParameterKind, Span, State, StateKind, Test, Transition, TransitionBlend,
    };
    use crate::job::mask::Channel;
    use crate::real::Q16;

    const PARAMETERS: [Parameter<'static, f32>; 4] = [
        Parameter { name: "speed", kind: ParameterKind::Float(0.5) },
        Parameter { name: "side", kind: ParameterKind::Float(-1.0) },
        Parameter { name: "grounded", kind: ParameterKind::Bool(true) },
        Parameter { name: "jump", kind: ParameterKind::Trigger },
    ];
    const STATES: [State<'static>; 4] = [
        State { name: "idle", kind: StateKind::Clip(0), looping: true },
        State {
            name: "move",
            kind: StateKind::Blend1d { parameter: 0, points: Span::new(0, 2), sync: true },
            looping: true,
        },
        State {
            name: "strafe",
            kind: StateKind::Blend2d { x: 1, y: 0, points: Span::new(2, 3), sync: false },
            looping: true,
        },
        State { name: "jump", kind: StateKind::Clip(1), looping: false },
    ];
    const POINTS: [BlendPoint<f32>; 5] = [
        BlendPoint { clip: 0, position: [1.0, 0.0] },
        BlendPoint { clip: 1, position: [3.0, 0.0] },
        BlendPoint { clip: 0, position: [0.0, 1.0] },
        BlendPoint { clip: 1, position: [0.0, 3.0] },
        BlendPoint { clip: 1, position: [1.0, 0.0] },
    ];
    const CONDITIONS: [Condition<f32>; 5] = [
        Condition { parameter: 0, test: Test::Greater(0.1) },
        Condition { parameter: 0, test: Test::AtMost(0.1) },
        Condition { parameter: 3, test: Test::Triggered },
        Condition { parameter: 2, test: Test::True },
        Condition { parameter: 1, test: Test::Less(-0.5) },
    ];
    const TRANSITIONS: [Transition<f32>; 4] = [
        Transition {
            from: Some(0),
            to: 1,
            conditions: Span::new(0, 1),
            exit_time: None,
            duration: 0.3,
            blend: TransitionBlend::Inertialize,
        },
        Transition {
            from: Some(1),
            to: 0,
            conditions: Span::new(1, 1),
            exit_time: None,
            duration: 0.25,
            blend: TransitionBlend::Crossfade { curve: FadeCurve::SmoothStep, sync: true },
        },
        Transition {
            from: None,
            to: 3,
            conditions: Span::new(2, 2),
            exit_time: None,
            duration: 0.1,
            blend: TransitionBlend::Crossfade { curve: FadeCurve::Linear, sync: false },
        },
        Transition {
            from: Some(3),
            to: 2,
            conditions: Span::new(4, 1),
            exit_time: Some(1.0),
            duration: 0.2,
            blend: TransitionBlend::Inertialize,
        },
    ];

    fn graph() -> Graph<'static, f32> {
        Graph {
            parameters: &PARAMETERS,
            states: &STATES,
            transitions: &TRANSITIONS,
            points: &POINTS,
            conditions: &CONDITIONS,
            initial: 0,
        }
    }

    /// A file of a two-joint skeleton, two empty clips and `graph` as "locomotion"; returns
    /// its length and the graph section's offset. `patch` edits the section before the
    /// checksum is taken.
    fn file(buf: &mut [u8], graph: &Graph<'_, f32>, patch: impl Fn(&mut [u8])) -> (usize, usize) {
        layered_file(buf, &LayeredGraph::new(*graph), patch)
    }

    /// [`file`] with a graph with layers.
    fn layered_file(buf: &mut [u8], graph: &LayeredGraph<'_, f32>, patch: impl Fn(&mut [u8])) -> (usize, usize) {
        let mut w = Writer::new(buf);
        let table = w.begin_file(4);
        let s = w.len();
        w.u16(2);
        w.i16(-1);
        w.i16(0);
        for _ in 0..2 {
            f32s(&mut w, &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]);
        }
        w.str("a");
        w.str("b");
        w.section(table, 0, KIND_SKELETON, s);
        for (i, name) in ["walk", "run"].into_iter().enumerate() {
            let s = w.len();
            w.str(name);
            w.f32(0.0);
            w.f32(1.0);
            w.u16(0);
            w.section(table, 1 + i, KIND_CLIP, s);
        }
        let s = w.len();
        write_layered_graph(&mut w, "locomotion", graph).unwrap();
        w.section(table, 3, KIND_GRAPH, s);
        let len = w.finish();
        patch(&mut buf[s..len]);
        // The checksum over the patched bytes.
        let crc = crc32(&buf[CRC_START..len]);
        buf[16..20].copy_from_slice(&crc.to_le_bytes());
        (len, s)
    }

    #[test]
    fn written_graph_reads_back_in_f32_and_q16() {
        let mut buf = [0u8; 2048];
        let (len, _) = file(&mut buf, &graph(), |_| {});
        let asset = Asset::parse(&buf[..len]).unwrap();
        assert_eq!(asset.num_graphs(), 1);
        let g = asset.graph_by_name("locomotion").unwrap();
        assert_eq!((g.num_parameters(), g.num_states(), g.num_transitions()), (4, 4, 4));
        assert_eq!((g.state_name(2), g.parameter_name(3), g.state_name(4)), (Some("strafe"), Some("jump"), None));

        with_graph::<f32, _>(&g, asset.num_clips(), 8, |built| assert_eq!(built.unwrap(), graph()));

        with_graph::<Q16, _>(&g, 2, 5, |built| {
            let q = built.unwrap();
            assert_eq!(q.parameters[1].kind, ParameterKind::Float(Q16::from_f32(-1.0)));
            assert_eq!(q.conditions[0].test, Test::Greater(Q16::from_f32(0.1)));
            assert_eq!(q.transitions[3].exit_time, Some(Q16::ONE));
            assert_eq!(q.states, &STATES);
        });

        with_graph::<f32, _>(&g, 2, 4, |built| {
            assert_eq!(built, Err(GraphError::Storage { list: "points", needed: 5, capacity: 4 }));
        });
    }

    /// Offsets in the section of this graph's records (after "locomotion": 1 + 10 + 2 + 10).
    const RECORDS: usize = 23;
    const STATE: usize = RECORDS + 4 * GRAPH_PARAMETER_LEN;
    const TRANSITION: usize = STATE + 4 * GRAPH_STATE_LEN;
    const POINT: usize = TRANSITION + 4 * GRAPH_TRANSITION_LEN;
    const CONDITION: usize = POINT + 5 * GRAPH_POINT_LEN;

    fn parse_patched(patch: impl Fn(&mut [u8])) -> Result<(), ParseError> {
        let mut buf = [0u8; 2048];
        let (len, _) = file(&mut buf, &graph(), patch);
        Asset::parse(&buf[..len]).map(|_| ())
    }

    fn bad(part: GraphPart, index: u16) -> Result<(), ParseError> {
        Err(ParseError::BadGraph { section: 3, part, index })
    }

    #[test]
    fn bad_graph_sections_are_refused_with_what_is_wrong() {
        assert_eq!(parse_patched(|_| {}), Ok(()));
        // Unknown codes and reserved bytes.
        assert_eq!(parse_patched(|b| b[RECORDS + GRAPH_PARAMETER_LEN] = 7), bad(GraphPart::Parameter, 1));
        assert_eq!(parse_patched(|b| b[RECORDS + 1] = 1), bad(GraphPart::Parameter, 0));
        assert_eq!(parse_patched(|b| b[STATE + GRAPH_STATE_LEN + 1] = 0x80), bad(GraphPart::State, 1));
        assert_eq!(parse_patched(|b| b[TRANSITION + 8] = 2), bad(GraphPart::Transition, 0));
        assert_eq!(parse_patched(|b| b[CONDITION + 2 * GRAPH_CONDITION_LEN + 2] = 9), bad(GraphPart::Condition, 2));
        assert_eq!(parse_patched(|b| b[POINT + 3 * GRAPH_POINT_LEN + 2] = 1), bad(GraphPart::State, 2));
        // A bool with a default other than 0 or 1.
        assert_eq!(parse_patched(|b| b[RECORDS + 2 * GRAPH_PARAMETER_LEN + 4] = 1), bad(GraphPart::Parameter, 2));
        // Rules of `Graph::validate`: a clip past the file's, a transition to a missing state,
        // a condition on a parameter of another kind, 1D positions out of order, a NaN
        // duration, a repeated state name, a missing initial state.
        assert_eq!(parse_patched(|b| b[STATE + 2] = 2), bad(GraphPart::State, 0));
        assert_eq!(parse_patched(|b| b[TRANSITION + 2] = 4), bad(GraphPart::Transition, 0));
        assert_eq!(parse_patched(|b| b[CONDITION + 3 * GRAPH_CONDITION_LEN] = 0), bad(GraphPart::Condition, 3));
        assert_eq!(
            parse_patched(
                |b| b[POINT + GRAPH_POINT_LEN + 4..POINT + GRAPH_POINT_LEN + 8].copy_from_slice(&0.5f32.to_le_bytes())
            ),
            bad(GraphPart::State, 1)
        );
        assert_eq!(
            parse_patched(|b| b[TRANSITION + 16..TRANSITION + 20].copy_from_slice(&f32::NAN.to_le_bytes())),
            bad(GraphPart::Transition, 0)
        );
        let names = CONDITION + 5 * GRAPH_CONDITION_LEN;
        // "speed", "side", "grounded", "jump", then "idle": make "idle" "move"'s twin.
        let idle = names + 6 + 5 + 9 + 5 + 1;
        assert_eq!(parse_patched(|b| b[idle..idle + 4].copy_from_slice(b"move")), bad(GraphPart::State, 1));
        assert_eq!(parse_patched(|b| b[11] = 9), bad(GraphPart::Header, 0));
        // Too many states for the records that follow.
        assert!(matches!(parse_patched(|b| b[15] = 200), Err(ParseError::SectionOverrun { section: 3 })));
    }

    /// [`parse_patched`] by `Asset::parse_without_graph_rules`.
    fn parse_layout_patched(patch: impl Fn(&mut [u8])) -> Result<(), ParseError> {
        let mut buf = [0u8; 2048];
        let (len, _) = file(&mut buf, &graph(), patch);
        Asset::parse_without_graph_rules(&buf[..len]).map(|_| ())
    }

    /// The graph of a file that `Asset::parse_without_graph_rules` accepts, built by
    /// `to_graph` in f32 into buffers large enough.
    fn built_without_rules(patch: impl Fn(&mut [u8])) -> Result<(), GraphError> {
        let mut buf = [0u8; 2048];
        let (len, _) = file(&mut buf, &graph(), patch);
        let asset = Asset::parse_without_graph_rules(&buf[..len]).unwrap();
        let g = asset.graph(0).unwrap();
        assert_eq!((g.name(), g.state_name(0), g.parameter_name(3)), ("locomotion", Some("idle"), Some("jump")));
        with_graph::<f32, _>(&g, asset.num_clips(), 8, |built| built.map(|_| ()))
    }

    #[test]
    fn without_the_graph_rules_the_layout_is_checked_and_the_rules_wait_for_the_graph() {
        assert_eq!(parse_layout_patched(|_| {}), Ok(()));
        assert_eq!(built_without_rules(|_| {}), Ok(()));
        // The layout and the parameters (what a listing reads) are refused as `parse` does.
        assert_eq!(parse_layout_patched(|b| b[RECORDS + GRAPH_PARAMETER_LEN] = 7), bad(GraphPart::Parameter, 1));
        assert_eq!(parse_layout_patched(|b| b[RECORDS + 1] = 1), bad(GraphPart::Parameter, 0));
        assert_eq!(
            parse_layout_patched(|b| b[RECORDS + 2 * GRAPH_PARAMETER_LEN + 4] = 1),
            bad(GraphPart::Parameter, 2)
        );
        let nan = |b: &mut [u8]| {
            b[RECORDS + GRAPH_PARAMETER_LEN + 4..RECORDS + GRAPH_PARAMETER_LEN + 8]
                .copy_from_slice(&f32::NAN.to_le_bytes());
        };
        assert_eq!(parse_patched(nan), bad(GraphPart::Parameter, 1));
        assert_eq!(parse_layout_patched(nan), bad(GraphPart::Parameter, 1));
        assert!(matches!(parse_layout_patched(|b| b[15] = 200), Err(ParseError::SectionOverrun { section: 3 })));
        // The records and rules are not checked; building the graph checks them.
        assert_eq!(parse_layout_patched(|b| b[STATE + 2] = 2), Ok(()));
        assert_eq!(built_without_rules(|b| b[STATE + 2] = 2), Err(GraphError::Clip { state: 0 }));
        assert_eq!(parse_layout_patched(|b| b[TRANSITION + 2] = 4), Ok(()));
        assert!(built_without_rules(|b| b[TRANSITION + 2] = 4).is_err());
        assert_eq!(parse_layout_patched(|b| b[TRANSITION + 8] = 2), Ok(()));
        assert!(built_without_rules(|b| b[TRANSITION + 8] = 2).is_err());
    }

    #[test]
    fn every_byte_flipped_parses_without_the_graph_rules_when_it_parses_with_them() {
        let mut buf = [0u8; 2048];
        let (len, start) = file(&mut buf, &graph(), |_| {});
        for at in (0..len - start).step_by(if cfg!(miri) { 17 } else { 1 }) {
            for bit in [0x01u8, 0x80] {
                let strict = parse_patched(|b| b[at] ^= bit);
                let lenient = parse_layout_patched(|b| b[at] ^= bit);
                assert!(strict.is_err() || lenient.is_ok(), "byte {at} bit {bit:#x}: {lenient:?}");
            }
        }
    }

    #[test]
    fn every_byte_of_a_graph_section_flipped_parses_or_fails_cleanly() {
        let mut buf = [0u8; 2048];
        let (len, start) = file(&mut buf, &graph(), |_| {});
        for at in (0..len - start).step_by(if cfg!(miri) { 17 } else { 1 }) {
            for bit in [0x01u8, 0x80] {
                let _ = parse_patched(|b| b[at] ^= bit);
            }
        }
    }

    const MASK: [Channel; 2] = [Channel::subtree(1, 1), Channel::range(0, 1, 0)];
    const LAYER_STATES: [State<'static>; 2] = [
        State {
            name: "still",
            kind: StateKind::Blend1d { parameter: 0, points: Span::new(0, 2), sync: false },
            looping: true,
        },
        State { name: "wave", kind: StateKind::Clip(1), looping: true },
    ];
    const LAYER_TRANSITIONS: [Transition<f32>; 2] = [
        Transition {
            from: Some(0),
            to: 1,
            conditions: Span::new(0, 1),
            exit_time: None,
            duration: 0.25,
            blend: TransitionBlend::Crossfade { curve: FadeCurve::Linear, sync: false },
        },
        Transition {
            from: None,
            to: 0,
            conditions: Span::new(1, 1),
            exit_time: Some(2.0),
            duration: 0.1,
            blend: TransitionBlend::Inertialize,
        },
    ];
    const LAYER_CONDITIONS: [Condition<f32>; 2] =
        [Condition { parameter: 3, test: Test::Triggered }, Condition { parameter: 2, test: Test::False }];
    const BREATHE: [State<'static>; 1] = [State { name: "breathe", kind: StateKind::Clip(0), looping: true }];

    fn layers() -> [GraphLayer<'static, f32>; 2] {
        [
            GraphLayer {
                name: "upper",
                mode: LayerMode::Override,
                weight: 0.5,
                mask: &MASK,
                states: &LAYER_STATES,
                transitions: &LAYER_TRANSITIONS,
                points: &POINTS[..2],
                conditions: &LAYER_CONDITIONS,
                initial: 0,
            },
            GraphLayer {
                name: "torso",
                mode: LayerMode::Additive(AdditiveReference::Baked),
                weight: 1.0,
                mask: &[],
                states: &BREATHE,
                transitions: &[],
                points: &[],
                conditions: &[],
                initial: 0,
            },
        ]
    }

    /// The layered graph's section: where its layer table starts (after the base's names).
    fn layer_table() -> usize {
        let names: usize = PARAMETERS.iter().map(|p| 1 + p.name.len()).sum::<usize>()
            + STATES.iter().map(|s| 1 + s.name.len()).sum::<usize>();
        CONDITION + 5 * GRAPH_CONDITION_LEN + names
    }

    /// `g.to_graph` (`clips` clips) into buffers of 4 parameters, states and transitions,
    /// `points` blend points and 5 conditions, its result handed to `f`.
    fn with_graph<R: Real, T>(
        g: &GraphData<'_>,
        clips: usize,
        points: usize,
        f: impl FnOnce(Result<Graph<'_, R>, GraphError>) -> T,
    ) -> T {
        let mut p = [Parameter::default(); 4];
        let mut s = [State::default(); 4];
        let mut t = [Transition::default(); 4];
        let mut b = [BlendPoint::default(); 8];
        let mut c = [Condition::default(); 5];
        let buffers = GraphBuffers {
            parameters: &mut p,
            states: &mut s,
            transitions: &mut t,
            points: &mut b[..points],
            conditions: &mut c,
        };
        f(g.to_graph(buffers, clips))
    }

    /// `g.to_layered` (two clips) into buffers of 4 parameters, `states` states, 8 transitions,
    /// points and conditions, 4 mask channels and 2 layers, its result handed to `f`.
    fn with_layered<R: Real, T>(
        g: &GraphData<'_>,
        states: usize,
        f: impl FnOnce(Result<LayeredGraph<'_, R>, crate::graph::LayerError>) -> T,
    ) -> T {
        let mut p = [Parameter::default(); 4];
        let mut s = [State::default(); 8];
        let mut t = [Transition::default(); 8];
        let mut b = [BlendPoint::default(); 8];
        let mut c = [Condition::default(); 8];
        let mut ch = [Channel::subtree(0, 0); 4];
        let mut l = [GraphLayer::default(); 2];
        let buffers = GraphBuffers {
            parameters: &mut p,
            states: &mut s[..states],
            transitions: &mut t,
            points: &mut b,
            conditions: &mut c,
        };
        f(g.to_layered(buffers, LayerBuffers { channels: &mut ch, layers: &mut l }, 2))
    }

    fn parse_layered(patch: impl Fn(&mut [u8])) -> Result<(), ParseError> {
        let mut buf = [0u8; 2048];
        let layers = layers();
        let (len, _) = layered_file(&mut buf, &LayeredGraph { base: graph(), layers: &layers }, patch);
        Asset::parse(&buf[..len]).map(|_| ())
    }

    #[test]
    fn written_layered_graph_reads_back_and_runs_in_f32_and_q16() {
        let mut buf = [0u8; 4096];
        let layers = layers();
        let layered = LayeredGraph { base: graph(), layers: &layers };
        let (len, _) = layered_file(&mut buf, &layered, |_| {});
        let asset = Asset::parse(&buf[..len]).unwrap();
        let g = asset.graph_by_name("locomotion").unwrap();
        assert_eq!(g.num_layers(), 2);
        let upper = g.layer(1).unwrap();
        assert_eq!((upper.name(), upper.mode(), upper.weight::<f32>()), ("upper", LayerMode::Override, 0.5));
        assert_eq!((upper.num_channels(), upper.channel(1), upper.channel(2)), (2, Some(MASK[1]), None));
        assert_eq!(upper.machine().state_name(1), Some("wave"));
        assert_eq!(upper.machine().parameter_name(3), Some("jump"));
        assert!(g.layer(0).is_none() && g.layer(3).is_none());

        with_layered::<f32, _>(&g, 7, |read| assert_eq!(read, Ok(layered)));

        // In Q16, from the same bytes, into a state machine that runs.
        with_layered::<Q16, _>(&g, 7, |q| {
            let q = q.unwrap();
            assert_eq!(q.layers[0].weight, Q16::from_f32(0.5));
            let clips: [ClipEntry<'_, Q16>; 2] = core::array::from_fn(|i| ClipEntry::new(asset.clip(i).unwrap()));
            let skeleton: crate::skeleton::Skeleton<Q16, 1> = asset.skeleton().unwrap().to_skeleton().unwrap();
            crate::capacity! {
                /// Four joints, 4 slots and 8 tracks per layer, 4 parameters, 3 layers.
                pub struct Small { joints: 4, slots: 4, layers: 3, tracks: 8, params: 4 }
            }
            let mut m = LayeredStateMachine::<Q16, Small>::new(q, &clips).unwrap();
            let mut scratch = LayeredScratch::new();
            let mut pose = [SoaTransform::IDENTITY; 1];
            m.fire(3, true).unwrap();
            for _ in 0..4 {
                m.update(Q16::from_f32(1.0 / 60.0), &clips, skeleton.view(), &mut scratch, &mut pose, |_| {}).unwrap();
            }
            assert_eq!(m.machine(1).map(|m| m.current_state()), Some(1));
            assert_eq!(m.layer_weight(2), Some(Q16::ONE));
        });

        // Short buffers: a typed error, nothing built.
        with_layered::<f32, _>(&g, 6, |short| {
            assert_eq!(
                short.map(|_| ()).unwrap_err().error,
                GraphError::Storage { list: "states", needed: 7, capacity: 6 }
            )
        });
    }

    #[test]
    fn bad_graph_layers_are_refused_with_what_is_wrong() {
        let bad = |layer, part, index| Err(ParseError::BadGraphLayer { section: 3, layer, part, index });
        assert_eq!(parse_layered(|_| {}), Ok(()));
        // The first layer: count (2), name "upper" (6), mode, reference, initial, weight,
        // counts (10), two mask channels, two states...
        let l = layer_table() + 2;
        let (mode, initial, weight, mask) = (l + 6, l + 8, l + 10, l + 24);
        let (states, transitions) = (mask + 2 * GRAPH_CHANNEL_LEN, mask + 2 * GRAPH_CHANNEL_LEN + 2 * GRAPH_STATE_LEN);
        assert_eq!(parse_layered(|b| b[mode] = 2), bad(1, GraphPart::Header, 0));
        assert_eq!(parse_layered(|b| b[mode + 1] = 1), bad(1, GraphPart::Header, 0));
        assert_eq!(parse_layered(|b| b[initial] = 2), bad(1, GraphPart::Header, 0));
        assert_eq!(
            parse_layered(|b| b[weight..weight + 4].copy_from_slice(&1.5f32.to_bits().to_le_bytes())),
            bad(1, GraphPart::Header, 0)
        );
        assert_eq!(parse_layered(|b| b[mask] = 2), bad(1, GraphPart::Mask, 0));
        assert_eq!(parse_layered(|b| b[mask + GRAPH_CHANNEL_LEN + 2] = 2), bad(1, GraphPart::Mask, 1));
        assert_eq!(parse_layered(|b| b[mask + 6] = 1), bad(1, GraphPart::Mask, 0));
        assert_eq!(parse_layered(|b| b[states + GRAPH_STATE_LEN] = 9), bad(1, GraphPart::State, 1));
        assert_eq!(parse_layered(|b| b[transitions + 2] = 2), bad(1, GraphPart::Transition, 0));
        // The second layer named as the first.
        let second = |b: &mut [u8]| {
            // "torso": name 6, mode 2, initial 2, weight 4, counts 10, one state 12, "breathe" 8.
            let at = b.len() - 44;
            b[at + 1..at + 6].copy_from_slice(b"upper");
        };
        assert_eq!(parse_layered(|b| second(b)), bad(2, GraphPart::Header, 0));
        // A layer count of 0, or past the layers that follow.
        assert_eq!(parse_layered(|b| b[l - 2] = 0), bad_header());
        assert!(matches!(parse_layered(|b| b[l - 2] = 3), Err(ParseError::SectionOverrun { section: 3 })));
    }

    #[test]
    fn every_byte_of_a_layer_table_flipped_parses_or_fails_cleanly() {
        let mut buf = [0u8; 4096];
        let layers = layers();
        let (len, start) = layered_file(&mut buf, &LayeredGraph { base: graph(), layers: &layers }, |_| {});
        for at in (layer_table()..len - start).step_by(if cfg!(miri) { 13 } else { 1 }) {
            for bit in [0x01u8, 0x80] {
                let mut copy = [0u8; 4096];
                let (n, _) =
                    layered_file(&mut copy, &LayeredGraph { base: graph(), layers: &layers }, |b| b[at] ^= bit);
                if let Ok(asset) = Asset::parse(&copy[..n]) {
                    // What parses builds (or is refused by the state machine's checks) without a panic.
                    let g = asset.graph(0).unwrap();
                    with_layered::<Q16, _>(&g, 8, |_| ());
                }
            }
        }
    }

    fn bad_header() -> Result<(), ParseError> {
        Err(ParseError::BadGraph { section: 3, part: GraphPart::Header, index: 0 })
    }
}
