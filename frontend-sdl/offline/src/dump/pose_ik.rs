//! `sinew dump --ik`, `--ground` and `--leg`: IK chains and foot placement applied to the
//! dumped local pose before [`dump_pose`](super::dump_pose).
//!
//! # Space
//!
//! The targets, tolerances, ground heights and normals are in the space and units of the dump's
//! `joint_world`: the model space of the skeleton, which [`Model::world`] computes with no
//! root matrix. The importers keep the scene nodes above a skin (`Z_UP`, an armature node) as
//! joints of the skeleton, so that space is the scene's, and the jobs run in it as given: no
//! conversion is needed.
//!
//! # Order
//!
//! Foot placement (`--ground`) runs first, then each `--ik` chain in the order given, so the
//! chains' targets hold in the dumped pose even where foot placement moved a joint above them.
//! After each stage the model matrices are recomputed from the corrected local pose.
//!
//! # Specs
//!
//! - `--ik SOLVER,FROM,TO,X,Y,Z[,ITERATIONS[,TOLERANCE]]` ([`IkSpec`]): `fabrik` or `ccd`
//!   from joint `FROM` down to joint `TO` (below it), the end reaching `(X, Y, Z)`.
//!   `ITERATIONS` defaults to [`DEFAULT_ITERATIONS`], `TOLERANCE` (the distance at which the
//!   end counts as arrived) to [`DEFAULT_TOLERANCE`]. Joint names may hold `:` but no `,`.
//! - `--ground HEIGHT[,NX,NY,NZ]` ([`GroundSpec`]): the plane through `(0, HEIGHT, 0)` with
//!   normal `(NX, NY, NZ)` (default `(0, 1, 0)`; `NY` above 0, its length does not matter),
//!   Y up. The legs stand on it as they stood on the ground at height 0, for one frame whose
//!   smoothing and locks start settled.
//! - `--leg HIP,KNEE,ANKLE[,TOE]` ([`LegSpec`]): a leg for `--ground` by joint names, each
//!   below the one before; without any, the legs are found by the humanoid naming
//!   ([`humanoid_legs`]). The pelvis lowered where a foot cannot reach is the humanoid hips, or
//!   else the nearest joint above every leg's hip.

use std::fmt;
use std::str::FromStr;

use sinew::job::foot::{FootLeg, FootPlacementJob, FootSettings, FootState, GroundPlane, LegState};
use sinew::job::ik::{apply_chain_corrections, ChainReport, ChainSolver, IkChainJob, MAX_CHAIN_JOINTS};
use sinew::job::JobError;
use sinew::math::{Mat4, Quat, SoaTransform, Vec3};

use crate::model::Model;
use crate::retarget::humanoid::{canonical_bones, Bone};

/// The most iterations an `--ik` chain runs when the spec gives none.
pub const DEFAULT_ITERATIONS: u32 = 20;

/// The distance (in `joint_world` units, meters for glTF files) from the target at which an
/// `--ik` chain's end counts as arrived when the spec gives none.
pub const DEFAULT_TOLERANCE: f32 = 1.0e-4;

/// The most iterations an `--ik` spec may ask for.
pub const MAX_ITERATIONS: u32 = 10_000;

/// The solver an `--ik` spec names: `fabrik` or `ccd` (any case).
fn solver(field: &str) -> Result<ChainSolver, String> {
    match field.to_ascii_lowercase().as_str() {
        "fabrik" => Ok(ChainSolver::Fabrik),
        "ccd" => Ok(ChainSolver::Ccd),
        _ => Err(format!("unknown solver '{field}' (fabrik or ccd)")),
    }
}

/// Why an `--ik`, `--ground` or `--leg` spec could not be read: the option, the spec as given
/// and the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The option: `--ik`, `--ground` or `--leg`.
    pub option: &'static str,
    /// The spec as given.
    pub spec: String,
    /// What is wrong with it.
    pub problem: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} '{}': {}", self.option, self.spec, self.problem)
    }
}

impl std::error::Error for SpecError {}

/// The fields of a comma-separated spec, trimmed.
fn fields(s: &str) -> Vec<&str> {
    s.split(',').map(str::trim).collect()
}

/// A finite number, or a message naming the field.
fn finite(field: &str, what: &str) -> Result<f32, String> {
    match field.parse::<f32>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("{what} '{field}' is not finite")),
        Err(_) => Err(format!("{what} '{field}' is not a number")),
    }
}

/// A joint name field, or a message naming it when it is empty.
fn name<'s>(field: &'s str, what: &str) -> Result<&'s str, String> {
    if field.is_empty() {
        Err(format!("the {what} joint name is empty"))
    } else {
        Ok(field)
    }
}

/// One `--ik` chain: `SOLVER,FROM,TO,X,Y,Z[,ITERATIONS[,TOLERANCE]]` (see the
/// [module documentation](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct IkSpec {
    /// The solver.
    pub solver: ChainSolver,
    /// The chain's first joint (the one nearest the root).
    pub from: String,
    /// The chain's end joint, in the subtree of `from`.
    pub to: String,
    /// Where the end joint goes, in `joint_world` space.
    pub target: [f32; 3],
    /// The most iterations, at least 1.
    pub iterations: u32,
    /// The distance from the target at which the end counts as arrived, above 0.
    pub tolerance: f32,
}

impl FromStr for IkSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<IkSpec, SpecError> {
        let err = |problem: String| SpecError { option: "--ik", spec: s.to_string(), problem };
        let f = fields(s);
        if !(6..=8).contains(&f.len()) {
            return Err(err(format!("expected SOLVER,FROM,TO,X,Y,Z[,ITERATIONS[,TOLERANCE]], got {} fields", f.len())));
        }
        let get = |i: usize| f.get(i).copied().unwrap_or("");
        let solver = solver(get(0)).map_err(err)?;
        let from = name(get(1), "first").map_err(err)?;
        let to = name(get(2), "end").map_err(err)?;
        let mut target = [0.0f32; 3];
        for (axis, (t, what)) in target.iter_mut().zip(["target x", "target y", "target z"]).enumerate() {
            *t = finite(get(3 + axis), what).map_err(err)?;
        }
        let iterations = match f.get(6) {
            None => DEFAULT_ITERATIONS,
            Some(n) => n.parse::<u32>().ok().filter(|n| (1..=MAX_ITERATIONS).contains(n)).ok_or_else(|| {
                err(format!("the iterations '{n}' must be a whole number from 1 to {MAX_ITERATIONS}"))
            })?,
        };
        let tolerance = match f.get(7) {
            None => DEFAULT_TOLERANCE,
            Some(t) => finite(t, "the tolerance")
                .ok()
                .filter(|t| *t > 0.0)
                .ok_or_else(|| err(format!("the tolerance '{t}' must be a finite distance above 0")))?,
        };
        Ok(IkSpec { solver, from: from.to_string(), to: to.to_string(), target, iterations, tolerance })
    }
}

/// The ground of `--ground HEIGHT[,NX,NY,NZ]`: the plane through `(0, height, 0)` with normal
/// `normal`, as [`GroundPlane`] takes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundSpec {
    /// The plane's height (Y) at X = Z = 0.
    pub height: f32,
    /// The plane's normal, pointing up out of the ground (Y above 0; not necessarily unit).
    pub normal: [f32; 3],
}

impl FromStr for GroundSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<GroundSpec, SpecError> {
        let err = |problem: String| SpecError { option: "--ground", spec: s.to_string(), problem };
        let f = fields(s);
        let get = |i: usize| f.get(i).copied().unwrap_or("");
        let height = match f.len() {
            1 | 4 => finite(get(0), "the height").map_err(err)?,
            n => return Err(err(format!("expected HEIGHT[,NX,NY,NZ], got {n} fields"))),
        };
        let mut normal = [0.0, 1.0, 0.0];
        if f.len() == 4 {
            for (axis, (c, what)) in normal.iter_mut().zip(["normal x", "normal y", "normal z"]).enumerate() {
                *c = finite(get(1 + axis), what).map_err(err)?;
            }
            if normal == [0.0; 3] {
                return Err(err("the normal is zero".to_string()));
            }
            // Also rejects a normal whose square overflows: its Y part must be a usable slope.
            let length = normal.iter().map(|c| c * c).sum::<f32>().sqrt();
            if !(normal[1] > 1.0e-6 * length && length.is_finite()) {
                return Err(err("the normal must point up (NY above 0)".to_string()));
            }
        }
        Ok(GroundSpec { height, normal })
    }
}

/// A leg of `--leg HIP,KNEE,ANKLE[,TOE]`, by joint names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegSpec {
    /// The hip (upper leg) joint.
    pub hip: String,
    /// The knee (lower leg) joint, below the hip.
    pub knee: String,
    /// The ankle (foot) joint, below the knee.
    pub ankle: String,
    /// The toe joint, below the ankle, when given: the ground is also asked under it.
    pub toe: Option<String>,
}

impl FromStr for LegSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<LegSpec, SpecError> {
        let err = |problem: String| SpecError { option: "--leg", spec: s.to_string(), problem };
        let f = fields(s);
        let (hip, knee, ankle, toe) = match f.as_slice() {
            [hip, knee, ankle] => (hip, knee, ankle, None),
            [hip, knee, ankle, toe] => (hip, knee, ankle, Some(name(toe, "toe").map_err(err)?.to_string())),
            _ => return Err(err(format!("expected HIP,KNEE,ANKLE[,TOE], got {} fields", f.len()))),
        };
        Ok(LegSpec {
            hip: name(hip, "hip").map_err(err)?.to_string(),
            knee: name(knee, "knee").map_err(err)?.to_string(),
            ankle: name(ankle, "ankle").map_err(err)?.to_string(),
            toe,
        })
    }
}

/// What `sinew dump` does to the pose before dumping it: foot placement, then IK chains.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoseEdits {
    /// The `--ik` chains, applied in order after foot placement.
    pub ik: Vec<IkSpec>,
    /// The `--ground` plane; `None`: no foot placement.
    pub ground: Option<GroundSpec>,
    /// The `--leg` legs for foot placement; empty: [`humanoid_legs`].
    pub legs: Vec<LegSpec>,
}

/// Why the edits could not be applied to a model's pose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoseIkError {
    /// A spec names a joint the skeleton does not have.
    UnknownJoint {
        /// The option whose spec names it.
        option: &'static str,
        /// The name.
        name: String,
    },
    /// The joints of a chain or a leg are not one chain: a joint is not below the one named
    /// before it.
    NotAChain {
        /// The option whose spec names them.
        option: &'static str,
        /// The joint nearer the root.
        from: String,
        /// The joint that is not below it.
        to: String,
    },
    /// A chain has more joints than [`MAX_CHAIN_JOINTS`].
    ChainTooLong {
        /// The chain's end joint.
        to: String,
        /// Its joint count.
        joints: usize,
    },
    /// `--ground` without `--leg` on a skeleton whose names give no leg.
    NoLegs,
    /// Two legs of `--leg` overlap: one's hip is the other's or under it.
    LegsOverlap {
        /// The hip above (or shared).
        hip: String,
        /// The hip at or under it.
        under: String,
    },
    /// No joint is above every leg's hip, to lower as the pelvis.
    NoPelvis,
    /// `--leg` without `--ground`.
    LegsWithoutGround,
    /// A job refused its inputs.
    Job {
        /// The job.
        job: &'static str,
        /// Why.
        error: JobError,
    },
}

impl fmt::Display for PoseIkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoseIkError::UnknownJoint { option, name } => write!(f, "{option}: no joint named '{name}'"),
            PoseIkError::NotAChain { option: "--leg", from, to } => write!(
                f,
                "--leg: '{to}' is not below '{from}': a leg is HIP,KNEE,ANKLE[,TOE], each below the one before"
            ),
            PoseIkError::NotAChain { option, from, to } => {
                write!(f, "{option}: '{to}' is not below '{from}': the joints are not one chain")
            }
            PoseIkError::ChainTooLong { to, joints } => {
                write!(f, "--ik: the chain to '{to}' has {joints} joints, more than the {MAX_CHAIN_JOINTS} a chain may have")
            }
            PoseIkError::NoLegs => f.write_str(
                "--ground: no legs found by the humanoid naming (upper leg, lower leg and foot joints); name them with --leg HIP,KNEE,ANKLE",
            ),
            PoseIkError::LegsOverlap { hip, under } => {
                write!(f, "--leg: the legs overlap: hip '{under}' is '{hip}' or below it")
            }
            PoseIkError::NoPelvis => f.write_str("--ground: no joint is above every leg's hip (the pelvis to lower)"),
            PoseIkError::LegsWithoutGround => f.write_str("--leg needs --ground"),
            PoseIkError::Job { job, error } => write!(f, "{job}: {error}"),
        }
    }
}

impl std::error::Error for PoseIkError {}

/// A leg's joints, from the hip down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leg {
    /// The hip (upper leg).
    pub hip: usize,
    /// The knee (lower leg), below the hip.
    pub knee: usize,
    /// The ankle (foot), below the knee.
    pub ankle: usize,
    /// The toes, below the ankle, when known.
    pub toe: Option<usize>,
}

/// `joint` is strictly below `above` in the hierarchy of `parents`.
fn below(parents: &[i16], joint: usize, above: usize) -> bool {
    let parent = |j: usize| parents.get(j).and_then(|&p| usize::try_from(p).ok());
    let mut at = joint;
    while let Some(p) = parent(at) {
        if p == above {
            return true;
        }
        at = p;
    }
    false
}

/// The legs of a humanoid skeleton, left then right: the joints the humanoid naming
/// ([`canonical_bones`]: Mixamo, VRM, the Unreal mannequin, the CMU and Biovision
/// motion-capture namings) calls upper leg, lower leg and foot of one side, each below the one
/// before, with the toes when named and below the foot. A side without all three is left out.
#[must_use]
pub fn humanoid_legs<S: AsRef<str>>(names: &[S], parents: &[i16]) -> Vec<Leg> {
    let bones = canonical_bones(names);
    let find = |b: Bone| bones.iter().position(|&x| x == Some(b));
    [
        (Bone::LeftUpperLeg, Bone::LeftLowerLeg, Bone::LeftFoot, Bone::LeftToes),
        (Bone::RightUpperLeg, Bone::RightLowerLeg, Bone::RightFoot, Bone::RightToes),
    ]
    .into_iter()
    .filter_map(|(h, k, a, t)| {
        let (hip, knee, ankle) = (find(h)?, find(k)?, find(a)?);
        let toe = find(t).filter(|&t| below(parents, t, ankle));
        (below(parents, knee, hip) && below(parents, ankle, knee)).then_some(Leg { hip, knee, ankle, toe })
    })
    .collect()
}

/// The pelvis foot placement lowers: the humanoid hips when every hip is below them, else the
/// nearest joint above every hip; `None` when no joint is.
fn pelvis<S: AsRef<str>>(names: &[S], parents: &[i16], legs: &[Leg]) -> Option<usize> {
    let above_all = |j: usize| legs.iter().all(|l| below(parents, l.hip, j));
    let hips = canonical_bones(names).iter().position(|&b| b == Some(Bone::Hips));
    if let Some(h) = hips.filter(|&h| above_all(h)) {
        return Some(h);
    }
    let first = legs.first()?;
    let parent = |j: usize| parents.get(j).and_then(|&p| usize::try_from(p).ok());
    let mut at = parent(first.hip);
    while let Some(j) = at {
        if above_all(j) {
            return Some(j);
        }
        at = parent(j);
    }
    None
}

/// A joint by name, or [`PoseIkError::UnknownJoint`].
fn joint(model: &Model, option: &'static str, name: &str) -> Result<usize, PoseIkError> {
    model.skeleton().find(name).ok_or_else(|| PoseIkError::UnknownJoint { option, name: name.to_string() })
}

/// The joints from `from` down to `to`, each the parent of the next, or
/// [`PoseIkError::NotAChain`] when `to` is not strictly below `from`.
fn chain(model: &Model, from: usize, to: usize) -> Result<Vec<u16>, PoseIkError> {
    let skeleton = model.skeleton();
    let not_a_chain = || PoseIkError::NotAChain {
        option: "--ik",
        from: skeleton.name(from).unwrap_or_default().to_string(),
        to: skeleton.name(to).unwrap_or_default().to_string(),
    };
    if !below(skeleton.parents(), to, from) {
        return Err(not_a_chain());
    }
    let mut joints = vec![to];
    let mut at = to;
    while at != from {
        at = skeleton.parent(at).ok_or_else(not_a_chain)?;
        joints.push(at);
    }
    joints.reverse();
    if joints.len() > MAX_CHAIN_JOINTS {
        return Err(PoseIkError::ChainTooLong {
            to: skeleton.name(to).unwrap_or_default().to_string(),
            joints: joints.len(),
        });
    }
    // Skeletons hold at most `MAX_JOINTS` joints, which fit in `u16`.
    joints.into_iter().map(|j| u16::try_from(j).map_err(|_| not_a_chain())).collect()
}

/// The legs of `--leg`, or the humanoid legs of the skeleton without any.
fn resolve_legs(model: &Model, specs: &[LegSpec]) -> Result<Vec<Leg>, PoseIkError> {
    let skeleton = model.skeleton();
    let parents = skeleton.parents();
    if specs.is_empty() {
        let legs = humanoid_legs(skeleton.names(), parents);
        return if legs.is_empty() { Err(PoseIkError::NoLegs) } else { Ok(legs) };
    }
    let mut legs = Vec::with_capacity(specs.len());
    for spec in specs {
        let mut names = vec![&spec.hip, &spec.knee, &spec.ankle];
        names.extend(&spec.toe);
        let joints = names.iter().map(|n| joint(model, "--leg", n)).collect::<Result<Vec<_>, _>>()?;
        for (pair, names) in joints.windows(2).zip(names.windows(2)) {
            if let ([above, under], [a, u]) = (pair, names) {
                if !below(parents, *under, *above) {
                    return Err(PoseIkError::NotAChain { option: "--leg", from: a.to_string(), to: u.to_string() });
                }
            }
        }
        if let [hip, knee, ankle, rest @ ..] = joints.as_slice() {
            legs.push(Leg { hip: *hip, knee: *knee, ankle: *ankle, toe: rest.first().copied() });
        }
    }
    for (i, a) in legs.iter().enumerate() {
        for (j, b) in legs.iter().enumerate() {
            if i != j && (a.hip == b.hip || below(parents, b.hip, a.hip)) {
                let name = |j: usize| skeleton.name(j).unwrap_or_default().to_string();
                return Err(PoseIkError::LegsOverlap { hip: name(a.hip), under: name(b.hip) });
            }
        }
    }
    Ok(legs)
}

/// The model matrices of `pose`.
fn world(model: &Model, pose: &[SoaTransform<f32>]) -> Result<Vec<Mat4<f32>>, PoseIkError> {
    let mut out = Vec::new();
    model.world(pose, &mut out).map_err(|error| PoseIkError::Job { job: "LocalToModelJob", error })?;
    Ok(out)
}

/// Applies `edits` to the local pose `pose` of `model`: foot placement on the ground, then
/// each IK chain in order (see the [module documentation](self)). Returns what each chain
/// reached, in the order of `edits.ik`.
///
/// # Errors
///
/// [`PoseIkError::UnknownJoint`], [`PoseIkError::NotAChain`], [`PoseIkError::ChainTooLong`]
/// and [`PoseIkError::LegsOverlap`] for specs that do not fit the skeleton,
/// [`PoseIkError::NoLegs`] for `--ground` on a skeleton without legs by name and no `--leg`,
/// [`PoseIkError::NoPelvis`], [`PoseIkError::LegsWithoutGround`], and [`PoseIkError::Job`]
/// when a job refuses the pose (a matrix with a zero scale, say). The specs are all checked
/// before the pose changes.
pub fn apply(
    model: &Model,
    pose: &mut [SoaTransform<f32>],
    edits: &PoseEdits,
) -> Result<Vec<ChainReport<f32>>, PoseIkError> {
    if edits.ground.is_none() && !edits.legs.is_empty() {
        return Err(PoseIkError::LegsWithoutGround);
    }
    let skeleton = model.skeleton();
    let feet = match edits.ground {
        Some(ground) => {
            let legs = resolve_legs(model, &edits.legs)?;
            let pelvis = pelvis(skeleton.names(), skeleton.parents(), &legs).ok_or(PoseIkError::NoPelvis)?;
            Some((ground, legs, pelvis))
        }
        None => None,
    };
    let chains = edits
        .ik
        .iter()
        .map(|spec| chain(model, joint(model, "--ik", &spec.from)?, joint(model, "--ik", &spec.to)?))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some((ground, legs, pelvis)) = feet {
        place_feet(model, pose, &ground, &legs, pelvis)?;
    }
    edits.ik.iter().zip(&chains).map(|(spec, joints)| solve_chain(model, pose, spec, joints)).collect()
}

/// Foot placement of `legs` on the plane of `ground` for one settled frame: the ankles' clip
/// ground is `y = 0` of model space, their standing heights those of the rest pose, the world
/// placement the identity.
fn place_feet(
    model: &Model,
    pose: &mut [SoaTransform<f32>],
    ground: &GroundSpec,
    legs: &[Leg],
    pelvis: usize,
) -> Result<(), PoseIkError> {
    let job = |error| PoseIkError::Job { job: "FootPlacementJob", error };
    let skeleton = model.skeleton();
    let rest = world(model, skeleton.rest_pose())?;
    let legs: Vec<FootLeg<f32>> = legs
        .iter()
        .map(|l| FootLeg {
            hip: l.hip,
            knee: l.knee,
            ankle: l.ankle,
            toe: l.toe,
            standing_height: rest.get(l.ankle).map_or(0.0, |m| m.translation().y),
        })
        .collect();
    let mut model_matrices = world(model, pose)?;
    let [x, y, z] = ground.normal;
    let mut plane = GroundPlane { height: ground.height, normal: Vec3::new(x, y, z) };
    let mut state = FootState::new(true);
    let mut leg_states = vec![LegState::new(); legs.len()];
    FootPlacementJob {
        skeleton,
        pelvis,
        legs: &legs,
        settings: FootSettings::new(),
        state: &mut state,
        leg_states: &mut leg_states,
        world: Mat4::IDENTITY,
        dt: 0.0,
        pose,
        model: &mut model_matrices,
        ground: &mut plane,
    }
    .run()
    .map_err(job)
}

/// Solves one `--ik` chain on `pose` and multiplies its corrections onto the chain's local
/// rotations.
fn solve_chain(
    model: &Model,
    pose: &mut [SoaTransform<f32>],
    spec: &IkSpec,
    joints: &[u16],
) -> Result<ChainReport<f32>, PoseIkError> {
    let job = |error| PoseIkError::Job { job: "IkChainJob", error };
    let models = world(model, pose)?;
    let [x, y, z] = spec.target;
    let mut positions = vec![Vec3::ZERO; joints.len()];
    let mut corrections = vec![Quat::IDENTITY; joints.len().saturating_sub(1)];
    let report = IkChainJob {
        solver: spec.solver,
        skeleton: model.skeleton(),
        models: &models,
        chain: joints,
        target: Vec3::new(x, y, z),
        tolerance: spec.tolerance,
        max_iterations: spec.iterations,
        weight: 1.0,
        limits: &[],
        pole: None,
        positions: &mut positions,
        corrections: &mut corrections,
    }
    .run()
    .map_err(job)?;
    apply_chain_corrections(pose, joints, &corrections).map_err(job)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ik_specs_read_with_defaults_and_names_with_colons() {
        let spec: IkSpec = "fabrik, mixamorig:LeftArm ,mixamorig:LeftHand,1,-2.5,3e-1".parse().expect("spec");
        assert_eq!(
            spec,
            IkSpec {
                solver: ChainSolver::Fabrik,
                from: "mixamorig:LeftArm".into(),
                to: "mixamorig:LeftHand".into(),
                target: [1.0, -2.5, 0.3],
                iterations: 20,
                tolerance: 1.0e-4,
            }
        );
        let spec: IkSpec = "CCD,a,b,0,0,0,7,0.5".parse().expect("spec");
        assert_eq!((spec.solver, spec.iterations, spec.tolerance), (ChainSolver::Ccd, 7, 0.5));
    }

    #[test]
    fn bad_ik_specs_name_the_problem() {
        let problem = |s: &str| s.parse::<IkSpec>().expect_err(s).to_string();
        assert_eq!(
            problem("fabrik,a,b,1,2"),
            "--ik 'fabrik,a,b,1,2': expected SOLVER,FROM,TO,X,Y,Z[,ITERATIONS[,TOLERANCE]], got 5 fields"
        );
        assert_eq!(problem("lbfgs,a,b,1,2,3"), "--ik 'lbfgs,a,b,1,2,3': unknown solver 'lbfgs' (fabrik or ccd)");
        assert!(problem("ccd,a,b,NaN,2,3").ends_with("target x 'NaN' is not finite"));
        assert!(problem("ccd,a,b,1,-inf,3").ends_with("target y '-inf' is not finite"));
        assert!(problem("ccd,a,b,1,2,z").ends_with("target z 'z' is not a number"));
        assert!(problem("ccd,a, ,1,2,3").ends_with("the end joint name is empty"));
        assert!(problem("ccd,a,b,1,2,3,-1").contains("iterations '-1' must be a whole number from 1 to 10000"));
        assert!(problem("ccd,a,b,1,2,3,10001").contains("iterations '10001'"));
        assert!(problem("ccd,a,b,1,2,3,5,0").contains("tolerance '0' must be a finite distance above 0"));
        assert!(problem("ccd,a,b,1,2,3,5,inf").contains("tolerance 'inf'"));
    }

    #[test]
    fn ground_and_leg_specs() {
        assert_eq!("0.25".parse::<GroundSpec>(), Ok(GroundSpec { height: 0.25, normal: [0.0, 1.0, 0.0] }));
        assert_eq!("-1,0.5,2,0".parse::<GroundSpec>(), Ok(GroundSpec { height: -1.0, normal: [0.5, 2.0, 0.0] }));
        let problem = |s: &str| s.parse::<GroundSpec>().expect_err(s).to_string();
        assert_eq!(problem("1,2"), "--ground '1,2': expected HEIGHT[,NX,NY,NZ], got 2 fields");
        assert!(problem("1,0,0,0").ends_with("the normal is zero"));
        assert!(problem("1,1,0,0").ends_with("the normal must point up (NY above 0)"));
        assert!(problem("1,0,-1,0").ends_with("the normal must point up (NY above 0)"));
        assert!(problem("1,3e38,1,0").ends_with("the normal must point up (NY above 0)"));
        assert!(problem("nan").ends_with("the height 'nan' is not finite"));
        let leg: LegSpec = "mixamorig:LeftUpLeg,mixamorig:LeftLeg,mixamorig:LeftFoot".parse().expect("leg");
        assert_eq!(
            (leg.hip.as_str(), leg.ankle.as_str(), leg.toe),
            ("mixamorig:LeftUpLeg", "mixamorig:LeftFoot", None)
        );
        let leg: LegSpec = "h,k,a,t".parse().expect("leg");
        assert_eq!(leg.toe.as_deref(), Some("t"));
        assert_eq!(
            "h,k".parse::<LegSpec>().expect_err("two fields").to_string(),
            "--leg 'h,k': expected HIP,KNEE,ANKLE[,TOE], got 2 fields"
        );
        assert!("h,,a".parse::<LegSpec>().expect_err("empty").to_string().ends_with("the knee joint name is empty"));
    }

    #[test]
    fn humanoid_legs_by_name_and_the_pelvis_above_them() {
        // Mixamo names: hips 0, spine 1, left leg 2..5 (with a twist joint between knee and
        // foot), right leg 6..8 without toes.
        let names = [
            "mixamorig:Hips",
            "mixamorig:Spine",
            "mixamorig:LeftUpLeg",
            "mixamorig:LeftLeg",
            "twist",
            "mixamorig:LeftFoot",
            "mixamorig:LeftToeBase",
            "mixamorig:RightUpLeg",
            "mixamorig:RightLeg",
            "mixamorig:RightFoot",
        ];
        let parents = [-1, 0, 0, 2, 3, 4, 5, 0, 7, 8];
        let legs = humanoid_legs(&names, &parents);
        assert_eq!(
            legs,
            vec![Leg { hip: 2, knee: 3, ankle: 5, toe: Some(6) }, Leg { hip: 7, knee: 8, ankle: 9, toe: None }]
        );
        assert_eq!(pelvis(&names, &parents, &legs), Some(0));
        // The right foot hung under the left leg is no leg.
        let parents = [-1, 0, 0, 2, 3, 4, 5, 0, 7, 3];
        assert_eq!(humanoid_legs(&names, &parents).len(), 1);
        // Without humanoid hips, the nearest joint above both hips.
        let names = ["root", "pelvis_x", "l1", "l2", "l3", "r1", "r2", "r3"];
        let parents = [-1, 0, 1, 2, 3, 1, 5, 6];
        let legs = [Leg { hip: 2, knee: 3, ankle: 4, toe: None }, Leg { hip: 5, knee: 6, ankle: 7, toe: None }];
        assert!(humanoid_legs(&names, &parents).is_empty());
        assert_eq!(pelvis(&names, &parents, &legs), Some(1));
        assert_eq!(pelvis(&names, &parents, &legs[..1]), Some(1));
        let parents = [-1, 0, -1, 2, 3, 1, 5, 6];
        assert_eq!(pelvis(&names, &parents, &legs), None);
    }
}
