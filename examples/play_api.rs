//! The game loop an AI uses: load, deal, answer decisions by index, clone to look ahead, read the
//! winner. `cargo run --example play_api`
use rulecraft_core::{Agent, RandomAgent};
use rulecraft_lang::loader::Loader;
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rules = Path::new("rulesets/classic.rules");
    let mut game = Loader::new()
        .game(rules, &[Path::new("content/classic")], &["Ann", "Ben"])
        .map_err(|e| format!("{e:?}"))?
        .with_seed(42);
    let deck = vec![
        ("Mountain".to_string(), 20),
        ("Lightning Bolt".to_string(), 40),
    ];
    game.deal(&[deck.clone(), deck])?;
    let mut agent = RandomAgent::new(7);
    while !game.is_over() {
        let options = game.decision_options();
        let player = game.pending_decision().map(|d| d.player()).ok_or("stuck")?;
        if options.is_empty() {
            return Err("a decision with no options listed (an order of timestamps)".into());
        }
        // Look ahead: a clone is cheap, and answering it leaves `game` as it is.
        let mut trial = game.clone();
        trial.answer(options.len() - 1)?;
        let pick = agent.choose(&game, &options);
        if game.turn() == 1 {
            println!("{}: {}", game.player_name(player), options[pick].label);
        }
        game.answer(pick)?;
    }
    match game.winner() {
        Some(Some(p)) => println!("{} wins on turn {}", game.player_name(p), game.turn()),
        _ => println!("a draw"),
    }
    Ok(())
}
