//! Bob (`boblampclean`): counts, weights, bind pose, skinned frames, clip keys and winding.

use super::*;

#[test]
fn bob_counts() {
    let rig = bob();
    assert_rig_invariants(&rig);
    assert_eq!(rig.name, "boblampclean");
    assert_eq!(rig.joints.len(), 33);
    assert_eq!(rig.meshes.len(), 6);
    assert_eq!(rig.skins.len(), 1);
    assert_eq!(rig.skins[0].joints.len(), 33);
    assert_eq!(rig.skins[0].inverse_bind.len(), 33);
    let prims: Vec<&RigPrimitive> = rig.meshes.iter().map(|m| &m.primitives[0]).collect();
    assert!(rig.meshes.iter().all(|m| m.primitives.len() == 1 && m.skin == Some(0)));
    assert_eq!(prims.iter().map(|p| p.positions.len()).sum::<usize>(), 875);
    assert_eq!(prims.iter().map(|p| p.indices.len() / 3).sum::<usize>(), 1027);
    for p in &prims {
        assert_eq!(p.indices.len() % 3, 0);
        assert_eq!(p.joint_indices.len(), p.positions.len() * p.influences);
        assert_eq!(p.joint_weights.len(), p.positions.len() * p.influences);
        assert_eq!(p.normals.as_ref().unwrap().len(), p.positions.len());
        assert!(p.indices.iter().all(|&i| (i as usize) < p.positions.len()));
        assert!(p.joint_indices.iter().all(|&j| (j as usize) < 33));
    }
    let names: Vec<&str> = rig.meshes.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["guard1_body", "guard1_face", "guard1_helmet", "iron_grill", "round_grill", "guard1_body#5"]);
    let colors: std::collections::HashSet<[u32; 4]> = prims.iter().map(|p| p.color.map(f32::to_bits)).collect();
    assert_eq!(colors.len(), 6, "one color per mesh");
    assert_eq!(rig.joints[0].name, "origin");
    assert_eq!(rig.joints[0].parent, None);
    assert_eq!(rig.joints[32].name, "tiptoe.L");
    assert_eq!(rig.joints[32].parent, Some(31));

    assert_eq!(rig.clips.len(), 1);
    let clip = &rig.clips[0];
    assert_eq!(clip.name, "boblampclean");
    assert_eq!(clip.channels.len(), 66);
    for c in &clip.channels {
        assert_eq!(c.interpolation, Interpolation::Linear);
        assert_eq!(c.times.len(), 140);
        assert_eq!(c.values.len(), 140 * c.target.components());
        assert!(c.times.windows(2).all(|w| w[0] < w[1]));
    }
    let (t0, t1) = clip.time_range();
    assert_eq!(t0, 0.0);
    assert!((t1 - 139.0 / 24.0).abs() < 1e-6, "{t1}");

    let (m, a) = bob_texts();
    let anim = parse_anim(&a).unwrap();
    assert_eq!(anim.frame_count(), 140);
    assert_eq!(anim.frame_rate(), 24.0);
    assert_eq!(anim.animated_components(), 198);
    assert_eq!(anim.bounds().len(), 140);
    let mesh = parse_mesh(&m).unwrap();
    assert_eq!(mesh.commandline(), "");
    assert_eq!(mesh.meshes().iter().map(|p| p.weights.len()).sum::<usize>(), 867 + 220 + 80 + 18 + 38 + 135);
}

#[test]
fn bob_weights_sum_to_one() {
    let rig = bob();
    let mut worst = 0.0f32;
    for p in rig.meshes.iter().map(|m| &m.primitives[0]) {
        for v in p.joint_weights.chunks(p.influences) {
            worst = worst.max((v.iter().sum::<f32>() - 1.0).abs());
        }
    }
    println!("bob: largest |Σ weights - 1| = {worst:e}");
    assert!(worst <= 1e-5, "{worst}");
    assert!(!rig.notes.iter().any(|n| n.contains("sum")), "{:?}", rig.notes);
}

#[test]
fn bob_rest_pose_times_inverse_bind_is_identity() {
    let rig = bob();
    let rest: Vec<Transform<f32>> = rig.joints.iter().map(|j| j.rest).collect();
    let model = model_matrices(&rig, &rest);
    let identity = Mat4::<f32>::IDENTITY.to_cols_array();
    let mut worst = 0.0f32;
    for (m, ib) in model.iter().zip(&rig.skins[0].inverse_bind) {
        let palette = (*m * Mat4::from_cols_array(ib)).to_cols_array();
        worst = worst.max(max_diff(&palette, &identity));
    }
    println!("bob: largest |rest model × inverse bind - I| = {worst:e}");
    assert!(worst < 1e-4, "{worst}");
    // The rest chain reproduces the file's model-space joints.
    let mesh = parse_mesh(&bob_texts().0).unwrap();
    for (m, j) in model.iter().zip(mesh.joints()) {
        let d = (m.translation() - j.position).max_abs();
        assert!(d < 1e-4, "{d}");
    }
    // Skinning the bind positions with the rest palette gives them back.
    let mut worst_skin = 0.0f32;
    for p in rig.meshes.iter().map(|m| &m.primitives[0]) {
        for (vi, pos) in p.positions.iter().enumerate() {
            let bind = Vec3::from_array(*pos);
            let mut skinned = Vec3::ZERO;
            for k in 0..p.influences {
                let j = p.joint_indices[vi * p.influences + k] as usize;
                let palette = model[j] * Mat4::from_cols_array(&rig.skins[0].inverse_bind[j]);
                skinned += palette.transform_point3(bind) * p.joint_weights[vi * p.influences + k];
            }
            worst_skin = worst_skin.max((skinned - bind).max_abs());
        }
    }
    println!("bob: largest |rest-skinned - bind position| = {worst_skin:e}");
    assert!(worst_skin < 1e-4, "{worst_skin}");
    for j in &rig.joints {
        assert!(j.rest.is_finite());
        assert!((j.rest.rotation.length_squared() - 1.0).abs() < 1e-5);
    }
}

/// Linear blend skinning of the rig's bind positions with `model × inverse bind` equals md5's
/// own per-weight formula `Σ bias (joint_pos + joint_rot · weight_pos)` on every frame.
#[test]
fn bob_skinned_frames_match_md5_weights() {
    let (m, a) = bob_texts();
    let mesh = parse_mesh(&m).unwrap();
    let anim = parse_anim(&a).unwrap();
    let rig = to_rig(&mesh, &[("walk", &anim)], "bob").unwrap();
    let mut worst = 0.0f32;
    for frame in 0..anim.frame_count() {
        let pose = anim.pose(frame).unwrap();
        let model = model_matrices(&rig, &pose);
        assert!(model.iter().all(Mat4::is_finite));
        let palette: Vec<Mat4<f32>> =
            model.iter().zip(&rig.skins[0].inverse_bind).map(|(m, ib)| *m * Mat4::from_cols_array(ib)).collect();
        // World rotation of each joint, for md5's formula.
        let mut world_rot: Vec<Quat<f32>> = Vec::new();
        for (j, t) in rig.joints.iter().zip(&pose) {
            world_rot.push(match j.parent {
                Some(p) => world_rot[p] * t.rotation,
                None => t.rotation,
            });
        }
        for (part, rm) in mesh.meshes().iter().zip(&rig.meshes) {
            let prim = &rm.primitives[0];
            for (vi, v) in part.verts.iter().enumerate() {
                let mut md5 = Vec3::ZERO;
                for w in &part.weights[v.start_weight..v.start_weight + v.weight_count] {
                    md5 += (model[w.joint].translation() + world_rot[w.joint].rotate(w.position)) * w.bias;
                }
                let bind = Vec3::from_array(prim.positions[vi]);
                let mut lbs = Vec3::ZERO;
                for k in 0..prim.influences {
                    let j = prim.joint_indices[vi * prim.influences + k] as usize;
                    let w = prim.joint_weights[vi * prim.influences + k];
                    lbs += palette[j].transform_point3(bind) * w;
                }
                worst = worst.max((lbs - md5).max_abs());
            }
        }
    }
    println!("bob: largest |LBS - md5 weights| over 140 frames = {worst:e} (model is ~70 units tall)");
    assert!(worst < 1e-4, "{worst}");
}

#[test]
fn bob_clip_keys_follow_the_anim() {
    let (m, a) = bob_texts();
    let mesh = parse_mesh(&m).unwrap();
    let anim = parse_anim(&a).unwrap();
    let rig = to_rig(&mesh, &[("idle", &anim)], "bob").unwrap();
    let clip = &rig.clips[0];
    assert_eq!(clip.name, "idle");
    for c in &clip.channels {
        let n = c.target.components();
        for (f, key) in c.values.chunks(n).enumerate() {
            let local = anim.pose(f).unwrap()[c.joint];
            match c.target {
                ChannelTarget::Translation => {
                    assert_eq!(key, &local.translation.to_array());
                }
                ChannelTarget::Rotation => {
                    let q = Quat::from_array([key[0], key[1], key[2], key[3]]);
                    assert!((q.length_squared() - 1.0).abs() < 1e-5);
                    // Same rotation as the frame (possibly negated).
                    assert!((q.dot(local.rotation).abs() - 1.0).abs() < 1e-5);
                }
                ChannelTarget::Scale => panic!("md5 has no scale channel"),
            }
        }
        if c.target == ChannelTarget::Rotation {
            for w in c.values.chunks(4).collect::<Vec<_>>().windows(2) {
                let d: f32 = w[0].iter().zip(w[1]).map(|(x, y)| x * y).sum();
                assert!(d >= 0.0, "joint {} keys in opposite hemispheres", c.joint);
            }
        }
    }
    // Frame 0 of the root is the file's first frame line.
    let root_t = &clip.channels[0];
    assert_eq!(root_t.target, ChannelTarget::Translation);
    assert_eq!(&root_t.values[..3], &[-0.0, 0.016430, -0.006044]);
}

/// Counter-clockwise output winding: the enclosed signed volume `Σ p0 · (p1 × p2) / 6` is
/// positive (outward-facing), and each vertex normal points the way its faces do.
#[test]
fn bob_winding_is_counter_clockwise() {
    let rig = bob();
    let mut total = 0.0f64;
    for m in &rig.meshes {
        let p = &m.primitives[0];
        let mut vol = 0.0f64;
        for t in p.indices.chunks(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| Vec3::from_array(p.positions[i as usize]));
            vol += f64::from(a.dot(b.cross(c))) / 6.0;
        }
        println!("bob: mesh {} signed volume {vol:.1}", m.name);
        assert!(vol > 0.0, "mesh {} faces inward", m.name);
        total += vol;
    }
    assert!(total > 1000.0, "{total}");
    let body = &rig.meshes[0].primitives[0];
    let normals = body.normals.as_ref().unwrap();
    assert!(normals.iter().all(|n| (Vec3::from_array(*n).length() - 1.0).abs() < 1e-5));
}
