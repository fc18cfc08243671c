//! The wave over the character's upper body ([`WaveLayer`]): the `wave` clip's player, its
//! weight fading along a smoothstep, and its override of the graph's pose on the joints of
//! [`WAVE_MASK`] (each joint moved towards the wave by the layer's weight times its mask
//! weight).

use sinew::clip::{Clip, RotationInterpolation, SoaTrackCache};
use sinew::job::{JobError, SamplingJob};
use sinew::math::SoaTransform;
use sinew::player::Player;
use sinew_pipeline::builtin::smoothstep;
use sinew_pipeline::model::Model;

use super::schedule::WAVE_MASK;

/// A fade of the layer's weight.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Fade {
    from: f32,
    to: f32,
    elapsed: f32,
    duration: f32,
}

/// The wave layer. See the [module documentation](self).
#[derive(Debug, Clone)]
pub(super) struct WaveLayer {
    player: Player<f32>,
    cursor: Vec<SoaTrackCache<f32>>,
    /// The wave's pose, sampled at the player's time.
    sampled: Vec<SoaTransform<f32>>,
    /// [`WAVE_MASK`]'s weight of each joint.
    mask: Vec<f32>,
    weight: f32,
    fade: Option<Fade>,
}

impl WaveLayer {
    /// The layer over `clip` of `model`, at weight 0.
    pub(super) fn new(model: &Model, clip: &Clip<'_>) -> WaveLayer {
        let skeleton = model.skeleton();
        WaveLayer {
            player: Player::new(clip),
            cursor: vec![SoaTrackCache::EMPTY; skeleton.num_soa_joints()],
            sampled: skeleton.rest_pose().to_vec(),
            mask: (0..skeleton.num_joints()).map(|j| WAVE_MASK.weight(skeleton, j)).collect(),
            weight: 0.0,
            fade: None,
        }
    }

    /// The layer's weight, 0 to 1.
    pub(super) fn weight(&self) -> f32 {
        self.weight
    }

    /// The wave's player.
    pub(super) fn player(&self) -> &Player<f32> {
        &self.player
    }

    /// Fades the weight to `to` over `seconds` (smoothstep); fading in restarts the clip.
    pub(super) fn fade_to(&mut self, to: f32, seconds: f32) {
        if to > 0.0 {
            self.player.rewind();
        }
        self.fade = Some(Fade { from: self.weight, to, elapsed: 0.0, duration: seconds.max(f32::MIN_POSITIVE) });
    }

    /// Advances the clip and the fade by `dt` seconds, then overrides `pose` (the graph's)
    /// on the masked joints.
    ///
    /// # Errors
    ///
    /// A [`JobError`] when the clip does not fit the skeleton (not expected: the model is
    /// built in code).
    pub(super) fn update(
        &mut self,
        model: &Model,
        clip: &Clip<'_>,
        dt: f32,
        pose: &mut [SoaTransform<f32>],
    ) -> Result<(), JobError> {
        if let Some(f) = &mut self.fade {
            f.elapsed += dt;
            let u = (f.elapsed / f.duration).min(1.0);
            self.weight = f.from + (f.to - f.from) * smoothstep(u);
            if u >= 1.0 {
                self.fade = None;
            }
        }
        // The clip loops; a step the player refuses (non-finite) leaves it where it is.
        let _ = self.player.advance(dt, &[], |_| {});
        if self.weight <= 0.0 {
            return Ok(());
        }
        SamplingJob {
            clip: *clip,
            time: self.player.time(),
            rotation: RotationInterpolation::NlerpCorrected,
            rest_pose: model.skeleton().rest_pose(),
            cursor: &mut self.cursor,
            output: &mut self.sampled,
        }
        .run()?;
        for (j, &m) in self.mask.iter().enumerate() {
            let w = m * self.weight;
            let (Some(base), Some(wave)) = (pose.get_mut(j / 4), self.sampled.get(j / 4)) else { continue };
            if w <= 0.0 {
                continue;
            }
            let (mut a, b) = (base.lane(j % 4), wave.lane(j % 4));
            a.translation = a.translation.lerp(b.translation, w);
            a.rotation = a.rotation.nlerp(b.rotation, w);
            a.scale = a.scale.lerp(b.scale, w);
            base.set_lane(j % 4, &a);
        }
        Ok(())
    }
}
