//! A ruleset's turn structure and plays, and the batches plays go into: the timing rules of
//! Magic: The Gathering's Revised Edition era ("Batches of Effects"). Each phase begins in a
//! neutral state in which the active player decides first whether to begin a batch; a batch is
//! complete once every player in turn has passed with nothing added; it then resolves last in,
//! first out, and the phase is neutral again; when every player passes in the neutral state, the
//! phase ends. The engine runs whatever structure the ruleset declares.

use crate::model::condition::{Cond, Subject};
use crate::model::ids::{EventId, ObjectId, PlayerId, ZoneId};
use crate::model::response::{Deed, ResponseDef};
use serde::Serialize;
use std::sync::Arc;

/// One phase of the turn, as the ruleset's `turn` block lists it.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct PhaseDef {
    /// The phase's period kind (its one parameter is the turn's player).
    pub event: EventId,
    /// Fast effects may be played in it (`fast`): it has a neutral state and batches. A phase
    /// without it begins and ends with nothing played (untap, cleanup).
    pub fast: bool,
    /// The active player's main phase (`main`): plays that say `main` are legal in it.
    pub main: bool,
}

/// The turn, phase by phase.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct TurnStructure {
    /// The turn's period kind (`turn turn(player: player)`).
    pub turn: EventId,
    /// Its phases, in order.
    pub phases: Vec<PhaseDef>,
    /// Events that happen to each player, together, as each phase ends, after its end effects
    /// (`each phase ends: burns`: mana burn).
    pub phase_ends: Vec<EventId>,
}

/// When a play is legal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum PlayTiming {
    /// Whenever fast effects may be played: in the neutral state of a phase that allows them, or
    /// adding to a batch ("played as an instant").
    Fast,
    /// Only in its player's own main phase, in the neutral state: it begins a batch, or happens
    /// at once, but is never added to one (sorceries, permanents, a land).
    Main,
    /// Only while a spell is being cast, in a batch of interrupts, targeting that spell
    /// ("Interrupts can target only the spell or effect being cast").
    Interrupt,
}

/// Which objects an announced effect may target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum TargetScope {
    /// Any, except a spell being cast or waiting in a batch (played as an instant).
    #[default]
    NotWaiting,
    /// Only the spell being cast (an interrupt).
    Only(ObjectId),
}

/// What a play does.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub enum PlayKind {
    /// Cast the card as a spell: its targets are chosen and its costs paid now (it is
    /// announced), and it waits in the batch until it resolves.
    Cast,
    /// Cast the card as a permanent spell (a creature, an artifact, an enchantment: CR 302,
    /// 301, 303): announced as a spell is, with its `cost:` lines; resolving, it is put into
    /// this zone, in play, under its caster's control.
    CastInto(ZoneId),
    /// Use an ability of a permanent the player controls (the class's `ability` blocks): as a
    /// spell is, announced now and resolved later, unless it is a mana ability, which happens
    /// at once and is never in a batch.
    Activate,
    /// Deeds done at once, never in a batch (play a land: the card moves to play).
    Deeds(Vec<Deed>),
    /// Pay or decline the phase cost a permanent the player controls bears in this phase (its
    /// phase costs from every source, combined): announced as an ability, into a batch; until
    /// it resolves the permanent's abilities cannot be played (Revised-era phase costs).
    PhaseCost,
}

/// One kind of play a ruleset allows (`play "..." { ... }`).
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct PlayDef {
    /// Its label, shown in the option ("cast", "play a land").
    pub label: Arc<str>,
    /// The zone the card is in (`from: hand`); for `Activate`, none (the permanents in play).
    pub from: Option<ZoneId>,
    /// Which cards it is for (`cards: types has land`), tested on the card.
    pub cards: Option<Cond>,
    /// When it is legal.
    pub timing: PlayTiming,
    /// At most once each turn (`once per turn`): one land a turn.
    pub once_per_turn: bool,
    /// What it does.
    pub kind: PlayKind,
    /// `unless a batch begins`: announced, its deeds wait while the other players in turn may
    /// begin a batch; one who does aborts it (it may be announced again later); when all pass,
    /// its deeds happen (Revised-era rules: announcing an attack).
    #[serde(default)]
    pub unless_batch: bool,
    /// `if: COND`: a play of no card is offered only while this holds, tested on the player
    /// (as "you"): an attack only with a creature that could attack.
    #[serde(default)]
    pub only_if: Option<Cond>,
}

/// One legal play a [`crate::model::decision::DecisionRequest::Play`] offers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct PlayOption {
    /// Readable: the play's label and the card ("cast Lightning Bolt").
    pub label: String,
    /// The play's index among the ruleset's plays.
    pub play: u16,
    /// The card played, or the permanent whose ability is used.
    pub card: Option<ObjectId>,
    /// For `Activate`, the index of the ability among the class's abilities.
    pub ability: Option<u16>,
}

/// What a batch item resolves as.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub enum ItemKind {
    /// A spell, cast and waiting: it resolves as the engine's `resolves` occurrence.
    Spell,
    /// An ability of an object: its deeds.
    Ability(Arc<ResponseDef>),
    /// A permanent spell: resolving, it is put into this zone (in play).
    Permanent(ZoneId),
}

/// An announced spell or ability in a batch: its targets chosen and its costs paid; it
/// resolves later, when its targets are checked again.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct BatchItem {
    /// Its id: stable while it waits, never reused in the game.
    pub id: u32,
    /// The spell, or the ability's source.
    pub source: ObjectId,
    /// The player who played it.
    pub controller: PlayerId,
    /// Its targets, in the order of its `target` lines.
    pub targets: Vec<Subject>,
    /// What it resolves as.
    pub kind: ItemKind,
}
