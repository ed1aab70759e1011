//! Actions: the only way a game state changes. Each action is checked in full before anything
//! changes, so a refused action leaves the state as it was; then the ruleset's state-based checks
//! run until none applies. This file says what an action is; `apply` carries it out.

use crate::model::condition::Subject;
use crate::model::ids::{ClassId, CounterId, ObjectId, PlayerId, PropId, ZoneId};
use serde::Serialize;
use std::sync::Arc;

/// A new object to put into a zone.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct NewObject {
    /// The object class it is an object of.
    pub class: ClassId,
    /// The name to refer to it by; defaults to the class name.
    pub name: Option<Arc<str>>,
    /// The player who owns it.
    pub owner: PlayerId,
    /// Defaults to the owner.
    pub controller: Option<PlayerId>,
    /// The zone it enters.
    pub zone: ZoneId,
    /// Choices made as it enters or is cast ("choose a creature type").
    pub choices: Vec<crate::model::value::Symbol>,
    /// For an object that enters as a copy (Clone): the object it copies.
    pub copy_of: Option<ObjectId>,
    /// Enters face down.
    pub face_down: bool,
    /// Enters attached to this object (an Aura put onto the battlefield attached): attached before
    /// the state-based checks, with a new timestamp as it becomes attached.
    pub attached_to: Option<ObjectId>,
}

impl NewObject {
    /// An object of `class` for `owner` entering `zone`, with no choices.
    pub fn new(class: ClassId, owner: PlayerId, zone: ZoneId) -> Self {
        NewObject {
            class,
            name: None,
            owner,
            controller: None,
            zone,
            choices: Vec::new(),
            copy_of: None,
            face_down: false,
            attached_to: None,
        }
    }
}

/// A request of the embedder to change the game, carried out by
/// [`GameState::apply`](crate::GameState::apply) as occurrences of the built-in events. It is
/// checked in full first: a refused action changes nothing.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub enum Action {
    /// Objects enter a zone. More than one entering an in-play zone at once get their timestamps in
    /// an order the active player chooses (CR 613.7).
    Create(Vec<NewObject>),
    /// An object changes zones: it becomes a new object with a new timestamp, loses its counters,
    /// and whatever was attached to it falls off.
    Move {
        /// The object that moves.
        object: ObjectId,
        /// The zone it moves to.
        zone: ZoneId,
    },
    /// Objects change zones at once (the moves of one round of state-based checks).
    MoveTogether(Vec<(ObjectId, ZoneId)>),
    /// Attach to another object; a new timestamp unless already attached to it (CR 613.7e).
    Attach {
        /// The object that becomes attached (an Aura, an Equipment).
        object: ObjectId,
        /// The object it becomes attached to.
        to: ObjectId,
    },
    /// Put (or with a negative count, remove) counters.
    AddCounters {
        /// The object the counters go on or come off.
        object: ObjectId,
        /// The counter kind.
        counter: CounterId,
        /// How many; a negative count takes that many off.
        count: i64,
    },
    /// A spell resolves: its continuous effects start, its one-shot effects happen. `choices` are
    /// made as it is cast (Mind Bend's two words); empty keeps the object's own.
    Resolve {
        /// The spell object that resolves.
        spell: ObjectId,
        /// The player who cast it: "you" for its effects.
        controller: PlayerId,
        /// Its object targets, in the order of its `target` lines.
        targets: Vec<ObjectId>,
        /// Choices made as it is cast; empty keeps the object's own.
        choices: Vec<crate::model::value::Symbol>,
    },
    /// `Resolve` with targets that may be objects or players, in the order the spell's `target`
    /// lines are written.
    ResolveTargeting {
        /// The spell object that resolves.
        spell: ObjectId,
        /// The player who cast it: "you" for its effects.
        controller: PlayerId,
        /// Its targets, objects or players, in the order of its `target` lines.
        targets: Vec<Subject>,
        /// Choices made as it is cast; empty keeps the object's own.
        choices: Vec<crate::model::value::Symbol>,
    },
    /// End every created effect whose source is this object.
    EndEffectsOf {
        /// The object whose created effects end.
        source: ObjectId,
    },
    /// Turn face down or face up; either gives a new timestamp (CR 613.7f).
    TurnFaceDown {
        /// The object that turns face down.
        object: ObjectId,
    },
    /// Turn a face-down object face up (CR 708.8).
    TurnFaceUp {
        /// The object that turns face up.
        object: ObjectId,
    },
    /// Merge an object with a permanent (mutate): under it, the permanent gains its abilities; over
    /// it, the permanent takes its copiable values and keeps its own abilities (CR 613.2a).
    Merge {
        /// The object that merges (the mutating creature spell).
        object: ObjectId,
        /// The permanent it merges with.
        into: ObjectId,
        /// Whether it goes under the permanent (`true`) or over it.
        under: bool,
    },
    /// Set a player's base property value (life paid or gained).
    SetProperty {
        /// The player whose property is set.
        player: PlayerId,
        /// The property.
        prop: PropId,
        /// The new base value; `None`: no number.
        value: Option<i64>,
    },
    /// A player loses the game ("that player loses the game", CR 104.3e) and leaves it.
    Lose {
        /// Who loses.
        player: PlayerId,
    },
    /// A player's cards in a zone are put in a random order (CR 701.20a), drawn from the game's
    /// seeded random source.
    Shuffle {
        /// Whose cards.
        player: PlayerId,
        /// The zone.
        zone: ZoneId,
    },
    /// The turn ends: "until end of turn" effects end and the next player becomes active.
    EndTurn,
}

/// What an action did besides its own change.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Outcome {
    /// The objects the action created, in the order of its `NewObject`s.
    pub created: Vec<ObjectId>,
    /// Objects moved by state-based checks, with the check's name.
    pub state_checks: Vec<(ObjectId, String)>,
}

impl Action {
    /// `Resolve` as the `ResolveTargeting` it stands for (its object targets as subjects); any
    /// other action as it is.
    pub(crate) fn targeting(self) -> Action {
        match self {
            Action::Resolve {
                spell,
                controller,
                targets,
                choices,
            } => Action::ResolveTargeting {
                spell,
                controller,
                targets: targets.into_iter().map(Subject::Object).collect(),
                choices,
            },
            a => a,
        }
    }
}
