//! Meshes, skins and morph targets: one [`RigMesh`] per node instance of a ufbx mesh (a skinned
//! mesh at its first instance only; a mesh with several instances is named `mesh@joint` for
//! each), one [`RigPrimitive`] per material part, triangulated by ufbx, with positions, normals,
//! tangents, the first UV and color sets, skin influences and morph-target deltas per vertex;
//! one [`RigSkin`] per skin deformer in use.

use std::collections::{HashMap, HashSet};

use ufbx::{BlendShape, List, Mesh, SkinDeformer};

use super::error::FbxError;
use super::scene::{array3, is_identity, matrix, Importer};
use crate::import::gltf::DEFAULT_COLOR;
use crate::import::names::{or_fallback, UniqueNames};
use crate::rig::{RigJoint, RigMesh, RigMorphTarget, RigPrimitive, RigSkin};

/// The morph targets that each blend channel (by element id) drives: `(mesh, target)` pairs,
/// mesh an index into [`Rig::meshes`](crate::rig::Rig::meshes).
pub(super) type Morphs = HashMap<u32, Vec<(usize, usize)>>;

/// A skin deformer mapped onto the rig.
struct MappedSkin {
    /// Index in [`Rig::skins`](crate::rig::Rig::skins).
    index: usize,
    /// Skin joint of each cluster (`None` for a cluster without a bone).
    clusters: Vec<Option<u16>>,
    /// The skin joint that vertices no cluster weights follow, once one needs it.
    fallback: Option<u16>,
}

/// A morph target of a mesh: its blend channel and full-weight shape.
struct Target<'s> {
    /// The channel's element id.
    channel: u32,
    /// The channel's weight in the file (the target's default weight).
    weight: f64,
    /// The shape at full weight.
    shape: Option<&'s BlendShape>,
}

/// Vertex attributes of one mesh read per corner (mesh index).
struct Attributes<'s> {
    mesh: &'s Mesh,
    uv: bool,
    color: bool,
    tangent: bool,
}

/// `list[i]` of an attribute, or `None`.
fn at<T: Copy>(list: &List<T>, i: u32) -> Option<T> {
    list.as_ref().get(i as usize).copied()
}

/// The index of an attribute at corner `ix` (`u32::MAX` when it does not exist or has none).
fn attr_index(exists: bool, indices: &List<u32>, ix: usize) -> u32 {
    if exists {
        indices.as_ref().get(ix).copied().unwrap_or(u32::MAX)
    } else {
        u32::MAX
    }
}

impl Attributes<'_> {
    /// What identifies the vertex of corner `ix`: its mesh vertex and the index of each of its
    /// attributes. Corners with the same key are one rig vertex.
    fn key(&self, ix: usize) -> [u32; 7] {
        let m = self.mesh;
        [
            m.vertex_indices.as_ref().get(ix).copied().unwrap_or(u32::MAX),
            attr_index(true, &m.vertex_position.indices, ix),
            attr_index(m.vertex_normal.exists, &m.vertex_normal.indices, ix),
            attr_index(self.uv, &m.vertex_uv.indices, ix),
            attr_index(self.color, &m.vertex_color.indices, ix),
            attr_index(self.tangent, &m.vertex_tangent.indices, ix),
            attr_index(self.tangent, &m.vertex_bitangent.indices, ix),
        ]
    }
}

impl<'s> Importer<'s> {
    /// The meshes and the skins they use, and which targets each blend channel drives.
    pub(super) fn meshes(&mut self, joints: &[RigJoint]) -> Result<(Vec<RigMesh>, Vec<RigSkin>, Morphs), FbxError> {
        let nodes = self.nodes.clone();
        let mut instances: HashMap<u32, usize> = HashMap::new();
        for node in &nodes {
            if let Some(mesh) = node.mesh.as_ref() {
                *instances.entry(mesh.element.typed_id).or_default() += 1;
            }
        }
        let mut meshes = Vec::new();
        let mut skins = Vec::new();
        let mut mapped: HashMap<u32, MappedSkin> = HashMap::new();
        let mut skinned: HashSet<u32> = HashSet::new();
        let mut morphs = Morphs::new();
        let mut names = UniqueNames::default();
        for (j, &node) in nodes.iter().enumerate() {
            let Some(mesh) = node.mesh.as_ref() else { continue };
            let mesh: &'s Mesh = mesh;
            let base = or_fallback(Some(&mesh.element.name), || {
                or_fallback(Some(&node.element.name), || format!("mesh{}", mesh.element.typed_id))
            });
            let base = if instances.get(&mesh.element.typed_id).copied().unwrap_or(0) > 1 {
                format!("{base}@{}", joints.get(j).map_or("", |jt| jt.name.as_str()))
            } else {
                base
            };
            let name = names.make(base, 1);
            let deformer: Option<&'s SkinDeformer> = mesh.skin_deformers.as_ref().first().map(|d| &**d);
            if mesh.skin_deformers.len() > 1 {
                self.notes.push(format!(
                    "mesh {name:?}: {} skin deformers; only the first one is used",
                    mesh.skin_deformers.len()
                ));
            }
            if deformer.is_some() && !skinned.insert(mesh.element.typed_id) {
                self.notes.push(format!(
                    "mesh {name:?}: a skinned mesh instanced again; skinning ignores the instance, so it was left out"
                ));
                continue;
            }
            if let Some(d) = deformer {
                if let std::collections::hash_map::Entry::Vacant(slot) = mapped.entry(d.element.typed_id) {
                    let (skin, map) = self.skin(d, skins.len())?;
                    skins.push(skin);
                    slot.insert(map);
                }
            }
            let mut skin = deformer.and_then(|d| mapped.get_mut(&d.element.typed_id).map(|m| (d, m)));
            let targets = self.targets(mesh, &name);
            let mut primitives = Vec::new();
            for part in mesh.material_parts.as_ref() {
                let Some(mut p) = self.primitive(mesh, node, part, &name, skin.is_some())? else { continue };
                if let Some((d, m)) = skin.as_mut() {
                    let fallback = self.influences(d, m, j, node, &mut p.0, &p.1, &name, &mut skins)?;
                    if fallback > 0 {
                        self.notes.push(format!(
                            "mesh {name:?}: {fallback} vertices have no skin weight; they follow the mesh's node"
                        ));
                    }
                }
                let (mut prim, vertex_of) = p;
                prim.targets = self.target_deltas(&targets, &vertex_of, &name)?;
                primitives.push(prim);
            }
            let index = meshes.len();
            for (t, target) in targets.iter().enumerate() {
                morphs.entry(target.channel).or_default().push((index, t));
            }
            let weights: Vec<f32> = targets.iter().map(|t| t.weight as f32).collect();
            if !weights.iter().all(|w| w.is_finite()) {
                return Err(FbxError::NonFinite { what: format!("a default morph weight of mesh {name:?}") });
            }
            let skin_index = skin.as_ref().map(|(_, m)| m.index);
            meshes.push(RigMesh {
                name,
                skin: skin_index,
                node: if skin_index.is_some() { None } else { Some(j) },
                primitives,
                weights,
                instance: Some(j),
            });
        }
        Ok((meshes, skins, morphs))
    }

    /// Skin deformer `d` as rig skin `index`: its clusters' bones and `geometry_to_bone`
    /// matrices.
    fn skin(&mut self, d: &'s SkinDeformer, index: usize) -> Result<(RigSkin, MappedSkin), FbxError> {
        let name = or_fallback(Some(&d.element.name), || format!("skin{}", d.element.typed_id));
        let mut joints = Vec::new();
        let mut inverse_bind = Vec::new();
        let mut clusters = Vec::with_capacity(d.clusters.len());
        for c in d.clusters.as_ref() {
            let joint = c
                .bone_node
                .as_ref()
                .and_then(|b| self.joint_of_node.get(b.element.typed_id as usize).copied().flatten());
            let Some(joint) = joint else {
                self.notes.push(format!(
                    "skin {name:?}: cluster {:?} has no bone in the scene; its weights were dropped",
                    &*c.element.name
                ));
                clusters.push(None);
                continue;
            };
            let k = u16::try_from(joints.len())
                .map_err(|_| FbxError::TooManyJoints { skin: name.clone(), count: d.clusters.len() })?;
            let ib = matrix(&c.geometry_to_bone).ok_or_else(|| FbxError::NonFinite {
                what: format!("the bind matrix of cluster {:?} of skin {name:?}", &*c.element.name),
            })?;
            joints.push(joint);
            inverse_bind.push(ib);
            clusters.push(Some(k));
        }
        Ok((RigSkin { name, joints, inverse_bind }, MappedSkin { index, clusters, fallback: None }))
    }

    /// The morph targets of `mesh`: every channel of its blend deformers, at full weight.
    fn targets(&mut self, mesh: &'s Mesh, name: &str) -> Vec<Target<'s>> {
        let mut targets = Vec::new();
        for d in mesh.blend_deformers.as_ref() {
            for c in d.channels.as_ref() {
                if c.keyframes.len() > 1 {
                    self.notes.push(format!(
                        "mesh {name:?}: blend channel {:?} has {} in-between shapes; only its full-weight shape is used",
                        &*c.element.name,
                        c.keyframes.len() - 1
                    ));
                }
                targets.push(Target {
                    channel: c.element.element_id,
                    weight: c.weight,
                    shape: c.target_shape.as_deref(),
                });
            }
        }
        targets
    }

    /// The triangles of material part `part` of `mesh` (instanced at `node`) as a primitive
    /// without influences or targets, and the mesh vertex of each of its vertices; `None` when
    /// the part has no triangle.
    fn primitive(
        &mut self,
        mesh: &'s Mesh,
        node: &'s ufbx::Node,
        part: &ufbx::MeshPart,
        name: &str,
        skinned: bool,
    ) -> Result<Option<(RigPrimitive, Vec<u32>)>, FbxError> {
        if part.num_triangles == 0 {
            return Ok(None);
        }
        let attrs = Attributes {
            mesh,
            uv: mesh.vertex_uv.exists,
            color: mesh.vertex_color.exists,
            tangent: mesh.vertex_tangent.exists && mesh.vertex_bitangent.exists,
        };
        // A rigid mesh's vertices are placed in its node's space; skinned vertices stay in the
        // mesh's own, which the bind matrices start from.
        let geometry = (!skinned && !is_identity(&node.geometry_to_node)).then_some(node.geometry_to_node);
        let normal_matrix = geometry.as_ref().map(ufbx::matrix_for_normals);
        let mut prim = RigPrimitive::default();
        let mut normals = Vec::new();
        let mut texcoords = Vec::new();
        let mut colors = Vec::new();
        let mut tangents = Vec::new();
        let mut vertex_of = Vec::new();
        let mut map: HashMap<[u32; 7], u32> = HashMap::new();
        let mut tri = vec![0u32; mesh.max_face_triangles.max(1).saturating_mul(3)];
        for &f in part.face_indices.as_ref() {
            let Some(face) = at(&mesh.faces, f) else { continue };
            if face.num_indices < 3 {
                continue;
            }
            let need = (face.num_indices as usize - 2) * 3;
            if tri.len() < need {
                tri.resize(need, 0);
            }
            let n = ufbx::triangulate_face(&mut tri, mesh, face) as usize;
            for &ix in tri.get(..n * 3).unwrap_or_default() {
                let ix = ix as usize;
                let key = attrs.key(ix);
                if let Some(&v) = map.get(&key) {
                    prim.indices.push(v);
                    continue;
                }
                let v = u32::try_from(prim.positions.len()).map_err(|_| FbxError::Ufbx {
                    what: format!("mesh {name:?}"),
                    description: "more vertices than a 32-bit index holds".into(),
                })?;
                map.insert(key, v);
                prim.indices.push(v);
                vertex_of.push(key[0]);
                let mut p = at(&mesh.vertex_position.values, key[1]).unwrap_or_default();
                if let Some(g) = &geometry {
                    p = ufbx::transform_position(g, p);
                }
                let p = array3(p);
                if !p.iter().all(|c| c.is_finite()) {
                    return Err(FbxError::NonFinite { what: format!("a vertex position of mesh {name:?}") });
                }
                prim.positions.push(p);
                let mut nrm = at(&mesh.vertex_normal.values, key[2]).unwrap_or_default();
                if let Some(g) = &normal_matrix {
                    nrm = ufbx::vec3_normalize(ufbx::transform_direction(g, nrm));
                }
                normals.push(array3(nrm));
                if attrs.uv {
                    let uv = at(&mesh.vertex_uv.values, key[3]).unwrap_or_default();
                    texcoords.push([uv.x as f32, (1.0 - uv.y) as f32]);
                }
                if attrs.color {
                    let c = at(&mesh.vertex_color.values, key[4]).unwrap_or_default();
                    colors.push([c.x, c.y, c.z, c.w].map(|x| (x as f32).clamp(0.0, 1.0)));
                }
                if attrs.tangent {
                    let t = at(&mesh.vertex_tangent.values, attr_index(true, &mesh.vertex_tangent.indices, ix))
                        .unwrap_or_default();
                    let b = at(&mesh.vertex_bitangent.values, attr_index(true, &mesh.vertex_bitangent.indices, ix))
                        .unwrap_or_default();
                    let (t, b) = match &normal_matrix {
                        Some(g) => (ufbx::transform_direction(g, t), ufbx::transform_direction(g, b)),
                        None => (t, b),
                    };
                    let cross = [nrm.y * t.z - nrm.z * t.y, nrm.z * t.x - nrm.x * t.z, nrm.x * t.y - nrm.y * t.x];
                    let w = if cross[0] * b.x + cross[1] * b.y + cross[2] * b.z < 0.0 { -1.0 } else { 1.0 };
                    let t = ufbx::vec3_normalize(t);
                    tangents.push([t.x as f32, t.y as f32, t.z as f32, w]);
                }
            }
        }
        if prim.indices.is_empty() {
            return Ok(None);
        }
        let finite = |v: &[f32]| v.iter().all(|c| c.is_finite());
        if !normals.iter().all(|n| finite(n))
            || !texcoords.iter().all(|c| finite(c))
            || !colors.iter().all(|c| finite(c))
            || !tangents.iter().all(|t| finite(t))
        {
            return Err(FbxError::NonFinite { what: format!("a vertex attribute of mesh {name:?}") });
        }
        prim.normals = mesh.vertex_normal.exists.then_some(normals);
        prim.colors = attrs.color.then_some(colors);
        prim.tangents = attrs.tangent.then_some(tangents);
        let materials = if node.materials.is_empty() { mesh.materials.as_ref() } else { node.materials.as_ref() };
        let material = materials.get(part.index as usize).map(|m| &**m);
        let surface = match material {
            Some(m) => self.material(m)?,
            None => (DEFAULT_COLOR, None),
        };
        prim.color = surface.0;
        prim.material = surface.1;
        prim.texcoords = attrs.uv.then_some(texcoords);
        Ok(Some((prim, vertex_of)))
    }

    /// Fills the influences of `prim` (its vertices' mesh vertices in `vertex_of`) from skin
    /// deformer `d`: every weight above zero, normalized; a vertex without one follows the
    /// mesh's node `j` through the skin's fallback joint. Returns how many vertices did.
    #[allow(clippy::too_many_arguments)]
    fn influences(
        &mut self,
        d: &SkinDeformer,
        m: &mut MappedSkin,
        j: usize,
        node: &ufbx::Node,
        prim: &mut RigPrimitive,
        vertex_of: &[u32],
        name: &str,
        skins: &mut [RigSkin],
    ) -> Result<usize, FbxError> {
        let mut per_vertex: Vec<Vec<(u16, f32)>> = Vec::with_capacity(vertex_of.len());
        let (mut fallbacks, mut negative) = (0, 0);
        for &v in vertex_of {
            let mut list: Vec<(u16, f64)> = Vec::new();
            if let Some(sv) = at(&d.vertices, v) {
                let begin = sv.weight_begin as usize;
                let end = begin.saturating_add(sv.num_weights as usize);
                for w in d.weights.as_ref().get(begin..end).unwrap_or_default() {
                    if !w.weight.is_finite() {
                        return Err(FbxError::NonFinite { what: format!("a skin weight of mesh {name:?}") });
                    }
                    if w.weight < 0.0 {
                        negative += 1;
                        continue;
                    }
                    if let Some(k) = m.clusters.get(w.cluster_index as usize).copied().flatten() {
                        if w.weight > 0.0 {
                            list.push((k, w.weight));
                        }
                    }
                }
            }
            let sum: f64 = list.iter().map(|x| x.1).sum();
            if list.is_empty() || sum <= 0.0 || !sum.is_finite() {
                fallbacks += 1;
                let k = self.fallback_joint(m, j, node, name, skins)?;
                per_vertex.push(vec![(k, 1.0)]);
                continue;
            }
            per_vertex.push(list.into_iter().map(|(k, w)| (k, (w / sum) as f32)).collect());
        }
        if negative > 0 {
            self.notes.push(format!("mesh {name:?}: {negative} negative skin weights were dropped"));
        }
        let influences = per_vertex.iter().map(Vec::len).max().unwrap_or(0);
        prim.influences = influences;
        prim.joint_indices = Vec::with_capacity(per_vertex.len() * influences);
        prim.joint_weights = Vec::with_capacity(per_vertex.len() * influences);
        for list in &per_vertex {
            for k in 0..influences {
                let (joint, weight) = list.get(k).copied().unwrap_or((0, 0.0));
                prim.joint_indices.push(joint);
                prim.joint_weights.push(weight);
            }
        }
        Ok(fallbacks)
    }

    /// The skin joint that unweighted vertices follow: the mesh's node `j`, bound at its
    /// geometry transform (ufbx skins such a vertex with the node's `geometry_to_world`).
    fn fallback_joint(
        &mut self,
        m: &mut MappedSkin,
        j: usize,
        node: &ufbx::Node,
        name: &str,
        skins: &mut [RigSkin],
    ) -> Result<u16, FbxError> {
        if let Some(k) = m.fallback {
            return Ok(k);
        }
        let skin = skins.get_mut(m.index).ok_or(FbxError::Nothing)?;
        let k = u16::try_from(skin.joints.len())
            .map_err(|_| FbxError::TooManyJoints { skin: skin.name.clone(), count: skin.joints.len() + 1 })?;
        let ib = matrix(&node.geometry_to_node)
            .ok_or_else(|| FbxError::NonFinite { what: format!("the geometry transform of mesh {name:?}") })?;
        skin.joints.push(j);
        skin.inverse_bind.push(ib);
        m.fallback = Some(k);
        Ok(k)
    }

    /// The deltas of each target at the vertices of a primitive (their mesh vertices in
    /// `vertex_of`). Targets whose deltas would exceed the import's memory limit are dropped
    /// (all of the mesh's, with a note).
    fn target_deltas(
        &mut self,
        targets: &[Target<'s>],
        vertex_of: &[u32],
        name: &str,
    ) -> Result<Vec<RigMorphTarget>, FbxError> {
        let bytes = targets.len().saturating_mul(vertex_of.len()).saturating_mul(24);
        if bytes > self.memory {
            self.notes.push(format!(
                "mesh {name:?}: its morph targets need more than {} bytes; they were dropped",
                self.memory
            ));
            return Ok(vec![
                RigMorphTarget {
                    positions: vec![[0.0; 3]; vertex_of.len()],
                    normals: None,
                    tangents: None
                };
                targets.len()
            ]);
        }
        let mut out = Vec::with_capacity(targets.len());
        for t in targets {
            let Some(shape) = t.shape else {
                out.push(RigMorphTarget { positions: vec![[0.0; 3]; vertex_of.len()], normals: None, tangents: None });
                continue;
            };
            let has_normals = !shape.normal_offsets.is_empty();
            let mut positions = Vec::with_capacity(vertex_of.len());
            let mut normals = Vec::with_capacity(if has_normals { vertex_of.len() } else { 0 });
            for &v in vertex_of {
                let i = ufbx::get_blend_shape_offset_index(shape, v as usize);
                let w = at(&shape.offset_weights, i).unwrap_or(1.0);
                let p = at(&shape.position_offsets, i).map_or([0.0; 3], |p| [p.x * w, p.y * w, p.z * w]);
                positions.push(p.map(|c| c as f32));
                if has_normals {
                    let n = at(&shape.normal_offsets, i).map_or([0.0; 3], |n| [n.x * w, n.y * w, n.z * w]);
                    normals.push(n.map(|c| c as f32));
                }
            }
            if !positions.iter().chain(&normals).flatten().all(|c| c.is_finite()) {
                return Err(FbxError::NonFinite { what: format!("a morph target delta of mesh {name:?}") });
            }
            out.push(RigMorphTarget { positions, normals: has_normals.then_some(normals), tangents: None });
        }
        Ok(out)
    }
}
