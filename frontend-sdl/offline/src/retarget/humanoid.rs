//! Humanoid joint namings canonicalized to one bone set (the VRM humanoid bones): Mixamo (with
//! the `mixamorig:`, `mixamorig1:`, `mixamorig_` prefixes or none), VRM, the Unreal
//! mannequin (UE4's `spine_01`..`spine_03`, UE5's `spine_01`..`spine_05`), and two motion-capture
//! namings of BVH files:
//!
//! - **CMU** (the CMU database's BVH conversion; a skeleton with `LowerBack`, `LHipJoint` or
//!   `RHipJoint`): Mixamo's names for the limbs (`LeftUpLeg`, `LeftArm`, ...), but its spine
//!   is `LowerBack` (spine), `Spine` (chest), `Spine1` (upper chest), then `Neck`, `Neck1`
//!   (no bone) and `Head`; `LThumb`/`RThumb` are the thumbs, `LFingers`/`RFingers` (or
//!   `LeftHandIndex1`/`RightHandIndex1`) the index fingers; `LHipJoint`, `RHipJoint`,
//!   `LeftFingerBase`, `RightFingerBase` are no bone.
//! - **Biovision** (the older mocap files, as bvh_anim's `test_mocapbank.bvh`; a skeleton with
//!   `LeftCollar`, `RightCollar`, `LeftElbow` or `RightElbow`): `Hips`, `Chest` (spine), `Chest2`
//!   (chest), `Chest3` (upper chest), `Neck`, `Head`, `LeftCollar` (shoulder), `LeftShoulder`
//!   (upper arm), `LeftElbow` (lower arm), `LeftWrist` (hand), `LeftHip` (upper leg), `LeftKnee`
//!   (lower leg), `LeftAnkle` (foot), `LeftToe` (toes), and the same with `Right`.
//!
//! bvh_anim's `test_simple.bvh` (`Base`, `End`) is no humanoid: its names map to no bone.

/// A humanoid bone; its VRM name is [`Bone::vrm_name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // each variant is the VRM bone of the same name
pub enum Bone {
    Hips,
    Spine,
    Chest,
    UpperChest,
    Neck,
    Head,
    LeftShoulder,
    LeftUpperArm,
    LeftLowerArm,
    LeftHand,
    RightShoulder,
    RightUpperArm,
    RightLowerArm,
    RightHand,
    LeftUpperLeg,
    LeftLowerLeg,
    LeftFoot,
    LeftToes,
    RightUpperLeg,
    RightLowerLeg,
    RightFoot,
    RightToes,
    /// A finger segment: side (left: `true`), finger (0 thumb, 1 index, 2 middle, 3 ring,
    /// 4 little) and segment (0 proximal, 1 intermediate, 2 distal).
    Finger(bool, u8, u8),
}

/// The bones without fingers, with their VRM, Mixamo (unprefixed) and UE4 mannequin names.
const BODY: [(Bone, &str, &str, &str); 22] = [
    (Bone::Hips, "hips", "Hips", "pelvis"),
    (Bone::Spine, "spine", "Spine", "spine_01"),
    (Bone::Chest, "chest", "Spine1", "spine_02"),
    (Bone::UpperChest, "upperChest", "Spine2", "spine_03"),
    (Bone::Neck, "neck", "Neck", "neck_01"),
    (Bone::Head, "head", "Head", "head"),
    (Bone::LeftShoulder, "leftShoulder", "LeftShoulder", "clavicle_l"),
    (Bone::LeftUpperArm, "leftUpperArm", "LeftArm", "upperarm_l"),
    (Bone::LeftLowerArm, "leftLowerArm", "LeftForeArm", "lowerarm_l"),
    (Bone::LeftHand, "leftHand", "LeftHand", "hand_l"),
    (Bone::RightShoulder, "rightShoulder", "RightShoulder", "clavicle_r"),
    (Bone::RightUpperArm, "rightUpperArm", "RightArm", "upperarm_r"),
    (Bone::RightLowerArm, "rightLowerArm", "RightForeArm", "lowerarm_r"),
    (Bone::RightHand, "rightHand", "RightHand", "hand_r"),
    (Bone::LeftUpperLeg, "leftUpperLeg", "LeftUpLeg", "thigh_l"),
    (Bone::LeftLowerLeg, "leftLowerLeg", "LeftLeg", "calf_l"),
    (Bone::LeftFoot, "leftFoot", "LeftFoot", "foot_l"),
    (Bone::LeftToes, "leftToes", "LeftToeBase", "ball_l"),
    (Bone::RightUpperLeg, "rightUpperLeg", "RightUpLeg", "thigh_r"),
    (Bone::RightLowerLeg, "rightLowerLeg", "RightLeg", "calf_r"),
    (Bone::RightFoot, "rightFoot", "RightFoot", "foot_r"),
    (Bone::RightToes, "rightToes", "RightToeBase", "ball_r"),
];

/// Finger names: VRM, Mixamo, mannequin.
const FINGERS: [(&str, &str, &str); 5] = [
    ("Thumb", "Thumb", "thumb"),
    ("Index", "Index", "index"),
    ("Middle", "Middle", "middle"),
    ("Ring", "Ring", "ring"),
    ("Little", "Pinky", "pinky"),
];

/// VRM finger segment names.
const SEGMENTS: [&str; 3] = ["Proximal", "Intermediate", "Distal"];

impl Bone {
    /// The bone's VRM humanoid name (`hips`, `leftUpperArm`, `leftIndexProximal`, ...).
    #[must_use]
    pub fn vrm_name(self) -> String {
        match self {
            Bone::Finger(left, f, s) => {
                let side = if left { "left" } else { "right" };
                let finger = FINGERS.get(usize::from(f)).map_or("", |x| x.0);
                let seg = SEGMENTS.get(usize::from(s)).copied().unwrap_or("");
                format!("{side}{finger}{seg}")
            }
            b => BODY.iter().find(|e| e.0 == b).map_or_else(String::new, |e| e.1.to_string()),
        }
    }
}

/// A Mixamo name without its exporter prefix (`mixamorig:`, `mixamorig1:`, `mixamorig_`, ...:
/// `mixamorig`, optional digits, then `:` or `_`), or the name itself.
fn strip_mixamo(name: &str) -> &str {
    let Some(rest) = name.strip_prefix("mixamorig") else { return name };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    rest.strip_prefix(':').or_else(|| rest.strip_prefix('_')).unwrap_or(name)
}

/// The bone a VRM name names.
fn vrm(name: &str) -> Option<Bone> {
    if let Some(e) = BODY.iter().find(|e| e.1 == name) {
        return Some(e.0);
    }
    let (left, rest) = match (name.strip_prefix("left"), name.strip_prefix("right")) {
        (Some(r), _) => (true, r),
        (_, Some(r)) => (false, r),
        _ => return None,
    };
    for (f, (fname, _, _)) in FINGERS.iter().enumerate() {
        let Some(seg) = rest.strip_prefix(fname) else { continue };
        let s = SEGMENTS.iter().position(|&x| x == seg)?;
        return Some(Bone::Finger(left, u8::try_from(f).ok()?, u8::try_from(s).ok()?));
    }
    None
}

/// The bone a Mixamo name (prefix already stripped) names.
fn mixamo(name: &str) -> Option<Bone> {
    if let Some(e) = BODY.iter().find(|e| e.2 == name) {
        return Some(e.0);
    }
    let (left, rest) = match (name.strip_prefix("LeftHand"), name.strip_prefix("RightHand")) {
        (Some(r), _) => (true, r),
        (_, Some(r)) => (false, r),
        _ => return None,
    };
    for (f, (_, fname, _)) in FINGERS.iter().enumerate() {
        let Some(seg) = rest.strip_prefix(fname) else { continue };
        let s = match seg {
            "1" => 0,
            "2" => 1,
            "3" => 2,
            _ => return None,
        };
        return Some(Bone::Finger(left, u8::try_from(f).ok()?, s));
    }
    None
}

/// The bone a mannequin name names; `ue5`: the skeleton has `spine_05` (its spine is split in
/// five: `spine_01` is the spine, `spine_03` the chest, `spine_05` the upper chest).
fn mannequin(name: &str, ue5: bool) -> Option<Bone> {
    if ue5 {
        match name {
            "spine_01" => return Some(Bone::Spine),
            "spine_03" => return Some(Bone::Chest),
            "spine_05" => return Some(Bone::UpperChest),
            "spine_02" | "spine_04" => return None,
            _ => {}
        }
    }
    if let Some(e) = BODY.iter().find(|e| e.3 == name) {
        return Some(e.0);
    }
    let (rest, left) = match (name.strip_suffix("_l"), name.strip_suffix("_r")) {
        (Some(r), _) => (r, true),
        (_, Some(r)) => (r, false),
        _ => return None,
    };
    for (f, (_, _, fname)) in FINGERS.iter().enumerate() {
        let Some(seg) = rest.strip_prefix(fname) else { continue };
        let s = match seg {
            "_01" => 0,
            "_02" => 1,
            "_03" => 2,
            _ => return None,
        };
        return Some(Bone::Finger(left, u8::try_from(f).ok()?, s));
    }
    None
}

/// A name split into its side (`Left`/`L` prefix: `true`, `Right`/`R`: `false`) and the rest,
/// for the prefixes given.
fn sided<'a>(name: &'a str, left: &str, right: &str) -> Option<(bool, &'a str)> {
    match (name.strip_prefix(left), name.strip_prefix(right)) {
        (Some(r), _) => Some((true, r)),
        (_, Some(r)) => Some((false, r)),
        _ => None,
    }
}

/// The bone a CMU name names where CMU differs from Mixamo: `Some(None)` for a CMU joint of no
/// bone, `None` for a name left to Mixamo's table.
fn cmu(name: &str) -> Option<Option<Bone>> {
    let bone = match name {
        "LowerBack" => Bone::Spine,
        "Spine" => Bone::Chest,
        "Spine1" => Bone::UpperChest,
        "Neck1" | "LHipJoint" | "RHipJoint" | "LeftFingerBase" | "RightFingerBase" => return Some(None),
        _ => {
            if let Some((left, "Thumb")) = sided(name, "L", "R") {
                return Some(Some(Bone::Finger(left, 0, 0)));
            }
            if let Some((left, "Fingers")) = sided(name, "L", "R") {
                return Some(Some(Bone::Finger(left, 1, 0)));
            }
            if let Some((left, "HandIndex1")) = sided(name, "Left", "Right") {
                return Some(Some(Bone::Finger(left, 1, 0)));
            }
            return None;
        }
    };
    Some(Some(bone))
}

/// The bone a Biovision name names.
fn biovision(name: &str) -> Option<Bone> {
    let bone = match name {
        "Hips" => Bone::Hips,
        "Chest" => Bone::Spine,
        "Chest2" => Bone::Chest,
        "Chest3" => Bone::UpperChest,
        "Neck" => Bone::Neck,
        "Head" => Bone::Head,
        _ => {
            let (left, rest) = sided(name, "Left", "Right")?;
            let pick = |l: Bone, r: Bone| if left { l } else { r };
            match rest {
                "Collar" => pick(Bone::LeftShoulder, Bone::RightShoulder),
                "Shoulder" => pick(Bone::LeftUpperArm, Bone::RightUpperArm),
                "Elbow" => pick(Bone::LeftLowerArm, Bone::RightLowerArm),
                "Wrist" => pick(Bone::LeftHand, Bone::RightHand),
                "Hip" => pick(Bone::LeftUpperLeg, Bone::RightUpperLeg),
                "Knee" => pick(Bone::LeftLowerLeg, Bone::RightLowerLeg),
                "Ankle" => pick(Bone::LeftFoot, Bone::RightFoot),
                "Toe" => pick(Bone::LeftToes, Bone::RightToes),
                _ => return None,
            }
        }
    };
    Some(bone)
}

/// The humanoid bone of each joint name of one skeleton (`None` where no naming knows the
/// name). A bone two joints name goes to the first of them only. A skeleton with a joint only
/// the CMU or the Biovision naming has (see the [module documentation](self)) is read with
/// that naming first.
#[must_use]
pub fn canonical_bones<S: AsRef<str>>(names: &[S]) -> Vec<Option<Bone>> {
    let has = |list: &[&str]| names.iter().any(|n| list.contains(&n.as_ref()));
    let ue5 = has(&["spine_05"]);
    let is_cmu = has(&["LowerBack", "LHipJoint", "RHipJoint"]);
    let is_biovision = !is_cmu && has(&["LeftCollar", "RightCollar", "LeftElbow", "RightElbow"]);
    let mut seen: Vec<Bone> = Vec::new();
    names
        .iter()
        .map(|n| {
            let n = n.as_ref();
            let b = if is_biovision {
                biovision(n)?
            } else {
                let mocap = if is_cmu { cmu(n) } else { None };
                match mocap {
                    Some(b) => b?,
                    None => vrm(n).or_else(|| mixamo(strip_mixamo(n))).or_else(|| mannequin(n, ue5))?,
                }
            };
            if seen.contains(&b) {
                return None;
            }
            seen.push(b);
            Some(b)
        })
        .collect()
}
