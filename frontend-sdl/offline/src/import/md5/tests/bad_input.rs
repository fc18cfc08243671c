//! Bad input: every kind of rejected file with its exact error and line, truncated, hostile and
//! mutated files, and errors naming the file.

use super::*;

#[test]
fn wrong_version() {
    let e = mesh_err(&replace_once(TINY_MESH, "MD5Version 10", "MD5Version 6"));
    assert!(matches!(e, Md5Error::UnsupportedVersion { version: 6, at: Location { line: 1, .. } }), "{e}");
    let e = anim_err(&replace_once(TINY_ANIM, "MD5Version 10", "MD5Version 11"));
    assert!(matches!(e, Md5Error::UnsupportedVersion { version: 11, .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "MD5Version 10", "MD5version 10"));
    assert!(matches!(e, Md5Error::UnexpectedToken { expected: "MD5Version", found: TokenKind::Word, .. }), "{e}");
}

#[test]
fn count_mismatches() {
    let cases: [(&str, &str, &str, usize, usize); 7] = [
        ("numJoints 2", "numJoints 3", "joints", 3, 2),
        ("numJoints 2", "numJoints 1", "joints", 1, 2),
        ("numverts 3", "numverts 4", "vert", 4, 3),
        ("numverts 3", "numverts 2", "vert", 2, 3),
        ("numtris 1", "numtris 2", "tri", 2, 1),
        ("numweights 4", "numweights 5", "weight", 5, 4),
        ("numweights 4", "numweights 3", "weight", 3, 4),
    ];
    for (from, to, what, declared, found) in cases {
        let e = mesh_err(&replace_once(TINY_MESH, from, to));
        assert!(
            matches!(e, Md5Error::CountMismatch { what: w, declared: d, found: f, .. }
                if w == what && d == declared && f == found),
            "{to}: {e}"
        );
    }
    let e = mesh_err(&replace_once(TINY_MESH, "numMeshes 1", "numMeshes 0"));
    assert!(matches!(e, Md5Error::CountMismatch { what: "numMeshes", declared: 0, found: 1, .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "numMeshes 1", "numMeshes 2"));
    assert!(matches!(e, Md5Error::UnexpectedEnd { expected: "mesh", .. }), "{e}");

    let e = anim_err(&replace_once(TINY_ANIM, "numFrames 3", "numFrames 2"));
    assert!(matches!(e, Md5Error::CountMismatch { what: "bounds", declared: 2, found: 3, .. }), "{e}");
    let e = anim_err(&replace_once(TINY_ANIM, "2 -0.9 0 0", "2 -0.9 0"));
    assert!(matches!(e, Md5Error::CountMismatch { what: "numAnimatedComponents", found: 3, .. }), "{e}");
    let e = anim_err(&replace_once(TINY_ANIM, "2 -0.9 0 0", "2 -0.9 0 0 0"));
    assert!(matches!(e, Md5Error::CountMismatch { what: "numAnimatedComponents", found: 5, .. }), "{e}");
    let e = anim_err(&replace_once(TINY_ANIM, "\t( 0 0 1 ) ( 0 0 0 )\n", ""));
    assert!(matches!(e, Md5Error::CountMismatch { what: "baseframe", declared: 2, found: 1, .. }), "{e}");
    let e = anim_err(&replace_once(
        TINY_ANIM,
        "frame 2 {\n\t2 -0.9 0 0\n}\n",
        "frame 2 {\n\t2 -0.9 0 0\n}\nframe 3 { 0 0 0 0 }\n",
    ));
    assert!(matches!(e, Md5Error::CountMismatch { what: "frame", declared: 3, found: 4, .. }), "{e}");
}

#[test]
fn entries_out_of_order() {
    let e = mesh_err(&replace_once(TINY_MESH, "vert 1 ", "vert 5 "));
    assert!(matches!(e, Md5Error::EntryIndex { what: "vert", expected: 1, found: 5, .. }), "{e}");
    let e = anim_err(&replace_once(TINY_ANIM, "frame 1 {", "frame 2 {"));
    assert!(matches!(e, Md5Error::EntryIndex { what: "frame", expected: 1, found: 2, .. }), "{e}");
}

#[test]
fn parent_out_of_range() {
    for parent in ["1", "2", "-2", "99999999999"] {
        let e = mesh_err(&replace_once(TINY_MESH, "\"child\"\t0", &format!("\"child\"\t{parent}")));
        assert!(matches!(e, Md5Error::IndexOutOfRange { what: "joint parent", limit: 1, .. }), "{e}");
        let e = anim_err(&replace_once(TINY_ANIM, "\"child\"\t0", &format!("\"child\"\t{parent}")));
        assert!(matches!(e, Md5Error::IndexOutOfRange { what: "joint parent", limit: 1, .. }), "{e}");
    }
}

#[test]
fn indices_out_of_range() {
    let e = mesh_err(&replace_once(TINY_MESH, "weight 3 1 ", "weight 3 2 "));
    assert!(matches!(e, Md5Error::IndexOutOfRange { what: "weight joint", index: 2, limit: 2, .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "weight 3 1 ", "weight 3 -1 "));
    assert!(matches!(e, Md5Error::IndexOutOfRange { what: "weight joint", index: -1, .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "( 0 1 ) 2 2", "( 0 1 ) 2 3"));
    assert!(
        matches!(
            e,
            Md5Error::IndexOutOfRange {
                what: "vertex weight range",
                index: 4,
                limit: 4,
                at: Location { line: 17, .. }
            }
        ),
        "{e}"
    );
    let e = mesh_err(&replace_once(TINY_MESH, "( 0 1 ) 2 2", "( 0 1 ) 18446744073 2"));
    assert!(matches!(e, Md5Error::IndexOutOfRange { what: "vertex weight range", .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "tri 0 0 2 1", "tri 0 0 3 1"));
    assert!(matches!(e, Md5Error::IndexOutOfRange { what: "triangle vertex", index: 3, limit: 3, .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "( 0 1 ) 2 2", "( 0 1 ) 2 0"));
    assert!(matches!(e, Md5Error::InvalidValue { what: "countWeight", .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "( 0 1 ) 2 2", "( 0 1 ) 2 33"));
    assert!(matches!(e, Md5Error::TooLarge { what: "countWeight", value: 33, max: 32, .. }), "{e}");
    // Negative biases and vertices whose biases are all 0.
    let e = mesh_err(&replace_once(TINY_MESH, "weight 3 1 0.5", "weight 3 1 -0.5"));
    assert!(matches!(e, Md5Error::InvalidValue { what: "weight bias", at: Location { line: 26, .. }, .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "weight 1 0 1 ", "weight 1 0 0 "));
    assert!(matches!(e, Md5Error::InvalidValue { what: "vertex", at: Location { line: 16, .. }, .. }), "{e}");
    // startIndex + flagged components beyond numAnimatedComponents.
    let e = anim_err(&replace_once(TINY_ANIM, "0 56 1", "0 56 2"));
    assert!(matches!(e, Md5Error::IndexOutOfRange { what: "animated component", index: 4, limit: 4, .. }), "{e}");
    let e = anim_err(&replace_once(TINY_ANIM, "0 56 1", "0 63 1"));
    assert!(matches!(e, Md5Error::IndexOutOfRange { what: "animated component", index: 6, .. }), "{e}");
    let e = anim_err(&replace_once(TINY_ANIM, "0 56 1", "0 64 1"));
    assert!(matches!(e, Md5Error::InvalidValue { what: "joint flags", .. }), "{e}");
    // No flags: nothing is read, any start is fine.
    let anim = parse_anim(&replace_once(TINY_ANIM, "-1 1 0", "-1 0 77")).unwrap();
    assert_eq!(anim.pose(1).unwrap()[0].translation, Vec3::ZERO);
}

#[test]
fn non_finite_and_malformed_numbers() {
    for bad in ["nan", "NaN", "inf", "-infinity", "1e39"] {
        let e = mesh_err(&replace_once(TINY_MESH, "( 1 0 0 )", &format!("( {bad} 0 0 )")));
        assert!(matches!(e, Md5Error::NonFinite { at: Location { line: 24, .. } }), "{bad}: {e}");
        let e = anim_err(&replace_once(TINY_ANIM, "2 0.9 0 0", &format!("2 0.9 {bad} 0")));
        assert!(matches!(e, Md5Error::NonFinite { .. }), "{bad}: {e}");
    }
    let e = anim_err(&replace_once(TINY_ANIM, "frameRate 10", "frameRate nan"));
    assert!(matches!(e, Md5Error::NonFinite { .. }), "{e}");
    let e = anim_err(&replace_once(TINY_ANIM, "frameRate 10", "frameRate 0"));
    assert!(matches!(e, Md5Error::InvalidValue { what: "frameRate", .. }), "{e}");
    let e = anim_err(&replace_once(TINY_ANIM, "frameRate 10", "frameRate 1e-45"));
    assert!(matches!(e, Md5Error::InvalidValue { what: "frameRate", at: Location { line: 6, .. }, .. }), "{e}");
    // Finite numbers whose bind transform or position overflows f32.
    let e =
        mesh_err(&replace_once(TINY_MESH, "0 ( 0 0 1 )", "0 ( 0 0 3e38 )").replace("-1 ( 0 0 0 )", "-1 ( 0 0 -3e38 )"));
    assert!(matches!(e, Md5Error::InvalidValue { what: "joint", at: Location { line: 9, .. }, .. }), "{e}");
    let e = mesh_err(
        &replace_once(TINY_MESH, "weight 2 0 0.5 ( 0 1 0 )", "weight 2 0 1 ( 0 3e38 0 )")
            .replace("weight 3 1 0.5 ( -1 0 -1 )", "weight 3 0 1 ( 0 3e38 0 )"),
    );
    assert!(matches!(e, Md5Error::InvalidValue { what: "vertex", at: Location { line: 17, .. }, .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "( 1 0 0 )", "( 1x 0 0 )"));
    assert!(matches!(e, Md5Error::BadNumber { expected: "a weight position", .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "numverts 3", "numverts 3.0"));
    assert!(matches!(e, Md5Error::BadNumber { expected: "numverts", .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "numverts 3", "numverts -3"));
    assert!(matches!(e, Md5Error::InvalidValue { what: "numverts", .. }), "{e}");
    // Quaternion x y z longer than 1.
    let e = mesh_err(&replace_once(TINY_MESH, "( 0 0 0.7071068 )", "( 0 0.8 0.7071068 )"));
    assert!(matches!(e, Md5Error::InvalidValue { what: "joint orientation", at: Location { line: 9, .. }, .. }), "{e}");
    let e = anim_err(&replace_once(TINY_ANIM, "2 0.9 0 0", "2 0.9 0.9 0"));
    assert!(
        matches!(e, Md5Error::InvalidValue { what: "a frame orientation", at: Location { line: 29, .. }, .. }),
        "{e}"
    );
}

#[test]
fn unexpected_tokens_and_strings() {
    let e = mesh_err(&replace_once(TINY_MESH, "joints {", "joints ("));
    assert!(matches!(e, Md5Error::UnexpectedToken { found: TokenKind::OpenParen, .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "\"child\"", "child"));
    assert!(matches!(e, Md5Error::UnexpectedToken { found: TokenKind::Word, .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "commandline \"test\"", "commandline \"test"));
    assert!(matches!(e, Md5Error::UnterminatedString { at: Location { line: 2, .. } }), "{e}");
    let e = mesh_err(&format!("{TINY_MESH}\nextra"));
    assert!(matches!(e, Md5Error::UnexpectedToken { expected: "mesh", .. }), "{e}");
    let e = anim_err(&format!("{TINY_ANIM}\n}}"));
    assert!(matches!(e, Md5Error::UnexpectedToken { expected: "the end of the input", .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "numJoints 2", "numJoints 0"));
    assert!(matches!(e, Md5Error::InvalidValue { what: "numJoints", .. }), "{e}");
    let e = anim_err(&replace_once(TINY_ANIM, "numFrames 3", "numFrames 0"));
    assert!(matches!(e, Md5Error::InvalidValue { what: "numFrames", .. }), "{e}");
}

#[test]
fn hierarchy_mismatch() {
    let mesh = parse_mesh(TINY_MESH).unwrap();
    let renamed = parse_anim(&replace_once(TINY_ANIM, "\"child\"", "\"kid\"")).unwrap();
    let e = to_rig(&mesh, &[("a", &renamed)], "x").unwrap_err();
    assert!(
        matches!(e, Md5Error::HierarchyMismatch { joint: 1, at: Location { file: Md5File::Anim, line: 11 } }),
        "{e}"
    );
    let reparented = parse_anim(&replace_once(TINY_ANIM, "\"child\"\t0 56 1", "\"child\"\t-1 56 1")).unwrap();
    let e =
        load(TINY_MESH, Some(&replace_once(TINY_ANIM, "\"child\"\t0 56 1", "\"child\"\t-1 56 1")), "x").unwrap_err();
    assert!(matches!(e, Md5Error::HierarchyMismatch { joint: 1, .. }), "{e}");
    assert!(to_rig(&mesh, &[("a", &reparented)], "x").is_err());
    // One joint fewer in the anim.
    let short = TINY_ANIM
        .replace("numJoints 2", "numJoints 1")
        .replace("\t\"child\"\t0 56 1\t// root\n", "")
        .replace("\t( 0 0 1 ) ( 0 0 0 )\n", "");
    let short = parse_anim(&short).unwrap();
    let e = to_rig(&mesh, &[("a", &short)], "x").unwrap_err();
    assert!(
        matches!(e, Md5Error::HierarchyMismatch { joint: 1, at: Location { file: Md5File::Anim, line: 5 } }),
        "{e}"
    );
    // Bob's mesh with the tiny anim.
    let bob_mesh = parse_mesh(&bob_texts().0).unwrap();
    let tiny = parse_anim(TINY_ANIM).unwrap();
    assert!(matches!(to_rig(&bob_mesh, &[("a", &tiny)], "x"), Err(Md5Error::HierarchyMismatch { joint: 0, .. })));
}

#[test]
fn truncated_files() {
    // Cut after whole lines: every proper prefix of both tiny files is an unexpected end.
    for (text, parse) in [
        (TINY_MESH, (|t: &str| parse_mesh(t).map(|_| ())) as fn(&str) -> Result<(), Md5Error>),
        (TINY_ANIM, |t: &str| parse_anim(t).map(|_| ())),
    ] {
        let lines: Vec<&str> = text.lines().collect();
        let mut cut_points = 0;
        for n in 0..lines.len() {
            let prefix = lines[..n].join("\n");
            // Prefixes that end after the last closing brace are complete.
            if prefix.trim_end().len() == text.trim_end().len() {
                continue;
            }
            let e = parse(&prefix).unwrap_err();
            assert!(matches!(e, Md5Error::UnexpectedEnd { .. }), "{n} lines: {e}");
            cut_points += 1;
        }
        assert!(cut_points > 20);
    }
    // Bob cut at several points: inside joints, a vert list, a weight list, frames.
    let (m, a) = bob_texts();
    for line in [3, 20, 100, 700, 1500, 3000, 3300] {
        let prefix: String = m.lines().take(line).collect::<Vec<_>>().join("\n");
        let e = parse_mesh(&prefix).unwrap_err();
        assert!(matches!(e, Md5Error::UnexpectedEnd { .. }), "mesh {line}: {e}");
    }
    for line in [4, 30, 100, 200, 500, 1500] {
        let prefix: String = a.lines().take(line).collect::<Vec<_>>().join("\n");
        let e = parse_anim(&prefix).unwrap_err();
        assert!(matches!(e, Md5Error::UnexpectedEnd { .. }), "anim {line}: {e}");
    }
    // Byte-level cuts never panic and never succeed.
    for cut in 0..TINY_MESH.trim_end().len() - 1 {
        assert!(load(&TINY_MESH[..cut], None, "t").is_err(), "{cut}");
    }
    for cut in 0..TINY_ANIM.trim_end().len() - 1 {
        assert!(load(TINY_MESH, Some(&TINY_ANIM[..cut]), "t").is_err(), "{cut}");
    }
    for cut in (0..m.len()).step_by(997) {
        assert!(parse_mesh(&m[..cut]).is_err());
    }
    for cut in (0..a.len()).step_by(997) {
        assert!(parse_anim(&a[..cut]).is_err());
    }
}

#[test]
fn hostile_counts_do_not_allocate() {
    // Huge declared counts with almost no entries fail on the mismatch, not on allocation.
    let e = mesh_err(&replace_once(TINY_MESH, "numverts 3", "numverts 4294967295"));
    assert!(matches!(e, Md5Error::CountMismatch { declared: 4294967295, found: 3, .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "numverts 3", "numverts 4294967296"));
    assert!(matches!(e, Md5Error::TooLarge { what: "numverts", .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "numweights 4", "numweights 9223372036854775807"));
    assert!(matches!(e, Md5Error::CountMismatch { .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "numMeshes 1", "numMeshes 9223372036854775807"));
    assert!(matches!(e, Md5Error::UnexpectedEnd { .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "numJoints 2", "numJoints 65536"));
    assert!(matches!(e, Md5Error::CountMismatch { what: "joints", declared: 65536, found: 2, .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "numJoints 2", "numJoints 65537"));
    assert!(matches!(e, Md5Error::TooLarge { what: "numJoints", .. }), "{e}");
    let e = mesh_err(&replace_once(TINY_MESH, "numverts 3", "numverts 99999999999999999999"));
    assert!(matches!(e, Md5Error::BadNumber { .. }), "{e}");
    let e = anim_err(&replace_once(TINY_ANIM, "numFrames 3", "numFrames 2000000"));
    assert!(matches!(e, Md5Error::TooLarge { what: "numJoints × numFrames", .. }), "{e}");
    let e = anim_err(&replace_once(TINY_ANIM, "numAnimatedComponents 4", "numAnimatedComponents 4294967295"));
    assert!(matches!(e, Md5Error::CountMismatch { what: "numAnimatedComponents", found: 4, .. }), "{e}");
}

/// Random byte substitutions, insertions and deletions in the tiny files and in Bob: loading
/// never panics, and whatever loads keeps the rig's invariants.
#[test]
fn mutated_inputs_never_panic() {
    const BYTES: &[u8] = b"0123456789-+.e ()\"{}\n/xnaif\t";
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let (bob_mesh, bob_anim) = bob_texts();
    let (mut ok, mut err) = (0, 0);
    for round in 0..4400 {
        let (mesh, anim) = if round < 4000 { (TINY_MESH, TINY_ANIM) } else { (&bob_mesh[..], &bob_anim[..]) };
        let (mut mesh, mut anim) = (mesh.as_bytes().to_vec(), anim.as_bytes().to_vec());
        let target = if round % 2 == 0 { &mut mesh } else { &mut anim };
        for _ in 0..1 + rand(3) {
            let at = rand(target.len());
            let b = BYTES[rand(BYTES.len())];
            match rand(3) {
                0 => target[at] = b,
                1 => target.insert(at, b),
                _ => {
                    target.remove(at);
                }
            }
        }
        let (mesh, anim) = (String::from_utf8(mesh).unwrap(), String::from_utf8(anim).unwrap());
        match load(&mesh, Some(&anim), "fuzz") {
            Ok(rig) => {
                ok += 1;
                assert_rig_invariants(&rig);
            }
            Err(e) => {
                err += 1;
                assert!(!e.to_string().is_empty());
            }
        }
    }
    println!("mutations: {ok} loaded, {err} rejected");
    assert!(ok > 0 && err > 0);
}

#[test]
fn load_files_errors_name_the_file() {
    let (m, _) = bob_paths();
    let missing = m.with_file_name("missing.md5anim");
    let e = load_files(&m, Some(&missing)).unwrap_err();
    assert!(matches!(&e, LoadError::Io { path, .. } if path == &missing), "{e}");
    assert!(std::error::Error::source(&e).is_some());
    // A mesh with an anim of another skeleton: the error names the anim.
    let dir = std::env::temp_dir().join(format!("sinew-md5-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let anim = dir.join("tiny.md5anim");
    std::fs::write(&anim, TINY_ANIM).unwrap();
    let e = load_files(&m, Some(&anim)).unwrap_err();
    assert!(matches!(&e, LoadError::Md5 { path, error: Md5Error::HierarchyMismatch { .. } } if path == &anim), "{e}");
    let mesh = dir.join("tiny.md5mesh");
    std::fs::write(&mesh, TINY_MESH).unwrap();
    let rig = load_files(&mesh, Some(&anim)).unwrap();
    assert_eq!((rig.name.as_str(), rig.clips[0].name.as_str()), ("tiny", "tiny"));
    let rig = load_files(&mesh, None).unwrap();
    assert!(rig.clips.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}
