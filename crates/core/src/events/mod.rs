//! The event core: every change of state is an occurrence of an event kind the ruleset declares,
//! taken through the timing points "before", "when" and "after" (and, for a period, "after it
//! begins" and "before it ends"). At each point the ruleset's timing procedure runs its steps:
//! negation, prevention and substitution; triggered effects; responses players choose to take.
//! Decisions along the way (which response comes next, take a Reaction or pass, targets) are
//! requests handed to the caller; the log records what happened and what answered each
//! occurrence, and why.

mod actions;
mod batch;
mod change;
mod describe;
pub(crate) mod durations;
pub(crate) mod procedure;
mod runs;
mod state_checks;
