//! Continuous effects: what they change (operations), whom they affect, how long they last.

use crate::condition::{Cond, NumExpr, PlayerRef};
use crate::ids::{CharId, LayerId, ObjectId, PlayerId, Timestamp};
use crate::ruleset::SlotTarget;
use crate::value::{Ability, SymbolSet};
use serde::Serialize;
use std::sync::Arc;

/// The kind of an operation, which with its target decides its layer (seed 003, 7b set, 7c modify,
/// 7e switch; layers 4-6 add and remove).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum OpKind {
    Set,
    Modify,
    Switch,
    Add,
    Remove,
}

impl OpKind {
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Set => "set",
            OpKind::Modify => "modify",
            OpKind::Switch => "switch",
            OpKind::Add => "add",
            OpKind::Remove => "remove",
        }
    }
}

/// Symbols an operation names: written ones, and the symbol chosen for the source as it entered
/// ("choose a creature type", "naming Goblin").
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SymList {
    pub set: SymbolSet,
    pub chosen: bool,
}

/// One change an effect makes to a characteristic or player property.
#[derive(Clone, Debug, Serialize)]
pub enum Change {
    SetNumber(NumExpr),
    Modify(NumExpr),
    /// Exchange this characteristic's value with another's (power and toughness).
    SwitchWith(CharId),
    SetSymbols(SymList),
    AddSymbols(SymList),
    RemoveSymbols(SymList),
    SetAbilities(Vec<Ability>),
    AddAbilities(Vec<Ability>),
    RemoveAbilities(Vec<Ability>),
    SetPlayer(PlayerRef),
    SetText(Arc<str>),
}

impl Change {
    pub fn kind(&self) -> OpKind {
        match self {
            Change::SetNumber(_)
            | Change::SetSymbols(_)
            | Change::SetAbilities(_)
            | Change::SetPlayer(_)
            | Change::SetText(_) => OpKind::Set,
            Change::Modify(_) => OpKind::Modify,
            Change::SwitchWith(_) => OpKind::Switch,
            Change::AddSymbols(_) | Change::AddAbilities(_) => OpKind::Add,
            Change::RemoveSymbols(_) | Change::RemoveAbilities(_) => OpKind::Remove,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Op {
    pub target: SlotTarget,
    pub change: Change,
    /// The layer this part of the effect applies in, fixed when content is loaded.
    pub layer: LayerId,
}

/// Whom an effect applies to: objects or players matching a condition.
#[derive(Clone, Debug, Serialize)]
pub enum Affects {
    Objects(Cond),
    Players(Cond),
}

/// An effect as written in content: a static ability's, or one a spell creates.
#[derive(Clone, Debug, Serialize)]
pub struct EffectDef {
    /// The rules text, shown in explanations.
    pub text: Arc<str>,
    pub affects: Affects,
    /// "As long as": the effect exists only while this holds (seed 000, conditional continuous effects).
    pub while_cond: Option<Cond>,
    /// From a characteristic-defining ability: applied first in its layer (seed 003).
    pub defining: bool,
    pub ops: Vec<Op>,
}

impl EffectDef {
    pub fn has_layer(&self, layer: LayerId) -> bool {
        self.ops.iter().any(|o| o.layer == layer)
    }
}

/// How long a created effect lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Duration {
    UntilEndOfTurn,
    /// Until its source leaves play.
    WhileSourceInPlay,
    Indefinite,
}

/// Who an effect locked in when it was created (seed 003 / rule 611: a resolved spell's effect affects
/// the objects determined when it resolved). Objects are named with their incarnation, so an object
/// that changed zones is a new object and no longer affected.
#[derive(Clone, Debug, Serialize)]
pub enum Locked {
    Objects(Vec<(ObjectId, u32)>),
    Players(Vec<PlayerId>),
}

/// A continuous effect created by a resolving spell or ability.
#[derive(Clone, Debug, Serialize)]
pub struct CreatedEffect {
    pub id: u32,
    pub source: ObjectId,
    pub source_name: Arc<str>,
    /// "You" for this effect: the controller of its source when it was created.
    pub controller: PlayerId,
    pub timestamp: Timestamp,
    pub duration: Duration,
    pub def: Arc<EffectDef>,
    pub locked: Locked,
    /// The spell's targets, for expressions that read them.
    pub targets: Arc<[ObjectId]>,
}
