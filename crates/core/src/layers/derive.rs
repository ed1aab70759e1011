//! The full derivation: base values, then each layer in order (CR 613.1-613.8); within a layer,
//! characteristic-defining effects first, then by kind of change where the layer says so, then
//! dependency, then timestamp; the trail each derivation keeps for the next one.

use super::candidate::{you_of, Body, Candidate, EffectKey, Subjects};
use super::change::{
    apply_keeping, apply_run, cells_of, changes, does_the_same, footprint_of, slot_mut, slot_ref,
    subject_of,
};
use super::change::{KeepBefore, Touch};
use super::dependency::{sink_loop, Analysis, DepKind, Instruction};

use crate::condition::eval::Ctx;
use crate::condition::{Cell, Footprint, Reads, Subject};
use crate::effect::{Affects, Change, EffectDef, Locked};
use crate::explain::{DependsOn, Explanation, Reason, Step};
use crate::ids::SlotTarget;
use crate::ids::{CharId, LayerId, ObjectId, PlayerId, Timestamp};
use crate::state::derived::{Derived, Kept};
use crate::state::sheet::Sheet;
use crate::state::GameState;
use crate::value::{Ability, Value};
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// What each layer did (`LayerTrail`), kept in a derivation for the next one to start from.
pub(super) type Trail = Vec<Arc<LayerTrail>>;

/// The layers' record in a derivation, if it kept one of this ruleset's layers.
pub(super) fn trail_of(d: &Derived) -> Option<&Trail> {
    d.trail.get::<Trail>()
}

#[derive(Clone, Default)]
pub(super) struct LayerTrail {
    /// Later entries for a cell replace earlier ones.
    pub(super) before: Shared<(Cell, Value)>,
    /// Where each object's entries are in `before`'s shared part, worked out when first asked.
    pub(super) before_index: Arc<std::sync::OnceLock<HashMap<ObjectId, Vec<u32>>>>,
    pub(super) grants: Shared<((ObjectId, Ability), Timestamp)>,
    /// The effects in the order they applied.
    pub(super) steps: Arc<Vec<Arc<Applied>>>,
}

/// A list kept by one derivation and shared with the ones that start from it, which may add to
/// it without copying it.
#[derive(Clone)]
pub(super) struct Shared<T> {
    pub(super) base: Arc<Vec<T>>,
    pub(super) more: Vec<T>,
}

impl<T> Default for Shared<T> {
    fn default() -> Self {
        Shared {
            base: Arc::new(Vec::new()),
            more: Vec::new(),
        }
    }
}

impl LayerTrail {
    /// This layer's entries in `before` for one object, in order.
    pub(super) fn before_of(&self, x: ObjectId) -> impl Iterator<Item = &(Cell, Value)> {
        let base = &self.before.base;
        let index = self.before_index.get_or_init(|| {
            let mut m: HashMap<ObjectId, Vec<u32>> = HashMap::default();
            for (i, (cell, _)) in base.iter().enumerate() {
                if let Cell::Object(o, _) = cell {
                    m.entry(*o).or_default().push(i as u32);
                }
            }
            m
        });
        index
            .get(&x)
            .into_iter()
            .flatten()
            .map(move |i| &base[*i as usize])
            .chain(
                self.before
                    .more
                    .iter()
                    .filter(move |(c, _)| matches!(c, Cell::Object(o, _) if *o == x)),
            )
    }
}

impl<T> Shared<T> {
    pub(super) fn iter(&self) -> impl Iterator<Item = &T> {
        self.base.iter().chain(self.more.iter())
    }
    pub(super) fn push(&mut self, t: T) {
        self.more.push(t);
    }
    /// Makes what a derivation recorded shareable (its list starts empty). A sealed list's index
    /// (`LayerTrail::before_index`) is worked out anew.
    pub(super) fn seal(&mut self) {
        if self.base.is_empty() && !self.more.is_empty() {
            self.base = Arc::new(std::mem::take(&mut self.more));
        }
    }
}

/// One effect as it applied in a layer.
#[derive(Clone)]
pub(super) struct Applied {
    pub(super) cand: Candidate,
    /// The subjects it applied to (none if it did not exist).
    pub(super) subjects: Arc<[Subject]>,
    /// It started in this layer (its first part is here): whether it exists and whom it applies
    /// to were decided here, for this and the later layers.
    pub(super) started_here: bool,
    /// Whether it existed when it started.
    pub(super) exists: bool,
    /// Picked as the earliest member of a dependency loop, while every effect waited for another.
    pub(super) looped: bool,
    /// What a replay works out of it once (shared by the steps copied from it).
    pub(super) known: Arc<StepKnown>,
    /// The parameters it applied with, per subject (as `op_params` gives them), where they are
    /// numbers that differ by subject or an analysis worked them out.
    pub(super) params: Option<Arc<Vec<Vec<Value>>>>,
    /// Its "you" when it applied.
    pub(super) you: Option<PlayerId>,
    /// It waited for another effect (dependency) before it applied: it came later than its
    /// timestamp alone would put it.
    pub(super) waited: bool,
    /// Where it started here: the values of the aggregates its conditions read
    /// (`condition_aggregates`: `Aggregate::key`, value), where they read any.
    pub(super) aggs: Option<AggregateValues>,
    /// The later effects of its group that it was tried against and whose amounts read other
    /// objects: their subjects and parameters at this step.
    pub(super) partners: Option<Arc<[PartnerThen]>>,
}

/// What a replay works out of a step when first asked, in one place: copying a step record costs
/// one count for all of it.
#[derive(Default)]
pub(super) struct StepKnown {
    /// What it reads (`Candidate::reads`).
    pub(super) reads: std::sync::OnceLock<Footprint>,
    /// What it writes in its layer (`Candidate::writes`).
    pub(super) writes: std::sync::OnceLock<Footprint>,
    /// How it changes what it writes in its layer (`Candidate::touches`).
    pub(super) touches: std::sync::OnceLock<Vec<(SlotTarget, Touch)>>,
    /// What its conditions and amounts read, by kind (`Shape`).
    pub(super) shape: std::sync::OnceLock<Shape>,
}

/// A later effect's subjects and parameters at an earlier effect's step.
pub(super) type PartnerThen = (EffectKey, Arc<(Vec<Subject>, Vec<Vec<Value>>)>);

/// Whether an effect's amounts in a layer read more than the subject: aggregates, other objects,
/// player properties.
pub(super) fn amounts_read_others(cand: &Candidate, lid: LayerId) -> bool {
    match &cand.body {
        Body::Effect(def) => def
            .ops
            .iter()
            .filter(|o| o.layer == lid)
            .any(|op| match &op.change {
                Change::SetNumber(e) | Change::Modify(e) => !e.is_constant() && !e.is_local(),
                _ => false,
            }),
        _ => false,
    }
}

/// The values of the aggregates an effect read at a step: (`Aggregate::key`, value).
pub(super) type AggregateValues = Arc<[(usize, Option<i64>)]>;

/// The layer being applied: which cells it has written (their values before it are kept once).
pub(super) struct LayerLog {
    pub(super) written: Vec<u64>,
    pub(super) dims: super::dependency::Dims,
    pub(super) trail: LayerTrail,
}

impl Candidate {
    /// Every characteristic this effect's existence, subjects and values read.
    pub(super) fn reads(&self, state: &GameState, controller: Option<CharId>) -> Footprint {
        let mut f = self.scan_reads(state, controller);
        if let Body::Effect(def) = &self.body {
            if let Some(w) = &def.while_cond {
                w.reads(controller, &mut f);
            }
            if self.created.is_none() {
                // A static ability exists while its source has it; "you" is its controller.
                if let Some(a) = state.abilities_char {
                    f.add_name(a, def.ability_name().clone());
                }
                if let Some(c) = controller {
                    f.add_char(c);
                }
            }
        }
        f
    }

    /// What the tests of whom this effect applies to, and its values, read.
    pub(super) fn scan_reads(&self, state: &GameState, controller: Option<CharId>) -> Footprint {
        let mut f = Footprint::default();
        if let Body::Effect(def) = &self.body {
            match &def.affects {
                Affects::Objects(c) | Affects::Players(c) => c.reads(controller, &mut f),
            }
            for op in &def.ops {
                match &op.change {
                    Change::SetNumber(e) | Change::Modify(e) => e.reads(controller, &mut f),
                    Change::TextOf(_) => state.ruleset.copiable.iter().for_each(|c| f.add_char(*c)),
                    Change::AbilitiesPer { of, among, .. } => {
                        f.add_char(*of);
                        among.reads(controller, &mut f);
                    }
                    // The abilities of the objects it reads them from.
                    Change::AbilitiesOf { among, .. } => {
                        if let SlotTarget::Char(c) = op.target {
                            f.add_char(c);
                        }
                        among.reads(controller, &mut f);
                    }
                    // Whether the subject is a land (CR 305.6).
                    Change::WithIntrinsic { makes: None, .. } => {
                        if let Some(i) = match op.target {
                            SlotTarget::Char(ch) => state.ruleset.intrinsic_of(ch),
                            SlotTarget::Prop(_) => None,
                        } {
                            f.add_name(i.when.0, i.when.1.clone());
                        }
                    }
                    _ => {}
                }
            }
        }
        f
    }

    /// How this effect changes each characteristic or property it writes in `layer`.
    pub(super) fn touches(&self, state: &GameState, layer: LayerId) -> Vec<(SlotTarget, Touch)> {
        let mut out: Vec<(SlotTarget, Touch)> = Vec::new();
        let mut add = |t: SlotTarget, touch: Touch| match out.iter_mut().find(|(x, _)| *x == t) {
            Some((_, old)) => *old = std::mem::replace(old, Touch::Any).join(touch),
            None => out.push((t, touch)),
        };
        match &self.body {
            Body::Effect(def) => {
                for op in def.ops.iter().filter(|o| o.layer == layer) {
                    add(op.target, Touch::of(&op.change));
                    match &op.change {
                        Change::SwitchWith(other) => add(SlotTarget::Char(*other), Touch::Any),
                        // The abilities its symbols give or take away (CR 305.7).
                        Change::WithIntrinsic { change, .. } => {
                            if let Some(t) = intrinsic_touch(state, op.target, change) {
                                if let Some(a) = state.abilities_char {
                                    add(SlotTarget::Char(a), t);
                                }
                            }
                        }
                        Change::SetValues(vals) => vals
                            .iter()
                            .for_each(|(c, _)| add(SlotTarget::Char(*c), Touch::Any)),
                        Change::TextOf(_) | Change::CopyOf(_) => state
                            .ruleset
                            .copiable
                            .iter()
                            .for_each(|c| add(SlotTarget::Char(*c), Touch::Any)),
                        _ => {}
                    }
                }
            }
            Body::Counter { kind, .. } => {
                for (c, _) in super::change::counter_numbers(state, *kind, layer) {
                    add(SlotTarget::Char(*c), Touch::Any);
                }
                for op in super::change::counter_ops(state, *kind, layer) {
                    add(op.target, Touch::of(&op.change));
                }
            }
            Body::FaceDown => {
                for (c, _) in &state.ruleset.face_down {
                    add(SlotTarget::Char(*c), Touch::Any);
                }
            }
        }
        out
    }

    /// Every characteristic this effect changes in `layer`.
    pub(super) fn writes(&self, state: &GameState, layer: LayerId) -> Footprint {
        let mut f = Footprint::default();
        let mut add = |t: SlotTarget| match t {
            SlotTarget::Char(c) => f.add_char(c),
            SlotTarget::Prop(p) => f.add_prop(p),
        };
        match &self.body {
            Body::Effect(def) => {
                for op in def.ops.iter().filter(|o| o.layer == layer) {
                    add(op.target);
                    match &op.change {
                        Change::SwitchWith(other) => add(SlotTarget::Char(*other)),
                        Change::WithIntrinsic { change, .. }
                            if intrinsic_touch(state, op.target, change).is_some() =>
                        {
                            if let Some(a) = state.abilities_char {
                                add(SlotTarget::Char(a));
                            }
                        }
                        Change::SetValues(vals) => {
                            vals.iter().for_each(|(c, _)| add(SlotTarget::Char(*c)))
                        }
                        Change::TextOf(_) | Change::CopyOf(_) => state
                            .ruleset
                            .copiable
                            .iter()
                            .for_each(|c| add(SlotTarget::Char(*c))),
                        _ => {}
                    }
                }
            }
            Body::Counter { kind, .. } => {
                for (c, _) in super::change::counter_numbers(state, *kind, layer) {
                    add(SlotTarget::Char(*c));
                }
                for op in super::change::counter_ops(state, *kind, layer) {
                    add(op.target);
                }
            }
            Body::FaceDown => {
                for (c, _) in &state.ruleset.face_down {
                    add(SlotTarget::Char(*c));
                }
            }
        }
        f
    }

    /// How a later step names this one: the source, or the source's counters.
    pub(super) fn label(&self, state: &GameState) -> String {
        match &self.body {
            Body::Effect(_) => self.source_name.to_string(),
            Body::Counter { .. } => format!("{}'s {}", self.source_name, self.text(state)),
            Body::FaceDown => format!("{} being face down", self.source_name),
        }
    }

    pub(super) fn text(&self, state: &GameState) -> String {
        match &self.body {
            Body::Effect(d) => d.text.to_string(),
            Body::Counter { kind, count } => {
                let name = &state.ruleset.counters[kind.index()].name;
                let s = if count.abs() == 1 { "" } else { "s" };
                format!("{count} {name} counter{s}")
            }
            Body::FaceDown => "face down: the ruleset's face-down values".to_string(),
        }
    }
}

/// An effect that began applying, with the subjects it applies to in every later layer; `None` if
/// it did not exist when its first part would have applied.
pub(super) type Started = HashMap<EffectKey, (Candidate, Option<Subjects>)>;

pub(super) struct Deriver<'a> {
    pub(super) state: &'a GameState,
    pub(super) sheet: Sheet,
    pub(super) expl: Option<Explanation>,
    pub(super) started: Started,
    /// When a static ability was granted to an object, for its effect's timestamp (CR 613.7a: "the
    /// timestamp of the effect that created the ability, whichever is later").
    pub(super) grants: HashMap<(ObjectId, Ability), Timestamp>,
    /// For tests: visit objects in this order (rank by object index) instead of id order.
    pub(super) visit: Option<Vec<u32>>,
    /// Subjects found by scanning for a condition, shared by effects with the same condition,
    /// source (where the condition names it) and "you"; dropped when a characteristic the
    /// condition reads is written.
    pub(super) scans: HashMap<ScanKey, (Footprint, Subjects)>,
    /// Counts shared by the analyses of effects that count the same thing (`Counts`), dropped
    /// like scans; not used while an effect is tried and undone (`counting` false).
    pub(super) counts: crate::condition::eval::Counts,
    pub(super) counting: bool,
    /// What the layers so far did, and the current layer's log; `None` when not kept (explaining).
    pub(super) trail: Option<(Vec<Arc<LayerTrail>>, LayerLog)>,
}

/// A condition (as written), its source where it names it, and its "you".
pub(super) type ScanKey = (Arc<str>, Option<ObjectId>, Option<PlayerId>);

/// Derives every characteristic and player property. With `explain`, records each step.
pub fn derive(state: &GameState, explain: bool) -> Derived {
    derive_layers(state, state.ruleset.layers.len(), explain)
}

/// The copiable values of an object now: its values after the copy and face-down layers
/// (CR 613.2c; Cranial Insertion, "Order of Operations", 2020, layer 1b: "The copiable values of
/// an object are the end result of applying layers 1a and 1b").
pub fn copiable_values(state: &GameState, o: ObjectId) -> Vec<(CharId, Value)> {
    let d = derive_layers(state, state.ruleset.copiable_layers(), false);
    state
        .ruleset
        .copiable
        .iter()
        .map(|c| (*c, d.sheet.objects[o.index()][c.index()].clone()))
        .collect()
}

/// Derives with objects visited, and created effects stored, in an order given by `seed` (for the
/// property test that only timestamps, dependency and the rules decide, never storage order).
/// It shares neither scans nor counts between effects, so it also checks that sharing them
/// changes nothing.
#[doc(hidden)]
pub fn derive_permuted(state: &GameState, seed: u64) -> Derived {
    let mut rng = seed | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut st = state.clone();
    for i in (1..st.effects.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        st.effects.swap(i, j);
    }
    let mut ranks: Vec<u32> = (0..st.objects.len() as u32).collect();
    for i in (1..ranks.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        ranks.swap(i, j);
    }
    derive_inner(&st, st.ruleset.layers.len(), false, Some(ranks))
}

/// Applies the first `upto` layers (for profiling one layer against the ones before it).
#[doc(hidden)]
pub fn derive_upto(state: &GameState, upto: usize) -> Derived {
    derive_layers(state, upto, false)
}

/// Applies the first `upto` layers.
pub(super) fn derive_layers(state: &GameState, upto: usize, explain: bool) -> Derived {
    derive_inner(state, upto, explain, None)
}

/// Derives layers `from` onward, from the values at the start of `from` and what the layers
/// before it did.
pub(super) fn continue_from(
    state: &GameState,
    before: Vec<Arc<LayerTrail>>,
    sheet: Sheet,
    from: usize,
) -> Derived {
    let mut started = HashMap::default();
    let mut grants = HashMap::default();
    for lt in &before {
        for a in lt.steps.iter().filter(|a| a.started_here) {
            let subs = a.exists.then(|| a.subjects.clone());
            started.insert(a.cand.key, (a.cand.clone(), subs));
        }
        for (g, t) in lt.grants.iter() {
            grants.insert(g.clone(), *t);
        }
    }
    let n = state.ruleset.layers.len();
    let mut d = Deriver::new(state, sheet, None, None, Some(before));
    d.started = started;
    d.grants = grants;
    for li in from..n {
        d.layer(LayerId(li as u16));
    }
    d.finish()
}

pub(super) fn cell_mut<'a>(sheet: &'a mut Sheet, c: &Cell) -> &'a mut Value {
    match c {
        Cell::Object(o, ch) => &mut sheet.objects[o.index()][ch.index()],
        Cell::Player(p, q) => &mut sheet.players[p.index()][q.index()],
    }
}

impl KeepBefore for LayerLog {
    /// Keeps `v`, the value of a subject's cell about to be written, if the layer has not written
    /// that cell before.
    fn keep(&mut self, s: Subject, t: SlotTarget, v: &Value) {
        let cell = match (s, t) {
            (Subject::Object(o), SlotTarget::Char(c)) => Cell::Object(o, c),
            (Subject::Player(p), SlotTarget::Prop(q)) => Cell::Player(p, q),
            _ => return,
        };
        let i = self.dims.index(&cell);
        if self.written[i / 64] & (1 << (i % 64)) == 0 {
            self.written[i / 64] |= 1 << (i % 64);
            self.trail.before.push((cell, v.clone()));
        }
    }
}

impl LayerLog {
    pub(super) fn new(state: &GameState) -> Self {
        let dims = super::dependency::Dims::of(state);
        LayerLog {
            written: vec![0; dims.cells().div_ceil(64)],
            dims,
            trail: LayerTrail::default(),
        }
    }
}

pub(super) fn derive_inner(
    state: &GameState,
    upto: usize,
    explain: bool,
    visit: Option<Vec<u32>>,
) -> Derived {
    let rs = &state.ruleset;
    let sheet = state.base_sheet();
    let expl = explain.then(|| Explanation {
        base: sheet.clone(),
        objects: vec![vec![Vec::new(); rs.characteristics.len()]; state.objects.len()],
        players: vec![vec![Vec::new(); rs.props.len()]; state.players.len()],
    });
    // A trail is kept for a full derivation only: a partial one cannot be continued.
    let trail = (!explain && upto >= rs.layers.len()).then(Vec::new);
    let mut d = Deriver::new(state, sheet, expl, visit, trail);
    for li in 0..upto.min(rs.layers.len()) {
        d.layer(LayerId(li as u16));
    }
    d.finish()
}

impl<'a> Deriver<'a> {
    /// A deriver starting from `sheet`, with no effect started yet; `trail`: what the layers
    /// before did, if a trail is kept.
    pub(super) fn new(
        state: &'a GameState,
        sheet: Sheet,
        expl: Option<Explanation>,
        visit: Option<Vec<u32>>,
        trail: Option<Vec<Arc<LayerTrail>>>,
    ) -> Self {
        Deriver {
            state,
            sheet,
            expl,
            started: HashMap::default(),
            grants: HashMap::default(),
            // The permuted derivation (for tests) counts every time: it checks the shared counts.
            counting: visit.is_none(),
            visit,
            scans: HashMap::default(),
            counts: Default::default(),
            trail: trail.map(|t| (t, LayerLog::new(state))),
        }
    }
}

impl Deriver<'_> {
    pub(super) fn finish(self) -> Derived {
        let mut sheet = self.sheet;
        sheet.objects.share();
        Derived {
            sheet,
            explanation: self.expl,
            reused_layers: 0,
            replayed_layers: 0,
            changed: None,
            trail: Kept::new(self.trail.map(|(t, _)| t).unwrap_or_default()),
        }
    }

    pub(super) fn layer(&mut self, lid: LayerId) {
        let layer = &self.state.ruleset.layers[lid.index()];
        let cands = gather(
            self.state,
            &self.sheet,
            lid,
            &self.started,
            &self.grants,
            self.visit.as_deref(),
        );
        // CR 613.3: characteristic-defining effects first; a layer may also order by kind of
        // change (CR 601.2f: additions, then subtractions, then effects on the total cost).
        let mut groups: Vec<((bool, usize), Vec<Candidate>)> = Vec::new();
        for c in cands {
            let key = (!c.defining, kind_rank(&c, lid, &layer.kind_order));
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, g)) => g.push(c),
                None => groups.push((key, vec![c])),
            }
        }
        groups.sort_by_key(|(k, _)| *k);
        let mut previous: Option<(String, u64)> = None;
        for (_, group) in groups {
            self.group(lid, group, &mut previous);
        }
        self.follow_types(lid);
        if let Some((done, log)) = &mut self.trail {
            log.written.iter_mut().for_each(|w| *w = 0);
            let mut lt = std::mem::take(&mut log.trail);
            lt.before.seal();
            lt.grants.seal();
            done.push(Arc::new(lt));
        }
    }

    /// CR 205.1a, 205.3d: after a layer that may change a characteristic whose categories are tied
    /// to card types (or those types), each object keeps only the symbols of sets tied to a card
    /// type it has ("Enchanted permanent is a colorless Forest land": no creature types left).
    pub(super) fn follow_types(&mut self, lid: LayerId) {
        if self.state.ruleset.tied_in_layer(lid).is_empty() {
            return;
        }
        let mut known = Vec::new();
        for o in self.state.object_ids() {
            let writes =
                follow_types_of(self.state, &self.sheet.objects[o.index()], lid, &mut known);
            for (ch, after, text) in writes {
                self.write_by_rules(lid, o, ch, after, &text);
            }
        }
    }

    /// Writes a value the ruleset's categories decide (see `follow_types`), keeping the value before
    /// and explaining it.
    pub(super) fn write_by_rules(
        &mut self,
        lid: LayerId,
        o: ObjectId,
        ch: CharId,
        after: Value,
        text: &str,
    ) {
        let (s, t) = (Subject::Object(o), SlotTarget::Char(ch));
        if let Some((_, log)) = &mut self.trail {
            log.keep(s, t, &self.sheet.objects[o.index()][ch.index()]);
        }
        let before = std::mem::replace(slot_mut(&mut self.sheet, s, t), after.clone());
        if let Some(e) = self.expl.as_mut() {
            let l = &self.state.ruleset.layers[lid.index()];
            e.objects[o.index()][ch.index()].push(Step {
                layer: l.label.clone(),
                layer_name: l.name.clone(),
                source: self.state.obj(o).name.to_string(),
                label: self.state.obj(o).name.to_string(),
                text: text.to_string(),
                timestamp: self.state.obj(o).timestamp.0,
                reason: Reason::Categories,
                before,
                after,
            });
        }
    }

    /// Applies one group of effects of a layer: each effect waits for those it depends on; the
    /// rest go in timestamp order; a dependency loop falls back to timestamp order for its members
    /// only. Dependencies are re-evaluated after each application.
    pub(super) fn group(
        &mut self,
        lid: LayerId,
        mut cands: Vec<Candidate>,
        previous: &mut Option<(String, u64)>,
    ) {
        let state = self.state;
        let layer = &state.ruleset.layers[lid.index()];
        cands.sort_by_key(|c| c.order_key());
        let n = cands.len();
        let controller = state.controller_char;
        // Pairs (a, b) where `a` may read what `b` writes: only these can depend (a cheap filter by
        // characteristic before the exact test by cell).
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        if layer.dependency && n > 1 {
            let reads: Vec<Footprint> = cands.iter().map(|c| c.reads(state, controller)).collect();
            let writes: Vec<Footprint> = cands.iter().map(|c| c.writes(state, lid)).collect();
            let touches: Vec<_> = cands.iter().map(|c| c.touches(state, lid)).collect();
            for (a, ra) in reads.iter().enumerate().filter(|(_, r)| !r.is_empty()) {
                for (b, wb) in writes.iter().enumerate() {
                    if a != b && wb.intersects(ra) && may_read(ra, &touches[b]) {
                        pairs.push((a, b));
                    }
                }
            }
        }
        let mut involved = vec![false; n];
        let mut partners: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (a, b) in &pairs {
            involved[*a] = true;
            involved[*b] = true;
            partners[*a].push(*b);
        }
        // Where no partner writes what an effect's subject tests read, its analysis need not record
        // those reads one by one.
        let coarse: Vec<Option<Footprint>> = if pairs.is_empty() {
            vec![None; n]
        } else {
            let writes: Vec<Footprint> = cands.iter().map(|c| c.writes(state, lid)).collect();
            (0..n)
                .map(|i| {
                    let scan = cands[i].scan_reads(state, controller);
                    let partner_writes =
                        partners[i].iter().fold(Footprint::default(), |mut f, b| {
                            f.union(&writes[*b]);
                            f
                        });
                    (!scan.intersects(&partner_writes)).then_some(scan)
                })
                .collect()
        };
        let mut alive = vec![true; n];
        let mut left = n;
        // Each involved effect's instruction with the cells it read and will write, kept up to date.
        let mut analyses: Vec<Option<Analysis>> = vec![None; n];
        let mut edges: HashMap<(usize, usize), Option<DepKind>> = HashMap::default();
        // What each effect waited for, for its explanation.
        let mut waited: Vec<Vec<(String, u64, DepKind)>> = vec![Vec::new(); n];
        // The dependency loop each effect was found in, named, for its explanation.
        let mut in_loop: Vec<Option<Vec<String>>> = vec![None; n];
        while left > 0 {
            // The earliest effects left, while each waits for nothing (what it reads no effect
            // left writes) and does the same to every subject, go next one after another: applied
            // in one pass over their subjects, with the same result.
            if self.expl.is_none() && analyses.iter().all(Option::is_none) {
                let mut run = Vec::new();
                for i in (0..n).filter(|i| alive[*i]) {
                    let free = partners[i].iter().all(|b| !alive[*b]);
                    if !free || !does_the_same(&cands[i], lid) {
                        break;
                    }
                    run.push(i);
                }
                if run.len() > 1 {
                    self.apply_run_of(lid, &cands, &run, previous);
                    for i in run {
                        alive[i] = false;
                        left -= 1;
                    }
                    continue;
                }
            }
            // The earliest effect that waits for no other goes next; an effect stops being examined
            // at the first effect it waits for.
            let mut pick = None;
            for i in (0..n).filter(|i| alive[*i]) {
                let mut blocked = false;
                for &b in &partners[i] {
                    if !alive[b] {
                        continue;
                    }
                    if let Some(k) =
                        self.edge(lid, &cands, &mut analyses, &mut edges, &coarse, i, b)
                    {
                        let entry = (cands[b].label(state), cands[b].timestamp.0, k);
                        if !waited[i].contains(&entry) {
                            waited[i].push(entry);
                        }
                        blocked = true;
                        break;
                    }
                }
                if !blocked {
                    pick = Some(i);
                    break;
                }
            }
            let pick = match pick {
                Some(i) => i,
                None => {
                    // Every effect waits for another: find a loop that waits for nothing outside it.
                    let mut deps: Vec<Vec<(usize, DepKind)>> = vec![Vec::new(); n];
                    for &(a, b) in &pairs {
                        if alive[a] && alive[b] {
                            if let Some(k) =
                                self.edge(lid, &cands, &mut analyses, &mut edges, &coarse, a, b)
                            {
                                deps[a].push((b, k));
                                let entry = (cands[b].label(state), cands[b].timestamp.0, k);
                                if !waited[a].contains(&entry) {
                                    waited[a].push(entry);
                                }
                            }
                        }
                    }
                    let members = sink_loop(&deps, &alive);
                    // Every member is explained as one of the loop, however the order goes on.
                    let names: Vec<String> = members
                        .iter()
                        .map(|m| {
                            format!(
                                "{} (timestamp {})",
                                cands[*m].label(state),
                                cands[*m].timestamp.0
                            )
                        })
                        .collect();
                    for m in &members {
                        in_loop[*m] = Some(names.clone());
                    }
                    members[0]
                }
            };
            alive[pick] = false;
            left -= 1;
            let cand = &cands[pick];
            let reason = if let Some(members) = in_loop[pick].take() {
                Reason::Loop {
                    timestamp: cand.timestamp.0,
                    members,
                    previous: None,
                }
            } else if !waited[pick].is_empty() {
                Reason::Dependency {
                    timestamp: cand.timestamp.0,
                    others: Vec::new(),
                    on: waited[pick]
                        .iter()
                        .map(|(n, t, k)| DependsOn {
                            effect: n.clone(),
                            timestamp: *t,
                            why: k.text().to_string(),
                        })
                        .collect(),
                }
            } else if cand.defining {
                Reason::CharacteristicDefining
            } else {
                match previous.as_ref() {
                    None => Reason::FirstByTimestamp {
                        timestamp: cand.timestamp.0,
                    },
                    Some((p, t)) => Reason::AfterByTimestamp {
                        timestamp: cand.timestamp.0,
                        previous: p.clone(),
                        previous_timestamp: *t,
                    },
                }
            };
            let mut picked = analyses[pick].take();
            // What the later effects it was tried against, whose amounts read other objects, would
            // have done at this point: a later derivation that starts from this one tries them again.
            let partners_then: Vec<PartnerThen> = if self.trail.is_some() {
                partners[pick]
                    .iter()
                    .filter(|b| alive[**b] && amounts_read_others(&cands[**b], lid))
                    .filter_map(|b| {
                        let an = analyses[*b].as_ref()?;
                        Some((
                            cands[*b].key,
                            Arc::new((
                                an.instruction.subjects.clone(),
                                an.instruction.params.clone(),
                            )),
                        ))
                    })
                    .collect()
            } else {
                Vec::new()
            };
            // Before the effect applies: probes of what its writes can change in the analyses of
            // other effects, so that bringing them up to date after it can skip what did not change.
            let mut probes: HashMap<usize, Vec<Option<super::dependency::Probe>>> =
                HashMap::default();
            let mut probed_objects: Option<Vec<ObjectId>> = None;
            if let (true, Some(p)) = (involved[pick], &picked) {
                if let Some(xs) = objects_of(&p.writes) {
                    let chars = footprint_of(&p.writes);
                    let subjects: Vec<Subject> = xs.iter().map(|o| Subject::Object(*o)).collect();
                    for i in (0..n).filter(|i| alive[*i]) {
                        let Some(an) = &analyses[i] else { continue };
                        if let Some(subs) = an.affected_by(&p.writes, &chars, &subjects) {
                            let list = subs
                                .iter()
                                .map(|s| self.probe(lid, &cands[i], *s, &xs, None))
                                .collect();
                            probes.insert(i, list);
                        }
                    }
                    probed_objects = Some(xs);
                }
            }
            let known = picked.as_ref().map(|a| &a.instruction);
            if self.apply_effect(lid, cand, &reason, known) && !cand.defining {
                *previous = Some((cand.label(state), cand.timestamp.0));
            }
            // The step keeps the parameters its analysis worked out, and whether it waited, for a
            // later derivation that starts from this one.
            if let Some((_, log)) = self.trail.as_mut() {
                if let Some(step) = Arc::make_mut(&mut log.trail.steps).last_mut() {
                    let step = Arc::make_mut(step);
                    if step.cand.key == cand.key {
                        step.waited = !waited[pick].is_empty();
                        if !partners_then.is_empty() {
                            step.partners = Some(partners_then.into());
                        }
                        if let Some(p) = picked.as_mut() {
                            if step.subjects[..] == p.instruction.subjects[..] {
                                step.params =
                                    Some(Arc::new(std::mem::take(&mut p.instruction.params)));
                            }
                        }
                    }
                }
            }
            self.forget_reads_of(cand, lid);
            // CR 613.8c: applying an effect can create or remove dependencies. Bring up to date
            // what read a cell the effect wrote, and forget its tested pairs.
            if involved[pick] && analyses.iter().any(|a| a.is_some()) {
                let written = match picked {
                    Some(p) => p.writes,
                    None => {
                        let touches = cand.touches(state, lid);
                        let subs = self.started.get(&cand.key).and_then(|(_, s)| s.clone());
                        subs.iter()
                            .flat_map(|l| l.iter())
                            .flat_map(|s| cells_of(*s, &touches).collect::<Vec<_>>())
                            .collect()
                    }
                };
                let written_chars = footprint_of(&written);
                let mut written_subjects: Vec<Subject> =
                    written.iter().map(|(c, _)| subject_of(c)).collect();
                written_subjects.sort();
                written_subjects.dedup();
                for i in 0..n {
                    if !alive[i] {
                        continue;
                    }
                    let Some(an) = analyses[i].take() else {
                        continue;
                    };
                    match an.affected_by(&written, &written_chars, &written_subjects) {
                        Some(subs) if subs.is_empty() => analyses[i] = Some(an),
                        affected => {
                            analyses[i] = Some(match affected {
                                Some(subs) => self.refresh(
                                    lid,
                                    &cands[i],
                                    an,
                                    &subs,
                                    probes.get(&i).zip(probed_objects.as_deref()),
                                ),
                                None => self.analyse(lid, &cands[i], coarse[i].clone()),
                            });
                            edges.retain(|(a, b), _| *a != i && *b != i);
                        }
                    }
                }
            }
        }
    }

    /// Starts (if new) and applies an effect's parts for this layer; true if any part applied.
    /// `known`: the effect's up-to-date instruction, if analysed.
    pub(super) fn apply_effect(
        &mut self,
        lid: LayerId,
        cand: &Candidate,
        reason: &Reason,
        known: Option<&Instruction>,
    ) -> bool {
        let subjects = self.subjects_of(cand, known, matches!(reason, Reason::Loop { .. }));
        let Some(subjects) = subjects else {
            return false;
        };
        self.apply_to(lid, cand, reason, known, &subjects)
    }

    /// Applies effects one after another in one pass (see `apply_run`).
    pub(super) fn apply_run_of(
        &mut self,
        lid: LayerId,
        cands: &[Candidate],
        run: &[usize],
        previous: &mut Option<(String, u64)>,
    ) {
        let subjects: Vec<Option<Subjects>> = run
            .iter()
            .map(|&i| self.subjects_of(&cands[i], None, false))
            .collect();
        let members: Vec<(&Candidate, &[Subject])> = run
            .iter()
            .zip(&subjects)
            .filter_map(|(&i, s)| s.as_deref().map(|s| (&cands[i], s)))
            .collect();
        let applied = apply_run(
            self.state,
            &mut self.sheet,
            lid,
            &members,
            self.trail
                .as_mut()
                .map(|(_, log)| log as &mut (dyn KeepBefore + 'static)),
        );
        for ((cand, _), applied) in members.iter().zip(applied) {
            if applied && !cand.defining {
                *previous = Some((cand.label(self.state), cand.timestamp.0));
            }
            self.forget_reads_of(cand, lid);
        }
    }

    /// Drops the scans and counts that read what an effect just wrote (a `has X` read sees only X).
    pub(super) fn forget_reads_of(&mut self, cand: &Candidate, lid: LayerId) {
        if self.scans.is_empty() && self.counts.borrow().is_empty() {
            return;
        }
        let touches = cand.touches(self.state, lid);
        self.scans.retain(|_, (f, _)| !may_read(f, &touches));
        self.counts
            .borrow_mut()
            .retain(|_, (f, _)| !may_read(f, &touches));
    }

    /// The values of the aggregates of an effect's conditions where it starts (see
    /// `condition_aggregates`), on the values as they stand then. (Its amounts' aggregates are
    /// not kept: a later derivation moves its kept parameters by what the aggregates moved.)
    pub(super) fn aggregate_values(
        &self,
        cand: &Candidate,
        fresh: bool,
    ) -> Option<AggregateValues> {
        let Body::Effect(def) = &cand.body else {
            return None;
        };
        if !fresh {
            return None;
        }
        let aggs = condition_aggregates(def, cand.created.is_none());
        if aggs.is_empty() {
            return None;
        }
        let ctx = cand
            .ctx(self.state, &self.sheet, None)
            .counting(self.counting.then_some(&self.counts));
        let this = match cand.source {
            Some(o) => Subject::Object(o),
            None => Subject::Player(PlayerId(0)),
        };
        Some(
            aggs.into_iter()
                .map(|a| (a.key(), ctx.aggregate_now(a, this)))
                .collect(),
        )
    }

    /// Whom an effect applies to: decided when it starts, kept after (CR 613.6).
    /// Notes the effect as the layer's next step.
    pub(super) fn subjects_of(
        &mut self,
        cand: &Candidate,
        known: Option<&Instruction>,
        looped: bool,
    ) -> Option<Subjects> {
        let fresh = !self.started.contains_key(&cand.key);
        let subjects = match self.started.get(&cand.key) {
            Some((_, s)) => s.clone(),
            None => {
                // Decided once per derivation: an effect that does not exist when its first part
                // would apply applies none of its parts (Cranial Insertion, "Order of Operations",
                // 2020, "Smash It Up").
                let s: Option<Subjects> = match (known, &cand.body, &cand.created) {
                    (Some(i), _, _) => i.exists.then(|| i.subjects.as_slice().into()),
                    (None, Body::Effect(def), None) if self.visit.is_none() => self
                        .static_exists(cand, None)
                        .map(|you| self.scan(def, cand.source, you)),
                    _ => start(self.state, &self.sheet, cand, None).map(|mut v| {
                        v.sort();
                        v.into()
                    }),
                };
                self.started.insert(cand.key, (cand.clone(), s.clone()));
                s
            }
        };
        if self.trail.is_some() {
            let you = match &cand.body {
                Body::Effect(_) => you_of(self.state, &self.sheet, cand, None),
                _ => None,
            };
            let aggs = self.aggregate_values(cand, fresh);
            if let Some((_, log)) = &mut self.trail {
                Arc::make_mut(&mut log.trail.steps).push(Arc::new(Applied {
                    cand: cand.clone(),
                    subjects: subjects.clone().unwrap_or_else(|| Arc::from(Vec::new())),
                    started_here: fresh,
                    exists: subjects.is_some(),
                    looped,
                    known: Arc::default(),
                    params: None,
                    you,
                    waited: false,
                    aggs,
                    partners: None,
                }));
            }
        }
        subjects
    }

    /// Applies an effect's parts for this layer to its subjects; true if any part applied.
    pub(super) fn apply_to(
        &mut self,
        lid: LayerId,
        cand: &Candidate,
        reason: &Reason,
        known: Option<&Instruction>,
        subjects: &Subjects,
    ) -> bool {
        if self.expl.is_none() {
            let grants = &mut self.grants;
            let mut granted = Vec::new();
            // The analysis's parameters are up to date when its subjects are these.
            let params = known
                .filter(|i| i.subjects[..] == subjects[..])
                .map(|i| i.params.as_slice());
            let mut kept = Vec::new();
            let keeping = self.trail.is_some() && params.is_none();
            let applied = apply_keeping(
                self.state,
                &mut self.sheet,
                cand,
                lid,
                subjects,
                params,
                self.trail
                    .as_mut()
                    .map(|(_, log)| log as &mut (dyn KeepBefore + 'static)),
                &mut |sheet, s, t, v| {
                    note_grants(grants, sheet, s, t, v, cand.timestamp, &mut granted)
                },
                keeping.then_some(&mut kept),
            );
            if let Some((_, log)) = &mut self.trail {
                granted.into_iter().for_each(|g| log.trail.grants.push(g));
                if !kept.is_empty() {
                    if let Some(step) = Arc::make_mut(&mut log.trail.steps).last_mut() {
                        let step = Arc::make_mut(step);
                        if step.cand.key == cand.key {
                            step.params = Some(Arc::new(kept));
                        }
                    }
                }
            }
            return applied;
        }
        let layer_def = &self.state.ruleset.layers[lid.index()];
        let text = self.expl.as_ref().map(|_| cand.text(self.state));
        let mut applied = false;
        // CR 613.5: the effect applies to all its subjects at once (see `apply_in_place`).
        let all: Vec<_> = subjects
            .iter()
            .map(|s| (*s, changes(self.state, &self.sheet, cand, lid, *s)))
            .collect();
        for (subject, ch) in all {
            applied |= !ch.is_empty();
            for (t, v) in ch {
                note_grants(
                    &mut self.grants,
                    &self.sheet,
                    subject,
                    t,
                    &v,
                    cand.timestamp,
                    &mut Vec::new(),
                );
                let before = std::mem::replace(slot_mut(&mut self.sheet, subject, t), v.clone());
                if let (Some(e), Some(text)) = (self.expl.as_mut(), &text) {
                    let list = match (subject, t) {
                        (Subject::Object(o), SlotTarget::Char(c)) => {
                            &mut e.objects[o.index()][c.index()]
                        }
                        (Subject::Player(p), SlotTarget::Prop(q)) => {
                            &mut e.players[p.index()][q.index()]
                        }
                        _ => continue,
                    };
                    let step = Step {
                        layer: layer_def.label.clone(),
                        layer_name: layer_def.name.clone(),
                        source: cand.source_name.to_string(),
                        label: cand.label(self.state),
                        text: text.clone(),
                        timestamp: cand.timestamp.0,
                        reason: reason.for_value(list, &layer_def.label),
                        before,
                        after: v,
                    };
                    list.push(step);
                }
            }
        }
        applied
    }
}

/// How a change to `target` changes abilities through the symbols that give them (CR 305.6-305.7),
/// if it does (`Touch::of_intrinsic`).
pub(super) fn intrinsic_touch(
    state: &GameState,
    target: SlotTarget,
    change: &Change,
) -> Option<Touch> {
    let SlotTarget::Char(ch) = target else {
        return None;
    };
    let intrinsic = state.ruleset.intrinsic_of(ch)?;
    Touch::of_intrinsic(intrinsic, change)
}

/// What the categories tied to card types (CR 205.1a, 205.3d) change of one object's values at
/// the end of layer `lid`: each characteristic with its new value and why. `known` keeps, by
/// characteristic and the card types' sets an object has, the symbols allowed.
pub(super) type Allowed = Vec<(CharId, Vec<bool>, crate::value::SymbolSet)>;

pub(super) fn follow_types_of(
    state: &GameState,
    row: &[Value],
    lid: LayerId,
    known: &mut Allowed,
) -> Vec<(CharId, Value, String)> {
    let rs = &state.ruleset;
    let mut out = Vec::new();
    for ch in rs.tied_in_layer(lid) {
        let Value::Symbols(cur) = &row[ch.index()] else {
            continue;
        };
        // The allowed symbols depend only on which sets' card types an object has.
        let key: Vec<bool> = rs
            .categories_of(ch)
            .map(
                |c| match (&c.by, c.by.as_ref().map(|(b, _)| &row[b.index()])) {
                    (Some((_, types)), Some(Value::Symbols(t))) => {
                        types.iter().any(|x| t.contains(x))
                    }
                    (None, _) => true,
                    _ => false,
                },
            )
            .collect();
        let allowed = match known.iter().find(|(c, k, _)| *c == ch && *k == key) {
            Some((_, _, a)) => a.clone(),
            None => {
                let Some(a) = rs.symbols_allowed(ch, row) else {
                    continue;
                };
                known.push((ch, key, a.clone()));
                a
            }
        };
        // A finite set whose symbols are all allowed keeps them all (no new set is built).
        if !cur.is_every() && cur.iter().all(|x| allowed.contains(x)) {
            continue;
        }
        let mut new = cur.clone();
        new.intersect(&allowed);
        if new == *cur {
            continue;
        }
        // The abilities of symbols it lost go with them (CR 305.6).
        if let (Some(i), Some(ac)) = (rs.intrinsic_of(ch), state.abilities_char) {
            if let Value::Abilities(have) = &row[ac.index()] {
                let after = i.abilities_after(have, cur, &new, false);
                if after[..] != **have {
                    out.push((
                        ac,
                        Value::Abilities(after.into()),
                        "its abilities follow its subtypes".to_string(),
                    ));
                }
            }
        }
        let text = format!("its {} follow its card types", rs.char(ch).name);
        out.push((ch, Value::Symbols(new), text));
    }
    out
}

/// The aggregates of an effect's conditions that are worked out where it starts: in its
/// "affects" (where it tests whom it applies to) and its "as long as"; inner ones first. Those
/// that say `outer` (a value per subject) are left out.
pub(super) fn condition_aggregates(
    def: &EffectDef,
    scans: bool,
) -> Vec<crate::condition::Aggregate<'_>> {
    let mut out = Vec::new();
    if scans {
        match &def.affects {
            Affects::Objects(c) | Affects::Players(c) => c.aggregates(&mut out),
        }
    }
    if let Some(w) = &def.while_cond {
        w.aggregates(&mut out);
    }
    out.retain(|a| a.is_closed());
    out
}

/// Whether an effect reads, in a layer, an aggregate whose value differs by subject (`outer`).
pub(super) fn has_open_aggregates(def: &EffectDef, lid: LayerId, fresh: bool, scans: bool) -> bool {
    let mut out = Vec::new();
    if fresh {
        if scans {
            match &def.affects {
                Affects::Objects(c) | Affects::Players(c) => c.aggregates(&mut out),
            }
        }
        if let Some(w) = &def.while_cond {
            w.aggregates(&mut out);
        }
    }
    for op in def.ops.iter().filter(|o| o.layer == lid) {
        if let Change::SetNumber(e) | Change::Modify(e) = &op.change {
            e.aggregates(&mut out);
        }
    }
    out.iter().any(|a| !a.is_closed())
}

/// The objects whose cells these are; `None` if a player's property is among them.
pub(super) fn objects_of(cells: &[(Cell, Touch)]) -> Option<Vec<ObjectId>> {
    let mut v = cells
        .iter()
        .map(|(c, _)| match c {
            Cell::Object(o, _) => Some(*o),
            Cell::Player(..) => None,
        })
        .collect::<Option<Vec<_>>>()?;
    v.sort();
    v.dedup();
    Some(v)
}

/// Whether an effect reading `reads` may see a change made as `touches` describes: a read of
/// whether a characteristic holds some symbols sees only changes to those symbols (a Goblin lord
/// does not wait for an effect that makes Goblins Zombies too).
pub(super) fn may_read(reads: &Footprint, touches: &[(SlotTarget, Touch)]) -> bool {
    touches
        .iter()
        .any(|(t, touch)| super::dependency::sees_target(reads, *t, touch))
}

/// Keeps when a static ability was granted to an object by an effect writing its abilities, unless
/// the object already had it (CR 613.7a: an effect from a granted ability takes the later
/// timestamp).
pub(super) fn note_grants(
    grants: &mut HashMap<(ObjectId, Ability), Timestamp>,
    sheet: &Sheet,
    subject: Subject,
    t: SlotTarget,
    v: &Value,
    timestamp: Timestamp,
    granted: &mut Vec<((ObjectId, Ability), Timestamp)>,
) {
    let (Value::Abilities(list), Subject::Object(o)) = (v, subject) else {
        return;
    };
    for a in list.iter() {
        if matches!(a, Ability::Static { .. }) && !grants.contains_key(&(o, a.clone())) {
            let printed =
                matches!(slot_ref(sheet, subject, t), Value::Abilities(l) if l.contains(a));
            if !printed {
                grants.insert((o, a.clone()), timestamp);
                granted.push(((o, a.clone()), timestamp));
            }
        }
    }
}

/// The rank of an effect in a layer that orders by kind of change (`increase`, `decrease`, `set`).
pub(super) fn kind_rank(
    c: &Candidate,
    lid: LayerId,
    order: &[crate::ruleset::ChangeClass],
) -> usize {
    if order.is_empty() {
        return 0;
    }
    let Body::Effect(def) = &c.body else {
        return 0;
    };
    let class = def
        .ops
        .iter()
        .filter(|o| o.layer == lid)
        .map(|o| crate::ruleset::ChangeClass::of(&o.change))
        .next();
    class
        .and_then(|k| order.iter().position(|x| *x == k))
        .unwrap_or(order.len())
}

/// Effects with a part in `layer`: static abilities of objects in play (as their abilities stand
/// now), created effects, counters if this layer applies them, and every effect already started.
pub(super) fn gather(
    state: &GameState,
    sheet: &Sheet,
    layer: LayerId,
    started: &Started,
    grants: &HashMap<(ObjectId, Ability), Timestamp>,
    visit: Option<&[u32]>,
) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = started
        .values()
        .filter(|(c, s)| s.is_some() && matches!(&c.body, Body::Effect(d) if d.has_layer(layer)))
        .map(|(c, _)| c.clone())
        .collect();
    let layer_def = &state.ruleset.layers[layer.index()];
    let mut objects: Vec<&crate::object::GameObject> = state.objects().collect();
    if let Some(rank) = visit {
        objects.sort_by_key(|o| rank[o.id.index()]);
    }
    for o in objects {
        let in_play = state.in_play(o.id);
        if layer_def.face_down && o.face_down && !state.ruleset.face_down.is_empty() {
            out.push(Candidate {
                key: EffectKey::FaceDown(o.id),
                body: Body::FaceDown,
                timestamp: o.timestamp,
                defining: false,
                source: Some(o.id),
                source_name: o.name.clone(),
                created: None,
            });
        }
        if let Some(ac) = state.abilities_char {
            if let Value::Abilities(list) = &sheet.objects[o.id.index()][ac.index()] {
                for a in list.iter() {
                    let Ability::Static { class, index, .. } = a else {
                        continue;
                    };
                    let def = &state.content.class(*class).statics[*index as usize];
                    // A static ability works in play, or in the other zones it names.
                    if !in_play && !def.zones.contains(&o.zone) {
                        continue;
                    }
                    let key = EffectKey::Static {
                        object: o.id,
                        class: *class,
                        index: *index,
                    };
                    if def.has_layer(layer) && !started.contains_key(&key) {
                        let granted = grants.get(&(o.id, a.clone())).copied();
                        out.push(Candidate {
                            key,
                            body: Body::Effect(def.clone()),
                            timestamp: granted.map_or(o.timestamp, |g| g.max(o.timestamp)),
                            defining: def.defining,
                            source: Some(o.id),
                            source_name: o.name.clone(),
                            created: None,
                        });
                    }
                }
            }
        }
        // Counters where their kind changes something: numbers in the layer that applies
        // counters, a keyword counter's ability where its operation applies (CR 613.1f).
        for (i, p) in o.counters.iter().enumerate() {
            if state.ruleset.counters[p.kind.index()].applies_in(&state.ruleset, layer) {
                out.push(Candidate::counter(o, i, p));
            }
        }
    }
    for e in state.effects() {
        let key = EffectKey::Created(e.id);
        if e.def.has_layer(layer) && !started.contains_key(&key) {
            out.push(Candidate::created(e));
        }
    }
    out
}

/// Whether a static ability that has not started exists now: its source still has it and its
/// "as long as" holds. Returns its "you".
pub(super) fn static_exists(
    state: &GameState,
    sheet: &Sheet,
    cand: &Candidate,
    reads: Option<&Reads>,
) -> Option<Option<PlayerId>> {
    static_exists_with(state, sheet, cand, reads, None)
}

/// `static_exists`, with the aggregates of its "as long as" taken from `overrides` where given.
pub(super) fn static_exists_with(
    state: &GameState,
    sheet: &Sheet,
    cand: &Candidate,
    reads: Option<&Reads>,
    overrides: Option<&crate::condition::eval::Overrides>,
) -> Option<Option<PlayerId>> {
    let EffectKey::Static {
        object,
        class,
        index,
    } = cand.key
    else {
        return None;
    };
    let Body::Effect(def) = &cand.body else {
        return None;
    };
    let ac = state.abilities_char?;
    let probe = Ctx::new(state, sheet, None, None, &[]).recording(reads);
    let still_has = match probe.value_for(object, ac, def.ability_name()) {
        Value::Abilities(list) => list.iter().any(|a| {
            matches!(a, Ability::Static { class: c, index: i, .. } if *c == class && *i == index)
        }),
        _ => false,
    };
    if !still_has {
        return None;
    }
    let you = you_of(state, sheet, cand, reads);
    if let Some(w) = &def.while_cond {
        let ctx = Ctx::new(state, sheet, Some(object), you, &[])
            .recording(reads)
            .overriding(overrides);
        if !ctx.test(w, Subject::Object(object)) {
            return None;
        }
    }
    Some(you)
}

/// Decides whether an effect that has not applied yet exists now and whom it applies to. A static
/// ability must still be on its source (an earlier effect in this layer may have removed it) and its
/// "as long as" condition must hold; a created effect applies to what it locked when created.
pub(super) fn start(
    state: &GameState,
    sheet: &Sheet,
    cand: &Candidate,
    reads: Option<&Reads>,
) -> Option<Vec<Subject>> {
    start_with(state, sheet, cand, reads, None)
}

/// `start`, with the aggregates of its conditions taken from `overrides` where given.
pub(super) fn start_with(
    state: &GameState,
    sheet: &Sheet,
    cand: &Candidate,
    reads: Option<&Reads>,
    overrides: Option<&crate::condition::eval::Overrides>,
) -> Option<Vec<Subject>> {
    match (&cand.body, &cand.created, cand.key) {
        (Body::Counter { .. }, _, EffectKey::Counter { object, .. })
        | (Body::FaceDown, _, EffectKey::FaceDown(object)) => Some(vec![Subject::Object(object)]),
        (Body::Effect(def), Some(created), _) => {
            // "As long as" on a created effect is tested on its source, as for a static ability.
            if let (Some(w), Some(src)) = (&def.while_cond, cand.source) {
                let ctx = Ctx::new(state, sheet, Some(src), Some(created.you), &created.targets)
                    .recording(reads)
                    .overriding(overrides);
                if !ctx.test(w, Subject::Object(src)) {
                    return None;
                }
            }
            Some(match &created.locked {
                Locked::Objects(list) => list
                    .iter()
                    .filter(|(o, inc)| state.obj(*o).incarnation == *inc)
                    .map(|(o, _)| Subject::Object(*o))
                    .collect(),
                Locked::Players(list) => list.iter().map(|p| Subject::Player(*p)).collect(),
            })
        }
        (Body::Effect(def), None, EffectKey::Static { object, .. }) => {
            let you = static_exists_with(state, sheet, cand, reads, overrides)?;
            let ctx = Ctx::new(state, sheet, Some(object), you, &[])
                .recording(reads)
                .overriding(overrides);
            Some(subjects(&ctx, &def.affects))
        }
        _ => None,
    }
}

/// Every object or player an effect might apply to, in id order.
pub(super) fn all_subjects(ctx: &Ctx, affects: &Affects) -> Vec<Subject> {
    let state = ctx.state;
    match affects {
        Affects::Objects(c) => match c.narrow(ctx) {
            Some(list) => list.into_iter().map(Subject::Object).collect(),
            None => state.object_ids().map(Subject::Object).collect(),
        },
        Affects::Players(_) => (0..state.players.len() as u8)
            .map(|p| Subject::Player(PlayerId(p)))
            .collect(),
    }
}

/// Every object or player the condition picks, in id order.
pub fn subjects(ctx: &Ctx, affects: &Affects) -> Vec<Subject> {
    match affects {
        Affects::Objects(c) => match c.narrow(ctx) {
            Some(list) => list
                .into_iter()
                .map(Subject::Object)
                .filter(|s| ctx.test(c, *s))
                .collect(),
            None => ctx
                .state
                .object_ids()
                .map(Subject::Object)
                .filter(|s| ctx.test(c, *s))
                .collect(),
        },
        Affects::Players(c) => (0..ctx.state.players.len() as u8)
            .map(|p| Subject::Player(PlayerId(p)))
            .filter(|s| ctx.test(c, *s))
            .collect(),
    }
}

/// What an effect's conditions and amounts read at one step, by kind (worked out once per step).
#[derive(Default)]
pub(super) struct Shape {
    pub(super) reads_counters: bool,
    /// An aggregate whose value differs by subject (`outer`).
    pub(super) open_aggregates: bool,
    /// The aggregates (keys) of "as long as", "affects" and the amounts.
    pub(super) while_aggs: Vec<usize>,
    pub(super) affects_aggs: Vec<usize>,
    pub(super) ops_aggs: Vec<usize>,
    pub(super) while_refers: bool,
    pub(super) affects_refers: bool,
    pub(super) affects_names_source: bool,
    /// The amounts read another object than the subject (not through aggregates).
    pub(super) ops_refer: bool,
    /// A text effect or one ability per symbol among objects.
    pub(super) text_like: bool,
    /// The amounts read more than the subject (`op_reads_others`).
    pub(super) ops_read_others: bool,
    /// What its tests of whom it applies to, its "as long as" and its amounts read: all it reads
    /// of the objects an order trial tries (`Replay::view`), without its source's controller
    /// ("you") and abilities (whether it still exists).
    pub(super) tested_reads: Footprint,
}
