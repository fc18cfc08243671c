//! Skeletons: a validated joint hierarchy with its rest pose and joint names.
//!
//! Joints are stored parents-first (every parent index is smaller than its children's), the
//! order local-to-model needs; the constructor checks it and never reorders. The rest pose is
//! kept in SoA form, four joints per [`SoaTransform`].

use core::fmt;

use crate::limits::{MAX_JOINTS, MAX_NAME_LEN};
use crate::math::{SoaTransform, Transform};
use crate::real::Real;

/// A joint name (UTF-8, at most [`MAX_NAME_LEN`] bytes).
pub type JointName = heapless::String<MAX_NAME_LEN>;

/// Parent index of a root joint.
pub const NO_PARENT: i16 = -1;

/// Why [`Skeleton::new`] refused a hierarchy. Joint indices are those of the input slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkeletonError {
    /// More joints than the skeleton's capacity (its `SOA × 4`, at most [`MAX_JOINTS`]).
    TooManyJoints {
        /// Joints given.
        count: usize,
        /// Capacity.
        capacity: usize,
    },
    /// `parents`, `rest_pose` and `names` do not have the same length.
    LengthMismatch,
    /// A parent index is neither [`NO_PARENT`] nor a valid joint index.
    ParentOutOfRange {
        /// The child joint.
        joint: u16,
        /// Its parent index.
        parent: i16,
    },
    /// A joint's parent comes after it (the order must be parents-first; nothing is reordered).
    ParentAfterChild {
        /// The child joint.
        joint: u16,
        /// Its parent index.
        parent: u16,
    },
    /// Following parents from this joint comes back to it.
    Cycle {
        /// A joint on the cycle.
        joint: u16,
    },
    /// A rest translation, rotation or scale is NaN or infinite.
    NonFiniteRest {
        /// The joint.
        joint: u16,
    },
    /// A rest rotation is far from unit length (|q|² off by more than 0.01).
    NonUnitRotation {
        /// The joint.
        joint: u16,
    },
    /// Two joints share a non-empty name.
    DuplicateName {
        /// The later joint.
        joint: u16,
        /// The earlier joint with the same name.
        first: u16,
    },
    /// A name is longer than [`MAX_NAME_LEN`] bytes.
    NameTooLong {
        /// The joint.
        joint: u16,
    },
}

impl fmt::Display for SkeletonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::TooManyJoints { count, capacity } => {
                write!(f, "{count} joints exceed the skeleton capacity of {capacity}")
            }
            Self::LengthMismatch => f.write_str("parents, rest pose and names differ in length"),
            Self::ParentOutOfRange { joint, parent } => {
                write!(f, "joint {joint} has parent {parent}, which is not a joint")
            }
            Self::ParentAfterChild { joint, parent } => {
                write!(f, "joint {joint} has parent {parent}, which comes after it (parents must come first)")
            }
            Self::Cycle { joint } => write!(f, "joint {joint} is its own ancestor"),
            Self::NonFiniteRest { joint } => write!(f, "joint {joint} has a non-finite rest transform"),
            Self::NonUnitRotation { joint } => write!(f, "joint {joint} has a rest rotation that is not unit length"),
            Self::DuplicateName { joint, first } => write!(f, "joint {joint} has the same name as joint {first}"),
            Self::NameTooLong { joint } => write!(f, "joint {joint} has a name longer than {MAX_NAME_LEN} bytes"),
        }
    }
}

impl core::error::Error for SkeletonError {}

/// A joint hierarchy with capacity for `SOA × 4` joints, owning its data.
///
/// `SOA` is the capacity in SoA elements (see [`soa_count`](crate::limits::soa_count)); jobs
/// take a [`SkeletonView`] so they are not generic over it.
#[derive(Clone)]
pub struct Skeleton<R: Real, const SOA: usize> {
    num_joints: usize,
    parents: [[i16; 4]; SOA],
    rest_pose: [SoaTransform<R>; SOA],
    names: [[JointName; 4]; SOA],
}

impl<R: Real, const SOA: usize> fmt::Debug for Skeleton<R, SOA> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Skeleton")
            .field("num_joints", &self.num_joints)
            .field("parents", &self.parents())
            .field("names", &self.names())
            .finish_non_exhaustive()
    }
}

impl<R: Real, const SOA: usize> Skeleton<R, SOA> {
    /// Joint capacity.
    pub const CAPACITY: usize = SOA * 4;

    /// Builds a skeleton from per-joint parents ([`NO_PARENT`] for roots), rest transforms and
    /// names (empty names are allowed and not looked up). Rest rotations within tolerance of unit
    /// length are renormalized.
    ///
    /// # Errors
    ///
    /// [`SkeletonError`] for: more joints than `SOA × 4` (or [`MAX_JOINTS`]); slices of different
    /// lengths; a parent out of range, after its child, or on a cycle; a non-finite rest value or
    /// a rest rotation far from unit length; a name too long or used twice.
    ///
    /// # Examples
    ///
    /// An arm of three joints, each 0.3 m from its parent along +X:
    ///
    /// ```
    /// use sinew::math::{Quat, Transform, Vec3};
    /// use sinew::skeleton::{Skeleton, SkeletonError, NO_PARENT};
    ///
    /// let bone = Transform::new(Vec3::new(0.3, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE);
    /// let arm = Skeleton::<f32, 1>::new(
    ///     &[NO_PARENT, 0, 1],
    ///     &[Transform::IDENTITY, bone, bone],
    ///     &["shoulder", "elbow", "wrist"],
    /// )?;
    /// assert_eq!(arm.num_joints(), 3);
    /// assert_eq!(arm.num_soa_joints(), 1); // four joints per SoA element
    /// assert_eq!(arm.view().find("wrist"), Some(2));
    /// assert_eq!(arm.view().parent(2), Some(1));
    ///
    /// // Parents must come first: nothing is reordered.
    /// let err = Skeleton::<f32, 1>::new(&[1, NO_PARENT], &[Transform::IDENTITY; 2], &["child", "root"]);
    /// assert_eq!(err.unwrap_err(), SkeletonError::ParentAfterChild { joint: 0, parent: 1 });
    /// # Ok::<(), SkeletonError>(())
    /// ```
    pub fn new(parents: &[i16], rest_pose: &[Transform<R>], names: &[&str]) -> Result<Self, SkeletonError> {
        let n = parents.len();
        if n <= Self::CAPACITY && (rest_pose.len() != n || names.len() != n) {
            return Err(SkeletonError::LengthMismatch);
        }
        Self::from_fn(n, |i| {
            (
                parents.get(i).copied().unwrap_or(NO_PARENT),
                rest_pose.get(i).copied().unwrap_or(Transform::IDENTITY),
                names.get(i).copied().unwrap_or(""),
            )
        })
    }

    /// Builds a skeleton of `count` joints from a function giving each joint's parent, rest
    /// transform and name, without intermediate buffers (for decoding in place). Same rules
    /// and errors as [`Skeleton::new`] (except `LengthMismatch`).
    ///
    /// # Errors
    ///
    /// As [`Skeleton::new`].
    pub fn from_fn<'n>(
        count: usize,
        joint: impl FnMut(usize) -> (i16, Transform<R>, &'n str),
    ) -> Result<Self, SkeletonError> {
        let mut s = Self::EMPTY;
        s.rebuild(count, joint)?;
        Ok(s)
    }

    /// A skeleton with no joints (usable in a `const` or `static` initializer).
    pub const EMPTY: Self = {
        const NAME: JointName = JointName::new();
        const GROUP: [JointName; 4] = [NAME, NAME, NAME, NAME];
        Skeleton {
            num_joints: 0,
            parents: [[NO_PARENT; 4]; SOA],
            rest_pose: [SoaTransform::IDENTITY; SOA],
            names: [GROUP; SOA],
        }
    };

    /// Rebuilds this skeleton in place from `count` joints given by `joint` (as
    /// [`Skeleton::from_fn`]), without a temporary copy of the whole skeleton — for targets with
    /// little stack. On error the skeleton is left empty.
    ///
    /// # Errors
    ///
    /// As [`Skeleton::new`] (except `LengthMismatch`).
    pub fn rebuild<'n>(
        &mut self,
        count: usize,
        mut joint: impl FnMut(usize) -> (i16, Transform<R>, &'n str),
    ) -> Result<(), SkeletonError> {
        let r = self.fill(count, &mut joint);
        if r.is_err() {
            self.num_joints = 0;
        }
        r
    }

    fn fill<'n>(
        &mut self,
        count: usize,
        joint: &mut impl FnMut(usize) -> (i16, Transform<R>, &'n str),
    ) -> Result<(), SkeletonError> {
        const { assert!(SOA * 4 <= MAX_JOINTS, "skeleton capacity exceeds limits::MAX_JOINTS") };
        let n = count;
        let capacity = Self::CAPACITY;
        if n > capacity {
            return Err(SkeletonError::TooManyJoints { count: n, capacity });
        }
        let s = self;
        s.num_joints = n;
        for g in 0..SOA {
            s.parents[g] = [NO_PARENT; 4];
            s.rest_pose[g] = SoaTransform::IDENTITY;
            for name in s.names[g].iter_mut() {
                name.clear();
            }
        }
        let tol = R::ratio(1, 100);
        for i in 0..n {
            let (parent, mut t, name) = joint(i);
            let (g, l) = (i / 4, i % 4);
            s.parents[g][l] = parent;
            if !t.is_finite() {
                return Err(SkeletonError::NonFiniteRest { joint: i as u16 });
            }
            if !t.rotation.is_normalized(tol) {
                return Err(SkeletonError::NonUnitRotation { joint: i as u16 });
            }
            t.rotation = t.rotation.normalize();
            s.rest_pose[g].set_lane(l, &t);
            if s.names[g][l].push_str(name).is_err() {
                return Err(SkeletonError::NameTooLong { joint: i as u16 });
            }
        }
        let parents = s.parents();
        for (i, &p) in parents.iter().enumerate() {
            if p != NO_PARENT && (p < 0 || p as usize >= n) {
                return Err(SkeletonError::ParentOutOfRange { joint: i as u16, parent: p });
            }
        }
        for (i, &p) in parents.iter().enumerate() {
            if p == NO_PARENT || (p as usize) < i {
                continue;
            }
            // Walk up from the parent: coming back to `i` is a cycle, otherwise it is an order
            // error. Every walk is bounded by n steps.
            let mut j = p;
            for _ in 0..=n {
                if j == NO_PARENT {
                    break;
                }
                if j as usize == i {
                    return Err(SkeletonError::Cycle { joint: i as u16 });
                }
                j = parents.get(j as usize).copied().unwrap_or(NO_PARENT);
            }
            return Err(SkeletonError::ParentAfterChild { joint: i as u16, parent: p as u16 });
        }
        let names = s.names();
        for (i, name) in names.iter().enumerate() {
            if name.is_empty() {
                continue;
            }
            if let Some(first) = names[..i].iter().position(|o| o == name) {
                return Err(SkeletonError::DuplicateName { joint: i as u16, first: first as u16 });
            }
        }
        Ok(())
    }

    /// Number of joints.
    #[inline]
    #[must_use]
    pub fn num_joints(&self) -> usize {
        self.num_joints
    }
    /// Number of SoA elements the joints occupy: `ceil(num_joints / 4)`.
    #[inline]
    #[must_use]
    pub fn num_soa_joints(&self) -> usize {
        self.num_joints.div_ceil(4)
    }
    /// Parent index of every joint ([`NO_PARENT`] for roots); parents come first.
    #[inline]
    #[must_use]
    pub fn parents(&self) -> &[i16] {
        &self.parents.as_flattened()[..self.num_joints]
    }
    /// The rest pose, `num_soa_joints()` elements; padding lanes hold identity.
    #[inline]
    #[must_use]
    pub fn rest_pose(&self) -> &[SoaTransform<R>] {
        &self.rest_pose[..self.num_soa_joints()]
    }
    /// Joint names, `num_joints()` of them.
    #[inline]
    #[must_use]
    pub fn names(&self) -> &[JointName] {
        &self.names.as_flattened()[..self.num_joints]
    }
    /// A borrowed view for jobs.
    #[inline]
    #[must_use]
    pub fn view(&self) -> SkeletonView<'_, R> {
        SkeletonView { parents: self.parents(), rest_pose: self.rest_pose(), names: self.names() }
    }
}

/// A borrowed, validated skeleton: what jobs take, whatever the owner's capacity.
///
/// Only [`Skeleton::view`] makes one, so its invariants (parents-first order, lengths) hold.
#[derive(Clone, Copy, Debug)]
pub struct SkeletonView<'a, R> {
    parents: &'a [i16],
    rest_pose: &'a [SoaTransform<R>],
    names: &'a [JointName],
}

impl<'a, R: Real> SkeletonView<'a, R> {
    /// Number of joints.
    #[inline]
    #[must_use]
    pub fn num_joints(&self) -> usize {
        self.parents.len()
    }
    /// Number of SoA elements: `ceil(num_joints / 4)`.
    #[inline]
    #[must_use]
    pub fn num_soa_joints(&self) -> usize {
        self.rest_pose.len()
    }
    /// Parent of every joint ([`NO_PARENT`] for roots); parents come first.
    #[inline]
    #[must_use]
    pub fn parents(&self) -> &'a [i16] {
        self.parents
    }
    /// Parent of joint `joint`, or `None` for a root or an index out of range.
    #[inline]
    #[must_use]
    pub fn parent(&self, joint: usize) -> Option<usize> {
        match self.parents.get(joint) {
            Some(&p) if p >= 0 => Some(p as usize),
            _ => None,
        }
    }
    /// The rest pose in SoA form.
    #[inline]
    #[must_use]
    pub fn rest_pose(&self) -> &'a [SoaTransform<R>] {
        self.rest_pose
    }
    /// Rest transform of one joint.
    #[inline]
    #[must_use]
    pub fn rest_transform(&self, joint: usize) -> Option<Transform<R>> {
        if joint < self.num_joints() {
            self.rest_pose.get(joint / 4).map(|s| s.lane(joint % 4))
        } else {
            None
        }
    }
    /// Joint names.
    #[inline]
    #[must_use]
    pub fn names(&self) -> &'a [JointName] {
        self.names
    }
    /// Name of one joint.
    #[inline]
    #[must_use]
    pub fn name(&self, joint: usize) -> Option<&'a str> {
        self.names.get(joint).map(|s| s.as_str())
    }
    /// Index of the joint called `name` (empty names never match).
    #[must_use]
    pub fn find(&self, name: &str) -> Option<usize> {
        if name.is_empty() {
            return None;
        }
        self.names.iter().position(|n| n.as_str() == name)
    }
    /// True when `joint` is `ancestor` or one of its descendants.
    #[must_use]
    pub fn is_in_subtree(&self, joint: usize, ancestor: usize) -> bool {
        let mut j = joint;
        // Parents-first order: each step strictly decreases the index, so this terminates.
        loop {
            if j == ancestor {
                return true;
            }
            if j < ancestor {
                return false;
            }
            match self.parent(j) {
                Some(p) => j = p,
                None => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{Quat, Vec3};

    type S = Skeleton<f32, 2>;

    fn rest(n: usize) -> [Transform<f32>; 8] {
        let mut r = [Transform::IDENTITY; 8];
        for (i, t) in r.iter_mut().enumerate().take(n) {
            t.translation = Vec3::new(i as f32, 0.0, 0.0);
        }
        r
    }

    #[test]
    fn validity() {
        let r = rest(8);
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        // Too many joints for the capacity.
        assert_eq!(
            S::new(&[-1; 9], &[Transform::IDENTITY; 9], &names).err(),
            Some(SkeletonError::TooManyJoints { count: 9, capacity: 8 })
        );
        // Slices of different lengths.
        assert_eq!(S::new(&[-1, 0], &r[..1], &names[..2]).err(), Some(SkeletonError::LengthMismatch));
        assert_eq!(S::new(&[-1, 0], &r[..2], &names[..1]).err(), Some(SkeletonError::LengthMismatch));
        // Parent out of range.
        assert_eq!(
            S::new(&[-1, 5], &r[..2], &names[..2]).err(),
            Some(SkeletonError::ParentOutOfRange { joint: 1, parent: 5 })
        );
        assert_eq!(
            S::new(&[-1, -3], &r[..2], &names[..2]).err(),
            Some(SkeletonError::ParentOutOfRange { joint: 1, parent: -3 })
        );
        // Parent after child, no cycle.
        assert_eq!(
            S::new(&[-1, 2, 0], &r[..3], &names[..3]).err(),
            Some(SkeletonError::ParentAfterChild { joint: 1, parent: 2 })
        );
        // Self parent and longer cycles.
        assert_eq!(S::new(&[0], &r[..1], &names[..1]).err(), Some(SkeletonError::Cycle { joint: 0 }));
        assert_eq!(S::new(&[-1, 3, 1, 2], &r[..4], &names[..4]).err(), Some(SkeletonError::Cycle { joint: 1 }));
        // Non-finite rest values.
        let mut bad = r;
        bad[2].scale.y = f32::NAN;
        assert_eq!(S::new(&[-1, 0, 1], &bad[..3], &names[..3]).err(), Some(SkeletonError::NonFiniteRest { joint: 2 }));
        bad = r;
        bad[1].translation.x = f32::INFINITY;
        assert_eq!(S::new(&[-1, 0, 1], &bad[..3], &names[..3]).err(), Some(SkeletonError::NonFiniteRest { joint: 1 }));
        bad = r;
        bad[1].rotation = Quat::new(0.0, 0.0, 0.0, 2.0);
        assert_eq!(
            S::new(&[-1, 0, 1], &bad[..3], &names[..3]).err(),
            Some(SkeletonError::NonUnitRotation { joint: 1 })
        );
        // Names.
        assert_eq!(
            S::new(&[-1, 0, 0], &r[..3], &["a", "b", "a"]).err(),
            Some(SkeletonError::DuplicateName { joint: 2, first: 0 })
        );
        let long = "x".repeat(MAX_NAME_LEN + 1);
        assert_eq!(S::new(&[-1], &r[..1], &[long.as_str()]).err(), Some(SkeletonError::NameTooLong { joint: 0 }));
    }

    #[test]
    fn accessors_and_lookup() {
        let r = rest(6);
        let s = S::new(&[-1, 0, 1, 0, 3, -1], &r[..6], &["root", "a", "a1", "b", "b1", ""]).unwrap();
        let v = s.view();
        assert_eq!(v.num_joints(), 6);
        assert_eq!(v.num_soa_joints(), 2);
        assert_eq!(v.parents(), &[-1, 0, 1, 0, 3, -1]);
        assert_eq!(v.find("b1"), Some(4));
        assert_eq!(v.find(""), None);
        assert_eq!(v.find("zz"), None);
        assert_eq!(v.name(2), Some("a1"));
        assert_eq!(v.rest_transform(4).map(|t| t.translation.x), Some(4.0));
        assert_eq!(v.rest_transform(6), None);
        // Padding lanes are identity.
        assert_eq!(v.rest_pose()[1].lane(3), Transform::IDENTITY);
        assert!(v.is_in_subtree(4, 3));
        assert!(v.is_in_subtree(3, 3));
        assert!(!v.is_in_subtree(2, 3));
        assert!(!v.is_in_subtree(5, 0));
        assert_eq!(v.parent(0), None);
        assert_eq!(v.parent(4), Some(3));
        // Empty skeletons and duplicate empty names are fine.
        assert_eq!(S::new(&[], &[], &[]).map(|s| s.num_joints()), Ok(0));
        assert!(S::new(&[-1, -1], &r[..2], &["", ""]).is_ok());
    }
}
