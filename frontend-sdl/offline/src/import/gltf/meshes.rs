//! Meshes: one rig mesh per node instance of a glTF mesh, and their primitives: positions,
//! normals and tangents, the joint influences of skinned vertices (`JOINTS_0/1`, `WEIGHTS_0/1`;
//! negative or all-zero weights rejected, sums off 1 renormalized), triangle lists (strips and
//! fans converted, points and lines skipped), their surface (see `materials`), and the morph
//! targets and default weights (`morph`).

use gltf::mesh::{Mode, Semantic};

use super::accessors::{check_finite, Importer, INDICES, JOINTS, NORMALS, POSITIONS, TANGENTS, WEIGHTS};
use super::error::GltfError;
use super::hierarchy::Hierarchy;
use super::skins::MappedSkin;
use crate::import::names::or_fallback;
use crate::rig::{RigJoint, RigMesh, RigPrimitive};

/// Base color of primitives that have no material.
pub const DEFAULT_COLOR: [f32; 4] = [0.8, 0.8, 0.8, 1.0];

/// A skin vertex whose weights sum further than this from 1 is renormalized (with a note).
const WEIGHT_SUM_TOLERANCE: f32 = 1.0e-3;

impl Importer<'_> {
    /// One [`RigMesh`] per node instance of a mesh, in joint order: a skinned node's mesh follows
    /// its skin, a rigid node's mesh follows the node's joint. A mesh used by several nodes is
    /// named `mesh@joint` for each.
    pub(super) fn meshes(
        &mut self,
        h: &Hierarchy,
        joints: &[RigJoint],
        skin_map: &[Option<MappedSkin>],
    ) -> Result<Vec<RigMesh>, GltfError> {
        let mut instances = vec![0usize; self.doc.meshes().len()];
        for &i in &h.order {
            if let Some(mesh) = self.doc.nodes().nth(i).and_then(|n| n.mesh()) {
                if let Some(c) = instances.get_mut(mesh.index()) {
                    *c += 1;
                }
            }
        }
        let mut meshes = Vec::new();
        for (j, &i) in h.order.iter().enumerate() {
            let Some(node) = self.doc.nodes().nth(i) else { continue };
            let Some(mesh) = node.mesh() else { continue };
            let mi = mesh.index();
            let base = or_fallback(mesh.name(), || format!("mesh{mi}"));
            let name = if instances.get(mi).copied().unwrap_or(0) > 1 {
                format!("{base}@{}", joints.get(j).map_or("", |jt| jt.name.as_str()))
            } else {
                base
            };
            let skin = match node.skin() {
                Some(s) => Some(
                    skin_map
                        .get(s.index())
                        .copied()
                        .flatten()
                        .ok_or(GltfError::SkinJointNotInScene { skin: s.index(), node: i })?,
                ),
                None => None,
            };
            let targets = mesh.primitives().next().map_or(0, |p| p.morph_targets().len());
            if let Some(p) = mesh.primitives().find(|p| p.morph_targets().len() != targets) {
                let found = p.morph_targets().len();
                return Err(GltfError::MorphTargetCount { mesh: mi, primitive: p.index(), expected: targets, found });
            }
            let weights = self.default_weights(&mesh, &node, targets)?;
            let mut primitives = Vec::new();
            for prim in mesh.primitives() {
                if let Some(p) = self.primitive(&mesh, &prim, skin.map(|s| s.joints))? {
                    primitives.push(p);
                }
            }
            meshes.push(RigMesh {
                name,
                skin: skin.map(|s| s.index),
                node: if skin.is_some() { None } else { Some(j) },
                primitives,
                weights,
                instance: Some(j),
            });
        }
        Ok(meshes)
    }

    /// Reads one primitive; `None` when it is skipped (not triangles, no vertices).
    /// `skin_joints` is the joint count of the node's skin, `None` for a rigid node.
    fn primitive(
        &mut self,
        mesh: &gltf::Mesh<'_>,
        prim: &gltf::Primitive<'_>,
        skin_joints: Option<usize>,
    ) -> Result<Option<RigPrimitive>, GltfError> {
        let label = format!("mesh {} primitive {}", mesh.index(), prim.index());
        let mode = prim.mode();
        if !matches!(mode, Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan) {
            self.notes.push(format!("{label}: {mode:?} primitive skipped (only triangles are imported)"));
            return Ok(None);
        }
        let reader = prim.reader(self.data());

        let pos_acc = prim
            .get(&Semantic::Positions)
            .ok_or_else(|| GltfError::MissingAttribute { what: format!("{label} POSITION") })?;
        let what = format!("{label} POSITION");
        let n = self.check_accessor(&pos_acc, &what, POSITIONS)?;
        if n == 0 {
            self.notes.push(format!("{label}: no vertices, skipped"));
            return Ok(None);
        }
        let positions = self.read_floats::<3>(&pos_acc, n, &what, false)?;
        check_finite(positions.iter().flatten(), || format!("{label} POSITION"))?;

        let normals = match prim.get(&Semantic::Normals) {
            None => None,
            Some(acc) => {
                let what = format!("{label} NORMAL");
                self.check_count(self.check_accessor(&acc, &what, NORMALS)?, n, &what)?;
                let v = self.read_floats::<3>(&acc, n, &what, true)?;
                check_finite(v.iter().flatten(), || what.clone())?;
                Some(v)
            }
        };
        let tangents = match prim.get(&Semantic::Tangents) {
            None => None,
            Some(acc) => {
                let what = format!("{label} TANGENT");
                self.check_count(self.check_accessor(&acc, &what, TANGENTS)?, n, &what)?;
                let v = self.read_floats::<4>(&acc, n, &what, true)?;
                check_finite(v.iter().flatten(), || what.clone())?;
                Some(v)
            }
        };

        // Influences.
        let mut influences = 0;
        let mut joint_indices = Vec::new();
        let mut joint_weights = Vec::new();
        let has_joints = prim.get(&Semantic::Joints(0)).is_some();
        match skin_joints {
            None if has_joints => {
                self.notes.push(format!("{label}: the node has no skin; its joint influences were ignored"));
            }
            Some(_) if !has_joints => {
                self.notes.push(format!("{label}: skinned node but no JOINTS_0; the primitive has no influences"));
            }
            Some(limit) => {
                let mut sets = Vec::new();
                for set in 0..2u32 {
                    let (j, w) = (prim.get(&Semantic::Joints(set)), prim.get(&Semantic::Weights(set)));
                    match (j, w) {
                        (None, None) => break,
                        (Some(_), None) => {
                            return Err(GltfError::MissingAttribute { what: format!("{label} WEIGHTS_{set}") })
                        }
                        (None, Some(_)) => {
                            return Err(GltfError::MissingAttribute { what: format!("{label} JOINTS_{set}") })
                        }
                        (Some(ja), Some(wa)) => {
                            let jw = format!("{label} JOINTS_{set}");
                            let ww = format!("{label} WEIGHTS_{set}");
                            self.check_count(self.check_accessor(&ja, &jw, JOINTS)?, n, &jw)?;
                            self.check_count(self.check_accessor(&wa, &ww, WEIGHTS)?, n, &ww)?;
                            let js = self.collect(reader.read_joints(set).map(|r| r.into_u16()), ja.index(), n)?;
                            let ws = self.collect(reader.read_weights(set).map(|r| r.into_f32()), wa.index(), n)?;
                            sets.push((js, ws));
                        }
                    }
                }
                if prim.get(&Semantic::Joints(2)).is_some() {
                    self.notes.push(format!("{label}: JOINTS_2 and above ignored (at most 8 influences are read)"));
                }
                influences = 4 * sets.len();
                joint_indices.reserve(n * influences);
                joint_weights.reserve(n * influences);
                let (mut dropped, mut renormalized) = (0usize, 0usize);
                for v in 0..n {
                    let start = joint_weights.len();
                    for (js, ws) in &sets {
                        let (Some(jv), Some(wv)) = (js.get(v), ws.get(v)) else {
                            return Err(GltfError::CountMismatch {
                                what: format!("{label} influences"),
                                expected: n,
                                actual: js.len().min(ws.len()),
                            });
                        };
                        for (&jt, &w) in jv.iter().zip(wv.iter()) {
                            if !w.is_finite() {
                                return Err(GltfError::NonFinite { what: format!("{label} vertex {v} weight") });
                            }
                            if w < 0.0 {
                                return Err(GltfError::NegativeWeight {
                                    mesh: mesh.index(),
                                    primitive: prim.index(),
                                    vertex: v,
                                });
                            }
                            let jt = if usize::from(jt) < limit {
                                jt
                            } else if w == 0.0 {
                                dropped += 1;
                                0
                            } else {
                                return Err(GltfError::BadIndex {
                                    what: format!("{label} vertex {v} joint"),
                                    index: usize::from(jt),
                                    limit,
                                });
                            };
                            joint_indices.push(jt);
                            joint_weights.push(w);
                        }
                    }
                    let ws = joint_weights.get_mut(start..).unwrap_or_default();
                    let sum: f32 = ws.iter().sum();
                    if sum == 0.0 {
                        return Err(GltfError::ZeroWeights { mesh: mesh.index(), primitive: prim.index(), vertex: v });
                    } else if (sum - 1.0).abs() > WEIGHT_SUM_TOLERANCE {
                        renormalized += 1;
                        for w in ws.iter_mut() {
                            *w /= sum;
                        }
                    }
                }
                if dropped > 0 {
                    self.notes.push(format!(
                        "{label}: {dropped} zero-weight influences had out-of-range joint indices; set to joint 0"
                    ));
                }
                if renormalized > 0 {
                    self.notes
                        .push(format!("{label}: {renormalized} vertices' weights did not sum to 1; renormalized"));
                }
            }
            None => {}
        }

        // Indices.
        let raw: Vec<u32> = match prim.indices() {
            None => (0..n).map(|v| v as u32).collect(),
            Some(acc) => {
                let what = format!("{label} indices");
                let count = self.check_accessor(&acc, &what, INDICES)?;
                let idx = if count == 0 {
                    Vec::new()
                } else {
                    self.collect(reader.read_indices().map(|r| r.into_u32()), acc.index(), count)?
                };
                if let Some(&bad) = idx.iter().find(|&&i| i as usize >= n) {
                    return Err(GltfError::BadIndex { what, index: bad as usize, limit: n });
                }
                idx
            }
        };
        let indices = match mode {
            Mode::TriangleStrip => (0..raw.len().saturating_sub(2))
                .flat_map(|i| {
                    let (a, b) = if i % 2 == 0 { (i + 1, i + 2) } else { (i + 2, i + 1) };
                    [raw.get(i), raw.get(a), raw.get(b)]
                })
                .flatten()
                .copied()
                .collect(),
            Mode::TriangleFan => (1..raw.len().saturating_sub(1))
                .flat_map(|i| [raw.get(i), raw.get(i + 1), raw.first()])
                .flatten()
                .copied()
                .collect(),
            _ => {
                let mut list = raw;
                if !list.len().is_multiple_of(3) {
                    self.notes.push(format!(
                        "{label}: {} indices is not a multiple of 3; the last {} were dropped",
                        list.len(),
                        list.len() % 3
                    ));
                    list.truncate(list.len() - list.len() % 3);
                }
                list
            }
        };

        let surface = self.surface(&label, prim, n)?;
        let targets = self.morph_targets(prim, n, &label)?;
        Ok(Some(RigPrimitive {
            positions,
            normals,
            tangents,
            influences,
            joint_indices,
            joint_weights,
            indices,
            color: surface.color,
            texcoords: surface.texcoords,
            colors: surface.colors,
            material: surface.material,
            targets,
        }))
    }
}
