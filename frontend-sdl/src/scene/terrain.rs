//! The uneven ground of the character's path ([`Terrain`]): flat ground at y = 0 with raised
//! blocks on it, each flat or a ramp along X. The built-in one ([`Terrain::builtin`]) is a
//! plateau [`PLATEAU_HEIGHT`] high under the path's right turn, reached by stairs on the front
//! straight (walked up, towards +X) and left by a slope on the back straight (walked down,
//! towards −X).
//!
//! Heights and normals are exact at any (x, z): the highest block whose closed rectangle holds
//! the point answers, so a point on a riser (or any wall) reads the top of that wall. The
//! foot placement asks under each ankle and under each toe (see the scene's `character`
//! module): a foot straddling a riser stands on the higher tread's nose by its toe, its heel
//! over the lower tread.
//!
//! [`Terrain::rig`] is the same ground as a mesh to bake and draw: each block's top, and its
//! walls where the ground beside it is lower.

use sinew::job::foot::{Ground, GroundHit};
use sinew::math::{Mat4, Transform, Vec3};
use sinew_offline::rig::{Rig, RigJoint, RigMesh, RigPrimitive, RigSkin};

/// Height of the plateau under the path's right turn, in meters.
pub const PLATEAU_HEIGHT: f32 = 0.3;
/// Height of each step of the stairs, in meters: three steps climb to the plateau.
pub const STAIR_RISE: f32 = 0.1;
/// Depth of each tread of the stairs along X, in meters.
pub const STAIR_TREAD: f32 = 0.3;
/// X of the stairs' first riser; the third riser, onto the plateau, is at [`PLATEAU_X`].
pub const STAIRS_X: f32 = PLATEAU_X - 2.0 * STAIR_TREAD;
/// X of the plateau's left edge (the slope's top, the stairs' last riser).
pub const PLATEAU_X: f32 = 0.6;
/// X of the slope's foot: it rises [`PLATEAU_HEIGHT`] from here to [`PLATEAU_X`].
pub const SLOPE_X: f32 = -0.6;
/// Z range of the stairs (across the path's front straight, at z = −0.5).
pub const STAIRS_Z: [f32; 2] = [-0.8, -0.2];
/// Z range of the slope (across the path's back straight, at z = −1.9).
pub const SLOPE_Z: [f32; 2] = [-2.2, -1.6];
/// X of the plateau's right edge.
const PLATEAU_RIGHT: f32 = 1.85;

/// The display color of the terrain (sRGB).
pub const TERRAIN_COLOR: [f32; 4] = [0.62, 0.6, 0.55, 1.0];

/// What a block of the terrain is, for whoever asks what the ground under a point is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// The flat ground at y = 0, around the blocks.
    Ground,
    /// A step of the stairs.
    Stairs,
    /// The flat top of a block that is not a step.
    Plateau,
    /// A ramp.
    Slope,
}

/// One raised block: a rectangle `x × z` whose top rises linearly along X from `height[0]` at
/// `x[0]` to `height[1]` at `x[1]` (equal heights: flat), with vertical walls down to the
/// ground.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Block {
    /// X range, `x[0] < x[1]`.
    pub x: [f32; 2],
    /// Z range, `z[0] < z[1]`.
    pub z: [f32; 2],
    /// Height of the top at `x[0]` and at `x[1]`, in meters (≥ 0).
    pub height: [f32; 2],
    /// What the block is.
    pub surface: Surface,
}

impl Block {
    /// Whether the block's closed rectangle holds `(x, z)`.
    #[must_use]
    pub fn contains(&self, x: f32, z: f32) -> bool {
        x >= self.x[0] && x <= self.x[1] && z >= self.z[0] && z <= self.z[1]
    }

    /// Rise of the top per meter along +X (0 for a block with no width).
    #[must_use]
    pub fn slope(&self) -> f32 {
        let width = self.x[1] - self.x[0];
        if width > 0.0 {
            (self.height[1] - self.height[0]) / width
        } else {
            0.0
        }
    }

    /// Height of the top over `x` (clamped to the block's range).
    #[must_use]
    pub fn top(&self, x: f32) -> f32 {
        self.height[0] + (x.clamp(self.x[0], self.x[1]) - self.x[0]) * self.slope()
    }

    /// Unit normal of the top.
    #[must_use]
    pub fn normal(&self) -> Vec3<f32> {
        Vec3::new(-self.slope(), 1.0, 0.0).normalize_or_zero()
    }
}

/// What the terrain answers at a point: height, unit normal and surface.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundSample {
    /// Height of the ground, in meters.
    pub height: f32,
    /// Unit normal of the ground (+Y on flat parts).
    pub normal: Vec3<f32>,
    /// What the ground is there.
    pub surface: Surface,
}

/// The ground of the scene: flat at y = 0 with raised [`Block`]s.
#[derive(Debug, Clone, PartialEq)]
pub struct Terrain {
    blocks: Vec<Block>,
}

impl Terrain {
    /// Flat ground with `blocks` on it.
    #[must_use]
    pub fn new(blocks: Vec<Block>) -> Terrain {
        Terrain { blocks }
    }

    /// The scene's terrain (see the module docs): three steps of [`STAIR_RISE`] and
    /// [`STAIR_TREAD`] from [`STAIRS_X`] up to the plateau at [`PLATEAU_X`] across the
    /// front straight, the plateau under the right turn, and a slope from [`PLATEAU_X`] down
    /// to [`SLOPE_X`] across the back straight.
    #[must_use]
    pub fn builtin() -> Terrain {
        let flat = |x: [f32; 2], z: [f32; 2], h: f32, surface| Block { x, z, height: [h, h], surface };
        let [front, back] = [STAIRS_Z, SLOPE_Z];
        let mut blocks = Vec::new();
        for k in 0..2 {
            let x0 = STAIRS_X + k as f32 * STAIR_TREAD;
            blocks.push(flat([x0, x0 + STAIR_TREAD], front, (k + 1) as f32 * STAIR_RISE, Surface::Stairs));
        }
        // The plateau in three parts across Z, so that each wall has one height beside it.
        let x = [PLATEAU_X, PLATEAU_RIGHT];
        blocks.push(flat(x, front, PLATEAU_HEIGHT, Surface::Plateau));
        blocks.push(flat(x, [back[1], front[0]], PLATEAU_HEIGHT, Surface::Plateau));
        blocks.push(flat(x, back, PLATEAU_HEIGHT, Surface::Plateau));
        blocks.push(Block { x: [SLOPE_X, PLATEAU_X], z: back, height: [0.0, PLATEAU_HEIGHT], surface: Surface::Slope });
        Terrain { blocks }
    }

    /// The blocks.
    #[must_use]
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// Height, normal and surface of the ground at `(x, z)`: the highest block holding the
    /// point (the first of equal ones), else the flat ground.
    #[must_use]
    pub fn sample(&self, x: f32, z: f32) -> GroundSample {
        let mut best = GroundSample { height: 0.0, normal: Vec3::Y, surface: Surface::Ground };
        for b in self.blocks.iter().filter(|b| b.contains(x, z)) {
            let h = b.top(x);
            if h > best.height || best.surface == Surface::Ground {
                best = GroundSample { height: h, normal: b.normal(), surface: b.surface };
            }
        }
        best
    }

    /// Height of the ground at `(x, z)`, in meters.
    #[must_use]
    pub fn height(&self, x: f32, z: f32) -> f32 {
        self.sample(x, z).height
    }

    /// The highest of the ground's heights less `slope` times their horizontal distance from
    /// `(x, z)` (each block's top at its point nearest `(x, z)`): a surface draped over the
    /// terrain that climbs at most `slope` per meter towards a higher block (over a step's nose,
    /// say) and equals [`Terrain::height`] on flat ground and on ramps less steep than `slope`,
    /// away from higher blocks. It is continuous in `(x, z)` where the height jumps.
    #[must_use]
    pub fn envelope(&self, x: f32, z: f32, slope: f32) -> f32 {
        self.blocks.iter().fold(0.0f32, |best, b| {
            let (nx, nz) = (x.clamp(b.x[0], b.x[1]), z.clamp(b.z[0], b.z[1]));
            let d = ((x - nx) * (x - nx) + (z - nz) * (z - nz)).sqrt();
            best.max(b.top(nx) - slope * d)
        })
    }

    /// The terrain as a rig to bake: one joint at the origin and one mesh in
    /// [`TERRAIN_COLOR`] of every block's top and of its walls where the ground beside it is
    /// lower, each face with its own vertices and normal.
    #[must_use]
    pub fn rig(&self) -> Rig {
        let faces = self.faces();
        let n = faces.positions.len();
        let linear = crate::scene::srgb_to_linear;
        let c = TERRAIN_COLOR;
        let primitive = RigPrimitive {
            positions: faces.positions.iter().map(|p| p.to_array()).collect(),
            normals: Some(faces.normals.iter().map(|p| p.to_array()).collect()),
            influences: 1,
            joint_indices: vec![0; n],
            joint_weights: vec![1.0; n],
            indices: faces.indices,
            color: [linear(c[0]), linear(c[1]), linear(c[2]), c[3]],
            ..RigPrimitive::default()
        };
        Rig {
            name: "terrain".into(),
            joints: vec![RigJoint { name: "ground".into(), parent: None, rest: Transform::IDENTITY }],
            skins: vec![RigSkin {
                name: "skin".into(),
                joints: vec![0],
                inverse_bind: vec![Mat4::<f32>::IDENTITY.to_cols_array()],
            }],
            meshes: vec![RigMesh {
                name: "terrain".into(),
                skin: Some(0),
                node: None,
                primitives: vec![primitive],
                ..RigMesh::default()
            }],
            ..Rig::default()
        }
    }

    /// The outlines of the faces of [`Terrain::rig`], each moved [`EDGE_OFFSET`] out of its
    /// face along the face's normal so that depth-tested lines stay in front of it: lines that
    /// show the steps' edges, which the light alone does not separate (it lights the tops, the
    /// risers and the walls facing +Z alike).
    #[must_use]
    pub fn edges(&self) -> Vec<[Vec3<f32>; 2]> {
        let faces = self.faces();
        let mut out = Vec::new();
        for (q, n) in faces.positions.chunks_exact(4).zip(faces.normals.chunks_exact(4)) {
            let off = n[0] * EDGE_OFFSET;
            for k in 0..4 {
                let (a, b) = (q[k] + off, q[(k + 1) % 4] + off);
                if (b - a).length() > MIN_WALL {
                    out.push([a, b]);
                }
            }
        }
        out
    }

    /// The faces of [`Terrain::rig`]: four corners and four normals each.
    fn faces(&self) -> Faces {
        let mut faces = Faces::default();
        for b in &self.blocks {
            let p = |x: f32, z: f32| Vec3::new(x, b.top(x), z);
            let ([x0, x1], [z0, z1]) = (b.x, b.z);
            faces.quad([p(x0, z0), p(x1, z0), p(x1, z1), p(x0, z1)], b.normal());
            // Each side: its two corners and its outward direction.
            let sides = [
                ((x0, z0), (x0, z1), -Vec3::X),
                ((x1, z0), (x1, z1), Vec3::X),
                ((x0, z0), (x1, z0), -Vec3::Z),
                ((x0, z1), (x1, z1), Vec3::Z),
            ];
            for ((ax, az), (bx, bz), out) in sides {
                // The ground just outside each end, a little in from the corner.
                let along = Vec3::new(bx - ax, 0.0, bz - az).normalize_or_zero() * WALL_PROBE;
                let beside = |x: f32, z: f32, inward: Vec3<f32>| {
                    self.height(x + out.x * WALL_PROBE + inward.x, z + out.z * WALL_PROBE + inward.z)
                };
                let (ta, tb) = (b.top(ax), b.top(bx));
                let (ba, bb) = (beside(ax, az, along).min(ta), beside(bx, bz, -along).min(tb));
                if ta - ba > MIN_WALL || tb - bb > MIN_WALL {
                    let v = |x: f32, y: f32, z: f32| Vec3::new(x, y, z);
                    faces.quad([v(ax, ba, az), v(bx, bb, bz), v(bx, tb, bz), v(ax, ta, az)], out);
                }
            }
        }
        faces
    }
}

/// The core's ground query on the terrain: every leg gets [`Terrain::sample`] at its point's X
/// and Z (a borrowed terrain, so that the query can be handed out while the scene keeps it).
impl Ground<f32> for &Terrain {
    fn ground(&mut self, _leg: usize, at: Vec3<f32>) -> Option<GroundHit<f32>> {
        let g = self.sample(at.x, at.z);
        Some(GroundHit { height: g.height, normal: g.normal })
    }
}

/// How far outside a wall [`Terrain::rig`] reads the ground beside it, in meters.
const WALL_PROBE: f32 = 1.0e-3;
/// Walls lower than this are left out, in meters.
const MIN_WALL: f32 = 1.0e-3;
/// How far [`Terrain::edges`] moves each outline out of its face, in meters.
const EDGE_OFFSET: f32 = 4.0e-3;

/// Flat-shaded faces under construction.
#[derive(Default)]
struct Faces {
    positions: Vec<Vec3<f32>>,
    normals: Vec<Vec3<f32>>,
    indices: Vec<u32>,
}

impl Faces {
    /// A planar quad `q` (corners in order around it) facing `n`: two triangles, counter-clockwise
    /// seen from the side `n` points to.
    fn quad(&mut self, q: [Vec3<f32>; 4], n: Vec3<f32>) {
        let first = self.positions.len() as u32;
        self.positions.extend_from_slice(&q);
        self.normals.extend_from_slice(&[n; 4]);
        let ccw = (q[1] - q[0]).cross(q[2] - q[0]).dot(n) > 0.0;
        let order: [u32; 6] = if ccw { [0, 1, 2, 0, 2, 3] } else { [0, 2, 1, 0, 3, 2] };
        self.indices.extend(order.iter().map(|k| first + k));
    }
}
