//! The scene the bare-metal probe runs, and its checksums.
//!
//! The probe plays the baked character embedded with `include_bytes!` ([`FIXTURE`], the
//! built-in procedural humanoid reduced by `tests/tests/firmware_fixture.rs`: 22 joints, 126
//! vertices, 168 triangles, the clips `walk` and `run` with quantized keys). For each of
//! [`FRAMES`] frames, [`dt`] apart, it
//!
//! 1. advances a [`Controller`] that starts on `walk` and, before frame [`CROSSFADE_FRAME`],
//!    crossfades to `run` (phase-synced, smoothstep, [`crossfade`] long), with root motion
//!    extracted from joint 0 so the character stays in place;
//! 2. runs [`LocalToModelJob`] on the blended pose;
//! 3. turns the model matrices into the skinning palette in place, [`PALETTE_CHUNK`] joints
//!    at a time with [`SkinMatrixJob`] (inverse bind matrices read from the asset);
//! 4. skins the mesh with [`SkinningJob`] (linear blend), [`SKIN_CHUNK`] vertices per run, the
//!    bind-pose inputs read from the asset;
//! 5. draws it flat-shaded with [`sinew::raster`] into a [`WIDTH`]×[`HEIGHT`] RGB565 frame with
//!    a 16-bit depth buffer, [`BAND_ROWS`] rows at a time ([`Renderer::render_bands`]);
//!
//! and hashes the model matrices, the root motion, the skinned positions and each band's
//! pixels with FNV-1a.
//!
//! The crate is `no_std` and allocation-free, generic over the scalar ([`Scalar`]: `f32` or
//! [`Q16`]), so the firmware and a host build compute the same report and their outputs can be
//! compared line by line. Every constant comes from [`Real::ratio`] or an integer, and the
//! asset's `f32` data is converted by [`Real::from_f32`] (integer-only for [`Q16`]), so the
//! Q16.16 build contains no floating-point arithmetic.
//!
//! # Memory
//!
//! Three things live from frame to frame, in statics on the firmware: the skeleton, the
//! character's [`CharacterController`], and the [`MeshBuffers`] (skinned positions and the
//! triangle list). Every other buffer is an array on the stack of the stage that uses it:
//! [`animate`] holds the local pose and the model matrices (turned palette), [`update`] the
//! controller's scratch (the slots' sampled poses), [`draw`] the vertex scratch and one band of
//! color and depth. The two stages never overlap, so their
//! buffers share the same stack. Bind-pose vertices, weights and inverse bind matrices stay in
//! the asset (in flash) and are read [`SKIN_CHUNK`] vertices or [`PALETTE_CHUNK`] joints at a
//! time.
//!
//! The stage functions are kept out of line (`#[inline(never)]`): inlined into one caller,
//! their stack frames would add up instead of sharing the stack, and the firmware's footprint
//! report attributes code to stages by symbol.

#![no_std]
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]
#![forbid(unsafe_code)]

use core::fmt;

use sinew::asset::{Asset, MeshData, ParseError, SkinData};
use sinew::controller::{ClipEntry, Controller, ControllerError, ControllerScratch, FadeCurve};
use sinew::job::{JobError, LocalToModelJob, Palette, SkinMatrixJob, SkinningJob};
use sinew::limits::soa_count;
use sinew::math::{Mat4, SoaTransform, Vec3};
use sinew::raster::{
    BandBuffer, CachedVertex, Depth16, Draw, Indices, Light, Mesh, PixelFormat, RasterError, Renderer, Rgb, Rgb565,
    Shading,
};
use sinew::root_motion::RootMotionSettings;
use sinew::skeleton::{SkeletonError, SkeletonView};
use sinew::{Real, Q16};

/// The baked character: `core/fixtures/character.sinew`.
pub static FIXTURE: &[u8] = include_bytes!("../../../core/fixtures/character.sinew");

/// Most joints the probe's buffers hold.
pub const JOINT_CAPACITY: usize = 24;
/// SoA elements of the skeleton and poses.
pub const SOA: usize = soa_count(JOINT_CAPACITY);
/// Controller slots: the clip playing and the one fading in.
pub const SLOTS: usize = 2;
/// Controller layers: the base layer only.
pub const LAYERS: usize = 1;
/// Most tracks a clip may have (the fixture's clips have 16).
pub const TRACKS: usize = 16;
/// Most mesh vertices.
pub const MAX_VERTICES: usize = 126;
/// Most triangle indices.
pub const MAX_INDICES: usize = 3 * 168;
/// Most influences per vertex.
pub const MAX_INFLUENCES: usize = 4;
/// Vertices skinned per [`SkinningJob`] run.
pub const SKIN_CHUNK: usize = 8;
/// Joints per [`SkinMatrixJob`] run when the palette is built in place.
pub const PALETTE_CHUNK: usize = 4;
/// Frame width in pixels.
pub const WIDTH: u32 = 96;
/// Frame height in pixels.
pub const HEIGHT: u32 = 64;
/// Rows per band.
pub const BAND_ROWS: u32 = 4;
/// Pixels of one band.
pub const BAND_LEN: usize = (WIDTH * BAND_ROWS) as usize;
/// Bands per frame.
pub const BANDS: usize = HEIGHT.div_ceil(BAND_ROWS) as usize;
/// Frames the probe computes.
pub const FRAMES: usize = 8;
/// The frame before which the crossfade to `run` starts (frames count from 1).
pub const CROSSFADE_FRAME: usize = 3;
/// The clip played first and the one crossfaded to.
pub const CLIPS: [&str; 2] = ["walk", "run"];
/// The background color.
pub const CLEAR: Rgb = Rgb::new(16, 16, 24);

/// Seconds between frames: 1/10.
#[must_use]
pub fn dt<R: Real>() -> R {
    R::ratio(1, 10)
}

/// Length of the crossfade in seconds: 1/2.
#[must_use]
pub fn crossfade<R: Real>() -> R {
    R::ratio(1, 2)
}

/// The controller of one character.
pub type CharacterController<R> = Controller<R, SOA, SLOTS, LAYERS, TRACKS>;
/// The working memory of a controller update (one per thread, not per character).
pub type CharacterScratch<R> = ControllerScratch<R, SOA, SLOTS, LAYERS>;

/// A scalar the probe can run in and hash.
pub trait Scalar: Real {
    /// The name printed in the report header.
    const NAME: &'static str;
    /// The value's bit pattern (`f32::to_bits`, or the raw Q16.16 bits).
    fn bits(self) -> u32;
}

impl Scalar for f32 {
    const NAME: &'static str = "f32";
    #[inline]
    fn bits(self) -> u32 {
        self.to_bits()
    }
}

impl Scalar for Q16 {
    const NAME: &'static str = "q16";
    #[inline]
    fn bits(self) -> u32 {
        self.to_bits() as u32
    }
}

/// 32-bit FNV-1a over little-endian words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fnv1a(u32);

impl Default for Fnv1a {
    fn default() -> Self {
        Self::new()
    }
}

impl Fnv1a {
    /// The FNV-1a offset basis.
    #[must_use]
    pub const fn new() -> Self {
        Fnv1a(0x811c_9dc5)
    }
    /// Hashes the four bytes of `w`, least significant first.
    pub fn word(&mut self, w: u32) {
        for b in w.to_le_bytes() {
            self.0 = (self.0 ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
    }
    /// Hashes a scalar's bit pattern.
    pub fn scalar<R: Scalar>(&mut self, v: R) {
        self.word(v.bits());
    }
    /// Hashes `x`, `y`, `z`.
    pub fn vec3<R: Scalar>(&mut self, v: &Vec3<R>) {
        self.scalar(v.x);
        self.scalar(v.y);
        self.scalar(v.z);
    }
    /// Hashes the 16 elements, column by column.
    pub fn mat4<R: Scalar>(&mut self, m: &Mat4<R>) {
        for c in &m.cols {
            for &v in c {
                self.scalar(v);
            }
        }
    }
    /// The hash so far.
    #[must_use]
    pub const fn finish(self) -> u32 {
        self.0
    }
}

/// Why the probe failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeError {
    /// The asset was refused.
    Asset(ParseError),
    /// The asset has no skeleton, skin, skinned mesh or one of [`CLIPS`].
    Incomplete,
    /// The skeleton was refused, or is larger than [`JOINT_CAPACITY`].
    Skeleton(SkeletonError),
    /// The skin's joints are not the skeleton's joints in order (the palette is built in
    /// place over the model matrices, which needs skin joint `i` to be joint `i`).
    SkinOrder,
    /// The mesh has more than [`MAX_VERTICES`] vertices, [`MAX_INDICES`] indices or
    /// [`MAX_INFLUENCES`] influences per vertex.
    MeshTooLarge,
    /// The controller refused a call.
    Controller(ControllerError),
    /// A job was refused.
    Job(JobError),
    /// The renderer refused the frame.
    Raster(RasterError),
    /// Writing the report failed.
    Output,
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Asset(e) => write!(f, "asset: {e}"),
            Self::Incomplete => f.write_str("the asset lacks a skeleton, a skin, a skinned mesh or a clip"),
            Self::Skeleton(e) => write!(f, "skeleton: {e}"),
            Self::SkinOrder => f.write_str("the skin's joints are not the skeleton's joints in order"),
            Self::MeshTooLarge => f.write_str("the mesh exceeds the probe's buffers"),
            Self::Controller(e) => write!(f, "controller: {e}"),
            Self::Job(e) => write!(f, "job: {e}"),
            Self::Raster(e) => write!(f, "raster: {e}"),
            Self::Output => f.write_str("writing the report failed"),
        }
    }
}

impl core::error::Error for ProbeError {}

impl From<ParseError> for ProbeError {
    fn from(e: ParseError) -> Self {
        Self::Asset(e)
    }
}

impl From<SkeletonError> for ProbeError {
    fn from(e: SkeletonError) -> Self {
        Self::Skeleton(e)
    }
}

impl From<ControllerError> for ProbeError {
    fn from(e: ControllerError) -> Self {
        Self::Controller(e)
    }
}

impl From<JobError> for ProbeError {
    fn from(e: JobError) -> Self {
        Self::Job(e)
    }
}

impl From<RasterError> for ProbeError {
    fn from(e: RasterError) -> Self {
        Self::Raster(e)
    }
}

impl From<fmt::Error> for ProbeError {
    fn from(_: fmt::Error) -> Self {
        Self::Output
    }
}

/// The parsed asset and what the frames need from it: the clips, the skin, the mesh, its color,
/// and the camera.
#[derive(Debug, Clone, Copy)]
pub struct Scene<'a, R> {
    /// The asset.
    pub asset: Asset<'a>,
    /// [`CLIPS`], in order.
    pub clips: [ClipEntry<'a, R>; 2],
    /// The mesh's skin.
    pub skin: SkinData<'a>,
    /// The skinned mesh.
    pub mesh: MeshData<'a>,
    /// Vertices over all parts of the mesh.
    pub vertices: usize,
    /// Triangle indices over all parts of the mesh.
    pub indices: usize,
    /// Influences per vertex (the largest over the parts).
    pub influences: usize,
    /// The mesh's base color.
    pub color: Rgb,
    /// Projection × view.
    pub view_proj: Mat4<R>,
}

impl<'a, R: Scalar> Scene<'a, R> {
    /// Parses `bytes` and checks that the probe's buffers hold what it describes.
    ///
    /// # Errors
    ///
    /// [`ProbeError::Asset`], [`ProbeError::Incomplete`], [`ProbeError::Skeleton`] (more than
    /// [`JOINT_CAPACITY`] joints), [`ProbeError::SkinOrder`] or [`ProbeError::MeshTooLarge`].
    #[inline(never)]
    pub fn new(bytes: &'a [u8]) -> Result<Self, ProbeError> {
        let asset = Asset::parse(bytes)?;
        let clip = |name: &str| asset.clip_by_name(name).map(ClipEntry::new).ok_or(ProbeError::Incomplete);
        let clips = [clip(CLIPS[0])?, clip(CLIPS[1])?];
        let mesh = (0..asset.num_meshes()).filter_map(|i| asset.mesh(i)).find(|m| m.skin().is_some());
        let mesh = mesh.ok_or(ProbeError::Incomplete)?;
        let skin = mesh.skin().and_then(|s| asset.skin(s)).ok_or(ProbeError::Incomplete)?;
        let joints = asset.skeleton().ok_or(ProbeError::Incomplete)?.num_joints();
        if joints > JOINT_CAPACITY {
            return Err(SkeletonError::TooManyJoints { count: joints, capacity: JOINT_CAPACITY }.into());
        }
        // The parser checked every skin joint is a skeleton joint, so this also bounds the
        // skin's length by the skeleton's.
        if (0..skin.num_joints()).any(|i| skin.joint(i) as usize != i) {
            return Err(ProbeError::SkinOrder);
        }
        let (mut vertices, mut indices, mut influences) = (0, 0, 0);
        for part in mesh.parts() {
            vertices += part.num_vertices();
            indices += part.num_indices();
            influences = influences.max(part.influences());
        }
        if vertices > MAX_VERTICES || indices > MAX_INDICES || influences > MAX_INFLUENCES {
            return Err(ProbeError::MeshTooLarge);
        }
        let [r, g, b, _] = mesh.color();
        Ok(Scene {
            asset,
            clips,
            skin,
            mesh,
            vertices,
            indices,
            influences,
            color: Rgb::new(r, g, b),
            view_proj: view_proj(),
        })
    }

    /// The asset's skeleton.
    ///
    /// # Errors
    ///
    /// [`ProbeError::Incomplete`] without a skeleton, [`ProbeError::Skeleton`] when it does not
    /// fit [`JOINT_CAPACITY`].
    #[inline(never)]
    pub fn skeleton(&self) -> Result<sinew::skeleton::Skeleton<R, SOA>, ProbeError> {
        Ok(self.asset.skeleton().ok_or(ProbeError::Incomplete)?.to_skeleton()?)
    }
}

/// The camera: from the character's front left (it faces +Z), a little above the hips, looking
/// at them; a vertical field of view of 0.6 rad (34°), planes at 1/2 and 20.
#[must_use]
pub fn view_proj<R: Real>() -> Mat4<R> {
    let eye = Vec3::new(R::ratio(5, 2), R::ratio(13, 10), R::ratio(5, 2));
    let target = Vec3::new(R::ZERO, R::ratio(17, 20), R::ZERO);
    let aspect = R::ratio(WIDTH as i32, HEIGHT as i32);
    Mat4::perspective_rh_gl(R::ratio(3, 5), aspect, R::HALF, R::from_i32(20)) * Mat4::look_at_rh(eye, target, Vec3::Y)
}

/// The light: from above, on the camera's side of the character (the direction towards it is
/// `(1, 2, 2)`), ambient 1/4, diffuse 3/4.
#[must_use]
pub fn light<R: Real>() -> Light<R> {
    Light { direction: Vec3::new(R::ONE, R::TWO, R::TWO), ambient: R::ratio(1, 4), diffuse: R::ratio(3, 4) }
}

/// Puts `walk` in slot 0 of `controller` at full weight and `run` in slot 1, with root motion
/// on.
///
/// # Errors
///
/// [`ProbeError::Controller`] (a clip with more than [`TRACKS`] tracks).
#[inline(never)]
pub fn start<R: Scalar>(controller: &mut CharacterController<R>, scene: &Scene<'_, R>) -> Result<(), ProbeError> {
    controller.set_root_motion(Some(RootMotionSettings::default()));
    for (slot, entry) in scene.clips.iter().enumerate() {
        controller.assign(slot, 0, slot, &entry.clip)?;
    }
    controller.set_weight(0, R::ONE)?;
    Ok(())
}

/// Advances `controller` to frame `frame` (starting the crossfade before [`CROSSFADE_FRAME`]),
/// blending into `pose`. The controller's scratch (the slots' sampled poses) is an array on this
/// function's stack: it lives only while the controller updates.
///
/// # Errors
///
/// [`ProbeError::Controller`] (`pose` too short for the skeleton, among others).
#[inline(never)]
pub fn update<R: Scalar>(
    controller: &mut CharacterController<R>,
    scene: &Scene<'_, R>,
    skeleton: SkeletonView<'_, R>,
    frame: usize,
    pose: &mut [SoaTransform<R>],
) -> Result<(), ProbeError> {
    if frame == CROSSFADE_FRAME {
        controller.crossfade(1, crossfade(), FadeCurve::SmoothStep, true)?;
    }
    let mut scratch = CharacterScratch::new();
    controller.update(dt(), &scene.clips, skeleton, &mut scratch, pose, |_| {})?;
    Ok(())
}

/// Computes the model matrices of `pose` into `model` with [`LocalToModelJob`].
///
/// # Errors
///
/// [`ProbeError::Job`] (`pose` or `model` too short for the skeleton).
#[inline(never)]
pub fn local_to_model<R: Scalar>(
    skeleton: SkeletonView<'_, R>,
    pose: &[SoaTransform<R>],
    model: &mut [Mat4<R>],
) -> Result<(), ProbeError> {
    let output = model.get_mut(..skeleton.num_joints()).ok_or(ProbeError::Job(JobError::OutputTooSmall))?;
    LocalToModelJob { skeleton, root: None, input: pose, output, from: None, to: None }.run()?;
    Ok(())
}

/// Turns the model matrices of `skin`'s joints into skinning matrices in place, with
/// [`SkinMatrixJob`] on [`PALETTE_CHUNK`] joints at a time (a copy of their model matrices and
/// their inverse bind matrices on the stack). Returns the palette, `skin.num_joints()` long.
///
/// # Errors
///
/// [`ProbeError::Job`] when `model` is shorter than the skin.
#[inline(never)]
pub fn palette_in_place<'m, R: Scalar>(
    model: &'m mut [Mat4<R>],
    skin: &SkinData<'_>,
) -> Result<&'m [Mat4<R>], ProbeError> {
    let palette = model.get_mut(..skin.num_joints()).ok_or(ProbeError::Job(JobError::InputTooSmall))?;
    let mut copy = [Mat4::ZERO; PALETTE_CHUNK];
    let mut inverse_bind = [Mat4::ZERO; PALETTE_CHUNK];
    for (c, out) in palette.chunks_mut(PALETTE_CHUNK).enumerate() {
        let k = out.len();
        copy[..k].copy_from_slice(out);
        for (i, ib) in inverse_bind[..k].iter_mut().enumerate() {
            *ib = skin.inverse_bind(c * PALETTE_CHUNK + i);
        }
        SkinMatrixJob { model: &copy[..k], inverse_bind: &inverse_bind[..k], joints: None, output: out }.run()?;
    }
    Ok(palette)
}

/// Skins every vertex of the scene's mesh with `palette` (indexed by skin joint) into
/// `positions`, [`SKIN_CHUNK`] vertices per [`SkinningJob`] run; each chunk's bind-pose
/// positions, skin joints and weights are read from the asset into stack buffers first.
///
/// # Errors
///
/// [`ProbeError::MeshTooLarge`] when `positions` is shorter than the mesh or a part has more
/// than [`MAX_INFLUENCES`] influences, [`ProbeError::Job`].
#[inline(never)]
pub fn skin<R: Scalar>(scene: &Scene<'_, R>, palette: &[Mat4<R>], positions: &mut [Vec3<R>]) -> Result<(), ProbeError> {
    let mut bind = [Vec3::ZERO; SKIN_CHUNK];
    let mut joints = [0u16; SKIN_CHUNK * MAX_INFLUENCES];
    let mut weights = [R::ZERO; SKIN_CHUNK * MAX_INFLUENCES];
    let mut base = 0;
    for part in scene.mesh.parts() {
        let k = part.influences();
        if k > MAX_INFLUENCES {
            return Err(ProbeError::MeshTooLarge);
        }
        let count = part.num_vertices();
        let mut first = 0;
        while first < count {
            let n = SKIN_CHUNK.min(count - first);
            for i in 0..n {
                let v = first + i;
                bind[i] = part.position(v);
                for j in 0..k {
                    joints[i * k + j] = part.palette(part.joint(v, j) as usize);
                    weights[i * k + j] = part.weight(v, j);
                }
            }
            let out = positions.get_mut(base + first..base + first + n).ok_or(ProbeError::MeshTooLarge)?;
            SkinningJob {
                palette: Palette::Matrices(palette),
                influences: k,
                joint_indices: &joints[..n * k],
                joint_weights: &weights[..n * k],
                positions: &bind[..n],
                normals: None,
                tangents: None,
                out_positions: out,
                out_normals: None,
                out_tangents: None,
            }
            .run()?;
            first += n;
        }
        base += count;
    }
    Ok(())
}

/// The skinned positions and the triangle list of the mesh: what lives from skinning to
/// drawing.
#[derive(Debug, Clone)]
pub struct MeshBuffers<R> {
    /// Skinned positions (model space), [`Scene::vertices`] of them.
    pub positions: [Vec3<R>; MAX_VERTICES],
    /// Triangle indices over all parts.
    pub indices: [u16; MAX_INDICES],
    /// Indices in use.
    pub index_count: usize,
}

impl<R: Scalar> MeshBuffers<R> {
    /// Every buffer zeroed (all bits 0, so a static of it lands in `.bss`).
    pub const ZERO: Self =
        MeshBuffers { positions: [Vec3::ZERO; MAX_VERTICES], indices: [0; MAX_INDICES], index_count: 0 };

    /// Copies the triangle lists of the mesh's parts, offset to the parts' first vertices.
    pub fn load_indices(&mut self, scene: &Scene<'_, R>) {
        let (mut base, mut n) = (0, 0);
        for part in scene.mesh.parts() {
            for i in 0..part.num_indices() {
                if let Some(slot) = self.indices.get_mut(n) {
                    // Scene::new checked that every vertex index fits MAX_VERTICES (< 2^16).
                    *slot = (base + part.index(i) as usize) as u16;
                    n += 1;
                }
            }
            base += part.num_vertices();
        }
        self.index_count = n;
    }
}

/// Draws the skinned mesh of `mesh` in bands of `color` and `depth` (at least [`BAND_LEN`]
/// each), with `cached` (at least [`Scene::vertices`]) as the vertex scratch, and hashes each
/// band as it is emitted.
///
/// # Errors
///
/// [`ProbeError::MeshTooLarge`] when `cached` is too short, [`ProbeError::Raster`].
#[inline(never)]
pub fn draw_bands<R: Scalar>(
    scene: &Scene<'_, R>,
    mesh: &MeshBuffers<R>,
    cached: &mut [CachedVertex],
    color: &mut [u16],
    depth: &mut [u16],
) -> Result<Pixels, ProbeError> {
    let positions = mesh.positions.get(..scene.vertices).ok_or(ProbeError::MeshTooLarge)?;
    let indices = mesh.indices.get(..mesh.index_count).ok_or(ProbeError::MeshTooLarge)?;
    let cached = cached.get_mut(..scene.vertices).ok_or(ProbeError::MeshTooLarge)?;
    let mut m = Mesh::new(positions, None, Indices::U16(indices), scene.color);
    m.shading = Shading::Flat;
    let renderer = Renderer { light: light(), ..Renderer::new(scene.view_proj) };
    let mut bands = BandBuffer::<Rgb565, Depth16>::new(color, Some(depth), WIDTH, HEIGHT, BAND_ROWS)?;
    let clear = Rgb565::pack(CLEAR);
    let mut out = Pixels { bands: [0; BANDS], covered: 0 };
    let mut band = 0;
    renderer.render_bands(&mut bands, &[Draw::Mesh(m)], cached, CLEAR, |_, pixels| {
        let mut h = Fnv1a::new();
        for &p in pixels {
            h.word(u32::from(p));
            out.covered += u32::from(p != clear);
        }
        if let Some(b) = out.bands.get_mut(band) {
            *b = h.finish();
        }
        band += 1;
    })?;
    Ok(out)
}

/// What [`draw_bands`] saw of the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pixels {
    /// FNV-1a over each band's RGB565 values, in band order.
    pub bands: [u32; BANDS],
    /// Pixels that differ from [`CLEAR`].
    pub covered: u32,
}

impl Pixels {
    /// FNV-1a over the band hashes.
    #[must_use]
    pub fn hash(&self) -> u32 {
        let mut h = Fnv1a::new();
        self.bands.iter().for_each(|&b| h.word(b));
        h.finish()
    }
}

/// The checksums of the posing half of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoseSums {
    /// Slot weights of `walk` and `run` after the update, in thousandths.
    pub weights: [i32; 2],
    /// FNV-1a over the model matrices.
    pub pose: u32,
    /// FNV-1a over the accumulated root motion (translation, then yaw).
    pub root: u32,
    /// FNV-1a over the skinned positions.
    pub skin: u32,
}

/// Poses frame `frame` (from 1), hashes the model matrices, builds the palette and skins the
/// mesh into `mesh`. The local pose and the model matrices (turned palette) are arrays on this
/// function's stack: they live only while a frame is posed and skinned.
///
/// # Errors
///
/// As [`update`], [`local_to_model`], [`palette_in_place`] and [`skin`].
#[inline(never)]
pub fn animate<R: Scalar>(
    scene: &Scene<'_, R>,
    skeleton: SkeletonView<'_, R>,
    controller: &mut CharacterController<R>,
    mesh: &mut MeshBuffers<R>,
    frame: usize,
) -> Result<PoseSums, ProbeError> {
    let mut pose = [SoaTransform::IDENTITY; SOA];
    let mut model = [Mat4::IDENTITY; JOINT_CAPACITY];
    update(controller, scene, skeleton, frame, &mut pose)?;
    local_to_model(skeleton, &pose, &mut model)?;
    let mut h = Fnv1a::new();
    model.iter().take(skeleton.num_joints()).for_each(|m| h.mat4(m));
    let pose = h.finish();
    let total = controller.root_motion_total();
    let mut h = Fnv1a::new();
    h.vec3(&total.translation);
    h.scalar(total.yaw);
    let root = h.finish();
    let permille = |slot| {
        let w = controller.weight(slot).unwrap_or(R::ZERO);
        (w * R::from_i32(1000) + R::HALF).trunc_i32()
    };
    let weights = [permille(0), permille(1)];

    let palette = palette_in_place(&mut model, &scene.skin)?;
    skin(scene, palette, &mut mesh.positions)?;
    let mut h = Fnv1a::new();
    mesh.positions.iter().take(scene.vertices).for_each(|p| h.vec3(p));
    Ok(PoseSums { weights, pose, root, skin: h.finish() })
}

/// Draws the skinned mesh with [`draw_bands`]; the vertex scratch and the band are arrays on
/// this function's stack: they live only while a frame is drawn.
///
/// # Errors
///
/// As [`draw_bands`].
#[inline(never)]
pub fn draw<R: Scalar>(scene: &Scene<'_, R>, mesh: &MeshBuffers<R>) -> Result<Pixels, ProbeError> {
    let mut cached = [CachedVertex::default(); MAX_VERTICES];
    let mut color = [0u16; BAND_LEN];
    let mut depth = [0u16; BAND_LEN];
    draw_bands(scene, mesh, &mut cached, &mut color, &mut depth)
}

/// Starts the character, runs every frame and writes the report to `out`: a header line, two
/// lines per frame (`frame N walk W run W pose XXXXXXXX root XXXXXXXX skin XXXXXXXX pixels
/// XXXXXXXX covered N`, then `bands N` and the band hashes), and `checksum 0xXXXXXXXX`, the
/// FNV-1a of all frame checksums, which it also returns.
///
/// # Errors
///
/// As [`start`], [`animate`] and [`draw`], or [`ProbeError::Output`] when `out` fails.
pub fn report<R: Scalar, W: fmt::Write>(
    out: &mut W,
    scene: &Scene<'_, R>,
    skeleton: SkeletonView<'_, R>,
    controller: &mut CharacterController<R>,
    mesh: &mut MeshBuffers<R>,
) -> Result<u32, ProbeError> {
    writeln!(
        out,
        "sinew-firmware scalar {} joints {} vertices {} triangles {} influences {} frames {FRAMES} image {WIDTH}x{HEIGHT} band {BAND_ROWS}",
        R::NAME,
        skeleton.num_joints(),
        scene.vertices,
        scene.indices / 3,
        scene.influences,
    )?;
    start(controller, scene)?;
    mesh.load_indices(scene);
    let mut total = Fnv1a::new();
    for f in 1..=FRAMES {
        let s = animate(scene, skeleton, controller, mesh, f)?;
        let pixels = draw(scene, mesh)?;
        writeln!(
            out,
            "frame {f} walk {} run {} pose {:08x} root {:08x} skin {:08x} pixels {:08x} covered {}",
            s.weights[0],
            s.weights[1],
            s.pose,
            s.root,
            s.skin,
            pixels.hash(),
            pixels.covered
        )?;
        write!(out, "bands {f}")?;
        for b in pixels.bands {
            write!(out, " {b:08x}")?;
        }
        writeln!(out)?;
        for w in [s.pose, s.root, s.skin, pixels.hash()] {
            total.word(w);
        }
    }
    let sum = total.finish();
    writeln!(out, "checksum 0x{sum:08x}")?;
    Ok(sum)
}

#[cfg(test)]
mod tests {
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
        skeleton: sinew::skeleton::Skeleton<R, SOA>,
        controller: Box<CharacterController<R>>,
        mesh: Box<MeshBuffers<R>>,
    }

    /// What a frame leaves behind: the model matrices and the skinned positions.
    struct Frame<R> {
        model: Vec<Mat4<R>>,
        positions: Vec<Vec3<R>>,
    }

    impl<R: Scalar> Run<'static, R> {
        fn new() -> Self {
            let scene = Scene::<R>::new(FIXTURE).unwrap();
            let skeleton = scene.skeleton().unwrap();
            let mut controller = Box::new(CharacterController::new());
            start(&mut controller, &scene).unwrap();
            let mut mesh = Box::new(MeshBuffers::ZERO);
            mesh.load_indices(&scene);
            Run { scene, skeleton, controller, mesh }
        }

        fn frame(&mut self, f: usize) -> Frame<R> {
            let view = self.skeleton.view();
            let mut pose = [SoaTransform::IDENTITY; SOA];
            let mut model = [Mat4::IDENTITY; JOINT_CAPACITY];
            update(&mut self.controller, &self.scene, view, f, &mut pose).unwrap();
            local_to_model(view, &pose, &mut model).unwrap();
            let joints = view.num_joints();
            let out = Frame { model: model[..joints].to_vec(), positions: Vec::new() };
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
        let mut mesh =
            Mesh::new(positions, None, Indices::U16(&run.mesh.indices[..run.mesh.index_count]), run.scene.color);
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
        assert!(scene.asset.skeleton().unwrap().num_joints() <= JOINT_CAPACITY);
        assert!(scene.vertices <= MAX_VERTICES && scene.indices <= MAX_INDICES);
        assert!(scene.influences <= MAX_INFLUENCES);
        // Both clips fit the controller's cursors.
        assert!(scene.clips.iter().all(|c| c.clip.num_tracks() <= TRACKS));
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
        let mut model = [Mat4::IDENTITY; JOINT_CAPACITY];
        local_to_model(view, view.rest_pose(), &mut model).unwrap();
        let palette = palette_in_place(&mut model, &run.scene.skin).unwrap();
        let mut positions = [Vec3::ZERO; MAX_VERTICES];
        skin(&run.scene, palette, &mut positions).unwrap();
        let part = run.scene.mesh.parts().next().unwrap();
        let worst =
            (0..run.scene.vertices).map(|v| (positions[v] - part.position::<f32>(v)).length()).fold(0.0f32, f32::max);
        assert!(worst < 1.0e-5, "{worst}");
    }

    #[test]
    fn the_controller_crossfades_from_walk_to_run_in_place() {
        for expected_q16 in [false, true] {
            let mut weights = Vec::new();
            let mut roots = Vec::new();
            let mut hips = Vec::new();
            if expected_q16 {
                let mut run = Run::<Q16>::new();
                for f in 1..=FRAMES {
                    let frame = run.frame(f);
                    weights.push([0, 1].map(|s| run.controller.weight(s).unwrap().to_f32()));
                    roots.push(run.controller.root_motion_total().translation.z.to_f32());
                    hips.push(frame.model[1].translation().to_array().map(|v| v.to_f32()));
                }
            } else {
                let mut run = Run::<f32>::new();
                for f in 1..=FRAMES {
                    let frame = run.frame(f);
                    weights.push([0, 1].map(|s| run.controller.weight(s).unwrap()));
                    roots.push(run.controller.root_motion_total().translation.z);
                    hips.push(frame.model[1].translation().to_array());
                }
            }
            for (i, w) in weights.iter().enumerate() {
                // Smoothstep over the half second starting before frame CROSSFADE_FRAME.
                let s = (((i + 1) as f32 - (CROSSFADE_FRAME - 1) as f32) * 0.1 / 0.5).clamp(0.0, 1.0);
                let run = s * s * (3.0 - 2.0 * s);
                assert!((w[1] - run).abs() < 1.0e-3 && (w[0] - (1.0 - run)).abs() < 1.0e-3, "frame {}: {w:?}", i + 1);
            }
            // Root motion moves the character forward (+Z) by 0.1 s of walking to 0.1 s of
            // running per frame, and keeps the hips over the origin.
            let mut prev = 0.0;
            for (i, &z) in roots.iter().enumerate() {
                let step = z - prev;
                assert!(step > 0.05 && step < 0.45, "frame {}: step {step}", i + 1);
                prev = z;
                let [x, y, hz] = hips[i];
                assert!(x.abs() < 0.1 && hz.abs() < 0.25 && y > 0.7 && y < 1.1, "frame {}: hips {:?}", i + 1, hips[i]);
            }
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
            let covered: Vec<(usize, usize)> =
                (0..w * h).filter(|&i| full[i] != clear).map(|i| (i % w, i / w)).collect();
            assert_eq!(pixels.covered as usize, covered.len());
            // The character covers 4-15 % of the frame and stays clear of its border.
            assert!((250..1000).contains(&covered.len()), "frame {f}: {} pixels", covered.len());
            assert!(
                covered.iter().all(|&(x, y)| x > 0 && y > 0 && x < w - 1 && y < h - 1),
                "frame {f} touches the border"
            );
        }
    }

    #[test]
    fn frames_differ_and_a_fresh_run_repeats_the_report() {
        let mut sums = Vec::new();
        let mut reports = Vec::new();
        for _ in 0..2 {
            let scene = Scene::<f32>::new(FIXTURE).unwrap();
            let skeleton = scene.skeleton().unwrap();
            let mut controller = Box::new(CharacterController::new());
            let mut mesh = Box::new(MeshBuffers::ZERO);
            let mut text = String::new();
            sums.push(report(&mut text, &scene, skeleton.view(), &mut controller, &mut mesh).unwrap());
            reports.push(text);
        }
        assert_eq!(sums[0], sums[1]);
        assert_eq!(reports[0], reports[1]);
        let lines: Vec<&str> = reports[0].lines().collect();
        assert_eq!(lines.len(), 2 + 2 * FRAMES);
        assert_eq!(lines[lines.len() - 1], std::format!("checksum 0x{:08x}", sums[0]));
        let frames: Vec<Vec<&str>> =
            lines.iter().filter(|l| l.starts_with("frame ")).map(|l| l.split(' ').collect::<Vec<_>>()).collect();
        // Fields 7, 9, 11, 13: pose, root, skin and pixel hashes; all change every frame.
        for (i, a) in frames.iter().enumerate() {
            for b in &frames[i + 1..] {
                for k in [7, 9, 11, 13] {
                    assert_ne!(a[k], b[k], "{a:?} vs {b:?}");
                }
            }
        }
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
        std::println!(
            "Q16.16 vs f32 over {FRAMES} frames: model matrices {model:.2e}, skinned positions {position:.2e} m"
        );
        // A Q16.16 step is 1.5e-5; the hierarchy is 7 joints deep and the arms reach 0.7 m.
        assert!(model > 0.0 && model < 1.0e-3, "model matrices off by {model}");
        assert!(position > 0.0 && position < 1.0e-3, "positions off by {position}");
    }
}
