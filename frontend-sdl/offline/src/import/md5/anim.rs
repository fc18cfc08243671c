//! The `.md5anim` grammar: the header, the joint `hierarchy` (with the animated-component flags),
//! `bounds`, `baseframe` and the `frame` blocks, parsed into [`Md5Anim`] and validated (counts,
//! flags, component ranges, quaternions of every frame); and the pose of a frame.

use sinew::math::{Transform, Vec3};

use super::error::{Md5Error, Md5File};
use super::lexer::Tok;
use super::limits::{MAX_JOINTS, MAX_JOINT_FRAMES, PREALLOC_CAP};
use super::parser::{parent_index, quat_from_xyz, Parser};

/// One `hierarchy` entry of an `.md5anim`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Md5AnimJoint {
    /// Name as written.
    pub name: String,
    /// Parent joint index, always below this joint's index; `None` for a root.
    pub parent: Option<usize>,
    /// Which components each frame animates: bits 0..=5 are Tx, Ty, Tz, Qx, Qy, Qz.
    pub flags: u8,
    /// Index of the first animated component in each frame.
    pub start_index: usize,
}

/// A parsed and validated `.md5anim` (see [`parse_anim`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Md5Anim {
    pub(super) frame_rate: f32,
    animated_components: usize,
    pub(super) joints: Vec<Md5AnimJoint>,
    bounds: Vec<[Vec3<f32>; 2]>,
    base_frame: Vec<[Vec3<f32>; 2]>,
    /// `frame_count × animated_components` numbers.
    frames: Vec<f32>,
    pub(super) frame_count: usize,
    /// The line of `numJoints`.
    pub(super) num_joints_line: u32,
    /// The line of each `hierarchy` entry.
    pub(super) hierarchy_lines: Vec<u32>,
}

impl Md5Anim {
    /// Frames per second (finite, positive).
    #[must_use]
    pub fn frame_rate(&self) -> f32 {
        self.frame_rate
    }
    /// Number of frames (at least 1).
    #[must_use]
    pub fn frame_count(&self) -> usize {
        self.frame_count
    }
    /// Numbers per frame.
    #[must_use]
    pub fn animated_components(&self) -> usize {
        self.animated_components
    }
    /// The hierarchy, parents before children.
    #[must_use]
    pub fn joints(&self) -> &[Md5AnimJoint] {
        &self.joints
    }
    /// Per-frame bounding boxes `[min, max]`.
    #[must_use]
    pub fn bounds(&self) -> &[[Vec3<f32>; 2]] {
        &self.bounds
    }
    /// Per-joint base frame `[translation, quaternion xyz]`, parent-relative.
    #[must_use]
    pub fn base_frame(&self) -> &[[Vec3<f32>; 2]] {
        &self.base_frame
    }
    /// The animated components of frame `frame`, or `None` past the last frame.
    #[must_use]
    pub fn frame_components(&self, frame: usize) -> Option<&[f32]> {
        // With no animated components every frame's slice is empty; the count decides.
        if frame >= self.frame_count {
            return None;
        }
        let n = self.animated_components;
        self.frames.get(frame.checked_mul(n)?..frame.checked_add(1)?.checked_mul(n)?)
    }

    /// The local (parent-relative) transforms of every joint at frame `frame`: the base frame
    /// with the frame's animated components substituted by the flag bits, `w` reconstructed.
    /// `None` past the last frame.
    #[must_use]
    pub fn pose(&self, frame: usize) -> Option<Vec<Transform<f32>>> {
        let mut out = Vec::with_capacity(self.joints.len());
        self.pose_into(frame, &mut out).ok()?;
        Some(out)
    }

    /// Fills `out` with the pose of `frame`. `Err(None)` past the last frame, `Err(Some(j))` when
    /// joint `j`'s quaternion has `|xyz| > 1` (rejected by [`parse_anim`]).
    pub(super) fn pose_into(&self, frame: usize, out: &mut Vec<Transform<f32>>) -> Result<(), Option<usize>> {
        out.clear();
        let comps = self.frame_components(frame).ok_or(None)?;
        for (j, (joint, base)) in self.joints.iter().zip(&self.base_frame).enumerate() {
            let mut v = [base[0].x, base[0].y, base[0].z, base[1].x, base[1].y, base[1].z];
            let mut k = joint.start_index;
            for (bit, slot) in v.iter_mut().enumerate() {
                if joint.flags & (1 << bit) != 0 {
                    *slot = *comps.get(k).ok_or(Some(j))?;
                    k += 1;
                }
            }
            let [tx, ty, tz, qx, qy, qz] = v;
            let rotation = quat_from_xyz(Vec3::new(qx, qy, qz)).ok_or(Some(j))?;
            out.push(Transform::new(Vec3::new(tx, ty, tz), rotation, Vec3::ONE));
        }
        Ok(())
    }
}

/// Parses and validates an `.md5anim`.
///
/// # Errors
///
/// [`Md5Error`] (located in [`Md5File::Anim`]) when the text is not a well-formed `MD5Version 10`
/// anim: missing, misplaced or truncated sections, another version, `numFrames` of 0, a
/// `frameRate` that is not positive, counts that the `hierarchy`, `bounds`, `baseframe`, `frame`
/// entries or a frame's numbers do not match, frames numbered out of order, a parent not below
/// its joint, flags above 63, `startIndex` plus the flagged components beyond
/// `numAnimatedComponents` ([`Md5Error::IndexOutOfRange`]), a quaternion with `|xyz| > 1` in the
/// base frame or any frame, a malformed or non-finite number, or `numJoints` above
/// [`MAX_JOINTS`] or `numJoints × numFrames` above [`MAX_JOINT_FRAMES`] ([`Md5Error::TooLarge`]).
pub fn parse_anim(text: &str) -> Result<Md5Anim, Md5Error> {
    let mut p = Parser::new(text, Md5File::Anim);
    p.version()?;
    p.keyword("commandline")?;
    p.string("the command line string")?;
    let (frame_count, frames_line) = p.count("numFrames", usize::MAX)?;
    if frame_count == 0 {
        return Err(Md5Error::InvalidValue {
            at: p.at(frames_line),
            what: "numFrames",
            requirement: "must be at least 1",
        });
    }
    let (num_joints, num_joints_line) = p.count("numJoints", MAX_JOINTS)?;
    let joint_frames = num_joints.saturating_mul(frame_count);
    if joint_frames > MAX_JOINT_FRAMES {
        return Err(Md5Error::TooLarge {
            at: p.at(num_joints_line),
            what: "numJoints × numFrames",
            value: joint_frames as u64,
            max: MAX_JOINT_FRAMES as u64,
        });
    }
    p.keyword("frameRate")?;
    let (frame_rate, rate_line) = p.float("a frame rate")?;
    if frame_rate <= 0.0 {
        return Err(Md5Error::InvalidValue { at: p.at(rate_line), what: "frameRate", requirement: "must be positive" });
    }
    if !((frame_count - 1) as f32 / frame_rate).is_finite() {
        return Err(Md5Error::InvalidValue {
            at: p.at(rate_line),
            what: "frameRate",
            requirement: "is too small: the last frame's time overflows f32",
        });
    }
    let (animated_components, _) = p.count("numAnimatedComponents", u32::MAX as usize)?;

    let mut hierarchy_lines = Vec::with_capacity(num_joints.min(PREALLOC_CAP));
    let joints = p.braced("hierarchy", num_joints, |p, index, line| {
        let name = p.string("a joint name or '}'")?.to_owned();
        let (parent, parent_line) = p.int("a parent index")?;
        let parent = parent_index(p, parent, parent_line, index)?;
        let (flags, flags_line) = p.int("joint flags")?;
        let flags = match u8::try_from(flags) {
            Ok(f) if f <= 63 => f,
            _ => {
                return Err(Md5Error::InvalidValue {
                    at: p.at(flags_line),
                    what: "joint flags",
                    requirement: "must be in 0..=63",
                })
            }
        };
        let (start_index, start_line) = p.index("startIndex", usize::MAX)?;
        let used = flags.count_ones() as usize;
        if used > 0 {
            let last = start_index.saturating_add(used - 1);
            if last >= animated_components {
                return Err(Md5Error::IndexOutOfRange {
                    at: p.at(start_line),
                    what: "animated component",
                    index: i64::try_from(last).unwrap_or(i64::MAX),
                    limit: animated_components,
                });
            }
        }
        hierarchy_lines.push(line);
        Ok(Md5AnimJoint { name, parent, flags, start_index })
    })?;

    let bounds = p.braced("bounds", frame_count, |p, _, _| {
        let (lo, _) = p.vec3("a bound")?;
        let (hi, _) = p.vec3("a bound")?;
        Ok([lo, hi])
    })?;

    let base_frame = p.braced("baseframe", num_joints, |p, _, _| {
        let (t, _) = p.vec3("a base translation")?;
        let (q, line) = p.vec3("a base orientation")?;
        if quat_from_xyz(q).is_none() {
            return Err(Md5Error::InvalidValue {
                at: p.at(line),
                what: "base orientation",
                requirement: "has x² + y² + z² above 1",
            });
        }
        Ok([t, q])
    })?;

    let mut frames: Vec<f32> = Vec::with_capacity(frame_count.saturating_mul(animated_components).min(PREALLOC_CAP));
    let frame_lines = p.keyed("frame", frame_count, |p, line| {
        p.symbol(Tok::OpenBrace, "'{'")?;
        let mut read = 0usize;
        loop {
            match p.peek()? {
                Some((Tok::CloseBrace, close_line)) => {
                    p.next("'}'")?;
                    if read != animated_components {
                        return Err(Md5Error::CountMismatch {
                            at: p.at(close_line),
                            what: "numAnimatedComponents",
                            declared: animated_components,
                            found: read,
                        });
                    }
                    return Ok(line);
                }
                Some((_, value_line)) if read == animated_components => {
                    return Err(Md5Error::CountMismatch {
                        at: p.at(value_line),
                        what: "numAnimatedComponents",
                        declared: animated_components,
                        found: read + 1,
                    });
                }
                _ => {
                    let (v, _) = p.float("a frame component or '}'")?;
                    frames.push(v);
                    read += 1;
                }
            }
        }
    })?;
    p.end()?;

    let anim = Md5Anim {
        frame_rate,
        animated_components,
        joints,
        bounds,
        base_frame,
        frames,
        frame_count,
        num_joints_line,
        hierarchy_lines,
    };
    let mut pose = Vec::with_capacity(anim.joints.len());
    for (frame, &line) in frame_lines.iter().enumerate() {
        if anim.pose_into(frame, &mut pose).is_err() {
            return Err(Md5Error::InvalidValue {
                at: p.at(line),
                what: "a frame orientation",
                requirement: "has x² + y² + z² above 1",
            });
        }
    }
    Ok(anim)
}
