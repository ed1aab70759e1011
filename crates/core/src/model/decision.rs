//! Decisions: requests the engine hands to its caller (a test, an AI, a UI, a server) and the
//! choices that answer them. The engine never calls back; it waits with the request pending, and
//! an answer that is not one of the request's options is an error that changes nothing.

use crate::model::condition::Subject;
use crate::model::ids::{ObjectId, PlayerId};
use crate::model::occurrence::Occurrence;
use serde::Serialize;
use std::sync::Arc;

/// One response a decision offers: its source, its rules text, and the occurrence it answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ResponseOption {
    /// The object whose response it is; `None` for a rulebook rule (or a delayed effect set up with
    /// no source).
    pub source: Option<ObjectId>,
    /// The response's rules text.
    pub text: Arc<str>,
    /// The occurrence it would answer.
    pub answering: Occurrence,
}

/// What the engine needs a player to decide before the game can go on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum DecisionRequest {
    /// CR 613.7: objects that would receive a timestamp simultaneously are ordered by the active
    /// player. The answer lists every object once, earliest first.
    OrderTimestamps {
        /// The player who orders: the active player.
        player: PlayerId,
        /// The objects to order, each once.
        objects: Vec<ObjectId>,
    },
    /// Several responses could happen next at one step of a timing point: the player picks the
    /// one that happens now (`Choice::Pick`); the others stay, each to happen exactly once.
    ChooseNext {
        /// The player who picks: the one who orders this occurrence's responses.
        player: PlayerId,
        /// The timing step's name as the ruleset declares it (`A`, `B`).
        step: Arc<str>,
        /// The responses that could come next; `Choice::Pick(i)` takes `options[i]`.
        options: Vec<ResponseOption>,
    },
    /// An action round: the player takes one of these responses (`Choice::Pick`) or passes
    /// (`Choice::Pass`).
    React {
        /// The player who takes a response or passes.
        player: PlayerId,
        /// The timing step's name as the ruleset declares it (`C`).
        step: Arc<str>,
        /// The responses the player may take now; `Choice::Pick(i)` takes `options[i]`.
        options: Vec<ResponseOption>,
    },
    /// One text asks several players for choices: which player chooses next (`Choice::Pick`).
    OrderChoices {
        /// The player who picks: the one who orders conflicts.
        player: PlayerId,
        /// The rules text of the response whose targets are being chosen.
        response: Arc<str>,
        /// The player who chooses each target still to choose; `Choice::Pick(i)` lets `choosers[i]`
        /// choose next.
        choosers: Vec<PlayerId>,
    },
    /// A response's optional costs: pay them (`Choice::Pick(0)`) or decline (`Choice::Pass`), and
    /// the response does nothing more.
    PayCost {
        /// The player who pays: the response's "you", or the player who orders conflicts where it
        /// has none.
        player: PlayerId,
        /// The rules text of the response.
        response: Arc<str>,
        /// The costs, each an occurrence that must happen for the response to go on.
        costs: Vec<crate::model::occurrence::Occurrence>,
    },
    /// The game asks a player what to play: in a phase's neutral state (begin a batch, play a
    /// land, or pass: when every player passes in a row the phase ends) or adding to a batch
    /// (add an effect, or pass: when every player passes in a row the batch resolves).
    /// `Choice::Pick(i)` plays `options[i]`; `Choice::Pass` passes.
    Play {
        /// The player who plays or passes.
        player: PlayerId,
        /// Whether a batch is being built (else the phase is neutral).
        in_batch: bool,
        /// The legal plays, each with a readable label.
        options: Vec<crate::model::batch::PlayOption>,
    },
    /// A response's target: one of these (`Choice::Target`).
    ChooseTarget {
        /// The player who chooses the target.
        player: PlayerId,
        /// The rules text of the response.
        response: Arc<str>,
        /// The legal targets, objects or players.
        options: Vec<Subject>,
    },
    /// CR 601.2b: the number X of a spell being cast, announced before its targets and costs:
    /// one of these (`Choice::Number`), each a value whose costs can be paid.
    ChooseNumber {
        /// The player who announces it: the caster.
        player: PlayerId,
        /// The rules text of the spell.
        response: Arc<str>,
        /// The values that may be announced, least first.
        options: Vec<i64>,
    },
}

impl DecisionRequest {
    /// The player who must answer.
    pub fn player(&self) -> PlayerId {
        match self {
            DecisionRequest::OrderTimestamps { player, .. }
            | DecisionRequest::ChooseNext { player, .. }
            | DecisionRequest::React { player, .. }
            | DecisionRequest::OrderChoices { player, .. }
            | DecisionRequest::PayCost { player, .. }
            | DecisionRequest::Play { player, .. }
            | DecisionRequest::ChooseTarget { player, .. }
            | DecisionRequest::ChooseNumber { player, .. } => *player,
        }
    }

    /// Every legal answer, except for `OrderTimestamps` (any order of its objects).
    pub fn choices(&self) -> Vec<Choice> {
        let mut out = Vec::with_capacity(self.choice_count());
        self.each_choice(|c| out.push(c));
        out
    }

    /// How many answers [`DecisionRequest::choices`] lists.
    pub(crate) fn choice_count(&self) -> usize {
        match self {
            DecisionRequest::OrderTimestamps { .. } => 1,
            DecisionRequest::ChooseNext { options, .. } => options.len(),
            DecisionRequest::Play { options, .. } => options.len() + 1,
            DecisionRequest::React { options, .. } => options.len() + 1,
            DecisionRequest::OrderChoices { choosers, .. } => choosers.len(),
            DecisionRequest::PayCost { .. } => 2,
            DecisionRequest::ChooseTarget { options, .. } => options.len(),
            DecisionRequest::ChooseNumber { options, .. } => options.len(),
        }
    }

    /// [`DecisionRequest::choices`] one by one, in order, without a list.
    pub(crate) fn each_choice(&self, mut f: impl FnMut(Choice)) {
        match self {
            DecisionRequest::OrderTimestamps { objects, .. } => f(Choice::Order(objects.clone())),
            DecisionRequest::ChooseNext { options, .. } => {
                (0..options.len()).for_each(|i| f(Choice::Pick(i)))
            }
            DecisionRequest::Play { options, .. } => {
                (0..options.len()).for_each(|i| f(Choice::Pick(i)));
                f(Choice::Pass)
            }
            DecisionRequest::React { options, .. } => {
                (0..options.len()).for_each(|i| f(Choice::Pick(i)));
                f(Choice::Pass)
            }
            DecisionRequest::OrderChoices { choosers, .. } => {
                (0..choosers.len()).for_each(|i| f(Choice::Pick(i)))
            }
            DecisionRequest::PayCost { .. } => {
                f(Choice::Pick(0));
                f(Choice::Pass)
            }
            DecisionRequest::ChooseTarget { options, .. } => {
                options.iter().for_each(|t| f(Choice::Target(*t)))
            }
            DecisionRequest::ChooseNumber { options, .. } => {
                options.iter().for_each(|n| f(Choice::Number(*n)))
            }
        }
    }
}

/// An answer to a [`DecisionRequest`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Choice {
    /// An order of the objects in the request, earliest first.
    Order(Vec<ObjectId>),
    /// The option of that index.
    Pick(usize),
    /// Take no Reaction.
    Pass,
    /// This object or player.
    Target(Subject),
    /// This number (the X of a spell: CR 601.2b).
    Number(i64),
}
