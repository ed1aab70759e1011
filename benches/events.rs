//! Issue 9 targets: 100,000 occurrences through a board of 200 triggered, Reaction and replacement
//! effects at 1,000,000 occurrences a second or more; the same run with 2,000 effects, of which
//! the same number listen, at most 1.5 times slower; a state with a decision pending clones in at
//! most 5 microseconds.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::{Arg, GameState, ObjectId, Occurrence, PlayerId};
use rulecraft_lang::loader::Loader;
use std::path::Path;

const OCCURRENCES: usize = 100_000;

/// `effects` objects with responses, of which 20 Bow Watchers listen to bowing; the rest listen
/// to gaining Honor (Reactions) and moving home (replacements). Returns the state and the card
/// the benchmark bows and straightens.
pub fn board(effects: usize) -> (GameState, ObjectId) {
    let mut s = Loader::new()
        .game(
            Path::new("rulesets/honor.rules"),
            &[Path::new("benches/data/events")],
            &["A", "B"],
        )
        .expect("the benchmark's ruleset and content load");
    let play = s.ruleset().zone_id("play").expect("play");
    let enter = |s: &mut GameState, name: &str, owner: u8| -> ObjectId {
        let class = s.content().class_id(name).expect("class");
        s.apply(Action::Create(vec![NewObject::new(
            class,
            PlayerId(owner),
            play,
        )]))
        .expect("enters")
        .created[0]
    };
    for i in 0..effects {
        let name = match i {
            _ if i < 20 => "Bow Watcher",
            _ if i % 2 == 0 => "Honor Witness",
            _ => "Home Guard",
        };
        enter(&mut s, name, (i % 2) as u8);
    }
    let card = enter(&mut s, "Plain Samurai", 0);
    (s, card)
}

/// Bows and straightens the card, one occurrence at a time.
fn run(mut s: GameState, card: ObjectId) -> GameState {
    let bows = s.ruleset().event_id("bows").expect("bows");
    let straightens = s.ruleset().event_id("straightens").expect("straightens");
    for i in 0..OCCURRENCES {
        let e = if i % 2 == 0 { bows } else { straightens };
        s.occur(Occurrence::new(e, vec![Arg::Object(card)]))
            .expect("occurs");
    }
    s
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("events");
    g.sample_size(10);
    for effects in [200, 2000] {
        let (s, card) = board(effects);
        g.bench_function(
            format!("{OCCURRENCES} occurrences, {effects} effects (20 listening)"),
            |b| b.iter(|| black_box(run(s.clone(), card))),
        );
    }
    // A decision pending: Bob may take a Reaction before A gains Honor.
    let (mut s, _) = board(200);
    let gains = s.ruleset().event_id("gains_honor").expect("gains_honor");
    s.occur(Occurrence::new(
        gains,
        vec![Arg::Player(PlayerId(0)), Arg::Number(1)],
    ))
    .expect("occurs");
    assert!(
        s.pending_decision().is_some(),
        "a Reaction request is pending"
    );
    g.sample_size(50);
    g.bench_function("clone a 200-object state with a decision pending", |b| {
        b.iter(|| black_box(s.clone()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
