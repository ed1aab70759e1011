//! Times the events benchmark's run (benches/events.rs) outside criterion, for profiling:
//! `cargo run --release --example prof_events`.

#[path = "../benches/events.rs"]
#[allow(dead_code)]
mod events_bench;

use rulecraft_core::{Arg, Occurrence};
use std::time::Instant;

fn main() {
    let (s, card) = events_bench::board(200);
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
