//! rulecraft core: game state, characteristics, continuous effects applied in layers, events and
//! their timing, and explanations.
//!
//! The core holds no file or terminal I/O. A game is a [`Ruleset`] plus [`Content`]; a
//! [`GameState`] changes only through [`Action`]s ([`GameState::apply`]), occurrences of the
//! ruleset's events ([`GameState::occur`]) and answers to the decisions it hands out
//! ([`GameState::decide`], with [`DecisionRequest::choices`] listing the legal ones). Every derived
//! value is computed by the layer system ([`GameState::derived`]) and can be explained
//! ([`GameState::explain`]); every occurrence is logged with why each response came when it did
//! ([`GameState::log`]).
#![forbid(unsafe_code)]

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
mod kernel;
pub mod layers;
pub mod object;
pub mod ruleset;
pub mod state;
pub mod timing;
pub mod value;

pub use action::{Action, ActionError, NewObject, Outcome};
pub use condition::Subject;
pub use content::Content;
pub use decision::{Choice, DecisionRequest};
pub use events::{LogEntry, Logged, Occurrence, ResponseOption};
pub use ids::{CharId, ClassId, EventId, ObjectId, PlayerId, PropId, Timestamp, ZoneId};
pub use ruleset::Ruleset;
pub use state::derived::Derived;
pub use state::save::{SaveError, SAVE_MAGIC, SAVE_VERSION};
pub use state::GameState;
pub use value::{Ability, AbilityKind, Arg, Symbol, SymbolSet, Value};
