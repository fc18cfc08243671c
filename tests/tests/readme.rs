//! The documentation's code is the examples' code: every block of `README.md` and
//! `core/docs/*.md` under a `<!-- core/examples/NAME.rs#REGION -->` (or
//! `<!-- frontend-sdl/web/js/NAME.js#REGION -->`) marker must equal, line for line, the region
//! between `// ANCHOR: REGION` and `// ANCHOR_END: REGION` of that file (less the region's
//! indentation). The Rust examples are compiled by `cargo test -p sinew` and run by CI, the
//! JavaScript ones run in the browser tests, so the documents show code that runs.

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

/// README.md and the Markdown files of core/docs/, as (name, text).
fn documents() -> Vec<(String, String)> {
    let mut names = vec!["README.md".to_owned()];
    let mut docs: Vec<String> = std::fs::read_dir(root().join("core/docs"))
        .expect("core/docs")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("core/docs/{n}"))
        .collect();
    docs.sort();
    names.extend(docs);
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(root().join(&n)).unwrap_or_else(|e| panic!("{n}: {e}"));
            (n, text)
        })
        .collect()
}

#[test]
fn documented_code_is_the_examples_code() {
    let mut checked = Vec::new();
    for (document, text) in documents() {
        // Markers start a line; one quoted inside a sentence is not a marker.
        let mut rest = text.as_str();
        let next = |rest: &str| {
            ["\n<!-- core/examples/", "\n<!-- frontend-sdl/web/js/"].iter().filter_map(|m| rest.find(m)).min()
        };
        while let Some(at) = next(rest) {
            rest = &rest[at + "\n<!-- ".len()..];
            let marker = &rest[..rest.find(" -->").expect("marker ends")];
            let (file, name) = marker.split_once('#').expect("FILE#REGION");
            let after = &rest[marker.len() + " -->".len()..];
            let fence = if file.ends_with(".js") { "```js\n" } else { "```rust\n" };
            let code = after
                .trim_start()
                .strip_prefix(fence)
                .unwrap_or_else(|| panic!("{document}: {marker}: no {fence} block"));
            let code = &code[..code.find("\n```").expect("block ends")];
            let source = std::fs::read_to_string(root().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
            let want = region(&source, name).unwrap_or_else(|| panic!("{file} has no region {name}"));
            assert_eq!(code, want, "{document}: block {marker} differs from {file}");
            checked.push(format!("{document}: {marker}"));
        }
    }
    assert!(checked.len() >= 8, "blocks checked: {checked:?}");
    let in_readme = checked.iter().filter(|c| c.starts_with("README.md:")).count();
    assert!(in_readme >= 2, "README blocks checked: {checked:?}");
}
