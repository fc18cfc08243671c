//! Setting up retargeting between two loaded models from a map file's path and options, shared
//! by the command line's `--retarget-from` (`sinew info`, `dump`, `bake`) and the viewers'
//! (`sinew demo`, `sinew soft`, through [`Viewer::attach_retarget`]): a failure names the file
//! the problem is in.
//!
//! [`Viewer::attach_retarget`]: crate::demo::viewer::Viewer::attach_retarget

use std::fmt;
use std::path::{Path, PathBuf};

use sinew_offline::model::Model;
use sinew_offline::retarget::{JointMap, Retarget, RetargetError, RetargetOptions, Side};

/// Why [`setup`] failed: the file the problem is in and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupError {
    /// The file: the map for its own errors and the joints it names, the source for its hips'
    /// height (or a source that cannot be loaded), else the target.
    pub file: PathBuf,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message)
    }
}

impl std::error::Error for SetupError {}

/// Sets up retargeting `source`'s poses onto `target` with the map file `map` (`None`: the
/// automatic humanoid mapping) and `options`.
///
/// # Errors
///
/// A map file that cannot be read or parsed, or the [`RetargetError`] of [`Retarget::new`], as
/// a [`SetupError`] naming the file it is about.
pub fn setup<'a>(
    source: &'a Model,
    source_path: &Path,
    target: &'a Model,
    target_path: &Path,
    map: Option<&Path>,
    options: RetargetOptions,
) -> Result<Retarget<'a>, SetupError> {
    let fail = |file: &Path, e: &dyn fmt::Display| SetupError { file: file.to_path_buf(), message: e.to_string() };
    let joint_map = match map {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| fail(p, &e))?;
            Some(JointMap::parse(&text).map_err(|e| fail(p, &e))?)
        }
        None => None,
    };
    Retarget::new(source, target, joint_map.as_ref(), options).map_err(|e| {
        let file = match (&e, map) {
            (
                RetargetError::UnknownJoint { .. }
                | RetargetError::HipsUnmapped { .. }
                | RetargetError::AboveSkinRoot { .. },
                Some(m),
            ) => m,
            (RetargetError::HipsHeight { side: Side::Source, .. }, _) => source_path,
            _ => target_path,
        };
        fail(file, &e)
    })
}
