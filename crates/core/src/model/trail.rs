//! The layer system's record of a full derivation, kept in it for the next derivation to start
//! from (CR 613: what each layer changed and which effects applied, in order): plain data, read and
//! written only by the layer system.

use crate::model::condition::{Cell, Footprint, Subject};
use crate::model::effect::{EffectDef, Locked};
use crate::model::ids::{ClassId, CounterId, ObjectId, PlayerId, SlotTarget, Timestamp};
use crate::model::value::{Ability, Symbol, Value};
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// The subjects of an effect, in id order, shared by the places that keep them.
pub(crate) type Subjects = Arc<[Subject]>;

/// Identifies an effect across layers within one derivation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum EffectKey {
    Static {
        object: ObjectId,
        class: ClassId,
        index: u16,
    },
    Created(u32),
    Counter {
        object: ObjectId,
        placement: u32,
    },
    FaceDown(ObjectId),
}

#[derive(Clone)]
pub(crate) enum Body {
    Effect(Arc<EffectDef>),
    Counter {
        kind: CounterId,
        count: i64,
    },
    /// The ruleset's face-down values (layer 1b, CR 613.2b).
    FaceDown,
}

#[derive(Clone)]
pub(crate) struct Created {
    pub(crate) you: PlayerId,
    pub(crate) locked: Locked,
    pub(crate) targets: Arc<[Subject]>,
}

/// An effect that may apply in the current layer.
#[derive(Clone)]
pub(crate) struct Candidate {
    pub(crate) key: EffectKey,
    pub(crate) body: Body,
    pub(crate) timestamp: Timestamp,
    pub(crate) defining: bool,
    pub(crate) source: Option<ObjectId>,
    pub(crate) source_name: Arc<str>,
    /// For created effects: their fixed "you", locked subjects and targets.
    pub(crate) created: Option<Created>,
}

/// What each layer did (`LayerTrail`), kept in a derivation for the next one to start from.
pub(crate) type Trail = Vec<Arc<LayerTrail>>;

#[derive(Clone, Default)]
pub(crate) struct LayerTrail {
    /// Later entries for a cell replace earlier ones.
    pub(crate) before: Shared<(Cell, Value)>,
    /// Where each object's entries are in `before`'s shared part, worked out when first asked.
    pub(crate) before_index: Arc<std::sync::OnceLock<HashMap<ObjectId, Vec<u32>>>>,
    pub(crate) grants: Shared<((ObjectId, Ability), Timestamp)>,
    /// The effects in the order they applied.
    pub(crate) steps: Arc<Vec<Arc<Applied>>>,
}

/// A list kept by one derivation and shared with the ones that start from it, which may add to
/// it without copying it.
#[derive(Clone)]
pub(crate) struct Shared<T> {
    pub(crate) base: Arc<Vec<T>>,
    pub(crate) more: Vec<T>,
}

impl<T> Default for Shared<T> {
    fn default() -> Self {
        Shared {
            base: Arc::new(Vec::new()),
            more: Vec::new(),
        }
    }
}

/// One effect as it applied in a layer.
#[derive(Clone)]
pub(crate) struct Applied {
    pub(crate) cand: Candidate,
    /// The subjects it applied to (none if it did not exist).
    pub(crate) subjects: Arc<[Subject]>,
    /// It started in this layer (its first part is here): whether it exists and whom it applies
    /// to were decided here, for this and the later layers.
    pub(crate) started_here: bool,
    /// Whether it existed when it started.
    pub(crate) exists: bool,
    /// Picked as the earliest member of a dependency loop, while every effect waited for another.
    pub(crate) looped: bool,
    /// What a replay works out of it once (shared by the steps copied from it).
    pub(crate) known: Arc<StepKnown>,
    /// The parameters it applied with, per subject (as `op_params` gives them), where they are
    /// numbers that differ by subject or an analysis worked them out.
    pub(crate) params: Option<Arc<Vec<Vec<Value>>>>,
    /// Its "you" when it applied.
    pub(crate) you: Option<PlayerId>,
    /// It waited for another effect (dependency) before it applied: it came later than its
    /// timestamp alone would put it.
    pub(crate) waited: bool,
    /// Where it started here: the values of the aggregates its conditions read
    /// (`condition_aggregates`: `Aggregate::key`, value), where they read any.
    pub(crate) aggs: Option<AggregateValues>,
    /// The later effects of its group that it was tried against and whose amounts read other
    /// objects: their subjects and parameters at this step.
    pub(crate) partners: Option<Arc<[PartnerThen]>>,
}

/// What a replay works out of a step when first asked, in one place: copying a step record costs
/// one count for all of it.
#[derive(Default)]
pub(crate) struct StepKnown {
    /// What it reads (`Candidate::reads`).
    pub(crate) reads: std::sync::OnceLock<Footprint>,
    /// What it writes in its layer (`Candidate::writes`).
    pub(crate) writes: std::sync::OnceLock<Footprint>,
    /// How it changes what it writes in its layer (`Candidate::touches`).
    pub(crate) touches: std::sync::OnceLock<Vec<(SlotTarget, Touch)>>,
    /// What its conditions and amounts read, by kind (`Shape`).
    pub(crate) shape: std::sync::OnceLock<Shape>,
}

/// A later effect's subjects and parameters at an earlier effect's step.
pub(crate) type PartnerThen = (EffectKey, Arc<(Vec<Subject>, Vec<Vec<Value>>)>);

/// The values of the aggregates an effect read at a step: (`Aggregate::key`, value).
pub(crate) type AggregateValues = Arc<[(usize, Option<i64>)]>;

/// What an effect's conditions and amounts read at one step, by kind (worked out once per step).
#[derive(Default)]
pub(crate) struct Shape {
    pub(crate) reads_counters: bool,
    /// An aggregate whose value differs by subject (`outer`).
    pub(crate) open_aggregates: bool,
    /// The aggregates (keys) of "as long as", "affects" and the amounts.
    pub(crate) while_aggs: Vec<usize>,
    pub(crate) affects_aggs: Vec<usize>,
    pub(crate) ops_aggs: Vec<usize>,
    pub(crate) while_refers: bool,
    pub(crate) affects_refers: bool,
    pub(crate) affects_names_source: bool,
    /// The amounts read another object than the subject (not through aggregates).
    pub(crate) ops_refer: bool,
    /// A text effect or one ability per symbol among objects.
    pub(crate) text_like: bool,
    /// The amounts read more than the subject (`op_reads_others`).
    pub(crate) ops_read_others: bool,
    /// What its tests of whom it applies to, its "as long as" and its amounts read: all it reads
    /// of the objects an order trial tries (`Replay::view`), without its source's controller
    /// ("you") and abilities (whether it still exists).
    pub(crate) tested_reads: Footprint,
}

/// How an effect changes a cell: any way, or only whether some symbols are in it (adding or
/// removing them). A `has X` read is untouched by a change to other symbols: a Goblin lord does
/// not wait for an effect that makes Goblins Zombies too.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Touch {
    Any,
    Names(std::sync::Arc<[Symbol]>),
}

impl std::fmt::Debug for LayerTrail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LayerTrail")
            .field("before", &(self.before.base.len() + self.before.more.len()))
            .field("grants", &(self.grants.base.len() + self.grants.more.len()))
            .field("steps", &self.steps.len())
            .finish()
    }
}
