//! Times the layers benchmark's board (benches/layers.rs) layer by layer, for profiling:
//! `cargo run --release --example prof [runs]`.

#[path = "../benches/layers.rs"]
#[allow(dead_code)]
mod layers_bench;

use std::time::{Duration, Instant};

fn best(runs: usize, f: impl Fn()) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let (s, _) = layers_bench::board();
    let runs: usize = std::env::args()
        .nth(1)
        .map_or(20, |a| a.parse().unwrap_or(20));
    let mut before = Duration::ZERO;
    for (i, layer) in s.ruleset().layers.iter().enumerate() {
        let t = best(runs, || {
            rulecraft_core::layers::derive_upto(&s, i + 1);
        });
        println!(
            "layer {:>7}: {:>9.3?}",
            layer.label,
            t.saturating_sub(before)
        );
        before = t;
    }
    let total = best(runs, || {
        rulecraft_core::layers::derive(&s, false);
    });
    println!("total:         {total:>9.3?}");
}
