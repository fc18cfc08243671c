//! The `sinew` command line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use sinew::clip::RotationInterpolation;
use sinew::graph::LayeredGraph;
use sinew_frontend::demo::{self, DemoOptions, GlRequest};
use sinew_frontend::{DEFAULT_HEIGHT, DEFAULT_WIDTH};
use sinew_pipeline::bake::BakeOptions;
use sinew_pipeline::clip_error::measure_clips;
use sinew_pipeline::dump::{dump, dump_pose, parse_additive, parse_layer, AdditiveSpec, DumpOptions, LayerSpec};
use sinew_pipeline::graph_bake::{bake_graph, baked_graph};
use sinew_pipeline::graph_file::GraphFile;
use sinew_pipeline::graph_run::{parse_set, run_layered, SetSpec};
use sinew_pipeline::model::{Model, Skinning};
use sinew_pipeline::rig::Rig;
use sinew_pipeline::shells::{shells_from_mesh, uniform_shells};

mod cli;

use cli::info::print_info;
use cli::output::{fail, Failure, Out};

#[derive(Parser)]
#[command(name = "sinew", version, about = "sinew: skeletal animation — bake, inspect and view models")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum SkinningArg {
    Lbs,
    Dqs,
}

#[derive(Clone, Copy, ValueEnum)]
enum TexelArg {
    Rgba8,
    Rgb565,
}

#[derive(Subcommand)]
enum Command {
    /// Bake a .glb, .gltf or .md5mesh into a .sinew file.
    Bake {
        /// Input model.
        input: PathBuf,
        /// Output .sinew file.
        #[arg(short, long)]
        output: PathBuf,
        /// md5 animation to include (for .md5mesh inputs).
        #[arg(long)]
        anim: Option<PathBuf>,
        /// Largest virtual-vertex error, in meters (0.0001 = 0.01 cm).
        #[arg(long, default_value_t = 1.0e-4)]
        tolerance: f64,
        /// Distance of the virtual vertices from each joint, in meters.
        #[arg(long, default_value_t = 0.03)]
        shell: f64,
        /// Set each joint's shell distance to its farthest mesh vertex (weight > 0) instead of
        /// --shell, so the bound holds on the mesh's vertices.
        #[arg(long)]
        shell_from_mesh: bool,
        /// Split meshes into parts whose bone palettes hold at most N joints.
        #[arg(long)]
        palette: Option<usize>,
        /// Most influences per vertex kept (1 to 8).
        #[arg(long, default_value_t = 4)]
        influences: usize,
        /// Keep every key as lossless f32.
        #[arg(long)]
        lossless: bool,
        /// Most work steps for key reduction and error measurement (keys checked, joints and
        /// tracks evaluated); clips that need more are stored lossless.
        #[arg(long, default_value_t = sinew_pipeline::bake::MAX_BAKE_WORK)]
        max_work: u64,
        /// Largest texture side in texels: larger images are scaled down to fit (aspect kept;
        /// 1 to 4096).
        #[arg(long, default_value_t = sinew_pipeline::bake::DEFAULT_TEXTURE_SIZE)]
        texture_size: u32,
        /// How texels are stored: rgba8, or rgb565 (half the bytes, no alpha).
        #[arg(long, value_enum, default_value_t = TexelArg::Rgba8)]
        texture_format: TexelArg,
        /// Animation graph file (JSON, see the README) to bake into the file, validated
        /// against the model's clips.
        #[arg(long)]
        graph: Option<PathBuf>,
        /// Name of the baked graph (default: the graph file's stem).
        #[arg(long, requires = "graph")]
        graph_name: Option<String>,
    },
    /// Print what a model holds: joints, skins, meshes with their morph targets, clips with
    /// durations, key counts and morph-weight tracks.
    Info {
        /// A .sinew, .glb, .gltf or .md5mesh file.
        file: PathBuf,
        /// md5 animation (for .md5mesh inputs, or an .md5mesh --source).
        #[arg(long)]
        anim: Option<PathBuf>,
        /// For a .sinew file: the .glb, .gltf or .md5mesh it was baked from; each clip's error
        /// is measured against it (at and between source keys, at the shell and on the mesh's
        /// vertices). Imported files are always measured against themselves.
        #[arg(long)]
        source: Option<PathBuf>,
        /// The bound the errors are compared with, in meters.
        #[arg(long, default_value_t = 1.0e-4)]
        tolerance: f64,
        /// Shell distance of the measurement, in meters.
        #[arg(long, default_value_t = 0.03)]
        shell: f64,
        /// Measure at each joint's farthest mesh vertex instead of --shell.
        #[arg(long)]
        shell_from_mesh: bool,
    },
    /// Time the runtime stages on a model's baked data. Prints one line per stage on stdout,
    /// `sinew <stage> <model> <ns_per_unit> <count>`: stage is sample, sample_call, blend, l2m,
    /// skin (LBS, normals not renormalized, as the kit's peer does), skin_unit (LBS, normals
    /// renormalized), skin_dqs or crowd; model is the file stem; ns_per_unit is the median time
    /// per joint (sample, blend, l2m), per vertex (skin, skin_unit, skin_dqs), per call (sample_call) or per
    /// character (crowd: 1,000 characters per frame, the benchmark kit's workload); count is
    /// the joints, vertices or characters of one call. The spread of the repetitions goes to
    /// stderr.
    Bench {
        /// A .sinew, .glb, .gltf or .md5mesh file.
        #[arg(required_unless_present = "compression")]
        model: Option<PathBuf>,
        /// Instead, the compression benchmark: bake every animated clip of the shared models
        /// under this directory (`../shared/assets`) with --tolerance and --shell, and print a
        /// Markdown table of sizes (with ACL v2.1's recorded figures), errors measured
        /// independently, bake times and sampling times.
        #[arg(long, value_name = "ASSETS_DIR", conflicts_with_all = ["model", "crowd", "clip"])]
        compression: Option<PathBuf>,
        /// With --compression: the bound, in meters.
        #[arg(long, default_value_t = 1.0e-4, requires = "compression")]
        tolerance: f64,
        /// With --compression: the shell distance, in meters.
        #[arg(long, default_value_t = 0.03, requires = "compression")]
        shell: f64,
        /// Clip name or index (default: the first).
        #[arg(long)]
        clip: Option<String>,
        /// md5 animation (for .md5mesh inputs).
        #[arg(long)]
        anim: Option<PathBuf>,
        /// Instead of the per-stage figures, update N characters per frame (two clips sampled,
        /// blended, local-to-model, skin palette) on one core and on all cores.
        #[arg(long)]
        crowd: Option<usize>,
    },
    /// Show the scene (or a model) drawn by the core's software rasterizer in a window, or
    /// render it headless to a PNG.
    Soft {
        /// A .glb, .gltf, .md5mesh or .sinew file to view (default: the built-in scene).
        model: Option<PathBuf>,
        /// md5 animation (for .md5mesh inputs).
        #[arg(long)]
        anim: Option<PathBuf>,
        /// Render without a window.
        #[arg(long)]
        headless: bool,
        /// Headless: frames to render.
        #[arg(long, default_value_t = 1)]
        frames: u64,
        /// Headless: scene time of the last frame, in seconds (default: frames / 60).
        #[arg(long)]
        time: Option<f32>,
        /// Headless: write the last frame to this PNG.
        #[arg(long)]
        screenshot: Option<PathBuf>,
        /// Width in pixels.
        #[arg(long, default_value_t = DEFAULT_WIDTH)]
        width: u32,
        /// Height in pixels.
        #[arg(long, default_value_t = DEFAULT_HEIGHT)]
        height: u32,
        /// Draw the bone overlay.
        #[arg(long)]
        bones: bool,
        /// Animation graph file (JSON, see the README) driving the model instead of its clips:
        /// Tab selects a parameter, Up/Down change a float, Space flips a bool or fires a
        /// trigger, P pauses.
        #[arg(long)]
        graph: Option<PathBuf>,
        /// Graph parameter change NAME=VALUE@SECONDS of graph time (repeatable, with --graph).
        #[arg(long = "set", value_name = "SPEC", value_parser = parse_set)]
        sets: Vec<SetSpec>,
    },
    /// Print one JSON object with joint world matrices, skin matrices, skinned vertices, and the
    /// morph weights and final positions of one mesh instance (morph_weights, mesh_positions).
    Dump {
        /// A .sinew, .glb, .gltf or .md5mesh file.
        model: PathBuf,
        /// md5 animation (for .md5mesh inputs).
        #[arg(long)]
        anim: Option<PathBuf>,
        /// Clip name or index (default: the first clip; the rest pose without clips).
        #[arg(long)]
        clip: Option<String>,
        /// Clip time in seconds.
        #[arg(long, default_value_t = 0.0)]
        time: f32,
        /// Skin index.
        #[arg(long, default_value_t = 0)]
        skin: usize,
        /// Skinning method.
        #[arg(long, value_enum, default_value_t = SkinningArg::Lbs)]
        skinning: SkinningArg,
        /// The node of the mesh instance to dump: the glTF node index for glTF models, the row
        /// of the dump's `joints` for md5 and .sinew files; default: the first mesh of --skin.
        #[arg(long)]
        mesh_node: Option<usize>,
        /// Sample the imported f32 keys exactly (lossless, every influence, exact slerp)
        /// instead of the baked clip.
        #[arg(long)]
        raw: bool,
        /// Override layer CLIP:WEIGHT[:MASK_JOINT[:FADE_IN]] over the clip, sampled at the same
        /// time (repeatable, bottom first): covers WEIGHT (0 to 1) of the layers below, on the
        /// subtree of MASK_JOINT with a FADE_IN-level ramp when given.
        #[arg(long = "layer", value_name = "SPEC", value_parser = parse_layer)]
        layers: Vec<LayerSpec>,
        /// Additive layer CLIP:WEIGHT (repeatable, in order): the clip at the time relative to
        /// its first frame, added with WEIGHT (negative subtracts).
        #[arg(long = "additive", value_name = "SPEC", value_parser = parse_additive)]
        additive: Vec<AdditiveSpec>,
        /// Animation graph file (JSON, see the README): runs it from 0 to --time in steps of
        /// 1/60 s instead of sampling a clip, and adds "graph_state" to the output.
        #[arg(long, conflicts_with_all = ["clip", "layers", "additive", "raw"])]
        graph: Option<PathBuf>,
        /// Run the animation graph baked in the model (`sinew bake --graph`) as --graph runs a
        /// file: the one called NAME, or the first without a name.
        #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "",
              conflicts_with_all = ["graph", "clip", "layers", "additive", "raw"])]
        graph_baked: Option<String>,
        /// Graph parameter change NAME=VALUE@SECONDS (repeatable, with --graph or
        /// --graph-baked): applies before the first step starting at or after SECONDS. VALUE
        /// is a number, or true/false for bools and triggers.
        #[arg(long = "set", value_name = "SPEC", value_parser = parse_set)]
        sets: Vec<SetSpec>,
    },
    /// Open the SDL2/OpenGL ES demo: the built-in scene, or a model viewer. With --frames or
    /// --screenshot it runs headless (hidden window, offscreen target) and writes a PNG.
    Demo {
        /// A .glb, .gltf, .md5mesh or .sinew file to view (default: the built-in scene).
        model: Option<PathBuf>,
        /// md5 animation (for .md5mesh models).
        #[arg(long)]
        anim: Option<PathBuf>,
        /// The viewer's first clip, by name or index.
        #[arg(long, conflicts_with = "graph")]
        clip: Option<String>,
        /// Animation graph file (JSON, see the README) driving the model instead of its clips:
        /// Tab or 1-9 select a parameter, Up/Down change a float, Space flips a bool or fires a
        /// trigger, P pauses; the HUD shows the state, the transition and the parameters.
        #[arg(long)]
        graph: Option<PathBuf>,
        /// Graph parameter change NAME=VALUE@SECONDS of graph time (repeatable, with --graph):
        /// applies before the first 1/60 s step starting at or after SECONDS.
        #[arg(long = "set", value_name = "SPEC", value_parser = parse_set)]
        sets: Vec<SetSpec>,
        /// Render N frames headless, then exit (non-zero on GL errors).
        #[arg(long)]
        frames: Option<u64>,
        /// Write the last frame to this PNG (headless).
        #[arg(long)]
        screenshot: Option<PathBuf>,
        /// Scene time of the last frame, in seconds (default: frames / 60).
        #[arg(long)]
        time: Option<f32>,
        /// Width in pixels.
        #[arg(long, default_value_t = DEFAULT_WIDTH)]
        width: u32,
        /// Height in pixels.
        #[arg(long, default_value_t = DEFAULT_HEIGHT)]
        height: u32,
        /// Largest bone palette of the skinning shaders (default: what GL_MAX_VERTEX_UNIFORM_VECTORS
        /// allows); smaller palettes split meshes into more parts.
        #[arg(long)]
        palette: Option<usize>,
        /// Initial skinning method.
        #[arg(long, value_enum, default_value_t = SkinningArg::Lbs)]
        skinning: SkinningArg,
        /// Show bones from the start.
        #[arg(long)]
        bones: bool,
        /// Hide the HUD.
        #[arg(long)]
        no_hud: bool,
        /// GL context: OpenGL ES 2.0 with a desktop OpenGL 2.1 fallback, or only one of them.
        #[arg(long, value_enum, default_value_t = GlArg::Auto)]
        gl: GlArg,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum GlArg {
    Auto,
    Es,
    Desktop,
}

/// Loads a model as [`Model::load`] does, keeping the imported rig (`None` for `.sinew` files).
fn load_with_rig(path: &Path, anim: Option<&Path>, opts: &BakeOptions) -> Result<(Model, Option<Rig>), Failure> {
    if path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("sinew")) {
        return Ok((Model::load(path, anim, opts).map_err(|e| fail(path, e))?, None));
    }
    let rig = sinew_pipeline::import::load(path, anim).map_err(|e| fail(path, e))?;
    let model = Model::from_rig(&rig, opts).map_err(|e| fail(path, e))?;
    Ok((model, Some(rig)))
}

/// Measures the clips of `model` against `rig` (see `sinew_pipeline::clip_error`) and writes
/// one line per clip: the bound, the largest shell error and the largest vertex error.
fn print_clip_errors(
    rig: &Rig,
    model: &Model,
    opts: &BakeOptions,
    source: &Path,
    line: &mut dyn FnMut(String) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let from_mesh = if opts.shell_from_mesh { shells_from_mesh(rig) } else { None };
    let (shells, shell) = match from_mesh {
        Some(s) => (s, "each joint's farthest vertex".to_owned()),
        None => (uniform_shells(rig, opts.shell), format!("a {} m shell", opts.shell)),
    };
    for e in measure_clips(rig, model, &shells).map_err(|e| fail(source, e))? {
        line(e.describe(opts.tolerance, &shell))?;
    }
    Ok(())
}

/// `sinew bench --compression`: the table of `sinew_pipeline::compression` on the shared
/// models under `assets`.
fn bench_compression(assets: &Path, tolerance: f64, shell: f64, out: &mut Out) -> Result<(), Failure> {
    if !(tolerance > 0.0 && tolerance.is_finite() && shell >= 0.0 && shell.is_finite()) {
        return Err(Failure { file: None, message: "--tolerance must be > 0 and --shell ≥ 0".into(), code: 2 });
    }
    let opts = BakeOptions { tolerance, shell, ..BakeOptions::default() };
    let mut rows = Vec::new();
    for (path, anim) in sinew_pipeline::compression::shared_models(assets) {
        let rig = sinew_pipeline::import::load(&path, anim.as_deref()).map_err(|e| fail(&path, e))?;
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
        let r = sinew_pipeline::compression::run_rig(stem, &rig, &opts).map_err(|e| fail(&path, e))?;
        for row in &r {
            eprintln!("{} '{}': {} bytes in {:.0} ms", row.model, row.clip, row.sinew_bytes, row.bake_ms);
        }
        rows.extend(r);
    }
    for l in sinew_pipeline::compression::table(&rows).lines() {
        out.line(format_args!("{l}"))?;
    }
    Ok(())
}

/// Where `sinew dump` takes its graph from.
enum GraphSource {
    /// A JSON graph file.
    File(PathBuf),
    /// A graph baked in the model: by name, or the first (`""`).
    Baked(String),
}

/// `sinew dump --graph` and `--graph-baked`: runs the graph on the model to `time` and prints
/// the dump's JSON with `"graph_state"` (morph targets at their default weights).
#[allow(clippy::too_many_arguments)]
fn dump_graph(
    model: &Model,
    path: &Path,
    source: &GraphSource,
    sets: &[SetSpec],
    time: f32,
    skin: usize,
    skinning: SkinningArg,
    mesh_node: Option<usize>,
) -> Result<(), Failure> {
    let asset = model.asset();
    let (pose, state) = match source {
        GraphSource::File(graph_path) => {
            let text = std::fs::read_to_string(graph_path).map_err(|e| fail(graph_path, e))?;
            let joint = |name: &str| model.skeleton().find(name);
            let file = GraphFile::parse_with_joints(&text, |key| model.find_clip(key), joint, asset.num_clips())
                .map_err(|e| fail(graph_path, e))?;
            let parts = file.parts();
            let layers = parts.layers();
            let graph = LayeredGraph { base: parts.graph(), layers: &layers };
            run_layered(model, graph, sets, time, |_, _, _| {}).map_err(|e| fail(graph_path, e))?
        }
        GraphSource::Baked(name) => {
            let name = (!name.is_empty()).then_some(name.as_str());
            let baked = baked_graph(&asset, name).map_err(|e| fail(path, e))?;
            let layers = baked.layers();
            let graph = LayeredGraph { base: baked.graph(), layers: &layers };
            run_layered(model, graph, sets, time, |_, _, _| {}).map_err(|e| fail(path, e))?
        }
    };
    let opts = DumpOptions {
        skin,
        skinning: match skinning {
            SkinningArg::Lbs => Skinning::Lbs,
            SkinningArg::Dqs => Skinning::Dqs,
        },
        mesh_node,
        ..DumpOptions::default()
    };
    let json = dump_pose(model, &pose, &opts).map_err(|e| fail(path, e))?;
    let body = json.strip_suffix('}').unwrap_or(&json);
    Out::new().line(format_args!("{body},\"graph_state\":{}}}", state.to_json()))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            match f.file {
                Some(p) => eprintln!("sinew: {}: {}", p.display(), f.message),
                None => eprintln!("sinew: {}", f.message),
            }
            ExitCode::from(f.code)
        }
    }
}

fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::Bake {
            input,
            output,
            anim,
            tolerance,
            shell,
            shell_from_mesh,
            palette,
            influences,
            lossless,
            max_work,
            texture_size,
            texture_format,
            graph,
            graph_name,
        } => {
            if !(tolerance > 0.0 && tolerance.is_finite() && shell >= 0.0 && shell.is_finite()) {
                return Err(Failure {
                    file: None, message: "--tolerance must be > 0 and --shell ≥ 0".into(), code: 2
                });
            }
            if !(1..=sinew::limits::MAX_INFLUENCES).contains(&influences) {
                return Err(Failure { file: None, message: "--influences must be 1 to 8".into(), code: 2 });
            }
            if !(1..=sinew::raster::MAX_TEXTURE_DIMENSION).contains(&texture_size) {
                return Err(Failure { file: None, message: "--texture-size must be 1 to 4096".into(), code: 2 });
            }
            let texture_format = match texture_format {
                TexelArg::Rgba8 => sinew::raster::TexelFormat::Rgba8,
                TexelArg::Rgb565 => sinew::raster::TexelFormat::Rgb565,
            };
            let opts = BakeOptions {
                tolerance,
                shell,
                shell_from_mesh,
                palette,
                max_influences: influences,
                lossless,
                max_work,
                texture_size,
                texture_format,
            };
            let (mut model, rig) = load_with_rig(&input, anim.as_deref(), &opts)?;
            if let Some(graph_path) = &graph {
                let text = std::fs::read_to_string(graph_path).map_err(|e| fail(graph_path, e))?;
                let joint = |name: &str| model.skeleton().find(name);
                let file =
                    GraphFile::parse_with_joints(&text, |key| model.find_clip(key), joint, model.asset().num_clips())
                        .map_err(|e| fail(graph_path, e))?;
                let stem = graph_path.file_stem().and_then(|s| s.to_str()).unwrap_or("graph");
                let name = graph_name.as_deref().unwrap_or(stem);
                let bytes = bake_graph(model.bytes(), name, &file).map_err(|e| fail(graph_path, e))?;
                let report = model.report.take();
                model = Model::from_bytes(&model.name, bytes).map_err(|e| fail(graph_path, e))?;
                model.report = report;
            }
            std::fs::write(&output, model.bytes()).map_err(|e| fail(&output, e))?;
            print_info(&model, &mut Out::new())?;
            if let Some(r) = &model.report {
                eprintln!("clip                     tracks  source keys  baked keys  raw bytes  baked bytes  ratio  max error");
                for c in &r.clips {
                    let error = if c.fallback {
                        "lossless (work budget)".to_owned()
                    } else {
                        format!("{:>10.3e} ({})", c.max_error, c.max_error_joint)
                    };
                    eprintln!(
                        "{:<24} {:>6} {:>12} {:>11} {:>10} {:>12} {:>6.2} {error}",
                        c.name,
                        c.tracks,
                        c.source_keys,
                        c.baked_keys,
                        c.raw_bytes,
                        c.baked_bytes,
                        c.baked_bytes as f64 / c.raw_bytes.max(1) as f64,
                    );
                }
                let work: u64 = r.clips.iter().map(|c| c.work).sum();
                eprintln!("key reduction and error measurement: {work} work steps (budget {})", opts.max_work);
                for c in r.clips.iter().filter(|c| c.fallback) {
                    eprintln!(
                        "clip '{}': key reduction would exceed the work budget of {} steps; stored lossless",
                        c.name, opts.max_work
                    );
                }
                if r.clamped_vertices > 0 {
                    eprintln!(
                        "{} vertices had more than {influences} influences: the largest were kept and renormalized",
                        r.clamped_vertices
                    );
                }
                for t in &r.textures {
                    let resized = if t.source == t.baked {
                        String::new()
                    } else {
                        format!(" (from {}x{})", t.source.0, t.source.1)
                    };
                    eprintln!("texture '{}': {}x{} {:?}{resized}", t.name, t.baked.0, t.baked.1, t.format);
                }
                if r.degenerate_triangles > 0 {
                    eprintln!("dropped {} degenerate triangles (a vertex used twice)", r.degenerate_triangles);
                }
            }
            if let Some(rig) = &rig {
                print_clip_errors(rig, &model, &opts, &input, &mut |l| {
                    eprintln!("{l}");
                    Ok(())
                })?;
            }
            eprintln!("wrote {} ({} bytes)", output.display(), model.bytes().len());
            Ok(())
        }
        Command::Bench { model: path, compression, tolerance, shell, clip, anim, crowd } => {
            let Some(path) = path else {
                let assets = compression.unwrap_or_default();
                return bench_compression(&assets, tolerance, shell, &mut Out::new());
            };
            let model = Model::load(&path, anim.as_deref(), &BakeOptions::default()).map_err(|e| fail(&path, e))?;
            let mut out = Out::new();
            if let Some(n) = crowd {
                for r in sinew_pipeline::bench::crowd(&model, n.max(1)).map_err(|e| fail(&path, e))? {
                    out.line(format_args!(
                        "crowd {} characters, {} thread(s): {:.3} ms per frame, {:.0} characters per 16.6 ms frame",
                        r.characters, r.threads, r.ms_per_frame, r.per_60hz_frame
                    ))?;
                }
                return Ok(());
            }
            let clip = match clip {
                Some(key) => {
                    model.find_clip(&key).ok_or_else(|| fail(&path, format!("no clip named or numbered '{key}'")))?
                }
                None => 0,
            };
            if let Some(c) = model.asset().clip(clip) {
                eprintln!(
                    "clip '{}': {} tracks, {} baked keys ({} bytes)",
                    c.name(),
                    c.num_tracks(),
                    c.num_keys(),
                    c.byte_len()
                );
            }
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("model").to_string();
            for m in sinew_pipeline::bench::run(&model, clip).map_err(|e| fail(&path, e))? {
                out.line(format_args!("sinew {} {} {:.3} {}", m.stage, stem, m.ns_per_unit, m.count))?;
                eprintln!("  {}: {:.1}..{:.1} ns per call over 7 repetitions", m.stage, m.min_max.0, m.min_max.1);
            }
            Ok(())
        }
        Command::Soft { model, anim, headless, frames, time, screenshot, width, height, bones, graph, sets } => {
            if time.is_some_and(|t| !t.is_finite()) {
                return Err(Failure { file: None, message: "--time must be finite".into(), code: 2 });
            }
            let opts = sinew_frontend::soft::SoftOptions {
                model,
                anim,
                headless,
                frames,
                time,
                screenshot,
                width,
                height,
                bones,
                graph,
                sets,
            };
            let report = sinew_frontend::soft::run(&opts).map_err(|e| Failure {
                file: None,
                message: e.to_string(),
                code: 2,
            })?;
            eprintln!(
                "sinew soft: {} frames at {width}x{height}, {:.2} ms per frame ({:.0} frames per second)",
                report.frames,
                report.ms_per_frame,
                1000.0 / report.ms_per_frame.max(1e-9)
            );
            if let Some(g) = report.graph_state {
                eprintln!("sinew soft: graph {g}");
            }
            Ok(())
        }
        Command::Info { file, anim, source, tolerance, shell, shell_from_mesh } => {
            if !(tolerance > 0.0 && tolerance.is_finite() && shell >= 0.0 && shell.is_finite()) {
                return Err(Failure {
                    file: None, message: "--tolerance must be > 0 and --shell ≥ 0".into(), code: 2
                });
            }
            let opts = BakeOptions { tolerance, shell, shell_from_mesh, ..BakeOptions::default() };
            let (model, rig) = load_with_rig(&file, anim.as_deref(), &opts)?;
            let mut out = Out::new();
            print_info(&model, &mut out)?;
            let (rig, measured) = match (rig, source) {
                (Some(rig), _) => (rig, file),
                (None, Some(src)) => {
                    (sinew_pipeline::import::load(&src, anim.as_deref()).map_err(|e| fail(&src, e))?, src)
                }
                (None, None) => return Ok(()),
            };
            print_clip_errors(&rig, &model, &opts, &measured, &mut |l| out.line(format_args!("{l}")))
        }
        Command::Dump {
            model: path,
            anim,
            clip,
            time,
            skin,
            skinning,
            mesh_node,
            raw,
            layers,
            additive,
            graph,
            graph_baked,
            sets,
        } => {
            let opts = if raw {
                BakeOptions { lossless: true, max_influences: sinew::limits::MAX_INFLUENCES, ..BakeOptions::default() }
            } else {
                BakeOptions::default()
            };
            let model = Model::load(&path, anim.as_deref(), &opts).map_err(|e| fail(&path, e))?;
            let clip = match clip {
                Some(key) => Some(
                    model.find_clip(&key).ok_or_else(|| fail(&path, format!("no clip named or numbered '{key}'")))?,
                ),
                None => (model.asset().num_clips() > 0).then_some(0),
            };
            if skin > 0 && skin >= model.asset().num_skins() {
                return Err(fail(&path, format!("no skin {skin} (the file has {})", model.asset().num_skins())));
            }
            if !time.is_finite() {
                return Err(Failure { file: None, message: "--time must be finite".into(), code: 2 });
            }
            let source = match (graph, graph_baked) {
                (Some(file), _) => Some(GraphSource::File(file)),
                (None, Some(name)) => Some(GraphSource::Baked(name)),
                (None, None) => None,
            };
            if let Some(source) = source {
                return dump_graph(&model, &path, &source, &sets, time, skin, skinning, mesh_node);
            }
            if !sets.is_empty() {
                return Err(Failure { file: None, message: "--set needs --graph or --graph-baked".into(), code: 2 });
            }
            let json = dump(
                &model,
                &DumpOptions {
                    clip,
                    time,
                    skin,
                    skinning: match skinning {
                        SkinningArg::Lbs => Skinning::Lbs,
                        SkinningArg::Dqs => Skinning::Dqs,
                    },
                    rotation: if raw { RotationInterpolation::Slerp } else { RotationInterpolation::NlerpCorrected },
                    layers,
                    additive,
                    mesh_node,
                },
            )
            .map_err(|e| fail(&path, e))?;
            Out::new().line(format_args!("{json}"))
        }
        Command::Demo {
            model,
            anim,
            clip,
            graph,
            sets,
            frames,
            screenshot,
            time,
            width,
            height,
            palette,
            skinning,
            bones,
            no_hud,
            gl,
        } => {
            let opts = DemoOptions {
                model,
                anim,
                clip,
                graph,
                sets,
                frames,
                screenshot,
                time,
                width,
                height,
                palette,
                skinning: match skinning {
                    SkinningArg::Lbs => Skinning::Lbs,
                    SkinningArg::Dqs => Skinning::Dqs,
                },
                bones,
                hud: !no_hud,
                gl: match gl {
                    GlArg::Auto => GlRequest::Auto,
                    GlArg::Es => GlRequest::Es,
                    GlArg::Desktop => GlRequest::Desktop,
                },
            };
            let report = demo::run(&opts).map_err(|e| Failure { file: None, message: e.to_string(), code: 2 })?;
            eprintln!(
                "sinew demo: {} frames, {:.2} ms per frame ({:.2} ms to build and submit) on {}",
                report.frames, report.mean_frame_ms, report.mean_cpu_ms, report.renderer
            );
            if let Some(g) = report.graph_state {
                eprintln!("sinew demo: graph {g}");
            }
            if let Some(p) = report.screenshot {
                eprintln!("wrote {}", p.display());
            }
            Ok(())
        }
    }
}
