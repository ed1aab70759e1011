//! Runs every bundled scenario (the same job as `rulecraft test scenarios/`), so `cargo test` fails
//! when any expectation of the worked examples does not hold.

use rulecraft_lang::loader::{files_with_ext, Loader};
use rulecraft_lang::scenario::run;
use std::path::Path;

#[test]
fn every_bundled_scenario_passes() {
    let files = files_with_ext(Path::new("scenarios"), "scenario");
    assert!(
        files.len() >= 10,
        "expected the bundled scenarios, found {}",
        files.len()
    );
    let mut loader = Loader::new();
    let mut failures = Vec::new();
    let mut count = 0;
    for f in &files {
        match loader.scenarios(f) {
            Err(e) => failures.push(loader.render(&e)),
            Ok(list) => {
                for (env, sc) in list {
                    count += 1;
                    let r = run(&env, &sc, None);
                    assert!(
                        r.checked > 0,
                        "{}: scenario `{}` checks nothing",
                        f.display(),
                        r.name
                    );
                    for fl in r.failures {
                        failures.push(format!("{}: {}", loader.map.location(fl.at), fl.message));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(count >= 19, "expected at least 19 scenarios, ran {count}");
}

/// Every bundled scenario again, with every recomputation after a change compared with a full
/// derivation (a difference panics, naming the values).
#[test]
fn every_recomputation_in_the_bundled_scenarios_equals_a_full_derivation() {
    rulecraft_core::layers::verify_recomputation(true);
    let files = files_with_ext(Path::new("scenarios"), "scenario");
    let mut loader = Loader::new();
    for f in &files {
        let list = loader.scenarios(f).expect("the bundled scenarios load");
        for (env, sc) in list {
            let r = run(&env, &sc, None);
            assert!(r.passed(), "{}: {}", f.display(), r.name);
        }
    }
}
