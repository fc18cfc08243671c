//! Why the scene could not be built or posed: [`SceneError`].

use sinew::graph::{GraphError, LayerError};
use sinew::job::JobError;
use sinew_offline::model::ModelError;

/// Why the scene could not be built.
#[derive(Debug)]
pub enum SceneError {
    /// A rig failed to bake or load.
    Model(ModelError),
    /// A built-in clip is missing after baking (an internal error).
    MissingClip(&'static str),
    /// The character's state machine refused a call (an internal error).
    Animation(GraphError),
    /// The character's layered graph was refused (an internal error).
    Layer(LayerError),
    /// A pose did not fit its skeleton (an internal error).
    Job(JobError),
}

impl std::fmt::Display for SceneError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Model(e) => write!(f, "{e}"),
            Self::MissingClip(c) => write!(f, "built-in clip '{c}' is missing"),
            Self::Animation(e) => write!(f, "character: {e}"),
            Self::Layer(e) => write!(f, "character: {e}"),
            Self::Job(e) => write!(f, "pose: {e}"),
        }
    }
}

impl std::error::Error for SceneError {}

impl From<JobError> for SceneError {
    fn from(e: JobError) -> Self {
        Self::Job(e)
    }
}
