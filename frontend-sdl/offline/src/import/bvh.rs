//! Biovision Hierarchy (`.bvh`, motion capture) importer: a skeleton and one sampled clip to
//! [`Rig`].
//!
//! # The format
//!
//! Whitespace-separated words; `{` and `}` are words wherever they stand. A line ends at `\n`,
//! `\r\n` or a lone `\r`. Keywords are read with ASCII case ignored.
//!
//! ```text
//! HIERARCHY
//! ROOT Hips                       (the name is the rest of the line, up to a '{')
//! {
//!   OFFSET x y z
//!   CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
//!   JOINT Chest { OFFSET … CHANNELS 3 … JOINT … End Site { OFFSET x y z } }
//! }
//! MOTION
//! Frames: n
//! Frame Time: seconds
//! one line per frame: every joint's channel values, joints in file order
//! ```
//!
//! - A joint holds `OFFSET` (required) and `CHANNELS` (optional; none means no values), in
//!   either order, before its children. Any number of `ROOT` hierarchies may follow each other.
//! - `CHANNELS n` lists `n` (at most [`MAX_CHANNELS_PER_JOINT`]) of `Xposition`, `Yposition`,
//!   `Zposition`, `Xrotation`, `Yrotation`, `Zrotation` in any order, on any joint.
//! - An `End Site` holds only an `OFFSET`.
//! - Each frame is one line of exactly as many numbers as all joints have channels.
//!
//! The parser never panics and never reserves memory from a declared count: joints are capped at
//! [`MAX_JOINTS`] (End Sites included), and `Frames:` × the joints with channels at
//! [`MAX_JOINT_FRAMES`]; keys grow as frame lines are actually read. Every rejection is a
//! [`BvhError::Text`] with its 1-based line and a [`BvhErrorKind`].
//!
//! # Mapping to the rig
//!
//! - **Joints.** Each `ROOT`/`JOINT` becomes a [`RigJoint`] in file order (parents first), its
//!   rest transform the `OFFSET` as translation, identity rotation, unit scale. Each `End Site`
//!   becomes a joint too, named `<parent>_end`, so the tip of each chain exists. Repeated names
//!   are made unique (`name#1`, noted). No skin and no mesh: the rig is a skeleton.
//! - **Clip.** One [`RigClip`] named like the rig (the file stem), [`Interpolation::Linear`], keys
//!   at `i × Frame Time` seconds. A joint with position channels gets a translation channel: the
//!   position values replace the `OFFSET` components they name (the other components keep the
//!   `OFFSET`'s), the convention of Blender's importer; three.js's `BVHLoader` instead adds the
//!   values to the `OFFSET`, which gives the same poses for the usual files, whose joints with
//!   position channels have a zero `OFFSET`. A joint with rotation channels gets a rotation
//!   channel: the product of the axis rotations in the order the channels are listed (for
//!   `Zrotation Xrotation Yrotation`, `Rz · Rx · Ry` applied to column vectors), degrees to
//!   radians, as a quaternion `x y z w`; each key's sign is the one nearer the previous key's.
//!   `Frames: 0`, or no channels at all, gives no clip (noted).
//! - **Units.** Every translation (offsets and position channels) is multiplied by the scale, in
//!   meters per file unit, so the rig is in meters ([`Rig::meters_per_unit`] is `None`). The
//!   scale is [`BvhOptions::scale`] when given. Otherwise it is guessed from the rest skeleton's
//!   size (the longest side of the box around every joint and End Site at rest, which is the
//!   height of a standing figure or its arm span in a T-pose), by [`Unit::guess`]: under 10 units
//!   meters, 10 to 40 the CMU database's units (1/0.45 inch; its BVH conversion draws a person
//!   about 25 units tall), 40 to 100 inches, 100 to 1000 centimeters, from 1000 millimeters.
//!   [`Rig::notes`] gets one line with the scale and where it came from:
//!   `bvh: scale 0.056444444 m per file unit (auto: the rest skeleton is 26.07 units across, read
//!   as CMU units (1/0.45 inch); pass a scale to override)`, or `… (given)`.
//!
//! # Files
//!
//! - `lexer`: lines and words; `hierarchy`: the `HIERARCHY` section; `motion`: the `MOTION`
//!   section and the rotation keys; `error`: [`BvhError`], [`BvhErrorKind`].
//!
//! [`RigJoint`]: crate::rig::RigJoint
//! [`RigClip`]: crate::rig::RigClip
//! [`Interpolation::Linear`]: crate::rig::Interpolation::Linear

use std::path::{Path, PathBuf};

use sinew::math::{Quat, Transform, Vec3};

use super::names::{or_fallback, UniqueNames};
use crate::rig::{ChannelTarget, Interpolation, Rig, RigChannel, RigClip, RigJoint};

mod error;
mod hierarchy;
mod lexer;
mod motion;

#[cfg(test)]
mod tests;

pub use error::{BvhError, BvhErrorKind};

use hierarchy::Node;

/// Most joints a file may declare, End Sites included: the most a sinew skeleton holds
/// ([`sinew::limits::MAX_JOINTS`]).
pub const MAX_JOINTS: usize = sinew::limits::MAX_JOINTS;

/// Most channels one joint may list (BVH files use 3 or 6).
pub const MAX_CHANNELS_PER_JOINT: usize = 16;

/// Most `Frames:` × joints with channels: 8 Mi keys per channel kind (about 19 minutes of 120 Hz
/// capture of a 60-joint skeleton), bounding what the clip can hold.
pub const MAX_JOINT_FRAMES: u64 = 1 << 23;

/// Import options.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BvhOptions {
    /// Meters per file unit (`0.01` for centimeters); `None` guesses it from the rest skeleton's
    /// size ([`Unit::guess`]).
    pub scale: Option<f32>,
}

/// The units [`Unit::guess`] tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// 1 m.
    Meters,
    /// The CMU motion capture database's unit, 1/0.45 inch (0.0564444 m).
    CmuUnits,
    /// 0.0254 m.
    Inches,
    /// 0.01 m.
    Centimeters,
    /// 0.001 m.
    Millimeters,
}

impl Unit {
    /// The unit of a skeleton `size` file units across (the longest side of its rest box): under
    /// 10 meters, 10 to 40 CMU units, 40 to 100 inches, 100 to 1000 centimeters, from 1000
    /// millimeters (a human figure is then 1 to 2.5 m tall in each range but the first two).
    #[must_use]
    pub fn guess(size: f64) -> Unit {
        if size < 10.0 {
            Unit::Meters
        } else if size < 40.0 {
            Unit::CmuUnits
        } else if size < 100.0 {
            Unit::Inches
        } else if size < 1000.0 {
            Unit::Centimeters
        } else {
            Unit::Millimeters
        }
    }
    /// Meters per unit.
    #[must_use]
    pub fn meters(self) -> f64 {
        match self {
            Unit::Meters => 1.0,
            Unit::CmuUnits => 0.0254 / 0.45,
            Unit::Inches => 0.0254,
            Unit::Centimeters => 0.01,
            Unit::Millimeters => 0.001,
        }
    }
    /// The unit's name, as the note says it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Unit::Meters => "meters",
            Unit::CmuUnits => "CMU units (1/0.45 inch)",
            Unit::Inches => "inches",
            Unit::Centimeters => "centimeters",
            Unit::Millimeters => "millimeters",
        }
    }
}

/// The longest side of the box around the rest positions of `nodes` (offsets summed down each
/// chain; identity rotations at rest).
fn rest_size(nodes: &[Node]) -> f64 {
    let mut world: Vec<[f64; 3]> = Vec::with_capacity(nodes.len());
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for n in nodes {
        let base = n.parent.and_then(|p| world.get(p).copied()).unwrap_or([0.0; 3]);
        let p = [base[0] + n.offset[0], base[1] + n.offset[1], base[2] + n.offset[2]];
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
        world.push(p);
    }
    (0..3).map(|k| hi[k] - lo[k]).filter(|d| d.is_finite()).fold(0.0, f64::max)
}

/// Parses a BVH text into a [`Rig`] named `name`, with its clip named `name` too (see the
/// [module documentation](self) for the mapping and the units).
///
/// # Errors
///
/// [`BvhError::InvalidScale`] for a scale that is not finite and positive;
/// [`BvhError::Text`] (without a path) for a text this importer rejects.
pub fn parse(name: &str, text: &str, options: &BvhOptions) -> Result<Rig, BvhError> {
    parse_inner(name, text, options, None)
}

/// Reads a `.bvh` file into a [`Rig`] named after its file stem (see [`parse`]). Bytes that
/// are not UTF-8 (in names) are replaced, not rejected.
///
/// # Errors
///
/// [`BvhError::Io`] when the file cannot be read; otherwise as [`parse`], with the path in
/// [`BvhError::Text`].
pub fn load_file(path: &Path, options: &BvhOptions) -> Result<Rig, BvhError> {
    let bytes = std::fs::read(path).map_err(|source| BvhError::Io { path: path.to_owned(), source })?;
    let text = String::from_utf8_lossy(&bytes);
    let name = path.file_stem().map_or_else(|| "bvh".to_owned(), |s| s.to_string_lossy().into_owned());
    parse_inner(&name, &text, options, Some(path.to_owned()))
}

fn parse_inner(name: &str, text: &str, options: &BvhOptions, path: Option<PathBuf>) -> Result<Rig, BvhError> {
    if let Some(scale) = options.scale {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(BvhError::InvalidScale { scale });
        }
    }
    let fail = |(line, kind)| BvhError::Text { path: path.clone(), line, kind };
    let mut lex = lexer::Lexer::new(text);
    let nodes = hierarchy::parse_hierarchy(&mut lex).map_err(fail)?;
    let mut notes = Vec::new();
    let scale = match options.scale {
        Some(s) => {
            notes.push(format!("bvh: scale {s} m per file unit (given)"));
            f64::from(s)
        }
        None => {
            let size = rest_size(&nodes);
            let unit = Unit::guess(size);
            notes.push(format!(
                "bvh: scale {} m per file unit (auto: the rest skeleton is {size:.2} units across, read as {}; pass a scale to override)",
                unit.meters() as f32,
                unit.name()
            ));
            unit.meters()
        }
    };
    let motion = motion::parse_motion(lex, &nodes, scale).map_err(fail)?;
    to_rig(name, &nodes, motion, scale, notes).map_err(fail)
}

/// Builds the rig from the parsed hierarchy and keys.
fn to_rig(
    name: &str,
    nodes: &[Node],
    motion: motion::Motion,
    scale: f64,
    mut notes: Vec<String>,
) -> Result<Rig, hierarchy::Failure> {
    let rig_name = or_fallback(Some(name), || "bvh".to_owned());
    let mut names = UniqueNames::default();
    let mut joints: Vec<RigJoint> = Vec::with_capacity(nodes.len());
    let mut end_sites = 0usize;
    for (i, n) in nodes.iter().enumerate() {
        let base = match &n.name {
            Some(s) => s.clone(),
            None => {
                end_sites += 1;
                let parent = n.parent.and_then(|p| joints.get(p)).map_or("root", |j| j.name.as_str());
                format!("{parent}_end")
            }
        };
        let joint_name = names.make(or_fallback(Some(&base), || format!("joint{i}")), 1);
        let t = n.offset.map(|v| (v * scale) as f32);
        if !t.iter().all(|v| v.is_finite()) {
            return Err((n.offset_line, BvhErrorKind::NonFinite { what: "an OFFSET once scaled" }));
        }
        let rest = Transform::new(Vec3::new(t[0], t[1], t[2]), Quat::IDENTITY, Vec3::ONE);
        joints.push(RigJoint { name: joint_name, parent: n.parent, rest });
    }
    if names.suffixed() > 0 {
        notes.push(format!("bvh: {} repeated joint names were made unique", names.suffixed()));
    }
    if end_sites > 0 {
        notes.push(format!("bvh: {end_sites} End Sites became joints named <parent>_end"));
    }
    let mut clips = Vec::new();
    if motion.times.is_empty() {
        let why = if motion.any_channels { "Frames: 0" } else { "no joint has channels" };
        notes.push(format!("bvh: no clip ({why})"));
    } else {
        let mut channels = Vec::new();
        for (j, (t, r)) in motion.translations.into_iter().zip(motion.rotations).enumerate() {
            for (values, target) in [(t, ChannelTarget::Translation), (r, ChannelTarget::Rotation)] {
                if !values.is_empty() {
                    channels.push(RigChannel {
                        joint: j,
                        target,
                        interpolation: Interpolation::Linear,
                        times: motion.times.clone(),
                        values,
                    });
                }
            }
        }
        clips.push(RigClip { name: rig_name.clone(), channels, ..RigClip::default() });
    }
    Ok(Rig { name: rig_name, joints, clips, notes, meters_per_unit: None, ..Rig::default() })
}
