//! The trail a full derivation keeps for the next one to start from: for each layer, the values
//! its writes replaced, the static abilities it granted, and its effects in the order they applied
//! (`Applied`), with what a replay works out of each once.

use super::change::KeepBefore;
use super::dependency::Dims;
use crate::model::condition::{Cell, Subject};
use crate::model::derived::Derived;
use crate::model::ids::{ObjectId, SlotTarget};
use crate::model::trail::{LayerTrail, Shared, Trail};
use crate::model::value::Value;
use crate::state::GameState;
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// The layers' record in a derivation, if it kept one.
pub(super) fn trail_of(d: &Derived) -> Option<&Trail> {
    d.trail.as_deref()
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
