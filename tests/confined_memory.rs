//! The confined loader with its files in memory (the browser playground, where there is no disk):
//! a loader confined to no folder reads only the texts set on it, finds rulesets and content among
//! them by name as in a project, and refuses everything else without quoting it.

use rulecraft_lang::confine::Confinement;
use rulecraft_lang::loader::Loader;
use std::path::Path;

/// A loader confined to no folder, with the confined cases' ruleset and a content file in memory.
fn loader() -> Loader {
    let mut l = Loader::confined(Confinement::new::<&Path>(&[]).expect("no folder to check"));
    let tiny = std::fs::read_to_string("tests/bad/confined/rulesets/tiny.rules")
        .expect("the confined cases' ruleset");
    l.set_text(Path::new("rulesets/tiny.rules"), tiny);
    l.set_text(
        Path::new("content/cards/one.cards"),
        "card \"Pebble\" {\n    types: stone\n    power: 3\n}\n".into(),
    );
    l
}

fn scenario(ruleset: &str, content: &str) -> String {
    format!(
        "scenario \"in memory\" {{\n    ruleset: {ruleset}\n    content: {content}\n    players: Ann, Ben\n    setup {{\n        \"Pebble\" for Ann\n    }}\n    expect \"Pebble\" power = 3\n}}\n"
    )
}

/// Loads and runs `play.scenario` with the text: the first error or failure in one line.
fn outcome(text: String) -> String {
    let mut l = loader();
    l.set_text(Path::new("play.scenario"), text);
    match l.scenarios(Path::new("play.scenario")) {
        Err(e) => l.short(&e),
        Ok(list) => {
            for (env, sc) in &list {
                let r = l.run(env, sc);
                if let Some(f) = r.failures.first() {
                    return format!("{}: {}", l.map.location(f.at), f.message);
                }
            }
            format!("ok: {}", list.len())
        }
    }
}

#[test]
fn rulesets_and_content_in_memory_are_found_by_name_and_by_path() {
    assert_eq!(outcome(scenario("tiny", "cards")), "ok: 1");
    assert_eq!(
        outcome(scenario(
            "\"rulesets/tiny.rules\"",
            "\"content/cards/one.cards\""
        )),
        "ok: 1"
    );
}

#[test]
fn files_on_disk_are_refused_unquoted() {
    // rulesets/classic.rules is on disk, not in memory: refused, and nothing of it is quoted.
    assert_eq!(
        outcome(scenario("classic", "cards")),
        "play.scenario:2:14: refused: `classic` is outside the folders this loader may read (confined mode)"
    );
    assert_eq!(
        outcome(scenario("tiny", "\"content/classic\"")),
        "play.scenario:3:14: refused: `content/classic` is outside the folders this loader may read (confined mode)"
    );
}

#[test]
fn absolute_paths_and_dotdot_are_refused() {
    let abs = std::fs::canonicalize("rulesets/classic.rules").expect("the classic ruleset");
    let msg = outcome(scenario(&format!("\"{}\"", abs.display()), "cards"));
    assert!(
        msg.starts_with("play.scenario:2:14: refused: `/") && msg.contains("is an absolute path"),
        "{msg}"
    );
    assert_eq!(
        outcome(scenario("\"rulesets/../rulesets/tiny.rules\"", "cards")),
        "play.scenario:2:14: refused: `rulesets/../rulesets/tiny.rules` leaves the folders this loader may read (confined mode)"
    );
}

#[test]
fn a_name_in_no_text_is_missing() {
    let msg = outcome(scenario("tiny", "stones"));
    assert!(
        msg.starts_with("play.scenario:3:14: no content `stones`"),
        "{msg}"
    );
}

/// `Loader::game` finds its content among the texts in memory: a folder of them, and a text
/// named by its path; and so does an unconfined loader for a text set on it that is not on disk.
#[test]
fn a_game_loads_content_set_in_memory() {
    let has_pebble = |mut l: Loader, ruleset: &str, content: &str| {
        let g = l
            .game(Path::new(ruleset), &[Path::new(content)], &["Ann", "Ben"])
            .expect("the game loads");
        g.content().class_id("Pebble").is_some()
    };
    assert!(has_pebble(loader(), "rulesets/tiny.rules", "content/cards"));
    assert!(has_pebble(
        loader(),
        "rulesets/tiny.rules",
        "content/cards/one.cards"
    ));
    let mut l = Loader::new();
    l.set_text(
        Path::new("tests/data/not-on-disk.cards"),
        "card \"Pebble\" {\n    types: stone\n    power: 3\n}\n".into(),
    );
    assert!(has_pebble(
        l,
        "tests/bad/confined/rulesets/tiny.rules",
        "tests/data/not-on-disk.cards"
    ));
}
