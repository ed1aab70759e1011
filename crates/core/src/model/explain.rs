//! Explanations: for each derived value, its base value and every effect that changed it, in the
//! order applied, with the layer, the timestamp and why it came where it did.

use crate::model::sheet::Sheet;
use crate::model::value::Value;
use serde::Serialize;
use std::fmt;

/// Why an effect applied to a value where it did within its layer (CR 613.3-613.8:
/// characteristic-defining abilities first, then timestamp order, unless an effect depends on
/// another; counters where the ruleset puts them). The effects a reason names are only those that
/// changed the same value earlier in the layer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Reason {
    /// A characteristic-defining ability's effect: applied first in its layer (CR 613.3, 613.4a).
    CharacteristicDefining,
    /// The first effect (not characteristic-defining) to change this value in its layer.
    FirstByTimestamp {
        /// The effect's timestamp (CR 613.7).
        timestamp: u64,
    },
    /// Changed this value after the named effect, whose timestamp is earlier.
    AfterByTimestamp {
        /// The effect's timestamp (CR 613.7).
        timestamp: u64,
        /// The effect that changed this value just before it in the layer, by name.
        previous: String,
        /// That effect's timestamp.
        previous_timestamp: u64,
    },
    /// Waited until the effects it depends on had applied (CR 613.8a-b): `on`, those of them that
    /// changed this value earlier in the layer; `others`, those that changed other values only.
    Dependency {
        /// The effect's timestamp (CR 613.7).
        timestamp: u64,
        /// The effects it depends on that changed this value earlier in the layer.
        on: Vec<DependsOn>,
        /// The effects it depends on that changed other values only.
        others: Vec<DependsOn>,
    },
    /// A member of a dependency loop: the loop's effects apply in timestamp order (CR 613.8b),
    /// the order reevaluated after each (CR 613.8c). `previous`: the effect that changed this
    /// value just before in the layer, if any.
    Loop {
        /// The effect's timestamp (CR 613.7).
        timestamp: u64,
        /// The loop's effects, by name.
        members: Vec<String>,
        /// The effect that changed this value just before in the layer, by name with its timestamp,
        /// if any.
        previous: Option<(String, u64)>,
    },
    /// After the layer's effects: symbols of categories tied to card types the object no longer
    /// has are removed (CR 205.1a, 205.3d).
    Categories,
}

impl Reason {
    /// The reason as it reads for one value, given that value's steps so far (`earlier`): only
    /// the effects that changed it earlier in the same layer are named.
    pub(crate) fn for_value(&self, earlier: &[Step], layer: &str) -> Reason {
        let in_layer: Vec<&Step> = earlier
            .iter()
            .filter(|s| s.layer == layer && s.reason != Reason::Categories)
            .collect();
        let last = in_layer.last().map(|s| (s.label.clone(), s.timestamp));
        match self {
            Reason::FirstByTimestamp { timestamp } | Reason::AfterByTimestamp { timestamp, .. } => {
                match last {
                    None => Reason::FirstByTimestamp {
                        timestamp: *timestamp,
                    },
                    Some((previous, previous_timestamp)) => Reason::AfterByTimestamp {
                        timestamp: *timestamp,
                        previous,
                        previous_timestamp,
                    },
                }
            }
            Reason::Dependency { timestamp, on, .. } => {
                let changed = |d: &DependsOn| {
                    in_layer
                        .iter()
                        .any(|s| s.label == d.effect && s.timestamp == d.timestamp)
                };
                let (here, others): (Vec<DependsOn>, Vec<DependsOn>) =
                    on.iter().cloned().partition(|d| changed(d));
                Reason::Dependency {
                    timestamp: *timestamp,
                    on: here,
                    others,
                }
            }
            Reason::Loop {
                timestamp, members, ..
            } => Reason::Loop {
                timestamp: *timestamp,
                members: members.clone(),
                previous: last,
            },
            r => r.clone(),
        }
    }
}

/// An effect that another waited for, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DependsOn {
    /// The effect waited for, by name: its source's name, or the counters.
    pub effect: String,
    /// Its timestamp.
    pub timestamp: u64,
    /// "changes what it applies to", "changes whether it exists", "changes what it does".
    pub why: String,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::CharacteristicDefining => {
                f.write_str("characteristic-defining ability: applied first in its layer")
            }
            Reason::FirstByTimestamp { timestamp } => {
                write!(
                    f,
                    "timestamp {timestamp}: the first effect in this layer to change this value"
                )
            }
            Reason::AfterByTimestamp {
                timestamp,
                previous,
                previous_timestamp,
            } => write!(
                f,
                "timestamp {timestamp}: after {previous} (timestamp {previous_timestamp})"
            ),
            Reason::Dependency {
                timestamp,
                on,
                others,
            } => {
                let list = |l: &[DependsOn]| -> String {
                    l.iter()
                        .map(|d| {
                            format!(
                                "{} (timestamp {}; dependency: it {})",
                                d.effect, d.timestamp, d.why
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                write!(f, "timestamp {timestamp}")?;
                if !on.is_empty() {
                    write!(f, ", but after {}", list(on))?;
                }
                if !others.is_empty() {
                    let sep = if on.is_empty() { ":" } else { ";" };
                    let which = if others.len() == 1 {
                        "which did not change this value"
                    } else {
                        "none of which changed this value"
                    };
                    write!(f, "{sep} it waited for {}, {which}", list(others))?;
                }
                Ok(())
            }
            Reason::Categories => f.write_str(
                "at the end of the layer: the ruleset's categories keep only the symbols of sets tied to its card types",
            ),
            Reason::Loop {
                timestamp,
                members,
                previous,
            } => {
                write!(
                    f,
                    "timestamp {timestamp}: in the dependency loop of {}, whose effects apply in timestamp order",
                    members.join(", ")
                )?;
                match previous {
                    Some((p, t)) => write!(f, "; after {p} (timestamp {t})"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// One effect's change to one value.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// Layer label and name, such as `7c` and `modifying`.
    pub layer: String,
    /// The layer's name, such as `modifying` (`layer` holds its label).
    pub layer_name: String,
    /// The object the effect comes from.
    pub source: String,
    /// The effect's name in reasons: its source's name, or the counters ("Lamb's 1 +1/+1
    /// counter").
    pub label: String,
    /// The effect's rules text, or the counters' description.
    pub text: String,
    /// The effect's timestamp; for counters, when they were put on.
    pub timestamp: u64,
    /// Why it applied here in its layer.
    pub reason: Reason,
    /// The value before this step.
    pub before: Value,
    /// The value after it.
    pub after: Value,
}

/// Every step for every object characteristic and player property.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Explanation {
    /// The base values, before any layer: printed values, base controllers, base player properties.
    pub base: Sheet,
    /// By object, then characteristic.
    pub objects: Vec<Vec<Vec<Step>>>,
    /// By player, then property.
    pub players: Vec<Vec<Vec<Step>>>,
}
