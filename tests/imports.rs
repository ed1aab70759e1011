//! The core crate's folders are floors: each imports only folders on the floors below it, in the
//! order ARCHITECTURE.md draws them (`FLOORS`): the plain data (`model`) at the bottom, the game
//! state above it, then derivation (conditions' evaluation, explanations, the layer system), the
//! kernel of changes, actions carried out, the event procedure, and the API at the crate root.
//! Within a folder, files import each other without a circle. The language crate's files import
//! each other without a circle too.
//!
//! A file depends on another when it names an item there by path (`use crate::a::b::X`,
//! `super::X`, or `crate::a::X` inline). A path is taken to the deepest file it reaches; a
//! folder's `mod.rs` depends on what it re-exports, so code inside the crate imports an item from
//! the file that defines it, never through a re-export.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/core/src");
const LANG_SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/lang/src");

/// Every `.rs` file under `dir`, as module paths (`["events", "procedure"]`; `mod.rs` is the
/// folder's path; `lib.rs` is `[]`).
fn files(dir: &Path, prefix: &[String], out: &mut BTreeMap<Vec<String>, PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if p.is_dir() {
            let mut pre = prefix.to_vec();
            pre.push(name);
            files(&p, &pre, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let mut m = prefix.to_vec();
            if name != "mod" && name != "lib" {
                m.push(name);
            }
            out.insert(m, p);
        }
    }
}

/// The code of a file without comments, string literals (doc links are not imports) and its unit
/// tests.
fn code(text: &str) -> String {
    let mut out = String::new();
    // Unit tests sit at the end of a file, in their own module.
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    for line in text.lines() {
        let mut in_str = false;
        let mut prev = ' ';
        let mut kept = String::new();
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if !in_str && c == '/' && chars.get(i + 1) == Some(&'/') {
                break;
            }
            if c == '"' && prev != '\\' && !(prev == '\'' && chars.get(i + 1) == Some(&'\'')) {
                in_str = !in_str;
            } else if !in_str {
                kept.push(c);
            }
            prev = c;
            i += 1;
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

/// A `use` tree without its renamings (`a as b`) and whitespace.
fn unaliased(tree: &str) -> String {
    let words: Vec<&str> = tree.split_whitespace().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < words.len() {
        if words[i] == "as" && i + 1 < words.len() {
            // The new name, up to what closes or separates it (`lc,` or `lc}`).
            let w = words[i + 1];
            let end = w
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(w.len());
            out.push_str(&w[end..]);
            i += 2;
        } else {
            out.push_str(words[i]);
            i += 1;
        }
    }
    out
}

/// Expands a `use` tree (`a::{b, c::{d, e}}`) into its paths.
fn expand(tree: &str) -> Vec<String> {
    let tree = unaliased(tree);
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(p).into_iter().map(|x| format!("{prefix}{x}")))
        .collect()
}

/// The paths a file names: those of its `use` items and `crate::`/`super::` paths in code.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].chars().last();
        let after = &rest[i + 4..];
        if before.is_none_or(|c| !c.is_alphanumeric() && c != '_') {
            if let Some(end) = after.find(';') {
                let tree = &after[..end];
                if tree.starts_with("crate::") || tree.starts_with("super::") {
                    out.extend(expand(tree));
                }
            }
        }
        rest = after;
    }
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start) {
            let at = from + i;
            let before = code[..at].chars().last();
            from = at + start.len();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let end = code[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| at + e);
            out.push(code[at..end].trim_end_matches(':').to_string());
        }
    }
    out
}

/// Paths that start with a child module's name (`change::apply`, `use dependency::{A, B}`), as
/// `self::` paths.
fn child_paths(code: &str, children: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for c in children {
        let start = format!("{c}::");
        let mut from = 0;
        while let Some(i) = code[from..].find(&start) {
            let at = from + i;
            from = at + start.len();
            let before = code[..at].chars().last();
            if before.is_some_and(|x| x.is_alphanumeric() || x == '_' || x == ':') {
                continue;
            }
            out.push(format!("self::{c}"));
        }
    }
    out
}

/// The file a path from module `m` reaches: the deepest one that exists.
fn resolve(
    m: &[String],
    is_mod_file: bool,
    path: &str,
    all: &BTreeMap<Vec<String>, PathBuf>,
) -> Option<Vec<String>> {
    let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<String> = match segs.first() {
        Some(&"crate") => Vec::new(),
        Some(&"self") => m.to_vec(),
        Some(&"super") => {
            // `super` of `a/b.rs` is `a`; of `a/mod.rs` (module `a`), the crate root.
            let mut b = m.to_vec();
            if !is_mod_file || !b.is_empty() {
                b.pop();
            }
            b
        }
        _ => return None,
    };
    segs.remove(0);
    while segs.first() == Some(&"super") {
        base.pop();
        segs.remove(0);
    }
    let mut best = base.clone();
    for s in segs {
        base.push(s.to_string());
        if all.contains_key(&base) {
            best = base.clone();
        } else {
            break;
        }
    }
    Some(best)
}

fn name(m: &[String]) -> String {
    if m.is_empty() {
        "lib".into()
    } else {
        m.join("/")
    }
}

/// The core crate's import graph.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    graph_of(SRC)
}

/// The import graph of the crate whose sources are under `src`: each file and those it names.
fn graph_of(src: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut all = BTreeMap::new();
    files(Path::new(src), &[], &mut all);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, p) in &all {
        let text = std::fs::read_to_string(p).unwrap();
        let is_mod = p
            .file_name()
            .is_some_and(|f| f == "mod.rs" || f == "lib.rs");
        let deps = g.entry(name(m)).or_default();
        // A folder's files name their children without `self::` (`use change::X`).
        let children: Vec<String> = all
            .keys()
            .filter(|k| is_mod && k.len() == m.len() + 1 && k.starts_with(m))
            .map(|k| k[m.len()].clone())
            .collect();
        let code = code(&text);
        let mut found = paths(&code);
        found.extend(child_paths(&code, &children));
        for path in found {
            if let Some(to) = resolve(m, is_mod, &path, &all) {
                if &to != m {
                    deps.insert(name(&to));
                }
            }
        }
    }
    g
}

/// The groups of files that import each other in a circle (strongly connected components of more
/// than one file), each sorted.
fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut done: BTreeSet<String> = BTreeSet::new();
    for n in g.keys() {
        if done.contains(n) {
            continue;
        }
        let fwd = reach(g, n);
        if !fwd.contains(n) {
            continue;
        }
        let group: Vec<String> = fwd
            .into_iter()
            .filter(|m| reach(g, m).contains(n))
            .collect();
        done.extend(group.iter().cloned());
        out.push(group);
    }
    out
}

/// Everything a file reaches through imports.
fn reach(g: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_string()];
    while let Some(n) = todo.pop() {
        for d in g.get(&n).into_iter().flatten() {
            if seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

#[test]
fn the_core_has_no_import_circle() {
    let g = graph();
    assert!(g.len() > 20, "found only {} files under {SRC}", g.len());
    let found = circles(&g);
    assert!(
        found.is_empty(),
        "files of the core import each other in a circle: {}",
        found
            .iter()
            .map(|c| format!("{{{}}}", c.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    );
}

#[test]
fn the_language_has_no_import_circle() {
    let g = graph_of(LANG_SRC);
    for f in [
        "lib",
        "lower",
        "lower/content",
        "lower/events",
        "lower/ruleset",
    ] {
        assert!(
            g.contains_key(f),
            "no file {f} under {LANG_SRC}: update this test with the layout"
        );
    }
    let found = circles(&g);
    assert!(
        found.is_empty(),
        "files of the language import each other in a circle: {}",
        found
            .iter()
            .map(|c| format!("{{{}}}", c.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    );
}

#[test]
fn the_state_imports_only_data() {
    let g = graph();
    let below = reach(&g, "state");
    for above in [
        "lib",
        "action/apply",
        "layers",
        "condition/eval",
        "events/procedure",
        "explain/describe",
    ] {
        assert!(
            g.contains_key(above),
            "no file {above}: update this test with the layout"
        );
        assert!(
            !below.contains(above),
            "the state reaches {above} through its imports: {below:?}"
        );
    }
}

/// The core's floors, bottom first: a folder imports only folders on lower floors. Folders on
/// one floor do not import each other.
const FLOORS: &[&[&str]] = &[
    &["model"],
    &["state"],
    &["condition", "explain"],
    &["layers"],
    &["kernel"],
    &["action"],
    &["events"],
    &["play"],
    &["lib"],
];

/// The folder a file of the import graph is in (`lib` for the crate root).
fn folder(file: &str) -> &str {
    file.split('/').next().unwrap_or(file)
}

/// The imports that do not go down a floor: (from, to) file pairs.
fn upward(g: &BTreeMap<String, BTreeSet<String>>) -> Result<Vec<(String, String)>, String> {
    let floor = |f: &str| FLOORS.iter().position(|fl| fl.contains(&folder(f)));
    let mut out = Vec::new();
    for (from, deps) in g {
        let Some(a) = floor(from) else {
            return Err(format!(
                "{from} is on no floor: put it in a folder of FLOORS (and ARCHITECTURE.md)"
            ));
        };
        for to in deps {
            let Some(b) = floor(to) else {
                return Err(format!("{to} is on no floor"));
            };
            if folder(from) != folder(to) && b >= a {
                out.push((from.clone(), to.clone()));
            }
        }
    }
    Ok(out)
}

#[test]
fn each_folder_imports_only_the_floors_below_it() {
    let g = graph();
    for fl in FLOORS.iter().flat_map(|f| f.iter()) {
        assert!(
            g.keys().any(|k| folder(k) == *fl),
            "no folder {fl} under {SRC}: update FLOORS with the layout"
        );
    }
    let up = upward(&g).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        up.is_empty(),
        "imports that run up or across the floors {FLOORS:?}: {}",
        up.iter()
            .map(|(a, b)| format!("{a} -> {b}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// The floor check finds an import that runs up, one across a floor, and a file on no floor.
#[test]
fn the_floor_check_sees_upward_imports() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("model/ids".into()).or_default();
    g.entry("state".into())
        .or_default()
        .insert("model/ids".into());
    assert_eq!(upward(&g), Ok(vec![]));
    g.entry("model/value".into())
        .or_default()
        .insert("state".into());
    g.entry("condition/eval".into())
        .or_default()
        .insert("explain/describe".into());
    assert_eq!(
        upward(&g),
        Ok(vec![
            ("condition/eval".to_string(), "explain/describe".to_string()),
            ("model/value".to_string(), "state".to_string()),
        ])
    );
    g.entry("durations".into()).or_default();
    assert!(upward(&g).is_err());
}

/// The checker itself finds a circle and a path through a re-export.
#[test]
fn the_checker_sees_circles() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    g.entry("c".into()).or_default().insert("a".into());
    g.entry("d".into()).or_default().insert("a".into());
    assert_eq!(
        circles(&g),
        vec![vec!["a".to_string(), "b".into(), "c".into()]]
    );
    let p = paths(&code(
        "use crate::{a::{B, c::D}, e};\nfn f() { super::x::Y::new(); } // crate::z::Q\n",
    ));
    assert!(p.contains(&"crate::a::B".to_string()), "{p:?}");
    assert!(p.contains(&"crate::a::c::D".to_string()), "{p:?}");
    assert!(p.contains(&"crate::e".to_string()), "{p:?}");
    assert!(p.contains(&"super::x::Y::new".to_string()), "{p:?}");
    assert!(!p.iter().any(|x| x.contains("z::Q")), "{p:?}");
    let p = paths(&code(
        "use crate::a::{b as lb, c::{self as lc}, d as e};\nuse super::f as g;\n",
    ));
    for want in [
        "crate::a::b",
        "crate::a::c::self",
        "crate::a::d",
        "super::f",
    ] {
        assert!(p.contains(&want.to_string()), "{want}: {p:?}");
    }
}

/// Prints the graphs (`cargo test --test imports -- --ignored --nocapture`).
#[test]
#[ignore]
fn print_the_import_graph() {
    for (src, g) in [(SRC, graph()), (LANG_SRC, graph_of(LANG_SRC))] {
        println!("{src}:");
        for (n, deps) in g {
            println!("{n} -> {}", deps.into_iter().collect::<Vec<_>>().join(", "));
        }
    }
}
