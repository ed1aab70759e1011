//! A change recomputes only what it can reach (issue 16's speed): where no effect reads or
//! changes a player's property, a change of one is that value alone; where no effect applies at
//! all, a changed object's values are its base values; a shuffle of a library, whose order no
//! effect reads, reaches no derived value. Each shortcut must give what a full derivation gives,
//! and must not be taken where an effect can see the change.

mod common;

use rulecraft_core::layers::derive;
use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::{Agent, GameState, PlayerId, RandomAgent};

/// A game dealt with a copy of `g`'s content in which Lightning Bolt costs nothing (and, with
/// `name`, is added again under that name), seeded with `seed`.
fn with_free_bolt(g: &GameState, name: Option<&str>, seed: u64) -> GameState {
    let mut content = (**g.content()).clone();
    let bolt_class = content.class_id("Lightning Bolt").unwrap();
    let mut free = content.class(bolt_class).unwrap().clone();
    if let Some(n) = name {
        free.name = n.into();
    }
    if let Some(sp) = free.spell.as_mut() {
        sp.costs.clear();
    }
    content.add(free);
    let mut h = GameState::new(
        g.ruleset().clone(),
        std::sync::Arc::new(content),
        &["Ann", "Ben"],
    )
    .with_seed(seed);
    h.deal(&[bolt(), bolt()]).expect("deals");
    h
}

fn bolt() -> Vec<(String, u32)> {
    vec![("Mountain".into(), 20), ("Lightning Bolt".into(), 40)]
}

fn same_as_full(s: &GameState, when: &str) {
    assert_eq!(
        format!("{:?}", s.derived().sheet),
        format!("{:?}", derive(s, false).sheet),
        "{when}: the derived values are what a full derivation gives"
    );
}

/// Each player's legal plays, in the neutral state and adding to a batch, are those found by
/// testing every card's `cards:` condition on the card (none answered once per class).
fn same_plays_as_in_full(s: &GameState, when: &str) {
    for p in 0..s.players().len() {
        for in_batch in [false, true] {
            let p = PlayerId(p as u8);
            assert_eq!(
                s.legal_plays(p, in_batch),
                s.legal_plays_in_full(p, in_batch),
                "{when}: player {p:?}, in a batch {in_batch}: the legal plays"
            );
        }
    }
}

/// Whole games of the classic ruleset (mana, life, draws, shuffles; no continuous effect): after
/// every answer the values kept are those of a full derivation.
#[test]
fn games_without_effects_derive_as_a_full_derivation_does() {
    for seed in 0..3u64 {
        let mut g = common::classic_game().with_seed(seed);
        g.deal(&[bolt(), bolt()]).expect("deals");
        same_as_full(&g, "dealt");
        let mut agents = [RandomAgent::new(seed), RandomAgent::new(seed + 7)];
        let mut n = 0;
        while !g.is_over() && n < 400 {
            let Some(req) = g.pending_decision() else {
                break;
            };
            let p = req.player().index();
            let options = g.decision_options();
            // `answer` takes the request's choices in the options' order, without their labels.
            let choices: Vec<_> = options.iter().map(|o| o.choice.clone()).collect();
            assert_eq!(
                choices,
                req.choices(),
                "seed {seed}, answer {n}: the same answers"
            );
            same_plays_as_in_full(&g, &format!("seed {seed}, answer {n}"));
            let i = agents[p].choose(&g, &options);
            g.answer(i).expect("a legal answer");
            same_as_full(&g, &format!("seed {seed}, answer {n}"));
            assert!(
                g.indexes_hold(),
                "seed {seed}, answer {n}: the kept indexes"
            );
            assert!(
                g.player_checks_hold(),
                "seed {seed}, answer {n}: the player checks found none"
            );
            n += 1;
        }
        assert!(g.is_over(), "seed {seed}: the game ends");
    }
}

/// A static ability that reads its controller's life: a change of life reaches it.
#[test]
fn a_change_of_life_reaches_an_effect_that_reads_it() {
    let mut g = common::game(
        "rulesets/classic.rules",
        &["content/classic", "tests/data/life_reads.cards"],
        &["Ann", "Ben"],
    );
    let class = g.content().class_id("Test Desperate Bear").unwrap();
    let play = g.ruleset().zone_id("play").unwrap();
    let bear = g
        .apply(Action::Create(vec![NewObject::new(
            class,
            PlayerId(0),
            play,
        )]))
        .expect("enters")
        .created[0];
    let power = g.ruleset().char_id("power").unwrap();
    let life = g.ruleset().prop_id("life").unwrap();
    assert_eq!(g.characteristic(bear, power).unwrap().number(), Some(2));
    g.apply(Action::SetProperty {
        player: PlayerId(0),
        prop: life,
        value: Some(10),
    })
    .expect("sets");
    assert_eq!(g.characteristic(bear, power).unwrap().number(), Some(4));
    same_as_full(&g, "at 10 life");
    // The other player's life is not "you".
    g.apply(Action::SetProperty {
        player: PlayerId(1),
        prop: life,
        value: Some(3),
    })
    .expect("sets");
    g.apply(Action::SetProperty {
        player: PlayerId(0),
        prop: life,
        value: Some(11),
    })
    .expect("sets");
    assert_eq!(g.characteristic(bear, power).unwrap().number(), Some(2));
    same_as_full(&g, "at 11 life");
}

/// Without an effect that reads life, a change of life is seen at once in the player's value.
#[test]
fn a_change_of_life_is_seen_where_nothing_reads_it() {
    let mut g = common::classic_game();
    let life = g.ruleset().prop_id("life").unwrap();
    assert_eq!(g.property(PlayerId(1), life).unwrap().number(), Some(20));
    g.apply(Action::SetProperty {
        player: PlayerId(1),
        prop: life,
        value: Some(7),
    })
    .expect("sets");
    assert_eq!(g.property(PlayerId(1), life).unwrap().number(), Some(7));
    assert_eq!(g.property(PlayerId(0), life).unwrap().number(), Some(20));
    same_as_full(&g, "after the change");
}

/// After the player checks found no one, a change of life to 0 is still found.
#[test]
fn a_player_at_no_life_loses_after_the_checks_found_none() {
    let mut g = common::classic_game();
    let life = g.ruleset().prop_id("life").unwrap();
    for (value, over) in [(5, false), (0, true)] {
        g.apply(Action::SetProperty {
            player: PlayerId(1),
            prop: life,
            value: Some(value),
        })
        .expect("sets");
        assert!(g.player_checks_hold(), "at {value} life");
        assert_eq!(g.is_over(), over, "at {value} life");
    }
    assert_eq!(g.winner(), Some(Some(PlayerId(0))), "Ben at no life loses");
}

/// Where an effect applies, a card's values may differ from its class's, and from another card's
/// of its class: an effect that makes a Lightning Bolt with a counter no instant makes that one
/// uncastable, and only that one.
#[test]
fn plays_are_found_card_by_card_where_an_effect_applies() {
    // Ann's main phase, three Lightning Bolts (the first with a vitality counter) and a Mountain
    // in her hand, {R} in her pool; with the effect's source in play or not.
    let game = |with_effect: bool| {
        let mut g = common::game(
            "rulesets/classic.rules",
            &["content/classic", "tests/data/bolts_not_instants.cards"],
            &["Ann", "Ben"],
        );
        let hand = g.ruleset().zone_id("hand").unwrap();
        let play = g.ruleset().zone_id("play").unwrap();
        let class = |name: &str| g.content().class_id(name).unwrap();
        let mut cards: Vec<NewObject> = ["Lightning Bolt", "Mountain", "Lightning Bolt"]
            .iter()
            .chain(&["Lightning Bolt"])
            .map(|c| NewObject::new(class(c), PlayerId(0), hand))
            .collect();
        if with_effect {
            cards.push(NewObject::new(class("Test Instant Ban"), PlayerId(1), play));
        }
        let bolt = g.apply(Action::Create(cards)).expect("creates").created[0];
        let vitality = g.ruleset().counter_id("vitality").unwrap();
        g.apply(Action::AddCounters {
            object: bolt,
            counter: vitality,
            count: 1,
        })
        .expect("puts a counter");
        let red = g.ruleset().prop_id("red").unwrap();
        g.apply(Action::SetProperty {
            player: PlayerId(0),
            prop: red,
            value: Some(1),
        })
        .expect("sets");
        let main = g.ruleset().event_id("main").unwrap();
        g.start_game_at(Some(main)).expect("starts");
        g
    };
    let casts = |g: &GameState| {
        g.legal_plays(PlayerId(0), false)
            .iter()
            .filter(|o| o.label == "cast Lightning Bolt")
            .count()
    };
    let g = game(false);
    same_plays_as_in_full(&g, "without the effect");
    assert_eq!(casts(&g), 3, "each Lightning Bolt can be cast");
    let g = game(true);
    same_plays_as_in_full(&g, "with the effect");
    assert_eq!(
        casts(&g),
        2,
        "the Lightning Bolt with a counter is no instant"
    );
}

/// The timing procedure's shortcuts: a step that nothing of its kind listens to at a point is over
/// at once; a round of state-based checks with nothing changed since one found none finds none
/// without testing. Every bundled scenario, and whole games of the classic ruleset, run to the same log
/// and the same results with the procedure taken in full.
#[test]
fn steps_nothing_listens_to_end_as_the_full_procedure_ends_them() {
    use rulecraft_core::events::hooks::procedure_in_full;
    use rulecraft_lang::loader::{files_with_ext, Loader};
    use rulecraft_lang::scenario::run;
    let files = files_with_ext(std::path::Path::new("scenarios"), "scenario");
    let mut loader = Loader::new();
    let mut count = 0;
    for f in &files {
        let list = loader.scenarios(f).expect("the bundled scenarios load");
        for (env, sc) in list {
            let [full, short] = [true, false].map(|in_full| {
                procedure_in_full(in_full);
                let r = run(&env, &sc, None);
                (
                    r.failures.len(),
                    r.checked,
                    format!("{:?}", r.state.log()),
                    format!("{:?}", r.state.pending_decision()),
                )
            });
            assert_eq!(full, short, "{}: {}", f.display(), sc.header.name);
            count += 1;
        }
    }
    assert!(count >= 19, "ran {count} scenarios");
    for seed in 0..3u64 {
        let [full, short] = [true, false].map(|in_full| {
            procedure_in_full(in_full);
            let mut g = common::classic_game().with_seed(seed);
            g.deal(&[bolt(), bolt()]).expect("deals");
            let mut agents = [RandomAgent::new(seed), RandomAgent::new(seed + 7)];
            while !g.is_over() {
                let Some(req) = g.pending_decision() else {
                    break;
                };
                let options = g.decision_options();
                let i = agents[req.player().index()].choose(&g, &options);
                g.answer(i).expect("a legal answer");
            }
            format!("{:?}", g.log())
        });
        assert_eq!(full, short, "seed {seed}: the same game");
    }
    procedure_in_full(false);
}

/// Agents that read no label get the options with empty labels: the same answers in the same
/// order, so the same games as agents that read them.
#[test]
fn agents_that_read_no_label_play_the_same_games() {
    /// A random agent that says it reads the labels.
    struct Reading(RandomAgent);
    impl Agent for Reading {
        fn choose(
            &mut self,
            state: &GameState,
            options: &[rulecraft_core::DecisionOption],
        ) -> usize {
            assert!(options.iter().all(|o| !o.label.is_empty()), "labelled");
            self.0.choose(state, options)
        }
    }
    for seed in 0..3u64 {
        let game = |reading: bool| {
            let mut g = common::classic_game().with_seed(seed);
            g.deal(&[bolt(), bolt()]).expect("deals");
            let mut agents: Vec<Box<dyn Agent + Send>> = (0..2u64)
                .map(|p| {
                    let a = RandomAgent::new(seed * 2 + p);
                    if reading {
                        Box::new(Reading(a)) as Box<dyn Agent + Send>
                    } else {
                        Box::new(a)
                    }
                })
                .collect();
            let summary = rulecraft_core::play_game(&mut g, &mut agents).expect("plays");
            (summary, format!("{:?}", g.log()))
        };
        assert_eq!(game(true), game(false), "seed {seed}: the same game");
    }
    // Stopped mid-game by agents that read no label (the plays listed without labels while
    // they played), the state still lists its plays with their labels.
    let mut g = common::classic_game().with_seed(4);
    g.deal(&[bolt(), bolt()]).expect("deals");
    let mut agents: Vec<Box<dyn Agent + Send>> = (0..2u64)
        .map(|p| Box::new(RandomAgent::new(p)) as Box<dyn Agent + Send>)
        .collect();
    for limit in [5, 17, 40] {
        let summary = rulecraft_core::play_game_limited(&mut g, &mut agents, limit).expect("plays");
        assert!(!summary.finished, "stopped at {limit} decisions");
        if let Some(rulecraft_core::DecisionRequest::Play { options, .. }) = g.pending_decision() {
            assert!(options.iter().all(|o| !o.label.is_empty()), "{options:?}");
        }
        assert!(g.decision_options().iter().all(|o| !o.label.is_empty()));
        for p in 0..2u8 {
            assert!(g
                .legal_plays(PlayerId(p), false)
                .iter()
                .all(|o| !o.label.is_empty()));
        }
    }
}

/// A play's `cards:` answer for a class is kept with the content (for every game that uses it):
/// a copy of the content in which the class changed finds it again. Mountain made an instant
/// with no cost is cast from the first decision on, as testing every card finds.
#[test]
fn a_class_changed_in_a_copy_of_the_content_is_tested_again() {
    let mut g = common::classic_game().with_seed(1);
    g.deal(&[bolt(), bolt()]).expect("deals");
    same_plays_as_in_full(&g, "dealt");
    let h = with_free_bolt(&g, Some("Mountain"), 1);
    same_plays_as_in_full(&h, "dealt with the changed class");
    let casts = |s: &GameState| {
        (0..2)
            .map(|p| s.legal_plays(PlayerId(p), false).len())
            .sum::<usize>()
    };
    assert!(
        casts(&h) > casts(&g),
        "the Mountains are cast as instants: {} plays against {}",
        casts(&h),
        casts(&g)
    );
}

/// What a play of a card does (a cast's announcement, a play's deeds) is made once per play and
/// class and kept with the content: a copy of the content in which the class changed makes it
/// again. Lightning Bolt made free is cast with no red mana, paying nothing, in a game whose
/// content was copied after Bolts were cast at their cost.
#[test]
fn a_play_of_a_class_changed_in_a_copy_of_the_content_is_made_again() {
    let mut g = common::classic_game().with_seed(2);
    g.deal(&[bolt(), bolt()]).expect("deals");
    let mut agents: Vec<Box<dyn Agent + Send>> = (0..2u64)
        .map(|p| Box::new(RandomAgent::new(p)) as Box<dyn Agent + Send>)
        .collect();
    rulecraft_core::play_game(&mut g, &mut agents).expect("plays");
    let text = |s: &GameState| {
        s.log()
            .iter()
            .map(|e| e.display(s))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let cast = |s: &GameState| text(s).matches("casts(").count();
    assert!(cast(&g) > 0, "Bolts were cast");
    let mut h = with_free_bolt(&g, None, 2);
    // The first Bolt cast, before any land is played: no mana to pay with.
    for _ in 0..200 {
        if cast(&h) > 0 {
            break;
        }
        let options = h.decision_options();
        let pick = options
            .iter()
            .position(|o| o.label == "cast Lightning Bolt")
            .or_else(|| {
                options
                    .iter()
                    .position(|o| o.label.starts_with("target Ben"))
            })
            .unwrap_or(options.len() - 1);
        h.answer(pick).expect("a legal answer");
    }
    let log = text(&h);
    assert!(cast(&h) > 0, "the free Bolt was cast:\n{log}");
    assert!(
        !log.contains("pays_red"),
        "the free Bolt paid no mana:\n{log}"
    );
}

/// Whole random games with decks of many kinds of card (lands of several colors, instants,
/// interrupts, creatures, a sorcery): after every answer each player's legal plays, found class
/// by class where no effect applies, are those found card by card.
#[test]
fn plays_of_many_classes_are_those_found_card_by_card() {
    let deck = |cards: &[(&str, u32)]| -> Vec<(String, u32)> {
        cards.iter().map(|(n, k)| (n.to_string(), *k)).collect()
    };
    let red = deck(&[
        ("Mountain", 12),
        ("Forest", 6),
        ("Lightning Bolt", 8),
        ("Incinerate", 6),
        ("Giant Growth", 6),
        ("War Mammoth", 6),
        ("Grizzly Bears", 6),
    ]);
    let blue = deck(&[
        ("Island", 12),
        ("Swamp", 6),
        ("Hydroblast", 8),
        ("Deathlace", 6),
        ("Ancestral Recall", 6),
        ("Healing Salve", 6),
        ("Grizzly Bears", 6),
    ]);
    for seed in 0..4u64 {
        let mut g = common::classic_game().with_seed(seed);
        g.deal(&[red.clone(), blue.clone()]).expect("deals");
        let mut agents = [RandomAgent::new(seed), RandomAgent::new(seed + 11)];
        let (mut n, mut offered) = (0, 0);
        while !g.is_over() && n < 400 {
            let Some(req) = g.pending_decision() else {
                break;
            };
            let p = req.player().index();
            same_plays_as_in_full(&g, &format!("seed {seed}, answer {n}"));
            let options = g.decision_options();
            offered += options.len();
            let i = agents[p].choose(&g, &options);
            g.answer(i).expect("a legal answer");
            n += 1;
        }
        assert!(n > 50 && offered > n, "seed {seed}: a game of many plays");
    }
}

/// Where no layer can change control, the derived controller is read without a derivation
/// (`GameState::controller_written`): which characteristics the layers can change
/// (`Ruleset::layers_change`) is a layer's slot for it, or face-down values that set it.
#[test]
fn the_layers_change_what_a_slot_or_face_down_values_set() {
    use rulecraft_lang::loader::Loader;
    let mut loader = Loader::new();
    let mut ruleset = |path: &str| {
        loader
            .ruleset(std::path::Path::new(path), None)
            .expect("the ruleset loads")
    };
    let controls = ruleset("scenarios/effects/control.rules");
    let rs = &controls.ruleset;
    let ch = |rs: &rulecraft_core::Ruleset, n: &str| rs.char_id(n).expect("declared");
    // A control layer (CR 613.1b) changes the controller; nothing changes the name.
    assert!(rs.layers_change(ch(rs, "controller")));
    assert!(!rs.layers_change(ch(rs, "name")));
    let actions = ruleset("scenarios/timing/actions.rules");
    let rs = &actions.ruleset;
    // No layer has a slot for the controller or the name; the face-down values set the name
    // (CR 613.2b) and the toughness layer's slot the toughness.
    assert!(!rs.layers_change(ch(rs, "controller")));
    assert!(rs.layers_change(ch(rs, "name")));
    assert!(rs.layers_change(ch(rs, "toughness")));
    let galaxy = ruleset("rulesets/galaxy.rules");
    let rs = &galaxy.ruleset;
    assert!(!rs.layers_change(ch(rs, "controller")));
}
