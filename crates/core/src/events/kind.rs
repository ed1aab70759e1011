//! Event kinds, as the ruleset declares them: their parameters and the changes of state an
//! occurrence makes. The changes are the engine's fixed vocabulary; every game's events are made
//! of them.

use crate::ids::{CharId, CounterId, PropId, ZoneId};
use crate::value::Symbol;
use serde::Serialize;
use std::sync::Arc;

/// What a parameter of an event holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ParamKind {
    Object,
    Player,
    Number,
}

impl ParamKind {
    pub fn name(self) -> &'static str {
        match self {
            ParamKind::Object => "object",
            ParamKind::Player => "player",
            ParamKind::Number => "number",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct ParamDef {
    pub name: Arc<str>,
    pub kind: ParamKind,
}

/// A number a change uses: one of the event's number parameters, or a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Amount {
    Param(u8),
    Const(i64),
}

/// One change of state. Parameters are indices into the occurrence's arguments.
#[derive(Clone, Debug, Serialize)]
pub enum Primitive {
    /// Add (`on`) or remove a symbol from an object's state characteristic ("bows": `bowed`).
    State {
        object: u8,
        char: CharId,
        symbol: Symbol,
        on: bool,
    },
    /// Add to (or with `negative`, subtract from) a player's property.
    Property {
        player: u8,
        prop: PropId,
        amount: Amount,
        negative: bool,
    },
    /// Move an object to a zone: it becomes a new object (CR 400.7).
    Move { object: u8, zone: ZoneId },
    /// Put counters on an object (a negative amount removes them).
    Counters {
        object: u8,
        counter: CounterId,
        amount: Amount,
    },
}

/// An event kind: "a Personality bows", "a player gains Honor", "the Dynasty Phase".
#[derive(Clone, Debug, Serialize)]
pub struct EventKind {
    pub name: Arc<str>,
    pub params: Vec<ParamDef>,
    /// What an occurrence changes, in order. An occurrence whose every change would change
    /// nothing (bowing a bowed card) fails: it does not happen, and nothing responds to it.
    pub changes: Vec<Primitive>,
    /// The number parameter that is the size of a change ("gains 2 Honor"): a change reduced to
    /// zero at the "before" point is no longer an occurrence of this kind afterwards.
    pub amount: Option<u8>,
    /// A period ("your Dynasty Phase", "a duel"): it begins, things happen within it, it ends.
    pub period: bool,
    /// A turn: while it lasts, its player parameter is the active player; between turns the player
    /// who takes the next turn orders conflicts.
    pub turn: bool,
    /// The player parameter who orders the responses to an occurrence of this kind, instead of
    /// the active player ("CE Timing": Gold production from several sources to pay one cost, in
    /// an order the paying player chooses).
    pub ordered_by: Option<u8>,
    /// Kinds of responses that come in one order the orderer chooses at each point, as if one
    /// step (taken where the first of them would be), even against the steps' order: the
    /// orderer's own optional responses among them may be taken or left.
    pub any_order: Vec<crate::timing::Responds>,
}

impl EventKind {
    pub fn param(&self, name: &str) -> Option<u8> {
        self.params
            .iter()
            .position(|p| &*p.name == name)
            .map(|i| i as u8)
    }
}
