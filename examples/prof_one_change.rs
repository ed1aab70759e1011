//! Applies one kind of change many times, for a profiler: `cargo run --release --example
//! prof_one_change -- N [TIMES]` (N: the index of the change in `prof_changes`' list; TIMES:
//! 20,000 unless given). The changes run in `run_changes`: under callgrind,
//! `--toggle-collect='*run_changes*'` counts them alone.

#[path = "../benches/layers.rs"]
#[allow(dead_code)]
mod layers_bench;

use rulecraft_core::model::action::Action;
use rulecraft_core::GameState;

#[inline(never)]
fn run_changes(base: &GameState, action: &dyn Fn() -> Action, times: usize) {
    for _ in 0..times {
        let mut t = base.clone();
        t.apply(action()).expect("the action applies");
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let which: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(0);
    let times: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let (s, changes) = layers_bench::changes();
    let (what, setup, action) = &changes[which];
    let mut base = s.clone();
    for a in setup.iter().cloned() {
        base.apply(a).expect("the set-up applies");
    }
    let _ = base.derived();
    run_changes(&base, action, times);
    println!("{what}");
}
