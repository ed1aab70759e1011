//! Times several kinds of change on the layers benchmark's board, each applied as an action (state-
//! based checks included): `cargo run --release --example prof_changes`.

#[path = "../benches/layers.rs"]
#[allow(dead_code)]
mod layers_bench;

use rulecraft_core::action::{Action, NewObject};
use rulecraft_core::{GameState, ObjectId, PlayerId};
use std::time::{Duration, Instant};

/// The best time of `runs` applications of `action` to copies of `s`.
fn best(runs: usize, s: &GameState, action: impl Fn() -> Action) -> Duration {
    (0..runs)
        .map(|_| {
            let mut t = s.clone();
            let start = Instant::now();
            t.apply(action()).expect("the action applies");
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let (s, creature) = layers_bench::board();
    let plus = s.ruleset.counter_id("+1/+1").unwrap();
    let counters = |object: ObjectId, count: i64| {
        move || Action::AddCounters {
            object,
            counter: plus,
            count,
        }
    };
    let bench_counter = s
        .objects()
        .find(|o| &*o.name == "Bench Counter")
        .unwrap()
        .id;
    let class = s.content.class_id("Bench Creature").unwrap();
    let bf = s.ruleset.zone_id("battlefield").unwrap();
    let mut with_counter = s.clone();
    with_counter.apply(counters(creature, 1)()).unwrap();
    let _ = with_counter.derived();
    let times = [
        (
            "a counter on a creature",
            best(200, &s, counters(creature, 1)),
        ),
        (
            "a counter on a Bench Counter",
            best(200, &s, counters(bench_counter, 1)),
        ),
        (
            "a counter taken off a creature",
            best(200, &with_counter, counters(creature, -1)),
        ),
        (
            "a creature enters",
            best(50, &s, || {
                Action::Create(vec![NewObject::new(class, PlayerId(0), bf)])
            }),
        ),
    ];
    for (what, t) in times {
        println!("{what}: {t:?}");
    }
}
