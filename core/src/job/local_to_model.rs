//! Local-to-model: walks the hierarchy and turns local transforms into model-space matrices.

use crate::job::JobError;
use crate::limits::MAX_JOINTS;
use crate::math::{Mat4, SoaTransform};
use crate::real::Real;
use crate::skeleton::SkeletonView;

/// Computes model-space matrices `model[j] = model[parent(j)] × local[j]` (roots use `root`).
///
/// With `from` set, only that joint and its descendants are recomputed (a partial update after
/// editing a subtree, e.g. by IK); the other outputs must already hold valid matrices, since
/// `from`'s parent is read from `output`. `to` stops the walk after that joint index.
#[derive(Debug)]
pub struct LocalToModelJob<'a, R: Real> {
    /// The hierarchy; defines how many joints are processed.
    pub skeleton: SkeletonView<'a, R>,
    /// Model matrix of the roots' parent; `None` means identity.
    pub root: Option<&'a Mat4<R>>,
    /// Local transforms, at least `skeleton.num_soa_joints()` elements.
    pub input: &'a [SoaTransform<R>],
    /// Model matrices, at least `skeleton.num_joints()` long; extra entries are untouched.
    pub output: &'a mut [Mat4<R>],
    /// Root of the subtree to update (`None`: every joint). Must be a valid joint index.
    pub from: Option<usize>,
    /// Last joint index to update, inclusive (`None`: the last joint). At least `from`.
    pub to: Option<usize>,
}

impl<R: Real> LocalToModelJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// [`JobError::InputTooSmall`] when `input` has fewer than `num_soa_joints()` elements,
    /// [`JobError::OutputTooSmall`] when `output` has fewer than `num_joints()` matrices,
    /// [`JobError::InvalidRange`] when `from` or `to` is not a joint index or `to < from`.
    pub fn validate(&self) -> Result<(), JobError> {
        let n = self.skeleton.num_joints();
        let mut ok = true;
        if self.input.len() < self.skeleton.num_soa_joints() {
            return Err(JobError::InputTooSmall);
        }
        if self.output.len() < n {
            return Err(JobError::OutputTooSmall);
        }
        if let Some(f) = self.from {
            ok &= f < n;
        }
        if let Some(t) = self.to {
            ok &= t < n;
            ok &= t >= self.from.unwrap_or(0);
        }
        if ok {
            Ok(())
        } else {
            Err(JobError::InvalidRange)
        }
    }

    /// Validates, then computes the model matrices.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let n = self.skeleton.num_joints();
        if n == 0 {
            return Ok(());
        }
        let parents = self.skeleton.parents();
        let root = self.root.copied().unwrap_or(Mat4::IDENTITY);
        let start = self.from.unwrap_or(0);
        let end = self.to.unwrap_or(n - 1);
        // Descendant bits of `from`; unused when every joint is processed.
        let mut in_subtree = [0u32; MAX_JOINTS / 32];
        let subtree = self.from.is_some();

        let mut group = usize::MAX;
        let mut local = [[[R::ZERO; 4]; 3]; 4];
        for i in start..=end {
            let parent = parents[i];
            if subtree {
                let member =
                    i == start || (parent >= 0 && in_subtree[parent as usize / 32] & (1 << (parent % 32)) != 0);
                if !member {
                    continue;
                }
                in_subtree[i / 32] |= 1 << (i % 32);
            }
            if i / 4 != group {
                group = i / 4;
                local = self.input[group].to_affine_soa();
            }
            let parent_m = if parent < 0 { root } else { self.output[parent as usize] };
            self.output[i] = mul_affine_lane(&parent_m, &local, i % 4);
        }
        Ok(())
    }
}

/// `p × l` where `l` is lane `lane` of an SoA affine matrix (last row 0, 0, 0, 1).
#[inline(always)]
fn mul_affine_lane<R: Real>(p: &Mat4<R>, l: &[[[R; 4]; 3]; 4], lane: usize) -> Mat4<R> {
    let pc = &p.cols;
    let mut o = Mat4::ZERO;
    for c in 0..4 {
        let (a, b, d) = (l[c][0][lane], l[c][1][lane], l[c][2][lane]);
        for r in 0..4 {
            o.cols[c][r] = pc[0][r] * a + pc[1][r] * b + pc[2][r] * d;
        }
    }
    for r in 0..4 {
        o.cols[3][r] += pc[3][r];
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{Quat, Transform, Vec3};
    use crate::skeleton::Skeleton;

    fn skeleton() -> Skeleton<f32, 2> {
        // 0 ─ 1 ─ 2
        //  └─ 3 ─ 4
        // 5 (second root)
        let mut rest = [Transform::IDENTITY; 6];
        for (i, t) in rest.iter_mut().enumerate() {
            t.translation = Vec3::new(1.0, i as f32, 0.0);
            t.rotation = Quat::from_axis_angle(Vec3::Z, 0.1 * i as f32);
            t.scale = Vec3::new(1.0, 1.0 + 0.1 * i as f32, 1.0);
        }
        Skeleton::new(&[-1, 0, 1, 0, 3, -1], &rest, &["0", "1", "2", "3", "4", "5"]).unwrap()
    }

    fn reference(s: &Skeleton<f32, 2>, root: Mat4<f32>) -> [Mat4<f32>; 6] {
        let mut out = [Mat4::IDENTITY; 6];
        let v = s.view();
        for i in 0..6 {
            let local = v.rest_transform(i).unwrap().to_mat4();
            out[i] = match v.parent(i) {
                Some(p) => out[p] * local,
                None => root * local,
            };
        }
        out
    }

    #[test]
    fn validity() {
        let s = skeleton();
        let sentinel = Mat4::from_cols_array(&[7.0; 16]);
        let input = [SoaTransform::IDENTITY; 2];
        // Input too small.
        let mut out = [sentinel; 6];
        let mut job = LocalToModelJob {
            skeleton: s.view(),
            root: None,
            input: &input[..1],
            output: &mut out,
            from: None,
            to: None,
        };
        assert_eq!(job.validate(), Err(JobError::InputTooSmall));
        assert_eq!(job.run(), Err(JobError::InputTooSmall));
        assert!(out.iter().all(|m| *m == sentinel));
        // Output too small.
        let mut out = [sentinel; 5];
        let mut job =
            LocalToModelJob { skeleton: s.view(), root: None, input: &input, output: &mut out, from: None, to: None };
        assert_eq!(job.run(), Err(JobError::OutputTooSmall));
        assert!(out.iter().all(|m| *m == sentinel));
        // from / to out of range, or to before from.
        for (from, to) in [(Some(6), None), (None, Some(6)), (Some(3), Some(2))] {
            let mut out = [sentinel; 6];
            let mut job = LocalToModelJob { skeleton: s.view(), root: None, input: &input, output: &mut out, from, to };
            assert_eq!(job.validate(), Err(JobError::InvalidRange));
            assert_eq!(job.run(), Err(JobError::InvalidRange));
            assert!(out.iter().all(|m| *m == sentinel));
        }
        // Longer output: extra entries untouched.
        let mut out = [sentinel; 8];
        let mut job = LocalToModelJob {
            skeleton: s.view(),
            root: None,
            input: s.rest_pose(),
            output: &mut out,
            from: None,
            to: None,
        };
        assert_eq!(job.run(), Ok(()));
        assert_eq!(out[6], sentinel);
        assert_eq!(out[7], sentinel);
    }

    #[test]
    fn matches_matrix_reference_with_root() {
        let s = skeleton();
        let root = Mat4::from_trs(Vec3::new(0.0, 0.0, 5.0), Quat::from_axis_angle(Vec3::Y, 0.7), Vec3::splat(2.0));
        let mut out = [Mat4::ZERO; 6];
        LocalToModelJob {
            skeleton: s.view(),
            root: Some(&root),
            input: s.rest_pose(),
            output: &mut out,
            from: None,
            to: None,
        }
        .run()
        .unwrap();
        let e = reference(&s, root);
        for (a, b) in out.iter().zip(e.iter()) {
            for (x, y) in a.to_cols_array().iter().zip(b.to_cols_array().iter()) {
                assert!((x - y).abs() < 1.0e-5, "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn subtree_update_touches_only_the_subtree() {
        let s = skeleton();
        let mut full = [Mat4::ZERO; 6];
        LocalToModelJob {
            skeleton: s.view(),
            root: None,
            input: s.rest_pose(),
            output: &mut full,
            from: None,
            to: None,
        }
        .run()
        .unwrap();
        // Edit joint 3's local transform, update from 3: only 3 and 4 change.
        let mut pose = [SoaTransform::IDENTITY; 2];
        pose.copy_from_slice(s.rest_pose());
        let mut t = pose[0].lane(3);
        t.rotation = Quat::from_axis_angle(Vec3::X, 1.0);
        pose[0].set_lane(3, &t);
        let mut part = full;
        LocalToModelJob { skeleton: s.view(), root: None, input: &pose, output: &mut part, from: Some(3), to: None }
            .run()
            .unwrap();
        let mut again = [Mat4::ZERO; 6];
        LocalToModelJob { skeleton: s.view(), root: None, input: &pose, output: &mut again, from: None, to: None }
            .run()
            .unwrap();
        for i in 0..6 {
            if i == 3 || i == 4 {
                assert_ne!(part[i], full[i]);
            } else {
                assert_eq!(part[i], full[i]);
            }
            assert_eq!(part[i], again[i]);
        }
        // `to` stops early.
        let mut capped = [Mat4::ZERO; 6];
        LocalToModelJob { skeleton: s.view(), root: None, input: &pose, output: &mut capped, from: None, to: Some(2) }
            .run()
            .unwrap();
        assert_eq!(capped[2], again[2]);
        assert_eq!(capped[3], Mat4::ZERO);
    }
}
