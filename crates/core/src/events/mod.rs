//! The event core: every change of state is an occurrence of an event kind the ruleset declares,
//! taken through the timing points "before", "when" and "after" (and, for a period, "after it
//! begins" and "before it ends"). At each point the ruleset's timing procedure runs its steps:
//! negation, prevention and substitution; triggered effects; responses players choose to take.
//! Decisions along the way (which response comes next, take a Reaction or pass, targets) are
//! requests handed to the caller; the log records what happened and what answered each
//! occurrence, and why.

mod actions;
mod change;
mod describe;
pub mod kind;
pub mod occurrence;
pub(crate) mod procedure;
pub mod response;
mod runs;
mod state_checks;
pub mod tasks;

pub use kind::{Amount, EventKind, ParamDef, ParamKind, ParamOr, Primitive};
pub use occurrence::{Log, LogEntry, Logged, Occurrence, Responder, Why};
pub use procedure::Timing;
pub use response::{
    ArgExpr, Deed, DelayedDef, Lasting, Pattern, ResponseDef, ResponseKind, Trigger,
};
pub use tasks::ResponseOption;
