#[path = "../benches/layers.rs"]
#[allow(dead_code)]
mod layers_bench;
fn main() {
    let (s, _c) = layers_bench::board();
    let mut best = std::time::Duration::MAX;
    let n: usize = std::env::args().nth(1).map_or(20, |a| a.parse().unwrap());
    for _ in 0..n {
        let t = std::time::Instant::now();
        let _ = rulecraft_core::layers::derive(&s, false);
        best = best.min(t.elapsed());
    }
    eprintln!("best total {:?}", best);
}
