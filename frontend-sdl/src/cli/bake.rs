//! `sinew bake`: a model baked into a `.sinew` file (with an animation graph when asked), its
//! contents on standard output and the bake's report on standard error.

use sinew_offline::bake::{BakeOptions, BakeReport};
use sinew_offline::graph_bake::bake_graph;
use sinew_offline::graph_file::GraphFile;
use std::path::Path;

use sinew_offline::import::bvh::{self, BvhOptions};
use sinew_offline::model::Model;
use sinew_offline::retarget::{retarget_clips, ResampleOptions};
use sinew_offline::rig::Rig;

use super::args::BakeArgs;
use super::measure::{load_with_rig, print_clip_errors};
use super::model_info::print_info;
use super::output::{error, fail, Failure, Out};

/// `sinew bake`: checks the arguments, bakes `input` (and `--graph`), writes `--output`, prints
/// what it holds, then reports each clip's keys and errors, the work spent, the textures and
/// what the bake changed.
pub fn run(args: BakeArgs) -> Result<(), Failure> {
    let bound = args.bound.bake_options()?;
    if !(1..=sinew::limits::MAX_INFLUENCES).contains(&args.influences) {
        return Err(error("--influences must be 1 to 8"));
    }
    if !(1..=sinew::raster::MAX_TEXTURE_DIMENSION).contains(&args.texture_size) {
        return Err(error("--texture-size must be 1 to 4096"));
    }
    let opts = BakeOptions {
        palette: args.palette,
        max_influences: args.influences,
        lossless: args.lossless,
        max_work: args.max_work,
        texture_size: args.texture_size,
        texture_format: args.texture_format.into(),
        ..bound
    };
    let is_bvh = args.input.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("bvh"));
    if args.bvh_scale.is_some() && !is_bvh {
        return Err(error("--bvh-scale is for .bvh inputs"));
    }
    let (mut model, rig) = match (&args.retarget_from, args.bvh_scale) {
        (Some(source), _) => load_retargeted(&args, source, &opts)?,
        (None, Some(scale)) => {
            let input = &args.input;
            let rig = bvh::load_file(input, &BvhOptions { scale: Some(scale) }).map_err(|e| fail(input, e))?;
            (Model::from_rig(&rig, &opts).map_err(|e| fail(input, e))?, Some(rig))
        }
        (None, None) => load_with_rig(&args.input, args.anim.as_deref(), &opts)?,
    };
    if let Some(graph_path) = &args.graph {
        let text = std::fs::read_to_string(graph_path).map_err(|e| fail(graph_path, e))?;
        let joint = |name: &str| model.skeleton().find(name);
        let file = GraphFile::parse_with_joints(&text, |key| model.find_clip(key), joint, model.asset().num_clips())
            .map_err(|e| fail(graph_path, e))?;
        let stem = graph_path.file_stem().and_then(|s| s.to_str()).unwrap_or("graph");
        let name = args.graph_name.as_deref().unwrap_or(stem);
        let bytes = bake_graph(model.bytes(), name, &file).map_err(|e| fail(graph_path, e))?;
        let report = model.report.take();
        model = Model::from_bytes(&model.name, bytes).map_err(|e| fail(graph_path, e))?;
        model.report = report;
    }
    let output = &args.output;
    std::fs::write(output, model.bytes()).map_err(|e| fail(output, e))?;
    print_info(&model, &mut Out::new())?;
    if let Some(r) = &model.report {
        print_report(r, &opts);
    }
    if let Some(rig) = &rig {
        print_clip_errors(rig, &model, &opts, &args.input, &mut |l| {
            eprintln!("{l}");
            Ok(())
        })?;
    }
    eprintln!("wrote {} ({} bytes)", output.display(), model.bytes().len());
    Ok(())
}

/// `sinew bake --retarget-from`: imports the target, loads the source lossless (as
/// `sinew dump --raw` does), retargets the chosen source clips onto the target's rig (sampled
/// within a tenth of the bound, see `sinew_offline::retarget::retarget_clips`) in place of its
/// own clips, and bakes it with `opts`; the rig is returned with the retargeted clips for the
/// error report.
fn load_retargeted(args: &BakeArgs, source_path: &Path, opts: &BakeOptions) -> Result<(Model, Option<Rig>), Failure> {
    let input = &args.input;
    let is_sinew = |p: &Path| p.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("sinew"));
    if is_sinew(input) {
        return Err(fail(
            input,
            "--retarget-from needs an imported target (.glb, .gltf, .fbx, .bvh or .md5mesh), not a .sinew file",
        ));
    }
    let mut rig = sinew_offline::import::load(input, args.anim.as_deref()).map_err(|e| fail(input, e))?;
    // The target's skeleton and skins alone, for the retarget's rest poses.
    let bare = Rig {
        name: rig.name.clone(),
        joints: rig.joints.clone(),
        skins: rig.skins.clone(),
        meters_per_unit: rig.meters_per_unit,
        source_nodes: rig.source_nodes.clone(),
        ..Rig::default()
    };
    let target = Model::from_rig(&bare, opts).map_err(|e| fail(input, e))?;
    let lossless =
        BakeOptions { lossless: true, max_influences: sinew::limits::MAX_INFLUENCES, ..BakeOptions::default() };
    let (source, source_rig) = if is_sinew(source_path) {
        (Model::load(source_path, None, &lossless).map_err(|e| fail(source_path, e))?, None)
    } else {
        let r = sinew_offline::import::load(source_path, None).map_err(|e| fail(source_path, e))?;
        (Model::from_rig(&r, &lossless).map_err(|e| fail(source_path, e))?, Some(r))
    };
    let clips: Vec<usize> = if args.clip.is_empty() {
        (0..source.asset().num_clips()).collect()
    } else {
        args.clip
            .iter()
            .map(|key| {
                source.find_clip(key).ok_or_else(|| fail(source_path, format!("no clip named or numbered '{key}'")))
            })
            .collect::<Result<_, _>>()?
    };
    // Clip names must stay unique in the baked file.
    if let Some((i, c)) = clips.iter().enumerate().find(|(i, c)| clips[..*i].contains(c)) {
        let key = args.clip.get(i).map_or("", String::as_str);
        return Err(fail(source_path, format!("--clip '{key}' selects source clip {c} a second time")));
    }
    let retarget = super::retarget::setup(&source, source_path, &target, input, &args.retarget)?;
    let resample = ResampleOptions { tolerance: 0.1 * opts.tolerance, shell: opts.shell, ..ResampleOptions::default() };
    rig.clips = retarget_clips(&rig, &source, source_rig.as_ref(), &retarget, &clips, &resample)
        .map_err(|e| fail(source_path, e))?;
    let model = Model::from_rig(&rig, opts).map_err(|e| fail(input, e))?;
    Ok((model, Some(rig)))
}

/// Writes the bake's report to standard error: a table of the clips (tracks, keys, bytes,
/// largest error), the work spent, the clips stored lossless, the vertices whose influences
/// were cut, the textures and the degenerate triangles dropped.
fn print_report(r: &BakeReport, opts: &BakeOptions) {
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
            "{} vertices had more than {} influences: the largest were kept and renormalized",
            r.clamped_vertices, opts.max_influences
        );
    }
    for t in &r.textures {
        let resized =
            if t.source == t.baked { String::new() } else { format!(" (from {}x{})", t.source.0, t.source.1) };
        eprintln!("texture '{}': {}x{} {:?}{resized}", t.name, t.baked.0, t.baked.1, t.format);
    }
    if r.degenerate_triangles > 0 {
        eprintln!("dropped {} degenerate triangles (a vertex used twice)", r.degenerate_triangles);
    }
}
