//! Host tests of the firmware's steps: the fixture fits the buffers, left-out key formats are
//! refused, the palette and skinning match the core's jobs, the graph's run frame by frame, the
//! band hashes, the retarget and IK stages, a repeated report, and Q16.16 against f32.

extern crate std;

use std::boxed::Box;
use std::string::String;
use std::vec::Vec;

use sinew::job::SkinMatrixJob;
use sinew::raster::Target;

use super::*;

/// One character run frame by frame through the probe's stages.
struct Run<'a, R: Scalar> {
    scene: Scene<'a, R>,
    skeleton: sinew::skeleton::Skeleton<R, { Probe::SOA }>,
    machine: Box<CharacterMachine<'a, R>>,
    mesh: Box<MeshBuffers<R>>,
    springs: SpringState<R>,
}

/// A fresh character: the fixture's scene and its state machine, over graph lists that
/// live as long as the test.
fn character<R: Scalar>() -> (Scene<'static, R>, Box<CharacterMachine<'static, R>>) {
    let scene = Scene::<R>::new(FIXTURE).unwrap();
    let storage: &'static mut GraphStorage<'static, R> = Box::leak(Box::new(GraphStorage::new()));
    let graph = storage.load(&scene.graph).unwrap();
    let mut machine = Box::new(CharacterMachine::empty());
    start(&mut machine, &scene, graph).unwrap();
    (scene, machine)
}

/// What a frame leaves behind: the local pose and the model matrices (before the spring step),
/// and the skinned positions (after it).
struct Frame<R> {
    pose: [SoaTransform<R>; Probe::SOA],
    model: Vec<Mat4<R>>,
    positions: Vec<Vec3<R>>,
}

impl<R: Scalar> Run<'static, R> {
    fn new() -> Self {
        let (scene, machine) = character::<R>();
        let skeleton = scene.skeleton().unwrap();
        let mut mesh = Box::new(MeshBuffers::ZERO);
        mesh.load_indices(&scene);
        Run { scene, skeleton, machine, mesh, springs: SpringState::START }
    }

    fn frame(&mut self, f: usize) -> Frame<R> {
        let view = self.skeleton.view();
        let mut pose = [SoaTransform::IDENTITY; Probe::SOA];
        let mut model = [Mat4::IDENTITY; Probe::JOINTS];
        update(&mut self.machine, &self.scene, view, f, &mut pose).unwrap();
        local_to_model(view, &pose, &mut model).unwrap();
        let joints = view.num_joints();
        let out = Frame { pose, model: model[..joints].to_vec(), positions: Vec::new() };
        let mut swung = pose;
        spring(view, &mut swung, &mut model, &mut self.springs, f).unwrap();
        let palette = palette_in_place(&mut model, &self.scene.skin).unwrap();
        skin(&self.scene, palette, &mut self.mesh.positions).unwrap();
        Frame { positions: self.mesh.positions[..self.scene.vertices].to_vec(), ..out }
    }
}

fn full_frame<R: Scalar>(run: &Run<'_, R>) -> Vec<u16> {
    let (w, h) = (WIDTH as usize, HEIGHT as usize);
    let mut color = std::vec![0u16; w * h];
    let mut depth = std::vec![0u16; w * h];
    let mut target = Target::<Rgb565, Depth16>::new(&mut color, Some(&mut depth), WIDTH, HEIGHT, w).unwrap();
    target.clear(CLEAR);
    let positions = &run.mesh.positions[..run.scene.vertices];
    let mut mesh = Mesh::new(positions, None, Indices::U16(&run.mesh.indices[..run.mesh.index_count]), run.scene.color);
    mesh.shading = Shading::Flat;
    let mut cached = std::vec![CachedVertex::default(); positions.len()];
    Renderer { light: light(), ..Renderer::new(run.scene.view_proj) }
        .draw_mesh(&mut target, &mesh, &mut cached)
        .unwrap();
    color
}

#[test]
fn the_fixture_fits_the_buffers() {
    let scene = Scene::<f32>::new(FIXTURE).unwrap();
    assert!(scene.asset.skeleton().unwrap().num_joints() <= Probe::JOINTS);
    assert!(scene.vertices <= MAX_VERTICES && scene.indices <= MAX_INDICES);
    assert!(scene.influences <= MAX_INFLUENCES);
    // Both clips fit the controller's cursors.
    assert!(scene.clips.iter().all(|c| c.clip.num_tracks() <= Probe::TRACKS));
    // A damaged asset is refused with a typed error.
    let mut bad = FIXTURE.to_vec();
    let last = bad.len() - 1;
    bad[last] ^= 0x55;
    assert!(matches!(Scene::<f32>::new(&bad), Err(ProbeError::Asset(_))));
    assert!(matches!(Scene::<f32>::new(&FIXTURE[..100]), Err(ProbeError::Asset(_))));
}

#[test]
fn key_formats_left_out_of_the_build_are_refused_by_name() {
    use sinew::asset::format::{crc32, FORMAT_F32, FORMAT_QUANTIZED};
    // The firmware links only the packed decoder: the fixture's first clip track,
    // relabelled f32 or quantized (the checksum recomputed), is refused as such.
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize;
    let sections = u32_at(FIXTURE, 20);
    let (clip, table) = (0..sections)
        .map(|i| 24 + 12 * i)
        .find(|&e| &FIXTURE[e..e + 4] == b"CLIP")
        .map(|e| (u32_at(FIXTURE, e + 4), (e - 24) / 12))
        .unwrap();
    // The name, start and end, the track count, then the first track entry (its format byte
    // at 4).
    let entry = clip + 1 + FIXTURE[clip] as usize + 10;
    for format in [FORMAT_F32, FORMAT_QUANTIZED] {
        let mut bytes = FIXTURE.to_vec();
        bytes[entry + 4] = format;
        let crc = crc32(&bytes[20..]);
        bytes[16..20].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(
            Asset::parse(&bytes).err(),
            Some(ParseError::KeyFormatDisabled { section: table as u16, track: 0, format })
        );
    }
}

#[test]
fn in_place_palette_equals_the_skin_matrix_job() {
    let mut run = Run::<f32>::new();
    let frame = run.frame(4);
    let skin = run.scene.skin;
    let inverse_bind: Vec<Mat4<f32>> = (0..skin.num_joints()).map(|i| skin.inverse_bind(i)).collect();
    let mut expected = std::vec![Mat4::ZERO; skin.num_joints()];
    SkinMatrixJob { model: &frame.model, inverse_bind: &inverse_bind, joints: None, output: &mut expected }
        .run()
        .unwrap();
    let mut model = frame.model.clone();
    let palette = palette_in_place(&mut model, &skin).unwrap();
    assert_eq!(palette, &expected[..]);
    // A model buffer shorter than the skin is refused.
    assert_eq!(palette_in_place(&mut model[..3], &skin).unwrap_err(), ProbeError::Job(JobError::InputTooSmall));
}

#[test]
fn the_rest_pose_skins_to_the_bind_mesh() {
    let run = Run::<f32>::new();
    let view = run.skeleton.view();
    let mut model = [Mat4::IDENTITY; Probe::JOINTS];
    local_to_model(view, view.rest_pose(), &mut model).unwrap();
    let palette = palette_in_place(&mut model, &run.scene.skin).unwrap();
    let mut positions = [Vec3::ZERO; MAX_VERTICES];
    skin(&run.scene, palette, &mut positions).unwrap();
    let part = run.scene.mesh.parts().next().unwrap();
    let worst =
        (0..run.scene.vertices).map(|v| (positions[v] - part.position::<f32>(v)).length()).fold(0.0f32, f32::max);
    assert!(worst < 1.0e-5, "{worst}");
}

/// What the graph and the pose did in one frame.
struct Step {
    state: usize,
    transition: Option<usize>,
    progress: f32,
    /// Weights of `walk` and `run`, summed over their slots.
    weights: [f32; 2],
    root_z: f32,
    /// Model-space joint positions.
    joints: Vec<[f32; 3]>,
}

fn trace<R: Scalar>() -> Vec<Step> {
    let mut run = Run::<R>::new();
    (1..=FRAMES)
        .map(|f| {
            let frame = run.frame(f);
            let m = &run.machine;
            let mut weights = [0.0; 2];
            for slot in 0..Probe::SLOTS {
                if let Some(c) = m.controller().clip_of(slot) {
                    weights[c] += m.controller().weight(slot).unwrap().to_f32();
                }
            }
            let t = m.transition();
            Step {
                state: m.current_state(),
                transition: t.map(|t| t.transition),
                progress: t.map_or(1.0, |t| t.progress.to_f32()),
                weights,
                root_z: m.root_motion_total().translation.z.to_f32(),
                joints: frame.model.iter().map(|x| x.translation().to_array().map(|v| v.to_f32())).collect(),
            }
        })
        .collect()
}

#[test]
fn the_graph_switches_to_stride_and_back_in_place() {
    for steps in [trace::<f32>(), trace::<Q16>()] {
        for (i, s) in steps.iter().enumerate() {
            let f = i + 1;
            let speed = speed::<f32>(f);
            // Frames 1-2 walk; the inertialized switch to stride (transition 0, 0.3 s) at
            // frame 3, when the speed passes 1.5; stop and the crossfade back to walk
            // (transition 1, 0.2 s) at STOP_FRAME.
            let (state, transition, progress) = match f {
                1 | 2 => (0, None, 1.0),
                3..=5 => (1, Some(0), (f - 3) as f32 / 3.0),
                6 | 7 => (1, None, 1.0),
                _ => (0, Some(1), (f - STOP_FRAME) as f32 / 2.0),
            };
            assert_eq!(s.state, state, "frame {f}");
            // The last frame of a transition may end it (elapsed reaching the duration).
            if !(f == FRAMES && s.transition.is_none()) {
                assert_eq!(s.transition, transition, "frame {f}");
                assert!((s.progress - progress).abs() < 1.0e-3, "frame {f}: progress {}", s.progress);
            }
            // Inertialization plays the destination alone: stride's weights from the speed
            // (walk at 1, run at 3); walk's crossfade from stride at speed 1 is all walk.
            let run = if (3..STOP_FRAME).contains(&f) { ((speed - 1.0) / 2.0).min(1.0) } else { 0.0 };
            let w = s.weights;
            assert!((w[1] - run).abs() < 1.0e-3 && (w[0] - (1.0 - run)).abs() < 1.0e-3, "frame {f}: {w:?}");
        }
        // Root motion moves the character forward (+Z) by 0.1 s of walking to 0.1 s of
        // running per frame, and keeps the hips over the origin.
        let mut prev = 0.0;
        for (i, s) in steps.iter().enumerate() {
            let step = s.root_z - prev;
            assert!(step > 0.05 && step < 0.45, "frame {}: step {step}", i + 1);
            prev = s.root_z;
            let [x, y, hz] = s.joints[1];
            assert!(x.abs() < 0.1 && hz.abs() < 0.25 && y > 0.7 && y < 1.1, "frame {}: hips {:?}", i + 1, s.joints[1]);
        }
        // No pop at the switch: the largest joint move from one frame to the next during
        // the inertialized transition stays within twice the largest of steady walking
        // (frames 1-2) or striding (frames 6-7).
        let moved = |f: usize| {
            let (a, b) = (&steps[f - 2].joints, &steps[f - 1].joints);
            a.iter()
                .zip(b)
                .map(|(p, q)| ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt())
                .fold(0.0f32, f32::max)
        };
        let steady = moved(2).max(moved(7));
        let switch = (3..=6).map(moved).fold(0.0f32, f32::max);
        std::println!("largest joint move per frame: steady {steady:.4} m, inertialized switch {switch:.4} m");
        assert!(switch <= 2.0 * steady, "switch {switch} vs steady {steady}");
    }
}

#[test]
fn bands_hash_the_full_frame_and_the_character_is_in_view() {
    let mut run = Run::<f32>::new();
    let (w, h) = (WIDTH as usize, HEIGHT as usize);
    let clear = Rgb565::pack(CLEAR);
    for f in 1..=FRAMES {
        run.frame(f);
        let pixels = draw(&run.scene, &run.mesh).unwrap();
        let full = full_frame(&run);
        for (b, rows) in full.chunks(w * BAND_ROWS as usize).enumerate() {
            let mut hash = Fnv1a::new();
            rows.iter().for_each(|&p| hash.word(u32::from(p)));
            assert_eq!(pixels.bands[b], hash.finish(), "frame {f} band {b}");
        }
        let covered: Vec<(usize, usize)> = (0..w * h).filter(|&i| full[i] != clear).map(|i| (i % w, i / w)).collect();
        assert_eq!(pixels.covered as usize, covered.len());
        // The character covers 4-15 % of the frame and stays clear of its border.
        assert!((250..1000).contains(&covered.len()), "frame {f}: {} pixels", covered.len());
        assert!(covered.iter().all(|&(x, y)| x > 0 && y > 0 && x < w - 1 && y < h - 1), "frame {f} touches the border");
    }
}

#[test]
fn the_retarget_stage_keeps_the_pose_and_scales_the_hips_path() {
    let (scene, _) = character::<f32>();
    let skeleton = scene.skeleton().unwrap();
    let n = skeleton.num_joints();
    let mut rest = [Mat4::IDENTITY; Probe::JOINTS];
    local_to_model(skeleton.view(), skeleton.rest_pose(), &mut rest).unwrap();
    // The stage runs on the rest pose and on a pose with the hips moved, with other hashes.
    let at_rest = retarget(skeleton.view(), skeleton.rest_pose()).unwrap();
    // A pose with the hips moved: the retargeted hips move 5/4 as far (what the stage does).
    let mut pose = [SoaTransform::IDENTITY; Probe::SOA];
    pose[..skeleton.num_soa_joints()].copy_from_slice(skeleton.rest_pose());
    let mut hips = pose[0].lane(RETARGET_HIPS);
    hips.translation += Vec3::new(0.2, 0.04, -0.1);
    pose[0].set_lane(RETARGET_HIPS, &hips);
    let mut world = [sinew::math::Quat::IDENTITY; Probe::JOINTS];
    let mut r = [sinew::math::Quat::IDENTITY; Probe::JOINTS];
    world_rotations(&rest[..n], &mut r).unwrap();
    let mut joints = [RetargetJoint::UNMAPPED; Probe::JOINTS];
    let map: Vec<u16> = (0..n as u16).collect();
    RetargetJoint::offsets(&map, &r[..n], &r[..n], &mut joints).unwrap();
    let root =
        RetargetRoot::new(RETARGET_HIPS, RETARGET_HIPS, skeleton.view(), &rest[..n], &rest[..n], Some(1.25)).unwrap();
    let mut source = [Mat4::IDENTITY; Probe::JOINTS];
    local_to_model(skeleton.view(), &pose, &mut source).unwrap();
    let mut out = [SoaTransform::IDENTITY; Probe::SOA];
    RetargetJob {
        target: skeleton.view(),
        joints: &joints,
        root: Some(root),
        source: &source[..n],
        world: &mut world,
        output: &mut out,
    }
    .run()
    .unwrap();
    let mut posed = [Mat4::IDENTITY; Probe::JOINTS];
    local_to_model(skeleton.view(), &out, &mut posed).unwrap();
    assert_ne!(retarget(skeleton.view(), &pose).unwrap(), at_rest);
    let moved = posed[RETARGET_HIPS].translation() - rest[RETARGET_HIPS].translation();
    let want = (source[RETARGET_HIPS].translation() - rest[RETARGET_HIPS].translation()) * 1.25;
    assert!((moved - want).max_abs() < 1e-5, "{moved:?} {want:?}");
    for k in 0..n {
        let (a, b) = (out[k / 4].lane(k % 4), pose[k / 4].lane(k % 4));
        assert!(a.rotation.angle_between(b.rotation) < 1e-3, "joint {k}");
    }
}

/// The fixture's left leg, by index: thigh, shin, foot, toe (the rig's joint order).
const LEFT_LEG: [usize; 4] = [14, 15, 16, 17];

/// The IK target of frame `f` relative to the thigh, written out here: 0.1 m to +X, 0.7 m down,
/// and Z from −0.75 m to +0.75 m over the frames.
fn target_offset(f: usize) -> Vec3<f32> {
    Vec3::new(0.1, -0.7, -0.75 + 1.5 * (f - 1) as f32 / (FRAMES - 1) as f32)
}

/// What [`ik_reaches`] measured over the frames of a run.
#[derive(Debug)]
struct IkFit {
    /// Frames whose target is within the leg's reach.
    reachable: Vec<usize>,
    /// Largest distance from the toe to a reachable target, in meters.
    miss: f32,
    /// Largest distance from the toe to the straightened leg's end, for a target out of reach.
    straight: f32,
    /// Largest change of a bone's length.
    bone: f32,
}

/// Runs the IK stage on every frame of a run in `R` and measures the corrected model
/// matrices against the targets written out in [`target_offset`]; checks the solve's report
/// against the reach and that no joint off the leg (nor the thigh's position) moves.
fn ik_reaches<R: Scalar>() -> IkFit {
    let mut run = Run::<R>::new();
    let view = run.skeleton.view();
    let names: Vec<&str> = LEFT_LEG.iter().map(|&j| view.name(j).unwrap()).collect();
    assert_eq!(names, IK_CHAIN);
    let joints = view.num_joints();
    let at = |m: &Mat4<R>| {
        let t = m.translation();
        Vec3::new(t.x.to_f32(), t.y.to_f32(), t.z.to_f32())
    };
    let mut fit = IkFit { reachable: Vec::new(), miss: 0.0, straight: 0.0, bone: 0.0 };
    for f in 1..=FRAMES {
        let frame = run.frame(f);
        let before: Vec<Vec3<f32>> = LEFT_LEG.iter().map(|&j| at(&frame.model[j])).collect();
        let bones: Vec<f32> = before.windows(2).map(|w| (w[1] - w[0]).length()).collect();
        let reach: f32 = bones.iter().sum();
        let hip = before[0];
        let target = hip + target_offset(f);
        let mut model = [Mat4::IDENTITY; Probe::JOINTS];
        let report = ik_pose(run.skeleton.view(), &frame.pose, f, &mut model).unwrap();
        assert!(report.iterations <= IK_ITERATIONS);
        for j in (0..joints).filter(|j| !LEFT_LEG.contains(j)) {
            assert_eq!(model[j], frame.model[j], "frame {f}: joint {j} moved");
        }
        let after: Vec<Vec3<f32>> = LEFT_LEG.iter().map(|&j| at(&model[j])).collect();
        assert_eq!(after[0], hip, "frame {f}: the thigh moved");
        for (k, w) in after.windows(2).enumerate() {
            fit.bone = fit.bone.max(((w[1] - w[0]).length() - bones[k]).abs());
        }
        let toe = after[3];
        if (target - hip).length() < reach {
            fit.reachable.push(f);
            fit.miss = fit.miss.max((toe - target).length());
            assert!(report.reached, "frame {f}: {report:?}");
        } else {
            // Out of reach: the leg points straight at the target.
            assert!(!report.reached, "frame {f}: {report:?}");
            let end = hip + (target - hip).normalize_or_zero() * reach;
            fit.straight = fit.straight.max((toe - end).length());
        }
    }
    fit
}

#[test]
fn the_ik_stage_reaches_reachable_targets() {
    // The solver stops once its effector is within ik_tolerance (1 mm) of the target; the model
    // matrices recomputed from the corrections add the rounding of the rotations. In Q16.16 a
    // vector's length is the square root of a sum of squares rounded to 2^-16, so the solver
    // sees a distance under 2^-8.5 m (2.76 mm) in each axis as 0: its stopping test and the
    // rounding of its rotations allow 5 mm.
    let all_but_the_ends: Vec<usize> = (2..FRAMES).collect();
    for (name, fit, tolerance) in
        [("f32", ik_reaches::<f32>(), 1.0e-3 + 1.0e-5), ("Q16.16", ik_reaches::<Q16>(), 5.0e-3)]
    {
        std::println!("IK, {name}: {fit:?}");
        assert_eq!(fit.reachable, all_but_the_ends, "{name}");
        assert!(fit.miss <= tolerance, "{name}: the toe {} m from a reachable target", fit.miss);
        assert!(fit.straight <= tolerance, "{name}: the toe {} m off the straightened leg", fit.straight);
        assert!(fit.bone <= tolerance / 10.0, "{name}: a bone's length changed by {}", fit.bone);
    }
}

#[test]
fn the_ik_hash_changes_with_the_target() {
    let (scene, _) = character::<f32>();
    let skeleton = scene.skeleton().unwrap();
    let view = skeleton.view();
    let pose = skeleton.rest_pose();
    let mut model = [Mat4::IDENTITY; Probe::JOINTS];
    local_to_model(view, pose, &mut model).unwrap();
    let mut h = Fnv1a::new();
    model[..view.num_joints()].iter().for_each(|m| h.mat4(m));
    let unsolved = h.finish();
    // One pose, each frame's target: every hash differs, and from the pose's own.
    let hashes: Vec<u32> = (1..=FRAMES).map(|f| ik(view, pose, f).unwrap()).collect();
    for (i, a) in hashes.iter().enumerate() {
        assert_ne!(*a, unsolved, "frame {}", i + 1);
        assert!(!hashes[i + 1..].contains(a), "frame {}: {hashes:x?}", i + 1);
    }
    // The hash is the corrected pose's model matrices.
    let mut solved = [Mat4::IDENTITY; Probe::JOINTS];
    ik_pose(view, pose, 4, &mut solved).unwrap();
    let mut h = Fnv1a::new();
    solved[..view.num_joints()].iter().for_each(|m| h.mat4(m));
    assert_eq!(h.finish(), hashes[3]);
    // A skeleton without the chain's joints is refused.
    let parents = [sinew::skeleton::NO_PARENT, 0];
    let rest = [sinew::math::Transform::IDENTITY; 2];
    let other = sinew::skeleton::Skeleton::<f32, 1>::new(&parents, &rest, &["a", "b"]).unwrap();
    assert_eq!(ik(other.view(), other.rest_pose(), 1), Err(ProbeError::Incomplete));
}

#[test]
fn frames_differ_and_a_fresh_run_repeats_the_report() {
    let mut sums = Vec::new();
    let mut reports = Vec::new();
    for _ in 0..2 {
        let (scene, mut machine) = character::<f32>();
        let skeleton = scene.skeleton().unwrap();
        let mut mesh = Box::new(MeshBuffers::ZERO);
        let mut text = String::new();
        let mut springs = SpringState::START;
        sums.push(report(&mut text, &scene, skeleton.view(), &mut machine, &mut mesh, &mut springs).unwrap());
        reports.push(text);
    }
    assert_eq!(sums[0], sums[1]);
    assert_eq!(reports[0], reports[1]);
    let lines: Vec<&str> = reports[0].lines().collect();
    assert_eq!(lines.len(), 3 + 2 * FRAMES);
    assert_eq!(lines[lines.len() - 1], std::format!("checksum 0x{:08x}", sums[0]));
    let frames: Vec<Vec<&str>> =
        lines.iter().filter(|l| l.starts_with("frame ")).map(|l| l.split(' ').collect::<Vec<_>>()).collect();
    // Fields 15, 17, 19, 21, 25, 27, 29: pose, root, skin, pixel, retarget, IK and spring
    // hashes; all change every frame.
    for (i, a) in frames.iter().enumerate() {
        assert_eq!(a.len(), 32, "{a:?}");
        assert_eq!(a[14], "pose");
        assert_eq!(a[24], "retarget");
        assert_eq!(a[26], "ik");
        assert_eq!(a[28], "spring");
        assert_eq!(a[30], "contacts");
        for b in &frames[i + 1..] {
            for k in [15, 17, 19, 21, 25, 27, 29] {
                assert_ne!(a[k], b[k], "{a:?} vs {b:?}");
            }
        }
    }
    // The run's contacts are the frames' contacts added up.
    let contacts: u32 = frames.iter().map(|a| a[31].parse::<u32>().unwrap()).sum();
    assert_eq!(lines[lines.len() - 2], std::format!("spring contacts {contacts}"));
}

/// Largest difference between the f32 and the Q16.16 runs over every frame: model matrix
/// elements, and skinned positions (distance, in meters).
fn q16_error() -> (f32, f32) {
    let mut f = Run::<f32>::new();
    let mut q = Run::<Q16>::new();
    let (mut model, mut position) = (0.0f32, 0.0f32);
    for frame in 1..=FRAMES {
        let (a, b) = (f.frame(frame), q.frame(frame));
        for (x, y) in a.model.iter().zip(&b.model) {
            for (u, v) in x.to_cols_array().iter().zip(y.to_cols_array()) {
                model = model.max((u - v.to_f32()).abs());
            }
        }
        for (x, y) in a.positions.iter().zip(&b.positions) {
            let y = Vec3::new(y.x.to_f32(), y.y.to_f32(), y.z.to_f32());
            position = position.max((*x - y).length());
        }
    }
    (model, position)
}

#[test]
fn q16_tracks_f32() {
    let (model, position) = q16_error();
    std::println!("Q16.16 vs f32 over {FRAMES} frames: model matrices {model:.2e}, skinned positions {position:.2e} m");
    // A Q16.16 step is 1.5e-5; the hierarchy is 7 joints deep and the arms reach 0.7 m.
    assert!(model > 0.0 && model < 1.0e-3, "model matrices off by {model}");
    assert!(position > 0.0 && position < 1.0e-3, "positions off by {position}");
}

/// The fixture's right arm, by index: upper arm, forearm, hand (the spring chain), and the
/// clavicle above it and the chest, which carries the collider.
const RIGHT_ARM: [usize; 3] = [11, 12, 13];
const R_CLAVICLE: usize = 10;
const CHEST: usize = 3;

/// The spring chain's settings, written out here: each joint's tail in its own space (the
/// rig's forearm and hand offsets, 0.28 m and 0.26 m along −X, and the hand's virtual tail,
/// 0.07 m along its own offset), hit radius, stiffness, gravity (down), drag, and the sphere
/// in the chest's space.
const TAILS: [[f64; 3]; 3] = [[-0.28, 0.0, 0.0], [-0.26, 0.0, 0.0], [-0.07, 0.0, 0.0]];
const HIT_RADIUS: f64 = 0.04;
const STIFFNESS: f64 = 1.0;
const GRAVITY: f64 = 6.0;
const DRAG: f64 = 0.4;
const SPHERE_OFFSET: [f64; 3] = [0.0, -0.25, 0.0];
const SPHERE_RADIUS: f64 = 0.3;
const STEP: f64 = 1.0 / 60.0;

type D3 = [f64; 3];
/// A quaternion `[x, y, z, w]` in f64.
type D4 = [f64; 4];

fn d_add(a: D3, b: D3) -> D3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
fn d_sub(a: D3, b: D3) -> D3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn d_scale(a: D3, s: f64) -> D3 {
    [a[0] * s, a[1] * s, a[2] * s]
}
fn d_dot(a: D3, b: D3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn d_cross(a: D3, b: D3) -> D3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
fn d_len(a: D3) -> f64 {
    d_dot(a, a).sqrt()
}
fn d_dir(a: D3) -> D3 {
    let l = d_len(a);
    if l > 0.0 {
        d_scale(a, 1.0 / l)
    } else {
        [0.0; 3]
    }
}
fn d3<R: Scalar>(v: Vec3<R>) -> D3 {
    [v.x, v.y, v.z].map(|c| f64::from(c.to_f32()))
}
fn d4<R: Scalar>(q: sinew::math::Quat<R>) -> D4 {
    [q.x, q.y, q.z, q.w].map(|c| f64::from(c.to_f32()))
}
fn q_mul(a: D4, b: D4) -> D4 {
    let (av, bv) = ([a[0], a[1], a[2]], [b[0], b[1], b[2]]);
    let v = d_add(d_add(d_scale(bv, a[3]), d_scale(av, b[3])), d_cross(av, bv));
    [v[0], v[1], v[2], a[3] * b[3] - d_dot(av, bv)]
}
/// three.js's `setFromUnitVectors(a, b)`: the shortest turn from `a` to `b`.
fn q_arc(a: D3, b: D3) -> D4 {
    let r = d_dot(a, b) + 1.0;
    let q = if r < 1e-8 {
        if a[0].abs() > a[2].abs() {
            [-a[1], a[0], 0.0, 0.0]
        } else {
            [0.0, -a[2], a[1], 0.0]
        }
    } else {
        let c = d_cross(a, b);
        [c[0], c[1], c[2], r]
    };
    let l = q.iter().map(|x| x * x).sum::<f64>().sqrt();
    q.map(|x| x / l)
}

/// An affine matrix in f64: the columns of its 3×3 part and its translation.
#[derive(Clone, Copy, Debug)]
struct Affine {
    c: [D3; 3],
    t: D3,
}

impl Affine {
    fn of<R: Scalar>(m: &Mat4<R>) -> Self {
        let col = |i: usize| [m.cols[i][0], m.cols[i][1], m.cols[i][2]].map(|v| f64::from(v.to_f32()));
        Affine { c: [col(0), col(1), col(2)], t: col(3) }
    }
    /// Translation `t`, rotation `q`, unit scale.
    fn tr(t: D3, q: D4) -> Self {
        let [x, y, z, w] = q;
        let c = [
            [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + z * w), 2.0 * (x * z - y * w)],
            [2.0 * (x * y - z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + x * w)],
            [2.0 * (x * z + y * w), 2.0 * (y * z - x * w), 1.0 - 2.0 * (x * x + y * y)],
        ];
        Affine { c, t }
    }
    fn vector(&self, v: D3) -> D3 {
        d_add(d_add(d_scale(self.c[0], v[0]), d_scale(self.c[1], v[1])), d_scale(self.c[2], v[2]))
    }
    fn point(&self, p: D3) -> D3 {
        d_add(self.vector(p), self.t)
    }
    fn mul(&self, o: &Affine) -> Affine {
        Affine { c: o.c.map(|c| self.vector(c)), t: self.point(o.t) }
    }
    /// The 3×3 part's inverse applied to `v` (Cramer's rule).
    fn solve(&self, v: D3) -> D3 {
        let [a, b, c] = self.c;
        let det = d_dot(a, d_cross(b, c));
        [d_dot(v, d_cross(b, c)) / det, d_dot(a, d_cross(v, c)) / det, d_dot(a, d_cross(b, v)) / det]
    }
}

/// The spring chain stepped in f64 from the spec's steps (`core/docs/spring-bones.md`) for
/// this chain: three joints in a line, world = model space, no center, one sphere.
struct SpringReference {
    /// The joints' rest rotations.
    rest: [D4; 3],
    /// The joints' local rotations as the last step left them.
    rotation: [D4; 3],
    current: [D3; 3],
    prev: [D3; 3],
}

/// One frame's inputs to the reference: the clavicle's and the chest's model matrices and the
/// chain's animated local translations.
struct SpringInputs {
    clavicle: Affine,
    chest: Affine,
    translations: [D3; 3],
}

impl SpringReference {
    /// Reset: rest rotations, tails at `W_j × tail`.
    fn reset(rest: [D4; 3], at: &SpringInputs) -> Self {
        let mut s = SpringReference { rest, rotation: rest, current: [[0.0; 3]; 3], prev: [[0.0; 3]; 3] };
        let w = s.chain(at);
        for k in 0..3 {
            s.current[k] = w[k].point(TAILS[k]);
            s.prev[k] = s.current[k];
        }
        s
    }

    /// The chain's matrices with its current rotations.
    fn chain(&self, at: &SpringInputs) -> [Affine; 3] {
        let mut parent = at.clavicle;
        let mut w = [parent; 3];
        for ((m, &t), &q) in w.iter_mut().zip(&at.translations).zip(&self.rotation) {
            *m = parent.mul(&Affine::tr(t, q));
            parent = *m;
        }
        w
    }

    /// One step of `STEP` seconds; returns the chain's matrices after it and the contacts.
    fn step(&mut self, at: &SpringInputs) -> ([Affine; 3], u32) {
        let entry = self.chain(at);
        let sphere = at.chest.point(SPHERE_OFFSET);
        let mut contacts = 0;
        let mut parent = at.clavicle;
        let mut out = entry;
        for k in 0..3 {
            let joint = parent.mul(&Affine::tr(at.translations[k], self.rotation[k]));
            let pos = joint.t;
            // A child that is a spring joint is read where it was on entry.
            let end = if k < 2 { entry[k + 1].t } else { joint.point(TAILS[k]) };
            let bone = d_len(d_sub(pos, end));
            let rest_local = Affine::tr(at.translations[k], self.rest[k]);
            let axis = d_dir(parent.vector(d_dir(rest_local.vector(d_dir(TAILS[k])))));
            let (cur, prev) = (self.current[k], self.prev[k]);
            let inertia = d_add(cur, d_scale(d_sub(cur, prev), 1.0 - DRAG));
            let mut next = d_add(d_add(inertia, d_scale(axis, STIFFNESS * STEP)), [0.0, -GRAVITY * STEP, 0.0]);
            next = d_add(pos, d_scale(d_dir(d_sub(next, pos)), bone));
            let d = d_len(d_sub(next, sphere)) - HIT_RADIUS - SPHERE_RADIUS;
            if d < 0.0 {
                contacts += 1;
                next = d_add(next, d_scale(d_dir(d_sub(next, sphere)), -d));
                next = d_add(pos, d_scale(d_dir(d_sub(next, pos)), bone));
            }
            self.prev[k] = cur;
            self.current[k] = next;
            let a = parent.mul(&rest_local);
            let to = d_dir(rest_local.solve(parent.solve(d_sub(next, a.t))));
            self.rotation[k] = q_mul(self.rest[k], q_arc(d_dir(TAILS[k]), to));
            out[k] = parent.mul(&Affine::tr(at.translations[k], self.rotation[k]));
            parent = out[k];
        }
        (out, contacts)
    }
}

/// What [`spring_against_reference`] measured over the frames of a run.
#[derive(Debug)]
struct SpringFit {
    /// Contacts of each frame's step, the stage's and the reference's.
    contacts: Vec<(u32, u32)>,
    /// Largest distance between the stage's and the reference's joint positions (the forearm,
    /// the hand and the hand's tail), in meters.
    distance: f64,
    /// Largest change of a bone's length (upper arm, forearm) against the rig's.
    bone: f64,
    /// Height of the hand's tail below the upper arm on the last frame, in meters.
    drop: f64,
    /// Smallest distance of a chain joint below the upper arm (forearm, hand, hand's tail) from
    /// the sphere's centre, in meters, over the frames with contacts.
    closest: f64,
}

/// Runs the spring stage on every frame of a run in `R` alongside [`SpringReference`], fed the
/// same animated clavicle, chest and local translations; checks that no joint outside the chain
/// moves and nothing is skipped.
fn spring_against_reference<R: Scalar>() -> SpringFit {
    let mut run = Run::<R>::new();
    let skeleton = run.scene.skeleton().unwrap();
    let view = skeleton.view();
    let names: Vec<&str> = RIGHT_ARM.iter().map(|&j| view.name(j).unwrap()).collect();
    assert_eq!(names, SPRING_CHAIN);
    assert_eq!(view.name(CHEST), Some(SPRING_COLLIDER));
    assert_eq!(view.parent(RIGHT_ARM[0]), Some(R_CLAVICLE));
    let rest = RIGHT_ARM.map(|j| d4(view.rest_transform(j).unwrap().rotation));
    let mut state = SpringState::START;
    let mut reference: Option<SpringReference> = None;
    let mut fit = SpringFit { contacts: Vec::new(), distance: 0.0, bone: 0.0, drop: 0.0, closest: f64::INFINITY };
    for f in 1..=FRAMES {
        let frame = run.frame(f);
        let translations = RIGHT_ARM.map(|j| {
            let local = frame.pose[j / 4].lane(j % 4);
            assert!((local.scale - Vec3::ONE).max_abs().to_f32() < 1e-4, "frame {f}: joint {j} is scaled");
            d3(local.translation)
        });
        let inputs = SpringInputs {
            clavicle: Affine::of(&frame.model[R_CLAVICLE]),
            chest: Affine::of(&frame.model[CHEST]),
            translations,
        };
        let r = reference.get_or_insert_with(|| SpringReference::reset(rest, &inputs));
        let (want, want_contacts) = r.step(&inputs);
        let mut model = [Mat4::IDENTITY; Probe::JOINTS];
        let (swung, _, report) = spring_pose(view, &frame.pose, &mut state, f, &mut model).unwrap();
        assert_eq!(report.skipped, 0, "frame {f}");
        // The model matrices on return are the swung pose's.
        let mut again = [Mat4::IDENTITY; Probe::JOINTS];
        local_to_model(view, &swung, &mut again).unwrap();
        assert_eq!(again, model, "frame {f}");
        fit.contacts.push((report.contacts, want_contacts));
        for j in (0..view.num_joints()).filter(|j| !RIGHT_ARM.contains(j)) {
            assert_eq!(model[j], frame.model[j], "frame {f}: joint {j} moved");
        }
        let got = RIGHT_ARM.map(|j| Affine::of(&model[j]));
        let points = |w: &[Affine; 3]| [w[1].t, w[2].t, w[2].point(TAILS[2])];
        for (p, q) in points(&got).iter().zip(points(&want)) {
            fit.distance = fit.distance.max(d_len(d_sub(*p, q)));
        }
        for k in 0..2 {
            fit.bone = fit.bone.max((d_len(d_sub(got[k + 1].t, got[k].t)) - d_len(TAILS[k])).abs());
        }
        if report.contacts > 0 {
            let sphere = inputs.chest.point(SPHERE_OFFSET);
            for p in points(&got) {
                fit.closest = fit.closest.min(d_len(d_sub(p, sphere)));
            }
        }
        fit.drop = got[0].t[1] - got[2].point(TAILS[2])[1];
    }
    fit
}

#[test]
fn the_spring_chain_falls_onto_the_sphere_as_the_reference_does() {
    // A Q16.16 step is 1.5e-5 m; ten steps of a three-joint chain stay within 5e-4 m.
    for (name, fit, tolerance) in
        [("f32", spring_against_reference::<f32>(), 1.0e-6), ("Q16.16", spring_against_reference::<Q16>(), 5.0e-4)]
    {
        std::println!("springs, {name}: {fit:?}");
        // Each frame's contacts are the reference's. The arm starts straight out to the side,
        // far from the sphere, and rests against it from the third frame on.
        let (got, want): (Vec<u32>, Vec<u32>) = fit.contacts.iter().copied().unzip();
        assert_eq!(got, want, "{name}: contacts per frame");
        assert_eq!(got[..2], [0, 0], "{name}: {got:?}");
        assert!(got[2..].iter().all(|&c| c > 0), "{name}: {got:?}");
        assert!(fit.distance <= tolerance, "{name}: {} m from the reference", fit.distance);
        assert!(fit.bone <= tolerance, "{name}: a bone's length changed by {}", fit.bone);
        // The arm hangs (its tip level with the shoulder at rest), and the sphere holds it: a
        // tail pushed out goes back onto its bone's sphere, which may leave it a little inside
        // (the method's), but not the 13 cm or so an arm hanging straight down would be.
        assert!(fit.drop > 0.5, "{name}: the tip only {} m below the shoulder", fit.drop);
        let surface = SPHERE_RADIUS + HIT_RADIUS;
        assert!(fit.closest > surface - 0.01, "{name}: a joint {} m inside the sphere", surface - fit.closest);
    }
}

/// The spring stage on a copy of `pose` and its model matrices (in `model`): the swung copy,
/// the stage's hash and its report.
fn spring_pose<R: Scalar>(
    view: SkeletonView<'_, R>,
    pose: &[SoaTransform<R>; Probe::SOA],
    state: &mut SpringState<R>,
    frame: usize,
    model: &mut [Mat4<R>; Probe::JOINTS],
) -> Result<([SoaTransform<R>; Probe::SOA], u32, SpringReport), ProbeError> {
    let mut copy = *pose;
    local_to_model(view, &copy, model)?;
    let (hash, report) = spring(view, &mut copy, model, state, frame)?;
    Ok((copy, hash, report))
}

#[test]
fn the_spring_hash_is_the_chain_s_matrices_and_frame_one_resets() {
    let mut run = Run::<f32>::new();
    let skeleton = run.scene.skeleton().unwrap();
    let view = skeleton.view();
    let frames: Vec<Frame<f32>> = (1..=3).map(|f| run.frame(f)).collect();
    let mut model = [Mat4::IDENTITY; Probe::JOINTS];
    // Frame 1 resets whatever tails it is given.
    let stale = SpringTail { current: Vec3::new(1.0, 2.0, 3.0), prev: Vec3::ONE, rotation: Quat::IDENTITY };
    let mut fresh = SpringState::START;
    let mut reused = SpringState { tails: [stale; SPRING_JOINTS] };
    let a = spring_pose(view, &frames[0].pose, &mut fresh, 1, &mut model).unwrap();
    let b = spring_pose(view, &frames[0].pose, &mut reused, 1, &mut model).unwrap();
    assert_eq!((a.1, a.2), (b.1, b.2));
    assert_eq!(fresh, reused);
    // Later frames step from the tails: the same pose gives another result from other tails.
    let (mut x, mut y) = (fresh, SpringState { tails: [stale; SPRING_JOINTS] });
    let a = spring_pose(view, &frames[1].pose, &mut x, 2, &mut model).unwrap();
    let b = spring_pose(view, &frames[1].pose, &mut y, 2, &mut model).unwrap();
    assert_ne!(a.1, b.1);
    // The hash is FNV-1a over the chain's model matrices after the step, in chain order.
    let (_, hash, _) = spring_pose(view, &frames[1].pose, &mut fresh, 2, &mut model).unwrap();
    let mut h = Fnv1a::new();
    RIGHT_ARM.iter().for_each(|&j| h.mat4(&model[j]));
    assert_eq!(hash, h.finish());
    // Tails that are not finite are refused, and so is a skeleton without the chain's joints.
    let mut broken = SpringState { tails: [SpringTail { current: Vec3::splat(f32::NAN), ..stale }; SPRING_JOINTS] };
    let err = spring_pose(view, &frames[2].pose, &mut broken, 3, &mut model).map(|_| ());
    assert_eq!(err, Err(ProbeError::Job(JobError::InvalidTransform)));
    let parents = [sinew::skeleton::NO_PARENT, 0];
    let rest = [sinew::math::Transform::IDENTITY; 2];
    let other = sinew::skeleton::Skeleton::<f32, 1>::new(&parents, &rest, &["a", "b"]).unwrap();
    let mut pose = [SoaTransform::IDENTITY; 1];
    pose.copy_from_slice(other.rest_pose());
    let mut state = SpringState::START;
    let err = spring(other.view(), &mut pose, &mut model, &mut state, 1);
    assert_eq!(err, Err(ProbeError::Incomplete));
}
