//! Applies one kind of change many times, for a profiler: `cargo run --release --example
//! prof_one_change -- N` (N: the index of the change in `prof_changes`' list).

#[path = "../benches/layers.rs"]
#[allow(dead_code)]
mod layers_bench;

fn main() {
    let which: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(0);
    let (s, changes) = layers_bench::changes();
    let (what, setup, action) = &changes[which];
    let mut base = s.clone();
    for a in setup.iter().cloned() {
        base.apply(a).expect("the set-up applies");
    }
    let _ = base.derived();
    for _ in 0..3000 {
        let mut t = base.clone();
        t.apply(action()).expect("the action applies");
    }
    println!("{what}");
}
