//! Measuring a model's clips against the imported rig they come from (`sinew bake` and
//! `sinew info`): loading a model with its rig kept, and one line of errors per clip.

use std::path::Path;

use sinew_offline::bake::BakeOptions;
use sinew_offline::clip_error::measure_clips;
use sinew_offline::model::Model;
use sinew_offline::rig::Rig;
use sinew_offline::shells::{shells_from_mesh, uniform_shells};

use super::output::{fail, Failure};

/// Loads a model as [`Model::load`] does, keeping the imported rig (`None` for `.sinew` files).
pub fn load_with_rig(path: &Path, anim: Option<&Path>, opts: &BakeOptions) -> Result<(Model, Option<Rig>), Failure> {
    if path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("sinew")) {
        return Ok((Model::load(path, anim, opts).map_err(|e| fail(path, e))?, None));
    }
    let rig = sinew_offline::import::load(path, anim).map_err(|e| fail(path, e))?;
    let model = Model::from_rig(&rig, opts).map_err(|e| fail(path, e))?;
    Ok((model, Some(rig)))
}

/// Measures the clips of `model` against `rig` (see `sinew_offline::clip_error`) and writes
/// one line per clip: the bound, the largest shell error and the largest vertex error.
pub fn print_clip_errors(
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
