//! A ruleset: the game's characteristics, player properties, zones, counters, ordered layers and
//! state-based checks. Everything game-specific lives here, loaded from ruleset text.

use crate::model::condition::Cond;
use crate::model::effect::OpKind;
use crate::model::error::ActionError;
use crate::model::ids::{CharId, CounterId, LayerId, PropId, SlotTarget, ZoneId};
use crate::model::value::{SymbolSet, Value};
use serde::Serialize;
use std::sync::Arc;

/// What values a characteristic holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CharKind {
    /// An integer, or no number (`none`): power, toughness, mana value, a cost.
    Number,
    /// A set of symbols (colors, card types, subtypes), or every symbol but a few; also the kind of
    /// a `state` characteristic (see [`CharDef::state`]).
    Symbols,
    /// A string of text.
    Text,
    /// A list of abilities: keywords, abilities of a kind named by their text, and the class's
    /// static abilities. A ruleset has at most one such characteristic.
    Abilities,
    /// The object's controller; its base value is the player who put the object into play.
    Controller,
    /// The object's name: text whose base value is its class's name.
    Name,
}

impl CharKind {
    /// The kind's word in the ruleset language (`number`, `symbols`, `text`, `abilities`,
    /// `controller`, `name`); a `state` characteristic is `symbols`.
    pub fn name(self) -> &'static str {
        match self {
            CharKind::Number => "number",
            CharKind::Symbols => "symbols",
            CharKind::Text => "text",
            CharKind::Abilities => "abilities",
            CharKind::Controller => "controller",
            CharKind::Name => "name",
        }
    }
    /// The value an object has when nothing is printed for this characteristic.
    pub fn empty(self) -> Value {
        match self {
            CharKind::Number => Value::Number(None),
            CharKind::Symbols => Value::Symbols(Default::default()),
            // The empty text and ability list are shared, as the empty symbol set is (one per
            // thread: see `SymbolSet::default`).
            CharKind::Text | CharKind::Name => {
                thread_local! {
                    static EMPTY: Arc<str> = Arc::from("");
                }
                Value::Text(EMPTY.with(Arc::clone))
            }
            CharKind::Abilities => {
                thread_local! {
                    static EMPTY: Arc<[crate::model::value::Ability]> = Vec::new().into();
                }
                Value::Abilities(EMPTY.with(Arc::clone))
            }
            CharKind::Controller => Value::Player(None),
        }
    }
}

/// A characteristic every object has (CR 109.3: name, types, colors, power...), declared by
/// `characteristic NAME: KIND`; indexed by [`CharId`].
#[derive(Clone, Debug, Serialize)]
pub struct CharDef {
    /// The name content, conditions and expectations use for it (`power`); characteristics and
    /// player properties share one namespace.
    pub name: String,
    /// What values it holds.
    pub kind: CharKind,
    /// A `symbols` characteristic whose base value is the object's state ("bowed",
    /// "dishonored"), changed only by occurrences of events.
    pub state: bool,
    /// A `number` characteristic's base value where an object's class prints none
    /// (`characteristic position: number = 0`); `None`: no number. Other kinds have none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<i64>,
    /// A meter (`meter NAME`): this number characteristic is its max value, derived through the
    /// layers from 0 each time; its current value is the count of the counter kind of the same
    /// name, which no layer applies and only occurrences change.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub meter: bool,
}

/// A type of game object (`type planet: size, environment, farming`): the characteristics
/// only objects of this type have. A characteristic no type names belongs to every object; one
/// that some type names is *absent* from objects of the other types, which differs from having
/// no value (an unowned monster has an owner property set to none).
#[derive(Clone, Debug, Serialize)]
pub struct TypeDef {
    /// Its name (`planet`).
    pub name: String,
    /// The characteristics its objects have beyond those every object has.
    pub chars: Vec<CharId>,
}

/// A property of each player, such as life or maximum hand size (CR 613.10-613.11).
#[derive(Clone, Debug, Serialize)]
pub struct PropDef {
    /// The property's name (`life`, `max_hand_size`).
    pub name: String,
    /// Each player's base value when a game begins: `0` unless the ruleset gives one; `None` for
    /// `= none` (no number).
    pub default: Option<i64>,
    /// The least it can be (`at least 0`): a change that would take it lower cannot be made,
    /// and an occurrence making it fails (a mana pool cannot pay more than it holds).
    pub min: Option<i64>,
    /// It holds a set of symbols (`player available_techs: symbols`), empty as a game begins,
    /// not a number: FreeOrion's empires' available techs and buildable classes, by name.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub symbols: bool,
}

impl PropDef {
    /// Each player's base value as a game begins.
    pub fn initial(&self) -> crate::model::value::Value {
        if self.symbols {
            crate::model::value::Value::Symbols(Default::default())
        } else {
            crate::model::value::Value::Number(self.default)
        }
    }
}

/// A zone objects can be in (library, hand, battlefield...), declared by `zone NAME`; indexed by
/// [`ZoneId`] in the order declared.
#[derive(Clone, Debug, Serialize)]
pub struct ZoneDef {
    /// The zone's name (`battlefield`).
    pub name: String,
    /// Objects here are "in play": their static abilities work and state-based checks look at them.
    pub in_play: bool,
    /// Its objects may be linked to (attached to) an object in play, as cards exiled with an
    /// ability are linked to it (CR 607.2a).
    pub linked: bool,
}

/// A counter kind and the change each counter makes (layer 7c, CR 613.4c; 7d in the 2017 CR).
#[derive(Clone, Debug, Serialize)]
pub struct CounterDef {
    /// The counter's name (`+1/+1`, `flying`, `time`).
    pub name: String,
    /// Per counter: which number characteristic changes by how much (in the layer that applies
    /// counters).
    pub changes: Vec<(CharId, i64)>,
    /// Other changes, each in the layer that accepts its operation: a keyword counter's ability
    /// (CR 122.1b, applied in layer 6 per CR 613.1f).
    pub ops: Vec<crate::model::effect::Op>,
}

impl CounterDef {
    /// Whether counters of this kind change anything in layer `l`.
    pub fn applies_in(&self, rs: &Ruleset, l: LayerId) -> bool {
        (rs.layer_def(l).counters && !self.changes.is_empty())
            || self.ops.iter().any(|o| o.layer == l)
    }

    /// The first layer counters of this kind change anything in, if any.
    pub fn first_layer(&self, rs: &Ruleset) -> Option<LayerId> {
        let numbers = rs.counters_layer().filter(|_| !self.changes.is_empty());
        self.ops.iter().map(|o| o.layer).chain(numbers).min()
    }
}

/// What a layer slot accepts: operations of some kinds on one characteristic or player property.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Slot {
    /// The characteristic or player property whose operations the slot accepts.
    pub target: SlotTarget,
    /// `None` accepts every kind of operation.
    pub kinds: Option<Vec<OpKind>>,
    /// Accepts only effects of characteristic-defining abilities (sublayer 7a).
    pub defining_only: bool,
}

/// One layer or sublayer, flattened into application order (CR 613.1-613.4).
#[derive(Clone, Debug, Serialize)]
pub struct LayerDef {
    /// Short label such as `4` or `7c`.
    pub label: String,
    /// Descriptive name such as `type` or `modifying`.
    pub name: String,
    /// What the layer applies: an operation applies here when one of these slots accepts it (see
    /// [`LayerDef::accepts`]).
    pub slots: Vec<Slot>,
    /// Counters apply in this layer, in timestamp order with its effects.
    pub counters: bool,
    /// Face-down objects take the ruleset's face-down values in this layer.
    pub face_down: bool,
    /// Effects here are ordered by dependency before timestamp (CR 613.8); player and rules layers
    /// may say timestamp only (Cranial Insertion, "Order of Operations", 2020, layer 8:
    /// "Dependency is irrelevant here").
    pub dependency: bool,
    /// Order effects by the kind of change first (CR 601.2f: additions, then subtractions, then
    /// effects on the total cost); empty for plain timestamp order.
    pub kind_order: Vec<ChangeClass>,
}

/// The kind of a change to a number, for layers that order by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ChangeClass {
    /// An addition (`+=`).
    Increase,
    /// A subtraction (`-=`).
    Decrease,
    /// Setting (`=`), and every change that is not an addition or a subtraction.
    Set,
}

impl ChangeClass {
    /// `+=` increases, `-=` decreases, `=` sets; other changes count as setting.
    pub fn of(c: &crate::model::effect::Change) -> ChangeClass {
        use crate::model::condition::NumExpr;
        use crate::model::effect::Change;
        match c {
            Change::Modify(NumExpr::Neg(_)) => ChangeClass::Decrease,
            Change::Modify(_) => ChangeClass::Increase,
            Change::WithIntrinsic { change, .. } => ChangeClass::of(change),
            _ => ChangeClass::Set,
        }
    }
    /// The word an `order:` entry uses for it (`increase`, `decrease`, `set`).
    pub fn name(self) -> &'static str {
        match self {
            ChangeClass::Increase => "increase",
            ChangeClass::Decrease => "decrease",
            ChangeClass::Set => "set",
        }
    }
}

impl LayerDef {
    /// Whether an operation of `kind` on `target` applies in this layer: a slot names the target
    /// and lists the kind (or lists none), and a `defining` slot takes it only if it is a
    /// characteristic-defining ability's (`defining`).
    pub fn accepts(&self, target: SlotTarget, kind: OpKind, defining: bool) -> bool {
        self.slots.iter().any(|s| {
            s.target == target
                && (!s.defining_only || defining)
                && s.kinds.as_ref().is_none_or(|k| k.contains(&kind))
        })
    }
}

/// "Toughness 0 or less: put into the graveyard", checked between steps.
#[derive(Clone, Debug, Serialize)]
pub struct StateCheck {
    /// The check's name, as `Outcome::state_checks` and the log give it (`zero toughness`).
    pub name: String,
    /// Tested on each object in play (`when:`): an object that satisfies it is moved to `to_zone`,
    /// or unattached.
    pub condition: Cond,
    /// Where an object that satisfies the condition moves; `None` with `unattach`.
    pub to_zone: Option<ZoneId>,
    /// The object becomes unattached and stays where it is (CR 704.5n: an Equipment attached
    /// to an illegal permanent).
    pub unattach: bool,
    /// Or, tested on each player still in the game instead of on objects, the player loses
    /// (CR 704.5a: a player with 0 or less life loses).
    pub loses: bool,
    /// Or the object is the one argument of an occurrence of this event (`happens: destroyed`:
    /// in the Revised-era rules lethal damage destroys the creature, which regeneration can
    /// replace).
    #[serde(default)]
    pub happens: Option<crate::model::ids::EventId>,
}

/// A game's rules, loaded from a ruleset file: its characteristics, player properties, zones,
/// counters, layers, state-based checks, events and timing procedure. Everything game-specific the
/// engine works from; shared by every game state made with it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Ruleset {
    /// The name its `ruleset` statement gives (`mtg-2020`).
    pub name: String,
    /// The characteristics every object has, indexed by [`CharId`].
    pub characteristics: Vec<CharDef>,
    /// The properties every player has (life, maximum hand size), indexed by [`PropId`].
    pub props: Vec<PropDef>,
    /// The zones, in the order declared, indexed by [`ZoneId`].
    pub zones: Vec<ZoneDef>,
    /// The counter kinds, indexed by [`CounterId`].
    pub counters: Vec<CounterDef>,
    /// The layers and sublayers, flattened into application order and indexed by [`LayerId`]
    /// (CR 613.1).
    pub layers: Vec<LayerDef>,
    /// The state-based checks, in the order each object is tested against them (CR 704).
    pub state_checks: Vec<StateCheck>,
    /// Where a spell goes once it has resolved, if anywhere.
    pub resolved_zone: Option<ZoneId>,
    /// The characteristics a copy effect copies (layer 1a, CR 613.2a: "copiable values").
    pub copiable: Vec<CharId>,
    /// The values a face-down object has (layer 1b, CR 613.2b).
    pub face_down: Vec<(CharId, Value)>,
    /// The sets a symbols characteristic's symbols fall in (CR 205.3: creature types, land
    /// types...).
    pub categories: Vec<Category>,
    /// Abilities some symbols give an object (CR 305.6: a land's basic land types and their mana
    /// abilities).
    pub intrinsic: Vec<Intrinsic>,
    /// The event kinds: every change of state an occurrence can make.
    pub events: Vec<crate::model::event::EventKind>,
    /// What happens at each timing point of an occurrence.
    pub timing: crate::model::timing::TimingProcedure,
    /// Triggered rulebook effects ("Honor loss after a dishonorable Personality is destroyed").
    pub rules: Vec<Arc<crate::model::response::ResponseDef>>,
    /// The built-in events the engine's own actions are occurrences of.
    pub builtin: Option<Builtin>,
    /// The turn, phase by phase, that the engine runs once a game is started (`turn ... { phase
    /// ... }`); none: periods begin and end only as they are made to.
    pub turn_structure: Option<crate::model::batch::TurnStructure>,
    /// What a player may play when the game asks (`play "..." { ... }`), in the order declared.
    pub plays: Vec<crate::model::batch::PlayDef>,
    /// Where a spell waits once cast, until it resolves (`spells wait in: ZONE`).
    pub wait_zone: Option<ZoneId>,
    /// The event that happens once a spell is successfully cast, its interrupts over
    /// (`spells cast as: casts`; its parameters: the spell, its caster).
    pub cast_event: Option<crate::model::ids::EventId>,
    /// Where a player's deck is put as a game starts, and how a player draws: the zone and the
    /// event (`deck: library`, `draw: draws`), with the opening hand's size.
    pub deck: Option<DeckRules>,
    /// The object types, indexed by [`crate::model::ids::TypeId`] (empty: objects have every
    /// characteristic).
    pub types: Vec<TypeDef>,
    /// Where in the turn non-meter effects groups fire (`effects groups fire after EVENT(...)
    /// begins`): each such group is a triggered trait of its class answering this trigger
    /// (FreeOrion's effects system, Turn Processing Order).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effects_groups: Option<crate::model::response::Trigger>,
    /// Symbols of a characteristic in a declared order (`order size: tiny, small, ...`), or
    /// around a ring (`order environment: ring swamp, toxic, ...`): how far apart two are.
    pub orders: Vec<SymbolOrder>,
    /// Objects of the first type are owned by the empires that own the objects of the second
    /// type attached to them (`owned through system: planet`; FreeOrion's effects system, Empire
    /// Affiliation: a system is owned by every empire that owns a planet in it).
    pub owned_through: Vec<(crate::model::ids::TypeId, crate::model::ids::TypeId)>,
    /// The objects owned by no empire whoever controls them (`unowned: tags has monster`), tested
    /// on each object.
    pub unowned: Option<Cond>,
    /// Where objects are on the galaxy map, and how far they see (`map: x, y, lanes, on_lane,
    /// detection`): the characteristics distances, starlane jumps and visibility read.
    pub map: Option<GalaxyMap>,
}

/// The characteristics of the galaxy map.
#[derive(Clone, Debug, Serialize)]
pub struct GalaxyMap {
    /// Positions, starlanes, the lane an object is on, and names.
    pub places: crate::model::condition::Places,
    /// The detection range (a number characteristic).
    pub detection: CharId,
}

/// A characteristic's symbols in order (planet sizes), or around a ring (the environment wheel).
#[derive(Clone, Debug, Serialize)]
pub struct SymbolOrder {
    /// The symbols characteristic.
    pub char: CharId,
    /// Its symbols, in order.
    pub symbols: Vec<Arc<str>>,
    /// Whether the last is next to the first.
    pub ring: bool,
}

/// How a game starts from deck lists: each deck goes to `zone`, is shuffled, and each player
/// draws `hand` cards by occurrences of `draw` (an event with one player parameter).
#[derive(Clone, Debug, Serialize)]
pub struct DeckRules {
    /// The zone decks start in (a library).
    pub zone: ZoneId,
    /// The event by which a player draws a card.
    pub draw: crate::model::ids::EventId,
    /// Cards each player draws before the first turn.
    pub hand: u8,
    /// A property the first player's is set to as the game starts (`first player: PROP = N`:
    /// the first player skips the first draw).
    pub first_player: Option<(PropId, i64)>,
}

/// The events every ruleset has, declared by the engine after the ruleset's own: each engine
/// action (`Action`), and each change the engine makes of itself (a state-based check, an effect
/// ending), is an occurrence of one or more of them. Each carries its whole change as arguments.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Builtin {
    /// `enters(card)`: an object entered a zone in play (after it entered; it cannot be stopped).
    pub enters: crate::model::ids::EventId,
    /// `changes_zone(card, from, to)`: an object moves to another zone (CR 400.7).
    pub changes_zone: crate::model::ids::EventId,
    /// `leaves_play(card, from, to)`: an object in play moves to a zone not in play; it stands
    /// or falls with its `changes_zone`.
    pub leaves_play: crate::model::ids::EventId,
    /// `counters_placed(card, amount, counter)`: counters are put on (a negative amount: taken
    /// off); the amount is its size.
    pub counters_placed: crate::model::ids::EventId,
    /// `attached(card, to)`: an object becomes attached to another.
    pub attached: crate::model::ids::EventId,
    /// `unattached(card)`: an object becomes unattached and stays where it is (CR 704.5n).
    pub unattached: crate::model::ids::EventId,
    /// `resolves(card, controller)`: a spell resolves (CR 608.2): its effects start, then its
    /// one-shot changes happen in order, each an occurrence of its own.
    pub resolves: crate::model::ids::EventId,
    /// `turns_face_up(card)`, `turns_face_down(card)` (CR 708.8, 708.2).
    pub turns_face_up: crate::model::ids::EventId,
    /// `turns_face_down(card)`: a face-up object turns face down (CR 708.2).
    pub turns_face_down: crate::model::ids::EventId,
    /// `merges(card, into, under)`: an object merges with a permanent, under it where `under`
    /// is not 0 (CR 721).
    pub merges: crate::model::ids::EventId,
    /// `effects_end(card)`: the effects an object created end.
    pub effects_end: crate::model::ids::EventId,
    /// `effect_ends(card, effect)`: one effect the object created ends, its duration over ("for
    /// as long as", CR 611.2b).
    pub effect_ends: crate::model::ids::EventId,
    /// `property_set(player, property, value)`: a player's base property value is set.
    pub property_set: crate::model::ids::EventId,
    /// `turn_ends(player)`: the player's turn ends and the next player's begins (CR 514).
    pub turn_ends: crate::model::ids::EventId,
    /// `shuffles(player, zone)`: the player's cards in the zone are put in a random order
    /// (CR 701.20a), drawn from the game's seeded random source.
    pub shuffles: crate::model::ids::EventId,
    /// `loses(player)`: a player loses the game and leaves it (CR 104.3); with at most one
    /// player left, the game is over.
    pub loses: crate::model::ids::EventId,
}

impl Builtin {
    /// Their names, which a ruleset may not declare.
    pub const NAMES: [&'static str; 16] = [
        "enters",
        "changes_zone",
        "leaves_play",
        "counters_placed",
        "attached",
        "unattached",
        "resolves",
        "turns_face_up",
        "turns_face_down",
        "merges",
        "effects_end",
        "effect_ends",
        "property_set",
        "turn_ends",
        "shuffles",
        "loses",
    ];

    /// Their ids, in the order of `NAMES`.
    pub fn ids(&self) -> [crate::model::ids::EventId; 16] {
        [
            self.enters,
            self.changes_zone,
            self.leaves_play,
            self.counters_placed,
            self.attached,
            self.unattached,
            self.resolves,
            self.turns_face_up,
            self.turns_face_down,
            self.merges,
            self.effects_end,
            self.effect_ends,
            self.property_set,
            self.turn_ends,
            self.shuffles,
            self.loses,
        ]
    }
}

/// Abilities an object has because a symbols characteristic holds some symbols, while another of
/// its characteristics holds a symbol (CR 305.6: "An object with the land card type and a basic
/// land type has the intrinsic ability "{T}: Add [mana symbol]""). An effect that sets the
/// characteristic to symbols among these replaces the abilities of the object's rules text with
/// theirs (CR 305.7); one that adds or removes them adds or removes their abilities.
#[derive(Clone, Debug, Serialize)]
pub struct Intrinsic {
    /// The symbols characteristic whose symbols give the abilities (`subtypes`).
    pub char: CharId,
    /// The object must hold this symbol in this characteristic (`types has land`).
    pub when: (CharId, crate::model::value::Symbol),
    /// Each symbol with the ability it gives (`forest`: `{T}: Add {G}.`), in the order declared.
    pub abilities: Vec<(crate::model::value::Symbol, crate::model::value::Ability)>,
}

impl Intrinsic {
    /// Whether an object with these values is concerned (`types has land`).
    pub fn applies(&self, row: &[Value]) -> bool {
        matches!(&row[self.when.0.index()], Value::Symbols(s) if s.contains(&self.when.1))
    }

    /// Whether a change to the characteristic can give or take away abilities: it sets the whole
    /// characteristic, or names (or chooses) a symbol that gives some. Setting creature types on
    /// a land creature leaves its land types, and so its abilities, alone (CR 305.7).
    pub fn concerns(&self, change: &crate::model::effect::Change) -> bool {
        use crate::model::effect::Change;
        let names = |l: &crate::model::effect::SymList| {
            l.chosen || l.set.is_every() || self.abilities.iter().any(|(s, _)| l.set.contains(s))
        };
        match change {
            Change::SetSymbols(_) => true,
            Change::SetInCategories { set: l, .. }
            | Change::AddSymbols(l)
            | Change::RemoveSymbols(l) => names(l),
            _ => true,
        }
    }

    /// The abilities the symbols of `set` give, in the order declared.
    pub fn of<'a>(
        &'a self,
        set: &'a SymbolSet,
    ) -> impl Iterator<Item = &'a crate::model::value::Ability> + 'a {
        self.abilities
            .iter()
            .filter(move |(s, _)| set.contains(s))
            .map(|(_, a)| a)
    }

    /// An object's abilities after its symbols go from `old` to `new`: with `set` (the effect
    /// sets the characteristic) and a symbol of `new` among these, the abilities of the new
    /// symbols alone (CR 305.7); otherwise those of symbols gained are added and those of symbols
    /// lost removed.
    pub fn abilities_after(
        &self,
        abilities: &[crate::model::value::Ability],
        old: &SymbolSet,
        new: &SymbolSet,
        set: bool,
    ) -> Vec<crate::model::value::Ability> {
        if set && self.of(new).next().is_some() {
            return self.of(new).cloned().collect();
        }
        let lost: Vec<_> = self
            .abilities
            .iter()
            .filter(|(s, _)| old.contains(s) && !new.contains(s))
            .map(|(_, a)| a)
            .collect();
        let mut out: Vec<_> = abilities
            .iter()
            .filter(|a| !lost.contains(a))
            .cloned()
            .collect();
        for (s, a) in &self.abilities {
            if new.contains(s) && !old.contains(s) && !out.contains(a) {
                out.push(a.clone());
            }
        }
        out
    }
}

/// One set of a symbols characteristic's symbols (CR 205.3: creature types, land types...).
/// Setting the characteristic replaces only the sets its new symbols belong to (CR 205.1a).
#[derive(Clone, Debug, Serialize)]
pub struct Category {
    /// The symbols characteristic the set divides (`subtypes`).
    pub char: CharId,
    /// The set's name (`creature`, `land`): with `by`, the first card type its line names.
    pub name: String,
    /// With `by`: the symbols of that characteristic (card types) this set belongs to; its symbols
    /// stay only on an object that has one of them (CR 205.1a, 205.3d).
    pub by: Option<(CharId, Vec<crate::model::value::Symbol>)>,
    /// Its symbols; `None`: every symbol no other set of the characteristic lists.
    pub members: Option<SymbolSet>,
}

impl Ruleset {
    /// The type of that name, if declared.
    pub fn type_id(&self, name: &str) -> Option<crate::model::ids::TypeId> {
        self.types
            .iter()
            .position(|t| t.name == name)
            .map(|i| crate::model::ids::TypeId(i as u16))
    }

    /// Whether objects of type `t` (`None`: an object of no type) have characteristic `ch`:
    /// every object has a characteristic no type names; of the others, only the types that
    /// name it.
    pub fn type_has(&self, t: Option<crate::model::ids::TypeId>, ch: CharId) -> bool {
        let named = |d: &TypeDef| d.chars.contains(&ch);
        match t.and_then(|t| self.types.get(t.index())) {
            Some(d) => named(d) || !self.types.iter().any(named),
            None => !self.types.iter().any(named),
        }
    }

    /// The counter kind holding a meter's current value (the counter named as the meter).
    pub fn meter_counter(&self, ch: CharId) -> Option<CounterId> {
        let d = self.characteristics.get(ch.index())?;
        if !d.meter {
            return None;
        }
        self.counters
            .iter()
            .position(|c| c.name == d.name)
            .map(|i| CounterId(i as u16))
    }

    /// The meter whose current value counters of `kind` hold, if any.
    pub fn meter_of_counter(&self, kind: CounterId) -> Option<CharId> {
        let name = &self.counters.get(kind.index())?.name;
        self.characteristics
            .iter()
            .position(|c| c.meter && &c.name == name)
            .map(|i| CharId(i as u16))
    }

    /// The abilities `ch`'s symbols give, if any.
    pub fn intrinsic_of(&self, ch: CharId) -> Option<&Intrinsic> {
        self.intrinsic.iter().find(|i| i.char == ch)
    }

    /// The sets `ch`'s symbols fall in, if it has any.
    pub fn categories_of(&self, ch: CharId) -> impl Iterator<Item = &Category> {
        self.categories.iter().filter(move |c| c.char == ch)
    }

    /// Every symbol of a set: its list, or for the set of the others, every symbol no other set
    /// lists.
    pub fn category_set(&self, c: &Category) -> SymbolSet {
        match &c.members {
            Some(m) => m.clone(),
            None => SymbolSet::every_but(&self.listed(c.char)),
        }
    }

    /// The symbols some set of `ch` lists.
    fn listed(&self, ch: CharId) -> SymbolSet {
        let mut all = SymbolSet::default();
        for c in self.categories_of(ch) {
            if let Some(m) = &c.members {
                all.extend(m);
            }
        }
        all
    }

    /// Every symbol of the sets that `set`'s symbols belong to (CR 205.1a: "the new subtype
    /// replaces any existing subtypes from the appropriate set"). Symbols in no set form one set
    /// of their own.
    pub fn categories_holding(&self, ch: CharId, set: &SymbolSet) -> SymbolSet {
        let meets = |other: &SymbolSet| {
            let mut x = set.clone();
            x.intersect(other);
            !x.is_empty()
        };
        let mut out = SymbolSet::default();
        let mut others = false;
        for c in self.categories_of(ch) {
            let all = self.category_set(c);
            if meets(&all) {
                out.extend(&all);
            }
            others |= c.members.is_none();
        }
        if !others {
            let rest = SymbolSet::every_but(&self.listed(ch));
            if meets(&rest) {
                out.extend(&rest);
            }
        }
        out
    }

    /// The characteristics whose categories are tied to card types and that layer `l` may change
    /// (with the card types' characteristic): where they are brought back in line.
    pub fn tied_in_layer(&self, l: LayerId) -> Vec<CharId> {
        let changes = |c: CharId| {
            [OpKind::Set, OpKind::Add, OpKind::Remove]
                .iter()
                .any(|k| self.layer_def(l).accepts(SlotTarget::Char(c), *k, true))
        };
        let mut out: Vec<CharId> = Vec::new();
        for c in &self.categories {
            if let Some((by, _)) = &c.by {
                if !out.contains(&c.char) && (changes(c.char) || changes(*by)) {
                    out.push(c.char);
                }
            }
        }
        out
    }

    /// The symbols of `ch` an object may have, given its values (CR 205.1a, 205.3d): those of
    /// the sets tied to a card type it has, and those of sets tied to none. `None` when `ch` has
    /// no set tied to card types.
    pub fn symbols_allowed(&self, ch: CharId, row: &[Value]) -> Option<SymbolSet> {
        if !self.categories_of(ch).any(|c| c.by.is_some()) {
            return None;
        }
        let mut allowed = SymbolSet::default();
        let mut others = false;
        for c in self.categories_of(ch) {
            others |= c.members.is_none();
            let has = match &c.by {
                None => true,
                Some((by, types)) => match &row[by.index()] {
                    Value::Symbols(t) => types.iter().any(|x| t.contains(x)),
                    _ => false,
                },
            };
            if has {
                allowed.extend(&self.category_set(c));
            }
        }
        if !others {
            allowed.extend(&SymbolSet::every_but(&self.listed(ch)));
        }
        Some(allowed)
    }

    /// Declares the built-in events (once, after the ruleset's own), each with the changes its
    /// arguments make.
    pub fn add_builtin_events(&mut self) -> Builtin {
        use crate::model::event::{Amount, EventKind, ParamDef, ParamKind, ParamOr, Primitive};
        if let Some(b) = self.builtin {
            return b;
        }
        let mut add = |name: &str, params: &[(&str, ParamKind)], changes: Vec<Primitive>| {
            let id = crate::model::ids::EventId(self.events.len() as u16);
            self.events.push(EventKind {
                name: Arc::from(name),
                params: params
                    .iter()
                    .map(|(n, k)| ParamDef {
                        name: Arc::from(*n),
                        kind: *k,
                    })
                    .collect(),
                changes,
                amount: None,
                period: false,
                turn: false,
                ordered_by: None,
                any_order: Vec::new(),
            });
            id
        };
        let card = ("card", ParamKind::Object);
        let from = ("from", ParamKind::Zone);
        let to = ("to", ParamKind::Zone);
        let enters = add("enters", &[card], Vec::new());
        let moves = vec![Primitive::Move {
            object: 0,
            zone: ParamOr::Param(2),
        }];
        let changes_zone = add("changes_zone", &[card, from, to], moves);
        // Its change is its `changes_zone`'s.
        let leaves_play = add("leaves_play", &[card, from, to], Vec::new());
        let counters_placed = add(
            "counters_placed",
            &[
                card,
                ("amount", ParamKind::Number),
                ("counter", ParamKind::Counter),
            ],
            vec![Primitive::Counters {
                object: 0,
                counter: ParamOr::Param(2),
                amount: Amount::Param(1),
            }],
        );
        let attached = add(
            "attached",
            &[card, ("to", ParamKind::Object)],
            vec![Primitive::Attach { object: 0, to: 1 }],
        );
        let unattached = add(
            "unattached",
            &[card],
            vec![Primitive::Unattach { object: 0 }],
        );
        let player = ("player", ParamKind::Player);
        let resolves = add(
            "resolves",
            &[card, ("controller", ParamKind::Player)],
            Vec::new(),
        );
        let face = |down| vec![Primitive::Face { object: 0, down }];
        let turns_face_up = add("turns_face_up", &[card], face(false));
        let turns_face_down = add("turns_face_down", &[card], face(true));
        let merges = add(
            "merges",
            &[
                card,
                ("into", ParamKind::Object),
                ("under", ParamKind::Number),
            ],
            vec![Primitive::Merge {
                object: 0,
                into: 1,
                under: 2,
            }],
        );
        let effects_end = add(
            "effects_end",
            &[card],
            vec![Primitive::EndEffects { source: 0 }],
        );
        let effect_ends = add(
            "effect_ends",
            &[card, ("effect", ParamKind::Number)],
            vec![Primitive::EndEffect { effect: 1 }],
        );
        let property_set = add(
            "property_set",
            &[
                player,
                ("property", ParamKind::Property),
                ("value", ParamKind::Number),
            ],
            vec![Primitive::SetProperty {
                player: 0,
                prop: 1,
                value: 2,
            }],
        );
        let turn_ends = add("turn_ends", &[player], vec![Primitive::EndTurn]);
        let shuffles = add(
            "shuffles",
            &[player, ("zone", ParamKind::Zone)],
            vec![Primitive::Shuffle { player: 0, zone: 1 }],
        );
        let loses = add("loses", &[player], vec![Primitive::Lose { player: 0 }]);
        self.events[counters_placed.index()].amount = Some(1);
        let b = Builtin {
            enters,
            changes_zone,
            leaves_play,
            counters_placed,
            attached,
            unattached,
            resolves,
            turns_face_up,
            turns_face_down,
            merges,
            effects_end,
            effect_ends,
            property_set,
            turn_ends,
            shuffles,
            loses,
        };
        self.builtin = Some(b);
        b
    }

    /// The event kind of an id, or `NoSuchEvent`.
    pub fn event(
        &self,
        e: crate::model::ids::EventId,
    ) -> Result<&crate::model::event::EventKind, ActionError> {
        self.events
            .get(e.index())
            .ok_or(ActionError::NoSuchEvent(e.0))
    }

    /// The event kind of an id the engine checked (an occurrence's, a response's).
    pub(crate) fn event_kind(
        &self,
        e: crate::model::ids::EventId,
    ) -> &crate::model::event::EventKind {
        &self.events[e.index()]
    }

    /// Whether an event is one of the built-in events, whose change is an engine action.
    pub fn is_builtin(&self, e: crate::model::ids::EventId) -> bool {
        self.builtin.is_some_and(|b| b.ids().contains(&e))
    }

    /// The timing points an occurrence of this event goes through, in order, as the event
    /// procedure takes it: a period "before" it begins, "after" it begins, "before" it ends and
    /// "after" it ends; `enters`, announced once the objects have entered, "after" only; any
    /// other event "before", "when" and "after". A response on another point never answers it.
    pub fn points(&self, e: crate::model::ids::EventId) -> &'static [crate::model::timing::Point] {
        use crate::model::timing::Point;
        if self.builtin.is_some_and(|b| b.enters == e) {
            &[Point::After]
        } else if self.events.get(e.index()).is_some_and(|k| k.period) {
            &[
                Point::Before,
                Point::AfterBegins,
                Point::BeforeEnds,
                Point::After,
            ]
        } else {
            &[Point::Before, Point::When, Point::After]
        }
    }

    /// The event kind of a name (the ruleset's own or a built-in one), if any.
    pub fn event_id(&self, name: &str) -> Option<crate::model::ids::EventId> {
        self.events
            .iter()
            .position(|e| &*e.name == name)
            .map(|i| crate::model::ids::EventId(i as u16))
    }

    /// The characteristic that holds objects' state, if the ruleset declares one.
    pub fn state_char(&self) -> Option<CharId> {
        self.characteristics
            .iter()
            .position(|c| c.state)
            .map(|i| CharId(i as u16))
    }

    /// The characteristic of a name, if the ruleset declares one.
    pub fn char_id(&self, name: &str) -> Option<CharId> {
        self.characteristics
            .iter()
            .position(|c| c.name == name)
            .map(|i| CharId(i as u16))
    }
    /// The player property of a name, if the ruleset declares one.
    pub fn prop_id(&self, name: &str) -> Option<PropId> {
        self.props
            .iter()
            .position(|c| c.name == name)
            .map(|i| PropId(i as u16))
    }
    /// The zone of a name, if the ruleset declares one.
    pub fn zone_id(&self, name: &str) -> Option<ZoneId> {
        self.zones
            .iter()
            .position(|c| c.name == name)
            .map(|i| ZoneId(i as u16))
    }
    /// The counter kind of a name, if the ruleset declares one.
    pub fn counter_id(&self, name: &str) -> Option<CounterId> {
        self.counters
            .iter()
            .position(|c| c.name == name)
            .map(|i| CounterId(i as u16))
    }
    /// The characteristic of an id, or `NoSuchCharacteristic`.
    pub fn char(&self, c: CharId) -> Result<&CharDef, ActionError> {
        self.characteristics
            .get(c.index())
            .ok_or(ActionError::NoSuchCharacteristic(c.0))
    }
    /// The zone of an id, or `NoSuchZone`.
    pub fn zone(&self, z: ZoneId) -> Result<&ZoneDef, ActionError> {
        self.zones
            .get(z.index())
            .ok_or(ActionError::NoSuchZone(z.0))
    }
    /// The counter kind of an id, or `NoSuchCounter`.
    pub fn counter(&self, k: CounterId) -> Result<&CounterDef, ActionError> {
        self.counters
            .get(k.index())
            .ok_or(ActionError::NoSuchCounter(k.0))
    }
    /// The layer of an id, or `NoSuchLayer`.
    pub fn layer(&self, l: LayerId) -> Result<&LayerDef, ActionError> {
        self.layers
            .get(l.index())
            .ok_or(ActionError::NoSuchLayer(l.0))
    }
    /// The characteristic of an id the engine checked (an effect's, a derivation's).
    pub(crate) fn char_def(&self, c: CharId) -> &CharDef {
        &self.characteristics[c.index()]
    }
    /// The zone of an id the engine checked (an object's, an action's after its check).
    pub(crate) fn zone_def(&self, z: ZoneId) -> &ZoneDef {
        &self.zones[z.index()]
    }
    /// The layer of an id the engine checked.
    pub(crate) fn layer_def(&self, l: LayerId) -> &LayerDef {
        &self.layers[l.index()]
    }
    /// The characteristic of the given kind, if the ruleset has exactly one (abilities, controller).
    pub fn char_of_kind(&self, kind: CharKind) -> Option<CharId> {
        let mut it = self
            .characteristics
            .iter()
            .enumerate()
            .filter(|(_, c)| c.kind == kind);
        let first = it.next()?;
        if it.next().is_some() {
            return None;
        }
        Some(CharId(first.0 as u16))
    }
    /// The first layer that accepts an operation (CR 613.6: each part of an effect applies in its
    /// own layer). `None` if no layer may change that characteristic that way.
    pub fn layer_for(&self, target: SlotTarget, kind: OpKind, defining: bool) -> Option<LayerId> {
        self.layers
            .iter()
            .position(|l| l.accepts(target, kind, defining))
            .map(|i| LayerId(i as u16))
    }
    /// Whether the layers can change characteristic `c`: a layer has a slot for it (CR 613.1),
    /// or applies face-down values that set it (CR 613.2b). Where they cannot, every object's
    /// derived value of it is its base value.
    pub fn layers_change(&self, c: CharId) -> bool {
        self.layers.iter().any(|l| {
            l.slots.iter().any(|s| s.target == SlotTarget::Char(c))
                || (l.face_down && self.face_down.iter().any(|(x, _)| *x == c))
        })
    }
    /// The number of layers that make copiable values: up to the last one that applies copy
    /// effects or face-down values.
    pub fn copiable_layers(&self) -> usize {
        self.layers
            .iter()
            .rposition(|l| {
                l.face_down
                    || l.slots
                        .iter()
                        .any(|s| s.kinds.as_ref().is_some_and(|k| k.contains(&OpKind::Copy)))
            })
            .map_or(0, |i| i + 1)
    }
    /// The one layer that applies counters (the layer that says `counters`), if any.
    pub fn counters_layer(&self) -> Option<LayerId> {
        self.layers
            .iter()
            .position(|l| l.counters)
            .map(|i| LayerId(i as u16))
    }
}
