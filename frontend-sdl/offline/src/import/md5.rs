//! Doom 3 md5 (`MD5Version 10`) importer: `.md5mesh` (skeleton and skinned meshes) and `.md5anim`
//! (a sampled clip) to [`Rig`].
//!
//! # The format
//!
//! Both files are whitespace-separated text: words (keywords and numbers), double-quoted strings
//! (no escapes, on one line), parentheses, braces and `//` comments to the end of the line. The
//! parser here is hand-written and strict: sections come in the order Doom 3 writes them, every
//! declared count must match the entries that follow, every entry index must equal its position,
//! every index must be in range and every number finite. It never panics and never allocates from
//! a declared count alone (vectors grow as entries are actually parsed), so it can take hostile
//! input; fixed caps ([`MAX_JOINTS`], [`MAX_WEIGHTS_PER_VERTEX`], [`MAX_JOINT_FRAMES`]) bound what
//! the conversion to a [`Rig`] can allocate.
//!
//! `.md5mesh`: `MD5Version 10`, `commandline "…"`, `numJoints`, `numMeshes`, a `joints { }` block
//! of `"name" parent ( x y z ) ( qx qy qz )` and `numMeshes` `mesh { }` blocks, each with
//! `shader "…"`, `numverts` / `vert i ( u v ) startWeight countWeight`, `numtris` /
//! `tri i a b c` and `numweights` / `weight i joint bias ( x y z )`.
//!
//! `.md5anim`: `MD5Version 10`, `commandline`, `numFrames`, `numJoints`, `frameRate`,
//! `numAnimatedComponents`, `hierarchy { "name" parent flags startIndex }`, `bounds { ( min )
//! ( max ) }` (one per frame), `baseframe { ( x y z ) ( qx qy qz ) }` (one per joint) and
//! `numFrames` `frame i { … }` blocks of `numAnimatedComponents` numbers each.
//!
//! # Conventions
//!
//! - **Axes and units.** md5 is Z-up, right-handed, in Doom units (about an inch). The importer
//!   keeps the file's axes and units unchanged; a viewer that wants Y-up rotates the whole rig.
//! - **Quaternions** store only `x y z`; `w = -sqrt(max(0, 1 - x² - y² - z²))` (the negative
//!   root, as Doom 3 computes it), then the quaternion is normalized. An `x y z` longer than 1
//!   (beyond a 1e-3 rounding tolerance on the squared length) is an error.
//! - **Spaces.** Mesh joints are in model space (the bind pose); anim baseframe and frame values
//!   are local to the parent joint (model space for a root).
//! - **Bind positions** are `Σ bias × (joint_position + joint_rotation.rotate(weight_position))`
//!   over a vertex's weights, with the raw biases of the file (a vertex whose biases do not sum to
//!   1 within 1e-3 is kept as is and reported in [`Rig::notes`]). A negative bias, or a vertex
//!   whose biases are all 0 (it would follow no joint), is an error.
//! - **Triangles** that repeat a vertex are kept (the baker drops them).
//! - **Winding.** Doom 3 lists triangles clockwise when seen from the front; OpenGL and glTF
//!   treat counter-clockwise as front-facing. Each `tri i a b c` becomes the rig triangle
//!   `a c b`, so back-face culling with the default `GL_CCW` front face keeps the outside.
//! - **Normals** (md5 has none) are the area-weighted sum of the adjacent faces' normals
//!   (`(p1 - p0) × (p2 - p0)` of the counter-clockwise triangles), normalized; a vertex with no
//!   non-degenerate face gets `+Z`.
//!
//! # Mapping to the rig
//!
//! - Joint `i` of the mesh is [`Rig::joints`]`[i]`; its rest transform is the local bind
//!   transform `parent_model⁻¹ × model` (translation `parent_rot⁻¹ (pos - parent_pos)`, rotation
//!   `parent_rot⁻¹ × rot`, scale 1). Empty or repeated names are made unique (noted).
//! - One skin over all joints (skin joint `i` = rig joint `i`), inverse bind matrix = inverse of
//!   each joint's model-space bind matrix.
//! - Each md5 `mesh` block becomes one [`RigMesh`] with one [`RigPrimitive`], named after its
//!   shader's file stem (made unique), with its own color from a small palette. Influences per
//!   vertex = the largest `countWeight` in that mesh; shorter vertices are padded with joint 0,
//!   weight 0. Texture coordinates are not kept (the rig has no UV channel; noted).
//! - Each anim becomes one [`RigClip`] with, per joint, a [`Interpolation::Linear`] translation
//!   and rotation channel keyed at `frame / frameRate` seconds. Consecutive rotation keys are kept
//!   in the same hemisphere (a key is negated when its dot product with the previous key is
//!   negative) so interpolation takes the short path. Bounds are not kept.
//!
//! # Files
//!
//! - `lexer`: tokens and lines; `parser`: the grammar's building blocks shared by both files.
//! - `mesh`, `anim`: the `.md5mesh` and `.md5anim` grammars and the structures they fill.
//! - `convert`: those structures to a [`Rig`]: joints, skin, meshes, clips.
//! - `error`: [`Md5Error`], [`Location`], [`LoadError`]; `limits`: the version and the caps.
//!
//! [`RigMesh`]: crate::rig::RigMesh
//! [`RigPrimitive`]: crate::rig::RigPrimitive
//! [`RigClip`]: crate::rig::RigClip
//! [`Interpolation::Linear`]: crate::rig::Interpolation::Linear

use std::path::Path;

use crate::rig::Rig;

mod anim;
mod convert;
mod error;
mod lexer;
mod limits;
mod mesh;
mod parser;

#[cfg(test)]
mod tests;

pub use anim::{parse_anim, Md5Anim, Md5AnimJoint};
pub use convert::to_rig;
pub use error::{LoadError, Location, Md5Error, Md5File, TokenKind};
pub use limits::{MAX_JOINTS, MAX_JOINT_FRAMES, MAX_WEIGHTS_PER_VERTEX};
pub use mesh::{parse_mesh, Md5Joint, Md5Mesh, Md5MeshPart, Md5Vert, Md5Weight};

/// Parses an `.md5mesh` text and optionally an `.md5anim` text into a [`Rig`] named `name`; the
/// anim's clip is named `name` too.
///
/// # Errors
///
/// Whatever [`parse_mesh`], [`parse_anim`] and [`to_rig`] return.
pub fn load(mesh_text: &str, anim_text: Option<&str>, name: &str) -> Result<Rig, Md5Error> {
    let mesh = parse_mesh(mesh_text)?;
    match anim_text {
        Some(text) => {
            let anim = parse_anim(text)?;
            to_rig(&mesh, &[(name, &anim)], name)
        }
        None => to_rig(&mesh, &[], name),
    }
}

fn read_text(path: &Path) -> Result<String, LoadError> {
    let bytes = std::fs::read(path).map_err(|source| LoadError::Io { path: path.to_owned(), source })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn stem(path: &Path, fallback: &str) -> String {
    path.file_stem().map_or_else(|| fallback.to_owned(), |s| s.to_string_lossy().into_owned())
}

/// Reads an `.md5mesh` and, when given, an `.md5anim` into a [`Rig`] named after the mesh's file
/// stem, with the clip named after the anim's file stem. No other file is looked for. Bytes that
/// are not UTF-8 (in names) are replaced, not rejected.
///
/// # Errors
///
/// [`LoadError::Io`] when a file cannot be read; [`LoadError::Md5`] (with the path of the file
/// at fault) for whatever [`parse_mesh`], [`parse_anim`] and [`to_rig`] reject.
pub fn load_files(mesh: &Path, anim: Option<&Path>) -> Result<Rig, LoadError> {
    let mesh_text = read_text(mesh)?;
    let parsed = parse_mesh(&mesh_text).map_err(|error| LoadError::Md5 { path: mesh.to_owned(), error })?;
    let name = stem(mesh, "md5");
    let Some(anim_path) = anim else {
        return to_rig(&parsed, &[], &name).map_err(|error| LoadError::Md5 { path: mesh.to_owned(), error });
    };
    let anim_text = read_text(anim_path)?;
    let parsed_anim = parse_anim(&anim_text).map_err(|error| LoadError::Md5 { path: anim_path.to_owned(), error })?;
    let clip = stem(anim_path, "clip");
    to_rig(&parsed, &[(&clip, &parsed_anim)], &name).map_err(|error| {
        let path = match error.location().file {
            Md5File::Mesh => mesh,
            Md5File::Anim => anim_path,
        };
        LoadError::Md5 { path: path.to_owned(), error }
    })
}
