//! Issue 3, order-independence: shuffling the order in which created effects are stored, or in which
//! objects are visited, never changes any derived value; only timestamps, dependency and the rules
//! decide (seed 003). Boards are built at random from the bundled cards.

use proptest::prelude::*;
use rulecraft_core::action::{Action, NewObject};
use rulecraft_core::layers::derive_permuted;
use rulecraft_core::{ClassId, GameState, ObjectId, PlayerId};
use rulecraft_lang::loader::{files_with_ext, Loader};
use std::path::Path;

fn empty_game() -> GameState {
    Loader::new()
        .game(
            Path::new("rulesets/mtg-2020.rules"),
            &[Path::new("content/mtg")],
            &["A", "B"],
        )
        .expect("ruleset and content load")
}

/// Plays a random program: each step enters a card, casts a spell at an object, attaches an
/// object, or puts counters. Steps the rules refuse are skipped.
fn build(program: &[(u16, u16, u8)]) -> GameState {
    build_checking(program, |_| {})
}

/// `build`, calling `check` after every step.
fn build_checking(program: &[(u16, u16, u8)], mut check: impl FnMut(&GameState)) -> GameState {
    let mut s = empty_game();
    let n_classes = s.content.classes.len() as u16;
    let bf = s.ruleset.zone_id("battlefield").unwrap();
    let gy = s.ruleset.zone_id("graveyard").unwrap();
    let plus = s.ruleset.counter_id("+1/+1").unwrap();
    // A keyword counter (CR 122.1b): it applies in layer 6, not with the number counters.
    let flying = s.ruleset.counter_id("flying").unwrap();
    for &(a, b, kind) in program {
        let class = ClassId((a % n_classes) as u32);
        let player = PlayerId(kind % 2);
        let count = s.objects().count() as u16;
        let pick = |x: u16| ObjectId((x % count.max(1)) as u32);
        let _ = match kind % 4 {
            0 | 1 => {
                let is_spell = s.content.class(class).spell.is_some();
                let zone = if is_spell { gy } else { bf };
                let mut n = NewObject::new(class, player, zone);
                n.choices = vec![rulecraft_core::Symbol::new("goblin")];
                if s.content.class(class).enters_as_copy && count > 0 {
                    n.copy_of = Some(pick(b));
                }
                s.apply(Action::Create(vec![n]))
            }
            2 if count > 0 => {
                let spell = s
                    .apply(Action::Create(vec![NewObject::new(class, player, gy)]))
                    .map(|o| o.created[0]);
                match spell {
                    Ok(sp) if s.content.class(class).spell.is_some() => s.apply(Action::Resolve {
                        spell: sp,
                        controller: player,
                        targets: vec![pick(b)],
                        choices: vec![],
                    }),
                    other => other.map(|_| Default::default()),
                }
            }
            3 if count > 1 => {
                if b % 2 == 0 {
                    s.apply(Action::Attach {
                        object: pick(a),
                        to: pick(b),
                    })
                } else if b % 4 == 1 {
                    s.apply(Action::AddCounters {
                        object: pick(a),
                        counter: plus,
                        count: 1,
                    })
                } else {
                    // Put on, or (one time in three) taken off.
                    s.apply(Action::AddCounters {
                        object: pick(a),
                        counter: flying,
                        count: if b % 3 == 0 { -1 } else { 1 },
                    })
                }
            }
            _ => continue,
        };
        check(&s);
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn storage_and_visit_order_never_change_results(
        program in prop::collection::vec((any::<u16>(), any::<u16>(), any::<u8>()), 1..28),
        seeds in prop::collection::vec(any::<u64>(), 1..4),
    ) {
        let s = build(&program);
        let want = format!("{:?}", s.derived().sheet);
        // Explaining applies each change step by step; it must reach the same values.
        prop_assert_eq!(&format!("{:?}", s.explain().sheet), &want, "explained");
        for seed in seeds {
            let got = format!("{:?}", derive_permuted(&s, seed).sheet);
            prop_assert_eq!(&got, &want, "seed {}", seed);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// A derivation that starts at the first layer a change can reach (counters: the layer that
    /// applies them) gives what deriving every layer again gives, after every step.
    #[test]
    fn starting_at_a_later_layer_gives_the_full_result(
        program in prop::collection::vec((any::<u16>(), any::<u16>(), any::<u8>()), 1..28),
    ) {
        build_checking(&program, |s| {
            let full = format!("{:?}", rulecraft_core::layers::derive(s, false).sheet);
            assert_eq!(format!("{:?}", s.derived().sheet), full);
        });
    }
}

/// The bundled scenarios' final boards, each derived with several visiting orders.
#[test]
fn bundled_scenarios_do_not_depend_on_order() {
    let mut loader = Loader::new();
    for f in files_with_ext(Path::new("scenarios"), "scenario") {
        for (env, sc) in loader.scenarios(&f).expect("bundled scenarios load") {
            let r = rulecraft_lang::scenario::run(&env, &sc, None);
            let want = format!("{:?}", r.state.derived().sheet);
            let explained = format!("{:?}", r.state.explain().sheet);
            assert_eq!(
                explained,
                want,
                "{}: {} explained",
                f.display(),
                sc.header.name
            );
            for seed in [1u64, 7, 12345, 987654321] {
                let got = format!("{:?}", derive_permuted(&r.state, seed).sheet);
                assert_eq!(
                    got,
                    want,
                    "{}: {} (seed {seed})",
                    f.display(),
                    sc.header.name
                );
            }
        }
    }
}

/// The generator builds real boards: objects in play and effects applying.
#[test]
fn generated_boards_have_effects() {
    let program: Vec<(u16, u16, u8)> = (0..40u16)
        .map(|i| (i * 7 + 3, i * 13 + 1, (i % 4) as u8))
        .collect();
    let s = build(&program);
    let d = s.explain();
    let steps: usize = d
        .explanation
        .unwrap()
        .objects
        .iter()
        .flatten()
        .map(|v| v.len())
        .sum();
    assert!(s.objects().count() >= 20, "{} objects", s.objects().count());
    assert!(steps >= 10, "{steps} effect steps");
}
