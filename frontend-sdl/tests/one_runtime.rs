//! One runtime under every front end: the desktop viewer's character, the browser runtime's
//! character (its C ABI, built natively) and the core's `Controller` driven directly go through
//! the same script (play, a phase-synced crossfade, its end, a seek, a blend, a plain
//! crossfade) and give the same skin palette, bit for bit, after every step.

use std::path::Path;

use sinew::asset::Asset;
use sinew::controller::{ClipEntry, ClipId, Controller, ControllerScratch, FadeCurve, LayerId, SlotId, SoaCaches};
use sinew::job::{LocalToModelJob, SkinMatrixJob};
use sinew::math::{Mat4, SoaTransform};
use sinew::skeleton::Skeleton;
use sinew_frontend::demo::viewer::{PaletteSizes, Viewer};
use sinew_web::abi;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../core/fixtures/character.sinew");

sinew::capacity! {
    /// The fixture's 22 joints, two clip slots.
    struct Two { joints: 24, slots: 2 }
}

/// One step of the script.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Play a clip alone from its start.
    Play(usize),
    /// Advance time.
    Advance(f32),
    /// Crossfade to a clip over seconds, by smoothstep, phase-synced or not.
    Crossfade(usize, f32, bool),
    /// Move the playing clip to a time.
    Seek(f32),
    /// Blend a second clip in at a weight.
    Blend(usize, f32),
}

const WALK: usize = 0;
const RUN: usize = 1;

const SCRIPT: &[Step] = &[
    Step::Play(WALK),
    Step::Advance(0.2),
    Step::Advance(1.0 / 60.0),
    Step::Crossfade(RUN, 0.25, true),
    Step::Advance(0.1),
    Step::Advance(0.1),
    Step::Advance(0.1),
    Step::Advance(1.0 / 60.0),
    Step::Seek(0.3),
    Step::Advance(1.0 / 30.0),
    Step::Blend(WALK, 0.4),
    Step::Advance(0.05),
    Step::Crossfade(WALK, 0.5, false),
    Step::Advance(0.2),
    Step::Advance(0.4),
];

/// The skin palette of `pose` as a flat list of bits.
fn palette_bits(asset: &Asset<'_>, skeleton: &Skeleton<f32, { Two::SOA }>, pose: &[SoaTransform<f32>]) -> Vec<u32> {
    let mut model = vec![Mat4::IDENTITY; skeleton.num_joints()];
    LocalToModelJob::new(skeleton.view(), pose, &mut model).run().unwrap();
    let skin = asset.skin(0).unwrap();
    let joints: Vec<u16> = (0..skin.num_joints()).map(|i| skin.joint(i)).collect();
    let inverse: Vec<Mat4<f32>> = (0..skin.num_joints()).map(|i| skin.inverse_bind(i)).collect();
    let mut palette = vec![Mat4::IDENTITY; joints.len()];
    SkinMatrixJob::new(&model, &inverse, &mut palette).with_joints(&joints).run().unwrap();
    palette.iter().flat_map(|m| m.to_cols_array()).map(f32::to_bits).collect()
}

/// The script on the core's `Controller`: the primary clip in one slot, the second or incoming
/// one in the other (kept with its time when it already plays the clip asked for), updated by
/// each advance and by a zero step after any other change.
fn controller_palettes(bytes: &[u8]) -> Vec<Vec<u32>> {
    let asset = Asset::parse(bytes).unwrap();
    let skeleton: Skeleton<f32, { Two::SOA }> = asset.skeleton().unwrap().to_skeleton().unwrap();
    let clips: Vec<ClipEntry<'_, f32>> =
        (0..asset.num_clips()).map(|i| ClipEntry::new(asset.clip(i).unwrap())).collect();
    let mut c = Controller::<f32, Two, SoaCaches>::new();
    let mut scratch = ControllerScratch::new();
    let mut pose = skeleton.rest_pose().to_vec();
    let mut primary = 0;
    let mut fading = false;
    let mut out = Vec::new();
    for step in SCRIPT {
        let mut dt = 0.0;
        match *step {
            Step::Play(clip) => {
                c.assign(SlotId(primary), LayerId(0), ClipId(clip), &clips).unwrap();
                c.set_weight(primary, 1.0).unwrap();
                c.clear(1 - primary).unwrap();
            }
            Step::Advance(t) => dt = t,
            Step::Crossfade(clip, seconds, sync) => {
                // A second clip already playing `clip` fades in from its time and weight.
                if c.clip_of(1 - primary) != Some(clip) {
                    c.assign(SlotId(1 - primary), LayerId(0), ClipId(clip), &clips).unwrap();
                }
                c.crossfade(1 - primary, seconds, FadeCurve::SmoothStep, sync).unwrap();
                fading = true;
            }
            Step::Seek(t) => c.player_mut(primary).unwrap().seek(t),
            Step::Blend(clip, w) => {
                if c.clip_of(1 - primary) != Some(clip) {
                    c.assign(SlotId(1 - primary), LayerId(0), ClipId(clip), &clips).unwrap();
                }
                c.set_weight(primary, 1.0 - w).unwrap();
                c.set_weight(1 - primary, w).unwrap();
            }
        }
        c.update(dt, &clips, skeleton.view(), &mut scratch, &mut pose, |_| {}).unwrap();
        if fading && !c.is_fading(1 - primary) {
            // The crossfade ended: the incoming slot is the primary, the other is emptied.
            c.clear(primary).unwrap();
            primary = 1 - primary;
            fading = false;
        }
        out.push(palette_bits(&asset, &skeleton, &pose));
    }
    out
}

/// The script on the desktop viewer.
fn viewer_palettes(bytes: &[u8]) -> Vec<Vec<u32>> {
    let asset = Asset::parse(bytes).unwrap();
    let skeleton: Skeleton<f32, { Two::SOA }> = asset.skeleton().unwrap().to_skeleton().unwrap();
    let mut v = Viewer::load(Path::new(FIXTURE), None, PaletteSizes::same(64)).unwrap();
    let mut out = Vec::new();
    for step in SCRIPT {
        match *step {
            Step::Play(clip) => v.select(clip),
            Step::Advance(t) => v.advance(t).unwrap(),
            Step::Crossfade(clip, seconds, sync) => v.crossfade_to(clip, seconds, FadeCurve::SmoothStep, sync).unwrap(),
            Step::Seek(t) => v.seek_primary(t),
            Step::Blend(clip, w) => {
                while v.secondary() != Some(clip) {
                    v.cycle_secondary();
                }
                v.nudge_weight(w - v.weight());
            }
        }
        out.push(palette_bits(&asset, &skeleton, &v.pose().unwrap()));
    }
    out
}

/// The script through the browser runtime's exports, as `js/sinew.js` calls them.
fn web_palettes(bytes: &[u8]) -> Vec<Vec<u32>> {
    let ptr = abi::sinew_alloc(bytes.len());
    // SAFETY: `ptr` holds `bytes.len()` bytes from `sinew_alloc`, handed over to the model.
    let model = unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len());
        abi::sinew_model_open(ptr, bytes.len(), 64)
    };
    assert_ne!(model, 0);
    let c = abi::sinew_character_new(model);
    assert_ne!(c, 0);
    let joints = Asset::parse(bytes).unwrap().skin(0).unwrap().num_joints();
    let mut out = Vec::new();
    for step in SCRIPT {
        let ok = match *step {
            Step::Play(clip) => abi::sinew_character_play(c, clip as u32),
            Step::Advance(t) => abi::sinew_character_advance(c, t),
            Step::Crossfade(clip, seconds, sync) => {
                abi::sinew_character_crossfade(c, clip as u32, seconds, 1 | if sync { 2 } else { 0 })
            }
            Step::Seek(t) => {
                abi::sinew_character_seek(c, t);
                1
            }
            Step::Blend(clip, w) => abi::sinew_character_blend(c, clip as u32, w),
        };
        assert_eq!(ok, 1, "{step:?}");
        assert_eq!(abi::sinew_character_update(c, 1), 1);
        let p = abi::sinew_character_palette(c, 0);
        assert!(!p.is_null());
        // SAFETY: skin 0's palette, 16 floats per skin joint, alive until the next call.
        let floats = unsafe { std::slice::from_raw_parts(p, joints * 16) };
        out.push(floats.iter().map(|x| x.to_bits()).collect());
    }
    abi::sinew_character_free(c);
    abi::sinew_model_close(model);
    out
}

#[test]
fn the_viewer_the_browser_runtime_and_the_controller_give_the_same_palette_bits() {
    let bytes = std::fs::read(FIXTURE).unwrap();
    let want = controller_palettes(&bytes);
    let viewer = viewer_palettes(&bytes);
    let web = web_palettes(&bytes);
    for (i, step) in SCRIPT.iter().enumerate() {
        assert_eq!(viewer[i], want[i], "the viewer after step {i} ({step:?})");
        assert_eq!(web[i], want[i], "the browser runtime after step {i} ({step:?})");
    }
    // The script moves the character: every advance, seek and blend changes the palette.
    for (i, step) in SCRIPT.iter().enumerate().skip(1) {
        if !matches!(step, Step::Crossfade(..)) {
            assert_ne!(want[i], want[i - 1], "step {i} ({step:?}) leaves the palette as it was");
        }
    }
}
