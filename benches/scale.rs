//! Scale targets, on one core (issue 8, item 4): a change costs about what it reaches, not the
//! size of the board.
//! - 100,000 objects entered one at a time, each an action of its own (its derivation and its
//!   state-based checks included), on a board where no effect reads them: under 2 s;
//! - 60,000 creatures dying in one round of state-based checks (a spell gives every creature
//!   -2/-2; CR 704.5f puts those with toughness 0 or less into the graveyard at once): under
//!   0.5 s, from the spell resolving to the checks settled.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::model::decision::{Choice, DecisionRequest};
use rulecraft_core::{GameState, PlayerId};
use rulecraft_lang::loader::Loader;
use std::path::Path;

/// The 2020 rules with the bundled cards, two players, nothing in play.
pub fn empty_game() -> GameState {
    Loader::new()
        .game(
            Path::new("rulesets/mtg-2020.rules"),
            &[Path::new("content/mtg")],
            &["A", "B"],
        )
        .expect("bundled ruleset and content load")
}

/// Enters `n` Grizzly Bears (2/2 creatures) one at a time, alternating players: no static ability
/// in play reads them.
pub fn enter_one_at_a_time(s: &mut GameState, n: usize) {
    let bf = s.ruleset().zone_id("battlefield").expect("battlefield");
    let bears = s
        .content()
        .class_id("Grizzly Bears")
        .expect("Grizzly Bears");
    for i in 0..n {
        s.apply(Action::Create(vec![NewObject::new(
            bears,
            PlayerId((i % 2) as u8),
            bf,
        )]))
        .expect("a creature enters");
    }
}

/// A board of `n` Grizzly Bears (2/2, entered together) and the action that resolves Hideous
/// Laughter ("All creatures get -2/-2 until end of turn."): every one dies.
pub fn board_to_die(n: usize) -> (GameState, Action) {
    let mut s = empty_game();
    let bf = s.ruleset().zone_id("battlefield").expect("battlefield");
    let gy = s.ruleset().zone_id("graveyard").expect("graveyard");
    let bears = s
        .content()
        .class_id("Grizzly Bears")
        .expect("Grizzly Bears");
    let list = (0..n)
        .map(|i| NewObject::new(bears, PlayerId((i % 2) as u8), bf))
        .collect();
    s.apply(Action::Create(list)).expect("creatures enter");
    if let Some(DecisionRequest::OrderTimestamps { objects, .. }) = s.pending_decision() {
        let order = objects.clone();
        s.decide(Choice::Order(order)).expect("any order");
    }
    let sweeper = s
        .content()
        .class_id("Hideous Laughter")
        .expect("Hideous Laughter");
    let spell = s
        .apply(Action::Create(vec![NewObject::new(
            sweeper,
            PlayerId(0),
            gy,
        )]))
        .expect("the spell")
        .created[0];
    let _ = s.derived();
    let resolve = Action::Resolve {
        spell,
        controller: PlayerId(0),
        targets: vec![],
        choices: vec![],
    };
    (s, resolve)
}

fn bench(c: &mut Criterion) {
    let base = empty_game();
    c.bench_function("scale: 100,000 objects entered one at a time", |b| {
        b.iter_batched(
            || base.clone(),
            |mut s| {
                enter_one_at_a_time(&mut s, 100_000);
                s
            },
            BatchSize::LargeInput,
        )
    });
    let (board, resolve) = board_to_die(60_000);
    c.bench_function(
        "scale: 60,000 creatures dying in one round of checks",
        |b| {
            b.iter_batched(
                || board.clone(),
                |mut s| {
                    let out = s.apply(resolve.clone()).expect("the spell resolves");
                    assert_eq!(out.state_checks.len(), 60_000);
                    s
                },
                BatchSize::LargeInput,
            )
        },
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
