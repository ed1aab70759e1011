//! Issue 8, item 10: spells with several targets, each with its own condition, and players as
//! targets. An illegal target or a wrong number of targets is an error that changes nothing.

use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::model::condition::Subject;
use rulecraft_core::model::error::ActionError;
use rulecraft_core::{GameState, ObjectId, PlayerId};
mod common;

const ALICE: PlayerId = PlayerId(0);
const BOB: PlayerId = PlayerId(1);

fn game() -> GameState {
    common::mtg_game(&["Alice", "Bob"])
}

fn enter(s: &mut GameState, name: &str, owner: PlayerId, zone: &str) -> ObjectId {
    let class = s.content().class_id(name).expect(name);
    let zone = s.ruleset().zone_id(zone).expect(zone);
    s.apply(Action::Create(vec![NewObject::new(class, owner, zone)]))
        .expect("enters")
        .created[0]
}

/// Everything a refused action must leave as it was.
fn snapshot(s: &GameState) -> String {
    let objects: Vec<String> = s
        .objects()
        .map(|o| format!("{:?} {:?} {:?}", o.zone, o.timestamp, o.choices))
        .collect();
    format!(
        "{:?}\n{objects:?}\n{}",
        s.derived().sheet,
        s.effects().count()
    )
}

fn resolve(
    s: &mut GameState,
    spell: &str,
    by: PlayerId,
    targets: Vec<Subject>,
) -> Result<(), ActionError> {
    let spell = enter(s, spell, by, "graveyard");
    s.apply(Action::ResolveTargeting {
        spell,
        controller: by,
        targets,
        choices: vec![],
    })
    .map(|_| ())
}

#[test]
fn each_target_is_tested_against_its_own_condition() {
    let mut s = game();
    let controller = s.ruleset().char_id("controller").unwrap();
    let bears = enter(&mut s, "Grizzly Bears", ALICE, "battlefield");
    let bobs = enter(&mut s, "Walking Corpse", BOB, "battlefield");
    // Donate's second target must be a permanent its caster controls.
    let spell = enter(&mut s, "Donate", ALICE, "graveyard");
    let before = snapshot(&s);
    let err = s
        .apply(Action::ResolveTargeting {
            spell,
            controller: ALICE,
            targets: vec![Subject::Player(BOB), Subject::Object(bobs)],
            choices: vec![],
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`Walking Corpse` is not a legal target for `Donate`"
    );
    assert_eq!(snapshot(&s), before, "a refused spell changes nothing");
    // Its first target must be a player: an object there is illegal, and so is a player second.
    let err = s
        .apply(Action::ResolveTargeting {
            spell,
            controller: ALICE,
            targets: vec![Subject::Object(bears), Subject::Object(bears)],
            choices: vec![],
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`Grizzly Bears` is not a legal target for `Donate`"
    );
    let err = s
        .apply(Action::ResolveTargeting {
            spell,
            controller: ALICE,
            targets: vec![Subject::Player(BOB), Subject::Player(ALICE)],
            choices: vec![],
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`Alice` is not a legal target for `Donate`"
    );
    assert_eq!(snapshot(&s), before);
    // The legal pair: Bob gains control of Alice's Bears.
    s.apply(Action::ResolveTargeting {
        spell,
        controller: ALICE,
        targets: vec![Subject::Player(BOB), Subject::Object(bears)],
        choices: vec![],
    })
    .unwrap();
    assert_eq!(
        s.characteristic(bears, controller).unwrap(),
        &rulecraft_core::Value::Player(Some(BOB))
    );
}

#[test]
fn a_spell_takes_exactly_as_many_targets_as_it_names() {
    let mut s = game();
    let bears = enter(&mut s, "Grizzly Bears", ALICE, "battlefield");
    let donate = enter(&mut s, "Donate", ALICE, "graveyard");
    let growth = enter(&mut s, "Giant Growth", ALICE, "graveyard");
    let before = snapshot(&s);
    let cast = |s: &mut GameState, spell, targets: Vec<ObjectId>| {
        s.apply(Action::ResolveTargeting {
            spell,
            controller: ALICE,
            targets: targets.into_iter().map(Subject::Object).collect(),
            choices: vec![],
        })
    };
    let err = cast(&mut s, donate, vec![bears]).unwrap_err();
    assert_eq!(
        err,
        ActionError::WrongTargetCount {
            spell: "Donate".into(),
            expected: 2,
            got: 1
        }
    );
    let err = cast(&mut s, growth, vec![bears, bears]).unwrap_err();
    assert_eq!(err.to_string(), "`Giant Growth` takes 1 target(s), got 2");
    assert_eq!(snapshot(&s), before, "a refused spell changes nothing");
}

#[test]
fn a_player_is_no_legal_target_for_a_creature_spell() {
    let mut s = game();
    enter(&mut s, "Grizzly Bears", ALICE, "battlefield");
    let err = resolve(&mut s, "Giant Growth", ALICE, vec![Subject::Player(BOB)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`Bob` is not a legal target for `Giant Growth`"
    );
}

/// The same creature may be chosen for each instance of "target" (CR 115.3); each effect affects
/// the target it names.
#[test]
fn the_same_creature_may_be_each_of_several_targets() {
    let mut s = game();
    let power = s.ruleset().char_id("power").unwrap();
    let bears = enter(&mut s, "Grizzly Bears", ALICE, "battlefield");
    let elves = enter(&mut s, "Llanowar Elves", ALICE, "battlefield");
    let t = |o| Subject::Object(o);
    resolve(
        &mut s,
        "Seeds of Strength",
        ALICE,
        vec![t(bears), t(elves), t(bears)],
    )
    .unwrap();
    assert_eq!(s.characteristic(bears, power).unwrap().number(), Some(4));
    assert_eq!(s.characteristic(elves, power).unwrap().number(), Some(2));
}
