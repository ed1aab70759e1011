//! Agents: whatever answers a player's decisions, given the state and the options it lists
//! ([`GameState::decision_options`]).

use crate::action::options::DecisionOption;
use crate::model::condition::Subject;
use crate::model::decision::{Choice, DecisionRequest};
use crate::state::GameState;

/// Answers the decisions of one player.
pub trait Agent {
    /// The index of the option to take among `options` (never empty). An index past them makes
    /// the game stop with an error ([`Agent::refusal`] says why, if the agent knows).
    fn choose(&mut self, state: &GameState, options: &[DecisionOption]) -> usize;
    /// Why the agent gave no legal option, once it has (a script that ran out).
    fn refusal(&self) -> Option<String> {
        None
    }
    /// Whether the agent reads the options' labels. Where no agent of a game does,
    /// [`play_game`](crate::play::playout::play_game) and the other players hand them the
    /// options with empty labels (the same answers in the same order), not writing the labels
    /// out at every decision.
    fn reads_labels(&self) -> bool {
        true
    }
}

/// SplitMix64 (Steele, Lea and Flood, 2014): a small, fast, seeded random source.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A source started from this seed.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }
    /// A number in `0..n` (`n` > 0), by multiply-shift (Lemire, 2019).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64) < p
    }
}

/// SplitMix64's finalizer: a seed spread over all 64 bits.
pub fn mix(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The benchmark's random player: with options besides passing it passes with probability
/// [`RandomAgent::PASS`], else takes one of the others uniformly; a target is an opponent when one
/// is offered, else uniform.
#[derive(Clone, Debug)]
pub struct RandomAgent {
    rng: SplitMix64,
}

impl RandomAgent {
    /// How often the agent passes when it could do something else.
    pub const PASS: f64 = 0.3;

    /// An agent with its own random source started from `seed`.
    pub fn new(seed: u64) -> Self {
        RandomAgent {
            rng: SplitMix64::new(seed),
        }
    }
}

impl Agent for RandomAgent {
    /// It reads the answers only (passing, a target that is an opponent).
    fn reads_labels(&self) -> bool {
        false
    }
    fn choose(&mut self, state: &GameState, options: &[DecisionOption]) -> usize {
        if let Some(DecisionRequest::ChooseTarget { player, .. }) = state.pending_decision() {
            let opponents: Vec<usize> = options
                .iter()
                .enumerate()
                .filter(
                    |(_, o)| matches!(o.choice, Choice::Target(Subject::Player(p)) if p != *player),
                )
                .map(|(i, _)| i)
                .collect();
            if !opponents.is_empty() {
                return opponents[self.rng.below(opponents.len())];
            }
            return self.rng.below(options.len());
        }
        let pass = options.iter().position(|o| o.choice == Choice::Pass);
        let others = options.len() - usize::from(pass.is_some());
        match pass {
            Some(p) if others == 0 || self.rng.chance(Self::PASS) => p,
            // Passing is the last option of a play or a Reaction, so the others come first.
            Some(p) => {
                let k = self.rng.below(others);
                if k >= p {
                    k + 1
                } else {
                    k
                }
            }
            None => self.rng.below(options.len()),
        }
    }
}

/// Always takes the first option.
#[derive(Clone, Copy, Debug, Default)]
pub struct FirstAgent;

impl Agent for FirstAgent {
    fn reads_labels(&self) -> bool {
        false
    }
    fn choose(&mut self, _: &GameState, _: &[DecisionOption]) -> usize {
        0
    }
}

/// Takes the options of a script, one per decision, in order; past its end it asks its fallback
/// agent, or, with none, gives no legal option, and the game stops with an error saying so.
pub struct ScriptedAgent {
    script: Vec<usize>,
    next: usize,
    fallback: Option<Box<dyn Agent + Send>>,
}

impl ScriptedAgent {
    /// An agent that answers with these option indexes, then stops the game.
    pub fn new(script: Vec<usize>) -> Self {
        ScriptedAgent {
            script,
            next: 0,
            fallback: None,
        }
    }
    /// The same script, then this agent's answers.
    pub fn then(mut self, fallback: Box<dyn Agent + Send>) -> Self {
        self.fallback = Some(fallback);
        self
    }
    /// How many of the script's answers were given.
    pub fn used(&self) -> usize {
        self.next.min(self.script.len())
    }
}

impl Agent for ScriptedAgent {
    fn choose(&mut self, state: &GameState, options: &[DecisionOption]) -> usize {
        if let Some(&i) = self.script.get(self.next) {
            self.next += 1;
            return i;
        }
        self.next = self.script.len() + 1;
        match &mut self.fallback {
            Some(f) => f.choose(state, options),
            None => options.len(),
        }
    }
    fn refusal(&self) -> Option<String> {
        (self.next > self.script.len() && self.fallback.is_none()).then(|| {
            format!(
                "its script of {} answer(s) ran out, and it has no agent to fall back on",
                self.script.len()
            )
        })
    }
}
