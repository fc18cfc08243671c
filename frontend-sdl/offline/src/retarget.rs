//! Retargeting between two loaded [`Model`]s: which target joint follows which source joint
//! (an explicit [`JointMap`] or the automatic humanoid mapping of [`humanoid`]), and
//! [`Retarget`], which turns a source local pose into the target's local pose with the core's
//! [`RetargetJob`] (see [`sinew::job::retarget`] for the method).
//!
//! # Map files
//!
//! One `TARGET = SOURCE` per line (target joint name, source joint name; names are trimmed and
//! may contain spaces), `#` starts a comment, blank lines are skipped, and an optional directive
//! line `@hips TARGET` names the target's hips (the joint whose displacement follows the
//! source's). Without it the hips are the mapped skin joint nearest the root.
//!
//! # Automatic mapping
//!
//! Without a map, each skeleton's joint names are canonicalized to one humanoid bone set (the
//! VRM humanoid names) from the namings exporters use: Mixamo (`mixamorig:Hips`, with the
//! prefixes `mixamorig:`, `mixamorig1:`, `mixamorig_` or none), VRM and the Unreal mannequin
//! (`pelvis`, `spine_01`, ...). A target joint follows the source joint of the same humanoid
//! bone, else the source joint of exactly the same name. The hips are the joint called so by a
//! humanoid naming, else the mapped skin joint nearest the root.
//!
//! Joints above the target skin's root joint (an armature node, say) are never mapped: they
//! keep their rest transforms.

mod clips;
pub mod humanoid;

pub use clips::{retarget_clips, ResampleOptions, RetargetClipsError};

use std::fmt;

use sinew::clip::RotationInterpolation;
use sinew::job::retarget::{world_rotations, NO_SOURCE};
use sinew::job::{JobError, RetargetJob, RetargetJoint, RetargetRoot};
use sinew::math::{Mat4, Quat, SoaTransform};

use crate::model::Model;

/// An explicit joint map: target joint names to source joint names, with an optional hips.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JointMap {
    /// `(target, source)` joint name pairs, in file order; each target at most once.
    pub pairs: Vec<(String, String)>,
    /// The target's hips joint (`@hips`), when named.
    pub hips: Option<String>,
}

/// Why a map file could not be parsed (line numbers from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapParseError {
    /// A line that is neither `TARGET = SOURCE`, a directive, a comment nor blank.
    MissingEquals {
        /// The line number.
        line: usize,
    },
    /// A `TARGET = SOURCE` line with an empty name on one side.
    EmptyName {
        /// The line number.
        line: usize,
    },
    /// A target joint mapped twice.
    DuplicateTarget {
        /// The line number of the second mapping.
        line: usize,
        /// The target joint.
        name: String,
    },
    /// A directive other than `@hips NAME`, or `@hips` without a name.
    BadDirective {
        /// The line number.
        line: usize,
    },
    /// A second `@hips` line.
    DuplicateHips {
        /// The line number of the second one.
        line: usize,
    },
}

impl fmt::Display for MapParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingEquals { line } => write!(f, "line {line}: expected 'TARGET = SOURCE'"),
            Self::EmptyName { line } => write!(f, "line {line}: empty joint name"),
            Self::DuplicateTarget { line, name } => write!(f, "line {line}: target joint '{name}' is mapped twice"),
            Self::BadDirective { line } => write!(f, "line {line}: expected '@hips TARGET_JOINT'"),
            Self::DuplicateHips { line } => write!(f, "line {line}: a second '@hips' line"),
        }
    }
}

impl std::error::Error for MapParseError {}

impl JointMap {
    /// Parses a map file's text (see the [module documentation](self)).
    ///
    /// # Errors
    ///
    /// A [`MapParseError`] naming the first bad line.
    pub fn parse(text: &str) -> Result<JointMap, MapParseError> {
        let mut map = JointMap::default();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            if let Some(rest) = content.strip_prefix('@') {
                let (word, arg) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let arg = arg.trim();
                if word != "hips" || arg.is_empty() {
                    return Err(MapParseError::BadDirective { line });
                }
                if map.hips.is_some() {
                    return Err(MapParseError::DuplicateHips { line });
                }
                map.hips = Some(arg.to_string());
                continue;
            }
            let (t, s) = content.split_once('=').ok_or(MapParseError::MissingEquals { line })?;
            let (t, s) = (t.trim(), s.trim());
            if t.is_empty() || s.is_empty() {
                return Err(MapParseError::EmptyName { line });
            }
            if map.pairs.iter().any(|(pt, _)| pt == t) {
                return Err(MapParseError::DuplicateTarget { line, name: t.to_string() });
            }
            map.pairs.push((t.to_string(), s.to_string()));
        }
        Ok(map)
    }
}

/// How the hips move.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RetargetOptions {
    /// The factor on the hips' displacement; `None`: the ratio of the hips' rest heights
    /// (target over source), a height at or below 0 at rest taken where the model's first
    /// clip starts.
    pub scale: Option<f32>,
    /// Drop the horizontal part of the hips' displacement.
    pub in_place: bool,
}

/// Which model a [`RetargetError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The source model.
    Source,
    /// The target model.
    Target,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Source => "source",
            Side::Target => "target",
        })
    }
}

/// Why a retarget could not be set up or run.
#[derive(Debug, Clone, PartialEq)]
pub enum RetargetError {
    /// The map names a joint the model does not have.
    UnknownJoint {
        /// Which model.
        side: Side,
        /// The name.
        name: String,
    },
    /// The map maps a target joint above the target skin's root joint.
    AboveSkinRoot {
        /// The target joint.
        name: String,
    },
    /// No target joint follows a source joint.
    NoJointInCommon,
    /// The hips (named by `@hips`) follow no source joint.
    HipsUnmapped {
        /// The target's hips joint.
        name: String,
    },
    /// A hips joint's rest height (world Y) is not above 0, so the heights give no scale.
    HipsHeight {
        /// Which model.
        side: Side,
        /// The hips joint.
        name: String,
        /// Its rest world Y.
        height: f32,
    },
    /// The scale is not finite.
    InvalidScale,
    /// The source pose does not fit the source skeleton, or a rest pose could not be inverted.
    Job(JobError),
}

impl fmt::Display for RetargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownJoint { side, name } => write!(f, "the {side} has no joint named '{name}'"),
            Self::AboveSkinRoot { name } => {
                write!(f, "target joint '{name}' is above the skin's root joint and cannot be mapped")
            }
            Self::NoJointInCommon => f.write_str("no joint in common: no target joint maps to a source joint"),
            Self::HipsUnmapped { name } => write!(f, "the hips '{name}' are not mapped to a source joint"),
            Self::HipsHeight { side, name, height } => {
                write!(f, "the {side} hips '{name}' are at height {height} at rest (must be above 0; give a scale)")
            }
            Self::InvalidScale => f.write_str("the retarget scale must be finite"),
            Self::Job(e) => write!(f, "retargeting failed: {e}"),
        }
    }
}

impl std::error::Error for RetargetError {}

impl From<JobError> for RetargetError {
    fn from(e: JobError) -> Self {
        RetargetError::Job(e)
    }
}

/// A source model's poses turned into a target model's (see the [module documentation](self)).
#[derive(Debug)]
pub struct Retarget<'a> {
    source: &'a Model,
    target: &'a Model,
    sources: Vec<Option<usize>>,
    hips: usize,
    source_hips: usize,
    joints: Vec<RetargetJoint<f32>>,
    root: RetargetRoot<f32>,
}

/// The rest pose's model matrices of a model.
fn rest_model(model: &Model) -> Result<Vec<Mat4<f32>>, JobError> {
    let mut out = Vec::new();
    model.world(model.skeleton().rest_pose(), &mut out)?;
    Ok(out)
}

/// Depth of each joint (roots 0).
/// `rest` (the model's rest-pose model matrices), or where its first clip starts when the
/// rest pose has joint `hips` at or below height 0 and the clip lifts it above.
fn standing(model: &Model, rest: &[Mat4<f32>], hips: usize) -> Result<Vec<Mat4<f32>>, JobError> {
    let height = |m: &[Mat4<f32>]| m.get(hips).map_or(0.0, |m| m.translation().y);
    if height(rest) > 0.0 || model.asset().num_clips() == 0 {
        return Ok(rest.to_vec());
    }
    let start = model.asset().clip(0).map_or(0.0, |c| c.start());
    let (mut cursor, mut pose, mut world) = (Vec::new(), Vec::new(), Vec::new());
    model.sample(Some(0), start, RotationInterpolation::NlerpCorrected, &mut cursor, &mut pose)?;
    model.world(&pose, &mut world)?;
    Ok(if height(&world) > 0.0 { world } else { rest.to_vec() })
}

fn depths(parents: &[i16]) -> Vec<usize> {
    let mut d: Vec<usize> = Vec::with_capacity(parents.len());
    for &p in parents {
        let v = usize::try_from(p).ok().and_then(|p| d.get(p)).map_or(0, |x| x + 1);
        d.push(v);
    }
    d
}

/// Which target joints may be mapped: all but the strict ancestors of the skin's root joint
/// (the lowest common ancestor of skin 0's joints; every joint when there is no skin).
fn mappable(model: &Model) -> Vec<bool> {
    let view = model.skeleton();
    let n = view.num_joints();
    let mut ok = vec![true; n];
    let skin: Vec<usize> =
        model.skin_bind(0).map(|(j, _)| j.iter().map(|&x| usize::from(x)).collect()).unwrap_or_default();
    let Some(&first) = skin.first() else { return ok };
    // Lowest common ancestor: walk up from the first skin joint until every skin joint is in
    // its subtree.
    let mut root = Some(first);
    while let Some(r) = root {
        if skin.iter().all(|&j| view.is_in_subtree(j, r)) {
            break;
        }
        root = view.parent(r);
    }
    let Some(root) = root else { return ok };
    let mut a = view.parent(root);
    while let Some(p) = a {
        if let Some(o) = ok.get_mut(p) {
            *o = false;
        }
        a = view.parent(p);
    }
    ok
}

/// Per target joint, the source joint it follows, and the target hips when a naming or the map
/// names them.
fn build_map(
    source: &Model,
    target: &Model,
    map: Option<&JointMap>,
    mappable: &[bool],
) -> Result<(Vec<Option<usize>>, Option<usize>), RetargetError> {
    let (sv, tv) = (source.skeleton(), target.skeleton());
    let n = tv.num_joints();
    let mut sources = vec![None; n];
    match map {
        Some(map) => {
            for (t, s) in &map.pairs {
                let k =
                    tv.find(t).ok_or_else(|| RetargetError::UnknownJoint { side: Side::Target, name: t.clone() })?;
                let j =
                    sv.find(s).ok_or_else(|| RetargetError::UnknownJoint { side: Side::Source, name: s.clone() })?;
                if !mappable.get(k).copied().unwrap_or(false) {
                    return Err(RetargetError::AboveSkinRoot { name: t.clone() });
                }
                if let Some(e) = sources.get_mut(k) {
                    *e = Some(j);
                }
            }
            let hips = match &map.hips {
                Some(h) => {
                    let k = tv
                        .find(h)
                        .ok_or_else(|| RetargetError::UnknownJoint { side: Side::Target, name: h.clone() })?;
                    if sources.get(k).copied().flatten().is_none() {
                        return Err(RetargetError::HipsUnmapped { name: h.clone() });
                    }
                    Some(k)
                }
                None => None,
            };
            Ok((sources, hips))
        }
        None => {
            let names = |v: sinew::skeleton::SkeletonView<'_, f32>| -> Vec<String> {
                v.names().iter().map(|s| s.as_str().to_string()).collect()
            };
            let (snames, tnames) = (names(sv), names(tv));
            let sbones = humanoid::canonical_bones(&snames);
            let tbones = humanoid::canonical_bones(&tnames);
            let mut hips = None;
            for k in 0..n {
                if !mappable.get(k).copied().unwrap_or(false) {
                    continue;
                }
                let bone = tbones.get(k).copied().flatten();
                let by_bone = bone.and_then(|b| sbones.iter().position(|&sb| sb == Some(b)));
                let by_name = tnames.get(k).and_then(|name| sv.find(name));
                let j = by_bone.or(by_name);
                if let Some(e) = sources.get_mut(k) {
                    *e = j;
                }
                if j.is_some() && bone == Some(humanoid::Bone::Hips) && hips.is_none() {
                    hips = Some(k);
                }
            }
            Ok((sources, hips))
        }
    }
}

impl<'a> Retarget<'a> {
    /// Sets up retargeting `source`'s poses onto `target`, with `map` (`None`: the automatic
    /// mapping) and `options`.
    ///
    /// # Errors
    ///
    /// [`RetargetError::UnknownJoint`] or [`RetargetError::AboveSkinRoot`] for a bad map entry,
    /// [`RetargetError::HipsUnmapped`] for `@hips` naming an unmapped joint,
    /// [`RetargetError::NoJointInCommon`], [`RetargetError::HipsHeight`] when the heights give
    /// no scale, [`RetargetError::InvalidScale`], and [`RetargetError::Job`] when a rest pose
    /// cannot be evaluated.
    pub fn new(
        source: &'a Model,
        target: &'a Model,
        map: Option<&JointMap>,
        options: RetargetOptions,
    ) -> Result<Retarget<'a>, RetargetError> {
        let tv = target.skeleton();
        let ok = mappable(target);
        let (sources, named_hips) = build_map(source, target, map, &ok)?;
        if sources.iter().all(Option::is_none) {
            return Err(RetargetError::NoJointInCommon);
        }
        let hips = match named_hips {
            Some(h) => h,
            None => {
                let skin: Vec<usize> =
                    target.skin_bind(0).map(|(j, _)| j.iter().map(|&x| usize::from(x)).collect()).unwrap_or_default();
                let depth = depths(tv.parents());
                let mapped = |k: &usize| sources.get(*k).copied().flatten().is_some();
                let nearest = |c: &mut dyn Iterator<Item = usize>| c.min_by_key(|&k| (depth.get(k).copied(), k));
                nearest(&mut skin.iter().copied().filter(mapped))
                    .or_else(|| nearest(&mut (0..sources.len()).filter(mapped)))
                    .ok_or(RetargetError::NoJointInCommon)?
            }
        };
        let source_hips = sources
            .get(hips)
            .copied()
            .flatten()
            .ok_or_else(|| RetargetError::HipsUnmapped { name: tv.name(hips).unwrap_or_default().to_string() })?;
        let (src_rest, tgt_rest) = (rest_model(source)?, rest_model(target)?);
        // The hips' heights that scale the motion, and where the root's displacement is taken
        // from: the rest pose's, or where the first clip starts for a skeleton whose rest pose
        // has its hips on the ground (motion capture: CMU's rest pose stands at the origin).
        let (src_stand, tgt_stand) = (standing(source, &src_rest, source_hips)?, standing(target, &tgt_rest, hips)?);
        if let Some(s) = options.scale {
            if !s.is_finite() {
                return Err(RetargetError::InvalidScale);
            }
        } else {
            for (side, model, rest, j) in
                [(Side::Target, target, &tgt_stand, hips), (Side::Source, source, &src_stand, source_hips)]
            {
                let height = rest.get(j).map_or(0.0, |m| m.translation().y);
                if height.is_nan() || height <= 0.0 {
                    let name = model.skeleton().name(j).unwrap_or_default().to_string();
                    return Err(RetargetError::HipsHeight { side, name, height });
                }
            }
        }
        let mut src_rot = vec![Quat::IDENTITY; src_rest.len()];
        let mut tgt_rot = vec![Quat::IDENTITY; tgt_rest.len()];
        world_rotations(&src_rest, &mut src_rot)?;
        world_rotations(&tgt_rest, &mut tgt_rot)?;
        let map16: Vec<u16> =
            sources.iter().map(|s| s.and_then(|j| u16::try_from(j).ok()).unwrap_or(NO_SOURCE)).collect();
        let mut joints = vec![RetargetJoint::UNMAPPED; sources.len()];
        RetargetJoint::offsets(&map16, &src_rot, &tgt_rot, &mut joints)?;
        let mut root = RetargetRoot::new(hips, source_hips, tv, &tgt_stand, &src_stand, options.scale)?;
        root.in_place = options.in_place;
        Ok(Retarget { source, target, sources, hips, source_hips, joints, root })
    }

    /// The source model.
    #[must_use]
    pub fn source(&self) -> &'a Model {
        self.source
    }

    /// The target model.
    #[must_use]
    pub fn target(&self) -> &'a Model {
        self.target
    }

    /// The source joint each target joint follows (`None`: it stays at its rest rotation).
    #[must_use]
    pub fn sources(&self) -> &[Option<usize>] {
        &self.sources
    }

    /// The target's hips joint and the source joint it follows.
    #[must_use]
    pub fn hips(&self) -> (usize, usize) {
        (self.hips, self.source_hips)
    }

    /// The core's per-joint constants, one per target joint (for a [`RetargetJob`] run by the
    /// caller, or baked).
    #[must_use]
    pub fn joints(&self) -> &[RetargetJoint<f32>] {
        &self.joints
    }

    /// The core's hips motion (its `in_place` set from the options).
    #[must_use]
    pub fn root(&self) -> RetargetRoot<f32> {
        self.root
    }

    /// The factor on the hips' displacement.
    #[must_use]
    pub fn scale(&self) -> f32 {
        self.root.scale
    }

    /// The mapping as text, one line each: `TARGET <- SOURCE` or `TARGET at rest` per target
    /// joint, then `hips TARGET <- SOURCE` and `scale S`.
    #[must_use]
    pub fn report(&self) -> Vec<String> {
        let (tv, sv) = (self.target.skeleton(), self.source.skeleton());
        let mut lines: Vec<String> = self
            .sources
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let t = tv.name(k).unwrap_or_default();
                match s {
                    Some(j) => format!("{t} <- {}", sv.name(*j).unwrap_or_default()),
                    None => format!("{t} at rest"),
                }
            })
            .collect();
        lines.push(format!(
            "hips {} <- {}",
            tv.name(self.hips).unwrap_or_default(),
            sv.name(self.source_hips).unwrap_or_default()
        ));
        lines.push(format!("scale {}", self.root.scale));
        lines
    }

    /// The target's local pose for the source's local pose `source_pose`.
    ///
    /// # Errors
    ///
    /// [`RetargetError::Job`] when `source_pose` is shorter than the source skeleton's.
    pub fn pose(&self, source_pose: &[SoaTransform<f32>]) -> Result<Vec<SoaTransform<f32>>, RetargetError> {
        Ok(retarget_pose(self.source, self.target, &self.joints, self.root, source_pose)?)
    }
}

/// `target`'s local pose for `source`'s local pose `source_pose`, with the core's constants
/// `joints` and `root` (from a [`Retarget`] of the two): the source's model matrices, then
/// [`RetargetJob`]. For a caller that keeps the constants but not the [`Retarget`] borrowing
/// both models.
///
/// # Errors
///
/// A [`JobError`] when `source_pose` is shorter than the source skeleton's, or `joints` and
/// `root` are not the two models'.
fn retarget_pose(
    source: &Model,
    target: &Model,
    joints: &[RetargetJoint<f32>],
    root: RetargetRoot<f32>,
    source_pose: &[SoaTransform<f32>],
) -> Result<Vec<SoaTransform<f32>>, JobError> {
    let mut model = Vec::new();
    source.world(source_pose, &mut model)?;
    let tv = target.skeleton();
    let mut world = vec![Quat::IDENTITY; tv.num_joints()];
    let mut output = tv.rest_pose().to_vec();
    RetargetJob { target: tv, joints, root: Some(root), source: &model, world: &mut world, output: &mut output }
        .run()?;
    Ok(output)
}

#[cfg(test)]
mod tests;
