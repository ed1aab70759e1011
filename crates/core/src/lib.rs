//! rulecraft core: game state, characteristics, continuous effects applied in layers, and explanations.
//!
//! The core holds no file or terminal I/O. A game is a [`ruleset::Ruleset`] plus [`content::Content`];
//! a [`state::GameState`] changes only through [`action::Action`]s, and every derived value is computed by
//! [`layers::derive`] with an [`explain::Explanation`] of each effect that applied.

pub mod action;
pub mod condition;
pub mod content;
pub mod decision;
mod durations;
pub mod effect;
pub mod error;
pub mod events;
pub mod explain;
pub mod ids;
pub mod layers;
pub mod object;
pub mod ruleset;
pub mod state;
pub mod timing;
pub mod value;

pub use action::{Action, ActionError};
pub use decision::{Choice, DecisionRequest};
pub use events::{LogEntry, Occurrence};
pub use ids::{CharId, ClassId, EventId, ObjectId, PlayerId, PropId, Timestamp, ZoneId};
pub use state::GameState;
pub use value::{Ability, AbilityKind, Arg, Symbol, SymbolSet, Value};
