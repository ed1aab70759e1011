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
    /// The first effect (not characteristic-defining) applied in its layer.
    FirstByTimestamp {
        timestamp: u64,
    },
    /// Applied after the named effect, whose timestamp is earlier.
    AfterByTimestamp {
        timestamp: u64,
        previous: String,
        previous_timestamp: u64,
    },
    /// Waited until the effects it depends on had applied (seed 003, "Dependency").
    Dependency {
        timestamp: u64,
        on: Vec<DependsOn>,
    },
    /// In a dependency loop: its members apply in timestamp order (seed 003).
    Loop {
        timestamp: u64,
        members: Vec<String>,
    },
    /// After the layer's effects: symbols of categories tied to card types the object no longer
    /// has are removed (CR 205.1a, 205.3d).
    Categories,
}

/// An effect that another waited for, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DependsOn {
    pub effect: String,
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
                    "timestamp {timestamp}: the first effect applied in this layer"
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
            Reason::Dependency { timestamp, on } => {
                let list: Vec<String> = on
                    .iter()
                    .map(|d| {
                        format!(
                            "{} (timestamp {}; dependency: it {})",
                            d.effect, d.timestamp, d.why
                        )
                    })
                    .collect();
                write!(f, "timestamp {timestamp}, but after {}", list.join(", "))
            }
            Reason::Categories => f.write_str(
                "at the end of the layer: the ruleset's categories keep only the symbols of sets tied to its card types",
            ),
            Reason::Loop { timestamp, members } => write!(
                f,
                "timestamp {timestamp}: in a dependency loop of {}, applied in timestamp order",
                members.join(", ")
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

use crate::ids::{CharId, ObjectId};
use crate::layers::Derived;
use crate::state::GameState;

/// Prints how one characteristic got its value: base value, then each step in the order applied.
pub fn describe_char(state: &GameState, d: &Derived, o: ObjectId, c: CharId) -> String {
    let name = |p: crate::ids::PlayerId| state.player_name(p).to_string();
    let rs = &state.ruleset;
    let final_v = &d.sheet.objects[o.index()][c.index()];
    let mut out = format!("{} = {}\n", rs.char(c).name, final_v.display_with(&name));
    if let Some(e) = &d.explanation {
        let base = &e.base.objects[o.index()][c.index()];
        out.push_str(&format!("    base: {}\n", base.display_with(&name)));
        for s in &e.objects[o.index()][c.index()] {
            out.push_str(&format!(
                "    layer {} ({}): {} \"{}\": {} -> {}\n        why here: {}\n",
                s.layer,
                s.layer_name,
                s.source,
                s.text,
                s.before.display_with(&name),
                s.after.display_with(&name),
                s.reason
            ));
        }
    }
    out
}

/// Prints an object's zone, timestamp and every characteristic with how it was derived.
pub fn describe_object(state: &GameState, d: &Derived, o: ObjectId) -> String {
    let obj = state.object(o);
    let rs = &state.ruleset;
    let mut out = format!(
        "{} (object #{}, owner {}, in {}, timestamp {})\n",
        obj.name,
        o.0,
        state.player_name(obj.owner),
        rs.zone(obj.zone).name,
        obj.timestamp.0
    );
    for (i, _) in rs.characteristics.iter().enumerate() {
        let c = CharId(i as u16);
        out.push_str("  ");
        out.push_str(&describe_char(state, d, o, c));
    }
    out
}

/// Prints a player's properties with how each was derived.
pub fn describe_player(state: &GameState, d: &Derived, p: crate::ids::PlayerId) -> String {
    let rs = &state.ruleset;
    let mut out = format!("{} (player)\n", state.player_name(p));
    for (i, prop) in rs.props.iter().enumerate() {
        let v = &d.sheet.players[p.index()][i];
        out.push_str(&format!("  {} = {}\n", prop.name, v));
        if let Some(e) = &d.explanation {
            out.push_str(&format!("    base: {}\n", e.base.players[p.index()][i]));
            for s in &e.players[p.index()][i] {
                out.push_str(&format!(
                    "    layer {} ({}): {} \"{}\": {} -> {}\n        why here: {}\n",
                    s.layer, s.layer_name, s.source, s.text, s.before, s.after, s.reason
                ));
            }
        }
    }
    out
}
