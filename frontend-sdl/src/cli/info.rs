//! `sinew info`: what a model holds, line by line, and how far its clips are from their source.

use sinew_offline::model::Model;

use super::args::InfoArgs;
use super::measure::{load_with_rig, print_clip_errors};
use super::model_info::print_info_with_rig;
use super::output::{fail, Failure, Out};

/// `sinew info`: [`print_info_with_rig`] (the spring bones too, for an imported file), then the
/// clips' errors against the imported file (or
/// `--source` for a `.sinew` file); with `--retarget-from`, the retarget mapping instead.
pub fn run(args: InfoArgs) -> Result<(), Failure> {
    let InfoArgs { file, anim, source, bound, retarget_from, retarget } = args;
    let opts = bound.bake_options()?;
    if let Some(source_path) = retarget_from {
        let target = Model::load(&file, anim.as_deref(), &opts).map_err(|e| fail(&file, e))?;
        let source = Model::load(&source_path, None, &opts).map_err(|e| fail(&source_path, e))?;
        let r = super::retarget::setup(&source, &source_path, &target, &file, &retarget)?;
        let mut out = Out::new();
        for line in r.report() {
            out.line(format_args!("{line}"))?;
        }
        return Ok(());
    }
    let (model, rig) = load_with_rig(&file, anim.as_deref(), &opts)?;
    let mut out = Out::new();
    print_info_with_rig(&model, rig.as_ref(), &mut out)?;
    let (rig, measured) = match (rig, source) {
        (Some(rig), _) => (rig, file),
        (None, Some(src)) => (sinew_offline::import::load(&src, anim.as_deref()).map_err(|e| fail(&src, e))?, src),
        (None, None) => return Ok(()),
    };
    print_clip_errors(&rig, &model, &opts, &measured, &mut |l| out.line(format_args!("{l}")))
}
