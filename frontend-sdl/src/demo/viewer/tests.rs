use super::*;

use sinew_offline::bake::bake;
use sinew_offline::builtin::humanoid_rig;

#[test]
fn rigid_check_times_cover_each_clip_to_its_end() {
    let t: Vec<f32> = check_times(0.5, 0.6).collect();
    assert_eq!(t.len(), 4, "{t:?}");
    assert_eq!((t[0], t[3]), (0.5, 0.6));
    assert!(t.windows(2).all(|w| w[1] > w[0] && w[1] - w[0] <= 1.0 / 30.0 + 1e-6), "{t:?}");
    assert_eq!(check_times(2.0, 2.0).collect::<Vec<_>>(), vec![2.0]);
    assert_eq!(check_times(1.0, f32::INFINITY).count(), 1);
}

#[test]
fn the_humanoid_rig_is_rigid() {
    // The built-in humanoid's joints rotate and translate only: every scale factor of its
    // dual-quaternion palette is the identity in every clip.
    assert!(rig_is_rigid(&humanoid("rigid").model));
}

/// A viewer on the built-in humanoid (clips idle 3 s, walk 1 s, run 0.7 s, wave 1.2 s).
fn humanoid(tag: &str) -> Viewer {
    let (bytes, _) = bake(&humanoid_rig(), &BakeOptions::default()).unwrap();
    let path = std::env::temp_dir().join(format!("sinew_viewer_{}_{tag}.sinew", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    let v = Viewer::load(&path, None, PaletteSizes::same(64)).unwrap();
    std::fs::remove_file(&path).unwrap();
    v
}

fn sample(v: &Viewer, clip: usize, t: f32) -> Vec<SoaTransform<f32>> {
    let mut pose = Vec::new();
    v.model.sample(Some(clip), t, RotationInterpolation::NlerpCorrected, &mut Vec::new(), &mut pose).unwrap();
    pose
}

fn max_diff(a: &[SoaTransform<f32>], b: &[SoaTransform<f32>], joints: usize) -> f32 {
    (0..joints)
        .map(|j| {
            let (x, y) = (a[j / 4].lane(j % 4), b[j / 4].lane(j % 4));
            (x.translation - y.translation).max_abs().max(x.rotation.angle_between(y.rotation))
        })
        .fold(0.0, f32::max)
}

/// A viewer on the built-in humanoid with one spring: the left forearm, its tail at the
/// hand, pulled down by gravity.
fn humanoid_with_a_spring(tag: &str) -> (Viewer, usize) {
    use sinew_offline::rig::{ResolvedSpringJoint, Spring, SpringBones, SpringJoint, SpringParams, SpringSource};
    let mut rig = humanoid_rig();
    let find = |name: &str| rig.joints.iter().position(|j| j.name == name).unwrap();
    let (forearm, hand) = (find("l_forearm"), find("l_hand"));
    let tail = rig.joints[hand].rest.translation;
    let params = SpringParams {
        hit_radius: 0.0,
        stiffness: 0.5,
        gravity_power: 2.0,
        gravity_dir: [0.0, -1.0, 0.0],
        drag_force: 0.4,
    };
    rig.springs = Some(SpringBones {
        source: SpringSource::Vrm0,
        springs: vec![Spring {
            name: None,
            joints: vec![SpringJoint { joint: forearm, params }, SpringJoint { joint: hand, params }],
            collider_groups: Vec::new(),
            center: None,
        }],
        colliders: Vec::new(),
        collider_groups: Vec::new(),
        joints: vec![ResolvedSpringJoint {
            joint: forearm,
            child: Some(hand),
            tail: [tail.x, tail.y, tail.z],
            params,
            center: None,
            colliders: Vec::new(),
            spring: 0,
        }],
    });
    let (bytes, _) = bake(&rig, &BakeOptions::default()).unwrap();
    let path = std::env::temp_dir().join(format!("sinew_viewer_{}_{tag}.sinew", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    let mut v = Viewer::load(&path, None, PaletteSizes::same(64)).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(v.setup_springs().unwrap());
    let joint = v.model.skeleton().names().iter().position(|n| n.as_str() == "l_forearm").unwrap();
    (v, joint)
}

#[test]
fn a_change_of_clip_or_a_seek_puts_the_springs_at_rest() {
    let (mut v, forearm) = humanoid_with_a_spring("spring");
    let (walk, run) = (v.model.find_clip("walk").unwrap(), v.model.find_clip("run").unwrap());
    let rest = v.model.skeleton().rest_pose()[forearm / 4].lane(forearm % 4).rotation;
    // How far the forearm is turned from its rest rotation, in the viewer's pose and in the
    // clip's.
    let from_rest = |pose: &[SoaTransform<f32>]| pose[forearm / 4].lane(forearm % 4).rotation.angle_between(rest);
    v.select(walk);
    assert!(v.spring_frame().is_some_and(|f| f.reset));
    assert!(from_rest(&v.pose().unwrap()) < 1e-5);
    for _ in 0..20 {
        v.advance(1.0 / 60.0).unwrap();
    }
    // Gravity has swung the forearm from its rest rotation.
    assert!(v.spring_frame().is_some_and(|f| f.steps == 1 && !f.reset));
    let swung = from_rest(&v.pose().unwrap());
    assert!(swung > 0.01, "{swung}");
    // A change of clip: back at rest, whatever the clip's forearm does.
    v.select(run);
    assert!(v.spring_frame().is_some_and(|f| f.reset));
    assert!(from_rest(&v.pose().unwrap()) < 1e-5);
    assert!(from_rest(v.character().pose()) > 0.01, "the run clip turns the forearm");
    for _ in 0..20 {
        v.advance(1.0 / 60.0).unwrap();
    }
    assert!(from_rest(&v.pose().unwrap()) > 0.01);
    // A seek: back at rest too.
    v.seek_by(0.1);
    assert!(v.spring_frame().is_some_and(|f| f.reset));
    assert!(from_rest(&v.pose().unwrap()) < 1e-5);
    // Without the springs set up, the pose is the clip's.
    let mut plain = humanoid("plain");
    plain.select(walk);
    plain.advance(0.3).unwrap();
    assert!(!plain.has_springs() && plain.spring_frame().is_none());
    assert!(max_diff(&plain.pose().unwrap(), &sample(&plain, walk, 0.3), 22) < 1e-6);
}

#[test]
fn turning_the_up_axis_moves_the_springs_world_and_puts_them_at_rest() {
    let (mut v, _) = humanoid_with_a_spring("up-axis");
    for _ in 0..5 {
        v.advance(1.0 / 60.0).unwrap();
    }
    assert!(v.spring_frame().is_some_and(|f| !f.reset));
    let z_up = !v.z_up;
    v.set_z_up(z_up);
    assert_eq!(v.z_up, z_up);
    assert_eq!(v.character().world(), v.world(), "the springs swing in the drawn world");
    assert_ne!(v.world(), Mat4::from_translation(v.placement()));
    v.advance(1.0 / 60.0).unwrap();
    assert!(v.spring_frame().is_some_and(|f| f.reset), "a quarter turn resets the springs");
}

#[test]
fn loop_modes_speed_and_scrubbing_follow_the_player() {
    let mut v = humanoid("loop");
    let walk = v.model.find_clip("walk").unwrap();
    let time = |v: &Viewer| v.primary().unwrap().1;
    v.select(walk);
    assert_eq!(v.clip_range(walk), (0.0, 1.0));
    v.advance(2.5).unwrap();
    assert!((time(&v) - 0.5).abs() < 1e-6);
    // Once stops at the end.
    v.cycle_loop_mode();
    assert_eq!(v.loop_mode(), LoopMode::Once);
    v.advance(2.0).unwrap();
    assert_eq!(time(&v), 1.0);
    assert!(v.character().controller().player(0).unwrap().finished());
    // Ping-pong bounces; scrubbing moves along the pass.
    v.cycle_loop_mode();
    v.select(walk);
    assert_eq!(v.loop_mode(), LoopMode::PingPong);
    v.advance(1.25).unwrap();
    assert!((time(&v) - 0.75).abs() < 1e-6);
    v.seek_by(0.125);
    assert!((time(&v) - 0.625).abs() < 1e-6);
    // Half speed; scrubbing ignores the speed; a pause holds.
    v.cycle_loop_mode();
    assert_eq!(loop_mode_name(v.loop_mode()), "loop");
    v.select(walk);
    v.set_speed(0.5);
    v.advance(1.0).unwrap();
    assert!((time(&v) - 0.5).abs() < 1e-6);
    v.seek_by(-0.75);
    assert!((time(&v) - 0.75).abs() < 1e-6);
    v.set_playing(false);
    v.advance(1.0).unwrap();
    assert!((time(&v) - 0.75).abs() < 1e-6);
    v.seek_primary(0.25);
    assert!((time(&v) - 0.25).abs() < 1e-6);
    // The pose is the clip's sample at the player's time.
    assert!(max_diff(&v.pose().unwrap(), &sample(&v, walk, 0.25), 22) < 1e-6);
}

#[test]
fn blend_weight_and_crossfade_mix_two_players() {
    let mut v = humanoid("blend");
    let (walk, run) = (v.model.find_clip("walk").unwrap(), v.model.find_clip("run").unwrap());
    v.select(walk);
    while v.secondary() != Some(run) {
        v.cycle_secondary();
    }
    v.advance(0.3).unwrap();
    let (a, b) = (sample(&v, walk, 0.3), sample(&v, run, 0.3));
    assert!(max_diff(&v.pose().unwrap(), &a, 22) < 1e-6);
    v.nudge_weight(1.0);
    assert!(max_diff(&v.pose().unwrap(), &b, 22) < 1e-6);
    // Half and half: every joint halfway between the clips.
    v.nudge_weight(-0.5);
    let half = v.pose().unwrap();
    for j in 0..22 {
        let (h, x, y) = (half[j / 4].lane(j % 4), a[j / 4].lane(j % 4), b[j / 4].lane(j % 4));
        assert!((h.translation - (x.translation + y.translation) * 0.5).max_abs() < 1e-6);
        let (p, q) = (h.rotation.angle_between(x.rotation), h.rotation.angle_between(y.rotation));
        assert!((p - q).abs() < 1e-4 && (p + q - x.rotation.angle_between(y.rotation)).abs() < 1e-4, "joint {j}");
    }
    // A crossfade takes CROSSFADE_SECONDS, then the second clip plays alone.
    v.nudge_weight(-1.0);
    v.crossfade();
    v.advance(CROSSFADE_SECONDS * 0.5).unwrap();
    assert!((v.weight() - 0.5).abs() < 1e-6 && v.is_fading());
    v.advance(CROSSFADE_SECONDS * 0.5).unwrap();
    assert_eq!((v.primary().map(|p| p.0), v.secondary().is_none(), v.weight()), (Some(run), true, 0.0));
    // Next loop modes cycle through all three.
    assert_eq!(next_loop_mode(next_loop_mode(next_loop_mode(LoopMode::Loop))), LoopMode::Loop);
}

#[test]
fn a_retarget_source_drives_the_pose_and_stands_to_the_left() {
    let mut v = humanoid("target");
    let source = humanoid("source_model");
    let path = std::env::temp_dir().join(format!("sinew_viewer_{}_source.sinew", std::process::id()));
    let (bytes, _) = bake(&humanoid_rig(), &BakeOptions::default()).unwrap();
    std::fs::write(&path, bytes).unwrap();
    let (target_center, target_floor) = (v.center, v.floor);
    let attached =
        v.attach_retarget(&path, None, RetargetOptions { scale: Some(0.5), in_place: false }, PaletteSizes::same(64));
    std::fs::remove_file(&path).unwrap();
    attached.unwrap();
    // The players play the source's clips: the clip list and the sampled pose are its.
    assert_eq!(v.num_clips(), source.num_clips());
    let walk = v.clip_model().find_clip("walk").unwrap();
    v.select(walk);
    v.advance(0.3).unwrap();
    assert!(max_diff(&v.clip_pose().unwrap(), &sample(&source, walk, 0.3), 22) < 1e-6);
    // The model's pose is the source's retargeted, as `Retarget::pose` gives it.
    let r = setup(
        &source.model,
        &source.path,
        &v.model,
        &v.path,
        None,
        RetargetOptions { scale: Some(0.5), in_place: false },
    )
    .unwrap();
    let want = r.pose(&v.clip_pose().unwrap()).unwrap();
    assert!(max_diff(&v.pose().unwrap(), &want, 22) < 1e-6);
    // The hips move by half the source's displacement: the pose is not the source's.
    assert!(max_diff(&v.pose().unwrap(), &v.clip_pose().unwrap(), 22) > 1e-4);
    // The source stands to the left on the same ground; the bounds hold both.
    let d = v.retarget.as_ref().unwrap();
    assert!(d.offset.x < -0.5 * v.radius && d.offset.y.abs() < 1e-5 && d.offset.z.abs() < 1e-5, "{:?}", d.offset);
    assert!(v.center.x < target_center.x && (v.floor - target_floor).abs() < 1e-5);
    // The frame holds both models while the source is shown, the target alone otherwise.
    let f = v.frame(Skinning::Lbs, false).unwrap();
    assert!(f.objects.iter().any(|o| o.model_index == 1) && f.objects.iter().any(|o| o.model_index == 0));
    v.retarget.as_mut().unwrap().show_source = false;
    let f = v.frame(Skinning::Lbs, false).unwrap();
    assert!(f.objects.iter().all(|o| o.model_index == 0));
}
