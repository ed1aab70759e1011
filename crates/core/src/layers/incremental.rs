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
//! - effects that start (a spell resolves, a counter is put) go where their timestamp puts them
//!   and make their subjects dirty; effects that end make theirs dirty.
//!
//! What it cannot show is derived in full from the layer where it met it (`Fail`).

use super::candidate::{Body, Candidate, EffectKey, Subjects};
use super::change::{apply_keeping, op_params};
use super::derive::{
    continue_from, derive, kind_rank, may_read, start_with, static_exists_with, trail_of,
    AggregateValues, Applied, LayerTrail, PartnerThen, Shape, Shared,
};
use crate::condition::eval::{Ctx, Overrides};
use crate::condition::{Aggregate, Cell, Cond, Footprint, NumExpr, Subject};
use crate::effect::{Affects, Change, CreatedEffect, EffectDef, Locked, Op};
use crate::ids::{CharId, LayerId, ObjectId};
use crate::object::GameObject;
use crate::state::changes::Changes;
use crate::state::derived::{Derived, Kept};
use crate::state::sheet::Sheet;
use crate::state::GameState;
use crate::value::{Ability, Value};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// When on, every recomputation is compared with a full derivation, and a difference panics.
static VERIFY: AtomicBool = AtomicBool::new(false);

/// How recomputations went: replayed to the end, derived in full from a later layer, derived in
/// full from the first (for tests that check the replay is exercised).
static OUTCOMES: [std::sync::atomic::AtomicUsize; 3] = [
    std::sync::atomic::AtomicUsize::new(0),
    std::sync::atomic::AtomicUsize::new(0),
    std::sync::atomic::AtomicUsize::new(0),
];

/// How many recomputations so far were replayed to the end, derived in full from a later layer,
/// and derived in full from the first.
#[doc(hidden)]
pub fn recomputation_outcomes() -> [usize; 3] {
    [0, 1, 2].map(|i| OUTCOMES[i].load(Ordering::Relaxed))
}

/// Compares every later recomputation with a full derivation (for tests).
#[doc(hidden)]
pub fn verify_recomputation(on: bool) {
    VERIFY.store(on, Ordering::Relaxed);
}

/// The values after `changes`, starting from `prev`, the derivation made before them.
pub(crate) fn derive_after(state: &GameState, prev: Arc<Derived>, changes: &Changes) -> Derived {
    let n = state.ruleset.layers.len();
    if trail_of(&prev).is_none_or(|t| t.len() != n)
        || n == 0
        || prev.sheet.objects.len() != changes.known
    {
        return derive(state, false);
    }
    let prev = Arc::try_unwrap(prev).unwrap_or_else(|a| Derived::clone(&a));
    let (d, outcome) = match Replay::new(state, prev, changes) {
        Ok(mut r) => match r.run() {
            Ok(()) => (r.finish(), 0),
            Err(Fail(_line)) => {
                #[cfg(debug_assertions)]
                if std::env::var_os("RULECRAFT_TRACE_REPLAY").is_some() {
                    let li = r.trail.len();
                    eprintln!("replay stopped in layer {li} (incremental.rs:{_line})");
                }
                let d = r.fall_back();
                let full = d.reused_layers + d.replayed_layers == 0;
                (d, if full { 2 } else { 1 })
            }
        },
        Err(Fail(_line)) => {
            #[cfg(debug_assertions)]
            if std::env::var_os("RULECRAFT_TRACE_REPLAY").is_some() {
                eprintln!("replay refused (incremental.rs:{_line})");
            }
            (derive(state, false), 2)
        }
    };
    OUTCOMES[outcome].fetch_add(1, Ordering::Relaxed);
    if VERIFY.load(Ordering::Relaxed) {
        compare_with_full(state, &d);
    }
    d
}

/// Panics where a recomputation differs from a full derivation, naming each value that differs.
fn compare_with_full(state: &GameState, d: &Derived) {
    let full = derive(state, false);
    if full.sheet.objects == d.sheet.objects && full.sheet.players == d.sheet.players {
        return;
    }
    let rs = &state.ruleset;
    let mut diff = Vec::new();
    for o in 0..full.sheet.objects.len() {
        let (a, b) = (&full.sheet.objects[o], &d.sheet.objects[o]);
        for c in 0..a.len() {
            if a[c] != b[c] {
                diff.push(format!(
                    "{} {}: {} in full, {} recomputed",
                    state.objects[o].name, rs.characteristics[c].name, a[c], b[c]
                ));
            }
        }
    }
    if full.sheet.players != d.sheet.players {
        diff.push("player properties differ".into());
    }
    panic!(
        "a recomputation differs from a full derivation (reused {} layers, replayed {}):\n{}",
        d.reused_layers,
        d.replayed_layers,
        diff.join("\n")
    );
}

impl Shape {
    fn of(
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
            open_aggregates: super::derive::has_open_aggregates(def, lid, fresh, scans),
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
                change_reads_others(&op.change)
                    && !matches!(op.change, Change::SetNumber(_) | Change::Modify(_))
            }),
            ops_read_others: ops.iter().any(|op| op_reads_others(op)),
            tested_reads,
        }
    }
}

/// The replay met what it cannot show unchanged: derive from the current layer in full. Carries
/// the line that found it, for `RULECRAFT_TRACE_REPLAY`.
#[derive(Debug)]
struct Fail(u32);

/// A `Fail` at this line.
macro_rules! fail {
    () => {
        Fail(line!())
    };
}

type Res<T> = Result<T, Fail>;

/// An object whose values are worked out again.
struct Dirty {
    /// Its values at this point as the previous derivation had them; `None` for a new object.
    old: Option<Vec<Value>>,
    /// Its final values in the previous derivation (`None` for a new object), to undo a replay
    /// that stops partway.
    final_old: Option<Vec<Value>>,
    /// Its values at the start of the current layer.
    at_layer_start: Vec<Value>,
    /// What of its own state changed (not its values).
    diff: StateDiff,
}

/// What of an object's own state changed since the previous derivation.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct StateDiff {
    new: bool,
    /// Zone or incarnation: `in play`, `in ZONE`, locked effects.
    zone: bool,
    counters: bool,
    /// What it is attached to: `enchanted`, `linked`.
    attached: bool,
    /// `on top of ZONE`.
    timestamp: bool,
    /// Face, choices, class, owner, name: beyond this replay.
    other: bool,
}

impl StateDiff {
    fn of(old: &GameObject, new: &GameObject) -> Self {
        StateDiff {
            new: false,
            zone: old.zone != new.zone || old.incarnation != new.incarnation,
            counters: old.counters != new.counters,
            attached: old.attached_to != new.attached_to,
            timestamp: old.timestamp != new.timestamp,
            other: old.face_down != new.face_down
                || old.choices != new.choices
                || old.class != new.class
                || old.owner != new.owner
                || old.name != new.name,
        }
    }

    /// Whether an effect's conditions or amounts can see this difference: every condition may
    /// test the zone, the attachment or the top of a zone; only some read counters.
    fn seen_by(self, reads_counters: bool) -> bool {
        self.new
            || self.zone
            || self.attached
            || self.timestamp
            || self.other
            || (self.counters && reads_counters)
    }
}

/// One entry of a layer's new order of steps.
enum Entry {
    /// The previous derivation's step, kept.
    Kept(usize),
    /// The previous derivation's step whose effect no longer applies.
    Gone(usize),
    /// An effect that applies now and did not before.
    New(Candidate),
}

struct Replay<'a> {
    state: &'a GameState,
    /// The state as the previous derivation saw it, made when first needed (where objects that
    /// existed changed).
    old: Option<GameState>,
    changes: &'a Changes,
    prev: Vec<Arc<LayerTrail>>,
    /// New values: the dirty objects' as they stand at this point, the rest the previous result.
    sheet: Sheet,
    dirty: BTreeMap<ObjectId, Dirty>,
    /// The keys of `dirty`, in id order (`dirty_ids`).
    dirty_list: std::rc::Rc<[ObjectId]>,
    /// The subjects of effects, in the layers replayed so far, that start anew or whose subjects
    /// changed; `None` for one that does not exist.
    started: FxHashMap<EffectKey, Option<Subjects>>,
    /// The new trail, one entry per layer replayed.
    trail: Vec<Arc<LayerTrail>>,
    new_effects: Vec<Arc<CreatedEffect>>,
    gone_effects: FxHashSet<u32>,
    /// The first layer the change reached.
    reached: Option<usize>,
    /// Order trials of this layer that changed nothing, by effects alike (`TrialKey`), with the
    /// values of the objects tried: the same trial on the same values passes again.
    trials: FxHashMap<TrialKey, Vec<Vec<Value>>>,
    /// `LaterShape`s, by effect definition (its address) and layer.
    later_shapes: FxHashMap<(usize, u16), LaterShape>,
    /// Subject lists with one subject put in or taken out, by the list (its address; it is kept
    /// alive here) and the subject: effects alike share their lists (`scan`), and their new ones.
    toggles: FxHashMap<(usize, Subject), (Subjects, Subjects)>,
    /// A list of subjects to fill again for each step (`members_into`).
    mine: Vec<Subject>,
    /// A list of objects to fill again for each step (the moved ones, in `kept`).
    moved_list: Vec<ObjectId>,
    /// Aggregates (`Aggregate::key`) to which each object adds what it alone decides (`delta`).
    alone: FxHashMap<usize, bool>,
    /// The dirty members with old values of previous steps' subject lists (`list_key`), while the
    /// dirty objects stay the same.
    old_members: FxHashMap<(usize, usize), std::rc::Rc<[Subject]>>,
}

/// What the order trials need to know of a later static effect in a layer, worked out once.
#[derive(Clone, Copy)]
struct LaterShape {
    /// It starts in this layer, has no "as long as", and whom it applies to does not name its
    /// source: copies of it with the same "you" pick the same objects.
    picks_alike: bool,
    /// It does the same whichever object its source is (`same_whatever_source`).
    same_whatever_source: bool,
    /// Its amounts read other objects.
    reads_others: bool,
}

/// An order trial between effects that do the same whichever object their source is: the earlier
/// effect's ability, "you" and whether it starts here; the later one's ability and "you"; the
/// objects tried and which of them the earlier one applies to.
type TrialKey = (
    usize,
    Option<crate::ids::PlayerId>,
    bool,
    usize,
    Option<crate::ids::PlayerId>,
    Vec<Subject>,
    Vec<bool>,
);

impl<'a> Replay<'a> {
    fn new(state: &'a GameState, prev: Derived, changes: &'a Changes) -> Res<Self> {
        let prev_trail = trail_of(&prev).cloned().unwrap_or_default();
        let Derived { mut sheet, .. } = prev;
        let (new_effects, gone_effects) = match &changes.old_effects {
            Some(old) => {
                let before: FxHashSet<u32> = old.iter().map(|e| e.id).collect();
                let now: FxHashSet<u32> = state.effects.iter().map(|e| e.id).collect();
                (
                    state
                        .effects
                        .iter()
                        .filter(|e| !before.contains(&e.id))
                        .cloned()
                        .collect(),
                    old.iter()
                        .filter(|e| !now.contains(&e.id))
                        .map(|e| e.id)
                        .collect(),
                )
            }
            None => (Vec::new(), FxHashSet::default()),
        };
        let mut r = Replay {
            state,
            old: None,
            changes,
            prev: prev_trail,
            sheet: Sheet::default(),
            dirty: BTreeMap::new(),
            dirty_list: std::rc::Rc::from([]),
            started: FxHashMap::default(),
            trail: Vec::new(),
            new_effects,
            gone_effects,
            reached: None,
            trials: FxHashMap::default(),
            later_shapes: FxHashMap::default(),
            toggles: FxHashMap::default(),
            mine: Vec::new(),
            moved_list: Vec::new(),
            alone: FxHashMap::default(),
            old_members: FxHashMap::default(),
        };
        if changes.objects.len() + (state.objects.len() - changes.known) > r.most_dirty() {
            return Err(fail!());
        }
        // The objects whose own state changed are dirty from the first layer on: their base values
        // now, and as they were.
        for &x in &changes.objects {
            let Some(was) = changes.old_object(x) else {
                return Err(fail!());
            };
            let diff = StateDiff::of(was, state.obj(x));
            r.refuse_moving_statics(changes, x, diff)?;
            let final_old = sheet.objects[x.index()].to_vec();
            let old_base = r.undo_row(&final_old, x, 0);
            let base = state.base_row(state.obj(x));
            sheet.objects[x.index()].clone_from_slice(&base);
            r.dirty.insert(
                x,
                Dirty {
                    old: Some(old_base),
                    final_old: Some(final_old),
                    at_layer_start: base,
                    diff,
                },
            );
        }
        for i in changes.known..state.objects.len() {
            let x = ObjectId(i as u32);
            let diff = StateDiff {
                new: true,
                ..StateDiff::default()
            };
            r.refuse_moving_statics(changes, x, diff)?;
            let base = state.base_row(state.obj(x));
            sheet.objects.push_row(&base);
            r.dirty.insert(
                x,
                Dirty {
                    old: None,
                    final_old: None,
                    at_layer_start: base,
                    diff,
                },
            );
        }
        r.sheet = sheet;
        r.dirty_list = r.dirty.keys().copied().collect();
        Ok(r)
    }

    /// An object whose static abilities could start, end or move (it entered, left, turned, was
    /// attached) is beyond this replay, and so is a change of face, choices or class.
    fn refuse_moving_statics(&self, changes: &Changes, x: ObjectId, diff: StateDiff) -> Res<()> {
        if diff.other {
            return Err(fail!());
        }
        let now = self.state.obj(x);
        if diff.new && now.face_down {
            return Err(fail!());
        }
        let statics = |o: &GameObject| !self.state.content.class(o.class).statics.is_empty();
        let has_statics = statics(now)
            || changes.old_object(x).is_some_and(statics)
            || self
                .prev
                .iter()
                .any(|lt| lt.grants.iter().any(|((o, _), _)| *o == x));
        let sources = self.state.effects.iter().any(|e| e.source == x);
        if (has_statics || sources) && (diff.new || diff.zone || diff.attached || diff.timestamp) {
            return Err(fail!());
        }
        Ok(())
    }

    /// An object's values at the start of layer `from` in the previous derivation, from its final
    /// ones: the writes of `from` and of every later layer undone.
    fn undo_row(&self, final_row: &[Value], x: ObjectId, from: usize) -> Vec<Value> {
        let mut row = final_row.to_vec();
        for lt in self.prev[from..].iter().rev() {
            for (cell, v) in lt.before_of(x) {
                if let Cell::Object(_, c) = cell {
                    row[c.index()] = v.clone();
                }
            }
        }
        row
    }

    fn run(&mut self) -> Res<()> {
        for li in 0..self.prev.len() {
            for (x, d) in self.dirty.iter_mut() {
                d.at_layer_start
                    .clone_from_slice(&self.sheet.objects[x.index()]);
            }
            match self.layer(li)? {
                Some(lt) => {
                    self.reached.get_or_insert(li);
                    self.trail.push(Arc::new(lt));
                }
                None => self.trail.push(self.prev[li].clone()),
            }
        }
        Ok(())
    }

    /// The result once every layer is replayed.
    fn finish(self) -> Derived {
        let n = self.trail.len();
        let reused = self.reached.unwrap_or(n);
        let mut sheet = self.sheet;
        sheet.objects.share();
        Derived {
            sheet,
            explanation: None,
            reused_layers: reused,
            replayed_layers: n - reused,
            changed: Some(self.dirty.keys().copied().collect()),
            trail: Kept::new(self.trail),
        }
    }

    /// Derives from the layer the replay stopped in, in full: the values at that layer's start are
    /// the previous ones, with the dirty objects' as replayed.
    fn fall_back(self) -> Derived {
        let li = self.trail.len();
        if li == 0 {
            return derive(self.state, false);
        }
        let mut sheet = self.sheet;
        for (x, d) in &self.dirty {
            if let Some(f) = &d.final_old {
                sheet.objects[x.index()].clone_from_slice(f);
            }
        }
        for lt in self.prev[li..].iter().rev() {
            for (cell, v) in lt.before.iter() {
                *super::derive::cell_mut(&mut sheet, cell) = v.clone();
            }
        }
        for (x, d) in &self.dirty {
            sheet.objects[x.index()].clone_from_slice(&d.at_layer_start);
        }
        let reused = self.reached.unwrap_or(li).min(li);
        let mut d = continue_from(self.state, self.trail, sheet, li);
        d.reused_layers = reused;
        d.replayed_layers = li - reused;
        d
    }

    /// The dirty objects, in id order.
    fn dirty_ids(&self) -> std::rc::Rc<[ObjectId]> {
        self.dirty_list.clone()
    }

    /// Whether an object's values or own state differ from before here, as an effect that does
    /// (or does not) read counters sees it.
    fn moved(&self, x: ObjectId, reads_counters: bool) -> bool {
        self.dirty.get(&x).is_some_and(|d| {
            d.diff.seen_by(reads_counters)
                || d.old.as_deref() != Some(&self.sheet.objects[x.index()][..])
        })
    }
}

impl Replay<'_> {
    /// Replays one layer; `None` when the change does not reach it: the dirty objects' values are
    /// what they were, and go through its steps as they did.
    fn layer(&mut self, li: usize) -> Res<Option<LayerTrail>> {
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
        if layer_def.face_down && self.dirty.values().any(|d| d.diff.other) {
            return Err(fail!());
        }
        let counters_moved = self.dirty.values().any(|d| d.diff.counters);
        let counters_read = counters_moved && old_lt.steps.iter().any(|s| reads_counters(&s.cand));
        let reached = !gone.is_empty()
            || !fresh_new.is_empty()
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
        let writes_of =
            |g: &(bool, usize)| group_writes.iter().find(|(x, _)| x == g).map(|(_, f)| f);
        let mut new_steps: Vec<Arc<Applied>> = Vec::with_capacity(seq.len());
        let mut old_pos = 0usize;
        for k in 0..seq.len() {
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
                        self.started.insert(c.key, Some(applied.subjects.clone()));
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
        let mut before: FxHashMap<(EffectKey, crate::ids::Timestamp), usize> = FxHashMap::default();
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

    /// Makes objects dirty just before the previous step `upto` of layer `li`: their values there
    /// are their previous ones (the steps before applied to them as they were). Players cannot be
    /// followed. The steps go once over all of them: each applies to its subjects one by one (CR
    /// 613.5), so applying it to several at once is applying it to each.
    fn make_dirty(
        &mut self,
        subjects: &[Subject],
        li: usize,
        old_lt: &LayerTrail,
        upto: usize,
    ) -> Res<()> {
        let mut xs: Vec<ObjectId> = Vec::new();
        for s in subjects {
            match s {
                Subject::Object(o) if !self.dirty.contains_key(o) => xs.push(*o),
                Subject::Object(_) => {}
                Subject::Player(_) => return Err(fail!()),
            }
        }
        if xs.is_empty() {
            return Ok(());
        }
        xs.sort_unstable();
        xs.dedup();
        if self.dirty.len() + xs.len() > self.most_dirty() {
            return Err(fail!());
        }
        let mut rows = Vec::with_capacity(xs.len());
        for &x in &xs {
            let final_old = self.sheet.objects[x.index()].to_vec();
            let start = self.undo_row(&final_old, x, li);
            self.sheet.objects[x.index()].clone_from_slice(&start);
            rows.push((final_old, start));
        }
        let lid = LayerId(li as u16);
        // Effects alike share their subject lists: each list's members are found once.
        let mut found: FxHashMap<(usize, usize), Vec<Subject>> = FxHashMap::default();
        for step in &old_lt.steps[..upto] {
            let mine = found
                .entry(list_key(&step.subjects))
                .or_insert_with(|| members(&step.subjects, &xs));
            if mine.is_empty() {
                continue;
            }
            let params = params_for(step.as_step(), mine, lid)?;
            apply_keeping(
                self.state,
                &mut self.sheet,
                &step.cand,
                lid,
                mine,
                params.as_deref(),
                None,
                &mut |_, _, _, _| {},
                None,
            );
        }
        for (x, (final_old, start)) in xs.into_iter().zip(rows) {
            let row = self.sheet.objects[x.index()].to_vec();
            self.dirty.insert(
                x,
                Dirty {
                    old: Some(row),
                    final_old: Some(final_old),
                    at_layer_start: start,
                    diff: StateDiff::default(),
                },
            );
        }
        self.dirty_list = self.dirty.keys().copied().collect();
        self.old_members.clear();
        Ok(())
    }

    /// How many objects a replay follows at most: past that (a change that reaches a good part of
    /// the board), deriving the rest of the layers for every object costs less.
    fn most_dirty(&self) -> usize {
        (self.state.objects.len() / 8).max(64)
    }

    /// Applies a previous step, as it was, to the old values of the dirty objects it applied to.
    fn apply_old(&mut self, step: &Applied, lid: LayerId) -> Res<()> {
        // Effects alike share their subject lists: each list's dirty members are found once.
        let key = list_key(&step.subjects);
        let mine = match self.old_members.get(&key) {
            Some(m) => m.clone(),
            None => {
                let mut mine = members(&step.subjects, &self.dirty_list);
                // New objects have no old values.
                mine.retain(|s| match s {
                    Subject::Object(o) => self.dirty.get(o).is_some_and(|d| d.old.is_some()),
                    Subject::Player(_) => true,
                });
                let mine: std::rc::Rc<[Subject]> = mine.into();
                self.old_members.insert(key, mine.clone());
                mine
            }
        };
        self.apply_old_to(step, lid, &mine)
    }

    /// `apply_old`, to these subjects.
    fn apply_old_to(&mut self, step: &Applied, lid: LayerId, mine: &[Subject]) -> Res<()> {
        if mine.is_empty() {
            return Ok(());
        }
        let params = params_for(step.as_step(), mine, lid)?;
        let objs = mine.iter().filter_map(|s| match s {
            Subject::Object(o) => Some(*o),
            Subject::Player(_) => None,
        });
        if !same_for_all(&step.cand, lid) {
            self.ensure_old();
        }
        self.swap_old(objs.clone());
        let state = self.old.as_ref().unwrap_or(self.state);
        apply_keeping(
            state,
            &mut self.sheet,
            &step.cand,
            lid,
            mine,
            params.as_deref(),
            None,
            &mut |_, _, _, _| {},
            None,
        );
        self.swap_old(objs);
        Ok(())
    }

    /// CR 205.1a, 205.3d, at the end of a layer: the dirty objects keep only the symbols their
    /// card types allow (as the derivation does for every object), new values and old alike.
    fn follow_types(&mut self, lid: LayerId) {
        if self.state.ruleset.tied_in_layer(lid).is_empty() {
            return;
        }
        let mut known = Vec::new();
        let xs = self.dirty_ids();
        for &x in xs.iter() {
            for old in [false, true] {
                if old {
                    if self.dirty[&x].old.is_none() {
                        continue;
                    }
                    self.swap_old([x]);
                }
                // What is allowed comes from the ruleset alone: the state as it was is not needed.
                let writes = super::derive::follow_types_of(
                    self.state,
                    &self.sheet.objects[x.index()],
                    lid,
                    &mut known,
                );
                for (ch, v, _) in writes {
                    self.sheet.objects[x.index()][ch.index()] = v;
                }
                if old {
                    self.swap_old([x]);
                }
            }
        }
    }

    /// Makes the state as it was before the changes, where objects that existed changed.
    fn ensure_old(&mut self) {
        if self.old.is_none() && !self.changes.objects.is_empty() {
            self.old = Some(self.state.as_before(self.changes));
        }
    }

    /// Exchanges the sheet's values of these dirty objects with their old values.
    fn swap_old(&mut self, xs: impl IntoIterator<Item = ObjectId>) {
        for x in xs {
            if let Some(old) = self.dirty.get_mut(&x).and_then(|d| d.old.as_mut()) {
                for (a, b) in self.sheet.objects[x.index()].iter_mut().zip(old.iter_mut()) {
                    std::mem::swap(a, b);
                }
            }
        }
    }
}

/// Whether an effect starts in this layer (its first part is here).
fn is_fresh(c: &Candidate, lid: LayerId, rs: &crate::ruleset::Ruleset) -> bool {
    match &c.body {
        Body::Effect(def) => def.first_layer() == Some(lid),
        Body::Counter { kind, .. } => rs.counters[kind.index()].first_layer(rs) == Some(lid),
        Body::FaceDown => true,
    }
}

fn reads_counters(c: &Candidate) -> bool {
    matches!(&c.body, Body::Effect(d) if d.reads_counters())
}

/// Whether an effect's parts in a layer do the same to every subject whatever the state: counters,
/// face-down values, written amounts.
fn same_for_all(cand: &Candidate, lid: LayerId) -> bool {
    match &cand.body {
        Body::Counter { .. } | Body::FaceDown => true,
        Body::Effect(_) => {
            ops_of(cand, lid).all(|op| super::change::uniform_op(op) || reads_nothing(&op.change))
        }
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

/// The effects after position `k` in its group.
fn later_in_group<'s>(
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
struct LaterOf<'s> {
    seq: &'s [Entry],
    groups: &'s [(bool, usize)],
    k: usize,
    old_lt: &'s LayerTrail,
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

    fn is_empty(self) -> bool {
        self.iter().next().is_none()
    }
}

/// An order trial decided in `check_order`: a later effect, the objects it is tried on, its
/// parameters for them where kept, and what stands for it (`passed`).
struct Trial<'y> {
    y: &'y Later<'y>,
    ys: Vec<Subject>,
    known: Option<Vec<Vec<Value>>>,
    memo: Option<TrialMemo>,
    source_tried: bool,
}

/// A later effect's trial that stands for those of effects alike: its ability, "you" and objects.
type TrialMemo = (usize, Option<crate::ids::PlayerId>, Vec<Subject>);

/// The trials of one step: queued ones, the objects they will make dirty and what stands for
/// them; the ones that passed.
struct Trials<'y> {
    queued: Vec<Trial<'y>>,
    objects: Vec<ObjectId>,
    memos: FxHashSet<TrialMemo>,
    /// Trials that changed nothing, by what decides them (see `same_whatever_source`).
    passed: FxHashSet<TrialMemo>,
}

/// The step the trials are for: where it is, whether it starts here, and what `view` reads of it.
struct TrialAt<'a> {
    old_lt: &'a LayerTrail,
    i: usize,
    lid: LayerId,
    fresh: bool,
    def: &'a EffectDef,
    spec: &'a ViewSpec<'a>,
    overrides: &'a Overrides,
    x_alike: Option<(usize, Option<crate::ids::PlayerId>)>,
}

/// What `view` reads of an effect in a layer, worked out once for all its trials: the aggregates
/// of its conditions (where it starts here) and amounts, and the values its amounts read of
/// each subject.
struct ViewSpec<'d> {
    aggs: Vec<Aggregate<'d>>,
    own: Vec<CharId>,
}

impl<'d> ViewSpec<'d> {
    fn of(def: &'d EffectDef, created: bool, lid: LayerId, fresh: bool) -> Self {
        let mut aggs = if fresh {
            super::derive::condition_aggregates(def, !created)
        } else {
            Vec::new()
        };
        let mut own = Vec::new();
        for op in def.ops.iter().filter(|o| o.layer == lid) {
            if let Change::SetNumber(e) | Change::Modify(e) = &op.change {
                e.aggregates(&mut aggs);
                own_reads(e, &mut own);
            }
        }
        ViewSpec { aggs, own }
    }
}

/// Whether an effect does the same in a layer whichever object its source is, given its "you"
/// and whom it applies to: many permanents with one ability ("creatures you control get +1/+1")
/// then change the same objects alike, and one trial stands for them all.
fn same_whatever_source(def: &EffectDef, lid: LayerId) -> bool {
    fn alike(c: &Change) -> bool {
        use crate::condition::PlayerRef;
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
struct Later<'s> {
    cand: &'s Candidate,
    subjects: Option<&'s Subjects>,
    /// Its step, where it had one (for what it touches, worked out once).
    step: Option<&'s Applied>,
}

impl Later<'_> {
    fn touches(
        &self,
        state: &GameState,
        lid: LayerId,
    ) -> std::borrow::Cow<'_, [(crate::ids::SlotTarget, super::change::Touch)]> {
        match self.step {
            Some(s) => std::borrow::Cow::Borrowed(
                s.known.touches.get_or_init(|| s.cand.touches(state, lid)),
            ),
            None => std::borrow::Cow::Owned(self.cand.touches(state, lid)),
        }
    }
}

/// `list` with `s` taken out (found at `Ok(k)`) or put in (at `Err(k)`), made in one allocation.
fn toggled(list: &[Subject], at: Result<usize, usize>, s: Subject) -> Subjects {
    match at {
        Ok(k) => list[..k].iter().chain(&list[k + 1..]).copied().collect(),
        Err(k) => list[..k]
            .iter()
            .copied()
            .chain(std::iter::once(s))
            .chain(list[k..].iter().copied())
            .collect(),
    }
}

/// The subjects in `list` (in id order) that are among `xs` (in id order).
fn members(list: &[Subject], xs: &[ObjectId]) -> Vec<Subject> {
    let mut out = Vec::new();
    members_into(list, xs, &mut out);
    out
}

/// A subject list's address and length: which list it is, while it is kept alive. Only the
/// previous derivation's lists are keyed so (the replay holds its trail to the end).
fn list_key(list: &Subjects) -> (usize, usize) {
    (list.as_ptr() as usize, list.len())
}

/// `members`, into `out` (emptied first), so a caller that goes through many steps allocates once.
fn members_into(list: &[Subject], xs: &[ObjectId], out: &mut Vec<Subject>) {
    out.clear();
    if list.len() < xs.len() * 4 {
        out.extend(
            list.iter()
                .filter(|s| matches!(s, Subject::Object(o) if xs.binary_search(o).is_ok())),
        );
    } else {
        out.extend(
            xs.iter()
                .map(|x| Subject::Object(*x))
                .filter(|s| list.binary_search(s).is_ok()),
        );
    }
}

/// Whether any of `xs` (in id order) is in `list` (in id order).
fn any_member(list: &[Subject], xs: &[ObjectId]) -> bool {
    if list.len() < xs.len() * 4 {
        list.iter()
            .any(|s| matches!(s, Subject::Object(o) if xs.binary_search(o).is_ok()))
    } else {
        xs.iter()
            .any(|x| list.binary_search(&Subject::Object(*x)).is_ok())
    }
}

/// Whether an operation's amounts read more than the subject (aggregates, other objects): then
/// the step keeps them, and a replay takes them from there.
fn op_reads_others(op: &Op) -> bool {
    change_reads_others(&op.change)
}

/// Whether a change reads more than the subject's own values and what it names: aggregates,
/// other objects, player properties.
fn change_reads_others(c: &Change) -> bool {
    match c {
        Change::SetNumber(e) | Change::Modify(e) => !e.is_local(),
        Change::TextOf(_) | Change::AbilitiesPer { .. } | Change::AbilitiesOf { .. } => true,
        Change::WithIntrinsic { change, .. } => change_reads_others(change),
        Change::SwitchWith(_)
        | Change::SetSymbols(_)
        | Change::SetInCategories { .. }
        | Change::AddSymbols(_)
        | Change::RemoveSymbols(_)
        | Change::SetAbilities(_)
        | Change::AddAbilities(_)
        | Change::RemoveAbilities(_)
        | Change::SetPlayer(_)
        | Change::SetText(_)
        | Change::CopyOf(_)
        | Change::SetValues(_)
        | Change::MergeAbilities(_)
        | Change::ReplaceWord(..) => false,
    }
}

/// Whether an effect reads counters.
fn reads_counters_in(c: &Candidate) -> bool {
    reads_counters(c)
}

/// Whether an expression reads the subject's own values (outside aggregates).
fn reads_own(e: &NumExpr) -> bool {
    match e {
        NumExpr::Char(r, _)
        | NumExpr::SetSize(r, _)
        | NumExpr::Counters(r, _)
        | NumExpr::AllCounters(r) => *r == crate::condition::ObjRef::This,
        // Fixed when a spell resolved: one number per subject.
        NumExpr::Prop(..) | NumExpr::Fixed(_) => true,
        NumExpr::Count(_) | NumExpr::Sum(..) | NumExpr::Distinct(..) => false,
        NumExpr::Add(a, b)
        | NumExpr::Sub(a, b)
        | NumExpr::Mul(a, b)
        | NumExpr::Max(a, b)
        | NumExpr::Min(a, b) => reads_own(a) || reads_own(b),
        NumExpr::Neg(a) => reads_own(a),
        NumExpr::Const(_) | NumExpr::Nothing | NumExpr::Param(_) => false,
    }
}

/// The characteristics an expression reads of the subject itself, outside aggregates.
fn own_reads(e: &NumExpr, out: &mut Vec<crate::ids::CharId>) {
    match e {
        NumExpr::Char(crate::condition::ObjRef::This, c)
        | NumExpr::SetSize(crate::condition::ObjRef::This, c)
            if !out.contains(c) =>
        {
            out.push(*c);
        }
        NumExpr::Add(a, b)
        | NumExpr::Sub(a, b)
        | NumExpr::Mul(a, b)
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
        NumExpr::Max(a, b) | NumExpr::Min(a, b) => {
            (moves_by(a, deltas)? == 0 && moves_by(b, deltas)? == 0).then_some(0)
        }
        _ => Some(0),
    }
}

/// An effect's kept parameters (`op_params` order) moved as its aggregates moved.
fn shift_params(ops: &[&Op], kept: &[Value], deltas: &FxHashMap<usize, i64>) -> Option<Vec<Value>> {
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
fn ops_in(cand: &Candidate, lid: LayerId) -> Vec<&Op> {
    ops_of(cand, lid).collect()
}

/// `ops_in`, without collecting them.
fn ops_of(cand: &Candidate, lid: LayerId) -> impl Iterator<Item = &Op> {
    let ops: &[Op] = match &cand.body {
        Body::Effect(def) => &def.ops,
        _ => &[],
    };
    ops.iter().filter(move |o| o.layer == lid)
}

/// A step's kept parameters for some of its subjects, where its amounts read more than the
/// subject; `None` where they are worked out from the subject as it is applied.
fn params_for(step: StepRef, mine: &[Subject], lid: LayerId) -> Res<Option<Vec<Vec<Value>>>> {
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
struct StepRef<'a> {
    cand: &'a Candidate,
    subjects: &'a [Subject],
    params: Option<&'a [Vec<Value>]>,
    you: Option<crate::ids::PlayerId>,
}

impl Applied {
    fn as_step(&self) -> StepRef<'_> {
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
struct Now<'s> {
    step: &'s Applied,
    subjects: Option<Subjects>,
    params: Option<Option<Arc<Vec<Vec<Value>>>>>,
    aggs: Option<AggregateValues>,
    partners: Option<Arc<[PartnerThen]>>,
}

impl<'s> Now<'s> {
    fn new(step: &'s Applied) -> Self {
        Now {
            step,
            subjects: None,
            params: None,
            aggs: None,
            partners: None,
        }
    }

    fn subjects(&self) -> &Subjects {
        self.subjects.as_ref().unwrap_or(&self.step.subjects)
    }

    fn as_step(&self) -> StepRef<'_> {
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
    fn finish(self, prev: &Arc<Applied>) -> Arc<Applied> {
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

impl Replay<'_> {
    /// A previous step whose effect still applies here: whether it exists, whom it applies to and
    /// what it does may move with the dirty objects, and it must not come to wait for a later one.
    fn kept(
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
        let shape = step
            .known
            .shape
            .get_or_init(|| Shape::of(cand, state, def, lid, fresh));
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
            let nodes = super::derive::condition_aggregates(def, cand.created.is_none());
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
                if shape.while_refers {
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
        // Whom it applies to, where decided here.
        if fresh && on_objects {
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
    fn delta(
        &mut self,
        cand: &Candidate,
        you: Option<crate::ids::PlayerId>,
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
        let targets: Vec<Subject> = match &cand.created {
            Some(c) => c.targets.to_vec(),
            None => Vec::new(),
        };
        let mut delta: i64 = 0;
        for &x in moved {
            let now = Ctx::new(self.state, &self.sheet, cand.source, you, &targets)
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
        let cand = &step.cand;
        let targets: Vec<Subject> = match &cand.created {
            Some(c) => c.targets.to_vec(),
            None => Vec::new(),
        };
        let you = step.you;
        let mut delta: i64 = 0;
        for &x in moved {
            let now = Ctx::new(self.state, &self.sheet, cand.source, you, &targets)
                .overriding(Some(overrides))
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
                            .overriding(Some(old_overrides))
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
        if !moved_any && !new_member && !moved_member && out.subjects.len() == step.subjects.len() {
            return Ok(step.params.clone());
        }
        if ops.iter().any(|op| {
            !matches!(op.change, Change::SetNumber(_) | Change::Modify(_))
                && op_reads_others(op)
                || matches!(&op.change, Change::SetNumber(e) | Change::Modify(e) if e.refers_to_others())
        }) {
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
                        Change::SetNumber(e) | Change::Modify(e) => e.is_local(),
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

    /// Applies a step, as replayed, to the dirty objects among its subjects.
    fn apply_new(
        &mut self,
        out: StepRef,
        lid: LayerId,
        xs: &[ObjectId],
        overrides: &Overrides,
    ) -> Res<()> {
        let _ = overrides;
        let mut mine = std::mem::take(&mut self.mine);
        members_into(out.subjects, xs, &mut mine);
        let r = self.apply_new_to(out, lid, &mine);
        self.mine = mine;
        r
    }

    /// `apply_new`, to these subjects.
    fn apply_new_to(&mut self, out: StepRef, lid: LayerId, mine: &[Subject]) -> Res<()> {
        if mine.is_empty() {
            return Ok(());
        }
        let params = params_for(out, mine, lid)?;
        let mut grants = false;
        apply_keeping(
            self.state,
            &mut self.sheet,
            out.cand,
            lid,
            mine,
            params.as_deref(),
            None,
            &mut |_, _, _, v| {
                if let Value::Abilities(l) = v {
                    grants |= l.iter().any(|a| matches!(a, Ability::Static { .. }));
                }
            },
            None,
        );
        if grants {
            // A static ability given to a dirty object: its effects would start.
            return Err(fail!());
        }
        Ok(())
    }

    /// CR 613.8: the step was applied before each later effect of its group; it must still wait
    /// for none that writes what it reads. Tried on the objects whose treatment can differ from
    /// before: the moved ones, every subject of a new effect, and every subject of one whose amounts
    /// moved. Keeps, in `out`, what those later effects would do at this point. `pre`: objects to
    /// make dirty here with the trials' ones (the caller makes them dirty where no trial did).
    #[allow(clippy::too_many_arguments)]
    fn check_order(
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
        // CR 613.8a: a later kept effect that changes nothing this one reads of the objects a
        // trial tries (moved ones) cannot change whom this one applies to or what it does, so it
        // needs no trial. Not so where this static ability's source moved ("you" and whether it
        // still has the ability are read of it), nor for one whose amounts read other objects
        // (what it would do here is kept in `partners`).
        let tested = &step
            .known
            .shape
            .get_or_init(|| Shape::of(&step.cand, state, def, lid, fresh))
            .tested_reads;
        let source_moved = step.cand.created.is_none()
            && step
                .cand
                .source
                .is_some_and(|o| moved_all.iter().any(|(x, _)| *x == o));
        let later: Vec<Later> = later
            .iter()
            .filter(|y| {
                source_moved
                    || y.step.is_none()
                    || ops_of(y.cand, lid).any(op_reads_others)
                    || may_read(tested, &y.touches(state, lid))
            })
            .collect();
        if later.is_empty() {
            return Ok(());
        }
        let reads_counters = def.reads_counters();
        let mut partners: Vec<super::derive::PartnerThen> = step
            .partners
            .as_deref()
            .map(<[_]>::to_vec)
            .unwrap_or_default();
        let mut partners_changed = false;
        let spec = ViewSpec::of(def, step.cand.created.is_some(), lid, fresh);
        // What it reads of other objects directly (its source's values, the object its source is
        // attached to, the top of a zone), and "you" (its source's controller), are beyond
        // `view`: a trial that changes such an object is beyond this replay.
        let reads_directly = match &def.affects {
            Affects::Objects(c) | Affects::Players(c) => c.refers_to_others(),
        } || def.while_cond.as_ref().is_some_and(Cond::refers_to_others)
            || def.ops.iter().any(|op| {
                op.layer == lid
                    && matches!(&op.change, Change::SetNumber(e) | Change::Modify(e) if e.refers_to_others())
            });
        // This effect's trials stand for those of every effect alike: one that does the same
        // whichever object its source is, sees the tried objects alike, and reads no aggregate
        // of its own conditions.
        let x_alike = (step.cand.created.is_none()
            && overrides.is_empty()
            && same_whatever_source(def, lid)
            && !match &def.affects {
                Affects::Objects(c) | Affects::Players(c) => c.names_source(),
            }
            && !spec.aggs.iter().any(|a| a.condition().names_source()))
        .then_some((Arc::as_ptr(def) as usize, step.you));
        // Whom later effects alike pick (see below), by ability, "you", existence and whether
        // counters count.
        #[allow(clippy::type_complexity)]
        let mut picked: FxHashMap<
            (usize, Option<crate::ids::PlayerId>, bool, bool),
            Vec<Subject>,
        > = FxHashMap::default();
        // The moved objects (those moved by their counters only where counters are read).
        let moved_counting: Vec<ObjectId> = moved_all.iter().map(|(x, _)| *x).collect();
        let moved_plain: Vec<ObjectId> = moved_all
            .iter()
            .filter(|(_, by_counters_only)| !by_counters_only)
            .map(|(x, _)| *x)
            .collect();
        let mut seen: FxHashSet<(usize, Option<crate::ids::PlayerId>, bool, bool)> =
            FxHashSet::default();
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
            x_alike,
        };
        // The aggregates of a later effect's amounts, filled again for each.
        let mut aggs = Vec::new();
        for y in &later {
            let touches = y.touches(state, lid);
            if !may_read(reads, &touches) {
                continue;
            }
            // Working out whom `y` applies to reads its source's values (its "you", whether it
            // still has the ability), and the board where it starts here or has an "as long as":
            // the queued trials' objects must be dirty by then.
            let reads_board = y.subjects.is_none()
                || matches!(&y.cand.body, Body::Effect(d) if d.while_cond.is_some())
                || y.cand.source.is_some_and(|o| queue.objects.contains(&o));
            if reads_board {
                self.run_trials(&mut queue, &at, out)?;
            }
            let counters = reads_counters || reads_counters_in(y.cand);
            let moved: &[ObjectId] = if counters {
                &moved_counting
            } else {
                &moved_plain
            };
            // Whom `y` applies to at this point, among the moved objects. A static ability on
            // many permanents that tests objects here without naming its source, whose source
            // did not change, exists as it did and picks the same for the same "you".
            let fresh_y = y.subjects.is_none();
            let shape = match (&y.cand.body, &y.cand.created) {
                (Body::Effect(ydef), None) => Some(
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
                ),
                _ => None,
            };
            let alike = match (&y.cand.body, shape, y.step) {
                (Body::Effect(ydef), Some(sh), Some(st))
                    if !fresh_y
                        && sh.picks_alike
                        && y.cand.source.is_some_and(|s| !self.dirty.contains_key(&s)) =>
                {
                    Some((Arc::as_ptr(ydef) as usize, st.you, st.exists, counters))
                }
                _ => None,
            };
            // Effects alike that read no other object do the same to the same objects: the
            // first one's trial stands for them all.
            if let (Some(k), Some(sh)) = (alike, shape) {
                if sh.same_whatever_source && !sh.reads_others && !seen.insert(k) {
                    continue;
                }
            }
            let mut ys: Vec<Subject> = if fresh_y {
                match self.started.get(&y.cand.key) {
                    Some(Some(s)) => s.to_vec(),
                    Some(None) => Vec::new(),
                    None => start_with(state, &self.sheet, y.cand, None, None).unwrap_or_default(),
                }
            } else if let Some(l) = alike.and_then(|k| picked.get(&k)) {
                l.clone()
            } else {
                let l = self.members_now(y, lid, moved)?;
                if let Some(k) = alike {
                    picked.insert(k, l.clone());
                }
                l
            };
            // What `y` does, where its amounts read other objects: its parameters at this point
            // as kept, moved with the aggregates they read.
            let mut known: Option<Vec<Vec<Value>>> = None;
            if ops_of(y.cand, lid).any(op_reads_others) {
                let ydef = match &y.cand.body {
                    Body::Effect(d) => d.clone(),
                    _ => return Err(fail!()),
                };
                let ops = ops_in(y.cand, lid);
                if ops.iter().any(|op| {
                    !matches!(op.change, Change::SetNumber(_) | Change::Modify(_))
                        && op_reads_others(op)
                }) {
                    if moved.is_empty() && ys.is_empty() {
                        continue;
                    }
                    return Err(fail!());
                }
                let you = match &y.cand.created {
                    Some(c) => Some(c.you),
                    None => super::candidate::you_of(state, &self.sheet, y.cand, None),
                };
                let mut deltas: FxHashMap<usize, i64> = FxHashMap::default();
                for op in &ops {
                    if let Change::SetNumber(e) | Change::Modify(e) = &op.change {
                        if e.refers_to_others() && !moved.is_empty() {
                            return Err(fail!());
                        }
                        aggs.clear();
                        e.aggregates(&mut aggs);
                        for &a in &aggs {
                            let d = self.delta(y.cand, you, a, moved)?;
                            deltas.insert(a.key(), d);
                        }
                    }
                }
                let shifted = deltas.values().any(|d| *d != 0);
                let Some(pos) = partners.iter().position(|(k, _)| *k == y.cand.key) else {
                    if !shifted && ys.is_empty() {
                        continue;
                    }
                    return Err(fail!());
                };
                let (then_subjects, then_params) = &*partners[pos].1;
                if shifted {
                    for s in then_subjects {
                        if !ys.contains(s) {
                            ys.push(*s);
                        }
                    }
                    ys.sort();
                }
                if ys.is_empty() {
                    continue;
                }
                // The parameters for each: kept and moved, or (for a moved object, where the
                // amounts read no subject's own values) any subject's kept and moved.
                let mut list = Vec::with_capacity(ys.len());
                for s in &ys {
                    let own_moved =
                        matches!(s, Subject::Object(o) if moved.binary_search(o).is_ok());
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
                    partners[pos].1 = Arc::new((subs, params));
                    partners_changed = true;
                }
                let _ = ydef;
                known = Some(list);
            }
            if ys.is_empty() {
                continue;
            }
            // What an object adds to an aggregate that differs by subject (`outer`) depends on
            // the subject: beyond what a trial on the moved objects shows.
            if spec.aggs.iter().any(|a| !a.is_closed()) {
                return Err(fail!());
            }
            let source_tried = step
                .cand
                .source
                .is_some_and(|o| ys.contains(&Subject::Object(o)));
            if reads_directly || (source_tried && step.cand.created.is_none()) {
                return Err(fail!());
            }
            let memo = match (&y.cand.body, &y.cand.created, &known) {
                (Body::Effect(ydef), None, None)
                    if shape.is_some_and(|sh| sh.same_whatever_source) =>
                {
                    let you = match alike {
                        Some((_, you, _, _)) => you,
                        None => super::candidate::you_of(state, &self.sheet, y.cand, None),
                    };
                    let key = (Arc::as_ptr(ydef) as usize, you, ys.clone());
                    // The same trial queued or passed already: it stands for this one.
                    if queue.passed.contains(&key) || queue.memos.contains(&key) {
                        continue;
                    }
                    Some(key)
                }
                _ => None,
            };
            // A queued trial reads its later effect's source ("you"): where this one makes that
            // source dirty, the queued ones are made first.
            let makes_source_dirty = queue.queued.iter().any(|t| {
                t.y.cand.source.is_some_and(|o| {
                    !self.dirty.contains_key(&o) && ys.contains(&Subject::Object(o))
                })
            });
            if makes_source_dirty {
                self.run_trials(&mut queue, &at, out)?;
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
        }
        self.run_trials(&mut queue, &at, out)?;
        if partners_changed {
            out.partners = Some(partners.into());
        }
        Ok(())
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
                        let you = super::candidate::you_of(state, &self.sheet, y.cand, None);
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
        let subjects: Vec<Subject> = match self.started.get(&c.key) {
            Some(Some(s)) => s.to_vec(),
            Some(None) => Vec::new(),
            None => {
                if let Body::Effect(def) = &c.body {
                    if def.while_cond.is_some() || c.created.is_none() {
                        return Err(fail!());
                    }
                }
                start_with(state, &self.sheet, c, None, None).ok_or(fail!())?
            }
        };
        if ops_of(c, lid).any(op_reads_others) {
            return Err(fail!());
        }
        self.make_dirty(&subjects, lid.index(), old_lt, upto)?;
        let out = Applied {
            cand: c.clone(),
            subjects: subjects.into(),
            started_here: is_fresh(c, lid, &self.state.ruleset),
            exists: true,
            looped: false,
            known: Arc::default(),
            params: None,
            you: c.created.as_ref().map(|c| c.you),
            waited: false,
            aggs: None,
            partners: None,
        };
        let xs = self.dirty_ids();
        self.apply_new(out.as_step(), lid, &xs, &Overrides::default())?;
        Ok(out)
    }
}
