//! Conditions and numeric expressions: one small language for "which objects an effect applies to",
//! "as long as", state-based checks, and later the scopes and activation conditions of FreeOrion's
//! effects groups.

use crate::ids::{CharId, CounterId, ObjectId, PlayerId, PropId, ZoneId};
use crate::state::GameState;
use crate::value::{Ability, Symbol, Value};
use serde::Serialize;

/// An object relative to the one being tested.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Debug, Serialize)]
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

#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Word {
    Lit(std::sync::Arc<str>),
    Choice(u8),
}

/// Characteristic values of every object and player: the base values, a derivation in progress, or
/// its result.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Sheet {
    pub objects: Rows,
    pub players: Vec<Vec<Value>>,
}

/// Each object's values by characteristic, one row per object. Rows are kept in blocks of 64
/// objects; a block is shared (between a derivation and the ones copied from it) until written,
/// so a copy of a sheet costs a pointer per block and a change to a few objects copies only their
/// blocks. `rows[o]` is object `o`'s row.
#[derive(Clone, Default)]
pub struct Rows {
    width: usize,
    len: usize,
    blocks: Vec<Block>,
}

/// Objects per block of rows.
const BLOCK: usize = 64;

/// A block of rows: held by this sheet alone (written in place), or shared (copied when written).
#[derive(Clone, Debug)]
enum Block {
    Own(Vec<Value>),
    Shared(std::sync::Arc<Vec<Value>>),
}

impl Block {
    fn values(&self) -> &Vec<Value> {
        match self {
            Block::Own(v) => v,
            Block::Shared(a) => a,
        }
    }
    fn values_mut(&mut self) -> &mut Vec<Value> {
        if let Block::Shared(a) = self {
            let a = std::mem::take(a);
            *self = Block::Own(std::sync::Arc::try_unwrap(a).unwrap_or_else(|a| (*a).clone()));
        }
        match self {
            Block::Own(v) => v,
            Block::Shared(_) => unreachable!("made its own just above"),
        }
    }
}

/// The rows, one list per object (whether a block is shared is not part of the value).
impl std::fmt::Debug for Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries((0..self.len).map(|o| &self[o]))
            .finish()
    }
}

impl PartialEq for Rows {
    fn eq(&self, other: &Self) -> bool {
        self.width == other.width
            && self.len == other.len
            && self
                .blocks
                .iter()
                .zip(&other.blocks)
                .all(|(a, b)| match (a, b) {
                    (Block::Shared(x), Block::Shared(y)) if std::sync::Arc::ptr_eq(x, y) => true,
                    _ => a.values() == b.values(),
                })
    }
}

impl Rows {
    /// Rows of `width` values each.
    pub fn new(width: usize, rows: impl IntoIterator<Item = Vec<Value>>) -> Self {
        let mut out = Rows {
            width,
            ..Rows::default()
        };
        for row in rows {
            out.push_row(&row);
        }
        out
    }

    /// Adds a row for a new object.
    pub fn push_row(&mut self, row: &[Value]) {
        debug_assert_eq!(row.len(), self.width);
        if self.len.is_multiple_of(BLOCK) {
            self.blocks
                .push(Block::Own(Vec::with_capacity(BLOCK * self.width)));
        }
        if let Some(b) = self.blocks.last_mut() {
            b.values_mut().extend_from_slice(row);
        }
        self.len += 1;
    }

    /// Makes every block shareable, so that copies of the sheet share them until written.
    pub fn share(&mut self) {
        for b in &mut self.blocks {
            if let Block::Own(v) = b {
                *b = Block::Shared(std::sync::Arc::new(std::mem::take(v)));
            }
        }
    }

    /// How many rows (objects).
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl std::ops::Index<usize> for Rows {
    type Output = [Value];
    fn index(&self, o: usize) -> &[Value] {
        let at = (o % BLOCK) * self.width;
        &self.blocks[o / BLOCK].values()[at..at + self.width]
    }
}

impl std::ops::IndexMut<usize> for Rows {
    fn index_mut(&mut self, o: usize) -> &mut [Value] {
        let at = (o % BLOCK) * self.width;
        let w = self.width;
        &mut self.blocks[o / BLOCK].values_mut()[at..at + w]
    }
}

/// Written as a list of rows.
impl Serialize for Rows {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for o in 0..self.len() {
            seq.serialize_element(&self[o])?;
        }
        seq.end()
    }
}

/// What a condition is tested on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
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

/// The fixed parts of an evaluation: whose effect, whose "you", which targets.
pub struct Ctx<'a> {
    pub state: &'a GameState,
    pub sheet: &'a Sheet,
    pub source: Option<ObjectId>,
    pub you: Option<PlayerId>,
    /// The spell's targets, objects or players, in the order its `target` lines are written.
    pub targets: &'a [Subject],
    /// The arguments of the occurrence a response answers.
    pub params: &'a [crate::value::Arg],
    /// Where to record the cells read, if anywhere.
    pub reads: Option<&'a Reads>,
    /// Counts to share with other evaluations, if any (see `Counts`).
    pub counts: Option<&'a Counts>,
    /// Values to use for aggregates (`count`, `sum`, `exists`...) instead of evaluating them, by
    /// the address of their node (see `Aggregate`): a recomputation that knows how a change moved
    /// them supplies them.
    pub overrides: Option<&'a Overrides>,
    /// Inside an aggregate: the object the enclosing condition is tested on (`ObjRef::Outer`).
    pub outer: Option<ObjectId>,
    /// Inside an aggregate: the values of the aggregates nested in it (see `Memo`).
    pub memo: Option<&'a Memo>,
}

/// The values of aggregates (`exists`, `count`, `sum`, `count(... among ...)`) nested inside an
/// aggregate, worked out once per evaluation of the outermost one: an aggregate's value depends
/// only on the fixed context and, where its condition says `outer`, on the enclosing subject, so
/// nesting costs the sum of its levels, not their product. Keyed by the aggregate's condition (its
/// address: the outermost condition is borrowed while the memo lives) and that subject.
pub type Memo = std::cell::RefCell<rustc_hash::FxHashMap<(usize, Option<ObjectId>), Option<i64>>>;

/// Values of aggregates by the address of their node: a number for `count`, `sum` and the other
/// numeric aggregates; for `exists`, how many objects satisfy its condition.
pub type Overrides = rustc_hash::FxHashMap<usize, Option<i64>>;

/// Counts of objects worked out during a derivation, shared by evaluations that count the same
/// thing: ten copies of "+1/+0 for each other creature you control" count creatures you control
/// once, each leaving out itself. Keyed by condition (its address) and "you", each with what it
/// reads; the deriver drops a count when an effect writes what it read.
pub type Counts =
    std::cell::RefCell<rustc_hash::FxHashMap<(usize, Option<PlayerId>), (Footprint, i64)>>;

impl<'a> Ctx<'a> {
    /// A context that records nothing.
    pub fn new(
        state: &'a GameState,
        sheet: &'a Sheet,
        source: Option<ObjectId>,
        you: Option<PlayerId>,
        targets: &'a [Subject],
    ) -> Self {
        Ctx {
            state,
            sheet,
            source,
            you,
            targets,
            params: &[],
            reads: None,
            counts: None,
            overrides: None,
            outer: None,
            memo: None,
        }
    }

    /// The same context, with the aggregates in `overrides` taken from there.
    pub fn overriding(mut self, overrides: Option<&'a Overrides>) -> Self {
        self.overrides = overrides;
        self
    }

    /// The same context, sharing counts through `counts`.
    pub fn counting(mut self, counts: Option<&'a Counts>) -> Self {
        self.counts = counts;
        self
    }

    /// The same context, with the arguments of the occurrence a response answers.
    pub fn with_params(mut self, params: &'a [crate::value::Arg]) -> Self {
        self.params = params;
        self
    }

    /// The same context, recording what it reads into `reads`.
    pub fn recording(mut self, reads: Option<&'a Reads>) -> Self {
        self.reads = reads;
        self
    }

    /// For an aggregate over every object testing `c` (and reading `ch` of those that pass): notes
    /// what it reads of every object, and gives a context that records nothing more.
    pub fn aggregate(&self, c: &Cond, ch: Option<CharId>) -> Ctx<'a> {
        if let Some(r) = self.reads {
            let mut r = r.borrow_mut();
            c.reads(self.state.controller_char, &mut r.every);
            if let Some(ch) = ch {
                r.every.add_char(ch);
            }
        }
        Ctx {
            state: self.state,
            sheet: self.sheet,
            source: self.source,
            you: self.you,
            targets: self.targets,
            params: self.params,
            reads: None,
            counts: self.counts,
            overrides: self.overrides,
            outer: self.outer,
            memo: None,
        }
    }

    /// Runs `f` with the context in which an aggregate tests `c` on every object (reading `ch` of
    /// those that pass), for the subject `this`: notes what it reads of every object (recording
    /// nothing more), and shares the memo of nested aggregates (a new one at the outermost).
    pub fn within<R>(
        &self,
        c: &Cond,
        ch: Option<CharId>,
        this: Subject,
        f: impl FnOnce(&Ctx<'_>) -> R,
    ) -> R {
        if let Some(r) = self.reads {
            let mut r = r.borrow_mut();
            c.reads(self.state.controller_char, &mut r.every);
            if let Some(ch) = ch {
                r.every.add_char(ch);
            }
        }
        let local = Memo::default();
        let each = Ctx {
            state: self.state,
            sheet: self.sheet,
            source: self.source,
            you: self.you,
            targets: self.targets,
            params: self.params,
            reads: None,
            counts: self.counts,
            overrides: self.overrides,
            outer: this_object(this),
            memo: Some(self.memo.unwrap_or(&local)),
        };
        f(&each)
    }

    /// An aggregate's value (`within`), taken from the memo where an enclosing aggregate already
    /// worked it out for the same subject (or for any, when `c` does not say `outer`).
    fn aggregate_value(
        &self,
        c: &Cond,
        ch: Option<CharId>,
        this: Subject,
        f: impl FnOnce(&Ctx<'_>) -> Option<i64>,
    ) -> Option<i64> {
        let key = (
            c as *const Cond as usize,
            if c.refers_outer() {
                this_object(this)
            } else {
                None
            },
        );
        if let Some(v) = self.memo.and_then(|m| m.borrow().get(&key).copied()) {
            // What it reads is noted as if it were worked out again.
            return self.within(c, ch, this, |_| v);
        }
        let v = self.within(c, ch, this, f);
        if let Some(m) = self.memo {
            m.borrow_mut().insert(key, v);
        }
        v
    }

    /// An object's value, recorded as read.
    pub fn value(&self, o: ObjectId, c: CharId) -> &'a Value {
        if let Some(r) = self.reads {
            r.borrow_mut().cells.push((Cell::Object(o, c), None));
        }
        &self.sheet.objects[o.index()][c.index()]
    }

    /// An object's value, recorded as read only for whether it holds `sym`.
    pub fn value_for(&self, o: ObjectId, c: CharId, sym: &Symbol) -> &'a Value {
        if let Some(r) = self.reads {
            r.borrow_mut()
                .cells
                .push((Cell::Object(o, c), Some(sym.clone())));
        }
        &self.sheet.objects[o.index()][c.index()]
    }

    /// A player's property, recorded as read.
    pub fn prop_value(&self, p: PlayerId, q: PropId) -> &'a Value {
        if let Some(r) = self.reads {
            r.borrow_mut().cells.push((Cell::Player(p, q), None));
        }
        &self.sheet.players[p.index()][q.index()]
    }
}

impl Ctx<'_> {
    /// The object a reference names, for the subject being tested.
    pub fn object_ref(&self, r: ObjRef, this: Subject) -> Option<ObjectId> {
        self.object(r, this)
    }

    fn object(&self, r: ObjRef, this: Subject) -> Option<ObjectId> {
        match r {
            ObjRef::This => match this {
                Subject::Object(o) => Some(o),
                Subject::Player(_) => None,
            },
            ObjRef::Source => self.source,
            ObjRef::Attached => self.state.obj(self.source?).attached_to,
            ObjRef::Top(z) => {
                let you = self.you?;
                self.state
                    .objects()
                    .filter(|o| o.zone == z && o.owner == you)
                    .max_by_key(|o| o.timestamp)
                    .map(|o| o.id)
            }
            ObjRef::Outer => self.outer,
            ObjRef::Param(i) => match self.params.get(i as usize) {
                Some(crate::value::Arg::Object(o)) => Some(*o),
                _ => None,
            },
        }
    }

    /// The source's choice of that index ("the chosen creature type").
    fn choice(&self, i: u8) -> Option<Symbol> {
        let s = self.source?;
        self.state.obj(s).choices.get(i as usize).cloned()
    }

    /// Whether object `o`'s symbols (or abilities) hold `sym`, read only for `sym`.
    fn holds(&self, o: ObjectId, ch: CharId, sym: &Symbol) -> bool {
        match self.value_for(o, ch, sym) {
            Value::Symbols(s) => s.contains(sym),
            Value::Abilities(a) => a.iter().any(|x| match x {
                Ability::Keyword(k) | Ability::Kinded { name: k, .. } => k == sym,
                Ability::Static { text, .. } => **text == *sym.as_str(),
            }),
            _ => false,
        }
    }

    /// The player a reference names, for the subject being tested.
    pub fn player(&self, r: PlayerRef, this: Subject) -> Option<PlayerId> {
        match r {
            PlayerRef::You => self.you,
            PlayerRef::Active => Some(self.state.active),
            PlayerRef::Owner => match this {
                Subject::Object(o) => Some(self.state.obj(o).owner),
                Subject::Player(p) => Some(p),
            },
            // As a value, "opponent" is the one other player (none with several); as a test it is
            // "not you" (`player_matches`).
            PlayerRef::Opponent => {
                let you = self.you?;
                let n = self.state.players.len() as u8;
                (n == 2).then(|| PlayerId(1 - you.0.min(1)))
            }
            PlayerRef::Target(Some(i)) => match self.targets.get(i as usize) {
                Some(Subject::Player(p)) => Some(*p),
                _ => None,
            },
            PlayerRef::Target(None) => self.targets.iter().find_map(|t| match t {
                Subject::Player(p) => Some(*p),
                Subject::Object(_) => None,
            }),
            PlayerRef::Param(i) => match self.params.get(i as usize) {
                Some(crate::value::Arg::Player(p)) => Some(*p),
                _ => None,
            },
        }
    }

    fn player_matches(&self, r: PlayerRef, p: Option<PlayerId>, this: Subject) -> bool {
        let Some(p) = p else { return false };
        match r {
            PlayerRef::Opponent => self.you.is_some_and(|y| y != p),
            PlayerRef::Target(None) => self.targets.contains(&Subject::Player(p)),
            _ => self.player(r, this) == Some(p),
        }
    }

    /// An object's controller, as derived (recorded as read).
    pub fn controller_of(&self, o: ObjectId) -> Option<PlayerId> {
        self.controller(o)
    }

    fn controller(&self, o: ObjectId) -> Option<PlayerId> {
        match self.state.controller_char {
            Some(c) => match self.value(o, c) {
                Value::Player(p) => *p,
                _ => None,
            },
            None => Some(self.state.obj(o).controller),
        }
    }

    /// Tests `cond` on `this` (rule text "creature you control": a creature, and you control it).
    pub fn test(&self, cond: &Cond, this: Subject) -> bool {
        match cond {
            Cond::True => true,
            Cond::And(cs) => cs.iter().all(|c| self.test(c, this)),
            Cond::Or(cs) => cs.iter().any(|c| self.test(c, this)),
            Cond::Not(c) => !self.test(c, this),
            Cond::Has(r, ch, sym) => self
                .object(*r, this)
                .is_some_and(|o| self.holds(o, *ch, sym)),
            Cond::HasChoice(r, ch, i) => match (self.object(*r, this), self.choice(*i)) {
                (Some(o), Some(sym)) => self.holds(o, *ch, &sym),
                _ => false,
            },
            Cond::Shares(r, ch) => match (this_object(this), self.object(*r, this)) {
                (Some(a), Some(b)) => shares(self.value(a, *ch), self.value(b, *ch)),
                _ => false,
            },
            Cond::Named(ch, w) => {
                let Some(o) = this_object(this) else {
                    return false;
                };
                let name = match w {
                    Word::Lit(t) => t.clone(),
                    Word::Choice(i) => match self.choice(*i) {
                        Some(s) => std::sync::Arc::from(s.as_str()),
                        None => return false,
                    },
                };
                matches!(self.value(o, *ch), Value::Text(t) if **t == *name)
            }
            Cond::IsOuter => this_object(this).is_some_and(|o| Some(o) == self.outer),
            Cond::IsTargetAt(i) => self.targets.get(*i as usize) == Some(&this),
            Cond::IsParam(i) => match (self.params.get(*i as usize), this) {
                (Some(crate::value::Arg::Object(o)), Subject::Object(t)) => *o == t,
                (Some(crate::value::Arg::Player(p)), Subject::Player(t)) => *p == t,
                _ => false,
            },
            Cond::HasKind(r, ch, k) => {
                let Some(o) = self.object(*r, this) else {
                    return false;
                };
                matches!(self.value(o, *ch), Value::Abilities(a) if a.iter().any(|x| x.is(*k)))
            }
            Cond::Cmp(l, op, r) => match (self.eval(l, this), self.eval(r, this)) {
                (Some(a), Some(b)) => match op {
                    CmpOp::Lt => a < b,
                    CmpOp::Le => a <= b,
                    CmpOp::Gt => a > b,
                    CmpOp::Ge => a >= b,
                    CmpOp::Eq => a == b,
                    CmpOp::Ne => a != b,
                },
                _ => false,
            },
            Cond::InZone(z) => match this {
                Subject::Object(o) => self.state.obj(o).zone == *z,
                Subject::Player(_) => false,
            },
            Cond::InPlay => match this {
                Subject::Object(o) => self.state.in_play(o),
                Subject::Player(_) => false,
            },
            Cond::ControlledBy(r) => match this {
                Subject::Object(o) => self.player_matches(*r, self.controller(o), this),
                Subject::Player(_) => false,
            },
            Cond::OwnedBy(r) => match this {
                Subject::Object(o) => self.player_matches(*r, Some(self.state.obj(o).owner), this),
                Subject::Player(_) => false,
            },
            Cond::IsSource => this_object(this).is_some_and(|o| Some(o) == self.source),
            Cond::IsTarget => self.targets.contains(&this),
            Cond::IsAttached => this_object(this).is_some_and(|o| {
                self.source
                    .is_some_and(|s| self.state.obj(s).attached_to == Some(o))
            }),
            Cond::IsPlayer(r) => match this {
                Subject::Player(p) => self.player_matches(*r, Some(p), this),
                Subject::Object(_) => false,
            },
            Cond::AnyPlayer => matches!(this, Subject::Player(_)),
            Cond::FaceDown => this_object(this).is_some_and(|o| self.state.obj(o).face_down),
            Cond::OnTop(z) => {
                this_object(this).is_some_and(|o| self.object(ObjRef::Top(*z), this) == Some(o))
            }
            Cond::Linked => this_object(this).is_some_and(|o| {
                self.source.is_some() && self.state.obj(o).attached_to == self.source
            }),
            Cond::AnyObject => matches!(this, Subject::Object(_)),
            Cond::AttachedTo(c) => this_object(this)
                .and_then(|o| self.state.obj(o).attached_to)
                .is_some_and(|t| self.test(c, Subject::Object(t))),
            Cond::LegallyAttached => this_object(this).is_some_and(|o| {
                self.state
                    .obj(o)
                    .attached_to
                    .is_some_and(|t| self.could_attach(o, t))
            }),
            Cond::Exists(c) => {
                if let Some(n) = self.overridden(cond) {
                    return n.is_some_and(|n| n > 0);
                }
                self.aggregate_value(c, None, this, |each| {
                    Some(
                        each.state
                            .object_ids()
                            .any(|o| each.test(c, Subject::Object(o)))
                            as i64,
                    )
                }) == Some(1)
            }
        }
    }

    /// Whether `o` could be attached to `t`: `o`'s class's `attaches to:` holds for `t`, tested with
    /// `o` as the source and its controller as "you" (CR 303.4, 301.5); any object but itself
    /// when its class says nothing.
    pub fn could_attach(&self, o: ObjectId, t: ObjectId) -> bool {
        if o == t {
            return false;
        }
        let Some(cond) = &self
            .state
            .content
            .class(self.state.obj(o).class)
            .attaches_to
        else {
            return true;
        };
        let ctx = Ctx::new(self.state, self.sheet, Some(o), self.controller(o), &[])
            .recording(self.reads);
        ctx.test(cond, Subject::Object(t))
    }

    /// Evaluates a numeric expression; `None` where a value is missing (no such number).
    pub fn eval(&self, e: &NumExpr, this: Subject) -> Option<i64> {
        if e.is_aggregate() {
            if let Some(v) = self.overridden(e) {
                return v;
            }
        }
        Some(match e {
            NumExpr::Const(n) => *n,
            NumExpr::Nothing => return None,
            NumExpr::Param(i) => match self.params.get(*i as usize) {
                Some(crate::value::Arg::Number(n)) => *n,
                _ => return None,
            },
            NumExpr::Char(r, c) => {
                let o = self.object(*r, this)?;
                self.value(o, *c).number()?
            }
            NumExpr::Prop(r, p) => {
                let pl = self.player(*r, this)?;
                self.prop_value(pl, *p).number()?
            }
            NumExpr::Count(c) => {
                return self.aggregate_value(c, None, this, |each| {
                    if let Some(n) = each.shared_count(c) {
                        return Some(n);
                    }
                    Some(
                        each.state
                            .object_ids()
                            .filter(|o| each.test(c, Subject::Object(*o)))
                            .count() as i64,
                    )
                })
            }
            NumExpr::Sum(ch, c) => {
                return self.aggregate_value(c, Some(*ch), this, |each| {
                    each.state
                        .object_ids()
                        .filter(|o| each.test(c, Subject::Object(*o)))
                        .filter_map(|o| each.value(o, *ch).number())
                        .try_fold(0i64, |a, n| a.checked_add(n))
                })
            }
            NumExpr::Distinct(ch, c) => {
                return self.aggregate_value(c, Some(*ch), this, |each| {
                    let mut all = crate::value::SymbolSet::default();
                    for o in each.state.object_ids() {
                        if each.test(c, Subject::Object(o)) {
                            if let Value::Symbols(s) = each.value(o, *ch) {
                                all.extend(s);
                            }
                        }
                    }
                    if all.is_every() {
                        return None;
                    }
                    Some(all.len() as i64)
                })
            }
            NumExpr::Max(a, b) => self.eval(a, this)?.max(self.eval(b, this)?),
            NumExpr::Min(a, b) => self.eval(a, this)?.min(self.eval(b, this)?),
            NumExpr::SetSize(r, c) => {
                let o = self.object(*r, this)?;
                match self.value(o, *c) {
                    // Every symbol is no countable number.
                    Value::Symbols(s) if s.is_every() => return None,
                    Value::Symbols(s) => s.len() as i64,
                    Value::Abilities(a) => a.len() as i64,
                    _ => return None,
                }
            }
            NumExpr::Counters(r, k) => {
                let o = self.object(*r, this)?;
                self.state.obj(o).counter_count(*k)?
            }
            NumExpr::AllCounters(r) => {
                let o = self.object(*r, this)?;
                self.state
                    .obj(o)
                    .counters
                    .iter()
                    .try_fold(0i64, |a, c| a.checked_add(c.count))?
            }
            NumExpr::Add(a, b) => self.eval(a, this)?.checked_add(self.eval(b, this)?)?,
            NumExpr::Sub(a, b) => self.eval(a, this)?.checked_sub(self.eval(b, this)?)?,
            NumExpr::Mul(a, b) => self.eval(a, this)?.checked_mul(self.eval(b, this)?)?,
            NumExpr::Neg(a) => self.eval(a, this)?.checked_neg()?,
            NumExpr::Fixed(list) => list.iter().find(|(s, _)| *s == this)?.1?,
        })
    }
}

impl Ctx<'_> {
    /// The parts of `e`'s value for `this` that the values of the objects `xs` can change: each
    /// aggregate's answer for those objects, and each single value read. When nothing but the
    /// values of `xs` changes, equal probes mean equal values, without counting every object again.
    /// False where `e` has a part this cannot say (the caller then evaluates it in full).
    pub fn probe(
        &self,
        e: &NumExpr,
        this: Subject,
        xs: &[ObjectId],
        out: &mut Vec<Option<i64>>,
    ) -> bool {
        match e {
            NumExpr::Const(_) | NumExpr::Nothing | NumExpr::Param(_) => true,
            NumExpr::Char(..)
            | NumExpr::Prop(..)
            | NumExpr::SetSize(..)
            | NumExpr::Counters(..)
            | NumExpr::AllCounters(..)
            | NumExpr::Fixed(_) => {
                out.push(self.eval(e, this));
                true
            }
            NumExpr::Count(c) if c.is_local() => {
                out.extend(
                    xs.iter()
                        .map(|x| Some(self.test(c, Subject::Object(*x)) as i64)),
                );
                true
            }
            NumExpr::Sum(ch, c) if c.is_local() => {
                for x in xs {
                    let counted = self.test(c, Subject::Object(*x));
                    out.push(Some(counted as i64));
                    if counted {
                        out.push(self.value(*x, *ch).number());
                    }
                }
                true
            }
            NumExpr::Add(a, b)
            | NumExpr::Sub(a, b)
            | NumExpr::Mul(a, b)
            | NumExpr::Max(a, b)
            | NumExpr::Min(a, b) => self.probe(a, this, xs, out) && self.probe(b, this, xs, out),
            NumExpr::Neg(a) => self.probe(a, this, xs, out),
            NumExpr::Count(_) | NumExpr::Sum(..) | NumExpr::Distinct(..) => false,
        }
    }
}

impl Ctx<'_> {
    /// `count(C)` from the shared counts, where `C` is "other" (not the source) and parts that do
    /// not depend on the source or targets: the count of those parts, less one if the source
    /// satisfies them. `None` where not shared.
    fn shared_count(&self, c: &Cond) -> Option<i64> {
        let counts = self.counts?;
        let Cond::And(cs) = c else { return None };
        let other = cs
            .iter()
            .position(|x| matches!(x, Cond::Not(n) if matches!(**n, Cond::IsSource)))?;
        let rest = || cs.iter().enumerate().filter(move |(i, _)| *i != other);
        if rest().any(|(_, x)| x.names_source() || x.uses_targets() || x.refers_outer()) {
            return None;
        }
        let key = (c as *const Cond as usize, self.you);
        let known = counts.borrow().get(&key).map(|(_, n)| *n);
        let all = match known {
            Some(n) => n,
            None => {
                let n = self
                    .state
                    .object_ids()
                    .filter(|o| rest().all(|(_, x)| self.test(x, Subject::Object(*o))))
                    .count() as i64;
                let mut f = Footprint::default();
                c.reads(self.state.controller_char, &mut f);
                counts.borrow_mut().insert(key, (f, n));
                n
            }
        };
        let me = self
            .source
            .is_some_and(|s| rest().all(|(_, x)| self.test(x, Subject::Object(s))));
        Some(all - me as i64)
    }
}

/// Whether two values have a symbol in common; the set of every symbol shares any symbol.
fn shares(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Symbols(a), Value::Symbols(b)) => {
            (a.is_every() && !b.is_empty())
                || (b.is_every() && !a.is_empty())
                || a.iter().any(|s| b.contains(s))
        }
        _ => false,
    }
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

    /// The only objects this condition can hold for, when it says so directly: the source, the
    /// object the source is attached to, the targets, or objects in play. `None`: any object.
    pub fn narrow(&self, ctx: &Ctx) -> Option<Vec<ObjectId>> {
        match self {
            Cond::IsSource => Some(ctx.source.into_iter().collect()),
            Cond::IsAttached => Some(
                ctx.source
                    .and_then(|s| ctx.state.obj(s).attached_to)
                    .into_iter()
                    .collect(),
            ),
            Cond::IsTarget => Some(ctx.targets.iter().filter_map(|t| this_object(*t)).collect()),
            Cond::IsTargetAt(i) => Some(
                ctx.targets
                    .get(*i as usize)
                    .and_then(|t| this_object(*t))
                    .into_iter()
                    .collect(),
            ),
            Cond::IsOuter => Some(ctx.outer.into_iter().collect()),
            Cond::InPlay => Some(ctx.state.in_play_ids().to_vec()),
            Cond::And(cs) => {
                // The narrowest of the parts that narrow.
                cs.iter()
                    .filter_map(|c| c.narrow(ctx))
                    .min_by_key(|v| v.len())
            }
            _ => None,
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

impl Ctx<'_> {
    /// An aggregate's value from the overrides, if they hold it.
    fn overridden<T>(&self, node: &T) -> Option<Option<i64>> {
        self.overrides?.get(&(node as *const T as usize)).copied()
    }

    /// An aggregate's value now (for `exists`, how many objects satisfy its condition).
    pub fn aggregate_now(&self, a: Aggregate, this: Subject) -> Option<i64> {
        match a {
            Aggregate::Number(e) => self.eval(e, this),
            Aggregate::Exists(node @ Cond::Exists(c)) => {
                if let Some(v) = self.overridden(node) {
                    return v;
                }
                let each = self.aggregate(c, None);
                Some(
                    self.state
                        .object_ids()
                        .filter(|o| each.test(c, Subject::Object(*o)))
                        .count() as i64,
                )
            }
            Aggregate::Exists(_) => None,
        }
    }

    /// What one object adds to an aggregate: 1 (or its value, for `sum`) if it satisfies the
    /// condition, else 0; `None` where that cannot be said by adding (`count(CHAR among C)`) or has
    /// no number.
    pub fn contribution(&self, a: Aggregate, o: ObjectId) -> Option<i64> {
        let c = a.condition();
        let each = self.aggregate(c, None);
        let counted = each.test(c, Subject::Object(o));
        match a {
            Aggregate::Number(NumExpr::Count(_)) | Aggregate::Exists(_) => Some(counted as i64),
            Aggregate::Number(NumExpr::Sum(ch, _)) => Some(if counted {
                each.value(o, *ch).number().unwrap_or(0)
            } else {
                0
            }),
            _ => None,
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
