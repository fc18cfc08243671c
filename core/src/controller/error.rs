//! [`ControllerError`]: why a controller call was refused.

use core::fmt;

use super::ClipId;
use crate::job::JobError;
use crate::player::PlayerError;

/// Why a controller call was refused. The controller is unchanged (and for
/// [`Controller::update`](super::Controller::update), the output untouched and no event reported).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ControllerError {
    /// A slot index is not below the capacity's `SLOTS`.
    SlotOutOfRange,
    /// A layer index is not below the capacity's `LAYERS`.
    LayerOutOfRange,
    /// The slot has no clip assigned.
    EmptySlot,
    /// A clip id given to [`Controller::assign`](super::Controller::assign) is not below the
    /// number of clips given with it.
    UnknownClip {
        /// The id.
        clip: ClipId,
        /// The number of clips given.
        clips: usize,
    },
    /// A slot's clip index is not below the number of clips given to the update.
    ClipOutOfRange {
        /// The slot.
        slot: usize,
    },
    /// A clip has more tracks than the capacity's `TRACKS` (a slot's cursors).
    TooManyTracks {
        /// Tracks of the clip.
        tracks: usize,
        /// `TRACKS`.
        capacity: usize,
    },
    /// The skeleton has more SoA elements than the capacity's `SOA`.
    SkeletonTooLarge,
    /// A layer mask was built for a skeleton with another joint count.
    MaskMismatch {
        /// The layer.
        layer: usize,
    },
    /// A weight or a duration is NaN or infinite, or a duration is negative.
    InvalidParameter,
    /// A job refused its inputs (a short output pose, a clip animating joints past the skeleton,
    /// a root-motion joint past the skeleton, a bad mask channel).
    Job(JobError),
    /// A player refused the step (non-finite `dt`, or too many loops in one step).
    Player(PlayerError),
    /// Root motion was asked of a controller whose capacity has none
    /// ([`Capacity::ROOT_MOTION`](crate::capacity::Capacity::ROOT_MOTION)).
    NoRootMotion,
    /// An additive layer was asked of a controller whose capacity has none
    /// ([`Capacity::ADDITIVE`](crate::capacity::Capacity::ADDITIVE)).
    NoAdditive,
}

impl fmt::Display for ControllerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::SlotOutOfRange => f.write_str("slot index out of range"),
            Self::LayerOutOfRange => f.write_str("layer index out of range"),
            Self::EmptySlot => f.write_str("the slot has no clip"),
            Self::UnknownClip { clip, clips } => write!(f, "{clip} is not among the {clips} clips given"),
            Self::ClipOutOfRange { slot } => write!(f, "slot {slot} refers to a clip that was not given"),
            Self::TooManyTracks { tracks, capacity } => {
                write!(f, "a clip has {tracks} tracks, more than the cursor capacity of {capacity}")
            }
            Self::SkeletonTooLarge => f.write_str("the skeleton has more joints than the controller's capacity"),
            Self::MaskMismatch { layer } => {
                write!(f, "the mask of layer {layer} was built for a skeleton with another joint count")
            }
            Self::InvalidParameter => f.write_str("a weight or duration is NaN, infinite or negative"),
            Self::Job(e) => write!(f, "job error: {e}"),
            Self::Player(e) => write!(f, "player error: {e}"),
            Self::NoRootMotion => f.write_str("this controller's capacity has no root motion"),
            Self::NoAdditive => f.write_str("this controller's capacity has no additive layers"),
        }
    }
}

impl core::error::Error for ControllerError {}

impl From<JobError> for ControllerError {
    fn from(e: JobError) -> Self {
        Self::Job(e)
    }
}

impl From<PlayerError> for ControllerError {
    fn from(e: PlayerError) -> Self {
        Self::Player(e)
    }
}
