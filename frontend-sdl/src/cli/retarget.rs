//! The command line's retargeting setup, shared by `info`, `dump`, `bake` and `demo` with
//! `--retarget-from`: [`setup`] with the map file and hips options of [`RetargetArgs`]
//! ([`sinew_frontend::retarget::setup`]), and [`check`], the demo's setup before its window
//! opens; a failure names the file the problem is in, exit code 2.

use std::path::Path;

use sinew_offline::bake::BakeOptions;
use sinew_offline::model::Model;
use sinew_offline::retarget::Retarget;

use super::args::RetargetArgs;
use super::output::{fail, Failure};

/// Sets up retargeting `source`'s poses onto `target` with the map file and options of `args`
/// ([`sinew_frontend::retarget::setup`]); a failure names the file the problem is in.
pub fn setup<'a>(
    source: &'a Model,
    source_path: &Path,
    target: &'a Model,
    target_path: &Path,
    args: &RetargetArgs,
) -> Result<Retarget<'a>, Failure> {
    sinew_frontend::retarget::setup(source, source_path, target, target_path, args.map.as_deref(), args.options())
        .map_err(|e| fail(&e.file, e.message))
}

/// Loads `target_path` (with `anim`) and `source_path` and sets the retargeting of `args` up
/// once, so that a viewer whose window cannot show the error fails before it opens as
/// `sinew dump --retarget-from` does: one line naming the file, exit code 2.
pub fn check(source_path: &Path, target_path: &Path, anim: Option<&Path>, args: &RetargetArgs) -> Result<(), Failure> {
    let opts = BakeOptions::default();
    let target = Model::load(target_path, anim, &opts).map_err(|e| fail(target_path, e))?;
    let source = Model::load(source_path, None, &opts).map_err(|e| fail(source_path, e))?;
    setup(&source, source_path, &target, target_path, args).map(drop)
}
