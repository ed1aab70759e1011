//! Issue 8, item 7: a symbol written as a bare word after `has` / `lacks` that no ruleset, content
//! or choice names draws a warning naming file:line:col (the author probably meant a reference
//! such as `chosen`); the file still loads.

use rulecraft_lang::loader::Loader;
use std::path::{Path, PathBuf};

#[test]
fn a_symbol_nothing_names_draws_a_warning() {
    let mut loader = Loader::new();
    let rules = Path::new("rulesets/mtg-2020.rules");
    let env = loader.ruleset(rules, None).expect("ruleset loads");
    let content = loader
        .content(
            &env,
            rules,
            &[PathBuf::from("tests/data/warn-chosen.cards")],
            None,
        )
        .expect("the content loads: warnings are not errors");
    assert_eq!(content.classes.len(), 3);
    assert_eq!(
        loader.warning_lines(),
        [
            "tests/data/warn-chosen.cards:6:44: warning: `subtypes has chosen_type`: no ruleset, content or choice names the symbol `chosen_type`: did you mean `chosen`?",
            "tests/data/warn-chosen.cards:15:99: warning: `colors lacks bleu`: no ruleset, content or choice names the symbol `bleu`",
        ]
    );
}

#[test]
fn a_symbol_a_choice_names_draws_none() {
    let mut loader = Loader::new();
    let list = loader
        .scenarios(Path::new("tests/data/warn-choice.scenario"))
        .expect("the scenario loads");
    assert_eq!(list.len(), 1);
    assert_eq!(loader.warning_lines(), Vec::<String>::new());
}

/// The bundled rulesets, content and scenarios draw no warning.
#[test]
fn the_bundled_files_draw_none() {
    let mut loader = Loader::new();
    for f in rulecraft_lang::loader::files_with_ext(Path::new("scenarios"), "scenario") {
        loader.scenarios(&f).expect("bundled scenarios load");
    }
    assert_eq!(loader.warning_lines(), Vec::<String>::new());
}

/// A user's report: an operation listing a basic land type beside a creature type (`subtypes +=
/// island, saproling`) is written with the abilities the land type gives (CR 305.6-305.7), and
/// `subtypes has saproling` elsewhere drew "no ruleset, content or choice names the symbol". Every
/// symbol an operation lists is named: there, in a characteristic with categories (`subtypes =
/// goblin`, CR 205.1a) and in an effect a trait starts.
#[test]
fn every_symbol_an_operation_lists_is_named() {
    let mut loader = Loader::new();
    let rules = Path::new("rulesets/mtg-2020.rules");
    let env = loader.ruleset(rules, None).expect("ruleset loads");
    let content = loader
        .content(
            &env,
            rules,
            &[PathBuf::from("tests/data/warn-intrinsic.cards")],
            None,
        )
        .expect("the content loads");
    assert_eq!(content.classes.len(), 4);
    assert_eq!(loader.warning_lines(), Vec::<String>::new());
}
