//! The tests' reference: three-vrm's spring bones in `f64`, written from three-vrm 3.5.5's
//! `VRMSpringBoneManager` and `VRMSpringBoneJoint` and three.js's matrix and quaternion
//! routines, on plain arrays and independent of the crate's math. It keeps three-vrm's scene
//! eagerly: a stored world matrix per node and a stored collider matrix per collider, updated
//! when three-vrm updates them (the spring joint at its turn, then the nodes below it down to
//! the next spring joints, collider objects included).

extern crate std;

use std::vec::Vec;

pub(super) type V = [f64; 3];
pub(super) type Q = [f64; 4];
/// Column-major: `m[c][r]`.
pub(super) type M = [[f64; 4]; 4];

pub(super) fn add(a: V, b: V) -> V {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
pub(super) fn sub(a: V, b: V) -> V {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
pub(super) fn scale(a: V, s: f64) -> V {
    [a[0] * s, a[1] * s, a[2] * s]
}
pub(super) fn dot(a: V, b: V) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
pub(super) fn cross(a: V, b: V) -> V {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
pub(super) fn len(a: V) -> f64 {
    dot(a, a).sqrt()
}
/// three.js's `Vector3.normalize`: divides by the length, or by 1 for a zero vector.
pub(super) fn norm(a: V) -> V {
    let l = len(a);
    scale(a, 1.0 / if l == 0.0 { 1.0 } else { l })
}
pub(super) fn q_axis_angle(axis: V, angle: f64) -> Q {
    let (s, c) = (angle * 0.5).sin_cos();
    [axis[0] * s, axis[1] * s, axis[2] * s, c]
}
pub(super) fn q_mul(a: Q, b: Q) -> Q {
    [
        a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
        a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
        a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
        a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
    ]
}
/// three.js's `Quaternion.normalize`.
fn q_norm(q: Q) -> Q {
    let l = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if l == 0.0 {
        [0.0, 0.0, 0.0, 1.0]
    } else {
        q.map(|c| c / l)
    }
}
/// three.js's `Quaternion.setFromUnitVectors`.
fn from_unit_vectors(from: V, to: V) -> Q {
    let r = dot(from, to) + 1.0;
    if r < 1e-8 {
        if from[0].abs() > from[2].abs() {
            q_norm([-from[1], from[0], 0.0, 0.0])
        } else {
            q_norm([0.0, -from[2], from[1], 0.0])
        }
    } else {
        let c = cross(from, to);
        q_norm([c[0], c[1], c[2], r])
    }
}

/// A local transform.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Trs {
    pub t: V,
    pub q: Q,
    pub s: V,
}

/// three.js's `Matrix4.compose`.
pub(super) fn compose(x: &Trs) -> M {
    let [qx, qy, qz, qw] = x.q;
    let (x2, y2, z2) = (qx + qx, qy + qy, qz + qz);
    let (xx, xy, xz) = (qx * x2, qx * y2, qx * z2);
    let (yy, yz, zz) = (qy * y2, qy * z2, qz * z2);
    let (wx, wy, wz) = (qw * x2, qw * y2, qw * z2);
    let [sx, sy, sz] = x.s;
    [
        [(1.0 - (yy + zz)) * sx, (xy + wz) * sx, (xz - wy) * sx, 0.0],
        [(xy - wz) * sy, (1.0 - (xx + zz)) * sy, (yz + wx) * sy, 0.0],
        [(xz + wy) * sz, (yz - wx) * sz, (1.0 - (xx + yy)) * sz, 0.0],
        [x.t[0], x.t[1], x.t[2], 1.0],
    ]
}
pub(super) fn mul(a: &M, b: &M) -> M {
    let mut o = [[0.0; 4]; 4];
    for c in 0..4 {
        for r in 0..4 {
            o[c][r] = (0..4).map(|k| a[k][r] * b[c][k]).sum();
        }
    }
    o
}
/// three.js's `Vector3.applyMatrix4` (with the perspective divide).
pub(super) fn point(m: &M, p: V) -> V {
    let w = 1.0 / (m[0][3] * p[0] + m[1][3] * p[1] + m[2][3] * p[2] + m[3][3]);
    let mut o = [0.0; 3];
    for (r, v) in o.iter_mut().enumerate() {
        *v = (m[0][r] * p[0] + m[1][r] * p[1] + m[2][r] * p[2] + m[3][r]) * w;
    }
    o
}
/// The upper 3×3 times `v`.
fn linear(m: &M, v: V) -> V {
    let mut o = [0.0; 3];
    for (r, x) in o.iter_mut().enumerate() {
        *x = m[0][r] * v[0] + m[1][r] * v[1] + m[2][r] * v[2];
    }
    o
}
/// three.js's `Vector3.transformDirection`.
fn transform_direction(m: &M, v: V) -> V {
    norm(linear(m, v))
}
pub(super) fn position(m: &M) -> V {
    [m[3][0], m[3][1], m[3][2]]
}
/// The inverse by Gauss-Jordan elimination with partial pivoting (zero when singular, as
/// three.js's `invert`).
pub(super) fn inverse(m: &M) -> M {
    // Rows of [m | I].
    let mut a = [[0.0; 8]; 4];
    for r in 0..4 {
        for c in 0..4 {
            a[r][c] = m[c][r];
        }
        a[r][4 + r] = 1.0;
    }
    for col in 0..4 {
        let pivot = (col..4).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs())).unwrap_or(col);
        if a[pivot][col] == 0.0 {
            return [[0.0; 4]; 4];
        }
        a.swap(col, pivot);
        let p = a[col][col];
        for v in a[col].iter_mut() {
            *v /= p;
        }
        for r in 0..4 {
            if r != col {
                let f = a[r][col];
                let row = a[col];
                for (v, x) in a[r].iter_mut().zip(row) {
                    *v -= f * x;
                }
            }
        }
    }
    let mut o = [[0.0; 4]; 4];
    for r in 0..4 {
        for c in 0..4 {
            o[c][r] = a[r][4 + c];
        }
    }
    o
}

/// A collider shape, as three-vrm's shape classes hold it.
#[derive(Clone, Copy, Debug)]
pub(super) enum Shape {
    Sphere { offset: V, radius: f64, inside: bool },
    Capsule { offset: V, tail: V, radius: f64, inside: bool },
    Plane { offset: V, normal: V },
}

impl Shape {
    fn offset(&self) -> V {
        match *self {
            Shape::Sphere { offset, .. } | Shape::Capsule { offset, .. } | Shape::Plane { offset, .. } => offset,
        }
    }
    /// The kind, for the contact counts: sphere, inside sphere, capsule, inside capsule, plane.
    pub(super) fn kind(&self) -> usize {
        match *self {
            Shape::Sphere { inside, .. } => usize::from(inside),
            Shape::Capsule { inside, .. } => 2 + usize::from(inside),
            Shape::Plane { .. } => 4,
        }
    }
    /// `calculateCollision`: the distance and the push direction.
    fn collide(&self, cm: &M, p: V, hit: f64) -> (f64, V) {
        let round = |mut target: V, radius: f64, inside: bool| {
            let length = len(target);
            let distance = if inside { radius - hit - length } else { length - hit - radius };
            if distance < 0.0 {
                target = scale(target, 1.0 / length);
                if inside {
                    target = scale(target, -1.0);
                }
            }
            (distance, target)
        };
        match *self {
            Shape::Sphere { radius, inside, .. } => round(sub(p, position(cm)), radius, inside),
            Shape::Capsule { offset, tail, radius, inside } => {
                let a = position(cm);
                let b = sub(point(cm, sub(tail, offset)), a);
                let length_sq = dot(b, b);
                let mut target = sub(p, a);
                let d = dot(b, target);
                if d <= 0.0 {
                } else if length_sq <= d {
                    target = sub(target, b);
                } else {
                    target = sub(target, scale(b, d / length_sq));
                }
                round(target, radius, inside)
            }
            Shape::Plane { normal, .. } => {
                let target = sub(p, position(cm));
                // getNormalMatrix: the inverse's transpose; applyNormalMatrix, then normalize.
                let inv = inverse(cm);
                let n = [0, 1, 2].map(|r| inv[r][0] * normal[0] + inv[r][1] * normal[1] + inv[r][2] * normal[2]);
                let n = norm(norm(n));
                (dot(target, n) - hit, n)
            }
        }
    }
}

/// three-vrm's `updateColliderMatrix`.
fn collider_matrix(w: &M, offset: V) -> M {
    let mut m = *w;
    let p = point(w, offset);
    m[3][0] = p[0];
    m[3][1] = p[1];
    m[3][2] = p[2];
    m
}

/// A spring joint.
#[derive(Clone, Debug)]
pub(super) struct Joint {
    pub joint: usize,
    pub child: Option<usize>,
    pub tail: V,
    pub hit: f64,
    pub stiffness: f64,
    pub gravity_power: f64,
    pub gravity_dir: V,
    pub drag: f64,
    pub center: Option<usize>,
    pub colliders: Vec<usize>,
}

/// three-vrm's scene and spring bones.
pub(super) struct Reference {
    pub parents: Vec<Option<usize>>,
    pub rest: Vec<Trs>,
    pub local: Vec<Trs>,
    pub world: M,
    pub joints: Vec<Joint>,
    pub colliders: Vec<(usize, Shape)>,
    /// Per joint: current and previous tail.
    pub tails: Vec<(V, V)>,
    /// Stored world matrices.
    pub w: Vec<M>,
    /// Stored collider matrices.
    cm: Vec<M>,
    spring: Vec<bool>,
    children: Vec<Vec<usize>>,
}

impl Reference {
    pub(super) fn new(
        parents: Vec<Option<usize>>,
        rest: Vec<Trs>,
        joints: Vec<Joint>,
        colliders: Vec<(usize, Shape)>,
    ) -> Self {
        let n = parents.len();
        let mut spring = std::vec![false; n];
        for j in &joints {
            spring[j.joint] = true;
        }
        let mut children = std::vec![Vec::new(); n];
        for (i, p) in parents.iter().enumerate() {
            if let Some(p) = *p {
                children[p].push(i);
            }
        }
        Reference {
            local: rest.clone(),
            rest,
            world: IDENTITY,
            tails: std::vec![([0.0; 3], [0.0; 3]); joints.len()],
            w: std::vec![[[0.0; 4]; 4]; n],
            cm: std::vec![[[0.0; 4]; 4]; colliders.len()],
            parents,
            joints,
            colliders,
            spring,
            children,
        }
    }

    fn parent_w(&self, j: usize) -> M {
        match self.parents[j] {
            Some(p) => self.w[p],
            None => self.world,
        }
    }

    /// `updateMatrixWorld(true)` on the whole scene, collider objects included.
    pub(super) fn refresh(&mut self) {
        for j in 0..self.parents.len() {
            self.w[j] = mul(&self.parent_w(j), &compose(&self.local[j]));
        }
        for (c, (joint, shape)) in self.colliders.iter().enumerate() {
            self.cm[c] = collider_matrix(&self.w[*joint], shape.offset());
        }
    }

    /// `traverseChildrenUntilConditionMet(bone, _relevantChildrenUpdated)`: the nodes below
    /// `j` down to the next spring joints, and the collider objects on them and on `j`.
    fn update_below(&mut self, j: usize) {
        for c in 0..self.colliders.len() {
            if self.colliders[c].0 == j {
                self.cm[c] = collider_matrix(&self.w[j], self.colliders[c].1.offset());
            }
        }
        for k in self.children[j].clone() {
            if self.spring[k] {
                continue;
            }
            self.w[k] = mul(&self.w[j], &compose(&self.local[k]));
            self.update_below(k);
        }
    }

    /// `reset()`, each joint followed by the nodes below it (the stage's rule).
    pub(super) fn reset(&mut self) {
        self.refresh();
        for i in 0..self.joints.len() {
            let j = self.joints[i].joint;
            self.local[j].q = self.rest[j].q;
            self.w[j] = mul(&self.parent_w(j), &compose(&self.local[j]));
            self.update_below(j);
            let s = &self.joints[i];
            let to_center = s.center.map_or(IDENTITY, |c| inverse(&self.w[c]));
            let t = point(&to_center, point(&self.w[j], s.tail));
            self.tails[i] = (t, t);
        }
    }

    /// `update(delta)`, after `updateMatrixWorld(true)`. Returns the contacts by shape kind.
    pub(super) fn step(&mut self, dt: f64) -> [u32; 5] {
        let mut contacts = [0; 5];
        self.refresh();
        for i in 0..self.joints.len() {
            let s = self.joints[i].clone();
            let j = s.joint;
            let wp = self.parent_w(j);
            self.w[j] = mul(&wp, &compose(&self.local[j]));
            let pos = position(&self.w[j]);
            let end = match s.child {
                Some(c) => position(&self.w[c]),
                None => point(&self.w[j], s.tail),
            };
            let bone = len(sub(pos, end));
            let initial = compose(&self.rest[j]);
            let axis = norm(s.tail);
            let axis_w = transform_direction(&wp, transform_direction(&initial, axis));
            let (c2w, w2c) = match s.center {
                Some(c) => (self.w[c], inverse(&self.w[c])),
                None => (IDENTITY, IDENTITY),
            };
            let (cur, prev) = self.tails[i];
            let mut next = point(&c2w, add(cur, scale(sub(cur, prev), 1.0 - s.drag)));
            next = add(next, scale(axis_w, s.stiffness * dt));
            next = add(next, scale(s.gravity_dir, s.gravity_power * dt));
            next = add(scale(norm(sub(next, pos)), bone), pos);
            for &c in &s.colliders {
                let (_, shape) = self.colliders[c];
                let (d, n) = shape.collide(&self.cm[c], next, s.hit);
                if d < 0.0 {
                    contacts[shape.kind()] += 1;
                    next = add(next, scale(n, -d));
                    let off = sub(next, pos);
                    next = add(scale(off, bone / len(off)), pos);
                }
            }
            self.tails[i] = (point(&w2c, next), cur);
            let inv = inverse(&mul(&wp, &initial));
            let to = norm(point(&inv, next));
            self.local[j].q = q_mul(self.rest[j].q, from_unit_vectors(axis, to));
            self.w[j] = mul(&wp, &compose(&self.local[j]));
            self.update_below(j);
        }
        contacts
    }
}

pub(super) const IDENTITY: M = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]];
