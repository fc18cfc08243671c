//! The node hierarchy: the node graph checked to be a forest (no cycles, one parent per node,
//! scene roots that are roots), the nodes of the imported scenes ordered parents first, and one
//! [`RigJoint`] per node with a unique name and its rest transform (`matrix` nodes decomposed).

use sinew::math::{Quat, Transform, Vec3};

use super::accessors::Importer;
use super::error::GltfError;
use super::matrix::decompose;
use crate::import::names::{or_fallback, UniqueNames};
use crate::rig::RigJoint;

/// Largest relative difference between a `matrix` node and the TRS it is decomposed into that
/// still counts as an exact decomposition (f32 rounding of exported matrices stays far below).
const SHEAR_TOLERANCE: f64 = 1.0e-4;

/// The imported node forest.
pub(super) struct Hierarchy {
    /// Node index of each joint, parents first.
    pub(super) order: Vec<usize>,
    /// Joint index of each node, `None` for nodes outside the imported scenes.
    pub(super) joint_of_node: Vec<Option<usize>>,
    /// Parent node of each node.
    pub(super) parent: Vec<Option<usize>>,
}

impl Importer<'_> {
    /// The node forest of the imported scenes: every node's parent (checking that the graph is a
    /// forest) and the joint order, parents first. The caller has checked the node count against
    /// [`MAX_NODES`](super::MAX_NODES).
    pub(super) fn hierarchy(&mut self) -> Result<Hierarchy, GltfError> {
        let n = self.doc.nodes().len();
        let mut parent: Vec<Option<usize>> = vec![None; n];
        for node in self.doc.nodes() {
            for child in node.children() {
                let c = child.index();
                if c == node.index() {
                    return Err(GltfError::HierarchyCycle { node: c });
                }
                let slot = parent.get_mut(c).ok_or(GltfError::MultipleParents { node: c })?;
                if slot.is_some() {
                    return Err(GltfError::MultipleParents { node: c });
                }
                *slot = Some(node.index());
            }
        }
        // Every node has at most one parent, so following parents from any node either ends at
        // a root or loops: a loop is found when a walk meets a node of its own chain.
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            OnChain,
            Done,
        }
        let mut mark = vec![Mark::New; n];
        let mut chain = Vec::new();
        for start in 0..n {
            chain.clear();
            let mut cur = start;
            loop {
                match mark.get(cur).copied().unwrap_or(Mark::Done) {
                    Mark::Done => break,
                    Mark::OnChain => return Err(GltfError::HierarchyCycle { node: cur }),
                    Mark::New => {
                        if let Some(m) = mark.get_mut(cur) {
                            *m = Mark::OnChain;
                        }
                        chain.push(cur);
                        match parent.get(cur).copied().flatten() {
                            Some(p) => cur = p,
                            None => break,
                        }
                    }
                }
            }
            for &c in &chain {
                if let Some(m) = mark.get_mut(c) {
                    *m = Mark::Done;
                }
            }
        }

        // Scene roots.
        let mut roots = Vec::new();
        let mut is_root = vec![false; n];
        let scenes: Vec<gltf::Scene<'_>> = match self.doc.default_scene() {
            Some(s) => vec![s],
            None => self.doc.scenes().collect(),
        };
        if self.doc.default_scene().is_none() && scenes.len() > 1 {
            self.notes.push(format!("no default scene: the nodes of all {} scenes were imported", scenes.len()));
        }
        for scene in &scenes {
            for node in scene.nodes() {
                let i = node.index();
                if parent.get(i).copied().flatten().is_some() {
                    return Err(GltfError::NotARoot { scene: scene.index(), node: i });
                }
                if let Some(r) = is_root.get_mut(i) {
                    if !*r {
                        *r = true;
                        roots.push(i);
                    }
                }
            }
        }
        if scenes.is_empty() {
            roots = (0..n).filter(|&i| parent.get(i).copied().flatten().is_none()).collect();
            if n > 0 {
                self.notes.push("no scene: every root node was imported".into());
            }
        }

        // Depth-first, parents first, children in file order.
        let mut order = Vec::with_capacity(n);
        let mut joint_of_node = vec![None; n];
        let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
        while let Some(i) = stack.pop() {
            let Some(slot) = joint_of_node.get_mut(i) else { continue };
            if slot.is_some() {
                continue;
            }
            *slot = Some(order.len());
            order.push(i);
            if let Some(node) = self.doc.nodes().nth(i) {
                let children: Vec<usize> = node.children().map(|c| c.index()).collect();
                stack.extend(children.into_iter().rev());
            }
        }
        let left_out = n - order.len();
        if left_out > 0 {
            self.notes.push(format!("{left_out} nodes are not in the imported scene(s) and were left out"));
        }
        Ok(Hierarchy { order, joint_of_node, parent })
    }

    /// One [`RigJoint`] per imported node, in joint order, with a unique name and its rest
    /// transform.
    pub(super) fn joints(&mut self, h: &Hierarchy) -> Result<Vec<RigJoint>, GltfError> {
        let mut names = UniqueNames::default();
        let mut joints = Vec::with_capacity(h.order.len());
        for &i in &h.order {
            let Some(node) = self.doc.nodes().nth(i) else { continue };
            let name = names.make(or_fallback(node.name(), || format!("node{i}")), 1);
            let rest = self.node_rest(&node, &name)?;
            let parent = h.parent.get(i).copied().flatten().and_then(|p| h.joint_of_node.get(p).copied().flatten());
            joints.push(RigJoint { name, parent, rest });
        }
        if names.suffixed() > 0 {
            self.notes.push(format!("{} duplicate node names were made unique with a #n suffix", names.suffixed()));
        }
        Ok(joints)
    }

    /// A node's local transform as TRS.
    fn node_rest(&mut self, node: &gltf::Node<'_>, name: &str) -> Result<Transform<f32>, GltfError> {
        let i = node.index();
        let non_finite = |what: &str| GltfError::NonFinite { what: format!("node {i} ({name}) {what}") };
        match node.transform() {
            gltf::scene::Transform::Matrix { matrix } => {
                if !matrix.iter().flatten().all(|v| v.is_finite()) {
                    return Err(non_finite("matrix"));
                }
                let d = decompose(&matrix);
                if !d.transform.is_finite() {
                    return Err(non_finite("matrix decomposition"));
                }
                if d.projective {
                    self.notes.push(format!("node {i} ({name}): matrix has a projective row; it was ignored"));
                }
                if d.error > SHEAR_TOLERANCE {
                    self.notes.push(format!(
                        "node {i} ({name}): matrix is not translation-rotation-scale (shear); kept the closest TRS \
                         (relative error {:.3e})",
                        d.error
                    ));
                }
                Ok(d.transform)
            }
            gltf::scene::Transform::Decomposed { translation, rotation, scale } => {
                let t = Vec3::from_array(translation);
                let s = Vec3::from_array(scale);
                let q = Quat::from_array(rotation);
                if !t.is_finite() {
                    return Err(non_finite("translation"));
                }
                if !s.is_finite() {
                    return Err(non_finite("scale"));
                }
                if !q.is_finite() {
                    return Err(non_finite("rotation"));
                }
                let len = q.length_squared().sqrt();
                let q = if len.is_nan() || len <= 1.0e-6 || !len.is_finite() {
                    self.notes.push(format!("node {i} ({name}): zero rotation quaternion replaced by identity"));
                    Quat::IDENTITY
                } else {
                    if (len - 1.0).abs() > 1.0e-3 {
                        self.notes.push(format!("node {i} ({name}): rotation of length {len} was normalized"));
                    }
                    Quat::new(q.x / len, q.y / len, q.z / len, q.w / len)
                };
                Ok(Transform::new(t, q, s))
            }
        }
    }
}
