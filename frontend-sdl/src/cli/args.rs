//! The `sinew` command line's schema: [`Cli`] and its subcommands' arguments (flags, defaults,
//! help text), the value enums and their runtime types, and the checks the arguments share.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use sinew_frontend::demo::GlRequest;
use sinew_frontend::playback::PlaybackOptions;
use sinew_frontend::{DEFAULT_HEIGHT, DEFAULT_WIDTH};
use sinew_offline::bake::BakeOptions;
use sinew_offline::dump::{parse_additive, parse_layer, AdditiveSpec, LayerSpec};
use sinew_offline::graph_run::{parse_set, SetSpec};
use sinew_offline::model::Skinning;
use sinew_offline::retarget::RetargetOptions;

use super::output::{error, Failure};

/// The command line: one subcommand.
#[derive(Parser)]
#[command(name = "sinew", version, about = "sinew: skeletal animation — bake, inspect and view models")]
pub struct Cli {
    // The subcommand and its arguments.
    #[command(subcommand)]
    pub command: Command,
}

/// `--skinning`: linear blend or dual-quaternion skinning.
#[derive(Clone, Copy, ValueEnum)]
pub enum SkinningArg {
    Lbs,
    Dqs,
}

/// `sinew bake --texture-format`: how texels are stored.
#[derive(Clone, Copy, ValueEnum)]
pub enum TexelArg {
    Rgba8,
    Rgb565,
}

/// The subcommands, each with its arguments.
#[derive(Subcommand)]
pub enum Command {
    /// Bake a .glb, .gltf, .fbx, .bvh or .md5mesh into a .sinew file.
    Bake(BakeArgs),
    /// Print what a model holds: joints, skins, meshes with their morph targets, clips with
    /// durations, key counts and morph-weight tracks.
    Info(InfoArgs),
    /// Time the runtime stages on a model's baked data. Prints one line per stage on stdout,
    /// `sinew <stage> <model> <ns_per_unit> <count>`: stage is sample, sample_call, blend, l2m,
    /// skin (LBS, normals not renormalized, as the kit's peer does), skin_unit (LBS, normals
    /// renormalized), skin_dqs or crowd; model is the file stem; ns_per_unit is the median time
    /// per joint (sample, blend, l2m), per vertex (skin, skin_unit, skin_dqs), per call (sample_call) or per
    /// character (crowd: 1,000 characters per frame, the benchmark kit's workload); count is
    /// the joints, vertices or characters of one call. The spread of the repetitions goes to
    /// stderr.
    Bench(BenchArgs),
    /// Show the scene (or a model) drawn by the core's software rasterizer in a window, or
    /// render it headless to a PNG.
    Soft(SoftArgs),
    /// Print one JSON object with joint world matrices, skin matrices, skinned vertices, and the
    /// morph weights and final positions of one mesh instance (morph_weights, mesh_positions).
    Dump(DumpArgs),
    /// Open the SDL2/OpenGL ES demo: the built-in scene, or a model viewer. With --frames or
    /// --screenshot it runs headless (hidden window, offscreen target) and writes a PNG.
    Demo(DemoArgs),
}

/// The arguments of `sinew bake`.
#[derive(Args)]
pub struct BakeArgs {
    /// Input model.
    pub input: PathBuf,
    /// Output .sinew file.
    #[arg(short, long)]
    pub output: PathBuf,
    /// md5 animation to include (for .md5mesh inputs).
    #[arg(long)]
    pub anim: Option<PathBuf>,
    /// Meters per unit of a .bvh input (0.01 for centimeters, 0.0254 for inches); without it
    /// the unit is guessed from the rest skeleton's size and named in a note.
    #[arg(long)]
    pub bvh_scale: Option<f32>,
    #[command(flatten)]
    pub bound: BoundArgs,
    /// Split meshes into parts whose bone palettes hold at most N joints.
    #[arg(long)]
    pub palette: Option<usize>,
    /// Most influences per vertex kept (1 to 8).
    #[arg(long, default_value_t = 4)]
    pub influences: usize,
    /// Keep every key as lossless f32.
    #[arg(long)]
    pub lossless: bool,
    /// Most work steps for key reduction and error measurement (keys checked, joints and
    /// tracks evaluated); clips that need more are stored lossless.
    #[arg(long, default_value_t = sinew_offline::bake::MAX_BAKE_WORK)]
    pub max_work: u64,
    /// Largest texture side in texels: larger images are scaled down to fit (aspect kept;
    /// 1 to 4096).
    #[arg(long, default_value_t = sinew_offline::bake::DEFAULT_TEXTURE_SIZE)]
    pub texture_size: u32,
    /// How texels are stored: rgba8, or rgb565 (half the bytes, no alpha).
    #[arg(long, value_enum, default_value_t = TexelArg::Rgba8)]
    pub texture_format: TexelArg,
    /// Animation graph file (JSON, see core/docs/graphs.md) to bake into the file, validated
    /// against the model's clips.
    #[arg(long)]
    pub graph: Option<PathBuf>,
    /// Name of the baked graph (default: the graph file's stem).
    #[arg(long, requires = "graph")]
    pub graph_name: Option<String>,
    /// Bake INPUT with this model's (the source's) clips retargeted onto it instead of its own:
    /// each source clip (loaded lossless) sampled at its key times and between them, mapped by
    /// --map or the automatic humanoid mapping, then compressed within the bound as usual.
    #[arg(long, value_name = "SOURCE")]
    pub retarget_from: Option<PathBuf>,
    /// With --retarget-from: a source clip to retarget, by name or index (repeatable, kept in
    /// the order given; default: every source clip).
    #[arg(long, value_name = "CLIP", requires = "retarget_from")]
    pub clip: Vec<String>,
    #[command(flatten)]
    pub retarget: RetargetArgs,
}

/// The arguments of `sinew info`.
#[derive(Args)]
pub struct InfoArgs {
    /// A .sinew, .glb, .gltf, .fbx, .bvh or .md5mesh file.
    pub file: PathBuf,
    /// md5 animation (for .md5mesh inputs, or an .md5mesh --source).
    #[arg(long)]
    pub anim: Option<PathBuf>,
    /// For a .sinew file: the .glb, .gltf, .fbx, .bvh or .md5mesh it was baked from; each clip's error
    /// is measured against it (at and between source keys, at the shell and on the mesh's
    /// vertices). Imported files are always measured against themselves.
    #[arg(long)]
    pub source: Option<PathBuf>,
    #[command(flatten)]
    pub bound: BoundArgs,
    /// Instead of the model's contents, print how poses of this model (the source) retarget
    /// onto FILE (the target): one line per target joint (`TARGET <- SOURCE` or
    /// `TARGET at rest`), then the hips and the scale.
    #[arg(long, value_name = "SOURCE", conflicts_with = "source")]
    pub retarget_from: Option<PathBuf>,
    #[command(flatten)]
    pub retarget: RetargetArgs,
}

/// How `--retarget-from` maps and moves joints (`sinew info`, `sinew dump`, `sinew bake`,
/// `sinew demo`, `sinew soft`).
#[derive(Args)]
pub struct RetargetArgs {
    /// Joint map file for --retarget-from: one `TARGET = SOURCE` per line, `#` comments, and
    /// optionally `@hips TARGET` (default: the automatic humanoid mapping, Mixamo, VRM,
    /// Unreal mannequin, then equal names).
    #[arg(long, value_name = "FILE", requires = "retarget_from")]
    pub map: Option<PathBuf>,
    /// With --retarget-from: the factor on the hips' displacement (default: the ratio of the
    /// hips' rest heights, target over source).
    #[arg(long, value_name = "S", requires = "retarget_from")]
    pub retarget_scale: Option<f32>,
    /// With --retarget-from: drop the horizontal part of the hips' displacement.
    #[arg(long, requires = "retarget_from")]
    pub in_place: bool,
}

impl RetargetArgs {
    /// The hips options of `--retarget-scale` and `--in-place`.
    pub fn options(&self) -> RetargetOptions {
        RetargetOptions { scale: self.retarget_scale, in_place: self.in_place }
    }
}

/// The arguments of `sinew bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// A .sinew, .glb, .gltf, .fbx, .bvh or .md5mesh file.
    #[arg(required_unless_present = "compression")]
    pub model: Option<PathBuf>,
    /// Instead, the compression benchmark: bake every animated clip of the shared models
    /// under this directory (`../shared/assets`) with --tolerance and --shell, and print a
    /// Markdown table of sizes (with ACL v2.1's recorded figures at a fixed --shell),
    /// errors measured independently, bake times and sampling times.
    #[arg(long, value_name = "ASSETS_DIR", conflicts_with_all = ["model", "crowd", "clip"])]
    pub compression: Option<PathBuf>,
    /// With --compression: the bound, in meters.
    #[arg(long, default_value_t = 1.0e-4, requires = "compression")]
    pub tolerance: f64,
    /// With --compression: where the error is measured, as `sinew bake --shell`: `mesh`
    /// (default) or a distance in meters (`0.03` for ACL's convention).
    #[arg(long, value_name = "mesh|DIST", default_value = "mesh", value_parser = parse_shell, requires = "compression")]
    pub shell: ShellArg,
    /// With --compression: print the table as the documentation holds it
    /// (core/docs/compression.md), without the measurement details of the plain table.
    #[arg(long, requires = "compression")]
    pub markdown: bool,
    /// Clip name or index (default: the first).
    #[arg(long)]
    pub clip: Option<String>,
    /// md5 animation (for .md5mesh inputs).
    #[arg(long)]
    pub anim: Option<PathBuf>,
    /// Instead of the per-stage figures, update N characters per frame (two clips sampled,
    /// blended, local-to-model, skin palette) on one core and on all cores, then time the
    /// batch crowd of N instances (`sinew::crowd`, every instance evaluated every frame) likewise.
    #[arg(long)]
    pub crowd: Option<usize>,
    /// With --crowd: also time the batch crowd (`sinew::crowd`, pose sharing and update-rate
    /// levels of detail from the instances' distances to the camera) beside the crowd of
    /// characters evaluated every frame.
    #[arg(long, requires = "crowd")]
    pub lod: bool,
    /// The kit's crowd stage on N threads, taking runs of 16 consecutive characters; its
    /// line stays `sinew crowd MODEL <wall-clock ns per character> 1000`.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256), conflicts_with_all = ["compression", "crowd"])]
    pub threads: u16,
}

/// The arguments of `sinew soft`.
#[derive(Args)]
pub struct SoftArgs {
    #[command(flatten)]
    pub playback: PlaybackArgs,
    /// Render without a window.
    #[arg(long)]
    pub headless: bool,
    /// Headless: frames to render.
    #[arg(long, default_value_t = 1)]
    pub frames: u64,
    /// Headless: scene time of the last frame, in seconds (default: frames / 60).
    #[arg(long)]
    pub time: Option<f32>,
    /// Headless: write the last frame to this PNG.
    #[arg(long)]
    pub screenshot: Option<PathBuf>,
    #[command(flatten)]
    pub size: ImageSize,
    /// Draw the bone overlay.
    #[arg(long)]
    pub bones: bool,
}

/// The arguments of `sinew dump`.
#[derive(Args)]
pub struct DumpArgs {
    /// A .sinew, .glb, .gltf, .fbx, .bvh or .md5mesh file.
    pub model: PathBuf,
    /// md5 animation (for .md5mesh inputs).
    #[arg(long)]
    pub anim: Option<PathBuf>,
    /// Clip name or index (default: the first clip; the rest pose without clips).
    #[arg(long)]
    pub clip: Option<String>,
    /// Clip time in seconds.
    #[arg(long, default_value_t = 0.0)]
    pub time: f32,
    /// Skin index.
    #[arg(long, default_value_t = 0)]
    pub skin: usize,
    /// Skinning method.
    #[arg(long, value_enum, default_value_t = SkinningArg::Lbs)]
    pub skinning: SkinningArg,
    /// The node of the mesh instance to dump: the glTF node index for glTF models, the row
    /// of the dump's `joints` for md5 and .sinew files; default: the first mesh of --skin.
    #[arg(long)]
    pub mesh_node: Option<usize>,
    /// Sample the imported f32 keys exactly (lossless, every influence, exact slerp)
    /// instead of the baked clip.
    #[arg(long)]
    pub raw: bool,
    /// Override layer CLIP:WEIGHT[:MASK_JOINT[:FADE_IN]] over the clip, sampled at the same
    /// time (repeatable, bottom first): covers WEIGHT (0 to 1) of the layers below, on the
    /// subtree of MASK_JOINT with a FADE_IN-level ramp when given.
    #[arg(long = "layer", value_name = "SPEC", value_parser = parse_layer)]
    pub layers: Vec<LayerSpec>,
    /// Additive layer CLIP:WEIGHT (repeatable, in order): the clip at the time relative to
    /// its first frame, added with WEIGHT (negative subtracts).
    #[arg(long = "additive", value_name = "SPEC", value_parser = parse_additive)]
    pub additive: Vec<AdditiveSpec>,
    /// Animation graph file (JSON, see core/docs/graphs.md): runs it from 0 to --time in steps of
    /// 1/60 s instead of sampling a clip, and adds "graph_state" to the output.
    #[arg(long, conflicts_with_all = ["clip", "layers", "additive", "raw"])]
    pub graph: Option<PathBuf>,
    /// Run the animation graph baked in the model (`sinew bake --graph`) as --graph runs a
    /// file: the one called NAME, or the first without a name.
    #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "",
          conflicts_with_all = ["graph", "clip", "layers", "additive", "raw"])]
    pub graph_baked: Option<String>,
    /// Graph parameter change NAME=VALUE@SECONDS (repeatable, with --graph or
    /// --graph-baked): applies before the first step starting at or after SECONDS. VALUE
    /// is a number, or true/false for bools and triggers.
    #[arg(long = "set", value_name = "SPEC", value_parser = parse_set)]
    pub sets: Vec<SetSpec>,
    /// Dump the pose of this model (the source) retargeted onto MODEL: the source's clip
    /// (--clip, default its first) sampled at --time (with --raw, from the source loaded
    /// lossless), mapped by --map or the automatic humanoid mapping.
    #[arg(long, value_name = "SOURCE", conflicts_with_all = ["graph", "graph_baked", "layers", "additive"])]
    pub retarget_from: Option<PathBuf>,
    #[command(flatten)]
    pub retarget: RetargetArgs,
    /// IK chain SOLVER,FROM,TO,X,Y,Z[,ITERATIONS[,TOLERANCE]] applied to the pose before it is
    /// dumped (repeatable, in order, after --ground): `fabrik` or `ccd` turns the joints from
    /// FROM down to TO (joint names, as `mixamorig:LeftArm`; no commas) so that TO reaches
    /// (X, Y, Z). The target and TOLERANCE, the distance at which TO counts as arrived, are in
    /// the space and units of `joint_world`; defaults: 20 iterations (at most 10000), 1e-4. A
    /// chain that stops short prints a note on stderr.
    #[arg(long = "ik", value_name = "SPEC", allow_hyphen_values = true)]
    pub ik: Vec<String>,
    /// Foot placement on the ground plane HEIGHT[,NX,NY,NZ] (through (0, HEIGHT, 0), normal
    /// (NX, NY, NZ) with NY above 0, default (0, 1, 0); `joint_world` space, Y up), applied
    /// before --ik: the legs stand on it as they stood on the ground at height 0, for one
    /// frame whose smoothing and locks start settled. The legs are --leg's, else found by the
    /// humanoid naming (Mixamo, VRM, the Unreal mannequin, CMU and Biovision motion capture).
    #[arg(long, value_name = "SPEC", allow_hyphen_values = true)]
    pub ground: Option<String>,
    /// A leg HIP,KNEE,ANKLE[,TOE] for --ground, by joint names, each below the one before
    /// (repeatable; replaces the legs found by name). With a TOE the ground is also asked
    /// under the toe, which lifts the foot over a step's edge.
    #[arg(long = "leg", value_name = "SPEC")]
    pub legs: Vec<String>,
    /// Play the model's spring bones (VRM's) up to --time: the pose at time 0 puts them at
    /// rest, then step k = 1 … round(TIME × RATE) poses the clip (or the rest pose) at k / RATE,
    /// applies --ground and --ik, and advances the springs by 1 / RATE; the dump is the pose
    /// after the last step.
    #[arg(long, conflicts_with_all = ["graph", "graph_baked", "retarget_from", "layers", "additive"])]
    pub springs: bool,
    /// Spring steps per second for --springs.
    #[arg(long, value_name = "HZ", default_value_t = 60.0, requires = "springs")]
    pub rate: f32,
}

/// The arguments of `sinew demo`.
#[derive(Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub playback: PlaybackArgs,
    /// Render N frames headless, then exit (non-zero on GL errors).
    #[arg(long)]
    pub frames: Option<u64>,
    /// Write the last frame to this PNG (headless).
    #[arg(long)]
    pub screenshot: Option<PathBuf>,
    /// Scene time of the last frame, in seconds (default: frames / 60).
    #[arg(long)]
    pub time: Option<f32>,
    #[command(flatten)]
    pub size: ImageSize,
    /// Largest bone palette of the skinning shaders (default: what GL_MAX_VERTEX_UNIFORM_VECTORS
    /// allows); smaller palettes split meshes into more parts.
    #[arg(long)]
    pub palette: Option<usize>,
    /// Initial skinning method.
    #[arg(long, value_enum, default_value_t = SkinningArg::Lbs)]
    pub skinning: SkinningArg,
    /// Show bones from the start.
    #[arg(long)]
    pub bones: bool,
    /// Show the spring colliders of a model with spring bones (VRM's) from the start.
    #[arg(long)]
    pub colliders: bool,
    /// Hide the HUD.
    #[arg(long)]
    pub no_hud: bool,
    /// GL context: OpenGL ES 2.0 with a desktop OpenGL 2.1 fallback, or only one of them.
    #[arg(long, value_enum, default_value_t = GlArg::Auto)]
    pub gl: GlArg,
    /// Show a crowd of N instances of the model (a grid, each at its own phase, clip and
    /// speed), drawn with one instanced draw call per mesh part.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub crowd: Option<u32>,
    /// With --crowd: update every instance every frame and share no poses (the crowd's
    /// levels of detail and pose sharing off).
    #[arg(long, requires = "crowd")]
    pub no_lod: bool,
    /// With --crowd: draw instance by instance with uniforms, as without the instancing
    /// extensions.
    #[arg(long, requires = "crowd")]
    pub no_instancing: bool,
}

/// The error bound of `sinew bake` and `sinew info`: the largest virtual-vertex error a bake
/// allows, and the errors a measurement compares with it.
#[derive(Args)]
pub struct BoundArgs {
    /// Largest virtual-vertex error, in meters (0.0001 = 0.01 cm).
    #[arg(long, default_value_t = 1.0e-4)]
    pub tolerance: f64,
    /// Where the error is measured: `mesh` (default), each joint's farthest mesh vertex (a
    /// joint that moves none itself: its subtree's reach) and at least 0.125 m, so the bound
    /// holds on the mesh and every joint's rotation is bounded; or DIST, virtual vertices DIST
    /// meters from every joint (ACL's convention: `--shell 0.03`).
    #[arg(long, value_name = "mesh|DIST", default_value = "mesh", value_parser = parse_shell)]
    pub shell: ShellArg,
    /// Shells from the mesh (the default, kept for older command lines); with --shell DIST,
    /// DIST is the least shell of every joint instead of 0.125 m.
    #[arg(long)]
    pub shell_from_mesh: bool,
}

impl BoundArgs {
    /// The default bake options with this bound, once [`check_bound`] accepts it.
    pub fn bake_options(&self) -> Result<BakeOptions, Failure> {
        let mut opts = self.shell.bake_options(self.tolerance)?;
        if self.shell_from_mesh {
            opts.shell_from_mesh = true;
            if let ShellArg::Fixed(d) = self.shell {
                opts.min_shell = d;
            }
        }
        Ok(opts)
    }
}

/// `--shell`: shells from the mesh, or one distance for every joint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShellArg {
    /// Each joint's farthest mesh vertex, at least `BakeOptions::min_shell`
    /// (`BakeOptions::shell_from_mesh`).
    Mesh,
    /// This many meters from every joint.
    Fixed(f64),
}

impl ShellArg {
    /// The default bake options with `tolerance` and this shell, once [`check_bound`] accepts
    /// them.
    pub fn bake_options(self, tolerance: f64) -> Result<BakeOptions, Failure> {
        let defaults = BakeOptions::default();
        let (shell, shell_from_mesh) = match self {
            ShellArg::Mesh => (defaults.shell, true),
            ShellArg::Fixed(d) => (d, false),
        };
        check_bound(tolerance, shell)?;
        Ok(BakeOptions { tolerance, shell, shell_from_mesh, ..defaults })
    }
}

/// Reads `--shell`: `mesh`, or a distance in meters.
fn parse_shell(s: &str) -> Result<ShellArg, String> {
    if s.eq_ignore_ascii_case("mesh") {
        return Ok(ShellArg::Mesh);
    }
    s.parse::<f64>().map(ShellArg::Fixed).map_err(|_| format!("'{s}' is neither `mesh` nor a distance in meters"))
}

/// The model a viewer (`sinew soft`, `sinew demo`) shows, with its md5 animation.
#[derive(Args)]
pub struct ViewedModel {
    /// A .glb, .gltf, .fbx, .bvh, .md5mesh or .sinew file to view (default: the built-in scene).
    pub model: Option<PathBuf>,
    /// md5 animation (for .md5mesh models).
    #[arg(long)]
    pub anim: Option<PathBuf>,
}

/// What a viewer (`sinew demo`, `sinew soft`) shows and what drives it: the model, its first
/// clip, an animation graph, or another model's clips retargeted onto it.
#[derive(Args)]
pub struct PlaybackArgs {
    #[command(flatten)]
    pub view: ViewedModel,
    /// The viewer's first clip, by name or index (the source's with --retarget-from).
    #[arg(long, conflicts_with = "graph")]
    pub clip: Option<String>,
    /// Animation graph file (JSON, see core/docs/graphs.md) driving the model instead of its
    /// clips: Tab (or, in the demo, 1-9) selects a parameter, Up/Down change a float, Space
    /// flips a bool or fires a trigger, P pauses; the demo's HUD and the soft window's title
    /// show the state.
    #[arg(long)]
    pub graph: Option<PathBuf>,
    #[command(flatten)]
    pub sets: GraphSets,
    /// Play the clips of this model (the source) retargeted onto MODEL (the target): the clip
    /// list, playback and crossfades are the source's, and the source is drawn to the
    /// target's left (S shows or hides it). Mapped by --map or the automatic humanoid mapping.
    #[arg(long, value_name = "SOURCE", requires = "model", conflicts_with = "graph")]
    pub retarget_from: Option<PathBuf>,
    #[command(flatten)]
    pub retarget: RetargetArgs,
    /// With --retarget-from: start with the source hidden.
    #[arg(long, requires = "retarget_from")]
    pub hide_source: bool,
}

impl From<PlaybackArgs> for PlaybackOptions {
    fn from(a: PlaybackArgs) -> PlaybackOptions {
        PlaybackOptions {
            model: a.view.model,
            anim: a.view.anim,
            clip: a.clip,
            graph: a.graph,
            sets: a.sets.sets,
            retarget_from: a.retarget_from,
            retarget: a.retarget.options(),
            retarget_map: a.retarget.map,
            hide_source: a.hide_source,
        }
    }
}

/// A viewer's image size.
#[derive(Args)]
pub struct ImageSize {
    /// Width in pixels.
    #[arg(long, default_value_t = DEFAULT_WIDTH)]
    pub width: u32,
    /// Height in pixels.
    #[arg(long, default_value_t = DEFAULT_HEIGHT)]
    pub height: u32,
}

/// A viewer's `--set`: the parameter changes of its `--graph`.
#[derive(Args)]
pub struct GraphSets {
    /// Graph parameter change NAME=VALUE@SECONDS of graph time (repeatable, with --graph):
    /// applies before the first 1/60 s step starting at or after SECONDS.
    #[arg(long = "set", value_name = "SPEC", value_parser = parse_set)]
    pub sets: Vec<SetSpec>,
}

/// `sinew demo --gl`: which GL context to ask for.
#[derive(Clone, Copy, ValueEnum)]
pub enum GlArg {
    Auto,
    Es,
    Desktop,
}

impl From<SkinningArg> for Skinning {
    fn from(a: SkinningArg) -> Skinning {
        match a {
            SkinningArg::Lbs => Skinning::Lbs,
            SkinningArg::Dqs => Skinning::Dqs,
        }
    }
}

impl From<TexelArg> for sinew::raster::TexelFormat {
    fn from(a: TexelArg) -> sinew::raster::TexelFormat {
        match a {
            TexelArg::Rgba8 => sinew::raster::TexelFormat::Rgba8,
            TexelArg::Rgb565 => sinew::raster::TexelFormat::Rgb565,
        }
    }
}

impl From<GlArg> for GlRequest {
    fn from(a: GlArg) -> GlRequest {
        match a {
            GlArg::Auto => GlRequest::Auto,
            GlArg::Es => GlRequest::Es,
            GlArg::Desktop => GlRequest::Desktop,
        }
    }
}

/// Checks `--tolerance` (> 0) and `--shell` (≥ 0), both finite.
pub fn check_bound(tolerance: f64, shell: f64) -> Result<(), Failure> {
    if tolerance > 0.0 && tolerance.is_finite() && shell >= 0.0 && shell.is_finite() {
        Ok(())
    } else {
        Err(error("--tolerance must be > 0 and --shell ≥ 0"))
    }
}
