//! The spring-bone section (`SPRG`, layout in [`format`](crate::format)): a character's
//! swinging joints in run order, the colliders they test and the joint→collider table, with
//! the springs they belong to. [`SpringsData`] reads it in place; [`SpringsData::fill`] copies
//! it into caller buffers as the [`SpringBones`] of
//! [`SpringBoneJob`](crate::job::SpringBoneJob); with the `writer` feature, [`write_springs`]
//! writes one.
//!
//! Validation holds the section to [`SpringBones::validate`]'s rules against the file's
//! skeleton and to a few of its own: each skeleton joint swings in one spring joint at most (a
//! bitmap of [`MAX_JOINTS`] bits on the stack), every spring joint lies in its spring's
//! span, and the joints' collider counts add up to at most [`MAX_SPRING_TESTS`] tests a step.
//! It runs once over each record; a `child` is checked by walking its parents down to its
//! joint (at most `child − joint` steps, parents coming first).

use core::fmt;
use core::ops::Range;

use crate::format::reader::{byte, is_finite_bits, le_f32, le_u16, le_u32, ordered_bits, Reader};
use crate::format::*;
use crate::job::spring::{ColliderShape, SpringBones, SpringCollider, SpringJoint, NO_JOINT};
use crate::limits::{MAX_JOINTS, MAX_SPRING_TESTS};
use crate::math::Vec3;
use crate::real::Real;

use super::SkeletonData;

#[cfg(any(test, feature = "writer"))]
use crate::format::writer::Writer;

/// Offsets inside a spring joint record.
mod joint_at {
    pub(super) const JOINT: usize = 0;
    pub(super) const CHILD: usize = 2;
    pub(super) const CENTER: usize = 4;
    pub(super) const SPRING: usize = 6;
    pub(super) const COLLIDERS_START: usize = 8;
    pub(super) const COLLIDERS_LEN: usize = 10;
    /// The ten floats: tail xyz, hit_radius, stiffness, gravity_power, gravity_dir xyz,
    /// drag_force.
    pub(super) const FLOATS: usize = 12;
    pub(super) const HIT_RADIUS: usize = 24;
    pub(super) const STIFFNESS: usize = 28;
    pub(super) const GRAVITY_POWER: usize = 32;
    pub(super) const GRAVITY_DIR: usize = 36;
    pub(super) const DRAG_FORCE: usize = 48;
}

/// Offsets inside a collider record.
mod collider_at {
    pub(super) const JOINT: usize = 0;
    pub(super) const KIND: usize = 2;
    pub(super) const FLAGS: usize = 3;
    pub(super) const OFFSET: usize = 4;
    /// A capsule's tail or a plane's normal.
    pub(super) const SECOND: usize = 16;
    pub(super) const RADIUS: usize = 28;
}

/// A spring as stored: its name and the span of the joint list that holds its joints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpringInfo<'a> {
    /// The spring's name (empty when the source gave none).
    pub name: &'a str,
    /// Indices into the spring joints ([`SpringsData::joint`]): the span from the spring's
    /// first joint in run order to its last. Every joint of the span belongs to this spring
    /// unless springs interleave in run order (a collider under another spring's joint);
    /// [`SpringsData::spring_joints`] lists exactly its own.
    pub joints: Range<usize>,
}

/// Why [`SpringsData::fill`] did not fill the buffers: one is shorter than the section's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpringsFillError {
    /// The joints buffer holds fewer than `needed` entries.
    Joints {
        /// [`SpringsData::num_joints`].
        needed: usize,
    },
    /// The colliders buffer holds fewer than `needed` entries.
    Colliders {
        /// [`SpringsData::num_colliders`].
        needed: usize,
    },
    /// The joint→collider table buffer holds fewer than `needed` entries.
    JointColliders {
        /// [`SpringsData::num_joint_colliders`].
        needed: usize,
    },
}

impl fmt::Display for SpringsFillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, needed) = match *self {
            Self::Joints { needed } => ("spring joints", needed),
            Self::Colliders { needed } => ("colliders", needed),
            Self::JointColliders { needed } => ("joint collider entries", needed),
        };
        write!(f, "the buffer for {what} is too short: the asset holds {needed}")
    }
}

impl core::error::Error for SpringsFillError {}

/// The spring-bone section of an asset, read in place ([`Asset::springs`](super::Asset::springs)).
#[derive(Debug, Clone, Copy)]
pub struct SpringsData<'a> {
    springs: &'a [u8],
    joints: &'a [u8],
    colliders: &'a [u8],
    table: &'a [u8],
    names: &'a [u8],
    body_len: usize,
}

/// True when `child` is below `joint` (and not `joint`) in a skeleton whose parents come first.
fn is_below(skeleton: &SkeletonData<'_>, child: usize, joint: usize) -> bool {
    let mut k = child;
    while k > joint {
        let Ok(p) = usize::try_from(skeleton.parent(k)) else { return false };
        k = p;
    }
    k == joint && child != joint
}

/// The bits of the `count` floats at `at` are all finite.
fn finite(d: &[u8], at: usize, count: usize) -> bool {
    (0..count).all(|k| is_finite_bits(le_u32(d, at + 4 * k)))
}

/// The f32 at `at` is finite and not negative.
fn non_negative(d: &[u8], at: usize) -> bool {
    let b = le_u32(d, at);
    is_finite_bits(b) && ordered_bits(b) >= 0
}

impl<'a> SpringsData<'a> {
    /// Splits a section body into its lists (the names run to the end).
    ///
    /// # Errors
    ///
    /// [`ParseError::Truncated`] when the counts pass the end of `body`.
    fn split(body: &'a [u8]) -> Result<Self, ParseError> {
        let mut r = Reader::new(body);
        let springs = usize::from(r.u16()?);
        let joints = usize::from(r.u16()?);
        let colliders = usize::from(r.u16()?);
        let entries = usize::from(r.u16()?);
        Ok(SpringsData {
            springs: r.bytes(springs * SPRING_RECORD_LEN)?,
            joints: r.bytes(joints * SPRING_JOINT_LEN)?,
            colliders: r.bytes(colliders * SPRING_COLLIDER_LEN)?,
            table: r.bytes(entries * 2)?,
            names: body.get(r.pos()..).unwrap_or(&[]),
            body_len: body.len(),
        })
    }

    /// Validates spring-bone section `sec` against `skeleton`.
    pub(super) fn parse(body: &'a [u8], sec: u16, skeleton: &SkeletonData<'_>) -> Result<Self, ParseError> {
        let data = Self::split(body)?;
        let bad = |part, index: usize| ParseError::BadSprings { section: sec, part, index: index as u16 };
        let mut names = Reader::for_section(data.names, sec);
        for i in 0..data.num_springs() {
            names.str().map_err(|e| if e == ParseError::Truncated { e } else { bad(SpringPart::Name, i) })?;
        }
        if names.pos() != data.names.len() {
            return Err(ParseError::BadSection { section: sec });
        }
        let joints = data.num_joints();
        for i in 0..data.num_springs() {
            let span = data.span(i);
            let tight = span.is_empty()
                || (data.joint_spring(span.start) == Some(i) && data.joint_spring(span.end - 1) == Some(i));
            if span.end > joints || !tight {
                return Err(bad(SpringPart::Spring, i));
            }
        }
        let n = skeleton.num_joints();
        let mut seen = [0u32; MAX_JOINTS.div_ceil(32)];
        let mut tests = 0;
        for i in 0..joints {
            let rec = data.joint_record(i);
            let field = |at| usize::from(le_u16(rec, at));
            let joint = field(joint_at::JOINT);
            let slot = seen.get_mut(joint / 32).filter(|_| joint < n);
            let Some(slot) = slot.filter(|s| **s & (1 << (joint % 32)) == 0) else {
                return Err(bad(SpringPart::Joint, i));
            };
            *slot |= 1 << (joint % 32);
            let child = field(joint_at::CHILD);
            if child != usize::from(NO_JOINT) && (child >= n || !is_below(skeleton, child, joint)) {
                return Err(bad(SpringPart::Child, i));
            }
            let center = field(joint_at::CENTER);
            if center != usize::from(NO_JOINT) && center >= n {
                return Err(bad(SpringPart::Center, i));
            }
            let spring = field(joint_at::SPRING);
            if spring >= data.num_springs() || !data.span(spring).contains(&i) {
                return Err(bad(SpringPart::JointSpring, i));
            }
            if field(joint_at::COLLIDERS_START) + field(joint_at::COLLIDERS_LEN) > data.num_joint_colliders() {
                return Err(bad(SpringPart::JointColliders, i));
            }
            tests += field(joint_at::COLLIDERS_LEN);
            if tests > MAX_SPRING_TESTS {
                return Err(bad(SpringPart::Tests, i));
            }
            if !finite(rec, joint_at::FLOATS, 10) || !non_negative(rec, joint_at::HIT_RADIUS) {
                return Err(bad(SpringPart::Setting, i));
            }
        }
        for i in 0..data.num_colliders() {
            let rec = data.collider_record(i);
            if usize::from(le_u16(rec, collider_at::JOINT)) >= n {
                return Err(bad(SpringPart::ColliderJoint, i));
            }
            let (kind, flags) = (byte(rec, collider_at::KIND), byte(rec, collider_at::FLAGS));
            let known = matches!(kind, COLLIDER_SPHERE | COLLIDER_CAPSULE | COLLIDER_PLANE);
            if !known || flags & !COLLIDER_FLAG_INSIDE != 0 || (kind == COLLIDER_PLANE && flags != 0) {
                return Err(bad(SpringPart::ColliderKind, i));
            }
            let unused_zero = match kind {
                COLLIDER_SPHERE => (0..3).all(|k| le_u32(rec, collider_at::SECOND + 4 * k) == 0),
                COLLIDER_PLANE => le_u32(rec, collider_at::RADIUS) == 0,
                _ => true,
            };
            if !finite(rec, collider_at::OFFSET, 7) || !non_negative(rec, collider_at::RADIUS) || !unused_zero {
                return Err(bad(SpringPart::ColliderShape, i));
            }
        }
        for i in 0..data.num_joint_colliders() {
            if usize::from(le_u16(data.table, 2 * i)) >= data.num_colliders() {
                return Err(bad(SpringPart::Table, i));
            }
        }
        Ok(data)
    }

    /// The section of a file [`Asset::parse`](super::Asset::parse) accepted, without checks
    /// (`None` when its counts pass its end).
    pub(super) fn view(body: &'a [u8]) -> Option<Self> {
        Self::split(body).ok()
    }

    fn joint_record(&self, i: usize) -> &'a [u8] {
        self.joints.get(i * SPRING_JOINT_LEN..(i + 1) * SPRING_JOINT_LEN).unwrap_or(&[])
    }

    fn collider_record(&self, i: usize) -> &'a [u8] {
        self.colliders.get(i * SPRING_COLLIDER_LEN..(i + 1) * SPRING_COLLIDER_LEN).unwrap_or(&[])
    }

    /// Spring `i`'s span as stored (empty past the springs).
    fn span(&self, i: usize) -> Range<usize> {
        let first = usize::from(le_u16(self.springs, i * SPRING_RECORD_LEN));
        let len = usize::from(le_u16(self.springs, i * SPRING_RECORD_LEN + 2));
        if i < self.num_springs() {
            first..first + len
        } else {
            0..0
        }
    }

    /// Number of springs.
    #[must_use]
    pub fn num_springs(&self) -> usize {
        self.springs.len() / SPRING_RECORD_LEN
    }

    /// Spring `i`: its name and its span of the joint list (`None` past the springs).
    #[must_use]
    pub fn spring(&self, i: usize) -> Option<SpringInfo<'a>> {
        if i >= self.num_springs() {
            return None;
        }
        let mut names = Reader::new(self.names);
        for _ in 0..i {
            names.str().ok()?;
        }
        Some(SpringInfo { name: names.str().ok()?, joints: self.span(i) })
    }

    /// The spring joints of spring `i` (indices for [`SpringsData::joint`]), in run order;
    /// none past the springs.
    pub fn spring_joints(&self, i: usize) -> impl Iterator<Item = usize> + 'a {
        let data = *self;
        self.span(i).filter(move |&j| data.joint_spring(j) == Some(i))
    }

    /// The spring that spring joint `i` belongs to (`None` past the joints).
    #[must_use]
    pub fn joint_spring(&self, i: usize) -> Option<usize> {
        (i < self.num_joints()).then(|| usize::from(le_u16(self.joint_record(i), joint_at::SPRING)))
    }

    /// Number of spring joints.
    #[must_use]
    pub fn num_joints(&self) -> usize {
        self.joints.len() / SPRING_JOINT_LEN
    }

    /// Spring joint `i`, in run order (`None` past the joints).
    #[must_use]
    pub fn joint<R: Real>(&self, i: usize) -> Option<SpringJoint<R>> {
        if i >= self.num_joints() {
            return None;
        }
        let rec = self.joint_record(i);
        let u = |at| le_u16(rec, at);
        let f = |at| R::from_f32(le_f32(rec, at));
        let v = |at| Vec3::new(f(at), f(at + 4), f(at + 8));
        Some(SpringJoint {
            joint: u(joint_at::JOINT),
            child: u(joint_at::CHILD),
            tail: v(joint_at::FLOATS),
            hit_radius: f(joint_at::HIT_RADIUS),
            stiffness: f(joint_at::STIFFNESS),
            gravity_power: f(joint_at::GRAVITY_POWER),
            gravity_dir: v(joint_at::GRAVITY_DIR),
            drag_force: f(joint_at::DRAG_FORCE),
            center: u(joint_at::CENTER),
            colliders_start: u(joint_at::COLLIDERS_START),
            colliders_len: u(joint_at::COLLIDERS_LEN),
        })
    }

    /// Number of colliders.
    #[must_use]
    pub fn num_colliders(&self) -> usize {
        self.colliders.len() / SPRING_COLLIDER_LEN
    }

    /// Collider `i` (`None` past the colliders).
    #[must_use]
    pub fn collider<R: Real>(&self, i: usize) -> Option<SpringCollider<R>> {
        if i >= self.num_colliders() {
            return None;
        }
        let rec = self.collider_record(i);
        let f = |at| R::from_f32(le_f32(rec, at));
        let v = |at| Vec3::new(f(at), f(at + 4), f(at + 8));
        let (offset, second, radius) = (v(collider_at::OFFSET), v(collider_at::SECOND), f(collider_at::RADIUS));
        let inside = byte(rec, collider_at::FLAGS) & COLLIDER_FLAG_INSIDE != 0;
        let shape = match byte(rec, collider_at::KIND) {
            COLLIDER_SPHERE => ColliderShape::Sphere { offset, radius, inside },
            COLLIDER_CAPSULE => ColliderShape::Capsule { offset, tail: second, radius, inside },
            _ => ColliderShape::Plane { offset, normal: second },
        };
        Some(SpringCollider { joint: le_u16(rec, collider_at::JOINT), shape })
    }

    /// Number of entries of the joint→collider table.
    #[must_use]
    pub fn num_joint_colliders(&self) -> usize {
        self.table.len() / 2
    }

    /// Entry `i` of the joint→collider table: a collider index (`None` past the table). A
    /// joint's colliders are the entries `colliders_start..colliders_start + colliders_len`.
    #[must_use]
    pub fn joint_collider(&self, i: usize) -> Option<u16> {
        (i < self.num_joint_colliders()).then(|| le_u16(self.table, 2 * i))
    }

    /// The section's size in bytes.
    #[must_use]
    pub fn byte_len(&self) -> usize {
        self.body_len
    }

    /// Copies the spring joints, colliders and table into the caller's buffers and returns the
    /// [`SpringBones`] over them (the buffers' first `num_joints()`, `num_colliders()` and
    /// `num_joint_colliders()` entries). A validated section gives [`SpringBones`] that pass
    /// [`SpringBones::validate`] against the file's skeleton.
    ///
    /// # Errors
    ///
    /// [`SpringsFillError`] naming the first buffer that is too short; nothing is written then.
    ///
    /// # Examples
    ///
    /// ```
    /// use sinew::asset::{Asset, SpringsFillError};
    /// use sinew::job::spring::{ColliderShape, SpringCollider, SpringJoint, NO_JOINT};
    /// use sinew::math::Vec3;
    ///
    /// /// The number of spring joints of `asset`, read into fixed buffers.
    /// fn spring_joints(asset: &Asset<'_>) -> Result<usize, SpringsFillError> {
    ///     let Some(springs) = asset.springs() else { return Ok(0) };
    ///     let joint = SpringJoint {
    ///         joint: 0, child: NO_JOINT, tail: Vec3::ZERO, hit_radius: 0.0, stiffness: 0.0,
    ///         gravity_power: 0.0, gravity_dir: Vec3::ZERO, drag_force: 0.0, center: NO_JOINT,
    ///         colliders_start: 0, colliders_len: 0,
    ///     };
    ///     let sphere = ColliderShape::Sphere { offset: Vec3::ZERO, radius: 0.0, inside: false };
    ///     let mut joints = [joint; 32];
    ///     let mut colliders = [SpringCollider { joint: 0, shape: sphere }; 16];
    ///     let mut table = [0u16; 64];
    ///     let bones = springs.fill::<f32>(&mut joints, &mut colliders, &mut table)?;
    ///     Ok(bones.joints.len())
    /// }
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));
    /// # assert_eq!(spring_joints(&Asset::parse(bytes).unwrap()), Ok(0));
    /// ```
    pub fn fill<'b, R: Real>(
        &self,
        joints: &'b mut [SpringJoint<R>],
        colliders: &'b mut [SpringCollider<R>],
        joint_colliders: &'b mut [u16],
    ) -> Result<SpringBones<'b, R>, SpringsFillError> {
        let (nj, nc, nt) = (self.num_joints(), self.num_colliders(), self.num_joint_colliders());
        let joints = joints.get_mut(..nj).ok_or(SpringsFillError::Joints { needed: nj })?;
        let colliders = colliders.get_mut(..nc).ok_or(SpringsFillError::Colliders { needed: nc })?;
        let table = joint_colliders.get_mut(..nt).ok_or(SpringsFillError::JointColliders { needed: nt })?;
        for (i, out) in joints.iter_mut().enumerate() {
            if let Some(j) = self.joint(i) {
                *out = j;
            }
        }
        for (i, out) in colliders.iter_mut().enumerate() {
            if let Some(c) = self.collider(i) {
                *out = c;
            }
        }
        for (i, out) in table.iter_mut().enumerate() {
            *out = le_u16(self.table, 2 * i);
        }
        Ok(SpringBones { joints, colliders, joint_colliders: table })
    }
}

/// Why [`write_springs`] wrote nothing.
#[cfg(any(test, feature = "writer"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpringWriteError {
    /// A list holds more entries than the section's 16-bit counts (65,535).
    TooMany {
        /// `"springs"`, `"joints"`, `"colliders"` or `"joint colliders"`.
        list: &'static str,
        /// Its length.
        count: usize,
    },
    /// `joint_springs` does not hold one entry per spring joint, or an entry is not an index of
    /// `names`.
    JointSprings,
}

#[cfg(any(test, feature = "writer"))]
impl fmt::Display for SpringWriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::TooMany { list, count } => write!(f, "{count} {list} exceed the spring-bone section's 65535"),
            Self::JointSprings => f.write_str("the spring joints' springs are not one spring index per joint"),
        }
    }
}

#[cfg(any(test, feature = "writer"))]
impl core::error::Error for SpringWriteError {}

/// Writes the body of a spring-bone section (the caller records the section with
/// [`Writer::section`]): `bones` as they are (indices those of the file's skeleton), spring
/// joint `i` in spring `joint_springs[i]`, spring `s` called `names[s]` (cut to 255 bytes).
/// Each spring's span runs from its first joint to its last.
///
/// # Errors
///
/// [`SpringWriteError`] when a list is longer than 65,535 entries or `joint_springs` does not
/// name one spring per joint; checked before anything is written.
#[cfg(any(test, feature = "writer"))]
pub fn write_springs(
    w: &mut Writer<'_>,
    bones: &SpringBones<'_, f32>,
    joint_springs: &[u16],
    names: &[&str],
) -> Result<(), SpringWriteError> {
    let lists = [
        ("springs", names.len()),
        ("joints", bones.joints.len()),
        ("colliders", bones.colliders.len()),
        ("joint colliders", bones.joint_colliders.len()),
    ];
    for (list, count) in lists {
        if count > usize::from(u16::MAX) {
            return Err(SpringWriteError::TooMany { list, count });
        }
    }
    if joint_springs.len() != bones.joints.len() || joint_springs.iter().any(|&s| usize::from(s) >= names.len()) {
        return Err(SpringWriteError::JointSprings);
    }
    for (_, count) in lists {
        w.u16(count as u16);
    }
    for s in 0..names.len() {
        let mine = |k: &usize| joint_springs.get(*k).is_some_and(|&x| usize::from(x) == s);
        let first = (0..joint_springs.len()).find(mine);
        let last = (0..joint_springs.len()).rev().find(mine);
        let (first, len) = match (first, last) {
            (Some(a), Some(z)) => (a, z + 1 - a),
            _ => (0, 0),
        };
        w.u16(first as u16);
        w.u16(len as u16);
    }
    let v3 = |w: &mut Writer<'_>, v: Vec3<f32>| [v.x, v.y, v.z].into_iter().for_each(|x| w.f32(x));
    for (j, &s) in bones.joints.iter().zip(joint_springs) {
        for u in [j.joint, j.child, j.center, s, j.colliders_start, j.colliders_len] {
            w.u16(u);
        }
        v3(w, j.tail);
        for x in [j.hit_radius, j.stiffness, j.gravity_power] {
            w.f32(x);
        }
        v3(w, j.gravity_dir);
        w.f32(j.drag_force);
    }
    for c in bones.colliders {
        let (kind, inside, offset, second, radius) = match c.shape {
            ColliderShape::Sphere { offset, radius, inside } => (COLLIDER_SPHERE, inside, offset, Vec3::ZERO, radius),
            ColliderShape::Capsule { offset, tail, radius, inside } => (COLLIDER_CAPSULE, inside, offset, tail, radius),
            ColliderShape::Plane { offset, normal } => (COLLIDER_PLANE, false, offset, normal, 0.0),
        };
        w.u16(c.joint);
        w.u8(kind);
        w.u8(if inside { COLLIDER_FLAG_INSIDE } else { 0 });
        v3(w, offset);
        v3(w, second);
        w.f32(radius);
    }
    for &e in bones.joint_colliders {
        w.u16(e);
    }
    for n in names {
        w.str(n);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
