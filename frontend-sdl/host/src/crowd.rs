//! A crowd of one model on the core's batch evaluation ([`sinew::crowd`]): the buffers it
//! owns, the arrangement every front end shows (a grid on the ground, each instance at its own
//! phase, clip, speed and heading), levels of detail from a camera, and what a vertex shader
//! reads per instance. The desktop viewer, the browser runtime and the command line's bench
//! run crowds through this module.

use alloc::rc::Rc;
use alloc::vec;
use alloc::vec::Vec;

use sinew::clip::{Clip, SoaTrackCache};
use sinew::crowd::{
    Crowd as Batch, CrowdBatch, CrowdError, CrowdEval, CrowdInstance, CrowdLayout, CrowdLod, CrowdRig, CrowdSlot,
    CrowdState, CrowdStats, CrowdWork, MAX_LOD,
};
use sinew::math::{Mat4, SoaTransform, Vec3};

use crate::model::Model;

/// The widest palette texture a crowd lays out, in texels: what every WebGL 1 and OpenGL ES 2
/// implementation in use accepts.
pub const MAX_TEXTURE_WIDTH: usize = 2048;
/// Floats per instance of [`Crowd::instance_rows`]: the placement's three affine rows, then the
/// texel where its palette slot starts (column, row) and two zeros.
pub const INSTANCE_FLOATS: usize = 16;
/// The frame rate instance times are quantized to.
pub const CROWD_FPS: f32 = 60.0;

/// How a crowd is set up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrowdSettings {
    /// Instances.
    pub count: usize,
    /// Pose sharing and update-rate levels of detail (off: every instance is evaluated every
    /// frame into its own slot).
    pub lod: bool,
    /// The model's up axis is +Z (the ground is the XY plane) rather than +Y.
    pub z_up: bool,
    /// Projected radius in pixels at or above which an instance updates every frame, every
    /// 2nd and every 4th frame (below the last: every 8th).
    pub thresholds: [f32; 3],
}

impl CrowdSettings {
    /// `count` instances of a Y-up model, levels of detail on, updating every frame when at
    /// least 48 px in radius, every 2nd frame from 24 px, every 4th from 12 px.
    #[must_use]
    pub fn new(count: usize) -> Self {
        CrowdSettings { count, lod: true, z_up: false, thresholds: [48.0, 24.0, 12.0] }
    }
}

/// One thread's work buffers.
#[derive(Debug, Clone)]
struct WorkBuffers {
    caches: Vec<SoaTrackCache<f32>>,
    poses: Vec<SoaTransform<f32>>,
    model: Vec<Mat4<f32>>,
    skin: Vec<Mat4<f32>>,
}

/// A crowd of one model: its instances, their placements and the palette texture's texels.
#[derive(Debug)]
pub struct Crowd {
    clips: Vec<Clip<'static>>,
    model: Rc<Model>,
    settings: CrowdSettings,
    instances: Vec<CrowdInstance>,
    slots: Vec<CrowdSlot>,
    table: Vec<u32>,
    evals: Vec<CrowdEval>,
    state: CrowdState,
    layout: CrowdLayout,
    palette: Vec<f32>,
    placements: Vec<Mat4<f32>>,
    works: Vec<WorkBuffers>,
    stats: CrowdStats,
}

/// One batch of a frame's evaluations, ready to run on any thread ([`Crowd::frame_with`]).
#[derive(Debug)]
pub struct CrowdJob<'j> {
    batch: CrowdBatch<'j>,
    rig: CrowdRig<'j, f32>,
    clips: &'j [Clip<'static>],
    work: &'j mut WorkBuffers,
}

impl CrowdJob<'_> {
    /// Evaluates the batch's poses into their slots.
    ///
    /// # Errors
    ///
    /// The core's [`CrowdError`].
    pub fn run(self) -> Result<(), CrowdError> {
        let w = self.work;
        let mut work = CrowdWork::new(&mut w.caches, &mut w.poses, &mut w.model, &mut w.skin);
        let mut batch = self.batch;
        batch.run(&self.rig, self.clips, CROWD_FPS, &mut work)
    }
}

/// Golden-ratio fractions: a low-discrepancy sequence, so neighbours differ.
fn frac(i: usize, step: f64) -> f32 {
    let x = i as f64 * step;
    (x - x as u64 as f64) as f32
}

impl Crowd {
    /// A crowd of `model` (its first skin, every clip) arranged on a square grid spaced by
    /// the model's footprint, centered on the origin: instance `i` plays clip
    /// `⌊frac(0.7549 i) × clips⌋` from phase `frac(0.618 i)` of it, at speed
    /// `0.8 + 0.4 frac(0.5698 i)`, turned by `2π frac(0.4142 i)` about the up axis.
    ///
    /// # Errors
    ///
    /// [`CrowdError::InvalidRig`] when the model has no skin or no clip, and the core's
    /// errors for the buffers' sizes.
    pub fn new(model: Rc<Model>, settings: CrowdSettings) -> Result<Crowd, CrowdError> {
        let n = settings.count.max(1);
        let skin = model.skins.first().ok_or(CrowdError::InvalidRig)?;
        let clips: Vec<Clip<'static>> = model.clips.iter().map(|c| c.clip).collect();
        if clips.is_empty() {
            return Err(CrowdError::InvalidRig);
        }
        let rig = CrowdRig::new(model.skeleton(), &skin.joints, &skin.inverse_bind)?;
        let layout = CrowdLayout::new(skin.joints.len(), n, MAX_TEXTURE_WIDTH)?;
        let (c, p, m, s) = CrowdWork::sizes(&rig);
        let work = WorkBuffers {
            caches: vec![SoaTrackCache::EMPTY; c],
            poses: vec![SoaTransform::IDENTITY; p],
            model: vec![Mat4::IDENTITY; m],
            skin: vec![Mat4::IDENTITY; s],
        };
        let b = model.bounds;
        let extent = b.high - b.low;
        let footprint = if settings.z_up { extent.x.max(extent.y) } else { extent.x.max(extent.z) };
        let spacing = (footprint * 1.5).max(b.radius * 0.5).max(1e-3);
        let side = (1..=n).find(|s| s * s >= n).unwrap_or(n);
        let half = (side as f32 - 1.0) * 0.5;
        let mut instances = Vec::with_capacity(n);
        let mut placements = Vec::with_capacity(n);
        for i in 0..n {
            let clip = ((frac(i, 0.754_877_666) * clips.len() as f32) as usize).min(clips.len() - 1);
            let d = clips.get(clip).map_or(0.0, |c| (c.end() - c.start()).max(0.0));
            instances.push(CrowdInstance::new(
                clip as u16,
                frac(i, 0.618_033_988) * d,
                0.8 + 0.4 * frac(i, 0.569_840_291),
            ));
            let (col, row) = ((i % side) as f32 - half, (i / side) as f32 - half);
            let (x, y) = (col * spacing, row * spacing);
            let angle = core::f32::consts::TAU * frac(i, 0.414_213_562);
            let (sin, cos) = sinew::math::ops::sin_cos(angle);
            let m = if settings.z_up {
                Mat4 { cols: [[cos, sin, 0.0, 0.0], [-sin, cos, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [x, y, 0.0, 1.0]] }
            } else {
                Mat4 { cols: [[cos, 0.0, -sin, 0.0], [0.0, 1.0, 0.0, 0.0], [sin, 0.0, cos, 0.0], [x, 0.0, y, 1.0]] }
            };
            placements.push(m);
        }
        let mut slots = vec![CrowdSlot::EMPTY; n];
        let mut table = vec![0u32; (2 * n).next_power_of_two()];
        let mut evals = vec![CrowdEval::EMPTY; n];
        let mut batch = Batch::new(&mut instances, &mut slots, &mut table, &mut evals, CROWD_FPS)?;
        batch.set_sharing(settings.lod);
        let state = batch.state();
        let palette = vec![0.0; layout.floats()];
        Ok(Crowd {
            clips,
            settings,
            instances,
            slots,
            table,
            evals,
            state,
            layout,
            palette,
            placements,
            works: vec![work],
            stats: CrowdStats::default(),
            model,
        })
    }

    /// The model.
    #[must_use]
    pub fn model(&self) -> &Rc<Model> {
        &self.model
    }

    /// The settings it was made with.
    #[must_use]
    pub fn settings(&self) -> CrowdSettings {
        self.settings
    }

    /// Instances.
    #[must_use]
    pub fn len(&self) -> usize {
        self.instances.len()
    }

    /// Whether it has no instances (never: a crowd has at least one).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.instances.is_empty()
    }

    /// The instances (clips, times, speeds, levels of detail, slots).
    #[must_use]
    pub fn instances(&self) -> &[CrowdInstance] {
        &self.instances
    }

    /// Each instance's placement on the ground (model to world).
    #[must_use]
    pub fn placements(&self) -> &[Mat4<f32>] {
        &self.placements
    }

    /// What a viewer frames: the center of the placed models' bind-pose centers, and a radius
    /// of the largest half extent of those centers plus the model's radius. The crowd is a flat
    /// square seen from above its edge, so its half side, not its half diagonal, has to fit.
    #[must_use]
    pub fn bounds(&self) -> (Vec3<f32>, f32) {
        let c = self.model.bounds.center;
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for m in &self.placements {
            let p = m.transform_point3(c);
            lo = lo.min(p);
            hi = hi.max(p);
        }
        let half = (hi - lo) * 0.5;
        ((lo + hi) * 0.5, half.x.max(half.y).max(half.z) + self.model.bounds.radius)
    }

    /// The palette texture's layout.
    #[must_use]
    pub fn layout(&self) -> &CrowdLayout {
        &self.layout
    }

    /// The palette texture's texels, RGBA floats row after row ([`CrowdLayout`]).
    #[must_use]
    pub fn palette(&self) -> &[f32] {
        &self.palette
    }

    /// The last frame's counts.
    #[must_use]
    pub fn stats(&self) -> CrowdStats {
        self.stats
    }

    /// The texture rows the last frame wrote (`None`: none), the part to upload.
    #[must_use]
    pub fn written_rows(&self) -> Option<core::ops::Range<usize>> {
        let e = self.evals.get(..self.pending())?;
        let (first, last) = (e.first()?.slot(), e.last()?.slot());
        Some(self.layout.texel(first).1..self.layout.texel(last).1 + 1)
    }

    fn pending(&self) -> usize {
        self.stats.evaluated
    }

    /// Sets each instance's level of detail from the radius it projects to, seen from `eye`
    /// (world space, the placements' frame) through a lens of `focal` pixels per unit at unit
    /// distance (the viewport's height / (2 tan(fov / 2))). With levels of detail off, every
    /// instance stays at level 0.
    pub fn set_camera(&mut self, eye: Vec3<f32>, focal: f32) {
        let lod = CrowdLod { thresholds: self.settings.thresholds };
        let radius = self.model.bounds.radius;
        for (x, m) in self.instances.iter_mut().zip(&self.placements) {
            x.lod = if self.settings.lod {
                let d = (m.translation() + self.model.bounds.center - eye).length().max(1e-6);
                lod.level(radius * focal / d).min(MAX_LOD)
            } else {
                0
            };
        }
    }

    /// Sets every instance's level of detail to `lod` (at most [`MAX_LOD`]).
    pub fn set_lod(&mut self, lod: u8) {
        for x in &mut self.instances {
            x.lod = lod.min(MAX_LOD);
        }
    }

    /// Advances the crowd by `dt` seconds and evaluates the frame's poses on this thread.
    ///
    /// # Errors
    ///
    /// The core's [`CrowdError`]; the crowd is as before on a planning error.
    pub fn frame(&mut self, dt: f32) -> Result<CrowdStats, CrowdError> {
        self.frame_with(dt, 1, |jobs| jobs.into_iter().try_for_each(CrowdJob::run))
    }

    /// Advances the crowd by `dt` seconds, splits the frame's evaluations into at most
    /// `parts` jobs over disjoint parts of the palette, and hands them to `run` (which may run
    /// them on as many threads, and returns the first error).
    ///
    /// # Errors
    ///
    /// The core's [`CrowdError`], or `run`'s.
    pub fn frame_with(
        &mut self,
        dt: f32,
        parts: usize,
        run: impl FnOnce(Vec<CrowdJob<'_>>) -> Result<(), CrowdError>,
    ) -> Result<CrowdStats, CrowdError> {
        let parts = parts.max(1);
        while self.works.len() < parts {
            let w = self.works.first().cloned().ok_or(CrowdError::InvalidRig)?;
            self.works.push(w);
        }
        let mut batch =
            Batch::resume(&mut self.instances, &mut self.slots, &mut self.table, &mut self.evals, self.state)?;
        let stats = batch.frame(dt, &self.clips)?;
        self.state = batch.state();
        self.stats = stats;
        let skin = self.model.skins.first().ok_or(CrowdError::InvalidRig)?;
        let rig = CrowdRig::new(self.model.skeleton(), &skin.joints, &skin.inverse_bind)?;
        let clips = &self.clips;
        let jobs: Vec<CrowdJob<'_>> = batch
            .batches(&mut self.palette, &self.layout, parts)
            .zip(self.works.iter_mut())
            .map(|(batch, work)| CrowdJob { batch, rig, clips, work })
            .collect();
        run(jobs)?;
        Ok(stats)
    }

    /// Appends [`INSTANCE_FLOATS`] floats per instance: rows 0 to 2 of its placement (x, y, z,
    /// translation each), then the texel where its palette slot starts, (column, row), and two
    /// zeros. An instance not yet evaluated points at slot 0.
    pub fn instance_rows(&self, out: &mut Vec<f32>) {
        out.reserve(self.instances.len() * INSTANCE_FLOATS);
        for (x, m) in self.instances.iter().zip(&self.placements) {
            for r in 0..3 {
                out.extend([m.cols[0][r], m.cols[1][r], m.cols[2][r], m.cols[3][r]]);
            }
            let slot = if x.slot() == sinew::crowd::NO_SLOT { 0 } else { x.slot() };
            let (col, row) = self.layout.texel(slot);
            out.extend([col as f32, row as f32, 0.0, 0.0]);
        }
    }
}

/// `part`'s vertices with each joint index turned from the part's local palette to the skin's
/// (the crowd's palette holds the whole skin): what the crowd's vertex shader reads. A rigid
/// part's vertices are returned as they are.
#[must_use]
pub fn skin_indexed_vertices(part: &crate::parts::DrawPart) -> Vec<f32> {
    let mut v = part.vertices.clone();
    if part.is_rigid() {
        return v;
    }
    for vertex in v.chunks_exact_mut(crate::parts::FLOATS_PER_VERTEX) {
        if let Some(joints) = vertex.get_mut(6..10) {
            for j in joints {
                *j = part.map.get(*j as usize).map_or(0.0, |&s| f32::from(s));
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use alloc::boxed::Box;

    static CHARACTER: &[u8] = include_bytes!("../../../core/fixtures/character.sinew");

    fn model() -> Rc<Model> {
        Rc::new(Model::open::<16>(Box::from(CHARACTER), Some(64)).unwrap())
    }

    #[test]
    fn threads_split_the_frame_without_changing_its_bits() {
        let settings = CrowdSettings::new(300);
        let (mut one, mut two) = (Crowd::new(model(), settings).unwrap(), Crowd::new(model(), settings).unwrap());
        for _ in 0..5 {
            let a = one.frame(1.0 / 60.0).unwrap();
            let b = two
                .frame_with(1.0 / 60.0, 3, |jobs| {
                    assert!(jobs.len() <= 3);
                    std::thread::scope(|s| {
                        let handles: Vec<_> = jobs.into_iter().map(|j| s.spawn(move || j.run())).collect();
                        handles.into_iter().try_for_each(|h| h.join().unwrap_or(Err(CrowdError::InvalidRig)))
                    })
                })
                .unwrap();
            assert_eq!(a, b);
            assert_eq!(a.evaluated + a.shared + a.held, 300);
            let differ = one.palette().iter().zip(two.palette()).position(|(a, b)| a.to_bits() != b.to_bits());
            assert_eq!(differ, None, "the palettes differ from float {differ:?} on");
        }
    }

    #[test]
    fn instance_rows_place_each_instance_and_point_at_its_slot() {
        let mut crowd = Crowd::new(model(), CrowdSettings::new(10)).unwrap();
        crowd.frame(0.0).unwrap();
        let mut rows = Vec::new();
        crowd.instance_rows(&mut rows);
        assert_eq!(rows.len(), 10 * INSTANCE_FLOATS);
        let layout = *crowd.layout();
        for (i, r) in rows.chunks_exact(INSTANCE_FLOATS).enumerate() {
            let m = crowd.placements()[i];
            assert_eq!([r[3], r[7], r[11]], [m.cols[3][0], m.cols[3][1], m.cols[3][2]]);
            let slot = crowd.instances()[i].slot();
            assert_eq!((r[12] as usize, r[13] as usize), layout.texel(slot));
            // The slot's texels hold a palette: finite, and a rotation's rows of unit length.
            let at = (r[13] as usize * layout.width + r[12] as usize) * 4;
            let row0 = &crowd.palette()[at..at + 3];
            let len = row0.iter().map(|v| v * v).sum::<f32>().sqrt();
            assert!((len - 1.0).abs() < 1e-3, "instance {i}: row 0 {row0:?}");
        }
        // The framing holds every placed model center within its half side.
        let (center, radius) = crowd.bounds();
        for m in crowd.placements() {
            let d = m.transform_point3(crowd.model().bounds.center) - center;
            assert!(d.x.abs().max(d.y.abs()).max(d.z.abs()) + crowd.model().bounds.radius <= radius + 1e-4);
        }
        // Ten instances of a 3×4 grid, at least a footprint apart.
        let d = (crowd.placements()[1].translation() - crowd.placements()[0].translation()).length();
        assert!(d > 0.0);
    }

    #[test]
    fn far_instances_update_less_often() {
        let mut crowd = Crowd::new(model(), CrowdSettings::new(400)).unwrap();
        let eye = crowd.placements()[0].translation() + Vec3::new(0.0, 1.0, 0.0);
        crowd.set_camera(eye, 500.0);
        let lods: Vec<u8> = crowd.instances().iter().map(|x| x.lod).collect();
        assert_eq!(lods[0], 0);
        assert_eq!(*lods.last().unwrap(), MAX_LOD);
        crowd.frame(0.0).unwrap();
        let s = crowd.frame(1.0 / 60.0).unwrap();
        assert!(s.held > 200, "{s:?}");
        // Without levels of detail every instance is evaluated every frame.
        let mut all = Crowd::new(model(), CrowdSettings { lod: false, ..CrowdSettings::new(400) }).unwrap();
        all.set_camera(eye, 500.0);
        for _ in 0..2 {
            assert_eq!(all.frame(1.0 / 60.0).unwrap(), CrowdStats { evaluated: 400, shared: 0, held: 0 });
        }
    }
}
