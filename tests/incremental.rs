//! Issue 3, recomputation after one change: a derivation starts at the first layer the change can
//! reach and reuses the layers before it; its result is what deriving every layer gives.

use rulecraft_core::layers::derive;
use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::model::value::{Ability, Value};
use rulecraft_core::{GameState, PlayerId, Symbol};
use rulecraft_lang::loader::Loader;
use std::path::Path;

fn game(cards: &[&str]) -> GameState {
    Loader::new()
        .game(
            Path::new("rulesets/mtg-2020.rules"),
            &cards.iter().map(Path::new).collect::<Vec<_>>(),
            &["A", "B"],
        )
        .expect("ruleset and content load")
}

fn enter(s: &mut GameState, name: &str) -> rulecraft_core::ObjectId {
    let class = s.content().class_id(name).expect(name);
    let bf = s.ruleset().zone_id("battlefield").unwrap();
    s.apply(Action::Create(vec![NewObject::new(class, PlayerId(0), bf)]))
        .expect("enters")
        .created[0]
}

fn layer_index(s: &GameState, label: &str) -> usize {
    s.ruleset()
        .layers
        .iter()
        .position(|l| l.label == label)
        .expect(label)
}

/// Applies `action`, then checks that the recomputation equals a full derivation.
fn apply_checked(s: &mut GameState, action: Action) {
    s.apply(action).expect("applies");
    assert_eq!(
        format!("{:?}", s.derived().sheet),
        format!("{:?}", derive(s, false).sheet)
    );
}

/// A found case: Humility, "Test Kinship Banner" ("each creature gets +X/+0, where X is the total
/// toughness of other creatures that share a creature type with it") and Seven Dwarves; a +1/+1
/// counter on Skeletal Changeling (every creature type) comes later in layer 7c than the Banner,
/// which must wait for it (CR 613.8a): the Dwarves' X counts the counter.
#[test]
fn a_counter_read_by_an_amount_that_differs_by_subject() {
    let mut s = game(&["content/mtg", "tests/data/forms.cards"]);
    let dwarves = enter(&mut s, "Seven Dwarves");
    enter(&mut s, "Opalescence");
    let changeling = enter(&mut s, "Skeletal Changeling");
    enter(&mut s, "Humility");
    enter(&mut s, "Test Kinship Banner");
    let power = s.ruleset().char_id("power").unwrap();
    // Humility: every creature 1/1; the Banner: +1 for the changeling's toughness.
    assert_eq!(s.characteristic(dwarves, power).unwrap().number(), Some(2));
    let plus = s.ruleset().counter_id("+1/+1").unwrap();
    apply_checked(
        &mut s,
        Action::AddCounters {
            object: changeling,
            counter: plus,
            count: 1,
        },
    );
    assert_eq!(s.characteristic(dwarves, power).unwrap().number(), Some(3));
}

/// A found case: a Clone copying Volrath's Shapeshifter has the full text of the top card of the
/// graveyard (Zodiac Horse, 3/3) in layer 3; that card's +1/+1 counter applies in layer 7c, after,
/// so the Clone is 3/3 before its own counter and 4/4 after (CR 613.1c, 613.4c).
#[test]
fn text_taken_from_another_object_is_its_value_in_that_layer() {
    let mut s = game(&["content/mtg"]);
    let bf = s.ruleset().zone_id("battlefield").unwrap();
    let gy = s.ruleset().zone_id("graveyard").unwrap();
    let class = |s: &GameState, n: &str| s.content().class_id(n).expect(n);
    let shifter = enter(&mut s, "Volrath's Shapeshifter");
    let horse = s
        .apply(Action::Create(vec![NewObject::new(
            class(&s, "Zodiac Horse"),
            PlayerId(0),
            gy,
        )]))
        .unwrap()
        .created[0];
    let mut copy = NewObject::new(class(&s, "Clone"), PlayerId(0), bf);
    copy.copy_of = Some(shifter);
    let clone = s.apply(Action::Create(vec![copy])).unwrap().created[0];
    let power = s.ruleset().char_id("power").unwrap();
    assert_eq!(s.characteristic(clone, power).unwrap().number(), Some(3));
    let plus = s.ruleset().counter_id("+1/+1").unwrap();
    for object in [horse, clone] {
        apply_checked(
            &mut s,
            Action::AddCounters {
                object,
                counter: plus,
                count: 1,
            },
        );
    }
    assert_eq!(s.characteristic(clone, power).unwrap().number(), Some(4));
}

/// Counters are applied in 7c (2020 rules): with no effect reading counters, a new counter
/// reuses every layer before 7c, and the result equals a full derivation.
#[test]
fn a_counter_reuses_the_layers_before_the_counter_layer() {
    let mut s = game(&["tests/data/incremental.cards"]);
    let bear = enter(&mut s, "Plain Bear");
    enter(&mut s, "Bear Anthem");
    let power = s.ruleset().char_id("power").unwrap();
    assert_eq!(s.characteristic(bear, power).unwrap().number(), Some(3));
    let plus = s.ruleset().counter_id("+1/+1").unwrap();
    s.apply(Action::AddCounters {
        object: bear,
        counter: plus,
        count: 2,
    })
    .unwrap();
    assert_eq!(s.derived().reused_layers, layer_index(&s, "7c"));
    assert_eq!(s.characteristic(bear, power).unwrap().number(), Some(5));
    assert_eq!(
        format!("{:?}", s.derived().sheet),
        format!("{:?}", derive(&s, false).sheet)
    );
}

/// An effect in layer 6 whose "as long as" counts counters: a new counter reaches layer 6, so the
/// derivation starts there and the creature gains flying.
#[test]
fn a_counter_reaches_an_earlier_layer_that_counts_counters() {
    let mut s = game(&["tests/data/incremental.cards"]);
    let reader = enter(&mut s, "Counter Reader");
    let abilities = s.ruleset().char_id("abilities").unwrap();
    let flying = Ability::Keyword(Symbol::new("flying"));
    let has_flying = |s: &GameState| match s.characteristic(reader, abilities).unwrap() {
        Value::Abilities(l) => l.contains(&flying),
        _ => false,
    };
    assert!(!has_flying(&s));
    let plus = s.ruleset().counter_id("+1/+1").unwrap();
    s.apply(Action::AddCounters {
        object: reader,
        counter: plus,
        count: 1,
    })
    .unwrap();
    assert_eq!(s.derived().reused_layers, layer_index(&s, "6"));
    assert!(
        has_flying(&s),
        "{}",
        s.characteristic(reader, abilities).unwrap()
    );
    s.apply(Action::AddCounters {
        object: reader,
        counter: plus,
        count: -1,
    })
    .unwrap();
    assert!(!has_flying(&s));
    assert_eq!(
        format!("{:?}", s.derived().sheet),
        format!("{:?}", derive(&s, false).sheet)
    );
}

/// A keyword counter (CR 122.1b) applies in layer 6 (CR 613.1f): a new one reuses the layers
/// before 6, not those before 7c, and gives what a full derivation gives, put on or taken off.
#[test]
fn a_keyword_counter_reaches_the_layer_of_its_ability() {
    let mut s = game(&["tests/data/incremental.cards"]);
    let bear = enter(&mut s, "Plain Bear");
    enter(&mut s, "Bear Anthem");
    let abilities = s.ruleset().char_id("abilities").unwrap();
    let flying = s.ruleset().counter_id("flying").unwrap();
    let _ = s.derived();
    s.apply(Action::AddCounters {
        object: bear,
        counter: flying,
        count: 1,
    })
    .unwrap();
    assert_eq!(s.derived().reused_layers, layer_index(&s, "6"));
    assert_eq!(
        s.characteristic(bear, abilities).unwrap().to_string(),
        "flying"
    );
    assert_eq!(
        format!("{:?}", s.derived().sheet),
        format!("{:?}", derive(&s, false).sheet)
    );
    s.apply(Action::AddCounters {
        object: bear,
        counter: flying,
        count: -1,
    })
    .unwrap();
    assert_eq!(
        s.characteristic(bear, abilities).unwrap().to_string(),
        "none"
    );
    assert_eq!(
        format!("{:?}", s.derived().sheet),
        format!("{:?}", derive(&s, false).sheet)
    );
}

/// A -1/-1 counter that leaves a creature with no toughness: the state-based check, run on the
/// objects the change reached, puts it into the graveyard.
#[test]
fn a_counter_that_kills_is_seen_by_the_checks() {
    let mut s = game(&["tests/data/incremental.cards"]);
    let bear = enter(&mut s, "Plain Bear");
    enter(&mut s, "Bear Anthem");
    let minus = s.ruleset().counter_id("-1/-1").unwrap();
    s.apply(Action::AddCounters {
        object: bear,
        counter: minus,
        count: 2,
    })
    .unwrap();
    assert!(s.in_play(bear), "3/3 with two -1/-1 counters is 1/1");
    let out = s
        .apply(Action::AddCounters {
            object: bear,
            counter: minus,
            count: 1,
        })
        .unwrap();
    assert_eq!(out.state_checks.len(), 1);
    assert!(!s.in_play(bear));
}

/// A change of zone can reach every layer: nothing is reused.
#[test]
fn a_new_object_derives_every_layer() {
    let mut s = game(&["tests/data/incremental.cards"]);
    enter(&mut s, "Plain Bear");
    enter(&mut s, "Bear Anthem");
    assert_eq!(s.derived().reused_layers, 0);
}

mod boards {
    use super::*;
    use proptest::prelude::*;
    use rulecraft_core::model::decision::{Choice, DecisionRequest};

    /// A board of the benchmark's cards (benches/data/board.cards): `counts` of each kind of
    /// permanent with effects, `creatures` creatures, and the spells resolved on some of them.
    pub(super) fn board(
        counts: &[u8],
        creatures: usize,
    ) -> (GameState, Vec<rulecraft_core::ObjectId>) {
        let mut s = game(&["benches/data/board.cards"]);
        let bf = s.ruleset().zone_id("battlefield").unwrap();
        let gy = s.ruleset().zone_id("graveyard").unwrap();
        let class = |s: &GameState, n: &str| s.content().class_id(n).expect(n);
        let mut list = Vec::new();
        for i in 0..creatures {
            let name = if i % 3 == 0 {
                "Bench Goblin"
            } else {
                "Bench Creature"
            };
            list.push(NewObject::new(class(&s, name), PlayerId((i % 2) as u8), bf));
        }
        let kinds = [
            "Bench Type Setter",
            "Bench Goblin Lord",
            "Bench Loop A",
            "Bench Painter",
            "Bench Wings",
            "Bench Anthem",
            "Bench Counter",
            "Bench Shrinker",
            "Bench Control Aura",
        ];
        for (k, name) in kinds.iter().enumerate() {
            for j in 0..counts.get(k).copied().unwrap_or(0) {
                list.push(NewObject::new(
                    class(&s, name),
                    PlayerId(((k + j as usize) % 2) as u8),
                    bf,
                ));
            }
        }
        let ids = s.apply(Action::Create(list)).unwrap().created;
        if let Some(DecisionRequest::OrderTimestamps { objects, .. }) = s.pending_decision() {
            let order = objects.clone();
            s.decide(Choice::Order(order)).unwrap();
        }
        let creatures_ids: Vec<_> = ids[..creatures].to_vec();
        for (i, o) in ids[creatures..].iter().enumerate() {
            let name = s.object(*o).unwrap().name.to_string();
            if name == "Bench Shrinker" || name == "Bench Control Aura" {
                let to = creatures_ids[i * 7 % creatures];
                s.apply(Action::Attach { object: *o, to }).unwrap();
            }
        }
        for (i, name) in ["Bench Switch", "Bench Text Bend"].iter().enumerate() {
            let sp = s
                .apply(Action::Create(vec![NewObject::new(
                    class(&s, name),
                    PlayerId(0),
                    gy,
                )]))
                .unwrap()
                .created[0];
            s.apply(Action::Resolve {
                spell: sp,
                controller: PlayerId(0),
                targets: vec![creatures_ids[(i * 5 + 1) % creatures]],
                choices: vec![],
            })
            .unwrap();
        }
        // Bench Counters are creatures too: counters may go on them.
        let all = s.object_ids().filter(|o| s.in_play(*o)).collect();
        (s, all)
    }

    /// Whether no state-based check applies to any object in play.
    fn settled(s: &GameState, sheet: &rulecraft_core::model::sheet::Sheet) -> bool {
        let ctx = rulecraft_core::condition::eval::Ctx::new(s, sheet, None, None, &[]);
        s.object_ids().filter(|o| s.in_play(*o)).all(|o| {
            s.ruleset().state_checks.iter().all(|c| {
                !ctx.test(
                    &c.condition,
                    rulecraft_core::model::condition::Subject::Object(o),
                )
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 40, failure_persistence: None, ..ProptestConfig::default() })]

        /// Counters put on and taken off a board with dependent effects: every derivation that
        /// reuses the previous one (in part or in whole) equals a full derivation.
        #[test]
        fn new_counters_give_what_a_full_derivation_gives(
            counts in prop::collection::vec(0u8..3, 9),
            creatures in 4usize..16,
            puts in prop::collection::vec((any::<u16>(), -2i64..3, 0u8..3), 1..12),
        ) {
            let (mut s, objects) = board(&counts, creatures);
            // Number counters, and a keyword counter (CR 122.1b: its ability applies in layer 6).
            let kinds = ["+1/+1", "-1/-1", "flying"].map(|k| s.ruleset().counter_id(k).unwrap());
            for (pick, count, kind) in puts {
                let object = objects[pick as usize % objects.len()];
                if !s.in_play(object) {
                    continue;
                }
                let counter = kinds[kind as usize];
                if count == 0 {
                    continue;
                }
                if s.apply(Action::AddCounters { object, counter, count }).is_err() {
                    continue;
                }
                let full = derive(&s, false);
                prop_assert_eq!(format!("{:?}", s.derived().sheet), format!("{:?}", full.sheet));
                // Deriving without shared scans and counts gives the same.
                let unshared = rulecraft_core::layers::derive_permuted(&s, pick as u64);
                prop_assert_eq!(format!("{:?}", unshared.sheet), format!("{:?}", full.sheet));
                // The state-based checks, run only where the change reached, left nothing to do.
                prop_assert!(settled(&s, &full.sheet));
            }
        }
    }

    /// On a board like the benchmark's, a new counter is worked in without deriving any layer
    /// in full.
    #[test]
    fn a_new_counter_on_a_large_board_is_replayed() {
        let (mut s, objects) = board(&[1, 1, 1, 2, 2, 6, 2, 2, 1], 24);
        let plus = s.ruleset().counter_id("+1/+1").unwrap();
        let _ = s.derived();
        s.apply(Action::AddCounters {
            object: objects[4],
            counter: plus,
            count: 1,
        })
        .unwrap();
        let d = s.derived();
        assert_eq!(d.reused_layers, layer_index(&s, "7c"));
        assert_eq!(
            d.reused_layers + d.replayed_layers,
            s.ruleset().layers.len()
        );
        assert_eq!(
            format!("{:?}", d.sheet),
            format!("{:?}", derive(&s, false).sheet)
        );
    }
}

/// Any action, on boards built at random from the bundled cards: every recomputation after a
/// change (the state-based checks' rounds included) equals a full derivation. The engine compares
/// them itself while `verify_recomputation` is on and panics naming any value that differs.
mod any_change {
    use super::*;
    use proptest::prelude::*;
    use rulecraft_core::model::decision::{Choice, DecisionRequest};
    use rulecraft_core::{ClassId, ObjectId};

    fn mixed_game() -> GameState {
        Loader::new()
            .game(
                Path::new("rulesets/mtg-2020.rules"),
                &[
                    Path::new("content/mtg"),
                    Path::new("benches/data/board.cards"),
                ],
                &["A", "B"],
            )
            .expect("ruleset and content load")
    }

    /// One random action; refused ones change nothing and are skipped.
    fn act(s: &mut GameState, (kind, a, b): (u8, u16, u16)) {
        let n_classes = s.content().classes.len() as u16;
        let zones = ["battlefield", "graveyard", "exile", "hand"];
        let count = s.objects().count() as u16;
        let pick = |x: u16| ObjectId((x % count.max(1)) as u32);
        let player = PlayerId((a % 2) as u8);
        let class = ClassId((a % n_classes) as u32);
        let bf = s.ruleset().zone_id("battlefield").unwrap();
        let gy = s.ruleset().zone_id("graveyard").unwrap();
        let _ = match kind % 9 {
            0 | 1 => {
                let is_spell = s.content().class(class).unwrap().spell.is_some();
                let mut n = NewObject::new(class, player, if is_spell { gy } else { bf });
                n.choices = vec![rulecraft_core::Symbol::new("goblin")];
                if s.content().class(class).unwrap().enters_as_copy && count > 0 {
                    n.copy_of = Some(pick(b));
                }
                s.apply(Action::Create(vec![n]))
            }
            2 if count > 0 => {
                let sp = s.apply(Action::Create(vec![NewObject::new(class, player, gy)]));
                match sp {
                    Ok(o) if s.content().class(class).unwrap().spell.is_some() => {
                        s.apply(Action::Resolve {
                            spell: o.created[0],
                            controller: player,
                            targets: vec![pick(b)],
                            choices: vec![],
                        })
                    }
                    other => other.map(|_| Default::default()),
                }
            }
            3 if count > 0 => {
                let z = s.ruleset().zone_id(zones[(b % 4) as usize]).unwrap();
                s.apply(Action::Move {
                    object: pick(a),
                    zone: z,
                })
            }
            4 if count > 0 => {
                let k = s
                    .ruleset()
                    .counter_id(if b % 2 == 0 { "+1/+1" } else { "-1/-1" });
                s.apply(Action::AddCounters {
                    object: pick(a),
                    counter: k.unwrap(),
                    count: (b % 5) as i64 - 2,
                })
            }
            5 if count > 1 => s.apply(Action::Attach {
                object: pick(a),
                to: pick(b),
            }),
            6 if count > 0 => s.apply(Action::EndEffectsOf { source: pick(a) }),
            7 if b % 4 == 0 => s.apply(Action::EndTurn),
            8 if count > 0 => s.apply(if b % 2 == 0 {
                Action::TurnFaceDown { object: pick(a) }
            } else {
                Action::TurnFaceUp { object: pick(a) }
            }),
            _ => return,
        };
        if let Some(DecisionRequest::OrderTimestamps { objects, .. }) = s.pending_decision() {
            let order = objects.clone();
            s.decide(Choice::Order(order)).unwrap();
        }
    }

    /// A found case: a "+3/+3 until end of turn" effect on a creature whose own effect ("+1/+0
    /// for each other creature you control with power 4 or greater") comes earlier in layer 7c
    /// and must be checked for dependency against it (CR 613.8): the creature keeps its own
    /// effect's +3 under the new one.
    #[test]
    fn an_order_trial_keeps_the_step_it_checks() {
        let (mut s, _) = boards::board(&[1, 2, 0, 1, 0, 0, 2, 1, 0], 6);
        for step in [(117u8, 0u16, 0u16), (29, 14201, 39354)] {
            act(&mut s, step);
        }
        let full = derive(&s, false);
        let p = s.ruleset().char_id("power").unwrap();
        assert_eq!(full.sheet.objects[10][p.index()], Value::Number(Some(8)));
        assert_eq!(
            s.derived().sheet.objects[10][p.index()],
            Value::Number(Some(8))
        );
        assert!(s.derived().sheet.objects == full.sheet.objects);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn every_recomputation_equals_a_full_derivation(
            program in prop::collection::vec((any::<u8>(), any::<u16>(), any::<u16>()), 1..40),
        ) {
            rulecraft_core::layers::verify_recomputation(true);
            let mut s = mixed_game();
            for step in program {
                act(&mut s, step);
                let full = derive(&s, false);
                prop_assert_eq!(&s.derived().sheet.objects, &full.sheet.objects);
            }
            if std::env::var("RULECRAFT_OUTCOMES").is_ok() {
                eprintln!("{:?}", rulecraft_core::layers::recomputation_outcomes());
            }
        }

        /// The same on a board like the benchmark's, with dependent effects and a loop.
        #[test]
        fn every_recomputation_on_a_dependent_board_equals_a_full_derivation(
            counts in prop::collection::vec(0u8..3, 9),
            creatures in 4usize..16,
            program in prop::collection::vec((any::<u8>(), any::<u16>(), any::<u16>()), 1..24),
        ) {
            rulecraft_core::layers::verify_recomputation(true);
            let (mut s, _) = boards::board(&counts, creatures);
            for step in program {
                act(&mut s, step);
                let full = derive(&s, false);
                prop_assert_eq!(&s.derived().sheet.objects, &full.sheet.objects);
            }
        }
    }
}
