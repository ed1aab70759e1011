//! The trail a full derivation keeps for the next one to start from: for each layer, the values
//! its writes replaced, the static abilities it granted, and its effects in the order they applied
//! (`Applied`), with what a replay works out of each once.

use super::candidate::{Candidate, EffectKey};
use super::change::{KeepBefore, Touch};
use super::dependency::Dims;
use crate::condition::{Cell, Footprint, Subject};
use crate::ids::{ObjectId, PlayerId, SlotTarget, Timestamp};
use crate::state::derived::Derived;
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

/// The values of the aggregates an effect read at a step: (`Aggregate::key`, value).
pub(super) type AggregateValues = Arc<[(usize, Option<i64>)]>;

/// The layer being applied: which cells it has written (their values before it are kept once).
pub(super) struct LayerLog {
    pub(super) written: Vec<u64>,
    pub(super) dims: Dims,
    pub(super) trail: LayerTrail,
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
        let dims = Dims::of(state);
        LayerLog {
            written: vec![0; dims.cells().div_ceil(64)],
            dims,
            trail: LayerTrail::default(),
        }
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
