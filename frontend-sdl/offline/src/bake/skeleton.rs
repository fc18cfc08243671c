//! The skeleton section: parents, rest transforms and names (cut to `MAX_NAME_LEN` bytes and
//! made unique).

use std::collections::HashMap;

use sinew::limits::{MAX_JOINTS, MAX_NAME_LEN};

use super::write::EncSkeleton;
use super::BakeError;
use crate::rig::Rig;

/// Cuts names to `MAX_NAME_LEN` bytes and makes them unique.
fn unique_names(names: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for n in names {
        let mut base = cut(&n, MAX_NAME_LEN);
        if seen.contains_key(&base) {
            let mut k = 2;
            loop {
                let suffix = format!("~{k}");
                let cand = format!("{}{suffix}", cut(&base, MAX_NAME_LEN - suffix.len()));
                if !seen.contains_key(&cand) {
                    base = cand;
                    break;
                }
                k += 1;
            }
        }
        seen.insert(base.clone(), out.len());
        out.push(base);
    }
    out
}

fn cut(s: &str, max: usize) -> String {
    let mut n = s.len().min(max);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    s[..n].to_string()
}

/// `v`, or 0 when its magnitude is under 2⁻³⁰. Exporters leave rounding residues (1e-16 to
/// 1e-23) where a rest transform holds 0; tracks at the rest pose are dropped, so the runtime
/// samples these values, and their products in blending and local-to-model fall below `f32`'s
/// normal range, where x86 arithmetic runs many times slower. The change is under 1e-9 units.
fn flush_tiny(v: f32) -> f32 {
    if v.abs() < 1.0 / (1u64 << 30) as f32 {
        0.0
    } else {
        v
    }
}

/// The skeleton section of a rig: parents before children, finite rest transforms, at most
/// `MAX_JOINTS` joints.
pub(super) fn skeleton_of(rig: &Rig) -> Result<EncSkeleton, BakeError> {
    if rig.joints.len() > MAX_JOINTS {
        return Err(BakeError::TooManyJoints(rig.joints.len()));
    }
    let mut parents = Vec::new();
    let mut rest = Vec::new();
    for (i, j) in rig.joints.iter().enumerate() {
        let p = match j.parent {
            Some(p) if p < i => p as i16,
            Some(p) => return Err(BakeError::Invalid(format!("joint {i} has parent {p}, not before it"))),
            None => -1,
        };
        parents.push(p);
        if !j.rest.is_finite() {
            return Err(BakeError::NonFiniteRest { joint: j.name.clone() });
        }
        let r = j.rest.rotation.normalize();
        let t = j.rest.translation;
        let s = j.rest.scale;
        rest.push([t.x, t.y, t.z, r.x, r.y, r.z, r.w, s.x, s.y, s.z].map(flush_tiny));
    }
    Ok(EncSkeleton { parents, rest, names: unique_names(rig.joints.iter().map(|j| j.name.clone())) })
}
