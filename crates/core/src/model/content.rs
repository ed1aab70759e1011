//! Content: object classes (cards, units, buildings) with printed characteristics and abilities.

use crate::model::condition::{Cond, Node, NumExpr, TargetSpec};
use crate::model::effect::{Change, Duration, EffectDef};
use crate::model::error::ActionError;
use crate::model::ids::{CharId, ClassId, SlotTarget, ZoneId};
use crate::model::response::{Deed, ResponseDef, ResponseKind};
use crate::model::ruleset::{CharKind, Ruleset};
use crate::model::value::Value;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;

/// What a resolving spell does once, besides creating continuous effects.
#[derive(Clone, Debug, Serialize)]
pub enum OneShot {
    /// Put each target into a zone ("destroy target enchantment": to the graveyard).
    MoveTargets(ZoneId),
    /// Turn each target face up or face down (Break Open).
    TurnTargets {
        /// Face down (`true`) or face up.
        face_down: bool,
    },
    /// Put the target of that index into a zone (a named target).
    MoveTargetAt(u8, ZoneId),
    /// Turn the target of that index face up or face down (a named target).
    TurnTargetAt {
        /// The target's index, in the order of the spell's `target` lines.
        index: u8,
        /// Face down (`true`) or face up.
        face_down: bool,
    },
    /// Put counters on each target ("put a flying counter on it").
    PutCounters {
        /// The counter kind.
        counter: crate::model::ids::CounterId,
        /// How many counters each target gets.
        count: i64,
    },
    /// Anything a response's deed does ("deal 3 damage to any target", "create two 1/1
    /// tokens", "a duel begins"): an event of the ruleset or a built-in one, created objects,
    /// a period beginning or ending. Its `target` arguments name the spell's targets.
    Deed(crate::model::response::Deed),
}

/// What happens when an object of this class resolves as a spell.
#[derive(Clone, Debug, Serialize)]
pub struct Spell {
    /// The spell's rules text.
    pub text: Arc<str>,
    /// The targets it takes, in order (none when the spell has no target). Each may be an object
    /// or a player, as its condition says.
    pub targets: Vec<TargetSpec>,
    /// The continuous effects it creates as it resolves, in the order written, each with its
    /// duration.
    pub effects: Vec<(Duration, Arc<EffectDef>)>,
    /// What it does once as it resolves, in the order written, after its effects start.
    pub one_shots: Vec<OneShot>,
    /// Occurrences that pay for it as it is cast (`cost:`), in order; if one does not happen,
    /// it is not cast.
    pub costs: Vec<crate::model::response::Deed>,
    /// `choose X: MIN..MAX`: the least and greatest X its caster may announce as it is cast
    /// (CR 601.2b), read with the spell as the source and its caster as "you"; `X` in its costs
    /// and deeds is the number announced.
    pub choose: Option<(NumExpr, NumExpr)>,
}

/// An object class: a card (a unit, a building) as content declares it. Every object is of one
/// class.
#[derive(Clone, Debug, Serialize)]
pub struct ObjectClass {
    /// The class's name: the base value of the `name` characteristic, and its objects' name unless
    /// a scenario gives one an alias.
    pub name: String,
    /// Printed values; characteristics not listed start empty.
    pub printed: Vec<(CharId, Value)>,
    /// Its object type (`type: planet`), which says what characteristics it has; `None`: every
    /// one.
    pub object_type: Option<crate::model::ids::TypeId>,
    /// Static abilities, in the order written; each is also listed in the printed abilities.
    pub statics: Vec<Arc<EffectDef>>,
    /// What it does when it resolves as a spell, if it is one.
    pub spell: Option<Spell>,
    /// "Enter as a copy of" a chosen object (Clone): a copy effect starts as it enters.
    pub enters_as_copy: bool,
    /// What an object of this class can be attached to ("Enchant creature"; an Equipment equips
    /// a creature): tested on that object, with this one as the source. `None`: any object.
    pub attaches_to: Option<Cond>,
    /// Triggered traits, Reactions and replacement effects, in the order written.
    pub responses: Vec<Arc<crate::model::response::ResponseDef>>,
}

/// The responses of every class that listen to an event at a timing point: (class, index of the
/// response in the class), in a table by event and point (an occurrence looks up its own at each
/// of its points, so this is on the event core's hot path).
#[derive(Clone, Debug, Default)]
pub struct Listeners {
    /// By `event index * POINTS + point index`.
    table: Vec<Vec<(ClassId, u16)>>,
}

// Every timing point has its row in the table.
const _: () = assert!(crate::model::timing::Point::After as usize + 1 == Listeners::POINTS);

impl Listeners {
    /// How many timing points there are.
    const POINTS: usize = 5;

    fn slot(e: crate::model::ids::EventId, p: crate::model::timing::Point) -> usize {
        e.index() * Self::POINTS + p as usize
    }

    /// The responses listening to this event at this point.
    pub fn get(
        &self,
        e: crate::model::ids::EventId,
        p: crate::model::timing::Point,
    ) -> &[(ClassId, u16)] {
        self.table
            .get(Self::slot(e, p))
            .map_or(&[], |v| v.as_slice())
    }

    fn add(
        &mut self,
        e: crate::model::ids::EventId,
        p: crate::model::timing::Point,
        who: (ClassId, u16),
    ) {
        let i = Self::slot(e, p);
        if self.table.len() <= i {
            self.table.resize_with(i + 1, Vec::new);
        }
        let v = &mut self.table[i];
        if v.last() != Some(&who) {
            v.push(who);
        }
    }
}

/// What a play of a card of a class does, by play then class (`Content::play_def`).
type PlayDefs = Vec<std::sync::OnceLock<Option<Arc<crate::model::response::ResponseDef>>>>;

/// A game's object classes, loaded from content files; shared by every game state made with it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Content {
    /// The classes, indexed by [`ClassId`].
    pub classes: Vec<ObjectClass>,
    /// Each class's id by its name.
    #[serde(skip)]
    pub by_name: HashMap<String, ClassId>,
    /// `attachments_read_locally`, worked out once.
    #[serde(skip)]
    attach_local: std::sync::OnceLock<bool>,
    /// `listeners`, worked out once.
    #[serde(skip)]
    listening: std::sync::OnceLock<Listeners>,
    /// `responses_follow_abilities`, worked out once.
    #[serde(skip)]
    follow: std::sync::OnceLock<bool>,
    /// `has_prohibitions`, worked out once.
    #[serde(skip)]
    prohibiting: std::sync::OnceLock<bool>,
    /// Whether a layer writes players' properties, and which properties the layers read (worked
    /// out once by the layer system, which knows what an effect reads: `layers::prop_derived`).
    #[serde(skip)]
    pub(crate) props_derived: std::sync::OnceLock<(bool, crate::model::condition::Footprint)>,
    /// `order_derived`, worked out once.
    #[serde(skip)]
    order_derived: std::sync::OnceLock<bool>,
    /// `turn_derived`, worked out once.
    #[serde(skip)]
    turn_derived: std::sync::OnceLock<bool>,
    /// `stacks`, worked out once.
    #[serde(skip)]
    stacks: std::sync::OnceLock<bool>,
    /// `counters_unseen`, worked out once.
    #[serde(skip)]
    counters_unseen: std::sync::OnceLock<bool>,
    /// `statics_work_outside_play`, worked out once.
    #[serde(skip)]
    outside_play: std::sync::OnceLock<bool>,
    /// `responses_move`, worked out once.
    #[serde(skip)]
    moving: std::sync::OnceLock<bool>,
    /// `checks_read_locally`, worked out once.
    #[serde(skip)]
    checks_local: std::sync::OnceLock<bool>,
    /// `player_checks_read_props`, worked out once.
    #[serde(skip)]
    player_checks_props: std::sync::OnceLock<bool>,
    /// `player_checks_read_prop`: the properties the player checks read, worked out once.
    #[serde(skip)]
    player_checks_reads: std::sync::OnceLock<crate::model::condition::Footprint>,
    /// `rules_listening`, worked out once.
    #[serde(skip)]
    rules_listening: std::sync::OnceLock<Vec<Vec<u16>>>,
    /// `phase_cost_responses`, worked out once.
    #[serde(skip)]
    phase_costs: std::sync::OnceLock<Vec<(ClassId, u16)>>,
    /// `anything_listens`, by slot (`Listeners::slot`), worked out once.
    #[serde(skip)]
    any_listening: std::sync::OnceLock<Vec<bool>>,
    /// `class_name`, made once per class.
    #[serde(skip)]
    class_names: std::sync::OnceLock<Vec<Arc<str>>>,
    /// `printed_at`, made once per class.
    #[serde(skip)]
    printed_at: std::sync::OnceLock<Vec<Vec<u16>>>,
    /// `class_base`, made once per class.
    #[serde(skip)]
    class_bases: std::sync::OnceLock<Vec<Vec<crate::model::value::Value>>>,
    /// `play_row_reads`, worked out once.
    #[serde(skip)]
    play_rows: std::sync::OnceLock<Vec<Option<Vec<crate::model::ids::CharId>>>>,
    /// `play_class_fits`: each answer found once, by play then class.
    #[serde(skip)]
    play_fits: std::sync::OnceLock<Vec<std::sync::OnceLock<bool>>>,
    /// `play_def`: each definition made once, by play then class.
    #[serde(skip)]
    play_defs: std::sync::OnceLock<PlayDefs>,
}

impl Content {
    /// A copy for games on another thread: what every game copies from the content (each
    /// class's printed values and name, its responses' definitions, its spell's text) is held
    /// in places of its own, so that counting those copies touches no cache line that games on
    /// another thread touch.
    pub(crate) fn own_copy(&self) -> Content {
        let mut c = self.clone();
        for class in &mut c.classes {
            for (_, v) in &mut class.printed {
                *v = v.unshared();
            }
            for r in &mut class.responses {
                *r = Arc::new(crate::model::response::ResponseDef::clone(r));
            }
            if let Some(sp) = &mut class.spell {
                sp.text = Arc::from(&*sp.text);
            }
        }
        c.class_names = std::sync::OnceLock::new();
        c.class_bases = std::sync::OnceLock::new();
        c.play_defs = std::sync::OnceLock::new();
        c
    }

    /// The class of an id, or `NoSuchClass`.
    pub fn class(&self, id: ClassId) -> Result<&ObjectClass, ActionError> {
        self.classes
            .get(id.index())
            .ok_or(ActionError::NoSuchClass(id.0))
    }
    /// The class of an id the engine checked (an object's).
    pub(crate) fn class_def(&self, id: ClassId) -> &ObjectClass {
        &self.classes[id.index()]
    }
    /// The name of the class of an id the engine checked, shared by every object of it.
    pub(crate) fn class_name(&self, id: ClassId) -> Arc<str> {
        self.class_names.get_or_init(|| {
            self.classes
                .iter()
                .map(|c| Arc::from(c.name.as_str()))
                .collect()
        })[id.index()]
        .clone()
    }
    /// For each of a ruleset's `chars` characteristics, where a class's printed values hold it:
    /// 0 for none, else the place of the last printed for it, plus one. Made once per class.
    pub(crate) fn printed_at(&self, chars: usize, id: ClassId) -> &[u16] {
        &self.printed_at.get_or_init(|| {
            self.classes
                .iter()
                .map(|c| {
                    let mut at = vec![0u16; chars];
                    for (k, (ch, _)) in c.printed.iter().enumerate() {
                        if let Some(slot) = at.get_mut(ch.index()) {
                            *slot = k as u16 + 1;
                        }
                    }
                    at
                })
                .collect()
        })[id.index()]
    }
    /// A class's base values for a ruleset's characteristics (`GameState::base_values`) but an
    /// object's own (its state and its controller, left as the empty value here): the printed
    /// value (the last printed for it), else the class's name, the ruleset's default number or
    /// the empty value. Made once per class, for every game with this content.
    pub(crate) fn class_base(&self, rs: &Ruleset, id: ClassId) -> &[crate::model::value::Value] {
        use crate::model::ruleset::CharKind;
        use crate::model::value::Value;
        let chars = &rs.characteristics;
        &self.class_bases.get_or_init(|| {
            (0..self.classes.len())
                .map(|ci| {
                    let class = ClassId(ci as u32);
                    let printed = &self.classes[ci].printed;
                    let at = self.printed_at(chars.len(), class);
                    chars
                        .iter()
                        .zip(at)
                        .map(|(c, &at)| {
                            if at > 0 {
                                return printed[at as usize - 1].1.clone();
                            }
                            match c.kind {
                                CharKind::Name => Value::Text(self.class_name(class)),
                                CharKind::Number => Value::Number(c.default),
                                k => k.empty(),
                            }
                        })
                        .collect()
                })
                .collect()
        })[id.index()]
    }

    /// The class of a name, if any.
    pub fn class_id(&self, name: &str) -> Option<ClassId> {
        self.by_name.get(name).copied()
    }
    /// Adds a class; a class with the same name replaces the earlier one (a scenario's inline
    /// definition overrides the library's).
    pub fn add(&mut self, class: ObjectClass) -> ClassId {
        self.attach_local = std::sync::OnceLock::new();
        self.listening = std::sync::OnceLock::new();
        self.any_listening = std::sync::OnceLock::new();
        self.phase_costs = std::sync::OnceLock::new();
        self.class_names = std::sync::OnceLock::new();
        self.printed_at = std::sync::OnceLock::new();
        self.class_bases = std::sync::OnceLock::new();
        self.play_fits = std::sync::OnceLock::new();
        self.play_defs = std::sync::OnceLock::new();
        if let Some(id) = self.by_name.get(&class.name) {
            self.classes[id.index()] = class;
            return *id;
        }
        let id = ClassId(self.classes.len() as u32);
        self.by_name.insert(class.name.clone(), id);
        self.classes.push(class);
        id
    }

    /// Whether every class's `attaches to:` condition reads only the object it is tested on (and
    /// the attaching object as its source): whether an object is legally attached then depends
    /// on it and the object it is attached to alone.
    pub fn attachments_read_locally(&self) -> bool {
        *self.attach_local.get_or_init(|| {
            self.classes
                .iter()
                .all(|c| c.attaches_to.as_ref().is_none_or(Cond::is_local))
        })
    }

    /// Whether an object's responses can differ from those its class prints: the ruleset has an
    /// abilities characteristic, and some effect of this content or ruleset can remove, give,
    /// copy or set abilities (or symbols give abilities, CR 305.7), or a response is `granted`.
    /// Then an object answers an occurrence with a response only while its abilities hold it
    /// (CR 113.2c). Worked out once, for the ruleset the content was loaded with.
    pub fn responses_follow_abilities(&self, rs: &Ruleset) -> bool {
        *self.follow.get_or_init(|| {
            let Some(ac) = rs.char_of_kind(CharKind::Abilities) else {
                return false;
            };
            // An effect on the abilities, or one that moves responses between objects.
            self.responses_move(rs)
                || self.any_effect_def(rs, &mut |d| {
                    d.ops.iter().any(|op| op.target == SlotTarget::Char(ac))
                })
        })
    }

    /// Whether neither a derived value nor a state-based check reads counters: no continuous
    /// effect counts them and no check tests them. There, counters of a kind no layer applies
    /// (a meter's current value) change no derived value.
    pub fn counters_unseen(&self, rs: &Ruleset) -> bool {
        *self.counters_unseen.get_or_init(|| {
            !self.any_effect_def(rs, &mut |d| d.reads_counters())
                && !rs.state_checks.iter().any(|c| c.condition.reads_counters())
        })
    }

    /// Whether some effect has a stacking number: which objects it applies to then depends on
    /// every other effect with its number, so each change derives everything again.
    pub fn stacks(&self, rs: &Ruleset) -> bool {
        *self
            .stacks
            .get_or_init(|| self.any_effect_def(rs, &mut |d| d.stacking != 0))
    }

    /// Whether a derived value can read the turn: some effect's condition draws a chance, which
    /// draws anew each turn (FreeOrion's effects system, Chance). Where none, a new turn is no
    /// change for the derivation.
    pub fn turn_derived(&self, rs: &Ruleset) -> bool {
        *self.turn_derived.get_or_init(|| {
            let chance = |n: Node, _| matches!(n, Node::Cond(Cond::Chance { .. }));
            let draws = |c: &Cond| c.any_node(chance);
            self.any_effect_def(rs, &mut |d| {
                d.while_cond.as_ref().is_some_and(draws)
                    || match &d.affects {
                        crate::model::effect::Affects::Objects(c)
                        | crate::model::effect::Affects::Players(c) => draws(c),
                    }
                    || d.ops.iter().any(|op| match &op.change {
                        Change::SetNumber(e) | Change::Modify(e) => e.any_node(chance),
                        Change::AbilitiesPer { among, .. } | Change::AbilitiesOf { among, .. } => {
                            draws(among)
                        }
                        _ => false,
                    })
            })
        })
    }

    /// Whether the order of cards in a zone not in play can matter to a derived value: some
    /// static ability works outside play (`works in:`), or some effect's condition asks which card
    /// is on top of a zone. Where neither, a shuffle of a library changes no derived value
    /// (timestamps order effects only among those that apply, CR 613.7).
    pub fn order_derived(&self, rs: &Ruleset) -> bool {
        *self.order_derived.get_or_init(|| {
            let top = |n: Node, _| matches!(n, Node::Cond(Cond::OnTop(_)));
            let on_top = |c: &Cond| c.any_node(top);
            self.any_effect_def(rs, &mut |d| {
                !d.zones.is_empty()
                    || d.while_cond.as_ref().is_some_and(on_top)
                    || match &d.affects {
                        crate::model::effect::Affects::Objects(c)
                        | crate::model::effect::Affects::Players(c) => on_top(c),
                    }
                    || d.ops.iter().any(|op| match &op.change {
                        Change::SetNumber(e) | Change::Modify(e) => e.any_node(top),
                        Change::AbilitiesPer { among, .. } | Change::AbilitiesOf { among, .. } => {
                            on_top(among)
                        }
                        _ => false,
                    })
            })
        })
    }

    /// Whether each of the ruleset's state-based checks of objects tests only its object and the
    /// one it is attached to: then after a change only the objects it reached, and those attached
    /// to them, can newly fail one.
    pub fn checks_read_locally(&self, rs: &Ruleset) -> bool {
        *self.checks_local.get_or_init(|| {
            let attach_local = self.attachments_read_locally();
            rs.state_checks
                .iter()
                .filter(|c| !c.loses)
                .all(|c| c.condition.is_local_or_host(attach_local))
        })
    }

    /// Whether the ruleset's player checks (`player loses`) read nothing but players'
    /// properties (`life <= 0`): numbers, comparisons and properties of the player tested or of
    /// no player, not of the active player. Then a player none of them found stays unfound until
    /// a property changes.
    pub fn player_checks_read_props(&self, rs: &Ruleset) -> bool {
        use crate::model::condition::{Cond, Node, NumExpr, PlayerRef};
        *self.player_checks_props.get_or_init(|| {
            let plain = |n: Node, _| match n {
                Node::Cond(c) => !matches!(
                    c,
                    Cond::True | Cond::And(_) | Cond::Or(_) | Cond::Not(_) | Cond::Cmp(..)
                ),
                Node::Num(e) => match e {
                    NumExpr::Prop(r, _) => *r == PlayerRef::Active,
                    e => !e.is_arithmetic(),
                },
            };
            rs.state_checks
                .iter()
                .filter(|c| c.loses)
                .all(|c| !c.condition.any_node(plain))
        })
    }

    /// Whether a player check (`player loses`) may read this property of a player: a change of
    /// any other leaves what the checks found as it was, where they read only properties
    /// (`player_checks_read_props`).
    pub fn player_checks_read_prop(&self, rs: &Ruleset, prop: crate::model::ids::PropId) -> bool {
        self.player_checks_reads
            .get_or_init(|| {
                let mut read = crate::model::condition::Footprint::default();
                for c in rs.state_checks.iter().filter(|c| c.loses) {
                    c.condition
                        .reads(rs.char_of_kind(CharKind::Controller), &mut read);
                }
                read
            })
            .has_prop(prop)
    }

    /// Whether an object can hold a response of a class other than its own: some response is
    /// granted, symbols give abilities (CR 305.7), an object enters as a copy, or an effect copies
    /// or gives the abilities of other objects. Where none can, only the objects of a class answer
    /// with its responses (an effect may still remove them: `responses_follow_abilities`).
    pub fn responses_move(&self, rs: &Ruleset) -> bool {
        *self.moving.get_or_init(|| {
            // Copies, text changes and abilities given from other objects (or by symbols).
            let copies = |d: &EffectDef| {
                d.ops.iter().any(|op| {
                    matches!(
                        op.change,
                        Change::CopyOf(_)
                            | Change::SetValues(_)
                            | Change::TextOf(_)
                            | Change::SetText(_)
                            | Change::MergeAbilities(_)
                            | Change::AbilitiesOf { .. }
                            | Change::AbilitiesPer { .. }
                            | Change::WithIntrinsic { .. }
                    )
                })
            };
            !rs.intrinsic.is_empty()
                || rs.rules.iter().any(|r| r.granted)
                || self
                    .classes
                    .iter()
                    .any(|c| c.enters_as_copy || c.responses.iter().any(|r| r.granted))
                || self.any_effect_def(rs, &mut |d| copies(d))
        })
    }

    /// Whether some static ability works in a zone not in play (`works in:`, "this spell costs
    /// less").
    pub fn statics_work_outside_play(&self, rs: &Ruleset) -> bool {
        *self
            .outside_play
            .get_or_init(|| self.any_effect_def(rs, &mut |d| !d.zones.is_empty()))
    }

    /// Whether any continuous effect this content or its ruleset can start satisfies `f`: static
    /// abilities, the effects of spells, and those that responses' and rules' deeds (delayed ones
    /// included) and spells' one-shot deeds and costs start.
    pub fn any_effect_def(&self, rs: &Ruleset, f: &mut dyn FnMut(&EffectDef) -> bool) -> bool {
        fn in_deeds(deeds: &[Deed], f: &mut dyn FnMut(&EffectDef) -> bool) -> bool {
            deeds.iter().any(|d| in_deed(d, f))
        }
        fn in_deed(d: &Deed, f: &mut dyn FnMut(&EffectDef) -> bool) -> bool {
            match d {
                Deed::Effect { def, .. } => f(def),
                Deed::Delayed(dd) => in_deeds(&dd.deeds, f),
                _ => false,
            }
        }
        rs.rules.iter().any(|r| in_deeds(&r.deeds, f))
            || self.classes.iter().any(|c| {
                c.statics.iter().any(|d| f(d))
                    || c.spell.as_ref().is_some_and(|sp| {
                        sp.effects.iter().any(|(_, d)| f(d))
                            || sp.costs.iter().any(|d| in_deed(d, f))
                            || sp.one_shots.iter().any(|o| match o {
                                OneShot::Deed(d) => in_deed(d, f),
                                _ => false,
                            })
                    })
                    || c.responses.iter().any(|r| in_deeds(&r.deeds, f))
            })
    }

    /// Whether this content or its ruleset has any prohibition: most games have none, and then
    /// an occurrence beginning asks nothing more.
    pub fn has_prohibitions(&self, rs: &Ruleset) -> bool {
        *self.prohibiting.get_or_init(|| {
            let prohibits = |r: &Arc<ResponseDef>| r.kind == ResponseKind::Prohibition;
            rs.rules.iter().any(prohibits)
                || self
                    .classes
                    .iter()
                    .any(|c| c.responses.iter().any(prohibits))
        })
    }

    /// For each of a ruleset's plays, the characteristics its `cards:` condition reads where it
    /// reads only the tested card's values (`Cond::row_reads`): cards whose values are the same
    /// answer it alike.
    pub(crate) fn play_row_reads(
        &self,
        rs: &Ruleset,
        play: usize,
    ) -> Option<&[crate::model::ids::CharId]> {
        self.play_rows
            .get_or_init(|| {
                rs.plays
                    .iter()
                    .map(|p| p.cards.as_ref().and_then(|c| c.row_reads()))
                    .collect()
            })
            .get(play)?
            .as_deref()
    }

    /// The answer of play `play`'s `cards:` test for the cards of a class where no effect applies
    /// and the test reads only values its class prints (see `play_row_reads`): `test`'s answer
    /// for the first card of the class asked about, kept for every game with this content.
    pub(crate) fn play_class_fits(
        &self,
        rs: &Ruleset,
        play: usize,
        class: ClassId,
        test: impl FnOnce() -> bool,
    ) -> bool {
        self.per_play_class(&self.play_fits, rs, play, class, test)
    }

    /// The value `table` keeps for play `play` and a class: `make`'s, made the first time it is
    /// asked for; made each time for a play or class past the table.
    fn per_play_class<T: Clone>(
        &self,
        table: &std::sync::OnceLock<Vec<std::sync::OnceLock<T>>>,
        rs: &Ruleset,
        play: usize,
        class: ClassId,
        make: impl FnOnce() -> T,
    ) -> T {
        let n = self.classes.len();
        let table = table.get_or_init(|| {
            (0..rs.plays.len() * n)
                .map(|_| std::sync::OnceLock::new())
                .collect()
        });
        match table.get(play * n + class.index()) {
            Some(cell) if class.index() < n => cell.get_or_init(make).clone(),
            _ => make(),
        }
    }

    /// What play `play` of a card of a class does (its announcement, or its deeds): `make`'s
    /// definition for the first card asked about, kept for every game with this content (it
    /// depends on the play and the class only).
    pub(crate) fn play_def(
        &self,
        rs: &Ruleset,
        play: usize,
        class: ClassId,
        make: impl FnOnce() -> Option<crate::model::response::ResponseDef>,
    ) -> Option<Arc<crate::model::response::ResponseDef>> {
        self.per_play_class(&self.play_defs, rs, play, class, || make().map(Arc::new))
    }

    /// The ruleset's rules that listen to an event at a timing point, by index in order.
    pub fn rules_listening(
        &self,
        rs: &Ruleset,
        e: crate::model::ids::EventId,
        p: crate::model::timing::Point,
    ) -> &[u16] {
        let table = self.rules_listening.get_or_init(|| {
            let mut table: Vec<Vec<u16>> = Vec::new();
            for (i, r) in rs.rules.iter().enumerate() {
                for pat in &r.trigger.patterns {
                    let at = Listeners::slot(pat.event, r.trigger.point);
                    if table.len() <= at {
                        table.resize_with(at + 1, Vec::new);
                    }
                    if table[at].last() != Some(&(i as u16)) {
                        table[at].push(i as u16);
                    }
                }
            }
            table
        });
        table
            .get(Listeners::slot(e, p))
            .map_or(&[], |v| v.as_slice())
    }

    /// The responses with a phase cost, as (class, index among its responses), in order.
    pub(crate) fn phase_cost_responses(&self) -> &[(ClassId, u16)] {
        self.phase_costs.get_or_init(|| {
            let mut out = Vec::new();
            for (ci, c) in self.classes.iter().enumerate() {
                for (ri, r) in c.responses.iter().enumerate() {
                    if r.phase.as_ref().is_some_and(|p| p.cost.is_some()) {
                        out.push((ClassId(ci as u32), ri as u16));
                    }
                }
            }
            out
        })
    }

    /// Whether a class's response (`listeners`) or a ruleset's rule (`rules_listening`) listens
    /// to an event at a timing point: one look in a table made once.
    pub fn anything_listens(
        &self,
        rs: &Ruleset,
        e: crate::model::ids::EventId,
        p: crate::model::timing::Point,
    ) -> bool {
        let table = self.any_listening.get_or_init(|| {
            let n = rs.events.len() * Listeners::POINTS;
            (0..n)
                .map(|slot| {
                    let e = crate::model::ids::EventId((slot / Listeners::POINTS) as _);
                    let p = crate::model::timing::Point::ALL[slot % Listeners::POINTS];
                    !self.listeners(e, p).is_empty() || !self.rules_listening(rs, e, p).is_empty()
                })
                .collect()
        });
        match table.get(Listeners::slot(e, p)) {
            Some(&b) => b,
            // An event past the table's: asked directly.
            None => !self.listeners(e, p).is_empty() || !self.rules_listening(rs, e, p).is_empty(),
        }
    }

    /// The responses that listen to an event at a timing point: an occurrence costs what listens
    /// to its kind, not every response in the game.
    pub fn listeners(
        &self,
        e: crate::model::ids::EventId,
        p: crate::model::timing::Point,
    ) -> &[(ClassId, u16)] {
        let all = self.listening.get_or_init(|| {
            let mut m = Listeners::default();
            for (ci, c) in self.classes.iter().enumerate() {
                for (ri, r) in c.responses.iter().enumerate() {
                    for pat in &r.trigger.patterns {
                        m.add(pat.event, r.trigger.point, (ClassId(ci as u32), ri as u16));
                    }
                }
            }
            m
        });
        all.get(e, p)
    }
}
