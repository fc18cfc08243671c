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
use sinew_host::{Character, CharacterError, Model as HostModel, SpringFrame, SpringSettings, Work};

use super::colliders::ColliderLines;
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

    /// Sets up the model's spring bones (when its file has any) on the character, on, at the
    /// host layer's default rate; returns whether it has springs. A set-up in place is
    /// replaced (the springs start at rest).
    ///
    /// # Errors
    ///
    /// What the character's validation refuses (not expected for a file that loaded); the
    /// viewer then runs without springs.
    pub fn setup_springs(&mut self) -> Result<bool, CharacterError> {
        let Some(set) = self.host.springs().filter(|s| !s.joints.is_empty()) else {
            self.character.clear_springs();
            return Ok(false);
        };
        self.character.set_world(self.world());
        self.character.set_springs(set, SpringSettings::default(), true)?;
        self.settle();
        Ok(true)
    }

    /// Whether spring bones are set up ([`Viewer::setup_springs`] on a model with springs).
    #[must_use]
    pub fn has_springs(&self) -> bool {
        self.character.spring_set().is_some()
    }

    /// Whether the springs are set up and on.
    #[must_use]
    pub fn springs_enabled(&self) -> bool {
        self.character.springs_enabled()
    }

    /// Turns the springs on (at rest in the next pose) or off (the clips' pose); nothing
    /// without springs.
    pub fn set_springs_enabled(&mut self, enabled: bool) {
        if self.character.set_springs_enabled(enabled).is_ok() {
            self.settle();
        }
    }

    /// Number of spring joints (0 without springs).
    #[must_use]
    pub fn spring_joints(&self) -> usize {
        self.character.spring_set().map_or(0, |s| s.joints.len())
    }

    /// Number of spring colliders (0 without springs).
    #[must_use]
    pub fn spring_colliders(&self) -> usize {
        self.character.spring_set().map_or(0, |s| s.colliders.len())
    }

    /// What the springs did in the last update (a reset, steps, contacts); `None` without
    /// springs.
    #[must_use]
    pub fn spring_frame(&self) -> Option<SpringFrame> {
        self.character.spring_frame()
    }

    /// The spring colliders in the current pose and world as wire lines
    /// ([`Character::collider_lines`](sinew_host::Character::collider_lines)): spheres and
    /// capsules as circles, planes as a square sized to the model with their normal; `inside`
    /// colliders apart. Empty without springs.
    #[must_use]
    pub fn collider_lines(&self) -> ColliderLines {
        self.character.collider_lines(ColliderLines::plane_size(self.radius))
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

    /// A viewer on the built-in humanoid with one spring: the left forearm, its tail at the
    /// hand, pulled down by gravity.
    fn humanoid_with_a_spring(tag: &str) -> (Viewer, usize) {
        use sinew_offline::rig::{ResolvedSpringJoint, Spring, SpringBones, SpringJoint, SpringParams, SpringSource};
        let mut rig = humanoid_rig();
        let find = |name: &str| rig.joints.iter().position(|j| j.name == name).unwrap();
        let (forearm, hand) = (find("l_forearm"), find("l_hand"));
        let tail = rig.joints[hand].rest.translation;
        let params = SpringParams {
            hit_radius: 0.0,
            stiffness: 0.5,
            gravity_power: 2.0,
            gravity_dir: [0.0, -1.0, 0.0],
            drag_force: 0.4,
        };
        rig.springs = Some(SpringBones {
            source: SpringSource::Vrm0,
            springs: vec![Spring {
                name: None,
                joints: vec![SpringJoint { joint: forearm, params }, SpringJoint { joint: hand, params }],
                collider_groups: Vec::new(),
                center: None,
            }],
            colliders: Vec::new(),
            collider_groups: Vec::new(),
            joints: vec![ResolvedSpringJoint {
                joint: forearm,
                child: Some(hand),
                tail: [tail.x, tail.y, tail.z],
                params,
                center: None,
                colliders: Vec::new(),
                spring: 0,
            }],
        });
        let (bytes, _) = bake(&rig, &BakeOptions::default()).unwrap();
        let path = std::env::temp_dir().join(format!("sinew_viewer_{}_{tag}.sinew", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        let mut v = Viewer::load(&path, None, PaletteSizes::same(64)).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(v.setup_springs().unwrap());
        let joint = v.model.skeleton().names().iter().position(|n| n.as_str() == "l_forearm").unwrap();
        (v, joint)
    }

    #[test]
    fn a_change_of_clip_or_a_seek_puts_the_springs_at_rest() {
        let (mut v, forearm) = humanoid_with_a_spring("spring");
        let (walk, run) = (v.model.find_clip("walk").unwrap(), v.model.find_clip("run").unwrap());
        let rest = v.model.skeleton().rest_pose()[forearm / 4].lane(forearm % 4).rotation;
        // How far the forearm is turned from its rest rotation, in the viewer's pose and in the
        // clip's.
        let from_rest = |pose: &[SoaTransform<f32>]| pose[forearm / 4].lane(forearm % 4).rotation.angle_between(rest);
        v.select(walk);
        assert!(v.spring_frame().is_some_and(|f| f.reset));
        assert!(from_rest(&v.pose().unwrap()) < 1e-5);
        for _ in 0..20 {
            v.advance(1.0 / 60.0).unwrap();
        }
        // Gravity has swung the forearm from its rest rotation.
        assert!(v.spring_frame().is_some_and(|f| f.steps == 1 && !f.reset));
        let swung = from_rest(&v.pose().unwrap());
        assert!(swung > 0.01, "{swung}");
        // A change of clip: back at rest, whatever the clip's forearm does.
        v.select(run);
        assert!(v.spring_frame().is_some_and(|f| f.reset));
        assert!(from_rest(&v.pose().unwrap()) < 1e-5);
        assert!(from_rest(v.character().pose()) > 0.01, "the run clip turns the forearm");
        for _ in 0..20 {
            v.advance(1.0 / 60.0).unwrap();
        }
        assert!(from_rest(&v.pose().unwrap()) > 0.01);
        // A seek: back at rest too.
        v.seek_by(0.1);
        assert!(v.spring_frame().is_some_and(|f| f.reset));
        assert!(from_rest(&v.pose().unwrap()) < 1e-5);
        // Without the springs set up, the pose is the clip's.
        let mut plain = humanoid("plain");
        plain.select(walk);
        plain.advance(0.3).unwrap();
        assert!(!plain.has_springs() && plain.spring_frame().is_none());
        assert!(max_diff(&plain.pose().unwrap(), &sample(&plain, walk, 0.3), 22) < 1e-6);
    }

    #[test]
    fn turning_the_up_axis_moves_the_springs_world_and_puts_them_at_rest() {
        let (mut v, _) = humanoid_with_a_spring("up-axis");
        for _ in 0..5 {
            v.advance(1.0 / 60.0).unwrap();
        }
        assert!(v.spring_frame().is_some_and(|f| !f.reset));
        let z_up = !v.z_up;
        v.set_z_up(z_up);
        assert_eq!(v.z_up, z_up);
        assert_eq!(v.character().world(), v.world(), "the springs swing in the drawn world");
        assert_ne!(v.world(), Mat4::from_translation(v.placement()));
        v.advance(1.0 / 60.0).unwrap();
        assert!(v.spring_frame().is_some_and(|f| f.reset), "a quarter turn resets the springs");
    }

    #[test]
    fn loop_modes_speed_and_scrubbing_follow_the_player() {
        let mut v = humanoid("loop");
        let walk = v.model.find_clip("walk").unwrap();
        let time = |v: &Viewer| v.primary().unwrap().1;
        v.select(walk);
        assert_eq!(v.clip_range(walk), (0.0, 1.0));
        v.advance(2.5).unwrap();
        assert!((time(&v) - 0.5).abs() < 1e-6);
        // Once stops at the end.
        v.cycle_loop_mode();
        assert_eq!(v.loop_mode(), LoopMode::Once);
        v.advance(2.0).unwrap();
        assert_eq!(time(&v), 1.0);
        assert!(v.character().controller().player(0).unwrap().finished());
        // Ping-pong bounces; scrubbing moves along the pass.
        v.cycle_loop_mode();
        v.select(walk);
        assert_eq!(v.loop_mode(), LoopMode::PingPong);
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
        v.set_playing(false);
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
        while v.secondary() != Some(run) {
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
        assert!((v.weight() - 0.5).abs() < 1e-6 && v.is_fading());
        v.advance(CROSSFADE_SECONDS * 0.5).unwrap();
        assert_eq!((v.primary().map(|p| p.0), v.secondary().is_none(), v.weight()), (Some(run), true, 0.0));
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
}
