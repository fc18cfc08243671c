//! [`BakeOptions`], what the baker may do to a rig, and [`MAX_BAKE_WORK`], its default work
//! budget.

/// Baking options.
#[derive(Debug, Clone, Copy)]
pub struct BakeOptions {
    /// Largest allowed displacement of a virtual vertex, in meters (default 1e-4: 0.01 cm);
    /// converted to scene units with [`Rig::meters_per_unit`](crate::rig::Rig::meters_per_unit).
    pub tolerance: f64,
    /// Distance of the virtual vertices from each joint, in meters (default 0.03, ACL's
    /// convention): every joint's, when `shell_from_mesh` is false or the model has no mesh
    /// vertices.
    pub shell: f64,
    /// Give each joint the distance to the farthest mesh vertex it moves, or for a joint that
    /// moves none itself its subtree's reach, and at least `min_shell`
    /// ([`shells_from_mesh`](crate::shells::shells_from_mesh)), so the bound holds on the
    /// model's vertices and on every joint (default true). False: `shell` for every joint, as
    /// ACL measures.
    pub shell_from_mesh: bool,
    /// With `shell_from_mesh`, the smallest shell of any joint, in meters in the model's space
    /// (default [`DEFAULT_MIN_SHELL`]): a joint that moves no vertex, or only vertices near it,
    /// is still measured this far out, so its rotation is bounded too (see
    /// [`shells_from_mesh`](crate::shells::shells_from_mesh)).
    pub min_shell: f64,
    /// Largest bone palette per mesh part (`None`: one part per primitive).
    pub palette: Option<usize>,
    /// Most influences per vertex kept in meshes (1 to `MAX_INFLUENCES`; default 4).
    pub max_influences: usize,
    /// Store every key as lossless `f32` (no quantization, no reduction).
    pub lossless: bool,
    /// Most work steps the key reduction and error measurement of all clips may take (default
    /// [`MAX_BAKE_WORK`]): one step is one source key checked by the reduction, or one joint or
    /// track evaluated at one time by the measurement. Clips that do not fit are stored
    /// lossless (see the module documentation).
    pub max_work: u64,
    /// Largest texture side in texels: bigger images are scaled down to fit `texture_size ×
    /// texture_size`, keeping their aspect ratio (default [`DEFAULT_TEXTURE_SIZE`]; at most
    /// [`MAX_TEXTURE_DIMENSION`](sinew::raster::MAX_TEXTURE_DIMENSION)).
    pub texture_size: u32,
    /// How texels are stored: RGBA8 (default) or RGB565 (half the bytes, for small devices).
    pub texture_format: sinew::raster::TexelFormat,
}

/// Default [`BakeOptions::min_shell`]: 0.125 m. At the default bound of 1e-4 m, a rotation error
/// θ moves one of a joint's six virtual vertices at 0.125 m by at least √(2/3)·2·sin(θ/2)·0.125 m,
/// so every joint's world rotation stays within 1e-4 / (√(2/3) · 0.125) ≈ 0.98e-3 rad; and a
/// hand or a foot, or a prop of that size on an attachment joint, sees the bound.
pub const DEFAULT_MIN_SHELL: f64 = 0.125;

/// Default [`BakeOptions::texture_size`]: 512 texels, 1 MiB of RGBA8 at most per texture (the
/// sample models' 1024 × 1024 images become a quarter of their size; a display of a few hundred
/// pixels shows no difference).
pub const DEFAULT_TEXTURE_SIZE: u32 = 512;

/// Default [`BakeOptions::max_work`]: 2²⁵ (33.5 million) steps, about 5 s of baking in an
/// unoptimized build. The sample models take at most 3.6 million (`pab_crossarms`, BrainStem).
pub const MAX_BAKE_WORK: u64 = 1 << 25;

impl Default for BakeOptions {
    fn default() -> Self {
        BakeOptions {
            tolerance: 1.0e-4,
            shell: 0.03,
            shell_from_mesh: true,
            min_shell: DEFAULT_MIN_SHELL,
            palette: None,
            max_influences: 4,
            lossless: false,
            max_work: MAX_BAKE_WORK,
            texture_size: DEFAULT_TEXTURE_SIZE,
            texture_format: sinew::raster::TexelFormat::Rgba8,
        }
    }
}
