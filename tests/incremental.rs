//! Issue 3, recomputation after one change: a derivation starts at the first layer the change can
//! reach and reuses the layers before it; its result is what deriving every layer gives.

use rulecraft_core::action::{Action, NewObject};
use rulecraft_core::layers::derive;
use rulecraft_core::value::{Ability, Value};
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
    let class = s.content.class_id(name).expect(name);
    let bf = s.ruleset.zone_id("battlefield").unwrap();
    s.apply(Action::Create(vec![NewObject::new(class, PlayerId(0), bf)]))
        .expect("enters")
        .created[0]
}

fn layer_index(s: &GameState, label: &str) -> usize {
    s.ruleset
        .layers
        .iter()
        .position(|l| l.label == label)
        .expect(label)
}

/// Counters are applied in 7c (2020 rules): with no effect reading counters, a new counter
/// reuses every layer before 7c, and the result equals a full derivation.
#[test]
fn a_counter_reuses_the_layers_before_the_counter_layer() {
    let mut s = game(&["tests/data/incremental.cards"]);
    let bear = enter(&mut s, "Plain Bear");
    enter(&mut s, "Bear Anthem");
    let power = s.ruleset.char_id("power").unwrap();
    assert_eq!(s.characteristic(bear, power).number(), Some(3));
    let plus = s.ruleset.counter_id("+1/+1").unwrap();
    s.apply(Action::AddCounters {
        object: bear,
        counter: plus,
        count: 2,
    })
    .unwrap();
    assert_eq!(s.derived().reused_layers, layer_index(&s, "7c"));
    assert_eq!(s.characteristic(bear, power).number(), Some(5));
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
    let abilities = s.ruleset.char_id("abilities").unwrap();
    let flying = Ability::Keyword(Symbol::new("flying"));
    let has_flying = |s: &GameState| match s.characteristic(reader, abilities) {
        Value::Abilities(l) => l.contains(&flying),
        _ => false,
    };
    assert!(!has_flying(&s));
    let plus = s.ruleset.counter_id("+1/+1").unwrap();
    s.apply(Action::AddCounters {
        object: reader,
        counter: plus,
        count: 1,
    })
    .unwrap();
    assert_eq!(s.derived().reused_layers, layer_index(&s, "6"));
    assert!(has_flying(&s), "{}", s.characteristic(reader, abilities));
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

/// A change of zone can reach every layer: nothing is reused.
#[test]
fn a_new_object_derives_every_layer() {
    let mut s = game(&["tests/data/incremental.cards"]);
    enter(&mut s, "Plain Bear");
    enter(&mut s, "Bear Anthem");
    assert_eq!(s.derived().reused_layers, 0);
}
