//! Palette partitioning: a skinned mesh's triangles grouped into parts whose joint sets fit a
//! palette of at most `limit` joints, as a shader with a fixed uniform budget (GLES 2, WebGL 1)
//! draws them. Each part is one draw call, and a vertex used by triangles of several parts is
//! stored once per part, so fewer parts and fewer shared vertices are both better.
//!
//! [`partition`] fills one part at a time. It first takes every remaining triangle whose joints
//! are all in the part already (free: no palette entry), and when there is none it takes the
//! triangle that brings the fewest new joints and still fits, the lowest index among equals.
//! Taking the cheapest triangle first keeps neighbouring triangles, which share joints,
//! together; filling parts in triangle order instead opens a new part whenever the order
//! wanders across the body.
//!
//! Like the jobs, it works in buffers the caller owns ([`PartitionScratch`]), sized by the
//! triangle count and the joint count, and allocates nothing.

use crate::limits::MAX_INFLUENCES;

/// The most joints a triangle can name: three vertices of [`MAX_INFLUENCES`] each.
pub const MAX_TRIANGLE_JOINTS: usize = 3 * MAX_INFLUENCES;

/// The joints one triangle's vertices name with nonzero weights, each once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TriangleJoints {
    joints: [u16; MAX_TRIANGLE_JOINTS],
    len: u8,
}

impl Default for TriangleJoints {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl TriangleJoints {
    /// No joint (a triangle of a rigid part).
    pub const EMPTY: TriangleJoints = TriangleJoints { joints: [0; MAX_TRIANGLE_JOINTS], len: 0 };

    /// Adds joint `j` unless it is there already; false when [`MAX_TRIANGLE_JOINTS`] are there
    /// and `j` is not one of them.
    pub fn insert(&mut self, j: u16) -> bool {
        if self.as_slice().contains(&j) {
            return true;
        }
        let Some(slot) = self.joints.get_mut(self.len as usize) else { return false };
        *slot = j;
        self.len += 1;
        true
    }

    /// The joints, in the order they were added.
    #[must_use]
    pub fn as_slice(&self) -> &[u16] {
        self.joints.get(..self.len as usize).unwrap_or(&[])
    }
}

/// Why [`partition`] could not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionError {
    /// A triangle names more joints than a part may hold.
    TriangleTooLarge {
        /// The triangle.
        triangle: usize,
        /// Its joint count.
        joints: usize,
        /// The part limit.
        limit: usize,
    },
    /// A triangle names a joint at or past the joint count given.
    JointOutOfRange {
        /// The triangle.
        triangle: usize,
        /// The joint.
        joint: u16,
    },
    /// A buffer is shorter than [`PartitionScratch::lengths`] asks, or `part` is shorter than
    /// the triangle list.
    BufferTooShort,
    /// More parts than a `u16` part index names.
    TooManyParts,
}

impl core::fmt::Display for PartitionError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            PartitionError::TriangleTooLarge { triangle, joints, limit } => {
                write!(f, "triangle {triangle} uses {joints} joints, more than a palette of {limit} holds")
            }
            PartitionError::JointOutOfRange { triangle, joint } => {
                write!(f, "triangle {triangle} names joint {joint}, past the joint count")
            }
            PartitionError::BufferTooShort => f.write_str("a partition buffer is too short"),
            PartitionError::TooManyParts => f.write_str("more than 65536 parts"),
        }
    }
}

/// The working buffers of [`partition`]; their lengths come from [`PartitionScratch::lengths`].
#[derive(Debug)]
pub struct PartitionScratch<'a> {
    /// Per triangle: its joints not yet in the part being filled.
    pub missing: &'a mut [u8],
    /// Per triangle: the triangles that fit the part for free, waiting to be taken.
    pub ready: &'a mut [u32],
    /// Per joint, plus one: where its triangles start in `incidence`.
    pub start: &'a mut [u32],
    /// The triangles of each joint, joint after joint: as long as all triangles' joint counts
    /// together.
    pub incidence: &'a mut [u32],
    /// Per joint: whether the part being filled holds it.
    pub in_part: &'a mut [bool],
}

impl PartitionScratch<'_> {
    /// The lengths of `missing` (= `ready`), `start`, `incidence` and `in_part` for
    /// `triangles` over `num_joints` joints.
    #[must_use]
    pub fn lengths(triangles: &[TriangleJoints], num_joints: usize) -> [usize; 4] {
        let incidence = triangles.iter().map(|t| t.as_slice().len()).sum();
        [triangles.len(), num_joints + 1, incidence, num_joints]
    }
}

/// Assigns each of `triangles` (joints below `num_joints`) a part, `part[t]`, such that no
/// part's triangles together name more than `limit` joints; returns the number of parts.
/// Parts are numbered in the order they are filled; a caller keeps each part's triangles in
/// their original order by walking the triangles and appending each to its part.
///
/// # Errors
///
/// A [`PartitionError`] for a triangle that cannot fit, a joint out of range or short buffers;
/// `part` is then left partly written.
pub fn partition(
    triangles: &[TriangleJoints],
    num_joints: usize,
    limit: usize,
    scratch: PartitionScratch<'_>,
    part: &mut [u16],
) -> Result<usize, PartitionError> {
    let PartitionScratch { missing, ready, start, incidence, in_part } = scratch;
    let n = triangles.len();
    let [_, starts, links, _] = PartitionScratch::lengths(triangles, num_joints);
    let (Some(missing), Some(ready), Some(start), Some(incidence), Some(in_part), Some(part)) = (
        missing.get_mut(..n),
        ready.get_mut(..n),
        start.get_mut(..starts),
        incidence.get_mut(..links),
        in_part.get_mut(..num_joints),
        part.get_mut(..n),
    ) else {
        return Err(PartitionError::BufferTooShort);
    };

    // Each joint's triangles, by counting then placing (`start[j + 1]` counts joint j first).
    start.fill(0);
    for (t, tri) in triangles.iter().enumerate() {
        let joints = tri.as_slice();
        if joints.len() > limit {
            return Err(PartitionError::TriangleTooLarge { triangle: t, joints: joints.len(), limit });
        }
        for &j in joints {
            match start.get_mut(j as usize + 1).filter(|_| (j as usize) < num_joints) {
                Some(c) => *c += 1,
                None => return Err(PartitionError::JointOutOfRange { triangle: t, joint: j }),
            }
        }
    }
    let mut sum = 0;
    for s in start.iter_mut() {
        sum += *s;
        *s = sum;
    }
    // `start[j]` is where joint j's triangles go; it moves one slot per triangle placed and
    // ends at joint j + 1's start, so the placing pass shifts `start` down one joint.
    for (t, tri) in triangles.iter().enumerate() {
        for &j in tri.as_slice() {
            if let Some(at) = start.get_mut(j as usize) {
                if let Some(slot) = incidence.get_mut(*at as usize) {
                    *slot = t as u32;
                }
                *at += 1;
            }
        }
    }
    for j in (1..starts).rev() {
        if let Some(&prev) = start.get(j - 1) {
            if let Some(s) = start.get_mut(j) {
                *s = prev;
            }
        }
    }
    if let Some(s) = start.first_mut() {
        *s = 0;
    }

    const UNASSIGNED: u16 = u16::MAX;
    part.fill(UNASSIGNED);
    let mut left = n;
    let mut parts = 0usize;
    while left > 0 {
        let id = u16::try_from(parts).ok().filter(|&p| p != UNASSIGNED).ok_or(PartitionError::TooManyParts)?;
        in_part.fill(false);
        let mut held = 0usize;
        let mut waiting = 0usize;
        for (t, tri) in triangles.iter().enumerate() {
            if part.get(t) == Some(&UNASSIGNED) {
                let m = tri.as_slice().len();
                if let Some(x) = missing.get_mut(t) {
                    *x = m as u8;
                }
                if m == 0 {
                    if let Some(r) = ready.get_mut(waiting) {
                        *r = t as u32;
                        waiting += 1;
                    }
                }
            }
        }
        loop {
            // Free triangles first.
            while waiting > 0 {
                waiting -= 1;
                let t = ready.get(waiting).copied().unwrap_or(0) as usize;
                if let Some(p) = part.get_mut(t).filter(|p| **p == UNASSIGNED) {
                    *p = id;
                    left -= 1;
                }
            }
            // Then the triangle bringing the fewest new joints that still fit.
            let room = limit - held;
            let mut best: Option<(usize, u8)> = None;
            for (t, (&p, &m)) in part.iter().zip(missing.iter()).enumerate() {
                if p == UNASSIGNED && (m as usize) <= room && best.is_none_or(|(_, bm)| m < bm) {
                    best = Some((t, m));
                    if m == 1 {
                        break;
                    }
                }
            }
            let Some((t, _)) = best else { break };
            for &j in triangles.get(t).map_or(&[][..], TriangleJoints::as_slice) {
                let Some(flag) = in_part.get_mut(j as usize).filter(|f| !**f) else { continue };
                *flag = true;
                held += 1;
                let (a, b) = (start.get(j as usize).copied(), start.get(j as usize + 1).copied());
                let users = incidence.get(a.unwrap_or(0) as usize..b.unwrap_or(0) as usize).unwrap_or(&[]);
                for &u in users {
                    let u = u as usize;
                    if part.get(u) != Some(&UNASSIGNED) {
                        continue;
                    }
                    if let Some(m) = missing.get_mut(u) {
                        *m = m.saturating_sub(1);
                        if *m == 0 {
                            if let Some(r) = ready.get_mut(waiting) {
                                *r = u as u32;
                                waiting += 1;
                            }
                        }
                    }
                }
            }
        }
        parts += 1;
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    use super::*;

    fn sets(tris: &[&[u16]]) -> Vec<TriangleJoints> {
        tris.iter()
            .map(|js| {
                let mut t = TriangleJoints::EMPTY;
                for &j in *js {
                    assert!(t.insert(j));
                }
                t
            })
            .collect()
    }

    fn run(tris: &[TriangleJoints], joints: usize, limit: usize) -> Result<(usize, Vec<u16>), PartitionError> {
        let [n, s, i, j] = PartitionScratch::lengths(tris, joints);
        let (mut missing, mut ready, mut start, mut incidence, mut in_part) =
            (vec![0; n], vec![0; n], vec![0; s], vec![0; i], vec![false; j]);
        let mut part = vec![0; n];
        let scratch = PartitionScratch {
            missing: &mut missing,
            ready: &mut ready,
            start: &mut start,
            incidence: &mut incidence,
            in_part: &mut in_part,
        };
        partition(tris, joints, limit, scratch, &mut part).map(|p| (p, part))
    }

    /// Every triangle in exactly one part, and every part within the limit.
    fn check(tris: &[TriangleJoints], joints: usize, limit: usize, parts: usize, part: &[u16]) {
        for p in 0..parts {
            let mut used = vec![false; joints];
            for (t, _) in part.iter().enumerate().filter(|(_, &q)| q as usize == p) {
                for &j in tris[t].as_slice() {
                    used[j as usize] = true;
                }
            }
            let count = used.iter().filter(|&&u| u).count();
            assert!(count <= limit, "part {p} holds {count} joints");
            assert!(part.iter().any(|&q| q as usize == p), "part {p} is empty");
        }
        assert!(part.iter().all(|&q| (q as usize) < parts));
    }

    #[test]
    fn one_part_when_everything_fits() {
        let tris = sets(&[&[0, 1], &[1, 2], &[], &[2, 3, 0]]);
        let (parts, part) = run(&tris, 4, 4).unwrap();
        assert_eq!(parts, 1);
        assert_eq!(part, [0, 0, 0, 0]);
    }

    #[test]
    fn interleaved_limbs_take_two_parts_not_one_per_switch() {
        // Triangles alternate between an arm (joints 0–3) and a leg (joints 4–7): filled in
        // order, every triangle would open a part; grouped by shared joints, two suffice.
        let arm: &[&[u16]] = &[&[0, 1], &[1, 2], &[2, 3]];
        let leg: &[&[u16]] = &[&[4, 5], &[5, 6], &[6, 7]];
        let order: Vec<&[u16]> = arm.iter().zip(leg).flat_map(|(a, b)| [*a, *b]).collect();
        let tris = sets(&order);
        let (parts, part) = run(&tris, 8, 4).unwrap();
        assert_eq!(parts, 2);
        check(&tris, 8, 4, parts, &part);
        assert_eq!(part, [0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn random_meshes_keep_the_limit_and_cover_every_triangle() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for round in 0..50 {
            let joints = 4 + next(60) as usize;
            let limit = 12 + next(20) as usize;
            let n = 1 + next(400) as usize;
            let tris: Vec<TriangleJoints> = (0..n)
                .map(|_| {
                    let mut t = TriangleJoints::EMPTY;
                    let base = next(joints as u64) as u16;
                    for _ in 0..next(13) {
                        let j = (base as u64 + next(6)) % joints as u64;
                        t.insert(j as u16);
                    }
                    t
                })
                .collect();
            let (parts, part) = run(&tris, joints, limit).unwrap_or_else(|e| panic!("round {round}: {e}"));
            check(&tris, joints, limit, parts, &part);
        }
    }

    #[test]
    fn refuses_what_cannot_fit() {
        let tris = sets(&[&[0, 1, 2]]);
        assert_eq!(run(&tris, 3, 2), Err(PartitionError::TriangleTooLarge { triangle: 0, joints: 3, limit: 2 }));
        assert_eq!(run(&tris, 2, 4), Err(PartitionError::JointOutOfRange { triangle: 0, joint: 2 }));
        let mut part = [0u16; 1];
        let scratch =
            PartitionScratch { missing: &mut [], ready: &mut [], start: &mut [], incidence: &mut [], in_part: &mut [] };
        assert_eq!(partition(&tris, 3, 4, scratch, &mut part), Err(PartitionError::BufferTooShort));
        let full = TriangleJoints { joints: [0; MAX_TRIANGLE_JOINTS], len: MAX_TRIANGLE_JOINTS as u8 };
        let mut t = full;
        assert!(t.insert(0));
        assert!(!t.insert(1));
    }
}
