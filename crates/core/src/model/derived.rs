//! The derived values of a state: every characteristic and property after all layers, with their
//! explanation where one was asked for, and what the layer system keeps to start the next
//! derivation from.

use crate::model::explain::Explanation;
use crate::model::ids::ObjectId;
use crate::model::sheet::Sheet;
use crate::model::trail::Trail;
use serde::Serialize;
use std::sync::Arc;

/// The result of applying every layer.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Derived {
    /// Every object's characteristics and every player's properties after every layer.
    pub sheet: Sheet,
    /// Each value's base value and every step that changed it: present only in what
    /// [`GameState::explain`](crate::GameState::explain) returns.
    pub explanation: Option<Explanation>,
    /// How many layers, from the first, were reused whole from the derivation before the latest
    /// change (none: every layer was derived).
    #[serde(skip)]
    pub reused_layers: usize,
    /// How many layers after those were worked out only for the objects the change reached,
    /// reusing the rest (see `replay`); the layers after them were derived in full.
    #[serde(skip)]
    pub replayed_layers: usize,
    /// The objects whose values may differ from the previous derivation's, where known (after a
    /// replay); `None`: any.
    #[serde(skip)]
    pub changed: Option<Vec<ObjectId>>,
    /// What each layer changed, for a later derivation to start at a layer and reuse the ones
    /// before it (the layer system's record, opaque here).
    #[serde(skip)]
    pub(crate) trail: Option<Arc<Trail>>,
    /// The stacking numbers of the continuous effects that applied, with their subjects
    /// (FreeOrion's effects system, Stacking Number: a one-shot effect with the same number
    /// does not fire on them this turn). `None` where no effect with a number applied.
    #[serde(skip)]
    pub(crate) stacked: Option<Arc<rustc_hash::FxHashSet<(u32, crate::model::condition::Subject)>>>,
}
