//! Profiles one effects pass over a generated galaxy (`benches/support/galaxy.rs`):
//! `cargo run --release --example prof_galaxy -- SYSTEMS` times the full derivation (the
//! meter-altering groups) and one turn's processing (meters grow and are capped, the non-meter
//! groups fire); under `valgrind --tool=callgrind --collect-atstart=no
//! --toggle-collect='prof_galaxy::meter_pass'` (or `fire_pass`) it shows where each spends.
//! `-- SYSTEMS meter` or `-- SYSTEMS turn` runs that part only. With `RC_DIGEST` set it prints
//! a digest of the derived values, to compare two builds; with `RC_REPEAT=N` the pass runs N
//! times more (for a sampling profiler), and their mean time is printed; with `RC_CHANGES` set the galaxy has
//! the techs of `benches/support/galaxy_changes.cards` too (a turn with changes the layers see).

#[path = "../benches/support/galaxy.rs"]
mod support;

/// The allocator the `rulecraft` binary uses (src/main.rs): a derivation allocates and frees
/// many small blocks (subject lists, indexes), where glibc's allocator spends a tenth of a pass.
#[global_allocator]
static GLOBAL: alloc::Mimalloc = alloc::Mimalloc;

#[path = "../src/alloc.rs"]
mod alloc;

fn main() {
    alloc::reset_on_purge();
    let systems: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000);
    // `meter` or `turn` as a second argument: that part only.
    let part = std::env::args().nth(2).unwrap_or_default();
    let s = if std::env::var("RC_CHANGES").is_ok() {
        support::galaxy_changing(systems, 7)
    } else {
        support::galaxy_firing(systems, 7)
    };
    if part == "turn" {
        return turn(&s, systems);
    }
    // With `RC_REPEAT=N`, the pass runs N times first (for a sampling profiler's sake).
    let repeat: usize = std::env::var("RC_REPEAT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let t = std::time::Instant::now();
    for _ in 0..repeat {
        std::hint::black_box(meter_pass(&s));
    }
    if repeat > 0 {
        println!(
            "{repeat} passes before: {:?} each",
            t.elapsed() / repeat as u32
        );
    }
    let t = std::time::Instant::now();
    let d = meter_pass(&s);
    println!(
        "{systems} systems, {} objects: one effects pass {:?} ({} rows)",
        s.objects().count(),
        t.elapsed(),
        d.sheet.objects.len()
    );
    if std::env::var("RC_DIGEST").is_ok() {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        format!("{:?}", d.sheet).hash(&mut h);
        println!("digest {:x}", h.finish());
    }
    if part != "meter" {
        turn(&s, systems);
    }
}

/// Times one turn's processing on a copy of `s`.
fn turn(s: &rulecraft_core::GameState, systems: usize) {
    let mut next = s.clone();
    // With `RC_AFTER_TURN` set, the turn timed is the second: the first's changes (sizes set,
    // objects destroyed) make it derive again.
    if std::env::var("RC_AFTER_TURN").is_ok() {
        support::turn(&mut next);
    }
    let s = &next.clone();
    let t = std::time::Instant::now();
    fire_pass(&mut next);
    println!(
        "{systems} systems: one turn's non-meter groups (meters grow, are capped, groups fire) {:?} ({} log entries)",
        t.elapsed(),
        next.log().len() - s.log().len()
    );
    if std::env::var("RC_DIGEST").is_ok() {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        format!("{:?}", &next.log()[s.log().len()..]).hash(&mut h);
        format!("{:?}", rulecraft_core::layers::derive(&next, false).sheet).hash(&mut h);
        println!("turn digest {:x}", h.finish());
    }
}

/// One turn's processing: current meters grow and are capped, then the non-meter groups fire.
#[inline(never)]
fn fire_pass(s: &mut rulecraft_core::GameState) {
    support::turn(s);
}

/// The meter-altering groups' pass (a function of its own, for callgrind's `--toggle-collect`).
#[inline(never)]
fn meter_pass(s: &rulecraft_core::GameState) -> rulecraft_core::model::derived::Derived {
    rulecraft_core::layers::derive(s, false)
}
