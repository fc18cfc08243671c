//! The documentation (`README.md` and `core/docs/*.md`) against the repository:
//!
//! - every relative link points to a file or folder that exists, and every `#anchor` to a
//!   heading of its document;
//! - every table between `<!-- generated: COMMAND -->` and `<!-- end -->` is what COMMAND
//!   prints now, timing columns aside: the test runs the library function the command runs and
//!   compares cell by cell, with the columns the generator names as timings masked.
//!
//! Tables that only a measurement on a quiet machine can give (`compare.sh` against ozz-rs,
//! the firmware images' sizes) are not generated; the documents mark them as measured runs with
//! their command and date.

use std::path::{Path, PathBuf};

use sinew_offline::bake::BakeOptions;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// README.md and every Markdown file of core/docs/, as (path, text).
fn documents() -> Vec<(PathBuf, String)> {
    let mut paths = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("core/docs"))
        .expect("core/docs")
        .map(|e| e.expect("core/docs entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, text)
        })
        .collect()
}

/// The text outside fenced code blocks.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out += line;
            out.push('\n');
        }
    }
    out
}

/// The targets of the Markdown links and images of `text` (`[..](target)`), code aside.
fn links(text: &str) -> Vec<String> {
    let text = prose(text);
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            let target = rest[..end].split_whitespace().next().unwrap_or("");
            out.push(target.to_owned());
            rest = &rest[end..];
        }
    }
    // Inline code may hold `](`: a target with a space or backtick is not a link.
    out.retain(|t| !t.contains('`'));
    out
}

/// GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces as
/// `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of the headings of `text`.
fn anchors(text: &str) -> Vec<String> {
    prose(text).lines().filter(|l| l.starts_with('#')).map(|l| slug(l.trim_start_matches('#'))).collect()
}

#[test]
fn relative_links_resolve() {
    let mut checked = 0;
    let mut broken = Vec::new();
    for (path, text) in documents() {
        let dir = path.parent().expect("a folder");
        for target in links(&text) {
            if target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = target.split_once('#').map_or((target.as_str(), None), |(f, a)| (f, Some(a)));
            let resolved = if file.is_empty() { path.clone() } else { dir.join(file) };
            checked += 1;
            if !resolved.exists() {
                broken.push(format!("{}: {target}: no such file", path.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                let linked = std::fs::read_to_string(&resolved).unwrap_or_default();
                if !anchors(&linked).iter().any(|a| a == anchor) {
                    broken.push(format!("{}: {target}: no such heading", path.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked >= 20, "only {checked} relative links found");
}

/// A Markdown table as rows of trimmed cells (the separator row left out).
fn cells(table: &str) -> Vec<Vec<String>> {
    table
        .lines()
        .filter(|l| l.starts_with('|'))
        .filter(|l| !l.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ')))
        .map(|l| l.trim().trim_matches('|').split('|').map(|c| c.trim().to_owned()).collect())
        .collect()
}

/// `table`'s cells with the columns headed by a name in `timings` replaced by `*`.
fn masked(table: &str, timings: &[&str]) -> Vec<Vec<String>> {
    let mut rows = cells(table);
    let Some(header) = rows.first().cloned() else { return rows };
    for row in rows.iter_mut().skip(1) {
        for (cell, name) in row.iter_mut().zip(&header) {
            if timings.contains(&name.as_str()) {
                *cell = "*".to_owned();
            }
        }
    }
    rows
}

/// The shared models' folder, beside the repository (or `$SINEW_ASSETS`).
fn assets() -> PathBuf {
    sinew_assets::dir("")
}

/// The table COMMAND prints now and its timing columns, for each command the documents name.
fn generate(command: &str) -> (String, Vec<&'static str>) {
    match command {
        "sinew bench --compression ../shared/assets --shell 0.03 --markdown" => {
            let opts = BakeOptions { shell: 0.03, shell_from_mesh: false, ..BakeOptions::default() };
            let rows = sinew_offline::compression::run_shared(&assets(), &opts, |_| {})
                .unwrap_or_else(|(path, e)| panic!("{}: {e}", path.display()));
            (sinew_offline::compression::markdown(&rows), sinew_offline::compression::TIMING_COLUMNS.to_vec())
        }
        "sinew bench --compression ../shared/assets --shell mesh --markdown" => {
            let opts = BakeOptions { shell_from_mesh: true, ..BakeOptions::default() };
            let rows = sinew_offline::compression::run_shared(&assets(), &opts, |_| {})
                .unwrap_or_else(|(path, e)| panic!("{}: {e}", path.display()));
            (sinew_offline::compression::markdown_mesh(&rows), sinew_offline::compression::TIMING_COLUMNS.to_vec())
        }
        "cargo test -p sinew-tests --test docs graph_memory -- --nocapture" => (graph_memory_table(), Vec::new()),
        _ => panic!("no generator for `{command}`: add it to tests/tests/docs.rs"),
    }
}

sinew::capacity! {
    /// The fixture's character under a graph: 24 joints, 4 slots, 4 parameters.
    struct Character { joints: 24, slots: 4, params: 4 }
}
sinew::capacity! {
    /// The same character with two graph layers.
    struct CharacterLayered { joints: 24, slots: 4, layers: 2, params: 4 }
}
sinew::capacity! {
    /// Fox under a graph: 67 joints, 6 slots, 8 parameters.
    struct FoxGraph { joints: 67, slots: 6, params: 8 }
}
sinew::capacity! {
    /// Fox with three graph layers.
    struct FoxLayered { joints: 67, slots: 6, layers: 3, params: 8 }
}

/// One row of the memory table: a state machine of capacity `C` (`layered`: a
/// `LayeredStateMachine`, whose layers each hold a one-layer controller).
fn graph_memory_row<C: sinew::capacity::Capacity>(name: &str, layered: bool) -> String {
    use sinew::capacity::OneLayer;
    use sinew::controller::{Controller, ControllerScratch};
    use sinew::graph::{LayeredScratch, LayeredStateMachine, StateMachine};
    use sinew::Q16;
    use sinew_offline::compression::thousands;
    use std::mem::size_of;
    let (machine, [f, q, controllers, scratch]) = if layered {
        (
            format!("`LayeredStateMachine<R, {name}>`"),
            [
                size_of::<LayeredStateMachine<f32, C>>(),
                size_of::<LayeredStateMachine<Q16, C>>(),
                C::LAYERS * size_of::<Controller<f32, OneLayer<C>>>(),
                size_of::<LayeredScratch<f32, C>>(),
            ],
        )
    } else {
        (
            format!("`StateMachine<R, {name}>`"),
            [
                size_of::<StateMachine<f32, C>>(),
                size_of::<StateMachine<Q16, C>>(),
                size_of::<Controller<f32, C>>(),
                size_of::<ControllerScratch<f32, C>>(),
            ],
        )
    };
    format!(
        "| {machine} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
        C::JOINTS,
        C::SLOTS,
        C::TRACKS,
        C::PARAMS,
        C::LAYERS,
        thousands(f),
        thousands(q),
        thousands(controllers),
        thousands(scratch)
    )
}

/// The memory table of `core/docs/graphs.md`: `size_of` of state machines, their controllers
/// and the scratch they share, for two characters.
fn graph_memory_table() -> String {
    let mut s = String::from(
        "| machine | joints | slots | tracks | parameters | layers | bytes (`f32`) | bytes (`Q16`) | of which controllers | shared scratch |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    s += &graph_memory_row::<Character>("Character", false);
    s += &graph_memory_row::<FoxGraph>("FoxGraph", false);
    s += &graph_memory_row::<CharacterLayered>("CharacterLayered", true);
    s += &graph_memory_row::<FoxLayered>("FoxLayered", true);
    s
}

/// Prints the memory table of `core/docs/graphs.md` (`-- --nocapture`).
#[test]
fn graph_memory() {
    print!("{}", graph_memory_table());
}

/// Every `<!-- generated: COMMAND -->` … `<!-- end -->` block of the documents: (document,
/// command, the block's text).
fn generated_blocks() -> Vec<(PathBuf, String, String)> {
    let mut out = Vec::new();
    for (path, text) in documents() {
        // Markers start a line; one quoted inside a sentence is not a marker.
        let mut rest = text.as_str();
        while let Some(at) = rest.find("\n<!-- generated: ") {
            rest = &rest[at + "\n<!-- generated: ".len()..];
            let close = rest.find(" -->").expect("the marker ends with -->");
            let command = rest[..close].to_owned();
            rest = &rest[close + " -->".len()..];
            let end = rest.find("<!-- end -->").unwrap_or_else(|| panic!("{}: `{command}` has no end", path.display()));
            out.push((path.clone(), command, rest[..end].to_owned()));
            rest = &rest[end..];
        }
    }
    out
}

#[test]
fn generated_tables_are_what_their_commands_print() {
    let blocks = generated_blocks();
    assert!(!blocks.is_empty(), "no generated table in the documents");
    for (path, command, block) in blocks {
        let (now, timings) = generate(&command);
        let (want, got) = (masked(&now, &timings), masked(&block, &timings));
        assert!(!want.is_empty(), "`{command}` printed no table");
        if want != got {
            panic!(
                "{}: the table of `{command}` differs from what it prints now (timings aside); \
                 replace it with:\n{now}",
                path.display()
            );
        }
    }
}

#[test]
fn masking_keeps_everything_but_the_timings() {
    let a = "| a | t |\n|---|---:|\n| 1 | 5 |\n";
    let b = "| a | t |\n|---|---:|\n| 1 | 7 |\n";
    let c = "| a | t |\n|---|---:|\n| 2 | 5 |\n";
    assert_eq!(masked(a, &["t"]), masked(b, &["t"]));
    assert_ne!(masked(a, &["t"]), masked(c, &["t"]));
    assert_ne!(masked(a, &[]), masked(b, &[]));
    assert_eq!(slug("Q16.16 or `f32`: the choice"), "q1616-or-f32-the-choice");
}
