//! The compression benchmark (`sinew bench --compression`): every animated clip of the shared
//! models baked alone, with its raw and baked sizes, the ACL v2.1 reference sizes recorded in
//! issue 17, its errors measured independently ([`crate::clip_error`]), its bake time and its
//! sampling speed.
//!
//! Each clip is baked from a copy of its model that keeps the skeleton, the skins and that clip
//! only (no meshes, textures or morph weights), so the bake time is the clip's encoding, at the
//! shells of the full model ([`crate::shells::shells`]: from its meshes with
//! `BakeOptions::shell_from_mesh`, else `BakeOptions::shell` for every joint, ACL's
//! convention); the errors are measured against the full model, its meshes included, at the
//! same shells.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use sinew::clip::SoaTrackCache;
use sinew::math::SoaTransform;

use crate::bake::{bake_at_shells, BakeOptions};
use crate::bench::sample_next_frame;
use crate::clip_error::measure_clips;
use crate::model::Model;
use crate::rig::{Rig, RigClip};

/// A size and error ACL v2.1.0 gave at its default settings (variable bit rate, drop-w
/// rotations), as recorded in issue 17 with the same raw-size definition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AclReference {
    /// Compressed bytes.
    pub bytes: usize,
    /// Its largest error at the 3 cm shell, meters.
    pub error: f64,
}

/// ACL v2.1 default figures per (model stem, clip name; `None`: the model's only clip),
/// recorded in issue 17 (not measured by this benchmark).
pub const ACL_V21_DEFAULT: [(&str, Option<&str>, AclReference); 7] = [
    ("pab_crossarms", None, AclReference { bytes: 40_808, error: 2.4e-4 }),
    ("CesiumMan", None, AclReference { bytes: 4_920, error: 1.5e-4 }),
    ("Fox", Some("Survey"), AclReference { bytes: 9_667, error: 1.3e-4 }),
    ("Fox", Some("Walk"), AclReference { bytes: 3_338, error: 1.1e-2 }),
    ("BrainStem", None, AclReference { bytes: 89_781, error: 2.3e-4 }),
    ("RiggedFigure", None, AclReference { bytes: 654, error: 1.4e-5 }),
    ("boblampclean", None, AclReference { bytes: 14_002, error: 5.8e-4 }),
];

/// One row of the benchmark.
#[derive(Debug, Clone)]
pub struct Row {
    /// Model file stem.
    pub model: String,
    /// Clip name.
    pub clip: String,
    /// 10 `f32` per animated joint per distinct source key time.
    pub raw_bytes: usize,
    /// The clip section's bytes.
    pub sinew_bytes: usize,
    /// ACL's recorded figures, where the issue has them.
    pub acl: Option<AclReference>,
    /// Largest shell error, measured independently, meters.
    pub shell_error: f64,
    /// The error the baker reported for itself, meters.
    pub baker_error: f64,
    /// The bound, meters.
    pub bound: f64,
    /// The shells came from the model's meshes (false: `BakeOptions::shell` for every joint).
    pub shell_from_mesh: bool,
    /// The largest joint's shell distance, meters.
    pub shell: f64,
    /// Largest error on the model's mesh vertices, meters (`None`: no mesh).
    pub vertex_error: Option<f64>,
    /// Bake time of the clip, milliseconds.
    pub bake_ms: f64,
    /// Sampling time per joint, nanoseconds (median of 5 short repetitions, t advancing by
    /// 1/60 s per call).
    pub sample_ns_per_joint: f64,
}

/// The shared models with animation, relative to the shared assets directory: (model, md5
/// animation).
#[must_use]
pub fn shared_models(assets: &Path) -> Vec<(PathBuf, Option<PathBuf>)> {
    let gltf = [
        "ozz/pab_crossarms.glb",
        "gltf/CesiumMan/CesiumMan.glb",
        "gltf/Fox/Fox.glb",
        "gltf/BrainStem/BrainStem.glb",
        "gltf/RiggedFigure/RiggedFigure.glb",
        "gltf/RiggedSimple/RiggedSimple.glb",
        "gltf/SimpleSkin/SimpleSkin.gltf",
        "gltf/BoxAnimated/BoxAnimated.glb",
        "gltf/InterpolationTest/InterpolationTest.glb",
        "gltf/RecursiveSkeletons/RecursiveSkeletons.glb",
    ];
    let mut out: Vec<(PathBuf, Option<PathBuf>)> = gltf.iter().map(|p| (assets.join(p), None)).collect();
    let bob = assets.join("md5/boblamp");
    out.push((bob.join("boblampclean.md5mesh"), Some(bob.join("boblampclean.md5anim"))));
    out
}

/// The ACL reference of clip `clip` of model `model` (stem), if recorded.
#[must_use]
pub fn acl_reference(model: &str, clip: &str, clips: usize) -> Option<AclReference> {
    ACL_V21_DEFAULT.iter().find(|(m, c, _)| *m == model && c.map_or(clips == 1, |c| c == clip)).map(|(_, _, r)| *r)
}

/// Benchmarks every clip with joint channels of `rig` (stem `model`) baked with `opts`.
///
/// # Errors
///
/// A message when a bake, the measurement or sampling fails.
pub fn run_rig(model: &str, rig: &Rig, opts: &BakeOptions) -> Result<Vec<Row>, String> {
    let unit = crate::shells::meters_per_unit(rig);
    let shells = crate::shells::shells(rig, opts);
    let from_mesh = opts.shell_from_mesh;
    let shell = if from_mesh { shells.iter().copied().fold(0.0, f64::max) * unit } else { opts.shell };
    let mut rows = Vec::new();
    for clip in rig.clips.iter().filter(|c| !c.channels.is_empty()) {
        let one = RigClip { weights: Vec::new(), ..clip.clone() };
        let lean = Rig {
            meshes: Vec::new(),
            images: Vec::new(),
            materials: Vec::new(),
            clips: vec![one.clone()],
            ..rig.clone()
        };
        let started = Instant::now();
        let (bytes, report) =
            bake_at_shells(&lean, opts, &shells, from_mesh).map_err(|e| format!("{model} '{}': {e}", clip.name))?;
        let bake_ms = started.elapsed().as_secs_f64() * 1e3;
        let baked = Model::from_bytes(model, bytes).map_err(|e| format!("{model} '{}': {e}", clip.name))?;
        let full = Rig { clips: vec![one], ..rig.clone() };
        let measured = measure_clips(&full, &baked, &shells).map_err(|e| format!("{model} '{}': {e}", clip.name))?;
        let (Some(m), Some(r)) = (measured.first(), report.clips.first()) else { continue };
        rows.push(Row {
            model: model.to_owned(),
            clip: clip.name.clone(),
            raw_bytes: r.raw_bytes,
            sinew_bytes: r.baked_bytes,
            acl: acl_reference(model, &clip.name, rig.clips.len()),
            shell_error: m.shell_error,
            baker_error: r.max_error * unit,
            bound: opts.tolerance,
            shell_from_mesh: from_mesh,
            shell,
            vertex_error: m.vertex_error,
            bake_ms,
            sample_ns_per_joint: sample_ns_per_joint(&baked)?,
        });
    }
    Ok(rows)
}

/// Median time per joint of sampling clip 0 of `model`, the kit's way
/// ([`crate::bench::sample_next_frame`]): 5 repetitions of about 40 ms after a 20 ms warm-up.
fn sample_ns_per_joint(model: &Model) -> Result<f64, String> {
    let asset = model.asset();
    let c = asset.clip(0).ok_or("the baked file has no clip")?;
    let skel = model.skeleton();
    let joints = asset.skin(0).map(|s| s.num_joints()).unwrap_or(skel.num_joints()).max(1);
    let mut cache = vec![SoaTrackCache::<f32>::EMPTY; skel.num_soa_joints()];
    let mut pose = vec![SoaTransform::<f32>::IDENTITY; skel.num_soa_joints()];
    let mut t = 0.0f32;
    let mut failed = None;
    let step = || {
        if let Err(e) = sample_next_frame(c, skel, &mut t, &mut cache, &mut pose) {
            failed = Some(e);
        }
        black_box(&pose);
    };
    let (median, _, _) = crate::bench::time_runs(step, 0.02, 0.04, 5);
    if let Some(e) = failed {
        return Err(e.to_string());
    }
    Ok(median / joints as f64)
}

/// Every row of the benchmark on the shared models under `assets` ([`shared_models`]), baked
/// with `opts`, in [`shared_models`]' order; `progress` sees each row as it is measured. This
/// is what `sinew bench --compression ASSETS` runs.
///
/// # Errors
///
/// The model that failed to load, bake or measure, and the message.
pub fn run_shared(
    assets: &Path,
    opts: &BakeOptions,
    mut progress: impl FnMut(&Row),
) -> Result<Vec<Row>, (PathBuf, String)> {
    let mut rows = Vec::new();
    for (path, anim) in shared_models(assets) {
        let rig = crate::import::load(&path, anim.as_deref()).map_err(|e| (path.clone(), e.to_string()))?;
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
        let r = run_rig(stem, &rig, opts).map_err(|e| (path.clone(), e))?;
        r.iter().for_each(&mut progress);
        rows.extend(r);
    }
    Ok(rows)
}

/// The columns of [`markdown`] that are timings: they change from run to run, and the test of
/// the documentation's copy of the table ignores them.
pub const TIMING_COLUMNS: [&str; 2] = ["bake ms", "sample ns/joint"];

/// The rows as the Markdown table of the documentation (`sinew bench --compression ASSETS
/// --markdown`; `core/docs/compression.md`): sizes with thousands separators, the ACL
/// reference and ratio where recorded, errors in meters, then the [`TIMING_COLUMNS`]. The bound
/// is the same for every row and is not a column.
#[must_use]
pub fn markdown(rows: &[Row]) -> String {
    let mut s = String::from(
        "| model | clip | raw bytes | sinew bytes | ACL v2.1 default bytes (recorded) | sinew / ACL | shell error | baker's estimate | vertex error | bake ms | sample ns/joint |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let (acl, ratio) = match r.acl {
            Some(a) => (thousands(a.bytes), format!("{:.2}", r.sinew_bytes as f64 / a.bytes as f64)),
            None => ("-".to_owned(), "-".to_owned()),
        };
        let vertex = r.vertex_error.map_or("-".to_owned(), |v| format!("{v:.1e}"));
        s += &format!(
            "| {} | {} | {} | {} | {acl} | {ratio} | {:.1e} | {:.1e} | {vertex} | {:.0} | {:.1} |\n",
            r.model,
            r.clip,
            thousands(r.raw_bytes),
            thousands(r.sinew_bytes),
            r.shell_error,
            r.baker_error,
            r.bake_ms,
            r.sample_ns_per_joint
        );
    }
    s
}

/// The rows as the documentation's table of bakes with shells from the mesh (`sinew bench
/// --compression ASSETS --shell mesh --markdown`; `core/docs/compression.md`): sizes, the
/// largest shell (`fixed` where a model has no mesh vertices and keeps `BakeOptions::shell`),
/// errors in meters with three digits (they lie close under the bound), whether the vertex error is within the bound, then the
/// [`TIMING_COLUMNS`]. ACL's figures are left out: they are measured at a fixed 3 cm shell.
#[must_use]
pub fn markdown_mesh(rows: &[Row]) -> String {
    let mut s = String::from(
        "| model | clip | raw bytes | sinew bytes | largest shell (m) | shell error | baker's estimate | vertex error | vertex error within bound | bake ms | sample ns/joint |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|\n",
    );
    for r in rows {
        let shell = if r.shell_from_mesh { format!("{:.3}", r.shell) } else { format!("{} fixed", r.shell) };
        let (vertex, within) = match r.vertex_error {
            Some(v) => (format!("{v:.2e}"), if v <= r.bound { "yes" } else { "no" }),
            None => ("-".to_owned(), "-"),
        };
        s += &format!(
            "| {} | {} | {} | {} | {shell} | {:.2e} | {:.2e} | {vertex} | {within} | {:.0} | {:.1} |\n",
            r.model,
            r.clip,
            thousands(r.raw_bytes),
            thousands(r.sinew_bytes),
            r.shell_error,
            r.baker_error,
            r.bake_ms,
            r.sample_ns_per_joint
        );
    }
    s
}

/// `n` with a comma between groups of three digits, as the documentation's tables write sizes.
#[must_use]
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// The rows as a Markdown table, with the shells (from the mesh, up to the largest joint's,
/// or fixed) and the bound.
#[must_use]
pub fn table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| model | clip | raw bytes | sinew bytes | ACL v2.1 default bytes (recorded) | sinew / ACL | shell (m) | shell error (m) | baker's estimate (m) | bound (m) | vertex error (m) | bake ms | sample ns/joint |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let (acl, ratio) = match r.acl {
            Some(a) => (
                format!("{} (error {:.1e})", a.bytes, a.error),
                format!("{:.2}", r.sinew_bytes as f64 / a.bytes as f64),
            ),
            None => ("-".to_owned(), "-".to_owned()),
        };
        let vertex = r.vertex_error.map_or("-".to_owned(), |v| format!("{v:.1e}"));
        let shell =
            if r.shell_from_mesh { format!("mesh, up to {:.3}", r.shell) } else { format!("{} fixed", r.shell) };
        s += &format!(
            "| {} | {} | {} | {} | {acl} | {ratio} | {shell} | {:.1e} | {:.1e} | {:.0e} | {vertex} | {:.0} | {:.1} |\n",
            r.model,
            r.clip,
            r.raw_bytes,
            r.sinew_bytes,
            r.shell_error,
            r.baker_error,
            r.bound,
            r.bake_ms,
            r.sample_ns_per_joint
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn thousands_groups_digits_by_three() {
        let cases = [(0, "0"), (192, "192"), (1_520, "1,520"), (694_120, "694,120"), (1_234_567, "1,234,567")];
        for (n, want) in cases {
            assert_eq!(thousands(n), want);
        }
    }
}
