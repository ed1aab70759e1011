//! Continuous effects: what they change (operations), whom they affect, how long they last.

use crate::model::condition::{Cond, NumExpr, PlayerRef};
use crate::model::ids::SlotTarget;
use crate::model::ids::{CharId, EventId, LayerId, ObjectId, PlayerId, Timestamp, ZoneId};
use crate::model::value::{Ability, Symbol, SymbolSet, Value};
use serde::Serialize;
use std::sync::Arc;

/// The kind of an operation, which with its target decides its layer (CR 613.4: 7b set, 7c modify,
/// 7d switch, 7e in the 2017 CR; layers 4-6 add and remove).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum OpKind {
    /// Sets a value (`=`); for power and toughness, layer 7b (CR 613.4b).
    Set,
    /// Adds to or subtracts from a number (`+=`, `-=`); for power and toughness, layer 7c
    /// (CR 613.4c).
    Modify,
    /// Exchanges two numbers (`switch`): layer 7d (CR 613.4d; 7e in the 2017 CR).
    Switch,
    /// Adds symbols or abilities (`+=`).
    Add,
    /// Removes symbols or abilities (`-=`).
    Remove,
    /// Copy effects (layer 1a): copiable values.
    Copy,
    /// Text-changing effects (layer 3).
    Text,
}

impl OpKind {
    /// The kind's name, as a layer entry lists kinds (`set`, `modify`, `switch`, `add`, `remove`).
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Set => "set",
            OpKind::Modify => "modify",
            OpKind::Switch => "switch",
            OpKind::Add => "add",
            OpKind::Remove => "remove",
            OpKind::Copy => "copy",
            OpKind::Text => "text",
        }
    }
}

/// Symbols an operation names: written ones, and the symbol chosen for the source as it entered
/// ("choose a creature type", "naming Goblin").
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SymList {
    /// The symbols written.
    pub set: SymbolSet,
    /// Whether it also names the source's first choice (`chosen`).
    pub chosen: bool,
}

/// One change an effect makes to a characteristic or player property.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub enum Change {
    /// `= EXPR` on a number characteristic or player property: sets it to the expression's
    /// value (no number where the expression has none).
    SetNumber(NumExpr),
    /// `+= EXPR`, or `-= EXPR` stored as `+= -EXPR`: adds the expression's value to a number.
    Modify(NumExpr),
    /// Exchange this characteristic's value with another's (power and toughness).
    SwitchWith(CharId),
    /// `= ...` on a symbols characteristic: replaces its symbols.
    SetSymbols(SymList),
    /// Sets a characteristic whose symbols fall in sets (CR 205.1a, 205.3): removes every symbol of
    /// the sets the new symbols belong to (`replaced`, worked out when loaded; a chosen symbol's
    /// set is added as it applies), then adds the new ones. "Becomes a Dragon" keeps the
    /// artifact types.
    SetInCategories {
        /// The new symbols.
        set: SymList,
        /// The symbols removed first: every symbol of the categories the new ones belong to.
        replaced: SymbolSet,
    },
    /// `+= ...` on a symbols characteristic: adds the symbols.
    AddSymbols(SymList),
    /// `-= ...` on a symbols characteristic: removes the symbols.
    RemoveSymbols(SymList),
    /// `abilities = ...`: replaces the ability list (`none` removes static abilities too).
    SetAbilities(Vec<Ability>),
    /// `abilities += ...`: adds the abilities ("gains flying").
    AddAbilities(Vec<Ability>),
    /// `abilities -= ...`: removes the abilities ("loses flying").
    RemoveAbilities(Vec<Ability>),
    /// `controller = ...`: the player named becomes the controller (control-changing effects,
    /// CR 613.1b).
    SetPlayer(PlayerRef),
    /// `= "..."` on a text or name characteristic: sets the text.
    SetText(Arc<str>),
    /// "Becomes a copy of": as written in content, resolved to `SetValues` when the effect is
    /// created (a copy takes the copiable values as they are then).
    CopyOf(CopySource),
    /// Copiable values taken when a copy effect was created.
    SetValues(Arc<Vec<(CharId, Value)>>),
    /// Merged copiable values (mutate): the abilities of the cards merged under.
    MergeAbilities(Vec<Ability>),
    /// "Has the full text of" another object, read continuously (layer 3).
    TextOf(CopySource),
    /// Replace every instance of a word in ability names (layer 3, Mind Bend).
    ReplaceWord(SymRef, SymRef),
    /// A change to a characteristic whose symbols give abilities (`Intrinsic`, CR 305.6-305.7):
    /// the change, and, on an object concerned, the abilities the new symbols give or take away,
    /// written in the same layer. `makes`: whether the same effect, in the same layer, makes the
    /// object concerned (`types = land`: `Some(true)`) or not; `None` when it does not say.
    WithIntrinsic {
        /// The change to the characteristic.
        change: Box<Change>,
        /// Whether the effect makes the object concerned (`Some(true)`), not concerned
        /// (`Some(false)`), or does not say (`None`: the object's own symbols decide).
        makes: Option<bool>,
    },
    /// "Has all activated abilities of all creature cards in all graveyards" (Necrotic Ooze): the
    /// abilities of a kind (`None`: all) of every object, in any zone, that satisfies `among`, as
    /// derived so far.
    AbilitiesOf {
        /// The kind of abilities taken (`None`: every kind).
        kind: Option<crate::model::value::AbilityKind>,
        /// The objects whose abilities are taken, in any zone.
        among: Cond,
    },
    /// One ability per symbol of a characteristic among matching objects ("protection from the
    /// colors of permanents you control"): `template` with `{}` replaced by the symbol.
    AbilitiesPer {
        /// The ability's name, with `{}` where the symbol goes ("protection from {}").
        template: Arc<str>,
        /// The symbols characteristic read on the matching objects ("colors").
        of: CharId,
        /// The objects read, in any zone.
        among: Cond,
    },
}

/// The object a copy or text effect takes values from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum CopySource {
    /// The spell's target (its first object target).
    Target,
    /// The spell's target of that index (a named target).
    TargetAt(u8),
    /// The top object (latest to enter) of a zone that "you" own.
    Top(ZoneId),
}

/// A word an operation names: written, or one of the source's choices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum SymRef {
    /// A word written in the content.
    Lit(Symbol),
    /// The source's choice of that index (`first_choice`: 0, `second_choice`: 1).
    Chosen(u8),
}

impl Change {
    /// Whether the change reads more than the subject's own values and what it names:
    /// aggregates, other objects, player properties, another object's text or abilities.
    pub fn reads_others(&self) -> bool {
        match self {
            Change::SetNumber(e) | Change::Modify(e) => !e.is_local(),
            Change::TextOf(_) | Change::AbilitiesPer { .. } | Change::AbilitiesOf { .. } => true,
            Change::WithIntrinsic { change, .. } => change.reads_others(),
            Change::SwitchWith(_)
            | Change::SetSymbols(_)
            | Change::SetInCategories { .. }
            | Change::AddSymbols(_)
            | Change::RemoveSymbols(_)
            | Change::SetAbilities(_)
            | Change::AddAbilities(_)
            | Change::RemoveAbilities(_)
            | Change::SetPlayer(_)
            | Change::SetText(_)
            | Change::CopyOf(_)
            | Change::SetValues(_)
            | Change::MergeAbilities(_)
            | Change::ReplaceWord(..) => false,
        }
    }

    /// The kind of the operation, which with its target decides its layer.
    pub fn kind(&self) -> OpKind {
        match self {
            Change::WithIntrinsic { change, .. } => change.kind(),
            Change::SetNumber(_)
            | Change::SetSymbols(_)
            | Change::SetInCategories { .. }
            | Change::SetAbilities(_)
            | Change::SetPlayer(_)
            | Change::SetText(_) => OpKind::Set,
            Change::Modify(_) => OpKind::Modify,
            Change::SwitchWith(_) => OpKind::Switch,
            Change::AddSymbols(_)
            | Change::AddAbilities(_)
            | Change::AbilitiesPer { .. }
            | Change::AbilitiesOf { .. } => OpKind::Add,
            Change::RemoveSymbols(_) | Change::RemoveAbilities(_) => OpKind::Remove,
            Change::CopyOf(_) | Change::SetValues(_) | Change::MergeAbilities(_) => OpKind::Copy,
            Change::TextOf(_) | Change::ReplaceWord(..) => OpKind::Text,
        }
    }
}

/// One operation of an effect: a change to one characteristic or player property, in one
/// layer.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Op {
    /// The characteristic or player property it writes.
    pub target: SlotTarget,
    /// What it does to the value.
    pub change: Change,
    /// The layer this part of the effect applies in, fixed when content is loaded.
    pub layer: LayerId,
    /// In a spell's effect: its number is read again at every derivation, as a static ability's
    /// is, instead of fixed when the spell resolves (CR 608.2h, the default for resolved spells).
    pub continuous: bool,
    /// What the layer system asks of its amounts, worked out when first asked.
    #[serde(skip)]
    facts: std::sync::OnceLock<OpFacts>,
}

/// What an operation's amounts read, by kind: worked out once per operation, since the layer
/// system asks at every step of every recomputation.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpFacts {
    /// Its amounts read more than the subject's own values and what it names: aggregates,
    /// other objects, player properties, or another object's text or abilities.
    pub reads_others: bool,
    /// Its number reads another object than the subject (not through aggregates).
    pub refers_to_others: bool,
    /// Its number holds an aggregate (`count`, `sum`, `exists`, ...).
    pub has_aggregates: bool,
}

impl Op {
    /// An operation writing `target` in layer `layer`.
    pub fn new(target: SlotTarget, change: Change, layer: LayerId, continuous: bool) -> Op {
        Op {
            target,
            change,
            layer,
            continuous,
            facts: std::sync::OnceLock::new(),
        }
    }

    /// The same operation with another change (its facts worked out anew).
    pub fn with_change(&self, change: Change) -> Op {
        Op::new(self.target, change, self.layer, self.continuous)
    }

    /// Replaces its change; what was worked out of the old one is forgotten. (Write `change`
    /// through this: `facts` keeps what it worked out of the change it first saw.)
    pub fn set_change(&mut self, change: Change) {
        self.change = change;
        self.facts = std::sync::OnceLock::new();
    }

    /// What its amounts read (`OpFacts`).
    pub fn facts(&self) -> OpFacts {
        *self.facts.get_or_init(|| {
            let number = match &self.change {
                Change::SetNumber(e) | Change::Modify(e) => Some(e),
                _ => None,
            };
            OpFacts {
                reads_others: self.change.reads_others(),
                refers_to_others: number.is_some_and(|e| e.refers_to_others()),
                has_aggregates: number.is_some_and(|e| {
                    let mut a = Vec::new();
                    e.aggregates(&mut a);
                    !a.is_empty()
                }),
            }
        })
    }
}

/// Whom an effect applies to: objects or players matching a condition.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub enum Affects {
    /// Every object, in any zone, that satisfies the condition.
    Objects(Cond),
    /// Every player that satisfies the condition (effects on player properties).
    Players(Cond),
}

/// An effect as written in content: a static ability's, or one a spell creates.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct EffectDef {
    /// The rules text, shown in explanations.
    pub text: Arc<str>,
    /// Whom it applies to (`affects:`).
    pub affects: Affects,
    /// "As long as": the effect exists only while this holds (conditional continuous effects, as in
    /// the Legend of the Five Rings CCG's "CE Timing" rules).
    pub while_cond: Option<Cond>,
    /// From a characteristic-defining ability: applied first in its layer (CR 613.3, 613.4a).
    pub defining: bool,
    /// Its operations, each in its own layer, in the order written.
    pub ops: Vec<Op>,
    /// Zones where a static ability works besides the zones in play ("this spell costs less").
    pub zones: Vec<ZoneId>,
    /// A stacking number (FreeOrion's effects system, Stacking Number): 0 always applies; with
    /// another, the effect applies to an object only where no effect with the same number
    /// applied to it before, in the order [`EffectDef::priority`] and the layers give.
    #[serde(default)]
    pub stacking: u32,
    /// Among effects with a stacking number, higher goes first (then the layers' order:
    /// timestamp, then source and place).
    #[serde(default)]
    pub priority: i32,
    /// `affects_key`, worked out once.
    #[serde(skip)]
    pub affects_text: std::sync::OnceLock<Arc<str>>,
    /// `ability_name`, worked out once.
    #[serde(skip)]
    pub text_symbol: std::sync::OnceLock<Symbol>,
    /// `reads_counters`, worked out once (a copy whose parts change must start it anew).
    #[serde(skip)]
    pub counts_counters: std::sync::OnceLock<bool>,
}

impl EffectDef {
    /// An effect on its source alone, with one operation, in play only and with no condition:
    /// what the kernel creates for a choice made as an object enters or a characteristic set for
    /// good.
    pub fn on_source(text: Arc<str>, op: Op) -> EffectDef {
        EffectDef {
            text,
            affects: Affects::Objects(Cond::IsSource),
            while_cond: None,
            defining: false,
            ops: vec![op],
            zones: Vec::new(),
            stacking: 0,
            priority: 0,
            affects_text: Default::default(),
            text_symbol: Default::default(),
            counts_counters: Default::default(),
        }
    }

    /// The same for effects whose subjects are written alike ("creatures you control" on many
    /// cards): for the same source and "you" they pick the same objects.
    pub fn affects_key(&self) -> &Arc<str> {
        self.affects_text
            .get_or_init(|| format!("{:?}", self.affects).into())
    }

    /// The name a static ability with this effect has in an ability list (its rules text), for
    /// reads of whether an object still has it.
    pub fn ability_name(&self) -> &Symbol {
        self.text_symbol
            .get_or_init(|| Symbol::from(self.text.clone()))
    }

    /// Whether one of its operations applies in this layer.
    pub fn has_layer(&self, layer: LayerId) -> bool {
        self.ops.iter().any(|o| o.layer == layer)
    }

    /// The first layer the effect applies in: where whether it exists and whom it affects is
    /// decided (CR 613.6: it keeps applying to them in later layers).
    pub fn first_layer(&self) -> Option<LayerId> {
        self.ops.iter().map(|o| o.layer).min()
    }

    /// The classes whose static abilities this effect can give an object.
    pub fn granted_classes(&self) -> Vec<crate::model::ids::ClassId> {
        let mut out = Vec::new();
        let mut from = |l: &[Ability]| {
            out.extend(l.iter().filter_map(|a| match a {
                Ability::Static { class, .. } => Some(*class),
                Ability::Keyword(_) | Ability::Kinded { .. } | Ability::Response { .. } => None,
            }))
        };
        for op in &self.ops {
            match &op.change {
                Change::SetAbilities(l) | Change::AddAbilities(l) | Change::MergeAbilities(l) => {
                    from(l)
                }
                Change::SetValues(vals) => vals.iter().for_each(|(_, v)| {
                    if let Value::Abilities(l) = v {
                        from(l)
                    }
                }),
                _ => {}
            }
        }
        out
    }

    /// Whether the effect can give an object static abilities of any class (the abilities of
    /// other objects), which `granted_classes` cannot list.
    pub fn grants_any(&self) -> bool {
        self.ops.iter().any(|o| {
            matches!(
                o.change,
                Change::AbilitiesOf {
                    kind: None | Some(crate::model::value::AbilityKind::Static),
                    ..
                }
            )
        })
    }

    /// Whether anything the effect reads (whom it affects, "as long as", its amounts) counts
    /// counters.
    pub fn reads_counters(&self) -> bool {
        *self.counts_counters.get_or_init(|| {
            let affects = match &self.affects {
                Affects::Objects(c) | Affects::Players(c) => c,
            };
            affects.reads_counters()
                || self.while_cond.as_ref().is_some_and(Cond::reads_counters)
                || self.ops.iter().any(|o| match &o.change {
                    Change::SetNumber(e) | Change::Modify(e) => e.reads_counters(),
                    Change::AbilitiesPer { among, .. } | Change::AbilitiesOf { among, .. } => {
                        among.reads_counters()
                    }
                    _ => false,
                })
        })
    }
}

/// How long a created effect lasts.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub enum Duration {
    /// Ends when the turn ends (`until end of turn`; CR 514.2).
    UntilEndOfTurn,
    /// Until its source leaves play.
    WhileSourceInPlay,
    /// Lasts until the effects of its source are ended (`effect { ... }`, `end effects of`).
    Indefinite,
    /// Until a player's next turn begins, as written in content: whose turn is decided when the
    /// effect is created (`UntilTurnOfPlayer`). "Until its controller's next untap step" ends
    /// here too: the untap step is the first step of that player's turn.
    UntilTurnOf(TurnOf),
    /// Until this player's next turn begins.
    UntilTurnOfPlayer(PlayerId),
    /// "For as long as ...": ends, once and for all, the first time the condition (tested on the
    /// spell, like a spell effect's "as long as") does not hold (CR 611.2b); an effect whose
    /// condition does not hold as it is created does nothing.
    ForAsLongAs(Arc<Cond>),
    /// Until a period of this kind ends ("until the end of the battle"); `next`: not the one in
    /// progress, but the next to end after it ("until the end of the next phase"). As written
    /// in content: the periods open are noted when the effect is created (`UntilPeriodEnds`).
    UntilEndOf {
        /// The period's event kind.
        period: EventId,
        /// "Next": the period in progress is excluded.
        next: bool,
    },
    /// Until a period of this kind ends, other than these, which were open when the effect was
    /// created and each of which, as it ends, is taken off the list.
    UntilPeriodEnds {
        /// The period's event kind.
        period: EventId,
        /// The periods whose end does not end it.
        skip: Vec<crate::model::occurrence::Occurrence>,
    },
}

/// Whose next turn ends an effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum TurnOf {
    /// The spell's caster.
    You,
    /// The controller, as the spell resolves, of its first object target.
    ItsController,
}

/// Durations are equal when of the same kind with the same player, or the same condition.
impl PartialEq for Duration {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Duration::UntilTurnOf(a), Duration::UntilTurnOf(b)) => a == b,
            (Duration::UntilTurnOfPlayer(a), Duration::UntilTurnOfPlayer(b)) => a == b,
            (Duration::ForAsLongAs(a), Duration::ForAsLongAs(b)) => Arc::ptr_eq(a, b),
            (
                Duration::UntilEndOf { period, next },
                Duration::UntilEndOf { period: p, next: n },
            ) => period == p && next == n,
            (
                Duration::UntilPeriodEnds { period, skip },
                Duration::UntilPeriodEnds { period: p, skip: s },
            ) => period == p && skip == s,
            (a, b) => {
                std::mem::discriminant(a) == std::mem::discriminant(b)
                    && !matches!(
                        a,
                        Duration::UntilTurnOf(_)
                            | Duration::UntilTurnOfPlayer(_)
                            | Duration::ForAsLongAs(_)
                            | Duration::UntilEndOf { .. }
                            | Duration::UntilPeriodEnds { .. }
                    )
            }
        }
    }
}

/// Who an effect locked in when it was created (CR 611.2c: a resolved spell's effect affects
/// the objects determined when it resolved). Objects are named with their incarnation, so an object
/// that changed zones is a new object and no longer affected.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub enum Locked {
    /// These objects, each with its incarnation when the effect was created.
    Objects(Vec<(ObjectId, u32)>),
    /// These players.
    Players(Vec<PlayerId>),
}

/// A continuous effect created by a resolving spell or ability.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct CreatedEffect {
    /// Its id, unique in the game (`effect_ends` names an effect by it).
    pub id: u32,
    /// Its source: the spell that resolved, the object whose response started it, or the object
    /// that entered as a copy or merged, which the effect changes.
    pub source: ObjectId,
    /// The source's name when it was created, for explanations.
    pub source_name: Arc<str>,
    /// "You" for this effect: the controller of its source when it was created.
    pub controller: PlayerId,
    /// Its timestamp, which orders it within a layer (CR 613.7).
    pub timestamp: Timestamp,
    /// How long it lasts.
    pub duration: Duration,
    /// What it does: whom it affects and its operations, its numbers fixed as it was created
    /// (unless `continuously`).
    pub def: Arc<EffectDef>,
    /// The objects or players it applies to, decided when it was created (CR 611.2c).
    pub locked: Locked,
    /// The spell's targets, for expressions that read them.
    pub targets: Arc<[crate::model::condition::Subject]>,
    /// A characteristic its source's occurrence set for good (FreeOrion's Set Planet Size, Set
    /// Planet Environment, Set Star Colour): the next such effect of the source on it ends this
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_good: Option<crate::model::ids::CharId>,
}
