//! Inertialization: the pose offset captured at a switch and its decay (see the
//! [module documentation](super) for the curve), with the two last output poses it needs,
//! kept in one store with the offset (they are never needed at once).
//!
//! Per joint the offset and its velocity are three vectors: translation and scale differences
//! and the rotation offset as a rotation vector (axis × angle, applied on the left: the output
//! rotation is `exp(o) · q`).
//!
//! The steps a state-machine update takes (`record`, `capture`, `measure_target`, `apply`)
//! stay out of line: inlined, their temporaries would sit in the update's stack frame, under
//! which the controller samples and blends (the deepest stack of a microcontroller frame).

use crate::capacity::{Capacity, Element};
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

/// Scalars of a joint's pose in [`Inertia::store`]: translation, rotation, scale.
const POSE: usize = 10;
/// Scalars of a joint's offset and offset velocity in [`Inertia::store`].
const DECAY: usize = 18;

/// The inertialization state of a state machine: the last output pose, and one store that holds
/// the output before it between transitions and the offset and its velocity during a decay.
///
/// Both are never needed at once: the offset is captured from the last two outputs at the
/// switch, and the next capture can only come after the decay has ended, by which time the
/// last two outputs are recorded again (the end of a decay moves the last output into the
/// store). In the store, joint `j`'s pose takes scalars `10j..10j + 10` and its offset and
/// velocity `18j..18j + 18`; the capture writes joints from the last to the first, so each
/// overwrites only poses it has read already.
#[derive(Debug, Clone)]
pub(super) struct Inertia<R: Real, C: Capacity> {
    /// The last output pose.
    last: C::PerSoa<SoaTransform<R>>,
    /// The output before it (between decays) or the offset and its velocity (during one), per
    /// SoA element 4 × [`DECAY`] scalars.
    store: C::PerSoa<[R; 4 * DECAY]>,
    /// The store holds the offset (from a capture to the end of its decay).
    decaying: bool,
    /// Valid history poses (0 to 2).
    frames: u8,
    /// The time step between the two history poses.
    last_dt: R,
    /// The destination's velocity is still to be subtracted from the offset's velocity.
    pending: bool,
}

impl<R: Real, C: Capacity> Inertia<R, C> {
    pub(super) const fn new() -> Self {
        Inertia {
            last: Element::INIT,
            store: Element::INIT,
            decaying: false,
            frames: 0,
            last_dt: R::ZERO,
            pending: false,
        }
    }

    /// Makes this [`Inertia::new`]'s, in place (element by element, without a constant pose
    /// copied from read-only data).
    pub(super) fn reset(&mut self) {
        for t in self.last.as_mut() {
            *t = SoaTransform::IDENTITY;
        }
        for e in self.store.as_mut() {
            *e = [R::ZERO; 4 * DECAY];
        }
        self.decaying = false;
        self.frames = 0;
        self.last_dt = R::ZERO;
        self.pending = false;
    }

    /// Scalar `i` of the store (zero past its end).
    fn get(&self, i: usize) -> R {
        self.store.as_ref().get(i / (4 * DECAY)).and_then(|e| e.get(i % (4 * DECAY))).copied().unwrap_or(R::ZERO)
    }

    fn set(&mut self, i: usize, v: R) {
        if let Some(x) = self.store.as_mut().get_mut(i / (4 * DECAY)).and_then(|e| e.get_mut(i % (4 * DECAY))) {
            *x = v;
        }
    }

    fn vec(&self, i: usize) -> Vec3<R> {
        Vec3::new(self.get(i), self.get(i + 1), self.get(i + 2))
    }

    fn set_vec(&mut self, i: usize, v: Vec3<R>) {
        self.set(i, v.x);
        self.set(i + 1, v.y);
        self.set(i + 2, v.z);
    }

    /// Joint `j`'s pose in the store (between decays).
    fn stored_pose(&self, j: usize) -> Transform<R> {
        let i = POSE * j;
        Transform {
            translation: self.vec(i),
            rotation: Quat::new(self.get(i + 3), self.get(i + 4), self.get(i + 5), self.get(i + 6)),
            scale: self.vec(i + 7),
        }
    }

    fn store_pose(&mut self, j: usize, t: &Transform<R>) {
        let i = POSE * j;
        self.set_vec(i, t.translation);
        let q = t.rotation;
        for (k, v) in [q.x, q.y, q.z, q.w].into_iter().enumerate() {
            self.set(i + 3 + k, v);
        }
        self.set_vec(i + 7, t.scale);
    }

    /// Joint `j`'s offset and offset velocity in the store (during a decay).
    fn decay(&self, j: usize) -> (Offset<R>, Offset<R>) {
        let i = DECAY * j;
        let o = |k: usize| Offset { t: self.vec(i + k), r: self.vec(i + k + 3), s: self.vec(i + k + 6) };
        (o(0), o(9))
    }

    fn set_decay(&mut self, j: usize, x: &Offset<R>, v: &Offset<R>) {
        let i = DECAY * j;
        for (k, o) in [(0, x), (9, v)] {
            self.set_vec(i + k, o.t);
            self.set_vec(i + k + 3, o.r);
            self.set_vec(i + k + 6, o.s);
        }
    }

    /// Records the update's final output pose (`joints` joints) after a step of `dt`. With
    /// `decaying` (a decay runs on after this update) the store keeps the offset; otherwise the
    /// previous output moves into it.
    #[inline(never)]
    pub(super) fn record(&mut self, output: &[SoaTransform<R>], joints: usize, dt: R, decaying: bool) {
        let joints = joints.min(C::SOA * 4);
        if !decaying {
            for j in 0..joints {
                let p = self.last.as_ref()[j / 4].lane(j % 4);
                self.store_pose(j, &p);
            }
        }
        self.decaying = decaying;
        let n = joints.div_ceil(4);
        if let (Some(dst), Some(src)) = (self.last.as_mut().get_mut(..n), output.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.frames = (self.frames + 1).min(2);
        self.last_dt = dt;
    }

    /// Captures the offset at a switch, `target` being the destination's pose at this update
    /// (`joints` joints): the outgoing pose is the last output extrapolated by one step of the
    /// velocity between the last two outputs, the velocity is that one (the destination's is
    /// subtracted at the next update, by [`measure_target`](Self::measure_target)).
    #[inline(never)]
    pub(super) fn capture(&mut self, target: &[SoaTransform<R>], joints: usize, dt: R) {
        // The two outputs are in the store only between decays (a capture cannot come during
        // one: transitions are not interrupted).
        let frames = if self.decaying { self.frames.min(1) } else { self.frames };
        // Last joint first: joint j's offset overwrites only stored poses of joints ≥ j.
        for j in (0..joints.min(C::SOA * 4)).rev() {
            let p2 = self.stored_pose(j);
            let (Some(tgt), Some(p)) = (joint(target, j), joint(self.last.as_ref(), j)) else {
                self.set_decay(j, &Offset::ZERO, &Offset::ZERO);
                continue;
            };
            let (mut src, mut vel) = (tgt, Offset::ZERO);
            if frames >= 1 {
                src = p;
            }
            if frames == 2 && self.last_dt > R::ZERO {
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
            let offset = Offset {
                t: src.translation - tgt.translation,
                r: log(src.rotation * tgt.rotation.conjugate()),
                s: src.scale - tgt.scale,
            };
            self.set_decay(j, &offset, &vel);
        }
        self.decaying = true;
        self.pending = true;
    }

    /// At the update after a switch (`dt > 0`), subtracts the destination's velocity — from its
    /// pose at the switch (the last output without the offset) to `target` — from the offset's
    /// velocity, seen through the offset's rotation.
    #[inline(never)]
    pub(super) fn measure_target(&mut self, target: &[SoaTransform<R>], joints: usize, dt: R) {
        if !self.pending || dt <= R::ZERO {
            return;
        }
        self.pending = false;
        let inv = dt.recip();
        for j in 0..joints.min(C::SOA * 4) {
            let (Some(t1), Some(y0)) = (joint(target, j), joint(self.last.as_ref(), j)) else { continue };
            let (x0, mut v) = self.decay(j);
            let turn = exp(x0.r);
            let t0_rotation = turn.conjugate() * y0.rotation;
            v.t -= (t1.translation - (y0.translation - x0.t)) * inv;
            v.r -= turn.rotate(log(t1.rotation * t0_rotation.conjugate())) * inv;
            v.s -= (t1.scale - (y0.scale - x0.s)) * inv;
            self.set_decay(j, &x0, &v);
        }
    }

    /// Applies the offset `elapsed` seconds into a decay of `duration` seconds to `output`
    /// (`joints` joints); nothing at or past the end.
    #[inline(never)]
    pub(super) fn apply(&self, output: &mut [SoaTransform<R>], joints: usize, elapsed: R, duration: R) {
        if duration <= R::ZERO || elapsed >= duration {
            return;
        }
        let u = (elapsed / duration).clamp(R::ZERO, R::ONE);
        let a = R::ONE - u;
        let a4 = (a * a) * (a * a);
        let p = a4 * (R::ONE + R::from_i32(4) * u);
        let q = a4 * u * duration;
        for j in 0..joints.min(C::SOA * 4) {
            let (e, l) = (j / 4, j % 4);
            let Some(out) = output.get_mut(e) else { continue };
            let (x, v) = self.decay(j);
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
        let (x, v) = self.decay(j);
        [x.t * p + v.t * q, x.r * p + v.r * q, x.s * p + v.s * q]
    }
}
