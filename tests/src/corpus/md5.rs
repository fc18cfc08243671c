//! md5 cases: [`SMALL_MESH`] and [`SMALL_ANIM`], a small two-joint model written as md5 text,
//! and Bob with lamp from `../shared/assets`, edited word by word and cut at every section and
//! (the small files) at every byte; [`md5_cases`] gives each with the [`Md5Error`] the importer
//! must give.

use sinew_offline::import::md5::{self, Location, Md5Error, Md5File, TokenKind};
use sinew_offline::rig::Rig;

use super::gltf::SmallGltf;
use super::Category::{self, *};
use super::{bob, gltf_asset, read, Case};

/// A two-joint, two-triangle md5 mesh. Its strings hold no whitespace, so a cut at a
/// whitespace byte is always a cut between tokens.
pub const SMALL_MESH: &str = "MD5Version 10
commandline \"corpus\"

numJoints 2
numMeshes 1

joints {
\t\"root\"\t-1 ( 0 0 0 ) ( 0 0 0 )
\t\"arm\"\t0 ( 0 0 2 ) ( 0 0 0.7071068 )
}

mesh {
\tshader \"arm.tga\"
\tnumverts 4
\tvert 0 ( 0 0 ) 0 1
\tvert 1 ( 1 0 ) 1 1
\tvert 2 ( 0 1 ) 2 2
\tvert 3 ( 1 1 ) 4 1

\tnumtris 2
\ttri 0 0 2 1
\ttri 1 1 2 3

\tnumweights 5
\tweight 0 0 1 ( 0 0 0 )
\tweight 1 0 1 ( 1 0 0 )
\tweight 2 0 0.5 ( 0 1 0 )
\tweight 3 1 0.5 ( -1 0 -2 )
\tweight 4 1 1 ( 0 1 0 )
}
";

/// Three frames of its two joints: the root's x translation and the arm's rotation.
pub const SMALL_ANIM: &str = "MD5Version 10
commandline \"corpus\"

numFrames 3
numJoints 2
frameRate 24
numAnimatedComponents 4

hierarchy {
\t\"root\"\t-1 1 0
\t\"arm\"\t0 56 1
}

bounds {
\t( -1 -1 -1 ) ( 1 1 1 )
\t( -1 -1 -1 ) ( 1 1 1 )
\t( -1 -1 -1 ) ( 1 1 1 )
}

baseframe {
\t( 0 0 0 ) ( 0 0 0 )
\t( 0 0 2 ) ( 0 0 0.7071068 )
}

frame 0 {
\t0 0 0 0.7071068
}

frame 1 {
\t0.5 0 0.2 0.6
}

frame 2 {
\t1 0 0.4 0.5
}
";

/// An md5 case: the mesh (and anim) text must load with this outcome.
pub type Md5Case = Case<Rig, Md5Error>;

/// The 1-based line of the first occurrence of `needle`.
fn line_of(text: &str, needle: &str) -> u32 {
    let at = text.find(needle).unwrap_or_else(|| panic!("{needle:?} not found"));
    text[..at].matches('\n').count() as u32 + 1
}

fn at(file: Md5File, line: u32) -> Location {
    Location { file, line }
}

/// `text` with the first `from` replaced (which must be there).
pub fn edited(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} not found");
    text.replacen(from, to, 1)
}

/// A mesh case: the mesh text (no anim) must fail with exactly `e`.
fn mesh_case(category: Category, name: &str, text: String, e: Md5Error) -> Md5Case {
    Md5Case::is(category, name, text.into_bytes(), e)
}

/// An anim case: the small mesh with the edited small anim.
fn anim_case(category: Category, name: &str, text: String, e: Md5Error) -> Md5Case {
    Md5Case::is(category, name, SMALL_MESH.as_bytes().to_vec(), e).with_second(text.into_bytes())
}

/// The keyword that is due when a file ends right before `line` (its first word, a closing
/// brace as the parser names it).
fn due(line: &str) -> Option<&'static str> {
    let word = line.split_whitespace().next()?;
    [
        "MD5Version",
        "commandline",
        "numJoints",
        "numMeshes",
        "joints",
        "mesh",
        "shader",
        "numverts",
        "numtris",
        "numweights",
        "numFrames",
        "frameRate",
        "numAnimatedComponents",
        "hierarchy",
        "bounds",
        "baseframe",
        "frame",
    ]
    .into_iter()
    .find(|k| *k == word)
    .or((word == "}").then_some("'}'"))
}

/// Cuts of `text` at the start of every line that begins a section (a keyword or a closing
/// brace), with what is due there (inside a frame block, its numbers or its closing brace).
fn section_cuts(text: &str) -> Vec<(usize, &'static str, u32)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_frame = false;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        if let Some(k) = due(line) {
            let k = if k == "'}'" && in_frame { "a frame component or '}'" } else { k };
            in_frame = k == "frame";
            out.push((start, k, n as u32 + 1));
        }
        start += line.len();
    }
    out
}

/// Every md5 case: truncations, magic and version, counts, NaN and infinity, frame order, joint
/// indices, weights, hierarchy cycles and degenerate triangles (kept), each with its
/// [`Md5Error`] (or, for what the importer accepts, the rig it must give).
pub fn md5_cases() -> Vec<Md5Case> {
    use Md5File::{Anim, Mesh};
    let mut cases = Vec::new();
    let (bob_mesh_path, bob_anim_path) = bob();
    let bob_mesh = String::from_utf8(read(&bob_mesh_path)).expect("UTF-8");
    let bob_anim = String::from_utf8(read(&bob_anim_path)).expect("UTF-8");

    // ---- truncation -------------------------------------------------------------------------
    for (cut, k, line) in section_cuts(&bob_mesh) {
        cases.push(Md5Case::matching(
            Truncated,
            format!("Bob md5mesh cut before line {line} ({k})"),
            bob_mesh.as_bytes()[..cut].to_vec(),
            format!("UnexpectedEnd in the md5mesh, {k} due"),
            move |r| matches!(r, Err(Md5Error::UnexpectedEnd { at, expected }) if at.file == Mesh && *expected == k),
        ));
    }
    for (cut, k, line) in section_cuts(&bob_anim) {
        cases.push(
            Md5Case::matching(
                Truncated,
                format!("Bob md5anim cut before line {line} ({k})"),
                bob_mesh.as_bytes().to_vec(),
                format!("UnexpectedEnd in the md5anim, {k} due"),
                move |r| {
                    matches!(r, Err(Md5Error::UnexpectedEnd { at, expected }) if at.file == Anim && *expected == k)
                },
            )
            .with_second(bob_anim.as_bytes()[..cut].to_vec()),
        );
    }
    // The small files at every byte: at a token boundary the input ends where something is due;
    // inside a token the truncated token is wrong in its own way, but in the right file.
    for (file, text) in [(Mesh, SMALL_MESH), (Anim, SMALL_ANIM)] {
        let b = text.as_bytes();
        for cut in 0..b.len() {
            if b[cut..].iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let boundary = b[cut].is_ascii_whitespace() || cut == 0;
            let name = format!("small {file:?} cut to {cut} bytes");
            let want = if boundary { "UnexpectedEnd" } else { "an error in that file" };
            let case = Md5Case::matching(Truncated, name, b[..cut].to_vec(), want, move |r| match r {
                Err(Md5Error::UnexpectedEnd { at, .. }) => at.file == file,
                Err(e) => !boundary && e.location().file == file,
                Ok(_) => false,
            });
            cases.push(match file {
                Mesh => case,
                Anim => Md5Case { bytes: SMALL_MESH.as_bytes().to_vec(), ..case }.with_second(b[..cut].to_vec()),
            });
        }
    }

    // ---- magic and version ------------------------------------------------------------------
    cases.push(mesh_case(
        Magic,
        "MD5Version misspelt",
        edited(SMALL_MESH, "MD5Version", "MD5Versoin"),
        Md5Error::UnexpectedToken { at: at(Mesh, 1), expected: "MD5Version", found: TokenKind::Word },
    ));
    cases.push(mesh_case(
        Magic,
        "a glTF JSON text",
        String::from_utf8(SmallGltf::new().gltf()).expect("UTF-8"),
        Md5Error::UnexpectedToken { at: at(Mesh, 1), expected: "MD5Version", found: TokenKind::OpenBrace },
    ));
    cases.push(Md5Case::is(
        Magic,
        "a .glb file",
        read(&gltf_asset("RiggedSimple", "glb")),
        Md5Error::UnexpectedToken { at: at(Mesh, 1), expected: "MD5Version", found: TokenKind::Word },
    ));
    cases.push(anim_case(
        Magic,
        "anim without MD5Version",
        edited(SMALL_ANIM, "MD5Version 10\n", ""),
        Md5Error::UnexpectedToken { at: at(Anim, 1), expected: "MD5Version", found: TokenKind::Word },
    ));
    for v in [11i64, 9, -10, 0] {
        cases.push(mesh_case(
            Version,
            &format!("mesh version {v}"),
            edited(SMALL_MESH, "MD5Version 10", &format!("MD5Version {v}")),
            Md5Error::UnsupportedVersion { at: at(Mesh, 1), version: v },
        ));
    }
    cases.push(mesh_case(
        Version,
        "mesh version 99999999999999999999",
        edited(SMALL_MESH, "MD5Version 10", "MD5Version 99999999999999999999"),
        Md5Error::BadNumber { at: at(Mesh, 1), expected: "a version number" },
    ));
    cases.push(anim_case(
        Version,
        "anim version 6",
        edited(SMALL_ANIM, "MD5Version 10", "MD5Version 6"),
        Md5Error::UnsupportedVersion { at: at(Anim, 1), version: 6 },
    ));

    // ---- counts -----------------------------------------------------------------------------
    cases.push(mesh_case(
        Counts,
        "numJoints 65537",
        edited(SMALL_MESH, "numJoints 2", "numJoints 65537"),
        Md5Error::TooLarge { at: at(Mesh, 4), what: "numJoints", value: 65537, max: 65536 },
    ));
    cases.push(mesh_case(
        Counts,
        "numJoints past i64",
        edited(SMALL_MESH, "numJoints 2", "numJoints 99999999999999999999"),
        Md5Error::BadNumber { at: at(Mesh, 4), expected: "numJoints" },
    ));
    cases.push(mesh_case(
        Counts,
        "numJoints 0",
        edited(SMALL_MESH, "numJoints 2", "numJoints 0"),
        Md5Error::InvalidValue { at: at(Mesh, 4), what: "numJoints", requirement: "must be at least 1" },
    ));
    cases.push(mesh_case(
        Counts,
        "numverts 2^32",
        edited(SMALL_MESH, "numverts 4", "numverts 4294967296"),
        Md5Error::TooLarge { at: at(Mesh, 14), what: "numverts", value: 1 << 32, max: u32::MAX as u64 },
    ));
    let t = edited(SMALL_MESH, "numtris 2", "numtris 9223372036854775807");
    let line = line_of(&t, "numweights");
    cases.push(mesh_case(
        Counts,
        "numtris i64::MAX",
        t,
        Md5Error::CountMismatch { at: at(Mesh, line), what: "tri", declared: i64::MAX as usize, found: 2 },
    ));
    let t = edited(SMALL_MESH, "numweights 5", "numweights 3");
    let line = line_of(&t, "weight 3");
    cases.push(mesh_case(
        Counts,
        "numweights 3 of 5",
        t,
        Md5Error::CountMismatch { at: at(Mesh, line), what: "weight", declared: 3, found: 4 },
    ));
    cases.push(mesh_case(
        Counts,
        "numMeshes i64::MAX",
        edited(SMALL_MESH, "numMeshes 1", "numMeshes 9223372036854775807"),
        Md5Error::UnexpectedEnd { at: at(Mesh, 30), expected: "mesh" },
    ));
    let t = edited(SMALL_MESH, "( 0 1 ) 2 2", "( 0 1 ) 2 33");
    let line = line_of(&t, "vert 2");
    cases.push(mesh_case(
        Counts,
        "countWeight 33",
        t,
        Md5Error::TooLarge { at: at(Mesh, line), what: "countWeight", value: 33, max: 32 },
    ));
    let t = edited(SMALL_MESH, "( 1 0 ) 1 1", "( 1 0 ) 9223372036854775807 1");
    let line = line_of(&t, "vert 1");
    cases.push(mesh_case(
        Counts,
        "startWeight i64::MAX",
        t,
        Md5Error::IndexOutOfRange { at: at(Mesh, line), what: "vertex weight range", index: i64::MAX, limit: 5 },
    ));
    cases.push(anim_case(
        Counts,
        "numFrames × numJoints past the cap",
        edited(SMALL_ANIM, "numFrames 3", "numFrames 2097152"),
        Md5Error::TooLarge {
            at: at(Anim, 5),
            what: "numJoints × numFrames",
            value: 2 * 2097152,
            max: md5::MAX_JOINT_FRAMES as u64,
        },
    ));
    cases.push(anim_case(
        Counts,
        "numAnimatedComponents 2^32",
        edited(SMALL_ANIM, "numAnimatedComponents 4", "numAnimatedComponents 4294967296"),
        Md5Error::TooLarge { at: at(Anim, 7), what: "numAnimatedComponents", value: 1 << 32, max: u32::MAX as u64 },
    ));
    let t = edited(&bob_mesh, "numverts 494", "numverts 4294967295");
    let line = line_of(&t, "numtris 628");
    cases.push(mesh_case(
        Counts,
        "Bob numverts 0xffffffff",
        t,
        Md5Error::CountMismatch { at: at(Mesh, line), what: "vert", declared: u32::MAX as usize, found: 494 },
    ));

    // ---- NaN and infinity -------------------------------------------------------------------
    for (name, from, to, needle) in [
        ("joint position nan", "( 0 0 2 ) ( 0 0 0.7071068 )\n}", "( 0 nan 2 ) ( 0 0 0.7071068 )\n}", "\"arm\""),
        ("weight bias inf", "weight 2 0 0.5", "weight 2 0 inf", "weight 2"),
        ("weight position 1e39", "weight 4 1 1 ( 0 1 0 )", "weight 4 1 1 ( 0 1e39 0 )", "weight 4"),
    ] {
        let t = edited(SMALL_MESH, from, to);
        let line = line_of(&t, needle);
        cases.push(mesh_case(NonFinite, name, t, Md5Error::NonFinite { at: at(Mesh, line) }));
    }
    for (name, from, to, needle) in [
        ("frame value NaN", "0.5 0 0.2 0.6", "0.5 NaN 0.2 0.6", "0.5 NaN"),
        ("baseframe -inf", "( 0 0 0 ) ( 0 0 0 )\n\t( 0 0 2 )", "( 0 0 -inf ) ( 0 0 0 )\n\t( 0 0 2 )", "-inf"),
        ("frameRate inf", "frameRate 24", "frameRate inf", "frameRate"),
        ("bound 1e39", "( -1 -1 -1 ) ( 1 1 1 )", "( -1 -1 -1 ) ( 1 1e39 1 )", "1e39"),
    ] {
        let t = edited(SMALL_ANIM, from, to);
        let line = line_of(&t, needle);
        cases.push(anim_case(NonFinite, name, t, Md5Error::NonFinite { at: at(Anim, line) }));
    }
    let t = edited(SMALL_MESH, "( 0 0 0 ) ( 0 0 0 )\n", "( 0 0 -3e38 ) ( 0 0 0 )\n");
    let t = edited(&t, "( 0 0 2 ) ( 0 0 0.7071068 )", "( 0 0 3e38 ) ( 0 0 0.7071068 )");
    cases.push(mesh_case(
        NonFinite,
        "bind transforms that overflow f32",
        t,
        Md5Error::InvalidValue {
            at: at(Mesh, 9),
            what: "joint",
            requirement: "has a bind transform that overflows f32",
        },
    ));
    let t = edited(&bob_mesh, "( 11.004813 -3.177138 31.702473 )", "( 11.004813 nan 31.702473 )");
    cases.push(mesh_case(NonFinite, "Bob joint 1 position nan", t, Md5Error::NonFinite { at: at(Mesh, 9) }));

    // ---- frame order ------------------------------------------------------------------------
    let t = edited(SMALL_ANIM, "frame 1 {", "frame 2 {");
    let line = line_of(&t, "frame 2 {");
    cases.push(anim_case(
        Unsorted,
        "frame 2 where frame 1 is due",
        t,
        Md5Error::EntryIndex { at: at(Anim, line), what: "frame", expected: 1, found: 2 },
    ));
    let t = edited(&bob_anim, "frame 5 {", "frame 6 {");
    cases.push(
        Md5Case::is(
            Unsorted,
            "Bob frame 6 where frame 5 is due",
            bob_mesh.as_bytes().to_vec(),
            Md5Error::EntryIndex { at: at(Anim, 404), what: "frame", expected: 5, found: 6 },
        )
        .with_second(t.into_bytes()),
    );
    for rate in ["0", "-24"] {
        cases.push(anim_case(
            Unsorted,
            &format!("frameRate {rate}"),
            edited(SMALL_ANIM, "frameRate 24", &format!("frameRate {rate}")),
            Md5Error::InvalidValue { at: at(Anim, 6), what: "frameRate", requirement: "must be positive" },
        ));
    }
    cases.push(anim_case(
        Unsorted,
        "frameRate 1e-45",
        edited(SMALL_ANIM, "frameRate 24", "frameRate 1e-45"),
        Md5Error::InvalidValue {
            at: at(Anim, 6),
            what: "frameRate",
            requirement: "is too small: the last frame's time overflows f32",
        },
    ));
    let t = edited(SMALL_MESH, "vert 1 ", "vert 2 ");
    cases.push(mesh_case(
        Unsorted,
        "vert 2 where vert 1 is due",
        t,
        Md5Error::EntryIndex { at: at(Mesh, 16), what: "vert", expected: 1, found: 2 },
    ));

    // ---- joint indices ----------------------------------------------------------------------
    for (j, index) in [("2", 2i64), ("-1", -1), ("65536", 65536)] {
        let t = edited(SMALL_MESH, "weight 3 1 ", &format!("weight 3 {j} "));
        let line = line_of(&t, "weight 3");
        cases.push(mesh_case(
            JointIndex,
            &format!("weight joint {j} of 2"),
            t,
            Md5Error::IndexOutOfRange { at: at(Mesh, line), what: "weight joint", index, limit: 2 },
        ));
    }
    let t = edited(SMALL_MESH, "tri 1 1 2 3", "tri 1 1 2 4");
    cases.push(mesh_case(
        JointIndex,
        "triangle vertex 4 of 4",
        t,
        Md5Error::IndexOutOfRange { at: at(Mesh, 22), what: "triangle vertex", index: 4, limit: 4 },
    ));
    let t = edited(&bob_mesh, "weight 0 5 ", "weight 0 33 ");
    let line = line_of(&t, "weight 0 33 ");
    cases.push(mesh_case(
        JointIndex,
        "Bob weight joint 33 of 33",
        t,
        Md5Error::IndexOutOfRange { at: at(Mesh, line), what: "weight joint", index: 33, limit: 33 },
    ));
    cases.push(anim_case(
        JointIndex,
        "anim joint 1 named differently",
        edited(SMALL_ANIM, "\"arm\"\t0 56 1", "\"leg\"\t0 56 1"),
        Md5Error::HierarchyMismatch { at: at(Anim, 11), joint: 1 },
    ));
    cases.push(anim_case(
        JointIndex,
        "anim startIndex past the components",
        edited(SMALL_ANIM, "\"arm\"\t0 56 1", "\"arm\"\t0 56 2"),
        Md5Error::IndexOutOfRange { at: at(Anim, 11), what: "animated component", index: 4, limit: 4 },
    ));

    // ---- weights ----------------------------------------------------------------------------
    let t = edited(SMALL_MESH, "weight 3 1 0.5", "weight 3 1 -0.5");
    cases.push(mesh_case(
        Weights,
        "negative bias",
        t,
        Md5Error::InvalidValue { at: at(Mesh, 28), what: "weight bias", requirement: "must not be negative" },
    ));
    let zero_vertex = Md5Error::InvalidValue {
        at: at(Mesh, 15),
        what: "vertex",
        requirement: "has weights whose biases are all 0 (it follows no joint)",
    };
    cases.push(mesh_case(
        Weights,
        "vertex 0 biases all 0",
        edited(SMALL_MESH, "weight 0 0 1 ", "weight 0 0 0 "),
        zero_vertex,
    ));
    let t = edited(SMALL_MESH, "weight 2 0 0.5", "weight 2 0 0");
    let t = edited(&t, "weight 3 1 0.5", "weight 3 1 -0");
    cases.push(mesh_case(
        Weights,
        "vertex 2 biases 0 and -0",
        t,
        Md5Error::InvalidValue {
            at: at(Mesh, 17),
            what: "vertex",
            requirement: "has weights whose biases are all 0 (it follows no joint)",
        },
    ));
    let first_weight = bob_mesh.find("\tweight 0 ").expect("weight 0");
    let line_end = first_weight + bob_mesh[first_weight..].find('\n').expect("line");
    let words: Vec<&str> = bob_mesh[first_weight..line_end].split_whitespace().collect();
    let t = format!("{}\tweight 0 {} -{} {}", &bob_mesh[..first_weight], words[2], words[3], words[4..].join(" "))
        + &bob_mesh[line_end..];
    let line = line_of(&bob_mesh, "\tweight 0 ");
    cases.push(mesh_case(
        Weights,
        "Bob weight 0 negative",
        t,
        Md5Error::InvalidValue { at: at(Mesh, line), what: "weight bias", requirement: "must not be negative" },
    ));
    let t = edited(SMALL_MESH, "weight 2 0 0.5", "weight 2 0 1");
    cases.push(Md5Case::matching(
        Weights,
        "vertex 2 biases summing to 1.5 (kept, noted)",
        t.into_bytes(),
        "Ok with a note",
        |r| r.as_ref().is_ok_and(|rig| rig.notes.iter().any(|n| n.contains("off 1 by up to 0.5"))),
    ));

    // ---- hierarchy cycles -------------------------------------------------------------------
    cases.push(mesh_case(
        Cycle,
        "joint 1 its own parent",
        edited(SMALL_MESH, "\"arm\"\t0", "\"arm\"\t1"),
        Md5Error::IndexOutOfRange { at: at(Mesh, 9), what: "joint parent", index: 1, limit: 1 },
    ));
    cases.push(mesh_case(
        Cycle,
        "root parented to its child",
        edited(SMALL_MESH, "\"root\"\t-1", "\"root\"\t1"),
        Md5Error::IndexOutOfRange { at: at(Mesh, 8), what: "joint parent", index: 1, limit: 0 },
    ));
    cases.push(mesh_case(
        Cycle,
        "Bob spine parented to its neck",
        edited(&bob_mesh, "\"spine\"\t4 ", "\"spine\"\t6 "),
        Md5Error::IndexOutOfRange { at: at(Mesh, 13), what: "joint parent", index: 6, limit: 5 },
    ));
    cases.push(anim_case(
        Cycle,
        "anim arm made a root",
        edited(SMALL_ANIM, "\"arm\"\t0 56 1", "\"arm\"\t-1 56 1"),
        Md5Error::HierarchyMismatch { at: at(Anim, 11), joint: 1 },
    ));
    cases.push(anim_case(
        Cycle,
        "anim root parented to its child",
        edited(SMALL_ANIM, "\"root\"\t-1 1 0", "\"root\"\t1 1 0"),
        Md5Error::IndexOutOfRange { at: at(Anim, 10), what: "joint parent", index: 1, limit: 0 },
    ));

    // ---- degenerate triangles: kept by the importer -----------------------------------------
    let t = edited(SMALL_MESH, "tri 1 1 2 3", "tri 1 1 1 3");
    cases.push(Md5Case::matching(
        Degenerate,
        "triangle 1 repeats vertex 1 (kept)",
        t.into_bytes(),
        "Ok, both triangles",
        |r| r.as_ref().is_ok_and(|rig| rig.meshes[0].primitives[0].indices == [0, 1, 2, 1, 3, 1]),
    ));
    cases
}
