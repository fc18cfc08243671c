//! Spring bones in the desktop viewer (`sinew demo` on a VRM model), without a window: the
//! viewer's character swings the model's springs when the model is moved on the ground (as a
//! shift-drag moves it: [`ground_drag`] then [`Viewer::move_by`]), the spring key's switch
//! gives the clips' pose back, the collider overlay's lines lie on the colliders placed by
//! matrices computed here, and `sinew demo --colliders --screenshot` draws them.

mod common;

use std::path::{Path, PathBuf};

use sinew::job::spring::{ColliderShape, NO_JOINT};
use sinew::math::{Mat4, SoaTransform, Vec3, Vec4};
use sinew_frontend::demo::ground_drag;
use sinew_frontend::demo::viewer::{PaletteSizes, Viewer};
use sinew_frontend::scene::Camera;
use sinew_host::character::colliders::CIRCLE_SEGMENTS;

const FRAME: f32 = 1.0 / 60.0;

fn asset(rel: &str) -> PathBuf {
    sinew_assets::path(rel)
}

/// A viewer on `path` with its springs set up (they must be there).
fn viewer(path: &Path) -> Viewer {
    let mut v = Viewer::load(path, None, PaletteSizes::same(64)).expect("the model loads");
    assert!(v.setup_springs().expect("the springs validate"), "{} has springs", path.display());
    assert!(v.has_springs() && v.springs_enabled());
    v
}

/// The world position of joint `j` in the last update: the viewer's world matrix times the
/// character's model matrix.
fn world_pos(v: &Viewer, j: usize) -> Vec3<f32> {
    (v.world() * v.character().joints[j]).translation()
}

/// The largest rotation difference, in radians, between two poses over the joints `joints`.
fn max_turn(a: &[SoaTransform<f32>], b: &[SoaTransform<f32>], joints: impl Iterator<Item = usize>) -> f32 {
    joints.map(|j| a[j / 4].lane(j % 4).rotation.angle_between(b[j / 4].lane(j % 4).rotation)).fold(0.0, f32::max)
}

/// The spring joints (that turn) and their tails' joints, of the viewer's spring set.
fn spring_joints(v: &Viewer) -> (Vec<usize>, Vec<usize>) {
    let set = v.character().spring_set().expect("springs");
    let turning = set.joints.iter().map(|s| usize::from(s.joint)).collect();
    let tails = set.joints.iter().filter(|s| s.child != NO_JOINT).map(|s| usize::from(s.child)).collect();
    (turning, tails)
}

/// Pixel of world point `p` (top-left origin) in a `w × h` view: computed here from the
/// matrix, apart from the demo's unprojection.
fn pixel(view_proj: &Mat4<f32>, p: Vec3<f32>, (w, h): (f32, f32)) -> (f32, f32) {
    let c = view_proj.mul_vec4(Vec4::new(p.x, p.y, p.z, 1.0));
    ((c.x / c.w + 1.0) * 0.5 * w, (1.0 - c.y / c.w) * 0.5 * h)
}

/// A drag over the ground moves the model as far as the ground moved under the cursor, and
/// its springs lag behind their root; with the springs switched off the pose is the clips'
/// again, switched back on they start at rest, and the reset-camera key's reset puts the
/// model back at the origin.
#[test]
fn dragging_the_model_swings_its_springs_and_the_key_switches_them() {
    let path = asset("vrm/three-vrm/sphere-collider.gltf");
    let (mut moved, mut held) = (viewer(&path), viewer(&path));
    let (turning, tails) = spring_joints(&moved);
    assert!(!tails.is_empty());
    let root = turning[0];

    // A shift-drag's move: the ground points under two pixels, computed from their pixels.
    let camera = Camera::framing(moved.center, moved.radius);
    let size = (640.0, 360.0);
    let vp = camera.view_proj(size.0 / size.1);
    let (a, b) = (Vec3::new(moved.center.x, moved.floor, moved.center.z), Vec3::new(0.0, 0.0, 0.0));
    let b = a + Vec3::new(0.3 * moved.radius, b.y, -0.1 * moved.radius);
    let step = ground_drag(&vp, pixel(&vp, a, size), pixel(&vp, b, size), size, moved.floor).expect("on the ground");
    assert!((step - (b - a)).length() < 1e-3 * moved.radius, "{step:?} for {:?}", b - a);

    for v in [&mut moved, &mut held] {
        for _ in 0..10 {
            v.advance(FRAME).unwrap();
        }
    }
    // Ten frames of the drag, ten frames apart.
    let frames = 10;
    for _ in 0..frames {
        moved.move_by(step * (1.0 / frames as f32));
        moved.advance(FRAME).unwrap();
        held.advance(FRAME).unwrap();
    }
    assert!((moved.placement() - step).length() < 1e-5, "{:?}", moved.placement());
    assert_eq!(moved.character().world(), moved.world(), "the springs swing in the model's world");
    let along = step.normalize_or_zero();
    // Each tail's place along the drag relative to the chain's root: behind where the held
    // model's is.
    let rel = |v: &Viewer, t: usize| (world_pos(v, t) - world_pos(v, root)).dot(along);
    let lags: Vec<f32> = tails.iter().map(|&t| rel(&moved, t) - rel(&held, t)).collect();
    eprintln!("lag along the drag per tail: {lags:?}");
    let frame = moved.spring_frame().expect("springs ran");
    assert!(!frame.reset && frame.steps == 1, "{frame:?}");
    assert!(lags.iter().all(|&l| l < 0.0), "every tail lags: {lags:?}");
    let last = *lags.last().unwrap_or(&0.0);
    assert!(last < -0.05 * step.length(), "the chain's end lags by {last}, the drag went {}", step.length());
    // The root moved with the model.
    let root_moved = world_pos(&moved, root) - world_pos(&held, root);
    assert!((root_moved - step).length() < 1e-4, "{root_moved:?}");

    // The springs turn their joints away from the clips' pose; switched off, the pose is the
    // clips' again.
    let swung = moved.pose().unwrap();
    let sampled = moved.character().pose().to_vec();
    let turn = max_turn(&swung, &sampled, turning.iter().copied());
    assert!(turn > 0.01, "the springs turn the chain by {turn} rad");
    moved.set_springs_enabled(false);
    moved.advance(FRAME).unwrap();
    assert!(!moved.springs_enabled());
    let off = moved.pose().unwrap();
    assert_eq!(max_turn(&off, moved.character().pose(), 0..moved.model.skeleton().num_joints()), 0.0);
    // Switched on while the model stands still: at their rest rotations (the model has no
    // clips: the rest pose is the clips' pose), then swinging.
    moved.set_springs_enabled(true);
    assert!(moved.spring_frame().is_some_and(|f| f.reset), "switched on, the springs reset");
    assert!(max_turn(&moved.pose().unwrap(), moved.character().pose(), turning.iter().copied()) < 1e-3);
    moved.advance(FRAME).unwrap();
    assert!(moved.spring_frame().is_some_and(|f| !f.reset && f.steps == 1));

    // Back at the origin with the springs at rest.
    moved.reset_placement();
    assert_eq!(moved.placement(), Vec3::ZERO);
    assert_eq!(moved.character().world(), held.world());
    assert!(moved.spring_frame().is_some_and(|f| f.reset));
    assert!((world_pos(&moved, root) - world_pos(&held, root)).length() < 1e-5);
}

/// The sphere collider's lines are circles at its radius about its center, placed here by the
/// model matrix of its joint and the model's world, before and after a move; an inside
/// collider's lines are apart; a plane's square lies in the plane.
#[test]
fn collider_lines_lie_on_the_colliders_in_the_world() {
    let mut v = viewer(&asset("vrm/vrm-conformance/springbone_collider_sphere_x0p02_r0p1.vrm"));
    for delta in [Vec3::ZERO, Vec3::new(0.4, 0.0, -0.25)] {
        v.move_by(delta);
        v.advance(FRAME).unwrap();
        let set = v.character().spring_set().unwrap().clone();
        let spheres: Vec<(Vec3<f32>, f32)> = set
            .colliders
            .iter()
            .filter_map(|c| match c.shape {
                ColliderShape::Sphere { offset, radius, .. } => {
                    let m = v.world() * v.character().joints[usize::from(c.joint)];
                    Some((m.transform_point3(offset), radius))
                }
                _ => None,
            })
            .collect();
        assert!(!spheres.is_empty());
        let lines = v.collider_lines();
        assert!(lines.inside.is_empty());
        assert!(lines.outside.len() >= spheres.len() * 3 * CIRCLE_SEGMENTS, "{}", lines.outside.len());
        for p in lines.outside.iter().flatten() {
            let off = spheres.iter().map(|(c, r)| ((*p - *c).length() - r).abs()).fold(f32::MAX, f32::min);
            assert!(off < 1e-4, "{p:?} is {off} off every sphere");
        }
        // Every sphere is drawn: some point at its radius.
        for (c, r) in &spheres {
            assert!(lines.outside.iter().flatten().any(|p| ((*p - *c).length() - r).abs() < 1e-4));
        }
    }

    let v = viewer(&asset("vrm/three-vrm/inside-collider.gltf"));
    let lines = v.collider_lines();
    let set = v.character().spring_set().unwrap();
    let insides = set
        .colliders
        .iter()
        .filter(|c| {
            matches!(c.shape, ColliderShape::Sphere { inside: true, .. } | ColliderShape::Capsule { inside: true, .. })
        })
        .count();
    assert!(insides > 0 && !lines.inside.is_empty(), "{insides} inside colliders");

    let v = viewer(&asset("vrm/three-vrm/plane-collider.gltf"));
    let lines = v.collider_lines();
    let set = v.character().spring_set().unwrap();
    let planes: Vec<(Vec3<f32>, Vec3<f32>)> = set
        .colliders
        .iter()
        .filter_map(|c| match c.shape {
            ColliderShape::Plane { offset, normal } => {
                let m = v.world() * v.character().joints[usize::from(c.joint)];
                // Rigid joints here: the normal turns with the matrix.
                Some((m.transform_point3(offset), m.transform_vector3(normal).normalize_or_zero()))
            }
            _ => None,
        })
        .collect();
    assert!(!planes.is_empty());
    // Each plane's square: its four sides lie in the plane; its normal starts on it.
    for (o, n) in &planes {
        let in_plane = |p: &Vec3<f32>| (*p - *o).dot(*n).abs() < 1e-4;
        let square = lines.outside.iter().filter(|l| l.iter().all(in_plane) && (l[0] - *o).length() > 1e-6).count();
        assert!(square >= 4, "{square} sides in the plane through {o:?}");
        assert!(lines.outside.iter().any(|l| l[0] == *o && ((l[1] - *o).normalize_or_zero() - *n).length() < 1e-4));
    }
}

/// `sinew demo --colliders --screenshot` on the capsule model draws the colliders' color,
/// which the same frame without `--colliders` lacks.
#[test]
fn screenshot_with_colliders_draws_them() {
    let d = common::Display::get();
    let model = asset("vrm/vrm-conformance/springbone_collider_capsule_x0p02_r0p1.vrm");
    let dir = std::env::temp_dir();
    let shot = |colliders: bool| {
        let png = dir.join(format!("sinew_viewer_springs_{}_{colliders}.png", std::process::id()));
        let mut args = vec![model.to_str().unwrap(), "--frames", "20", "--no-hud", "--width", "320", "--height", "240"];
        if colliders {
            args.push("--colliders");
        }
        args.extend(["--screenshot", png.to_str().unwrap()]);
        let out = common::sinew(Some(&d), &[&["demo"][..], &args].concat());
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let img = common::read_png(&png);
        let _ = std::fs::remove_file(&png);
        img
    };
    let (with, without) = (shot(true), shot(false));
    assert_eq!((with.width, with.height), (320, 240));
    assert!(common::coverage(&with.rgba).0 > 0.01, "the frame is not empty");
    // The collider color (cyan, blended at 0.9) and the inside colliders' (pink).
    let collider = |p: &[u8]| (p[0] < 140 && p[1] > 180 && p[2] > 200) || (p[0] > 200 && p[1] < 140 && p[2] > 180);
    let count = |img: &common::Image| img.rgba.chunks_exact(4).filter(|p| collider(p)).count();
    let (n_with, n_without) = (count(&with), count(&without));
    assert!(n_with > n_without + 30, "collider pixels: {n_with} with, {n_without} without");
}
