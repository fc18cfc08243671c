//! The demo's GL side in-process, on Mesa (or whatever `DISPLAY` offers): the GLSL ES 1.00
//! skinning shaders compile (with the budget's palette and with a forced small one), the
//! palette the shaders receive equals the CPU palette, and the built-in scene renders
//! deterministically and without GL errors.
//!
//! SDL may only be initialized from one thread per process, so every check runs in the one
//! test function below, in sequence.

mod common;

use sinew::clip::RotationInterpolation;
use sinew::math::{Mat4, SoaTransform, Vec3};
use std::path::{Path, PathBuf};

use sinew_frontend::demo::gl::{check_skin_shaders, dq_rigid_rows, dq_rows, lbs_rows, mat_from_rows, PartMode};
use sinew_frontend::demo::shaders::{palette_capacity, rigid_palette_capacity, SkinShader};
use sinew_frontend::demo::viewer::rig_is_rigid;
use sinew_frontend::demo::{GlRequest, Headless, Layers};
use sinew_frontend::scene::{self, CHARACTER, TENTACLE, TWIST};
use sinew_offline::model::{Model, Skinning};

/// The character's local pose at `t`, sampled independently of the scene code: walk clip at
/// `t` (the palette comparison needs any valid pose).
fn walk_pose(m: &Model, t: f32) -> Vec<SoaTransform<f32>> {
    let clip = m.find_clip("walk").unwrap();
    let mut pose = Vec::new();
    m.sample(Some(clip), t, RotationInterpolation::NlerpCorrected, &mut Vec::new(), &mut pose).unwrap();
    pose
}

/// ozz's Pab: 67 joints in one skin, 4 influences per vertex, one clip.
fn pab() -> PathBuf {
    sinew_assets::path("ozz/pab_crossarms.glb")
}

/// Pab with its scene's nodes under one new root node of uniform scale `s` (an armature scale
/// its inverse bind matrices lack: every skin matrix scales).
fn scaled_pab(s: f32) -> PathBuf {
    let bytes = std::fs::read(pab()).expect("pab_crossarms.glb");
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes")) as usize;
    let json_len = u32_at(12);
    let json = std::str::from_utf8(&bytes[20..20 + json_len]).expect("UTF-8 JSON");
    let bin_at = 20 + json_len;
    let bin = &bytes[bin_at + 8..bin_at + 8 + u32_at(bin_at)];
    let mut v: serde_json::Value = serde_json::from_str(json).expect("JSON");
    let scene = v["scene"].as_u64().unwrap_or(0) as usize;
    let roots = v["scenes"][scene]["nodes"].clone();
    let nodes = v["nodes"].as_array_mut().expect("nodes");
    nodes.push(serde_json::json!({"name": "armature scale", "scale": [s, s, s], "children": roots}));
    let root = nodes.len() - 1;
    v["scenes"][scene]["nodes"] = serde_json::json!([root]);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sinew-demo-gl");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(format!("pab-scaled-{s}.glb"));
    std::fs::write(&path, sinew_tests::corpus::gltf::glb_from(&v.to_string(), bin)).expect("write");
    path
}

/// Pixels whose color differs by more than 2 levels in a channel, and the largest difference.
fn pixel_diff(a: &[u8], b: &[u8]) -> (usize, u8) {
    let (mut differ, mut worst) = (0, 0u8);
    for (x, y) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        let d = (0..3).map(|k| x[k].abs_diff(y[k])).max().unwrap_or(0);
        if d > 2 {
            differ += 1;
        }
        worst = worst.max(d);
    }
    (differ, worst)
}

/// Loads `model` into a viewer on a context capped at `budget` vertex uniform vectors and
/// renders it under DQS at `times`: per time the image on the GPU, the draw stats, and the
/// image the CPU's `SkinningJob` gives through the same pipeline. Also returns whether the
/// loaded rig counts as rigid and the joints of each GPU part.
#[allow(clippy::type_complexity)]
fn render_model(
    model: &Path,
    budget: Option<usize>,
    times: &[f32],
) -> (Vec<(Vec<u8>, sinew_frontend::demo::gl::DrawStats, Vec<u8>)>, bool, Vec<usize>) {
    let mut h = Headless::with_budget(320, 240, None, budget, GlRequest::Auto).unwrap();
    h.load(model).unwrap();
    h.scene().params.skinning = Skinning::Dqs;
    let rigid = rig_is_rigid(&h.viewer().unwrap().model);
    let parts: Vec<usize> = {
        let v = h.viewer().unwrap();
        v.model.asset().mesh(0).unwrap().parts().map(|p| p.palette_len()).collect()
    };
    let modes = h.viewer_gpu().unwrap().modes();
    assert!(modes.iter().flatten().all(|m| *m == PartMode::Gpu), "{modes:?}");
    let mut out = Vec::new();
    for &t in times {
        h.viewer().unwrap().seek_primary(t);
        let gpu = h.render_scene(0.0, Layers::MESHES).unwrap();
        let stats = h.renderer().stats;
        h.renderer().cpu_skinning = true;
        let cpu = h.render_scene(0.0, Layers::MESHES).unwrap();
        h.renderer().cpu_skinning = false;
        out.push((gpu, stats, cpu));
    }
    (out, rigid, parts)
}

fn max_abs_diff(a: &Mat4<f32>, b: &Mat4<f32>) -> f32 {
    a.to_cols_array().iter().zip(b.to_cols_array()).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// Uploads each GPU part's palette rows through the renderer, reads the uniforms back from
/// the program, and compares them with `Model::palette` / `Model::dq_palette` computed here.
/// Returns (parts checked, largest difference).
fn check_palettes(h: &mut Headless, model_index: usize, pose: &[SoaTransform<f32>]) -> (usize, f32) {
    let model = &h.scene().models()[model_index];
    let mut world = Vec::new();
    model.world(pose, &mut world).unwrap();
    let cpu = model.palette(&world, 0).unwrap();
    let cpu_dq = model.dq_palette(&world, 0).unwrap();
    let maps: Vec<Vec<u16>> =
        model.asset().mesh(0).unwrap().parts().map(|p| (0..p.palette_len()).map(|i| p.palette(i)).collect()).collect();
    let modes = h.scene_gpu()[model_index].modes();
    assert!(modes[0].iter().all(|m| *m == PartMode::Gpu), "{modes:?}");
    let mut worst = 0.0f32;
    for map in &maps {
        let r = h.renderer();
        // Linear blend: 3 rows per joint.
        r.upload_palette(Skinning::Lbs, &lbs_rows(&cpu, map));
        let back = r.read_palette(Skinning::Lbs, map.len() * 3);
        for (i, &j) in map.iter().enumerate() {
            let m = mat_from_rows(&[back[3 * i], back[3 * i + 1], back[3 * i + 2]]);
            worst = worst.max(max_abs_diff(&m, &cpu[j as usize]));
        }
        // Dual quaternions and scale factors: 4 rows per joint.
        r.upload_palette(Skinning::Dqs, &dq_rows(&cpu_dq, map));
        let back = r.read_palette(Skinning::Dqs, map.len() * 4);
        for (i, &j) in map.iter().enumerate() {
            let (d, s) = (cpu_dq.dual_quats[j as usize], cpu_dq.scales[j as usize]);
            let want = [d.real.to_array(), d.dual.to_array(), [s.xx, s.yy, s.zz, s.xy], [s.xz, s.yz, 0.0, 0.0]];
            for k in 0..4 {
                for c in 0..4 {
                    worst = worst.max((back[4 * i + k][c] - want[k][c]).abs());
                }
            }
        }
        assert!(r.errors().is_empty());
    }
    (maps.len(), worst)
}

#[test]
fn gl_shaders_palettes_and_scene_rendering() {
    let display = common::Display::get();
    // Only this thread uses SDL; it reads DISPLAY when it initializes.
    std::env::set_var("DISPLAY", &display.name);
    let started = std::time::Instant::now();

    // 1. Default palette from the uniform budget.
    let mut h = Headless::new(320, 240, None, GlRequest::Auto).unwrap();
    let info = h.renderer().info.clone();
    let n = h.renderer().palette_size;
    eprintln!(
        "context: {} (es: {}), renderer {}, {} vertex uniform vectors, palette {n}",
        info.version, info.es, info.renderer, info.max_vertex_uniform_vectors
    );
    assert_eq!(n, palette_capacity(info.max_vertex_uniform_vectors));
    // Both skinning shaders compile at the budget's palette and at small ones.
    for joints in [n, 64, 8, 4] {
        check_skin_shaders(h.renderer().gl(), joints).unwrap_or_else(|e| panic!("palette {joints}: {e}"));
    }

    // 2. The palette in the shader equals the CPU palette, for the character at several times
    //    and for the tentacle and candy wrapper.
    for t in [0.0, 0.37, 0.81] {
        let pose = walk_pose(&h.scene().models()[CHARACTER], t);
        let (parts, worst) = check_palettes(&mut h, CHARACTER, &pose);
        assert_eq!(parts, 1);
        assert!(worst < 1e-6, "t {t}: largest palette difference {worst}");
    }
    let tp = scene::tentacle_pose(&h.scene().models()[TENTACLE], 1.3, 0.5, 0.6);
    assert!(check_palettes(&mut h, TENTACLE, &tp).1 < 1e-6);
    let wp = scene::twist_pose(&h.scene().models()[TWIST], 2.5);
    assert!(check_palettes(&mut h, TWIST, &wp).1 < 1e-6);

    // 3. The scene renders the same pixels for the same time, different ones for another time,
    //    covers a good part of the image, and leaves no GL error (checked inside).
    let a = h.render_scene(3.0, Layers::MESHES).unwrap();
    let b = h.render_scene(3.0, Layers::MESHES).unwrap();
    let c = h.render_scene(3.5, Layers::MESHES).unwrap();
    assert_eq!(a.len(), 320 * 240 * 4);
    assert!(a == b, "same time, different images");
    assert!(a != c, "different times, same image");
    let (cover, colors) = common::coverage(&a);
    assert!(cover > 0.015 && colors > 50, "coverage {cover:.3}, {colors} colors");
    // Skinning in the shaders gives the image that `SkinningJob` on the CPU gives (streamed
    // through the same GL pipeline), within rounding, for both methods.
    let pixels = 320 * 240;
    for s in [Skinning::Lbs, Skinning::Dqs] {
        h.scene().params.skinning = s;
        for t in [1.0, 9.3, 16.4] {
            let gpu = h.render_scene(t, Layers::MESHES).unwrap();
            // The tentacle, the character, the two candy wrappers and the terrain.
            assert_eq!((h.renderer().stats.gpu_parts, h.renderer().stats.cpu_parts), (5, 0));
            h.renderer().cpu_skinning = true;
            let cpu = h.render_scene(t, Layers::MESHES).unwrap();
            assert_eq!((h.renderer().stats.gpu_parts, h.renderer().stats.cpu_parts), (0, 5));
            h.renderer().cpu_skinning = false;
            let (mut differ, mut worst) = (0, 0u8);
            for (g, c) in gpu.chunks_exact(4).zip(cpu.chunks_exact(4)) {
                let d = (0..3).map(|k| g[k].abs_diff(c[k])).max().unwrap_or(0);
                if d > 2 {
                    differ += 1;
                }
                worst = worst.max(d);
            }
            eprintln!(
                "{s:?} t {t}: {differ} pixels differ by more than 2 levels, GPU vs CPU skinning (largest {worst})"
            );
            assert!(differ * 500 < pixels, "{s:?} t {t}: {differ} pixels differ");
        }
    }
    // The candy wrappers under a non-uniform root scale their bind pose lacks (skin matrices
    // with scale and shear): the DQS shader with scale draws what `SkinningJob` with
    // `Palette::ScaledDualQuats` gives, and the DQS wrapper keeps the LBS wrapper's size.
    h.scene().params.twist_scale = Vec3::new(1.4, 0.6, 1.2);
    for t in [0.0, 1.3, 2.5] {
        let gpu = h.render_scene(t, Layers::MESHES).unwrap();
        h.renderer().cpu_skinning = true;
        let cpu = h.render_scene(t, Layers::MESHES).unwrap();
        h.renderer().cpu_skinning = false;
        let differ = gpu
            .chunks_exact(4)
            .zip(cpu.chunks_exact(4))
            .filter(|(g, c)| (0..3).any(|k| g[k].abs_diff(c[k]) > 2))
            .count();
        eprintln!("scaled wrappers t {t}: {differ} pixels differ by more than 2 levels, GPU vs CPU skinning");
        assert!(differ * 500 < pixels, "scaled wrappers t {t}: {differ} pixels differ");
        let unscaled = {
            h.scene().params.twist_scale = Vec3::ONE;
            let img = h.render_scene(t, Layers::MESHES).unwrap();
            h.scene().params.twist_scale = Vec3::new(1.4, 0.6, 1.2);
            img
        };
        let changed = gpu.chunks_exact(4).zip(unscaled.chunks_exact(4)).filter(|(a, b)| a != b).count();
        assert!(changed * 100 > pixels / 100, "t {t}: the scale changes {changed} pixels");
    }
    h.scene().params.twist_scale = Vec3::ONE;
    for s in [Skinning::Lbs, Skinning::Dqs] {
        h.scene().params.skinning = s;
        h.scene().params.show_bones = true;
        for i in 0..30 {
            h.render_scene(i as f32 * 0.7, Layers::ALL).unwrap();
        }
    }
    drop(h);

    // 4. A forced small palette: the character is split into parts of at most 6 joints, all
    //    skinned on the GPU, with the same palettes.
    let mut h = Headless::new(320, 240, Some(6), GlRequest::Auto).unwrap();
    assert_eq!(h.renderer().palette_size, 6);
    let pose = walk_pose(&h.scene().models()[CHARACTER], 0.5);
    let (parts, worst) = check_palettes(&mut h, CHARACTER, &pose);
    assert!(parts > 3, "{parts} parts");
    assert!(worst < 1e-6, "largest palette difference {worst}");
    // Same silhouette as with one part (the split duplicates vertices, nothing moves).
    let small = h.render_scene(3.0, Layers::MESHES).unwrap();
    let differ = small.chunks_exact(4).zip(a.chunks_exact(4)).filter(|(x, y)| x != y).count();
    assert!(differ < 320 * 240 / 500, "{differ} pixels differ between the split and unsplit scene");
    drop(h);

    // 5. The ES 2.0 minimum of 128 vertex uniform vectors: DQS with scale holds 28 joints,
    //    LBS and rigid DQS 37, and the check of section 1 compiles each at its size.
    let mut h = Headless::with_budget(320, 240, None, Some(128), GlRequest::Auto).unwrap();
    assert_eq!((h.renderer().palette_size, h.renderer().rigid_palette_size), (28, 37));
    assert_eq!((palette_capacity(128), rigid_palette_capacity(128)), (28, 37));
    assert_eq!(h.renderer().program_joints(SkinShader::Lbs), 37);
    assert_eq!(h.renderer().program_joints(SkinShader::Dqs), 28);
    assert_eq!(h.renderer().program_joints(SkinShader::DqsRigid), 37);
    // The rigid program's palette reads back as uploaded: two rows per joint.
    let pose = walk_pose(&h.scene().models()[CHARACTER], 0.4);
    let model = &h.scene().models()[CHARACTER];
    let mut world = Vec::new();
    model.world(&pose, &mut world).unwrap();
    let dq = model.dq_palette(&world, 0).unwrap();
    let map: Vec<u16> = (0..dq.dual_quats.len() as u16).collect();
    h.renderer().upload_palette(SkinShader::DqsRigid, &dq_rigid_rows(&dq, &map));
    let back = h.renderer().read_palette(SkinShader::DqsRigid, map.len() * 2);
    for (i, d) in dq.dual_quats.iter().enumerate() {
        assert_eq!([back[2 * i], back[2 * i + 1]], [d.real.to_array(), d.dual.to_array()]);
    }
    assert!(h.renderer().errors().is_empty());
    drop(h);

    // 6. A rigid rig of 67 joints at 128 vectors: split into parts of up to 37 joints, each
    //    skinned under DQS by the rigid program in one draw, with the pixels of the CPU's
    //    skinning and of the uncapped context.
    let times = [0.0, 2.1, 5.3];
    let (capped, rigid, parts) = render_model(&pab(), Some(128), &times);
    eprintln!("pab at 128 vectors: parts of {parts:?} joints");
    assert!(rigid, "pab's rig has no scale");
    assert!(parts.iter().all(|&n| n <= 37) && parts.iter().any(|&n| n > 28), "{parts:?}");
    let (uncapped, _, _) = render_model(&pab(), None, &times);
    let pixels = 320 * 240;
    for ((t, (gpu, stats, cpu)), (full, _, _)) in times.iter().zip(&capped).zip(&uncapped) {
        assert_eq!((stats.gpu_parts, stats.cpu_parts, stats.dqs_rigid_parts), (parts.len(), 0, parts.len()));
        assert_eq!(stats.largest_palette, *parts.iter().max().unwrap());
        let (cover, _) = common::coverage(gpu);
        let (d_cpu, w_cpu) = pixel_diff(gpu, cpu);
        let (d_full, w_full) = pixel_diff(gpu, full);
        eprintln!(
            "pab t {t}: coverage {cover:.3}; vs CPU skinning {d_cpu} pixels differ by more than 2 levels (largest \
             {w_cpu}); vs the uncapped context {d_full} (largest {w_full})"
        );
        assert!(cover > 0.01, "t {t}: coverage {cover}");
        assert!(d_cpu * 500 < pixels && d_full * 500 < pixels, "t {t}: {d_cpu}, {d_full} pixels differ");
    }

    // 7. The same rig under an armature scale: it scales, so its parts hold at most 28 joints
    //    and DQS draws them with the four-row program, matching the CPU's skinning.
    let (scaled, rigid, parts) = render_model(&scaled_pab(1.5), Some(128), &times);
    eprintln!("pab under scale 1.5 at 128 vectors: parts of {parts:?} joints");
    assert!(!rigid, "the armature scale reaches the skin matrices");
    assert!(parts.iter().all(|&n| n <= 28), "{parts:?}");
    for (t, (gpu, stats, cpu)) in times.iter().zip(&scaled) {
        assert_eq!((stats.gpu_parts, stats.cpu_parts, stats.dqs_rigid_parts), (parts.len(), 0, 0));
        let (cover, _) = common::coverage(gpu);
        let (differ, worst) = pixel_diff(gpu, cpu);
        eprintln!("scaled pab t {t}: coverage {cover:.3}; vs CPU skinning {differ} pixels differ (largest {worst})");
        assert!(cover > 0.01 && differ * 500 < pixels, "t {t}: coverage {cover}, {differ} pixels differ");
    }
    eprintln!("GL checks took {:.2} s", started.elapsed().as_secs_f64());
}
