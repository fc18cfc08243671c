//! `sinew dump`: one JSON object with a pose's matrices, skinned vertices and one mesh
//! instance's morph weights and positions, from a clip (with layers), an animation graph or
//! another model's pose retargeted, with foot placement and IK chains applied to that pose.

use std::path::{Path, PathBuf};

use sinew::clip::RotationInterpolation;
use sinew::graph::LayeredGraph;
use sinew::math::SoaTransform;
use sinew_offline::bake::BakeOptions;
use sinew_offline::dump::pose_ik::{self, GroundSpec, IkSpec, LegSpec, PoseEdits};
use sinew_offline::dump::springs::spring_pose;
use sinew_offline::dump::{blended_pose, dump_pose, DumpOptions};
use sinew_offline::graph_bake::baked_graph;
use sinew_offline::graph_file::GraphFile;
use sinew_offline::graph_run::{run_layered, SetSpec};
use sinew_offline::model::Model;

use super::args::DumpArgs;
use super::output::{error, fail, Failure, Out};

/// Where `sinew dump` takes its graph from.
enum GraphSource {
    /// A JSON graph file.
    File(PathBuf),
    /// A graph baked in the model: by name, or the first (`""`).
    Baked(String),
}

/// `sinew dump`: loads the model (lossless with every influence for `--raw`), checks the clip,
/// skin and time, and prints the dump of the clip at `--time`, of the graph run to it or of the
/// source's pose retargeted, after `--ground` and `--ik` ([`pose_ik`]).
pub fn run(args: DumpArgs) -> Result<(), Failure> {
    let DumpArgs {
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
        retarget_from,
        retarget: retarget_args,
        ik,
        ground,
        legs,
        springs,
        rate,
    } = args;
    let edits = pose_edits(&ik, ground.as_deref(), &legs)?;
    let opts = if raw {
        BakeOptions { lossless: true, max_influences: sinew::limits::MAX_INFLUENCES, ..BakeOptions::default() }
    } else {
        BakeOptions::default()
    };
    let model = Model::load(&path, anim.as_deref(), &opts).map_err(|e| fail(&path, e))?;
    if !time.is_finite() {
        return Err(error("--time must be finite"));
    }
    if let Some(source_path) = retarget_from {
        let source = Model::load(&source_path, None, &opts).map_err(|e| fail(&source_path, e))?;
        let clip = find_clip(&source, &source_path, clip.as_deref())?;
        let rotation = if raw { RotationInterpolation::Slerp } else { RotationInterpolation::NlerpCorrected };
        let mut pose = Vec::new();
        source.sample(clip, time, rotation, &mut Vec::new(), &mut pose).map_err(|e| fail(&source_path, e))?;
        let r = super::retarget::setup(&source, &source_path, &model, &path, &retarget_args)?;
        let mut pose = r.pose(&pose).map_err(|e| fail(&path, e))?;
        apply_edits(&model, &path, &mut pose, &edits)?;
        if skin > 0 && skin >= model.asset().num_skins() {
            return Err(fail(&path, format!("no skin {skin} (the file has {})", model.asset().num_skins())));
        }
        let opts = DumpOptions { skin, skinning: skinning.into(), mesh_node, ..DumpOptions::default() };
        let json = dump_pose(&model, &pose, &opts).map_err(|e| fail(&path, e))?;
        return Out::new().line(format_args!("{json}"));
    }
    let clip = find_clip(&model, &path, clip.as_deref())?;
    if skin > 0 && skin >= model.asset().num_skins() {
        return Err(fail(&path, format!("no skin {skin} (the file has {})", model.asset().num_skins())));
    }
    let instance = DumpOptions { skin, skinning: skinning.into(), mesh_node, ..DumpOptions::default() };
    let source = match (graph, graph_baked) {
        (Some(file), _) => Some(GraphSource::File(file)),
        (None, Some(name)) => Some(GraphSource::Baked(name)),
        (None, None) => None,
    };
    if let Some(source) = source {
        return dump_graph(&model, &path, &source, &sets, time, &instance, &edits);
    }
    if !sets.is_empty() {
        return Err(error("--set needs --graph or --graph-baked"));
    }
    let rotation = if raw { RotationInterpolation::Slerp } else { RotationInterpolation::NlerpCorrected };
    let opts = DumpOptions { clip, time, rotation, layers, additive, ..instance };
    if springs {
        let edit = |pose: &mut Vec<SoaTransform<f32>>| {
            pose_ik::apply(&model, pose, &edits).map(drop).map_err(|e| e.to_string())
        };
        let (pose, _) = spring_pose(&model, &opts, rate, edit).map_err(|e| fail(&path, e))?;
        let json = dump_pose(&model, &pose, &opts).map_err(|e| fail(&path, e))?;
        return Out::new().line(format_args!("{json}"));
    }
    let mut pose = blended_pose(&model, &opts).map_err(|e| fail(&path, e))?;
    apply_edits(&model, &path, &mut pose, &edits)?;
    let json = dump_pose(&model, &pose, &opts).map_err(|e| fail(&path, e))?;
    Out::new().line(format_args!("{json}"))
}

/// The pose edits of `--ik`, `--ground` and `--leg`, each spec read into its typed value (here
/// rather than by clap, so that a bad spec fails with one line like every other failure).
fn pose_edits(ik: &[String], ground: Option<&str>, legs: &[String]) -> Result<PoseEdits, Failure> {
    let ik = ik.iter().map(|s| s.parse::<IkSpec>()).collect::<Result<_, _>>().map_err(error)?;
    let ground = ground.map(str::parse::<GroundSpec>).transpose().map_err(error)?;
    let legs = legs.iter().map(|s| s.parse::<LegSpec>()).collect::<Result<Vec<_>, _>>().map_err(error)?;
    if ground.is_none() && !legs.is_empty() {
        return Err(error("--leg needs --ground"));
    }
    Ok(PoseEdits { ik, ground, legs })
}

/// Applies `edits` to `pose` ([`pose_ik::apply`]), with a `note:` line on stderr for each
/// chain that stopped short of its target.
fn apply_edits(
    model: &Model,
    path: &Path,
    pose: &mut [sinew::math::SoaTransform<f32>],
    edits: &PoseEdits,
) -> Result<(), Failure> {
    let reports = pose_ik::apply(model, pose, edits).map_err(|e| fail(path, e))?;
    for (spec, report) in edits.ik.iter().zip(&reports).filter(|(_, r)| !r.reached) {
        eprintln!(
            "note: --ik {} to {}: the end stopped {} from the target after {} iterations",
            spec.from, spec.to, report.distance, report.iterations
        );
    }
    Ok(())
}

/// `sinew dump --graph` and `--graph-baked`: runs the graph on the model to `time`, applies
/// `edits` to its pose and prints the dump's JSON of the mesh instance in `instance` (skin,
/// skinning, mesh node) with `"graph_state"` (morph targets at their default weights).
fn dump_graph(
    model: &Model,
    path: &Path,
    source: &GraphSource,
    sets: &[SetSpec],
    time: f32,
    instance: &DumpOptions,
    edits: &PoseEdits,
) -> Result<(), Failure> {
    let asset = model.asset();
    let (mut pose, state) = match source {
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
    apply_edits(model, path, &mut pose, edits)?;
    let json = dump_pose(model, &pose, instance).map_err(|e| fail(path, e))?;
    let body = json.strip_suffix('}').unwrap_or(&json);
    Out::new().line(format_args!("{body},\"graph_state\":{}}}", state.to_json()))
}

/// The clip `key` names (by name or index) in `model`, else its first (`None` without clips).
fn find_clip(model: &Model, path: &Path, key: Option<&str>) -> Result<Option<usize>, Failure> {
    match key {
        Some(key) => {
            Ok(Some(model.find_clip(key).ok_or_else(|| fail(path, format!("no clip named or numbered '{key}'")))?))
        }
        None => Ok((model.asset().num_clips() > 0).then_some(0)),
    }
}
