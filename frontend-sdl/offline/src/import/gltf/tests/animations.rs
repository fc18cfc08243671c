//! Animations: cubic-spline tangents, step interpolation, key counts and key times.

use super::*;

#[test]
fn cubic_spline_keeps_tangents() {
    let mut tiny = Tiny::new();
    tiny.interpolation = "CUBICSPLINE";
    let k = tiny.values.clone();
    tiny.values = k.iter().flat_map(|v| [[0.0, 0.0, 0.1, 0.0], *v, [0.0, 0.0, -0.1, 0.0]]).collect();
    let rig = tiny.load().unwrap();
    let ch = &rig.clips[0].channels[0];
    assert_eq!(ch.interpolation, Interpolation::CubicSpline);
    assert_eq!(ch.values.len(), 3 * 3 * 4);
    assert_eq!(&ch.values[4..8], &k[0]);
    assert_eq!(&ch.values[8..12], &[0.0, 0.0, -0.1, 0.0]);
    // Without tangents the value count is wrong for CUBICSPLINE.
    let mut bad = Tiny::new();
    bad.interpolation = "CUBICSPLINE";
    assert!(matches!(bad.load(), Err(GltfError::CountMismatch { expected: 9, actual: 3, .. })));
}

#[test]
fn step_interpolation_and_counts() {
    let mut tiny = Tiny::new();
    tiny.interpolation = "STEP";
    assert_eq!(tiny.load().unwrap().clips[0].channels[0].interpolation, Interpolation::Step);
    tiny.values.pop();
    assert!(matches!(tiny.load(), Err(GltfError::CountMismatch { expected: 3, actual: 2, .. })));
}

#[test]
fn bad_key_times() {
    let mut nan = Tiny::new();
    nan.times[1] = f32::NAN;
    assert!(matches!(nan.load(), Err(GltfError::NonFinite { .. })), "{:?}", nan.load());
    let mut inf = Tiny::new();
    inf.times[2] = f32::INFINITY;
    assert!(matches!(inf.load(), Err(GltfError::NonFinite { .. })));
    // A time given twice is a jump (`tests/repeated_key_times.rs`); one after it that
    // decreases is not.
    let mut equal = Tiny::new();
    equal.times = vec![0.5, 0.5, 0.25];
    assert!(matches!(equal.load(), Err(GltfError::UnsortedKeyTimes { animation: 0, channel: 0, key: 2 })));
    let mut backwards = Tiny::new();
    backwards.times = vec![0.0, 1.0, 0.5];
    assert!(matches!(backwards.load(), Err(GltfError::UnsortedKeyTimes { key: 2, .. })));
    let mut nan_value = Tiny::new();
    nan_value.values[2][0] = f32::NAN;
    assert!(matches!(nan_value.load(), Err(GltfError::NonFinite { .. })));
}
