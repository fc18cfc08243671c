//! The model viewer's state: a loaded model, its clip playback (play/pause, scrub, speed, loop
//! mode, a second clip to blend with or crossfade to) on the host layer's [`Character`], or an
//! animation graph driving the pose instead ([`GraphDrive`]), or another model's clips
//! retargeted onto it ([`RetargetDrive`]), and the model's framing.
//!
//! A model with spring bones (VRM's) swings them once [`Viewer::setup_springs`] set them up:
//! the character's spring stage steps them by the seconds played, in the world the model
//! stands in ([`Viewer::placement`], moved by [`Viewer::move_by`]), and they are drawn with
//! the pose; [`Viewer::collider_lines`] gives their colliders as lines.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use sinew::clip::RotationInterpolation;
use sinew::controller::FadeCurve;
use sinew::job::JobError;
use sinew::math::{Mat4, Quat, SoaTransform, Vec3};
pub use sinew::player::LoopMode;
use sinew_host::limits::{DesktopRig, CROSSFADE_CURVE, CROSSFADE_SECONDS};
use sinew_host::{Character, CharacterError, Model as HostModel, SpringSettings, Work};

use super::graph_drive::GraphDrive;
use crate::retarget::{setup, SetupError};
use crate::scene::{ground_grid, push_model, Frame};
use sinew_offline::bake::BakeOptions;
use sinew_offline::graph_run::SetSpec;
use sinew_offline::model::{Model, ModelError, Skinning};
use sinew_offline::morph::sample_weights;
use sinew_offline::retarget::RetargetOptions;

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
}

impl RetargetDrive {
    /// The source's object-to-world matrix: its up-axis turn, then [`RetargetDrive::offset`].
    #[must_use]
    pub fn world(&self) -> Mat4<f32> {
        self.world_at(self.offset)
    }

    /// The source's object-to-world matrix standing at `offset`.
    fn world_at(&self, offset: Vec3<f32>) -> Mat4<f32> {
        Mat4::from_translation(offset) * up_axis(self.z_up)
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

/// A character of the desktop viewer: the host layer's, at the format's joint limit.
pub type ViewerCharacter = Character<DesktopRig>;

/// `model` as the host layer holds it: its skeleton at the format's limit, its bind-pose
/// bounds.
///
/// # Errors
///
/// A model the host layer cannot open (not expected: `model` was opened from the same bytes).
pub fn host_model(model: &Model) -> Result<Rc<sinew_host::Model>, ModelError> {
    // The GL renderer uploads the file's own parts: no draw parts here.
    Ok(Rc::new(sinew_host::Model::open::<{ DesktopRig::SOA }>(model.bytes().into(), None)?))
}

/// A character playing the clips of `model` (its first clip; the rest pose without clips).
///
/// # Errors
///
/// What the host layer refuses: a model it cannot open, or a clip past the capacity.
pub fn character_of(model: Rc<sinew_host::Model>) -> Result<ViewerCharacter, ModelError> {
    Character::new(model).map_err(ModelError::Character)
}

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
    /// The model as the host layer holds it.
    host: Rc<sinew_host::Model>,
    /// The clips' playback: the primary clip (the rest pose without one), a second clip
    /// blended in or crossfaded to, speed, loop mode, pause.
    character: ViewerCharacter,
    /// The character's update buffers.
    work: Work<DesktopRig>,
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
    /// Where the model stands: a translation applied after its up-axis turn (the origin
    /// until moved; see [`Viewer::move_by`]).
    placement: Vec3<f32>,
    /// Draw the spring colliders ([`Viewer::collider_lines`]).
    pub show_colliders: bool,
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
        let host = host_model(&model)?;
        let character = character_of(Rc::clone(&host))?;
        let mut v = Viewer {
            host,
            character,
            work: Work::new(),
            model,
            path: path.to_path_buf(),
            anim: anim.map(Path::to_path_buf),
            z_up: is_md5(path),
            center: Vec3::ZERO,
            radius: 1.0,
            floor: 0.0,
            graph: None,
            retarget: None,
            placement: Vec3::ZERO,
            show_colliders: false,
        };
        v.measure_bounds();
        Ok(v)
    }

    /// Whether the model, or the retarget source whose clips it plays, has no meshes (motion
    /// capture): both viewers draw its bones from the start.
    #[must_use]
    pub fn meshless(&self) -> bool {
        self.host.asset.num_meshes() == 0 || self.character.clip_model().asset.num_meshes() == 0
    }

    /// Object-to-world matrix: Z-up models turned to Y-up, then moved to
    /// [`Viewer::placement`].
    #[must_use]
    pub fn world(&self) -> Mat4<f32> {
        Mat4::from_translation(self.placement) * up_axis(self.z_up)
    }

    /// Where the model stands: the translation [`Viewer::world`] applies after the up-axis
    /// turn.
    #[must_use]
    pub fn placement(&self) -> Vec3<f32> {
        self.placement
    }

    /// Moves the model by `delta` in the world (the character's world matrix with it, which
    /// the springs swing in from their next step). Non-finite steps are ignored.
    pub fn move_by(&mut self, delta: Vec3<f32>) {
        if delta.is_finite() {
            self.placement += delta;
            self.character.set_world(self.world());
        }
    }

    /// Turns a Z-up model to Y-up (or back): the character's world matrix follows, and its
    /// springs are put at rest in the new world (their next update resets them) rather than
    /// flung by the quarter turn.
    pub fn set_z_up(&mut self, z_up: bool) {
        self.z_up = z_up;
        self.character.set_world(self.world());
        self.character.reset_springs();
        self.measure_bounds();
    }

    /// Puts the model back at the origin with its springs at rest there (their next update
    /// resets them).
    pub fn reset_placement(&mut self) {
        self.placement = Vec3::ZERO;
        self.character.set_world(self.world());
        self.character.reset_springs();
        self.settle();
    }

    /// Recomputes the bind-pose bounds in world space (after a change of up axis); a model
    /// without meshes (motion capture) is measured in its current pose instead, its rest pose
    /// often standing at the origin. With a retarget source, it is placed to the target's left
    /// with a gap, its lowest point on the target's and its center at the target's depth, and
    /// the bounds hold both models.
    pub fn measure_bounds(&mut self) {
        let meshless = |m: &HostModel| m.asset.num_meshes() == 0;
        if meshless(&self.host) || meshless(self.character.clip_model()) {
            // The pose to measure: a refusal leaves the rest pose's matrices, measured as well.
            let _ = self.character.update(0, &mut self.work);
        }
        let own = if meshless(&self.host) { self.character.pose_bounds() } else { self.host.bounds };
        // Framed where the model stands before it is moved.
        let mut both = own.transformed(&up_axis(self.z_up));
        if let Some(d) = self.retarget.as_mut() {
            let model = self.character.clip_model();
            let source = match self.character.source_pose_bounds() {
                Some(posed) if meshless(model) => posed,
                _ => model.bounds,
            };
            let source = source.transformed(&d.world_at(Vec3::ZERO));
            let (t, s) = (both, source);
            let gap = 0.25 * (t.high.y - t.low.y).max(s.high.y - s.low.y);
            d.offset = Vec3::new(
                t.low.x - gap - s.high.x,
                t.low.y - s.low.y,
                (t.low.z + t.high.z) * 0.5 - (s.low.z + s.high.z) * 0.5,
            );
            both = both.union(&source.translated(d.offset));
        }
        self.center = both.center;
        self.radius = both.radius;
        self.floor = both.floor;
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
        let fail = |e: String| SetupError { file: path.to_path_buf(), message: e };
        let mut character = character_of(Rc::clone(&self.host)).map_err(|e| fail(e.to_string()))?;
        let source_host = host_model(&source).map_err(|e| fail(e.to_string()))?;
        character.retarget_from(source_host, joints, root).map_err(|e| fail(e.to_string()))?;
        character.set_speed(self.character.speed());
        character.set_loop_mode(self.character.loop_mode());
        character.set_playing(self.character.is_playing());
        character.set_world(self.world());
        if let Some(set) = self.character.spring_set() {
            let on = self.character.springs_enabled();
            character.set_springs(set.clone(), SpringSettings::default(), on).map_err(|e| fail(e.to_string()))?;
        }
        self.retarget = Some(RetargetDrive {
            z_up: is_md5(path),
            source,
            path: path.to_path_buf(),
            show_source: true,
            offset: Vec3::ZERO,
        });
        self.character = character;
        self.settle();
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

    /// The character playing the clips.
    #[must_use]
    pub fn character(&self) -> &ViewerCharacter {
        &self.character
    }

    /// Samples the pose after a change of clips, times or weights (the character samples only
    /// then); a failure leaves the last pose, and the next advance reports it.
    fn settle(&mut self) {
        let _kept = self.character.update(0, &mut self.work);
    }

    /// The primary clip's index and time (`None`: the model has no clips; the rest pose is
    /// shown).
    #[must_use]
    pub fn primary(&self) -> Option<(usize, f32)> {
        self.character.clip()
    }

    /// The second clip, blended in with [`Viewer::weight`] or crossfaded to.
    #[must_use]
    pub fn secondary(&self) -> Option<usize> {
        self.character.second_clip().map(|(clip, _)| clip)
    }

    /// Weight of the second clip, 0 to 1.
    #[must_use]
    pub fn weight(&self) -> f32 {
        self.character.weight()
    }

    /// Whether a crossfade to the second clip runs.
    #[must_use]
    pub fn is_fading(&self) -> bool {
        self.character.is_fading()
    }

    /// Whether time plays (else paused).
    #[must_use]
    pub fn is_playing(&self) -> bool {
        self.character.is_playing()
    }

    /// Plays (`true`) or pauses.
    pub fn set_playing(&mut self, playing: bool) {
        self.character.set_playing(playing);
    }

    /// The playback speed factor.
    #[must_use]
    pub fn speed(&self) -> f32 {
        self.character.speed()
    }

    /// Sets the playback speed factor of both clips (negative plays backwards; non-finite
    /// values are ignored).
    pub fn set_speed(&mut self, speed: f32) {
        self.character.set_speed(speed);
    }

    /// The loop mode.
    #[must_use]
    pub fn loop_mode(&self) -> LoopMode {
        self.character.loop_mode()
    }

    /// Sets the loop mode of both clips.
    pub fn set_loop_mode(&mut self, mode: LoopMode) {
        self.character.set_loop_mode(mode);
        self.settle();
    }

    /// Switches to the next loop mode ([`next_loop_mode`]).
    pub fn cycle_loop_mode(&mut self) {
        self.set_loop_mode(next_loop_mode(self.loop_mode()));
    }

    /// Plays clip `clip` alone from its start (no-op past the clip count); a cut, so the
    /// springs start at rest on its first pose.
    pub fn select(&mut self, clip: usize) {
        if self.character.play(clip).is_ok() {
            self.character.reset_springs();
            self.settle();
        }
    }

    /// Steps the primary clip by `delta` clips (wrapping).
    pub fn step_clip(&mut self, delta: i64) {
        let n = self.num_clips() as i64;
        if n > 0 {
            let cur = self.primary().map_or(0, |(clip, _)| clip as i64);
            self.select((cur + delta).rem_euclid(n) as usize);
        }
    }

    /// Cycles the second (blend) clip: none → 0 → 1 → … → none, keeping the weight.
    pub fn cycle_secondary(&mut self) {
        let next = self.secondary().map_or(0, |clip| clip + 1);
        let weight = self.weight();
        if next >= self.num_clips() || self.character.blend(next, weight).is_err() {
            self.character.stop_blend();
        }
        self.settle();
    }

    /// Starts a crossfade of [`CROSSFADE_SECONDS`] to the second clip, or to the clip after the
    /// primary when there is none.
    pub fn crossfade(&mut self) {
        let n = self.num_clips();
        if n == 0 {
            return;
        }
        let to = self.secondary().unwrap_or_else(|| self.primary().map_or(0, |(clip, _)| (clip + 1) % n));
        let _no_such_clip = self.crossfade_to(to, CROSSFADE_SECONDS, CROSSFADE_CURVE, false);
    }

    /// Crossfades to clip `clip` over `seconds` with `curve`, phase-synced with `sync` (see
    /// [`Character::crossfade`]).
    ///
    /// # Errors
    ///
    /// What the character refuses; playback is unchanged.
    pub fn crossfade_to(
        &mut self,
        clip: usize,
        seconds: f32,
        curve: FadeCurve,
        sync: bool,
    ) -> Result<(), CharacterError> {
        self.character.crossfade(clip, seconds, curve, sync)?;
        self.settle();
        Ok(())
    }

    /// Changes the second clip's weight by `delta` (clamped to 0..1; without a second clip,
    /// the clip after the primary comes in).
    pub fn nudge_weight(&mut self, delta: f32) {
        let n = self.num_clips();
        if n == 0 {
            return;
        }
        let clip = self.secondary().unwrap_or_else(|| self.primary().map_or(0, |(clip, _)| (clip + 1) % n));
        let weight = (self.weight() + delta).clamp(0.0, 1.0);
        if self.character.blend(clip, weight).is_ok() {
            self.settle();
        }
    }

    /// Moves both clips by `dt` seconds of clip time along their cycle (forward on a
    /// ping-pong's forward pass, backward on its return; `dt < 0` goes the other way), whatever
    /// the speed. A step the player refuses (non-finite, or millions of loops) is ignored.
    pub fn seek_by(&mut self, dt: f32) {
        self.character.seek_by(dt);
        self.settle();
    }

    /// Moves the primary clip to clip time `time` (clamped into its range).
    pub fn seek_primary(&mut self, time: f32) {
        self.character.seek(time);
        self.settle();
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
            return if self.character.is_playing() { g.advance(&self.model, dt) } else { Ok(()) };
        }
        self.character.advance(dt, &mut self.work).map_err(|e| e.to_string())?;
        if self.has_springs() {
            // The springs step in the update, on the pose just sampled.
            self.character.update(0, &mut self.work).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// The local pose now: the graph's, or the character's (the primary clip, or the rest
    /// pose, blended with the second clip by the weight; the source's retargeted while a
    /// [`RetargetDrive`] drives the model) with its springs swung when they are on.
    ///
    /// # Errors
    ///
    /// A [`JobError`] when a clip does not fit the skeleton.
    pub fn pose(&self) -> Result<Vec<SoaTransform<f32>>, JobError> {
        if let Some(g) = &self.graph {
            return Ok(g.pose().to_vec());
        }
        Ok(self.character.staged_pose().to_vec())
    }

    /// The local pose of [`Viewer::clip_model`] now: the primary clip (or the rest pose)
    /// blended with the secondary by the weight (the source's pose while retargeting).
    ///
    /// # Errors
    ///
    /// A [`JobError`] when a clip does not fit the skeleton.
    pub fn clip_pose(&self) -> Result<Vec<SoaTransform<f32>>, JobError> {
        Ok(self.character.clip_pose().to_vec())
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
        let at = |p: Option<(usize, f32)>| sample_weights(&asset, mesh, p.map(|p| p.0), p.map_or(0.0, |p| p.1));
        let mut w = at(self.character.clip())?;
        let weight = self.weight();
        if let (Some(sec), true) = (self.character.second_clip(), weight > 0.0) {
            let other = at(Some(sec))?;
            for (a, b) in w.iter_mut().zip(other) {
                *a += (b - *a) * weight;
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
                let pose = self.pose()?;
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

pub use sinew_host::camera::grid_step;

mod springs;

#[cfg(test)]
mod tests;
