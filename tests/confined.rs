//! The confined loader: other people's text reads only files under the folders it is given, within
//! limits on size, occurrences and time.
//!
//! Every `NAME.scenario` in `tests/bad/confined/` is one refusal, loaded (and run, if it loads) by a
//! loader confined to that folder (a project of its own, with `rulesets/tiny.rules`)
//! with small limits ([`limits`]); `Loader::short` of the error, or the first failure as
//! `FILE:LINE:COL: MESSAGE`, must equal the trimmed text of `NAME.scenario.expected`. Files in its
//! `helpers/` are named by the cases.

use rulecraft_lang::confine::Confinement;
use rulecraft_lang::loader::{files_with_ext, LoadError, Loader, SCENARIO_EXT};
use std::path::{Path, PathBuf};
use std::time::Duration;

const DIR: &str = "tests/bad/confined";
/// A file the cases' `..` and links lead to: read without confinement its error is quoted.
const OUTSIDE: &str = "tests/bad/helpers/broken.rules";

/// The test's limits: small enough for small files to pass them.
fn limits() -> Confinement {
    let mut c = Confinement::new(&[DIR]).expect("the confined cases' folder exists");
    c.max_file_bytes = 2048;
    c.max_total_bytes = 4096;
    c.max_logged = 40;
    c
}

/// Loads and runs a scenario file: the first error or failure in one line.
fn outcome(loader: &mut Loader, path: &Path) -> String {
    match loader.scenarios(path) {
        Err(e) => loader.short(&e),
        Ok(list) => {
            for (env, sc) in &list {
                if let Some(f) = loader.run(env, sc).failures.first() {
                    return format!("{}: {}", loader.map.location(f.at), f.message);
                }
            }
            format!("(no error: {} scenarios loaded and ran)", list.len())
        }
    }
}

fn cases() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(DIR)
        .expect("read the confined cases")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == SCENARIO_EXT))
        .map(|p| Path::new(DIR).join(p.file_name().expect("a name")))
        .collect();
    out.sort();
    out
}

#[test]
fn every_confined_refusal_fails_with_its_expected_message() {
    let cases = cases();
    assert!(
        cases.len() >= 7,
        "expected a case per refusal, found {cases:?}"
    );
    let mut failures = Vec::new();
    for path in &cases {
        let expected = std::fs::read_to_string(format!("{}.expected", path.display()))
            .unwrap_or_else(|e| panic!("{}.expected: {e}", path.display()));
        let actual = outcome(&mut Loader::confined(limits()), path);
        if actual != expected.trim() {
            failures.push(format!(
                "{}:\n    expected: {}\n    actual:   {actual}",
                path.display(),
                expected.trim()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_refusal_quotes_nothing_of_the_file_refused() {
    // Unconfined, the same cases read the file outside and quote its error.
    let broken = std::fs::read_to_string(OUTSIDE).expect("the outside file");
    let quoted = "numbre";
    assert!(broken.contains(quoted));
    for case in ["dotdot-ruleset.scenario", "link-out.scenario"] {
        let path = Path::new(DIR).join(case);
        let own = outcome(&mut Loader::new(), &path);
        assert!(
            own.contains(quoted),
            "unconfined, {case} quotes the file: {own}"
        );
        let confined = outcome(&mut Loader::confined(limits()), &path);
        assert!(confined.contains("refused"), "{case}: {confined}");
        assert!(
            !confined.contains(quoted),
            "{case} quotes the file: {confined}"
        );
    }
}

#[test]
fn files_inside_load_and_paths_that_stay_inside_are_allowed() {
    let dir = std::env::temp_dir().join(format!("rulecraft-confined-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).expect("a temporary folder");
    let tiny = std::fs::read_to_string(Path::new(DIR).join("rulesets/tiny.rules")).expect("tiny");
    std::fs::write(dir.join("tiny.rules"), tiny).expect("write");
    // `..` that comes back inside the folder is allowed.
    let scenario = "scenario \"inside\" {\n    ruleset: \"../tiny.rules\"\n    players: Ann, Ben\n    do gains_honor(Ann, 2)\n    expect Ann honor = 2\n}\n";
    let path = dir.join("sub/inside.scenario");
    std::fs::write(&path, scenario).expect("write");
    let mut loader = Loader::confined(Confinement::new(&[&dir]).expect("the folder"));
    assert_eq!(
        outcome(&mut loader, &path),
        "(no error: 1 scenarios loaded and ran)"
    );
    // A file given directly outside the folders is refused too, unread.
    let Err(err) = loader.ruleset(Path::new(OUTSIDE), None) else {
        panic!("a file outside is refused")
    };
    assert!(matches!(err, LoadError::Io { .. }));
    assert_eq!(
        loader.short(&err),
        format!("{OUTSIDE}: cannot read: refused: outside the folders this loader may read (confined mode)")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_bundled_scenarios_run_alike_confined_to_the_project() {
    // The project's own folders, with the default limits: every bundled scenario that passes
    // unconfined passes confined.
    let roots = ["rulesets", "content", "scenarios"];
    for path in files_with_ext(Path::new("scenarios"), SCENARIO_EXT) {
        let own = outcome(&mut Loader::new(), &path);
        let confined = outcome(
            &mut Loader::confined(Confinement::new(&roots).expect("the project's folders")),
            &path,
        );
        assert_eq!(own, confined, "{}", path.display());
    }
}

#[test]
fn a_scenario_past_its_time_limit_is_stopped() {
    let mut c = limits();
    c.max_time = Duration::ZERO;
    let mut patient = c.clone();
    patient.max_time = Duration::from_secs(60);
    let mut loader = Loader::confined(patient);
    let path = Path::new(DIR).join("too-many-occurrences.scenario");
    let list = loader.scenarios(&path).expect("it loads");
    let (env, sc) = &list[0];
    // The loader's own limits (a minute) run it to the log limit; a zero time limit stops the
    // first step.
    let report = Loader::confined(c).run(env, sc);
    let f = report.failures.first().expect("stopped");
    assert_eq!(
        (loader.map.location(f.at), f.message.as_str()),
        (
            format!("{}:6:5", path.display()),
            "stopped: the scenario ran longer than the limit of 0 ms of confined mode"
        )
    );
}

#[test]
fn loading_past_the_time_limit_is_refused() {
    let mut c = limits();
    c.max_time = Duration::ZERO;
    let mut loader = Loader::confined(c);
    std::thread::sleep(Duration::from_millis(2));
    let path = Path::new(DIR).join("too-many-occurrences.scenario");
    let Err(err) = loader.scenarios(&path) else {
        panic!("loading past the time limit is refused")
    };
    assert_eq!(
        loader.short(&err),
        format!(
            "{}: cannot read: refused: loading took longer than the limit of 0 ms",
            path.display()
        )
    );
}
