//! The dependency order in a replay (CR 613.8): a layer's new order of steps, and the order trials
//! by which a kept step shows it still waits for no later effect of its group (`check_order`).

use super::candidate::you_of;
use super::change::apply_keeping;
use super::dirty::members;
use super::footprint::may_read;
use super::replay::{fail, Fail, LaterShape, Replay, Res};
use super::start::{condition_aggregates, start_with, static_exists_with};
use super::step::{
    is_fresh, op_reads_others, ops_in, ops_of, own_reads, reads_counters_in, reads_own, shape_of,
    shift_params, Now, StepRef,
};
use crate::condition::eval::{Ctx, Overrides};
use crate::model::condition::{Aggregate, Cond, Footprint, Subject};
use crate::model::effect::{Affects, Change, EffectDef, Locked};
use crate::model::ids::{CharId, LayerId, ObjectId, PlayerId, SlotTarget};
use crate::model::trail::Touch;
use crate::model::trail::{Applied, LayerTrail, PartnerThen};
use crate::model::trail::{Body, Candidate, Subjects};
use crate::model::value::Value;
use crate::state::GameState;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// One entry of a layer's new order of steps.
pub(super) enum Entry {
    /// The previous derivation's step, kept.
    Kept(usize),
    /// The previous derivation's step whose effect no longer applies.
    Gone(usize),
    /// An effect that applies now and did not before.
    New(Candidate),
}

/// The effects after position `k` in its group.
pub(super) fn later_in_group<'s>(
    seq: &'s [Entry],
    groups: &'s [(bool, usize)],
    k: usize,
    old_lt: &'s LayerTrail,
) -> Vec<Later<'s>> {
    LaterOf {
        seq,
        groups,
        k,
        old_lt,
    }
    .iter()
    .collect()
}

/// The effects after position `k` in its group, gone through where needed (`later_in_group`).
#[derive(Clone, Copy)]
pub(super) struct LaterOf<'s> {
    pub(super) seq: &'s [Entry],
    pub(super) groups: &'s [(bool, usize)],
    pub(super) k: usize,
    pub(super) old_lt: &'s LayerTrail,
}

impl<'s> LaterOf<'s> {
    fn iter(self) -> impl Iterator<Item = Later<'s>> {
        let LaterOf {
            seq,
            groups,
            k,
            old_lt,
        } = self;
        seq[k + 1..]
            .iter()
            .zip(&groups[k + 1..])
            .filter(move |(_, g)| **g == groups[k])
            .filter_map(move |(e, _)| match e {
                Entry::Kept(j) => Some(Later {
                    cand: &old_lt.steps[*j].cand,
                    subjects: Some(&old_lt.steps[*j].subjects),
                    step: Some(&old_lt.steps[*j]),
                }),
                Entry::New(c) => Some(Later {
                    cand: c,
                    subjects: None,
                    step: None,
                }),
                Entry::Gone(_) => None,
            })
    }

    pub(super) fn is_empty(self) -> bool {
        self.iter().next().is_none()
    }
}

/// An order trial decided in `check_order`: a later effect, the objects it is tried on, its
/// parameters for them where kept, and what stands for it (`passed`).
struct Trial<'y> {
    pub(super) y: &'y Later<'y>,
    pub(super) ys: Vec<Subject>,
    pub(super) known: Option<Vec<Vec<Value>>>,
    pub(super) memo: Option<TrialMemo>,
    pub(super) source_tried: bool,
}

/// A later effect's trial that stands for those of effects alike: its ability, "you" and objects.
type TrialMemo = (usize, Option<PlayerId>, Vec<Subject>);

/// The trials of one step: queued ones, the objects they will make dirty and what stands for
/// them; the ones that passed.
struct Trials<'y> {
    pub(super) queued: Vec<Trial<'y>>,
    pub(super) objects: Vec<ObjectId>,
    pub(super) memos: FxHashSet<TrialMemo>,
    /// Trials that changed nothing, by what decides them (see `same_whatever_source`).
    pub(super) passed: FxHashSet<TrialMemo>,
}

/// The step the trials are for: where it is, whether it starts here, and what `view` reads of it.
struct TrialAt<'a> {
    pub(super) old_lt: &'a LayerTrail,
    pub(super) i: usize,
    pub(super) lid: LayerId,
    pub(super) fresh: bool,
    pub(super) def: &'a EffectDef,
    pub(super) spec: &'a ViewSpec<'a>,
    pub(super) overrides: &'a Overrides,
    pub(super) x_alike: Option<(usize, Option<PlayerId>)>,
}

/// What `view` reads of an effect in a layer, worked out once for all its trials: the aggregates
/// of its conditions (where it starts here) and amounts, and the values its amounts read of
/// each subject.
struct ViewSpec<'d> {
    pub(super) aggs: Vec<Aggregate<'d>>,
    pub(super) own: Vec<CharId>,
}

impl<'d> ViewSpec<'d> {
    pub(super) fn of(def: &'d EffectDef, created: bool, lid: LayerId, fresh: bool) -> Self {
        let mut aggs = if fresh {
            condition_aggregates(def, !created)
        } else {
            Vec::new()
        };
        let mut own = Vec::new();
        for op in def.ops.iter().filter(|o| o.layer == lid) {
            if let Change::SetNumber(e) | Change::Modify(e) = &op.change {
                if op.facts().has_aggregates {
                    e.aggregates(&mut aggs);
                }
                own_reads(e, &mut own);
            }
        }
        ViewSpec { aggs, own }
    }
}

/// Whether an effect does the same in a layer whichever object its source is, given its "you"
/// and whom it applies to: many permanents with one ability ("creatures you control get +1/+1")
/// then change the same objects alike, and one trial stands for them all.
pub(super) fn same_whatever_source(def: &EffectDef, lid: LayerId) -> bool {
    fn alike(c: &Change) -> bool {
        use crate::model::condition::PlayerRef;
        match c {
            Change::SetNumber(e) | Change::Modify(e) => !e.names_source(),
            Change::SwitchWith(_)
            | Change::SetAbilities(_)
            | Change::AddAbilities(_)
            | Change::RemoveAbilities(_) => true,
            Change::SetSymbols(l)
            | Change::AddSymbols(l)
            | Change::RemoveSymbols(l)
            | Change::SetInCategories { set: l, .. } => !l.chosen,
            Change::SetPlayer(p) => !matches!(p, PlayerRef::Target(_)),
            Change::WithIntrinsic { change, .. } => alike(change),
            _ => false,
        }
    }
    def.ops
        .iter()
        .filter(|o| o.layer == lid)
        .all(|op| alike(&op.change))
}

/// An effect that comes later in a group, with its previous subjects where it had a step.
pub(super) struct Later<'s> {
    pub(super) cand: &'s Candidate,
    pub(super) subjects: Option<&'s Subjects>,
    /// Its step, where it had one (for what it touches, worked out once).
    pub(super) step: Option<&'s Applied>,
}

impl Later<'_> {
    fn touches(
        &self,
        state: &GameState,
        lid: LayerId,
    ) -> std::borrow::Cow<'_, [(SlotTarget, Touch)]> {
        match self.step {
            Some(s) => std::borrow::Cow::Borrowed(
                s.known.touches.get_or_init(|| s.cand.touches(state, lid)),
            ),
            None => std::borrow::Cow::Owned(self.cand.touches(state, lid)),
        }
    }
}

/// Later effects alike, for the order trials: their ability, "you", existence and whether
/// counters count (`Replay::alike_key`).
type AlikeKey = (usize, Option<PlayerId>, bool, bool);

/// The objects moved at a step, as a later effect sees them: every one where it or the step reads
/// counters, else those not moved by their counters only.
struct MovedAt {
    counting: Vec<ObjectId>,
    plain: Vec<ObjectId>,
}

impl MovedAt {
    fn seen_by(&self, counters: bool) -> &[ObjectId] {
        if counters {
            &self.counting
        } else {
            &self.plain
        }
    }
}

/// What the order check of one step keeps from one later effect to the next.
struct OrderCheck<'y> {
    /// What the step reads.
    reads: &'y Footprint,
    reads_counters: bool,
    /// The step reads other objects directly (`reads_directly`).
    reads_directly: bool,
    /// Whom later effects alike pick (`Replay::trial_subjects`).
    picked: FxHashMap<AlikeKey, Vec<Subject>>,
    /// Effects alike whose trial stands for the others'.
    seen: FxHashSet<AlikeKey>,
    /// What the later effects whose amounts read other objects do at this step (`Applied::partners`),
    /// and whether that moved.
    partners: Vec<PartnerThen>,
    partners_changed: bool,
    /// The aggregates of a later effect's amounts, filled again for each.
    aggs: Vec<Aggregate<'y>>,
}

/// What an effect reads of other objects directly in a layer (its source's values, the object its
/// source is attached to, the top of a zone), beyond what `view` sees: a trial that changes such an
/// object is beyond a replay.
fn reads_directly(def: &EffectDef, lid: LayerId) -> bool {
    (match &def.affects {
        Affects::Objects(c) | Affects::Players(c) => c.refers_to_others(),
    }) || def.while_cond.as_ref().is_some_and(Cond::refers_to_others)
        || def.ops.iter().any(|op| {
            op.layer == lid
                && matches!(&op.change, Change::SetNumber(e) | Change::Modify(e) if e.refers_to_others())
        })
}

/// Whether a step's trials stand for those of every effect alike: one that does the same
/// whichever object its source is, sees the tried objects alike, and reads no aggregate of its
/// own conditions. Gives its ability and "you".
fn stands_for_alike(
    step: &Applied,
    def: &Arc<EffectDef>,
    lid: LayerId,
    overrides: &Overrides,
    spec: &ViewSpec,
) -> Option<(usize, Option<PlayerId>)> {
    (step.cand.created.is_none()
        && overrides.is_empty()
        && same_whatever_source(def, lid)
        && !match &def.affects {
            Affects::Objects(c) | Affects::Players(c) => c.names_source(),
        }
        && !spec.aggs.iter().any(|a| a.condition().names_source()))
    .then_some((Arc::as_ptr(def) as usize, step.you))
}

impl Replay<'_> {
    /// CR 613.8: the step was applied before each later effect of its group; it must still wait
    /// for none that writes what it reads. Tried on the objects whose treatment can differ from
    /// before: the moved ones, every subject of a new effect, and every subject of one whose amounts
    /// moved. Keeps, in `out`, what those later effects would do at this point. `pre`: objects to
    /// make dirty here with the trials' ones (the caller makes them dirty where no trial did).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn check_order(
        &mut self,
        old_lt: &LayerTrail,
        i: usize,
        out: &mut Now,
        lid: LayerId,
        fresh: bool,
        later: LaterOf,
        overrides: &Overrides,
        pre: &[Subject],
    ) -> Res<()> {
        let step = &old_lt.steps[i];
        let state = self.state;
        let reads = step
            .known
            .reads
            .get_or_init(|| step.cand.reads(state, state.controller_char));
        if reads.is_empty() {
            return Ok(());
        }
        let Body::Effect(def) = &step.cand.body else {
            return Ok(());
        };
        let moved_all: Vec<(ObjectId, bool)> = self
            .dirty
            .iter()
            .filter(|(x, _)| self.moved(**x, true))
            .map(|(x, d)| (*x, d.diff.counters && !self.moved(*x, false)))
            .collect();
        let later = self.later_to_try(step, def, lid, fresh, later, &moved_all);
        if later.is_empty() {
            return Ok(());
        }
        let spec = ViewSpec::of(def, step.cand.created.is_some(), lid, fresh);
        let mut cx = OrderCheck {
            reads,
            reads_counters: def.reads_counters(),
            reads_directly: reads_directly(def, lid),
            picked: FxHashMap::default(),
            seen: FxHashSet::default(),
            partners: step
                .partners
                .as_deref()
                .map(<[_]>::to_vec)
                .unwrap_or_default(),
            partners_changed: false,
            aggs: Vec::new(),
        };
        let moved = MovedAt {
            counting: moved_all.iter().map(|(x, _)| *x).collect(),
            plain: moved_all
                .iter()
                .filter(|(_, by_counters_only)| !by_counters_only)
                .map(|(x, _)| *x)
                .collect(),
        };
        // Trials decided but not yet made: the objects they try are made dirty together, in one
        // pass over the layer's earlier steps.
        let mut queue = Trials {
            queued: Vec::new(),
            objects: pre
                .iter()
                .filter_map(|s| match s {
                    Subject::Object(o) if !self.dirty.contains_key(o) => Some(*o),
                    _ => None,
                })
                .collect(),
            memos: FxHashSet::default(),
            passed: FxHashSet::default(),
        };
        let at = TrialAt {
            old_lt,
            i,
            lid,
            fresh,
            def,
            spec: &spec,
            overrides,
            x_alike: stands_for_alike(step, def, lid, overrides, &spec),
        };
        for y in &later {
            self.decide_trial(y, &mut cx, &moved, &mut queue, &at, out)?;
        }
        self.run_trials(&mut queue, &at, out)?;
        if cx.partners_changed {
            out.partners = Some(cx.partners.into());
        }
        Ok(())
    }

    /// CR 613.8a: the later effects of the step's group that need a trial. A later kept effect
    /// that changes nothing the step reads of the objects a trial tries (moved ones) cannot change
    /// whom the step applies to or what it does. Not so where the step's static ability's source
    /// moved ("you" and whether it still has the ability are read of it), nor for one whose
    /// amounts read other objects (what it would do here is kept in `partners`).
    fn later_to_try<'s>(
        &self,
        step: &Applied,
        def: &EffectDef,
        lid: LayerId,
        fresh: bool,
        later: LaterOf<'s>,
        moved_all: &[(ObjectId, bool)],
    ) -> Vec<Later<'s>> {
        let state = self.state;
        let tested = &shape_of(step, state, def, lid, fresh).tested_reads;
        let source_moved = step.cand.created.is_none()
            && step
                .cand
                .source
                .is_some_and(|o| moved_all.iter().any(|(x, _)| *x == o));
        later
            .iter()
            .filter(|y| {
                source_moved
                    || y.step.is_none()
                    || ops_of(y.cand, lid).any(op_reads_others)
                    || may_read(tested, &y.touches(state, lid))
            })
            .collect()
    }

    /// Decides the trial of one later effect `y`: none where it writes nothing the step reads,
    /// applies to none of the objects tried, or a trial alike stands for it; an error where the
    /// trial cannot show the order; else queued for `run_trials`.
    fn decide_trial<'y>(
        &mut self,
        y: &'y Later<'y>,
        cx: &mut OrderCheck<'y>,
        moved: &MovedAt,
        queue: &mut Trials<'y>,
        at: &TrialAt,
        out: &Now,
    ) -> Res<()> {
        let state = self.state;
        let lid = at.lid;
        let step = &at.old_lt.steps[at.i];
        let touches = y.touches(state, lid);
        if !may_read(cx.reads, &touches) {
            return Ok(());
        }
        // Working out whom `y` applies to reads its source's values (its "you", whether it
        // still has the ability), and the board where it starts here or has an "as long as":
        // the queued trials' objects must be dirty by then.
        let reads_board = y.subjects.is_none()
            || matches!(&y.cand.body, Body::Effect(d) if d.while_cond.is_some())
            || y.cand.source.is_some_and(|o| queue.objects.contains(&o));
        if reads_board {
            self.run_trials(queue, at, out)?;
        }
        let counters = cx.reads_counters || reads_counters_in(y.cand);
        let moved = moved.seen_by(counters);
        let shape = self.later_shape(y, lid);
        let alike = self.alike_key(y, shape, counters);
        // Effects alike that read no other object do the same to the same objects: the
        // first one's trial stands for them all.
        if let (Some(k), Some(sh)) = (alike, shape) {
            if sh.same_whatever_source && !sh.reads_others && !cx.seen.insert(k) {
                return Ok(());
            }
        }
        let mut ys = self.trial_subjects(y, lid, moved, alike, &mut cx.picked)?;
        // What `y` does, where its amounts read other objects.
        let mut known: Option<Vec<Vec<Value>>> = None;
        if ops_of(y.cand, lid).any(op_reads_others) {
            match self.later_params(y, lid, moved, &mut ys, cx)? {
                Some(list) => known = Some(list),
                None => return Ok(()),
            }
        }
        if ys.is_empty() {
            return Ok(());
        }
        // What an object adds to an aggregate that differs by subject (`outer`) depends on
        // the subject: beyond what a trial on the moved objects shows.
        if at.spec.aggs.iter().any(|a| !a.is_closed()) {
            return Err(fail!());
        }
        let source_tried = step
            .cand
            .source
            .is_some_and(|o| ys.contains(&Subject::Object(o)));
        if cx.reads_directly || (source_tried && step.cand.created.is_none()) {
            return Err(fail!());
        }
        let memo = self.trial_memo(y, shape, alike, &known, &ys);
        // The same trial queued or passed already: it stands for this one.
        if memo
            .as_ref()
            .is_some_and(|k| queue.passed.contains(k) || queue.memos.contains(k))
        {
            return Ok(());
        }
        // A queued trial reads its later effect's source ("you"): where this one makes that
        // source dirty, the queued ones are made first.
        let makes_source_dirty = queue.queued.iter().any(|t| {
            t.y.cand
                .source
                .is_some_and(|o| !self.dirty.contains_key(&o) && ys.contains(&Subject::Object(o)))
        });
        if makes_source_dirty {
            self.run_trials(queue, at, out)?;
        }
        for s in &ys {
            match s {
                Subject::Object(o) => {
                    if !self.dirty.contains_key(o) && !queue.objects.contains(o) {
                        queue.objects.push(*o);
                    }
                }
                // Players cannot be followed.
                Subject::Player(_) => return Err(fail!()),
            }
        }
        queue.memos.extend(memo.clone());
        queue.queued.push(Trial {
            y,
            ys,
            known,
            memo,
            source_tried,
        });
        Ok(())
    }

    /// What the order trials need to know of a later static effect, worked out once per effect
    /// definition and layer.
    fn later_shape(&mut self, y: &Later, lid: LayerId) -> Option<LaterShape> {
        let (Body::Effect(ydef), None) = (&y.cand.body, &y.cand.created) else {
            return None;
        };
        Some(
            *self
                .later_shapes
                .entry((Arc::as_ptr(ydef) as usize, lid.0))
                .or_insert_with(|| LaterShape {
                    picks_alike: ydef.while_cond.is_none()
                        && ydef.first_layer() == Some(lid)
                        && !match &ydef.affects {
                            Affects::Objects(c) | Affects::Players(c) => c.names_source(),
                        },
                    same_whatever_source: same_whatever_source(ydef, lid),
                    reads_others: ydef
                        .ops
                        .iter()
                        .any(|op| op.layer == lid && op_reads_others(op)),
                }),
        )
    }

    /// Which effects alike a later effect is one of, where they pick the same objects: a static
    /// ability on many permanents that started before this step, tests objects here without
    /// naming its source, and whose source did not change.
    fn alike_key(&self, y: &Later, shape: Option<LaterShape>, counters: bool) -> Option<AlikeKey> {
        match (&y.cand.body, shape, y.step) {
            (Body::Effect(ydef), Some(sh), Some(st))
                if y.subjects.is_some()
                    && sh.picks_alike
                    && y.cand.source.is_some_and(|s| !self.dirty.contains_key(&s)) =>
            {
                Some((Arc::as_ptr(ydef) as usize, st.you, st.exists, counters))
            }
            _ => None,
        }
    }

    /// Whom a later effect applies to at this point: where it starts here, all it applies to;
    /// else among the moved objects. Effects alike (`alike_key`) exist as they did and pick the
    /// same for the same "you": the first one's pick serves the others (`picked`).
    fn trial_subjects(
        &self,
        y: &Later,
        lid: LayerId,
        moved: &[ObjectId],
        alike: Option<AlikeKey>,
        picked: &mut FxHashMap<AlikeKey, Vec<Subject>>,
    ) -> Res<Vec<Subject>> {
        if y.subjects.is_none() {
            return Ok(match self.started.get(&y.cand.key) {
                Some(Some(s)) => s.to_vec(),
                Some(None) => Vec::new(),
                None => start_with(self.state, &self.sheet, y.cand, None, None).unwrap_or_default(),
            });
        }
        if let Some(l) = alike.and_then(|k| picked.get(&k)) {
            return Ok(l.clone());
        }
        let l = self.members_now(y, lid, moved)?;
        if let Some(k) = alike {
            picked.insert(k, l.clone());
        }
        Ok(l)
    }

    /// What a later effect whose amounts read other objects does to `ys` at this point: its
    /// parameters as kept at the step (`partners`), moved with the aggregates they read; `ys`
    /// takes in the subjects whose parameters moved, and the kept ones are updated. `None` where
    /// it needs no trial.
    fn later_params<'y>(
        &mut self,
        y: &'y Later<'y>,
        lid: LayerId,
        moved: &[ObjectId],
        ys: &mut Vec<Subject>,
        cx: &mut OrderCheck<'y>,
    ) -> Res<Option<Vec<Vec<Value>>>> {
        let state = self.state;
        if !matches!(&y.cand.body, Body::Effect(_)) {
            return Err(fail!());
        }
        let ops = ops_in(y.cand, lid);
        if ops.iter().any(|op| {
            !matches!(op.change, Change::SetNumber(_) | Change::Modify(_)) && op_reads_others(op)
        }) {
            if moved.is_empty() && ys.is_empty() {
                return Ok(None);
            }
            return Err(fail!());
        }
        let you = match &y.cand.created {
            Some(c) => Some(c.you),
            None => you_of(state, &self.sheet, y.cand, None),
        };
        let mut deltas: FxHashMap<usize, i64> = FxHashMap::default();
        for op in &ops {
            if let Change::SetNumber(e) | Change::Modify(e) = &op.change {
                let facts = op.facts();
                if facts.refers_to_others && !moved.is_empty() {
                    return Err(fail!());
                }
                if !facts.has_aggregates {
                    continue;
                }
                cx.aggs.clear();
                e.aggregates(&mut cx.aggs);
                for &a in &cx.aggs {
                    let d = self.delta(y.cand, you, a, moved)?;
                    deltas.insert(a.key(), d);
                }
            }
        }
        let shifted = deltas.values().any(|d| *d != 0);
        let Some(pos) = cx.partners.iter().position(|(k, _)| *k == y.cand.key) else {
            if !shifted && ys.is_empty() {
                return Ok(None);
            }
            return Err(fail!());
        };
        let (then_subjects, then_params) = &*cx.partners[pos].1;
        if shifted {
            for s in then_subjects {
                if !ys.contains(s) {
                    ys.push(*s);
                }
            }
            ys.sort();
        }
        if ys.is_empty() {
            return Ok(None);
        }
        // The parameters for each: kept and moved, or (for a moved object, where the
        // amounts read no subject's own values) any subject's kept and moved.
        let mut list = Vec::with_capacity(ys.len());
        for s in ys.iter() {
            let own_moved = matches!(s, Subject::Object(o) if moved.binary_search(o).is_ok());
            let base = match then_subjects.binary_search(s) {
                Ok(k) if !own_moved => then_params.get(k),
                _ => {
                    let closed = ops.iter().all(|op| match &op.change {
                        Change::SetNumber(e) | Change::Modify(e) => !reads_own(e),
                        _ => true,
                    });
                    if !closed {
                        return Err(fail!());
                    }
                    then_params.first()
                }
            };
            let base = base.ok_or(fail!())?;
            list.push(shift_params(&ops, base, &deltas).ok_or(fail!())?);
        }
        // Keep what `y` would now do here, for a later replay.
        let mut subs = then_subjects.clone();
        let mut params = then_params.clone();
        for (s, p) in ys.iter().zip(&list) {
            match subs.binary_search(s) {
                Ok(k) => params[k] = p.clone(),
                Err(k) => {
                    subs.insert(k, *s);
                    params.insert(k, p.clone());
                }
            }
        }
        if shifted || subs.len() != then_subjects.len() {
            cx.partners[pos].1 = Arc::new((subs, params));
            cx.partners_changed = true;
        }
        Ok(Some(list))
    }

    /// What decides a later effect's trial where one that does the same whichever object its
    /// source is stands for those alike: its ability, "you" and the objects tried.
    fn trial_memo(
        &self,
        y: &Later,
        shape: Option<LaterShape>,
        alike: Option<AlikeKey>,
        known: &Option<Vec<Vec<Value>>>,
        ys: &[Subject],
    ) -> Option<TrialMemo> {
        match (&y.cand.body, &y.cand.created, known) {
            (Body::Effect(ydef), None, None) if shape.is_some_and(|sh| sh.same_whatever_source) => {
                let you = match alike {
                    Some((_, you, _, _)) => you,
                    None => you_of(self.state, &self.sheet, y.cand, None),
                };
                Some((Arc::as_ptr(ydef) as usize, you, ys.to_vec()))
            }
            _ => None,
        }
    }

    /// Makes the queued trials: their objects dirty (in one pass), then each later effect applied
    /// to its objects, which must change nothing this step sees of them.
    fn run_trials(&mut self, queue: &mut Trials, at: &TrialAt, out: &Now) -> Res<()> {
        if queue.queued.is_empty() && queue.objects.is_empty() {
            return Ok(());
        }
        let all: Vec<Subject> = queue.objects.iter().map(|o| Subject::Object(*o)).collect();
        self.make_dirty(&all, at.lid.index(), at.old_lt, at.i)?;
        queue.objects.clear();
        queue.memos.clear();
        for t in std::mem::take(&mut queue.queued) {
            let ys = &t.ys;
            let saved: Vec<(ObjectId, Vec<Value>)> = ys
                .iter()
                .filter_map(|s| match s {
                    Subject::Object(o) => Some((*o, self.sheet.objects[o.index()].to_vec())),
                    Subject::Player(_) => None,
                })
                .collect();
            let cross = match (&t.memo, at.x_alike) {
                (Some((yp, yyou, _)), Some((xp, xyou))) if !t.source_tried => {
                    let within = ys
                        .iter()
                        .map(|s| out.subjects().binary_search(s).is_ok())
                        .collect();
                    let key = (xp, xyou, at.fresh, *yp, *yyou, ys.clone(), within);
                    let rows: Vec<Vec<Value>> = saved.iter().map(|(_, r)| r.clone()).collect();
                    if self.trials.get(&key) == Some(&rows) {
                        queue.passed.extend(t.memo);
                        continue;
                    }
                    Some((key, rows))
                }
                _ => None,
            };
            let view =
                |r: &Self| r.view(out.as_step(), at.def, at.spec, at.fresh, ys, at.overrides);
            let before = view(self);
            apply_keeping(
                self.state,
                &mut self.sheet,
                t.y.cand,
                at.lid,
                ys,
                t.known.as_deref(),
                None,
                &mut |_, _, _, _| {},
                None,
            );
            let after = view(self);
            for (o, row) in saved {
                self.sheet.objects[o.index()].clone_from_slice(&row);
            }
            if before != after {
                return Err(fail!());
            }
            queue.passed.extend(t.memo);
            if let Some((key, rows)) = cross {
                self.trials.insert(key, rows);
            }
        }
        Ok(())
    }

    /// The moved objects a later effect that started before this layer, or that starts here by
    /// testing each object, applies to now.
    fn members_now(&self, y: &Later, lid: LayerId, moved: &[ObjectId]) -> Res<Vec<Subject>> {
        let state = self.state;
        Ok(match (&y.cand.body, &y.cand.created) {
            (Body::Counter { .. } | Body::FaceDown, _) => match y.cand.source {
                Some(o) if moved.binary_search(&o).is_ok() => vec![Subject::Object(o)],
                _ => Vec::new(),
            },
            (Body::Effect(_), Some(c)) => match &c.locked {
                Locked::Objects(l) => l
                    .iter()
                    .filter(|(o, inc)| {
                        moved.binary_search(o).is_ok() && state.obj(*o).incarnation == *inc
                    })
                    .map(|(o, _)| Subject::Object(*o))
                    .collect(),
                Locked::Players(_) => Vec::new(),
            },
            (Body::Effect(ydef), None) => {
                if !is_fresh(y.cand, lid, &self.state.ruleset) {
                    let subs = match self.started.get(&y.cand.key) {
                        Some(Some(s)) => Some(s.clone()),
                        _ => y.subjects.cloned(),
                    };
                    members(&subs.ok_or(fail!())?, moved)
                } else {
                    let yc = match &ydef.affects {
                        Affects::Objects(c) | Affects::Players(c) => c,
                    };
                    let mut ya = Vec::new();
                    yc.aggregates(&mut ya);
                    if !ya.is_empty() || yc.refers_to_others() {
                        return Err(fail!());
                    }
                    if static_exists_with(state, &self.sheet, y.cand, None, None).is_none() {
                        Vec::new()
                    } else {
                        let you = you_of(state, &self.sheet, y.cand, None);
                        let ctx = Ctx::new(state, &self.sheet, y.cand.source, you, &[]);
                        moved
                            .iter()
                            .map(|x| Subject::Object(*x))
                            .filter(|s| ctx.test(yc, *s))
                            .collect()
                    }
                }
            }
        })
    }

    /// What an effect sees of some objects: whether they are among its subjects (where it tests
    /// them here), what they add to its aggregates, the values its amounts read of them (those
    /// among its subjects), and whether it exists where one of them is its source.
    fn view(
        &self,
        out: StepRef,
        def: &EffectDef,
        spec: &ViewSpec,
        fresh: bool,
        objs: &[Subject],
        overrides: &Overrides,
    ) -> Vec<Vec<Value>> {
        let state = self.state;
        let targets: Vec<Subject> = match &out.cand.created {
            Some(c) => c.targets.to_vec(),
            None => Vec::new(),
        };
        let ctx = Ctx::new(state, &self.sheet, out.cand.source, out.you, &targets)
            .overriding(Some(overrides));
        let affects = match &def.affects {
            Affects::Objects(c) | Affects::Players(c) => c,
        };
        let (aggs, own) = (&spec.aggs, &spec.own);
        let mut v = Vec::new();
        for s in objs {
            let Subject::Object(o) = s else { continue };
            let mut row = Vec::new();
            if fresh && out.cand.created.is_none() {
                row.push(Value::Number(Some(ctx.test(affects, *s) as i64)));
            }
            for a in aggs {
                row.push(Value::Number(ctx.contribution(*a, *o)));
            }
            if out.subjects.binary_search(s).is_ok() {
                for c in own {
                    row.push(self.sheet.objects[o.index()][c.index()].clone());
                }
            }
            if fresh && out.cand.source == Some(*o) {
                let exists =
                    static_exists_with(state, &self.sheet, out.cand, None, Some(overrides));
                row.push(Value::Number(Some(exists.is_some() as i64)));
            }
            v.push(row);
        }
        v
    }
}
