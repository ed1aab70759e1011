//! Decisions: requests the engine hands to its caller (a test, an AI, a UI, a server) and the
//! choices that answer them. The engine never calls back; it waits with the request pending.

use crate::ids::{ObjectId, PlayerId};
use serde::Serialize;

/// What the engine needs a player to decide before the game can go on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum DecisionRequest {
    /// CR 613.7: objects that would receive a timestamp simultaneously are ordered by the active
    /// player. The answer lists every object once, earliest first.
    OrderTimestamps {
        player: PlayerId,
        objects: Vec<ObjectId>,
    },
}

impl DecisionRequest {
    /// The player who must answer.
    pub fn player(&self) -> PlayerId {
        match self {
            DecisionRequest::OrderTimestamps { player, .. } => *player,
        }
    }
}

/// An answer to a [`DecisionRequest`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Choice {
    /// An order of the objects in the request, earliest first.
    Order(Vec<ObjectId>),
}
