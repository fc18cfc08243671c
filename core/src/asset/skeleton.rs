//! The skeleton section: parents-first joints, rest transforms and names.

use crate::format::reader::{le_f32, le_u16, Reader};
use crate::format::ParseError;
use crate::limits::{MAX_JOINTS, MAX_NAME_LEN};
use crate::math::{Quat, Transform, Vec3};
use crate::real::Real;
use crate::skeleton::{Skeleton, SkeletonError, NO_PARENT};

/// The skeleton section of an asset.
#[derive(Debug, Clone, Copy)]
pub struct SkeletonData<'a> {
    body: &'a [u8],
    joints: usize,
}

impl<'a> SkeletonData<'a> {
    pub(super) fn parse(body: &'a [u8], sec: u16) -> Result<Self, ParseError> {
        let mut r = Reader::for_section(body, sec);
        let n = r.u16()? as usize;
        if n > MAX_JOINTS {
            return Err(ParseError::Skeleton(SkeletonError::TooManyJoints { count: n, capacity: MAX_JOINTS }));
        }
        let parents = r.bytes(n * 2)?;
        let parent = |i: usize| le_u16(parents, i * 2) as i16;
        for i in 0..n {
            let p = parent(i);
            if p != NO_PARENT && (p < 0 || p as usize >= n) {
                return Err(ParseError::Skeleton(SkeletonError::ParentOutOfRange { joint: i as u16, parent: p }));
            }
            if p >= 0 && p as usize >= i {
                // Distinguish a cycle from an order error, walking at most n steps.
                let mut j = p;
                for _ in 0..=n {
                    if j < 0 {
                        break;
                    }
                    if j as usize == i {
                        return Err(ParseError::Skeleton(SkeletonError::Cycle { joint: i as u16 }));
                    }
                    j = parent(j as usize);
                }
                return Err(ParseError::Skeleton(SkeletonError::ParentAfterChild {
                    joint: i as u16,
                    parent: p as u16,
                }));
            }
        }
        // Rest values must be finite; unit rotations are checked when a Skeleton is built.
        for i in 0..n {
            for _ in 0..10 {
                r.finite_f32().map_err(|e| match e {
                    ParseError::Truncated => e,
                    _ => ParseError::Skeleton(SkeletonError::NonFiniteRest { joint: i as u16 }),
                })?;
            }
        }
        for i in 0..n {
            let s = r.str().map_err(|e| match e {
                ParseError::Truncated => ParseError::Truncated,
                _ => ParseError::BadName { section: sec },
            })?;
            if s.len() > MAX_NAME_LEN {
                return Err(ParseError::Skeleton(SkeletonError::NameTooLong { joint: i as u16 }));
            }
        }
        if r.pos() != body.len() {
            return Err(ParseError::BadSection { section: sec });
        }
        // Duplicate names (non-empty), quadratic in the joint count, once at load. Names are
        // walked with running offsets (looking each one up from the start would be cubic).
        let names = body.get(2 + n * 42..).unwrap_or(&[]);
        let name_at = |at: usize| {
            let len = names.get(at).copied().unwrap_or(0) as usize;
            names.get(at + 1..at + 1 + len).unwrap_or(&[])
        };
        let mut at_i = 0;
        for i in 0..n {
            let a = name_at(at_i);
            at_i += 1 + a.len();
            if a.is_empty() {
                continue;
            }
            let mut at_j = 0;
            for j in 0..i {
                let b = name_at(at_j);
                at_j += 1 + b.len();
                if a == b {
                    return Err(ParseError::Skeleton(SkeletonError::DuplicateName {
                        joint: i as u16,
                        first: j as u16,
                    }));
                }
            }
        }
        Ok(SkeletonData { body, joints: n })
    }

    /// The section of a file [`Asset::parse`](super::Asset::parse) accepted, without checks.
    pub(super) fn view(body: &'a [u8]) -> Self {
        SkeletonData { body, joints: le_u16(body, 0) as usize }
    }

    /// Number of joints.
    #[must_use]
    pub fn num_joints(&self) -> usize {
        self.joints
    }
    /// Parent of joint `i` ([`NO_PARENT`] for a root).
    #[must_use]
    pub fn parent(&self, i: usize) -> i16 {
        le_u16(self.body, 2 + i * 2) as i16
    }
    /// Rest transform of joint `i`.
    #[must_use]
    pub fn rest<R: Real>(&self, i: usize) -> Transform<R> {
        let at = 2 + self.joints * 2 + i * 40;
        let f = |k: usize| R::from_f32(le_f32(self.body, at + 4 * k));
        Transform {
            translation: Vec3::new(f(0), f(1), f(2)),
            rotation: Quat::new(f(3), f(4), f(5), f(6)),
            scale: Vec3::new(f(7), f(8), f(9)),
        }
    }
    /// Name of joint `i`.
    #[must_use]
    pub fn name(&self, i: usize) -> Option<&'a str> {
        let mut at = 2 + self.joints * 42;
        let mut k = 0;
        loop {
            let len = *self.body.get(at)? as usize;
            let s = self.body.get(at + 1..at + 1 + len)?;
            if k == i {
                return core::str::from_utf8(s).ok();
            }
            at += 1 + len;
            k += 1;
        }
    }
    /// Builds an owned [`Skeleton`] with capacity `SOA × 4`.
    ///
    /// # Errors
    ///
    /// [`SkeletonError::TooManyJoints`] when the capacity is too small, and
    /// [`SkeletonError::NonUnitRotation`] for a rest rotation far from unit length; the other
    /// rules were checked by [`Asset::parse`](super::Asset::parse).
    pub fn to_skeleton<R: Real, const SOA: usize>(&self) -> Result<Skeleton<R, SOA>, SkeletonError> {
        // Names are looked up by walking; keep a running offset to stay linear.
        let mut name_at = 2 + self.joints * 42;
        Skeleton::from_fn(self.joints, |i| {
            let len = self.body.get(name_at).copied().unwrap_or(0) as usize;
            let name = self.body.get(name_at + 1..name_at + 1 + len).and_then(|s| core::str::from_utf8(s).ok());
            name_at += 1 + len;
            (self.parent(i), self.rest(i), name.unwrap_or(""))
        })
    }
}
