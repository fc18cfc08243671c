//! The README's Rust code is the examples' code: every block under a
//! `<!-- core/examples/NAME.rs#REGION -->` marker must equal, line for line, the region between
//! `// ANCHOR: REGION` and `// ANCHOR_END: REGION` of that file (less the region's indentation).
//! The examples themselves are compiled by `cargo test -p sinew` and run by CI, so the README
//! shows code that compiles and runs.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The lines between the anchors of `region` in `source`, with the first line's indentation
/// removed from every line.
fn region(source: &str, region: &str) -> Option<String> {
    let lines: Vec<&str> = source.lines().collect();
    let start = lines.iter().position(|l| l.trim() == format!("// ANCHOR: {region}"))?;
    let end = start + lines[start..].iter().position(|l| l.trim() == format!("// ANCHOR_END: {region}"))?;
    let indent = lines[start].len() - lines[start].trim_start().len();
    let body: Vec<&str> = lines[start + 1..end].iter().map(|l| l.get(indent..).unwrap_or(l.trim_start())).collect();
    Some(body.join("\n"))
}

#[test]
fn readme_code_is_the_examples_code() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let mut checked = Vec::new();
    let mut rest = readme.as_str();
    while let Some(at) = rest.find("<!-- core/examples/") {
        rest = &rest[at + "<!-- ".len()..];
        let marker = &rest[..rest.find(" -->").expect("marker ends")];
        let (file, name) = marker.split_once('#').expect("FILE#REGION");
        let after = &rest[marker.len() + " -->".len()..];
        let code = after.trim_start().strip_prefix("```rust\n").unwrap_or_else(|| panic!("{marker}: no rust block"));
        let code = &code[..code.find("\n```").expect("block ends")];
        let source = std::fs::read_to_string(root().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let want = region(&source, name).unwrap_or_else(|| panic!("{file} has no region {name}"));
        assert_eq!(code, want, "README block {marker} differs from {file}");
        checked.push(marker.to_owned());
    }
    assert!(checked.len() >= 8, "README blocks checked: {checked:?}");
}
