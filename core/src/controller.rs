//! The animation controller a game drives each frame: clip slots with their players, fades and
//! crossfades (optionally phase-synced), masked override layers, additive layers and root
//! motion, all in fixed memory.
//!
//! # Structure
//!
//! A [`Controller<R, C>`](Controller) takes its sizes from a [`Capacity`] `C` (declared once
//! with [`capacity!`](crate::capacity!)): it has `C::SLOTS` clip slots and `C::LAYERS` layers.
//! A slot holds a clip (a [`ClipId`], an index into the clips passed to
//! [`Controller::update`]), its [`Player`], its weight, an optional fade and its own sampling
//! cursor (`C::TRACKS` entries: the most tracks a clip may have, at most 3 × joints). A layer
//! has a [`LayerMode`], a weight in `[0, 1]` and an optional mask ([`crate::job::mask`]).
//!
//! # Indices
//!
//! A call taking several indices takes them typed: [`Controller::assign`]`(`[`SlotId`]`,
//! `[`LayerId`]`, `[`ClipId`]`, clips)`, so that swapping two is a type error, not a
//! character playing the wrong clip on the wrong layer. Calls taking one index (`weight(slot)`,
//! `set_layer_weight(layer, w)`, `crossfade(to, …)`) take a plain `usize`: the method's name
//! says what it indexes and there is no second index to confuse it with; an id's `.0` (or
//! `usize::from`) passes one there.
//!
//! # Update
//!
//! [`Controller::update`] first checks everything it needs (on error nothing changes), then
//! runs its passes in order (`controller/update.rs`):
//!
//! 1. **fades**: fading slots' weights progress by `dt`;
//! 2. **layer weights**: each override layer's share of every joint;
//! 3. **advance and sample**: the slots playing at the start of the update advance (reporting
//!    markers) and those still playing are sampled into their own pose of the caller's
//!    [`ControllerScratch`]; with root motion on, the root joint's motion is taken out of the
//!    override slots' poses and blended by their weights at the root;
//! 4. **blend**: one [`BlendingJob`](crate::job::BlendingJob) mixes the slots' poses into the
//!    caller's output pose.
//!
//! Override layers, from the last to the first, cover the ones below in proportion to their
//! weight, their mask and their slots' summed weight (up to 1): an upper-body layer at full
//! weight replaces the base layer's upper body; an empty or zero-weight layer leaves the ones
//! below untouched. Additive layers apply their slots' poses as deltas on top (weight: layer
//! weight × slot weight; per joint: the layer mask). Where the weights sum to less than the
//! threshold (default 1: a first clip fading in) the rest pose fills in.
//! The exact weight algebra is documented with the pass that applies it, `weigh_layers` in
//! `controller/update.rs`.
//!
//! The other files: `controller/error.rs` ([`ControllerError`]), `controller/state.rs` (the
//! per-slot and per-layer state, [`ControllerScratch`]), `controller/fade.rs` (fades,
//! crossfades, phase sync).
//!
//! # Fades
//!
//! [`Controller::fade_to`] moves a slot's weight from its current value to a target over a
//! duration of real time (`dt`, not scaled by the player's speed), linearly or by smoothstep
//! `3s² − 2s³` of the progress `s`. [`Controller::crossfade`] fades one slot in to 1 and the
//! other slots of its layer out to 0 over the same duration and curve, so weights keep summing
//! to one. With `sync`, the incoming slot starts at the normalized phase of the layer's dominant
//! slot, and while two or more synced slots play in a layer they advance together by
//! `ρ · dt` cycles, `ρ = Σ wᵢ · speedᵢ / cycleᵢ / Σ wᵢ` (the weighted mean of their normalized
//! rates): a walk and a run of different lengths keep their feet in phase through the blend.
//! Once one synced slot is left, it plays on at its own rate.
//!
//! # Root motion
//!
//! With [`Controller::set_root_motion`], each active slot of an override layer extracts its root
//! joint's motion ([`crate::root_motion`]) before blending (its pose is made in place), and the
//! update's displacement is the mean of the slots' deltas weighted by their blend weight at the
//! root joint. A seek or a clip change restarts a slot's measure (no jump). A capacity declared
//! with `root_motion: false` ([`Capacity::ROOT_MOTION`]) leaves the extraction out of the
//! update's code, as one declared with `additive: false` ([`Capacity::ADDITIVE`]) leaves out
//! additive layers.
//!
//! # Memory
//!
//! The controller holds what persists between updates: per slot its sampling state (by default
//! [`KeyCursors`], `C::TRACKS` `u16` key cursors; [`SoaCaches`], a decoded-key cache per four
//! joints, trades memory for speed on hosts: the controller's third parameter, a
//! [`SlotSampling`]), a player and root-motion state; per layer a mask of `C::SOA` `[R; 4]`. What an update only works
//! in — one sampled pose per slot and each layer's per-joint blend weights — is a
//! [`ControllerScratch`] passed to [`Controller::update`]; characters updated in turn share one
//! (one per thread). The caller supplies the clips, the skeleton and the output pose (and the
//! model matrices of the jobs that follow). Their sizes on x86_64 (the `memory_per_character`
//! test asserts them):
//!
//! | capacity                                       | controller | scratch  |
//! |------------------------------------------------|------------|----------|
//! | 24 joints, 4 slots, 3 layers, 72 tracks        | 1 760 B    | 4 128 B  |
//! | 67 joints, 4 slots, 3 layers, 201 tracks       | 3 312 B    | 11 696 B |
//!
//! (`Q16` is the same size; the ready-made capacities' sizes are in [`capacity`](mod@crate::capacity).) The
//! scratch's poses are most of it: `SLOTS × SOA × 160` bytes for `f32`.

mod error;
mod fade;
mod state;
mod update;

pub use error::ControllerError;
pub use fade::FadeCurve;
pub use state::{ControllerScratch, KeyCursors, SlotSampling, SoaCaches};

pub(crate) use fade::Fade;
pub(crate) use update::override_shares;
pub use update::{layer_shares, ShareTerms};

use state::{LayerState, Slot};

use core::fmt;

use crate::capacity::{check, Buf, Capacity, Element};
use crate::clip::{Clip, RotationInterpolation};
use crate::job::mask::{Channel, MaskJob};
use crate::player::{Event, Marker, Player};
use crate::real::Real;
use crate::root_motion::{Motion, RootMotionSettings};
use crate::skeleton::SkeletonView;

/// A clip the controller can play, with its markers.
#[derive(Debug, Clone, Copy)]
pub struct ClipEntry<'a, R> {
    /// The clip.
    pub clip: Clip<'a>,
    /// Its markers, sorted by time (may be empty).
    pub markers: &'a [Marker<R>],
}

impl<'a, R> ClipEntry<'a, R> {
    /// A clip without markers.
    #[must_use]
    pub fn new(clip: Clip<'a>) -> Self {
        ClipEntry { clip, markers: &[] }
    }
}

macro_rules! index_type {
    ($(#[$meta:meta])* $name:ident, $what:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub usize);

        impl From<usize> for $name {
            fn from(index: usize) -> Self {
                $name(index)
            }
        }

        impl From<$name> for usize {
            fn from(id: $name) -> usize {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($what, " {}"), self.0)
            }
        }
    };
}

index_type!(
    /// A clip slot of a [`Controller`]: an index below its capacity's `SLOTS`.
    SlotId,
    "slot"
);
index_type!(
    /// A layer of a [`Controller`] (0: the base): an index below its capacity's `LAYERS`.
    LayerId,
    "layer"
);
index_type!(
    /// A clip: an index into the [`ClipEntry`] list a [`Controller`] is updated with.
    ClipId,
    "clip"
);

/// Where an additive layer's deltas come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum AdditiveReference {
    /// The clips already hold deltas (baked with
    /// [`make_additive`](crate::job::blending::make_additive)).
    Baked,
    /// The sampled pose is made a delta from the skeleton's rest pose at each update.
    #[default]
    RestPose,
}

/// How a layer combines with the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LayerMode {
    /// Covers the layers below where its mask and weight say (see the module documentation).
    Override,
    /// Adds its slots' deltas on top of the blend.
    Additive(AdditiveReference),
}

/// An override layer (a capacity's layers start as override layers).
impl Element for LayerMode {
    const INIT: Self = LayerMode::Override;
}

/// A marker crossing, with where it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ControllerEvent<R> {
    /// The slot that played it.
    pub slot: usize,
    /// The slot's clip index.
    pub clip: usize,
    /// The slot's weight after this update's fades, in `[0, 1]` (to ignore faint clips'
    /// footsteps; 0 for a slot that finished fading out during the update).
    pub weight: R,
    /// The crossing.
    pub event: Event<R>,
}

/// A character's animation state in fixed memory, its sizes those of the [`Capacity`] `C`. See
/// the [module documentation](self).
///
/// `C::SOA` is the pose capacity in SoA elements, `C::SLOTS` the clip slots, `C::LAYERS` the
/// layers (layer 0 starts as a full-weight override layer, the base; so does every other),
/// `C::TRACKS` the most tracks of a slot's clip.
///
/// # Examples
///
/// The baked character walks, then crossfades to a run in a quarter of a second, feet in
/// phase:
///
/// ```
/// use sinew::asset::Asset;
/// use sinew::controller::{ClipEntry, ClipId, Controller, ControllerScratch, FadeCurve, LayerId, SlotId};
/// use sinew::math::SoaTransform;
/// use sinew::skeleton::Skeleton;
///
/// sinew::capacity! {
///     /// 24 joints, 2 slots (the default: 1 layer, 72 tracks).
///     pub struct Walker { joints: 24, slots: 2 }
/// }
///
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));
/// let asset = Asset::parse(bytes)?;
/// let skeleton: Skeleton<f32, { Walker::SOA }> = asset.skeleton().ok_or("no skeleton")?.to_skeleton()?;
/// let walk = asset.clip_by_name("walk").ok_or("no walk")?;
/// let run = asset.clip_by_name("run").ok_or("no run")?;
/// let clips = [ClipEntry::new(walk), ClipEntry::new(run)];
///
/// let mut character = Controller::<f32, Walker>::new();
/// character.assign(SlotId(0), LayerId(0), ClipId(0), &clips)?; // the walk in slot 0
/// character.assign(SlotId(1), LayerId(0), ClipId(1), &clips)?; // the run in slot 1
/// character.set_weight(0, 1.0)?;
///
/// let mut scratch = ControllerScratch::new(); // shared by the characters updated in turn
/// let mut pose = [SoaTransform::IDENTITY; Walker::SOA]; // the blended local pose
/// for frame in 1..=48 {
///     if frame == 31 {
///         // Half a second in: fade to the run over 0.25 s, starting it at the walk's phase.
///         character.crossfade(1, 0.25, FadeCurve::SmoothStep, true)?;
///     }
///     character.update(1.0 / 60.0, &clips, skeleton.view(), &mut scratch, &mut pose, |_event| {})?;
///     if frame == 36 {
///         // Mid-fade: both clips play, their weights summing to 1.
///         let (walking, running) = (character.weight(0).unwrap_or(0.0), character.weight(1).unwrap_or(0.0));
///         assert!(walking > 0.0 && running > 0.0 && (walking + running - 1.0).abs() < 1e-5);
///     }
/// }
/// assert_eq!((character.weight(0), character.weight(1)), (Some(0.0), Some(1.0)));
/// assert!(!character.is_fading(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Controller<R: Real, C: Capacity, S: SlotSampling<R, C> = KeyCursors> {
    slots: C::PerSlot<Slot<R, C, S>>,
    layers: C::PerLayer<LayerState<R, C>>,
    threshold: R,
    rotation: RotationInterpolation,
    root_settings: Option<RootMotionSettings>,
    root_delta: Motion<R>,
    root_total: Motion<R>,
}

/// [`Controller::new`]'s value, its slots built at run time rather than copied from a constant
/// (for a controller on the heap with a large slot state, such as [`SoaCaches`]:
/// `Box::default()`).
impl<R: Real, C: Capacity, S: SlotSampling<R, C>> Default for Controller<R, C, S> {
    fn default() -> Self {
        const { check::<C>() };
        Controller {
            slots: Buf::from_fn(|_| Slot::fresh()),
            layers: Element::INIT,
            threshold: R::ONE,
            rotation: RotationInterpolation::NlerpCorrected,
            root_settings: None,
            root_delta: Motion::IDENTITY,
            root_total: Motion::IDENTITY,
        }
    }
}

impl<R: Real, C: Capacity, S: SlotSampling<R, C>> Controller<R, C, S> {
    /// An empty controller: every slot empty, every layer a full-weight override layer without
    /// mask, threshold 1, corrected-nlerp rotations, no root motion.
    #[must_use]
    pub const fn new() -> Self {
        const { check::<C>() };
        Controller {
            slots: Element::INIT,
            layers: Element::INIT,
            threshold: R::ONE,
            rotation: RotationInterpolation::NlerpCorrected,
            root_settings: None,
            root_delta: Motion::IDENTITY,
            root_total: Motion::IDENTITY,
        }
    }

    /// Makes this controller [`Controller::new`]'s, in place: one slot and one layer at a time
    /// (a whole constant controller would be copied from read-only data instead).
    pub(crate) fn reset(&mut self) {
        for s in self.slots.as_mut() {
            *s = Slot::fresh();
        }
        for l in self.layers.as_mut() {
            *l = LayerState::INIT;
        }
        self.threshold = R::ONE;
        self.rotation = RotationInterpolation::NlerpCorrected;
        self.root_settings = None;
        self.root_delta = Motion::IDENTITY;
        self.root_total = Motion::IDENTITY;
    }

    /// Sets the blend threshold (see
    /// [`BlendingJob::threshold`](crate::job::BlendingJob::threshold); default 1).
    ///
    /// # Errors
    ///
    /// [`ControllerError::InvalidParameter`] unless finite and at least `R::EPSILON`.
    pub fn set_threshold(&mut self, threshold: R) -> Result<(), ControllerError> {
        if !(threshold.is_finite() && threshold >= R::EPSILON) {
            return Err(ControllerError::InvalidParameter);
        }
        self.threshold = threshold;
        Ok(())
    }

    /// How LINEAR rotation tracks are sampled.
    pub fn set_rotation_interpolation(&mut self, rotation: RotationInterpolation) {
        self.rotation = rotation;
    }

    /// Configures layer `layer`: its mode and its weight (clamped into `[0, 1]`).
    ///
    /// # Errors
    ///
    /// [`ControllerError::LayerOutOfRange`], [`ControllerError::InvalidParameter`] for a
    /// non-finite weight, or [`ControllerError::NoAdditive`] for an additive mode in a capacity
    /// without additive layers ([`Capacity::ADDITIVE`]).
    pub fn set_layer(&mut self, layer: usize, mode: LayerMode, weight: R) -> Result<(), ControllerError> {
        let l = self.layers.as_mut().get_mut(layer).ok_or(ControllerError::LayerOutOfRange)?;
        if !weight.is_finite() {
            return Err(ControllerError::InvalidParameter);
        }
        if matches!(mode, LayerMode::Additive(_)) && !C::ADDITIVE {
            return Err(ControllerError::NoAdditive);
        }
        l.mode = mode;
        l.weight = weight.clamp(R::ZERO, R::ONE);
        Ok(())
    }

    /// Sets layer `layer`'s weight (clamped into `[0, 1]`).
    ///
    /// # Errors
    ///
    /// As [`set_layer`](Self::set_layer).
    pub fn set_layer_weight(&mut self, layer: usize, weight: R) -> Result<(), ControllerError> {
        let mode = self.layers.as_ref().get(layer).ok_or(ControllerError::LayerOutOfRange)?.mode;
        self.set_layer(layer, mode, weight)
    }

    /// Restricts layer `layer` to the joints of `channels` (see [`MaskJob`]).
    ///
    /// # Errors
    ///
    /// [`ControllerError::LayerOutOfRange`], [`ControllerError::SkeletonTooLarge`], or
    /// [`ControllerError::Job`] for a channel out of range.
    pub fn set_layer_mask(
        &mut self,
        layer: usize,
        skeleton: SkeletonView<'_, R>,
        channels: &[Channel],
        invert: bool,
    ) -> Result<(), ControllerError> {
        let l = self.layers.as_mut().get_mut(layer).ok_or(ControllerError::LayerOutOfRange)?;
        if skeleton.num_soa_joints() > C::SOA {
            return Err(ControllerError::SkeletonTooLarge);
        }
        MaskJob { skeleton, channels, invert, output: l.mask.as_mut() }.run()?;
        l.mask_joints = Some(skeleton.num_joints());
        Ok(())
    }

    /// Removes layer `layer`'s mask: it covers every joint.
    ///
    /// # Errors
    ///
    /// [`ControllerError::LayerOutOfRange`].
    pub fn clear_layer_mask(&mut self, layer: usize) -> Result<(), ControllerError> {
        let l = self.layers.as_mut().get_mut(layer).ok_or(ControllerError::LayerOutOfRange)?;
        l.mask_joints = None;
        Ok(())
    }

    /// Puts clip `clip` of `clips` (the list given to [`update`](Self::update)) in slot `slot` of
    /// layer `layer`, with a fresh player (at the start, speed 1, looping), weight 0 and no
    /// fade.
    ///
    /// # Errors
    ///
    /// [`ControllerError::SlotOutOfRange`], [`ControllerError::LayerOutOfRange`],
    /// [`ControllerError::UnknownClip`] (`clip` not below `clips.len()`),
    /// [`ControllerError::TooManyTracks`].
    pub fn assign(
        &mut self,
        slot: SlotId,
        layer: LayerId,
        clip: ClipId,
        clips: &[ClipEntry<'_, R>],
    ) -> Result<(), ControllerError> {
        if slot.0 >= C::SLOTS {
            return Err(ControllerError::SlotOutOfRange);
        }
        if layer.0 >= C::LAYERS {
            return Err(ControllerError::LayerOutOfRange);
        }
        let entry = clips.get(clip.0).ok_or(ControllerError::UnknownClip { clip, clips: clips.len() })?;
        let tracks = entry.clip.num_tracks();
        if tracks > S::MAX_TRACKS {
            return Err(ControllerError::TooManyTracks { tracks, capacity: S::MAX_TRACKS });
        }
        let s = &mut self.slots.as_mut()[slot.0];
        *s = Slot::fresh();
        s.clip = Some(clip.0);
        s.layer = layer.0;
        s.player = Player::new(&entry.clip);
        Ok(())
    }

    /// Empties slot `slot`.
    ///
    /// # Errors
    ///
    /// [`ControllerError::SlotOutOfRange`].
    pub fn clear(&mut self, slot: usize) -> Result<(), ControllerError> {
        *self.slots.as_mut().get_mut(slot).ok_or(ControllerError::SlotOutOfRange)? = Slot::fresh();
        Ok(())
    }

    /// Slot `slot`'s player (`None` for an index out of range).
    #[must_use]
    pub fn player(&self, slot: usize) -> Option<&Player<R>> {
        self.slots.as_ref().get(slot).map(|s| &s.player)
    }

    /// Slot `slot`'s player, to set its speed, mode, time… (`None` for an index out of range).
    /// A seek restarts the slot's root-motion measure.
    pub fn player_mut(&mut self, slot: usize) -> Option<&mut Player<R>> {
        self.slots.as_mut().get_mut(slot).map(|s| &mut s.player)
    }

    /// Slot `slot`'s current weight.
    #[must_use]
    pub fn weight(&self, slot: usize) -> Option<R> {
        self.slots.as_ref().get(slot).map(|s| s.weight)
    }

    /// Slot `slot`'s clip index.
    #[must_use]
    pub fn clip_of(&self, slot: usize) -> Option<usize> {
        self.slots.as_ref().get(slot).and_then(|s| s.clip)
    }

    /// Turns root-motion extraction on (with its settings) or off. Restarts every slot's measure
    /// and clears the last delta.
    ///
    /// # Errors
    ///
    /// [`ControllerError::NoRootMotion`] for settings when the capacity has no root motion
    /// ([`Capacity::ROOT_MOTION`]); turning it off always succeeds.
    pub fn set_root_motion(&mut self, settings: Option<RootMotionSettings>) -> Result<(), ControllerError> {
        if settings.is_some() && !C::ROOT_MOTION {
            return Err(ControllerError::NoRootMotion);
        }
        self.root_settings = settings;
        self.root_delta = Motion::IDENTITY;
        for s in self.slots.as_mut() {
            s.root = None;
        }
        Ok(())
    }

    /// The root displacement of the last update, in the character's frame before it (apply as
    /// `world = world · delta`).
    #[must_use]
    pub fn root_motion_delta(&self) -> Motion<R> {
        self.root_delta
    }

    /// The root displacement accumulated since creation or the last
    /// [`reset_root_motion_total`](Self::reset_root_motion_total).
    #[must_use]
    pub fn root_motion_total(&self) -> Motion<R> {
        self.root_total
    }

    /// Sets the accumulated root displacement back to identity.
    pub fn reset_root_motion_total(&mut self) {
        self.root_total = Motion::IDENTITY;
    }
}

#[cfg(test)]
mod tests;
