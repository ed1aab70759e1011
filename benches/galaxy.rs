//! Galaxy targets, on one core (issue 17): one effects pass over a generated galaxy
//! (`support/galaxy.rs`: the mix of systems, planets, buildings, ships, fleets and
//! fields, each empire with its techs, some of whose groups do not alter meters) at about 4,000
//! objects (1,000 systems): at most 10 ms; at about 40,000 (10,000 systems): at most 100 ms,
//! growing linearly. Two parts: the meter-altering groups (every group's scope and activation and
//! the max meters derived through the layers from 0), and one turn's processing (current meters
//! grow and are capped, then the non-meter groups fire, each effect an occurrence).

use criterion::measurement::WallTime;
use criterion::{black_box, criterion_group, criterion_main, BatchSize, BenchmarkGroup, Criterion};
use rulecraft_core::GameState;

#[path = "support/galaxy.rs"]
mod support;

/// The allocator the `rulecraft` binary uses (src/main.rs): a derivation allocates and frees
/// many small blocks (subject lists, indexes), where glibc's allocator spends a tenth of a pass.
#[global_allocator]
static GLOBAL: alloc::Mimalloc = alloc::Mimalloc;

#[path = "../src/alloc.rs"]
mod alloc;

/// Times one turn from `s` (each sample from a copy of it).
fn bench_turn(g: &mut BenchmarkGroup<'_, WallTime>, name: String, s: &GameState) {
    g.bench_function(name, |b| {
        b.iter_batched(
            || s.clone(),
            |mut next| {
                support::turn(&mut next);
                next
            },
            BatchSize::LargeInput,
        )
    });
}

fn effects_pass(c: &mut Criterion) {
    alloc::reset_on_purge();
    let mut g = c.benchmark_group("galaxy");
    g.sample_size(10);
    for systems in [1_000usize, 10_000] {
        let s = support::galaxy_firing(systems, 7);
        let objects = s.objects().count();
        eprintln!(
            "{systems} systems: {objects} objects, {} effects groups with a source",
            support::groups_with_sources(&s)
        );
        g.bench_function(format!("meter groups, {objects} objects"), |b| {
            b.iter(|| black_box(rulecraft_core::layers::derive(&s, false)))
        });
        bench_turn(
            &mut g,
            format!("non-meter groups (one turn), {objects} objects"),
            &s,
        );
    }
    // A turn whose non-meter effects change what the layers derive from (each change derives
    // the values again before the next effect fires): at 1,000 systems only, as it grows
    // faster than the galaxy (docs/galaxy.md, "Scale").
    let s = support::galaxy_changing(1_000, 7);
    let objects = s.objects().count();
    bench_turn(
        &mut g,
        format!("one turn with changes the layers see, {objects} objects"),
        &s,
    );
    g.finish();
}

criterion_group!(benches, effects_pass);
criterion_main!(benches);
