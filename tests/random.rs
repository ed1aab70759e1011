//! The game's seeded random source through the public API: a shuffle is a permutation of the
//! player's cards in the zone, every order is about equally likely, the same seed gives the same
//! order, and a clone or a save goes on drawing where the original is (the same content, seed and
//! answers give the same game).

use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::{GameState, ObjectId, PlayerId};

mod common;

const ALICE: PlayerId = PlayerId(0);

/// A game of the honor ruleset with `n` Samurai in Alice's deck, its random source from `seed`.
fn deck_of(n: usize, seed: u64) -> (GameState, Vec<ObjectId>) {
    let mut s = common::game(
        "rulesets/honor.rules",
        &["content/honor"],
        &["Alice", "Bob"],
    )
    .with_seed(seed);
    let class = s.content().class_id("Samurai").expect("class");
    let deck = s.ruleset().zone_id("deck").expect("zone");
    let cards = (0..n)
        .map(|_| {
            s.apply(Action::Create(vec![NewObject::new(class, ALICE, deck)]))
                .expect("created")
                .created[0]
        })
        .collect();
    (s, cards)
}

fn shuffle(s: &mut GameState) {
    let deck = s.ruleset().zone_id("deck").expect("zone");
    s.apply(Action::Shuffle {
        player: ALICE,
        zone: deck,
    })
    .expect("shuffles");
}

/// The cards of the deck, bottom first (the latest timestamp is on top).
fn order(s: &GameState, cards: &[ObjectId]) -> Vec<ObjectId> {
    let mut v: Vec<(u64, ObjectId)> = cards
        .iter()
        .map(|c| (s.object(*c).expect("object").timestamp.0, *c))
        .collect();
    v.sort();
    v.into_iter().map(|(_, c)| c).collect()
}

#[test]
fn a_shuffle_keeps_the_cards_and_the_same_seed_gives_the_same_order() {
    let (mut a, cards) = deck_of(10, 99);
    let (mut b, _) = deck_of(10, 99);
    let before = order(&a, &cards);
    shuffle(&mut a);
    shuffle(&mut b);
    let after = order(&a, &cards);
    let mut sorted = after.clone();
    sorted.sort();
    assert_eq!(sorted, cards, "the same ten cards, still in the deck");
    assert_eq!(after, order(&b, &cards), "the same seed, the same order");
    assert_ne!(
        after, before,
        "ten cards in their first order: 1 chance in 3,628,800"
    );
    assert_eq!(a.save(), b.save());
}

#[test]
fn other_seeds_give_other_orders() {
    let orders: std::collections::HashSet<Vec<ObjectId>> = (0..20)
        .map(|seed| {
            let (mut s, cards) = deck_of(10, seed);
            shuffle(&mut s);
            order(&s, &cards)
        })
        .collect();
    // Twenty seeds giving fewer than 19 orders of ten cards would be a broken source.
    assert!(orders.len() >= 19, "{} orders from 20 seeds", orders.len());
}

#[test]
fn each_card_comes_on_top_about_equally_often() {
    let (mut s, cards) = deck_of(3, 5);
    let mut top = [0u32; 3];
    for _ in 0..600 {
        shuffle(&mut s);
        let t = *order(&s, &cards).last().expect("three cards");
        top[cards.iter().position(|c| *c == t).expect("one of them")] += 1;
    }
    // 200 each expected; 130 is more than 6 standard deviations (8.2) below.
    assert!(top.iter().all(|n| (130..=270).contains(n)), "{top:?}");
}

#[test]
fn a_clone_and_a_save_go_on_drawing_where_the_game_is() {
    let (mut s, cards) = deck_of(8, 3);
    shuffle(&mut s);
    let mut copy = s.clone();
    let mut loaded =
        GameState::load(s.ruleset().clone(), s.content().clone(), &s.save()).expect("loads");
    shuffle(&mut s);
    shuffle(&mut copy);
    shuffle(&mut loaded);
    assert_eq!(order(&s, &cards), order(&copy, &cards));
    assert_eq!(order(&s, &cards), order(&loaded, &cards));
}

#[test]
fn shuffling_fewer_than_two_cards_changes_nothing_and_fails() {
    let (mut s, _) = deck_of(1, 0);
    shuffle(&mut s);
    let log: Vec<String> = s.log().iter().map(|e| e.display(&s)).collect();
    assert!(
        log.iter()
            .any(|l| l.contains("shuffles(Alice, deck): fails")),
        "{log:#?}"
    );
}
