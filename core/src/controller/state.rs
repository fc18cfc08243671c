//! What a controller keeps between updates — per slot its clip, player, weight, fade, cursor
//! and root-motion measure (`Slot`), per layer its mode, weight and mask (`LayerState`) — and
//! what an update only works in ([`ControllerScratch`]).

use super::fade::Fade;
use super::LayerMode;
use crate::math::SoaTransform;
use crate::player::Player;
use crate::real::Real;
use crate::root_motion::RootMotionTracker;

/// One clip slot: its clip, player, weight, fade, phase sync, sampling cursor and root-motion
/// measure.
#[derive(Debug, Clone)]
pub(super) struct Slot<R, const TRACKS: usize> {
    pub(super) clip: Option<usize>,
    pub(super) layer: usize,
    pub(super) player: Player<R>,
    pub(super) weight: R,
    pub(super) fade: Option<Fade<R>>,
    pub(super) synced: bool,
    pub(super) cursor: [u16; TRACKS],
    pub(super) root: Option<RootMotionTracker<R>>,
    /// Player phase and loops after the last update, to notice seeks.
    pub(super) mark: (u64, i64),
}

impl<R: Real, const TRACKS: usize> Slot<R, TRACKS> {
    /// An empty slot: no clip, weight 0, no fade.
    pub(super) const fn empty() -> Self {
        Slot {
            clip: None,
            layer: 0,
            player: Player::idle(),
            weight: R::ZERO,
            fade: None,
            synced: false,
            cursor: [0; TRACKS],
            root: None,
            mark: (0, 0),
        }
    }
    /// Sampled, advanced and blended this update.
    pub(super) fn active(&self) -> bool {
        self.clip.is_some() && (self.weight > R::ZERO || self.fade.is_some_and(|f| f.to > R::ZERO))
    }
}

/// One layer: its mode, weight and mask.
#[derive(Debug, Clone)]
pub(super) struct LayerState<R, const SOA: usize> {
    pub(super) mode: LayerMode,
    pub(super) weight: R,
    /// Joint count the mask was built for, `None` without mask.
    pub(super) mask_joints: Option<usize>,
    pub(super) mask: [[R; 4]; SOA],
}

/// The working memory of [`Controller::update`]: one sampled pose per slot and the per-joint
/// blend weights of each layer.
///
/// Nothing in it survives from one update to the next, so characters updated one after another
/// share one scratch (one per thread): per character only the [`Controller`], its output pose
/// and its matrices stay in memory.
///
/// [`Controller`]: super::Controller
/// [`Controller::update`]: super::Controller::update
#[derive(Debug, Clone)]
pub struct ControllerScratch<R: Real, const SOA: usize, const SLOTS: usize, const LAYERS: usize> {
    pub(super) poses: [[SoaTransform<R>; SOA]; SLOTS],
    pub(super) shares: [[[R; 4]; SOA]; LAYERS],
}

impl<R: Real, const SOA: usize, const SLOTS: usize, const LAYERS: usize> Default
    for ControllerScratch<R, SOA, SLOTS, LAYERS>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<R: Real, const SOA: usize, const SLOTS: usize, const LAYERS: usize> ControllerScratch<R, SOA, SLOTS, LAYERS> {
    /// A scratch for controllers of the same `SOA`, `SLOTS` and `LAYERS`.
    #[must_use]
    pub const fn new() -> Self {
        ControllerScratch { poses: [[SoaTransform::IDENTITY; SOA]; SLOTS], shares: [[[R::ZERO; 4]; SOA]; LAYERS] }
    }

    /// Slot `slot`'s sampled pose in the last update that used this scratch (in place when root
    /// motion is on; a delta in an additive layer with [`AdditiveReference::RestPose`]). A slot
    /// that update did not sample keeps whatever was there before, possibly another
    /// character's pose when the scratch is shared.
    ///
    /// [`AdditiveReference::RestPose`]: super::AdditiveReference::RestPose
    #[must_use]
    pub fn slot_pose(&self, slot: usize) -> Option<&[SoaTransform<R>]> {
        self.poses.get(slot).map(|p| &p[..])
    }
}
