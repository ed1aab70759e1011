//! Event kinds, as the ruleset declares them: their parameters and the changes of state an
//! occurrence makes. The changes are the engine's fixed vocabulary; every game's events are made
//! of them.

use crate::model::ids::{CharId, CounterId, PropId, TypeId, ZoneId};
use crate::model::value::Symbol;
use serde::Serialize;
use std::sync::Arc;

/// What a parameter of an event holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum ParamKind {
    /// A game object (`card: object`).
    Object,
    /// A player (`player: player`).
    Player,
    /// A number (`amount: number`), such as a change's size.
    Number,
    /// One of the ruleset's zones (where a card moves).
    Zone,
    /// One of the ruleset's kinds of counters.
    Counter,
    /// One of the ruleset's player properties.
    Property,
    /// An object class of the content (`tech: class of tech`), of that object type if one is
    /// named (FreeOrion's Set Empire Tech Availability names a tech).
    Class(Option<TypeId>),
    /// An object or a player (`target: any`, "any target", CR 115.4): the changes that name it
    /// as an object are made when it is one, those that name it as a player when it is one.
    Any,
}

impl ParamKind {
    /// The kind as a parameter list writes it (`object`, `player`, `number`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ParamKind::Object => "object",
            ParamKind::Player => "player",
            ParamKind::Number => "number",
            ParamKind::Zone => "zone",
            ParamKind::Counter => "counter",
            ParamKind::Property => "property",
            ParamKind::Class(_) => "class",
            ParamKind::Any => "any",
        }
    }

    /// Whether an argument is of this kind (its id not checked).
    pub fn admits(self, a: &crate::model::value::Arg) -> bool {
        use crate::model::value::Arg;
        matches!(
            (self, a),
            (ParamKind::Object, Arg::Object(_))
                | (ParamKind::Player, Arg::Player(_))
                | (ParamKind::Number, Arg::Number(_))
                | (ParamKind::Zone, Arg::Zone(_))
                | (ParamKind::Counter, Arg::Counter(_))
                | (ParamKind::Property, Arg::Property(_))
                | (ParamKind::Class(_), Arg::Class(_))
                | (ParamKind::Any, Arg::Object(_) | Arg::Player(_))
        )
    }
}

/// One parameter of an event kind (`card: object`).
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct ParamDef {
    /// Its name, by which the ruleset's text refers to it (`event card`).
    pub name: Arc<str>,
    /// What an argument for it holds.
    pub kind: ParamKind,
}

/// A number a change uses: one of the event's number parameters, or a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Amount {
    /// The number argument of that index.
    Param(u8),
    /// A number written in the ruleset (`player honor += 2`).
    Const(i64),
}

/// A zone, counter kind or property a change uses: one of the event's parameters, or one named
/// in the ruleset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum ParamOr<T> {
    /// The argument of that index (a `zone`, `counter` or `property` parameter).
    Param(u8),
    /// One the ruleset names (`move card to discard`).
    Const(T),
}

/// One change of state, as an event kind declares it: parameters are indices into the
/// occurrence's arguments. An occurrence's changes are made by the kernel
/// (`kernel::Change`); a move or counters a ruleset's own event declares are occurrences of the
/// built-in `changes_zone` (and `leaves_play`) and `counters_placed` of their own.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub enum Primitive {
    /// Add (`on`) or remove a symbol from an object's state characteristic ("bows": `bowed`).
    State {
        /// Index of the object parameter whose state changes.
        object: u8,
        /// The ruleset's `state` characteristic the change names (`card status += bowed`).
        char: CharId,
        /// The symbol added or removed ("bowed").
        symbol: Symbol,
        /// True to add the symbol (`+=`), false to remove it (`-=`).
        on: bool,
    },
    /// Add to (or with `negative`, subtract from) a player's property.
    Property {
        /// Index of the player parameter whose property changes.
        player: u8,
        /// The player property changed ("honor").
        prop: PropId,
        /// How much it changes by.
        amount: Amount,
        /// True for `-=`: the amount is subtracted.
        negative: bool,
    },
    /// Take an amount from several of a player's properties, in the order named, as much from
    /// each as it holds (down to its least value, or 0) before the next: generic mana paid
    /// from a pool's colors (CR 107.4c, 202.1). If they hold less than the amount in all, it
    /// changes nothing: it cannot be paid.
    Take {
        /// Index of the player parameter whose properties are taken from.
        player: u8,
        /// The properties, in the order they give.
        props: Vec<PropId>,
        /// How much is taken.
        amount: Amount,
    },
    /// Add a class's name to a player's symbols property, or remove it (FreeOrion's Set Empire
    /// Tech Availability, Set Empire Building Availability, Set Ship Type Availability: the
    /// empire's set of available techs or buildable classes).
    Classes {
        /// Index of the player parameter whose property changes.
        player: u8,
        /// The symbols property (`available_techs`).
        prop: PropId,
        /// Index of the class parameter whose name is added or removed.
        class: u8,
        /// Not 0: added (`+=`, or `has CLASS = yes`); 0: removed.
        on: Amount,
    },
    /// Move an object to a zone: it becomes a new object (CR 400.7).
    Move {
        /// Index of the object parameter that moves.
        object: u8,
        /// The zone it moves to: a `zone` parameter, or one the ruleset names.
        zone: ParamOr<ZoneId>,
    },
    /// Add or remove a state symbol on every object in play a player controls ("untap all
    /// permanents you control", CR 502.3).
    StateAll {
        /// Index of the player parameter.
        player: u8,
        /// The `state` characteristic.
        char: CharId,
        /// The symbol added or removed.
        symbol: Symbol,
        /// True to add it, false to remove it.
        on: bool,
    },
    /// Remove every counter of a kind from every object in play ("damage wears off", CR
    /// 514.2).
    ClearAll {
        /// The kind of counter.
        counter: CounterId,
    },
    /// Every object in play that has the meter (or every meter, for `None`): its current value
    /// grows by an amount, not below 0 (FreeOrion's current-meter growth), or with `growth`
    /// `None` is capped by its max value.
    Meters {
        /// The meter, or every meter.
        meter: Option<CharId>,
        /// How much each current value grows; `None`: capped by the max value.
        growth: Option<i64>,
    },
    /// Set an object's symbols characteristic, for good, to the symbol at a position of a scale
    /// the ruleset lists (FreeOrion's Set Planet Size, Set Planet Environment, Set Star Colour):
    /// the kernel starts a created effect with no end, locked to the object, that sets it (the
    /// object's own earlier such effect on that characteristic ends, so they do not pile up).
    /// A position off the scale changes nothing.
    SetScaled {
        /// Index of the object parameter.
        object: u8,
        /// The characteristic set.
        char: CharId,
        /// The scale, in order (position 0 first).
        scale: Vec<Symbol>,
        /// The position.
        to: Amount,
    },
    /// FreeOrion's Modify Planet Size: the size steps along its scale (whose first and last
    /// symbols are the asteroid belt and the gas giant) by an amount, stopping at its ends.
    /// Stepping onto an end sets the environment to that end's symbol and keeps the original
    /// environment (its position on the environment scale plus 1) as counters of `kept` on the
    /// object; stepping back off an end restores it, or, for an object that was always at that
    /// end, sets `off_first` (leaving the first end: "barren") or `off_last` ("toxic").
    Resize {
        /// Index of the object parameter.
        object: u8,
        /// How many steps (negative: smaller).
        by: Amount,
        /// The size characteristic and its scale.
        size: CharId,
        /// The sizes, smallest first.
        sizes: Vec<Symbol>,
        /// The environment characteristic and its scale.
        environment: CharId,
        /// The environments (those kept are looked up here).
        environments: Vec<Symbol>,
        /// The counter kind that keeps the original environment.
        kept: CounterId,
        /// The environment of an object that was always at the first end, leaving it.
        off_first: Symbol,
        /// The environment of an object that was always at the last end, leaving it.
        off_last: Symbol,
    },
    /// Move the top card of a player's zone to another zone ("draw a card": the top of the
    /// library to the hand), as a move of its own; with the zone empty, add 1 to the player's
    /// property `empty`, if named (a draw from an empty library, CR 704.5b).
    MoveTop {
        /// Index of the player parameter whose zone it is.
        player: u8,
        /// The zone the card is taken from, the top first.
        from: ZoneId,
        /// The zone it goes to.
        to: ZoneId,
        /// The property raised by 1 when there is no card to move.
        empty: Option<PropId>,
    },
    /// Put counters on an object (a negative amount removes them).
    Counters {
        /// Index of the object parameter the counters go on.
        object: u8,
        /// The kind of counter: a `counter` parameter, or one the ruleset names.
        counter: ParamOr<CounterId>,
        /// How many counters (a negative number removes them).
        amount: Amount,
    },
    /// Attach an object to another (CR 701.3).
    Attach {
        /// Index of the object parameter that becomes attached.
        object: u8,
        /// Index of the object parameter it becomes attached to.
        to: u8,
    },
    /// An object becomes unattached and stays where it is (CR 704.5n).
    Unattach {
        /// Index of the object parameter that becomes unattached.
        object: u8,
    },
    /// Turn an object face down or face up (CR 708.2, 708.8).
    Face {
        /// Index of the object parameter that turns.
        object: u8,
        /// True to turn it face down, false to turn it face up.
        down: bool,
    },
    /// Merge an object with a permanent, under it where `under` is not 0 (CR 721.2).
    Merge {
        /// Index of the object parameter that merges (the mutating card).
        object: u8,
        /// Index of the object parameter it merges with (the permanent).
        into: u8,
        /// Index of the number parameter: not 0 when the object goes under.
        under: u8,
    },
    /// Every created effect whose source is this object ends.
    EndEffects {
        /// Index of the object parameter whose created effects end.
        source: u8,
    },
    /// The created effect with this id (a number parameter) ends ("for as long as", CR 611.2b).
    EndEffect {
        /// Index of the number parameter that holds the effect's id (`CreatedEffect::id`).
        effect: u8,
    },
    /// Set a player's base property value.
    SetProperty {
        /// Index of the player parameter.
        player: u8,
        /// Index of the `property` parameter that names the property.
        prop: u8,
        /// Index of the number parameter that holds the new value.
        value: u8,
    },
    /// The turn ends and the next player's begins (CR 514).
    EndTurn,
    /// A player loses the game and leaves it (CR 104.3, 800.4).
    Lose {
        /// Index of the player parameter.
        player: u8,
    },
    /// A player's cards in a zone are put in a random order, drawn from the game's random
    /// source (CR 701.20a).
    Shuffle {
        /// Index of the player parameter whose cards are shuffled.
        player: u8,
        /// Index of the zone parameter.
        zone: u8,
    },
}

/// An event kind: "a Personality bows", "a player gains Honor", "the Dynasty Phase".
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct EventKind {
    /// The event's name in the ruleset's text and in the log ("bows", "gains_honor").
    pub name: Arc<str>,
    /// Its parameters, in order: an occurrence's arguments follow them.
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
    pub any_order: Vec<crate::model::timing::Responds>,
}

impl EventKind {
    /// The index of the parameter of this name, if it has one.
    pub fn param(&self, name: &str) -> Option<u8> {
        self.params
            .iter()
            .position(|p| &*p.name == name)
            .map(|i| i as u8)
    }
}
