//! What several tests and benchmarks share: the bundled Magic ruleset and cards, loaded.

use rulecraft_core::GameState;
use rulecraft_lang::loader::Loader;
use std::path::Path;

/// A game of the bundled `mtg-2020` ruleset and `content/mtg` cards with these players, no
/// object yet.
pub fn mtg_game(players: &[&str]) -> GameState {
    Loader::new()
        .game(
            Path::new("rulesets/mtg-2020.rules"),
            &[Path::new("content/mtg")],
            players,
        )
        .expect("the bundled ruleset and content load")
}
