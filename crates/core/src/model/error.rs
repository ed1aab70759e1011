//! Why an action, an occurrence or a reader was refused. A refused call changes nothing.

use serde::Serialize;
use std::fmt;

/// Why a call was refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum ActionError {
    NoSuchObject(u32),
    NoSuchPlayer(u8),
    DecisionPending,
    NoDecisionPending,
    BadChoice(String),
    NotASpell(String),
    IllegalTarget {
        spell: String,
        target: String,
    },
    WrongTargetCount {
        spell: String,
        expected: usize,
        got: usize,
    },
    AttachToSelf(String),
    StateChecksLoop,
    /// An occurrence that cannot start: a bad event, argument or period, or one under way.
    BadOccurrence(String),
    NoSuchCharacteristic(u16),
    NoSuchProperty(u16),
    NoSuchZone(u16),
    NoSuchClass(u32),
    NoSuchCounter(u16),
    NoSuchEvent(u16),
    /// Attaching needs both objects in play (CR 701.3a: an Aura, Equipment or Fortification is
    /// attached to an object on the battlefield).
    NotInPlay(String),
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
            ActionError::NotInPlay(n) => write!(f, "`{n}` is not in play"),
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
