//! `sinew dump`: one JSON object with joint world matrices, skin matrices and skinned vertices
//! of a model at a time.

use std::fmt::Write as _;

use sinew::clip::RotationInterpolation;
use sinew::math::{Mat4, SoaTransform};

use crate::model::{Model, Skinning};

/// What to dump.
#[derive(Debug, Clone)]
pub struct DumpOptions {
    /// Clip index (`None`: the rest pose).
    pub clip: Option<usize>,
    /// Clip time in seconds.
    pub time: f32,
    /// Skin index.
    pub skin: usize,
    /// Skinning method.
    pub skinning: Skinning,
    /// Rotation interpolation (exact slerp for raw dumps).
    pub rotation: RotationInterpolation,
}

fn push_floats(out: &mut String, v: &[f32]) {
    out.push('[');
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        // Finite by construction; print the shortest round-trip form.
        let _ = write!(out, "{}", if x.is_finite() { *x } else { 0.0 });
    }
    out.push(']');
}

fn push_mats(out: &mut String, key: &str, m: &[Mat4<f32>]) {
    let _ = write!(out, "\"{key}\":[");
    for (i, m) in m.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_floats(out, &m.to_cols_array());
    }
    out.push(']');
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// Evaluates `model` and returns the dump's JSON text.
///
/// # Errors
///
/// The job error's message when the model's parts do not fit (not expected for validated
/// files).
pub fn dump(model: &Model, opts: &DumpOptions) -> Result<String, String> {
    let mut pose: Vec<SoaTransform<f32>> = Vec::new();
    let mut cursor = Vec::new();
    model.sample(opts.clip, opts.time, opts.rotation, &mut cursor, &mut pose).map_err(|e| e.to_string())?;
    let mut world = Vec::new();
    model.world(&pose, &mut world).map_err(|e| e.to_string())?;
    let palette = model.palette(&world, opts.skin).map_err(|e| e.to_string())?;
    let dq = model.dq_palette(&world, opts.skin).map_err(|e| e.to_string())?;
    let asset = model.asset();
    let mesh = (0..asset.num_meshes()).find(|&i| asset.mesh(i).and_then(|m| m.skin()) == Some(opts.skin));
    let parts = match mesh {
        Some(m) => model.skin_mesh(m, &world, &palette, &dq, opts.skinning).map_err(|e| e.to_string())?,
        None => Vec::new(),
    };
    let mut out = String::with_capacity(1 << 16);
    out.push_str("{\"joints\":[");
    for (i, n) in model.skeleton().names().iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&json_str(n));
    }
    out.push_str("],");
    push_mats(&mut out, "joint_world", &world);
    out.push(',');
    push_mats(&mut out, "joint_matrices", &palette);
    out.push_str(",\"skinned_positions\":[");
    let mut first = true;
    for p in &parts {
        for v in &p.positions {
            if !first {
                out.push(',');
            }
            first = false;
            push_floats(&mut out, &v.to_array());
        }
    }
    out.push_str("],\"skinned_normals\":[");
    let mut first = true;
    for p in &parts {
        for v in &p.normals {
            if !first {
                out.push(',');
            }
            first = false;
            push_floats(&mut out, &v.to_array());
        }
    }
    out.push_str("]}");
    Ok(out)
}
