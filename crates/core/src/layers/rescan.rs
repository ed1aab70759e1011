//! Whom a layer's effects apply to, decided again before a replay applies its steps, where a
//! dirty object's own test cannot show it: effects with a stacking number (FreeOrion's effects
//! system, Stacking Number: an object joins an effect only where no effect with its number took it
//! before, so one object's move can hand it from one effect to another), and effects whose scope
//! reads other objects (distance to the source, the object a building stands on), whose whole
//! scope may move with one object.
//!
//! This is what a full derivation decides before a layer applies anything (`Deriver::stack`),
//! for the objects that can differ: the dirty objects that moved, and those a new scan of an
//! effect that reads other objects puts in or takes out. It holds only where these scopes read
//! nothing this layer or a later one writes: the objects the replay does not follow hold their
//! final values, which are then their values here.

use super::dirty::toggled;
use super::order::Entry;
use super::replay::{fail, Fail, Replay, Res};
use super::start::{static_exists, static_scope};
use super::step::{is_fresh, shape_of};
use crate::condition::eval::{Counts, Ctx};
use crate::model::condition::{Cond, Footprint, Metric, Node, NumExpr, ObjRef, Owners, Subject};
use crate::model::effect::{Affects, Change, EffectDef};
use crate::model::ids::{CharId, LayerId, ObjectId, SlotTarget};
use crate::model::trail::{Applied, Body, Candidate, LayerTrail, Shape, Subjects};
use crate::model::value::Value;
use crate::state::GameState;
use rustc_hash::FxHashSet;
use std::collections::BTreeSet;
use std::sync::Arc;

impl Replay<'_> {
    /// Decides again, before layer `lid`'s steps, whom its stacking effects and its effects whose
    /// scope reads other objects apply to (`Replay::decided`), and makes dirty the objects whose
    /// part in them changed.
    pub(super) fn decide_ahead(
        &mut self,
        old_lt: &LayerTrail,
        lid: LayerId,
        seq: &[Entry],
        counters_read: bool,
    ) -> Res<()> {
        let state = self.state;
        let rs = &state.ruleset;
        let li = lid.index();
        // The static effects that start here and whose part may have to be decided again.
        let mut stacking: Vec<usize> = Vec::new();
        let mut referring: Vec<usize> = Vec::new();
        for e in seq {
            let i = match e {
                Entry::Kept(i) => *i,
                Entry::Gone(i) => {
                    if stacking_of(&old_lt.steps[*i]) != 0 {
                        return Err(fail!());
                    }
                    continue;
                }
                Entry::New(c) => {
                    if matches!(&c.body, Body::Effect(d) if d.stacking != 0) {
                        return Err(fail!());
                    }
                    continue;
                }
            };
            let step = &old_lt.steps[i];
            let Body::Effect(def) = &step.cand.body else {
                continue;
            };
            let fresh = is_fresh(&step.cand, lid, rs);
            if !fresh || step.cand.created.is_some() || !step.exists {
                continue;
            }
            if !matches!(def.affects, Affects::Objects(_)) {
                if def.stacking != 0 {
                    return Err(fail!());
                }
                continue;
            }
            let shape = shape_of(step, state, def, lid, true);
            if def.stacking != 0 {
                stacking.push(i);
            } else if shape.affects_refers || self.scope_reads_props(def, shape) {
                referring.push(i);
            }
        }
        if stacking.is_empty() && referring.is_empty() {
            return Ok(());
        }
        // The dirty objects that moved, and what of them moved.
        let moves = self.moves(counters_read);
        let later_writes = written_from(state, li);
        // The scans below read values that stay as they are through this layer: they share
        // the map's indexes (starlanes, objects by place) and counts.
        let counts = Counts::default();
        let mut redo: BTreeSet<ObjectId> = moves.iter().map(|(x, _, _)| *x).collect();
        let mut new_scopes: Vec<(usize, Subjects)> = Vec::new();
        for &i in stacking.iter().chain(&referring) {
            let step = &old_lt.steps[i];
            let Body::Effect(def) = &step.cand.body else {
                continue;
            };
            let shape = shape_of(step, state, def, lid, true);
            if shape.tested_reads.intersects(&later_writes)
                || shape.open_aggregates
                || !shape.affects_aggs.is_empty()
                || step.aggs.is_some()
            {
                return Err(fail!());
            }
            // A player's property it reads changed: its whole scope may move.
            let props_hit = self.scope_reads_props(def, shape);
            if !shape.affects_refers && !props_hit {
                continue;
            }
            let Affects::Objects(affects) = &def.affects else {
                return Err(fail!());
            };
            // The moved objects it sees move, and whether another object's test reads one.
            let seen: Vec<ObjectId> = moves
                .iter()
                .filter(|(_, differ, st)| {
                    st[usize::from(shape.reads_counters)] || shape.tested_reads.intersects(differ)
                })
                .map(|(x, _, _)| *x)
                .collect();
            let source = step.cand.source;
            let others = seen
                .iter()
                .any(|x| self.others_may_read(affects, source, *x, false));
            if !props_hit && !others {
                // Only the moved objects' own tests may differ, and those of the objects
                // attached to them (directly or not) where it reads up the attachments (with a
                // number, each object `redo` holds is tested below).
                let mut tested: BTreeSet<ObjectId> = seen.iter().copied().collect();
                let mut hosts: Vec<ObjectId> = seen
                    .iter()
                    .copied()
                    .filter(|x| self.others_may_read(affects, source, *x, true))
                    .collect();
                while !hosts.is_empty() {
                    hosts = state
                        .attached_to_any(&hosts)
                        .into_iter()
                        .filter(|y| tested.insert(*y))
                        .collect();
                }
                redo.extend(tested.iter().copied());
                if def.stacking == 0 {
                    let ctx = Ctx::new(state, &self.sheet, step.cand.source, step.you, &[])
                        .counting(Some(&counts));
                    let mut list = step.subjects.clone();
                    for &x in &tested {
                        let s = Subject::Object(x);
                        let at = list.binary_search(&s);
                        if ctx.test(affects, s) != at.is_ok() {
                            list = toggled(&list, at, s);
                        }
                    }
                    new_scopes.push((i, list));
                }
                continue;
            }
            // A new scan: the objects whose part changed are followed from here.
            let (_, scope) =
                static_scope(state, &self.sheet, &step.cand, Some(&counts)).ok_or(fail!())?;
            let old = &step.subjects;
            let (mut a, mut b) = (0, 0);
            while a < old.len() || b < scope.len() {
                let pick = match (old.get(a), scope.get(b)) {
                    (Some(x), Some(y)) if x == y => {
                        a += 1;
                        b += 1;
                        continue;
                    }
                    (Some(x), Some(y)) if x < y => {
                        a += 1;
                        *x
                    }
                    (Some(x), None) => {
                        a += 1;
                        *x
                    }
                    (_, Some(y)) => {
                        b += 1;
                        *y
                    }
                    (None, None) => break,
                };
                match pick {
                    Subject::Object(o) => {
                        redo.insert(o);
                    }
                    Subject::Player(_) => return Err(fail!()),
                }
            }
            new_scopes.push((i, scope.into()));
        }
        if redo.len() > self.most_dirty() {
            return Err(fail!());
        }
        let fresh_dirty: Vec<Subject> = redo
            .iter()
            .filter(|x| !self.dirty.contains_key(x))
            .map(|x| Subject::Object(*x))
            .collect();
        self.make_dirty(&fresh_dirty, li, old_lt, 0)?;
        // Effects that read other objects and have no number: their scope, scanned again where
        // what it reads moved.
        for (i, scope) in &new_scopes {
            let step = &old_lt.steps[*i];
            if stacking_of(step) == 0 {
                self.decided.insert(step.cand.key, scope.clone());
            }
        }
        if stacking.is_empty() {
            return Ok(());
        }
        // Stacking numbers, as `Deriver::stack` takes them: higher priority first, then the
        // layers' order; a number an earlier layer's effect took an object for stays taken.
        stacking.sort_by_key(|&i| {
            let s = &old_lt.steps[i];
            let p = match &s.cand.body {
                Body::Effect(d) => d.priority,
                _ => 0,
            };
            (std::cmp::Reverse(p), s.cand.order_key())
        });
        let mut subjects: Vec<Subjects> = stacking
            .iter()
            .map(|&i| old_lt.steps[i].subjects.clone())
            .collect();
        for &x in &redo {
            let s = Subject::Object(x);
            let mut taken: Vec<u32> = self
                .trail
                .iter()
                .flat_map(|lt| lt.steps.iter())
                .filter(|a| a.started_here && stacking_of(a) != 0)
                .filter(|a| a.subjects.binary_search(&s).is_ok())
                .map(stacking_of)
                .collect();
            for (k, &i) in stacking.iter().enumerate() {
                let step = &old_lt.steps[i];
                let Body::Effect(def) = &step.cand.body else {
                    continue;
                };
                let n = def.stacking;
                let in_scope = match new_scopes.iter().find(|(j, _)| *j == i) {
                    Some((_, scope)) => scope.binary_search(&s).is_ok(),
                    None => {
                        let Affects::Objects(c) = &def.affects else {
                            return Err(fail!());
                        };
                        Ctx::new(state, &self.sheet, step.cand.source, step.you, &[])
                            .counting(Some(&counts))
                            .test(c, s)
                    }
                };
                let now = in_scope && !taken.contains(&n);
                if now {
                    taken.push(n);
                }
                let at = subjects[k].binary_search(&s);
                if now != at.is_ok() {
                    subjects[k] = toggled(&subjects[k], at, s);
                }
            }
        }
        for (&i, s) in stacking.iter().zip(subjects) {
            self.decided.insert(old_lt.steps[i].cand.key, s);
        }
        Ok(())
    }
}

impl Replay<'_> {
    /// Whether `c`, tested on an object other than `x`, may read `x` (so that `x` entering,
    /// leaving or changing may change the answer): where `x` is the source; with `below`,
    /// through the attachment hierarchy, where objects are attached to `x` (what a property an
    /// object lacks is read from, where an object is); an empire owned through `x` (a planet,
    /// for its system); starlane jumps where `x` has starlanes; distance to objects of a class
    /// `x` is of; visibility where `x` is an empire's (it detects for it); and anything else
    /// that reads other objects. A superset.
    fn others_may_read(
        &self,
        c: &Cond,
        source: Option<ObjectId>,
        x: ObjectId,
        below: bool,
    ) -> bool {
        if source == Some(x) {
            return true;
        }
        let state = self.state;
        // Objects attached to `x` read it up the hierarchy (asked apart, `below`: only they may
        // answer differently); the object `x` is attached to may be owned through it.
        let children = below && !state.attached_to_any(&[x]).is_empty();
        let parent = state.obj(x).attached_to.is_some()
            || self
                .changes
                .old_object(x)
                .is_some_and(|o| o.attached_to.is_some());
        let own = |r: &ObjRef| matches!(r, ObjRef::This | ObjRef::Source);
        let ctx = Ctx::new(state, &self.sheet, None, None, &[]);
        let now = &self.sheet.objects[x.index()];
        let old = self.dirty.get(&x).and_then(|d| d.old.as_deref());
        // Whether a condition on `x` alone may hold for it now or before: it holds now, or what
        // it reads of `x` differs from before.
        let meets = |c: &Cond| {
            let mut reads = Footprint::default();
            c.reads(state.controller_char, &mut reads);
            let moved = old.is_none_or(|old| {
                old.iter()
                    .zip(now.iter())
                    .enumerate()
                    .any(|(i, (a, b))| a != b && reads.has_char(CharId(i as u16)))
            });
            moved || c.refers_to_others() || ctx.test(c, Subject::Object(x))
        };
        // An object of an empire (not one the ruleset says no empire owns): it detects for that
        // empire's objects.
        let owned = |ow: &Owners| {
            let controlled = [Some(now), old].into_iter().flatten().any(|row| {
                row.get(ow.controller.index())
                    .is_some_and(|v| matches!(v, Value::Player(Some(_))))
            });
            controlled
                && ow
                    .unowned
                    .as_ref()
                    .is_none_or(|u| !ctx.test(u, Subject::Object(x)))
        };
        // An object through which the object it is attached to is owned (a planet, for its
        // system).
        let carrier = |ow: &Owners| {
            parent
                && ow
                    .through
                    .iter()
                    .any(|(_, by)| state.object_type(x) == Some(*by))
        };
        c.any_node(|n, _| match n {
            Node::Cond(
                Cond::True
                | Cond::And(_)
                | Cond::Or(_)
                | Cond::Not(_)
                | Cond::Cmp(..)
                | Cond::InZone(_)
                | Cond::InPlay
                | Cond::ControlledBy(_)
                | Cond::OwnedBy(_)
                | Cond::IsSource
                | Cond::IsAttached
                | Cond::IsPlayer(_)
                | Cond::AnyPlayer
                | Cond::AnyObject
                | Cond::FaceDown
                | Cond::Named(..)
                | Cond::Within(_)
                | Cond::Chance { .. }
                | Cond::OfType(_)
                | Cond::Typed(_),
            ) => false,
            Node::Cond(Cond::Has(r, ..) | Cond::HasKind(r, ..) | Cond::HasChoice(r, ..)) => !own(r),
            Node::Cond(Cond::Holder(..) | Cond::AttachedTo(_)) => children,
            Node::Cond(Cond::Affiliated(a)) => children || carrier(&a.owners),
            Node::Cond(Cond::Stockpile(t)) => children || carrier(&t.owners),
            Node::Cond(Cond::Visible(v)) => children || owned(&v.owners) || carrier(&v.owners),
            Node::Cond(Cond::Near(near)) => {
                children
                    || (!matches!(near.of, Cond::IsSource) && meets(&near.of))
                    || (near.metric == Metric::Jumps && state.has_char(x, near.places.lanes))
            }
            Node::Num(e) if e.is_arithmetic() || matches!(e, NumExpr::Prop(..)) => false,
            Node::Num(
                NumExpr::Char(r, _)
                | NumExpr::SetSize(r, _)
                | NumExpr::Counters(r, _)
                | NumExpr::AllCounters(r),
            ) => !own(r),
            _ => true,
        })
    }

    /// Whether an effect's scope reads a player's property that changed.
    fn scope_reads_props(&self, def: &EffectDef, shape: &Shape) -> bool {
        // (What its scope and activation read, worked out once, holds what its scope reads.)
        if self.props_changed.is_empty() || !shape.tested_reads.intersects(&self.props_changed) {
            return false;
        }
        let mut f = Footprint::default();
        match &def.affects {
            Affects::Objects(c) | Affects::Players(c) => {
                c.reads(self.state.controller_char, &mut f)
            }
        }
        f.intersects(&self.props_changed)
    }

    /// The effects of a layer that read a player's property that changed (`Changes::props`):
    /// where whether one exists moves (its "as long as" reads the property), its old step ends
    /// and it starts again where its timestamp puts it; whom the others apply to is scanned
    /// again (`decide_ahead`). An amount that reads one, an effect on players, a created effect
    /// and an effect with parts in several layers that read one are beyond this replay. True if
    /// any step of the layer reads one.
    pub(super) fn props_flip(
        &self,
        old_lt: &LayerTrail,
        lid: LayerId,
        gone: &mut FxHashSet<usize>,
        fresh: &mut Vec<Candidate>,
    ) -> Res<bool> {
        if self.props_changed.is_empty() {
            return Ok(false);
        }
        let state = self.state;
        let ctl = state.controller_char;
        let later = written_from(state, lid.index());
        let mut any = false;
        for (i, step) in old_lt.steps.iter().enumerate() {
            if gone.contains(&i) {
                continue;
            }
            let reads = step.known.reads.get_or_init(|| step.cand.reads(state, ctl));
            if !reads.intersects(&self.props_changed) {
                continue;
            }
            any = true;
            let Body::Effect(def) = &step.cand.body else {
                return Err(fail!());
            };
            if step.cand.created.is_some()
                || !matches!(def.affects, Affects::Objects(_))
                || reads.intersects(&later)
                || def.ops.iter().any(|o| o.layer != lid)
            {
                return Err(fail!());
            }
            let mut amounts = Footprint::default();
            for op in &def.ops {
                if let Change::SetNumber(e) | Change::Modify(e) = &op.change {
                    e.reads(ctl, &mut amounts);
                }
            }
            if amounts.intersects(&self.props_changed) {
                return Err(fail!());
            }
            let now = static_exists(state, &self.sheet, &step.cand, None).is_some();
            if now != step.exists {
                gone.insert(i);
                fresh.push(step.cand.clone());
            }
        }
        Ok(any)
    }
}

/// A step's stacking number (0 for none).
fn stacking_of(step: &Arc<Applied>) -> u32 {
    match &step.cand.body {
        Body::Effect(d) => d.stacking,
        _ => 0,
    }
}

/// What layer `from` and the later layers write.
pub(super) fn written_from(state: &GameState, from: usize) -> Footprint {
    let mut f = Footprint::default();
    for layer in &state.ruleset.layers[from..] {
        for slot in &layer.slots {
            match slot.target {
                SlotTarget::Char(c) => f.add_char(c),
                SlotTarget::Prop(p) => f.add_prop(p),
            }
        }
    }
    f
}
