//! Mesh parts as WebGL 1 draws them ([`DrawPart`]): interleaved vertex data, 16-bit indices and
//! a local palette of at most the shaders' `JOINTS` skin joints. A baked part whose palette is
//! larger than the page's uniform budget allows, or whose vertices overflow 16-bit indices,
//! is split here, at load time, into parts that fit: the triangles are grouped by the joints
//! they share with the core's [`sinew::partition`] (the baker splits the same way at bake time,
//! for the palette it is given), and a group starts a new part also where its next triangle
//! would bring in one vertex too many.

use alloc::vec;
use alloc::vec::Vec;

use sinew::asset::{MaterialData, MeshData, MeshPart};
use sinew::limits::MAX_INFLUENCES;
use sinew::math::Vec3;
use sinew::partition::{partition, scratch_len, TriangleJoints};

/// Floats per vertex of [`DrawPart::vertices`]: position (3), normal (3), joint indices into
/// the part's palette (4), joint weights (4), texture coordinates (2), vertex color RGBA 0 to 1
/// (4) — the layout of the desktop demo's `MeshVertex`.
pub const FLOATS_PER_VERTEX: usize = 20;

/// The most vertices a draw part has: its 16-bit indices reach them all, and `u16::MAX` is
/// left free as "no vertex" while parts are split.
pub const MAX_PART_VERTICES: usize = 65535;

/// The fewest joints a palette may hold: any triangle's 3 vertices × 4 influences fit.
pub const MIN_PALETTE: usize = 12;

/// One draw call's worth of a mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct DrawPart {
    /// Index of the baked part it comes from, in its mesh.
    pub source: usize,
    /// Interleaved vertices, [`FLOATS_PER_VERTEX`] floats each.
    pub vertices: Vec<f32>,
    /// Triangles, three indices each, into [`DrawPart::vertices`].
    pub indices: Vec<u16>,
    /// The source part's vertex of each vertex (morph targets address those).
    pub origin: Vec<u32>,
    /// Local palette: entry `i` is the skin joint the vertices' joint index `i` names. Empty for
    /// a rigid part, which follows its mesh node's matrix.
    pub map: Vec<u16>,
    /// The part's material.
    pub material: MaterialData,
    /// Whether vertices carry their texture coordinates (the material's texture applies).
    pub textured: bool,
}

impl DrawPart {
    /// Whether the part follows its mesh node alone (no skin weights).
    #[must_use]
    pub fn is_rigid(&self) -> bool {
        self.map.is_empty()
    }

    /// Number of vertices.
    #[must_use]
    pub fn num_vertices(&self) -> usize {
        self.origin.len()
    }
}

/// A source part's vertex: its joints (local palette indices) and weights, up to 4 kept.
struct Influences {
    joints: [u16; 4],
    weights: [f32; 4],
}

/// Up to 4 influences of vertex `v`: all of them when the part has 4 or fewer, else the 4
/// heaviest, scaled to sum to 1 (WebGL's shaders take 4).
fn influences(part: &MeshPart<'_>, v: usize) -> Influences {
    let k = part.influences().min(MAX_INFLUENCES);
    let mut all = [(0u16, 0.0f32); MAX_INFLUENCES];
    for (i, slot) in all.iter_mut().enumerate().take(k) {
        *slot = (part.joint(v, i), part.weight::<f32>(v, i));
    }
    let mut out = Influences { joints: [0; 4], weights: [0.0; 4] };
    if k <= 4 {
        for (i, &(j, w)) in all.iter().enumerate().take(k) {
            out.joints[i] = j;
            out.weights[i] = w;
        }
        return out;
    }
    let heaviest = &mut all[..k];
    heaviest.sort_by(|a, b| b.1.total_cmp(&a.1));
    let sum: f32 = heaviest.iter().take(4).map(|x| x.1).sum();
    for (i, &(j, w)) in heaviest.iter().enumerate().take(4) {
        out.joints[i] = j;
        out.weights[i] = if sum > 0.0 { w / sum } else { 0.0 };
    }
    out
}

/// Area-weighted vertex normals of indexed triangles (for parts baked without normals).
fn computed_normals(positions: &[Vec3<f32>], indices: &[u32]) -> Vec<Vec3<f32>> {
    let mut n = vec![Vec3::ZERO; positions.len()];
    for t in indices.chunks_exact(3) {
        let at = |i: u32| positions.get(i as usize).copied();
        let (Some(a), Some(b), Some(c)) = (at(t[0]), at(t[1]), at(t[2])) else { continue };
        let f = (b - a).cross(c - a);
        for &i in t {
            if let Some(v) = n.get_mut(i as usize) {
                *v += f;
            }
        }
    }
    n.into_iter().map(Vec3::normalize_or_zero).collect()
}

/// A baked part's vertices as both viewers draw them: positions, normals (area-weighted from
/// the triangles where the part has none), up to 4 influences (the heaviest, renormalized:
/// the shaders take 4), texture coordinates (zero without a texture) and colors (white
/// without vertex colors), interleaved by [`PartVertices::push_vertex`].
pub struct PartVertices {
    positions: Vec<Vec3<f32>>,
    normals: Vec<Vec3<f32>>,
    influences: Vec<Influences>,
    uv: Vec<[f32; 2]>,
    colors: Vec<[f32; 4]>,
    indices: Vec<u32>,
}

impl PartVertices {
    /// Reads `part`'s vertices and indices.
    #[must_use]
    pub fn read(part: &MeshPart<'_>) -> PartVertices {
        let n = part.num_vertices();
        let indices: Vec<u32> = (0..part.num_indices()).map(|i| part.index(i)).collect();
        let positions: Vec<Vec3<f32>> = (0..n).map(|v| part.position(v)).collect();
        let normals = if part.has_normals() {
            (0..n).map(|v| part.normal(v)).collect()
        } else {
            computed_normals(&positions, &indices)
        };
        let material = part.material();
        let textured = material.texture.is_some() && part.has_texcoords();
        let colored = material.vertex_colors && part.has_colors();
        PartVertices {
            influences: (0..n).map(|v| influences(part, v)).collect(),
            uv: (0..n).map(|v| if textured { part.texcoord(v) } else { [0.0; 2] }).collect(),
            colors: (0..n)
                .map(|v| if colored { part.color(v).map(|c| f32::from(c) / 255.0) } else { [1.0; 4] })
                .collect(),
            positions,
            normals,
            indices,
        }
    }

    /// Number of vertices.
    #[must_use]
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether the part has no vertex.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// The part's triangles, three vertex indices each.
    #[must_use]
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// Appends vertex `v` to `out` as [`FLOATS_PER_VERTEX`] floats, its joints renumbered by
    /// `local` (the part's palette index → the drawn part's); with `rigid` it follows palette
    /// entry 0 alone. Zeros for a vertex past the part.
    pub fn push_vertex(&self, v: usize, rigid: bool, local: &dyn Fn(u16) -> u16, out: &mut Vec<f32>) {
        let (Some(p), Some(n), Some(inf), Some(uv), Some(c)) =
            (self.positions.get(v), self.normals.get(v), self.influences.get(v), self.uv.get(v), self.colors.get(v))
        else {
            out.extend([0.0; FLOATS_PER_VERTEX]);
            return;
        };
        out.extend(p.to_array());
        out.extend(n.to_array());
        if rigid {
            out.extend([0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
        } else {
            for i in 0..4 {
                let j = inf.joints[i];
                out.push(if inf.weights[i] > 0.0 { f32::from(local(j)) } else { 0.0 });
            }
            out.extend(inf.weights);
        }
        out.extend(uv);
        out.extend(c);
    }
}

/// A split part being filled: the part, and the source's joints and vertices it has taken.
struct Group {
    part: DrawPart,
    /// Source palette index → the part's (`u16::MAX`: not taken).
    joint_of: Vec<u16>,
    /// Source vertex → the part's (`u16::MAX`: not taken).
    vertex_of: Vec<u16>,
}

impl Group {
    fn new(part: DrawPart, palette: usize, vertices: usize) -> Group {
        Group { part, joint_of: vec![u16::MAX; palette], vertex_of: vec![u16::MAX; vertices] }
    }

    /// Whether a triangle of source vertices `t` using source joints `joints` fits.
    fn fits(&self, joints: &[u16], t: &[u32], cap: usize) -> bool {
        let new = |of: &[u16], i: usize| of.get(i).is_none_or(|&x| x == u16::MAX);
        let new_joints = joints.iter().filter(|&&j| new(&self.joint_of, j as usize)).count();
        let new_vertices = t.iter().filter(|&&v| new(&self.vertex_of, v as usize)).count();
        self.part.map.len() + new_joints <= cap && self.part.origin.len() + new_vertices <= MAX_PART_VERTICES
    }

    fn add_joint(&mut self, j: u16, map: &[u16]) {
        if let Some(slot) = self.joint_of.get_mut(j as usize).filter(|s| **s == u16::MAX) {
            *slot = self.part.map.len() as u16;
            self.part.map.push(map.get(j as usize).copied().unwrap_or(0));
        }
    }

    /// The part's index of source vertex `v`, appended on first use.
    fn vertex(&mut self, v: u32, rigid: bool, src: &PartVertices) -> u16 {
        match self.vertex_of.get(v as usize) {
            Some(&i) if i != u16::MAX => i,
            _ => {
                let i = self.part.origin.len() as u16;
                if let Some(slot) = self.vertex_of.get_mut(v as usize) {
                    *slot = i;
                }
                let local = &self.joint_of;
                src.push_vertex(
                    v as usize,
                    rigid,
                    &|j| local.get(j as usize).copied().unwrap_or(0),
                    &mut self.part.vertices,
                );
                self.part.origin.push(v);
                i
            }
        }
    }
}

/// The order split parts take `triangles` in, with each triangle's joints and group: grouped
/// by the joints they share ([`partition`]), each group in the given order. The given order
/// alone, as one group, should the partition fail (the split then still holds the palette).
fn grouped(triangles: &[&[u32]], src: &PartVertices, rigid: bool, joints: usize, cap: usize) -> Grouped {
    let mut sets = Vec::with_capacity(triangles.len());
    for t in triangles {
        let mut set = TriangleJoints::EMPTY;
        for inf in t.iter().filter_map(|&v| src.influences.get(v as usize)).filter(|_| !rigid) {
            for (&j, _) in inf.joints.iter().zip(inf.weights).filter(|(_, w)| *w > 0.0) {
                set.insert(j);
            }
        }
        sets.push(set);
    }
    let n = sets.len();
    let mut scratch = vec![0; scratch_len(&sets, joints)];
    let (mut group, mut order) = (vec![0u16; n], vec![0u32; n]);
    if partition(&sets, joints, cap, &mut scratch, &mut group, &mut order).is_err() {
        group.fill(0);
        order = (0..n as u32).collect();
    }
    Grouped { order, sets, group }
}

/// [`grouped`]'s result.
struct Grouped {
    /// Triangle indices in drawing order.
    order: Vec<u32>,
    /// Each triangle's joints.
    sets: Vec<TriangleJoints>,
    /// Each triangle's group.
    group: Vec<u16>,
}

/// Every part of `mesh` as draw parts whose palettes hold at most `palette` joints (at least
/// [`MIN_PALETTE`]) and whose vertices fit 16-bit indices.
#[must_use]
// Out of line: a load-time path, whose inlined copies only grow the module.
#[inline(never)]
pub fn draw_parts(mesh: &MeshData<'_>, palette: usize) -> Vec<DrawPart> {
    let cap = palette.max(MIN_PALETTE);
    let mut out = Vec::new();
    for (source, part) in mesh.parts().enumerate() {
        let src = PartVertices::read(&part);
        let rigid = part.influences() == 0;
        let map: Vec<u16> = (0..part.palette_len()).map(|i| part.palette(i)).collect();
        let material = part.material();
        let textured = material.texture.is_some() && part.has_texcoords();
        let new_part = || DrawPart {
            source,
            vertices: Vec::new(),
            indices: Vec::new(),
            origin: Vec::new(),
            map: Vec::new(),
            material,
            textured,
        };
        let n = src.positions.len();
        if (rigid || map.len() <= cap) && n <= MAX_PART_VERTICES {
            // Fits as baked: the same vertices, indices and palette.
            let mut d = new_part();
            for v in 0..n {
                src.push_vertex(v, rigid, &|j| j, &mut d.vertices);
            }
            d.origin = (0..n as u32).collect();
            d.indices = src.indices.iter().filter(|&&i| (i as usize) < n).map(|&i| i as u16).collect();
            d.indices.truncate(d.indices.len() / 3 * 3);
            d.map = if rigid { Vec::new() } else { map };
            out.push(d);
            continue;
        }
        // Split: the triangles grouped by the joints they share (the core's partition), each
        // group in the part's triangle order; a new part at each group, and when a triangle
        // would overflow the vertices.
        let triangles: Vec<&[u32]> =
            src.indices.chunks_exact(3).filter(|t| t.iter().all(|&i| (i as usize) < n)).collect();
        let Grouped { order, sets, group: of } = grouped(&triangles, &src, rigid, map.len(), cap);
        let mut group: Option<Group> = None;
        let mut last = None;
        for &t in &order {
            let (Some(&tri), Some(set), Some(&g)) =
                (triangles.get(t as usize), sets.get(t as usize), of.get(t as usize))
            else {
                continue;
            };
            let joints = set.as_slice();
            if last != Some(g) || group.as_ref().is_some_and(|p| !p.fits(joints, tri, cap)) {
                out.extend(group.take().map(|p| p.part));
            }
            last = Some(g);
            let p = group.get_or_insert_with(|| Group::new(new_part(), map.len(), n));
            for &j in joints {
                p.add_joint(j, &map);
            }
            for &v in tri {
                let index = p.vertex(v, rigid, &src);
                p.part.indices.push(index);
            }
        }
        out.extend(group.map(|g| g.part));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sinew::asset::Asset;

    static CHARACTER: &[u8] = include_bytes!("../../../core/fixtures/character.sinew");

    fn body() -> MeshData<'static> {
        let asset = Asset::parse(CHARACTER).unwrap();
        asset.mesh(0).unwrap()
    }

    /// Every triangle of the source part, as positions, in order.
    fn triangles(parts: &[DrawPart]) -> Vec<[f32; 9]> {
        let mut out = Vec::new();
        for p in parts {
            for t in p.indices.chunks_exact(3) {
                let mut tri = [0.0; 9];
                for (k, &i) in t.iter().enumerate() {
                    let v = &p.vertices[i as usize * FLOATS_PER_VERTEX..][..3];
                    tri[k * 3..k * 3 + 3].copy_from_slice(v);
                }
                out.push(tri);
            }
        }
        out
    }

    #[test]
    fn a_part_that_fits_is_drawn_as_baked() {
        let mesh = body();
        let parts = draw_parts(&mesh, 64);
        assert_eq!(parts.len(), 1);
        let src = mesh.parts().next().unwrap();
        assert_eq!(parts[0].num_vertices(), src.num_vertices());
        assert_eq!(parts[0].indices.len(), src.num_indices());
        assert_eq!(parts[0].map.len(), src.palette_len());
    }

    #[test]
    fn split_parts_keep_every_triangle_and_every_weight_on_its_joint() {
        let mesh = body();
        let whole = draw_parts(&mesh, 64);
        let split = draw_parts(&mesh, MIN_PALETTE);
        assert!(split.len() > 1, "22 joints in palettes of {MIN_PALETTE}");
        // Every triangle once, in some order (split parts are grouped by their joints).
        let sorted = |parts: &[DrawPart]| {
            let mut t: Vec<[u32; 9]> = triangles(parts).iter().map(|t| t.map(f32::to_bits)).collect();
            t.sort_unstable();
            t
        };
        assert_eq!(sorted(&whole), sorted(&split));
        let src = mesh.parts().next().unwrap();
        for p in &split {
            assert!(p.map.len() <= MIN_PALETTE);
            for (k, &o) in p.origin.iter().enumerate() {
                let v = &p.vertices[k * FLOATS_PER_VERTEX..][..FLOATS_PER_VERTEX];
                // Each influence names the same skin joint through the new palette.
                for i in 0..src.influences() {
                    let w: f32 = src.weight(o as usize, i);
                    if w > 0.0 {
                        let skin_joint = src.palette(src.joint(o as usize, i) as usize);
                        assert_eq!(p.map[v[6 + i] as usize], skin_joint);
                        assert_eq!(v[10 + i], w);
                    }
                }
            }
        }
    }
}
