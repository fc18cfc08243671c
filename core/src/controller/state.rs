//! What a controller keeps between updates — per slot its clip, player, weight, fade, cursor
//! and root-motion measure (`Slot`), per layer its mode, weight and mask (`LayerState`) — and
//! what an update only works in ([`ControllerScratch`]).

use core::fmt::Debug;

use super::fade::Fade;
use super::LayerMode;
use crate::capacity::{Buf, Capacity, Element};
use crate::clip::SoaTrackCache;
use crate::job::sampling::TrackState;
use crate::math::SoaTransform;
use crate::player::Player;
use crate::real::Real;
use crate::root_motion::RootMotionTracker;

/// How a controller's slots keep their sampling state from one update to the next (the
/// [`SamplingJob`](crate::job::SamplingJob)'s `cursor`): [`KeyCursors`] (the default) or
/// [`SoaCaches`]. Both sample the same keys; they differ in memory, speed and the order of
/// some products (so in the last bits).
pub trait SlotSampling<R: Real, C: Capacity>: Copy + Debug + Default + 'static {
    /// One slot's state.
    type State: Element;
    /// Its entries, as the sampling job takes them.
    type Entry: TrackState<R>;
    /// The most tracks a slot's clip may have.
    const MAX_TRACKS: usize;
    /// The state's entries.
    fn entries(state: &mut Self::State) -> &mut [Self::Entry];
    /// A fresh state, built in place at run time (a large state is not copied from a constant
    /// in read-only data).
    fn fresh() -> Self::State {
        Self::State::INIT
    }
}

/// A `u16` key cursor per track (`C::TRACKS` of them, 2 bytes each): the least memory, for
/// microcontrollers; a clip may have up to `C::TRACKS` tracks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct KeyCursors;

impl<R: Real, C: Capacity> SlotSampling<R, C> for KeyCursors {
    type State = C::PerTrack<u16>;
    type Entry = u16;
    const MAX_TRACKS: usize = C::TRACKS;
    fn entries(state: &mut Self::State) -> &mut [u16] {
        state.as_mut()
    }
}

/// A [`SoaTrackCache`] per four joints (`C::SOA` of them): the keys around the current time,
/// decoded, so that playing forward decodes a key only when it crosses it — the fastest on
/// hosts, at a few hundred bytes per four joints; any number of tracks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SoaCaches;

impl<R: Real, C: Capacity> SlotSampling<R, C> for SoaCaches {
    type State = C::PerSoa<SoaTrackCache<R>>;
    type Entry = SoaTrackCache<R>;
    const MAX_TRACKS: usize = usize::MAX;
    fn entries(state: &mut Self::State) -> &mut [SoaTrackCache<R>] {
        state.as_mut()
    }
    fn fresh() -> Self::State {
        Buf::from_fn(|_| SoaTrackCache::EMPTY)
    }
}

/// An empty cache.
impl<R: Real> Element for SoaTrackCache<R> {
    const INIT: Self = SoaTrackCache::EMPTY;
}

/// One clip slot: its clip, player, weight, fade, phase sync, sampling state and root-motion
/// measure.
#[derive(Debug, Clone)]
pub(super) struct Slot<R: Real, C: Capacity, S: SlotSampling<R, C>> {
    pub(super) clip: Option<usize>,
    pub(super) layer: usize,
    pub(super) player: Player<R>,
    pub(super) weight: R,
    pub(super) fade: Option<Fade<R>>,
    pub(super) synced: bool,
    pub(super) cursor: S::State,
    pub(super) root: Option<RootMotionTracker<R>>,
    /// Player phase and loops after the last update, to notice seeks.
    pub(super) mark: (u64, i64),
}

/// An empty slot: no clip, weight 0, no fade.
impl<R: Real, C: Capacity, S: SlotSampling<R, C>> Element for Slot<R, C, S> {
    const INIT: Self = Slot {
        clip: None,
        layer: 0,
        player: Player::idle(),
        weight: R::ZERO,
        fade: None,
        synced: false,
        cursor: Element::INIT,
        root: None,
        mark: (0, 0),
    };
}

impl<R: Real, C: Capacity, S: SlotSampling<R, C>> Slot<R, C, S> {
    /// An empty slot ([`Element::INIT`]'s value), built in place at run time.
    pub(super) fn fresh() -> Self {
        Slot {
            clip: None,
            layer: 0,
            player: Player::idle(),
            weight: R::ZERO,
            fade: None,
            synced: false,
            cursor: S::fresh(),
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
pub(super) struct LayerState<R: Real, C: Capacity> {
    pub(super) mode: LayerMode,
    pub(super) weight: R,
    /// Joint count the mask was built for, `None` without mask.
    pub(super) mask_joints: Option<usize>,
    /// Per-joint weights (SoA layout), read only with `mask_joints` set.
    pub(super) mask: C::PerSoa<[R; 4]>,
}

/// A full-weight override layer without mask.
impl<R: Real, C: Capacity> Element for LayerState<R, C> {
    const INIT: Self = LayerState { mode: LayerMode::Override, weight: R::ONE, mask_joints: None, mask: Element::INIT };
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
pub struct ControllerScratch<R: Real, C: Capacity> {
    pub(super) poses: C::PerSlot<C::PerSoa<SoaTransform<R>>>,
    pub(super) shares: C::PerLayer<C::PerSoa<[R; 4]>>,
}

/// [`ControllerScratch::new`]'s value, built at run time rather than copied from a constant
/// (for a scratch on the heap: `Box::default()`).
impl<R: Real, C: Capacity> Default for ControllerScratch<R, C> {
    fn default() -> Self {
        const { crate::capacity::check::<C>() };
        ControllerScratch { poses: Buf::from_fn(|_| Buf::from_fn(|_| SoaTransform::IDENTITY)), shares: Element::INIT }
    }
}

impl<R: Real, C: Capacity> ControllerScratch<R, C> {
    /// A scratch for the controllers of capacity `C` (and the state machines of `C`, which run
    /// on one).
    #[must_use]
    pub const fn new() -> Self {
        const { crate::capacity::check::<C>() };
        ControllerScratch { poses: Element::INIT, shares: Element::INIT }
    }

    /// Slot `slot`'s sampled pose in the last update that used this scratch (in place when root
    /// motion is on; a delta in an additive layer with [`AdditiveReference::RestPose`]). A slot
    /// that update did not sample keeps whatever was there before, possibly another
    /// character's pose when the scratch is shared.
    ///
    /// [`AdditiveReference::RestPose`]: super::AdditiveReference::RestPose
    #[must_use]
    pub fn slot_pose(&self, slot: usize) -> Option<&[SoaTransform<R>]> {
        self.poses.as_ref().get(slot).map(AsRef::as_ref)
    }
}
