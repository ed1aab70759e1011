//! A previous step whose effect still applies (`Replay::kept`): whether it exists, whom it applies
//! to and what it does may move with the dirty objects; the aggregates it reads moved by them.

use super::change::op_params;
use super::dirty::{any_member, toggled};
use super::order::LaterOf;
use super::replay::{fail, Fail, Moves, Replay, Res};
use super::rescan::written_from;
use super::start::{condition_aggregates, start_with, static_exists_with};
use super::step::{
    is_fresh, op_reads_others, ops_in, ops_of, reads_own, shape_of, shift_params, Now, StepRef,
};
use crate::condition::eval::{Ctx, Overrides};
use crate::model::condition::{Aggregate, NumExpr, Subject};
use crate::model::effect::{Affects, Change};
use crate::model::ids::{LayerId, ObjectId, PlayerId};
use crate::model::trail::{Applied, LayerTrail};
use crate::model::trail::{Body, Candidate};
use crate::model::value::Value;
use rustc_hash::FxHashMap;
use std::sync::Arc;

impl Replay<'_> {
    /// Whether a previous step is beyond the dirty objects' reach, so that it stays as it was: it
    /// applied to none of them and is not decided anew (`decide_ahead`); it reads no aggregate;
    /// its source did not move; and what moved is nothing its existence, whom it applies to and
    /// its amounts read. (`kept` would find the same, at more cost.)
    pub(super) fn untouched(&self, step: &Arc<Applied>, lid: LayerId, moves: &Moves) -> bool {
        let state = self.state;
        let Body::Effect(def) = &step.cand.body else {
            return false;
        };
        if step.aggs.is_some()
            || self.decided.contains_key(&step.cand.key)
            || any_member(&step.subjects, &self.dirty_list)
        {
            return false;
        }
        let fresh = is_fresh(&step.cand, lid, &state.ruleset);
        if !fresh {
            // Whom it applies to was settled where it started: the same list.
            if let Some(s) = self.started.get(&step.cand.key) {
                if !s.as_ref().is_some_and(|s| Arc::ptr_eq(s, &step.subjects)) {
                    return false;
                }
            }
        }
        if moves.is_empty() {
            return true;
        }
        let shape = shape_of(step, state, def, lid, fresh);
        if shape.open_aggregates
            || shape.ops_read_others
            || shape.ops_refer
            || shape.text_like
            || !shape.ops_aggs.is_empty()
        {
            return false;
        }
        let rc = usize::from(shape.reads_counters);
        !moves.iter().any(|(x, differ, st)| {
            step.cand.source == Some(*x) || st[rc] || differ.intersects(&shape.tested_reads)
        })
    }

    /// A previous step whose effect still applies here: whether it exists, whom it applies to and
    /// what it does may move with the dirty objects, and it must not come to wait for a later one.
    pub(super) fn kept(
        &mut self,
        old_lt: &LayerTrail,
        i: usize,
        lid: LayerId,
        existed: Option<bool>,
        later: Option<LaterOf>,
    ) -> Res<Arc<Applied>> {
        let later = later.filter(|l| !l.is_empty());
        let state = self.state;
        let step = &old_lt.steps[i];
        let cand = &step.cand;
        let fresh = is_fresh(cand, lid, &self.state.ruleset);
        let Body::Effect(def) = &cand.body else {
            // Counters and face-down values: the object itself, the same change.
            let xs = self.dirty_ids();
            self.apply_new(step.as_step(), lid, &xs, &Overrides::default())?;
            self.apply_old(step, lid)?;
            return Ok(step.clone());
        };
        let shape = shape_of(step, state, def, lid, fresh);
        // Whom it applies to where it started in an earlier layer of this replay.
        let started = if fresh {
            None
        } else {
            self.started.get(&cand.key).cloned().flatten()
        };
        let subjects = started.as_ref().unwrap_or(&step.subjects);
        let reads_counters = shape.reads_counters && self.dirty.values().any(|d| d.diff.counters);
        let xs = self.dirty_ids();
        // (A list kept from step to step: most steps see the same moved objects.)
        let mut moved = std::mem::take(&mut self.moved_list);
        moved.clear();
        moved.extend(
            xs.iter()
                .copied()
                .filter(|x| self.moved(*x, reads_counters)),
        );
        // An aggregate whose value differs by subject (`outer`) is not kept: one the moved objects
        // may reach cannot be replayed.
        if !moved.is_empty() && shape.open_aggregates {
            return Err(fail!());
        }
        // Nothing to do where the effect started earlier (whom it applies to is settled), read no
        // aggregate, applies (and applied) to no dirty object, and no moved object can make it
        // wait. (The step is copied only past this point.)
        if !fresh
            && step.aggs.is_none()
            && later.is_none()
            && !any_member(subjects, &xs)
            && !any_member(&step.subjects, &xs)
            && (moved.is_empty() || !shape.ops_read_others)
        {
            self.moved_list = moved;
            return Ok(match started {
                Some(s) if !Arc::ptr_eq(&s, &step.subjects) => {
                    let mut out = Applied::clone(step);
                    out.subjects = s;
                    Arc::new(out)
                }
                _ => step.clone(),
            });
        }
        let mut out = Now::new(step);
        if let Some(s) = started {
            out.subjects = Some(s);
        }
        // The aggregates of its conditions where it starts here: the old value plus what the moved
        // objects add now, less what they added.
        let mut overrides = Overrides::default();
        let mut old_overrides = Overrides::default();
        let mut moved_aggs: Vec<usize> = Vec::new();
        if let Some(rec) = &step.aggs {
            let nodes = condition_aggregates(def, cand.created.is_none());
            if nodes.len() != rec.len() {
                return Err(fail!());
            }
            let mut values = Vec::with_capacity(rec.len());
            for (node, (key, old_value)) in nodes.iter().zip(rec.iter()) {
                if node.key() != *key {
                    return Err(fail!());
                }
                let v = self.moved_aggregate(
                    step,
                    *node,
                    *old_value,
                    &moved,
                    &overrides,
                    &old_overrides,
                )?;
                if v != *old_value {
                    moved_aggs.push(*key);
                }
                old_overrides.insert(*key, *old_value);
                overrides.insert(*key, v);
                values.push((*key, v));
            }
            if values[..] != rec[..] {
                out.aggs = Some(values.into());
            }
        }
        // The aggregates of its amounts: how much the moved objects move them.
        let mut deltas: FxHashMap<usize, i64> = FxHashMap::default();
        if !moved.is_empty() && !shape.ops_aggs.is_empty() {
            let mut nodes = Vec::new();
            for op in ops_in(cand, lid) {
                if let Change::SetNumber(e) | Change::Modify(e) = &op.change {
                    e.aggregates(&mut nodes);
                }
            }
            let you = step.you;
            for node in nodes {
                let d = self.delta(cand, you, node, &moved)?;
                if d != 0 {
                    deltas.insert(node.key(), d);
                }
            }
        }
        let in_list = |list: &[usize], keys: &[usize]| list.iter().any(|n| keys.contains(n));
        // Whether it exists: where its source moved or its "as long as" reads what moved.
        if fresh {
            let source_moved = cand.source.is_some_and(|s| moved.binary_search(&s).is_ok());
            let while_moves = in_list(&shape.while_aggs, &moved_aggs)
                || (shape.while_refers && !moved.is_empty());
            if source_moved || while_moves {
                // An "as long as" that reads other objects is tested again where they hold the
                // values they have here: it reads nothing this layer or a later one writes.
                if shape.while_refers
                    && shape
                        .tested_reads
                        .intersects(&written_from(state, lid.index()))
                {
                    return Err(fail!());
                }
                let now = match &cand.created {
                    None => static_exists_with(state, &self.sheet, cand, None, Some(&overrides))
                        .is_some(),
                    Some(_) => {
                        start_with(state, &self.sheet, cand, None, Some(&overrides)).is_some()
                    }
                };
                if existed != Some(now) {
                    return Err(fail!());
                }
                // "You" comes from its source's controller.
                if let (Some(s), Some(c)) = (cand.source, state.controller_char) {
                    if let Some(d) = self.dirty.get(&s) {
                        let was = d.old.as_ref().map(|o| &o[c.index()]);
                        if was != Some(&self.sheet.objects[s.index()][c.index()]) {
                            return Err(fail!());
                        }
                    }
                }
            }
            if existed == Some(false) {
                self.moved_list = moved;
                return Ok(step.clone());
            }
        }
        let affects = match &def.affects {
            Affects::Objects(c) | Affects::Players(c) => c,
        };
        let on_objects = matches!(def.affects, Affects::Objects(_));
        // Whom it applies to, where decided here: before the layer's steps (`decide_ahead`), or
        // by testing the moved objects again.
        if let Some(s) = self.decided.remove(&cand.key) {
            out.subjects = Some(s);
        } else if fresh && on_objects {
            match &cand.created {
                None => {
                    if in_list(&shape.affects_aggs, &moved_aggs) {
                        return Err(fail!());
                    }
                    let source_moved = cand.source.is_some_and(|s| {
                        self.dirty
                            .get(&s)
                            .is_some_and(|d| d.diff.attached || d.diff.zone || d.diff.new)
                    });
                    if shape.affects_names_source && source_moved {
                        return Err(fail!());
                    }
                    if !moved.is_empty() {
                        if shape.affects_refers {
                            return Err(fail!());
                        }
                        let ctx = Ctx::new(state, &self.sheet, cand.source, step.you, &[])
                            .overriding(Some(&overrides));
                        for &x in &moved {
                            let s = Subject::Object(x);
                            let now = ctx.test(affects, s);
                            let list = out.subjects();
                            let at = list.binary_search(&s);
                            if now != at.is_ok() {
                                let key = (Arc::as_ptr(list) as *const () as usize, s);
                                let (_, new) = self
                                    .toggles
                                    .entry(key)
                                    .or_insert_with(|| (list.clone(), toggled(list, at, s)));
                                out.subjects = Some(new.clone());
                            }
                        }
                    }
                }
                Some(_) => {
                    let now = start_with(state, &self.sheet, cand, None, Some(&overrides))
                        .ok_or(fail!())?;
                    if now[..] != out.subjects()[..] {
                        for s in out.subjects().iter().chain(now.iter()) {
                            if !matches!(s, Subject::Object(o) if self.dirty.contains_key(o)) {
                                return Err(fail!());
                            }
                        }
                        out.subjects = Some(now.into());
                    }
                }
            }
        }
        // What it does: an amount that moved makes every subject dirty.
        let amounts_move =
            !deltas.is_empty() || ((shape.ops_refer || shape.text_like) && !moved.is_empty());
        // Where its order is checked, its subjects are made dirty with the objects the trials
        // try, in one pass (they are not moved: nothing before the trials reads them).
        let with_trials = amounts_move
            && later.is_some()
            && out
                .subjects()
                .iter()
                .all(|s| matches!(s, Subject::Object(_)));
        if amounts_move && !with_trials {
            self.make_dirty(out.subjects(), lid.index(), old_lt, i)?;
        }
        let xs = self.dirty_ids();
        if amounts_move {
            moved.clear();
            moved.extend(
                xs.iter()
                    .copied()
                    .filter(|x| self.moved(*x, reads_counters)),
            );
        }
        if (step.waited || step.looped) && !moved.is_empty() {
            return Err(fail!());
        }
        // CR 613.8: it must still wait for no later effect of its group.
        // (The trials may make objects dirty from just before this step: it applies to them too.)
        let xs = match later {
            None => xs,
            Some(later) => {
                let subjects = with_trials.then(|| out.subjects().clone());
                let pre = subjects.as_deref().unwrap_or(&[]);
                self.check_order(old_lt, i, &mut out, lid, fresh, later, &overrides, pre)?;
                self.make_dirty(pre, lid.index(), old_lt, i)?;
                self.dirty_ids()
            }
        };
        out.params = Some(self.new_params(step, out.as_step(), lid, &deltas, &moved)?);
        self.apply_new(out.as_step(), lid, &xs, &overrides)?;
        self.apply_old(step, lid)?;
        self.moved_list = moved;
        Ok(out.finish(&old_lt.steps[i]))
    }

    /// How much the moved objects change an aggregate of an effect now: what each adds now less
    /// what it added before. An error where its test reads other aggregates or objects.
    pub(super) fn delta(
        &mut self,
        cand: &Candidate,
        you: Option<PlayerId>,
        node: Aggregate,
        moved: &[ObjectId],
    ) -> Res<i64> {
        if moved.is_empty() {
            return Ok(0);
        }
        let cond = node.condition();
        // Whether what each object adds reads nothing but the object (and "you"), once per
        // aggregate (its address: the effect definitions outlive the replay).
        let alone = *self.alone.entry(node.key()).or_insert_with(|| {
            let mut inner = Vec::new();
            cond.aggregates(&mut inner);
            inner.is_empty() && !cond.refers_to_others()
        });
        if !alone {
            return Err(fail!());
        }
        self.moved_delta(cand, you, node, moved, None, None)
    }

    /// What the moved objects add to an aggregate now less what they added before, with these
    /// overrides now and before.
    fn moved_delta(
        &mut self,
        cand: &Candidate,
        you: Option<PlayerId>,
        node: Aggregate,
        moved: &[ObjectId],
        overrides: Option<&Overrides>,
        old_overrides: Option<&Overrides>,
    ) -> Res<i64> {
        let targets: Vec<Subject> = match &cand.created {
            Some(c) => c.targets.to_vec(),
            None => Vec::new(),
        };
        let mut delta: i64 = 0;
        for &x in moved {
            let now = Ctx::new(self.state, &self.sheet, cand.source, you, &targets)
                .overriding(overrides)
                .contribution(node, x)
                .ok_or(fail!())?;
            let before = match self.dirty.get(&x).and_then(|d| d.old.as_ref()) {
                None => 0,
                Some(_) => {
                    self.ensure_old();
                    self.swap_old([x]);
                    let state = self.old.as_ref().unwrap_or(self.state);
                    let v = if x.index() < state.objects.len() {
                        Ctx::new(state, &self.sheet, cand.source, you, &targets)
                            .overriding(old_overrides)
                            .contribution(node, x)
                    } else {
                        Some(0)
                    };
                    self.swap_old([x]);
                    v.ok_or(fail!())?
                }
            };
            delta = delta.checked_add(now - before).ok_or(fail!())?;
        }
        Ok(delta)
    }

    /// An aggregate's value now: its old value, plus what each moved object adds now, less what it
    /// added before.
    fn moved_aggregate(
        &mut self,
        step: &Applied,
        node: Aggregate,
        old_value: Option<i64>,
        moved: &[ObjectId],
        overrides: &Overrides,
        old_overrides: &Overrides,
    ) -> Res<Option<i64>> {
        if moved.is_empty() {
            return Ok(old_value);
        }
        if node.condition().refers_to_others() {
            return Err(fail!());
        }
        let delta = self.moved_delta(
            &step.cand,
            step.you,
            node,
            moved,
            Some(overrides),
            Some(old_overrides),
        )?;
        if delta == 0 {
            return Ok(old_value);
        }
        match node {
            Aggregate::Number(NumExpr::Count(_) | NumExpr::Sum(..)) | Aggregate::Exists(_) => {
                let v = old_value.ok_or(fail!())?;
                Ok(Some(v.checked_add(delta).ok_or(fail!())?))
            }
            Aggregate::Number(_) => Err(fail!()),
        }
    }

    /// The step's kept parameters now, for its subjects in order: the previous ones, moved by what
    /// the aggregates they read moved (`deltas`). A subject that moved itself takes what its
    /// amounts' own reads give where those read no aggregate, else another subject's moved
    /// parameters where they read nothing of the subject; otherwise this cannot be told.
    fn new_params(
        &self,
        step: &Applied,
        out: StepRef,
        lid: LayerId,
        deltas: &FxHashMap<usize, i64>,
        moved: &[ObjectId],
    ) -> Res<Option<Arc<Vec<Vec<Value>>>>> {
        if !ops_of(out.cand, lid).any(op_reads_others) {
            return Ok(None);
        }
        let ops = ops_in(out.cand, lid);
        let moved_any = deltas.values().any(|d| *d != 0);
        let new_member = out
            .subjects
            .iter()
            .any(|s| step.subjects.binary_search(s).is_err());
        let moved_member = out
            .subjects
            .iter()
            .any(|s| matches!(s, Subject::Object(o) if moved.binary_search(o).is_ok()));
        // Amounts that read another object (`source.counters(damage)`) move with it, whoever
        // the subjects are.
        let refers = ops.iter().any(|op| {
            matches!(&op.change, Change::SetNumber(e) | Change::Modify(e) if e.refers_to_others())
        });
        let other_moved = refers && !moved.is_empty();
        if !moved_any
            && !new_member
            && !moved_member
            && !other_moved
            && out.subjects.len() == step.subjects.len()
        {
            return Ok(step.params.clone());
        }
        if refers
            || ops.iter().any(|op| {
                !matches!(op.change, Change::SetNumber(_) | Change::Modify(_))
                    && op_reads_others(op)
            })
        {
            return Err(fail!());
        }
        let old = step.params.as_deref().ok_or(fail!())?;
        let mut params = Vec::with_capacity(out.subjects.len());
        for s in out.subjects.iter() {
            let own_moved = matches!(s, Subject::Object(o) if moved.binary_search(o).is_ok());
            let kept = step.subjects.binary_search(s).ok().and_then(|k| old.get(k));
            let v = match (kept, own_moved) {
                (Some(p), false) => shift_params(&ops, p, deltas).ok_or(fail!())?,
                _ => {
                    // Worked out from the subject alone, or another subject's moved.
                    let closed = ops.iter().all(|op| match &op.change {
                        Change::SetNumber(e) | Change::Modify(e) => !reads_own(e),
                        _ => true,
                    });
                    let local = ops.iter().all(|op| match &op.change {
                        // A number change reads others exactly when it is not local.
                        Change::SetNumber(_) | Change::Modify(_) => !op.facts().reads_others,
                        _ => true,
                    });
                    if local {
                        let targets: Vec<Subject> = match &out.cand.created {
                            Some(c) => c.targets.to_vec(),
                            None => Vec::new(),
                        };
                        let ctx =
                            Ctx::new(self.state, &self.sheet, out.cand.source, out.you, &targets);
                        ops.iter().flat_map(|op| op_params(&ctx, *s, op)).collect()
                    } else if closed {
                        shift_params(&ops, old.first().ok_or(fail!())?, deltas).ok_or(fail!())?
                    } else {
                        return Err(fail!());
                    }
                }
            };
            params.push(v);
        }
        Ok(Some(Arc::new(params)))
    }
}
