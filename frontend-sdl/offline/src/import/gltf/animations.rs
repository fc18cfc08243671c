//! Animations: each glTF animation becomes a clip; each translation, rotation or scale channel
//! keeps its sampler's interpolation (step, linear, cubic spline with its tangents) and its keys;
//! each `weights` channel becomes a morph-weight channel of the mesh instance at its node (read
//! in `morph`).

use std::collections::HashSet;

use gltf::animation::util::ReadOutputs;
use gltf::animation::Property;

use super::accessors::{check_finite, Importer, ROTATIONS, SCALAR_F32, VEC3_F32};
use super::error::GltfError;
use super::hierarchy::Hierarchy;
use crate::import::names::{or_fallback, UniqueNames};
use crate::rig::{ChannelTarget, Interpolation, RigChannel, RigClip, RigMesh};

impl Importer<'_> {
    /// Every animation as a [`RigClip`] with a unique name; channels on nodes outside the scene,
    /// morph-target weights of nodes without a mesh with morph targets (among `meshes`) and
    /// repeated (node, property) channels are skipped with a note.
    pub(super) fn clips(&mut self, h: &Hierarchy, meshes: &[RigMesh]) -> Result<Vec<RigClip>, GltfError> {
        let mut names = UniqueNames::default();
        let mut clips = Vec::with_capacity(self.doc.animations().len());
        for anim in self.doc.animations() {
            let ai = anim.index();
            let name = names.make(or_fallback(anim.name(), || format!("clip{ai}")), 1);
            let mut seen: HashSet<(usize, ChannelTarget)> = HashSet::new();
            let mut seen_weights: HashSet<usize> = HashSet::new();
            let mut channels = Vec::new();
            let mut weights = Vec::new();
            for (ci, ch) in anim.channels().enumerate() {
                if self.ignored_channels.contains(&(ai, ci)) {
                    continue;
                }
                let label = format!("clip {name:?} channel {ci}");
                let node = ch.target().node().index();
                let target = match ch.target().property() {
                    Property::Translation => ChannelTarget::Translation,
                    Property::Rotation => ChannelTarget::Rotation,
                    Property::Scale => ChannelTarget::Scale,
                    Property::MorphTargetWeights => {
                        let joint = h.joint_of_node.get(node).copied().flatten();
                        let mesh = joint.and_then(|j| meshes.iter().position(|m| m.instance == Some(j)));
                        let Some((mi, m)) =
                            mesh.and_then(|mi| Some((mi, meshes.get(mi)?))).filter(|(_, m)| m.num_targets() > 0)
                        else {
                            self.notes.push(format!(
                                "{label}: node {node} has no mesh with morph targets in the scene; its weights channel was skipped"
                            ));
                            continue;
                        };
                        if !seen_weights.insert(mi) {
                            self.notes.push(format!(
                                "{label}: a second weights channel for node {node}; the first one was kept"
                            ));
                            continue;
                        }
                        if let Some(w) = self.weight_channel(ai, ci, &ch, mi, m.num_targets(), &label)? {
                            weights.push(w);
                        }
                        continue;
                    }
                };
                let Some(joint) = h.joint_of_node.get(node).copied().flatten() else {
                    self.notes.push(format!("{label}: target node {node} is not in the scene; skipped"));
                    continue;
                };
                if !seen.insert((joint, target)) {
                    self.notes
                        .push(format!("{label}: a second {target:?} channel for node {node}; the first one was kept"));
                    continue;
                }
                if let Some(c) = self.channel(ai, ci, &ch, joint, target, &label)? {
                    channels.push(c);
                }
            }
            clips.push(RigClip { name, channels, weights });
        }
        Ok(clips)
    }

    /// Channel `ci` of animation `ai`: its sampler's interpolation and key times ([`KeyTimes`]:
    /// finite, non-decreasing in the file, strictly increasing once read); `None`, with a note,
    /// when it has no keys. Joint and `weights` channels read their times alike.
    ///
    /// Exporters write a time twice in a row to mark a jump: the value of the key at the later
    /// index holds from that time on. Such a time is read so (and noted once per channel): the
    /// earlier key's time moves down to the next `f32` below, so the segment before it ends
    /// one step of `f32` early and the later key's value holds at the time itself and after it,
    /// for every interpolation (a cubic spline's keys keep their tangents). The keys that share a
    /// channel's first time, but the last of them, are dropped: there is no segment before them
    /// to end. Times that decrease are an error.
    pub(super) fn key_times(
        &mut self,
        ai: usize,
        ci: usize,
        ch: &gltf::animation::Channel<'_>,
        label: &str,
    ) -> Result<Option<KeyTimes>, GltfError> {
        let sampler = ch.sampler();
        let interpolation = match sampler.interpolation() {
            gltf::animation::Interpolation::Step => Interpolation::Step,
            gltf::animation::Interpolation::Linear => Interpolation::Linear,
            gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
        };
        let input = sampler.input();
        let count = self.check_accessor(&input, &format!("{label} key times"), SCALAR_F32)?;
        if count == 0 {
            self.notes.push(format!("{label}: no keys; skipped"));
            return Ok(None);
        }
        let times = self.collect(ch.reader(self.data()).read_inputs(), input.index(), count)?;
        for (k, &t) in times.iter().enumerate() {
            if !t.is_finite() {
                return Err(GltfError::NonFinite { what: format!("animation {ai} channel {ci} key time {k}") });
            }
        }
        if let Some(k) = times.windows(2).position(|w| w[1] < w[0]) {
            return Err(GltfError::UnsortedKeyTimes { animation: ai, channel: ci, key: k + 1 });
        }
        let keys = KeyTimes::of(interpolation, times);
        if keys.repeated > 0 {
            let node = ch.target().node();
            let node = match node.name() {
                Some(n) => format!("node {n:?}"),
                None => format!("node {}", node.index()),
            };
            let property = match ch.target().property() {
                Property::Translation => "translation",
                Property::Rotation => "rotation",
                Property::Scale => "scale",
                Property::MorphTargetWeights => "weights",
            };
            let jumps = match keys.repeated {
                1 => "1 repeated key time read as a jump".to_owned(),
                n => format!("{n} repeated key times read as jumps"),
            };
            let mut note = format!("animation {ai} channel {ci} ({node} {property}): {jumps}");
            if keys.dropped > 0 {
                note += &format!("; {} of the keys at its first time dropped, the last of them kept", keys.dropped);
            }
            self.notes.push(note);
        }
        Ok(Some(keys))
    }

    /// One channel: its sampler's key times ([`Importer::key_times`]) and key values (three per
    /// key for cubic splines; rotation keys normalized); `None` when it has no keys.
    fn channel(
        &mut self,
        ai: usize,
        ci: usize,
        ch: &gltf::animation::Channel<'_>,
        joint: usize,
        target: ChannelTarget,
        label: &str,
    ) -> Result<Option<RigChannel>, GltfError> {
        let Some(keys) = self.key_times(ai, ci, ch, label)? else { return Ok(None) };
        let (interpolation, count) = (keys.interpolation, keys.read);
        let reader = ch.reader(self.data());
        let output = ch.sampler().output();
        let per_key = if interpolation == Interpolation::CubicSpline { 3 } else { 1 };
        let expected = count * per_key;
        let what = format!("{label} key values");
        let allowed = if target == ChannelTarget::Rotation { ROTATIONS } else { VEC3_F32 };
        let out_count = self.check_accessor(&output, &what, allowed)?;
        if out_count != expected {
            return Err(GltfError::CountMismatch { what, expected, actual: out_count });
        }
        let mut values = Vec::with_capacity(expected * target.components());
        match reader.read_outputs() {
            Some(ReadOutputs::Translations(it)) | Some(ReadOutputs::Scales(it)) => {
                values.extend(self.collect(Some(it), output.index(), expected)?.iter().flatten());
            }
            Some(ReadOutputs::Rotations(r)) => {
                values.extend(self.collect(Some(r.into_f32()), output.index(), expected)?.iter().flatten());
            }
            None if self.is_unbacked(output.index()) => {
                values.extend(self.collect(
                    None::<std::iter::Empty<f32>>,
                    output.index(),
                    expected * target.components(),
                )?);
            }
            _ => {
                return Err(GltfError::AccessorOutOfBounds {
                    accessor: output.index(),
                    detail: "its data could not be read".into(),
                })
            }
        }
        if values.len() != expected * target.components() {
            return Err(GltfError::CountMismatch {
                what,
                expected: expected * target.components(),
                actual: values.len(),
            });
        }
        check_finite(values.iter(), || format!("animation {ai} channel {ci} key values"))?;
        if target == ChannelTarget::Rotation {
            // Keys are rotations: normalize them (files carry |q| off by 1e-4 and more), so
            // linear interpolation and the keys themselves stay rotations. Cubic tangents are
            // left alone; only the key values (the middle of each triple) are normalized.
            let (stride, at) = if interpolation == Interpolation::CubicSpline { (12, 4) } else { (4, 0) };
            for key in values.chunks_exact_mut(stride) {
                let q = &mut key[at..at + 4];
                let l = q.iter().map(|v| (*v as f64) * (*v as f64)).sum::<f64>().sqrt();
                if l > 0.0 {
                    q.iter_mut().for_each(|v| *v = (*v as f64 / l) as f32);
                }
            }
        }
        keys.drop_values(&mut values, target.components());
        Ok(Some(RigChannel { joint, target, interpolation, times: keys.times, values }))
    }
}

/// A channel's key times as read ([`Importer::key_times`]).
pub(super) struct KeyTimes {
    /// The sampler's interpolation.
    pub(super) interpolation: Interpolation,
    /// The key times, strictly increasing: the file's, with each repeated time's earlier keys
    /// moved down and the leading keys at a repeated first time dropped.
    pub(super) times: Vec<f32>,
    /// Keys in the file (the values to read).
    pub(super) read: usize,
    /// Leading keys dropped (their values go too: [`KeyTimes::drop_values`]).
    pub(super) dropped: usize,
    /// Keys whose time equals the previous key's in the file.
    pub(super) repeated: usize,
}

impl KeyTimes {
    /// The keys of `times` (finite, non-decreasing) with repeated times read as jumps (see
    /// [`Importer::key_times`]).
    fn of(interpolation: Interpolation, mut times: Vec<f32>) -> KeyTimes {
        let read = times.len();
        let repeated = times.windows(2).filter(|w| w[1] == w[0]).count();
        // The keys at the first time, but the last of them.
        let dropped = times.iter().take_while(|&&t| t == times[0]).count() - 1;
        times.drain(..dropped);
        // Backwards, so a time repeated more than twice steps down once per key.
        for k in (1..times.len()).rev() {
            if times[k - 1] >= times[k] {
                times[k - 1] = times[k].next_down();
            }
        }
        KeyTimes { interpolation, times, read, dropped, repeated }
    }

    /// Drops the values of the dropped leading keys from `values`, the file's values with
    /// `components` per value (× 3 per key for cubic splines).
    pub(super) fn drop_values(&self, values: &mut Vec<f32>, components: usize) {
        let per_key = if self.interpolation == Interpolation::CubicSpline { 3 * components } else { components };
        values.drain(..(self.dropped * per_key).min(values.len()));
    }
}
