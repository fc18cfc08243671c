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
//! Like the jobs, it works in a buffer the caller owns ([`scratch_len`]), sized by the
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
    /// `scratch` is shorter than [`scratch_len`], or `part` or `order` shorter than the
    /// triangle list.
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

/// The length of the `u32` working buffer [`partition`] takes for `triangles` over
/// `num_joints` joints: per triangle, its joints missing from the part being filled and a slot
/// in the queue of triangles that fit for free; per joint, where its triangles start and
/// whether the part holds it; and each triangle once per joint it names.
#[must_use]
pub fn scratch_len(triangles: &[TriangleJoints], num_joints: usize) -> usize {
    2 * triangles.len() + 2 * num_joints + 1 + links(triangles)
}

/// The triangles' joint counts together: each triangle once per joint it names.
fn links(triangles: &[TriangleJoints]) -> usize {
    triangles.iter().map(|t| t.as_slice().len()).sum()
}

/// Assigns each of `triangles` (joints below `num_joints`) a part, `part[t]`, such that no
/// part's triangles together name more than `limit` joints, and writes to `order` the
/// triangles' indices part after part, each part's in their original order; returns the
/// number of parts. Parts are numbered in the order they are filled. `scratch` holds at least
/// [`scratch_len`] elements; `part` and `order` at least one per triangle.
///
/// # Errors
///
/// A [`PartitionError`] for a triangle that cannot fit, a joint out of range or short buffers;
/// `part` and `order` are then left partly written.
pub fn partition(
    triangles: &[TriangleJoints],
    num_joints: usize,
    limit: usize,
    scratch: &mut [u32],
    part: &mut [u16],
    order: &mut [u32],
) -> Result<usize, PartitionError> {
    let n = triangles.len();
    let mut rest = scratch;
    let (Some(missing), Some(ready), Some(start), Some(incidence), Some(in_part), Some(part), Some(order)) = (
        take(&mut rest, n),
        take(&mut rest, n),
        take(&mut rest, num_joints + 1),
        take(&mut rest, links(triangles)),
        take(&mut rest, num_joints),
        part.get_mut(..n),
        order.get_mut(..n),
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
    // Placing moves `start[j]` one slot per triangle of joint j, to joint j + 1's start:
    // rotating right by one joint restores the starts.
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
    start.rotate_right(1);
    if let Some(s) = start.first_mut() {
        *s = 0;
    }

    const UNASSIGNED: u16 = u16::MAX;
    part.fill(UNASSIGNED);
    let mut left = n;
    let mut parts = 0usize;
    while left > 0 {
        let id = u16::try_from(parts).ok().filter(|&p| p != UNASSIGNED).ok_or(PartitionError::TooManyParts)?;
        in_part.fill(0);
        let mut held = 0usize;
        let mut waiting = 0usize;
        for (t, tri) in triangles.iter().enumerate() {
            if part.get(t) == Some(&UNASSIGNED) {
                let m = tri.as_slice().len();
                if let Some(x) = missing.get_mut(t) {
                    *x = m as u32;
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
            let mut best: Option<(usize, u32)> = None;
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
                let Some(flag) = in_part.get_mut(j as usize).filter(|f| **f == 0) else { continue };
                *flag = 1;
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

    // The order: a counting sort by part, its counters in `missing` (parts ≤ triangles).
    let counts = missing.get_mut(..parts).unwrap_or_default();
    counts.fill(0);
    for &p in part.iter() {
        if let Some(c) = counts.get_mut(p as usize) {
            *c += 1;
        }
    }
    let mut sum = 0;
    for c in counts.iter_mut() {
        let k = *c;
        *c = sum;
        sum += k;
    }
    for (t, &p) in part.iter().enumerate() {
        if let Some(c) = counts.get_mut(p as usize) {
            if let Some(o) = order.get_mut(*c as usize) {
                *o = t as u32;
            }
            *c += 1;
        }
    }
    Ok(parts)
}

/// The first `len` elements of `rest`, which keeps the others.
fn take<'a>(rest: &mut &'a mut [u32], len: usize) -> Option<&'a mut [u32]> {
    let (head, tail) = core::mem::take(rest).split_at_mut_checked(len)?;
    *rest = tail;
    Some(head)
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
        let mut scratch = vec![0; scratch_len(tris, joints)];
        let (mut part, mut order) = (vec![0; tris.len()], vec![0; tris.len()]);
        let parts = partition(tris, joints, limit, &mut scratch, &mut part, &mut order)?;
        // `order` lists every triangle once, part after part, each part's in ascending order.
        let mut seen = order.clone();
        seen.sort_unstable();
        assert!(seen.iter().copied().eq(0..tris.len() as u32));
        assert!(order.windows(2).all(|w| (part[w[0] as usize], w[0]) < (part[w[1] as usize], w[1])));
        Ok((parts, part))
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
        let mut order = [0u32; 1];
        let mut short = vec![0; scratch_len(&tris, 3) - 1];
        assert_eq!(partition(&tris, 3, 4, &mut short, &mut part, &mut order), Err(PartitionError::BufferTooShort));
        let full = TriangleJoints { joints: [0; MAX_TRIANGLE_JOINTS], len: MAX_TRIANGLE_JOINTS as u8 };
        let mut t = full;
        assert!(t.insert(0));
        assert!(!t.insert(1));
    }
}
