//! Bad ids given to the embedder's readers and actions: each is an error that names what was
//! wrong (a bad zone is `NoSuchZone`, not `NoSuchObject`), never a panic, and a refused action
//! changes nothing (the state saves to the same bytes before and after).

use rulecraft_core::explain::describe::{describe_char, describe_object, describe_player};
use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::model::ids::{CounterId, LayerId};
use rulecraft_core::{
    ActionError, Arg, CharId, ClassId, EventId, GameState, ObjectId, Occurrence, PlayerId, PropId,
    ZoneId,
};
mod common;

/// Two players, a Grizzly Bears on the battlefield and a Gorgon Flail in the graveyard.
fn game() -> (GameState, ObjectId, ObjectId) {
    let mut s = common::mtg_game(&["A", "B"]);
    let rs = s.ruleset().clone();
    let bf = rs.zone_id("battlefield").expect("battlefield");
    let gy = rs.zone_id("graveyard").expect("graveyard");
    let mut enter = |name: &str, zone: ZoneId| {
        let class = s.content().class_id(name).expect("class");
        s.apply(Action::Create(vec![NewObject::new(
            class,
            PlayerId(0),
            zone,
        )]))
        .expect("enters")
        .created[0]
    };
    let bears = enter("Grizzly Bears", bf);
    let flail = enter("Gorgon Flail", gy);
    (s, bears, flail)
}

/// Applies an action that must be refused with `want`, and checks nothing changed.
fn refused(s: &mut GameState, a: Action, want: ActionError) {
    let before = s.save();
    assert_eq!(s.apply(a).err(), Some(want));
    assert_eq!(s.save(), before, "a refused action changed the state");
}

#[test]
fn readers_give_errors_for_bad_ids() {
    let (s, bears, _) = game();
    let nobody = ObjectId(9_999);
    let power = s.ruleset().char_id("power").expect("power");
    assert_eq!(
        s.object(nobody).err(),
        Some(ActionError::NoSuchObject(9_999))
    );
    assert_eq!(
        s.characteristic(nobody, power).err(),
        Some(ActionError::NoSuchObject(9_999))
    );
    assert_eq!(
        s.characteristic(bears, CharId(999)).err(),
        Some(ActionError::NoSuchCharacteristic(999))
    );
    assert_eq!(
        s.property(PlayerId(7), PropId(0)).err(),
        Some(ActionError::NoSuchPlayer(7))
    );
    assert_eq!(
        s.property(PlayerId(0), PropId(999)).err(),
        Some(ActionError::NoSuchProperty(999))
    );
    let d = s.explain();
    assert!(describe_char(&s, &d, nobody, power).is_err());
    assert!(describe_char(&s, &d, bears, CharId(999)).is_err());
    assert!(describe_object(&s, &d, nobody).is_err());
    assert!(describe_player(&s, &d, PlayerId(7)).is_err());
    assert!(!s.could_attach(nobody, bears));
    assert!(!s.in_play(nobody));
    assert_eq!(s.player_name(PlayerId(7)), "?");
}

/// The definition tables of a ruleset and its content answer a bad id with an error naming the
/// table, and a good id with its entry.
#[test]
fn definition_tables_give_errors_for_bad_ids() {
    let (s, _, _) = game();
    let rs = s.ruleset();
    let power = rs.char_id("power").expect("power");
    assert_eq!(
        rs.char(power).map(|c| c.name.to_string()),
        Ok("power".into())
    );
    assert_eq!(
        rs.char(CharId(999)).err(),
        Some(ActionError::NoSuchCharacteristic(999))
    );
    let bf = rs.zone_id("battlefield").expect("battlefield");
    assert!(rs.zone(bf).is_ok_and(|z| z.in_play));
    assert_eq!(
        rs.zone(ZoneId(999)).err(),
        Some(ActionError::NoSuchZone(999))
    );
    let enters = rs.event_id("enters").expect("enters");
    assert!(rs.event(enters).is_ok_and(|e| &*e.name == "enters"));
    assert_eq!(
        rs.event(EventId(999)).err(),
        Some(ActionError::NoSuchEvent(999))
    );
    assert!(rs.layer(LayerId(0)).is_ok());
    assert_eq!(
        rs.layer(LayerId(999)).err(),
        Some(ActionError::NoSuchLayer(999))
    );
    let bears = s.content().class_id("Grizzly Bears").expect("class");
    assert!(s
        .content()
        .class(bears)
        .is_ok_and(|c| c.name == "Grizzly Bears"));
    assert_eq!(
        s.content().class(ClassId(99_999)).err(),
        Some(ActionError::NoSuchClass(99_999))
    );
}

#[test]
fn actions_name_the_bad_id_and_change_nothing() {
    let (mut s, bears, flail) = game();
    let bf = s.ruleset().zone_id("battlefield").expect("battlefield");
    let class = s.content().class_id("Grizzly Bears").expect("class");
    refused(
        &mut s,
        Action::Move {
            object: bears,
            zone: ZoneId(99),
        },
        ActionError::NoSuchZone(99),
    );
    refused(
        &mut s,
        Action::Move {
            object: ObjectId(9_999),
            zone: bf,
        },
        ActionError::NoSuchObject(9_999),
    );
    refused(
        &mut s,
        Action::Create(vec![NewObject::new(ClassId(9_999), PlayerId(0), bf)]),
        ActionError::NoSuchClass(9_999),
    );
    refused(
        &mut s,
        Action::Create(vec![NewObject::new(class, PlayerId(0), ZoneId(99))]),
        ActionError::NoSuchZone(99),
    );
    refused(
        &mut s,
        Action::Create(vec![NewObject::new(class, PlayerId(9), bf)]),
        ActionError::NoSuchPlayer(9),
    );
    refused(
        &mut s,
        Action::AddCounters {
            object: bears,
            counter: CounterId(999),
            count: 1,
        },
        ActionError::NoSuchCounter(999),
    );
    // CR 701.3a: a card in a graveyard is attached to nothing.
    refused(
        &mut s,
        Action::Attach {
            object: flail,
            to: bears,
        },
        ActionError::NotInPlay("Gorgon Flail".into()),
    );
}

#[test]
fn built_in_events_cannot_be_made_to_occur_directly_or_with_bad_arguments() {
    let (mut s, bears, _) = game();
    let before = s.save();
    let b = s.ruleset().event_id("changes_zone").expect("changes_zone");
    let bf = s.ruleset().zone_id("battlefield").expect("battlefield");
    let occ = Occurrence::new(
        b,
        vec![Arg::Object(bears), Arg::Zone(bf), Arg::Zone(ZoneId(99))],
    );
    assert!(matches!(s.occur(occ), Err(ActionError::BadOccurrence(_))));
    assert_eq!(s.save(), before);
}
