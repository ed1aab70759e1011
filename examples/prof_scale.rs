//! Times the scale benchmark's two cases once each, for a profiler: `cargo run --release
//! --example prof_scale -- [enter|die] [N]`.

#[path = "../benches/scale.rs"]
#[allow(dead_code)]
mod scale_bench;

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "both".into());
    let n: Option<usize> = args.next().and_then(|a| a.parse().ok());
    if which != "die" {
        let mut s = scale_bench::empty_game();
        let n = n.unwrap_or(100_000);
        let t = Instant::now();
        scale_bench::enter_one_at_a_time(&mut s, n);
        println!("{n} objects entered one at a time: {:?}", t.elapsed());
    }
    if which != "enter" {
        let n = n.unwrap_or(60_000);
        let (mut s, resolve) = scale_bench::board_to_die(n);
        let t = Instant::now();
        let out = s.apply(resolve).expect("the spell resolves");
        println!(
            "{n} creatures dying in one round: {:?} ({} moved)",
            t.elapsed(),
            out.state_checks.len()
        );
    }
}
