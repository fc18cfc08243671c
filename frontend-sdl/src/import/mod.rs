//! Importers: files to [`Rig`](crate::rig::Rig).

pub mod gltf;
pub mod md5;
