//! Measuring a model's clips against the imported rig they come from (`sinew bake` and
//! `sinew info`): loading a model with its rig kept, and one line of errors per clip.

use std::path::Path;

use sinew_offline::bake::BakeOptions;
use sinew_offline::clip_error::measure_clips;
use sinew_offline::model::Model;
use sinew_offline::rig::Rig;

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
    let shells = sinew_offline::shells::shells(rig, opts);
    let from_mesh = opts.shell_from_mesh;
    let largest = shells.iter().copied().fold(0.0, f64::max) * sinew_offline::shells::meters_per_unit(rig);
    let shell = shell_text(from_mesh, if from_mesh { largest } else { opts.shell });
    for e in measure_clips(rig, model, &shells).map_err(|e| fail(source, e))? {
        line(e.describe(opts.tolerance, &shell))?;
    }
    Ok(())
}

/// How a bake or a measurement set its shells, for its lines: "shells from the mesh (up to
/// `shell` m)", or "a fixed `shell` m shell".
pub fn shell_text(from_mesh: bool, shell: f64) -> String {
    if from_mesh {
        format!("shells from the mesh (up to {shell:.3} m)")
    } else {
        // As the clip report stores it: f32 prints 0.03 as 0.03.
        format!("a fixed {} m shell", shell as f32)
    }
}
