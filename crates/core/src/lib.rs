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
#![warn(missing_docs)]

pub mod action;
pub mod condition;
pub mod events;
pub mod explain;
mod kernel;
pub mod layers;
pub mod model;
pub mod play;
pub mod state;

pub use action::options::DecisionOption;
pub use explain::accounting::{Accounting, CounterStep};
pub use model::action::{Action, NewObject, Outcome};
pub use model::batch::PlayOption;
pub use model::condition::Subject;
pub use model::content::Content;
pub use model::decision::{Choice, DecisionRequest, ResponseOption};
pub use model::derived::Derived;
pub use model::error::ActionError;
pub use model::ids::{CharId, ClassId, EventId, ObjectId, PlayerId, PropId, Timestamp, ZoneId};
pub use model::occurrence::{LogEntry, Logged, Occurrence};
pub use model::ruleset::Ruleset;
pub use model::value::{Ability, AbilityKind, Arg, Symbol, SymbolSet, Value};
pub use play::agents::{Agent, FirstAgent, RandomAgent, ScriptedAgent};
pub use play::playout::{
    play_game, play_game_limited, play_many, play_out, GameSummary, ManySummary, Plan, Start,
};
pub use state::save::{SaveError, SAVE_MAGIC, SAVE_VERSION};
pub use state::GameState;
