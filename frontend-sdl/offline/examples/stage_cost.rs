//! The instruction cost of `sinew bench`'s `sample` and `crowd` stages on a model, for
//! callgrind (deterministic where the wall clock of a shared machine is not). `calls` runs the
//! stage's work, which is what callgrind counts:
//!
//! ```sh
//! cargo run --release -p sinew-frontend --bin sinew -- bake ../shared/assets/ozz/pab_crossarms.glb -o /tmp/pab.sinew
//! cargo build --release -p sinew-offline --example stage_cost
//! valgrind --tool=callgrind --toggle-collect='stage_cost::calls' target/release/examples/stage_cost /tmp/pab.sinew sample
//! valgrind --tool=callgrind --toggle-collect='stage_cost::calls' target/release/examples/stage_cost /tmp/pab.sinew crowd
//! ```
//!
//! `sample`: [`CALLS`] calls of the kit's sampling workload (`bench::sample_next_frame`, the
//! clock 1/60 s further each call); divide callgrind's total by [`CALLS`] for a call.
//! `crowd`: [`FRAMES`] frames of 100 characters of the kit's crowd, after one frame unmeasured;
//! divide by `FRAMES` × 100 for a character's frame. Give a `.sinew` file: a `.glb` is baked
//! first, which is slow under valgrind. `SINEW_KERNELS=baseline` runs the build's own kernels.

use std::hint::black_box;
use std::path::PathBuf;

use sinew::clip::SoaTrackCache;
use sinew::math::SoaTransform;
use sinew_offline::bake::BakeOptions;
use sinew_offline::bench;
use sinew_offline::model::Model;

/// Sampling calls measured.
const CALLS: usize = 600;
/// Crowd frames measured.
const FRAMES: usize = 10;

/// The stage's work.
#[inline(never)]
fn calls<T>(f: impl FnOnce() -> T) -> T {
    f()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().ok_or("usage: stage_cost MODEL sample|crowd")?);
    let stage = args.next().unwrap_or_else(|| "sample".into());
    eprintln!("kernels: {:?}", sinew::kernels::active());
    let model = Model::load(&path, None, &BakeOptions::default())?;
    match stage.as_str() {
        "sample" => {
            let clip = model.asset().clip(0).ok_or("the model has no clip")?;
            let skel = model.skeleton();
            let soa = skel.num_soa_joints();
            let mut cache = vec![SoaTrackCache::<f32>::EMPTY; soa];
            let mut pose = vec![SoaTransform::<f32>::IDENTITY; soa];
            let mut t = 0.0f32;
            calls(|| {
                for _ in 0..CALLS {
                    bench::sample_next_frame(clip, skel, &mut t, &mut cache, &mut pose)?;
                    black_box(&pose);
                }
                Ok::<(), sinew::job::JobError>(())
            })?;
        }
        "crowd" => {
            let mut crowd = bench::KitCrowd::new(&model, 0, 100)?;
            crowd.run_frames(1, 1)?;
            calls(|| crowd.run_frames(FRAMES, 1))?;
            black_box(crowd.palettes());
        }
        other => return Err(format!("unknown stage {other}: sample or crowd").into()),
    }
    Ok(())
}
