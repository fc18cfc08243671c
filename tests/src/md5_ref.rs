//! An independent `f64` evaluator of Doom 3 md5 models (`MD5Version 10`): a small parser of the
//! `.md5mesh` / `.md5anim` text and the bind pose, animation and skinning computed from it.
//!
//! Conventions (those of the md5 format, which sinew's importer also documents):
//!
//! - Axes and units are kept (Z-up, Doom units of about an inch).
//! - A stored quaternion `(x, y, z)` gets `w = −√max(0, 1 − x² − y² − z²)`, then is normalized.
//!   The negative root makes `q · v · q*` the format's rotation (Doom 3 itself takes the
//!   positive root with row vectors, which is the same rotation).
//! - Mesh joints are in model space; anim base frame and frame values are local to the parent
//!   (model space for roots). A frame starts from the base frame and replaces the components
//!   whose flag bits are set (1, 2, 4: translation x, y, z; 8, 16, 32: quaternion x, y, z),
//!   reading consecutive numbers from `startIndex`.
//! - Frame `i` is the key at time `i / frameRate`; between frames translations interpolate
//!   linearly and rotations by shortest-path slerp; times outside the frames clamp.
//! - A bind vertex is `Σ bias · (joint position + joint rotation · weight position)`; its
//!   influences are its weights' (joint, bias) pairs, biases as stored; the inverse bind matrix
//!   of a joint is the inverse of its model-space bind matrix.
//! - Normals (md5 has none) are the normalized sum of the adjacent faces'
//!   `(c − a) × (b − a)` for each `tri a b c` (Doom 3 lists front faces clockwise, so this
//!   points out of the surface; the length weights faces by area); `+Z` where that sum is zero.

use std::fmt;
use std::path::Path;

use crate::reference::{self, DualQuatd, Mat4d, Quatd, ReferenceError, SkinInput, Trsd, Vec3d};

/// Why an md5 file could not be parsed or evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Md5RefError {
    /// A file could not be read.
    Io(String),
    /// The text does not follow the format: line and description.
    Syntax(usize, String),
    /// The reference math refused its input.
    Reference(ReferenceError),
}

impl fmt::Display for Md5RefError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(s) => write!(f, "cannot read: {s}"),
            Self::Syntax(line, s) => write!(f, "line {line}: {s}"),
            Self::Reference(e) => write!(f, "reference: {e}"),
        }
    }
}

impl std::error::Error for Md5RefError {}

impl From<ReferenceError> for Md5RefError {
    fn from(e: ReferenceError) -> Self {
        Self::Reference(e)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Str(String),
    Punct(char),
}

/// Words, quoted strings and the punctuation `( ) { }`; `//` comments dropped.
struct Tokens {
    toks: Vec<(Tok, usize)>,
    pos: usize,
}

impl Tokens {
    fn new(text: &str) -> Result<Self, Md5RefError> {
        let mut toks = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line_no = n + 1;
            let line = line.split_once("//").map_or(line, |(a, _)| a);
            let mut chars = line.char_indices().peekable();
            while let Some((i, c)) = chars.next() {
                match c {
                    c if c.is_whitespace() => {}
                    '(' | ')' | '{' | '}' => toks.push((Tok::Punct(c), line_no)),
                    '"' => {
                        let rest = &line[i + 1..];
                        let end =
                            rest.find('"').ok_or_else(|| Md5RefError::Syntax(line_no, "unterminated string".into()))?;
                        toks.push((Tok::Str(rest[..end].to_owned()), line_no));
                        for _ in 0..=rest[..end].chars().count() {
                            chars.next();
                        }
                    }
                    _ => {
                        let mut end = line.len();
                        while let Some(&(j, d)) = chars.peek() {
                            if d.is_whitespace() || "(){}\"".contains(d) {
                                end = j;
                                break;
                            }
                            chars.next();
                        }
                        toks.push((Tok::Word(line[i..end].to_owned()), line_no));
                    }
                }
            }
        }
        Ok(Tokens { toks, pos: 0 })
    }
    fn line(&self) -> usize {
        self.toks.get(self.pos).or(self.toks.last()).map_or(0, |t| t.1)
    }
    fn err<T>(&self, what: impl Into<String>) -> Result<T, Md5RefError> {
        Err(Md5RefError::Syntax(self.line(), what.into()))
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).map(|t| t.0.clone());
        self.pos += 1;
        t
    }
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }
    fn keyword(&mut self, k: &str) -> Result<(), Md5RefError> {
        match self.next() {
            Some(Tok::Word(w)) if w == k => Ok(()),
            other => self.err(format!("expected {k}, found {other:?}")),
        }
    }
    fn punct(&mut self, p: char) -> Result<(), Md5RefError> {
        match self.next() {
            Some(Tok::Punct(c)) if c == p => Ok(()),
            other => self.err(format!("expected '{p}', found {other:?}")),
        }
    }
    fn string(&mut self) -> Result<String, Md5RefError> {
        match self.next() {
            Some(Tok::Str(s)) => Ok(s),
            other => self.err(format!("expected a string, found {other:?}")),
        }
    }
    fn number(&mut self) -> Result<f64, Md5RefError> {
        match self.next() {
            Some(Tok::Word(w)) => match w.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => self.err(format!("'{w}' is not a finite number")),
            },
            other => self.err(format!("expected a number, found {other:?}")),
        }
    }
    fn int(&mut self) -> Result<i64, Md5RefError> {
        match self.next() {
            Some(Tok::Word(w)) => match w.parse::<i64>() {
                Ok(v) => Ok(v),
                Err(_) => self.err(format!("'{w}' is not an integer")),
            },
            other => self.err(format!("expected an integer, found {other:?}")),
        }
    }
    fn count(&mut self, k: &str) -> Result<usize, Md5RefError> {
        self.keyword(k)?;
        let v = self.int()?;
        usize::try_from(v).or_else(|_| self.err(format!("{k} {v} is negative")))
    }
    fn index(&mut self, limit: usize, what: &str) -> Result<usize, Md5RefError> {
        let v = self.int()?;
        match usize::try_from(v) {
            Ok(i) if i < limit => Ok(i),
            _ => self.err(format!("{what} {v} is not below {limit}")),
        }
    }
    fn vec3(&mut self) -> Result<Vec3d, Md5RefError> {
        self.punct('(')?;
        let v = Vec3d::new(self.number()?, self.number()?, self.number()?);
        self.punct(')')?;
        Ok(v)
    }
    fn header(&mut self) -> Result<(), Md5RefError> {
        self.keyword("MD5Version")?;
        if self.int()? != 10 {
            return self.err("only MD5Version 10 is read");
        }
        self.keyword("commandline")?;
        self.string()?;
        Ok(())
    }
    fn end(&self) -> Result<(), Md5RefError> {
        match self.peek() {
            None => Ok(()),
            Some(t) => self.err(format!("unexpected {t:?} after the last block")),
        }
    }
}

/// The unit quaternion of a stored `(x, y, z)` (see the module docs).
#[must_use]
pub fn quat_from_xyz(v: Vec3d) -> Quatd {
    let w2 = 1.0 - v.x * v.x - v.y * v.y - v.z * v.z;
    let w = if w2 > 0.0 { -w2.sqrt() } else { 0.0 };
    Quatd::new(v.x, v.y, v.z, w).normalized().unwrap_or(Quatd::IDENTITY)
}

/// A mesh joint: model-space bind transform.
#[derive(Debug, Clone)]
pub struct Md5JointRef {
    /// Name.
    pub name: String,
    /// Parent joint.
    pub parent: Option<usize>,
    /// Model-space bind position.
    pub position: Vec3d,
    /// Model-space bind orientation.
    pub orientation: Quatd,
}

/// A weight: a position in one joint's bind space, with its bias.
#[derive(Debug, Clone, Copy)]
pub struct Md5WeightRef {
    /// Joint.
    pub joint: usize,
    /// Bias.
    pub bias: f64,
    /// Position in the joint's space.
    pub position: Vec3d,
}

/// One `mesh` block.
#[derive(Debug, Clone)]
pub struct Md5MeshRef {
    /// Shader string.
    pub shader: String,
    /// `(startWeight, countWeight)` of each vertex.
    pub verts: Vec<(usize, usize)>,
    /// Triangles as stored (`tri i a b c`).
    pub tris: Vec<[usize; 3]>,
    /// Weights.
    pub weights: Vec<Md5WeightRef>,
}

/// An `.md5mesh` file.
#[derive(Debug, Clone)]
pub struct Md5MeshFile {
    /// Joints.
    pub joints: Vec<Md5JointRef>,
    /// Mesh blocks.
    pub meshes: Vec<Md5MeshRef>,
}

/// A hierarchy entry of an `.md5anim`.
#[derive(Debug, Clone)]
pub struct Md5AnimJointRef {
    /// Name.
    pub name: String,
    /// Parent joint.
    pub parent: Option<usize>,
    /// Animated-component flags.
    pub flags: u32,
    /// First component index in a frame.
    pub start: usize,
}

/// An `.md5anim` file.
#[derive(Debug, Clone)]
pub struct Md5AnimFile {
    /// Frames per second.
    pub frame_rate: f64,
    /// Hierarchy.
    pub joints: Vec<Md5AnimJointRef>,
    /// Base frame: local position and stored quaternion `(x, y, z)` per joint.
    pub base: Vec<(Vec3d, Vec3d)>,
    /// Frames of animated components.
    pub frames: Vec<Vec<f64>>,
}

fn parent_of(v: i64, joint: usize, t: &Tokens) -> Result<Option<usize>, Md5RefError> {
    if v < 0 {
        return Ok(None);
    }
    match usize::try_from(v) {
        Ok(p) if p < joint => Ok(Some(p)),
        _ => t.err(format!("joint {joint} has parent {v}, which does not come before it")),
    }
}

impl Md5MeshFile {
    /// Parses `.md5mesh` text. Declared counts must match the entries and indices must be in
    /// range.
    ///
    /// # Errors
    ///
    /// [`Md5RefError::Syntax`] with the line of the first problem.
    pub fn parse(text: &str) -> Result<Self, Md5RefError> {
        let mut t = Tokens::new(text)?;
        t.header()?;
        let num_joints = t.count("numJoints")?;
        let num_meshes = t.count("numMeshes")?;
        t.keyword("joints")?;
        t.punct('{')?;
        let mut joints = Vec::new();
        for j in 0..num_joints {
            let name = t.string()?;
            let p = t.int()?;
            let parent = parent_of(p, j, &t)?;
            let position = t.vec3()?;
            let orientation = quat_from_xyz(t.vec3()?);
            joints.push(Md5JointRef { name, parent, position, orientation });
        }
        t.punct('}')?;
        let mut meshes = Vec::new();
        for _ in 0..num_meshes {
            t.keyword("mesh")?;
            t.punct('{')?;
            t.keyword("shader")?;
            let shader = t.string()?;
            let nv = t.count("numverts")?;
            let mut verts = Vec::new();
            for i in 0..nv {
                t.keyword("vert")?;
                t.index(i + 1, "vert index")?;
                t.punct('(')?;
                t.number()?;
                t.number()?;
                t.punct(')')?;
                let start = usize::try_from(t.int()?).or_else(|_| t.err("negative startWeight"))?;
                let count = usize::try_from(t.int()?).or_else(|_| t.err("negative countWeight"))?;
                verts.push((start, count));
            }
            let nt = t.count("numtris")?;
            let mut tris = Vec::new();
            for i in 0..nt {
                t.keyword("tri")?;
                t.index(i + 1, "tri index")?;
                tris.push([t.index(nv, "vertex")?, t.index(nv, "vertex")?, t.index(nv, "vertex")?]);
            }
            let nw = t.count("numweights")?;
            let mut weights = Vec::new();
            for i in 0..nw {
                t.keyword("weight")?;
                t.index(i + 1, "weight index")?;
                let joint = t.index(num_joints, "joint")?;
                let bias = t.number()?;
                let position = t.vec3()?;
                weights.push(Md5WeightRef { joint, bias, position });
            }
            t.punct('}')?;
            if let Some(&(s, c)) = verts.iter().find(|&&(s, c)| s + c > nw) {
                return Err(Md5RefError::Syntax(t.line(), format!("vertex weights {s}..{} past {nw}", s + c)));
            }
            meshes.push(Md5MeshRef { shader, verts, tris, weights });
        }
        t.end()?;
        Ok(Md5MeshFile { joints, meshes })
    }

    /// The model-space bind matrix of every joint.
    #[must_use]
    pub fn bind_matrices(&self) -> Vec<Mat4d> {
        self.joints.iter().map(|j| Mat4d::from_trs(j.position, j.orientation, Vec3d::ONE)).collect()
    }

    /// Inverse bind matrices.
    ///
    /// # Errors
    ///
    /// [`Md5RefError::Syntax`] (line 0) when a bind matrix is singular.
    pub fn inverse_bind(&self) -> Result<Vec<Mat4d>, Md5RefError> {
        self.bind_matrices()
            .iter()
            .map(|m| m.inverse().ok_or_else(|| Md5RefError::Syntax(0, "singular bind matrix".into())))
            .collect()
    }

    /// Bind-pose positions, normals and influences `(joint, bias)` of mesh block `mesh`.
    #[must_use]
    pub fn bind_vertices(&self, mesh: usize) -> Option<BindMesh> {
        let m = self.meshes.get(mesh)?;
        let mut positions = Vec::with_capacity(m.verts.len());
        let mut influences = Vec::with_capacity(m.verts.len());
        for &(start, count) in &m.verts {
            let mut p = Vec3d::ZERO;
            let mut inf = Vec::with_capacity(count);
            for w in m.weights.get(start..start + count)? {
                let j = self.joints.get(w.joint)?;
                p = p + (j.position + j.orientation.rotate(w.position)) * w.bias;
                inf.push((w.joint as u16, w.bias));
            }
            positions.push(p);
            influences.push(inf);
        }
        let mut normals = vec![Vec3d::ZERO; positions.len()];
        for &[a, b, c] in &m.tris {
            let n = (positions[c] - positions[a]).cross(positions[b] - positions[a]);
            for v in [a, b, c] {
                normals[v] = normals[v] + n;
            }
        }
        let normals = normals.into_iter().map(|n| n.normalized().unwrap_or(Vec3d::new(0.0, 0.0, 1.0))).collect();
        Some(BindMesh { positions, normals, influences })
    }
}

/// A mesh block's bind-pose vertices.
#[derive(Debug, Clone)]
pub struct BindMesh {
    /// Positions.
    pub positions: Vec<Vec3d>,
    /// Normals.
    pub normals: Vec<Vec3d>,
    /// `(joint, bias)` pairs per vertex.
    pub influences: Vec<Vec<(u16, f64)>>,
}

impl Md5AnimFile {
    /// Parses `.md5anim` text.
    ///
    /// # Errors
    ///
    /// [`Md5RefError::Syntax`] with the line of the first problem.
    pub fn parse(text: &str) -> Result<Self, Md5RefError> {
        let mut t = Tokens::new(text)?;
        t.header()?;
        let num_frames = t.count("numFrames")?;
        let num_joints = t.count("numJoints")?;
        t.keyword("frameRate")?;
        let frame_rate = t.number()?;
        if frame_rate <= 0.0 {
            return t.err("frameRate must be positive");
        }
        let nac = t.count("numAnimatedComponents")?;
        t.keyword("hierarchy")?;
        t.punct('{')?;
        let mut joints = Vec::new();
        for j in 0..num_joints {
            let name = t.string()?;
            let p = t.int()?;
            let parent = parent_of(p, j, &t)?;
            let flags = u32::try_from(t.int()?).or_else(|_| t.err("bad flags"))?;
            let start = usize::try_from(t.int()?).or_else(|_| t.err("bad startIndex"))?;
            if start + (flags & 63).count_ones() as usize > nac {
                return t.err(format!("joint {j} components past numAnimatedComponents"));
            }
            joints.push(Md5AnimJointRef { name, parent, flags, start });
        }
        t.punct('}')?;
        t.keyword("bounds")?;
        t.punct('{')?;
        for _ in 0..num_frames {
            t.vec3()?;
            t.vec3()?;
        }
        t.punct('}')?;
        t.keyword("baseframe")?;
        t.punct('{')?;
        let mut base = Vec::new();
        for _ in 0..num_joints {
            base.push((t.vec3()?, t.vec3()?));
        }
        t.punct('}')?;
        let mut frames = Vec::new();
        for f in 0..num_frames {
            t.keyword("frame")?;
            t.index(f + 1, "frame index")?;
            t.punct('{')?;
            let mut v = Vec::with_capacity(nac);
            for _ in 0..nac {
                v.push(t.number()?);
            }
            t.punct('}')?;
            frames.push(v);
        }
        t.end()?;
        Ok(Md5AnimFile { frame_rate, joints, base, frames })
    }

    /// Time of the last frame (the first is at 0).
    #[must_use]
    pub fn duration(&self) -> f64 {
        self.frames.len().saturating_sub(1) as f64 / self.frame_rate
    }

    /// The local transforms of frame `f` (clamped to the frames there are).
    #[must_use]
    pub fn frame_pose(&self, f: usize) -> Vec<Trsd> {
        let frame = self.frames.get(f.min(self.frames.len().saturating_sub(1)));
        self.joints
            .iter()
            .zip(&self.base)
            .map(|(j, &(pos, q))| {
                let mut c = [pos.x, pos.y, pos.z, q.x, q.y, q.z];
                let mut k = j.start;
                for (bit, slot) in c.iter_mut().enumerate() {
                    if j.flags & (1 << bit) != 0 {
                        if let Some(v) = frame.and_then(|fr| fr.get(k)) {
                            *slot = *v;
                        }
                        k += 1;
                    }
                }
                Trsd {
                    translation: Vec3d::new(c[0], c[1], c[2]),
                    rotation: quat_from_xyz(Vec3d::new(c[3], c[4], c[5])),
                    scale: Vec3d::ONE,
                }
            })
            .collect()
    }

    /// The local transforms at time `t` (seconds): frames interpolated as the module docs say.
    #[must_use]
    pub fn pose_at(&self, t: f64) -> Vec<Trsd> {
        let last = self.frames.len().saturating_sub(1);
        let x = (t * self.frame_rate).clamp(0.0, last as f64);
        let f0 = (x.floor() as usize).min(last);
        let f1 = (f0 + 1).min(last);
        let s = x - f0 as f64;
        let (a, b) = (self.frame_pose(f0), self.frame_pose(f1));
        a.iter()
            .zip(&b)
            .map(|(a, b)| Trsd {
                translation: a.translation + (b.translation - a.translation) * s,
                rotation: a.rotation.slerp(b.rotation, s).unwrap_or(a.rotation),
                scale: Vec3d::ONE,
            })
            .collect()
    }

    /// Parents as the reference hierarchy functions take them.
    #[must_use]
    pub fn parents(&self) -> Vec<i16> {
        self.joints.iter().map(|j| j.parent.map_or(-1, |p| p as i16)).collect()
    }

    /// Model-space matrices at time `t`.
    ///
    /// # Errors
    ///
    /// A [`Md5RefError::Reference`] for an invalid hierarchy.
    pub fn world_at(&self, t: f64) -> Result<Vec<Mat4d>, Md5RefError> {
        Ok(reference::local_to_model(&self.parents(), &self.pose_at(t), None)?)
    }
}

/// An md5 model: mesh file and optional animation.
#[derive(Debug, Clone)]
pub struct Md5Ref {
    /// The mesh file.
    pub mesh: Md5MeshFile,
    /// The animation file.
    pub anim: Option<Md5AnimFile>,
}

/// Skinning method.
pub use crate::gltf_ref::Method;

impl Md5Ref {
    /// Reads and parses the files.
    ///
    /// # Errors
    ///
    /// [`Md5RefError::Io`] or a parse error.
    pub fn load(mesh: &Path, anim: Option<&Path>) -> Result<Self, Md5RefError> {
        let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| Md5RefError::Io(format!("{}: {e}", p.display())));
        let mesh = Md5MeshFile::parse(&read(mesh)?)?;
        let anim = match anim {
            Some(p) => Some(Md5AnimFile::parse(&read(p)?)?),
            None => None,
        };
        Ok(Md5Ref { mesh, anim })
    }

    /// Model-space joint matrices at time `t` of the animation (the bind pose without one).
    ///
    /// # Errors
    ///
    /// A [`Md5RefError::Reference`] for an invalid hierarchy.
    pub fn world_at(&self, t: f64) -> Result<Vec<Mat4d>, Md5RefError> {
        match &self.anim {
            Some(a) => a.world_at(t),
            None => Ok(self.mesh.bind_matrices()),
        }
    }

    /// Skin matrices (`world · inverse bind`) of every joint.
    ///
    /// # Errors
    ///
    /// As [`Md5MeshFile::inverse_bind`], or a length mismatch.
    pub fn joint_matrices(&self, world: &[Mat4d]) -> Result<Vec<Mat4d>, Md5RefError> {
        Ok(reference::skin_matrices(world, &self.mesh.inverse_bind()?, None)?)
    }

    /// Skinned positions and normals of mesh block `mesh`.
    ///
    /// # Errors
    ///
    /// [`Md5RefError::Syntax`] (line 0) for a missing mesh, or a reference error.
    pub fn skin_mesh(
        &self,
        world: &[Mat4d],
        mesh: usize,
        method: Method,
    ) -> Result<(Vec<Vec3d>, Vec<Vec3d>), Md5RefError> {
        let palette = self.joint_matrices(world)?;
        let bind = self.mesh.bind_vertices(mesh).ok_or_else(|| Md5RefError::Syntax(0, format!("no mesh {mesh}")))?;
        let k = bind.influences.iter().map(Vec::len).max().unwrap_or(0).max(1);
        let n = bind.positions.len();
        let mut joints = vec![0u16; n * k];
        let mut weights = vec![0.0; n * k];
        for (v, inf) in bind.influences.iter().enumerate() {
            for (i, &(j, w)) in inf.iter().enumerate() {
                joints[v * k + i] = j;
                weights[v * k + i] = w;
            }
        }
        let input = SkinInput {
            influences: k,
            joints: &joints,
            weights: &weights,
            positions: &bind.positions,
            normals: Some(&bind.normals),
            tangents: None,
        };
        let s = match method {
            Method::Linear => reference::skin_linear(&palette, &input)?,
            Method::DualQuat => {
                let dq: Vec<DualQuatd> = palette.iter().map(DualQuatd::from_rigid_matrix).collect();
                reference::skin_dual_quat(&dq, &input)?
            }
        };
        Ok((s.positions, s.normals.unwrap_or_default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESH: &str = r#"MD5Version 10
commandline "x" // a comment
numJoints 2
numMeshes 1
joints {
  "root" -1 ( 0 0 0 ) ( 0 0 0 )
  "arm" 0 ( 1 0 0 ) ( 0 0 0.7071067811865476 ) // rotated -90° about z (w < 0)
}
mesh {
  shader "c:\path\skin.tga"
  numverts 3
  vert 0 ( 0 0 ) 0 1
  vert 1 ( 0 0 ) 1 1
  vert 2 ( 0 0 ) 2 2
  numtris 1
  tri 0 0 1 2
  numweights 4
  weight 0 0 1 ( 0 0 0 )
  weight 1 0 1 ( 2 0 0 )
  weight 2 1 0.5 ( 1 0 0 )
  weight 3 0 0.5 ( 1 1 0 )
}
"#;

    const ANIM: &str = r#"MD5Version 10
commandline ""
numFrames 2
numJoints 2
frameRate 4
numAnimatedComponents 2
hierarchy {
  "root" -1 0 0
  "arm" 0 33 0
}
bounds {
  ( 0 0 0 ) ( 1 1 1 )
  ( 0 0 0 ) ( 1 1 1 )
}
baseframe {
  ( 0 0 0 ) ( 0 0 0 )
  ( 1 0 0 ) ( 0 0 0 )
}
frame 0 {
  1 0
}
frame 1 {
  3 1
}
"#;

    fn close(a: Vec3d, b: Vec3d) -> bool {
        (a - b).max_abs() < 1e-12
    }

    #[test]
    fn quaternions_take_the_negative_root() {
        let q = quat_from_xyz(Vec3d::new(0.0, 0.0, 0.6));
        assert!((q.w + 0.8).abs() < 1e-15 && (q.length() - 1.0).abs() < 1e-15);
        // (0, 0, sin(-45°), cos(-45°)) up to sign: x ↦ -y.
        let q = quat_from_xyz(Vec3d::new(0.0, 0.0, std::f64::consts::FRAC_1_SQRT_2));
        assert!(close(q.rotate(Vec3d::new(1.0, 0.0, 0.0)), Vec3d::new(0.0, -1.0, 0.0)));
    }

    #[test]
    fn bind_vertices_and_normals() {
        let m = Md5MeshFile::parse(MESH).unwrap();
        assert_eq!(m.meshes[0].shader, r"c:\path\skin.tga");
        let b = m.bind_vertices(0).unwrap();
        // Vertex 2: ½·(arm at (1,0,0) + rot·(1,0,0) = (1,-1,0)) + ½·(1,1,0) = (1, 0, 0).
        assert!(close(b.positions[2], Vec3d::new(1.0, 0.0, 0.0)));
        assert!(close(b.positions[1], Vec3d::new(2.0, 0.0, 0.0)));
        assert_eq!(b.influences[2], vec![(1, 0.5), (0, 0.5)]);
        // A degenerate (collinear) triangle has no face normal: +Z.
        assert!(close(b.normals[0], Vec3d::new(0.0, 0.0, 1.0)));
        // Skinning in the bind pose gives the bind positions back.
        let r = Md5Ref { mesh: m.clone(), anim: None };
        let (p, _) = r.skin_mesh(&m.bind_matrices(), 0, Method::Linear).unwrap();
        for (a, b) in p.iter().zip(&b.positions) {
            assert!(close(*a, *b));
        }
    }

    #[test]
    fn frames_interpolate_and_clamp() {
        let a = Md5AnimFile::parse(ANIM).unwrap();
        assert_eq!(a.duration(), 0.25);
        // Flags 33 = translation x (bit 1) and quaternion z (bit 32), from component 0.
        let f1 = a.frame_pose(1);
        assert!(close(f1[1].translation, Vec3d::new(3.0, 0.0, 0.0)));
        assert!(close(f1[1].rotation.rotate(Vec3d::new(1.0, 0.0, 0.0)), Vec3d::new(-1.0, 0.0, 0.0)));
        let mid = a.pose_at(0.125);
        assert!(close(mid[1].translation, Vec3d::new(2.0, 0.0, 0.0)));
        // Halfway from identity to a half turn about z: a quarter turn.
        let x = mid[1].rotation.rotate(Vec3d::new(1.0, 0.0, 0.0));
        assert!((x.x.abs() < 1e-12) && (x.y.abs() - 1.0).abs() < 1e-12, "{x:?}");
        assert_eq!(a.pose_at(-1.0), a.frame_pose(0));
        assert_eq!(a.pose_at(9.0), a.frame_pose(1));
    }

    #[test]
    fn declared_counts_must_match() {
        assert!(Md5MeshFile::parse(&MESH.replace("numverts 3", "numverts 4")).is_err());
        assert!(Md5MeshFile::parse(&MESH.replace("numJoints 2", "numJoints 1")).is_err());
        assert!(Md5AnimFile::parse(&ANIM.replace("numFrames 2", "numFrames 3")).is_err());
        assert!(Md5AnimFile::parse(&ANIM.replace("  1 0\n", "  1\n")).is_err());
    }
}
