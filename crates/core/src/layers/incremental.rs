//! Recomputation after a change: only what the change reaches is worked out again. CR 613 decides
//! the result; this is a faster way to reach the same one, checked against a full derivation.
//!
//! A derivation keeps, for each layer, the order in which its effects applied, each with its
//! subjects, its parameters where they differ by subject and read other objects, its "you",
//! whether it waited for another effect, and the values of the aggregates it read (`Applied`).
//! After a change, the objects whose own state changed (they entered, moved, got counters...) are
//! *dirty*: their values are worked out again step by step, and everything else is the previous
//! result. Where an effect's answer can move because of a dirty object, the replay checks it:
//!
//! - whom an effect applies to: each dirty object is tested again (with a condition that reads only
//!   the tested object), so a creature that enters joins the anthems' subjects;
//! - aggregates (`count`, `sum`, `exists`): the old value plus what the dirty objects add now less
//!   what they added before; an effect whose amount moves makes its subjects dirty too;
//! - order (CR 613.8): no effect may come to wait for a later one through a dirty object (each
//!   later effect of its group that writes what it reads is tried on the dirty objects), and an
//!   effect that waited, or one of a dependency loop, must not be reached at all;
//! - effects that start (a spell resolves, a counter is put, an object with static abilities
//!   enters) go where their timestamp puts them and make their subjects dirty; effects that end
//!   (an object with static abilities leaves) make theirs dirty;
//! - stacking numbers, and scopes that read other objects (distance to the source, the object
//!   attached to), are decided again before a layer's steps (`rescan`).
//!
//! What it cannot show is derived in full from the layer where it met it (`Fail`).
//!
//! Here: the replay of one layer (`Replay::layer`). The replay's state and course are in `replay`,
//! making objects dirty in `dirty`, a kept step in `kept`, the order trials in `order`, what a
//! replay reads of a step in `step`.

use super::change::apply_keeping;
use super::derive::{derive, kind_rank};
use super::dirty::members_into;
use super::footprint::may_read;
use super::order::{later_in_group, Entry, Later, LaterOf};
use super::replay::{fail, Fail, Moves, Replay, Res};
use super::rescan::written_from;
use super::start::{condition_aggregates, start_with, static_scope};
use super::step::{is_fresh, op_reads_others, ops_of, params_for, reads_counters};
use super::trail::trail_of;
use crate::condition::eval::Overrides;
use crate::model::changes::Changes;
use crate::model::condition::{Cell, Footprint, Subject};
use crate::model::derived::Derived;
use crate::model::ids::{CharId, LayerId, ObjectId, Timestamp};
use crate::model::trail::{Applied, LayerTrail, Shared};
use crate::model::trail::{Body, Candidate, EffectKey};
use crate::model::value::{Ability, Value};
use crate::state::GameState;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// The values after `changes`, starting from `prev`, the derivation made before them.
pub(crate) fn derive_after(state: &GameState, prev: Arc<Derived>, changes: &Changes) -> Derived {
    let n = state.ruleset.layers.len();
    if trail_of(&prev).is_none_or(|t| t.len() != n)
        || n == 0
        || prev.sheet.objects.len() != changes.known
    {
        return derive(state, false);
    }
    if let Some(d) = nothing_applies(state, &prev, changes) {
        let prev = Arc::try_unwrap(prev).unwrap_or_else(|a| Derived::clone(&a));
        let d = d(prev);
        #[cfg(feature = "test-hooks")]
        super::hooks::recomputed(state, &d, 0);
        return d;
    }
    let prev = Arc::try_unwrap(prev).unwrap_or_else(|a| Derived::clone(&a));
    let (d, outcome) = match Replay::new(state, prev, changes) {
        Ok(mut r) => match r.run() {
            Ok(()) => (r.finish(), 0),
            Err(Fail(_at)) => {
                #[cfg(debug_assertions)]
                if std::env::var_os("RULECRAFT_TRACE_REPLAY").is_some() {
                    let li = r.trail.len();
                    eprintln!("replay stopped in layer {li} ({}:{})", _at.0, _at.1);
                }
                let d = r.fall_back();
                let full = d.reused_layers + d.replayed_layers == 0;
                (d, if full { 2 } else { 1 })
            }
        },
        Err(Fail(_at)) => {
            #[cfg(debug_assertions)]
            if std::env::var_os("RULECRAFT_TRACE_REPLAY").is_some() {
                eprintln!("replay refused ({}:{})", _at.0, _at.1);
            }
            (derive(state, false), 2)
        }
    };
    #[cfg(feature = "test-hooks")]
    super::hooks::recomputed(state, &d, outcome);
    #[cfg(not(feature = "test-hooks"))]
    let _ = outcome;
    d
}

/// Whether no effect applied in any layer of derivation `d` (no step, no granted ability): every
/// object's values are then its base values (CR 613.1), so each value that is not its state or
/// its controller is its class's printed value (or the ruleset's default).
pub(crate) fn at_base(state: &GameState, d: &Derived) -> bool {
    trail_of(d).is_some_and(|t| {
        t.len() == state.ruleset.layers.len()
            && t.iter().all(|lt| {
                lt.steps.is_empty() && lt.grants.base.is_empty() && lt.grants.more.is_empty()
            })
    })
}

/// A changed object's new values where nothing applies: its whole base row, or only the cells
/// of its previous row that differ (by characteristic index).
enum Patch {
    Row(Vec<Value>),
    Cells(smallvec::SmallVec<[(usize, Value); 2]>),
    /// A new object: its base values, moved into the sheet as they are made (a deal creates
    /// a hundred cards at once).
    New,
}

/// Where no effect applied in any layer before the changes and none can after them (no created
/// effect, no static ability that works, no counter or face-down value a layer applies to a
/// changed object), every object's values are its base values (CR 613.1: the layers apply
/// effects to the values the object has by itself): the changed objects' rows become their
/// base rows, and each layer's record stays as it was.
fn nothing_applies<'a>(
    state: &'a GameState,
    prev: &Derived,
    changes: &Changes,
) -> Option<impl FnOnce(Derived) -> Derived + 'a> {
    let rs = &state.ruleset;
    if !at_base(state, prev)
        || !state.effects.is_empty()
        || changes.old_effects().is_some_and(|e| !e.is_empty())
        || !rs.intrinsic.is_empty()
        || state.content.statics_work_outside_play(rs)
    {
        return None;
    }
    // In id order: the objects that changed, then the new ones.
    let new = changes.known()..state.objects.len();
    let dirty: Vec<ObjectId> = changes
        .objects
        .iter()
        .copied()
        .chain(new.map(|i| ObjectId(i as u32)))
        .collect();
    let applies = |o: &crate::model::object::GameObject| {
        (o.face_down && !rs.face_down.is_empty())
            || o.counters.iter().any(|p| {
                let kind = &rs.counters[p.kind.index()];
                (0..rs.layers.len()).any(|l| kind.applies_in(rs, LayerId(l as u16)))
            })
    };
    let has_static = |row: &[Value]| {
        state.abilities_char.is_some_and(|ac| {
            matches!(&row[ac.index()], Value::Abilities(l)
                if l.iter().any(|a| matches!(a, Ability::Static { .. })))
        })
    };
    // Each changed object's base values (`GameState::base_values`): where its class is as it
    // was, only its state and controller can differ from its previous row, which was its base
    // row; else (or a new object) its whole row is made.
    let state_char = state.state_char;
    let rows: Vec<Patch> = dirty
        .iter()
        .map(|&x| {
            let o = state.obj(x);
            match changes.old_object(x) {
                Some(old) if old.class == o.class && x.index() < prev.sheet.objects.len() => {
                    let mut cells = smallvec::SmallVec::new();
                    if let Some(c) = state_char.filter(|_| old.state != o.state) {
                        cells.push((c.index(), Value::Symbols(o.state.clone())));
                    }
                    if let Some(c) = state
                        .controller_char
                        .filter(|_| old.controller != o.controller)
                    {
                        cells.push((c.index(), Value::Player(Some(o.controller))));
                    }
                    Patch::Cells(cells)
                }
                _ if x.index() >= prev.sheet.objects.len() => Patch::New,
                _ => Patch::Row(state.base_row(o)),
            }
        })
        .collect();
    for (&x, row) in dirty.iter().zip(&rows) {
        if applies(state.obj(x)) {
            return None;
        }
        let with_static = match row {
            Patch::Row(r) => has_static(r),
            // Its abilities are its class's base value (neither its state nor its controller).
            Patch::New => {
                state
                    .abilities_char
                    .is_some_and(|ac| Some(ac) != state_char && Some(ac) != state.controller_char)
                    && has_static(state.content.class_base(rs, state.obj(x).class))
            }
            Patch::Cells(_) => prev
                .sheet
                .objects
                .get_row(x.index())
                .is_some_and(has_static),
        };
        if state.in_play(x) && with_static {
            return None;
        }
    }
    // The objects in play that did not change: their values are the previous ones.
    let others_static = state
        .in_play_ids()
        .iter()
        .filter(|x| dirty.binary_search(x).is_err())
        .any(|x| {
            prev.sheet
                .objects
                .get_row(x.index())
                .is_some_and(has_static)
        });
    if others_static {
        return None;
    }
    let props = changes.props.clone();
    Some(move |prev: Derived| {
        let Derived {
            mut sheet, trail, ..
        } = prev;
        super::props::props_into(state, &props, &mut sheet);
        for (&x, row) in dirty.iter().zip(rows) {
            match row {
                Patch::Cells(cells) if !cells.is_empty() => {
                    let r = &mut sheet.objects[x.index()];
                    for (c, v) in cells {
                        r[c] = v;
                    }
                }
                Patch::Cells(_) => {}
                Patch::Row(row) if x.index() < sheet.objects.len() => {
                    for (cell, v) in sheet.objects[x.index()].iter_mut().zip(row) {
                        *cell = v;
                    }
                }
                Patch::Row(row) => sheet.objects.push_values(row),
                Patch::New => sheet.objects.push_values(state.base_values(state.obj(x))),
            }
        }
        sheet.objects.share();
        let layers = rs.layers.len();
        Derived {
            sheet,
            explanation: None,
            reused_layers: layers,
            replayed_layers: 0,
            changed: Some(dirty),
            trail,
            stacked: None,
        }
    })
}

impl Replay<'_> {
    /// Replays one layer; `None` when the change does not reach it: the dirty objects' values are
    /// what they were, and go through its steps as they did.
    pub(super) fn layer(&mut self, li: usize) -> Res<Option<LayerTrail>> {
        let state = self.state;
        let lid = LayerId(li as u16);
        let old_lt = self.prev[li].clone();
        let layer_def = &state.ruleset.layers[li];
        self.trials.clear();

        // Effects that end, and effects that apply here anew.
        let mut gone: FxHashSet<usize> = FxHashSet::default();
        let mut fresh_new: Vec<Candidate> = Vec::new();
        if !self.gone_effects.is_empty() {
            for (i, step) in old_lt.steps.iter().enumerate() {
                if let EffectKey::Created(id) = step.cand.key {
                    if self.gone_effects.contains(&id) {
                        gone.insert(i);
                    }
                }
            }
        }
        for e in &self.new_effects {
            let key = EffectKey::Created(e.id);
            let starts_here = e.def.first_layer() == Some(lid);
            let started = matches!(self.started.get(&key), Some(Some(_)));
            if e.def.has_layer(lid) && (starts_here || started) {
                fresh_new.push(Candidate::created(e));
            }
        }
        self.counter_changes(&old_lt, lid, &mut gone, &mut fresh_new);
        self.statics_moving(&old_lt, lid, &mut gone, &mut fresh_new);
        let props_read = self.props_flip(&old_lt, lid, &mut gone, &mut fresh_new)?;
        if layer_def.face_down && self.dirty.values().any(|d| d.diff.other) {
            return Err(fail!());
        }
        let counters_moved = self.dirty.values().any(|d| d.diff.counters);
        let counters_read = counters_moved && old_lt.steps.iter().any(|s| reads_counters(&s.cand));
        let reached = !gone.is_empty()
            || !fresh_new.is_empty()
            || props_read
            || self
                .dirty_list
                .iter()
                .any(|x| self.moved(*x, counters_read));
        if !reached {
            self.apply_unreached(&old_lt, lid)?;
            self.follow_types(lid);
            return Ok(None);
        }
        // Static abilities of dirty objects that came or went (an ability-removing effect, a
        // granted ability): their effects would start or end.
        if let Some(ac) = state.abilities_char {
            for (x, d) in &self.dirty {
                if self.entering.contains(x) {
                    continue;
                }
                let statics = |row: &[Value]| -> Vec<Ability> {
                    match &row[ac.index()] {
                        Value::Abilities(l) => l
                            .iter()
                            .filter(|a| matches!(a, Ability::Static { .. }))
                            .cloned()
                            .collect(),
                        _ => Vec::new(),
                    }
                };
                let now = statics(&self.sheet.objects[x.index()]);
                let was = d.old.as_deref().map(statics).unwrap_or_default();
                if now != was {
                    return Err(fail!());
                }
            }
        }
        // The new order: the previous steps, with the effects that ended marked, and the new ones
        // where their timestamp puts them: the earliest effect that waits for no other goes next.
        let group_of = |c: &Candidate| (!c.defining, kind_rank(c, lid, &layer_def.kind_order));
        let mut seq: Vec<Entry> = (0..old_lt.steps.len())
            .map(|i| {
                if gone.contains(&i) {
                    Entry::Gone(i)
                } else {
                    Entry::Kept(i)
                }
            })
            .collect();
        fresh_new.sort_by_key(|c| c.order_key());
        for c in fresh_new {
            let g = group_of(&c);
            let at = seq
                .iter()
                .position(|e| match e {
                    Entry::Kept(i) | Entry::Gone(i) => {
                        let s = &old_lt.steps[*i];
                        let gs = group_of(&s.cand);
                        gs > g || (gs == g && (s.looped || s.cand.order_key() > c.order_key()))
                    }
                    Entry::New(n) => {
                        let gn = group_of(n);
                        gn > g || (gn == g && n.order_key() > c.order_key())
                    }
                })
                .unwrap_or(seq.len());
            seq.insert(at, Entry::New(c));
        }
        let groups: Vec<(bool, usize)> = seq
            .iter()
            .map(|e| match e {
                Entry::Kept(i) | Entry::Gone(i) => group_of(&old_lt.steps[*i].cand),
                Entry::New(c) => group_of(c),
            })
            .collect();
        // Where effects come or go in a group whose order waited on dependencies, the order may
        // be different now.
        for (k, e) in seq.iter().enumerate() {
            if matches!(e, Entry::Gone(_) | Entry::New(_)) {
                let unsettled = seq.iter().zip(&groups).any(|(e2, g2)| {
                    *g2 == groups[k]
                        && matches!(e2, Entry::Kept(i) | Entry::Gone(i)
                            if old_lt.steps[*i].waited || old_lt.steps[*i].looped)
                });
                if unsettled {
                    return Err(fail!());
                }
            }
        }

        // What each group writes: an effect that reads none of it cannot come to wait for a later
        // effect of its group.
        let mut group_writes: Vec<((bool, usize), Footprint)> = Vec::new();
        for (e, g) in seq.iter().zip(&groups) {
            let w = match e {
                Entry::Kept(i) => {
                    let step = &old_lt.steps[*i];
                    step.known
                        .writes
                        .get_or_init(|| step.cand.writes(state, lid))
                }
                Entry::Gone(_) => continue,
                Entry::New(c) => &c.writes(state, lid),
            };
            match group_writes.iter_mut().find(|(x, _)| x == g) {
                Some((_, f)) => f.union(w),
                None => group_writes.push((*g, w.clone())),
            }
        }
        // Stacking numbers and scopes that read other objects: decided before any step applies.
        self.decided.clear();
        self.decide_ahead(&old_lt, lid, &seq, counters_read)?;
        let writes_of =
            |g: &(bool, usize)| group_writes.iter().find(|(x, _)| x == g).map(|(_, f)| f);
        let mut new_steps: Vec<Arc<Applied>> = Vec::with_capacity(seq.len());
        let mut old_pos = 0usize;
        let mut moves: Option<Moves> = None;
        for k in 0..seq.len() {
            if !matches!(seq[k], Entry::Kept(_)) {
                moves = None;
            }
            match &seq[k] {
                Entry::Gone(i) => {
                    let step = &old_lt.steps[*i];
                    self.make_dirty(&step.subjects, li, &old_lt, *i)?;
                    self.apply_old(step, lid)?;
                    old_pos = *i + 1;
                }
                Entry::New(c) => {
                    let c = c.clone();
                    let later = later_in_group(&seq, &groups, k, &old_lt);
                    let applied = Arc::new(self.insert(&c, lid, &later, &old_lt, old_pos)?);
                    if applied.started_here {
                        let s = applied.exists.then(|| applied.subjects.clone());
                        self.started.insert(c.key, s);
                    }
                    new_steps.push(applied);
                }
                Entry::Kept(i) => {
                    let i = *i;
                    let empty = Footprint::default();
                    let group_writes = writes_of(&groups[k]).unwrap_or(&empty);
                    let reads = {
                        let step = &old_lt.steps[i];
                        step.known
                            .reads
                            .get_or_init(|| step.cand.reads(state, state.controller_char))
                    };
                    let later = reads.intersects(group_writes).then_some(LaterOf {
                        seq: &seq,
                        groups: &groups,
                        k,
                        old_lt: &old_lt,
                    });
                    // A step no dirty object can reach stays as it was (`untouched`); what the
                    // dirty objects' values are is worked out again after each step that is not.
                    if later.as_ref().is_none_or(|l| l.is_empty()) {
                        let moves = match &moves {
                            Some(m) => m,
                            None => moves.insert(self.moves(counters_read)),
                        };
                        if self.untouched(&old_lt.steps[i], lid, moves) {
                            new_steps.push(old_lt.steps[i].clone());
                            old_pos = i + 1;
                            continue;
                        }
                    }
                    moves = None;
                    let existed = {
                        let s = &old_lt.steps[i];
                        s.started_here.then_some(s.exists)
                    };
                    let applied = self.kept(&old_lt, i, lid, existed, later)?;
                    old_pos = i + 1;
                    if applied.started_here
                        && applied.exists
                        && !Arc::ptr_eq(&applied.subjects, &old_lt.steps[i].subjects)
                    {
                        self.started
                            .insert(applied.cand.key, Some(applied.subjects.clone()));
                    }
                    new_steps.push(applied);
                }
            }
        }
        self.follow_types(lid);
        // The layer's trail: the previous one, with the dirty objects' values at its start kept for
        // the cells it writes or wrote, and the new steps and started effects.
        let mut lt = LayerTrail::clone(&old_lt);
        let mut old_cells: FxHashMap<ObjectId, Vec<CharId>> = FxHashMap::default();
        for (x, d) in &self.dirty {
            if d.final_old.is_some() {
                for (cell, _) in old_lt.before_of(*x) {
                    if let Cell::Object(_, c) = cell {
                        old_cells.entry(*x).or_default().push(*c);
                    }
                }
            }
        }
        for (x, d) in &self.dirty {
            let now = &self.sheet.objects[x.index()];
            for (c, v) in d.at_layer_start.iter().enumerate() {
                let c = CharId(c as u16);
                let wrote = old_cells.get(x).is_some_and(|l| l.contains(&c));
                if wrote || now[c.index()] != *v {
                    lt.before.push((Cell::Object(*x, c), v.clone()));
                }
            }
        }
        lt.steps = Arc::new(new_steps);
        // Entries added by replays are searched one by one: past a size, they join the indexed part.
        if lt.before.more.len() > 256 && lt.before.more.len() * 4 > lt.before.base.len() {
            let all: Vec<(Cell, Value)> = lt.before.iter().cloned().collect();
            lt.before = Shared {
                base: Arc::new(all),
                more: Vec::new(),
            };
            lt.before_index = Arc::default();
        }
        Ok(Some(lt))
    }

    /// Counter placements of dirty objects that are new, and those that went (a placement whose
    /// count changed is one that went and one that came).
    fn counter_changes(
        &self,
        old_lt: &LayerTrail,
        lid: LayerId,
        gone: &mut FxHashSet<usize>,
        fresh: &mut Vec<Candidate>,
    ) {
        let rs = &self.state.ruleset;
        let changed: Vec<ObjectId> = self
            .dirty
            .iter()
            .filter(|(_, d)| d.diff.counters || d.diff.new || d.diff.zone)
            .map(|(x, _)| *x)
            .collect();
        if changed.is_empty() {
            return;
        }
        let mut before: FxHashMap<(EffectKey, Timestamp), usize> = FxHashMap::default();
        for (i, s) in old_lt.steps.iter().enumerate() {
            if let EffectKey::Counter { object, .. } = s.cand.key {
                if changed.binary_search(&object).is_ok() {
                    before.insert((s.cand.key, s.cand.timestamp), i);
                }
            }
        }
        for &x in &changed {
            let o = self.state.obj(x);
            for (i, p) in o.counters.iter().enumerate() {
                if !rs.counters[p.kind.index()].applies_in(rs, lid) {
                    continue;
                }
                let k = Candidate::counter(o, i, p);
                let same = before.get(&(k.key, k.timestamp)).is_some_and(|r| {
                    matches!(old_lt.steps[*r].cand.body, Body::Counter { kind, count }
                        if kind == p.kind && count == p.count)
                });
                if same {
                    before.remove(&(k.key, k.timestamp));
                } else {
                    fresh.push(k);
                }
            }
        }
        gone.extend(before.into_values());
    }

    /// The static abilities of objects that moved (`Replay::entering`):
    /// the steps of their effects end, and the effects they have now (as their abilities stand
    /// at this layer's start, in play or in a zone the ability names) start here, or go on where
    /// they started in an earlier layer of this replay.
    fn statics_moving(
        &self,
        old_lt: &LayerTrail,
        lid: LayerId,
        gone: &mut FxHashSet<usize>,
        fresh: &mut Vec<Candidate>,
    ) {
        if self.entering.is_empty() {
            return;
        }
        let state = self.state;
        for (i, s) in old_lt.steps.iter().enumerate() {
            if let EffectKey::Static { object, .. } = s.cand.key {
                if self.entering.contains(&object) {
                    gone.insert(i);
                }
            }
        }
        let Some(ac) = state.abilities_char else {
            return;
        };
        for &x in &self.entering {
            let o = state.obj(x);
            let Value::Abilities(list) = &self.sheet.objects[x.index()][ac.index()] else {
                continue;
            };
            for a in list.iter() {
                let Ability::Static { class, index, .. } = a else {
                    continue;
                };
                let def = &state.content.class_def(*class).statics[*index as usize];
                if !state.in_play(x) && !def.zones.contains(&o.zone) {
                    continue;
                }
                let key = EffectKey::Static {
                    object: x,
                    class: *class,
                    index: *index,
                };
                let starts_here = def.first_layer() == Some(lid);
                let started = matches!(self.started.get(&key), Some(Some(_)));
                if def.has_layer(lid) && (starts_here || started) {
                    fresh.push(Candidate::of_static(o, key, def, o.timestamp));
                }
            }
        }
    }

    /// A layer the change does not reach: the dirty objects' values, the same as before, go
    /// through its steps as they did.
    fn apply_unreached(&mut self, old_lt: &LayerTrail, lid: LayerId) -> Res<()> {
        let xs = self.dirty_ids();
        let mut mine = Vec::new();
        for step in old_lt.steps.iter() {
            members_into(&step.subjects, &xs, &mut mine);
            if mine.is_empty() {
                continue;
            }
            let params = params_for(step.as_step(), &mine, lid)?;
            apply_keeping(
                self.state,
                &mut self.sheet,
                &step.cand,
                lid,
                &mine,
                params.as_deref(),
                None,
                &mut |_, _, _, _| {},
                None,
            );
        }
        for x in xs.iter() {
            if let Some(old) = self.dirty.get_mut(x).and_then(|d| d.old.as_mut()) {
                old.clear();
                old.extend_from_slice(&self.sheet.objects[x.index()]);
            }
        }
        Ok(())
    }

    /// An effect that applies here now and did not before: it goes where its timestamp puts it,
    /// reading nothing a later effect of its group writes, and its subjects become dirty.
    fn insert(
        &mut self,
        c: &Candidate,
        lid: LayerId,
        later: &[Later],
        old_lt: &LayerTrail,
        upto: usize,
    ) -> Res<Applied> {
        let state = self.state;
        let reads = c.reads(state, state.controller_char);
        if !reads.is_empty()
            && later
                .iter()
                .any(|y| may_read(&reads, &y.cand.touches(state, lid)))
        {
            return Err(fail!());
        }
        let mut exists = true;
        let mut you = c.created.as_ref().map(|c| c.you);
        let subjects: Vec<Subject> = match self.started.get(&c.key) {
            Some(Some(s)) => s.to_vec(),
            Some(None) => {
                exists = false;
                Vec::new()
            }
            None => match (&c.body, &c.created) {
                // A static ability of an object that entered: whether it exists and whom it
                // applies to, as a full derivation decides them here. They read values where
                // they stand here (nothing this layer or a later one writes), and no aggregate
                // (whose value a later replay would need).
                (Body::Effect(def), None) => {
                    if reads.intersects(&written_from(state, lid.index()))
                        || !condition_aggregates(def, true).is_empty()
                        || def.stacking != 0
                    {
                        return Err(fail!());
                    }
                    match static_scope(state, &self.sheet, c, None) {
                        None => {
                            exists = false;
                            Vec::new()
                        }
                        Some((y, scope)) => {
                            you = y;
                            scope
                        }
                    }
                }
                (Body::Effect(def), Some(_)) if def.while_cond.is_some() => {
                    return Err(fail!());
                }
                _ => start_with(state, &self.sheet, c, None, None).ok_or(fail!())?,
            },
        };
        if ops_of(c, lid).any(op_reads_others) {
            return Err(fail!());
        }
        self.make_dirty(&subjects, lid.index(), old_lt, upto)?;
        let out = Applied {
            cand: c.clone(),
            subjects: subjects.into(),
            started_here: is_fresh(c, lid, &self.state.ruleset),
            exists,
            looped: false,
            known: Arc::default(),
            params: None,
            you,
            waited: false,
            aggs: None,
            partners: None,
        };
        let xs = self.dirty_ids();
        self.apply_new(out.as_step(), lid, &xs, &Overrides::default())?;
        Ok(out)
    }
}
