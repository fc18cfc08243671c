//! The independent clip-error measurement (`clip_error`) against the baker's own estimate, and
//! the per-joint shell from the mesh (`BakeOptions::shell_from_mesh`, the default) on a real
//! character.

use std::path::PathBuf;

use sinew_offline::bake::{bake, BakeOptions, BakeReport};
use sinew_offline::clip_error::{measure_clips, ClipError, MeasureError};
use sinew_offline::import;
use sinew_offline::model::Model;
use sinew_offline::rig::Rig;
use sinew_offline::shells::{shells, uniform_shells};

fn asset(rel: &str) -> PathBuf {
    sinew_assets::path(&format!("gltf/{rel}"))
}

/// The model without its materials and images (textures do not change clips; decoding them is slow in debug).
fn load(rel: &str) -> Rig {
    let mut rig = import::load(&asset(rel), None).unwrap_or_else(|e| panic!("{rel}: {e}"));
    rig.meshes.iter_mut().flat_map(|m| m.primitives.iter_mut()).for_each(|p| p.material = None);
    Rig { images: Vec::new(), materials: Vec::new(), ..rig }
}

fn bake_and_measure(rig: &Rig, opts: &BakeOptions) -> (BakeReport, Vec<ClipError>) {
    let (bytes, report) = bake(rig, opts).expect("bakes");
    let model = Model::from_bytes(&rig.name, bytes).expect("loads");
    let shells = shells(rig, opts);
    let errors = measure_clips(rig, &model, &shells).expect("measures");
    (report, errors)
}

/// The measurement and the baker's estimate sample the same times (key times and 0.2, 0.5, 0.8
/// of each interval) through different code (the model's sampling and local-to-model against
/// the baker's jobs on its own file) but may differ in the source times' rounding, so they
/// agree within a factor, not exactly.
const AGREEMENT: f64 = 2.0;

#[test]
fn independent_measurement_agrees_with_the_baker_and_meets_the_bound() {
    let rig = load("RiggedFigure/RiggedFigure.glb");
    for (tolerance, shell_from_mesh) in [(1.0e-4, false), (1.0e-2, false), (1.0e-4, true), (1.0e-2, true)] {
        let opts = BakeOptions { tolerance, shell_from_mesh, ..BakeOptions::default() };
        let (report, errors) = bake_and_measure(&rig, &opts);
        assert_eq!(errors.len(), report.clips.len());
        for (e, r) in errors.iter().zip(&report.clips) {
            assert!(!r.fallback, "{}: searched, not stored lossless", r.name);
            assert!(e.shell_error <= tolerance, "{}: shell error {} over the bound {tolerance}", e.name, e.shell_error);
            assert!(
                e.shell_error <= r.max_error * AGREEMENT && r.max_error <= e.shell_error * AGREEMENT,
                "{}: measured {} against the baker's {}",
                e.name,
                e.shell_error,
                r.max_error
            );
            assert!(e.times > 2 && e.vertex_error.is_some(), "{e:?}");
        }
        if tolerance > 1.0e-3 && !shell_from_mesh {
            // A loose bound is spent: the measurement sees errors far above the tight bound at
            // the 3 cm shell.
            assert!(errors.iter().any(|e| e.shell_error > 1.0e-3), "{errors:?}");
        }
    }
}

#[test]
fn the_default_bake_bounds_the_vertex_error_on_cesium_man() {
    let rig = load("CesiumMan/CesiumMan.glb");
    let defaults = BakeOptions::default();
    let tolerance = defaults.tolerance;
    assert!(defaults.shell_from_mesh, "shells come from the mesh by default");
    // With each joint's shell at its farthest vertex (the default), the bound holds on the
    // vertices.
    let (report, from_mesh) = bake_and_measure(&rig, &defaults);
    let vertex = from_mesh[0].vertex_error.expect("CesiumMan has a mesh");
    assert!(vertex <= tolerance, "vertex error {vertex} over {tolerance}: {from_mesh:?}");
    assert!(from_mesh[0].shell_error <= tolerance, "{from_mesh:?}");
    assert!(!report.clips[0].fallback);
    // At ACL's fixed 3 cm shell, vertices farther from their joints miss the bound, in fewer
    // bytes.
    let (fixed_report, fixed) = bake_and_measure(&rig, &BakeOptions { shell_from_mesh: false, ..defaults });
    let vertex = fixed[0].vertex_error.expect("CesiumMan has a mesh");
    assert!(fixed[0].shell_error <= tolerance && vertex > tolerance, "{fixed:?}");
    assert!(fixed_report.clips[0].baked_bytes < report.clips[0].baked_bytes, "{fixed_report:?} {report:?}");
}

#[test]
fn a_file_baked_from_another_model_is_refused() {
    let figure = load("RiggedFigure/RiggedFigure.glb");
    let simple = load("RiggedSimple/RiggedSimple.glb");
    let (bytes, _) = bake(&figure, &BakeOptions::default()).expect("bakes");
    let model = Model::from_bytes("figure", bytes).expect("loads");
    let err = measure_clips(&simple, &model, &uniform_shells(&simple, 0.03)).expect_err("another model");
    assert!(matches!(err, MeasureError::Joints { .. }), "{err}");
    let err = measure_clips(&figure, &model, &[0.03]).expect_err("one shell for many joints");
    assert!(matches!(err, MeasureError::Shells { .. }), "{err}");
}
