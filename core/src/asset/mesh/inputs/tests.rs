//! The part reader against the per-vertex accessors, in `f32` and `Q16`, on the fixture
//! character and on a file written here (a skinned part with normals and tangents, a skinned
//! part without, a rigid part); buffers too short; local palettes.

extern crate std;
use std::vec;
use std::vec::Vec;

use super::*;
use crate::asset::format::*;
use crate::asset::writer::Writer;
use crate::asset::Asset;
use crate::job::{SkinDualQuatJob, SkinMatrixJob};
use crate::math::{DualQuat, Mat4, Quat};
use crate::real::Q16;

static CHARACTER: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));

/// A skeleton of 3 joints; a skin of joints 2, 0, 1; mesh 0 with a skinned part of 3 vertices
/// (normals, tangents, palette: skin joints 2 and 0) and one without normals or tangents
/// (palette: skin joint 1); mesh 1 rigid, of one part with normals.
fn build(buf: &mut [u8]) -> usize {
    let mut w = Writer::new(buf);
    let table = w.begin_file(4);
    let s = w.len();
    w.u16(3);
    for parent in [-1, 0, 1] {
        w.i16(parent);
    }
    for j in 0..3 {
        for v in [0.0, j as f32, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0] {
            w.f32(v);
        }
    }
    for name in ["a", "b", "c"] {
        w.str(name);
    }
    w.section(table, 0, KIND_SKELETON, s);
    let s = w.len();
    w.str("skin");
    w.u16(3);
    for j in [2, 0, 1] {
        w.u16(j);
    }
    for _ in 0..3 {
        for k in 0..16 {
            w.f32(if k % 5 == 0 { 1.0 } else { 0.0 });
        }
    }
    w.section(table, 1, KIND_SKIN, s);
    let material = [255, 255, 255, 255, 0xff, 0xff, 0, 0, 1, 1, 0, 0];
    let triangle = |w: &mut Writer| {
        w.u32(3);
        w.u8(2);
        [0, 1, 2].iter().for_each(|&i| w.u16(i));
        w.bytes(&material);
    };
    let s = w.len();
    w.str("body");
    w.u16(0);
    w.u16(NONE);
    w.bytes(&[255; 4]);
    w.u16(2);
    // Part 0: palette [2, 0], 3 vertices of 2 influences, normals and tangents.
    w.u16(2);
    [2, 0].iter().for_each(|&j| w.u16(j));
    w.u32(3);
    w.u8(2);
    w.u8(ATTR_NORMALS | ATTR_TANGENTS);
    [0.5, 1.25, -2.0, 1.0 / 3.0, 0.1, 7.0, -0.0, 3.5, 1e-3].iter().for_each(|&v| w.f32(v));
    [0.0, 1.0, 0.0, 0.6, 0.0, 0.8, 0.0, 0.0, -1.0].iter().for_each(|&v| w.f32(v));
    [1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, -1.0, 0.0, 0.6, -0.8, 1.0].iter().for_each(|&v| w.f32(v));
    [0, 1, 1, 1, 1, 0].iter().for_each(|&j| w.u16(j));
    [0.75, 0.25, 1.0, 0.0, 0.1, 0.9].iter().for_each(|&v| w.f32(v));
    triangle(&mut w);
    // Part 1: palette [1], 3 vertices of 1 influence, positions only.
    w.u16(1);
    w.u16(1);
    w.u32(3);
    w.u8(1);
    w.u8(0);
    [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0].iter().for_each(|&v| w.f32(v));
    [0, 0, 0].iter().for_each(|&j| w.u16(j));
    [1.0, 1.0, 1.0].iter().for_each(|&v| w.f32(v));
    triangle(&mut w);
    w.section(table, 2, KIND_MESH, s);
    let s = w.len();
    w.str("prop");
    w.u16(NONE);
    w.u16(1);
    w.bytes(&[255; 4]);
    w.u16(1);
    w.u16(0);
    w.u32(3);
    w.u8(0);
    w.u8(ATTR_NORMALS);
    [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0].iter().for_each(|&v| w.f32(v));
    [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0].iter().for_each(|&v| w.f32(v));
    triangle(&mut w);
    w.section(table, 3, KIND_MESH, s);
    w.finish()
}

/// Every part of every mesh of `asset`.
fn parts<'a>(asset: &Asset<'a>) -> Vec<MeshPart<'a>> {
    (0..asset.num_meshes()).filter_map(|m| asset.mesh(m)).flat_map(|m| m.parts().collect::<Vec<_>>()).collect()
}

/// Reads `part` through [`MeshPart::read_inputs`] and checks every value against the accessors,
/// bit for bit (`PartialEq` on `f32` would let -0.0 pass for 0.0).
fn check_against_accessors<R: Real + core::fmt::Debug>(part: &MeshPart<'_>, bits: impl Fn(R) -> u32) {
    let len = part.inputs_len();
    let (n, k) = (part.num_vertices(), part.influences());
    assert_eq!(len.vertices, n);
    assert_eq!(len.influences, n * k);
    assert_eq!(len.palette, part.palette_len());
    assert_eq!(len.normals, if part.has_normals() { n } else { 0 });
    assert_eq!(len.tangents, if part.has_tangents() { n } else { 0 });
    // Buffers one longer than needed: the extra entries stay as they were.
    let mut positions = vec![Vec3::splat(R::ONE); n + 1];
    let mut normals = vec![Vec3::splat(R::ONE); n + 1];
    let mut tangents = vec![Vec4::new(R::ONE, R::ONE, R::ONE, R::ONE); n + 1];
    let mut joints = vec![u16::MAX; n * k + 1];
    let mut weights = vec![R::ONE; n * k + 1];
    let buffers = PartBuffers::new(&mut positions, &mut joints, &mut weights)
        .with_normals(&mut normals)
        .with_tangents(&mut tangents);
    let inputs = part.read_inputs(buffers).expect("buffers long enough");
    let v3 = |v: Vec3<R>| [bits(v.x), bits(v.y), bits(v.z)];
    let v4 = |v: Vec4<R>| [bits(v.x), bits(v.y), bits(v.z), bits(v.w)];
    assert_eq!(inputs.influences, k);
    assert_eq!(inputs.positions.len(), n);
    assert_eq!(inputs.normals.map(<[_]>::len), part.has_normals().then_some(n));
    assert_eq!(inputs.tangents.map(<[_]>::len), part.has_tangents().then_some(n));
    for v in 0..n {
        assert_eq!(v3(inputs.positions[v]), v3(part.position(v)), "position {v}");
        if let Some(normals) = inputs.normals {
            assert_eq!(v3(normals[v]), v3(part.normal(v)), "normal {v}");
        }
        if let Some(tangents) = inputs.tangents {
            assert_eq!(v4(tangents[v]), v4(part.tangent(v)), "tangent {v}");
        }
        for i in 0..k {
            assert_eq!(inputs.joint_indices[v * k + i], part.joint(v, i));
            assert_eq!(bits(inputs.joint_weights[v * k + i]), bits(part.weight::<R>(v, i)));
        }
    }
    assert_eq!(positions[n], Vec3::splat(R::ONE));
    assert_eq!((joints[n * k], weights[n * k]), (u16::MAX, R::ONE));
    assert_eq!((normals[n], tangents[n]), (Vec3::splat(R::ONE), Vec4::new(R::ONE, R::ONE, R::ONE, R::ONE)));
    // The single-stream readers read the same.
    let mut p = vec![Vec3::ZERO; n];
    let mut nr = vec![Vec3::ZERO; n];
    let mut t = vec![Vec4::ZERO; n];
    let (mut j, mut w) = (vec![0; n * k], vec![R::ZERO; n * k]);
    assert_eq!(part.read_positions(&mut p).map(|s| s.iter().map(|&v| v3(v)).collect::<Vec<_>>()), {
        Ok(positions[..n].iter().map(|&v| v3(v)).collect())
    });
    assert_eq!(
        part.read_normals(&mut nr).map(|s| s.map(|s| s.iter().map(|&v| v3(v)).collect::<Vec<_>>())),
        Ok(part.has_normals().then(|| normals[..n].iter().map(|&v| v3(v)).collect()))
    );
    assert_eq!(
        part.read_tangents(&mut t).map(|s| s.map(|s| s.iter().map(|&v| v4(v)).collect::<Vec<_>>())),
        Ok(part.has_tangents().then(|| tangents[..n].iter().map(|&v| v4(v)).collect()))
    );
    let (rj, rw) = part.read_influences(&mut j, &mut w).expect("long enough");
    assert_eq!(rj, &joints[..n * k]);
    assert_eq!(
        rw.iter().map(|&x| bits(x)).collect::<Vec<_>>(),
        weights[..n * k].iter().map(|&x| bits(x)).collect::<Vec<_>>()
    );
}

#[test]
fn reads_what_the_accessors_read() {
    let mut buf = [0u8; 2048];
    let len = build(&mut buf);
    let asset = Asset::parse(&buf[..len]).expect("valid");
    let fixture = Asset::parse(CHARACTER).expect("fixture");
    let all = parts(&asset);
    assert_eq!(all.len(), 3);
    assert!(all[0].has_normals() && all[0].has_tangents() && !all[1].has_normals() && all[2].influences() == 0);
    for part in all.iter().chain(&parts(&fixture)) {
        check_against_accessors::<f32>(part, f32::to_bits);
        check_against_accessors::<Q16>(part, |q| q.to_bits() as u32);
    }
}

#[test]
fn short_buffers_are_refused_and_left_untouched() {
    let mut buf = [0u8; 2048];
    let len = build(&mut buf);
    let asset = Asset::parse(&buf[..len]).expect("valid");
    let part = asset.mesh(0).and_then(|m| m.parts().next()).expect("part");
    let len = part.inputs_len();
    assert_eq!(len, PartInputsLen { vertices: 3, normals: 3, tangents: 3, influences: 6, palette: 2 });
    let full = [len.vertices, len.normals, len.tangents, len.influences, len.influences];
    for short in 0..5 {
        let mut lens = full;
        lens[short] -= 1;
        let mut p = vec![Vec3::splat(9.0f32); lens[0]];
        let mut n = vec![Vec3::splat(9.0); lens[1]];
        let mut t = vec![Vec4::new(9.0, 9.0, 9.0, 9.0); lens[2]];
        let mut j = vec![9u16; lens[3]];
        let mut w = vec![9.0f32; lens[4]];
        let buffers = PartBuffers::new(&mut p, &mut j, &mut w).with_normals(&mut n).with_tangents(&mut t);
        assert_eq!(part.read_inputs(buffers).err(), Some(JobError::OutputTooSmall), "buffer {short} short");
        assert!(p.iter().chain(&n).all(|&v| v == Vec3::splat(9.0)), "buffer {short} short");
        assert!(
            t.iter().all(|&v| v == Vec4::new(9.0, 9.0, 9.0, 9.0))
                && j.iter().all(|&v| v == 9)
                && w.iter().all(|&v| v == 9.0)
        );
    }
    let mut few = [Vec3::<f32>::ZERO; 2];
    assert_eq!(part.read_positions(&mut few), Err(JobError::OutputTooSmall));
    assert_eq!(part.read_normals(&mut few), Err(JobError::OutputTooSmall));
    assert_eq!(part.read_tangents(&mut [Vec4::<f32>::ZERO; 2]), Err(JobError::OutputTooSmall));
    assert_eq!(part.read_influences(&mut [0; 6], &mut [0.0f32; 5]), Err(JobError::OutputTooSmall));
    assert_eq!(part.read_influences(&mut [0; 5], &mut [0.0f32; 6]), Err(JobError::OutputTooSmall));
    assert_eq!(few, [Vec3::ZERO; 2]);

    // A part without normals or tangents reads `None` for them, whatever their buffers.
    let bare = asset.mesh(0).and_then(|m| m.parts().nth(1)).expect("part 1");
    let (mut p, mut j, mut w) = ([Vec3::<f32>::ZERO; 3], [0u16; 3], [0.0f32; 3]);
    let mut none: [Vec3<f32>; 0] = [];
    let mut t = [Vec4::new(9.0f32, 9.0, 9.0, 9.0); 1];
    let buffers = PartBuffers::new(&mut p, &mut j, &mut w).with_normals(&mut none).with_tangents(&mut t);
    let inputs = bare.read_inputs(buffers).expect("normals and tangents not needed");
    assert!(inputs.normals.is_none() && inputs.tangents.is_none());
    assert_eq!(t, [Vec4::new(9.0, 9.0, 9.0, 9.0); 1]);
    assert_eq!(bare.read_normals(&mut none), Ok(None));
    assert_eq!(bare.read_tangents(&mut t), Ok(None));
    // Normals the part has are skipped without a buffer for them.
    let (mut p, mut j, mut w) = ([Vec3::<f32>::ZERO; 3], [0u16; 6], [0.0f32; 6]);
    let inputs = part.read_inputs(PartBuffers::new(&mut p, &mut j, &mut w)).expect("positions and influences");
    assert!(inputs.normals.is_none() && inputs.tangents.is_none());
}

#[test]
fn rigid_parts_read_no_influences() {
    let mut buf = [0u8; 2048];
    let len = build(&mut buf);
    let asset = Asset::parse(&buf[..len]).expect("valid");
    let part = asset.mesh(1).and_then(|m| m.parts().next()).expect("rigid part");
    assert_eq!(part.inputs_len(), PartInputsLen { vertices: 3, normals: 3, tangents: 0, influences: 0, palette: 0 });
    let mut p = [Vec3::<f32>::ZERO; 3];
    let inputs = part.read_inputs(PartBuffers::new(&mut p, &mut [], &mut [])).expect("no influences to read");
    assert_eq!((inputs.influences, inputs.joint_indices.len(), inputs.joint_weights.len()), (0, 0, 0));
    assert_eq!(inputs.positions[1], Vec3::X);
    // The skinning job refuses a rigid part with its typed error.
    let mut out = [Vec3::ZERO; 3];
    assert_eq!(inputs.job(Palette::Matrices(&[]), &mut out).run(), Err(JobError::InvalidInfluenceCount));
    assert_eq!(part.local_palette::<u8>(&[], &mut []), Ok(&[][..]));
}

#[test]
fn local_palettes_pick_the_skin_joints_in_order() {
    let mut buf = [0u8; 2048];
    let len = build(&mut buf);
    let asset = Asset::parse(&buf[..len]).expect("valid");
    let part = asset.mesh(0).and_then(|m| m.parts().next()).expect("part");
    let skin = ['x', 'y', 'z'];
    let mut out = ['-'; 3];
    assert_eq!(part.local_palette(&skin, &mut out), Ok(&['z', 'x'][..]));
    assert_eq!(out, ['z', 'x', '-']);
    let mut out = ['-'; 1];
    assert_eq!(part.local_palette(&skin, &mut out), Err(JobError::OutputTooSmall));
    // A skin palette too short for the part's entries (entry 0 names skin joint 2).
    let mut out = ['-'; 2];
    assert_eq!(part.local_palette(&skin[..2], &mut out), Err(JobError::JointIndexOutOfRange));
    assert_eq!(out, ['-'; 2]);
}

/// The reader and the local palette give the skinning job the same bits as inputs gathered
/// with the accessors, for a matrix and a dual-quaternion palette, on every skinned part of the
/// fixture and of the file written here.
#[test]
fn skinning_through_the_reader_matches_gathering_by_hand() {
    let mut buf = [0u8; 2048];
    let len = build(&mut buf);
    let small = Asset::parse(&buf[..len]).expect("valid");
    let fixture = Asset::parse(CHARACTER).expect("fixture");
    for asset in [&small, &fixture] {
        let skin = asset.skin(0).expect("skin");
        let sj = skin.num_joints();
        let model: Vec<Mat4<f32>> = (0..asset.skeleton().expect("skeleton").num_joints())
            .map(|j| {
                let turn = Quat::from_axis_angle(Vec3::new(0.3, 1.0, -0.2).normalize_or_zero(), 0.2 * j as f32);
                Mat4::from_trs(Vec3::new(0.1 * j as f32, 0.05, -0.02 * j as f32), turn, Vec3::ONE)
            })
            .collect();
        let ib: Vec<Mat4<f32>> = (0..sj).map(|j| skin.inverse_bind(j)).collect();
        let joints: Vec<u16> = (0..sj).map(|j| skin.joint(j)).collect();
        let mut matrices = vec![Mat4::IDENTITY; sj];
        SkinMatrixJob::new(&model, &ib, &mut matrices).with_joints(&joints).run().expect("matrices");
        let mut dual_quats = vec![DualQuat::IDENTITY; sj];
        SkinDualQuatJob::new(&model, &ib, &mut dual_quats).with_joints(&joints).run().expect("dual quaternions");

        let mesh = asset.mesh(0).expect("mesh");
        let len = PartInputsLen::of_mesh(&mesh);
        let (mut p, mut n) = (vec![Vec3::ZERO; len.vertices], vec![Vec3::ZERO; len.normals]);
        let (mut j, mut w) = (vec![0; len.influences], vec![0.0; len.influences]);
        let (mut lm, mut ld) = (vec![Mat4::IDENTITY; len.palette], vec![DualQuat::IDENTITY; len.palette]);
        let (mut out_p, mut out_n) = (vec![Vec3::ZERO; len.vertices], vec![Vec3::ZERO; len.vertices]);
        for part in mesh.parts() {
            let (nv, k, pl) = (part.num_vertices(), part.influences(), part.palette_len());
            let inputs =
                part.read_inputs(PartBuffers::new(&mut p, &mut j, &mut w).with_normals(&mut n)).expect("inputs");
            let hand_p: Vec<Vec3<f32>> = (0..nv).map(|v| part.position(v)).collect();
            let hand_n: Vec<Vec3<f32>> = (0..nv).map(|v| part.normal(v)).collect();
            let hand_j: Vec<u16> = (0..nv * k).map(|i| part.joint(i / k, i % k)).collect();
            let hand_w: Vec<f32> = (0..nv * k).map(|i| part.weight(i / k, i % k)).collect();
            let hand_m: Vec<Mat4<f32>> = (0..pl).map(|i| matrices[part.palette(i) as usize]).collect();
            let hand_d: Vec<DualQuat<f32>> = (0..pl).map(|i| dual_quats[part.palette(i) as usize]).collect();
            let local_m = part.local_palette(&matrices, &mut lm).expect("matrices");
            let local_d = part.local_palette(&dual_quats, &mut ld).expect("dual quaternions");
            for (mine, hand) in [
                (Palette::Matrices(local_m), Palette::Matrices(&hand_m)),
                (Palette::DualQuats(local_d), Palette::DualQuats(&hand_d)),
            ] {
                let mut job = inputs.job(mine, &mut out_p);
                let mut expected_n = vec![Vec3::ZERO; nv];
                let mut expected_p = vec![Vec3::ZERO; nv];
                let mut reference = SkinningJob::new(hand, k, &hand_j, &hand_w, &hand_p, &mut expected_p);
                if let Some(normals) = inputs.normals {
                    job = job.with_normals(normals, &mut out_n);
                    reference = reference.with_normals(&hand_n, &mut expected_n);
                }
                job.run().expect("skin");
                reference.run().expect("reference");
                let bits =
                    |v: &[Vec3<f32>]| v.iter().flat_map(|v| [v.x, v.y, v.z].map(f32::to_bits)).collect::<Vec<_>>();
                assert_eq!(bits(&out_p[..nv]), bits(&expected_p));
                if inputs.normals.is_some() {
                    assert_eq!(bits(&out_n[..nv]), bits(&expected_n));
                }
            }
        }
    }
}
