//! The least the core takes in a page: a module that opens a `.sinew` file in place with every
//! check the runtime makes, samples one clip, and computes the joints' model matrices and skin
//! 0's palette — the core's parser, its smallest sampler (key cursors), the hierarchy and the
//! skin matrices, and nothing else: no allocator, no messages, no blending, no meshes. `size.sh`
//! builds it as `sinew_web.wasm` is built and prints its gzipped size under the page's total,
//! as the floor any module built on the core starts from.
//!
//! Exports (wasm32): `floor_bytes()` / `floor_capacity()`, where the page writes the file;
//! `floor_run(len, clip, time)`, which returns the palette's length (negative: the step that
//! failed); `floor_palette()`, 16 floats per skin joint.

#![cfg_attr(target_family = "wasm", no_std)]

use core::cell::UnsafeCell;

use sinew::asset::Asset;
use sinew::clip::RotationInterpolation;
use sinew::job::{LocalToModelJob, SamplingJob, SkinMatrixJob};
use sinew::math::{Mat4, SoaTransform};

/// Joints at most, in fours (256 joints, the runtime's limit).
const SOA_JOINTS: usize = 64;
/// Joints at most.
const JOINTS: usize = SOA_JOINTS * 4;
/// Clip tracks at most (a position, rotation and scale track per joint).
const TRACKS: usize = JOINTS * 3;
/// Bytes a file may have.
const CAPACITY: usize = 2 << 20;

/// Module memory the page and `floor_run` take turns with (wasm runs one thread).
struct Shared<T>(UnsafeCell<T>);

// SAFETY: the module is single-threaded; the page writes the file between calls only.
unsafe impl<T> Sync for Shared<T> {}

static BYTES: Shared<[u8; CAPACITY]> = Shared(UnsafeCell::new([0; CAPACITY]));
static PALETTE: Shared<[Mat4<f32>; JOINTS]> = Shared(UnsafeCell::new([Mat4::IDENTITY; JOINTS]));

/// Where the page writes the file.
#[no_mangle]
pub extern "C" fn floor_bytes() -> *mut u8 {
    BYTES.0.get().cast()
}

/// How many bytes fit at [`floor_bytes`].
#[no_mangle]
pub extern "C" fn floor_capacity() -> usize {
    CAPACITY
}

/// Skin 0's palette, as the last [`floor_run`] left it.
#[no_mangle]
pub extern "C" fn floor_palette() -> *const f32 {
    PALETTE.0.get().cast()
}

/// Opens the `len` bytes at [`floor_bytes`], samples clip `clip` at `time` seconds and computes
/// skin 0's palette: its length, 0 without a skin, or the negative step that failed (1: the
/// file, 2: its skeleton, 3: the clip, 4: sampling, 5: the hierarchy, 6: the palette).
#[no_mangle]
pub extern "C" fn floor_run(len: usize, clip: usize, time: f32) -> i32 {
    // SAFETY: no reference to either static outlives this call, and the page does not write
    // the file while it runs.
    let (bytes, palette) = unsafe { (&*BYTES.0.get(), &mut *PALETTE.0.get()) };
    run(bytes.get(..len).unwrap_or(&[]), clip, time, palette).unwrap_or_else(|step| -step)
}

fn run(bytes: &[u8], clip: usize, time: f32, palette: &mut [Mat4<f32>; JOINTS]) -> Result<i32, i32> {
    let asset = Asset::parse_without_graph_rules(bytes).map_err(|_| 1)?;
    let skeleton = asset.skeleton().ok_or(2)?.to_skeleton::<f32, SOA_JOINTS>().map_err(|_| 2)?;
    let clip = asset.clip(clip).ok_or(3)?;
    let mut pose = [SoaTransform::IDENTITY; SOA_JOINTS];
    let pose = pose.get_mut(..skeleton.num_soa_joints()).ok_or(4)?;
    let mut cursors = [0u16; TRACKS];
    let cursor = cursors.get_mut(..clip.num_tracks()).ok_or(4)?;
    let rest_pose = skeleton.rest_pose();
    SamplingJob { clip, time, rotation: RotationInterpolation::NlerpCorrected, rest_pose, cursor, output: pose }
        .run()
        .map_err(|_| 4)?;
    let mut model = [Mat4::IDENTITY; JOINTS];
    let model = model.get_mut(..skeleton.num_joints()).ok_or(5)?;
    LocalToModelJob::new(skeleton.view(), pose, model).run().map_err(|_| 5)?;
    let Some(skin) = asset.skin(0) else { return Ok(0) };
    let n = skin.num_joints();
    let (mut inverse_bind, mut joints) = ([Mat4::IDENTITY; JOINTS], [0u16; JOINTS]);
    for (i, (m, j)) in inverse_bind.iter_mut().zip(joints.iter_mut()).enumerate().take(n) {
        *m = skin.inverse_bind(i);
        *j = skin.joint(i);
    }
    let (Some(inverse_bind), Some(joints), Some(out)) = (inverse_bind.get(..n), joints.get(..n), palette.get_mut(..n))
    else {
        return Err(6);
    };
    SkinMatrixJob::new(model, inverse_bind, out).with_joints(joints).run().map_err(|_| 6)?;
    Ok(n as i32)
}

#[cfg(target_family = "wasm")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}

#[cfg(all(test, not(target_family = "wasm")))]
mod tests {
    use std::rc::Rc;

    use sinew_host::character::outputs;
    use sinew_web::{WebCharacter as Character, WebWork as Work};

    use super::*;

    static CHARACTER: &[u8] = include_bytes!("../../../core/fixtures/character.sinew");

    /// The floor computes what the runtime computes: the same palette for the same clip and time
    /// (to rounding: key cursors and the runtime's lane caches order some products apart).
    #[test]
    fn gives_the_runtime_palette() {
        let model = Rc::new(sinew_web::model::open(CHARACTER.into(), usize::MAX).unwrap());
        for clip in 0..model.clips.len() {
            let entry = &model.clips[clip].clip;
            let time = entry.start() + (entry.end() - entry.start()) * 0.37;
            let mut c = Character::new(Rc::clone(&model)).unwrap();
            c.play(clip).unwrap();
            c.seek(time);
            c.update(outputs::PALETTES, &mut Work::default()).unwrap();
            let want = &c.palettes[0];

            let mut palette = [Mat4::IDENTITY; JOINTS];
            assert_eq!(run(CHARACTER, clip, c.time(), &mut palette), Ok(want.len() as i32));
            for (j, (got, want)) in palette.iter().zip(want).enumerate() {
                for (g, w) in got.to_cols_array().iter().zip(want.to_cols_array()) {
                    assert!((g - w).abs() <= 1e-5, "clip {clip}, joint {j}: {g} against {w}");
                }
            }
        }
    }

    #[test]
    fn names_the_step_that_fails() {
        let mut palette = [Mat4::IDENTITY; JOINTS];
        assert_eq!(run(&CHARACTER[..100], 0, 0.0, &mut palette), Err(1));
        assert_eq!(run(CHARACTER, 99, 0.0, &mut palette), Err(3));
    }
}
