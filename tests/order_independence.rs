//! Issue 3, order-independence: shuffling the order in which created effects are stored, or in which
//! objects are visited, never changes any derived value; only timestamps, dependency and the rules
//! decide (CR 613). Boards are built at random from the bundled cards.

use proptest::prelude::*;
use rulecraft_core::layers::derive_permuted;
use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::model::condition::Subject;
use rulecraft_core::{ClassId, GameState, ObjectId, PlayerId};
use rulecraft_lang::loader::{files_with_ext, Loader};
use std::path::Path;

/// The bundled cards, and cards that use every form of condition, target and duration.
fn empty_game() -> GameState {
    Loader::new()
        .game(
            Path::new("rulesets/mtg-2020.rules"),
            &[
                Path::new("content/mtg"),
                Path::new("tests/data/forms.cards"),
            ],
            &["A", "B"],
        )
        .expect("ruleset and content load")
}

/// Plays a random program: each step enters a card, casts a spell at its targets (objects or
/// players), attaches an object, puts counters (+1/+1 or time), or ends the turn. Steps the rules
/// refuse are skipped.
fn build(program: &[(u16, u16, u8)]) -> GameState {
    build_checking(program, |_| {})
}

/// `build`, calling `check` after every step.
fn build_checking(program: &[(u16, u16, u8)], mut check: impl FnMut(&GameState)) -> GameState {
    let mut s = empty_game();
    let n_classes = s.content().classes.len() as u16;
    let bf = s.ruleset().zone_id("battlefield").unwrap();
    let gy = s.ruleset().zone_id("graveyard").unwrap();
    let plus = s.ruleset().counter_id("+1/+1").unwrap();
    let time = s.ruleset().counter_id("time").unwrap();
    // A keyword counter (CR 122.1b): it applies in layer 6, not with the number counters.
    let flying = s.ruleset().counter_id("flying").unwrap();
    for &(a, b, kind) in program {
        let class = ClassId((a % n_classes) as u32);
        let player = PlayerId(kind % 2);
        let count = s.objects().count() as u16;
        let pick = |x: u16| ObjectId((x % count.max(1)) as u32);
        let _ = match kind % 4 {
            0 | 1 => {
                let is_spell = s.content().class(class).unwrap().spell.is_some();
                let zone = if is_spell { gy } else { bf };
                let mut n = NewObject::new(class, player, zone);
                // A creature type, or a name (for "named chosen").
                let choice = if b % 2 == 0 {
                    "goblin"
                } else {
                    "Grizzly Bears"
                };
                n.choices = vec![rulecraft_core::Symbol::new(choice)];
                if s.content().class(class).unwrap().enters_as_copy && count > 0 {
                    n.copy_of = Some(pick(b));
                }
                s.apply(Action::Create(vec![n]))
            }
            2 if count > 0 => {
                let spell = s
                    .apply(Action::Create(vec![NewObject::new(class, player, gy)]))
                    .map(|o| o.created[0]);
                // One target per `target` line: a player or an object, as the bits of `b` say.
                let n = s
                    .content()
                    .class(class)
                    .unwrap()
                    .spell
                    .as_ref()
                    .map_or(0, |sp| sp.targets.len());
                let targets = (0..n)
                    .map(|i| {
                        if (b >> i) & 1 == 1 {
                            Subject::Player(PlayerId(((b >> 8) as u8).wrapping_add(i as u8) % 2))
                        } else {
                            Subject::Object(pick(b.wrapping_add(7 * i as u16)))
                        }
                    })
                    .collect();
                match spell {
                    Ok(sp) if s.content().class(class).unwrap().spell.is_some() => {
                        s.apply(Action::ResolveTargeting {
                            spell: sp,
                            controller: player,
                            targets,
                            choices: vec![],
                        })
                    }
                    other => other.map(|_| Default::default()),
                }
            }
            3 if a % 5 == 0 => s.apply(Action::EndTurn),
            3 if count > 1 => {
                if b % 2 == 0 {
                    s.apply(Action::Attach {
                        object: pick(a),
                        to: pick(b),
                    })
                } else if b % 4 == 1 {
                    s.apply(Action::AddCounters {
                        object: pick(a),
                        counter: if b % 3 == 1 { time } else { plus },
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

/// A scripted board that uses every form of condition, target and duration (tests/data/forms.cards
/// and the bundled Coat of Arms, Engineered Plague, Seven Dwarves, Rishkar, Seeds of Strength and
/// Donate): after every step, the derivation the state keeps (incremental where it can be), a full
/// one, an explained one and permuted ones agree, and each form took effect at least once.
#[test]
fn every_form_derives_alike_in_any_order() {
    let mut s = empty_game();
    let bf = s.ruleset().zone_id("battlefield").unwrap();
    let gy = s.ruleset().zone_id("graveyard").unwrap();
    let plus = s.ruleset().counter_id("+1/+1").unwrap();
    let time = s.ruleset().counter_id("time").unwrap();
    let (a, b) = (PlayerId(0), PlayerId(1));
    let check = |s: &GameState, what: &str| {
        let full = format!("{:?}", rulecraft_core::layers::derive(s, false).sheet);
        assert_eq!(format!("{:?}", s.derived().sheet), full, "{what}: kept");
        assert_eq!(
            format!("{:?}", s.explain().sheet),
            full,
            "{what}: explained"
        );
        for seed in [3u64, 99, 4242] {
            let got = format!("{:?}", derive_permuted(s, seed).sheet);
            assert_eq!(got, full, "{what}: seed {seed}");
        }
    };
    let enter = |s: &mut GameState, name: &str, owner: PlayerId, choice: &str| -> ObjectId {
        let mut n = NewObject::new(s.content().class_id(name).expect(name), owner, bf);
        n.choices = vec![rulecraft_core::Symbol::new(choice)];
        let id = s.apply(Action::Create(vec![n])).expect(name).created[0];
        check(s, name);
        id
    };
    let cast = |s: &mut GameState, name: &str, by: PlayerId, targets: Vec<Subject>| {
        let class = s.content().class_id(name).expect(name);
        let sp = s
            .apply(Action::Create(vec![NewObject::new(class, by, gy)]))
            .unwrap()
            .created[0];
        s.apply(Action::ResolveTargeting {
            spell: sp,
            controller: by,
            targets,
            choices: vec![],
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        check(s, name);
    };
    let o = Subject::Object;
    let bears = enter(&mut s, "Grizzly Bears", a, "");
    let g1 = enter(&mut s, "Raging Goblin", a, "");
    let g2 = enter(&mut s, "Raging Goblin", b, "");
    enter(&mut s, "Skeletal Changeling", b, "");
    let thopter = enter(&mut s, "Ornithopter", a, "");
    enter(&mut s, "Coat of Arms", b, "");
    enter(&mut s, "Test Kinship Banner", a, "");
    let watcher = enter(&mut s, "Test Deep Watcher", a, "goblin");
    enter(&mut s, "Test Namesake", b, "Grizzly Bears");
    enter(&mut s, "Engineered Plague", b, "bear");
    enter(&mut s, "Seven Dwarves", a, "");
    enter(&mut s, "Seven Dwarves", a, "");
    enter(&mut s, "Rishkar, Peema Renegade", a, "");
    cast(&mut s, "Test Leash", a, vec![o(g2), o(thopter)]);
    cast(&mut s, "Seeds of Strength", b, vec![o(g1), o(g1), o(bears)]);
    cast(&mut s, "Test Curse", b, vec![Subject::Player(a)]);
    cast(&mut s, "Test Copycat", a, vec![o(watcher), o(g1)]);
    cast(&mut s, "Test Frost Grip", b, vec![o(bears)]);
    cast(&mut s, "Test Ward", a, vec![o(g1)]);
    for (obj, kind) in [(bears, plus), (g1, time), (watcher, time), (bears, time)] {
        s.apply(Action::AddCounters {
            object: obj,
            counter: kind,
            count: 1,
        })
        .unwrap();
        check(&s, "a counter");
    }
    let controller = s.ruleset().char_id("controller").unwrap();
    assert_eq!(
        s.characteristic(g2, controller).unwrap(),
        &rulecraft_core::Value::Player(Some(a)),
        "the Leash holds"
    );
    cast(&mut s, "Donate", a, vec![Subject::Player(b), o(thopter)]);
    assert_eq!(
        s.characteristic(g2, controller).unwrap(),
        &rulecraft_core::Value::Player(Some(b)),
        "the Leash ended with the artifact given away"
    );
    for turn in 0..3 {
        s.apply(Action::EndTurn).unwrap();
        check(&s, &format!("end of turn {turn}"));
    }
    s.apply(Action::Move {
        object: g1,
        zone: gy,
    })
    .unwrap();
    check(&s, "a Goblin leaves");
}
