//! Playing games to their end: one game with an agent per player ([`play_game`]), or many from
//! one start with seeds derived from one seed, over several threads ([`play_many`]).

use crate::model::clock::Instant;
use crate::model::decision::DecisionRequest;
use crate::model::error::ActionError;
use crate::model::ids::PlayerId;
use crate::play::agents::{mix, Agent};
use crate::state::GameState;
use std::time::Duration;

/// Games are played on several threads at once: a state must move to one and be shared by them.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<GameState>();
};

/// The decisions a game may take before [`play_game`] stops it unfinished: a guard against a
/// game that never ends (agents that keep playing mana abilities and passing).
pub const MAX_DECISIONS: usize = 100_000;

/// How one game went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameSummary {
    /// The winner; `None` for a draw (CR 104.4a) or a game stopped unfinished.
    pub winner: Option<PlayerId>,
    /// Whether the game ended (else it was stopped after its limit of decisions).
    pub finished: bool,
    /// The turn it ended in (or was stopped in).
    pub turns: u32,
    /// How many decisions were answered.
    pub decisions: usize,
    /// Each decision's player and the option index it was answered with, in order.
    pub answers: Vec<(PlayerId, usize)>,
}

impl GameSummary {
    /// A player's answers in order: the script of a
    /// [`ScriptedAgent`](crate::play::agents::ScriptedAgent) that replays the game.
    pub fn script(&self, player: PlayerId) -> Vec<usize> {
        self.answers
            .iter()
            .filter(|(p, _)| *p == player)
            .map(|(_, i)| *i)
            .collect()
    }
}

/// Plays a game to its end (at most [`MAX_DECISIONS`] decisions), each decision answered by the
/// agent of the player who must answer it (`agents[p]` for player `p`). On an error the state is
/// as it was before the answer that met it (an agent's answer out of the options, or an error on
/// the way after a legal one, such as a loop of responses).
pub fn play_game(
    state: &mut GameState,
    agents: &mut [Box<dyn Agent + Send>],
) -> Result<GameSummary, ActionError> {
    play_game_limited(state, agents, MAX_DECISIONS)
}

/// [`play_game`] stopping after `max_decisions` decisions, the game unfinished.
pub fn play_game_limited(
    state: &mut GameState,
    agents: &mut [Box<dyn Agent + Send>],
    max_decisions: usize,
) -> Result<GameSummary, ActionError> {
    play(state, agents, max_decisions, true)
}

/// [`play_game_limited`] on a state the caller gives up: on an error the state is dropped, so
/// each answer is taken without the backup copy that would put the state back (whole games for
/// search and benchmarks). Gives the summary and the final state.
pub fn play_out(
    mut state: GameState,
    agents: &mut [Box<dyn Agent + Send>],
    max_decisions: usize,
) -> Result<(GameSummary, GameState), ActionError> {
    let summary = play(&mut state, agents, max_decisions, false)?;
    Ok((summary, state))
}

/// The agents' game; `guarded`: each answer with a backup copy that puts the state back on an
/// error (else an error may leave the state where it stopped, for a caller that drops it).
fn play(
    state: &mut GameState,
    agents: &mut [Box<dyn Agent + Send>],
    max_decisions: usize,
    guarded: bool,
) -> Result<GameSummary, ActionError> {
    if agents.len() != state.players().len() {
        return Err(ActionError::BadChoice(format!(
            "{} agent(s) for {} players",
            agents.len(),
            state.players().len()
        )));
    }
    // Where no agent reads the options' labels, they are not written out: not even the legal
    // plays' (written where they are read: the log's line for the play taken).
    let labels = agents.iter().any(|a| a.reads_labels());
    state.timing_mut().bare_plays = !labels;
    let played = take_answers(state, agents, max_decisions, guarded, labels);
    state.timing_mut().bare_plays = false;
    state.label_pending_plays();
    let answers = played?;
    let finished = state.is_over();
    Ok(GameSummary {
        winner: state.winner().flatten(),
        finished,
        turns: state.turn(),
        decisions: answers.len(),
        answers,
    })
}

/// The agents' answers, one per decision, until the game is over or `max_decisions`.
fn take_answers(
    state: &mut GameState,
    agents: &mut [Box<dyn Agent + Send>],
    max_decisions: usize,
    guarded: bool,
    labels: bool,
) -> Result<Vec<(PlayerId, usize)>, ActionError> {
    let mut answers = Vec::new();
    while !state.is_over() && answers.len() < max_decisions {
        let Some(pending) = state.pending_decision() else {
            return Err(ActionError::NoDecisionPending);
        };
        let player = pending.player();
        let mut options = if labels {
            state.decision_options()
        } else {
            state.decision_options_unlabelled()
        };
        if options.is_empty() {
            // CR 613.7: an order of timestamps is the only answer listed as no options; the
            // objects' order as offered is one of the legal answers.
            if let DecisionRequest::OrderTimestamps { .. } = pending {
                let choice = pending.choices().swap_remove(0);
                state.decide(choice)?;
                answers.push((player, 0));
                continue;
            }
            return Err(ActionError::BadChoice(
                "the pending decision offers no options".into(),
            ));
        }
        let agent = &mut agents[player.index()];
        let i = agent.choose(state, &options);
        if i >= options.len() {
            let why = agent.refusal().map_or(String::new(), |w| format!(": {w}"));
            return Err(ActionError::BadChoice(format!(
                "the agent of {} chose option {i} of {} at decision {}{why}",
                state.player_name(player),
                options.len(),
                answers.len() + 1
            )));
        }
        state.decide_guarded(options.swap_remove(i).choice, guarded)?;
        answers.push((player, i));
    }
    Ok(answers)
}

/// Where each game of [`play_many`] starts.
#[derive(Clone, Debug)]
pub enum Start {
    /// A game not yet dealt, and the deck list of each player: each game is dealt from scratch
    /// with its own seed.
    Decks(GameState, Vec<Vec<(String, u32)>>),
    /// A game already dealt: each game is a clone of it with its random source re-seeded.
    Dealt(GameState),
}

impl Start {
    /// Game `index`'s seed among games played from `seed`.
    pub fn game_seed(seed: u64, index: usize) -> u64 {
        mix(seed ^ mix(index as u64 + 1))
    }

    /// The same start with its own copy of the ruleset and the content, for one thread: games
    /// on different threads then share no pointer whose count every occurrence touches (the
    /// count's cache line would pass between cores).
    fn for_thread(&self) -> Start {
        match self {
            Start::Decks(state, decks) => Start::Decks(state.with_own_rules(), decks.clone()),
            Start::Dealt(state) => Start::Dealt(state.with_own_rules()),
        }
    }

    /// The state game `index` begins in (seeded with [`Start::game_seed`]).
    pub fn game(&self, seed: u64, index: usize) -> Result<GameState, ActionError> {
        let s = Self::game_seed(seed, index);
        match self {
            Start::Decks(state, decks) => {
                let mut g = state.clone().with_seed(s);
                g.deal(decks)?;
                Ok(g)
            }
            Start::Dealt(state) => Ok(state.clone().with_seed(s)),
        }
    }
}

/// How many games, from which seed, on how many threads, stopped after how many decisions.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// How many games.
    pub games: usize,
    /// The seed every game's seed is derived from ([`Start::game_seed`]).
    pub seed: u64,
    /// How many threads play them (at least one).
    pub threads: usize,
    /// Each game's limit of decisions ([`play_game_limited`]).
    pub max_decisions: usize,
}

impl Plan {
    /// `games` games from `seed` on one thread, each with at most [`MAX_DECISIONS`] decisions.
    pub fn new(games: usize, seed: u64) -> Self {
        Plan {
            games,
            seed,
            threads: 1,
            max_decisions: MAX_DECISIONS,
        }
    }
    /// The same plan on `threads` threads.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }
}

/// How many games were played and how they went.
#[derive(Clone, Debug)]
pub struct ManySummary {
    /// Each game, in the order of their indexes (whatever thread played it).
    pub games: Vec<GameSummary>,
    /// Wins of each player, in turn order.
    pub wins: Vec<usize>,
    /// Games that ended with no winner.
    pub draws: usize,
    /// Games stopped after their limit of decisions.
    pub unfinished: usize,
    /// Wall-clock time the games took (dealing included).
    pub elapsed: Duration,
}

impl ManySummary {
    /// The mean of the games' turns.
    pub fn mean_turns(&self) -> f64 {
        self.mean(|g| g.turns as f64)
    }
    /// The mean of the games' decisions.
    pub fn mean_decisions(&self) -> f64 {
        self.mean(|g| g.decisions as f64)
    }
    /// Games played a second.
    pub fn games_per_second(&self) -> f64 {
        self.games.len() as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
    }
    fn mean(&self, f: impl Fn(&GameSummary) -> f64) -> f64 {
        if self.games.is_empty() {
            return 0.0;
        }
        self.games.iter().map(f).sum::<f64>() / self.games.len() as f64
    }
}

/// Plays `plan.games` games from `start` over `plan.threads` threads; `agents(seed, player)`
/// makes the agent of a player for the game with that seed. Game `i` is the same game whatever
/// thread plays it: the same start, seed and agents give the same results on any number of
/// threads. The first error stops the run.
pub fn play_many<F>(start: &Start, plan: Plan, agents: F) -> Result<ManySummary, ActionError>
where
    F: Fn(u64, PlayerId) -> Box<dyn Agent + Send> + Sync,
{
    let players = match start {
        Start::Decks(s, _) | Start::Dealt(s) => s.players().len(),
    };
    let threads = plan.threads.clamp(1, plan.games.max(1));
    let clock = Instant::now();
    let one = |start: &Start, i: usize| -> Result<GameSummary, ActionError> {
        let g = start.game(plan.seed, i)?;
        let s = Start::game_seed(plan.seed, i);
        let mut list: Vec<Box<dyn Agent + Send>> =
            (0..players).map(|p| agents(s, PlayerId(p as u8))).collect();
        play_out(g, &mut list, plan.max_decisions).map(|(summary, _)| summary)
    };
    // Thread t plays games t, t + T, t + 2T, ...
    let parts: Vec<Result<Vec<(usize, GameSummary)>, ActionError>> = if threads == 1 {
        vec![(0..plan.games)
            .map(|i| one(start, i).map(|g| (i, g)))
            .collect()]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let one = &one;
                    scope.spawn(move || {
                        let start = start.for_thread();
                        (t..plan.games)
                            .step_by(threads)
                            .map(|i| one(&start, i).map(|g| (i, g)))
                            .collect::<Result<Vec<_>, _>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(ActionError::BadChoice("a playing thread panicked".into()))
                    })
                })
                .collect()
        })
    };
    let elapsed = clock.elapsed();
    let mut slots: Vec<Option<GameSummary>> = vec![None; plan.games];
    for part in parts {
        for (i, g) in part? {
            slots[i] = Some(g);
        }
    }
    let games: Vec<GameSummary> = slots.into_iter().flatten().collect();
    let mut wins = vec![0; players];
    let (mut draws, mut unfinished) = (0, 0);
    for g in &games {
        match (g.finished, g.winner) {
            (false, _) => unfinished += 1,
            (true, Some(p)) => wins[p.index()] += 1,
            (true, None) => draws += 1,
        }
    }
    Ok(ManySummary {
        games,
        wins,
        draws,
        unfinished,
        elapsed,
    })
}
