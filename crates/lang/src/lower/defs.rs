//! The definitions of ids the lowering itself looked up by name in the ruleset it is building
//! against (`Ruleset::char_id`, `event_id`): those ids always name an entry. The core's readers
//! (`Ruleset::char`, `event`) return an error for other ids.

use rulecraft_core::model::event::EventKind;
use rulecraft_core::model::ruleset::{CharDef, Ruleset};
use rulecraft_core::{CharId, EventId};

/// The characteristic of an id looked up in `rs`.
pub(crate) fn char_def(rs: &Ruleset, id: CharId) -> &CharDef {
    &rs.characteristics[id.index()]
}

/// The event kind of an id looked up in `rs`.
pub(crate) fn event_def(rs: &Ruleset, id: EventId) -> &EventKind {
    &rs.events[id.index()]
}
