//! Explanations: for each derived value, its base value and every effect that changed it, in the
//! order applied, with the layer, the timestamp and why it came where it did.

use crate::condition::Sheet;
use crate::value::Value;
use serde::Serialize;
use std::fmt;

/// Why an effect applied where it did within its layer (seed 003: characteristic-defining abilities
/// first, then timestamp order; counters where the ruleset puts them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Reason {
    CharacteristicDefining,
    /// The first effect by timestamp in its layer.
    FirstByTimestamp { timestamp: u64 },
    /// Applied after the named effect, whose timestamp is earlier.
    AfterByTimestamp {
        timestamp: u64,
        previous: String,
        previous_timestamp: u64,
    },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::CharacteristicDefining => {
                f.write_str("characteristic-defining ability: applied first in its layer")
            }
            Reason::FirstByTimestamp { timestamp } => {
                write!(f, "timestamp {timestamp}: earliest in this layer")
            }
            Reason::AfterByTimestamp {
                timestamp,
                previous,
                previous_timestamp,
            } => write!(
                f,
                "timestamp {timestamp}: after {previous} (timestamp {previous_timestamp})"
            ),
        }
    }
}

/// One effect's change to one value.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// Layer label and name, such as `7c` and `modifying`.
    pub layer: String,
    pub layer_name: String,
    /// The object the effect comes from.
    pub source: String,
    /// The effect's rules text, or the counters' description.
    pub text: String,
    pub timestamp: u64,
    pub reason: Reason,
    pub before: Value,
    pub after: Value,
}

/// Every step for every object characteristic and player property.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Explanation {
    pub base: Sheet,
    /// By object, then characteristic.
    pub objects: Vec<Vec<Vec<Step>>>,
    /// By player, then property.
    pub players: Vec<Vec<Vec<Step>>>,
}
