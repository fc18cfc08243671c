//! The code paths the fuzz targets drive, shared with `tests/tests/fuzz_regressions.rs` (which
//! includes this file by path) so a regression input runs exactly what the fuzzer ran.
//!
//! Every function takes untrusted bytes and must return normally: a typed error from sinew is
//! fine, a panic (including a failed assertion below) is a finding. The assertions check what
//! sinew documents: a `.sinew` file that [`Asset::parse`] accepted reads without errors, jobs fed
//! buffers of the documented sizes run, and the baker's output parses.

use sinew::asset::format::{CRC_START, HEADER_LEN};
use sinew::asset::{crc32, Asset, PartBuffers};
use sinew::clip::{Clip, RotationInterpolation, SoaTrackCache, TrackCache};
use sinew::job::sampling::TrackState;
use sinew::job::spring::{SpringBoneJob, SpringBones, SpringCollider, SpringJoint, SpringTail};
use sinew::job::{
    JobError, LocalToModelJob, MorphJob, MorphWeightsJob, Palette, SamplingJob, SkinDualQuatJob, SkinMatrixJob,
};
use sinew::limits::{MAX_INFLUENCES, MAX_SOA_JOINTS};
use sinew::math::{DualQuat, Mat4, SoaTransform, Vec3, Vec4};
use sinew::skeleton::Skeleton;
use sinew::{Real, Q16};
use sinew_offline::bake::{bake, BakeOptions};
use sinew_offline::import::{bvh, fbx, gltf, md5};
use sinew_offline::rig::Rig;

/// Fuzz target `asset_parse`: the bytes as given, then the same bytes with the header's length
/// and checksum made to match (so mutations get past the CRC and reach the section checks).
pub fn asset_bytes(data: &[u8]) {
    exercise_asset(data, &sample_times(data));
    if data.len() >= HEADER_LEN {
        let mut fixed = data.to_vec();
        let len = u32::try_from(fixed.len()).unwrap_or(u32::MAX);
        fixed[12..16].copy_from_slice(&len.to_le_bytes());
        let crc = crc32(&fixed[CRC_START..]);
        fixed[16..20].copy_from_slice(&crc.to_le_bytes());
        exercise_asset(&fixed, &sample_times(data));
    }
}

/// Which md5 file the first part of an md5 fuzz input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Md5First {
    /// `.md5mesh` first (fuzz target `md5mesh`).
    Mesh,
    /// `.md5anim` first (fuzz target `md5anim`).
    Anim,
}

/// Fuzz targets `md5mesh` and `md5anim`: the input (lossy UTF-8) is split at its first NUL into
/// the named file and, optionally, the other one. Each part is parsed; when both parse they are
/// loaded together with [`md5::load`], baked, and the baked file is run through
/// [`exercise_asset`].
pub fn md5_bytes(data: &[u8], first: Md5First) {
    let text = String::from_utf8_lossy(data);
    let (a, b) = match text.split_once('\0') {
        Some((a, b)) => (a, Some(b)),
        None => (text.as_ref(), None),
    };
    let (mesh_text, anim_text) = match first {
        Md5First::Mesh => (Some(a), b),
        Md5First::Anim => (b, Some(a)),
    };
    let mesh = mesh_text.map(md5::parse_mesh);
    let anim = anim_text.map(md5::parse_anim);
    if let Some(Ok(a)) = &anim {
        // Every frame's pose is defined (|xyz| ≤ 1 was checked); one past the end is not.
        for f in 0..a.frame_count().min(64) {
            assert!(a.pose(f).is_some(), "frame {f} of {} has no pose", a.frame_count());
            assert!(a.frame_components(f).is_some());
        }
        assert!(a.pose(a.frame_count()).is_none());
    }
    let mut rigs = Vec::new();
    if let Some(Ok(m)) = &mesh {
        if let Ok(rig) = md5::to_rig(m, &[], "f") {
            rigs.push(rig);
        }
    }
    if let (Some(Ok(_)), Some(Ok(_)), Some(mt), Some(at)) = (&mesh, &anim, mesh_text, anim_text) {
        if let Ok(rig) = md5::load(mt, Some(at), "f") {
            rigs.push(rig);
        }
    }
    let times = sample_times(data);
    for rig in &rigs {
        bake_and_exercise(rig, &times);
    }
}

/// Fuzz target `gltf_import`: [`gltf::load_bytes`] without a base directory; an imported rig is
/// baked and the baked file run through [`exercise_asset`].
pub fn gltf_bytes(data: &[u8]) {
    if let Ok(rig) = gltf::load_bytes(data, None, "f") {
        bake_and_exercise(&rig, &sample_times(data));
    }
}

/// Fuzz target `bvh`: the input (lossy UTF-8) as a BVH text, imported with the units guessed
/// and with a given scale. An accepted text must give what [`Rig`] documents (parents before
/// children, finite rest transforms, strictly increasing finite key times, as many finite values
/// as keys need) and the two imports the same skeleton shape; the rig is baked and the baked file
/// run through [`exercise_asset`]. A refused text must come with a one-line message and a line.
pub fn bvh_bytes(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let guessed = bvh::parse("f", &text, &bvh::BvhOptions::default());
    let given = bvh::parse("f", &text, &bvh::BvhOptions { scale: Some(0.01) });
    let rig = match (guessed, given) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.joints.len(), b.joints.len(), "the scale changed the skeleton");
            a
        }
        (Err(e), _) | (_, Err(e)) => {
            let shown = e.to_string();
            assert!(!shown.contains('\n') && e.line().is_some_and(|l| l >= 1), "message {shown:?}");
            return;
        }
    };
    for (i, j) in rig.joints.iter().enumerate() {
        assert!(j.parent.is_none_or(|p| p < i), "joint {i}'s parent comes after it");
        assert!(j.rest.is_finite(), "joint {i}'s rest transform");
    }
    for c in rig.clips.iter().flat_map(|c| &c.channels) {
        assert!(c.times.windows(2).all(|w| w[0] < w[1]) && c.times.iter().all(|t| t.is_finite()), "key times");
        assert_eq!(c.values.len(), c.times.len() * c.target.components(), "values of joint {}", c.joint);
        assert!(c.values.iter().all(|v| v.is_finite()), "a key value");
    }
    bake_and_exercise(&rig, &sample_times(data));
}

/// Fuzz target `fbx`: the bytes as an FBX file (binary or ASCII) through ufbx and the
/// importer's conversion to the import model, without a base directory (embedded textures
/// only). A refusal must be a one-line message; an imported rig is baked and exercised as
/// [`gltf_bytes`] does.
pub fn fbx_bytes(data: &[u8]) {
    match fbx::load_bytes(data, None, "f") {
        Ok(rig) => bake_and_exercise(&rig, &sample_times(data)),
        Err(e) => {
            let text = e.to_string();
            assert!(!text.is_empty() && !text.contains('\n'), "message {text:?}");
        }
    }
}

/// Fuzz target `image_decode`: the bytes as the base-color texture image of a one-triangle
/// GLB (declared JPEG when they start with `0xFF`, PNG otherwise), imported, baked and parsed
/// as [`gltf_bytes`] does.
pub fn image_bytes(data: &[u8]) {
    gltf_bytes(&image_glb(data));
}

/// A GLB of one textured triangle whose image is `image`, stored in a buffer view.
pub fn image_glb(image: &[u8]) -> Vec<u8> {
    let mut bin: Vec<u8> = Vec::new();
    for v in [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0] {
        bin.extend_from_slice(&v.to_le_bytes());
    }
    // Positions 0..36, texture coordinates 36..60, the image from 60.
    bin.extend_from_slice(image);
    while bin.len() & 3 != 0 {
        bin.push(0);
    }
    let mime = if image.first() == Some(&0xFF) {
        "image/jpeg"
    } else if image.starts_with(b"RIFF") {
        "image/webp"
    } else {
        "image/png"
    };
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0,"TEXCOORD_0":1}},"material":0}}]}}],
"materials":[{{"pbrMetallicRoughness":{{"baseColorTexture":{{"index":0}}}}}}],
"textures":[{{"source":0,"sampler":0}}],"samplers":[{{"wrapS":33648,"wrapT":33071,"magFilter":9728}}],
"images":[{{"bufferView":2,"mimeType":"{mime}"}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}},
{{"bufferView":1,"componentType":5126,"count":3,"type":"VEC2"}}],
"bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":36}},{{"buffer":0,"byteOffset":36,"byteLength":24}},
{{"buffer":0,"byteOffset":60,"byteLength":{}}}],
"buffers":[{{"byteLength":{}}}]}}"#,
        image.len(),
        bin.len()
    );
    let mut json = json.into_bytes();
    while json.len() % 4 != 0 {
        json.push(b' ');
    }
    let total = 12 + 8 + json.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}

/// Bakes `rig` with the default options and with lossless keys, small palettes and every
/// influence; whatever bakes must parse, and is then exercised.
fn bake_and_exercise(rig: &Rig, times: &[f32]) {
    let options = [
        BakeOptions::default(),
        BakeOptions { lossless: true, palette: Some(8), max_influences: MAX_INFLUENCES, ..BakeOptions::default() },
    ];
    for opts in &options {
        if let Ok((bytes, _report)) = bake(rig, opts) {
            if let Err(e) = Asset::parse(&bytes) {
                panic!("the baker wrote a file that does not parse: {e}");
            }
            exercise_asset(&bytes, times);
        }
    }
}

/// Sample times derived from the input: the clip's ends and middle, points outside it, NaN and
/// ±∞, and times read from the input's bytes. Interpreted relative to each clip by
/// [`clip_times`].
fn sample_times(data: &[u8]) -> Vec<f32> {
    // Two raw f32 values from the end of the input (anything, NaN and ∞ included; 0 when the
    // input is shorter).
    let mut t: Vec<f32> = data.rchunks_exact(4).take(2).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    t.resize(2, 0.0);
    // Two fractions of the clip range from a hash of the input.
    let h = crc32(data);
    t.push(f32::from(h as u16) / 65535.0);
    t.push(f32::from((h >> 16) as u16) / 65535.0);
    t
}

/// Absolute times for `clip`: `raw` values as given, fractions mapped into the range, plus the
/// fixed probes. Played forward then backward so cursors move both ways.
fn clip_times(clip: &Clip<'_>, raw: &[f32]) -> Vec<f32> {
    let (s, e) = (clip.start(), clip.end());
    let mut t = vec![s - 1.0, s, s + (e - s) * 0.25, s + (e - s) * 0.5, e, e + 1.0, f32::NAN, f32::INFINITY];
    t.push(f32::NEG_INFINITY);
    for (i, &r) in raw.iter().enumerate() {
        if i < 2 {
            t.push(r);
        } else {
            t.push(s + (e - s) * r);
        }
    }
    let back: Vec<f32> = t.iter().rev().copied().collect();
    t.extend(back);
    t
}

/// Parses `data` as a `.sinew` file; when accepted, reads every view it hands out and runs the
/// whole per-frame pipeline in `f32` and Q16.16.
pub fn exercise_asset(data: &[u8], times: &[f32]) {
    let Ok(asset) = Asset::parse(data) else { return };
    check_views(&asset);
    pipeline::<f32>(&asset, times);
    pipeline::<Q16>(&asset, times);
}

/// Every graph section of a parsed asset builds its graph, with its layers, in f32 (the rules
/// `Asset::parse` checked) and in Q16 (which may refuse, with a typed error, positions closer
/// than its step).
fn check_graphs(asset: &Asset<'_>) {
    use sinew::asset::{GraphBuffers, GraphData, LayerBuffers};
    use sinew::graph::{BlendPoint, Condition, GraphLayer, LayerError, Parameter, State, Transition};
    use sinew::job::mask::Channel;
    fn build<R: Real>(g: &GraphData<'_>, clips: usize) -> Result<(), LayerError> {
        let machines =
            || (0..=g.num_layers()).filter_map(|l| if l == 0 { Some(*g) } else { g.layer(l).map(|d| d.machine()) });
        let count = |f: fn(&GraphData<'_>) -> usize| machines().map(|m| f(&m)).sum::<usize>();
        let mut p = vec![Parameter::default(); g.num_parameters()];
        let mut s = vec![State::default(); count(|m| m.num_states())];
        let mut t = vec![Transition::<R>::default(); count(|m| m.num_transitions())];
        let mut b = vec![BlendPoint::<R>::default(); count(|m| m.num_points())];
        let mut c = vec![Condition::default(); count(|m| m.num_conditions())];
        let channels = (1..=g.num_layers()).filter_map(|l| g.layer(l)).map(|l| l.num_channels()).sum();
        let mut ch = vec![Channel::subtree(0, 0); channels];
        let mut l = vec![GraphLayer::<R>::default(); g.num_layers()];
        let buffers = GraphBuffers {
            parameters: &mut p,
            states: &mut s,
            transitions: &mut t,
            points: &mut b,
            conditions: &mut c,
        };
        g.to_layered::<R>(buffers, LayerBuffers { channels: &mut ch, layers: &mut l }, clips).map(|_| ())
    }
    for i in 0..asset.num_graphs() {
        let g = asset.graph(i).expect("graph below num_graphs");
        assert!(g.state_name(g.initial()).is_some());
        assert_eq!((1..=g.num_layers()).filter_map(|l| g.layer(l)).count(), g.num_layers());
        if let Err(e) = build::<f32>(&g, asset.num_clips()) {
            panic!("graph {i} was accepted but does not build: {e}");
        }
        let _ = build::<Q16>(&g, asset.num_clips());
    }
}

/// The accessors of a parsed asset: counts agree with `reopen`, every index below a count gives
/// a view, and the views' own counts are consistent.
fn check_views(asset: &Asset<'_>) {
    let again = Asset::reopen(asset.bytes()).expect("an accepted file re-opens");
    assert_eq!(again.num_skins(), asset.num_skins());
    assert_eq!(again.num_meshes(), asset.num_meshes());
    assert_eq!(again.num_clips(), asset.num_clips());
    assert_eq!(again.skeleton().map(|s| s.num_joints()), asset.skeleton().map(|s| s.num_joints()));
    assert_eq!(again.num_graphs(), asset.num_graphs());
    check_graphs(asset);
    let joints = asset.skeleton().map_or(0, |s| s.num_joints());
    // Clip reports hold the values `Asset::parse` checked.
    for i in 0..asset.num_clips() {
        let Some(r) = asset.clip_report(i) else { continue };
        assert_eq!(again.clip_report(i), Some(r));
        let c = asset.clip(i).expect("clip below num_clips");
        assert_eq!(r.clip, i);
        assert!(r.bound > 0.0 && r.bound.is_finite() && r.shell >= 0.0 && r.shell.is_finite(), "{r:?}");
        assert!(r.error >= 0.0 && r.error.is_finite() && (r.error == 0.0 || r.joint.is_some()), "{r:?}");
        assert!(r.joint.is_none_or(|j| j < joints) && (r.measured || r.error == 0.0), "{r:?}");
        assert!(r.time >= c.start() && r.time <= c.end(), "{r:?}");
    }
    if let Some(sd) = asset.skeleton() {
        for j in 0..joints {
            assert!(sd.name(j).is_some(), "joint {j} has no name");
            let p = sd.parent(j);
            assert!(p == -1 || (p >= 0 && (p as usize) < j), "joint {j} has parent {p}");
        }
    }
    for i in 0..asset.num_skins() {
        let s = asset.skin(i).expect("skin below num_skins");
        for k in 0..s.num_joints() {
            assert!((s.joint(k) as usize) < joints);
        }
    }
    for i in 0..asset.num_meshes() {
        let m = asset.mesh(i).expect("mesh below num_meshes");
        assert_eq!(m.parts().count(), m.num_parts());
        if let Some(s) = m.skin() {
            assert!(s < asset.num_skins());
        }
        if let Some(n) = m.node() {
            assert!(n < joints);
        }
        for p in m.parts() {
            assert_eq!(p.num_indices() % 3, 0);
            for k in 0..p.num_indices() {
                assert!((p.index(k) as usize) < p.num_vertices());
            }
            // A validated material reads as stored; its texture exists and has coordinates.
            let material = p.material();
            if let Some(t) = material.texture {
                assert!(t < asset.num_textures());
                assert!(p.has_texcoords());
            }
            assert!(!material.vertex_colors || p.has_colors());
        }
    }
    for i in 0..asset.num_textures() {
        let texture = asset.texture(i).expect("texture below num_textures").texture();
        assert_eq!(
            texture.texels().len(),
            (texture.width() * texture.height()) as usize * texture.format().bytes_per_texel()
        );
    }
    assert!(asset.texture(asset.num_textures()).is_none());
    for i in 0..asset.num_clips() {
        let c = asset.clip(i).expect("clip below num_clips");
        assert!(c.start() <= c.end());
        assert!(c.joint_bound() <= joints);
        for k in 0..c.num_tracks() {
            let t = c.track(k).expect("track below num_tracks");
            assert!(t.key_count >= 1);
            assert!((t.joint as usize) < joints);
        }
        assert!(c.track(c.num_tracks()).is_none());
        let _ = c.num_keys();
        // A search by name walks the clips: only the first few, or many clips make it quadratic.
        if i < FULL_CLIPS {
            assert!(asset.clip_by_name(c.name()).is_some());
        }
    }
}

/// Per-skin palettes for one pose.
struct Palettes<R> {
    matrices: Vec<Vec<Mat4<R>>>,
    dual_quats: Vec<Vec<DualQuat<R>>>,
}

/// Sampling (u16 cursors and track caches, slerp and corrected nlerp) → local-to-model →
/// palettes → skinning, for every clip (or the rest pose when there is none).
fn pipeline<R: Real>(asset: &Asset<'_>, times: &[f32]) {
    let skeleton: Box<Skeleton<R, MAX_SOA_JOINTS>> = match asset.skeleton() {
        Some(sd) => match sd.to_skeleton::<R, MAX_SOA_JOINTS>() {
            Ok(s) => Box::new(s),
            // A rest rotation far from unit length: a typed error, nothing more to run.
            Err(_) => return,
        },
        None => Box::new(Skeleton::EMPTY),
    };
    let view = skeleton.view();
    let rest = view.rest_pose();
    let mut pose = vec![SoaTransform::<R>::IDENTITY; rest.len()];
    let mut world = vec![Mat4::<R>::IDENTITY; view.num_joints()];

    morph_all::<R>(asset, times);

    // Rest pose.
    pose.copy_from_slice(rest);
    local_to_model(&skeleton, &pose, &mut world);
    skin_all(asset, &world);
    springs_all(asset, &skeleton, &pose, &world);

    // Every clip is sampled; the hierarchy walk and skinning, whose cost does not depend on the
    // clip, run for the first clips only, so a file of many small clips does not multiply them.
    for c in 0..asset.num_clips() {
        let clip = asset.clip(c).expect("clip below num_clips");
        let abs = clip_times(&clip, times);
        let full = c < FULL_CLIPS;
        for rotation in [RotationInterpolation::Slerp, RotationInterpolation::NlerpCorrected] {
            let mut cursors = vec![0u16; clip.num_tracks()];
            sample_sequence(&skeleton, clip, rotation, &abs, &mut cursors, &mut pose, &mut world, full);
            let mut caches = vec![TrackCache::<R>::EMPTY; clip.num_tracks()];
            sample_sequence(&skeleton, clip, rotation, &abs, &mut caches, &mut pose, &mut world, full);
            let mut lanes = vec![SoaTrackCache::<R>::EMPTY; skeleton.rest_pose().len()];
            sample_sequence(&skeleton, clip, rotation, &abs, &mut lanes, &mut pose, &mut world, full);
            if full {
                skin_all(asset, &world);
            }
        }
    }
}

/// The spring bones, when the file has them: the section read into buffers validates on the
/// skeleton (what [`Asset::parse`] accepts, the job accepts), then a reset and 20 steps at 60
/// Hz under a moving world run on `pose`; a step may refuse only tails that overflowed to
/// infinity ([`JobError::InvalidTransform`]).
fn springs_all<R: Real>(
    asset: &Asset<'_>,
    skeleton: &Skeleton<R, MAX_SOA_JOINTS>,
    pose: &[SoaTransform<R>],
    world: &[Mat4<R>],
) {
    let Some(data) = asset.springs() else { return };
    let joints: Vec<SpringJoint<R>> =
        (0..data.num_joints()).map(|i| data.joint(i).expect("spring joint below num_joints")).collect();
    let colliders: Vec<SpringCollider<R>> =
        (0..data.num_colliders()).map(|i| data.collider(i).expect("collider below num_colliders")).collect();
    let table: Vec<u16> = (0..data.num_joint_colliders())
        .map(|i| data.joint_collider(i).expect("table entry below num_joint_colliders"))
        .collect();
    let springs = SpringBones { joints: &joints, colliders: &colliders, joint_colliders: &table };
    assert_eq!(springs.validate(&skeleton.view()), Ok(()), "a parsed spring section validates");
    for i in 0..data.num_springs() {
        let spring = data.spring(i).expect("spring below num_springs");
        assert!(spring.joints.end <= joints.len());
        assert!(data.spring_joints(i).all(|j| j < joints.len()));
    }
    let (mut locals, mut models) = (pose.to_vec(), world.to_vec());
    let mut tails = vec![SpringTail::default(); joints.len()];
    // What the file may ask of a step is bounded: at most `MAX_SPRING_TESTS` collider tests.
    let tests: usize = joints.iter().map(|j| usize::from(j.colliders_len)).sum();
    assert!(tests <= sinew::limits::MAX_SPRING_TESTS, "a parsed spring section asks {tests} tests a step");
    for k in 0..=20 {
        let t = k as f32 / 60.0;
        let moved = Mat4::from_trs(
            Vec3::new(R::from_f32(0.3 * t), R::ZERO, R::from_f32(-0.2 * t)),
            sinew::math::Quat::from_axis_angle(Vec3::new(R::ZERO, R::ONE, R::ZERO), R::from_f32(0.7 * t)),
            Vec3::new(R::ONE, R::ONE, R::ONE),
        );
        let mut job = SpringBoneJob {
            skeleton: skeleton.view(),
            springs,
            world: moved,
            locals: &mut locals,
            models: &mut models,
            tails: &mut tails,
        };
        let r = if k == 0 { job.reset() } else { job.step(R::from_f32(1.0 / 60.0)) };
        assert!(matches!(r, Ok(_) | Err(JobError::InvalidTransform)), "spring step {k}: {r:?}");
        if r.is_err() {
            break;
        }
    }
}

/// Morph weights of every mesh with morph targets (its defaults, then each of the first clips
/// at `times` with a persistent cursor), each applied to every part of the mesh. A weight that
/// overflows to infinity in `f32` is the one error allowed ([`JobError::InvalidWeight`]).
fn morph_all<R: Real>(asset: &Asset<'_>, times: &[f32]) {
    for i in 0..asset.num_meshes() {
        let (Some(mesh), Some(targets)) = (asset.mesh(i), asset.morph_targets(i)) else { continue };
        assert_eq!(targets.num_parts(), mesh.num_parts(), "morph parts of mesh {i}");
        let mut weights = vec![R::ZERO; targets.num_targets()];
        let mut runs: Vec<(Option<usize>, f32)> = vec![(None, 0.0)];
        for c in 0..asset.num_clips().min(FULL_CLIPS) {
            let clip = asset.clip(c).expect("clip below num_clips");
            runs.extend(clip_times(&clip, times).into_iter().map(|t| (Some(c), t)));
        }
        let mut cursor = 0u16;
        for (clip, t) in runs {
            let tracks = clip.and_then(|c| asset.morph_weights(c));
            let r = MorphWeightsJob::new(targets, tracks, R::from_f32(t), &mut cursor, &mut weights).run();
            assert_eq!(r, Ok(()), "morph weights of mesh {i} at {t}");
            for (part, morph) in mesh.parts().zip(targets.parts()) {
                assert_eq!(morph.num_vertices(), part.num_vertices());
                let n = part.num_vertices();
                let (mut positions, mut normals, mut tangents) =
                    (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n], vec![Vec4::ZERO; n]);
                let positions = part.read_positions(&mut positions).expect("positions of a validated part");
                let normals = part.read_normals(&mut normals).expect("normals of a validated part");
                let tangents = part.read_tangents(&mut tangents).expect("tangents of a validated part");
                let (mut p, mut nr, mut tg) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n], vec![Vec4::ZERO; n]);
                let mut job = MorphJob::new(morph, &weights, positions, &mut p);
                if let Some(normals) = normals {
                    job = job.with_normals(normals, &mut nr);
                }
                if let Some(tangents) = tangents {
                    job = job.with_tangents(tangents, &mut tg);
                }
                let r = job.run();
                assert!(matches!(r, Ok(()) | Err(JobError::InvalidWeight)), "morphing mesh {i}: {r:?}");
            }
        }
    }
}

/// Clips that get the whole pipeline (see [`pipeline`]).
const FULL_CLIPS: usize = 2;

/// Samples `clip` at every time in turn with persistent per-track state, running local-to-model
/// after each sample when `walk` is set.
#[allow(clippy::too_many_arguments)]
fn sample_sequence<R: Real, C: TrackState<R>>(
    skeleton: &Skeleton<R, MAX_SOA_JOINTS>,
    clip: Clip<'_>,
    rotation: RotationInterpolation,
    times: &[f32],
    state: &mut [C],
    pose: &mut [SoaTransform<R>],
    world: &mut [Mat4<R>],
    walk: bool,
) {
    for &t in times {
        let r = SamplingJob {
            clip,
            time: R::from_f32(t),
            rotation,
            rest_pose: skeleton.rest_pose(),
            cursor: &mut *state,
            output: &mut *pose,
        }
        .run();
        assert_eq!(r, Ok(()), "sampling a validated clip at {t}");
        if walk {
            local_to_model(skeleton, pose, world);
        }
    }
}

fn local_to_model<R: Real>(skeleton: &Skeleton<R, MAX_SOA_JOINTS>, pose: &[SoaTransform<R>], world: &mut [Mat4<R>]) {
    let r = LocalToModelJob { skeleton: skeleton.view(), root: None, input: pose, output: world, from: None, to: None }
        .run();
    assert_eq!(r, Ok(()));
}

/// Builds every skin's palettes from `world`, then skins every part of every mesh with both.
fn skin_all<R: Real>(asset: &Asset<'_>, world: &[Mat4<R>]) {
    let mut pal = Palettes { matrices: Vec::new(), dual_quats: Vec::new() };
    for i in 0..asset.num_skins() {
        let s = asset.skin(i).expect("skin below num_skins");
        let joints: Vec<u16> = (0..s.num_joints()).map(|k| s.joint(k)).collect();
        let ib: Vec<Mat4<R>> = (0..s.num_joints()).map(|k| s.inverse_bind(k)).collect();
        let mut m = vec![Mat4::IDENTITY; ib.len()];
        let r = SkinMatrixJob { model: world, inverse_bind: &ib, joints: Some(&joints), output: &mut m }.run();
        assert_eq!(r, Ok(()), "matrix palette of skin {i}");
        let mut d = vec![DualQuat::IDENTITY; ib.len()];
        let r =
            SkinDualQuatJob { model: world, inverse_bind: &ib, joints: Some(&joints), output: &mut d, scales: None }
                .run();
        assert_eq!(r, Ok(()), "dual-quaternion palette of skin {i}");
        pal.matrices.push(m);
        pal.dual_quats.push(d);
    }
    for i in 0..asset.num_meshes() {
        let mesh = asset.mesh(i).expect("mesh below num_meshes");
        for part in mesh.parts() {
            skin_part(&part, mesh.skin(), mesh.node(), world, &pal);
        }
    }
}

fn skin_part<R: Real>(
    part: &sinew::asset::MeshPart<'_>,
    skin: Option<usize>,
    node: Option<usize>,
    world: &[Mat4<R>],
    pal: &Palettes<R>,
) {
    // The part's inputs, read into buffers of the lengths it states.
    let (n, len) = (part.num_vertices(), part.inputs_len());
    let (mut positions, mut normals, mut tangents) =
        (vec![Vec3::ZERO; len.vertices], vec![Vec3::ZERO; len.normals], vec![Vec4::ZERO; len.tangents]);
    let (mut joints, mut weights) = (vec![0u16; len.influences], vec![R::ZERO; len.influences]);
    let buffers = PartBuffers::new(&mut positions, &mut joints, &mut weights)
        .with_normals(&mut normals)
        .with_tangents(&mut tangents);
    let inputs = part.read_inputs(buffers).expect("the inputs of a validated part");
    let k = inputs.influences;
    let Some(s) = skin else {
        // Rigid: follows its node. The skinning job refuses zero influences with a typed error.
        let m = node.and_then(|j| world.get(j)).copied().unwrap_or(Mat4::IDENTITY);
        for p in inputs.positions {
            let _ = m.transform_point3(*p);
        }
        let mut out = vec![Vec3::ZERO; n];
        let r = inputs.job(Palette::<R>::Matrices(&[]), &mut out).run();
        assert_eq!(r, Err(JobError::InvalidInfluenceCount));
        return;
    };
    let (skin_m, skin_d) = (&pal.matrices[s], &pal.dual_quats[s]);
    let (mut local_m, mut local_d) = (vec![Mat4::IDENTITY; len.palette], vec![DualQuat::IDENTITY; len.palette]);
    let local_m = part.local_palette(skin_m, &mut local_m).expect("palette entries below the skin's joint count");
    let local_d = part.local_palette(skin_d, &mut local_d).expect("palette entries below the skin's joint count");
    for palette in [Palette::Matrices(local_m), Palette::DualQuats(local_d)] {
        let (mut out_p, mut out_n, mut out_t) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n], vec![Vec4::ZERO; n]);
        let mut job = inputs.job(palette, &mut out_p);
        if let Some(normals) = inputs.normals {
            job = job.with_normals(normals, &mut out_n);
        }
        if let Some(tangents) = inputs.tangents {
            job = job.with_tangents(tangents, &mut out_t);
        }
        let r = job.run();
        assert_eq!(r, Ok(()), "skinning a validated part ({k} influences, {n} vertices)");
    }
}

/// Fuzz target `graph_file`: the input (lossy UTF-8) as an animation graph file for the core's
/// baked character (clips `walk` and `run`, layer masks by its joint names). A graph the reader
/// accepts (layers included) must build a layered state machine, bake into the character and
/// read back as the same graph, and run two seconds of updates without an error, its
/// parameters and layer weights driven by the input's bytes, with the same poses from the file
/// and from the bake; the bake also builds in Q16 (or refuses with a typed error) and runs. A
/// refused file must come with a one-line message.
pub fn graph_bytes(data: &[u8]) {
    use sinew::asset::{GraphBuffers, LayerBuffers};
    use sinew::controller::ClipEntry;
    use sinew::graph::{
        BlendPoint, Condition, FadeCurve, GraphError, GraphLayer, LayeredGraph, LayeredScratch, LayeredStateMachine,
        Parameter, ParameterKind, State, Transition,
    };
    use sinew::job::mask::Channel;
    use sinew_offline::graph_bake::{bake_graph, baked_graph};
    use sinew_offline::graph_file::GraphFile;

    static CHARACTER: &[u8] = include_bytes!("../../../core/fixtures/character.sinew");
    let Ok(asset) = Asset::parse(CHARACTER) else { panic!("the fixture parses") };
    let names = ["walk", "run"];
    let clip = |key: &str| names.iter().position(|n| *n == key).or_else(|| key.parse().ok().filter(|i| *i < 2));
    let Some(view) = asset.skeleton() else { panic!("the fixture's skeleton") };
    let Ok(skeleton) = view.to_skeleton::<f32, 6>() else { panic!("the fixture's skeleton") };
    let joint = |name: &str| skeleton.view().find(name);
    let text = String::from_utf8_lossy(data);
    let file = match GraphFile::parse_with_joints(&text, clip, joint, 2) {
        Ok(f) => f,
        Err(e) => {
            assert!(!e.is_empty() && !e.contains('\n'), "message {e:?}");
            return;
        }
    };
    let clips: Vec<ClipEntry<'_, f32>> = (0..2).filter_map(|i| asset.clip(i)).map(ClipEntry::new).collect();
    let parts = file.parts();
    let file_layers = parts.layers();
    let graph = LayeredGraph { base: parts.graph(), layers: &file_layers };
    sinew::capacity! {
        /// The fixture's 24 joints, 16 slots per layer, 4 layers, 72 tracks, 32 parameters.
        pub struct Fuzzed { joints: 24, slots: 16, layers: 4, params: 32 }
    }
    type Machine<'g, R> = LayeredStateMachine<'g, R, Fuzzed>;
    let mut machine = match Machine::<f32>::new(graph, &clips) {
        Ok(m) => m,
        // Capacities the fuzzer may exceed: more parameters than 32, more layers than 4.
        Err(e) if matches!(e.error, GraphError::TooManyParameters { .. } | GraphError::TooManyLayers { .. }) => return,
        Err(e) => panic!("an accepted graph refused: {e}"),
    };
    // The same graph baked into the character and read back: the same machine.
    let bytes = match bake_graph(CHARACTER, "fuzz", &file) {
        Ok(b) => b,
        Err(e) => panic!("an accepted graph does not bake: {e}"),
    };
    let Ok(baked_asset) = Asset::parse(&bytes) else { panic!("the baked file parses") };
    let baked = match baked_graph(&baked_asset, Some("fuzz")) {
        Ok(b) => b,
        Err(e) => panic!("a baked graph does not read back: {e}"),
    };
    let baked_layers = baked.layers();
    let baked_graph = LayeredGraph { base: baked.graph(), layers: &baked_layers };
    assert_eq!(baked_graph, graph, "the baked graph differs from its file");
    let mut from_bake = match Machine::<f32>::new(baked_graph, &clips) {
        Ok(m) => m,
        Err(e) => panic!("the baked graph is refused: {e}"),
    };
    // And in Q16 from the baked bytes (which may refuse, with a typed error, what Q16 cannot hold).
    let Some(data_q) = baked_asset.graph_by_name("fuzz") else { panic!("the baked graph") };
    let count = |f: fn(&sinew::asset::GraphData<'_>) -> usize| {
        f(&data_q) + (1..=data_q.num_layers()).filter_map(|l| data_q.layer(l)).map(|l| f(&l.machine())).sum::<usize>()
    };
    let mut p = vec![Parameter::default(); data_q.num_parameters()];
    let mut s = vec![State::default(); count(|g| g.num_states())];
    let mut t = vec![Transition::default(); count(|g| g.num_transitions())];
    let mut b = vec![BlendPoint::default(); count(|g| g.num_points())];
    let mut c = vec![Condition::default(); count(|g| g.num_conditions())];
    let channels = (1..=data_q.num_layers()).filter_map(|l| data_q.layer(l)).map(|l| l.num_channels()).sum();
    let mut ch = vec![Channel::subtree(0, 0); channels];
    let mut l = vec![GraphLayer::default(); data_q.num_layers()];
    let buffers =
        GraphBuffers { parameters: &mut p, states: &mut s, transitions: &mut t, points: &mut b, conditions: &mut c };
    let q_clips: Vec<ClipEntry<'_, Q16>> = (0..2).filter_map(|i| asset.clip(i)).map(ClipEntry::new).collect();
    let mut q = data_q
        .to_layered::<Q16>(buffers, LayerBuffers { channels: &mut ch, layers: &mut l }, 2)
        .ok()
        .and_then(|g| Machine::<Q16>::new(g, &q_clips).ok());
    let Ok(q_skeleton) = view.to_skeleton::<Q16, 6>() else { panic!("the fixture's skeleton") };

    let mut scratch = Box::new(LayeredScratch::<f32, Fuzzed>::new());
    let mut q_scratch = Box::new(LayeredScratch::<Q16, Fuzzed>::new());
    let (mut pose, mut baked_pose) = ([SoaTransform::IDENTITY; 6], [SoaTransform::IDENTITY; 6]);
    let mut q_pose = [SoaTransform::<Q16>::IDENTITY; 6];
    let parameters = graph.base.parameters;
    for frame in 0..120usize {
        let byte = data.get(frame % data.len().max(1)).copied().unwrap_or(0);
        let p = usize::from(byte) % parameters.len().max(1);
        let kind = parameters.get(p).map(|p| p.kind);
        let value = f32::from(byte) / 32.0 - 2.0;
        let _ = match kind {
            Some(ParameterKind::Float(_)) => machine.set_float(p, value).and(from_bake.set_float(p, value)),
            Some(ParameterKind::Bool(_)) => {
                machine.set_bool(p, byte & 1 == 1).and(from_bake.set_bool(p, byte & 1 == 1))
            }
            Some(ParameterKind::Trigger) => machine.fire(p, true).and(from_bake.fire(p, true)),
            None => Ok(()),
        };
        if let Some(q) = &mut q {
            let _ = match kind {
                Some(ParameterKind::Float(_)) => q.set_float(p, Q16::from_f32(value)),
                Some(ParameterKind::Bool(_)) => q.set_bool(p, byte & 1 == 1),
                Some(ParameterKind::Trigger) => q.fire(p, true),
                None => Ok(()),
            };
        }
        let layer = 1 + frame % 3;
        if frame % 20 == 10 && layer < machine.num_layers() {
            let w = f32::from(byte & 3) / 3.0;
            let (a, b) = (
                machine.fade_layer(layer, w, 0.1, FadeCurve::Linear),
                from_bake.fade_layer(layer, w, 0.1, FadeCurve::Linear),
            );
            assert_eq!(a, b, "fade {frame}");
        }
        let dt = [1.0 / 60.0, 0.0, 0.25][frame % 3];
        if let Err(e) = machine.update(dt, &clips, skeleton.view(), &mut scratch, &mut pose, |_| {}) {
            panic!("update {frame}: {e}");
        }
        if let Err(e) = from_bake.update(dt, &clips, skeleton.view(), &mut scratch, &mut baked_pose, |_| {}) {
            panic!("baked update {frame}: {e}");
        }
        assert_eq!(pose, baked_pose, "update {frame}: the baked graph runs differently");
        if let Some(q) = &mut q {
            let _ = q.update(Q16::from_f32(dt), &q_clips, q_skeleton.view(), &mut q_scratch, &mut q_pose, |_| {});
        }
        let finite = (0..24).all(|j| {
            let t = pose[j / 4].lane(j % 4);
            t.translation.is_finite() && t.rotation.is_finite() && t.scale.is_finite()
        });
        assert!(finite, "update {frame}: a non-finite pose");
    }
}
