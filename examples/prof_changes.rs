//! Times several kinds of change on the layers benchmark's board, each applied as an action (state-
//! based checks included): `cargo run --release --example prof_changes`.
#[path = "../benches/layers.rs"]
#[allow(dead_code)]
mod layers_bench;
use rulecraft_core::action::{Action, NewObject};
use std::time::{Duration, Instant};
fn best(
    runs: usize,
    s: &rulecraft_core::GameState,
    f: impl Fn(&mut rulecraft_core::GameState),
) -> Duration {
    let mut b = Duration::MAX;
    for _ in 0..runs {
        let mut t = s.clone();
        let st = Instant::now();
        f(&mut t);
        b = b.min(st.elapsed());
    }
    b
}
fn main() {
    let (s, creature) = layers_bench::board();
    let plus = s.ruleset.counter_id("+1/+1").unwrap();
    let bc = s
        .objects()
        .find(|o| &*o.name == "Bench Counter")
        .unwrap()
        .id;
    let class = s.content.class_id("Bench Creature").unwrap();
    let bf = s.ruleset.zone_id("battlefield").unwrap();
    println!(
        "counter on a creature: {:?}",
        best(200, &s, |t| {
            t.apply(Action::AddCounters {
                object: creature,
                counter: plus,
                count: 1,
            })
            .unwrap();
        })
    );
    println!(
        "counter on a Bench Counter: {:?}",
        best(100, &s, |t| {
            t.apply(Action::AddCounters {
                object: bc,
                counter: plus,
                count: 1,
            })
            .unwrap();
        })
    );
    println!(
        "a creature enters: {:?}",
        best(50, &s, |t| {
            t.apply(Action::Create(vec![NewObject::new(
                class,
                rulecraft_core::PlayerId(0),
                bf,
            )]))
            .unwrap();
        })
    );
}
