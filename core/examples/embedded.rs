//! The loop of a microcontroller firmware, run on the host: no heap, every buffer a fixed-size
//! array, the whole pipeline in Q16.16 fixed point (what an FPU-less Cortex-M0+ runs), and the
//! frame rendered in bands of 8 rows (what a display without a framebuffer in RAM takes). The
//! last frame is printed as ASCII art; on a board each band would go to the display instead.
//!
//! ```text
//! cargo run -p sinew --example embedded
//! ```
//!
//! `tests/firmware` is this loop as a firmware image, run under QEMU.

use sinew::asset::{Asset, MeshData, SkinData};
use sinew::controller::{ClipEntry, ClipId, Controller, ControllerScratch, FadeCurve, LayerId, SlotId};
use sinew::job::{LocalToModelJob, Palette, SkinMatrixJob, SkinningJob};
use sinew::math::{Mat4, SoaTransform, Vec3};
use sinew::raster::{BandBuffer, CachedVertex, Depth16, Draw, Indices, Mesh, PixelFormat, Renderer, Rgb, Rgb565};
use sinew::root_motion::RootMotionSettings;
use sinew::skeleton::Skeleton;
use sinew::{Real, Q16};

// ANCHOR: flash
/// The baked character, in flash: `sinew bake` wrote it, `include_bytes!` embeds it, and the
/// core reads it in place.
static CHARACTER: &[u8] = include_bytes!("../fixtures/character.sinew");
// ANCHOR_END: flash

// ANCHOR: capacities
sinew::capacity! {
    /// The animation's capacities, fixed at compile time for this character (22 joints): the
    /// clip playing and the one fading in, one layer, clips of at most 16 tracks.
    pub struct Tiny { joints: 24, slots: 2, tracks: 16 }
}
/// The mesh's capacities (126 vertices).
const VERTICES: usize = 128;
const INDICES: usize = 3 * 168;
const INFLUENCES: usize = 4;
/// Vertices skinned per job: the bind-pose data is copied from flash this many at a time.
const CHUNK: usize = 8;
type Character = Controller<Q16, Tiny>;
type Scratch = ControllerScratch<Q16, Tiny>;
// ANCHOR_END: capacities

/// The display: 64 × 40 pixels, drawn 8 rows at a time.
const WIDTH: u32 = 64;
const HEIGHT: u32 = 40;
const BAND_ROWS: u32 = 8;

/// Why a step failed (every job and call returns its own typed error; this example keeps only
/// its message).
type Error = &'static str;

fn main() -> Result<(), Error> {
    let asset = Asset::parse(CHARACTER).map_err(|_| "the asset was refused")?;
    let skeleton: Skeleton<Q16, { Tiny::SOA }> =
        asset.skeleton().ok_or("no skeleton")?.to_skeleton().map_err(|_| "the skeleton does not fit")?;
    let clip = |name| asset.clip_by_name(name).map(ClipEntry::new).ok_or("missing clip");
    let clips = [clip("walk")?, clip("run")?];
    let mesh = (0..asset.num_meshes()).filter_map(|i| asset.mesh(i)).find(|m| m.skin().is_some());
    let mesh = mesh.ok_or("no skinned mesh")?;
    let skin = asset.skin(mesh.skin().unwrap_or(0)).ok_or("no skin")?;

    // ANCHOR: state
    // What lives from frame to frame (statics on a board): the controller, the skinned mesh.
    let mut character = Character::new();
    character.set_root_motion(Some(RootMotionSettings::default())).map_err(|_| "root motion")?;
    for i in 0..clips.len() {
        // Clip i in slot i, on the base layer.
        character.assign(SlotId(i), LayerId(0), ClipId(i), &clips).map_err(|_| "a clip has too many tracks")?;
    }
    character.set_weight(0, Q16::ONE).map_err(|_| "slot")?;
    let mut positions = [Vec3::<Q16>::ZERO; VERTICES];
    // ANCHOR_END: state

    for frame in 1..=30 {
        if frame == 10 {
            character.crossfade(1, Q16::ratio(1, 2), FadeCurve::SmoothStep, true).map_err(|_| "slot")?;
        }
        animate(&mut character, &clips, &skeleton, &mesh, &skin, &mut positions)?;
    }
    let mut indices = [0u16; INDICES];
    let count = triangles(&mesh, &mut indices)?;
    let text = draw(&positions[..], &indices[..count], &mesh)?;
    println!("frame 30 (Q16.16, {} bands of {BAND_ROWS} rows):", HEIGHT.div_ceil(BAND_ROWS));
    for row in &text {
        println!("{}", core::str::from_utf8(row).unwrap_or(""));
    }
    println!(
        "RAM: controller {} B, scratch {} B (shared by characters updated in turn), skinned mesh {} B",
        core::mem::size_of::<Character>(),
        core::mem::size_of::<Scratch>(),
        core::mem::size_of_val(&positions)
    );
    Ok(())
}

/// One frame: the controller's update, local-to-model, the palette, then skinning in chunks.
/// Every buffer is on this function's stack and is gone when it returns.
fn animate(
    character: &mut Character,
    clips: &[ClipEntry<'_, Q16>],
    skeleton: &Skeleton<Q16, { Tiny::SOA }>,
    mesh: &MeshData<'_>,
    skin: &SkinData<'_>,
    positions: &mut [Vec3<Q16>; VERTICES],
) -> Result<(), Error> {
    // ANCHOR: frame
    let mut scratch = Scratch::new();
    let mut pose = [SoaTransform::<Q16>::IDENTITY; Tiny::SOA];
    let dt = Q16::ratio(1, 30);
    character.update(dt, clips, skeleton.view(), &mut scratch, &mut pose, |_| {}).map_err(|_| "update")?;
    let n = skeleton.num_joints();
    let mut model = [Mat4::<Q16>::IDENTITY; Tiny::JOINTS];
    LocalToModelJob::new(skeleton.view(), &pose, &mut model[..n]).run().map_err(|_| "local-to-model")?;
    // ANCHOR_END: frame
    // The palette: model × inverse bind per skin joint (inverse binds read from flash).
    let mut inverse_bind = [Mat4::<Q16>::IDENTITY; Tiny::JOINTS];
    let mut joints = [0u16; Tiny::JOINTS];
    let k = skin.num_joints().min(Tiny::JOINTS);
    for j in 0..k {
        inverse_bind[j] = skin.inverse_bind(j);
        joints[j] = skin.joint(j);
    }
    let mut palette = [Mat4::<Q16>::IDENTITY; Tiny::JOINTS];
    SkinMatrixJob::new(&model[..n], &inverse_bind[..k], &mut palette[..k])
        .with_joints(&joints[..k])
        .run()
        .map_err(|_| "palette")?;
    // Skinning, CHUNK vertices at a time.
    let mut base = 0;
    for part in mesh.parts() {
        let infl = part.influences().min(INFLUENCES);
        let mut first = 0;
        while first < part.num_vertices() {
            let count = CHUNK.min(part.num_vertices() - first);
            let mut bind = [Vec3::<Q16>::ZERO; CHUNK];
            let mut index = [0u16; CHUNK * INFLUENCES];
            let mut weight = [Q16::ZERO; CHUNK * INFLUENCES];
            for i in 0..count {
                bind[i] = part.position(first + i);
                for w in 0..infl {
                    // Joint indices of a part point into its palette, a list of skin joints.
                    index[i * infl + w] = part.palette(part.joint(first + i, w) as usize);
                    weight[i * infl + w] = part.weight(first + i, w);
                }
            }
            let out = positions.get_mut(base + first..base + first + count).ok_or("too many vertices")?;
            let (index, weight) = (&index[..count * infl], &weight[..count * infl]);
            SkinningJob::new(Palette::Matrices(&palette[..k]), infl, index, weight, &bind[..count], out)
                .run()
                .map_err(|_| "skinning")?;
            first += count;
        }
        base += part.num_vertices();
    }
    Ok(())
}

/// The mesh's triangle list over all parts, as 16-bit indices; returns the index count.
fn triangles(mesh: &MeshData<'_>, out: &mut [u16; INDICES]) -> Result<usize, Error> {
    let (mut count, mut base) = (0, 0);
    for part in mesh.parts() {
        for i in 0..part.num_indices() {
            *out.get_mut(count).ok_or("too many indices")? = (base + part.index(i) as usize) as u16;
            count += 1;
        }
        base += part.num_vertices();
    }
    Ok(count)
}

/// Draws the skinned mesh in bands of [`BAND_ROWS`] rows (RGB565 color, 16-bit depth: 2 KiB of
/// buffers for a 64-pixel-wide display) and turns each band into characters by brightness.
fn draw(positions: &[Vec3<Q16>], indices: &[u16], mesh: &MeshData<'_>) -> Result<[[u8; 64]; 40], Error> {
    const BAND: usize = (WIDTH * BAND_ROWS) as usize;
    // ANCHOR: bands
    let mut color = [0u16; BAND];
    let mut depth = [0u16; BAND];
    let mut bands = BandBuffer::<Rgb565, Depth16>::new(&mut color, Some(&mut depth), WIDTH, HEIGHT, BAND_ROWS)
        .map_err(|_| "band buffers")?;
    let eye = Vec3::new(Q16::ratio(5, 2), Q16::ratio(13, 10), Q16::ratio(5, 2));
    let target = Vec3::new(Q16::ZERO, Q16::ratio(17, 20), Q16::ZERO);
    // Characters are twice as tall as wide: the aspect ratio counts two pixels per character.
    let aspect = Q16::ratio(WIDTH as i32, 2 * HEIGHT as i32);
    let view_proj = Mat4::perspective_rh_gl(Q16::ratio(3, 5), aspect, Q16::HALF, Q16::from_i32(20))
        * Mat4::look_at_rh(eye, target, Vec3::Y);
    let [r, g, b, _] = mesh.color();
    let body = Mesh::new(positions, None, Indices::U16(indices), Rgb::new(r, g, b));
    let mut scratch = [CachedVertex::default(); VERTICES];
    let mut text = [[b' '; 64]; 40];
    Renderer::new(view_proj)
        .render_bands(&mut bands, &[Draw::Mesh(body)], &mut scratch, Rgb::BLACK, |y0, pixels| {
            // On a board: send `pixels` to the display's rows y0.. (SPI, parallel bus, DMA).
            for (i, &p) in pixels.iter().enumerate() {
                let c = Rgb565::unpack(p);
                let level = (c.r as usize + c.g as usize + c.b as usize) * 9 / (3 * 256);
                let (x, y) = (i % WIDTH as usize, y0 as usize + i / WIDTH as usize);
                if let Some(cell) = text.get_mut(y).and_then(|row| row.get_mut(x)) {
                    *cell = b" .:-=+*#%@"[level];
                }
            }
        })
        .map_err(|_| "render")?;
    // ANCHOR_END: bands
    Ok(text)
}
