extern crate std;
use std::vec;
use std::vec::Vec;

use super::*;
use crate::asset::Asset;
use crate::clip::SoaTrackCache;
use crate::job::{BlendingJob, Layer, LocalToModelJob, SamplingJob, SkinMatrixJob};
use crate::math::{Mat4, SoaTransform};
use crate::skeleton::Skeleton;
use crate::test_support::Rng;

/// `host` natively, `miri` under miri (which interprets every step of every evaluation).
const fn size(host: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        host
    }
}

static CHARACTER: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));

struct Fixture {
    asset: Asset<'static>,
    skeleton: Skeleton<f32, 8>,
    joints: Vec<u16>,
    inverse_bind: Vec<Mat4<f32>>,
}

fn fixture() -> Fixture {
    let asset = Asset::parse(CHARACTER).unwrap();
    let skeleton = asset.skeleton().unwrap().to_skeleton::<f32, 8>().unwrap();
    let skin = asset.skin(0).unwrap();
    let joints = (0..skin.num_joints()).map(|i| skin.joint(i)).collect();
    let inverse_bind = (0..skin.num_joints()).map(|i| skin.inverse_bind(i)).collect();
    Fixture { asset, skeleton, joints, inverse_bind }
}

impl Fixture {
    fn clips(&self) -> Vec<Clip<'static>> {
        (0..self.asset.num_clips()).filter_map(|i| self.asset.clip(i)).collect()
    }
    fn rig(&self) -> CrowdRig<'_, f32> {
        CrowdRig::new(self.skeleton.view(), &self.joints, &self.inverse_bind).unwrap()
    }
}

/// Owned buffers of a crowd and one thread's work.
struct Buffers {
    instances: Vec<CrowdInstance>,
    slots: Vec<CrowdSlot>,
    table: Vec<u32>,
    evals: Vec<CrowdEval>,
}

impl Buffers {
    fn new(instances: Vec<CrowdInstance>) -> Self {
        let n = instances.len();
        Buffers {
            instances,
            slots: vec![CrowdSlot::EMPTY; n],
            table: vec![0; (2 * n).next_power_of_two()],
            evals: vec![CrowdEval::EMPTY; n],
        }
    }
    fn crowd(&mut self) -> Crowd<'_> {
        Crowd::new(&mut self.instances, &mut self.slots, &mut self.table, &mut self.evals, 60.0).unwrap()
    }
}

struct Work {
    caches: Vec<SoaTrackCache<f32>>,
    poses: Vec<SoaTransform<f32>>,
    model: Vec<Mat4<f32>>,
    skin: Vec<Mat4<f32>>,
}

impl Work {
    fn new(rig: &CrowdRig<'_, f32>) -> Self {
        let (c, p, m, s) = CrowdWork::sizes(rig);
        Work {
            caches: vec![SoaTrackCache::EMPTY; c],
            poses: vec![SoaTransform::IDENTITY; p],
            model: vec![Mat4::IDENTITY; m],
            skin: vec![Mat4::IDENTITY; s],
        }
    }
    fn work(&mut self) -> CrowdWork<'_, f32> {
        CrowdWork::new(&mut self.caches, &mut self.poses, &mut self.model, &mut self.skin)
    }
}

fn evaluate_all(crowd: &Crowd<'_>, palette: &mut [f32], layout: &CrowdLayout, parts: usize, f: &Fixture) {
    let rig = f.rig();
    let clips = f.clips();
    let mut w = Work::new(&rig);
    let mut batches = 0;
    for mut b in crowd.batches(palette, layout, parts) {
        b.run(&rig, &clips, crowd.fps(), &mut w.work()).unwrap();
        batches += 1;
    }
    let e = crowd.evals().len();
    assert_eq!(batches, e.div_ceil(e.div_ceil(parts).max(1)));
}

/// The palette of one instance computed by the jobs directly, without the crowd: each layer
/// sampled at its quantized time with empty caches, blended, walked, skinned.
fn direct(f: &Fixture, layers: &[(u16, f32, f32)]) -> Vec<f32> {
    let clips = f.clips();
    let soa = f.skeleton.num_soa_joints();
    let rest = f.skeleton.rest_pose();
    let mut poses: Vec<Vec<SoaTransform<f32>>> = Vec::new();
    for &(c, t, _) in layers {
        let clip = clips[c as usize];
        let q = ((t * 60.0 + 0.5) as u32).min(((clip.end() - clip.start()) * 60.0) as u32);
        let mut pose = vec![SoaTransform::IDENTITY; soa];
        let mut cache = vec![SoaTrackCache::EMPTY; soa];
        SamplingJob::new(clip, (clip.start() + q as f32 / 60.0).min(clip.end()), rest, &mut cache, &mut pose)
            .run()
            .unwrap();
        poses.push(pose);
    }
    let mut blended = vec![SoaTransform::IDENTITY; soa];
    let local = if layers.len() == 1 {
        &poses[0]
    } else {
        let l: Vec<Layer<'_, f32>> = poses
            .iter()
            .zip(layers)
            .map(|(p, &(_, _, w))| Layer { transform: p, weight: w, joint_weights: None })
            .collect();
        BlendingJob { layers: &l, additive: &[], rest_pose: rest, threshold: 0.1, output: &mut blended }.run().unwrap();
        &blended
    };
    let mut model = vec![Mat4::IDENTITY; f.skeleton.num_joints()];
    LocalToModelJob::new(f.skeleton.view(), local, &mut model).run().unwrap();
    let mut skin = vec![Mat4::IDENTITY; f.joints.len()];
    SkinMatrixJob { model: &model, inverse_bind: &f.inverse_bind, joints: Some(&f.joints), output: &mut skin }
        .run()
        .unwrap();
    let mut out = Vec::new();
    for m in &skin {
        for r in 0..3 {
            out.extend([m.cols[0][r], m.cols[1][r], m.cols[2][r], m.cols[3][r]]);
        }
    }
    out
}

fn slot_rows<'p>(palette: &'p [f32], layout: &CrowdLayout, slot: u32) -> &'p [f32] {
    let n = layout.slot_floats();
    &palette[slot as usize * n..(slot as usize + 1) * n]
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
#[cfg_attr(miri, ignore = "hundreds of pose evaluations: minutes under miri; the small crowds below run there")]
fn shared_poses_equal_each_instance_sampled_at_its_quantized_time() {
    let f = fixture();
    let clips = f.clips();
    let d = clips[0].end() - clips[0].start();
    let mut rng = Rng(7);
    // Times on a few frames, so that many instances share; some between frames.
    let n = size(96, 24);
    let instances: Vec<CrowdInstance> = (0..n)
        .map(|i| {
            let t = if i % 3 == 0 { (rng.next() * 0.5 + 0.5) * d } else { (i % 7) as f32 / 60.0 };
            CrowdInstance::new(0, t, 1.0)
        })
        .collect();
    let mut b = Buffers::new(instances);
    let layout = CrowdLayout::new(f.joints.len(), n, 2048).unwrap();
    let mut palette = vec![f32::NAN; layout.floats()];
    let mut crowd = b.crowd();
    let stats = crowd.frame(0.0, &clips).unwrap();
    assert_eq!(stats.evaluated + stats.shared + stats.held, n);
    assert!(stats.shared >= n / 2, "{stats:?}");
    evaluate_all(&crowd, &mut palette, &layout, 3, &f);
    for x in crowd.instances() {
        let l = x.layers[0];
        let expect = direct(&f, &[(0, l.time, 1.0)]);
        assert_eq!(bits(slot_rows(&palette, &layout, x.slot())), bits(&expect), "instance at {}", l.time);
    }
}

#[test]
#[cfg_attr(miri, ignore = "hundreds of pose evaluations: minutes under miri; the small crowds below run there")]
fn one_looping_clip_costs_at_most_its_frames_whatever_the_count() {
    let f = fixture();
    let clips = f.clips();
    let d = clips[0].end() - clips[0].start();
    let frames = (d * 60.0) as usize + 1;
    let mut rng = Rng(3);
    // Shorter under miri, which interprets every step.
    let (n, frames_run) = (size(2000, 200), size(10, 2));
    let mut b = Buffers::new((0..n).map(|_| CrowdInstance::new(0, (rng.next() * 0.5 + 0.5) * d, 1.0)).collect());
    let mut crowd = b.crowd();
    let layout = CrowdLayout::new(f.joints.len(), n, 2048).unwrap();
    let mut palette = vec![0.0; layout.floats()];
    for frame in 0..frames_run {
        let s = crowd.frame(1.0 / 60.0, &clips).unwrap();
        assert!(s.evaluated <= frames, "frame {frame}: {s:?}, clip of {frames} frames");
        assert_eq!(s.evaluated + s.shared, n);
        evaluate_all(&crowd, &mut palette, &layout, 2, &f);
        // Every instance's slot holds its key's pose.
        for x in crowd.instances().iter().step_by(size(97, 67)) {
            let expect = direct(&f, &[(0, x.layers[0].time, 1.0)]);
            assert_eq!(bits(slot_rows(&palette, &layout, x.slot())), bits(&expect));
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "hundreds of pose evaluations: minutes under miri; the small crowds below run there")]
fn update_rate_lod_holds_palettes_and_spreads_updates_evenly() {
    let f = fixture();
    let clips = f.clips();
    let n = size(64, 16);
    let mut instances: Vec<CrowdInstance> = (0..n).map(|i| CrowdInstance::new(0, i as f32 * 0.013, 1.0)).collect();
    for x in instances.iter_mut() {
        x.lod = 2;
    }
    let mut b = Buffers::new(instances);
    let mut crowd = b.crowd();
    let layout = CrowdLayout::new(f.joints.len(), n, 2048).unwrap();
    let mut palette = vec![0.0; layout.floats()];
    // The first frame updates everyone.
    let s = crowd.frame(1.0 / 60.0, &clips).unwrap();
    assert_eq!(s.held, 0);
    evaluate_all(&crowd, &mut palette, &layout, 1, &f);
    let mut last_update: Vec<Option<usize>> = vec![None; n];
    for frame in 1..=size(12, 9) {
        let before: Vec<Vec<u32>> =
            crowd.instances().iter().map(|x| bits(slot_rows(&palette, &layout, x.slot()))).collect();
        let s = crowd.frame(1.0 / 60.0, &clips).unwrap();
        // Every 4th frame, staggered: a quarter of the crowd updates each frame.
        assert_eq!(s.held, n - n / 4, "frame {frame}: {s:?}");
        evaluate_all(&crowd, &mut palette, &layout, 2, &f);
        for (i, x) in crowd.instances().iter().enumerate() {
            let now = bits(slot_rows(&palette, &layout, x.slot()));
            if now == before[i] {
                continue;
            }
            // Updated: its palette is its current time's, four frames after its last update
            // (the first within four frames of the start).
            match last_update[i] {
                Some(l) => assert_eq!(frame - l, 4, "instance {i} at frame {frame}"),
                None => assert!(frame <= 4, "instance {i} first updated at frame {frame}"),
            }
            last_update[i] = Some(frame);
            assert_eq!(now, bits(&direct(&f, &[(0, x.layers[0].time, 1.0)])));
        }
    }
    assert!(last_update.iter().all(|l| l.is_some_and(|l| l > 8)), "{last_update:?}");
}

#[test]
fn still_instances_keep_their_slots_without_evaluation() {
    let f = fixture();
    let clips = f.clips();
    let mut b = Buffers::new((0..10).map(|i| CrowdInstance::new(0, i as f32 * 0.05, 0.0)).collect());
    let mut crowd = b.crowd();
    assert_eq!(crowd.frame(1.0 / 60.0, &clips).unwrap().evaluated, 10);
    let slots: Vec<u32> = crowd.instances().iter().map(CrowdInstance::slot).collect();
    let s = crowd.frame(1.0 / 60.0, &clips).unwrap();
    assert_eq!((s.evaluated, s.shared, s.held), (0, 10, 0));
    assert!(crowd.written_slots().is_none());
    assert_eq!(slots, crowd.instances().iter().map(CrowdInstance::slot).collect::<Vec<_>>());
}

#[test]
fn two_layer_blends_equal_the_blending_job() {
    let f = fixture();
    let clips = f.clips();
    assert!(clips.len() >= 2, "the fixture has two clips");
    let mut x = CrowdInstance::new(0, 0.2, 1.0);
    x.layers[0].weight = 0.3;
    x.layers[1] = CrowdLayer { clip: 1, time: 0.45, speed: 1.0, weight: 0.7 };
    let mut b = Buffers::new(vec![x, x, CrowdInstance::new(1, 0.45, 1.0)]);
    let mut crowd = b.crowd();
    let s = crowd.frame(0.0, &clips).unwrap();
    assert_eq!((s.evaluated, s.shared), (2, 1));
    let layout = CrowdLayout::new(f.joints.len(), 3, 2048).unwrap();
    let mut palette = vec![0.0; layout.floats()];
    evaluate_all(&crowd, &mut palette, &layout, 4, &f);
    let expect = direct(&f, &[(0, 0.2, 0.3), (1, 0.45, 0.7)]);
    assert_eq!(bits(slot_rows(&palette, &layout, crowd.instance_slot(0))), bits(&expect));
    assert_eq!(crowd.instance_slot(0), crowd.instance_slot(1));
    // A lone layer plays at full weight whatever its weight: weight 0.7 alone is clip 1.
    let lone = direct(&f, &[(1, 0.45, 1.0)]);
    assert_eq!(bits(slot_rows(&palette, &layout, crowd.instance_slot(2))), bits(&lone));
}

#[test]
#[cfg_attr(miri, ignore = "hundreds of pose evaluations: minutes under miri; the small crowds below run there")]
fn batches_split_the_buffer_and_give_the_bits_of_one_batch() {
    let f = fixture();
    let clips = f.clips();
    let mut rng = Rng(11);
    let d = clips[0].end() - clips[0].start();
    let n = size(50, 12);
    let xs: Vec<CrowdInstance> = (0..n).map(|_| CrowdInstance::new(0, (rng.next() * 0.5 + 0.5) * d, 1.3)).collect();
    let layout = CrowdLayout::new(f.joints.len(), n, 200).unwrap();
    assert!(layout.per_row >= 1 && layout.width <= 200 && layout.height * layout.per_row >= n);
    let (mut one, mut many) = (vec![0.0; layout.floats()], vec![0.0; layout.floats()]);
    let (mut b1, mut b2) = (Buffers::new(xs.clone()), Buffers::new(xs));
    let (mut c1, mut c2) = (b1.crowd(), b2.crowd());
    for _ in 0..size(3, 2) {
        c1.frame(0.02, &clips).unwrap();
        c2.frame(0.02, &clips).unwrap();
        evaluate_all(&c1, &mut one, &layout, 1, &f);
        evaluate_all(&c2, &mut many, &layout, 7, &f);
        assert_eq!(bits(&one), bits(&many));
    }
}

#[test]
fn bad_inputs_are_refused_and_change_nothing() {
    let f = fixture();
    let clips = f.clips();
    let mut b = Buffers::new((0..4).map(|i| CrowdInstance::new(0, i as f32 * 0.1, 1.0)).collect());
    let mut crowd = b.crowd();
    crowd.frame(0.1, &clips).unwrap();
    let before: Vec<CrowdInstance> = crowd.instances().to_vec();
    crowd.instances_mut()[2].layers[0].clip = 9;
    assert_eq!(crowd.frame(0.1, &clips), Err(CrowdError::NoSuchClip { instance: 2, clip: 9 }));
    crowd.instances_mut()[2].layers[0].clip = 0;
    crowd.instances_mut()[1].layers[0].speed = f32::NAN;
    assert_eq!(crowd.frame(0.1, &clips), Err(CrowdError::InvalidLayer { instance: 1 }));
    crowd.instances_mut()[1].layers[0].speed = 1.0;
    crowd.instances_mut()[3].lod = 4;
    assert_eq!(crowd.frame(0.1, &clips), Err(CrowdError::InvalidLod { instance: 3 }));
    crowd.instances_mut()[3].lod = 0;
    assert_eq!(crowd.frame(f32::INFINITY, &clips), Err(CrowdError::InvalidTimeStep));
    assert_eq!(crowd.instances(), &before[..]);

    let mut xs = [CrowdInstance::new(0, 0.0, 1.0); 3];
    let (mut slots, mut evals) = ([CrowdSlot::EMPTY; 3], [CrowdEval::EMPTY; 3]);
    assert_eq!(Crowd::new(&mut xs, &mut slots, &mut [0; 4], &mut evals, 60.0).err(), Some(CrowdError::TableSize));
    assert_eq!(Crowd::new(&mut xs, &mut slots, &mut [0; 6], &mut evals, 60.0).err(), Some(CrowdError::TableSize));
    assert_eq!(
        Crowd::new(&mut xs, &mut slots[..2], &mut [0; 8], &mut evals, 60.0).err(),
        Some(CrowdError::TooFewSlots)
    );
    assert_eq!(
        Crowd::new(&mut xs, &mut slots, &mut [0; 8], &mut evals[..1], 60.0).err(),
        Some(CrowdError::TooFewEvals)
    );
    assert_eq!(Crowd::new(&mut xs, &mut slots, &mut [0; 8], &mut evals, 0.0).err(), Some(CrowdError::InvalidFrameRate));
    assert_eq!(CrowdLayout::new(700, 4, 2048), Err(CrowdError::TooWide));
    assert!(CrowdRig::new(f.skeleton.view(), &f.joints[1..], &f.inverse_bind).is_err());

    // A palette too short for the written slots ends the batches early.
    let mut table = [0; 8];
    let mut crowd = Crowd::new(&mut xs, &mut slots, &mut table, &mut evals, 60.0).unwrap();
    crowd.frame(0.0, &clips).unwrap();
    let layout = CrowdLayout::new(f.joints.len(), 3, 2048).unwrap();
    let mut short = vec![0.0; 5];
    let rig = f.rig();
    let mut w = Work::new(&rig);
    for mut batch in crowd.batches(&mut short, &layout, 1) {
        assert_eq!(batch.run(&rig, &clips, 60.0, &mut w.work()), Err(CrowdError::PaletteTooSmall));
    }
}

#[test]
fn times_wrap_into_the_clip_both_ways() {
    for (t, d, expect) in
        [(2.5f32, 1.0f32, 0.5f32), (-0.25, 1.0, 0.75), (-3.0, 1.0, 0.0), (0.3, 0.0, 0.0), (7.0, 2.0, 1.0)]
    {
        let w = wrap(t, d);
        assert!((w - expect).abs() < 1e-6 && (w == 0.0 || w < d), "wrap({t}, {d}) = {w}");
    }
    let lod = CrowdLod { thresholds: [100.0, 50.0, 20.0] };
    assert_eq!([150.0, 60.0, 30.0, 5.0, f32::NAN].map(|v| lod.level(v)), [0, 1, 2, 3, 3]);
}

#[test]
fn without_sharing_every_instance_is_evaluated_into_its_own_slot() {
    let f = fixture();
    let clips = f.clips();
    let mut b = Buffers::new((0..12).map(|i| CrowdInstance::new(0, (i % 3) as f32 * 0.1, 0.5)).collect());
    let mut crowd = b.crowd();
    crowd.set_sharing(false);
    let layout = CrowdLayout::new(f.joints.len(), 12, 2048).unwrap();
    let mut palette = vec![0.0; layout.floats()];
    for _ in 0..size(3, 1) {
        let s = crowd.frame(1.0 / 60.0, &clips).unwrap();
        assert_eq!((s.evaluated, s.shared, s.held), (12, 0, 0));
        evaluate_all(&crowd, &mut palette, &layout, 2, &f);
        let mut slots: Vec<u32> = crowd.instances().iter().map(CrowdInstance::slot).collect();
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(slots.len(), 12);
        for x in crowd.instances() {
            assert_eq!(bits(slot_rows(&palette, &layout, x.slot())), bits(&direct(&f, &[(0, x.layers[0].time, 1.0)])));
        }
    }
    // Resumed from its state over the same buffers, the crowd goes on where it was.
    let state = crowd.state();
    let mut again = Crowd::resume(&mut b.instances, &mut b.slots, &mut b.table, &mut b.evals, state).unwrap();
    assert!(!again.sharing());
    assert_eq!(again.frames(), size(3, 1) as u32);
    assert_eq!(again.frame(1.0 / 60.0, &clips).unwrap().evaluated, 12);
}
