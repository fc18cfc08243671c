use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::string::ToString;
use alloc::vec;
use alloc::vec::Vec;

use sinew::job::foot::{FootLeg, GroundPlane};
use sinew::job::{JobError, LocalToModelJob};
use sinew::math::ops::{atan, atan2};
use sinew::math::{Mat4, Quat, Transform, Vec3};
use sinew::skeleton::{Skeleton, NO_PARENT};

use super::*;
use crate::character::{outputs, Character, CharacterError, Work};
use crate::ground::Terrain;
use crate::limits::WebRig;

static CHARACTER: &[u8] = include_bytes!("../../../../../core/fixtures/character.sinew");

fn model() -> Rc<Model> {
    Rc::new(Model::open::<64>(CHARACTER.into(), Some(usize::MAX)).unwrap())
}

type Rig = (Character<WebRig>, Work<WebRig>);

fn character() -> Rig {
    (Character::new(model()).unwrap(), Work::new())
}

/// The fixture's joints: hips, then the left leg's thigh, shin, foot and toe, then the right's.
const HIPS: usize = 1;
const L_THIGH: usize = 14;
const R_THIGH: usize = 18;

/// A character with foot placement on `ground`, on or off, and one without, both at `t`.
fn pair(ground: Box<dyn Ground<f32>>, enabled: bool, t: f32) -> (Rig, Rig) {
    let (mut placed, mut work) = character();
    let legs = Legs::humanoid(&placed.model).unwrap();
    let settings = legs.settings();
    placed.set_feet(legs, settings, ground, enabled).unwrap();
    let mut plain = character();
    if t > 0.0 {
        placed.advance(t, &mut work).unwrap();
        plain.0.advance(t, &mut plain.1).unwrap();
    }
    ((placed, work), plain)
}

/// Advances both by `dt` and updates them.
fn step(a: &mut Rig, b: &mut Rig, dt: f32) {
    for (c, w) in [a, b] {
        c.advance(dt, w).unwrap();
        c.update(outputs::PALETTES, w).unwrap();
    }
}

fn at(c: &Character<WebRig>, joint: usize) -> Vec3<f32> {
    c.joints[joint].translation()
}

/// Each ankle and toe of the fixture (`thigh + 2`, `thigh + 3`).
const FEET: [usize; 4] = [L_THIGH + 2, L_THIGH + 3, R_THIGH + 2, R_THIGH + 3];

#[test]
fn legs_are_found_by_each_naming() {
    let (c, _) = character();
    let legs = Legs::humanoid(&c.model).unwrap();
    assert_eq!(legs.pelvis, HIPS);
    let leg = |t: usize| (t, t + 1, t + 2, Some(t + 3));
    let found: Vec<_> = legs.legs.iter().map(|l| (l.hip, l.knee, l.ankle, l.toe)).collect();
    assert_eq!(found, [leg(L_THIGH), leg(R_THIGH)]);

    // A pelvis, a joint between it and each thigh (as CMU captures have), then thigh, shin,
    // foot and toe per side, under each naming's names.
    let namings: [[&str; 9]; 6] = [
        [
            "Hips",
            "mixamorig:LeftUpLeg",
            "mixamorig:LeftLeg",
            "mixamorig:LeftFoot",
            "mixamorig:LeftToeBase",
            "mixamorig:RightUpLeg",
            "mixamorig:RightLeg",
            "mixamorig:RightFoot",
            "mixamorig:RightToeBase",
        ],
        [
            "hips",
            "leftUpperLeg",
            "leftLowerLeg",
            "leftFoot",
            "leftToes",
            "rightUpperLeg",
            "rightLowerLeg",
            "rightFoot",
            "rightToes",
        ],
        ["pelvis", "thigh_l", "calf_l", "foot_l", "ball_l", "thigh_r", "calf_r", "foot_r", "ball_r"],
        ["spine", "Armature|thigh.L", "shin.L", "foot.L", "toe.L", "thigh.R", "shin.R", "foot.R", "toe.R"],
        [
            "torso_joint_1",
            "leg_joint_L_1",
            "leg_joint_L_2",
            "leg_joint_L_3",
            "leg_joint_L_5",
            "leg_joint_R_1",
            "leg_joint_R_2",
            "leg_joint_R_3",
            "leg_joint_R_5",
        ],
        [
            "Hips",
            "LeftHip",
            "LeftKnee",
            "LeftAnkle",
            "LeftAnkle_end",
            "RightHip",
            "RightKnee",
            "RightAnkle",
            "RightAnkle_end",
        ],
    ];
    // Joints: 0 root, 1 pelvis, 2 and 3 between the pelvis and each thigh, then the legs.
    let parents = [NO_PARENT, 0, 1, 1, 2, 4, 5, 6, 3, 8, 9, 10];
    let offsets = [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.1, 0.0, 0.0], [-0.1, 0.0, 0.0]];
    let leg = [[0.0, -0.05, 0.0], [0.0, -0.45, 0.01], [0.0, -0.4, -0.01], [0.0, -0.05, 0.12]];
    let rest: Vec<Transform<f32>> = offsets
        .iter()
        .chain(&leg)
        .chain(&leg)
        .map(|&[x, y, z]| Transform::new(Vec3::new(x, y, z), Quat::IDENTITY, Vec3::ONE))
        .collect();
    for (n, names) in namings.iter().enumerate() {
        let mut all = vec!["root", names[0], "l_hip_joint", "r_hip_joint"];
        all.extend_from_slice(&names[1..]);
        let skeleton = Skeleton::<f32, 3>::new(&parents, &rest, &all).unwrap();
        let mut model = [Mat4::IDENTITY; 12];
        LocalToModelJob::new(skeleton.view(), skeleton.rest_pose(), &mut model).run().unwrap();
        let legs = Legs::in_skeleton(skeleton.view(), &model).unwrap_or_else(|| panic!("naming {n}: {names:?}"));
        // The nearest joint above both thighs, whatever it is called.
        assert_eq!(legs.pelvis, 1, "naming {n}");
        let toe = |t: usize| if n == 5 { None } else { Some(t) };
        let found: Vec<_> = legs.legs.iter().map(|l| (l.hip, l.knee, l.ankle, l.toe)).collect();
        assert_eq!(found, [(4, 5, 6, toe(7)), (8, 9, 10, toe(11))], "naming {n}");
        // The rest ankle's height: 1 − 0.05 − 0.45 − 0.4.
        for l in &legs.legs {
            assert!((l.standing_height - 0.1).abs() < 1e-6, "naming {n}: {}", l.standing_height);
        }
        let length = (0.45f32 * 0.45 + 0.01 * 0.01).sqrt() + (0.4f32 * 0.4 + 0.01 * 0.01).sqrt();
        assert!((legs.length - length).abs() < 1e-6, "{} against {length}", legs.length);
        assert!((legs.middle - Vec3::new(0.0, 0.95, 0.0)).max_abs() < 1e-6, "{:?}", legs.middle);
    }

    // No right leg, or a shin that is not below its thigh: no legs.
    let names = ["root", "Hips", "a", "b", "LeftUpLeg", "LeftLeg", "LeftFoot", "x", "c", "d", "e", "f"];
    let skeleton = Skeleton::<f32, 3>::new(&parents, &rest, &names).unwrap();
    assert_eq!(Legs::in_skeleton(skeleton.view(), &[Mat4::IDENTITY; 12]), None);
    let names =
        ["root", "Hips", "a", "b", "LeftUpLeg", "x", "LeftFoot", "y", "RightUpLeg", "LeftLeg", "RightFoot", "z"];
    let skeleton = Skeleton::<f32, 3>::new(&parents, &rest, &names).unwrap();
    assert_eq!(Legs::in_skeleton(skeleton.view(), &[Mat4::IDENTITY; 12]), None);
    // A name that only ends like one of the table's, without a separator, is not it.
    assert!(named("mixamorig:LeftUpLeg", "LeftUpLeg") && named("LeftUpLeg", "LeftUpLeg"));
    assert!(!named("mixamorig:LeftUpLeg", "UpLeg") && !named("XLeftLeg", "LeftLeg"));
}

#[test]
fn a_raised_floor_raises_the_feet_and_a_lowered_one_lowers_the_pelvis() {
    for height in [0.1f32, -0.1] {
        let ((mut placed, mut work), mut plain) = pair(Box::new(GroundPlane::flat(height)), true, 0.3);
        placed.update(outputs::PALETTES, &mut work).unwrap();
        plain.0.update(outputs::PALETTES, &mut plain.1).unwrap();
        let c = &placed;
        assert_eq!(c.feet().map(|s| (s.enabled(), s.weight())), Some((true, 1.0)), "settled at once");
        // Every ankle and toe by the floor's height, where the clip has them across.
        for j in FEET {
            let (a, b) = (at(c, j), at(&plain.0, j));
            assert!((a.y - b.y - height).abs() < 1e-4, "floor {height}, joint {j}: {} against {}", a.y, b.y);
            assert!((Vec3::new(a.x - b.x, 0.0, a.z - b.z)).length() < 1e-4, "floor {height}, joint {j}");
        }
        // The pelvis goes down as far as the floor does, never up.
        let drop = at(c, HIPS).y - at(&plain.0, HIPS).y;
        assert!((drop - height.min(0.0)).abs() < 1e-4, "floor {height}: the hips moved by {drop}");
        // The sampled pose is left as sampled: the stage edits a copy.
        assert_eq!(c.pose(), plain.0.pose());
    }
}

#[test]
fn the_step_lifts_one_foot_and_the_slope_tilts_the_other() {
    let (c, _) = character();
    let legs = Legs::humanoid(&c.model).unwrap();
    let terrain = Terrain::beside(legs.middle.x, legs.length);
    let ((mut placed, mut work), mut plain) = pair(Box::new(terrain), true, 0.0);
    placed.update(outputs::PALETTES, &mut work).unwrap();
    plain.0.update(outputs::PALETTES, &mut plain.1).unwrap();
    let (step, slope) =
        if at(&plain.0, L_THIGH + 2).x < terrain.edge { (L_THIGH, R_THIGH) } else { (R_THIGH, L_THIGH) };
    assert!(at(&plain.0, slope + 2).x > terrain.edge, "one foot either side of the edge");
    // On the step, the ankle at its clip height above the tread.
    let (a, b) = (at(&placed, step + 2), at(&plain.0, step + 2));
    assert!((a.y - (terrain.step + b.y)).abs() < 1e-4, "{} against {} + {}", a.y, terrain.step, b.y);
    // On the slope, the ankle at its clip height across the sole tilted by the slope, tan θ =
    // grade: over the ground by h / cos θ.
    let (a, b) = (at(&placed, slope + 2), at(&plain.0, slope + 2));
    let ground = terrain.height_at(a.x, a.z);
    let over = b.y * (1.0 + terrain.grade * terrain.grade).sqrt();
    assert!((a.y - ground - over).abs() < 1e-3, "{} against {ground} + {over}", a.y);
    // The foot turned up the slope by its angle, about X.
    let pitch = |v: Vec3<f32>| atan2(v.y, v.z);
    let (toe, clip) = (at(&placed, slope + 3) - a, at(&plain.0, slope + 3) - b);
    let turned = pitch(toe) - pitch(clip);
    assert!((turned - atan(terrain.grade)).abs() < 1e-3, "turned by {turned}: {toe:?} from {clip:?}");
    assert!(toe.x.abs() < 1e-3 && (toe.length() - clip.length()).abs() < 1e-5, "{toe:?} from {clip:?}");
    // The ground the character answers is the terrain's.
    let hit = placed.ground(Vec3::new(0.3, 5.0, 0.2)).unwrap();
    assert_eq!((hit.height, hit.normal), (terrain.height_at(0.3, 0.2), terrain.normal_at(0.3, 0.2)));
}

#[test]
fn switching_on_and_off_ramps_over_the_blend_time() {
    let raise = 0.1f32;
    let (mut placed, mut plain) = pair(Box::new(GroundPlane::flat(raise)), false, 0.1);
    let blend = Legs::humanoid(&placed.0.model).unwrap().settings().blend_time;
    assert_eq!(blend, 0.25);
    step(&mut placed, &mut plain, 0.01);
    // (weight, after a step of this many seconds, switched on or off before it)
    let steps =
        [(0.0, 0.03, None), (0.2, 0.05, Some(true)), (0.6, 0.1, None), (1.0, 0.2, None), (0.8, 0.05, Some(false))];
    for (weight, dt, switch) in steps {
        if let Some(on) = switch {
            placed.0.set_feet_enabled(on).unwrap();
        }
        step(&mut placed, &mut plain, dt);
        let w = placed.0.feet().unwrap().weight();
        assert!((w - weight).abs() < 1e-5, "weight {w}, want {weight}");
        // On a flat floor each foot rises by the weight's share of the floor's height.
        for j in FEET {
            let rise = at(&placed.0, j).y - at(&plain.0, j).y;
            assert!((rise - weight * raise).abs() < 1e-4, "weight {weight}, joint {j}: rose {rise}");
        }
    }
    // Off and ramped out, time does not count: switched on after a second, it ramps from then.
    step(&mut placed, &mut plain, 0.2);
    assert_eq!(placed.0.feet().unwrap().weight(), 0.0);
    placed.0.advance(1.0, &mut placed.1).unwrap();
    placed.0.set_feet_enabled(true).unwrap();
    placed.0.advance(0.05, &mut placed.1).unwrap();
    placed.0.update(outputs::PALETTES, &mut placed.1).unwrap();
    assert!((placed.0.feet().unwrap().weight() - 0.2).abs() < 1e-5);
    // A seek is a cut: the next update is at the end weight at once.
    placed.0.set_feet_enabled(false).unwrap();
    placed.0.seek(0.5);
    placed.0.update(outputs::PALETTES, &mut placed.1).unwrap();
    assert_eq!(placed.0.feet().map(|s| s.weight()), Some(0.0));
}

#[test]
fn updates_without_time_leave_the_pose_as_it_was() {
    let ((mut c, mut work), _) = pair(Box::new(GroundPlane::flat(-0.05)), true, 0.2);
    c.set_playing(false);
    c.update(outputs::PALETTES, &mut work).unwrap();
    let first = c.joints.clone();
    let palette = c.palettes[0].clone();
    for _ in 0..3 {
        c.advance(0.1, &mut work).unwrap();
        c.update(outputs::PALETTES, &mut work).unwrap();
    }
    // The pelvis is lowered once, not once per update.
    assert_eq!(c.joints, first);
    assert_eq!(c.palettes[0], palette);
}

#[test]
fn the_world_matrix_places_the_character_on_the_ground() {
    // Lifted by 0.5 and turned a quarter about +Y, over a floor at 0.6: the feet rise by 0.1.
    let ((mut c, mut work), mut plain) = pair(Box::new(GroundPlane::flat(0.6)), true, 0.2);
    let turn = Quat::from_axis_angle(Vec3::Y, core::f32::consts::FRAC_PI_2);
    c.set_world(Mat4::from_trs(Vec3::new(3.0, 0.5, -2.0), turn, Vec3::ONE));
    c.reset_feet();
    c.update(outputs::PALETTES, &mut work).unwrap();
    plain.0.update(outputs::PALETTES, &mut plain.1).unwrap();
    for j in FEET {
        let rise = at(&c, j).y - at(&plain.0, j).y;
        assert!((rise - 0.1).abs() < 1e-4, "joint {j}: rose {rise}");
    }
    // Off and ramped out, the stage is skipped and asks nothing of the world; on, a tilted
    // world is refused by the update, which leaves its error.
    c.set_feet_enabled(false).unwrap();
    c.reset_feet();
    c.update(outputs::PALETTES, &mut work).unwrap();
    c.set_world(Mat4::from_trs(Vec3::ZERO, Quat::from_axis_angle(Vec3::X, 0.3), Vec3::ONE));
    c.update(outputs::PALETTES, &mut work).unwrap();
    assert_eq!(c.joints, plain.0.joints, "off, the clip's pose");
    c.set_feet_enabled(true).unwrap();
    assert_eq!(c.update(outputs::PALETTES, &mut work), Err(CharacterError::Job(JobError::InvalidTransform)));
}

#[test]
fn a_bad_set_up_is_refused_and_calls_without_one_say_so() {
    let (mut c, _) = character();
    let mut legs = Legs::humanoid(&c.model).unwrap();
    legs.legs[1] = FootLeg { knee: 99, ..legs.legs[1] };
    let refused = c.set_feet(legs, FootSettings::new(), Box::new(GroundPlane::flat(0.0)), true);
    assert_eq!(refused, Err(CharacterError::Job(JobError::JointIndexOutOfRange)));
    assert!(c.feet().is_none() && c.leg_states().is_empty());
    assert_eq!(c.set_feet_enabled(true), Err(CharacterError::NoFeet));
    assert_eq!(c.set_ground(Box::new(Terrain::FLAT)), Err(CharacterError::NoFeet));
    assert_eq!(c.ground(Vec3::ZERO), None);
    assert_eq!(CharacterError::NoFeet.to_string(), "foot placement is not set up");
    // Set up, then cleared.
    let legs = Legs::humanoid(&c.model).unwrap();
    c.set_feet(legs, FootSettings::new(), Box::new(Terrain::FLAT), false).unwrap();
    assert_eq!(c.leg_states().len(), 2);
    c.clear_feet();
    assert!(c.feet().is_none());
}
