//! Plays one game of the classic ruleset between two random agents and prints its log.
use rulecraft_lang::loader::Loader;
use std::path::Path;

fn main() {
    let mut g = Loader::new()
        .game(
            Path::new("rulesets/classic.rules"),
            &[Path::new("content/classic")],
            &["Ann", "Ben"],
        )
        .expect("loads")
        .with_seed(7);
    let deck = vec![
        ("Mountain".to_string(), 20),
        ("Lightning Bolt".to_string(), 40),
    ];
    g.deal(&[deck.clone(), deck]).expect("deals");
    let mut rng = 12345u64;
    let mut decisions = 0;
    while !g.is_over() {
        let opts = g.decision_options();
        if opts.is_empty() {
            println!("stuck: {:?}", g.pending_decision());
            break;
        }
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let i = (rng % opts.len() as u64) as usize;
        g.answer(i).expect("legal");
        decisions += 1;
    }
    let text = rulecraft_lang::scenario::log_text(&g);
    let lines: Vec<&str> = text.lines().collect();
    for l in &lines[lines.len().saturating_sub(40)..] {
        println!("{l}");
    }
    println!(
        "winner {:?} turn {} decisions {decisions}",
        g.winner(),
        g.turn()
    );
}
