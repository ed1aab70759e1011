//! Engine behaviour through the public API: decisions, refused actions, determinism, and the two
//! rule versions' different order of counters (the 2017 CR's layer 7d; CR 613.4c's 7c).

use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::model::decision::{Choice, DecisionRequest};
use rulecraft_core::model::error::ActionError;
use rulecraft_core::{GameState, ObjectId, PlayerId};
use rulecraft_lang::loader::Loader;
use rulecraft_lang::scenario::run;
use std::path::Path;

fn game(ruleset: &str) -> GameState {
    let rpath = format!("rulesets/{ruleset}.rules");
    Loader::new()
        .game(
            Path::new(&rpath),
            &[Path::new("content/mtg")],
            &["Alice", "Bob"],
        )
        .expect("ruleset and content load")
}

fn new(s: &GameState, name: &str, owner: u8, zone: &str) -> NewObject {
    NewObject {
        class: s.content().class_id(name).expect("class"),
        name: None,
        owner: PlayerId(owner),
        controller: None,
        zone: s.ruleset().zone_id(zone).expect("zone"),
        choices: vec![],
        copy_of: None,
        face_down: false,
        attached_to: None,
    }
}

/// Puts one object into a zone and returns it.
fn enter(s: &mut GameState, name: &str, owner: u8, zone: &str) -> ObjectId {
    let n = new(s, name, owner, zone);
    s.apply(Action::Create(vec![n])).unwrap().created[0]
}

/// CR 613.7: objects that would receive a timestamp simultaneously are ordered by the active
/// player; the engine asks, and the answer decides which effect applies last.
#[test]
fn simultaneous_entry_asks_the_active_player_to_order_timestamps() {
    let mut s = game("mtg-2020")
        .with_first_player(PlayerId(1))
        .expect("a new game");
    let bears = enter(&mut s, "Grizzly Bears", 0, "battlefield");
    let both = vec![
        new(&s, "Spellbook", 0, "battlefield"),
        new(&s, "Null Profusion", 0, "battlefield"),
    ];
    let out = s.apply(Action::Create(both)).unwrap();
    let (book, profusion) = (out.created[0], out.created[1]);
    match s.pending_decision() {
        Some(DecisionRequest::OrderTimestamps { player, objects }) => {
            assert_eq!(*player, PlayerId(1), "the active player decides");
            assert_eq!(objects.len(), 2);
        }
        other => panic!("expected a request to order timestamps, got {other:?}"),
    }
    // Nothing else may happen while the decision is pending.
    assert_eq!(
        s.apply(Action::EndTurn).unwrap_err(),
        ActionError::DecisionPending
    );
    // An answer that does not list each object once is refused and changes nothing.
    assert!(matches!(
        s.decide(Choice::Order(vec![book])),
        Err(ActionError::BadChoice(_))
    ));
    assert!(s.pending_decision().is_some());
    s.decide(Choice::Order(vec![profusion, book])).unwrap();
    assert!(s.pending_decision().is_none());
    let hand = s.ruleset().prop_id("max_hand_size").unwrap();
    // Spellbook got the later timestamp: no maximum hand size.
    assert_eq!(s.property(PlayerId(0), hand).unwrap().number(), None);
    assert!(s.object(bears).unwrap().timestamp < s.object(profusion).unwrap().timestamp);
    assert!(s.object(profusion).unwrap().timestamp < s.object(book).unwrap().timestamp);
}

/// An illegal target is refused and leaves the state exactly as it was.
#[test]
fn refused_action_changes_nothing() {
    let mut s = game("mtg-2020");
    let anthem = enter(&mut s, "Glorious Anthem", 0, "battlefield");
    let spell = enter(&mut s, "Humble", 1, "graveyard");
    let before = format!("{:?}", s.objects().collect::<Vec<_>>());
    let effects_before = s.effects().count();
    let err = s
        .apply(Action::Resolve {
            spell,
            controller: PlayerId(1),
            targets: vec![anthem],
            choices: vec![],
        })
        .unwrap_err();
    assert!(matches!(err, ActionError::IllegalTarget { .. }), "{err:?}");
    assert_eq!(format!("{:?}", s.objects().collect::<Vec<_>>()), before);
    assert_eq!(s.effects().count(), effects_before);
    let err = s
        .apply(Action::Resolve {
            spell,
            controller: PlayerId(1),
            targets: vec![],
            choices: vec![],
        })
        .unwrap_err();
    assert!(
        matches!(
            err,
            ActionError::WrongTargetCount {
                expected: 1,
                got: 0,
                ..
            }
        ),
        "{err:?}"
    );
}

/// CR 613.7e: an Aura gets a new timestamp when it becomes attached, none when "attached" to what
/// it is already attached to.
#[test]
fn reattaching_to_the_same_object_keeps_the_timestamp() {
    let mut s = game("mtg-2020");
    let a = enter(&mut s, "Grizzly Bears", 0, "battlefield");
    let b = enter(&mut s, "Walking Corpse", 0, "battlefield");
    // An Aura enters attached (an unattached one goes to the graveyard, CR 704.5m).
    let mut n = new(&s, "Control Magic", 1, "battlefield");
    n.attached_to = Some(a);
    let aura = s.apply(Action::Create(vec![n])).unwrap().created[0];
    let t1 = s.object(aura).unwrap().timestamp;
    s.apply(Action::Attach {
        object: aura,
        to: a,
    })
    .unwrap();
    assert_eq!(s.object(aura).unwrap().timestamp, t1);
    s.apply(Action::Attach {
        object: aura,
        to: b,
    })
    .unwrap();
    assert!(s.object(aura).unwrap().timestamp > t1);
    let ctl = s.ruleset().char_id("controller").unwrap();
    assert_eq!(
        s.characteristic(b, ctl).unwrap(),
        &rulecraft_core::Value::Player(Some(PlayerId(1)))
    );
    assert_eq!(
        s.characteristic(a, ctl).unwrap(),
        &rulecraft_core::Value::Player(Some(PlayerId(0)))
    );
}

/// The same scenario run twice gives byte-for-byte the same derived values and explanations.
#[test]
fn runs_are_deterministic() {
    let path = Path::new("scenarios/layers/2-birds-of-paradise-control.scenario");
    let render = || {
        let mut loader = Loader::new();
        let (env, sc) = loader.scenarios(path).unwrap().remove(0);
        let r = run(&env, &sc, None);
        format!("{:?}", r.state.explain())
    };
    assert_eq!(render(), render());
}

/// The 2017 CR puts counters in their own sublayer 7d after the modifying effects of 7c; CR 613.4c
/// (2020) puts them in 7c in timestamp order. Same board, same result, different order of steps.
#[test]
fn counters_apply_where_each_rule_version_puts_them() {
    let mut order = Vec::new();
    for year in ["2017", "2020"] {
        let path = format!("scenarios/layers/7-switch-and-counters-{year}.scenario");
        let mut loader = Loader::new();
        let (env, sc) = loader.scenarios(Path::new(&path)).unwrap().remove(0);
        // After the set-up, the first expectation, the switch, its expectation and Giant Growth.
        let r = run(&env, &sc, Some(5));
        assert!(r.failures.is_empty());
        let d = r.state.explain();
        let power = r.state.ruleset().char_id("power").unwrap();
        let o = r.state.find("Aquamoeba").unwrap();
        assert_eq!(d.sheet.objects[o.index()][power.index()].number(), Some(7));
        let steps: Vec<(String, String)> = d.explanation.unwrap().objects[o.index()][power.index()]
            .iter()
            .map(|s| (s.layer.clone(), s.source.clone()))
            .collect();
        order.push(steps);
    }
    let s = |l: &str, src: &str| (l.to_string(), src.to_string());
    assert_eq!(
        order[0],
        vec![
            s("7c", "Giant Growth"),
            s("7d", "Aquamoeba"),
            s("7e", "Aquamoeba switch ability")
        ]
    );
    assert_eq!(
        order[1],
        vec![
            s("7c", "Aquamoeba"),
            s("7c", "Giant Growth"),
            s("7d", "Aquamoeba switch ability")
        ]
    );
}

/// A cloned state is independent: changing the clone leaves the original as it was.
#[test]
fn clones_are_independent() {
    let mut s = game("mtg-2020");
    let a = enter(&mut s, "Grizzly Bears", 0, "battlefield");
    let power = s.ruleset().char_id("power").unwrap();
    let mut t = s.clone();
    let anthem = new(&t, "Glorious Anthem", 0, "battlefield");
    t.apply(Action::Create(vec![anthem])).unwrap();
    assert_eq!(t.characteristic(a, power).unwrap().number(), Some(3));
    assert_eq!(s.characteristic(a, power).unwrap().number(), Some(2));
}

/// Arithmetic past the largest number gives no value rather than a panic or a wrapped number.
#[test]
fn overflow_has_no_value() {
    let mut loader = Loader::new();
    let mut checked = 0;
    for (env, sc) in loader
        .scenarios(Path::new("tests/data/overflow.scenario"))
        .unwrap()
    {
        let r = run(&env, &sc, None);
        assert!(r.failures.is_empty(), "{:?}", r.failures);
        checked += r.checked;
    }
    assert_eq!(checked, 6);
}

/// An explanation names why an effect waited (docs/language.md, §4.5): the Ingester's +X/+Y waits
/// for Skullbriar's counters because they change what it does, and Bashful's Confiscate waits for
/// Doc's for the same reason.
#[test]
fn explanations_say_why_an_effect_waited() {
    use rulecraft_core::model::explain::Reason;
    let cases = [
        (
            "scenarios/layers/7c-skullbriar-phyrexian-ingester.scenario",
            "Phyrexian Ingester",
            "power",
            "Skullbriar, the Walking Grave's 2 +1/+1 counters",
            None,
        ),
        (
            "scenarios/layers/2-confiscate-on-confiscate.scenario",
            "Birds of Paradise",
            "controller",
            "Confiscate",
            // The set-up, Bashful's Confiscate, its expectation, Doc's Confiscate.
            Some(4),
        ),
    ];
    for (path, object, ch, waited_for, upto) in cases {
        let mut loader = Loader::new();
        let (env, sc) = loader.scenarios(Path::new(path)).unwrap().remove(0);
        let r = run(&env, &sc, upto);
        let d = r.state.explain();
        let o = r.state.find(object).unwrap();
        let c = r.state.ruleset().char_id(ch).unwrap();
        let steps = &d.explanation.unwrap().objects[o.index()][c.index()];
        let why: Vec<(String, String)> = steps
            .iter()
            .filter_map(|s| match &s.reason {
                // Those that changed this value, and those that changed only others.
                Reason::Dependency { on, others, .. } => Some(
                    on.iter()
                        .chain(others)
                        .map(|d| (d.effect.clone(), d.why.clone())),
                ),
                _ => None,
            })
            .flatten()
            .collect();
        assert_eq!(
            why,
            vec![(waited_for.to_string(), "changes what it does".to_string())],
            "{path}"
        );
    }
}

/// Issue 8, item 1: a ruleset may declare counters and no layer that applies them; putting a
/// counter then changes nothing, and must not panic.
#[test]
fn counters_without_a_counter_layer_change_nothing() {
    let mut loader = rulecraft_lang::loader::Loader::new();
    let list = loader
        .scenarios(std::path::Path::new("tests/data/no-counter-layer.scenario"))
        .expect("the scenarios load");
    assert_eq!(list.len(), 2);
    for (env, sc) in list {
        let r = rulecraft_lang::scenario::run(&env, &sc, None);
        assert!(r.passed() && r.checked > 0, "{}: {:?}", r.name, r.failures);
    }
}

/// Issue 8, item 21: in a dependency loop of three (CR 613.8b), every member's step says which loop
/// it is in, and a reason names only effects that changed the same value earlier in the layer.
#[test]
fn a_loop_is_named_and_reasons_name_only_effects_on_the_value() {
    let mut loader = Loader::new();
    let (env, sc) = loader
        .scenarios(Path::new(
            "scenarios/layers/dependency-loop-of-three.scenario",
        ))
        .unwrap()
        .remove(0);
    let r = run(&env, &sc, None);
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    let d = r.state.explain();
    let e = d.explanation.unwrap();
    let subtypes = r.state.ruleset().char_id("subtypes").unwrap();
    let why = |name: &str| -> Vec<(String, String)> {
        let o = r.state.find(name).unwrap();
        e.objects[o.index()][subtypes.index()]
            .iter()
            .map(|s| (s.source.clone(), s.reason.to_string()))
            .collect()
    };
    let the_loop = "in the dependency loop of Test Rite of Humans (timestamp 6), Test Rite of \
                    Goblins (timestamp 7), Test Rite of Zombies (timestamp 8), whose effects \
                    apply in timestamp order";
    // Walking Corpse: each of the three changed it, one after another.
    let corpse = why("Walking Corpse");
    assert_eq!(corpse.len(), 4);
    assert_eq!(corpse[0].1, format!("timestamp 6: {the_loop}"));
    assert_eq!(
        corpse[1].1,
        format!("timestamp 7: {the_loop}; after Test Rite of Humans (timestamp 6)")
    );
    assert_eq!(
        corpse[2].1,
        format!("timestamp 8: {the_loop}; after Test Rite of Goblins (timestamp 7)")
    );
    // Raging Goblin: only Rite of Zombies of the loop changed it, so it names no other.
    let goblin = why("Raging Goblin");
    assert_eq!(goblin[0].0, "Test Rite of Zombies");
    assert_eq!(goblin[0].1, format!("timestamp 8: {the_loop}"));
    assert_eq!(
        goblin[1].1,
        "timestamp 5, but after Test Rite of Zombies (timestamp 8; dependency: it changes what \
         it applies to)"
    );
    // Grizzly Bears: none of them changed its subtypes.
    assert!(why("Grizzly Bears").is_empty());
}

/// Issue 8, item 21: an effect that waited for one that changed only another object's values says
/// so, without putting itself "after" it on this value (Phyrexian Ingester waits for the counters
/// on the exiled Skullbriar, CR 613.8a).
#[test]
fn a_dependency_on_another_objects_change_is_not_named_as_before_this_value() {
    let mut loader = Loader::new();
    let (env, sc) = loader
        .scenarios(Path::new(
            "scenarios/layers/7c-skullbriar-phyrexian-ingester.scenario",
        ))
        .unwrap()
        .remove(0);
    let r = run(&env, &sc, None);
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    let e = r.state.explain().explanation.unwrap();
    let power = r.state.ruleset().char_id("power").unwrap();
    let o = r.state.find("Phyrexian Ingester").unwrap();
    let steps = &e.objects[o.index()][power.index()];
    assert_eq!(steps.len(), 1);
    assert_eq!(
        steps[0].reason.to_string(),
        "timestamp 2: it waited for Skullbriar, the Walking Grave's 2 +1/+1 counters (timestamp \
         4; dependency: it changes what it does), which did not change this value"
    );
}

/// The first player is chosen before anything happens, and only then.
#[test]
fn the_first_player_is_chosen_before_the_game_begins() {
    let s = game("mtg-2020");
    assert!(s.clone().with_first_player(PlayerId(7)).is_err());
    let mut s = s.with_first_player(PlayerId(1)).expect("a new game");
    assert_eq!(s.active(), PlayerId(1));
    enter(&mut s, "Grizzly Bears", 0, "battlefield");
    assert!(s.with_first_player(PlayerId(0)).is_err());
}

/// Readers given an id that names nothing in the game return an error.
#[test]
fn readers_refuse_bad_ids() {
    let s = game("mtg-2020");
    assert!(s.object(ObjectId(99)).is_err());
    let power = s.ruleset().char_id("power").expect("power");
    assert!(s.characteristic(ObjectId(99), power).is_err());
    let life = s.ruleset().prop_id("life").expect("life");
    assert!(s.property(PlayerId(9), life).is_err());
    assert_eq!(s.player_name(PlayerId(9)), "?");
}
