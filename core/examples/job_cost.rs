//! The instruction cost of the benchmark kit's skinning and blending workloads, on data of the
//! kit's shapes (`../shared/bench`: 67 joints, 3,934 vertices of 4 influences on a 54-matrix
//! palette, positions and normals), made up here so that the core alone builds it. `calls` runs
//! the chosen job [`CALLS`] times, which is what callgrind counts:
//!
//! ```sh
//! cargo build --release -p sinew --example job_cost
//! for s in skin skin_unit skin_tangents skin_dqs skin_dqs_scaled blend l2m palette foot \
//!     chain_fabrik chain_ccd chain_fabrik_limits chain_ccd_limits spring; do
//!   valgrind --tool=callgrind --toggle-collect='job_cost::calls' target/release/examples/job_cost $s
//! done
//! ```
//!
//! The default build runs the x86-64-v3 kernels where the CPU has them (run-time dispatch,
//! `sinew::kernels`); `SINEW_KERNELS=baseline` runs its own SSE2 kernels.
//!
//! `time [SECONDS] [STAGE]` (default 5 s, `skin`) instead times a skinning stage on the wall clock in batches of 100 calls
//! and prints the fastest batch and the quartiles in ns per vertex: on a shared machine whose
//! speed moves with its neighbours, the fastest batch is what the loop costs on a quiet core,
//! and the spread shows how far the neighbours move it
//! (`cargo run --release -p sinew --example job_cost -- time 5`).
//!
//! Instructions per vertex (`skin`, `skin_unit`) or per joint (`blend`) are callgrind's total
//! divided by `CALLS` × 3,934 or `CALLS` × 67. `skin` skins without renormalizing the normals
//! (`SkinningJob::run_unnormalized`, the kit's operation), `skin_unit` renormalizes them
//! (`SkinningJob::run`); `skin_tangents` adds tangents to `skin`; `skin_dqs` is dual-quaternion skinning of the palette's rigid parts
//! with weights as exporters write them (one to four influences of weight per vertex, the rest
//! zero); `skin_dqs_scaled` is the same with every joint's scale and shear
//! (`Palette::ScaledDualQuats`: the palette's matrices split by polar decomposition, each joint
//! scaled by 0.9 to 1.1 per axis); `blend` blends two poses with weights 0.3 and 0.7; `l2m`
//! computes the model matrices of 67 joints (per call); `palette` computes a 54-matrix skin
//! palette (`SkinMatrixJob`, per call; `time` gives ns per matrix); `foot` places the feet of
//! two legs for one frame (`FootPlacementJob`, per call, the animated pose copied in first);
//! `chain_fabrik` and `chain_ccd` solve a chain of 8 joints with 10 iterations (`IkChainJob`,
//! per call), `chain_fabrik_limits` and `chain_ccd_limits` the same with a swing cone on every
//! joint; `spring` steps 16 spring joints of four hair strands against three colliders
//! (`SpringBoneJob`, one 1/60 s step per call; `time SECONDS spring` gives ns per spring joint
//! per step).

use std::hint::black_box;
use std::time::Instant;

use sinew::job::foot::{FootLeg, FootPlacementJob, FootSettings, FootState, GroundPlane, LegState};
use sinew::job::ik::{ChainReport, ChainSolver, IkChainJob, JointLimit};
use sinew::job::spring::{
    ColliderShape, SpringBoneJob, SpringBones, SpringCollider, SpringJoint, SpringReport, SpringTail, NO_JOINT,
};
use sinew::job::{BlendingJob, JobError, Layer, Palette, SkinMatrixJob, SkinningJob};
use sinew::math::{DualQuat, Mat4, Quat, SoaTransform, SymMat3, Transform, Vec3, Vec4};

/// Job calls measured.
const CALLS: usize = 10;
/// Calls per timed batch of `time`.
const BATCH: usize = 100;
/// The kit's mesh: vertices, influences per vertex, palette matrices.
const VERTICES: usize = 3934;
const INFLUENCES: usize = 4;
const PALETTE: usize = 54;
/// The kit's skeleton: joints, and SoA elements of four joints.
const JOINTS: usize = 67;
const SOA: usize = JOINTS.div_ceil(4);

/// A xorshift generator of values in [-1, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
    fn vec3(&mut self) -> Vec3<f32> {
        Vec3::new(self.next(), self.next(), self.next())
    }
    fn transform(&mut self) -> Transform<f32> {
        let axis = Vec3::new(self.next(), self.next(), 1.0).normalize_or_zero();
        let scale = Vec3::ONE + self.vec3() * 0.1;
        Transform::new(self.vec3(), Quat::from_axis_angle(axis, self.next() * 3.0), scale)
    }
}

/// The kit's skinned mesh, made up: a palette, and per vertex a position, a normal and four
/// influences whose weights sum to 1.
struct Mesh {
    palette: Vec<Mat4<f32>>,
    /// The palette's rigid parts, for `skin_dqs`.
    dual_quats: Vec<DualQuat<f32>>,
    /// The palette split into rotation and translation, and scale and shear, for
    /// `skin_dqs_scaled`.
    scaled: (Vec<DualQuat<f32>>, Vec<SymMat3<f32>>),
    positions: Vec<Vec3<f32>>,
    normals: Vec<Vec3<f32>>,
    /// Tangents for `skin_tangents`: the normals, with w = 1.
    tangents: Vec<Vec4<f32>>,
    joints: Vec<u16>,
    weights: Vec<f32>,
}

impl Mesh {
    fn new(rng: &mut Rng) -> Self {
        let palette: Vec<Mat4<f32>> = (0..PALETTE).map(|_| rng.transform().to_mat4()).collect();
        let dual_quats = palette.iter().map(DualQuat::from_mat4_rigid).collect();
        let scaled = palette.iter().map(DualQuat::from_mat4_scaled).unzip();
        let positions = (0..VERTICES).map(|_| rng.vec3()).collect();
        let normals: Vec<Vec3<f32>> = (0..VERTICES).map(|_| rng.vec3().normalize_or_zero()).collect();
        let tangents = normals.iter().map(|n| n.extend(1.0)).collect();
        let joints =
            (0..VERTICES * INFLUENCES).map(|_| ((rng.next() + 1.0) * 0.5 * PALETTE as f32) as u16 % 54).collect();
        let weights = (0..VERTICES)
            .flat_map(|_| {
                let w: [f32; INFLUENCES] = core::array::from_fn(|_| rng.next().abs() + 0.01);
                let sum: f32 = w.iter().sum();
                w.map(|x| x / sum)
            })
            .collect();
        Mesh { palette, dual_quats, scaled, positions, normals, tangents, joints, weights }
    }

    /// The weights as exporters write them for `skin_dqs`: per vertex the first one to four
    /// influences (the count drawn at random) carry weight, the others are zero.
    fn exported_weights(&mut self, rng: &mut Rng) {
        for w in self.weights.chunks_exact_mut(INFLUENCES) {
            let used = 1 + ((rng.next() + 1.0) * 2.0) as usize % INFLUENCES;
            w.iter_mut().skip(used).for_each(|x| *x = 0.0);
            let sum: f32 = w.iter().sum();
            w.iter_mut().for_each(|x| *x /= sum);
        }
    }

    /// Skins the stage's streams into `out`.
    fn skin(&self, stage: Skin, out: &mut Outputs) -> Result<(), JobError> {
        let palette = match stage {
            Skin::Dqs => Palette::DualQuats(&self.dual_quats),
            Skin::DqsScaled => Palette::ScaledDualQuats { dual_quats: &self.scaled.0, scales: &self.scaled.1 },
            _ => Palette::Matrices(&self.palette),
        };
        let job =
            SkinningJob::new(palette, INFLUENCES, &self.joints, &self.weights, &self.positions, &mut out.positions)
                .with_normals(&self.normals, &mut out.normals);
        let mut job = if stage == Skin::Tangents { job.with_tangents(&self.tangents, &mut out.tangents) } else { job };
        let r = if stage == Skin::Lbs || stage == Skin::Tangents { job.run_unnormalized() } else { job.run() };
        black_box(out);
        r
    }
}

/// The skinning stages.
#[derive(Clone, Copy, PartialEq)]
enum Skin {
    /// `skin`: LBS of positions and normals, not renormalized.
    Lbs,
    /// `skin_unit`: LBS, normals renormalized.
    Unit,
    /// `skin_tangents`: LBS of positions, normals and tangents, not renormalized.
    Tangents,
    /// `skin_dqs`: DQS of positions and normals, weights as exporters write them.
    Dqs,
    /// `skin_dqs_scaled`: the same with every joint scaled.
    DqsScaled,
}

impl Skin {
    fn named(name: &str) -> Option<Self> {
        Some(match name {
            "skin" => Skin::Lbs,
            "skin_unit" => Skin::Unit,
            "skin_tangents" => Skin::Tangents,
            "skin_dqs" => Skin::Dqs,
            "skin_dqs_scaled" => Skin::DqsScaled,
            _ => return None,
        })
    }

    /// The stage's mesh.
    fn mesh(self, rng: &mut Rng) -> Mesh {
        let mut mesh = Mesh::new(rng);
        if self == Skin::Dqs || self == Skin::DqsScaled {
            mesh.exported_weights(rng);
        }
        mesh
    }
}

/// Skinned streams.
struct Outputs {
    positions: Vec<Vec3<f32>>,
    normals: Vec<Vec3<f32>>,
    tangents: Vec<Vec4<f32>>,
}

impl Outputs {
    fn new() -> Self {
        Outputs {
            positions: vec![Vec3::ZERO; VERTICES],
            normals: vec![Vec3::ZERO; VERTICES],
            tangents: vec![Vec4::ZERO; VERTICES],
        }
    }
}

/// The `l2m` workload: a skeleton of [`JOINTS`] joints whose parents come as a humanoid's do (a
/// spine, then chains each hanging off the joint before it, every sixth joint off the spine),
/// random rest transforms, and the model matrices it computes into.
type L2mData = (sinew::skeleton::Skeleton<f32, SOA>, Vec<Mat4<f32>>);
fn l2m_data(rng: &mut Rng) -> Result<L2mData, sinew::skeleton::SkeletonError> {
    let parents: Vec<i16> = (0..JOINTS as i16)
        .map(|j| match j {
            0 => sinew::skeleton::NO_PARENT,
            j if j % 6 == 0 => (j / 6) % 4,
            j => j - 1,
        })
        .collect();
    let rest: Vec<_> = (0..JOINTS).map(|_| rng.transform()).collect();
    let names: Vec<String> = (0..JOINTS).map(|j| format!("j{j}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let skeleton = sinew::skeleton::Skeleton::<f32, SOA>::new(&parents, &rest, &names)?;
    Ok((skeleton, vec![Mat4::IDENTITY; JOINTS]))
}

/// The `palette` workload: [`PALETTE`] skin matrices, each the model matrix of a skin joint
/// (the last [`PALETTE`] of [`JOINTS`] random rigid transforms) times a random inverse bind
/// matrix, and the palette they are computed into.
type PaletteData = (Vec<Mat4<f32>>, Vec<Mat4<f32>>, Vec<u16>, Vec<Mat4<f32>>);
fn palette_data(rng: &mut Rng) -> PaletteData {
    let model: Vec<Mat4<f32>> = (0..JOINTS).map(|_| rng.transform().to_mat4()).collect();
    let inverse_bind: Vec<Mat4<f32>> = (0..PALETTE).map(|_| rng.transform().to_mat4()).collect();
    let joints: Vec<u16> = (JOINTS - PALETTE..JOINTS).map(|j| j as u16).collect();
    (model, inverse_bind, joints, vec![Mat4::IDENTITY; PALETTE])
}

/// Joints of the `foot` workload's rig.
const FOOT_JOINTS: usize = 10;

/// The `foot` workload: a root, a pelvis and two legs of hip, knee, ankle and toe (thighs 0.42,
/// shins 0.40, knees bent by 0.25 rad, feet level), standing on a plane that slopes 10°
/// sideways (the feet at different heights and tilted, the toes asked too), the stage's state
/// after one settled frame, and the animated pose and model matrices each call starts from.
struct Foot {
    skeleton: sinew::skeleton::Skeleton<f32, 3>,
    legs: [FootLeg<f32>; 2],
    state: FootState<f32>,
    leg_states: [LegState<f32>; 2],
    ground: GroundPlane<f32>,
    pose: [SoaTransform<f32>; 3],
    model: [Mat4<f32>; FOOT_JOINTS],
}

impl Foot {
    fn new() -> Result<Self, Box<dyn std::error::Error>> {
        let t = |x: f32, y: f32, z: f32, bend: f32| {
            Transform::new(Vec3::new(x, y, z), Quat::from_axis_angle(Vec3::X, bend), Vec3::ONE)
        };
        let mut rest = vec![t(0.0, 0.0, 0.0, 0.0), t(0.0, 0.93, 0.0, 0.0)];
        for side in [1.0, -1.0] {
            rest.extend([t(0.1 * side, -0.05, 0.0, -0.25), t(0.0, -0.42, 0.0, 0.5), t(0.0, -0.4, 0.0, -0.25)]);
            rest.push(t(0.0, -0.05, 0.13, 0.0));
        }
        let parents = [sinew::skeleton::NO_PARENT, 0, 1, 2, 3, 4, 1, 6, 7, 8];
        let names = ["root", "pelvis", "l_hip", "l_knee", "l_ankle", "l_toe", "r_hip", "r_knee", "r_ankle", "r_toe"];
        let skeleton = sinew::skeleton::Skeleton::<f32, 3>::new(&parents, &rest, &names)?;
        let mut pose = [SoaTransform::IDENTITY; 3];
        pose.copy_from_slice(skeleton.rest_pose());
        let mut model = [Mat4::IDENTITY; FOOT_JOINTS];
        sinew::job::LocalToModelJob::new(skeleton.view(), &pose, &mut model).run()?;
        let leg = |hip: usize| FootLeg {
            hip,
            knee: hip + 1,
            ankle: hip + 2,
            toe: Some(hip + 3),
            standing_height: model[hip + 2].translation().y,
        };
        let tilt = 10f32.to_radians();
        let mut foot = Foot {
            legs: [leg(2), leg(6)],
            state: FootState::new(true),
            leg_states: [LegState::new(); 2],
            ground: GroundPlane { height: 0.0, normal: Vec3::new(-tilt.sin(), tilt.cos(), 0.0) },
            pose,
            model,
            skeleton,
        };
        let (mut pose, mut model) = (foot.pose, foot.model);
        foot.run(&mut pose, &mut model)?;
        Ok(foot)
    }

    /// One frame of the stage on `pose` and `model`.
    fn run(&mut self, pose: &mut [SoaTransform<f32>], model: &mut [Mat4<f32>]) -> Result<(), JobError> {
        // ANCHOR: foot
        FootPlacementJob {
            skeleton: self.skeleton.view(),
            pelvis: 1,
            legs: &self.legs,
            settings: FootSettings::new(),
            state: &mut self.state,
            leg_states: &mut self.leg_states,
            world: Mat4::IDENTITY,
            dt: 1.0 / 60.0,
            pose,
            model,
            ground: &mut self.ground,
        }
        .run()
        // ANCHOR_END: foot
    }
}

/// Joints of the `chain_*` workloads' chain, the end effector included.
const CHAIN_JOINTS: usize = 8;

/// The `chain_*` workloads: a chain of 8 joints 0.3 apart, each turned 0.2 rad about Z from
/// its parent (a curl), its model matrices, and a target within reach that 10 iterations do
/// not hit exactly (tolerance 0: every call runs all 10); with limits, a swing cone of 0.6 rad
/// about each bone with a twist range of ±0.3 rad.
struct Chain {
    skeleton: sinew::skeleton::Skeleton<f32, 2>,
    model: [Mat4<f32>; CHAIN_JOINTS],
    joints: [u16; CHAIN_JOINTS],
    limits: Vec<JointLimit<f32>>,
    positions: [Vec3<f32>; CHAIN_JOINTS],
    corrections: [Quat<f32>; CHAIN_JOINTS - 1],
}

impl Chain {
    fn new(limited: bool) -> Result<Self, Box<dyn std::error::Error>> {
        let bone = Transform::new(Vec3::new(0.3, 0.0, 0.0), Quat::from_axis_angle(Vec3::Z, 0.2), Vec3::ONE);
        let mut rest = [bone; CHAIN_JOINTS];
        rest[0] = Transform::IDENTITY;
        let parents: [i16; CHAIN_JOINTS] = core::array::from_fn(|j| j as i16 - 1);
        let names: [String; CHAIN_JOINTS] = core::array::from_fn(|j| format!("j{j}"));
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let skeleton = sinew::skeleton::Skeleton::<f32, 2>::new(&parents, &rest, &names)?;
        let mut model = [Mat4::IDENTITY; CHAIN_JOINTS];
        sinew::job::LocalToModelJob::new(skeleton.view(), skeleton.rest_pose(), &mut model).run()?;
        let cone = JointLimit::Cone { twist_axis: Vec3::X, swing: 0.6, twist_min: -0.3, twist_max: 0.3 };
        Ok(Chain {
            skeleton,
            model,
            joints: core::array::from_fn(|j| j as u16),
            limits: if limited { vec![cone; CHAIN_JOINTS - 1] } else { Vec::new() },
            positions: [Vec3::ZERO; CHAIN_JOINTS],
            corrections: [Quat::IDENTITY; CHAIN_JOINTS - 1],
        })
    }

    /// One solve.
    fn run(&mut self, solver: ChainSolver) -> Result<ChainReport<f32>, JobError> {
        // ANCHOR: chain
        IkChainJob {
            solver,
            skeleton: self.skeleton.view(),
            models: &self.model, // the pose's model matrices
            chain: &self.joints, // j0 … jn, each the parent of the next
            target: Vec3::new(0.9, 1.2, 0.5),
            tolerance: 0.0,     // stop within this distance…
            max_iterations: 10, // …or after this many iterations
            weight: 1.0,
            limits: &self.limits, // empty, or one per joint but the end effector
            pole: None,
            positions: &mut self.positions,     // scratch: one per joint
            corrections: &mut self.corrections, // out: one per joint but the end effector
        }
        .run()
        // ANCHOR_END: chain
    }
}

/// Hair strands of the `spring` workload, and nodes per strand (the last one a tail only).
const STRANDS: usize = 4;
const STRAND_NODES: usize = 5;
/// The `spring` workload's joints: a root, a neck, a head, and the strands.
const SPRING_NODES: usize = 3 + STRANDS * STRAND_NODES;
/// Its spring joints: every strand node with a child.
const SPRING_JOINTS: usize = STRANDS * (STRAND_NODES - 1);

/// The `spring` workload: a head on a neck with four hair strands of five nodes 0.06 apart
/// hanging from it (16 spring joints with stiffness, gravity and drag), each joint tested
/// against three colliders (a sphere on the head, a capsule along the neck, an inside sphere
/// about the head that keeps the strands near it), the world swaying from call to call so
/// that the strands swing and touch the colliders; the animated pose and its model matrices
/// are copied in before each step, as a frame's stage finds them.
struct Spring {
    skeleton: sinew::skeleton::Skeleton<f32, { SPRING_NODES.div_ceil(4) }>,
    joints: [SpringJoint<f32>; SPRING_JOINTS],
    colliders: [SpringCollider<f32>; 3],
    joint_colliders: [u16; 3],
    tails: [SpringTail<f32>; SPRING_JOINTS],
    pose: [SoaTransform<f32>; SPRING_NODES.div_ceil(4)],
    model: [Mat4<f32>; SPRING_NODES],
    /// Steps run, which moves the world.
    steps: u32,
}

impl Spring {
    fn new() -> Result<Self, Box<dyn std::error::Error>> {
        let at = |x: f32, y: f32, z: f32| Transform::new(Vec3::new(x, y, z), Quat::IDENTITY, Vec3::ONE);
        let mut rest = vec![at(0.0, 0.0, 0.0), at(0.0, 1.5, 0.0), at(0.0, 0.12, 0.0)];
        let mut parents = vec![sinew::skeleton::NO_PARENT, 0, 1];
        for s in 0..STRANDS {
            let angle = s as f32 * core::f32::consts::TAU / STRANDS as f32;
            for n in 0..STRAND_NODES {
                parents.push(if n == 0 { 2 } else { (parents.len() - 1) as i16 });
                rest.push(if n == 0 { at(0.09 * angle.cos(), 0.05, 0.09 * angle.sin()) } else { at(0.0, -0.06, 0.0) });
            }
        }
        let names: Vec<String> = (0..SPRING_NODES).map(|j| format!("j{j}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let skeleton = sinew::skeleton::Skeleton::new(&parents, &rest, &names)?;
        let mut pose = [SoaTransform::IDENTITY; SPRING_NODES.div_ceil(4)];
        pose.copy_from_slice(skeleton.rest_pose());
        let mut model = [Mat4::IDENTITY; SPRING_NODES];
        sinew::job::LocalToModelJob::new(skeleton.view(), &pose, &mut model).run()?;
        let joints = core::array::from_fn(|i| {
            let joint = (3 + (i / (STRAND_NODES - 1)) * STRAND_NODES + i % (STRAND_NODES - 1)) as u16;
            SpringJoint {
                joint,
                child: joint + 1,
                tail: Vec3::new(0.0, -0.06, 0.0),
                hit_radius: 0.02,
                stiffness: 1.0,
                gravity_power: 1.0,
                gravity_dir: Vec3::new(0.0, -1.0, 0.0),
                drag_force: 0.4,
                center: NO_JOINT,
                colliders_start: 0,
                colliders_len: 3,
            }
        });
        let colliders = [
            SpringCollider {
                joint: 2,
                shape: ColliderShape::Sphere { offset: Vec3::ZERO, radius: 0.1, inside: false },
            },
            SpringCollider {
                joint: 1,
                shape: ColliderShape::Capsule {
                    offset: Vec3::ZERO,
                    tail: Vec3::new(0.0, 0.1, 0.0),
                    radius: 0.06,
                    inside: false,
                },
            },
            SpringCollider {
                joint: 2,
                shape: ColliderShape::Sphere { offset: Vec3::ZERO, radius: 0.35, inside: true },
            },
        ];
        let mut spring = Spring {
            skeleton,
            joints,
            colliders,
            joint_colliders: [0, 1, 2],
            tails: [SpringTail::default(); SPRING_JOINTS],
            pose,
            model,
            steps: 0,
        };
        let (mut pose, mut model) = (spring.pose, spring.model);
        spring.run(&mut pose, &mut model, true)?;
        // A second of swaying before the measured steps.
        for _ in 0..60 {
            let (mut pose, mut model) = (spring.pose, spring.model);
            spring.run(&mut pose, &mut model, false)?;
        }
        Ok(spring)
    }

    /// One step of 1/60 s (or the reset) on `pose` and `model`, the world moved on.
    fn run(
        &mut self,
        pose: &mut [SoaTransform<f32>],
        model: &mut [Mat4<f32>],
        reset: bool,
    ) -> Result<SpringReport, JobError> {
        self.steps += 1;
        let t = self.steps as f32 / 60.0;
        let world = Mat4::from_trs(
            Vec3::new(0.3 * (t * 3.1).sin(), 0.0, 0.15 * (t * 5.0).sin()),
            Quat::from_axis_angle(Vec3::Y, 0.6 * (t * 1.9).sin()),
            Vec3::ONE,
        );
        // ANCHOR: spring
        let mut job = SpringBoneJob {
            skeleton: self.skeleton.view(),
            springs: SpringBones {
                joints: &self.joints,                   // in run order, parents first
                colliders: &self.colliders,             // shapes on joints
                joint_colliders: &self.joint_colliders, // each joint's colliders
            },
            world,                  // model to world this frame
            locals: pose,           // the animated pose, spring rotations written
            models: model,          // its model matrices, kept up to date
            tails: &mut self.tails, // state kept between frames
        };
        if reset {
            job.reset()
        } else {
            job.step(1.0 / 60.0)
        }
        // ANCHOR_END: spring
    }
}

/// The stage's job, [`CALLS`] times.
#[inline(never)]
fn calls(mut job: impl FnMut()) {
    for _ in 0..CALLS {
        job();
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let stage = std::env::args().nth(1).unwrap_or_else(|| "skin".into());
    // Which kernels the jobs run is decided once per process (CPU detection, the environment):
    // decided here, before the measured calls, and said on standard error.
    eprintln!("kernels: {:?}", sinew::kernels::active());
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    match stage.as_str() {
        "time" => {
            let seconds: f64 = std::env::args().nth(2).map(|s| s.parse()).transpose()?.unwrap_or(5.0);
            let name = std::env::args().nth(3).unwrap_or_else(|| "skin".into());
            let (mut batch, unit): (Box<dyn FnMut() -> Result<(), JobError>>, _) = if name == "l2m" {
                let (skeleton, mut out) = l2m_data(&mut rng)?;
                let job = move || {
                    for _ in 0..BATCH {
                        sinew::job::LocalToModelJob::new(skeleton.view(), skeleton.rest_pose(), &mut out).run()?;
                        black_box(&out);
                    }
                    Ok(())
                };
                (Box::new(job), "joint")
            } else if name == "palette" {
                let (model, ib, joints, mut out) = palette_data(&mut rng);
                let job = move || {
                    for _ in 0..BATCH {
                        SkinMatrixJob::new(&model, &ib, &mut out).with_joints(&joints).run()?;
                        black_box(&out);
                    }
                    Ok(())
                };
                (Box::new(job), "matrix")
            } else if name == "spring" {
                let mut spring = Spring::new()?;
                let job = move || {
                    for _ in 0..BATCH {
                        let (mut pose, mut model) = (spring.pose, spring.model);
                        spring.run(&mut pose, &mut model, false)?;
                        black_box(&model);
                    }
                    Ok(())
                };
                (Box::new(job), "spring joint")
            } else {
                let skin = Skin::named(&name).ok_or_else(|| format!("unknown stage {name}"))?;
                let mesh = skin.mesh(&mut rng);
                let mut out = Outputs::new();
                let job = move || {
                    for _ in 0..BATCH {
                        mesh.skin(skin, &mut out)?;
                    }
                    Ok(())
                };
                (Box::new(job), "vertex")
            };
            let per = match unit {
                "joint" => JOINTS,
                "matrix" => PALETTE,
                "spring joint" => SPRING_JOINTS,
                _ => VERTICES,
            };
            let start = Instant::now();
            let mut batches = Vec::new();
            while start.elapsed().as_secs_f64() < seconds || batches.is_empty() {
                let t = Instant::now();
                batch()?;
                batches.push(t.elapsed().as_secs_f64() * 1e9 / (BATCH * per) as f64);
            }
            batches.sort_by(f64::total_cmp);
            let q = |f: usize| batches[(batches.len() - 1) * f / 4];
            println!(
                "{name}, ns per {unit} over {} batches of {BATCH} calls: fastest {:.2}, quartiles {:.2} {:.2} {:.2}",
                batches.len(),
                q(0),
                q(1),
                q(2),
                q(3)
            );
        }
        "l2m" => {
            let (skeleton, mut out) = l2m_data(&mut rng)?;
            let mut err = Ok(());
            calls(|| {
                err = sinew::job::LocalToModelJob::new(skeleton.view(), skeleton.rest_pose(), &mut out).run();
                black_box(&out);
            });
            err?;
        }
        "palette" => {
            let (model, ib, joints, mut out) = palette_data(&mut rng);
            let mut err = Ok(());
            calls(|| {
                err = SkinMatrixJob::new(&model, &ib, &mut out).with_joints(&joints).run();
                black_box(&out);
            });
            err?;
        }
        "foot" => {
            let mut foot = Foot::new()?;
            let mut err = Ok(());
            calls(|| {
                let (mut pose, mut model) = (foot.pose, foot.model);
                err = foot.run(&mut pose, &mut model);
                black_box(&model);
            });
            err?;
        }
        chain if chain.starts_with("chain_") => {
            let (solver, limited) = match chain {
                "chain_fabrik" => (ChainSolver::Fabrik, false),
                "chain_ccd" => (ChainSolver::Ccd, false),
                "chain_fabrik_limits" => (ChainSolver::Fabrik, true),
                "chain_ccd_limits" => (ChainSolver::Ccd, true),
                _ => return Err(format!("unknown stage {chain}").into()),
            };
            let mut chain = Chain::new(limited)?;
            let mut report = Ok(None);
            calls(|| {
                report = chain.run(solver).map(Some);
                black_box(&chain.corrections);
            });
            if let Some(r) = report? {
                eprintln!("{} iterations, {:.2e} from the target", r.iterations, r.distance);
            }
        }
        "spring" => {
            let mut spring = Spring::new()?;
            let mut report = Ok(SpringReport::default());
            let mut contacts = 0;
            calls(|| {
                let (mut pose, mut model) = (spring.pose, spring.model);
                report = spring.run(&mut pose, &mut model, false);
                contacts += report.as_ref().map_or(0, |r| r.contacts);
                black_box(&model);
            });
            report?;
            eprintln!("{contacts} contacts in {CALLS} steps of {SPRING_JOINTS} joints");
        }
        "blend" => {
            let pose = |rng: &mut Rng| -> Vec<SoaTransform<f32>> {
                (0..SOA).map(|_| SoaTransform::from_transforms(core::array::from_fn(|_| rng.transform()))).collect()
            };
            let (a, b, rest) = (pose(&mut rng), pose(&mut rng), pose(&mut rng));
            let mut out = vec![SoaTransform::IDENTITY; SOA];
            let mut err = Ok(());
            calls(|| {
                let layers = [Layer::new(&a, 0.3), Layer::new(&b, 0.7)];
                err =
                    BlendingJob { layers: &layers, additive: &[], rest_pose: &rest, threshold: 0.1, output: &mut out }
                        .run();
                black_box(&out);
            });
            err?;
        }
        other => {
            let skin = Skin::named(other).ok_or_else(|| {
                format!(
                    "unknown stage {other}: skin, skin_unit, skin_tangents, skin_dqs, skin_dqs_scaled, blend, l2m, palette, foot, chain_fabrik, chain_ccd, chain_fabrik_limits, chain_ccd_limits, spring or time"
                )
            })?;
            let mesh = skin.mesh(&mut rng);
            let mut out = Outputs::new();
            let mut err = Ok(());
            calls(|| err = mesh.skin(skin, &mut out));
            err?;
        }
    }
    Ok(())
}
