//! Inertialization: the pose offset captured at a switch and its decay (see the
//! [module documentation](super) for the curve), with the two last output poses it needs.
//!
//! Per joint the offset and its velocity are three vectors: translation and scale differences
//! and the rotation offset as a rotation vector (axis × angle, applied on the left: the output
//! rotation is `exp(o) · q`).

use crate::math::{ops, Quat, SoaTransform, Transform, Vec3};
use crate::real::Real;

/// A joint's offset (or offset velocity, per second).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Offset<R> {
    t: Vec3<R>,
    r: Vec3<R>,
    s: Vec3<R>,
}

impl<R: Real> Offset<R> {
    const ZERO: Self = Offset { t: Vec3::ZERO, r: Vec3::ZERO, s: Vec3::ZERO };
}

/// Below this sine of the half angle, rotation vectors use the small-angle forms.
fn small<R: Real>() -> R {
    R::ratio(1, 4096)
}

/// The rotation vector of `q` (the shorter way round).
pub(super) fn log<R: Real>(q: Quat<R>) -> Vec3<R> {
    let q = if q.w < R::ZERO { -q } else { q };
    let v = q.xyz();
    let s = v.length();
    if s > small() {
        v * (R::TWO * ops::atan2(s, q.w) / s)
    } else {
        v * R::TWO
    }
}

/// The rotation of rotation vector `r`.
pub(super) fn exp<R: Real>(r: Vec3<R>) -> Quat<R> {
    let angle = r.length();
    if angle > small() {
        let (s, c) = ops::sin_cos(angle * R::HALF);
        let k = s / angle;
        Quat::new(r.x * k, r.y * k, r.z * k, c)
    } else {
        Quat::new(r.x * R::HALF, r.y * R::HALF, r.z * R::HALF, R::ONE).normalize()
    }
}

fn joint<R: Real>(pose: &[SoaTransform<R>], j: usize) -> Option<Transform<R>> {
    pose.get(j / 4).map(|e| e.lane(j % 4))
}

/// The inertialization state of a state machine: history, offset, velocity.
#[derive(Debug, Clone)]
pub(super) struct Inertia<R, const SOA: usize> {
    /// The last two output poses; `history[newest]` is the last.
    history: [[SoaTransform<R>; SOA]; 2],
    newest: usize,
    /// Valid history poses (0 to 2).
    frames: u8,
    /// The time step between the two history poses.
    last_dt: R,
    offset: [[Offset<R>; 4]; SOA],
    velocity: [[Offset<R>; 4]; SOA],
    /// The destination's velocity is still to be subtracted from `velocity`.
    pending: bool,
}

impl<R: Real, const SOA: usize> Inertia<R, SOA> {
    pub(super) fn new() -> Self {
        Inertia {
            history: [[SoaTransform::IDENTITY; SOA]; 2],
            newest: 0,
            frames: 0,
            last_dt: R::ZERO,
            offset: [[Offset::ZERO; 4]; SOA],
            velocity: [[Offset::ZERO; 4]; SOA],
            pending: false,
        }
    }

    /// Records the update's final output pose (`joints` joints) after a step of `dt`.
    pub(super) fn record(&mut self, output: &[SoaTransform<R>], joints: usize, dt: R) {
        let n = joints.div_ceil(4).min(SOA);
        let older = 1 - self.newest;
        if let (Some(dst), Some(src)) = (self.history[older].get_mut(..n), output.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.newest = older;
        self.frames = (self.frames + 1).min(2);
        self.last_dt = dt;
    }

    /// Captures the offset at a switch, `target` being the destination's pose at this update
    /// (`joints` joints): the outgoing pose is the last output extrapolated by one step of the
    /// velocity between the last two outputs, the velocity is that one (the destination's is
    /// subtracted at the next update, by [`measure_target`](Self::measure_target)).
    pub(super) fn capture(&mut self, target: &[SoaTransform<R>], joints: usize, dt: R) {
        let prev = &self.history[self.newest];
        let prev2 = &self.history[1 - self.newest];
        for j in 0..joints.min(SOA * 4) {
            let (e, l) = (j / 4, j % 4);
            let (Some(tgt), Some(p)) = (joint(target, j), joint(prev, j)) else { continue };
            let (mut src, mut vel) = (tgt, Offset::ZERO);
            if self.frames >= 1 {
                src = p;
            }
            if let (2, Some(p2)) = (self.frames, joint(prev2, j)) {
                if self.last_dt > R::ZERO {
                    let inv = self.last_dt.recip();
                    let (dt_, dr, ds) =
                        (p.translation - p2.translation, log(p.rotation * p2.rotation.conjugate()), p.scale - p2.scale);
                    vel = Offset { t: dt_ * inv, r: dr * inv, s: ds * inv };
                    // One step ahead at that velocity.
                    let k = dt * inv;
                    src = Transform {
                        translation: p.translation + dt_ * k,
                        rotation: (exp(dr * k) * p.rotation).normalize(),
                        scale: p.scale + ds * k,
                    };
                }
            }
            self.offset[e][l] = Offset {
                t: src.translation - tgt.translation,
                r: log(src.rotation * tgt.rotation.conjugate()),
                s: src.scale - tgt.scale,
            };
            self.velocity[e][l] = vel;
        }
        self.pending = true;
    }

    /// At the update after a switch (`dt > 0`), subtracts the destination's velocity — from its
    /// pose at the switch (the last output without the offset) to `target` — from the offset's
    /// velocity, seen through the offset's rotation.
    pub(super) fn measure_target(&mut self, target: &[SoaTransform<R>], joints: usize, dt: R) {
        if !self.pending || dt <= R::ZERO {
            return;
        }
        self.pending = false;
        let inv = dt.recip();
        let prev = &self.history[self.newest];
        for j in 0..joints.min(SOA * 4) {
            let (e, l) = (j / 4, j % 4);
            let (Some(t1), Some(y0)) = (joint(target, j), joint(prev, j)) else { continue };
            let x0 = self.offset[e][l];
            let turn = exp(x0.r);
            let t0_rotation = turn.conjugate() * y0.rotation;
            let v = &mut self.velocity[e][l];
            v.t -= (t1.translation - (y0.translation - x0.t)) * inv;
            v.r -= turn.rotate(log(t1.rotation * t0_rotation.conjugate())) * inv;
            v.s -= (t1.scale - (y0.scale - x0.s)) * inv;
        }
    }

    /// Applies the offset `elapsed` seconds into a decay of `duration` seconds to `output`
    /// (`joints` joints); nothing at or past the end.
    pub(super) fn apply(&self, output: &mut [SoaTransform<R>], joints: usize, elapsed: R, duration: R) {
        if duration <= R::ZERO || elapsed >= duration {
            return;
        }
        let u = (elapsed / duration).clamp(R::ZERO, R::ONE);
        let a = R::ONE - u;
        let a4 = (a * a) * (a * a);
        let p = a4 * (R::ONE + R::from_i32(4) * u);
        let q = a4 * u * duration;
        for j in 0..joints.min(SOA * 4) {
            let (e, l) = (j / 4, j % 4);
            let Some(out) = output.get_mut(e) else { continue };
            let (x, v) = (self.offset[e][l], self.velocity[e][l]);
            let mut t = out.lane(l);
            t.translation += x.t * p + v.t * q;
            t.rotation = (exp(x.r * p + v.r * q) * t.rotation).normalize();
            t.scale += x.s * p + v.s * q;
            out.set_lane(l, &t);
        }
    }

    /// The offset (translation, rotation vector, scale) of joint `j` `elapsed` seconds into a
    /// decay of `duration`, for tests.
    #[cfg(test)]
    pub(super) fn offset_at(&self, j: usize, elapsed: R, duration: R) -> [Vec3<R>; 3] {
        if duration <= R::ZERO || elapsed >= duration {
            return [Vec3::ZERO; 3];
        }
        let u = elapsed / duration;
        let a = R::ONE - u;
        let a4 = (a * a) * (a * a);
        let (p, q) = (a4 * (R::ONE + R::from_i32(4) * u), a4 * u * duration);
        let (x, v) = (self.offset[j / 4][j % 4], self.velocity[j / 4][j % 4]);
        [x.t * p + v.t * q, x.r * p + v.r * q, x.s * p + v.s * q]
    }
}
