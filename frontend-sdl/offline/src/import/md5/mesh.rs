//! The `.md5mesh` grammar: the joints (model-space bind pose) and the `mesh { }` blocks (vertices,
//! triangles, weights), parsed into [`Md5Mesh`] and validated (counts, indices, biases, bind
//! transforms and positions that fit `f32`), and the bind-pose math both the checks and the
//! conversion use.

use sinew::math::{Mat4, Quat, Transform, Vec3};

use super::error::{Md5Error, Md5File};
use super::lexer::Tok;
use super::limits::{MAX_JOINTS, MAX_WEIGHTS_PER_VERTEX, PREALLOC_CAP};
use super::parser::{normalize_quat, parent_index, Parser};

/// One joint of an `.md5mesh`, in model space (the bind pose).
#[derive(Debug, Clone, PartialEq)]
pub struct Md5Joint {
    /// Name as written.
    pub name: String,
    /// Parent joint index, always below this joint's index; `None` for a root.
    pub parent: Option<usize>,
    /// Model-space position.
    pub position: Vec3<f32>,
    /// Model-space orientation (unit, `w ≤ 0` as reconstructed).
    pub orientation: Quat<f32>,
}

/// One vertex of an md5 mesh.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Md5Vert {
    /// Texture coordinates.
    pub uv: [f32; 2],
    /// First weight (index into [`Md5MeshPart::weights`]).
    pub start_weight: usize,
    /// Number of weights, 1 to [`MAX_WEIGHTS_PER_VERTEX`]; the range lies within the weights.
    pub weight_count: usize,
}

/// One weight of an md5 mesh: a position in a joint's space and its bias.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Md5Weight {
    /// Joint index, below the mesh's joint count.
    pub joint: usize,
    /// Bias (the weight's share of the vertex).
    pub bias: f32,
    /// Position in the joint's bind space.
    pub position: Vec3<f32>,
}

/// One `mesh { }` block.
#[derive(Debug, Clone, PartialEq)]
pub struct Md5MeshPart {
    /// The shader (material) name as written.
    pub shader: String,
    /// Vertices.
    pub verts: Vec<Md5Vert>,
    /// Triangles as the file lists them (clockwise from the front); indices below `verts.len()`.
    pub tris: Vec<[u32; 3]>,
    /// Weights.
    pub weights: Vec<Md5Weight>,
}

/// A parsed and validated `.md5mesh` (see [`parse_mesh`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Md5Mesh {
    commandline: String,
    pub(super) joints: Vec<Md5Joint>,
    pub(super) meshes: Vec<Md5MeshPart>,
    /// The line of `numJoints`, where conversion errors about the mesh are located.
    pub(super) num_joints_line: u32,
}

impl Md5Mesh {
    /// The `commandline` string.
    #[must_use]
    pub fn commandline(&self) -> &str {
        &self.commandline
    }
    /// The joints, parents before children.
    #[must_use]
    pub fn joints(&self) -> &[Md5Joint] {
        &self.joints
    }
    /// The mesh blocks in file order.
    #[must_use]
    pub fn meshes(&self) -> &[Md5MeshPart] {
        &self.meshes
    }
}

/// Parses and validates an `.md5mesh`.
///
/// # Errors
///
/// [`Md5Error`] (located in [`Md5File::Mesh`]) when the text is not a well-formed `MD5Version 10`
/// mesh: a missing, misplaced or truncated section ([`Md5Error::UnexpectedToken`],
/// [`Md5Error::UnexpectedEnd`], [`Md5Error::UnterminatedString`]), another version, a count that
/// the entries do not match (`numJoints`, `numMeshes`, `numverts`, `numtris`, `numweights`), an
/// entry numbered out of order, a parent not below its joint, a weight joint at or above
/// `numJoints`, a vertex weight range outside the weights, a triangle index at or above
/// `numverts`, `countWeight` of 0, a negative weight bias, a vertex whose biases are all 0, a
/// quaternion with `|xyz| > 1`, a malformed or non-finite
/// number, or a count above [`MAX_JOINTS`] / [`MAX_WEIGHTS_PER_VERTEX`].
pub fn parse_mesh(text: &str) -> Result<Md5Mesh, Md5Error> {
    let mut p = Parser::new(text, Md5File::Mesh);
    p.version()?;
    p.keyword("commandline")?;
    let commandline = p.string("the command line string")?.to_owned();
    let (num_joints, num_joints_line) = p.count("numJoints", MAX_JOINTS)?;
    if num_joints == 0 {
        return Err(Md5Error::InvalidValue {
            at: p.at(num_joints_line),
            what: "numJoints",
            requirement: "must be at least 1",
        });
    }
    let (num_meshes, _) = p.count("numMeshes", usize::MAX)?;
    let mut joint_lines = Vec::with_capacity(num_joints.min(PREALLOC_CAP));
    let joints = p.braced("joints", num_joints, |p, index, line| {
        joint_lines.push(line);
        let name = p.string("a joint name or '}'")?.to_owned();
        let (parent, parent_line) = p.int("a parent index")?;
        let parent = parent_index(p, parent, parent_line, index)?;
        let (position, _) = p.vec3("a joint position")?;
        let orientation = p.quat("joint orientation")?;
        Ok(Md5Joint { name, parent, position, orientation })
    })?;
    for (j, &line) in joints.iter().zip(&joint_lines) {
        let (rest, inverse) = rest_and_inverse_bind(&joints, j);
        if !rest.is_finite() || !inverse.iter().all(|v| v.is_finite()) {
            return Err(Md5Error::InvalidValue {
                at: p.at(line),
                what: "joint",
                requirement: "has a bind transform that overflows f32",
            });
        }
    }
    let mut meshes = Vec::with_capacity(num_meshes.min(PREALLOC_CAP));
    loop {
        match p.peek()? {
            None => break,
            Some((Tok::Word("mesh"), line)) => {
                if meshes.len() == num_meshes {
                    return Err(Md5Error::CountMismatch {
                        at: p.at(line),
                        what: "numMeshes",
                        declared: num_meshes,
                        found: num_meshes.saturating_add(1),
                    });
                }
                meshes.push(parse_mesh_block(&mut p, &joints)?);
            }
            Some((tok, line)) => return Err(p.unexpected(line, "mesh", tok)),
        }
    }
    if meshes.len() != num_meshes {
        return Err(Md5Error::UnexpectedEnd { at: p.at(p.lex.line), expected: "mesh" });
    }
    p.end()?;
    Ok(Md5Mesh { commandline, joints, meshes, num_joints_line })
}

/// One `mesh { }` block; vertex weight ranges are checked once the weights are read.
fn parse_mesh_block(p: &mut Parser<'_>, joints: &[Md5Joint]) -> Result<Md5MeshPart, Md5Error> {
    let num_joints = joints.len();
    p.keyword("mesh")?;
    p.symbol(Tok::OpenBrace, "'{'")?;
    p.keyword("shader")?;
    let shader = p.string("a shader name")?.to_owned();

    let (num_verts, _) = p.count("numverts", u32::MAX as usize)?;
    // (vert, line) pairs: weight ranges are checked once the weights are known.
    let verts = p.keyed("vert", num_verts, |p, line| {
        let uv = p.vec2("a texture coordinate")?;
        let (start_weight, _) = p.index("startWeight", usize::MAX)?;
        let (weight_count, count_line) = p.index("countWeight", MAX_WEIGHTS_PER_VERTEX)?;
        if weight_count == 0 {
            return Err(Md5Error::InvalidValue {
                at: p.at(count_line),
                what: "countWeight",
                requirement: "must be at least 1",
            });
        }
        Ok((Md5Vert { uv, start_weight, weight_count }, line))
    })?;

    let (num_tris, _) = p.count("numtris", usize::MAX)?;
    let vert_count = verts.len();
    let tris = p.keyed("tri", num_tris, |p, _| {
        let mut tri = [0u32; 3];
        for slot in &mut tri {
            let (i, line) = p.int("a vertex index")?;
            match usize::try_from(i) {
                Ok(u) if u < vert_count => *slot = u as u32,
                _ => {
                    return Err(Md5Error::IndexOutOfRange {
                        at: p.at(line),
                        what: "triangle vertex",
                        index: i,
                        limit: vert_count,
                    })
                }
            }
        }
        Ok(tri)
    })?;

    let (num_weights, _) = p.count("numweights", usize::MAX)?;
    let weights = p.keyed("weight", num_weights, |p, _| {
        let (j, line) = p.int("a joint index")?;
        let joint = match usize::try_from(j) {
            Ok(u) if u < num_joints => u,
            _ => {
                return Err(Md5Error::IndexOutOfRange {
                    at: p.at(line),
                    what: "weight joint",
                    index: j,
                    limit: num_joints,
                })
            }
        };
        let (bias, bias_line) = p.float("a weight bias")?;
        if bias < 0.0 {
            return Err(Md5Error::InvalidValue {
                at: p.at(bias_line),
                what: "weight bias",
                requirement: "must not be negative",
            });
        }
        let (position, _) = p.vec3("a weight position")?;
        Ok(Md5Weight { joint, bias, position })
    })?;
    p.symbol(Tok::CloseBrace, "'}'")?;

    let mut checked = Vec::with_capacity(verts.len());
    for (v, line) in verts {
        let last = v.start_weight.saturating_add(v.weight_count.saturating_sub(1));
        if last >= weights.len() {
            return Err(Md5Error::IndexOutOfRange {
                at: p.at(line),
                what: "vertex weight range",
                index: i64::try_from(last).unwrap_or(i64::MAX),
                limit: weights.len(),
            });
        }
        let range = weights.get(v.start_weight..=last).unwrap_or(&[]);
        if range.iter().all(|w| w.bias == 0.0) {
            return Err(Md5Error::InvalidValue {
                at: p.at(line),
                what: "vertex",
                requirement: "has weights whose biases are all 0 (it follows no joint)",
            });
        }
        if !bind_position(range, joints).is_some_and(Vec3::is_finite) {
            return Err(Md5Error::InvalidValue {
                at: p.at(line),
                what: "vertex",
                requirement: "has a bind position that overflows f32",
            });
        }
        checked.push(v);
    }
    Ok(Md5MeshPart { shader, verts: checked, tris, weights })
}

/// Joint `j`'s local rest transform (`parent_model⁻¹ × model`) and its inverse bind matrix.
pub(super) fn rest_and_inverse_bind(joints: &[Md5Joint], j: &Md5Joint) -> (Transform<f32>, [f32; 16]) {
    let rest = match j.parent.and_then(|p| joints.get(p)) {
        Some(parent) => {
            let inv = parent.orientation.conjugate();
            Transform::new(inv.rotate(j.position - parent.position), normalize_quat(inv * j.orientation), Vec3::ONE)
        }
        None => Transform::new(j.position, j.orientation, Vec3::ONE),
    };
    let inv = j.orientation.conjugate();
    (rest, Mat4::from_trs(-inv.rotate(j.position), inv, Vec3::ONE).to_cols_array())
}

/// `Σ bias × (joint_position + joint_rotation.rotate(weight_position))`, or `None` when a
/// weight's joint is missing.
pub(super) fn bind_position(weights: &[Md5Weight], joints: &[Md5Joint]) -> Option<Vec3<f32>> {
    let mut p = Vec3::ZERO;
    for w in weights {
        let joint = joints.get(w.joint)?;
        p += (joint.position + joint.orientation.rotate(w.position)) * w.bias;
    }
    Some(p)
}
