//! Times the events benchmark's run (benches/events.rs) outside criterion, for profiling:
//! `cargo run --release --example prof_events`.

use rulecraft_core::action::{Action, NewObject};
use rulecraft_core::{Arg, GameState, ObjectId, Occurrence, PlayerId};
use rulecraft_lang::loader::Loader;
use std::path::Path;
use std::time::Instant;

fn board(effects: usize) -> (GameState, ObjectId) {
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

fn main() {
    let (s, card) = board(200);
    let bows = s.ruleset().event_id("bows").expect("bows");
    let straightens = s.ruleset().event_id("straightens").expect("straightens");
    for _ in 0..5 {
        let mut s = s.clone();
        let t = Instant::now();
        for i in 0..100_000 {
            let e = if i % 2 == 0 { bows } else { straightens };
            s.occur(Occurrence::new(e, vec![Arg::Object(card)]))
                .expect("occurs");
        }
        let dt = t.elapsed();
        println!(
            "100,000 occurrences: {:?} ({:.0} a second)",
            dt,
            100_000.0 / dt.as_secs_f64()
        );
    }
}
