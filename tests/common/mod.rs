//! What several tests and benchmarks share: games of the bundled rulesets and content, loaded.
//! (Each test binary uses some of these, so the others are not dead code.)
#![allow(dead_code)]

use rulecraft_core::GameState;
use rulecraft_lang::loader::Loader;
use std::path::Path;

/// A game of this ruleset and content with these players, no object yet.
pub fn game(ruleset: &str, content: &[&str], players: &[&str]) -> GameState {
    let content: Vec<&Path> = content.iter().map(Path::new).collect();
    Loader::new()
        .game(Path::new(ruleset), &content, players)
        .expect("the bundled ruleset and content load")
}

/// A game of the bundled `mtg-2020` ruleset and `content/mtg` cards with these players.
pub fn mtg_game(players: &[&str]) -> GameState {
    game("rulesets/mtg-2020.rules", &["content/mtg"], players)
}

/// A game of the bundled `classic` ruleset and `content/classic` cards between Ann and Ben, not
/// yet dealt.
pub fn classic_game() -> GameState {
    game(
        "rulesets/classic.rules",
        &["content/classic"],
        &["Ann", "Ben"],
    )
}
