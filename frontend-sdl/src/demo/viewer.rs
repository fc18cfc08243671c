//! The model viewer's state: a loaded model, its clip playback (play/pause, scrub, speed, loop
//! mode) on the core's [`Player`], a second clip to blend with or crossfade to (mixed by
//! [`BlendingJob`]), or an animation graph driving the pose instead ([`GraphDrive`]), or
//! another model's clips retargeted onto it ([`RetargetDrive`]), and the model's framing.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use sinew::clip::{RotationInterpolation, SoaTrackCache};
use sinew::job::blending::{BlendingJob, Layer};
use sinew::job::{JobError, RetargetJoint, RetargetRoot, SamplingJob};
use sinew::math::{Mat4, Quat, SoaTransform, Vec3};
pub use sinew::player::LoopMode;
use sinew::player::Player;

use super::graph_drive::GraphDrive;
use crate::retarget::{setup, SetupError};
use crate::scene::{ground_grid, push_model, Frame};
use sinew_offline::bake::BakeOptions;
use sinew_offline::graph_run::SetSpec;
use sinew_offline::model::{Model, ModelError, Skinning};
use sinew_offline::morph::sample_weights;
use sinew_offline::retarget::{retarget_pose, RetargetOptions};

/// The loop mode after `mode` (Loop → Once → PingPong → Loop).
#[must_use]
pub fn next_loop_mode(mode: LoopMode) -> LoopMode {
    match mode {
        LoopMode::Loop => LoopMode::Once,
        LoopMode::Once => LoopMode::PingPong,
        LoopMode::PingPong => LoopMode::Loop,
    }
}

/// Display name of a loop mode.
#[must_use]
pub fn loop_mode_name(mode: LoopMode) -> &'static str {
    match mode {
        LoopMode::Loop => "loop",
        LoopMode::Once => "once",
        LoopMode::PingPong => "ping-pong",
    }
}

/// A clip playing in the viewer: its index, its clock, and a sampling cache per four joints (so
/// forward playback decodes keys only when it crosses them).
#[derive(Debug, Clone)]
pub struct ClipPlayer {
    /// Clip index.
    pub clip: usize,
    /// The clip's clock: time, speed, loop mode.
    pub player: Player<f32>,
    cache: RefCell<Vec<SoaTrackCache<f32>>>,
}

impl ClipPlayer {
    /// Clip `clip` of `model` at its start, playing at `speed` in `mode`; `None` past the clip
    /// count.
    #[must_use]
    pub fn new(model: &Model, clip: usize, mode: LoopMode, speed: f32) -> Option<ClipPlayer> {
        let c = model.asset().clip(clip)?;
        let mut player = Player::new(&c);
        player.set_mode(mode);
        player.set_speed(speed);
        let soa = model.skeleton().num_soa_joints();
        Some(ClipPlayer { clip, player, cache: RefCell::new(vec![SoaTrackCache::EMPTY; soa]) })
    }

    /// Current clip time, in seconds.
    #[must_use]
    pub fn time(&self) -> f32 {
        self.player.time()
    }

    /// Samples the clip at the player's time into `pose` (as long as the rest pose).
    fn sample(&self, model: &Model, pose: &mut [SoaTransform<f32>]) -> Result<(), JobError> {
        let Some(clip) = model.asset().clip(self.clip) else { return Ok(()) };
        let mut cache = self.cache.borrow_mut();
        SamplingJob {
            clip,
            time: self.player.time(),
            rotation: RotationInterpolation::NlerpCorrected,
            rest_pose: model.skeleton().rest_pose(),
            cursor: &mut cache,
            output: pose,
        }
        .run()
    }
}

/// Another model (the source) whose clips drive the viewed model (the target) through
/// retargeting: the viewer's players play the source's clips, the target takes the retargeted
/// pose, and the source is drawn beside it (to its left, on the same ground) while
/// [`RetargetDrive::show_source`].
#[derive(Debug)]
pub struct RetargetDrive {
    /// The source model.
    pub source: Model,
    /// The file it came from.
    pub path: PathBuf,
    /// The source is Z-up (md5) and is turned to Y-up.
    pub z_up: bool,
    /// Draw the source beside the target.
    pub show_source: bool,
    /// Where the source stands: a translation applied after its up-axis turn.
    pub offset: Vec3<f32>,
    /// The core's constants of [`sinew_offline::retarget::Retarget`], one per target joint.
    joints: Vec<RetargetJoint<f32>>,
    /// Its hips motion.
    root: RetargetRoot<f32>,
}

impl RetargetDrive {
    /// The source's object-to-world matrix: its up-axis turn, then [`RetargetDrive::offset`].
    #[must_use]
    pub fn world(&self) -> Mat4<f32> {
        Mat4::from_translation(self.offset) * up_axis(self.z_up)
    }

    /// The target's local pose for the source's local pose `source_pose`: what
    /// [`sinew_offline::retarget::Retarget::pose`] gives, with the constants it computed.
    fn pose(&self, target: &Model, source_pose: &[SoaTransform<f32>]) -> Result<Vec<SoaTransform<f32>>, JobError> {
        retarget_pose(&self.source, target, &self.joints, self.root, source_pose)
    }
}

/// The Y-up turn of a Z-up model (identity otherwise).
fn up_axis(z_up: bool) -> Mat4<f32> {
    if z_up {
        Mat4::from_trs(Vec3::ZERO, Quat::from_axis_angle(Vec3::X, -std::f32::consts::FRAC_PI_2), Vec3::ONE)
    } else {
        Mat4::IDENTITY
    }
}

/// The bind-pose bounds `(low, high)` of `model` placed by `world`, in world space (its skinned
/// vertices, else its joints); `None` when it has no finite point.
fn bounds(model: &Model, world: Mat4<f32>) -> Option<(Vec3<f32>, Vec3<f32>)> {
    let rest = model.skeleton().rest_pose().to_vec();
    let mut points: Vec<Vec3<f32>> = Vec::new();
    let mut frame = Frame::default();
    if push_model(&mut frame, model, 0, &rest, world, Skinning::Lbs, None, true).is_ok() {
        for o in &frame.objects {
            for part in o.skin_cpu().unwrap_or_default() {
                points.extend(part.positions.iter().map(|&p| world.transform_point3(p)));
            }
        }
        if points.is_empty() {
            points.extend(frame.bones.iter().flatten());
        }
    }
    let mut lo = Vec3::splat(f32::INFINITY);
    let mut hi = Vec3::splat(f32::NEG_INFINITY);
    for p in points.into_iter().filter(|p| p.is_finite()) {
        lo = lo.min(p);
        hi = hi.max(p);
    }
    (lo.x <= hi.x).then_some((lo, hi))
}

/// Crossfade length, in seconds.
pub const CROSSFADE_SECONDS: f32 = 0.5;

/// The viewer.
#[derive(Debug)]
pub struct Viewer {
    /// The model.
    pub model: Model,
    /// The file it came from.
    pub path: PathBuf,
    /// The md5 animation loaded with it.
    pub anim: Option<PathBuf>,
    /// The model is Z-up (md5) and is turned to Y-up.
    pub z_up: bool,
    /// The primary clip (`None`: the model has no clips; the rest pose is shown).
    pub primary: Option<ClipPlayer>,
    /// A second clip blended in with [`Viewer::weight`].
    pub secondary: Option<ClipPlayer>,
    /// Weight of the secondary clip, 0 to 1.
    pub weight: f32,
    /// A crossfade to the secondary clip is running.
    pub fading: bool,
    /// Playing (else paused).
    pub playing: bool,
    /// Playback speed factor (applied to both players).
    speed: f32,
    /// Loop mode (applied to both players).
    loop_mode: LoopMode,
    /// Center of the bind-pose bounds, in world space.
    pub center: Vec3<f32>,
    /// Radius of the bind-pose bounds.
    pub radius: f32,
    /// Lowest point of the bind-pose bounds (the ground).
    pub floor: f32,
    /// An animation graph driving the pose instead of the clips (see [`Viewer::attach_graph`]).
    pub graph: Option<GraphDrive>,
    /// Another model's clips driving the pose through retargeting (see
    /// [`Viewer::attach_retarget`]); the players then play its clips.
    pub retarget: Option<RetargetDrive>,
}

/// The palette sizes a model's parts are split by at load: `rigid` joints when its rig never
/// scales (see [`rig_is_rigid`]), `scaled` when it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaletteSizes {
    /// Joints per part for a rig without scale.
    pub rigid: usize,
    /// Joints per part for a rig with scale.
    pub scaled: usize,
}

impl PaletteSizes {
    /// `n` joints per part whatever the rig.
    #[must_use]
    pub fn same(n: usize) -> PaletteSizes {
        PaletteSizes { rigid: n, scaled: n }
    }
}

/// Times a clip from `start` to `end` is checked at by [`rig_is_rigid`]: 30 per second, and
/// the end.
fn check_times(start: f32, end: f32) -> impl Iterator<Item = f32> {
    let span = (end - start).max(0.0);
    let steps = if span.is_finite() { (span * 30.0).ceil().min(1.0e5) as u32 } else { 0 };
    (0..steps).map(move |i| start + i as f32 / 30.0).filter(move |&t| t < end).chain(std::iter::once(end))
}

/// True when no skin joint of `model` carries scale or shear (every factor of
/// [`Model::dq_palette`] is the identity) in the rest pose and in every clip sampled at 30 Hz
/// and at its end: its parts can then be drawn by the rigid DQS program, two uniform vectors
/// per joint. A pose that fails to sample counts as scaled.
#[must_use]
pub fn rig_is_rigid(model: &Model) -> bool {
    let asset = model.asset();
    let (mut pose, mut cursor, mut world) = (Vec::new(), Vec::new(), Vec::new());
    let mut rigid_at = |clip: Option<usize>, t: f32| -> bool {
        model.sample(clip, t, RotationInterpolation::NlerpCorrected, &mut cursor, &mut pose).is_ok()
            && model.world(&pose, &mut world).is_ok()
            && (0..asset.num_skins()).all(|s| model.dq_palette(&world, s).is_ok_and(|p| p.is_rigid()))
    };
    if !rigid_at(None, 0.0) {
        return false;
    }
    (0..asset.num_clips()).all(|c| {
        let Some(clip) = asset.clip(c) else { return true };
        check_times(clip.start(), clip.end()).all(|t| rigid_at(Some(c), t))
    })
}

/// Loads `path` with parts of at most `palette.rigid` joints, again with `palette.scaled` when
/// a part is larger than that and the rig scales.
fn load_split(path: &Path, anim: Option<&Path>, palette: PaletteSizes) -> Result<Model, ModelError> {
    let opts = |p: usize| BakeOptions { palette: Some(p), max_influences: 4, ..BakeOptions::default() };
    let model = Model::load(path, anim, &opts(palette.rigid))?;
    let asset = model.asset();
    let larger = (0..asset.num_meshes())
        .filter_map(|m| asset.mesh(m))
        .any(|m| m.parts().any(|p| p.palette_len() > palette.scaled));
    if larger && !rig_is_rigid(&model) {
        return Model::load(path, anim, &opts(palette.scaled));
    }
    Ok(model)
}

fn is_md5(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("md5mesh"))
}

impl Viewer {
    /// Loads a model, baking imported files with 4 influences and palettes of at most
    /// `palette.rigid` joints when its rig never scales ([`rig_is_rigid`]), else
    /// `palette.scaled`.
    ///
    /// # Errors
    ///
    /// The [`ModelError`] of a file that cannot be loaded.
    pub fn load(path: &Path, anim: Option<&Path>, palette: PaletteSizes) -> Result<Viewer, ModelError> {
        let model = load_split(path, anim, palette)?;
        let mut v = Viewer {
            primary: ClipPlayer::new(&model, 0, LoopMode::Loop, 1.0),
            model,
            path: path.to_path_buf(),
            anim: anim.map(Path::to_path_buf),
            z_up: is_md5(path),
            secondary: None,
            weight: 0.0,
            fading: false,
            playing: true,
            speed: 1.0,
            loop_mode: LoopMode::Loop,
            center: Vec3::ZERO,
            radius: 1.0,
            floor: 0.0,
            graph: None,
            retarget: None,
        };
        v.measure_bounds();
        Ok(v)
    }

    /// Object-to-world matrix (Z-up models turned to Y-up).
    #[must_use]
    pub fn world(&self) -> Mat4<f32> {
        up_axis(self.z_up)
    }

    /// Recomputes the bind-pose bounds in world space (after a change of up axis). With a
    /// retarget source, it is placed to the target's left with a gap, its lowest point on the
    /// target's and its center at the target's depth, and the bounds hold both models.
    pub fn measure_bounds(&mut self) {
        let mut both = bounds(&self.model, self.world());
        if let Some(d) = self.retarget.as_mut() {
            d.offset = Vec3::ZERO;
            if let Some((slo, shi)) = bounds(&d.source, d.world()) {
                let (tlo, thi) = both.unwrap_or((Vec3::ZERO, Vec3::ZERO));
                let gap = 0.25 * (thi.y - tlo.y).max(shi.y - slo.y);
                d.offset = Vec3::new(tlo.x - gap - shi.x, tlo.y - slo.y, (tlo.z + thi.z) * 0.5 - (slo.z + shi.z) * 0.5);
                let (slo, shi) = (slo + d.offset, shi + d.offset);
                both = Some(both.map_or((slo, shi), |(lo, hi)| (lo.min(slo), hi.max(shi))));
            }
        }
        if let Some((lo, hi)) = both {
            self.center = (lo + hi) * 0.5;
            self.radius = ((hi - lo).length() * 0.5).max(1.0e-3);
            self.floor = lo.y;
        } else {
            self.center = Vec3::ZERO;
            self.radius = 1.0;
            self.floor = 0.0;
        }
    }

    /// Drives the model by the clips of the model in `path` (the source) retargeted onto it,
    /// with the joint map file `map` (`None`: the automatic humanoid mapping) and `options`;
    /// the source is loaded as the viewer's model was (palettes of `palette`'s sizes),
    /// the players start on its first clip, and the source is shown beside the model.
    ///
    /// # Errors
    ///
    /// A source that cannot be loaded, or a mapping that cannot be set up (see
    /// [`crate::retarget::setup`]), naming the file; the viewer is unchanged.
    pub fn attach_retarget(
        &mut self,
        path: &Path,
        map: Option<&Path>,
        options: RetargetOptions,
        palette: PaletteSizes,
    ) -> Result<(), SetupError> {
        let source = load_split(path, None, palette)
            .map_err(|e| SetupError { file: path.to_path_buf(), message: e.to_string() })?;
        let r = setup(&source, path, &self.model, &self.path, map, options)?;
        let (joints, root) = (r.joints().to_vec(), r.root());
        drop(r);
        self.retarget = Some(RetargetDrive {
            z_up: is_md5(path),
            source,
            path: path.to_path_buf(),
            show_source: true,
            offset: Vec3::ZERO,
            joints,
            root,
        });
        self.primary = self.player_for(0);
        self.secondary = None;
        self.weight = 0.0;
        self.fading = false;
        self.measure_bounds();
        Ok(())
    }

    /// The model whose clips the players play: the retarget source, else the viewed model.
    #[must_use]
    pub fn clip_model(&self) -> &Model {
        self.retarget.as_ref().map_or(&self.model, |d| &d.source)
    }

    /// Number of clips.
    #[must_use]
    pub fn num_clips(&self) -> usize {
        self.clip_model().asset().num_clips()
    }

    /// Name of clip `i`.
    #[must_use]
    pub fn clip_name(&self, i: usize) -> String {
        self.clip_model().asset().clip(i).map(|c| c.name().to_string()).unwrap_or_default()
    }

    /// `(start, end)` of clip `i`.
    #[must_use]
    pub fn clip_range(&self, i: usize) -> (f32, f32) {
        self.clip_model().asset().clip(i).map_or((0.0, 0.0), |c| (c.start(), c.end()))
    }

    /// The playback speed factor.
    #[must_use]
    pub fn speed(&self) -> f32 {
        self.speed
    }

    /// Sets the playback speed factor of both clips (negative plays backwards; non-finite
    /// values are ignored).
    pub fn set_speed(&mut self, speed: f32) {
        if speed.is_finite() {
            self.speed = speed;
            for p in self.players_mut() {
                p.player.set_speed(speed);
            }
        }
    }

    /// The loop mode.
    #[must_use]
    pub fn loop_mode(&self) -> LoopMode {
        self.loop_mode
    }

    /// Sets the loop mode of both clips.
    pub fn set_loop_mode(&mut self, mode: LoopMode) {
        self.loop_mode = mode;
        for p in self.players_mut() {
            p.player.set_mode(mode);
        }
    }

    /// Switches to the next loop mode ([`next_loop_mode`]).
    pub fn cycle_loop_mode(&mut self) {
        self.set_loop_mode(next_loop_mode(self.loop_mode));
    }

    fn players_mut(&mut self) -> impl Iterator<Item = &mut ClipPlayer> {
        [&mut self.primary, &mut self.secondary].into_iter().flatten()
    }

    fn player_for(&self, clip: usize) -> Option<ClipPlayer> {
        ClipPlayer::new(self.clip_model(), clip, self.loop_mode, self.speed)
    }

    /// Switches the primary clip to `clip` at its start (no-op past the clip count).
    pub fn select(&mut self, clip: usize) {
        if let Some(p) = self.player_for(clip) {
            self.primary = Some(p);
            self.fading = false;
        }
    }

    /// Steps the primary clip by `delta` clips (wrapping).
    pub fn step_clip(&mut self, delta: i64) {
        let n = self.num_clips() as i64;
        if n > 0 {
            let cur = self.primary.as_ref().map_or(0, |p| p.clip as i64);
            self.select((cur + delta).rem_euclid(n) as usize);
        }
    }

    /// Cycles the secondary (blend) clip: none → 0 → 1 → … → none.
    pub fn cycle_secondary(&mut self) {
        let next = match &self.secondary {
            None => 0,
            Some(p) => p.clip + 1,
        };
        self.fading = false;
        self.secondary = self.player_for(next);
    }

    /// Starts a crossfade to the secondary clip, or to the clip after the primary when no
    /// secondary is chosen.
    pub fn crossfade(&mut self) {
        let n = self.num_clips();
        if n == 0 {
            return;
        }
        if self.secondary.is_none() {
            let next = self.primary.as_ref().map_or(0, |p| (p.clip + 1) % n);
            self.secondary = self.player_for(next);
            self.weight = 0.0;
        }
        self.fading = true;
    }

    /// Changes the blend weight by `delta` (clamped to 0..1).
    pub fn nudge_weight(&mut self, delta: f32) {
        self.weight = (self.weight + delta).clamp(0.0, 1.0);
        self.fading = false;
    }

    /// Moves both clips by `dt` seconds of clip time along their cycle (forward on a
    /// ping-pong's forward pass, backward on its return; `dt < 0` goes the other way), whatever
    /// the speed, without firing markers' events (there are none here). A step the player
    /// refuses (non-finite, or millions of loops) is ignored.
    pub fn seek_by(&mut self, dt: f32) {
        for p in self.players_mut() {
            let speed = p.player.speed();
            p.player.set_speed(1.0);
            let _ignored = p.player.advance(dt, &[], |_| {});
            p.player.set_speed(speed);
        }
    }

    /// Moves the primary clip to clip time `time` (clamped into its range).
    pub fn seek_primary(&mut self, time: f32) {
        if let Some(p) = self.primary.as_mut() {
            p.player.seek(time);
        }
    }

    /// Drives the model by the animation graph file `path` (validated against the model's
    /// clips), with the scheduled parameter changes `sets`, from graph time 0.
    ///
    /// # Errors
    ///
    /// One line naming what is wrong (see [`GraphDrive::load`]); the viewer is unchanged.
    pub fn attach_graph(&mut self, path: &Path, sets: &[SetSpec]) -> Result<(), String> {
        self.graph = Some(GraphDrive::load(&self.model, path, sets)?);
        Ok(())
    }

    /// Advances playback by `dt` seconds of wall time (at the players' speed) and the
    /// crossfade, or the graph while one drives the model (it ignores the speed). Non-finite or
    /// non-positive steps are ignored.
    ///
    /// # Errors
    ///
    /// A graph's state-machine error (see [`GraphDrive::advance`]).
    pub fn advance(&mut self, dt: f32) -> Result<(), String> {
        if !(dt.is_finite() && dt > 0.0) {
            return Ok(());
        }
        if let Some(g) = self.graph.as_mut() {
            return if self.playing { g.advance(&self.model, dt) } else { Ok(()) };
        }
        if self.playing {
            for p in self.players_mut() {
                let _ignored = p.player.advance(dt, &[], |_| {});
            }
        }
        if self.fading {
            self.weight += dt / CROSSFADE_SECONDS;
            if self.weight >= 1.0 {
                self.primary = self.secondary.take();
                self.weight = 0.0;
                self.fading = false;
            }
        }
        Ok(())
    }

    /// The local pose now: the graph's, or the primary clip (or the rest pose) blended with
    /// the secondary by the weight with [`BlendingJob`], retargeted from the source while a
    /// [`RetargetDrive`] drives the model.
    ///
    /// # Errors
    ///
    /// A [`JobError`] when a clip does not fit the skeleton.
    pub fn pose(&self) -> Result<Vec<SoaTransform<f32>>, JobError> {
        if let Some(g) = &self.graph {
            return Ok(g.pose().to_vec());
        }
        let pose = self.clip_pose()?;
        match &self.retarget {
            Some(d) => d.pose(&self.model, &pose),
            None => Ok(pose),
        }
    }

    /// The local pose of [`Viewer::clip_model`] now: the primary clip (or the rest pose)
    /// blended with the secondary by the weight (the source's pose while retargeting).
    ///
    /// # Errors
    ///
    /// A [`JobError`] when a clip does not fit the skeleton.
    pub fn clip_pose(&self) -> Result<Vec<SoaTransform<f32>>, JobError> {
        let model = self.clip_model();
        let rest = model.skeleton().rest_pose();
        let mut pose = rest.to_vec();
        if let Some(p) = &self.primary {
            p.sample(model, &mut pose)?;
        }
        if let (Some(sec), true) = (&self.secondary, self.weight > 0.0) {
            let mut other = rest.to_vec();
            sec.sample(model, &mut other)?;
            let base = pose.clone();
            let layers = [Layer::new(&base, 1.0 - self.weight), Layer::new(&other, self.weight)];
            // The weights sum to 1: any threshold up to 1 leaves the rest pose out.
            BlendingJob { layers: &layers, additive: &[], rest_pose: rest, threshold: 0.5, output: &mut pose }.run()?;
        }
        Ok(pose)
    }

    /// The morph weights of mesh `mesh` now: the primary clip's (the mesh's default weights
    /// without a clip or a weights track in it), mixed with the secondary clip's by
    /// [`Viewer::weight`] as the poses are; the default weights while a graph drives the
    /// model or the clips are a retarget source's; empty for a mesh without morph targets.
    ///
    /// # Errors
    ///
    /// A [`JobError`] from [`sample_weights`] (not expected for validated files).
    pub fn morph_weights(&self, mesh: usize) -> Result<Vec<f32>, JobError> {
        if self.graph.is_some() || self.retarget.is_some() {
            return sample_weights(&self.model.asset(), mesh, None, 0.0);
        }
        self.clip_morph_weights(mesh)
    }

    /// The morph weights of mesh `mesh` of [`Viewer::clip_model`] from the clips, as
    /// [`Viewer::morph_weights`] mixes them.
    fn clip_morph_weights(&self, mesh: usize) -> Result<Vec<f32>, JobError> {
        let asset = self.clip_model().asset();
        let at =
            |p: Option<&ClipPlayer>| sample_weights(&asset, mesh, p.map(|p| p.clip), p.map_or(0.0, ClipPlayer::time));
        let mut w = at(self.primary.as_ref())?;
        if let (Some(sec), true) = (&self.secondary, self.weight > 0.0) {
            let other = at(Some(sec))?;
            for (a, b) in w.iter_mut().zip(other) {
                *a += (b - *a) * self.weight;
            }
        }
        Ok(w)
    }

    /// What to draw now: the model (as model index 0) with its morph weights, the retarget
    /// source beside it (as model index 1) while it is shown, their bones when `bones`, and a
    /// ground grid under them.
    ///
    /// # Errors
    ///
    /// As [`Viewer::pose`].
    pub fn frame(&self, skinning: Skinning, bones: bool) -> Result<Frame<'_>, JobError> {
        let mut f = Frame::default();
        match (&self.retarget, &self.graph) {
            (Some(d), None) => {
                let source_pose = self.clip_pose()?;
                let pose = d.pose(&self.model, &source_pose)?;
                push_model(&mut f, &self.model, 0, &pose, self.world(), skinning, None, bones)?;
                if d.show_source {
                    push_model(&mut f, &d.source, 1, &source_pose, d.world(), skinning, None, bones)?;
                }
            }
            _ => push_model(&mut f, &self.model, 0, &self.pose()?, self.world(), skinning, None, bones)?,
        }
        for o in &mut f.objects {
            o.morph_weights =
                if o.model_index == 1 { self.clip_morph_weights(o.mesh)? } else { self.morph_weights(o.mesh)? };
        }
        let step = grid_step(self.radius);
        let half = (self.radius * 1.5 / step).ceil() * step;
        let (cx, cz) = ((self.center.x / step).round() * step, (self.center.z / step).round() * step);
        f.grid = ground_grid(cx - half, cx + half, cz - half, cz + half, step)
            .into_iter()
            .map(|l| l.map(|p| Vec3::new(p.x, self.floor, p.z)))
            .collect();
        Ok(f)
    }
}

/// A round grid spacing for a model of `radius`: 1, 2 or 5 times a power of ten, about a
/// fifth of the radius.
#[must_use]
pub fn grid_step(radius: f32) -> f32 {
    let target = (radius / 5.0).max(1.0e-4);
    let p = 10f32.powf(target.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * p).find(|&s| s >= target).unwrap_or(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    use sinew_offline::bake::bake;
    use sinew_offline::builtin::humanoid_rig;

    #[test]
    fn rigid_check_times_cover_each_clip_to_its_end() {
        let t: Vec<f32> = check_times(0.5, 0.6).collect();
        assert_eq!(t.len(), 4, "{t:?}");
        assert_eq!((t[0], t[3]), (0.5, 0.6));
        assert!(t.windows(2).all(|w| w[1] > w[0] && w[1] - w[0] <= 1.0 / 30.0 + 1e-6), "{t:?}");
        assert_eq!(check_times(2.0, 2.0).collect::<Vec<_>>(), vec![2.0]);
        assert_eq!(check_times(1.0, f32::INFINITY).count(), 1);
    }

    #[test]
    fn the_humanoid_rig_is_rigid() {
        // The built-in humanoid's joints rotate and translate only: every scale factor of its
        // dual-quaternion palette is the identity in every clip.
        assert!(rig_is_rigid(&humanoid("rigid").model));
    }

    /// A viewer on the built-in humanoid (clips idle 3 s, walk 1 s, run 0.7 s, wave 1.2 s).
    fn humanoid(tag: &str) -> Viewer {
        let (bytes, _) = bake(&humanoid_rig(), &BakeOptions::default()).unwrap();
        let path = std::env::temp_dir().join(format!("sinew_viewer_{}_{tag}.sinew", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        let v = Viewer::load(&path, None, PaletteSizes::same(64)).unwrap();
        std::fs::remove_file(&path).unwrap();
        v
    }

    fn sample(v: &Viewer, clip: usize, t: f32) -> Vec<SoaTransform<f32>> {
        let mut pose = Vec::new();
        v.model.sample(Some(clip), t, RotationInterpolation::NlerpCorrected, &mut Vec::new(), &mut pose).unwrap();
        pose
    }

    fn max_diff(a: &[SoaTransform<f32>], b: &[SoaTransform<f32>], joints: usize) -> f32 {
        (0..joints)
            .map(|j| {
                let (x, y) = (a[j / 4].lane(j % 4), b[j / 4].lane(j % 4));
                (x.translation - y.translation).max_abs().max(x.rotation.angle_between(y.rotation))
            })
            .fold(0.0, f32::max)
    }

    #[test]
    fn loop_modes_speed_and_scrubbing_follow_the_player() {
        let mut v = humanoid("loop");
        let walk = v.model.find_clip("walk").unwrap();
        let time = |v: &Viewer| v.primary.as_ref().unwrap().time();
        v.select(walk);
        assert_eq!(v.clip_range(walk), (0.0, 1.0));
        v.advance(2.5).unwrap();
        assert!((time(&v) - 0.5).abs() < 1e-6);
        // Once stops at the end.
        v.cycle_loop_mode();
        assert_eq!(v.loop_mode(), LoopMode::Once);
        v.advance(2.0).unwrap();
        assert_eq!(time(&v), 1.0);
        assert!(v.primary.as_ref().unwrap().player.finished());
        // Ping-pong bounces; scrubbing moves along the pass.
        v.cycle_loop_mode();
        v.select(walk);
        assert_eq!(v.primary.as_ref().unwrap().player.mode(), LoopMode::PingPong);
        v.advance(1.25).unwrap();
        assert!((time(&v) - 0.75).abs() < 1e-6);
        v.seek_by(0.125);
        assert!((time(&v) - 0.625).abs() < 1e-6);
        // Half speed; scrubbing ignores the speed; a pause holds.
        v.cycle_loop_mode();
        assert_eq!(loop_mode_name(v.loop_mode()), "loop");
        v.select(walk);
        v.set_speed(0.5);
        v.advance(1.0).unwrap();
        assert!((time(&v) - 0.5).abs() < 1e-6);
        v.seek_by(-0.75);
        assert!((time(&v) - 0.75).abs() < 1e-6);
        v.playing = false;
        v.advance(1.0).unwrap();
        assert!((time(&v) - 0.75).abs() < 1e-6);
        v.seek_primary(0.25);
        assert!((time(&v) - 0.25).abs() < 1e-6);
        // The pose is the clip's sample at the player's time.
        assert!(max_diff(&v.pose().unwrap(), &sample(&v, walk, 0.25), 22) < 1e-6);
    }

    #[test]
    fn blend_weight_and_crossfade_mix_two_players() {
        let mut v = humanoid("blend");
        let (walk, run) = (v.model.find_clip("walk").unwrap(), v.model.find_clip("run").unwrap());
        v.select(walk);
        while v.secondary.as_ref().map(|p| p.clip) != Some(run) {
            v.cycle_secondary();
        }
        v.advance(0.3).unwrap();
        let (a, b) = (sample(&v, walk, 0.3), sample(&v, run, 0.3));
        assert!(max_diff(&v.pose().unwrap(), &a, 22) < 1e-6);
        v.nudge_weight(1.0);
        assert!(max_diff(&v.pose().unwrap(), &b, 22) < 1e-6);
        // Half and half: every joint halfway between the clips.
        v.nudge_weight(-0.5);
        let half = v.pose().unwrap();
        for j in 0..22 {
            let (h, x, y) = (half[j / 4].lane(j % 4), a[j / 4].lane(j % 4), b[j / 4].lane(j % 4));
            assert!((h.translation - (x.translation + y.translation) * 0.5).max_abs() < 1e-6);
            let (p, q) = (h.rotation.angle_between(x.rotation), h.rotation.angle_between(y.rotation));
            assert!((p - q).abs() < 1e-4 && (p + q - x.rotation.angle_between(y.rotation)).abs() < 1e-4, "joint {j}");
        }
        // A crossfade takes CROSSFADE_SECONDS, then the second clip plays alone.
        v.nudge_weight(-1.0);
        v.crossfade();
        v.advance(CROSSFADE_SECONDS * 0.5).unwrap();
        assert!((v.weight - 0.5).abs() < 1e-6 && v.fading);
        v.advance(CROSSFADE_SECONDS * 0.5).unwrap();
        assert_eq!((v.primary.as_ref().map(|p| p.clip), v.secondary.is_none(), v.weight), (Some(run), true, 0.0));
        // Next loop modes cycle through all three.
        assert_eq!(next_loop_mode(next_loop_mode(next_loop_mode(LoopMode::Loop))), LoopMode::Loop);
    }

    #[test]
    fn a_retarget_source_drives_the_pose_and_stands_to_the_left() {
        let mut v = humanoid("target");
        let source = humanoid("source_model");
        let path = std::env::temp_dir().join(format!("sinew_viewer_{}_source.sinew", std::process::id()));
        let (bytes, _) = bake(&humanoid_rig(), &BakeOptions::default()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        let (target_center, target_floor) = (v.center, v.floor);
        let attached = v.attach_retarget(
            &path,
            None,
            RetargetOptions { scale: Some(0.5), in_place: false },
            PaletteSizes::same(64),
        );
        std::fs::remove_file(&path).unwrap();
        attached.unwrap();
        // The players play the source's clips: the clip list and the sampled pose are its.
        assert_eq!(v.num_clips(), source.num_clips());
        let walk = v.clip_model().find_clip("walk").unwrap();
        v.select(walk);
        v.advance(0.3).unwrap();
        assert!(max_diff(&v.clip_pose().unwrap(), &sample(&source, walk, 0.3), 22) < 1e-6);
        // The model's pose is the source's retargeted, as `Retarget::pose` gives it.
        let r = setup(
            &source.model,
            &source.path,
            &v.model,
            &v.path,
            None,
            RetargetOptions { scale: Some(0.5), in_place: false },
        )
        .unwrap();
        let want = r.pose(&v.clip_pose().unwrap()).unwrap();
        assert!(max_diff(&v.pose().unwrap(), &want, 22) < 1e-6);
        // The hips move by half the source's displacement: the pose is not the source's.
        assert!(max_diff(&v.pose().unwrap(), &v.clip_pose().unwrap(), 22) > 1e-4);
        // The source stands to the left on the same ground; the bounds hold both.
        let d = v.retarget.as_ref().unwrap();
        assert!(d.offset.x < -0.5 * v.radius && d.offset.y.abs() < 1e-5 && d.offset.z.abs() < 1e-5, "{:?}", d.offset);
        assert!(v.center.x < target_center.x && (v.floor - target_floor).abs() < 1e-5);
        // The frame holds both models while the source is shown, the target alone otherwise.
        let f = v.frame(Skinning::Lbs, false).unwrap();
        assert!(f.objects.iter().any(|o| o.model_index == 1) && f.objects.iter().any(|o| o.model_index == 0));
        v.retarget.as_mut().unwrap().show_source = false;
        let f = v.frame(Skinning::Lbs, false).unwrap();
        assert!(f.objects.iter().all(|o| o.model_index == 0));
    }

    #[test]
    fn grid_steps_are_round() {
        assert_eq!(grid_step(5.0), 1.0);
        assert_eq!(grid_step(6.0), 2.0);
        assert!((grid_step(0.9) - 0.2).abs() < 1e-6);
        assert!((grid_step(40.0) - 10.0).abs() < 1e-4);
    }
}
