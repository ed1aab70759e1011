//! Layer targets, on one core: a board of 1,000 objects with 300 continuous effects across all
//! layers, a tenth of them in dependency relations and one loop of three.
//! - full recomputation: at most 2 ms (`layers::derive` from the base values);
//! - recomputation after each single change (`changes`): at most 0.2 ms. Each is applied as an
//!   action (the state-based checks included), so the derivation starts from the previous one: a
//!   counter put on and taken off (read by the "Bench Counter" effects, which count creatures with
//!   power 4 or more), counters that cross that threshold, a creature entering and leaving, an
//!   effect starting and ending.

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion};
use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::model::decision::{Choice, DecisionRequest};
use rulecraft_core::{GameState, ObjectId, PlayerId};
use rulecraft_lang::loader::Loader;
use std::path::Path;

/// Builds the board; returns it with one creature to change.
pub fn board() -> (GameState, ObjectId) {
    let mut s = Loader::new()
        .game(
            Path::new("rulesets/mtg-2020.rules"),
            &[Path::new("benches/data/board.cards")],
            &["A", "B"],
        )
        .expect("ruleset and content load");
    let content = s.content().clone();
    let bf = s.ruleset().zone_id("battlefield").unwrap();
    let gy = s.ruleset().zone_id("graveyard").unwrap();
    let class = |n: &str| content.class_id(n).expect(n);
    // 700 creatures and 240 permanents with static abilities enter at once.
    let mut list = Vec::new();
    for i in 0..700u32 {
        let name = if i % 7 == 0 {
            "Bench Goblin"
        } else {
            "Bench Creature"
        };
        list.push(NewObject::new(class(name), PlayerId((i % 2) as u8), bf));
    }
    let statics: [(&str, usize); 12] = [
        ("Bench Type Setter", 15),
        ("Bench Goblin Lord", 15),
        ("Bench Loop A", 1),
        ("Bench Loop B", 1),
        ("Bench Loop C", 1),
        ("Bench Painter", 30),
        ("Bench Wings", 30),
        ("Bench Anthem", 75),
        ("Bench Counter", 10),
        ("Bench Hand", 2),
        ("Bench Shrinker", 40),
        ("Bench Control Aura", 20),
    ];
    for (k, (name, n)) in statics.iter().enumerate() {
        for j in 0..*n {
            list.push(NewObject::new(
                class(name),
                PlayerId(((k + j) % 2) as u8),
                bf,
            ));
        }
    }
    let out = s.apply(Action::Create(list)).expect("objects enter");
    let ids = out.created;
    let order = match s.pending_decision() {
        Some(DecisionRequest::OrderTimestamps { objects, .. }) => objects.clone(),
        _ => unreachable!("many objects entered at once"),
    };
    s.decide(Choice::Order(order)).expect("order");
    let creatures = &ids[..700];
    // Auras: the shrinkers and control auras, attached to creatures.
    for (i, o) in ids[700..].iter().enumerate() {
        let name = &s.object(*o).unwrap().name;
        if &**name == "Bench Shrinker" || &**name == "Bench Control Aura" {
            s.apply(Action::Attach {
                object: *o,
                to: creatures[i * 7 % 700],
            })
            .expect("attach");
        }
    }
    // Spells: 60 created effects in layers 1a, 3 and 7d.
    for (name, n) in [
        ("Bench Mirror", 20),
        ("Bench Text Bend", 20),
        ("Bench Switch", 20),
    ] {
        for i in 0..n {
            let sp = s
                .apply(Action::Create(vec![NewObject::new(
                    class(name),
                    PlayerId(0),
                    gy,
                )]))
                .expect("spell")
                .created[0];
            s.apply(Action::Resolve {
                spell: sp,
                controller: PlayerId(0),
                targets: vec![creatures[(i * 31 + 5) % 700]],
                choices: vec![],
            })
            .expect("resolve");
        }
    }
    let _ = s.derived();
    (s, creatures[3])
}

/// A change to time: its name, the actions that set it up (applied first, untimed), and the action.
pub type Change = (&'static str, Vec<Action>, Box<dyn Fn() -> Action>);

/// The board and the single changes the benchmark times: a counter put on and taken off, one that
/// crosses a threshold another effect counts, a creature entering and leaving, an effect starting
/// and ending.
pub fn changes() -> (GameState, Vec<Change>) {
    let (s, creature) = board();
    let plus = s.ruleset().counter_id("+1/+1").unwrap();
    let minus = s.ruleset().counter_id("-1/-1").unwrap();
    let bf = s.ruleset().zone_id("battlefield").unwrap();
    let gy = s.ruleset().zone_id("graveyard").unwrap();
    let bear = s.content().class_id("Bench Creature").unwrap();
    let growth = s.content().class_id("Bench Growth").unwrap();
    let counters = move |object: ObjectId, counter, count: i64| {
        move || Action::AddCounters {
            object,
            counter,
            count,
        }
    };
    // A creature of player A with nothing attached and no spell on it.
    let plain = creature;
    let next = ObjectId(s.objects().count() as u32);
    let spell = next;
    let resolve_growth = move || Action::Resolve {
        spell,
        controller: PlayerId(0),
        targets: vec![plain],
        choices: vec![],
    };
    let list: Vec<Change> = vec![
        (
            "a +1/+1 counter put on a creature",
            vec![],
            Box::new(counters(plain, plus, 1)),
        ),
        (
            "a +1/+1 counter taken off a creature",
            vec![counters(plain, plus, 1)()],
            Box::new(counters(plain, plus, -1)),
        ),
        (
            "-1/-1 counters that take a creature below power 4 (a threshold the Bench Counters count)",
            vec![],
            Box::new(counters(plain, minus, 45)),
        ),
        (
            "a creature enters",
            vec![],
            Box::new(move || Action::Create(vec![NewObject::new(bear, PlayerId(0), bf)])),
        ),
        (
            "a creature leaves the battlefield",
            vec![],
            Box::new(move || Action::Move {
                object: plain,
                zone: gy,
            }),
        ),
        (
            "an effect starts (a spell gives a creature +3/+3 until end of turn)",
            vec![Action::Create(vec![NewObject::new(growth, PlayerId(0), gy)])],
            Box::new(resolve_growth),
        ),
        (
            "an effect ends (the +3/+3 until end of turn of a spell that resolved)",
            vec![
                Action::Create(vec![NewObject::new(growth, PlayerId(0), gy)]),
                resolve_growth(),
            ],
            Box::new(move || Action::EndEffectsOf { source: spell }),
        ),
    ];
    (s, list)
}

fn bench(c: &mut Criterion) {
    let (s, _) = board();
    assert_eq!(s.objects().count(), 1000);
    c.bench_function(
        "layers: full recomputation, 1000 objects, 300 effects",
        |b| b.iter(|| black_box(rulecraft_core::layers::derive(&s, false))),
    );
    let (s, list) = changes();
    for (what, setup, action) in list {
        let mut base = s.clone();
        for a in setup {
            base.apply(a).expect("the set-up applies");
        }
        let _ = base.derived();
        c.bench_function(&format!("layers: recomputation after {what}"), |b| {
            b.iter_batched(
                || base.clone(),
                |mut t| {
                    t.apply(action()).unwrap();
                    black_box(t.derived().sheet.objects.len())
                },
                BatchSize::SmallInput,
            )
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
