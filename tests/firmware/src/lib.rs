//! The scene the bare-metal probe runs, and its checksums.
//!
//! The probe plays the baked character embedded with `include_bytes!` ([`FIXTURE`], the
//! built-in procedural humanoid reduced by `tests/tests/firmware_fixture.rs`: 22 joints, 126
//! vertices, 168 triangles, the clips `walk` and `run` with packed keys, and the animation graph
//! `character`). The graph is read from the asset into fixed buffers ([`GraphStorage`]) and
//! runs on a [`StateMachine`] ([`CharacterMachine`]): the state `walk`, and `stride`, a
//! phase-synced 1D blend space of `walk` (speed 1) and `run` (speed 3); an inertialized switch
//! to `stride` once `speed` exceeds 1.5, and a synced crossfade back to `walk` on the trigger
//! `stop`. For each of [`FRAMES`] frames, [`dt`] apart, it
//!
//! 1. sets the graph's parameters from the script ([`speed`] ramps from 1 up to 2.6, so the
//!    machine switches to `stride` at frame 3; before [`STOP_FRAME`] it drops back to 1 and
//!    `stop` is fired, so the machine crossfades back to `walk`) and updates the state
//!    machine, with root motion extracted from joint 0 so the character stays in place;
//! 2. runs [`LocalToModelJob`] on the blended pose;
//! 3. swings the right arm ([`SPRING_CHAIN`]: upper arm, forearm, hand) as a spring chain with
//!    [`SpringBoneJob`] against a sphere on the chest ([`SPRING_COLLIDER`]), in the pose and its
//!    model matrices: reset on the first frame, then one step of [`spring_dt`] (1/60 s) a frame
//!    ([`spring`]);
//! 4. turns the model matrices into the skinning palette in place, [`PALETTE_CHUNK`] joints
//!    at a time with [`SkinMatrixJob`] (inverse bind matrices read from the asset);
//! 5. skins the mesh with [`SkinningJob`] (linear blend), [`SKIN_CHUNK`] vertices per run, the
//!    bind-pose inputs read from the asset;
//! 6. draws it flat-shaded with [`sinew::raster`] into a [`WIDTH`]×[`HEIGHT`] RGB565 frame with
//!    a 16-bit depth buffer, [`BAND_ROWS`] rows at a time ([`Renderer::render_bands`]);
//! 7. retargets the blended pose with [`RetargetJob`] onto the character's own skeleton with
//!    its hips' path scaled by 5/4 ([`retarget`]), and runs local-to-model on the result;
//! 8. solves the left leg ([`IK_CHAIN`]: thigh, shin, foot, toe) of the blended pose with
//!    [`IkChainJob`]'s FABRIK towards a target that moves with the frame ([`ik_offset`]),
//!    applies the corrections to a copy of the pose and runs local-to-model on it ([`ik`]);
//!
//! and hashes the graph's state (current state, transition and its progress), the model
//! matrices (before the spring step), the root motion, the spring joints' model matrices, the
//! skinned positions, each band's pixels, the retargeted model matrices and the model matrices
//! after IK with FNV-1a, and counts the spring chain's collider contacts.
//!
//! The crate is `no_std` and allocation-free, generic over the scalar ([`Scalar`]: `f32` or
//! [`Q16`]), so the firmware and a host build compute the same report and their outputs can be
//! compared line by line. Every constant comes from [`Real::ratio`] or an integer, and the
//! asset's `f32` data is converted by [`Real::from_f32`] (integer-only for [`Q16`]), so the
//! Q16.16 build contains no floating-point arithmetic.
//!
//! # Memory
//!
//! Five things live from frame to frame, in statics on the firmware: the skeleton, the graph's
//! lists ([`GraphStorage`]), the character's [`CharacterMachine`] (its controller, parameters
//! and inertialization state), the [`MeshBuffers`] (skinned positions and the triangle
//! list) and the spring chain's tails ([`SpringState`]). Every other buffer is an array on the
//! stack of the stage that uses it: [`animate`] holds the local pose, [`update`] the
//! controller's scratch (the slots' sampled poses), [`pose_and_skin`] the model matrices
//! (brought up to date by the spring step, then turned palette), [`retarget`] and
//! [`ik`] their model matrices and the poses they compute, [`draw`] the vertex scratch and one
//! band of color and depth. The stages never overlap, so their buffers share the same stack.
//! Bind-pose vertices, weights and inverse bind matrices stay in the asset (in flash) and are
//! read [`SKIN_CHUNK`] vertices or [`PALETTE_CHUNK`] joints at a time.
//!
//! The stage functions are kept out of line (`#[inline(never)]`): inlined into one caller,
//! their stack frames would add up instead of sharing the stack, and the firmware's footprint
//! report attributes code to stages by symbol.

#![no_std]
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]
#![forbid(unsafe_code)]

use core::fmt;

use sinew::asset::{Asset, GraphBuffers, GraphData, MeshData, ParseError, SkinData};
use sinew::controller::{ClipEntry, ControllerError, ControllerScratch};
use sinew::graph::{BlendPoint, Condition, Graph, GraphError, Parameter, State, StateMachine, Transition};
use sinew::job::ik::{apply_chain_corrections, ChainReport, ChainSolver, IkChainJob};
use sinew::job::retarget::{world_rotations, RetargetJob, RetargetJoint, RetargetRoot, NO_SOURCE};
use sinew::job::spring::{
    ColliderShape, SpringBoneJob, SpringBones, SpringCollider, SpringJoint, SpringReport, SpringTail, NO_JOINT,
};
use sinew::job::{JobError, LocalToModelJob, Palette, SkinMatrixJob, SkinningJob};
use sinew::math::{Mat4, Quat, SoaTransform, Vec3};
use sinew::raster::{
    linear_to_srgb8, BandBuffer, CachedVertex, Depth16, Draw, Indices, Light, Mesh, PixelFormat, RasterError, Renderer,
    Rgb, Rgb565, Shading,
};
use sinew::root_motion::RootMotionSettings;
use sinew::skeleton::{SkeletonError, SkeletonView};
use sinew::{Real, Q16};

/// The baked character: `core/fixtures/character.sinew`.
pub static FIXTURE: &[u8] = include_bytes!("../../../core/fixtures/character.sinew");

sinew::capacity! {
    /// The character's capacities: 24 joints (the probe's buffers: skeleton, poses, matrices);
    /// 3 clip slots, `stride`'s two clips and `walk`'s during the crossfade back (the
    /// inertialized switch to `stride` plays `stride` alone); one layer; 16 tracks a clip (the
    /// fixture's clips have 16); 2 graph parameters (the fixture's graph has `speed` and
    /// `stop`).
    pub struct Probe { joints: 24, slots: 3, tracks: 16, params: 2 }
}
/// Most graph states.
pub const MAX_STATES: usize = 2;
/// Most graph transitions.
pub const MAX_TRANSITIONS: usize = 2;
/// Most blend points over all blend spaces of the graph.
pub const MAX_POINTS: usize = 2;
/// Most transition conditions over the graph.
pub const MAX_CONDITIONS: usize = 2;
/// The graph section the probe runs.
pub const GRAPH: &str = "character";
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
pub const BAND_ROWS: u32 = 2;
/// Pixels of one band.
pub const BAND_LEN: usize = (WIDTH * BAND_ROWS) as usize;
/// Bands per frame.
pub const BANDS: usize = HEIGHT.div_ceil(BAND_ROWS) as usize;
/// Frames the probe computes.
pub const FRAMES: usize = 10;
/// The frame before which `speed` drops back to 1 and `stop` is fired (frames count from 1).
pub const STOP_FRAME: usize = 8;
/// The asset's clips, in file order (the graph's clip indices are the file's).
pub const CLIPS: [&str; 2] = ["walk", "run"];
/// The background color.
pub const CLEAR: Rgb = Rgb::new(16, 16, 24);

/// Seconds between frames: 1/10.
#[must_use]
pub fn dt<R: Real>() -> R {
    R::ratio(1, 10)
}

/// The graph's `speed` set before frame `frame` (from 1): 1 at frame 1, rising by 2/5 a frame
/// up to 13/5, and 1 again from [`STOP_FRAME`] on.
#[must_use]
pub fn speed<R: Real>(frame: usize) -> R {
    if frame >= STOP_FRAME {
        return R::ONE;
    }
    let steps = frame.saturating_sub(1).min(4) as i32;
    R::ONE + R::ratio(2 * steps, 5)
}

/// The state machine of one character, over the graph's lists borrowed for `'g`.
pub type CharacterMachine<'g, R> = StateMachine<'g, R, Probe>;
/// The working memory of a state-machine update (one per thread, not per character).
pub type CharacterScratch<R> = ControllerScratch<R, Probe>;

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
    /// The asset has no skeleton, skin, skinned mesh or graph [`GRAPH`], its clips are not
    /// [`CLIPS`], or its skeleton lacks a joint of [`IK_CHAIN`] or [`SPRING_CHAIN`], or
    /// [`SPRING_COLLIDER`].
    Incomplete,
    /// The skeleton was refused, or is larger than [`Probe::JOINTS`].
    Skeleton(SkeletonError),
    /// The skin's joints are not the skeleton's joints in order (the palette is built in
    /// place over the model matrices, which needs skin joint `i` to be joint `i`).
    SkinOrder,
    /// The mesh has more than [`MAX_VERTICES`] vertices, [`MAX_INDICES`] indices or
    /// [`MAX_INFLUENCES`] influences per vertex.
    MeshTooLarge,
    /// The controller refused a call.
    Controller(ControllerError),
    /// The graph was refused (by the state machine or by [`GraphStorage`]'s capacities), or a
    /// state-machine call was.
    Graph(GraphError),
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
            Self::Incomplete => f.write_str(
                "the asset lacks a skeleton, a skin, a skinned mesh, the graph, the clips, the IK chain or the \
                 spring chain",
            ),
            Self::Skeleton(e) => write!(f, "skeleton: {e}"),
            Self::SkinOrder => f.write_str("the skin's joints are not the skeleton's joints in order"),
            Self::MeshTooLarge => f.write_str("the mesh exceeds the probe's buffers"),
            Self::Controller(e) => write!(f, "controller: {e}"),
            Self::Graph(e) => write!(f, "graph: {e}"),
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

impl From<GraphError> for ProbeError {
    fn from(e: GraphError) -> Self {
        Self::Graph(e)
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

/// The parsed asset and what the frames need from it: the clips, the graph, the skin, the
/// mesh, its color, and the camera.
#[derive(Debug, Clone, Copy)]
pub struct Scene<'a, R> {
    /// The asset.
    pub asset: Asset<'a>,
    /// The asset's clips, [`CLIPS`] in file order.
    pub clips: [ClipEntry<'a, R>; 2],
    /// The graph section [`GRAPH`].
    pub graph: GraphData<'a>,
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
    /// [`Probe::JOINTS`] joints), [`ProbeError::SkinOrder`] or [`ProbeError::MeshTooLarge`].
    #[inline(never)]
    pub fn new(bytes: &'a [u8]) -> Result<Self, ProbeError> {
        let asset = Asset::parse(bytes)?;
        let clip = |i: usize| {
            let c = asset.clip(i).filter(|c| c.name() == CLIPS[i]);
            c.map(ClipEntry::new).ok_or(ProbeError::Incomplete)
        };
        if asset.num_clips() != CLIPS.len() {
            return Err(ProbeError::Incomplete);
        }
        let clips = [clip(0)?, clip(1)?];
        let graph = asset.graph_by_name(GRAPH).ok_or(ProbeError::Incomplete)?;
        let mesh = (0..asset.num_meshes()).filter_map(|i| asset.mesh(i)).find(|m| m.skin().is_some());
        let mesh = mesh.ok_or(ProbeError::Incomplete)?;
        let skin = mesh.skin().and_then(|s| asset.skin(s)).ok_or(ProbeError::Incomplete)?;
        let joints = asset.skeleton().ok_or(ProbeError::Incomplete)?.num_joints();
        if joints > Probe::JOINTS {
            return Err(SkeletonError::TooManyJoints { count: joints, capacity: Probe::JOINTS }.into());
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
        // The asset's color is linear; a plain mesh draws the display (sRGB) code it is given.
        let [r, g, b, _] = mesh.color().map(linear_to_srgb8);
        Ok(Scene {
            asset,
            clips,
            graph,
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
    /// fit [`Probe::JOINTS`].
    #[inline(never)]
    pub fn skeleton(&self) -> Result<sinew::skeleton::Skeleton<R, { Probe::SOA }>, ProbeError> {
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

/// The graph's lists, filled from the asset's graph section by [`GraphStorage::load`]: what
/// the state machine's [`Graph`] borrows, for as long as the machine lives.
#[derive(Debug, Clone)]
pub struct GraphStorage<'a, R> {
    parameters: [Parameter<'a, R>; Probe::PARAMS],
    states: [State<'a>; MAX_STATES],
    transitions: [Transition<R>; MAX_TRANSITIONS],
    points: [BlendPoint<R>; MAX_POINTS],
    conditions: [Condition<R>; MAX_CONDITIONS],
}

impl<R: Scalar> Default for GraphStorage<'_, R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a, R: Scalar> GraphStorage<'a, R> {
    /// Empty lists (placeholder entries, overwritten by [`load`](Self::load)).
    #[must_use]
    pub fn new() -> Self {
        GraphStorage {
            parameters: [Parameter::default(); Probe::PARAMS],
            states: [State::default(); MAX_STATES],
            transitions: [Transition::default(); MAX_TRANSITIONS],
            points: [BlendPoint::default(); MAX_POINTS],
            conditions: [Condition::default(); MAX_CONDITIONS],
        }
    }

    /// Fills the lists with `data`, a graph over the scene's clips, in `R`, and returns the
    /// validated [`Graph`] over them. Nothing is allocated.
    ///
    /// # Errors
    ///
    /// [`ProbeError::Graph`]: [`GraphError::Storage`] when a list of the graph is longer than
    /// this storage's, or what [`Graph::validate`] finds.
    #[inline(never)]
    pub fn load(&mut self, data: &GraphData<'a>) -> Result<Graph<'_, R>, ProbeError> {
        let buffers = GraphBuffers {
            parameters: &mut self.parameters,
            states: &mut self.states,
            transitions: &mut self.transitions,
            points: &mut self.points,
            conditions: &mut self.conditions,
        };
        Ok(data.to_graph(buffers, CLIPS.len())?)
    }
}

/// Makes `machine` (an [`CharacterMachine::empty`] one, in a static on the firmware) the state
/// machine of `graph` over the scene's clips, in place: in the graph's initial state, with root
/// motion on.
///
/// # Errors
///
/// [`ProbeError::Graph`]: the graph needs more than [`Probe::SLOTS`] slots or [`Probe::PARAMS`] parameters,
/// or a clip has more than [`Probe::TRACKS`] tracks (`machine` is then unchanged).
#[inline(never)]
pub fn start<'g, R: Scalar>(
    machine: &mut CharacterMachine<'g, R>,
    scene: &Scene<'_, R>,
    graph: Graph<'g, R>,
) -> Result<(), ProbeError> {
    machine.reset(graph, &scene.clips)?;
    machine.set_root_motion(Some(RootMotionSettings::default())).map_err(ProbeError::Graph)?;
    Ok(())
}

/// The graph parameter called `name`.
fn parameter<R: Scalar>(machine: &CharacterMachine<'_, R>, name: &str) -> Result<usize, ProbeError> {
    machine.graph().parameter(name).ok_or(ProbeError::Graph(GraphError::UnknownParameter))
}

/// Sets the graph's parameters for frame `frame` ([`speed`]; `stop` fired at [`STOP_FRAME`])
/// and advances `machine` by [`dt`], blending into `pose`. The state machine's scratch (the
/// slots' sampled poses) is an array on this function's stack, built there in place from a
/// constant: it lives only while the machine updates, in stack the drawing reuses (a static
/// would keep it for good).
///
/// # Errors
///
/// [`ProbeError::Graph`] (`pose` too short for the skeleton, a graph without `speed` or
/// `stop`, among others).
#[inline(never)]
pub fn update<R: Scalar>(
    machine: &mut CharacterMachine<'_, R>,
    scene: &Scene<'_, R>,
    skeleton: SkeletonView<'_, R>,
    frame: usize,
    pose: &mut [SoaTransform<R>],
) -> Result<(), ProbeError> {
    machine.set_float(parameter(machine, "speed")?, speed(frame))?;
    if frame == STOP_FRAME {
        machine.fire(parameter(machine, "stop")?, true)?;
    }
    let mut scratch = const { CharacterScratch::new() };
    machine.update(dt(), &scene.clips, skeleton, &mut scratch, pose, |_| {})?;
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
    /// The graph's current state after the update.
    pub state: usize,
    /// The transition in progress after the update, if any.
    pub transition: Option<usize>,
    /// Its progress, in thousandths (1000 without a transition).
    pub progress: i32,
    /// FNV-1a over the current state, the transition (`u32::MAX` for none) and the progress's
    /// bits.
    pub graph: u32,
    /// Weights of the clips `walk` and `run` after the update (summed over the slots playing
    /// each), in thousandths.
    pub weights: [i32; 2],
    /// FNV-1a over the model matrices of the blended pose (before the spring step).
    pub pose: u32,
    /// FNV-1a over the accumulated root motion (translation, then yaw).
    pub root: u32,
    /// FNV-1a over the skinned positions.
    pub skin: u32,
    /// FNV-1a over the model matrices of the retargeted pose ([`retarget`]).
    pub retarget: u32,
    /// FNV-1a over the model matrices of the pose after chain IK ([`ik`]).
    pub ik: u32,
    /// FNV-1a over the spring joints' model matrices after the frame's spring step
    /// ([`spring`]).
    pub spring: u32,
    /// Collider contacts of the frame's spring step.
    pub contacts: u32,
}

/// Poses frame `frame` (from 1), hashes the graph's state, the root motion, the model matrices,
/// the retargeted pose and the pose after IK, swings the spring chain (its tails in `springs`)
/// and hashes it, and skins the mesh (in `mesh`) and hashes it. The local pose is an array on
/// this function's stack: it lives only while a frame is posed and skinned.
///
/// # Errors
///
/// As [`update`], [`retarget`], [`ik`] and [`pose_and_skin`].
#[inline(never)]
pub fn animate<R: Scalar>(
    scene: &Scene<'_, R>,
    skeleton: SkeletonView<'_, R>,
    machine: &mut CharacterMachine<'_, R>,
    mesh: &mut MeshBuffers<R>,
    springs: &mut SpringState<R>,
    frame: usize,
) -> Result<PoseSums, ProbeError> {
    let mut pose = [SoaTransform::IDENTITY; Probe::SOA];
    update(machine, scene, skeleton, frame, &mut pose)?;
    let retarget = retarget(skeleton, &pose)?;
    let ik = ik(skeleton, &pose, frame)?;
    let posed = pose_and_skin(scene, skeleton, &mut pose, springs, frame, mesh)?;
    let permille = |w: R| (w * R::from_i32(1000) + R::HALF).trunc_i32();
    let status = machine.transition();
    let progress = status.map_or(R::ONE, |t| t.progress);
    let mut h = Fnv1a::new();
    h.word(machine.current_state() as u32);
    h.word(status.map_or(u32::MAX, |t| t.transition as u32));
    h.scalar(progress);
    let graph = h.finish();
    let total = machine.root_motion_total();
    let mut h = Fnv1a::new();
    h.vec3(&total.translation);
    h.scalar(total.yaw);
    let root = h.finish();
    let controller = machine.controller();
    let mut weights = [R::ZERO; 2];
    for slot in 0..Probe::SLOTS {
        if let (Some(w), Some(c)) = (controller.weight(slot), controller.clip_of(slot)) {
            if let Some(sum) = weights.get_mut(c) {
                *sum += w;
            }
        }
    }
    Ok(PoseSums {
        state: machine.current_state(),
        transition: status.map(|t| t.transition),
        progress: permille(progress),
        graph,
        weights: weights.map(permille),
        pose: posed.pose,
        root,
        skin: posed.skin,
        retarget,
        ik,
        spring: posed.spring,
        contacts: posed.contacts,
    })
}

/// What [`pose_and_skin`] hashed and counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posed {
    /// FNV-1a over the animated pose's model matrices (before the spring step).
    pub pose: u32,
    /// FNV-1a over the spring joints' model matrices after the step ([`spring`]).
    pub spring: u32,
    /// Collider contacts of the spring step.
    pub contacts: u32,
    /// FNV-1a over the skinned positions.
    pub skin: u32,
}

/// Computes the model matrices of `pose` and hashes them, swings the spring chain in `pose`
/// and the model matrices for frame `frame` ([`spring`], tails in `springs`), builds the
/// palette in place from the result and skins the mesh into `mesh`, and hashes the skinned
/// positions. The model matrices (turned palette) are an array on this function's stack, which
/// does not overlap the state machine's update; the spring job works in them and in `pose`, so
/// the stage takes no buffers of its own.
///
/// # Errors
///
/// As [`local_to_model`], [`spring`], [`palette_in_place`] and [`skin`].
#[inline(never)]
pub fn pose_and_skin<R: Scalar>(
    scene: &Scene<'_, R>,
    skeleton: SkeletonView<'_, R>,
    pose: &mut [SoaTransform<R>],
    springs: &mut SpringState<R>,
    frame: usize,
    mesh: &mut MeshBuffers<R>,
) -> Result<Posed, ProbeError> {
    let mut model = [Mat4::IDENTITY; Probe::JOINTS];
    local_to_model(skeleton, pose, &mut model)?;
    let mut h = Fnv1a::new();
    model.iter().take(skeleton.num_joints()).for_each(|m| h.mat4(m));
    let hash = h.finish();
    let (spring, report) = spring(skeleton, pose, &mut model, springs, frame)?;
    let palette = palette_in_place(&mut model, &scene.skin)?;
    skin(scene, palette, &mut mesh.positions)?;
    let mut h = Fnv1a::new();
    mesh.positions.iter().take(scene.vertices).for_each(|p| h.vec3(p));
    Ok(Posed { pose: hash, spring, contacts: report.contacts, skin: h.finish() })
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

/// Runs every frame of the character `machine` (fresh from [`start`]) and writes the report to
/// `out`: a header line, two lines per frame (`frame N state S transition T progress P walk W
/// run W graph XXXXXXXX pose XXXXXXXX root XXXXXXXX skin XXXXXXXX pixels XXXXXXXX covered N
/// retarget XXXXXXXX ik XXXXXXXX spring XXXXXXXX contacts N`,
/// `T` being `-` without a transition, then `bands N` and the band hashes), `spring contacts N`
/// (the spring chain's contacts over the run) and `checksum 0xXXXXXXXX`, the FNV-1a of all
/// frame checksums and the contacts, which it also returns. The spring chain's tails are
/// `springs`, reset on the first frame.
///
/// # Errors
///
/// As [`animate`] and [`draw`], or [`ProbeError::Output`] when `out` fails.
pub fn report<R: Scalar, W: fmt::Write>(
    out: &mut W,
    scene: &Scene<'_, R>,
    skeleton: SkeletonView<'_, R>,
    machine: &mut CharacterMachine<'_, R>,
    mesh: &mut MeshBuffers<R>,
    springs: &mut SpringState<R>,
) -> Result<u32, ProbeError> {
    writeln!(
        out,
        "sinew-firmware scalar {} joints {} vertices {} triangles {} influences {} frames {FRAMES} image {WIDTH}x{HEIGHT} band {BAND_ROWS} graph {GRAPH}",
        R::NAME,
        skeleton.num_joints(),
        scene.vertices,
        scene.indices / 3,
        scene.influences,
    )?;
    mesh.load_indices(scene);
    let mut total = Fnv1a::new();
    let mut contacts = 0u32;
    for f in 1..=FRAMES {
        let s = animate(scene, skeleton, machine, mesh, springs, f)?;
        let pixels = draw(scene, mesh)?;
        let state = machine.graph().states.get(s.state).map_or("?", |s| s.name);
        write!(out, "frame {f} state {state} transition ")?;
        match s.transition {
            Some(t) => write!(out, "{t}")?,
            None => write!(out, "-")?,
        }
        writeln!(
            out,
            " progress {} walk {} run {} graph {:08x} pose {:08x} root {:08x} skin {:08x} pixels {:08x} covered {} retarget {:08x} ik {:08x} spring {:08x} contacts {}",
            s.progress,
            s.weights[0],
            s.weights[1],
            s.graph,
            s.pose,
            s.root,
            s.skin,
            pixels.hash(),
            pixels.covered,
            s.retarget,
            s.ik,
            s.spring,
            s.contacts
        )?;
        write!(out, "bands {f}")?;
        for b in pixels.bands {
            write!(out, " {b:08x}")?;
        }
        writeln!(out)?;
        for w in [s.graph, s.pose, s.root, s.skin, pixels.hash(), s.retarget, s.ik, s.spring, s.contacts] {
            total.word(w);
        }
        contacts = contacts.saturating_add(s.contacts);
    }
    writeln!(out, "spring contacts {contacts}")?;
    let sum = total.finish();
    writeln!(out, "checksum 0x{sum:08x}")?;
    Ok(sum)
}

mod ik;
mod retarget;
mod spring;

pub use ik::*;
pub use retarget::*;
pub use spring::*;

#[cfg(test)]
mod tests;
