//! Matrix decomposition: a node's column-major `matrix` split into translation, rotation and
//! scale (the rotation is the closest one, so a matrix with shear keeps its closest TRS), with
//! the error of that split.

use sinew::math::{Quat, Transform, Vec3};

/// A node matrix split into TRS.
pub(super) struct Decomposed {
    /// The translation, rotation and scale.
    pub(super) transform: Transform<f32>,
    /// Largest difference between the matrix and the TRS rebuilt from `transform`, relative to
    /// the matrix's largest element (at least 1).
    pub(super) error: f64,
    /// The bottom row is not `0 0 0 1`.
    pub(super) projective: bool,
}

type V3 = [f64; 3];

fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
fn scaled(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}
fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// Splits a column-major matrix into translation, rotation and scale. The rotation is the
/// orthogonal polar factor of the upper 3×3 block (its closest rotation), after moving a
/// reflection into the x scale; scales are the block's columns projected on the rotation's.
pub(super) fn decompose(m: &[[f32; 4]; 4]) -> Decomposed {
    let col = |i: usize| -> V3 {
        let c = m.get(i).copied().unwrap_or([0.0; 4]);
        [f64::from(c[0]), f64::from(c[1]), f64::from(c[2])]
    };
    let c = [col(0), col(1), col(2)];
    let t = col(3);
    let det = dot(c[0], cross(c[1], c[2]));
    let max_len = c.iter().map(|v| dot(*v, *v).sqrt()).fold(0.0f64, f64::max);
    let r: [V3; 3] = if det.is_finite() && det.abs() > 1.0e-9 * max_len.powi(3) && max_len > 0.0 {
        // Polar decomposition by Newton iteration X <- (X + X^-T) / 2 on the block with a
        // positive determinant; the columns of X^-T are the cofactor columns over det.
        let mut x = if det < 0.0 { [scaled(c[0], -1.0), c[1], c[2]] } else { c };
        for _ in 0..64 {
            let d = dot(x[0], cross(x[1], x[2]));
            if d == 0.0 || !d.is_finite() {
                break;
            }
            let inv_t = [
                scaled(cross(x[1], x[2]), 1.0 / d),
                scaled(cross(x[2], x[0]), 1.0 / d),
                scaled(cross(x[0], x[1]), 1.0 / d),
            ];
            let next = [
                scaled([x[0][0] + inv_t[0][0], x[0][1] + inv_t[0][1], x[0][2] + inv_t[0][2]], 0.5),
                scaled([x[1][0] + inv_t[1][0], x[1][1] + inv_t[1][1], x[1][2] + inv_t[1][2]], 0.5),
                scaled([x[2][0] + inv_t[2][0], x[2][1] + inv_t[2][1], x[2][2] + inv_t[2][2]], 0.5),
            ];
            let change = (0..3).map(|k| dot(sub(next[k], x[k]), sub(next[k], x[k]))).fold(0.0f64, f64::max);
            x = next;
            if change < 1.0e-24 {
                break;
            }
        }
        x
    } else {
        degenerate_basis(c)
    };
    let s = [dot(r[0], c[0]), dot(r[1], c[1]), dot(r[2], c[2])];
    let as_vec = |v: V3| Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32);
    let rotation = Quat::from_mat3_cols([as_vec(r[0]), as_vec(r[1]), as_vec(r[2])]);
    let transform = Transform::new(as_vec(t), rotation, as_vec(s));

    let rebuilt = transform.to_mat4();
    let mut scale_ref = 1.0f64;
    let mut err = 0.0f64;
    for k in 0..3 {
        let (orig, new) = (m.get(k).copied().unwrap_or([0.0; 4]), rebuilt.cols.get(k).copied().unwrap_or([0.0; 4]));
        for row in 0..3 {
            scale_ref = scale_ref.max(f64::from(orig[row]).abs());
            err = err.max((f64::from(orig[row]) - f64::from(new[row])).abs());
        }
    }
    let projective = m.iter().take(3).any(|c| c[3] != 0.0) || m.get(3).is_some_and(|c| c[3] != 1.0);
    Decomposed { transform, error: err / scale_ref, projective }
}

/// A right-handed orthonormal basis close to the columns of a singular 3×3 block: Gram-Schmidt
/// on the columns that are not (nearly) zero, completed by cross products.
fn degenerate_basis(c: [V3; 3]) -> [V3; 3] {
    let max_len = c.iter().map(|v| dot(*v, *v).sqrt()).fold(0.0f64, f64::max);
    let eps = 1.0e-6 * max_len.max(f64::MIN_POSITIVE);
    let mut basis: [Option<V3>; 3] = [None; 3];
    for i in 0..3 {
        let mut v = c[i];
        for b in basis.iter().take(i).flatten() {
            v = sub(v, scaled(*b, dot(v, *b)));
        }
        let l = dot(v, v).sqrt();
        if l > eps {
            basis[i] = Some(scaled(v, 1.0 / l));
        }
    }
    let present: Vec<usize> = (0..3).filter(|&i| basis[i].is_some()).collect();
    let mut out = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    match present.as_slice() {
        [i] => {
            let a = basis[*i].unwrap_or(out[*i]);
            // A helper axis far from `a`.
            let k = (0..3).min_by(|&p, &q| a[p].abs().total_cmp(&a[q].abs())).unwrap_or(0);
            let mut h = [0.0; 3];
            h[k] = 1.0;
            let u = sub(h, scaled(a, dot(h, a)));
            let u = scaled(u, 1.0 / dot(u, u).sqrt());
            out[*i] = a;
            out[(*i + 1) % 3] = u;
            out[(*i + 2) % 3] = cross(a, u);
        }
        [_, _] | [_, _, _] => {
            for i in 0..3 {
                if let Some(b) = basis[i] {
                    out[i] = b;
                }
            }
            for i in 0..3 {
                if basis[i].is_none() {
                    out[i] = cross(out[(i + 1) % 3], out[(i + 2) % 3]);
                }
            }
            if dot(out[0], cross(out[1], out[2])) < 0.0 {
                // Put the reflection on the shortest column.
                let k = (0..3).min_by(|&p, &q| dot(c[p], c[p]).total_cmp(&dot(c[q], c[q]))).unwrap_or(0);
                out[k] = scaled(out[k], -1.0);
            }
        }
        _ => {}
    }
    out
}
