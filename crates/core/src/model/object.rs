//! Game objects: cards, units, buildings, each with its zone, owner, controller, counters,
//! attachment and timestamp. Characteristics are derived, not stored here (see `layers`).

use crate::model::ids::{ClassId, CounterId, ObjectId, PlayerId, Timestamp, ZoneId};
use crate::model::value::Symbol;
use serde::Serialize;
use std::sync::Arc;

/// Counters of one kind placed at one time; their timestamp orders them in a layer that applies
/// counters by timestamp (layer 7c, CR 613.4c).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CounterPlacement {
    /// The counter kind.
    pub kind: CounterId,
    /// How many counters of this placement are left (always more than 0).
    pub count: i64,
    /// When they were put on; a keyword counter's is the latest time one of its kind was put on the
    /// object (CR 122.1).
    pub timestamp: Timestamp,
}

/// An object of the game (a card, a unit, a building): its class, owner, base controller, zone,
/// counters, attachment and state. Its characteristics are derived, not stored
/// ([`GameState::characteristic`](crate::GameState::characteristic)).
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct GameObject {
    /// Its id, which it keeps when it changes zones (its `incarnation` changes instead).
    pub id: ObjectId,
    /// The name the game refers to this object by (its class name, or a scenario's alias).
    pub name: Arc<str>,
    /// Its object class, whose printed values are its base characteristics.
    pub class: ClassId,
    /// The player who owns it.
    pub owner: PlayerId,
    /// The base controller: who put it into play. Control effects change the derived controller.
    pub controller: PlayerId,
    /// The zone it is in.
    pub zone: ZoneId,
    /// CR 613.7d-e: an object receives a timestamp when it enters a zone, and an Aura or Equipment a
    /// new one when it becomes attached.
    pub timestamp: Timestamp,
    /// Counts zone changes: an object that changes zones is a new object to effects that locked it.
    pub incarnation: u32,
    /// Its counters, one entry per placement, in the order placed.
    pub counters: Vec<CounterPlacement>,
    /// The object it is attached to (an Aura's enchanted object, an Equipment's equipped creature,
    /// a card linked to the object that exiled it), if any.
    pub attached_to: Option<ObjectId>,
    /// Choices made as the object entered or was cast ("choose a creature type"; Mind Bend's two
    /// words).
    pub choices: Vec<Symbol>,
    /// Face down (layer 1b, CR 613.2b): the ruleset's face-down values apply.
    pub face_down: bool,
    /// Its state ("bowed", "dishonored"): the base value of the ruleset's `state`
    /// characteristic, changed only by occurrences of events.
    pub state: crate::model::value::SymbolSet,
}

impl GameObject {
    /// How many counters of a kind; `None` if the count does not fit a number.
    pub fn counter_count(&self, kind: CounterId) -> Option<i64> {
        self.counters
            .iter()
            .filter(|c| c.kind == kind)
            .try_fold(0i64, |a, c| a.checked_add(c.count))
    }
}
