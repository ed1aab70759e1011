//! A wrong expectation fails. Each scenario file in `tests/failing/` holds one wrong expectation
//! of one kind (`=` on a number, symbols, text and a controller; `has`; `lacks`; an ability
//! list; `order`; a zone; a player property). Every failure of every scenario in the file, as
//! `FILE:LINE:COL: MESSAGE`, one per line, must equal `NAME.scenario.expected`, and no scenario
//! there may pass. (tests/cli.rs runs the same files through the `rulecraft` command.)

use rulecraft_lang::loader::{files_with_ext, Loader};
use rulecraft_lang::scenario::run;
use std::path::Path;

const DIR: &str = "tests/failing";

#[test]
fn every_wrong_expectation_fails_with_its_message() {
    let files = files_with_ext(Path::new(DIR), "scenario");
    assert!(files.len() >= 10, "expected the failing corpus in {DIR}");
    let mut problems = Vec::new();
    for f in &files {
        let expected_path = format!("{}.expected", f.display());
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("cannot read {expected_path}: {e}"));
        let mut loader = Loader::new();
        let list = match loader.scenarios(f) {
            Ok(l) => l,
            Err(e) => {
                problems.push(format!(
                    "{}: does not load: {}",
                    f.display(),
                    loader.short(&e)
                ));
                continue;
            }
        };
        let mut actual = Vec::new();
        for (env, sc) in &list {
            let r = run(env, sc, None);
            if r.passed() {
                problems.push(format!("{}: scenario `{}` passed", f.display(), r.name));
            }
            actual.extend(
                r.failures
                    .iter()
                    .map(|x| format!("{}: {}", loader.map.location(x.at), x.message)),
            );
        }
        let expected: Vec<&str> = expected.lines().collect();
        if actual != expected {
            problems.push(format!(
                "{}:\n    expected: {expected:#?}\n    actual:   {actual:#?}",
                f.display()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
