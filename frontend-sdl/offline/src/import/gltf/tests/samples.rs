//! The sample models of the shared assets: their counts, names, clips and bind poses.

use super::*;

#[test]
fn rigged_simple() {
    let rig = load("RiggedSimple");
    assert_eq!(rig.name, "RiggedSimple");
    assert_eq!(rig.skins.len(), 1);
    assert_eq!(rig.skins[0].joints.len(), 2);
    assert_eq!(vertex_count(&rig), 160);
    assert_eq!(max_used_influences(&rig), 2);
    assert!(primitives(&rig).all(|p| p.influences == 4));
    assert_eq!(rig.clips.len(), 1);
    assert_eq!(rig.clips[0].name, "clip0");
    let ch = &rig.clips[0].channels;
    assert_eq!(ch.len(), 3);
    assert!(ch.iter().all(|c| c.joint == ch[0].joint && c.interpolation == Interpolation::Linear));
    let targets: HashSet<ChannelTarget> = ch.iter().map(|c| c.target).collect();
    assert_eq!(targets.len(), 3);
    assert!(close(rig.clips[0].time_range().0, 0.0417, 1.0e-3));
    assert!(max_weight_sum_error(&rig) < 2.0e-3);
    assert!(rig.notes.is_empty(), "{:?}", rig.notes);
}

#[test]
fn simple_skin_with_data_uris() {
    let rig = load("SimpleSkin");
    assert_eq!(rig.skins.len(), 1);
    assert_eq!(rig.skins[0].joints.len(), 2);
    assert_eq!(vertex_count(&rig), 10);
    assert_eq!(max_used_influences(&rig), 2);
    assert!(primitives(&rig).all(|p| p.color == DEFAULT_COLOR), "no materials: default color");
    assert_eq!(rig.clips.len(), 1);
    let ch = &rig.clips[0].channels;
    assert_eq!(ch.len(), 1);
    assert_eq!(ch[0].target, ChannelTarget::Rotation);
    assert_eq!(ch[0].interpolation, Interpolation::Linear);
    assert_eq!(ch[0].times.len(), 12);
    let (lo, hi) = rig.clips[0].time_range();
    assert!(close(lo, 0.0, 1.0e-6) && close(hi, 5.5, 1.0e-5), "{lo} {hi}");
    // Same result from the bytes without a base directory: nothing external is needed.
    let bytes = std::fs::read(sample("SimpleSkin")).unwrap();
    let again = load_bytes(&bytes, None, "s").unwrap();
    assert_eq!(again.clips[0].channels[0].values, ch[0].values);
}

#[test]
fn rigged_figure() {
    let rig = load("RiggedFigure");
    assert_eq!(rig.skins.len(), 1);
    assert_eq!(rig.skins[0].joints.len(), 19);
    assert_eq!(vertex_count(&rig), 370);
    assert_eq!(max_used_influences(&rig), 4);
    assert_eq!(rig.clips.len(), 1);
    assert_eq!(rig.clips[0].channels.len(), 57);
    assert!(rig.clips[0].channels.iter().all(|c| c.times.len() == 2));
    let (lo, hi) = rig.clips[0].time_range();
    assert!(close(lo, 0.0, 1.0e-6) && close(hi, 1.25, 1.0e-4), "{lo} {hi}");
    assert!(max_weight_sum_error(&rig) < 2.0e-3);
}

#[test]
fn cesium_man() {
    let rig = load("CesiumMan");
    assert_eq!(rig.skins.len(), 1);
    assert_eq!(rig.skins[0].joints.len(), 19);
    assert_eq!(vertex_count(&rig), 3273);
    assert_eq!(max_used_influences(&rig), 4);
    let clip = &rig.clips[0];
    assert_eq!(clip.channels.len(), 57);
    assert!(clip.channels.iter().all(|c| c.times.len() == 48 && c.interpolation == Interpolation::Linear));
    let (lo, hi) = clip.time_range();
    assert!(close(lo, 0.0417, 1.0e-3) && close(hi, 2.0, 1.0e-4), "{lo} {hi}");
    assert!(max_weight_sum_error(&rig) < 2.0e-3);
}

#[test]
fn fox_has_three_clips() {
    let rig = load("Fox");
    assert_eq!(rig.skins.len(), 1);
    assert_eq!(rig.skins[0].joints.len(), 24);
    assert_eq!(vertex_count(&rig), 1728);
    assert_eq!(max_used_influences(&rig), 4);
    let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Survey", "Walk", "Run"]);
    let mut animated = HashSet::new();
    for (clip, (keys, length)) in rig.clips.iter().zip([(83, 3.417), (18, 0.708), (25, 1.158)]) {
        assert_eq!(clip.channels.len(), 21);
        let rot = clip.channels.iter().filter(|c| c.target == ChannelTarget::Rotation).count();
        let tr = clip.channels.iter().filter(|c| c.target == ChannelTarget::Translation).count();
        assert_eq!((rot, tr), (20, 1), "{}", clip.name);
        assert!(clip.channels.iter().all(|c| c.times.len() == keys), "{}", clip.name);
        let (lo, hi) = clip.time_range();
        assert!(close(hi - lo, length, 1.0e-3), "{}: {lo}..{hi}", clip.name);
        animated.extend(clip.channels.iter().map(|c| c.joint));
    }
    let never = rig.skins[0].joints.iter().filter(|j| !animated.contains(j)).count();
    assert_eq!(never, 4, "joints never animated");
}

#[test]
fn brain_stem() {
    let rig = load("BrainStem");
    assert_eq!(rig.skins.len(), 1);
    assert_eq!(rig.skins[0].joints.len(), 18);
    assert_eq!(primitives(&rig).count(), 59);
    assert_eq!(vertex_count(&rig), 34_159);
    assert_eq!(max_used_influences(&rig), 1);
    let clip = &rig.clips[0];
    assert_eq!(clip.channels.len(), 57);
    assert!(clip.channels.iter().all(|c| c.interpolation == Interpolation::Linear));
    assert_eq!(clip.channels.iter().map(|c| c.times.len()).max(), Some(1309));
    let (lo, hi) = clip.time_range();
    assert!(close(lo, 0.0, 1.0e-6) && close(hi, 34.88, 1.0e-2), "{lo} {hi}");
    // An animated node that is not a joint of the skin.
    let skin: HashSet<usize> = rig.skins[0].joints.iter().copied().collect();
    assert!(clip.channels.iter().any(|c| !skin.contains(&c.joint)));
    assert!(max_weight_sum_error(&rig) < 2.0e-3);
}

#[test]
fn recursive_skeletons() {
    let rig = load("RecursiveSkeletons");
    assert_eq!(rig.joints.len(), 924);
    assert_eq!(rig.skins.len(), 84);
    assert!(rig.skins.iter().all(|s| s.joints.len() == 10));
    // One mesh, used by 84 skinned nodes: one RigMesh per instance.
    assert_eq!(rig.meshes.len(), 84);
    assert!(rig.meshes.iter().all(|m| m.skin.is_some() && vertex_count_of(m) == 40));
    let skins_used: HashSet<usize> = rig.meshes.iter().filter_map(|m| m.skin).collect();
    assert_eq!(skins_used.len(), 84);
    assert_eq!(max_used_influences(&rig), 1);
    assert_eq!(rig.clips.len(), 1);
    assert_eq!(rig.clips[0].name, "Track0");
    assert_eq!(rig.clips[0].channels.len(), 840);
    assert!(rig.clips[0].channels.iter().all(|c| c.target == ChannelTarget::Rotation && c.times.len() == 3));
    let (lo, hi) = rig.clips[0].time_range();
    assert!(close(lo, 0.0, 1.0e-6) && close(hi, 2.0, 1.0e-5));
    // Depth of the hierarchy (edges from a root).
    let mut depth = vec![0usize; rig.joints.len()];
    for (i, j) in rig.joints.iter().enumerate() {
        depth[i] = j.parent.map_or(0, |p| depth[p] + 1);
    }
    assert_eq!(depth.iter().max(), Some(&29));
    // Skeleton roots (skin joint 0) that hang under another skin's joints.
    let owner: HashMap<usize, usize> =
        rig.skins.iter().enumerate().flat_map(|(s, sk)| sk.joints.iter().map(move |&j| (j, s))).collect();
    let nested = rig
        .skins
        .iter()
        .enumerate()
        .filter(|(s, sk)| {
            let mut p = rig.joints[sk.joints[0]].parent;
            while let Some(q) = p {
                if owner.get(&q).is_some_and(|o| o != s) {
                    return true;
                }
                p = rig.joints[q].parent;
            }
            false
        })
        .count();
    assert_eq!(nested, 80);
    assert!(rig.joints.iter().enumerate().all(|(i, j)| j.name.starts_with("node") && i < 924));
}

#[test]
fn interpolation_test() {
    let rig = load("InterpolationTest");
    assert!(rig.skins.is_empty());
    assert_eq!(vertex_count(&rig), 220);
    assert!(rig.meshes.iter().all(|m| m.skin.is_none() && m.node.is_some()));
    assert_eq!(rig.clips.len(), 9);
    let mut kinds = HashMap::new();
    for clip in &rig.clips {
        assert_eq!(clip.channels.len(), 1, "{}", clip.name);
        let ch = &clip.channels[0];
        assert_eq!(ch.times.len(), 5, "{}", clip.name);
        let (kind, target) = clip.name.split_once(' ').unwrap();
        let want = match kind {
            "Step" => Interpolation::Step,
            "Linear" => Interpolation::Linear,
            "CubicSpline" => Interpolation::CubicSpline,
            other => panic!("unexpected clip {other}"),
        };
        assert_eq!(ch.interpolation, want, "{}", clip.name);
        let want_target = match target {
            "Translation" => ChannelTarget::Translation,
            "Rotation" => ChannelTarget::Rotation,
            "Scale" => ChannelTarget::Scale,
            other => panic!("unexpected clip {other}"),
        };
        assert_eq!(ch.target, want_target);
        *kinds.entry(ch.interpolation).or_insert(0) += 1;
    }
    assert_eq!(kinds.len(), 3);
    assert!(kinds.values().all(|&k| k == 3));
    assert!(rig.clips.iter().any(|c| close(c.time_range().0, 0.0417, 1.0e-3)));
}

#[test]
fn box_animated() {
    let rig = load("BoxAnimated");
    assert!(rig.skins.is_empty());
    assert_eq!(vertex_count(&rig), 320);
    let clip = &rig.clips[0];
    assert_eq!(clip.channels.len(), 2);
    let mut lens: Vec<usize> = clip.channels.iter().map(|c| c.times.len()).collect();
    lens.sort_unstable();
    assert_eq!(lens, [2, 4]);
    let (lo, hi) = clip.time_range();
    assert!(close(hi - lo, 3.708, 1.0e-3), "{lo} {hi}");
}

#[test]
fn animated_morph_cube_imports_targets_and_weights() {
    let rig = load("AnimatedMorphCube");
    assert_eq!(vertex_count(&rig), 24);
    assert_eq!(rig.clips.len(), 1);
    let clip = &rig.clips[0];
    assert_eq!(clip.name, "Square");
    assert!(clip.channels.is_empty());
    assert_eq!(clip.weights.len(), 1);
    let w = &clip.weights[0];
    assert_eq!((w.mesh, w.interpolation), (0, Interpolation::Linear));
    assert_eq!(w.values.len(), 2 * w.times.len());
    let m = &rig.meshes[0];
    assert_eq!(m.num_targets(), 2);
    assert!(m.primitives.iter().all(|p| p.targets.len() == 2));
    assert!(!has_note(&rig, "morph"), "{:?}", rig.notes);
}

#[test]
fn pab_crossarms() {
    let rig = load_file(&asset("ozz/pab_crossarms.glb")).unwrap();
    check_invariants(&rig);
    assert_eq!(rig.joints.len(), 68);
    assert_eq!(rig.joints[0].name, "Hips");
    assert_eq!(rig.skins.len(), 1);
    assert_eq!(rig.skins[0].joints.len(), 67);
    assert_eq!(vertex_count(&rig), 3934);
    assert_eq!(primitives(&rig).map(|p| p.indices.len() / 3).sum::<usize>(), 6670);
    assert!(primitives(&rig).all(|p| p.influences == 4 && p.normals.is_some() && p.tangents.is_some()));
    assert!(max_weight_sum_error(&rig) < 1.0e-6);
    let clip = &rig.clips[0];
    assert_eq!(clip.name, "crossarms");
    assert_eq!(clip.channels.len(), 201);
    assert!(clip.channels.iter().all(|c| c.times.len() == 259 && c.interpolation == Interpolation::Linear));
    let (lo, hi) = clip.time_range();
    assert!(close(lo, 0.0, 1.0e-6) && close(hi, 8.6, 1.0e-5));
    // The mesh's bind pose is not the skeleton's rest pose.
    assert!(bind_error(&rig, 0) > 0.1, "{}", bind_error(&rig, 0));
    assert!(rig.notes.is_empty(), "{:?}", rig.notes);
}

#[test]
fn bind_pose_is_rest_pose() {
    // Inverse bind matrices that exactly invert the rest pose's world matrices.
    for model in ["SimpleSkin", "Fox"] {
        let e = bind_error(&load(model), 0);
        assert!(e < 1.0e-4, "{model}: {e}");
    }
    // The rest pose moves the bind-pose mesh rigidly (by the transform of nodes above the
    // skeleton, e.g. a Z-up armature root or a skeleton placed away from the origin): no
    // deformation at rest.
    for model in ["RiggedSimple", "SimpleSkin", "RiggedFigure", "CesiumMan", "Fox", "BrainStem", "RecursiveSkeletons"] {
        let rig = load(model);
        for s in 0..rig.skins.len() {
            let e = bind_rigidity_error(&rig, s);
            assert!(e < 1.0e-4, "{model} skin {s}: {e}");
        }
    }
    // pab_crossarms: the mesh was bound in another pose than the skeleton's rest pose.
    let rig = load_file(&asset("ozz/pab_crossarms.glb")).unwrap();
    assert!(bind_rigidity_error(&rig, 0) > 0.1, "{}", bind_rigidity_error(&rig, 0));
}

#[test]
fn every_model_is_parents_first_and_consistent() {
    for model in MODELS {
        let rig = load(model);
        // Parents first, and the order is depth-first: a joint's subtree is contiguous.
        let n = rig.joints.len();
        let mut end = vec![0usize; n];
        for i in (0..n).rev() {
            end[i] = end[i].max(i + 1);
            if let Some(p) = rig.joints[i].parent {
                end[p] = end[p].max(end[i]);
            }
        }
        for (i, j) in rig.joints.iter().enumerate() {
            if let Some(p) = j.parent {
                assert!(p < i && i < end[p], "{model}: joint {i} outside its parent's subtree");
            }
        }
    }
}

#[test]
fn print_model_figures() {
    // `cargo test -p sinew-offline gltf::tests::samples::print_model_figures -- --nocapture`
    let mut paths: Vec<(String, PathBuf)> = MODELS.iter().map(|m| (m.to_string(), sample(m))).collect();
    paths.push(("pab_crossarms".into(), asset("ozz/pab_crossarms.glb")));
    for (name, path) in paths {
        let rig = load_file(&path).unwrap();
        let skins: Vec<usize> = rig.skins.iter().map(|s| s.joints.len()).collect();
        let bind: Vec<String> = (0..rig.skins.len().min(2))
            .map(|s| format!("{:.1e}/{:.1e}", bind_error(&rig, s), bind_rigidity_error(&rig, s)))
            .collect();
        let keys: usize = rig.clips.iter().flat_map(|c| c.channels.iter().map(|ch| ch.times.len())).sum();
        println!(
            "{name}: joints {} skins {} (joints {:?}) meshes {} primitives {} vertices {} max-influences {} \
             clips {} channels {} keys {} bind-error {:?} notes {}",
            rig.joints.len(),
            rig.skins.len(),
            &skins[..skins.len().min(3)],
            rig.meshes.len(),
            primitives(&rig).count(),
            vertex_count(&rig),
            max_used_influences(&rig),
            rig.clips.len(),
            channel_count(&rig),
            keys,
            bind,
            rig.notes.len()
        );
        for n in &rig.notes {
            println!("    note: {n}");
        }
    }
}

#[test]
fn brain_stem_import_time() {
    let bytes = std::fs::read(sample("BrainStem")).unwrap();
    let start = Instant::now();
    let rig = load_bytes(&bytes, None, "BrainStem").unwrap();
    let elapsed = start.elapsed();
    println!("BrainStem ({} bytes) imported in {:.1} ms", bytes.len(), elapsed.as_secs_f64() * 1.0e3);
    assert_eq!(vertex_count(&rig), 34_159);
    // Generous bound so unoptimized builds pass; the release figure is in the report.
    assert!(elapsed.as_secs_f64() < 5.0);
}
