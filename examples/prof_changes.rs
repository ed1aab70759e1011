//! Times several kinds of change on the layers benchmark's board, each applied as an action (state-
//! based checks included): `cargo run --release --example prof_changes`.

#[path = "../benches/layers.rs"]
#[allow(dead_code)]
mod layers_bench;

use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::GameState;
use std::time::{Duration, Instant};

/// The best time of `runs` applications of `action` to copies of `s`, with how the derivation
/// went (layers reused, replayed).
fn best(runs: usize, s: &GameState, action: impl Fn() -> Action) -> (Duration, usize, usize) {
    let mut how = (0, 0);
    let t = (0..runs)
        .map(|_| {
            let mut t = s.clone();
            let start = Instant::now();
            t.apply(action()).expect("the action applies");
            let e = start.elapsed();
            how = (t.derived().reused_layers, t.derived().replayed_layers);
            e
        })
        .min()
        .unwrap_or_default();
    (t, how.0, how.1)
}

fn main() {
    let (s, changes) = layers_bench::changes();
    for (what, setup, action) in changes {
        let mut base = s.clone();
        for a in setup.iter().cloned() {
            base.apply(a).expect("the set-up applies");
        }
        let _ = base.derived();
        let (t, reused, replayed) = best(100, &base, &action);
        println!("{what}: {t:?} (layers reused {reused}, replayed {replayed})");
    }
    let _ = NewObject::new;
}
