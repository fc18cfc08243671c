//! `sinew demo`: the SDL2/OpenGL ES viewer, in a window or headless.

use sinew_frontend::demo::{self, DemoOptions};

use super::args::DemoArgs;
use super::output::{error, Failure};

/// `sinew demo`: runs the viewer and reports the frames, their mean time and the renderer (the
/// graph's last state, the screenshot written) on standard error.
pub fn run(args: DemoArgs) -> Result<(), Failure> {
    let p = &args.playback;
    if let (Some(source), Some(target)) = (&p.retarget_from, &p.view.model) {
        super::retarget::check(source, target, p.view.anim.as_deref(), &p.retarget)?;
    }
    let opts = DemoOptions {
        playback: args.playback.into(),
        frames: args.frames,
        screenshot: args.screenshot,
        time: args.time,
        width: args.size.width,
        height: args.size.height,
        palette: args.palette,
        skinning: args.skinning.into(),
        bones: args.bones,
        colliders: args.colliders,
        hud: !args.no_hud,
        gl: args.gl.into(),
        crowd: args.crowd.map(|n| demo::CrowdOptions {
            count: n as usize,
            lod: !args.no_lod,
            instancing: !args.no_instancing,
        }),
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
