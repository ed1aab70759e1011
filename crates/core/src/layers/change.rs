//! What an effect's operations do to one subject's values, and the cells involved.

use crate::condition::eval::Ctx;
use crate::model::condition::{Cell, Footprint, Subject};
use crate::model::effect::{Change, Op};
use crate::model::ids::LayerId;
use crate::model::ids::SlotTarget;
use crate::model::sheet::Sheet;
use crate::model::trail::Touch;
use crate::model::trail::{Body, Candidate};
use crate::model::value::{Ability, Symbol, Value};
use crate::state::GameState;
use std::sync::Arc;

/// The cells a subject has for each written characteristic or property.
pub(super) fn cells_of(
    s: Subject,
    touches: &[(SlotTarget, Touch)],
) -> impl Iterator<Item = (Cell, Touch)> + '_ {
    touches.iter().filter_map(move |(t, touch)| match (s, t) {
        (Subject::Object(o), SlotTarget::Char(c)) => Some((Cell::Object(o, *c), touch.clone())),
        (Subject::Player(p), SlotTarget::Prop(q)) => Some((Cell::Player(p, *q), touch.clone())),
        _ => None,
    })
}

pub(super) fn add_cell(f: &mut Footprint, c: &Cell) {
    match c {
        Cell::Object(_, ch) => f.add_char(*ch),
        Cell::Player(_, p) => f.add_prop(*p),
    }
}

pub(super) fn footprint_of(cells: &[(Cell, Touch)]) -> Footprint {
    let mut f = Footprint::default();
    for (c, _) in cells {
        add_cell(&mut f, c);
    }
    f
}

pub(super) fn subject_of(c: &Cell) -> Subject {
    match c {
        Cell::Object(o, _) => Subject::Object(*o),
        Cell::Player(p, _) => Subject::Player(*p),
    }
}

/// What an operation does to one subject, as far as other values decide it: the numbers its
/// expressions give, the player a control change names, the values a text effect takes, the
/// symbols an ability template uses. CR 613.8a: a change here is a change to "what it does"; how
/// much it changes is not. ("You control enchanted permanent": a Confiscate that changes who
/// controls another Confiscate changes whom that one gives control to, CR 613.8a.)
pub(super) fn op_params(ctx: &Ctx, subject: Subject, op: &Op) -> Vec<Value> {
    match &op.change {
        // Whether the subject is concerned (a land) decides whether its abilities change.
        Change::WithIntrinsic { makes: None, .. } => {
            vec![Value::Number(Some(
                intrinsic_applies(ctx, subject, op) as i64
            ))]
        }
        Change::SetNumber(e) | Change::Modify(e) => vec![Value::Number(ctx.eval(e, subject))],
        Change::SetPlayer(r) => vec![Value::Player(ctx.player(*r, subject))],
        Change::TextOf(src) => {
            let from = match src {
                crate::model::effect::CopySource::Top(z) => {
                    ctx.object_ref(crate::model::condition::ObjRef::Top(*z), subject)
                }
                crate::model::effect::CopySource::Target => first_target_object(ctx.targets),
                crate::model::effect::CopySource::TargetAt(i) => target_object(ctx.targets, *i),
            };
            match from {
                Some(f) => ctx
                    .state
                    .ruleset
                    .copiable
                    .iter()
                    .map(|c| ctx.value(f, *c).clone())
                    .collect(),
                None => Vec::new(),
            }
        }
        Change::AbilitiesOf { kind, among } => {
            vec![Value::Abilities(abilities_of(ctx, op, *kind, among).into())]
        }
        Change::AbilitiesPer { of, among, .. } => {
            let syms = ctx.within(among, Some(*of), subject, |each| {
                let mut syms = crate::model::value::SymbolSet::default();
                for o in each.state.object_ids() {
                    if each.test(among, Subject::Object(o)) {
                        if let Value::Symbols(s) = each.value(o, *of) {
                            syms.extend(s);
                        }
                    }
                }
                syms
            });
            vec![Value::Symbols(syms)]
        }
        _ => Vec::new(),
    }
}

/// `op_params` in part: what only the values of objects `xs` decide (see `Ctx::probe`). False
/// where the operation's parameters cannot be probed.
pub(super) fn op_probe(
    ctx: &Ctx,
    subject: Subject,
    op: &Op,
    xs: &[crate::model::ids::ObjectId],
    out: &mut Vec<Option<i64>>,
) -> bool {
    match &op.change {
        Change::SetNumber(e) | Change::Modify(e) => ctx.probe(e, subject, xs, out),
        Change::WithIntrinsic { makes: None, .. } => {
            out.push(Some(intrinsic_applies(ctx, subject, op) as i64));
            true
        }
        Change::TextOf(_) | Change::AbilitiesPer { .. } | Change::AbilitiesOf { .. } => false,
        _ => true,
    }
}

/// The new values `cand`'s parts for `layer` give one subject.
pub(super) fn changes(
    state: &GameState,
    sheet: &Sheet,
    cand: &Candidate,
    layer: LayerId,
    subject: Subject,
) -> Vec<(SlotTarget, Value)> {
    let mut out = Vec::new();
    match &cand.body {
        Body::Counter { kind, count } => {
            for (c, d) in counter_numbers(state, *kind, layer) {
                let t = SlotTarget::Char(*c);
                if !fits(subject, t) {
                    continue;
                }
                out.push((
                    t,
                    counted(current(sheet, subject, t), d.checked_mul(*count)),
                ));
            }
            let ctx = cand.ctx(state, sheet, None);
            for op in counter_ops(state, *kind, layer) {
                if fits(subject, op.target) {
                    out.extend(change(&ctx, sheet, subject, op));
                }
            }
        }
        Body::FaceDown => {
            for (c, v) in &state.ruleset.face_down {
                out.push((SlotTarget::Char(*c), v.clone()));
            }
        }
        Body::Effect(def) => {
            let ctx = cand.ctx(state, sheet, None);
            for op in def.ops.iter().filter(|o| o.layer == layer) {
                if fits(subject, op.target) {
                    out.extend(change(&ctx, sheet, subject, op));
                }
            }
        }
    }
    out
}

/// The symbols an operation names, with the source's choice if it names "chosen".
pub(super) fn resolve_syms(
    ctx: &Ctx,
    l: &crate::model::effect::SymList,
) -> crate::model::value::SymbolSet {
    let mut set = l.set.clone();
    if l.chosen {
        if let Some(c) = ctx
            .source
            .and_then(|s| ctx.state.obj(s).choices.first().cloned())
        {
            set.insert(c);
        }
    }
    set
}

/// The number changes counters of a kind make in `layer`: all of them in the layer that applies
/// counters, none elsewhere.
pub(super) fn counter_numbers(
    state: &GameState,
    kind: crate::model::ids::CounterId,
    layer: LayerId,
) -> &[(crate::model::ids::CharId, i64)] {
    if state.ruleset.layer_def(layer).counters {
        &state.ruleset.counters[kind.index()].changes
    } else {
        &[]
    }
}

/// The other changes counters of a kind make in `layer` (a keyword counter's ability, CR 122.1b).
/// Each adds written keywords, so it reads nothing but its own cell.
pub(super) fn counter_ops(
    state: &GameState,
    kind: crate::model::ids::CounterId,
    layer: LayerId,
) -> impl Iterator<Item = &Op> {
    state.ruleset.counters[kind.index()]
        .ops
        .iter()
        .filter(move |o| o.layer == layer)
}

pub(super) fn fits(subject: Subject, t: SlotTarget) -> bool {
    matches!(
        (subject, t),
        (Subject::Object(_), SlotTarget::Char(_)) | (Subject::Player(_), SlotTarget::Prop(_))
    )
}

pub(super) fn current(sheet: &Sheet, subject: Subject, t: SlotTarget) -> &Value {
    match (subject, t) {
        (Subject::Object(o), SlotTarget::Char(c)) => &sheet.objects[o.index()][c.index()],
        (Subject::Player(p), SlotTarget::Prop(q)) => &sheet.players[p.index()][q.index()],
        _ => unreachable!("subject and target kinds are checked by `fits`"),
    }
}

pub(super) fn slot_ref(sheet: &Sheet, subject: Subject, t: SlotTarget) -> &Value {
    current(sheet, subject, t)
}

pub(super) fn slot_mut(sheet: &mut Sheet, subject: Subject, t: SlotTarget) -> &mut Value {
    match (subject, t) {
        (Subject::Object(o), SlotTarget::Char(c)) => &mut sheet.objects[o.index()][c.index()],
        (Subject::Player(p), SlotTarget::Prop(q)) => &mut sheet.players[p.index()][q.index()],
        _ => unreachable!("subject and target kinds are checked by `fits`"),
    }
}

/// The new value(s) one operation gives; a switch changes two characteristics.
pub(super) fn change(
    ctx: &Ctx,
    sheet: &Sheet,
    subject: Subject,
    op: &Op,
) -> Vec<(SlotTarget, Value)> {
    let cur = current(sheet, subject, op.target);
    let v = match &op.change {
        Change::WithIntrinsic {
            change: inner,
            makes,
        } => return with_intrinsic(ctx, sheet, subject, op, inner, *makes),
        Change::SetNumber(e) => Value::Number(ctx.eval(e, subject)),
        Change::Modify(e) => modified(cur, ctx.eval(e, subject)),
        Change::SwitchWith(other) => {
            let t2 = SlotTarget::Char(*other);
            let v2 = current(sheet, subject, t2).clone();
            return vec![(op.target, v2), (t2, cur.clone())];
        }
        Change::SetSymbols(l) => Value::Symbols(resolve_syms(ctx, l)),
        Change::SetInCategories { set, replaced } => {
            let named = resolve_syms(ctx, set);
            let mut replaced = replaced.clone();
            if let (true, SlotTarget::Char(ch)) = (set.chosen, op.target) {
                replaced.extend(&ctx.state.ruleset.categories_holding(ch, &named));
            }
            let mut v = match cur {
                Value::Symbols(x) => x.clone(),
                _ => Default::default(),
            };
            v.subtract(&replaced);
            v.extend(&named);
            Value::Symbols(v)
        }
        Change::AddSymbols(l) | Change::RemoveSymbols(l) => {
            let mut set = match cur {
                Value::Symbols(x) => x.clone(),
                _ => Default::default(),
            };
            let named = resolve_syms(ctx, l);
            if matches!(op.change, Change::AddSymbols(_)) {
                set.extend(&named);
            } else {
                set.subtract(&named);
            }
            Value::Symbols(set)
        }
        Change::SetAbilities(list) => Value::Abilities(list.as_slice().into()),
        Change::AddAbilities(list) | Change::MergeAbilities(list) => {
            let mut have = match cur {
                Value::Abilities(x) => x.to_vec(),
                _ => Vec::new(),
            };
            for a in list {
                if !have.contains(a) {
                    have.push(a.clone());
                }
            }
            Value::Abilities(have.into())
        }
        Change::RemoveAbilities(list) => {
            let have: &[Ability] = match cur {
                Value::Abilities(x) => x,
                _ => &[],
            };
            Value::Abilities(have.iter().filter(|a| !list.contains(a)).cloned().collect())
        }
        Change::SetPlayer(r) => Value::Player(ctx.player(*r, subject)),
        Change::SetText(t) => Value::Text(t.clone()),
        Change::SetValues(vals) => {
            return vals
                .iter()
                .map(|(c, v)| (SlotTarget::Char(*c), v.clone()))
                .collect();
        }
        // Content writes "copy of target"; the copy is taken when the effect is created, so an
        // unresolved copy here copies nothing.
        Change::CopyOf(_) => return Vec::new(),
        Change::TextOf(src) => {
            let from = match src {
                crate::model::effect::CopySource::Top(z) => {
                    ctx.object_ref(crate::model::condition::ObjRef::Top(*z), subject)
                }
                crate::model::effect::CopySource::Target => first_target_object(ctx.targets),
                crate::model::effect::CopySource::TargetAt(i) => target_object(ctx.targets, *i),
            };
            let Some(from) = from else {
                return Vec::new();
            };
            return ctx
                .state
                .ruleset
                .copiable
                .iter()
                .map(|c| {
                    (
                        SlotTarget::Char(*c),
                        sheet.objects[from.index()][c.index()].clone(),
                    )
                })
                .collect();
        }
        Change::ReplaceWord(from, to) => {
            let word = |r: &crate::model::effect::SymRef| -> Option<Symbol> {
                match r {
                    crate::model::effect::SymRef::Lit(s) => Some(s.clone()),
                    crate::model::effect::SymRef::Chosen(i) => ctx
                        .source
                        .and_then(|s| ctx.state.obj(s).choices.get(*i as usize).cloned()),
                }
            };
            let (Some(from), Some(to)) = (word(from), word(to)) else {
                return Vec::new();
            };
            // The symbol itself where the word is not in it, the new word where it is the whole
            // symbol: only a word inside a longer one ("swampwalk") makes new text.
            let swap = |s: &Symbol| {
                if *s == from {
                    to.clone()
                } else if !s.as_str().contains(from.as_str()) {
                    s.clone()
                } else {
                    Symbol::new(&s.as_str().replace(from.as_str(), to.as_str()))
                }
            };
            match cur {
                Value::Abilities(list) => Value::Abilities(
                    list.iter()
                        .map(|a| match a {
                            Ability::Keyword(k) => Ability::Keyword(swap(k)),
                            other => other.clone(),
                        })
                        .collect(),
                ),
                // Every symbol but some keeps every symbol: there is no word to replace.
                Value::Symbols(set) if set.is_every() => Value::Symbols(set.clone()),
                Value::Symbols(set) => Value::Symbols(set.iter().map(swap).collect()),
                other => other.clone(),
            }
        }
        Change::AbilitiesOf { kind, among } => {
            let mut have = match cur {
                Value::Abilities(x) => x.to_vec(),
                _ => Vec::new(),
            };
            for a in abilities_of(ctx, op, *kind, among) {
                if !have.contains(&a) {
                    have.push(a);
                }
            }
            Value::Abilities(have.into())
        }
        Change::AbilitiesPer {
            template,
            of,
            among,
        } => {
            let mut have = match cur {
                Value::Abilities(x) => x.to_vec(),
                _ => Vec::new(),
            };
            let syms = ctx.within(among, Some(*of), subject, |each| {
                let mut syms = crate::model::value::SymbolSet::default();
                for o in ctx.state.object_ids() {
                    if each.test(among, Subject::Object(o)) {
                        if let Value::Symbols(s) = &sheet.objects[o.index()][of.index()] {
                            syms.extend(s);
                        }
                    }
                }
                syms
            });
            for s in syms.iter() {
                let a = Ability::Keyword(Symbol::new(&template.replace("{}", s.as_str())));
                if !have.contains(&a) {
                    have.push(a);
                }
            }
            Value::Abilities(have.into())
        }
    };
    vec![(op.target, v)]
}

/// The abilities of kind `kind` (all with `None`) of the objects, in any zone and in id order, that
/// satisfy `among`, read from the characteristic `op` writes as derived so far.
fn abilities_of(
    ctx: &Ctx,
    op: &Op,
    kind: Option<crate::model::value::AbilityKind>,
    among: &crate::model::condition::Cond,
) -> Vec<Ability> {
    let SlotTarget::Char(ac) = op.target else {
        return Vec::new();
    };
    let each = ctx.aggregate(among, Some(ac));
    let mut out: Vec<Ability> = Vec::new();
    for o in ctx.state.object_ids() {
        if !each.test(among, Subject::Object(o)) {
            continue;
        }
        if let Value::Abilities(list) = each.value(o, ac) {
            for a in list.iter() {
                if kind.is_none_or(|k| a.is(k)) && !out.contains(a) {
                    out.push(a.clone());
                }
            }
        }
    }
    out
}

/// Whether the subject of a change to a characteristic whose symbols give abilities is concerned
/// (`types has land`), read as recorded.
fn intrinsic_applies(ctx: &Ctx, subject: Subject, op: &Op) -> bool {
    let (Subject::Object(o), SlotTarget::Char(ch)) = (subject, op.target) else {
        return false;
    };
    let Some(i) = ctx.state.ruleset.intrinsic_of(ch) else {
        return false;
    };
    matches!(ctx.value_for(o, i.when.0, &i.when.1), Value::Symbols(s) if s.contains(&i.when.1))
}

/// CR 305.6-305.7: a change to a characteristic whose symbols give abilities, and, where the
/// subject is concerned (a land), its abilities as the new symbols make them.
fn with_intrinsic(
    ctx: &Ctx,
    sheet: &Sheet,
    subject: Subject,
    op: &Op,
    inner: &Change,
    makes: Option<bool>,
) -> Vec<(SlotTarget, Value)> {
    let plain = op.with_change(inner.clone());
    let mut out = change(ctx, sheet, subject, &plain);
    let (Subject::Object(o), SlotTarget::Char(ch), Some(ac)) =
        (subject, op.target, ctx.state.abilities_char)
    else {
        return out;
    };
    let Some(intrinsic) = ctx.state.ruleset.intrinsic_of(ch) else {
        return out;
    };
    let row = &sheet.objects[o.index()];
    let (Value::Symbols(old), Some((_, Value::Symbols(new)))) =
        (&row[ch.index()], out.iter().find(|(t, _)| *t == op.target))
    else {
        return out;
    };
    if !makes.unwrap_or_else(|| intrinsic.applies(row)) {
        return out;
    }
    let have: &[Ability] = match &row[ac.index()] {
        Value::Abilities(a) => a,
        _ => &[],
    };
    // CR 305.7: an effect that sets a land's subtype to basic land types replaces the abilities
    // of its rules text; setting other subtypes (creature types) does not.
    let set = match inner {
        Change::SetSymbols(l) | Change::SetInCategories { set: l, .. } => {
            let named = resolve_syms(ctx, l);
            let gives = intrinsic.of(&named).next().is_some();
            gives
        }
        _ => false,
    };
    let after = intrinsic.abilities_after(have, old, new, set);
    if after[..] != *have {
        out.push((SlotTarget::Char(ac), Value::Abilities(after.into())));
    }
    out
}

/// What one operation will do to one subject, worked out before any part of the effect is
/// written: every part of an effect sees the values as they stood before the effect applied.
enum Prepared {
    /// The operation does not fit the subject (a player property on an object).
    Skip,
    /// A number from the operation's expression.
    Number(Option<i64>),
    /// A player from the operation's reference.
    Player(Option<crate::model::ids::PlayerId>),
    /// The operation reads nothing but its own cell and its written symbols or abilities.
    Own,
    /// Any other operation: its new values, computed the general way.
    Values(Vec<(SlotTarget, Value)>),
}

/// A short list, kept on the stack while it holds at most four items: an effect has few parts in a
/// layer, and a replay applies one step to one subject many times (no allocation then).
enum Few<T> {
    Stack(usize, [Option<T>; 4]),
    Heap(Vec<T>),
}

impl<T> Few<T> {
    fn with_capacity(n: usize) -> Self {
        if n <= 4 {
            Few::Stack(0, [None, None, None, None])
        } else {
            Few::Heap(Vec::with_capacity(n))
        }
    }

    fn push(&mut self, t: T) {
        match self {
            Few::Stack(n, a) if *n < 4 => {
                a[*n] = Some(t);
                *n += 1;
            }
            Few::Stack(_, a) => {
                let mut v: Vec<T> = a.iter_mut().filter_map(Option::take).collect();
                v.push(t);
                *self = Few::Heap(v);
            }
            Few::Heap(v) => v.push(t),
        }
    }

    fn len(&self) -> usize {
        match self {
            Few::Stack(n, _) => *n,
            Few::Heap(v) => v.len(),
        }
    }

    fn get(&self, i: usize) -> &T {
        match self {
            Few::Stack(n, a) => {
                assert!(i < *n);
                a[i].as_ref().expect("set below the length")
            }
            Few::Heap(v) => &v[i],
        }
    }

    fn get_mut(&mut self, i: usize) -> &mut T {
        match self {
            Few::Stack(n, a) => {
                assert!(i < *n);
                a[i].as_mut().expect("set below the length")
            }
            Few::Heap(v) => &mut v[i],
        }
    }

    fn iter(&self) -> impl Iterator<Item = &T> {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// Whether an ability list holds a static ability (a grant whose timestamp must be kept).
fn grants_static(list: &[Ability]) -> bool {
    list.iter().any(|a| matches!(a, Ability::Static { .. }))
}

/// Applies `cand`'s parts for `layer` to each subject in place, with no explanation: the same
/// values `changes` gives, without building them one by one. `note` records an ability list written
/// by a general operation (for grant timestamps) before it is written. True if any part applied.
#[allow(clippy::too_many_arguments)]
pub(super) fn apply_in_place(
    state: &GameState,
    sheet: &mut Sheet,
    cand: &Candidate,
    layer: LayerId,
    subjects: &[Subject],
    known: Option<&[Vec<Value>]>,
    log: Option<&mut (dyn KeepBefore + 'static)>,
    mut note: impl FnMut(&Sheet, Subject, SlotTarget, &Value),
) -> bool {
    apply_keeping(
        state, sheet, cand, layer, subjects, known, log, &mut note, None,
    )
}

/// `apply_in_place`, also giving, where the effect's parameters are numbers that differ by
/// subject, those numbers per subject (as `op_params` gives them) in `params_out`.
#[allow(clippy::too_many_arguments)]
pub(super) fn apply_keeping(
    state: &GameState,
    sheet: &mut Sheet,
    cand: &Candidate,
    layer: LayerId,
    subjects: &[Subject],
    known: Option<&[Vec<Value>]>,
    mut log: Option<&mut (dyn KeepBefore + 'static)>,
    note: &mut dyn FnMut(&Sheet, Subject, SlotTarget, &Value),
    params_out: Option<&mut Vec<Vec<Value>>>,
) -> bool {
    // Keeps a cell's value before the layer first writes it (for a later derivation to start here).
    let keep = |log: &mut Option<&mut (dyn KeepBefore + 'static)>,
                s: Subject,
                t: SlotTarget,
                v: &Value| {
        if let Some(log) = log {
            log.keep(s, t, v);
        }
    };
    let mut applied = false;
    match &cand.body {
        Body::Counter { kind, count } => {
            for s in subjects {
                let Subject::Object(o) = s else { continue };
                for (c, d) in counter_numbers(state, *kind, layer) {
                    let cell = &mut sheet.objects[o.index()][c.index()];
                    keep(&mut log, *s, SlotTarget::Char(*c), cell);
                    *cell = counted(cell, d.checked_mul(*count));
                    applied = true;
                }
                // A keyword counter's ability (CR 122.1b): written the way an effect writes it.
                for op in counter_ops(state, *kind, layer) {
                    let list = change(&cand.ctx(state, sheet, None), sheet, *s, op);
                    for (t, v) in list {
                        let slot = slot_mut(sheet, *s, t);
                        keep(&mut log, *s, t, slot);
                        *slot = v;
                        applied = true;
                    }
                }
            }
        }
        Body::FaceDown => {
            for s in subjects {
                let Subject::Object(o) = s else { continue };
                for (c, v) in &state.ruleset.face_down {
                    let cell = &mut sheet.objects[o.index()][c.index()];
                    keep(&mut log, *s, SlotTarget::Char(*c), cell);
                    *cell = v.clone();
                    applied = true;
                }
            }
        }
        Body::Effect(def) => {
            let mut ops: Few<&Op> =
                Few::with_capacity(def.ops.iter().filter(|o| o.layer == layer).count());
            for op in def.ops.iter().filter(|o| o.layer == layer) {
                ops.push(op);
            }
            // CR 613.5: an effect applies to all its subjects at once, so every subject's values
            // are worked out on the values as they stood before the effect, then written.
            let Some(&first) = subjects.first() else {
                return false;
            };
            let uniform = ops.iter().all(|op| uniform_op(op));
            // The numbers an up-to-date analysis already worked out (see `op_params`), where every
            // part's parameters are numbers.
            let known = known.filter(|k| {
                k.len() == subjects.len()
                    && ops.iter().all(|op| {
                        !matches!(
                            op.change,
                            Change::TextOf(_)
                                | Change::AbilitiesPer { .. }
                                | Change::AbilitiesOf { .. }
                                | Change::WithIntrinsic { .. }
                                | Change::SetPlayer(_)
                        )
                    })
            });
            let mut prepared: Few<Prepared> = {
                let ctx = cand.ctx(state, sheet, None);
                if uniform {
                    let mut v = Few::with_capacity(ops.len());
                    for op in ops.iter() {
                        v.push(prepare(&ctx, sheet, first, op));
                    }
                    v
                } else {
                    let mut v = Few::with_capacity(subjects.len() * ops.len());
                    for (k, &s) in subjects.iter().enumerate() {
                        let mut numbers = known.map(|kn| kn[k].iter());
                        for op in ops.iter() {
                            let number = match (&op.change, &mut numbers) {
                                (Change::SetNumber(_) | Change::Modify(_), Some(it)) => {
                                    it.next().map(Value::number)
                                }
                                _ => None,
                            };
                            v.push(if !fits(s, op.target) {
                                Prepared::Skip
                            } else if let Some(n) = number {
                                Prepared::Number(n)
                            } else {
                                prepare(&ctx, sheet, s, op)
                            });
                        }
                    }
                    v
                }
            };
            let numbers_only = ops
                .iter()
                .all(|op| !matches!(op.change, Change::TextOf(_) | Change::AbilitiesPer { .. }));
            if let (Some(out), false, true) = (params_out, uniform, numbers_only) {
                *out = (0..subjects.len())
                    .map(|k| {
                        ops.iter()
                            .enumerate()
                            .filter(|(_, op)| {
                                matches!(op.change, Change::SetNumber(_) | Change::Modify(_))
                            })
                            .map(|(j, _)| match prepared.get(k * ops.len() + j) {
                                Prepared::Number(n) => Value::Number(*n),
                                _ => Value::Number(None),
                            })
                            .collect()
                    })
                    .collect();
            }
            let mut memo: Few<Option<(Value, Value)>> = Few::with_capacity(ops.len());
            for _ in 0..ops.len() {
                memo.push(None);
            }
            for (k, &s) in subjects.iter().enumerate() {
                for (j, op) in ops.iter().enumerate() {
                    if !fits(s, op.target) {
                        continue;
                    }
                    let p = if uniform {
                        prepared.get_mut(j)
                    } else {
                        prepared.get_mut(k * ops.len() + j)
                    };
                    match p {
                        Prepared::Skip => {}
                        Prepared::Number(n) => {
                            let slot = slot_mut(sheet, s, op.target);
                            keep(&mut log, s, op.target, slot);
                            *slot = match &op.change {
                                Change::Modify(_) => modified(slot, *n),
                                _ => Value::Number(*n),
                            };
                            applied = true;
                        }
                        Prepared::Player(p) => {
                            let slot = slot_mut(sheet, s, op.target);
                            keep(&mut log, s, op.target, slot);
                            *slot = Value::Player(*p);
                            applied = true;
                        }
                        Prepared::Own => {
                            // The same input gives the same output: subjects that share a value
                            // (every Goblin's "goblin") share the result too.
                            let slot = slot_mut(sheet, s, op.target);
                            keep(&mut log, s, op.target, slot);
                            own_remembered(slot, &op.change, memo.get_mut(j));
                            applied = true;
                        }
                        Prepared::Values(list) => {
                            for (t, v) in std::mem::take(list) {
                                note(sheet, s, t, &v);
                                let slot = slot_mut(sheet, s, t);
                                keep(&mut log, s, t, slot);
                                *slot = v;
                                applied = true;
                            }
                        }
                    }
                }
            }
        }
    }
    applied
}

/// What one operation will do to one subject (see `Prepared`).
fn prepare(ctx: &Ctx, sheet: &Sheet, s: Subject, op: &Op) -> Prepared {
    match &op.change {
        Change::SetNumber(e) | Change::Modify(e) => Prepared::Number(ctx.eval(e, s)),
        Change::SetPlayer(r) => Prepared::Player(ctx.player(*r, s)),
        Change::SetSymbols(l) | Change::AddSymbols(l) | Change::RemoveSymbols(l) if !l.chosen => {
            Prepared::Own
        }
        Change::SetInCategories { set, .. } if !set.chosen => Prepared::Own,
        Change::AddAbilities(l) if !grants_static(l) => Prepared::Own,
        Change::RemoveAbilities(_) => Prepared::Own,
        _ => Prepared::Values(change(ctx, sheet, s, op)),
    }
}

/// Whether an operation does the same to every subject: its parameters read no values.
pub(super) fn uniform_op(op: &Op) -> bool {
    match &op.change {
        Change::SetNumber(e) | Change::Modify(e) => e.is_constant(),
        Change::SetPlayer(r) => *r != crate::model::condition::PlayerRef::Owner,
        Change::SetSymbols(l) | Change::AddSymbols(l) | Change::RemoveSymbols(l) => !l.chosen,
        Change::SetInCategories { set, .. } => !set.chosen,
        Change::AddAbilities(l) => !grants_static(l),
        Change::RemoveAbilities(_) => true,
        _ => false,
    }
}

/// A number with `n` added ("gets +1/+1"): no number stays none, and adding none changes nothing.
fn modified(cur: &Value, n: Option<i64>) -> Value {
    Value::Number(match (cur.number(), n) {
        (Some(a), Some(b)) => a.checked_add(b),
        (a, _) => a,
    })
}

/// A number with counters' worth `n` added; no number if that overflows.
fn counted(cur: &Value, n: Option<i64>) -> Value {
    Value::Number(cur.number().and_then(|a| a.checked_add(n?)))
}

/// `own`, remembering its last input and output: subjects that share a value (every Goblin's
/// "goblin") share the result too.
fn own_remembered(slot: &mut Value, c: &Change, memo: &mut Option<(Value, Value)>) {
    match memo {
        Some((_, to)) if to.shares(slot) => {}
        Some((from, to)) if from.shares(slot) => *slot = to.clone(),
        _ => {
            let from = slot.clone();
            own(slot, c);
            *memo = Some((from, slot.clone()));
        }
    }
}

/// An operation that reads only its own cell and what it names, done in place (see `change`).
fn own(slot: &mut Value, c: &Change) {
    match c {
        Change::SetSymbols(l) => {
            if !matches!(slot, Value::Symbols(s) if s.same(&l.set)) {
                *slot = Value::Symbols(l.set.clone())
            }
        }
        Change::AddSymbols(l) => match slot {
            Value::Symbols(set) => set.extend(&l.set),
            _ => {
                let mut set = crate::model::value::SymbolSet::default();
                set.extend(&l.set);
                *slot = Value::Symbols(set);
            }
        },
        Change::SetInCategories { set, replaced } => {
            let mut v = match slot {
                Value::Symbols(x) => x.clone(),
                _ => Default::default(),
            };
            v.subtract(replaced);
            v.extend(&set.set);
            *slot = Value::Symbols(v);
        }
        Change::RemoveSymbols(l) => match slot {
            Value::Symbols(set) => set.subtract(&l.set),
            _ => *slot = Value::Symbols(Default::default()),
        },
        Change::AddAbilities(list) => {
            let have: &[Ability] = match slot {
                Value::Abilities(have) => have,
                _ => &[],
            };
            if list.iter().any(|a| !have.contains(a)) {
                let mut v = have.to_vec();
                for a in list {
                    if !v.contains(a) {
                        v.push(a.clone());
                    }
                }
                *slot = Value::Abilities(v.into());
            } else if !matches!(slot, Value::Abilities(_)) {
                *slot = Value::Abilities(Arc::from(Vec::new()));
            }
        }
        Change::RemoveAbilities(list) => match slot {
            Value::Abilities(have) => {
                if have.iter().any(|a| list.contains(a)) {
                    *have = have.iter().filter(|a| !list.contains(a)).cloned().collect();
                }
            }
            _ => *slot = Value::Abilities(Arc::from(Vec::new())),
        },
        _ => unreachable!("only operations marked `Own` come here"),
    }
}

/// What an effect that does the same to every subject does to one characteristic or property.
enum Same<'a> {
    /// Adds a number (7c "gets +1/+1").
    Add(Option<i64>),
    /// Adds counters' worth; no number if it overflows.
    Counters(Option<i64>),
    SetNumber(Option<i64>),
    Player(Option<crate::model::ids::PlayerId>),
    /// Reads only its own cell (`own`).
    Own(&'a Change),
    Set(&'a Value),
}

/// Whether `cand`'s parts for `layer` do the same to every subject whatever the values: counters,
/// face-down values, and operations whose amounts are written numbers (see `uniform_op`).
pub(super) fn does_the_same(cand: &Candidate, layer: LayerId) -> bool {
    match &cand.body {
        // A counter's changes are numbers and written keywords (`counter_ops`).
        Body::Counter { .. } | Body::FaceDown => true,
        Body::Effect(def) => def.ops.iter().filter(|o| o.layer == layer).all(uniform_op),
    }
}

/// Applies, in order, effects that each do the same to every subject (`does_the_same`) and that
/// read nothing the others write, in one pass over their subjects: each subject gets each effect's
/// parts in the effects' order, as applying them one after another would. Returns, per effect,
/// whether any part applied.
pub(super) fn apply_run(
    state: &GameState,
    sheet: &mut Sheet,
    layer: LayerId,
    run: &[(&Candidate, &[Subject])],
    mut log: Option<&mut (dyn KeepBefore + 'static)>,
) -> Vec<bool> {
    // Each effect's parts, worked out once.
    let parts: Vec<Vec<(SlotTarget, Same)>> = run
        .iter()
        .map(|(cand, subjects)| match &cand.body {
            Body::Counter { kind, count } => counter_numbers(state, *kind, layer)
                .iter()
                .map(|(c, d)| (SlotTarget::Char(*c), Same::Counters(d.checked_mul(*count))))
                .chain(
                    counter_ops(state, *kind, layer).map(|op| (op.target, Same::Own(&op.change))),
                )
                .collect(),
            Body::FaceDown => state
                .ruleset
                .face_down
                .iter()
                .map(|(c, v)| (SlotTarget::Char(*c), Same::Set(v)))
                .collect(),
            Body::Effect(def) => {
                let Some(&first) = subjects.first() else {
                    return Vec::new();
                };
                let ctx = cand.ctx(state, sheet, None);
                def.ops
                    .iter()
                    .filter(|o| o.layer == layer)
                    .map(|op| {
                        let same = match &op.change {
                            Change::Modify(e) => Same::Add(ctx.eval(e, first)),
                            Change::SetNumber(e) => Same::SetNumber(ctx.eval(e, first)),
                            Change::SetPlayer(r) => Same::Player(ctx.player(*r, first)),
                            other => Same::Own(other),
                        };
                        (op.target, same)
                    })
                    .collect()
            }
        })
        .collect();
    let mut applied = vec![false; run.len()];
    // Effects with the same subjects (a shared list: "creatures you control") walk together; the
    // distinct lists are walked side by side, each in id order.
    let mut lists: Vec<&[Subject]> = Vec::new();
    let mut list_of: Vec<usize> = Vec::with_capacity(run.len());
    // Each list found by its address and length (thousands of lists: no search of them all).
    let mut known: rustc_hash::FxHashMap<(usize, usize), usize> = Default::default();
    for (_, subs) in run {
        let i = *known
            .entry((subs.as_ptr() as usize, subs.len()))
            .or_insert_with(|| {
                lists.push(subs);
                lists.len() - 1
            });
        list_of.push(i);
    }
    // Whether each effect applied: it has a part for the kind of some subject.
    for (k, (_, subs)) in run.iter().enumerate() {
        let has_object = matches!(subs.first(), Some(Subject::Object(_)));
        let has_player = matches!(subs.last(), Some(Subject::Player(_)));
        applied[k] = parts[k].iter().any(|(t, _)| match t {
            SlotTarget::Char(_) => has_object,
            SlotTarget::Prop(_) => has_player,
        });
    }
    if lists.len() > 64 {
        // Too many lists to walk side by side: by the lists each subject is in.
        run_by_lists(sheet, &parts, &lists, &list_of, log);
        return applied;
    }
    // The effects, in order, that apply to a subject found in the lists of a set.
    // For each set of lists a subject is in: the effects' parts in order, as one program.
    let mut programs: rustc_hash::FxHashMap<u64, Program> = Default::default();
    let mut at = vec![0usize; lists.len()];
    while let Some(s) = lists
        .iter()
        .zip(&at)
        .filter_map(|(l, i)| l.get(*i))
        .min()
        .copied()
    {
        let mut mask = 0u64;
        for (g, l) in lists.iter().enumerate() {
            if l.get(at[g]) == Some(&s) {
                mask |= 1 << g;
                at[g] += 1;
            }
        }
        let program = programs.entry(mask).or_insert_with(|| {
            Program::new(
                (0..run.len())
                    .filter(|k| mask & (1 << list_of[*k]) != 0)
                    .flat_map(|k| parts[k].iter()),
            )
        });
        if let Some(log) = log.as_deref_mut() {
            for t in program.targets.iter().filter(|t| fits(s, **t)) {
                log.keep(s, *t, slot_mut(sheet, s, *t));
            }
        }
        program.run(sheet, s);
    }
    applied
}

/// Parts of several effects to apply in order to each subject of a run, with consecutive
/// additions to one characteristic summed, and repeats of one symbol or ability change dropped
/// (adding flying twice adds it once): the same result as applying each in turn.
/// `apply_run` over more lists than a set of them fits in a mask (an effect of its own for each
/// of thousands of objects, and a few shared lists): each subject gets the parts of the effects
/// whose lists hold it, in the effects' order. Where those are all additions, each list's total
/// per characteristic is added (the same number in any order, where no partial total of them can
/// overflow); otherwise the effects' parts in order, as one program per set of lists. The work is
/// the length of the distinct lists, not of every effect's.
fn run_by_lists<'a>(
    sheet: &mut Sheet,
    parts: &'a [Vec<(SlotTarget, Same<'a>)>],
    lists: &[&[Subject]],
    list_of: &[usize],
    mut log: Option<&mut (dyn KeepBefore + 'static)>,
) {
    let mut effects_of: Vec<Vec<usize>> = vec![Vec::new(); lists.len()];
    for (k, g) in list_of.iter().enumerate() {
        effects_of[*g].push(k);
    }
    // For a list whose effects only add: per target, the total and the sum of the sizes.
    let sums: Vec<Option<Vec<(SlotTarget, i128, i128)>>> = effects_of
        .iter()
        .map(|ks| {
            let mut out: Vec<(SlotTarget, i128, i128)> = Vec::new();
            for (t, same) in ks.iter().flat_map(|k| parts[*k].iter()) {
                let Same::Add(n) = same else { return None };
                let n = i128::from(n.unwrap_or(0));
                match out.iter_mut().find(|(x, ..)| x == t) {
                    Some((_, total, size)) => {
                        *total += n;
                        *size += n.abs();
                    }
                    None => out.push((*t, n, n.abs())),
                }
            }
            Some(out)
        })
        .collect();
    // The lists each subject is in, in order: objects by a count of each one's lists (a
    // counting sort over object indexes), players apart.
    let objects = lists
        .iter()
        .filter_map(
            |l| match l.iter().rev().find(|s| matches!(s, Subject::Object(_))) {
                Some(Subject::Object(o)) => Some(o.index() + 1),
                _ => None,
            },
        )
        .max()
        .unwrap_or(0);
    let mut start = vec![0u32; objects + 1];
    let mut players: Vec<(Subject, Vec<u32>)> = Vec::new();
    for (g, l) in lists.iter().enumerate() {
        for s in l.iter() {
            match s {
                Subject::Object(o) => start[o.index() + 1] += 1,
                Subject::Player(_) => match players.iter_mut().find(|(p, _)| p == s) {
                    Some((_, gs)) => gs.push(g as u32),
                    None => players.push((*s, vec![g as u32])),
                },
            }
        }
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut next = start.clone();
    let mut in_lists = vec![0u32; start[objects] as usize];
    for (g, l) in lists.iter().enumerate() {
        for s in l.iter() {
            if let Subject::Object(o) = s {
                in_lists[next[o.index()] as usize] = g as u32;
                next[o.index()] += 1;
            }
        }
    }
    players.sort_unstable_by_key(|(s, _)| *s);
    let each = (0..objects)
        .filter(|o| start[*o] < start[*o + 1])
        .map(|o| {
            (
                Subject::Object(crate::model::ids::ObjectId(o as u32)),
                &in_lists[start[o] as usize..start[o + 1] as usize],
            )
        })
        .chain(players.iter().map(|(s, gs)| (*s, gs.as_slice())));
    let fits_i64 = |x: i128| (i128::from(i64::MIN)..=i128::from(i64::MAX)).contains(&x);
    let mut programs: rustc_hash::FxHashMap<&[u32], Program> = Default::default();
    let mut totals: Vec<(SlotTarget, i128, i128)> = Vec::new();
    for (s, gs) in each {
        totals.clear();
        let additive = gs.iter().all(|g| {
            let Some(list) = &sums[*g as usize] else {
                return false;
            };
            for (t, total, size) in list.iter().filter(|(t, ..)| fits(s, *t)) {
                match totals.iter_mut().find(|(x, ..)| x == t) {
                    Some((_, a, b)) => {
                        *a += total;
                        *b += size;
                    }
                    None => totals.push((*t, *total, *size)),
                }
            }
            true
        });
        // Every partial total, in any order, is within the sum of the sizes of the start.
        let safe = additive
            && totals
                .iter()
                .all(|(t, _, size)| match current(sheet, s, *t) {
                    Value::Number(Some(a)) => {
                        fits_i64(i128::from(*a) - size) && fits_i64(i128::from(*a) + size)
                    }
                    _ => true,
                });
        if safe {
            for (t, total, _) in &totals {
                let slot = slot_mut(sheet, s, *t);
                if let Some(log) = log.as_deref_mut() {
                    log.keep(s, *t, slot);
                }
                match slot {
                    Value::Number(Some(a)) => {
                        *slot = Value::Number(Some((i128::from(*a) + total) as i64))
                    }
                    Value::Number(None) => {}
                    other => *other = Value::Number(None),
                }
            }
            continue;
        }
        let program = programs.entry(gs).or_insert_with(|| {
            let mut ks: Vec<usize> = gs
                .iter()
                .flat_map(|g| effects_of[*g as usize].iter().copied())
                .collect();
            ks.sort_unstable();
            Program::new(ks.iter().flat_map(|k| parts[*k].iter()))
        });
        if let Some(log) = log.as_deref_mut() {
            for t in program.targets.iter().filter(|t| fits(s, **t)) {
                log.keep(s, *t, slot_mut(sheet, s, *t));
            }
        }
        program.run(sheet, s);
    }
}

struct Program<'a> {
    targets: Vec<SlotTarget>,
    ops: Vec<(SlotTarget, Compiled<'a>)>,
    /// For each operation that reads only its own cell: its last input and output.
    memo: Vec<Option<(Value, Value)>>,
}

enum Compiled<'a> {
    /// Additions in turn: their total, and the least and greatest partial totals (an addition
    /// that would overflow leaves no number, as it would one at a time).
    Add {
        total: i128,
        lo: i128,
        hi: i128,
    },
    One(&'a Same<'a>),
}

impl<'a> Program<'a> {
    fn new(parts: impl Iterator<Item = &'a (SlotTarget, Same<'a>)>) -> Self {
        let mut targets: Vec<SlotTarget> = Vec::new();
        let mut ops: Vec<(SlotTarget, Compiled<'a>)> = Vec::new();
        for (t, same) in parts {
            if !targets.contains(t) {
                targets.push(*t);
            }
            let last = ops.iter_mut().rev().find(|(x, _)| x == t).map(|(_, op)| op);
            match (same, last) {
                (Same::Add(n), Some(Compiled::Add { total, lo, hi })) => {
                    *total += n.unwrap_or(0) as i128;
                    *lo = (*lo).min(*total);
                    *hi = (*hi).max(*total);
                }
                (Same::Add(n), _) => {
                    let total = n.unwrap_or(0) as i128;
                    ops.push((
                        *t,
                        Compiled::Add {
                            total,
                            lo: total.min(0),
                            hi: total.max(0),
                        },
                    ));
                }
                (Same::Own(c), Some(Compiled::One(Same::Own(prev)))) if std::ptr::eq(*c, *prev) => {
                }
                (same, _) => ops.push((*t, Compiled::One(same))),
            }
        }
        let memo = vec![None; ops.len()];
        Program { targets, ops, memo }
    }

    fn run(&mut self, sheet: &mut Sheet, s: Subject) {
        for (j, (t, op)) in self.ops.iter().enumerate() {
            if !fits(s, *t) {
                continue;
            }
            let slot = slot_mut(sheet, s, *t);
            match op {
                Compiled::Add { total, lo, hi } => match slot {
                    Value::Number(Some(a)) => {
                        let a = *a as i128;
                        let fits_i64 = |x: i128| (i64::MIN as i128..=i64::MAX as i128).contains(&x);
                        *slot = Value::Number(if fits_i64(a + lo) && fits_i64(a + hi) {
                            Some((a + total) as i64)
                        } else {
                            None
                        });
                    }
                    Value::Number(None) => {}
                    other => *other = Value::Number(None),
                },
                Compiled::One(same) => match same {
                    Same::Add(_) => unreachable!("additions are compiled"),
                    Same::Counters(n) => *slot = counted(slot, *n),
                    Same::SetNumber(n) => *slot = Value::Number(*n),
                    Same::Player(p) => *slot = Value::Player(*p),
                    Same::Set(v) => *slot = (*v).clone(),
                    Same::Own(change) => own_remembered(slot, change, &mut self.memo[j]),
                },
            }
        }
    }
}

/// The first of a spell's targets that is an object.
fn first_target_object(targets: &[Subject]) -> Option<crate::model::ids::ObjectId> {
    targets.iter().find_map(|t| match t {
        Subject::Object(o) => Some(*o),
        Subject::Player(_) => None,
    })
}

/// A spell's target of that index, if it is an object.
fn target_object(targets: &[Subject], i: u8) -> Option<crate::model::ids::ObjectId> {
    match targets.get(i as usize) {
        Some(Subject::Object(o)) => Some(*o),
        _ => None,
    }
}

impl Touch {
    pub(super) fn meets(&self, obs: &Option<Symbol>) -> bool {
        match (self, obs) {
            (Touch::Names(list), Some(s)) => list.contains(s),
            _ => true,
        }
    }
    pub(super) fn join(self, other: Touch) -> Touch {
        match (self, other) {
            (Touch::Names(a), Touch::Names(b)) => {
                Touch::Names(a.iter().chain(b.iter()).cloned().collect())
            }
            _ => Touch::Any,
        }
    }
    /// How a change to a characteristic whose symbols give abilities (CR 305.6-305.7) changes the
    /// abilities of the object concerned: the abilities of the symbols it may add or take away;
    /// any ability where it sets basic land types (the rules-text abilities go, CR 305.7) or
    /// names a symbol only when it applies (a choice); `None` where it gives and takes none.
    pub(super) fn of_intrinsic(
        intrinsic: &crate::model::ruleset::Intrinsic,
        change: &Change,
    ) -> Option<Touch> {
        let name = |a: &Ability| match a {
            Ability::Keyword(k) | Ability::Kinded { name: k, .. } => k.clone(),
            Ability::Static { text, .. } | Ability::Response { text, .. } => {
                Symbol::from(text.clone())
            }
        };
        let all = || Touch::Names(intrinsic.abilities.iter().map(|(_, a)| name(a)).collect());
        let of = |l: &crate::model::effect::SymList| -> Vec<Symbol> {
            intrinsic
                .abilities
                .iter()
                .filter(|(s, _)| l.set.contains(s))
                .map(|(_, a)| name(a))
                .collect()
        };
        match change {
            Change::SetSymbols(l) | Change::SetInCategories { set: l, .. } => {
                if l.chosen || l.set.is_every() || !of(l).is_empty() {
                    Some(Touch::Any)
                } else if matches!(change, Change::SetSymbols(_)) {
                    // Every symbol goes: so do the abilities of those that held some.
                    Some(all())
                } else {
                    // The sets of its symbols are replaced: none gives abilities.
                    None
                }
            }
            Change::AddSymbols(l) | Change::RemoveSymbols(l) => {
                if l.chosen || l.set.is_every() {
                    Some(all())
                } else {
                    let names = of(l);
                    (!names.is_empty()).then(|| Touch::Names(names.into()))
                }
            }
            _ => Some(Touch::Any),
        }
    }

    pub(super) fn of(change: &Change) -> Touch {
        let names = |l: &crate::model::effect::SymList| {
            if l.chosen || l.set.is_every() {
                Touch::Any
            } else {
                Touch::Names(l.set.iter().cloned().collect())
            }
        };
        let abilities = |l: &[Ability]| {
            Touch::Names(
                l.iter()
                    .map(|a| match a {
                        Ability::Keyword(k) | Ability::Kinded { name: k, .. } => k.clone(),
                        Ability::Static { text, .. } | Ability::Response { text, .. } => {
                            Symbol::from(text.clone())
                        }
                    })
                    .collect(),
            )
        };
        match change {
            Change::WithIntrinsic { change, .. } => Touch::of(change),
            Change::AddSymbols(l) | Change::RemoveSymbols(l) => names(l),
            Change::AddAbilities(l) | Change::RemoveAbilities(l) | Change::MergeAbilities(l) => {
                abilities(l)
            }
            _ => Touch::Any,
        }
    }
}

/// Where a layer keeps the values it overwrites: each cell's value before the layer first wrote
/// it, for a later derivation to start from that layer (the derivation's trail).
pub(super) trait KeepBefore {
    fn keep(&mut self, s: Subject, t: SlotTarget, v: &Value);
}
