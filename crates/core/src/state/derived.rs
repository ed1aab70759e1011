//! The derived values of a state: every characteristic and property after all layers, with their
//! explanation where one was asked for, and what the layer system keeps to start the next
//! derivation from.

use crate::explain::Explanation;
use crate::ids::ObjectId;
use crate::state::sheet::Sheet;
use serde::Serialize;
use std::any::Any;
use std::sync::Arc;

/// The result of applying every layer.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Derived {
    pub sheet: Sheet,
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
    pub(crate) trail: Kept,
}

/// What a derivation keeps for the next one to start from. The state holds it without knowing its
/// form; only the layer system that made it reads it.
#[derive(Clone, Default)]
pub(crate) struct Kept(Option<Arc<dyn Any + Send + Sync>>);

impl Kept {
    pub(crate) fn new<T: Any + Send + Sync>(t: T) -> Self {
        Kept(Some(Arc::new(t)))
    }

    /// What was kept, if it is a `T`.
    pub(crate) fn get<T: Any>(&self) -> Option<&T> {
        self.0.as_deref().and_then(|x| x.downcast_ref())
    }
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Kept(..)"
        } else {
            "Kept(none)"
        })
    }
}
