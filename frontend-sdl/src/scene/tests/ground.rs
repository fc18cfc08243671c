//! Tests of the uneven ground: the terrain's heights and normals against the layout its docs
//! give, its mesh against its heights, the foot placement's switches, the planted feet on the
//! stairs and the slope over the whole schedule, and switching the placement mid-walk without a
//! pop.

use sinew::clip::RotationInterpolation;
use sinew::math::Vec3;
use sinew_offline::builtin::{humanoid, ANKLE_HEIGHT, RUN_GAIT, WALK_GAIT};

use super::super::*;

/// The built-in terrain as its docs lay it out, written out here: steps of 0.1 m at
/// x = 0 and 0.3 and the plateau (0.3 m) from x = 0.6 across z ∈ [−0.8, −0.2]; the plateau
/// over x ∈ [0.6, 1.85], z ∈ [−2.2, −0.2]; the slope from 0 at x = −0.6 to 0.3 at x = 0.6
/// across z ∈ [−2.2, −1.6]. Points on no edge only.
fn reference(x: f32, z: f32) -> (f32, Vec3<f32>) {
    let up = Vec3::Y;
    if (0.6..=1.85).contains(&x) && (-2.2..=-0.2).contains(&z) {
        return (0.3, up);
    }
    if (-0.8..=-0.2).contains(&z) {
        if (0.0..0.3).contains(&x) {
            return (0.1, up);
        }
        if (0.3..0.6).contains(&x) {
            return (0.2, up);
        }
    }
    if (-2.2..=-1.6).contains(&z) && (-0.6..=0.6).contains(&x) {
        // Rises 0.3 over 1.2 m along +X.
        let n = Vec3::new(-0.25, 1.0, 0.0) * (1.0 / (1.0f32 + 0.0625).sqrt());
        return (0.25 * (x + 0.6), n);
    }
    (0.0, up)
}

#[test]
fn terrain_answers_its_layout_exactly() {
    let terrain = Terrain::builtin();
    let mut seen = [0usize; 4];
    // A grid whose points miss every edge (edges are on multiples of 0.05 m).
    for i in 0..160 {
        for k in 0..120 {
            let (x, z) = (-2.5 + 0.0301 * i as f32, -3.0 + 0.0301 * k as f32);
            let g = terrain.sample(x, z);
            let (h, n) = reference(x, z);
            assert!((g.height - h).abs() < 1e-5, "({x}, {z}): {} vs {h}", g.height);
            assert!((g.normal - n).length() < 1e-5, "({x}, {z}): {:?} vs {n:?}", g.normal);
            assert_eq!(terrain.height(x, z), g.height);
            // The core's ground query answers the same, for any leg and height.
            let hit = sinew::job::foot::Ground::ground(&mut &terrain, k % 2, Vec3::new(x, 5.0 - 0.1 * k as f32, z));
            assert_eq!(hit, Some(sinew::job::foot::GroundHit { height: g.height, normal: g.normal }));
            seen[g.surface as usize] += 1;
        }
    }
    assert!(seen.iter().all(|&n| n > 100), "{seen:?}");
    // On a riser the higher tread answers; on the slope's top edge the plateau.
    for (x, h) in [(STAIRS_X, 0.1), (STAIRS_X + STAIR_TREAD, 0.2), (PLATEAU_X, 0.3)] {
        let g = terrain.sample(x, -0.5);
        assert_eq!((g.height, g.surface), (h, if h < 0.3 { Surface::Stairs } else { Surface::Plateau }));
    }
    assert_eq!(terrain.sample(PLATEAU_X, -1.9).surface, Surface::Plateau);
    let foot = terrain.sample(SLOPE_X, -1.9);
    assert_eq!((foot.height, foot.surface), (0.0, Surface::Slope));
    assert!((foot.normal - reference(-0.5, -1.9).1).length() < 1e-6);
    // The path crosses the stairs on its front straight and the slope on its back one.
    let front: Vec<Surface> = (0..19).map(|k| terrain.sample(-0.9 + 0.1 * k as f32, -0.5).surface).collect();
    assert!(front.contains(&Surface::Stairs) && front.contains(&Surface::Plateau));
    assert!((0..19).any(|k| terrain.sample(-0.9 + 0.1 * k as f32, -1.9).surface == Surface::Slope));
    // The envelope: at least the height, the height itself away from higher blocks, and
    // climbing at most its slope towards a riser.
    for i in 0..400 {
        let x = -1.0 + 0.005 * i as f32;
        let (e, h) = (terrain.envelope(x, -0.5, 0.5), terrain.height(x, -0.5));
        assert!(e >= h && e <= h.max(0.3), "{x}");
        let next = terrain.envelope(x + 0.005, -0.5, 0.5);
        assert!((next - e).abs() <= 0.5 * 0.005 + 1e-5, "{x}: {e} → {next}");
    }
    // Mid-tread on the first step, the next step's nose 0.15 m ahead is 0.1 m higher.
    assert!((terrain.envelope(0.15, -0.5, 0.5) - (0.2 - 0.5 * 0.15)).abs() < 1e-6);
    assert_eq!(terrain.envelope(-0.5, -0.5, 0.5), 0.0);
}

#[test]
fn terrain_mesh_is_the_ground_it_answers() {
    let terrain = Terrain::builtin();
    let rig = terrain.rig();
    let prim = &rig.meshes[0].primitives[0];
    let p = |i: u32| Vec3::from_array(prim.positions[i as usize]);
    let normals = prim.normals.as_ref().unwrap();
    // Each triangle faces the way its vertices' normal says (counter-clockwise seen from
    // outside), tops up and walls sideways.
    let triangles: Vec<[Vec3<f32>; 3]> = prim.indices.chunks_exact(3).map(|t| [p(t[0]), p(t[1]), p(t[2])]).collect();
    for (t, idx) in triangles.iter().zip(prim.indices.chunks_exact(3)) {
        let n = Vec3::from_array(normals[idx[0] as usize]);
        let face = (t[1] - t[0]).cross(t[2] - t[0]);
        assert!(face.length() < 1e-9 || face.normalize_or_zero().dot(n) > 0.9999, "{t:?} {n:?}");
        assert!(n.y.abs() < 1e-6 || n.y > 0.9, "{n:?}");
    }
    // A vertical ray down through (x, z) first meets the mesh at the terrain's height (or
    // misses it where the ground is flat at 0).
    let hit = |x: f32, z: f32| -> Option<f32> {
        let mut best: Option<f32> = None;
        for t in &triangles {
            let d = |a: Vec3<f32>, b: Vec3<f32>| (b.x - a.x) * (z - a.z) - (b.z - a.z) * (x - a.x);
            let (d0, d1, d2) = (d(t[0], t[1]), d(t[1], t[2]), d(t[2], t[0]));
            let area = d(t[0], t[1]) + d(t[1], t[2]) + d(t[2], t[0]);
            let inside = (d0 >= 0.0 && d1 >= 0.0 && d2 >= 0.0) || (d0 <= 0.0 && d1 <= 0.0 && d2 <= 0.0);
            if !inside || area.abs() < 1e-9 {
                continue;
            }
            // Barycentric weights of (x, z) in the triangle's projection.
            let (w0, w1, w2) = (d1 / area, d2 / area, d0 / area);
            let y = w0 * t[0].y + w1 * t[1].y + w2 * t[2].y;
            best = Some(best.map_or(y, |b| b.max(y)));
        }
        best
    };
    let mut covered = 0;
    for i in 0..90 {
        for k in 0..60 {
            let (x, z) = (-1.0 + 0.0317 * i as f32, -2.4 + 0.0373 * k as f32);
            let h = terrain.height(x, z);
            match hit(x, z) {
                Some(y) => {
                    covered += 1;
                    assert!((y - h).abs() < 1e-5, "({x}, {z}): mesh {y}, terrain {h}");
                }
                None => assert_eq!(h, 0.0, "({x}, {z})"),
            }
        }
    }
    assert!(covered > 1000, "{covered}");
    // Its edges lie on the faces' outlines, a few millimeters out.
    let edges = terrain.edges();
    assert!(edges.len() > 40);
    for [a, b] in edges {
        for q in [a, b] {
            let d = triangles.iter().flat_map(|t| t.iter()).map(|v| (*v - q).length()).fold(f32::INFINITY, f32::min);
            assert!(d < 0.01, "{q:?} is {d} from every vertex");
        }
    }
    // It bakes, as the scene's fourth model.
    let scene = Scene::new(None).unwrap();
    assert_eq!(scene.models().len(), 4);
    assert_eq!(scene.models()[TERRAIN].asset().num_meshes(), 1);
}

#[test]
fn foot_placement_switches_keep_their_history() {
    let mut p = FootPlacement::default();
    assert!(p.initially() && p.is_on(0.0) && p.is_on(1e6) && p.switches().is_empty());
    p.switch_at(2.0);
    p.switch_at(5.0);
    assert_eq!(p.switches(), &[2.0, 5.0]);
    assert!(p.is_on(1.99) && !p.is_on(2.0) && !p.is_on(4.99) && p.is_on(5.0) && p.is_on(100.0));
    // A switch before the last ones forgets them.
    p.switch_at(3.0);
    assert_eq!(p.switches(), &[2.0, 3.0]);
    assert!(!p.is_on(2.5) && p.is_on(3.0) && p.is_on(6.0));
    // A second switch at the same time undoes the first.
    p.switch_at(3.0);
    assert_eq!(p.switches(), &[2.0]);
    assert!(!p.is_on(10.0));
    p.switch_at(f32::NAN);
    assert_eq!((p.switches(), p.is_on(0.0)), (&[0.0][..], false));
    // Where two histories start to differ.
    let (a, mut b) = (FootPlacement::new(true), FootPlacement::new(true));
    assert_eq!(a.first_difference(&b), None);
    b.switch_at(4.0);
    assert_eq!((a.first_difference(&b), b.first_difference(&a)), (Some(4.0), Some(4.0)));
    let mut c = b.clone();
    c.switch_at(6.0);
    assert_eq!(b.first_difference(&c), Some(6.0));
    assert_eq!(FootPlacement::new(false).first_difference(&a), Some(0.0));
}

/// The character's ankle and toe heights above the clip's ground while a foot is planted:
/// the `walk` clip's left foot early in its stance, sampled here.
fn standing_heights(scene: &Scene) -> (f32, f32) {
    let m = &scene.models()[CHARACTER];
    let (mut pose, mut joints) = (Vec::new(), Vec::new());
    let clip = m.find_clip("walk").unwrap();
    m.sample(Some(clip), 0.1, RotationInterpolation::NlerpCorrected, &mut Vec::new(), &mut pose).unwrap();
    m.world(&pose, &mut joints).unwrap();
    (joints[humanoid::L_FOOT].translation().y, joints[humanoid::L_TOE].translation().y)
}

/// Whether the clips plant the foot on `side` (+1 left, −1 right): walk or run alone at full
/// weight, no graph transition, the foot's phase within its gait's duty.
fn clip_planted(c: &CharacterFrame, side: f32) -> bool {
    [(WALK, WALK_GAIT), (RUN, RUN_GAIT)].into_iter().any(|(slot, gait)| {
        let u = (c.slots[slot].phase + if side > 0.0 { 0.0 } else { 0.5 }).rem_euclid(1.0);
        c.slots[slot].weight == 1.0 && c.transition.is_none() && u < gait.duty
    })
}

#[test]
fn planted_feet_stand_on_the_stairs_and_the_slope() {
    let scene = Scene::new(None).unwrap();
    let terrain = scene.terrain();
    let (ankle_height, toe_height) = standing_heights(&scene);
    assert!((ankle_height - ANKLE_HEIGHT).abs() < 1e-4, "{ankle_height}");
    // Per surface under the foot (stairs, slope, other): planted samples and the largest
    // distance of a foot from resting on the ground.
    let mut count = [0usize; 3];
    let mut worst = [0.0f32; 3];
    let steps = (SCHEDULE_PERIOD / CHARACTER_STEP).round() as usize;
    for i in 0..=steps {
        let t = i as f32 * CHARACTER_STEP;
        let c = scene.character(t).unwrap();
        assert_eq!(c.foot_placement, 1.0);
        for (k, (side, ankle)) in [(1.0f32, humanoid::L_FOOT), (-1.0, humanoid::R_FOOT)].into_iter().enumerate() {
            if !clip_planted(&c, side) {
                continue;
            }
            // How far the ankle and the toe are from their standing heights above the ground
            // under each, across the ground's plane.
            let off = |j: usize, standing: f32| {
                let p = c.world.transform_point3(c.model[j].translation());
                let g = terrain.sample(p.x, p.z);
                ((p.y - g.height) * g.normal.y - standing, g.surface)
            };
            let (a, under_ankle) = off(ankle, ankle_height);
            let (b, under_toe) = off(ankle + 1, toe_height);
            // The foot rests on the ground at its ankle or at its toe, and sinks at neither.
            let error = if a.min(b) < 0.0 { -a.min(b) } else { a.min(b) };
            let class = match (under_ankle, under_toe) {
                (Surface::Stairs, _) | (_, Surface::Stairs) => 0,
                (Surface::Slope, _) | (_, Surface::Slope) => 1,
                _ => 2,
            };
            count[class] += 1;
            worst[class] = worst[class].max(error);
            assert!(
                error < 0.005,
                "t {t}, foot {k}: ankle {a}, toe {b} off the ground ({under_ankle:?}, {under_toe:?})"
            );
        }
    }
    eprintln!(
        "planted feet off the ground: stairs ≤ {:.2} mm over {} samples, slope ≤ {:.2} mm over {}, elsewhere ≤ {:.2} mm over {}",
        worst[0] * 1e3,
        count[0],
        worst[1] * 1e3,
        count[1],
        worst[2] * 1e3,
        count[2]
    );
    // Both crossed at a walk and at a run in one period.
    assert!(count[0] >= 60 && count[1] >= 60 && count[2] >= 300, "{count:?}");
}

/// World positions of every joint of the character.
fn joints_world(c: &CharacterFrame) -> Vec<Vec3<f32>> {
    c.model.iter().map(|m| c.world.transform_point3(m.translation())).collect()
}

/// The largest move of any joint between consecutive frames at the scene's step over steps
/// `from..to`, per frame.
fn moves(scene: &Scene, from: usize, to: usize) -> Vec<f32> {
    let mut last: Option<Vec<Vec3<f32>>> = None;
    let mut out = Vec::new();
    for i in from..to {
        let joints = joints_world(&scene.character(i as f32 * CHARACTER_STEP).unwrap());
        if let Some(l) = &last {
            out.push(l.iter().zip(&joints).map(|(a, b)| (*a - *b).length()).fold(0.0, f32::max));
        }
        last = Some(joints);
    }
    out
}

#[test]
fn switching_foot_placement_mid_walk_does_not_pop() {
    let steps = (SCHEDULE_PERIOD / CHARACTER_STEP).round() as usize;
    // The walk without the stage: the largest joint move of the whole schedule.
    let mut off = Scene::new(None).unwrap();
    off.params.foot_placement = FootPlacement::new(false);
    let baseline = moves(&off, 0, steps + 1).into_iter().fold(0.0, f32::max);
    let on = Scene::new(None).unwrap();
    // Switches while walking (whole steps): off on the stairs, on in the turn, off on the slope,
    // on at the slope's foot, off in the next lap's turn, on on the slope, off on the stairs.
    let switches = [0.85f32, 2.0, 4.0, 4.8, 11.0, 12.4, 15.4];
    let mut switched = Scene::new(None).unwrap();
    for &s in &switches {
        switched.params.foot_placement.switch_at(s);
    }
    let ramp = (FOOT_BLEND / CHARACTER_STEP).round() as usize;
    let (mut worst, mut over_both) = (0.0f32, f32::NEG_INFINITY);
    for (n, &s) in switches.iter().enumerate() {
        let first = (s / CHARACTER_STEP).round() as usize;
        let (from, to) = (first - 1, first + ramp + 2);
        let got = moves(&switched, from, to);
        let (with, without) = (moves(&on, from, to), moves(&off, from, to));
        worst = got.iter().copied().fold(worst, f32::max);
        for ((g, a), b) in got.iter().zip(&with).zip(&without) {
            over_both = over_both.max(g - a.max(*b));
        }
        // The weight ramps from one end to the other over the blend time, one step at a time.
        let turning_on = n % 2 == 1;
        let weight = |i: usize| switched.character(i as f32 * CHARACTER_STEP).unwrap().foot_placement;
        // The frame at the switch's time ends the step before it; the next step runs switched.
        let at = |i: usize| switched.character(i as f32 * CHARACTER_STEP).unwrap().foot_placement_on;
        assert_eq!((at(first), at(first + 1)), (!turning_on, turning_on), "switch at {s}");
        assert_eq!(weight(first), if turning_on { 0.0 } else { 1.0 }, "switch at {s}");
        for i in first + 1..=first + ramp {
            let expected = (i - first) as f32 / ramp as f32;
            let expected = if turning_on { expected } else { 1.0 - expected };
            assert!((weight(i) - expected).abs() < 1e-4, "switch at {s}, step {i}: {} vs {expected}", weight(i));
        }
    }
    eprintln!(
        "largest joint move per frame: {:.1} mm without the stage over the schedule, {:.1} mm while a switch \
         ramps (at most {:.1} mm over the larger of the stage on and off throughout)",
        baseline * 1e3,
        worst * 1e3,
        over_both * 1e3
    );
    assert!(worst <= baseline, "{worst} > {baseline}");
    // The ramp itself adds little to the larger of the two steady moves.
    assert!(over_both < 0.02, "{over_both}");
}

#[test]
fn switches_replay_as_a_fresh_scene_does() {
    let mut scene = Scene::new(None).unwrap();
    let before = scene.character(12.0).unwrap();
    scene.params.foot_placement.switch_at(8.0);
    let check = |scene: &Scene, t: f32| {
        let mut fresh = Scene::new(None).unwrap();
        fresh.params.foot_placement = scene.params.foot_placement.clone();
        let (a, b) = (scene.character(t).unwrap(), fresh.character(t).unwrap());
        assert_eq!((a.pose, a.world, a.foot_placement), (b.pose, b.world, b.foot_placement), "t {t}");
    };
    // After the switch, as a scene that had it from the start; before it, as before.
    check(&scene, 12.0);
    check(&scene, 9.0);
    assert_eq!(scene.character(7.9).unwrap().pose, Scene::new(None).unwrap().character(7.9).unwrap().pose);
    assert_ne!(scene.character(12.0).unwrap().pose, before.pose);
    // An earlier switch replaces the later one.
    scene.params.foot_placement.switch_at(5.0);
    check(&scene, 12.0);
    check(&scene, 6.0);
    assert!(!scene.character(12.0).unwrap().foot_placement_on);
    assert_eq!(scene.params.foot_placement.switches(), &[5.0]);
    // Back to no switch: the first state again.
    scene.params.foot_placement = FootPlacement::default();
    assert_eq!(scene.character(12.0).unwrap().pose, before.pose);
    // The frame takes the switches too: the character's legs differ with the stage off.
    let mut off = Scene::new(None).unwrap();
    off.params.foot_placement = FootPlacement::new(false);
    let (a, b) = (scene.frame(0.9).unwrap(), off.frame(0.9).unwrap());
    assert_ne!(a.objects[1].palette, b.objects[1].palette);
    assert_eq!(a.objects[0].palette, b.objects[0].palette);
}
