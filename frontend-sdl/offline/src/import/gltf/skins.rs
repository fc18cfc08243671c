//! Skins: each glTF skin mapped onto the rig's joints, with its inverse bind matrices (identity
//! when the file has none).

use sinew::math::Mat4;

use super::accessors::{Importer, MAT4_F32};
use super::error::GltfError;
use super::hierarchy::Hierarchy;
use crate::import::names::{or_fallback, UniqueNames};
use crate::rig::RigSkin;

/// A skin mapped onto the rig: its index in [`Rig::skins`](crate::rig::Rig::skins) and its joint
/// count.
#[derive(Clone, Copy)]
pub(super) struct MappedSkin {
    /// Index in [`Rig::skins`](crate::rig::Rig::skins).
    pub(super) index: usize,
    /// Number of joints.
    pub(super) joints: usize,
}

impl Importer<'_> {
    /// Every skin of the file as a [`RigSkin`] over the rig's joints, and for each skin of the file
    /// its [`MappedSkin`] (`None` for a skin left out because a joint is outside the scene and no
    /// imported mesh uses it).
    pub(super) fn skins(&mut self, h: &Hierarchy) -> Result<(Vec<RigSkin>, Vec<Option<MappedSkin>>), GltfError> {
        // Skins that an imported mesh node uses.
        let mut used = vec![false; self.doc.skins().len()];
        for &i in &h.order {
            if let Some(node) = self.doc.nodes().nth(i) {
                if let (Some(skin), Some(_)) = (node.skin(), node.mesh()) {
                    if let Some(u) = used.get_mut(skin.index()) {
                        *u = true;
                    }
                }
            }
        }
        let mut names = UniqueNames::default();
        let mut skins = Vec::new();
        let mut map = Vec::with_capacity(used.len());
        for skin in self.doc.skins() {
            let si = skin.index();
            let mut joints = Vec::new();
            let mut outside = None;
            for j in skin.joints() {
                match h.joint_of_node.get(j.index()).copied().flatten() {
                    Some(k) => joints.push(k),
                    None => {
                        outside = Some(j.index());
                        break;
                    }
                }
            }
            if let Some(node) = outside {
                if used.get(si).copied().unwrap_or(false) {
                    return Err(GltfError::SkinJointNotInScene { skin: si, node });
                }
                self.notes.push(format!("skin {si}: joint node {node} is not in the scene; the skin was left out"));
                map.push(None);
                continue;
            }
            let inverse_bind = match skin.inverse_bind_matrices() {
                None => vec![Mat4::<f32>::IDENTITY.to_cols_array(); joints.len()],
                Some(acc) => {
                    let usage = format!("skin {si} inverse bind matrices");
                    let count = self.check_accessor(&acc, &usage, MAT4_F32)?;
                    if count < joints.len() {
                        return Err(GltfError::CountMismatch { what: usage, expected: joints.len(), actual: count });
                    }
                    let reader = skin.reader(self.data());
                    let mats = self.collect(reader.read_inverse_bind_matrices(), acc.index(), count)?;
                    let mut out = Vec::with_capacity(joints.len());
                    for (k, m) in mats.iter().take(joints.len()).enumerate() {
                        let mut a = [0.0f32; 16];
                        for (dst, src) in a.iter_mut().zip(m.iter().flatten()) {
                            *dst = *src;
                        }
                        if !a.iter().all(|v| v.is_finite()) {
                            return Err(GltfError::NonFinite { what: format!("skin {si} inverse bind matrix {k}") });
                        }
                        out.push(a);
                    }
                    out
                }
            };
            let name = names.make(or_fallback(skin.name(), || format!("skin{si}")), 1);
            map.push(Some(MappedSkin { index: skins.len(), joints: joints.len() }));
            skins.push(RigSkin { name, joints, inverse_bind });
        }
        Ok((skins, map))
    }
}
