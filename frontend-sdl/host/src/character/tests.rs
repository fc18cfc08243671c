use alloc::rc::Rc;
use alloc::string::ToString;
use alloc::vec::Vec;

use sinew::controller::{ControllerError, FadeCurve};
use sinew::job::{JobError, RetargetJoint, RetargetRoot};
use sinew::math::{Mat4, Quat};
use sinew::player::LoopMode;

use super::*;
use crate::limits::{DesktopRig, WebRig};

static CHARACTER: &[u8] = include_bytes!("../../../../core/fixtures/character.sinew");

sinew::capacity! {
    /// Too small for the fixture's 22 joints.
    struct Tiny { joints: 8, slots: 2 }
}

const RUN: usize = 1;

fn model() -> Rc<Model> {
    Rc::new(Model::open::<64>(CHARACTER.into(), Some(usize::MAX)).unwrap())
}

fn character() -> (Character<WebRig>, Work<WebRig>) {
    (Character::new(model()).unwrap(), Work::new())
}

#[test]
fn a_model_larger_than_the_capacity_is_refused() {
    assert_eq!(Character::<Tiny>::new(model()).err(), Some(CharacterError::TooManyJoints { joints: 22, capacity: 8 }));
    assert!(Character::<DesktopRig>::new(model()).is_ok());
}

#[test]
fn refused_calls_name_what_is_wrong_and_change_nothing() {
    let (mut c, mut work) = character();
    c.advance(0.3, &mut work).unwrap();
    let before = (c.clip(), c.second_clip(), c.weight());
    assert_eq!(c.play(7), Err(CharacterError::NoClip { clip: 7, clips: 2 }));
    assert_eq!(c.blend(RUN, 1.5), Err(CharacterError::Weight));
    assert_eq!(c.blend(RUN, f32::NAN), Err(CharacterError::Weight));
    assert_eq!(c.blend(9, 0.5), Err(CharacterError::NoClip { clip: 9, clips: 2 }));
    assert_eq!(c.crossfade(RUN, 0.0, FadeCurve::Linear, false), Err(CharacterError::Duration));
    assert_eq!(c.crossfade(RUN, f32::INFINITY, FadeCurve::Linear, false), Err(CharacterError::Duration));
    assert_eq!(c.set_parameter(0, 1.0), Err(CharacterError::NoGraph));
    assert_eq!((c.clip(), c.second_clip(), c.weight()), before);
    assert_eq!(
        CharacterError::Controller(ControllerError::NoRootMotion).to_string(),
        "this controller's capacity has no root motion"
    );
    assert_eq!(CharacterError::NoClip { clip: 7, clips: 2 }.to_string(), "no clip 7 (the file has 2)");
}

#[test]
fn a_crossfade_hands_over_and_a_synced_one_starts_in_phase() {
    let (mut c, mut work) = character();
    c.advance(0.25, &mut work).unwrap();
    let walk_phase = c.controller().player(0).unwrap().normalized();
    c.crossfade(RUN, 0.5, FadeCurve::SmoothStep, true).unwrap();
    // The run starts at the walk's phase.
    let run_phase = c.controller().player(1).unwrap().normalized();
    assert!((run_phase - walk_phase).abs() < 1e-5, "{run_phase} against {walk_phase}");
    c.advance(0.25, &mut work).unwrap();
    assert!(c.is_fading());
    // Smoothstep at half the fade: half the weight.
    assert!((c.weight() - 0.5).abs() < 1e-5, "{}", c.weight());
    c.advance(0.25, &mut work).unwrap();
    assert!(!c.is_fading());
    assert_eq!((c.clip().map(|c| c.0), c.second_clip(), c.weight()), (Some(RUN), None, 0.0));
}

#[test]
fn a_second_clip_at_weight_zero_runs_on_and_a_pause_holds_everything() {
    let (mut c, mut work) = character();
    c.blend(RUN, 0.0).unwrap();
    c.advance(0.2, &mut work).unwrap();
    assert_eq!(c.second_clip().map(|(clip, _)| clip), Some(RUN));
    let (_, t) = c.second_clip().unwrap();
    assert!((t - 0.2).abs() < 1e-6, "{t}");
    c.set_playing(false);
    c.advance(0.2, &mut work).unwrap();
    assert!((c.time() - 0.2).abs() < 1e-6);
    // Speed and loop mode reach both clips.
    c.set_playing(true);
    c.set_loop_mode(LoopMode::PingPong);
    c.set_speed(2.0);
    assert_eq!(c.controller().player(1).map(|p| (p.mode(), p.speed())), Some((LoopMode::PingPong, 2.0)));
    c.stop_blend();
    assert_eq!((c.second_clip(), c.weight()), (None, 0.0));
}

#[test]
fn a_seek_while_paused_shows_at_the_next_update() {
    let (mut c, mut work) = character();
    c.set_playing(false);
    c.update(outputs::PALETTES, &mut work).unwrap();
    let at_start: Vec<Mat4<f32>> = c.palettes[0].clone();
    c.seek(0.4);
    c.update(outputs::PALETTES, &mut work).unwrap();
    assert_ne!(c.palettes[0], at_start);
    assert!((c.time() - 0.4).abs() < 1e-6);
    // The same time played from the start gives the same palette.
    let (mut d, mut w) = character();
    d.advance(0.4, &mut w).unwrap();
    d.update(outputs::PALETTES, &mut w).unwrap();
    assert_eq!(d.palettes[0], c.palettes[0]);
}

/// The identity map of the fixture onto itself: each joint follows itself, the hips (joint 0)
/// at scale 1.
fn self_map(m: &Model) -> (Vec<RetargetJoint<f32>>, RetargetRoot<f32>) {
    use sinew::job::retarget::world_rotations;
    let skeleton = m.skeleton();
    let n = skeleton.num_joints();
    let mut rest = alloc::vec![Mat4::IDENTITY; n];
    crate::jobs::local_to_model(skeleton, skeleton.rest_pose(), &mut rest).unwrap();
    let mut world = alloc::vec![Quat::IDENTITY; n];
    world_rotations(&rest, &mut world).unwrap();
    let map: Vec<u16> = (0..n as u16).collect();
    let mut joints = alloc::vec![RetargetJoint::UNMAPPED; n];
    RetargetJoint::offsets(&map, &world, &world, &mut joints).unwrap();
    let root = RetargetRoot::new(0, 0, skeleton, &rest, &rest, Some(1.0)).unwrap();
    (joints, root)
}

#[test]
fn a_model_retargeted_onto_itself_plays_its_own_pose() {
    let (mut direct, mut work) = character();
    let (mut retargeted, mut w) = character();
    let (joints, root) = self_map(&model());
    assert_eq!(
        retargeted.retarget_from(model(), joints[..3].to_vec(), root),
        Err(CharacterError::Job(JobError::InputTooSmall))
    );
    retargeted.retarget_from(model(), joints, root).unwrap();
    assert_eq!(retargeted.clip_model().num_joints(), 22);
    direct.blend(RUN, 0.3).unwrap();
    retargeted.blend(RUN, 0.3).unwrap();
    for _ in 0..10 {
        direct.advance(0.07, &mut work).unwrap();
        retargeted.advance(0.07, &mut w).unwrap();
        direct.update(outputs::PALETTES, &mut work).unwrap();
        retargeted.update(outputs::PALETTES, &mut w).unwrap();
        // Retargeting carries rotations (and the hips' path); every joint turns as played.
        for j in 0..22 {
            let (a, b) = (direct.pose()[j / 4].lane(j % 4), retargeted.pose()[j / 4].lane(j % 4));
            assert!(a.rotation.angle_between(b.rotation) < 1e-3, "joint {j}");
        }
        let (a, b) = (direct.pose()[0].lane(0), retargeted.pose()[0].lane(0));
        assert!((a.translation - b.translation).max_abs() < 1e-4, "the hips");
    }
    // The source's pose is the clip's; the model's own clips come back on request.
    assert_eq!(retargeted.clip_pose(), direct.pose());
    retargeted.stop_retarget();
    assert_eq!(retargeted.clip().map(|c| c.0), Some(0));
}
