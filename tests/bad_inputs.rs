//! Malformed inputs and the exact one-line diagnostic each one produces.
//!
//! Every file in `tests/bad/` (not in its `helpers/` folder) is one case: `NAME.rules` is loaded
//! as a ruleset, `NAME.cards` as content against `rulesets/mtg-2020.rules`, `NAME.scenario` as a
//! scenario file, `NAME.deck` as a deck list checked against `content/classic`. Each must fail to load, and `Loader::short` of the error must equal the trimmed
//! text of `NAME.EXT.expected` next to it; or, for a scenario file that loads, a step must fail
//! while it runs (an illegal target, a name that matches two objects, a decision left
//! unanswered), and the first failure, as `FILE:LINE:COL: MESSAGE`, must equal it. Files in
//! `helpers/` are named by scenarios (rulesets and content given by path) and are not cases
//! themselves.

use rulecraft_lang::deck::{read_deck, DECK_EXT};
use rulecraft_lang::loader::{LoadError, Loader, CONTENT_EXT, RULESET_EXT, SCENARIO_EXT};
use rulecraft_lang::scenario::run;
use std::path::{Path, PathBuf};

const BAD_DIR: &str = "tests/bad";
const CONTENT_RULESET: &str = "rulesets/mtg-2020.rules";
/// The ruleset and content deck lists are checked against.
const DECK_GAME: (&str, &str) = ("rulesets/classic.rules", "content/classic");
const MIN_CASES: usize = 30;

/// Loads one bad file the way its extension says (and runs a scenario file that loads): the
/// one-line error, or a note on what loaded. `Err` is a problem with the case itself.
fn actual(loader: &mut Loader, path: &Path) -> Result<String, String> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let loaded: Result<String, LoadError> = match ext {
        RULESET_EXT => loader
            .ruleset(path, None)
            .map(|env| format!("ruleset `{}` loaded", env.ruleset.name)),
        CONTENT_EXT => {
            let rpath = Path::new(CONTENT_RULESET);
            let env = loader
                .ruleset(rpath, None)
                .map_err(|e| format!("{CONTENT_RULESET} does not load: {}", loader.short(&e)))?;
            loader
                .content(&env, rpath, &[path.to_path_buf()], None)
                .map(|c| format!("{} object classes loaded", c.classes.len()))
        }
        SCENARIO_EXT => match loader.scenarios(path) {
            Err(e) => Err(e),
            Ok(list) => {
                for (env, sc) in &list {
                    if let Some(f) = run(env, sc, None).failures.first() {
                        return Ok(format!("{}: {}", loader.map.location(f.at), f.message));
                    }
                }
                Ok(format!("{} scenarios loaded and ran", list.len()))
            }
        },
        DECK_EXT => {
            let (rules, content) = DECK_GAME;
            let game = loader
                .game(Path::new(rules), &[Path::new(content)], &["Ann"])
                .map_err(|e| format!("{rules} does not load: {}", loader.short(&e)))?;
            read_deck(loader, path).and_then(|d| {
                d.check(game.content())
                    .map(|list| format!("{} cards listed", list.len()))
                    .map_err(LoadError::from)
            })
        }
        other => {
            return Err(format!(
                "unknown extension `{other}`: expected .rules, .cards, .scenario or .deck"
            ))
        }
    };
    Ok(match loaded {
        Ok(note) => format!("(no error: {note})"),
        Err(e) => loader.short(&e),
    })
}

/// The bad files, sorted: every file in `tests/bad` but the `.expected` files and subfolders.
fn cases() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(BAD_DIR)
        .unwrap_or_else(|e| panic!("cannot read {BAD_DIR}: {e}"))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file() && p.extension().is_none_or(|x| x != "expected"))
        .map(|p| Path::new(BAD_DIR).join(p.file_name().expect("a file name")))
        .collect();
    out.sort();
    out
}

#[test]
fn every_bad_input_fails_with_its_expected_message() {
    let cases = cases();
    let mut failures = Vec::new();
    for path in &cases {
        let expected_path = PathBuf::from(format!("{}.expected", path.display()));
        let expected = match std::fs::read_to_string(&expected_path) {
            Ok(t) => t.trim().to_string(),
            Err(e) => {
                failures.push(format!(
                    "{}: cannot read {}: {e}",
                    path.display(),
                    expected_path.display()
                ));
                continue;
            }
        };
        let actual = match actual(&mut Loader::new(), path) {
            Err(msg) => {
                failures.push(format!("{}: {msg}", path.display()));
                continue;
            }
            Ok(a) => a,
        };
        if actual != expected {
            failures.push(format!(
                "{}:\n    expected: {expected}\n    actual:   {actual}",
                path.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad inputs did not fail as expected:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn there_are_enough_bad_inputs() {
    let n = cases().len();
    assert!(
        n >= MIN_CASES,
        "expected at least {MIN_CASES} bad inputs in {BAD_DIR}, found {n}"
    );
}

#[test]
fn every_expected_file_has_its_input() {
    let orphans: Vec<String> = std::fs::read_dir(BAD_DIR)
        .unwrap_or_else(|e| panic!("cannot read {BAD_DIR}: {e}"))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "expected") && !p.with_extension("").is_file()
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        orphans.is_empty(),
        ".expected files with no input next to them: {orphans:?}"
    );
}
