//! Profiles one effects pass over a generated galaxy (`benches/support/galaxy.rs`):
//! `cargo run --release --example prof_galaxy -- SYSTEMS` times the full derivation; under
//! `valgrind --tool=callgrind` it shows where the pass spends.

#[path = "../benches/support/galaxy.rs"]
mod support;

fn main() {
    let systems: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000);
    let s = support::galaxy(systems, 7);
    let t = std::time::Instant::now();
    let d = meter_pass(&s);
    println!(
        "{systems} systems, {} objects: one effects pass {:?} ({} rows)",
        s.objects().count(),
        t.elapsed(),
        d.sheet.objects.len()
    );
}

/// The meter-altering groups' pass (a function of its own, for callgrind's `--toggle-collect`).
#[inline(never)]
fn meter_pass(s: &rulecraft_core::GameState) -> rulecraft_core::model::derived::Derived {
    rulecraft_core::layers::derive(s, false)
}
