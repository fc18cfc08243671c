//! Fades, crossfades and phase sync: [`FadeCurve`], the weight of a fade in progress (`Fade`),
//! the controller's fade calls ([`Controller::fade_to`], [`Controller::crossfade`]…) and the
//! shared rate of synced slots (see the [module documentation](super) for the rules). Fades
//! progress in the update's first pass (`progress_fades`, in `update.rs`).

use super::state::Slot;
use super::{Controller, ControllerError, SlotSampling};
use crate::capacity::Capacity;
use crate::real::Real;

/// How a fade's progress maps to weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum FadeCurve {
    /// Proportional to the progress `s`.
    #[default]
    Linear,
    /// `3s² − 2s³`: starts and ends with zero slope.
    SmoothStep,
}

/// A fade in progress: the weight moves from `from` to `to` over `duration` seconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fade<R> {
    pub(crate) from: R,
    pub(crate) to: R,
    pub(crate) duration: R,
    pub(crate) elapsed: R,
    pub(crate) curve: FadeCurve,
}

impl<R: Real> Fade<R> {
    /// The weight after `elapsed` seconds.
    pub(crate) fn weight(&self) -> R {
        let s = if self.duration > R::ZERO { (self.elapsed / self.duration).clamp(R::ZERO, R::ONE) } else { R::ONE };
        let s = match self.curve {
            FadeCurve::Linear => s,
            FadeCurve::SmoothStep => s * s * (R::from_i32(3) - R::TWO * s),
        };
        self.from + (self.to - self.from) * s
    }
}

impl<R: Real, C: Capacity, S: SlotSampling<R, C>> Controller<R, C, S> {
    /// True while slot `slot` fades.
    #[must_use]
    pub fn is_fading(&self, slot: usize) -> bool {
        self.slots.as_ref().get(slot).is_some_and(|s| s.fade.is_some())
    }

    /// Sets slot `slot`'s weight at once (clamped into `[0, 1]`), cancelling its fade.
    ///
    /// # Errors
    ///
    /// [`ControllerError::SlotOutOfRange`], [`ControllerError::EmptySlot`],
    /// [`ControllerError::InvalidParameter`] for a non-finite weight.
    pub fn set_weight(&mut self, slot: usize, weight: R) -> Result<(), ControllerError> {
        self.fade_to(slot, weight, R::ZERO, FadeCurve::Linear)
    }

    /// Fades slot `slot`'s weight from its current value to `target` (clamped into `[0, 1]`) over
    /// `duration` seconds of real time (0: at once).
    ///
    /// # Errors
    ///
    /// [`ControllerError::SlotOutOfRange`], [`ControllerError::EmptySlot`],
    /// [`ControllerError::InvalidParameter`] for a non-finite target or duration, or a negative
    /// duration.
    pub fn fade_to(&mut self, slot: usize, target: R, duration: R, curve: FadeCurve) -> Result<(), ControllerError> {
        let s = self.slots.as_mut().get_mut(slot).ok_or(ControllerError::SlotOutOfRange)?;
        if s.clip.is_none() {
            return Err(ControllerError::EmptySlot);
        }
        if !(target.is_finite() && duration.is_finite() && duration >= R::ZERO) {
            return Err(ControllerError::InvalidParameter);
        }
        let to = target.clamp(R::ZERO, R::ONE);
        Self::start_fade(s, to, duration, curve);
        Ok(())
    }

    /// Starts fading `s` to `to` over `duration` seconds, or sets its weight at once (leaving
    /// phase sync at weight 0) when `duration` is 0.
    fn start_fade(s: &mut Slot<R, C, S>, to: R, duration: R, curve: FadeCurve) {
        if duration > R::ZERO {
            s.fade = Some(Fade { from: s.weight, to, duration, elapsed: R::ZERO, curve });
        } else {
            s.weight = to;
            s.fade = None;
            if to == R::ZERO {
                s.synced = false;
            }
        }
    }

    /// Fades slot `to` in to weight 1 and every other slot of its layer out to 0, over `duration`
    /// seconds with `curve`. With `sync`, `to` first jumps to the normalized phase of the layer's
    /// heaviest other active slot, and they advance in phase during the fade (see the module
    /// documentation). The incoming player keeps its state otherwise (call
    /// [`Player::rewind`](crate::player::Player::rewind) through
    /// [`player_mut`](Self::player_mut) to restart it).
    ///
    /// # Errors
    ///
    /// As [`fade_to`](Self::fade_to).
    pub fn crossfade(&mut self, to: usize, duration: R, curve: FadeCurve, sync: bool) -> Result<(), ControllerError> {
        let target = self.slots.as_ref().get(to).ok_or(ControllerError::SlotOutOfRange)?;
        if target.clip.is_none() {
            return Err(ControllerError::EmptySlot);
        }
        if !(duration.is_finite() && duration >= R::ZERO) {
            return Err(ControllerError::InvalidParameter);
        }
        let layer = target.layer;
        if sync {
            let slots = self.slots.as_mut();
            let dominant = (0..C::SLOTS)
                .filter(|&i| i != to && slots[i].layer == layer && slots[i].active())
                .max_by(|&a, &b| slots[a].weight.partial_cmp(&slots[b].weight).unwrap_or(core::cmp::Ordering::Equal));
            if let Some(d) = dominant {
                let phase = slots[d].player.normalized();
                slots[d].synced = true;
                slots[to].player.set_normalized(phase);
                slots[to].synced = true;
                slots[to].root = None;
            }
        }
        for (i, s) in self.slots.as_mut().iter_mut().enumerate() {
            if s.layer != layer || s.clip.is_none() {
                continue;
            }
            if i == to {
                Self::start_fade(s, R::ONE, duration, curve);
            } else if s.active() {
                Self::start_fade(s, R::ZERO, duration, curve);
            }
        }
        Ok(())
    }

    /// The weighted mean normalized rate (cycles per second) of the synced slots of `layer`.
    pub(super) fn sync_rate(&self, layer: usize, weights: &[R]) -> R {
        let (mut sum, mut total) = (R::ZERO, R::ZERO);
        for (s, &w) in self.slots.as_ref().iter().zip(weights) {
            if s.layer == layer && s.synced && s.active() && w > R::ZERO {
                let cycle = s.player.cycle_duration();
                if cycle > R::ZERO {
                    sum += w * s.player.speed() / cycle;
                    total += w;
                }
            }
        }
        if total > R::ZERO {
            sum / total
        } else {
            R::ZERO
        }
    }

    /// A layer with a single synced slot left lets it play on its own.
    pub(super) fn release_lone_synced(&mut self) {
        for layer in 0..C::LAYERS {
            let count = self.slots.as_ref().iter().filter(|s| s.layer == layer && s.synced && s.active()).count();
            if count <= 1 {
                for s in self.slots.as_mut().iter_mut().filter(|s| s.layer == layer) {
                    s.synced = false;
                }
            }
        }
    }
}
