//! Runs full derivations of the layers benchmark's board, for profiling:
//! `cargo run --release --example prof_full [runs]`.

#[path = "../benches/layers.rs"]
#[allow(dead_code)]
mod layers_bench;

fn main() {
    let (s, _) = layers_bench::board();
    let runs: usize = std::env::args()
        .nth(1)
        .map_or(100, |a| a.parse().unwrap_or(100));
    for _ in 0..runs {
        std::hint::black_box(rulecraft_core::layers::derive(&s, false));
    }
}
