//! A host program: load a baked character, play `walk`, crossfade to `run`, and skin its mesh
//! every frame at 60 Hz. It prints what a user would check: the character's contents, the root
//! motion (the speed of each gait), the blend weights during the crossfade, and the skinned
//! mesh's bounds.
//!
//! ```text
//! cargo run -p sinew --example host                 # the built-in character
//! cargo run -p sinew --example host -- my.sinew     # a file from `sinew bake` (clips walk and run)
//! ```

use sinew::asset::Asset;
use sinew::controller::{ClipEntry, ClipId, Controller, ControllerScratch, FadeCurve, LayerId, SlotId};
use sinew::job::{LocalToModelJob, Palette, SkinMatrixJob, SkinningJob};
use sinew::math::{Mat4, SoaTransform, Vec3};
use sinew::root_motion::RootMotionSettings;

/// The character of `core/fixtures`: the built-in humanoid of `sinew demo`, baked by
/// `sinew bake` (22 joints, the clips `walk` and `run`).
static CHARACTER: &[u8] = include_bytes!("../fixtures/character.sinew");

// ANCHOR: capacities
sinew::capacity! {
    /// The characters this program animates: at most 64 joints, 2 clip slots (the default:
    /// 1 layer, clips of at most 3 tracks per joint).
    pub struct Rig { joints: 64, slots: 2 }
}
/// A controller of that capacity.
type Character = Controller<f32, Rig>;
// ANCHOR_END: capacities

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let file = std::env::args().nth(1);
    let bytes = match &file {
        Some(path) => std::fs::read(path)?,
        None => CHARACTER.to_vec(),
    };
    // ANCHOR: load
    // Parse and validate once; everything below reads the bytes in place.
    let asset = Asset::parse(&bytes)?;
    let skeleton = asset.skeleton().ok_or("no skeleton")?.to_skeleton::<f32, { Rig::SOA }>()?;
    let walk = asset.clip_by_name("walk").ok_or("no clip 'walk'")?;
    let run = asset.clip_by_name("run").ok_or("no clip 'run'")?;
    let clips = [ClipEntry::new(walk), ClipEntry::new(run)];
    let mesh = (0..asset.num_meshes()).filter_map(|i| asset.mesh(i)).find(|m| m.skin().is_some());
    let mesh = mesh.ok_or("no skinned mesh")?;
    let skin = asset.skin(mesh.skin().unwrap_or(0)).ok_or("no skin")?;
    // ANCHOR_END: load
    println!(
        "{}: {} joints, clips walk {:.2} s and run {:.2} s, mesh '{}' of {} parts",
        file.as_deref().unwrap_or("built-in character"),
        skeleton.num_joints(),
        walk.end() - walk.start(),
        run.end() - run.start(),
        mesh.name(),
        mesh.num_parts()
    );

    // ANCHOR: setup
    // The character's state, and the buffers its frames work in.
    let mut character = Character::new();
    character.assign(SlotId(0), LayerId(0), ClipId(0), &clips)?; // the walk in slot 0
    character.assign(SlotId(1), LayerId(0), ClipId(1), &clips)?; // the run in slot 1
    character.set_weight(0, 1.0)?;
    character.set_root_motion(Some(RootMotionSettings::default())); // the root stays in place
    let mut scratch = ControllerScratch::new(); // one per thread, shared by the characters
    let mut pose = vec![SoaTransform::IDENTITY; skeleton.num_soa_joints()];
    let mut model = vec![Mat4::IDENTITY; skeleton.num_joints()];
    let inverse_bind: Vec<Mat4<f32>> = (0..skin.num_joints()).map(|j| skin.inverse_bind(j)).collect();
    let skin_joints: Vec<u16> = (0..skin.num_joints()).map(|j| skin.joint(j)).collect();
    let mut palette = vec![Mat4::IDENTITY; skin.num_joints()];
    // ANCHOR_END: setup

    let mut skinned: Vec<Vec3<f32>> = Vec::new();
    let (mut travelled, mut since) = (Vec3::ZERO, 0);
    for frame in 1..=240 {
        if frame == 120 {
            // Two seconds in: crossfade to run over half a second, feet in phase.
            character.crossfade(1, 0.5, FadeCurve::SmoothStep, true)?;
        }
        // ANCHOR: frame
        // One frame: animate, then the joints' model matrices, then the skin palette.
        character.update(1.0 / 60.0, &clips, skeleton.view(), &mut scratch, &mut pose, |_event| {})?;
        LocalToModelJob::new(skeleton.view(), &pose, &mut model).run()?;
        SkinMatrixJob::new(&model, &inverse_bind, &mut palette).with_joints(&skin_joints).run()?;
        // ANCHOR_END: frame
        travelled += character.root_motion_delta().translation;
        if [60, 120, 135, 180, 240].contains(&frame) {
            let seconds = (frame - since) as f32 / 60.0;
            println!(
                "t {:.2} s: walk {:.2} run {:.2}, root speed {:.2} m/s over the last {seconds:.2} s",
                frame as f32 / 60.0,
                character.weight(0).unwrap_or(0.0),
                character.weight(1).unwrap_or(0.0),
                travelled.length() / seconds
            );
            (travelled, since) = (Vec3::ZERO, frame);
        }
        skinned.clear();
        // ANCHOR: skin
        // Skin every part of the mesh on the CPU (a GPU would take `palette` as uniforms).
        for part in mesh.parts() {
            let n = part.num_vertices();
            let k = part.influences();
            let positions: Vec<Vec3<f32>> = (0..n).map(|v| part.position(v)).collect();
            let joints: Vec<u16> = (0..n * k).map(|i| part.joint(i / k, i % k)).collect();
            let weights: Vec<f32> = (0..n * k).map(|i| part.weight(i / k, i % k)).collect();
            // A part's joint indices point into its own palette: a list of skin joints.
            let part_palette: Vec<Mat4<f32>> =
                (0..part.palette_len()).map(|i| palette[part.palette(i) as usize]).collect();
            let mut out = vec![Vec3::ZERO; n];
            SkinningJob::new(Palette::Matrices(&part_palette), k, &joints, &weights, &positions, &mut out).run()?;
            skinned.extend(out);
        }
        // ANCHOR_END: skin
    }
    let (lo, hi) = skinned.iter().fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(lo, hi), p| {
        (Vec3::new(lo.x.min(p.x), lo.y.min(p.y), lo.z.min(p.z)), Vec3::new(hi.x.max(p.x), hi.y.max(p.y), hi.z.max(p.z)))
    });
    println!(
        "skinned {} vertices: x {:.2}..{:.2}, y {:.2}..{:.2}, z {:.2}..{:.2} m",
        skinned.len(),
        lo.x,
        hi.x,
        lo.y,
        hi.y,
        lo.z,
        hi.z
    );
    println!(
        "memory: controller {} B, scratch {} B, pose {} B, model matrices {} B, palette {} B",
        core::mem::size_of::<Character>(),
        core::mem::size_of::<ControllerScratch<f32, Rig>>(),
        pose.len() * core::mem::size_of::<SoaTransform<f32>>(),
        model.len() * core::mem::size_of::<Mat4<f32>>(),
        palette.len() * core::mem::size_of::<Mat4<f32>>()
    );
    Ok(())
}
