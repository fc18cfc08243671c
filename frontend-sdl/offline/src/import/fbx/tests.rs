//! Unit tests of the FBX importer on a hand-written scene (`tests/fuzz/regressions/fbx/
//! skinned-morph.fbx`, also a seed of the fuzz target) and variants of it: hierarchy, skin,
//! mesh, material, morph target and clips as the file states them; unweighted vertices; an
//! embedded and a file texture; files that are not FBX or hold nothing usable.

use super::*;
use crate::rig::{ChannelTarget, Interpolation};

/// Two bones, a skinned quad with a material and a blend shape, one stack "wave".
const SCENE: &str = include_str!("../../../../../tests/fuzz/regressions/fbx/skinned-morph.fbx");

fn import(text: &str) -> Rig {
    load_bytes(text.as_bytes(), None, "scene").unwrap_or_else(|e| panic!("{e}"))
}

fn close(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-5)
}

#[test]
fn the_scene_imports_as_written() {
    let rig = import(SCENE);
    assert_eq!(rig.name, "scene");
    assert_eq!(rig.meters_per_unit, None);
    let names: Vec<(&str, Option<usize>)> = rig.joints.iter().map(|j| (j.name.as_str(), j.parent)).collect();
    assert_eq!(names, [("root", None), ("tip", Some(0)), ("quad", None)]);
    let tip = rig.joints[1].rest;
    assert!(close(&[tip.translation.x, tip.translation.y, tip.translation.z], &[0.0, 1.0, 0.0]));

    // The skin: the clusters' bones, their geometry-to-bone matrices.
    assert_eq!(rig.skins.len(), 1);
    let skin = &rig.skins[0];
    assert_eq!(skin.joints, [0, 1]);
    assert!(close(&skin.inverse_bind[1][12..16], &[0.0, -1.0, 0.0, 1.0]), "{:?}", skin.inverse_bind[1]);

    // The quad: two triangles over four vertices, skinned, textured coordinates flipped to
    // glTF's top-left origin, one influence per vertex normalized to 1.
    assert_eq!(rig.meshes.len(), 1);
    let mesh = &rig.meshes[0];
    assert_eq!((mesh.name.as_str(), mesh.skin, mesh.node, mesh.instance), ("quad", Some(0), None, Some(2)));
    let p = &mesh.primitives[0];
    assert_eq!((p.positions.len(), p.indices.len(), p.influences), (4, 6, 1));
    assert!(p.joint_weights.iter().all(|&w| w == 1.0));
    for (v, pos) in p.positions.iter().enumerate() {
        let expected = if pos[1] > 0.5 { 1 } else { 0 };
        assert_eq!(p.joint_indices[v], expected, "vertex {v} at {pos:?}");
        let uv = p.texcoords.as_ref().expect("texture coordinates")[v];
        assert!(close(&uv, &[pos[0], 1.0 - pos[1]]), "{uv:?} at {pos:?}");
        let n = p.normals.as_ref().expect("generated normals")[v];
        assert!(close(&n, &[0.0, 0.0, 1.0]), "{n:?}");
    }

    // The material: DiffuseColor (1, 0.5, 0) in sRGB, as linear light.
    let m = &rig.materials[p.material.expect("a material")];
    assert_eq!(m.name, "red");
    assert!(close(&m.base_color, &[1.0, 0.214_041_14, 0.0, 1.0]), "{:?}", m.base_color);
    assert!(m.texture.is_none());

    // The blend shape: +0.5 z at the top vertices, default weight 25 %.
    assert_eq!(mesh.weights, [0.25]);
    let target = &p.targets[0];
    for (v, pos) in p.positions.iter().enumerate() {
        let dz = if pos[1] > 0.5 { 0.5 } else { 0.0 };
        assert!(close(&target.positions[v], &[0.0, 0.0, dz]), "{:?}", target.positions[v]);
    }

    // The clip: the root's rotation about z from 0 to 90° over a second, resampled by ufbx
    // (FBX interpolates Euler angles) on one hemisphere; the weight from 0 to 1.
    assert_eq!(rig.clips.len(), 1);
    let clip = &rig.clips[0];
    assert_eq!(clip.name, "wave");
    assert_eq!(clip.time_range(), (0.0, 1.0));
    let rot = clip.channels.iter().find(|c| c.target == ChannelTarget::Rotation).expect("a rotation channel");
    assert_eq!((rot.joint, rot.interpolation), (0, Interpolation::Linear));
    assert!(rot.times.windows(2).all(|w| w[0] < w[1]));
    let last = &rot.values[rot.values.len() - 4..];
    let h = std::f32::consts::FRAC_1_SQRT_2;
    assert!(close(last, &[0.0, 0.0, h, h]) || close(last, &[0.0, 0.0, -h, -h]), "{last:?}");
    for q in rot.values.chunks(4).collect::<Vec<_>>().windows(2) {
        assert!(q[0].iter().zip(q[1]).map(|(a, b)| a * b).sum::<f32>() > 0.0);
    }
    assert_eq!(clip.weights.len(), 1);
    let w = &clip.weights[0];
    assert_eq!((w.mesh, w.interpolation), (0, Interpolation::Linear));
    assert!(close(&[w.values[0], w.values[w.values.len() - 1]], &[0.0, 1.0]), "{:?}", w.values);
    assert!(rig.notes.is_empty(), "{:?}", rig.notes);

    // And it bakes.
    crate::model::Model::from_rig(&rig, &crate::bake::BakeOptions::default()).expect("bakes");
}

/// A vertex no cluster weights follows the mesh's node: the skin gets the node as one more
/// joint, bound at its geometry transform (identity here).
#[test]
fn unweighted_vertices_follow_the_mesh_node() {
    let text = SCENE.replacen(
        "Indexes: *2 {\n\t\t\ta: 0,1\n\t\t}\n\t\tWeights: *2 {\n\t\t\ta: 1,1",
        "Indexes: *1 {\n\t\t\ta: 0\n\t\t}\n\t\tWeights: *1 {\n\t\t\ta: 1",
        1,
    );
    assert_ne!(text, SCENE);
    let rig = import(&text);
    let skin = &rig.skins[0];
    assert_eq!(skin.joints, [0, 1, 2]);
    assert!(close(&skin.inverse_bind[2], &sinew::math::Mat4::<f32>::IDENTITY.to_cols_array()));
    let p = &rig.meshes[0].primitives[0];
    let fallback = p.positions.iter().position(|q| q[0] > 0.5 && q[1] < 0.5).expect("vertex (1, 0)");
    assert_eq!((p.joint_indices[fallback], p.joint_weights[fallback]), (2, 1.0));
    assert!(rig.notes.iter().any(|n| n.contains("1 vertices have no skin weight")), "{:?}", rig.notes);
}

/// A 2 × 2 PNG: red, green, blue, white.
fn png() -> Vec<u8> {
    let mut out = Vec::new();
    let mut e = png::Encoder::new(&mut out, 2, 2);
    e.set_color(png::ColorType::Rgba);
    let mut w = e.write_header().expect("header");
    w.write_image_data(&[255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255]).expect("pixels");
    drop(w);
    out
}

/// The scene with a diffuse texture: a video named `dir/tiny.png`, its content embedded when
/// `content` is given.
fn textured(content: Option<&[u8]>) -> String {
    use base64::Engine;
    let content = content
        .map(|c| format!("\t\tContent: , \"{}\"\n", base64::engine::general_purpose::STANDARD.encode(c)))
        .unwrap_or_default();
    let objects = format!(
        "\tVideo: 600, \"Video::tiny\", \"Clip\" {{\n\t\tType: \"Clip\"\n\t\tFilename: \"C:/elsewhere/tiny.png\"\n\t\tRelativeFilename: \"dir\\\\tiny.png\"\n{content}\t}}\n\tTexture: 601, \"Texture::tiny\", \"\" {{\n\t\tType: \"TextureVideoClip\"\n\t\tVersion: 202\n\t\tTextureName: \"Texture::tiny\"\n\t\tMedia: \"Video::tiny\"\n\t\tFileName: \"C:/elsewhere/tiny.png\"\n\t\tRelativeFilename: \"dir\\\\tiny.png\"\n\t}}\n"
    );
    SCENE.replacen("\tAnimationStack: 500", &format!("{objects}\tAnimationStack: 500"), 1).replacen(
        "\tC: \"OO\",501,500",
        "\tC: \"OO\",600,601\n\tC: \"OP\",601,200,\"DiffuseColor\"\n\tC: \"OO\",501,500",
        1,
    )
}

#[test]
fn embedded_and_file_textures_are_decoded() {
    let png = png();
    let check = |rig: &Rig| {
        let m = &rig.materials[0];
        let t = m.texture.expect("a texture");
        let image = &rig.images[t.image];
        assert_eq!((image.name.as_str(), image.width, image.height), ("tiny.png", 2, 2));
        assert_eq!(&image.rgba[..8], &[255, 0, 0, 255, 0, 255, 0, 255]);
    };
    check(&import(&textured(Some(&png))));

    // The same texture as a file beside the .fbx, at its relative path.
    let dir = std::env::temp_dir().join(format!("sinew-fbx-texture-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("dir")).expect("temp dir");
    std::fs::write(dir.join("dir/tiny.png"), &png).expect("png");
    let text = textured(None);
    let rig = load_bytes(text.as_bytes(), Some(&dir), "scene").expect("imports");
    check(&rig);
    // Without a folder to look in, or with the file missing, the material is untextured, with a note.
    for base in [None, Some(std::env::temp_dir().join("sinew-fbx-no-such-dir"))] {
        let rig = load_bytes(text.as_bytes(), base.as_deref(), "scene").expect("imports");
        assert!(rig.materials[0].texture.is_none());
        assert!(rig.notes.iter().any(|n| n.contains("texture \"tiny\" left out")), "{:?}", rig.notes);
    }
    // Content that is not an image the decoders read: a note.
    let rig = import(&textured(Some(b"GIF89a....")));
    assert!(rig.materials[0].texture.is_none());
    assert!(rig.notes.iter().any(|n| n.contains("not a PNG, JPEG or WebP")), "{:?}", rig.notes);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_and_empty_files_are_refused_on_one_line() {
    let e = load_bytes(b"not an fbx file", None, "x").expect_err("not FBX");
    assert!(matches!(e, FbxError::Ufbx { ref what, .. } if what == "load"), "{e:?}");
    assert!(!e.to_string().contains('\n'), "{e}");
    let empty = "; FBX 7.4.0 project file\nFBXHeaderExtension:  {\n\tFBXVersion: 7400\n}\n";
    let e = load_bytes(empty.as_bytes(), None, "x").expect_err("nothing in it");
    assert!(matches!(e, FbxError::Nothing), "{e:?}");
    assert_eq!(e.to_string(), "FBX: no skeleton, mesh or animation sinew can use");
    // The scene cut anywhere never panics.
    for cut in (0..SCENE.len()).step_by(97) {
        if let Err(e) = load_bytes(&SCENE.as_bytes()[..cut], None, "x") {
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }
}

#[test]
fn errors_are_one_line() {
    assert_eq!(error::one_line("a\nb\r\n  c\t"), "a b c");
    let e = FbxError::NotInBuild { feature: "fbx" };
    assert_eq!(e.to_string(), "FBX import is not in this build of sinew (cargo feature `fbx`)");
    let e = FbxError::Ufbx { what: "load".into(), description: "Bad\nthing".into() };
    assert_eq!(e.to_string(), "FBX load: Bad thing");
}

#[test]
fn resampling_hits_every_frame_at_30_per_second_or_more() {
    assert_eq!(animations::resample_rate(24.0), 48.0);
    assert_eq!(animations::resample_rate(25.0), 50.0);
    assert_eq!(animations::resample_rate(30.0), 30.0);
    assert_eq!(animations::resample_rate(60.0), 60.0);
    assert_eq!(animations::resample_rate(f64::NAN), 30.0);
    assert_eq!(animations::resample_rate(0.0), 30.0);
}

#[test]
fn memory_follows_the_input_size() {
    assert_eq!(scene::memory_limit(0), MIN_MEMORY);
    assert_eq!(scene::memory_limit(1 << 20), MEMORY_PER_INPUT_BYTE << 20);
    assert_eq!(scene::memory_limit(usize::MAX), MAX_MEMORY);
}

/// The quad without its skin, on a node with a geometric translation (which moves the mesh but
/// not the node's children): a rigid mesh on its node, the offset baked into its vertices. A
/// second node instancing the same geometry under another geometric translation gets ufbx's
/// helper node, a joint the mesh follows.
#[test]
fn geometric_transforms_are_baked_into_rigid_meshes() {
    let text = SCENE
        .replacen("\tC: \"OO\",300,100\n", "", 1)
        .replacen("\tC: \"OO\",400,100\n", "", 1)
        .replacen(
            "Model: 3, \"Model::quad\", \"Mesh\" {\n\t\tVersion: 232\n\t\tProperties70:  {\n",
            "Model: 3, \"Model::quad\", \"Mesh\" {\n\t\tVersion: 232\n\t\tProperties70:  {\n\t\t\tP: \"Lcl Translation\", \"Lcl Translation\", \"\", \"A\",5,0,0\n\t\t\tP: \"GeometricTranslation\", \"Vector3D\", \"Vector\", \"\",0,0,2\n",
            1,
        );
    let rig = import(&text);
    assert!(rig.skins.is_empty());
    let mesh = &rig.meshes[0];
    let quad = rig.joints.iter().position(|j| j.name == "quad").expect("the quad's joint");
    assert_eq!((mesh.skin, mesh.node, mesh.instance), (None, Some(quad), Some(quad)));
    let p = &mesh.primitives[0];
    assert_eq!(p.influences, 0);
    assert!(p.positions.iter().all(|v| (v[2] - 2.0).abs() < 1e-6), "{:?}", p.positions);
    assert!(p.targets.iter().all(|t| t.positions.iter().all(|d| *d == [0.0; 3])) || mesh.weights.is_empty());

    let twice = text
        .replacen(
            "\tMaterial: 200",
            "\tModel: 4, \"Model::again\", \"Mesh\" {\n\t\tVersion: 232\n\t\tProperties70:  {\n\t\t\tP: \"GeometricTranslation\", \"Vector3D\", \"Vector\", \"\",0,0,-3\n\t\t}\n\t}\n\tMaterial: 200",
            1,
        )
        .replacen("\tC: \"OO\",3,0\n", "\tC: \"OO\",3,0\n\tC: \"OO\",4,0\n\tC: \"OO\",100,4\n\tC: \"OO\",200,4\n", 1);
    let rig = import(&twice);
    assert_eq!(rig.meshes.len(), 2, "{:?}", rig.meshes.iter().map(|m| &m.name).collect::<Vec<_>>());
    let model = crate::model::Model::from_rig(&rig, &crate::bake::BakeOptions::default()).expect("bakes");
    // Each instance's vertices, placed by its node's world matrix, sit at its own offset.
    let (mut cursor, mut pose, mut world) = (Vec::new(), Vec::new(), Vec::new());
    model.sample(None, 0.0, sinew::clip::RotationInterpolation::Slerp, &mut cursor, &mut pose).expect("rest pose");
    model.world(&pose, &mut world).expect("world");
    let mut depths = Vec::new();
    for m in 0..2 {
        let parts = model
            .skin_mesh(m, &world, &[], &crate::model::DqPalette::default(), crate::model::Skinning::Lbs)
            .expect("placed");
        let z: Vec<f32> = parts.iter().flat_map(|p| p.positions.iter().map(|v| v.z)).collect();
        assert!(z.windows(2).all(|w| (w[0] - w[1]).abs() < 1e-6), "{z:?}");
        depths.push(z[0]);
    }
    depths.sort_by(f32::total_cmp);
    assert!((depths[0] + 3.0).abs() < 1e-5 && (depths[1] - 2.0).abs() < 1e-5, "{depths:?}");
    let names: Vec<(&str, Option<usize>)> = rig.joints.iter().map(|j| (j.name.as_str(), j.parent)).collect();
    assert_eq!(
        names,
        [
            ("root", None),
            ("tip", Some(0)),
            ("quad", None),
            ("quad geometry", Some(2)),
            ("again", None),
            ("again geometry", Some(4))
        ]
    );
    let placed: Vec<(&str, Option<usize>)> = rig.meshes.iter().map(|m| (m.name.as_str(), m.node)).collect();
    assert_eq!(placed, [("quad@quad geometry", Some(3)), ("quad@again geometry", Some(5))]);
    assert!(rig.notes.iter().any(|n| n.starts_with("2 helper nodes")), "{:?}", rig.notes);
}

/// A file in centimeters (UnitScaleFactor 1) comes out in meters: node translations, vertices,
/// bind matrices and blend-shape deltas alike.
#[test]
fn centimeters_are_converted_to_meters() {
    let text = SCENE.replacen(
        "\"UnitScaleFactor\", \"double\", \"Number\", \"\",100",
        "\"UnitScaleFactor\", \"double\", \"Number\", \"\",1",
        1,
    );
    assert_ne!(text, SCENE);
    let rig = import(&text);
    let tip = rig.joints[1].rest;
    assert!(close(&[tip.translation.y, tip.scale.x], &[0.01, 1.0]), "{tip:?}");
    assert!(close(&rig.skins[0].inverse_bind[1][12..16], &[0.0, -0.01, 0.0, 1.0]));
    let p = &rig.meshes[0].primitives[0];
    let top = p.positions.iter().position(|v| v[1] > 0.005).expect("a top vertex");
    assert!(close(&p.positions[top][1..2], &[0.01]), "{:?}", p.positions[top]);
    assert!(close(&p.targets[0].positions[top], &[0.0, 0.0, 0.005]), "{:?}", p.targets[0].positions[top]);
}
