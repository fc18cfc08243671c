#[cfg(feature = "feet")]
use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::vec;

#[cfg(feature = "feet")]
use sinew::job::foot::GroundPlane;
use sinew::job::JobError;
use sinew::math::Vec3;

use super::*;
#[cfg(feature = "feet")]
use crate::character::Legs;
use crate::character::{outputs, Character, CharacterError, Work};
use crate::limits::WebRig;
use crate::model::Model;

static CHARACTER: &[u8] = include_bytes!("../../../../../core/fixtures/character.sinew");

/// The fixture's left arm: upper arm, forearm, hand; its right hand.
const L_UPPER_ARM: usize = 7;
const L_HAND: usize = 9;
const R_HAND: usize = 13;

fn character(t: f32) -> (Character<WebRig>, Work<WebRig>) {
    let model = Rc::new(Model::open::<64>(CHARACTER.into(), Some(usize::MAX)).unwrap());
    let (mut c, mut work) = (Character::new(model).unwrap(), Work::new());
    c.advance(t, &mut work).unwrap();
    c.update(outputs::PALETTES, &mut work).unwrap();
    (c, work)
}

fn at(c: &Character<WebRig>, joint: usize) -> Vec3<f32> {
    c.joints[joint].translation()
}

/// A point the left hand can reach: 0.1 up and 0.1 forward of where the clip has it.
fn reachable(c: &Character<WebRig>) -> Vec3<f32> {
    at(c, L_HAND) + Vec3::new(0.0, 0.1, 0.1)
}

#[test]
fn a_chain_is_the_joints_between_two() {
    let (c, _) = character(0.0);
    let sk = c.model.skeleton();
    let arm = IkChain::between(sk, L_UPPER_ARM, L_HAND, Vec3::ONE).unwrap();
    assert_eq!(arm.joints, [7, 8, 9]);
    assert_eq!((arm.solver, arm.weight, arm.pole, arm.limits.len()), (ChainSolver::Fabrik, 1.0, None, 0));
    assert_eq!(IkChain::between(sk, L_HAND, L_UPPER_ARM, Vec3::ONE), None, "the hand is not above the arm");
    assert_eq!(IkChain::between(sk, R_HAND, L_HAND, Vec3::ONE), None);
}

#[test]
fn the_hand_reaches_its_target_and_follows_it() {
    let (plain, _) = character(0.3);
    let (mut c, mut work) = character(0.3);
    let target = reachable(&plain);
    c.set_chain_ik(vec![IkChain::between(c.model.skeleton(), L_UPPER_ARM, L_HAND, target).unwrap()]).unwrap();
    c.set_playing(false);
    for _ in 0..2 {
        c.update(outputs::PALETTES, &mut work).unwrap();
        assert!((at(&c, L_HAND) - target).length() < 1e-3, "{:?} against {target:?}", at(&c, L_HAND));
    }
    assert!(c.chain_reports().first().is_some_and(|r| r.reached), "{:?}", c.chain_reports());
    // The bones keep their lengths, the shoulder its place, the rest of the body the clip's pose.
    let bone = |c: &Character<WebRig>, a: usize, b: usize| (at(c, b) - at(c, a)).length();
    for (a, b) in [(7, 8), (8, 9)] {
        assert!((bone(&c, a, b) - bone(&plain, a, b)).abs() < 1e-5, "bone {a}-{b}");
    }
    assert_eq!(at(&c, L_UPPER_ARM), at(&plain, L_UPPER_ARM));
    assert_eq!(c.joints[R_HAND], plain.joints[R_HAND]);
    assert_eq!(c.pose(), plain.pose(), "the sampled pose stays as sampled");
    // A target moved between frames is followed.
    let moved = target + Vec3::new(0.0, -0.05, 0.0);
    c.chain_ik_mut()[0].target = moved;
    c.update(outputs::PALETTES, &mut work).unwrap();
    assert!((at(&c, L_HAND) - moved).length() < 1e-3);
    c.clear_chain_ik();
    c.update(outputs::PALETTES, &mut work).unwrap();
    assert_eq!(c.joints, plain.joints);
}

#[cfg(feature = "feet")]
#[test]
fn chains_are_solved_after_the_feet_are_placed() {
    // A floor 0.1 down lowers the pelvis by 0.1: the arm starts from there and still reaches.
    let (plain, _) = character(0.3);
    let (mut c, mut work) = character(0.3);
    let legs = Legs::humanoid(&c.model).unwrap();
    let settings = legs.settings();
    c.set_feet(legs, settings, Box::new(GroundPlane::flat(-0.1)), true).unwrap();
    let target = reachable(&plain);
    c.set_chain_ik(vec![IkChain::between(c.model.skeleton(), L_UPPER_ARM, L_HAND, target).unwrap()]).unwrap();
    c.update(outputs::PALETTES, &mut work).unwrap();
    assert!(
        (at(&c, L_UPPER_ARM).y - at(&plain, L_UPPER_ARM).y + 0.1).abs() < 1e-4,
        "the shoulder went down with the pelvis"
    );
    assert!((at(&c, L_HAND) - target).length() < 1e-3, "{:?} against {target:?}", at(&c, L_HAND));
    assert!((at(&c, 16).y - at(&plain, 16).y + 0.1).abs() < 1e-4, "the left ankle on the lowered floor");
}

#[test]
fn a_chain_that_is_not_one_is_refused() {
    let (mut c, _) = character(0.0);
    let mut bad = IkChain::between(c.model.skeleton(), L_UPPER_ARM, L_HAND, Vec3::ONE).unwrap();
    bad.joints = vec![7, 9];
    assert_eq!(c.set_chain_ik(vec![bad]), Err(CharacterError::Job(JobError::InvalidRange)));
    let mut far = IkChain::between(c.model.skeleton(), L_UPPER_ARM, L_HAND, Vec3::ONE).unwrap();
    far.target = Vec3::new(f32::NAN, 0.0, 0.0);
    assert!(c.set_chain_ik(vec![far]).is_err());
    assert!(c.chain_ik_mut().is_empty() && c.chain_reports().is_empty());
}
