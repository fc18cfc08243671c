//! The spring-bone section as baked: the shared VRM models' spring bones read back from the
//! file, compared by joint name with what the importer gave; interleaved springs; rigs the
//! section cannot hold.

use sinew::asset::{Asset, SpringsData};
use sinew::job::spring::{ColliderShape, SpringJoint, NO_JOINT};
use sinew::math::{Transform, Vec3};
use sinew::skeleton::Skeleton;

use crate::bake::{bake, BakeError, BakeOptions};
use crate::rig::{self, Rig, RigJoint, SpringParams};

/// Bakes `rig` (no clips to measure: fast) and returns the file.
fn baked(rig: &Rig) -> Vec<u8> {
    bake(rig, &BakeOptions::default()).unwrap().0
}

fn v3(v: [f32; 3]) -> Vec3<f32> {
    Vec3::new(v[0], v[1], v[2])
}

/// Every spring joint, collider and spring of `file` equals those of `rig`, joints compared by
/// name through the baked skeleton; the section's size.
fn check_round_trip(rig: &Rig, file: &[u8]) -> usize {
    let asset = Asset::parse(file).unwrap();
    let skeleton = asset.skeleton().unwrap();
    let s: SpringsData<'_> = asset.springs().expect("a spring-bone section");
    let b = rig.springs.as_ref().unwrap();
    let baked_name = |j: u16| skeleton.name(usize::from(j)).unwrap().to_string();
    let rig_name = |j: usize| rig.joints[j].name.clone();
    let optional = |j: u16| (j != NO_JOINT).then(|| baked_name(j));
    assert_eq!(s.num_joints(), b.joints.len());
    assert_eq!(s.num_colliders(), b.colliders.len());
    assert_eq!(s.num_springs(), b.springs.len());
    for (i, r) in b.joints.iter().enumerate() {
        let j: SpringJoint<f32> = s.joint(i).unwrap();
        assert_eq!(baked_name(j.joint), rig_name(r.joint), "joint {i}");
        assert_eq!(optional(j.child), r.child.map(rig_name), "joint {i} child");
        assert_eq!(optional(j.center), r.center.map(rig_name), "joint {i} center");
        assert_eq!(j.tail, v3(r.tail), "joint {i} tail");
        let p = r.params;
        assert_eq!(
            (j.hit_radius, j.stiffness, j.gravity_power, j.gravity_dir, j.drag_force),
            (p.hit_radius, p.stiffness, p.gravity_power, v3(p.gravity_dir), p.drag_force),
            "joint {i} settings"
        );
        let start = usize::from(j.colliders_start);
        let listed: Vec<usize> =
            (start..start + usize::from(j.colliders_len)).map(|k| usize::from(s.joint_collider(k).unwrap())).collect();
        assert_eq!(listed, r.colliders, "joint {i} colliders");
        assert_eq!(s.joint_spring(i), Some(r.spring), "joint {i} spring");
    }
    for (i, c) in b.colliders.iter().enumerate() {
        let baked = s.collider::<f32>(i).unwrap();
        assert_eq!(baked_name(baked.joint), rig_name(c.joint), "collider {i}");
        let want = match c.shape {
            rig::ColliderShape::Sphere { offset, radius, inside } => {
                ColliderShape::Sphere { offset: v3(offset), radius, inside }
            }
            rig::ColliderShape::Capsule { offset, tail, radius, inside } => {
                ColliderShape::Capsule { offset: v3(offset), tail: v3(tail), radius, inside }
            }
            rig::ColliderShape::Plane { offset, normal } => {
                ColliderShape::Plane { offset: v3(offset), normal: v3(normal) }
            }
        };
        assert_eq!(baked.shape, want, "collider {i}");
    }
    for (k, spring) in b.springs.iter().enumerate() {
        let info = s.spring(k).unwrap();
        assert_eq!(info.name, spring.name.as_deref().unwrap_or(""));
        let mine: Vec<usize> = (0..b.joints.len()).filter(|&i| b.joints[i].spring == k).collect();
        assert_eq!(s.spring_joints(k).collect::<Vec<_>>(), mine, "spring {k}");
    }
    // Copied out, the spring bones pass the job's checks on the baked skeleton.
    let sk: Skeleton<f32, 64> = skeleton.to_skeleton().unwrap();
    let spare = s.joint::<f32>(0).unwrap();
    let (mut joints, mut colliders, mut table) =
        (vec![spare; s.num_joints()], Vec::new(), vec![0; s.num_joint_colliders()]);
    colliders.resize(s.num_colliders(), s.collider::<f32>(0).unwrap_or(rig_sphere()));
    let bones = s.fill(&mut joints, &mut colliders, &mut table).unwrap();
    assert_eq!(bones.validate(&sk.view()), Ok(()));
    s.byte_len()
}

fn rig_sphere() -> sinew::job::spring::SpringCollider<f32> {
    let shape = ColliderShape::Sphere { offset: Vec3::ZERO, radius: 0.0, inside: false };
    sinew::job::spring::SpringCollider { joint: 0, shape }
}

#[test]
fn vrm_models_bake_their_spring_bones() {
    for path in ["vrm/vrm-conformance/springbone_collider_capsule_x0p02_r0p1.vrm", "vrm/three-vrm/plane-collider.gltf"]
    {
        let rig = crate::import::load(&sinew_assets::path(path), None).unwrap();
        let file = baked(&rig);
        let bytes = check_round_trip(&rig, &file);
        let (_, report) = bake(&rig, &BakeOptions::default()).unwrap();
        assert_eq!(report.spring_bytes, bytes);
        let b = rig.springs.as_ref().unwrap();
        println!(
            "{path}: {} springs, {} joints, {} colliders: spring-bone section {bytes} bytes of {}",
            b.springs.len(),
            b.joints.len(),
            b.colliders.len(),
            file.len()
        );
        // Without its spring bones the model bakes no section, and the other sections alike.
        let plain = Rig { springs: None, ..rig.clone() };
        let without = baked(&plain);
        let a = Asset::parse(&without).unwrap();
        assert!(a.springs().is_none());
        assert_eq!(without.len() + bytes + 12, file.len());
    }
}

fn joint(name: &str, parent: Option<usize>, y: f32) -> RigJoint {
    let rest = Transform { translation: Vec3::new(0.0, y, 0.0), ..Transform::IDENTITY };
    RigJoint { name: name.into(), parent, rest }
}

/// A root with two chains (1 → 2 → 3 and 4 → 5), springs "a" on the first and "b" on the
/// second, run in the order a, b, a; a sphere on joint 5 and a plane on the root.
fn interleaved() -> Rig {
    let joints = vec![
        joint("root", None, 0.0),
        joint("a0", Some(0), 1.0),
        joint("a1", Some(1), 1.0),
        joint("a2", Some(2), 1.0),
        joint("b0", Some(0), 1.0),
        joint("b1", Some(4), 1.0),
    ];
    let params = SpringParams::VRM1_DEFAULT;
    let resolved = |joint: usize, child: Option<usize>, spring: usize, colliders: Vec<usize>| {
        rig::ResolvedSpringJoint { joint, child, tail: [0.0, 1.0, 0.0], params, center: None, colliders, spring }
    };
    let spring = |name: &str, joints: &[usize], groups: Vec<usize>| rig::Spring {
        name: Some(name.into()),
        joints: joints.iter().map(|&joint| rig::SpringJoint { joint, params }).collect(),
        collider_groups: groups,
        center: None,
    };
    let springs = rig::SpringBones {
        source: rig::SpringSource::Vrm1 { spec_version: "1.0".into(), extended_colliders: 1 },
        springs: vec![spring("a", &[1, 2, 3], vec![0]), spring("b", &[4, 5], vec![])],
        colliders: vec![
            rig::SpringCollider {
                joint: 5,
                shape: rig::ColliderShape::Sphere { offset: [0.0; 3], radius: 0.25, inside: false },
            },
            rig::SpringCollider {
                joint: 0,
                shape: rig::ColliderShape::Plane { offset: [0.0; 3], normal: [0.0, 1.0, 0.0] },
            },
        ],
        collider_groups: vec![rig::SpringColliderGroup { name: None, colliders: vec![0, 1] }],
        joints: vec![
            resolved(1, Some(2), 0, vec![0, 1]),
            resolved(4, Some(5), 1, vec![]),
            resolved(2, Some(3), 0, vec![0, 1]),
        ],
    };
    Rig { name: "interleaved".into(), joints, springs: Some(springs), ..Rig::default() }
}

#[test]
fn bake_interleaved_springs_keep_run_order_and_spans() {
    let rig = interleaved();
    let file = baked(&rig);
    check_round_trip(&rig, &file);
    let asset = Asset::parse(&file).unwrap();
    let s = asset.springs().unwrap();
    // Spring "a" spans the run order's joints 0 to 2, with "b" between.
    assert_eq!(s.spring(0).map(|i| (i.name, i.joints)), Some(("a", 0..3)));
    assert_eq!(s.spring(1).map(|i| (i.name, i.joints)), Some(("b", 1..2)));
    // Equal collider lists share one range of the table.
    assert_eq!(s.num_joint_colliders(), 2);
    // Section: header 8, 2 springs × 4, 3 joints × 52, 2 colliders × 32, 2 entries × 2, names 2 + 2.
    assert_eq!(s.byte_len(), 8 + 8 + 156 + 64 + 4 + 4);
}

#[test]
fn bake_refuses_spring_bones_the_section_cannot_hold() {
    let refused = |edit: &dyn Fn(&mut rig::SpringBones)| {
        let mut rig = interleaved();
        edit(rig.springs.as_mut().unwrap());
        match bake(&rig, &BakeOptions::default()) {
            Err(BakeError::Springs(why)) => why,
            other => panic!("{other:?}"),
        }
    };
    assert!(refused(&|b| b.joints[0].joint = 6).contains("past the hierarchy"));
    assert!(refused(&|b| b.joints[0].child = Some(5)).contains("not below"));
    assert!(refused(&|b| b.joints[0].child = Some(1)).contains("not below"));
    assert!(refused(&|b| b.joints[1].center = Some(9)).contains("past the hierarchy"));
    assert!(refused(&|b| b.joints[2].joint = 1).contains("earlier spring joint"));
    assert!(refused(&|b| b.joints[2].params.drag_force = f32::NAN).contains("not finite"));
    assert!(refused(&|b| b.joints[2].params.hit_radius = -1.0).contains("negative"));
    assert!(refused(&|b| b.joints[2].colliders = vec![2]).contains("past the colliders"));
    assert!(refused(&|b| b.joints[2].spring = 2).contains("past the springs"));
    assert!(refused(&|b| b.colliders[1].joint = 7).contains("past the hierarchy"));
    let negative = rig::ColliderShape::Sphere { offset: [0.0; 3], radius: -0.5, inside: true };
    assert!(refused(&|b| b.colliders[0].shape = negative).contains("negative radius"));
    let infinite =
        rig::ColliderShape::Capsule { offset: [0.0; 3], tail: [f32::INFINITY, 0.0, 0.0], radius: 0.5, inside: false };
    assert!(refused(&|b| b.colliders[0].shape = infinite).contains("not finite"));
    // Three joints each testing a third of the limit's colliders (plus one): past the limit
    // together, though each list and the shared table fit.
    let many = |b: &mut rig::SpringBones| {
        for j in &mut b.joints {
            j.colliders = vec![0; sinew::limits::MAX_SPRING_TESTS / 3 + 1];
        }
    };
    assert!(refused(&many).contains("colliders a step"));
}
