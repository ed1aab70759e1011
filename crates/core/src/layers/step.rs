//! What a replay reads of a previous derivation's step: the effect's operations in a layer, its
//! kept parameters and how they move with the aggregates they read, and the step as replayed so
//! far (`Now`).

use super::change::uniform_op;
use super::replay::{fail, Fail, Res};
use super::start::has_open_aggregates;
use crate::model::condition::{Aggregate, Cond, NumExpr, Subject};
use crate::model::effect::{Affects, Change, EffectDef, Op};
use crate::model::ids::{CharId, LayerId, PlayerId};
use crate::model::trail::{AggregateValues, Applied, PartnerThen, Shape};
use crate::model::trail::{Body, Candidate, Subjects};
use crate::model::value::{Ability, Value};
use crate::state::GameState;
use rustc_hash::FxHashMap;
use std::sync::Arc;

impl Shape {
    pub(super) fn of(
        cand: &Candidate,
        state: &GameState,
        def: &EffectDef,
        lid: LayerId,
        fresh: bool,
    ) -> Shape {
        let scans = cand.created.is_none();
        let mut tested_reads = cand.scan_reads(state, state.controller_char);
        if let Some(w) = &def.while_cond {
            w.reads(state.controller_char, &mut tested_reads);
        }
        fn keys(a: Vec<Aggregate<'_>>) -> Vec<usize> {
            a.into_iter().map(|n| n.key()).collect()
        }
        let of_cond = |c: &Cond| {
            let mut a = Vec::new();
            c.aggregates(&mut a);
            keys(a)
        };
        let affects = match &def.affects {
            Affects::Objects(c) | Affects::Players(c) => c,
        };
        let ops: Vec<&Op> = def.ops.iter().filter(|o| o.layer == lid).collect();
        Shape {
            reads_counters: def.reads_counters(),
            open_aggregates: has_open_aggregates(def, lid, fresh, scans),
            while_aggs: def.while_cond.as_ref().map(of_cond).unwrap_or_default(),
            affects_aggs: of_cond(affects),
            ops_aggs: {
                let mut a = Vec::new();
                for op in &ops {
                    if let Change::SetNumber(e) | Change::Modify(e) = &op.change {
                        e.aggregates(&mut a);
                    }
                }
                keys(a)
            },
            while_refers: def
                .while_cond
                .as_ref()
                .is_some_and(|w| w.refers_to_others()),
            affects_refers: affects.refers_to_others(),
            affects_names_source: affects.names_source(),
            ops_refer: ops.iter().any(|op| {
                matches!(&op.change, Change::SetNumber(e) | Change::Modify(e) if e.refers_to_others())
            }),
            text_like: ops.iter().any(|op| {
                op.change.reads_others()
                    && !matches!(op.change, Change::SetNumber(_) | Change::Modify(_))
            }),
            ops_read_others: ops.iter().any(|op| op_reads_others(op)),
            tested_reads,
        }
    }
}

/// A step's `Shape` in layer `lid`, worked out once and kept with the step (its copies share it).
pub(super) fn shape_of<'s>(
    step: &'s Applied,
    state: &GameState,
    def: &EffectDef,
    lid: LayerId,
    fresh: bool,
) -> &'s Shape {
    step.known
        .shape
        .get_or_init(|| Shape::of(&step.cand, state, def, lid, fresh))
}

/// Whether an effect starts in this layer (its first part is here).
pub(super) fn is_fresh(c: &Candidate, lid: LayerId, rs: &crate::model::ruleset::Ruleset) -> bool {
    match &c.body {
        Body::Effect(def) => def.first_layer() == Some(lid),
        Body::Counter { kind, .. } => rs.counters[kind.index()].first_layer(rs) == Some(lid),
        Body::FaceDown => true,
    }
}

pub(super) fn reads_counters(c: &Candidate) -> bool {
    matches!(&c.body, Body::Effect(d) if d.reads_counters())
}

/// Whether an effect's parts in a layer do the same to every subject whatever the state: counters,
/// face-down values, written amounts.
pub(super) fn same_for_all(cand: &Candidate, lid: LayerId) -> bool {
    match &cand.body {
        Body::Counter { .. } | Body::FaceDown => true,
        Body::Effect(_) => ops_of(cand, lid).all(|op| uniform_op(op) || reads_nothing(&op.change)),
    }
}

/// Changes whose new value depends on nothing but the value they change.
fn reads_nothing(c: &Change) -> bool {
    match c {
        Change::SwitchWith(_) | Change::SetText(_) | Change::SetValues(_) | Change::CopyOf(_) => {
            true
        }
        Change::SetAbilities(l) | Change::MergeAbilities(l) => {
            !l.iter().any(|a| matches!(a, Ability::Static { .. }))
        }
        _ => false,
    }
}

/// Whether an operation's amounts read more than the subject (aggregates, other objects): then
/// the step keeps them, and a replay takes them from there.
pub(super) fn op_reads_others(op: &Op) -> bool {
    op.facts().reads_others
}

/// Whether an effect reads counters.
pub(super) fn reads_counters_in(c: &Candidate) -> bool {
    reads_counters(c)
}

/// Whether an expression reads the subject's own values (outside aggregates).
pub(super) fn reads_own(e: &NumExpr) -> bool {
    match e {
        NumExpr::Char(r, _)
        | NumExpr::SetSize(r, _)
        | NumExpr::Counters(r, _)
        | NumExpr::AllCounters(r) => *r == crate::model::condition::ObjRef::This,
        // Fixed when a spell resolved: one number per subject.
        NumExpr::Prop(..) | NumExpr::Fixed(_) => true,
        NumExpr::Count(_) | NumExpr::Sum(..) | NumExpr::Distinct(..) => false,
        NumExpr::Add(a, b)
        | NumExpr::Sub(a, b)
        | NumExpr::Mul(a, b)
        | NumExpr::Div(a, b)
        | NumExpr::Max(a, b)
        | NumExpr::Min(a, b) => reads_own(a) || reads_own(b),
        NumExpr::Neg(a) => reads_own(a),
        NumExpr::Const(_) | NumExpr::Nothing | NumExpr::Param(_) | NumExpr::Chosen => false,
        NumExpr::SourceSymbol { .. } => false,
    }
}

/// The characteristics an expression reads of the subject itself, outside aggregates.
pub(super) fn own_reads(e: &NumExpr, out: &mut Vec<CharId>) {
    match e {
        NumExpr::Char(crate::model::condition::ObjRef::This, c)
        | NumExpr::SetSize(crate::model::condition::ObjRef::This, c)
            if !out.contains(c) =>
        {
            out.push(*c);
        }
        NumExpr::Add(a, b)
        | NumExpr::Sub(a, b)
        | NumExpr::Mul(a, b)
        | NumExpr::Div(a, b)
        | NumExpr::Max(a, b)
        | NumExpr::Min(a, b) => {
            own_reads(a, out);
            own_reads(b, out);
        }
        NumExpr::Neg(a) => own_reads(a, out),
        _ => {}
    }
}

/// How much an expression's value moves when its aggregates move by `deltas` and nothing else
/// moves; `None` where that is not a sum (a `max`, a product of two moving parts).
fn moves_by(e: &NumExpr, deltas: &FxHashMap<usize, i64>) -> Option<i64> {
    let key = e as *const NumExpr as usize;
    match e {
        NumExpr::Count(_) | NumExpr::Sum(..) | NumExpr::Distinct(..) => {
            let d = deltas.get(&key).copied().unwrap_or(0);
            (d == 0 || !matches!(e, NumExpr::Distinct(..))).then_some(d)
        }
        NumExpr::Add(a, b) => moves_by(a, deltas)?.checked_add(moves_by(b, deltas)?),
        NumExpr::Sub(a, b) => moves_by(a, deltas)?.checked_sub(moves_by(b, deltas)?),
        NumExpr::Neg(a) => moves_by(a, deltas)?.checked_neg(),
        NumExpr::Mul(a, b) => match (moves_by(a, deltas)?, moves_by(b, deltas)?) {
            (0, 0) => Some(0),
            (da, 0) => {
                let NumExpr::Const(k) = **b else { return None };
                da.checked_mul(k)
            }
            (0, db) => {
                let NumExpr::Const(k) = **a else { return None };
                db.checked_mul(k)
            }
            _ => None,
        },
        NumExpr::Max(a, b) | NumExpr::Min(a, b) | NumExpr::Div(a, b) => {
            (moves_by(a, deltas)? == 0 && moves_by(b, deltas)? == 0).then_some(0)
        }
        _ => Some(0),
    }
}

/// An effect's kept parameters (`op_params` order) moved as its aggregates moved.
pub(super) fn shift_params(
    ops: &[&Op],
    kept: &[Value],
    deltas: &FxHashMap<usize, i64>,
) -> Option<Vec<Value>> {
    let mut out = Vec::with_capacity(kept.len());
    let mut it = kept.iter();
    for op in ops {
        if let Change::SetNumber(e) | Change::Modify(e) = &op.change {
            let v = it.next()?;
            let d = moves_by(e, deltas)?;
            out.push(match v.number() {
                Some(n) if d != 0 => Value::Number(Some(n.checked_add(d)?)),
                _ if d != 0 => return None,
                _ => v.clone(),
            });
        }
    }
    Some(out)
}

/// The effect's operations in a layer.
pub(super) fn ops_in(cand: &Candidate, lid: LayerId) -> Vec<&Op> {
    ops_of(cand, lid).collect()
}

/// `ops_in`, without collecting them.
pub(super) fn ops_of(cand: &Candidate, lid: LayerId) -> impl Iterator<Item = &Op> {
    let ops: &[Op] = match &cand.body {
        Body::Effect(def) => &def.ops,
        _ => &[],
    };
    ops.iter().filter(move |o| o.layer == lid)
}

/// A step's kept parameters for some of its subjects, where its amounts read more than the
/// subject; `None` where they are worked out from the subject as it is applied.
pub(super) fn params_for(
    step: StepRef,
    mine: &[Subject],
    lid: LayerId,
) -> Res<Option<Vec<Vec<Value>>>> {
    if !ops_of(step.cand, lid).any(op_reads_others) {
        return Ok(None);
    }
    // Kept parameters are used only where every part's are numbers (`apply_keeping`): the others
    // (another object's text, abilities gathered from other objects) would be read again from
    // the sheet, where an object the replay does not follow holds its final values, not those of
    // this layer.
    if ops_of(step.cand, lid).any(|op| {
        matches!(
            op.change,
            Change::TextOf(_)
                | Change::AbilitiesPer { .. }
                | Change::AbilitiesOf { .. }
                | Change::WithIntrinsic { .. }
                | Change::SetPlayer(_)
        )
    }) {
        return Err(fail!());
    }
    let p = step.params.ok_or(fail!())?;
    mine.iter()
        .map(|s| {
            let i = step.subjects.binary_search(s).map_err(|_| fail!())?;
            p.get(i).cloned().ok_or(fail!())
        })
        .collect::<Res<Vec<_>>>()
        .map(Some)
}

/// What applying a step needs: its effect, subjects, kept parameters and "you".
#[derive(Clone, Copy)]
pub(super) struct StepRef<'a> {
    pub(super) cand: &'a Candidate,
    pub(super) subjects: &'a [Subject],
    pub(super) params: Option<&'a [Vec<Value>]>,
    pub(super) you: Option<PlayerId>,
}

impl Applied {
    pub(super) fn as_step(&self) -> StepRef<'_> {
        StepRef {
            cand: &self.cand,
            subjects: &self.subjects,
            params: self.params.as_deref().map(Vec::as_slice),
            you: self.you,
        }
    }
}

/// A previous step as the replay has it so far: what moved is held here, the rest is the step's,
/// so a step that stays the same is not copied.
pub(super) struct Now<'s> {
    pub(super) step: &'s Applied,
    pub(super) subjects: Option<Subjects>,
    pub(super) params: Option<Option<Arc<Vec<Vec<Value>>>>>,
    pub(super) aggs: Option<AggregateValues>,
    pub(super) partners: Option<Arc<[PartnerThen]>>,
}

impl<'s> Now<'s> {
    pub(super) fn new(step: &'s Applied) -> Self {
        Now {
            step,
            subjects: None,
            params: None,
            aggs: None,
            partners: None,
        }
    }

    pub(super) fn subjects(&self) -> &Subjects {
        self.subjects.as_ref().unwrap_or(&self.step.subjects)
    }

    pub(super) fn as_step(&self) -> StepRef<'_> {
        StepRef {
            cand: &self.step.cand,
            subjects: self.subjects(),
            params: match &self.params {
                Some(p) => p.as_deref().map(Vec::as_slice),
                None => self.step.params.as_deref().map(Vec::as_slice),
            },
            you: self.step.you,
        }
    }

    /// The step as replayed: the previous one where nothing moved.
    pub(super) fn finish(self, prev: &Arc<Applied>) -> Arc<Applied> {
        let step = self.step;
        let same = self
            .subjects
            .as_ref()
            .is_none_or(|s| Arc::ptr_eq(s, &step.subjects))
            && self
                .params
                .as_ref()
                .is_none_or(|p| match (p, &step.params) {
                    (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                    (None, None) => true,
                    _ => false,
                })
            && self
                .aggs
                .as_ref()
                .is_none_or(|a| Some(a) == step.aggs.as_ref())
            && self.partners.is_none();
        if same {
            return prev.clone();
        }
        let mut out = Applied::clone(step);
        if let Some(s) = self.subjects {
            out.subjects = s;
        }
        if let Some(p) = self.params {
            out.params = p;
        }
        if let Some(a) = self.aggs {
            out.aggs = Some(a);
        }
        if let Some(p) = self.partners {
            out.partners = Some(p);
        }
        Arc::new(out)
    }
}
