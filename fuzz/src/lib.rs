//! What the fuzz target does with one input: load it as a ruleset, content or scenario file in a
//! copy of the project, and run scenarios with it in place; a panic, a stack overflow or a hang is
//! a finding. Errors are expected.
//!
//! An input is `[KIND, PICK, TEXT...]`: KIND % 3 says what TEXT is (0 the ruleset `mtg-2020`,
//! replacing the project's; 1 a content file added to `content/mtg/`; 2 a scenario file); PICK
//! chooses which of the project's scenario files runs with a ruleset or content in place.
//! `fuzz/make-corpus.sh` turns the project's own files into inputs of this form.

use rulecraft_core::explain::describe::{describe_object, describe_player};
use rulecraft_lang::loader::{files_with_ext, LoadError, Loader, SCENARIO_EXT};
use rulecraft_lang::scenario::run;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The repository this crate sits in.
fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// A copy of the project's rulesets, content and scenarios, made once per process in memory-backed
/// storage where there is some (`/dev/shm`).
struct Project {
    ruleset: PathBuf,
    ruleset_text: Vec<u8>,
    content: PathBuf,
    scenario: PathBuf,
    scenarios: Vec<PathBuf>,
}

fn project() -> &'static Project {
    static P: OnceLock<Project> = OnceLock::new();
    P.get_or_init(|| {
        let shm = Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let root = base.join(format!("rulecraft-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["rulesets", "content", "scenarios"] {
            copy_dir(&repo().join(dir), &root.join(dir));
        }
        let ruleset = root.join("rulesets/mtg-2020.rules");
        Project {
            ruleset_text: std::fs::read(&ruleset).expect("mtg-2020.rules"),
            ruleset,
            content: root.join("content/mtg/zz-fuzz.cards"),
            scenario: root.join("scenarios/fuzz.scenario"),
            scenarios: files_with_ext(&root.join("scenarios"), SCENARIO_EXT),
        }
    })
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create a folder");
    for entry in std::fs::read_dir(from).expect("read a folder") {
        let path = entry.expect("an entry").path();
        let dest = to.join(path.file_name().expect("a name"));
        if path.is_dir() {
            copy_dir(&path, &dest);
        } else {
            std::fs::copy(&path, &dest).expect("copy a file");
        }
    }
}

/// Both forms of an error, so that rendering runs too.
fn report(loader: &Loader, e: &LoadError) {
    let _ = loader.short(e);
    let _ = loader.render(e);
    let _ = loader.located(e);
}

/// Loads a scenario file and runs every scenario in it, then explains every object and player.
fn load_and_run(loader: &mut Loader, file: &Path) {
    match loader.scenarios(file) {
        Err(e) => report(loader, &e),
        Ok(list) => {
            for (env, sc) in &list {
                let r = run(env, sc, None);
                for f in &r.failures {
                    let _ = loader.map.location(f.at);
                }
                let d = r.state.explain();
                for o in r.state.objects() {
                    let _ = describe_object(&r.state, &d, o.id);
                }
                for p in 0..sc.players.len() {
                    let _ = describe_player(&r.state, &d, rulecraft_core::PlayerId(p as u8));
                }
                // Part of the scenario again, as `explain --step` runs it.
                let _ = run(env, sc, Some(sc.steps.len() / 2));
            }
        }
    }
}

/// One input; see the module's documentation.
pub fn exercise(data: &[u8]) {
    let [kind, pick, text @ ..] = data else {
        return;
    };
    let p = project();
    let mut loader = Loader::new();
    let chosen = &p.scenarios[usize::from(*pick) % p.scenarios.len()];
    match kind % 3 {
        0 => {
            std::fs::write(&p.ruleset, text).expect("write the ruleset");
            match loader.ruleset(&p.ruleset, None) {
                Ok(_) => load_and_run(&mut loader, chosen),
                Err(e) => report(&loader, &e),
            }
            std::fs::write(&p.ruleset, &p.ruleset_text).expect("restore the ruleset");
        }
        1 => {
            std::fs::write(&p.content, text).expect("write the content");
            load_and_run(&mut loader, chosen);
            let _ = std::fs::remove_file(&p.content);
        }
        _ => {
            std::fs::write(&p.scenario, text).expect("write the scenario");
            load_and_run(&mut loader, &p.scenario);
        }
    }
}
