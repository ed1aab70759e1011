//! Profiles the layers benchmark's "after one change" path: `cargo run --release --example
//! prof_change [runs]`.

#[path = "../benches/layers.rs"]
#[allow(dead_code)]
mod layers_bench;

use rulecraft_core::action::Action;
use std::time::{Duration, Instant};

fn main() {
    let (s, creature) = layers_bench::board();
    let plus = s.ruleset.counter_id("+1/+1").unwrap();
    let runs: usize = std::env::args()
        .nth(1)
        .map_or(50, |a| a.parse().unwrap_or(50));
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let mut t = s.clone();
        let start = Instant::now();
        t.apply(Action::AddCounters {
            object: creature,
            counter: plus,
            count: 1,
        })
        .unwrap();
        best = best.min(start.elapsed());
    }
    println!("after one change: {best:?}");
}
