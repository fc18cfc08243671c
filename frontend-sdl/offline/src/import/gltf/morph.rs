//! Morph targets: each primitive's `targets` (POSITION, NORMAL and TANGENT deltas; `f32`, or
//! signed bytes and shorts as `KHR_mesh_quantization` allows: normalized or not for positions,
//! normalized for normals and tangents; sparse and zero-filled accessors through the checked
//! readers), the same target count in every primitive of a mesh, the instance's default
//! weights (the node's `weights` over the mesh's, zeros without either), and `weights`
//! animation channels (STEP, LINEAR or CUBICSPLINE: `targets` values per key, × 3 for cubic
//! splines, `f32` or normalized integers).

use gltf::accessor::{DataType, Dimensions};
use gltf::animation::util::ReadOutputs;

use super::accessors::{check_finite, Importer};
use super::error::GltfError;
use crate::rig::{Interpolation, RigMorphTarget, RigWeightChannel};

/// Element types of a target's POSITION deltas.
const POSITION_DELTAS: &[(DataType, Dimensions)] =
    &[(DataType::F32, Dimensions::Vec3), (DataType::I8, Dimensions::Vec3), (DataType::I16, Dimensions::Vec3)];
/// Element types of a target's NORMAL and TANGENT deltas (integers must be normalized).
const DIRECTION_DELTAS: &[(DataType, Dimensions)] = POSITION_DELTAS;
/// Element types of a `weights` channel's key values (integers must be normalized).
const WEIGHT_VALUES: &[(DataType, Dimensions)] = &[
    (DataType::F32, Dimensions::Scalar),
    (DataType::I8, Dimensions::Scalar),
    (DataType::U8, Dimensions::Scalar),
    (DataType::I16, Dimensions::Scalar),
    (DataType::U16, Dimensions::Scalar),
];

impl Importer<'_> {
    /// The morph targets of a primitive with `n` vertices (`label` names it in errors).
    pub(super) fn morph_targets(
        &mut self,
        prim: &gltf::Primitive<'_>,
        n: usize,
        label: &str,
    ) -> Result<Vec<RigMorphTarget>, GltfError> {
        let mut out = Vec::with_capacity(prim.morph_targets().len());
        for (ti, target) in prim.morph_targets().enumerate() {
            let what = |attr: &str| format!("{label} target {ti} {attr}");
            let positions = match target.positions() {
                Some(acc) => self.deltas(&acc, n, &what("POSITION"), false)?,
                None => vec![[0.0; 3]; n],
            };
            let normals = target.normals().map(|acc| self.deltas(&acc, n, &what("NORMAL"), true)).transpose()?;
            let tangents = target.tangents().map(|acc| self.deltas(&acc, n, &what("TANGENT"), true)).transpose()?;
            out.push(RigMorphTarget { positions, normals, tangents });
        }
        Ok(out)
    }

    /// `n` delta vectors of accessor `acc` (`direction`: a NORMAL or TANGENT target, whose
    /// integer data must be normalized), as floats.
    fn deltas(
        &mut self,
        acc: &gltf::Accessor<'_>,
        n: usize,
        what: &str,
        direction: bool,
    ) -> Result<Vec<[f32; 3]>, GltfError> {
        let allowed = if direction { DIRECTION_DELTAS } else { POSITION_DELTAS };
        let count = self.check_accessor(acc, what, allowed)?;
        self.check_count(count, n, what)?;
        // Floats, or signed bytes and shorts (`allowed`) dequantized as glTF maps them.
        let v = self.read_floats::<3>(acc, n, what, direction)?;
        check_finite(v.iter().flatten(), || what.to_owned())?;
        Ok(v)
    }

    /// The default weights of an instance of `mesh` at `node` with `targets` targets: the
    /// node's `weights`, else the mesh's, else zeros; a given array must have `targets`
    /// finite entries.
    pub(super) fn default_weights(
        &self,
        mesh: &gltf::Mesh<'_>,
        node: &gltf::Node<'_>,
        targets: usize,
    ) -> Result<Vec<f32>, GltfError> {
        let (given, what) = match (node.weights(), mesh.weights()) {
            (Some(w), _) => (w, format!("node {} weights", node.index())),
            (None, Some(w)) => (w, format!("mesh {} weights", mesh.index())),
            (None, None) => return Ok(vec![0.0; targets]),
        };
        if given.len() != targets {
            return Err(GltfError::MorphWeights { what, expected: targets, found: given.len() });
        }
        check_finite(given.iter(), || what.clone())?;
        Ok(given.to_vec())
    }

    /// One `weights` channel of animation `ai` on rig mesh `mesh` with `targets` targets: its
    /// key times ([`Importer::key_times`]) and `targets` values per key (× 3 for cubic
    /// splines); `None` when it has no keys.
    pub(super) fn weight_channel(
        &mut self,
        ai: usize,
        ci: usize,
        ch: &gltf::animation::Channel<'_>,
        mesh: usize,
        targets: usize,
        label: &str,
    ) -> Result<Option<RigWeightChannel>, GltfError> {
        let Some(keys) = self.key_times(ai, ci, ch, label)? else { return Ok(None) };
        let (interpolation, count) = (keys.interpolation, keys.read);
        let reader = ch.reader(self.data());
        let output = ch.sampler().output();
        let what = format!("{label} key values");
        let out_count = self.check_accessor(&output, &what, WEIGHT_VALUES)?;
        if output.data_type() != DataType::F32 && !output.normalized() {
            return Err(GltfError::AccessorType {
                accessor: output.index(),
                usage: what,
                found: format!("{:?} of {:?}, not normalized", output.dimensions(), output.data_type()),
            });
        }
        let per_key = if interpolation == Interpolation::CubicSpline { 3 * targets } else { targets };
        let expected = count.saturating_mul(per_key);
        if out_count != expected {
            return Err(GltfError::MorphWeights { what, expected, found: out_count });
        }
        let mut values = match reader.read_outputs() {
            Some(ReadOutputs::MorphTargetWeights(w)) => self.collect(Some(w.into_f32()), output.index(), expected)?,
            None if self.is_unbacked(output.index()) => {
                self.collect(None::<std::iter::Empty<f32>>, output.index(), expected)?
            }
            _ => {
                return Err(GltfError::AccessorOutOfBounds {
                    accessor: output.index(),
                    detail: "its data could not be read".into(),
                })
            }
        };
        check_finite(values.iter(), || format!("animation {ai} channel {ci} key values"))?;
        keys.drop_values(&mut values, targets);
        Ok(Some(RigWeightChannel { mesh, interpolation, times: keys.times, values }))
    }
}
