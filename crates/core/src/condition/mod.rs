//! Conditions and numeric expressions: one small language for "which objects an effect applies to",
//! "as long as", state-based checks, and later the scopes and activation conditions of FreeOrion's
//! effects groups.

use crate::ids::{CharId, CounterId, ObjectId, PlayerId, PropId, ZoneId};
use crate::value::Symbol;
use serde::Serialize;

pub mod eval;

/// One target a spell takes: what a legal one is, and its name where the spell names its targets
/// ("target \"first\": creature you control").
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct TargetSpec {
    pub name: Option<std::sync::Arc<str>>,
    pub cond: Cond,
}

/// An object relative to the one being tested.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum ObjRef {
    /// The object being tested ("it").
    This,
    /// The object whose ability or spell created the effect.
    Source,
    /// The object the source is attached to ("enchanted creature", "equipped creature").
    Attached,
    /// The top object (latest to enter) of a zone owned by "you".
    Top(ZoneId),
    /// Inside `count`, `sum`, `exists` (and after `among`): the object the enclosing condition is
    /// tested on ("each other creature that shares a creature type with it": the creature whose
    /// value is being derived).
    Outer,
    /// The object argument of that index of the occurrence a response answers ("the bowing
    /// Personality").
    Param(u8),
}

/// A player relative to the effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum PlayerRef {
    /// The source's controller.
    You,
    /// Any player other than you.
    Opponent,
    /// The active player.
    Active,
    /// The owner of the object being tested.
    Owner,
    /// A player the spell targets: the one of that index among its targets, or (`None`) any
    /// player among them (as a value: the first).
    Target(Option<u8>),
    /// The player argument of that index of the occurrence a response answers ("the player who
    /// gains Honor").
    Param(u8),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub enum NumExpr {
    Const(i64),
    /// The number argument of that index of the occurrence a response answers ("the gain").
    Param(u8),
    /// No number ("no maximum hand size").
    Nothing,
    Char(ObjRef, CharId),
    Prop(PlayerRef, PropId),
    /// How many objects satisfy the condition.
    Count(Box<Cond>),
    /// The total of a number characteristic over the objects that satisfy the condition.
    Sum(CharId, Box<Cond>),
    /// How many symbols a symbol-set characteristic holds ("multicolored": two or more colors).
    SetSize(ObjRef, CharId),
    /// How many different symbols of a characteristic the matching objects hold together ("card
    /// types among cards in all graveyards").
    Distinct(CharId, Box<Cond>),
    Max(Box<NumExpr>, Box<NumExpr>),
    Min(Box<NumExpr>, Box<NumExpr>),
    Counters(ObjRef, CounterId),
    /// How many counters of every kind are on the object ("has a counter").
    AllCounters(ObjRef),
    Add(Box<NumExpr>, Box<NumExpr>),
    Sub(Box<NumExpr>, Box<NumExpr>),
    Mul(Box<NumExpr>, Box<NumExpr>),
    Neg(Box<NumExpr>),
    /// A number fixed when a spell resolved, for each subject it locked (CR 608.2h, 611.2c: "+X/+0
    /// where X is its power" takes X once); no number for any other subject. Reads nothing.
    Fixed(std::sync::Arc<[(Subject, Option<i64>)]>),
}

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub enum Cond {
    True,
    And(Vec<Cond>),
    Or(Vec<Cond>),
    Not(Box<Cond>),
    /// The tested object's symbol set (or ability list) holds the symbol.
    Has(ObjRef, CharId, Symbol),
    /// The object's ability list holds an ability of this kind ("has an activated ability").
    HasKind(ObjRef, CharId, crate::value::AbilityKind),
    Cmp(NumExpr, CmpOp, NumExpr),
    InZone(ZoneId),
    InPlay,
    ControlledBy(PlayerRef),
    OwnedBy(PlayerRef),
    /// The tested object is the effect's source.
    IsSource,
    /// The tested object is a target of the spell that creates the effect.
    IsTarget,
    /// The source is attached to the tested object ("enchanted", "equipped").
    IsAttached,
    /// The tested player is this player.
    IsPlayer(PlayerRef),
    /// The tested subject is a player ("each player").
    AnyPlayer,
    /// Some object satisfies the condition.
    Exists(Box<Cond>),
    /// The tested object is face down.
    FaceDown,
    /// The tested object is the top object (latest to enter) of the zone among those "you" own.
    OnTop(ZoneId),
    /// The tested object is attached to the source (an imprinted or linked card).
    Linked,
    /// The tested object is the enclosing subject (`ObjRef::Outer`): "other" in "each other
    /// creature that shares a creature type with it".
    IsOuter,
    /// The tested object and the referenced one have a symbol of the characteristic in common
    /// ("shares at least one creature type with it").
    Shares(ObjRef, CharId),
    /// The referenced object's symbols (or abilities) hold the source's choice of that index
    /// ("creatures of the chosen type").
    HasChoice(ObjRef, CharId, u8),
    /// The tested object's name characteristic is this name ("named ...").
    Named(CharId, Word),
    /// The tested subject is the spell's target of that index (a named target).
    IsTargetAt(u8),
    /// The tested subject is the argument of that index of the occurrence a response answers.
    IsParam(u8),
    /// The tested subject is an object ("attached to an object").
    AnyObject,
    /// The tested object is attached to an object that satisfies the condition (tested on that
    /// object, in the same context).
    AttachedTo(Box<Cond>),
    /// The tested object is attached to an object it could be attached to: its class's
    /// `attaches to:` holds there, tested with it as the source and its controller as "you"
    /// (CR 704.5m-n). Only in state-based checks: what it reads depends on each object's class.
    LegallyAttached,
}

/// A word a condition names: written, or one of the source's choices ("the chosen name").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Word {
    Lit(std::sync::Arc<str>),
    Choice(u8),
}

/// Characteristic values of every object and player: the base values, a derivation in progress, or
/// its result.
/// What a condition is tested on.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
pub enum Subject {
    Object(ObjectId),
    Player(PlayerId),
}

/// One value in a sheet: an object's characteristic or a player's property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cell {
    Object(ObjectId, CharId),
    Player(PlayerId, PropId),
}

/// The cells an evaluation read. If none of them changes, the evaluation gives the same result:
/// the layer system uses this to test dependency only where it can exist (CR 613.8a).
/// Each read is a cell and, where only one symbol's membership was looked at (`has X`), that symbol.
pub type Reads = std::cell::RefCell<ReadLog>;

/// What an evaluation read: single cells, and what aggregates (`count`, `sum`, `exists`) read of
/// every object, by characteristic (so a count over a thousand objects is one entry, and a change
/// to any object's value there is seen).
#[derive(Debug, Default)]
pub struct ReadLog {
    pub cells: Vec<(Cell, Option<Symbol>)>,
    pub every: Footprint,
}

impl Cond {
    /// Whether the condition refers to the spell's targets.
    pub fn uses_targets(&self) -> bool {
        let player = |r: &PlayerRef| matches!(r, PlayerRef::Target(_));
        match self {
            Cond::IsTarget | Cond::IsTargetAt(_) => true,
            Cond::ControlledBy(r) | Cond::OwnedBy(r) | Cond::IsPlayer(r) => player(r),
            Cond::And(cs) | Cond::Or(cs) => cs.iter().any(Cond::uses_targets),
            Cond::Not(c) | Cond::Exists(c) | Cond::AttachedTo(c) => c.uses_targets(),
            Cond::Cmp(a, _, b) => a.uses_targets() || b.uses_targets(),
            _ => false,
        }
    }

    /// Whether the condition reads the occurrence a response answers (`event PARAM`): it has a
    /// value only while that response runs.
    pub fn reads_occurrence(&self) -> bool {
        let obj = |r: &ObjRef| matches!(r, ObjRef::Param(_));
        let player = |r: &PlayerRef| matches!(r, PlayerRef::Param(_));
        match self {
            Cond::IsParam(_) => true,
            Cond::ControlledBy(r) | Cond::OwnedBy(r) | Cond::IsPlayer(r) => player(r),
            Cond::Has(r, ..)
            | Cond::HasKind(r, ..)
            | Cond::Shares(r, _)
            | Cond::HasChoice(r, ..) => obj(r),
            Cond::And(cs) | Cond::Or(cs) => cs.iter().any(Cond::reads_occurrence),
            Cond::Not(c) | Cond::Exists(c) | Cond::AttachedTo(c) => c.reads_occurrence(),
            Cond::Cmp(a, _, b) => a.reads_occurrence() || b.reads_occurrence(),
            _ => false,
        }
    }

    /// Whether the condition, at its own level, refers to `outer`: the subject of the condition
    /// around it. (Inside a nested `exists` or `count`, `outer` is this level's own subject.)
    pub fn refers_outer(&self) -> bool {
        match self {
            Cond::IsOuter => true,
            Cond::Has(r, ..)
            | Cond::HasChoice(r, ..)
            | Cond::Shares(r, _)
            | Cond::HasKind(r, ..) => *r == ObjRef::Outer,
            Cond::And(cs) | Cond::Or(cs) => cs.iter().any(Cond::refers_outer),
            Cond::Not(c) | Cond::AttachedTo(c) => c.refers_outer(),
            Cond::Cmp(a, _, b) => a.refers_outer() || b.refers_outer(),
            _ => false,
        }
    }

    /// Whether the condition reads how many counters an object has.
    pub fn reads_counters(&self) -> bool {
        match self {
            Cond::And(cs) | Cond::Or(cs) => cs.iter().any(Cond::reads_counters),
            Cond::Not(c) | Cond::Exists(c) | Cond::AttachedTo(c) => c.reads_counters(),
            Cond::Cmp(a, _, b) => a.reads_counters() || b.reads_counters(),
            _ => false,
        }
    }

    /// Whether the condition, tested on an object, reads only that object's values (besides the
    /// fixed context: "you", which objects are the source and targets, zones and owners).
    pub fn is_local(&self) -> bool {
        match self {
            Cond::True
            | Cond::InZone(_)
            | Cond::InPlay
            | Cond::ControlledBy(_)
            | Cond::OwnedBy(_)
            | Cond::IsSource
            | Cond::IsTarget
            | Cond::IsAttached
            | Cond::IsPlayer(_)
            | Cond::AnyPlayer
            | Cond::FaceDown
            | Cond::Linked
            | Cond::Named(..)
            | Cond::IsTargetAt(_)
            | Cond::IsParam(_)
            | Cond::AnyObject => true,
            Cond::And(cs) | Cond::Or(cs) => cs.iter().all(Cond::is_local),
            Cond::Not(c) => c.is_local(),
            Cond::Has(r, _, _) | Cond::HasChoice(r, _, _) | Cond::HasKind(r, _, _) => {
                *r == ObjRef::This
            }
            Cond::Shares(r, _) => *r == ObjRef::This,
            Cond::Cmp(a, _, b) => a.is_local() && b.is_local(),
            // `outer` is not part of the context a test of the tested object alone has; the
            // others read the values of other objects (the one it is attached to).
            Cond::Exists(_)
            | Cond::OnTop(_)
            | Cond::IsOuter
            | Cond::AttachedTo(_)
            | Cond::LegallyAttached => false,
        }
    }
}

impl Cond {
    /// Whether the condition, tested on an object, reads only that object's values and those of
    /// the object it is attached to: `attached to` a local test, and `legally attached` where
    /// `attachments_local` (every class's `attaches to:` is local, `Content::attachments_read_locally`).
    pub fn is_local_or_host(&self, attachments_local: bool) -> bool {
        match self {
            Cond::And(cs) | Cond::Or(cs) => {
                cs.iter().all(|c| c.is_local_or_host(attachments_local))
            }
            Cond::Not(c) => c.is_local_or_host(attachments_local),
            Cond::AttachedTo(c) => c.is_local(),
            Cond::LegallyAttached => attachments_local,
            c => c.is_local(),
        }
    }
}

impl NumExpr {
    /// The expressions an arithmetic expression combines (none for the others).
    fn operands(&self) -> [Option<&NumExpr>; 2] {
        match self {
            NumExpr::Add(a, b)
            | NumExpr::Sub(a, b)
            | NumExpr::Mul(a, b)
            | NumExpr::Max(a, b)
            | NumExpr::Min(a, b) => [Some(a), Some(b)],
            NumExpr::Neg(a) => [Some(a), None],
            _ => [None, None],
        }
    }

    /// Whether the expression refers to the spell's targets.
    pub fn uses_targets(&self) -> bool {
        match self {
            NumExpr::Prop(r, _) => matches!(r, PlayerRef::Target(_)),
            NumExpr::Count(c) | NumExpr::Sum(_, c) | NumExpr::Distinct(_, c) => c.uses_targets(),
            _ => self
                .operands()
                .into_iter()
                .flatten()
                .any(NumExpr::uses_targets),
        }
    }

    /// Whether the expression reads the occurrence a response answers (see
    /// `Cond::reads_occurrence`).
    pub fn reads_occurrence(&self) -> bool {
        match self {
            NumExpr::Param(_) => true,
            NumExpr::Char(r, _)
            | NumExpr::SetSize(r, _)
            | NumExpr::Counters(r, _)
            | NumExpr::AllCounters(r) => matches!(r, ObjRef::Param(_)),
            NumExpr::Prop(r, _) => matches!(r, PlayerRef::Param(_)),
            NumExpr::Count(c) | NumExpr::Sum(_, c) | NumExpr::Distinct(_, c) => {
                c.reads_occurrence()
            }
            _ => self
                .operands()
                .into_iter()
                .flatten()
                .any(NumExpr::reads_occurrence),
        }
    }

    /// Whether the expression, at its own level, refers to `outer` (see `Cond::refers_outer`).
    pub fn refers_outer(&self) -> bool {
        match self {
            NumExpr::Char(r, _)
            | NumExpr::SetSize(r, _)
            | NumExpr::Counters(r, _)
            | NumExpr::AllCounters(r) => *r == ObjRef::Outer,
            _ => self
                .operands()
                .into_iter()
                .flatten()
                .any(NumExpr::refers_outer),
        }
    }

    /// Whether the expression reads how many counters an object has.
    pub fn reads_counters(&self) -> bool {
        match self {
            NumExpr::Counters(..) | NumExpr::AllCounters(_) => true,
            NumExpr::Count(c) | NumExpr::Sum(_, c) | NumExpr::Distinct(_, c) => c.reads_counters(),
            _ => self
                .operands()
                .into_iter()
                .flatten()
                .any(NumExpr::reads_counters),
        }
    }

    /// Whether the expression reads no value at all (a number written in the content).
    pub fn is_constant(&self) -> bool {
        match self {
            NumExpr::Const(_) | NumExpr::Nothing => true,
            e @ (NumExpr::Add(..)
            | NumExpr::Sub(..)
            | NumExpr::Mul(..)
            | NumExpr::Max(..)
            | NumExpr::Min(..)
            | NumExpr::Neg(_)) => e.operands().into_iter().flatten().all(NumExpr::is_constant),
            _ => false,
        }
    }

    /// Whether the expression, for a tested object, reads only that object's values (no aggregate,
    /// no other object, no player's property).
    pub fn is_local(&self) -> bool {
        match self {
            NumExpr::Const(_) | NumExpr::Nothing | NumExpr::Fixed(_) => true,
            NumExpr::Char(r, _)
            | NumExpr::SetSize(r, _)
            | NumExpr::Counters(r, _)
            | NumExpr::AllCounters(r) => *r == ObjRef::This,
            NumExpr::Prop(..) | NumExpr::Count(_) | NumExpr::Sum(..) | NumExpr::Distinct(..) => {
                false
            }
            e => e.operands().into_iter().flatten().all(NumExpr::is_local),
        }
    }
}

impl Cond {
    /// Whether the condition refers to the effect's source (so its answers depend on which object
    /// the source is).
    pub fn names_source(&self) -> bool {
        match self {
            // A choice is the source's.
            Cond::IsSource | Cond::IsAttached | Cond::Linked | Cond::HasChoice(..) => true,
            Cond::Named(_, w) => matches!(w, Word::Choice(_)),
            Cond::And(cs) | Cond::Or(cs) => cs.iter().any(|c| c.names_source()),
            Cond::Not(c) | Cond::Exists(c) | Cond::AttachedTo(c) => c.names_source(),
            Cond::Has(r, _, _) | Cond::Shares(r, _) | Cond::HasKind(r, _, _) => names_source(*r),
            Cond::Cmp(a, _, b) => a.names_source() || b.names_source(),
            _ => false,
        }
    }
}

/// Whether a reference's object depends on which object the source is (`outer` and the tested
/// object do not).
fn names_source(r: ObjRef) -> bool {
    !matches!(r, ObjRef::This | ObjRef::Outer)
}

fn this_object(s: Subject) -> Option<ObjectId> {
    match s {
        Subject::Object(o) => Some(o),
        Subject::Player(_) => None,
    }
}

/// A set of characteristics and player properties: what an effect reads or writes, used to prune
/// the dependency checks of CR 613.8 to pairs that can interact.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    chars: Vec<u64>,
    props: Vec<u64>,
    /// Characteristics read only for whether they hold a symbol (`has X`), with the symbol.
    names: Vec<(CharId, Symbol)>,
    /// The characteristics in `names`.
    named: Vec<u64>,
}

impl Footprint {
    fn set(bits: &mut Vec<u64>, i: usize) {
        if bits.len() <= i / 64 {
            bits.resize(i / 64 + 1, 0);
        }
        bits[i / 64] |= 1 << (i % 64);
    }
    pub fn add_char(&mut self, c: CharId) {
        Self::set(&mut self.chars, c.index());
    }
    pub fn add_prop(&mut self, p: PropId) {
        Self::set(&mut self.props, p.index());
    }
    /// A read of whether characteristic `c` holds `sym`, and nothing else about it.
    pub fn add_name(&mut self, c: CharId, sym: Symbol) {
        if !self.names.iter().any(|(x, s)| *x == c && *s == sym) {
            Self::set(&mut self.named, c.index());
            self.names.push((c, sym));
        }
    }
    /// Whether `c` is read other than for whether it holds some symbols.
    pub fn reads_any(&self, c: CharId) -> bool {
        Self::test(&self.chars, c.index())
    }
    /// The symbols `c` is read for, where it is read only for them.
    pub fn names_of(&self, c: CharId) -> impl Iterator<Item = &Symbol> {
        self.names
            .iter()
            .filter(move |(x, _)| *x == c)
            .map(|(_, s)| s)
    }
    fn test(bits: &[u64], i: usize) -> bool {
        bits.get(i / 64).is_some_and(|b| b & (1 << (i % 64)) != 0)
    }
    pub fn union(&mut self, other: &Footprint) {
        for n in &other.names {
            self.add_name(n.0, n.1.clone());
        }
        for (bits, o) in [
            (&mut self.chars, &other.chars),
            (&mut self.props, &other.props),
        ] {
            if bits.len() < o.len() {
                bits.resize(o.len(), 0);
            }
            for (a, b) in bits.iter_mut().zip(o) {
                *a |= b;
            }
        }
    }
    /// Whether both touch a common characteristic or property (reads for symbols count as reads).
    pub fn intersects(&self, other: &Footprint) -> bool {
        let any = |a: &[u64], b: &[u64]| a.iter().zip(b).any(|(x, y)| x & y != 0);
        any(&self.chars, &other.chars)
            || any(&self.chars, &other.named)
            || any(&self.named, &other.chars)
            || any(&self.named, &other.named)
            || any(&self.props, &other.props)
    }
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.chars.iter().chain(&self.props).all(|b| *b == 0)
    }
    pub fn has_char(&self, c: CharId) -> bool {
        Self::test(&self.chars, c.index()) || Self::test(&self.named, c.index())
    }
    pub fn has_prop(&self, p: PropId) -> bool {
        self.props
            .get(p.index() / 64)
            .is_some_and(|b| b & (1 << (p.index() % 64)) != 0)
    }
}

impl Cond {
    /// Adds every characteristic and property this condition reads; `controller` is the ruleset's
    /// controller characteristic, read by "you control".
    pub fn reads(&self, controller: Option<CharId>, out: &mut Footprint) {
        match self {
            Cond::True
            | Cond::InZone(_)
            | Cond::InPlay
            | Cond::IsSource
            | Cond::IsTarget
            | Cond::IsAttached
            | Cond::IsPlayer(_)
            | Cond::AnyPlayer
            | Cond::FaceDown
            | Cond::OnTop(_)
            | Cond::Linked
            | Cond::OwnedBy(_)
            | Cond::IsOuter
            | Cond::IsTargetAt(_)
            | Cond::IsParam(_)
            | Cond::AnyObject => {}
            Cond::And(cs) | Cond::Or(cs) => cs.iter().for_each(|c| c.reads(controller, out)),
            Cond::Not(c) | Cond::Exists(c) | Cond::AttachedTo(c) => c.reads(controller, out),
            // What each class's `attaches to:` reads is not known here; the condition is allowed
            // only in state-based checks, which test every object after every change.
            Cond::LegallyAttached => {
                if let Some(c) = controller {
                    out.add_char(c);
                }
            }
            Cond::Has(_, ch, sym) => out.add_name(*ch, sym.clone()),
            // The symbol a choice names is not known here: any change to the characteristic.
            Cond::HasChoice(_, ch, _)
            | Cond::Shares(_, ch)
            | Cond::Named(ch, _)
            | Cond::HasKind(_, ch, _) => out.add_char(*ch),
            Cond::Cmp(a, _, b) => {
                a.reads(controller, out);
                b.reads(controller, out);
            }
            Cond::ControlledBy(_) => {
                if let Some(c) = controller {
                    out.add_char(c);
                }
            }
        }
    }
}

impl NumExpr {
    /// Whether the expression refers to the effect's source.
    pub fn names_source(&self) -> bool {
        match self {
            NumExpr::Char(r, _)
            | NumExpr::SetSize(r, _)
            | NumExpr::Counters(r, _)
            | NumExpr::AllCounters(r) => names_source(*r),
            NumExpr::Count(c) | NumExpr::Sum(_, c) | NumExpr::Distinct(_, c) => c.names_source(),
            e => e
                .operands()
                .into_iter()
                .flatten()
                .any(NumExpr::names_source),
        }
    }

    /// Adds every characteristic and property this expression reads.
    pub fn reads(&self, controller: Option<CharId>, out: &mut Footprint) {
        match self {
            NumExpr::Const(_)
            | NumExpr::Nothing
            | NumExpr::Param(_)
            | NumExpr::Counters(..)
            | NumExpr::AllCounters(_)
            | NumExpr::Fixed(_) => {}
            NumExpr::Char(_, c) | NumExpr::SetSize(_, c) => out.add_char(*c),
            NumExpr::Prop(_, p) => out.add_prop(*p),
            NumExpr::Count(c) => c.reads(controller, out),
            NumExpr::Sum(ch, c) => {
                out.add_char(*ch);
                c.reads(controller, out);
            }
            NumExpr::Distinct(ch, c) => {
                out.add_char(*ch);
                c.reads(controller, out);
            }
            NumExpr::Add(a, b)
            | NumExpr::Sub(a, b)
            | NumExpr::Mul(a, b)
            | NumExpr::Max(a, b)
            | NumExpr::Min(a, b) => {
                a.reads(controller, out);
                b.reads(controller, out);
            }
            NumExpr::Neg(a) => a.reads(controller, out),
        }
    }
}

/// An aggregate in a condition or expression: a value that depends on every object, the same for
/// every subject tested (`count`, `sum`, `exists`...). Kept by the address of its node.
#[derive(Clone, Copy, Debug)]
pub enum Aggregate<'a> {
    /// `count(C)`, `sum(CHAR of C)`, `count(CHAR among C)`: the `NumExpr` node.
    Number(&'a NumExpr),
    /// `exists(C)`: the `Cond` node; its value is how many objects satisfy `C`.
    Exists(&'a Cond),
}

impl<'a> Aggregate<'a> {
    /// Whether its value is the same for every subject: its condition does not say `outer`.
    pub fn is_closed(self) -> bool {
        !self.condition().refers_outer()
    }

    /// The key overrides use: the address of the node.
    pub fn key(self) -> usize {
        match self {
            Aggregate::Number(e) => e as *const NumExpr as usize,
            Aggregate::Exists(c) => c as *const Cond as usize,
        }
    }

    /// The condition each object is tested with.
    pub fn condition(self) -> &'a Cond {
        match self {
            Aggregate::Number(NumExpr::Count(c) | NumExpr::Sum(_, c) | NumExpr::Distinct(_, c)) => {
                c
            }
            Aggregate::Exists(Cond::Exists(c)) => c,
            _ => {
                static TRUE: Cond = Cond::True;
                &TRUE
            }
        }
    }
}

impl NumExpr {
    /// Whether this node is an aggregate over every object.
    pub fn is_aggregate(&self) -> bool {
        matches!(
            self,
            NumExpr::Count(_) | NumExpr::Sum(..) | NumExpr::Distinct(..)
        )
    }

    /// The aggregates in this expression, inner ones before the ones that hold them.
    pub fn aggregates<'a>(&'a self, out: &mut Vec<Aggregate<'a>>) {
        match self {
            NumExpr::Count(c) | NumExpr::Sum(_, c) | NumExpr::Distinct(_, c) => {
                c.aggregates(out);
                out.push(Aggregate::Number(self));
            }
            e => e
                .operands()
                .into_iter()
                .flatten()
                .for_each(|x| x.aggregates(out)),
        }
    }

    /// Whether the expression reads another object than the one tested, other than through
    /// aggregates: the source, the object it is attached to, the top of a zone.
    pub fn refers_to_others(&self) -> bool {
        match self {
            NumExpr::Char(r, _)
            | NumExpr::SetSize(r, _)
            | NumExpr::Counters(r, _)
            | NumExpr::AllCounters(r) => *r != ObjRef::This,
            NumExpr::Count(c) | NumExpr::Sum(_, c) | NumExpr::Distinct(_, c) => {
                c.refers_to_others()
            }
            e => e
                .operands()
                .into_iter()
                .flatten()
                .any(NumExpr::refers_to_others),
        }
    }
}

impl Cond {
    /// The aggregates in this condition, inner ones before the ones that hold them.
    pub fn aggregates<'a>(&'a self, out: &mut Vec<Aggregate<'a>>) {
        match self {
            Cond::And(cs) | Cond::Or(cs) => cs.iter().for_each(|c| c.aggregates(out)),
            Cond::Not(c) | Cond::AttachedTo(c) => c.aggregates(out),
            Cond::Exists(c) => {
                c.aggregates(out);
                out.push(Aggregate::Exists(self));
            }
            Cond::Cmp(a, _, b) => {
                a.aggregates(out);
                b.aggregates(out);
            }
            Cond::True
            | Cond::Has(..)
            | Cond::InZone(_)
            | Cond::InPlay
            | Cond::ControlledBy(_)
            | Cond::OwnedBy(_)
            | Cond::IsSource
            | Cond::IsTarget
            | Cond::IsAttached
            | Cond::IsPlayer(_)
            | Cond::AnyPlayer
            | Cond::FaceDown
            | Cond::OnTop(_)
            | Cond::Linked
            | Cond::IsOuter
            | Cond::Shares(..)
            | Cond::HasChoice(..)
            | Cond::Named(..)
            | Cond::IsTargetAt(_)
            | Cond::IsParam(_)
            | Cond::HasKind(..)
            | Cond::AnyObject
            | Cond::LegallyAttached => {}
        }
    }

    /// Whether the condition reads another object than the one tested, other than through
    /// aggregates (`source.colors has red`, `on top of graveyard`).
    pub fn refers_to_others(&self) -> bool {
        match self {
            Cond::And(cs) | Cond::Or(cs) => cs.iter().any(Cond::refers_to_others),
            Cond::Not(c) | Cond::Exists(c) => c.refers_to_others(),
            Cond::Has(r, _, _) | Cond::HasChoice(r, _, _) | Cond::HasKind(r, _, _) => {
                *r != ObjRef::This
            }
            Cond::Cmp(a, _, b) => a.refers_to_others() || b.refers_to_others(),
            Cond::OnTop(_)
            | Cond::IsOuter
            | Cond::Shares(..)
            | Cond::AttachedTo(_)
            | Cond::LegallyAttached => true,
            Cond::True
            | Cond::InZone(_)
            | Cond::InPlay
            | Cond::ControlledBy(_)
            | Cond::OwnedBy(_)
            | Cond::IsSource
            | Cond::IsTarget
            | Cond::IsAttached
            | Cond::IsPlayer(_)
            | Cond::AnyPlayer
            | Cond::FaceDown
            | Cond::Linked
            | Cond::Named(..)
            | Cond::IsTargetAt(_)
            | Cond::IsParam(_)
            | Cond::AnyObject => false,
        }
    }
}
