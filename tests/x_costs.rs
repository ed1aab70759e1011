//! {X} costs (CR 601.2b, 601.2f): the caster announces X as the spell is cast, from the values
//! whose costs can be paid; an answer outside them is refused and changes nothing.

use rulecraft_core::model::decision::{Choice, DecisionRequest};
use rulecraft_core::GameState;
use rulecraft_lang::loader::Loader;
use rulecraft_lang::scenario::run;
use std::path::Path;

/// The game as Bob announces X for Fireball ({X}{R}), with {R} and four white in his pool.
fn announcing() -> GameState {
    let mut loader = Loader::new();
    let all = loader
        .scenarios(Path::new("tests/x-costs/announcing.scenario"))
        .expect("the scenario loads");
    let (env, sc) = &all[0];
    run(env, sc, None).state
}

#[test]
fn only_values_the_pool_can_pay_are_offered() {
    let s = announcing();
    let Some(DecisionRequest::ChooseNumber { options, .. }) = s.pending_decision() else {
        panic!("X is being announced: {:?}", s.pending_decision());
    };
    // {R} from red, then X from the four white: 0 to 4, though the spell allows up to 20.
    assert_eq!(options, &vec![0, 1, 2, 3, 4]);
    let labels: Vec<String> = s.decision_options().into_iter().map(|o| o.label).collect();
    assert_eq!(labels, ["X = 0", "X = 1", "X = 2", "X = 3", "X = 4"]);
}

#[test]
fn an_x_too_large_is_refused_and_changes_nothing() {
    let mut s = announcing();
    let before = s.save();
    assert!(s.decide(Choice::Number(5)).is_err());
    assert!(s.decide(Choice::Number(-1)).is_err());
    assert!(s.decide(Choice::Pick(0)).is_err());
    assert_eq!(s.save(), before);
}

#[test]
fn the_x_announced_is_paid_and_kept_through_save_and_load() {
    let mut s = announcing();
    s.decide(Choice::Number(3)).expect("X = 3 is offered");
    // Next, its target: saved and loaded, the X announced stays with the spell.
    let mut s =
        GameState::load(s.ruleset().clone(), s.content().clone(), &s.save()).expect("loads");
    let sue = s.player_id("Sue").expect("Sue");
    s.decide(Choice::Target(
        rulecraft_core::model::condition::Subject::Player(sue),
    ))
    .expect("Sue is a legal target");
    // No interrupt; then the batch: Bob and Sue pass.
    s.decide(Choice::Pass).expect("Bob passes");
    s.decide(Choice::Pass).expect("Sue passes");
    let white = s.ruleset().prop_id("white").expect("white");
    let life = s.ruleset().prop_id("life").expect("life");
    let bob = s.player_id("Bob").expect("Bob");
    assert_eq!(s.property(bob, white).unwrap().number(), Some(1));
    assert_eq!(s.property(sue, life).unwrap().number(), Some(17));
}
