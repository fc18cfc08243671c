//! A character ([`Character`]): one instance of a [`WebModel`] with its own clock and pose. It
//! plays a clip, blends or crossfades to a second one (the desktop viewer's playback, on the
//! core's [`Player`], [`SamplingJob`] and [`BlendingJob`]), or runs one of the file's graphs
//! ([`GraphRun`]); [`Character::update`] then computes what a renderer reads in place: the
//! joints' model matrices, each skin's palette, and per draw part the shader's uniform rows
//! (linear blend or dual quaternion) and morphed vertices.

use std::rc::Rc;

use sinew::clip::{RotationInterpolation, SoaTrackCache};
use sinew::job::blending::{BlendingJob, Layer};
use sinew::job::morph::{MorphJob, MorphWeightsJob};
use sinew::job::{JobError, LocalToModelJob, SamplingJob, SkinDualQuatJob, SkinMatrixJob};
use sinew::math::{DualQuat, Mat4, SoaTransform, SymMat3, Vec3};
use sinew::player::{LoopMode, Player};

use crate::graph::{GraphRun, Scratch};
use crate::model::WebModel;
use crate::parts::FLOATS_PER_VERTEX;

/// Crossfade length when the caller gives none, in seconds (the desktop viewer's).
pub const CROSSFADE_SECONDS: f32 = 0.5;

/// What [`Character::update`] computes besides the pose and the model matrices.
pub mod outputs {
    /// Each skin's palette (model × inverse bind matrices).
    pub const PALETTES: u32 = 1;
    /// Each draw part's linear-blend rows (`u_jointMat`).
    pub const LBS_ROWS: u32 = 2;
    /// Each draw part's dual-quaternion rows (`u_jointDQ`).
    pub const DQS_ROWS: u32 = 4;
    /// Morph weights and each morphed draw part's vertices.
    pub const MORPHS: u32 = 8;
}

/// Buffers a character's update works in and leaves nothing in: the two clips' poses before
/// they are blended. One serves every character updated in turn.
#[derive(Debug, Default)]
pub struct Work {
    base: Vec<SoaTransform<f32>>,
    other: Vec<SoaTransform<f32>>,
}

impl Work {
    /// Empty buffers.
    pub const fn new() -> Work {
        Work { base: Vec::new(), other: Vec::new() }
    }
}

/// A clip playing: its index, its clock, and its sampling cache (one entry per four joints).
#[derive(Debug, Clone)]
struct ClipPlayer {
    clip: usize,
    player: Player<f32>,
    cache: Vec<SoaTrackCache<f32>>,
}

impl ClipPlayer {
    fn new(model: &WebModel, clip: usize, mode: LoopMode, speed: f32) -> Option<ClipPlayer> {
        let c = model.clips.get(clip)?;
        let mut player = Player::new(&c.clip);
        player.set_mode(mode);
        player.set_speed(speed);
        Some(ClipPlayer { clip, player, cache: vec![SoaTrackCache::EMPTY; model.skeleton.num_soa_joints()] })
    }

    fn sample(&mut self, model: &WebModel, pose: &mut [SoaTransform<f32>]) -> Result<(), JobError> {
        let Some(entry) = model.clips.get(self.clip) else {
            pose.copy_from_slice(model.skeleton.rest_pose());
            return Ok(());
        };
        SamplingJob {
            clip: entry.clip,
            time: self.player.time(),
            rotation: RotationInterpolation::NlerpCorrected,
            rest_pose: model.skeleton.rest_pose(),
            cursor: &mut self.cache,
            output: pose,
        }
        .run()
    }
}

/// One draw part's per-frame data.
#[derive(Debug, Clone, Default)]
struct PartOut {
    /// `u_jointMat` rows: 12 floats per palette joint.
    lbs: Vec<f32>,
    /// `u_jointDQ` rows: 16 floats per palette joint.
    dqs: Vec<f32>,
    /// The part's vertices with the morph targets applied (empty without targets).
    morphed: Vec<f32>,
}

/// A character: playback state and every buffer its frames are computed into.
pub struct Character {
    // The graph borrows nothing of `model` past its own store, but goes first anyway.
    graph: Option<GraphRun>,
    /// The model it animates.
    pub model: Rc<WebModel>,
    primary: Option<ClipPlayer>,
    secondary: Option<ClipPlayer>,
    weight: f32,
    fade: Option<f32>,
    playing: bool,
    speed: f32,
    mode: LoopMode,
    pose: Vec<SoaTransform<f32>>,
    /// Model matrices of the joints.
    pub joints: Vec<Mat4<f32>>,
    /// Palette of each skin.
    pub palettes: Vec<Vec<Mat4<f32>>>,
    dual_quats: Vec<Vec<DualQuat<f32>>>,
    scales: Vec<Vec<SymMat3<f32>>>,
    morph_weights: Vec<Vec<f32>>,
    parts: Vec<Vec<PartOut>>,
}

impl std::fmt::Debug for Character {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Character").field("time", &self.time()).field("graph", &self.graph).finish_non_exhaustive()
    }
}

impl Character {
    /// A character of `model` playing its first clip (the rest pose without clips).
    #[must_use]
    // Out of line: a load-time or rarely used path, whose inlined copies only grow the module.
    #[inline(never)]
    pub fn new(model: Rc<WebModel>) -> Character {
        // One element per four joints, as the rest pose has.
        let rest = model.skeleton.rest_pose().to_vec();
        let skins = &model.skins;
        let morph_weights = (0..model.meshes.len())
            .map(|m| model.asset.morph_targets(m).map_or(Vec::new(), |t| vec![0.0; t.num_targets()]))
            .collect();
        let parts = model.meshes.iter().map(|m| vec![PartOut::default(); m.len()]).collect();
        Character {
            graph: None,
            primary: ClipPlayer::new(&model, 0, LoopMode::Loop, 1.0),
            secondary: None,
            weight: 0.0,
            fade: None,
            playing: true,
            speed: 1.0,
            mode: LoopMode::Loop,
            pose: rest,
            joints: vec![Mat4::IDENTITY; model.num_joints()],
            palettes: skins.iter().map(|s| vec![Mat4::IDENTITY; s.joints.len()]).collect(),
            // Sized by the first update that asks for dual quaternions.
            dual_quats: vec![Vec::new(); skins.len()],
            scales: vec![Vec::new(); skins.len()],
            morph_weights,
            parts,
            model,
        }
    }

    /// Plays clip `clip` from its start, alone (any blend or crossfade ends, the graph stops).
    ///
    /// # Errors
    ///
    /// A message for a clip the model does not have.
    pub fn play(&mut self, clip: usize) -> Result<(), String> {
        self.primary = Some(self.player(clip)?);
        self.secondary = None;
        self.weight = 0.0;
        self.fade = None;
        self.graph = None;
        Ok(())
    }

    /// Blends clip `clip` in at `weight` (0 to 1) over the playing one, both running; a
    /// weight of 0 leaves the second clip out.
    ///
    /// # Errors
    ///
    /// A message for a clip the model does not have or a weight outside 0 to 1.
    pub fn blend(&mut self, clip: usize, weight: f32) -> Result<(), String> {
        if !(0.0..=1.0).contains(&weight) {
            return Err("a blend weight is from 0 to 1".into());
        }
        if self.secondary.as_ref().is_none_or(|s| s.clip != clip) {
            self.secondary = Some(self.player(clip)?);
        }
        self.weight = weight;
        self.fade = None;
        Ok(())
    }

    /// Crossfades from the playing clip to clip `clip` over `seconds` (the second clip starts
    /// at its beginning and becomes the only one when the fade ends).
    ///
    /// # Errors
    ///
    /// A message for a clip the model does not have or a duration that is not positive.
    pub fn crossfade(&mut self, clip: usize, seconds: f32) -> Result<(), String> {
        if !(seconds.is_finite() && seconds > 0.0) {
            return Err("a crossfade lasts a positive number of seconds".into());
        }
        self.secondary = Some(self.player(clip)?);
        self.weight = 0.0;
        self.fade = Some(seconds);
        Ok(())
    }

    fn player(&self, clip: usize) -> Result<ClipPlayer, String> {
        ClipPlayer::new(&self.model, clip, self.mode, self.speed)
            .ok_or_else(|| format!("no clip {clip} (the file has {})", self.model.clips.len()))
    }

    /// Plays (`true`) or pauses time.
    pub fn set_playing(&mut self, playing: bool) {
        self.playing = playing;
    }

    /// Sets the speed factor of both clips (finite values only).
    pub fn set_speed(&mut self, speed: f32) {
        if speed.is_finite() {
            self.speed = speed;
            for p in [&mut self.primary, &mut self.secondary].into_iter().flatten() {
                p.player.set_speed(speed);
            }
        }
    }

    /// Sets the loop mode of both clips.
    pub fn set_loop_mode(&mut self, mode: LoopMode) {
        self.mode = mode;
        for p in [&mut self.primary, &mut self.secondary].into_iter().flatten() {
            p.player.set_mode(mode);
        }
    }

    /// Moves the playing clip to time `t` (seconds on the clip's timeline, clamped to it).
    pub fn seek(&mut self, t: f32) {
        if let Some(p) = self.primary.as_mut() {
            p.player.seek(t);
        }
    }

    /// The playing clip's index and time (`None`: no clip, or a graph runs).
    #[must_use]
    pub fn clip(&self) -> Option<(usize, f32)> {
        self.primary.as_ref().filter(|_| self.graph.is_none()).map(|p| (p.clip, p.player.time()))
    }

    /// The playing clip's time (0 without one).
    #[must_use]
    pub fn time(&self) -> f32 {
        self.primary.as_ref().map_or(0.0, |p| p.player.time())
    }

    /// The second clip's weight (0 without one).
    #[must_use]
    pub fn weight(&self) -> f32 {
        if self.secondary.is_some() {
            self.weight
        } else {
            0.0
        }
    }

    /// Runs graph `index` of the file from its initial state in place of the clips.
    ///
    /// # Errors
    ///
    /// What [`GraphRun::start`] refuses; the clips keep playing.
    pub fn use_graph(&mut self, index: usize) -> Result<(), String> {
        self.graph = Some(GraphRun::start(&self.model, index)?);
        Ok(())
    }

    /// Stops the graph; the clips play again.
    pub fn stop_graph(&mut self) {
        self.graph = None;
    }

    /// The running graph.
    #[must_use]
    pub fn graph(&self) -> Option<&GraphRun> {
        self.graph.as_ref()
    }

    /// Sets parameter `p` of the running graph (see [`GraphRun::set`]).
    ///
    /// # Errors
    ///
    /// No graph runs, or the machine's message.
    pub fn set_parameter(&mut self, p: usize, value: f32) -> Result<(), String> {
        self.graph.as_mut().ok_or_else(|| "no graph is running".to_string())?.set(p, value)
    }

    /// Advances time by `dt` seconds (the graph, or the clips and the crossfade); nothing
    /// while paused.
    ///
    /// # Errors
    ///
    /// What the graph refuses (it keeps its state; the pose is unchanged).
    pub fn advance(&mut self, dt: f32, scratch: &mut Scratch) -> Result<(), String> {
        if !(dt.is_finite() && dt > 0.0 && self.playing) {
            return Ok(());
        }
        if let Some(g) = self.graph.as_mut() {
            return g.update(&self.model, dt, scratch, &mut self.pose);
        }
        for p in [&mut self.primary, &mut self.secondary].into_iter().flatten() {
            let _ignored = p.player.advance(dt, &[], |_| {});
        }
        if let Some(seconds) = self.fade {
            self.weight += dt / seconds;
            if self.weight >= 1.0 {
                self.primary = self.secondary.take();
                self.weight = 0.0;
                self.fade = None;
            }
        }
        Ok(())
    }

    /// Computes the pose at the current time, the joints' model matrices, and the `outputs`
    /// asked for (an or of [`outputs`] flags).
    ///
    /// # Errors
    ///
    /// A job's message (not expected: the model's parts were checked at load).
    pub fn update(&mut self, outputs: u32, work: &mut Work) -> Result<(), JobError> {
        let model = Rc::clone(&self.model);
        if self.graph.is_none() {
            self.sample_clips(&model, work)?;
        }
        LocalToModelJob::new(model.skeleton.view(), &self.pose, &mut self.joints).run()?;
        let dqs = outputs & outputs::DQS_ROWS != 0;
        for (s, skin) in model.skins.iter().enumerate() {
            let (Some(out), Some(dq), Some(scales)) =
                (self.palettes.get_mut(s), self.dual_quats.get_mut(s), self.scales.get_mut(s))
            else {
                continue;
            };
            if outputs & (outputs::PALETTES | outputs::LBS_ROWS) != 0 {
                SkinMatrixJob::new(&self.joints, &skin.inverse_bind, out).with_joints(&skin.joints).run()?;
            }
            if dqs {
                dq.resize(skin.joints.len(), DualQuat::IDENTITY);
                scales.resize(skin.joints.len(), SymMat3::IDENTITY);
                SkinDualQuatJob::new(&self.joints, &skin.inverse_bind, dq)
                    .with_joints(&skin.joints)
                    .with_scales(scales)
                    .run()?;
            }
        }
        if outputs & (outputs::LBS_ROWS | outputs::DQS_ROWS) != 0 {
            self.rows(&model, outputs);
        }
        if outputs & outputs::MORPHS != 0 {
            self.morphs(&model)?;
        }
        Ok(())
    }

    /// The local pose of the clips: the first sampled, the second blended in.
    fn sample_clips(&mut self, model: &WebModel, work: &mut Work) -> Result<(), JobError> {
        // Sampling writes every joint (the rest pose where a clip has no track).
        let rest = model.skeleton.rest_pose();
        let blend = self.secondary.is_some() && self.weight > 0.0;
        let Work { base, other } = work;
        for w in [&mut *base, &mut *other] {
            w.resize(rest.len(), SoaTransform::IDENTITY);
        }
        let first = if blend { &mut *base } else { &mut self.pose };
        match self.primary.as_mut() {
            Some(p) => p.sample(model, first)?,
            None => first.copy_from_slice(rest),
        }
        if let (Some(sec), true) = (self.secondary.as_mut(), blend) {
            sec.sample(model, other)?;
            let layers = [Layer::new(base, 1.0 - self.weight), Layer::new(other, self.weight)];
            // The weights sum to 1: any threshold up to 1 leaves the rest pose out.
            BlendingJob { layers: &layers, additive: &[], rest_pose: rest, threshold: 0.5, output: &mut self.pose }
                .run()?;
        }
        Ok(())
    }

    /// Each draw part's shader rows: its palette's joints (or its mesh node for a rigid part)
    /// as three matrix rows, and as dual quaternion and scale factor.
    fn rows(&mut self, model: &WebModel, outputs: u32) {
        for (mi, parts) in model.meshes.iter().enumerate() {
            let mesh = model.asset.mesh(mi);
            let skin = mesh.and_then(|m| m.skin()).unwrap_or(0);
            let node = mesh.and_then(|m| m.node()).and_then(|n| self.joints.get(n)).copied().unwrap_or(Mat4::IDENTITY);
            let Some(outs) = self.parts.get_mut(mi) else { continue };
            let palette = self.palettes.get(skin).map_or(&[][..], Vec::as_slice);
            let dq = self.dual_quats.get(skin).map_or(&[][..], Vec::as_slice);
            let scales = self.scales.get(skin).map_or(&[][..], Vec::as_slice);
            for (part, out) in parts.iter().zip(outs.iter_mut()) {
                if outputs & outputs::LBS_ROWS != 0 {
                    out.lbs.clear();
                    if part.is_rigid() {
                        push_rows(&mut out.lbs, &node);
                    }
                    for &j in &part.map {
                        push_rows(&mut out.lbs, palette.get(j as usize).unwrap_or(&Mat4::IDENTITY));
                    }
                }
                if outputs & outputs::DQS_ROWS != 0 {
                    out.dqs.clear();
                    for &j in &part.map {
                        let d = dq.get(j as usize).copied().unwrap_or(DualQuat::IDENTITY);
                        let s = scales.get(j as usize).copied().unwrap_or(SymMat3::IDENTITY);
                        out.dqs.extend(d.real.to_array());
                        out.dqs.extend(d.dual.to_array());
                        out.dqs.extend([s.xx, s.yy, s.zz, s.xy, s.xz, s.yz, 0.0, 0.0]);
                    }
                }
            }
        }
    }

    /// Morph weights from the playing clips (the second blended in), and the morphed vertices
    /// of every draw part of a mesh with targets.
    // Out of line: a load-time or rarely used path, whose inlined copies only grow the module.
    #[inline(never)]
    fn morphs(&mut self, model: &WebModel) -> Result<(), JobError> {
        let clip_time = |p: &Option<ClipPlayer>| p.as_ref().map(|p| (p.clip, p.player.time()));
        let (first, second) = if self.graph.is_some() {
            (None, None)
        } else {
            (clip_time(&self.primary), clip_time(&self.secondary).filter(|_| self.weight > 0.0))
        };
        for (mi, weights) in self.morph_weights.iter_mut().enumerate() {
            let Some(targets) = model.asset.morph_targets(mi) else { continue };
            let sample = |at: Option<(usize, f32)>, out: &mut [f32]| {
                let mut cursor = 0u16;
                let tracks = at.and_then(|(c, _)| model.asset.morph_weights(c));
                MorphWeightsJob::new(targets, tracks, at.map_or(0.0, |a| a.1), &mut cursor, out).run()
            };
            sample(first, weights)?;
            if let Some(at) = second {
                let mut other = vec![0.0; weights.len()];
                sample(Some(at), &mut other)?;
                for (a, b) in weights.iter_mut().zip(other) {
                    *a += (b - *a) * self.weight;
                }
            }
            let (Some(parts), Some(outs)) = (model.meshes.get(mi), self.parts.get_mut(mi)) else { continue };
            for (part, out) in parts.iter().zip(outs.iter_mut()) {
                let Some(morph) = targets.part(part.source) else { continue };
                let Some(src) = model.asset.mesh(mi).and_then(|m| m.parts().nth(part.source)) else { continue };
                let n = src.num_vertices();
                let positions: Vec<Vec3<f32>> = (0..n).map(|v| src.position(v)).collect();
                let normals: Option<Vec<Vec3<f32>>> =
                    src.has_normals().then(|| (0..n).map(|v| src.normal(v)).collect());
                let mut moved = vec![Vec3::ZERO; n];
                let mut moved_normals = vec![Vec3::ZERO; if normals.is_some() { n } else { 0 }];
                let mut job = MorphJob::new(morph, weights, &positions, &mut moved);
                if let Some(nrm) = normals.as_deref() {
                    job = job.with_normals(nrm, &mut moved_normals);
                }
                job.run()?;
                out.morphed.clear();
                out.morphed.extend_from_slice(&part.vertices);
                for (k, &o) in part.origin.iter().enumerate() {
                    let Some(v) = out.morphed.get_mut(k * FLOATS_PER_VERTEX..k * FLOATS_PER_VERTEX + 6) else {
                        continue;
                    };
                    if let Some(p) = moved.get(o as usize) {
                        v[..3].copy_from_slice(&p.to_array());
                    }
                    if let Some(n) = moved_normals.get(o as usize) {
                        v[3..6].copy_from_slice(&n.to_array());
                    }
                }
            }
        }
        Ok(())
    }

    /// Draw part `part` of mesh `mesh`'s outputs: linear-blend rows, dual-quaternion rows,
    /// morphed vertices (each empty until computed).
    #[must_use]
    pub fn part(&self, mesh: usize, part: usize) -> Option<(&[f32], &[f32], &[f32])> {
        self.parts.get(mesh)?.get(part).map(|p| (p.lbs.as_slice(), p.dqs.as_slice(), p.morphed.as_slice()))
    }

    /// The local pose (SoA).
    #[must_use]
    pub fn pose(&self) -> &[SoaTransform<f32>] {
        &self.pose
    }

    /// Mesh `mesh`'s morph weights (empty without targets).
    #[must_use]
    pub fn morph_weights(&self, mesh: usize) -> &[f32] {
        self.morph_weights.get(mesh).map_or(&[], Vec::as_slice)
    }
}

/// Appends the first three rows of `m`, as `u_jointMat` takes them.
fn push_rows(out: &mut Vec<f32>, m: &Mat4<f32>) {
    for r in 0..3 {
        out.extend([m.cols[0][r], m.cols[1][r], m.cols[2][r], m.cols[3][r]]);
    }
}
