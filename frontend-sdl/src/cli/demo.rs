//! `sinew demo`: the SDL2/OpenGL ES viewer, in a window or headless.

use sinew_frontend::demo::{self, DemoOptions};
use sinew_offline::retarget::RetargetOptions;

use std::path::Path;

use sinew_offline::bake::BakeOptions;
use sinew_offline::model::Model;

use super::args::{DemoArgs, RetargetArgs};
use super::output::{error, fail, Failure};

/// `sinew demo`: runs the viewer and reports the frames, their mean time and the renderer (the
/// graph's last state, the screenshot written) on standard error.
pub fn run(args: DemoArgs) -> Result<(), Failure> {
    if let (Some(source), Some(target)) = (&args.retarget_from, &args.view.model) {
        check_retarget(source, target, args.view.anim.as_deref(), &args.retarget)?;
    }
    let opts = DemoOptions {
        model: args.view.model,
        anim: args.view.anim,
        clip: args.clip,
        graph: args.graph,
        sets: args.sets.sets,
        retarget_from: args.retarget_from,
        retarget_map: args.retarget.map,
        retarget: RetargetOptions { scale: args.retarget.retarget_scale, in_place: args.retarget.in_place },
        hide_source: args.hide_source,
        frames: args.frames,
        screenshot: args.screenshot,
        time: args.time,
        width: args.size.width,
        height: args.size.height,
        palette: args.palette,
        skinning: args.skinning.into(),
        bones: args.bones,
        hud: !args.no_hud,
        gl: args.gl.into(),
    };
    let report = demo::run(&opts).map_err(error)?;
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

/// Sets the retargeting of `sinew demo --retarget-from` up once before the window opens, so
/// that a model that cannot be loaded or a mapping that cannot be set up fails as
/// `sinew dump --retarget-from` does: one line naming the file, exit code 2.
fn check_retarget(
    source_path: &Path,
    target_path: &Path,
    anim: Option<&Path>,
    args: &RetargetArgs,
) -> Result<(), Failure> {
    let opts = BakeOptions::default();
    let target = Model::load(target_path, anim, &opts).map_err(|e| fail(target_path, e))?;
    let source = Model::load(source_path, None, &opts).map_err(|e| fail(source_path, e))?;
    super::dump::retarget(&source, source_path, &target, target_path, args).map(drop)
}
