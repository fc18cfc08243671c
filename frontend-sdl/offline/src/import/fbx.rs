//! FBX importer: `.fbx` files (binary and ASCII) to a [`Rig`], through the ufbx loader.
//!
//! ufbx reads the file and answers what FBX makes hard: pre- and post-rotations, rotation and
//! scaling pivots and offsets, rotation orders, scaling inheritance, geometric transforms, units
//! and axes, and the evaluation of animation curves. The importer keeps its answers:
//!
//! - **Space.** The scene is converted on load to glTF's convention: meters, +Y up, +Z front,
//!   right-handed. The conversion is folded into the nodes' transforms and the geometry (no
//!   helper node above the scene), so [`Rig::meters_per_unit`] is `None`.
//! - **Hierarchy.** Every node below ufbx's root becomes a [`RigJoint`] (the root itself only
//!   when it carries a transform), parents first, with a unique name and its local transform as
//!   ufbx evaluates it without animation. Geometric transforms are baked into the meshes; where
//!   one mesh is instanced under several geometric transforms, or where a node inherits scale in
//!   a way a TRS hierarchy cannot express, ufbx adds helper nodes, which become joints too.
//! - **Skins.** One [`RigSkin`] per skin deformer that an imported mesh uses: its joints are the
//!   clusters' bone nodes, each inverse bind matrix the cluster's `geometry_to_bone` (mesh
//!   vertices, in the mesh's own space, to the bone's space at bind time: exactly what glTF's
//!   skinning, which ignores the mesh node's transform, multiplies by). A vertex that no
//!   cluster weights follows the mesh's node, as ufbx skins it: the skin gets that node as one
//!   more joint.
//! - **Meshes.** One [`RigMesh`] per node instance of a mesh (a skinned mesh once, its first
//!   instance: skinning ignores the instance's transform), one [`RigPrimitive`] per material,
//!   faces triangulated by ufbx. Per vertex: position, normal (generated where the file has
//!   none), tangent with handedness (when the file has tangents and bitangents), the first UV
//!   set (`v` flipped to glTF's top-left origin), the first color set, and every skin influence
//!   (weights normalized; negative ones dropped with a note). Corners that share a vertex and
//!   all its attributes share a rig vertex.
//! - **Morph targets.** Each channel of the mesh's blend deformers is a morph target (position
//!   and, where the file has them, normal deltas, of the channel's full-weight shape) with the
//!   channel's weight as its default; in-between shapes are left out with a note.
//! - **Materials.** Base color (factor, converted from the sRGB FBX colors to linear, and the
//!   diffuse texture: embedded content, or a file beside the `.fbx` found by its relative path
//!   or its bare name), decoded by the glTF importer's image decoders (PNG, JPEG, WebP). A
//!   texture that is missing or does not decode leaves the material untextured, with a note.
//! - **Clips.** Each animation stack becomes a [`RigClip`] (times in seconds on the file's own
//!   time line): ufbx bakes every animated node's local transform into linear keys (at the
//!   source keys, resampled where its curves are not linear, at a multiple of the file's frame
//!   rate of at least 30 per second), which become LINEAR translation, rotation and scale
//!   channels (quaternions kept on one hemisphere from key to key). Animated blend-shape
//!   weights become LINEAR morph-weight channels.
//!
//! Nothing read from the file is trusted: ufbx checks the file's structure and indices (out of
//! range indices are clamped), ufbx's memory is capped by the input's size, and every value the
//! importer reads is range- or finite-checked. A bad file gives an [`FbxError`]; things that are
//! skipped or repaired are listed in [`Rig::notes`].
//!
//! Without the `fbx` cargo feature ([`DECODES_FBX`]), every file is refused with
//! [`FbxError::NotInBuild`].
//!
//! # Files
//!
//! - `error`: [`FbxError`].
//! - `scene` (feature `fbx`): ufbx's load options and the import's shared state.
//! - `hierarchy`: joints; `meshes`: meshes, skins and morph targets; `materials`: materials
//!   and images; `animations`: clips.
//!
//! [`RigJoint`]: crate::rig::RigJoint
//! [`RigSkin`]: crate::rig::RigSkin
//! [`RigMesh`]: crate::rig::RigMesh
//! [`RigPrimitive`]: crate::rig::RigPrimitive
//! [`RigClip`]: crate::rig::RigClip

use std::path::Path;

use crate::rig::Rig;

mod error;

#[cfg(feature = "fbx")]
mod animations;
#[cfg(feature = "fbx")]
mod hierarchy;
#[cfg(feature = "fbx")]
mod materials;
#[cfg(feature = "fbx")]
mod meshes;
#[cfg(feature = "fbx")]
mod scene;

#[cfg(all(test, feature = "fbx"))]
mod tests;

pub use error::FbxError;

/// True when this build imports FBX files (the `fbx` cargo feature); without it, every file is
/// refused with [`FbxError::NotInBuild`].
pub const DECODES_FBX: bool = cfg!(feature = "fbx");

/// Most nodes a file may have (ufbx's root and helper nodes included). Guards against hostile
/// inputs; the baker applies the runtime's own joint limit later.
pub const MAX_NODES: usize = 1 << 16;

/// Most bytes ufbx may allocate for one import (the scene it builds, and separately its
/// scratch memory and each baked animation stack), below [`MEMORY_PER_INPUT_BYTE`] per byte of
/// input.
pub const MAX_MEMORY: usize = 1 << 30;

/// ufbx may allocate at most this many bytes per byte of input (and at least [`MIN_MEMORY`]):
/// FBX arrays are zlib-compressed, so a small file can otherwise ask for [`MAX_MEMORY`].
pub const MEMORY_PER_INPUT_BYTE: usize = 256;

/// Memory limit of a small input (see [`MEMORY_PER_INPUT_BYTE`]).
pub const MIN_MEMORY: usize = 64 << 20;

/// Imports an FBX file. Textures that are files are looked up next to it; the rig is named
/// after the file stem.
///
/// # Errors
///
/// [`FbxError::NotInBuild`] before anything is read when this build leaves FBX out,
/// [`FbxError::Io`] when the file cannot be read, and every error of [`load_bytes`].
pub fn load_file(path: &Path) -> Result<Rig, FbxError> {
    if !DECODES_FBX {
        return Err(FbxError::NotInBuild { feature: "fbx" });
    }
    let bytes = std::fs::read(path).map_err(|source| FbxError::Io { path: path.to_path_buf(), source })?;
    let name = path.file_stem().map_or_else(|| "fbx".to_owned(), |s| s.to_string_lossy().into_owned());
    let base = path.parent().unwrap_or_else(|| Path::new("."));
    load_bytes(&bytes, Some(base), &name)
}

/// Imports an FBX file from memory (binary or ASCII).
///
/// `base_dir` is where texture files are looked up (by their relative path, then by their bare
/// file name); `None` reads embedded textures only. `name` becomes [`Rig::name`].
///
/// # Errors
///
/// - [`FbxError::NotInBuild`]: this build leaves FBX out (the `fbx` cargo feature).
/// - [`FbxError::Ufbx`]: ufbx refused the file, or could not bake an animation stack (its
///   description of why).
/// - [`FbxError::TooManyNodes`], [`FbxError::TooManyJoints`]: over [`MAX_NODES`], or a skin of
///   more joints than a joint index holds.
/// - [`FbxError::NonFinite`]: a value the rig needs is NaN or infinite.
/// - [`FbxError::Nothing`]: the file has no node, mesh or animation the rig can hold.
pub fn load_bytes(bytes: &[u8], base_dir: Option<&Path>, name: &str) -> Result<Rig, FbxError> {
    #[cfg(feature = "fbx")]
    {
        scene::import(bytes, base_dir, name)
    }
    #[cfg(not(feature = "fbx"))]
    {
        let _ = (bytes, base_dir, name);
        Err(FbxError::NotInBuild { feature: "fbx" })
    }
}

#[cfg(all(test, not(feature = "fbx")))]
mod not_in_build {
    use super::*;

    /// Without the `fbx` feature, a `.fbx` file is refused by name before it is read.
    #[test]
    fn fbx_files_are_refused_with_the_feature_to_enable() {
        let e = crate::import::load(Path::new("/nonexistent/model.fbx"), None).expect_err("no FBX in this build");
        assert_eq!(e.to_string(), "FBX import is not in this build of sinew (cargo feature `fbx`)");
        assert!(matches!(load_bytes(b"Kaydara FBX Binary", None, "x"), Err(FbxError::NotInBuild { feature: "fbx" })));
    }
}
