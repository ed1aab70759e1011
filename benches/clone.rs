//! Issue 2 target: cloning a game state with 200 objects takes at most 5 microseconds.
//! Also measures a full derivation of that board, for reference.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::{GameState, PlayerId};
#[path = "../tests/common/mod.rs"]
mod common;

/// 200 objects: creatures for both players, Glorious Anthems, Auras attached, counters, and
/// until-end-of-turn effects from resolved spells.
fn board() -> GameState {
    let mut s = common::mtg_game(&["A", "B"]);
    let rs = s.ruleset().clone();
    let content = s.content().clone();
    let bf = rs.zone_id("battlefield").expect("battlefield");
    let class = |n: &str| content.class_id(n).expect("card exists");
    let mut creatures = Vec::new();
    for i in 0..200u32 {
        let (name, owner) = match i % 10 {
            0 => ("Glorious Anthem", i % 20 / 10),
            5 => ("Control Magic", 1),
            _ => ("Grizzly Bears", i % 2),
        };
        let out = s
            .apply(Action::Create(vec![NewObject {
                class: class(name),
                name: None,
                owner: PlayerId(owner as u8),
                controller: None,
                zone: bf,
                choices: vec![],
                copy_of: None,
                face_down: false,
                // An Aura enters attached (an unattached one would go to the graveyard).
                attached_to: (name == "Control Magic").then(|| creatures[creatures.len() - 1]),
            }]))
            .expect("object enters");
        let id = out.created[0];
        if name == "Grizzly Bears" {
            creatures.push(id);
        }
    }
    let plus = rs.counter_id("+1/+1").expect("counter");
    for c in creatures.iter().step_by(3) {
        s.apply(Action::AddCounters {
            object: *c,
            counter: plus,
            count: 1,
        })
        .expect("counters");
    }
    for c in creatures.iter().step_by(7) {
        let spell = s
            .apply(Action::Create(vec![NewObject {
                class: class("Giant Growth"),
                name: None,
                owner: PlayerId(0),
                controller: None,
                zone: rs.zone_id("graveyard").expect("graveyard"),
                choices: vec![],
                copy_of: None,
                face_down: false,
                attached_to: None,
            }]))
            .expect("spell")
            .created[0];
        s.apply(Action::Resolve {
            spell,
            controller: PlayerId(0),
            targets: vec![*c],
            choices: vec![],
        })
        .expect("resolve");
    }
    s
}

fn bench(c: &mut Criterion) {
    let s = board();
    assert!(s.objects().count() >= 200);
    let _ = s.derived();
    c.bench_function("clone 200-object state", |b| {
        b.iter(|| black_box(s.clone()))
    });
    c.bench_function("derive 200-object state", |b| {
        b.iter(|| black_box(rulecraft_core::layers::derive(&s, false)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
