//! A ruleset's timing procedure: what happens at each timing point of an occurrence, in which
//! steps, who orders what conflicts, and how responses are taken. The engine runs whatever
//! procedure the ruleset declares; the game's own rules are data.
//!
//! Legend of the Five Rings CCG, "CE Timing": at each point, A) negation, prevention and
//! substitution, ordered by the active player; B) everything triggered that is not a Reaction,
//! ordered by the active player as it happens; C) Reactions in an action round. A ruleset for the
//! Magic: The Gathering Revised-era rules declares a LIFO batch instead.

use serde::Serialize;
use std::sync::Arc;

/// A timing point of an occurrence. A period (a phase, a turn, a duel) has two more: "after it
/// begins" and "before it ends", inside it; "before" it begins and "after" it ends are outside it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
pub enum Point {
    /// "Before X", "before X would happen", "before X begins".
    Before,
    /// "After X begins" (periods only): the period has begun.
    AfterBegins,
    /// "Before X ends" (periods only): the period has not ended yet.
    BeforeEnds,
    /// "When X", "when ... would": after any indicated choice, as the change is made.
    When,
    /// "After X", "after X ends".
    After,
}

impl Point {
    /// Every point, in order.
    pub const ALL: [Point; 5] = [
        Point::Before,
        Point::AfterBegins,
        Point::BeforeEnds,
        Point::When,
        Point::After,
    ];

    /// The point as the log writes it ("before", "after ... begins").
    pub fn name(self) -> &'static str {
        match self {
            Point::Before => "before",
            Point::AfterBegins => "after ... begins",
            Point::BeforeEnds => "before ... ends",
            Point::When => "when",
            Point::After => "after",
        }
    }
}

/// Which responses a step takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Responds {
    /// Effects that negate, prevent or substitute the occurrence itself (they make it not happen).
    Replacements,
    /// Everything triggered that is not taken by choice: triggered traits, delayed effects,
    /// triggered rulebook effects, changes to amounts.
    Triggered,
    /// Optional responses a player chooses to take (Reactions).
    Reactions,
    /// Standing prohibitions: tested as an occurrence begins, before any step (no step takes
    /// them).
    Prohibitions,
}

impl Responds {
    /// What the step takes, in words ("negation, prevention and substitution", "triggered",
    /// "reactions").
    pub fn name(self) -> &'static str {
        match self {
            Responds::Replacements => "negation, prevention and substitution",
            Responds::Triggered => "triggered",
            Responds::Reactions => "reactions",
            Responds::Prohibitions => "prohibitions",
        }
    }
}

/// How the responses of a step are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Taking {
    /// Each happens at once, in full, one at a time; when more than one could happen next, the
    /// orderer chooses which, as they happen (each exactly once): the player the event names in
    /// `ordered by:`, else the active player (between turns, the player of the next turn).
    Ordered,
    /// As `Ordered`, player by player: the active player's responses first (each in full, in the
    /// order she chooses, one at a time), then the next player's in turn order, and so on. A
    /// rulebook rule is the orderer's. (Magic's Revised-era rules for specialized and triggered
    /// effects: "the active player plays all of hers first ... then the other player".)
    EachPlayerInTurn,
    /// An action round: starting with the active player, each player in turn order takes one
    /// response (which happens at once, in full) or passes; the step ends when every player has
    /// passed consecutively.
    ActionRound,
    /// Each happens at once, in full, one at a time, in an order the rules declare and no one
    /// chooses: rulebook rules first, in the order written; then responses of objects, higher
    /// `priority:` first, then the object's timestamp (older first), then the response's place
    /// among its class's (FreeOrion's effects system, Stacking Number: the order between effects
    /// groups, left open there, made a stable rule here).
    Declared,
}

/// One step of the procedure at every timing point.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct TimingStep {
    /// The step's name in the log and in explanations ("A", "B", "C").
    pub name: Arc<str>,
    /// Which responses the step takes (`step NAME: replacements`, `triggered` or `reactions`).
    pub responds: Responds,
    /// How it takes them (`ordered` or `action round`).
    pub taking: Taking,
}

/// The procedure run at every timing point, in order.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct TimingProcedure {
    /// The steps, in the order they run at each point (L5R CE timing: A, B, C).
    pub steps: Vec<TimingStep>,
    /// `after: once resolved`: what answers an occurrence at its "after" point, while a spell
    /// or an ability resolves or a mana ability is used (its costs too), waits until that is
    /// complete, then comes in the order the occurrences happened (Magic's Revised-era rules:
    /// a triggered effect "occurs after the scenario is complete").
    #[serde(default)]
    pub after_once_resolved: bool,
}
