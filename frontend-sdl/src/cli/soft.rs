//! `sinew soft`: the software rasterizer's viewer, in a window or headless.

use sinew_frontend::soft::{self, SoftOptions};

use super::args::SoftArgs;
use super::output::{error, Failure};

/// `sinew soft`: runs the viewer and reports the frames and their mean time (and the graph's
/// last state) on standard error.
pub fn run(args: SoftArgs) -> Result<(), Failure> {
    if args.time.is_some_and(|t| !t.is_finite()) {
        return Err(error("--time must be finite"));
    }
    let (width, height) = (args.size.width, args.size.height);
    let opts = SoftOptions {
        playback: args.playback.into(),
        headless: args.headless,
        frames: args.frames,
        time: args.time,
        screenshot: args.screenshot,
        width,
        height,
        bones: args.bones,
    };
    let report = soft::run(&opts).map_err(error)?;
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
