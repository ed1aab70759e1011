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
    pub source: Option<ObjectId>,
    pub text: Arc<str>,
    pub answering: Occurrence,
}

/// What the engine needs a player to decide before the game can go on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum DecisionRequest {
    /// CR 613.7: objects that would receive a timestamp simultaneously are ordered by the active
    /// player. The answer lists every object once, earliest first.
    OrderTimestamps {
        player: PlayerId,
        objects: Vec<ObjectId>,
    },
    /// Several responses could happen next at one step of a timing point: the player picks the
    /// one that happens now (`Choice::Pick`); the others stay, each to happen exactly once.
    ChooseNext {
        player: PlayerId,
        step: Arc<str>,
        options: Vec<ResponseOption>,
    },
    /// An action round: the player takes one of these responses (`Choice::Pick`) or passes
    /// (`Choice::Pass`).
    React {
        player: PlayerId,
        step: Arc<str>,
        options: Vec<ResponseOption>,
    },
    /// One text asks several players for choices: which player chooses next (`Choice::Pick`).
    OrderChoices {
        player: PlayerId,
        response: Arc<str>,
        choosers: Vec<PlayerId>,
    },
    /// A response's optional costs: pay them (`Choice::Pick(0)`) or decline (`Choice::Pass`), and
    /// the response does nothing more.
    PayCost {
        player: PlayerId,
        response: Arc<str>,
        costs: Vec<crate::model::occurrence::Occurrence>,
    },
    /// A response's target: one of these (`Choice::Target`).
    ChooseTarget {
        player: PlayerId,
        response: Arc<str>,
        options: Vec<Subject>,
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
            | DecisionRequest::ChooseTarget { player, .. } => *player,
        }
    }

    /// Every legal answer, except for `OrderTimestamps` (any order of its objects).
    pub fn choices(&self) -> Vec<Choice> {
        match self {
            DecisionRequest::OrderTimestamps { objects, .. } => {
                vec![Choice::Order(objects.clone())]
            }
            DecisionRequest::ChooseNext { options, .. } => {
                (0..options.len()).map(Choice::Pick).collect()
            }
            DecisionRequest::React { options, .. } => (0..options.len())
                .map(Choice::Pick)
                .chain(std::iter::once(Choice::Pass))
                .collect(),
            DecisionRequest::OrderChoices { choosers, .. } => {
                (0..choosers.len()).map(Choice::Pick).collect()
            }
            DecisionRequest::PayCost { .. } => vec![Choice::Pick(0), Choice::Pass],
            DecisionRequest::ChooseTarget { options, .. } => {
                options.iter().map(|t| Choice::Target(*t)).collect()
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
}
