//! An independent `f64` evaluator of glTF 2.0 node animation and skinning.
//!
//! It reads a `.glb` or `.gltf` file with the `gltf` crate's document model and accessor readers,
//! resolving buffer bytes itself (the GLB `BIN` chunk, base64 `data:` URIs and relative files),
//! and evaluates everything in double precision with [`crate::reference`]'s math:
//!
//! - **Channels** follow glTF 2.0 Appendix C: before the first key the first value, after the last
//!   key the last value (clamped per channel); `STEP` holds key `k` on `[tₖ, tₖ₊₁)`; `LINEAR`
//!   interpolates translations and scales linearly and rotations by shortest-path slerp;
//!   `CUBICSPLINE` is the cubic Hermite spline of the key values with the out-tangent of key `k`
//!   and the in-tangent of key `k + 1` multiplied by the key interval, rotations normalized.
//!   Morph-target `weights` channels hold one scalar per target per element (`[a…, v…, b…]`
//!   per key for cubic splines) and animate the weights of the node's mesh instance.
//! - **Nodes**: a node's local matrix is its `matrix`, or `T · R · S` of its (animated)
//!   translation, rotation and scale; world matrices are `world(parent) · local` for every node,
//!   whatever scene it is in.
//! - **Skins**: joint matrices are `world(joint) · inverseBindMatrix` in the skin's joint order
//!   (identity inverse binds when the skin has none). A skinned mesh is skinned in scene space:
//!   the node's own transform does not apply.
//! - **Vertices**: every `JOINTS_n` / `WEIGHTS_n` set of a primitive, weights as stored (or
//!   renormalized when their sum is off by more than a threshold, see [`WeightRule`]),
//!   zero-weight influences ignored.
//! - **Morph targets** (glTF 2.0 §3.7.2.2): a mesh instance's weights are its node's
//!   `weights`, else its mesh's, else zeros, replaced by a `weights` channel on the node; the
//!   morphed positions and normals are the bind-pose ones plus `Σ weightᵢ · deltaᵢ`, before
//!   skinning (a skinned instance) or the node's world matrix (an unskinned one).
//!
//! Nothing here calls sinew. The only convention borrowed from sinew is the *order* in which its
//! importer lists nodes ([`GltfRef::import_order`]), so that tests can match its output rows to
//! nodes.

use std::fmt;
use std::path::Path;

use base64::Engine as _;
use gltf::animation::util::ReadOutputs;
use gltf::animation::Property;

use crate::reference::{self, Mat4d, Quatd, ReferenceError, SkinInput, Skinned, Trsd, Vec3d};

/// Why a file could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GltfRefError {
    /// The file could not be read.
    Io(String),
    /// The `gltf` crate rejected the document.
    Document(String),
    /// A buffer's bytes are missing or shorter than its `byteLength`.
    Buffer(String),
    /// An accessor could not be read, or holds data this evaluator does not accept.
    Data(String),
    /// The reference math refused its input.
    Reference(ReferenceError),
}

impl fmt::Display for GltfRefError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(s) => write!(f, "cannot read the file: {s}"),
            Self::Document(s) => write!(f, "invalid glTF document: {s}"),
            Self::Buffer(s) => write!(f, "buffer: {s}"),
            Self::Data(s) => write!(f, "data: {s}"),
            Self::Reference(e) => write!(f, "reference: {e}"),
        }
    }
}

impl std::error::Error for GltfRefError {}

impl From<ReferenceError> for GltfRefError {
    fn from(e: ReferenceError) -> Self {
        Self::Reference(e)
    }
}

/// A node's local transform as the file gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Local {
    /// A `matrix` (never animated).
    Matrix(Mat4d),
    /// Translation, rotation and scale (animation channels replace them).
    Trs(Trsd),
}

impl Local {
    /// The local matrix.
    #[must_use]
    pub fn matrix(&self) -> Mat4d {
        match self {
            Local::Matrix(m) => *m,
            Local::Trs(t) => t.to_matrix(),
        }
    }
}

/// One node.
#[derive(Debug, Clone)]
pub struct NodeRef {
    /// Name, if the file gives one.
    pub name: Option<String>,
    /// Parent node.
    pub parent: Option<usize>,
    /// Children in file order.
    pub children: Vec<usize>,
    /// Rest local transform.
    pub local: Local,
    /// Mesh instanced by this node.
    pub mesh: Option<usize>,
    /// Skin of that mesh instance.
    pub skin: Option<usize>,
    /// The node's morph weights, if it gives them.
    pub weights: Option<Vec<f64>>,
}

/// One skin.
#[derive(Debug, Clone)]
pub struct SkinRef {
    /// Joint nodes in skin order.
    pub joints: Vec<usize>,
    /// Inverse bind matrix of each joint.
    pub inverse_bind: Vec<Mat4d>,
}

/// One primitive's bind-pose vertices and influences.
#[derive(Debug, Clone)]
pub struct PrimitiveRef {
    /// Bind-pose positions.
    pub positions: Vec<Vec3d>,
    /// Bind-pose normals, if present.
    pub normals: Option<Vec<Vec3d>>,
    /// Every (skin joint, weight) pair of every vertex, over all `JOINTS_n`/`WEIGHTS_n` sets;
    /// empty lists when the primitive has no joints.
    pub influences: Vec<Vec<(u16, f64)>>,
    /// The primitive's topology is a triangle list, strip or fan.
    pub triangles: bool,
    /// Morph targets: position deltas (zeros when the target has none) and normal deltas.
    pub targets: Vec<(Vec<Vec3d>, Option<Vec<Vec3d>>)>,
}

/// One mesh.
#[derive(Debug, Clone)]
pub struct MeshRef {
    /// Primitives in file order.
    pub primitives: Vec<PrimitiveRef>,
    /// The mesh's default morph weights, if it gives them.
    pub weights: Option<Vec<f64>>,
}

/// Which node property a channel animates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Translation.
    Translation,
    /// Rotation.
    Rotation,
    /// Scale.
    Scale,
    /// Morph-target weights (not a node transform).
    Weights,
}

/// Interpolation of a sampler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interp {
    /// Hold the key value.
    Step,
    /// Linear / slerp.
    Linear,
    /// Cubic Hermite spline.
    CubicSpline,
}

/// One channel with its sampler's data.
#[derive(Debug, Clone)]
pub struct ChannelRef {
    /// Target node.
    pub node: usize,
    /// Target property.
    pub target: Target,
    /// Interpolation.
    pub interpolation: Interp,
    /// Key times in seconds.
    pub times: Vec<f64>,
    /// Output elements (for cubic splines `[in-tangent, value, out-tangent]` per key); unused
    /// components are 0. Weights channels hold one scalar per element.
    pub values: Vec<[f64; 4]>,
}

impl ChannelRef {
    /// Key `k`'s value.
    fn value(&self, k: usize) -> [f64; 4] {
        let i = if self.interpolation == Interp::CubicSpline { 3 * k + 1 } else { k };
        self.values.get(i).copied().unwrap_or([0.0; 4])
    }
    /// The channel's value at time `t` (glTF 2.0 Appendix C; see the module docs). Rotations
    /// are unit quaternions `[x, y, z, w]`.
    #[must_use]
    pub fn sample(&self, t: f64) -> [f64; 4] {
        let n = self.times.len();
        let finish = |v: [f64; 4]| if self.target == Target::Rotation { normalize4(v) } else { v };
        if n == 0 {
            return finish([0.0, 0.0, 0.0, 1.0]);
        }
        if n == 1 || t <= self.times[0] {
            return finish(self.value(0));
        }
        if t >= self.times[n - 1] {
            return finish(self.value(n - 1));
        }
        // The key interval [t_k, t_k+1) holding t.
        let k = self.times.partition_point(|&x| x <= t) - 1;
        let (t0, t1) = (self.times[k], self.times[k + 1]);
        let td = t1 - t0;
        let s = (t - t0) / td;
        let (v0, v1) = (self.value(k), self.value(k + 1));
        match self.interpolation {
            Interp::Step => finish(v0),
            Interp::Linear => {
                if self.target == Target::Rotation {
                    let q0 = Quatd::new(v0[0], v0[1], v0[2], v0[3]);
                    let q1 = Quatd::new(v1[0], v1[1], v1[2], v1[3]);
                    let q = q0.slerp(q1, s).unwrap_or(Quatd::IDENTITY);
                    [q.x, q.y, q.z, q.w]
                } else {
                    std::array::from_fn(|j| v0[j] + (v1[j] - v0[j]) * s)
                }
            }
            Interp::CubicSpline => {
                let b0 = self.values.get(3 * k + 2).copied().unwrap_or([0.0; 4]);
                let a1 = self.values.get(3 * (k + 1)).copied().unwrap_or([0.0; 4]);
                let (s2, s3) = (s * s, s * s * s);
                let h_v0 = 2.0 * s3 - 3.0 * s2 + 1.0;
                let h_b0 = td * (s3 - 2.0 * s2 + s);
                let h_v1 = -2.0 * s3 + 3.0 * s2;
                let h_a1 = td * (s3 - s2);
                finish(std::array::from_fn(|j| h_v0 * v0[j] + h_b0 * b0[j] + h_v1 * v1[j] + h_a1 * a1[j]))
            }
        }
    }
}

/// One animation.
#[derive(Debug, Clone)]
pub struct AnimationRef {
    /// Name, if the file gives one.
    pub name: Option<String>,
    /// Channels in file order.
    pub channels: Vec<ChannelRef>,
}

impl AnimationRef {
    /// The first and last key time over all channels (morph weights included), or `None`
    /// without keys.
    #[must_use]
    pub fn range(&self) -> Option<(f64, f64)> {
        let mut r: Option<(f64, f64)> = None;
        for c in &self.channels {
            if let (Some(&a), Some(&b)) = (c.times.first(), c.times.last()) {
                r = Some(r.map_or((a, b), |(lo, hi)| (lo.min(a), hi.max(b))));
            }
        }
        r
    }
    /// Every key time of the channels (morph weights included), sorted, without duplicates.
    #[must_use]
    pub fn key_times(&self) -> Vec<f64> {
        let mut t: Vec<f64> = self.channels.iter().flat_map(|c| c.times.iter().copied()).collect();
        t.sort_by(f64::total_cmp);
        t.dedup();
        t
    }
}

/// How skin weights are used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WeightRule {
    /// As stored in the file.
    AsGiven,
    /// Divided by their sum when it differs from 1 by more than the threshold.
    RenormalizeBeyond(f64),
}

/// Skinning method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Linear blend skinning.
    Linear,
    /// Dual-quaternion skinning.
    DualQuat,
}

/// The skinned vertices of one mesh instance.
#[derive(Debug, Clone, Default)]
pub struct SkinnedMesh {
    /// Positions of every primitive, concatenated in file order.
    pub positions: Vec<Vec3d>,
    /// Normals of the primitives that have them, concatenated in file order.
    pub normals: Vec<Vec3d>,
    /// Vertices whose weights were renormalized under [`WeightRule::RenormalizeBeyond`].
    pub renormalized: usize,
}

/// A glTF file, decoded for evaluation.
#[derive(Debug, Clone)]
pub struct GltfRef {
    /// Every node, by file index.
    pub nodes: Vec<NodeRef>,
    /// Root nodes of the scene(s) sinew imports: the default scene's, else every scene's (each
    /// once), else every parentless node.
    pub scene_roots: Vec<usize>,
    /// Skins by file index.
    pub skins: Vec<SkinRef>,
    /// Meshes by file index.
    pub meshes: Vec<MeshRef>,
    /// Animations by file index.
    pub animations: Vec<AnimationRef>,
}

fn normalize4(q: [f64; 4]) -> [f64; 4] {
    let l = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if l > 0.0 && l.is_finite() {
        q.map(|v| v / l)
    } else {
        [0.0, 0.0, 0.0, 1.0]
    }
}

fn v3(a: [f32; 3]) -> Vec3d {
    Vec3d::new(f64::from(a[0]), f64::from(a[1]), f64::from(a[2]))
}

fn mat_from_cols(m: [[f32; 4]; 4]) -> Mat4d {
    Mat4d { cols: m.map(|c| c.map(f64::from)) }
}

fn data_err(what: impl fmt::Display) -> GltfRefError {
    GltfRefError::Data(what.to_string())
}

/// Decodes a base64 `data:` URI's payload.
fn decode_data_uri(uri: &str) -> Result<Vec<u8>, GltfRefError> {
    let rest = uri.strip_prefix("data:").ok_or_else(|| GltfRefError::Buffer("not a data: URI".into()))?;
    let (header, payload) =
        rest.split_once(',').ok_or_else(|| GltfRefError::Buffer("data: URI without a comma".into()))?;
    if !header.ends_with(";base64") {
        return Err(GltfRefError::Buffer("data: URI is not base64".into()));
    }
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    engine.decode(payload).map_err(|e| GltfRefError::Buffer(format!("bad base64: {e}")))
}

impl GltfRef {
    /// Reads a `.glb` or `.gltf` file; relative buffer URIs are resolved next to it.
    ///
    /// # Errors
    ///
    /// A [`GltfRefError`] for an unreadable or invalid file.
    pub fn load(path: &Path) -> Result<Self, GltfRefError> {
        let bytes = std::fs::read(path).map_err(|e| GltfRefError::Io(format!("{}: {e}", path.display())))?;
        Self::from_bytes(&bytes, path.parent())
    }

    /// Decodes a GLB container or glTF JSON text.
    ///
    /// # Errors
    ///
    /// A [`GltfRefError`] for an invalid document or missing data.
    pub fn from_bytes(bytes: &[u8], base: Option<&Path>) -> Result<Self, GltfRefError> {
        let gltf::Gltf { document, mut blob } =
            gltf::Gltf::from_slice(bytes).map_err(|e| GltfRefError::Document(e.to_string()))?;
        let mut buffers: Vec<Vec<u8>> = Vec::new();
        for b in document.buffers() {
            let data = match b.source() {
                gltf::buffer::Source::Bin => {
                    blob.take().ok_or_else(|| GltfRefError::Buffer(format!("buffer {}: no BIN chunk", b.index())))?
                }
                gltf::buffer::Source::Uri(uri) if uri.starts_with("data:") => decode_data_uri(uri)?,
                gltf::buffer::Source::Uri(uri) => {
                    let dir = base.ok_or_else(|| GltfRefError::Buffer(format!("external {uri} without a base")))?;
                    std::fs::read(dir.join(uri)).map_err(|e| GltfRefError::Io(format!("{uri}: {e}")))?
                }
            };
            if data.len() < b.length() {
                return Err(GltfRefError::Buffer(format!(
                    "buffer {} holds {} bytes, byteLength is {}",
                    b.index(),
                    data.len(),
                    b.length()
                )));
            }
            buffers.push(data);
        }
        let get = |b: gltf::Buffer<'_>| buffers.get(b.index()).map(Vec::as_slice);

        // Nodes.
        let mut nodes: Vec<NodeRef> = document
            .nodes()
            .map(|n| {
                let local = match n.transform() {
                    gltf::scene::Transform::Matrix { matrix } => Local::Matrix(mat_from_cols(matrix)),
                    gltf::scene::Transform::Decomposed { translation, rotation, scale } => Local::Trs(Trsd {
                        translation: v3(translation),
                        rotation: Quatd::new(
                            f64::from(rotation[0]),
                            f64::from(rotation[1]),
                            f64::from(rotation[2]),
                            f64::from(rotation[3]),
                        ),
                        scale: v3(scale),
                    }),
                };
                NodeRef {
                    name: n.name().map(str::to_owned),
                    parent: None,
                    children: n.children().map(|c| c.index()).collect(),
                    local,
                    mesh: n.mesh().map(|m| m.index()),
                    skin: n.skin().map(|s| s.index()),
                    weights: n.weights().map(|w| w.iter().map(|&x| f64::from(x)).collect()),
                }
            })
            .collect();
        for p in 0..nodes.len() {
            for c in nodes[p].children.clone() {
                let slot = &mut nodes.get_mut(c).ok_or_else(|| data_err(format!("child {c} of node {p}")))?.parent;
                if slot.is_some() {
                    return Err(data_err(format!("node {c} has two parents")));
                }
                *slot = Some(p);
            }
        }
        // With one parent per node, a walk up that takes more steps than there are nodes loops.
        for start in 0..nodes.len() {
            let mut cur = start;
            for _ in 0..=nodes.len() {
                match nodes[cur].parent {
                    Some(p) => cur = p,
                    None => break,
                }
            }
            if nodes[cur].parent.is_some() {
                return Err(data_err(format!("node {start} is in a cycle")));
            }
        }
        let scene_roots = match document.default_scene() {
            Some(s) => s.nodes().map(|n| n.index()).collect(),
            None if document.scenes().len() > 0 => {
                let mut r: Vec<usize> = Vec::new();
                for s in document.scenes() {
                    for n in s.nodes() {
                        if !r.contains(&n.index()) {
                            r.push(n.index());
                        }
                    }
                }
                r
            }
            None => (0..nodes.len()).filter(|&i| nodes[i].parent.is_none()).collect(),
        };

        // Skins.
        let mut skins = Vec::new();
        for s in document.skins() {
            let joints: Vec<usize> = s.joints().map(|j| j.index()).collect();
            let inverse_bind = match s.reader(get).read_inverse_bind_matrices() {
                Some(it) => it.map(mat_from_cols).collect::<Vec<_>>(),
                None => vec![Mat4d::IDENTITY; joints.len()],
            };
            if inverse_bind.len() < joints.len() {
                return Err(data_err(format!("skin {}: fewer inverse bind matrices than joints", s.index())));
            }
            skins.push(SkinRef { joints, inverse_bind });
        }

        // Meshes.
        let mut meshes = Vec::new();
        for m in document.meshes() {
            let mut primitives = Vec::new();
            for p in m.primitives() {
                let r = p.reader(get);
                let positions: Vec<Vec3d> =
                    r.read_positions().ok_or_else(|| data_err("primitive without POSITION"))?.map(v3).collect();
                let normals = r.read_normals().map(|it| it.map(v3).collect::<Vec<_>>());
                let mut influences = vec![Vec::new(); positions.len()];
                let mut set = 0;
                while let (Some(js), Some(ws)) = (r.read_joints(set), r.read_weights(set)) {
                    let js: Vec<[u16; 4]> = js.into_u16().collect();
                    let ws: Vec<[f32; 4]> = ws.into_f32().collect();
                    if js.len() != positions.len() || ws.len() != positions.len() {
                        return Err(data_err(format!("mesh {} JOINTS_{set}/WEIGHTS_{set} count", m.index())));
                    }
                    for (v, inf) in influences.iter_mut().enumerate() {
                        for k in 0..4 {
                            if ws[v][k] != 0.0 {
                                inf.push((js[v][k], f64::from(ws[v][k])));
                            }
                        }
                    }
                    set += 1;
                }
                let triangles = matches!(
                    p.mode(),
                    gltf::mesh::Mode::Triangles | gltf::mesh::Mode::TriangleStrip | gltf::mesh::Mode::TriangleFan
                );
                let mut targets = Vec::new();
                for (ti, (dp, dn, _)) in r.read_morph_targets().enumerate() {
                    let dp: Vec<Vec3d> = match dp {
                        Some(it) => it.map(v3).collect(),
                        None => vec![Vec3d::ZERO; positions.len()],
                    };
                    let dn: Option<Vec<Vec3d>> = dn.map(|it| it.map(v3).collect());
                    if dp.len() != positions.len() || dn.as_ref().is_some_and(|d| d.len() != positions.len()) {
                        return Err(data_err(format!("mesh {} target {ti}: delta count", m.index())));
                    }
                    targets.push((dp, dn));
                }
                primitives.push(PrimitiveRef { positions, normals, influences, triangles, targets });
            }
            let weights = m.weights().map(|w| w.iter().map(|&x| f64::from(x)).collect());
            meshes.push(MeshRef { primitives, weights });
        }

        // Animations.
        let mut animations = Vec::new();
        for a in document.animations() {
            let mut channels = Vec::new();
            for ch in a.channels() {
                let node = ch.target().node().index();
                let target = match ch.target().property() {
                    Property::Translation => Target::Translation,
                    Property::Rotation => Target::Rotation,
                    Property::Scale => Target::Scale,
                    Property::MorphTargetWeights => Target::Weights,
                };
                if target != Target::Weights && matches!(nodes.get(node).map(|n| n.local), Some(Local::Matrix(_))) {
                    return Err(data_err(format!("animation {} targets node {node}, which has a matrix", a.index())));
                }
                let interpolation = match ch.sampler().interpolation() {
                    gltf::animation::Interpolation::Step => Interp::Step,
                    gltf::animation::Interpolation::Linear => Interp::Linear,
                    gltf::animation::Interpolation::CubicSpline => Interp::CubicSpline,
                };
                let r = ch.reader(get);
                let times: Vec<f64> =
                    r.read_inputs().ok_or_else(|| data_err("channel without input"))?.map(f64::from).collect();
                let values: Vec<[f64; 4]> = match r.read_outputs().ok_or_else(|| data_err("channel without output"))? {
                    ReadOutputs::Translations(it) | ReadOutputs::Scales(it) => {
                        it.map(|v| [f64::from(v[0]), f64::from(v[1]), f64::from(v[2]), 0.0]).collect()
                    }
                    ReadOutputs::Rotations(it) => it.into_f32().map(|v| v.map(f64::from)).collect(),
                    ReadOutputs::MorphTargetWeights(it) => {
                        it.into_f32().map(|w| [f64::from(w), 0.0, 0.0, 0.0]).collect()
                    }
                };
                let per_key = if interpolation == Interp::CubicSpline { 3 } else { 1 };
                if target != Target::Weights && values.len() != per_key * times.len() {
                    return Err(data_err(format!(
                        "animation {} channel: {} outputs for {} keys",
                        a.index(),
                        values.len(),
                        times.len()
                    )));
                }
                channels.push(ChannelRef { node, target, interpolation, times, values });
            }
            animations.push(AnimationRef { name: a.name().map(str::to_owned), channels });
        }
        Ok(GltfRef { nodes, scene_roots, skins, meshes, animations })
    }

    /// The order sinew's glTF importer documents for its joints: depth-first from
    /// [`GltfRef::scene_roots`], parents before children, children in file order.
    #[must_use]
    pub fn import_order(&self) -> Vec<usize> {
        let mut order = Vec::with_capacity(self.nodes.len());
        let mut seen = vec![false; self.nodes.len()];
        let mut stack: Vec<usize> = self.scene_roots.iter().rev().copied().collect();
        while let Some(i) = stack.pop() {
            if i >= seen.len() || seen[i] {
                continue;
            }
            seen[i] = true;
            order.push(i);
            stack.extend(self.nodes[i].children.iter().rev());
        }
        order
    }

    /// Every node's local transform at time `t` of animation `anim` (`None`: the rest pose).
    /// Matrix nodes stay [`Local::Matrix`]; channels replace the properties they target.
    #[must_use]
    pub fn local_pose(&self, anim: Option<usize>, t: f64) -> Vec<Local> {
        let mut pose: Vec<Local> = self.nodes.iter().map(|n| n.local).collect();
        if let Some(a) = anim.and_then(|a| self.animations.get(a)) {
            for c in &a.channels {
                let Some(Local::Trs(trs)) = pose.get_mut(c.node) else { continue };
                let v = c.sample(t);
                match c.target {
                    Target::Translation => trs.translation = Vec3d::new(v[0], v[1], v[2]),
                    Target::Rotation => trs.rotation = Quatd::new(v[0], v[1], v[2], v[3]),
                    Target::Scale => trs.scale = Vec3d::new(v[0], v[1], v[2]),
                    Target::Weights => {}
                }
            }
        }
        pose
    }

    /// World matrices of every node (by file index) for a local pose: `world(parent) · local`.
    #[must_use]
    pub fn world(&self, pose: &[Local]) -> Vec<Mat4d> {
        let n = self.nodes.len();
        let mut world: Vec<Option<Mat4d>> = vec![None; n];
        for i in 0..n {
            // Walk up to the first node whose world matrix is known, then back down.
            let mut chain = vec![i];
            let mut cur = i;
            while world[cur].is_none() {
                match self.nodes[cur].parent {
                    Some(p) if world[p].is_none() => {
                        chain.push(p);
                        cur = p;
                    }
                    _ => break,
                }
            }
            for &j in chain.iter().rev() {
                if world[j].is_some() {
                    continue;
                }
                let local = pose.get(j).map_or(Mat4d::IDENTITY, Local::matrix);
                world[j] = Some(match self.nodes[j].parent.and_then(|p| world[p]) {
                    Some(pm) => pm * local,
                    None => local,
                });
            }
        }
        world.into_iter().map(|m| m.unwrap_or(Mat4d::IDENTITY)).collect()
    }

    /// World matrices at time `t` of animation `anim` (`None`: rest pose).
    #[must_use]
    pub fn world_at(&self, anim: Option<usize>, t: f64) -> Vec<Mat4d> {
        self.world(&self.local_pose(anim, t))
    }

    /// Joint matrices of skin `skin`: `world(joint) · inverse bind`, in skin-joint order.
    ///
    /// # Errors
    ///
    /// [`GltfRefError::Data`] for a missing skin; a [`GltfRefError::Reference`] for a joint
    /// outside `world`.
    pub fn joint_matrices(&self, world: &[Mat4d], skin: usize) -> Result<Vec<Mat4d>, GltfRefError> {
        let s = self.skins.get(skin).ok_or_else(|| data_err(format!("no skin {skin}")))?;
        let joints: Vec<u16> = s.joints.iter().map(|&j| j as u16).collect();
        Ok(reference::skin_matrices(world, &s.inverse_bind[..joints.len()], Some(&joints))?)
    }

    /// The first node, in [`GltfRef::import_order`], that instances a mesh with skin `skin`:
    /// `(node, mesh)`.
    #[must_use]
    pub fn skinned_instance(&self, skin: usize) -> Option<(usize, usize)> {
        self.import_order().into_iter().find_map(|i| match (self.nodes[i].mesh, self.nodes[i].skin) {
            (Some(m), Some(s)) if s == skin => Some((i, m)),
            _ => None,
        })
    }

    /// The number of morph targets of mesh `mesh` (its first primitive's).
    #[must_use]
    pub fn num_targets(&self, mesh: usize) -> usize {
        self.meshes.get(mesh).and_then(|m| m.primitives.first()).map_or(0, |p| p.targets.len())
    }

    /// The morph weights of the mesh instance at `node` at time `t` of animation `anim`
    /// (`None`: the defaults): the node's `weights` channel in the animation (clamped to its
    /// first and last key like every channel), else the node's `weights`, else the mesh's,
    /// else zeros; empty without a mesh or targets.
    #[must_use]
    pub fn morph_weights(&self, node: usize, anim: Option<usize>, t: f64) -> Vec<f64> {
        let Some(n) = self.nodes.get(node) else { return Vec::new() };
        let Some(mesh) = n.mesh else { return Vec::new() };
        let targets = self.num_targets(mesh);
        let channel = anim
            .and_then(|a| self.animations.get(a))
            .and_then(|a| a.channels.iter().find(|c| c.node == node && c.target == Target::Weights));
        if let Some(c) = channel {
            return (0..targets).map(|j| weight_channel_value(c, targets, j, t)).collect();
        }
        let given = n.weights.clone().or_else(|| self.meshes.get(mesh).and_then(|m| m.weights.clone()));
        given.unwrap_or_else(|| vec![0.0; targets])
    }

    /// Mesh `mesh` with its morph targets applied with `weights`: positions and normals plus
    /// the weighted deltas, influences unchanged.
    ///
    /// # Errors
    ///
    /// [`GltfRefError::Data`] for a missing mesh.
    pub fn morphed_mesh(&self, mesh: usize, weights: &[f64]) -> Result<MeshRef, GltfRefError> {
        let mut m = self.meshes.get(mesh).ok_or_else(|| data_err(format!("no mesh {mesh}")))?.clone();
        for p in &mut m.primitives {
            for ((dp, dn), &w) in p.targets.iter().zip(weights) {
                for (v, d) in p.positions.iter_mut().zip(dp) {
                    *v = *v + *d * w;
                }
                if let (Some(n), Some(dn)) = (p.normals.as_mut(), dn) {
                    for (v, d) in n.iter_mut().zip(dn) {
                        *v = *v + *d * w;
                    }
                }
            }
        }
        Ok(m)
    }

    /// The final positions and normals of the mesh instance at `node` at time `t` of `anim`,
    /// in scene space: morphed, then skinned with the node's skin, or placed by the node's
    /// world matrix when it has none (normals by its 3×3 part, not renormalized).
    ///
    /// # Errors
    ///
    /// [`GltfRefError::Data`] when the node instances no mesh; as [`GltfRef::skin_mesh`].
    pub fn mesh_instance(
        &self,
        node: usize,
        anim: Option<usize>,
        t: f64,
        method: Method,
        rule: WeightRule,
    ) -> Result<SkinnedMesh, GltfRefError> {
        let n = self.nodes.get(node).ok_or_else(|| data_err(format!("no node {node}")))?;
        let mesh = n.mesh.ok_or_else(|| data_err(format!("node {node} has no mesh")))?;
        let world = self.world_at(anim, t);
        let m = self.morphed_mesh(mesh, &self.morph_weights(node, anim, t))?;
        if let Some(skin) = n.skin {
            return self.skin_primitives(&world, skin, &m, method, rule);
        }
        let w = world.get(node).copied().unwrap_or(Mat4d::IDENTITY);
        let mut out = SkinnedMesh::default();
        for p in m.primitives.iter().filter(|p| p.triangles && !p.positions.is_empty()) {
            out.positions.extend(p.positions.iter().map(|&v| w.transform_point(v)));
            out.normals.extend(p.normals.iter().flatten().map(|&v| w.transform_vector(v)));
        }
        Ok(out)
    }

    /// Skins every triangle primitive of mesh `mesh` with skin `skin` at world matrices
    /// `world`.
    ///
    /// # Errors
    ///
    /// [`GltfRefError::Data`] for a missing mesh or skin, a [`GltfRefError::Reference`] for a
    /// joint index past the skin (with a non-zero weight) or a degenerate dual-quaternion blend.
    pub fn skin_mesh(
        &self,
        world: &[Mat4d],
        skin: usize,
        mesh: usize,
        method: Method,
        weights: WeightRule,
    ) -> Result<SkinnedMesh, GltfRefError> {
        let m = self.meshes.get(mesh).ok_or_else(|| data_err(format!("no mesh {mesh}")))?;
        self.skin_primitives(world, skin, m, method, weights)
    }

    /// Skins the triangle primitives of `m` with skin `skin` at world matrices `world`.
    fn skin_primitives(
        &self,
        world: &[Mat4d],
        skin: usize,
        m: &MeshRef,
        method: Method,
        weights: WeightRule,
    ) -> Result<SkinnedMesh, GltfRefError> {
        let palette = self.joint_matrices(world, skin)?;
        let mut out = SkinnedMesh::default();
        for p in m.primitives.iter().filter(|p| p.triangles && !p.positions.is_empty()) {
            let k = p.influences.iter().map(Vec::len).max().unwrap_or(0).max(1);
            let n = p.positions.len();
            let mut joints = vec![0u16; n * k];
            let mut w = vec![0.0f64; n * k];
            for (v, inf) in p.influences.iter().enumerate() {
                let sum: f64 = inf.iter().map(|x| x.1).sum();
                let scale = match weights {
                    WeightRule::RenormalizeBeyond(tol) if sum != 0.0 && (sum - 1.0).abs() > tol => {
                        out.renormalized += 1;
                        1.0 / sum
                    }
                    _ => 1.0,
                };
                for (i, &(j, wt)) in inf.iter().enumerate() {
                    joints[v * k + i] = j;
                    w[v * k + i] = wt * scale;
                }
            }
            let input = SkinInput {
                influences: k,
                joints: &joints,
                weights: &w,
                positions: &p.positions,
                normals: p.normals.as_deref(),
                tangents: None,
            };
            let Skinned { positions, normals, .. } = match method {
                Method::Linear => reference::skin_linear(&palette, &input)?,
                Method::DualQuat => reference::skin_dual_quat_scaled(&palette, &input)?,
            };
            out.positions.extend(positions);
            out.normals.extend(normals.unwrap_or_default());
        }
        Ok(out)
    }
}

/// Target `j`'s weight of `weights` channel `c` (of a mesh with `targets` targets) at `t`:
/// glTF 2.0 Appendix C on scalars, `targets` elements per key (`3 × targets` for cubic
/// splines: in-tangents, values, out-tangents).
fn weight_channel_value(c: &ChannelRef, targets: usize, j: usize, t: f64) -> f64 {
    let n = c.times.len();
    let cubic = c.interpolation == Interp::CubicSpline;
    let at = |k: usize, part: usize| -> f64 {
        let i = if cubic { (3 * k + part) * targets + j } else { k * targets + j };
        c.values.get(i).map_or(0.0, |v| v[0])
    };
    if n == 0 {
        return 0.0;
    }
    if n == 1 || t <= c.times[0] {
        return at(0, 1);
    }
    if t >= c.times[n - 1] {
        return at(n - 1, 1);
    }
    let k = c.times.partition_point(|&x| x <= t) - 1;
    let (t0, t1) = (c.times[k], c.times[k + 1]);
    let td = t1 - t0;
    let s = (t - t0) / td;
    match c.interpolation {
        Interp::Step => at(k, 1),
        Interp::Linear => at(k, 1) + (at(k + 1, 1) - at(k, 1)) * s,
        Interp::CubicSpline => {
            let (s2, s3) = (s * s, s * s * s);
            (2.0 * s3 - 3.0 * s2 + 1.0) * at(k, 1)
                + td * (s3 - 2.0 * s2 + s) * at(k, 2)
                + (-2.0 * s3 + 3.0 * s2) * at(k + 1, 1)
                + td * (s3 - s2) * at(k + 1, 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(target: Target, interpolation: Interp, times: &[f64], values: &[[f64; 4]]) -> ChannelRef {
        ChannelRef { node: 0, target, interpolation, times: times.to_vec(), values: values.to_vec() }
    }

    #[test]
    fn weights_channels_hold_targets_per_key() {
        let w = |x: f64| [x, 0.0, 0.0, 0.0];
        // Two targets, two keys: linear.
        let c = channel(Target::Weights, Interp::Linear, &[0.0, 2.0], &[w(0.0), w(1.0), w(1.0), w(0.0)]);
        assert_eq!([0, 1].map(|j| weight_channel_value(&c, 2, j, 0.5)), [0.25, 0.75]);
        assert_eq!([0, 1].map(|j| weight_channel_value(&c, 2, j, 9.0)), [1.0, 0.0]);
        // One target, cubic: [a, v, b] per key; out-tangent 3 per second over td = 2 s.
        let c = channel(
            Target::Weights,
            Interp::CubicSpline,
            &[0.0, 2.0],
            &[w(0.0), w(0.0), w(3.0), w(0.0), w(1.0), w(0.0)],
        );
        assert!((weight_channel_value(&c, 1, 0, 1.0) - 1.25).abs() < 1e-15);
        let s = channel(Target::Weights, Interp::Step, &[0.0, 1.0], &[w(0.5), w(2.0)]);
        assert_eq!(weight_channel_value(&s, 1, 0, 0.999), 0.5);
    }

    #[test]
    fn linear_rotation_takes_the_short_arc() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        // Identity to a quarter turn about z, the end stored with the opposite sign.
        let c = channel(Target::Rotation, Interp::Linear, &[1.0, 3.0], &[[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, -h, -h]]);
        let q = c.sample(2.0);
        let want = (std::f64::consts::PI / 8.0).sin_cos();
        assert!((q[2].abs() - want.0).abs() < 1e-15 && (q[3].abs() - want.1).abs() < 1e-15, "{q:?}");
        assert_eq!(c.sample(0.0), [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(c.sample(5.0), [0.0, 0.0, -h, -h]);
    }

    #[test]
    fn step_and_cubic_spline() {
        let s = channel(Target::Translation, Interp::Step, &[0.0, 1.0], &[[1.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]]);
        assert_eq!(s.sample(0.999)[0], 1.0);
        assert_eq!(s.sample(1.0)[0], 2.0);
        // p(s) with p0 = 0, p1 = 1, out-tangent 3 per second at key 0, in-tangent 0 at key 1,
        // over td = 2 s: at s = ½, ½ + 2·3/8.
        let z = [0.0; 4];
        let c = channel(
            Target::Scale,
            Interp::CubicSpline,
            &[0.0, 2.0],
            &[z, z, [3.0, 0.0, 0.0, 0.0], z, [1.0, 0.0, 0.0, 0.0], z],
        );
        assert!((c.sample(1.0)[0] - 1.25).abs() < 1e-15);
        assert_eq!(c.sample(2.0)[0], 1.0);
        // Cubic rotations are normalized.
        let r = channel(
            Target::Rotation,
            Interp::CubicSpline,
            &[0.0, 1.0],
            &[z, [0.0, 0.0, 0.0, 1.0], z, z, [0.0, 0.0, 1.0, 0.0], z],
        );
        let q = r.sample(0.5);
        assert!((q.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-15);
    }
}
