//! The built-in default scene of `sinew demo`, independent of any renderer.
//!
//! Three rigs are built in code as [`Rig`]s ([`sinew_offline::builtin`]) and baked to
//! [`Model`]s (no files), on uneven ground:
//!
//! - the **tentacle**: a box strip on a 4-joint chain, its joint angles driven by `sin()` of
//!   time with a speed and an amplitude ([`SceneParams`]);
//! - a procedural **humanoid** (22 joints, capsules along the bones, smooth weights at the
//!   joints) with `idle`, `walk`, `run` and `wave` clips authored as LINEAR keys every 1/30 s,
//!   its feet planted by construction. The core's animation system drives it
//!   ([`Scene::character`]): a [`LayeredStateMachine`] runs its graph ([`CHARACTER_GRAPH`]:
//!   idle, and a phase-synced blend space over walk and run driven by the asked speed; `wave`
//!   on a layer masked to the right arm), and the root motion the graph extracts moves it
//!   around a closed path ([`PathFollower`]) over the terrain; the core's foot placement
//!   ([`FootPlacementJob`]) stands its feet on the terrain and holds its planted feet, and
//!   [`IkAimJob`] turns its head towards a target;
//! - the **candy wrapper**: a cylinder on 2 joints whose second joint twists up to 180° about
//!   the long axis, drawn twice side by side, with linear blend skinning (which collapses) and
//!   dual-quaternion skinning (which keeps the volume);
//! - the **terrain** ([`Terrain`], a fourth model of one joint): flat ground at y = 0 with a
//!   plateau [`PLATEAU_HEIGHT`] high under the path's right turn, climbed by three steps on the
//!   front straight and left by a slope on the back one. The character's root follows its
//!   height along the path (smoothed), and its feet stand on it; [`SceneParams::foot_placement`]
//!   switches the foot placement off and on (its effect ramps over [`FOOT_BLEND`]).
//!
//! [`Scene::frame`] gives what to draw at a scene time: for each object its world matrix, the
//! baked mesh with its skin palettes (matrices and dual quaternions) for GPU skinning, or
//! [`DrawObject::skin_cpu`] for the skinned vertex buffers a software renderer needs, plus bone
//! lines, a ground grid with the terrain's edges, and text labels. [`default_camera`] and [`SceneLight`] are the camera
//! and light both renderers use, so their images can be compared.
//!
//! This file holds the [`Scene`] itself, its [`SceneParams`] and where its objects stand; the
//! rest is in `camera` (camera and light), `character` (the humanoid's controller, schedule,
//! path, foot placement and look-at), `terrain` (the ground's heights, normals and mesh),
//! `props` (the tentacle's and candy wrapper's poses), `frame` (the [`Frame`] of draw objects)
//! and `error` ([`SceneError`]).
//!
//! [`LayeredStateMachine`]: sinew::graph::LayeredStateMachine
//! [`PathFollower`]: sinew::root_motion::PathFollower
//! [`FootPlacementJob`]: sinew::job::foot::FootPlacementJob
//! [`IkAimJob`]: sinew::job::ik::IkAimJob

mod camera;
mod character;
mod error;
mod frame;
mod props;
mod terrain;

#[cfg(test)]
mod tests;

use sinew::math::{Mat4, Vec3};
use sinew_offline::bake::BakeOptions;
use sinew_offline::builtin::{humanoid_rig, tentacle_rig, twist_rig, TWIST_LENGTH};
use sinew_offline::model::{Model, Skinning};
use sinew_offline::rig::Rig;

pub use camera::{default_camera, Camera, SceneLight};
use character::Character;
pub use character::{
    character_path, path_length, scripted_look_target, CharacterFrame, FootPlacement, LookRay, SlotInfo,
    CHARACTER_GRAPH, CHARACTER_STEP, FOOT_BLEND, HEADING_LOOK_AHEAD, IDLE, LOOK_PLANE_DISTANCE, MOVING, PATH_CENTER,
    PATH_STRAIGHT, PATH_TURN_RADIUS, RUN, SCHEDULE_PERIOD, SLOT_CLIPS, SPEED, WALK, WAVE, WAVE_LAYER, WAVE_MASK,
    WAVING,
};
pub use error::SceneError;
pub use frame::{ground_grid, linear_to_srgb, push_model, srgb_to_linear, DrawObject, Frame, Label};
pub use props::{scale_root, tentacle_pose, twist_angle, twist_pose};
pub use terrain::{
    Block, GroundSample, Surface, Terrain, PLATEAU_HEIGHT, PLATEAU_X, SLOPE_X, SLOPE_Z, STAIRS_X, STAIRS_Z, STAIR_RISE,
    STAIR_TREAD, TERRAIN_COLOR,
};

/// Index of the tentacle in [`Scene::models`].
pub const TENTACLE: usize = 0;
/// Index of the humanoid in [`Scene::models`].
pub const CHARACTER: usize = 1;
/// Index of the candy wrapper in [`Scene::models`].
pub const TWIST: usize = 2;
/// Index of the terrain in [`Scene::models`].
pub const TERRAIN: usize = 3;

/// Where the tentacle's base stands.
pub const TENTACLE_POSITION: Vec3<f32> = Vec3 { x: -2.2, y: 0.0, z: 0.0 };
/// Where the linear-blend candy wrapper stands.
pub const TWIST_LBS_POSITION: Vec3<f32> = Vec3 { x: 1.95, y: 0.0, z: 0.3 };
/// Where the dual-quaternion candy wrapper stands.
pub const TWIST_DQS_POSITION: Vec3<f32> = Vec3 { x: 2.75, y: 0.0, z: 0.3 };

/// Range of the tentacle speed slider, in cycles per second.
pub const TENTACLE_SPEED_RANGE: (f32, f32) = (0.0, 2.0);
/// Range of the tentacle amplitude slider, in radians per joint.
pub const TENTACLE_AMPLITUDE_RANGE: (f32, f32) = (0.0, 1.2);

/// The scene's interactive settings.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneParams {
    /// Tentacle wave frequency, in cycles per second.
    pub tentacle_speed: f32,
    /// Tentacle joint swing, in radians.
    pub tentacle_amplitude: f32,
    /// Whether [`Frame::bones`] holds the skeletons.
    pub show_bones: bool,
    /// Skinning of the tentacle and the character (the candy wrappers show both).
    pub skinning: Skinning,
    /// What the character looks at: along this ray (the mouse cursor's), or at
    /// [`scripted_look_target`] when `None`.
    pub look_ray: Option<LookRay>,
    /// A scale on the candy wrappers' root joint, which their bind pose does not have (as an
    /// armature scale of 0.01 on a centimetre mesh): skin matrices with scale, for dual
    /// quaternions with scale. [`Vec3::ONE`] by default.
    pub twist_scale: Vec3<f32>,
    /// When the character's feet are placed on the terrain (on from t = 0 by default): the
    /// foot placement stage's enabled flag at each simulation step; its effect ramps in and out
    /// from each switch.
    pub foot_placement: FootPlacement,
}

impl Default for SceneParams {
    fn default() -> Self {
        SceneParams {
            tentacle_speed: 0.5,
            tentacle_amplitude: 0.6,
            show_bones: false,
            skinning: Skinning::Lbs,
            look_ray: None,
            twist_scale: Vec3::ONE,
            foot_placement: FootPlacement::default(),
        }
    }
}

/// Half the size of the look-at target's marker, in meters.
const MARKER_SIZE: f32 = 0.06;

/// The built-in scene: the baked models, the character's animation state and the settings.
#[derive(Debug)]
pub struct Scene {
    models: Vec<Model>,
    character: Character,
    /// Interactive settings.
    pub params: SceneParams,
}

impl Scene {
    /// Builds and bakes the three rigs, splitting meshes into parts of at most `palette`
    /// joints (`None`: no limit) with at most 4 influences per vertex, and sets up the
    /// character's controller.
    ///
    /// # Errors
    ///
    /// [`SceneError::Model`] when baking fails (a `palette` of 1 cannot hold the triangles
    /// that blend two joints).
    pub fn new(palette: Option<usize>) -> Result<Scene, SceneError> {
        let opts = BakeOptions { palette, max_influences: 4, ..BakeOptions::default() };
        let bake = |rig: &Rig| Model::from_rig(rig, &opts).map_err(SceneError::Model);
        let terrain = Terrain::builtin();
        let models = vec![bake(&tentacle_rig())?, bake(&humanoid_rig())?, bake(&twist_rig())?, bake(&terrain.rig())?];
        let character = Character::new(&models[CHARACTER], terrain)?;
        Ok(Scene { models, character, params: SceneParams::default() })
    }

    /// The baked models: [`TENTACLE`], [`CHARACTER`], [`TWIST`], [`TERRAIN`].
    #[must_use]
    pub fn models(&self) -> &[Model] {
        &self.models
    }

    /// The ground the character walks on ([`Terrain::builtin`]).
    #[must_use]
    pub fn terrain(&self) -> &Terrain {
        self.character.terrain()
    }

    /// The character at scene time `t` (seconds; negative or non-finite times read as 0) with
    /// the current [`SceneParams::look_ray`] and [`SceneParams::foot_placement`].
    ///
    /// Its [`LayeredStateMachine`] runs [`CHARACTER_GRAPH`] (`idle`, and `walk` and `run` in
    /// a phase-synced blend space over the `speed` parameter), with `wave` on an upper layer
    /// masked by [`WAVE_MASK`]; the schedule (period [`SCHEDULE_PERIOD`]) sets the parameters
    /// and fades the wave layer: walk, speed up to a run and back, a wave while walking, stop (a
    /// crossfade to idle), a wave while standing, walk again (an inertialized start). The root
    /// motion the graph extracts from the clips advances a [`PathFollower`] around
    /// [`character_path`] (the character faces the point [`HEADING_LOOK_AHEAD`] further on), its
    /// root at the height of the lowest terrain within a step around it, averaged along the
    /// path. [`FootPlacementJob`] then stands the feet on the [`Terrain`]: each ankle at its
    /// height above the clip's ground over the terrain under it (raised where its toe is over
    /// a higher tread), the foot tilted to a slope, the pelvis lowered on a spring so that the
    /// lower foot reaches, and a foot that touches down held where it landed until it lifts
    /// (while no graph transition runs; the locks also keep the feet planted in turns). Its
    /// enabled flag follows [`SceneParams::foot_placement`] at every step, its effect ramping
    /// in or out over [`FOOT_BLEND`]. [`IkAimJob`] turns the neck and head towards the look
    /// target.
    ///
    /// The state is a function of `t` and the foot placement's switches alone: the graph and
    /// the foot placement are replayed from t = 0 in steps of [`CHARACTER_STEP`] (the states
    /// reached are cached, with checkpoints every 4 s for going backwards; new switches drop
    /// the states after them), then advanced by the rest of the way to `t` (a whole step at a
    /// whole step's time).
    ///
    /// # Errors
    ///
    /// A [`SceneError`] if the state machine or a job refuses its inputs (not expected: the
    /// models are built here).
    ///
    /// [`LayeredStateMachine`]: sinew::graph::LayeredStateMachine
    /// [`PathFollower`]: sinew::root_motion::PathFollower
    /// [`FootPlacementJob`]: sinew::job::foot::FootPlacementJob
    /// [`IkAimJob`]: sinew::job::ik::IkAimJob
    pub fn character(&self, t: f32) -> Result<CharacterFrame, SceneError> {
        self.character.at(&self.models[CHARACTER], t, self.params.look_ray, &self.params.foot_placement)
    }

    /// What to draw at scene time `t` (seconds) with the current [`SceneParams`] (the
    /// character's foot placement switched as [`SceneParams::foot_placement`] says): the
    /// tentacle, the character, the two candy wrappers and the terrain, in that order. The
    /// character's look target is drawn as a small cross among [`Frame::grid`]'s lines, and so
    /// are the terrain's edges ([`Terrain::edges`]).
    ///
    /// # Errors
    ///
    /// As [`Scene::character`].
    pub fn frame(&self, t: f32) -> Result<Frame<'_>, SceneError> {
        let t = if t.is_finite() { t } else { 0.0 };
        let p = &self.params;
        let mut f = Frame { grid: ground_grid(-3.5, 3.5, -3.0, 1.5, 0.5), ..Frame::default() };
        let tentacle = &self.models[TENTACLE];
        let pose = tentacle_pose(tentacle, t, p.tentacle_speed, p.tentacle_amplitude);
        let at = |v: Vec3<f32>| Mat4::from_translation(v);
        push_model(&mut f, tentacle, TENTACLE, &pose, at(TENTACLE_POSITION), p.skinning, None, p.show_bones)?;

        let c = self.character(t)?;
        let character = &self.models[CHARACTER];
        push_model(&mut f, character, CHARACTER, &c.pose, c.world, p.skinning, None, p.show_bones)?;
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            f.grid.push([c.look_target - axis * MARKER_SIZE, c.look_target + axis * MARKER_SIZE]);
        }

        let twist = &self.models[TWIST];
        let mut pose = twist_pose(twist, twist_angle(t));
        if p.twist_scale != Vec3::ONE {
            scale_root(twist, &mut pose, p.twist_scale);
        }
        let lbs_color = [0.9, 0.75, 0.3, 1.0];
        let dqs_color = [0.35, 0.8, 0.6, 1.0];
        push_model(&mut f, twist, TWIST, &pose, at(TWIST_LBS_POSITION), Skinning::Lbs, Some(lbs_color), p.show_bones)?;
        push_model(&mut f, twist, TWIST, &pose, at(TWIST_DQS_POSITION), Skinning::Dqs, Some(dqs_color), p.show_bones)?;

        let terrain = &self.models[TERRAIN];
        let rest = terrain.skeleton().rest_pose();
        push_model(&mut f, terrain, TERRAIN, rest, Mat4::IDENTITY, p.skinning, None, false)?;
        f.grid.extend(self.terrain().edges());
        let above = Vec3::new(0.0, TWIST_LENGTH + 0.25, 0.0);
        f.labels.push(Label { position: TWIST_LBS_POSITION + above, text: "LBS".into() });
        f.labels.push(Label { position: TWIST_DQS_POSITION + above, text: "DQS".into() });
        Ok(f)
    }
}
