//! Why an action, an occurrence or a reader was refused. A refused call changes nothing.

use serde::Serialize;
use std::fmt;

/// Why a call was refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum ActionError {
    /// No object has this id.
    NoSuchObject(u32),
    /// No player has this id.
    NoSuchPlayer(u8),
    /// A decision is pending: it must be answered before the game goes on (`GameState::decide`).
    DecisionPending,
    /// An answer was given while no decision was pending.
    NoDecisionPending,
    /// An answer that is not one of the pending decision's options.
    BadChoice(String),
    /// The object (named) has no spell ability to resolve.
    NotASpell(String),
    /// A target that is not legal for the spell (CR 601.2c, 608.2b).
    IllegalTarget {
        /// The spell's name.
        spell: String,
        /// The target's name.
        target: String,
    },
    /// A spell given another number of targets than it takes.
    WrongTargetCount {
        /// The spell's name.
        spell: String,
        /// How many targets it takes.
        expected: usize,
        /// How many it was given.
        got: usize,
    },
    /// An object (named) cannot be attached to itself (CR 301.5c, 303.4d).
    AttachToSelf(String),
    /// The state-based checks did not settle after 1000 rounds (a loop in the ruleset's checks).
    StateChecksLoop,
    /// An occurrence that cannot start: a bad event, argument or period, or one under way.
    BadOccurrence(String),
    /// No characteristic of the ruleset has this id.
    NoSuchCharacteristic(u16),
    /// No player property of the ruleset has this id.
    NoSuchProperty(u16),
    /// No zone of the ruleset has this id.
    NoSuchZone(u16),
    /// No object class of the content has this id.
    NoSuchClass(u32),
    /// No kind of counter of the ruleset has this id.
    NoSuchCounter(u16),
    /// No event kind of the ruleset has this id.
    NoSuchEvent(u16),
    /// No layer of the ruleset has this id.
    NoSuchLayer(u16),
    /// Attaching needs both objects in play (CR 701.3a: an Aura, Equipment or Fortification is
    /// attached to an object on the battlefield).
    NotInPlay(String),
    /// The game is over (CR 104.1): nothing more happens in it.
    GameOver,
}

impl fmt::Display for ActionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ActionError::NoSuchObject(i) => write!(f, "there is no object #{i}"),
            ActionError::NoSuchPlayer(i) => write!(f, "there is no player #{i}"),
            ActionError::DecisionPending => f.write_str("a decision is pending; answer it first"),
            ActionError::NoDecisionPending => f.write_str("no decision is pending"),
            ActionError::BadChoice(m) => write!(f, "that choice does not answer the request: {m}"),
            ActionError::BadOccurrence(m) => write!(f, "{m}"),
            ActionError::NoSuchCharacteristic(c) => write!(f, "no characteristic has id {c}"),
            ActionError::NoSuchProperty(p) => write!(f, "no player property has id {p}"),
            ActionError::NoSuchZone(z) => write!(f, "no zone has id {z}"),
            ActionError::NoSuchClass(c) => write!(f, "no object class has id {c}"),
            ActionError::NoSuchCounter(c) => write!(f, "no kind of counter has id {c}"),
            ActionError::NoSuchEvent(e) => write!(f, "no event kind has id {e}"),
            ActionError::NoSuchLayer(l) => write!(f, "no layer has id {l}"),
            ActionError::NotInPlay(n) => write!(f, "`{n}` is not in play"),
            ActionError::GameOver => f.write_str("the game is over"),
            ActionError::NotASpell(n) => write!(f, "`{n}` has no spell ability to resolve"),
            ActionError::IllegalTarget { spell, target } => {
                write!(f, "`{target}` is not a legal target for `{spell}`")
            }
            ActionError::WrongTargetCount {
                spell,
                expected,
                got,
            } => write!(f, "`{spell}` takes {expected} target(s), got {got}"),
            ActionError::AttachToSelf(n) => write!(f, "`{n}` cannot be attached to itself"),
            ActionError::StateChecksLoop => {
                f.write_str("state-based checks did not settle after 1000 rounds")
            }
        }
    }
}

impl std::error::Error for ActionError {}
