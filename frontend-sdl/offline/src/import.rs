//! Importers: files to [`Rig`], and a cache that loads each file once.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::rig::Rig;

pub mod bvh;
pub mod fbx;
pub mod gltf;
pub mod md5;
mod names;

/// Why a model could not be imported.
#[derive(Debug)]
pub enum ImportError {
    /// glTF import failed.
    Gltf(gltf::GltfError),
    /// md5 import failed.
    Md5(md5::LoadError),
    /// FBX import failed.
    Fbx(fbx::FbxError),
    /// BVH import failed.
    Bvh(bvh::BvhError),
    /// The file's extension is not one of `.glb`, `.gltf`, `.vrm`, `.md5mesh`, `.bvh`, `.fbx`.
    UnknownFormat(PathBuf),
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Gltf(e) => write!(f, "{e}"),
            // The caller names the mesh file; name the animation file when the error is there.
            Self::Md5(md5::LoadError::Md5 { path, error }) if error.location().file == md5::Md5File::Anim => {
                write!(f, "{}: {error}", path.display())
            }
            Self::Md5(md5::LoadError::Md5 { error, .. }) => write!(f, "{error}"),
            Self::Md5(e) => write!(f, "{e}"),
            Self::Fbx(e) => write!(f, "{e}"),
            // The caller names the file: its line and the fault.
            Self::Bvh(bvh::BvhError::Text { line, kind, .. }) => write!(f, "bvh line {line}: {kind}"),
            Self::Bvh(e) => write!(f, "{e}"),
            Self::UnknownFormat(p) => {
                write!(f, "{}: unknown model format (expected .glb, .gltf, .vrm, .md5mesh, .bvh or .fbx)", p.display())
            }
        }
    }
}

impl std::error::Error for ImportError {}

/// Imports a `.glb`, `.gltf`, `.vrm` (a VRM model, GLB), `.fbx` or `.md5mesh` file (with an
/// optional `.md5anim` for md5), or a `.bvh` file with [`bvh::BvhOptions::default`] (units
/// guessed; `anim` is not read; call [`bvh::load_file`] to give a scale).
///
/// # Errors
///
/// The importer's error, or [`ImportError::UnknownFormat`].
pub fn load(path: &Path, anim: Option<&Path>) -> Result<Rig, ImportError> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    match ext.as_str() {
        "glb" | "gltf" | "vrm" => gltf::load_file(path).map_err(ImportError::Gltf),
        "md5mesh" => md5::load_files(path, anim).map_err(ImportError::Md5),
        "fbx" => fbx::load_file(path).map_err(ImportError::Fbx),
        "bvh" => bvh::load_file(path, &bvh::BvhOptions::default()).map_err(ImportError::Bvh),
        _ => Err(ImportError::UnknownFormat(path.to_path_buf())),
    }
}

/// A model file and its optional animation file.
type CacheKey = (PathBuf, Option<PathBuf>);

/// Loads each model file once and shares the result.
#[derive(Debug, Default)]
pub struct AssetCache {
    models: Mutex<HashMap<CacheKey, Arc<Rig>>>,
}

impl AssetCache {
    /// An empty cache.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
    /// The model at `path` (and `anim`), imported on first use.
    ///
    /// # Errors
    ///
    /// As [`load`]; failures are not cached, so a fixed file loads on the next call.
    pub fn get(&self, path: &Path, anim: Option<&Path>) -> Result<Arc<Rig>, ImportError> {
        let key = (canonical(path), anim.map(canonical));
        if let Some(r) = self.models.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(r);
        }
        let rig = Arc::new(load(path, anim)?);
        if let Ok(mut m) = self.models.lock() {
            m.insert(key, rig.clone());
        }
        Ok(rig)
    }
    /// Number of cached models.
    #[must_use]
    pub fn len(&self) -> usize {
        self.models.lock().map(|m| m.len()).unwrap_or(0)
    }
    /// True when nothing is cached.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}
