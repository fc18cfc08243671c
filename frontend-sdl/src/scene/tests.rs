//! Tests of the scene: baking with palette limits, the candy wrapper's LBS and DQS, the
//! character's feet, path, blend space, graph transitions, wave and look-at, replay from any time, the default
//! camera's framing and frames as functions of time. The rigs' own tests are in
//! `sinew_offline::builtin`.

use std::f32::consts::PI;

use sinew::clip::RotationInterpolation;
use sinew::math::{Mat4, SoaTransform, Vec3};
use sinew_offline::builtin::{
    humanoid, RUN_GAIT, RUN_SPEED, TWIST_LENGTH, TWIST_PERIOD, TWIST_RADIUS, WALK_GAIT, WALK_SPEED,
};
use sinew_offline::model::Skinning;

use super::character::EYES;
use super::*;

mod ground;

#[test]
fn rigs_bake_into_parts_that_fit_the_palette() {
    // The rigs themselves are checked in `sinew_offline::builtin`'s tests.
    let scene = Scene::new(None).unwrap();
    let parts = |s: &Scene, m: usize| -> Vec<usize> {
        let a = s.models()[m].asset();
        a.mesh(0).unwrap().parts().map(|p| p.palette_len()).collect()
    };
    assert_eq!(parts(&scene, CHARACTER), vec![humanoid::COUNT]);
    // A small palette splits the character's mesh into parts that each fit it.
    let small = Scene::new(Some(6)).unwrap();
    let p = parts(&small, CHARACTER);
    assert!(p.len() > 3 && p.iter().all(|&n| n <= 6), "{p:?}");
    assert!(Scene::new(Some(1)).is_err());
}

/// Distance of skinned vertices from the cylinder axis at mid-height.
fn mid_radius(scene: &Scene, skinning: Skinning, angle: f32) -> (f32, f32) {
    let m = &scene.models()[TWIST];
    let pose = twist_pose(m, angle);
    let mut f = Frame::default();
    push_model(&mut f, m, TWIST, &pose, Mat4::IDENTITY, skinning, None, false).unwrap();
    let parts = f.objects[0].skin_cpu().unwrap();
    let mid = TWIST_LENGTH * 0.5;
    let r: Vec<f32> = parts
        .iter()
        .flat_map(|p| p.positions.iter())
        .filter(|p| (p.y - mid).abs() < 1e-3)
        .map(|p| (p.x * p.x + p.z * p.z).sqrt())
        .filter(|&r| r > 1e-4 || skinning == Skinning::Lbs)
        .collect();
    (r.iter().copied().fold(f32::INFINITY, f32::min), r.iter().copied().fold(0.0, f32::max))
}

#[test]
fn candy_wrapper_collapses_with_lbs_and_keeps_volume_with_dqs() {
    let scene = Scene::new(None).unwrap();
    let (_, lbs_max) = mid_radius(&scene, Skinning::Lbs, PI);
    let (dqs_min, _) = mid_radius(&scene, Skinning::Dqs, PI);
    assert!(lbs_max < 0.05 * TWIST_RADIUS, "LBS mid radius {lbs_max}");
    assert!(dqs_min > 0.99 * TWIST_RADIUS, "DQS mid radius {dqs_min}");
    // Untwisted, both keep the radius.
    assert!(mid_radius(&scene, Skinning::Lbs, 0.0).0 > 0.999 * TWIST_RADIUS);
    assert_eq!(twist_angle(0.0), 0.0);
    assert!((twist_angle(TWIST_PERIOD / 2.0) - PI).abs() < 1e-5);
}

/// World position of joint `j` of the character.
fn joint_world(c: &CharacterFrame, j: usize) -> Vec3<f32> {
    c.world.transform_point3(c.model[j].translation())
}

fn horizontal(v: Vec3<f32>) -> f32 {
    Vec3::new(v.x, 0.0, v.z).length()
}

/// The point at arc length `s` along a polyline.
fn point_at(points: &[Vec3<f32>], mut s: f32) -> Vec3<f32> {
    for w in points.windows(2) {
        let len = (w[1] - w[0]).length();
        if s <= len {
            return w[0].lerp(w[1], s / len);
        }
        s -= len;
    }
    *points.last().unwrap()
}

#[test]
fn character_feet_do_not_slide() {
    let scene = Scene::new(None).unwrap();
    // One frame per simulation step over three schedule periods. A foot is planted while
    // walk or run plays alone at full weight, no graph transition runs (an inertialized start
    // still decays the offset from the standing pose), and its phase is within the gait's duty (the
    // clips' ground contact, whatever the scene's foot locking does). A stance is whole when
    // it is seen from its touchdown (not entered at the end of a crossfade).
    #[derive(Default, Clone, Copy)]
    struct Stance {
        anchor: Option<Vec3<f32>>,
        gait: usize,
        heading: f32,
        turning: bool,
        whole: bool,
        slide: f32,
    }
    // [walk, run] × [straight, turning]: whole stances and their largest slide; and the
    // largest slide of partial stances.
    let mut count = [[0usize; 2]; 2];
    let mut worst = [[0.0f32; 2]; 2];
    let (mut partial, mut partial_worst) = (0, 0.0f32);
    let mut current = [Stance::default(); 2];
    let mut end = |s: &mut Stance| {
        if s.anchor.take().is_some() {
            if s.whole {
                let turning = usize::from(s.turning);
                count[s.gait][turning] += 1;
                worst[s.gait][turning] = worst[s.gait][turning].max(s.slide);
            } else {
                partial += 1;
                partial_worst = partial_worst.max(s.slide);
            }
        }
    };
    for i in 0..=(3.0 * SCHEDULE_PERIOD * 60.0) as usize {
        let c = scene.character(i as f32 / 60.0).unwrap();
        let playing = [(WALK, WALK_GAIT), (RUN, RUN_GAIT)].into_iter().enumerate().find(|(_, (slot, _))| {
            c.slots[*slot].weight == 1.0 && c.slots[IDLE].weight == 0.0 && c.transition.is_none()
        });
        for (k, (side, foot)) in [(1.0f32, humanoid::L_FOOT), (-1.0, humanoid::R_FOOT)].into_iter().enumerate() {
            let s = &mut current[k];
            let u = playing.map(|(gait, (slot, g))| {
                (gait, (c.slots[slot].phase + if side > 0.0 { 0.0 } else { 0.5 }).rem_euclid(1.0), g)
            });
            match u {
                Some((gait, u, g)) if u < g.duty && s.anchor.is_none_or(|_| s.gait == gait) => {
                    let p = joint_world(&c, foot);
                    if s.anchor.is_none() {
                        // A frame advances the phase by at most 1 / (60 × 0.7).
                        let whole = u < 1.0 / 42.0;
                        *s = Stance { anchor: Some(p), gait, heading: c.heading, turning: false, whole, slide: 0.0 };
                    }
                    s.turning |= (c.heading - s.heading).abs() > 1e-5;
                    s.slide = s.slide.max(horizontal(p - s.anchor.unwrap_or(p)));
                }
                _ => end(s),
            }
        }
    }
    for s in &mut current {
        end(s);
    }
    for (g, name) in ["walk", "run"].into_iter().enumerate() {
        eprintln!(
            "{name}: planted ankle slides ≤ {:.2} mm over {} stances on straights, ≤ {:.2} mm over {} in turns",
            worst[g][0] * 1e3,
            count[g][0],
            worst[g][1] * 1e3,
            count[g][1]
        );
    }
    eprintln!("stances begun in a crossfade: {partial}, ankle slides ≤ {:.1} mm", partial_worst * 1e3);
    // The run covers a straight side in about two steps: its stances mostly see the heading
    // turn towards the next corner.
    assert!(count[0][0] >= 10 && count[0][1] >= 10 && count[1][0] + count[1][1] >= 10, "{count:?}");
    // Straight: the lock holds exactly. Turns: the lock holds until the leg cannot reach
    // it at the very end of the stance (the body turns away from the planted foot).
    assert!(worst[0][0] < 1.0e-3 && worst[1][0] < 1.0e-3, "{worst:?}");
    assert!(worst[0][1] < 6.0e-3 && worst[1][1] < 6.0e-3, "{worst:?}");
    // A stance that started under the other gait outlasts the leg's reach and is let go.
    assert!(partial >= 1 && partial_worst < 0.03, "{partial} {partial_worst}");
}

#[test]
fn character_follows_its_path_by_its_root_motion() {
    let scene = Scene::new(None).unwrap();
    let points = character_path();
    let length = path_length();
    // Two straights, and two half circles of 8 chords each.
    assert!((length - (2.0 * PATH_STRAIGHT + 32.0 * PATH_TURN_RADIUS * (PI / 16.0).sin())).abs() < 1e-4);
    assert_eq!(points.first(), points.last());
    let mut worst = (0.0f32, 0.0f64);
    for i in 0..=1500 {
        let t = i as f32 / 50.0;
        let c = scene.character(t).unwrap();
        // On the path, at the arc length walked (the path is on y = 0, the character at its
        // root's height over the terrain).
        let expected = point_at(&points, (c.distance as f32).rem_euclid(length));
        worst.0 = worst.0.max(horizontal(c.position - expected));
        // The root's height is the terrain's somewhere within 0.6 m of path.
        let near: Vec<f32> = (-60..=60)
            .map(|k| {
                let p = point_at(&points, (c.distance as f32 + k as f32 * 0.01).rem_euclid(length));
                scene.terrain().height(p.x, p.z)
            })
            .collect();
        let (lo, hi) = near.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &h| (a.min(h), b.max(h)));
        assert!(c.position.y >= lo - 1e-6 && c.position.y <= hi + 1e-6, "t {t}: {} not in {lo}..{hi}", c.position.y);
        // The distance walked is the controller's root motion (it has no yaw: straight ahead).
        worst.1 = worst.1.max((c.root_motion.translation.z as f64 - c.distance).abs());
        assert!(c.root_motion.translation.x.abs() < 1e-6 && c.root_motion.yaw == 0.0);
        assert!((c.world.translation() - c.position).length() < 1e-6);
    }
    eprintln!(
        "path: position off the walked arc length ≤ {:.3} mm, root motion vs distance ≤ {:.3} mm",
        worst.0 * 1e3,
        worst.1 * 1e3
    );
    assert!(worst.0 < 1e-3 && worst.1 < 1e-3, "{worst:?}");
    // Speeds: the clips' root speed while walking, running; standing still while idle.
    let d = |t: f32| scene.character(t).unwrap().distance;
    let walk = (d(5.5) - d(0.5)) / 5.0;
    let run = (d(9.5) - d(7.0)) / 2.5;
    eprintln!("walks at {walk:.5} m/s, runs at {run:.5} m/s");
    assert!((walk - WALK_SPEED as f64).abs() < 1e-4, "{walk}");
    assert!((run - RUN_SPEED as f64).abs() < 1e-4, "{run}");
    assert!((d(18.8) - d(17.0)).abs() < 1e-9);
    let c = scene.character(3.0).unwrap();
    assert!((c.speed - WALK_SPEED).abs() < 1e-3, "{}", c.speed);
}

#[test]
fn walk_run_crossfade_keeps_the_feet_in_phase() {
    let scene = Scene::new(None).unwrap();
    let mut crossfading = 0;
    for i in 0..=120 {
        let t = 5.9 + i as f32 / 120.0;
        let c = scene.character(t).unwrap();
        let (w, r) = (c.slots[WALK], c.slots[RUN]);
        assert!((w.weight + r.weight - 1.0).abs() < 1e-5, "t {t}");
        if w.weight > 0.0 && r.weight > 0.0 {
            crossfading += 1;
            let d = (w.phase - r.phase).abs();
            assert!(d.min(1.0 - d) < 1e-4, "t {t}: walk phase {} vs run phase {}", w.phase, r.phase);
        }
    }
    // 0.6 s of crossfade sampled at 120 Hz.
    assert!(crossfading >= 70, "{crossfading}");
}

#[test]
fn wave_covers_the_right_arm_only() {
    let scene = Scene::new(None).unwrap();
    let m = &scene.models()[CHARACTER];
    let c = scene.character(13.0).unwrap();
    assert_eq!((c.slots[WALK].weight, c.slots[WAVE].weight), (1.0, 1.0));
    // The wave layer's own state machine: waving, then back at rest once faded out.
    assert_eq!(c.wave_state, "wave");
    let later = scene.character(15.5).unwrap();
    assert_eq!((later.wave_state, later.slots[WAVE].weight), ("rest", 0.0));
    let sample = |clip: &str, t: f32| {
        let mut pose = Vec::new();
        let clip = m.find_clip(clip).unwrap();
        m.sample(Some(clip), t, RotationInterpolation::NlerpCorrected, &mut Vec::new(), &mut pose).unwrap();
        pose
    };
    let walk = sample("walk", c.slots[WALK].time);
    let wave = sample("wave", c.slots[WAVE].time);
    let lane = |p: &[SoaTransform<f32>], j: usize| p[j / 4].lane(j % 4);
    let skeleton = m.skeleton();
    let mut checked = [0; 3];
    use humanoid::*;
    for j in 0..COUNT {
        // The root is in place (root motion), the neck and head look at the target, the legs
        // hold the planted foot.
        if [ROOT, NECK, HEAD, L_THIGH, L_SHIN, L_FOOT, R_THIGH, R_SHIN, R_FOOT].contains(&j) {
            continue;
        }
        let got = lane(&c.pose, j).rotation;
        let weight: f32 = WAVE_MASK.weight(skeleton, j);
        let (a, b) = (lane(&walk, j).rotation, lane(&wave, j).rotation);
        let expected = if weight == 0.0 {
            checked[0] += 1;
            a
        } else if weight == 1.0 {
            checked[2] += 1;
            b
        } else {
            checked[1] += 1;
            assert_eq!(j, humanoid::R_CLAVICLE);
            a.nlerp(b, weight)
        };
        assert!(got.angle_between(expected) < 1e-4, "joint {j}: mask weight {weight}");
    }
    assert_eq!(checked, [9, 1, 3]);
    // The wave moves the arm: the hand is raised above the head.
    assert!(joint_world(&c, humanoid::R_HAND).y > joint_world(&c, humanoid::HEAD).y);
}

#[test]
fn character_looks_at_its_target() {
    let mut scene = Scene::new(None).unwrap();
    let ray_miss = |c: &CharacterFrame| {
        let head = c.world * c.model[humanoid::HEAD];
        let eyes = head.transform_point3(EYES);
        let dir = head.transform_vector3(Vec3::Z).normalize_or_zero();
        let to = c.look_target - eyes;
        assert!(to.dot(dir) > 0.0);
        (to - dir * to.dot(dir)).length() / to.length()
    };
    let (mut looked, mut worst) = (0, 0.0f32);
    for i in 0..80 {
        let t = i as f32 * 0.25;
        let c = scene.character(t).unwrap();
        assert!((c.look_target - scripted_look_target(t)).length() < 1e-6);
        if c.look_weight == 1.0 {
            looked += 1;
            worst = worst.max(ray_miss(&c));
        }
    }
    eprintln!("look-at: {looked} of 80 frames at full weight, eyes' ray misses by ≤ {worst:.2e} × distance");
    // The target circles inside the path: beside the character or ahead of it about half the
    // time.
    assert!(looked > 35 && worst < 1e-3, "{looked} {worst}");
    // Along a ray: the target is on the ray, on the vertical plane facing it 1 m in front of
    // the head.
    let c0 = scene.character(2.0).unwrap();
    let eyes = c0.world.transform_point3(c0.model[humanoid::HEAD].transform_point3(EYES));
    let forward = Vec3::new(c0.heading.sin(), 0.0, c0.heading.cos());
    let goal = eyes + forward * 1.0 + Vec3::new(0.0, 0.3, 0.0) + forward.cross(Vec3::Y) * 0.4;
    let origin = Vec3::new(0.5, 2.0, 5.0);
    scene.params.look_ray = Some(LookRay { origin, direction: (goal - origin) * 3.0 });
    let c = scene.character(2.0).unwrap();
    // Depth along the ray's horizontal direction: that of the point 1 m ahead of the eyes
    // (the eyes before the look-at turn, which moves them by several centimeters).
    let n = Vec3::new(goal.x - origin.x, 0.0, goal.z - origin.z).normalize_or_zero();
    assert!((c.look_target - (eyes + forward)).dot(n).abs() < 0.1);
    let on_ray = (c.look_target - origin).cross((goal - origin).normalize_or_zero()).length();
    assert!(on_ray < 1e-4, "{on_ray}");
    assert_eq!(c.look_weight, 1.0);
    assert!(ray_miss(&c) < 1e-3);
    // The same pose apart from the neck and head.
    for j in 0..humanoid::COUNT {
        let (a, b) = (c.pose[j / 4].lane(j % 4), c0.pose[j / 4].lane(j % 4));
        assert_eq!(a == b, ![humanoid::NECK, humanoid::HEAD].contains(&j), "joint {j}");
    }
    // A target behind the character: no look.
    let behind = eyes - forward * 2.0;
    scene.params.look_ray = Some(LookRay { origin: behind + Vec3::new(0.0, 3.0, 0.0), direction: -Vec3::Y });
    let c = scene.character(2.0).unwrap();
    // A vertical ray: the target is its point level with the anchor.
    assert!(horizontal(c.look_target - behind) < 1e-4 && (c.look_target.y - behind.y).abs() < 0.05);
    assert_eq!(c.look_weight, 0.0);
    for j in [humanoid::NECK, humanoid::HEAD] {
        let w = c0.pose[j / 4].lane(j % 4).rotation;
        assert!(c.pose[j / 4].lane(j % 4).rotation.angle_between(w) > 1e-3, "joint {j} turned");
    }
    // A ray pointing away: back to the scripted target.
    scene.params.look_ray = Some(LookRay { origin, direction: origin - goal });
    assert!((scene.character(2.0).unwrap().look_target - scripted_look_target(2.0)).length() < 1e-6);
}

#[test]
fn character_is_a_function_of_time_and_replays_fast() {
    let scene = Scene::new(None).unwrap();
    let start = std::time::Instant::now();
    let late = scene.character(59.9).unwrap();
    let cold = start.elapsed().as_secs_f64() * 1e3;
    let start = std::time::Instant::now();
    let frames = 600;
    for i in 0..frames {
        scene.character(59.9 + i as f32 / 60.0).unwrap();
    }
    let warm = start.elapsed().as_secs_f64() * 1e3 / frames as f64;
    let start = std::time::Instant::now();
    scene.character(41.3).unwrap();
    let back = start.elapsed().as_secs_f64() * 1e3;
    eprintln!("character: {cold:.1} ms to replay 59.9 s, {warm:.3} ms per frame playing on, {back:.1} ms to seek back to 41.3 s");
    assert!(cold < 2000.0 && back < cold, "{cold} {back}");
    // Any order of times gives what a fresh scene gives.
    let fresh = Scene::new(None).unwrap();
    for t in [30.0, 5.0, 59.9, 12.34, 5.0, 0.0, 30.0] {
        let (a, b) = (scene.character(t).unwrap(), fresh.character(t).unwrap());
        assert_eq!(a.pose, b.pose, "t {t}");
        assert_eq!(a.world, b.world, "t {t}");
        assert_eq!(a.distance, b.distance, "t {t}");
    }
    assert_eq!(scene.character(59.9).unwrap().pose, late.pose);
    assert_eq!(scene.character(f32::NAN).unwrap().pose, scene.character(0.0).unwrap().pose);
    assert_eq!(scene.character(-3.0).unwrap().world, scene.character(0.0).unwrap().world);
}

fn world_vertices(scene: &Scene, t: f32) -> Vec<Vec3<f32>> {
    let f = scene.frame(t).unwrap();
    let mut out = Vec::new();
    for o in &f.objects {
        for p in o.skin_cpu().unwrap() {
            out.extend(p.positions.iter().map(|&v| o.world.transform_point3(v)));
        }
    }
    out
}

#[test]
fn character_feet_stay_on_the_ground() {
    let scene = Scene::new(None).unwrap();
    let (mut low, mut high, mut flight) = (f32::INFINITY, f32::NEG_INFINITY, 0.0f32);
    for i in 0..80 {
        let t = i as f32 * 0.25;
        let f = scene.frame(t).unwrap();
        let o = &f.objects[1];
        assert_eq!(o.model_index, CHARACTER);
        let planted = scene.character(t).unwrap().feet_locked.contains(&true);
        // The character's vertex lowest above the terrain under it.
        let lowest = o
            .skin_cpu()
            .unwrap()
            .iter()
            .flat_map(|p| p.positions.iter())
            .map(|&v| {
                let w = o.world.transform_point3(v);
                w.y - scene.terrain().height(w.x, w.z)
            })
            .fold(f32::INFINITY, f32::min);
        low = low.min(lowest);
        if planted {
            high = high.max(lowest);
        } else {
            flight = flight.max(lowest);
        }
    }
    eprintln!(
        "lowest point of the character above the terrain: {:.1} to {:.1} cm with a foot planted, \
         up to {:.1} cm without",
        low * 100.0,
        high * 100.0,
        flight * 100.0
    );
    // Within 2.5 cm of the ground while a foot is planted: blends and the swing's toe pitch dip
    // a little below it. The run's flight lifts both feet, and a swinging foot keeps its
    // animated pitch (the ground falls away under its toe running down the slope).
    assert!(low > -0.025 && high < 0.025, "{low} {high}");
    assert!(flight < 0.08, "{flight}");
}

#[test]
fn default_camera_sees_the_whole_scene() {
    let mut scene = Scene::new(None).unwrap();
    scene.params.tentacle_amplitude = TENTACLE_AMPLITUDE_RANGE.1;
    for aspect in [1.0, 4.0 / 3.0, 16.0 / 9.0, 2.4] {
        let vp = default_camera(aspect).view_proj(aspect);
        for i in 0..40 {
            let t = i as f32 * 0.5;
            for v in world_vertices(&scene, t) {
                let c = vp.mul_vec4(v.extend(1.0));
                assert!(c.w > 0.0);
                let (x, y) = (c.x / c.w, c.y / c.w);
                assert!(x.abs() < 0.95 && y.abs() < 0.95, "t {t}, aspect {aspect}: {v:?} at ({x}, {y})");
            }
        }
    }
}

#[test]
fn frames_depend_on_time_only() {
    let scene = Scene::new(None).unwrap();
    let (a, b) = (scene.frame(7.3).unwrap(), scene.frame(7.3).unwrap());
    // The tentacle, the character, the two candy wrappers and the terrain.
    assert_eq!(a.objects.len(), 5);
    assert_eq!((a.objects[4].model_index, a.objects[4].world), (TERRAIN, Mat4::IDENTITY));
    for (x, y) in a.objects.iter().zip(&b.objects) {
        assert_eq!(x.palette, y.palette);
        assert_eq!(x.world, y.world);
    }
    let c = scene.frame(7.4).unwrap();
    assert_ne!(a.objects[0].palette, c.objects[0].palette);
    assert_ne!(a.objects[1].world, c.objects[1].world);
    assert!(a.bones.is_empty());
    let mut s2 = Scene::new(None).unwrap();
    s2.params.show_bones = true;
    // Bones: one line per joint with a parent (tentacle 3, humanoid 21, twist 1 + 1).
    assert_eq!(s2.frame(0.0).unwrap().bones.len(), 3 + 21 + 2);
}

/// The inertialized start from idle does not pop: the largest frame-to-frame move of any joint
/// (model space, the character's own frame) while it runs stays within twice that of steady
/// walking; and the crossfaded stop likewise.
#[test]
fn graph_transitions_do_not_pop() {
    let scene = Scene::new(None).unwrap();
    // Largest joint move between consecutive frames over [from, to) seconds, and the states
    // seen.
    let largest = |from: f32, to: f32| {
        let (mut worst, mut transitions) = (0.0f32, 0);
        let mut last: Option<Vec<Vec3<f32>>> = None;
        for i in (from * 60.0).round() as usize..(to * 60.0).round() as usize {
            let c = scene.character(i as f32 / 60.0).unwrap();
            transitions += usize::from(c.transition.is_some());
            let joints: Vec<Vec3<f32>> = c.model.iter().map(|m| m.translation()).collect();
            if let Some(l) = &last {
                worst = l.iter().zip(&joints).map(|(a, b)| (*a - *b).length()).fold(worst, f32::max);
            }
            last = Some(joints);
        }
        (worst, transitions)
    };
    let (walk, none) = largest(2.0, 5.0);
    let (start, starting) = largest(19.0, 19.8);
    let (stop, stopping) = largest(15.8, 16.9);
    eprintln!(
        "largest joint move per frame: steady walk {:.2} mm, inertialized start {:.2} mm, crossfaded stop {:.2} mm",
        walk * 1e3,
        start * 1e3,
        stop * 1e3
    );
    assert_eq!(none, 0);
    // 0.4 s and 0.8 s of transition at 60 frames per second.
    assert!(starting >= 23 && stopping >= 47, "{starting} {stopping}");
    assert!(start <= 2.0 * walk && stop <= 2.0 * walk, "{walk} {start} {stop}");
}
