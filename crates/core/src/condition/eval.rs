//! Evaluating conditions and numeric expressions against a game state and a sheet of values.

use crate::condition::places::Broad;
use crate::model::condition::{
    this_object, Aggregate, Cell, Cond, EmpireRef, Footprint, NumExpr, ObjRef, PlayerRef, Reads,
    Subject, Word,
};
use crate::model::ids::{CharId, ObjectId, PlayerId, PropId};
use crate::model::sheet::Sheet;
use crate::model::value::{Ability, Symbol, Value};
use crate::state::GameState;

/// The fixed parts of an evaluation: whose effect, whose "you", which targets.
pub struct Ctx<'a> {
    /// The game state read (objects, zones, players).
    pub state: &'a GameState,
    /// The values read: the derived values, or during a derivation those worked out so far.
    pub sheet: &'a Sheet,
    /// The object whose effect, ability or spell is evaluated (`source`), if any.
    pub source: Option<ObjectId>,
    /// The player "you" means (the source's controller, a spell's caster), if any.
    pub you: Option<PlayerId>,
    /// The spell's targets, objects or players, in the order its `target` lines are written.
    pub targets: &'a [Subject],
    /// The arguments of the occurrence a response answers.
    pub params: &'a [crate::model::value::Arg],
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
    /// What each distance condition tested in this context measures from, found once (see
    /// `NearIndex`), by the condition's address; and the map's indexes found in this context,
    /// where it shares none with a derivation (see `Counts`).
    pub(crate) near: std::cell::RefCell<crate::condition::places::Local>,
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

/// A shared count's key: its condition (the address) and "you".
pub(crate) type CountKey = (usize, Option<PlayerId>);

/// What the evaluations of a derivation share, each with what it read, dropped by the deriver
/// when an effect writes something it read. Counts of objects: ten copies of "+1/+0 for each
/// other creature you control" count creatures you control once, each leaving out itself (keyed
/// by condition, its address, and "you"). And the map's indexes (`Maps`): the starlanes and each
/// empire's detection ranges, found once for every source.
#[derive(Default)]
pub struct Counts {
    pub(crate) counts: std::cell::RefCell<rustc_hash::FxHashMap<CountKey, (Footprint, i64)>>,
    pub(crate) maps:
        std::cell::OnceCell<std::rc::Rc<std::cell::RefCell<crate::condition::places::Maps>>>,
}

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
            near: Default::default(),
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
    pub fn with_params(mut self, params: &'a [crate::model::value::Arg]) -> Self {
        self.params = params;
        self
    }

    /// The same context, recording what it reads into `reads`.
    pub fn recording(mut self, reads: Option<&'a Reads>) -> Self {
        self.reads = reads;
        self
    }

    /// The objects in play that meet `c`, in id order: only those `c` narrows to are tested
    /// (FreeOrion's scopes index objects by type and owner).
    pub fn in_play_meeting(&self, c: &Cond) -> Vec<ObjectId> {
        match self.meeting_among(c, |o| self.state.in_play(*o)) {
            Some(mut list) => {
                list.sort_unstable();
                list.dedup();
                list
            }
            None => {
                let mut list = self.state.in_play_ids().to_vec();
                list.retain(|o| self.test(c, Subject::Object(*o)));
                list
            }
        }
    }

    /// The objects that meet `c` among those it narrows to (`Cond::narrow`, in its order), or
    /// `None` where it does not narrow. A part the narrowing decided for every object listed
    /// (their type, "you control") is not tested again, unless what is read is recorded.
    pub fn meeting(&self, c: &Cond) -> Option<Vec<ObjectId>> {
        self.meeting_among(c, |_| true)
    }

    /// `meeting`, of the listed objects that pass `first` (tested before `c`).
    fn meeting_among(&self, c: &Cond, first: impl Fn(&ObjectId) -> bool) -> Option<Vec<ObjectId>> {
        let mut parts = Vec::new();
        and_parts(c, &mut parts);
        let (mut list, decided) = narrow_parts(&parts, self)?;
        list.retain(first);
        if self.reads.is_some() {
            list.retain(|o| self.test(c, Subject::Object(*o)));
            return Some(list);
        }
        let open: Vec<&Cond> = parts
            .iter()
            .enumerate()
            .filter(|(i, _)| decided & part_bit(*i) == 0)
            .map(|(_, p)| *p)
            .collect();
        list.retain(|o| open.iter().all(|p| self.test(p, Subject::Object(*o))));
        Some(list)
    }

    /// The objects `c` narrows to (`Cond::narrow`), in id order, each once.
    fn narrowed(&self, c: &Cond) -> Option<Vec<ObjectId>> {
        let mut list = c.narrow(self)?;
        list.sort_unstable();
        list.dedup();
        Some(list)
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
            near: Default::default(),
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
            near: Default::default(),
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
                    .objects_in_zone(z)
                    .iter()
                    .map(|&o| self.state.obj(o))
                    .filter(|o| o.owner == you)
                    .max_by_key(|o| o.timestamp)
                    .map(|o| o.id)
            }
            ObjRef::Outer => self.outer,
            ObjRef::Param(i) => match self.params.get(i as usize) {
                Some(crate::model::value::Arg::Object(o)) => Some(*o),
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
                Ability::Static { text, .. } | Ability::Response { text, .. } => {
                    **text == *sym.as_str()
                }
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
                Some(crate::model::value::Arg::Player(p)) => Some(*p),
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

    /// Of `list` (the objects `broad` narrows to), those `you` control, in id order: found
    /// for every player at once, once per derivation where it shares its indexes.
    fn controlled_among(&self, broad: Broad, list: Vec<ObjectId>, you: PlayerId) -> Vec<ObjectId> {
        let Some(counts) = self.counts else {
            return list
                .into_iter()
                .filter(|o| self.controller(*o) == Some(you))
                .collect();
        };
        let maps = counts.maps.get_or_init(Default::default);
        if let Some((_, by)) = maps.borrow().controlled.get(&broad) {
            return by.get(&you).cloned().unwrap_or_default();
        }
        let mut by: rustc_hash::FxHashMap<PlayerId, Vec<ObjectId>> = Default::default();
        for o in list {
            if let Some(p) = self.controller(o) {
                by.entry(p).or_default().push(o);
            }
        }
        let mine = by.get(&you).cloned().unwrap_or_default();
        let mut read = Footprint::default();
        if let Some(c) = self.state.controller_char {
            read.add_char(c);
        }
        maps.borrow_mut()
            .controlled
            .insert(broad, (read, std::rc::Rc::new(by)));
        mine
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
                (Some(crate::model::value::Arg::Object(o)), Subject::Object(t)) => *o == t,
                (Some(crate::model::value::Arg::Player(p)), Subject::Player(t)) => *p == t,
                _ => false,
            },
            Cond::HasKind(r, ch, k) => {
                let Some(o) = self.object(*r, this) else {
                    return false;
                };
                matches!(self.value(o, *ch), Value::Abilities(a) if a.iter().any(|x| x.is(*k)))
            }
            Cond::Cmp(l, op, r) => match (self.eval(l, this), self.eval(r, this)) {
                (Some(a), Some(b)) => op.holds(a, b),
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
                    .is_some_and(|s| self.state.attached_of(s) == Some(o))
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
            Cond::Linked => this_object(this)
                .is_some_and(|o| self.source.is_some() && self.state.attached_of(o) == self.source),
            Cond::AnyObject => matches!(this, Subject::Object(_)),
            Cond::Holder(ch, c) => this_object(this)
                .and_then(|o| self.state.holder(o, *ch))
                .is_some_and(|h| self.test(c, Subject::Object(h))),
            Cond::Typed(ch) => this_object(this).is_some_and(|o| self.state.has_char(o, *ch)),
            Cond::OfType(t) => {
                this_object(this).is_some_and(|o| self.state.object_type(o) == Some(*t))
            }
            // FreeOrion's effects system's conditions over empires, orders, chance and places.
            Cond::Affiliated(_)
            | Cond::Within(_)
            | Cond::Chance { .. }
            | Cond::Stockpile(_)
            | Cond::Visible(_)
            | Cond::Near(_) => self.test_galaxy(cond, this),
            Cond::AttachedTo(c) => this_object(this)
                .and_then(|o| self.state.attached_of(o))
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
                    // Only the objects the condition can hold for are tried (those in play,
                    // for "a creature you control").
                    let found = match c.narrow(each) {
                        Some(list) => list.into_iter().any(|o| each.test(c, Subject::Object(o))),
                        None => each
                            .state
                            .object_ids()
                            .any(|o| each.test(c, Subject::Object(o))),
                    };
                    Some(found as i64)
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
            .class_def(self.state.obj(o).class)
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
                Some(crate::model::value::Arg::Number(n)) => *n,
                _ => return None,
            },
            NumExpr::Chosen => self.source.map_or(0, |s| self.state.chosen_number(s)),
            NumExpr::SourceSymbol {
                char,
                scale,
                default,
            } => {
                let found = self
                    .source
                    .and_then(|s| self.state.holder(s, *char))
                    .and_then(|h| match self.value(h, *char) {
                        crate::model::value::Value::Symbols(set) => {
                            scale.iter().position(|x| set.contains(x))
                        }
                        _ => None,
                    });
                found.map_or(*default, |i| i as i64)
            }
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
                    // Only the objects the condition can hold for are tried (those in a zone,
                    // for "in hand"), each once.
                    let n = match each.narrowed(c) {
                        Some(list) => list
                            .into_iter()
                            .filter(|o| each.test(c, Subject::Object(*o)))
                            .count(),
                        None => each
                            .state
                            .object_ids()
                            .filter(|o| each.test(c, Subject::Object(*o)))
                            .count(),
                    };
                    Some(n as i64)
                });
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
                    let mut all = crate::model::value::SymbolSet::default();
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
            NumExpr::Div(a, b) => self
                .eval(a, this)?
                .checked_div_euclid(self.eval(b, this)?)?,
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
            NumExpr::Const(_) | NumExpr::Nothing | NumExpr::Param(_) | NumExpr::Chosen => true,
            NumExpr::SourceSymbol { .. }
            | NumExpr::Char(..)
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
            | NumExpr::Div(a, b)
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
        let known = counts.counts.borrow().get(&key).map(|(_, n)| *n);
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
                counts.counts.borrow_mut().insert(key, (f, n));
                n
            }
        };
        let me = self
            .source
            .is_some_and(|s| rest().all(|(_, x)| self.test(x, Subject::Object(s))));
        Some(all - me as i64)
    }
}

/// Whether two values have a symbol in common. A set of every symbol but some (every creature type:
/// every subtype but the other sets' ones, CR 702.73a, 205.3m) shares a symbol with a finite set
/// only where that set holds one it does not lack: a changeling shares no creature type with a
/// Vehicle (an artifact type, CR 205.3g). Two such sets always share one (each lacks finitely many).
fn shares(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Symbols(a), Value::Symbols(b)) => match (a.is_every(), b.is_every()) {
            (true, true) => true,
            (false, _) => a.iter().any(|s| b.contains(s)),
            (true, false) => b.iter().any(|s| a.contains(s)),
        },
        _ => false,
    }
}

impl Cond {
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
            // A condition of players holds for no object.
            Cond::IsPlayer(_) | Cond::AnyPlayer => Some(Vec::new()),
            Cond::InPlay => Some(ctx.state.in_play_ids().to_vec()),
            Cond::AnyObject => Some(ctx.state.object_ids().collect()),
            Cond::InZone(z) => Some(ctx.state.objects_in_zone(*z).to_vec()),
            // The objects of the type's classes (FreeOrion's scopes index objects by type).
            Cond::OfType(t) => Some(ctx.state.of_type(*t).to_vec()),
            // Attached to one of the objects the inner condition narrows to (the objects in the
            // source's system: `attached to attached`).
            Cond::AttachedTo(c) => Some(ctx.state.attached_to_any(&c.narrow(ctx)?)),
            // Every part narrows: the objects of all of them.
            Cond::Or(cs) => {
                let mut all = Vec::new();
                for c in cs {
                    all.extend(c.narrow(ctx)?);
                }
                all.sort_unstable();
                all.dedup();
                Some(all)
            }
            Cond::And(_) => {
                let mut parts = Vec::new();
                and_parts(self, &mut parts);
                narrow_parts(&parts, ctx).map(|(list, _)| list)
            }
            // Near the source on the map, or seen by a source of no empire (by its own range):
            // the objects placed within the distance (FreeOrion's scopes index objects by
            // location).
            Cond::Near(_) | Cond::Visible(_) if ctx.reads.is_none() => ctx.placed_near(self),
            _ => None,
        }
    }
}

/// The parts of a conjunction, nested conjunctions opened (`a and (b and c)`: `a`, `b`, `c`), in
/// order; any other condition is its only part.
pub(crate) fn and_parts<'c>(c: &'c Cond, out: &mut Vec<&'c Cond>) {
    match c {
        Cond::And(cs) => cs.iter().for_each(|p| and_parts(p, out)),
        _ => out.push(c),
    }
}

/// Part `i`'s bit among a conjunction's parts decided by its narrowing: none past the 64th
/// (those parts are always tested).
fn part_bit(i: usize) -> u64 {
    if i < 64 {
        1 << i
    } else {
        0
    }
}

/// What a conjunction of `parts` narrows to (`Cond::narrow`), with the parts that hold for every
/// object of the list (bit `i` for part `i`): the type, zone or source the list is made of, and
/// "you control" where the list is of the objects "you" control.
fn narrow_parts(parts: &[&Cond], ctx: &Ctx) -> Option<(Vec<ObjectId>, u64)> {
    // The narrowest of the parts that narrow; the broad ones (every object of a type, every
    // object in play) only where no other part narrows.
    let broad = |c: &Cond| matches!(c, Cond::OfType(_) | Cond::InPlay | Cond::AnyObject);
    if let Some((i, list)) = parts
        .iter()
        .enumerate()
        .filter(|(_, c)| !broad(c))
        .filter_map(|(i, c)| Some((i, c.narrow(ctx)?)))
        .min_by_key(|(_, v)| v.len())
    {
        // "Itself": the list is the source, or nothing.
        let exact = matches!(parts[i], Cond::IsSource);
        return Some((list, if exact { part_bit(i) } else { 0 }));
    }
    let (i, list) = parts
        .iter()
        .enumerate()
        .filter(|(_, c)| broad(c))
        .filter_map(|(i, c)| Some((i, c.narrow(ctx)?)))
        .min_by_key(|(_, v)| v.len())?;
    let mut decided = part_bit(i);
    // "Planets you control": of those, the ones "you" control, by the same test on the same
    // values as the condition's part (FreeOrion's scopes index objects by owner); only where
    // nothing records what is read, as the test itself may not come to read every one's
    // controller.
    let yours = |c: &Cond| matches!(c, Cond::ControlledBy(PlayerRef::You));
    let list = match ctx.you {
        Some(y) if parts.iter().any(|c| yours(c)) && ctx.reads.is_none() => {
            for (j, c) in parts.iter().enumerate() {
                if yours(c) {
                    decided |= part_bit(j);
                }
            }
            let key = match parts[i] {
                Cond::OfType(t) => Broad::OfType(*t),
                Cond::InPlay => Broad::InPlay,
                _ => Broad::Any,
            };
            ctx.controlled_among(key, list, y)
        }
        _ => list,
    };
    // "Owned by you" (FreeOrion's Empire Affiliation, the source's empires): of those, the ones
    // such an empire controls, and those of a type owned through what is attached to them.
    let owned = parts.iter().find_map(|c| match c {
        Cond::Affiliated(a)
            if a.empire == EmpireRef::Source && !a.enemies && ctx.reads.is_none() =>
        {
            Some(a)
        }
        _ => None,
    });
    Some((
        match owned {
            Some(a) => ctx.owned_by_source(list, &a.owners),
            None => list,
        },
        decided,
    ))
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
