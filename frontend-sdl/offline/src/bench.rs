//! `sinew bench`: the per-stage workloads of the peer benchmark kit (`../shared/bench`), timed
//! in one process, printing `sinew <stage> <model> <ns_per_unit> <count>` lines.
//!
//! Each measurement warms up for about 0.2 s (which also sets the iteration count), then runs
//! 7 repetitions of about 0.2 s and reports the median repetition's mean time per call. All
//! buffers are allocated before timing starts.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use sinew::asset::{MeshPart, PartBuffers};
use sinew::clip::{Clip, RotationInterpolation, SoaTrackCache};
use sinew::job::{BlendingJob, JobError, Layer, LocalToModelJob, Palette, SamplingJob, SkinMatrixJob, SkinningJob};
use sinew::math::{Mat4, SoaTransform, Vec3};
use sinew::skeleton::SkeletonView;

use crate::model::Model;

/// One printed measurement.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Stage name (`sample`, `sample_call`, `blend`, `l2m`, `skin`, `skin_unit`, `skin_dqs`,
    /// `crowd`).
    pub stage: &'static str,
    /// Nanoseconds per unit (joint, vertex, call or character).
    pub ns_per_unit: f64,
    /// Units per call (joints, vertices or characters).
    pub count: usize,
    /// Fastest and slowest repetition, ns per call.
    pub min_max: (f64, f64),
}

/// Times `f` as described in the module docs; returns (median, min, max) ns per call.
pub fn time_it(f: impl FnMut()) -> (f64, f64, f64) {
    time_runs(f, 0.2, 0.2, 7)
}

/// Runs `f` for `warm_s` seconds to estimate a call's cost, then `reps` timed runs of about
/// `rep_s` seconds each; returns the (median, min, max) of the runs' ns per call.
pub fn time_runs(mut f: impl FnMut(), warm_s: f64, rep_s: f64, reps: usize) -> (f64, f64, f64) {
    let start = Instant::now();
    let mut iters = 0u64;
    while start.elapsed().as_secs_f64() < warm_s {
        f();
        iters += 1;
    }
    let per_call = start.elapsed().as_secs_f64() / iters.max(1) as f64;
    let reps_iters = ((rep_s / per_call.max(1e-9)) as u64).max(1);
    let mut runs: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let t = Instant::now();
            for _ in 0..reps_iters {
                f();
            }
            t.elapsed().as_secs_f64() * 1e9 / reps_iters as f64
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    (runs[runs.len() / 2], runs[0], runs[runs.len() - 1])
}

/// One call of the kit's sampling workload: advances `t` (seconds from the clip's start) by
/// 1/60 s, wrapping at the clip's end, and samples `clip` there into `pose` with corrected
/// nlerp and the persistent `cache`. `sinew bench`'s `sample` stage and the compression
/// benchmark's sampling time both time this call.
///
/// # Errors
///
/// The sampling job's error when its buffers do not fit the clip and skeleton.
pub fn sample_next_frame(
    clip: Clip<'_>,
    skeleton: SkeletonView<'_, f32>,
    t: &mut f32,
    cache: &mut [SoaTrackCache<f32>],
    pose: &mut [SoaTransform<f32>],
) -> Result<(), JobError> {
    let duration = clip.end() - clip.start();
    *t += 1.0 / 60.0;
    if *t >= duration {
        *t = if duration > 0.0 { *t % duration } else { 0.0 };
    }
    SamplingJob {
        clip,
        time: clip.start() + *t,
        rotation: RotationInterpolation::NlerpCorrected,
        rest_pose: skeleton.rest_pose(),
        cursor: cache,
        output: pose,
    }
    .run()
}

/// Runs the kit's workloads on `model`'s clip `clip`, the crowd on `threads` threads
/// ([`crowd_stage`]).
///
/// # Errors
///
/// A message when the model has no clip or a job refuses its inputs.
pub fn run(model: &Model, clip: usize, threads: usize) -> Result<Vec<Measurement>, String> {
    let asset = model.asset();
    let c = asset.clip(clip).ok_or("the model has no such clip")?;
    let skel = model.skeleton();
    let soa = skel.num_soa_joints();
    // Joints per call as the kit counts them: the skin's joints (a skinned mesh's own node is
    // kept in the hierarchy but is not a joint), or the whole hierarchy without a skin.
    let joints = asset.skin(0).map(|s| s.num_joints()).unwrap_or(skel.num_joints());
    let mut out = Vec::new();

    // sample: t advances by 1/60 s before each call and wraps; the cursor persists.
    let duration = c.end() - c.start();
    let mut cursor = vec![0u16; c.num_tracks()];
    let mut cache = vec![SoaTrackCache::<f32>::EMPTY; soa];
    let mut pose = vec![SoaTransform::<f32>::IDENTITY; soa];
    let mut t = 0.0f32;
    let mut err = None;
    let (med, lo, hi) = time_it(|| {
        if let Err(e) = sample_next_frame(c, skel, &mut t, &mut cache, &mut pose) {
            err = Some(e);
        }
        black_box(&pose);
    });
    if let Some(e) = err {
        return Err(e.to_string());
    }
    out.push(Measurement { stage: "sample", ns_per_unit: med / joints as f64, count: joints, min_max: (lo, hi) });
    out.push(Measurement { stage: "sample_call", ns_per_unit: med, count: joints, min_max: (lo, hi) });

    // blend: the clip at 25 % and 75 %, weights w and 1 − w with w = 0.25 + 0.5·((k mod 64)/63).
    let mut p25 = vec![SoaTransform::<f32>::IDENTITY; soa];
    let mut p75 = vec![SoaTransform::<f32>::IDENTITY; soa];
    let rot = RotationInterpolation::NlerpCorrected;
    model.sample(Some(clip), c.start() + 0.25 * duration, rot, &mut cursor, &mut p25).map_err(|e| e.to_string())?;
    model.sample(Some(clip), c.start() + 0.75 * duration, rot, &mut cursor, &mut p75).map_err(|e| e.to_string())?;
    let mut blended = vec![SoaTransform::<f32>::IDENTITY; soa];
    let mut k = 0u32;
    let (med, lo, hi) = time_it(|| {
        let w = 0.25 + 0.5 * ((k % 64) as f32 / 63.0);
        k = k.wrapping_add(1);
        let layers = [
            Layer { transform: &p25, weight: w, joint_weights: None },
            Layer { transform: &p75, weight: 1.0 - w, joint_weights: None },
        ];
        let r = BlendingJob {
            layers: &layers,
            additive: &[],
            rest_pose: skel.rest_pose(),
            threshold: 0.1,
            output: &mut blended,
        }
        .run();
        if let Err(e) = r {
            err = Some(e);
        }
        black_box(&blended);
    });
    out.push(Measurement { stage: "blend", ns_per_unit: med / joints as f64, count: joints, min_max: (lo, hi) });

    // l2m: the blended pose, identity root.
    let mut world = vec![Mat4::<f32>::IDENTITY; skel.num_joints()];
    let (med, lo, hi) = time_it(|| {
        let r =
            LocalToModelJob { skeleton: skel, root: None, input: &blended, output: &mut world, from: None, to: None }
                .run();
        if let Err(e) = r {
            err = Some(e);
        }
        black_box(&world);
    });
    out.push(Measurement { stage: "l2m", ns_per_unit: med / joints as f64, count: joints, min_max: (lo, hi) });

    // skin: every skinned part of the first mesh using skin 0, positions and normals.
    let palette = model.palette(&world, 0).map_err(|e| e.to_string())?;
    let dq = model.dq_palette(&world, 0).map_err(|e| e.to_string())?;
    if let Some(mesh) = (0..asset.num_meshes()).filter_map(|i| asset.mesh(i)).find(|m| m.skin() == Some(0)) {
        struct Part {
            pal: Vec<Mat4<f32>>,
            dq: crate::model::DqPalette,
            k: usize,
            joints: Vec<u16>,
            weights: Vec<f32>,
            pos: Vec<Vec3<f32>>,
            nrm: Vec<Vec3<f32>>,
            out_p: Vec<Vec3<f32>>,
            out_n: Vec<Vec3<f32>>,
        }
        let read = |p: MeshPart<'_>| -> Result<Part, JobError> {
            let (n, len) = (p.num_vertices(), p.inputs_len());
            let mut part = Part {
                pal: vec![Mat4::IDENTITY; len.palette],
                dq: dq.of_part(&p)?,
                k: p.influences(),
                joints: vec![0; len.influences],
                weights: vec![0.0; len.influences],
                pos: vec![Vec3::ZERO; n],
                // Zero where the part stores no normals.
                nrm: vec![Vec3::ZERO; n],
                out_p: vec![Vec3::ZERO; n],
                out_n: vec![Vec3::ZERO; n],
            };
            p.local_palette(&palette, &mut part.pal)?;
            p.read_inputs(
                PartBuffers::new(&mut part.pos, &mut part.joints, &mut part.weights).with_normals(&mut part.nrm),
            )?;
            Ok(part)
        };
        let mut parts: Vec<Part> = mesh
            .parts()
            .filter(|p| p.influences() > 0)
            .map(read)
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        let verts: usize = parts.iter().map(|p| p.pos.len()).sum();
        // `skin` is the kit's operation, which ozz-rs runs: the blended matrix transforms
        // positions and normals, and the normals are not renormalized
        // (`SkinningJob::run_unnormalized`). `skin_unit` adds sinew's default renormalization
        // (`SkinningJob::run`), `skin_dqs` is dual-quaternion skinning (rigid, unit normals).
        for (stage, dqs, unit) in [("skin", false, false), ("skin_unit", false, true), ("skin_dqs", true, true)] {
            let (med, lo, hi) = time_it(|| {
                for p in parts.iter_mut() {
                    let mut job = SkinningJob {
                        palette: if dqs { p.dq.palette() } else { Palette::Matrices(&p.pal) },
                        influences: p.k,
                        joint_indices: &p.joints,
                        joint_weights: &p.weights,
                        positions: &p.pos,
                        normals: Some(&p.nrm),
                        tangents: None,
                        out_positions: &mut p.out_p,
                        out_normals: Some(&mut p.out_n),
                        out_tangents: None,
                    };
                    let r = if unit { job.run() } else { job.run_unnormalized() };
                    if let Err(e) = r {
                        err = Some(e);
                    }
                    black_box(&p.out_p);
                }
            });
            out.push(Measurement { stage, ns_per_unit: med / verts.max(1) as f64, count: verts, min_max: (lo, hi) });
        }
    }
    if let Some(e) = err {
        return Err(e.to_string());
    }
    out.push(crowd_stage(model, clip, CROWD, threads)?);
    Ok(out)
}

/// Characters of the kit's `crowd` stage.
pub const CROWD: usize = 1000;

/// The kit's `crowd` stage on clip `clip`: `n` characters, character `i` starting at
/// `frac(i · 0.618034) · duration`. One call is one frame: every character advances by 1/60 s
/// (wrapping), samples the clip at its time and half a loop later (wrapped), each with its own
/// [`SoaTrackCache`]s kept from frame to frame, blends the two poses with
/// `w = 0.25 + 0.5 · (((frame + i) mod 64) / 63)` and `1 − w`, runs local-to-model (identity
/// root) and writes its palette: model × inverse bind for each skin joint that carries weight
/// in the first skinned mesh (every skin joint without such a mesh), into its own slot of an `n ×` palette
/// array. The value is wall-clock ns per character.
///
/// `threads` > 1 runs each frame on the caller's thread and `threads − 1` threads started
/// before timing begins, each with its own working memory, taking runs of 16 consecutive
/// characters until none is left; a frame ends when every run is done
/// ([`KitCrowd::on_threads`]). The characters' results do not depend on the threads.
///
/// # Errors
///
/// A message when the model has no such clip, a job refuses its inputs or a thread cannot be
/// started.
pub fn crowd_stage(model: &Model, clip: usize, n: usize, threads: usize) -> Result<Measurement, String> {
    let mut crowd = KitCrowd::new(model, clip, n)?;
    let mut err = None;
    let (med, lo, hi) = crowd.on_threads(threads, |team| {
        time_it(|| {
            // The first frame fills every cache from empty; the others run through `steady`,
            // which a profiler can count alone.
            let r = if team.frames() == 0 { team.frame() } else { steady(|| team.frame()) };
            if let Err(e) = r {
                err.get_or_insert(e);
            }
        })
    })?;
    if let Some(e) = err {
        return Err(e.to_string());
    }
    black_box(crowd.palettes());
    let (n, np) = (crowd.times.len(), crowd.np);
    eprintln!("  crowd: {n} characters, palette of {np} matrices each, {} thread(s)", threads.max(1));
    Ok(Measurement { stage: "crowd", ns_per_unit: med / n as f64, count: n, min_max: (lo, hi) })
}

/// The state of the kit's crowd ([`crowd_stage`]) between frames: each character's time,
/// sampling caches and palette, in arrays character after character.
pub struct KitCrowd<'a> {
    character: Character<'a>,
    duration: f32,
    /// Joints of a palette.
    np: usize,
    /// Frames run so far.
    frame: u32,
    times: Vec<f32>,
    caches: Vec<SoaTrackCache<f32>>,
    palettes: Vec<Mat4<f32>>,
}

impl<'a> KitCrowd<'a> {
    /// `n` (at least 1) characters playing `model`'s clip `clip`, before their first frame.
    ///
    /// # Errors
    ///
    /// A message when the model has no such clip.
    pub fn new(model: &'a Model, clip: usize, n: usize) -> Result<Self, String> {
        let asset = model.asset();
        let c = asset.clip(clip).ok_or("the model has no such clip")?;
        let skel = model.skeleton();
        let soa = skel.num_soa_joints();
        let (skin_joints, skin_ib) = model.skin_bind(0).unwrap_or((&[], &[]));
        // The palette joints: the skin joints that carry weight in the first skinned mesh, in
        // skin order (a part's palette may also list joints only zero weights name).
        let mut used = vec![false; skin_ib.len()];
        if let Some(mesh) = (0..asset.num_meshes()).filter_map(|i| asset.mesh(i)).find(|m| m.skin() == Some(0)) {
            for p in mesh.parts() {
                let len = p.inputs_len();
                let (mut joints, mut weights) = (vec![0u16; len.influences], vec![0.0f32; len.influences]);
                let (joints, weights) = p.read_influences(&mut joints, &mut weights).map_err(|e| e.to_string())?;
                for (&j, _) in joints.iter().zip(weights).filter(|&(_, &w)| w != 0.0) {
                    if let Some(u) = used.get_mut(usize::from(p.palette(usize::from(j)))) {
                        *u = true;
                    }
                }
            }
        }
        if !used.contains(&true) {
            used.fill(true);
        }
        let palette_joints: Vec<u16> = (0..skin_ib.len()).filter(|&j| used[j]).map(|j| skin_joints[j]).collect();
        let inverse_bind: Vec<Mat4<f32>> = (0..skin_ib.len()).filter(|&j| used[j]).map(|j| skin_ib[j]).collect();
        let np = inverse_bind.len();
        let duration = c.end() - c.start();
        let n = n.max(1);
        Ok(KitCrowd {
            character: Character { clip: c, skeleton: skel, palette_joints, inverse_bind },
            duration,
            np,
            frame: 0,
            times: (0..n).map(|i| (i as f32 * 0.618_034) % 1.0 * duration).collect(),
            caches: vec![SoaTrackCache::<f32>::EMPTY; n * 2 * soa],
            palettes: vec![Mat4::<f32>::IDENTITY; n * np.max(1)],
        })
    }

    /// Every character's palette after the last frame, character after character (each
    /// [`KitCrowd::palette_len`] matrices, at least one).
    pub fn palettes(&self) -> &[Mat4<f32>] {
        &self.palettes
    }

    /// Matrices of one character's slot in [`KitCrowd::palettes`].
    pub fn palette_len(&self) -> usize {
        self.np.max(1)
    }

    /// Runs `drive` with a [`Team`] of `threads` threads (at most one per run of [`CHUNK`]
    /// characters) whose [`Team::frame`] runs one frame of every character: the caller's
    /// thread and the others (started here, before `drive`, and ended after it, each with
    /// working memory it allocates itself) take the runs of consecutive characters one at a
    /// time until none is left, so that a thread slowed down by its core does fewer. A waiting thread
    /// spins for up to [`SPIN`] before it parks, so that back-to-back frames wake no sleeping
    /// thread.
    ///
    /// # Errors
    ///
    /// A message when a thread cannot be started.
    pub fn on_threads<R>(&mut self, threads: usize, drive: impl FnOnce(&mut Team<'_>) -> R) -> Result<R, String> {
        let n = self.times.len();
        let soa = self.character.skeleton.num_soa_joints();
        let slot = self.np.max(1);
        let per = CHUNK;
        let threads = threads.clamp(1, n.div_ceil(per));
        let first_frame = self.frame;
        let (character, duration) = (&self.character, self.duration);
        let runs: Vec<Mutex<Run<'_>>> = self
            .caches
            .chunks_mut(per * 2 * soa)
            .zip(self.palettes.chunks_mut(per * slot))
            .zip(self.times.chunks_mut(per))
            .enumerate()
            .map(|(k, ((caches, palettes), times))| Mutex::new(Run { first: k * per, caches, palettes, times }))
            .collect();
        let signal = Signal {
            runs,
            next: AtomicUsize::new(0),
            go: AtomicU32::new(first_frame),
            done: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            error: Mutex::new(None),
            caller: std::thread::current(),
        };
        let signal = &signal;
        let stage = Stage { character, duration, soa, slot };
        let result: Result<_, String> = std::thread::scope(|s| {
            // Ends the other threads' loops however this scope is left.
            let mut stop = StopOnDrop(&signal.stop, Vec::new());
            for k in 1..threads {
                let worker = std::thread::Builder::new()
                    .name(format!("crowd-{k}"))
                    .spawn_scoped(s, move || serve(stage, first_frame, signal))
                    .map_err(|e| format!("cannot start thread {} of {threads}: {e}", k + 1))?;
                stop.1.push(worker.thread().clone());
            }
            let mut team = Team {
                stage,
                scratch: Scratch::new(character.skeleton),
                frame: first_frame,
                frames: 0,
                workers: stop.1.clone(),
                signal,
            };
            let r = drive(&mut team);
            Ok((r, team.frame))
        });
        let (r, frame) = result?;
        self.frame = frame;
        Ok(r)
    }

    /// Runs `frames` frames on `threads` threads ([`KitCrowd::on_threads`]), as
    /// `sinew bench --threads` does, untimed.
    ///
    /// # Errors
    ///
    /// The first job error, or a message when a thread cannot be started.
    pub fn run_frames(&mut self, frames: usize, threads: usize) -> Result<(), String> {
        self.on_threads(threads, |team| (0..frames).try_for_each(|_| team.frame()))?.map_err(|e| e.to_string())
    }
}

/// What every thread of a crowd frame reads: the characters' shared data and the sizes of a
/// character's slots.
#[derive(Clone, Copy)]
struct Stage<'c, 'a> {
    character: &'c Character<'a>,
    duration: f32,
    /// SoA joints of a pose (a character has twice as many caches).
    soa: usize,
    /// Matrices of a character's palette slot.
    slot: usize,
}

/// Characters of a run, the share of a frame a thread takes at a time.
const CHUNK: usize = 16;

/// How the caller's thread and the other threads of [`KitCrowd::on_threads`] talk.
struct Signal<'r> {
    /// The characters, in runs of [`CHUNK`] consecutive characters.
    runs: Vec<Mutex<Run<'r>>>,
    /// The next run to take in this frame.
    next: AtomicUsize,
    /// The frame the threads are to run (they run it when it differs from their last one).
    go: AtomicU32,
    /// Frames the other threads have finished, all threads together.
    done: AtomicUsize,
    /// Set when the caller is done: the threads return.
    stop: AtomicBool,
    /// The first error of the other threads.
    error: Mutex<Option<JobError>>,
    /// The caller's thread, woken when a thread finishes a frame.
    caller: std::thread::Thread,
}

/// Sets its flag and wakes its threads when dropped.
struct StopOnDrop<'s>(&'s AtomicBool, Vec<std::thread::Thread>);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
        self.1.iter().for_each(std::thread::Thread::unpark);
    }
}

/// How long a waiting thread spins before it parks: longer than the usual wait between a
/// thread's end of a frame and the next frame's start, so that on a machine with a core for
/// each thread a frame wakes no thread, and short enough that a thread waiting on a busy
/// machine soon gives its core away.
const SPIN: std::time::Duration = std::time::Duration::from_micros(200);

/// Waits until `ready` holds: spinning for [`SPIN`], then parked (whoever makes `ready` hold
/// unparks the thread).
fn wait_until(mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    let mut spins = 0u32;
    while !ready() {
        spins = spins.wrapping_add(1);
        if !spins.is_multiple_of(64) || start.elapsed() < SPIN {
            std::hint::spin_loop();
        } else {
            std::thread::park();
        }
    }
}

/// The threads of [`KitCrowd::on_threads`], seen from the caller's thread.
pub struct Team<'t> {
    stage: Stage<'t, 't>,
    scratch: Scratch,
    frame: u32,
    frames: usize,
    /// The other threads, unparked at the start of each frame.
    workers: Vec<std::thread::Thread>,
    signal: &'t Signal<'t>,
}

impl Team<'_> {
    /// Frames run by this team so far.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Runs one frame of every character and returns when all threads have finished it.
    ///
    /// # Errors
    ///
    /// The first job error of this frame (the other threads' errors show at the frame after
    /// theirs at the latest).
    pub fn frame(&mut self) -> Result<(), JobError> {
        self.frame = self.frame.wrapping_add(1);
        self.frames += 1;
        // The other threads have finished the last frame: none takes a run until `go` moves.
        self.signal.next.store(0, Ordering::Relaxed);
        self.signal.go.store(self.frame, Ordering::Release);
        self.workers.iter().for_each(std::thread::Thread::unpark);
        let mut error = None;
        take_runs(self.signal, self.stage, self.frame, &mut self.scratch, &mut error);
        let expected = self.workers.len() * self.frames;
        wait_until(|| self.signal.done.load(Ordering::Acquire) == expected);
        if let Some(e) = error {
            return Err(e);
        }
        match self.signal.error.lock() {
            Ok(mut e) => e.take().map_or(Ok(()), Err),
            Err(_) => Err(JobError::InputTooSmall),
        }
    }
}

/// A run of the crowd's characters, taken by one thread in a frame: consecutive characters
/// from `first`.
struct Run<'r> {
    first: usize,
    caches: &'r mut [SoaTrackCache<f32>],
    palettes: &'r mut [Mat4<f32>],
    times: &'r mut [f32],
}

impl Run<'_> {
    /// Updates the run's characters for frame `frame`, keeping the first error in `error`.
    fn update(&mut self, stage: Stage<'_, '_>, frame: u32, scratch: &mut Scratch, error: &mut Option<JobError>) {
        let Stage { character, duration, soa, slot } = stage;
        let wrap = |t: f32| if t >= duration { t - duration } else { t };
        let per = self.caches.chunks_exact_mut(2 * soa).zip(self.palettes.chunks_exact_mut(slot));
        for (k, ((cache, palette), t)) in per.zip(self.times.iter_mut()).enumerate() {
            let i = self.first + k;
            *t = wrap(*t + 1.0 / 60.0);
            let times = (character.clip.start() + *t, character.clip.start() + wrap(*t + 0.5 * duration));
            let w = 0.25 + 0.5 * ((frame.wrapping_add(i as u32) & 63) as f32 / 63.0);
            let np = character.inverse_bind.len();
            if let Err(e) = character.update(times, w, cache, &mut palette[..np], scratch) {
                error.get_or_insert(e);
            }
        }
    }
}

/// Updates runs of characters for frame `frame`, taking the next run not yet taken until
/// none is left, keeping the first error in `error`.
fn take_runs(
    signal: &Signal<'_>,
    stage: Stage<'_, '_>,
    frame: u32,
    scratch: &mut Scratch,
    error: &mut Option<JobError>,
) {
    while let Some(run) = signal.runs.get(signal.next.fetch_add(1, Ordering::Relaxed)) {
        // A run's lock is poisoned only by a panic, which ends the scope.
        if let Ok(mut run) = run.lock() {
            run.update(stage, frame, scratch, error);
            black_box(&run.palettes);
        }
    }
}

/// A thread's loop in [`KitCrowd::on_threads`]: runs its share of each frame `signal` asks
/// for after `frame`, until it says stop.
fn serve(stage: Stage<'_, '_>, mut frame: u32, signal: &Signal<'_>) {
    let mut scratch = Scratch::new(stage.character.skeleton);
    loop {
        let mut next = frame;
        wait_until(|| {
            next = signal.go.load(Ordering::Acquire);
            next != frame || signal.stop.load(Ordering::Acquire)
        });
        if next == frame {
            return;
        }
        frame = next;
        let mut error = None;
        take_runs(signal, stage, frame, &mut scratch, &mut error);
        if let Some(e) = error {
            if let Ok(mut first) = signal.error.lock() {
                first.get_or_insert(e);
            }
        }
        signal.done.fetch_add(1, Ordering::AcqRel);
        signal.caller.unpark();
    }
}

/// Runs `f`: a frame of the crowd after the first, whose caches are already filled. Not
/// inlined, so that a profiler can count these frames alone
/// (`valgrind --tool=callgrind --toggle-collect='*bench::steady*'`).
#[inline(never)]
fn steady<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// What the characters of the kit's crowd share: the clip, the skeleton and the palette's
/// joints and inverse bind matrices.
struct Character<'a> {
    clip: sinew::clip::Clip<'a>,
    skeleton: sinew::skeleton::SkeletonView<'a, f32>,
    palette_joints: Vec<u16>,
    inverse_bind: Vec<Mat4<f32>>,
}

impl Character<'_> {
    /// One character's frame of the kit's crowd: samples the clip at `times` with the two
    /// halves of `caches`, blends the poses with `w` and `1 − w`, runs local-to-model and writes
    /// `palette`. Not inlined, so that a profiler sees one call per character.
    #[inline(never)]
    fn update(
        &self,
        times: (f32, f32),
        w: f32,
        caches: &mut [SoaTrackCache<f32>],
        palette: &mut [Mat4<f32>],
        s: &mut Scratch,
    ) -> Result<(), sinew::job::JobError> {
        let rest = self.skeleton.rest_pose();
        let rotation = RotationInterpolation::NlerpCorrected;
        let (cache_a, cache_b) = caches.split_at_mut(caches.len() / 2);
        let clip = self.clip;
        SamplingJob { clip, time: times.0, rotation, rest_pose: rest, cursor: cache_a, output: &mut s.pose_a }.run()?;
        SamplingJob { clip, time: times.1, rotation, rest_pose: rest, cursor: cache_b, output: &mut s.pose_b }.run()?;
        let layers = [
            Layer { transform: &s.pose_a, weight: w, joint_weights: None },
            Layer { transform: &s.pose_b, weight: 1.0 - w, joint_weights: None },
        ];
        BlendingJob { layers: &layers, additive: &[], rest_pose: rest, threshold: 0.1, output: &mut s.blended }
            .run()?;
        LocalToModelJob {
            skeleton: self.skeleton,
            root: None,
            input: &s.blended,
            output: &mut s.world,
            from: None,
            to: None,
        }
        .run()?;
        SkinMatrixJob {
            model: &s.world,
            inverse_bind: &self.inverse_bind,
            joints: Some(&self.palette_joints),
            output: palette,
        }
        .run()
    }
}

/// The working memory of one character update, reused for every character a thread updates:
/// the two sampled poses, their blend and the model matrices.
#[derive(Clone)]
struct Scratch {
    pose_a: Vec<SoaTransform<f32>>,
    pose_b: Vec<SoaTransform<f32>>,
    blended: Vec<SoaTransform<f32>>,
    world: Vec<Mat4<f32>>,
}

impl Scratch {
    /// Working memory for `skeleton`'s characters.
    fn new(skeleton: SkeletonView<'_, f32>) -> Self {
        let soa = skeleton.num_soa_joints();
        Scratch {
            pose_a: vec![SoaTransform::IDENTITY; soa],
            pose_b: vec![SoaTransform::IDENTITY; soa],
            blended: vec![SoaTransform::IDENTITY; soa],
            world: vec![Mat4::IDENTITY; skeleton.num_joints()],
        }
    }
}

/// Result of the crowd benchmark.
#[derive(Debug, Clone, Copy)]
pub struct CrowdReport {
    /// Characters updated per frame.
    pub characters: usize,
    /// Worker threads (1: single core).
    pub threads: usize,
    /// Median time of one frame (all characters), milliseconds.
    pub ms_per_frame: f64,
    /// Characters that fit in a 16.6 ms frame at this rate.
    pub per_60hz_frame: f64,
}

/// Updates `n` characters per frame — each samples two clips at its own time offset, blends
/// them, runs local-to-model and builds its skin palette — on one thread and (with the
/// `threads` feature) on a `rayon` pool.
/// What persists per character (its sampling caches) and its output (the palette) sit in two
/// arrays, character after character; the poses and model matrices of an update are working
/// memory shared by the characters a thread updates.
///
/// # Errors
///
/// A message when the model has no clip or a job fails.
pub fn crowd(model: &Model, n: usize) -> Result<Vec<CrowdReport>, String> {
    let asset = model.asset();
    let a = asset.clip(0).ok_or("the model has no clip")?;
    let b = asset.clip(1).unwrap_or(a);
    let skel = model.skeleton();
    let soa = skel.num_soa_joints();
    let (joints, ib) = model.skin_bind(0).unwrap_or((&[], &[]));
    // What persists per character, in two arrays (the characters one after another): the two
    // clips' sampling caches and the palette. A character's time offset is its index × 0.618.
    let per_caches = 2 * soa.max(1);
    let per_palette = ib.len().max(1);
    let mut caches = vec![SoaTrackCache::<f32>::EMPTY; n * per_caches];
    let mut palettes = vec![Mat4::<f32>::IDENTITY; n * per_palette];
    let scratch = Scratch::new(skel);
    let update = |i: usize,
                  caches: &mut [SoaTrackCache<f32>],
                  palette: &mut [Mat4<f32>],
                  w: &mut Scratch,
                  t: f32|
     -> Result<(), sinew::job::JobError> {
        let offset = i as f32 * 0.618_034;
        let wrap = |clip: &sinew::clip::Clip<'_>| clip.start() + (offset + t) % (clip.end() - clip.start()).max(1e-6);
        let (cache_a, cache_b) = caches.split_at_mut(caches.len() / 2);
        let rot = RotationInterpolation::NlerpCorrected;
        let rest = skel.rest_pose();
        let (ta, tb) = (wrap(&a), wrap(&b));
        SamplingJob { clip: a, time: ta, rotation: rot, rest_pose: rest, cursor: cache_a, output: &mut w.pose_a }
            .run()?;
        SamplingJob { clip: b, time: tb, rotation: rot, rest_pose: rest, cursor: cache_b, output: &mut w.pose_b }
            .run()?;
        let layers = [
            Layer { transform: &w.pose_a, weight: 0.6, joint_weights: None },
            Layer { transform: &w.pose_b, weight: 0.4, joint_weights: None },
        ];
        BlendingJob { layers: &layers, additive: &[], rest_pose: rest, threshold: 0.1, output: &mut w.blended }
            .run()?;
        LocalToModelJob { skeleton: skel, root: None, input: &w.blended, output: &mut w.world, from: None, to: None }
            .run()?;
        SkinMatrixJob { model: &w.world, inverse_bind: ib, joints: Some(joints), output: palette }.run()
    };
    let mut reports = Vec::new();
    let mut err = None;
    let mut t = 0.0f32;
    let mut one = scratch.clone();
    let (med, _, _) = time_it(|| {
        t += 1.0 / 60.0;
        for (i, (c, p)) in caches.chunks_exact_mut(per_caches).zip(palettes.chunks_exact_mut(per_palette)).enumerate() {
            if let Err(e) = update(i, c, p, &mut one, t) {
                err = Some(e);
            }
        }
        black_box(&palettes);
    });
    let ms = med / 1e6;
    reports.push(CrowdReport { characters: n, threads: 1, ms_per_frame: ms, per_60hz_frame: n as f64 * 16.6 / ms });
    #[cfg(feature = "threads")]
    {
        use rayon::prelude::*;
        let threads = rayon::current_num_threads();
        let (med, _, _) = time_it(|| {
            t += 1.0 / 60.0;
            // One scratch per rayon work item (reused for every character of the item).
            let bad = caches
                .par_chunks_mut(per_caches)
                .zip(palettes.par_chunks_mut(per_palette))
                .enumerate()
                .map_init(|| scratch.clone(), |w, (i, (c, p))| update(i, c, p, w, t).is_err())
                .any(|bad| bad);
            if bad {
                err = Some(sinew::job::JobError::InputTooSmall);
            }
            black_box(&palettes);
        });
        let ms = med / 1e6;
        reports.push(CrowdReport { characters: n, threads, ms_per_frame: ms, per_60hz_frame: n as f64 * 16.6 / ms });
    }
    match err {
        Some(e) => Err(e.to_string()),
        None => Ok(reports),
    }
}

/// Frames of one timed call of [`batch_crowd`]: the staggered levels of detail's whole cycle
/// (level 3 updates every 8th frame), so each call does the same work.
pub const LOD_CYCLE: usize = 8;

/// How [`batch_crowd`] times: a warm-up of `warm_s` seconds, then `reps` runs of about `rep_s`
/// seconds each ([`time_runs`]), each call being [`LOD_CYCLE`] frames.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchTiming {
    /// Seconds of warm-up, which also sets the calls per run.
    pub warm_s: f64,
    /// Seconds of one timed run.
    pub rep_s: f64,
    /// Timed runs; the median is reported.
    pub reps: usize,
}

impl BatchTiming {
    /// What [`time_it`] does: 0.2 s of warm-up, 7 runs of 0.2 s.
    pub const DEFAULT: BatchTiming = BatchTiming { warm_s: 0.2, rep_s: 0.2, reps: 7 };
}

/// The camera [`batch_crowd`] sets the levels of detail from: the desktop viewer's framing of
/// one model ([`sinew_host::camera::Camera::framing`]: 40° vertical field of view, turned 0.35
/// rad about the up axis, raised 0.3 rad, `1.1 / sin 20°` bounding radii from its target)
/// aimed at the instance in the middle of the grid's front row, the rest of the crowd
/// receding behind it, in a viewport `height` pixels tall.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchView {
    /// The eye, world space (the placements' frame).
    pub eye: Vec3<f32>,
    /// Pixels per unit at unit distance: `height / 2 / tan 20°`.
    pub focal: f32,
    /// The viewport's height in pixels.
    pub height: u32,
    /// The eye's distance to the instance it looks at, in the model's bounding radii.
    pub radii: f32,
    /// Instances at each level of detail, 0 to 3.
    pub lods: [usize; 4],
}

/// One configuration of [`batch_crowd`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchCrowdReport {
    /// Instances.
    pub instances: usize,
    /// Pose sharing and levels of detail on (from [`BatchView`]), or every instance evaluated
    /// every frame into its own slot.
    pub lod: bool,
    /// Threads a frame's evaluation runs on.
    pub threads: usize,
    /// Median time of one frame, milliseconds: planning, evaluation into the palette texture's
    /// texels, the rows to upload and the per-instance rows.
    pub ms_per_frame: f64,
    /// Poses evaluated per frame, the mean over every frame run.
    pub evaluated: f64,
    /// Instances updated from another's pose or their own slot, per frame.
    pub shared: f64,
    /// Instances keeping their last palette (level of detail), per frame.
    pub held: f64,
    /// Frames the means are over.
    pub frames: usize,
}

/// Runs a frame's crowd jobs: the first on the caller's thread, the others on scoped threads.
fn run_crowd_jobs(jobs: Vec<sinew_host::crowd::CrowdJob<'_>>) -> Result<(), sinew::crowd::CrowdError> {
    let mut jobs = jobs.into_iter();
    let first = jobs.next();
    std::thread::scope(|s| {
        let others: Vec<_> = jobs.map(|j| s.spawn(move || j.run())).collect();
        let mine = first.map_or(Ok(()), sinew_host::crowd::CrowdJob::run);
        others.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).fold(mine, Result::and)
    })
}

/// Sets `crowd`'s levels of detail from [`BatchView`]'s camera for a viewport `height` pixels
/// tall; `z_up`: the placements' ground is the XY plane.
fn view_crowd(crowd: &mut sinew_host::crowd::Crowd, z_up: bool, height: u32) -> BatchView {
    use sinew_host::camera::Camera;
    let model = std::rc::Rc::clone(crowd.model());
    // The framing's offset in a Y-up world, and the same offset where +Z is up (the Y-up
    // turn of a Z-up model maps its (x, y, z) to (x, z, −y)).
    let cam = Camera::framing(Vec3::ZERO, model.bounds.radius);
    let y_up = cam.eye() - cam.target;
    let (offset, front) = if z_up { (Vec3::new(y_up.x, -y_up.z, y_up.y), -Vec3::Y) } else { (y_up, Vec3::Z) };
    // The grid's front row faces the eye; its instance nearest the middle is looked at.
    let at = |m: &Mat4<f32>| m.translation();
    let edge = crowd.placements().iter().map(|m| at(m).dot(front)).fold(f32::NEG_INFINITY, f32::max);
    let middle = front * edge;
    let target = crowd
        .placements()
        .iter()
        .map(at)
        .min_by(|a, b| (*a - middle).length().total_cmp(&(*b - middle).length()))
        .unwrap_or(Vec3::ZERO);
    let eye = target + model.bounds.center + offset;
    let (sin_half, cos_half) = sinew::math::ops::sin_cos(Camera::FRAMING_FOV_Y * 0.5);
    let focal = height as f32 * 0.5 * cos_half / sin_half;
    crowd.set_camera(eye, focal);
    let mut lods = [0usize; 4];
    for x in crowd.instances() {
        if let Some(n) = lods.get_mut(usize::from(x.lod)) {
            *n += 1;
        }
    }
    BatchView { eye, focal, height, radii: Camera::FRAMING_DISTANCE_PER_RADIUS, lods }
}

/// Times the batch crowd of the host layer ([`sinew_host::crowd::Crowd`], on the core's
/// `sinew::crowd`) of `n` instances of `model` (its first skin, every clip; `z_up`: the model
/// stands on the XY plane), one frame being 1/60 s: planning (pose sharing, levels of detail),
/// evaluating the frame's poses into the palette texture's texels, and building what the GPU
/// takes (the texture rows to upload and the per-instance rows). Each configuration runs on
/// one thread and on `threads` threads (the frame's jobs on the caller's thread and scoped
/// threads started each frame, as the desktop viewer runs them). Without `lod` every instance
/// is evaluated every frame into its own slot; with it, pose sharing is on and the levels of
/// detail come from [`BatchView`]'s camera in a viewport `height` pixels tall.
///
/// # Errors
///
/// A message when the host layer cannot open the model or the crowd refuses it (no skin, no
/// clip) or a frame fails.
pub fn batch_crowd(
    model: &Model,
    n: usize,
    lod: bool,
    z_up: bool,
    height: u32,
    threads: usize,
    timing: BatchTiming,
) -> Result<(Option<BatchView>, Vec<BatchCrowdReport>), String> {
    use sinew_host::crowd::{Crowd, CrowdSettings};
    let host = sinew_host::Model::open::<{ sinew::limits::MAX_SOA_JOINTS }>(model.bytes().into(), None)
        .map_err(|e| e.to_string())?;
    let host = std::rc::Rc::new(host);
    let settings = CrowdSettings { lod, z_up, ..CrowdSettings::new(n.max(1)) };
    let mut reports = Vec::new();
    let mut view = None;
    let mut counts = vec![1, threads.max(1)];
    counts.dedup();
    for threads in counts {
        let mut crowd = Crowd::new(std::rc::Rc::clone(&host), settings).map_err(|e| e.to_string())?;
        if lod {
            view = Some(view_crowd(&mut crowd, z_up, height));
        }
        let mut rows = Vec::new();
        let (mut sums, mut frames) = ([0usize; 3], 0usize);
        let mut err = None;
        let (med, _, _) = time_runs(
            || {
                for _ in 0..LOD_CYCLE {
                    match crowd.frame_with(1.0 / 60.0, threads, run_crowd_jobs) {
                        Ok(s) => {
                            sums[0] += s.evaluated;
                            sums[1] += s.shared;
                            sums[2] += s.held;
                            frames += 1;
                        }
                        Err(e) => {
                            err.get_or_insert(e);
                        }
                    }
                    black_box(crowd.written_rows());
                    rows.clear();
                    crowd.instance_rows(&mut rows);
                    black_box(&rows);
                }
            },
            timing.warm_s,
            timing.rep_s,
            timing.reps,
        );
        if let Some(e) = err {
            return Err(e.to_string());
        }
        black_box(crowd.palette());
        let mean = |s: usize| s as f64 / frames.max(1) as f64;
        reports.push(BatchCrowdReport {
            instances: crowd.len(),
            lod,
            threads,
            ms_per_frame: med / 1e6 / LOD_CYCLE as f64,
            evaluated: mean(sums[0]),
            shared: mean(sums[1]),
            held: mean(sums[2]),
            frames,
        });
    }
    Ok((view, reports))
}
