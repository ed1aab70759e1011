//! Hooks for tests, benchmarks and profiling only (cargo feature `test-hooks`): a derivation in a
//! shuffled storage order, a derivation of the first layers, and the recomputations' statistics
//! and check against a full derivation. A normal build has none of them.

use super::derive::{derive, derive_inner, derive_layers};
use crate::model::derived::Derived;
use crate::state::GameState;
use std::sync::atomic::{AtomicBool, Ordering};

/// Derives with objects visited, and created effects stored, in an order given by `seed` (for the
/// property test that only timestamps, dependency and the rules decide, never storage order).
/// It shares neither scans nor counts between effects, so it also checks that sharing them
/// changes nothing.
#[doc(hidden)]
pub fn derive_permuted(state: &GameState, seed: u64) -> Derived {
    let mut rng = seed | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut st = state.clone();
    for i in (1..st.effects.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        st.effects.swap(i, j);
    }
    let mut ranks: Vec<u32> = (0..st.objects.len() as u32).collect();
    for i in (1..ranks.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        ranks.swap(i, j);
    }
    derive_inner(&st, st.ruleset.layers.len(), false, Some(ranks))
}

/// Applies the first `upto` layers (for profiling one layer against the ones before it).
#[doc(hidden)]
pub fn derive_upto(state: &GameState, upto: usize) -> Derived {
    derive_layers(state, upto, false)
}

/// When on, every recomputation is compared with a full derivation, and a difference panics.
static VERIFY: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// How this thread's recomputations went: replayed to the end, derived in full from a later
    /// layer, derived in full from the first (for tests that check the replay is exercised). One
    /// count per thread: a count written by games on several threads at once (the benchmark's,
    /// built with these hooks) would pass its cache line between the cores.
    static OUTCOMES: std::cell::Cell<[usize; 3]> = const { std::cell::Cell::new([0; 3]) };
}

/// How many of this thread's recomputations so far were replayed to the end, derived in full
/// from a later layer, and derived in full from the first.
#[doc(hidden)]
pub fn recomputation_outcomes() -> [usize; 3] {
    OUTCOMES.with(|o| o.get())
}

/// Compares every later recomputation with a full derivation (for tests).
#[doc(hidden)]
pub fn verify_recomputation(on: bool) {
    VERIFY.store(on, Ordering::Relaxed);
}

/// Notes how a recomputation went (`OUTCOMES`' index) and, while `verify_recomputation` is on,
/// compares it with a full derivation.
pub(super) fn recomputed(state: &GameState, d: &Derived, outcome: usize) {
    OUTCOMES.with(|o| {
        let mut n = o.get();
        n[outcome] += 1;
        o.set(n);
    });
    if VERIFY.load(Ordering::Relaxed) {
        compare_with_full(state, d);
    }
}

/// Panics where a recomputation differs from a full derivation, naming each value that differs.
fn compare_with_full(state: &GameState, d: &Derived) {
    let full = derive(state, false);
    if full.sheet.objects == d.sheet.objects && full.sheet.players == d.sheet.players {
        return;
    }
    let rs = &state.ruleset;
    let mut diff = Vec::new();
    for o in 0..full.sheet.objects.len() {
        let (a, b) = (&full.sheet.objects[o], &d.sheet.objects[o]);
        for c in 0..a.len() {
            if a[c] != b[c] {
                diff.push(format!(
                    "{} {}: {} in full, {} recomputed",
                    state.objects[o].name, rs.characteristics[c].name, a[c], b[c]
                ));
            }
        }
    }
    if full.sheet.players != d.sheet.players {
        diff.push("player properties differ".into());
    }
    panic!(
        "a recomputation differs from a full derivation (reused {} layers, replayed {}):\n{}",
        d.reused_layers,
        d.replayed_layers,
        diff.join("\n")
    );
}
