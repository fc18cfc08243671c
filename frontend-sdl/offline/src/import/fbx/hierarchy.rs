//! The node hierarchy: every node below ufbx's root (and the root itself when it carries a
//! transform) as a [`RigJoint`], parents first (depth-first, children in file order), with a
//! unique name and the local transform ufbx evaluates without animation. ufbx's unnamed helper
//! nodes are named after their parent: `<parent> geometry` (a geometric transform) and
//! `<parent> scale` (scale inheritance).

use super::error::FbxError;
use super::scene::{is_identity, transform, Importer};
use crate::import::names::{or_fallback, UniqueNames};
use crate::rig::RigJoint;

/// Name of ufbx's root node when it becomes a joint (the root has no name in the file).
const ROOT_NAME: &str = "RootNode";

impl<'s> Importer<'s> {
    /// The joints, filling [`Importer::joint_of_node`] and [`Importer::nodes`].
    pub(super) fn joints(&mut self) -> Result<Vec<RigJoint>, FbxError> {
        let scene = self.scene;
        let root: &'s ufbx::Node = &scene.root_node;
        let mut stack: Vec<(&'s ufbx::Node, Option<usize>)> = Vec::new();
        if is_identity(&root.node_to_parent) {
            stack.extend(root.children.as_ref().iter().rev().map(|c| (&**c, None)));
        } else {
            stack.push((root, None));
        }
        let mut names = UniqueNames::default();
        let mut joints = Vec::new();
        while let Some((node, parent)) = stack.pop() {
            let Some(slot) = self.joint_of_node.get_mut(node.element.typed_id as usize) else { continue };
            if slot.is_some() {
                continue;
            }
            let j = joints.len();
            *slot = Some(j);
            let parent_name = parent.and_then(|p| joints.get(p)).map_or("", |p: &RigJoint| p.name.as_str());
            let base = if node.is_root {
                ROOT_NAME.to_owned()
            } else if node.is_geometry_transform_helper && node.element.name.is_empty() {
                format!("{parent_name} geometry")
            } else if node.is_scale_helper && node.element.name.is_empty() {
                format!("{parent_name} scale")
            } else {
                or_fallback(Some(&node.element.name), || format!("node{}", node.element.typed_id))
            };
            let name = names.make(base, 1);
            let rest = transform(&node.local_transform)
                .ok_or_else(|| FbxError::NonFinite { what: format!("the transform of node {name:?}") })?;
            joints.push(RigJoint { name, parent, rest });
            self.nodes.push(node);
            stack.extend(node.children.as_ref().iter().rev().map(|c| (&**c, Some(j))));
        }
        if names.suffixed() > 0 {
            self.notes.push(format!("{} duplicate node names were made unique with a #n suffix", names.suffixed()));
        }
        let outside = scene.nodes.len().saturating_sub(joints.len() + usize::from(is_identity(&root.node_to_parent)));
        if outside > 0 {
            self.notes.push(format!("{outside} nodes are not below the scene's root and were left out"));
        }
        let helpers = self.nodes.iter().filter(|n| n.is_geometry_transform_helper || n.is_scale_helper).count();
        if helpers > 0 {
            self.notes.push(format!(
                "{helpers} helper nodes added for geometric transforms of instanced meshes or for scale inheritance"
            ));
        }
        Ok(joints)
    }
}
