//! What retargeting costs per joint beside sampling, on the built-in character (22 joints):
//! `SamplingJob` playing `walk` forward at 60 Hz through its caches, and `RetargetJob` turning
//! that pose (as model matrices) into the local pose of a second skeleton, the character's
//! hierarchy with its bones a quarter longer and every rest rotation turned. Both are timed in
//! the same run, in batches of 1,000 calls; the fastest batch of each is printed in ns per
//! joint, with their ratio.
//!
//! ```text
//! cargo run --release -p sinew --example retarget_cost
//! ```

use std::time::Instant;

use sinew::asset::Asset;
use sinew::clip::{RotationInterpolation, SoaTrackCache};
use sinew::job::retarget::{world_rotations, RetargetJob, RetargetJoint, RetargetRoot};
use sinew::job::{LocalToModelJob, SamplingJob};
use sinew::math::{Mat4, Quat, SoaTransform, Transform, Vec3};
use sinew::skeleton::Skeleton;

static CHARACTER: &[u8] = include_bytes!("../fixtures/character.sinew");
const SOA: usize = 8;
const BATCH: usize = 1000;
const BATCHES: usize = 200;

fn model(s: &Skeleton<f32, SOA>, pose: &[SoaTransform<f32>]) -> Vec<Mat4<f32>> {
    let mut m = vec![Mat4::IDENTITY; s.num_joints()];
    let _ = LocalToModelJob::new(s.view(), pose, &mut m).run();
    m
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let asset = Asset::parse(CHARACTER)?;
    let source: Skeleton<f32, SOA> = asset.skeleton().ok_or("no skeleton")?.to_skeleton()?;
    let walk = asset.clip_by_name("walk").ok_or("no clip 'walk'")?;
    let n = source.num_joints();
    let view = source.view();
    let target = Skeleton::<f32, SOA>::from_fn(n, |k| {
        let r = view.rest_transform(k).unwrap_or(Transform::IDENTITY);
        let axis = Vec3::new((1 + k % 3) as f32 / 3.0, 1.0, (k % 2) as f32).normalize_or_zero();
        let rest = Transform::new(r.translation * 1.25, r.rotation * Quat::from_axis_angle(axis, 0.3), r.scale);
        (view.parents()[k], rest, view.name(k).unwrap_or(""))
    })?;
    let (ms, mt) = (model(&source, source.rest_pose()), model(&target, target.rest_pose()));
    let (mut rs, mut rt) = (vec![Quat::IDENTITY; n], vec![Quat::IDENTITY; n]);
    world_rotations(&ms, &mut rs)?;
    world_rotations(&mt, &mut rt)?;
    let map: Vec<u16> = (0..n as u16).collect();
    let mut joints = vec![RetargetJoint::UNMAPPED; n];
    RetargetJoint::offsets(&map, &rs, &rt, &mut joints)?;
    let hips = view.find("hips").ok_or("no joint 'hips'")?;
    let root = RetargetRoot::new(hips, hips, target.view(), &mt, &ms, None)?;

    let mut cache = [SoaTrackCache::EMPTY; SOA];
    let mut pose = vec![SoaTransform::IDENTITY; source.num_soa_joints()];
    let (mut t, duration) = (walk.start(), walk.end() - walk.start());
    let mut sample = |pose: &mut [SoaTransform<f32>]| {
        t = walk.start() + (t - walk.start() + 1.0 / 60.0) % duration;
        SamplingJob {
            clip: walk,
            time: t,
            rotation: RotationInterpolation::NlerpCorrected,
            rest_pose: source.rest_pose(),
            cursor: &mut cache,
            output: pose,
        }
        .run()
    };
    sample(&mut pose)?;
    let source_model = model(&source, &pose);
    let mut world = vec![Quat::IDENTITY; n];
    let mut out = vec![SoaTransform::IDENTITY; target.num_soa_joints()];
    let (mut best_sample, mut best_retarget) = (f64::MAX, f64::MAX);
    for _ in 0..BATCHES {
        let at = Instant::now();
        for _ in 0..BATCH {
            sample(std::hint::black_box(&mut pose))?;
        }
        best_sample = best_sample.min(at.elapsed().as_secs_f64());
        let at = Instant::now();
        for _ in 0..BATCH {
            RetargetJob {
                target: target.view(),
                joints: &joints,
                root: Some(root),
                source: std::hint::black_box(&source_model),
                world: &mut world,
                output: &mut out,
            }
            .run()?;
        }
        best_retarget = best_retarget.min(at.elapsed().as_secs_f64());
    }
    let per_joint = |s: f64| s * 1e9 / (BATCH * n) as f64;
    println!(
        "{n} joints, fastest of {BATCHES} batches of {BATCH}: sampling {:.1} ns per joint, retargeting {:.1} ns per joint ({:.2}x sampling)",
        per_joint(best_sample),
        per_joint(best_retarget),
        best_retarget / best_sample
    );
    Ok(())
}
