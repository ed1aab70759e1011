//! The event core through the public API: decisions are requests with their legal options, an
//! illegal answer changes nothing, a state copied at a decision can be answered each way, and the
//! same answers give the same log.

use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::model::decision::{Choice, DecisionRequest};
use rulecraft_core::{Arg, GameState, ObjectId, Occurrence, PlayerId};
use rulecraft_lang::loader::Loader;
use std::path::Path;

mod common;

fn game(players: &[&str]) -> GameState {
    common::game("rulesets/honor.rules", &["content/honor"], players)
}

fn enter(s: &mut GameState, name: &str, owner: u8) -> ObjectId {
    let n = NewObject::new(
        s.content().class_id(name).expect("class"),
        PlayerId(owner),
        s.ruleset().zone_id("play").expect("zone"),
    );
    s.apply(Action::Create(vec![n])).expect("enters").created[0]
}

fn occ(s: &GameState, event: &str, args: Vec<Arg>) -> Occurrence {
    Occurrence::new(s.ruleset().event_id(event).expect("event"), args)
}

fn log(s: &GameState) -> String {
    s.log()
        .iter()
        .map(|e| e.display(s) + "\n")
        .collect::<String>()
}

fn honor(s: &GameState, p: u8) -> Option<i64> {
    let prop = s.ruleset().prop_id("honor").expect("honor");
    s.property(PlayerId(p), prop).unwrap().number()
}

/// Two Borders at step A: the request offers both; answering each way gives the two outcomes
/// of the "CE Timing" example, from copies of one state.
fn borders() -> (GameState, ObjectId) {
    let mut s = game(&["Alice", "Bob"]);
    enter(&mut s, "Stubborn Border", 0);
    enter(&mut s, "Harsh Border", 0);
    let unit = enter(&mut s, "Samurai", 0);
    let o = occ(&s, "moves_home", vec![Arg::Object(unit)]);
    s.occur(o).expect("occurs");
    (s, unit)
}

#[test]
fn a_decision_lists_its_options_and_each_answer_can_be_tried_on_a_copy() {
    let (s, unit) = borders();
    let Some(DecisionRequest::ChooseNext {
        player, options, ..
    }) = s.pending_decision()
    else {
        panic!(
            "expected a choice of what comes next, got {:?}",
            s.pending_decision()
        );
    };
    assert_eq!(*player, PlayerId(0));
    assert_eq!(options.len(), 2);
    let discard = s.ruleset().zone_id("discard").unwrap();
    let mut outcomes = Vec::new();
    for (i, o) in options.iter().enumerate() {
        let mut copy = s.clone();
        copy.decide(Choice::Pick(i)).expect("a legal answer");
        assert!(copy.pending_decision().is_none());
        outcomes.push((
            o.text.to_string(),
            copy.object(unit).unwrap().zone == discard,
        ));
    }
    outcomes.sort();
    assert_eq!(
        outcomes,
        vec![
            (
                "Units that move home are destroyed instead.".to_string(),
                true
            ),
            ("Units will not move home.".to_string(), false),
        ]
    );
}

#[test]
fn an_answer_that_is_not_an_option_is_an_error_that_changes_nothing() {
    let (mut s, unit) = borders();
    let before = log(&s);
    for bad in [Choice::Pick(2), Choice::Pass, Choice::Order(vec![unit])] {
        assert!(s.decide(bad.clone()).is_err(), "{bad:?} must be refused");
        assert_eq!(log(&s), before);
        assert!(s.pending_decision().is_some());
    }
    // Nothing else may happen while the decision waits.
    let o = occ(&s, "bows", vec![Arg::Object(unit)]);
    assert!(s.occur(o).is_err());
    assert_eq!(log(&s), before);
}

#[test]
fn the_same_answers_give_the_same_log() {
    let run = || {
        let mut s = game(&["Alice", "Bob", "Carol"]);
        enter(&mut s, "Honorable Witness", 0);
        enter(&mut s, "Honorable Witness", 1);
        enter(&mut s, "Honor Tax", 2);
        enter(&mut s, "Honor Boon", 2);
        let o = occ(
            &s,
            "gains_honor",
            vec![Arg::Player(PlayerId(2)), Arg::Number(3)],
        );
        s.occur(o).expect("occurs");
        // Always the first option: take every Reaction offered once, then pass.
        let mut steps = 0;
        while let Some(d) = s.pending_decision().cloned() {
            steps += 1;
            assert!(steps < 200, "the game should settle");
            let c = match d {
                DecisionRequest::React { .. } if steps % 3 == 0 => Choice::Pass,
                d => d.choices()[0].clone(),
            };
            s.decide(c).expect("a legal answer");
        }
        (log(&s), honor(&s, 2))
    };
    let (a, ha) = run();
    let (b, hb) = run();
    assert_eq!(a, b);
    assert_eq!(ha, hb);
    assert!(!a.is_empty());
}

#[test]
fn a_reaction_request_offers_only_reactions_the_player_can_take() {
    let mut s = game(&["Alice", "Bob"]);
    enter(&mut s, "Honorable Witness", 1);
    let o = occ(
        &s,
        "gains_honor",
        vec![Arg::Player(PlayerId(0)), Arg::Number(1)],
    );
    s.occur(o).expect("occurs");
    // Alice (active) has none and passes without being asked; Bob is asked.
    let Some(DecisionRequest::React {
        player, options, ..
    }) = s.pending_decision()
    else {
        panic!("expected an action round, got {:?}", s.pending_decision());
    };
    assert_eq!(*player, PlayerId(1));
    assert_eq!(options.len(), 1);
    assert_eq!(
        &*options[0].text,
        "Before a player gains Honor: you gain 1 Honor."
    );
    assert_eq!(
        s.pending_decision().unwrap().choices().len(),
        2,
        "take it, or pass"
    );
}

/// Occurrences change objects' state (bowed, dishonored); static abilities read it. After each
/// occurrence the values worked out from the previous derivation equal a derivation from scratch.
#[test]
fn state_changes_recompute_like_a_full_derivation() {
    let mut s = Loader::new()
        .game(
            Path::new("rulesets/honor.rules"),
            &[
                Path::new("content/honor"),
                Path::new("tests/data/honor-statics.cards"),
            ],
            &["Alice", "Bob"],
        )
        .expect("loads");
    let mut cards = Vec::new();
    for (i, name) in [
        "Rallying Banner",
        "Shamed Lord",
        "Counting Sensei",
        "Stalwart Samurai",
        "Samurai",
        "Samurai",
        "Shamed Lord",
    ]
    .iter()
    .enumerate()
    {
        let o = enter(&mut s, name, (i % 2) as u8);
        if name != &"Rallying Banner" {
            cards.push(o);
        }
    }
    let kinds: Vec<_> = ["bows", "straightens", "dishonors"]
        .iter()
        .map(|k| s.ruleset().event_id(k).expect("event"))
        .collect();
    // A fixed pseudo-random walk (a linear congruential sequence).
    let mut x: u64 = 12345;
    for _ in 0..400 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let card = cards[(x >> 33) as usize % cards.len()];
        let kind = kinds[(x >> 40) as usize % kinds.len()];
        s.occur(Occurrence::new(kind, vec![Arg::Object(card)]))
            .expect("occurs");
        assert!(s.pending_decision().is_none());
        assert_eq!(
            format!("{:?}", s.derived().sheet),
            format!("{:?}", rulecraft_core::layers::derive(&s, false).sheet)
        );
    }
    // The walk reached the states it is about.
    let log = log(&s);
    assert!(log.contains("dishonors(") && log.contains(": happens"));
}

/// A built-in event happens only through the engine's own actions: asked for directly, it is an
/// error that changes nothing.
#[test]
fn a_built_in_event_cannot_be_made_to_occur_directly() {
    let mut s = game(&["Alice", "Bob"]);
    let unit = enter(&mut s, "Samurai", 0);
    let before = log(&s);
    let o = occ(&s, "leaves_play", vec![Arg::Object(unit)]);
    let err = s.occur(o).expect_err("a built-in event is refused");
    assert!(err.to_string().contains("built-in event"), "{err}");
    assert_eq!(log(&s), before);
    assert!(s.in_play(unit));
}

/// Resolving a spell, ending a turn and turning a card face up are occurrences logged like any
/// other; an action that would change nothing (turning a face-up card face up) fails first.
#[test]
fn the_engines_actions_are_logged_as_occurrences() {
    let mut s = game(&["Alice", "Bob"]);
    let unit = enter(&mut s, "Samurai", 0);
    s.apply(Action::TurnFaceUp { object: unit })
        .expect("turning is an action");
    s.apply(Action::EndTurn).expect("the turn ends");
    let text = log(&s);
    assert!(text.contains("turns_face_up(Samurai): fails"), "{text}");
    assert!(text.contains("turn_ends(Alice): happens"), "{text}");
    assert_eq!(s.active(), PlayerId(1));
}

/// Explanations in words are readers too: an id that names nothing is an error, not a panic.
#[test]
fn describing_a_bad_id_is_an_error() {
    use rulecraft_core::explain::describe::{describe_char, describe_object, describe_player};
    let mut s = game(&["Alice", "Bob"]);
    let unit = enter(&mut s, "Samurai", 0);
    let d = s.explain();
    assert!(describe_object(&s, &d, unit).is_ok());
    assert!(describe_object(&s, &d, ObjectId(99)).is_err());
    assert!(describe_char(&s, &d, unit, rulecraft_core::CharId(999)).is_err());
    assert!(describe_player(&s, &d, PlayerId(1)).is_ok());
    assert!(describe_player(&s, &d, PlayerId(7)).is_err());
}

/// An action naming a class or zone that does not exist is refused and changes nothing.
#[test]
fn creating_an_object_of_no_class_is_an_error() {
    let mut s = game(&["Alice", "Bob"]);
    let zone = s.ruleset().zone_id("play").expect("zone");
    let bad = NewObject::new(rulecraft_core::ClassId(9999), PlayerId(0), zone);
    assert!(s.apply(Action::Create(vec![bad])).is_err());
    let class = s.content().class_id("Samurai").expect("class");
    let bad_zone = NewObject::new(class, PlayerId(0), rulecraft_core::ZoneId(99));
    assert!(s.apply(Action::Create(vec![bad_zone])).is_err());
    assert_eq!(s.objects().count(), 0);
}

/// CR 104.1: once the game is over nothing more happens in it; every action is refused and
/// changes nothing.
#[test]
fn after_the_game_is_over_every_action_is_refused_and_changes_nothing() {
    let mut s = common::game("scenarios/effects/arena.rules", &[], &["Ann", "Ben"]);
    let hits = s.ruleset().event_id("hits").expect("event");
    assert!(!s.is_over());
    assert_eq!(s.winner(), None);
    s.occur(Occurrence::new(
        hits,
        vec![Arg::Player(PlayerId(1)), Arg::Number(20)],
    ))
    .expect("happens");
    assert!(s.is_over());
    assert_eq!(s.winner(), Some(Some(PlayerId(0))));
    let before = s.save();
    let again = s.occur(Occurrence::new(
        hits,
        vec![Arg::Player(PlayerId(0)), Arg::Number(1)],
    ));
    assert_eq!(again, Err(rulecraft_core::ActionError::GameOver));
    assert_eq!(
        s.apply(Action::EndTurn).err(),
        Some(rulecraft_core::ActionError::GameOver)
    );
    assert_eq!(s.save(), before);
}
