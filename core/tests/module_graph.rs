//! The core's top-level modules form layers: no module reaches, through `crate::` (or
//! `super::`) paths in code that is compiled outside tests, a module that reaches it back.
//!
//! The check reads the sources from `src/lib.rs` down the `mod` declarations, drops comments,
//! string and character literals and every item under `#[cfg(test)]` (test modules, in their own
//! files or inline), and collects the modules each top-level module refers to: `crate::a::..`,
//! groups such as `use crate::{a, b::c}`, `super::` paths that climb to the crate root, and the
//! crate root's re-exports (`crate::Real` is a reference to the module `Real` comes from). A
//! reference it cannot resolve, or a source file that is neither a module nor a test module,
//! fails the test, so nothing is skipped silently.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A top-level module's references: the module referred to, and where (file, line).
type Graph = BTreeMap<String, BTreeMap<String, (String, usize)>>;

/// `src` with comments removed and the contents of string and character literals blanked
/// (newlines are kept, so line numbers stay valid).
fn strip_comments_and_literals(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(k).copied().unwrap_or('\0');
        let prev_ident = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        if at(i) == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if at(i) == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if !prev_ident && (at(i) == 'r' || (at(i) == 'b' && at(i + 1) == 'r')) && {
            // A raw string: r"..", r#".."#, br"..".
            let mut k = i + if at(i) == 'b' { 2 } else { 1 };
            while at(k) == '#' {
                k += 1;
            }
            at(k) == '"'
        } {
            let start = i + if at(i) == 'b' { 2 } else { 1 };
            let mut k = start;
            while at(k) == '#' {
                k += 1;
            }
            let hashes = k - start;
            out.push_str("\"\"");
            i = k + 1;
            while i < c.len() {
                if c[i] == '"' && (0..hashes).all(|h| at(i + 1 + h) == '#') {
                    i += 1 + hashes;
                    break;
                }
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if at(i) == '"' {
            out.push_str("\"\"");
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                }
                i += 1;
            }
            i += 1;
        } else if at(i) == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A character literal ('x', '\n', '\'', '\u{..}'); a lifetime has no closing quote.
            out.push_str("' '");
            i += if at(i + 1) == '\\' { 2 } else { 1 };
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            if at(i) == '\'' && at(i - 1) == '\\' && at(i + 1) == '\'' {
                i += 1; // '\''
            }
            i += 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The end (exclusive) of the bracket group opened at `open` (`(`, `[` or `{`).
fn group_end(c: &[char], open: usize) -> usize {
    let mut depth = 0i32;
    for (k, &ch) in c.iter().enumerate().skip(open) {
        match ch {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
    }
    c.len()
}

/// Removes every item under `#[cfg(test)]` from stripped source. Returns the remaining code and
/// the names of the removed `mod name;` declarations (test modules in their own files).
fn strip_test_items(code: &str) -> (String, Vec<String>) {
    let c: Vec<char> = code.chars().collect();
    let mut keep = vec![true; c.len()];
    let mut test_mods = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i] != '#' || c.get(i + 1) != Some(&'[') {
            i += 1;
            continue;
        }
        let end = group_end(&c, i + 1);
        let attr: String = c[i + 2..end - 1].iter().filter(|ch| !ch.is_whitespace()).collect();
        if attr != "cfg(test)" {
            i = end;
            continue;
        }
        // Further attributes, then the item up to its `;` or its braces.
        let mut k = end;
        loop {
            while k < c.len() && c[k].is_whitespace() {
                k += 1;
            }
            if c.get(k) == Some(&'#') && c.get(k + 1) == Some(&'[') {
                k = group_end(&c, k + 1);
            } else {
                break;
            }
        }
        let item_start = k;
        while k < c.len() && c[k] != ';' && c[k] != '{' {
            if c[k] == '(' || c[k] == '[' {
                k = group_end(&c, k);
            } else {
                k += 1;
            }
        }
        let head: String = c[item_start..k.min(c.len())].iter().collect();
        let item_end = if c.get(k) == Some(&'{') { group_end(&c, k) } else { k + 1 };
        if c.get(k) == Some(&';') {
            let words: Vec<&str> = head.split_whitespace().collect();
            if let Some(p) = words.iter().position(|w| *w == "mod") {
                test_mods.push(words[p + 1].to_string());
            }
        }
        for flag in keep.iter_mut().take(item_end.min(c.len())).skip(i) {
            *flag = false;
        }
        i = item_end;
    }
    // Newlines stay, so line numbers stay valid.
    let code = c.iter().zip(&keep).map(|(&ch, &k)| if k || ch == '\n' { ch } else { ' ' }).collect();
    (code, test_mods)
}

/// The identifier starting at `k`, if any.
fn ident_at(c: &[char], k: usize) -> Option<(String, usize)> {
    let start = k;
    let mut k = k;
    while k < c.len() && (c[k].is_alphanumeric() || c[k] == '_') {
        k += 1;
    }
    (k > start && !c[start].is_ascii_digit()).then(|| (c[start..k].iter().collect(), k))
}

fn skip_ws(c: &[char], mut k: usize) -> usize {
    while k < c.len() && c[k].is_whitespace() {
        k += 1;
    }
    k
}

/// The first segments of the paths in a `{..}` group starting at `open`.
fn group_heads(c: &[char], open: usize) -> Vec<String> {
    let end = group_end(c, open);
    let mut heads = Vec::new();
    let mut k = open + 1;
    let mut expect = true;
    while k < end - 1 {
        match c[k] {
            '{' => {
                k = group_end(c, k);
                continue;
            }
            ',' => expect = true,
            ch if expect && (ch.is_alphanumeric() || ch == '_') => {
                if let Some((id, next)) = ident_at(c, k) {
                    heads.push(id);
                    k = next;
                    expect = false;
                    continue;
                }
            }
            _ => {}
        }
        k += 1;
    }
    heads
}

/// The paths of `code` that leave the module at `module_path` for the crate root: for each, the
/// first segment below the root and its line. `crate::a::b`, `crate::{a, b}`, and `super::`
/// chains that climb above the top-level module.
fn root_references(code: &str, module_path: &[String]) -> Vec<(String, usize)> {
    let c: Vec<char> = code.chars().collect();
    let mut refs = Vec::new();
    let mut line = 1;
    let mut k = 0;
    while k < c.len() {
        if c[k] == '\n' {
            line += 1;
        }
        let boundary = k == 0 || !(c[k - 1].is_alphanumeric() || c[k - 1] == '_' || c[k - 1] == '$');
        let Some((word, next)) = boundary.then(|| ident_at(&c, k)).flatten() else {
            k += 1;
            continue;
        };
        let mut depth = match word.as_str() {
            "crate" => Some(module_path.len()),
            "super" => Some(1),
            _ => None,
        };
        let mut j = next;
        if let Some(d) = depth.as_mut() {
            // Count further `::super`.
            loop {
                let p = skip_ws(&c, j);
                if c.get(p) == Some(&':') && c.get(p + 1) == Some(&':') {
                    let q = skip_ws(&c, p + 2);
                    if let Some((w, after)) = ident_at(&c, q) {
                        if w == "super" && word == "super" {
                            *d += 1;
                            j = after;
                            continue;
                        }
                    }
                }
                break;
            }
        }
        match depth {
            Some(d) if d >= module_path.len() => {
                let p = skip_ws(&c, j);
                if c.get(p) == Some(&':') && c.get(p + 1) == Some(&':') {
                    let q = skip_ws(&c, p + 2);
                    if c.get(q) == Some(&'{') {
                        refs.extend(group_heads(&c, q).into_iter().map(|h| (h, line)));
                    } else if let Some((id, _)) = ident_at(&c, q) {
                        refs.push((id, line));
                    }
                }
            }
            _ => {}
        }
        k = next;
    }
    refs
}

/// The `mod name;` declarations of non-test code (file modules; inline `mod name { .. }` bodies
/// are part of the file).
fn mod_declarations(code: &str) -> Vec<String> {
    let c: Vec<char> = code.chars().collect();
    let mut mods = Vec::new();
    let mut k = 0;
    while k < c.len() {
        let boundary = k == 0 || !(c[k - 1].is_alphanumeric() || c[k - 1] == '_');
        if let Some((w, next)) = boundary.then(|| ident_at(&c, k)).flatten() {
            if w == "mod" {
                let p = skip_ws(&c, next);
                if let Some((name, after)) = ident_at(&c, p) {
                    if c.get(skip_ws(&c, after)) == Some(&';') {
                        mods.push(name);
                    }
                }
            }
            k = next;
        } else {
            k += 1;
        }
    }
    mods
}

/// The crate root's `pub use module::{A, B}` / `pub use module::A` re-exports: name → module.
fn root_reexports(code: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for stmt in code.split(';') {
        let s: String = stmt.split_whitespace().collect::<Vec<_>>().join(" ");
        let Some(rest) = s.split("pub use ").nth(1) else { continue };
        let rest = rest.trim_start_matches("crate::").trim_start_matches("self::");
        let Some((module, items)) = rest.split_once("::") else { continue };
        let items = items.trim().trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let item = item.trim();
            let name = item.rsplit(" as ").next().unwrap_or(item).trim();
            let name = name.rsplit("::").next().unwrap_or(name).trim();
            if !name.is_empty() {
                map.insert(name.to_string(), module.to_string());
            }
        }
    }
    map
}

/// The module graph of the crate whose sources are `files` (paths relative to `src/`, with
/// `/` separators). Panics on a file that is not reached, or a reference it cannot resolve.
fn module_graph(files: &BTreeMap<String, String>) -> Graph {
    let prepare = |path: &str| -> (String, Vec<String>) {
        let src = files.get(path).unwrap_or_else(|| panic!("module file {path} not found"));
        strip_test_items(&strip_comments_and_literals(src))
    };
    let (root, root_tests) = prepare("lib.rs");
    let top: Vec<String> = mod_declarations(&root);
    let reexports = root_reexports(&root);
    let mut graph = Graph::new();
    let mut seen = BTreeSet::from(["lib.rs".to_string()]);
    // Test-module files, and everything below them.
    let mut test_dirs: Vec<String> = root_tests.iter().map(|m| m.to_string()).collect();
    // (file, module path, directory of its child modules)
    let mut queue: Vec<(String, Vec<String>, String)> = Vec::new();
    for m in &top {
        graph.entry(m.clone()).or_default();
        let file = if files.contains_key(&format!("{m}.rs")) { format!("{m}.rs") } else { format!("{m}/mod.rs") };
        queue.push((file, vec![m.clone()], format!("{m}/")));
    }
    for (name, module) in &reexports {
        assert!(top.contains(module), "lib.rs re-exports {name} from {module}, which is not a module");
    }
    while let Some((file, path, dir)) = queue.pop() {
        assert!(seen.insert(file.clone()), "{file} is reached twice");
        let (code, tests) = prepare(&file);
        test_dirs.extend(tests.iter().map(|t| format!("{dir}{t}")));
        // Files whose code this module includes (`include!("…")`, a path relative to this
        // file's directory: the kernels compiled once per kernel set) are part of the module.
        let here = file.rsplit_once('/').map_or(String::new(), |(d, _)| format!("{d}/"));
        let included: BTreeSet<String> = files[&file]
            .split("include!(\"")
            .skip(1)
            .filter_map(|rest| rest.split_once('"').map(|(name, _)| format!("{here}{name}")))
            .collect();
        for inc in included {
            queue.push((inc, path.clone(), dir.clone()));
        }
        for child in mod_declarations(&code) {
            let plain = format!("{dir}{child}.rs");
            let file = if files.contains_key(&plain) { plain } else { format!("{dir}{child}/mod.rs") };
            let mut p = path.clone();
            p.push(child.clone());
            queue.push((file, p, format!("{dir}{child}/")));
        }
        for (name, line) in root_references(&code, &path) {
            let target = if name == "self" {
                continue; // `use crate::{self, ..}`: the root itself
            } else if top.contains(&name) {
                name
            } else if let Some(m) = reexports.get(&name) {
                m.clone()
            } else {
                panic!("{file}:{line}: `crate::{name}` is neither a top-level module nor a re-export of lib.rs");
            };
            if target != path[0] {
                graph.get_mut(&path[0]).expect("top-level module").entry(target).or_insert((file.clone(), line));
            }
        }
    }
    for file in files.keys() {
        let in_tests = test_dirs.iter().any(|t| file == &format!("{t}.rs") || file.starts_with(&format!("{t}/")));
        assert!(seen.contains(file) || in_tests, "{file} is neither a module of the crate nor a test module");
    }
    graph
}

/// A cycle of `graph`, as the modules along it (first = last), if there is one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        graph: &Graph,
        node: &str,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flat_map(|e| e.keys()) {
            match state.get(next.as_str()).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|n| n == next).expect("on the stack");
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(graph, next, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if state.get(node).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(graph, node, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// The modules in layers: each uses only modules of the layers before it.
fn layers(graph: &Graph) -> Vec<Vec<String>> {
    let mut placed: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    while placed.len() < graph.len() {
        let layer: Vec<String> = graph
            .iter()
            .filter(|(m, uses)| !placed.contains(*m) && uses.keys().all(|u| placed.contains(u)))
            .map(|(m, _)| m.clone())
            .collect();
        assert!(!layer.is_empty(), "the graph has a cycle");
        placed.extend(layer.iter().cloned());
        out.push(layer);
    }
    out
}

fn describe(graph: &Graph) -> String {
    let mut s = String::new();
    for (m, uses) in graph {
        let names: Vec<&str> = uses.keys().map(String::as_str).collect();
        let _ = writeln!(s, "  {m} → {}", names.join(", "));
    }
    s
}

fn read_sources(dir: &Path, base: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).expect("readable source directory") {
        let path: PathBuf = entry.expect("directory entry").path();
        if path.is_dir() {
            read_sources(&path, base, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(base).expect("below src").to_string_lossy().replace('\\', "/");
            out.insert(rel, std::fs::read_to_string(&path).expect("readable source"));
        }
    }
}

#[test]
fn top_level_modules_form_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    read_sources(&src, &src, &mut files);
    let graph = module_graph(&files);
    assert!(graph.len() >= 10, "too few top-level modules found:\n{}", describe(&graph));
    assert!(graph.values().map(BTreeMap::len).sum::<usize>() >= 20, "too few references found:\n{}", describe(&graph));
    if let Some(cycle) = find_cycle(&graph) {
        let mut s = String::new();
        for pair in cycle.windows(2) {
            let (file, line) = &graph[&pair[0]][&pair[1]];
            let _ = writeln!(s, "  {} → {} (first at src/{file}:{line})", pair[0], pair[1]);
        }
        panic!("import cycle between top-level modules:\n{s}\nall references:\n{}", describe(&graph));
    }
    println!("top-level modules, lowest layer first:");
    for (i, layer) in layers(&graph).iter().enumerate() {
        println!("  {i}: {}", layer.join(", "));
    }
    println!("references:\n{}", describe(&graph));
}

/// The checker itself, on a small made-up crate: references in code count; references in
/// comments, strings, `#[cfg(test)]` items and test-module files do not.
#[test]
fn the_checker_sees_code_and_ignores_tests() {
    let tree = |a_extra: &str| -> BTreeMap<String, String> {
        BTreeMap::from([
            ("lib.rs".into(), "pub mod a;\npub mod b;\npub mod c;\npub use c::Thing;\n".into()),
            (
                "a.rs".into(),
                format!(
                    "//! Uses [`crate::c`] in prose only.\nuse crate::{{b::X, self as _}};\nmod inner;\n\
                     const S: &str = \"crate::c::Y\";\nconst Q: char = '\"';\n{a_extra}\n\
                     #[cfg(test)]\nmod tests;\n#[cfg(test)]\nmod more {{ use crate::c::Z; }}\n\
                     #[cfg(test)]\nfn helper(x: [u8; 2]) -> u8 {{ crate::c::f(x) }}\n"
                ),
            ),
            ("a/inner.rs".into(), "use super::super::b::X; /* crate::c */\n".into()),
            ("a/tests.rs".into(), "use crate::c::W;\n".into()),
            ("b.rs".into(), "pub struct X; fn f<'a>(s: &'a str) -> &'a str { s }\n".into()),
            ("c.rs".into(), "use crate::{a::Y, b};\npub struct Thing;\n".into()),
        ])
    };
    let graph = module_graph(&tree(""));
    assert_eq!(graph["a"].keys().collect::<Vec<_>>(), ["b"]);
    assert_eq!(graph["c"].keys().collect::<Vec<_>>(), ["a", "b"]);
    assert!(graph["b"].is_empty());
    assert_eq!(find_cycle(&graph), None);
    assert_eq!(layers(&graph), [vec!["b".to_string()], vec!["a".to_string()], vec!["c".to_string()]]);
    // A reference through the root's re-export closes a cycle a → c → a.
    let graph = module_graph(&tree("fn g() -> crate::Thing { crate::Thing }"));
    assert_eq!(find_cycle(&graph), Some(vec!["a".to_string(), "c".to_string(), "a".to_string()]));
}

#[test]
#[should_panic(expected = "neither a module of the crate nor a test module")]
fn the_checker_refuses_files_it_does_not_reach() {
    let files = BTreeMap::from([
        ("lib.rs".to_string(), "pub mod a;\n".to_string()),
        ("a.rs".to_string(), String::new()),
        ("orphan.rs".to_string(), "use crate::a;\n".to_string()),
    ]);
    module_graph(&files);
}
