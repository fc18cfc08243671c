//! [`BakeReport`] and [`ClipReport`]: what a bake did (clips' sizes, errors and work, clamped
//! vertices, dropped triangles, parts, file size).

/// What baking one clip gave.
#[derive(Debug, Clone)]
pub struct ClipReport {
    /// Clip name.
    pub name: String,
    /// Clip length in seconds.
    pub duration: f32,
    /// Tracks written.
    pub tracks: usize,
    /// Keys in the source channels.
    pub source_keys: usize,
    /// Keys written.
    pub baked_keys: usize,
    /// Distinct source key times.
    pub source_times: usize,
    /// Reference size: 10 `f32` per joint per distinct source key time.
    pub raw_bytes: usize,
    /// Size of the clip section.
    pub baked_bytes: usize,
    /// Largest virtual-vertex error measured, in scene units (see `Rig::meters_per_unit`).
    pub max_error: f64,
    /// Joint with the largest error.
    pub max_error_joint: String,
    /// Index of the joint with the largest error (`None` when the error is 0).
    pub max_error_joint_index: Option<usize>,
    /// Clip time of the largest error, seconds (the clip's start when the error is 0).
    pub max_error_time: f64,
    /// Work steps the clip's reduction and measurement took (see [`BakeOptions::max_work`](super::BakeOptions::max_work)).
    pub work: u64,
    /// The search did not fit the work budget: the clip is stored lossless (every key `f32`,
    /// linear rotations slerped exactly) and was not measured (`max_error` is 0).
    pub fallback: bool,
}

/// What baking gave.
#[derive(Debug, Clone, Default)]
pub struct BakeReport {
    /// Per clip.
    pub clips: Vec<ClipReport>,
    /// Vertices whose influences were cut to `max_influences`.
    pub clamped_vertices: usize,
    /// Triangles dropped because they use one vertex twice (they cover no pixel).
    pub degenerate_triangles: usize,
    /// Mesh parts written.
    pub parts: usize,
    /// File size.
    pub bytes: usize,
    /// Per texture written.
    pub textures: Vec<super::TextureReport>,
    /// Bytes of the morph-target and morph-weight sections.
    pub morph_bytes: usize,
    /// Bytes of the spring-bone section (0 without spring bones).
    pub spring_bytes: usize,
    /// The largest bound on the vertex displacement (scene units) that the encoding of the morph
    /// targets or of a weight track meets (0 for lossless or quantization-free bakes).
    pub morph_bound: f64,
}
