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

/// Hooks for tests only (cargo feature `test-hooks`): the event procedure's shortcuts (and the
/// state-based checks') turned off on this thread, so a test can compare what they give with the full procedure.
#[cfg(feature = "test-hooks")]
pub mod hooks {
    use std::cell::Cell;

    thread_local! {
        static IN_FULL: Cell<bool> = const { Cell::new(false) };
    }

    /// While on, this thread's games take every step of the timing procedure in full.
    #[doc(hidden)]
    pub fn procedure_in_full(on: bool) {
        IN_FULL.with(|f| f.set(on));
    }

    pub(crate) fn in_full() -> bool {
        IN_FULL.with(|f| f.get())
    }
}

/// Whether the event procedure may take its shortcuts (always, but in a test that turned them
/// off with `hooks::procedure_in_full`).
pub(crate) fn shortcuts() -> bool {
    #[cfg(feature = "test-hooks")]
    {
        !hooks::in_full()
    }
    #[cfg(not(feature = "test-hooks"))]
    {
        true
    }
}
