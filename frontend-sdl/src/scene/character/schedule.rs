//! The character's animation controller and what drives it: the slots and layers of its
//! clips, the upper-body [`WAVE_MASK`], and the schedule of crossfades and waves that repeats
//! every [`SCHEDULE_PERIOD`].

use sinew::controller::{Controller, ControllerError, ControllerScratch, FadeCurve};
use sinew::root_motion::RootMotionSettings;
use sinew_pipeline::builtin::humanoid;
use sinew_pipeline::model::Model;

use crate::scene::error::SceneError;

/// The character's simulation step, in seconds: [`Scene::character`] replays the controller
/// from t = 0 in steps of this length (cached), then one partial step to the asked time.
///
/// [`Scene::character`]: crate::scene::Scene::character
pub const CHARACTER_STEP: f32 = 1.0 / 60.0;
/// Simulation steps per second (1 / [`CHARACTER_STEP`]).
pub(super) const STEPS_PER_SECOND: f64 = 60.0;

/// Length of the character's repeating schedule, in seconds.
pub const SCHEDULE_PERIOD: f32 = 20.0;

/// Controller slot of `idle`: [`CharacterFrame::slots`] is indexed by these; `idle`, `walk`
/// and `run` play on the base layer, `wave` on the upper one.
///
/// [`CharacterFrame::slots`]: super::CharacterFrame::slots
pub const IDLE: usize = 0;
/// Slot of `walk` (see [`IDLE`]).
pub const WALK: usize = 1;
/// Slot of `run` (see [`IDLE`]).
pub const RUN: usize = 2;
/// Slot of `wave` (see [`IDLE`]).
pub const WAVE: usize = 3;
/// The layer `wave` plays on, masked by [`WAVE_MASK`].
const WAVE_LAYER: usize = 1;

/// The upper-body layer's mask: the subtree of the right clavicle (the right shoulder, arm and
/// hand) with a fade-in of one level, so the clavicle takes half of `wave` and the arm from
/// the shoulder joint down all of it. The legs, spine, head and left arm keep the base layer's
/// locomotion.
pub const WAVE_MASK: sinew::mask::Channel = sinew::mask::Channel::subtree(humanoid::R_CLAVICLE, 1);

/// The character's controller: 22 joints, 4 slots, 2 layers, cursors for any clip.
pub(super) type CharacterController =
    Controller<f32, { sinew::limits::soa_count(humanoid::COUNT) }, 4, 2, { 3 * humanoid::COUNT }>;

/// The working memory of the character's controller updates.
pub(super) type CharacterScratch = ControllerScratch<f32, { sinew::limits::soa_count(humanoid::COUNT) }, 4, 2>;

/// What the schedule does to the controller.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Action {
    /// Crossfade the base layer to a slot (smoothstep), keeping the feet in phase with `sync`.
    Crossfade { slot: usize, seconds: f32, sync: bool },
    /// Fade the `wave` slot to a weight (smoothstep); fading in restarts the clip.
    Wave { weight: f32, seconds: f32 },
}

/// The schedule, repeated every [`SCHEDULE_PERIOD`]: walk, crossfade to run (phase-synced),
/// back to walk, wave while walking, slow down to idle, wave while standing, walk again.
const SCHEDULE: [(f32, Action); 8] = [
    (6.0, Action::Crossfade { slot: RUN, seconds: 0.6, sync: true }),
    (10.0, Action::Crossfade { slot: WALK, seconds: 0.6, sync: true }),
    (11.5, Action::Wave { weight: 1.0, seconds: 0.5 }),
    (14.5, Action::Wave { weight: 0.0, seconds: 0.5 }),
    (16.0, Action::Crossfade { slot: IDLE, seconds: 0.8, sync: false }),
    (16.8, Action::Wave { weight: 1.0, seconds: 0.5 }),
    (18.7, Action::Wave { weight: 0.0, seconds: 0.5 }),
    (19.2, Action::Crossfade { slot: WALK, seconds: 0.8, sync: false }),
];

/// Names of the clips in the character's controller slots, by slot.
pub const SLOT_CLIPS: [&str; 4] = ["idle", "walk", "run", "wave"];

/// The character's controller: the model clips `clips` (`idle`, `walk`, `run`, `wave`) in the
/// slots of the same order, `wave` on the upper layer masked by [`WAVE_MASK`], root motion
/// extracted from the humanoid's root, and `walk` playing.
pub(super) fn new_controller(model: &Model, clips: &[usize; 4]) -> Result<Box<CharacterController>, SceneError> {
    let asset = model.asset();
    let mut c = Box::new(CharacterController::new());
    for (slot, &clip) in clips.iter().enumerate() {
        let layer = if slot == WAVE { WAVE_LAYER } else { 0 };
        let entry = asset.clip(clip).ok_or(SceneError::MissingClip(SLOT_CLIPS[slot]))?;
        c.assign(slot, layer, slot, &entry).map_err(SceneError::Animation)?;
    }
    c.set_layer_mask(WAVE_LAYER, model.skeleton(), &[WAVE_MASK], false).map_err(SceneError::Animation)?;
    c.set_root_motion(Some(RootMotionSettings { joint: humanoid::ROOT, ..RootMotionSettings::default() }));
    c.set_weight(WALK, 1.0).map_err(SceneError::Animation)?;
    Ok(c)
}

/// Applies to the controller the schedule's actions due at whole simulation step `step`.
pub(super) fn apply_schedule(c: &mut CharacterController, step: u64) -> Result<(), ControllerError> {
    let period = (SCHEDULE_PERIOD as f64 * STEPS_PER_SECOND).round() as u64;
    for (time, action) in SCHEDULE {
        if (time as f64 * STEPS_PER_SECOND).round() as u64 != step % period {
            continue;
        }
        match action {
            Action::Crossfade { slot, seconds, sync } => c.crossfade(slot, seconds, FadeCurve::SmoothStep, sync),
            Action::Wave { weight, seconds } => {
                if weight > 0.0 {
                    if let Some(p) = c.player_mut(WAVE) {
                        p.rewind();
                    }
                }
                c.fade_to(WAVE, weight, seconds, FadeCurve::SmoothStep)
            }
        }?;
    }
    Ok(())
}
