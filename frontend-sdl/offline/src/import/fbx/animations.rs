//! Clips: each animation stack baked by ufbx into linear keys of every animated node's local
//! transform (translation, rotation, scale: the values ufbx's own evaluation gives, pre- and
//! post-rotations, pivots and the space conversion included) and of every animated blend
//! channel's weight, as LINEAR rig channels on the file's time line.

use std::collections::BTreeMap;

use ufbx::{BakedQuat, BakedVec3};

use super::error::FbxError;
use super::meshes::Morphs;
use super::scene::{bake_options, ufbx_error, unit_quat, Importer};
use crate::import::names::{or_fallback, UniqueNames};
use crate::rig::{ChannelTarget, Interpolation, RigChannel, RigClip, RigMesh, RigWeightChannel};

/// The blend-channel property whose keys are a morph target's weight, in percent.
const DEFORM_PERCENT: &str = "DeformPercent";

/// Rate at which ufbx resamples curves that are not linear: the file's frame rate times the
/// smallest whole number that reaches 30 per second (so every frame is a sample), or 30 when
/// the file's rate is not a usable one.
pub(super) fn resample_rate(fps: f64) -> f64 {
    if fps.is_finite() && (1.0..=1000.0).contains(&fps) {
        fps * (30.0 / fps).ceil().max(1.0)
    } else {
        30.0
    }
}

/// Key times in seconds as `f32`, strictly increasing. Two keys whose times round to one `f32`
/// (the two sides of a step, a millisecond apart, late in a long clip) are a jump, read as the
/// glTF importer reads a repeated time: the later key holds from that time, the earlier one's
/// time moves one `f32` step down (or, where that would not stay above the key before it, the
/// later key takes its place). A time below the previous one after rounding is left out.
/// Returns the kept keys' indices and their times.
fn key_times(times: impl Iterator<Item = f64>) -> (Vec<usize>, Vec<f32>) {
    let (mut kept, mut out) = (Vec::<usize>::new(), Vec::<f32>::new());
    for (i, t) in times.enumerate() {
        let t = t as f32;
        if !t.is_finite() {
            continue;
        }
        let n = out.len();
        match out.last().copied() {
            Some(last) if t < last => {}
            Some(last) if t == last => {
                let down = last.next_down();
                if n < 2 || out.get(n - 2).is_some_and(|&before| before < down) {
                    if let Some(l) = out.last_mut() {
                        *l = down;
                    }
                    kept.push(i);
                    out.push(t);
                } else if let Some(k) = kept.last_mut() {
                    *k = i;
                }
            }
            _ => {
                kept.push(i);
                out.push(t);
            }
        }
    }
    (kept, out)
}

/// The keys a channel keeps: all of them, or for a channel ufbx found constant its first and
/// last (they keep the clip's time range).
fn kept<T>(keys: &[T], constant: bool) -> Vec<&T> {
    match (constant, keys.first(), keys.last()) {
        (true, Some(a), Some(b)) if keys.len() > 1 => vec![a, b],
        _ => keys.iter().collect(),
    }
}

/// A translation or scale channel of `joint` from baked keys; `None` without keys.
fn vec3_channel(
    joint: usize,
    target: ChannelTarget,
    keys: &[BakedVec3],
    constant: bool,
    what: &dyn Fn() -> String,
) -> Result<Option<RigChannel>, FbxError> {
    let keys = kept(keys, constant);
    let (index, times) = key_times(keys.iter().map(|k| k.time));
    if times.is_empty() {
        return Ok(None);
    }
    let mut values = Vec::with_capacity(times.len() * 3);
    for &i in &index {
        let Some(k) = keys.get(i) else { continue };
        values.extend([k.value.x, k.value.y, k.value.z].map(|v| v as f32));
    }
    if !values.iter().all(|v| v.is_finite()) {
        return Err(FbxError::NonFinite { what: what() });
    }
    Ok(Some(RigChannel { joint, target, interpolation: Interpolation::Linear, times, values }))
}

/// A rotation channel of `joint` from baked keys, each quaternion normalized and on the
/// hemisphere of the key before it; `None` without keys.
fn rotation_channel(
    joint: usize,
    keys: &[BakedQuat],
    constant: bool,
    what: &dyn Fn() -> String,
) -> Result<Option<RigChannel>, FbxError> {
    let keys = kept(keys, constant);
    let (index, times) = key_times(keys.iter().map(|k| k.time));
    if times.is_empty() {
        return Ok(None);
    }
    let mut values = Vec::with_capacity(times.len() * 4);
    let mut prev: Option<[f64; 4]> = None;
    for &i in &index {
        let Some(k) = keys.get(i) else { continue };
        let raw = [k.value.x, k.value.y, k.value.z, k.value.w];
        if !raw.iter().all(|v| v.is_finite()) {
            return Err(FbxError::NonFinite { what: what() });
        }
        let mut q = unit_quat(k.value);
        if let Some(p) = prev {
            if q.iter().zip(p).map(|(a, b)| a * b).sum::<f64>() < 0.0 {
                q = q.map(|c| -c);
            }
        }
        prev = Some(q);
        values.extend(q.map(|v| v as f32));
    }
    Ok(Some(RigChannel { joint, target: ChannelTarget::Rotation, interpolation: Interpolation::Linear, times, values }))
}

impl Importer<'_> {
    /// Every animation stack as a [`RigClip`] with a unique name. `meshes` and `morphs` say
    /// which morph targets each blend channel drives.
    pub(super) fn clips(&mut self, meshes: &[RigMesh], morphs: &Morphs) -> Result<Vec<RigClip>, FbxError> {
        let scene = self.scene;
        let rate = resample_rate(scene.settings.frames_per_second);
        let mut names = UniqueNames::default();
        let mut clips = Vec::with_capacity(scene.anim_stacks.len());
        for (si, stack) in scene.anim_stacks.as_ref().iter().enumerate() {
            let name = names.make(or_fallback(Some(&stack.element.name), || format!("clip{si}")), 1);
            let baked = ufbx::bake_anim(scene, &stack.anim, bake_options(rate, self.memory))
                .map_err(|e| ufbx_error(&format!("animation stack {name:?}"), &e))?;
            let mut channels = Vec::new();
            let mut root_animated = false;
            for n in baked.nodes.as_ref() {
                let Some(joint) = self.joint_of_node.get(n.typed_id as usize).copied().flatten() else {
                    root_animated = true;
                    continue;
                };
                let what = |part: &str| {
                    let node = self.nodes.get(joint).map_or("", |n| &*n.element.name).to_owned();
                    let (clip, part) = (name.clone(), part.to_owned());
                    move || format!("a {part} key of node {node:?} in clip {clip:?}")
                };
                let t = what("translation");
                if let Some(c) =
                    vec3_channel(joint, ChannelTarget::Translation, &n.translation_keys, n.constant_translation, &t)?
                {
                    channels.push(c);
                }
                let r = what("rotation");
                if let Some(c) = rotation_channel(joint, &n.rotation_keys, n.constant_rotation, &r)? {
                    channels.push(c);
                }
                let s = what("scale");
                if let Some(c) = vec3_channel(joint, ChannelTarget::Scale, &n.scale_keys, n.constant_scale, &s)? {
                    channels.push(c);
                }
            }
            if root_animated {
                self.notes.push(format!("clip {name:?}: the animation of a node that is not a joint was left out"));
            }
            let weights = self.weight_channels(&baked, &name, meshes, morphs)?;
            clips.push(RigClip { name, channels, weights });
        }
        Ok(clips)
    }

    /// The morph-weight channels of one baked stack: per mesh, the union of its animated
    /// channels' key times, and at each the weight of every target (its baked value, or its
    /// default when the stack does not animate it).
    fn weight_channels(
        &mut self,
        baked: &ufbx::BakedAnim,
        clip: &str,
        meshes: &[RigMesh],
        morphs: &Morphs,
    ) -> Result<Vec<RigWeightChannel>, FbxError> {
        // Mesh → (target, keys) of its animated targets.
        let mut animated: BTreeMap<usize, Vec<(usize, &[BakedVec3])>> = BTreeMap::new();
        for e in baked.elements.as_ref() {
            let Some(targets) = morphs.get(&e.element_id) else { continue };
            let Some(prop) = e.props.as_ref().iter().find(|p| &*p.name == DEFORM_PERCENT) else { continue };
            for &(mesh, target) in targets {
                animated.entry(mesh).or_default().push((target, prop.keys.as_ref()));
            }
        }
        let mut out = Vec::new();
        for (mesh, targets) in animated {
            let Some(m) = meshes.get(mesh) else { continue };
            let mut all: Vec<f64> = targets.iter().flat_map(|(_, keys)| keys.iter().map(|k| k.time)).collect();
            all.sort_by(f64::total_cmp);
            let (index, times) = key_times(all.iter().copied());
            let mut values = Vec::with_capacity(times.len() * m.weights.len());
            for &i in &index {
                let Some(&t) = all.get(i) else { continue };
                let start = values.len();
                values.extend_from_slice(&m.weights);
                for &(target, keys) in &targets {
                    if let Some(v) = values.get_mut(start + target) {
                        *v = (ufbx::evaluate_baked_vec3(keys, t).x / 100.0) as f32;
                    }
                }
            }
            if !values.iter().all(|v| v.is_finite()) {
                return Err(FbxError::NonFinite {
                    what: format!("a morph weight of mesh {:?} in clip {clip:?}", m.name),
                });
            }
            if !times.is_empty() {
                out.push(RigWeightChannel { mesh, interpolation: Interpolation::Linear, times, values });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::key_times;

    #[test]
    fn keys_rounding_to_one_time_are_a_jump_to_the_later() {
        // 1000 s + 1 µs rounds to 1000 s in f32: the step's two sides.
        let (kept, times) = key_times([0.0, 1000.0, 1_000.000_001, 1001.0].into_iter());
        assert_eq!(kept, [0, 1, 2, 3]);
        assert_eq!(times, [0.0, 1000.0f32.next_down(), 1000.0, 1001.0]);
        // No room below (the key before sits one step down already): the later key replaces it.
        let t = 1000.0f32;
        let (kept, times) = key_times([f64::from(t.next_down()), f64::from(t), 1_000.000_001].into_iter());
        assert_eq!((kept, times), (vec![0, 2], vec![t.next_down(), t]));
        // A first time given twice keeps both, the first one step earlier.
        let (kept, times) = key_times([-1.0, -1.0, 2.0].into_iter());
        assert_eq!((kept, times), (vec![0, 1, 2], vec![(-1.0f32).next_down(), -1.0, 2.0]));
        // Decreasing and non-finite times are left out.
        let (kept, times) = key_times([0.0, 2.0, 1.0, f64::NAN, 3.0].into_iter());
        assert_eq!((kept, times), (vec![0, 1, 4], vec![0.0, 2.0, 3.0]));
    }
}
