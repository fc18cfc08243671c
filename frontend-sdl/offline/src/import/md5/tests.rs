//! Tests of the md5 importer: Bob (a real model and its anim, `bob`), tiny hand-written files with
//! exact expected values (`tiny`), and bad input of every kind (`bad_input`). The helpers and the
//! tiny files are here.

use std::path::PathBuf;

use sinew::math::{Mat4, Quat, Transform, Vec3};

use super::*;
use crate::rig::{ChannelTarget, Interpolation, RigPrimitive};

mod bad_input;
mod bob;
mod tiny;

fn bob_paths() -> (PathBuf, PathBuf) {
    (sinew_assets::path("md5/boblamp/boblampclean.md5mesh"), sinew_assets::path("md5/boblamp/boblampclean.md5anim"))
}

fn bob_texts() -> (String, String) {
    let (m, a) = bob_paths();
    (std::fs::read_to_string(m).unwrap(), std::fs::read_to_string(a).unwrap())
}

fn bob() -> Rig {
    let (m, a) = bob_paths();
    load_files(&m, Some(&a)).unwrap()
}

/// A two-joint, one-triangle mesh. The child joint is rotated -90° about Z (x y z = 0 0
/// 0.7071068, w negative); its weight puts vertex 2 at (0, 1, 0) like the root's weight does.
const TINY_MESH: &str = r#"MD5Version 10 // header
commandline "test"

numJoints 2
numMeshes 1

joints {
	"root"	-1 ( 0 0 0 ) ( 0 0 0 )		//
	"child"	0 ( 0 0 1 ) ( 0 0 0.7071068 )		// root
}

mesh {
	shader "models\tiny/skin.tga"
	numverts 3
	vert 0 ( 0 0 ) 0 1
	vert 1 ( 1 0 ) 1 1
	vert 2 ( 0 1 ) 2 2

	numtris 1
	tri 0 0 2 1

	numweights 4
	weight 0 0 1 ( 0 0 0 )
	weight 1 0 1 ( 1 0 0 )
	weight 2 0 0.5 ( 0 1 0 )
	weight 3 1 0.5 ( -1 0 -1 )
}
"#;

/// Three frames at 10 fps: the root's Tx and the child's Qx Qy Qz are animated.
const TINY_ANIM: &str = r#"MD5Version 10
commandline ""

numFrames 3
numJoints 2
frameRate 10
numAnimatedComponents 4

hierarchy {
	"root"	-1 1 0	//
	"child"	0 56 1	// root
}

bounds {
	( 0 0 0 ) ( 1 1 1 )
	( 0 0 0 ) ( 1 1 1 )
	( 0 0 0 ) ( 1 1 1 )
}

baseframe {
	( 0 0 0 ) ( 0 0 0 )
	( 0 0 1 ) ( 0 0 0 )
}

frame 0 {
	0 0 0 0
}

frame 1 {
	2 0.9 0 0
}

frame 2 {
	2 -0.9 0 0
}
"#;

fn mesh_err(text: &str) -> Md5Error {
    let e = parse_mesh(text).unwrap_err();
    assert_eq!(e.location().file, Md5File::Mesh);
    e
}

fn anim_err(text: &str) -> Md5Error {
    let e = parse_anim(text).unwrap_err();
    assert_eq!(e.location().file, Md5File::Anim);
    e
}

fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "{from:?} must occur once");
    text.replacen(from, to, 1)
}

fn model_matrices(rig: &Rig, locals: &[Transform<f32>]) -> Vec<Mat4<f32>> {
    let mut model: Vec<Mat4<f32>> = Vec::with_capacity(locals.len());
    for (j, t) in rig.joints.iter().zip(locals) {
        let m = t.to_mat4();
        model.push(match j.parent {
            Some(p) => model[p] * m,
            None => m,
        });
    }
    model
}

fn max_diff(a: &[f32; 16], b: &[f32; 16]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// The invariants [`Rig`] documents: finite data, indices in range, sorted key times.
fn assert_rig_invariants(rig: &Rig) {
    for (i, j) in rig.joints.iter().enumerate() {
        assert!(j.rest.is_finite());
        assert!(j.parent.is_none_or(|p| p < i));
    }
    for skin in &rig.skins {
        assert!(skin.inverse_bind.iter().flatten().all(|v| v.is_finite()));
        assert!(skin.joints.iter().all(|&j| j < rig.joints.len()));
    }
    for p in rig.meshes.iter().flat_map(|m| &m.primitives) {
        assert!(p.positions.iter().flatten().all(|v| v.is_finite()));
        assert!(p.normals.iter().flatten().flatten().all(|v| v.is_finite()));
        assert!(p.indices.iter().all(|&i| (i as usize) < p.positions.len()));
        assert!(p.joint_indices.iter().all(|&j| (j as usize) < rig.joints.len()));
        assert!(p.joint_weights.iter().all(|v| v.is_finite()));
        assert_eq!(p.joint_indices.len(), p.positions.len() * p.influences);
    }
    for c in rig.clips.iter().flat_map(|c| &c.channels) {
        assert!(c.times.iter().all(|t| t.is_finite()));
        assert!(c.times.windows(2).all(|w| w[0] < w[1]));
        assert!(c.values.iter().all(|v| v.is_finite()));
        assert_eq!(c.values.len(), c.times.len() * c.target.components());
    }
}
