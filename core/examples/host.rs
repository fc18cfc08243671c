//! A host program: load a baked character, play `walk`, crossfade to `run`, and skin its mesh
//! every frame at 60 Hz. It prints what a user would check: the character's contents, the root
//! motion (the speed of each gait), the blend weights during the crossfade, and the skinned
//! mesh's bounds.
//!
//! ```text
//! cargo run -p sinew --example host                 # the built-in character
//! cargo run -p sinew --example host -- my.sinew     # a file from `sinew bake` (clips walk and run)
//! ```
//!
//! Loading ([`load`]) and [`setup`] allocate the buffers once; a [`frame`] allocates nothing
//! (`core/tests/host_allocations.rs` runs these functions under a counting allocator).

use std::error::Error;

use sinew::asset::{Asset, MeshData, PartBuffers, PartInputsLen, SkinData};
use sinew::controller::{ClipEntry, ClipId, Controller, ControllerScratch, FadeCurve, LayerId, SlotId};
use sinew::job::{LocalToModelJob, Palette, SkinMatrixJob};
use sinew::math::{Mat4, SoaTransform, Vec3};
use sinew::root_motion::RootMotionSettings;
use sinew::skeleton::Skeleton;

/// The character of `core/fixtures`: the built-in humanoid of `sinew demo`, baked by
/// `sinew bake` (22 joints, the clips `walk` and `run`).
pub static CHARACTER: &[u8] = include_bytes!("../fixtures/character.sinew");

// ANCHOR: capacities
sinew::capacity! {
    /// The characters this program animates: at most 64 joints, 2 clip slots (the default:
    /// 1 layer, clips of at most 3 tracks per joint).
    pub struct Rig { joints: 64, slots: 2 }
}
/// A controller of that capacity.
type Character = Controller<f32, Rig>;
// ANCHOR_END: capacities

/// Frames played; the crossfade from walk to run starts at [`CROSSFADE`].
pub const FRAMES: u32 = 240;
/// Two seconds in.
pub const CROSSFADE: u32 = 120;

/// What the frames read from the file: its skeleton, the clips, the skinned mesh and its skin
/// (views of the file's bytes).
pub struct Scene<'a> {
    /// The skeleton.
    pub skeleton: Skeleton<f32, { Rig::SOA }>,
    /// `walk` and `run`.
    pub clips: [ClipEntry<'a, f32>; 2],
    /// The first skinned mesh.
    pub mesh: MeshData<'a>,
    /// Its skin.
    pub skin: SkinData<'a>,
}

/// Parses and validates `bytes` once; the scene reads them in place.
///
/// # Errors
///
/// When the file does not parse or lacks a skeleton, the clips or a skinned mesh.
pub fn load(bytes: &[u8]) -> Result<Scene<'_>, Box<dyn Error>> {
    // ANCHOR: load
    // Parse and validate once; everything below reads the bytes in place.
    let asset = Asset::parse(bytes)?;
    let skeleton = asset.skeleton().ok_or("no skeleton")?.to_skeleton::<f32, { Rig::SOA }>()?;
    let walk = asset.clip_by_name("walk").ok_or("no clip 'walk'")?;
    let run = asset.clip_by_name("run").ok_or("no clip 'run'")?;
    let clips = [ClipEntry::new(walk), ClipEntry::new(run)];
    let mesh = (0..asset.num_meshes()).filter_map(|i| asset.mesh(i)).find(|m| m.skin().is_some());
    let mesh = mesh.ok_or("no skinned mesh")?;
    let skin = asset.skin(mesh.skin().unwrap_or(0)).ok_or("no skin")?;
    // ANCHOR_END: load
    Ok(Scene { skeleton, clips, mesh, skin })
}

/// The character's state and every buffer its frames write, allocated once by [`setup`].
pub struct State {
    /// The controller.
    pub character: Character,
    /// Its working memory (one per thread, shared by the characters).
    pub scratch: ControllerScratch<f32, Rig>,
    /// The local pose.
    pub pose: Vec<SoaTransform<f32>>,
    /// The joints' model matrices.
    pub model: Vec<Mat4<f32>>,
    /// The skin's inverse bind matrices, read once.
    pub inverse_bind: Vec<Mat4<f32>>,
    /// The skeleton joint of each skin joint.
    pub skin_joints: Vec<u16>,
    /// The skin palette.
    pub palette: Vec<Mat4<f32>>,
    /// One part's bind-pose positions at a time.
    pub positions: Vec<Vec3<f32>>,
    /// One part's joint indices at a time.
    pub joint_indices: Vec<u16>,
    /// One part's weights at a time.
    pub joint_weights: Vec<f32>,
    /// One part's palette at a time.
    pub part_palette: Vec<Mat4<f32>>,
    /// The skinned mesh, part after part.
    pub skinned: Vec<Vec3<f32>>,
}

/// The character at the start of the walk, and its buffers.
///
/// # Errors
///
/// A controller error when the clips do not fit the capacity.
pub fn setup(scene: &Scene<'_>) -> Result<State, Box<dyn Error>> {
    let (skeleton, clips, mesh, skin) = (&scene.skeleton, scene.clips, scene.mesh, scene.skin);
    // ANCHOR: setup
    // The character's state, and the buffers its frames work in.
    let mut character = Character::new();
    character.assign(SlotId(0), LayerId(0), ClipId(0), &clips)?; // the walk in slot 0
    character.assign(SlotId(1), LayerId(0), ClipId(1), &clips)?; // the run in slot 1
    character.set_weight(0, 1.0)?;
    character.set_root_motion(Some(RootMotionSettings::default()))?; // the root stays in place
    let scratch = ControllerScratch::new(); // one per thread, shared by the characters
    let pose = vec![SoaTransform::IDENTITY; skeleton.num_soa_joints()];
    let model = vec![Mat4::IDENTITY; skeleton.num_joints()];
    let inverse_bind: Vec<Mat4<f32>> = (0..skin.num_joints()).map(|j| skin.inverse_bind(j)).collect();
    let skin_joints: Vec<u16> = (0..skin.num_joints()).map(|j| skin.joint(j)).collect();
    let palette = vec![Mat4::IDENTITY; skin.num_joints()];
    // A part's skinning inputs, read from the file each frame: buffers for the longest part.
    let len = PartInputsLen::of_mesh(&mesh);
    let positions = vec![Vec3::ZERO; len.vertices];
    let (joint_indices, joint_weights) = (vec![0u16; len.influences], vec![0.0; len.influences]);
    let part_palette = vec![Mat4::IDENTITY; len.palette];
    let skinned = vec![Vec3::ZERO; mesh.parts().map(|part| part.num_vertices()).sum()];
    // ANCHOR_END: setup
    Ok(State {
        character,
        scratch,
        pose,
        model,
        inverse_bind,
        skin_joints,
        palette,
        positions,
        joint_indices,
        joint_weights,
        part_palette,
        skinned,
    })
}

/// Frame `number` (from 1) at 60 Hz: the crossfade to run at [`CROSSFADE`], the pose, the
/// skin palette and the skinned mesh.
///
/// # Errors
///
/// A job's or the controller's error (none for the built-in character).
pub fn frame(scene: &Scene<'_>, state: &mut State, number: u32) -> Result<(), Box<dyn Error>> {
    let (skeleton, clips, mesh) = (&scene.skeleton, scene.clips, scene.mesh);
    let State {
        character,
        scratch,
        pose,
        model,
        inverse_bind,
        skin_joints,
        palette,
        positions,
        joint_indices,
        joint_weights,
        part_palette,
        skinned,
    } = state;
    if number == CROSSFADE {
        // Two seconds in: crossfade to run over half a second, feet in phase.
        character.crossfade(1, 0.5, FadeCurve::SmoothStep, true)?;
    }
    // ANCHOR: frame
    // One frame: animate, then the joints' model matrices, then the skin palette.
    character.update(1.0 / 60.0, &clips, skeleton.view(), scratch, pose, |_event| {})?;
    LocalToModelJob::new(skeleton.view(), pose, model).run()?;
    SkinMatrixJob::new(model, inverse_bind, palette).with_joints(skin_joints).run()?;
    // ANCHOR_END: frame
    // ANCHOR: skin
    // Skin every part of the mesh on the CPU (a GPU would take `palette` as uniforms): read the
    // part's inputs from the file into the buffers, take its joints from the skin palette (a
    // part's joint indices point into its own palette, a list of skin joints), and skin.
    let mut first = 0;
    for part in mesh.parts() {
        let inputs = part.read_inputs(PartBuffers::new(positions, joint_indices, joint_weights))?;
        let local = part.local_palette(palette, part_palette)?;
        let out = skinned.get_mut(first..first + part.num_vertices()).ok_or("more vertices than at setup")?;
        inputs.job(Palette::Matrices(local), out).run()?;
        first += part.num_vertices();
    }
    // ANCHOR_END: skin
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let file = std::env::args().nth(1);
    let bytes = match &file {
        Some(path) => std::fs::read(path)?,
        None => CHARACTER.to_vec(),
    };
    let scene = load(&bytes)?;
    let (walk, run) = (scene.clips[0].clip, scene.clips[1].clip);
    println!(
        "{}: {} joints, clips walk {:.2} s and run {:.2} s, mesh '{}' of {} parts",
        file.as_deref().unwrap_or("built-in character"),
        scene.skeleton.num_joints(),
        walk.end() - walk.start(),
        run.end() - run.start(),
        scene.mesh.name(),
        scene.mesh.num_parts()
    );

    let mut state = setup(&scene)?;
    let (mut travelled, mut since) = (Vec3::ZERO, 0);
    for number in 1..=FRAMES {
        frame(&scene, &mut state, number)?;
        let character = &state.character;
        travelled += character.root_motion_delta().translation;
        if [60, 120, 135, 180, 240].contains(&number) {
            let seconds = (number - since) as f32 / 60.0;
            println!(
                "t {:.2} s: walk {:.2} run {:.2}, root speed {:.2} m/s over the last {seconds:.2} s",
                number as f32 / 60.0,
                character.weight(0).unwrap_or(0.0),
                character.weight(1).unwrap_or(0.0),
                travelled.length() / seconds
            );
            (travelled, since) = (Vec3::ZERO, number);
        }
    }
    let skinned = &state.skinned;
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
        state.pose.len() * core::mem::size_of::<SoaTransform<f32>>(),
        state.model.len() * core::mem::size_of::<Mat4<f32>>(),
        state.palette.len() * core::mem::size_of::<Mat4<f32>>()
    );
    Ok(())
}
