//! Chain IK as a stage of a character ([`Character::set_chain_ik`](super::Character::set_chain_ik)):
//! the core's [`IkChainJob`] for each of the caller's chains ([`IkChain`]), after foot
//! placement, towards targets the caller moves between frames
//! ([`Character::chain_ik_mut`](super::Character::chain_ik_mut)).
//!
//! The character holds the stage as a trait object that only `set_chain_ik` makes: a program
//! that never sets chains (the browser module) links no chain solver.

use alloc::vec::Vec;

use sinew::job::ik::{apply_chain_corrections, ChainReport, ChainSolver, IkChainJob, JointLimit};
use sinew::job::{JobError, LocalToModelJob};
use sinew::math::{Mat4, Quat, SoaTransform, Vec3};
use sinew::skeleton::SkeletonView;

/// One chain the stage solves: joints `j0 … jn` (each the parent of the next; `jn` the end
/// effector) reaching for `target`, with the core's solver settings (see [`IkChainJob`]).
#[derive(Debug, Clone, PartialEq)]
pub struct IkChain {
    /// The chain's joints, from its root to the end effector: at least 2.
    pub joints: Vec<u16>,
    /// The end effector's target, model space.
    pub target: Vec3<f32>,
    /// FABRIK or CCD.
    pub solver: ChainSolver,
    /// The solve stops once the end effector is this close to the target, model units.
    pub tolerance: f32,
    /// The most iterations a solve runs.
    pub max_iterations: u32,
    /// Blend of the solution with the pose, 0 to 1.
    pub weight: f32,
    /// One limit per joint but the end effector, or none.
    pub limits: Vec<JointLimit<f32>>,
    /// A position, model space, that the chain's interior joints turn towards.
    pub pole: Option<Vec3<f32>>,
}

impl IkChain {
    /// The joints of `skeleton` from `from` down to `to` reaching for `target` by FABRIK, at
    /// most 20 iterations to a tolerance of 1e-4, at full weight, without limits or pole;
    /// `None` unless `to` is below `from`.
    #[must_use]
    pub fn between(skeleton: SkeletonView<'_, f32>, from: usize, to: usize, target: Vec3<f32>) -> Option<IkChain> {
        let mut joints = Vec::new();
        let mut at = to;
        while at != from {
            joints.push(u16::try_from(at).ok()?);
            at = skeleton.parent(at)?;
        }
        joints.push(u16::try_from(from).ok()?);
        joints.reverse();
        Some(IkChain {
            joints,
            target,
            solver: ChainSolver::Fabrik,
            tolerance: 1.0e-4,
            max_iterations: 20,
            weight: 1.0,
            limits: Vec::new(),
            pole: None,
        })
    }
}

/// The stage as the character calls it.
pub(super) trait PoseStage {
    /// The chains, for the caller to move their targets.
    fn chains(&mut self) -> &mut [IkChain];
    /// What each chain's last solve reached.
    fn reports(&self) -> &[ChainReport<f32>];
    /// Checks every chain against `skeleton` and the model matrices `model`.
    fn validate(&mut self, skeleton: SkeletonView<'_, f32>, model: &[Mat4<f32>]) -> Result<(), JobError>;
    /// Solves each chain in turn on `pose` and its model matrices `model`, correcting both.
    fn run(
        &mut self,
        skeleton: SkeletonView<'_, f32>,
        pose: &mut [SoaTransform<f32>],
        model: &mut [Mat4<f32>],
    ) -> Result<(), JobError>;
}

/// The chains and the solver's buffers.
pub(super) struct Chains {
    chains: Vec<IkChain>,
    reports: Vec<ChainReport<f32>>,
    positions: Vec<Vec3<f32>>,
    corrections: Vec<Quat<f32>>,
}

impl Chains {
    /// The stage for `chains`.
    pub(super) fn new(chains: Vec<IkChain>) -> Chains {
        Chains { chains, reports: Vec::new(), positions: Vec::new(), corrections: Vec::new() }
    }

    /// The job for chain `c` on `model`, its buffers sized.
    fn job<'a>(
        c: &'a IkChain,
        positions: &'a mut Vec<Vec3<f32>>,
        corrections: &'a mut Vec<Quat<f32>>,
        skeleton: SkeletonView<'a, f32>,
        model: &'a [Mat4<f32>],
    ) -> IkChainJob<'a, f32> {
        positions.resize(c.joints.len(), Vec3::ZERO);
        corrections.resize(c.joints.len().saturating_sub(1), Quat::IDENTITY);
        IkChainJob {
            solver: c.solver,
            skeleton,
            models: model,
            chain: &c.joints,
            target: c.target,
            tolerance: c.tolerance,
            max_iterations: c.max_iterations,
            weight: c.weight,
            limits: &c.limits,
            pole: c.pole,
            positions,
            corrections,
        }
    }
}

impl PoseStage for Chains {
    fn chains(&mut self) -> &mut [IkChain] {
        &mut self.chains
    }

    fn reports(&self) -> &[ChainReport<f32>] {
        &self.reports
    }

    fn validate(&mut self, skeleton: SkeletonView<'_, f32>, model: &[Mat4<f32>]) -> Result<(), JobError> {
        for c in &self.chains {
            Self::job(c, &mut self.positions, &mut self.corrections, skeleton, model).validate()?;
        }
        Ok(())
    }

    fn run(
        &mut self,
        skeleton: SkeletonView<'_, f32>,
        pose: &mut [SoaTransform<f32>],
        model: &mut [Mat4<f32>],
    ) -> Result<(), JobError> {
        self.reports.clear();
        for c in &self.chains {
            let report = Self::job(c, &mut self.positions, &mut self.corrections, skeleton, model).run()?;
            apply_chain_corrections(pose, &c.joints, &self.corrections)?;
            let from = c.joints.first().map(|&j| usize::from(j));
            LocalToModelJob { skeleton, root: None, input: pose, output: model, from, to: None }.run()?;
            self.reports.push(report);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
