//! Issue 16, whole games: games played through decisions alone replay exactly from their answers
//! and from a save, the same seed gives the same games on any number of threads, and a refused
//! answer or deal changes nothing.

mod common;

use rulecraft_core::model::condition::Subject;
use rulecraft_core::{
    play_game, play_game_limited, play_many, Agent, Choice, DecisionRequest, GameState, Plan,
    PlayerId, RandomAgent, ScriptedAgent, Start,
};
use rulecraft_lang::deck::{parse_deck, read_deck};
use rulecraft_lang::loader::Loader;
use std::path::Path;

/// Games are played on several threads: a state moves to one and is shared by them.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<GameState>();
};

fn bolt() -> Vec<(String, u32)> {
    vec![("Mountain".into(), 20), ("Lightning Bolt".into(), 40)]
}

fn dealt(seed: u64) -> GameState {
    let mut g = common::classic_game().with_seed(seed);
    g.deal(&[bolt(), bolt()]).expect("deals");
    g
}

fn random_agents(seed: u64) -> Vec<Box<dyn Agent + Send>> {
    vec![
        Box::new(RandomAgent::new(seed)),
        Box::new(RandomAgent::new(seed.wrapping_add(1))),
    ]
}

#[test]
fn a_game_replays_to_the_same_state_from_its_answers() {
    for seed in 0..4 {
        let start = dealt(seed);
        let mut g = start.clone();
        let s = play_game(&mut g, &mut random_agents(seed)).expect("plays");
        assert!(s.finished && g.is_over(), "seed {seed}: the game ends");
        assert_eq!(s.winner, g.winner().flatten());
        assert_eq!(s.decisions, s.answers.len());
        let mut again = start.clone();
        let mut scripted: Vec<Box<dyn Agent + Send>> = (0..2)
            .map(|p| Box::new(ScriptedAgent::new(s.script(PlayerId(p)))) as Box<dyn Agent + Send>)
            .collect();
        let r = play_game(&mut again, &mut scripted).expect("replays");
        assert_eq!(r, s, "seed {seed}: the replay's summary");
        assert_eq!(
            again.save(),
            g.save(),
            "seed {seed}: the replay's final state"
        );
    }
}

#[test]
fn a_game_saved_mid_game_and_loaded_goes_on_identically() {
    let start = dealt(3);
    let mut full = start.clone();
    let s = play_game(&mut full, &mut random_agents(3)).expect("plays");
    let half = s.answers.len() / 2;
    let mut g = start.clone();
    for (_, i) in &s.answers[..half] {
        g.answer(*i).expect("a recorded answer is legal");
    }
    let mut loaded = GameState::load(g.ruleset().clone(), g.content().clone(), &g.save())
        .expect("the save loads");
    for (_, i) in &s.answers[half..] {
        g.answer(*i).expect("legal in the saved game");
        loaded.answer(*i).expect("legal in the loaded game");
    }
    assert!(loaded.is_over());
    assert_eq!(loaded.winner(), full.winner());
    assert_eq!(loaded.save(), g.save());
    assert_eq!(loaded.save(), full.save());
}

#[test]
fn the_same_seed_gives_the_same_games_on_one_thread_or_two() {
    let start = Start::Decks(common::classic_game(), vec![bolt(), bolt()]);
    let agents = |seed: u64, p: PlayerId| -> Box<dyn Agent + Send> {
        Box::new(RandomAgent::new(seed ^ u64::from(p.0)))
    };
    let one = play_many(&start, Plan::new(12, 99), agents).expect("plays");
    let again = play_many(&start, Plan::new(12, 99), agents).expect("plays");
    let two = play_many(&start, Plan::new(12, 99).threads(2), agents).expect("plays");
    assert_eq!(one.games, again.games);
    assert_eq!(one.games, two.games);
    assert_eq!((one.wins.clone(), one.draws), (two.wins.clone(), two.draws));
    assert_eq!(
        one.wins.iter().sum::<usize>() + one.draws + one.unfinished,
        12
    );
    assert!(one.mean_decisions() > 0.0 && one.mean_turns() >= 1.0);
    let other = play_many(&start, Plan::new(12, 100), agents).expect("plays");
    assert_ne!(one.games, other.games, "another seed plays other games");
    // Game i of a run is the game its seed deals, whatever thread played it.
    let mut g = start.game(99, 5).expect("deals");
    let seed = Start::game_seed(99, 5);
    let s = play_game(
        &mut g,
        &mut [agents(seed, PlayerId(0)), agents(seed, PlayerId(1))],
    )
    .expect("plays");
    assert_eq!(s, two.games[5]);
}

#[test]
fn a_cloned_dealt_start_reseeded_plays_like_a_fresh_game_of_its_seed() {
    let start = Start::Dealt(dealt(1));
    let m = play_many(&start, Plan::new(4, 7).threads(2), |s, p| {
        Box::new(RandomAgent::new(s ^ u64::from(p.0)))
    })
    .expect("plays");
    assert_eq!(m.games.len(), 4);
    assert!(m.games.iter().all(|g| g.finished));
}

#[test]
fn an_illegal_answer_changes_nothing() {
    let mut g = dealt(5);
    let before = g.save();
    let n = g.decision_options().len();
    assert!(n > 0, "the dealt game asks for a play");
    assert!(g.answer(n).is_err());
    assert!(g.answer(usize::MAX).is_err());
    assert_eq!(g.save(), before);
}

#[test]
fn a_deal_with_an_unknown_card_is_refused_and_changes_nothing() {
    let mut g = common::classic_game().with_seed(2);
    let before = g.save();
    let bad = vec![
        ("Mountain".to_string(), 20),
        ("Lightning Blot".to_string(), 40),
    ];
    let e = g.deal(&[bolt(), bad]).expect_err("an unknown card");
    assert!(format!("{e}").contains("Lightning Blot"), "{e}");
    assert_eq!(g.save(), before);
    assert!(g.deal(&[bolt()]).is_err(), "one deck for two players");
    assert_eq!(g.save(), before);
}

#[test]
fn a_script_that_runs_out_stops_the_game_with_an_error_saying_so() {
    let mut g = dealt(0);
    let mut agents: Vec<Box<dyn Agent + Send>> = vec![
        Box::new(ScriptedAgent::new(vec![])),
        Box::new(ScriptedAgent::new(vec![])),
    ];
    let e = play_game(&mut g, &mut agents).expect_err("no answers");
    assert!(format!("{e}").contains("ran out"), "{e}");
    let mut g = dealt(0);
    let mut agents: Vec<Box<dyn Agent + Send>> = vec![
        Box::new(ScriptedAgent::new(vec![7_000])),
        Box::new(ScriptedAgent::new(vec![])),
    ];
    let e = play_game(&mut g, &mut agents).expect_err("no such option");
    assert!(format!("{e}").contains("option 7000"), "{e}");
}

#[test]
fn a_game_past_its_limit_of_decisions_is_reported_unfinished() {
    let mut g = dealt(0);
    let s = play_game_limited(&mut g, &mut random_agents(0), 10).expect("plays");
    assert!(!s.finished && !g.is_over());
    assert_eq!((s.decisions, s.winner), (10, None));
}

/// The benchmark's policy: a random agent answering a target aims at the opponent.
#[test]
fn a_random_agent_targets_its_opponent() {
    let mut g = dealt(4);
    let mut agents = [RandomAgent::new(1), RandomAgent::new(2)];
    let mut targeted = 0;
    while !g.is_over() {
        let options = g.decision_options();
        let d = g.pending_decision().expect("a decision").clone();
        let i = agents[d.player().index()].choose(&g, &options);
        if let DecisionRequest::ChooseTarget { player, .. } = d {
            let opponent = Subject::Player(PlayerId(1 - player.0));
            assert_eq!(options[i].choice, Choice::Target(opponent));
            targeted += 1;
        }
        g.answer(i).expect("legal");
    }
    assert!(targeted > 0, "the game cast a Lightning Bolt");
}

#[test]
fn the_bolt_deck_file_loads_and_deals() {
    let mut loader = Loader::new();
    let deck = read_deck(&mut loader, Path::new("decks/bolt.deck")).expect("reads");
    let g = common::classic_game();
    assert_eq!(deck.check(g.content()).expect("its cards exist"), bolt());
    let typo = parse_deck(0, "20 Mountian\n").expect("parses");
    let e = typo.check(g.content()).expect_err("an unknown card");
    assert_eq!(
        e.message,
        "unknown card `Mountian`: did you mean `Mountain`?"
    );
}
