//! A replay of the previous derivation's trail (see `incremental`): its state (the dirty objects,
//! the effects that started anew, the new trail), how it starts, runs layer by layer, and ends
//! or falls back to a full derivation from the layer where it stopped (`Fail`).

use super::derive::{cell_mut, continue_from, derive};
use super::trail::trail_of;
use crate::model::changes::Changes;
use crate::model::condition::{Cell, Footprint, Subject};
use crate::model::derived::Derived;
use crate::model::effect::CreatedEffect;
use crate::model::ids::{CharId, ObjectId, PlayerId};
use crate::model::object::GameObject;
use crate::model::sheet::Sheet;
use crate::model::trail::LayerTrail;
use crate::model::trail::{EffectKey, Subjects};
use crate::model::value::Value;
use crate::state::GameState;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The replay met what it cannot show unchanged: derive from the current layer in full. Carries
/// the file and line that found it, for `RULECRAFT_TRACE_REPLAY`.
#[derive(Debug)]
pub(super) struct Fail(pub(super) &'static (&'static str, u32));

/// A `Fail` at this line.
macro_rules! fail {
    () => {
        Fail(&(file!(), line!()))
    };
}
pub(super) use fail;

pub(super) type Res<T> = Result<T, Fail>;

/// The dirty objects whose values or own state differ from before at a point of a layer: each
/// with the characteristics that differ, and whether its own state moved as a step that does not
/// read counters and one that does sees it.
pub(super) type Moves = Vec<(ObjectId, Footprint, [bool; 2])>;

/// An object whose values are worked out again.
pub(super) struct Dirty {
    /// Its values at this point as the previous derivation had them; `None` for a new object.
    pub(super) old: Option<Vec<Value>>,
    /// Its final values in the previous derivation (`None` for a new object), to undo a replay
    /// that stops partway.
    pub(super) final_old: Option<Vec<Value>>,
    /// Its values at the start of the current layer.
    pub(super) at_layer_start: Vec<Value>,
    /// What of its own state changed (not its values).
    pub(super) diff: StateDiff,
}

/// What of an object's own state changed since the previous derivation.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct StateDiff {
    pub(super) new: bool,
    /// Zone or incarnation: `in play`, `in ZONE`, locked effects.
    pub(super) zone: bool,
    pub(super) counters: bool,
    /// What it is attached to: `enchanted`, `linked`.
    pub(super) attached: bool,
    /// `on top of ZONE`.
    pub(super) timestamp: bool,
    /// Face, choices, class, owner, name: beyond this replay.
    pub(super) other: bool,
}

impl StateDiff {
    pub(super) fn of(old: &GameObject, new: &GameObject) -> Self {
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
    pub(super) fn seen_by(self, reads_counters: bool) -> bool {
        self.new
            || self.zone
            || self.attached
            || self.timestamp
            || self.other
            || (self.counters && reads_counters)
    }
}

pub(super) struct Replay<'a> {
    pub(super) state: &'a GameState,
    /// The state as the previous derivation saw it, made when first needed (where objects that
    /// existed changed).
    pub(super) old: Option<GameState>,
    pub(super) changes: &'a Changes,
    pub(super) prev: Vec<Arc<LayerTrail>>,
    /// New values: the dirty objects' as they stand at this point, the rest the previous result.
    pub(super) sheet: Sheet,
    pub(super) dirty: BTreeMap<ObjectId, Dirty>,
    /// The keys of `dirty`, in id order (`dirty_ids`).
    pub(super) dirty_list: std::rc::Rc<[ObjectId]>,
    /// The subjects of effects, in the layers replayed so far, that start anew or whose subjects
    /// changed; `None` for one that does not exist.
    pub(super) started: FxHashMap<EffectKey, Option<Subjects>>,
    /// The new trail, one entry per layer replayed.
    pub(super) trail: Vec<Arc<LayerTrail>>,
    pub(super) new_effects: Vec<Arc<CreatedEffect>>,
    pub(super) gone_effects: FxHashSet<u32>,
    /// The first layer the change reached.
    pub(super) reached: Option<usize>,
    /// Order trials of this layer that changed nothing, by effects alike (`TrialKey`), with the
    /// values of the objects tried: the same trial on the same values passes again.
    pub(super) trials: FxHashMap<TrialKey, Vec<Vec<Value>>>,
    /// `LaterShape`s, by effect definition (its address) and layer.
    pub(super) later_shapes: FxHashMap<(usize, u16), LaterShape>,
    /// Subject lists with one subject put in or taken out, by the list (its address; it is kept
    /// alive here) and the subject: effects alike share their lists (`scan`), and their new ones.
    pub(super) toggles: FxHashMap<(usize, Subject), (Subjects, Subjects)>,
    /// A list of subjects to fill again for each step (`members_into`).
    pub(super) mine: Vec<Subject>,
    /// A list of objects to fill again for each step (the moved ones, in `kept`).
    pub(super) moved_list: Vec<ObjectId>,
    /// Aggregates (`Aggregate::key`) to which each object adds what it alone decides (`delta`).
    pub(super) alone: FxHashMap<usize, bool>,
    /// The dirty members with old values of previous steps' subject lists (`list_key`), while the
    /// dirty objects stay the same.
    pub(super) old_members: FxHashMap<(usize, usize), std::rc::Rc<[Subject]>>,
    /// Whom effects of the current layer apply to, decided before its steps (`decide_ahead`).
    pub(super) decided: FxHashMap<EffectKey, Subjects>,
    /// Objects with static abilities that entered, left, changed zone, were attached or took a
    /// new timestamp: their effects' old steps end and the ones they have now start.
    pub(super) entering: std::collections::BTreeSet<ObjectId>,
    /// The players' properties that changed (`Changes::props`).
    pub(super) props_changed: crate::model::condition::Footprint,
}

/// What the order trials need to know of a later static effect in a layer, worked out once.
#[derive(Clone, Copy)]
pub(super) struct LaterShape {
    /// It starts in this layer, has no "as long as", and whom it applies to does not name its
    /// source: copies of it with the same "you" pick the same objects.
    pub(super) picks_alike: bool,
    /// It does the same whichever object its source is (`same_whatever_source`).
    pub(super) same_whatever_source: bool,
    /// Its amounts read other objects.
    pub(super) reads_others: bool,
}

/// An order trial between effects that do the same whichever object their source is: the earlier
/// effect's ability, "you" and whether it starts here; the later one's ability and "you"; the
/// objects tried and which of them the earlier one applies to.
type TrialKey = (
    usize,
    Option<PlayerId>,
    bool,
    usize,
    Option<PlayerId>,
    Vec<Subject>,
    Vec<bool>,
);

impl<'a> Replay<'a> {
    pub(super) fn new(state: &'a GameState, prev: Derived, changes: &'a Changes) -> Res<Self> {
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
            decided: FxHashMap::default(),
            entering: Default::default(),
            props_changed: Default::default(),
        };
        for &(_, q) in &changes.props {
            r.props_changed.add_prop(q);
        }
        if !changes.props.is_empty() && super::props::props_written(state) {
            return Err(fail!());
        }
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
            r.note_moving_statics(changes, x, diff)?;
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
            r.note_moving_statics(changes, x, diff)?;
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
        super::props::props_into(state, &changes.props, &mut sheet);
        r.sheet = sheet;
        r.dirty_list = r.dirty.keys().copied().collect();
        Ok(r)
    }

    /// An object whose face, choices or class changed is beyond this replay, and so is one that
    /// moved (entered, left, was attached, took a new timestamp) where a created effect has it as
    /// its source or an effect gave it an ability. Another that moved with static abilities is
    /// noted in `entering`: its effects end and start again.
    fn note_moving_statics(&mut self, changes: &Changes, x: ObjectId, diff: StateDiff) -> Res<()> {
        if diff.other {
            return Err(fail!());
        }
        let now = self.state.obj(x);
        if diff.new && now.face_down {
            return Err(fail!());
        }
        let statics = |o: &GameObject| !self.state.content.class_def(o.class).statics.is_empty();
        let has_statics = statics(now) || changes.old_object(x).is_some_and(statics);
        let granted = self
            .prev
            .iter()
            .any(|lt| lt.grants.iter().any(|((o, _), _)| *o == x));
        let sources = self.state.effects.iter().any(|e| e.source == x);
        let moves = diff.new || diff.zone || diff.attached || diff.timestamp;
        if moves && (sources || granted) {
            return Err(fail!());
        }
        // It entered, left, changed zone, was attached or took a new timestamp: its static
        // abilities' effects end, and those it has now start (`Replay::layer`) where their
        // timestamps put them.
        if moves && has_statics {
            self.entering.insert(x);
        }
        Ok(())
    }

    /// An object's values at the start of layer `from` in the previous derivation, from its final
    /// ones: the writes of `from` and of every later layer undone.
    pub(super) fn undo_row(&self, final_row: &[Value], x: ObjectId, from: usize) -> Vec<Value> {
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

    pub(super) fn run(&mut self) -> Res<()> {
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
    pub(super) fn finish(self) -> Derived {
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
            trail: Some(Arc::new(self.trail)),
            stacked: None,
        }
    }

    /// Derives from the layer the replay stopped in, in full: the values at that layer's start are
    /// the previous ones, with the dirty objects' as replayed.
    pub(super) fn fall_back(self) -> Derived {
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
                *cell_mut(&mut sheet, cell) = v.clone();
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
    pub(super) fn dirty_ids(&self) -> std::rc::Rc<[ObjectId]> {
        self.dirty_list.clone()
    }

    /// The dirty objects that moved here (`Moves`).
    pub(super) fn moves(&self, counters_read: bool) -> Moves {
        let mut out = Vec::new();
        for (x, d) in &self.dirty {
            let now = &self.sheet.objects[x.index()];
            let mut differ = Footprint::default();
            let state = match &d.old {
                None => [true, true],
                Some(old) => {
                    for (c, (a, b)) in old.iter().zip(now.iter()).enumerate() {
                        if a != b {
                            differ.add_char(CharId(c as u16));
                        }
                    }
                    [d.diff.seen_by(false), d.diff.seen_by(counters_read)]
                }
            };
            if state[0] || state[1] || !differ.is_empty() {
                out.push((*x, differ, state));
            }
        }
        out
    }

    /// Whether an object's values or own state differ from before here, as an effect that does
    /// (or does not) read counters sees it.
    pub(super) fn moved(&self, x: ObjectId, reads_counters: bool) -> bool {
        self.dirty.get(&x).is_some_and(|d| {
            d.diff.seen_by(reads_counters)
                || d.old.as_deref() != Some(&self.sheet.objects[x.index()][..])
        })
    }
}

impl Replay<'_> {
    /// How many objects a replay follows at most: past that (a change that reaches a good part of
    /// the board), deriving the rest of the layers for every object costs less.
    pub(super) fn most_dirty(&self) -> usize {
        (self.state.objects.len() / 8).max(64)
    }

    /// Makes the state as it was before the changes, where objects that existed changed.
    pub(super) fn ensure_old(&mut self) {
        if self.old.is_none() && !self.changes.objects.is_empty() {
            self.old = Some(self.state.as_before(self.changes));
        }
    }

    /// Exchanges the sheet's values of these dirty objects with their old values.
    pub(super) fn swap_old(&mut self, xs: impl IntoIterator<Item = ObjectId>) {
        for x in xs {
            if let Some(old) = self.dirty.get_mut(&x).and_then(|d| d.old.as_mut()) {
                for (a, b) in self.sheet.objects[x.index()].iter_mut().zip(old.iter_mut()) {
                    std::mem::swap(a, b);
                }
            }
        }
    }
}
