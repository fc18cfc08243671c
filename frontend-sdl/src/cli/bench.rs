//! `sinew bench`: the runtime stages timed on a model's baked data, a crowd's frame time, or
//! (`--compression`) the compression table of the shared models.

use std::path::Path;

use sinew_offline::bake::BakeOptions;
use sinew_offline::bench::{BatchCrowdReport, BatchTiming};
use sinew_offline::model::Model;

use super::args::{BenchArgs, ShellArg};
use super::output::{fail, Failure, Out};

/// `sinew bench`: one line per stage (or per crowd run) on standard output, the clip and the
/// repetitions' spread on standard error.
pub fn run(args: BenchArgs) -> Result<(), Failure> {
    let BenchArgs { model: path, compression, tolerance, shell, markdown, clip, anim, crowd, lod, threads } = args;
    let Some(path) = path else {
        let assets = compression.unwrap_or_default();
        return bench_compression(&assets, tolerance, shell, markdown, &mut Out::new());
    };
    let model = Model::load(&path, anim.as_deref(), &BakeOptions::default()).map_err(|e| fail(&path, e))?;
    let mut out = Out::new();
    if let Some(n) = crowd {
        for r in sinew_offline::bench::crowd(&model, n.max(1)).map_err(|e| fail(&path, e))? {
            out.line(format_args!(
                "crowd {} characters, {} thread(s): {:.3} ms per frame, {:.0} characters per 16.6 ms frame",
                r.characters, r.threads, r.ms_per_frame, r.per_60hz_frame
            ))?;
        }
        let z_up = path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("md5mesh"));
        for l in batch_lines(&model, n.max(1), lod, z_up, BatchTiming::DEFAULT).map_err(|e| fail(&path, e))? {
            out.line(format_args!("{l}"))?;
        }
        return Ok(());
    }
    let clip = match clip {
        Some(key) => model.find_clip(&key).ok_or_else(|| fail(&path, format!("no clip named or numbered '{key}'")))?,
        None => 0,
    };
    if let Some(c) = model.asset().clip(clip) {
        eprintln!(
            "clip '{}': {} tracks, {} baked keys ({} bytes); kernels: {}",
            c.name(),
            c.num_tracks(),
            c.num_keys(),
            c.byte_len(),
            kernels_name(sinew::kernels::active())
        );
    }
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("model").to_string();
    for m in sinew_offline::bench::run(&model, clip, usize::from(threads)).map_err(|e| fail(&path, e))? {
        out.line(format_args!("sinew {} {} {:.3} {}", m.stage, stem, m.ns_per_unit, m.count))?;
        eprintln!("  {}: {:.1}..{:.1} ns per call over 7 repetitions", m.stage, m.min_max.0, m.min_max.1);
    }
    Ok(())
}

/// The batch crowd's lines of `sinew bench --crowd N [--lod]`
/// ([`sinew_offline::bench::batch_crowd`]): every instance evaluated every frame on one thread
/// and on every core; with `lod`, the camera the levels of detail come from, then the crowd
/// with pose sharing and levels of detail on, likewise. `z_up`: the model stands on the XY
/// plane.
fn batch_lines(model: &Model, n: usize, lod: bool, z_up: bool, timing: BatchTiming) -> Result<Vec<String>, String> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let height = sinew_frontend::DEFAULT_HEIGHT;
    let (_, off) = sinew_offline::bench::batch_crowd(model, n, false, z_up, height, threads, timing)?;
    let mut lines: Vec<String> = off.iter().map(batch_line).collect();
    if lod {
        let (view, on) = sinew_offline::bench::batch_crowd(model, n, true, z_up, height, threads, timing)?;
        if let Some(v) = view {
            let [l0, l1, l2, l3] = v.lods;
            lines.push(format!(
                "crowd-batch camera: the viewer's framing of one model (40 deg field of view, {:.2} bounding \
                 radii away, turned 0.35 rad, raised 0.3 rad, {} px tall viewport) on the grid's front-row middle \
                 instance, eye at ({:.3}, {:.3}, {:.3}); levels of detail 0/1/2/3: {l0}/{l1}/{l2}/{l3} instances",
                v.radii, v.height, v.eye.x, v.eye.y, v.eye.z
            ));
        }
        lines.extend(on.iter().map(batch_line));
    }
    Ok(lines)
}

/// One batch crowd line: `crowd-batch N instances, lod on|off, T thread(s): X ms per frame
/// (evaluated E, shared S, held H per frame)`.
fn batch_line(r: &BatchCrowdReport) -> String {
    format!(
        "crowd-batch {} instances, lod {}, {} thread(s): {:.3} ms per frame (evaluated {}, shared {}, held {} per frame)",
        r.instances,
        if r.lod { "on" } else { "off" },
        r.threads,
        r.ms_per_frame,
        count(r.evaluated),
        count(r.shared),
        count(r.held)
    )
}

/// A mean count per frame: whole numbers without decimals, others with one.
fn count(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// How `bench` names the kernels the jobs run.
fn kernels_name(k: sinew::kernels::Kernels) -> &'static str {
    match k {
        sinew::kernels::Kernels::Build => "the build's own (no run-time dispatch)",
        sinew::kernels::Kernels::X86_64V3 => "x86-64-v3 (AVX2, FMA), chosen at run time",
    }
}

/// `sinew bench --compression`: the table of `sinew_offline::compression` on the shared
/// models under `assets` (`markdown`: the documentation's form of it).
fn bench_compression(
    assets: &Path,
    tolerance: f64,
    shell: ShellArg,
    markdown: bool,
    out: &mut Out,
) -> Result<(), Failure> {
    let opts = shell.bake_options(tolerance)?;
    let rows = sinew_offline::compression::run_shared(assets, &opts, |row| {
        eprintln!("{} '{}': {} bytes in {:.0} ms", row.model, row.clip, row.sinew_bytes, row.bake_ms);
    })
    .map_err(|(path, e)| fail(&path, e))?;
    let table = match (markdown, opts.shell_from_mesh) {
        (true, true) => sinew_offline::compression::markdown_mesh(&rows),
        (true, false) => sinew_offline::compression::markdown(&rows),
        (false, _) => sinew_offline::compression::table(&rows),
    };
    for l in table.lines() {
        out.line(format_args!("{l}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The (threads, lod, evaluated, shared, held) of a `crowd-batch N instances` line.
    fn parse(line: &str) -> (usize, bool, f64, f64, f64) {
        let words: Vec<&str> = line.split([' ', ',', ':', '(', ')']).filter(|w| !w.is_empty()).collect();
        let after = |w: &str| words.iter().position(|x| *x == w).map(|i| words[i + 1]).unwrap_or("?");
        let num = |w: &str| after(w).parse::<f64>().unwrap_or_else(|_| panic!("{w} in {line}"));
        let threads = words.iter().position(|x| *x == "thread").map(|i| words[i - 1]).unwrap_or("?");
        (
            threads.parse().unwrap_or_else(|_| panic!("{line}")),
            after("lod") == "on",
            num("evaluated"),
            num("shared"),
            num("held"),
        )
    }

    #[test]
    fn crowd_lod_lines_account_for_every_instance() {
        let path = sinew_assets::path("gltf/Fox/Fox.glb");
        let model = Model::load(&path, None, &BakeOptions::default()).unwrap();
        let once = BatchTiming { warm_s: 0.0, rep_s: 0.0, reps: 1 };
        let lines = batch_lines(&model, 200, true, false, once).unwrap();
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let runs: Vec<_> =
            lines.iter().filter(|l| l.starts_with("crowd-batch 200 instances, lod ")).map(|l| parse(l)).collect();
        let threads: Vec<usize> = if cores > 1 { vec![1, cores] } else { vec![1] };
        let expect: Vec<(usize, bool)> =
            [false, true].iter().flat_map(|&lod| threads.iter().map(move |&t| (t, lod))).collect();
        assert_eq!(runs.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>(), expect, "{lines:#?}");
        for (_, lod, evaluated, shared, held) in runs {
            // The counts are printed with one decimal at most.
            assert!((evaluated + shared + held - 200.0).abs() <= 0.15, "{lines:#?}");
            if !lod {
                assert_eq!((evaluated, shared, held), (200.0, 0.0, 0.0), "{lines:#?}");
            }
        }
        let camera = lines.iter().filter(|l| l.starts_with("crowd-batch camera: ")).count();
        assert_eq!(camera, 1, "{lines:#?}");
        // Without --lod: the lines of every instance evaluated every frame only.
        let plain = batch_lines(&model, 200, false, false, once).unwrap();
        assert!(plain.len() == threads.len() && plain.iter().all(|l| l.contains(" lod off, ")), "{plain:#?}");
    }
}
