//! The baker: turns a [`Rig`] into a `.sinew` file.
//!
//! - **Skeleton**: every rig joint (names cut to `MAX_NAME_LEN` bytes and kept unique).
//! - **Meshes**: influences limited to `max_influences` per vertex (the largest kept,
//!   renormalized; the count of changed vertices is reported), and triangles split into parts
//!   whose bone palettes fit `palette` joints (vertices duplicated across parts as needed).
//! - **Clips**: cubic splines are stored losslessly; STEP and LINEAR tracks are quantized
//!   (rotations smallest-three 3 × 15 bits, translations and scales 16 bits in a per-track
//!   range, times 16 bits in the clip range), constant tracks collapse to one key, and keys
//!   are removed while the error stays within `tolerance` — measured as the displacement of
//!   virtual vertices at `shell` distance from every joint, in model space, through the
//!   hierarchy (a child's error includes its parents'). The bound is verified by sampling the
//!   encoded clip with the runtime at every source key time and between them; tracks on the
//!   path of a joint that misses it are re-encoded with a tighter budget.
//! - **Bounded work**: key reduction and error measurement count their steps against
//!   [`BakeOptions::max_work`] (shared by the clips of one bake). A clip whose search would not
//!   fit in what is left — one measurement pass alone too big, or the budget running out between
//!   rounds — is stored lossless instead (every key `f32`, linear rotations slerped exactly, so
//!   it reproduces the source keys and needs no measurement) and reported as such
//!   ([`ClipReport::fallback`]). The bake stays correct; only its size grows.
//! - **Checks**: skin weights must not be negative or all zero on a vertex, inverse bind
//!   matrices must be finite (typed [`BakeError`]s); triangles that repeat a vertex are dropped
//!   and counted ([`BakeReport::degenerate_triangles`]).

use std::collections::HashMap;
use std::fmt;

use sinew::asset::format::*;
use sinew::asset::writer::Writer;
use sinew::asset::Asset;
use sinew::clip::RotationInterpolation;
use sinew::job::SamplingJob;
use sinew::limits::{MAX_INFLUENCES, MAX_JOINTS, MAX_NAME_LEN};
use sinew::math::SoaTransform;

use crate::eval::{self, Trs, M4};
use crate::rig::{ChannelTarget, Interpolation, Rig, RigChannel, RigClip};

/// Baking options.
#[derive(Debug, Clone, Copy)]
pub struct BakeOptions {
    /// Largest allowed displacement of a virtual vertex, in meters (default 1e-4: 0.01 cm);
    /// converted to scene units with [`Rig::meters_per_unit`].
    pub tolerance: f64,
    /// Distance of the virtual vertices from each joint, in meters (default 0.03).
    pub shell: f64,
    /// Largest bone palette per mesh part (`None`: one part per primitive).
    pub palette: Option<usize>,
    /// Most influences per vertex kept in meshes (1 to `MAX_INFLUENCES`; default 4).
    pub max_influences: usize,
    /// Store every key as lossless `f32` (no quantization, no reduction).
    pub lossless: bool,
    /// Most work steps the key reduction and error measurement of all clips may take (default
    /// [`MAX_BAKE_WORK`]): one step is one source key checked by the reduction, or one joint or
    /// track evaluated at one time by the measurement. Clips that do not fit are stored
    /// lossless (see the module documentation).
    pub max_work: u64,
}

/// Default [`BakeOptions::max_work`]: 2²⁵ (33.5 million) steps, about 5 s of baking in an
/// unoptimized build. The sample models take at most 3.6 million (`pab_crossarms`, BrainStem).
pub const MAX_BAKE_WORK: u64 = 1 << 25;

impl Default for BakeOptions {
    fn default() -> Self {
        BakeOptions {
            tolerance: 1.0e-4,
            shell: 0.03,
            palette: None,
            max_influences: 4,
            lossless: false,
            max_work: MAX_BAKE_WORK,
        }
    }
}

/// Why baking failed.
#[derive(Debug, Clone, PartialEq)]
pub enum BakeError {
    /// More joints than `MAX_JOINTS`.
    TooManyJoints(usize),
    /// A channel has more keys than a track holds (65535).
    TooManyKeys {
        /// Clip name.
        clip: String,
    },
    /// A joint's rest transform is not finite.
    NonFiniteRest {
        /// Joint name.
        joint: String,
    },
    /// A triangle needs more joints than the palette holds.
    PaletteTooSmall {
        /// Palette size asked for.
        palette: usize,
        /// Joints one triangle needs.
        needed: usize,
    },
    /// A skinned vertex has a negative weight.
    NegativeWeight {
        /// Mesh name.
        mesh: String,
        /// Primitive index within the mesh.
        primitive: usize,
        /// Vertex index within the primitive.
        vertex: usize,
    },
    /// A skinned vertex has all its weights zero (it would follow no joint).
    ZeroWeights {
        /// Mesh name.
        mesh: String,
        /// Primitive index within the mesh.
        primitive: usize,
        /// Vertex index within the primitive.
        vertex: usize,
    },
    /// An inverse bind matrix is not finite.
    NonFiniteBind {
        /// Skin name.
        skin: String,
        /// Skin joint whose matrix it is.
        joint: usize,
    },
    /// The rig is inconsistent (an index out of range, a NaN vertex), with a description.
    Invalid(String),
    /// The encoded file failed to parse (an internal error), with the parser's message.
    Encoding(String),
}

impl fmt::Display for BakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooManyJoints(n) => write!(f, "{n} joints exceed the limit of {MAX_JOINTS}"),
            Self::TooManyKeys { clip } => write!(f, "clip '{clip}' has a channel with more than 65535 keys"),
            Self::NonFiniteRest { joint } => write!(f, "joint '{joint}' has a non-finite rest transform"),
            Self::PaletteTooSmall { palette, needed } => {
                write!(f, "palette of {palette} joints is too small: a triangle needs {needed}")
            }
            Self::NegativeWeight { mesh, primitive, vertex } => {
                write!(f, "mesh '{mesh}' primitive {primitive} vertex {vertex} has a negative weight")
            }
            Self::ZeroWeights { mesh, primitive, vertex } => {
                write!(f, "mesh '{mesh}' primitive {primitive} vertex {vertex} has all weights zero")
            }
            Self::NonFiniteBind { skin, joint } => {
                write!(f, "skin '{skin}': the inverse bind matrix of joint {joint} is not finite")
            }
            Self::Invalid(s) => write!(f, "invalid rig: {s}"),
            Self::Encoding(s) => write!(f, "internal encoding error: {s}"),
        }
    }
}

impl std::error::Error for BakeError {}

/// What baking one clip gave.
#[derive(Debug, Clone)]
pub struct ClipReport {
    /// Clip name.
    pub name: String,
    /// Clip length in seconds.
    pub duration: f32,
    /// Tracks written.
    pub tracks: usize,
    /// Keys in the source channels.
    pub source_keys: usize,
    /// Keys written.
    pub baked_keys: usize,
    /// Distinct source key times.
    pub source_times: usize,
    /// Reference size: 10 `f32` per joint per distinct source key time.
    pub raw_bytes: usize,
    /// Size of the clip section.
    pub baked_bytes: usize,
    /// Largest virtual-vertex error measured, in scene units (see `Rig::meters_per_unit`).
    pub max_error: f64,
    /// Joint with the largest error.
    pub max_error_joint: String,
    /// Work steps the clip's reduction and measurement took (see [`BakeOptions::max_work`]).
    pub work: u64,
    /// The search did not fit the work budget: the clip is stored lossless (every key `f32`,
    /// linear rotations slerped exactly) and was not measured (`max_error` is 0).
    pub fallback: bool,
}

/// What baking gave.
#[derive(Debug, Clone, Default)]
pub struct BakeReport {
    /// Per clip.
    pub clips: Vec<ClipReport>,
    /// Vertices whose influences were cut to `max_influences`.
    pub clamped_vertices: usize,
    /// Triangles dropped because they use one vertex twice (they cover no pixel).
    pub degenerate_triangles: usize,
    /// Mesh parts written.
    pub parts: usize,
    /// File size.
    pub bytes: usize,
}

struct EncTrack {
    joint: u16,
    target: u8,
    interp: u8,
    format: u8,
    flags: u8,
    keys: u16,
    data: Vec<u8>,
}

struct EncClip {
    name: String,
    start: f32,
    end: f32,
    tracks: Vec<EncTrack>,
}

struct EncPart {
    palette: Vec<u16>,
    positions: Vec<[f32; 3]>,
    normals: Option<Vec<[f32; 3]>>,
    tangents: Option<Vec<[f32; 4]>>,
    influences: usize,
    joints: Vec<u16>,
    weights: Vec<f32>,
    indices: Vec<u32>,
}

struct EncMesh {
    name: String,
    skin: u16,
    node: u16,
    color: [u8; 4],
    parts: Vec<EncPart>,
}

/// A skin as written: name, skeleton joints, inverse bind matrices.
type EncSkin = (String, Vec<u16>, Vec<[f32; 16]>);

struct EncSkeleton {
    parents: Vec<i16>,
    rest: Vec<[f32; 10]>,
    names: Vec<String>,
}

/// Cuts names to `MAX_NAME_LEN` bytes and makes them unique.
fn unique_names(names: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for n in names {
        let mut base = cut(&n, MAX_NAME_LEN);
        if seen.contains_key(&base) {
            let mut k = 2;
            loop {
                let suffix = format!("~{k}");
                let cand = format!("{}{suffix}", cut(&base, MAX_NAME_LEN - suffix.len()));
                if !seen.contains_key(&cand) {
                    base = cand;
                    break;
                }
                k += 1;
            }
        }
        seen.insert(base.clone(), out.len());
        out.push(base);
    }
    out
}

fn cut(s: &str, max: usize) -> String {
    let mut n = s.len().min(max);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    s[..n].to_string()
}

fn skeleton_of(rig: &Rig) -> Result<EncSkeleton, BakeError> {
    if rig.joints.len() > MAX_JOINTS {
        return Err(BakeError::TooManyJoints(rig.joints.len()));
    }
    let mut parents = Vec::new();
    let mut rest = Vec::new();
    for (i, j) in rig.joints.iter().enumerate() {
        let p = match j.parent {
            Some(p) if p < i => p as i16,
            Some(p) => return Err(BakeError::Invalid(format!("joint {i} has parent {p}, not before it"))),
            None => -1,
        };
        parents.push(p);
        if !j.rest.is_finite() {
            return Err(BakeError::NonFiniteRest { joint: j.name.clone() });
        }
        let r = j.rest.rotation.normalize();
        let t = j.rest.translation;
        let s = j.rest.scale;
        rest.push([t.x, t.y, t.z, r.x, r.y, r.z, r.w, s.x, s.y, s.z]);
    }
    Ok(EncSkeleton { parents, rest, names: unique_names(rig.joints.iter().map(|j| j.name.clone())) })
}

fn emit(w: &mut Writer, skel: &EncSkeleton, skins: &[EncSkin], meshes: &[EncMesh], clips: &[&EncClip]) {
    let count = 1 + skins.len() + meshes.len() + clips.len();
    let table = w.begin_file(count as u32);
    let mut idx = 0;
    let start = w.len();
    w.u16(skel.parents.len() as u16);
    for &p in &skel.parents {
        w.i16(p);
    }
    for r in &skel.rest {
        for &v in r {
            w.f32(v);
        }
    }
    for n in &skel.names {
        w.str(n);
    }
    w.section(table, idx, KIND_SKELETON, start);
    idx += 1;
    for (name, joints, ib) in skins {
        let start = w.len();
        w.str(name);
        w.u16(joints.len() as u16);
        for &j in joints {
            w.u16(j);
        }
        for m in ib {
            for &v in m {
                w.f32(v);
            }
        }
        w.section(table, idx, KIND_SKIN, start);
        idx += 1;
    }
    for c in clips {
        let start = w.len();
        w.str(&c.name);
        w.f32(c.start);
        w.f32(c.end);
        w.u16(c.tracks.len() as u16);
        let dir = w.len();
        for _ in &c.tracks {
            w.bytes(&[0; TRACK_ENTRY_LEN]);
        }
        for (i, t) in c.tracks.iter().enumerate() {
            let off = (w.len() - start) as u32;
            w.bytes(&t.data);
            let mut e = [0u8; TRACK_ENTRY_LEN];
            e[..2].copy_from_slice(&t.joint.to_le_bytes());
            e[2] = t.target;
            e[3] = t.interp;
            e[4] = t.format;
            e[5] = t.flags;
            e[6..8].copy_from_slice(&t.keys.to_le_bytes());
            e[8..12].copy_from_slice(&off.to_le_bytes());
            w.patch_bytes(dir + i * TRACK_ENTRY_LEN, &e);
        }
        w.section(table, idx, KIND_CLIP, start);
        idx += 1;
    }
    for m in meshes {
        let start = w.len();
        w.str(&m.name);
        w.u16(m.skin);
        w.u16(m.node);
        w.bytes(&m.color);
        w.u16(m.parts.len() as u16);
        for p in &m.parts {
            w.u16(p.palette.len() as u16);
            for &j in &p.palette {
                w.u16(j);
            }
            w.u32(p.positions.len() as u32);
            w.u8(p.influences as u8);
            let attrs = if p.normals.is_some() { ATTR_NORMALS } else { 0 }
                | if p.tangents.is_some() { ATTR_TANGENTS } else { 0 };
            w.u8(attrs);
            for v in &p.positions {
                v.iter().for_each(|&x| w.f32(x));
            }
            if let Some(n) = &p.normals {
                n.iter().flatten().for_each(|&x| w.f32(x));
            }
            if let Some(t) = &p.tangents {
                t.iter().flatten().for_each(|&x| w.f32(x));
            }
            p.joints.iter().for_each(|&j| w.u16(j));
            p.weights.iter().for_each(|&x| w.f32(x));
            w.u32(p.indices.len() as u32);
            let wide = p.positions.len() > 65536;
            w.u8(if wide { 4 } else { 2 });
            for &i in &p.indices {
                if wide {
                    w.u32(i);
                } else {
                    w.u16(i as u16);
                }
            }
        }
        w.section(table, idx, KIND_MESH, start);
        idx += 1;
    }
    w.finish();
}

fn write_file(skel: &EncSkeleton, skins: &[EncSkin], meshes: &[EncMesh], clips: &[&EncClip]) -> Vec<u8> {
    let mut w = Writer::new(&mut []);
    emit(&mut w, skel, skins, meshes, clips);
    let mut buf = vec![0u8; w.len()];
    let mut w = Writer::new(&mut buf);
    emit(&mut w, skel, skins, meshes, clips);
    buf
}

/// Bakes a rig.
///
/// # Errors
///
/// [`BakeError`] when the rig cannot be represented (too many joints or keys, non-finite rest
/// values, vertices or inverse bind matrices, negative or all-zero skin weights, a palette too
/// small for a triangle, inconsistent indices). Running out of [`BakeOptions::max_work`] is
/// not an error: the clips that do not fit are stored lossless.
pub fn bake(rig: &Rig, opts: &BakeOptions) -> Result<(Vec<u8>, BakeReport), BakeError> {
    let skel = skeleton_of(rig)?;
    let mut report = BakeReport::default();
    let mut skins = Vec::new();
    for s in &rig.skins {
        if s.joints.iter().any(|&j| j >= rig.joints.len()) {
            return Err(BakeError::Invalid(format!("skin '{}' names a joint past the hierarchy", s.name)));
        }
        if let Some(joint) = s.inverse_bind.iter().position(|m| !m.iter().all(|v| v.is_finite())) {
            return Err(BakeError::NonFiniteBind { skin: s.name.clone(), joint });
        }
        skins.push((s.name.clone(), s.joints.iter().map(|&j| j as u16).collect(), s.inverse_bind.clone()));
    }
    let mut meshes = Vec::new();
    for m in &rig.meshes {
        meshes.push(bake_mesh(rig, m, opts, &mut report)?);
    }
    report.parts = meshes.iter().map(|m| m.parts.len()).sum();
    let mut clips = Vec::new();
    let unit = rig.meters_per_unit.filter(|u| *u > 0.0 && u.is_finite()).unwrap_or(1.0);
    let scene_opts = BakeOptions { tolerance: opts.tolerance / unit, shell: opts.shell / unit, ..*opts };
    let mut work = Work { left: opts.max_work };
    for c in &rig.clips {
        let (enc, rep) = bake_clip(rig, &skel, c, &scene_opts, &mut work)?;
        clips.push(enc);
        report.clips.push(rep);
    }
    let refs: Vec<&EncClip> = clips.iter().collect();
    let bytes = write_file(&skel, &skins, &meshes, &refs);
    Asset::parse(&bytes).map_err(|e| BakeError::Encoding(e.to_string()))?;
    // Section sizes for the report.
    if let Ok(a) = Asset::parse(&bytes) {
        for (i, r) in report.clips.iter_mut().enumerate() {
            r.baked_bytes = a.clip(i).map(|c| c.byte_len()).unwrap_or(0);
        }
    }
    report.bytes = bytes.len();
    Ok((bytes, report))
}

fn bake_mesh(
    rig: &Rig,
    m: &crate::rig::RigMesh,
    opts: &BakeOptions,
    report: &mut BakeReport,
) -> Result<EncMesh, BakeError> {
    let color = m.primitives.first().map(|p| p.color).unwrap_or([0.8, 0.8, 0.8, 1.0]);
    let color = color.map(|c| (c.clamp(0.0, 1.0) * 255.0 + 0.5) as u8);
    let skin_joints = match m.skin {
        Some(s) => Some(
            rig.skins
                .get(s)
                .ok_or_else(|| BakeError::Invalid(format!("mesh '{}' names a missing skin", m.name)))?
                .joints
                .len(),
        ),
        None => None,
    };
    let node = m.node.map(|n| n as u16).unwrap_or(NONE);
    let mut parts = Vec::new();
    let kmax = opts.max_influences.clamp(1, MAX_INFLUENCES);
    for (pi, p) in m.primitives.iter().enumerate() {
        let n = p.positions.len();
        if let Some(v) = p.positions.iter().position(|q| !q.iter().all(|x| x.is_finite())) {
            return Err(BakeError::Invalid(format!("mesh '{}' primitive {pi} vertex {v} is not finite", m.name)));
        }
        let (influences, joints, weights) = match skin_joints {
            Some(sj) if p.influences > 0 => {
                let k_in = p.influences;
                // Slots that are zero on every vertex are dropped (e.g. 4 slots holding 1 joint).
                let used = (0..n)
                    .map(|v| {
                        (0..k_in).filter(|&i| p.joint_weights.get(v * k_in + i).is_some_and(|&w| w != 0.0)).count()
                    })
                    .max()
                    .unwrap_or(1)
                    .max(1);
                let k = used.min(kmax);
                let mut joints = Vec::with_capacity(n * k);
                let mut weights = Vec::with_capacity(n * k);
                for v in 0..n {
                    let mut pairs: Vec<(u16, f32)> = (0..k_in)
                        .map(|i| {
                            (
                                p.joint_indices.get(v * k_in + i).copied().unwrap_or(0),
                                p.joint_weights.get(v * k_in + i).copied().unwrap_or(0.0),
                            )
                        })
                        .collect();
                    if pairs.iter().any(|&(j, w)| w != 0.0 && j as usize >= sj) {
                        return Err(BakeError::Invalid(format!("mesh '{}' has a joint index past its skin", m.name)));
                    }
                    if pairs.iter().any(|&(_, w)| !w.is_finite()) {
                        return Err(BakeError::Invalid(format!(
                            "mesh '{}' primitive {pi} vertex {v} has a non-finite weight",
                            m.name
                        )));
                    }
                    if pairs.iter().any(|&(_, w)| w < 0.0) {
                        return Err(BakeError::NegativeWeight { mesh: m.name.clone(), primitive: pi, vertex: v });
                    }
                    if pairs.iter().all(|&(_, w)| w == 0.0) {
                        return Err(BakeError::ZeroWeights { mesh: m.name.clone(), primitive: pi, vertex: v });
                    }
                    pairs.sort_by(|a, b| b.1.total_cmp(&a.1));
                    let dropped = pairs[k..].iter().any(|&(_, w)| w != 0.0);
                    let kept = &mut pairs[..k];
                    if dropped {
                        report.clamped_vertices += 1;
                        let sum: f32 = kept.iter().map(|p| p.1).sum();
                        if sum > 0.0 {
                            kept.iter_mut().for_each(|p| p.1 /= sum);
                        }
                    }
                    for &(j, w) in kept.iter() {
                        joints.push(if w == 0.0 { 0 } else { j });
                        weights.push(w);
                    }
                }
                (k, joints, weights)
            }
            _ => (0, Vec::new(), Vec::new()),
        };
        if p.indices.len() % 3 != 0 || p.indices.iter().any(|&i| i as usize >= n) {
            return Err(BakeError::Invalid(format!("mesh '{}' has invalid triangle indices", m.name)));
        }
        // Triangles that repeat a vertex cover no pixel; the format rejects them.
        let indices: Vec<u32> = p
            .indices
            .chunks_exact(3)
            .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
            .flatten()
            .copied()
            .collect();
        report.degenerate_triangles += (p.indices.len() - indices.len()) / 3;
        let full: Vec<u16> = match skin_joints {
            Some(sj) if influences > 0 => (0..sj as u16).collect(),
            _ => Vec::new(),
        };
        let split = match (opts.palette, influences) {
            (Some(limit), k) if k > 0 && full.len() > limit => Some(limit),
            _ => None,
        };
        match split {
            None => parts.push(EncPart {
                palette: full,
                positions: p.positions.clone(),
                normals: p.normals.clone(),
                tangents: p.tangents.clone(),
                influences,
                joints,
                weights,
                indices,
            }),
            Some(limit) => split_palette(p, &indices, influences, &joints, &weights, limit, &mut parts)?,
        }
    }
    Ok(EncMesh { name: m.name.clone(), skin: m.skin.map(|s| s as u16).unwrap_or(NONE), node, color, parts })
}

/// Splits one primitive's triangles into parts whose joint sets fit `limit`.
fn split_palette(
    p: &crate::rig::RigPrimitive,
    indices: &[u32],
    k: usize,
    joints: &[u16],
    weights: &[f32],
    limit: usize,
    parts: &mut Vec<EncPart>,
) -> Result<(), BakeError> {
    let vjoints = |v: usize| (0..k).filter(move |&i| weights[v * k + i] != 0.0).map(move |i| joints[v * k + i]);
    let mut cur: Vec<u16> = Vec::new();
    let mut tris: Vec<[u32; 3]> = Vec::new();
    let flush = |cur: &mut Vec<u16>, tris: &mut Vec<[u32; 3]>, parts: &mut Vec<EncPart>| {
        if tris.is_empty() {
            return;
        }
        let local: HashMap<u16, u16> = cur.iter().enumerate().map(|(i, &j)| (j, i as u16)).collect();
        let mut vmap: HashMap<u32, u32> = HashMap::new();
        let mut part = EncPart {
            palette: cur.clone(),
            positions: Vec::new(),
            normals: p.normals.as_ref().map(|_| Vec::new()),
            tangents: p.tangents.as_ref().map(|_| Vec::new()),
            influences: k,
            joints: Vec::new(),
            weights: Vec::new(),
            indices: Vec::new(),
        };
        for t in tris.iter() {
            for &v in t {
                let nv = *vmap.entry(v).or_insert_with(|| {
                    let vi = v as usize;
                    part.positions.push(p.positions[vi]);
                    if let (Some(dst), Some(src)) = (part.normals.as_mut(), p.normals.as_ref()) {
                        dst.push(src.get(vi).copied().unwrap_or([0.0; 3]));
                    }
                    if let (Some(dst), Some(src)) = (part.tangents.as_mut(), p.tangents.as_ref()) {
                        dst.push(src.get(vi).copied().unwrap_or([0.0; 4]));
                    }
                    for i in 0..k {
                        let w = weights[vi * k + i];
                        part.joints.push(if w == 0.0 {
                            0
                        } else {
                            local.get(&joints[vi * k + i]).copied().unwrap_or(0)
                        });
                        part.weights.push(w);
                    }
                    (part.positions.len() - 1) as u32
                });
                part.indices.push(nv);
            }
        }
        parts.push(part);
        cur.clear();
        tris.clear();
    };
    for t in indices.chunks_exact(3) {
        let mut need: Vec<u16> = Vec::new();
        for &v in t {
            for j in vjoints(v as usize) {
                if !need.contains(&j) {
                    need.push(j);
                }
            }
        }
        if need.len() > limit {
            return Err(BakeError::PaletteTooSmall { palette: limit, needed: need.len() });
        }
        let extra = need.iter().filter(|j| !cur.contains(j)).count();
        if cur.len() + extra > limit {
            flush(&mut cur, &mut tris, parts);
        }
        for j in need {
            if !cur.contains(&j) {
                cur.push(j);
            }
        }
        tris.push([t[0], t[1], t[2]]);
    }
    flush(&mut cur, &mut tris, parts);
    Ok(())
}

// ------------------------------------------------------------------------------------------
// Clips
// ------------------------------------------------------------------------------------------

fn target_code(t: ChannelTarget) -> u8 {
    match t {
        ChannelTarget::Translation => TARGET_TRANSLATION,
        ChannelTarget::Rotation => TARGET_ROTATION,
        ChannelTarget::Scale => TARGET_SCALE,
    }
}

fn interp_code(i: Interpolation) -> u8 {
    match i {
        Interpolation::Step => INTERP_STEP,
        Interpolation::Linear => INTERP_LINEAR,
        Interpolation::CubicSpline => INTERP_CUBIC,
    }
}

fn encode_f32(c: &RigChannel) -> EncTrack {
    encode_f32_keys(c, &(0..c.times.len()).collect::<Vec<_>>())
}

/// Lossless `f32` encoding of the kept keys (all components of each key, tangents included).
fn encode_f32_keys(c: &RigChannel, keys: &[usize]) -> EncTrack {
    let per_key = if c.interpolation == Interpolation::CubicSpline { 3 } else { 1 } * c.target.components();
    let mut data = Vec::with_capacity(keys.len() * (4 + 4 * per_key));
    keys.iter().for_each(|&k| data.extend_from_slice(&c.times[k].to_le_bytes()));
    for &k in keys {
        for j in 0..per_key {
            let v = c.values.get(k * per_key + j).copied().unwrap_or(0.0);
            data.extend_from_slice(&v.to_le_bytes());
        }
    }
    EncTrack {
        joint: c.joint as u16,
        target: target_code(c.target),
        interp: interp_code(c.interpolation),
        format: FORMAT_F32,
        flags: 0,
        keys: keys.len() as u16,
        data,
    }
}

fn key_value(c: &RigChannel, k: usize) -> [f64; 4] {
    let comps = c.target.components();
    core::array::from_fn(|j| if j < comps { c.values.get(k * comps + j).copied().unwrap_or(0.0) as f64 } else { 0.0 })
}

/// Quantized value range of a translation/scale track over `keys`: `min` and `scale` as stored.
fn range_of(c: &RigChannel, keys: &[usize]) -> ([f32; 3], [f32; 3]) {
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for &k in keys {
        let v = key_value(c, k);
        for j in 0..3 {
            lo[j] = lo[j].min(v[j] as f32);
            hi[j] = hi[j].max(v[j] as f32);
        }
    }
    let scale = core::array::from_fn(|j| (hi[j] - lo[j]) * (65536.0 / 65535.0));
    (lo, scale)
}

fn quantize_component(v: f64, min: f32, scale: f32) -> u16 {
    if scale <= 0.0 {
        return 0;
    }
    let q = (v - min as f64) / scale as f64 * 65536.0;
    q.round().clamp(0.0, 65535.0) as u16
}

/// Encodes the kept keys quantized; `None` when two kept keys fall on the same quantized time.
fn encode_quantized(c: &RigChannel, keys: &[usize], start: f32, end: f32) -> Option<EncTrack> {
    let mut data = Vec::new();
    let mut prev: Option<u16> = None;
    for &k in keys {
        let q = quantize_time(c.times[k], start, end);
        if prev.is_some_and(|p| q <= p) {
            return None;
        }
        prev = Some(q);
        data.extend_from_slice(&q.to_le_bytes());
    }
    if c.target == ChannelTarget::Rotation {
        for &k in keys {
            let v = key_value(c, k);
            data.extend_from_slice(&pack_rotation([v[0] as f32, v[1] as f32, v[2] as f32, v[3] as f32]));
        }
    } else {
        let (min, scale) = range_of(c, keys);
        min.iter().chain(scale.iter()).for_each(|x| data.extend_from_slice(&x.to_le_bytes()));
        for &k in keys {
            let v = key_value(c, k);
            for j in 0..3 {
                data.extend_from_slice(&quantize_component(v[j], min[j], scale[j]).to_le_bytes());
            }
        }
    }
    Some(EncTrack {
        joint: c.joint as u16,
        target: target_code(c.target),
        interp: interp_code(c.interpolation),
        format: FORMAT_QUANTIZED,
        flags: 0,
        keys: keys.len() as u16,
        data,
    })
}

/// Rotation angle between two unit quaternions: `4·asin(|a − ±b| / 2)`, accurate for tiny
/// angles.
fn angle(a: [f64; 4], b: [f64; 4]) -> f64 {
    let s = if (0..4).map(|i| a[i] * b[i]).sum::<f64>() < 0.0 { -1.0 } else { 1.0 };
    let diff: f64 = (0..4).map(|i| (a[i] - s * b[i]).powi(2)).sum::<f64>().sqrt();
    4.0 * (diff / 2.0).min(1.0).asin()
}

/// Largest rotation angle (radians) by which the runtime's corrected nlerp departs from exact
/// slerp between consecutive kept keys of a rotation channel.
fn nlerp_deviation(c: &RigChannel, keys: &[usize]) -> f64 {
    let q = |k: usize| {
        let v = key_value(c, k);
        sinew::math::Quat::new(v[0] as f32, v[1] as f32, v[2] as f32, v[3] as f32).normalize()
    };
    let mut worst = 0.0f64;
    for pair in keys.windows(2) {
        let (a, b) = (q(pair[0]), q(pair[1]));
        // Adjacent keys a few degrees apart deviate by far less than f32 resolution.
        if a.dot(b).abs() > 0.9999 {
            continue;
        }
        for s in [0.1f32, 0.2, 0.3, 0.7, 0.8, 0.9] {
            worst = worst
                .max(angle(a.nlerp_corrected(b, s).to_array().map(f64::from), a.slerp(b, s).to_array().map(f64::from)));
        }
    }
    worst
}

/// The error of approximating `raw` with `approx`, in scene units, for a track on a joint whose
/// farthest virtual vertex is `extent` away.
fn value_error(target: ChannelTarget, raw: [f64; 4], approx: [f64; 4], extent: f64) -> f64 {
    match target {
        ChannelTarget::Rotation => angle(raw, approx) * extent,
        ChannelTarget::Translation => (0..3).map(|j| (raw[j] - approx[j]).powi(2)).sum::<f64>().sqrt(),
        ChannelTarget::Scale => (0..3).map(|j| (raw[j] - approx[j]).abs()).fold(0.0, f64::max) * extent,
    }
}

fn interp_value(target: ChannelTarget, a: [f64; 4], b: [f64; 4], s: f64) -> [f64; 4] {
    if target == ChannelTarget::Rotation {
        eval::slerp(a, b, s)
    } else {
        core::array::from_fn(|j| a[j] + (b[j] - a[j]) * s)
    }
}

/// Most source key intervals one baked interval of [`reduce`] spans.
const MAX_REDUCE_SPAN: usize = 256;

/// What is left of a bake's work budget (see [`BakeOptions::max_work`]).
#[derive(Debug)]
struct Work {
    left: u64,
}

impl Work {
    /// Takes `steps` from the budget; false (and nothing taken) when they do not fit.
    fn spend(&mut self, steps: u64) -> bool {
        match self.left.checked_sub(steps) {
            Some(rest) => {
                self.left = rest;
                true
            }
            None => false,
        }
    }
}

/// Keys to keep so every removed key is reproduced within `tol` (scene units). Each key checked
/// costs one step of `work`; `None` when the budget runs out.
fn reduce(c: &RigChannel, tol: f64, extent: f64, work: &mut Work) -> Option<Vec<usize>> {
    let n = c.times.len();
    if n <= 1 {
        return Some((0..n).collect());
    }
    let first = key_value(c, 0);
    let mut within = |a: [f64; 4], b: [f64; 4]| -> Option<bool> {
        work.spend(1).then(|| value_error(c.target, a, b, extent) <= tol)
    };
    let mut constant = true;
    for k in 1..n {
        if !within(key_value(c, k), first)? {
            constant = false;
            break;
        }
    }
    if constant {
        return Some(vec![0]);
    }
    let mut kept = vec![0];
    if c.interpolation == Interpolation::Step {
        let mut last = first;
        for k in 1..n {
            let v = key_value(c, k);
            if !within(v, last)? {
                kept.push(k);
                last = v;
            }
        }
        return Some(kept);
    }
    let mut i = 0;
    let mut j = 2;
    while j < n {
        let (ti, tj) = (c.times[i] as f64, c.times[j] as f64);
        let (vi, vj) = (key_value(c, i), key_value(c, j));
        // A segment is checked key by key, so its length is capped: without the cap, keys on
        // a straight line make one segment of the whole track, checked in quadratic time.
        let mut ok = j - i <= MAX_REDUCE_SPAN;
        if ok {
            for m in i + 1..j {
                let s = (c.times[m] as f64 - ti) / (tj - ti);
                if !within(key_value(c, m), interp_value(c.target, vi, vj, s))? {
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            j += 1;
        } else {
            kept.push(j - 1);
            i = j - 1;
            j = i + 2;
        }
    }
    kept.push(n - 1);
    Some(kept)
}

/// Joint positions in the rest pose and, per joint, the distance to its farthest descendant.
fn extents(rig: &Rig, shell: f64) -> Vec<f64> {
    let pose = eval::local_pose(rig, None, 0.0);
    let model = eval::model_matrices(rig, &pose);
    let pos: Vec<[f64; 3]> = model.iter().map(|m| [m[3][0], m[3][1], m[3][2]]).collect();
    let mut ext = vec![0.0f64; rig.joints.len()];
    for j in (0..rig.joints.len()).rev() {
        let mut a = rig.joints[j].parent;
        while let Some(p) = a {
            let d = (0..3).map(|k| (pos[j][k] - pos[p][k]).powi(2)).sum::<f64>().sqrt();
            ext[p] = ext[p].max(d);
            a = rig.joints[p].parent;
        }
    }
    ext.iter().map(|e| e + shell).collect()
}

/// Largest virtual-vertex displacement between two model matrices.
fn shell_error(a: &M4, b: &M4, shell: f64) -> f64 {
    let mut worst = 0.0f64;
    for axis in 0..3 {
        for sgn in [-1.0, 1.0] {
            let mut p = [0.0; 3];
            p[axis] = sgn * shell;
            let (x, y) = (eval::transform_point(a, p), eval::transform_point(b, p));
            worst = worst.max((0..3).map(|k| (x[k] - y[k]).powi(2)).sum::<f64>().sqrt());
        }
    }
    worst
}

fn bake_clip(
    rig: &Rig,
    skel: &EncSkeleton,
    clip: &RigClip,
    opts: &BakeOptions,
    work: &mut Work,
) -> Result<(EncClip, ClipReport), BakeError> {
    let (start, end) = clip.time_range();
    let mut times: Vec<f32> = clip.channels.iter().flat_map(|c| c.times.iter().copied()).collect();
    times.sort_by(f32::total_cmp);
    times.dedup();
    let source_keys: usize = clip.channels.iter().map(|c| c.times.len()).sum();
    if clip.channels.iter().any(|c| c.times.len() > 65535) {
        return Err(BakeError::TooManyKeys { clip: clip.name.clone() });
    }
    let channels: Vec<&RigChannel> =
        clip.channels.iter().filter(|c| c.joint < rig.joints.len() && !c.times.is_empty()).collect();
    // Evaluation times: every source key time and three points inside each interval — at ½
    // and near the peaks of corrected nlerp's deviation (about 0.2 and 0.8).
    let mut eval_times: Vec<f64> = Vec::new();
    for (i, &t) in times.iter().enumerate() {
        eval_times.push(t as f64);
        if let Some(&n) = times.get(i + 1) {
            for f in [0.2, 0.5, 0.8] {
                eval_times.push(t as f64 + (n as f64 - t as f64) * f);
            }
        }
    }
    if eval_times.is_empty() {
        eval_times.push(start as f64);
    }
    let before = work.left;
    // One measurement: every joint and every source track at every evaluation time.
    let measure_cost = (eval_times.len() as u64).saturating_mul((rig.joints.len() + clip.channels.len()) as u64);
    let searched = if measure_cost <= work.left {
        search(rig, skel, clip, &channels, &eval_times, opts, measure_cost, work)?
    } else {
        None
    };
    let fallback = searched.is_none();
    let (tracks, errors) = match searched {
        Some(found) => found,
        None => {
            // Lossless, with exact slerp: the runtime reproduces the source's interpolation.
            let tracks = channels
                .iter()
                .map(|c| {
                    let mut t = encode_f32(c);
                    if c.target == ChannelTarget::Rotation && c.interpolation == Interpolation::Linear {
                        t.flags |= TRACK_FLAG_SLERP;
                    }
                    t
                })
                .collect();
            (tracks, vec![0.0; rig.joints.len()])
        }
    };
    let enc = EncClip { name: clip.name.clone(), start, end, tracks };
    let (worst_joint, max_error) =
        errors.iter().copied().enumerate().fold((0, 0.0f64), |acc, (j, e)| if e > acc.1 { (j, e) } else { acc });
    let animated: std::collections::HashSet<usize> = channels.iter().map(|c| c.joint).collect();
    let report = ClipReport {
        name: clip.name.clone(),
        duration: end - start,
        tracks: enc.tracks.len(),
        source_keys,
        baked_keys: enc.tracks.iter().map(|t| t.keys as usize).sum(),
        source_times: times.len(),
        raw_bytes: 40 * animated.len() * times.len(),
        baked_bytes: 0,
        max_error,
        max_error_joint: if fallback {
            String::new()
        } else {
            rig.joints.get(worst_joint).map(|j| j.name.clone()).unwrap_or_default()
        },
        work: before - work.left,
        fallback,
    };
    Ok((enc, report))
}

/// A clip's tracks and the per-joint errors measured for them.
type Searched = (Vec<EncTrack>, Vec<f64>);

/// The encoding search of [`bake_clip`]: encode, measure, tighten the joints that miss the bound,
/// repeat. Returns the tracks and the per-joint errors, or `None` when `work` runs out first.
#[allow(clippy::too_many_arguments)]
fn search(
    rig: &Rig,
    skel: &EncSkeleton,
    clip: &RigClip,
    channels: &[&RigChannel],
    eval_times: &[f64],
    opts: &BakeOptions,
    measure_cost: u64,
    work: &mut Work,
) -> Result<Option<Searched>, BakeError> {
    let (start, end) = clip.time_range();
    let ext = extents(rig, opts.shell);
    let mut budget = vec![0.5f64; rig.joints.len()];
    let mut enc = EncClip { name: clip.name.clone(), start, end, tracks: Vec::new() };
    // Per joint: 0 = quantized and reduced, 1 = f32 values but reduced keys (for joints whose
    // quantization steps alone exceed the bound), 2 = every key in f32. Joints on the path of a
    // joint that misses the bound get a halved budget, then move up a mode.
    let mut mode = vec![if opts.lossless { 2u8 } else { 0 }; rig.joints.len()];
    // Joints whose rotations must be slerped exactly: corrected nlerp deviates up to 7e-5 rad
    // per joint between keys, which long chains amplify past the bound.
    let mut slerp = vec![false; rig.joints.len()];
    // The last reduction of each channel and the tolerance it was made for: a joint whose budget
    // did not change keeps its keys without a second pass.
    let mut reduced: Vec<Option<(f64, Vec<usize>)>> = vec![None; channels.len()];
    let mut round = 0;
    loop {
        enc.tracks.clear();
        for (ci, c) in channels.iter().enumerate() {
            let tol = opts.tolerance * budget[c.joint];
            let lossless = mode[c.joint] == 2;
            let keys = if lossless || c.interpolation == Interpolation::CubicSpline {
                Vec::new()
            } else {
                match &reduced[ci] {
                    Some((t, k)) if *t == tol => k.clone(),
                    _ => {
                        let Some(k) = reduce(c, tol, ext[c.joint], work) else { return Ok(None) };
                        reduced[ci] = Some((tol, k.clone()));
                        k
                    }
                }
            };
            let mut t = if lossless || c.interpolation == Interpolation::CubicSpline {
                encode_f32(c)
            } else if mode[c.joint] == 1 {
                encode_f32_keys(c, &keys)
            } else {
                encode_quantized(c, &keys, start, end)
                    .or_else(|| encode_quantized(c, &(0..c.times.len()).collect::<Vec<_>>(), start, end))
                    .unwrap_or_else(|| encode_f32(c))
            };
            if c.target == ChannelTarget::Rotation && c.interpolation == Interpolation::Linear {
                let nlerp_error = if lossless {
                    nlerp_deviation(c, &(0..c.times.len()).collect::<Vec<_>>())
                } else {
                    nlerp_deviation(c, &keys)
                } * ext[c.joint];
                if slerp[c.joint] || nlerp_error > 0.25 * opts.tolerance * budget[c.joint] {
                    t.flags |= TRACK_FLAG_SLERP;
                }
            }
            enc.tracks.push(t);
        }
        if !work.spend(measure_cost) {
            return Ok(None);
        }
        let errors = measure(rig, skel, clip, &enc, eval_times, opts.shell)?;
        let failing: Vec<usize> = (0..errors.len()).filter(|&j| errors[j] > opts.tolerance).collect();
        if failing.is_empty() || round == 14 {
            return Ok(Some((enc.tracks, errors)));
        }
        for j in failing {
            let mut a = Some(j);
            while let Some(k) = a {
                // More keys first (they also shrink nlerp's deviation, which grows with the
                // angle between keys), then exact slerp, then lossless values.
                match (mode[k], round) {
                    (_, r) if r >= 12 => slerp[k] = true,
                    (0, r) if r >= 5 => {
                        mode[k] = 1;
                        budget[k] = 0.5;
                    }
                    (1, r) if r >= 10 => mode[k] = 2,
                    _ => budget[k] *= 0.5,
                }
                a = rig.joints[k].parent;
            }
        }
        round += 1;
    }
}

/// Samples the encoded clip with the runtime at every evaluation time and returns, per joint,
/// the largest virtual-vertex error against the source clip's model matrices. The reference is
/// evaluated time by time rather than kept for every time (times × joints matrices reach
/// gigabytes for long clips on large skeletons).
fn measure(
    rig: &Rig,
    skel: &EncSkeleton,
    source: &RigClip,
    enc: &EncClip,
    times: &[f64],
    shell: f64,
) -> Result<Vec<f64>, BakeError> {
    let bytes = write_file(skel, &[], &[], &[enc]);
    let asset = Asset::parse(&bytes).map_err(|e| BakeError::Encoding(e.to_string()))?;
    let clip = asset.clip(0).ok_or_else(|| BakeError::Encoding("clip missing".into()))?;
    let n = rig.joints.len();
    let soa = n.div_ceil(4);
    let mut rest = vec![SoaTransform::<f32>::IDENTITY; soa];
    for (i, r) in skel.rest.iter().enumerate() {
        let t = sinew::math::Transform::new(
            sinew::math::Vec3::new(r[0], r[1], r[2]),
            sinew::math::Quat::new(r[3], r[4], r[5], r[6]),
            sinew::math::Vec3::new(r[7], r[8], r[9]),
        );
        rest[i / 4].set_lane(i % 4, &t);
    }
    let mut out = vec![SoaTransform::<f32>::IDENTITY; soa];
    let mut cursor = vec![0u16; clip.num_tracks()];
    let mut errors = vec![0.0f64; n];
    for &t in times {
        SamplingJob {
            clip,
            time: t as f32,
            rotation: RotationInterpolation::NlerpCorrected,
            rest_pose: &rest,
            cursor: &mut cursor,
            output: &mut out,
        }
        .run()
        .map_err(|e| BakeError::Encoding(e.to_string()))?;
        let pose: Vec<Trs> = (0..n)
            .map(|i| {
                let l = out[i / 4].lane(i % 4);
                Trs {
                    t: l.translation.to_array().map(f64::from),
                    r: l.rotation.to_array().map(f64::from),
                    s: l.scale.to_array().map(f64::from),
                }
            })
            .collect();
        let model = eval::model_matrices(rig, &pose);
        let reference = eval::model_matrices(rig, &eval::local_pose(rig, Some(source), t));
        for j in 0..n {
            errors[j] = errors[j].max(shell_error(&model[j], &reference[j], shell));
        }
    }
    Ok(errors)
}
