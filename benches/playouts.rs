//! Issue 16 target: whole random games of the classic ruleset, both decks 20 Mountain and 40
//! Lightning Bolt (20 life, seeded shuffles, 7-card hands, no mulligans, the first player skips
//! the first draw: the ruleset's rules), at 18,000 games a second or more on one core, dealt from
//! scratch each game. Also timed: games from a cloned dealt start (re-seeded), and 1,000 games on
//! one thread then on two (the speed-up is printed, with the mean decisions and turns).

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rulecraft_core::play::playout::MAX_DECISIONS;
use rulecraft_core::{play_many, play_out, Agent, Plan, PlayerId, RandomAgent, Start};

/// The allocator `rulecraft play` uses (src/main.rs).
#[global_allocator]
static GLOBAL: alloc::Mimalloc = alloc::Mimalloc;

#[path = "../src/alloc.rs"]
mod alloc;

/// The benchmark's deck: 20 Mountain, 40 Lightning Bolt.
pub fn bolt() -> Vec<(String, u32)> {
    vec![("Mountain".into(), 20), ("Lightning Bolt".into(), 40)]
}

/// The random agents of a game with this seed, one per player.
pub fn agents(seed: u64, p: PlayerId) -> Box<dyn Agent + Send> {
    Box::new(RandomAgent::new(
        seed ^ (u64::from(p.0) + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
    ))
}

/// Plays game `i` of `start` with random agents; its decisions.
pub fn one(start: &Start, i: usize) -> usize {
    let g = start.game(0, i).expect("deals");
    let s = Start::game_seed(0, i);
    let mut list = [agents(s, PlayerId(0)), agents(s, PlayerId(1))];
    play_out(g, &mut list, MAX_DECISIONS)
        .expect("plays")
        .0
        .decisions
}

fn bench(c: &mut Criterion) {
    let fresh = Start::Decks(common::classic_game(), vec![bolt(), bolt()]);
    let mut dealt = common::classic_game().with_seed(1);
    dealt.deal(&[bolt(), bolt()]).expect("deals");
    let cloned = Start::Dealt(dealt);

    // Enough games that starting the threads and copying the rules for each is a small share.
    let games = 8_000;
    let on_one = play_many(&fresh, Plan::new(games, 0), agents).expect("plays");
    let on_two = play_many(&fresh, Plan::new(games, 0).threads(2), agents).expect("plays");
    println!(
        "{games} fresh games: mean {:.1} decisions, {:.2} turns; {:.0} games/s on 1 thread, \
         {:.0} on 2: speed-up {:.2}",
        on_one.mean_decisions(),
        on_one.mean_turns(),
        on_one.games_per_second(),
        on_two.games_per_second(),
        on_two.games_per_second() / on_one.games_per_second()
    );
    let from_clone = play_many(&cloned, Plan::new(games, 0), agents).expect("plays");
    println!(
        "{games} games from a cloned dealt start: mean {:.1} decisions, {:.2} turns; {:.0} games/s",
        from_clone.mean_decisions(),
        from_clone.mean_turns(),
        from_clone.games_per_second()
    );

    let mut g = c.benchmark_group("playouts");
    g.sample_size(20);
    g.throughput(Throughput::Elements(1));
    let mut i = 0;
    g.bench_function("a random game, dealt from scratch", |b| {
        b.iter(|| {
            i += 1;
            black_box(one(&fresh, i))
        })
    });
    g.bench_function("a random game, from a cloned dealt start", |b| {
        b.iter(|| {
            i += 1;
            black_box(one(&cloned, i))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
