//! Whatever the text, loading it (and running the scenarios that load) never panics.
//!
//! The valid files of the project (rulesets, content/mtg, content/honor, scenarios) are mutated at
//! random or truncated, written into a copy of the project in a temporary folder, and loaded there. A
//! mutated ruleset or content file replaces its copy, so the project's scenarios then load and run
//! against it too. Errors are expected; panics are failures.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use rulecraft_lang::loader::{
    files_with_ext, LoadError, Loader, CONTENT_EXT, RULESET_EXT, SCENARIO_EXT,
};
use rulecraft_lang::scenario::run;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The folders of the project that are copied, and whose files are mutated.
const COPIED: [&str; 3] = ["rulesets", "content", "scenarios"];
/// Each content folder that is mutated, with the ruleset its files are checked against.
const CONTENT: [(&str, &str); 2] = [
    ("content/mtg", "rulesets/mtg-2020.rules"),
    ("content/honor", "rulesets/honor.rules"),
];

/// The ruleset a content file (a path under `root`) is checked against.
fn content_ruleset(root: &Path, target: &Path) -> &'static str {
    let rel = target.strip_prefix(root).unwrap_or(target);
    CONTENT
        .iter()
        .find(|(dir, _)| rel.starts_with(dir))
        .map_or(CONTENT[0].1, |(_, ruleset)| ruleset)
}

/// A valid file of the project: its path relative to the project root and its bytes.
#[derive(Clone, Debug)]
struct Source {
    rel: PathBuf,
    bytes: Vec<u8>,
}

/// Every valid file: rulesets/*.rules, content/{mtg,honor}/**/*.cards, scenarios/**/*.scenario.
fn sources() -> &'static [Source] {
    static SOURCES: OnceLock<Vec<Source>> = OnceLock::new();
    SOURCES.get_or_init(|| {
        let mut out = Vec::new();
        for (dir, ext) in [
            ("rulesets", RULESET_EXT),
            (CONTENT[0].0, CONTENT_EXT),
            (CONTENT[1].0, CONTENT_EXT),
            ("scenarios", SCENARIO_EXT),
        ] {
            let files = files_with_ext(Path::new(dir), ext);
            assert!(!files.is_empty(), "no .{ext} files under {dir}/");
            for rel in files {
                let bytes = std::fs::read(&rel)
                    .unwrap_or_else(|e| panic!("cannot read {}: {e}", rel.display()));
                out.push(Source { rel, bytes });
            }
        }
        out
    })
}

/// A copy of the project's rulesets, content and scenarios in a fresh temporary folder, removed
/// when dropped.
struct Project {
    root: PathBuf,
}

impl Project {
    fn new(tag: &str) -> Project {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "rulecraft-{tag}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        for dir in COPIED {
            copy_dir(Path::new(dir), &root.join(dir));
        }
        Project { root }
    }

    /// Writes `bytes` over the copy of `src`, exercises the loader on it, and puts the copy back.
    /// `Err` describes a panic.
    fn exercise(&self, src: &Source, bytes: &[u8]) -> Result<(), String> {
        let target = self.root.join(&src.rel);
        write(&target, bytes);
        let mut stage = String::new();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            load_and_run(&self.root, &target, &mut stage)
        }));
        write(&target, &src.bytes);
        outcome.map_err(|payload| {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(a panic with no message)".to_string());
            let file = src.rel.display();
            let text = String::from_utf8_lossy(bytes);
            format!(
                "panic with a mutant of {file} in place, while {stage}: {msg}\n\
                 --- the mutated file ---\n{text}\n--- end ---"
            )
        })
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("cannot create {}: {e}", to.display()));
    let entries =
        std::fs::read_dir(from).unwrap_or_else(|e| panic!("cannot read {}: {e}", from.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        let dest = to.join(path.file_name().expect("a file name"));
        if path.is_dir() {
            copy_dir(&path, &dest);
        } else {
            std::fs::copy(&path, &dest)
                .unwrap_or_else(|e| panic!("cannot copy {}: {e}", path.display()));
        }
    }
}

/// Replaces a file. Removing it first, rather than truncating it, keeps ext4 from flushing the
/// file to disk on every write (which made the test ten times slower).
fn write(path: &Path, bytes: &[u8]) {
    let _ = std::fs::remove_file(path);
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

/// Both forms of an error, so rendering is exercised too.
fn report(loader: &Loader, e: &LoadError, stage: &mut String) {
    *stage = format!("rendering the error {e:?}");
    let _ = loader.short(e);
    let _ = loader.render(e);
}

/// Loads and runs every scenario file of the project.
fn run_scenarios(loader: &mut Loader, root: &Path, only: Option<&Path>, stage: &mut String) {
    run_scenarios_using(loader, root, only, None, stage)
}

/// The project's scenarios that name `target` (a ruleset by its file's stem, content by its
/// folder), or the one scenario file `only`: those a mutated ruleset or content file can reach.
fn run_scenarios_using(
    loader: &mut Loader,
    root: &Path,
    only: Option<&Path>,
    target: Option<&Path>,
    stage: &mut String,
) {
    let files = match only {
        Some(f) => vec![f.to_path_buf()],
        None => files_with_ext(&root.join("scenarios"), SCENARIO_EXT),
    };
    let needle = target.map(|t| {
        let rel = t.strip_prefix(root).unwrap_or(t);
        match rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().to_string())
        {
            // content/honor/x.cards: scenarios that load `content: honor`.
            Some(d) if d == "content" => rel
                .iter()
                .nth(1)
                .map_or(String::new(), |x| x.to_string_lossy().to_string()),
            _ => t
                .file_stem()
                .map_or(String::new(), |x| x.to_string_lossy().to_string()),
        }
    });
    let files: Vec<PathBuf> = files
        .into_iter()
        .filter(|f| {
            needle.as_ref().is_none_or(|n| {
                std::fs::read_to_string(f).is_ok_and(|text| text.contains(n.as_str()))
            })
        })
        .collect();
    for f in files {
        *stage = format!("loading {}", f.display());
        match loader.scenarios(&f) {
            Ok(list) => {
                for (env, sc) in &list {
                    *stage = format!("running scenario \"{}\" of {}", sc.header.name, f.display());
                    let rep = run(env, sc, None);
                    for failure in &rep.failures {
                        let _ = loader.map.location(failure.at);
                    }
                }
            }
            Err(e) => report(loader, &e, stage),
        }
    }
}

/// Loads a file by its extension; when a ruleset or content file loads, the project's scenarios
/// are loaded and run with it in place.
fn load_and_run(root: &Path, target: &Path, stage: &mut String) {
    let mut loader = Loader::new();
    *stage = format!("loading {}", target.display());
    let ext = target.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext {
        RULESET_EXT => match loader.ruleset(target, None) {
            Ok(_) => run_scenarios_using(&mut loader, root, None, Some(target), stage),
            Err(e) => report(&loader, &e, stage),
        },
        CONTENT_EXT => {
            let rpath = root.join(content_ruleset(root, target));
            let env = match loader.ruleset(&rpath, None) {
                Ok(env) => env,
                Err(e) => return report(&loader, &e, stage),
            };
            match loader.content(&env, &rpath, &[target.to_path_buf()], None) {
                Ok(_) => run_scenarios_using(&mut loader, root, None, Some(target), stage),
                Err(e) => report(&loader, &e, stage),
            }
        }
        SCENARIO_EXT => run_scenarios(&mut loader, root, Some(target), stage),
        other => panic!("unexpected extension `{other}`"),
    }
}

/// One change to a file; see [`boundary`] for how positions are read.
#[derive(Clone, Debug)]
enum Mutation {
    Delete { at: usize, len: usize },
    Duplicate { at: usize, len: usize },
    Insert { at: usize, token: String },
    SwapLines { a: usize, b: usize },
}

/// A position in the text: `at` modulo its length, moved back to a character boundary.
fn boundary(text: &str, at: usize) -> usize {
    floor(text, at % (text.len() + 1))
}

/// The end of a range of `len` bytes from `a`, cut at the end of the text.
fn range_end(text: &str, a: usize, len: usize) -> usize {
    floor(text, a.saturating_add(len).min(text.len()))
}

fn floor(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(text: &mut String, m: &Mutation) {
    match m {
        Mutation::Delete { at, len } => {
            let a = boundary(text, *at);
            let b = range_end(text, a, *len);
            text.replace_range(a..b, "");
        }
        Mutation::Duplicate { at, len } => {
            let a = boundary(text, *at);
            let b = range_end(text, a, *len);
            let copy = text[a..b].to_string();
            text.insert_str(b, &copy);
        }
        Mutation::Insert { at, token } => {
            let a = boundary(text, *at);
            text.insert_str(a, token);
        }
        Mutation::SwapLines { a, b } => {
            let mut lines: Vec<&str> = text.split('\n').collect();
            let n = lines.len();
            lines.swap(a % n, b % n);
            *text = lines.join("\n");
        }
    }
}

/// Keywords and names of the language (random words are generated besides).
const WORDS: &str =
    "card object static defining spell affects as long target until end of turn effect \
    move to layer sublayer counters counter characteristic player zone term check when ruleset \
    scenario expect put remove enter setup switch power toughness life count sum none in play \
    order timestamps you control and or not exists state event period turn timing step \
    replacements triggered reactions ordered action round batch rule trait reaction replacement \
    before after begins ends if cost prevent instead amount next time this game attached \
    opponent active of size _ do begin choose takes passes happened did happen decision from \
    no log has events";

fn token() -> impl Strategy<Value = String> {
    let punct = prop::sample::select(vec![
        "{", "}", "\"", ":", "=", "+=", "-=", ",", "(", ")", ".", "-", "*", "<=", ";", "\n", "#",
        "\\",
    ])
    .prop_map(str::to_string);
    let word = prop_oneof![
        prop::sample::select(WORDS.split_whitespace().collect::<Vec<_>>()).prop_map(str::to_string),
        "[a-z_][a-z0-9_]{0,8}",
    ];
    let number = prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        (0i64..10).prop_map(|n| n.to_string()),
        Just("9223372036854775807".to_string()),
        Just("99999999999999999999".to_string()),
    ];
    let tok = prop_oneof![3 => punct, 3 => word, 2 => number];
    (tok, any::<bool>()).prop_map(|(t, spaced)| if spaced { format!(" {t} ") } else { t })
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => (any::<usize>(), 1usize..40).prop_map(|(at, len)| Mutation::Delete { at, len }),
        1 => (any::<usize>(), 1usize..80).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        3 => (any::<usize>(), token()).prop_map(|(at, token)| Mutation::Insert { at, token }),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines { a, b }),
    ]
}

#[test]
fn mutated_files_never_panic() {
    let project = Project::new("mutants");
    let config = Config {
        cases: 256,
        // Failures are printed in full; no regression files are written into the source tree.
        failure_persistence: None,
        ..Config::default()
    };
    let strategy = (
        any::<prop::sample::Index>(),
        prop::collection::vec(mutation(), 1..5),
    );
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |(which, mutations)| {
        let src = which.get(sources());
        let mut text = String::from_utf8(src.bytes.clone()).expect("valid files are UTF-8");
        for m in &mutations {
            apply(&mut text, m);
        }
        project
            .exercise(src, text.as_bytes())
            .map_err(|e| TestCaseError::fail(format!("{e}\nmutations: {mutations:?}")))
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn truncated_files_never_panic() {
    let project = Project::new("truncated");
    let mut failures = Vec::new();
    let mut loads = 0;
    for src in sources() {
        let len = src.bytes.len();
        // Every 7th byte, or for a long file at most about 150 cuts spread over it: a cut that
        // loads runs the scenarios that use the file, and the time must stay within CI's (the
        // fuzz target `fuzz/` cuts and mutates without that bound).
        let step = (len / 150).max(7);
        for cut in (0..len).step_by(step).chain([len]) {
            loads += 1;
            if let Err(e) = project.exercise(src, &src.bytes[..cut]) {
                failures.push(format!("cut at byte {cut}: {e}"));
            }
        }
    }
    assert!(loads > 0);
    assert!(
        failures.is_empty(),
        "{} truncations panicked:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
