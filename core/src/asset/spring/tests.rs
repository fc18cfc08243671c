//! Tests of the spring-bone section on hand-built files: values read back as written, each
//! rule broken gives its [`SpringPart`], truncations and damaged bytes fail without panics.

extern crate std;

use std::vec::Vec;

use super::*;
use crate::asset::Asset;
use crate::format::writer::Writer;
use crate::real::Q16;
use crate::skeleton::{Skeleton, NO_PARENT};

/// Parents of the test skeleton: a chain 0 → 1 → 2 → 3, and 4 → 5 under the root.
const PARENTS: [i16; 6] = [NO_PARENT, 0, 1, 2, 0, 4];

/// Three spring joints in run order, springs "hair" (joints 0 and 2: it interleaves with
/// "tail") and "tail" (joint 1).
fn joints() -> [SpringJoint<f32>; 3] {
    [
        SpringJoint {
            joint: 1,
            child: 2,
            tail: Vec3::new(0.0, 0.25, 0.0),
            hit_radius: 0.02,
            stiffness: 1.5,
            gravity_power: 0.75,
            gravity_dir: Vec3::new(0.0, -1.0, 0.0),
            drag_force: 0.4,
            center: NO_JOINT,
            colliders_start: 0,
            colliders_len: 2,
        },
        SpringJoint {
            joint: 4,
            child: NO_JOINT,
            tail: Vec3::new(0.07, 0.0, 0.0),
            hit_radius: 0.0,
            stiffness: 0.5,
            gravity_power: 0.0,
            gravity_dir: Vec3::new(1.0, 2.0, -3.0),
            drag_force: 0.125,
            center: 0,
            colliders_start: 2,
            colliders_len: 2,
        },
        SpringJoint {
            joint: 2,
            child: 3,
            tail: Vec3::new(0.0, 0.5, -0.125),
            hit_radius: 0.0625,
            stiffness: 2.0,
            gravity_power: 1.0,
            gravity_dir: Vec3::new(0.0, 0.0, -1.0),
            drag_force: 1.0,
            center: 3,
            colliders_start: 0,
            colliders_len: 0,
        },
    ]
}

fn colliders() -> [SpringCollider<f32>; 3] {
    [
        SpringCollider {
            joint: 0,
            shape: ColliderShape::Sphere { offset: Vec3::new(0.0, 0.1, 0.2), radius: 0.3, inside: false },
        },
        SpringCollider {
            joint: 5,
            shape: ColliderShape::Capsule {
                offset: Vec3::new(0.5, 0.0, 0.0),
                tail: Vec3::new(-0.5, 0.25, 0.0),
                radius: 0.125,
                inside: true,
            },
        },
        SpringCollider {
            joint: 3,
            shape: ColliderShape::Plane { offset: Vec3::new(0.0, -1.0, 0.0), normal: Vec3::new(0.0, 1.0, 0.0) },
        },
    ]
}

const TABLE: [u16; 4] = [0, 1, 2, 0];
const JOINT_SPRINGS: [u16; 3] = [0, 1, 0];
const NAMES: [&str; 2] = ["hair", "tail"];

fn skeleton_section(w: &mut Writer<'_>) {
    w.u16(PARENTS.len() as u16);
    for p in PARENTS {
        w.i16(p);
    }
    for i in 0..PARENTS.len() {
        for v in [0.0, i as f32, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0] {
            w.f32(v);
        }
    }
    for i in 0..PARENTS.len() {
        w.str(["j0", "j1", "j2", "j3", "j4", "j5"][i]);
    }
}

/// A file with the skeleton (unless `skeleton` is false) and one spring-bone section per entry
/// of `sections` (bodies as given).
fn file_of(skeleton: bool, sections: &[&[u8]]) -> Vec<u8> {
    let emit = |w: &mut Writer<'_>| {
        let table = w.begin_file((usize::from(skeleton) + sections.len()) as u32);
        let mut idx = 0;
        if skeleton {
            let s = w.len();
            skeleton_section(w);
            w.section(table, 0, KIND_SKELETON, s);
            idx = 1;
        }
        for body in sections {
            let s = w.len();
            w.bytes(body);
            w.section(table, idx, KIND_SPRINGS, s);
            idx += 1;
        }
        w.finish();
    };
    let mut sizing = Writer::new(&mut []);
    emit(&mut sizing);
    let mut buf = std::vec![0u8; sizing.len()];
    emit(&mut Writer::new(&mut buf));
    buf
}

/// The section body of [`joints`], [`colliders`], [`TABLE`], [`JOINT_SPRINGS`] and [`NAMES`].
fn body() -> Vec<u8> {
    let (j, c) = (joints(), colliders());
    let bones = SpringBones { joints: &j, colliders: &c, joint_colliders: &TABLE };
    let write = |buf: &mut [u8]| {
        let mut w = Writer::new(buf);
        write_springs(&mut w, &bones, &JOINT_SPRINGS, &NAMES).map(|()| w.len())
    };
    let len = write(&mut []).unwrap();
    let mut buf = std::vec![0u8; len];
    assert_eq!(write(&mut buf), Ok(len));
    buf
}

/// Offset of spring joint `i`'s record in the body.
fn joint_at(i: usize) -> usize {
    SPRINGS_HEADER_LEN + 2 * SPRING_RECORD_LEN + i * SPRING_JOINT_LEN
}

/// Offset of collider `i`'s record in the body.
fn collider_at(i: usize) -> usize {
    joint_at(3) + i * SPRING_COLLIDER_LEN
}

/// Offset of the table in the body.
fn table_at() -> usize {
    collider_at(3)
}

/// The file of the body after `patch` (written once; a patch that keeps the body's length is
/// applied in place, with the checksum made again).
fn patched_file(patch: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    static BASE: std::sync::OnceLock<(Vec<u8>, Vec<u8>)> = std::sync::OnceLock::new();
    let (base, file) = BASE.get_or_init(|| {
        let b = body();
        let file = file_of(true, &[&b]);
        (b, file)
    });
    let mut b = base.clone();
    patch(&mut b);
    if b.len() != base.len() {
        return file_of(true, &[&b]);
    }
    let mut f = file.clone();
    let at = f.len() - b.len();
    f[at..].copy_from_slice(&b);
    let crc = crate::format::crc32(&f[CRC_START..]);
    f[16..20].copy_from_slice(&crc.to_le_bytes());
    f
}

/// Parses the file of the body after `patch`.
fn parse_patched(patch: impl Fn(&mut Vec<u8>)) -> Result<(), ParseError> {
    Asset::parse(&patched_file(patch)).map(|_| ())
}

fn bad(part: SpringPart, index: u16) -> Result<(), ParseError> {
    Err(ParseError::BadSprings { section: 1, part, index })
}

fn put_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

fn put_f32(b: &mut [u8], at: usize, v: f32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn written_springs_read_back_in_f32_and_q16() {
    let file = file_of(true, &[&body()]);
    let asset = Asset::parse(&file).unwrap();
    let s = asset.springs().unwrap();
    assert_eq!((s.num_springs(), s.num_joints(), s.num_colliders(), s.num_joint_colliders()), (2, 3, 3, 4));
    // Header 8, springs 2 × 4, joints 3 × 52, colliders 3 × 32, table 4 × 2, names 5 + 5.
    assert_eq!(s.byte_len(), 8 + 8 + 156 + 96 + 8 + 10);
    for (i, j) in joints().iter().enumerate() {
        assert_eq!(s.joint::<f32>(i).as_ref(), Some(j), "joint {i}");
    }
    for (i, c) in colliders().iter().enumerate() {
        assert_eq!(s.collider::<f32>(i).as_ref(), Some(c), "collider {i}");
    }
    for (i, &e) in TABLE.iter().enumerate() {
        assert_eq!(s.joint_collider(i), Some(e));
    }
    assert_eq!(s.joint::<f32>(3), None);
    assert_eq!(s.collider::<f32>(3), None);
    assert_eq!(s.joint_collider(4), None);
    // Q16 reads each value through `Q16::from_f32`.
    let q = s.joint::<Q16>(1).unwrap();
    assert_eq!(q.gravity_dir, Vec3::new(Q16::from_f32(1.0), Q16::from_f32(2.0), Q16::from_f32(-3.0)));
    assert_eq!(q.drag_force, Q16::from_f32(0.125));
    assert_eq!(
        s.collider::<Q16>(1).map(|c| c.shape),
        Some(ColliderShape::Capsule {
            offset: Vec3::new(Q16::from_f32(0.5), Q16::ZERO, Q16::ZERO),
            tail: Vec3::new(Q16::from_f32(-0.5), Q16::from_f32(0.25), Q16::ZERO),
            radius: Q16::from_f32(0.125),
            inside: true,
        })
    );
    // Springs: "hair" spans joints 0..3 and holds 0 and 2; "tail" holds 1.
    assert_eq!(s.spring(0), Some(SpringInfo { name: "hair", joints: 0..3 }));
    assert_eq!(s.spring(1), Some(SpringInfo { name: "tail", joints: 1..2 }));
    assert_eq!(s.spring(2), None);
    assert_eq!(s.spring_joints(0).collect::<Vec<_>>(), [0, 2]);
    assert_eq!(s.spring_joints(1).collect::<Vec<_>>(), [1]);
    assert_eq!(s.spring_joints(2).count(), 0);
    assert_eq!((0..4).map(|i| s.joint_spring(i)).collect::<Vec<_>>(), [Some(0), Some(1), Some(0), None]);
    // `reopen` finds the section too.
    let again = Asset::reopen(&file).unwrap().springs().unwrap();
    assert_eq!(again.joint::<f32>(2), s.joint(2));
}

#[test]
fn filled_buffers_make_spring_bones_that_validate() {
    let file = file_of(true, &[&body()]);
    let asset = Asset::parse(&file).unwrap();
    let s = asset.springs().unwrap();
    let spare = joints()[0];
    let sphere = colliders()[0];
    let mut j = [spare; 4];
    let mut c = [sphere; 3];
    let mut t = [7u16; 5];
    // Short buffers: an error naming the first, nothing written.
    assert_eq!(s.fill(&mut j[..2], &mut c, &mut t).err(), Some(SpringsFillError::Joints { needed: 3 }));
    assert_eq!(s.fill(&mut j, &mut c[..2], &mut t).err(), Some(SpringsFillError::Colliders { needed: 3 }));
    assert_eq!(s.fill(&mut j, &mut c, &mut t[..3]).err(), Some(SpringsFillError::JointColliders { needed: 4 }));
    assert_eq!((j, c, t), ([spare; 4], [sphere; 3], [7; 5]));
    let bones = s.fill(&mut j, &mut c, &mut t).unwrap();
    assert_eq!(bones.joints, &joints()[..]);
    assert_eq!(bones.colliders, &colliders()[..]);
    assert_eq!(bones.joint_colliders, &TABLE[..]);
    let skeleton: Skeleton<f32, 2> = asset.skeleton().unwrap().to_skeleton().unwrap();
    assert_eq!(bones.validate(&skeleton.view()), Ok(()));
    // The spare entries past the lists are left as they were.
    assert_eq!((j[3], t[4]), (spare, 7));
}

#[test]
fn each_broken_rule_names_its_record() {
    use SpringPart::*;
    assert_eq!(parse_patched(|_| {}), Ok(()));
    let spring = |i: usize| SPRINGS_HEADER_LEN + i * SPRING_RECORD_LEN;
    // Spans: past the joint list; starting or ending on another spring's joint.
    assert_eq!(parse_patched(|b| put_u16(b, spring(1) + 2, 3)), bad(Spring, 1));
    assert_eq!(parse_patched(|b| put_u16(b, spring(0), 1)), bad(Spring, 0));
    assert_eq!(parse_patched(|b| put_u16(b, spring(0) + 2, 2)), bad(Spring, 0));
    // A spring left without joints while a joint still names it.
    assert_eq!(parse_patched(|b| put_u16(b, spring(1) + 2, 0)), bad(JointSpring, 1));
    // A name that is not UTF-8.
    assert_eq!(parse_patched(|b| b[table_at() + 8 + 1] = 0xff), bad(Name, 0));
    // Joints: past the skeleton; a skeleton joint twice.
    assert_eq!(parse_patched(|b| put_u16(b, joint_at(1), 6)), bad(Joint, 1));
    assert_eq!(parse_patched(|b| put_u16(b, joint_at(2), 1)), bad(Joint, 2));
    // Children: past the skeleton, the joint itself, not below it (a sibling branch, a parent).
    assert_eq!(parse_patched(|b| put_u16(b, joint_at(0) + 2, 6)), bad(Child, 0));
    assert_eq!(parse_patched(|b| put_u16(b, joint_at(0) + 2, 1)), bad(Child, 0));
    assert_eq!(parse_patched(|b| put_u16(b, joint_at(0) + 2, 5)), bad(Child, 0));
    assert_eq!(parse_patched(|b| put_u16(b, joint_at(2) + 2, 1)), bad(Child, 2));
    // A grandchild is below its joint.
    assert_eq!(parse_patched(|b| put_u16(b, joint_at(0) + 2, 3)), Ok(()));
    // Centers past the skeleton.
    assert_eq!(parse_patched(|b| put_u16(b, joint_at(1) + 4, 6)), bad(Center, 1));
    // Springs: past the springs; a joint outside its spring's span.
    let past = |b: &mut Vec<u8>| {
        put_u16(b, spring(1) + 2, 0);
        put_u16(b, joint_at(1) + 6, 2);
    };
    assert_eq!(parse_patched(past), bad(JointSpring, 1));
    assert_eq!(parse_patched(|b| put_u16(b, spring(0) + 2, 1)), bad(JointSpring, 2));
    // Collider ranges past the table.
    assert_eq!(parse_patched(|b| put_u16(b, joint_at(1) + 8, 3)), bad(JointColliders, 1));
    assert_eq!(parse_patched(|b| put_u16(b, joint_at(0) + 10, 5)), bad(JointColliders, 0));
    // Every float of a joint (under miri a few): NaN and infinity; a negative hit radius.
    let (step, values) = if cfg!(miri) { (4, 1) } else { (1, 3) };
    for k in (0..10).step_by(step) {
        for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY].into_iter().take(values) {
            assert_eq!(parse_patched(|b| put_f32(b, joint_at(2) + 12 + 4 * k, v)), bad(Setting, 2), "float {k}");
        }
    }
    assert_eq!(parse_patched(|b| put_f32(b, joint_at(0) + 24, -0.001)), bad(Setting, 0));
    // Negative settings other than the radius are kept.
    assert_eq!(parse_patched(|b| put_f32(b, joint_at(0) + 28, -1.0)), Ok(()));
    // Colliders: joint, kind, flags.
    assert_eq!(parse_patched(|b| put_u16(b, collider_at(2), 6)), bad(ColliderJoint, 2));
    assert_eq!(parse_patched(|b| b[collider_at(0) + 2] = 3), bad(ColliderKind, 0));
    assert_eq!(parse_patched(|b| b[collider_at(1) + 3] = 2), bad(ColliderKind, 1));
    assert_eq!(parse_patched(|b| b[collider_at(2) + 3] = COLLIDER_FLAG_INSIDE), bad(ColliderKind, 2));
    // Shapes: every float not finite (under miri a few), a negative radius, unused fields not 0.
    for i in 0..3 {
        for k in (0..7).filter(|k| k % step == i % step) {
            let at = collider_at(i) + 4 + 4 * k;
            for v in [f32::NAN, f32::INFINITY].into_iter().take(values) {
                assert_eq!(parse_patched(|b| put_f32(b, at, v)), bad(ColliderShape, i as u16), "{i} {k}");
            }
        }
    }
    assert_eq!(parse_patched(|b| put_f32(b, collider_at(1) + 28, -0.5)), bad(ColliderShape, 1));
    assert_eq!(parse_patched(|b| put_f32(b, collider_at(0) + 20, 1.0)), bad(ColliderShape, 0));
    assert_eq!(parse_patched(|b| put_f32(b, collider_at(2) + 28, 1.0)), bad(ColliderShape, 2));
    assert_eq!(parse_patched(|b| put_f32(b, collider_at(2) + 28, -0.0)), bad(ColliderShape, 2));
    // Table entries.
    assert_eq!(parse_patched(|b| put_u16(b, table_at() + 6, 3)), bad(Table, 3));
    // Counts past the end, and bytes left over.
    assert_eq!(parse_patched(|b| put_u16(b, 2, 4)), Err(ParseError::SectionOverrun { section: 1 }));
    assert_eq!(parse_patched(|b| b[table_at() + 8] = 40), Err(ParseError::SectionOverrun { section: 1 }));
    assert_eq!(parse_patched(|b| b.push(0)), Err(ParseError::BadSection { section: 1 }));
}

#[test]
fn playback_parsing_lists_the_section_unchecked() {
    // A spring span past the joint list: `parse` refuses it, the playback parse lists it.
    let file = patched_file(|b| put_u16(b, SPRINGS_HEADER_LEN + SPRING_RECORD_LEN + 2, 3));
    assert_eq!(Asset::parse(&file).err(), bad(SpringPart::Spring, 1).err());
    let asset = Asset::parse_for_playback(&file).unwrap();
    assert!(asset.springs().is_some() && asset.skeleton().is_some());
    // The section's placement is still held to: one, after a skeleton.
    let b = body();
    assert_eq!(Asset::parse_for_playback(&file_of(true, &[&b, &b])).err(), Some(ParseError::DuplicateSprings));
    assert_eq!(Asset::parse_for_playback(&file_of(false, &[&b])).err(), Some(ParseError::MissingSkeleton));
}

#[test]
fn one_section_with_a_skeleton() {
    let b = body();
    assert_eq!(Asset::parse(&file_of(true, &[&b, &b])).err(), Some(ParseError::DuplicateSprings));
    assert_eq!(Asset::parse(&file_of(false, &[&b])).err(), Some(ParseError::MissingSkeleton));
    // An empty section: no springs, joints or colliders.
    let file = file_of(true, &[&[0; 8]]);
    let empty = Asset::parse(&file).unwrap().springs().unwrap();
    assert_eq!((empty.num_springs(), empty.num_joints(), empty.num_colliders()), (0, 0, 0));
    // Files without the section have none.
    assert!(Asset::parse(&file_of(true, &[])).unwrap().springs().is_none());
}

#[test]
fn every_truncation_and_byte_flip_fails_cleanly() {
    let b = body();
    // A section cut short anywhere declares more than it holds.
    for cut in (0..b.len()).step_by(if cfg!(miri) { 41 } else { 1 }) {
        let e = Asset::parse(&file_of(true, &[&b[..cut]])).err();
        assert_eq!(e, Some(ParseError::SectionOverrun { section: 1 }), "cut at {cut}");
    }
    // Any byte changed (checksum fixed) parses or fails with an error; what parses reads back
    // in every accessor and fills buffers whose bones validate.
    let skeleton: Skeleton<f32, 2> =
        Asset::parse(&file_of(true, &[])).unwrap().skeleton().unwrap().to_skeleton().unwrap();
    let mut accepted = 0;
    let values: &[u8] = if cfg!(miri) { &[0x80] } else { &[0x00, 0x01, 0x80, 0xff] };
    for at in (0..b.len()).step_by(if cfg!(miri) { 23 } else { 1 }) {
        for &v in values {
            let file = patched_file(|c| c[at] = v);
            let Ok(asset) = Asset::parse(&file) else { continue };
            accepted += 1;
            let s = asset.springs().unwrap();
            let (mut j, mut k, mut t) = ([joints()[0]; 8], [colliders()[0]; 8], [0u16; 8]);
            let bones = s.fill(&mut j, &mut k, &mut t).unwrap();
            assert_eq!(bones.validate(&skeleton.view()), Ok(()), "byte {at} = {v}");
            for i in 0..s.num_springs() {
                let info = s.spring(i).unwrap();
                assert!(s.spring_joints(i).all(|j| info.joints.contains(&j)));
            }
        }
    }
    assert!(accepted > 0);
}

#[test]
fn writer_refuses_what_the_section_cannot_hold() {
    let (j, c) = (joints(), colliders());
    let bones = SpringBones { joints: &j, colliders: &c, joint_colliders: &TABLE };
    let mut w = Writer::new(&mut []);
    assert_eq!(write_springs(&mut w, &bones, &[0, 1], &NAMES), Err(SpringWriteError::JointSprings));
    assert_eq!(write_springs(&mut w, &bones, &[0, 2, 0], &NAMES), Err(SpringWriteError::JointSprings));
    let long = std::vec![0u16; 65_536];
    let too_long = SpringBones { joints: &j, colliders: &c, joint_colliders: &long };
    assert_eq!(
        write_springs(&mut w, &too_long, &JOINT_SPRINGS, &NAMES),
        Err(SpringWriteError::TooMany { list: "joint colliders", count: 65_536 })
    );
    assert!(w.is_empty());
}

/// Joints whose collider ranges add up to more than [`MAX_SPRING_TESTS`] tests a step: the
/// joint that passes the limit is named, and a section at the limit parses.
#[test]
#[cfg_attr(miri, ignore = "a 64 KiB table: the rule is the same sum on any size")]
fn collider_tests_past_the_limit_are_refused() {
    let half = u16::try_from(MAX_SPRING_TESTS / 2).unwrap();
    let table = std::vec![0u16; usize::from(half)];
    let parse = |lens: [u16; 3]| {
        let mut j = joints();
        for (s, len) in j.iter_mut().zip(lens) {
            (s.colliders_start, s.colliders_len) = (0, len);
        }
        let c = colliders();
        let bones = SpringBones { joints: &j, colliders: &c, joint_colliders: &table };
        let write = |buf: &mut [u8]| {
            let mut w = Writer::new(buf);
            write_springs(&mut w, &bones, &JOINT_SPRINGS, &NAMES).map(|()| w.len())
        };
        let len = write(&mut []).unwrap();
        let mut body = std::vec![0u8; len];
        assert_eq!(write(&mut body), Ok(len));
        Asset::parse(&file_of(true, &[&body])).map(|_| ())
    };
    // Two halves: exactly the limit.
    use SpringPart::Tests;
    assert_eq!(parse([half, half, 0]), Ok(()));
    assert_eq!(parse([half, half, 1]), bad(Tests, 2));
    assert_eq!(parse([half, 1, half]), bad(Tests, 2));
    assert_eq!(parse([half, 0, half]), Ok(()));
}
